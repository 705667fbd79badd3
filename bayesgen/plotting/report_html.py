"""The ``index.html`` of a report (:func:`bayesgen.plotting.report.report`): its header, the
comparison table, the hyperparameters, the provenance of the fit and the figures.

The page is self-contained (no scripts, no external files) and every name and caption goes
through ``html.escape``. This module writes text only; the plots and the other files of the
report are :mod:`bayesgen.plotting.report`'s.
"""

from __future__ import annotations

import datetime
import html
import importlib.metadata
from pathlib import Path

import numpy as np

from bayesgen.checks import render
from bayesgen.plotting.model_sections import ReportSection

#: In index.html's <title>: marks a folder as a report (one that a new report may replace).
REPORT_TITLE = "bayesgen report: "
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


def index_html(
    est, comparison, sections: list[ReportSection], selection: list[str], labels_loo
) -> str:
    """The text of index.html; every name and caption goes through ``html.escape``.

    Parameters
    ----------
    est : fitted bayesgen estimator
    comparison : bayesgen.checks.comparison.Comparison
        Its verdict, warnings and worst rows head the page.
    sections : list of ReportSection
        The figures in page order; a section without a file is listed as not shown, with its
        caption saying why.
    selection : list of str
        The labels of the features the plots show.
    labels_loo : tuple
        :func:`bayesgen.checks.loo.leave_one_out` of the fit and its warnings as text, or None
        and the reason it is not defined.
    """
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
<title>{REPORT_TITLE}{e(name)}</title>
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
    how = {
        "exact": "exact, no refits",
        "plug-in": "the point fit refitted without each row, a plug-in of its parameters",
    }.get(result.method, "by PSIS, as this model has no closed-form posterior")
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
