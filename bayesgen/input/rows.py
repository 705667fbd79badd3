"""The rows of user data split, taken and stacked in their own types: a DataFrame or Series (by
position), a sparse matrix (as CSR), an array, or a list (as an array).

A semi-supervised fit (:mod:`bayesgen.inference.semi_supervised`) splits its training data into
the labelled and the unlabelled rows (:func:`split_rows`), stacks the unlabelled rows once per
class (:func:`stack_rows`) and completes the labelled rows with drawn labels
(:func:`concatenate_rows`); a Dask chunk's task does the same to its chunk.

Examples
--------
>>> import numpy as np
>>> split = split_rows(np.array([[1, 0], [0, 1], [2, 2]]), ["a", None, "b"],
...                    np.array([False, True, False]))
>>> split.X_unlabelled.tolist(), list(split.y_labelled)
([[0, 1]], ['a', 'b'])
>>> stack_rows(np.array([[1, 2]]), 3).tolist()
[[1, 2], [1, 2], [1, 2]]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp


@dataclass(frozen=True)
class LabelSplit:
    """The training data split into its labelled and unlabelled rows (in their own types).

    Attributes
    ----------
    unlabelled : numpy.ndarray of bool, shape (n_samples,)
        True for an unlabelled row.
    X_labelled, y_labelled, weight_labelled
        The labelled rows, their labels and ``sample_weight`` (None where none was given).
    X_unlabelled, weight_unlabelled
        The unlabelled rows and their ``sample_weight``.
    """

    unlabelled: np.ndarray
    X_labelled: object
    y_labelled: object
    weight_labelled: np.ndarray | None
    X_unlabelled: object
    weight_unlabelled: np.ndarray | None


def split_rows(X, y, unlabelled: np.ndarray, sample_weight=None) -> LabelSplit:
    """Split X, y and ``sample_weight`` by the mask ``unlabelled``
    (:func:`bayesgen.input.labels.unlabelled_rows`): what a semi-supervised fit fits.

    Raises
    ------
    ValueError
        Naming ``y``: X and y of different lengths, every row unlabelled, or the labelled
        rows holding fewer than two classes (every class needs a labelled row: the classes
        are those of the labelled rows).
    """
    n_rows = _n_rows(X)
    if n_rows is not None and n_rows != unlabelled.size:
        raise ValueError(
            f"X and y must have the same number of samples; got X with {n_rows} rows and y "
            f"with {unlabelled.size} labels."
        )
    if unlabelled.all():
        raise ValueError(
            f"y: all {unlabelled.size} rows are unlabelled (None/NaN or unlabelled_label); a "
            "semi-supervised fit needs labelled rows of at least two classes, which name the "
            "classes."
        )
    labelled_index, unlabelled_index = np.flatnonzero(~unlabelled), np.flatnonzero(unlabelled)
    y_labelled = take_rows(flat_labels(y), labelled_index)
    distinct = pd.unique(np.asarray(y_labelled, dtype=object))
    if distinct.size < 2:
        raise ValueError(
            f"y: the labelled rows hold only one class, {distinct[0]!r} "
            f"({unlabelled.sum()} rows are unlabelled); a semi-supervised fit needs labelled "
            "rows of at least two classes. A class with no labelled row cannot be learnt: its "
            "rows would be a cluster without a name."
        )
    weights = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if weights is not None and weights.ndim == 0:  # one number weighs every row alike
        weights = np.full(unlabelled.size, float(weights))
    if weights is not None and weights.shape != unlabelled.shape:
        raise ValueError(
            f"sample_weight: expected shape ({unlabelled.size},), one weight per row of X; got "
            f"shape {weights.shape}."
        )
    return LabelSplit(
        unlabelled,
        take_rows(X, labelled_index),
        y_labelled,
        None if weights is None else weights[labelled_index],
        take_rows(X, unlabelled_index),
        None if weights is None else weights[unlabelled_index],
    )


def take_rows(data, index: np.ndarray):
    """The rows ``index`` of user data in its own type: a DataFrame or Series (by position), a
    sparse matrix (as CSR), an array, or a list (as an array)."""
    if isinstance(data, pd.DataFrame | pd.Series):
        return data.iloc[index]
    if sp.issparse(data):
        return sp.csr_array(data)[index] if isinstance(data, sp.sparray) else data.tocsr()[index]
    if isinstance(data, np.ndarray):
        return data[index]
    return np.asarray(data, dtype=object if _holds_text(data) else None)[index]


def stack_rows(data, times: int):
    """The rows of ``data`` repeated ``times`` times, one whole copy after the other."""
    if isinstance(data, pd.DataFrame | pd.Series):
        return pd.concat([data] * times, ignore_index=True)
    if sp.issparse(data):
        return sp.csr_array(sp.vstack([data] * times, format="csr"))
    array = np.asarray(data)
    return np.concatenate([array] * times, axis=0)


def concatenate_rows(first, second):
    """The rows of ``first`` followed by those of ``second``, both of one type (as
    :func:`take_rows` returns them)."""
    if isinstance(first, pd.DataFrame | pd.Series):
        return pd.concat([first, second], ignore_index=True)
    if sp.issparse(first):
        return sp.csr_array(sp.vstack([first, second], format="csr"))
    return np.concatenate([np.asarray(first), np.asarray(second)], axis=0)


def flat_labels(y):
    """y of shape (n, 1) as (n,) (the caller has warned about the column vector)."""
    if isinstance(y, pd.DataFrame) and y.shape[1] == 1:
        return y.iloc[:, 0]
    if isinstance(y, np.ndarray) and y.ndim == 2 and y.shape[1] == 1:
        return y.ravel()
    if isinstance(y, list | tuple):
        values = np.empty(len(y), dtype=object)
        values[:] = [v[0] if isinstance(v, list | tuple) and len(v) == 1 else v for v in y]
        return values
    return y


def _holds_text(data) -> bool:
    try:
        return np.asarray(data).dtype.kind in "OUS"
    except ValueError:
        return True


def _n_rows(X) -> int | None:
    try:
        return X.shape[0] if hasattr(X, "shape") else len(X)
    except TypeError:
        return None


__all__ = [
    "LabelSplit",
    "concatenate_rows",
    "flat_labels",
    "split_rows",
    "stack_rows",
    "take_rows",
]
