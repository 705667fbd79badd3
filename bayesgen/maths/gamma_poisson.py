"""The Gamma–Poisson conjugate pair: posterior, moments, negative-binomial predictive, evidence.

Counts x_ij of class k are Poisson(λ_kj) and λ_kj ~ Gamma(a₀, b₀) (shape a₀, rate b₀, mean
a₀ / b₀). Given the N_k rows of class k and their sums S_kj = Σ_i x_ij, the posterior is

    λ_kj | data ~ Gamma(a₀ + S_kj, b₀ + N_k),

whose mean, SD, mode and kurtosis are a / b, √a / b, (a − 1) / b (for a ≥ 1; the density is
unbounded at 0 below) and 3 + 6 / a, for a = a₀ + S_kj and b = b₀ + N_k. A new count from a
Gamma(a, b) rate is negative binomial,

    log p(x) = lnΓ(a + x) − lnΓ(a) − log x! + a log(b / (b + 1)) − x log(b + 1),

SciPy's ``nbinom(a, b / (b + 1))``. The evidence of all the counts in class order is the
product of Gamma integrals, one per (class, feature):

    log p(X | y) = Σ_kj [a₀ log b₀ − lnΓ(a₀) + lnΓ(a_kj) − a_kj log b_k] − Σ_ij log x_ij!.

Weighted rows (w_i) enter every sum w_i times: N_k = Σ w_i, S_kj = Σ w_i x_ij and
Σ w_i log x_ij!. A count need not be whole: the same kernel λ^x e^(−λ) / Γ(x + 1) is then a
weighted likelihood, and every formula above holds for it.

Everything here is NumPy and SciPy on arrays; X may be dense or a SciPy sparse matrix, read
over its non-zeros (a zero count adds a term of the class alone).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln

__all__ = [
    "gamma_kurtosis",
    "gamma_mean",
    "gamma_mode",
    "gamma_posterior",
    "gamma_sd",
    "leave_one_out_log_pmf",
    "log_evidence",
    "log_factorials",
    "negative_binomial_log_pmf",
]


def gamma_posterior(
    prior_shape: float, prior_rate: float, feature_count, class_count
) -> tuple[np.ndarray, np.ndarray]:
    """The Gamma(shape, rate) posterior of every λ_kj: (a₀ + S_kj, b₀ + N_k).

    Parameters
    ----------
    prior_shape, prior_rate : float
        a₀ and b₀ > 0.
    feature_count : array-like of shape (n_classes, n_features)
        S_kj, the (weighted) sums of each feature over each class's rows; zeros give the prior.
    class_count : array-like of shape (n_classes,)
        N_k, the (weighted) rows of each class.

    Returns
    -------
    shape : numpy.ndarray of shape (n_classes, n_features)
    rate : numpy.ndarray of shape (n_classes, 1)
        One rate per class, as a column that broadcasts against ``shape``.

    Examples
    --------
    >>> from bayesgen.maths.gamma_poisson import gamma_posterior
    >>> shape, rate = gamma_posterior(1.0, 0.5, [[3.0, 0.0], [1.0, 6.0]], [2.0, 3.0])
    >>> shape.tolist(), rate.ravel().tolist()
    ([[4.0, 1.0], [2.0, 7.0]], [2.5, 3.5])
    """
    shape = prior_shape + np.asarray(feature_count, dtype=np.float64)
    rate = prior_rate + np.asarray(class_count, dtype=np.float64)
    return shape, rate[:, None]


def gamma_mean(shape, rate) -> np.ndarray:
    """E[λ] = a / b of Gamma(a, b)."""
    return np.asarray(shape, dtype=np.float64) / rate


def gamma_sd(shape, rate) -> np.ndarray:
    """SD[λ] = √a / b of Gamma(a, b)."""
    return np.sqrt(np.asarray(shape, dtype=np.float64)) / rate


def gamma_mode(shape, rate) -> np.ndarray:
    """The mode (a − 1) / b of Gamma(a, b) where a ≥ 1 (0 at a = 1), NaN where a < 1: the
    density is then unbounded at 0 and has no mode.

    Examples
    --------
    >>> from bayesgen.maths.gamma_poisson import gamma_mode
    >>> gamma_mode([3.0, 1.0, 0.5], 2.0).tolist()
    [1.0, 0.0, nan]
    """
    shape = np.asarray(shape, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.where(shape >= 1.0, (shape - 1.0) / rate, np.nan)


def gamma_kurtosis(shape) -> np.ndarray:
    """The kurtosis E[(λ − μ)⁴] / σ⁴ = 3 + 6 / a of Gamma(a, b), whatever b."""
    return 3.0 + 6.0 / np.asarray(shape, dtype=np.float64)


def log_factorials(X):
    """log x! = lnΓ(x + 1) of every entry, sparse where X is (a zero stays 0).

    Summed over a class's rows, with :func:`bayesgen.maths.counts.feature_counts`, it is the
    statistic the evidence needs beside the sums of the counts.
    """
    if sp.issparse(X):
        X = sp.csr_array(X, dtype=np.float64, copy=True)
        X.data = gammaln(X.data + 1.0)
        return X
    return gammaln(np.asarray(X, dtype=np.float64) + 1.0)


def negative_binomial_log_pmf(X, shape, rate) -> np.ndarray:
    """Σ_j log NB(x_ij; a_kj, b_k) for every row i and class k: the posterior predictive of a
    row's counts, each rate λ_kj ~ Gamma(a_kj, b_k) integrated out.

    Parameters
    ----------
    X : numpy.ndarray or scipy.sparse matrix of shape (n_samples, n_features)
        Counts ≥ 0.
    shape : numpy.ndarray of shape (n_classes, n_features)
    rate : numpy.ndarray of shape (n_classes,) or (n_classes, 1)

    Returns
    -------
    numpy.ndarray of shape (n_samples, n_classes)

    Notes
    -----
    A zero count contributes a_kj log(b_k / (b_k + 1)), so every row starts from the class's
    Σ_j a_kj log(b_k / (b_k + 1)) and each non-zero adds lnΓ(a + x) − lnΓ(a) − log x! −
    x log(b + 1): the cost is that of the non-zeros times the classes.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> from bayesgen.maths.gamma_poisson import negative_binomial_log_pmf
    >>> shape, rate = np.array([[2.0, 3.0]]), np.array([1.5])
    >>> got = negative_binomial_log_pmf(np.array([[1.0, 4.0]]), shape, rate)
    >>> scipy = stats.nbinom.logpmf([1, 4], shape[0], 1.5 / 2.5).sum()
    >>> bool(np.isclose(got[0, 0], scipy, rtol=1e-14))
    True
    """
    shape = np.asarray(shape, dtype=np.float64)
    rate = np.asarray(rate, dtype=np.float64).reshape(-1)
    rows, columns, counts = _nonzeros(X)
    log_keep, log_grow = np.log(rate / (rate + 1.0)), np.log1p(rate)
    out = np.broadcast_to(shape.sum(axis=1) * log_keep, (X.shape[0], shape.shape[0])).copy()
    cell_shape = shape[:, columns]  # (n_classes, n_nonzeros)
    terms = (
        gammaln(cell_shape + counts)
        - gammaln(cell_shape)
        - gammaln(counts + 1.0)
        - counts * log_grow[:, None]
    )
    for k in range(shape.shape[0]):
        out[:, k] += np.bincount(rows, weights=terms[k], minlength=X.shape[0])
    return out


def leave_one_out_log_pmf(X, y_codes, shape, rate) -> np.ndarray:
    """:func:`negative_binomial_log_pmf` with each row i left out of its own class's posterior.

    Row i's own class y_i loses its counts and one row, Gamma(a_kj − x_ij, b_k − 1); the
    other classes keep the posterior of all the rows. All rows at once, no refit.

    Parameters
    ----------
    X : numpy.ndarray or scipy.sparse matrix of shape (n_samples, n_features)
        The training rows whose statistics ``shape`` and ``rate`` hold (unweighted).
    y_codes : numpy.ndarray of int of shape (n_samples,)
        Their classes, as indices into the first axis of ``shape``.
    shape : numpy.ndarray of shape (n_classes, n_features)
    rate : numpy.ndarray of shape (n_classes,) or (n_classes, 1)

    Returns
    -------
    numpy.ndarray of shape (n_samples, n_classes)
        log p(x_i | y = k, D without row i).
    """
    shape = np.asarray(shape, dtype=np.float64)
    rate = np.asarray(rate, dtype=np.float64).reshape(-1)
    y_codes = np.asarray(y_codes)
    out = negative_binomial_log_pmf(X, shape, rate)
    rows, columns, counts = _nonzeros(X)
    own_rate = rate[y_codes] - 1.0
    own_cells = shape[y_codes[rows], columns]  # a_kj with row i's own counts in it
    # Σ_j (a_kj − x_ij) over all the features, then lnΓ(a) − lnΓ(a − x) − log x! −
    # x log(b' + 1) for each non-zero: lnΓ(a' + x) = lnΓ(a) with a' = a − x.
    row_total = np.bincount(rows, weights=counts, minlength=X.shape[0])
    own = (shape.sum(axis=1)[y_codes] - row_total) * np.log(own_rate / (own_rate + 1.0))
    terms = (
        gammaln(own_cells)
        - gammaln(own_cells - counts)
        - gammaln(counts + 1.0)
        - counts * np.log1p(own_rate[rows])
    )
    out[np.arange(X.shape[0]), y_codes] = own + np.bincount(
        rows, weights=terms, minlength=X.shape[0]
    )
    return out


def log_evidence(
    feature_count, class_count, log_factorial, prior_shape, prior_rate, *, per_class=False
) -> np.ndarray:
    """log p(X | y, a₀, b₀): every count of the training rows given their classes, the rates
    integrated out over Gamma(a₀, b₀).

    Parameters
    ----------
    feature_count : array-like of shape (n_classes, n_features)
        S_kj.
    class_count : array-like of shape (n_classes,)
        N_k.
    log_factorial : array-like of shape (n_classes, n_features) or (n_classes,)
        Σ_i log x_ij! over each class's rows (per feature, or summed over them).
    prior_shape, prior_rate : float or array-like
        a₀, b₀ > 0, of any shapes that broadcast: the evidence of each pair.
    per_class : bool, default False
        Return each class's term on a last axis of length n_classes.

    Returns
    -------
    numpy.ndarray
        Shape ``np.broadcast_shapes(np.shape(prior_shape), np.shape(prior_rate))``, with a
        last axis of the classes where ``per_class``.

    Examples
    --------
    One count of 2 in one row, Gamma(1, 1): ∫ λ² e^(−λ) / 2! e^(−λ) dλ = 1 / 8.

    >>> import numpy as np
    >>> from bayesgen.maths.gamma_poisson import log_evidence
    >>> round(float(np.exp(log_evidence([[2.0]], [1.0], [np.log(2.0)], 1.0, 1.0))), 12)
    0.125
    """
    counts = np.asarray(feature_count, dtype=np.float64)
    rows = np.asarray(class_count, dtype=np.float64)[:, None]
    a0 = np.asarray(prior_shape, dtype=np.float64)[..., None, None]
    b0 = np.asarray(prior_rate, dtype=np.float64)[..., None, None]
    shape, rate = a0 + counts, b0 + rows
    cells = a0 * np.log(b0) - gammaln(a0) + gammaln(shape) - shape * np.log(rate)
    factorials = np.asarray(log_factorial, dtype=np.float64)
    per = cells.sum(axis=-1) - factorials.reshape(factorials.shape[0], -1).sum(axis=1)
    return per if per_class else per.sum(axis=-1)


def _nonzeros(X) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, column, value) of every non-zero entry of dense or sparse X, in row order."""
    if sp.issparse(X):
        X = sp.csr_array(X)
        if not X.has_canonical_format:  # duplicates summed on a copy, the caller's X kept
            X = X.copy()
            X.sum_duplicates()
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        keep = X.data != 0
        return rows[keep], X.indices[keep], X.data[keep].astype(np.float64)
    X = np.asarray(X, dtype=np.float64)
    rows, columns = np.nonzero(X)
    return rows, columns, X[rows, columns]
