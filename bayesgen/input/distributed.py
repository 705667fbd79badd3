"""Out-of-core and distributed fits on Dask: the sufficient statistics reduced chunk by chunk.

Every model's posterior depends on the data only through sums over the rows (class counts,
feature counts; class means and scatter, see :mod:`bayesgen.input.statistics`). So a fit on a
``dask.array`` or ``dask.dataframe`` never needs the rows in one place:

1. each row chunk of X (with the matching chunk of y and ``sample_weight``) goes through the
   family's own ``sufficient_statistics``, with the same checks as in-memory data (a bad value
   raises the same error, naming the chunk);
2. the chunks' statistics are merged in a tree by the family's ``merge_statistics`` (counts
   add; GDA's and QDA's means and scatter by Chan's parallel update), eight at a time;
3. the merged statistics, a few arrays of size classes × features, come back to the client,
   where the posterior step is the in-memory one.

Steps 1 and 2 are one Dask graph, computed by ``dask.compute``: on the active
``distributed.Client`` when there is one (``dask.base.get_scheduler``), else on the scheduler
set by ``dask.config``, else the threaded scheduler. Each chunk is read once.

Classes need no pass of their own: each chunk's statistics carry the classes it holds, and
two chunks' statistics are aligned on the union of their classes (a class without rows has
count 0, mean 0, scatter 0) before they merge. Without ``classes`` the fit's classes are
then the sorted labels with positive weight, as in memory; with ``classes`` they are those.

The pieces are public for passes of other kinds over the same chunks (the semi-supervised
EM of :mod:`bayesgen.inference.semi_supervised_dask`, one pass per iteration):
:func:`row_chunks` cuts X, y and ``sample_weight`` into X's row chunks, :func:`join_columns`
makes a chunk of its column blocks, :func:`naming_chunk` names the chunk in a task's error,
:func:`chunk_statistics` and :func:`merge_aligned` make and merge chunks' statistics, and
:func:`tree_reduce` merges the tasks' results in a tree.

Dask is imported only when a Dask collection comes (``pip install "bayesgen[dask]"``):
:func:`is_dask_collection` looks for it in ``sys.modules`` first, since nobody can hold a Dask
collection without having imported Dask.
"""

from __future__ import annotations

import contextlib
import functools
import numbers
import sys
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp
import xarray as xr

from bayesgen.input.alpha import check_smoothing
from bayesgen.input.labels import check_labels, label_kind
from bayesgen.input.statistics import check_classes

#: Chunks' statistics merged per task of the tree reduction (dask's ``split_every`` default).
SPLIT_EVERY = 8

#: The closed-form functions' keywords that belong to the prior (``from_statistics``); the
#: rest go to ``sufficient_statistics``.
_PRIOR_OPTIONS = ("alpha", "class_alpha", "prior", "prior_mean")


def is_dask_collection(value) -> bool:
    """Whether ``value`` is a Dask collection (array, DataFrame, Series, delayed).

    Never imports Dask: without it in ``sys.modules`` no Dask collection can exist.

    Examples
    --------
    >>> import dask.array as da
    >>> import numpy as np
    >>> from bayesgen.input.distributed import is_dask_collection
    >>> is_dask_collection(da.zeros((4, 2), chunks=2)), is_dask_collection(np.zeros((4, 2)))
    (True, False)
    """
    if sys.modules.get("dask") is None:  # not imported, or blocked
        return False
    import dask

    return dask.is_dask_collection(value)


def has_dask_input(*values) -> bool:
    """Whether any of ``values`` (X, y, sample_weight) is a Dask collection.

    Examples
    --------
    >>> import dask.array as da
    >>> from bayesgen.input.distributed import has_dask_input
    >>> has_dask_input([[1, 0]], da.from_array([0], chunks=1)), has_dask_input([[1, 0]], [0])
    (True, False)
    """
    return any(is_dask_collection(value) for value in values)


def sufficient_statistics(
    family,
    X,
    y,
    *,
    feature_names=None,
    sample_weight=None,
    classes=None,
    **options,
) -> xr.Dataset:
    """The family's sufficient statistics of Dask X and y, reduced chunk by chunk.

    Parameters
    ----------
    family : bayesgen.families.Family
        The model family; its ``sufficient_statistics`` runs on each chunk and its
        ``merge_statistics`` merges them.
    X : dask.array.Array or dask.dataframe.DataFrame of shape (n_samples, n_features)
        Dense or sparse chunks (``scipy.sparse`` matrices, or any block with a ``tocsr()``
        method such as ``sparse.COO``); the column chunks of a row are joined first.
    y : dask.array.Array, dask.dataframe.Series or array-like of shape (n_samples,)
        With the same row chunks as X: a Dask collection of as many chunks (a 1-D dask array
        with known chunks is rechunked to X's), or an in-memory array where X's row chunks
        have known sizes.
    feature_names : sequence of str, optional
    sample_weight : as y, a number, or None
    classes : array-like, optional
        The classes, sorted and distinct; by default those of the labels with positive weight.
    **options
        The family's statistics options (``binarize``, ``n_categories``).

    Returns
    -------
    xarray.Dataset
        As the family's ``sufficient_statistics`` of all the rows, with
        ``attrs["dask_chunks"]``, the number of row chunks.

    Raises
    ------
    TypeError, ValueError
        As for in-memory data (the message names the chunk), and for y or ``sample_weight``
        not split like X.

    Examples
    --------
    Word counts in two chunks of two rows:

    >>> import dask.array as da
    >>> import numpy as np
    >>> from bayesgen.input.distributed import sufficient_statistics
    >>> from bayesgen.families import family
    >>> X = da.from_array(np.array([[1, 1, 0], [1, 1, 0], [1, 1, 1], [0, 0, 3]]), chunks=(2, 3))
    >>> y = da.from_array(np.array([1, 0, 0, 1]), chunks=2)
    >>> stats = sufficient_statistics(family("multinomial_nb"), X, y)
    >>> stats["feature_count"].values.tolist(), stats.attrs["dask_chunks"]
    ([[2.0, 2.0, 1.0], [1.0, 1.0, 3.0]], 2)
    """
    import dask

    if classes is not None:
        classes = check_classes(classes)
    chunks = row_chunks(X, y, sample_weight)
    n_chunks = len(chunks.X)
    chunk = dask.delayed(_chunk_statistics)
    level = [
        chunk(family, index, n_chunks, chunks.bounds[index], blocks, labels, weights, classes,
              feature_names, options)
        for index, (blocks, labels, weights) in enumerate(chunks)
    ]  # fmt: skip
    (statistics,) = dask.compute(tree_reduce(level, functools.partial(_merge_all, family)))
    return finish_statistics(statistics, n_chunks, sample_weight=sample_weight, classes=classes)


def fit(family, X, y, **options) -> xr.Dataset:
    """A closed-form fit (:mod:`bayesgen.closed_form`) of Dask X and y: the statistics by
    :func:`sufficient_statistics`, then the family's ``from_statistics`` at the prior's
    options (``alpha``, ``class_alpha``, ``prior``, ``prior_mean``); the rest go to the
    statistics.

    Examples
    --------
    The same answer as :func:`bayesgen.closed_form.multinomial_nb` on the NumPy arrays:

    >>> import dask.array as da
    >>> import numpy as np
    >>> from bayesgen.input.distributed import fit
    >>> from bayesgen.families import family
    >>> X = da.from_array(np.array([[1, 1, 0], [1, 1, 0], [1, 1, 1], [0, 0, 3]]), chunks=(2, 3))
    >>> y = da.from_array(np.array([1, 0, 0, 1]), chunks=2)
    >>> est = fit(family("multinomial_nb"), X, y, alpha=0)
    >>> est["feature_prob"].sel({"class": 1}).values.tolist()
    [0.2, 0.2, 0.6]
    """
    prior = {name: options.pop(name) for name in _PRIOR_OPTIONS if name in options}
    for name in ("alpha", "class_alpha"):  # before any chunk is read
        # one λ per class (an array) is checked against the classes, once they are counted
        if name in prior and np.ndim(prior[name]) == 0:
            check_smoothing(prior[name], name)
    statistics = sufficient_statistics(family, X, y, **options)
    estimates = family.from_statistics(statistics, **prior)
    estimates.attrs["dask_chunks"] = statistics.attrs["dask_chunks"]
    return estimates


# -- the graph's tasks (run on the workers) ---------------------------------------------------


def _chunk_statistics(
    family, index, n_chunks, bounds, blocks, y, sample_weight, classes, feature_names, options
):
    """One row chunk's statistics, or None for a chunk without rows of positive weight."""
    with naming_chunk(index, n_chunks, bounds):
        return chunk_statistics(
            family, join_columns(blocks), y, sample_weight, classes, feature_names, options
        )


def chunk_statistics(family, X, y, sample_weight, classes, feature_names, options):
    """The statistics of one in-memory chunk by the family's ``sufficient_statistics`` (its
    own classes where ``classes`` is None), or None where it holds no row of positive weight."""
    if X.shape[0] == 0 and np.size(y) == 0:
        return None
    if _all_zero(sample_weight, X.shape[0]):
        return None  # a chunk may hold only zero weights; the whole input may not
    if classes is None:
        # The chunk's own classes (one is enough); the merge aligns them.
        _, classes = check_labels(y, min_classes=1)
    return family.sufficient_statistics(
        X,
        y,
        feature_names=feature_names,
        sample_weight=sample_weight,
        classes=classes,
        **options,
    )


@contextlib.contextmanager
def naming_chunk(index: int, n_chunks: int, bounds: tuple[int, int] | None):
    """Re-raise a TypeError or ValueError of a chunk's task with the chunk named: ``[dask
    chunk i of n, rows a to b]`` after the message (and, where the message counts positions,
    that they count from the chunk's first row)."""
    try:
        yield
    except (TypeError, ValueError) as error:
        rows = "" if bounds is None else f", rows {bounds[0]} to {bounds[1] - 1}"
        message = str(error)
        # The checks number rows within what they see: the chunk.
        local = "; positions count from its first row" if "position" in message else ""
        raise type(error)(f"{message} [dask chunk {index} of {n_chunks}{rows}{local}]") from None


def _merge_all(family, parts: list) -> xr.Dataset | None:
    """Merge the statistics of several chunks (None: a chunk without rows)."""
    parts = [part for part in parts if part is not None]
    return functools.reduce(functools.partial(merge_aligned, family), parts) if parts else None


def merge_aligned(family, first: xr.Dataset, second: xr.Dataset) -> xr.Dataset:
    """The family's ``merge_statistics`` of two chunks' statistics, aligned first on the union
    of their classes (a class without rows has count 0, mean 0, scatter 0)."""
    classes_first, classes_second = first["class"].values, second["class"].values
    if not np.array_equal(classes_first, classes_second):
        kinds = label_kind(classes_first), label_kind(classes_second)
        if kinds[0] != kinds[1]:
            raise TypeError(
                "y: expected labels that are all integers or all strings; got "
                f"{kinds[0]} labels in some dask chunks and {kinds[1]} labels in others."
            )
        union = np.union1d(classes_first, classes_second)
        first = first.reindex({"class": union}, fill_value=0)
        second = second.reindex({"class": union}, fill_value=0)
    return family.merge_statistics(first, second)


def tree_reduce(parts: list, merge):
    """One Delayed: ``merge`` (a list of parts → one part) applied in a tree, ``SPLIT_EVERY``
    parts per task, over the Delayed ``parts`` (at least one)."""
    import dask

    merge = dask.delayed(merge)
    level = list(parts)
    while len(level) > 1:
        level = [
            merge(level[start : start + SPLIT_EVERY]) for start in range(0, len(level), SPLIT_EVERY)
        ]
    return level[0]


def finish_statistics(statistics, n_chunks: int, *, sample_weight, classes=None) -> xr.Dataset:
    """The reduced statistics as :func:`sufficient_statistics` returns them: refused where no
    row was left, the empty classes dropped (unless ``classes`` named them)."""
    if statistics is None:
        if sample_weight is not None:
            raise ValueError(
                "sample_weight: all weights are zero, so no row is left to fit; give at least "
                "one row a weight > 0."
            )
        raise ValueError("X: expected at least one row; every chunk of the dask input is empty.")
    if classes is None:
        statistics = _drop_empty_classes(statistics, weighted=sample_weight is not None)
    statistics.attrs["dask_chunks"] = n_chunks
    return statistics


# -- splitting the input into row chunks (on the client) --------------------------------------


@dataclass(frozen=True)
class RowChunks:
    """Dask X, y and ``sample_weight`` cut into X's row chunks, as Delayed pieces.

    Iterating gives ``(X blocks, y, sample_weight)`` per chunk: X as the list of its column
    blocks (:func:`join_columns` makes one chunk of them), y and ``sample_weight`` as Delayed,
    arrays or (``sample_weight``) a number or None. Building a graph from the same pieces again
    reads the chunks again: nothing is kept between computes.

    Attributes
    ----------
    X, y, sample_weight : list
        One entry per row chunk.
    bounds : list
        ``(start, stop)`` of each chunk's rows, or None where the sizes are unknown (a Dask
        DataFrame).
    """

    X: list
    y: list
    sample_weight: list
    bounds: list

    def __iter__(self):
        return iter(zip(self.X, self.y, self.sample_weight, strict=True))


def row_chunks(X, y, sample_weight=None) -> RowChunks:
    """Cut Dask X (and y, ``sample_weight``) into X's row chunks.

    Raises
    ------
    TypeError, ValueError
        For X that is not a 2-D Dask array or DataFrame, and y or ``sample_weight`` not split
        like X (as :func:`sufficient_statistics`).
    """
    x_blocks, bounds = _row_blocks(X)
    y_blocks = _split_like("y", y, bounds, len(x_blocks))
    if sample_weight is None or _is_number(sample_weight):
        weight_blocks = [sample_weight] * len(x_blocks)
    else:
        weight_blocks = _split_like("sample_weight", sample_weight, bounds, len(x_blocks))
    return RowChunks(x_blocks, y_blocks, weight_blocks, bounds)


def _row_blocks(X) -> tuple[list, list]:
    """X's row chunks (each a list of its column blocks, as Delayed) and their row bounds
    ``(start, stop)`` (None where the chunk sizes are unknown)."""
    import dask.array as da
    import dask.dataframe as dd

    if isinstance(X, dd.DataFrame):
        blocks = [[part] for part in X.to_delayed()]
        return blocks, [None] * len(blocks)
    if not isinstance(X, da.Array):
        raise TypeError(
            "X: expected a dask.array.Array or dask.dataframe.DataFrame with a Dask y or "
            f"sample_weight; got {type(X).__name__}. Pass X as a Dask collection split into "
            "row chunks, or compute y and sample_weight first."
        )
    if X.ndim != 2:
        raise ValueError(f"X: expected a 2-D dask array; got {X.ndim} dimensions.")
    grid = X.to_delayed()
    blocks = [list(row) for row in grid]
    sizes = X.chunks[0]
    if any(np.isnan(size) for size in sizes):
        return blocks, [None] * len(blocks)
    stops = np.cumsum(sizes)
    return blocks, [(int(stop - size), int(stop)) for size, stop in zip(sizes, stops, strict=True)]


def _split_like(name: str, values, bounds: list, n_chunks: int) -> list:
    """y or ``sample_weight`` cut into X's row chunks."""
    import dask.array as da
    import dask.dataframe as dd

    if isinstance(values, dd.DataFrame):
        if len(values.columns) != 1:
            raise ValueError(
                f"{name}: expected a 1-D dask array or Series; got a dask DataFrame with "
                f"{len(values.columns)} columns."
            )
        values = values[values.columns[0]]
    if isinstance(values, dd.Series):
        parts = values.to_delayed()
    elif isinstance(values, da.Array):
        if values.ndim == 2 and values.shape[1] == 1:
            values = values[:, 0]  # a column vector, as in memory (fit warns)
        if values.ndim != 1:
            raise ValueError(f"{name}: expected a 1-D dask array; got shape {values.shape}.")
        known = None not in bounds and not any(np.isnan(size) for size in values.chunks[0])
        if known:
            n_rows = bounds[-1][1] if bounds else 0
            if values.shape[0] != n_rows:
                raise ValueError(
                    f"X and {name} must have the same number of samples; got X with {n_rows} "
                    f"rows and {name} with {values.shape[0]} values."
                )
            values = values.rechunk((tuple(stop - start for start, stop in bounds),))
        parts = list(values.to_delayed())
    elif is_dask_collection(values):
        raise TypeError(
            f"{name}: expected a dask array or Series split like X; got {type(values).__name__}."
        )
    else:
        return _split_in_memory(name, values, bounds)
    if len(parts) != n_chunks:
        raise ValueError(
            f"{name}: expected {n_chunks} chunks, one per row chunk of X (a dask array or "
            f"Series split like X); got {len(parts)} chunks."
        )
    return parts


def _split_in_memory(name: str, values, bounds: list) -> list:
    if None in bounds:
        raise TypeError(
            f"{name}: X's row chunks have unknown sizes (a dask DataFrame), so an in-memory "
            f"{name} cannot be split like it; pass {name} as a dask Series or array with X's "
            "partitions (e.g. a column of the same DataFrame)."
        )
    if isinstance(values, pd.Series | pd.DataFrame):
        values = values.to_numpy()
    values = np.asarray(values)
    n_rows = bounds[-1][1] if bounds else 0
    if values.ndim == 0 or values.shape[0] != n_rows:
        got = "a single value" if values.ndim == 0 else f"{values.shape[0]} values"
        raise ValueError(
            f"X and {name} must have the same number of samples; got X with {n_rows} rows and "
            f"{name} with {got}."
        )
    return [values[start:stop] for start, stop in bounds]


# -- small helpers ----------------------------------------------------------------------------


def join_columns(blocks: list):
    """One row chunk from its column blocks: dense, scipy.sparse, a DataFrame partition, or a
    block with ``tocsr()`` (``sparse.COO``), which becomes CSR."""
    blocks = [_as_scipy(block) for block in blocks]
    if len(blocks) == 1:
        return blocks[0]
    if any(sp.issparse(block) for block in blocks):
        return sp.hstack(blocks, format="csr")
    return np.concatenate([np.asarray(block) for block in blocks], axis=1)


def _as_scipy(block):
    if sp.issparse(block) or isinstance(block, np.ndarray | pd.DataFrame):
        return block
    if hasattr(block, "tocsr"):
        return block.tocsr()
    return block


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _all_zero(sample_weight, n_rows: int) -> bool:
    """Whether a chunk's weights (of the right shape) are all exactly zero."""
    if sample_weight is None:
        return False
    if _is_number(sample_weight):
        return sample_weight == 0
    try:
        weights = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError):
        return False  # the chunk's checks name the problem
    return weights.shape == (n_rows,) and n_rows > 0 and not np.any(weights)


def _drop_empty_classes(statistics: xr.Dataset, *, weighted: bool) -> xr.Dataset:
    """Keep the classes with positive weight (as the in-memory fit, which never sees the
    others), refusing fewer than two with the in-memory message."""
    present = statistics["class_count"].values > 0
    if not np.all(present):
        statistics = statistics.isel({"class": np.flatnonzero(present)})
    labels = statistics["class"].values
    if labels.size < 2:
        among = " among the rows with sample_weight > 0" if weighted else ""
        raise ValueError(
            "y: a classifier needs at least two classes; got only one class "
            f"{labels[0].item()!r}{among}."
        )
    return statistics
