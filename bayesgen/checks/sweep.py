"""The λ sweep: add-λ, the posterior mean under Dirichlet(λ) and the MAP under Dirichlet(λ + 1)
coincide over a grid of λ."""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

import bayesgen.estimators as estimators
from bayesgen.checks.parameter_table import block_frame
from bayesgen.inference.sampling import find_map

SWEEP_COLUMNS = [
    "lambda",
    "variable",
    "coords",
    "add_lambda",
    "posterior_mean",
    "posterior_mcse",
    "z",
    "map_alpha_plus_1",
]


def lambda_sweep(
    X,
    y,
    *,
    model: str = "multinomial_nb",
    lambdas=(0.1, 0.5, 1, 2, 5),
    class_alpha: float = 1.0,
    draws: int = 2000,
    chains: int = 2,
    random_seed: int | None = 0,
    compute_map: bool = True,
    **model_options,
) -> pd.DataFrame:
    """add-λ, the posterior mean under Dirichlet(λ) and the MAP under Dirichlet(λ + 1), per λ.

    Theory says all three coincide for every λ > 0 (Beta(λ, λ) and Beta(λ + 1, λ + 1) for
    Bernoulli features): the posterior mean up to Monte Carlo error, the MAP up to the
    optimizer's precision.

    Parameters
    ----------
    X, y : array-like
        Training data, as for the estimator of ``model``.
    model : {"multinomial_nb", "bernoulli_nb", "categorical_nb"}, default "multinomial_nb"
    lambdas : sequence of float, default (0.1, 0.5, 1, 2, 5)
        The grid; each λ > 0.
    class_alpha : float, default 1.0
        Fixed class-prior concentration (the sweep is over the feature smoothing only).
    draws, chains : int, default 2000 and 2
        Exact conjugate posterior draws per chain, for the posterior mean and its MCSE.
    random_seed : int, optional, default 0
    compute_map : bool, default True
        Also find the MAP of the model with α = λ + 1 with PyMC's ``find_MAP``. The model's
        priors are ``pm.Data``, so every λ after the first reuses the compiled graph.
    **model_options
        Passed to the closed form, e.g. ``binarize`` or ``n_categories``.

    Returns
    -------
    pandas.DataFrame
        One row per λ and feature probability: ``lambda``, ``variable``, ``coords``,
        ``add_lambda``, ``posterior_mean``, ``posterior_mcse``, ``z`` and ``map_alpha_plus_1``
        (NaN without ``compute_map``). Plot it with :func:`plot_lambda_sweep`.

    Examples
    --------
    >>> from bayesgen import lambda_sweep
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> df = lambda_sweep(X, ["ham", "ham", "spam", "spam"], lambdas=(0.5, 1), draws=200,
    ...                   compute_map=False)
    >>> df.shape  # 2 λ × 2 classes × 3 words
    (12, 8)
    >>> df[["lambda", "coords", "add_lambda"]].head(2).round(3)
       lambda   coords  add_lambda
    0     0.5  ham, x0       0.647
    1     0.5  ham, x1       0.176
    >>> bool((df["z"].abs() < 4).all())  # posterior mean = add-λ up to Monte Carlo error
    True
    """
    smoothed = _smoothed_estimators()
    if model not in smoothed:
        raise ValueError(f"model: expected one of {sorted(smoothed)}; got {model!r}.")
    estimator_class = smoothed[model]
    frames = []
    for lam in lambdas:
        lam = float(lam)
        if not lam > 0:
            raise ValueError(f"lambdas: every λ must be > 0 (a proper prior); got {lam}.")
        est = estimator_class(
            alpha=lam,
            class_alpha=class_alpha,
            inference="conjugate",
            draws=draws,
            chains=chains,
            random_seed=random_seed,
            compute_map=False,
            prior_draws=0,
            **model_options,
        ).fit(X, y)
        block = est.model_.feature_expected(est.closed_form_, lam)
        frame = block_frame(block, est.idata_["posterior"].to_dataset(), None)
        if compute_map:
            point = _map_point(est.model_, X, y, lam + 1.0, class_alpha, model_options)
            frame["map"] = np.asarray(point["feature_prob"].values).ravel()[
                np.flatnonzero(np.asarray(block.keep).ravel())
            ]
        frames.append(
            pd.DataFrame(
                {
                    "lambda": lam,
                    "variable": frame["variable"],
                    "coords": frame["coords"],
                    "add_lambda": frame["closed_form"],
                    "posterior_mean": frame["posterior_mean"],
                    "posterior_mcse": frame["mcse"],
                    "z": frame["z"],
                    "map_alpha_plus_1": frame["map"],
                }
            )
        )
    return pd.concat(frames, ignore_index=True)[SWEEP_COLUMNS]


def _smoothed_estimators() -> dict[str, type]:
    """The estimators whose model has a λ to sweep, by model name."""
    classes = [getattr(estimators, name) for name in estimators.__all__]
    # model_ is a property of an instance; a default instance only stores its arguments.
    models = {estimator_class: estimator_class().model_ for estimator_class in classes}
    return {model.name: cls for cls, model in models.items() if model.smoothing}


def _map_point(model_family, X, y, alpha: float, class_alpha: float, options: dict) -> xr.Dataset:
    """The MAP of ``feature_prob`` by ``find_MAP`` on the model with λ = ``alpha``."""
    stats = model_family.fit(X, y, alpha=alpha, class_alpha=class_alpha, **options)
    return find_map(model_family.pymc_model(stats), var_names=["feature_prob"])


def plot_lambda_sweep(df: pd.DataFrame, *, parameters=None, max_parameters: int = 4):
    """Plot a :func:`lambda_sweep` result: add-λ as lines, posterior mean and MAP as markers.

    Parameters
    ----------
    df : pandas.DataFrame
        From :func:`lambda_sweep`.
    parameters : list of str, optional
        Labels ``"variable[coords]"`` to draw; default the first ``max_parameters``.
    max_parameters : int, default 4

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayesgen import lambda_sweep, plot_lambda_sweep
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> df = lambda_sweep(X, ["ham", "ham", "spam", "spam"], lambdas=(0.5, 1), draws=200,
    ...                   compute_map=False)
    >>> fig = plot_lambda_sweep(df, max_parameters=2)
    >>> type(fig).__name__, len(fig.axes)
    ('Figure', 1)
    """
    from matplotlib.figure import Figure  # heavy: matplotlib
    from matplotlib.lines import Line2D  # heavy: matplotlib

    labels = df["variable"] + "[" + df["coords"] + "]"
    if parameters is None:
        parameters = list(dict.fromkeys(labels))[:max_parameters]
    fig = Figure(figsize=(9, 4.5), layout="constrained")
    ax = fig.add_subplot()
    for i, parameter in enumerate(parameters):
        rows = df[labels == parameter].sort_values("lambda")
        if rows.empty:
            raise ValueError(f"parameters: {parameter!r} is not in the sweep.")
        color = f"C{i % 10}"
        ax.plot(rows["lambda"], rows["add_lambda"], "-", color=color, label=parameter)
        ax.errorbar(
            rows["lambda"],
            rows["posterior_mean"],
            yerr=2 * rows["posterior_mcse"],
            fmt="o",
            mfc="none",
            color=color,
            markersize=8,
        )
        if rows["map_alpha_plus_1"].notna().any():
            ax.plot(rows["lambda"], rows["map_alpha_plus_1"], "x", color=color, markersize=7)
    grid = np.unique(df["lambda"].to_numpy())
    if (grid > 0).all():
        ax.set_xscale("log")
    ax.set_xticks(grid, [f"{v:g}" for v in grid])
    ax.minorticks_off()
    ax.set_xlabel("λ")
    ax.set_ylabel("probability")
    styles = [
        Line2D([], [], color="0.3", ls="-", label="add-λ (closed form)"),
        Line2D([], [], color="0.3", ls="", marker="o", mfc="none", label="posterior mean ± 2 MCSE"),
    ]
    title = "add-λ vs posterior mean (prior λ)"
    # A sweep run with compute_map=False has no MAP points: list no marker for them.
    if df.loc[labels.isin(parameters), "map_alpha_plus_1"].notna().any():
        styles.append(Line2D([], [], color="0.3", ls="", marker="x", label="MAP, α = λ + 1"))
        title += " vs MAP (prior λ + 1)"
    ax.set_title(title)
    outside = {"loc": "upper left", "fontsize": "small"}
    first = ax.legend(handles=styles, bbox_to_anchor=(1.02, 1.0), **outside)
    ax.add_artist(first)
    ax.legend(bbox_to_anchor=(1.02, 0.62), title="parameter", **outside)
    return fig
