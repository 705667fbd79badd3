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
  linear form of that draw's (π, μ, Σ), whatever the prior;
* statistics of each whole draw with an exact law (:mod:`bayesgen.maths.joint_statistics`): Σ log θ
  under its Dirichlet, κ (μ − m)ᵀ Σ⁻¹ (μ − m) and tr(Ψ Σ⁻¹) under the normal-inverse-Wishart,
  and for a conjugate multinomial fit the draws predictions use (their own aggregated draws).

Every z is judged against one family-wise threshold (0.1 % over all the checks made), and the
sampler's R-hat and ESS against family-wise limits (:func:`diagnostic_limits`): a correct
posterior fails by chance in about 0.1-0.3 % of fits whatever its size.

What the checks cannot see (measured in ``docs/performance.md``): a class prior whose
concentration is 10 % off when the classes have hundreds of rows (π's mean is unchanged and
its SD moves by well under its Monte Carlo error; Σ log π sees only a handful of classes);
a prior strength κ₀ or ν₀ off by 10 % when it is small beside the counts it is added to (the
posterior is then almost the same distribution); a sampler that misses a part of the posterior
in every chain alike (R-hat compares the chains with each other); and, above
:data:`EXACT_ABOVE` draw values, the cells outside the checked sample, whose exact moments are
compared but whose draws are not.

:func:`compare` builds that table for a fitted estimator from the blocks each model family
expects (:meth:`bayesgen.families.Family.expected`, with the shared pieces in
:mod:`bayesgen.families.expected`); :mod:`bayesgen.checks.render` prints it. Beside it,
:func:`bayesgen.checks.predictions.compare_predictions` compares the four ways of turning a
posterior
into p(y | x), and :func:`bayesgen.checks.sweep.lambda_sweep` shows add-λ, the posterior mean under
Dirichlet(λ) and the MAP under Dirichlet(λ + 1) coinciding over a grid
of λ; the Monte Carlo diagnostics are in :mod:`bayesgen.maths.diagnostics`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
import xarray as xr

from bayesgen.checks import render
from bayesgen.families import family, hyperprior
from bayesgen.families.base import DrawIdentity
from bayesgen.families.expected import Expected, expected_values
from bayesgen.inference.conjugate import DRAW_ELEMENTS, Lazy
from bayesgen.maths.diagnostics import ess_limit, ess_within, mc_diagnostics, mcse_sd, rhat_limit
from bayesgen.maths.joint_statistics import statistic_z

#: Defaults of :func:`compare`, documented there.
Z_THRESHOLD = "auto"
Z_FLOOR = 4.0
FAMILY_RATE = 0.001
MAP_ATOL = 1e-4
MAP_RTOL = 1e-3
#: The conventional targets (Vehtari et al. 2021): below 400 bulk ESS or above 1.01 R-hat a
#: parameter is *borderline*; it fails only beyond the family-wise limits of
#: :func:`bayesgen.maths.diagnostics.ess_limit` and :func:`bayesgen.maths.diagnostics.rhat_limit`.
ESS_MIN = 400.0
RHAT_MAX = 1.01
#: Most draw values (cells × chains × draws) of the seeded sample whose draws are checked when
#: the table's moments are exact (see :func:`compare`'s ``exact``).
SAMPLE_VALUES = 2_000_000

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
    agrees : bool
        Every row agrees with its closed form (the posterior is the right one), whatever
        the sampler diagnostics say.
    diagnostics_ok : bool
        No divergence and no row beyond the R-hat and ESS limits (``ok`` is ``agrees and
        diagnostics_ok``).
    borderline : list of str
        Diagnostics past the conventional 1.01 / 400 but within the family-wise limits:
        worth a look, not a failure.
    joint : pandas.DataFrame
        The per-draw joint statistics with an exact law (the family's
        ``joint_statistics``, see :mod:`bayesgen.maths.joint_statistics`): ``statistic``,
        ``variable``, ``z_mean``, ``z_spread``, ``ess_bulk``, ``agrees``. They count in
        ``agrees`` and in the family-wise z threshold.

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
    agrees: bool = True
    diagnostics_ok: bool = True
    borderline: list[str] = field(default_factory=list)
    joint: pd.DataFrame = field(default_factory=lambda: _joint_table([]).assign(agrees=True))

    def worst(self, k: int = render.WORST_ROWS) -> pd.DataFrame:
        """The ``k`` worst rows: disagreements first, then rows failing a sampler diagnostic,
        then borderline ones, then by the larger of ``|z|`` and ``|z_sd|``; rows that were not
        compared (no z) come last."""
        table = self.table
        worst_z = np.fmax(np.abs(table["z"].to_numpy()), np.abs(table["z_sd"].to_numpy()))
        rank = {"fail": 0, "borderline": 1}
        diagnostic = table["diagnostic"].map(lambda status: rank.get(status, 2)).to_numpy()
        order = pd.DataFrame(
            {"agrees": table["agrees"].to_numpy(), "diagnostic": diagnostic, "abs_z": -worst_z}
        ).sort_values(["agrees", "diagnostic", "abs_z"], na_position="last", kind="stable")
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
    ess_min: float | str = "auto",
    rhat_max: float | str = "auto",
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
    ess_min : float or "auto", default "auto"
        Lowest acceptable bulk ESS; below it the MCSE, and so z, is unreliable. ``"auto"``
        aims at the conventional 400 without crying wolf: a row whose ESS is below 400 but
        not credibly so (the estimate of an ESS of 400 scatters by about ±15 %, and the
        lowest of many rows further) is ``"borderline"``, reported but not a failure; it
        fails below :func:`bayesgen.maths.diagnostics.ess_limit`, the family-wise lower limit for
        the number of rows (252 for one parameter, 177 for 40,000). A number is a hard limit.
    rhat_max : float or "auto", default "auto"
        Highest acceptable rank-normalised split R-hat. A fixed 1.01 over thousands of
        parameters fails correct posteriors by chance (R-hat of correct draws scatters above
        1 by about √(m F / ESS), m split chains). ``"auto"`` fails a row only above
        :func:`bayesgen.maths.diagnostics.rhat_limit`, the R-hat a correct posterior exceeds with
        probability 0.1 % over all the rows, at that row's bulk ESS and never below 1.01
        (1.0133 at ESS 2,000 over 40,000 parameters with 4 chains × 1,000 draws); between
        1.01 and it the row is ``"borderline"``. A number is a hard limit.
    alpha, class_alpha : float, optional
        Compute the closed forms (and modes) with this λ / class concentration instead of the
        fitted one, from the sufficient statistics in ``est.closed_form_``. A value other than
        the fitted one must make rows disagree: this shows that the check can fail.
    alpha_prior : (shape, rate), optional
        Compute the closed forms under this Gamma hyperprior on λ instead (by default the
        fitted one, where the fit has one: θ's posterior mean is then E_λ[add-λ | D] and λ's
        own mean and SD are checked too, all by quadrature of p(λ | D), see
        :mod:`bayesgen.families.hyperprior`); another hyperprior must make rows disagree.
    exact : bool, optional
        Take the posterior means and SDs from the exact conjugate posterior
        (``est.posterior_``, see :mod:`bayesgen.inference.conjugate`) instead of its draws: nothing
        is
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
    # A float λ, or p(λ | D) under the fit's hyperprior (bayesgen.families.hyperprior).
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

    variables = [block.variable for block in blocks]
    exact_posterior = _exact_posterior(est, exact, variables)
    if exact_posterior is None:
        posterior = est.idata_["posterior"].to_dataset()
    else:
        posterior = _exact_table_source(exact_posterior, variables)
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
    if exact_posterior is None:
        chains, draws = posterior.sizes["chain"], posterior.sizes["draw"]
        moments_ok = np.ones(len(table), dtype=bool)
        n_sampled = None
    else:
        chains, draws = exact_posterior.chains, exact_posterior.draws_per_chain
        moments_ok = _exact_moments_agree(table)
        sample = _sampled_draws(est, exact_posterior, variables)
        n_sampled = _check_sampled_cells(table, checks, sample)
    words = None if exact_posterior is None else sample[1]
    no_joint_mode = any(b.unbounded is not None and b.unbounded.any() for b in fitted_blocks)
    if map_point is not None and no_joint_mode:
        render.hide_artefacts(table)
    # Identities between the variables of each draw need every variable's draws.
    draw_identities = [] if exact_posterior is not None else model_family.draw_identities(posterior)
    identity_ok, identity_ratio = _draw_identity_agreement(table, draw_identities)
    # Statistics of whole draws need every variable's draws too.
    statistics = (
        []
        if exact_posterior is not None
        else model_family.joint_statistics(
            stats, posterior, alpha=alpha, class_alpha=class_alpha, options=options
        )
    )
    joint = _joint_table(statistics + _prediction_statistics(est, model_family, stats, words))

    n_checks = int(np.isfinite(table["z"]).sum() + np.isfinite(table["z_sd"]).sum())
    n_checks += int(np.isfinite(joint["z_mean"]).sum() + np.isfinite(joint["z_spread"]).sum())
    rule = z_threshold
    if isinstance(z_threshold, str):
        z_threshold = family_wise_threshold(n_checks)
    joint["agrees"] = ~(np.abs(joint["z_mean"]) > z_threshold) & ~(
        np.abs(joint["z_spread"]) > z_threshold
    )
    z_ok = ~(np.abs(table["z"].to_numpy()) > z_threshold)  # no closed form: nothing to differ
    sd_ok = ~(np.abs(table["z_sd"].to_numpy()) > z_threshold)
    map_checked, map_ok = _map_agreement(table, map_atol, map_rtol)
    if map_converged is False:
        map_ignored = map_checked & ~map_ok
        render.add_reason(table, map_ignored, render.map_not_converged_reason(map_message))
        map_checked, map_ok = np.zeros_like(map_checked), np.ones_like(map_ok)
    else:
        map_ignored = np.zeros_like(map_ok)
    table["agrees"] = z_ok & sd_ok & map_ok & identity_ok & moments_ok
    limits = diagnostic_limits(
        table, chains=int(chains), draws=int(draws), rhat_max=rhat_max, ess_min=ess_min
    )
    table["diagnostic"] = limits.status
    table = table[TABLE_COLUMNS]

    divergences = 0 if exact_posterior is not None else _divergences(est.idata_)
    warnings, diagnostics_ok, borderline = render.diagnose(
        table,
        {
            "z": z_ok,
            "z_sd": sd_ok,
            "map": map_ok,
            "identity": identity_ok,
            "identity_ratio": identity_ratio,
            "moments": moments_ok,
        },
        divergences,
        limits,
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
        "ess_min": limits.ess_min,
        "ess_target": limits.ess_target,
        "rhat_max": limits.rhat_max,
        "rhat_target": limits.rhat_target,
        "diagnostics_rule": limits.rule,
        "rhat_fixed": limits.rhat_fixed,
        "ess_fixed": limits.ess_fixed,
        "moments": "draws" if exact_posterior is None else "exact",
        "draws_checked": n_sampled,
        "alpha": alpha.mean if isinstance(alpha, hyperprior.AlphaPosterior) else alpha,
        "class_alpha": class_alpha,
    }
    if isinstance(alpha, hyperprior.AlphaPosterior):
        settings["alpha_prior"] = (alpha.shape, alpha.rate)
    outcomes = {"mean": z_ok, "sd": sd_ok, "map": (map_checked, map_ok), "draw": identity_ok}
    agrees = bool(table["agrees"].all() and joint["agrees"].all())
    for _, row in joint[~joint["agrees"]].iterrows():
        warnings.append(
            f"The per-draw statistic {row['statistic']} does not follow its exact law "
            f"(z of its mean {row['z_mean']:.3g}, of its spread {row['z_spread']:.3g}; "
            f"threshold {z_threshold:.3g}): the draws of {row['variable']} come from another "
            "posterior, although each parameter's own mean and SD may look right."
        )
    identities = _identities(checks, table, outcomes, draw_identities)
    checked = joint[["z_mean", "z_spread"]].notna().sum(axis=1)
    if checked.any():
        joint_checked = joint[checked > 0]
        checked = checked[checked > 0]
        identities = pd.concat(
            [
                identities,
                pd.DataFrame(
                    {
                        "identity": joint_checked["statistic"] + " per draw follows its exact law",
                        "variable": joint_checked["variable"],
                        "prior": "",
                        "checked": checked,
                        "satisfied": checked * joint_checked["agrees"].astype(int),
                    }
                ),
            ],
            ignore_index=True,
        )
    return Comparison(
        table=table,
        identities=identities,
        warnings=warnings,
        ok=agrees and diagnostics_ok,
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
        agrees=agrees,
        diagnostics_ok=diagnostics_ok,
        borderline=borderline,
        joint=joint,
    )


#: Features whose one-word documents check the prediction draws of a conjugate fit.
PREDICTION_WORDS = 200


def _prediction_statistics(est, model_family, stats, words) -> list:
    """Where predictions draw their own exact draws (a conjugate multinomial fit's
    aggregated draws, not ``idata_``'s), statistics of those very draws (same seed, same
    number): the family's ``prediction_statistics`` over a seeded sample of features."""
    posterior = est.__dict__.get("posterior_")
    if posterior is None:
        return []
    if words is None:
        n_features = stats.sizes.get("feature", 0)
        rng = np.random.default_rng([posterior.random_seed, 0x5A3])
        words = np.sort(
            rng.choice(n_features, size=min(PREDICTION_WORDS, n_features), replace=False)
        )
    n_draws = posterior.chains * posterior.draws_per_chain
    return model_family.prediction_statistics(stats, words, n_draws, posterior.random_seed)


def _joint_table(statistics) -> pd.DataFrame:
    """One row per :class:`~bayesgen.maths.joint_statistics.JointStatistic`: its z for location and
    spread and the ESS behind them."""

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
    columns = ["statistic", "variable", "z_mean", "z_spread", "ess_bulk"]
    table = pd.DataFrame(rows, columns=columns)
    # typed even when empty (an exact-moment table of a family without prediction draws)
    return table.astype({"z_mean": float, "z_spread": float, "ess_bulk": float})


@dataclass(frozen=True)
class DiagnosticLimits:
    """The R-hat and bulk-ESS limits :func:`compare` judged each row by.

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
    names = ("posterior_mean", "posterior_sd", "mcse", "mcse_sd", "ess_bulk", "r_hat", "ess_within")
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
        out["ess_within"][part] = ess_within(chunk)
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
    """The fit's :class:`~bayesgen.inference.conjugate.ConjugatePosterior` where the comparison uses
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


#: The columns only draws can fill: emptied for exact moments, filled for the sampled cells.
MONTE_CARLO_COLUMNS = ("mcse", "mcse_sd", "ess_bulk", "r_hat", "ess_within", "z", "z_sd")

#: The reason of a row whose moments are exact and whose draws were not in the checked sample.
EXACT_ONLY = "exact moments equal the closed form; this cell's draws were not in the checked sample"


def _exact_moments_agree(table: pd.DataFrame) -> np.ndarray:
    """Per row of an exact-moment table: whether its exact mean and SD equal the closed form
    (to 1e-12, as :func:`_z_scores` judges a zero error); the Monte Carlo columns are then
    emptied, to be filled for the sampled cells by :func:`_check_sampled_cells`."""
    agree = ~(np.abs(table["z"].to_numpy()) > 0) & ~(np.abs(table["z_sd"].to_numpy()) > 0)
    for column in MONTE_CARLO_COLUMNS:
        table[column] = np.nan
    return agree


def _sampled_draws(est, posterior, variables: list[str]) -> tuple[xr.Dataset, np.ndarray]:
    """Draws of a seeded sample of features (all of their cells, every chain and draw), at
    most :data:`SAMPLE_VALUES` values: from ``idata_`` where it has been materialised (they
    are then the very draws the fit holds), else drawn by the fit's exact sampler with the
    fit's seed (:meth:`bayesgen.inference.conjugate.ConjugatePosterior.draws`). Also the sampled
    features' positions."""
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
    rng = np.random.default_rng([posterior.random_seed, 0x5A3])
    chosen = np.sort(rng.choice(n_features, size=min(n_sampled, n_features), replace=False))
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


def _check_sampled_cells(table: pd.DataFrame, checks, sample) -> int:
    """Fill the Monte Carlo columns and z of the sampled cells' rows from their draws (in
    place) and mark the other rows :data:`EXACT_ONLY`; the number of rows checked."""
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
    render.add_reason(table, ~checked, EXACT_ONLY)
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
        "ess_within": np.full(n, np.inf),
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
