"""Plots of the Bayesian workflow around a fit: the posterior predictive check and PSIS
leave-one-out cross-validation.

Both need what :meth:`fit` stores since the rows were kept (:mod:`bayesgen.inference.observed`): the
training rows (``observed_data``) and their pointwise log-likelihood (``log_likelihood``).
A model file written before then has neither; the functions say so and the report lists them
as skipped. Each returns a matplotlib ``Figure`` and leaves ``est.idata_`` as it was.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

import arviz as az
import matplotlib.pyplot as plt
import numpy as np
import xarray as xr
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from bayesgen.checks.loo import joint_loo
from bayesgen.inference import simulation
from bayesgen.plotting.selection import mpl_text

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from bayesgen.families import Family

#: Variables of the training rows that hold the rows themselves, not statistics of them.
_ROW_VARIABLES = frozenset({"y", "X", "X_data", "X_indices", "X_indptr", "sample_weight"})
#: ``source`` attribute of the ``constant_data`` variables computed from the training rows
#: (:mod:`bayesgen.inference.observed`); model files of the earlier layout keep them in
#: observed_data.
_FROM_TRAINING_ROWS = "training rows"
#: The note under the figure where some row's Pareto k is above the threshold: the first
#: sentence of the warning ``arviz.loo`` raises then.
_PARETO_WARNING = (
    "PSIS: Estimated shape parameter of Pareto distribution is greater than {good_k:.2f} for "
    "one or more samples."
)
_OBSERVED_STYLE = {"color": "black", "linewidth": 2}
_SIMULATED_COLOR = "tab:blue"

__all__ = ["has_log_likelihood", "has_observed_data", "plot_loo", "plot_ppc"]


def has_observed_data(est) -> bool:
    """Whether the fit holds its training rows (``observed_data``), which :func:`plot_ppc`
    simulates again; model files written before the rows were stored lack them.

    Examples
    --------
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    >>> est = est.fit(X, y)
    >>> from bayesgen.plotting.workflow import has_observed_data
    >>> has_observed_data(est)
    True
    """
    return "observed_data" in est.idata_.children


def has_log_likelihood(est) -> bool:
    """Whether the fit holds the pointwise log-likelihood that :func:`plot_loo` reads.

    Examples
    --------
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    >>> est = est.fit(X, y)
    >>> from bayesgen.plotting.workflow import has_log_likelihood
    >>> has_log_likelihood(est)
    True
    """
    return "log_likelihood" in est.idata_.children


# --------------------------------------------------------------------------------------------
# Posterior predictive check.


def plot_ppc(
    est, *, draws: int = 100, random_seed=0, var_names: list[str] | None = None, prob: float = 0.94
) -> Figure:
    """Posterior predictive check: statistics of the training data against data sets
    simulated from the posterior, as ECDFs and as their difference from the simulated median.

    For ``draws`` posterior draws θ, every training row is drawn again from p(x | y_i, θ)
    (see :meth:`~bayesgen.estimators.classifier.GenerativeClassifier.sample_posterior_predictive`)
    and
    each statistic is computed on the simulated data set. One column per statistic:

    * top: the ECDF of its values (over rows, or over class × feature cells), the share of
      values at or below each x, in the training data (black) and in each simulated data set
      (blue). A model that fits the statistic has the black curve inside the blue spread.
    * bottom: each ECDF minus the pointwise median of the simulated ones, so that a shift of
      one or two hundredths, invisible on the top panel, shows: the blue band holds the
      central ``prob`` of the simulated data sets at each x, and the black line is the
      training data. Black above the band means more values at or below x than the model
      simulates: its curve lies left of theirs.

    The x axis spans every value unless a few extreme ones would squeeze the rest into a
    corner: then it stops at the 0.5 % and 99.5 % quantiles of all values (observed and
    simulated) and its label says so. The simulation goes into a copy: ``est.idata_`` keeps
    its groups (no predictive group is added).

    Parameters
    ----------
    est : fitted bayesgen estimator
    draws : int, default 100
        Posterior draws to simulate from, spread evenly over the chains.
    random_seed : int, optional
        Seed of the simulation; the default 0 draws the same figure every time.
    var_names : list of str, optional
        Statistics of the training rows to check; by default those the model family names
        (:attr:`~bayesgen.families.base.Family.ppc_variables`), e.g. ``distinct_words`` for
        :class:`~bayesgen.MultinomialNB`.
    prob : float, default 0.94
        Mass of the simulated data sets' band in the bottom panels, in (0, 1).

    Returns
    -------
    matplotlib.figure.Figure
        Two panels per statistic, with a legend; the observed curves are labelled
        "observed", the bands have gid ``"simulated band"``.

    Raises
    ------
    ValueError
        For a fit without its training rows (a model file from before they were stored:
        refit), unknown ``var_names``, ``draws`` that is not a positive integer, or ``prob``
        outside (0, 1).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    >>> est = est.fit(X, y)
    >>> from bayesgen.plotting.workflow import plot_ppc
    >>> fig = plot_ppc(est, draws=20)
    >>> type(fig).__name__, len(fig.axes)  # the ECDFs and their difference
    ('Figure', 2)
    """
    est.check_fitted()
    _check_prob(prob)
    model = est.model_
    X, y_codes = est.training_rows()
    observed = _training_statistics(est)
    var_names = _ppc_var_names(model, observed, var_names)
    simulated = simulation.simulate(
        model,
        est.closed_form_,
        est.idata_["posterior"].to_dataset(),
        X,
        y_codes,
        draws=draws,
        keep_rows=False,
        rng=np.random.default_rng(random_seed),
    )
    n_sets = simulated.sizes["chain"] * simulated.sizes["draw"]
    figure, axes = plt.subplots(
        2,
        len(var_names),
        figsize=(max(8.0, 6.5 * len(var_names)), 5.2),
        sharex="col",
        squeeze=False,
        height_ratios=[3, 2],
        layout="constrained",
    )
    for column, name in enumerate(var_names):
        sets, data, title = _comparable(model, name, simulated[name], observed[name], X, y_codes)
        sets = sets.values.reshape(n_sets, -1)
        _draw_ecdfs(axes[0, column], axes[1, column], sets, data.values, prob=prob)
        axes[0, column].set_title(mpl_text(title))
        axes[0, column].set_ylabel("ECDF: share of values ≤ x")
        axes[1, column].set_ylabel("ECDF − simulated median")
    handles = [
        plt.Line2D([], [], label="observed (training data)", **_OBSERVED_STYLE),
        plt.Line2D([], [], color=_SIMULATED_COLOR, label=f"{n_sets} simulated data sets"),
        Patch(
            color=_SIMULATED_COLOR, alpha=0.3, label=f"central {prob:.0%} of them (bottom panel)"
        ),
    ]
    figure.legend(handles=handles, loc="outside upper center", ncols=3, fontsize="small")
    return figure


def _check_prob(prob) -> None:
    if (
        isinstance(prob, bool)
        or not isinstance(prob, int | float | np.floating)
        or not 0 < prob < 1
    ):
        raise ValueError(f"prob: expected a number strictly between 0 and 1, got {prob!r}.")


def _draw_ecdfs(top, bottom, sets: np.ndarray, observed: np.ndarray, *, prob: float) -> None:
    """The ECDFs of the simulated ``sets`` (one per row) and of ``observed`` on ``top``, and
    their differences from the simulated median on ``bottom``."""
    pooled = np.concatenate([observed, sets.ravel()])
    low, high, cut = _ecdf_range(pooled)
    discrete = bool(np.all(pooled == np.round(pooled)))
    # A margin on each side, so that the steps at the smallest and largest value show.
    pad = 0.5 if discrete else 0.02 * (high - low)
    low, high = low - pad, high + pad
    for values in sets:
        x, ecdf = _ecdf_steps(values, low, high)
        top.plot(x, ecdf, color=_SIMULATED_COLOR, alpha=0.25, linewidth=1, label="_simulated")
    x, ecdf = _ecdf_steps(observed, low, high)
    top.plot(x, ecdf, label="observed", **_OBSERVED_STYLE)
    top.set_ylim(-0.02, 1.02)

    grid = _ecdf_grid(observed, low, high, discrete=discrete)
    simulated_ecdf = np.stack([_ecdf_at(values, grid) for values in sets])
    median = np.median(simulated_ecdf, axis=0)
    tail = (1 - prob) / 2
    lower, upper = np.quantile(simulated_ecdf - median, [tail, 1 - tail], axis=0)
    bottom.fill_between(
        grid,
        lower,
        upper,
        step="post",
        color=_SIMULATED_COLOR,
        alpha=0.3,
        linewidth=0,
        gid="simulated band",
    )
    bottom.axhline(0.0, color=_SIMULATED_COLOR, linewidth=1)
    bottom.step(
        grid, _ecdf_at(observed, grid) - median, where="post", label="observed", **_OBSERVED_STYLE
    )
    bottom.set_xlim(low, high)
    bottom.set_xlabel(
        "value"
        + (
            f" (axis cut at the 0.5 % and 99.5 % quantiles; all values span "
            f"{pooled.min():.4g} to {pooled.max():.4g})"
            if cut
            else ""
        )
    )
    if discrete:
        bottom.xaxis.set_major_locator(MaxNLocator(integer=True))


def _ecdf_range(values: np.ndarray) -> tuple[float, float, bool]:
    """(low, high, cut): the whole range of ``values``, or the range between their 0.5 % and
    99.5 % quantiles (cut=True) where that is less than half the whole range: a few long
    documents would otherwise squeeze every curve into the left edge."""
    low, high = float(values.min()), float(values.max())
    inner_low, inner_high = (float(q) for q in np.quantile(values, [0.005, 0.995]))
    if high == low:  # one value: a range around it
        return low - 0.5, high + 0.5, False
    if 0 < inner_high - inner_low < 0.5 * (high - low):
        return inner_low, inner_high, True
    return low, high, False


def _ecdf_steps(values: np.ndarray, low: float, high: float) -> tuple[np.ndarray, np.ndarray]:
    """x and y of a step curve of the ECDF of ``values`` from ``low`` to ``high``: one vertical
    step per distinct value (the same figure as a step per value, with fewer points)."""
    distinct, counts = np.unique(values, return_counts=True)
    ecdf = np.cumsum(counts) / values.size
    before = np.concatenate([[0.0], ecdf[:-1]])
    x = np.concatenate([[min(low, distinct[0])], np.repeat(distinct, 2), [max(high, distinct[-1])]])
    y = np.concatenate([[0.0], np.column_stack([before, ecdf]).ravel(), [1.0]])
    return x, y


def _ecdf_grid(observed: np.ndarray, low: float, high: float, *, discrete: bool) -> np.ndarray:
    """Where the bottom panel evaluates the ECDFs: every whole number for a discrete statistic
    (up to 2,000 of them), else 400 points evenly spaced with the observed values."""
    if discrete and high - low <= 2000:
        return np.arange(np.floor(low), np.ceil(high) + 1)  # the ECDF is constant between
    inside = observed[(observed >= low) & (observed <= high)]
    return np.unique(np.concatenate([np.linspace(low, high, 400), inside]))


def _ecdf_at(values: np.ndarray, grid: np.ndarray) -> np.ndarray:
    return np.searchsorted(np.sort(values), grid, side="right") / values.size


def _training_statistics(est) -> xr.Dataset:
    """The statistics of the training rows that the check compares (e.g. ``distinct_words``):
    the variables of ``constant_data`` marked as computed from the training rows, or, in the
    earlier layout, those of ``observed_data`` besides the rows themselves."""
    statistics = {}
    for group in ("observed_data", "constant_data"):
        if group not in est.idata_.children:
            continue
        for name, values in est.idata_[group].to_dataset().data_vars.items():
            from_rows = group == "observed_data" or values.attrs.get("source") == (
                _FROM_TRAINING_ROWS
            )
            if from_rows and name not in _ROW_VARIABLES:
                statistics[name] = values
    return xr.Dataset(statistics)


def _ppc_var_names(model: Family, observed: xr.Dataset, var_names) -> list[str]:
    available = [name for name in observed.data_vars if name not in _ROW_VARIABLES]
    if var_names is None:
        var_names = list(model.ppc_variables)
        if not var_names:
            raise ValueError(
                f"var_names: the {model.estimator} family names no default statistics "
                f"(ppc_variables); pass var_names from {available}."
            )
    elif isinstance(var_names, str):
        var_names = [var_names]
    else:
        var_names = list(var_names)
    unknown = [name for name in var_names if name not in available]
    if unknown or not var_names:
        raise ValueError(
            f"var_names: expected statistics of the training rows among {available}; "
            f"got {unknown or var_names}."
        )
    return var_names


def _comparable(
    model: Family, name: str, simulated: xr.DataArray, observed: xr.DataArray, X, y_codes
) -> tuple[xr.DataArray, xr.DataArray, str]:
    """The statistic as ``plot_ppc_dist`` compares it: (simulated, observed, panel title).

    A statistic per class and feature becomes one ``cell`` dim, without the cells that hold
    no value (categories a feature does not have), so that every ECDF pools the same cells.
    """
    title = name
    cell_dims = [dim for dim in observed.dims if dim != "obs"]
    if cell_dims and "feature" in cell_dims and model.feature_kind == "real":
        # Means of real features are in each feature's own units (cm beside mm, or beside a
        # variance of 10⁴); pooled as they are, one ECDF would show only the widest feature.
        # In pooled within-class SDs from the overall mean every feature counts alike, and
        # the scale is a constant of the training rows, applied to observed and simulated
        # alike, so the check itself is unchanged. One panel per feature instead would hold
        # only K values each and would not scale to many features.
        centre, scale = (xr.DataArray(v, dims="feature") for v in _feature_scale(X, y_codes))
        observed = (observed - centre) / scale
        simulated = (simulated - centre) / scale
        title = f"{name}, in within-class SDs from the feature's mean"
    if cell_dims:
        keep = np.isfinite(observed.values.ravel())
        observed = _cells(observed, cell_dims)[keep]
        simulated = _cells(simulated, cell_dims)[..., keep]
    return simulated.rename(name), observed.rename(name), title


def _cells(da: xr.DataArray, cell_dims: list[str]) -> xr.DataArray:
    """``da`` with ``cell_dims`` flattened into one ``cell`` dim (last), labels dropped."""
    other = [dim for dim in da.dims if dim not in cell_dims]
    values = da.transpose(*other, *cell_dims).values
    values = values.reshape(*values.shape[: len(other)], -1)
    coords = {dim: da[dim].values for dim in other}
    return xr.DataArray(values, dims=(*other, "cell"), coords=coords)


def _feature_scale(X, y_codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each feature's overall mean and pooled within-class standard deviation (1 where a
    feature is constant within every class, so that nothing is divided by zero)."""
    X = np.asarray(X, dtype=np.float64)
    n_classes = int(y_codes.max()) + 1
    counts = np.bincount(y_codes, minlength=n_classes)
    sums = np.zeros((n_classes, X.shape[1]))
    np.add.at(sums, y_codes, X)
    means = sums / np.maximum(counts, 1)[:, None]
    residuals = X - means[y_codes]
    dof = max(X.shape[0] - np.count_nonzero(counts), 1)
    scale = np.sqrt((residuals**2).sum(axis=0) / dof)
    return X.mean(axis=0), np.where(scale > 0, scale, 1.0)


# --------------------------------------------------------------------------------------------
# Leave-one-out cross-validation.


def plot_loo(est, *, max_labels: int = 10, loo=None) -> Figure:
    """Pareto-smoothed importance sampling LOO of the rows' joint log-likelihood
    log p(x_i, y_i | θ): the Pareto k of every training row (``arviz.loo`` and
    ``arviz.plot_khat``).

    Leaving row i out reweights the posterior draws by 1 / p(x_i, y_i | θ); k estimates how
    heavy the tail of those weights is. Rows above the dashed threshold (0.7, or lower with
    fewer than 2,200 draws: ArviZ's min(1 − 1/log10 S, 0.7)) have unreliable LOO estimates:
    they are influential rows the posterior changes a lot without. The ``max_labels`` rows
    with the largest k above it are labelled with their index (a label per row would be an
    unreadable smear with hundreds of them). The title gives elpd_loo ± its standard error
    and p_loo (the effective number of parameters). Where some row is above the threshold,
    the figure says so under the axes (ArviZ's warning, not raised). The numbers are
    ``arviz.loo``'s, computed for all rows at once (:func:`bayesgen.checks.loo.joint_loo`).

    This scores the whole row, features and label, so it compares models of the same
    features only; the leave-one-out score of the labels alone, log p(y_i | x_i, data
    without row i), is :func:`bayesgen.checks.loo.leave_one_out` (exact for the conjugate models,
    and what ``bayesgen loo`` prints).

    Parameters
    ----------
    est : fitted bayesgen estimator
    max_labels : int, default 10
        At most this many rows above the threshold are labelled, the largest k first; 0
        labels none.
    loo : arviz_stats.ELPDDataLOO, optional
        The rows' leave-one-out where it is computed already:
        :func:`bayesgen.checks.loo.joint_loo` of ``est``
        (or ``arviz.loo(est.idata_, var_name="y", pointwise=True)``, the same numbers). By
        default it is computed here.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        For a fit without its pointwise log-likelihood (a model file from before it was
        stored: refit), ``max_labels`` that is not a non-negative integer, or a ``loo``
        without one Pareto k per training row.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    >>> est = est.fit(X, y)
    >>> from bayesgen.plotting.workflow import plot_loo
    >>> fig = plot_loo(est)
    >>> type(fig).__name__, len(fig.axes)
    ('Figure', 1)
    """
    est.check_fitted()
    if (
        isinstance(max_labels, bool)
        or not isinstance(max_labels, int | np.integer)
        or max_labels < 0
    ):
        raise ValueError(f"max_labels: expected a non-negative integer, got {max_labels!r}.")
    if not has_log_likelihood(est):
        raise ValueError(
            "plot_loo: this fit holds no log_likelihood group (the pointwise log-likelihood "
            "of its training rows); model files written before it was stored lack it. Refit "
            "the model to draw it."
        )
    elpd = joint_loo(est) if loo is None else _checked_loo(loo, est)
    good_k = float(elpd.good_k)
    pareto_k = np.ravel(elpd.pareto_k.values)
    n_bad = int(np.count_nonzero(pareto_k > good_k))
    pc = az.plot_khat(
        elpd,
        threshold=None,  # ArviZ would label every row above it; the worst are labelled below
        hline_values=[good_k, 1.0],
        visuals={"hlines": {"color": "tab:red", "linestyle": "--", "linewidth": 1}},
        figure_kwargs={"figsize": (7, 3.4)},
    )
    figure = pc.viz["figure"].item()
    ax = pc.viz["plot"].item()
    worst = _worst_rows(pareto_k, good_k, max_labels)
    for row in worst:
        ax.annotate(
            str(row),
            (row, pareto_k[row]),
            xytext=(0, 4),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize="small",
            gid="worst row",
        )
    if worst:  # room above the highest point for its label
        low, high = ax.get_ylim()
        ax.set_ylim(low, high + 0.08 * (high - low))
    ax.set_xlabel("training row")
    ax.set_ylabel("Pareto k")
    labelled = f" ({len(worst)} largest labelled)" if 0 < len(worst) < n_bad else ""
    ax.set_title(
        f"PSIS-LOO of the rows' log p(x, y): elpd_loo = {elpd.elpd:.1f} ± {elpd.se:.1f}, "
        f"p_loo = {elpd.p:.1f}\n{n_bad} of {pareto_k.size} rows with k > {good_k:.2f}{labelled}",
        fontsize="medium",
    )
    figure.set_layout_engine("constrained")
    if elpd.warning:
        # Below the axes: the constrained layout makes room for a figure-level x label, not
        # for free text.
        message = textwrap.fill(_PARETO_WARNING.format(good_k=good_k), 110)
        figure.supxlabel(message, fontsize="small", color="tab:red")
    return figure


def _checked_loo(loo, est):
    """``loo`` where it is a pointwise leave-one-out of ``est``'s training rows."""
    rows = est.idata_["log_likelihood"]["y"]
    n_rows = rows.size // (rows.sizes["chain"] * rows.sizes["draw"])
    pareto_k = getattr(loo, "pareto_k", None)
    if pareto_k is None or np.size(pareto_k) != n_rows or not hasattr(loo, "elpd"):
        got = type(loo).__name__ if pareto_k is None else f"{np.size(pareto_k)} Pareto k values"
        raise ValueError(
            f"loo: expected the pointwise leave-one-out of this fit's {n_rows} training rows "
            f"(bayesgen.checks.loo.joint_loo(est)), got {got}."
        )
    return loo


def _worst_rows(pareto_k: np.ndarray, good_k: float, max_labels: int) -> list[int]:
    """The indices of at most ``max_labels`` rows with k above ``good_k``, the largest first."""
    above = np.flatnonzero(pareto_k > good_k)
    order = np.argsort(-pareto_k[above], kind="stable")[:max_labels]
    return [int(row) for row in above[order]]
