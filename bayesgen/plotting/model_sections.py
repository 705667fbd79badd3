"""The sections of the HTML report that belong to one kind of model, found by the names the
model declares (:attr:`bayesgen.families.base.Family.report_plots`).

A model says *which* of its plots the report shows; this module knows how to draw each and what
its caption says, so the model layer never imports plotting code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from bayesgen.plotting import feature_densities, plots

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


#: Features of the feature-densities section (:func:`~bayesgen.plotting.feature_densities.
#: plot_feature_densities`): two rows of three panels.
DENSITY_FEATURES = 6
#: Mass of its band.
DENSITY_PROB = 0.94


def _feature_densities(est, X_test, y_test) -> Iterator[Section]:
    title = "Feature densities"
    kind = feature_densities.density_kind(est.idata_["posterior"])
    if kind is None:
        expected = " or ".join(str(list(k.variables)) for k in feature_densities.KINDS)
        reason = f"Not drawn: needs per-feature posterior variables {expected}."
        yield (ReportSection(title, reason), None)
        return
    n = min(DENSITY_FEATURES, est.n_features_in_)
    shown = f"the {n} features the model ranks first ({est.model_.top_parameter_caption})"
    if "observed_data" in est.idata_.children:
        rows = "the histogram of the class's training rows, "
        misfit = (
            " A histogram that leaves the band and the line alike is a feature the "
            f"{kind.name} model does not fit."
        )
    else:
        rows, misfit = "", " No histograms: this fit keeps no training rows."
    yield (
        ReportSection(
            title,
            f"For {shown}, per class (colour): {rows}the exact posterior predictive "
            f"({kind.predictive_name}, line) and a band holding, at each x, the plug-in "
            f"density {kind.plug_in_name} of {DENSITY_PROB * 100:g} % of the posterior draws "
            f"(at most {feature_densities.MAX_DRAWS}, evenly spaced). The band shows how "
            "uncertain the class's density is; the predictive integrates that uncertainty "
            f"out, so with few rows its tails are heavier than the band's.{misfit}",
            "feature_densities.png",
        ),
        lambda: feature_densities.plot_feature_densities(
            est, max_features=DENSITY_FEATURES, prob=DENSITY_PROB
        ),
    )


#: Each plot a model may name in ``report_plots``, and the sections it makes.
SECTIONS: dict[str, Callable[..., Iterator[Section]]] = {
    "mu_pair": _mu_pair,
    "decision_boundary": _decision_boundary,
    "feature_densities": _feature_densities,
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
    for name in _plot_names(est):
        try:
            sections = SECTIONS[name]
        except KeyError:
            raise ValueError(
                f"report_plots: expected names among {sorted(SECTIONS)}; "
                f"{est.model_.name} names {name!r}."
            ) from None
        yield from sections(est, X_test, y_test)


def _plot_names(est) -> tuple[str, ...]:
    """The names of the model's own plots: its ``report_plots``, and "feature_densities" for
    a posterior of per-feature normals or Poisson rates that does not name it yet.

    The second rule is transitional: once GaussianNB's and PoissonNB's presentations name
    "feature_densities" (the model chooses its plots), it adds nothing and can go.
    """
    names = tuple(est.model_.report_plots)
    if "feature_densities" not in names and feature_densities.density_kind(est.idata_["posterior"]):
        names += ("feature_densities",)
    return names
