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
import scipy.sparse as sp
import xarray as xr

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

#: The default prior of :func:`gda` and :func:`qda`: weak and centred on the data.
DEFAULT_PRIOR = NormalInverseWishart()


class BoundaryModeError(ValueError):
    """The posterior mode is not interior: some n + α ≤ 1 puts it on the simplex boundary.

    Examples
    --------
    >>> from bayesgen.closed_form import BoundaryModeError, dirichlet_mode
    >>> try:
    ...     dirichlet_mode([2, 0, 1], 1)
    ... except BoundaryModeError as error:
    ...     print(str(error)[:44])
    The mode lies on the boundary of the simplex
    """


# --------------------------------------------------------------------------------------------
# Sufficient statistics (pure NumPy).


def class_counts(y: np.ndarray, n_classes: int, weights=None) -> np.ndarray:
    """Number of samples per class, N_k; with ``weights``, the sum of each class's weights.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.closed_form import class_counts
    >>> class_counts(np.array([0, 1, 1, 2]), 3).tolist()
    [1.0, 2.0, 1.0]
    >>> class_counts(np.array([0, 1, 1]), 3, weights=[0.5, 1.0, 2.0]).tolist()
    [0.5, 3.0, 0.0]
    """
    return np.bincount(y, weights=weights, minlength=n_classes).astype(np.float64)


def feature_counts(X, y: np.ndarray, n_classes: int, weights=None) -> np.ndarray:
    """Per-class column sums of X: N_kj = Σ_{i: y_i = k} w_i X_ij, shape (n_classes, n_features).

    The counts make up a sufficient statistic for both naive Bayes event models (for binary X
    they count documents containing feature j); ``weights`` w_i (default 1) count row i w_i
    times, as scikit-learn's ``_BaseDiscreteNB`` does. Sparse X is read in one pass over its
    non-zeros and never densified.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.closed_form import feature_counts
    >>> X = np.array([[1, 1, 0], [1, 1, 0], [1, 1, 1], [0, 0, 3]])
    >>> feature_counts(X, np.array([1, 0, 0, 1]), 2).tolist()
    [[2.0, 2.0, 1.0], [1.0, 1.0, 3.0]]
    """
    n_features = X.shape[1]
    if sp.issparse(X):
        # Flat (class, feature) bin of every stored entry: the row's class offset, repeated
        # over the row's non-zeros, plus the column.
        row_nonzeros = np.diff(X.indptr)
        offsets = np.asarray(y, dtype=np.int64) * n_features
        flat = np.repeat(offsets, row_nonzeros) + X.indices
        values = X.data if weights is None else X.data * np.repeat(weights, row_nonzeros)
        counts = np.bincount(flat, weights=values, minlength=n_classes * n_features)
        return counts.reshape(n_classes, n_features)
    counts = np.zeros((n_classes, n_features))
    np.add.at(counts, y, X if weights is None else X * np.asarray(weights)[:, None])
    return counts


def category_counts(
    X, y: np.ndarray, n_classes: int, n_categories: np.ndarray, weights=None
) -> np.ndarray:
    """Counts N_k,n,c of category c of feature n within class k, zero-padded to the widest feature
    (with ``weights``, the sum of the weights of those rows).

    Returns
    -------
    ndarray of shape (n_classes, n_features, max(n_categories))

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.closed_form import category_counts
    >>> codes = np.array([[0, 2], [1, 2], [0, 0]])
    >>> counts = category_counts(codes, np.array([0, 0, 1]), 2, np.array([2, 3]))
    >>> counts.shape
    (2, 2, 3)
    >>> counts[0].tolist()  # class 0: feature 0 has codes 0 and 1, feature 1 code 2 twice
    [[1.0, 1.0, 0.0], [0.0, 0.0, 2.0]]
    """
    codes = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.int64)
    n_features = codes.shape[1]
    width = int(n_categories.max())
    flat = (y[:, None] * n_features + np.arange(n_features)) * width + codes
    cell_weights = None if weights is None else np.repeat(weights, n_features)
    counts = np.bincount(
        flat.ravel(), weights=cell_weights, minlength=n_classes * n_features * width
    )
    return counts.reshape(n_classes, n_features, width).astype(np.float64)


def class_means(X, y: np.ndarray, n_classes: int, weights=None) -> np.ndarray:
    """(Weighted) class means x̄_k, shape (n_classes, n_features); 0 for a class of weight 0
    (a class given to ``partial_fit`` that has no rows yet)."""
    total = class_counts(y, n_classes, weights)
    sums = feature_counts(X, y, n_classes, weights)
    return sums / np.where(total > 0, total, 1.0)[:, None]


def class_means_and_scatter(
    X: np.ndarray, y: np.ndarray, n_classes: int, weights=None
) -> tuple[np.ndarray, np.ndarray]:
    """Class means x̄_k (n_classes, n_features) and the pooled within-class scatter
    S = Σ_i w_i (x_i - x̄_{y_i})(x_i - x̄_{y_i})ᵀ (n_features, n_features), w_i = 1 by default.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.closed_form import class_means_and_scatter
    >>> X = np.array([[0.0, 1.0], [2.0, 1.0], [5.0, 5.0], [7.0, 3.0]])
    >>> means, scatter = class_means_and_scatter(X, np.array([0, 0, 1, 1]), 2)
    >>> means.tolist()
    [[1.0, 1.0], [6.0, 4.0]]
    >>> scatter.tolist()
    [[4.0, -2.0], [-2.0, 2.0]]
    """
    means = class_means(X, y, n_classes, weights)
    centered = X - means[y]
    weighted = centered if weights is None else centered * np.asarray(weights)[:, None]
    return means, weighted.T @ centered


# --------------------------------------------------------------------------------------------
# Estimates from counts.


def add_lambda(counts, totals, alpha: float, n_outcomes, weight=1.0) -> np.ndarray:
    """Add-λ (Laplace for λ = 1, Lidstone otherwise) estimate (count + λ) / (total + K λ).

    With ``alpha=0`` this is the maximum-likelihood estimate; 0/0 (an empty total) gives NaN.
    ``weight`` w (broadcastable to the counts, summing to K over each simplex) gives the
    posterior mean (count + λ w) / (total + K λ) of a Dirichlet(λ w) prior, whose mean is
    w / K (:meth:`bayesgen.families.naive_bayes.NaiveBayesFamily.prior_weights`).

    Examples
    --------
    Laplace smoothing of the word counts 2, 2, 1 of a class with 5 words in all, K = 3 words:

    >>> from bayesgen.closed_form import add_lambda
    >>> add_lambda([2, 2, 1], 5, alpha=1, n_outcomes=3).round(3).tolist()
    [0.375, 0.375, 0.25]
    >>> add_lambda([2, 2, 1], 5, alpha=0, n_outcomes=3).tolist()  # the MLE
    [0.4, 0.4, 0.2]
    """
    counts = np.asarray(counts, dtype=np.float64)
    denominator = np.asarray(totals, dtype=np.float64) + np.asarray(n_outcomes) * alpha
    with np.errstate(invalid="ignore", divide="ignore"):
        return (counts + alpha * np.asarray(weight, dtype=np.float64)) / denominator


def per_class(alpha, ndim: int):
    """λ ready to broadcast against an array of ``ndim`` axes whose first is the class: a
    number as it is, one λ per class (shape (n_classes,)) as shape (n_classes, 1, ..., 1).

    Examples
    --------
    >>> from bayesgen.closed_form import per_class
    >>> per_class(0.5, 2), per_class([0.5, 2.0], 3).shape
    (0.5, (2, 1, 1))
    """
    if np.ndim(alpha) == 0:
        return alpha
    return np.asarray(alpha, dtype=np.float64).reshape((-1,) + (1,) * (ndim - 1))


def dirichlet_mode(counts, alpha, *, axis: int = -1, allow_boundary: bool = False) -> np.ndarray:
    """Mode (n + α - 1) / (N + K(α - 1)) of a Dirichlet(α + n) posterior along ``axis``.

    This is the MAP estimate under a Dirichlet(α) prior; for K = 2 it is the Beta mode. With
    α = λ + 1 it equals add-λ, with α = 1 the MLE.

    Parameters
    ----------
    counts : array-like
        Observed counts n (the outcomes lie along ``axis``).
    alpha : float or array-like
        Dirichlet concentration, broadcast against ``counts``.
    axis : int, default -1
        The simplex axis.
    allow_boundary : bool, default False
        The mode is interior only when every n + α > 1. Where some n + α = 1 the density is
        still maximised, on the boundary, at 0 for those outcomes; pass ``True`` to accept
        that. Where n + α < 1 the density is unbounded and there is no mode at all.

    Raises
    ------
    BoundaryModeError
        When the mode is not interior (and ``allow_boundary`` does not cover the case).

    Examples
    --------
    With α = λ + 1 = 2 the mode is add-1 (Laplace) smoothing:

    >>> from bayesgen.closed_form import dirichlet_mode
    >>> dirichlet_mode([2, 2, 1], 2).round(3).tolist()
    [0.375, 0.375, 0.25]
    >>> dirichlet_mode([2, 0, 1], 1, allow_boundary=True).round(3).tolist()
    [0.667, 0.0, 0.333]
    """
    shifted = np.asarray(counts, dtype=np.float64) + np.asarray(alpha, dtype=np.float64) - 1.0
    if np.any(shifted < 0):
        raise BoundaryModeError(
            f"The Dirichlet/Beta posterior has no mode: {int(np.sum(shifted < 0))} outcomes "
            "have n + α < 1, where the density grows without bound towards the boundary."
        )
    if not allow_boundary and np.any(shifted == 0):
        raise BoundaryModeError(
            f"The mode lies on the boundary of the simplex: {int(np.sum(shifted == 0))} "
            "outcomes have n + α = 1 (a zero count with α = 1), so their mode is 0. Pass "
            "allow_boundary=True to accept it."
        )
    total = shifted.sum(axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return shifted / total


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
    from bayesgen.input import distributed

    if distributed.has_dask_input(X, y):
        return distributed.fit(family(model), X, y, **options)
    return family(model).fit(X, y, **options)


def check_class_smoothing(value, classes, name: str = "alpha") -> float | np.ndarray:
    """The naive Bayes λ: a number >= 0 (one λ for every class), or one λ > 0 per class.

    One λ per class comes as a mapping {class label: λ} (a ``dict``, or a pandas ``Series``
    read by its index, never by position), whose keys must be exactly the classes; or, inside
    bayesgen, as an array in the order of the classes (a fit's ``attrs["alpha"]``).

    Parameters
    ----------
    value : float, mapping or array-like
    classes : array-like or int
        The class labels (the closed form's ``class`` coordinate, ``classes_``); or their
        number, where only a number or an array in class order can come.
    name : str
        The parameter, for the messages.

    Returns
    -------
    float or numpy.ndarray of shape (n_classes,)
        A float, or a new float array in the order of ``classes`` (the caller's array is not
        kept, so that later changes to it do not reach a fit).

    Examples
    --------
    >>> from bayesgen.closed_form import check_class_smoothing
    >>> check_class_smoothing(1, ["ham", "spam"])
    1.0
    >>> check_class_smoothing({"spam": 2, "ham": 0.5}, ["ham", "spam"]).tolist()
    [0.5, 2.0]
    >>> check_class_smoothing({"ham": 0.5, "eggs": 2}, ["ham", "spam"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: alpha: expected one λ for each class ['ham', 'spam']; missing ['spam'] ...
    >>> check_class_smoothing([0.5, 2, 1], 2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: alpha: expected ... an array of shape (n_classes,) = (2,); got shape (3,).
    """
    from bayesgen.input.params import is_class_mapping

    labels = None if np.ndim(classes) == 0 else np.asarray(classes)
    n_classes = int(classes) if labels is None else labels.size
    if is_class_mapping(value):
        if labels is None:
            raise TypeError(
                f"{name}: a mapping {{class label: λ}} needs the class labels to be read, and "
                f"only their number ({n_classes}) is known here; got {_short_repr(value)}."
            )
        value = _values_by_class(value, labels, name)
    elif np.ndim(value) == 0:
        return check_smoothing(value, name)
    expected = (
        f"a number >= 0 or one λ > 0 per class, an array of shape (n_classes,) = ({n_classes},)"
    )
    try:
        values = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected {expected}; got {value!r}.") from None
    if values.shape != (n_classes,):
        raise ValueError(f"{name}: expected {expected}; got shape {values.shape}.")
    bad = ~(np.isfinite(values) & (values > 0))
    if np.any(bad):
        # Per class only a proper prior: λ = 0 (the MLE) is one λ for all classes.
        raise ValueError(
            f"{name}: expected {expected} with every value finite and > 0; got "
            f"{values[bad][:5].tolist()}."
        )
    return values


def _values_by_class(mapping, labels: np.ndarray, name: str) -> np.ndarray:
    """The values of ``mapping`` (a dict or a Series, by its index) in the order of
    ``labels``; its keys must be exactly the labels, each value a number > 0."""
    import pandas as pd

    if isinstance(mapping, pd.Series):
        if not mapping.index.is_unique:
            repeated = mapping.index[mapping.index.duplicated()].unique().tolist()
            raise ValueError(f"{name}: a Series with a repeated class label {repeated[:5]}.")
        mapping = dict(zip(mapping.index.tolist(), mapping.tolist(), strict=True))
    wanted = [label.item() if isinstance(label, np.generic) else label for label in labels]
    missing = [label for label in wanted if label not in mapping]
    extra = [key for key in mapping if key not in set(wanted)]
    if missing or extra:
        found = []
        if missing:
            found.append(f"missing {missing[:10]}")
        if extra:
            found.append(f"not classes {extra[:10]}")
        raise ValueError(
            f"{name}: expected one λ for each class {wanted[:10]}; "
            f"{' and '.join(found)} (keys are class labels, as in classes_, and a Series is "
            "read by its index, never by position)."
        )
    values = np.empty(len(wanted), dtype=np.float64)
    for k, label in enumerate(wanted):
        lam = mapping[label]
        if isinstance(lam, bool | np.bool_) or not isinstance(
            lam, int | float | np.integer | np.floating
        ):
            raise TypeError(f"{name}: expected a number > 0 for class {label!r}; got {lam!r}.")
        if not (np.isfinite(lam) and lam > 0):
            raise ValueError(
                f"{name}: expected a finite number > 0 for class {label!r}; got {lam!r}."
            )
        values[k] = lam
    return values


def _short_repr(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_smoothing(value, name: str) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected a non-negative number; got {value!r}.") from None
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"{name}: expected a finite number >= 0; got {value}.")
    return value


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


def log_prob_terms(
    count, total, alpha: float, n_outcomes, weight=1.0
) -> tuple[np.ndarray, np.ndarray]:
    """log of (count + λ w) / (total + Kλ) as ``order · log λ + finite`` (``weight`` w as in
    :func:`add_lambda`; it does not matter at λ = 0).

    For λ > 0 the order is 0. For λ = 0 an event with a zero count has probability 0, and its
    log is split so that predictions are the limit λ → 0⁺ of add-λ: a class that needs fewer
    zero-probability events wins outright, and ties are settled by the finite parts. This keeps
    the MLE's answers where they are defined and gives the "NIPS" document (a word unseen in
    every class, 0/0 in the lecture notes) a finite answer instead of NaN.

    Examples
    --------
    With λ = 0 a zero count gets order 1 (probability 0) and a finite part instead of log 0:

    >>> from bayesgen.closed_form import log_prob_terms
    >>> order, finite = log_prob_terms([3, 0], 3, alpha=0, n_outcomes=2)
    >>> order.tolist(), finite.round(3).tolist()
    ([0.0, 1.0], [0.0, -1.099])
    >>> order, finite = log_prob_terms([3, 0], 3, alpha=1, n_outcomes=2)
    >>> order.tolist(), finite.round(3).tolist()
    ([0.0, 0.0], [-0.223, -1.609])
    """
    count = np.asarray(count, dtype=np.float64)
    total = np.broadcast_to(np.asarray(total, dtype=np.float64), count.shape)
    if np.all(np.asarray(alpha) > 0):  # a number, or one λ per class (each > 0)
        return np.zeros_like(count), np.log(add_lambda(count, total, alpha, n_outcomes, weight))
    order = ((count == 0) & (total > 0)).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        finite = np.where(
            total == 0,
            -np.log(np.broadcast_to(n_outcomes, count.shape).astype(np.float64)),
            np.where(count > 0, np.log(count / total), -np.log(total)),
        )
    return order, finite


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

    >>> from bayesgen.families.hyperprior import with_alpha_prior
    >>> learned = with_alpha_prior(est, (2.0, 1.0))
    >>> round(closed_form.log_evidence(learned), 4)
    -6.7448
    """
    return family(estimates).log_evidence(estimates)


def prediction_features(estimates: xr.Dataset, X):
    """Validate X at prediction time against the features ``estimates`` were fitted on."""
    model_family = family(estimates)
    return model_family.prediction_features(estimates, X)


def family(model):
    """The model family of a name or closed-form Dataset (:func:`bayesgen.families.family`).

    Imported on use: the families build on this module's helpers.
    """
    from bayesgen.families import family as lookup

    return lookup(model)


def __getattr__(name: str):
    # MAX_CATEGORY_CELLS lives with the categorical model now; kept here for 0.1.0's users.
    if name == "MAX_CATEGORY_CELLS":
        from bayesgen.families.categorical import MAX_CATEGORY_CELLS

        return MAX_CATEGORY_CELLS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
