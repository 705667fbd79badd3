"""The Dirichlet compound multinomial (Pólya) naive Bayes estimator,
:class:`DirichletMultinomialNB`, and the rules of its priors.

The model is :mod:`bayesgen.families.dcm`; fitting, prediction, saving and the checks are
those every estimator shares (:class:`~bayesgen.estimators.classifier.GenerativeClassifier`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from bayesgen.estimators.classifier import GenerativeClassifier
from bayesgen.estimators.feature_relevance import FeatureRelevanceMixin
from bayesgen.families.dcm import FAMILY, FLAT, PRIOR_MEANS
from bayesgen.input.alpha import GammaPrior
from bayesgen.input.params import (
    INFERENCE_PARAMS_DOC,
    FitMismatch,
    FitRecord,
    Options,
    Rule,
    is_real,
)
from bayesgen.maths.likelihood import normalize_log_proba

__all__ = ["ConcentrationPrior", "DirichletMultinomialNB", "MeanPriorStrength"]


@dataclass(frozen=True)
class ConcentrationPrior(GammaPrior):
    """The rule of ``concentration_prior``: None (Gamma(1, 1 / V)), "flat" or a pair
    (shape, rate) with shape ≥ 1 and rate > 0, recorded as attrs
    ``concentration_prior_shape`` and ``concentration_prior_rate``.

    Examples
    --------
    >>> from bayesgen.estimators.dcm import ConcentrationPrior
    >>> ConcentrationPrior().error("flat") is None, ConcentrationPrior().error((0.5, 1.0))
    (True, <class 'ValueError'>)
    """

    recorded_as: str = "concentration_prior"
    expected = f"None, {FLAT!r} or a pair (shape, rate) with shape >= 1 and rate > 0"

    def error(self, value) -> type[Exception] | None:
        if isinstance(value, str):
            return None if value == FLAT else ValueError
        if value is None:
            return None
        if not isinstance(value, tuple | list) or not all(is_real(v) for v in value):
            return TypeError
        if len(value) != 2 or not (np.isfinite(value[0]) and np.isfinite(value[1])):
            return ValueError
        return None if value[0] >= 1 and value[1] > 0 else ValueError

    def decode(self, name: str, stored, record: FitRecord):
        if isinstance(stored, str) and stored == FLAT:
            if float(record.attrs.get("concentration_prior_rate", -1.0)) != 0.0:
                raise FitMismatch(None)
            return stored
        return super().decode(name, stored, record)


@dataclass(frozen=True)
class MeanPriorStrength(Rule):
    """The rule of ``mean_prior_strength``: None (V) or a finite number ≥ 0 (0: flat).

    Examples
    --------
    >>> from bayesgen.estimators.dcm import MeanPriorStrength
    >>> MeanPriorStrength().error(0.0) is None, MeanPriorStrength().error(-1.0)
    (True, <class 'ValueError'>)
    """

    expected = "None or a finite number >= 0"

    def error(self, value) -> type[Exception] | None:
        if value is None:
            return None
        if not is_real(value):
            return TypeError
        return None if np.isfinite(value) and value >= 0 else ValueError


class DirichletMultinomialNB(FeatureRelevanceMixin, GenerativeClassifier):
    __doc__ = (
        """Bayesian Dirichlet compound multinomial (Pólya) naive Bayes for bursty text.

    π ~ Dirichlet(class_alpha); a document of class k draws its own word distribution
    θ ~ Dirichlet(s_k m_k), then its tokens from θ: x ~ DirMult(n, s_k m_k). A small
    concentration s_k makes words bursty (a word seen once in a document is likely seen
    again); s → ∞ is the multinomial model. s_k ~ Gamma and m_k ~ Dirichlet(1 + λ f) around
    the pooled word frequencies f; the posterior of (s, m) is sampled by NUTS on the count
    histograms (the cost grows with the distinct count levels, not the documents), and the
    closed form holds its mode, found by Newton's method. See :mod:`bayesgen.families.dcm` and
    docs/dcm.md.

    Parameters
    ----------
    class_alpha : float, default 1.0
        Dirichlet concentration a > 0 of the class probabilities.
    prior_mean : {"per_class", "pooled"}, default "per_class"
        "per_class": each class its own mean m_k. "pooled": one m for every class, so the
        classes differ only in their concentration s_k.
    concentration_prior : (shape, rate), "flat" or None, default None
        Gamma(shape, rate) on every s_k (shape ≥ 1, so a mode exists; rate > 0). None:
        Gamma(1, 1 / V), an exponential with mean V (the vocabulary size). "flat": p(s) ∝ 1,
        under which (with ``mean_prior_strength=0``) the MAP is the evidence maximiser.
    mean_prior_strength : float or None, default None
        λ ≥ 0 of m_k ~ Dirichlet(1 + λ f), f the pooled add-½ word frequencies (the prior's
        mode); None: λ = V. 0: flat.
"""
        + INFERENCE_PARAMS_DOC.replace(
            '"conjugate": the',
            '"conjugate" is refused here ((s, m) have no conjugate prior); elsewhere it is the',
            1,
        )
        + """
    Attributes
    ----------
    classes_, n_features_in_, feature_names_in_
        As in scikit-learn.
    idata_, map_
        As in :class:`~bayesgen.MultinomialNB` (NUTS draws; ``map_`` by ``find_MAP``).
    closed_form_ : xarray.Dataset
        The histograms, ``class_prob``, the point fit ``concentration`` and ``feature_mean``
        (the posterior mode) and the flat-prior evidence maximiser (``*_mle``).
    class_count_ : ndarray of shape (n_classes,)
    concentration_ : ndarray of shape (n_classes,)
        Posterior means of s_k.
    feature_mean_ : ndarray of shape (n_classes, n_features)
        Posterior means of m_k.
    class_log_prior_ : ndarray of shape (n_classes,)

    Examples
    --------
    Bursty documents: each class repeats its words within a document.

    >>> import numpy as np
    >>> from bayesgen import DirichletMultinomialNB
    >>> rng = np.random.default_rng(0)
    >>> alpha = np.array([[2.0, 2.0, 0.2, 0.2], [0.2, 0.2, 2.0, 2.0]])
    >>> y = np.repeat([0, 1], 15)
    >>> X = np.array([rng.multinomial(20, rng.dirichlet(alpha[k])) for k in y])
    >>> est = DirichletMultinomialNB(draws=500, tune=500, chains=2, random_seed=0)
    >>> est.fit(X, y).predict([[9, 8, 1, 0], [0, 1, 10, 7]]).tolist()  # doctest: +SKIP
    [0, 1]

    The point fit (the posterior mode, by Newton's method) needs no sampling:

    >>> fit = est.model_.fit(X, y)
    >>> fit["concentration"].values.round(1).tolist()
    [6.1, 7.6]
    >>> fit["feature_mean"].values.round(2).tolist()
    [[0.46, 0.47, 0.05, 0.03], [0.07, 0.06, 0.55, 0.32]]
    """
    )

    _family = FAMILY
    _parameter_rules: ClassVar[dict] = {
        "prior_mean": Options(PRIOR_MEANS),
        "concentration_prior": ConcentrationPrior(),
        "mean_prior_strength": MeanPriorStrength(),
    }

    def __init__(
        self,
        class_alpha=1.0,
        *,
        prior_mean="per_class",
        concentration_prior=None,
        mean_prior_strength=None,
        inference="nuts",
        draws=1000,
        tune=1000,
        chains=4,
        cores=None,
        random_seed=None,
        nuts_sampler="pymc",
        target_accept=0.9,
        compute_map=True,
        prior_draws=500,
        dtype="float64",
        progressbar="auto",
    ):
        self.class_alpha = class_alpha
        self.prior_mean = prior_mean
        self.concentration_prior = concentration_prior
        self.mean_prior_strength = mean_prior_strength
        self.inference = inference
        self.draws = draws
        self.tune = tune
        self.chains = chains
        self.cores = cores
        self.random_seed = random_seed
        self.nuts_sampler = nuts_sampler
        self.target_accept = target_accept
        self.compute_map = compute_map
        self.prior_draws = prior_draws
        self.dtype = dtype
        self.progressbar = progressbar

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True  # counts
        tags.classifier_tags.poor_score = True
        return tags

    def _prior_options(self) -> dict:
        return {
            "class_alpha": self.class_alpha,
            "prior_mean": self.prior_mean,
            "concentration_prior": self.concentration_prior,
            "mean_prior_strength": self.mean_prior_strength,
        }

    def _check_conjugate(self) -> None:
        """(s, m) have no conjugate prior: there are no exact draws to make."""
        raise ValueError(
            "inference: the Dirichlet compound multinomial has no conjugate posterior (its "
            "concentration and mean are sampled by NUTS); use inference='nuts'."
        )

    def point_proba(self, X) -> np.ndarray:
        """p(y | x) at the point fit α̂ (the posterior mode), θ integrated out given it:
        no draws needed.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Counts, with the columns of the fit.
        """
        self.check_fitted()
        self._check_n_features(X)
        X = self._family.prediction_features(self.closed_form_, X)
        return normalize_log_proba(self._family.predictive_log_joint(self.closed_form_, X))

    def _set_point_attributes(self, means) -> None:
        self.concentration_ = means["concentration"].values
        self.feature_mean_ = means["feature_mean"].values
