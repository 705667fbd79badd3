"""GDA vs logistic regression when x | y is Gaussian and when it is Poisson.

The lecture notes (seed 000): if x | y is Gaussian with a shared covariance, p(y | x) is
logistic and GDA, which uses that stronger assumption, is the more efficient estimator; if
x | y is Poisson, p(y | x) is still logistic, but GDA's Gaussian assumption is wrong, and
with enough data logistic regression does better. Both are fitted on the same training sets
(small and large) and scored by held-out log loss, averaged over repetitions. With few rows the
near-unregularised logistic regression overfits and GDA's stronger assumptions pay off in both
cases; with many rows the misspecified GDA loses on Poisson data, and on Gaussian data both
reach the same logistic p(y | x): a tie.

Each repetition fits both models on the same data, so the comparison is of the paired
differences in log loss: a model is called better only when their mean exceeds two standard
errors and a tolerance (--tolerance); otherwise the line says "a tie" (a mean difference within
the tolerance) or "no clear difference" (within two standard errors). With few
rows the logistic regression's log loss varies a lot from one training set to the next, so a
few repetitions may not settle a difference that every one of them shows ("GDA lower in"): its
mean is pulled by the rare training sets on which the logistic regression fails badly.

Run: python examples/gda_vs_logistic.py [--draws 500] [--repeats 10] [--tolerance 0.001]
"""

import argparse
import itertools

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss

import bayesgen

GDA = "GDA (bayesgen)"
LOGISTIC = "logistic regression"


def gaussian_data(rng, n, n_features=4):
    y = rng.integers(0, 2, n)
    cov = 0.5 * np.eye(n_features) + 0.5
    X = rng.multivariate_normal(np.zeros(n_features), cov, n) + 0.6 * y[:, None]
    return X, y


def poisson_data(rng, n, n_features=4):
    # Small rates: skewed, discrete, with many zeros - far from Gaussian, with class-dependent
    # variance (a Poisson's variance equals its mean), which a shared Σ cannot capture.
    y = rng.integers(0, 2, n)
    rates = np.where(y[:, None] == 1, 1.0, 3.0) * np.linspace(0.5, 1.5, n_features)
    return rng.poisson(rates).astype(float), y


def run(
    draws: int, repeats: int, sizes: tuple[int, ...] = (20, 2000), n_test: int = 2000
) -> pd.DataFrame:
    """Held-out log loss of both models, one row per data kind, training size and repetition.

    Both models of a repetition are fitted on the same training set and scored on the same
    test set, so their difference is paired.
    """
    rng = np.random.default_rng(0)
    rows = []
    for (name, make), n_train in itertools.product(
        (("Gaussian x | y", gaussian_data), ("Poisson x | y", poisson_data)), sizes
    ):
        for repeat in range(repeats):
            X_train, y_train = make(rng, n_train)
            X_test, y_test = make(rng, n_test)
            gda = bayesgen.GaussianDiscriminantAnalysis(
                inference="conjugate",
                draws=draws,
                compute_map=False,
                prior_draws=0,
                random_seed=repeat,
            ).fit(X_train, y_train)
            logistic = LogisticRegression(C=1e4, max_iter=5000).fit(X_train, y_train)
            rows.append(
                {
                    "data": name,
                    "n_train": n_train,
                    "repeat": repeat,
                    GDA: log_loss(y_test, gda.predict_proba(X_test)),
                    LOGISTIC: log_loss(y_test, logistic.predict_proba(X_test)),
                }
            )
    return pd.DataFrame(rows)


def summarise(losses: pd.DataFrame, tolerance: float) -> pd.DataFrame:
    """Mean log losses, their paired difference with its standard error, and the verdict.

    A model is called better only when the mean difference exceeds both two standard errors
    (of the mean over repetitions of the paired differences) and ``tolerance`` (nats per
    test row, a difference too small to matter); otherwise the verdict is "tie" (within the
    tolerance) or "no clear difference" (within two standard errors).
    """
    rows = []
    for (data, n_train), group in losses.groupby(["data", "n_train"], sort=False):
        difference = group[GDA] - group[LOGISTIC]
        mean = difference.mean()
        se = difference.std(ddof=1) / np.sqrt(len(difference))
        if abs(mean) <= tolerance:
            verdict = "tie"
        elif abs(mean) <= 2 * se:
            verdict = "no clear difference"
        else:
            verdict = GDA if mean < 0 else LOGISTIC
        rows.append(
            {
                "data": data,
                "n_train": n_train,
                GDA: group[GDA].mean(),
                LOGISTIC: group[LOGISTIC].mean(),
                "GDA - logistic": mean,
                "se": se,
                "GDA lower in": f"{(difference < 0).sum()} of {len(difference)}",
                "verdict": verdict,
            }
        )
    return pd.DataFrame(rows).set_index(["data", "n_train"])


def report(table: pd.DataFrame, tolerance: float) -> None:
    """The table, then one sentence per row."""
    with pd.option_context("display.width", 140, "display.max_columns", None):
        print(table.round(4).to_string())
    print(
        f"(log loss in nats per test row, averaged over repetitions; a model is called better "
        f"when the mean paired difference exceeds both 2 standard errors and {tolerance:g})"
    )
    for (data, n_train), row in table.iterrows():
        mean, se = row["GDA - logistic"], row["se"]
        difference = f"GDA - logistic = {mean:+.3g} ± {se:.2g}"
        if row["verdict"] == "tie":
            verdict = f"a tie ({difference}, no larger than the tolerance {tolerance:g})"
        elif row["verdict"] == "no clear difference":
            verdict = f"no clear difference ({difference}, within 2 standard errors)"
        else:
            verdict = f"lower held-out log loss with {row['verdict']} ({difference})"
        print(f"{data}, {n_train} training rows: {verdict}; GDA lower in {row['GDA lower in']}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--draws",
        type=int,
        default=500,
        help="exact posterior draws per chain of each GDA fit (default: %(default)s)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=10,
        help="training and test sets drawn per setting; at least 2, for a standard error "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--tolerance",
        type=float,
        default=0.001,
        help="differences in mean log loss (nats per test row) at most this large are called "
        "ties, however many standard errors they are (default: %(default)s)",
    )
    options = parser.parse_args()
    if options.repeats < 2:
        parser.error(
            f"--repeats: expected at least 2 (for a standard error); got {options.repeats}."
        )
    if not options.tolerance >= 0:
        parser.error(f"--tolerance: expected a number >= 0; got {options.tolerance}")
    losses = run(options.draws, options.repeats)
    report(summarise(losses, options.tolerance), options.tolerance)
