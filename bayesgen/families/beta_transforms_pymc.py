"""Beta probabilities as NUTS samples them: on the logit, standardised, at one softplus a cell.

A Bernoulli model's probabilities φ ~ Beta(a, b) with binomial counts c of n have the posterior
Beta(a + c, b + n − c). NUTS samples z with φ = σ(x), x = location + scale · z, where the
location log(A / B) and the scale √(1/A + 1/B) are the mode and curvature of the logit's
posterior density under Beta(A, B) (:func:`logit_beta_standardisation`): z is close to
N(0, 1) whatever the count, as :class:`~bayesgen.families.shared_pymc.StandardisedLog` makes
the Gamma rates' coordinates.

The log densities are written so that PyTensor computes one softplus per cell. Written as
PyMC's ``Beta`` and ``Binomial`` write them, on log φ and log(1 − φ), PyTensor turns
log σ(x) and log(1 − σ(x)) into two softplus functions of x, and the gradient into two
sigmoids, per cell (what that costs is in docs/performance.md, "The Bernoulli model on a
standardised logit"). Here every term is a multiple of
logit φ or of log(1 − φ), which PyTensor rewrites to x and −softplus(x) (its ``logit(σ(x))``
and ``log1p(−σ(x))`` rewrites):

* log Beta(φ | a, b) = (a − 1) logit φ + (a + b − 2) log(1 − φ) − log B(a, b)
  (:func:`logit_beta_logp`);
* log Binomial(c | n, φ) = c logit φ + n log(1 − φ) + log C(n, c)
  (:func:`binomial_logit_kernel`, without log C(n, c));
* the log-Jacobian of φ(z): log scale + x − 2 softplus(x) (:class:`StandardisedLogit`).

The probabilities stay the model's random variable, so PyMC's ``find_MAP`` (which leaves the
Jacobian out) still finds their mode as they are named, (A − 1) / (A + B − 2).

Small shapes (λ below about 0.5, fixed or under a hyperprior) need two more things, which
:func:`standardised_beta` switches on only where the posterior asks for them, since each
costs gradient time: a shape correction of the skewed logits of cells with few or all
counts (:func:`~bayesgen.families.gamma_transforms_pymc.root_deviance_offset`), and a cap
that keeps φ below σ(35), because a posterior Beta(n + λ, λ) puts mass where float64 rounds
φ to 1 and the gradient is NaN (:func:`logit_cap_needed`).
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from pymc.logprob.transforms import Transform
from scipy import special

from bayesgen.families.gamma_transforms_pymc import (
    invert_root_deviance_offset,
    root_deviance_offset,
)
from bayesgen.families.shared_pymc import standardisation_data


def logit_beta_standardisation(a, b) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The constants of :class:`StandardisedLogit` for a Beta(``a``, ``b``) posterior.

    The logit x of φ ~ Beta(a, b) has the density ∝ exp(a x − (a + b) softplus(x)): its mode
    is log(a / b) and its curvature there a b / (a + b), so the location is log(a / b) and the
    scale √(1/a + 1/b).

    Parameters
    ----------
    a, b : array_like
        The Beta's shapes, > 0, broadcast together.

    Returns
    -------
    location, scale, log_scale : numpy.ndarray
        Of the broadcast shape.

    Examples
    --------
    >>> location, scale, log_scale = logit_beta_standardisation([1.0, 4.0], [1.0, 1.0])
    >>> location.round(4).tolist(), scale.round(4).tolist()
    ([0.0, 1.3863], [1.4142, 1.118])
    """
    a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    log_scale = 0.5 * np.log(1.0 / a + 1.0 / b)
    return np.log(a / b), np.exp(log_scale), log_scale


#: The logit at which φ = σ(x) saturates when a posterior reaches float64's end below 1:
#: 1 − σ(35) ≈ 6.3e-16, and σ(35) rounds to 1 − 6 · 1.1e-16 (float64's spacing below 1), while
#: σ(x) rounds to 1 from x ≈ 36.7 on.
LOGIT_CAP = 35.0

#: Below this smallest posterior shape, the logit is shape-corrected
#: (:func:`~bayesgen.families.gamma_transforms_pymc.root_deviance_offset`); above it, the affine
#: standardisation is as close to N(0, 1) and its gradient costs less (docs/performance.md,
#: "Small λ: the capped, shape-corrected logit").
SKEWED_SHAPE = 0.5


def logit_cap_needed(a, b, *, mass: float = 1e-9) -> bool:
    """Whether some Beta(``a``, ``b``) puts more than ``mass`` above σ(:data:`LOGIT_CAP`).

    There float64 holds 1 − φ to a few ulps at best, and from logit 36.7 on σ(x) rounds to 1,
    where the gradient of log(1 − φ) through σ is ∞ · 0: NaN, a divergent transition. A cell
    present in every one of its n rows has the posterior Beta(n + λ, λ), with about
    (n · 6.3e-16)^λ / (λ Γ(λ)) of its mass up there: 3e-13 at λ = 1 and n = 500, 0.3 % at
    λ = 0.2, where the 4 such cells of a 2 × 2,000-word corpus of 1,000 documents gave 49
    divergent transitions in 2 × 1,000 draws (docs/performance.md).

    Parameters
    ----------
    a, b : array_like
        The cells' posterior shapes.
    mass : float, default 1e-9
        The largest mass a cell may have above the cap for the cap to be left out: NUTS
        visits about 31 points a draw (trees of depth 5), so a fit of 4,000 draws then meets
        the cap at a given cell with a probability of about 1e-4. At λ = 1 that holds up
        to 1.5 million rows.

    Examples
    --------
    >>> logit_cap_needed([501.0, 1.0], [1.0, 501.0])  # every row, no row: λ = 1, n = 500
    False
    >>> logit_cap_needed([500.2], [0.2])  # every row at λ = 0.2
    True
    """
    a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    # P(φ > σ(K)) = P(1 − φ < σ(−K)), 1 − φ ~ Beta(b, a)
    return bool(np.any(special.betainc(b, a, special.expit(-LOGIT_CAP)) > mass))


def _capped(logit, cap):
    """x ↦ cap − softplus(cap − x) (identity far below the cap, → cap above it) and the log
    of its slope, log σ(cap − x) = cap − x − softplus(cap − x)."""
    below = pt.softplus(cap - logit)
    return cap - below, cap - logit - below


class StandardisedLogit(Transform):
    """φ = σ(x), x = location + scale · z (or shape-corrected), elementwise.

    With the constants of :func:`logit_beta_standardisation` for the posterior Beta(A, B),
    z is close to N(0, 1). ``location``, ``scale`` and ``log_scale`` are tensors free of
    random variables (``pm.Data``), as for
    :class:`~bayesgen.families.shared_pymc.StandardisedLog`. The log-Jacobian,
    log scale + log φ + log(1 − φ), is written on x as log scale + x − 2 softplus(x), the
    softplus the log densities of this module share.

    Two options for posteriors the affine map serves badly:

    ``shape_corrected``
        x = location + t(scale · z) with t of
        :func:`~bayesgen.families.gamma_transforms_pymc.root_deviance_offset`, for posteriors
        with a shape below :data:`SKEWED_SHAPE`, whose logits are skewed (a zero count at
        λ = 0.2 has a curvature up to 40 in the affine z, which held NUTS at steps of 0.07
        and trees of depth 6).
    ``cap``
        x is passed through cap − softplus(cap − x), so that φ ≤ σ(cap) never rounds to 1
        (:func:`logit_cap_needed`): NUTS then samples the posterior on the float64 numbers
        up to σ(cap), which for σ(35) leaves out the five above it and 1 itself.
    """

    name = "standardised_logit"
    ndim_supp = 0

    def __init__(self, location, scale, log_scale, *, shape_corrected=False, cap=None):
        self.location = pt.as_tensor_variable(location)
        self.scale = pt.as_tensor_variable(scale)
        self.log_scale = pt.as_tensor_variable(log_scale)
        self.shape_corrected = shape_corrected
        self.cap = cap

    def contains(self, value) -> bool:
        """Whether the probabilities ``value`` (NumPy) have a finite image: all in (0, 1),
        and below σ(cap) where the logit is capped."""
        upper = 1.0 if self.cap is None else special.expit(self.cap)
        value = np.asarray(value)
        return bool(np.all((value > 0) & (value < upper)))

    def logit(self, value):
        """x = logit φ of z and log dx/dz: what :meth:`backward` and :meth:`log_jac_det`
        share, on the logit scale, where neither tail underflows."""
        if self.shape_corrected:
            offset, log_slope = root_deviance_offset(self.scale * value, pt.sigmoid(self.location))
            logit, log_slope = self.location + offset, self.log_scale + log_slope
        else:
            logit, log_slope = self.location + self.scale * value, self.log_scale
        if self.cap is not None:
            logit, log_cap_slope = _capped(logit, self.cap)
            log_slope = log_slope + log_cap_slope
        return logit, log_slope

    def backward(self, value, *inputs):
        return pt.sigmoid(self.logit(value)[0])

    def log_jac_det(self, value, *inputs):
        logit, log_slope = self.logit(value)
        return log_slope + logit - 2.0 * pt.softplus(logit)

    def forward(self, value, *inputs):
        logit = pm.math.logit(value)
        if self.cap is not None:
            # x = cap − log(e^{cap − x_c} − 1) inverts the cap; written as
            # x_c − log(1 − e^{x_c − cap}), it stays finite for x_c far below the cap, where
            # e^{cap − x_c} overflows (φ = 1e-300, x_c = −691).
            logit = logit - pt.log(-pt.expm1(logit - self.cap))
        target = logit - self.location
        if self.shape_corrected:
            target = invert_root_deviance_offset(target, pt.sigmoid(self.location))
        return target / self.scale


def logit_beta_logp(value, a, b):
    """log Beta(``value`` | a, b), for 0 < value < 1, as (a − 1) logit φ + (a + b − 2)
    log(1 − φ) − log B(a, b): the same number as (a − 1) log φ + (b − 1) log(1 − φ) −
    log B(a, b), in the terms this module shares (see its docstring).

    Examples
    --------
    >>> from scipy import stats
    >>> got = logit_beta_logp(pt.as_tensor(0.3), 2.0, 5.0).eval()
    >>> bool(np.isclose(got, stats.beta.logpdf(0.3, 2.0, 5.0)))
    True
    """
    log_beta = pt.gammaln(a) + pt.gammaln(b) - pt.gammaln(a + b)
    return (a - 1.0) * pm.math.logit(value) + (a + b - 2.0) * pt.log1p(-value) - log_beta


def binomial_logit_kernel(value, n, p):
    """log Binomial(``value`` | n, p) less its parameter-free log C(n, value), as
    value · logit p + n log(1 − p) (see the module's docstring).

    Examples
    --------
    >>> from scipy import stats
    >>> got = binomial_logit_kernel(pt.as_tensor(3.0), 10.0, 0.25).eval()
    >>> bool(np.isclose(got + np.log(120.0), stats.binom.logpmf(3, 10, 0.25)))  # C(10, 3)
    True
    """
    return value * pm.math.logit(p) + n * pt.log1p(-p)


def _beta(a, b, size):
    return pm.Beta.dist(alpha=a, beta=b, size=size)


def standardised_beta(
    name: str, a, b, *, posterior, dims, random_shapes: bool = False
) -> pt.TensorVariable:
    """φ ~ Beta(``a``, ``b``), sampled by NUTS through :class:`StandardisedLogit` and started at
    the mean of ``posterior``.

    Parameters
    ----------
    name : str
        The variable's name; its constants are the ``pm.Data`` ``{name}_standardisation``
        (:func:`~bayesgen.families.shared_pymc.standardisation_data`).
    a, b : tensor_like
        The prior's shapes (data, or a random λ under a hyperprior), broadcasting to the cells.
    posterior : tuple of numpy.ndarray
        (A, B), the expected posterior Beta(A, B) of each cell, of the variable's shape.
    dims : tuple of str
        The variable's dims, as the block names them.
    random_shapes : bool, default False
        Whether ``a`` and ``b`` are random (λ under a hyperprior), so that ``posterior`` is
        only the start's: the logit is then always capped, since λ may wander lower.

    The transform is shape-corrected where the smallest posterior shape is below
    :data:`SKEWED_SHAPE` and capped where :func:`logit_cap_needed` says so
    (:class:`StandardisedLogit`).

    Returns
    -------
    pytensor.tensor.TensorVariable
        The random variable; PyMC simulates it as ``pm.Beta`` and ``find_MAP`` finds its mode.

    Examples
    --------
    Two cells whose posteriors are Beta(2, 8) and Beta(30, 10), under a Beta(1, 1) prior: NUTS
    starts at z = 0, the posterior means.

    >>> with pm.Model(coords={"cell": ["a", "b"]}) as model:
    ...     prob = standardised_beta(
    ...         "prob", 1.0, 1.0, posterior=([2.0, 30.0], [8.0, 10.0]), dims=("cell",)
    ...     )
    >>> model.initial_point()["prob_standardised_logit__"].round(12) + 0.0
    array([0., 0.])
    """
    shape_a, shape_b = (np.asarray(value, dtype=np.float64) for value in posterior)
    constants = standardisation_data(name, logit_beta_standardisation(shape_a, shape_b), dims=dims)
    return pm.CustomDist(
        name,
        a,
        b,
        dist=_beta,
        logp=logit_beta_logp,
        dims=dims,
        shape=constants.shape[1:],  # the transform's inputs; see standardisation_data
        initval=shape_a / (shape_a + shape_b),
        default_transform=StandardisedLogit(
            constants[0],
            constants[1],
            constants[2],
            shape_corrected=bool(min(shape_a.min(), shape_b.min()) < SKEWED_SHAPE),
            cap=LOGIT_CAP if random_shapes or logit_cap_needed(shape_a, shape_b) else None,
        ),
    )
