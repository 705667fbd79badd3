"""Compare the MAP with closed-form smoothing: add-λ is the posterior mean under Dirichlet(λ)
and the MAP under Dirichlet(λ + 1); the MLE is the MAP under Dirichlet(1).

Run: python examples/map_vs_smoothing.py [--draws 2000]
"""

import argparse

import numpy as np
from sklearn.datasets import load_digits

import bayesgen
from bayesgen import closed_form as cf


def main(draws: int) -> None:
    X, y = load_digits(return_X_y=True)
    X, y = X[:300, :16], y[:300] % 2  # a small two-class problem: even vs odd digits
    lam = 0.5
    # Posterior mean under Dirichlet(λ) = add-λ.
    mean_fit = bayesgen.MultinomialNB(
        alpha=lam, inference="conjugate", draws=draws, compute_map=False, random_seed=0
    ).fit(X, y)
    # MAP under Dirichlet(λ + 1) = add-λ (the exact mode of the conjugate posterior).
    map_fit = bayesgen.MultinomialNB(
        alpha=lam + 1, inference="conjugate", draws=100, random_seed=0
    ).fit(X, y)
    add_lambda = cf.multinomial_nb(X, y, alpha=lam)["feature_prob"].values
    posterior_mean = mean_fit.posterior_mean()["feature_prob"].values
    map_point = map_fit.map_["feature_prob"].values
    print(
        f"add-{lam} vs posterior mean under Dirichlet({lam}):  "
        f"max |diff| = {np.abs(posterior_mean - add_lambda).max():.2e} (Monte Carlo error)"
    )
    print(
        f"add-{lam} vs MAP under Dirichlet({lam + 1}):        "
        f"max |diff| = {np.abs(map_point - add_lambda).max():.2e} (optimizer tolerance)"
    )
    print()
    print(bayesgen.compare(mean_fit))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--draws", type=int, default=2000)
    main(parser.parse_args().draws)
