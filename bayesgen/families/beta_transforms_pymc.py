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
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from bayesgen.families.shared_pymc import Standardise, standardisation_data


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


class StandardisedLogit(Standardise):
    """φ = σ(location + scale · z), z = (logit φ − location) / scale, elementwise.

    With the constants of :func:`logit_beta_standardisation` for the posterior Beta(A, B),
    z is close to N(0, 1). ``location``, ``scale`` and ``log_scale`` are tensors free of
    random variables (``pm.Data``), as for
    :class:`~bayesgen.families.shared_pymc.StandardisedLog`. The log-Jacobian,
    log scale + log φ + log(1 − φ), is written on x = location + scale · z as
    log scale + x − 2 softplus(x), the softplus the log densities of this module share.
    It is :class:`~bayesgen.families.shared_pymc.Standardise` of the logit.
    """

    name = "standardised_logit"

    def forward(self, value, *inputs):
        return (pm.math.logit(value) - self.location) / self.scale

    def backward(self, value, *inputs):
        return pt.sigmoid(self.location + self.scale * value)

    def log_jac_det(self, value, *inputs):
        logit = self.location + self.scale * value
        return self.log_scale + logit - 2.0 * pt.softplus(logit)


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


def standardised_beta(name: str, a, b, *, posterior, dims) -> pt.TensorVariable:
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
        default_transform=StandardisedLogit(constants[0], constants[1], constants[2]),
    )
