"""What GDA and QDA share beyond the interface: the evidence, exact leave-one-out joint and
per-draw joint statistics of a normal-inverse-Wishart posterior, given the family's posterior
parameters, the Student-t predictive, missing entries, and how a Gaussian block is shown.

Missing entries (NaN): every density at prediction is over each row's observed coordinates
(:mod:`bayesgen.maths.missing_gaussian`: the sub-vector of the location, the sub-block of the
scale), a row with none observed getting the class prior. The closed forms cannot fit them
(:data:`FIT_MISSING_REASON`); the estimators fit them by Gibbs sampling or NUTS
(:mod:`bayesgen.inference.gibbs`), whose closed form holds EM's expected statistics and
``attrs["missing_entries"]``: its π alone is exact (:func:`missing_fit_expected`).
"""

from __future__ import annotations

import numpy as np
import xarray as xr
from scipy import stats as scipy_stats

from bayesgen.families.class_prior import class_log_evidence, class_statistic, loo_class_log_prob
from bayesgen.families.expected import Expected, class_expected, reason_array
from bayesgen.families.presentation import Presentation
from bayesgen.input.data import check_features
from bayesgen.maths.evidence import niw_log_evidence
from bayesgen.maths.gaussian import NormalInverseWishart, niw_leave_one_out_log_density
from bayesgen.maths.joint_statistics import normal_inverse_wishart_statistics
from bayesgen.maths.missing_gaussian import marginal_t_log_density

__all__ = [
    "FIT_MISSING_REASON",
    "MISSING_FIT",
    "complete_training_rows",
    "gaussian_joint_statistics",
    "gaussian_log_evidence",
    "gaussian_loo_log_joint",
    "gaussian_presentation",
    "missing_fit_expected",
    "niw_predictive_log_joint",
    "refuse_missing_fit",
]

#: Why the closed forms of GDA and QDA refuse a missing entry at fit.
FIT_MISSING_REASON = (
    "the closed forms of GDA and QDA need every entry (with missing ones the posterior is not "
    "conjugate); fit them with the estimator's Gibbs sampler, inference='conjugate', or its "
    "NUTS, inference='nuts', which samples the missing entries as latent variables"
)
#: Why a fit with missing entries has no closed form to compare or predict with ({sampler}:
#: Gibbs or NUTS, from the fit's ``attrs["missing_fit"]``).
MISSING_FIT = "not compared: fitted with missing entries ({sampler}); no closed form"
_SAMPLER_NAMES = {"gibbs": "Gibbs", "nuts": "NUTS"}


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


def complete_training_rows(X, feature_names, *, kind: str):
    """X checked for a closed-form fit, a missing entry refused with
    :data:`FIT_MISSING_REASON`; returns the rows and the feature names to fit with (X's own
    column names where it has them and none were given)."""
    rows, names, given = check_features(X, kind=kind, missing=FIT_MISSING_REASON)
    return rows, (names if feature_names is None and given else feature_names)


def refuse_missing_fit(estimates: xr.Dataset, what: str) -> None:
    """Raise a ValueError for ``what`` (a closed form) of a fit with missing entries, whose
    statistics are EM's expected ones: no closed form holds there."""
    if estimates.attrs.get("missing_entries"):
        raise ValueError(
            f"{what}: this model was fitted with {estimates.attrs['missing_entries']} missing "
            "entries (Gibbs sampling or NUTS), which have no closed-form posterior; use "
            "predict_proba, which averages the posterior draws."
        )


def niw_predictive_log_joint(estimates: xr.Dataset, X, posterior_parameters) -> np.ndarray:
    """log p(x, y = k | data): the multivariate Student-t predictive of the normal-inverse-
    Wishart posterior ``posterior_parameters(estimates)`` (Ψ shared (D, D) for GDA, or
    (K, D, D) with ν_k per class for QDA) with ν − D + 1 degrees of freedom, location m_k and
    shape Ψ (κ_k + 1) / (κ_k (ν − D + 1)), plus log E[π_k]; a row with missing entries over
    its observed ones (the sub-vector and sub-block, the same degrees of freedom)."""
    if "prior_mean" not in estimates:
        raise ValueError(
            "posterior_predictive_proba: needs the normal-inverse-Wishart prior; these "
            "estimates were fitted with prior=None (the MLE)."
        )
    refuse_missing_fit(estimates, "posterior_predictive_proba")
    X = np.asarray(X, dtype=np.float64)
    post = posterior_parameters(estimates)
    n_classes, n_features = post["mean"].shape
    dof = np.broadcast_to(post["dof"] - n_features + 1, (n_classes,))
    scale = np.broadcast_to(post["scale"], (n_classes, n_features, n_features))
    shape = np.stack(
        [scale[k] * (kappa + 1) / (kappa * dof[k]) for k, kappa in enumerate(post["kappa"])]
    )
    if np.isnan(X).any():
        joint = marginal_t_log_density(X, post["mean"], shape, dof).T
    else:
        joint = np.column_stack(
            [
                scipy_stats.multivariate_t.logpdf(X, loc=post["mean"][k], shape=shape[k], df=dof[k])
                for k in range(n_classes)
            ]
        )
    return joint.reshape(X.shape[0], -1) + np.log(estimates["class_prob"].values)[None, :]


def missing_fit_expected(
    estimates: xr.Dataset, class_alpha: float, parameter_dims: dict
) -> list[Expected]:
    """The comparison's blocks for a fit with missing entries: π's Dirichlet(N_k + a) is
    exact (the labels are all observed); every other variable of ``parameter_dims`` has
    none (:data:`MISSING_FIT`)."""
    blocks = [class_expected(estimates, class_alpha)]
    sampler = _SAMPLER_NAMES[estimates.attrs.get("missing_fit", "gibbs")]
    for name in parameter_dims:
        if name == "class_prob":
            continue
        shape = estimates[name].shape
        nan = np.full(shape, np.nan)
        keep = np.ones(shape, dtype=bool)
        if name == "cov":  # symmetric: one row per entry
            keep = np.broadcast_to(np.triu(np.ones(shape[-2:], dtype=bool)), shape).copy()
        blocks.append(
            Expected(
                variable=name,
                keep=keep,
                closed_form=nan,
                closed_form_sd=nan,
                mle=nan,
                expected_map=nan,
                reasons=(
                    reason_array(shape, MISSING_FIT.format(sampler=sampler)),
                    reason_array(shape, "SD not compared: no closed form either"),
                    reason_array(shape, "MAP not compared: map_ is EM's mode itself"),
                ),
                hide_map=np.zeros(shape, dtype=bool),
                prior="NIW, missing entries",
                mean_identity=None,
                sd_identity=None,
                map_identity=None,
            )
        )
    return blocks


def rows_with_missing_pattern(rows: np.ndarray, X) -> np.ndarray:
    """Simulated ``rows`` with the training rows' missing entries blanked as in ``X`` (a fit
    with missing entries is checked against data sets missing the same entries)."""
    X = np.asarray(X, dtype=np.float64)
    return np.where(np.isnan(X), np.nan, rows) if np.isnan(X).any() else rows


def observed_class_means(X, y_codes, n_classes: int) -> np.ndarray:
    """Each feature's mean within each class over its observed entries (NaN where a class
    has none), shape (class, feature)."""
    X = np.asarray(X, dtype=np.float64)
    observed = ~np.isnan(X)
    sums = np.zeros((n_classes, X.shape[1]))
    counts = np.zeros((n_classes, X.shape[1]))
    np.add.at(sums, y_codes, np.where(observed, X, 0.0))
    np.add.at(counts, y_codes, observed)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts
