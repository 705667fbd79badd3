"""The collapsed posterior p(λ | D) ∝ p(X | y, λ) · Gamma(λ; shape, rate) of a Dirichlet
concentration λ, on an adaptive grid in log λ: its moments, mode, evidence and exact draws
(NumPy and SciPy only; the model supplies p(X | y, λ) as a callable).

See :mod:`bayesgen.families.hyperprior` for the model that uses it and how the grid is built.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.interpolate import CubicSpline
from scipy.optimize import brentq
from scipy.special import gammaln

__all__ = ["AlphaPosterior", "alpha_posterior"]

#: Points of the quadrature grid in log λ.
GRID_POINTS = 1025
#: How many times finer the spline-interpolated grid that draws are made from is.
REFINE = 16
#: The grid ends where the log density is this far below its maximum (e^-50 ≈ 2e-22) ...
_LOG_DROP = 50.0
#: ... and the mass beyond each end is below this.
_TAIL_MASS = 1e-12
#: The quadrature grid's points are at most this share of the posterior's width apart ...
GRID_SPACING = 1 / 50
#: ... and at most this many.
MAX_GRID_POINTS = 2**17
#: θ's moments and the exact predictive, costly per λ, sum over grid points this share of the
#: posterior's width apart (:meth:`AlphaPosterior.nodes`): the trapezoid rule is still
#: exponentially accurate there for these smooth integrands (tests: 1e-6 against quad).
NODE_SPACING = 1 / 3
#: Most steps of the posterior's width from the mode to an end of the grid.
_MAX_STEPS = 10_000
#: Quadrature weights below this share of the largest are skipped in the θ mixtures.
_NEGLIGIBLE = 1e-18


@dataclass(frozen=True, eq=False)
class AlphaPosterior:
    """The collapsed posterior p(λ | D) under a Gamma(shape, rate) hyperprior, on a grid.

    Attributes
    ----------
    shape, rate : float
        The hyperprior.
    log_alpha : numpy.ndarray
        The grid in u = log λ, equally spaced.
    log_density : numpy.ndarray
        log p(u | D) on the grid, up to a constant (its maximum is 0).
    weights : numpy.ndarray
        Normalised trapezoid weights: E[f(λ) | D] ≈ Σ weights · f(λ).
    mean, sd : float
        E[λ | D] and SD[λ | D].
    kurtosis : float
        E[(λ − mean)⁴] / sd⁴.
    mode : float
        The mode of the density of λ itself (not of log λ).
    scale : float
        The posterior's width in log λ at its mode, 1 / √(−d² log p / du²).
    log_evidence : float
        log p(X | y) = log ∫ p(X | y, λ) Gamma(λ; shape, rate) dλ: the evidence of the feature
        counts with λ integrated out over its hyperprior (the normaliser of p(λ | D), by the
        same trapezoid sum).

    Examples
    --------
    :func:`alpha_posterior` returns one:

    >>> from bayesgen import closed_form
    >>> from bayesgen.families import family
    >>> from bayesgen.maths.alpha_posterior import alpha_posterior
    >>> X = [[3, 0, 1], [4, 1, 0], [0, 3, 2], [1, 4, 3]]
    >>> est = closed_form.multinomial_nb(X, ["a", "a", "b", "b"])
    >>> post = alpha_posterior(family(est).feature_evidence(est), shape=2.0, rate=1.0)
    >>> round(post.mean, 3), round(post.sd, 3)
    (1.976, 1.187)
    >>> bool(abs(post.weights.sum() - 1) < 1e-12)
    True
    >>> round(post.log_evidence, 3)  # log p(X | y), λ integrated out
    -22.335
    """

    shape: float
    rate: float
    log_alpha: np.ndarray
    log_density: np.ndarray
    weights: np.ndarray
    mean: float
    sd: float
    kurtosis: float
    mode: float
    scale: float
    log_evidence: float

    @property
    def alpha(self) -> np.ndarray:
        """The grid in λ."""
        return np.exp(self.log_alpha)

    @property
    def prior(self) -> str:
        return f"λ ~ Gamma({self.shape:g}, {self.rate:g})"

    def expect(self, values: np.ndarray) -> float:
        """E[f(λ) | D] of values f(λ) given on the grid."""
        return float(np.dot(self.weights, values))

    def nodes(self, thinning: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(λ, weight) of every ``thinning``-th grid point, trapezoid weights normalised, the
        points of negligible weight left out: a cheaper rule for costly integrands. By
        default the points are about a third of :attr:`scale` apart (:data:`NODE_SPACING`)."""
        if thinning is None:
            step = self.log_alpha[1] - self.log_alpha[0]
            thinning = max(1, int(NODE_SPACING * self.scale / step))
        log_density = self.log_density[::thinning]
        weights = np.exp(log_density - log_density.max())
        weights[[0, -1]] *= 0.5
        used = weights > _NEGLIGIBLE
        return np.exp(self.log_alpha[::thinning][used]), weights[used] / weights[used].sum()

    def sample(self, rng, size) -> np.ndarray:
        """Draws of λ (shape ``size``) from the spline interpolant of p(λ | D).

        A fine cell is picked by its mass, then u is drawn within it by inverting the CDF of
        the cell's log-linear density exactly (see the module's docstring for the accuracy).
        """
        n_fine = (self.log_alpha.size - 1) * REFINE + 1
        u = np.linspace(self.log_alpha[0], self.log_alpha[-1], n_fine)
        log_p = CubicSpline(self.log_alpha, self.log_density)(u)
        width = u[1] - u[0]
        slope = np.diff(log_p) / width  # of the log density in each fine cell
        left = log_p[:-1] - log_p.max()
        # ∫ exp(left + slope t) dt over [0, width], with its limit width·e^left at slope 0
        scaled = slope * width
        factor = np.where(
            np.abs(scaled) > 1e-12, np.expm1(scaled) / np.where(scaled, slope, 1), width
        )
        mass = np.exp(left) * factor
        cumulative = np.cumsum(mass)
        total = cumulative[-1]
        first = rng.random(size)
        cell = np.minimum(np.searchsorted(cumulative, first * total, side="right"), mass.size - 1)
        within = rng.random(size)
        s, h = slope[cell], width
        offset = np.where(
            np.abs(s * h) > 1e-12,
            np.log1p(within * np.expm1(s * h)) / np.where(s, s, 1.0),
            within * h,
        )
        return np.exp(u[cell] + offset)


def alpha_posterior(evidence, shape: float, rate: float) -> AlphaPosterior:
    """p(λ | D) ∝ p(X | y, λ) · Gamma(λ; shape, rate) on an adaptive grid in log λ.

    Parameters
    ----------
    evidence : callable
        λ (an array) ↦ log p(X | y, λ), with a ``derivative`` method giving d/dλ (the
        families' :meth:`~bayesgen.families.naive_bayes.NaiveBayesFamily.feature_evidence`).
    shape, rate : float
        The Gamma hyperprior (rate = inverse scale).

    Returns
    -------
    AlphaPosterior

    Examples
    --------
    >>> from bayesgen import closed_form
    >>> from bayesgen.families import family
    >>> from bayesgen.maths.alpha_posterior import alpha_posterior
    >>> X = [[3, 0, 1], [4, 1, 0], [0, 3, 2], [1, 4, 3]]
    >>> est = closed_form.multinomial_nb(X, ["a", "a", "b", "b"])
    >>> post = alpha_posterior(family(est).feature_evidence(est), shape=2.0, rate=1.0)
    >>> round(post.mean, 3), round(post.mode, 3)
    (1.976, 1.214)
    """

    def log_p(u):  # log p(u | D) up to a constant: the Jacobian dλ/du = λ adds u
        lam = np.exp(u)
        return evidence(lam) + shape * u - rate * lam

    def slope(u):
        lam = np.exp(u)
        return lam * evidence.derivative(lam) + shape - rate * lam

    # The slope is positive as λ → 0 (the prior's λ^shape) and negative as λ → ∞ (e^(−rate λ)).
    guess = np.log(shape / rate)
    low, high = guess - 1.0, guess + 1.0
    while slope(low) <= 0:
        low -= 2.0 * (guess - low)
    while slope(high) >= 0:
        high += 2.0 * (high - guess)
    mode_u = brentq(slope, low, high, xtol=1e-12, rtol=1e-14)
    step = 1e-4
    curvature = (slope(mode_u + step) - slope(mode_u - step)) / (2 * step)
    scale = 1.0 / np.sqrt(max(-curvature, 1e-12))
    peak = float(log_p(mode_u))
    total_mass = scale * np.sqrt(2 * np.pi)  # Laplace's estimate, relative to e^peak

    def edge(direction: float) -> float:
        u = mode_u
        for _ in range(_MAX_STEPS):
            u += direction * scale
            drop = peak - float(log_p(u))
            gradient = abs(float(slope(u)))
            steep = direction * float(slope(u)) < 0  # falling away from the mode
            if steep and drop > _LOG_DROP and np.exp(-drop) / gradient < _TAIL_MASS * total_mass:
                return u
        raise ValueError(
            f"alpha_prior: the posterior of λ under Gamma({shape:g}, {rate:g}) does not fall "
            f"off within {_MAX_STEPS} of its widths from its mode; use a larger rate."
        )

    low, high = edge(-1.0), edge(1.0)
    n_points = int(min(MAX_GRID_POINTS, max(GRID_POINTS, (high - low) / (GRID_SPACING * scale))))
    grid = np.linspace(low, high, n_points)
    log_density = log_p(grid)
    top = log_density.max()
    log_density = log_density - top
    weights = np.exp(log_density)
    weights[[0, -1]] *= 0.5
    total = weights.sum()
    # ∫ exp(log_p(u)) du by the same trapezoid sum, and log_p's missing constant: the Gamma
    # density is rate^shape / Γ(shape) · λ^(shape − 1) e^(−rate λ), and dλ = λ du.
    log_evidence = top + np.log(total * (grid[1] - grid[0])) + shape * np.log(rate)
    log_evidence -= gammaln(shape)
    weights /= total
    lam = np.exp(grid)
    mean = float(weights @ lam)
    variance = float(weights @ (lam - mean) ** 2)
    kurtosis = float(weights @ (lam - mean) ** 4) / variance**2
    return AlphaPosterior(
        shape=float(shape),
        rate=float(rate),
        log_alpha=grid,
        log_density=log_density,
        weights=weights,
        mean=mean,
        sd=float(np.sqrt(variance)),
        kurtosis=kurtosis,
        mode=_alpha_mode(evidence, shape, rate, lam[np.argmax(log_density - grid)]),
        scale=float(scale),
        log_evidence=float(log_evidence),
    )


def _alpha_mode(evidence, shape: float, rate: float, near: float) -> float:
    """The mode of the density of λ, d/dλ [log p(X | λ) + (shape − 1) log λ − rate λ] = 0,
    searched from ``near`` (the grid's best point); 0 where the density rises towards 0."""

    def slope(lam):
        return float(evidence.derivative(np.asarray(lam))) + (shape - 1.0) / lam - rate

    low, high = near / 2.0, near * 2.0
    while slope(low) <= 0:
        low /= 2.0
        if low < 1e-300:
            return 0.0
    while slope(high) >= 0:
        high *= 2.0
    return float(brentq(slope, low, high, xtol=1e-14 * near, rtol=1e-14))
