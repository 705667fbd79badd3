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

Missing entries (NaN in a dense X) drop out of the likelihood: each cell then has its own
exposure n_kj, the (weighted) rows of class k where feature j is observed, in place of N_k
(Gamma(a₀ + S_kj, b₀ + n_kj), S_kj over the observed entries), and a row's predictive leaves
its missing features' factors out. A rate argument is then (K, D), one per cell, where it is
otherwise one per class.

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
    class_count : array-like of shape (n_classes,), (n_classes, 1) or (n_classes, n_features)
        N_k, the (weighted) rows of each class; or, with missing entries, each cell's exposure
        n_kj (its rows where the feature is observed).

    Returns
    -------
    shape : numpy.ndarray of shape (n_classes, n_features)
    rate : numpy.ndarray of shape (n_classes, 1) or (n_classes, n_features)
        One rate per class, as a column that broadcasts against ``shape``; one per cell for
        cell counts.

    Examples
    --------
    >>> from bayesgen.maths.gamma_poisson import gamma_posterior
    >>> shape, rate = gamma_posterior(1.0, 0.5, [[3.0, 0.0], [1.0, 6.0]], [2.0, 3.0])
    >>> shape.tolist(), rate.ravel().tolist()
    ([[4.0, 1.0], [2.0, 7.0]], [2.5, 3.5])
    """
    shape = prior_shape + np.asarray(feature_count, dtype=np.float64)
    return shape, prior_rate + _per_cell(class_count)


def _per_cell(count) -> np.ndarray:
    """Class counts (K,) as a (K, 1) column, or (K, 1) and cell counts (K, D) as they are."""
    count = np.asarray(count, dtype=np.float64)
    return count[:, None] if count.ndim == 1 else count


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
    """log x! = lnΓ(x + 1) of every entry, sparse where X is (a zero stays 0); 0 for a missing
    entry (NaN), which adds nothing to a likelihood.

    Summed over a class's rows, with :func:`bayesgen.maths.counts.feature_counts`, it is the
    statistic the evidence needs beside the sums of the counts.
    """
    if sp.issparse(X):
        X = sp.csr_array(X, dtype=np.float64, copy=True)
        X.data = gammaln(X.data + 1.0)
        return X
    X = np.asarray(X, dtype=np.float64)
    missing = np.isnan(X)
    if missing.any():
        return gammaln(np.where(missing, 0.0, X) + 1.0)
    return gammaln(X + 1.0)


def negative_binomial_log_pmf(X, shape, rate) -> np.ndarray:
    """Σ_j log NB(x_ij; a_kj, b_k) for every row i and class k: the posterior predictive of a
    row's counts, each rate λ_kj ~ Gamma(a_kj, b_k) integrated out.

    Parameters
    ----------
    X : numpy.ndarray or scipy.sparse matrix of shape (n_samples, n_features)
        Counts ≥ 0; NaN (dense X) where an entry is missing, whose factor drops out.
    shape : numpy.ndarray of shape (n_classes, n_features)
    rate : numpy.ndarray of shape (n_classes,), (n_classes, 1) or (n_classes, n_features)
        One per class, or one per cell (the exposures of data with missing entries).

    Returns
    -------
    numpy.ndarray of shape (n_samples, n_classes)

    Notes
    -----
    A zero count contributes a_kj log(b_kj / (b_kj + 1)), so every row starts from the class's
    Σ_j a_kj log(b_kj / (b_kj + 1)) over its observed features and each non-zero adds
    lnΓ(a + x) − lnΓ(a) − log x! − x log(b + 1): the cost is that of the non-zeros times the
    classes (and, with missing entries, of the entries times the classes).

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
    rate = _rates(rate, shape)
    rows, columns, counts = _nonzeros(X)
    log_keep, log_grow = np.log(rate / (rate + 1.0)), np.log1p(rate)
    out = _zero_count_terms(X, shape, log_keep)
    cell_shape = shape[:, columns]  # (n_classes, n_nonzeros)
    terms = (
        gammaln(cell_shape + counts)
        - gammaln(cell_shape)
        - gammaln(counts + 1.0)
        - counts * np.broadcast_to(log_grow, shape.shape)[:, columns]
    )
    for k in range(shape.shape[0]):
        out[:, k] += np.bincount(rows, weights=terms[k], minlength=X.shape[0])
    return out


def leave_one_out_log_pmf(X, y_codes, shape, rate) -> np.ndarray:
    """:func:`negative_binomial_log_pmf` with each row i left out of its own class's posterior.

    Row i's own class y_i loses its counts and one row, Gamma(a_kj − x_ij, b_k − 1); the
    other classes keep the posterior of all the rows. All rows at once, no refit. With
    missing entries (NaN, ``rate`` per cell) row i leaves only the cells it is observed in,
    Gamma(a_kj − x_ij, b_kj − 1), and its missing features drop out.

    Parameters
    ----------
    X : numpy.ndarray or scipy.sparse matrix of shape (n_samples, n_features)
        The training rows whose statistics ``shape`` and ``rate`` hold (unweighted).
    y_codes : numpy.ndarray of int of shape (n_samples,)
        Their classes, as indices into the first axis of ``shape``.
    shape : numpy.ndarray of shape (n_classes, n_features)
    rate : numpy.ndarray of shape (n_classes,), (n_classes, 1) or (n_classes, n_features)

    Returns
    -------
    numpy.ndarray of shape (n_samples, n_classes)
        log p(x_i | y = k, D without row i).
    """
    shape = np.asarray(shape, dtype=np.float64)
    rate = _rates(rate, shape)
    y_codes = np.asarray(y_codes)
    out = negative_binomial_log_pmf(X, shape, rate)
    missing = _missing(X)
    if missing is not None or rate.shape[1] != 1:
        out[np.arange(X.shape[0]), y_codes] = _own_cells_left_out(X, missing, y_codes, shape, rate)
        return out
    rate = rate[:, 0]
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
    class_count : array-like of shape (n_classes,) or (n_classes, n_features)
        N_k, or each cell's exposure n_kj where entries are missing.
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
    rows = _per_cell(class_count)
    a0 = np.asarray(prior_shape, dtype=np.float64)[..., None, None]
    b0 = np.asarray(prior_rate, dtype=np.float64)[..., None, None]
    shape, rate = a0 + counts, b0 + rows
    cells = a0 * np.log(b0) - gammaln(a0) + gammaln(shape) - shape * np.log(rate)
    factorials = np.asarray(log_factorial, dtype=np.float64)
    per = cells.sum(axis=-1) - factorials.reshape(factorials.shape[0], -1).sum(axis=1)
    return per if per_class else per.sum(axis=-1)


def _rates(rate, shape: np.ndarray) -> np.ndarray:
    """The rates as (K, 1), one per class, or (K, D), one per cell."""
    rate = np.asarray(rate, dtype=np.float64)
    return rate.reshape(shape.shape[0], -1)


def _missing(X) -> np.ndarray | None:
    """Where dense X has missing entries (NaN); None where it has none (or is sparse, whose
    entries are all observed)."""
    if sp.issparse(X):
        return None
    missing = np.isnan(np.asarray(X, dtype=np.float64))
    return missing if missing.any() else None


def _zero_count_terms(X, shape: np.ndarray, log_keep: np.ndarray) -> np.ndarray:
    """Σ_j a_kj log(b_kj / (b_kj + 1)) over the observed features of every row, (n, K): what
    each row's counts would give if they were all zero."""
    missing = _missing(X)
    if missing is None and log_keep.shape[1] == 1:
        per_class = shape.sum(axis=1) * log_keep[:, 0]
        return np.broadcast_to(per_class, (X.shape[0], shape.shape[0])).copy()
    cells = shape * log_keep  # (K, D)
    if missing is None:
        return np.broadcast_to(cells.sum(axis=1), (X.shape[0], shape.shape[0])).copy()
    return (~missing).astype(np.float64) @ cells.T


def _own_cells_left_out(X, missing, y_codes, shape: np.ndarray, rate: np.ndarray) -> np.ndarray:
    """log p(x_i | y_i, D without row i) of dense X with missing entries or per-cell rates:
    each observed cell of row i's class as Gamma(a_kj − x_ij, b_kj − 1)."""
    values = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
    observed = np.ones(values.shape, dtype=bool) if missing is None else ~missing
    values = np.where(observed, values, 0.0)
    own_shape = shape[y_codes]  # (n, D), row i's counts in it
    own_rate = np.broadcast_to(rate[y_codes], values.shape) - 1.0
    held_shape = own_shape - values
    # A missing cell of row i does not hold it (b − 1 may be ≤ 0 there): its term is dropped.
    with np.errstate(invalid="ignore", divide="ignore"):
        terms = (
            held_shape * np.log(own_rate / (own_rate + 1.0))
            + gammaln(own_shape)
            - gammaln(held_shape)
            - gammaln(values + 1.0)
            - values * np.log1p(own_rate)
        )
    return np.where(observed, terms, 0.0).sum(axis=1)


def _nonzeros(X) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, column, value) of every non-zero entry of dense or sparse X, in row order; a
    missing entry (NaN) is none."""
    if sp.issparse(X):
        X = sp.csr_array(X)
        if not X.has_canonical_format:  # duplicates summed on a copy, the caller's X kept
            X = X.copy()
            X.sum_duplicates()
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        keep = X.data != 0
        return rows[keep], X.indices[keep], X.data[keep].astype(np.float64)
    X = np.asarray(X, dtype=np.float64)
    rows, columns = np.nonzero(np.where(np.isnan(X), 0.0, X))
    return rows, columns, X[rows, columns]
