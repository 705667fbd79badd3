"""Empirical-Bayes smoothing: λ (and a) chosen by maximising the evidence.

For the naive Bayes models the evidence p(X | y, λ), the feature probabilities integrated out,
is a closed form (:meth:`bayesgen.families.naive_bayes.NaiveBayesFamily.feature_evidence`),
and so is that of the labels, p(y | a) (:func:`bayesgen.families.base.class_log_evidence`).
``alpha="evidence"`` takes the λ that maximises the first (type-II maximum likelihood); the
two factors do not share a parameter, so ``class_alpha="evidence"`` maximises the second on
its own.

The search is one-dimensional, in log λ over :data:`BOUNDS`: the log evidence on a coarse grid
(two decades apart) finds the best point, and the root of its derivative (digamma functions)
between its neighbours, by Brent's method, gives λ to about 1e-10 relative. Where the
evidence still grows at a bound, the bound is returned with a warning that names the
parameter.

NumPy and SciPy only.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from scipy.optimize import brentq, minimize_scalar

from bayesgen.families import family
from bayesgen.maths.evidence import DirichletEvidence

if TYPE_CHECKING:
    import xarray as xr

#: The range of λ (and a) searched: beyond it the smoothing is either no smoothing at all or
#: uniform probabilities, to within what a fit could tell apart.
BOUNDS = (1e-6, 1e6)
#: Coarse grid points of log λ over :data:`BOUNDS` (two decades apart): the root is then
#: bracketed by the grid points on either side of the best one. (One a decade cost a fifth
#: more of a pooled-prior Bernoulli fit at 20 x 50,000 and found the same λ.)
_GRID_POINTS = 7


class EvidenceBoundaryWarning(UserWarning):
    """The evidence is largest at a bound of the search (:data:`BOUNDS`).

    Examples
    --------
    Word counts that every class shares equally are explained best by λ → ∞:

    >>> import warnings
    >>> from bayesgen import closed_form
    >>> from bayesgen.inference.smoothing import EvidenceBoundaryWarning, evidence_alpha
    >>> est = closed_form.multinomial_nb([[2, 2], [2, 2], [2, 2], [2, 2]], [0, 0, 1, 1])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     lam = evidence_alpha(est)
    >>> lam, caught[0].category is EvidenceBoundaryWarning
    (1000000.0, True)
    """


def evidence_alpha(estimates: xr.Dataset, *, per_class: bool = False) -> float | np.ndarray:
    """The λ that maximises the evidence p(X | y, λ) of a naive Bayes fit's feature counts.

    Parameters
    ----------
    estimates : xarray.Dataset
        A naive Bayes closed form (:func:`bayesgen.closed_form.multinomial_nb`,
        ``bernoulli_nb`` or ``categorical_nb``); its own ``alpha`` is not used.
    per_class : bool, default False
        Give each class its own λ_k: the evidence is a product over the classes, so λ_k
        maximises class k's factor (:func:`maximise_evidence_per_class`).

    Returns
    -------
    float or numpy.ndarray of shape (n_classes,)
        λ in :data:`BOUNDS`, or one per class.

    Warns
    -----
    EvidenceBoundaryWarning
        When the evidence is largest at a bound (λ → 0 or λ → ∞).

    Examples
    --------
    >>> from bayesgen import closed_form
    >>> X = [[3, 0, 1], [4, 1, 0], [0, 3, 2], [1, 4, 3]]
    >>> est = closed_form.multinomial_nb(X, ["a", "a", "b", "b"])
    >>> round(evidence_alpha(est), 4)
    1.4615
    """
    evidence = family(estimates).feature_evidence(estimates)
    if per_class:
        return maximise_evidence_per_class(evidence, estimates["class"].values)
    return maximise_evidence(evidence, name="alpha")


def evidence_alpha_where_supported(estimates: xr.Dataset) -> tuple[np.ndarray, float]:
    """One λ per class where the evidence supports it (``alpha="evidence_per_class"``).

    Each class's own evidence-maximising λ_k (:func:`evidence_alpha` with
    ``per_class=True``) if :func:`per_class_log_bayes_factor` is positive, else the one
    shared λ of :func:`evidence_alpha` for every class.

    Returns
    -------
    alpha : numpy.ndarray of shape (n_classes,)
    log_bayes_factor : float
        Of one λ per class against one for all.

    Examples
    --------
    >>> from bayesgen import closed_form
    >>> from bayesgen.inference.smoothing import evidence_alpha_where_supported
    >>> X = [[3, 0, 1], [4, 1, 0], [2, 1, 1], [0, 3, 2], [1, 4, 3], [0, 2, 2]]
    >>> est = closed_form.multinomial_nb(X, ["a", "a", "a", "b", "b", "b"])
    >>> alpha, log_bf = evidence_alpha_where_supported(est)  # not supported: one λ
    >>> alpha.round(3).tolist(), round(log_bf, 2)
    ([1.643, 1.643], -0.84)
    """
    evidence, shared, own = _both_maximisers(estimates)
    log_bayes_factor = _log_bayes_factor(evidence, shared, own)
    # The maximisers' warnings were held back; only the choice's bounds are worth one.
    labels = estimates["class"].values.tolist()
    if log_bayes_factor > 0:
        for k in np.flatnonzero(np.isin(own, BOUNDS)):
            _warn_bound("alpha", BOUNDS, lower=own[k] == BOUNDS[0], label=f"{labels[k]!r}")
        return own, log_bayes_factor
    if shared in BOUNDS:
        _warn_bound("alpha", BOUNDS, lower=shared == BOUNDS[0])
    return np.full(len(labels), shared), log_bayes_factor


def evidence_class_alpha(estimates: xr.Dataset) -> float:
    """The a that maximises the evidence p(y | a) of a fit's class counts (see
    :func:`evidence_alpha`; the class counts of any model).

    Examples
    --------
    >>> from bayesgen import closed_form
    >>> from bayesgen.inference.smoothing import evidence_class_alpha
    >>> # six ham messages and one spam (the words do not matter here)
    >>> est = closed_form.multinomial_nb([[1, 0]] * 7, ["ham"] * 6 + ["spam"])
    >>> round(evidence_class_alpha(est), 4)
    1.0399
    """
    counts = estimates["class_count"].values[None, :]
    return maximise_evidence(DirichletEvidence(counts, name="class_alpha"), name="class_alpha")


def maximise_evidence(
    evidence: DirichletEvidence,
    *,
    name: str = "alpha",
    bounds: tuple[float, float] = BOUNDS,
    label: str | None = None,
) -> float:
    """The λ in ``bounds`` that maximises ``evidence(λ)``.

    Parameters
    ----------
    evidence : DirichletEvidence
        The log evidence, called with an array of λ, with a ``derivative`` in λ.
    name : str, default "alpha"
        The parameter, for the warning.
    bounds : (float, float), default :data:`BOUNDS`
    label : str, optional
        The class whose own λ this is (``alpha="evidence_per_class"``), for the warning.

    Returns
    -------
    float

    Examples
    --------
    The evidence of the word counts, as :func:`evidence_alpha` builds it:

    >>> from bayesgen import closed_form
    >>> from bayesgen.families import family
    >>> from bayesgen.inference.smoothing import maximise_evidence
    >>> X = [[3, 0, 1], [4, 1, 0], [0, 3, 2], [1, 4, 3]]
    >>> est = closed_form.multinomial_nb(X, ["a", "a", "b", "b"])
    >>> evidence = family(est).feature_evidence(est)
    >>> round(maximise_evidence(evidence), 4)
    1.4615
    """
    low, high = np.log(bounds)
    grid = np.linspace(low, high, _GRID_POINTS)
    values = evidence(np.exp(grid))
    best = int(np.argmax(values))

    def slope(log_lambda: float) -> float:
        """d log p / d log λ."""
        lam = np.exp(log_lambda)
        return float(evidence.derivative(np.array([lam]))[0] * lam)

    last = grid.size - 1
    if best == 0 and slope(low) <= 0:
        _warn_bound(name, bounds, lower=True, label=label)
        return float(bounds[0])
    if best == last and slope(high) >= 0:
        _warn_bound(name, bounds, lower=False, label=label)
        return float(bounds[1])
    left, right = grid[max(best - 1, 0)], grid[min(best + 1, last)]
    if slope(left) > 0 > slope(right):
        root = brentq(slope, left, right, xtol=1e-10)  # in log λ: λ to 1e-10 relative
    else:
        # A flat or many-peaked evidence: the best point near the grid's best, by its values.
        result = minimize_scalar(
            lambda t: -float(evidence(np.array([np.exp(t)]))[0]),
            bounds=(left, right),
            method="bounded",
            options={"xatol": 1e-10},
        )
        root = result.x
    return float(np.exp(root))


def maximise_evidence_per_class(
    evidence: DirichletEvidence, classes, *, bounds: tuple[float, float] = BOUNDS
) -> np.ndarray:
    """The λ_k in ``bounds`` that maximises each class's factor of ``evidence``.

    The search of :func:`maximise_evidence` for all classes at once: the coarse grid, then
    bisection of each class's slope d log p_k / d log λ_k between the grid points either side of
    its best grid point (each step evaluates every class at its own λ, so the cost is that of
    about 50 evaluations of the evidence whatever the number of classes), to 1e-10 in log λ.

    Parameters
    ----------
    evidence : DirichletEvidence
        As for :func:`maximise_evidence`; called with ``per_class=True``.
    classes : array-like of shape (n_classes,)
        The class labels, for the warning at a bound.
    bounds : (float, float), default :data:`BOUNDS`

    Returns
    -------
    numpy.ndarray of shape (n_classes,)

    Examples
    --------
    >>> from bayesgen import closed_form
    >>> from bayesgen.families import family
    >>> from bayesgen.inference.smoothing import maximise_evidence_per_class
    >>> X = [[3, 0, 1], [4, 1, 0], [2, 1, 1], [0, 3, 2], [1, 4, 3], [0, 2, 2]]
    >>> est = closed_form.multinomial_nb(X, ["a", "a", "a", "b", "b", "b"])
    >>> maximise_evidence_per_class(family(est).feature_evidence(est), ["a", "b"]).round(3)
    array([1.754, 1.536])
    """
    low, high = np.log(bounds)
    grid = np.linspace(low, high, _GRID_POINTS)
    values = evidence(np.exp(grid)[:, None], per_class=True)  # (grid, class)
    n_classes = values.shape[1]
    best = np.argmax(values, axis=0)

    def slope(log_lambda: np.ndarray) -> np.ndarray:
        """d log p_k / d log λ_k of every class at its own λ."""
        lam = np.exp(log_lambda)
        return evidence.derivative(lam[None, :], per_class=True)[0] * lam

    last = grid.size - 1
    result = np.empty(n_classes)
    at_low = (best == 0) & (slope(np.full(n_classes, low)) <= 0)
    at_high = (best == last) & (slope(np.full(n_classes, high)) >= 0)
    labels = np.asarray(classes).tolist()
    for k in np.flatnonzero(at_low | at_high):
        _warn_bound("alpha", bounds, lower=bool(at_low[k]), label=f"{labels[k]!r}")
    result[at_low], result[at_high] = bounds[0], bounds[1]
    inside = ~(at_low | at_high)
    left = grid[np.maximum(best - 1, 0)]
    right = grid[np.minimum(best + 1, last)]
    bracketed = inside & (slope(left) > 0) & (slope(right) < 0)
    while np.any(bracketed) and np.max((right - left)[bracketed]) > 1e-10:
        middle = 0.5 * (left + right)
        rising = slope(middle) > 0
        left = np.where(bracketed & rising, middle, left)
        right = np.where(bracketed & ~rising, middle, right)
    result[bracketed] = np.exp(0.5 * (left + right))[bracketed]
    for k in np.flatnonzero(inside & ~bracketed):  # flat or many-peaked: one class at a time
        term = _ClassTerm(evidence, k)
        result[k] = maximise_evidence(term, name="alpha", bounds=bounds, label=f"{labels[k]!r}")
    return result


class _ClassTerm:
    """Class k's factor of a per-class evidence, as a function of its own λ alone."""

    def __init__(self, evidence: DirichletEvidence, k: int):
        self.evidence, self.k = evidence, k

    def __call__(self, alpha) -> np.ndarray:
        return self.evidence(np.asarray(alpha)[..., None], per_class=True)[..., self.k]

    def derivative(self, alpha) -> np.ndarray:
        return self.evidence.derivative(np.asarray(alpha)[..., None], per_class=True)[..., self.k]


def per_class_log_bayes_factor(estimates: xr.Dataset) -> float:
    """log p(X | y, one λ per class) − log p(X | y, one λ), each λ integrated out.

    Each λ has the same log-uniform prior over :data:`BOUNDS` (the range that
    ``alpha="evidence"`` searches): p(log λ) = 1 / log(1e12). Then

        p(X | y, one λ)           = ∫ Π_k p_k(X_k | λ) p(log λ) d log λ,
        p(X | y, one λ per class) = Π_k ∫ p_k(X_k | λ_k) p(log λ_k) d log λ_k,

    p_k the class's factor of the evidence. Each integral is one-dimensional, in u = log λ,
    and is taken by the trapezoid rule around its peak or by adaptive Gauss–Legendre
    quadrature over the whole range (:func:`_log_integrals`). The result agrees with
    ``scipy.integrate.quad`` to 2e-9 nats in the tests (small data, the uniform and the
    pooled prior mean). On large data its precision is that of the log evidence itself: the
    lnΓ terms grow as λ log λ, so at λ near the bound 1e6 their differences carry roundoff of
    about 1e-8 nats (SMS Spam, pooled prior mean: 2e-8 from a 120,000-point Gauss–Legendre
    reference whose own values move by 1e-8 with its number of points). A positive value says the
    data support giving each class its own λ: every extra λ pays for its prior's width
    (about log(1e12 / its posterior's width)), so it must fit its class markedly better than
    the shared one does. The evidence scores how well each class's features are modelled,
    not how well the classes are told apart: see the documentation's workflow page for when
    per-class λ also predicts better.

    Parameters
    ----------
    estimates : xarray.Dataset
        A naive Bayes closed form; its own ``alpha`` is not used.

    Returns
    -------
    float

    Examples
    --------
    The classes' words spread alike, so one λ serves:

    >>> from bayesgen import closed_form
    >>> from bayesgen.inference.smoothing import per_class_log_bayes_factor
    >>> X = [[3, 0, 1], [4, 1, 0], [2, 1, 1], [0, 3, 2], [1, 4, 3], [0, 2, 2]]
    >>> est = closed_form.multinomial_nb(X, ["a", "a", "a", "b", "b", "b"])
    >>> round(per_class_log_bayes_factor(est), 3)
    -0.84
    """
    return _log_bayes_factor(*_both_maximisers(estimates))


def _both_maximisers(estimates: xr.Dataset) -> tuple[DirichletEvidence, float, np.ndarray]:
    """The feature evidence of a fit, its maximiser and its per-class maximisers, without the
    warnings at a bound (a peak at a bound is integrated like any other)."""
    evidence = family(estimates).feature_evidence(estimates)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvidenceBoundaryWarning)
        shared = maximise_evidence(evidence, name="alpha")
        own = maximise_evidence_per_class(evidence, estimates["class"].values)
    return evidence, shared, own


def _log_bayes_factor(evidence: DirichletEvidence, shared: float, own: np.ndarray) -> float:
    """:func:`per_class_log_bayes_factor` of ``evidence`` peaking at λ = ``shared`` and at
    λ_k = ``own``."""
    log_prior = -np.log(np.log(BOUNDS[1]) - np.log(BOUNDS[0]))
    separate = _log_integrals(_PerClass(evidence), own).sum()
    together = _log_integrals(_Summed(evidence), np.array([shared]))[0]
    return float(separate - together + (own.size - 1) * log_prior)


class _PerClass:
    """Every class's factor of the evidence at its own λ: (points, classes) in and out."""

    def __init__(self, evidence: DirichletEvidence):
        self.evidence = evidence

    def __call__(self, lam: np.ndarray) -> np.ndarray:
        return self.evidence(lam, per_class=True)

    def derivative(self, lam: np.ndarray) -> np.ndarray:
        return self.evidence.derivative(lam, per_class=True)


class _Summed(_PerClass):
    """The whole evidence at one λ: (points, 1) in and out."""

    def __call__(self, lam: np.ndarray) -> np.ndarray:
        return self.evidence(lam[:, 0])[:, None]

    def derivative(self, lam: np.ndarray) -> np.ndarray:
        return self.evidence.derivative(lam[:, 0])[:, None]


#: The local grid of :func:`_log_integrals`: this many widths of the peak either side ...
_LOCAL_WIDTHS = 10.0
#: ... in this many points (a quarter of a width apart) ...
_LOCAL_POINTS = 81
#: ... enough where the integrand has fallen this far (in log) at both ends.
_LOCAL_DROP = 40.0
#: Gauss–Legendre points per panel of the adaptive rule (:func:`_log_integrals_adaptive`),
#: exact for polynomials of degree 15.
_GAUSS_POINTS = 8
#: Its first panels: the range in this many, cut again at these multiples of each peak's
#: width from it, so that no panel is wider than the peaks it holds.
_FIRST_PANELS = 8
_PEAK_CUTS = np.array([-32.0, -16.0, -8.0, -4.0, -2.0, -1.0, 0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0])
#: A panel is accepted when its two halves agree with it to this share of the integral, or
#: when it is this share of the narrowest feature wide (the smallest peak width, and 1 in u)
#: ...
_PANEL_TOLERANCE = 1e-10
_NARROWEST = 1.0
#: ... else halved, at most this many times, and never into more than this many panels.
_MAX_HALVINGS = 40
_MAX_PANELS = 2**14
#: Grid points evaluated at once by the adaptive rule (bounds the evidence's temporaries).
_BATCH = 256


def _log_integrals(log_p, peaks: np.ndarray) -> np.ndarray:
    """log ∫ exp(log_p(e^u)_j) du over log :data:`BOUNDS`, for the m integrands of ``log_p``
    (λ of shape (points, m) in, log densities of that shape out) peaking at ``peaks`` (m,).

    Each integrand is first integrated on a grid of :data:`_LOCAL_POINTS` within
    :data:`_LOCAL_WIDTHS` widths of its peak (the width 1/√(−d² log p/du²) there), all m at
    once: the trapezoid rule a quarter of a width apart is exponentially accurate for these
    smooth, nearly Gaussian integrands once they have fallen by :data:`_LOCAL_DROP` at both
    ends. One that has not (a long or flat tail, as the pooled prior mean gives towards
    λ → ∞, or a peak at a bound) does not vanish at an end of its grid, where the trapezoid
    rule is only second-order accurate; it is integrated over the whole range by adaptive
    Gauss–Legendre quadrature instead (:func:`_log_integrals_adaptive`).
    """
    low, high = np.log(BOUNDS)
    centre = np.log(peaks)
    step = 1e-4
    probes = np.exp(centre + np.array([[-step], [step]]))
    slopes = log_p.derivative(probes) * probes
    curvature = (slopes[1] - slopes[0]) / (2 * step)
    width = 1.0 / np.sqrt(np.maximum(-curvature, 1e-12))
    start = np.maximum(low, centre - _LOCAL_WIDTHS * width)
    stop = np.minimum(high, centre + _LOCAL_WIDTHS * width)
    u = np.linspace(start, stop, _LOCAL_POINTS)  # (points, m)
    values = log_p(np.exp(u))
    top = values.max(axis=0)
    contained = (values[0] < top - _LOCAL_DROP) & (values[-1] < top - _LOCAL_DROP)
    result = _log_trapezoid(values, u)
    rest = np.flatnonzero(~contained)
    if rest.size:
        result[rest] = _log_integrals_adaptive(log_p, peaks.size, rest, centre, width, top)
    return result


def _log_integrals_adaptive(
    log_p, m: int, columns: np.ndarray, centre: np.ndarray, width: np.ndarray, top: np.ndarray
) -> np.ndarray:
    """The integrals ``columns`` of the m of :func:`_log_integrals` over the whole range, by
    adaptive Gauss–Legendre quadrature, all on one set of panels.

    The panels start as :data:`_FIRST_PANELS` equal ones, cut again around each peak (centre,
    width) so that none hides a narrow peak. Each round evaluates every open panel's two halves
    by :data:`_GAUSS_POINTS`-point Gauss–Legendre and closes the panels whose halves agree
    with the whole, for every integrand, to :data:`_PANEL_TOLERANCE` of the integral, or that
    are as narrow as :data:`_NARROWEST` of the narrowest feature (there the rule has
    converged, and what differences remain are the log evidence's roundoff); the others are
    halved. The halves' sum is far more accurate than their agreement with the whole (its
    error falls as 2^-16 of the difference for a smooth integrand). ``top`` (each integrand's
    largest value on its local grid) scales the integrands against overflow.
    """
    low, high = np.log(BOUNDS)
    nodes, weights = np.polynomial.legendre.leggauss(_GAUSS_POINTS)
    cuts = [np.linspace(low, high, _FIRST_PANELS + 1)]
    cuts += [np.clip(centre[j] + width[j] * _PEAK_CUTS, low, high) for j in columns]
    cuts = np.unique(np.concatenate(cuts))
    reference = top[columns]

    def panel_sums(left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """Each panel's Gauss–Legendre sum of exp(log_p − reference), (panels, columns)."""
        half = (right - left)[:, None] / 2
        u = ((left + right)[:, None] / 2 + half * nodes).ravel()
        values = np.concatenate(
            [
                log_p(np.exp(np.repeat(u[first : first + _BATCH, None], m, axis=1)))[:, columns]
                for first in range(0, u.size, _BATCH)
            ]
        ).reshape(left.size, nodes.size, columns.size)
        return half * np.einsum("pnj,n->pj", np.exp(values - reference), weights)

    # No panel narrower than a share of the narrowest feature: the smallest peak width, and
    # 1 in u for the slow tails.
    narrowest = _NARROWEST * min(1.0, width[columns].min())
    left, right = cuts[:-1], cuts[1:]
    whole = panel_sums(left, right)
    closed = np.zeros(columns.size)
    for _ in range(_MAX_HALVINGS):
        middle = (left + right) / 2
        first, second = panel_sums(left, middle), panel_sums(middle, right)
        halves = first + second
        total = closed + halves.sum(axis=0)
        agree = np.all(np.abs(halves - whole) <= _PANEL_TOLERANCE * total, axis=1)
        done = agree | (right - left <= narrowest)
        closed += halves[done].sum(axis=0)
        left, middle, right = left[~done], middle[~done], right[~done]
        whole = np.concatenate([first[~done], second[~done]])
        left, right = np.concatenate([left, middle]), np.concatenate([middle, right])
        if left.size == 0 or left.size > _MAX_PANELS:
            break
    # Panels still open after the last round count with their halves' sums.
    return reference + np.log(closed + whole.sum(axis=0))


def _log_trapezoid(values: np.ndarray, u: np.ndarray) -> np.ndarray:
    """log of the trapezoid rule's ∫ exp(values) du along the first axis, without overflow."""
    top = values.max(axis=0)
    weights = np.exp(values - top)
    return top + np.log(np.sum(0.5 * (weights[1:] + weights[:-1]) * np.diff(u, axis=0), axis=0))


def _warn_bound(
    name: str, bounds: tuple[float, float], *, lower: bool, label: str | None = None
) -> None:
    """Warn that the evidence (of class ``label``, with one λ per class) peaks at a bound."""
    value, limit = (bounds[0], "0") if lower else (bounds[1], "∞")
    meaning = (
        "the data are explained best with (almost) no smoothing"
        if lower
        else "the data are explained as well by equal probabilities for every outcome"
    )
    option, whose, fitted = "'evidence'", "the evidence", f"{name}_"
    if label is not None:
        option, whose = "'evidence_per_class'", f"the evidence of class {label}"
        fitted = f"{name}_ of class {label}"
    warnings.warn(
        f"{name}={option}: {whose} still increases as {name} → {limit}; {fitted} is the "
        f"search's bound {value:g} (it searches [{bounds[0]:g}, {bounds[1]:g}]): {meaning}. "
        f"Pass a number for {name} to choose it yourself.",
        EvidenceBoundaryWarning,
        # At the user's call (fit, or evidence_alpha), however deep in bayesgen it was raised.
        skip_file_prefixes=(str(Path(__file__).parent),),
    )
