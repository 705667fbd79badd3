"""ArviZ and matplotlib plots of a fitted bayesgen estimator; each returns a PlotCollection,
PlotMatrix or Figure for use in scripts.

Every plot is a function of the fitted estimator (data first, keyword-only options) that
returns an ArviZ ``PlotCollection`` (``PlotMatrix`` for the pair plot) or a matplotlib
``Figure``. :func:`bayesgen.plotting.report.report` draws all of them into one HTML page.

This module holds the MCMC diagnostics and the posterior against the closed forms and the
prior; the plots of predictions (:mod:`bayesgen.plotting.predictive`) and of Gaussian
discriminant analysis (:mod:`bayesgen.plotting.gaussian`) live in their own modules and are
importable from here too.

Large vocabularies are plotted through a few features only, which the model family chooses
(:func:`selected_features`): the most probable ones by the closed-form estimate (for naive
Bayes), or the largest standardised discriminant weights (GDA). Close the figures you get
(``matplotlib.pyplot.close``); :func:`bayesgen.plotting.report.report` closes its own.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import arviz as az
import matplotlib.pyplot as plt
import numpy as np
import xarray as xr
from matplotlib.patches import Patch

from bayesgen.checks.thresholds import FAMILY_RATE
from bayesgen.plotting.gaussian import discriminant_plane, plot_decision_boundary, plot_mu_pair
from bayesgen.plotting.predictive import (
    calibration_table,
    plot_calibration,
    plot_predictive_intervals,
    plot_top_features,
)
from bayesgen.plotting.selection import (
    MAX_PLOT_CLASSES,
    check_var_names,
    classes_note,
    constrained,
    plot_tree,
    selected_features,
    subset,
)

if TYPE_CHECKING:
    from arviz_plots import PlotCollection

#: line style of the reference line at the closed-form posterior mean (whatever the family
#: calls it, :attr:`~bayesgen.families.base.Family.mean_label`) and of the others. Each line
#: carries its marker at its own height (in axes fractions), so that lines drawn at the same
#: value (the MLE and the MAP coincide when α = 1) are all seen.
_MEAN_STYLE = {"color": "black", "linestyle": "--", "marker": "o"}
_REFERENCE_STYLE = {
    "MLE": {"color": "tab:red", "linestyle": ":", "marker": "v"},
    "MAP": {"color": "tab:green", "linestyle": "-.", "marker": "^"},
}
_MARKER_HEIGHTS = (0.85, 0.65, 0.45)
#: ArviZ's label of a rank plot panel, "p=0.42(α=0.01)", with its p-value.
_ARVIZ_P_VALUE = re.compile(r"p=([0-9.]+)\(α=")
#: Probability that a chain's rank curve stays inside the envelope of :func:`plot_rank`
#: (ArviZ's default).
RANK_ENVELOPE_PROB = 0.99
#: The chance that a correct fit's rank plot labels any panel "chains differ", whatever its
#: number of panels: each panel is tested at this rate over their number (Bonferroni), the
#: family-wise rate of :func:`bayesgen.checks.comparison.compare`'s verdict.
RANK_FAMILY_RATE = FAMILY_RATE

__all__ = [
    "MAX_PLOT_CLASSES",
    "calibration_table",
    "discriminant_plane",
    "has_energy",
    "plot_calibration",
    "plot_decision_boundary",
    "plot_energy",
    "plot_ess",
    "plot_mu_pair",
    "plot_posterior_vs_closed_form",
    "plot_predictive_intervals",
    "plot_prior_posterior",
    "plot_rank",
    "plot_top_features",
    "plot_trace",
    "selected_features",
]


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

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    >>> est = est.fit(X, y)
    >>> from bayesgen.plotting.plots import plot_trace
    >>> pc = plot_trace(est)
    >>> type(pc).__name__
    'PlotCollection'
    """
    data = plot_tree(est, var_names, max_features)
    if compact is None:
        compact = sum(v.size // _draw_count(v) for v in data["posterior"].data_vars.values()) > 12
    return constrained(az.plot_trace_dist(data, compact=compact), note=classes_note(est))


def _draw_count(da) -> int:
    return da.sizes["chain"] * da.sizes["draw"]


def plot_rank(
    est,
    *,
    var_names: list[str] | None = None,
    max_features: int = 4,
    max_draws: int | None = None,
) -> PlotCollection:
    """Rank plots of the chains (``arviz.plot_rank``), with an envelope; options as
    :func:`plot_trace`, and ``max_draws``: at most that many draws per chain, every k-th one
    (:func:`rank_thinning`; default all). ArviZ's uniformity test behind the p-value labels
    is most of the plot's cost (4 chains of the digits model: 3.4 s with 1,000 draws per chain,
    1.4 s with 250, the PNG included); the envelope and the test are those of the draws shown.

    Each curve is one chain's fractional ranks among all draws, as the difference between
    their ECDF and the uniform CDF. The grey band (a patch with gid ``"envelope"``) is where a
    chain's curve stays with probability :data:`RANK_ENVELOPE_PROB` when every chain samples
    the same distribution: a Kolmogorov–Smirnov band for a chain drawn without replacement
    from the pooled ranks, widened for autocorrelation by the bulk effective sample size.
    ArviZ's multi-chain uniformity test runs on every panel; only a panel where it fails at
    a family-wise rate of :data:`RANK_FAMILY_RATE` (p < α = RANK_FAMILY_RATE / the number of
    panels, Bonferroni) is labelled, in red, with its p-value (ArviZ also marks the ranks
    that contribute most), so that chains that agree carry no label. Tested one by one at
    ArviZ's 0.01, ten panels of a correct fit would show a false label one time in ten. The
    test takes the draws shown as independent: chains whose draws are strongly
    autocorrelated (a bulk ESS far below the number of draws shown) fail it more often than
    the rate says, which thinning to ``max_draws`` per chain makes rarer.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    >>> est = est.fit(X, y)
    >>> from bayesgen.plotting.plots import plot_rank
    >>> pc = plot_rank(est)
    >>> type(pc).__name__
    'PlotCollection'
    """
    data = plot_tree(est, var_names, max_features)
    step = rank_thinning(est, max_draws)
    if step > 1:
        data = data.isel(draw=slice(None, None, step))
    posterior = data["posterior"].to_dataset()
    panels = sum(v.size // _draw_count(v) for v in posterior.data_vars.values())
    alpha = RANK_FAMILY_RATE / panels
    # ArviZ tests at 1 − envelope_prob and marks the ranks of the panels that fail; its
    # envelope is not drawn (the one below is).
    pc = az.plot_rank(data, envelope_prob=1 - alpha)
    half_widths = _rank_envelope(posterior)
    # ArviZ prints "p=1.00(α=0.01)" in every panel and offers no option to leave it out (nor
    # returns its p-values): its labels are removed, and only a panel whose chains fail the
    # test is labelled again, so that chains that agree carry no label at all.
    p_values = _rank_p_values_shown(pc, posterior, alpha)
    style = {"color": "0.6", "alpha": 0.3, "linewidth": 0}
    for name, axes in pc.viz["plot"].items():
        widths = half_widths[name].transpose(*axes.dims).values.ravel()
        p_value = p_values[name].transpose(*axes.dims).values.ravel()
        for ax, width, p in zip(axes.values.ravel(), widths, p_value, strict=True):
            for text in list(ax.texts):
                if _ARVIZ_P_VALUE.match(text.get_text()):
                    text.remove()
            ax.axhspan(-width, width, gid="envelope", zorder=0, **style)
            low, high = ax.get_ylim()
            ax.set_ylim(min(low, -1.15 * width), max(high, 1.15 * width))
            if p < alpha:
                ax.text(
                    0.02,
                    0.95,
                    (f"p = {p:.2g} < α" if p >= 1e-6 else "p < 1e-6") + ": chains differ",
                    transform=ax.transAxes,
                    va="top",
                    color="tab:red",
                    fontsize="small",
                    gid="rank test failed",
                )
    envelope = Patch(label=f"{RANK_ENVELOPE_PROB:.0%} envelope of a chain's curve", **style)
    explanation = (
        f"red p < α = {RANK_FAMILY_RATE:g} / {panels} panels: the panel's chains fail ArviZ's "
        "multi-chain rank uniformity test (they sample different distributions)"
    )
    figure = pc.viz["figure"].item()
    figure.legend(handles=[envelope], loc="outside upper center", title=explanation)
    return constrained(pc, note=classes_note(est))


def rank_thinning(est, max_draws: int | None) -> int:
    """The step k of :func:`plot_rank`: every k-th draw of each chain, so that at most
    ``max_draws`` per chain are ranked (1: all of them, also for ``max_draws=None``).

    Raises
    ------
    ValueError
        ``max_draws`` that is not a positive integer.

    Examples
    --------
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, draws=1000, random_seed=0)
    >>> est = est.fit(X, y)
    >>> from bayesgen.plotting.plots import rank_thinning
    >>> rank_thinning(est, 250), rank_thinning(est, 300), rank_thinning(est, None)
    (4, 4, 1)
    """
    if max_draws is None:
        return 1
    if isinstance(max_draws, bool) or not isinstance(max_draws, int | np.integer) or max_draws < 1:
        raise ValueError(f"max_draws: expected a positive integer or None, got {max_draws!r}.")
    draws = est.idata_["posterior"].sizes["draw"]
    return max(1, -(-draws // int(max_draws)))  # ceil: never more than max_draws per chain


def _rank_p_values_shown(pc, posterior: xr.Dataset, alpha: float) -> xr.Dataset:
    """The p-value of each panel's rank uniformity test, as far as the labels need it: read
    from ArviZ's labels (two decimals) when every panel clearly passes, else computed again
    (:func:`_rank_p_values`, as long as ArviZ's own test), so that a failing panel gets its
    exact p-value."""
    shown = {}
    for name, axes in pc.viz["plot"].items():
        values = np.full(axes.shape, np.nan)
        for index, ax in np.ndenumerate(axes.values):
            labels = [_ARVIZ_P_VALUE.match(text.get_text()) for text in ax.texts]
            printed = [float(match.group(1)) for match in labels if match]
            if len(printed) == 1 and printed[0] - 0.005 >= alpha:  # p ≥ printed − rounding
                values[index] = printed[0]
        shown[name] = xr.DataArray(values, dims=axes.dims, coords=axes.coords)
    if all(np.isfinite(values.values).all() for values in shown.values()):
        return xr.Dataset(shown)
    return _rank_p_values(posterior)


def _rank_p_values(posterior: xr.Dataset) -> xr.Dataset:
    """p-value of ArviZ's multi-chain rank uniformity test of each scalar, as
    ``arviz.plot_rank`` computes it (relative ranks over chains and draws)."""
    sample_dims = ["chain", "draw"]
    ranks = posterior.azstats.compute_ranks(dim=sample_dims, relative=True)
    p_values, _, _ = ranks.azstats.mchain_uniformity_test(dim=sample_dims)
    return p_values


def _rank_envelope(posterior: xr.Dataset) -> xr.Dataset:
    """Half-width of the envelope of each scalar's rank plot.

    If every chain samples the same distribution, one chain's n draws are like n drawn without
    replacement from the N pooled ranks, so its ECDF minus the uniform CDF is a Brownian
    bridge times √(1/n − 1/N) (Kolmogorov–Smirnov with the finite-population correction).
    Autocorrelated draws count as fewer: n and N scale by ESS / N.
    """
    from scipy.stats import kstwobign

    n_chains = posterior.sizes["chain"]
    total = n_chains * posterior.sizes["draw"]
    ess = az.ess(posterior, method="bulk").clip(min=1.0, max=total)
    quantile = kstwobign.ppf(RANK_ENVELOPE_PROB)
    return quantile * np.sqrt(np.maximum(n_chains - 1, 1) / ess)


def plot_ess(est, *, var_names: list[str] | None = None, max_features: int = 4) -> PlotCollection:
    """Local effective sample size over quantiles (``arviz.plot_ess``); options as
    :func:`plot_trace`.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    >>> est = est.fit(X, y)
    >>> from bayesgen.plotting.plots import plot_ess
    >>> pc = plot_ess(est)
    >>> type(pc).__name__
    'PlotCollection'
    """
    return constrained(az.plot_ess(plot_tree(est, var_names, max_features)), note=classes_note(est))


def has_energy(est) -> bool:
    """Whether the fit has NUTS sampler statistics (``inference="nuts"``).

    Examples
    --------
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    >>> est = est.fit(X, y)
    >>> from bayesgen.plotting.plots import has_energy
    >>> has_energy(est)  # exact conjugate draws have no sampler statistics
    False
    """
    return "sample_stats" in est.idata_.children and "energy" in est.idata_["sample_stats"]


def plot_energy(est) -> PlotCollection:
    """Marginal and transition energy of NUTS (``arviz.plot_energy``), with the BFMI.

    Raises
    ------
    ValueError
        For ``inference="conjugate"``: exact independent draws have no Hamiltonian energy.

    Examples
    --------
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    >>> est = est.fit(X, y)
    >>> from bayesgen.plotting.plots import plot_energy
    >>> plot_energy(est)
    Traceback (most recent call last):
        ...
    ValueError: plot_energy: the fit has no NUTS sample_stats ...

    With NUTS draws (which compile the model's graph first, so not run here):

    >>> est = MultinomialNB(draws=500, tune=500, random_seed=0).fit(X, y)  # doctest: +SKIP
    >>> plot_energy(est)  # doctest: +SKIP
    """
    if not has_energy(est):
        raise ValueError(
            "plot_energy: the fit has no NUTS sample_stats (inference='conjugate' draws "
            "exact independent samples, so there is no energy to diagnose)."
        )
    tree = xr.DataTree.from_dict({"sample_stats": est.idata_["sample_stats"].to_dataset()})
    return constrained(az.plot_energy(tree))


# --------------------------------------------------------------------------------------------
# Posterior against the closed forms and the prior.


def _reference_values(est, var_names: list[str]) -> dict[str, xr.Dataset]:
    """Point estimates to mark on the densities: label -> Dataset of the same variables."""
    stats = est.closed_form_
    references = {est.model_.mean_label: stats[[name for name in var_names if name in stats]]}
    # Every block stores the MLE of a posterior variable beside it, as NAME_mle.
    mle = {name: stats[f"{name}_mle"] for name in var_names if f"{name}_mle" in stats}
    references["MLE"] = xr.Dataset(mle)
    if est.map_ is not None:
        references["MAP"] = est.map_[[name for name in var_names if name in est.map_]]
    return {label: ds for label, ds in references.items() if ds.data_vars}


def _vertical_line(da: xr.DataArray, target, *, height: float, **kwargs):
    """A full-height line at the value with its marker at ``height`` (axes fraction)."""
    value = float(da)
    return target.plot(
        [value] * 3,
        [0.0, height, 1.0],
        transform=target.get_xaxis_transform(),
        markevery=[1],
        **kwargs,
    )[0]


def _same_values(first: xr.Dataset, second: xr.Dataset) -> bool:
    """Whether two reference estimates are equal (to rounding) wherever both are defined."""
    common = [name for name in first.data_vars if name in second.data_vars]
    return bool(common) and all(
        np.allclose(first[name].values, second[name].values, rtol=1e-9, atol=1e-12)
        for name in common
    )


def plot_posterior_vs_closed_form(
    est, *, var_names: list[str] | None = None, max_features: int = 4
) -> PlotCollection:
    """Posterior densities with vertical lines at the closed-form estimates.

    Lines: the closed-form posterior mean, labelled as the model family calls it
    (:attr:`~bayesgen.families.base.Family.mean_label`: "add-λ" for naive Bayes, "closed
    form" for GDA), the maximum-likelihood estimate and, when the estimator computed it
    (``compute_map=True``), PyMC's MAP point. Each line is labelled (e.g. "add-λ", "MLE",
    "MAP") and stored in the collection's ``viz`` under that label.

    Parameters
    ----------
    est : fitted bayesgen estimator
    var_names : list of str, optional
        Default ``class_prob`` and ``feature_prob`` (GDA: ``mu``).
    max_features : int, default 4

    Returns
    -------
    arviz_plots.PlotCollection

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    >>> est = est.fit(X, y)
    >>> from bayesgen.plotting.plots import plot_posterior_vs_closed_form
    >>> pc = plot_posterior_vs_closed_form(est)
    >>> type(pc).__name__
    'PlotCollection'
    """
    var_names = check_var_names(est, var_names)
    selection = selected_features(est, max_features=max_features)
    data = subset(est.idata_["posterior"].to_dataset()[var_names], selection)
    pc = az.plot_dist(data, visuals={"point_estimate": False, "point_estimate_text": False})
    handles, drawn = [], {}
    references = _reference_values(est, var_names)
    for i, (label, values) in enumerate(references.items()):
        values = subset(values.astype(np.float64), selection)
        style = _REFERENCE_STYLE.get(label, _MEAN_STYLE)
        height = _MARKER_HEIGHTS[i % len(_MARKER_HEIGHTS)]
        line = {"label": label, "height": height, **style}
        pc.map(_vertical_line, label, data=values, ignore_aes="all", **line)
        # Equal estimates draw one line over the other; the legend says so.
        equal = [other for other, seen in drawn.items() if _same_values(values, seen)]
        shown = f"{label} (= {', '.join(equal)})" if equal else label
        handles.append(plt.Line2D([], [], label=shown, **style))
        drawn[label] = values
    figure = pc.viz["figure"].item()
    figure.legend(handles=handles, loc="outside upper center", ncols=len(handles))
    return constrained(pc, note=classes_note(est))


def plot_prior_posterior(
    est, *, var_names: list[str] | None = None, max_features: int = 4
) -> PlotCollection:
    """Prior and posterior densities side by side (``arviz.plot_prior_posterior``).

    Needs the ``prior`` group (``prior_draws > 0``, the default). Options as
    :func:`plot_trace`.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    >>> est = est.fit(X, y)
    >>> from bayesgen.plotting.plots import plot_prior_posterior
    >>> pc = plot_prior_posterior(est)
    >>> type(pc).__name__
    'PlotCollection'
    """
    data = plot_tree(est, var_names, max_features, groups=("prior", "posterior"))
    return constrained(az.plot_prior_posterior(data), note=classes_note(est))
