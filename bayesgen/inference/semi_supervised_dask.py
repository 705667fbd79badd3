"""The semi-supervised fit of Dask input: EM with one pass over the chunks per iteration.

The EM of :mod:`bayesgen.inference.semi_supervised` needs the rows only through sums: the
labelled rows' statistics, and the unlabelled rows' statistics weighted by their
responsibilities. So on Dask X and y (:mod:`bayesgen.input.distributed`) it runs without ever
holding the rows:

1. **The labelled pass** (:func:`labelled_statistics`): each chunk's labelled rows reduced to
   their statistics, merged in a tree, and its unlabelled rows counted (a row is unlabelled
   where its label is missing or equals ``unlabelled_label``). With no unlabelled row these are
   the supervised statistics, bit for bit, and the fit is the supervised one.
2. **One pass per iteration** (:func:`em_map_dask`): each chunk's task gets the current MAP
   θ̂ (the closed form and its mode), computes its unlabelled rows' responsibilities
   r_ik = p(y = k | x_i, θ̂) and their statistics at weights λ_u w_i r_ik, and these merge in
   a tree with the family's ``merge_statistics``; on the client the labelled rows' statistics
   are merged in and the closed form of the completed statistics gives the next θ̂.

The responsibilities are not kept between passes (n × K numbers, more than the statistics):
a pass computes those at the previous θ̂ again beside the new ones, to measure how far they
moved, so the stopping rule, the trace and the iterations are :func:`~bayesgen.inference.
semi_supervised.em_map`'s, and so is the MAP, to rounding (the chunks' sums add in another
order). A fit of ``n`` iterations reads the chunks ``n + 2`` times: the labelled pass, the
start (the labelled rows' exact predictive, as in memory), and one pass per iteration, the last
of which finds that the responsibilities no longer move. Each pass is one ``dask.compute``, on
the active ``distributed.Client`` where there is one.

There is no Gibbs sampler here: it would draw every unlabelled row's label at every sweep, and
the rows are not kept. The posterior of a Dask fit is the conjugate posterior at the EM's
completed expected statistics (``"expected_statistics"``), the approximation an in-memory fit
with λ_u < 1 holds: its mode is the MAP, its spread too narrow where labels are uncertain.

Examples
--------
Eight rows of two words in two chunks; four are labelled -1, unlabelled:

>>> import dask
>>> import dask.array as da
>>> import numpy as np
>>> from bayesgen.families import family
>>> model = family("multinomial_nb")
>>> X = np.array([[5, 0], [0, 5], [4, 1], [1, 4], [3, 0], [0, 3], [4, 0], [1, 3]])
>>> y = np.array([0, 1, 0, 1, -1, -1, -1, -1])
>>> X_dask, y_dask = da.from_array(X, chunks=(4, 2)), da.from_array(y, chunks=4)
>>> with dask.config.set(scheduler="synchronous"):
...     estimates, result = fit_closed_form(
...         model, X_dask, y_dask, unlabelled_label=-1,
...         estimates_of=lambda stats: model.from_statistics(stats, alpha=2.0))
>>> estimates["class_count"].values.round(2).tolist(), result.converged
([4.01, 3.99], True)
>>> result.passes == result.iterations + 2, estimates.attrs["unlabelled_rows"]
(True, 4)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import xarray as xr

from bayesgen.families import Family
from bayesgen.inference.semi_supervised import (
    MAX_ITER,
    TOL,
    class_log_joint,
    mode_change,
    mode_point,
    own_class_log_likelihood,
    predictive_start,
    row_marginal,
)
from bayesgen.input import distributed
from bayesgen.input.labels import check_labels, unlabelled_rows
from bayesgen.input.rows import flat_labels, stack_rows, take_rows

_LOO_NEEDS_ROWS = (
    "unlabelled_weight: 'loo' scores each labelled row left out, which needs the rows in "
    "memory; with dask input give a number in [0, 1] (choose it with choose_unlabelled_weight "
    "on a sample that fits in memory)."
)


@dataclass(frozen=True)
class DaskEMResult:
    """What :func:`em_map_dask` found: :class:`~bayesgen.inference.semi_supervised.EMResult`
    without the responsibilities (one per row: not kept).

    Attributes
    ----------
    statistics : xarray.Dataset
        The completed expected statistics (the labelled rows' merged with the unlabelled
        rows' at the responsibilities whose M-step gives the MAP).
    estimates : xarray.Dataset
        Their closed form; its ``conjugate_mode`` is the MAP θ̂.
    log_likelihood : numpy.ndarray
        The EM's trace, as :func:`~bayesgen.inference.semi_supervised.em_map` records it.
    iterations : int
        M-steps taken (0 where λ_u = 0).
    converged : bool
        Whether the responsibilities settled within ``tol`` before ``max_iter``.
    stationarity_gap : float
        The largest move of any parameter of the mode under one more M-step
        (:func:`~bayesgen.inference.semi_supervised.stationarity_gap`).
    passes : int
        Passes over the chunks, the labelled pass included.
    """

    statistics: xr.Dataset
    estimates: xr.Dataset
    log_likelihood: np.ndarray
    iterations: int
    converged: bool
    stationarity_gap: float
    passes: int


def fit_closed_form(
    model: Family,
    X,
    y,
    *,
    estimates_of: Callable[[xr.Dataset], xr.Dataset],
    feature_names=None,
    sample_weight=None,
    unlabelled_label=None,
    unlabelled_weight: float = 1.0,
    data_options: dict | None = None,
    inference: str = "conjugate",
) -> tuple[xr.Dataset, DaskEMResult | None]:
    """The closed form of a fit of Dask X and y, unlabelled rows and all: what an estimator's
    ``fit`` does with Dask input.

    Parameters
    ----------
    model : Family
    X, y, sample_weight
        As :func:`bayesgen.input.distributed.sufficient_statistics` takes them.
    estimates_of : callable
        Statistics → the closed form at the estimator's prior (its ``_estimates``).
    feature_names : sequence of str, optional
    unlabelled_label : int, str or None
        The label that marks an unlabelled row besides None/NaN.
    unlabelled_weight : float in [0, 1]
        λ_u (``"loo"`` is refused: it needs the rows in memory).
    data_options : dict, optional
        The statistics' options (the estimator's ``_data_options()``).
    inference : str
        The estimator's inference: unlabelled rows need ``"conjugate"`` (checked after the
        labelled pass, which finds them).

    Returns
    -------
    estimates : xarray.Dataset
        The closed form with ``attrs["dask_chunks"]``; with unlabelled rows that at the EM's
        completed statistics, with the attrs of an in-memory semi-supervised fit
        (``unlabelled_rows``, ``em_iterations``, ``em_converged``, ``unlabelled_weight``,
        ``em_stationarity_gap``) and ``em_dask_passes``.
    result : DaskEMResult or None
        None where every row is labelled.

    Raises
    ------
    ValueError
        As the in-memory fit: naming ``y`` for every row unlabelled, one labelled class, or
        unlabelled rows with ``inference="nuts"``; a chunk's error names the chunk. Naming
        ``unlabelled_weight`` for ``"loo"``, before any chunk is read.
    """
    if unlabelled_weight == "loo":
        raise ValueError(_LOO_NEEDS_ROWS)
    options = dict(data_options or {})
    labelled, n_unlabelled = labelled_statistics(
        model,
        X,
        y,
        unlabelled_label=unlabelled_label,
        feature_names=feature_names,
        sample_weight=sample_weight,
        **options,
    )
    if n_unlabelled == 0:
        estimates = estimates_of(labelled)
        estimates.attrs["dask_chunks"] = labelled.attrs["dask_chunks"]
        return estimates, None
    if inference != "conjugate":
        raise ValueError(
            f"y: {n_unlabelled} rows of the dask input are unlabelled (None/NaN or "
            f"unlabelled_label), and inference={inference!r} cannot fit them there (their "
            "labels would be latent, one per row, and the rows are not kept). Use "
            "inference='conjugate': EM for the MAP, one pass over the chunks per iteration."
        )
    result = em_map_dask(
        model,
        X,
        y,
        labelled_statistics=labelled,
        estimates_of=estimates_of,
        statistics_of=functools.partial(
            model.sufficient_statistics, feature_names=feature_names, **options
        ),
        unlabelled_label=unlabelled_label,
        sample_weight=sample_weight,
        unlabelled_weight=unlabelled_weight,
    )
    estimates = result.estimates
    estimates.attrs |= {
        "dask_chunks": labelled.attrs["dask_chunks"],
        "unlabelled_rows": n_unlabelled,
        "em_iterations": result.iterations,
        "em_converged": int(result.converged),
        "unlabelled_weight": float(unlabelled_weight),
        "em_stationarity_gap": result.stationarity_gap,
        "em_dask_passes": result.passes,
    }
    return estimates, result


def refuse_unlabelled(estimator, unlabelled_label, unlabelled_weight) -> None:
    """Refuse, before any chunk is read, what would mark unlabelled rows in the Dask input of
    an estimator whose statistics are its own (``NaiveBayes``'s column plan), which
    :func:`fit_closed_form` does not fit (its missing labels are refused chunk by chunk)."""
    if unlabelled_weight == "loo":
        raise ValueError(_LOO_NEEDS_ROWS)
    if unlabelled_label is not None:
        raise ValueError(
            f"unlabelled_label: {type(estimator).__name__} fits no unlabelled rows in dask "
            f"input yet; got unlabelled_label={unlabelled_label!r}. Fit its labelled rows, or "
            "the data in memory."
        )


def labelled_statistics(
    model: Family,
    X,
    y,
    *,
    unlabelled_label=None,
    feature_names=None,
    sample_weight=None,
    **options,
) -> tuple[xr.Dataset, int]:
    """The statistics of the labelled rows of Dask X and y, and how many rows are unlabelled:
    one pass over the chunks.

    Where no row is unlabelled the statistics are those of
    :func:`bayesgen.input.distributed.sufficient_statistics`, bit for bit, with its checks.

    Returns
    -------
    statistics : xarray.Dataset
        With ``attrs["dask_chunks"]``; the classes are the labelled rows'.
    n_unlabelled : int

    Raises
    ------
    ValueError
        As ``sufficient_statistics``; with unlabelled rows, for every row unlabelled or the
        labelled rows holding one class, naming ``y`` (the in-memory fit's checks).

    Examples
    --------
    >>> import dask
    >>> import dask.array as da
    >>> import numpy as np
    >>> from bayesgen.families import family
    >>> X = da.from_array(np.array([[1, 1], [0, 2], [1, 1], [0, 3]]), chunks=(2, 2))
    >>> y = da.from_array(np.array([1.0, 0.0, 1.0, np.nan]), chunks=2)
    >>> with dask.config.set(scheduler="synchronous"):
    ...     stats, n_unlabelled = labelled_statistics(family("multinomial_nb"), X, y)
    >>> stats["class_count"].values.tolist(), n_unlabelled
    ([1.0, 2.0], 1)
    """
    import dask

    chunks = distributed.row_chunks(X, y, sample_weight)
    n_chunks = len(chunks.X)
    task = dask.delayed(_labelled_chunk)
    parts = [
        task(model, index, n_chunks, chunks.bounds[index], blocks, labels, weights,
             unlabelled_label, feature_names, options)
        for index, (blocks, labels, weights) in enumerate(chunks)
    ]  # fmt: skip
    merge = functools.partial(_merge_counts, model)
    ((statistics, n_unlabelled, n_rows),) = dask.compute(distributed.tree_reduce(parts, merge))
    if n_unlabelled == 0:
        return distributed.finish_statistics(statistics, n_chunks, sample_weight=sample_weight), 0
    if statistics is None:
        raise ValueError(
            f"y: all {n_rows} rows are unlabelled (None/NaN or unlabelled_label) or of zero "
            "weight; a semi-supervised fit needs labelled rows of at least two classes, which "
            "name the classes."
        )
    statistics = statistics.isel({"class": np.flatnonzero(statistics["class_count"].values > 0)})
    if statistics.sizes["class"] < 2:
        raise ValueError(
            "y: the labelled rows hold only one class, "
            f"{statistics['class'].values[0].item()!r} ({n_unlabelled} rows are unlabelled); "
            "a semi-supervised fit needs labelled rows of at least two classes. A class with "
            "no labelled row cannot be learnt: its rows would be a cluster without a name."
        )
    statistics.attrs["dask_chunks"] = n_chunks
    return statistics, n_unlabelled


def em_map_dask(
    model: Family,
    X,
    y,
    *,
    labelled_statistics: xr.Dataset,
    estimates_of: Callable[[xr.Dataset], xr.Dataset],
    statistics_of: Callable[..., xr.Dataset],
    unlabelled_label=None,
    sample_weight=None,
    unlabelled_weight: float = 1.0,
    tol: float = TOL,
    max_iter: int = MAX_ITER,
) -> DaskEMResult:
    """The MAP of a semi-supervised fit of Dask X and y by EM, one pass over the chunks per
    iteration (see the module's docstring).

    Parameters
    ----------
    model : Family
    X, y, sample_weight
        The Dask input, as :func:`bayesgen.input.distributed.row_chunks` takes it.
    labelled_statistics : xarray.Dataset
        The labelled rows' statistics (:func:`labelled_statistics`); their classes are the
        fit's.
    estimates_of : callable
        Statistics → closed form (run on the client).
    statistics_of : callable
        ``(X, y, *, sample_weight, classes)`` → the statistics of an in-memory chunk (run in
        the chunks' tasks: it must pickle, e.g. a ``functools.partial`` of the family's
        ``sufficient_statistics``).
    unlabelled_label : int, str or None
    unlabelled_weight : float
        λ_u; 0 gives the labelled rows' fit without a pass.
    tol, max_iter
        As :func:`~bayesgen.inference.semi_supervised.em_map`'s.

    Returns
    -------
    DaskEMResult
    """
    labelled_estimates = estimates_of(labelled_statistics)
    if unlabelled_weight == 0:  # the unlabelled rows do not count: the labelled rows' MAP
        return DaskEMResult(
            labelled_statistics, labelled_estimates, np.empty(0), 0, True, 0.0, passes=1
        )
    chunks = distributed.row_chunks(X, y, sample_weight)
    common = {
        "model": model,
        "classes": labelled_statistics["class"].values,
        "labelled_estimates": labelled_estimates,
        "statistics_of": statistics_of,
        "unlabelled_label": unlabelled_label,
        "unlabelled_weight": float(unlabelled_weight),
    }

    def completed(summary: _Summary) -> xr.Dataset:
        return model.merge_statistics(labelled_statistics, summary.statistics)

    start = _EStep(labelled_estimates, None)  # the labelled rows' exact predictive
    summary = _run_pass(chunks, _Pass(**common, current=start, previous=None))
    statistics = completed(summary)
    estimates, previous, trace, converged = estimates_of(statistics), start, [], False
    while True:
        current = _EStep(estimates, mode_point(model, estimates))
        summary = _run_pass(chunks, _Pass(**common, current=current, previous=previous))
        trace.append(summary.labelled + unlabelled_weight * summary.unlabelled)
        if summary.change <= tol:
            converged = True
            break
        if len(trace) >= max_iter:
            break
        previous, statistics = current, completed(summary)
        estimates = estimates_of(statistics)
    # The last pass made the statistics of one more M-step from the MAP's responsibilities.
    gap = mode_change(model, estimates, estimates_of(completed(summary)))
    return DaskEMResult(
        statistics,
        estimates,
        np.asarray(trace),
        len(trace),
        converged,
        gap,
        passes=len(trace) + 2,
    )


# -- a pass over the chunks --------------------------------------------------------------------


@dataclass(frozen=True)
class _EStep:
    """The responsibilities at the mode ``point`` of ``estimates``, or (``point`` None) the
    start: the exact posterior predictive of the labelled rows' closed form ``estimates``."""

    estimates: xr.Dataset
    point: xr.Dataset | None

    def responsibilities(self, model: Family, rows) -> tuple[np.ndarray, np.ndarray | None]:
        """p(y = k | x_i) of ``rows``, and log p(x_i | θ̂) at the mode (None at the start)."""
        if self.point is None:
            return predictive_start(model, self.estimates, rows), None
        joint = class_log_joint(model, self.estimates, rows, point=self.point)
        marginal = row_marginal(joint)
        return np.exp(joint - marginal[:, None]), marginal


@dataclass(frozen=True)
class _Summary:
    """A chunk's (or merged chunks') part of a pass."""

    statistics: xr.Dataset | None  # the unlabelled rows' at the current responsibilities
    change: float  # the largest move of a responsibility since the previous E-step
    labelled: float  # Σ_L w_i log p(x_i, y_i | θ̂)
    unlabelled: float  # Σ_U w_i log p(x_i | θ̂)


@dataclass(frozen=True)
class _Pass:
    """What every chunk's task of one pass gets (shipped once per pass, not per chunk)."""

    model: Family
    classes: np.ndarray
    labelled_estimates: xr.Dataset
    statistics_of: Callable
    unlabelled_label: object
    unlabelled_weight: float
    current: _EStep
    previous: _EStep | None  # None: the first pass, which measures nothing

    def summarise(self, X, y, sample_weight) -> _Summary:
        """One in-memory chunk's part of the pass."""
        unlabelled = unlabelled_rows(y, unlabelled_label=self.unlabelled_label)
        weights = _row_weights(sample_weight, unlabelled.size)
        index = np.flatnonzero(unlabelled)
        statistics, change, marginal_sum = None, 0.0, 0.0
        if index.size:
            X_unlabelled = take_rows(X, index)
            rows = self.model.training_features(self.labelled_estimates, X_unlabelled)
            row_weight = np.ones(index.size) if weights is None else weights[index]
            responsibilities, marginal = self.current.responsibilities(self.model, rows)
            if self.previous is not None:
                before, _ = self.previous.responsibilities(self.model, rows)
                change = float(np.max(np.abs(responsibilities - before), initial=0.0))
                marginal_sum = float(np.sum(row_weight * marginal))
            completed = self.unlabelled_weight * row_weight[:, None] * responsibilities
            statistics = self.statistics_of(
                stack_rows(X_unlabelled, self.classes.size),
                np.repeat(self.classes, index.size),
                sample_weight=completed.T.ravel(),
                classes=self.classes,
            )
        labelled_sum = 0.0
        if self.previous is not None and index.size < unlabelled.size:
            labelled_sum = self._labelled_log_likelihood(X, y, weights, ~unlabelled)
        return _Summary(statistics, change, labelled_sum, marginal_sum)

    def _labelled_log_likelihood(self, X, y, weights, labelled: np.ndarray) -> float:
        index = np.flatnonzero(labelled)
        codes, labels = check_labels(take_rows(flat_labels(y), index), min_classes=1)
        rows = self.model.training_features(self.labelled_estimates, take_rows(X, index))
        values = own_class_log_likelihood(
            self.model,
            self.current.estimates,
            rows,
            np.searchsorted(self.classes, labels)[codes],
            point=self.current.point,
        )
        return float(np.sum((np.ones(index.size) if weights is None else weights[index]) * values))


def _run_pass(chunks: distributed.RowChunks, step: _Pass) -> _Summary:
    """One ``dask.compute``: every chunk's summary, merged in a tree."""
    import dask

    shared = dask.delayed(step, traverse=False)  # one copy in the graph, not one per chunk
    task = dask.delayed(_chunk_summary)
    n_chunks = len(chunks.X)
    parts = [
        task(index, n_chunks, chunks.bounds[index], blocks, labels, weights, shared)
        for index, (blocks, labels, weights) in enumerate(chunks)
    ]
    merge = functools.partial(_merge_summaries, step.model)
    (summary,) = dask.compute(distributed.tree_reduce(parts, merge))
    return summary


# -- the graph's tasks (run on the workers) ----------------------------------------------------


def _chunk_summary(index, n_chunks, bounds, blocks, y, sample_weight, step: _Pass) -> _Summary:
    with distributed.naming_chunk(index, n_chunks, bounds):
        return step.summarise(distributed.join_columns(blocks), y, sample_weight)


def _merge_summaries(model: Family, parts: list[_Summary]) -> _Summary:
    present = [part.statistics for part in parts if part.statistics is not None]
    statistics = functools.reduce(model.merge_statistics, present) if present else None
    return _Summary(
        statistics,
        max(part.change for part in parts),
        sum(part.labelled for part in parts),
        sum(part.unlabelled for part in parts),
    )


def _labelled_chunk(
    model, index, n_chunks, bounds, blocks, y, sample_weight, unlabelled_label, feature_names,
    options,
):  # fmt: skip
    """A chunk's labelled rows' statistics (None where it has none), its unlabelled rows and
    its rows."""
    with distributed.naming_chunk(index, n_chunks, bounds):
        X = distributed.join_columns(blocks)
        unlabelled = unlabelled_rows(y, unlabelled_label=unlabelled_label)
        n_unlabelled = int(unlabelled.sum())
        if n_unlabelled:  # else the chunk goes as it came: the supervised statistics
            index_labelled = np.flatnonzero(~unlabelled)
            if index_labelled.size == 0:
                return None, n_unlabelled, unlabelled.size
            X, y = take_rows(X, index_labelled), take_rows(flat_labels(y), index_labelled)
            weights = _row_weights(sample_weight, unlabelled.size)
            sample_weight = None if weights is None else weights[index_labelled]
        statistics = distributed.chunk_statistics(
            model, X, y, sample_weight, None, feature_names, options
        )
        return statistics, n_unlabelled, unlabelled.size


def _merge_counts(model: Family, parts: list[tuple]) -> tuple:
    statistics, unlabelled, rows = zip(*parts, strict=True)
    present = [part for part in statistics if part is not None]
    merge = functools.partial(distributed.merge_aligned, model)
    merged = functools.reduce(merge, present) if present else None
    return merged, sum(unlabelled), sum(rows)


def _row_weights(sample_weight, n_rows: int) -> np.ndarray | None:
    """A chunk's ``sample_weight`` (None, a number or one per row) as one per row, or None."""
    if sample_weight is None:
        return None
    weights = np.asarray(sample_weight, dtype=np.float64)
    return np.full(n_rows, float(weights)) if weights.ndim == 0 else weights


__all__ = [
    "DaskEMResult",
    "em_map_dask",
    "fit_closed_form",
    "labelled_statistics",
    "refuse_unlabelled",
]
