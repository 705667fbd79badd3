"""Multinomial (bag-of-words) naive Bayes.

π ~ Dirichlet(a), θ_k ~ Dirichlet(λ) over the vocabulary for each class, and the words of a
document of class k are multinomial draws from θ_k:

* ``feature_prob`` = (N_kw + λ) / (N_k + V λ),    N_k = tokens in class k
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import numpy as np
import scipy.sparse as sp
import xarray as xr
from scipy.special import gammaln

from bayesgen import closed_form as cf
from bayesgen.data import TrainingData
from bayesgen.families.base import log
from bayesgen.families.naive_bayes import FeatureStatistics, NaiveBayesFamily

if TYPE_CHECKING:
    import pymc as pm


class MultinomialFamily(NaiveBayesFamily):
    """Multinomial naive Bayes: word counts (or TF-IDF weights) per class."""

    name = "multinomial_nb"
    estimator = "MultinomialNB"
    cli_name = "multinomial"
    feature_kind = "count"
    top_parameter_label = "P(word | class)"
    parameters: ClassVar[dict[str, tuple[str, ...]]] = {
        "class_prob": ("class",),
        "feature_prob": ("class", "feature"),
    }
    statistics: ClassVar[dict[str, tuple[str, ...]]] = {
        "class_count": ("class",),
        "feature_count": ("class", "feature"),
    }

    def feature_statistics(self, data: TrainingData, class_count: np.ndarray) -> FeatureStatistics:
        counts = cf.feature_counts(data.X, data.y, len(data.classes))
        return FeatureStatistics(
            dims=("class", "feature"),
            counts=counts,
            totals=counts.sum(axis=1, keepdims=True),
            n_outcomes=data.n_features,
        )

    def plug_in_log_joint(self, estimates: xr.Dataset, X) -> tuple[np.ndarray, np.ndarray | None]:
        class_order, log_class = self.class_log_terms(estimates)
        alpha, counts = estimates.attrs["alpha"], estimates["feature_count"].values
        total = counts.sum(axis=1, keepdims=True)
        order, log_p = cf.log_prob_terms(counts, total, alpha, counts.shape[1])
        joint = cf.multinomial_log_likelihood(X, log_class, log_p)
        order_x = cf.linear_in_x(X, order) + class_order[None, :]
        return joint, (order_x if np.any(order_x) else None)

    def integrated_log_joint(self, estimates: xr.Dataset, X) -> np.ndarray:
        """The Dirichlet-multinomial p(x | k, data) ∝ Γ(A_k) / Γ(A_k + L) ·
        Π_w Γ(a_kw + x_w) / Γ(a_kw), with a_kw = N_kw + λ, A_k = Σ_w a_kw and L = Σ_w x_w.

        For a one-word document this equals the add-λ plug-in; for longer documents it is less
        confident, because repeated words are more likely under uncertainty about θ.
        """
        concentration = estimates["feature_count"].values + estimates.attrs["alpha"]
        total = concentration.sum(axis=1)
        doc_length = np.asarray(X.sum(axis=1)).ravel()
        with np.errstate(over="ignore", invalid="ignore"):  # refused by normalize_log_proba
            return (
                gammaln(total)[None, :]
                - gammaln(total[None, :] + doc_length[:, None])
                + _dirichlet_multinomial_word_terms(X, concentration)
                + np.log(estimates["class_prob"].values)[None, :]
            )

    def concentrations(
        self, estimates: xr.Dataset, *, posterior: bool
    ) -> tuple[tuple[str, ...], np.ndarray, bool]:
        weight = 1.0 if posterior else 0.0  # the prior is the posterior given zero counts
        counts = weight * estimates["feature_count"].values
        dims = tuple(estimates["feature_count"].dims)
        return dims, estimates.attrs["alpha"] + counts, False

    def pymc_model(self, estimates: xr.Dataset) -> pm.Model:
        """Multinomial (bag-of-words) naive Bayes.

        π ~ Dirichlet(a), θ_k ~ Dirichlet(λ) over the vocabulary for each class, with
        a = ``class_alpha`` and λ = ``alpha`` from ``estimates.attrs``; likelihood of the class
        counts N_k and word counts N_kw, through the Gamma-Poisson form of the Dirichlet (see
        :mod:`bayesgen.generative`).
        """
        import pymc as pm

        from bayesgen.generative import (
            class_prob_prior,
            gamma_poisson_rates,
            model_coords,
            positive_priors,
        )

        alpha, class_alpha = positive_priors(estimates)
        with pm.Model(coords=model_coords(estimates)) as model:
            class_prob_prior(estimates, class_alpha)
            rate = gamma_poisson_rates(
                "feature", estimates["feature_count"].values, alpha, dims=("class", "feature")
            )
            pm.Deterministic(
                "feature_prob", rate / rate.sum(axis=-1, keepdims=True), dims=("class", "feature")
            )
        return model

    def draw_log_joint(self, estimates: xr.Dataset, X, draws: xr.Dataset) -> np.ndarray:
        return cf.multinomial_log_likelihood(
            X, log(draws["class_prob"].values), log(draws["feature_prob"].values)
        )

    def feature_moments(self, estimates: xr.Dataset, alpha: float) -> dict:
        """θ_k | data ~ Dirichlet(N_kw + λ) over the vocabulary."""
        from bayesgen.checks_expected import dirichlet_kurtosis, dirichlet_sd, simplex_mode

        counts = estimates["feature_count"].values.astype(np.float64)
        mode, status = simplex_mode(counts, alpha)
        return {
            "keep": np.ones(counts.shape, dtype=bool),
            "closed_form": cf.add_lambda(
                counts, counts.sum(axis=1, keepdims=True), alpha, counts.shape[1]
            ),
            "closed_form_sd": dirichlet_sd(counts + alpha),
            "closed_form_kurtosis": dirichlet_kurtosis(counts + alpha),
            "expected_map": mode,
            "status": status,
        }


def _dirichlet_multinomial_word_terms(X, concentration: np.ndarray) -> np.ndarray:
    """Σ_w [log Γ(a_kw + x_w) - log Γ(a_kw)] for every row; only non-zero x_w contribute."""
    X = sp.csr_array(X)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    a = concentration[:, X.indices]  # (K, nnz)
    terms = gammaln(a + X.data) - gammaln(a)
    out = np.zeros((X.shape[0], concentration.shape[0]))
    np.add.at(out, rows, terms.T)
    return out


FAMILY = MultinomialFamily()
