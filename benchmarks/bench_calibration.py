"""How often does compare() fail a correct posterior? False-alarm rates on sparse text data.

Fits exact conjugate posteriors (which are right by construction) for many seeds and counts
the fits whose ``compare(...).ok`` is False, for two Monte Carlo error rules side by side:

* ``estimated``: the MCSE of the mean and of the SD from the draws' own SD and fourth moment
  (ArviZ's ``mcse``), as compare() did before;
* ``null`` (compare() now): the closed-form SD and kurtosis of the marginal a correct
  posterior has.

It also pools the z and z_sd of every check over the seeds and prints their SD, skewness and
tail counts beside those of a standard normal.

    .venv/bin/python benchmarks/bench_calibration.py --seeds 100 --draws 1000
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.stats import norm, skew

from bayesgen import BernoulliNB, MultinomialNB
from bayesgen.checks import comparison as checks
from bayesgen.checks import parameter_table
from bayesgen.maths import diagnostics


def sparse_counts(n_features=300, n=40, seed=30):
    """Two classes of 20-token documents from permuted Zipf word distributions."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    zipf = 1.0 / np.arange(1, n_features + 1)
    probs = np.stack([rng.permutation(zipf), rng.permutation(zipf)])
    probs /= probs.sum(axis=1, keepdims=True)
    return np.stack([rng.multinomial(20, probs[k]) for k in y]).astype(float), y


def sparse_binary(n_features=200, n=40, seed=31):
    """Two classes of mostly rare binary features."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    prob = rng.beta(0.2, 5.0, size=(2, n_features))
    return (rng.random((n, n_features)) < prob[y]).astype(float), y


MODELS = {
    "sparse-multinomial": (MultinomialNB, sparse_counts),
    "sparse-bernoulli": (BernoulliNB, sparse_binary),
}


def estimated_rule():
    """Patch compare() back to the errors estimated from the draws alone."""
    mcse_sd = diagnostics.mcse_sd
    parameter_table.mcse_sd = lambda draws, kurtosis=None: mcse_sd(draws)
    parameter_table.null_mcse = lambda frame: frame["mcse"].to_numpy(dtype=np.float64)


def run(seeds: int, draws: int) -> None:
    for name, (cls, data) in MODELS.items():
        X, y = data()
        start = time.perf_counter()
        failed, z, z_sd = 0, [], []
        for seed in range(seeds):
            est = cls(
                inference="conjugate",
                draws=draws,
                random_seed=5000 + seed,
                compute_map=False,
                prior_draws=0,
            ).fit(X, y)
            result = checks.compare(est)
            failed += not result.ok
            rows = result.table[result.table["variable"] == "feature_prob"]
            z.append(rows["z"].to_numpy())
            z_sd.append(rows["z_sd"].to_numpy())
        seconds = time.perf_counter() - start
        zero = float(np.mean(X.sum(axis=0) == 0))
        print(
            f"{name}: {failed} of {seeds} correct posteriors failed at 2 x {draws} draws "
            f"({zero:.0%} of the words never seen; {seconds:.0f} s)"
        )
        for label, values in (("z", np.concatenate(z)), ("z_sd", np.concatenate(z_sd))):
            tails = ", ".join(
                f"|{label}|>{k}: {int(np.sum(np.abs(values) > k))} "
                f"(normal {2 * norm.sf(k) * values.size:.1f})"
                for k in (3, 4)
            )
            print(
                f"  {label}: {values.size} checks, SD {values.std():.3f}, "
                f"skewness {skew(values):.3f}; {tails}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument(
        "--rule", choices=["null", "estimated", "both"], default="both", help="MCSE rule"
    )
    args = parser.parse_args()
    if args.rule in ("null", "both"):
        print("== Monte Carlo errors of a correct posterior (compare() now) ==")
        run(args.seeds, args.draws)
    if args.rule in ("estimated", "both"):
        print("== Monte Carlo errors estimated from the draws alone (before) ==")
        estimated_rule()
        run(args.seeds, args.draws)


if __name__ == "__main__":
    main()
