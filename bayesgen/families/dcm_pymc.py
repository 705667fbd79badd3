"""The Dirichlet compound multinomial block as a PyMC model on its count histograms (see
:meth:`bayesgen.families.dcm.DirichletMultinomialFamily.pymc_model`).
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import xarray as xr

from bayesgen.families.shared_pymc import block_dims, block_model, class_prob_prior
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
    starts at the point fit (the posterior mode).
    """
    shape, rate = concentration_prior
    class_alpha = float(estimates.attrs["class_alpha"])
    class_dims = block_dims("class")
    dims = block_dims("class", "feature")
    n_classes = estimates.sizes["class"]
    start_s = np.maximum(estimates["concentration"].values.astype(np.float64), 1e-6)
    start_m = _interior(estimates["feature_mean"].values.astype(np.float64))
    with block_model(estimates) as model:
        class_prob_prior(estimates, class_alpha)
        if rate == 0.0 and shape == 1.0:
            concentration = pm.HalfFlat("concentration", dims=class_dims, initval=start_s)
        else:
            concentration = pm.Gamma(
                "concentration", alpha=shape, beta=rate, dims=class_dims, initval=start_s
            )
        # Data, not a constant: 1 + λ f changes with the corpus, and a constant would make
        # every corpus's graph a new one to compile.
        prior_data = pm.Data("mean_prior", mean_prior, dims=block_dims("feature"))
        if estimates.attrs["prior_mean"] == "pooled":
            shared = pm.Dirichlet(
                "shared_mean", a=prior_data, dims=block_dims("feature"), initval=start_m[0]
            )
            mean = pm.Deterministic(
                "feature_mean", pt.repeat(shared[None, :], n_classes, axis=0), dims=dims
            )
        else:
            mean = pm.Dirichlet(
                "feature_mean",
                a=pt.ones((n_classes, 1)) * prior_data[None, :],
                dims=dims,
                initval=start_m,
            )
        pm.Potential("document_loglik", histogram_log_likelihood(histograms, concentration, mean))
    return model
