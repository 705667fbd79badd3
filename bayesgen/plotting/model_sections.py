"""The sections of the HTML report that belong to one kind of model, found by the names the
model declares (:attr:`bayesgen.families.base.Family.report_plots`).

A model says *which* of its plots the report shows; this module knows how to draw each and what
its caption says, so the model layer never imports plotting code.

A model of several blocks (a mixed model, :class:`bayesgen.families.mixed.MixedFamily`: one
with a ``blocks(estimates)`` method) gets a section per block, drawn from the block's own
pieces (:func:`block_sections`): the plots the block's model names that can be drawn from a
block alone (:data:`BLOCK_SECTIONS`), else the block's top parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import xarray as xr

from bayesgen.estimators.feature_relevance import relevance_unavailable
from bayesgen.families.block_layout import block_posterior
from bayesgen.plotting import feature_densities, missing, plots
from bayesgen.plotting.feature_relevance import plot_feature_relevance

if TYPE_CHECKING:
    from bayesgen.families.base import Family

__all__ = [
    "BLOCK_SECTIONS",
    "RELEVANCE_FEATURES",
    "SECTIONS",
    "BlockPieces",
    "ReportSection",
    "block_sections",
    "fitted_blocks",
    "model_sections",
]


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
    rows = "observed_data" in est.idata_.children
    yield (
        ReportSection(title, _densities_caption(kind, shown, rows), "feature_densities.png"),
        lambda: feature_densities.plot_feature_densities(
            est, max_features=DENSITY_FEATURES, prob=DENSITY_PROB
        ),
    )


def _densities_caption(kind: feature_densities.DensityKind, shown: str, rows: bool) -> str:
    """The caption of a feature-densities plot of ``shown`` (the features, as a phrase)."""
    if rows:
        histogram = "the histogram of the class's training rows, "
        misfit = (
            " A histogram that leaves the band and the line alike is a feature the "
            f"{kind.name} model does not fit."
        )
    else:
        histogram, misfit = "", " No histograms: this fit keeps no training rows."
    return (
        f"For {shown}, per class (colour): {histogram}the exact posterior predictive "
        f"({kind.predictive_name}, line) and a band holding, at each x, the plug-in "
        f"density {kind.plug_in_name} of {DENSITY_PROB * 100:g} % of the posterior draws "
        f"(at most {feature_densities.MAX_DRAWS}, evenly spaced). The band shows how "
        "uncertain the class's density is; the predictive integrates that uncertainty "
        f"out, so with few rows its tails are heavier than the band's.{misfit}"
    )


#: Each plot a model may name in ``report_plots``, and the sections it makes.
def _missing_entries(est) -> Iterator[Section]:
    """The share of each class's rows missing each feature, where any entry was missing."""
    table = missing.missing_table(est)
    if table is None:
        return
    n_cells = int((table.drop(columns="all") > 0).to_numpy().sum())
    yield (
        ReportSection(
            "Missing entries",
            "The share of each class's training rows that miss each feature (the features "
            f"missing most often; {n_cells} cells miss some). A missing entry's factor drops "
            "out of the likelihood: each (class, feature) cell's posterior counts only the "
            "rows observed there, so a cell near 100 % keeps close to its prior.",
            "missing.png",
        ),
        lambda: missing.plot_missing(est),
    )


#: Features of the feature-relevance section: its effects are drawn for these only, so the
#: section costs the Bayes factors of every feature (closed forms) and draws for this many.
RELEVANCE_FEATURES = 15


def _feature_relevance(est) -> Iterator[Section]:
    """P(relevant) and the class effects of the most relevant features
    (:func:`~bayesgen.plotting.feature_relevance.plot_feature_relevance`), for a naive Bayes
    fit; the reason it is not drawn otherwise."""
    title = "Feature relevance"
    reason = relevance_unavailable(est)
    if reason is not None:
        yield (ReportSection(title, f"Not drawn: {reason}"), None)
        return
    yield (
        ReportSection(
            title,
            f"The {RELEVANCE_FEATURES} features most likely to depend on the class. Left: "
            "P(relevant | data), from the exact Bayes factor of one distribution per class "
            "against one for all the classes, under a prior inclusion probability of 0.5 "
            "(dotted); for word counts the word is set against the rest of the vocabulary, "
            "an approximation (docs/feature-relevance.md). Right: each class against the "
            "other classes pooled, posterior mean (dot) and 94 % interval from exact "
            "posterior draws; an interval across 0 is an effect the data cannot sign.",
            "feature_relevance.png",
        ),
        lambda: plot_feature_relevance(est, k=RELEVANCE_FEATURES),
    )


SECTIONS: dict[str, Callable[..., Iterator[Section]]] = {
    "mu_pair": _mu_pair,
    "decision_boundary": _decision_boundary,
    "feature_densities": _feature_densities,
}


def model_sections(est, X_test, y_test, *, top_k: int = 10) -> Iterator[Section]:
    """The report sections of the plots ``est``'s model names, in its order; the features'
    relevance (drawn for naive Bayes blocks, else the reason it is not); then, for a model of
    several blocks, each block's (:func:`block_sections`, ``top_k`` parameters per class in
    a top-parameters plot).

    Raises
    ------
    ValueError
        For a plot name no section draws.

    Examples
    --------
    >>> from bayesgen import MultinomialNB
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, prior_draws=0)
    >>> sections = model_sections(est.fit([[1, 0], [0, 1]], [0, 1]), None, None)
    >>> [section.title for section, _ in sections]
    ['Feature relevance']
    """
    yield from _missing_entries(est)
    for name in est.model_.report_plots:
        try:
            sections = SECTIONS[name]
        except KeyError:
            raise ValueError(
                f"report_plots: expected names among {sorted(SECTIONS)}; "
                f"{est.model_.name} names {name!r}."
            ) from None
        yield from sections(est, X_test, y_test)
    yield from _feature_relevance(est)
    blocks = fitted_blocks(est)
    if blocks is not None:
        yield from block_sections(est, blocks, top_k=top_k)


# -- the blocks of a mixed model ---------------------------------------------------------------


def fitted_blocks(est) -> list | None:
    """The blocks of a fitted model of several blocks, in order (its model's
    ``blocks(estimates)``: :meth:`bayesgen.families.mixed.MixedFamily.blocks`); None for a
    model that is one block."""
    blocks = getattr(est.model_, "blocks", None)
    return None if blocks is None else blocks(est.closed_form_)


@dataclass(frozen=True)
class BlockPieces:
    """What a block's plots are drawn from: its own model, closed form and posterior draws
    (under their own names and dims, with the shared ``class_prob``), its columns of the
    training rows (None: the fit kept none), and where its PNGs go.

    It is also what :func:`bayesgen.plotting.plots.plot_top_features` reads of an estimator
    (``model_``, ``closed_form_``, ``idata_``), so that plot draws a block as it draws a fit.
    """

    name: str
    model_: Family
    closed_form_: xr.Dataset
    idata_: xr.DataTree
    X_rows: object
    y_codes: object
    classes_: object
    file_stem: str

    @property
    def title(self) -> str:
        return f"Block {self.name} ({self.model_.estimator})"


def block_sections(est, blocks, *, top_k: int = 10) -> Iterator[Section]:
    """One section per block of ``blocks`` (:func:`fitted_blocks`), titled with its name and
    model: the plots its model names (``report_plots``) that :data:`BLOCK_SECTIONS` draws from
    a block, or, where it names none of them, its top parameters
    (:func:`~bayesgen.plotting.plots.plot_top_features` of the block alone)."""
    X_rows, y_codes = feature_densities.training_rows_or_none(est)
    posterior = est.idata_["posterior"].to_dataset()
    for number, block in enumerate(blocks, start=1):
        pieces = BlockPieces(
            name=block.name,
            model_=block.model,
            closed_form_=block.estimates,
            idata_=xr.DataTree.from_dict({"posterior": block_posterior(block.name, posterior)}),
            X_rows=None if X_rows is None else block.rows(X_rows),
            y_codes=y_codes,
            classes_=est.classes_,
            file_stem=f"block{number}",
        )
        own = [name for name in block.model.report_plots if name in BLOCK_SECTIONS]
        if not own:
            yield from _block_top_parameters(pieces, top_k)
        for name in own:
            yield from BLOCK_SECTIONS[name](pieces)


def _block_top_parameters(block: BlockPieces, top_k: int) -> Iterator[Section]:
    yield (
        ReportSection(
            block.title,
            f"The block's {top_k} {block.model_.top_parameter_caption} of each class: dot = "
            "posterior mean, thick bar = 50 % and thin bar = 94 % credible interval; "
            "overlapping bars cannot be told apart by the data.",
            f"{block.file_stem}_top_features.png",
        ),
        lambda: plots.plot_top_features(block, k=top_k),
    )


def _block_feature_densities(block: BlockPieces) -> Iterator[Section]:
    kind = feature_densities.density_kind(block.idata_["posterior"])
    if kind is None:  # a block naming the plot holds its variables; never skipped quietly
        yield (ReportSection(block.title, "Not drawn: no per-feature posterior variables."), None)
        return
    feature_names = block.closed_form_["feature"].values
    n = min(DENSITY_FEATURES, feature_names.size)
    shown = f"the block's {n} features its model ranks first ({block.model_.top_parameter_caption})"
    yield (
        ReportSection(
            block.title,
            _densities_caption(kind, shown, block.X_rows is not None),
            f"{block.file_stem}_feature_densities.png",
        ),
        lambda: feature_densities.plot_block_feature_densities(
            block.model_,
            block.closed_form_,
            block.idata_["posterior"].to_dataset(),
            block.X_rows,
            block.y_codes,
            block.classes_,
            feature_names,
            max_features=DENSITY_FEATURES,
            prob=DENSITY_PROB,
        ),
    )


#: The plots of :data:`SECTIONS` that a block of a mixed model can be drawn with from its own
#: pieces (:class:`BlockPieces`); a block's other plots need a whole fit (the decision
#: boundary predicts with every block) and are left out of its section.
BLOCK_SECTIONS: dict[str, Callable[[BlockPieces], Iterator[Section]]] = {
    "feature_densities": _block_feature_densities,
}
