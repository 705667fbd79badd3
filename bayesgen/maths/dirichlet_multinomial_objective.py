"""The objective of the Dirichlet compound multinomial's point fit, laid out for Newton's method.

F(s, m) = log p(X | y, s, m) + log p(s) + log p(m) (see
:func:`bayesgen.maths.dirichlet_multinomial.log_objective`) over the precisions s_k and the
free coordinates of m. :func:`build_problem` sorts the histograms' entries by (class, word)
cell once, in the exceedance form the numba kernels read
(:func:`~bayesgen.maths.dirichlet_multinomial_kernels.exceedance_pairs`), and records the
prior; :func:`evaluate` gives F of each group and the digamma and trigamma sums at a
:class:`Point`, in one pass over the entries. The Newton iterations that use them are
:mod:`bayesgen.maths.dirichlet_multinomial_fit`.

A *coordinate* is one free value of m: a cell (means per class) or a word (a shared mean); a
*group* is the coordinates that sum to 1 with their unseen words (a class, or all of them).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from types import ModuleType

    from bayesgen.maths.dirichlet_multinomial import CountHistograms

__all__ = [
    "Evaluation",
    "Point",
    "Problem",
    "Sums",
    "build_problem",
    "evaluate",
    "exceedance_sums",
    "kernels",
    "rising_sums",
    "starts",
]


@functools.cache
def kernels() -> ModuleType:
    """:mod:`bayesgen.maths.dirichlet_multinomial_kernels`, imported on first use (numba)."""
    from bayesgen.maths import dirichlet_multinomial_kernels  # heavy: numba

    return dirichlet_multinomial_kernels


class Problem(NamedTuple):
    """What the search keeps fixed: the entries by (class, word) cell, and the prior.

    A *coordinate* is one free value of m: a cell (means per class) or a word (shared); a
    *group* is the coordinates that sum to 1 with its unseen words, ρ Σ (c_w − 1) (a class,
    or all of them). Cells and coordinates are sorted by class and group.
    """

    cell_class: np.ndarray
    class_cell_start: np.ndarray
    cell_coordinate: np.ndarray
    coordinate_cells: np.ndarray
    coordinate_cell_start: np.ndarray
    cell_count: np.ndarray
    words: Sums
    lengths: Sums
    coordinate_feature: np.ndarray
    coordinate_extra: np.ndarray
    coordinate_start: np.ndarray
    coordinate_group: np.ndarray
    class_group: np.ndarray
    unseen_extra: np.ndarray
    unseen_constant: np.ndarray
    free: np.ndarray
    moving: np.ndarray
    shape: float
    rate: float
    shared: bool


class Sums(NamedTuple):
    """The entries of the segments (cells, or classes' lengths) in the exceedance form of
    :func:`~bayesgen.maths.dirichlet_multinomial_kernels.exceedance_pairs`."""

    base: np.ndarray
    class_segment_start: np.ndarray
    pair_segment: np.ndarray
    pair_offset: np.ndarray
    pair_weight: np.ndarray
    class_pair_start: np.ndarray
    other_segment: np.ndarray
    other_level: np.ndarray
    other_weight: np.ndarray
    segment_class: np.ndarray


def exceedance_sums(start, level, weight, segment_class, n_classes):
    """The :class:`Sums` of the segments [start[i], start[i + 1]) (sorted by class), and
    each one's weight."""
    base, pair_segment, pair_offset, pair_weight, other, other_segment, segment_weight = (
        kernels().exceedance_pairs(start, level, weight)
    )
    sums = Sums(
        base,
        starts(segment_class, n_classes),
        pair_segment,
        pair_offset,
        pair_weight,
        starts(segment_class[pair_segment], n_classes),
        other_segment,
        level[other],
        weight[other],
        segment_class,
    )
    return sums, segment_weight


def rising_sums(sums: Sums, alpha: np.ndarray, n_classes: int, value: bool):
    """Σ w [lnΓ(α + c) − lnΓ(α)] of each class (0 unless ``value``), and the digamma and
    trigamma sums of each segment."""
    first, second, factor = kernels().pair_sums(
        alpha, sums.base, sums.pair_segment, sums.pair_offset, sums.pair_weight
    )
    other = kernels().other_sums(
        alpha,
        sums.other_segment,
        sums.other_level,
        sums.other_weight,
        sums.segment_class,
        first,
        second,
        n_classes,
    )
    if value:
        other += kernels().weighted_group_sums(sums.base, np.log(alpha), sums.class_segment_start)
        other += kernels().weighted_group_sums(
            sums.pair_weight, np.log(factor), sums.class_pair_start
        )
    return other, first, second


class Point(NamedTuple):
    concentration: np.ndarray  # s, (K,)
    coordinates: np.ndarray  # m at the coordinates, (P,)
    unseen: np.ndarray  # ρ of each group, (G,)


class Evaluation(NamedTuple):
    value: np.ndarray  # F of each group
    scale: np.ndarray  # the size of F's terms of each group (its rounding's scale)
    word_first: np.ndarray  # A: ψ(α + c) − ψ(α) summed over each cell's entries
    word_second: np.ndarray  # −Q > 0: ψ'(α) − ψ'(α + c) likewise
    length_first: np.ndarray  # B of each class
    length_second: np.ndarray  # Z > 0 of each class


def _sorted_entries(cells: np.ndarray, *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """``cells`` and the entries' ``arrays`` (level last) by cell, levels increasing within a
    cell (made so where they are not)."""
    level = arrays[-1]
    if cells.size and (
        np.any(cells[1:] < cells[:-1])
        or np.any((cells[1:] == cells[:-1]) & (level[1:] < level[:-1]))
    ):
        order = np.lexsort((level, cells))
        return tuple(array[order] for array in (cells, *arrays))
    return (cells, *arrays)


def starts(sorted_key: np.ndarray, n_keys: int) -> np.ndarray:
    """Where each key's run begins in ``sorted_key``, and its end: (n_keys + 1,)."""
    return np.searchsorted(sorted_key, np.arange(n_keys + 1)).astype(np.int64)


def build_problem(histograms: CountHistograms, shared: bool, shape, rate, extra) -> Problem:
    n_classes, n_features = histograms.n_classes, histograms.n_features
    cells, word_class, word_feature, weight, level = _sorted_entries(
        histograms.word_class * n_features + histograms.word_feature,
        histograms.word_class,
        histograms.word_feature,
        histograms.word_weight,
        histograms.word_level,
    )
    first = np.flatnonzero(np.r_[True, cells[1:] != cells[:-1]]) if cells.size else cells
    cell_class, cell_feature = word_class[first], word_feature[first]
    length_class, length_weight, length_level = _sorted_entries(
        histograms.length_class, histograms.length_weight, histograms.length_level
    )
    entry_start = np.append(first, cells.size).astype(np.int64)
    words, cell_count = exceedance_sums(entry_start, level, weight, cell_class, n_classes)
    lengths, _ = exceedance_sums(
        starts(length_class, n_classes),
        length_level,
        length_weight,
        np.arange(n_classes),
        n_classes,
    )
    positive = extra > 0
    extra_log_extra = np.where(positive, extra * np.log(np.where(positive, extra, 1.0)), 0.0)
    if shared:
        unseen = np.bincount(cell_feature, minlength=n_features) == 0
        coordinate_feature = np.flatnonzero(~unseen)
        cell_coordinate = np.searchsorted(coordinate_feature, cell_feature)
        coordinate_group = np.zeros(coordinate_feature.size, dtype=np.int64)
        class_group = np.zeros(n_classes, dtype=np.int64)
        unseen_extra = np.array([extra[unseen].sum()])
        unseen_constant = np.array([extra_log_extra[unseen].sum()])
    else:
        coordinate_feature, cell_coordinate = cell_feature, np.arange(first.size)
        coordinate_group, class_group = cell_class, np.arange(n_classes)
        # Σ over the unseen words as the total less the seen ones; exactly 0 where no unseen
        # word has c > 1.
        unseen_positive = positive.sum() - np.bincount(
            cell_class, positive[cell_feature], minlength=n_classes
        )
        unseen_extra, unseen_constant = (
            np.where(unseen_positive > 0, total - np.bincount(cell_class, part, n_classes), 0.0)
            for total, part in (
                (extra.sum(), extra[cell_feature]),
                (extra_log_extra.sum(), extra_log_extra[cell_feature]),
            )
        )
    # A class that shows no word has nothing to fit.
    free = np.bincount(cell_class, minlength=n_classes) > 0
    return Problem(
        cell_class=cell_class,
        class_cell_start=starts(cell_class, n_classes),
        cell_coordinate=cell_coordinate,
        # The cells of each coordinate (a shared m's system sums over their pairs).
        coordinate_cells=np.argsort(cell_coordinate, kind="stable") if shared else first[:0],
        coordinate_cell_start=(
            starts(np.sort(cell_coordinate), coordinate_feature.size) if shared else first[:0]
        ),
        cell_count=cell_count,
        words=words,
        lengths=lengths,
        coordinate_feature=coordinate_feature,
        coordinate_extra=extra[coordinate_feature],
        coordinate_start=starts(coordinate_group, unseen_extra.size),
        coordinate_group=coordinate_group,
        class_group=class_group,
        unseen_extra=unseen_extra,
        unseen_constant=unseen_constant,
        free=free,
        moving=np.bincount(class_group, free, minlength=unseen_extra.size) > 0,
        shape=float(shape),
        rate=float(rate),
        shared=shared,
    )


def evaluate(problem: Problem, point: Point, *, value: bool = True) -> Evaluation:
    """F of each group (where ``value``) and the digamma and trigamma sums at ``point``."""
    s, m, rho = point
    n_classes, n_groups = s.size, rho.size
    alpha = s[problem.cell_class] * m[problem.cell_coordinate]
    word_value, word_first, word_second = rising_sums(problem.words, alpha, n_classes, value)
    length_value, length_first, length_second = rising_sums(problem.lengths, s, n_classes, value)
    if not value:
        empty = np.zeros(n_groups)
        return Evaluation(empty, empty, word_first, word_second, length_first, length_second)
    with np.errstate(divide="ignore", invalid="ignore"):
        class_value = word_value - length_value + (problem.shape - 1.0) * np.log(s)
        unseen_value = problem.unseen_extra * np.log(rho)
    class_value = np.where(problem.free, class_value - problem.rate * s, 0.0)
    unseen_value = np.where(problem.unseen_extra > 0, unseen_value, 0.0)
    # Σ (c − 1) log m (of no use under a flat prior); each term ≤ 0, so it is its own size.
    mean_value = (
        kernels().weighted_group_sums(problem.coordinate_extra, np.log(m), problem.coordinate_start)
        if problem.coordinate_extra.any()
        else np.zeros(n_groups)
    )
    group_value = (
        np.bincount(problem.class_group, class_value, minlength=n_groups)
        + mean_value
        + unseen_value
        + problem.unseen_constant
    )
    size = np.where(problem.free, np.abs(word_value) + np.abs(length_value), 0.0)
    scale = np.bincount(problem.class_group, size, minlength=n_groups) + np.abs(mean_value)
    return Evaluation(group_value, scale, word_first, word_second, length_first, length_second)
