"""The rows of a comparison: one per scalar parameter, its posterior summaries beside the closed
forms they must equal, and the z scores between them.

:func:`block_frame` turns one variable's :class:`~bayesgen.families.expected.Expected` block
and its draws (or its exact moments) into rows; :func:`bayesgen.checks.comparison.compare`
stacks the blocks of a model into its table (:data:`TABLE_COLUMNS`). The z of a mean divides
by the Monte Carlo error a *correct* posterior would have (:func:`null_mcse`), that of an SD is
taken on the log scale (:func:`z_sd`): both then have close to normal tails for the skewed
marginals of sparse counts.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import xarray as xr

from bayesgen.families.expected import Expected
from bayesgen.maths.diagnostics import chain_diagnostics, mcse_sd

#: The columns of a comparison's table, in order.
TABLE_COLUMNS = [
    "variable",
    "coords",
    "posterior_mean",
    "posterior_sd",
    "mcse",
    "mcse_sd",
    "ess_bulk",
    "r_hat",
    "closed_form",
    "closed_form_sd",
    "mle",
    "map",
    "expected_map",
    "z",
    "z_sd",
    "agrees",
    "diagnostic",
    "reason",
]
_CHUNK_ELEMENTS = 131_072  # draws × parameters per block: small blocks stay in the CPU cache
#: The columns :func:`summarise` fills from draws (:func:`exact_summary` from exact moments).
SUMMARY_COLUMNS = (
    "posterior_mean",
    "posterior_sd",
    "mcse",
    "mcse_sd",
    "ess_bulk",
    "r_hat",
    "ess_within",
)


def block_frame(
    block: Expected, posterior: xr.Dataset, map_point, hide_map=None, *, exact: bool = False
) -> pd.DataFrame:
    """The table rows of one variable; ``hide_map`` marks MAP values that are artefacts.

    Parameters
    ----------
    block : bayesgen.families.expected.Expected
        What the variable's summaries must equal, and which of its cells are rows (``keep``).
    posterior : xarray.Dataset
        Draws (dims chain, draw, ...), or with ``exact`` the exact moments (dims moment =
        mean, sd, ...; see :func:`bayesgen.checks.exact_moments.exact_table_source`).
    map_point : xarray.Dataset or None
        The MAP (``est.map_``); None without one.
    hide_map : array of bool, optional
        Cells whose MAP is not shown; default ``block.hide_map``.
    exact : bool, default False

    Returns
    -------
    pandas.DataFrame
        The columns of :data:`TABLE_COLUMNS` but ``agrees`` and ``diagnostic``, and
        ``ess_within``.
    """
    draws = posterior[block.variable]
    param_dims = draws.dims[2:] if not exact else draws.dims[1:]
    keep = np.flatnonzero(np.asarray(block.keep).ravel())
    if exact:
        summary = exact_summary(draws.values.reshape(2, -1), keep)
    else:
        n_chains, n_draws = draws.shape[:2]
        values = draws.values.reshape(n_chains, n_draws, -1)
        kurtosis = block.closed_form_kurtosis
        if kurtosis is not None:
            kurtosis = flat_kept(kurtosis, keep)
        summary = summarise(values, keep, kurtosis=kurtosis)

    def flat(array) -> np.ndarray:
        return np.asarray(array).ravel()[keep]

    if map_point is not None and block.variable in map_point:
        map_value = flat(map_point[block.variable].values.astype(np.float64))
        hide = block.hide_map if hide_map is None else hide_map
        map_value = np.where(flat(hide), np.nan, map_value)
    else:
        map_value = np.full(keep.size, np.nan)
    reason = np.full(keep.size, "", dtype=object)
    for part in block.reasons:
        part = flat(part)
        given = part != ""
        if not given.any():  # most blocks: nothing to add, and a million rows to skip
            continue
        reason = np.where((reason != "") & given, reason + "; " + part, reason + part)
    # Object columns: pandas' inference of a string dtype costs a second at a million rows.
    frame = pd.DataFrame(
        {
            "variable": pd.Series(np.full(keep.size, block.variable, dtype=object), dtype=object),
            "coords": pd.Series(
                coordinate_labels(draws, param_dims, keep, skip=1 if exact else 2), dtype=object
            ),
            **summary,
            "closed_form": flat(block.closed_form).astype(np.float64),
            "closed_form_sd": flat(block.closed_form_sd).astype(np.float64),
            "mle": flat(block.mle).astype(np.float64),
            "map": map_value,
            "expected_map": flat(block.expected_map).astype(np.float64),
            "reason": pd.Series(reason, dtype=object),
        }
    )
    frame["z"] = z_scores(frame["posterior_mean"], frame["closed_form"], null_mcse(frame))
    frame["z_sd"] = z_sd(frame["posterior_sd"], frame["closed_form_sd"], frame["mcse_sd"])
    return frame


def parameter_draws(variable: xr.DataArray) -> np.ndarray:
    """A posterior variable's draws as (parameter, chain, draw), its cells in C order (the
    order of ``arviz.summary``'s rows); a view where NumPy can make one.

    Examples
    --------
    >>> import numpy as np
    >>> import xarray as xr
    >>> from bayesgen.checks.parameter_table import parameter_draws
    >>> draws = xr.DataArray(np.zeros((2, 10, 3, 4)), dims=("chain", "draw", "class", "feature"))
    >>> parameter_draws(draws).shape
    (12, 2, 10)
    """
    values = variable.transpose("chain", "draw", ...).values
    return np.moveaxis(values.reshape(values.shape[0], values.shape[1], -1), -1, 0)


def flat_kept(array, keep: np.ndarray) -> np.ndarray:
    """The entries of ``array`` at the flat indices ``keep``, in float64."""
    return np.asarray(array, dtype=np.float64).ravel()[keep]


def summarise(
    values: np.ndarray, keep: np.ndarray, *, kurtosis: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """Mean, sd, their MCSEs, bulk ESS and R-hat of the kept parameters, in float64, in
    chunks.

    Parameters
    ----------
    values : ndarray of shape (chain, draw, parameter)
    keep : ndarray of int
        The parameters summarised (flat indices).
    kurtosis : ndarray, optional
        One per kept parameter, NaN where unknown: the closed-form kurtosis the SD's Monte
        Carlo error is computed with (:func:`bayesgen.maths.diagnostics.mcse_sd`).

    Returns
    -------
    dict of str to ndarray
        The :data:`SUMMARY_COLUMNS`, one value per kept parameter.
    """
    n_chains, n_draws = values.shape[:2]
    out = {name: np.full(keep.size, np.nan) for name in SUMMARY_COLUMNS}
    step = max(1, _CHUNK_ELEMENTS // (n_chains * n_draws))

    def summarise_chunk(start: int) -> None:
        part = slice(start, start + step)
        # (parameter, chain, draw), float64 whatever the draws are stored in
        chunk = np.moveaxis(values[:, :, keep[part]], -1, 0).astype(np.float64)
        out["posterior_mean"][part] = chunk.mean(axis=(1, 2))
        if n_chains * n_draws >= 2:
            out["posterior_sd"][part] = chunk.std(axis=(1, 2), ddof=1)
        diagnostics = chain_diagnostics(chunk)
        for name in ("mcse", "ess_bulk", "r_hat", "ess_within"):
            out[name][part] = getattr(diagnostics, name)
        out["mcse_sd"][part] = mcse_sd(chunk, kurtosis=None if kurtosis is None else kurtosis[part])

    starts = range(0, keep.size, step)
    threads = min(len(starts), _available_cores())
    if threads <= 1:
        for start in starts:
            summarise_chunk(start)
    else:
        # The sorts, FFTs and array arithmetic release the GIL, and every chunk writes its
        # own slice of ``out``: threads share the work without a lock.
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(summarise_chunk, starts))
    return out


def _available_cores() -> int:
    """The cores this process may run on (its affinity, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS and Windows have no affinity call
        return os.cpu_count() or 1


def exact_summary(moments: np.ndarray, keep: np.ndarray) -> dict[str, np.ndarray]:
    """:func:`summarise`'s columns from exact moments (mean and sd stacked on the first axis):
    no Monte Carlo error."""
    n = keep.size
    return {
        "posterior_mean": moments[0, keep],
        "posterior_sd": moments[1, keep],
        "mcse": np.zeros(n),
        "mcse_sd": np.zeros(n),
        "ess_bulk": np.full(n, np.inf),
        "r_hat": np.ones(n),
        "ess_within": np.full(n, np.inf),
    }


def coordinate_labels(draws: xr.DataArray, dims, keep: np.ndarray, skip: int = 2) -> list[str]:
    """Readable coordinate labels, e.g. ``spam, free``, of the kept flat indices (the first
    ``skip`` dims are not the parameter's)."""
    if not dims:
        return [""] * keep.size
    shape = draws.shape[skip:]
    positions = np.unravel_index(keep, shape)
    labels = None
    for dim, index in zip(dims, positions, strict=True):
        column = np.asarray([str(v) for v in draws[dim].values], dtype=object)[index]
        # Object arrays add elementwise in C: a million labels in a tenth of a second.
        labels = column if labels is None else labels + ", " + column
    return labels.tolist()


def z_scores(estimate, expected, error) -> np.ndarray:
    """(estimate − expected) / error; a zero error (constant draws) gives 0 or ±inf.

    Examples
    --------
    >>> z_scores([0.6, 0.5, 0.5], [0.5, 0.5, 0.4], [0.05, 0.0, 0.0]).round(6).tolist()
    [2.0, 0.0, inf]
    """
    expected = np.asarray(expected, dtype=np.float64)
    diff = np.asarray(estimate, dtype=np.float64) - expected
    error = np.asarray(error, dtype=np.float64)
    usable = np.isfinite(error) & (error > 0)
    exact = np.abs(diff) <= 1e-12 * np.maximum(1.0, np.abs(expected))
    z = np.where(exact, 0.0, np.copysign(np.inf, diff))
    z = np.where(np.isnan(diff), np.nan, z)
    return np.where(usable, np.divide(diff, error, out=np.zeros_like(diff), where=usable), z)


def null_mcse(frame: pd.DataFrame) -> np.ndarray:
    """The mean's MCSE that a correct posterior would have: closed-form SD / √ESS.

    ArviZ's MCSE is the sample SD / √ESS. For a skewed marginal such as Beta(1, 60) the draws
    that miss the rare large values have both a low mean and a low SD, so (mean − closed form)
    / MCSE has a long negative tail: 4% of correct sparse-text posteriors failed at 2 × 1,000
    draws. With the closed-form SD the error no longer moves with the mean, and z is close to
    normal. Where there is no closed-form SD, ArviZ's MCSE is used.
    """
    mcse = frame["mcse"].to_numpy(dtype=np.float64)
    sd = frame["posterior_sd"].to_numpy(dtype=np.float64)
    closed_sd = frame["closed_form_sd"].to_numpy(dtype=np.float64)
    usable = np.isfinite(closed_sd) & (closed_sd > 0) & (sd > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(usable, mcse * closed_sd / sd, mcse)


def z_sd(sd, closed_sd, mcse) -> np.ndarray:
    """The SD's z on the log scale: log(sd / closed-form sd) / (mcse / sd).

    To first order this is (sd − closed-form sd) / mcse. The sample SD and its MCSE (from the
    same draws' fourth moment) rise and fall together, so that ratio has a long negative tail
    (too many false "too narrow" alarms for skewed marginals such as Beta(1, 60)); on the log
    scale the relative MCSE depends on the kurtosis only, and the tails come close to normal.
    """
    sd, closed_sd = np.asarray(sd, dtype=np.float64), np.asarray(closed_sd, dtype=np.float64)
    positive = (sd > 0) & (closed_sd > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_z = np.log(sd / closed_sd) / (np.asarray(mcse, dtype=np.float64) / sd)
    z = z_scores(sd, closed_sd, mcse)  # zero or constant draws: 0 or ±inf as for the mean
    return np.where(positive & np.isfinite(log_z), log_z, z)
