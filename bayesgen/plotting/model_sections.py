"""The sections of the HTML report that belong to one kind of model, found by the names the
model declares (:attr:`bayesgen.families.base.Family.report_plots`).

A model says *which* of its plots the report shows; this module knows how to draw each and what
its caption says, so the model layer never imports plotting code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from bayesgen.plotting import plots

__all__ = ["SECTIONS", "ReportSection", "model_sections"]


@dataclass(frozen=True)
class ReportSection:
    """One plot of the HTML report: its PNG's file name (None when the plot is skipped) and
    a one-line caption (or the reason for skipping it)."""

    title: str
    caption: str
    file: str | None = None


#: What :func:`model_sections` yields: a section and the call that draws it (None: skipped).
Section = tuple[ReportSection, Callable[[], object] | None]


def _mu_pair(est, X_test, y_test) -> Iterator[Section]:
    yield (
        ReportSection(
            "Class means",
            "Joint posterior draws of the class means μ (pairs of class × feature); round "
            "clouds mean independent uncertainty, tilted clouds correlated uncertainty.",
            "mu_pair.png",
        ),
        lambda: plots.plot_mu_pair(est),
    )


def _decision_boundary(est, X_test, y_test) -> Iterator[Section]:
    title = "Decision boundary"
    if not est.model_.linear_boundaries:
        reason = "Not drawn: the model's boundaries are not linear (QDA's are quadratic), and "
        yield (ReportSection(title, reason + "the plot draws linear ones."), None)
    elif X_test is None:
        yield (ReportSection(title, "Not drawn: needs data (pass X_test and y_test)."), None)
    elif est.n_features_in_ < 2:
        yield (ReportSection(title, "Not drawn: needs at least two features."), None)
    else:
        posterior = est.idata_["posterior"]
        n_draws = min(100, posterior.sizes["chain"] * posterior.sizes["draw"])
        plane = (
            "the two features"
            if est.n_features_in_ == 2
            else "the first two discriminant directions"
        )
        yield (
            ReportSection(
                title,
                f"Held-out points on {plane} with the boundaries of {n_draws} posterior "
                "draws (grey) and of the posterior mean (black); the width of the grey band "
                "is the uncertainty about where one class ends.",
                "decision_boundary.png",
            ),
            lambda: plots.plot_decision_boundary(est, X_test, y_test),
        )


#: Each plot a model may name in ``report_plots``, and the sections it makes.
SECTIONS: dict[str, Callable[..., Iterator[Section]]] = {
    "mu_pair": _mu_pair,
    "decision_boundary": _decision_boundary,
}


def model_sections(est, X_test, y_test) -> Iterator[Section]:
    """The report sections of the plots ``est``'s model names, in its order.

    Raises
    ------
    ValueError
        For a plot name no section draws.

    Examples
    --------
    >>> from bayesgen import MultinomialNB
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, prior_draws=0)
    >>> list(model_sections(est.fit([[1, 0], [0, 1]], [0, 1]), None, None))
    []
    """
    for name in est.model_.report_plots:
        try:
            sections = SECTIONS[name]
        except KeyError:
            raise ValueError(
                f"report_plots: expected names among {sorted(SECTIONS)}; "
                f"{est.model_.name} names {name!r}."
            ) from None
        yield from sections(est, X_test, y_test)
