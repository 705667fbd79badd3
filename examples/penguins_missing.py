"""Palmer penguins with their missing entries: keep the 11 incomplete rows, or drop them?

All 344 penguins of the Palmer data: 11 miss an entry (9 their sex, 2 their sex and all four
measurements). ``bayesgen.NaiveBayes(blocks="auto", inference="conjugate")`` integrates a
missing entry out exactly: each block counts, per class and column, the rows observed there,
and a prediction drops a missing entry's factor. That is exact when the entries are missing
at random (whether an entry is missing does not depend on its value, given what is observed).
Two fits, one on all 344 rows and one on the 333 complete rows, are scored on the same thing,
the labels of the 333 complete rows:

* exact leave-one-out: Σ_i log p(y_i | x_i, D without row i) over the complete rows i. For
  the fit on all rows, D without row i still holds the 11 incomplete rows; for the other it
  does not. Same rows scored, same labels, so the difference (with the standard error of the
  paired differences) is what the 11 rows add;
* held-out log loss over a stratified K-fold split of the complete rows: each fold's test rows
  are complete rows; its training rows are the other complete rows, with the 11 incomplete
  rows added ("keep") or not ("drop").

Then the 11 incomplete penguins' predicted species. A workflow that drops incomplete rows
(``dropna()``) has no prediction for them at all; bayesgen's predictions integrate missing
entries out too, so even the fit on the complete rows predicts them.

Last, Gaussian discriminant analysis (one shared covariance) on the four measurements, where 2
rows miss all four, fitted three ways with the missing entries kept: NUTS
(``inference="nuts"``: each missing entry is a latent variable of the PyMC model, beside the
complete rows' statistics), Gibbs sampling (``inference="conjugate"``: an exact draw of the
missing entries given the parameters, then the conjugate draw given the completed rows), and
EM, whose mode of the observed-data posterior is either fit's ``map_``. Rows with nothing
measured tell the means and the covariance nothing (here all 8 missing measurements are in
those 2 rows, which add only their labels, so NUTS has no entry left latent), and the exact
posterior of μ is the conjugate one on the 342 measured rows. The script prints, for each μ,
EM's mode, that exact posterior mean and SD, NUTS's and Gibbs's posterior means and SDs, and
their difference in combined Monte Carlo standard errors (``az.mcse``), then each sampler's
largest distance from the exact means in its own MCSEs, and the seconds of each fit.

Run: python examples/penguins_missing.py [--folds 5] [--seed 0] [--draws 1000]
     [--nuts-draws 500]
"""

import argparse
import time

import arviz as az
import numpy as np
import pandas as pd
from sklearn.metrics import log_loss
from sklearn.model_selection import StratifiedKFold

import bayesgen
from bayesgen.input.datasets import PENGUIN_MEASUREMENTS, load_penguins

#: Exact conjugate posteriors: no sampling, so every naive Bayes fit takes well under a second.
OPTIONS = {"inference": "conjugate", "compute_map": False, "prior_draws": 0, "random_seed": 0}
KEEP = "all 344 rows (missing entries integrated out)"
DROP = "333 complete rows (incomplete rows dropped)"


def fit(X: pd.DataFrame, y: np.ndarray):
    """``NaiveBayes(blocks="auto")`` with exact conjugate posteriors."""
    return bayesgen.NaiveBayes(**OPTIONS).fit(X, y)


def incomplete_rows(X: pd.DataFrame) -> np.ndarray:
    """Whether each row misses an entry."""
    return X.isna().any(axis=1).to_numpy()


def leave_one_out_on_complete_rows(X: pd.DataFrame, y: np.ndarray) -> pd.DataFrame:
    """Exact LOO of the complete rows' labels, by the fit on all rows and the one without the
    incomplete rows; elpd_diff and se_diff are behind the better of the two (paired)."""
    incomplete = incomplete_rows(X)
    pointwise = {
        KEEP: bayesgen.leave_one_out(fit(X, y)).pointwise[~incomplete],
        DROP: bayesgen.leave_one_out(fit(X[~incomplete], y[~incomplete])).pointwise,
    }
    best = max(pointwise, key=lambda name: pointwise[name].sum())
    n_rows = int((~incomplete).sum())
    return pd.DataFrame(
        {
            "elpd_loo": {name: score.sum() for name, score in pointwise.items()},
            "se": {name: np.sqrt(n_rows * np.var(score)) for name, score in pointwise.items()},
            "elpd_diff": {
                name: (pointwise[best] - score).sum() for name, score in pointwise.items()
            },
            "se_diff": {
                name: np.sqrt(n_rows * np.var(pointwise[best] - score))
                for name, score in pointwise.items()
            },
        }
    ).sort_values("elpd_loo", ascending=False)


def held_out_table(X: pd.DataFrame, y: np.ndarray, folds: int, seed: int) -> pd.DataFrame:
    """Mean log loss over a stratified K-fold split of the complete rows, the training folds
    keeping or dropping the incomplete rows; the mean paired difference and its SE beside."""
    incomplete = incomplete_rows(X)
    complete_X, complete_y = X[~incomplete], y[~incomplete]
    classes = np.unique(y)
    losses: dict[str, list[float]] = {KEEP: [], DROP: []}
    split = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    for train, test in split.split(complete_X, complete_y):
        training = {
            KEEP: (
                pd.concat([complete_X.iloc[train], X[incomplete]]),
                np.concatenate([complete_y[train], y[incomplete]]),
            ),
            DROP: (complete_X.iloc[train], complete_y[train]),
        }
        for name, (train_X, train_y) in training.items():
            predicted = fit(train_X, train_y).posterior_predictive_proba(complete_X.iloc[test])
            losses[name].append(log_loss(complete_y[test], predicted, labels=classes))
    difference = np.subtract(losses[KEEP], losses[DROP])
    return pd.DataFrame(
        {
            "log_loss": {name: np.mean(values) for name, values in losses.items()},
            "se": {
                name: np.std(values, ddof=1) / np.sqrt(folds) for name, values in losses.items()
            },
            "keep_minus_drop": {KEEP: difference.mean(), DROP: 0.0},
            "se_diff": {KEEP: difference.std(ddof=1) / np.sqrt(folds), DROP: 0.0},
        }
    )


def incomplete_predictions(X: pd.DataFrame, y: np.ndarray) -> pd.DataFrame:
    """p(species | observed entries) of each incomplete row, by the fit on all rows (their own
    row left out: exact LOO) and by the fit on the complete rows."""
    incomplete = incomplete_rows(X)
    keep = fit(X, y)
    drop = fit(X[~incomplete], y[~incomplete])
    loo = bayesgen.loo_proba(keep)[incomplete]
    dropped = drop.posterior_predictive_proba(X[incomplete])
    missing = X[incomplete].isna()
    table = pd.DataFrame(
        {
            "island": X.loc[incomplete, "island"].astype(str),
            "missing": [
                "sex" if row.sum() == 1 else f"{row.sum()} entries" for _, row in missing.iterrows()
            ],
            "species": y[incomplete],
        },
        index=X.index[incomplete],
    )
    for k, label in enumerate(keep.classes_):
        table[f"p({label}) LOO"] = loo[:, k]
    own = np.searchsorted(drop.classes_, y[incomplete])
    table["p(own) by drop fit"] = dropped[np.arange(len(table)), own]
    return table


def timed_fit(estimator, X: pd.DataFrame, y: np.ndarray):
    """The estimator fitted, and the seconds its fit took."""
    start = time.perf_counter()
    estimator.fit(X, y)
    return estimator, time.perf_counter() - start


def flat_mu(est) -> np.ndarray:
    """μ's draws, shape (chain, draw, class × feature)."""
    mu = est.idata_["posterior"]["mu"].transpose("chain", "draw", "class", "feature").values
    return mu.reshape(*mu.shape[:2], -1)


def gda_comparison(
    X: pd.DataFrame, y: np.ndarray, draws: int, nuts_draws: int
) -> tuple[pd.DataFrame, dict[str, float]]:
    """μ of GDA on the measurements with their missing entries: EM's mode, the exact posterior
    on the rows where something is measured, and the posterior means and SDs by NUTS and by
    Gibbs with their difference in combined Monte Carlo standard errors; and how far each
    sampler's means are from the exact ones, in its own MCSEs (the largest over μ)."""
    measurements = X[list(PENGUIN_MEASUREMENTS)]
    nuts, nuts_seconds = timed_fit(
        bayesgen.GaussianDiscriminantAnalysis(
            inference="nuts",
            draws=nuts_draws,
            tune=nuts_draws,
            chains=2,
            prior_draws=0,
            progressbar=False,
            random_seed=0,
        ),
        measurements,
        y,
    )
    gibbs, gibbs_seconds = timed_fit(
        bayesgen.GaussianDiscriminantAnalysis(
            inference="conjugate", draws=draws, tune=200, chains=2, prior_draws=0, random_seed=0
        ),
        measurements,
        y,
    )
    # Rows with nothing measured tell μ and Σ nothing, so the exact posterior of μ is the
    # conjugate one on the other rows, whose means and SDs compare() holds.
    measured = measurements.notna().any(axis=1).to_numpy()
    exact, exact_seconds = timed_fit(
        bayesgen.GaussianDiscriminantAnalysis(
            inference="conjugate", draws=10, chains=1, prior_draws=0, compute_map=False
        ),
        measurements[measured],
        y[measured],
    )
    exact_mu = bayesgen.compare(exact).table.query("variable == 'mu'").set_index("coords")
    samplers = {"NUTS": nuts, "Gibbs": gibbs}
    draws_of = {name: flat_mu(est) for name, est in samplers.items()}
    mcse = {name: np.asarray(az.mcse(mu)) for name, mu in draws_of.items()}
    index = pd.MultiIndex.from_product(
        [gibbs.classes_, PENGUIN_MEASUREMENTS], names=["class", "feature"]
    )
    exact_mu = exact_mu.loc[[f"{label}, {feature}" for label, feature in index]]
    table = pd.DataFrame(
        {
            "EM mode": gibbs.map_["mu"].transpose("class", "feature").values.ravel(),
            "exact mean": exact_mu["closed_form"].to_numpy(),
            "exact sd": exact_mu["closed_form_sd"].to_numpy(),
        },
        index=index,
    )
    for name, mu in draws_of.items():
        table[f"{name} mean"] = mu.mean(axis=(0, 1))
        table[f"{name} sd"] = mu.std(axis=(0, 1))
    table["(NUTS - Gibbs) / MCSE"] = (table["NUTS mean"] - table["Gibbs mean"]) / np.hypot(
        mcse["NUTS"], mcse["Gibbs"]
    )
    worst = {
        name: float(np.max(np.abs(table[f"{name} mean"] - table["exact mean"]) / mcse[name]))
        for name in samplers
    }
    print(
        f"NUTS: 2 chains x {nuts_draws} draws ({nuts_draws} tuning) in {nuts_seconds:.1f} s; "
        f"Gibbs: 2 chains x {draws} draws (200 tuning) in {gibbs_seconds:.1f} s; "
        f"exact conjugate fit on the {measured.sum()} measured rows in {exact_seconds:.1f} s"
    )
    print(f"EM (inside each fit, where it starts the chains): {gibbs.map_.attrs['map_message']}")
    return table, worst


def wide():
    """Print tables whole, on wide lines."""
    return pd.option_context("display.width", 160, "display.max_columns", None)


def main(folds: int, seed: int, draws: int, nuts_draws: int) -> None:
    start = time.perf_counter()
    X, y = load_penguins(dropna=False)
    incomplete = incomplete_rows(X)
    print(
        f"{len(y)} penguins, {incomplete.sum()} with a missing entry; missing per column: "
        + ", ".join(f"{column} {n}" for column, n in X.isna().sum().items() if n)
    )

    print(
        f"\nExact leave-one-out of the {(~incomplete).sum()} complete rows' labels "
        "(elpd_loo: Σ log p(y_i | x_i, data without row i) over those rows):"
    )
    with wide():
        print(leave_one_out_on_complete_rows(X, y).round(3).to_string())

    print(
        f"\n{folds}-fold held-out log loss on the complete rows (mean over folds, seed {seed}; "
        "training folds keep or drop the incomplete rows):"
    )
    with wide():
        print(held_out_table(X, y, folds, seed).round(4).to_string())

    print(
        "\nThe incomplete penguins: dropping them leaves them without a prediction. The fit on "
        "all rows predicts each from its observed entries (here with the row itself left out):"
    )
    with wide():
        print(incomplete_predictions(X, y).round(3).to_string())

    print("\nGDA on the four measurements (2 rows miss all four), μ by three fits:")
    table, worst = gda_comparison(X, y, draws, nuts_draws)
    with wide():
        print(table.round(3).to_string())
    print(
        "largest |mean - exact mean| over μ, in the sampler's MCSEs: "
        + ", ".join(f"{name} {value:.2f}" for name, value in worst.items())
    )
    print(f"({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--folds", type=int, default=5, help="folds of the held-out split (default: 5)"
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the folds' shuffle (default: 0)"
    )
    parser.add_argument(
        "--draws", type=int, default=1000, help="Gibbs draws per chain for GDA (default: 1000)"
    )
    parser.add_argument(
        "--nuts-draws",
        type=int,
        default=500,
        help="NUTS draws per chain for GDA, and as many tuning steps (default: 500)",
    )
    args = parser.parse_args()
    main(args.folds, args.seed, args.draws, args.nuts_draws)
