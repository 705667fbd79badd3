"""The Gaussian models' MAP problem on standardised features.

``find_MAP`` (L-BFGS-B) stops on a gradient tolerance, so on features of very different
scales (wine's proline is in the hundreds, its hue below 1) it stops early. The
normal-inverse-Wishart and LKJ models are equivariant under the affine map of
:func:`standardised_problem`, so the mode found on the standardised features maps back
exactly. GDA and QDA both use it (their ``map_problem``).
"""

from __future__ import annotations

import numpy as np
import xarray as xr


def standardised_problem(estimates: xr.Dataset, pooled_scatter: np.ndarray):
    """The statistics and prior of the standardised features (x − c) / s, and the map
    μ = c + s μ', Σ = diag(s) Σ' diag(s) of a point found there back to the original ones.

    c is the overall mean and s² the diagonal of ``pooled_scatter`` (the within-class scatter
    summed over the classes) over N, 1 for a constant feature. ``scatter`` and ``cov`` may
    carry a class dimension (QDA's Σ_k), which the map applies to each class alike.

    Returns
    -------
    scaled : xarray.Dataset
        ``estimates`` with ``class_mean``, ``scatter``, ``prior_mean``, ``prior_scale`` of the
        standardised features.
    restore : callable
        Maps a point's ``mu`` and ``cov`` back (other variables are kept as they are).
    """
    count = estimates["class_count"].values.astype(np.float64)
    n_samples = count.sum()
    class_mean = estimates["class_mean"].values
    center = count @ class_mean / n_samples
    scale = np.sqrt(np.diag(pooled_scatter) / n_samples)
    scale = np.where(scale > 0, scale, 1.0)
    outer = np.outer(scale, scale)
    scaled = estimates.copy()
    scaled["class_mean"] = (("class", "feature"), (class_mean - center) / scale)
    scaled["scatter"] = (estimates["scatter"].dims, estimates["scatter"].values / outer)
    scaled["prior_mean"] = (("feature",), (estimates["prior_mean"].values - center) / scale)
    scaled["prior_scale"] = (("feature", "feature2"), estimates["prior_scale"].values / outer)

    def restore(point: xr.Dataset) -> xr.Dataset:
        restored = point.copy()
        restored["mu"] = (point["mu"].dims, center + scale * point["mu"].values)
        restored["cov"] = (point["cov"].dims, point["cov"].values * outer)
        return restored

    return scaled, restore
