"""Learning from unlabelled rows: the MAP of a semi-supervised fit by EM, for every model.

A row whose label is missing has its class latent: p(x_i | θ) = Σ_k p(x_i, y = k | θ). The
MAP of θ given the labelled rows L and the unlabelled rows U,

    θ̂ = argmax  log p(θ) + Σ_{i∈L} w_i log p(x_i, y_i | θ) + λ_u Σ_{i∈U} w_i log p(x_i | θ),

is found by EM (Dempster, Laird and Rubin 1977; for naive Bayes and text Nigam, McCallum,
Thrun and Mitchell, Machine Learning 2000, whose EM-λ is the weight λ_u ∈ [0, 1]):

* **E-step**: the responsibilities r_ik = p(y = k | x_i, θ̂) at the current MAP θ̂. They are
  computed at the posterior *mode* (the family's ``conjugate_mode``, one "draw" handed to
  ``row_log_likelihood``), not at the closed form's plug-in estimates, which are posterior
  means: only the mode makes this the EM of the MAP.
* **M-step**: every unlabelled row enters class k's sufficient statistics with the weight
  λ_u w_i r_ik (the rows stacked K times, y = k, through the family's own
  ``sufficient_statistics``), merged with the labelled rows' statistics (computed once) by
  ``merge_statistics``; the new θ̂ is the mode of the conjugate posterior given those
  completed expected statistics (``from_statistics``, then ``conjugate_mode``), which is the
  maximiser of the expected complete-data log posterior.

Nothing here knows a model: the statistics, the closed form and the likelihood are the
family's, the statistics of stacked rows a callable of the caller's (the estimator's own
``_statistics``, which knows its data options). Each iteration records the log-likelihood part
of the objective, Σ_L w_i log p(x_i, y_i | θ̂) + λ_u Σ_U w_i log p(x_i | θ̂); the log prior
density log p(θ̂) is not among the families' methods, so the trace is that of the likelihood
alone (with a weak prior it rises almost always, but only the whole objective must). The
iterations stop when no responsibility moves by more than ``tol``.

Where the estimator derives a hyperparameter from the data (λ by the evidence, a prior scaled
to the data such as Gaussian naive Bayes', GDA's or the Poisson rates' default), each M-step
derives it again from the completed statistics, so the objective changes a little between
iterations; with fixed priors the EM is exactly that of the MAP above.

Examples
--------
Two labelled rows and four unlabelled ones of a two-word multinomial model; the callable makes
the statistics of the unlabelled rows stacked once per class with their weights:

>>> import numpy as np
>>> from bayesgen.families import family
>>> model = family("multinomial_nb")
>>> X_l, y_l = np.array([[5, 0], [0, 5]]), np.array(["a", "b"])
>>> X_u = np.array([[4, 1], [3, 0], [1, 4], [0, 3]])
>>> labelled = model.sufficient_statistics(X_l, y_l)
>>> stacked = stack_rows(X_u, 2)
>>> def unlabelled(weights):
...     return model.sufficient_statistics(
...         stacked, np.repeat(["a", "b"], 4), sample_weight=weights.T.ravel(),
...         classes=np.array(["a", "b"]))
>>> result = em_map(
...     model, labelled_statistics=labelled, unlabelled_statistics=unlabelled,
...     estimates_of=lambda stats: model.from_statistics(stats, alpha=2.0),
...     labelled_rows=X_l, labelled_codes=np.array([0, 1]), unlabelled_rows=X_u)
>>> result.converged, result.responsibilities.argmax(axis=1).tolist()
(True, [0, 0, 1, 1])
>>> float(result.statistics["class_count"].sum())
6.0
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import xarray as xr

from bayesgen.families import Family
from bayesgen.inference.sampling import conjugate_map
from bayesgen.input.labels import check_labels
from bayesgen.input.rows import (
    LabelSplit,
    concatenate_rows,
    flat_labels,
    split_rows,
    stack_rows,
    take_rows,
)
from bayesgen.maths.likelihood import log_sum_exp

#: The largest change of any responsibility at which the EM stops.
TOL = 1e-8
#: At most this many EM iterations.
MAX_ITER = 500


@dataclass(frozen=True)
class EMResult:
    """What :func:`em_map` found.

    Attributes
    ----------
    statistics : xarray.Dataset
        The completed expected statistics: the labelled rows' merged with the unlabelled
        rows' at the last responsibilities but one (those whose mode is the MAP).
    estimates : xarray.Dataset
        The closed form at ``statistics``; its ``conjugate_mode`` is the MAP θ̂.
    responsibilities : numpy.ndarray of shape (n_unlabelled, n_classes)
        p(y = k | x_i, θ̂) of every unlabelled row at the MAP.
    log_likelihood : numpy.ndarray of shape (iterations,)
        Σ_L w_i log p(x_i, y_i | θ̂_t) + λ_u Σ_U w_i log p(x_i | θ̂_t) at every iteration's θ̂_t.
    iterations : int
        M-steps taken (0 where λ_u = 0: the labelled rows' MAP, no iteration needed).
    converged : bool
        Whether the responsibilities settled within ``tol`` before ``max_iter``.
    """

    statistics: xr.Dataset
    estimates: xr.Dataset
    responsibilities: np.ndarray
    log_likelihood: np.ndarray
    iterations: int
    converged: bool


def em_map(
    model: Family,
    *,
    labelled_statistics: xr.Dataset,
    unlabelled_statistics: Callable[[np.ndarray], xr.Dataset],
    estimates_of: Callable[[xr.Dataset], xr.Dataset],
    labelled_rows,
    labelled_codes: np.ndarray,
    unlabelled_rows,
    labelled_weight: np.ndarray | None = None,
    unlabelled_row_weight: np.ndarray | None = None,
    unlabelled_weight: float = 1.0,
    initial: np.ndarray | None = None,
    tol: float = TOL,
    max_iter: int = MAX_ITER,
) -> EMResult:
    """The MAP of a semi-supervised fit by EM (see the module's docstring).

    Parameters
    ----------
    model : Family
        The model.
    labelled_statistics : xarray.Dataset
        The sufficient statistics of the labelled rows; their classes are the fit's.
    unlabelled_statistics : callable
        ``weights`` (n_unlabelled, n_classes) → the statistics of every unlabelled row counted
        in class k with weight ``weights[i, k]``, with the classes of ``labelled_statistics``.
    estimates_of : callable
        Statistics → the closed form at the estimator's prior (``from_statistics``).
    labelled_rows, unlabelled_rows : numpy.ndarray or scipy.sparse.csr_array
        The rows as the model checks them (``training_features``).
    labelled_codes : numpy.ndarray of int
        The labelled rows' classes, as indices into the classes.
    labelled_weight, unlabelled_row_weight : numpy.ndarray, optional
        The rows' ``sample_weight`` (default 1 each).
    unlabelled_weight : float, default 1.0
        λ_u ∈ [0, 1]: how much an unlabelled row counts beside a labelled one (Nigam's EM-λ).
        0 gives the labelled rows' MAP (the unlabelled rows only get responsibilities).
    initial : numpy.ndarray of shape (n_unlabelled, n_classes), optional
        Starting responsibilities (rows summing to 1). Default: the exact posterior
        predictive p(y | x_i, L) of the labelled rows' fit (Nigam et al.'s start), finite
        even where the labelled rows' mode puts a zero probability on a feature the
        unlabelled rows show; 1/K for a row with a category no labelled row has.
    tol : float
        Stop when no responsibility changes by more than this.
    max_iter : int
        At most this many iterations (``converged`` is False where they run out).

    Returns
    -------
    EMResult

    Raises
    ------
    ValueError
        Where the posterior has no interior mode (a Dirichlet with n + α < 1: set α ≥ 1), or
        an unlabelled row has zero probability under every class at the mode.

    Examples
    --------
    The module's example with λ_u = 0.5: each of the four unlabelled rows adds half a row to
    the class counts.

    >>> import numpy as np
    >>> from bayesgen.families import family
    >>> from bayesgen.inference.semi_supervised import stack_rows
    >>> model, classes = family("multinomial_nb"), np.array(["a", "b"])
    >>> X_l, X_u = np.array([[5, 0], [0, 5]]), np.array([[4, 1], [3, 0], [1, 4], [0, 3]])
    >>> def unlabelled(weights):
    ...     return model.sufficient_statistics(
    ...         stack_rows(X_u, 2), np.repeat(classes, 4), sample_weight=weights.T.ravel(),
    ...         classes=classes)
    >>> result = em_map(
    ...     model, labelled_statistics=model.sufficient_statistics(X_l, classes),
    ...     unlabelled_statistics=unlabelled,
    ...     estimates_of=lambda stats: model.from_statistics(stats, alpha=2.0),
    ...     labelled_rows=X_l, labelled_codes=np.array([0, 1]), unlabelled_rows=X_u,
    ...     unlabelled_weight=0.5)
    >>> result.converged, float(result.statistics["class_count"].sum())
    (True, 4.0)
    >>> result.responsibilities.argmax(axis=1).tolist()
    [0, 0, 1, 1]
    """
    n_classes = labelled_statistics.sizes["class"]
    n_unlabelled = unlabelled_rows.shape[0]
    row_weight = _ones_or(unlabelled_row_weight, n_unlabelled)
    labelled_estimates = estimates_of(labelled_statistics)
    if unlabelled_weight == 0:  # the unlabelled rows do not count: the labelled rows' MAP
        joint = class_log_joint(model, labelled_estimates, unlabelled_rows)
        return EMResult(
            labelled_statistics,
            labelled_estimates,
            _normalised(joint),
            np.empty(0),
            0,
            True,
        )
    if initial is None:
        initial = predictive_start(model, labelled_estimates, unlabelled_rows)
    responsibilities = _check_initial(initial, n_unlabelled, n_classes)
    trace = []
    converged = False
    for _ in range(max_iter):
        weights = unlabelled_weight * row_weight[:, None] * responsibilities
        statistics = model.merge_statistics(labelled_statistics, unlabelled_statistics(weights))
        estimates = estimates_of(statistics)
        joint = class_log_joint(model, estimates, unlabelled_rows)
        marginal = row_marginal(joint)
        labelled = own_class_log_likelihood(model, estimates, labelled_rows, labelled_codes)
        trace.append(
            float(np.sum(_ones_or(labelled_weight, len(labelled_codes)) * labelled))
            + unlabelled_weight * float(np.sum(row_weight * marginal))
        )
        updated = np.exp(joint - marginal[:, None])
        change = float(np.max(np.abs(updated - responsibilities), initial=0.0))
        responsibilities = updated
        if change <= tol:
            converged = True
            break
    return EMResult(
        statistics, estimates, responsibilities, np.asarray(trace), len(trace), converged
    )


def fit_labelled_and_unlabelled(
    model: Family,
    split: LabelSplit,
    *,
    statistics_of: Callable[..., xr.Dataset],
    estimates_of: Callable[[xr.Dataset], xr.Dataset],
    feature_names=None,
    unlabelled_weight: float = 1.0,
) -> tuple[EMResult, np.ndarray]:
    """:func:`em_map` on user data split by :func:`split_rows`: what an estimator's ``fit``
    does with unlabelled rows.

    Parameters
    ----------
    model : Family
    split : LabelSplit
    statistics_of : callable
        ``(X, y, *, feature_names, sample_weight, classes=None)`` → sufficient statistics (the
        estimator's ``_statistics``, which knows its data options).
    estimates_of : callable
        Statistics → closed form (the estimator's ``_estimates``).
    feature_names : sequence of str, optional
        As ``fit`` takes them.
    unlabelled_weight : float
        λ_u.

    Returns
    -------
    result : EMResult
    labelled_codes : numpy.ndarray of int
        The labelled rows' classes as indices into the fit's classes.
    """
    labelled = statistics_of(
        split.X_labelled,
        split.y_labelled,
        feature_names=feature_names,
        sample_weight=split.weight_labelled,
    )
    classes = labelled["class"].values
    n_unlabelled = int(split.unlabelled.sum())
    # Every unlabelled row once per class, labelled k in the k-th copy, weighted λ_u w_i r_ik.
    stacked = stack_rows(split.X_unlabelled, classes.size)
    stacked_y = np.repeat(classes, n_unlabelled)

    def unlabelled_statistics(weights: np.ndarray) -> xr.Dataset:
        return statistics_of(
            stacked,
            stacked_y,
            feature_names=feature_names,
            sample_weight=weights.T.ravel(),
            classes=classes,
        )

    labelled_estimates = estimates_of(labelled)
    codes, labels = check_labels(split.y_labelled)
    labelled_codes = np.searchsorted(classes, labels)[codes]
    common = {
        "labelled_statistics": labelled,
        "unlabelled_statistics": unlabelled_statistics,
        "estimates_of": estimates_of,
        "unlabelled_row_weight": split.weight_unlabelled,
        "unlabelled_weight": unlabelled_weight,
    }
    result = em_map(
        model,
        labelled_rows=model.training_features(labelled_estimates, split.X_labelled),
        labelled_codes=labelled_codes,
        unlabelled_rows=model.training_features(labelled_estimates, split.X_unlabelled),
        labelled_weight=split.weight_labelled,
        **common,
    )
    # λ_u = 0: the labelled rows' own MAP, stationary by construction.
    gap = stationarity_gap(model, result, **common) if unlabelled_weight > 0 else 0.0
    result.estimates.attrs["em_stationarity_gap"] = gap
    return result, labelled_codes


def stationarity_gap(
    model: Family,
    result: EMResult,
    *,
    labelled_statistics: xr.Dataset,
    unlabelled_statistics: Callable[[np.ndarray], xr.Dataset],
    estimates_of: Callable[[xr.Dataset], xr.Dataset],
    unlabelled_row_weight: np.ndarray | None = None,
    unlabelled_weight: float = 1.0,
) -> float:
    """How far the EM's MAP θ̂ is from a stationary point: the largest change of any
    parameter of θ̂ under one more M-step from its own responsibilities.

    At a stationary point the mode identities hold at the completed expected statistics:
    θ̂ is the conjugate mode (``conjugate_mode``) given the labelled rows' statistics merged
    with the unlabelled rows' at weights λ_u w_i p(y = k | x_i, θ̂), so the gap is 0 up to the
    EM's tolerance. ``fit`` records it as ``closed_form_.attrs["em_stationarity_gap"]``. The
    arguments are :func:`em_map`'s.
    """
    n_rows = result.responsibilities.shape[0]
    weights = unlabelled_weight * _ones_or(unlabelled_row_weight, n_rows)[:, None]
    statistics = model.merge_statistics(
        labelled_statistics, unlabelled_statistics(weights * result.responsibilities)
    )
    return mode_change(model, result.estimates, estimates_of(statistics))


def mode_change(model: Family, before: xr.Dataset, after: xr.Dataset) -> float:
    """The largest change of any parameter of the posterior mode from the closed form
    ``before`` to ``after``: :func:`stationarity_gap` once ``after`` is one more M-step."""
    first = conjugate_map(before, model_family=model)
    second = conjugate_map(after, model_family=model)
    return max(
        (
            float(np.max(np.abs(second[name].values - first[name].values), initial=0.0))
            for name in first.data_vars
        ),
        default=0.0,
    )


def label_distributions(
    unlabelled: np.ndarray, labelled_codes: np.ndarray, responsibilities: np.ndarray
) -> np.ndarray:
    """p(y | x_i) of every training row, shape (n_samples, n_classes): one-hot at the given
    label for a labelled row, the responsibilities at the MAP for an unlabelled one (what
    scikit-learn's ``LabelSpreading`` calls ``label_distributions_``)."""
    distributions = np.zeros((unlabelled.size, responsibilities.shape[1]))
    distributions[np.flatnonzero(~unlabelled), labelled_codes] = 1.0
    distributions[unlabelled] = responsibilities
    return distributions


def class_log_joint(model: Family, estimates: xr.Dataset, rows, *, point=None) -> np.ndarray:
    """log p(x_i, y = k | θ̂) at the posterior mode θ̂ of ``estimates``, fully normalised, for
    every row and class: shape (n_rows, n_classes).

    The whole density, so that its log-sum-exp is log p(x_i | θ̂): the family's
    ``draw_log_joint`` at the mode (one "draw"), which may drop a term that is the same for
    every class (the multinomial coefficient, GDA's quadratic form: predictions take the
    classes' differences only), plus that term, read off the full ``row_log_likelihood`` of
    the first class. Two calls whatever the number of classes. ``point``: the mode
    (:func:`mode_point`), where the caller has it already (a Dask chunk's task gets it with
    the estimates).

    Raises
    ------
    ValueError
        Where the posterior has no interior mode (NaN in it).
    """
    draw = (mode_point(model, estimates) if point is None else point).expand_dims(draw=1)
    n_rows = rows.shape[0]
    if estimates.sizes["class"] == 0:
        return np.empty((n_rows, 0))
    joint = model.draw_log_joint(estimates, rows, draw)[0]
    first = model.row_log_likelihood(estimates, rows, np.zeros(n_rows, dtype=np.int64), draw)[0]
    return joint + (first - joint[:, 0])[:, None]


def mode_point(model: Family, estimates: xr.Dataset) -> xr.Dataset:
    """The posterior mode θ̂ of ``estimates`` (``conjugate_map``), refused where it is not
    interior.

    Raises
    ------
    ValueError
        Naming ``alpha``, where some Dirichlet or Beta has n + α < 1 (NaN in the mode).
    """
    point = conjugate_map(estimates, model_family=model)
    if any(np.isnan(point[name].values).any() for name in point.data_vars):
        raise ValueError(
            "alpha: the posterior has no interior mode (a Dirichlet or Beta with n + α < 1 "
            "for some outcome: its density is unbounded at 0), so the semi-supervised fit has "
            "no MAP to find by EM. Use a smoothing alpha >= 1 (and class_alpha >= 1)."
        )
    return point


def own_class_log_likelihood(
    model: Family, estimates: xr.Dataset, rows, codes, *, point=None
) -> np.ndarray:
    """log p(x_i, y_i | θ̂) of labelled rows at the posterior mode θ̂ of ``estimates`` (or at
    ``point``, that mode computed already)."""
    if point is None:
        point = conjugate_map(estimates, model_family=model)
    draw = point.expand_dims(draw=1)
    return model.row_log_likelihood(estimates, rows, np.asarray(codes), draw)[0]


#: The rules that choose λ_u in ``fit(..., unlabelled_weight=...)`` instead of a number.
UNLABELLED_WEIGHT_RULES = ("loo",)


def check_unlabelled_weight(value) -> float | str:
    """λ_u as a float in [0, 1], or ``"loo"`` (chosen by exact leave-one-out of the labelled
    rows: :func:`bayesgen.inference.unlabelled_weight.fit_at_chosen_weight`), or an error
    naming ``unlabelled_weight``.

    Examples
    --------
    >>> check_unlabelled_weight(0.5), check_unlabelled_weight("loo")
    (0.5, 'loo')
    >>> check_unlabelled_weight("evidence")
    Traceback (most recent call last):
    ...
    ValueError: unlabelled_weight: expected a number in [0, 1] or 'loo' ...; got 'evidence'.
    """
    expected = "a number in [0, 1] or 'loo'"
    if isinstance(value, str):
        if value in UNLABELLED_WEIGHT_RULES:
            return value
        raise ValueError(
            f"unlabelled_weight: expected {expected} (λ_u chosen by exact leave-one-out of the "
            f"labelled rows); got {value!r}."
        )
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"unlabelled_weight: expected {expected}; got {type(value).__name__} {value!r}."
        )
    if not 0.0 <= float(value) <= 1.0:
        raise ValueError(
            f"unlabelled_weight: expected {expected} (how much an unlabelled row counts "
            f"beside a labelled one); got {value!r}."
        )
    return float(value)


# -- small helpers ------------------------------------------------------------------------------


def _ones_or(weights: np.ndarray | None, n_rows: int) -> np.ndarray:
    return np.ones(n_rows) if weights is None else np.asarray(weights, dtype=np.float64)


def row_marginal(joint: np.ndarray) -> np.ndarray:
    """log Σ_k p(x_i, y = k | θ̂), refusing a row that no class can have produced."""
    marginal = log_sum_exp(joint)[:, 0]
    impossible = np.flatnonzero(~np.isfinite(marginal))
    if impossible.size:
        raise ValueError(
            f"X: unlabelled rows {impossible[:10].tolist()} have zero probability under every "
            "class at the current MAP (a feature value that no class's mode allows); use a "
            "smoothing alpha > 1 so that no probability is zero at the mode."
        )
    return marginal


def predictive_start(model: Family, labelled_estimates: xr.Dataset, rows) -> np.ndarray:
    """p(y | x_i, L) of the labelled rows' exact posterior predictive; 1/K for a row it gives
    no probability (a category that no labelled row shows, beyond the labelled fit's
    categories)."""
    log_joint = model.predictive_log_joint(labelled_estimates, rows)
    with np.errstate(invalid="ignore"):
        start = np.exp(log_joint - log_sum_exp(log_joint))
    unknown = ~np.all(np.isfinite(start), axis=1)
    start[unknown] = 1.0 / log_joint.shape[1]
    return start


def _normalised(log_joint: np.ndarray) -> np.ndarray:
    """p(y = k | x_i) from log p(x_i, y = k)."""
    return np.exp(log_joint - row_marginal(log_joint)[:, None])


def _check_initial(initial, n_rows: int, n_classes: int) -> np.ndarray:
    values = np.asarray(initial, dtype=np.float64)
    if values.shape != (n_rows, n_classes):
        raise ValueError(
            f"initial: expected responsibilities of shape ({n_rows}, {n_classes}), one row per "
            f"unlabelled row; got shape {values.shape}."
        )
    if not (np.all(values >= 0) and np.allclose(values.sum(axis=1), 1.0)):
        raise ValueError("initial: expected rows of probabilities >= 0 that sum to 1.")
    return values


__all__ = [
    "UNLABELLED_WEIGHT_RULES",
    "EMResult",
    "LabelSplit",
    "check_unlabelled_weight",
    "class_log_joint",
    "concatenate_rows",
    "em_map",
    "fit_labelled_and_unlabelled",
    "flat_labels",
    "label_distributions",
    "mode_change",
    "mode_point",
    "own_class_log_likelihood",
    "predictive_start",
    "row_marginal",
    "split_rows",
    "stack_rows",
    "stationarity_gap",
    "take_rows",
]
