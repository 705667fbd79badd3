"""QDA's side of the comparison: what its posterior summaries must equal.

Each class has its own normal-inverse-Wishart posterior (m_k, κ_k, ν_k, Ψ_k), with D features:
Σ_k ~ IW(ν_k, Ψ_k) and μ_k | Σ_k ~ N(m_k, Σ_k / κ_k), so

- E[μ_k] = m_k, Var(μ_kj) = Ψ_k,jj / (κ_k (ν_k − D − 1)); μ_k's marginals are Student-t with
  ν_k − D + 1 degrees of freedom (kurtosis 3 + 6 / (ν_k − D − 3));
- E[Σ_k] = Ψ_k / (ν_k − D − 1), Var(Σ_k,ij) = [(ν − D + 1) Ψ_ij² + (ν − D − 1) Ψ_ii Ψ_jj] /
  [(ν − D)(ν − D − 1)² (ν − D − 3)] with ν = ν_k, Ψ = Ψ_k;
- the joint mode μ_k = m_k, Σ_k = Ψ_k / (ν_k + D + 2) (one normal per Σ_k). find_MAP's μ is
  comparable (μ_k's conditional mode is m_k whatever Σ_k), its Σ_k is not (it is the mode of
  the Bartlett variables).

A check is made only where its Monte Carlo error exists, class by class: the mean of Σ_k needs
ν_k > D + 3, the SDs ν_k > D + 3 (μ) and ν_k > D + 7 (Σ).

:class:`bayesgen.families.qda.QuadraticFamily` imports this module when the comparison asks
for it; it imports nothing from PyMC.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import xarray as xr

from bayesgen.families.expected import BARTLETT, Expected, class_expected, reason_array

NIW = "normal-inverse-Wishart"
NO_PRIOR = "no closed form: these estimates were fitted without a prior (prior=None)"
NO_COV_MCSE = (
    "mean not compared: E[Σ_k] exists but its Monte Carlo error does not (Var(Σ_k) needs "
    "ν_k > D + 3)"
)
NO_COV_SD = "SD not compared: its Monte Carlo error needs a finite fourth moment, ν_k > D + 7"
NO_MU_SD = "SD not compared: its Monte Carlo error needs a finite fourth moment, ν_k > D + 3"


def qda_expected(
    stats: xr.Dataset,
    *,
    class_alpha: float,
    exact_map: bool,
    posterior_parameters: Callable[[xr.Dataset], dict],
) -> list[Expected]:
    """The :class:`~bayesgen.families.expected.Expected` blocks of a QDA fit: π, μ and Σ, in the
    posterior's order. ``exact_map`` (a closed-form MAP, not find_MAP's) makes the Σ_k
    modes comparable; ``posterior_parameters(stats)`` gives every class's normal-inverse-Wishart
    posterior (:func:`bayesgen.families.qda.niw_posterior_parameters`)."""
    mu_shape, cov_shape = stats["mu"].shape, stats["cov"].shape
    _, n_features = mu_shape
    nan = lambda shape: np.full(shape, np.nan)  # noqa: E731
    upper = np.broadcast_to(np.triu(np.ones((n_features, n_features), dtype=bool)), cov_shape)
    if "prior_mean" not in stats:
        blocks = {
            name: dict(
                closed_form=nan(shape),
                closed_form_sd=nan(shape),
                kurtosis=nan(shape),
                expected_map=nan(shape),
                reasons=(reason_array(shape, NO_PRIOR),) * 3,
            )
            for name, shape in (("mu", mu_shape), ("cov", cov_shape))
        }
        prior = "none"
    else:
        params = posterior_parameters(stats)
        dof, kappa, scale = params["dof"], params["kappa"], params["scale"]
        excess = dof - n_features  # (class,)
        diagonal = np.diagonal(scale, axis1=-2, axis2=-1)  # (class, feature)
        has_mu_sd = np.broadcast_to((dof > n_features + 3)[:, None], mu_shape)
        has_cov_mean = np.broadcast_to((dof > n_features + 3)[:, None, None], cov_shape)
        has_cov_sd = np.broadcast_to((dof > n_features + 7)[:, None, None], cov_shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            mu_sd = np.sqrt(diagonal / (kappa * (excess - 1.0))[:, None])
            mu_kurtosis = np.broadcast_to((3.0 + 6.0 / (dof - n_features - 3.0))[:, None], mu_shape)
            e = excess[:, None, None]
            cov_var = (
                (e + 1.0) * scale**2 + (e - 1.0) * diagonal[:, :, None] * diagonal[:, None, :]
            ) / (e * (e - 1.0) ** 2 * (e - 3.0))
        cov_mode = scale / (dof + n_features + 2)[:, None, None]
        blocks = {
            "mu": dict(
                closed_form=stats["mu"].values,
                closed_form_sd=np.where(has_mu_sd, mu_sd, np.nan),
                kurtosis=np.where(has_mu_sd, mu_kurtosis, np.nan),
                expected_map=stats["mu"].values,
                reasons=(
                    reason_array(mu_shape),
                    np.where(has_mu_sd, "", NO_MU_SD).astype(object),
                    reason_array(mu_shape),
                ),
            ),
            "cov": dict(
                closed_form=np.where(has_cov_mean, stats["cov"].values, np.nan),
                closed_form_sd=np.where(has_cov_sd, np.sqrt(cov_var), np.nan),
                kurtosis=None,
                expected_map=cov_mode if exact_map else nan(cov_shape),
                reasons=(
                    np.where(has_cov_mean, "", NO_COV_MCSE).astype(object),
                    np.where(has_cov_sd, "", NO_COV_SD).astype(object),
                    reason_array(cov_shape, "" if exact_map else BARTLETT),
                ),
            ),
        }
        prior = (
            f"NIW per class (κ₀={stats.attrs['prior_kappa']:g}, ν₀={stats.attrs['prior_dof']:g})"
        )
    mu = Expected(
        variable="mu",
        keep=np.ones(mu_shape, dtype=bool),
        closed_form=blocks["mu"]["closed_form"],
        closed_form_sd=blocks["mu"]["closed_form_sd"],
        closed_form_kurtosis=blocks["mu"]["kurtosis"],
        mle=stats["mu_mle"].values,
        expected_map=blocks["mu"]["expected_map"],
        reasons=blocks["mu"]["reasons"],
        hide_map=np.zeros(mu_shape, dtype=bool),
        prior=prior,
        mean_identity=f"posterior mean of μ_k under the class's {NIW} = m_k",
        sd_identity=f"posterior SD of μ_kj under {NIW} = √(Ψ_k,jj / (κ_k (ν_k − D − 1)))",
        map_identity=f"MAP of μ_k under {NIW} = m_k",
    )
    cov = Expected(
        variable="cov",
        keep=upper.copy(),  # each Σ_k is symmetric: one row per entry
        closed_form=blocks["cov"]["closed_form"],
        closed_form_sd=blocks["cov"]["closed_form_sd"],
        closed_form_kurtosis=blocks["cov"]["kurtosis"],
        mle=stats["cov_mle"].values,
        expected_map=blocks["cov"]["expected_map"],
        reasons=blocks["cov"]["reasons"],
        hide_map=np.zeros(cov_shape, dtype=bool),
        prior=prior,
        mean_identity=f"posterior mean of Σ_k under {NIW} = Ψ_k / (ν_k − D − 1)",
        sd_identity="posterior SD of Σ_k,ij under inverse-Wishart(ν_k, Ψ_k) (needs ν_k > D + 7)",
        map_identity=f"MAP of Σ_k under {NIW} = Ψ_k / (ν_k + D + 2)" if exact_map else None,
    )
    return [class_expected(stats, class_alpha), mu, cov]
