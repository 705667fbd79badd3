"""The words of :func:`bayesgen.compare`: its printed and HTML forms, its warnings and the
reasons it gives for a comparison it does not make.

The words read the result (:class:`bayesgen.checks.comparison.Comparison`, its table and
settings) by its attributes and import nothing of the comparison itself: the limits they quote
come from :mod:`bayesgen.checks.thresholds`, below both.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
from scipy.special import ndtr

from bayesgen.checks.thresholds import FAMILY_RATE, family_wise_threshold

#: ``str()`` lists every row up to this many, and otherwise the ``WORST_ROWS`` worst.
PRINT_ROWS = 50
WORST_ROWS = 10
PRINTED_COLUMNS = [
    "variable",
    "coords",
    "posterior_mean",
    "mcse",
    "closed_form",
    "z",
    "posterior_sd",
    "closed_form_sd",
    "z_sd",
    "map",
    "expected_map",
    "r_hat",
    "ess_bulk",
    "agrees",
]
_LABEL_WIDTH = 32

NO_JOINT_MODE = (
    "MAP not shown: the fitted posterior has no mode (n + α < 1 somewhere makes its density "
    "unbounded), so find_MAP cannot converge and its values are optimizer artefacts"
)
NO_JOINT_MODE_WARNING = (
    "The fitted posterior has no mode at all (some n + α < 1 makes its density unbounded), so "
    "find_MAP could not converge and every MAP value is an optimizer artefact: none is shown "
    "or compared (map is NaN)."
)
_MAP_METHODS = {"closed_form": "closed form (exact)", "find_MAP": "find_MAP (L-BFGS-B)"}


# --------------------------------------------------------------------------------------------
# Reasons in the table.


def add_reason(table: pd.DataFrame, rows: np.ndarray, text: str) -> None:
    """Append ``text`` to the ``reason`` of the marked rows (in place)."""
    reason = table["reason"].to_numpy(dtype=object)
    joined = np.where(reason == "", text, reason + "; " + text)
    table["reason"] = np.where(rows, joined, reason).astype(str)


def hide_artefacts(table: pd.DataFrame) -> None:
    """Where some density is unbounded the joint posterior has no mode, so find_MAP cannot
    converge (L-BFGS-B stops "ABNORMAL") and all its values are artefacts, not only those at
    the boundary: hide them, keeping each simplex's own mode in ``expected_map``."""
    table["map"] = np.nan
    add_reason(table, np.ones(len(table), dtype=bool), NO_JOINT_MODE)


def map_not_converged_reason(message: str) -> str:
    return f"MAP not compared: the optimiser did not converge{_quoted(message)}"


def map_not_converged_warning(message: str, n_differ: int) -> str:
    return (
        f"MAP optimiser did not converge{_quoted(message)}: its values are not compared. "
        f"{n_differ} of them differ from the closed-form mode; this says nothing about the "
        "posterior draws, which are judged by their means and SDs."
    )


def _quoted(message: str) -> str:
    return f" ({message})" if message else ""


# --------------------------------------------------------------------------------------------
# Warnings.


def diagnose(
    table,
    outcomes,
    divergences,
    limits,
    z_threshold,
    *,
    exact_draws=False,
    draw_identities=(),
) -> tuple[list[str], bool, list[str]]:
    """Human-readable warnings, whether the sampler diagnostics pass, and the borderline
    diagnostics (past the conventional targets, within the family-wise ``limits``, a
    :class:`bayesgen.checks.thresholds.DiagnosticLimits`).

    ``outcomes`` maps ``z``, ``z_sd``, ``map`` and ``identity`` to a boolean per row, and
    ``identity_ratio`` to the per-draw identities' error in tolerances (NaN off the variables
    of ``draw_identities``, the family's
    :class:`~bayesgen.families.results.DrawIdentity` list). With ``exact_draws``
    (independent draws from the conjugate posterior) there is no Markov chain to converge: an
    R-hat above the threshold or a low ESS is chance fluctuation of independent draws, so it
    is reported but does not fail the check.
    """
    warnings, clean = [], True
    exact_note = (
        " These are exact independent draws, so this is chance fluctuation, not a convergence "
        "failure; it does not fail the check."
    )
    n_checked = int(np.isfinite(table["z"]).sum() + np.isfinite(table["z_sd"]).sum())
    chance = _chance_note(n_checked, z_threshold)
    z_ok, sd_ok = outcomes["z"], outcomes["z_sd"]
    if not z_ok.all():
        z = np.abs(table["z"].to_numpy())
        worst = int(np.nanargmax(np.where(z_ok, -np.inf, z)))
        warnings.append(
            f"{_they(int((~z_ok).sum()), 'posterior mean')} from their closed form by more than "
            f"{z_threshold:.3g} MCSE (worst: {_where(table, worst)}, "
            f"z = {table['z'].iloc[worst]:.3g}). Either the closed form is for another prior "
            "(check alpha and class_alpha) or the draws do not follow the posterior." + chance
        )
    if not sd_ok.all():
        z_sd = np.abs(table["z_sd"].to_numpy())
        worst = int(np.nanargmax(np.where(sd_ok, -np.inf, z_sd)))
        row = table.iloc[worst]
        warnings.append(
            f"{_they(int((~sd_ok).sum()), 'posterior SD')} from their closed form by more than "
            f"{z_threshold:.3g} MCSE (worst: {_where(table, worst)}, SD "
            f"{row['posterior_sd']:.4g} vs {row['closed_form_sd']:.4g}, "
            f"z_sd = {row['z_sd']:.3g}): the draws are "
            + ("too wide" if row["z_sd"] > 0 else "too narrow")
            + " for this posterior."
            + chance
        )
    moments_ok = outcomes.get("moments")
    if moments_ok is not None and not moments_ok.all():
        warnings.append(
            f"{_they(int((~moments_ok).sum()), 'exact posterior moment')} from the closed form "
            "(beyond 1e-12): the family's exact marginals and its expected values disagree."
        )
    for identity in draw_identities:
        rows = table["variable"].isin(list(identity.errors)).to_numpy()
        bad = rows & ~outcomes["identity"]
        if not bad.any():
            continue
        ratio = outcomes["identity_ratio"]
        worst = int(np.nanargmax(np.where(bad, ratio, -np.inf)))
        warnings.append(
            f"{int(bad.sum())} {identity.failure} (worst: {_where(table, worst)}, "
            f"{ratio[worst]:.3g} times the rounding tolerance): they were not computed from "
            "these draws."
        )
    map_ok = outcomes["map"]
    if not map_ok.all():
        gap = np.abs(table["map"].to_numpy() - table["expected_map"].to_numpy())
        worst = int(np.nanargmax(np.where(map_ok, -np.inf, gap)))
        warnings.append(
            f"{_they(int((~map_ok).sum()), 'MAP value')} from the closed-form mode (worst: "
            f"{_where(table, worst)}, MAP {table['map'].iloc[worst]:.6g} vs mode "
            f"{table['expected_map'].iloc[worst]:.6g}). The optimizer stopped early, or the "
            "mode is for another prior."
        )
    if divergences:
        clean = False
        warnings.append(
            f"{plural(divergences, 'divergent transition')}: NUTS met curvature it could not "
            "follow, so the draws may miss part of the posterior. Raise target_accept or "
            "reparameterise."
        )
    status = table["diagnostic"].to_numpy()
    r_hat, ess = table["r_hat"].to_numpy(), table["ess_bulk"].to_numpy()
    high = r_hat > limits.rhat
    if high.any():
        clean = clean and exact_draws
        worst = int(np.nanargmax(np.where(high, r_hat - limits.rhat, -np.inf)))
        bound = (
            f"its family-wise limit {limits.rhat[worst]:.4f}"
            if not limits.rhat_fixed
            else f"{limits.rhat[worst]:g}"
        )
        warnings.append(
            f"{plural(int(high.sum()), 'parameter')} above the R-hat limit (worst "
            f"{r_hat[worst]:.4f} at {_where(table, worst)}, above {bound})"
            + (
                "." + exact_note
                if exact_draws
                else ": the chains have not mixed into one distribution. Run longer (more tune "
                "and draws)."
            )
        )
    low = ess < limits.ess
    if low.any():
        clean = clean and exact_draws
        worst = int(np.nanargmin(ess))
        warnings.append(
            f"{plural(int(low.sum()), 'parameter')} with bulk ESS below {limits.ess_min:.0f} "
            f"(lowest {ess[worst]:.0f} at {_where(table, worst)}"
            + (
                f"; credibly below the target {limits.ess_target:.0f}"
                if not limits.ess_fixed
                else ""
            )
            + "): their MCSE, and so z, is unreliable. Draw more."
            + (exact_note if exact_draws else "")
        )
    borderline = []
    near = (status == "borderline") & (r_hat > limits.rhat_target)
    if near.any():
        worst = int(np.nanargmax(np.where(near, r_hat, -np.inf)))
        borderline.append(
            f"{plural(int(near.sum()), 'parameter')} with R-hat above {limits.rhat_target:g} "
            f"but within the family-wise limit (worst {r_hat[worst]:.4f} at "
            f"{_where(table, worst)}, limit {limits.rhat[worst]:.4f}): as often as a correct "
            "posterior of this size does by chance."
        )
    thin = (status == "borderline") & (ess < limits.ess_target)
    if thin.any():
        worst = int(np.nanargmin(np.where(thin, ess, np.inf)))
        borderline.append(
            f"{plural(int(thin.sum()), 'parameter')} with bulk ESS below "
            f"{limits.ess_target:.0f} but not credibly so (lowest {ess[worst]:.0f} at "
            f"{_where(table, worst)}, limit {limits.ess_min:.0f}): more draws would make their "
            "MCSE firmer."
        )
    reason = table["reason"]
    boundary = reason.str.startswith("boundary")
    if boundary.any():
        warnings.append(
            f"{int(boundary.sum())} parameters have no interior posterior mode under this prior "
            "(α < 1 with a zero count: the density grows without bound towards the boundary), "
            "so there is no MAP to expect: expected_map is NaN for them (see the reason "
            "column), and their posterior means are still checked. Use α ≥ 1 for a "
            "well-defined MAP."
        )
    flat = reason.str.startswith("flat")
    if flat.any():
        warnings.append(
            f"{int(flat.sum())} parameters have a flat posterior (n + α = 1 for every outcome), "
            "so no single MAP exists."
        )
    if not (np.isfinite(r_hat).any() or table.empty):
        warnings.append("R-hat could not be computed (it needs at least two chains).")
    return warnings, clean, borderline


def joint_statistic_warnings(joint: pd.DataFrame, z_threshold: float) -> list[str]:
    """One warning per per-draw statistic of ``joint`` (judged: with ``agrees``) that does not
    follow its exact law."""
    return [
        f"The per-draw statistic {row['statistic']} does not follow its exact law "
        f"(z of its mean {row['z_mean']:.3g}, of its spread {row['z_spread']:.3g}; "
        f"threshold {z_threshold:.3g}): the draws of {row['variable']} come from another "
        "posterior, although each parameter's own mean and SD may look right."
        for _, row in joint[~joint["agrees"]].iterrows()
    ]


def _they(count: int, noun: str) -> str:
    """``"1 posterior mean differs"``, ``"3 posterior means differ"``."""
    return plural(count, noun) + (" differs" if count == 1 else " differ")


def plural(count: int, noun: str) -> str:
    """``"1 parameter"``, ``"3 parameters"``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _chance_note(n_checked: int, z_threshold: float) -> str:
    """For a fixed threshold: how many |z| > threshold a correct posterior gives by chance."""
    expected = n_checked * 2.0 * float(ndtr(-z_threshold))
    if expected < 0.01:
        return ""
    return (
        f" With {n_checked} means and SDs checked, a correct posterior exceeds "
        f"{z_threshold:.3g} about {expected:.2g} times by chance; if the count is close to "
        f"that, judge with z_threshold='auto' ({family_wise_threshold(n_checked):.2f} here: "
        f"{FAMILY_RATE:.1%} family-wise, Bonferroni)."
    )


def _where(table: pd.DataFrame, index) -> str:
    row = table.iloc[index]
    return f"{row['variable']}[{row['coords']}]" if row["coords"] else row["variable"]


# --------------------------------------------------------------------------------------------
# Text and HTML.


def headline(comparison) -> tuple[str, str]:
    """The verdict in one sentence, and its level: ``"ok"``, ``"warn"`` (agrees, with
    borderline diagnostics) or ``"fail"``.

    A posterior that disagrees with its closed form and a sampler whose diagnostics fail
    are told apart: the second is not a wrong posterior, only one whose Monte Carlo errors
    cannot be trusted yet.
    """
    if not comparison.agrees:
        n_bad = int((~comparison.table["agrees"]).sum())
        return (
            f"NOT OK: {_they(n_bad, 'row')} from the closed form: the posterior does not agree "
            "with the closed-form estimates (see the warnings).",
            "fail",
        )
    if not comparison.diagnostics_ok:
        return (
            "NOT OK: every row agrees with its closed form, but the sampler diagnostics fail "
            "(see the warnings): the Monte Carlo errors behind that agreement cannot be "
            "trusted yet.",
            "fail",
        )
    if comparison.borderline:
        return (
            "OK: every row agrees and the diagnostics pass; some are borderline (see below), "
            "within what a correct posterior of this size shows by chance.",
            "warn",
        )
    return "OK: every row agrees and the diagnostics are clean.", "ok"


def summary_lines(comparison) -> list[str]:
    """The printed summary above the tables: what was compared, the worst figures and their
    limits, and the verdict."""
    s, table = comparison.settings, comparison.table
    sampler = "conjugate draws" if comparison.inference == "conjugate" else "NUTS"

    def worst(column: str) -> str:
        values = np.abs(table[column].to_numpy())
        return f"{np.nanmax(values):.3g}" if np.isfinite(values).any() else "n/a"

    rule = (
        f": {FAMILY_RATE:.1%} family-wise over {s['n_checks']} checks"
        if isinstance(s.get("z_threshold_rule"), str)
        else ""
    )
    lines = [
        f"Posterior vs closed form: {comparison.model}, {sampler} "
        f"({comparison.chains} chains × {comparison.draws} draws), "
        f"{plural(len(table), 'parameter')}",
    ]
    if s.get("moments") == "exact":
        lines.append(
            f"exact moments of all {plural(len(table), 'parameter')} against the closed form "
            f"(to 1e-12); the draws of a seeded sample of {s['draws_checked']:,} "
            "of them checked by z"
        )
    lines.append(
        f"worst |z| = {worst('z')}, worst |z_sd| = {worst('z_sd')} "
        f"(threshold {s['z_threshold']:.3g}{rule})"
    )
    lines.append(_map_line(comparison))
    lines.append(_diagnostics_line(comparison))
    lines.append(headline(comparison)[0])
    return lines


def _diagnostics_line(comparison) -> str:
    s, table = comparison.settings, comparison.table
    r_hat, ess = table["r_hat"].to_numpy(), table["ess_bulk"].to_numpy()
    if not np.isfinite(r_hat).any() and not np.isfinite(ess).any():
        return f"diagnostics: {plural(comparison.divergences, 'divergence')}"
    rhat_bound = (
        f"limit {s['rhat_max']:.4f} at the median ESS, family-wise; target {s['rhat_target']:g}"
        if not s.get("rhat_fixed", False)
        else f"limit {s['rhat_max']:g}"
    )
    ess_bound = (
        f"limit {s['ess_min']:.0f}, target {s['ess_target']:.0f}"
        if not s.get("ess_fixed", False)
        else f"limit {s['ess_min']:g}"
    )
    return (
        f"diagnostics: {plural(comparison.divergences, 'divergence')}, max R-hat "
        f"{np.nanmax(r_hat):.4f} ({rhat_bound}), min bulk ESS {np.nanmin(ess):.0f} "
        f"({ess_bound})"
    )


def _map_line(comparison) -> str:
    if not comparison.map_computed:
        return "MAP: not computed"
    s = comparison.settings
    method = _MAP_METHODS.get(comparison.map_method, str(comparison.map_method))
    if comparison.map_method != "closed_form":
        if comparison.map_converged is None:
            method += ", convergence not recorded"
        elif comparison.map_converged:
            method += ", converged"
        else:
            return f"MAP: {method}, did not converge: not compared"
    return (
        f"MAP: {method}; within {s['map_atol']:g} + {s['map_rtol']:g}·|mode| of the "
        "closed-form mode"
    )


def _rows_shown(comparison) -> tuple[str, pd.DataFrame]:
    table = comparison.table
    if len(table) <= PRINT_ROWS:
        return "Parameters", table
    return (
        f"The {WORST_ROWS} worst of {len(table)} parameters (all are in .table)",
        comparison.worst(WORST_ROWS),
    )


def _notes(comparison) -> list[str]:
    table = comparison.table
    reasons = table.loc[table["reason"] != "", ["variable", "reason"]]
    notes = []
    for reason, group in reasons.groupby("reason", sort=False):
        variables = ", ".join(dict.fromkeys(group["variable"]))
        notes.append(f"{variables} ({len(group)} rows): {reason}")
    return notes


def text(comparison) -> str:
    """The comparison as plain text: headline, identities, rows, notes and warnings."""
    title, rows = _rows_shown(comparison)
    shown = rows[PRINTED_COLUMNS].copy()
    shown["coords"] = shown["coords"].map(_truncate)
    lines = [*summary_lines(comparison), "", "Identities checked"]
    lines.append(_indent(comparison.identities.to_string(index=False)))
    lines += ["", title, _indent(shown.to_string(index=False, float_format=_format_float))]
    for heading, items in (
        ("Not compared", _notes(comparison)),
        ("Warnings", comparison.warnings),
        ("Borderline (not failures)", comparison.borderline),
    ):
        if items:
            lines += ["", heading, *(f"  - {item}" for item in items)]
    return "\n".join(lines)


def html_page(comparison) -> str:
    """The comparison as an HTML fragment (every value escaped)."""
    title, rows = _rows_shown(comparison)
    head = "<br>".join(html.escape(line) for line in summary_lines(comparison))
    parts = [
        f"<div class='bayesgen-comparison'><p>{head}</p>",
        "<h4>Identities checked</h4>",
        comparison.identities.to_html(index=False, escape=True),
        f"<h4>{html.escape(title)}</h4>",
        rows.to_html(index=False, escape=True, float_format=_format_float),
    ]
    for heading, items in (
        ("Not compared", _notes(comparison)),
        ("Warnings", comparison.warnings),
        ("Borderline (not failures)", comparison.borderline),
    ):
        if items:
            listed = "".join(f"<li>{html.escape(item)}</li>" for item in items)
            parts.append(f"<h4>{heading}</h4><ul>{listed}</ul>")
    parts.append("</div>")
    return "".join(parts)


def _format_float(value: float) -> str:
    return f"{value:.6g}"


def _truncate(label: str) -> str:
    return label if len(label) <= _LABEL_WIDTH else label[: _LABEL_WIDTH - 1] + "…"


def _indent(lines: str) -> str:
    return "\n".join("  " + line for line in lines.splitlines())
