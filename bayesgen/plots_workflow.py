"""Plots of the Bayesian workflow around a fit: the posterior predictive check and PSIS
leave-one-out cross-validation.

Both need what :meth:`fit` stores since the rows were kept (:mod:`bayesgen.observed`): the
training rows (``observed_data``) and their pointwise log-likelihood (``log_likelihood``).
A model file written before then has neither; the functions say so and the report lists them
as skipped. Each returns a matplotlib ``Figure`` and leaves ``est.idata_`` as it was.
"""

from __future__ import annotations

import textwrap
import warnings
from typing import TYPE_CHECKING

import arviz as az
import matplotlib.pyplot as plt
import numpy as np
import xarray as xr

from bayesgen import simulation
from bayesgen.plots_selection import family_of, mpl_text

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from bayesgen.families import Family

#: ``observed_data`` variables that hold the rows themselves, not statistics of them.
_ROW_VARIABLES = frozenset({"y", "X", "X_data", "X_indices", "X_indptr"})
#: Start of the UserWarning that ``arviz.loo`` raises for Pareto k above its threshold.
_PARETO_WARNING = "Estimated shape parameter of Pareto distribution"
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
    >>> from bayesgen.plots_workflow import has_observed_data
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
    >>> from bayesgen.plots_workflow import has_log_likelihood
    >>> has_log_likelihood(est)
    True
    """
    return "log_likelihood" in est.idata_.children


# --------------------------------------------------------------------------------------------
# Posterior predictive check.


def plot_ppc(est, *, draws: int = 100, random_seed=0, var_names: list[str] | None = None) -> Figure:
    """Posterior predictive check: statistics of the training data against data sets
    simulated from the posterior (``arviz.plot_ppc_dist``, as ECDFs).

    For ``draws`` posterior draws θ, every training row is drawn again from p(x | y_i, θ)
    (see :meth:`~bayesgen.classifier.GenerativeClassifier.sample_posterior_predictive`) and
    each statistic is computed on the simulated data set. One panel per statistic: the ECDF
    of its values (over rows, or over class × feature cells) in the training data (black)
    and in each simulated data set (blue). A model that fits the statistic has the black
    curve inside the blue spread. The simulation goes into a copy: ``est.idata_`` keeps its
    groups (no ``posterior_predictive`` is added).

    Parameters
    ----------
    est : fitted bayesgen estimator
    draws : int, default 100
        Posterior draws to simulate from, spread evenly over the chains.
    random_seed : int, optional
        Seed of the simulation; the default 0 draws the same figure every time.
    var_names : list of str, optional
        Statistics of ``observed_data`` to check; by default those the model family names
        (:attr:`~bayesgen.families.base.Family.ppc_variables`), e.g. ``distinct_words`` for
        :class:`~bayesgen.MultinomialNB`.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per statistic, with a legend; the observed curve is labelled "observed".

    Raises
    ------
    ValueError
        For a fit without its training rows (a model file from before they were stored:
        refit), unknown ``var_names``, or ``draws`` that is not a positive integer.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    >>> est = est.fit(X, y)
    >>> from bayesgen.plots_workflow import plot_ppc
    >>> fig = plot_ppc(est, draws=20)
    >>> type(fig).__name__
    'Figure'
    """
    est.check_fitted()
    model = family_of(est)
    X, y_codes = est.training_rows()
    observed = est.idata_["observed_data"].to_dataset()
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
    predictive, data, titles = {}, {}, {}
    for name in var_names:
        predictive[name], data[name], titles[name] = _comparable(
            model, name, simulated[name], observed[name], X, y_codes
        )
    tree = xr.DataTree.from_dict(
        {"posterior_predictive": xr.Dataset(predictive), "observed_data": xr.Dataset(data)}
    )
    n_sets = simulated.sizes["chain"] * simulated.sizes["draw"]
    with warnings.catch_warnings():
        # The statistics of text and sets of words are counts; an ECDF shows counts exactly,
        # which is why ArviZ's advice to switch plots for discrete data does not apply.
        warnings.filterwarnings("ignore", message=".*look discrete", category=UserWarning)
        pc = az.plot_ppc_dist(
            tree,
            var_names=var_names,
            kind="ecdf",
            num_samples=n_sets,
            visuals={
                "predictive_dist": {"color": _SIMULATED_COLOR, "alpha": 0.25},
                "observed_dist": {**_OBSERVED_STYLE, "label": "observed"},
            },
        )
    for name in var_names:
        pc.viz["title"][name].item().set_text(mpl_text(titles[name]))
    figure = pc.viz["figure"].item()
    handles = [
        plt.Line2D([], [], label="observed (training data)", **_OBSERVED_STYLE),
        plt.Line2D([], [], color=_SIMULATED_COLOR, label=f"{n_sets} simulated data sets"),
    ]
    figure.set_layout_engine("constrained")
    figure.legend(handles=handles, loc="outside upper center", ncols=2)
    return figure


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


def plot_loo(est) -> Figure:
    """Pareto-smoothed importance sampling LOO: the Pareto k of every training row
    (``arviz.loo`` and ``arviz.plot_khat``).

    Leaving row i out reweights the posterior draws by 1 / p(x_i, y_i | θ); k estimates how
    heavy the tail of those weights is. Rows above the dashed threshold (0.7, or lower with
    fewer than 2,200 draws: ArviZ's min(1 − 1/log10 S, 0.7)) have unreliable LOO estimates:
    they are influential rows the posterior changes a lot without. The title gives
    elpd_loo ± its standard error and p_loo (the effective number of parameters). ArviZ's
    warning about such rows is shown in the figure, not raised.

    Parameters
    ----------
    est : fitted bayesgen estimator

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        For a fit without its pointwise log-likelihood (a model file from before it was
        stored: refit).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    >>> est = est.fit(X, y)
    >>> from bayesgen.plots_workflow import plot_loo
    >>> fig = plot_loo(est)
    >>> type(fig).__name__, len(fig.axes)
    ('Figure', 1)
    """
    est.check_fitted()
    if not has_log_likelihood(est):
        raise ValueError(
            "plot_loo: this fit holds no log_likelihood group (the pointwise log-likelihood "
            "of its training rows); model files written before it was stored lack it. Refit "
            "the model to draw it."
        )
    elpd, caught = _loo(est)
    good_k = float(elpd.good_k)
    pareto_k = elpd.pareto_k.values
    n_bad = int(np.count_nonzero(pareto_k > good_k))
    pc = az.plot_khat(
        elpd,
        threshold=good_k,  # labels the rows above it with their index
        hline_values=[good_k, 1.0],
        visuals={"hlines": {"color": "tab:red", "linestyle": "--", "linewidth": 1}},
        figure_kwargs={"figsize": (7, 3.2)},
    )
    figure = pc.viz["figure"].item()
    ax = pc.viz["plot"].item()
    ax.set_xlabel("training row")
    ax.set_ylabel("Pareto k")
    ax.set_title(
        f"PSIS-LOO: elpd_loo = {elpd.elpd:.1f} ± {elpd.se:.1f}, p_loo = {elpd.p:.1f}; "
        f"{n_bad} of {pareto_k.size} rows with k > {good_k:.2f}",
        fontsize="medium",
    )
    figure.set_layout_engine("constrained")
    if caught:
        # The warning's first sentence, below the axes: the constrained layout makes room
        # for a figure-level x label, not for free text.
        message = textwrap.fill("ArviZ: " + str(caught[0].message).split(". ")[0] + ".", 110)
        figure.supxlabel(message, fontsize="small", color="tab:red")
    return figure


def _loo(est):
    """``arviz.loo`` of the fit's rows and the Pareto-k warnings it raised (any other
    warning is passed on)."""
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        elpd = az.loo(est.idata_, var_name="y", pointwise=True)
    caught = []
    for record in records:
        if issubclass(record.category, UserWarning) and str(record.message).startswith(
            _PARETO_WARNING
        ):
            caught.append(record)
        else:
            warnings.warn_explicit(record.message, record.category, record.filename, record.lineno)
    return elpd, caught
