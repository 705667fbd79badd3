"""The exact-moments path of a comparison: a large conjugate fit checked without drawing it all.

Above :data:`EXACT_ABOVE` draw values (a large vocabulary), a conjugate fit's table takes each
parameter's mean and SD from the exact posterior (:class:`~bayesgen.inference.conjugate.
ConjugatePosterior`), and they must equal the closed form to 1e-12: two independent derivations
of the same moments (the family's marginals and its expected values). The sampler itself is
still checked, on a seeded sample of features: at most :data:`SAMPLE_VALUES` draw values, all
the cells of each sampled feature, whose rows get their Monte Carlo columns and z from those
draws (:func:`check_sampled_cells`). The other rows say so (:data:`EXACT_ONLY`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import xarray as xr

from bayesgen.checks.parameter_table import block_frame
from bayesgen.checks.render import add_reason
from bayesgen.families.expected import Expected
from bayesgen.inference.conjugate import DRAW_ELEMENTS, Lazy

#: Above this many stored values (chains × draws × parameters)
#: :func:`bayesgen.checks.comparison.compare` uses the exact moments of a conjugate posterior by
#: default instead of drawing it (80 MB in float64).
EXACT_ABOVE = 10_000_000
#: Most draw values (cells × chains × draws) of the seeded sample whose draws are checked when
#: the table's moments are exact.
SAMPLE_VALUES = 2_000_000
#: The columns only draws can fill: emptied for exact moments, filled for the sampled cells.
MONTE_CARLO_COLUMNS = ("mcse", "mcse_sd", "ess_bulk", "r_hat", "ess_within", "z", "z_sd")
#: The reason of a row whose moments are exact and whose draws were not in the checked sample.
EXACT_ONLY = "exact moments equal the closed form; this cell's draws were not in the checked sample"
#: Seeds the sample of features (with the fit's own seed), here and for the prediction draws.
SAMPLE_SEED = 0x5A3


def exact_moments_posterior(est, exact: bool | None, variables: list[str]):
    """The fit's :class:`~bayesgen.inference.conjugate.ConjugatePosterior` where the comparison
    uses its exact moments (see :func:`bayesgen.checks.comparison.compare`'s ``exact``), else
    None.

    Raises
    ------
    TypeError
        For an ``exact`` other than None, True or False.
    ValueError
        For ``exact=True`` where some variable has no exact moments.
    """
    if exact is not None and not isinstance(exact, bool):
        raise TypeError(f"exact: expected None, True or False; got {exact!r}.")
    posterior = getattr(est, "posterior_", None)
    possible = posterior is not None and posterior.is_exact(variables)
    if exact is True and not possible:
        raise ValueError(
            "exact: True needs a conjugate fit whose every variable has exact moments "
            f"(inference='conjugate', no hyperprior on λ, not GDA's coef); got {variables} of "
            f"a {'conjugate' if posterior is not None else 'sampled'} fit."
        )
    if exact is False or not possible:
        return None
    if exact is None:
        sizes = posterior.estimates.sizes
        per_draw = sum(
            int(np.prod([sizes[d] for d in posterior.variables[name]])) for name in variables
        )
        if per_draw * posterior.chains * posterior.draws_per_chain <= EXACT_ABOVE:
            return None
    return posterior


def exact_table_source(posterior, variables: list[str]) -> xr.Dataset:
    """The exact means and SDs, stacked on a leading ``moment`` dim (mean, sd): what
    :func:`bayesgen.checks.parameter_table.block_frame` reads with ``exact=True``."""
    means, sds = posterior.mean(variables), posterior.sd(variables)
    return xr.concat([means, sds], dim="moment")


def exact_moments_agree(table: pd.DataFrame) -> np.ndarray:
    """Per row of an exact-moment table: whether its exact mean and SD equal the closed form
    (to 1e-12, as :func:`bayesgen.checks.parameter_table.z_scores` judges a zero error); the
    Monte Carlo columns are then emptied (in place), to be filled for the sampled cells by
    :func:`check_sampled_cells`."""
    agree = ~(np.abs(table["z"].to_numpy()) > 0) & ~(np.abs(table["z_sd"].to_numpy()) > 0)
    for column in MONTE_CARLO_COLUMNS:
        table[column] = np.nan
    return agree


def sampled_features(seed: int, n_features: int, size: int) -> np.ndarray:
    """Positions of a seeded sample of ``size`` features (all of them where fewer), sorted."""
    rng = np.random.default_rng([seed, SAMPLE_SEED])
    return np.sort(rng.choice(n_features, size=min(size, n_features), replace=False))


def sampled_draws(est, posterior, variables: list[str]) -> tuple[xr.Dataset, np.ndarray]:
    """Draws of a seeded sample of features (all of their cells, every chain and draw), and
    the sampled features' positions.

    At most :data:`SAMPLE_VALUES` values: from ``idata_`` where it has been materialised (they
    are then the very draws the fit holds), else drawn by the fit's exact sampler with the
    fit's seed (:meth:`bayesgen.inference.conjugate.ConjugatePosterior.draws`).
    """
    sizes = posterior.estimates.sizes
    dims = {name: posterior.variables[name] for name in variables}
    per_feature = sum(
        int(np.prod([sizes[d] for d in var_dims if d not in ("feature", "feature2")]))
        * (2 if "feature2" in var_dims else 1)
        for var_dims in dims.values()
        if "feature" in var_dims
    )
    n_features = sizes.get("feature", 0)
    budget = SAMPLE_VALUES // (posterior.chains * posterior.draws_per_chain)
    n_sampled = int(np.clip(budget // max(per_feature, 1), 1, max(n_features, 1)))
    chosen = sampled_features(posterior.random_seed, n_features, n_sampled)
    held = est.__dict__.get("_idata")
    tree = held.made if isinstance(held, Lazy) else held
    if tree is not None:
        draws = tree["posterior"].to_dataset()[variables]
        subset = {dim: chosen for dim in ("feature", "feature2") if dim in draws.dims}
        return draws.isel(subset), chosen
    labels = posterior.estimates["feature"].values[chosen]
    # A family without an aggregated sampler draws every feature and keeps the sample's:
    # then fewer draws per chain (a sample of the draws as well as of the cells).
    drawn = posterior.family.feature_subset(posterior.estimates, labels).sizes
    per_draw = sum(int(np.prod([drawn[d] for d in var_dims])) for var_dims in dims.values())
    n_draws = min(posterior.draws_per_chain, max(4, DRAW_ELEMENTS // (per_draw * posterior.chains)))
    draws = posterior.draws(
        n_draws,
        chains=posterior.chains,
        var_names=variables,
        features=labels,
        dtype=posterior.dtype,
    )
    return draws, chosen


def check_sampled_cells(table: pd.DataFrame, checks, sample) -> int:
    """Fill the Monte Carlo columns and z of the sampled cells' rows from their draws (in
    place) and mark the other rows :data:`EXACT_ONLY`; the number of rows checked.

    ``checks`` lists (block, number of rows) in the table's order; ``sample`` is what
    :func:`sampled_draws` returns.
    """
    draws, chosen = sample
    checked = np.zeros(len(table), dtype=bool)
    start = 0
    for block, n_rows in checks:
        rows = slice(start, start + n_rows)
        start += n_rows
        var_dims = draws[block.variable].dims[2:]
        shape = np.shape(block.keep)
        index = np.ix_(
            *(
                chosen if dim in ("feature", "feature2") else np.arange(size)
                for dim, size in zip(var_dims, shape, strict=True)
            )
        )
        sub_block = _sub_expected(block, index)
        frame = block_frame(sub_block, draws, None)
        full_flat = np.ravel_multi_index(np.broadcast_arrays(*index), shape).ravel()
        full_rows = np.searchsorted(
            np.flatnonzero(np.asarray(block.keep).ravel()),
            full_flat[np.flatnonzero(np.asarray(sub_block.keep).ravel())],
        )
        positions = np.arange(len(table))[rows][full_rows]
        for column in (*MONTE_CARLO_COLUMNS, "posterior_mean", "posterior_sd"):
            table.loc[positions, column] = frame[column].to_numpy()
        checked[positions] = True
    add_reason(table, ~checked, EXACT_ONLY)
    return int(checked.sum())


def _sub_expected(block: Expected, index: tuple) -> Expected:
    """``block`` restricted to the cells ``index`` (an ``np.ix_`` of its full shape)."""
    shape = np.shape(block.keep)

    def part(array):
        if array is None or np.ndim(array) != len(shape):
            return array
        return np.asarray(array)[index]

    return replace(
        block,
        **{
            name: part(getattr(block, name))
            for name in (
                "keep",
                "closed_form",
                "closed_form_sd",
                "mle",
                "expected_map",
                "hide_map",
                "unbounded",
                "closed_form_kurtosis",
            )
        },
        reasons=tuple(part(reason) for reason in block.reasons),
    )
