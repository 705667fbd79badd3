"""Sufficient statistics of labelled rows: class counts, per-class feature sums and category
counts, class means and the pooled scatter (NumPy and SciPy's sparse arrays only).

Every model's statistics are built from these; ``weights`` count a row w times, as
scikit-learn's ``sample_weight`` does. Sparse X is read in one pass over its non-zeros.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = [
    "category_counts",
    "class_counts",
    "class_means",
    "class_means_and_scatter",
    "feature_counts",
    "missing_entries",
    "observed_counts",
]


def class_counts(y: np.ndarray, n_classes: int, weights=None) -> np.ndarray:
    """Number of samples per class, N_k; with ``weights``, the sum of each class's weights.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.maths.counts import class_counts
    >>> class_counts(np.array([0, 1, 1, 2]), 3).tolist()
    [1.0, 2.0, 1.0]
    >>> class_counts(np.array([0, 1, 1]), 3, weights=[0.5, 1.0, 2.0]).tolist()
    [0.5, 3.0, 0.0]
    """
    return np.bincount(y, weights=weights, minlength=n_classes).astype(np.float64)


def feature_counts(X, y: np.ndarray, n_classes: int, weights=None) -> np.ndarray:
    """Per-class column sums of X: N_kj = Σ_{i: y_i = k} w_i X_ij, shape (n_classes, n_features).

    The counts make up a sufficient statistic for both naive Bayes event models (for binary X
    they count documents containing feature j); ``weights`` w_i (default 1) count row i w_i
    times, as scikit-learn's ``_BaseDiscreteNB`` does. Sparse X is read in one pass over its
    non-zeros and never densified.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.maths.counts import feature_counts
    >>> X = np.array([[1, 1, 0], [1, 1, 0], [1, 1, 1], [0, 0, 3]])
    >>> feature_counts(X, np.array([1, 0, 0, 1]), 2).tolist()
    [[2.0, 2.0, 1.0], [1.0, 1.0, 3.0]]
    """
    n_features = X.shape[1]
    if sp.issparse(X):
        # Flat (class, feature) bin of every stored entry: the row's class offset, repeated
        # over the row's non-zeros, plus the column.
        row_nonzeros = np.diff(X.indptr)
        offsets = np.asarray(y, dtype=np.int64) * n_features
        flat = np.repeat(offsets, row_nonzeros) + X.indices
        values = X.data if weights is None else X.data * np.repeat(weights, row_nonzeros)
        counts = np.bincount(flat, weights=values, minlength=n_classes * n_features)
        return counts.reshape(n_classes, n_features)
    counts = np.zeros((n_classes, n_features))
    np.add.at(counts, y, X if weights is None else X * np.asarray(weights)[:, None])
    return counts


def missing_entries(X) -> np.ndarray | None:
    """Where rows X miss an entry (NaN), as a boolean array of X's shape; None where none is
    missing (a sparse X never misses one: its unstored entries are zeros).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.maths.counts import missing_entries
    >>> missing_entries(np.array([[1.0, np.nan]])).tolist()
    [[False, True]]
    >>> missing_entries(np.array([[1, 0]])) is None
    True
    """
    if sp.issparse(X):
        return None
    X = np.asarray(X)
    if X.dtype.kind not in "fc":
        return None
    missing = np.isnan(X)
    return missing if missing.any() else None


def observed_counts(X, y: np.ndarray, n_classes: int, weights=None) -> np.ndarray | None:
    """Per (class, feature) the rows observed there, Σ_{i: y_i = k} w_i [x_ij is not NaN], shape
    (n_classes, n_features); None where no entry is missing (sparse X never has one).

    A missing entry's factor drops out of a naive Bayes likelihood, so each cell's posterior
    counts the rows observed in it: this is the number of trials of a Bernoulli cell and the
    total of a categorical one, in place of the class's rows N_k.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.maths.counts import observed_counts
    >>> X = np.array([[1.0, np.nan], [0.0, 1.0], [np.nan, np.nan], [1.0, 0.0]])
    >>> observed_counts(X, np.array([0, 0, 1, 1]), 2).tolist()
    [[2.0, 1.0], [1.0, 1.0]]
    >>> observed_counts(np.ones((2, 2)), np.array([0, 1]), 2) is None
    True
    """
    missing = missing_entries(X)
    if missing is None:
        return None
    return feature_counts((~missing).astype(np.float64), y, n_classes, weights)


def category_counts(
    X, y: np.ndarray, n_classes: int, n_categories: np.ndarray, weights=None
) -> np.ndarray:
    """Counts N_k,n,c of category c of feature n within class k, zero-padded to the widest feature
    (with ``weights``, the sum of the weights of those rows). A missing entry (NaN) is counted
    in no category.

    Returns
    -------
    ndarray of shape (n_classes, n_features, max(n_categories))

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.maths.counts import category_counts
    >>> codes = np.array([[0, 2], [1, 2], [0, 0]])
    >>> counts = category_counts(codes, np.array([0, 0, 1]), 2, np.array([2, 3]))
    >>> counts.shape
    (2, 2, 3)
    >>> counts[0].tolist()  # class 0: feature 0 has codes 0 and 1, feature 1 code 2 twice
    [[1.0, 1.0, 0.0], [0.0, 0.0, 2.0]]
    """
    values = X.toarray() if sp.issparse(X) else np.asarray(X)
    missing = missing_entries(values)
    if missing is not None:
        values = np.where(missing, 0.0, values)
    codes = values.astype(np.int64)
    n_features = codes.shape[1]
    width = int(n_categories.max())
    flat = (y[:, None] * n_features + np.arange(n_features)) * width + codes
    cell_weights = None if weights is None else np.repeat(weights, n_features)
    if missing is not None:  # the observed entries only
        observed = ~missing.ravel()
        flat = flat.ravel()[observed]
        cell_weights = None if cell_weights is None else cell_weights[observed]
    counts = np.bincount(
        flat.ravel(), weights=cell_weights, minlength=n_classes * n_features * width
    )
    return counts.reshape(n_classes, n_features, width).astype(np.float64)


def class_means(X, y: np.ndarray, n_classes: int, weights=None, *, empty=0.0) -> np.ndarray:
    """(Weighted) class means x̄_k, shape (n_classes, n_features); X dense or sparse.

    A class of weight 0 gets ``empty``: 0 by default (the closed forms' class means, where a
    class given to ``partial_fit`` has no rows yet), NaN for a data set's statistics (no mean).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.maths.counts import class_means
    >>> class_means(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([0, 0]), 2).tolist()
    [[2.0, 3.0], [0.0, 0.0]]
    >>> class_means(np.array([[1.0, 2.0]]), np.array([1]), 2, empty=np.nan)[0].tolist()
    [nan, nan]
    """
    total = class_counts(y, n_classes, weights)
    sums = feature_counts(X, y, n_classes, weights)
    means = sums / np.where(total > 0, total, 1.0)[:, None]
    return means if empty == 0.0 else np.where(total[:, None] > 0, means, empty)


def class_means_and_scatter(
    X: np.ndarray, y: np.ndarray, n_classes: int, weights=None
) -> tuple[np.ndarray, np.ndarray]:
    """Class means x̄_k (n_classes, n_features) and the pooled within-class scatter
    S = Σ_i w_i (x_i - x̄_{y_i})(x_i - x̄_{y_i})ᵀ (n_features, n_features), w_i = 1 by default.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.maths.counts import class_means_and_scatter
    >>> X = np.array([[0.0, 1.0], [2.0, 1.0], [5.0, 5.0], [7.0, 3.0]])
    >>> means, scatter = class_means_and_scatter(X, np.array([0, 0, 1, 1]), 2)
    >>> means.tolist()
    [[1.0, 1.0], [6.0, 4.0]]
    >>> scatter.tolist()
    [[4.0, -2.0], [-2.0, 2.0]]
    """
    means = class_means(X, y, n_classes, weights)
    centered = X - means[y]
    weighted = centered if weights is None else centered * np.asarray(weights)[:, None]
    return means, weighted.T @ centered
