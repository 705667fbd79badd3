"""What each posterior summary must equal: the closed forms behind :func:`bayesgen.compare`.

One :class:`Expected` per variable holds, in the variable's full shape, the closed-form
posterior mean and SD, the MLE, the closed-form mode, and why any of them is missing.

* Dirichlet(a) (Beta(a, b) alike): mean a_i / a₀, SD √(a_i (a₀ − a_i) / (a₀² (a₀ + 1))),
  mode (a_i − 1) / (a₀ − K).
* GDA under the normal-inverse-Wishart posterior (m_k, κ_k, ν_N, Ψ_N) with D features, the
  classes sharing Σ: Σ ~ IW(ν_N, Ψ_N) and μ_k | Σ ~ N(m_k, Σ / κ_k), so

  - E[μ_k] = m_k, Var(μ_kj) = E[Σ_jj] / κ_k = Ψ_jj / (κ_k (ν_N − D − 1));
  - E[Σ] = Ψ_N / (ν_N − D − 1), Var(Σ_ij) = [(ν − D + 1) Ψ_ij² + (ν − D − 1) Ψ_ii Ψ_jj] /
    [(ν − D)(ν − D − 1)² (ν − D − 3)];
  - Σ⁻¹ ~ Wishart(ν_N, V = Ψ_N⁻¹), so w_k = Σ⁻¹μ_k = Σ⁻¹m_k + L⁻ᵀz/√κ_k (Σ = LLᵀ, z standard
    normal) has E[w_k] = ν V m_k and, from Cov(Λ_ij, Λ_kl) = ν (V_ik V_jl + V_il V_jk),
    Var(w_ki) = ν (V_ii m_kᵀVm_k + (Vm_k)_i² + V_ii / κ_k); the two-class θ = w_1 − w_0
    likewise with m_1 − m_0 and 1/κ_0 + 1/κ_1;
  - b_k = −½ μ_kᵀΣ⁻¹μ_k + log π_k with E[μ_kᵀΣ⁻¹μ_k | Σ] = m_kᵀΣ⁻¹m_k + D / κ_k and π
    independent of (μ, Σ): E[b_k] = −½ (ν m_kᵀVm_k + D / κ_k) + ψ(a_k) − ψ(a₀).

A Monte Carlo error needs one moment more than the value it is the error of: the mean's MCSE
needs a finite variance and the SD's a finite fourth moment, so a check is made only where
those exist (for Σ: ν_N > D + 3 for the mean and ν_N > D + 7 for the SD; for μ, a Student-t
with ν_N − D + 1 degrees of freedom, ν_N > D + 3 for the SD).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr

from bayesgen import closed_form as cf

# Why a comparison is missing. Each row's ``reason`` joins the ones that apply.
NO_MODE = (
    "boundary: no interior mode (n + α < 1 for this outcome, a zero count with α < 1: the "
    "density is unbounded at 0), so no MAP exists to compare with"
)
NO_MODE_ELSEWHERE = (
    "boundary: no interior mode (another outcome of this simplex has n + α < 1, where the "
    "density is unbounded), so no MAP exists to compare with"
)
NO_MODE_BETA = (
    "boundary: no interior mode (Beta(n + α, N_k − n + α) has a parameter < 1: a count of 0 "
    "or N_k with α < 1, so the density is unbounded at 0 or 1), so no MAP exists to compare with"
)
FLAT = (
    "flat: every outcome has n + α = 1, so every point of the simplex is a mode; find_MAP's "
    "value is arbitrary and is not shown"
)
LKJ = "no closed form: the LKJ covariance prior is not conjugate"
BARTLETT = (
    "MAP not compared: find_MAP's mode is that of the Bartlett variables (χ² and normal "
    "factors of Σ⁻¹), which is not the mode of Σ"
)
LKJ_MAP = "MAP not compared: under the LKJ prior the mode has no closed form"
NONLINEAR_MAP = "MAP not compared: no closed-form mode for the linear form"
NO_COV_MEAN = "no closed form: E[Σ] does not exist for ν_N ≤ D + 1"
NO_COV_MCSE = (
    "mean not compared: E[Σ] exists but its Monte Carlo error does not (Var(Σ) needs ν_N > D + 3)"
)
NO_COV_SD = "SD not compared: its Monte Carlo error needs a finite fourth moment, ν_N > D + 7"
NO_MU_SD = "SD not compared: its Monte Carlo error needs a finite fourth moment, ν_N > D + 3"
NO_INTERCEPT_SD = "SD not compared: the spread of the intercept has no closed form here"


@dataclass
class Expected:
    """One variable's expected values, in its full shape, and which of its scalars get a row."""

    variable: str
    keep: np.ndarray  # boolean, the variable's shape
    closed_form: np.ndarray
    closed_form_sd: np.ndarray
    mle: np.ndarray
    expected_map: np.ndarray
    reasons: tuple  # object arrays of str, "" where that comparison exists (mean, sd, map)
    hide_map: np.ndarray  # boolean: the optimizer's value is an artefact (no mode exists)
    prior: str
    mean_identity: str | None
    sd_identity: str | None
    map_identity: str | None
    # Where the density is unbounded (n + α < 1 in the simplex): no mode exists, not even a
    # joint one for the whole model.
    unbounded: np.ndarray | None = None
    # The marginal's fourth standardised moment E[(θ − μ)⁴] / σ⁴ where it has a closed form
    # (NaN or None elsewhere): the SD check's Monte Carlo error is then that of a correct
    # posterior, not one estimated from the draws' own (noisy, skewed) fourth moment.
    closed_form_kurtosis: np.ndarray | None = None


def expected_values(
    stats: xr.Dataset, alpha, class_alpha: float, cov_prior: str, *, map_method=None
):
    """The :class:`Expected` of every variable of a model, in the posterior's order.

    ``map_method`` ("closed_form" or "find_MAP") decides whether Σ has a mode to compare:
    find_MAP's is that of its Bartlett variables, the closed form's that of Σ itself.
    """
    if stats.attrs["model"] == "gda":
        return _gda(stats, class_alpha, cov_prior, exact_map=map_method == "closed_form")
    return [class_expected(stats, class_alpha), feature_expected(stats, alpha)]


def dirichlet_sd(concentration, *, axis: int = -1) -> np.ndarray:
    """Marginal SDs of Dirichlet(a) along ``axis``: √(a_i (a₀ − a_i) / (a₀² (a₀ + 1)))."""
    a = np.asarray(concentration, dtype=np.float64)
    total = a.sum(axis=axis, keepdims=True)
    return np.sqrt(a * (total - a) / (total**2 * (total + 1.0)))


def dirichlet_kurtosis(concentration, *, axis: int = -1) -> np.ndarray:
    """Kurtosis E[(θ_i − μ_i)⁴] / σ_i⁴ of the Beta(a_i, a₀ − a_i) marginals of Dirichlet(a).

    3 + 6 [(a − b)² (a + b + 1) − a b (a + b + 2)] / [a b (a + b + 2)(a + b + 3)] with a = a_i,
    b = a₀ − a_i.
    """
    a = np.asarray(concentration, dtype=np.float64)
    b = a.sum(axis=axis, keepdims=True) - a
    total = a + b
    with np.errstate(divide="ignore", invalid="ignore"):
        excess = (
            6.0
            * ((a - b) ** 2 * (total + 1.0) - a * b * (total + 2.0))
            / (a * b * (total + 2.0) * (total + 3.0))
        )
    return 3.0 + excess


def class_expected(stats: xr.Dataset, class_alpha: float) -> Expected:
    """The class probabilities' Dirichlet(N_k + class_alpha) posterior."""
    count = stats["class_count"].values.astype(np.float64)
    mode, status = _simplex_mode(count, class_alpha)
    return Expected(
        variable="class_prob",
        keep=np.ones(count.shape, dtype=bool),
        closed_form=cf.add_lambda(count, count.sum(), class_alpha, count.size),
        closed_form_sd=dirichlet_sd(count + class_alpha),
        closed_form_kurtosis=dirichlet_kurtosis(count + class_alpha),
        mle=stats["class_prob_mle"].values.astype(np.float64),
        expected_map=mode,
        reasons=(_reasons(count.shape), _reasons(count.shape), _status_reasons(status, NO_MODE)),
        hide_map=status >= _NO_MODE_HERE,
        prior=f"Dirichlet({class_alpha:g})",
        mean_identity=_mean_identity("Dirichlet"),
        sd_identity=_sd_identity("Dirichlet"),
        map_identity=_map_identity("Dirichlet", class_alpha),
        unbounded=_is_unbounded(status),
    )


def feature_expected(stats: xr.Dataset, alpha: float) -> Expected:
    """A naive Bayes model's feature probabilities under Dirichlet(λ) (Beta(λ, λ))."""
    model = stats.attrs["model"]
    counts = stats["feature_count"].values.astype(np.float64)
    class_count = stats["class_count"].values.astype(np.float64)
    keep = np.ones(counts.shape, dtype=bool)
    family, no_mode = "Dirichlet", NO_MODE
    if model == "multinomial_nb":
        closed = cf.add_lambda(counts, counts.sum(axis=1, keepdims=True), alpha, counts.shape[1])
        sd = dirichlet_sd(counts + alpha)
        kurtosis = dirichlet_kurtosis(counts + alpha)
        mode, status = _simplex_mode(counts, alpha)
    elif model == "bernoulli_nb":
        closed = cf.add_lambda(counts, class_count[:, None], alpha, 2)
        pair = np.stack([counts, class_count[:, None] - counts], axis=-1)
        sd = dirichlet_sd(pair + alpha)[..., 0]
        kurtosis = dirichlet_kurtosis(pair + alpha)[..., 0]
        mode, status = _simplex_mode(pair, alpha)
        # The row is φ; a Beta without a mode has none for either outcome.
        mode, status = mode[..., 0], status.max(axis=-1)
        family, no_mode = "Beta", NO_MODE_BETA
    else:
        keep = np.broadcast_to(stats["category_mask"].values, counts.shape)
        n_categories = stats["n_categories"].values[:, None]
        closed = cf.add_lambda(counts, class_count[:, None, None], alpha, n_categories)
        closed = np.where(keep, closed, np.nan)
        sd = np.where(keep, dirichlet_sd(np.where(keep, counts + alpha, 0.0)), np.nan)
        kurtosis = np.where(keep, dirichlet_kurtosis(np.where(keep, counts + alpha, 0.0)), np.nan)
        mode, status = _simplex_mode(counts, alpha, active=keep)
    return Expected(
        variable="feature_prob",
        keep=keep,
        closed_form=closed,
        closed_form_sd=sd,
        closed_form_kurtosis=kurtosis,
        mle=stats["feature_prob_mle"].values.astype(np.float64),
        expected_map=mode,
        reasons=(_reasons(counts.shape), _reasons(counts.shape), _status_reasons(status, no_mode)),
        hide_map=status >= _NO_MODE_HERE,
        prior=f"Beta({alpha:g}, {alpha:g})" if family == "Beta" else f"Dirichlet({alpha:g})",
        mean_identity=_mean_identity(family),
        sd_identity=_sd_identity(family),
        map_identity=_map_identity(family, alpha),
        unbounded=_is_unbounded(status),
    )


def niw_hyperparameters(stats: xr.Dataset) -> dict:
    """(m_k, κ_k, ν_N, Ψ_N) of a GDA fit's normal-inverse-Wishart posterior."""
    prior = {
        "mean": stats["prior_mean"].values,
        "kappa": float(stats.attrs["prior_kappa"]),
        "dof": float(stats.attrs["prior_dof"]),
        "scale": stats["prior_scale"].values,
    }
    return cf.niw_posterior(
        stats["class_count"].values.astype(np.float64),
        stats["class_mean"].values,
        stats["scatter"].values,
        prior,
    )


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


def _gda(stats: xr.Dataset, class_alpha: float, cov_prior: str, exact_map: bool) -> list[Expected]:
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
        params = niw_hyperparameters(stats)
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
            _reasons(mu_shape, lkj_reason),
            _reasons(mu_shape, mu_sd_reason if conjugate else ""),
            _reasons(mu_shape, "" if conjugate else LKJ_MAP),
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
            _reasons(cov_shape, cov_mean_reason),
            _reasons(cov_shape, cov_sd_reason if conjugate else ""),
            _reasons(
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
            _reasons(coef_shape, lkj_reason),
            _reasons(coef_shape, ""),
            _reasons(coef_shape, NONLINEAR_MAP),
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
            _reasons(intercept_shape, lkj_reason),
            _reasons(intercept_shape, NO_INTERCEPT_SD if conjugate else ""),
            _reasons(intercept_shape, NONLINEAR_MAP),
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


_MODE_OK, _MODE_ZERO, _NO_MODE_HERE, _NO_MODE_OTHER, _MODE_FLAT = range(5)


def _simplex_mode(counts, alpha: float, *, active=None) -> tuple[np.ndarray, np.ndarray]:
    """The mode of Dirichlet(n + α) along the last axis, and a status per outcome.

    Status: ``_MODE_OK``; ``_MODE_ZERO`` (n + α = 1: the mode is 0, on the boundary but well
    defined); ``_NO_MODE_HERE`` (n + α < 1: the density is unbounded, so no mode exists);
    ``_NO_MODE_OTHER`` (another outcome of the same simplex has n + α < 1); ``_MODE_FLAT`` (all
    n + α = 1). The mode is NaN where none exists. ``active`` marks the outcomes that exist
    (the categorical model's padding is inactive).
    """
    counts = np.asarray(counts, dtype=np.float64)
    active = np.ones(counts.shape, dtype=bool) if active is None else np.asarray(active)
    shifted = counts + alpha - 1.0
    here = active & (shifted < 0)
    no_mode = active & np.any(here, axis=-1, keepdims=True)
    flat = active & ~np.any(active & (shifted != 0), axis=-1, keepdims=True)
    # Outcomes given n = 0 and α = 1 (so n + α - 1 = 0 exactly) add nothing to the denominator:
    # the padding, and every outcome of a simplex without a mode (which then gives 0/0 = NaN).
    usable = active & ~no_mode
    mode = cf.dirichlet_mode(
        np.where(usable, counts, 0.0),
        np.where(usable, alpha, 1.0),
        axis=-1,
        allow_boundary=True,
    )
    status = np.full(counts.shape, _MODE_OK)
    status[active & (shifted == 0)] = _MODE_ZERO
    status[flat] = _MODE_FLAT
    status[no_mode] = _NO_MODE_OTHER
    status[here] = _NO_MODE_HERE
    mode = np.where(status >= _NO_MODE_HERE, np.nan, mode)
    return mode, status


def _is_unbounded(status: np.ndarray) -> np.ndarray:
    return (status == _NO_MODE_HERE) | (status == _NO_MODE_OTHER)


def _status_reasons(status: np.ndarray, no_mode_here: str) -> np.ndarray:
    reasons = _reasons(status.shape)
    other = NO_MODE_BETA if no_mode_here == NO_MODE_BETA else NO_MODE_ELSEWHERE
    reasons[status == _NO_MODE_HERE] = no_mode_here
    reasons[status == _NO_MODE_OTHER] = other
    reasons[status == _MODE_FLAT] = FLAT
    return reasons


def _reasons(shape, text: str = "") -> np.ndarray:
    return np.full(shape, text, dtype=object)


def _mean_identity(family: str) -> str:
    prior = "Beta(λ, λ)" if family == "Beta" else "Dirichlet(λ)"
    return f"posterior mean under {prior} = add-λ"


def _sd_identity(family: str) -> str:
    return f"posterior SD under {family}(a) = √(a_i (a₀ − a_i) / (a₀² (a₀ + 1)))"


def _map_identity(family: str, alpha: float) -> str:
    def prior(a: str) -> str:
        return f"Beta({a}, {a})" if family == "Beta" else f"Dirichlet({a})"

    if alpha == 1:
        return f"MAP under {prior('1')} = MLE"
    if alpha > 1:
        return f"MAP under {prior('λ + 1')} = add-λ"
    n_outcomes = "2" if family == "Beta" else "K"
    return f"MAP under {prior('α')} = (n + α − 1) / (N + {n_outcomes}(α − 1))"


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
        w, b = cf.gda_linear_form(p64, m64, c64)
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
