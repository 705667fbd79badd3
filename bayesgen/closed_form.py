"""Closed-form estimates for generative classifiers (NumPy, SciPy and xarray only).

Each public fit function reduces X and y to sufficient statistics, then derives the textbook
estimates from them, and returns everything in one ``xarray.Dataset`` with dimensions ``class``
and ``feature`` (plus ``category`` for the categorical model and ``feature2`` for a covariance).

Naive Bayes (counts N, class totals N_k, smoothing λ = ``alpha``):

* ``class_prob``   = (N_k + a) / (N + K a),            a = ``class_alpha``
* Bernoulli        ``feature_prob`` = (N_jk + λ) / (N_k + 2λ)
* multinomial      ``feature_prob`` = (N_kw + λ) / (N_k + V λ),    N_k = tokens in class k
* categorical      ``feature_prob`` = (N_k,n,a + λ) / (N_k + K_n λ)

These are the posterior means under Dirichlet(a) / Beta(λ, λ) / Dirichlet(λ) priors; the
``*_mle`` variables are the same with λ = 0. The mode of those posteriors,
(n + α - 1) / (N + K(α - 1)), is :func:`dirichlet_mode`.

GDA: the maximum-likelihood φ (π_k), μ_k and pooled Σ, or the posterior means under a
normal-inverse-Wishart prior (see :class:`NormalInverseWishart`), and the map to the linear
(logistic / softmax) form of p(y | x).

The fit functions also take ``dask.array`` and ``dask.dataframe`` X and y: the statistics are
then reduced chunk by chunk on Dask (:mod:`bayesgen.input.distributed`).

Importing this module never imports PyMC or PyTensor (nor Dask).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from bayesgen.families import family
from bayesgen.families.categorical import (  # kept here for 0.1.0's users
    MAX_CATEGORY_CELLS as MAX_CATEGORY_CELLS,
)
from bayesgen.input import distributed
from bayesgen.input.alpha import check_class_smoothing as check_class_smoothing
from bayesgen.input.alpha import check_smoothing as check_smoothing
from bayesgen.maths.counts import category_counts as category_counts
from bayesgen.maths.counts import class_counts as class_counts
from bayesgen.maths.counts import class_means as class_means
from bayesgen.maths.counts import class_means_and_scatter as class_means_and_scatter
from bayesgen.maths.counts import feature_counts as feature_counts
from bayesgen.maths.dirichlet import BoundaryModeError as BoundaryModeError
from bayesgen.maths.dirichlet import add_lambda as add_lambda
from bayesgen.maths.dirichlet import dirichlet_mode as dirichlet_mode
from bayesgen.maths.dirichlet import log_prob_terms as log_prob_terms
from bayesgen.maths.dirichlet import per_class as per_class
from bayesgen.maths.gaussian import DEFAULT_PRIOR as DEFAULT_PRIOR
from bayesgen.maths.gaussian import NormalInverseWishart as NormalInverseWishart
from bayesgen.maths.gaussian import check_pooled_covariance as check_pooled_covariance
from bayesgen.maths.gaussian import gaussian_log_joint as gaussian_log_joint
from bayesgen.maths.gaussian import gaussian_rows as gaussian_rows
from bayesgen.maths.gaussian import gda_linear_form as gda_linear_form
from bayesgen.maths.gaussian import niw_posterior as niw_posterior
from bayesgen.maths.likelihood import (  # re-exported: closed_form is where users found them
    bernoulli_log_likelihood as bernoulli_log_likelihood,
)
from bayesgen.maths.likelihood import categorical_log_likelihood as categorical_log_likelihood
from bayesgen.maths.likelihood import linear_in_x as linear_in_x
from bayesgen.maths.likelihood import linear_log_likelihood as linear_log_likelihood
from bayesgen.maths.likelihood import multinomial_log_likelihood as multinomial_log_likelihood
from bayesgen.maths.likelihood import normalize_log_proba as normalize_log_proba

# --------------------------------------------------------------------------------------------
# Fit functions: X, y in, estimates out.


def multinomial_nb(
    X, y, *, alpha: float = 1.0, class_alpha: float = 1.0, prior_mean="uniform", feature_names=None
) -> xr.Dataset:
    """Closed-form multinomial (bag-of-words) naive Bayes.

    Parameters
    ----------
    X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
        Non-negative word counts; fractional weights (TF-IDF) are allowed.
    y : array-like of shape (n_samples,)
    alpha : float, default 1.0
        Smoothing λ ≥ 0 for the word probabilities (the Dirichlet(λ) prior).
    class_alpha : float, default 1.0
        Smoothing for the class prior (the Dirichlet prior's concentration); 0 gives N_k / N.
    prior_mean : "uniform", "pooled" or array-like, default "uniform"
        The prior mean m of the word probabilities, Dirichlet(λ V m): uniform (add-λ), the
        class-pooled add-½ word frequencies, or given (see :class:`bayesgen.MultinomialNB`);
        ``feature_prob`` is then (count + λ V m) / (total + V λ).
    feature_names : sequence of str, optional
        Names of the columns of X (e.g. a vectorizer's vocabulary); default DataFrame column
        names or ``x0, x1, ...``.

    Returns
    -------
    xarray.Dataset
        ``class_count``, ``feature_count``, ``class_prob``, ``class_prob_mle``,
        ``feature_prob`` (add-λ), ``feature_prob_mle``; attrs record the model and λ.

    Examples
    --------
    The worked example of the lecture notes: four e-mails over the words a, b, c.

    >>> X = [[1, 1, 0], [1, 1, 0], [1, 1, 1], [0, 0, 3]]
    >>> est = multinomial_nb(X, [1, 0, 0, 1], alpha=0, class_alpha=0)
    >>> est["feature_prob"].sel({"class": 1}).values.tolist()
    [0.2, 0.2, 0.6]
    >>> round(float(predict_proba(est, [[0, 1, 1]])[0, 1]), 12)
    0.6
    """
    return _fit(
        "multinomial_nb",
        X,
        y,
        alpha=alpha,
        class_alpha=class_alpha,
        prior_mean=prior_mean,
        feature_names=feature_names,
    )


def bernoulli_nb(
    X,
    y,
    *,
    alpha: float = 1.0,
    class_alpha: float = 1.0,
    prior_mean="uniform",
    binarize: float | None = None,
    feature_names=None,
) -> xr.Dataset:
    """Closed-form multivariate Bernoulli (set-of-words) naive Bayes.

    ``feature_prob`` is P(x_j = 1 | y = k) = (N_jk + λ) / (N_k + 2λ), the posterior mean under a
    Beta(λ, λ) prior, with N_jk the number of class-k samples where feature j is 1.

    Parameters
    ----------
    X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
        0/1 features, or any numbers together with ``binarize``.
    y : array-like of shape (n_samples,)
    alpha, class_alpha : float
        As for :func:`multinomial_nb`.
    prior_mean : "uniform", "pooled" or array-like, default "uniform"
        The prior mean m_j of P(x_j = 1 | y = k), Beta(2λ m_j, 2λ (1 − m_j)); see
        :func:`multinomial_nb`.
    binarize : float or None, default None
        Threshold: values above it count as 1. ``None`` requires X to be 0/1 already.
    feature_names : sequence of str, optional
        Names of the columns of X (e.g. a vectorizer's vocabulary); default DataFrame column
        names or ``x0, x1, ...``.

    Examples
    --------
    >>> from bayesgen.closed_form import bernoulli_nb
    >>> X = [[1, 1, 0], [1, 0, 0], [0, 1, 1], [0, 0, 1]]
    >>> est = bernoulli_nb(X, ["ham", "ham", "spam", "spam"], alpha=1)
    >>> est["feature_prob"].sel({"class": "spam"}).values.round(3).tolist()
    [0.25, 0.5, 0.75]
    """
    return _fit(
        "bernoulli_nb",
        X,
        y,
        alpha=alpha,
        class_alpha=class_alpha,
        prior_mean=prior_mean,
        binarize=binarize,
        feature_names=feature_names,
    )


def categorical_nb(
    X,
    y,
    *,
    alpha: float = 1.0,
    class_alpha: float = 1.0,
    prior_mean="uniform",
    n_categories=None,
    feature_names=None,
) -> xr.Dataset:
    """Closed-form categorical naive Bayes: feature n takes one of K_n categories.

    ``feature_prob`` has dims (class, feature, category): P(x_n = c | y = k) =
    (N_k,n,c + λ) / (N_k + K_n λ). Features with fewer categories than the widest one are
    padded with probability 0 (a category that does not exist never occurs); the boolean
    ``category_mask`` (feature, category) marks the real ones.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Integer category codes 0, 1, ..., K_n - 1 (as produced by ``OrdinalEncoder``).
    y : array-like of shape (n_samples,)
    alpha, class_alpha : float
        As for :func:`multinomial_nb`.
    prior_mean : "uniform", "pooled" or array-like, default "uniform"
        The prior mean of each feature's category probabilities, Dirichlet(λ K_n m_n); an
        array has shape (n_features, max K_n), 0 in the padding. See :func:`multinomial_nb`.
    n_categories : int or array-like of int, optional
        K_n per feature; by default ``max(X[:, n]) + 1`` (scikit-learn's rule). At prediction
        a code ≥ K_n raises a ValueError naming the feature and the code (scikit-learn's
        ``CategoricalNB`` cannot score it either, failing with an IndexError); pass a larger
        ``n_categories`` to give categories unseen in training a probability. The padded
        class × feature × category table may hold at most ``MAX_CATEGORY_CELLS`` cells, so
        codes must be 0, 1, ..., K_n - 1 (``OrdinalEncoder``), not arbitrary identifiers.
    feature_names : sequence of str, optional
        Names of the columns of X (e.g. a vectorizer's vocabulary); default DataFrame column
        names or ``x0, x1, ...``.

    Examples
    --------
    >>> from bayesgen.closed_form import categorical_nb
    >>> X = [[0, 2], [1, 2], [0, 0], [1, 1]]
    >>> est = categorical_nb(X, ["a", "a", "b", "b"], alpha=1)
    >>> est["feature_prob"].sel({"class": "a", "feature": "x1"}).values.round(3).tolist()
    [0.2, 0.2, 0.6]
    """
    return _fit(
        "categorical_nb",
        X,
        y,
        alpha=alpha,
        class_alpha=class_alpha,
        prior_mean=prior_mean,
        n_categories=n_categories,
        feature_names=feature_names,
    )


def _fit(model: str, X, y, **options) -> xr.Dataset:
    """The family's closed-form fit; chunk by chunk on Dask for Dask input
    (:mod:`bayesgen.input.distributed`, which imports Dask only then)."""
    if distributed.has_dask_input(X, y):
        return distributed.fit(family(model), X, y, **options)
    return family(model).fit(X, y, **options)


# --------------------------------------------------------------------------------------------
# Gaussian discriminant analysis.


def gda(
    X,
    y,
    *,
    class_alpha: float = 1.0,
    prior: NormalInverseWishart | None = DEFAULT_PRIOR,
    feature_names=None,
) -> xr.Dataset:
    """Closed-form Gaussian discriminant analysis with one shared covariance Σ.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_features)
        Real-valued features.
    y : array-like of shape (n_samples,)
    class_alpha : float, default 1.0
        Dirichlet concentration of the class prior; 0 gives the MLE φ = N_1 / N.
    prior : NormalInverseWishart or None
        With a prior, ``mu`` and ``cov`` are the posterior means E[μ_k], E[Σ] (the prior's
        resolved hyperparameters are stored as ``prior_mean``, ``prior_scale`` and attrs).
        With ``None`` they are the maximum-likelihood estimates.
    feature_names : sequence of str, optional
        Names of the columns of X (e.g. a vectorizer's vocabulary); default DataFrame column
        names or ``x0, x1, ...``.

    Returns
    -------
    xarray.Dataset
        ``class_count``, ``class_mean``, ``scatter``; ``class_prob``/``class_prob_mle``,
        ``mu``/``mu_mle`` (class, feature), ``cov``/``cov_mle`` (feature, feature2), and the
        linear form of p(y | x) from the point estimates: for two classes ``coef`` θ = Σ⁻¹(μ₁ - μ₀)
        and ``intercept`` θ₀ = -½(μ₁ᵀΣ⁻¹μ₁ - μ₀ᵀΣ⁻¹μ₀) + log(φ / (1 - φ)); for K classes
        ``coef`` w_k = Σ⁻¹μ_k and ``intercept`` b_k = -½ μ_kᵀΣ⁻¹μ_k + log π_k.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.closed_form import gda
    >>> X = np.array([[0.0, 1.0], [1.0, 0.5], [0.5, 0.0], [3.0, 3.5], [4.0, 3.0], [3.5, 4.0]])
    >>> est = gda(X, [0, 0, 0, 1, 1, 1], prior=None)
    >>> est["mu"].values.round(3).tolist()
    [[0.5, 0.5], [3.5, 3.5]]
    >>> est["cov"].values.round(3).tolist()
    [[0.167, -0.083], [-0.083, 0.167]]
    """
    return _fit("gda", X, y, class_alpha=class_alpha, prior=prior, feature_names=feature_names)


def qda(
    X,
    y,
    *,
    class_alpha: float = 1.0,
    prior: NormalInverseWishart | None = DEFAULT_PRIOR,
    feature_names=None,
) -> xr.Dataset:
    """Closed-form quadratic discriminant analysis: one covariance Σ_k per class.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_features)
        Real-valued features.
    y : array-like of shape (n_samples,)
    class_alpha : float, default 1.0
        Dirichlet concentration of the class prior; 0 gives the MLE π_k = N_k / N.
    prior : NormalInverseWishart or None
        The prior of every class's (μ_k, Σ_k). With a prior, ``mu`` and ``cov`` are the
        posterior means E[μ_k], E[Σ_k]; with ``None`` the maximum-likelihood x̄_k and S_k / N_k
        (every class then needs more samples than features).
    feature_names : sequence of str, optional
        Names of the columns of X; default DataFrame column names or ``x0, x1, ...``.

    Returns
    -------
    xarray.Dataset
        ``class_count``, ``class_mean``, ``scatter`` (class, feature, feature2);
        ``class_prob``/``class_prob_mle``, ``mu``/``mu_mle`` (class, feature) and
        ``cov``/``cov_mle`` (class, feature, feature2). See :mod:`bayesgen.families.qda`.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.closed_form import qda
    >>> X = np.array([[0.0, 1.0], [1.0, 0.5], [0.5, 0.0], [3.0, 3.5], [4.0, 3.0], [3.5, 4.0]])
    >>> est = qda(X, [0, 0, 0, 1, 1, 1])
    >>> est["cov"].dims
    ('class', 'feature', 'feature2')
    >>> est["mu"].values.round(2).tolist()
    [[0.5, 0.5], [3.5, 3.5]]
    """
    return _fit("qda", X, y, class_alpha=class_alpha, prior=prior, feature_names=feature_names)


# --------------------------------------------------------------------------------------------
# Prediction. Every function takes parameter arrays with optional leading (draw) dimensions.


def joint_log_likelihood(estimates: xr.Dataset, X) -> tuple[np.ndarray, np.ndarray | None]:
    """Plug-in log p(x, y = k) for every row of X and class, from a fit function's Dataset.

    Returns
    -------
    joint : ndarray of shape (n_samples, n_classes)
    order : ndarray of shape (n_samples, n_classes) or None
        Powers of λ → 0 (see :func:`log_prob_terms`); None unless λ = 0 leaves zero
        probabilities.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.closed_form import joint_log_likelihood, multinomial_nb
    >>> X = [[1, 1, 0], [1, 1, 0], [1, 1, 1], [0, 0, 3]]
    >>> est = multinomial_nb(X, ["ham", "spam", "spam", "ham"], alpha=1)
    >>> joint, order = joint_log_likelihood(est, [[0, 0, 2]])
    >>> joint.round(3).tolist(), order is None
    ([[-2.079, -3.466]], True)
    """
    model_family = family(estimates)
    X = model_family.prediction_features(estimates, X)
    return model_family.plug_in_log_joint(estimates, X)


def predict_proba(estimates: xr.Dataset, X) -> np.ndarray:
    """Plug-in p(y = k | x) from closed-form estimates (columns follow ``estimates["class"]``).

    Computed in log space with log-sum-exp, so tens of thousands of features do not underflow.
    With λ = 0 the answer is the limit λ → 0⁺ of add-λ (see :func:`log_prob_terms`).

    Examples
    --------
    >>> from bayesgen.closed_form import multinomial_nb, predict_proba
    >>> X = [[1, 1, 0], [1, 1, 0], [1, 1, 1], [0, 0, 3]]
    >>> est = multinomial_nb(X, ["ham", "spam", "spam", "ham"], alpha=1)
    >>> predict_proba(est, [[0, 0, 2], [2, 1, 0]]).round(3)
    array([[0.8  , 0.2  ],
           [0.229, 0.771]])
    """
    joint, order = joint_log_likelihood(estimates, X)
    return normalize_log_proba(joint, order)


def predict(estimates: xr.Dataset, X) -> np.ndarray:
    """Most probable class label for every row of X.

    Examples
    --------
    >>> from bayesgen.closed_form import multinomial_nb, predict
    >>> X = [[1, 1, 0], [1, 1, 0], [1, 1, 1], [0, 0, 3]]
    >>> est = multinomial_nb(X, ["ham", "spam", "spam", "ham"], alpha=1)
    >>> predict(est, [[0, 0, 2], [2, 1, 0]]).tolist()
    ['ham', 'spam']
    """
    classes = estimates["class"].values
    return classes[np.argmax(predict_proba(estimates, X), axis=1)]


def posterior_predictive_proba(estimates: xr.Dataset, X) -> np.ndarray:
    """Exact Bayesian posterior predictive p(y = k | x, data) for the naive Bayes models.

    The parameters are integrated out rather than plugged in:

    * multinomial: the Dirichlet-multinomial p(x | k, data) ∝ Γ(A_k) / Γ(A_k + L) ·
      Π_w Γ(a_kw + x_w) / Γ(a_kw), with a_kw = N_kw + λ, A_k = Σ_w a_kw and L = Σ_w x_w. For a
      one-word document this equals the add-λ plug-in; for longer documents it is less
      confident, because repeated words are more likely under uncertainty about θ.
    * Bernoulli and categorical: each feature is one draw, and E[φ] is the add-λ estimate, so
      the exact predictive *equals* the add-λ plug-in.

    The class term is E[π_k] = (N_k + a) / (N + K a) in every case. Needs λ > 0.

    Examples
    --------
    For a document of more than one word the exact predictive is less confident than the plug-in:

    >>> from bayesgen.closed_form import multinomial_nb, posterior_predictive_proba, predict_proba
    >>> X = [[1, 1, 0], [1, 1, 0], [1, 1, 1], [0, 0, 3]]
    >>> est = multinomial_nb(X, ["ham", "spam", "spam", "ham"], alpha=1)
    >>> posterior_predictive_proba(est, [[0, 0, 2]]).round(3).tolist()
    [[0.769, 0.231]]
    >>> predict_proba(est, [[0, 0, 2]]).round(3).tolist()
    [[0.8, 0.2]]
    """
    model_family = family(estimates)
    X = model_family.prediction_features(estimates, X)
    return normalize_log_proba(model_family.predictive_log_joint(estimates, X))


def log_evidence(estimates: xr.Dataset) -> float:
    """log p(y, X | prior): the marginal likelihood (evidence) of the training rows, exactly.

    Every parameter is integrated out under the fit's prior: π ~ Dirichlet(a) for the labels,
    and Dirichlet(λ) / Beta(λ, λ) for the naive Bayes features, the normal-inverse-Wishart
    prior for GDA (one Σ) and QDA (one Σ_k per class). Per Dirichlet simplex with O outcomes,
    counts c_o and T = Σ_o c_o draws this is

        lnΓ(O λ) − lnΓ(T + O λ) + Σ_o [lnΓ(c_o + λ) − lnΓ(λ)];

    see :doc:`/maths` ("The evidence") for all the formulas.

    With a hyperprior on λ (``alpha_prior=(shape, rate)``) λ is integrated out too:
    log p(y | a) + log ∫ p(X | y, λ) Gamma(λ; shape, rate) dλ, the one-dimensional integral
    by the quadrature of p(λ | D) (:func:`bayesgen.families.hyperprior.feature_log_evidence`; it
    agrees with ``scipy.integrate.quad`` to 1e-9 in the log in the tests). That is not the
    evidence at λ's posterior mean, the fit's ``alpha``, which overstates it.

    Parameters
    ----------
    estimates : xarray.Dataset
        The Dataset of a fit function (:func:`multinomial_nb`, :func:`bernoulli_nb`,
        :func:`categorical_nb`, :func:`gda`, :func:`qda`) or an estimator's ``estimates_``.

    Returns
    -------
    float
        In nats. Conventions: the labels and rows are taken in their order, so there is no
        multinomial coefficient for the class counts (adding log(N! / Π_k N_k!) gives the
        probability of the counts), nor for a multinomial document's words: the evidence is
        that of its tokens in order, and adding Σ_i log(L_i! / Π_w x_iw!) gives that of the
        bags of words, which the rows of the ``log_likelihood`` group include.

    Raises
    ------
    ValueError
        For an improper prior, which has no evidence: ``alpha`` or ``class_alpha`` 0, or a
        GDA or QDA fit with ``prior=None``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen import closed_form
    >>> X = np.array([[1, 0], [1, 1], [0, 1]])
    >>> est = closed_form.bernoulli_nb(X, np.array([0, 0, 1]))
    >>> # labels 0, 0, 1: 1/12; features: 1/3 · 1/6 (class 0), 1/2 · 1/2 (class 1)
    >>> bool(np.isclose(closed_form.log_evidence(est), np.log(1 / 864)))
    True

    Under a hyperprior on λ, λ integrated out:

    >>> from bayesgen.families import family
    >>> from bayesgen.families.hyperprior import with_alpha_prior
    >>> learned = with_alpha_prior(family(est), est, (2.0, 1.0))
    >>> round(closed_form.log_evidence(learned), 4)
    -6.7448
    """
    return family(estimates).log_evidence(estimates)


def prediction_features(estimates: xr.Dataset, X):
    """Validate X at prediction time against the features ``estimates`` were fitted on."""
    model_family = family(estimates)
    return model_family.prediction_features(estimates, X)
