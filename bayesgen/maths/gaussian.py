"""Gaussian closed forms: the normal-inverse-Wishart prior and posterior, its Student-t
predictive with and without one row (exact leave-one-out), the linear form of GDA, the full
log density and simulation of rows, and the check that a pooled covariance can be inverted
(NumPy and SciPy).

:mod:`bayesgen.closed_form` re-exports every public name, its home before 0.2; the GDA and
QDA families (:mod:`bayesgen.families`) build on them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from bayesgen.maths.counts import class_means


@dataclass(frozen=True)
class NormalInverseWishart:
    """Conjugate prior for GDA with a shared covariance.

    Σ ~ InverseWishart(ν₀, Ψ₀) and μ_k | Σ ~ N(m₀, Σ / κ₀) independently for each class.
    Given class counts N_k, class means x̄_k and the pooled within-class scatter S, the posterior
    is Σ | data ~ InverseWishart(ν_N, Ψ_N) and μ_k | Σ, data ~ N(m_k, Σ / κ_k) with

    * κ_k = κ₀ + N_k,  m_k = (κ₀ m₀ + N_k x̄_k) / κ_k
    * ν_N = ν₀ + N,    Ψ_N = Ψ₀ + S + Σ_k (κ₀ N_k / κ_k) (x̄_k - m₀)(x̄_k - m₀)ᵀ

    so E[μ_k | data] = m_k and E[Σ | data] = Ψ_N / (ν_N - D - 1).

    Parameters
    ----------
    mean : array-like of shape (n_features,), optional
        m₀. Default: the grand mean of X (centres the prior on the data's location).
    kappa : float, default 0.01
        κ₀, the prior's weight on m₀ in pseudo-observations: 0.01 is weak (prior sd of μ_k
        is 10 times the within-class sd).
    dof : float, optional
        ν₀ > D - 1. Default D + 2, the fewest degrees of freedom for which E[Σ] exists.
    scale : array-like of shape (n_features, n_features), optional
        Ψ₀, positive definite. Default (ν₀ - D - 1) diag(s²) with s² the overall variance of each
        feature, so that the prior mean of Σ is diag(s²) (for ν₀ ≤ D + 1, where that mean does
        not exist, diag(s²)).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.closed_form import NormalInverseWishart, gda
    >>> X = np.array([[0.0, 1.0], [1.0, 0.5], [0.5, 0.0], [3.0, 3.5], [4.0, 3.0], [3.5, 4.0]])
    >>> prior = NormalInverseWishart(kappa=1.0)
    >>> resolved = prior.resolve(X, ["x0", "x1"])
    >>> resolved["mean"].tolist(), float(resolved["dof"])
    ([2.0, 2.0], 4.0)
    >>> gda(X, [0, 0, 0, 1, 1, 1], prior=prior)["mu"].values.round(3).tolist()
    [[0.875, 0.875], [3.125, 3.125]]
    """

    mean: np.ndarray | None = None
    kappa: float = 0.01
    dof: float | None = None
    scale: np.ndarray | None = None

    def resolve(self, X: np.ndarray, feature_names) -> dict:
        """Fill the data-dependent defaults; returns m₀, κ₀, ν₀, Ψ₀ as arrays."""
        return self.resolve_moments(X.mean(axis=0), X.var(axis=0), feature_names)

    def resolve_moments(self, data_mean, data_variance, feature_names) -> dict:
        """:meth:`resolve` from the data's overall mean and variance of each feature alone
        (which the sufficient statistics give, see :func:`overall_moments`: so a fit merged
        from chunks, or with sample weights, resolves the same prior as one on all rows)."""
        data_mean = np.asarray(data_mean, dtype=np.float64)
        variance = np.asarray(data_variance, dtype=np.float64)
        n_features = data_mean.shape[0]
        dof = float(n_features + 2 if self.dof is None else self.dof)
        if dof <= n_features - 1:
            raise ValueError(
                f"prior dof: expected ν₀ > n_features - 1 = {n_features - 1}; got {dof}."
            )
        if not self.kappa > 0:
            raise ValueError(f"prior kappa: expected κ₀ > 0; got {self.kappa}.")
        mean = data_mean if self.mean is None else np.asarray(self.mean, dtype=np.float64)
        if self.scale is None:
            constant = np.flatnonzero(variance <= 1e-12 * (data_mean**2 + 1e-300))
            if constant.size:
                names = [str(feature_names[j]) for j in constant[:10]]
                raise ValueError(
                    f"X: features {names} are constant, so the default prior scale has no "
                    "variance to centre on. Drop those features."
                )
            # (ν₀ - D - 1) diag(s²) puts the prior mean of Σ on diag(s²); that mean exists only
            # for ν₀ > D + 1, below which Ψ₀ = diag(s²).
            excess = dof - n_features - 1
            scale = np.diag(variance) * (excess if excess > 0 else 1.0)
        else:
            scale = np.asarray(self.scale, dtype=np.float64)
        if mean.shape != (n_features,) or scale.shape != (n_features, n_features):
            raise ValueError(
                f"prior: expected mean of shape ({n_features},) and scale of shape "
                f"({n_features}, {n_features}); got {mean.shape} and {scale.shape}."
            )
        if not np.allclose(scale, scale.T) or np.linalg.eigvalsh(scale).min() <= 0:
            raise ValueError("prior scale: expected a symmetric positive-definite matrix Ψ₀.")
        return {"mean": mean, "kappa": float(self.kappa), "dof": dof, "scale": scale}


#: The default prior of GDA and QDA: weak and centred on the data (one instance serves: frozen).
DEFAULT_PRIOR = NormalInverseWishart()


def overall_moments(class_count, class_mean, scatter) -> tuple[np.ndarray, np.ndarray]:
    """The overall mean and (population) variance of each feature, from the class counts N_k,
    class means x̄_k and the within-class scatter (D, D) pooled, or (K, D, D) one per class.

    mean = Σ_k N_k x̄_k / N and variance = (diag S + Σ_k N_k (x̄_k − mean)²) / N: what
    ``X.mean(axis=0)`` and ``X.var(axis=0)`` give on the rows (weighted rows alike).
    """
    count = np.asarray(class_count, dtype=np.float64)
    total = count.sum()
    mean = count @ class_mean / total
    within = np.diagonal(scatter, axis1=-2, axis2=-1)
    within = within.sum(axis=0) if within.ndim == 2 else within
    between = count @ np.square(class_mean - mean)
    return mean, (within + between) / total


def merge_class_moments(first: tuple, second: tuple) -> tuple[np.ndarray, ...]:
    """Class counts, means and scatters of two sets of rows, merged (Chan et al.'s parallel
    update of Welford's algorithm).

    Each argument is ``(count (K,), mean (K, D), scatter)`` with the scatter pooled over the
    classes (D, D) or one per class (K, D, D). Per class, with n = n_a + n_b and
    δ = x̄_b − x̄_a: x̄ = x̄_a + δ n_b / n and S = S_a + S_b + (n_a n_b / n) δ δᵀ; a pooled
    scatter adds every class's term. A class without weight in both keeps mean 0.
    """
    count_a, mean_a, scatter_a = (np.asarray(part, dtype=np.float64) for part in first)
    count_b, mean_b, scatter_b = (np.asarray(part, dtype=np.float64) for part in second)
    count = count_a + count_b
    safe = np.where(count > 0, count, 1.0)
    delta = mean_b - mean_a
    mean = mean_a + delta * (count_b / safe)[:, None]
    # A class present on one side only takes that side's mean exactly (no rounding of δ).
    mean = np.where(
        (count_a == 0)[:, None], mean_b, np.where((count_b == 0)[:, None], mean_a, mean)
    )
    shift = np.einsum("k,ki,kj->kij", count_a * count_b / safe, delta, delta)
    scatter = scatter_a + scatter_b + (shift.sum(axis=0) if scatter_a.ndim == 2 else shift)
    return count, mean, scatter


def class_means_and_scatters(
    X: np.ndarray, y: np.ndarray, n_classes: int, weights=None
) -> tuple[np.ndarray, np.ndarray]:
    """Class means x̄_k (n_classes, n_features) and the class scatters
    S_k = Σ_{i: y_i = k} w_i (x_i − x̄_k)(x_i − x̄_k)ᵀ (n_classes, n_features, n_features),
    w_i = 1 by default; a class without rows has mean 0 and scatter 0."""
    means = class_means(X, y, n_classes, weights)
    centered = X - means[y]
    weighted = centered if weights is None else centered * np.asarray(weights)[:, None]
    scatter = np.stack([weighted[y == k].T @ centered[y == k] for k in range(n_classes)])
    return means, scatter


def niw_posterior(class_count, class_mean, scatter, prior: dict) -> dict:
    """Hyperparameters (m_k, κ_k, ν_N, Ψ_N) of the normal-inverse-Wishart posterior.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.closed_form import niw_posterior
    >>> prior = {"mean": np.zeros(1), "kappa": 1.0, "dof": 3.0, "scale": np.eye(1)}
    >>> post = niw_posterior(np.array([3.0]), np.array([[2.0]]), np.array([[1.5]]), prior)
    >>> post["mean"].tolist(), post["kappa"].tolist(), float(post["dof"])
    ([[1.5]], [4.0], 6.0)
    >>> post["scale"].tolist()  # 1 + 1.5 + (1 * 3 / 4) * 2^2
    [[5.5]]
    """
    kappa_post = prior["kappa"] + class_count
    mean_post = (prior["kappa"] * prior["mean"] + class_count[:, None] * class_mean) / kappa_post[
        :, None
    ]
    offset = class_mean - prior["mean"]
    shrink = prior["kappa"] * class_count / kappa_post
    scale_post = prior["scale"] + scatter + np.einsum("k,ki,kj->ij", shrink, offset, offset)
    return {
        "mean": mean_post,
        "kappa": kappa_post,
        "dof": prior["dof"] + class_count.sum(),
        "scale": scale_post,
    }


def gda_linear_form(class_prob, mu, cov) -> tuple[np.ndarray, np.ndarray]:
    """Softmax form of GDA: w_k = Σ⁻¹μ_k and b_k = -½ μ_kᵀ Σ⁻¹ μ_k + log π_k.

    Works on a batch of draws: ``class_prob`` (..., K), ``mu`` (..., K, D), ``cov`` (..., D, D).
    Two classes reduce to the logistic θ = w_1 - w_0, θ₀ = b_1 - b_0.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.closed_form import gda_linear_form
    >>> coef, intercept = gda_linear_form(np.array([0.5, 0.5]), np.array([[0.0], [2.0]]), np.eye(1))
    >>> coef.tolist()
    [[0.0], [2.0]]
    >>> (intercept - np.log(0.5)).tolist()  # -1/2 mu_k^2
    [0.0, -2.0]
    """
    mu = np.asarray(mu)
    coef = np.linalg.solve(cov[..., None, :, :], mu[..., None])[..., 0]
    with np.errstate(divide="ignore"):
        intercept = -0.5 * np.sum(mu * coef, axis=-1) + np.log(class_prob)
    return coef, intercept


def check_pooled_covariance(
    scatter: np.ndarray, class_count: np.ndarray, feature_names, class_mean=None
) -> None:
    """Raise a ValueError naming the features when the pooled covariance is singular.

    A feature counts as constant within classes when its within-class scatter is below 1e-12
    of its own sum of squares Σ_i x_ij² = S_jj + Σ_k N_k x̄_kj² (so features in very different
    units are judged each on its own scale); that needs ``class_mean`` (n_classes,
    n_features). Without it, the scatter is compared with the largest one.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.closed_form import check_pooled_covariance
    >>> scatter = np.array([[4.0, 0.0], [0.0, 0.0]])  # feature "b" is constant within classes
    >>> try:
    ...     check_pooled_covariance(scatter, np.array([2.0, 2.0]), ["a", "b"])
    ... except ValueError as error:
    ...     print(error)
    X: the pooled covariance is singular because features ['b'] do not vary within classes.
    Drop them, or fit with a prior (prior=NormalInverseWishart()).
    """
    n_samples, n_classes = class_count.sum(), len(class_count)
    n_features = scatter.shape[0]
    variance = np.diag(scatter)
    if class_mean is None:
        reference = max(np.abs(variance).max(), np.finfo(float).tiny)
    else:
        reference = variance + np.asarray(class_count) @ np.square(class_mean)
    constant = np.flatnonzero(variance <= 1e-12 * reference)
    if constant.size:
        names = [str(feature_names[j]) for j in constant[:10]]
        raise ValueError(
            f"X: the pooled covariance is singular because features {names} do not vary "
            "within classes. Drop them, or fit with a prior (prior=NormalInverseWishart())."
        )
    if n_samples - n_classes < n_features:
        raise ValueError(
            f"X: the pooled covariance is singular: {int(n_samples)} samples in {n_classes} "
            f"classes leave {int(n_samples - n_classes)} degrees of freedom for {n_features} "
            "features. Use fewer features, more rows, or a prior (prior=NormalInverseWishart())."
        )
    std = np.sqrt(variance)
    correlation = scatter / np.outer(std, std)
    eigenvalues, eigenvectors = np.linalg.eigh(correlation)
    null = eigenvalues < 1e-10 * n_features
    if np.any(null):
        loadings = np.abs(eigenvectors[:, null]).max(axis=1)
        involved = [str(feature_names[j]) for j in np.flatnonzero(loadings > 1e-3)[:10]]
        raise ValueError(
            f"X: the pooled covariance is singular because features {involved} are collinear "
            "(one is a linear combination of the others within classes). Drop one of them, or "
            "fit with a prior (prior=NormalInverseWishart())."
        )


#: Elements of the whitened differences held at once by :func:`gaussian_log_joint`.
_BLOCK_ELEMENTS = 4_000_000


def gaussian_log_joint(X, class_prob, mu, cov) -> np.ndarray:
    """log N(x | μ_k, Σ_k) + log π_k for a batch of parameters.

    ``class_prob`` (S, K), ``mu`` (S, K, D), ``cov`` (S, K, D, D); returns (S, n, K). Each Σ_k
    enters through its Cholesky factor L (log |Σ| = 2 Σ log L_ii, the quadratic form |L⁻¹(x −
    μ)|²), computed for blocks of draws so that the whitened differences stay small.
    """
    X = np.asarray(X, dtype=np.float64)
    n_draws, n_classes, n_features = mu.shape
    n_rows = X.shape[0]
    chol = np.linalg.cholesky(cov)
    inverse_chol = np.linalg.inv(chol)  # D is small; one batched inverse beats S·K solves
    log_det = 2 * np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(axis=-1)  # (S, K)
    # Draws of π that underflowed to 0 (float32) are clipped to the smallest normal number.
    log_class_prob = np.log(np.maximum(class_prob, np.finfo(np.float64).tiny))
    constant = -0.5 * (n_features * np.log(2 * np.pi) + log_det) + log_class_prob
    whitened_mu = np.einsum("skij,skj->ski", inverse_chol, mu)
    out = np.empty((n_draws, n_rows, n_classes))
    step = max(1, _BLOCK_ELEMENTS // max(1, n_classes * n_rows * n_features))
    # Huge X may overflow here; normalize_log_proba then names the row instead of a warning.
    with np.errstate(over="ignore", invalid="ignore"):
        for start in range(0, n_draws, step):
            block = slice(start, start + step)
            whitened = np.einsum("nj,skij->skni", X, inverse_chol[block])
            whitened -= whitened_mu[block][:, :, None, :]
            quadratic = np.einsum("skni,skni->snk", whitened, whitened)
            out[block] = constant[block][:, None, :] - 0.5 * quadratic
    return out


def gaussian_rows(mu: np.ndarray, cov: np.ndarray, y_codes: np.ndarray, rng) -> np.ndarray:
    """Rows x_i ~ N(μ_{y_i}, Σ_{y_i}) for one draw: ``mu`` (K, D) and ``cov`` (K, D, D), or
    (D, D) shared by the classes (GDA)."""
    mu = np.asarray(mu, dtype=np.float64)
    cov = np.broadcast_to(np.asarray(cov, dtype=np.float64), (mu.shape[0], *mu.shape[-1:] * 2))
    chol = np.linalg.cholesky(cov)
    noise = rng.standard_normal((len(y_codes), mu.shape[1]))
    return mu[y_codes] + np.einsum("nij,nj->ni", chol[y_codes], noise)


def niw_predictive_log_density(quadratic, log_det_scale, kappa, dof, n_features: int):
    """log p(x | m, κ, ν, Ψ): the normal-inverse-Wishart posterior predictive, in full.

    Integrating μ and Σ out of N(x | μ, Σ) under μ | Σ ~ N(m, Σ / κ), Σ ~ InverseWishart(ν, Ψ)
    gives a multivariate Student-t with ν − D + 1 degrees of freedom, location m and shape
    Ψ (κ + 1) / (κ (ν − D + 1)), whose log density is

        log Γ((ν + 1) / 2) − log Γ((ν − D + 1) / 2) − (D / 2) log(π (κ + 1) / κ)
        − ½ log |Ψ| − ((ν + 1) / 2) log(1 + κ q / (κ + 1)),

    with q = (x − m)ᵀ Ψ⁻¹ (x − m). Every argument broadcasts against the others.

    Parameters
    ----------
    quadratic : array-like
        q for each point (and class).
    log_det_scale : array-like
        log |Ψ|.
    kappa, dof : array-like
        κ and ν of the posterior (ν > D − 1).
    n_features : int
        D.
    """
    kappa = np.asarray(kappa, dtype=np.float64)
    dof = np.asarray(dof, dtype=np.float64)
    ratio = kappa / (kappa + 1.0)
    return (
        gammaln((dof + 1.0) / 2.0)
        - gammaln((dof - n_features + 1.0) / 2.0)
        - 0.5 * n_features * np.log(np.pi / ratio)
        - 0.5 * log_det_scale
        - 0.5 * (dof + 1.0) * np.log1p(ratio * quadratic)
    )


def niw_leave_one_out_log_density(X, y_codes, posterior: dict) -> np.ndarray:
    """log p(x_i | y = k, D without row i) for every row i and class k, exactly.

    ``posterior`` holds (m_k, κ_k, ν, Ψ) of the normal-inverse-Wishart posterior given all the
    rows D: ``scale`` Ψ of shape (D, D) is shared by the classes (GDA), of shape (K, D, D) one
    per class (QDA, whose ``dof`` is then one ν_k per class). Taking row i (of class c = y_i)
    out of the posterior changes only what row i entered:

    * κ_c' = κ_c − 1,  m_c' = (κ_c m_c − x_i) / (κ_c − 1),  ν' = ν − 1 (QDA: ν_c' = ν_c − 1)
    * Ψ' = Ψ − (κ_c / (κ_c − 1)) u uᵀ with u = x_i − m_c: the update that adds a point, run
      backwards (Ψ_c for QDA; the shared Ψ, so every class's predictive, for GDA).

    Each predictive is then :func:`niw_predictive_log_density`, with Ψ' through the matrix
    determinant lemma and Sherman–Morrison on one Cholesky factor L of Ψ: for ũ = L⁻¹u,
    ṽ = L⁻¹(x_i − m), q = |ũ|², c = κ_c / (κ_c − 1) and g = 1 − c q,

    * log |Ψ'| = log |Ψ| + log g,  (x_i − m)ᵀ Ψ'⁻¹ (x_i − m) = |ṽ|² + c (ũ·ṽ)² / g,

    and for the own class, where x_i − m_c' = c u, the quadratic form is c² q / g. All rows
    together cost O(n K D²), without a refit.

    Parameters
    ----------
    X : numpy.ndarray of shape (n_samples, n_features)
        The training rows.
    y_codes : numpy.ndarray of int, shape (n_samples,)
        Their classes, as indices into the classes of ``posterior``.
    posterior : dict
        ``mean`` (K, D), ``kappa`` (K,), ``dof`` (scalar or (K,)), ``scale`` ((D, D) or
        (K, D, D)), as :func:`niw_posterior` returns them.

    Returns
    -------
    numpy.ndarray of shape (n_samples, n_classes)
    """
    X = np.asarray(X, dtype=np.float64)
    y_codes = np.asarray(y_codes)
    mean = np.asarray(posterior["mean"], dtype=np.float64)
    kappa = np.asarray(posterior["kappa"], dtype=np.float64)
    dof = np.asarray(posterior["dof"], dtype=np.float64)
    scale = np.asarray(posterior["scale"], dtype=np.float64)
    n_rows, n_features = X.shape
    rows = np.arange(n_rows)
    shared = scale.ndim == 2
    chol = np.linalg.cholesky(scale)
    inverse_chol = np.linalg.inv(chol)  # D is small; one inverse beats n K solves
    log_det = 2.0 * np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(axis=-1)
    if shared:
        whitened = (X @ inverse_chol.T)[:, None, :] - (mean @ inverse_chol.T)[None]
    else:
        whitened = np.einsum("kij,nj->nki", inverse_chol, X) - np.einsum(
            "kij,kj->ki", inverse_chol, mean
        )
    quadratic = np.einsum("nki,nki->nk", whitened, whitened)  # (n, K), Ψ of all rows
    own_whitened = whitened[rows, y_codes]  # ũ, whitened by the own class's factor
    own_quadratic = quadratic[rows, y_codes]
    own_kappa = kappa[y_codes]
    shrink = own_kappa / (own_kappa - 1.0)  # c
    remaining = 1.0 - shrink * own_quadratic  # g > 0: Ψ' keeps at least Ψ₀
    if shared:
        cross = np.einsum("ni,nki->nk", own_whitened, whitened)
        quadratic = quadratic + shrink[:, None] * cross**2 / remaining[:, None]
        log_det = log_det + np.log(remaining)[:, None]
        kappa = np.broadcast_to(kappa, quadratic.shape).copy()
        dof = np.broadcast_to(dof - 1.0, quadratic.shape).copy()
    else:
        log_det = np.broadcast_to(log_det, quadratic.shape).copy()
        log_det[rows, y_codes] += np.log(remaining)
        kappa = np.broadcast_to(kappa, quadratic.shape).copy()
        dof = np.broadcast_to(dof, quadratic.shape).copy()
        dof[rows, y_codes] -= 1.0
    quadratic[rows, y_codes] = shrink**2 * own_quadratic / remaining
    kappa[rows, y_codes] -= 1.0
    return niw_predictive_log_density(quadratic, log_det, kappa, dof, n_features)
