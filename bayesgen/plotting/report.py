"""A self-contained HTML report of a fitted estimator.

:func:`report` writes every plot of :mod:`bayesgen.plotting.plots` as a PNG next to an
``index.html`` (:mod:`bayesgen.plotting.report_html`) with one-line captions, plus
``summary.csv`` (the ArviZ summary, :func:`write_summary`) and ``comparison.csv``
(:func:`bayesgen.checks.comparison.compare`). This module decides what the report holds — its
sections in order, each with its caption and the plot that draws it — and writes the folder.
What differs between models (the variables shown, how the closed-form mean is called, the
model's own plots) is the model's answer (``est.model_``, :mod:`bayesgen.families`).
"""

from __future__ import annotations

import contextlib
import os
import warnings
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import arviz as az
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import xarray as xr

# compare is called through its module (checks.compare), so that a caller who replaces it
# (the tests do) is heard here too.
from bayesgen.checks import comparison as checks
from bayesgen.checks.loo import joint_loo, leave_one_out
from bayesgen.checks.parameter_table import parameter_draws
from bayesgen.input import files as io
from bayesgen.maths.diagnostics import chain_diagnostics, ess_tail, mcse_sd
from bayesgen.plotting import plots, second_process
from bayesgen.plotting import workflow as plots_workflow
from bayesgen.plotting.model_sections import ReportSection, fitted_blocks, model_sections
from bayesgen.plotting.report_html import REPORT_TITLE, index_html
from bayesgen.plotting.selection import feature_label, subset

_DPI = 100
#: Draws per chain in the rank plot: its uniformity test is most of a report's plotting time
#: with thousands of draws, and a few hundred per chain show chains that disagree.
RANK_MAX_DRAWS = 250
#: The figures a forked second process draws (:mod:`bayesgen.plotting.second_process`):
#: about half of a report's plotting time on SMS Spam (the trace plot is a quarter of it; the
#: PSIS plot waits for the leave-one-out computed on this process's second thread).
SECOND_PROCESS_FILES = frozenset(
    {"trace.png", "ess.png", "energy.png", "top_features.png", "prior_posterior.png"}
)


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

    The summary, the comparison and the PSIS leave-one-out of the training rows are NumPy
    work that releases the GIL: they run on a second thread while this one draws the plots
    (matplotlib's work, which holds it). Where it is safe (Linux, the Agg backend, no other
    Python thread; :func:`~bayesgen.plotting.second_process.can_fork`) about half of the
    figures are drawn in a forked second process meanwhile: the same files, and its warnings
    and errors are raised here.

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
        a progress line per step (:class:`bayesgen.inference.progress.Progress`); the step
        "writing summary.csv and comparison.csv" comes last and waits for the second thread.
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
    est.check_fitted()
    if (X_test is None) != (y_test is None):
        raise ValueError("X_test and y_test: pass both or neither.")
    if comparison is not None and not isinstance(comparison, checks.Comparison):
        raise TypeError(
            "comparison: expected the Comparison that bayesgen.compare(est) returns, or None, "
            f"got {type(comparison).__name__}."
        )
    out = Path(out_dir)
    _check_replaceable(out)

    with io.replacing_folder(out) as folder, ThreadPoolExecutor(max_workers=1) as background:
        step = progress if progress is not None else (lambda message: None)
        # A conjugate fit's draws and MAP, made on first use, are made here, once, for both
        # processes and every thread below.
        est.idata_, est.map_  # noqa: B018
        options = {"max_features": max_features, "top_k": top_k}
        # matplotlib holds the GIL: where it can, a forked process draws about half of the
        # figures (SECOND_PROCESS_FILES) while this one draws the rest. It forks before the
        # thread below starts (second_process says why).
        forked = second_process.can_fork()
        with (
            second_process.Forked(
                lambda: _draw(_plan(est, X_test, y_test, **options), folder, aside=True)
            )
            if forked
            else contextlib.nullcontext()
        ) as child:
            step("leave-one-out prediction of the training labels")
            labels_loo = _label_loo(est)
            # NumPy work on large arrays, which releases the GIL, runs on a second core while
            # this thread plots, in the order the plots need it: the rows' PSIS leave-one-out,
            # the held-out probabilities (once, for the calibration and the predictive
            # intervals), then the summary and the comparison. It starts only now: the labels'
            # leave-one-out above records the warnings raised while it runs.
            rows_loo = (
                background.submit(joint_loo, est)
                if plots_workflow.has_log_likelihood(est)
                else None
            )
            proba = None if X_test is None else background.submit(est.predict_proba, X_test)
            summary = background.submit(
                write_summary, est, folder / "summary.csv", max_features=summary_max_features
            )
            compared = background.submit(checks.compare, est) if comparison is None else None
            sections = []
            plan = _plan(est, X_test, y_test, **options, proba=proba, rows_loo=rows_loo)
            for section, make in plan:
                if make is not None:
                    aside = forked and section.file in SECOND_PROCESS_FILES
                    step(f"plotting {section.title}" + (" (in a second process)" if aside else ""))
                    if not aside:
                        _save(make(), folder / section.file)
                sections.append(section)
            if child is not None:
                child.join()
        step("writing summary.csv and comparison.csv")
        summary.result()
        if compared is not None:
            comparison = compared.result()
        io.write_csv(comparison.table, folder / "comparison.csv")
        chosen = plots.selected_features(est, max_features=max_features)
        selection = [feature_label(f) for f in chosen]
        html_text = index_html(est, comparison, sections, selection, labels_loo)
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
        and REPORT_TITLE in index.read_text(encoding="utf-8", errors="replace")
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
    :func:`~bayesgen.plotting.plots.selected_features`, with 94 % equal-tailed intervals
    (:func:`summary_table`); written to ``path`` as CSV.

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
    table = summary_table(posterior)
    io.write_csv(table, path)  # atomic, and names that look like formulas escaped
    return table


def summary_table(posterior: xr.Dataset, *, ci_prob: float = 0.94) -> pd.DataFrame:
    """``arviz.summary(posterior, ci_prob=ci_prob)``: the same rows, columns and numbers
    (to 1e-10, tested), its diagnostics computed for all parameters at once.

    ArviZ's mean, SD and equal-tailed interval are vectorised already; its ESS, R-hat and
    MCSE loop over the parameters in Python. Here those come from
    :func:`bayesgen.maths.diagnostics.chain_diagnostics`,
    :func:`~bayesgen.maths.diagnostics.ess_tail` (at ArviZ's ``rcParams["stats.ci_prob"]``,
    as ``arviz.summary``) and :func:`~bayesgen.maths.diagnostics.mcse_sd`.

    Parameters
    ----------
    posterior : xarray.Dataset
        Draws with dims ``chain`` and ``draw`` first.
    ci_prob : float, default 0.94

    Returns
    -------
    pandas.DataFrame
        Columns ``mean``, ``sd``, ``eti{100 ci_prob}_lb``, ``..._ub``, ``ess_bulk``,
        ``ess_tail``, ``r_hat``, ``mcse_mean``, ``mcse_sd``; one row per scalar parameter,
        named as ``arviz.summary`` names them (``feature_prob[spam, free]``).

    Examples
    --------
    >>> import numpy as np
    >>> import xarray as xr
    >>> from bayesgen.plotting.report import summary_table
    >>> draws = np.random.default_rng(0).normal(size=(2, 500, 3))
    >>> posterior = xr.Dataset({"mu": (("chain", "draw", "feature"), draws)})
    >>> table = summary_table(posterior)
    >>> table.shape, list(table.columns[:4])
    ((3, 9), ['mean', 'sd', 'eti94_lb', 'eti94_ub'])
    """
    # Cells constant in every draw (a mixed model's categorical padding, which the report's
    # selection leaves in a block's own dims) have no R-hat: NaN, without NumPy's warning.
    with np.errstate(invalid="ignore", divide="ignore"):
        stats = az.summary(
            xr.DataTree.from_dict({"posterior": posterior}), ci_prob=ci_prob, kind="stats"
        )
        # (parameter, chain, draw), the parameters in arviz.summary's row order: the
        # variables in turn, each one's cells in C order.
        draws = np.concatenate(
            [parameter_draws(variable) for variable in posterior.data_vars.values()]
        ).astype(np.float64, copy=False)
        diagnostics = chain_diagnostics(draws)
        columns = {
            "ess_bulk": diagnostics.ess_bulk,
            "ess_tail": ess_tail(draws, az.rcParams["stats.ci_prob"]),
            "r_hat": diagnostics.r_hat,
            "mcse_mean": diagnostics.mcse,
            "mcse_sd": mcse_sd(draws),
        }
    if len(stats) != draws.shape[0]:  # an ArviZ whose rows are not one per scalar cell
        raise RuntimeError(
            f"summary_table: arviz.summary gave {len(stats)} rows for {draws.shape[0]} parameters."
        )
    table = pd.DataFrame(stats, copy=True)
    for name, values in columns.items():
        table[name] = values
    return table


def _draw(plan, folder: Path, *, aside: bool) -> None:
    """Draw the sections of ``plan`` drawn in the second process (``aside``) or the others."""
    for section, make in plan:
        if make is not None and (section.file in SECOND_PROCESS_FILES) == aside:
            _save(make(), folder / section.file)


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
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = leave_one_out(est)
        except ValueError as error:
            return None, str(error)
    return result, " ".join(str(w.message) for w in caught)


def _plan(est, X_test, y_test, *, max_features: int, top_k: int, proba=None, rows_loo=None):
    """(section, zero-argument plot function or None when skipped), in report order."""
    model = est.model_
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
    yield from _rank_section(est, max_features)
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
    if fitted_blocks(est) is None:
        yield (
            ReportSection(
                "Top features",
                f"The {top_k} {what} of each class: dot = posterior mean, thick bar = 50 % and "
                "thin bar = 94 % credible interval; overlapping bars cannot be told apart by the "
                "data.",
                "top_features.png",
            ),
            lambda: plots.plot_top_features(est, k=top_k),
        )
    else:  # the blocks' parameters are not on one scale: each block's are in its section
        yield (ReportSection("Top features", f"Not drawn for the whole model: {what}."), None)
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
    yield from _plan_workflow(est, rows_loo)
    yield from model_sections(est, X_test, y_test, top_k=top_k)
    yield from _plan_held_out(est, X_test, y_test, proba)


def _rank_section(est, max_features):
    """The rank plots, which compare chains: skipped, with the reason, for a single chain
    (ArviZ's rank plot needs two)."""
    if est.idata_["posterior"].sizes["chain"] < 2:
        yield (
            ReportSection(
                "Rank",
                "Not drawn: the fit has one chain, and rank plots compare chains with each "
                "other; fit with chains ≥ 2 to see them.",
            ),
            None,
        )
        return
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
            "multi-chain uniformity test runs on every panel; a panel where it fails (the "
            "chains sample different distributions) says so in red, and panels that pass "
            f"carry no label. Each panel is tested at α = {plots.RANK_FAMILY_RATE:g} over the "
            "number of panels, so that with independent draws a fit whose chains agree shows "
            f"a red label with probability {plots.RANK_FAMILY_RATE:g} at most, the rate of the "
            f"verdict's false alarms.{thinned}",
            "rank.png",
        ),
        lambda: plots.plot_rank(est, max_features=max_features, max_draws=RANK_MAX_DRAWS),
    )


def _plan_workflow(est, rows_loo: Future | None = None):
    """The posterior predictive check and PSIS-LOO (:mod:`bayesgen.plotting.workflow`; the
    latter from ``rows_loo``, :func:`~bayesgen.checks.loo.joint_loo` computed in the
    background, where given); a model file written before the training rows were stored has
    neither."""
    model = est.model_
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
            lambda: plots_workflow.plot_loo(
                est, loo=None if rows_loo is None else rows_loo.result()
            ),
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


def _plan_held_out(est, X_test, y_test, proba: Future | None = None):
    """The held-out plots, each from the held-out probabilities ``proba`` computed in the
    background where given (else each plot computes them)."""

    def probabilities():
        return None if proba is None else proba.result()

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
        lambda: plots.plot_calibration(est, X_test, y_test, proba=probabilities()),
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
        lambda: plots.plot_predictive_intervals(est, X_test, y_test, proba=probabilities()),
    )
