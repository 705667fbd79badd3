"""What GDA and QDA share beyond the interface: the evidence, exact leave-one-out joint and
per-draw joint statistics of a normal-inverse-Wishart posterior, given the family's posterior
parameters, and how a Gaussian block is shown.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from bayesgen.families.class_prior import class_log_evidence, class_statistic, loo_class_log_prob
from bayesgen.families.presentation import Presentation
from bayesgen.maths.evidence import niw_log_evidence
from bayesgen.maths.gaussian import NormalInverseWishart, niw_leave_one_out_log_density
from bayesgen.maths.joint_statistics import normal_inverse_wishart_statistics

__all__ = [
    "gaussian_joint_statistics",
    "gaussian_log_evidence",
    "gaussian_loo_log_joint",
    "gaussian_presentation",
]


def gaussian_presentation(
    top_parameter_label: str,
    top_parameter_caption: str,
    variable_symbols: dict[str, str],
    *,
    linear_boundaries: bool,
) -> Presentation:
    """The :class:`~bayesgen.families.presentation.Presentation` of a Gaussian block: π and μ
    plotted, the class means' pair plot and decision boundary in the report, and each class's
    feature means as the predictive check's statistic."""
    return Presentation(
        plot_variables=("class_prob", "mu"),
        top_parameter_label=top_parameter_label,
        top_parameter_caption=top_parameter_caption,
        variable_symbols=variable_symbols,
        ppc_variables=("class_feature_mean",),
        ppc_caption=(
            "class_feature_mean is each feature's mean within each class, in pooled within-class "
            "SDs from the feature's mean, all cells pooled. The model fits these directly, so a "
            "black curve outside the blue ones means a prior (mean, κ₀) strong enough to pull the "
            "class means."
        ),
        report_plots=("mu_pair", "decision_boundary"),
        linear_boundaries=linear_boundaries,
    )


def gaussian_log_evidence(estimates, posterior_parameters) -> float:
    """log p(y | a) + log p(X | y) of a GDA or QDA fit, for :meth:`Family.log_evidence`;
    ``posterior_parameters(estimates)`` gives the family's normal-inverse-Wishart posterior."""
    if "prior_mean" not in estimates:
        raise ValueError(
            "log_evidence: needs the normal-inverse-Wishart prior; these estimates were "
            "fitted with prior=None (the MLE), which has no evidence."
        )
    prior = {
        "kappa": estimates.attrs["prior_kappa"],
        "dof": estimates.attrs["prior_dof"],
        "scale": estimates["prior_scale"].values,
    }
    labels = float(class_log_evidence(estimates, estimates.attrs["class_alpha"]))
    posterior = posterior_parameters(estimates)
    return labels + niw_log_evidence(estimates["class_count"].values, prior, posterior)


def gaussian_loo_log_joint(estimates, X, y_codes, posterior_parameters) -> np.ndarray:
    """log p(x_i, y = k | D without row i) of a GDA or QDA fit, for ``Family.loo_log_joint``:
    log E[π_k | D_{-i}] plus the Student-t predictive of the normal-inverse-Wishart posterior
    that ``posterior_parameters(estimates)`` gives, without row i (see
    :func:`bayesgen.maths.gaussian.niw_leave_one_out_log_density`; its shape says whether Ψ is
    shared, GDA, or per class, QDA)."""
    if "prior_mean" not in estimates:
        raise ValueError(
            "loo_proba: needs the normal-inverse-Wishart prior; these estimates were "
            "fitted with prior=None (the MLE)."
        )
    y_codes = np.asarray(y_codes)
    posterior = posterior_parameters(estimates)
    return loo_class_log_prob(estimates, y_codes) + niw_leave_one_out_log_density(
        X, y_codes, posterior
    )


def gaussian_joint_statistics(
    estimates: xr.Dataset, posterior: xr.Dataset, class_alpha: float, params: dict, *, shared
) -> list:
    """Σ log π, κ (μ − m)ᵀ Σ⁻¹ (μ − m) and tr(Ψ Σ⁻¹) of each draw under the normal-inverse-
    Wishart posterior ``params`` (one Σ where ``shared``; see
    :func:`bayesgen.maths.joint_statistics.normal_inverse_wishart_statistics`), for
    ``Family.joint_statistics``."""
    moments = normal_inverse_wishart_statistics(
        posterior["mu"].values, posterior["cov"].values, params, shared=shared
    )
    return [class_statistic(estimates, posterior, class_alpha), *moments]


def fitted_niw_prior(estimates: xr.Dataset) -> dict:
    """``prior``, the normal-inverse-Wishart prior of a GDA or QDA fit at its fitted values
    (:meth:`bayesgen.families.base.Family.fitted_prior`); none for a fit without a prior."""
    if "prior_mean" not in estimates:
        return {}
    prior = NormalInverseWishart(
        mean=estimates["prior_mean"].values.copy(),
        kappa=float(estimates.attrs["prior_kappa"]),
        dof=float(estimates.attrs["prior_dof"]),
        scale=estimates["prior_scale"].values.copy(),
    )
    return {"prior": prior}
