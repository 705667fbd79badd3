"""The limits a comparison is judged by: one z threshold over all the checks made, and per-row
R-hat and bulk-ESS limits, each family-wise.

A correct posterior makes many checks, so a fixed limit per check fails large correct fits by
chance. Each limit here is instead the one a correct posterior exceeds with probability
:data:`FAMILY_RATE` over all its checks (Bonferroni), and never tighter than the conventional
figure (|z| ≤ 4, R-hat ≤ 1.01, bulk ESS ≥ 400). :func:`bayesgen.checks.comparison.compare`
judges its table by them and :mod:`bayesgen.checks.render` words them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import ndtri

# ESS_MIN and RHAT_MAX: the conventional 400 and 1.01, past which a row is borderline.
from bayesgen.maths.diagnostics import ESS_MIN, RHAT_MAX, ess_limit, rhat_limit

#: The smallest z threshold: a correct posterior exceeds it with probability 6e-5 per check.
Z_FLOOR = 4.0
#: The chance that a correct posterior fails any check of one comparison.
FAMILY_RATE = 0.001


@dataclass(frozen=True)
class DiagnosticLimits:
    """The R-hat and bulk-ESS limits a comparison judged each row by.

    Attributes
    ----------
    rhat, ess : ndarray
        Per row: the R-hat above which, and the bulk ESS below which, the row fails.
    rhat_target, ess_target : float
        The conventional 1.01 and 400: beyond them (but within the limits) a row is
        ``"borderline"``.
    rhat_max, ess_min : float
        The R-hat limit at the median bulk ESS, and the ESS limit: one figure each to print.
    status : ndarray of str
        Per row: ``"fail"``, ``"borderline"`` or ``""``.
    rule : str
        ``"family-wise"`` (either limit at its default) or ``"fixed"`` (both given).
    rhat_fixed, ess_fixed : bool
        Whether that limit was given as a number.
    """

    rhat: np.ndarray
    ess: np.ndarray
    rhat_target: float
    ess_target: float
    rhat_max: float
    ess_min: float
    status: np.ndarray
    rule: str
    rhat_fixed: bool = False
    ess_fixed: bool = False


def diagnostic_limits(
    table: pd.DataFrame,
    *,
    chains: int,
    draws: int,
    rhat_max: float | str = "auto",
    ess_min: float | str = "auto",
    rate: float = FAMILY_RATE,
) -> DiagnosticLimits:
    """Per-row R-hat and ESS limits, family-wise over the rows that have them.

    With ``"auto"`` a row fails when its R-hat exceeds what a correct posterior reaches with
    probability ``rate`` over all the rows (:func:`bayesgen.maths.diagnostics.rhat_limit`, at the
    row's own bulk ESS, never below 1.01), or when its bulk ESS is credibly below 400
    (:func:`bayesgen.maths.diagnostics.ess_limit`); between 1.01 and the limit, or between the ESS
    limit and 400, it is ``"borderline"``: reported, not a failure. A number fixes the limit
    (and there is no borderline).

    Parameters
    ----------
    table : pandas.DataFrame
        Rows with ``r_hat`` and ``ess_bulk`` (and, where known, ``ess_within``, the ESS
        within each chain, which R-hat's chance spread follows).
    chains, draws : int
        The chains and draws per chain behind them.
    rhat_max, ess_min : float or "auto", default "auto"
    rate : float, default :data:`FAMILY_RATE`

    Returns
    -------
    DiagnosticLimits

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> table = pd.DataFrame({"r_hat": [1.005, 1.02, 1.2], "ess_bulk": [900.0, 350.0, 900.0]})
    >>> diagnostic_limits(table, chains=4, draws=1000).status.tolist()
    ['', 'borderline', 'fail']
    """
    r_hat = table["r_hat"].to_numpy(dtype=np.float64)
    ess = table["ess_bulk"].to_numpy(dtype=np.float64)
    # R-hat's chance spread follows each chain's own autocorrelation; a chain that is off
    # lowers the bulk ESS but must not widen its own limit.
    within = table["ess_within"].to_numpy(dtype=np.float64) if "ess_within" in table else ess
    measured = np.isfinite(r_hat) | np.isfinite(ess)
    n_parameters = max(int(measured.sum()), 1)
    fixed_rhat, fixed_ess = not isinstance(rhat_max, str), not isinstance(ess_min, str)
    for name, value in (("rhat_max", rhat_max), ("ess_min", ess_min)):
        if isinstance(value, str) and value != "auto":
            raise ValueError(f"{name}: expected a number or 'auto'; got {value!r}.")
    if fixed_rhat:
        rhat = np.full(len(table), float(rhat_max))
        rhat_target = float(rhat_max)
    else:
        rhat = np.fmax(
            rhat_limit(within, chains=chains, draws=draws, n_parameters=n_parameters, rate=rate),
            RHAT_MAX,
        )
        rhat_target = RHAT_MAX
    ess_target = float(ess_min) if fixed_ess else ESS_MIN
    ess_floor = (
        ess_target if fixed_ess else ess_limit(ESS_MIN, n_parameters=n_parameters, rate=rate)
    )
    ess_limits = np.full(len(table), ess_floor)
    fail = (r_hat > rhat) | (ess < ess_limits)
    borderline = ~fail & ((r_hat > rhat_target) | (ess < ess_target))
    status = np.where(fail, "fail", np.where(borderline, "borderline", "")).astype(object)
    median_ess = np.nanmedian(within) if np.isfinite(within).any() else np.nan
    typical = (
        float(rhat_max)
        if fixed_rhat
        else max(
            RHAT_MAX,
            float(
                rhat_limit(
                    np.array([median_ess]),
                    chains=chains,
                    draws=draws,
                    n_parameters=n_parameters,
                    rate=rate,
                )[0]
            ),
        )
    )
    return DiagnosticLimits(
        rhat=rhat,
        ess=ess_limits,
        rhat_target=rhat_target,
        ess_target=ess_target,
        rhat_max=typical,
        ess_min=ess_floor,
        status=status,
        rule="fixed" if fixed_rhat and fixed_ess else "family-wise",
        rhat_fixed=fixed_rhat,
        ess_fixed=fixed_ess,
    )


def family_wise_threshold(n_checked: int, *, rate: float = FAMILY_RATE) -> float:
    """The larger of 4 and the two-sided Bonferroni threshold Φ⁻¹(1 − rate / (2C)).

    With it, a correct posterior with C = ``n_checked`` checks (each a mean or an SD) has at
    most a ``rate`` chance of any |z| above the threshold.

    Examples
    --------
    >>> round(family_wise_threshold(15), 2), round(family_wise_threshold(600), 2)
    (4.0, 4.79)
    """
    return max(Z_FLOOR, float(ndtri(1.0 - rate / (2.0 * max(n_checked, 1)))))
