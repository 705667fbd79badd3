"""GDA as a PyMC model on its sufficient statistics (see
:meth:`bayesgen.families.gda.GaussianFamily.pymc_model`).

Imported only when a PyMC model is asked for, so that the GDA closed forms stay importable
without PyMC and PyTensor.

The Gaussian densities of the conjugate models (QDA's too, :mod:`.qda_pymc`) are written out
by hand on the Cholesky factor L of the precision Λ = L Lᵀ that the Bartlett decomposition
gives: vᵀΛv = |Lᵀv|², log |Λ| = 2 Σ log L_jj, and no inverse, determinant or Cholesky of a
parameter anywhere in the log density or its gradient. PyMC's ``MvNormal(tau=…)`` and
``Wishart`` computed Σ = Λ⁻¹, its Cholesky factor and their gradients instead: on wine
(13 features, 3 classes) their numba compilation took 3 minutes of the demo's NUTS fits.
Matrix products are written as broadcast products summed over an axis (:func:`_matmul`):
PyTensor 3.3's numba ``Dot`` (a BLAS gemm/gemv call) takes 20 s or more to compile for each
memory layout it meets, against 2 s for a sum of products, and the matrices are small.
The observed statistics stay random variables (:class:`pymc.CustomDist` with these log
densities and a symbolic simulation), so PyMC still simulates them.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr
from pymc.distributions.shape_utils import rv_size_is_none

from bayesgen.families.shared_pymc import (
    block_dims,
    block_model,
    class_prob_prior,
    observed_class_means,
    observed_classes,
    positive_priors,
    wishart_is_regular,
)

if TYPE_CHECKING:
    from bayesgen.families.unlabelled_pymc import RowTerms

_LOG_2PI = float(np.log(2 * np.pi))


def static_data(name: str, value, **kwargs):
    """``pm.Data`` with its shape fixed (``pm.set_data`` keeps shapes here anyway): with
    unknown shapes every broadcast in the graph gets a run-time shape check, whose error
    message alone takes numba seconds to compile."""
    return pm.Data(name, value, shape=np.shape(value), **kwargs)


def gda_pymc_model(
    estimates: xr.Dataset, *, cov_prior: str, lkj_eta: float, incomplete_rows=None
) -> pm.Model:
    """The model :meth:`~bayesgen.families.gda.GaussianFamily.pymc_model` documents."""
    if "prior_mean" not in estimates:
        raise ValueError(
            "stats: the GDA model needs the prior hyperparameters; compute stats with "
            "closed_form.gda(X, y, prior=NormalInverseWishart(...)), not prior=None."
        )
    _, class_alpha = positive_priors(estimates, needs_alpha=False)
    n_features = estimates.sizes["feature"]
    feature, square = block_dims("feature"), block_dims("feature", "feature2")
    with block_model(estimates) as model:
        # Hyperparameters are data too, so one compiled graph serves every data set of
        # this shape.
        prior_mean = static_data("prior_mean", estimates["prior_mean"].values, dims=feature)
        prior_kappa = pm.Data("prior_kappa", estimates.attrs["prior_kappa"])
        class_count, class_prob = class_prob_prior(estimates, class_alpha)
        n_present = int(np.count_nonzero(estimates["class_count"].values > 0))
        dof = class_count.sum() - n_present  # S ~ Wishart(N − K, Σ), K the classes with rows
        scatter = estimates["scatter"].values
        regular = wishart_is_regular(scatter, float(estimates["class_count"].sum()) - n_present)
        if cov_prior == "conjugate":
            prec_chol, half_log_det = bartlett_precision_chol(estimates)
            mu = precision_normal("mu", prior_mean, prec_chol, half_log_det, prior_kappa)
            observed_means_by_precision(estimates, class_count, mu, prec_chol, half_log_det)
            if regular:
                observed = static_data("scatter_data", scatter, dims=square)
                wishart_by_precision("scatter", dof, prec_chol, half_log_det, observed)
            else:
                singular_scatter_potential(
                    static_data("scatter_root", _matrix_root(scatter), dims=square),
                    dof,
                    prec_chol,
                    half_log_det,
                )

            def row_log_density(rows, k):
                return precision_normal_logp(rows, mu[k], prec_chol, half_log_det, 1.0)

            # Σ = L⁻ᵀ L⁻¹ and w_k = Λ μ_k = L (Lᵀ μ_k): no solve.
            cov = covariance(prec_chol)
            coef = _matmul(_matmul(mu, prec_chol), prec_chol.T)
        elif cov_prior == "lkj":
            scale = np.sqrt(
                np.diag(estimates["prior_scale"].values) / _prior_cov_divisor(estimates)
            )
            scale = static_data("prior_sd", scale, dims=feature)
            chol, _, _ = pm.LKJCholeskyCov(
                "cov_chol",
                n=n_features,
                eta=lkj_eta,
                sd_dist=pm.HalfNormal.dist(sigma=2.5 * scale, shape=n_features),
                compute_corr=True,
            )
            mu = pm.Normal(
                "mu", mu=prior_mean, sigma=10 * scale, dims=block_dims("class", "feature")
            )
            observed_class_means(estimates, class_count, mu, chol)
            if regular:
                observed = static_data("scatter_data", scatter, dims=square)
                pm.Wishart("scatter", nu=dof, scale_chol=chol, observed=observed, dims=square)
            else:
                # Any R with S = R Rᵀ turns tr(Λ S) into a sum of squares; eigh tolerates a
                # singular S.
                root = static_data("scatter_root", _matrix_root(scatter), dims=square)
                whitened = pt.linalg.solve_triangular(chol, root, lower=True)
                pm.Potential(
                    "scatter_loglik",
                    -dof * pt.sum(pt.log(pt.diag(chol))) - 0.5 * pt.sum(whitened**2),
                )

            def row_log_density(rows, k):
                return pm.logp(pm.MvNormal.dist(mu=mu[k], chol=chol), rows)

            cov = chol @ chol.T
            coef = pt.linalg.solve(cov, mu.T, assume_a="pos").T  # w_k = Σ⁻¹ μ_k
        else:
            raise ValueError(f"cov_prior: expected 'conjugate' or 'lkj'; got {cov_prior!r}.")
        if incomplete_rows is not None:
            observe_incomplete_rows(estimates, class_prob, *incomplete_rows, row_log_density)
        pm.Deterministic("cov", cov, dims=square)
        _pymc_linear_form(class_prob, mu, coef, n_classes=estimates.sizes["class"])
    return model


# --------------------------------------------------------------------------------------------
# Rows with missing entries (GDA's and QDA's), beside the statistics of the complete rows.


def observe_incomplete_rows(estimates, class_prob, rows, y_codes, row_log_density) -> None:
    """The rows with missing entries (NaN in ``rows``, their class codes ``y_codes``) beside
    the statistics of the complete ones (``estimates``): their labels observed as
    ``incomplete_class_count`` ~ Multinomial(n, π), and each row's density N(x_i | μ_k, Σ_k)
    with its missing entries latent, all of them in one free vector ``missing_entries``
    (flat prior: the row density is their prior, given the parameters) placed into the rows
    by ``set_subtensor``; the rows' log densities, summed, are the potential
    ``incomplete_rows_loglik``. ``row_log_density(rows, k)`` gives log N(x | μ_k, Σ_k) of each
    row of ``rows`` (a class's rows, contiguous: the rows are sorted by class, so each class
    is a plain slice). A row with nothing observed adds its label alone (its density
    integrates to one). Integrating the entries out instead (the marginal of each row's
    observed sub-vector) needs Σ_k itself and a Cholesky of its sub-block per row, where the
    conjugate model has only the precision's factor (see the module docstring).
    """
    rows = np.asarray(rows, dtype=np.float64)
    y_codes = np.asarray(y_codes, dtype=np.int64)
    n_classes = estimates.sizes["class"]
    counts = np.bincount(y_codes, minlength=n_classes)
    pm.Multinomial(
        "incomplete_class_count",
        n=int(counts.sum()),
        p=class_prob,
        observed=counts,
        dims=block_dims("class"),
    )
    seen = ~np.isnan(rows).all(axis=1)
    order = np.argsort(y_codes[seen], kind="stable")
    rows, y_codes = rows[seen][order], y_codes[seen][order]
    if not len(rows):
        return
    missing = np.isnan(rows)
    where = np.flatnonzero(missing)
    model = pm.modelcontext(None)
    model.add_coord(block_dims("missing_entry")[0], np.arange(where.size))
    model.add_coord(block_dims("incomplete_row")[0], np.arange(len(rows)))
    # Each missing entry starts at its feature's prior mean, the observed entries' mean for
    # the data-centred defaults.
    initial = np.broadcast_to(estimates["prior_mean"].values, rows.shape)[missing]
    entries = pm.Flat("missing_entries", initval=initial, dims=block_dims("missing_entry"))
    filled = static_data(
        "incomplete_rows_data",
        np.where(missing, 0.0, rows),
        dims=block_dims("incomplete_row", "feature"),
    )
    completed = pt.set_subtensor(filled.ravel()[where], entries).reshape(rows.shape)
    bounds = np.searchsorted(y_codes, np.arange(n_classes + 1))
    log_density = [
        pt.sum(row_log_density(completed[start:stop], k))
        for k, (start, stop) in enumerate(itertools.pairwise(bounds))
        if stop > start
    ]
    pm.Potential("incomplete_rows_loglik", pt.sum(pt.stack(log_density)))


# --------------------------------------------------------------------------------------------
# The conjugate Gaussian model on L, the Cholesky factor of the precision (shared with QDA).


def bartlett_precision_chol(estimates: xr.Dataset, n_classes: int | None = None):
    """L = L_V A, the Cholesky factor of Λ ~ Wishart(ν₀, V = Ψ₀⁻¹) by the Bartlett
    decomposition (A lower, A_jj² ~ χ²(ν₀ − j), A_ij ~ N(0, 1) below), one per class where
    ``n_classes`` is given (QDA), else one (GDA). Returns L and ½ log |Λ| = Σ_j log L_jj."""
    n_features = estimates.sizes["feature"]
    dof = pm.Data("prior_dof", estimates.attrs["prior_dof"])
    scale_chol = np.linalg.cholesky(np.linalg.inv(estimates["prior_scale"].values))
    scale_chol = static_data(
        "prior_precision_chol", scale_chol, dims=block_dims("feature", "feature2")
    )
    batch = () if n_classes is None else (n_classes,)
    n_below = n_features * (n_features - 1) // 2
    chi2 = pm.ChiSquared(
        "bartlett_chi2", nu=dof - np.arange(n_features), shape=(*batch, n_features)
    )
    below = pm.Normal("bartlett_normal", 0.0, 1.0, shape=(*batch, n_below))
    factor = _lower_triangular(pt.sqrt(chi2), below, n_features, batch)
    prec_chol = _matmul(scale_chol, factor)  # lower
    # L_jj = (L_V)_jj √χ²_j: the log-determinant needs no diagonal of L.
    half_log_det = pt.sum(pt.log(pt.diagonal(scale_chol))) + 0.5 * pt.sum(pt.log(chi2), axis=-1)
    return prec_chol, half_log_det


def _lower_triangular(diagonal, below, n_features: int, batch: tuple[int, ...]):
    """The lower triangular matrices with ``diagonal`` on their diagonal and ``below`` under
    it (row-major), as products with constant 0/1 matrices summed: set_subtensor at the
    triangle's indices puts advanced-indexing ops (and their gradients) in the graph, each
    one more numba function to compile."""
    size = n_features * n_features
    rows, cols = np.tril_indices(n_features, k=-1)
    place_diagonal = np.zeros((n_features, size))
    place_diagonal[np.arange(n_features), np.arange(n_features) * (n_features + 1)] = 1.0
    place_below = np.zeros((len(rows), size))
    place_below[np.arange(len(rows)), rows * n_features + cols] = 1.0
    flat = pt.sum(diagonal[..., :, None] * place_diagonal, axis=-2) + pt.sum(
        below[..., :, None] * place_below, axis=-2
    )
    return flat.reshape((*batch, n_features, n_features))


def _matmul(a, b):
    """a @ b (batched over leading axes) as a sum of broadcast products, which compiles in
    a fraction of the time of a numba ``Dot`` (see the module's docstring)."""
    return pt.sum(a[..., :, :, None] * b[..., None, :, :], axis=-2)


def _inverse_chol_transpose(prec_chol):
    """L⁻ᵀ, so that Σ = L⁻ᵀ (L⁻ᵀ)ᵀ: a forward inverse only (used by draws and
    deterministics, never differentiated)."""
    if prec_chol.ndim == 2 or prec_chol.type.shape[0] is None:
        return pt.linalg.inv(prec_chol).mT
    # One inverse per class: a batched (Blockwise) inverse takes three times as long to
    # compile as three plain ones.
    return pt.stack([pt.linalg.inv(prec_chol[k]).T for k in range(prec_chol.type.shape[0])])


def covariance(prec_chol):
    """Σ = Λ⁻¹ = L⁻ᵀ L⁻¹ (batched over a leading class axis if there is one)."""
    inv_chol_t = _inverse_chol_transpose(prec_chol)
    return _matmul(inv_chol_t, inv_chol_t.mT)


def _whitened_norms(vectors, prec_chol):
    """vᵀΛv = |Lᵀv|² for each vector v along the last axis (L broadcast over the rest)."""
    return pt.sum(pt.sum(vectors[..., :, None] * prec_chol, axis=-2) ** 2, axis=-1)


def precision_normal_logp(value, mean, prec_chol, half_log_det, scale):
    """log N(value | mean, (scale Λ)⁻¹) for Λ = L Lᵀ: one term per vector."""
    n_features = value.shape[-1]
    return (
        0.5 * n_features * (pt.log(scale) - _LOG_2PI)
        + half_log_det
        - 0.5 * scale * _whitened_norms(value - mean, prec_chol)
    )


def _precision_normal_draw(mean, prec_chol, half_log_det, scale, size):
    """mean + L⁻ᵀ z / √scale, z ~ N(0, I): a draw of N(mean, (scale Λ)⁻¹)."""
    shape = mean.shape if rv_size_is_none(size) else pt.concatenate([size, mean.shape[-1:]])
    noise = pm.Normal.dist(0.0, 1.0, size=shape)
    coloured = pt.sum(_inverse_chol_transpose(prec_chol) * noise[..., None, :], axis=-1)
    return mean + coloured / pt.sqrt(scale)[..., None]


def precision_normal(name, mean, prec_chol, half_log_det, scale, **kwargs):
    """x ~ N(mean, (scale Λ)⁻¹) along the last axis, with Λ = L Lᵀ given by L and
    ½ log |Λ|: μ_k ~ N(m₀, (κ₀ Λ)⁻¹) and x̄_k ~ N(μ_k, Σ / N_k). ``kwargs`` go to
    :class:`pymc.CustomDist` (dims, observed)."""
    kwargs.setdefault("dims", block_dims("class", "feature"))
    return pm.CustomDist(
        name,
        mean,
        prec_chol,
        half_log_det,
        scale,
        dist=_precision_normal_draw,
        logp=precision_normal_logp,
        signature="(d),(d,d),(),()->(d)",
        **kwargs,
    )


def observed_means_by_precision(stats, class_count, mu, prec_chol, half_log_det) -> None:
    """The class means observed as ``class_mean`` x̄_k ~ N(μ_k, Σ_k / N_k), for the classes
    with rows (those get their own coord ``observed_class`` where some class has none).
    ``prec_chol`` is L (feature, feature2) or one L_k per class (class, feature, feature2)."""
    dims, index = observed_classes(stats)
    if prec_chol.ndim == 3:
        prec_chol, half_log_det = prec_chol[index], half_log_det[index]
    data = static_data("class_mean_data", stats["class_mean"].values[index], dims=dims)
    n_rows = pt.cast(class_count[index], "float64")
    precision_normal(
        "class_mean", mu[index], prec_chol, half_log_det, n_rows, observed=data, dims=dims
    )


def _wishart_logp(value, dof, prec_chol, half_log_det):
    """log Wishart(S | ν, Σ = Λ⁻¹) = (ν − D − 1)/2 log |S| − ½ tr(Λ S) − νD/2 log 2
    + ν/2 log |Λ| − log Γ_D(ν/2)."""
    n_features = value.shape[-1]
    log_det_value = 2 * pt.sum(pt.log(pt.diagonal(pt.linalg.cholesky(value))))
    trace = pt.sum(_matmul(value, prec_chol) * prec_chol)  # tr(Lᵀ S L)
    j = pt.arange(n_features)
    log_multigamma = 0.25 * n_features * (n_features - 1) * np.log(np.pi) + pt.sum(
        pt.gammaln(0.5 * (dof - j))
    )
    return (
        0.5 * (dof - n_features - 1) * log_det_value
        - 0.5 * trace
        - 0.5 * dof * n_features * np.log(2.0)
        + dof * half_log_det
        - log_multigamma
    )


def _wishart_draw(dof, prec_chol, half_log_det, size):
    """S = (L⁻ᵀ A)(L⁻ᵀ A)ᵀ with A the Bartlett factor of Wishart(ν, I)."""
    n_features = prec_chol.shape[-1]
    chi2 = pm.ChiSquared.dist(nu=dof - pt.arange(n_features))
    normal = pm.Normal.dist(0.0, 1.0, size=(n_features, n_features))
    factor = pt.tril(normal, k=-1) + pt.diag(pt.sqrt(chi2))
    root = _matmul(_inverse_chol_transpose(prec_chol), factor)
    return _matmul(root, root.T)


def wishart_by_precision(name, dof, prec_chol, half_log_det, observed):
    """S ~ Wishart(ν, Σ) with Σ⁻¹ = Λ = L Lᵀ, observed (feature, feature2)."""
    return pm.CustomDist(
        name,
        dof,
        prec_chol,
        half_log_det,
        dist=_wishart_draw,
        logp=_wishart_logp,
        signature="(),(d,d),()->(d,d)",
        observed=observed,
        dims=block_dims("feature", "feature2"),
    )


def singular_scatter_potential(root, dof, prec_chol, half_log_det) -> None:
    """The kernel ν/2 log |Λ| − ½ tr(Λ S) of a scatter S = R Rᵀ without a Wishart density,
    as the potential ``scatter_loglik`` (summed over a leading class axis if there is one).
    Any R with S = R Rᵀ turns tr(Λ S) into a sum of squares |Lᵀ R|²."""
    whitened = _matmul(prec_chol.mT, root)
    pm.Potential(
        "scatter_loglik",
        pt.sum(dof * half_log_det - 0.5 * pt.sum(whitened**2, axis=(-2, -1))),
    )


def _pymc_linear_form(class_prob, mu, coef, *, n_classes: int) -> None:
    """Declare ``coef`` (w_k = Σ⁻¹ μ_k, given) and ``intercept`` as deterministics."""
    intercept = -0.5 * pt.sum(mu * coef, axis=-1) + pt.log(class_prob)
    if n_classes == 2:
        pm.Deterministic("coef", coef[1] - coef[0], dims=block_dims("feature"))
        pm.Deterministic("intercept", intercept[1] - intercept[0])
    else:
        pm.Deterministic("coef", coef, dims=block_dims("class", "feature"))
        pm.Deterministic("intercept", intercept, dims=block_dims("class"))


def _matrix_root(matrix: np.ndarray) -> np.ndarray:
    """R with R Rᵀ = ``matrix`` for a positive semi-definite matrix."""
    eigenvalues, eigenvectors = np.linalg.eigh(matrix)
    return eigenvectors * np.sqrt(np.clip(eigenvalues, 0.0, None))


def _prior_cov_divisor(estimates: xr.Dataset) -> float:
    """ν₀ − D − 1, the divisor of Ψ₀ giving the prior mean of Σ (1 where that mean is
    undefined), for the LKJ prior's scales."""
    return max(estimates.attrs["prior_dof"] - estimates.sizes["feature"] - 1, 1.0)


# --------------------------------------------------------------------------------------------
# Unlabelled rows (bayesgen.families.unlabelled_pymc): each row's density for every class, from
# the variables of the conjugate model (GDA's and QDA's).


def model_precision_chol(estimates: xr.Dataset, terms: RowTerms, n_classes: int | None = None):
    """L and ½ log |Λ| of a built model, from its variables ``prior_precision_chol``,
    ``bartlett_chi2`` and ``bartlett_normal``, as :func:`bartlett_precision_chol` made them
    (one L per class where ``n_classes`` is given, QDA's). The same graph again: PyTensor
    merges it with the model's own, so the gradient pays nothing twice."""
    n_features = estimates.sizes["feature"]
    scale_chol = terms.variable("prior_precision_chol")
    chi2 = terms.variable("bartlett_chi2")
    batch = () if n_classes is None else (n_classes,)
    factor = _lower_triangular(pt.sqrt(chi2), terms.variable("bartlett_normal"), n_features, batch)
    half_log_det = pt.sum(pt.log(pt.diagonal(scale_chol))) + 0.5 * pt.sum(pt.log(chi2), axis=-1)
    return _matmul(scale_chol, factor), half_log_det


def rows_log_density(rows, mu, prec_chol, half_log_det):
    """log N(x_i | μ_k, Λ_k⁻¹) of every row and class, shape (n_rows, n_classes), with μ
    (class, feature) and L one (feature, feature2) or one per class (class, feature,
    feature2), ½ log |Λ| a number or one per class."""
    rows = np.asarray(rows, dtype=np.float64)
    if np.isnan(rows).any():
        raise ValueError(
            "X: the unlabelled rows' densities need every entry (GDA and QDA fit rows with "
            "missing entries or unlabelled rows, not both)."
        )
    difference = rows[:, None, :] - mu[None]  # (row, class, feature)
    return (
        -0.5 * rows.shape[1] * _LOG_2PI
        + half_log_det
        - 0.5 * _whitened_norms(difference, prec_chol)
    )


def gda_class_log_likelihood(estimates: xr.Dataset, rows, terms: RowTerms):
    """log N(x_i | μ_k, Σ) of every row and class from the variables of
    :func:`gda_pymc_model`'s conjugate model, in full, shape (n_rows, n_classes) (see
    :func:`bayesgen.families.unlabelled_pymc.add_unlabelled_rows`).

    Raises
    ------
    ValueError
        Naming ``cov_prior``, for the LKJ prior's model: a semi-supervised fit finds its MAP
        by EM under the conjugate prior, so it has only that model's form.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.families import family
    >>> from bayesgen.families.unlabelled_pymc import RowTerms
    >>> X = np.array([[0.1, 1.0], [0.4, 0.8], [0.3, 1.3], [2.0, 3.1], [2.5, 2.9], [2.2, 3.5]])
    >>> fit = family("gda").fit(X, list("aaabbb"))
    >>> terms = RowTerms(family("gda").pymc_model(fit))
    >>> gda_class_log_likelihood(fit, np.array([[1.0, 2.0]]), terms).ndim  # (row, class)
    2
    """
    if not terms.has("bartlett_chi2"):
        raise ValueError(
            "cov_prior: unlabelled rows are fitted under the conjugate normal-inverse-Wishart "
            "prior (their MAP by EM); use cov_prior='conjugate'."
        )
    prec_chol, half_log_det = model_precision_chol(estimates, terms)
    return rows_log_density(rows, terms.variable("mu"), prec_chol, half_log_det)
