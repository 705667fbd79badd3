"""What the three naive Bayes estimators share beyond :class:`GenerativeClassifier`.

Their smoothing λ (``alpha``) and class prior (``class_alpha``) are numbers, or "evidence"
(chosen by maximising the evidence, :mod:`bayesgen.inference.smoothing`), or λ has a Gamma
hyperprior
(``alpha_prior``, :mod:`bayesgen.families.hyperprior`); the prior mean of ``feature_prob``
(``prior_mean``) is uniform (add-λ), pooled over the classes, or given; and their parameters
integrate out exactly, so they also offer the exact posterior predictive.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import xarray as xr

from bayesgen import closed_form as cf
from bayesgen.estimators.classifier import GenerativeClassifier
from bayesgen.estimators.feature_relevance import FeatureRelevanceMixin
from bayesgen.families import hyperprior
from bayesgen.inference import smoothing
from bayesgen.input.alpha import GammaPrior
from bayesgen.input.params import (
    CLASS_SMOOTHING,
    EVIDENCE,
    EVIDENCE_PER_CLASS,
    PRIOR_MEAN,
    SMOOTHING,
    is_class_mapping,
    is_real,
)


class NaiveBayesClassifier(FeatureRelevanceMixin, GenerativeClassifier):
    _parameter_rules: ClassVar[dict] = {
        "alpha": CLASS_SMOOTHING,
        "class_alpha": SMOOTHING,
        "alpha_prior": GammaPrior("alpha_prior"),
        "prior_mean": PRIOR_MEAN,
    }

    def _validate_params(self) -> None:
        super()._validate_params()
        # With a hyperprior λ is learned: a fixed or evidence-chosen alpha beside it would be
        # silently ignored, so it must stay at its default.
        if self.alpha_prior is not None and not (is_real(self.alpha) and self.alpha == 1.0):
            raise ValueError(
                "alpha: leave it at its default 1.0 when alpha_prior is given (λ then has the "
                f"Gamma{tuple(self.alpha_prior)!r} hyperprior and is learned); got "
                f"{self.alpha!r}."
            )

    def _estimates(self, statistics: xr.Dataset) -> xr.Dataset:
        """The closed form at ``alpha`` and ``class_alpha``, those set to "evidence" first
        chosen by maximising the evidence of the statistics
        (:mod:`bayesgen.inference.smoothing`)."""
        chosen = {"alpha": self.alpha, "class_alpha": self.class_alpha}
        if is_class_mapping(self.alpha):  # {class label: λ}: λ_k in the order of the classes
            chosen["alpha"] = cf.check_class_smoothing(
                self.alpha, statistics["class"].values, "alpha"
            )
        evidence = [name for name, value in chosen.items() if _is_evidence(value)]
        bayes_factor = None
        if evidence:
            # The counts do not depend on the smoothing: any λ serves to hold them.
            provisional = {
                name: 1.0 if name in evidence else value for name, value in chosen.items()
            }
            stats = self._family.from_statistics(
                statistics, prior_mean=self.prior_mean, **provisional
            )
            if isinstance(self.alpha, str) and self.alpha == EVIDENCE_PER_CLASS:
                chosen["alpha"], bayes_factor = smoothing.evidence_alpha_where_supported(stats)
            elif "alpha" in evidence:
                chosen["alpha"] = smoothing.evidence_alpha(stats)
            if "class_alpha" in evidence:
                chosen["class_alpha"] = smoothing.evidence_class_alpha(stats)
        estimates = self._family.from_statistics(statistics, prior_mean=self.prior_mean, **chosen)
        if bayes_factor is not None:
            estimates.attrs["alpha_log_bayes_factor"] = bayes_factor
        return self._with_alpha_prior(estimates)

    def _with_alpha_prior(self, stats: xr.Dataset) -> xr.Dataset:
        """The closed form under the Gamma hyperprior ``alpha_prior`` on λ, where one is given
        (:mod:`bayesgen.families.hyperprior`)."""
        if self.alpha_prior is None:
            return stats
        return hyperprior.with_alpha_prior(self._family, stats, self.alpha_prior)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # As scikit-learn's naive Bayes: the independence assumption costs accuracy on the
        # correlated features of its generic test data.
        tags.classifier_tags.poor_score = True
        return tags

    def posterior_predictive_proba(self, X) -> np.ndarray:
        """Exact Bayesian posterior predictive p(y | x, data), parameters integrated out.

        Dirichlet-multinomial for the multinomial model; for Bernoulli and categorical models
        it equals the add-λ plug-in (see
        :func:`bayesgen.closed_form.posterior_predictive_proba`). Differs from
        :meth:`predict_proba`, which averages the plug-in p(y | x, θ) over posterior draws.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
            Rows with the columns of the fit (the same vectorizer for text).
        """
        self.check_fitted()
        self._check_n_features(X)
        return cf.posterior_predictive_proba(self.closed_form_, X)

    def _set_point_attributes(self, means: xr.Dataset) -> None:
        # λ as fitted: alpha, or the one the evidence chose (scikit-learn users expect a
        # fitted attribute either way).
        alpha = self.closed_form_.attrs["alpha"]  # one λ, or one per class
        self.alpha_ = float(alpha) if np.ndim(alpha) == 0 else np.array(alpha, dtype=np.float64)
        self.prior_mean_ = self._family.prior_mean(self.closed_form_)
        self.feature_count_ = self.closed_form_["feature_count"].values
        with np.errstate(divide="ignore"):
            self.feature_log_prob_ = np.log(means["feature_prob"].values)


def _is_evidence(value) -> bool:
    return isinstance(value, str) and value in (EVIDENCE, EVIDENCE_PER_CLASS)
