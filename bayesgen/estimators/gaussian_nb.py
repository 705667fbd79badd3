"""The Gaussian naive Bayes estimator, :class:`GaussianNB`: the block
:mod:`bayesgen.families.gaussian_nb` with its parameters and fitted attributes; fitting,
prediction and saving are shared (:class:`bayesgen.estimators.classifier.GenerativeClassifier`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import xarray as xr

from bayesgen.estimators.classifier import GenerativeClassifier
from bayesgen.estimators.feature_relevance import FeatureRelevanceMixin
from bayesgen.families.gaussian_nb import EVIDENCE, FAMILY
from bayesgen.inference.smoothing import EvidenceBoundaryWarning
from bayesgen.input.params import INFERENCE_PARAMS_DOC, FitMismatch, FitRecord, InstanceOf
from bayesgen.maths.likelihood import normalize_log_proba
from bayesgen.maths.normal_inverse_gamma import DEFAULT_PRIOR, NormalInverseGamma

__all__ = ["GaussianNB", "NormalInverseGamma", "PriorOrEvidence"]

#: bayesgen's own files, skipped so that a warning points at the user's call.
_PACKAGE = str(Path(__file__).parents[1])


@dataclass(frozen=True)
class PriorOrEvidence(InstanceOf):
    """The rule of ``prior``: None, "evidence" or a :class:`NormalInverseGamma`; a model file
    stores "evidence" as it is (the closed form holds the prior the evidence chose) and a
    prior by its fields.

    Examples
    --------
    >>> from bayesgen.estimators.gaussian_nb import GaussianNB
    >>> from bayesgen.input.params import check_param
    >>> rule = GaussianNB.parameter_rules()["prior"]
    >>> check_param("prior", "evidence", rule)
    >>> check_param("prior", "evidense", rule)
    Traceback (most recent call last):
        ...
    ValueError: prior: expected None, 'evidence' or a bayesgen NormalInverseGamma; got 'evidense'.
    """

    cls: type = NormalInverseGamma
    description: str = "a bayesgen NormalInverseGamma"

    @property
    def expected(self) -> str:
        return f"None, {EVIDENCE!r} or {self.description}"

    def error(self, value) -> type[Exception] | None:
        if isinstance(value, str):
            return None if value == EVIDENCE else ValueError
        return super().error(value)

    def decode(self, name: str, stored, record: FitRecord):
        if isinstance(stored, str) and stored == EVIDENCE:
            # The closed form holds the prior the evidence chose; it must say it chose it.
            if record.attrs.get("prior_strength") != EVIDENCE:
                raise FitMismatch(None)
            return stored
        return super().decode(name, stored, record)


class GaussianNB(FeatureRelevanceMixin, GenerativeClassifier):
    __doc__ = (
        """Bayesian Gaussian naive Bayes: x_j | y = k ~ N(μ_kj, σ²_kj), one normal per class and
    feature.

    π ~ Dirichlet(class_alpha) and, for every class k and feature j, the conjugate
    normal–inverse-gamma prior σ²_kj ~ Inv-Gamma(a₀, b₀_j), μ_kj | σ²_kj ~ N(m₀_j, σ²_kj / κ₀).
    Its posterior is exact (``inference="conjugate"`` draws it without compiling anything), and
    so are the Student-t predictive (:meth:`posterior_predictive_proba`), the evidence and
    leave-one-out. The maximum-likelihood estimates (``closed_form_["mu_mle"]``,
    ``closed_form_["var_mle"]``) are scikit-learn's ``GaussianNB(var_smoothing=0)``
    ``theta_`` and ``var_``; the prior takes the place of ``var_smoothing``.

    Missing entries (NaN, None or ``<NA>`` in X) are integrated out, missing at random: in
    ``fit`` each cell (class, feature) is updated by the rows of its class where the feature
    is observed, with their count n_kj (``closed_form_["cell_count"]``) in place of N_k, and
    the default prior's overall moments are those of the observed entries; every closed form,
    the evidence, leave-one-out, the PyMC model and the simulations (which keep the rows'
    missing entries) hold per cell. In :meth:`predict_proba`,
    :meth:`posterior_predictive_proba` and the intervals a missing feature's factor drops
    out: a row with every feature missing gets the class probabilities alone. Data without
    a missing entry fit exactly as before (no ``cell_count``).

    Parameters
    ----------
    class_alpha : float, default 1.0
        Dirichlet concentration of the class probabilities.
    prior : NormalInverseGamma, "evidence" or None, default None
        Hyperparameters (m₀, κ₀, a₀, b₀) of every cell; None:
        :class:`~bayesgen.maths.normal_inverse_gamma.NormalInverseGamma()`, weak and centred on
        the data (m₀ the overall mean and b₀ = (a₀ − 1) s² with s² the overall variance of each
        feature, κ₀ = 0.01, a₀ = 1.5; see its docstring). A feature constant over all rows is
        then refused: give the prior's ``scale``, or drop it.

        "evidence": the data choose the prior's strength, the answer to scikit-learn's
        ``var_smoothing``. m₀ is the overall mean and b₀_j = a₀ r s²_j, as in the default,
        and the three numbers κ₀ (how strongly the class means pool towards m₀), a₀ (how
        strongly each feature's class variances pool, worth 2 a₀ observations) and r (where
        they pool to: b₀ / a₀, the prior's harmonic-mean variance, is r s²_j) are those that
        maximise the evidence Σ_kj log p(column j of class k's rows | prior), one of each for all
        features (:func:`bayesgen.maths.prior_strength.normal_inverse_gamma_strength`).
        Many classes with close means give a large κ₀, classes far apart a small one. The
        search reads the statistics only, so ``partial_fit`` and Dask choose as one fit
        does; ``prior_`` and the closed form hold the prior chosen, and a model file
        reproduces the fit. Where the evidence still increases at a bound of the search
        (κ₀ or a₀ up to 1e6, as when every class has the same variance) the fit takes the
        bound with an :class:`~bayesgen.inference.smoothing.EvidenceBoundaryWarning`."""
        + INFERENCE_PARAMS_DOC
        + """
    Attributes
    ----------
    classes_, n_features_in_, feature_names_in_, class_count_
        As in scikit-learn.
    theta_ : ndarray of shape (n_classes, n_features)
        Posterior means of μ_kj (scikit-learn's name for the class means).
    var_ : ndarray of shape (n_classes, n_features)
        Posterior means of σ²_kj.
    class_prior_ : ndarray of shape (n_classes,)
        Posterior means of π.
    idata_, posterior_, map_
        As in :class:`~bayesgen.estimators.models.MultinomialNB`.
    closed_form_ : xarray.Dataset
        The statistics (``class_count``, ``class_mean``, ``sum_squares``; ``cell_count``,
        each cell's observed rows, where X had missing entries), the posterior
        means ``mu`` and ``var`` with the MLEs ``mu_mle`` and ``var_mle``, and the resolved
        prior (``prior_mean``, ``prior_scale``; attrs ``prior_kappa``, ``prior_shape``, and
        for ``prior="evidence"`` ``prior_strength`` and ``prior_variance_ratio`` r).
    prior_ : NormalInverseGamma
        The prior of the fit with every hyperparameter resolved (the one the evidence chose,
        for ``prior="evidence"``): ``GaussianNB(prior=clf.prior_)`` refits the same model.

    Examples
    --------
    >>> from bayesgen import GaussianNB
    >>> X = [[0.0, 1.0], [1.0, 0.5], [0.5, 0.0], [3.0, 3.5], [4.0, 3.0], [3.5, 4.0]]
    >>> y = ["a", "a", "a", "b", "b", "b"]
    >>> clf = GaussianNB(inference="conjugate", compute_map=False, random_seed=0)
    >>> clf.fit(X, y).predict([[0.5, 0.5], [3.0, 3.0]]).tolist()
    ['a', 'b']
    >>> clf.theta_.round(2)  # shrunk towards the overall mean 2.0 by κ₀ = 0.01 of a row
    array([[0.5, 0.5],
           [3.5, 3.5]])
    >>> clf.closed_form_["var_mle"].values.round(3)  # scikit-learn's var_ (var_smoothing=0)
    array([[0.167, 0.167],
           [0.167, 0.167]])

    The evidence's prior: six classes whose means differ by about their within-class SDs
    (themselves from 0.5 to 2) pool their means with the weight of three rows (κ₀), far more
    than the default 0.01, and their variances with that of 2 a₀ = 7 observations.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat(list("abcdef"), 30)
    >>> k = np.searchsorted(list("abcdef"), y)
    >>> X = rng.normal(rng.normal(size=(6, 4))[k], rng.uniform(0.5, 2.0, size=(6, 4))[k])
    >>> chosen = GaussianNB(prior="evidence", inference="conjugate", compute_map=False)
    >>> round(chosen.fit(X, y).prior_.kappa, 2), round(chosen.prior_.shape, 2)
    (3.09, 3.51)
    """
    )

    _family = FAMILY
    _parameter_rules: ClassVar[dict] = {"prior": PriorOrEvidence()}

    def __init__(
        self,
        class_alpha=1.0,
        *,
        prior=None,
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
        self.prior = prior
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
        tags.input_tags.allow_nan = True  # a missing entry's factor drops out
        return tags

    def _prior_options(self):
        prior = DEFAULT_PRIOR if self.prior is None else self.prior
        return {"class_alpha": self.class_alpha, "prior": prior}

    def _estimates(self, statistics: xr.Dataset) -> xr.Dataset:
        """The closed form (see the base class), with a warning where ``prior="evidence"``
        took a bound of its search."""
        estimates = super()._estimates(statistics)
        bound = estimates.attrs.get("prior_evidence_bound")
        if bound:
            warnings.warn(
                f"prior='evidence': the evidence still increases beyond the bound of its "
                f"search: {bound}. The fit takes the bound; pass a NormalInverseGamma as "
                "prior to choose it yourself.",
                EvidenceBoundaryWarning,
                skip_file_prefixes=(_PACKAGE,),
            )
        return estimates

    def posterior_predictive_proba(self, X) -> np.ndarray:
        """Exact posterior predictive p(y | x, data): μ and σ² integrated out, each feature a
        Student-t (:meth:`bayesgen.families.gaussian_nb.GaussianNaiveBayesFamily.
        predictive_log_joint`). Differs from :meth:`predict_proba`, which averages
        p(y | x, θ) over posterior draws.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows with the columns of the fit; NaN where an entry is missing, whose factor
            drops out.
        """
        self.check_fitted()
        self._check_n_features(X)
        checked = self._family.prediction_features(self.closed_form_, X)
        return normalize_log_proba(self._family.predictive_log_joint(self.closed_form_, checked))

    def _set_point_attributes(self, means):
        self.prior_ = self._family.fitted_prior(self.closed_form_, self.get_params())["prior"]
        self.theta_ = means["mu"].values
        self.var_ = means["var"].values
        self.class_prior_ = means["class_prob"].values
