"""What the plots of a fitted estimator show: the features, classes and variables, their labels,
and the rows and class codes of held-out data.

Shared by :mod:`bayesgen.plotting.plots`, :mod:`bayesgen.plotting.predictive`,
:mod:`bayesgen.plotting.gaussian` and :mod:`bayesgen.plotting.report`. Which features are
interesting
and which variables a model shows by default is the model family's answer
(:meth:`~bayesgen.families.base.Family.feature_scores`,
:attr:`~bayesgen.families.base.Family.plot_variables`); this module only asks.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp
import xarray as xr
from matplotlib.ticker import MaxNLocator

from bayesgen.families import FAMILIES

#: Classes shown in the per-parameter plots (trace, rank, ESS, densities); with more classes
#: (digits has 10) ArviZ would need more subplots than its ``plot.max_subplots`` limit of 40.
MAX_PLOT_CLASSES = 4


def selected_features(est, *, max_features: int = 4) -> list:
    """The features that the diagnostic plots show, most interesting first.

    The model family ranks them (:meth:`~bayesgen.families.base.Family.feature_scores`): the
    most probable ones by the closed-form estimate for naive Bayes, the largest standardised
    discriminant weights for Gaussian discriminant analysis.

    Returns
    -------
    list
        Feature names, most interesting first; for :class:`~bayesgen.CategoricalNB` pairs
        ``(feature, category)``.

    Examples
    --------
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    >>> est = est.fit(X, y)
    >>> from bayesgen.plotting.plots import selected_features
    >>> [str(name) for name in selected_features(est, max_features=2)]
    ['x2', 'x0']
    """
    scores = est.model_.feature_scores(est.closed_form_)
    order = np.argsort(-scores, axis=None, kind="stable")[:max_features]
    order = order[np.isfinite(scores.ravel()[order])]  # categorical: no padding cells
    names = est.closed_form_["feature"].values
    if scores.ndim == 1:
        return [names[i] for i in order]
    categories = est.closed_form_["category"].values
    cells = np.unravel_index(order, scores.shape)
    return [(names[f], categories[c]) for f, c in zip(*cells, strict=True)]


def feature_label(feature) -> str:
    """How a plot names a feature, or a categorical (feature, category) cell (``f=c``)."""
    if isinstance(feature, tuple):
        return f"{feature[0]}={feature[1]}"
    return str(feature)


def mpl_text(label) -> str:
    """A label matplotlib prints literally: ``$`` would otherwise start mathtext."""
    return str(label).replace("$", r"\$")


def subset(ds: xr.Dataset, selection: list, *, for_matplotlib: bool = True) -> xr.Dataset:
    """``ds`` restricted to the selected features and the first :data:`MAX_PLOT_CLASSES`
    classes.

    Categorical (feature, category) cells become one ``feature`` dim labelled
    ``feature=category``; a covariance keeps the selected rows and columns. With
    ``for_matplotlib`` the class and feature labels are escaped for matplotlib.
    """
    escape = mpl_text if for_matplotlib else str
    labels = [escape(feature_label(f)) for f in selection]
    if "class" in ds.dims and ds.sizes["class"] > MAX_PLOT_CLASSES:
        ds = ds.isel({"class": slice(0, MAX_PLOT_CLASSES)})
    if "category" in ds.dims:
        cells = {
            "feature": xr.DataArray([f for f, _ in selection], dims="cell"),
            "category": xr.DataArray([c for _, c in selection], dims="cell"),
        }
        ds = ds.sel(cells).drop_vars(["feature", "category"]).rename(cell="feature")
    elif "feature" in ds.dims:  # a model's shared variables (class_prob) have none
        ds = ds.sel(feature=selection)
        if "feature2" in ds.dims:
            ds = ds.sel(feature2=selection).assign_coords(feature2=labels)
    if "feature" in ds.dims:
        ds = ds.assign_coords(feature=labels)
    if for_matplotlib:
        ds = ds.assign_coords({"class": [escape(c) for c in ds["class"].values]})
    return ds


def check_var_names(est, var_names, group: str = "posterior") -> list[str]:
    """``var_names`` as a list, by default the family's plot variables; unknown names are a
    ValueError that lists the available ones."""
    if var_names is None:
        var_names = list(est.model_.plot_variables)
    else:
        var_names = list(var_names)
    available = list(est.idata_[group].data_vars)
    unknown = [name for name in var_names if name not in available]
    if unknown:
        raise ValueError(f"var_names: {unknown} are not in the {group}; choose from {available}.")
    return var_names


def plot_tree(est, var_names, max_features: int, groups=("posterior",)) -> xr.DataTree:
    """The chosen variables and features of ``groups`` as a small DataTree to plot."""
    var_names = check_var_names(est, var_names)
    selection = selected_features(est, max_features=max_features)
    tree = {}
    for group in groups:
        if group not in est.idata_.children:
            raise ValueError(f"the fit has no {group} group (see the estimator's prior_draws).")
        tree[group] = subset(est.idata_[group].to_dataset()[var_names], selection)
    return xr.DataTree.from_dict(tree)


def constrained(plot, *, note: str | None = None):
    """Lay the figure out so titles and tick labels do not overlap; returns ``plot``.

    ``note`` (e.g. :func:`classes_note`) is written below the panels (above them, the
    constrained layout would not make room for it beside a figure legend). Tick labels that
    would still touch are thinned (:func:`legible_ticks`).
    """
    figure = plot.viz["figure"].item()
    figure.set_layout_engine("constrained")
    if note:
        figure.supxlabel(note, fontsize="medium", color="0.25")
    legible_ticks(figure)
    return plot


def classes_note(est, shown: int = MAX_PLOT_CLASSES) -> str | None:
    """What a plot that shows only the first ``shown`` classes says about the others (None
    when it shows them all)."""
    n_classes = len(est.classes_)
    if n_classes <= shown:
        return None
    first = ", ".join(str(label) for label in est.classes_[:shown])
    return f"{shown} of {n_classes} classes shown ({first}), to keep the plot readable"


def legible_ticks(figure) -> None:
    """Give every axes with automatic x ticks a locator that leaves room for the labels.

    Matplotlib chooses the number of ticks from the font size alone, as if every label were
    three characters wide, so long labels (``0.03750``) in narrow panels run into each other.
    Ticks a plot set itself are kept. Nothing is drawn here: the locator measures when the
    figure is drawn, at its final size.
    """
    from matplotlib.ticker import AutoLocator

    for ax in figure.axes:
        if type(ax.xaxis.get_major_locator()) is AutoLocator:
            ax.xaxis.set_major_locator(RoomyLocator())


class RoomyLocator(MaxNLocator):
    """Matplotlib's automatic ticks, fewer where their labels would not fit side by side.

    A label's width is estimated from its characters (:data:`_CHAR_EM` of the font size each)
    plus a gap of :data:`_GAP_EM`; no renderer is needed, so it costs no extra draw.
    """

    def __init__(self):
        super().__init__(nbins="auto", steps=[1, 2, 2.5, 5, 10])

    def tick_values(self, vmin, vmax):
        ticks = super().tick_values(vmin, vmax)
        axis = self.axis
        if axis is None or axis.axes is None or len(ticks) < 3:
            return ticks
        room = axis.axes.bbox.width * 72 / axis.axes.figure.dpi  # points
        size = axis.majorTicks[0].label1.get_fontsize()
        nbins = len(ticks)
        while nbins > 1:
            low, high = sorted((vmin, vmax))
            shown = [tick for tick in ticks if low <= tick <= high]
            labels = axis.major.formatter.format_ticks(shown)
            widest = max((len(label) for label in labels), default=0)
            if len(shown) * (widest * _CHAR_EM + _GAP_EM) * size <= room:
                break
            nbins = max(1, len(shown) - 2)
            ticks = MaxNLocator(nbins=nbins, steps=[1, 2, 2.5, 5, 10]).tick_values(vmin, vmax)
        return ticks


#: Width of a digit (DejaVu Sans, matplotlib's default font), and the smallest gap between
#: two tick labels, in font sizes (ems).
_CHAR_EM = 0.64
_GAP_EM = 1.0


def require_parameters(est, plot_name: str, names: tuple[str, ...]) -> None:
    """Refuse a plot for a model whose posterior lacks the parameters it draws.

    The message names the estimators whose models have them, so it stays true as models are
    added.
    """
    if all(name in est.idata_["posterior"] for name in names):
        return
    having = [f.estimator for f in FAMILIES.values() if set(names) <= set(f.parameters)]
    raise ValueError(f"{plot_name}: defined for {' and '.join(having)}, not {est.model_.name!r}.")


# --------------------------------------------------------------------------------------------
# Held-out data.


def dense(X) -> np.ndarray:
    """X as a dense float64 array."""
    if sp.issparse(X):
        return X.toarray().astype(np.float64)
    return np.asarray(X, dtype=np.float64)


def class_codes(est, y) -> np.ndarray:
    """Index of each label of ``y`` in ``est.classes_``."""
    lookup = {label: i for i, label in enumerate(est.classes_.tolist())}
    labels = np.asarray(y).tolist()
    unknown = sorted({str(label) for label in labels if label not in lookup})
    if unknown:
        raise ValueError(f"y: labels {unknown[:10]} are not among the fitted classes_.")
    return np.array([lookup[label] for label in labels], dtype=np.int64)


def take_rows(X, rows: np.ndarray):
    """The given rows of a DataFrame, sparse matrix or array."""
    if isinstance(X, pd.DataFrame):
        return X.iloc[rows]
    if sp.issparse(X):
        return sp.csr_array(X)[rows]
    return np.asarray(X)[rows]
