"""Joint statistics of each posterior draw whose exact law is known: what the marginal checks
cannot see.

:func:`bayesgen.compare` checks every parameter's mean and SD. A posterior whose Dirichlet
concentrations are all 10 % too large keeps its means, and moves each SD by 5 %, within the
Monte Carlo error of one parameter; summed over a vocabulary, the effect is many errors wide.
For a Dirichlet(a) simplex θ the sum of log-probabilities T = Σ_j log θ_j has exact cumulants:
θ is independent of the Gamma total behind it, so κ_n(T) = Σ_j ψ⁽ⁿ⁻¹⁾(a_j) − Kⁿ ψ⁽ⁿ⁻¹⁾(a₀)
(K the simplex's size, a₀ = Σ a_j), and independent simplices add. Each draw's
r = (T − E[T]) / SD[T] then has mean 0 and variance 1; its fourth moment is 3 + κ₄ / κ₂².
Two checks per statistic: the mean of r (location) and the mean of r² − 1 (spread). Where λ is
itself drawn (a hyperprior), E[T | λ] and SD[T | λ] are those of each draw's own λ, so λ draws
shuffled against θ, or θ drawn at a fixed λ, make r too wide.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import polygamma

from bayesgen.maths.diagnostics import mc_diagnostics


@dataclass(frozen=True)
class JointStatistic:
    """One standardised statistic per draw, and what it is.

    Attributes
    ----------
    name : str
        E.g. ``"Σ log feature_prob"``.
    variable : str
        The posterior variable it is a function of.
    standardised : ndarray of shape (chain, draw)
        r = (T − E[T | λ]) / SD[T | λ] of each draw.
    fourth_moment : float or None
        E[r⁴] under the posterior where it is known exactly (one λ); None to estimate it from
        the draws.
    skewness : float or None
        E[r³] where it is known exactly; None to estimate it from the draws.
    """

    name: str
    variable: str
    standardised: np.ndarray
    fourth_moment: float | None
    skewness: float | None = None


def dirichlet_log_sum_cumulants(concentration: np.ndarray) -> tuple[float, float, float]:
    """Mean, variance, third and fourth cumulant of T = Σ log θ over every simplex of
    ``concentration`` (last axis; zero cells are padding, left out).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.maths.joint_statistics import dirichlet_log_sum_cumulants
    >>> mean, var, _, _ = dirichlet_log_sum_cumulants(np.array([[2.0, 3.0]]))
    >>> rng = np.random.default_rng(0)
    >>> t = np.log(rng.dirichlet([2.0, 3.0], size=200_000)).sum(axis=1)
    >>> bool(abs(t.mean() - mean) < 0.01), bool(abs(t.var() / var - 1) < 0.02)
    (True, True)
    """
    a = np.asarray(concentration, dtype=np.float64)
    valid = a > 0
    size = valid.sum(axis=-1)
    total = a.sum(axis=-1)
    safe = np.where(valid, a, 1.0)
    moments = []
    for order in range(3):
        cells = np.where(valid, polygamma(order, safe), 0.0).sum(axis=-1)
        whole = polygamma(order, np.where(size > 0, total, 1.0))
        moments.append(float(np.sum(cells - size ** (order + 1) * whole)))
    mean, variance, third = moments
    fourth = float(
        np.sum(
            np.where(valid, polygamma(3, safe), 0.0).sum(axis=-1)
            - size**4 * polygamma(3, np.where(size > 0, total, 1.0))
        )
    )
    return mean, variance, third, fourth


def log_sum(draws: np.ndarray, concentration: np.ndarray) -> np.ndarray:
    """T = Σ log θ of each draw (leading dims of ``draws``), over the cells of
    ``concentration`` that are not padding; draws that underflowed to 0 are clipped to the
    smallest normal number."""
    values = np.log(np.maximum(np.asarray(draws, dtype=np.float64), np.finfo(np.float64).tiny))
    valid = np.asarray(concentration) > 0
    tail = tuple(range(values.ndim - valid.ndim, values.ndim))
    return np.where(valid, values, 0.0).sum(axis=tail)


def fixed_statistic(name: str, variable: str, draws: np.ndarray, concentration) -> JointStatistic:
    """The statistic of ``draws`` (chain, draw, ...simplex dims) under one Dirichlet posterior.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.maths.joint_statistics import fixed_statistic
    >>> a = np.array([[3.0, 1.0, 2.0], [1.0, 1.0, 5.0]])
    >>> rng = np.random.default_rng(1)
    >>> draws = np.stack([rng.dirichlet(row, size=(2, 4000)) for row in a], axis=2)
    >>> r = fixed_statistic("T", "feature_prob", draws, a).standardised
    >>> bool(abs(r.mean()) < 0.05), bool(abs((r**2).mean() - 1) < 0.05)
    (True, True)
    """
    mean, variance, third, fourth = dirichlet_log_sum_cumulants(concentration)
    t = log_sum(draws, concentration)
    return JointStatistic(
        name=name,
        variable=variable,
        standardised=(t - mean) / np.sqrt(variance),
        fourth_moment=3.0 + fourth / variance**2,
        skewness=third / variance**1.5,
    )


def conditional_statistic(
    name: str,
    variable: str,
    draws: np.ndarray,
    base: np.ndarray,
    per_lambda: np.ndarray,
    lambdas: np.ndarray,
) -> JointStatistic:
    """The statistic under θ | λ ~ Dirichlet(base + λ · per_lambda), each draw with its own
    λ (``lambdas``, shape (chain, draw)); padding cells are those where both are 0."""
    lambdas = np.asarray(lambdas, dtype=np.float64)
    valid = (np.asarray(base) > 0) | (np.asarray(per_lambda) > 0)
    means = np.empty(lambdas.shape)
    sds = np.empty(lambdas.shape)
    for index, value in np.ndenumerate(lambdas):
        concentration = np.where(valid, base + value * per_lambda, 0.0)
        mean, variance, _, _ = dirichlet_log_sum_cumulants(concentration)
        means[index], sds[index] = mean, np.sqrt(variance)
    t = log_sum(draws, np.where(valid, 1.0, 0.0))
    return JointStatistic(
        name=name, variable=variable, standardised=(t - means) / sds, fourth_moment=None
    )


#: Fewest effective draws, and largest skewness of the mean of r, for which the z of a joint
#: statistic is judged: below, the average of a skewed statistic (log-probabilities of
#: Dirichlet cells with small concentrations have exponential left tails) is too far from
#: normal for a 4-5 SD threshold (measured: |z| > 3.5 five times too often at 4 x 100 exact
#: draws with concentrations 0.2-4).
JOINT_MIN_ESS = 1000.0
JOINT_MAX_SKEW = 0.1


def statistic_z(statistic: JointStatistic) -> tuple[float, float, float]:
    """(z of the mean of r, z of the mean of r² − 1, bulk ESS of r): each a difference in
    Monte Carlo standard errors from what a correct posterior gives; NaN (not judged) with
    fewer than :data:`JOINT_MIN_ESS` effective draws, or where the mean of r is too skewed
    (:data:`JOINT_MAX_SKEW`) for its z to be read as normal."""

    r = np.asarray(statistic.standardised, dtype=np.float64)
    _, ess, _ = mc_diagnostics(r[None])
    _, ess_square, _ = mc_diagnostics(np.square(r)[None])
    ess, ess_square = float(ess[0]), float(ess_square[0])
    if not np.isfinite(r).all() or not ess >= JOINT_MIN_ESS:
        return np.nan, np.nan, ess
    skewness = statistic.skewness
    if skewness is None:
        skewness = float(np.mean((r - r.mean()) ** 3) / r.std() ** 3)
    if abs(skewness) / np.sqrt(ess) > JOINT_MAX_SKEW:
        return np.nan, np.nan, ess
    z_mean = r.mean() / np.sqrt(1.0 / ess)
    if statistic.fourth_moment is not None:
        square_variance = statistic.fourth_moment - 1.0
    else:
        square_variance = float(np.square(r).var(ddof=1))
    # The mean of r² (expected 1) is a positive, right-skewed average: with few draws its
    # upper tail is far longer than a normal's. Its cube root is close to normal (Wilson and
    # Hilferty: exact for a Gamma of mean 1 and variance v, whose cube root has mean
    # 1 − v / 9 and variance v / 9).
    variance = square_variance / ess_square
    z_spread = (np.cbrt(np.square(r).mean()) - (1.0 - variance / 9.0)) / np.sqrt(variance / 9.0)
    return float(z_mean), float(z_spread), ess


def chi_square_statistic(name: str, variable: str, values: np.ndarray, dof: float):
    """A statistic that is χ²_dof in every draw: r = (Q − dof) / √(2 dof), E[r⁴] = 3 +
    12 / dof."""
    return JointStatistic(
        name=name,
        variable=variable,
        standardised=(np.asarray(values, dtype=np.float64) - dof) / np.sqrt(2.0 * dof),
        fourth_moment=3.0 + 12.0 / dof,
        skewness=np.sqrt(8.0 / dof),
    )


def normal_inverse_wishart_statistics(
    mu: np.ndarray, cov: np.ndarray, params: dict, *, shared: bool
) -> list[JointStatistic]:
    """Two statistics of each draw of (μ, Σ) with an exact χ² law under the normal-inverse-
    Wishart posterior (m_k, κ_k, ν, Ψ) of ``params`` (as :func:`bayesgen.maths.gaussian.
    niw_posterior` gives them; per class ``dof`` and ``scale`` where not ``shared``):

    * Q = Σ_k κ_k (μ_k − m_k)ᵀ Σ_k⁻¹ (μ_k − m_k) ~ χ²_{K D} (μ_k | Σ_k ~ N(m_k, Σ_k / κ_k));
    * W = Σ_k tr(Ψ_k Σ_k⁻¹) ~ χ²_{D Σ_k ν_k} (Σ⁻¹ ~ Wishart(Ψ⁻¹, ν), so Lᵀ Σ⁻¹ L with
      L Lᵀ = Ψ is Wishart(I, ν), whose diagonal is D independent χ²_ν).

    ``mu`` has shape (chain, draw, K, D); ``cov`` (chain, draw, D, D), or (chain, draw, K,
    D, D) where not ``shared``. A wrong κ moves Q, a wrong ν or Ψ moves W.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> from bayesgen.maths.joint_statistics import normal_inverse_wishart_statistics, statistic_z
    >>> rng = np.random.default_rng(0)
    >>> params = {"mean": np.zeros((2, 2)), "kappa": np.array([3.0, 5.0]), "dof": 9.0,
    ...           "scale": np.eye(2)}
    >>> cov = stats.invwishart.rvs(df=9.0, scale=np.eye(2), size=4000, random_state=rng)
    >>> mu = np.stack([rng.multivariate_normal(np.zeros(2), c / params["kappa"][k])
    ...                for c in cov for k in range(2)]).reshape(1, 4000, 2, 2)
    >>> found = normal_inverse_wishart_statistics(mu, cov[None], params, shared=True)
    >>> [bool(abs(z) < 4) for s in found for z in statistic_z(s)[:2]]
    [True, True, True, True]
    """
    mu = np.asarray(mu, dtype=np.float64)
    cov = np.asarray(cov, dtype=np.float64)
    n_classes, n_features = mu.shape[-2:]
    if shared:
        cov = np.broadcast_to(cov[..., None, :, :], (*mu.shape[:-1], n_features, n_features))
        dof = np.full(n_classes, float(params["dof"]))
        scale = np.broadcast_to(params["scale"], (n_classes, n_features, n_features))
    else:
        dof = np.asarray(params["dof"], dtype=np.float64)
        scale = np.asarray(params["scale"], dtype=np.float64)
    offset = mu - params["mean"]
    solved = np.linalg.solve(cov, offset[..., None])[..., 0]
    quadratic = (np.asarray(params["kappa"]) * (offset * solved).sum(axis=-1)).sum(axis=-1)
    # tr(Ψ Σ⁻¹) = tr(Σ⁻¹ Ψ): solve Σ X = Ψ and take the trace, per class
    trace = np.trace(np.linalg.solve(cov, np.broadcast_to(scale, cov.shape)), axis1=-2, axis2=-1)
    if shared:  # one Σ: its trace once, not once per class
        trace, dof_total = trace[..., 0], float(params["dof"]) * n_features
    else:
        trace, dof_total = trace.sum(axis=-1), float(dof.sum()) * n_features
    return [
        chi_square_statistic(
            "κ (μ − m)ᵀ Σ⁻¹ (μ − m) summed over classes", "mu", quadratic, n_classes * n_features
        ),
        chi_square_statistic("tr(Ψ Σ⁻¹)", "cov", trace, dof_total),
    ]
