"""The Gaussian naive Bayes estimator, :class:`GaussianNB`: the block
:mod:`bayesgen.families.gaussian_nb` with its parameters and fitted attributes; fitting,
prediction and saving are shared (:class:`bayesgen.estimators.classifier.GenerativeClassifier`).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from bayesgen.estimators.classifier import GenerativeClassifier
from bayesgen.families.gaussian_nb import FAMILY
from bayesgen.input.params import INFERENCE_PARAMS_DOC, InstanceOf
from bayesgen.maths.likelihood import normalize_log_proba
from bayesgen.maths.normal_inverse_gamma import DEFAULT_PRIOR, NormalInverseGamma

__all__ = ["GaussianNB", "NormalInverseGamma"]


class GaussianNB(GenerativeClassifier):
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

    Parameters
    ----------
    class_alpha : float, default 1.0
        Dirichlet concentration of the class probabilities.
    prior : NormalInverseGamma or None, default None
        Hyperparameters (m₀, κ₀, a₀, b₀) of every cell; None:
        :class:`~bayesgen.maths.normal_inverse_gamma.NormalInverseGamma()`, weak and centred on
        the data (m₀ the overall mean and b₀ = (a₀ − 1) s² with s² the overall variance of each
        feature, κ₀ = 0.01, a₀ = 1.5; see its docstring). A feature constant over all rows is
        then refused: give the prior's ``scale``, or drop it."""
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
        The statistics (``class_count``, ``class_mean``, ``sum_squares``), the posterior
        means ``mu`` and ``var`` with the MLEs ``mu_mle`` and ``var_mle``, and the resolved
        prior (``prior_mean``, ``prior_scale``; attrs ``prior_kappa``, ``prior_shape``).

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
    """
    )

    _family = FAMILY
    _parameter_rules: ClassVar[dict] = {
        "prior": InstanceOf(NormalInverseGamma, "a bayesgen NormalInverseGamma"),
    }

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

    def _prior_options(self):
        prior = DEFAULT_PRIOR if self.prior is None else self.prior
        return {"class_alpha": self.class_alpha, "prior": prior}

    def posterior_predictive_proba(self, X) -> np.ndarray:
        """Exact posterior predictive p(y | x, data): μ and σ² integrated out, each feature a
        Student-t (:meth:`bayesgen.families.gaussian_nb.GaussianNaiveBayesFamily.
        predictive_log_joint`). Differs from :meth:`predict_proba`, which averages
        p(y | x, θ) over posterior draws.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows with the columns of the fit.
        """
        self.check_fitted()
        self._check_n_features(X)
        checked = self._family.prediction_features(self.closed_form_, X)
        return normalize_log_proba(self._family.predictive_log_joint(self.closed_form_, checked))

    def _set_point_attributes(self, means):
        self.theta_ = means["mu"].values
        self.var_ = means["var"].values
        self.class_prior_ = means["class_prob"].values
