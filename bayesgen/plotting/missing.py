"""Where a fit's training rows had missing entries: the share missing per feature and class.

A block that integrates a missing entry out (:attr:`Family.missing_values
<bayesgen.families.base.Family.missing_values>`) counts, in each (class, feature) cell, only
the rows observed there; the report shows how many that left, so that a cell whose posterior
is close to its prior because its rows all missed the feature is seen as such.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import scipy.sparse as sp

__all__ = ["missing_table", "plot_missing"]


def missing_table(est) -> pd.DataFrame | None:
    """The share of each class's training rows missing each feature (rows: features,
    columns: classes, and "all"), or None where the fit kept no rows or none is missing.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen import GaussianNB
    >>> from bayesgen.plotting.missing import missing_table
    >>> X = np.array([[1.0, 2.0], [np.nan, 1.5], [3.0, np.nan], [3.5, 4.0]])
    >>> est = GaussianNB(inference="conjugate", compute_map=False, prior_draws=0)
    >>> missing_table(est.fit(X, ["a", "a", "b", "b"]))  # doctest: +SKIP
          a    b  all
    x0  0.5  0.0  0.25
    x1  0.0  0.5  0.25
    """
    try:
        X, y_codes = est.training_rows()
    except ValueError:  # partial_fit or Dask: no rows kept
        return None
    if sp.issparse(X):
        return None
    missing = np.isnan(np.asarray(X, dtype=np.float64))
    if not missing.any():
        return None
    classes = est.classes_
    shares = {
        str(label): missing[y_codes == k].mean(axis=0) if np.any(y_codes == k) else np.nan
        for k, label in enumerate(classes)
    }
    shares["all"] = missing.mean(axis=0)
    features = [str(f) for f in est.closed_form_["feature"].values]
    return pd.DataFrame(shares, index=pd.Index(features, name="feature"))


def plot_missing(est, *, max_features: int = 30) -> plt.Figure:
    """A heat map of :func:`missing_table`: the share of each class's rows missing each
    feature, for the ``max_features`` features missing most often.

    Raises
    ------
    ValueError
        Where the fit kept no training rows or none of them has a missing entry.
    """
    table = missing_table(est)
    if table is None:
        raise ValueError("est: its training rows have no missing entry (or were not kept).")
    shown = table.sort_values("all", ascending=False).head(max_features)
    values = shown.drop(columns="all").to_numpy(dtype=np.float64)
    height = 1.2 + 0.3 * len(shown)
    fig, ax = plt.subplots(figsize=(2.0 + 1.1 * values.shape[1], height), layout="constrained")
    image = ax.imshow(values, vmin=0.0, vmax=1.0, cmap="Greys", aspect="auto")
    ax.set_xticks(range(values.shape[1]), shown.columns[:-1])
    ax.set_yticks(range(len(shown)), shown.index)
    for (row, col), share in np.ndenumerate(values):
        ax.text(
            col,
            row,
            f"{share:.0%}",
            ha="center",
            va="center",
            color="white" if share > 0.5 else "black",
            fontsize=8,
        )
    ax.set_xlabel("class")
    fig.colorbar(image, ax=ax, label="share of the class's rows missing the feature")
    return fig
