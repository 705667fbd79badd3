"""GDA's side of the comparison: what its posterior summaries and draws must equal.

Under the normal-inverse-Wishart posterior (m_k, κ_k, ν_N, Ψ_N) with D features, the classes
sharing Σ: Σ ~ IW(ν_N, Ψ_N) and μ_k | Σ ~ N(m_k, Σ / κ_k), so

- E[μ_k] = m_k, Var(μ_kj) = E[Σ_jj] / κ_k = Ψ_jj / (κ_k (ν_N − D − 1));
- E[Σ] = Ψ_N / (ν_N − D − 1), Var(Σ_ij) = [(ν − D + 1) Ψ_ij² + (ν − D − 1) Ψ_ii Ψ_jj] /
  [(ν − D)(ν − D − 1)² (ν − D − 3)];
- Σ⁻¹ ~ Wishart(ν_N, V = Ψ_N⁻¹), so w_k = Σ⁻¹μ_k = Σ⁻¹m_k + L⁻ᵀz/√κ_k (Σ = LLᵀ, z standard
  normal) has E[w_k] = ν V m_k and, from Cov(Λ_ij, Λ_kl) = ν (V_ik V_jl + V_il V_jk),
  Var(w_ki) = ν (V_ii m_kᵀVm_k + (Vm_k)_i² + V_ii / κ_k); the two-class θ = w_1 − w_0
  likewise with m_1 − m_0 and 1/κ_0 + 1/κ_1;
- b_k = −½ μ_kᵀΣ⁻¹μ_k + log π_k with E[μ_kᵀΣ⁻¹μ_k | Σ] = m_kᵀΣ⁻¹m_k + D / κ_k and π
  independent of (μ, Σ): E[b_k] = −½ (ν m_kᵀVm_k + D / κ_k) + ψ(a_k) − ψ(a₀).

A check is made only where its Monte Carlo error exists: for Σ, ν_N > D + 3 for the mean and
ν_N > D + 7 for the SD; for μ, a Student-t with ν_N − D + 1 degrees of freedom, ν_N > D + 3
for the SD. Whatever the prior, every draw's ``coef`` and ``intercept`` must be the linear form
of that draw's (π, μ, Σ) (:func:`linear_form_errors`).

:class:`bayesgen.families.gda.GaussianFamily` imports this module when the comparison asks
for it; it imports nothing from PyMC.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import xarray as xr

from bayesgen.families.expected import (
    BARTLETT,
    LKJ,
    LKJ_MAP,
    NO_COV_MCSE,
    NO_COV_MEAN,
    NO_COV_SD,
    NO_INTERCEPT_SD,
    NO_MU_SD,
    NONLINEAR_MAP,
    Expected,
    class_expected,
    reason_array,
)
from bayesgen.maths.gaussian import gda_linear_form

#: The identities every draw must satisfy, as the comparison's identities table names them.
LINEAR_FORM_IDENTITY = {
    "coef": "coef = Σ⁻¹μ_k of its own draw (two classes: w_1 − w_0)",
    "intercept": "intercept = −½ μ_kᵀΣ⁻¹μ_k + log π_k of its own draw (two classes: b_1 − b_0)",
}
#: What a value failing them is, for the comparison's warning.
LINEAR_FORM_FAILURE = "coef/intercept values are not the linear form of their own draw of (π, μ, Σ)"


def niw_moments(params: dict, class_concentration: np.ndarray) -> dict:
    """Closed-form posterior means and SDs of μ, Σ and the linear form under NIW.

    Returns ``mu_sd``, ``cov_sd`` (NaN where the variance does not exist), ``coef``,
    ``coef_sd`` and ``intercept`` with the per-class shapes (K, D) and (K,), and their
    two-class forms ``coef_diff``, ``coef_diff_sd`` and ``intercept_diff``.
    """
    from scipy.special import digamma

    mean, kappa, dof, scale = params["mean"], params["kappa"], params["dof"], params["scale"]
    n_features = scale.shape[0]
    excess = dof - n_features
    diag = np.diag(scale)
    with np.errstate(divide="ignore", invalid="ignore"):
        mu_var = diag[None, :] / (kappa[:, None] * (excess - 1.0))
        cov_var = ((excess + 1.0) * scale**2 + (excess - 1.0) * np.outer(diag, diag)) / (
            excess * (excess - 1.0) ** 2 * (excess - 3.0)
        )
    precision = np.linalg.inv(scale)  # V = Ψ_N⁻¹; E[Σ⁻¹] = ν V
    precision = (precision + precision.T) / 2.0
    v_diag = np.diag(precision)

    def linear(m, inverse_kappa):
        vm = m @ precision
        quad = np.sum(m * vm, axis=-1, keepdims=True)
        var = dof * (v_diag * quad + vm**2 + v_diag * inverse_kappa[..., None])
        return dof * vm, np.sqrt(var), quad[..., 0]

    coef, coef_sd, quad = linear(mean, 1.0 / kappa)
    log_prob = digamma(class_concentration) - digamma(class_concentration.sum())
    intercept = -0.5 * (dof * quad + n_features / kappa) + log_prob
    out = {
        "mu_sd": np.sqrt(np.where(excess > 1.0, mu_var, np.nan)),
        "cov_sd": np.sqrt(np.where(excess > 3.0, cov_var, np.nan)),
        "coef": coef,
        "coef_sd": coef_sd,
        "intercept": intercept,
    }
    if len(kappa) == 2:
        diff, diff_sd, _ = linear(mean[1] - mean[0], np.asarray(1.0 / kappa[0] + 1.0 / kappa[1]))
        out.update(coef_diff=diff, coef_diff_sd=diff_sd, intercept_diff=intercept[1] - intercept[0])
    return out


def gda_expected(
    stats: xr.Dataset,
    *,
    class_alpha: float,
    cov_prior: str,
    exact_map: bool,
    posterior_parameters: Callable[[xr.Dataset], dict],
) -> list[Expected]:
    """The :class:`~bayesgen.families.expected.Expected` blocks of a GDA fit: π, μ, Σ, coef and
    intercept, in the posterior's order; ``posterior_parameters(stats)`` gives the
    normal-inverse-Wishart posterior (:func:`bayesgen.families.gda.niw_posterior_parameters`).

    Under the LKJ prior (or estimates without the NIW hyperparameters) only π has closed
    forms; ``exact_map`` (a closed-form MAP, not find_MAP's) makes Σ's mode comparable.
    """
    conjugate = cov_prior == "conjugate" and "prior_mean" in stats
    n_features = stats.sizes["feature"]
    two_classes = stats.sizes["class"] == 2
    nan = lambda shape: np.full(shape, np.nan)  # noqa: E731
    prior = (
        f"NIW(κ₀={stats.attrs['prior_kappa']:g}, ν₀={stats.attrs['prior_dof']:g})"
        if conjugate
        else "LKJ"
    )
    mu_shape, cov_shape = stats["mu"].shape, stats["cov"].shape
    coef_shape, intercept_shape = stats["coef"].shape, stats["intercept"].shape
    if conjugate:
        params = posterior_parameters(stats)
        dof = params["dof"]
        concentration = stats["class_count"].values.astype(np.float64) + class_alpha
        moments = niw_moments(params, concentration)
        suffix = "_diff" if two_classes else ""
        coef, coef_sd = moments["coef" + suffix], moments["coef" + suffix + "_sd"]
        intercept = moments["intercept" + suffix]
        mu_sd = moments["mu_sd"] if dof > n_features + 3 else nan(mu_shape)
        # μ_k's marginals are Student-t with ν_N − D + 1 degrees of freedom.
        mu_kurtosis = np.full(mu_shape, 3.0 + 6.0 / (dof - n_features - 3.0))
        mu_kurtosis = mu_kurtosis if dof > n_features + 3 else nan(mu_shape)
        cov_sd = moments["cov_sd"] if dof > n_features + 7 else nan(cov_shape)
        mean_exists, mcse_exists = dof > n_features + 1, dof > n_features + 3
        cov_mean = stats["cov"].values if mcse_exists else nan(cov_shape)
        cov_mean_reason = "" if mcse_exists else (NO_COV_MCSE if mean_exists else NO_COV_MEAN)
        mu_sd_reason = "" if dof > n_features + 3 else NO_MU_SD
        cov_sd_reason = "" if dof > n_features + 7 else NO_COV_SD
        lkj_reason = ""
        # The joint mode of (μ, Σ): each class mean adds a factor |Σ|^(-1/2) to the density.
        cov_mode = params["scale"] / (dof + n_features + 1 + len(params["kappa"]))
    else:
        cov_mode = nan(cov_shape)
        coef, coef_sd = nan(coef_shape), nan(coef_shape)
        intercept, mu_sd, mu_kurtosis, cov_sd, cov_mean = (
            nan(intercept_shape),
            nan(mu_shape),
            nan(mu_shape),
            nan(cov_shape),
            nan(cov_shape),
        )
        cov_mean_reason = mu_sd_reason = cov_sd_reason = lkj_reason = LKJ
    niw = "normal-inverse-Wishart"
    mu = Expected(
        variable="mu",
        keep=np.ones(mu_shape, dtype=bool),
        closed_form=stats["mu"].values if conjugate else nan(mu_shape),
        closed_form_sd=mu_sd,
        closed_form_kurtosis=mu_kurtosis,
        mle=stats["mu_mle"].values,
        expected_map=stats["mu"].values if conjugate else nan(mu_shape),
        reasons=(
            reason_array(mu_shape, lkj_reason),
            reason_array(mu_shape, mu_sd_reason if conjugate else ""),
            reason_array(mu_shape, "" if conjugate else LKJ_MAP),
        ),
        hide_map=np.zeros(mu_shape, dtype=bool),
        prior=prior,
        mean_identity=f"posterior mean of μ_k under {niw} = m_k",
        sd_identity=f"posterior SD of μ_kj under {niw} = √(Ψ_jj / (κ_k (ν_N − D − 1)))",
        map_identity=f"MAP of μ_k under {niw} = m_k",
    )
    cov = Expected(
        variable="cov",
        keep=np.triu(np.ones(cov_shape, dtype=bool)),  # Σ is symmetric: one row per entry
        closed_form=cov_mean,
        closed_form_sd=cov_sd,
        mle=stats["cov_mle"].values,
        expected_map=cov_mode if exact_map else nan(cov_shape),
        reasons=(
            reason_array(cov_shape, cov_mean_reason),
            reason_array(cov_shape, cov_sd_reason if conjugate else ""),
            reason_array(
                cov_shape, "" if exact_map and conjugate else BARTLETT if conjugate else LKJ_MAP
            ),
        ),
        hide_map=np.zeros(cov_shape, dtype=bool),
        prior=prior,
        mean_identity=f"posterior mean of Σ under {niw} = Ψ_N / (ν_N − D − 1)",
        sd_identity="posterior SD of Σ_ij under inverse-Wishart(ν_N, Ψ_N) (needs ν_N > D + 7)",
        map_identity=f"MAP of Σ under {niw} = Ψ_N / (ν_N + D + 1 + K)" if exact_map else None,
    )
    linear_identity = "w_k = Σ⁻¹μ_k" + (": θ = w_1 − w_0" if two_classes else "")
    coef_block = Expected(
        variable="coef",
        keep=np.ones(coef_shape, dtype=bool),
        closed_form=coef,
        closed_form_sd=coef_sd,
        mle=nan(coef_shape),
        expected_map=nan(coef_shape),
        reasons=(
            reason_array(coef_shape, lkj_reason),
            reason_array(coef_shape, ""),
            reason_array(coef_shape, NONLINEAR_MAP),
        ),
        hide_map=np.zeros(coef_shape, dtype=bool),
        prior=prior,
        mean_identity=f"posterior mean of {linear_identity} is ν_N Ψ_N⁻¹ m_k",
        sd_identity=f"posterior SD of {linear_identity} from the Wishart variance of Σ⁻¹",
        map_identity=None,
    )
    intercept_block = Expected(
        variable="intercept",
        keep=np.ones(intercept_shape, dtype=bool),
        closed_form=intercept,
        closed_form_sd=nan(intercept_shape),
        mle=nan(intercept_shape),
        expected_map=nan(intercept_shape),
        reasons=(
            reason_array(intercept_shape, lkj_reason),
            reason_array(intercept_shape, NO_INTERCEPT_SD if conjugate else ""),
            reason_array(intercept_shape, NONLINEAR_MAP),
        ),
        hide_map=np.zeros(intercept_shape, dtype=bool),
        prior=prior,
        mean_identity=(
            "posterior mean of b_k = −½ μ_kᵀΣ⁻¹μ_k + log π_k is "
            "−½ (ν_N m_kᵀΨ_N⁻¹m_k + D / κ_k) + ψ(a_k) − ψ(a₀)"
        ),
        sd_identity=None,
        map_identity=None,
    )
    return [class_expected(stats, class_alpha), mu, cov, coef_block, intercept_block]


#: Safety factor over the first-order rounding bound of the linear-form identity, per feature:
#: the solve's own rounding grows with D, and the draws were made by another code path.
LINEAR_FORM_SLACK = 4.0
_DRAW_CHUNK_ELEMENTS = 1_000_000  # draws × D × D held at once


def linear_form_errors(posterior: xr.Dataset) -> dict[str, np.ndarray]:
    """How far each stored ``coef``/``intercept`` draw is from the linear form of its own
    (π, μ, Σ), in units of its rounding tolerance: values ≤ 1 agree.

    The draws of (π, μ, Σ) are as stored (float32 or float64); ``coef`` and ``intercept``
    were computed from the unrounded values and then rounded. With u the unit roundoff of the
    stored dtype, P = Σ⁻¹ and w = Σ⁻¹μ, a relative change of u in every entry of Σ and μ moves
    w by at most u·|P|(|Σ||w| + |μ|) to first order (componentwise, so badly scaled features
    do not inflate it); the intercept −½ μᵀw + log π moves by ½|μ|ᵀ(|w| + that) + u. The
    tolerance is that bound plus the rounding of the stored value, times
    ``LINEAR_FORM_SLACK`` · (D + 1).

    Returns
    -------
    dict
        ``coef`` and ``intercept``: the largest ratio over draws, in the variables' shapes.
    """
    cov = posterior["cov"].values
    n_chains, n_draws, n_features = cov.shape[:3]
    dtypes = [posterior[name].dtype for name in ("class_prob", "mu", "cov", "coef", "intercept")]
    unit = max(np.finfo(d).eps / 2.0 if np.issubdtype(d, np.floating) else 0.0 for d in dtypes)
    unit = max(unit, np.finfo(np.float64).eps / 2.0)
    slack = LINEAR_FORM_SLACK * (n_features + 1)

    def flat(name: str) -> np.ndarray:
        values = posterior[name].values
        return values.reshape(n_chains * n_draws, *values.shape[2:])

    class_prob, mu, cov = flat("class_prob"), flat("mu"), flat("cov")
    coef, intercept = flat("coef"), flat("intercept")
    two_classes = class_prob.shape[-1] == 2
    worst = {"coef": np.zeros(coef.shape[1:]), "intercept": np.zeros(intercept.shape[1:])}
    step = max(1, _DRAW_CHUNK_ELEMENTS // max(1, n_features * n_features * mu.shape[1]))
    for start in range(0, class_prob.shape[0], step):
        part = slice(start, start + step)
        p64, m64, c64 = (a[part].astype(np.float64) for a in (class_prob, mu, cov))
        w, b = gda_linear_form(p64, m64, c64)
        with np.errstate(invalid="ignore", over="ignore"):
            inverse = np.abs(np.linalg.inv(c64))
            spread = np.einsum("sij,skj->ski", np.abs(c64), np.abs(w)) + np.abs(m64)
            w_bound = np.einsum("sij,skj->ski", inverse, spread) + np.abs(w)
            b_bound = 0.5 * np.sum(np.abs(m64) * (np.abs(w) + w_bound), axis=-1) + 1.0 + np.abs(b)
        if two_classes:
            w, b = w[:, 1] - w[:, 0], b[:, 1] - b[:, 0]
            w_bound, b_bound = w_bound.sum(axis=1), b_bound.sum(axis=1)
        for name, stored, value, bound in (
            ("coef", coef, w, w_bound),
            ("intercept", intercept, b, b_bound),
        ):
            stored64 = stored[part].astype(np.float64)
            with np.errstate(invalid="ignore", divide="ignore"):
                gap = np.abs(stored64 - value)
                ratio = np.where(stored64 == value, 0.0, gap / (slack * unit * bound))
            ratio = np.where(np.isnan(ratio), np.inf, ratio)  # a NaN draw cannot agree
            worst[name] = np.maximum(worst[name], ratio.max(axis=0))
    return worst
