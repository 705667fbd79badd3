"""Near-Gaussianising maps for Gamma-distributed rates: the Wilson–Hilferty cube root, and the
inverse signed root deviance of log-Gamma that shape-corrects the standardised log.

**The inverse signed root deviance** F (:func:`root_deviance_offset`) turns the log density
of log g under Gamma(a, b) into −z² / 2 (up to F's error of about 0.006) with
log g = log(a / b) + F(z / √a), whatever the shape, so that z's density is e^{−z²/2} times
the slowly varying F'(z / √a): a unit scale and little skew where the affine
z = √a (log g − log(a / b)) has a long left tail (tests/test_nuts_scale.py). bayesgen uses
it where the posterior has a shape below :data:`SKEWED_RATE_SHAPE` (a fixed λ below 0.15
with zero counts) for the rates
(:class:`~bayesgen.families.shared_pymc.StandardisedLog`) and, blended with its mirror, below
:data:`~bayesgen.families.beta_transforms_pymc.SKEWED_SHAPE` for the Bernoulli model's logits
(:mod:`bayesgen.families.beta_transforms_pymc`).

**The cube root** (:class:`CubeRootGamma`, an option of the benchmarks only):
Under g ~ Gamma(a, b), (b g / a)^(1/3) is close to N(c, s²) with c = 1 − 1/(9a) and
s = 1/(3√a) (Wilson and Hilferty, 1931), much closer than log g is to a normal for a small
shape a: log g is left-skewed (skewness −1.14 at a = 1), the cube root nearly symmetric. So
z = ((b g / a)^(1/3) − c) / s is close to N(0, 1) whatever the count, the zero-count cells
(a = λ) included.

The cube root alone is no bijection ℝ → ℝ₊: it reaches g = 0 at the finite z = −c/s. Below
w₀ = 1 SD of the cube root above that point, :class:`CubeRootGamma` continues log w by its
second-order Taylor polynomial, so every z ∈ ℝ is a rate g > 0, log g is quadratic in z in the
lower tail (as for the exact quantile map), and the log density NUTS sees has a continuous
gradient.

How close z is to N(0, 1) (the largest distance between the CDFs, on a grid of z; see
tests/test_gamma_transforms.py): 0.022 at a = 0.3, 0.026 at a = 0.5, 0.012 at a = 1, 0.0033 at
a = 2, 0.0006 at a = 10, against 0.29, 0.22, 0.15, 0.10 and 0.043 for the log standardised at
its mode (:class:`~bayesgen.families.shared_pymc.StandardisedLog`).

NumPy computes the two constants per cell (:func:`cube_root_gamma_constants`); the transform
costs two logarithms, a ``log1p`` and an exponential per cell, against one exponential for the
log: a gradient of the 2 × 2,000-word model costs about 2.6 times as much.
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
from pymc.logprob.transforms import Transform

#: Below this smallest posterior shape (with a fixed λ) the Gamma rates' log is
#: shape-corrected: lower than the Bernoulli logits'
#: :data:`~bayesgen.families.beta_transforms_pymc.SKEWED_SHAPE`, because the correction makes
#: a gradient of the multinomial model about 10 times as dear (the Bernoulli model's about 4
#: times). At λ = 0.1 it gave 3.3-3.5 times the bulk ESS per second (trees of depth 6 for 8
#: at 2 × 20,000 words), at λ = 0.2 only 1.08-1.45 times, for 2.7-4 times the sampling time
#: (docs/performance.md, "The Gamma rates' shape correction").
SKEWED_RATE_SHAPE = 0.15

#: w₀, where the lower tail starts, in units of the cube root's SD above g = 0. 1.0 keeps the KS
#: distance to N(0, 1) at most 0.026 for shapes from 0.3 up (0.75: 0.051; 1.5: 0.036).
TAIL_START = 1.0
LOG_3 = float(np.log(3.0))


def cube_root_gamma_constants(shape, rate):
    """The constants of :class:`CubeRootGamma` for a Gamma(``shape``, ``rate``) rate.

    With c = 1 − 1/(9a) and s = 1/(3√a), the cube root of b g / a is s w, w = c / s + z:
    ``offset`` = c / s and ``log_base`` = log(a / b) + 3 log s, so that
    g = exp(log_base + 3 log w).

    Parameters
    ----------
    shape, rate : array_like
        a > 0 and b > 0, broadcast together.

    Returns
    -------
    offset, log_base : numpy.ndarray
        Of the broadcast shape.
    """
    shape, rate = np.broadcast_arrays(
        np.asarray(shape, dtype=np.float64), np.asarray(rate, dtype=np.float64)
    )
    sd = 1.0 / (3.0 * np.sqrt(shape))
    offset = (1.0 - 1.0 / (9.0 * shape)) / sd
    return offset, np.log(shape / rate) + 3.0 * np.log(sd)


def all_positive(value) -> bool:
    """Whether every entry of ``value`` is > 0: the domain of a transform of positive values
    (its ``contains``, which reads NumPy values, compiling nothing).

    Examples
    --------
    >>> all_positive([0.5, 2.0]), all_positive([0.5, 0.0])
    (True, False)
    """
    return bool(np.all(np.asarray(value) > 0))


class CubeRootGamma(Transform):
    """g = exp(log_base + 3 ℓ(offset + z)), elementwise: the Wilson–Hilferty cube root of a
    Gamma rate, standardised, continued by a Gaussian-like lower tail.

    ℓ(w) = log w above w₀ (:data:`TAIL_START`); below, its second-order Taylor polynomial at
    w₀, log w₀ + d / w₀ − d² / (2 w₀²) with d = w − w₀, still increasing (ℓ' = (w₀ − d) / w₀²
    > 0) and making log g quadratic in z, as the exact quantile map's log g ≈ −z² / (2a) is.
    ℓ and ℓ' are continuous, so the log-Jacobian log 3 + log g + log ℓ' has a continuous
    gradient: the leapfrog integrator needs it (a tail that only matched ℓ' left a jump in that
    gradient, and NUTS's step fell to 0.04 at tree depth 7 on the 2 × 2,000-word model).

    With the constants of :func:`cube_root_gamma_constants` for the rate's posterior
    Gamma(a, b), z is close to N(0, 1) (see the module's docstring). The map costs two
    logarithms and an exponential per cell.

    ``offset`` and ``log_base`` are tensors free of random variables (``pm.Data``), as for
    :class:`~bayesgen.families.shared_pymc.StandardisedLog`.
    """

    name = "cube_root_gamma"
    ndim_supp = 0

    def __init__(self, offset, log_base):
        self.offset = pt.as_tensor_variable(offset)
        self.log_base = pt.as_tensor_variable(log_base)

    def contains(self, value) -> bool:
        """Whether the rates ``value`` (NumPy) have a finite image: all > 0."""
        return all_positive(value)

    def forward(self, value, *inputs):
        log_cube_root = (pt.log(value) - self.log_base) / 3.0
        # ℓ⁻¹ below log w₀: d / w₀ = 1 − √(1 − 2 (ℓ − log w₀)), the root ≤ 0.
        below = np.log(TAIL_START) - log_cube_root
        tail = TAIL_START * (2.0 - pt.sqrt(1.0 + 2.0 * pt.maximum(below, 0.0)))
        w = pt.switch(below <= 0.0, pt.exp(log_cube_root), tail)
        return w - self.offset

    def backward(self, value, *inputs):
        above, below = _split(self.offset + value)
        return pt.exp(self.log_base + 3.0 * _log_cube_root(above, below))

    def log_jac_det(self, value, *inputs):
        above, below = _split(self.offset + value)
        log_slope = pt.log1p(-below / TAIL_START) - pt.log(above)  # log ℓ'
        return LOG_3 + self.log_base + 3.0 * _log_cube_root(above, below) + log_slope


def _split(w):
    """max(w, w₀) and min(w, w₀) − w₀ ≤ 0: ℓ without a switch (see :class:`CubeRootGamma`)."""
    return pt.maximum(w, TAIL_START), pt.minimum(w, TAIL_START) - TAIL_START


def _log_cube_root(above, below):
    """ℓ(w) from :func:`_split`'s two parts."""
    scaled = below / TAIL_START
    return pt.log(above) + scaled - 0.5 * scaled * scaled


# -- the inverse signed root deviance of log-Gamma ----------------------------------------


def _right_branch(v):
    """F(v) for v ≥ 0 and its derivative: y = e^F solves y − 1 − log y = v² / 2 by one
    fixed-point step y = 1 + v² / 2 + log y₀ from its Taylor polynomial y₀."""
    start = 1.0 + v + v * v / 3.0 + v * v * v / 36.0
    step = 1.0 + v * v / 2.0 + pt.log(start)
    slope = (v + (1.0 + 2.0 * v / 3.0 + v * v / 12.0) / start) / step
    return pt.log(step), slope


def _left_branch(w):
    """F(w) for w ≤ 0 and its derivative: F solves e^F − 1 − F = w² / 2 by one fixed-point
    step F = e^{F₀} − 1 − w² / 2 from its Taylor polynomial F₀."""
    start = pt.exp(w - w * w / 6.0 + w * w * w / 36.0)
    return start - 1.0 - w * w / 2.0, start * (1.0 - w / 3.0 + w * w / 12.0) - w


def root_deviance_offset(u, weight):
    """t(u) = (1 − w) F(u) − w F(−u) and log t'(u), elementwise, ``weight`` w in [0, 1].

    F is the inverse of the signed root deviance of log-Gamma, u = sign(F) √(2 (e^F − 1 − F))
    (the exact F to about 0.006, by the branches above, each exact to third order at 0 so
    that t is three times differentiable there).

    * **Gamma rates** (w = 0): log g under Gamma(a, b) has the log density
      −a D(log g − log(a / b)), D(t) = eᵗ − 1 − t, up to a constant: with
      log g = log(a / b) + F(z / √a), a D = z² / 2 up to F's error, whatever the shape, and
      z's density is that times the Jacobian
      (:class:`~bayesgen.families.shared_pymc.StandardisedLog`).
    * **Beta probabilities**: a logit whose posterior is Beta(A, B), with mode
      x₀ = log(A / B) and w = A / (A + B), has the log density ∝ exp(−D(x − x₀)),
      D(t) = (A + B) (log(1 − w + w eᵗ) − w t): it is log-Gamma where w is small (the cells
      of few counts), its mirror where w is near 1, and its tails fall as e^{−A |t|} and
      e^{−B t}. With x = x₀ + t(s z), s = √(1/A + 1/B), both tails of z fall as e^{−z²/2}.
      Where all but 1e-5 of each tail lies, its curvature stays within [0.58, 1.56] for a
      smaller shape of 0.2 to 1 against a larger one of 5 to 500, and within [−0.26, 2.56] at
      (0.05, 500), where the affine map x = x₀ + s z reaches 6.8 at (0.2, 5), 40 at
      (0.2, 500) and 130 at (0.05, 500) (tests/test_beta_transforms.py;
      :class:`~bayesgen.families.beta_transforms_pymc.StandardisedLogit`).

    Examples
    --------
    With w = 1/2, t is the odd part of F; the exact F gives t(1) = 1.0280, t(2) = 2.2265
    and log t'(1) = 0.0810, log t'(2) = 0.2931:

    >>> t, log_slope = root_deviance_offset(pt.as_tensor([-1.0, 0.0, 2.0]), 0.5)
    >>> t.eval().round(3).tolist(), log_slope.eval().round(3).tolist()
    ([-1.028, 0.0, 2.226], [0.08, 0.0, 0.294])
    """
    positive = pt.ge(u, 0.0)
    size = pt.switch(positive, u, -u)  # |u|, with slope ±1 at 0 (pt.abs has 0 there)
    right, right_slope = _right_branch(size)
    left, left_slope = _left_branch(-size)
    offset = pt.switch(
        positive, (1.0 - weight) * right - weight * left, (1.0 - weight) * left - weight * right
    )
    near = pt.switch(positive, 1.0 - weight, weight)  # the weight of the branch on u's side
    return offset, pt.log(near * right_slope + (1.0 - near) * left_slope)


#: Newton steps of :func:`invert_root_deviance_offset` (used only for a start value).
_NEWTON_STEPS = 12


def invert_root_deviance_offset(target, weight):
    """The u with t(u) = ``target`` (t of :func:`root_deviance_offset`), by Newton's method.

    It starts from u = target (t(u) ≈ u near 0); the steps are clipped to ±10⁴ so that a
    start far out stays finite. The transforms' ``forward`` maps a start value through it:
    a sampler calls it once, never in a gradient.

    Examples
    --------
    >>> t, _ = root_deviance_offset(pt.as_tensor([-3.0, 0.5, 4.0]), 0.0)
    >>> invert_root_deviance_offset(t, 0.0).eval().round(9).tolist()
    [-3.0, 0.5, 4.0]
    """
    root = target
    for _ in range(_NEWTON_STEPS):
        offset, log_slope = root_deviance_offset(root, weight)
        root = pt.clip(root - (offset - target) * pt.exp(-log_slope), -1e4, 1e4)
    return root
