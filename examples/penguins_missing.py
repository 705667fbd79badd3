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
rows miss all four. NUTS refuses missing entries at fit (the script prints why);
``inference="conjugate"`` fits them by Gibbs sampling, and its ``map_`` is EM's mode of the
observed-data posterior. Rows with nothing measured tell the means and the covariance nothing,
so the exact posterior of μ is the conjugate one on the 342 measured rows: the script prints
μ's EM mode, its Gibbs posterior mean and SD, and that exact posterior mean side by side.

Run: python examples/penguins_missing.py [--folds 5] [--seed 0] [--draws 1000]
"""

import argparse
import time

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


def gda_comparison(X: pd.DataFrame, y: np.ndarray, draws: int) -> pd.DataFrame:
    """μ of GDA on the measurements with their missing entries: EM's mode, Gibbs's posterior
    mean and SD, and the exact posterior mean on the rows where something is measured."""
    measurements = X[list(PENGUIN_MEASUREMENTS)]
    try:
        bayesgen.GaussianDiscriminantAnalysis(inference="nuts", random_seed=0).fit(measurements, y)
    except ValueError as refusal:
        # The refusal's reason, without its list of alternatives.
        print("NUTS refuses the missing entries at fit:", str(refusal).split(" Impute")[0])
    start = time.perf_counter()
    gibbs = bayesgen.GaussianDiscriminantAnalysis(
        inference="conjugate", draws=draws, tune=200, chains=2, prior_draws=0, random_seed=0
    ).fit(measurements, y)
    mu = gibbs.idata_["posterior"]["mu"]
    print(
        f"Gibbs: {mu.sizes['chain']} chains x {mu.sizes['draw']} draws in "
        f"{time.perf_counter() - start:.1f} s; EM: {gibbs.map_.attrs['map_message']}"
    )
    measured = measurements.notna().any(axis=1).to_numpy()
    exact = bayesgen.GaussianDiscriminantAnalysis(
        inference="conjugate", draws=10, chains=1, prior_draws=0, compute_map=False
    ).fit(measurements[measured], y[measured])
    rows = []
    for k, label in enumerate(gibbs.classes_):
        for j, feature in enumerate(PENGUIN_MEASUREMENTS):
            draws_kj = mu.isel({"class": k, "feature": j}).values
            rows.append(
                {
                    "class": label,
                    "feature": feature,
                    "EM mode": float(gibbs.map_["mu"].values[k, j]),
                    "Gibbs mean": float(draws_kj.mean()),
                    "Gibbs sd": float(draws_kj.std()),
                    "exact mean (342 rows)": float(exact.closed_form_["mu"].values[k, j]),
                }
            )
    table = pd.DataFrame(rows).set_index(["class", "feature"])
    table["(Gibbs - exact) / sd"] = (table["Gibbs mean"] - table["exact mean (342 rows)"]) / table[
        "Gibbs sd"
    ]
    return table


def wide():
    """Print tables whole, on wide lines."""
    return pd.option_context("display.width", 160, "display.max_columns", None)


def main(folds: int, seed: int, draws: int) -> None:
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

    print("\nGDA on the four measurements (2 rows miss all four):")
    with wide():
        print(gda_comparison(X, y, draws).round(3).to_string())
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
    args = parser.parse_args()
    main(args.folds, args.seed, args.draws)
