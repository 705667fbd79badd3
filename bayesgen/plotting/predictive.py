"""Plots of what a fitted estimator predicts: its largest parameters per class and, on held-out
data, its calibration and the posterior of p(true class | x).

Each returns a matplotlib ``Figure``; all are importable from :mod:`bayesgen.plotting.plots`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import xarray as xr
from matplotlib.ticker import MaxNLocator
from scipy import stats as scipy_stats

from bayesgen.plotting.selection import class_codes, legible_ticks, mpl_text, take_rows

if TYPE_CHECKING:
    from matplotlib.figure import Figure


# --------------------------------------------------------------------------------------------
# The largest parameters of each class.


def plot_top_features(est, *, k: int = 10, prob: float = 0.94) -> Figure:
    """Forest of the ``k`` largest parameters of each class with credible intervals.

    The model family chooses the parameters and their ranking
    (:meth:`~bayesgen.families.base.Family.top_parameters`). Naive Bayes: the most probable
    features (categorical: feature=category cells) of each class, ranked by the closed-form
    estimate. GDA: the largest discriminant weights θ (for two classes one panel, the weights
    of the log-odds of the second class).

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

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    >>> est = est.fit(X, y)
    >>> from bayesgen.plotting.plots import plot_top_features
    >>> fig = plot_top_features(est, k=2)
    >>> type(fig).__name__, len(fig.axes)  # one panel per class
    ('Figure', 2)
    """
    panels = _top_parameters(est, k)
    n_cols = min(len(panels), 3)
    n_rows = -(-len(panels) // n_cols)
    height = 0.35 * max(len(p[1]) for p in panels) + 1.2
    figure, axes = plt.subplots(
        n_rows, n_cols, figsize=(4.2 * n_cols, height * n_rows), squeeze=False, layout="constrained"
    )
    tail = (1 - prob) / 2
    axis_label = est.model_.top_parameter_label
    for ax, (title, labels, draws) in zip(axes.flat, panels, strict=False):
        quantiles = np.quantile(draws, [tail, 0.25, 0.75, 1 - tail], axis=0)
        rows = np.arange(len(labels))[::-1]
        ax.hlines(rows, quantiles[0], quantiles[3], linewidth=1, color="tab:blue")
        ax.hlines(rows, quantiles[1], quantiles[2], linewidth=4, color="tab:blue")
        ax.plot(draws.mean(axis=0), rows, "o", color="white", markeredgecolor="tab:blue")
        ax.set_yticks(rows, [mpl_text(_shortened(label)) for label in labels])
        ax.set_title(mpl_text(title))
        ax.set_xlabel(axis_label)
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    legible_ticks(figure)
    return figure


#: Longest feature label on an axis; longer ones end in "…" (summary.csv has them whole).
_LABEL_CHARACTERS = 30


def _shortened(label: str) -> str:
    """``label`` cut to :data:`_LABEL_CHARACTERS`: a long one would squeeze the panel to
    nothing (matplotlib then gives up its layout)."""
    return label if len(label) <= _LABEL_CHARACTERS else label[: _LABEL_CHARACTERS - 1] + "…"


def _top_parameters(est, k: int) -> list[tuple[str, list[str], np.ndarray]]:
    """(panel title, feature labels, draws (n_samples, k)) for each class panel."""
    stats = est.closed_form_
    top = est.model_.top_parameters(stats, est.idata_["posterior"])
    draws, scores = top.draws, top.scores
    names, categories = stats["feature"].values, stats.get("category")
    panels = []
    for c, label in enumerate(draws["class"].values):
        order = np.argsort(-scores[c], axis=None, kind="stable")[:k]
        order = order[np.isfinite(scores[c].ravel()[order])]
        if scores.ndim == 3:  # categorical: (feature, category) cells
            f, g = np.unravel_index(order, scores.shape[1:])
            cells = {
                "feature": xr.DataArray(f, dims="top"),
                "category": xr.DataArray(g, dims="top"),
            }
            labels = [f"{names[i]}={categories.values[j]}" for i, j in zip(f, g, strict=True)]
        else:
            cells = {"feature": xr.DataArray(order, dims="top")}
            labels = [str(names[i]) for i in order]
        chosen = draws.isel({"class": c, **cells}).transpose("chain", "draw", "top")
        values = chosen.values.reshape(-1, len(order)).astype(np.float64)
        panels.append((top.panel_title.format(label), labels, values))
    return panels


# --------------------------------------------------------------------------------------------
# Held-out data.


def calibration_table(
    est, X, y, *, n_bins: int = 10, prob: float = 0.94, proba=None
) -> pd.DataFrame:
    """Binned top-label calibration: for each bin of predicted confidence (the probability of
    the predicted class), the mean confidence, the accuracy, and an equal-tailed ``prob``
    interval for the accuracy (Jeffreys' Beta(k + ½, n - k + ½)). ``proba``:
    ``est.predict_proba(X)`` when the caller has it already.

    Returns
    -------
    pandas.DataFrame
        Columns ``lower_edge, upper_edge, n, confidence, accuracy, accuracy_lower,
        accuracy_upper``; empty bins are dropped.

    Examples
    --------
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    >>> est = est.fit(X, y)
    >>> from bayesgen.plotting.plots import calibration_table
    >>> table = calibration_table(est, X, y, n_bins=2)  # the training rows, for brevity
    >>> table[["lower_edge", "upper_edge", "n", "accuracy"]]  # only non-empty bins
       lower_edge  upper_edge  n  accuracy
    0        0.75         1.0  4       1.0
    """
    codes = class_codes(est, y)
    proba = _checked_proba(est, X, len(codes), proba)
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


def plot_calibration(est, X, y, *, n_bins: int = 10, prob: float = 0.94, proba=None) -> Figure:
    """Reliability diagram on held-out data (see :func:`calibration_table`, which takes the
    same options).

    Top: accuracy against mean confidence per bin, with ``prob`` intervals and the diagonal of
    perfect calibration; the title gives the expected calibration error (ECE). Bottom: how
    many examples fall in each bin.

    Returns
    -------
    matplotlib.figure.Figure
        Two axes.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    >>> est = est.fit(X, y)
    >>> from bayesgen.plotting.plots import plot_calibration
    >>> fig = plot_calibration(est, X, y, n_bins=2)
    >>> type(fig).__name__, len(fig.axes)  # the diagram and a histogram of confidences
    ('Figure', 2)
    """
    table = calibration_table(est, X, y, n_bins=n_bins, prob=prob, proba=proba)
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
    # Above the panel: inside it, any corner can hold a bin's point.
    figure.legend(loc="outside upper center", ncols=2, fontsize="small")
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
    counts.yaxis.set_major_locator(MaxNLocator(nbins="auto", integer=True))  # no 0.5 examples
    legible_ticks(figure)
    return figure


def _spread(n: int, size: int) -> np.ndarray:
    """Up to ``size`` indices spread evenly over range(n) (data are often sorted by class)."""
    if n <= size:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, size).round().astype(np.int64))


@dataclass(frozen=True)
class IntervalRows:
    """The held-out rows that :func:`plot_predictive_intervals` shows, and why.

    Attributes
    ----------
    rows : numpy.ndarray of int
        Indices into the held-out rows: the misclassified ones, then the least confident of the
        others, then the rest spread evenly over the remaining rows.
    misclassified, least_confident, spread : int
        How many of ``rows`` were chosen for each reason.
    n_misclassified : int
        Misclassified rows in all the held-out data (more than ``misclassified`` when they do
        not all fit).
    """

    rows: np.ndarray
    misclassified: int
    least_confident: int
    spread: int
    n_misclassified: int


def interval_rows(est, X, y, *, max_examples: int = 50, proba=None) -> IntervalRows:
    """Which held-out rows :func:`plot_predictive_intervals` shows: every misclassified row
    (the most confidently wrong first, when more than ``max_examples`` are), then the least
    confident of the correctly classified (half of the places left), then rows spread evenly
    over the rest, so that the errors and the doubtful cases are never left out by chance.

    "Misclassified" and "confidence" are those of ``est.predict_proba(X)``, the posterior mean
    of p(y = k | x): the prediction is its largest class (as ``est.predict``), the confidence
    its largest value.

    Parameters
    ----------
    est : fitted bayesgen estimator
    X, y : held-out data
    max_examples : int, default 50
    proba : array of shape (n_rows, n_classes), optional
        ``est.predict_proba(X)`` when the caller has it already (the report computes it once
        for this and the calibration diagram).

    Returns
    -------
    IntervalRows

    Raises
    ------
    ValueError
        ``max_examples`` that is not a positive integer, or labels that are not among the
        fitted classes.

    Examples
    --------
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    >>> est = est.fit(X, y)
    >>> from bayesgen.plotting.predictive import interval_rows
    >>> chosen = interval_rows(est, X, ["spam", "ham", "spam", "spam"], max_examples=2)
    >>> chosen.rows.tolist(), chosen.misclassified, chosen.least_confident
    ([0, 3], 1, 1)
    """
    if (
        isinstance(max_examples, bool)
        or not isinstance(max_examples, int | np.integer)
        or max_examples < 1
    ):
        raise ValueError(f"max_examples: expected a positive integer, got {max_examples!r}.")
    codes = class_codes(est, y)
    n_rows = X.shape[0] if hasattr(X, "shape") else len(X)
    if n_rows != len(codes):
        raise ValueError(
            f"X, y: expected one label per row; got {n_rows} rows and {len(codes)} labels."
        )
    mean = _checked_proba(est, X, n_rows, proba)
    true_prob = mean[np.arange(len(codes)), codes]
    wrong = np.flatnonzero(mean.argmax(axis=1) != codes)
    wrong = wrong[np.argsort(true_prob[wrong], kind="stable")][:max_examples]
    places = max_examples - wrong.size
    right = np.setdiff1d(np.arange(len(codes)), wrong)
    right = right[mean[right].argmax(axis=1) == codes[right]]
    doubtful = right[np.argsort(mean[right].max(axis=1), kind="stable")][: -(-places // 2)]
    rest = np.setdiff1d(np.arange(len(codes)), np.concatenate([wrong, doubtful]))
    spread = (
        rest[_spread(rest.size, places - doubtful.size)] if places > doubtful.size else rest[:0]
    )
    rows = np.concatenate([wrong, doubtful, spread]).astype(np.int64)
    n_wrong = int(np.count_nonzero(mean.argmax(axis=1) != codes))
    return IntervalRows(rows, wrong.size, doubtful.size, spread.size, n_wrong)


def _checked_proba(est, X, n_rows: int, proba) -> np.ndarray:
    """``est.predict_proba(X)``, or ``proba`` after checking that it could be."""
    if proba is None:
        return est.predict_proba(X)
    values = np.asarray(proba, dtype=np.float64)
    expected = (n_rows, len(est.classes_))
    if values.shape != expected or not np.all(np.isfinite(values)):
        raise ValueError(
            f"proba: expected est.predict_proba(X), finite values of shape {expected}; got "
            f"shape {values.shape}."
        )
    return values


def plot_predictive_intervals(
    est, X, y, *, max_examples: int = 50, prob: float = 0.94, proba=None
) -> Figure:
    """Posterior of p(true class | x) for held-out examples, with credible intervals.

    Parameters
    ----------
    est : fitted bayesgen estimator
    X, y : held-out data
    max_examples : int, default 50
        At most this many examples: every misclassified one, the least confident of the
        others, and the rest spread evenly over the rows of X (:func:`interval_rows`).
    prob : float, default 0.94
        Mass of the equal-tailed interval over the posterior draws.
    proba : array of shape (n_rows, n_classes), optional
        ``est.predict_proba(X)`` when the caller has it already.

    Returns
    -------
    matplotlib.figure.Figure
        One axes; examples sorted by their posterior mean, misclassified ones in red; the x
        label says how many of each kind are shown.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    >>> est = est.fit(X, y)
    >>> from bayesgen.plotting.plots import plot_predictive_intervals
    >>> fig = plot_predictive_intervals(est, X, y)
    >>> type(fig).__name__, len(fig.axes)
    ('Figure', 1)
    """
    all_codes = class_codes(est, y)
    n_examples = len(all_codes)
    proba = _checked_proba(est, X, n_examples, proba)
    chosen = interval_rows(est, X, y, max_examples=max_examples, proba=proba)
    rows = chosen.rows
    draws = est.predict_proba_draws(take_rows(X, rows)).values  # chain, draw, obs, class
    codes = all_codes[rows]
    true_prob = draws[..., np.arange(len(rows)), codes].reshape(-1, len(rows))
    mean = true_prob.mean(axis=0)
    tail = (1 - prob) / 2
    lower, upper = np.quantile(true_prob, [tail, 1 - tail], axis=0)
    # Misclassified as interval_rows chose them: by est.predict_proba, as est.predict.
    predicted = proba[rows].argmax(axis=1)
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
    ax.set_xlabel(
        f"held-out example, sorted by p(true class | x): {len(rows)} of {n_examples}\n"
        + _interval_rows_note(chosen)
    )
    ax.set_ylabel(f"p(true class | x), {prob:.0%} interval")
    ax.legend(loc="lower right", fontsize="small")
    return figure


def _interval_rows_note(chosen: IntervalRows) -> str:
    if chosen.misclassified < chosen.n_misclassified:
        wrong = f"the {chosen.misclassified} most confidently wrong of {chosen.n_misclassified}"
    else:
        wrong = f"all {chosen.misclassified}"
    parts = [f"{wrong} misclassified"]
    if chosen.least_confident:
        parts.append(f"the {chosen.least_confident} least confident others")
    if chosen.spread:
        parts.append(f"{chosen.spread} spread evenly over the rest")
    return ", ".join(parts)
