"""Add-λ smoothing is a posterior mean and a MAP: both identities checked numerically.

Under a Dirichlet(λ) prior on each class's word probabilities, add-λ smoothing,
(n_kj + λ) / (n_k + V λ), is the posterior *mean*; under Dirichlet(λ + 1) it is the posterior
*mode*, the MAP (so the MLE is the MAP under Dirichlet(1)). This script sets add-λ, computed
from the counts, against two numbers that do not come from that formula:

  * the average of exact posterior draws under Dirichlet(λ) (inference="conjugate"): it may
    differ from add-λ by Monte Carlo error only, measured in Monte Carlo standard errors;
  * the mode found by PyMC's optimiser (find_MAP, L-BFGS-B) on the model's log density under
    Dirichlet(λ + 1) (compute_map="find_map"): it may differ by the optimiser's tolerance only.

The MAP exists only where every n_kj + λ ≥ 1 (else the density is unbounded at the boundary of
the simplex), which λ + 1 ≥ 1 guarantees. Data: 300 scikit-learn digits, the counts of their
top 16 pixels, even against odd digits.

Run: python examples/map_vs_smoothing.py [--draws 2000] [--alpha 0.5]
"""

import argparse

import numpy as np
from sklearn.datasets import load_digits

import bayesgen


def add_lambda(X: np.ndarray, y: np.ndarray, lam: float) -> np.ndarray:
    """(n_kj + λ) / (n_k + V λ), one row per class in sorted label order."""
    counts = np.array([X[y == label].sum(axis=0) for label in np.unique(y)], dtype=float)
    return (counts + lam) / (counts.sum(axis=1, keepdims=True) + lam * X.shape[1])


def main(draws: int, lam: float) -> None:
    X, y = load_digits(return_X_y=True)
    X, y = X[:300, :16], y[:300] % 2  # a small two-class problem: even vs odd digits
    smoothed = add_lambda(X, y, lam)

    # The posterior mean under Dirichlet(λ), estimated by exact independent draws.
    mean_fit = bayesgen.MultinomialNB(
        alpha=lam, inference="conjugate", draws=draws, compute_map=False, random_seed=0
    ).fit(X, y)
    feature_prob = mean_fit.idata_["posterior"]["feature_prob"]
    n_draws = feature_prob.sizes["chain"] * feature_prob.sizes["draw"]
    draws_mean = feature_prob.mean(("chain", "draw")).values
    # Independent draws: the Monte Carlo standard error of a mean is SD / sqrt(draws).
    mcse = feature_prob.std(("chain", "draw")).values / np.sqrt(n_draws)
    mean_gap = np.abs(draws_mean - smoothed)
    print(
        f"add-{lam:g} vs the mean of {n_draws} exact posterior draws under Dirichlet({lam:g}): "
        f"max |diff| = {mean_gap.max():.2e}, at most {(mean_gap / mcse).max():.2f} Monte Carlo "
        f"standard errors over {mean_gap.size} probabilities (Monte Carlo error)"
    )

    # The MAP under Dirichlet(λ + 1), found numerically by PyMC's optimiser.
    map_fit = bayesgen.MultinomialNB(
        alpha=lam + 1,
        inference="conjugate",
        draws=10,
        prior_draws=0,
        compute_map="find_map",
        random_seed=0,
    ).fit(X, y)
    map_gap = np.abs(map_fit.map_["feature_prob"].values - smoothed)
    print(
        f"add-{lam:g} vs the MAP found by L-BFGS-B under Dirichlet({lam + 1:g}): "
        f"max |diff| = {map_gap.max():.2e}, max relative diff = {(map_gap / smoothed).max():.2e} "
        "(optimiser tolerance)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--draws",
        type=int,
        default=2000,
        help="exact posterior draws per chain for the mean (default: %(default)s)",
    )
    parser.add_argument(
        "--alpha",
        type=float,
        default=0.5,
        help="λ, the smoothing of add-λ; must be > 0 (default: %(default)s)",
    )
    options = parser.parse_args()
    if not options.alpha > 0:
        parser.error(f"--alpha: expected a number > 0; got {options.alpha}")
    main(options.draws, options.alpha)
