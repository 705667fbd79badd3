"""Gaussian naive Bayes: bayesgen's conjugate fit against scikit-learn's, side by side.

Issue 22 asks that ``bayesgen.GaussianNB(inference="conjugate")`` fit within 2× of
scikit-learn's ``GaussianNB.fit`` on 100,000 rows × 100 features. Both fit the same
standard-normal data with 3 classes, interleaved in one process (bayesgen, scikit-learn,
bayesgen, …) so that the machine's load falls on both alike; the figures are the minimum and
median of ``--repeats`` and the ratio of the medians. bayesgen's fit here is what a user gets
from ``fit``: the checks of X and y, the sufficient statistics, the normal–inverse-gamma closed
forms (posterior means, SDs, the MLE) and the exact posterior held as its parameters (no draws
are made until asked; ``compute_map=False`` and ``prior_draws=0``).

Run: python benchmarks/bench_gaussian_nb.py [--rows 100000] [--features 100] [--repeats 7]
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import date

import numpy as np
from sklearn.naive_bayes import GaussianNB as SklearnGaussianNB

import bayesgen


def timed(fit) -> float:
    start = time.perf_counter()
    fit()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--features", type=int, default=100)
    parser.add_argument("--classes", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    y = rng.integers(args.classes, size=args.rows)
    X = rng.normal(size=(args.rows, args.features)) + y[:, None] * 0.1

    def ours():
        bayesgen.GaussianNB(inference="conjugate", compute_map=False, prior_draws=0).fit(X, y)

    def theirs():
        SklearnGaussianNB(var_smoothing=0.0).fit(X, y)

    ours(), theirs()  # warm up: imports, first allocations
    times = {"bayesgen GaussianNB (conjugate)": [], "scikit-learn GaussianNB": []}
    for _ in range(args.repeats):
        times["bayesgen GaussianNB (conjugate)"].append(timed(ours))
        times["scikit-learn GaussianNB"].append(timed(theirs))

    print(f"# Gaussian naive Bayes fit, {args.rows:,} x {args.features}, {args.classes} classes")
    print(f"# {date.today()}, {args.repeats} interleaved repeats, seconds")
    print("| fit | min | median |")
    print("|---|---|---|")
    for name, values in times.items():
        print(f"| {name} | {min(values):.3f} | {statistics.median(values):.3f} |")
    medians = [statistics.median(values) for values in times.values()]
    print(f"\nratio of the medians (bayesgen / scikit-learn): {medians[0] / medians[1]:.2f}")


if __name__ == "__main__":
    main()
