"""A self-contained HTML report of a fitted estimator.

:func:`report` writes every plot of :mod:`bayesgen.plots` as a PNG next to an ``index.html``
with one-line captions, plus ``summary.csv`` (the ArviZ summary, :func:`write_summary`) and
``comparison.csv`` (:func:`bayesgen.checks.compare`). What differs between models (the
variables shown, how the closed-form mean is called, the model's own plots) is the model
family's answer (:mod:`bayesgen.families`).
"""

from __future__ import annotations

import html
import os
from pathlib import Path

import arviz as az
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import xarray as xr

from bayesgen import io, plots, plots_workflow
from bayesgen.checks_render import PRINTED_COLUMNS
from bayesgen.families.base import ReportSection
from bayesgen.plots_selection import family_of, feature_label, subset

_DPI = 100
#: Hyperparameters that only NUTS reads; a conjugate fit's report leaves them out.
_NUTS_ONLY = frozenset({"tune", "target_accept", "nuts_sampler", "cores"})
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
    hyperparameters and the verdict of :func:`bayesgen.checks.compare`. Also written:
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
        (:func:`~bayesgen.plots.selected_features`).
    top_k : int, default 10
        Features per class in :func:`~bayesgen.plots.plot_top_features`.
    summary_max_features : int, default 100
    progress : callable, optional
        Called with a one-line message (e.g. ``"plotting Trace"``) as each part starts, for
        a progress line per step (:class:`bayesgen.progress.Progress`).
    comparison : bayesgen.checks.Comparison, optional
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
    from bayesgen.checks import Comparison, compare

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
        sections = []
        for section, make in _plan(est, X_test, y_test, max_features=max_features, top_k=top_k):
            if make is not None:
                step(f"plotting {section.title}")
                _save(make(), folder / section.file)
            sections.append(section)
        chosen = plots.selected_features(est, max_features=max_features)
        selection = [feature_label(f) for f in chosen]
        html_text = _html(est, comparison, sections, selection)
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
    :func:`~bayesgen.plots.selected_features`, with 94 % equal-tailed intervals; written to
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
    >>> from bayesgen.reporting import write_summary
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


def _plan(est, X_test, y_test, *, max_features: int, top_k: int):
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
            "when all chains sample the same distribution) mean the chains agree. Each panel's "
            "p=…(α=0.01) is the p-value of ArviZ's multi-chain uniformity test: p < α = 0.01 "
            f"means the chains sample different distributions.{thinned}",
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
    yield from _plan_held_out(est, X_test, y_test)


def _plan_workflow(est):
    """The posterior predictive check and PSIS-LOO (:mod:`bayesgen.plots_workflow`); a model
    file written before the training rows were stored has neither."""
    model = family_of(est)
    if plots_workflow.has_observed_data(est) and model.ppc_variables:
        yield (
            ReportSection(
                "Posterior predictive check",
                f"ECDF of {' and '.join(model.ppc_variables)} in the training data (black) "
                "against about 100 data sets simulated from the posterior with the same labels "
                "(blue); the black curve should lie inside the blue spread. "
                f"{model.ppc_caption}",
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
                "Pareto k of each training row in PSIS leave-one-out cross-validation, with "
                "elpd_loo (expected log predictive density of a left-out row, summed) and "
                "p_loo (effective number of parameters). k estimates how heavy-tailed the "
                "importance weights of leaving the row out are: below the dashed line (0.7, "
                "lower with fewer than 2,200 draws) the LOO estimate is reliable; rows above "
                "it are influential and labelled.",
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


def _plan_held_out(est, X_test, y_test):
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
        lambda: plots.plot_calibration(est, X_test, y_test),
    )
    yield (
        ReportSection(
            "Predictive intervals",
            "Posterior probability of the true class for held-out examples (dot = mean, bar = "
            "94 % interval, red = misclassified); long bars are uncertain predictions.",
            "predictive_intervals.png",
        ),
        lambda: plots.plot_predictive_intervals(est, X_test, y_test),
    )


_STYLE = """
body { font-family: sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem;
       color: #222; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; font-size: 0.9rem; }
td, th { border: 1px solid #ccc; padding: 0.2rem 0.5rem; text-align: left; }
figure { margin: 2rem 0; }
img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #444; margin-top: 0.3rem; }
.wide { overflow-x: auto; }
.ok { color: #176c2c; font-weight: bold; }
.fail { color: #a31515; font-weight: bold; }
"""


def _html(est, comparison, sections: list[ReportSection], selection: list[str]) -> str:
    """The text of index.html; every name and caption goes through ``html.escape``."""
    e = html.escape
    name = type(est).__name__
    params = "".join(
        f"<tr><th>{e(key)}</th><td>{e(repr(value))}</td></tr>"
        for key, value in sorted(est.get_params(deep=False).items())
        if not (est.inference == "conjugate" and key in _NUTS_ONLY)
    )
    params_note = (
        f"<p>Not listed: {e(', '.join(sorted(_NUTS_ONLY)))}, which only NUTS reads "
        "(this fit drew exact samples from the conjugate posterior).</p>"
        if est.inference == "conjugate"
        else ""
    )
    posterior = est.idata_["posterior"]
    facts = {
        "classes": ", ".join(str(c) for c in est.classes_),
        "features": f"{est.n_features_in_}",
        "training samples": f"{est.closed_form_.attrs['n_samples']}",
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
    facts_rows = "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in facts.items())
    ok = bool(comparison.ok)
    verdict = (
        '<p class="ok">The posterior agrees with the closed-form estimates.</p>'
        if ok
        else '<p class="fail">The posterior does NOT agree with the closed-form estimates; '
        "see comparison.csv.</p>"
    )
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
    n_rows = len(comparison.table)
    if n_rows > 10:
        shown = comparison.worst(10)
        heading = f"The 10 worst of {n_rows} parameters (disagreements first, then by |z|):"
    else:
        shown, heading = comparison.table, f"All {n_rows} parameters:"
    # The columns of the printed comparison; MCSEs and the long notes are in comparison.csv.
    shown = shown[PRINTED_COLUMNS]
    rows = shown.to_html(escape=True, index=False, border=0, float_format=lambda v: f"{v:.4g}")
    table = f'<p>{e(heading)}</p><div class="wide">{rows}</div>'
    warnings = "".join(f"<li>{e(str(w))}</li>" for w in comparison.warnings)
    if warnings:
        table = f"<ul>{warnings}</ul>{table}"
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
<table>{facts_rows}</table>
<h2>Hyperparameters</h2>
<table>{params}</table>
{params_note}
<h2>Posterior against the closed forms</h2>
{verdict}
{table}
<p>Tables: <a href="summary.csv">summary.csv</a> (ArviZ summary of the posterior),
<a href="comparison.csv">comparison.csv</a>.</p>
{"".join(figures)}
{skipped_html}
</body>
</html>
"""
