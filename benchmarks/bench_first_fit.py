"""The first NUTS fit in a script: with an empty compile cache, and after earlier fits.

Issue 26 asks for a first NUTS fit of the multinomial model in at most 15 s, of GDA and QDA in
20 s and of the categorical model in 30 s. Almost all of a cold first fit is PyTensor's numba
compilation (docs/performance.md, "The first fit"), which PyTensor caches on disk, keyed on
the graph rather than on the data. So what a script's first fit costs depends on what the
cache already holds. For each model this benchmark makes an empty cache folder and runs one
fresh Python process per line, in this order, each sharing that folder:

1. ``cold``: the first fit ever (shape A);
2. ``same shape, same data``: the same script again;
3. ``same shape, new data``: new values of the same shape (another seed);
4. ``new shape B``, then ``new shape C``: other numbers of classes and features.

Each process imports bayesgen, draws its data with NumPy and fits the estimator with
``inference="nuts", draws=200, tune=200, random_seed=0`` (its other settings the defaults: its
MAP, prior draws and log-likelihood included); the time printed is the whole process's, from
its start to the end of ``fit``, as a user waits for it. The rows are 300 in every case:
counts from Poisson(1) for the multinomial model, four categories for the categorical one,
normal rows shifted by their class for GDA and QDA.

Run (from the project root; about 10 minutes on 2 cores)::

    .venv/bin/python benchmarks/bench_first_fit.py
    .venv/bin/python benchmarks/bench_first_fit.py --models multinomial --rows 300
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date

#: (classes, features) of shape A, B and C for each model.
SHAPES = {
    "multinomial": ((2, 2000), (3, 1500), (4, 1000)),
    "gda": ((3, 5), (2, 4), (4, 6)),
    "qda": ((3, 5), (2, 4), (4, 6)),
    "categorical": ((2, 20), (3, 15), (4, 25)),
}
#: The runs of one model, in order: (what, shape index, data seed).
RUNS = (
    ("cold", 0, 0),
    ("same shape, same data", 0, 0),
    ("same shape, new data", 0, 1),
    ("new shape B", 1, 0),
    ("new shape C", 2, 0),
)


def fit_once(model: str, n_classes: int, n_features: int, n_rows: int, seed: int) -> dict:
    """Draw the data and fit the model once, in this process; returns the seconds."""
    import numpy as np

    import bayesgen

    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n_rows)
    settings = {"inference": "nuts", "draws": 200, "tune": 200, "random_seed": 0}
    if model == "multinomial":
        X = rng.poisson(1.0, size=(n_rows, n_features))
        estimator = bayesgen.MultinomialNB(**settings)
    elif model == "categorical":
        X = rng.integers(0, 4, size=(n_rows, n_features))
        estimator = bayesgen.CategoricalNB(**settings)
    else:
        X = rng.normal(size=(n_rows, n_features)) + y[:, None]
        gaussian = {
            "gda": bayesgen.GaussianDiscriminantAnalysis,
            "qda": bayesgen.QuadraticDiscriminantAnalysis,
        }
        estimator = gaussian[model](**settings)
    start = time.perf_counter()
    estimator.fit(X, y)
    return {"fit_s": time.perf_counter() - start}


def run_child(model: str, shape: tuple[int, int], n_rows: int, seed: int, cache: str) -> dict:
    """One fresh process sharing ``cache``; its wall time from start to the end of ``fit``."""
    flags = f"base_compiledir={cache},generated_src_dir={cache}/generated_src"
    env = {**os.environ, "PYTENSOR_FLAGS": flags, "MPLBACKEND": "Agg"}
    command = [sys.executable, __file__, "--child", model, *map(str, shape), str(n_rows), str(seed)]
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{model} {shape}: the child failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return {"wall_s": wall, **result}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", choices=sorted(SHAPES), default=list(SHAPES))
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        model, n_classes, n_features, n_rows, seed = args.child
        result = fit_once(model, int(n_classes), int(n_features), int(n_rows), int(seed))
        print(json.dumps(result))
        return

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{date.today()}, {os.cpu_count()} CPUs, load {load:.2f} at the start; {args.rows} rows")
    print(f"{'model':12s} {'run':24s} {'classes x features':>18s} {'process s':>10s} {'fit s':>7s}")
    for model in args.models:
        cache = tempfile.mkdtemp(prefix=f"bench-first-fit-{model}-")
        try:
            for what, shape_index, seed in RUNS:
                shape = SHAPES[model][shape_index]
                result = run_child(model, shape, args.rows, seed, cache)
                size = f"{shape[0]} x {shape[1]}"
                print(
                    f"{model:12s} {what:24s} {size:>18s} {result['wall_s']:10.1f} "
                    f"{result['fit_s']:7.1f}",
                    flush=True,
                )
        finally:
            shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
