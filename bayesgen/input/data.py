"""Input validation: user X and y in, checked arrays with class and feature names out.

Every error names the argument, what was expected and what came, so that a user never sees a
traceback from deep inside NumPy or PyTensor. Sparse matrices stay sparse on the naive Bayes
paths: the checks below only ever look at the stored non-zeros.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp

from bayesgen.input.labels import check_labels, check_no_nul
from bayesgen.input.text import vectorize_text as vectorize_text  # re-exported: its old home

FeatureKind = Literal["real", "count", "binary", "categorical"]
#: Whether a model takes missing entries (True), or why it does not (a reason, or False).
Missing = bool | str

_KIND_DESCRIPTION = {
    "real": "real-valued features",
    "count": "non-negative counts or weights (e.g. a bag-of-words or TF-IDF matrix)",
    "binary": "binary 0/1 features",
    "categorical": "non-negative integer category codes",
}


@dataclass(frozen=True)
class TrainingData:
    """Validated training data.

    Attributes
    ----------
    X : ndarray or scipy.sparse.csr_array of shape (n_samples, n_features)
        float64 features; sparse input stays sparse except for ``kind="real"``.
    y : ndarray of shape (n_samples,)
        Integer class codes, ``classes[y]`` gives the original labels.
    classes : ndarray of shape (n_classes,)
        Sorted class labels, as scikit-learn's ``classes_``.
    feature_names : ndarray of shape (n_features,)
        Feature names (DataFrame columns, a vocabulary, or ``x0, x1, ...``).
    names_given : bool
        Whether the feature names came with the data (DataFrame columns) rather than by default.
    sample_weight : ndarray of shape (n_samples,) or None
        Positive float64 weights of the rows (see :mod:`bayesgen.input.statistics`); None: all 1.

    Examples
    --------
    :func:`check_training_data` returns one:

    >>> from bayesgen.input.data import check_training_data
    >>> data = check_training_data([[1, 0], [0, 2], [3, 1]], [0, 1, 1], kind="count")
    >>> type(data).__name__, data.n_samples, data.n_features, data.names_given
    ('TrainingData', 3, 2, False)
    >>> data.feature_names.tolist()
    ['x0', 'x1']
    """

    X: np.ndarray | sp.csr_array
    y: np.ndarray
    classes: np.ndarray
    feature_names: np.ndarray
    names_given: bool
    sample_weight: np.ndarray | None = None

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]


def check_training_data(
    X, y, *, kind: FeatureKind, binarize: float | None = None, feature_names=None
) -> TrainingData:
    """Validate X and y for fitting a generative classifier.

    Parameters
    ----------
    X : array-like, pandas.DataFrame or scipy.sparse matrix of shape (n_samples, n_features)
        Features. DataFrame column names become the feature names.
    y : array-like, pandas.Series or list of shape (n_samples,)
        Class labels, integers or strings; at least two distinct classes.
    kind : {"real", "count", "binary", "categorical"}
        What the model expects of X.
    binarize : float or None
        For ``kind="binary"``: threshold above which a value counts as 1. ``None`` means X must
        already hold only 0 and 1.
    feature_names : sequence of str, optional
        Names for the columns of X (e.g. a vectorizer's vocabulary for a sparse X); they take
        precedence over DataFrame column names.

    Returns
    -------
    TrainingData

    Raises
    ------
    ValueError, TypeError
        With a message naming the argument, what was expected and what came.

    Examples
    --------
    >>> import pandas as pd
    >>> from bayesgen.input.data import check_training_data
    >>> X = pd.DataFrame({"free": [2, 0, 1], "lunch": [0, 3, 1]})
    >>> data = check_training_data(X, ["spam", "ham", "ham"], kind="count")
    >>> data.y.tolist(), data.classes.tolist(), data.feature_names.tolist()
    ([1, 0, 0], ['ham', 'spam'], ['free', 'lunch'])
    >>> check_training_data([[0.5, 1.0]] * 2, ["a", "b"], kind="binary")
    Traceback (most recent call last):
        ...
    ValueError: X: ...
    """
    X, names, names_given = check_features(X, kind=kind, binarize=binarize)
    if feature_names is not None:
        names, names_given = check_feature_names(feature_names, X.shape[1]), True
    y, classes = check_labels(y)
    if X.shape[0] != y.shape[0]:
        raise ValueError(
            f"X and y must have the same number of samples; got X with {X.shape[0]} rows "
            f"and y with {y.shape[0]} labels."
        )
    return TrainingData(X, y, classes, names, names_given)


def check_feature_names(feature_names, n_features: int) -> np.ndarray:
    """Validate user-given feature names: ``n_features`` distinct strings without NUL.

    Returns
    -------
    ndarray of str, shape (n_features,)
    """
    if isinstance(feature_names, str | bytes) or not isinstance(
        feature_names, Sequence | np.ndarray | pd.Index | pd.Series
    ):
        raise TypeError(
            f"feature_names: expected a sequence of {n_features} strings, one per column of X; "
            f"got {type(feature_names).__name__}."
        )
    shape = np.shape(np.asarray(feature_names, dtype=object))
    if shape != (n_features,):
        got = f"{shape[0]}" if len(shape) == 1 else f"an array of shape {shape}"
        raise ValueError(
            f"feature_names: expected {n_features} names, one per column of X; got {got}."
        )
    names = list(feature_names)
    for position, name in enumerate(names):
        if not isinstance(name, str):
            raise TypeError(
                f"feature_names: expected strings; got {type(name).__name__} {name!r} at "
                f"position {position}."
            )
    check_no_nul(names, "feature_names", "names")
    _check_distinct(names, "feature_names", "names")
    return np.asarray(names, dtype=str)


def _check_distinct(names: list[str], name: str, what: str) -> None:
    counts = pd.Series(names).value_counts(sort=False)
    duplicated = counts.index[counts.to_numpy() > 1].tolist()
    if duplicated:
        raise ValueError(
            f"{name}: expected distinct {what}; got duplicates {duplicated[:10]}"
            + (" ..." if len(duplicated) > 10 else "")
            + "."
        )


def check_binarize(binarize) -> float | None:
    """Validate a binarize threshold: ``None`` or a finite real number (not a bool)."""
    if binarize is None:
        return None
    if isinstance(binarize, bool | np.bool_) or not isinstance(binarize, numbers.Real):
        raise TypeError(
            "binarize: expected a finite real threshold or None; got "
            f"{type(binarize).__name__} {binarize!r}."
        )
    value = float(binarize)
    if not np.isfinite(value):
        raise ValueError(f"binarize: expected a finite real threshold or None; got {value}.")
    return value


def check_features(
    X,
    *,
    kind: FeatureKind,
    binarize: float | None = None,
    name: str = "X",
    missing: Missing = False,
) -> tuple[np.ndarray | sp.csr_array, np.ndarray, bool]:
    """Validate a feature matrix on its own (training or prediction).

    ``missing``: True where the model integrates a missing entry out (NaN, None or pandas'
    ``<NA>``, in a dense X: kept as NaN, every other check made on the observed entries);
    otherwise a NaN is refused, with the reason ``missing`` gives when it is a string.

    Returns
    -------
    X : ndarray or scipy.sparse.csr_array, float64
    feature_names : ndarray of str
    names_given : bool

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.input.data import check_features
    >>> X, names, names_given = check_features(np.array([[1, 0], [2, 3]]), kind="count")
    >>> X.dtype, names.tolist(), names_given
    (dtype('float64'), ['x0', 'x1'], False)
    >>> check_features([[1, -1]], kind="count")
    Traceback (most recent call last):
        ...
    ValueError: X: ...
    """
    binarize = check_binarize(binarize)
    if X is None:
        raise TypeError(f"{name}: expected a 2-D feature matrix; got None.")
    names = None
    if isinstance(X, pd.DataFrame):
        non_numeric = [str(c) for c, t in X.dtypes.items() if not _is_numeric_dtype(t)]
        if non_numeric:
            raise TypeError(
                f"{name}: expected numeric columns; got non-numeric columns {non_numeric[:5]}"
                + (" ..." if len(non_numeric) > 5 else "")
                + ". Encode them first (e.g. CountVectorizer for text, OrdinalEncoder for "
                "categories)."
            )
        columns = [str(c) for c in X.columns]
        check_no_nul(columns, name, "column names")
        _check_distinct(columns, name, "column names")
        names = np.asarray(columns, dtype=str)
        # A new array: nullable columns' <NA> become NaN (refused below as missing values).
        X = X.to_numpy(dtype=np.float64, na_value=np.nan, copy=True)
    if sp.issparse(X):
        X = _check_sparse(X, name=name)
    else:
        X = _check_dense(X, name=name)
    if kind == "real" and sp.issparse(X):
        X = X.toarray()  # GDA needs the scatter matrix, which is dense anyway.
    X = _check_values(X, kind=kind, binarize=binarize, name=name, missing=missing)
    given = names is not None
    if names is None:
        names = _default_feature_names(X.shape[1])
    return X, names, given


def check_prediction_features(
    X,
    *,
    kind: FeatureKind,
    feature_names: np.ndarray,
    names_given: bool,
    binarize: float | None = None,
    missing: Missing = False,
) -> np.ndarray | sp.csr_array:
    """Validate X at prediction time against what the model was fitted on (``missing`` as
    for :func:`check_features`).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.input.data import check_prediction_features
    >>> names = np.array(["free", "lunch"])
    >>> check_prediction_features([[1, 0]], kind="count", feature_names=names, names_given=True)
    array([[1., 0.]])
    >>> check_prediction_features([[1, 0, 2]], kind="count", feature_names=names, names_given=True)
    Traceback (most recent call last):
        ...
    ValueError: X has 3 features, but the model was fitted with 2 features. ...
    """
    X_checked, names, given = check_features(X, kind=kind, binarize=binarize, missing=missing)
    n_expected = len(feature_names)
    if X_checked.shape[1] != n_expected:
        raise ValueError(
            f"X has {X_checked.shape[1]} features, but the model was fitted with {n_expected} "
            "features. Pass the same columns (or the same vectorizer) as at fit."
        )
    if given and names_given and not np.array_equal(names, feature_names):
        expected_set, given_set = set(feature_names), set(names)
        unexpected = [str(n) for n in names if n not in expected_set]
        missing = [str(n) for n in feature_names if n not in given_set]
        detail = (
            f"unexpected {unexpected[:5]}, missing {missing[:5]}"
            if unexpected or missing
            else "same names in a different order"
        )
        raise ValueError(
            f"X feature names differ from those seen at fit ({detail}). Reorder or rename the "
            "columns to match feature_names_in_."
        )
    return X_checked


def _default_feature_names(n_features: int) -> np.ndarray:
    """``np.asarray(["x0", "x1", ..., f"x{n_features - 1}"])``, without a Python-level loop.

    A bag-of-words matrix has tens of thousands of columns; formatting one string per column
    took a third of a multinomial fit. Here the digits are written straight into the UCS-4
    code points of a fixed-width unicode array (shorter names are padded with NULs, which is
    how NumPy stores them anyway).
    """
    width = len(str(n_features - 1))
    codes = np.zeros((n_features, width + 1), dtype=np.uint32)
    codes[:, 0] = ord("x")
    for n_digits in range(1, width + 1):
        start, stop = (0 if n_digits == 1 else 10 ** (n_digits - 1)), min(10**n_digits, n_features)
        block = np.arange(start, stop, dtype=np.int64)
        for position in range(n_digits):
            digit = block // 10 ** (n_digits - 1 - position) % 10
            codes[start:stop, 1 + position] = ord("0") + digit
    return codes.view(np.dtype(f"U{width + 1}")).ravel()


def _is_numeric_dtype(dtype) -> bool:
    return pd.api.types.is_bool_dtype(dtype) or (
        pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype)
    )


def _check_sparse(X, *, name: str) -> sp.csr_array:
    if X.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D sparse matrix; got {X.ndim}-D.")
    if X.dtype.kind == "c":
        raise ValueError(
            f"{name}: Complex data not supported; expected a real sparse matrix, got dtype "
            f"{X.dtype}."
        )
    if X.dtype.kind not in "biuf":
        raise TypeError(f"{name}: expected a numeric sparse matrix; got dtype {X.dtype}.")
    _check_shape(X.shape, name=name)
    # csr_array(X) shares indices and indptr (and data, when already float64) with a CSR
    # input; summing duplicates sorts them in place, so that would rewrite the caller's matrix.
    X = sp.csr_array(X, dtype=np.float64)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
        return X
    # Shared arrays are only read from here on; read-only views make any later in-place
    # change fail instead of reaching the caller's matrix.
    for attribute in ("data", "indices", "indptr"):
        array = getattr(X, attribute)
        if array.flags.writeable:
            view = array.view()
            view.flags.writeable = False
            setattr(X, attribute, view)
    return X


def _check_dense(X, *, name: str) -> np.ndarray:
    try:
        values = np.asarray(X)
    except (ValueError, TypeError) as error:  # ragged lists
        detail = _ragged_detail(X) or str(error)
        raise TypeError(
            f"{name}: expected a 2-D numeric array; could not read it: {detail}"
        ) from None
    if values.dtype.kind in "US" or (values.dtype.kind == "O" and _holds_text(values)):
        raise TypeError(
            f"{name}: expected numeric values; got dtype {values.dtype} with non-numeric "
            "entries (strings). Vectorize text with bayesgen.input.data.vectorize_text or "
            "CountVectorizer, and encode categories with OrdinalEncoder."
        )
    if values.dtype.kind == "O":
        try:
            values = values.astype(np.float64)  # None becomes NaN, refused as missing below
        except (ValueError, TypeError) as error:
            raise TypeError(
                f"{name}: expected numeric values; got dtype object with non-numeric entries "
                f"({error})."
            ) from None
    if values.dtype.kind == "c":
        raise ValueError(
            f"{name}: Complex data not supported; expected real numeric values, got dtype "
            f"{values.dtype}."
        )
    if values.dtype.kind not in "biuf":
        raise TypeError(f"{name}: expected real numeric values; got dtype {values.dtype}.")
    if values.ndim == 1:
        raise ValueError(
            f"{name}: expected a 2-D array (n_samples, n_features); got a 1-D array of shape "
            f"{values.shape}. Reshape your data: X.reshape(-1, 1) for one feature or "
            "X.reshape(1, -1) for one sample."
        )
    if values.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array; got {values.ndim}-D shape {values.shape}.")
    _check_shape(values.shape, name=name)
    return _read_only_if_shared(np.ascontiguousarray(values, dtype=np.float64), X)


def _ragged_detail(X) -> str:
    """Why a list of rows is ragged (its rows' lengths), or "" when it is not."""
    try:
        lengths = [len(row) for row in X]
    except TypeError:
        return ""
    if len(set(lengths)) < 2:
        return ""
    return f"its rows have different lengths {lengths[:10]} (expected rows of equal length)."


def _holds_text(values: np.ndarray) -> bool:
    return any(isinstance(v, str | bytes) for v in values.flat)


def _read_only_if_shared(checked: np.ndarray, original) -> np.ndarray:
    """A read-only view of ``checked`` when it shares memory with the caller's ``original``.

    Nothing downstream writes to the checked X; should anything ever try, it fails loudly
    instead of changing the user's data. Only the view is flagged, never the caller's array.
    """
    if isinstance(original, np.ndarray) and np.may_share_memory(checked, original):
        checked = checked.view()
        checked.flags.writeable = False
    return checked


def _check_shape(shape: tuple[int, ...], *, name: str) -> None:
    if shape[0] == 0 or shape[1] == 0:
        # "0 feature(s) (shape=...) while a minimum of 1 is required": scikit-learn's words.
        empty = "sample" if shape[0] == 0 else "feature"
        raise ValueError(
            f"{name}: expected at least one sample and one feature; got shape {tuple(shape)}: "
            f"0 {empty}(s) (shape={tuple(shape)}) while a minimum of 1 is required."
        )


def _check_values(X, *, kind: FeatureKind, binarize: float | None, name: str, missing=False):
    stored = X.data if sp.issparse(X) else X
    if not np.all(np.isfinite(stored)):
        _check_missing(X, stored, name=name, missing=missing)
        observed = stored[~np.isnan(stored)]
        if binarize is not None and kind == "binary":
            with np.errstate(invalid="ignore"):
                flags = np.where(np.isnan(X), np.nan, X > binarize)
            _check_values(observed, kind=kind, binarize=binarize, name=name)
            return flags
        _check_values(observed, kind=kind, binarize=binarize, name=name)
        return X
    if kind == "real":
        _check_magnitude(stored, X.shape[0], name=name)
        return X
    if kind == "binary" and binarize is not None:
        return _binarize(X, binarize, name=name)
    if stored.size and stored.min() < 0:
        raise ValueError(
            f"{name}: Negative values in data; the model expects {_KIND_DESCRIPTION[kind]}; got "
            f"negative values (min {stored.min():g})."
        )
    if kind == "binary" and np.any((stored != 0) & (stored != 1)):
        bad = np.unique(stored[(stored != 0) & (stored != 1)])[:5]
        raise ValueError(
            f"{name}: the Bernoulli model expects binary 0/1 features; got other values such "
            f"as {bad.tolist()}. Pass binarize=<threshold> to map values above it to 1."
        )
    if kind == "categorical" and np.any(stored != np.round(stored)):
        raise ValueError(
            f"{name}: the categorical model expects non-negative integer category codes; got "
            "fractional values. Encode categories with sklearn's OrdinalEncoder."
        )
    if kind == "count":
        _check_total(stored, name=name)
    return X


def _check_missing(X, stored, *, name: str, missing) -> None:
    """Refuse NaN unless the model integrates missing entries out (``missing`` True), and
    then only NaN in a dense X, never ±inf (a fit also refuses a column with no observed
    entry: :func:`check_observed_columns`)."""
    n_bad = int(np.size(stored) - np.count_nonzero(np.isfinite(stored)))
    finite = (
        f"{name}: expected finite values; got {n_bad} NaN or infinite entries (missing "
        "values such as None count as NaN)"
    )
    if np.isinf(stored).any():
        raise ValueError(f"{finite}; infinite values are never taken.")
    if missing is not True:
        reason = missing if isinstance(missing, str) and missing else "this model needs them all"
        raise ValueError(
            f"{finite}: {reason}. Impute or drop them first, or use a model that integrates "
            "a missing entry out (GaussianNB, PoissonNB, BernoulliNB, CategoricalNB, their "
            "blocks in NaiveBayes, or GDA/QDA, by Gibbs sampling or NUTS)."
        )
    if sp.issparse(X):
        raise ValueError(
            f"{finite}: in a sparse matrix, whose unstored entries are zeros, not missing; "
            "pass a dense array (with NaN where an entry is missing)."
        )


def check_observed_columns(X, name: str = "X") -> None:
    """Refuse training rows with a column that has no observed entry (every row missing it):
    it tells nothing about the classes, and its cells would be their prior only.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.input.data import check_observed_columns
    >>> check_observed_columns(np.array([[1.0, np.nan], [2.0, np.nan]]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: X: column 1 has no observed entry (every row is missing it; ...
    """
    if sp.issparse(X) or X.shape[0] == 0:
        return
    empty = np.flatnonzero(np.isnan(X).all(axis=0))
    if empty.size:
        raise ValueError(
            f"{name}: column {int(empty[0])} has no observed entry (every row is missing it; "
            f"{empty.size} such columns); drop it, it tells nothing about the classes."
        )


def _check_total(stored: np.ndarray, *, name: str) -> None:
    """Refuse counts whose sum overflows: class totals of inf give NaN probabilities."""
    with np.errstate(over="ignore"):
        total = stored.sum(dtype=np.float64)
    if not np.isfinite(total):
        raise ValueError(
            f"{name}: the counts are too large for float64: they sum to {total} (largest value "
            f"{stored.max():g}), so the class totals overflow. Rescale X."
        )


def _check_magnitude(stored: np.ndarray, n_samples: int, *, name: str) -> None:
    """Refuse values whose squares summed over the samples overflow (means and covariance)."""
    if not stored.size:
        return
    largest = float(np.abs(stored).max())
    with np.errstate(over="ignore"):
        square_sum = 4.0 * largest * largest * n_samples
    if not np.isfinite(square_sum):
        raise ValueError(
            f"{name}: values as large as {largest:g} overflow float64 in the class means and "
            "the covariance. Rescale X (e.g. sklearn's StandardScaler)."
        )


def _binarize(X, threshold: float, *, name: str):
    if sp.issparse(X):
        if threshold < 0:
            raise ValueError(
                f"binarize: a negative threshold ({threshold}) would turn every stored zero of "
                f"the sparse {name} into 1; use a threshold >= 0 or pass a dense array."
            )
        X = X.copy()
        X.data = (X.data > threshold).astype(np.float64)
        X.eliminate_zeros()
        return X
    return (X > threshold).astype(np.float64)
