"""Class labels: checked and encoded as integer codes, with messages that name the problem."""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd


def check_labels(y, *, min_classes: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Validate class labels and encode them as integer codes.

    Labels must be all integers (or integer-valued floats), all strings or all booleans. A
    column vector of shape (n_samples, 1) is accepted as it is; warning about it (as
    scikit-learn's ``DataConversionWarning``) is left to the caller. ``min_classes=1`` accepts
    one class (a chunk of ``partial_fit``, whose classes were given up front).

    Returns
    -------
    codes : ndarray of int64, shape (n_samples,)
    classes : ndarray of shape (n_classes,)
        The sorted distinct labels.

    Raises
    ------
    ValueError, TypeError
        For missing labels, a mix of label types, bytes, NUL characters, continuous values,
        more than one column, or fewer than ``min_classes`` classes.

    Examples
    --------
    >>> from bayesgen.input.data import check_labels
    >>> codes, classes = check_labels(["spam", "ham", "ham", "spam"])
    >>> codes.tolist(), classes.tolist()
    ([1, 0, 0, 1], ['ham', 'spam'])
    >>> check_labels(["spam", "spam"])
    Traceback (most recent call last):
        ...
    ValueError: y: ...
    """
    if y is None:
        # ValueError with scikit-learn's words, which its estimator checks look for.
        raise ValueError(
            "y: expected class labels (array, Series or list); got None (a classifier "
            "requires y to be passed, but the target y is None)."
        )
    if isinstance(y, pd.Series | pd.Index | pd.DataFrame):
        values = y.to_numpy()
    elif isinstance(y, np.ndarray):
        values = y
    else:
        # Not np.asarray(y): it would turn [1, "1"] into two equal strings, and "x\0" into "x".
        try:
            values = np.asarray(y, dtype=object)
        except ValueError as error:  # ragged nested lists
            raise ValueError(f"y: expected a 1-D sequence of class labels; got {error}") from None
    if values.ndim == 2 and values.shape[1] == 1:
        values = values.ravel()
    if values.ndim == 0:
        raise ValueError(
            f"y: expected a 1-D array of class labels; got a single {type(y).__name__} value."
        )
    if values.ndim != 1:
        detail = " (multi-output targets are not supported)" if values.ndim == 2 else ""
        raise ValueError(
            f"y: expected a 1-D array of class labels{detail}; got shape {values.shape}."
        )
    if values.size == 0:
        raise ValueError("y: expected at least one label per sample; got an empty y.")
    if values.dtype.kind == "O":
        values = _object_labels(values)
    if values.dtype.kind == "f":
        values = _float_labels(values)
    if values.dtype.kind == "S":
        raise TypeError(
            f"y: expected integer or string labels; got bytes (dtype {values.dtype}). Decode "
            "them first, e.g. y.astype(str)."
        )
    if values.dtype.kind == "U":
        check_no_nul(values, "y", "labels")
    if values.dtype.kind not in "biuU":
        raise TypeError(
            f"y: expected integer or string labels; got dtype {values.dtype}"
            + (" (Unknown label type)." if values.dtype.kind == "c" else ".")
        )
    classes, codes = np.unique(values, return_inverse=True)
    if classes.size < min_classes:
        raise ValueError(
            f"y: a classifier needs at least two classes; got only one class {classes[0].item()!r}."
        )
    return codes.astype(np.int64), classes


def _object_labels(values: np.ndarray) -> np.ndarray:
    """Labels of an object array as a typed array, refusing anything that would merge classes."""
    missing = np.flatnonzero(pd.isna(values))
    if missing.size:
        raise _missing_labels(missing)
    kinds = {type(v) for v in values}
    if all(issubclass(k, str) for k in kinds):
        check_no_nul(values, "y", "labels")
        return values.astype(str)
    if all(issubclass(k, bool | np.bool_) for k in kinds):
        return values.astype(bool)
    # bool is an int subclass: True and 1 would silently become one class.
    numeric = not any(issubclass(k, bool | np.bool_) for k in kinds) and all(
        issubclass(k, numbers.Real) for k in kinds
    )
    if numeric and all(issubclass(k, numbers.Integral) for k in kinds):
        try:
            return values.astype(np.int64)
        except OverflowError:
            raise ValueError(
                "y: expected integer labels that fit in 64 bits; got larger integers."
            ) from None
    if numeric:
        return values.astype(np.float64)
    if all(issubclass(k, bytes) for k in kinds):
        raise TypeError(
            "y: expected integer or string labels; got bytes. Decode them first, e.g. "
            "[label.decode() for label in y]."
        )
    names = sorted({k.__name__ for k in kinds})
    got = f"a mix of {names}" if len(names) > 1 else f"labels of type {names[0]}"
    raise TypeError(f"y: expected labels that are all integers or all strings; got {got}.")


def _float_labels(values: np.ndarray) -> np.ndarray:
    """Integer-valued float labels as int64; NaN is a missing label, anything else continuous."""
    missing = np.flatnonzero(np.isnan(values))
    if missing.size:
        raise _missing_labels(missing)
    integral = np.isfinite(values) & (values == np.round(values)) & (np.abs(values) < 2.0**63)
    if not np.all(integral):
        bad = values[~integral][:3].tolist()
        raise ValueError(
            "y: expected class labels (integers or strings); got non-integer floats "
            f"(continuous values such as {bad}). For regression targets use a regression model."
        )
    return values.astype(np.int64)


def _missing_labels(positions: np.ndarray) -> ValueError:
    shown = positions[:10].tolist()
    more = f" and {positions.size - 10} more" if positions.size > 10 else ""
    return ValueError(
        f"y: missing labels (None/NaN) at positions {shown}{more}. Drop those samples or give "
        "them a label; an estimator's fit(X, y) (not partial_fit, nor the closed_form "
        "functions) takes them as unlabelled rows (see docs, semi-supervised)."
    )


def unlabelled_rows(y, *, unlabelled_label=None) -> np.ndarray:
    """Which rows of ``y`` are unlabelled: a mask for a semi-supervised fit.

    A row is unlabelled where its label is missing (None, NaN or ``pd.NA``: always) or equals
    ``unlabelled_label`` where one is given: ``-1`` for integer labels, as
    ``sklearn.semi_supervised`` marks them, or a string such as ``""`` for string labels. A
    marker is never implied, because ``-1`` is an ordinary class wherever labels are -1 and 1
    (scikit-learn's own estimator checks fit such labels). A marker of one kind never matches
    a label of the other (``-1`` is not ``"-1"``), nor does a boolean match an integer.

    Parameters
    ----------
    y : array-like of shape (n_samples,) or (n_samples, 1)
        The labels as :func:`check_labels` takes them.
    unlabelled_label : int, str or None, default None
        The label that marks an unlabelled row besides None/NaN.

    Returns
    -------
    numpy.ndarray of bool, shape (n_samples,)
        True for an unlabelled row. Anything else about ``y`` is left to
        :func:`check_labels` on the labelled rows.

    Raises
    ------
    TypeError
        For an ``unlabelled_label`` that is neither an integer nor a string.

    Examples
    --------
    >>> import numpy as np
    >>> unlabelled_rows(["ham", None, "spam", np.nan]).tolist()
    [False, True, False, True]
    >>> unlabelled_rows([0, 1, -1, 1], unlabelled_label=-1).tolist()
    [False, False, True, False]
    >>> unlabelled_rows(["ham", "", "spam"], unlabelled_label="").tolist()
    [False, True, False]
    """
    marker_is_int = isinstance(unlabelled_label, numbers.Integral) and not isinstance(
        unlabelled_label, bool | np.bool_
    )
    if unlabelled_label is not None and not (marker_is_int or isinstance(unlabelled_label, str)):
        raise TypeError(
            "unlabelled_label: expected an integer (e.g. -1, scikit-learn's marker), a string "
            f"(e.g. '') or None; got {unlabelled_label!r}."
        )
    values = y.to_numpy() if isinstance(y, pd.Series | pd.Index | pd.DataFrame) else y
    try:
        values = values if isinstance(values, np.ndarray) else np.asarray(values, dtype=object)
    except ValueError:  # ragged: check_labels says what is wrong with it
        return np.zeros(len(y), dtype=bool)
    if values.ndim == 2 and values.shape[1] == 1:
        values = values.ravel()
    if values.ndim != 1:  # check_labels refuses it, naming the shape
        return np.zeros(values.shape[:1], dtype=bool)
    if values.dtype.kind in "Of":  # only these hold a missing label
        unlabelled = np.asarray(pd.isna(values), dtype=bool)
    else:
        unlabelled = np.zeros(values.shape, dtype=bool)
    if unlabelled_label is None:
        return unlabelled
    if values.dtype.kind == "O":
        matches = np.fromiter(
            (_is_marker(value, unlabelled_label, marker_is_int) for value in values),
            dtype=bool,
            count=values.size,
        )
    elif values.dtype.kind in "iuf" and marker_is_int:
        matches = values == unlabelled_label
    elif values.dtype.kind == "U" and not marker_is_int:
        matches = values == unlabelled_label
    else:
        matches = np.zeros(values.shape, dtype=bool)
    return unlabelled | matches


def _is_marker(value, marker, marker_is_int: bool) -> bool:
    """Whether one object label is the marker, of the same kind (never True for 1, "-1" for -1)."""
    if isinstance(value, bool | np.bool_):
        return False
    if marker_is_int:
        return isinstance(value, numbers.Real) and value == marker
    return isinstance(value, str) and value == marker


def check_no_nul(values, name: str, what: str) -> None:
    """Refuse the NUL character: NumPy strings and saved files drop trailing NULs, so "x\\0"
    would silently become "x" (and merge with it); and lone surrogates, which are not text."""
    for position, value in enumerate(values):
        if "\0" in value:
            raise ValueError(
                f"{name}: {what} must not contain the NUL character '\\0'; got {str(value)!r} at "
                f"position {position}."
            )
    try:  # a lone surrogate (bytes decoded with errors="surrogateescape") is not Unicode text:
        "".join(values).encode("utf-8")  # pandas and model files would fail on it later
    except UnicodeEncodeError:
        position, value = next(
            (i, v) for i, v in enumerate(values) if any("\ud800" <= c <= "\udfff" for c in v)
        )
        raise ValueError(
            f"{name}: {what} must be Unicode text; got {str(value)!r} at position {position}, "
            "which holds a lone surrogate (half of a UTF-16 pair); decode its bytes with the "
            "right encoding."
        ) from None


def label_kind(labels: np.ndarray) -> str:
    """ "int", "str" or "bool": labels of different kinds never match (a class 1 is not a class
    "1"). Object arrays hold strings here: :func:`check_labels` turns every other object label
    into a number or a string first.

    Examples
    --------
    >>> import numpy as np
    >>> label_kind(np.array(["ham", "spam"])), label_kind(np.array([0, 1]))
    ('str', 'int')
    >>> label_kind(np.array([True, False]))
    'bool'
    """
    return {"b": "bool", "U": "str", "O": "str"}.get(labels.dtype.kind, "int")
