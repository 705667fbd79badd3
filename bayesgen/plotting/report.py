"""A self-contained HTML report of a fitted estimator.

:func:`report` writes every plot of :mod:`bayesgen.plotting.plots` as a PNG next to an
``index.html``
with one-line captions, plus ``summary.csv`` (the ArviZ summary, :func:`write_summary`) and
``comparison.csv`` (:func:`bayesgen.checks.comparison.compare`). What differs between models (the
variables shown, how the closed-form mean is called, the model's own plots) is the model
family's answer (:mod:`bayesgen.families`).
"""

from __future__ import annotations

import datetime
import html
import importlib.metadata
import os
import warnings
from pathlib import Path

import arviz as az
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import xarray as xr

from bayesgen.checks import render
from bayesgen.families.base import ReportSection
from bayesgen.io import model_files as io
from bayesgen.plotting import plots
from bayesgen.plotting import workflow as plots_workflow
from bayesgen.plotting.selection import family_of, feature_label, subset

_DPI = 100
#: Hyperparameters that only NUTS reads; a conjugate fit's report leaves them out.
_NUTS_ONLY = frozenset({"tune", "target_accept", "nuts_sampler", "cores"})
#: Hyperparameters that change what a fit prints, not what it fits: never listed.
_DISPLAY_ONLY = frozenset({"progressbar"})
#: The comparison table's columns in the report, with their headings (narrower than the
#: printed table: the MCSEs, the MLE and the notes are in comparison.csv).
_REPORT_COLUMNS = {
    "variable": "variable",
    "coords": "coords",
    "posterior_mean": "posterior mean",
    "closed_form": "closed form",
    "z": "z",
    "posterior_sd": "posterior SD",
    "closed_form_sd": "closed-form SD",
    "z_sd": "z of SD",
    "map": "MAP",
    "expected_map": "closed-form mode",
    "r_hat": "R-hat",
    "ess_bulk": "bulk ESS",
    "agrees": "agrees",
    "diagnostic": "diagnostic",
}
_MAP_COLUMNS = ("map", "expected_map")
#: The packages whose versions the report names: what made the fit and the report.
_VERSIONED = {"bayesgen": "bayesgen", "pymc": "PyMC", "arviz": "ArviZ"}
_REPORT_TITLE = "bayesgen report: "  # in index.html's <title>: marks a folder as a report
#: Draws per chain in the rank plot: its uniformity test is most of a report's plotting time
#: with thousands of draws, and a few hundred per chain show chains that disagree.
RANK_MAX_DRAWS = 250


def report(
    est,
    out_dir,
    X_test=None,
    y_test=None,
    *,
    max_features: int = 4,
    top_k: int = 10,
    summary_max_features: int = 100,
    progress=None,
    comparison=None,
) -> Path:
    """Write an HTML report of a fitted estimator into ``out_dir``.

    The folder is self-contained: ``index.html`` (no scripts, no external files) shows the
    PNG plots next to it, with a one-line caption each, under a header with the model, its
    hyperparameters and the verdict of :func:`bayesgen.checks.comparison.compare`. Also written:
    ``summary.csv`` (``arviz.summary`` of the posterior, for at most
    ``summary_max_features`` features) and ``comparison.csv`` (the comparison's table).

    Parameters
    ----------
    est : fitted bayesgen estimator
    out_dir : str or path-like
        A new folder (missing parents are created), an empty one, or one holding an earlier
        report, which is replaced as a whole: the report is built in a temporary folder beside
        it and swapped in only when complete, so a failed report leaves the earlier one intact
        and every file is new (never written through a link planted in the folder). A folder
        holding other files, a file, or a symbolic link is refused (ValueError).
    X_test, y_test : array-like, optional
        Held-out data for the calibration diagram, the predictive intervals and (GDA) the
        decision boundaries; those plots are listed as skipped without it.
    max_features : int, default 4
        Features in the trace, rank, ESS, density and prior plots
        (:func:`~bayesgen.plotting.plots.selected_features`).
    top_k : int, default 10
        Features per class in :func:`~bayesgen.plotting.plots.plot_top_features`.
    summary_max_features : int, default 100
        Features whose parameters ``summary.csv`` lists (the first of
        :func:`~bayesgen.plotting.plots.selected_features`); the class probabilities are always
        listed.
    progress : callable, optional
        Called with a one-line message (e.g. ``"plotting Trace"``) as each part starts, for
        a progress line per step (:class:`bayesgen.inference.progress.Progress`).
    comparison : bayesgen.checks.comparison.Comparison, optional
        ``compare(est)`` when the caller has it already (the demo prints it before the
        report), so that it is not computed twice; by default the report computes it.

    Returns
    -------
    pathlib.Path
        The path of ``index.html``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    >>> est = est.fit(X, y)
    >>> import tempfile
    >>> from pathlib import Path
    >>> from bayesgen import report
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     index = report(est, Path(folder) / "report")
    ...     files = sorted(path.name for path in index.parent.iterdir())
    >>> index.name, "summary.csv" in files, "trace.png" in files
    ('index.html', True, True)
    """
    from bayesgen.checks.comparison import Comparison, compare

    est.check_fitted()
    if (X_test is None) != (y_test is None):
        raise ValueError("X_test and y_test: pass both or neither.")
    if comparison is not None and not isinstance(comparison, Comparison):
        raise TypeError(
            "comparison: expected the Comparison that bayesgen.compare(est) returns, or None, "
            f"got {type(comparison).__name__}."
        )
    out = Path(out_dir)
    _check_replaceable(out)

    with io.replacing_folder(out) as folder:
        step = progress if progress is not None else (lambda message: None)
        step("writing summary.csv and comparison.csv")
        write_summary(est, folder / "summary.csv", max_features=summary_max_features)
        if comparison is None:
            comparison = compare(est)
        io.write_csv(comparison.table, folder / "comparison.csv")
        step("leave-one-out prediction of the training labels")
        labels_loo = _label_loo(est)
        # The held-out probabilities, once for the calibration and the predictive intervals.
        proba = None if X_test is None else est.predict_proba(X_test)
        sections = []
        plan = _plan(est, X_test, y_test, max_features=max_features, top_k=top_k, proba=proba)
        for section, make in plan:
            if make is not None:
                step(f"plotting {section.title}")
                _save(make(), folder / section.file)
            sections.append(section)
        chosen = plots.selected_features(est, max_features=max_features)
        selection = [feature_label(f) for f in chosen]
        html_text = _html(est, comparison, sections, selection, labels_loo)
        (folder / "index.html").write_text(html_text, encoding="utf-8")
    return out / "index.html"


def _check_replaceable(out: Path) -> None:
    """Refuse to replace a folder that holds anything but an earlier report: the swap
    removes the whole previous folder."""
    if out.is_symlink() or not out.is_dir():
        return  # io.replacing_folder refuses links and files
    entries = sorted(os.scandir(out), key=lambda entry: entry.name)
    if not entries:
        return
    index = out / "index.html"
    earlier = (
        index.is_file()
        and not index.is_symlink()
        and _REPORT_TITLE in index.read_text(encoding="utf-8", errors="replace")
    )
    foreign = [
        entry.name
        for entry in entries
        if entry.is_dir(follow_symlinks=False)
        or not (entry.name == "index.html" or entry.name.endswith((".png", ".csv")))
    ]
    if not earlier or foreign:
        example = (foreign or [entry.name for entry in entries])[0]
        raise ValueError(
            f"out_dir: {str(out)!r} holds files that are not a bayesgen report (e.g. "
            f"{example!r}); a report replaces its folder as a whole, so pass a new or empty "
            "folder, or one holding an earlier report."
        )


def write_summary(est, path, *, max_features: int = 100) -> pd.DataFrame:
    """``arviz.summary`` of every posterior variable, for the ``max_features`` features of
    :func:`~bayesgen.plotting.plots.selected_features`, with 94 % equal-tailed intervals; written to
    ``path`` as CSV.

    Examples
    --------
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    >>> est = est.fit(X, y)
    >>> import tempfile
    >>> from pathlib import Path
    >>> from bayesgen.plotting.report import write_summary
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     table = write_summary(est, Path(folder) / "summary.csv")
    >>> table.shape[0]  # 2 class probabilities and 2 x 3 word probabilities
    8
    """
    selection = plots.selected_features(est, max_features=max_features)
    posterior = subset(est.idata_["posterior"].to_dataset(), selection, for_matplotlib=False)
    table = az.summary(xr.DataTree.from_dict({"posterior": posterior}), ci_prob=0.94)
    io.write_csv(table, path)  # atomic, and names that look like formulas escaped
    return table


def _save(plot, path: Path) -> None:
    figure = plot if isinstance(plot, plt.Figure) else plot.viz["figure"].item()
    try:
        figure.savefig(path, dpi=_DPI)
    finally:
        plt.close(figure)


def _label_loo(est):
    """:func:`bayesgen.checks.loo.leave_one_out` of the fit (what ``bayesgen loo`` prints), its
    warnings as text, and None with the reason where it is not defined (no training rows,
    sample weights)."""
    from bayesgen.checks.loo import leave_one_out

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = leave_one_out(est)
        except ValueError as error:
            return None, str(error)
    return result, " ".join(str(w.message) for w in caught)


def _plan(est, X_test, y_test, *, max_features: int, top_k: int, proba=None):
    """(section, zero-argument plot function or None when skipped), in report order."""
    model = family_of(est)
    n = len(plots.selected_features(est, max_features=max_features))
    shown = " and ".join(model.variable_symbols.get(name, name) for name in model.plot_variables)
    which = f"{shown} of {n} features"
    yield (
        ReportSection(
            "Trace",
            f"Draws of each chain (right) and their densities (left) for {which}; chains that "
            "overlap and look like stationary noise have converged.",
            "trace.png",
        ),
        lambda: plots.plot_trace(est, max_features=max_features),
    )
    step = plots.rank_thinning(est, RANK_MAX_DRAWS)
    per_chain = est.idata_["posterior"].sizes["draw"]
    thinned = (
        f" Drawn from one draw in {step} ({len(range(0, per_chain, step))} of {per_chain} per "
        "chain, evenly spaced), which shows chains that disagree as well as all of them and "
        "keeps the test quick."
        if step > 1
        else ""
    )
    yield (
        ReportSection(
            "Rank",
            "Rank plots: how each chain's draws rank among all chains (the ECDF of its "
            "fractional ranks minus the uniform CDF); curves that stay flat and inside the grey "
            f"band (where a chain's curve stays with {plots.RANK_ENVELOPE_PROB:.0%} probability "
            "when all chains sample the same distribution) mean the chains agree. ArviZ's "
            "multi-chain uniformity test runs on every panel; a panel where it fails (p < α = "
            f"{1 - plots.RANK_ENVELOPE_PROB:.2g}: the chains sample different distributions) "
            f"says so in red, and panels that pass carry no label.{thinned}",
            "rank.png",
        ),
        lambda: plots.plot_rank(est, max_features=max_features, max_draws=RANK_MAX_DRAWS),
    )
    yield (
        ReportSection(
            "Effective sample size",
            "Local effective sample size at each quantile of the posterior; points above the "
            "dashed minimum line mean enough independent draws to estimate that quantile.",
            "ess.png",
        ),
        lambda: plots.plot_ess(est, max_features=max_features),
    )
    if plots.has_energy(est):
        yield (
            ReportSection(
                "Energy",
                "NUTS energy: marginal energy against energy transitions; similar widths "
                "(BFMI above 0.3) mean the sampler moves freely through the posterior.",
                "energy.png",
            ),
            lambda: plots.plot_energy(est),
        )
    else:
        yield (
            ReportSection(
                "Energy",
                "Not drawn: this fit drew exact independent samples from the conjugate "
                "posterior (inference='conjugate'), so there is no NUTS energy to diagnose.",
            ),
            None,
        )
    what = model.top_parameter_caption
    yield (
        ReportSection(
            "Top features",
            f"The {top_k} {what} of each class: dot = posterior mean, thick bar = 50 % and thin "
            "bar = 94 % credible interval; overlapping bars cannot be told apart by the data.",
            "top_features.png",
        ),
        lambda: plots.plot_top_features(est, k=top_k),
    )
    mean = model.mean_caption
    map_note = "and the MAP (green dash-dot)" if est.map_ is not None else "(MAP not computed)"
    yield (
        ReportSection(
            "Posterior and closed forms",
            f"Posterior densities with the {mean} (black dashed), the MLE (red dotted) "
            f"{map_note}; each line carries its marker (●, ▼, ▲) at its own height, so lines at "
            "the same value are all seen. The black line should sit at the centre of mass of "
            "each density.",
            "posterior_vs_closed_form.png",
        ),
        lambda: plots.plot_posterior_vs_closed_form(est, max_features=max_features),
    )
    if "prior" in est.idata_.children:
        yield (
            ReportSection(
                "Prior and posterior",
                "Prior and posterior densities of the same parameters; a posterior much "
                "narrower than the prior means the data, not the prior, determine it.",
                "prior_posterior.png",
            ),
            lambda: plots.plot_prior_posterior(est, max_features=max_features),
        )
    else:
        yield (ReportSection("Prior and posterior", "Not drawn: the fit has no prior draws."), None)
    yield from _plan_workflow(est)
    yield from model.report_sections(est, X_test, y_test)
    yield from _plan_held_out(est, X_test, y_test, proba)


def _plan_workflow(est):
    """The posterior predictive check and PSIS-LOO (:mod:`bayesgen.plotting.workflow`); a model
    file written before the training rows were stored has neither."""
    model = family_of(est)
    if plots_workflow.has_observed_data(est) and model.ppc_variables:
        yield (
            ReportSection(
                "Posterior predictive check",
                f"Top: the ECDF of {' and '.join(model.ppc_variables)} (the share of values at "
                "or below each x) in the training data (black) and in 100 data sets simulated "
                "from the posterior with the same labels (blue); the black curve should lie "
                "inside the blue spread. Bottom: the same ECDFs minus the simulated sets' "
                "median, so that shifts of a few hundredths show: the band holds 94 % of the "
                "simulated sets at each x, and black above the band means a black curve left "
                "of the blue ones (more small values than the model simulates), below it one "
                f"to their right. {model.ppc_caption}",
                "ppc.png",
            ),
            lambda: plots_workflow.plot_ppc(est),
        )
    else:
        reason = (
            f"Not drawn: this fit holds no training rows; {_why_no_rows(est)}"
            if not plots_workflow.has_observed_data(est)
            else f"Not drawn: the {model.estimator} family names no statistics to check."
        )
        yield (ReportSection("Posterior predictive check", reason), None)
    if plots_workflow.has_log_likelihood(est):
        yield (
            ReportSection(
                "Leave-one-out (PSIS)",
                "Pareto k of each training row in PSIS leave-one-out cross-validation of the "
                "whole row, log p(x_i, y_i): its features and its label. The title's elpd_loo "
                "sums the log density of each left-out row's features and label, so it is "
                "far larger in size than the label score at the top of this page (which "
                "scores log p(y_i | x_i) alone, exactly) and compares only models of the same "
                "features; p_loo is the effective number of parameters. k estimates how "
                "heavy-tailed the importance weights of leaving the row out are: below the "
                "dashed line (0.7, lower with fewer than 2,200 draws) the PSIS estimate is "
                "reliable; rows above it are influential, and the 10 largest are labelled "
                "with their index.",
                "loo.png",
            ),
            lambda: plots_workflow.plot_loo(est),
        )
    else:
        reason = (
            "Not drawn: this fit holds no pointwise log-likelihood of its training rows; "
            f"{_why_no_rows(est)}"
        )
        yield (ReportSection("Leave-one-out (PSIS)", reason), None)


def _why_no_rows(est) -> str:
    """Why a fit has no ``observed_data`` (fitted in chunks, or an older model file), and what
    gives it one."""
    if "partial_fit_calls" in est.closed_form_.attrs:
        return "partial_fit keeps no rows. Fit on all rows at once to get it."
    if "dask_chunks" in est.closed_form_.attrs:
        return "a fit on dask input is out of core and keeps no rows. Fit in-memory rows to get it."
    return "model files written before the rows were stored lack them. Refit the model to get it."


def _plan_held_out(est, X_test, y_test, proba=None):
    if X_test is None:
        reason = "Not drawn: needs held-out data (pass X_test and y_test)."
        yield (ReportSection("Calibration", reason), None)
        yield (ReportSection("Predictive intervals", reason), None)
        return
    yield (
        ReportSection(
            "Calibration",
            "Reliability diagram on held-out data: accuracy against predicted confidence per "
            "bin (94 % intervals); points below the diagonal mean overconfident predictions.",
            "calibration.png",
        ),
        lambda: plots.plot_calibration(est, X_test, y_test, proba=proba),
    )
    yield (
        ReportSection(
            "Predictive intervals",
            "Posterior probability of the true class for held-out examples (dot = mean, bar = "
            "94 % interval, red = misclassified); long bars are uncertain predictions. Shown: "
            "every misclassified example, then the least confident of the others, then "
            "others spread evenly, 50 at most (the axis label gives the counts).",
            "predictive_intervals.png",
        ),
        lambda: plots.plot_predictive_intervals(est, X_test, y_test, proba=proba),
    )


_STYLE = """
body { font-family: sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem;
       color: #222; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; font-size: 0.9rem; }
td, th { border: 1px solid #ccc; padding: 0.2rem 0.5rem; text-align: left; }
figure { margin: 2rem 0; }
img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #444; margin-top: 0.3rem; }
.wide { overflow-x: auto; max-width: 100%; }
table.comparison { width: 100%; font-size: 0.8rem; }
table.comparison th { vertical-align: bottom; }
table.comparison td.coords { overflow-wrap: anywhere; }
table.comparison td.number { text-align: right; white-space: nowrap;
                             font-variant-numeric: tabular-nums; }
.headline { font-size: 1.15rem; margin: 1rem 0; }
.ok { color: #176c2c; font-weight: bold; }
.warn { color: #8a5300; font-weight: bold; }
.fail { color: #a31515; font-weight: bold; }
"""


def _html(est, comparison, sections: list[ReportSection], selection: list[str], labels_loo) -> str:
    """The text of index.html; every name and caption goes through ``html.escape``."""
    e = html.escape
    name = type(est).__name__
    params = "".join(
        f"<tr><th>{e(key)}</th><td>{e(repr(value))}</td></tr>"
        for key, value in sorted(est.get_params(deep=False).items())
        if key not in _DISPLAY_ONLY and not (est.inference == "conjugate" and key in _NUTS_ONLY)
    )
    params_note = (
        f"<p>Not listed: {e(', '.join(sorted(_NUTS_ONLY)))}, which only NUTS reads "
        "(this fit drew exact samples from the conjugate posterior).</p>"
        if est.inference == "conjugate"
        else ""
    )
    facts_rows = "".join(
        f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in _facts(est, selection).items()
    )
    about_rows = "".join(
        f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in _provenance(est).items()
    )
    sentence, level = render.headline(comparison)
    verdict = f'<p class="{e(level)}">{e(sentence)}</p>'
    figures, skipped = [], []
    for section in sections:
        if section.file is None:
            skipped.append(f"<li><b>{e(section.title)}</b>: {e(section.caption)}</li>")
            continue
        figures.append(
            f'<figure id="{e(Path(section.file).stem)}"><h2>{e(section.title)}</h2>'
            f'<img src="{e(section.file)}" alt="{e(section.title)}">'
            f"<figcaption>{e(section.caption)}</figcaption></figure>"
        )
    skipped_html = f"<h2>Not shown</h2><ul>{''.join(skipped)}</ul>" if skipped else ""
    table = _comparison_html(comparison)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy"
      content="default-src 'none'; img-src 'self' file:; style-src 'unsafe-inline'">
<title>{_REPORT_TITLE}{e(name)}</title>
<style>{_STYLE}</style>
</head>
<body>
<h1>bayesgen report: {e(name)}</h1>
{_label_loo_html(labels_loo)}
<table>{facts_rows}</table>
<h2>Posterior against the closed forms</h2>
{verdict}
{table}
<p>Tables: <a href="summary.csv">summary.csv</a> (ArviZ summary of the posterior),
<a href="comparison.csv">comparison.csv</a>.</p>
<h2>Hyperparameters</h2>
<table>{params}</table>
{params_note}
<h2>About this fit</h2>
<table>{about_rows}</table>
{"".join(figures)}
{skipped_html}
</body>
</html>
"""


def _facts(est, selection: list[str]) -> dict[str, str]:
    """The header table: the classes, the data, the draws, the fitted λ."""
    posterior = est.idata_["posterior"]
    facts = {
        "data": _data_description(est),
        "draws": f"{posterior.sizes['chain']} chains × {posterior.sizes['draw']} draws "
        f"({posterior.attrs.get('inference_library', est.inference)})",
        "features in the plots": ", ".join(selection),
    }
    if hasattr(est, "alpha_"):  # naive Bayes: λ as fitted (chosen by the evidence, or per class)
        fitted = np.atleast_1d(est.alpha_)
        facts["fitted λ (alpha_)"] = (
            f"{fitted[0]:g}"
            if np.ndim(est.alpha_) == 0
            else ", ".join(f"{c}: {v:g}" for c, v in zip(est.classes_, fitted, strict=True))
        )
    return facts


def _label_loo_html(labels_loo) -> str:
    """The headline figure: the exact leave-one-out log score of the training labels, named
    for what it scores (the PSIS figure further down scores whole rows)."""
    e = html.escape
    result, note = labels_loo
    if result is None:
        return (
            '<p class="headline">Leave-one-out prediction of the training labels: not '
            f"available ({e(note)})</p>"
        )
    how = (
        "exact, no refits"
        if result.method == "exact"
        else "by PSIS, as this model has no closed-form posterior"
    )
    text = (
        f"Leave-one-out prediction of the training labels: elpd_loo = {result.elpd:,.1f} "
        f"± {result.se:,.1f}, accuracy {result.accuracy:.1%} over {result.y_codes.size:,} rows"
    )
    detail = (
        "The log score Σᵢ log p(yᵢ | xᵢ, training data without row i) of each label "
        f"predicted from its row's features ({how}), as <code>bayesgen.loo_proba</code> "
        "computes it and <code>bayesgen loo</code> prints it. Higher is better; it compares "
        "models of any features fitted to the same labelled rows. (The PSIS leave-one-out "
        "plot further down scores something else: the density of whole rows, features and "
        "label.)"
    )
    note = f" {e(note)}" if note else ""
    return f'<p class="headline"><b>{e(text)}</b></p><p>{detail}{note}</p>'


def _comparison_html(comparison) -> str:
    """The comparison's warnings, borderline diagnostics and rows, in the order
    ``comparison.worst`` ranks them (never re-sorted here), in columns that fit the page."""
    e = html.escape
    n_rows = len(comparison.table)
    if n_rows > render.WORST_ROWS:
        shown = comparison.worst(render.WORST_ROWS)
        heading = (
            f"The {render.WORST_ROWS} worst of {n_rows} parameters (disagreements first, then "
            "rows failing a sampler diagnostic, then borderline ones, then by |z|); all are in "
            "comparison.csv:"
        )
    else:
        shown, heading = comparison.table, f"All {n_rows} parameters:"
    columns = [
        column
        for column in _REPORT_COLUMNS
        if column in shown.columns
        and not (column in _MAP_COLUMNS and not comparison.map_computed)
        and not shown[column].astype(str).eq("").all()  # e.g. no diagnostic to name
    ]
    header = "".join(f"<th>{e(_REPORT_COLUMNS[column])}</th>" for column in columns)
    body = "".join(
        "<tr>" + "".join(_cell(column, row[column]) for column in columns) + "</tr>"
        for _, row in shown.iterrows()
    )
    rows = (
        f'<table class="comparison"><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>'
    )
    parts = []
    for title, items in (
        ("Warnings", comparison.warnings),
        ("Borderline (not failures)", comparison.borderline),
    ):
        if items:
            listed = "".join(f"<li>{e(str(item))}</li>" for item in items)
            parts.append(f"<p>{e(title)}:</p><ul>{listed}</ul>")
    parts.append(f'<p>{e(heading)}</p><div class="wide">{rows}</div>')
    return "".join(parts)


def _cell(column: str, value) -> str:
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.number):
        # Only the coordinates may break anywhere: a vocabulary's words can be long.
        where = ' class="coords"' if column == "coords" else ""
        return f"<td{where}>{html.escape(str(value))}</td>"
    if not np.isfinite(value):
        text = "" if np.isnan(value) else f"{value}"
    elif column == "ess_bulk":
        text = f"{value:,.0f}"
    elif column in ("z", "z_sd"):
        text = f"{value:.2f}"
    elif column == "r_hat":
        text = f"{value:.4f}"
    else:
        text = f"{value:.4g}"
    return f'<td class="number">{html.escape(text)}</td>'


def _provenance(est) -> dict[str, str]:
    """When and with what the fit was made (from its posterior's attributes, where recorded),
    and the versions that drew this report."""
    posterior = est.idata_["posterior"].attrs
    facts = {"fitted": _fitted_when(posterior)}
    fitted_with = {
        "bayesgen": posterior.get("bayesgen_version"),
        str(posterior.get("inference_library", "")): posterior.get("inference_library_version"),
        "ArviZ": posterior.get("arviz_version"),
    }
    recorded = [f"{k} {v}" for k, v in fitted_with.items() if k and v]
    facts["fitted with"] = ", ".join(recorded) if recorded else "not recorded in the fit"
    facts["report made with"] = (
        ", ".join(f"{label} {_version(package)}" for package, label in _VERSIONED.items())
        + f", on {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC"
    )
    return facts


def _data_description(est) -> str:
    """Rows × features, and the classes with their rows (weighted, with sample_weight)."""
    stats = est.closed_form_
    classes = ", ".join(str(c) for c in est.classes_)
    if "class_count" in stats:
        counts = stats["class_count"].values
        classes = ", ".join(f"{c}: {n:,.6g}" for c, n in zip(est.classes_, counts, strict=True))
    return (
        f"{int(stats.attrs['n_samples']):,} training rows × {est.n_features_in_:,} features; "
        f"{len(est.classes_)} classes (rows per class: {classes})"
    )


def _fitted_when(attrs) -> str:
    created = attrs.get("created_at")
    if not created:
        return "date not recorded in the fit"
    try:
        when = datetime.datetime.fromisoformat(str(created))
    except ValueError:
        return str(created)
    if when.tzinfo is not None:
        when = when.astimezone(datetime.UTC)
        return f"{when:%Y-%m-%d %H:%M} UTC"
    return f"{when:%Y-%m-%d %H:%M}"


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"
