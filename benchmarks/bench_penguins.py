"""The mixed naive Bayes on the Palmer penguins: a conjugate fit, then exact leave-one-out.

Issue 22 asks that ``bayesgen.NaiveBayes`` on the penguins (333 rows without missing entries:
island and sex in a categorical block, the four measurements in a Gaussian block) be fitted
and scored by exact leave-one-out in under a second. One round is what a user runs::

    est = bayesgen.NaiveBayes(blocks, inference="conjugate", compute_map=False,
                              prior_draws=0).fit(X, y)
    bayesgen.loo_proba(est)

timed as the fit, the leave-one-out, and both together, on a fresh estimator each round after
one warm-up round (imports, first allocations); the figures are the minimum and median of
``--repeats``. Exact leave-one-out reads only the sufficient statistics and the rows, yet
``loo_proba`` reaches the rows through ``idata_``, which a conjugate fit makes on first
access with ``chains`` x ``draws`` posterior draws and their pointwise log-likelihood: so
``--draws`` and ``--chains`` change the time of a leave-one-out whose result they do not change.

Run: python benchmarks/bench_penguins.py [--repeats 7] [--draws 1000] [--chains 4]
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import date

import bayesgen
from bayesgen.estimators.mixed import auto_blocks
from bayesgen.input.datasets import load_penguins

#: The penguins' whole-number measurements, which ``blocks="auto"`` would read as counts.
GAUSSIAN_OVERRIDES = {"flipper_length_mm": "gaussian", "body_mass_g": "gaussian"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--draws", type=int, default=1000, help="the estimator's draws")
    parser.add_argument("--chains", type=int, default=4, help="the estimator's chains")
    args = parser.parse_args()

    X, y = load_penguins()
    blocks = auto_blocks(X, overrides=GAUSSIAN_OVERRIDES)
    options = {
        "inference": "conjugate",
        "compute_map": False,
        "prior_draws": 0,
        "draws": args.draws,
        "chains": args.chains,
        "random_seed": 0,
    }

    def one_round() -> tuple[float, float]:
        start = time.perf_counter()
        est = bayesgen.NaiveBayes(blocks, **options).fit(X, y)
        fitted = time.perf_counter()
        bayesgen.loo_proba(est)
        return fitted - start, time.perf_counter() - fitted

    one_round()  # warm up
    rounds = [one_round() for _ in range(args.repeats)]
    times = {
        "fit": [fit for fit, _ in rounds],
        "exact LOO (loo_proba)": [loo for _, loo in rounds],
        "fit + exact LOO": [fit + loo for fit, loo in rounds],
    }

    print(f"# Penguins: mixed NaiveBayes fit + exact LOO, {X.shape[0]} x {X.shape[1]}")
    print(f"# blocks {[(name, model, len(columns)) for name, model, columns in blocks]}")
    print(
        f"# {date.today()}, draws={args.draws}, chains={args.chains}, "
        f"{args.repeats} repeats, seconds"
    )
    print("| step | min | median |")
    print("|---|---|---|")
    for name, values in times.items():
        print(f"| {name} | {min(values):.3f} | {statistics.median(values):.3f} |")


if __name__ == "__main__":
    main()
