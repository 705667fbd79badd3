"""The Dirichlet compound multinomial block as a PyMC model on its count histograms (see
:meth:`bayesgen.families.dcm.DirichletMultinomialFamily.pymc_model`).
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import xarray as xr

from bayesgen.families.dcm_transforms_pymc import (
    StandardisedLogRatio,
    concentration_standardisation,
    mean_standardisation,
    sampling_start_mean,
)
from bayesgen.families.shared_pymc import (
    StandardisedLog,
    block_dims,
    block_model,
    class_prob_prior,
    standardisation_data,
)
from bayesgen.maths.dirichlet_multinomial import CountHistograms

#: The histograms' entry arrays the likelihood reads.
_ENTRIES = (
    "word_class",
    "word_feature",
    "word_level",
    "word_weight",
    "length_class",
    "length_level",
    "length_weight",
)


def _interior(mean: np.ndarray) -> np.ndarray:
    """A starting point inside the simplex near ``mean`` (the flat fit can put m = 0)."""
    mean = np.maximum(mean, 1e-8)
    return mean / mean.sum(axis=-1, keepdims=True)


def log_ratio_data(name: str, constants, *, dims) -> pt.TensorVariable:
    """The constants of :class:`StandardisedLogRatio` (location, scale, log_scale, weight) as
    one ``pm.Data`` ``{name}_log_ratio``, dims ("log_ratio", *dims): data, so that one compiled
    graph serves every corpus of the same shape (see
    :func:`~bayesgen.families.shared_pymc.standardisation_data`)."""
    model = pm.modelcontext(None)
    if "log_ratio" not in model.coords:
        model.add_coord("log_ratio", ["location", "scale", "log_scale", "weight"])
    dims = (dims,) if isinstance(dims, str) else tuple(dims)
    return pm.Data(f"{name}_log_ratio", np.stack(constants), dims=("log_ratio", *dims))


def histogram_log_likelihood(histograms: CountHistograms, concentration, mean):
    """Σ_c h(c) [lnΓ(c + α) − lnΓ(α)] − Σ_c g(c) [lnΓ(c + s) − lnΓ(s)] as a PyTensor scalar
    (no multinomial coefficient), α = s m; ``mean`` (class, feature).

    The histograms enter as shared variables, not constants: the compiled graph is then the
    same for every corpus of the same model (only its inputs change), so a second fit (a
    ``partial_fit`` chunk, another data set) finds it in the compile cache.
    """
    entries = {
        name: pytensor.shared(np.asarray(getattr(histograms, name)), name=name) for name in _ENTRIES
    }
    word_class = entries["word_class"]
    cell_alpha = concentration[word_class] * mean[word_class, entries["word_feature"]]
    words = pt.sum(
        entries["word_weight"]
        * (pt.gammaln(cell_alpha + entries["word_level"]) - pt.gammaln(cell_alpha))
    )
    total = concentration[entries["length_class"]]
    lengths = pt.sum(
        entries["length_weight"] * (pt.gammaln(total + entries["length_level"]) - pt.gammaln(total))
    )
    return words - lengths


def dcm_pymc_model(
    estimates: xr.Dataset,
    histograms: CountHistograms,
    *,
    concentration_prior: tuple[float, float],
    mean_prior: np.ndarray,
) -> pm.Model:
    """The Dirichlet compound multinomial naive Bayes model.

    π ~ Dirichlet(a) with the class counts observed (``class_count`` ~ Multinomial(N, π));
    ``concentration`` s_k ~ Gamma(shape, rate) of ``concentration_prior`` (``HalfFlat`` for
    the flat prior, (1, 0)); and ``feature_mean`` m_k ~ Dirichlet(``mean_prior``), 1 + λ f,
    per class, or for ``prior_mean="pooled"`` one
    ``shared_mean`` m ~ Dirichlet(1 + λ f) that ``feature_mean`` repeats for every class.
    The documents enter through the potential ``document_loglik``, their DirMult
    log-likelihood from the count histograms (:mod:`bayesgen.maths.dirichlet_multinomial`),
    at a cost that grows with the distinct count levels, not the documents; the pointwise
    log-likelihood of each document is computed from the draws
    (:meth:`~bayesgen.families.dcm.DirichletMultinomialFamily.row_log_likelihood`). NUTS
    samples log s and log-ratio coordinates of m centred near the mode and whitened by the
    curvature at the point fit (:mod:`bayesgen.families.dcm_transforms_pymc`; their
    constants the data ``concentration_standardisation`` and ``{feature,shared}_mean_log_ratio``)
    and starts at their zero, about the mode of the density it samples.
    """
    shape, rate = concentration_prior
    class_alpha = float(estimates.attrs["class_alpha"])
    class_dims = block_dims("class")
    dims = block_dims("class", "feature")
    n_classes = estimates.sizes["class"]
    start_s = np.maximum(estimates["concentration"].values.astype(np.float64), 1e-6)
    start_m = _interior(estimates["feature_mean"].values.astype(np.float64))
    pooled = estimates.attrs["prior_mean"] == "pooled"
    # NUTS samples log s and m's log-ratio coordinates centred at the mode and scaled by the
    # curvature there (dcm_transforms_pymc): under PyMC's log and simplex transforms it
    # took steps of 0.015 at tree depth 8 (2 x 2,000 words), held there by one stiff
    # direction of the simplex transform (see StandardisedLogRatio).
    m_constants = mean_standardisation(
        histograms, start_s, start_m, prior=mean_prior, pooled=pooled
    )
    # NUTS (and find_MAP, which then has a few steps to go) starts at z = 0, about the mode of
    # the density NUTS samples (its log-Jacobians included), not at the point fit: see
    # sampling_start_mean; and s at one Newton step from ŝ with m there.
    start_m = sampling_start_mean(histograms, start_s, start_m, prior=mean_prior, pooled=pooled)
    s_constants = concentration_standardisation(
        histograms,
        start_s,
        np.broadcast_to(start_m, (n_classes, start_m.shape[-1])),
        shape=shape,
        rate=rate,
    )
    start_s = np.exp(s_constants[0])
    with block_model(estimates) as model:
        class_prob_prior(estimates, class_alpha)
        s_data = standardisation_data("concentration", s_constants, dims=class_dims)
        s_transform = StandardisedLog(s_data[0], s_data[1], s_data[2])
        if rate == 0.0 and shape == 1.0:
            concentration = pm.HalfFlat(
                "concentration",
                dims=class_dims,
                shape=s_data.shape[1:],  # see standardisation_data
                initval=start_s,
                default_transform=s_transform,
            )
        else:
            concentration = pm.Gamma(
                "concentration",
                alpha=shape,
                beta=rate,
                dims=class_dims,
                shape=s_data.shape[1:],
                initval=start_s,
                default_transform=s_transform,
            )
        # Data, not a constant: 1 + λ f changes with the corpus, and a constant would make
        # every corpus's graph a new one to compile.
        prior_data = pm.Data("mean_prior", mean_prior, dims=block_dims("feature"))
        name = "shared_mean" if pooled else "feature_mean"
        mean_dims = block_dims("feature") if pooled else dims
        m_data = log_ratio_data(name, m_constants, dims=mean_dims)
        # The Dirichlet's concentrations take the shape of the data, so that the data are
        # inputs of its graph, as a transform needs (see standardisation_data).
        m = pm.Dirichlet(
            name,
            a=pt.broadcast_to(prior_data, m_data.shape[1:]),
            dims=mean_dims,
            initval=start_m,
            default_transform=StandardisedLogRatio(m_data[0], m_data[1], m_data[2], m_data[3]),
        )
        if pooled:
            mean = pm.Deterministic(
                "feature_mean", pt.repeat(m[None, :], n_classes, axis=0), dims=dims
            )
        else:
            mean = m
        pm.Potential("document_loglik", histogram_log_likelihood(histograms, concentration, mean))
    return model
