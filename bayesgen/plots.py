"""ArviZ and matplotlib plots of a fitted bayesgen estimator; each returns a PlotCollection,
PlotMatrix or Figure for use in scripts.

Every plot is a function of the fitted estimator (data first, keyword-only options) that
returns an ArviZ ``PlotCollection`` (``PlotMatrix`` for the pair plot) or a matplotlib
``Figure``. :func:`bayesgen.report.report` draws all of them into one HTML page.

Large vocabularies are plotted through a few features only: the most probable ones by the
closed-form estimate (for naive Bayes), or the largest standardised discriminant weights (GDA).
Close the figures you get (``matplotlib.pyplot.close``); :func:`bayesgen.report.report` closes
its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import arviz as az
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import scipy.sparse as sp
import xarray as xr
from scipy import stats as scipy_stats

if TYPE_CHECKING:
    from arviz_plots import PlotCollection, PlotMatrix
    from matplotlib.figure import Figure

_DEFAULT_VARS = {"naive_bayes": ["class_prob", "feature_prob"], "gda": ["class_prob", "mu"]}
#: closed-form variables holding the MLE of a posterior variable
_MLE_NAMES = {
    "class_prob": "class_prob_mle",
    "feature_prob": "feature_prob_mle",
    "mu": "mu_mle",
    "cov": "cov_mle",
}
#: line styles of the reference lines on the posterior densities
_REFERENCE_STYLE = {
    "add-λ": {"color": "black", "linestyle": "--"},
    "closed form": {"color": "black", "linestyle": "--"},
    "MLE": {"color": "tab:red", "linestyle": ":"},
    "MAP": {"color": "tab:green", "linestyle": "-."},
}


# --------------------------------------------------------------------------------------------
# Choosing what to plot.


def _model(est) -> str:
    return est.closed_form_.attrs["model"]


def _is_gda(est) -> bool:
    return _model(est) == "gda"


def _default_vars(est) -> list[str]:
    return _DEFAULT_VARS["gda" if _is_gda(est) else "naive_bayes"]


def _feature_scores(est) -> np.ndarray:
    """How interesting each feature (or, for the categorical model, each (feature, category)
    cell) is: the largest closed-form probability over the classes for naive Bayes, the largest
    |discriminant weight| times the feature's standard deviation for GDA."""
    stats = est.closed_form_
    if _is_gda(est):
        coef = np.abs(np.atleast_2d(stats["coef"].values)).max(axis=0)
        return coef * np.sqrt(np.diag(stats["cov"].values))
    prob = stats["feature_prob"].values.max(axis=0)
    if "category_mask" in stats:
        prob = np.where(stats["category_mask"].values, prob, -np.inf)
    return prob


def selected_features(est, *, max_features: int = 4) -> list:
    """The features that the diagnostic plots show (see the module docstring).

    Returns
    -------
    list
        Feature names, most interesting first; for :class:`~bayesgen.CategoricalNB` pairs
        ``(feature, category)``.
    """
    scores = _feature_scores(est)
    order = np.argsort(-scores, axis=None, kind="stable")[:max_features]
    order = order[np.isfinite(scores.ravel()[order])]  # categorical: no padding cells
    names = est.closed_form_["feature"].values
    if scores.ndim == 1:
        return [names[i] for i in order]
    categories = est.closed_form_["category"].values
    cells = np.unravel_index(order, scores.shape)
    return [(names[f], categories[c]) for f, c in zip(*cells, strict=True)]


def _feature_label(feature) -> str:
    if isinstance(feature, tuple):
        return f"{feature[0]}={feature[1]}"
    return str(feature)


def _mpl_text(label) -> str:
    """A label matplotlib prints literally: ``$`` would otherwise start mathtext."""
    return str(label).replace("$", r"\$")


#: Classes shown in the per-parameter plots (trace, rank, ESS, densities); with more classes
#: (digits has 10) ArviZ would need more subplots than its ``plot.max_subplots`` limit of 40.
MAX_PLOT_CLASSES = 4


def _subset(ds: xr.Dataset, selection: list, *, for_matplotlib: bool = True) -> xr.Dataset:
    """``ds`` restricted to the selected features and the first :data:`MAX_PLOT_CLASSES`
    classes.

    Categorical (feature, category) cells become one ``feature`` dim labelled
    ``feature=category``; a covariance keeps the selected rows and columns. With
    ``for_matplotlib`` the class and feature labels are escaped for matplotlib.
    """
    escape = _mpl_text if for_matplotlib else str
    labels = [escape(_feature_label(f)) for f in selection]
    if "class" in ds.dims and ds.sizes["class"] > MAX_PLOT_CLASSES:
        ds = ds.isel({"class": slice(0, MAX_PLOT_CLASSES)})
    if "category" in ds.dims:
        cells = {
            "feature": xr.DataArray([f for f, _ in selection], dims="cell"),
            "category": xr.DataArray([c for _, c in selection], dims="cell"),
        }
        ds = ds.sel(cells).drop_vars(["feature", "category"]).rename(cell="feature")
    else:
        ds = ds.sel(feature=selection)
        if "feature2" in ds.dims:
            ds = ds.sel(feature2=selection).assign_coords(feature2=labels)
    ds = ds.assign_coords(feature=labels)
    if for_matplotlib:
        ds = ds.assign_coords({"class": [escape(c) for c in ds["class"].values]})
    return ds


def _check_var_names(est, var_names, group: str = "posterior") -> list[str]:
    var_names = _default_vars(est) if var_names is None else list(var_names)
    available = list(est.idata_[group].data_vars)
    unknown = [name for name in var_names if name not in available]
    if unknown:
        raise ValueError(f"var_names: {unknown} are not in the {group}; choose from {available}.")
    return var_names


def _plot_data(est, var_names, max_features: int, groups=("posterior",)) -> xr.DataTree:
    """The chosen variables and features of ``groups`` as a small DataTree to plot."""
    var_names = _check_var_names(est, var_names)
    selection = selected_features(est, max_features=max_features)
    tree = {}
    for group in groups:
        if group not in est.idata_.children:
            raise ValueError(f"the fit has no {group} group (see the estimator's prior_draws).")
        tree[group] = _subset(est.idata_[group].to_dataset()[var_names], selection)
    return xr.DataTree.from_dict(tree)


def _constrained(plot):
    """Lay the figure out so titles and tick labels do not overlap; returns ``plot``."""
    plot.viz["figure"].item().set_layout_engine("constrained")
    return plot


# --------------------------------------------------------------------------------------------
# MCMC diagnostics.


def plot_trace(
    est,
    *,
    var_names: list[str] | None = None,
    max_features: int = 4,
    compact: bool | None = None,
) -> PlotCollection:
    """Trace and density of the posterior draws of each chain (``arviz.plot_trace_dist``).

    Parameters
    ----------
    est : fitted bayesgen estimator
    var_names : list of str, optional
        Posterior variables; default ``class_prob`` and ``feature_prob`` (GDA: ``mu``).
    max_features : int, default 4
        Features shown (see :func:`selected_features`).
    compact : bool, optional
        One row per variable with every class and feature overlaid (True), or one row per
        scalar (False). Default: compact when there are more than 12 scalars.

    Returns
    -------
    arviz_plots.PlotCollection
    """
    data = _plot_data(est, var_names, max_features)
    if compact is None:
        compact = sum(v.size // _draw_count(v) for v in data["posterior"].data_vars.values()) > 12
    return _constrained(az.plot_trace_dist(data, compact=compact))


def _draw_count(da) -> int:
    return da.sizes["chain"] * da.sizes["draw"]


def plot_rank(est, *, var_names: list[str] | None = None, max_features: int = 4) -> PlotCollection:
    """Rank plots of the chains (``arviz.plot_rank``); options as :func:`plot_trace`."""
    return _constrained(az.plot_rank(_plot_data(est, var_names, max_features)))


def plot_ess(est, *, var_names: list[str] | None = None, max_features: int = 4) -> PlotCollection:
    """Local effective sample size over quantiles (``arviz.plot_ess``); options as
    :func:`plot_trace`."""
    return _constrained(az.plot_ess(_plot_data(est, var_names, max_features)))


def has_energy(est) -> bool:
    """Whether the fit has NUTS sampler statistics (``inference="nuts"``)."""
    return "sample_stats" in est.idata_.children and "energy" in est.idata_["sample_stats"]


def plot_energy(est) -> PlotCollection:
    """Marginal and transition energy of NUTS (``arviz.plot_energy``), with the BFMI.

    Raises
    ------
    ValueError
        For ``inference="conjugate"``: exact independent draws have no Hamiltonian energy.
    """
    if not has_energy(est):
        raise ValueError(
            "plot_energy: the fit has no NUTS sample_stats (inference='conjugate' draws "
            "exact independent samples, so there is no energy to diagnose)."
        )
    tree = xr.DataTree.from_dict({"sample_stats": est.idata_["sample_stats"].to_dataset()})
    return _constrained(az.plot_energy(tree))


# --------------------------------------------------------------------------------------------
# Posterior against the closed forms and the prior.


def _reference_values(est, var_names: list[str]) -> dict[str, xr.Dataset]:
    """Point estimates to mark on the densities: label -> Dataset of the same variables."""
    stats = est.closed_form_
    mean_label = "closed form" if _is_gda(est) else "add-λ"
    references = {mean_label: stats[[name for name in var_names if name in stats]]}
    mle = {name: stats[_MLE_NAMES[name]] for name in var_names if _MLE_NAMES.get(name) in stats}
    references["MLE"] = xr.Dataset(mle)
    if est.map_ is not None:
        references["MAP"] = est.map_[[name for name in var_names if name in est.map_]]
    return {label: ds for label, ds in references.items() if ds.data_vars}


def _vertical_line(da: xr.DataArray, target, **kwargs):
    return target.axvline(float(da), **kwargs)


def plot_posterior_vs_closed_form(
    est, *, var_names: list[str] | None = None, max_features: int = 4
) -> PlotCollection:
    """Posterior densities with vertical lines at the closed-form estimates.

    Lines: the add-λ estimate (the closed-form posterior mean; "closed form" for GDA), the
    maximum-likelihood estimate and, when the estimator computed it (``compute_map=True``),
    PyMC's MAP point. Each line is labelled ("add-λ", "MLE", "MAP") and stored in the
    collection's ``viz`` under that label.

    Parameters
    ----------
    est : fitted bayesgen estimator
    var_names : list of str, optional
        Default ``class_prob`` and ``feature_prob`` (GDA: ``mu``).
    max_features : int, default 4

    Returns
    -------
    arviz_plots.PlotCollection
    """
    var_names = _check_var_names(est, var_names)
    selection = selected_features(est, max_features=max_features)
    data = _subset(est.idata_["posterior"].to_dataset()[var_names], selection)
    pc = az.plot_dist(data, visuals={"point_estimate": False, "point_estimate_text": False})
    handles = []
    for label, values in _reference_values(est, var_names).items():
        values = _subset(values.astype(np.float64), selection)
        style = _REFERENCE_STYLE[label]
        pc.map(_vertical_line, label, data=values, ignore_aes="all", label=label, **style)
        handles.append(plt.Line2D([], [], label=label, **style))
    figure = pc.viz["figure"].item()
    figure.legend(handles=handles, loc="outside upper center", ncols=len(handles))
    return _constrained(pc)


def plot_prior_posterior(
    est, *, var_names: list[str] | None = None, max_features: int = 4
) -> PlotCollection:
    """Prior and posterior densities side by side (``arviz.plot_prior_posterior``).

    Needs the ``prior`` group (``prior_draws > 0``, the default). Options as
    :func:`plot_trace`.
    """
    data = _plot_data(est, var_names, max_features, groups=("prior", "posterior"))
    return _constrained(az.plot_prior_posterior(data))


def plot_top_features(est, *, k: int = 10, prob: float = 0.94) -> Figure:
    """Forest of the ``k`` largest parameters of each class with credible intervals.

    Naive Bayes: the most probable features (categorical: feature=category cells) of each
    class, ranked by the closed-form estimate. GDA: the largest discriminant weights θ (for two
    classes one panel, the weights of the log-odds of the second class).

    Parameters
    ----------
    est : fitted bayesgen estimator
    k : int, default 10
    prob : float, default 0.94
        Mass of the thin equal-tailed interval; the thick one is always 50 %.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per class; each panel has one thin and one thick interval line per feature.
    """
    panels = _top_parameters(est, k)
    n_cols = min(len(panels), 3)
    n_rows = -(-len(panels) // n_cols)
    height = 0.35 * max(len(p[1]) for p in panels) + 1.2
    figure, axes = plt.subplots(
        n_rows, n_cols, figsize=(4.2 * n_cols, height * n_rows), squeeze=False, layout="constrained"
    )
    tail = (1 - prob) / 2
    for ax, (title, labels, draws) in zip(axes.flat, panels, strict=False):
        quantiles = np.quantile(draws, [tail, 0.25, 0.75, 1 - tail], axis=0)
        rows = np.arange(len(labels))[::-1]
        ax.hlines(rows, quantiles[0], quantiles[3], linewidth=1, color="tab:blue")
        ax.hlines(rows, quantiles[1], quantiles[2], linewidth=4, color="tab:blue")
        ax.plot(draws.mean(axis=0), rows, "o", color="white", markeredgecolor="tab:blue")
        ax.set_yticks(rows, [_mpl_text(label) for label in labels])
        ax.set_title(_mpl_text(title))
        ax.set_xlabel(_parameter_name(est))
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    return figure


def _parameter_name(est) -> str:
    return {
        "multinomial_nb": "P(word | class)",
        "bernoulli_nb": "P(feature present | class)",
        "categorical_nb": "P(feature = category | class)",
        "gda": "discriminant weight θ",
    }[_model(est)]


def _top_parameters(est, k: int) -> list[tuple[str, list[str], np.ndarray]]:
    """(panel title, feature labels, draws (n_samples, k)) for each class panel."""
    stats, posterior = est.closed_form_, est.idata_["posterior"]
    log_odds = _is_gda(est) and posterior["coef"].ndim == 3
    if _is_gda(est):
        coef = posterior["coef"]
        if log_odds:  # two classes: one weight vector, of the log-odds of the second
            coef = coef.expand_dims({"class": [est.classes_[1]]}, axis=2)
        reference = np.abs(np.atleast_2d(stats["coef"].values))
    else:
        coef = posterior["feature_prob"]
        reference = stats["feature_prob"].values
        if "category_mask" in stats:
            reference = np.where(stats["category_mask"].values, reference, -np.inf)
    names, categories = stats["feature"].values, stats.get("category")
    panels = []
    for c, title in enumerate(coef["class"].values):
        order = np.argsort(-reference[c], axis=None, kind="stable")[:k]
        order = order[np.isfinite(reference[c].ravel()[order])]
        if reference.ndim == 3:  # categorical: (feature, category) cells
            f, g = np.unravel_index(order, reference.shape[1:])
            cells = {
                "feature": xr.DataArray(f, dims="top"),
                "category": xr.DataArray(g, dims="top"),
            }
            labels = [f"{names[i]}={categories.values[j]}" for i, j in zip(f, g, strict=True)]
        else:
            cells = {"feature": xr.DataArray(order, dims="top")}
            labels = [str(names[i]) for i in order]
        top = coef.isel({"class": c, **cells}).transpose("chain", "draw", "top")
        name = f"log-odds of class {title}" if log_odds else f"class {title}"
        panels.append((name, labels, top.values.reshape(-1, len(order)).astype(np.float64)))
    return panels


# --------------------------------------------------------------------------------------------
# Gaussian discriminant analysis.


def _require_gda(est, name: str) -> None:
    if not _is_gda(est):
        raise ValueError(f"{name}: defined for GaussianDiscriminantAnalysis, not {_model(est)!r}.")


def plot_mu_pair(est, *, max_features: int | None = None) -> PlotMatrix:
    """Pair plot of the posterior draws of the class means μ (``arviz.plot_pair``), GDA only.

    Parameters
    ----------
    est : fitted GaussianDiscriminantAnalysis
    max_features : int, optional
        Features shown (:func:`selected_features`); the matrix has n_classes × max_features
        rows and columns. Default: as many as keep that at most 6 (the first 6 classes when
        there are more).

    Returns
    -------
    arviz_plots.PlotMatrix
    """
    _require_gda(est, "plot_mu_pair")
    n_classes = min(len(est.classes_), 6)
    if max_features is None:
        max_features = max(1, 6 // n_classes)
    data = _plot_data(est, ["mu"], max_features)
    data = data.isel({"class": slice(0, n_classes)})
    return _constrained(az.plot_pair(data))


@dataclass(frozen=True)
class _Plane:
    """A plane x = origin + basis @ c in feature space, with its 2-D coordinates c.

    ``projection`` (2, n_features) maps a point to c; ``projection @ basis`` is the identity.
    For the discriminant plane it is the projection in the metric of Σ⁻¹ (c = Dᵀ L⁻¹ (x - o)),
    not the Euclidean one, so that points sit where the classifier sees them.
    """

    origin: np.ndarray  # (n_features,)
    basis: np.ndarray  # (n_features, 2)
    projection: np.ndarray  # (2, n_features)
    axis_labels: tuple[str, str]

    def coordinates(self, X: np.ndarray) -> np.ndarray:
        return (X - self.origin) @ self.projection.T


def discriminant_plane(est, X) -> _Plane:
    """The plane in which :func:`plot_decision_boundary` draws the data and boundaries.

    For two features it is the feature plane itself. Otherwise it passes through the mean of
    the class means, spanned by the first two discriminant directions (directions that
    separate the class means most relative to the within-class covariance). With two classes
    there is only one such direction; the second is then the direction in which ``X`` varies
    most beyond it, measured in units of the within-class covariance.
    """
    stats = est.closed_form_
    names = [str(name) for name in stats["feature"].values]
    n_features = len(names)
    if n_features == 2:
        return _Plane(np.zeros(2), np.eye(2), np.eye(2), (names[0], names[1]))
    if n_features < 2:
        raise ValueError("plot_decision_boundary: needs at least two features.")
    class_prob = stats["class_prob"].values
    origin = class_prob @ stats["mu"].values
    chol = np.linalg.cholesky(stats["cov"].values)
    # In whitened coordinates z = L⁻¹(x - origin) the within-class covariance is the identity.
    means = np.linalg.solve(chol, (stats["mu"].values - origin).T).T
    between = (means * class_prob[:, None]).T @ means
    values, vectors = np.linalg.eigh(between)
    keep = values[::-1] > 1e-12 * max(values.max(), np.finfo(float).tiny)
    directions = vectors[:, ::-1][:, keep][:, :2]
    if directions.shape[1] < 2:
        spread = np.linalg.solve(chol, (np.asarray(X, dtype=np.float64) - origin).T).T
        spread -= spread @ directions @ directions.T  # what is left beyond the first direction
        _, _, rows = np.linalg.svd(spread - spread.mean(axis=0), full_matrices=False)
        directions = np.column_stack([directions, rows[: 2 - directions.shape[1]].T])
    # c = Dᵀ L⁻¹ (x - origin): the whitened coordinates along the discriminant directions. The
    # class scores depend on x only through them (the whitened class means lie in their span).
    projection = np.linalg.solve(chol.T, directions).T
    return _Plane(
        origin, chol @ directions, projection, ("discriminant direction 1", "direction 2")
    )


def plot_decision_boundary(
    est, X, y, *, n_boundaries: int = 100, random_seed: int | None = 0
) -> Figure:
    """The data with decision boundaries of many posterior draws, GDA only.

    Each thin line is the boundary of one posterior draw of (θ, θ₀) (for more than two classes,
    the edges of every class region); together they form the posterior band. The thick line is
    the boundary of the posterior-mean weights. For more than two features everything is drawn
    in :func:`discriminant_plane`: the points are projected onto it and the boundaries are
    those of the classifier restricted to that plane.

    Parameters
    ----------
    est : fitted GaussianDiscriminantAnalysis
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Class labels (colours the points).
    n_boundaries : int, default 100
        Posterior draws whose boundaries are drawn (at most the number of draws).
    random_seed : int, optional
        Which draws.

    Returns
    -------
    matplotlib.figure.Figure
        One axes; the draws' boundaries are contour sets with gid ``"posterior draw"``.
    """
    _require_gda(est, "plot_decision_boundary")
    X = _dense(X)
    codes = _class_codes(est, y)
    plane = discriminant_plane(est, X)
    points = plane.coordinates(X)
    grid = _grid(points)
    posterior = est.idata_["posterior"].to_dataset()[["coef", "intercept"]]
    flat = posterior.stack(sample=("chain", "draw")).transpose("sample", ...)
    rng = np.random.default_rng(random_seed)
    n_draws = min(n_boundaries, flat.sizes["sample"])
    chosen = rng.choice(flat.sizes["sample"], size=n_draws, replace=False)
    coef = flat["coef"].values[chosen].astype(np.float64)
    intercept = flat["intercept"].values[chosen].astype(np.float64)

    figure, ax = plt.subplots(figsize=(6.4, 5.2), layout="constrained")
    style = {"colors": "tab:gray", "alpha": 0.25, "linewidths": 0.8}
    for w, b in zip(coef, intercept, strict=True):
        _draw_boundary(ax, grid, plane, w, b, gid="posterior draw", **style)
    mean_coef, mean_intercept = est.coef_, est.intercept_
    if len(est.classes_) == 2:  # scikit-learn's (1, n_features) and (1,) shapes
        mean_coef, mean_intercept = mean_coef[0], mean_intercept[0]
    style = {"colors": "black", "linewidths": 2}
    _draw_boundary(ax, grid, plane, mean_coef, mean_intercept, gid="posterior mean", **style)
    for c, label in enumerate(est.classes_):
        mine = points[codes == c]
        ax.scatter(mine[:, 0], mine[:, 1], s=14, alpha=0.8, label=_mpl_text(label))
    ax.plot([], [], color="tab:gray", label=f"{n_draws} posterior draws")
    ax.plot([], [], color="black", linewidth=2, label="posterior mean")
    ax.legend(loc="best", fontsize="small")
    ax.set_xlabel(_mpl_text(plane.axis_labels[0]))
    ax.set_ylabel(_mpl_text(plane.axis_labels[1]))
    ax.set_xlim(grid[0][0, 0], grid[0][0, -1])
    ax.set_ylim(grid[1][0, 0], grid[1][-1, 0])
    return figure


def _grid(points: np.ndarray, size: int = 200) -> tuple[np.ndarray, np.ndarray]:
    low, high = points.min(axis=0), points.max(axis=0)
    margin = 0.1 * np.maximum(high - low, 1e-9)
    axes = [np.linspace(lo, hi, size) for lo, hi in zip(low - margin, high + margin, strict=True)]
    return np.meshgrid(*axes)


def _draw_boundary(ax, grid, plane: _Plane, coef, intercept, *, gid: str, **style) -> None:
    """Contours of the class boundaries of one linear classifier on the plane.

    ``coef`` (n_features,) and scalar ``intercept`` give the log-odds of two classes, whose
    boundary is one contour. ``coef`` (K, n_features) and ``intercept`` (K,) give K class
    scores; class k's region ends where its score equals the best of the others, one contour
    per class (shared edges are drawn twice, on top of each other).
    """
    cx, cy = grid
    coef = np.atleast_2d(coef)
    slope = coef @ plane.basis  # (K, 2)
    offset = coef @ plane.origin + np.atleast_1d(intercept)  # (K,)
    scores = offset[:, None, None] + slope[:, 0, None, None] * cx + slope[:, 1, None, None] * cy
    if len(scores) == 1:
        margins = scores
    else:
        margins = [scores[k] - np.delete(scores, k, axis=0).max(axis=0) for k in range(len(scores))]
    for margin in margins:
        if margin.min() < 0 < margin.max():
            ax.contour(cx, cy, margin, levels=[0.0], **style).set_gid(gid)


# --------------------------------------------------------------------------------------------
# Held-out data.


def _dense(X) -> np.ndarray:
    if sp.issparse(X):
        return X.toarray().astype(np.float64)
    return np.asarray(X, dtype=np.float64)


def _class_codes(est, y) -> np.ndarray:
    """Index of each label of ``y`` in ``est.classes_``."""
    lookup = {label: i for i, label in enumerate(est.classes_.tolist())}
    labels = np.asarray(y).tolist()
    unknown = sorted({str(label) for label in labels if label not in lookup})
    if unknown:
        raise ValueError(f"y: labels {unknown[:10]} are not among the fitted classes_.")
    return np.array([lookup[label] for label in labels], dtype=np.int64)


def _take_rows(X, rows: np.ndarray):
    if isinstance(X, pd.DataFrame):
        return X.iloc[rows]
    if sp.issparse(X):
        return sp.csr_array(X)[rows]
    return np.asarray(X)[rows]


def calibration_table(est, X, y, *, n_bins: int = 10, prob: float = 0.94) -> pd.DataFrame:
    """Binned top-label calibration: for each bin of predicted confidence (the probability of
    the predicted class), the mean confidence, the accuracy, and an equal-tailed ``prob``
    interval for the accuracy (Jeffreys' Beta(k + ½, n - k + ½)).

    Returns
    -------
    pandas.DataFrame
        Columns ``lower_edge, upper_edge, n, confidence, accuracy, accuracy_lower,
        accuracy_upper``; empty bins are dropped.
    """
    proba = est.predict_proba(X)
    codes = _class_codes(est, y)
    confidence = proba.max(axis=1)
    correct = proba.argmax(axis=1) == codes
    edges = np.linspace(1 / proba.shape[1], 1, n_bins + 1)
    bins = np.clip(np.searchsorted(edges, confidence, side="right") - 1, 0, n_bins - 1)
    rows = []
    tail = (1 - prob) / 2
    for b in np.unique(bins):
        inside = bins == b
        n, k = int(inside.sum()), int(correct[inside].sum())
        lower, upper = scipy_stats.beta.ppf([tail, 1 - tail], k + 0.5, n - k + 0.5)
        # Jeffreys' interval reaches the end it touches (Brown, Cai & DasGupta 2001).
        lower, upper = (0.0 if k == 0 else lower), (1.0 if k == n else upper)
        rows.append((edges[b], edges[b + 1], n, confidence[inside].mean(), k / n, lower, upper))
    columns = ["lower_edge", "upper_edge", "n", "confidence", "accuracy"]
    return pd.DataFrame(rows, columns=[*columns, "accuracy_lower", "accuracy_upper"])


def plot_calibration(est, X, y, *, n_bins: int = 10, prob: float = 0.94) -> Figure:
    """Reliability diagram on held-out data (see :func:`calibration_table`).

    Top: accuracy against mean confidence per bin, with ``prob`` intervals and the diagonal of
    perfect calibration; the title gives the expected calibration error (ECE). Bottom: how
    many examples fall in each bin.

    Returns
    -------
    matplotlib.figure.Figure
        Two axes.
    """
    table = calibration_table(est, X, y, n_bins=n_bins, prob=prob)
    low = min(table["accuracy_lower"].min(), table["lower_edge"].min())
    chance = 1 / len(est.classes_)
    figure, (ax, counts) = plt.subplots(
        2, 1, figsize=(5.5, 6), sharex=True, height_ratios=[3, 1], layout="constrained"
    )
    ax.plot([chance, 1], [chance, 1], ":", color="gray", label="perfect calibration")
    ax.vlines(table["confidence"], table["accuracy_lower"], table["accuracy_upper"])
    ax.plot(table["confidence"], table["accuracy"], "o", label=f"accuracy ({prob:.0%} interval)")
    ece = float(
        np.sum(table["n"] * np.abs(table["accuracy"] - table["confidence"])) / table["n"].sum()
    )
    ax.set_title(f"Reliability diagram (ECE = {ece:.3f}, {int(table['n'].sum())} examples)")
    ax.set_ylabel("accuracy")
    ax.set_ylim(min(low, chance) - 0.05, 1.02)
    ax.legend(loc="upper left", fontsize="small")
    widths = table["upper_edge"] - table["lower_edge"]
    counts.bar(
        table["lower_edge"],
        table["n"],
        width=widths,
        align="edge",
        color="tab:blue",
        alpha=0.6,
        edgecolor="white",
    )
    counts.set_xlabel("confidence (predicted probability of the predicted class)")
    counts.set_ylabel("examples")
    return figure


def _spread(n: int, size: int) -> np.ndarray:
    """Up to ``size`` indices spread evenly over range(n) (data are often sorted by class)."""
    if n <= size:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, size).round().astype(np.int64))


def plot_predictive_intervals(est, X, y, *, max_examples: int = 50, prob: float = 0.94) -> Figure:
    """Posterior of p(true class | x) for held-out examples, with credible intervals.

    Parameters
    ----------
    est : fitted bayesgen estimator
    X, y : held-out data
    max_examples : int, default 50
        At most this many examples, spread evenly over the rows of X.
    prob : float, default 0.94
        Mass of the equal-tailed interval over the posterior draws.

    Returns
    -------
    matplotlib.figure.Figure
        One axes; examples sorted by their posterior mean, misclassified ones in red.
    """
    codes = _class_codes(est, y)
    n_examples = len(codes)
    rows = _spread(n_examples, max_examples)
    draws = est.predict_proba_draws(_take_rows(X, rows)).values  # chain, draw, obs, class
    codes = codes[rows]
    true_prob = draws[..., np.arange(len(rows)), codes].reshape(-1, len(rows))
    mean = true_prob.mean(axis=0)
    tail = (1 - prob) / 2
    lower, upper = np.quantile(true_prob, [tail, 1 - tail], axis=0)
    predicted = draws.mean(axis=(0, 1)).argmax(axis=1)
    order = np.argsort(mean, kind="stable")
    figure, ax = plt.subplots(figsize=(max(6.0, 0.14 * len(rows) + 2), 4), layout="constrained")
    position = np.arange(len(rows))
    sorted_wrong = predicted[order] != codes[order]
    for wrong, color, label in ((False, "tab:blue", "correct"), (True, "tab:red", "misclassified")):
        keep = sorted_wrong == wrong
        if keep.any():
            x = position[keep]
            ax.vlines(x, lower[order][keep], upper[order][keep], color=color, linewidth=1.5)
            ax.plot(x, mean[order][keep], "o", markersize=4, color=color, label=label)
    ax.axhline(1 / len(est.classes_), color="gray", linestyle=":", label="chance")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(f"held-out example, sorted ({len(rows)} of {n_examples})")
    ax.set_ylabel(f"p(true class | x), {prob:.0%} interval")
    ax.legend(loc="lower right", fontsize="small")
    return figure
