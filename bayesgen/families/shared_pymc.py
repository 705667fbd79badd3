"""The PyMC building blocks the families' models share: the block's model and its dims (alone,
or as one block of a mixed model, :func:`block_scope`), the class prior, the Gamma-Poisson
form of a Dirichlet, observed count variables with a cheap kernel, the standardising
transforms NUTS samples in, and λ as a random variable under a hyperprior.

See :mod:`bayesgen.generative` for the models they build and why they are parameterised so.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr
from pymc.logprob.transforms import ChainedTransform, SimplexTransform, Transform

from bayesgen.families.block_layout import SHARED_DIMS, scoped_dim
from bayesgen.families.gamma_transforms_pymc import (
    SKEWED_RATE_SHAPE,
    CubeRootGamma,
    all_positive,
    cube_root_gamma_constants,
    invert_root_deviance_offset,
    root_deviance_offset,
)
from bayesgen.families.hyperprior import fitted_alpha_prior
from bayesgen.families.results import parameter_coords as model_coords
from bayesgen.maths.dirichlet import per_class

__all__ = ["SHARED_DIMS", "model_coords", "scoped_dim"]


def whole_counts(values) -> np.ndarray | None:
    """``values`` as int64 when they are all whole numbers ≥ 0 (counts), else None."""
    values = np.asarray(values, dtype=np.float64)
    if np.all(np.isfinite(values)) and np.all(values >= 0) and np.all(values == np.round(values)):
        return values.astype(np.int64)
    return None


# --------------------------------------------------------------------------------------------
# Blocks side by side: a block's builder makes its model alone, or, inside block_scope, as a
# named submodel of a mixed model whose blocks share one class prior. The builders declare
# their model with block_model and every dims tuple and coord name with block_dims, which
# change nothing outside a scope.

# The naming rule (scoped_dim, SHARED_DIMS) is the mixed model's own, so that its exact draws
# and NUTS' draws have the same names: see bayesgen.families.block_layout.


@dataclass(frozen=True)
class BlockScope:
    """The block being built inside :func:`block_scope`: its name, the shared class prior's
    counts and probabilities, and the mixed model it belongs to."""

    prefix: str
    class_count: object
    class_prob: object
    parent: pm.Model


_SCOPE: ContextVar[BlockScope | None] = ContextVar("bayesgen_block_scope", default=None)


@contextmanager
def block_scope(prefix: str, *, class_count, class_prob) -> Iterator[BlockScope]:
    """Build one block of a mixed model: within it, a family's ``pymc_model`` declares its
    variables in the submodel ``prefix`` of the model being built, on the shared class prior.

    Inside the scope, a builder's model (:func:`block_model`) is ``pm.Model(name=prefix)``,
    a submodel of the model whose context encloses the scope: PyMC names all its random
    variables, deterministics, potentials and data ``f"{prefix}::{name}"``
    (``"num::mu"``, ``"num::prior_mean"``). Its dims are renamed by :func:`scoped_dim`
    (:func:`block_dims`), its coords registered under the renamed dims, and
    :func:`class_prob_prior` returns ``class_count`` and ``class_prob`` instead of declaring
    a second class prior. Outside a scope nothing changes.

    Parameters
    ----------
    prefix : str
        The block's name: not empty, without "::" or "/", unique in the mixed model.
    class_count, class_prob : pytensor.tensor.TensorVariable
        What :func:`class_prob_prior` returned in the enclosing model (the ``pm.Data``
        ``class_count_data`` and the random variable ``class_prob``).

    Yields
    ------
    BlockScope

    Raises
    ------
    ValueError
        For a bad ``prefix``.
    RuntimeError
        Outside a model's context, or inside another block's scope.

    Examples
    --------
    >>> import numpy as np, pymc as pm, xarray as xr
    >>> stats = xr.Dataset(
    ...     {"class_count": ("class", [3, 2])},
    ...     coords={"class": ["a", "b"], "feature": ["x", "y"]},
    ...     attrs={"class_alpha": 1.0},
    ... )
    >>> with pm.Model(coords={"class": ["a", "b"]}) as mixed:
    ...     class_count, class_prob = class_prob_prior(stats, 1.0)
    ...     with block_scope("num", class_count=class_count, class_prob=class_prob):
    ...         with block_model(stats) as block:
    ...             _ = pm.Normal("mu", dims=block_dims("class", "feature"))
    ...             same_prior = class_prob_prior(stats, 1.0)[1] is class_prob
    >>> block.name, mixed.named_vars_to_dims["num::mu"], same_prior
    ('num', ('class', 'num::feature'), True)
    >>> mixed.coords["num::feature"]
    ('x', 'y')
    """
    if not isinstance(prefix, str) or not prefix or "::" in prefix or "/" in prefix:
        raise ValueError(f"prefix: expected a non-empty name without '::' or '/'; got {prefix!r}.")
    if prefix.endswith(":"):
        raise ValueError(f"prefix: a block's name may not end with ':'; got {prefix!r}.")
    if _SCOPE.get() is not None:
        raise RuntimeError(
            f"block_scope({prefix!r}): already inside block_scope({_SCOPE.get().prefix!r}); "
            "blocks do not nest."
        )
    parent = pm.Model.get_context(error_if_none=False)
    if parent is None:
        raise RuntimeError(
            f"block_scope({prefix!r}): enter the mixed model's context first "
            "(with pm.Model(...)), in which class_count and class_prob were declared."
        )
    token = _SCOPE.set(BlockScope(prefix, class_count, class_prob, parent))
    try:
        yield _SCOPE.get()
    finally:
        _SCOPE.reset(token)


def current_block_scope() -> BlockScope | None:
    """The block being built (:func:`block_scope`), or None outside a mixed model."""
    return _SCOPE.get()


def block_dims(*dims: str) -> tuple[str, ...]:
    """``dims`` as the block being built names them: unchanged alone, renamed by
    :func:`scoped_dim` inside :func:`block_scope`. For every ``dims=`` and coord name of a
    builder."""
    scope = _SCOPE.get()
    if scope is None:
        return dims
    return tuple(scoped_dim(scope.prefix, dim) for dim in dims)


def block_model(estimates: xr.Dataset, extra_coords: Mapping | None = None) -> pm.Model:
    """The model a builder declares its variables in, with the coords of ``estimates``
    (:func:`model_coords`) and ``extra_coords``: ``pm.Model(coords=...)`` alone; inside
    :func:`block_scope` the submodel ``pm.Model(name=prefix, coords=...)`` of the mixed model,
    its coords under the renamed dims (:func:`block_dims`; "class" must have the mixed
    model's labels, PyMC refuses other ones)."""
    coords = dict(model_coords(estimates)) | dict(extra_coords or {})
    scope = _SCOPE.get()
    if scope is None:
        return pm.Model(coords=coords)
    renamed = {scoped_dim(scope.prefix, dim): values for dim, values in coords.items()}
    return pm.Model(name=scope.prefix, coords=renamed, model=scope.parent)


def observed_classes(stats: xr.Dataset) -> tuple[tuple[str, str], slice | np.ndarray]:
    """The dims and index of the class means a Gaussian model observes: ("class", "feature")
    and every class, or with classes without rows (``partial_fit``) the new coord
    ``observed_class`` of those with rows, and their indices (:func:`block_dims` applied)."""
    count = stats["class_count"].values
    present = np.flatnonzero(count > 0)
    if present.size == count.size:
        return block_dims("class", "feature"), slice(None)
    dims = block_dims("observed_class", "feature")
    pm.modelcontext(None).add_coord(dims[0], stats["class"].values[present])
    return dims, present


def class_prob_prior(stats: xr.Dataset, class_alpha: float):
    """π ~ Dirichlet(a) and the class counts observed as ``class_count`` ~ Multinomial(N, π).

    NUTS samples π through :class:`StandardisedSimplex`, standardised by the posterior
    Dirichlet(a + N_k), and starts at its posterior mean. Returns the class counts (the
    ``pm.Data`` ``class_count_data``, int64) and π. Inside :func:`block_scope` it declares
    nothing and returns the mixed model's class counts and π (after checking, where they are
    data, that they count the same rows).
    """
    counts = whole_counts(stats["class_count"].values)
    if counts is None:
        raise ValueError(
            "stats: class_count must hold whole numbers ≥ 0 (the rows of each class); got "
            f"{stats['class_count'].values.tolist()[:10]}."
        )
    scope = _SCOPE.get()
    if scope is not None:
        shared = getattr(scope.class_count, "get_value", None)
        if shared is not None and not np.array_equal(shared(), counts):
            raise ValueError(
                f"block {scope.prefix!r}: its class counts {counts.tolist()} differ from the "
                f"mixed model's {np.asarray(shared()).tolist()}; every block sees the same rows."
            )
        return scope.class_count, scope.class_prob
    n_classes = stats.sizes["class"]
    class_count = pm.Data("class_count_data", counts, dims="class")
    # Priors are data too, so a grid of λ reuses one compiled graph.
    concentration = pm.Data("class_alpha", np.full(n_classes, class_alpha), dims="class")
    posterior = counts + class_alpha
    prob = pm.Dirichlet(
        "class_prob",
        a=concentration,
        dims="class",
        default_transform=StandardisedSimplex(concentration + class_count),
        initval=posterior / posterior.sum(),
    )
    pm.Multinomial("class_count", n=class_count.sum(), p=prob, observed=class_count, dims="class")
    return class_count, prob


def positive_priors(stats: xr.Dataset, needs_alpha: bool = True) -> tuple[float, float]:
    """``alpha`` and ``class_alpha`` of ``stats``, refused unless > 0 (a proper prior);
    ``alpha`` a float, or an array of one λ per class."""
    alpha = stats.attrs.get("alpha", 1.0)
    alpha = float(alpha) if np.ndim(alpha) == 0 else np.asarray(alpha, dtype=np.float64)
    class_alpha = float(stats.attrs["class_alpha"])
    for name, value in (("alpha", alpha if needs_alpha else 1.0), ("class_alpha", class_alpha)):
        if np.any(value <= 0):
            raise ValueError(
                f"{name}: the Bayesian model needs a proper Dirichlet/Beta prior, {name} > 0; "
                f"got {value}. {name}=0 (the MLE) exists only as a closed form."
            )
    return alpha, class_alpha


def alpha_data(alpha):
    """λ as the model's data ``alpha``: a number, or one per class as a column (n_classes,
    1, ...) whose static shape lets it broadcast over the cells."""
    if np.ndim(alpha) == 0:
        return pm.Data("alpha", alpha)
    return pm.Data("alpha", alpha, shape=np.shape(alpha))


def observed_counts(name: str, dist, kernel, *params, observed, dims):
    """An observed count variable simulated by ``dist(*params, size=...)`` whose log density
    is ``kernel(value, *params)``: the distribution's log-pmf without its parameter-free
    combinatorial term (log n! of the Poisson, log C(N, n) of the binomial).

    That term is a constant for the posterior, but ``pm.Poisson`` and ``pm.Binomial`` evaluate
    a ``gammaln`` per cell at every gradient: 2.6 times the cost of the whole gradient of a
    2 × 2,000-word model (73 against 28 µs, measured). PyMC's pointwise log-likelihood of such
    a variable is therefore the log-pmf up to that constant.
    """
    return pm.CustomDist(name, *params, dist=dist, logp=kernel, observed=observed, dims=dims)


def _poisson_kernel(value, mu):
    return value * pt.log(mu) - mu


def _poisson(mu, size):
    return pm.Poisson.dist(mu=mu, size=size)


# --------------------------------------------------------------------------------------------
# Standardising transforms: NUTS samples the naive Bayes rates and the class probabilities in
# coordinates scaled to their expected posterior, so that its unit start mass matrix and ±1
# jitter fit from the first tuning step. Any bijection with its Jacobian leaves the posterior
# exact; these change only how fast NUTS explores it.


def log_gamma_standardisation(shape, rate) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The constants of :class:`StandardisedLog` for a Gamma(``shape``, ``rate``) posterior.

    log g under Gamma(a, b) has its mode at log(a / b) and, there, the curvature a (its
    density is ∝ exp(a u − b eᵘ)): the location is log(a / b), the scale 1 / √a.

    Returns
    -------
    location, scale, log_scale : numpy.ndarray
        Broadcast to the common shape of ``shape`` and ``rate``.
    """
    shape, rate = np.broadcast_arrays(
        np.asarray(shape, dtype=np.float64), np.asarray(rate, dtype=np.float64)
    )
    log_scale = -0.5 * np.log(shape)
    return np.log(shape / rate), np.exp(log_scale), log_scale


def standardisation_data(name: str, constants, *, dims) -> pt.TensorVariable:
    """The constants (location, scale, log_scale) of a standardising transform as one
    ``pm.Data`` ``{name}_standardisation``, dims ("standardisation", *dims) (``dims`` as the
    block names them, :func:`block_dims`; "standardisation" is shared by every block).

    Data, not constants of the graph, so that one compiled graph serves every data set of the
    same shape, and not expressions of the counts, so that a gradient pays no logarithm or
    square root for them. PyMC applies a transform by rewriting the graph of the model's
    random variables, and that rewrite accepts only variables already in the graph: the
    variable therefore declares its shape as that of these data (``shape=data.shape[1:]``),
    which makes them its inputs at no cost to the log density.
    """
    model = pm.modelcontext(None)
    if "standardisation" not in model.coords:
        model.add_coord("standardisation", ["location", "scale", "log_scale"])
    dims = (dims,) if isinstance(dims, str) else tuple(dims)
    return pm.Data(f"{name}_standardisation", np.stack(constants), dims=("standardisation", *dims))


class StandardisedLog(Transform):
    """g = exp(location + scale · z), z = (log g − location) / scale, elementwise (or
    shape-corrected).

    With the constants of :func:`log_gamma_standardisation`, z = √a (log g − log(a / b)) is
    close to N(0, 1) under a Gamma(a, b) posterior, whatever the count. With PyMC's plain log
    transform the posterior SD of log g ranges from 1.28 (a zero count, a = λ = 1) to below
    0.01 (a count of 20,000): NUTS starts from a unit mass matrix and a ±1 jitter, and tuned
    with steps of about 0.01 at tree depth 8 until the mass matrix had adapted.

    ``location``, ``scale`` and ``log_scale`` (log of ``scale``, so that the log-Jacobian
    costs no logarithm) are tensors free of random variables: ``pm.Data`` holding NumPy
    values, so one compiled graph serves every data set of the same shape and a gradient
    costs one multiply-add per cell more than with the log transform.

    ``shape_corrected``
        log g = location + F(scale · z), F of
        :func:`~bayesgen.families.gamma_transforms_pymc.root_deviance_offset` (its weight 0),
        for posteriors with a shape below
        :data:`~bayesgen.families.gamma_transforms_pymc.SKEWED_RATE_SHAPE`. The affine z of a
        Gamma(a, b) has the log density −a D(z / √a), D(t) = eᵗ − 1 − t, whose curvature
        e^{z/√a} is 9.4 at z = 1 for a = 0.2 and 87 for a = 0.05, and falls to 0 in the left
        tail: NUTS needs small steps for the one side and long trajectories for the other.
        In the corrected z both tails fall as e^{−z²/2}; for a zero count at a = 0.05 to
        0.45 its curvature stays within [−0.26, 2.56] (the affine z's reaches 21-132), its SD
        is 0.87-1.02 and its skewness 0.07-0.28, against 1.6-4.5 and −1.6 to −2 for the
        affine z (tests/test_nuts_scale.py).
    """

    name = "standardised_log"
    ndim_supp = 0

    def __init__(self, location, scale, log_scale, *, shape_corrected=False):
        self.location = pt.as_tensor_variable(location)
        self.scale = pt.as_tensor_variable(scale)
        self.log_scale = pt.as_tensor_variable(log_scale)
        self.shape_corrected = shape_corrected

    def contains(self, value) -> bool:
        """Whether the rates ``value`` (NumPy) have a finite image: all > 0."""
        return all_positive(value)

    def log_rate(self, value):
        """log g of z and log d(log g)/dz: what :meth:`backward` and :meth:`log_jac_det`
        share, on the log scale, where neither tail underflows."""
        if not self.shape_corrected:
            return self.location + self.scale * value, self.log_scale
        offset, log_slope = root_deviance_offset(self.scale * value, 0.0)
        return self.location + offset, self.log_scale + log_slope

    def forward(self, value, *inputs):
        target = pt.log(value) - self.location
        if self.shape_corrected:
            target = invert_root_deviance_offset(target, 0.0)
        return target / self.scale

    def backward(self, value, *inputs):
        return pt.exp(self.log_rate(value)[0])

    def log_jac_det(self, value, *inputs):
        log_rate, log_slope = self.log_rate(value)
        return log_rate + log_slope


#: The transform :func:`gamma_poisson_rates` samples the rates in: "standardised_log"
#: (:class:`StandardisedLog`) or "cube_root" (the Wilson–Hilferty map of
#: :mod:`bayesgen.families.gamma_transforms_pymc`, closer to N(0, 1) for small counts but, on
#: the 2-core benchmarks of docs/performance.md, "NUTS at every scale", no faster). Read when a
#: model is built; benchmarks/bench_nuts.py --transform sets it.
GAMMA_RATE_TRANSFORM = "standardised_log"


def gamma_rate_transform(
    name: str, shape, rate, *, dims, kind: str | None = None, random_shapes: bool = False
):
    """The constants (``pm.Data`` ``{name}_standardisation``, see :func:`standardisation_data`)
    and the transform of Gamma rates whose posterior is expected to be Gamma(``shape``,
    ``rate``); ``kind`` as :data:`GAMMA_RATE_TRANSFORM` (its value by default). The
    standardised log is shape-corrected where some shape is below
    :data:`~bayesgen.families.gamma_transforms_pymc.SKEWED_RATE_SHAPE` and the shapes are
    fixed: at λ ≥ 0.15 every posterior shape λ + n is at or above it, and under a
    hyperprior on λ (``random_shapes``) the correction cost more than it gave
    (docs/performance.md, "The Gamma rates' shape correction"); there the graph is the
    affine one."""
    kind = GAMMA_RATE_TRANSFORM if kind is None else kind
    if kind == "standardised_log":
        constants = standardisation_data(name, log_gamma_standardisation(shape, rate), dims=dims)
        skewed = not random_shapes and bool(np.min(shape, initial=np.inf) < SKEWED_RATE_SHAPE)
        transform = StandardisedLog(
            constants[0], constants[1], constants[2], shape_corrected=skewed
        )
        return constants, transform
    if kind == "cube_root":
        model = pm.modelcontext(None)
        if "cube_root" not in model.coords:
            model.add_coord("cube_root", ["offset", "log_base"])
        dims = (dims,) if isinstance(dims, str) else tuple(dims)
        constants = pm.Data(
            f"{name}_standardisation",
            np.stack(cube_root_gamma_constants(shape, rate)),
            dims=("cube_root", *dims),
        )
        return constants, CubeRootGamma(constants[0], constants[1])
    raise ValueError(f"kind: expected 'standardised_log' or 'cube_root'; got {kind!r}.")


class Standardise(Transform):
    """The affine map z = (x − location) / scale, elementwise (scale > 0)."""

    name = "standardise"
    ndim_supp = 0

    def __init__(self, location, scale, log_scale):
        self.location = pt.as_tensor_variable(location)
        self.scale = pt.as_tensor_variable(scale)
        self.log_scale = pt.as_tensor_variable(log_scale)

    def contains(self, value) -> bool:
        """Every finite ``value`` has a finite image (the caller checks finiteness)."""
        return True

    def forward(self, value, *inputs):
        return (value - self.location) / self.scale

    def backward(self, value, *inputs):
        return self.location + self.scale * value

    def log_jac_det(self, value, *inputs):
        return self.log_scale + pt.zeros_like(value)


class StandardisedSimplex(ChainedTransform):
    """PyMC's simplex transform (y_k = log π_k − mean log π, k < K), then :class:`Standardise`
    by the approximate moments of y under Dirichlet(``concentration``), the posterior the
    class probabilities are expected to have.

    With c = ``concentration``, y_k = log G_k − mean log G for independent G_j ~ Gamma(c_j),
    whose log has its mode at log c_j and curvature c_j there: location log c_k − mean log c,
    variance (1 − 2/K) / c_k + Σ_j (1 / c_j) / K². Unstandardised, y has a posterior SD of
    about 1 / √N (0.02 at 3,000 rows): with a unit mass matrix and a ±1 jitter that one
    coordinate held NUTS's tuning at steps of 0.01 however well the rates were scaled.

    ``concentration`` is a graph expression of data (K values, so its K logarithms cost
    nothing next to the rates), because PyMC's Dirichlet offers no input that a
    ``pm.Data`` of the constants could enter through (see :func:`standardisation_data`).
    """

    name = "standardised_simplex"

    def __init__(self, concentration):
        concentration = pt.as_tensor_variable(concentration)
        n_cells = concentration.shape[-1].astype("float64")
        log_concentration = pt.log(concentration)
        location = log_concentration - pt.mean(log_concentration, axis=-1, keepdims=True)
        inverse = 1.0 / concentration
        variance = (1.0 - 2.0 / n_cells) * inverse
        variance = variance + pt.sum(inverse, axis=-1, keepdims=True) / n_cells**2
        log_scale = 0.5 * pt.log(variance[..., :-1])
        standardise = Standardise(location[..., :-1], pt.exp(log_scale), log_scale)
        super().__init__([SimplexTransform(), standardise])

    def contains(self, value) -> bool:
        """Whether the probabilities ``value`` (NumPy) have a finite image: all > 0."""
        return all_positive(value)


def gamma_poisson_rates(
    prefix: str,
    counts: np.ndarray,
    alpha: float,
    *,
    dims,
    groups=None,
    random_alpha=None,
    weight=None,
):
    """Rates g ~ Gamma(λ, β) with the counts observed as ``{prefix}_count`` ~ Poisson(g).

    Each simplex (the last axis of ``counts``, or with ``groups``, the cells whose entry of
    ``groups``, an integer array over the last axis, is that simplex's index) shares the prior
    rate β = V λ / T: T its total
    count (at least 1), V its number of cells. The posterior of the rates is then independent
    Gamma(λ + n, β + 1), so their normalisation within a simplex is exactly Dirichlet(λ + n)
    (the Dirichlet is the normalisation of independent Gammas of one rate, whatever the
    rate), and the simulated totals have prior and posterior predictive mean T. (With β = 1
    the posterior predictive counts would be about half the observed ones.) Fractional counts
    (TF-IDF weights) cannot be observed as Poisson: they enter the same kernel n log g − g
    through the potential ``{prefix}_loglik`` (a weighted likelihood), which PyMC does not
    simulate.

    Declares ``{prefix}_count_data`` (data), ``alpha`` (data), ``{prefix}_rate`` and the
    observed ``{prefix}_count`` (see :func:`observed_counts`; or the potential); returns the
    rates. With ``random_alpha`` (λ a random variable, under the hyperprior of
    :mod:`bayesgen.families.hyperprior`) that variable is the concentration instead of the data
    ``alpha``, and ``alpha`` only sets the start; see :func:`total_correction` for the term
    that keeps p(λ | D) exact. ``weight`` w (a shared-mean prior, summing to V over each
    simplex) makes the shapes λ w, the data ``{prefix}_prior_weight``: the rates stay
    Gamma of one rate per simplex, so θ is Dirichlet(λ w + n), and β is unchanged. NUTS
    samples the rates through :class:`StandardisedLog`, standardised by their posterior
    Gamma(λ + n, β + 1) (with a random λ, at the start λ),
    whose constants are the ``pm.Data`` ``{prefix}_rate_standardisation`` (a ``pm.set_data``
    of the counts should set them too, from a model built on the new statistics; stale ones
    cost only tuning time, the posterior stays exact). It starts at their posterior mean
    (λ + n) / (β + 1): from
    the prior the gradient is of the order of the counts (10⁵ with 50,000 documents) and the
    first tuning steps run into the maximum tree depth, from here tuning costs the same at
    any N. (After
    ``pm.set_data`` the start is stale, which costs only tuning time.)
    """
    counts = np.asarray(counts, dtype=np.float64)
    whole = whole_counts(counts)
    data = pm.Data(f"{prefix}_count_data", counts if whole is None else whole, dims=dims)
    alpha = per_class(alpha, counts.ndim)  # one λ per class: a column over the cells
    concentration = alpha_data(alpha) if random_alpha is None else random_alpha
    shape, start_shape = concentration, alpha
    if weight is not None:
        weight = np.broadcast_to(np.asarray(weight, dtype=np.float64), counts.shape[-1:])
        shape = concentration * pm.Data(f"{prefix}_prior_weight", weight)
        start_shape = alpha * weight
    if groups is None:
        size = counts.shape[-1]
        total = np.maximum(counts.sum(axis=-1, keepdims=True), 1.0)
        graph_total = pt.maximum(pt.sum(data, axis=-1, keepdims=True), 1.0)
        prior_rate = size * alpha / total
        graph_rate = size * concentration / graph_total
    else:
        groups = np.asarray(groups, dtype=np.int64)
        size = np.bincount(groups).astype(np.float64)  # cells per simplex
        numpy_totals = np.stack([np.bincount(groups, row, size.size) for row in counts])
        prior_rate = (size * alpha / np.maximum(numpy_totals, 1.0))[:, groups]
        graph_total = pt.maximum(simplex_sums(data, groups, size.size), 1.0)
        graph_rate = (size * concentration / graph_total)[:, groups]
    if random_alpha is not None:
        raw_total = (
            pt.sum(data, axis=-1) if groups is None else simplex_sums(data, groups, size.size)
        )
        per_simplex = size * concentration / graph_total
        if groups is None:
            per_simplex = per_simplex[..., 0]
        total_correction(prefix, raw_total, size * concentration, per_simplex)
    start = (counts + start_shape) / (prior_rate + 1.0)
    # Standardised at the posterior Gamma(λ + n, β + 1) of a fixed λ; under a hyperprior at
    # the start λ (a transform may not depend on a random variable).
    constants, transform = gamma_rate_transform(
        f"{prefix}_rate",
        counts + start_shape,
        prior_rate + 1.0,
        dims=dims,
        random_shapes=random_alpha is not None,
    )
    rate = pm.Gamma(
        f"{prefix}_rate",
        alpha=shape,
        beta=graph_rate,
        dims=dims,
        shape=constants.shape[1:],  # see standardisation_data
        initval=start,
        default_transform=transform,
    )
    if whole is None:
        pm.Potential(f"{prefix}_loglik", pt.sum(_poisson_kernel(data, rate)))
    else:
        observed_counts(
            f"{prefix}_count", _poisson, _poisson_kernel, rate, observed=data, dims=dims
        )
    return rate


def simplex_sums(values, groups: np.ndarray, n_simplices: int):
    """Σ of ``values`` (class, cell) over the cells of each simplex, (class, simplex), where
    ``groups`` holds each cell's simplex index: a scatter-add, at the cost of the cells.

    A product with a dense (cell, simplex) indicator matrix gives the same sums at the cost
    of cells × simplices, with that matrix held in the graph: 20,000 × 4,000 numbers for
    4,000 features of 5 categories (docs/performance.md has the cost of a gradient).

    Examples
    --------
    >>> import numpy as np
    >>> import pytensor.tensor as pt
    >>> from bayesgen.families.shared_pymc import simplex_sums
    >>> values = pt.as_tensor(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    >>> simplex_sums(values, np.array([0, 0, 1]), 2).eval().tolist()
    [[3.0, 3.0], [9.0, 6.0]]
    """
    rows = pt.as_tensor(values).T  # (cell, class): the simplex index on the first axis
    zeros = pt.zeros((n_simplices, rows.shape[1]), dtype=rows.dtype)
    return pt.inc_subtensor(zeros[groups], rows).T


def total_correction(prefix: str, total, shape, rate) -> None:
    """The potential ``{prefix}_total_correction`` = −Σ log NB(T; V λ, β) over the simplices.

    In the Gamma-Poisson form the rates g of a simplex factor into θ = g / Σg ~ Dirichlet(λ)
    and S = Σg ~ Gamma(V λ, β), and the Poisson counts into Multinomial(n | T, θ) ·
    Poisson(T | S). Integrating S out leaves p(λ) Dirichlet(θ | λ) Multinomial(n | θ) times
    the negative binomial NB(T; V λ, β) = ∫ Gamma(S; V λ, β) Poisson(T | S) dS of the
    simplex's total T. For a fixed λ that factor is a constant; for a random λ it would bias
    p(λ | D), so it is divided out here (up to log T!, free of λ), making the joint of (λ, θ)
    exactly p(λ) Dirichlet(θ | λ) Multinomial(n | θ).
    """
    log_nb = (
        pt.gammaln(total + shape)
        - pt.gammaln(shape)
        + shape * (pt.log(rate) - pt.log1p(rate))
        - total * pt.log1p(rate)
    )
    pm.Potential(f"{prefix}_total_correction", -pt.sum(log_nb))


# --------------------------------------------------------------------------------------------
# The Gaussian statistics (GDA, QDA): x̄_k ~ N(μ_k, Σ_k / N_k), S_k ~ Wishart(N_k − 1, Σ_k).


def observed_class_means(stats: xr.Dataset, class_count, mu, cov_chol) -> None:
    """The class means observed as ``class_mean`` x̄_k ~ N(μ_k, Σ_k / N_k), one batched
    MvNormal over the classes with rows (a class without rows has no mean).

    ``cov_chol`` is the lower Cholesky factor of Σ (feature, feature2), or of every Σ_k
    (class, feature, feature2). It enters as ``chol``: PyMC 6.4 computes a wrongly shaped log
    density for a batched ``tau`` or ``cov`` that depends on other random variables, while a
    batched ``chol`` is right (checked against SciPy in tests/test_observed_rvs.py). With
    empty classes, the observed classes get their own coord ``observed_class``.
    """
    dims, index = observed_classes(stats)
    data = pm.Data("class_mean_data", stats["class_mean"].values[index], dims=dims)
    n_rows = pt.cast(class_count[index], "float64")
    chol = cov_chol[index] if cov_chol.ndim == 3 else cov_chol[None]
    pm.MvNormal(
        "class_mean",
        mu=mu[index],
        chol=chol / pt.sqrt(n_rows)[:, None, None],
        observed=data,
        dims=dims,
    )


def wishart_is_regular(scatter: np.ndarray, dof: float) -> bool:
    """Whether a scatter matrix S with ``dof`` degrees of freedom has a Wishart density: at
    least D degrees of freedom and S positive definite (its correlation matrix's smallest
    eigenvalue above 1e-8, well clear of a Cholesky failure in the compiled graph)."""
    scatter = np.asarray(scatter, dtype=np.float64)
    if dof < scatter.shape[-1]:
        return False
    sd = np.sqrt(np.diag(scatter))
    if not np.all(np.isfinite(sd)) or np.any(sd <= 0):
        return False
    return bool(np.linalg.eigvalsh(scatter / np.outer(sd, sd)).min() > 1e-8)


def alpha_variable(estimates: xr.Dataset):
    """λ as the random variable ``alpha`` ~ Gamma(shape, rate) of the model being built (in
    its context), started at its posterior mean; None without a hyperprior (λ is data)."""
    prior = fitted_alpha_prior(estimates)
    if prior is None:
        return None
    shape, rate = prior
    return pm.Gamma("alpha", alpha=shape, beta=rate, initval=float(estimates.attrs["alpha"]))
