"""Plots of Gaussian discriminant analysis: the joint posterior of the class means μ, and the
decision boundaries of posterior draws on the data.

Whether a model can be drawn this way follows from its parameters, not its name: the pair
plot needs class means ``mu``, the boundaries a linear classifier (``coef``, ``intercept``).
Each returns an ArviZ ``PlotMatrix`` or a matplotlib ``Figure``; all are importable from
:mod:`bayesgen.plotting.plots`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import arviz as az
import matplotlib.pyplot as plt
import numpy as np

from bayesgen.plotting.selection import (
    class_codes,
    classes_note,
    constrained,
    dense,
    mpl_text,
    plot_tree,
    require_parameters,
)

if TYPE_CHECKING:
    from arviz_plots import PlotMatrix
    from matplotlib.figure import Figure

#: Width of the pair plot, in inches: at the report's 100 dpi it fits the page (72rem) unshrunk.
PAIR_WIDTH_IN = 11.0
#: Font size of its tick and axis labels, in points.
PAIR_FONT_PT = 10.0


def plot_mu_pair(est, *, max_features: int | None = None) -> PlotMatrix:
    """Pair plot of the posterior draws of the class means μ (``arviz.plot_pair``).

    Defined for models with class means ``mu`` (GDA); others get a ValueError.

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

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayesgen import GaussianDiscriminantAnalysis
    >>> X = [[0.0, 1.0], [1.0, 0.5], [0.5, 0.0], [3.0, 3.5], [4.0, 3.0], [3.5, 4.0]]
    >>> y = ["a", "a", "a", "b", "b", "b"]
    >>> est = GaussianDiscriminantAnalysis(
    ...     inference="conjugate", compute_map=False, draws=100, random_seed=0
    ... ).fit(X, y)
    >>> from bayesgen.plotting.plots import plot_mu_pair
    >>> type(plot_mu_pair(est)).__name__
    'PlotMatrix'
    """
    require_parameters(est, "plot_mu_pair", ("mu",))
    n_classes = min(len(est.classes_), 6)
    if max_features is None:
        max_features = max(1, 6 // n_classes)
    data = plot_tree(est, ["mu"], max_features)
    data = data.isel({"class": slice(0, n_classes)})
    # ArviZ sizes the matrix for a screen; the report shows it at most PAIR_WIDTH_IN wide, so a
    # wider one would be shrunk and its labels with it.
    n_rows = data["posterior"].to_dataset()["mu"].isel(chain=0, draw=0).size
    side = min(PAIR_WIDTH_IN, 1.8 * n_rows + 1.0)
    matrix = az.plot_pair(data, figure_kwargs={"figsize": (side, side * 0.85)})
    figure = matrix.viz["figure"].item()
    for ax in figure.axes:
        ax.tick_params(labelsize=PAIR_FONT_PT)
        ax.xaxis.label.set_fontsize(PAIR_FONT_PT)
        ax.yaxis.label.set_fontsize(PAIR_FONT_PT)
    return constrained(matrix, note=classes_note(est, shown=n_classes))


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

    Examples
    --------
    >>> from bayesgen import GaussianDiscriminantAnalysis
    >>> X = [[0.0, 1.0], [1.0, 0.5], [0.5, 0.0], [3.0, 3.5], [4.0, 3.0], [3.5, 4.0]]
    >>> y = ["a", "a", "a", "b", "b", "b"]
    >>> est = GaussianDiscriminantAnalysis(
    ...     inference="conjugate", compute_map=False, draws=100, random_seed=0
    ... ).fit(X, y)
    >>> from bayesgen.plotting.plots import discriminant_plane
    >>> plane = discriminant_plane(est, X)  # two features: the plane is the data's own
    >>> plane.axis_labels
    ('x0', 'x1')
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
    """The data with decision boundaries of many posterior draws.

    Defined for linear classifiers, whose posterior has ``coef`` and ``intercept`` (GDA);
    others get a ValueError.

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

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayesgen import GaussianDiscriminantAnalysis
    >>> X = [[0.0, 1.0], [1.0, 0.5], [0.5, 0.0], [3.0, 3.5], [4.0, 3.0], [3.5, 4.0]]
    >>> y = ["a", "a", "a", "b", "b", "b"]
    >>> est = GaussianDiscriminantAnalysis(
    ...     inference="conjugate", compute_map=False, draws=100, random_seed=0
    ... ).fit(X, y)
    >>> from bayesgen.plotting.plots import plot_decision_boundary
    >>> fig = plot_decision_boundary(est, X, y, n_boundaries=10)
    >>> type(fig).__name__, len(fig.axes)
    ('Figure', 1)
    """
    require_parameters(est, "plot_decision_boundary", ("coef", "intercept"))
    X = dense(X)
    codes = class_codes(est, y)
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
        ax.scatter(mine[:, 0], mine[:, 1], s=14, alpha=0.8, label=mpl_text(label))
    ax.plot([], [], color="tab:gray", label=f"{n_draws} posterior draws")
    ax.plot([], [], color="black", linewidth=2, label="posterior mean")
    ax.legend(loc="best", fontsize="small")
    ax.set_xlabel(mpl_text(plane.axis_labels[0]))
    ax.set_ylabel(mpl_text(plane.axis_labels[1]))
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
