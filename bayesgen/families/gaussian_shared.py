"""What GDA and QDA share beyond the interface: the evidence and exact leave-one-out joint of
a normal-inverse-Wishart posterior, given the family's posterior parameters.
"""

from __future__ import annotations

import numpy as np

from bayesgen.families.base import class_log_evidence, loo_class_log_prob
from bayesgen.maths.evidence import niw_log_evidence
from bayesgen.maths.gaussian import niw_leave_one_out_log_density

__all__ = ["gaussian_log_evidence", "gaussian_loo_log_joint"]


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
