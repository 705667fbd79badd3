"""Posterior against closed form: the checks that say whether a fit can be trusted.

For the conjugate models every posterior mean and every posterior mode has a formula, so a
posterior obtained by sampling (NUTS) or by exact conjugate draws can be checked number by
number:

* posterior mean under Dirichlet(λ) (Beta(λ, λ) for Bernoulli features) = add-λ
  (n + λ) / (N + Kλ), checked as z = (posterior mean − add-λ) / MCSE;
* MAP under Dirichlet(α) = (n + α − 1) / (N + K(α − 1)): with α = λ + 1 that is add-λ, with
  α = 1 the MLE. PyMC's ``find_MAP`` maximises the density of the variables as named (no
  Jacobian), so its answer is this constrained-space mode;
* GDA with the normal-inverse-Wishart prior: E[μ_k] = m_k, E[Σ] = Ψ_N / (ν_N − D − 1), and the
  MAP of μ_k is m_k as well (μ_k | Σ is normal with mean m_k whatever Σ is).

:func:`compare` builds that table for a fitted estimator. Beside it,
:func:`bayesgen.predictions.compare_predictions` compares the four ways of turning a posterior
into p(y | x), and :func:`bayesgen.sweep.lambda_sweep` shows add-λ, the posterior mean under
Dirichlet(λ) and the MAP under Dirichlet(λ + 1) coinciding over a grid of λ; the Monte Carlo
diagnostics are in :mod:`bayesgen.diagnostics`.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from bayesgen import closed_form as cf
from bayesgen._callable import make_module_callable
from bayesgen.diagnostics import mc_diagnostics

#: Defaults of :func:`compare`, documented there.
Z_THRESHOLD = 4.0
MAP_ATOL = 1e-4
MAP_RTOL = 1e-3
ESS_MIN = 400.0
RHAT_MAX = 1.01
#: ``str()`` lists every row up to this many, and otherwise the ``WORST_ROWS`` worst.
PRINT_ROWS = 50
WORST_ROWS = 10

TABLE_COLUMNS = [
    "variable",
    "coords",
    "posterior_mean",
    "posterior_sd",
    "mcse",
    "ess_bulk",
    "r_hat",
    "closed_form",
    "mle",
    "map",
    "expected_map",
    "z",
    "agrees",
    "reason",
]
_PRINTED_COLUMNS = [
    "variable",
    "coords",
    "posterior_mean",
    "mcse",
    "closed_form",
    "z",
    "map",
    "expected_map",
    "r_hat",
    "ess_bulk",
    "agrees",
]
_CHUNK_ELEMENTS = 131_072  # draws × parameters per block: small blocks stay in the CPU cache
_LABEL_WIDTH = 32

# Why a comparison is missing. Each row's ``reason`` joins the ones that apply.
_NO_MODE = (
    "boundary: no interior mode (n + α < 1 for this outcome, a zero count with α < 1: the "
    "density is unbounded at 0), so no MAP exists to compare with"
)
_NO_MODE_ELSEWHERE = (
    "boundary: no interior mode (another outcome of this simplex has n + α < 1, where the "
    "density is unbounded), so no MAP exists to compare with"
)
_NO_MODE_BETA = (
    "boundary: no interior mode (Beta(n + α, N_k − n + α) has a parameter < 1: a count of 0 "
    "or N_k with α < 1, so the density is unbounded at 0 or 1), so no MAP exists to compare with"
)
_NO_JOINT_MODE = (
    "MAP not shown: the fitted posterior has no mode (n + α < 1 somewhere makes its density "
    "unbounded), so find_MAP cannot converge and its values are optimizer artefacts"
)
_NO_JOINT_MODE_WARNING = (
    "The fitted posterior has no mode at all (some n + α < 1 makes its density unbounded), so "
    "find_MAP could not converge and every MAP value is an optimizer artefact: none is shown "
    "or compared (map is NaN)."
)
_FLAT = (
    "flat: every outcome has n + α = 1, so every point of the simplex is a mode; find_MAP's "
    "value is arbitrary and is not shown"
)
_NONLINEAR = (
    "no closed form: the posterior mean of a nonlinear function of (μ, Σ) is not the "
    "function of the posterior means"
)
_LKJ = "no closed form: the LKJ covariance prior is not conjugate"
_BARTLETT = (
    "MAP not compared: find_MAP's mode is that of the Bartlett variables (χ² and normal "
    "factors of Σ⁻¹), which is not the mode of Σ"
)
_LKJ_MAP = "MAP not compared: under the LKJ prior the mode has no closed form"
_NONLINEAR_MAP = "MAP not compared: no closed-form mode for the linear form"
_NO_COV_MEAN = "no closed form: E[Σ] does not exist for ν_N ≤ D + 1"


# --------------------------------------------------------------------------------------------
# The comparison.


@dataclass(frozen=True, eq=False)
class Comparison:
    """Posterior summaries next to the closed forms they must equal.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per scalar parameter (columns in :data:`TABLE_COLUMNS`, see :func:`compare`).
    identities : pandas.DataFrame
        One row per identity checked and variable: ``identity``, ``variable``, ``prior``,
        ``checked`` (rows with both sides defined) and ``satisfied``.
    warnings : list of str
        Human-readable explanations of everything flagged: disagreements, divergences,
        R-hat, low ESS, and posterior modes on the boundary (the last do not make ``ok`` False).
    ok : bool
        Every row agrees, there are no divergences, and every R-hat and bulk ESS passes.
    model, inference : str
    chains, draws, divergences : int
    map_computed : bool
    settings : dict
        The thresholds used (``z_threshold``, ``map_atol``, ``map_rtol``, ``ess_min``,
        ``rhat_max``, and the ``alpha``/``class_alpha`` the closed forms were computed with).
    """

    table: pd.DataFrame
    identities: pd.DataFrame
    warnings: list[str]
    ok: bool
    model: str
    inference: str
    chains: int
    draws: int
    divergences: int
    map_computed: bool
    settings: dict

    def worst(self, k: int = WORST_ROWS) -> pd.DataFrame:
        """The ``k`` worst rows: disagreements first, then by ``|z|`` (rows without z last)."""
        table = self.table
        order = pd.DataFrame(
            {"agrees": table["agrees"].to_numpy(), "abs_z": -np.abs(table["z"].to_numpy())}
        ).sort_values(["agrees", "abs_z"], na_position="last", kind="stable")
        return table.iloc[order.index[:k]]

    def _headline(self) -> list[str]:
        s = self.settings
        sampler = "conjugate draws" if self.inference == "conjugate" else "NUTS"
        abs_z = np.abs(self.table["z"].to_numpy())
        worst = f"{np.nanmax(abs_z):.3g}" if np.isfinite(abs_z).any() else "n/a"
        lines = [
            f"Posterior vs closed form: {self.model}, {sampler} "
            f"({self.chains} chains × {self.draws} draws), {len(self.table)} parameters",
            f"worst |z| = {worst} (threshold {s['z_threshold']:g}); "
            + (
                f"MAP within {s['map_atol']:g} + {s['map_rtol']:g}·|mode| of the closed-form mode"
                if self.map_computed
                else "MAP not computed"
            ),
            f"diagnostics: {self.divergences} divergences, max R-hat "
            f"{np.nanmax(self.table['r_hat']):.4g} (threshold {s['rhat_max']:g}), min bulk ESS "
            f"{np.nanmin(self.table['ess_bulk']):.0f} (threshold {s['ess_min']:g})",
            "OK: every row agrees and the diagnostics are clean."
            if self.ok
            else "NOT OK: see the warnings below.",
        ]
        return lines

    def _rows_shown(self) -> tuple[str, pd.DataFrame]:
        if len(self.table) <= PRINT_ROWS:
            return "Parameters", self.table
        return (
            f"The {WORST_ROWS} worst of {len(self.table)} parameters (all are in .table)",
            self.worst(WORST_ROWS),
        )

    def _notes(self) -> list[str]:
        reasons = self.table.loc[self.table["reason"] != "", ["variable", "reason"]]
        notes = []
        for reason, group in reasons.groupby("reason", sort=False):
            variables = ", ".join(dict.fromkeys(group["variable"]))
            notes.append(f"{variables} ({len(group)} rows): {reason}")
        return notes

    def __str__(self) -> str:
        title, rows = self._rows_shown()
        shown = rows[_PRINTED_COLUMNS].copy()
        shown["coords"] = shown["coords"].map(_truncate)
        lines = [*self._headline(), "", "Identities checked"]
        lines.append(_indent(self.identities.to_string(index=False)))
        lines += ["", title, _indent(shown.to_string(index=False, float_format=_format_float))]
        for heading, items in (("Not compared", self._notes()), ("Warnings", self.warnings)):
            if items:
                lines += ["", heading, *(f"  - {item}" for item in items)]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        title, rows = self._rows_shown()
        head = "<br>".join(html.escape(line) for line in self._headline())
        parts = [
            f"<div class='bayesgen-comparison'><p>{head}</p>",
            "<h4>Identities checked</h4>",
            self.identities.to_html(index=False, escape=True),
            f"<h4>{html.escape(title)}</h4>",
            rows.to_html(index=False, escape=True, float_format=_format_float),
        ]
        for heading, items in (("Not compared", self._notes()), ("Warnings", self.warnings)):
            if items:
                listed = "".join(f"<li>{html.escape(item)}</li>" for item in items)
                parts.append(f"<h4>{heading}</h4><ul>{listed}</ul>")
        parts.append("</div>")
        return "".join(parts)


def compare(
    est,
    *,
    z_threshold: float | str = Z_THRESHOLD,
    map_rtol: float = MAP_RTOL,
    map_atol: float = MAP_ATOL,
    ess_min: float = ESS_MIN,
    rhat_max: float = RHAT_MAX,
    alpha: float | None = None,
    class_alpha: float | None = None,
) -> Comparison:
    """Check a fitted estimator's posterior, parameter by parameter, against its closed forms.

    Parameters
    ----------
    est : fitted bayesgen estimator
        Any of :class:`~bayesgen.MultinomialNB`, :class:`~bayesgen.BernoulliNB`,
        :class:`~bayesgen.CategoricalNB`, :class:`~bayesgen.GaussianDiscriminantAnalysis`,
        fitted with ``inference="nuts"`` or ``"conjugate"``.
    z_threshold : float or "family", default 4.0
        A posterior mean agrees with its closed form when ``|z| ≤ z_threshold``, z being the
        difference in Monte Carlo standard errors. A correct posterior exceeds 4 with
        probability 6e-5 per parameter, so for P parameters expect about 6e-5·P false alarms.
        ``"family"`` uses the larger of 4 and the two-sided Bonferroni threshold for a 1%
        family-wise false-alarm rate over the P means checked, Φ⁻¹(1 − 0.01 / (2P)) (4.32 for
        P = 650, 5.0 for P = 17,000): the choice for large models.
    map_rtol, map_atol : float, default 1e-3 and 1e-4
        The MAP agrees when ``|MAP − mode| ≤ map_atol + map_rtol · |mode|``: L-BFGS-B's
        precision in the unconstrained space, which also lets a mode of exactly 0 (n + α = 1)
        be approached but not reached.
    ess_min : float, default 400
        Lowest acceptable bulk ESS; below it the MCSE, and so z, is unreliable.
    rhat_max : float, default 1.01
        Highest acceptable rank-normalised split R-hat.
    alpha, class_alpha : float, optional
        Compute the closed forms (and modes) with this λ / class concentration instead of the
        fitted one, from the sufficient statistics in ``est.closed_form_``. A value other than
        the fitted one must make rows disagree: this shows that the check can fail.

    Returns
    -------
    Comparison
        ``.table`` has one row per scalar parameter (padding cells of the categorical model
        and the lower triangle of Σ left out), with columns ``variable``, ``coords``,
        ``posterior_mean``, ``posterior_sd``, ``mcse``, ``ess_bulk``, ``r_hat``,
        ``closed_form`` (the value the posterior mean must equal; NaN where none exists),
        ``mle``, ``map`` (``est.map_``; NaN where not computed or where the mode does not
        exist), ``expected_map`` (the closed-form mode), ``z``, ``agrees`` and ``reason``
        (empty unless a comparison is missing, then why). ``str()`` summarises tables of more
        than 50 rows.

    Examples
    --------
    >>> from bayesgen import MultinomialNB, compare
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> clf = MultinomialNB(inference="conjugate", compute_map=False, random_seed=0)
    >>> compare(clf.fit(X, ["ham", "ham", "spam", "spam"])).ok
    True
    """
    est._check_fitted()
    stats = est.closed_form_
    model = stats.attrs["model"]
    cov_prior = getattr(est, "cov_prior", "conjugate")
    if model == "gda" and alpha is not None:
        raise ValueError("alpha: GDA has no λ; pass class_alpha to change the class prior.")
    fitted_alpha = None if model == "gda" else float(stats.attrs["alpha"])
    fitted_class_alpha = float(stats.attrs["class_alpha"])
    alpha = fitted_alpha if alpha is None else float(alpha)
    class_alpha = fitted_class_alpha if class_alpha is None else float(class_alpha)
    # The expectations follow the prior asked for; whether find_MAP's values mean anything
    # follows the prior that was fitted.
    blocks = _blocks(stats, model, alpha, class_alpha, cov_prior)
    fitted_blocks = (
        blocks
        if (alpha, class_alpha) == (fitted_alpha, fitted_class_alpha)
        else _blocks(stats, model, fitted_alpha, fitted_class_alpha, cov_prior)
    )

    posterior = est.idata_["posterior"].to_dataset()
    map_point = getattr(est, "map_", None)
    frames, checks = [], []
    for block, fitted in zip(blocks, fitted_blocks, strict=True):
        frame = _block_frame(block, posterior, map_point, hide_map=fitted.hide_map)
        frames.append(frame)
        checks.append((block, len(frame)))
    table = pd.concat(frames, ignore_index=True)
    no_joint_mode = any(b.unbounded is not None and b.unbounded.any() for b in fitted_blocks)
    if map_point is not None and no_joint_mode:
        _hide_artefacts(table)

    if isinstance(z_threshold, str):
        if z_threshold != "family":
            raise ValueError(f"z_threshold: expected a number or 'family'; got {z_threshold!r}.")
        z_threshold = family_wise_threshold(int(np.isfinite(table["z"]).sum()))
    z_ok, map_checked, map_ok = _agreement(table, z_threshold, map_atol, map_rtol)
    table["agrees"] = z_ok & map_ok
    table = table[TABLE_COLUMNS]

    chains, draws = posterior.sizes["chain"], posterior.sizes["draw"]
    divergences = _divergences(est.idata_)
    warnings, diagnostics_ok = _diagnose(
        table,
        z_ok,
        map_ok,
        divergences,
        ess_min,
        rhat_max,
        z_threshold,
        exact_draws=est.inference == "conjugate",
    )
    if map_point is not None and no_joint_mode:
        warnings.append(_NO_JOINT_MODE_WARNING)
    settings = {
        "z_threshold": z_threshold,
        "map_atol": map_atol,
        "map_rtol": map_rtol,
        "ess_min": ess_min,
        "rhat_max": rhat_max,
        "alpha": alpha,
        "class_alpha": class_alpha,
    }
    return Comparison(
        table=table,
        identities=_identities(checks, table, z_ok, map_checked, map_ok),
        warnings=warnings,
        ok=bool(table["agrees"].all() and diagnostics_ok),
        model=model,
        inference=str(getattr(est, "inference", "nuts")),
        chains=int(chains),
        draws=int(draws),
        divergences=divergences,
        map_computed=map_point is not None,
        settings=settings,
    )


def _blocks(stats, model: str, alpha, class_alpha: float, cov_prior: str) -> list[_Block]:
    if model == "gda":
        return _gda_blocks(stats, class_alpha, cov_prior)
    return [_class_block(stats, class_alpha), _feature_block(stats, model, alpha)]


def _hide_artefacts(table: pd.DataFrame) -> None:
    """Where some density is unbounded the joint posterior has no mode, so find_MAP cannot
    converge (L-BFGS-B stops "ABNORMAL") and all its values are artefacts, not only those at
    the boundary: hide them, keeping each simplex's own mode in ``expected_map``."""
    table["map"] = np.nan
    reason = table["reason"]
    table["reason"] = np.where(reason == "", _NO_JOINT_MODE, reason + "; " + _NO_JOINT_MODE)


@dataclass
class _Block:
    """One variable's expected values, in its full shape, and which of its scalars get a row."""

    variable: str
    keep: np.ndarray  # boolean, the variable's shape
    closed_form: np.ndarray
    mle: np.ndarray
    expected_map: np.ndarray
    mean_reason: np.ndarray  # object array of str; "" where the closed form exists
    map_reason: np.ndarray  # object array of str; "" where the mode exists
    hide_map: np.ndarray  # boolean: the optimizer's value is an artefact (no mode exists)
    prior: str
    mean_identity: str | None
    map_identity: str | None
    # Where the density is unbounded (n + α < 1 in the simplex): no mode exists, not even a
    # joint one for the whole model.
    unbounded: np.ndarray | None = None


def _class_block(stats: xr.Dataset, class_alpha: float) -> _Block:
    count = stats["class_count"].values.astype(np.float64)
    closed = cf.add_lambda(count, count.sum(), class_alpha, count.size)
    mode, status = _simplex_mode(count, class_alpha)
    return _Block(
        variable="class_prob",
        keep=np.ones(count.shape, dtype=bool),
        closed_form=closed,
        mle=stats["class_prob_mle"].values.astype(np.float64),
        expected_map=mode,
        mean_reason=_reasons(count.shape),
        map_reason=_status_reasons(status, _NO_MODE),
        hide_map=status >= _NO_MODE_HERE,
        prior=f"Dirichlet({class_alpha:g})",
        mean_identity=_mean_identity("Dirichlet"),
        map_identity=_map_identity("Dirichlet", class_alpha),
        unbounded=_is_unbounded(status),
    )


def _feature_block(stats: xr.Dataset, model: str, alpha: float) -> _Block:
    counts = stats["feature_count"].values.astype(np.float64)
    class_count = stats["class_count"].values.astype(np.float64)
    keep = np.ones(counts.shape, dtype=bool)
    family, no_mode = "Dirichlet", _NO_MODE
    if model == "multinomial_nb":
        closed = cf.add_lambda(counts, counts.sum(axis=1, keepdims=True), alpha, counts.shape[1])
        mode, status = _simplex_mode(counts, alpha)
    elif model == "bernoulli_nb":
        closed = cf.add_lambda(counts, class_count[:, None], alpha, 2)
        pair = np.stack([counts, class_count[:, None] - counts], axis=-1)
        mode, status = _simplex_mode(pair, alpha)
        # The row is φ; a Beta without a mode has none for either outcome.
        mode, status = mode[..., 0], status.max(axis=-1)
        family, no_mode = "Beta", _NO_MODE_BETA
    else:
        keep = np.broadcast_to(stats["category_mask"].values, counts.shape)
        n_categories = stats["n_categories"].values[:, None]
        closed = cf.add_lambda(counts, class_count[:, None, None], alpha, n_categories)
        closed = np.where(keep, closed, np.nan)
        mode, status = _simplex_mode(counts, alpha, active=keep)
    mle = stats["feature_prob_mle"].values.astype(np.float64)
    return _Block(
        variable="feature_prob",
        keep=keep,
        closed_form=closed,
        mle=mle,
        expected_map=mode,
        mean_reason=_reasons(counts.shape),
        map_reason=_status_reasons(status, no_mode),
        hide_map=status >= _NO_MODE_HERE,
        prior=f"Beta({alpha:g}, {alpha:g})" if family == "Beta" else f"Dirichlet({alpha:g})",
        mean_identity=_mean_identity(family),
        map_identity=_map_identity(family, alpha),
        unbounded=_is_unbounded(status),
    )


def _gda_blocks(stats: xr.Dataset, class_alpha: float, cov_prior: str) -> list[_Block]:
    conjugate = cov_prior == "conjugate" and "prior_mean" in stats
    n_features = stats.sizes["feature"]
    nan = lambda shape: np.full(shape, np.nan)  # noqa: E731
    prior = (
        f"NIW(κ₀={stats.attrs['prior_kappa']:g}, ν₀={stats.attrs['prior_dof']:g})"
        if conjugate
        else "LKJ"
    )
    mu_shape = stats["mu"].shape
    mu = _Block(
        variable="mu",
        keep=np.ones(mu_shape, dtype=bool),
        closed_form=stats["mu"].values if conjugate else nan(mu_shape),
        mle=stats["mu_mle"].values,
        expected_map=stats["mu"].values if conjugate else nan(mu_shape),
        mean_reason=_reasons(mu_shape, "" if conjugate else _LKJ),
        map_reason=_reasons(mu_shape, "" if conjugate else _LKJ_MAP),
        hide_map=np.zeros(mu_shape, dtype=bool),
        prior=prior,
        mean_identity="posterior mean of μ_k under normal-inverse-Wishart = m_k",
        map_identity="MAP of μ_k under normal-inverse-Wishart = m_k",
    )
    cov_shape = stats["cov"].shape
    cov_mean_exists = conjugate and (
        stats.attrs["prior_dof"] + stats["class_count"].values.sum() > n_features + 1
    )
    cov_reason = "" if cov_mean_exists else (_NO_COV_MEAN if conjugate else _LKJ)
    cov = _Block(
        variable="cov",
        keep=np.triu(np.ones(cov_shape, dtype=bool)),  # Σ is symmetric: one row per entry
        closed_form=stats["cov"].values if cov_mean_exists else nan(cov_shape),
        mle=stats["cov_mle"].values,
        expected_map=nan(cov_shape),
        mean_reason=_reasons(cov_shape, cov_reason),
        map_reason=_reasons(cov_shape, _BARTLETT if conjugate else _LKJ_MAP),
        hide_map=np.zeros(cov_shape, dtype=bool),
        prior=prior,
        mean_identity="posterior mean of Σ under normal-inverse-Wishart = Ψ_N / (ν_N − D − 1)",
        map_identity=None,
    )
    blocks = [_class_block(stats, class_alpha), mu, cov]
    for name in ("coef", "intercept"):
        shape = stats[name].shape
        blocks.append(
            _Block(
                variable=name,
                keep=np.ones(shape, dtype=bool),
                closed_form=nan(shape),
                mle=nan(shape),
                expected_map=nan(shape),
                mean_reason=_reasons(shape, _NONLINEAR),
                map_reason=_reasons(shape, _NONLINEAR_MAP),
                hide_map=np.zeros(shape, dtype=bool),
                prior=prior,
                mean_identity=None,
                map_identity=None,
            )
        )
    return blocks


_MODE_OK, _MODE_ZERO, _NO_MODE_HERE, _NO_MODE_OTHER, _MODE_FLAT = range(5)


def _simplex_mode(counts, alpha: float, *, active=None) -> tuple[np.ndarray, np.ndarray]:
    """The mode of Dirichlet(n + α) along the last axis, and a status per outcome.

    Status: ``_MODE_OK``; ``_MODE_ZERO`` (n + α = 1: the mode is 0, on the boundary but well
    defined); ``_NO_MODE_HERE`` (n + α < 1: the density is unbounded, so no mode exists);
    ``_NO_MODE_OTHER`` (another outcome of the same simplex has n + α < 1); ``_MODE_FLAT`` (all
    n + α = 1). The mode is NaN where none exists. ``active`` marks the outcomes that exist
    (the categorical model's padding is inactive).
    """
    counts = np.asarray(counts, dtype=np.float64)
    active = np.ones(counts.shape, dtype=bool) if active is None else np.asarray(active)
    shifted = counts + alpha - 1.0
    here = active & (shifted < 0)
    no_mode = active & np.any(here, axis=-1, keepdims=True)
    flat = active & ~np.any(active & (shifted != 0), axis=-1, keepdims=True)
    # Outcomes given n = 0 and α = 1 (so n + α - 1 = 0 exactly) add nothing to the denominator:
    # the padding, and every outcome of a simplex without a mode (which then gives 0/0 = NaN).
    usable = active & ~no_mode
    mode = cf.dirichlet_mode(
        np.where(usable, counts, 0.0),
        np.where(usable, alpha, 1.0),
        axis=-1,
        allow_boundary=True,
    )
    status = np.full(counts.shape, _MODE_OK)
    status[active & (shifted == 0)] = _MODE_ZERO
    status[flat] = _MODE_FLAT
    status[no_mode] = _NO_MODE_OTHER
    status[here] = _NO_MODE_HERE
    mode = np.where(status >= _NO_MODE_HERE, np.nan, mode)
    return mode, status


def _is_unbounded(status: np.ndarray) -> np.ndarray:
    return (status == _NO_MODE_HERE) | (status == _NO_MODE_OTHER)


def _status_reasons(status: np.ndarray, no_mode_here: str) -> np.ndarray:
    reasons = _reasons(status.shape)
    other = _NO_MODE_BETA if no_mode_here == _NO_MODE_BETA else _NO_MODE_ELSEWHERE
    reasons[status == _NO_MODE_HERE] = no_mode_here
    reasons[status == _NO_MODE_OTHER] = other
    reasons[status == _MODE_FLAT] = _FLAT
    return reasons


def _reasons(shape, text: str = "") -> np.ndarray:
    return np.full(shape, text, dtype=object)


def _mean_identity(family: str) -> str:
    prior = "Beta(λ, λ)" if family == "Beta" else "Dirichlet(λ)"
    return f"posterior mean under {prior} = add-λ"


def _map_identity(family: str, alpha: float) -> str:
    def prior(a: str) -> str:
        return f"Beta({a}, {a})" if family == "Beta" else f"Dirichlet({a})"

    if alpha == 1:
        return f"MAP under {prior('1')} = MLE"
    if alpha > 1:
        return f"MAP under {prior('λ + 1')} = add-λ"
    n_outcomes = "2" if family == "Beta" else "K"
    return f"MAP under {prior('α')} = (n + α − 1) / (N + {n_outcomes}(α − 1))"


def _block_frame(block: _Block, posterior: xr.Dataset, map_point, hide_map=None) -> pd.DataFrame:
    """The table rows of one variable; ``hide_map`` marks MAP values that are artefacts."""
    draws = posterior[block.variable]
    param_dims = draws.dims[2:]
    keep = np.flatnonzero(np.asarray(block.keep).ravel())
    n_chains, n_draws = draws.shape[:2]
    values = draws.values.reshape(n_chains, n_draws, -1)
    summary = _summarise(values, keep)

    def flat(array) -> np.ndarray:
        return np.asarray(array).ravel()[keep]

    if map_point is not None and block.variable in map_point:
        map_value = flat(map_point[block.variable].values.astype(np.float64))
        hide = block.hide_map if hide_map is None else hide_map
        map_value = np.where(flat(hide), np.nan, map_value)
    else:
        map_value = np.full(keep.size, np.nan)
    mean_reason, map_reason = flat(block.mean_reason), flat(block.map_reason)
    both = (mean_reason != "") & (map_reason != "")
    reason = np.where(both, mean_reason + "; " + map_reason, mean_reason + map_reason)
    frame = pd.DataFrame(
        {
            "variable": block.variable,
            "coords": _labels(draws, param_dims, keep),
            **summary,
            "closed_form": flat(block.closed_form).astype(np.float64),
            "mle": flat(block.mle).astype(np.float64),
            "map": map_value,
            "expected_map": flat(block.expected_map).astype(np.float64),
            "reason": reason.astype(str),
        }
    )
    frame["z"] = _z_scores(frame)
    return frame


def _summarise(values: np.ndarray, keep: np.ndarray) -> dict[str, np.ndarray]:
    """Mean, sd, MCSE, bulk ESS and R-hat of the kept parameters, in float64, in chunks."""
    n_chains, n_draws = values.shape[:2]
    names = ("posterior_mean", "posterior_sd", "mcse", "ess_bulk", "r_hat")
    out = {name: np.full(keep.size, np.nan) for name in names}
    step = max(1, _CHUNK_ELEMENTS // (n_chains * n_draws))
    for start in range(0, keep.size, step):
        part = slice(start, start + step)
        # (parameter, chain, draw), float64 whatever the draws are stored in
        chunk = np.moveaxis(values[:, :, keep[part]], -1, 0).astype(np.float64)
        out["posterior_mean"][part] = chunk.mean(axis=(1, 2))
        if n_chains * n_draws >= 2:
            out["posterior_sd"][part] = chunk.std(axis=(1, 2), ddof=1)
        mcse, ess_bulk, r_hat = mc_diagnostics(chunk)
        out["mcse"][part], out["ess_bulk"][part], out["r_hat"][part] = mcse, ess_bulk, r_hat
    return out


def _labels(draws: xr.DataArray, dims, keep: np.ndarray) -> list[str]:
    """Readable coordinate labels, e.g. ``spam, free``, of the kept flat indices."""
    if not dims:
        return [""] * keep.size
    shape = draws.shape[2:]
    positions = np.unravel_index(keep, shape)
    columns = [
        np.asarray([str(v) for v in draws[dim].values], dtype=object)[index]
        for dim, index in zip(dims, positions, strict=True)
    ]
    return [", ".join(parts) for parts in zip(*columns, strict=True)]


def _z_scores(frame: pd.DataFrame) -> np.ndarray:
    """(posterior mean − closed form) / MCSE; a zero MCSE (constant draws) gives 0 or ±inf."""
    diff = frame["posterior_mean"].to_numpy() - frame["closed_form"].to_numpy()
    mcse = frame["mcse"].to_numpy()
    usable = np.isfinite(mcse) & (mcse > 0)
    exact = np.abs(diff) <= 1e-12 * np.maximum(1.0, np.abs(frame["closed_form"].to_numpy()))
    z = np.where(exact, 0.0, np.copysign(np.inf, diff))
    z = np.where(np.isnan(diff), np.nan, z)
    return np.where(usable, np.divide(diff, mcse, out=np.zeros_like(diff), where=usable), z)


def _agreement(table: pd.DataFrame, z_threshold: float, atol: float, rtol: float):
    z = table["z"].to_numpy()
    z_ok = ~(np.abs(z) > z_threshold)  # no closed form: nothing to disagree with
    expected, found = table["expected_map"].to_numpy(), table["map"].to_numpy()
    map_checked = np.isfinite(expected) & ~np.isnan(found)
    with np.errstate(invalid="ignore"):
        close = np.abs(found - expected) <= atol + rtol * np.abs(expected)
    map_ok = ~map_checked | close
    return z_ok, map_checked, map_ok


def _divergences(idata: xr.DataTree) -> int:
    if "sample_stats" not in idata.children:
        return 0
    stats = idata["sample_stats"]
    return int(stats["diverging"].values.sum()) if "diverging" in stats else 0


def _where(table: pd.DataFrame, index) -> str:
    row = table.iloc[index]
    return f"{row['variable']}[{row['coords']}]" if row["coords"] else row["variable"]


def _diagnose(
    table, z_ok, map_ok, divergences, ess_min, rhat_max, z_threshold, *, exact_draws=False
):
    """Human-readable warnings, and whether the sampler diagnostics pass.

    With ``exact_draws`` (independent draws from the conjugate posterior) there is no Markov
    chain to converge: an R-hat above the threshold or a low ESS is chance fluctuation of
    independent draws, so it is reported but does not fail the check.
    """
    warnings, clean = [], True
    exact_note = (
        " These are exact independent draws, so this is chance fluctuation, not a convergence "
        "failure; it does not fail the check."
    )
    z = np.abs(table["z"].to_numpy())
    if not z_ok.all():
        worst = int(np.nanargmax(np.where(z_ok, -np.inf, z)))
        warnings.append(
            f"{int((~z_ok).sum())} posterior means differ from their closed form by more than "
            f"{z_threshold:g} MCSE (worst: {_where(table, worst)}, "
            f"z = {table['z'].iloc[worst]:.3g}). Either the closed form is for another prior "
            "(check alpha and class_alpha) or the draws do not follow the posterior."
            + _chance_note(int(np.isfinite(z).sum()), z_threshold)
        )
    if not map_ok.all():
        gap = np.abs(table["map"].to_numpy() - table["expected_map"].to_numpy())
        worst = int(np.nanargmax(np.where(map_ok, -np.inf, gap)))
        warnings.append(
            f"{int((~map_ok).sum())} MAP values differ from the closed-form mode (worst: "
            f"{_where(table, worst)}, MAP {table['map'].iloc[worst]:.6g} vs mode "
            f"{table['expected_map'].iloc[worst]:.6g}). The optimizer stopped early, or the "
            "mode is for another prior."
        )
    if divergences:
        clean = False
        warnings.append(
            f"{divergences} divergent transitions: NUTS met curvature it could not follow, so the "
            "draws may miss part of the posterior. Raise target_accept or reparameterise."
        )
    r_hat = table["r_hat"].to_numpy()
    high = r_hat > rhat_max
    if high.any():
        clean = clean and exact_draws
        worst = int(np.nanargmax(r_hat))
        warnings.append(
            f"{int(high.sum())} parameters have R-hat > {rhat_max:g} (worst {r_hat[worst]:.4g} "
            f"at {_where(table, worst)})"
            + (
                "." + exact_note
                if exact_draws
                else ": the chains have not mixed into one distribution. Run longer (more tune "
                "and draws)."
            )
        )
    ess = table["ess_bulk"].to_numpy()
    low = ess < ess_min
    if low.any():
        clean = clean and exact_draws
        worst = int(np.nanargmin(ess))
        warnings.append(
            f"{int(low.sum())} parameters have bulk ESS < {ess_min:g} (lowest {ess[worst]:.0f} at "
            f"{_where(table, worst)}): their MCSE, and so z, is unreliable. Draw more."
            + (exact_note if exact_draws else "")
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
    return warnings, clean


def family_wise_threshold(n_checked: int, *, rate: float = 0.01) -> float:
    """The larger of 4 and the two-sided Bonferroni threshold Φ⁻¹(1 − rate / (2P)).

    With it, a correct posterior with P = ``n_checked`` means has at most a ``rate`` chance of
    any |z| above the threshold.
    """
    from scipy.special import ndtri

    return max(Z_THRESHOLD, float(ndtri(1.0 - rate / (2.0 * max(n_checked, 1)))))


def _chance_note(n_checked: int, z_threshold: float) -> str:
    """For large tables: how many |z| > threshold a correct posterior gives by chance."""
    expected = n_checked * 2.0 * _normal_sf(z_threshold)
    if expected < 0.01:
        return ""
    return (
        f" With {n_checked} means checked, a correct posterior exceeds {z_threshold:g} about "
        f"{expected:.2g} times by chance; if the count is close to that, judge with "
        f"z_threshold='family' ({family_wise_threshold(n_checked):.2f} here: 1% family-wise, "
        "Bonferroni)."
    )


def _normal_sf(x: float) -> float:
    from scipy.special import ndtr

    return float(ndtr(-x))


def _identities(checks, table, z_ok, map_checked, map_ok) -> pd.DataFrame:
    rows, start = [], 0
    closed = np.isfinite(table["closed_form"].to_numpy())
    for block, n_rows in checks:
        part = slice(start, start + n_rows)
        start += n_rows
        for identity, checked, passed in (
            (block.mean_identity, closed[part], z_ok[part]),
            (block.map_identity, map_checked[part], map_ok[part]),
        ):
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
    return pd.DataFrame(rows, columns=["identity", "variable", "prior", "checked", "satisfied"])


def _format_float(value: float) -> str:
    return f"{value:.6g}"


def _truncate(label: str) -> str:
    return label if len(label) <= _LABEL_WIDTH else label[: _LABEL_WIDTH - 1] + "…"


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


# ``bayesgen.compare`` is this module once it is imported; keep ``bayesgen.compare(est)``
# working (see bayesgen._callable).
make_module_callable(__name__, "compare")
