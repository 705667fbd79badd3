"""Per-class feature densities of a naive Bayes block: the training rows, the exact posterior
predictive, and how uncertain the class's density is.

One panel per feature and one colour per class, each panel holding

* the histogram of the class's training rows (a density; for counts, the share of the rows at
  each count),
* the exact posterior predictive of a new row's feature given the class, from the closed form:
  the parameters integrated out (Student-t for a normal block, negative binomial for a
  Poisson one),
* a band: at each x, the central ``prob`` interval of the plug-in density p(x | θ) over
  posterior draws θ (N(x | μ, σ²) or Poisson(x | λ)), the uncertainty about the density
  itself.

Which kind of block a posterior holds is decided in one place, :func:`density_kind`, by the
variables it holds (:data:`KINDS`): no model is looked up by name. :func:`plot_block_feature_
densities` draws a block from its pieces (a model of several blocks draws each);
:func:`plot_feature_densities` draws a fitted estimator.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp
import xarray as xr
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from scipy import stats as scipy_stats

from bayesgen.families import gaussian_nb
from bayesgen.maths import gamma_poisson
from bayesgen.maths import normal_inverse_gamma as nig
from bayesgen.plotting.selection import MAX_PLOT_CLASSES, legible_ticks, mpl_text

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from bayesgen.families.base import Family

__all__ = [
    "KINDS",
    "DensityKind",
    "density_kind",
    "plot_block_feature_densities",
    "plot_feature_densities",
    "training_rows_or_none",
]

#: Points of the x grid of a continuous feature.
GRID_POINTS = 200
#: Most counts (x positions) a discrete panel shows; a wider range is strided.
MAX_COUNTS = 250
#: Most posterior draws the band is computed from (evenly spaced over all chains).
MAX_DRAWS = 200


@dataclass(frozen=True)
class DensityKind:
    """How the feature densities of one kind of block are computed.

    Attributes
    ----------
    name : str
        What the block's features are ("normal", "Poisson").
    variables : tuple of str
        The posterior variables, each with dims (chain, draw, class, feature), that make a
        posterior this kind and that the band is drawn from.
    discrete : bool
        Counts: the densities are probabilities at whole numbers.
    predictive_name : str
        The exact posterior predictive's law, for captions ("Student-t").
    plug_in_name : str
        The plug-in density, for captions ("N(x | μ, σ²)").
    predictive : callable
        ``predictive(model, estimates, feature, grid)``: the exact posterior predictive
        density of feature number ``feature`` at the points ``grid`` (n,), from the closed
        form ``estimates``; shape (class, n).
    plug_in : callable
        ``plug_in(draws, grid)``: the density at ``grid`` (n,) given each draw of the
        variables (``draws[name]`` of shape (draw, class)); shape (draw, class, n).
    support : callable
        ``support(draws, observed)``: the x grid of a panel, from the draws and the training
        values (None without rows).
    """

    name: str
    variables: tuple[str, ...]
    discrete: bool
    predictive_name: str
    plug_in_name: str
    predictive: Callable[..., np.ndarray]
    plug_in: Callable[[dict, np.ndarray], np.ndarray]
    support: Callable[[dict, np.ndarray | None], np.ndarray]


# -- normal features ---------------------------------------------------------------------------


def _student_t_predictive(model, estimates: xr.Dataset, feature: int, grid) -> np.ndarray:
    """Each class's Student-t predictive (2 a_n degrees of freedom, location m_n, scale
    √(b_n (κ_n + 1) / (a_n κ_n))) of one feature."""
    params = gaussian_nb.posterior_parameters(estimates)
    cell = {name: value[:, feature : feature + 1] for name, value in params.items()}
    return np.exp(nig.predictive_log_density(grid[:, None], cell)).T


def _normal_plug_in(draws: dict, grid: np.ndarray) -> np.ndarray:
    mu, var = draws["mu"][..., None], draws["var"][..., None]
    return scipy_stats.norm.pdf(grid, loc=mu, scale=np.sqrt(var))


def _normal_support(draws: dict, observed: np.ndarray | None) -> np.ndarray:
    """Four posterior-mean SDs either side of every class's mean, and every training value."""
    centre = draws["mu"].mean(axis=0)
    spread = 4.0 * np.sqrt(draws["var"].mean(axis=0))
    low, high = np.min(centre - spread), np.max(centre + spread)
    observed = _observed(observed)
    if observed is not None and observed.size:
        low, high = min(low, observed.min()), max(high, observed.max())
    return np.linspace(low, high, GRID_POINTS)


# -- count features ----------------------------------------------------------------------------


def _negative_binomial_predictive(model, estimates: xr.Dataset, feature: int, grid) -> np.ndarray:
    """Each class's negative binomial NB(a₀ + S_kj, b₀ + N_k) of one feature."""
    shape, rate = model.posterior_parameters(estimates)
    log_pmf = gamma_poisson.negative_binomial_log_pmf(
        grid[:, None], shape[:, feature : feature + 1], rate
    )
    return np.exp(log_pmf).T


def _poisson_plug_in(draws: dict, grid: np.ndarray) -> np.ndarray:
    return scipy_stats.poisson.pmf(grid, draws["feature_rate"][..., None])


def _count_support(draws: dict, observed: np.ndarray | None) -> np.ndarray:
    """The whole numbers within four posterior-mean SDs of every class's mean rate, and every
    training count; strided to at most :data:`MAX_COUNTS` of them."""
    rate = draws["feature_rate"].mean(axis=0)
    spread = 4.0 * np.sqrt(rate) + 1.0
    low, high = np.min(rate - spread), np.max(rate + spread)
    observed = _observed(observed)
    if observed is not None and observed.size:
        low, high = min(low, observed.min()), max(high, observed.max())
    low, high = max(0, int(np.floor(low))), int(np.ceil(high))
    stride = -(-(high - low + 1) // MAX_COUNTS)
    return np.arange(low, high + 1, stride, dtype=np.float64)


#: The kinds of block drawn, in the order :func:`density_kind` tries them. A new kind of
#: per-feature block adds one entry here.
KINDS: tuple[DensityKind, ...] = (
    DensityKind(
        name="normal",
        variables=("mu", "var"),
        discrete=False,
        predictive_name="Student-t",
        plug_in_name="N(x | μ, σ²)",
        predictive=_student_t_predictive,
        plug_in=_normal_plug_in,
        support=_normal_support,
    ),
    DensityKind(
        name="Poisson",
        variables=("feature_rate",),
        discrete=True,
        predictive_name="negative binomial",
        plug_in_name="Poisson(x | λ)",
        predictive=_negative_binomial_predictive,
        plug_in=_poisson_plug_in,
        support=_count_support,
    ),
)


def density_kind(posterior) -> DensityKind | None:
    """The kind of per-feature block whose variables ``posterior`` (a Dataset or DataTree
    node) holds, each with dims (…, class, feature); None for any other model (GDA's ``mu``
    has a covariance, not a ``var``, beside it).

    Examples
    --------
    >>> import xarray as xr
    >>> from bayesgen.plotting.feature_densities import density_kind
    >>> cell = (("class", "feature"), [[1.0]])
    >>> density_kind(xr.Dataset({"mu": cell, "var": cell})).predictive_name
    'Student-t'
    >>> density_kind(xr.Dataset({"mu": cell})) is None
    True
    """
    for kind in KINDS:
        if all(
            name in posterior.data_vars and {"class", "feature"} <= set(posterior[name].dims)
            for name in kind.variables
        ):
            return kind
    return None


# -- the plot ----------------------------------------------------------------------------------


def plot_feature_densities(
    est, *, features: Sequence | None = None, max_features: int = 6, prob: float = 0.94
) -> Figure:
    """Per-class densities of the features of a fitted naive Bayes model of normal or count
    features (GaussianNB, PoissonNB): training rows, exact predictive and a band.

    See :func:`plot_block_feature_densities`, which this calls with the estimator's model,
    closed form, posterior and training rows (:meth:`training_rows`; a fit that kept none,
    by ``partial_fit`` or on dask input, is drawn without histograms).

    Parameters
    ----------
    est : fitted GaussianNB or PoissonNB
    features : sequence of feature names, optional
        The features to draw, in this order. Default: the ``max_features`` the model ranks
        first (:meth:`~bayesgen.families.base.Family.feature_scores`: for GaussianNB the
        class means furthest apart in within-class SDs).
    max_features : int, default 6
    prob : float, default 0.94
        Mass of the band's pointwise equal-tailed interval.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayesgen import GaussianNB
    >>> X = [[0.0, 1.0], [1.0, 0.5], [0.5, 0.0], [3.0, 3.5], [4.0, 3.0], [3.5, 4.0]]
    >>> y = ["a", "a", "a", "b", "b", "b"]
    >>> est = GaussianNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    >>> figure = plot_feature_densities(est.fit(X, y))
    >>> [ax.get_title() for ax in figure.axes]
    ['x0', 'x1']
    >>> sorted(line.get_gid() for line in figure.axes[0].lines)
    ['predictive:a', 'predictive:b']
    """
    est.check_fitted()
    X_rows, y_codes = training_rows_or_none(est)
    return plot_block_feature_densities(
        est.model_,
        est.closed_form_,
        est.idata_["posterior"].to_dataset(),
        X_rows,
        y_codes,
        est.classes_,
        est.closed_form_["feature"].values,
        features=features,
        max_features=max_features,
        prob=prob,
    )


def plot_block_feature_densities(
    model: Family,
    estimates: xr.Dataset,
    posterior: xr.Dataset,
    X_rows,
    y_codes,
    classes: Sequence,
    feature_names: Sequence,
    *,
    features: Sequence | None = None,
    max_features: int = 6,
    prob: float = 0.94,
    max_draws: int = MAX_DRAWS,
) -> Figure:
    """Per-class densities of the features of one block, from its pieces.

    Parameters
    ----------
    model : Family
        The block (its ``feature_scores`` rank the features; a Poisson block gives its
        posterior's Gamma parameters).
    estimates : xarray.Dataset
        The block's closed form (its ``from_statistics``), features in the order of
        ``feature_names``.
    posterior : xarray.Dataset
        Posterior draws of the block's variables under their own names (``mu`` and ``var``,
        or ``feature_rate``), dims (chain, draw, class, feature); :func:`density_kind` tells
        the kind of block from them.
    X_rows : array-like or sparse matrix of shape (n_samples, n_features), or None
        The block's training rows (None: no histograms).
    y_codes : array-like of int of shape (n_samples,), or None
        Each row's class, an index into ``classes``.
    classes : sequence
        The class labels; the first :data:`~bayesgen.plotting.selection.MAX_PLOT_CLASSES` are
        drawn.
    feature_names : sequence
        The block's feature names, in its column order.
    features, max_features, prob
        As in :func:`plot_feature_densities`.
    max_draws : int, default 200
        Most posterior draws the band is computed from, evenly spaced over the chains.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per feature, titled with its name. In each, per class label c: the
        predictive curve is the line with gid ``"predictive:c"``; the band is the artist
        with gid ``"band:c"`` (a filled area; for counts one vertical segment per count);
        the histogram's patches have gid ``"rows:c"``.

    Raises
    ------
    ValueError
        For a posterior of no kind in :data:`KINDS`, pieces whose sizes disagree, unknown
        ``features``, or ``prob`` outside (0, 1).
    """
    kind = density_kind(posterior)
    if kind is None:
        expected = " or ".join(str(list(k.variables)) for k in KINDS)
        raise ValueError(
            f"plot_feature_densities: expected a posterior of per-feature variables {expected} "
            f"with dims (class, feature); got {sorted(map(str, posterior.data_vars))}."
        )
    if not 0.0 < prob < 1.0:
        raise ValueError(f"prob: expected a number in (0, 1); got {prob!r}.")
    feature_names = np.asarray(feature_names)
    if X_rows is not None and not sp.issparse(X_rows):
        X_rows = np.asarray(X_rows, dtype=np.float64)
    _check_sizes(posterior, estimates, X_rows, y_codes, len(classes), len(feature_names))
    chosen = _chosen_features(model, estimates, feature_names, features, max_features)
    n_classes = min(len(classes), MAX_PLOT_CLASSES)
    thinned = _thinned(posterior, max_draws)
    n_cols = min(len(chosen), 3)
    n_rows = -(-len(chosen) // n_cols)
    figure, axes = plt.subplots(
        n_rows, n_cols, figsize=(4.2 * n_cols, 3.0 * n_rows + 0.8), squeeze=False,
        layout="constrained",
    )  # fmt: skip
    for ax, feature in zip(axes.flat, chosen, strict=False):
        draws = {
            name: thinned[name].isel(feature=feature).transpose("sample", "class").values
            for name in kind.variables
        }
        draws = {name: value[:, :n_classes].astype(np.float64) for name, value in draws.items()}
        column = None if X_rows is None else _column(X_rows, feature)
        grid = kind.support(draws, column)
        predictive = kind.predictive(model, estimates, feature, grid)[:n_classes]
        band = np.quantile(kind.plug_in(draws, grid), [(1 - prob) / 2, (1 + prob) / 2], axis=0)
        for k in range(n_classes):
            label, color = str(classes[k]), f"C{k}"
            if column is not None:
                _draw_rows(ax, kind, column[np.asarray(y_codes) == k], grid, color, label)
            _draw_band(ax, kind, grid, band[0, k], band[1, k], color, label)
            style = {"marker": "o", "markersize": 3} if kind.discrete else {}
            ax.plot(grid, predictive[k], color=color, lw=1.6, gid=f"predictive:{label}", **style)
        ax.set_title(mpl_text(feature_names[feature]))
        ax.set_xlabel("count" if kind.discrete else "x")
        ax.set_ylabel("probability" if kind.discrete else "density")
    for ax in axes.flat[len(chosen) :]:
        ax.set_visible(False)
    _legend(
        figure, kind, classes[:n_classes], prob, thinned.sizes["sample"], X_rows is not None, n_cols
    )
    if len(classes) > n_classes:
        shown = ", ".join(str(label) for label in classes[:n_classes])
        figure.suptitle(
            mpl_text(f"{n_classes} of {len(classes)} classes shown ({shown})"), fontsize="medium"
        )
    legible_ticks(figure)
    return figure


def training_rows_or_none(est):
    """``est.training_rows()``, or (None, None) for a fit that kept none."""
    if "observed_data" not in est.idata_.children:
        return None, None
    try:
        return est.training_rows()
    except ValueError:  # partial_fit or dask: only the statistics were kept
        return None, None


def _check_sizes(posterior, estimates, X_rows, y_codes, n_classes: int, n_features: int):
    sizes = {
        "posterior": (posterior.sizes["class"], posterior.sizes["feature"]),
        "estimates": (estimates.sizes["class"], estimates.sizes["feature"]),
    }
    for name, size in sizes.items():
        if size != (n_classes, n_features):
            raise ValueError(
                f"{name}: expected {n_classes} classes and {n_features} features (those of "
                f"classes and feature_names); got {size[0]} and {size[1]}."
            )
    if X_rows is None:
        return
    if X_rows.shape[1] != n_features:
        raise ValueError(
            f"X_rows: expected {n_features} columns (feature_names); got {X_rows.shape[1]}."
        )
    if y_codes is None or len(y_codes) != X_rows.shape[0]:
        raise ValueError(f"y_codes: expected one class code per row of X_rows ({X_rows.shape[0]}).")


def _chosen_features(model, estimates, feature_names, features, max_features) -> list[int]:
    """Column numbers of the features to draw: those given, or the model's first."""
    if features is not None:
        lookup = {str(name): j for j, name in enumerate(feature_names)}
        unknown = [str(name) for name in features if str(name) not in lookup]
        if unknown or not len(features):
            raise ValueError(
                f"features: expected names among {list(lookup)[:10]}; got {list(features)[:10]}."
            )
        return [lookup[str(name)] for name in features]
    if isinstance(max_features, bool) or not isinstance(max_features, int) or max_features < 1:
        raise ValueError(f"max_features: expected an integer >= 1; got {max_features!r}.")
    scores = np.asarray(model.feature_scores(estimates), dtype=np.float64)
    order = np.argsort(-scores, kind="stable")
    order = order[np.isfinite(scores[order])][:max_features]
    return [int(j) for j in order] if order.size else list(range(min(max_features, scores.size)))


def _thinned(posterior: xr.Dataset, max_draws: int) -> xr.Dataset:
    """At most ``max_draws`` draws, evenly spaced over the chains, along one dim ``sample``."""
    stacked = posterior.stack(sample=("chain", "draw"))
    total = stacked.sizes["sample"]
    keep = np.unique(np.linspace(0, total - 1, min(total, max_draws)).round().astype(int))
    return stacked.isel(sample=keep).drop_vars(["sample", "chain", "draw"])


def _observed(values: np.ndarray | None) -> np.ndarray | None:
    """The values without the missing entries (NaN) of a fit that had some."""
    return None if values is None else values[~np.isnan(values)]


def _column(X_rows, feature: int) -> np.ndarray:
    if sp.issparse(X_rows):
        return sp.csc_array(X_rows)[:, [feature]].toarray().ravel().astype(np.float64)
    return np.asarray(X_rows, dtype=np.float64)[:, feature]


def _draw_rows(ax, kind: DensityKind, values: np.ndarray, grid: np.ndarray, color, label):
    """The class's training values as a density histogram: bins one count (or one stride of
    the grid) wide, centred on the counts; ``auto`` bins for real values. Missing entries
    (NaN) are not drawn."""
    values = _observed(values)
    if not values.size:
        return
    if kind.discrete:
        step = grid[1] - grid[0] if grid.size > 1 else 1.0
        bins = np.append(grid - step / 2, grid[-1] + step / 2)
    else:
        bins = np.histogram_bin_edges(values, bins="auto")
        bins = bins if bins.size <= 41 else np.histogram_bin_edges(values, bins=40)
    _, _, patches = ax.hist(
        values, bins=bins, density=True, histtype="stepfilled", color=color, alpha=0.18
    )
    for patch in patches:
        patch.set_gid(f"rows:{label}")


def _draw_band(ax, kind: DensityKind, grid, low, high, color, label) -> None:
    if kind.discrete:  # a probability at each count: one interval per count
        ax.vlines(grid, low, high, color=color, lw=4, alpha=0.35, gid=f"band:{label}")
    else:
        ax.fill_between(grid, low, high, color=color, alpha=0.3, lw=0, gid=f"band:{label}")


def _legend(
    figure, kind: DensityKind, classes, prob: float, n_draws: int, rows: bool, n_panels: int
) -> None:
    """The classes' colours and what the line, band and histogram are, below the panels: in
    as many columns as the ``n_panels`` panels of a row leave room for (the band's label is
    as wide as a panel)."""
    handles = [Patch(color=f"C{k}", label=mpl_text(label)) for k, label in enumerate(classes)]
    handles.append(Line2D([], [], color="0.2", label=f"exact predictive ({kind.predictive_name})"))
    handles.append(
        Patch(
            color="0.2",
            alpha=0.3,
            label=f"{prob * 100:g} % band of {kind.plug_in_name} over {n_draws} posterior draws",
        )
    )
    if rows:
        handles.append(Patch(color="0.2", alpha=0.18, label="training rows of the class"))
    columns = {1: 1, 2: 2}.get(n_panels, 4)
    figure.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), columns))
