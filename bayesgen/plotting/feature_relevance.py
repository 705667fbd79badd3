"""The features most likely to depend on the class: P(relevant) beside each class's effect.

A plot of the table :func:`bayesgen.estimators.feature_relevance.feature_relevance` returns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np

from bayesgen.estimators.feature_relevance import feature_relevance
from bayesgen.plotting.selection import mpl_text

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["plot_feature_relevance"]


def plot_feature_relevance(
    est, *, k: int = 15, prior_inclusion: float = 0.5, prob: float = 0.94, table=None
) -> Figure:
    """The ``k`` most relevant features: P(relevant) as bars, and each class's effect (its
    log-odds, log rate ratio or standardised mean difference against the other classes) with
    its equal-tailed ``prob`` interval.

    Parameters
    ----------
    est : fitted bayesgen naive Bayes estimator
    k : int, default 15
    prior_inclusion : float, default 0.5
        ρ, the prior probability that a feature depends on the class.
    prob : float, default 0.94
    table : pandas.DataFrame, optional
        A :func:`~bayesgen.estimators.feature_relevance.feature_relevance` table to draw
        instead of computing one.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels: P(relevant) and the effects.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from bayesgen import BernoulliNB
    >>> from bayesgen.plotting.feature_relevance import plot_feature_relevance
    >>> X = np.array([[1, 0], [1, 1], [0, 1], [0, 0]] * 5)
    >>> est = BernoulliNB(inference="conjugate", compute_map=False).fit(X, [0, 0, 1, 1] * 5)
    >>> len(plot_feature_relevance(est).axes)
    2
    """
    if table is None:
        table = feature_relevance(est, prior_inclusion=prior_inclusion, prob=prob, top=k)
    table = table.head(k)
    labels = [_label(row) for _, row in table.iterrows()]
    classes = [c[len("effect[") : -1] for c in table.columns if c.startswith("effect[")]
    rows = np.arange(len(table))[::-1]
    figure, (left, right) = plt.subplots(
        1,
        2,
        figsize=(9.0, 0.35 * len(table) + 1.4),
        sharey=True,
        layout="constrained",
        gridspec_kw={"width_ratios": [1, 2]},
    )
    left.barh(rows, table["p_relevant"], color="tab:blue")
    left.axvline(prior_inclusion, color="grey", linestyle=":", linewidth=1)
    left.set_xlim(0, 1)
    left.set_xlabel("P(relevant | data)")
    left.set_yticks(rows, [mpl_text(label) for label in labels])
    offsets = np.linspace(-0.25, 0.25, len(classes)) if len(classes) > 1 else [0.0]
    for offset, label, colour in zip(offsets, classes, plt.cm.tab10.colors, strict=False):
        at = rows + offset
        right.hlines(
            at, table[f"effect_lower[{label}]"], table[f"effect_upper[{label}]"], color=colour
        )
        right.plot(table[f"effect[{label}]"], at, "o", color=colour, label=mpl_text(label))
    right.axvline(0, color="grey", linewidth=1)
    kinds = ", ".join(sorted(set(table["effect_kind"])))
    right.set_xlabel(mpl_text(f"class against the others, {prob:.0%} interval"))
    right.set_title(mpl_text(kinds), fontsize="medium")
    right.legend(title="class", fontsize="small")
    return figure


def _label(row) -> str:
    label = str(row["feature"])
    if "category" in row and row["category"] == row["category"]:  # not NaN
        category = row["category"]  # a float where a mixed table's other blocks have none
        label += f"={int(category) if float(category).is_integer() else category}"
    if "block" in row:
        label = f"{row['block']}: {label}"
    return label
