"""Exact conjugate posterior draws for a large multinomial naive Bayes model: time and memory.

Builds a synthetic Zipf bag-of-words corpus (``bench_closed_form.zipf_bag_of_words``, default
20,000 documents of ~100 tokens, 50,000 words, 20 classes), then measures, each in a fresh
Python subprocess so that its peak resident memory is its own:

* ``bayesgen.inference.sampling.conjugate_posterior(stats, draws=1000, chains=1, dtype=...,
prior_draws=0)``
  for float32 and float64: wall time, and peak RSS (``resource.getrusage(RUSAGE_SELF).ru_maxrss``)
  before and after the call, against the size of the posterior it returns
  (draws x classes x words x itemsize). The docstring of ``conjugate_posterior`` promises "no
  temporary of the same size", i.e. a peak increase of about 1x that size.
* ``MultinomialNB(inference="conjugate", compute_map=False, draws=..., chains=1, prior_draws=0,
  dtype="float32").fit(X, y)``, then ``predict_proba`` on ``--predict-docs`` documents: wall
  time and peak RSS after each step.

Both stay near 1x the posterior's size because ``inference._finish`` casts with
``dataset.astype(dtype, copy=False)`` (xarray's ``astype`` copies even when the dtype is
unchanged) and ``posterior_mean`` averages with ``mean(("chain", "draw"), dtype="float64",
skipna=False)`` (no float64 copy of every draw, no NaN-skipping copy).

A measurement is skipped (its size is still printed) when ``MemAvailable`` is below its expected
peak plus 0.5 GiB, so that it cannot push a shared machine into the OOM killer.

Usage::

    .venv/bin/python benchmarks/bench_conjugate.py [--draws 1000] [--dtypes float32 float64]
        [--predict-docs 1000] [--predict-draws 1000] [--skip-predict]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent
GiB = 1024**3
#: Expected peak RSS increase, in multiples of the posterior's size, as measured with this
#: script (about 1.0x for both, plus a margin; used only to skip measurements that would not fit
#: in the available memory).
EXPECTED_PEAK = {"conjugate": 1.25, "predict": 1.25}


def peak_rss_bytes() -> int:
    """Peak resident set size of this process so far (ru_maxrss is in KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def mem_available_bytes() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


# ---------------------------------------------------------------------------------------------
# Subprocess side: one measurement, printed as one JSON line.


def _load(data_dir: Path):
    X = sp.load_npz(data_dir / "X.npz").tocsr()
    y = np.load(data_dir / "y.npy")
    return X, y


def child_conjugate(args) -> dict:
    from bayesgen.closed_form import multinomial_nb
    from bayesgen.inference import sampling as inference

    X, y = _load(Path(args.data))
    stats = multinomial_nb(X, y)
    del X, y
    rss_before = peak_rss_bytes()
    start = time.perf_counter()
    idata = inference.conjugate_posterior(
        stats, draws=args.draws, chains=1, dtype=args.dtype, prior_draws=0, random_seed=args.seed
    )
    wall = time.perf_counter() - start
    rss_after = peak_rss_bytes()
    prob = idata["posterior"]["feature_prob"].values
    # Accuracy check, after the measurement: float64 accumulation, no full-size temporary.
    mean = prob.mean(axis=(0, 1), dtype=np.float64)
    return {
        "wall_s": wall,
        "rss_before": rss_before,
        "rss_after": rss_after,
        "posterior_bytes": int(sum(v.nbytes for v in idata["posterior"].to_dataset().values())),
        "dtype": str(prob.dtype),
        "max_err": float(np.abs(mean - stats["feature_prob"].values).max()),
    }


def child_predict(args) -> dict:
    from bayesgen import MultinomialNB
    from bayesgen.closed_form import multinomial_nb, predict_proba

    X, y = _load(Path(args.data))
    X_test = X[: args.predict_docs]
    rss_before = peak_rss_bytes()
    clf = MultinomialNB(
        inference="conjugate",
        compute_map=False,
        draws=args.draws,
        chains=1,
        prior_draws=0,
        dtype="float32",
        random_seed=args.seed,
    )
    start = time.perf_counter()
    clf.fit(X, y)
    fit_s = time.perf_counter() - start
    rss_fit = peak_rss_bytes()
    start = time.perf_counter()
    proba = clf.predict_proba(X_test)
    predict_s = time.perf_counter() - start
    rss_predict = peak_rss_bytes()
    plug_in = predict_proba(multinomial_nb(X, y), X_test)
    posterior = clf.idata_["posterior"].to_dataset()
    return {
        "fit_s": fit_s,
        "predict_s": predict_s,
        "rss_before": rss_before,
        "rss_fit": rss_fit,
        "rss_predict": rss_predict,
        "posterior_bytes": int(sum(v.nbytes for v in posterior.values())),
        "predict_docs": int(X_test.shape[0]),
        "max_diff_plug_in": float(np.abs(proba - plug_in).max()),
        "agree_plug_in": float(np.mean(proba.argmax(1) == plug_in.argmax(1))),
    }


# ---------------------------------------------------------------------------------------------
# Parent side.


def run_child(args, kind: str, data_dir: Path, *, draws: int, dtype: str) -> dict:
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        kind,
        "--data",
        str(data_dir),
        "--draws",
        str(draws),
        "--dtype",
        dtype,
        "--seed",
        str(args.seed),
        "--predict-docs",
        str(args.predict_docs),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"error": f"exit {done.returncode}: {done.stderr.strip()[-2000:]}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def fits_in_memory(kind: str, size: int, label: str) -> bool:
    available = mem_available_bytes()
    needed = EXPECTED_PEAK[kind] * size + GiB // 2
    if available is not None and available < needed:
        print(
            f"{label:<18} skipped: expected peak {needed / GiB:.1f} GiB > MemAvailable "
            f"{available / GiB:.1f} GiB (posterior {size / GiB:.2f} GiB)"
        )
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--words", type=int, default=50_000)
    parser.add_argument("--classes", type=int, default=20)
    parser.add_argument("--draws", type=int, default=1000, help="posterior draws (1 chain)")
    parser.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    parser.add_argument("--predict-docs", type=int, default=1000)
    parser.add_argument("--predict-draws", type=int, default=None, help="default: --draws")
    parser.add_argument("--skip-predict", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    # Internal: run one measurement in this (fresh) process.
    parser.add_argument("--child", choices=["conjugate", "predict"], help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--dtype", default="float32", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        result = child_conjugate(args) if args.child == "conjugate" else child_predict(args)
        print(json.dumps(result))
        return 0

    sys.path.insert(0, str(HERE))
    from bench_closed_form import zipf_bag_of_words

    start = time.perf_counter()
    X, y = zipf_bag_of_words(args.docs, args.words, args.classes, seed=args.seed)
    print(
        f"corpus: {X.shape[0]} docs x {X.shape[1]} words, {args.classes} classes, {X.nnz} "
        f"non-zeros, {X.sum() / X.shape[0]:.1f} tokens/doc (built in "
        f"{time.perf_counter() - start:.1f} s)"
    )
    available = mem_available_bytes()
    print(
        f"python {platform.python_version()}, numpy {np.__version__}; {os.cpu_count()} CPUs; "
        + (f"MemAvailable {available / GiB:.1f} GiB; " if available else "")
        + "each measurement in a fresh subprocess; GiB = 2^30 bytes"
    )
    verdicts = []
    with tempfile.TemporaryDirectory(prefix="bench_conjugate_") as tmp:
        data_dir = Path(tmp)
        sp.save_npz(data_dir / "X.npz", X)
        np.save(data_dir / "y.npy", y)
        del X, y

        print(
            f"\nconjugate_posterior(stats, draws={args.draws}, chains=1, dtype=..., prior_draws=0)"
        )
        print(
            f"{'variant':<18} {'posterior':>10} {'wall s':>7} {'peak RSS before':>16} "
            f"{'after':>8} {'increase':>9} {'incr./size':>10} {'max |err|':>10}"
        )
        for dtype in args.dtypes:
            size = args.draws * args.classes * args.words * np.dtype(dtype).itemsize
            label = dtype
            if not fits_in_memory("conjugate", size, label):
                continue
            r = run_child(args, "conjugate", data_dir, draws=args.draws, dtype=dtype)
            if "error" in r:
                print(f"{label:<18} FAILED {r['error']}")
                continue
            increase = r["rss_after"] - r["rss_before"]
            ratio = increase / r["posterior_bytes"]
            verdicts.append((dtype, ratio))
            print(
                f"{label:<18} {r['posterior_bytes'] / GiB:>7.2f} GiB {r['wall_s']:>7.1f} "
                f"{r['rss_before'] / GiB:>12.2f} GiB {r['rss_after'] / GiB:>8.2f} "
                f"{increase / GiB:>9.2f} {ratio:>10.2f} {r['max_err']:>10.2e}",
                flush=True,
            )

        if not args.skip_predict:
            draws = args.predict_draws or args.draws
            size = draws * args.classes * args.words * 4
            print(
                f"\nMultinomialNB(inference='conjugate', compute_map=False, draws={draws}, "
                f"chains=1, prior_draws=0, dtype='float32'): fit, then predict_proba on "
                f"{args.predict_docs} docs"
            )
            print(
                f"{'variant':<18} {'fit s':>7} {'peak RSS after fit':>19} {'predict s':>10} "
                f"{'after predict':>14} {'fit incr./size':>14} {'max |p - plug-in|':>17} "
                f"{'same class':>10}"
            )
            label = "float32"
            if fits_in_memory("predict", size, label):
                r = run_child(args, "predict", data_dir, draws=draws, dtype="float32")
                if "error" in r:
                    print(f"{label:<18} FAILED {r['error']}")
                else:
                    ratio = (r["rss_fit"] - r["rss_before"]) / r["posterior_bytes"]
                    print(
                        f"{label:<18} {r['fit_s']:>7.1f} {r['rss_fit'] / GiB:>15.2f} GiB "
                        f"{r['predict_s']:>10.1f} {r['rss_predict'] / GiB:>10.2f} GiB "
                        f"{ratio:>14.2f} {r['max_diff_plug_in']:>17.2e} "
                        f"{r['agree_plug_in']:>10.1%}",
                        flush=True,
                    )
    for dtype, ratio in verdicts:
        ok = ratio <= 1.25
        print(
            f"verdict {dtype}: peak increase {ratio:.2f} x the posterior's size; "
            + (
                "meets the docstring's 'no temporary of the same size'"
                if ok
                else "MISSES the docstring's 'no temporary of the same size'"
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
