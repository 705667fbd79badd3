"""Gaussian rows with missing coordinates (NaN): marginal densities over the observed ones,
conditional draws of the missing ones, and EM for the normal-inverse-Wishart MAP (NumPy/SciPy).

Marginalising a normal (or a multivariate Student-t) to the observed coordinates O of a row
keeps the sub-vector μ_O of the location and the sub-block Σ_OO of the scale (the same degrees
of freedom). With the precision Λ = Σ⁻¹ and M the missing coordinates, both need only the
M × M block of Λ, which is small (one or two entries for 10 % missing):

* (Σ_OO)⁻¹ = Λ_OO − Λ_OM Λ_MM⁻¹ Λ_MO (Schur complement), so for r = x − μ with r_M set to 0,
  r_Oᵀ (Σ_OO)⁻¹ r_O = rᵀΛr − uᵀ Λ_MM⁻¹ u with u = (Λr)_M;
* log |Σ_OO| = log |Σ| + log |Λ_MM|;
* x_M | x_O ~ N(μ_M − Λ_MM⁻¹ u, Λ_MM⁻¹).

Rows are grouped by how many coordinates they miss (:func:`missing_groups`), so each group is
one batched m × m Cholesky factorisation, whatever the patterns: with 10 % missing at random
almost every row has its own pattern, and grouping by pattern would not batch anything.

EM (:func:`niw_em`) alternates the expected completed-data statistics given the parameters
(conditional means x̂_i and covariances C_i of the missing coordinates) and the conjugate mode
on them. The completed-data log posterior is linear in Σ_i x_i and Σ_i x_i x_iᵀ, so its
expectation is the log posterior of the statistics N_k, x̄_k = mean of x̂_i and
S = Σ_i (x̂_i − x̄_k)(x̂_i − x̄_k)ᵀ + Σ_i C_i, whose mode is closed-form (μ_k = m_k, Σ =
Ψ_N / (ν_N + D + 1 + K) shared, Σ_k = Ψ_k / (ν_k + D + 2) per class). With nothing missing the
first step is the exact mode.
"""

from __future__ import annotations

import numpy as np
from scipy import stats as scipy_stats
from scipy.special import gammaln

from bayesgen.maths.gaussian import gaussian_log_joint, niw_posterior

__all__ = [
    "conditional_draws",
    "expected_statistics",
    "log_joint",
    "marginal_normal_log_density",
    "marginal_t_log_density",
    "missing_groups",
    "niw_em",
    "niw_mode",
    "observed_log_posterior",
]

#: Elements of the (parameter, row, feature) residuals held at once.
_BLOCK_ELEMENTS = 4_000_000


def missing_groups(missing: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The rows that miss m ≥ 1 coordinates, for each m: ``(rows (n_m,), columns (n_m, m))``,
    each row's missing columns in increasing order.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.maths.missing_gaussian import missing_groups
    >>> mask = np.array([[False, True, False], [False, False, False], [True, False, True]])
    >>> [(rows.tolist(), cols.tolist()) for rows, cols in missing_groups(mask)]
    [([0], [[1]]), ([2], [[0, 2]])]
    """
    missing = np.asarray(missing, dtype=bool)
    counts = missing.sum(axis=1)
    groups = []
    for m in np.unique(counts[counts > 0]):
        rows = np.flatnonzero(counts == m)
        columns = np.nonzero(missing[rows])[1].reshape(len(rows), int(m))
        groups.append((rows, columns))
    return groups


def _cholesky(block: np.ndarray) -> np.ndarray:
    """Lower Cholesky factors of a batch (..., m, m) of small positive-definite matrices.

    Column by column, vectorised over the batch: for the m ≤ 10 or so of a row's missing
    coordinates this is several times faster than ``numpy.linalg.cholesky``, whose cost per
    matrix dominates at thousands of tiny matrices.
    """
    m = block.shape[-1]
    chol = np.zeros_like(block)
    for j in range(m):
        pivot = np.sqrt(block[..., j, j] - np.sum(chol[..., j, :j] ** 2, axis=-1))
        chol[..., j, j] = pivot
        if j + 1 < m:
            below = block[..., j + 1 :, j] - np.einsum(
                "...ik,...k->...i", chol[..., j + 1 :, :j], chol[..., j, :j]
            )
            chol[..., j + 1 :, j] = below / pivot[..., None]
    return chol


def _forward(chol: np.ndarray, b: np.ndarray) -> np.ndarray:
    """L⁻¹b for lower-triangular L (..., m, m) and b (..., m), vectorised over the batch."""
    z = np.empty_like(b)
    for i in range(b.shape[-1]):
        z[..., i] = (b[..., i] - np.sum(chol[..., i, :i] * z[..., :i], axis=-1)) / chol[..., i, i]
    return z


def _backward(chol: np.ndarray, b: np.ndarray) -> np.ndarray:
    """L⁻ᵀb for lower-triangular L (..., m, m) and b (..., m), vectorised over the batch."""
    x = np.empty_like(b)
    for i in reversed(range(b.shape[-1])):
        rest = np.sum(chol[..., i + 1 :, i] * x[..., i + 1 :], axis=-1)
        x[..., i] = (b[..., i] - rest) / chol[..., i, i]
    return x


def _symmetric_inverse(cov: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Λ = Σ⁻¹ (symmetrised) and log |Σ| for a batch (..., D, D), through a Cholesky factor."""
    chol = np.linalg.cholesky(cov)
    inverse_chol = np.linalg.inv(chol)
    precision = np.swapaxes(inverse_chol, -1, -2) @ inverse_chol
    log_det = 2.0 * np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(axis=-1)
    return precision, log_det


def _observed_quadratic(X, mean, precision, groups):
    """q[b, i] = (x_iO − μ_bO)ᵀ (Σ_b,OO)⁻¹ (x_iO − μ_bO) and log |Λ_b,MM| of every row i (0
    for a complete row), for locations ``mean`` (B, D) and precisions (B, D, D)."""
    missing = np.isnan(X)
    filled = np.where(missing, 0.0, X)
    n_params, n_rows = mean.shape[0], X.shape[0]
    quadratic = np.empty((n_params, n_rows))
    log_det_missing = np.zeros((n_params, n_rows))
    step = max(1, _BLOCK_ELEMENTS // max(1, n_rows * X.shape[1]))
    for start in range(0, n_params, step):
        part = slice(start, start + step)
        residual = np.where(missing[None], 0.0, filled[None] - mean[part][:, None, :])
        projected = np.einsum("bij,bnj->bni", precision[part], residual)  # Λr
        quadratic[part] = np.einsum("bni,bni->bn", residual, projected)
        for rows, columns in groups:
            u = np.take_along_axis(projected[:, rows], columns[None], axis=2)
            block = precision[part][:, columns[:, :, None], columns[:, None, :]]
            chol = _cholesky(block)
            whitened = _forward(chol, u)
            quadratic[part, rows] -= np.einsum("bnm,bnm->bn", whitened, whitened)
            log_det_missing[part, rows] = 2.0 * np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(
                axis=-1
            )
    return quadratic, log_det_missing


def marginal_normal_log_density(X, mean, cov) -> np.ndarray:
    """log N(x_O | μ_O, Σ_OO) of every row over its observed coordinates O.

    Parameters
    ----------
    X : numpy.ndarray of shape (n, D)
        Rows with NaN where a coordinate is missing; a row with none observed has density 1.
    mean : numpy.ndarray of shape (B, D)
    cov : numpy.ndarray of shape (B, D, D)

    Returns
    -------
    numpy.ndarray of shape (B, n)

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> from bayesgen.maths.missing_gaussian import marginal_normal_log_density
    >>> cov = np.array([[2.0, 0.5], [0.5, 1.0]])
    >>> value = marginal_normal_log_density(np.array([[np.nan, 0.3]]), np.zeros((1, 2)), cov[None])
    >>> bool(np.isclose(value[0, 0], stats.norm.logpdf(0.3, 0.0, 1.0)))
    True
    """
    X = np.asarray(X, dtype=np.float64)
    mean = np.asarray(mean, dtype=np.float64)
    precision, log_det = _symmetric_inverse(np.asarray(cov, dtype=np.float64))
    quadratic, log_det_missing = _observed_quadratic(
        X, mean, precision, missing_groups(np.isnan(X))
    )
    observed = (~np.isnan(X)).sum(axis=1)
    # log |Σ_OO| = log |Σ| + log |Λ_MM|; a row with nothing observed has log |Σ_OO| = 0.
    log_det_observed = np.where(observed > 0, log_det[:, None] + log_det_missing, 0.0)
    return -0.5 * (observed * np.log(2.0 * np.pi) + log_det_observed + quadratic)


def marginal_t_log_density(X, loc, shape, dof) -> np.ndarray:
    """log t_ν(x_O | loc_O, shape_OO) of every row over its observed coordinates O.

    The multivariate Student-t marginalises like the normal: the sub-vector of the location,
    the sub-block of the shape matrix, the same ν. ``loc`` (B, D), ``shape`` (B, D, D), ``dof``
    (B,) or a scalar; returns (B, n), 0 for a row with nothing observed.
    """
    X = np.asarray(X, dtype=np.float64)
    loc = np.asarray(loc, dtype=np.float64)
    dof = np.broadcast_to(np.asarray(dof, dtype=np.float64), (loc.shape[0],))[:, None]
    precision, log_det = _symmetric_inverse(np.asarray(shape, dtype=np.float64))
    quadratic, log_det_missing = _observed_quadratic(X, loc, precision, missing_groups(np.isnan(X)))
    d = (~np.isnan(X)).sum(axis=1)[None, :].astype(np.float64)
    log_det_observed = np.where(d > 0, log_det[:, None] + log_det_missing, 0.0)
    return (
        gammaln((dof + d) / 2.0)
        - gammaln(dof / 2.0)
        - 0.5 * d * np.log(dof * np.pi)
        - 0.5 * log_det_observed
        - 0.5 * (dof + d) * np.log1p(quadratic / dof)
    )


def log_joint(X, class_prob, mu, cov) -> np.ndarray:
    """log N(x_O | μ_kO, Σ_kOO) + log π_k for a batch of parameters, each row over its observed
    coordinates: :func:`bayesgen.maths.gaussian.gaussian_log_joint` where nothing is missing.

    ``class_prob`` (S, K), ``mu`` (S, K, D), ``cov`` (S, K, D, D); returns (S, n, K).
    """
    X = np.asarray(X, dtype=np.float64)
    if not np.isnan(X).any():
        return gaussian_log_joint(X, class_prob, mu, cov)
    n_draws, n_classes, n_features = mu.shape
    density = marginal_normal_log_density(
        X, mu.reshape(-1, n_features), cov.reshape(-1, n_features, n_features)
    ).reshape(n_draws, n_classes, X.shape[0])
    log_class_prob = np.log(np.maximum(class_prob, np.finfo(np.float64).tiny))
    return np.swapaxes(density, 1, 2) + log_class_prob[:, None, :]


def _conditional(X, y_codes, mu, precision, groups):
    """Per group of rows: the columns M, the conditional mean μ_M − Λ_MM⁻¹u and the Cholesky
    factor L of Λ_MM (the conditional covariance is Λ_MM⁻¹ = L⁻ᵀL⁻¹)."""
    if not groups:
        return []
    missing = np.isnan(X)
    residual = np.where(missing, 0.0, X - mu[y_codes])
    if precision.ndim == 2:
        projected = residual @ precision  # Λ symmetric
    else:
        projected = np.einsum("nij,nj->ni", precision[y_codes], residual)
    out = []
    for rows, columns in groups:
        u = np.take_along_axis(projected[rows], columns, axis=1)
        if precision.ndim == 2:
            block = precision[columns[:, :, None], columns[:, None, :]]
        else:
            block = precision[
                y_codes[rows][:, None, None], columns[:, :, None], columns[:, None, :]
            ]
        chol = _cholesky(block)
        mean = np.take_along_axis(mu[y_codes[rows]], columns, axis=1)
        mean -= _backward(chol, _forward(chol, u))  # Λ_MM⁻¹u
        out.append((rows, columns, mean, chol))
    return out


def conditional_draws(X, y_codes, mu, cov, rng, *, groups=None) -> np.ndarray:
    """A copy of X whose missing entries are drawn from x_M | x_O ~ N(μ_M − Λ_MM⁻¹u, Λ_MM⁻¹),
    given each row's class mean μ_{y_i} and covariance (``cov`` (D, D) shared or (K, D, D)).

    ``groups``: :func:`missing_groups` of ``np.isnan(X)``, computed once by a sampler.
    """
    X = np.asarray(X, dtype=np.float64)
    groups = missing_groups(np.isnan(X)) if groups is None else groups
    precision, _ = _symmetric_inverse(np.asarray(cov, dtype=np.float64))
    completed = X.copy()
    for rows, columns, mean, chol in _conditional(X, y_codes, mu, precision, groups):
        noise = rng.standard_normal(mean.shape)
        draw = mean + _backward(chol, noise)  # L⁻ᵀz has covariance Λ_MM⁻¹
        completed[rows[:, None], columns] = draw
    return completed


def expected_statistics(
    X, y_codes, n_classes: int, mu, cov, *, shared: bool, groups=None, weights=None
):
    """The expected completed-data statistics given (μ, Σ): class counts N_k, class means of
    x̂_i and the scatter Σ_i (x̂_i − x̄_k)(x̂_i − x̄_k)ᵀ + C_i, pooled (D, D) where ``shared``
    (``cov`` (D, D)), per class (K, D, D) otherwise; x̂_i the conditional mean of row i, C_i
    the conditional covariance of its missing coordinates. ``weights``: row i counts w_i
    times. Without missing entries these are the statistics of X (μ and Σ unused).
    """
    X = np.asarray(X, dtype=np.float64)
    groups = missing_groups(np.isnan(X)) if groups is None else groups
    completed = X.copy()
    w = np.ones(X.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    n_features = X.shape[1]
    extra = np.zeros((n_classes, n_features, n_features))
    precision = _symmetric_inverse(np.asarray(cov, dtype=np.float64))[0] if groups else None
    for rows, columns, mean, chol in _conditional(X, y_codes, mu, precision, groups):
        completed[rows[:, None], columns] = mean
        inverse_chol = np.linalg.inv(chol)
        conditional_cov = np.swapaxes(inverse_chol, -1, -2) @ inverse_chol
        index = (y_codes[rows][:, None, None], columns[:, :, None], columns[:, None, :])
        np.add.at(extra, index, conditional_cov * w[rows][:, None, None])
    one_hot = np.zeros((X.shape[0], n_classes))
    one_hot[np.arange(X.shape[0]), y_codes] = w
    count = one_hot.sum(axis=0)
    safe = np.where(count > 0, count, 1.0)
    class_mean = (one_hot.T @ completed) / safe[:, None]
    centred = completed - class_mean[y_codes]
    weighted = centred * w[:, None]
    if shared:
        scatter = weighted.T @ centred + extra.sum(axis=0)
    else:
        scatter = np.stack(
            [weighted[y_codes == k].T @ centred[y_codes == k] for k in range(n_classes)]
        )
        scatter = scatter + extra
    return count, class_mean, scatter


def niw_mode(class_count, class_mean, scatter, prior: dict) -> tuple[np.ndarray, np.ndarray]:
    """The joint mode (μ, Σ) of the normal-inverse-Wishart posterior of the statistics:
    μ_k = m_k and Σ = Ψ_N / (ν_N + D + 1 + K) for a pooled scatter (D, D), Σ_k = Ψ_k / (ν_k +
    D + 2) for per-class scatters (K, D, D)."""
    n_features = class_mean.shape[1]
    if scatter.ndim == 2:
        post = niw_posterior(class_count, class_mean, scatter, prior)
        cov = post["scale"] / (post["dof"] + n_features + 1 + len(class_count))
        return post["mean"], cov
    mu, cov = np.empty_like(class_mean), np.empty_like(scatter)
    for k in range(len(class_count)):
        post = niw_posterior(class_count[k : k + 1], class_mean[k : k + 1], scatter[k], prior)
        mu[k] = post["mean"][0]
        cov[k] = post["scale"] / (post["dof"] + n_features + 2)
    return mu, cov


def observed_log_posterior(X, y_codes, mu, cov, prior: dict, *, weights=None) -> float:
    """log p(μ, Σ | observed entries) up to a constant: Σ_i w_i log N(x_iO | μ_{y_i}O, Σ_OO)
    plus the normal-inverse-Wishart prior density of (μ, Σ) (``cov`` (D, D) shared by the
    classes, or (K, D, D) each with its own prior)."""
    X = np.asarray(X, dtype=np.float64)
    mu = np.asarray(mu, dtype=np.float64)
    n_classes = mu.shape[0]
    shared = np.ndim(cov) == 2
    covs = np.broadcast_to(cov, (n_classes, *np.shape(cov)[-2:]))
    density = marginal_normal_log_density(X, mu, covs)  # (K, n)
    w = np.ones(X.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    total = float(np.sum(w * density[y_codes, np.arange(X.shape[0])]))
    for k in range(n_classes):
        total += scipy_stats.multivariate_normal.logpdf(
            mu[k], prior["mean"], covs[k] / prior["kappa"]
        )
    for k in range(1 if shared else n_classes):
        total += scipy_stats.invwishart.logpdf(covs[k], df=prior["dof"], scale=prior["scale"])
    return total


def niw_em(
    X,
    y_codes,
    n_classes: int,
    prior: dict,
    *,
    shared: bool,
    weights=None,
    tol: float = 1e-10,
    max_iter: int = 1000,
) -> dict:
    """EM for the mode of p(μ, Σ | observed entries) under the normal-inverse-Wishart prior.

    Starts from the statistics of X with each missing entry at its class's observed mean,
    then alternates :func:`expected_statistics` and :func:`niw_mode` until the largest change
    of μ and Σ, relative to the scale of each feature, is below ``tol``.

    Returns
    -------
    dict
        ``mu`` (K, D), ``cov`` ((D, D) where ``shared``, else (K, D, D)), the expected
        statistics at the mode (``class_count``, ``class_mean``, ``scatter``), ``iterations``
        and ``converged``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.maths.missing_gaussian import niw_em
    >>> X = np.array([[0.1, 0.3], [np.nan, -0.2], [-0.4, 0.1], [2.1, np.nan], [1.8, 2.2],
    ...               [2.3, 1.9]])
    >>> y_codes = np.array([0, 0, 0, 1, 1, 1])
    >>> prior = {"mean": np.zeros(2), "kappa": 1.0, "dof": 4.0, "scale": np.eye(2)}
    >>> result = niw_em(X, y_codes, 2, prior, shared=False)
    >>> result["converged"], result["mu"].shape, result["cov"].shape  # a Σ_k per class
    (True, (2, 2), (2, 2, 2))
    >>> result["class_count"].tolist()
    [3.0, 3.0]

    With nothing missing the first step is the exact mode:

    >>> niw_em(np.nan_to_num(X), y_codes, 2, prior, shared=True)["iterations"]
    1
    """
    X = np.asarray(X, dtype=np.float64)
    y_codes = np.asarray(y_codes)
    missing = np.isnan(X)
    groups = missing_groups(missing)
    # A start: each missing entry at its class's observed mean (the feature's where the class
    # has none observed), and no conditional covariance.
    start = X.copy()
    overall = np.nanmean(X, axis=0)
    observed = np.where(missing, 0.0, X)
    for k in range(n_classes):
        rows = y_codes == k
        n_observed = (~missing[rows]).sum(axis=0)
        total = observed[rows].sum(axis=0)
        class_mean = np.where(n_observed > 0, total / np.maximum(n_observed, 1), overall)
        start[rows] = np.where(missing[rows], class_mean, X[rows])
    count, class_mean, scatter = expected_statistics(
        start, y_codes, n_classes, None, None, shared=shared, groups=[], weights=weights
    )
    mu, cov = niw_mode(count, class_mean, scatter, prior)
    scale = np.sqrt(np.diag(np.asarray(prior["scale"], dtype=np.float64)))
    converged, iterations = not groups, 1
    while not converged and iterations < max_iter:
        count, class_mean, scatter = expected_statistics(
            X, y_codes, n_classes, mu, cov, shared=shared, groups=groups, weights=weights
        )
        new_mu, new_cov = niw_mode(count, class_mean, scatter, prior)
        change = max(
            np.max(np.abs(new_mu - mu) / scale),
            np.max(np.abs(new_cov - cov) / np.outer(scale, scale)),
        )
        mu, cov, iterations = new_mu, new_cov, iterations + 1
        converged = change < tol
    if groups:  # the statistics at the final point
        count, class_mean, scatter = expected_statistics(
            X, y_codes, n_classes, mu, cov, shared=shared, groups=groups, weights=weights
        )
    return {
        "mu": mu,
        "cov": cov,
        "class_count": count,
        "class_mean": class_mean,
        "scatter": scatter,
        "iterations": iterations,
        "converged": bool(converged),
    }
