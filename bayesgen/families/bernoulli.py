"""Multivariate Bernoulli (set-of-words) naive Bayes.

π ~ Dirichlet(a), φ_jk ~ Beta(λ, λ), x_j | y = k ~ Bernoulli(φ_jk):

* ``feature_prob`` = P(x_j = 1 | y = k) = (N_jk + λ) / (N_k + 2λ), with N_jk the number of
  class-k samples where feature j is 1.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import numpy as np
import xarray as xr

from bayesgen import closed_form as cf
from bayesgen.data import TrainingData
from bayesgen.families.base import log
from bayesgen.families.naive_bayes import FeatureStatistics, NaiveBayesFamily

if TYPE_CHECKING:
    import pymc as pm


class BernoulliFamily(NaiveBayesFamily):
    """Bernoulli naive Bayes: 0/1 features (or any numbers with ``binarize``)."""

    name = "bernoulli_nb"
    estimator = "BernoulliNB"
    cli_name = "bernoulli"
    feature_kind = "binary"
    top_parameter_label = "P(feature present | class)"
    parameters: ClassVar[dict[str, tuple[str, ...]]] = {
        "class_prob": ("class",),
        "feature_prob": ("class", "feature"),
    }
    statistics: ClassVar[dict[str, tuple[str, ...]]] = {
        "class_count": ("class",),
        "feature_count": ("class", "feature"),
    }

    def feature_statistics(self, data: TrainingData, class_count: np.ndarray) -> FeatureStatistics:
        # For binary X the column sums count the samples containing each feature.
        return FeatureStatistics(
            dims=("class", "feature"),
            counts=cf.feature_counts(data.X, data.y, len(data.classes)),
            totals=class_count[:, None],
            n_outcomes=2,
        )

    def plug_in_log_joint(self, estimates: xr.Dataset, X) -> tuple[np.ndarray, np.ndarray | None]:
        class_order, log_class = self.class_log_terms(estimates)
        alpha, counts = estimates.attrs["alpha"], estimates["feature_count"].values
        class_count = estimates["class_count"].values
        total = class_count[:, None]
        order1, log_p = cf.log_prob_terms(counts, total, alpha, 2)
        order0, log_q = cf.log_prob_terms(total - counts, total, alpha, 2)
        joint = cf.bernoulli_log_likelihood(X, log_class, log_p, log_q)
        order_x = cf.linear_in_x(X, order1 - order0) + order0.sum(axis=-1) + class_order
        return joint, (order_x if np.any(order_x) else None)

    def concentrations(
        self, estimates: xr.Dataset, *, posterior: bool
    ) -> tuple[tuple[str, ...], np.ndarray, bool]:
        weight = 1.0 if posterior else 0.0  # the prior is the posterior given zero counts
        counts = weight * estimates["feature_count"].values
        alpha = estimates.attrs["alpha"]
        dims = tuple(estimates["feature_count"].dims)
        absent = weight * estimates["class_count"].values[:, None] - counts
        return dims, np.stack([alpha + counts, alpha + absent], axis=-1), True

    def pymc_model(self, estimates: xr.Dataset) -> pm.Model:
        """Multivariate Bernoulli (set-of-words) naive Bayes.

        π ~ Dirichlet(a), φ_jk ~ Beta(λ, λ); N_jk of the N_k class-k samples have feature j.
        """
        import pymc as pm
        import pytensor.tensor as pt

        from bayesgen.generative import class_prob_prior, model_coords, positive_priors

        alpha, class_alpha = positive_priors(estimates)
        with pm.Model(coords=model_coords(estimates)) as model:
            class_count, _ = class_prob_prior(estimates, class_alpha)
            present = pm.Data(
                "feature_count", estimates["feature_count"].values, dims=("class", "feature")
            )
            alpha = pm.Data("alpha", alpha)
            prob = pm.Beta("feature_prob", alpha=alpha, beta=alpha, dims=("class", "feature"))
            absent = class_count[:, None] - present
            pm.Potential(
                "feature_loglik", pt.sum(present * pt.log(prob) + absent * pt.log1p(-prob))
            )
        return model

    def draw_log_joint(self, estimates: xr.Dataset, X, draws: xr.Dataset) -> np.ndarray:
        prob = draws["feature_prob"].values.astype(np.float64)
        return cf.bernoulli_log_likelihood(
            X, log(draws["class_prob"].values), log(prob), log(1.0 - prob)
        )

    def feature_moments(self, estimates: xr.Dataset, alpha: float) -> dict:
        """φ_jk | data ~ Beta(N_jk + λ, N_k − N_jk + λ): the pair (present, absent) is a
        two-outcome simplex whose first component is φ; a Beta without a mode has none for
        either outcome."""
        from bayesgen.checks_expected import dirichlet_kurtosis, dirichlet_sd, simplex_mode

        counts = estimates["feature_count"].values.astype(np.float64)
        class_count = estimates["class_count"].values.astype(np.float64)
        pair = np.stack([counts, class_count[:, None] - counts], axis=-1)
        mode, status = simplex_mode(pair, alpha)
        return {
            "keep": np.ones(counts.shape, dtype=bool),
            "closed_form": cf.add_lambda(counts, class_count[:, None], alpha, 2),
            "closed_form_sd": dirichlet_sd(pair + alpha)[..., 0],
            "closed_form_kurtosis": dirichlet_kurtosis(pair + alpha)[..., 0],
            "expected_map": mode[..., 0],
            "status": status.max(axis=-1),
            "beta": True,
        }


FAMILY = BernoulliFamily()
