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
sampler's R-hat and ESS against family-wise limits (:mod:`bayesgen.checks.thresholds`): a correct
posterior fails by chance in about 0.1-0.3 % of fits whatever its size.

What the checks cannot see (measured in ``docs/performance.md``): a class prior whose
concentration is 10 % off when the classes have hundreds of rows (π's mean is unchanged and
its SD moves by well under its Monte Carlo error; Σ log π sees only a handful of classes);
a prior strength κ₀ or ν₀ off by 10 % when it is small beside the counts it is added to (the
posterior is then almost the same distribution); a sampler that misses a part of the posterior
in every chain alike (R-hat compares the chains with each other); and, above
:data:`~bayesgen.checks.exact_moments.EXACT_ABOVE` draw values, the cells outside the checked
sample, whose exact moments are compared but whose draws are not.

:func:`compare` builds that table for a fitted estimator from the blocks each model family
expects (:meth:`bayesgen.families.Family.expected`, with the shared pieces in
:mod:`bayesgen.families.expected`): its rows are made in :mod:`bayesgen.checks.parameter_table`,
the exact-moments path of a large conjugate fit in :mod:`bayesgen.checks.exact_moments`, the
per-draw identities and joint statistics in :mod:`bayesgen.checks.identities`, and
:mod:`bayesgen.checks.render` prints it. Beside it,
:func:`bayesgen.checks.predictions.compare_predictions` compares the four ways of turning a
posterior into p(y | x), and :func:`bayesgen.checks.sweep.lambda_sweep` shows add-λ, the posterior
mean under Dirichlet(λ) and the MAP under Dirichlet(λ + 1) coinciding over a grid of λ; the
Monte Carlo diagnostics are in :mod:`bayesgen.maths.diagnostics`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import xarray as xr

from bayesgen.checks import render
from bayesgen.checks.exact_moments import (
    check_sampled_cells,
    exact_moments_agree,
    exact_moments_posterior,
    exact_table_source,
    sampled_draws,
)
from bayesgen.checks.identities import (
    draw_identity_agreement,
    identity_table,
    joint_table,
    prediction_statistics,
)
from bayesgen.checks.parameter_table import TABLE_COLUMNS, block_frame
from bayesgen.checks.thresholds import diagnostic_limits, family_wise_threshold
from bayesgen.families import hyperprior
from bayesgen.families.expected import without_moments
from bayesgen.input.alpha import check_class_smoothing

#: Defaults of :func:`compare`, documented there.
Z_THRESHOLD = "auto"
MAP_ATOL = 1e-4
MAP_RTOL = 1e-3


@dataclass(frozen=True, eq=False)
class Comparison:
    """Posterior summaries next to the closed forms they must equal.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per scalar parameter (columns in
        :data:`~bayesgen.checks.parameter_table.TABLE_COLUMNS`, see :func:`compare`).
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
    joint: pd.DataFrame = field(default_factory=lambda: joint_table([]).assign(agrees=True))

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
        (``est.posterior_``, see :mod:`bayesgen.inference.conjugate`) instead of its draws:
        nothing is drawn, the Monte Carlo columns are 0 (``mcse``, ``mcse_sd``), inf
        (``ess_bulk``) and 1 (``r_hat``), and a row agrees when its mean and SD equal the
        closed form to 1e-12; the check is then between two independent derivations of the
        same moments (the family's marginals and its expected values), and the draws of a
        seeded sample of features are checked by z (:mod:`bayesgen.checks.exact_moments`).
        Default (None): exact where the fit holds such a posterior, every variable has exact
        moments, and its draws would hold more than
        :data:`~bayesgen.checks.exact_moments.EXACT_ABOVE` values (a large vocabulary); the
        draws otherwise, so that the conjugate sampler itself is checked. True asks for it
        (ValueError where not possible), False for the draws.

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
    model_family = est.model_
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
    fitted_alpha = hyperprior.fitted_alpha(model_family, stats) if model_family.smoothing else None
    fitted_class_alpha = float(stats.attrs["class_alpha"])
    if alpha_prior is not None:
        alpha = hyperprior.posterior_of(model_family, stats, alpha_prior)
    else:
        alpha = fitted_alpha if alpha is None else _smoothing_asked(alpha, stats)
    class_alpha = fitted_class_alpha if class_alpha is None else float(class_alpha)
    # The expectations follow the prior asked for; whether find_MAP's values mean anything
    # follows the prior that was fitted.
    map_point = getattr(est, "map_", None)
    map_method, map_converged, map_message = _map_status(map_point)
    blocks = model_family.expected(
        stats, alpha=alpha, class_alpha=class_alpha, options=options, map_method=map_method
    )
    fitted_blocks = (
        blocks
        if _same_alpha(alpha, fitted_alpha) and class_alpha == fitted_class_alpha
        else model_family.expected(
            stats,
            alpha=fitted_alpha,
            class_alpha=fitted_class_alpha,
            options=options,
            map_method=map_method,
        )
    )
    # A semi-supervised fit sampled by Gibbs or NUTS: its unlabelled rows' classes are latent,
    # so no posterior moment has a closed form; its MAP is EM's, the conjugate mode at the
    # completed statistics.
    latent_labels = stats.attrs.get("semi_supervised_posterior") in ("gibbs", "nuts")
    if latent_labels:
        blocks = [without_moments(block) for block in blocks]
        fitted_blocks = [without_moments(block) for block in fitted_blocks]

    variables = [block.variable for block in blocks]
    exact_posterior = exact_moments_posterior(est, exact, variables)
    if exact_posterior is None:
        posterior = est.idata_["posterior"].to_dataset()
    else:
        posterior = exact_table_source(exact_posterior, variables)
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
        moments_ok = exact_moments_agree(table)
        sample = sampled_draws(est, exact_posterior, variables)
        n_sampled = check_sampled_cells(table, checks, sample)
    words = None if exact_posterior is None else sample[1]
    no_joint_mode = any(b.unbounded is not None and b.unbounded.any() for b in fitted_blocks)
    if map_point is not None and no_joint_mode:
        render.hide_artefacts(table)
    # Identities between the variables of each draw need every variable's draws.
    draw_identities = [] if exact_posterior is not None else model_family.draw_identities(posterior)
    identity_ok, identity_ratio = draw_identity_agreement(table, draw_identities)
    # Statistics of whole draws need every variable's draws too.
    statistics = (
        []
        if exact_posterior is not None or latent_labels
        else model_family.joint_statistics(
            stats, posterior, alpha=alpha, class_alpha=class_alpha, options=options
        )
    )
    joint = joint_table(statistics + prediction_statistics(est, model_family, stats, words))

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
    warnings += render.joint_statistic_warnings(joint, z_threshold)
    identities = identity_table(checks, table, outcomes, draw_identities, joint)
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


def _map_status(map_point) -> tuple[str | None, bool | None, str]:
    """(method, converged, message) of ``est.map_``: None where there is no MAP or where
    convergence was not recorded (files from before it was)."""
    if map_point is None:
        return None, None, ""
    attrs = getattr(map_point, "attrs", {})
    converged = attrs.get("map_converged")
    converged = None if converged is None else bool(int(converged))
    return str(attrs.get("map_method", "find_MAP")), converged, str(attrs.get("map_message", ""))


def _map_agreement(table: pd.DataFrame, atol: float, rtol: float):
    expected, found = table["expected_map"].to_numpy(), table["map"].to_numpy()
    map_checked = np.isfinite(expected) & ~np.isnan(found)
    with np.errstate(invalid="ignore"):
        close = np.abs(found - expected) <= atol + rtol * np.abs(expected)
    return map_checked, ~map_checked | close


def _divergences(idata: xr.DataTree) -> int:
    if "sample_stats" not in idata.children:
        return 0
    stats = idata["sample_stats"]
    return int(stats["diverging"].values.sum()) if "diverging" in stats else 0


def _smoothing_asked(alpha, stats):
    """compare()'s ``alpha``: a number, or one λ per class (checked against the fit's
    classes)."""
    return check_class_smoothing(alpha, stats["class"].values, "alpha")


def _same_alpha(first, second) -> bool:
    """Whether two λ (numbers, arrays of one per class, or p(λ | D)) are the same."""
    if isinstance(first, hyperprior.AlphaPosterior) or isinstance(
        second, hyperprior.AlphaPosterior
    ):
        return first is second
    return np.shape(first) == np.shape(second) and bool(np.all(first == second))
