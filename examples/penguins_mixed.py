"""Palmer penguins: one naive Bayes over categories and measurements, against each half alone.

The species of 333 penguins from their island, their sex (categories) and four body
measurements (bill length and depth, flipper length, body mass), with the 11 penguins that
miss an entry left out. ``bayesgen.NaiveBayes`` puts one class prior beside a block per group
of columns. With the default ``blocks="auto"`` it reads each column and proposes a
categorical block for island and sex and a Gaussian block for the four measurements: flipper
length and body mass are whole numbers of millimetres and grams, but far from 0 (no 0, mean
of 10 or more), so they are taken as measurements, not counts. The script prints that plan.
Against it: ``bayesgen.GaussianNB`` on the measurements alone, a categorical naive Bayes on
island and sex alone, and scikit-learn's ``GaussianNB`` on the measurements.

One more row shows why the choice of block matters: the same columns with flipper length
and body mass forced into a Poisson block (``auto_blocks(X, overrides=...)``), whose variance
equals its mean. Within a species, body mass has a mean of 3,700-5,100 g and a variance of
150,000-250,000 g², about 50 times more; flipper length a mean of about 200 mm and a variance
of about 45 mm², 4 times less.

Two scores of p(species | row) predicted by a model fitted without that row:

* exact leave-one-out (``bayesgen.compare_models``): elpd_loo = Σ_i log p(y_i | x_i, D_{-i})
  with its standard error, and the share of rows whose most probable class is theirs, from
  the conjugate posteriors without a refit; scikit-learn's model by 333 refits;
* held-out log loss and accuracy on a stratified K-fold split: bayesgen's exact posterior
  predictive (``posterior_predictive_proba``), scikit-learn's ``predict_proba``.

Run: python examples/penguins_mixed.py [--folds 5] [--seed 0]
"""

import argparse
import time

import numpy as np
import pandas as pd
from sklearn.metrics import log_loss
from sklearn.model_selection import StratifiedKFold
from sklearn.naive_bayes import GaussianNB as SklearnGaussianNB

import bayesgen
from bayesgen.estimators.mixed import auto_blocks
from bayesgen.input.datasets import PENGUIN_CATEGORIES, PENGUIN_MEASUREMENTS, load_penguins

#: Exact conjugate posteriors: no sampling, so every fit takes a fraction of a second.
OPTIONS = {"inference": "conjugate", "compute_map": False, "prior_draws": 0, "random_seed": 0}
#: The measurements recorded as whole numbers, forced into a Poisson block to show its cost.
FORCED_POISSON = {"flipper_length_mm": "poisson", "body_mass_g": "poisson"}
SKLEARN = "scikit-learn GaussianNB, measurements"


def models(X: pd.DataFrame) -> dict[str, tuple[list[str], object]]:
    """Each model by name: the columns it reads and the unfitted estimator."""
    every_column = list(X.columns)
    return {
        "NaiveBayes, all columns (auto)": (every_column, bayesgen.NaiveBayes(**OPTIONS)),
        "NaiveBayes, flipper + mass forced Poisson": (
            every_column,
            bayesgen.NaiveBayes(auto_blocks(X, overrides=FORCED_POISSON), **OPTIONS),
        ),
        "GaussianNB, measurements": (list(PENGUIN_MEASUREMENTS), bayesgen.GaussianNB(**OPTIONS)),
        "categorical, island + sex": (list(PENGUIN_CATEGORIES), bayesgen.NaiveBayes(**OPTIONS)),
        SKLEARN: (list(PENGUIN_MEASUREMENTS), SklearnGaussianNB()),
    }


def proba(estimator, X: pd.DataFrame) -> np.ndarray:
    """p(y = k | x): bayesgen's exact posterior predictive, scikit-learn's plug-in estimate."""
    if isinstance(estimator, SklearnGaussianNB):
        return estimator.predict_proba(X)
    return estimator.posterior_predictive_proba(X)


def sklearn_leave_one_out(X: pd.DataFrame, y: np.ndarray) -> np.ndarray:
    """log p(y = k | x_i) of scikit-learn's GaussianNB refitted without row i, for every i."""
    rows = np.arange(len(y))
    return np.vstack(
        [
            SklearnGaussianNB().fit(X[rows != i], y[rows != i]).predict_log_proba(X.iloc[[i]])[0]
            for i in rows
        ]
    )


def leave_one_out_table(X: pd.DataFrame, y: np.ndarray) -> pd.DataFrame:
    """Exact LOO of the bayesgen models (compare_models), scikit-learn's by refits beside."""
    fitted = {
        name: estimator.fit(X[columns], y)
        for name, (columns, estimator) in models(X).items()
        if name != SKLEARN
    }
    table = bayesgen.compare_models(fitted)
    table = table[["elpd_loo", "se", "elpd_diff", "se_diff", "accuracy_loo"]].copy()
    y_codes = np.searchsorted(np.unique(y), y)
    rows = np.arange(len(y))
    log_proba = sklearn_leave_one_out(X[list(PENGUIN_MEASUREMENTS)], y)
    pointwise = log_proba[rows, y_codes]
    # The same difference compare_models reports: the best model's pointwise score minus this.
    best = np.log(bayesgen.loo_proba(fitted[table.index[0]])[rows, y_codes])
    difference = best - pointwise
    table.loc[SKLEARN] = [
        pointwise.sum(),
        np.sqrt(len(y) * np.var(pointwise)),
        difference.sum(),
        np.sqrt(len(y) * np.var(difference)),
        np.mean(log_proba.argmax(axis=1) == y_codes),
    ]
    return table.sort_values("elpd_loo", ascending=False)


def held_out_table(X: pd.DataFrame, y: np.ndarray, folds: int, seed: int) -> pd.DataFrame:
    """Mean held-out log loss and accuracy over a stratified K-fold split, per model."""
    classes = np.unique(y)
    losses: dict[str, list[float]] = {}
    accuracies: dict[str, list[float]] = {}
    split = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    for train, test in split.split(X, y):
        for name, (columns, estimator) in models(X).items():
            estimator.fit(X.iloc[train][columns], y[train])
            predicted = proba(estimator, X.iloc[test][columns])
            losses.setdefault(name, []).append(log_loss(y[test], predicted, labels=classes))
            hits = classes[predicted.argmax(axis=1)] == y[test]
            accuracies.setdefault(name, []).append(float(hits.mean()))
    return pd.DataFrame(
        {
            "log_loss": {name: np.mean(values) for name, values in losses.items()},
            "log_loss_se": {
                name: np.std(values, ddof=1) / np.sqrt(folds) for name, values in losses.items()
            },
            "accuracy": {name: np.mean(values) for name, values in accuracies.items()},
        }
    )


def main(folds: int, seed: int) -> None:
    start = time.perf_counter()
    X, y = load_penguins()
    counts = ", ".join(
        f"{label} {count}" for label, count in zip(*np.unique(y, return_counts=True), strict=True)
    )
    print(f"{len(y)} penguins ({counts}); columns {list(X.columns)}")
    print("\nblocks='auto' proposes (NaiveBayes().plan(X)):")
    plan = bayesgen.NaiveBayes().plan(X)
    with pd.option_context("display.width", 140, "display.max_columns", None):
        print(plan.to_string(index=False))
    print("\nthe blocks with flipper length and body mass forced into a Poisson block:")
    for name, model, columns in auto_blocks(X, overrides=FORCED_POISSON):
        print(f"  {name}: {model} on {columns}")

    loo = leave_one_out_table(X, y)
    held_out = held_out_table(X, y, folds, seed)
    table = loo.join(held_out).rename(
        columns={
            "log_loss": f"log_loss_{folds}fold",
            "log_loss_se": f"log_loss_{folds}fold_se",
            "accuracy": f"accuracy_{folds}fold",
        }
    )
    print(
        "\nExact leave-one-out (elpd_loo: sum of log p(y_i | x_i, data without row i); "
        f"elpd_diff: behind the best) and {folds}-fold held-out log loss (mean over folds, "
        f"seed {seed}):"
    )
    with pd.option_context("display.width", 160, "display.max_columns", None):
        print(table.round(3).to_string())
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
    args = parser.parse_args()
    main(args.folds, args.seed)
