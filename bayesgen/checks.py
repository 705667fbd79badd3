"""Posterior against closed form: the checks that say whether a fit can be trusted.

For the conjugate models every posterior mean, SD and mode has a formula, so a posterior
obtained by sampling (NUTS) or by exact conjugate draws can be checked number by number:

* posterior mean under Dirichlet(λ) (Beta(λ, λ) for Bernoulli features) = add-λ
  (n + λ) / (N + Kλ), checked as z = (posterior mean − add-λ) / MCSE;
* posterior SD = the Dirichlet/Beta marginal SD, checked as z_sd = (posterior SD − closed-form
  SD) / MCSE of the SD: draws centred on the right mean with the wrong spread fail here;
* MAP under Dirichlet(α) = (n + α − 1) / (N + K(α − 1)): with α = λ + 1 that is add-λ, with
  α = 1 the MLE. PyMC's ``find_MAP`` maximises the density of the variables as named (no
  Jacobian), so its answer is this constrained-space mode;
* GDA with the normal-inverse-Wishart prior: E[μ_k] = m_k, E[Σ] = Ψ_N / (ν_N − D − 1), their
  SDs, E[Σ⁻¹μ_k] = ν_N Ψ_N⁻¹ m_k and E of the intercept (see
  :mod:`bayesgen.families.gda_checks`), and in every draw ``coef``/``intercept`` must be the
  linear form of that draw's (π, μ, Σ), whatever the prior.

:func:`compare` builds that table for a fitted estimator from the blocks each model family
expects (:meth:`bayesgen.families.Family.expected`, with the shared pieces in
:mod:`bayesgen.checks_expected`); :mod:`bayesgen.checks_render` prints it. Beside it,
:func:`bayesgen.predictions.compare_predictions` compares the four ways of turning a posterior
into p(y | x), and :func:`bayesgen.sweep.lambda_sweep` shows add-λ, the posterior mean under
Dirichlet(λ) and the MAP under Dirichlet(λ + 1) coinciding over a grid
of λ; the Monte Carlo diagnostics are in :mod:`bayesgen.diagnostics`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from bayesgen import checks_render as render
from bayesgen import hyperprior
from bayesgen.checks_expected import Expected, expected_values
from bayesgen.diagnostics import mc_diagnostics, mcse_sd
from bayesgen.families import family
from bayesgen.families.base import DrawIdentity

#: Defaults of :func:`compare`, documented there.
Z_THRESHOLD = "auto"
Z_FLOOR = 4.0
FAMILY_RATE = 0.001
MAP_ATOL = 1e-4
MAP_RTOL = 1e-3
ESS_MIN = 400.0
RHAT_MAX = 1.01

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
    "reason",
]
_CHUNK_ELEMENTS = 131_072  # draws × parameters per block: small blocks stay in the CPU cache


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
        R-hat, low ESS, an optimiser that did not converge, and posterior modes on the
        boundary (the last two do not make ``ok`` False).
    ok : bool
        Every row agrees, there are no divergences, and every R-hat and bulk ESS passes.
    model, inference : str
    chains, draws, divergences : int
    map_computed : bool
    settings : dict
        The thresholds used (``z_threshold`` as a number, ``z_threshold_rule`` as asked,
        ``n_checks``, ``map_atol``, ``map_rtol``, ``ess_min``, ``rhat_max``, and the
        ``alpha``/``class_alpha`` the closed forms were computed with).
    map_method : str or None
        ``"closed_form"`` or ``"find_MAP"`` (``est.map_.attrs["map_method"]``; files from
        before it was recorded used ``find_MAP``); None without a MAP.
    map_converged : bool or None
        Whether the optimiser converged; None where that was not recorded (then its values
        are compared as if it had).
    map_message : str

    Examples
    --------
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, random_seed=0).fit(X, y)
    >>> from bayesgen import compare
    >>> result = compare(est)
    >>> result.ok, result.model, result.inference
    (True, 'multinomial_nb', 'conjugate')
    >>> result.table.shape[0]  # 2 class probabilities and 2 x 3 word probabilities
    8
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
    map_method: str | None = None
    map_converged: bool | None = None
    map_message: str = ""

    def worst(self, k: int = render.WORST_ROWS) -> pd.DataFrame:
        """The ``k`` worst rows: disagreements first, then by the larger of ``|z|`` and
        ``|z_sd|`` (rows with neither last)."""
        table = self.table
        worst_z = np.fmax(np.abs(table["z"].to_numpy()), np.abs(table["z_sd"].to_numpy()))
        order = pd.DataFrame({"agrees": table["agrees"].to_numpy(), "abs_z": -worst_z}).sort_values(
            ["agrees", "abs_z"], na_position="last", kind="stable"
        )
        return table.iloc[order.index[:k]]

    def __str__(self) -> str:
        return render.text(self)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return render.html_page(self)


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
    alpha_prior: tuple[float, float] | None = None,
    exact: bool | None = None,
) -> Comparison:
    """Check a fitted estimator's posterior, parameter by parameter, against its closed forms.

    Parameters
    ----------
    est : fitted bayesgen estimator
        Any of :class:`~bayesgen.MultinomialNB`, :class:`~bayesgen.BernoulliNB`,
        :class:`~bayesgen.CategoricalNB`, :class:`~bayesgen.GaussianDiscriminantAnalysis`,
        fitted with ``inference="nuts"`` or ``"conjugate"``.
    z_threshold : float, "auto" or "family", default "auto"
        A posterior mean (SD) agrees with its closed form when ``|z| ≤ z_threshold``
        (``|z_sd| ≤ z_threshold``), z being the difference in Monte Carlo standard errors.
        A correct posterior exceeds 4 with probability 6e-5 per check, but a model with P
        parameters makes up to 2P checks (mean and SD), so a fixed 4 raises a false alarm on
        about 4 % of correct 300-parameter fits and on most 20,000-parameter ones. ``"auto"``
        (``"family"`` is the same) therefore uses the larger of 4 and the two-sided Bonferroni
        threshold for a 0.1 % family-wise false-alarm rate over the C checks made,
        Φ⁻¹(1 − 0.001 / (2C)) (4.0 up to C = 15, 4.79 for C = 600, 5.42 for C = 17,000): at
        most 0.1 % of correct fits fail by chance whatever their size (so a test of 50 seeds
        sees none), while a wrong posterior, whose z grows with the number of draws, still
        fails. A number fixes the threshold.
    map_rtol, map_atol : float, default 1e-3 and 1e-4
        The MAP agrees when ``|MAP − mode| ≤ map_atol + map_rtol · |mode|``: L-BFGS-B's
        precision in the unconstrained space, which also lets a mode of exactly 0 (n + α = 1)
        be approached but not reached. Where ``est.map_.attrs["map_converged"]`` is 0 the
        optimiser's values are shown but not compared: a verdict on the posterior must not
        hinge on an optimiser (a warning says so).
    ess_min : float, default 400
        Lowest acceptable bulk ESS; below it the MCSE, and so z, is unreliable.
    rhat_max : float, default 1.01
        Highest acceptable rank-normalised split R-hat.
    alpha, class_alpha : float, optional
        Compute the closed forms (and modes) with this λ / class concentration instead of the
        fitted one, from the sufficient statistics in ``est.closed_form_``. A value other than
        the fitted one must make rows disagree: this shows that the check can fail.
    alpha_prior : (shape, rate), optional
        Compute the closed forms under this Gamma hyperprior on λ instead (by default the
        fitted one, where the fit has one: θ's posterior mean is then E_λ[add-λ | D] and λ's
        own mean and SD are checked too, all by quadrature of p(λ | D), see
        :mod:`bayesgen.hyperprior`); another hyperprior must make rows disagree.
    exact : bool, optional
        Take the posterior means and SDs from the exact conjugate posterior
        (``est.posterior_``, see :mod:`bayesgen.posterior`) instead of its draws: nothing is
        drawn, the Monte Carlo columns are 0 (``mcse``, ``mcse_sd``), inf (``ess_bulk``) and
        1 (``r_hat``), and a row agrees when its mean and SD equal the closed form to 1e-12;
        the check is then between two independent derivations of the same moments (the
        family's marginals and its expected values). Default (None): exact where the fit
        holds such a posterior, every variable has exact moments, and its draws would hold
        more than :data:`EXACT_ABOVE` values (a large vocabulary); the draws otherwise, so
        that the conjugate sampler itself is checked. True asks for it (ValueError where not
        possible), False for the draws.

    Returns
    -------
    Comparison
        ``.table`` has one row per scalar parameter (padding cells of the categorical model
        and the lower triangle of Σ left out), with columns ``variable``, ``coords``,
        ``posterior_mean``, ``posterior_sd``, ``mcse`` and ``mcse_sd`` (Monte Carlo errors of
        the mean and of the SD, as ``az.mcse(method="mean")`` and ``method="sd"``),
        ``ess_bulk``, ``r_hat``, ``closed_form`` and ``closed_form_sd`` (the values the
        posterior mean and SD must equal; NaN where none exists), ``mle``, ``map``
        (``est.map_``; NaN where not computed or where the mode does not exist),
        ``expected_map`` (the closed-form mode), ``z``, ``z_sd`` (log(posterior SD /
        closed-form SD) / (MCSE of the SD / posterior SD), the delta-method z of the SD on
        the log scale, whose tails are closer to normal), ``agrees`` and ``reason``
        (empty unless a comparison is missing, then why). GDA's ``coef`` and ``intercept``
        rows also agree only if every draw is the linear form of its own (π, μ, Σ), to the
        rounding of the stored draws. ``str()`` summarises tables of more than 50 rows.

    Examples
    --------
    >>> from bayesgen import MultinomialNB, compare
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> clf = MultinomialNB(inference="conjugate", compute_map=False, random_seed=0)
    >>> compare(clf.fit(X, ["ham", "ham", "spam", "spam"])).ok
    True
    """
    est.check_fitted()
    stats = est.closed_form_
    model = stats.attrs["model"]
    model_family = family(stats)
    options = est.get_params(deep=False)
    if not model_family.smoothing and alpha is not None:
        raise ValueError(
            f"alpha: {model_family.cli_name.upper()} has no λ; pass class_alpha to change the "
            "class prior."
        )
    if isinstance(z_threshold, str) and z_threshold not in ("auto", "family"):
        raise ValueError(
            f"z_threshold: expected a number, 'auto' or 'family'; got {z_threshold!r}."
        )
    if alpha is not None and alpha_prior is not None:
        raise ValueError(
            "alpha_prior: pass either alpha (a fixed λ) or alpha_prior (a hyperprior on λ), "
            "not both."
        )
    if alpha_prior is not None and not model_family.smoothing:
        raise ValueError(f"alpha_prior: {model_family.cli_name.upper()} has no λ.")
    # A float λ, or p(λ | D) under the fit's hyperprior (bayesgen.hyperprior).
    fitted_alpha = hyperprior.fitted_alpha(stats) if model_family.smoothing else None
    fitted_class_alpha = float(stats.attrs["class_alpha"])
    if alpha_prior is not None:
        alpha = hyperprior.posterior_of(stats, alpha_prior)
    else:
        alpha = fitted_alpha if alpha is None else _smoothing_asked(alpha, stats)
    class_alpha = fitted_class_alpha if class_alpha is None else float(class_alpha)
    # The expectations follow the prior asked for; whether find_MAP's values mean anything
    # follows the prior that was fitted.
    map_point = getattr(est, "map_", None)
    map_method, map_converged, map_message = _map_status(map_point)
    blocks = expected_values(
        stats, alpha=alpha, class_alpha=class_alpha, options=options, map_method=map_method
    )
    fitted_blocks = (
        blocks
        if _same_alpha(alpha, fitted_alpha) and class_alpha == fitted_class_alpha
        else expected_values(
            stats,
            alpha=fitted_alpha,
            class_alpha=fitted_class_alpha,
            options=options,
            map_method=map_method,
        )
    )

    exact_posterior = _exact_posterior(est, exact, [block.variable for block in blocks])
    if exact_posterior is None:
        posterior = est.idata_["posterior"].to_dataset()
    else:
        posterior = _exact_table_source(exact_posterior, [block.variable for block in blocks])
    frames, checks = [], []
    # By name: under another prior than the fitted one a block may be missing (a fixed λ
    # asked of a fit with a hyperprior on λ has no block for λ).
    fitted_by_name = {fitted.variable: fitted for fitted in fitted_blocks}
    for block in blocks:
        fitted = fitted_by_name.get(block.variable, block)
        frame = block_frame(
            block, posterior, map_point, hide_map=fitted.hide_map, exact=exact_posterior is not None
        )
        frames.append(frame)
        checks.append((block, len(frame)))
    table = pd.concat(frames, ignore_index=True)
    no_joint_mode = any(b.unbounded is not None and b.unbounded.any() for b in fitted_blocks)
    if map_point is not None and no_joint_mode:
        render.hide_artefacts(table)
    # Identities between the variables of each draw need draws; the exact path has none.
    draw_identities = [] if exact_posterior is not None else model_family.draw_identities(posterior)
    identity_ok, identity_ratio = _draw_identity_agreement(table, draw_identities)

    n_checks = int(np.isfinite(table["z"]).sum() + np.isfinite(table["z_sd"]).sum())
    rule = z_threshold
    if isinstance(z_threshold, str):
        z_threshold = family_wise_threshold(n_checks)
    z_ok = ~(np.abs(table["z"].to_numpy()) > z_threshold)  # no closed form: nothing to differ
    sd_ok = ~(np.abs(table["z_sd"].to_numpy()) > z_threshold)
    map_checked, map_ok = _map_agreement(table, map_atol, map_rtol)
    if map_converged is False:
        map_ignored = map_checked & ~map_ok
        render.add_reason(table, map_ignored, render.map_not_converged_reason(map_message))
        map_checked, map_ok = np.zeros_like(map_checked), np.ones_like(map_ok)
    else:
        map_ignored = np.zeros_like(map_ok)
    table["agrees"] = z_ok & sd_ok & map_ok & identity_ok
    table = table[TABLE_COLUMNS]

    if exact_posterior is None:
        chains, draws = posterior.sizes["chain"], posterior.sizes["draw"]
        divergences = _divergences(est.idata_)
    else:
        chains, draws = exact_posterior.chains, exact_posterior.draws_per_chain
        divergences = 0
    warnings, diagnostics_ok = render.diagnose(
        table,
        {
            "z": z_ok,
            "z_sd": sd_ok,
            "map": map_ok,
            "identity": identity_ok,
            "identity_ratio": identity_ratio,
        },
        divergences,
        ess_min,
        rhat_max,
        z_threshold,
        exact_draws=est.inference == "conjugate",
        draw_identities=draw_identities,
    )
    if map_converged is False:
        warnings.append(render.map_not_converged_warning(map_message, int(map_ignored.sum())))
    if map_point is not None and no_joint_mode:
        warnings.append(render.NO_JOINT_MODE_WARNING)
    settings = {
        "z_threshold": z_threshold,
        "z_threshold_rule": rule,
        "n_checks": n_checks,
        "map_atol": map_atol,
        "map_rtol": map_rtol,
        "ess_min": ess_min,
        "rhat_max": rhat_max,
        "alpha": alpha.mean if isinstance(alpha, hyperprior.AlphaPosterior) else alpha,
        "class_alpha": class_alpha,
    }
    if isinstance(alpha, hyperprior.AlphaPosterior):
        settings["alpha_prior"] = (alpha.shape, alpha.rate)
    outcomes = {"mean": z_ok, "sd": sd_ok, "map": (map_checked, map_ok), "draw": identity_ok}
    return Comparison(
        table=table,
        identities=_identities(checks, table, outcomes, draw_identities),
        warnings=warnings,
        ok=bool(table["agrees"].all() and diagnostics_ok),
        model=model,
        inference=str(getattr(est, "inference", "nuts")),
        chains=int(chains),
        draws=int(draws),
        divergences=divergences,
        map_computed=map_point is not None,
        settings=settings,
        map_method=map_method,
        map_converged=map_converged,
        map_message=map_message,
    )


def family_wise_threshold(n_checked: int, *, rate: float = FAMILY_RATE) -> float:
    """The larger of 4 and the two-sided Bonferroni threshold Φ⁻¹(1 − rate / (2C)).

    With it, a correct posterior with C = ``n_checked`` checks (each a mean or an SD) has at
    most a ``rate`` chance of any |z| above the threshold.
    """
    from scipy.special import ndtri

    return max(Z_FLOOR, float(ndtri(1.0 - rate / (2.0 * max(n_checked, 1)))))


def _map_status(map_point) -> tuple[str | None, bool | None, str]:
    """(method, converged, message) of ``est.map_``: None where there is no MAP or where
    convergence was not recorded (files from before it was)."""
    if map_point is None:
        return None, None, ""
    attrs = getattr(map_point, "attrs", {})
    converged = attrs.get("map_converged")
    converged = None if converged is None else bool(int(converged))
    return str(attrs.get("map_method", "find_MAP")), converged, str(attrs.get("map_message", ""))


def block_frame(
    block: Expected, posterior: xr.Dataset, map_point, hide_map=None, *, exact: bool = False
):
    """The table rows of one variable; ``hide_map`` marks MAP values that are artefacts.

    ``posterior`` holds draws (dims chain, draw, ...), or with ``exact`` the exact moments
    (dims moment = mean, sd, ...; see :func:`_exact_table_source`)."""
    draws = posterior[block.variable]
    param_dims = draws.dims[2:] if not exact else draws.dims[1:]
    keep = np.flatnonzero(np.asarray(block.keep).ravel())
    if exact:
        summary = _exact_summary(draws.values.reshape(2, -1), keep)
    else:
        n_chains, n_draws = draws.shape[:2]
        values = draws.values.reshape(n_chains, n_draws, -1)
        kurtosis = block.closed_form_kurtosis
        if kurtosis is not None:
            kurtosis = flat_kept(kurtosis, keep)
        summary = _summarise(values, keep, kurtosis=kurtosis)

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
                _labels(draws, param_dims, keep, skip=1 if exact else 2), dtype=object
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
    frame["z"] = _z_scores(frame["posterior_mean"], frame["closed_form"], _null_mcse(frame))
    frame["z_sd"] = _z_sd(frame["posterior_sd"], frame["closed_form_sd"], frame["mcse_sd"])
    return frame


def flat_kept(array, keep: np.ndarray) -> np.ndarray:
    """The entries of ``array`` at the flat indices ``keep``, in float64."""
    return np.asarray(array, dtype=np.float64).ravel()[keep]


def _summarise(
    values: np.ndarray, keep: np.ndarray, *, kurtosis: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """Mean, sd, their MCSEs, bulk ESS and R-hat of the kept parameters, in float64, in
    chunks. ``kurtosis`` (one per kept parameter, NaN where unknown) is the closed-form
    kurtosis the SD's Monte Carlo error is computed with (:func:`mcse_sd`)."""
    n_chains, n_draws = values.shape[:2]
    names = ("posterior_mean", "posterior_sd", "mcse", "mcse_sd", "ess_bulk", "r_hat")
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
        out["mcse_sd"][part] = mcse_sd(chunk, kurtosis=None if kurtosis is None else kurtosis[part])
    return out


def _labels(draws: xr.DataArray, dims, keep: np.ndarray, skip: int = 2) -> list[str]:
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


#: Above this many stored values (chains × draws × parameters) :func:`compare` uses the exact
#: moments of a conjugate posterior by default instead of drawing it (80 MB in float64).
EXACT_ABOVE = 10_000_000


def _exact_posterior(est, exact: bool | None, variables: list[str]):
    """The fit's :class:`~bayesgen.posterior.ConjugatePosterior` where the comparison uses
    its exact moments (see :func:`compare`'s ``exact``), else None."""
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


def _exact_table_source(posterior, variables: list[str]) -> xr.Dataset:
    """The exact means and SDs, stacked on a leading ``moment`` dim (mean, sd)."""
    means, sds = posterior.mean(variables), posterior.sd(variables)
    return xr.concat([means, sds], dim="moment")


def _exact_summary(moments: np.ndarray, keep: np.ndarray) -> dict[str, np.ndarray]:
    """:func:`_summarise`'s columns from exact moments: no Monte Carlo error."""
    n = keep.size
    return {
        "posterior_mean": moments[0, keep],
        "posterior_sd": moments[1, keep],
        "mcse": np.zeros(n),
        "mcse_sd": np.zeros(n),
        "ess_bulk": np.full(n, np.inf),
        "r_hat": np.ones(n),
    }


def _z_scores(estimate, expected, error) -> np.ndarray:
    """(estimate − expected) / error; a zero error (constant draws) gives 0 or ±inf."""
    expected = np.asarray(expected, dtype=np.float64)
    diff = np.asarray(estimate, dtype=np.float64) - expected
    error = np.asarray(error, dtype=np.float64)
    usable = np.isfinite(error) & (error > 0)
    exact = np.abs(diff) <= 1e-12 * np.maximum(1.0, np.abs(expected))
    z = np.where(exact, 0.0, np.copysign(np.inf, diff))
    z = np.where(np.isnan(diff), np.nan, z)
    return np.where(usable, np.divide(diff, error, out=np.zeros_like(diff), where=usable), z)


def _null_mcse(frame: pd.DataFrame) -> np.ndarray:
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


def _z_sd(sd, closed_sd, mcse) -> np.ndarray:
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
    z = _z_scores(sd, closed_sd, mcse)  # zero or constant draws: 0 or ±inf as for the mean
    return np.where(positive & np.isfinite(log_z), log_z, z)


def _map_agreement(table: pd.DataFrame, atol: float, rtol: float):
    expected, found = table["expected_map"].to_numpy(), table["map"].to_numpy()
    map_checked = np.isfinite(expected) & ~np.isnan(found)
    with np.errstate(invalid="ignore"):
        close = np.abs(found - expected) <= atol + rtol * np.abs(expected)
    return map_checked, ~map_checked | close


def _draw_identity_agreement(table: pd.DataFrame, identities: list[DrawIdentity]):
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


def _divergences(idata: xr.DataTree) -> int:
    if "sample_stats" not in idata.children:
        return 0
    stats = idata["sample_stats"]
    return int(stats["diverging"].values.sum()) if "diverging" in stats else 0


def _identities(
    checks, table: pd.DataFrame, outcomes: dict, draw_identities: list[DrawIdentity]
) -> pd.DataFrame:
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
    return pd.DataFrame(rows, columns=["identity", "variable", "prior", "checked", "satisfied"])


def _smoothing_asked(alpha, stats):
    """compare()'s ``alpha``: a number, or one λ per class (checked against the fit's
    classes)."""
    from bayesgen.closed_form import check_class_smoothing

    return check_class_smoothing(alpha, stats["class"].values, "alpha")


def _same_alpha(first, second) -> bool:
    """Whether two λ (numbers, arrays of one per class, or p(λ | D)) are the same."""
    if isinstance(first, hyperprior.AlphaPosterior) or isinstance(
        second, hyperprior.AlphaPosterior
    ):
        return first is second
    return np.shape(first) == np.shape(second) and bool(np.all(first == second))
