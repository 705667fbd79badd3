"""Empirical-Bayes smoothing: λ (and a) chosen by maximising the evidence.

For the naive Bayes models the evidence p(X | y, λ), the feature probabilities integrated out,
is a closed form (:meth:`bayesgen.families.naive_bayes.NaiveBayesFamily.feature_evidence`),
and so is that of the labels, p(y | a) (:func:`bayesgen.families.base.class_log_evidence`).
``alpha="evidence"`` takes the λ that maximises the first (type-II maximum likelihood); the
two factors do not share a parameter, so ``class_alpha="evidence"`` maximises the second on
its own.

The search is one-dimensional, in log λ over :data:`BOUNDS`: the log evidence on a coarse grid
finds the best decade, and the root of its derivative (digamma functions) there, by
Brent's method, gives λ to about 1e-10 relative. Where the evidence still grows at a bound,
the bound is returned with a warning that names the parameter.

NumPy and SciPy only.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from scipy.optimize import brentq, minimize_scalar

if TYPE_CHECKING:
    import xarray as xr

    from bayesgen.families.evidence import DirichletEvidence

#: The range of λ (and a) searched: beyond it the smoothing is either no smoothing at all or
#: uniform probabilities, to within what a fit could tell apart.
BOUNDS = (1e-6, 1e6)
#: Coarse grid points of log λ over :data:`BOUNDS` (a decade apart): the root is then
#: bracketed by the decades on either side of the best point.
_GRID_POINTS = 13


class EvidenceBoundaryWarning(UserWarning):
    """The evidence is largest at a bound of the search (:data:`BOUNDS`).

    Examples
    --------
    Word counts that every class shares equally are explained best by λ → ∞:

    >>> import warnings
    >>> from bayesgen import closed_form
    >>> from bayesgen.smoothing import EvidenceBoundaryWarning, evidence_alpha
    >>> est = closed_form.multinomial_nb([[2, 2], [2, 2], [2, 2], [2, 2]], [0, 0, 1, 1])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     lam = evidence_alpha(est)
    >>> lam, caught[0].category is EvidenceBoundaryWarning
    (1000000.0, True)
    """


def evidence_alpha(estimates: xr.Dataset) -> float:
    """The λ that maximises the evidence p(X | y, λ) of a naive Bayes fit's feature counts.

    Parameters
    ----------
    estimates : xarray.Dataset
        A naive Bayes closed form (:func:`bayesgen.closed_form.multinomial_nb`,
        ``bernoulli_nb`` or ``categorical_nb``); its own ``alpha`` is not used.

    Returns
    -------
    float
        λ in :data:`BOUNDS`.

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
    from bayesgen.closed_form import family

    return maximise_evidence(family(estimates).feature_evidence(estimates), name="alpha")


def evidence_class_alpha(estimates: xr.Dataset) -> float:
    """The a that maximises the evidence p(y | a) of a fit's class counts (see
    :func:`evidence_alpha`; the class counts of any model).

    Examples
    --------
    >>> from bayesgen import closed_form
    >>> from bayesgen.smoothing import evidence_class_alpha
    >>> # six ham messages and one spam (the words do not matter here)
    >>> est = closed_form.multinomial_nb([[1, 0]] * 7, ["ham"] * 6 + ["spam"])
    >>> round(evidence_class_alpha(est), 4)
    1.0399
    """
    from bayesgen.families.evidence import DirichletEvidence

    counts = estimates["class_count"].values[None, :]
    return maximise_evidence(DirichletEvidence(counts, name="class_alpha"), name="class_alpha")


def maximise_evidence(
    evidence: DirichletEvidence, *, name: str = "alpha", bounds: tuple[float, float] = BOUNDS
) -> float:
    """The λ in ``bounds`` that maximises ``evidence(λ)``.

    Parameters
    ----------
    evidence : DirichletEvidence
        The log evidence, called with an array of λ, with a ``derivative`` in λ.
    name : str, default "alpha"
        The parameter, for the warning.
    bounds : (float, float), default :data:`BOUNDS`

    Returns
    -------
    float

    Examples
    --------
    The evidence of the word counts, as :func:`evidence_alpha` builds it:

    >>> from bayesgen import closed_form
    >>> from bayesgen.families import family
    >>> from bayesgen.smoothing import maximise_evidence
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
        _warn_bound(name, bounds, lower=True)
        return float(bounds[0])
    if best == last and slope(high) >= 0:
        _warn_bound(name, bounds, lower=False)
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


def _warn_bound(name: str, bounds: tuple[float, float], *, lower: bool) -> None:
    value, limit = (bounds[0], "0") if lower else (bounds[1], "∞")
    meaning = (
        "the data are explained best with (almost) no smoothing"
        if lower
        else "the data are explained as well by equal probabilities for every outcome"
    )
    warnings.warn(
        f"{name}='evidence': the evidence still increases as {name} → {limit}; {name}_ is the "
        f"search's bound {value:g} (it searches [{bounds[0]:g}, {bounds[1]:g}]): {meaning}. "
        f"Pass a number for {name} to choose it yourself.",
        EvidenceBoundaryWarning,
        # At the user's call (fit, or evidence_alpha), however deep in bayesgen it was raised.
        skip_file_prefixes=(str(Path(__file__).parent),),
    )
