"""What a comparison checks beyond each parameter's own mean and SD, and the table of identities
it reports.

* Per-draw identities (:class:`~bayesgen.families.results.DrawIdentity`): variables computed from
  others in every draw (GDA's ``coef`` and ``intercept``, the linear form of the draw's π, μ,
  Σ) must be that function of them, to the rounding of the stored draws
  (:func:`draw_identity_agreement`).
* Statistics of whole draws with an exact law (:mod:`bayesgen.maths.joint_statistics`), among
  them those of the draws predictions use where they are not ``idata_``'s
  (:func:`prediction_statistics`): :func:`joint_table` gives their z of location and spread.
* :func:`identity_table` lists every identity checked (mean, SD, mode, per draw, joint law),
  with how many rows had both sides defined and how many satisfied it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayesgen.checks.exact_moments import sampled_features
from bayesgen.families.results import DrawIdentity
from bayesgen.maths.joint_statistics import statistic_z

#: Features whose one-word documents check the prediction draws of a conjugate fit.
PREDICTION_WORDS = 200
#: The columns of :func:`identity_table`.
IDENTITY_COLUMNS = ["identity", "variable", "prior", "checked", "satisfied"]
#: The columns of :func:`joint_table` (and ``agrees``, once judged).
JOINT_COLUMNS = ["statistic", "variable", "z_mean", "z_spread", "ess_bulk"]


def draw_identity_agreement(
    table: pd.DataFrame, identities: list[DrawIdentity]
) -> tuple[np.ndarray, np.ndarray]:
    """Per row: whether its draws satisfy every per-draw identity of the family (rows of
    other variables do), and the worst error ratio to the tolerance (NaN elsewhere)."""
    agree = np.ones(len(table), dtype=bool)
    worst = np.full(len(table), np.nan)
    for identity in identities:
        for name, ratio in identity.errors.items():
            rows = np.flatnonzero(table["variable"].to_numpy() == name)
            worst[rows] = np.fmax(worst[rows], np.ravel(ratio))
            # A NaN ratio cannot agree: `<=` is False for it.
            agree[rows] &= np.ravel(ratio) <= 1.0
    return agree, worst


def prediction_statistics(est, model_family, stats, words) -> list:
    """Where predictions draw their own exact draws (a conjugate multinomial fit's
    aggregated draws, not ``idata_``'s), statistics of those very draws (same seed, same
    number): the family's ``prediction_statistics`` over ``words``, the sampled features of
    an exact-moment table, or else a seeded sample of :data:`PREDICTION_WORDS` features."""
    posterior = est.__dict__.get("posterior_")
    if posterior is None:
        return []
    if words is None:
        n_features = stats.sizes.get("feature", 0)
        words = sampled_features(posterior.random_seed, n_features, PREDICTION_WORDS)
    n_draws = posterior.chains * posterior.draws_per_chain
    return model_family.prediction_statistics(stats, words, n_draws, posterior.random_seed)


def joint_table(statistics) -> pd.DataFrame:
    """One row per :class:`~bayesgen.maths.joint_statistics.JointStatistic`: its z for location
    and spread and the ESS behind them (columns :data:`JOINT_COLUMNS`)."""
    rows = []
    for statistic in statistics:
        z_mean, z_spread, ess = statistic_z(statistic)
        rows.append(
            {
                "statistic": statistic.name,
                "variable": statistic.variable,
                "z_mean": z_mean,
                "z_spread": z_spread,
                "ess_bulk": ess,
            }
        )
    table = pd.DataFrame(rows, columns=JOINT_COLUMNS)
    # typed even when empty (an exact-moment table of a family without prediction draws)
    return table.astype({"z_mean": float, "z_spread": float, "ess_bulk": float})


def identity_table(
    checks,
    table: pd.DataFrame,
    outcomes: dict,
    draw_identities: list[DrawIdentity],
    joint: pd.DataFrame,
) -> pd.DataFrame:
    """One row per identity checked and variable (columns :data:`IDENTITY_COLUMNS`).

    Parameters
    ----------
    checks : list of (Expected, int)
        Each block and its number of rows, in the table's order.
    table : pandas.DataFrame
        The comparison's rows.
    outcomes : dict
        Per row: ``mean`` and ``sd`` (bool arrays), ``map`` ((checked, satisfied) arrays) and
        ``draw`` (the per-draw identities' agreement).
    draw_identities : list of DrawIdentity
    joint : pandas.DataFrame
        The judged :func:`joint_table` (with ``agrees``).
    """
    rows, start = [], 0
    closed = np.isfinite(table["closed_form"].to_numpy())
    closed_sd = np.isfinite(table["closed_form_sd"].to_numpy())
    map_checked, map_ok = outcomes["map"]
    draw_ok = outcomes["draw"]
    for block, n_rows in checks:
        part = slice(start, start + n_rows)
        start += n_rows
        tests = [
            (block.mean_identity, closed[part], outcomes["mean"][part]),
            (block.sd_identity, closed_sd[part], outcomes["sd"][part]),
            (block.map_identity, map_checked[part], map_ok[part]),
        ]
        for draw_identity in draw_identities:
            if block.variable in draw_identity.statements:
                statement = draw_identity.statements[block.variable]
                tests.append((statement, np.ones(n_rows, dtype=bool), draw_ok[part]))
        for identity, checked, passed in tests:
            if identity is None or not checked.any():
                continue
            rows.append(
                {
                    "identity": identity,
                    "variable": block.variable,
                    "prior": block.prior,
                    "checked": int(checked.sum()),
                    "satisfied": int((checked & passed).sum()),
                }
            )
    identities = pd.DataFrame(rows, columns=IDENTITY_COLUMNS)
    checked = joint[["z_mean", "z_spread"]].notna().sum(axis=1)
    if not checked.any():
        return identities
    joint_checked = joint[checked > 0]
    checked = checked[checked > 0]
    laws = pd.DataFrame(
        {
            "identity": joint_checked["statistic"] + " per draw follows its exact law",
            "variable": joint_checked["variable"],
            "prior": "",
            "checked": checked,
            "satisfied": checked * joint_checked["agrees"].astype(int),
        }
    )
    return pd.concat([identities, laws], ignore_index=True)
