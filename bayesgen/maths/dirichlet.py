"""Estimates from counts under Dirichlet and Beta priors: add-λ (the posterior mean), the
posterior mode, add-λ's logarithm split so that λ = 0 has a limit, and Dirichlet draws
(NumPy only).

Closed forms every naive Bayes model uses: (count + λ) / (total + Kλ) is the mean of the
Dirichlet(count + λ) posterior, and (n + α − 1) / (N + K(α − 1)) its mode.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "BoundaryModeError",
    "add_lambda",
    "dirichlet_draws",
    "dirichlet_mode",
    "is_concentration",
    "log",
    "log_prob_terms",
    "mode_of",
    "per_class",
    "simplex_mode",
]


class BoundaryModeError(ValueError):
    """The posterior mode is not interior: some n + α ≤ 1 puts it on the simplex boundary.

    Examples
    --------
    >>> from bayesgen.maths.dirichlet import BoundaryModeError, dirichlet_mode
    >>> try:
    ...     dirichlet_mode([2, 0, 1], 1)
    ... except BoundaryModeError as error:
    ...     print(str(error)[:44])
    The mode lies on the boundary of the simplex
    """


def is_concentration(value: float, *, proper: bool = True) -> bool:
    """Whether a number is a Dirichlet or Beta concentration (λ, ``class_alpha``): finite and
    > 0, or >= 0 where ``proper`` is False (0: the maximum-likelihood estimate, which the
    closed forms take and the Bayesian estimators refuse). The one test of a λ's value, for the
    estimators' rules, the closed forms and the command line.

    Examples
    --------
    >>> from bayesgen.maths.dirichlet import is_concentration
    >>> is_concentration(0.5), is_concentration(0.0), is_concentration(0.0, proper=False)
    (True, False, True)
    >>> is_concentration(float("inf")), is_concentration(float("nan"), proper=False)
    (False, False)
    """
    return bool(np.isfinite(value) and (value > 0 if proper else value >= 0))


def add_lambda(counts, totals, alpha: float, n_outcomes, weight=1.0) -> np.ndarray:
    """Add-λ (Laplace for λ = 1, Lidstone otherwise) estimate (count + λ) / (total + K λ).

    With ``alpha=0`` this is the maximum-likelihood estimate; 0/0 (an empty total) gives NaN.
    ``weight`` w (broadcastable to the counts, summing to K over each simplex) gives the
    posterior mean (count + λ w) / (total + K λ) of a Dirichlet(λ w) prior, whose mean is
    w / K (:meth:`bayesgen.families.naive_bayes.NaiveBayesFamily.prior_weights`).

    Examples
    --------
    Laplace smoothing of the word counts 2, 2, 1 of a class with 5 words in all, K = 3 words:

    >>> from bayesgen.maths.dirichlet import add_lambda
    >>> add_lambda([2, 2, 1], 5, alpha=1, n_outcomes=3).round(3).tolist()
    [0.375, 0.375, 0.25]
    >>> add_lambda([2, 2, 1], 5, alpha=0, n_outcomes=3).tolist()  # the MLE
    [0.4, 0.4, 0.2]
    """
    counts = np.asarray(counts, dtype=np.float64)
    denominator = np.asarray(totals, dtype=np.float64) + np.asarray(n_outcomes) * alpha
    with np.errstate(invalid="ignore", divide="ignore"):
        return (counts + alpha * np.asarray(weight, dtype=np.float64)) / denominator


def per_class(alpha, ndim: int):
    """λ ready to broadcast against an array of ``ndim`` axes whose first is the class: a
    number as it is, one λ per class (shape (n_classes,)) as shape (n_classes, 1, ..., 1).

    Examples
    --------
    >>> from bayesgen.maths.dirichlet import per_class
    >>> per_class(0.5, 2), per_class([0.5, 2.0], 3).shape
    (0.5, (2, 1, 1))
    """
    if np.ndim(alpha) == 0:
        return alpha
    return np.asarray(alpha, dtype=np.float64).reshape((-1,) + (1,) * (ndim - 1))


def dirichlet_mode(counts, alpha, *, axis: int = -1, allow_boundary: bool = False) -> np.ndarray:
    """Mode (n + α - 1) / (N + K(α - 1)) of a Dirichlet(α + n) posterior along ``axis``.

    This is the MAP estimate under a Dirichlet(α) prior; for K = 2 it is the Beta mode. With
    α = λ + 1 it equals add-λ, with α = 1 the MLE.

    Parameters
    ----------
    counts : array-like
        Observed counts n (the outcomes lie along ``axis``).
    alpha : float or array-like
        Dirichlet concentration, broadcast against ``counts``.
    axis : int, default -1
        The simplex axis.
    allow_boundary : bool, default False
        The mode is interior only when every n + α > 1. Where some n + α = 1 the density is
        still maximised, on the boundary, at 0 for those outcomes; pass ``True`` to accept
        that. Where n + α < 1 the density is unbounded and there is no mode at all.

    Raises
    ------
    BoundaryModeError
        When the mode is not interior (and ``allow_boundary`` does not cover the case).

    Examples
    --------
    With α = λ + 1 = 2 the mode is add-1 (Laplace) smoothing:

    >>> from bayesgen.maths.dirichlet import dirichlet_mode
    >>> dirichlet_mode([2, 2, 1], 2).round(3).tolist()
    [0.375, 0.375, 0.25]
    >>> dirichlet_mode([2, 0, 1], 1, allow_boundary=True).round(3).tolist()
    [0.667, 0.0, 0.333]
    """
    shifted = np.asarray(counts, dtype=np.float64) + np.asarray(alpha, dtype=np.float64) - 1.0
    if np.any(shifted < 0):
        raise BoundaryModeError(
            f"The Dirichlet/Beta posterior has no mode: {int(np.sum(shifted < 0))} outcomes "
            "have n + α < 1, where the density grows without bound towards the boundary."
        )
    if not allow_boundary and np.any(shifted == 0):
        raise BoundaryModeError(
            f"The mode lies on the boundary of the simplex: {int(np.sum(shifted == 0))} "
            "outcomes have n + α = 1 (a zero count with α = 1), so their mode is 0. Pass "
            "allow_boundary=True to accept it."
        )
    total = shifted.sum(axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return shifted / total


#: The status of each outcome's mode (:func:`simplex_mode`).
MODE_OK, MODE_ZERO, NO_MODE_HERE, NO_MODE_OTHER, MODE_FLAT = range(5)


def simplex_mode(counts, alpha: float, *, active=None) -> tuple[np.ndarray, np.ndarray]:
    """The mode of Dirichlet(n + α) along the last axis, and a status per outcome.

    Status: ``MODE_OK``; ``MODE_ZERO`` (n + α = 1: the mode is 0, on the boundary but well
    defined); ``NO_MODE_HERE`` (n + α < 1: the density is unbounded, so no mode exists);
    ``NO_MODE_OTHER`` (another outcome of the same simplex has n + α < 1); ``MODE_FLAT`` (all
    n + α = 1). The mode is NaN where none exists. ``active`` marks the outcomes that exist
    (the categorical model's padding is inactive).

    Examples
    --------
    >>> from bayesgen.maths.dirichlet import MODE_OK, MODE_ZERO, NO_MODE_HERE, simplex_mode
    >>> mode, status = simplex_mode([2.0, 0.0, 1.0], alpha=1.0)
    >>> mode.round(3).tolist(), status.tolist() == [MODE_OK, MODE_ZERO, MODE_OK]
    ([0.667, 0.0, 0.333], True)
    >>> mode, status = simplex_mode([2.0, 0.0, 1.0], alpha=0.5)  # n + α < 1: no mode
    >>> mode.tolist(), int(status[1]) == NO_MODE_HERE
    ([nan, nan, nan], True)
    """
    counts = np.asarray(counts, dtype=np.float64)
    active = np.ones(counts.shape, dtype=bool) if active is None else np.asarray(active)
    shifted = counts + alpha - 1.0
    here = active & (shifted < 0)
    no_mode = active & np.any(here, axis=-1, keepdims=True)
    flat = active & ~np.any(active & (shifted != 0), axis=-1, keepdims=True)
    # Outcomes given n = 0 and α = 1 (so n + α - 1 = 0 exactly) add nothing to the denominator:
    # the padding, and every outcome of a simplex without a mode (which then gives 0/0 = NaN).
    usable = active & ~no_mode
    mode = dirichlet_mode(
        np.where(usable, counts, 0.0),
        np.where(usable, alpha, 1.0),
        axis=-1,
        allow_boundary=True,
    )
    status = np.full(counts.shape, MODE_OK)
    status[active & (shifted == 0)] = MODE_ZERO
    status[flat] = MODE_FLAT
    status[no_mode] = NO_MODE_OTHER
    status[here] = NO_MODE_HERE
    mode = np.where(status >= NO_MODE_HERE, np.nan, mode)
    return mode, status


def mode_of(concentration) -> np.ndarray:
    """The mode of Dirichlet(concentration) along the last axis (:func:`simplex_mode` of the
    concentrations themselves): NaN for a whole simplex without one (some concentration below
    1, where the density is unbounded, or all of them 1, where it is flat); zero
    concentrations are padding, whose mode is 0.

    Examples
    --------
    >>> from bayesgen.maths.dirichlet import mode_of
    >>> mode_of([[3.0, 2.0, 0.0], [0.5, 2.0, 2.0]]).round(3).tolist()
    [[0.667, 0.333, 0.0], [nan, nan, nan]]
    """
    concentration = np.asarray(concentration, dtype=np.float64)
    active = concentration > 0
    mode, _ = simplex_mode(concentration, 0.0, active=active)
    return np.where(active, mode, 0.0)


def log_prob_terms(
    count, total, alpha: float, n_outcomes, weight=1.0
) -> tuple[np.ndarray, np.ndarray]:
    """log of (count + λ w) / (total + Kλ) as ``order · log λ + finite`` (``weight`` w as in
    :func:`add_lambda`; it does not matter at λ = 0).

    For λ > 0 the order is 0. For λ = 0 an event with a zero count has probability 0, and its
    log is split so that predictions are the limit λ → 0⁺ of add-λ: a class that needs fewer
    zero-probability events wins outright, and ties are settled by the finite parts. This keeps
    the MLE's answers where they are defined and gives the "NIPS" document (a word unseen in
    every class, 0/0 in the lecture notes) a finite answer instead of NaN.

    Examples
    --------
    With λ = 0 a zero count gets order 1 (probability 0) and a finite part instead of log 0:

    >>> from bayesgen.maths.dirichlet import log_prob_terms
    >>> order, finite = log_prob_terms([3, 0], 3, alpha=0, n_outcomes=2)
    >>> order.tolist(), finite.round(3).tolist()
    ([0.0, 1.0], [0.0, -1.099])
    >>> order, finite = log_prob_terms([3, 0], 3, alpha=1, n_outcomes=2)
    >>> order.tolist(), finite.round(3).tolist()
    ([0.0, 0.0], [-0.223, -1.609])
    """
    count = np.asarray(count, dtype=np.float64)
    total = np.broadcast_to(np.asarray(total, dtype=np.float64), count.shape)
    if np.all(np.asarray(alpha) > 0):  # a number, or one λ per class (each > 0)
        return np.zeros_like(count), np.log(add_lambda(count, total, alpha, n_outcomes, weight))
    order = ((count == 0) & (total > 0)).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        finite = np.where(
            total == 0,
            -np.log(np.broadcast_to(n_outcomes, count.shape).astype(np.float64)),
            np.where(count > 0, np.log(count / total), -np.log(total)),
        )
    return order, finite


def dirichlet_draws(
    rng, concentration: np.ndarray, sample_shape, dtype, *, tiny_shapes: bool = False
) -> np.ndarray:
    """Dirichlet draws along the last axis of ``concentration`` via normalised Gamma variates.

    Written one draw at a time straight into a preallocated array of ``dtype``: 1,000 draws of
    a 20-class × 50,000-word model take 4 GB in float32 and no temporary of the same size.
    Zero concentrations give probability 0 (the padding of the categorical model).

    ``tiny_shapes=True`` draws every concentration below 1 on the log scale, log G(a) =
    log G(a + 1) + log(U) / a (G(a + 1) U^(1/a) ~ G(a)), and normalises each simplex from its
    largest log: exact, and never 0 / 0 where all of a simplex's variates would underflow (a
    λ from p(λ | D) can reach far below 1e-10). It draws in float64 and then casts.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.maths.dirichlet import dirichlet_draws
    >>> rng = np.random.default_rng(0)
    >>> draws = dirichlet_draws(rng, np.array([[2.0, 1.0, 0.0]]), (1000,), np.float64)
    >>> draws.shape, bool(np.allclose(draws.sum(axis=-1), 1)), bool((draws[..., 2] == 0).all())
    ((1000, 1, 3), True, True)
    >>> draws.mean(axis=0).round(1).tolist()  # the mean (2, 1, 0) / 3
    [[0.7, 0.3, 0.0]]
    """
    concentration = np.asarray(concentration, dtype=np.float64)
    out = np.empty((*sample_shape, *concentration.shape), dtype=dtype)
    inactive = concentration <= 0
    shape = np.where(inactive, 1.0, concentration)
    has_inactive = bool(inactive.any())
    small = (shape < 1.0) & ~inactive if tiny_shapes else None
    if small is not None and small.any():
        for index in np.ndindex(*sample_shape):
            out[index] = _log_scale_draw(rng, shape, inactive, small)
        return out
    for index in np.ndindex(*sample_shape):
        draw = out[index]
        rng.standard_gamma(shape, dtype=out.dtype, out=draw)
        if has_inactive:
            draw[inactive] = 0
        # Sum in float64: 50,000 float32 terms would lose digits.
        draw /= draw.sum(axis=-1, keepdims=True, dtype=np.float64).astype(out.dtype)
    return out


def _log_scale_draw(rng, shape: np.ndarray, inactive: np.ndarray, small: np.ndarray) -> np.ndarray:
    """One Dirichlet draw in float64 with the ``small`` shapes drawn on the log scale."""
    log_draw = np.log(rng.standard_gamma(np.where(small, shape + 1.0, shape)))
    log_draw[small] += np.log(rng.random(int(small.sum()))) / shape[small]
    log_draw[inactive] = -np.inf
    draw = np.exp(log_draw - log_draw.max(axis=-1, keepdims=True))
    return draw / draw.sum(axis=-1, keepdims=True)


def log(values) -> np.ndarray:
    """log of probabilities in float64; draws that underflowed to 0 (tiny Gamma variates in
    float32) are clipped to the smallest normal number instead of giving -inf."""
    values = np.asarray(values, dtype=np.float64)
    return np.log(np.maximum(values, np.finfo(np.float64).tiny))
