"""Naive Bayes' side of the comparison: what its posterior summaries and draws must equal.

π ~ Dirichlet(a) and ``feature_prob`` ~ Dirichlet(λ w) (Beta for a Bernoulli feature) are
conjugate, so

* each posterior mean is add-λ, each SD and mode the Dirichlet's (the block's
  ``feature_moments`` gives them in its layout; :func:`~bayesgen.families.expected.simplex_block`
  makes the :class:`~bayesgen.families.expected.Expected`);
* Σ log π and Σ log θ of each whole draw have an exact law
  (:mod:`bayesgen.maths.joint_statistics`);
* under a Gamma hyperprior on λ the moments are mixtures over p(λ | D), and Σ log θ is taken
  given each draw's own λ (:mod:`bayesgen.families.hyperprior`).

The functions take the block (a :class:`~bayesgen.families.naive_bayes.NaiveBayesFamily`),
whose methods of the same names call them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import xarray as xr

import bayesgen.families.hyperprior as hyperprior
import bayesgen.maths.joint_statistics as joint
from bayesgen.families.class_prior import CLASS_PRIOR
from bayesgen.families.expected import Expected, simplex_block

if TYPE_CHECKING:
    from bayesgen.families.naive_bayes import NaiveBayesFamily

#: Most ψ evaluations (cells × draws) for the hyperprior's per-draw joint statistic.
JOINT_BUDGET = 50_000_000


def naive_bayes_expected(
    model_family: NaiveBayesFamily,
    estimates: xr.Dataset,
    alpha: float | hyperprior.AlphaPosterior,
    class_alpha: float,
) -> list[Expected]:
    """π under Dirichlet(a) and ``feature_prob`` under Dirichlet(λ) (Beta(λ, λ)); with
    ``alpha`` a :class:`~bayesgen.families.hyperprior.AlphaPosterior` (a Gamma hyperprior on λ),
    θ's moments mixed over p(λ | D) and a block for λ itself."""
    if isinstance(alpha, hyperprior.AlphaPosterior):  # λ ~ Gamma: mixtures over p(λ | D)
        return hyperprior.expected_blocks(model_family, estimates, alpha, class_alpha)
    return [
        CLASS_PRIOR.expected(estimates, class_alpha),
        feature_expected(model_family, estimates, alpha),
    ]


def feature_expected(model_family: NaiveBayesFamily, estimates: xr.Dataset, alpha) -> Expected:
    """The :class:`~bayesgen.families.expected.Expected` of ``feature_prob`` under λ =
    ``alpha``, from the block's ``feature_moments``."""
    return simplex_block(
        "feature_prob",
        alpha=alpha,
        mle=estimates["feature_prob_mle"].values.astype(np.float64),
        shared_mean="prior_weight" in estimates,
        **model_family.feature_moments(estimates, alpha),
    )


def naive_bayes_joint_statistics(
    model_family: NaiveBayesFamily,
    estimates: xr.Dataset,
    posterior: xr.Dataset,
    *,
    alpha,
    class_alpha: float,
    budget: int = JOINT_BUDGET,
) -> list:
    """Σ log π and Σ log θ of each draw under their exact Dirichlet (Beta) law; under a
    hyperprior on λ, Σ log θ given each draw's own λ, where it costs at most ``budget`` ψ
    evaluations (see :mod:`bayesgen.maths.joint_statistics`)."""
    class_prob = posterior["class_prob"].values
    statistics = [CLASS_PRIOR.statistic(estimates, posterior, class_alpha)]
    draws = posterior["feature_prob"].values
    if model_family.concentrations(estimates, posterior=True)[2]:  # a Beta pair: (φ, 1 − φ)
        draws = np.stack([draws, 1.0 - draws], axis=-1)
    if isinstance(alpha, hyperprior.AlphaPosterior):
        if "alpha" not in posterior:
            return statistics
        one = _concentration_at(model_family, estimates, 1.0)
        per_lambda = _concentration_at(model_family, estimates, 2.0) - one
        if one.size * class_prob.shape[0] * class_prob.shape[1] > budget:
            return statistics
        statistics.append(
            joint.conditional_statistic(
                "Σ log feature_prob given λ",
                "feature_prob",
                draws,
                one - per_lambda,
                per_lambda,
                posterior["alpha"].values,
            )
        )
        return statistics
    statistics.append(
        joint.fixed_statistic(
            "Σ log feature_prob",
            "feature_prob",
            draws,
            _concentration_at(model_family, estimates, alpha),
        )
    )
    return statistics


def _concentration_at(model_family: NaiveBayesFamily, estimates: xr.Dataset, alpha) -> np.ndarray:
    """The posterior concentration of ``feature_prob`` with λ = ``alpha``."""
    at = estimates.copy()
    at.attrs = {**estimates.attrs, "alpha": alpha}
    return model_family.concentrations(at, posterior=True)[1]


__all__ = [
    "JOINT_BUDGET",
    "feature_expected",
    "naive_bayes_expected",
    "naive_bayes_joint_statistics",
]
