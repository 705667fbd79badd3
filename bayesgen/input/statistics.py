"""Sufficient statistics that merge: sample weights, classes given up front, and the merge of
two fits' statistics (``partial_fit``).

Every model's posterior depends on the data only through its sufficient statistics (class
counts, feature counts; class means and scatter), which are sums over the rows. So

* a row of weight w counts as w rows: integer weights give exactly the statistics of
  repeated rows, and a row of weight 0 is dropped before anything is computed (its class too,
  when no other row has it; its category codes do not widen ``n_categories``), so zero weights
  equal dropping the rows;
* the statistics of two sets of rows merge into those of their union (counts add; class
  means and scatters by Chan's parallel update,
  :func:`bayesgen.maths.gaussian.merge_class_moments`),
  which is what ``partial_fit`` does chunk after chunk before it recomputes the closed form
  from the merged statistics (each family's ``from_statistics``).

The families (:mod:`bayesgen.families`) compute and merge their own statistics; this module
checks what they share: the weights, the labels against classes given up front, and that two
statistics Datasets describe the same features.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd
import scipy.sparse as sp
import xarray as xr

from bayesgen.input.data import (
    FeatureKind,
    TrainingData,
    check_feature_names,
    check_features,
    check_observed_columns,
)
from bayesgen.input.labels import check_labels, label_kind
from bayesgen.maths.counts import class_counts
from bayesgen.maths.gaussian import merge_class_moments

#: The largest sum of the sample weights: float64 holds whole counts exactly up to 2**53, and
#: half of that is left for rows added later (``partial_fit``).
MAX_TOTAL_WEIGHT = 2.0**52


def check_sample_weight(sample_weight, n_samples: int) -> np.ndarray | None:
    """Validate ``sample_weight``: finite numbers ≥ 0 summing to at most 2**52, one per row,
    not all zero.

    Returns
    -------
    numpy.ndarray of float64, shape (n_samples,), or None for None
        A new array (the caller's is never modified).

    Raises
    ------
    TypeError, ValueError
        Naming ``sample_weight``, what was expected and what came.
    """
    if sample_weight is None:
        return None
    if isinstance(sample_weight, pd.Series | pd.DataFrame):
        sample_weight = sample_weight.to_numpy()
    if sp.issparse(sample_weight) or isinstance(sample_weight, str | bytes):
        raise TypeError(
            "sample_weight: expected a 1-D array of numbers, one per row of X; got "
            f"{type(sample_weight).__name__}."
        )
    if isinstance(sample_weight, numbers.Real) and not isinstance(sample_weight, bool):
        # scikit-learn's convention: one number weighs every row alike.
        sample_weight = np.full(n_samples, sample_weight, dtype=np.float64)
    try:
        weights = np.array(sample_weight, dtype=np.float64)  # a copy, never a view
    except (TypeError, ValueError):
        raise TypeError(
            "sample_weight: expected a 1-D array of numbers, one per row of X; got values "
            "that are not numbers."
        ) from None
    if weights.shape != (n_samples,):
        raise ValueError(
            f"sample_weight: expected shape ({n_samples},), one weight per row of X; got shape "
            f"{weights.shape}."
        )
    bad = np.flatnonzero(~np.isfinite(weights) | (weights < 0))
    if bad.size:
        raise ValueError(
            "sample_weight: expected finite weights >= 0; got "
            f"{weights[bad[0]]} at position {bad[0]} ({bad.size} such weights)."
        )
    with np.errstate(over="ignore"):  # a sum that overflows is inf, refused below
        total = float(np.sum(weights))  # exact for whole weights up to 2**53
    if total > MAX_TOTAL_WEIGHT:
        largest = int(np.argmax(weights))
        raise ValueError(
            f"sample_weight: expected weights whose sum is at most 2**52 = "
            f"{MAX_TOTAL_WEIGHT:.6g}; got a sum of {total:g} (the largest weight "
            f"{weights[largest]:g}, at position {largest}). A weight counts its row that many "
            "times in the sufficient statistics, and float64 holds such counts as whole "
            "numbers only up to 2**53 (half of it is kept for later rows); far above it their "
            "sums overflow to infinity."
        )
    if not np.any(weights > 0):
        raise ValueError(
            "sample_weight: all weights are zero, so no row is left to fit; give at least one "
            "row a weight > 0."
        )
    return weights


def check_classes(classes) -> np.ndarray:
    """The classes given to ``partial_fit``: sorted distinct labels, at least two."""
    try:
        _, checked = check_labels(classes)
    except (TypeError, ValueError) as error:
        message = str(error)
        message = "classes:" + message[2:] if message.startswith("y:") else message
        raise type(error)(message) from None
    return checked


def encode_labels(y, classes: np.ndarray) -> np.ndarray:
    """Codes of the labels ``y`` as indices into ``classes`` (given up front); one class in
    ``y`` is enough. Refuses a label not among ``classes``, naming it."""
    _, seen = check_labels(y, min_classes=1)
    if label_kind(seen) != label_kind(classes):
        raise ValueError(
            f"y: expected labels of the classes {classes.tolist()[:10]} given to the first "
            f"partial_fit; got labels of another type ({seen.tolist()[:3]})."
        )
    unseen = seen[~np.isin(seen, classes)]
    if unseen.size:
        raise ValueError(
            f"y: labels {unseen.tolist()[:10]} are not among the classes "
            f"{classes.tolist()[:10]} of the first partial_fit; pass every class in "
            "partial_fit(..., classes=...) on the first call."
        )
    values = np.asarray(y.to_numpy() if isinstance(y, pd.Series) else y, dtype=object).ravel()
    values = values.astype(seen.dtype) if seen.dtype.kind in "biuU" else values
    return np.searchsorted(classes, values).astype(np.int64)


def training_data(
    X,
    y,
    *,
    kind: FeatureKind,
    binarize: float | None = None,
    feature_names=None,
    sample_weight=None,
    classes=None,
    missing: bool | str = False,
) -> TrainingData:
    """:func:`bayesgen.input.data.check_training_data` with ``sample_weight`` and ``classes``,
    and missing entries (NaN) where ``missing`` is True (see
    :func:`bayesgen.input.data.check_features`).

    Rows of weight 0 are dropped (their classes too, unless ``classes`` is given): zero weights
    equal dropping the rows. With ``classes`` (``partial_fit``), y is encoded against them and
    may hold only some of them.

    Returns
    -------
    TrainingData
        Its ``sample_weight`` holds the positive weights of the kept rows, or None when none
        was given.
    """
    X, names, names_given = check_features(X, kind=kind, binarize=binarize, missing=missing)
    if missing is True:
        check_observed_columns(X)
    if feature_names is not None:
        names, names_given = check_feature_names(feature_names, X.shape[1]), True
    if classes is None:
        codes, labels = check_labels(y)
    else:
        labels = np.asarray(classes)
        codes = encode_labels(y, labels)
    if X.shape[0] != codes.shape[0]:
        raise ValueError(
            f"X and y must have the same number of samples; got X with {X.shape[0]} rows "
            f"and y with {codes.shape[0]} labels."
        )
    weights = check_sample_weight(sample_weight, X.shape[0])
    if weights is not None and not np.all(weights > 0):
        keep = np.flatnonzero(weights > 0)
        X, codes, weights = X[keep], codes[keep], weights[keep]
        if classes is None:
            present, codes = np.unique(codes, return_inverse=True)
            labels = labels[present]
            if labels.size < 2:
                raise ValueError(
                    "y: a classifier needs at least two classes; got only one class "
                    f"{labels[0].item()!r} among the rows with sample_weight > 0."
                )
    return TrainingData(X, codes.astype(np.int64), labels, names, names_given, weights)


def total_weight(class_count) -> int | float:
    """N = Σ_k N_k as ``attrs["n_samples"]`` stores it: an int when whole (rows, or integer
    weights), else a float."""
    total = float(np.sum(class_count))
    return int(total) if total == round(total) else total


def check_mergeable(first: xr.Dataset, second: xr.Dataset) -> None:
    """Refuse to merge the statistics of different models, classes or features.

    Raises
    ------
    ValueError
        Naming what differs: the model, the classes, the number of features or their names.
    """
    if first.attrs["model"] != second.attrs["model"]:
        raise ValueError(
            f"partial_fit: cannot merge statistics of {first.attrs['model']!r} with those of "
            f"{second.attrs['model']!r}."
        )
    if not np.array_equal(first["class"].values, second["class"].values):
        raise ValueError(
            f"y: expected the classes {first['class'].values.tolist()[:10]} of the first "
            f"partial_fit; got {second['class'].values.tolist()[:10]}."
        )
    n_first, n_second = first.sizes["feature"], second.sizes["feature"]
    if n_first != n_second:
        raise ValueError(
            f"X has {n_second} features, but the earlier partial_fit calls had {n_first} "
            "features. Pass the same columns in every chunk."
        )
    given = (
        bool(first.attrs.get("feature_names_given")),
        bool(second.attrs.get("feature_names_given")),
    )
    if given[0] and given[1]:
        names_first, names_second = first["feature"].values, second["feature"].values
        if not np.array_equal(names_first, names_second):
            differ = np.flatnonzero(names_first != names_second)[:5]
            raise ValueError(
                "X: feature names differ from those of the earlier partial_fit calls: "
                f"{names_first[differ].tolist()} there, {names_second[differ].tolist()} in "
                "this chunk. Pass the same columns in every chunk."
            )
    elif given[0] != given[1]:
        had = "had feature names" if given[0] else "had none"
        raise ValueError(
            f"X: the earlier partial_fit calls {had}, this chunk "
            f"{'has none' if given[0] else 'has feature names'}; pass the same kind of X "
            "(e.g. DataFrames with the same columns) in every chunk."
        )
    binarize = (first.attrs.get("binarize"), second.attrs.get("binarize"))
    if binarize[0] != binarize[1]:
        raise ValueError(f"binarize: the chunks were binarized at different thresholds {binarize}.")


def merge_gaussian_statistics(model_family, first: xr.Dataset, second: xr.Dataset) -> xr.Dataset:
    """Merge the Gaussian statistics of two sets of rows (GDA's pooled scatter or QDA's per
    class): counts add, means and scatters by
    :func:`bayesgen.maths.gaussian.merge_class_moments`."""
    check_mergeable(first, second)
    count, mean, scatter = merge_class_moments(
        tuple(first[name].values for name in ("class_count", "class_mean", "scatter")),
        tuple(second[name].values for name in ("class_count", "class_mean", "scatter")),
    )
    merged = first[list(model_family.statistics)].copy()
    merged["class_count"] = (("class",), count)
    merged["class_mean"] = (("class", "feature"), mean)
    merged["scatter"] = (first["scatter"].dims, scatter)
    merged.attrs = dict(first.attrs)
    merged.attrs["n_samples"] = total_weight(count)
    return merged


def gaussian_statistics(
    model_family, X, y, means_and_scatter, *, feature_names, sample_weight, classes
) -> xr.Dataset:
    """The (weighted) class counts, class means and scatter of a Gaussian family's rows.

    ``means_and_scatter(X, y_codes, n_classes, weights)`` is the family's: the pooled (D, D)
    scatter of GDA or the per-class (K, D, D) scatters of QDA. ``classes`` (``partial_fit``)
    fixes the class coordinate, a class without rows having N_k = 0, x̄_k = 0 (and S_k = 0).
    """
    data = training_data(
        X,
        y,
        kind=model_family.feature_kind,
        feature_names=feature_names,
        sample_weight=sample_weight,
        classes=classes,
    )
    n_classes = len(data.classes)
    count = class_counts(data.y, n_classes, data.sample_weight)
    mean, scatter = means_and_scatter(data.X, data.y, n_classes, data.sample_weight)
    dims = ("feature", "feature2") if scatter.ndim == 2 else ("class", "feature", "feature2")
    return xr.Dataset(
        {
            "class_count": (("class",), count),
            "class_mean": (("class", "feature"), mean),
            "scatter": (dims, scatter),
        },
        coords={
            "class": data.classes,
            "feature": data.feature_names,
            "feature2": data.feature_names,
        },
        attrs={
            "model": model_family.name,
            "n_samples": total_weight(count),
            "feature_names_given": int(data.names_given),
        },
    )


#: The statistic of a fit whose rows had missing entries: the weight of the rows observed in
#: each (class, feature) cell. Absent where every entry was observed.
CELL_COUNT = "cell_count"


def cell_counts(statistics: xr.Dataset) -> np.ndarray:
    """Each cell's (weighted) count of observed rows, (class, feature) or (class, 1):
    ``cell_count`` where the data had missing entries, else the class counts N_k as a column
    (every entry observed), which broadcasts against the cells.

    Examples
    --------
    >>> import numpy as np
    >>> import xarray as xr
    >>> from bayesgen.input.statistics import cell_counts
    >>> complete = xr.Dataset({"class_count": ("class", [3.0, 2.0])})
    >>> cell_counts(complete).tolist()
    [[3.0], [2.0]]
    >>> cells = complete.assign(cell_count=(("class", "feature"), [[3.0, 2.0], [2.0, 1.0]]))
    >>> cell_counts(cells).tolist()
    [[3.0, 2.0], [2.0, 1.0]]
    """
    if CELL_COUNT in statistics:
        return statistics[CELL_COUNT].values.astype(np.float64)
    return statistics["class_count"].values.astype(np.float64)[:, None]
