"""What each posterior summary must equal: the shared pieces behind :func:`bayesgen.compare`.

One :class:`Expected` per variable holds, in the variable's full shape, the closed-form
posterior mean and SD, the MLE, the closed-form mode, and why any of them is missing. Each
model family builds the blocks of its own variables
(:meth:`bayesgen.families.Family.expected`); this module holds what they share: the class
probabilities' block (every model has π ~ Dirichlet(a)), the Dirichlet and Beta moments and
modes, the identities' wording and the reasons a comparison is missing.

* Dirichlet(a) (Beta(a, b) alike): mean a_i / a₀, SD √(a_i (a₀ − a_i) / (a₀² (a₀ + 1))),
  mode (a_i − 1) / (a₀ − K).

A Monte Carlo error needs one moment more than the value it is the error of: the mean's MCSE
needs a finite variance and the SD's a finite fourth moment, so a family makes a check only
where those exist (see :mod:`bayesgen.families.gda_checks` for the normal-inverse-Wishart
case).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import xarray as xr

from bayesgen.maths.dirichlet import (
    MODE_FLAT,
    NO_MODE_HERE,
    NO_MODE_OTHER,
    add_lambda,
    simplex_mode,
)

# Why a comparison is missing. Each row's ``reason`` joins the ones that apply.
NO_MODE = (
    "boundary: no interior mode (n + α < 1 for this outcome, a zero count with α < 1: the "
    "density is unbounded at 0), so no MAP exists to compare with"
)
NO_MODE_ELSEWHERE = (
    "boundary: no interior mode (another outcome of this simplex has n + α < 1, where the "
    "density is unbounded), so no MAP exists to compare with"
)
NO_MODE_BETA = (
    "boundary: no interior mode (Beta(n + α, N_k − n + α) has a parameter < 1: a count of 0 "
    "or N_k with α < 1, so the density is unbounded at 0 or 1), so no MAP exists to compare with"
)
FLAT = (
    "flat: every outcome has n + α = 1, so every point of the simplex is a mode; find_MAP's "
    "value is arbitrary and is not shown"
)
LKJ = "no closed form: the LKJ covariance prior is not conjugate"
BARTLETT = (
    "MAP not compared: find_MAP's mode is that of the Bartlett variables (χ² and normal "
    "factors of Σ⁻¹), which is not the mode of Σ"
)
LKJ_MAP = "MAP not compared: under the LKJ prior the mode has no closed form"
NONLINEAR_MAP = "MAP not compared: no closed-form mode for the linear form"
NO_COV_MEAN = "no closed form: E[Σ] does not exist for ν_N ≤ D + 1"
NO_COV_MCSE = (
    "mean not compared: E[Σ] exists but its Monte Carlo error does not (Var(Σ) needs ν_N > D + 3)"
)
NO_COV_SD = "SD not compared: its Monte Carlo error needs a finite fourth moment, ν_N > D + 7"
NO_MU_SD = "SD not compared: its Monte Carlo error needs a finite fourth moment, ν_N > D + 3"
NO_INTERCEPT_SD = "SD not compared: the spread of the intercept has no closed form here"


@dataclass
class Expected:
    """One variable's expected values, in its full shape, and which of its scalars get a row.

    Examples
    --------
    :func:`class_expected` makes one for the class probabilities:

    >>> from bayesgen import closed_form
    >>> from bayesgen.families.expected import class_expected
    >>> est = closed_form.multinomial_nb([[1, 0], [0, 1], [1, 1]], [0, 1, 1])
    >>> expected = class_expected(est, class_alpha=1.0)
    >>> expected.variable, expected.prior, expected.closed_form.round(3).tolist()
    ('class_prob', 'Dirichlet(1)', [0.4, 0.6])
    """

    variable: str
    keep: np.ndarray  # boolean, the variable's shape
    closed_form: np.ndarray
    closed_form_sd: np.ndarray
    mle: np.ndarray
    expected_map: np.ndarray
    reasons: tuple  # object arrays of str, "" where that comparison exists (mean, sd, map)
    hide_map: np.ndarray  # boolean: the optimizer's value is an artefact (no mode exists)
    prior: str
    mean_identity: str | None
    sd_identity: str | None
    map_identity: str | None
    # Where the density is unbounded (n + α < 1 in the simplex): no mode exists, not even a
    # joint one for the whole model.
    unbounded: np.ndarray | None = None
    # The marginal's fourth standardised moment E[(θ − μ)⁴] / σ⁴ where it has a closed form
    # (NaN or None elsewhere): the SD check's Monte Carlo error is then that of a correct
    # posterior, not one estimated from the draws' own (noisy, skewed) fourth moment.
    closed_form_kurtosis: np.ndarray | None = None


def dirichlet_sd(concentration, *, axis: int = -1) -> np.ndarray:
    """Marginal SDs of Dirichlet(a) along ``axis``: √(a_i (a₀ − a_i) / (a₀² (a₀ + 1)))."""
    a = np.asarray(concentration, dtype=np.float64)
    total = a.sum(axis=axis, keepdims=True)
    return np.sqrt(a * (total - a) / (total**2 * (total + 1.0)))


def dirichlet_kurtosis(concentration, *, axis: int = -1) -> np.ndarray:
    """Kurtosis E[(θ_i − μ_i)⁴] / σ_i⁴ of the Beta(a_i, a₀ − a_i) marginals of Dirichlet(a).

    3 + 6 [(a − b)² (a + b + 1) − a b (a + b + 2)] / [a b (a + b + 2)(a + b + 3)] with a = a_i,
    b = a₀ − a_i.
    """
    a = np.asarray(concentration, dtype=np.float64)
    b = a.sum(axis=axis, keepdims=True) - a
    total = a + b
    with np.errstate(divide="ignore", invalid="ignore"):
        excess = (
            6.0
            * ((a - b) ** 2 * (total + 1.0) - a * b * (total + 2.0))
            / (a * b * (total + 2.0) * (total + 3.0))
        )
    return 3.0 + excess


def class_expected(stats: xr.Dataset, class_alpha: float) -> Expected:
    """The class probabilities' Dirichlet(N_k + class_alpha) posterior.

    Examples
    --------
    Three rows, one of class 0: the posterior is Dirichlet(1 + 1, 2 + 1).

    >>> from bayesgen import closed_form
    >>> from bayesgen.families.expected import class_expected
    >>> est = closed_form.multinomial_nb([[1, 0], [0, 1], [1, 1]], [0, 1, 1])
    >>> expected = class_expected(est, class_alpha=1.0)
    >>> expected.closed_form.round(3).tolist(), expected.expected_map.round(3).tolist()
    ([0.4, 0.6], [0.333, 0.667])
    >>> expected.closed_form_sd.round(3).tolist()
    [0.2, 0.2]
    """
    count = stats["class_count"].values.astype(np.float64)
    mode, status = simplex_mode(count, class_alpha)
    return simplex_block(
        "class_prob",
        alpha=class_alpha,
        keep=np.ones(count.shape, dtype=bool),
        closed_form=add_lambda(count, count.sum(), class_alpha, count.size),
        closed_form_sd=dirichlet_sd(count + class_alpha),
        closed_form_kurtosis=dirichlet_kurtosis(count + class_alpha),
        mle=stats["class_prob_mle"].values.astype(np.float64),
        expected_map=mode,
        status=status,
    )


def simplex_block(
    variable: str,
    *,
    alpha: float,
    keep: np.ndarray,
    closed_form: np.ndarray,
    closed_form_sd: np.ndarray,
    closed_form_kurtosis: np.ndarray,
    mle: np.ndarray,
    expected_map: np.ndarray,
    status: np.ndarray,
    beta: bool = False,
    shared_mean: bool = False,
) -> Expected:
    """The :class:`Expected` of a variable with a Dirichlet(n + α) posterior (with ``beta``, a
    Beta(n + α, N − n + α) one): identities, prior and reasons follow from ``alpha`` and the
    mode ``status`` of :func:`simplex_mode`. ``shared_mean``: the prior is Dirichlet(λ O m)
    (Beta(2λ m, 2λ (1 − m))) of a shared mean m, λ = ``alpha``, not the symmetric one.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.families.expected import simplex_block, simplex_mode
    >>> from bayesgen.closed_form import add_lambda
    >>> counts = np.array([2.0, 0.0, 1.0])
    >>> mode, status = simplex_mode(counts, 1.0)
    >>> block = simplex_block(
    ...     "feature_prob", alpha=1.0, keep=np.ones(3, dtype=bool),
    ...     closed_form=add_lambda(counts, 3, 1.0, 3), closed_form_sd=np.zeros(3),
    ...     closed_form_kurtosis=np.zeros(3), mle=counts / 3, expected_map=mode, status=status,
    ... )
    >>> block.prior, block.closed_form.round(3).tolist()
    ('Dirichlet(1)', [0.5, 0.167, 0.333])
    """
    shape = np.shape(closed_form)
    prior_family = "Beta" if beta else "Dirichlet"
    return Expected(
        variable=variable,
        keep=keep,
        closed_form=closed_form,
        closed_form_sd=closed_form_sd,
        closed_form_kurtosis=closed_form_kurtosis,
        mle=mle,
        expected_map=expected_map,
        reasons=(
            reason_array(shape),
            reason_array(shape),
            status_reasons(status, NO_MODE_BETA if beta else NO_MODE),
        ),
        hide_map=status >= NO_MODE_HERE,
        prior=_simplex_prior(alpha, beta=beta, shared_mean=shared_mean),
        mean_identity=mean_identity(prior_family),
        sd_identity=sd_identity(prior_family),
        map_identity=(
            f"MAP under {_simplex_prior(alpha, beta=beta, shared_mean=True)} = "
            "(n + λ O m − 1) / (N + Σ (λ O m − 1))"
            if shared_mean
            else map_identity(prior_family, alpha)
        ),
        unbounded=is_unbounded(status),
    )


def _simplex_prior(alpha, *, beta: bool, shared_mean: bool) -> str:
    """The prior of a Dirichlet/Beta block, as the comparison table names it."""
    if np.ndim(alpha) > 0:  # one λ per class
        lam = f"λ_k = ({', '.join(f'{value:g}' for value in np.ravel(alpha))})"
        if shared_mean:
            return f"Beta(2λ_k m, 2λ_k (1 − m)), {lam}" if beta else f"Dirichlet(λ_k O m), {lam}"
        return f"Beta(λ_k, λ_k), {lam}" if beta else f"Dirichlet(λ_k), {lam}"
    if shared_mean:
        return (
            f"Beta(2λ m, 2λ (1 − m)), λ = {alpha:g}" if beta else f"Dirichlet(λ O m), λ = {alpha:g}"
        )
    return f"Beta({alpha:g}, {alpha:g})" if beta else f"Dirichlet({alpha:g})"


def is_unbounded(status: np.ndarray) -> np.ndarray:
    """Where the density is unbounded (this or another outcome of the simplex has n + α < 1)."""
    return (status == NO_MODE_HERE) | (status == NO_MODE_OTHER)


def status_reasons(status: np.ndarray, no_mode_here: str) -> np.ndarray:
    """The MAP's reason per outcome from the :func:`simplex_mode` status; ``no_mode_here`` is
    :data:`NO_MODE` for a Dirichlet, :data:`NO_MODE_BETA` for a Beta."""
    reasons = reason_array(status.shape)
    other = NO_MODE_BETA if no_mode_here == NO_MODE_BETA else NO_MODE_ELSEWHERE
    reasons[status == NO_MODE_HERE] = no_mode_here
    reasons[status == NO_MODE_OTHER] = other
    reasons[status == MODE_FLAT] = FLAT
    return reasons


def reason_array(shape, text: str = "") -> np.ndarray:
    """An object array of ``shape`` filled with ``text`` ("": the comparison is made)."""
    return np.full(shape, text, dtype=object)


def mean_identity(prior_family: str) -> str:
    """The posterior-mean identity of a ``"Dirichlet"`` or ``"Beta"`` prior."""
    prior = "Beta(λ, λ)" if prior_family == "Beta" else "Dirichlet(λ)"
    return f"posterior mean under {prior} = add-λ"


def sd_identity(prior_family: str) -> str:
    """The posterior-SD identity of a ``"Dirichlet"`` or ``"Beta"`` prior."""
    return f"posterior SD under {prior_family}(a) = √(a_i (a₀ − a_i) / (a₀² (a₀ + 1)))"


def map_identity(prior_family: str, alpha: float) -> str:
    """The MAP identity of a ``"Dirichlet"`` or ``"Beta"`` prior with concentration ``alpha``."""

    def prior(a: str) -> str:
        return f"Beta({a}, {a})" if prior_family == "Beta" else f"Dirichlet({a})"

    if np.ndim(alpha) > 0:  # one λ per class: the general identity, with α = λ_k
        n_outcomes = "2" if prior_family == "Beta" else "K"
        return f"MAP under {prior('λ_k')} = (n + λ_k − 1) / (N + {n_outcomes}(λ_k − 1))"
    if alpha == 1:
        return f"MAP under {prior('1')} = MLE"
    if alpha > 1:
        return f"MAP under {prior('λ + 1')} = add-λ"
    n_outcomes = "2" if prior_family == "Beta" else "K"
    return f"MAP under {prior('α')} = (n + α − 1) / (N + {n_outcomes}(α − 1))"


#: Why a semi-supervised Gibbs fit's moments are not compared (see :func:`without_moments`).
LATENT_LABELS = (
    "not compared: the unlabelled rows' classes are latent (drawn or summed out); the posterior "
    "has no closed form"
)


def without_moments(expected: Expected, reason: str = LATENT_LABELS) -> Expected:
    """``expected`` with no closed-form mean or SD (for a posterior that has none, such as
    a semi-supervised fit's, whose unlabelled rows' classes are latent), ``reason`` given for
    the mean; the mode stays where ``expected`` has it (EM's MAP is the conjugate mode at its
    completed expected statistics).

    Examples
    --------
    >>> from bayesgen import closed_form
    >>> from bayesgen.families.expected import class_expected, without_moments
    >>> est = closed_form.multinomial_nb([[1, 0], [0, 1], [1, 1]], [0, 1, 1])
    >>> block = without_moments(class_expected(est, class_alpha=1.0))
    >>> block.closed_form.tolist(), block.expected_map.round(2).tolist()
    ([nan, nan], [0.33, 0.67])
    """
    shape = np.shape(expected.closed_form)
    nan = np.full(shape, np.nan)
    return dataclasses.replace(
        expected,
        closed_form=nan,
        closed_form_sd=nan,
        closed_form_kurtosis=None,
        reasons=(
            reason_array(shape, reason),
            reason_array(shape, "SD not compared either"),
            expected.reasons[2],
        ),
        mean_identity=None,
        sd_identity=None,
    )
