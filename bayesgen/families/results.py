"""What a block hands back to the generic layers: its variables, exact marginals and identities.

:class:`~bayesgen.families.base.Family`'s methods return these small values, so that the
inference layer can lay them out as posterior groups (:data:`Variable`,
:func:`parameter_coords`), summarise the exact posterior without draws (:class:`Marginal`) and
the comparison can check identities that hold in every draw (:class:`DrawIdentity`). The
constructors of the common marginals (Dirichlet and Beta components, the normal-inverse-Wishart
μ and Σ) are here too: blocks share them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

#: (dims, values) of one variable, as ``xarray.Dataset`` takes it.
Variable = tuple[tuple[str, ...], np.ndarray]


def parameter_coords(estimates: xr.Dataset) -> dict[str, pd.Index]:
    """The coords of the parameters: those of ``estimates`` among class, feature, feature2 and
    category, and a mixed model's block dims (the posterior's, the MAP point's and the PyMC
    model's)."""
    names = ("class", "feature", "feature2", "category")
    # The pandas indexes themselves: a new Dataset reuses them, where from their values it
    # would build each index again (20 ms for 50,000 feature names, several times a fit).
    coords = {name: estimates.indexes[name] for name in names if name in estimates.coords}
    # A mixed model's blocks' own dims (``size::feature``, see families.block_layout).
    coords |= {name: index for name, index in estimates.indexes.items() if "::" in name}
    return coords


@dataclass(frozen=True)
class Marginal:
    """The exact marginal posterior of every scalar of one parameter.

    Attributes
    ----------
    dims : tuple of str
        The parameter's dims (as :attr:`Family.parameters
        <bayesgen.families.base.Family.parameters>`).
    mean, sd : numpy.ndarray
        Exact posterior mean and SD of each scalar, in the parameter's shape.
    distribution : scipy.stats frozen distribution, optional
        With array parameters broadcasting to that shape: its ``ppf`` gives the intervals.
        None where no scalar has a standard closed-form marginal.
    has_interval : numpy.ndarray of bool, optional
        The scalars whose ``distribution`` is their marginal (default: all of them); the
        others (Σ's off-diagonal entries) get their intervals from draws.
    point_mass : numpy.ndarray of bool, optional
        Scalars that are a constant (the categorical model's padding cells, always 0): their
        mean, SD and interval are ``mean``, 0 and [mean, mean].
    """

    dims: tuple[str, ...]
    mean: np.ndarray
    sd: np.ndarray
    distribution: object = None
    has_interval: np.ndarray | None = None
    point_mass: np.ndarray | None = None


@dataclass(frozen=True)
class DrawIdentity:
    """An identity that holds in every posterior draw, and how far the draws are from it.

    Attributes
    ----------
    statements : dict of str to str
        Per variable, the identity as the comparison's identities table names it.
    errors : dict of str to numpy.ndarray
        Per variable (same keys), in its shape: the largest error over the draws in units of
        its tolerance (rounding of the stored draws); ≤ 1 agrees, NaN or inf does not.
    failure : str
        What a value that fails is, for the warning: "… values are not …".
    """

    statements: dict[str, str]
    errors: dict[str, np.ndarray]
    failure: str


def dirichlet_marginal(
    dims: tuple[str, ...], concentration: np.ndarray, *, beta: bool = False
) -> Marginal:
    """Component marginals of Dirichlet(concentration) along the last axis: Beta(a_j, a0 − a_j).

    ``beta`` marks a (present, absent) pair whose first component is the parameter. Zero
    concentrations are padding, a point mass at 0.
    """
    concentration = np.asarray(concentration, dtype=np.float64)
    total = concentration.sum(axis=-1, keepdims=True)
    if beta:
        concentration, total = concentration[..., 0], total[..., 0]
    return beta_marginal(dims, concentration, total)


def beta_marginal(dims: tuple[str, ...], concentration: np.ndarray, total) -> Marginal:
    """Beta(a, a0 − a) marginals of concentrations a of totals a0 (see
    :func:`dirichlet_marginal`); a zero a is padding, a point mass at 0."""
    from scipy import stats

    padding = concentration <= 0
    if not padding.any():  # the common case, in few passes over a million cells
        mean = concentration / total
        # √(m (1 − m) / (a0 + 1)) in place: each temporary of a million cells costs a pass
        sd = 1.0 - mean
        sd *= mean
        sd /= total + 1.0
        np.sqrt(sd, out=sd)
        return Marginal(dims, mean, sd, stats.beta(concentration, total - concentration))
    a = np.where(padding, 1.0, concentration)
    b = np.where(padding, 1.0, total - concentration)
    mean = np.where(padding, 0.0, a / (a + b))
    sd = np.where(padding, 0.0, np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1.0))))
    return Marginal(dims, mean, sd, stats.beta(a, b), point_mass=padding)


def niw_marginals(mean, kappa, dof, scale) -> dict[str, Marginal]:
    """Exact marginals of μ and Σ under normal-inverse-Wishart parameters (GDA and QDA).

    ``mean`` (K, D) and ``kappa`` (K,) are the class means' m_k and κ_k; ``dof`` ν and
    ``scale`` Ψ are one (D, D) scale for a shared Σ (GDA) or ν (K,) and Ψ (K, D, D) per class
    (QDA). μ_kj is Student-t with ν − D + 1 degrees of freedom, location m_kj and scale
    √(Ψ_jj / (κ_k (ν − D + 1))); Σ_jj is inverse-gamma((ν − D + 1) / 2, Ψ_jj / 2). Every Σ_ij
    has the inverse-Wishart mean Ψ_ij / (ν − D − 1) and variance
    ((ν − D + 1) Ψ_ij² + (ν − D − 1) Ψ_ii Ψ_jj) / ((ν − D)(ν − D − 1)²(ν − D − 3)), but the
    off-diagonal entries have no standard marginal: their intervals come from draws. A
    moment that does not exist (too few degrees of freedom) is NaN.
    """
    from scipy import stats

    mean, kappa = np.asarray(mean, dtype=np.float64), np.asarray(kappa, dtype=np.float64)
    dof, scale = np.asarray(dof, dtype=np.float64), np.asarray(scale, dtype=np.float64)
    n_features = scale.shape[-1]
    shared = scale.ndim == 2
    nu = dof - n_features  # ν − D, broadcast per class for QDA
    diagonal = np.diagonal(scale, axis1=-2, axis2=-1)  # (D,) or (K, D)
    df = nu + 1.0
    nu_k = np.broadcast_to(nu, kappa.shape)[:, None]
    t_scale = np.sqrt(diagonal / (kappa[:, None] * (nu_k + 1.0)))
    with np.errstate(divide="ignore", invalid="ignore"):
        mu_sd = np.where(nu_k > 1.0, t_scale * np.sqrt((nu_k + 1.0) / (nu_k - 1.0)), np.nan)
        mu_mean = np.where(nu_k > 0.0, mean, np.nan)
        nu_c = nu if shared else nu[:, None, None]
        cov_mean = np.where(nu_c > 1.0, scale / (nu_c - 1.0), np.nan)
        outer = diagonal[..., :, None] * diagonal[..., None, :]
        variance = ((nu_c + 1.0) * scale**2 + (nu_c - 1.0) * outer) / (
            nu_c * (nu_c - 1.0) ** 2 * (nu_c - 3.0)
        )
        cov_sd = np.where(nu_c > 3.0, np.sqrt(variance), np.nan)
    eye = np.broadcast_to(np.eye(n_features, dtype=bool), scale.shape)
    shape_ig = np.broadcast_to(df if shared else df[:, None, None], scale.shape) / 2.0
    # Off the diagonal the inverse-gamma is a placeholder that has_interval masks out.
    scale_ig = np.where(eye, scale, outer) / 2.0
    cov_dims = ("feature", "feature2") if shared else ("class", "feature", "feature2")
    return {
        "mu": Marginal(
            ("class", "feature"),
            mu_mean,
            mu_sd,
            stats.t(np.broadcast_to(nu_k + 1.0, mean.shape), loc=mean, scale=t_scale),
        ),
        "cov": Marginal(
            cov_dims, cov_mean, cov_sd, stats.invgamma(shape_ig, scale=scale_ig), has_interval=eye
        ),
    }


__all__ = [
    "DrawIdentity",
    "Marginal",
    "Variable",
    "beta_marginal",
    "dirichlet_marginal",
    "niw_marginals",
    "parameter_coords",
]
