"""The deployment class probabilities π′ from unlabelled rows whose class likelihoods are fixed:
prior shift (Saerens, Latinne and Decaestecker, *Neural Computation* 14, 2002). NumPy and SciPy
only.

The model: π′ ~ Dirichlet(a); each unlabelled row has a latent class, y_i | π′ ~
Categorical(π′), and x_i | y_i = k the fixed likelihood exp(L[i, k]), so that
p(x_i | π′) = Σ_k π′_k exp(L[i, k]). ``L`` may be known up to a constant per row (a row's
constant cancels from every quantity here except the evidence, and from the evidence *ratio*).

- :func:`prior_shift_em`: the posterior mode by EM, Saerens' EM with the Dirichlet prior's
  pseudo-counts a − 1 added in the M-step; it records the log posterior, which EM never lowers.
- :func:`prior_shift_gibbs`: posterior draws by data augmentation, z_i | π′ ~
  Categorical(π′_k exp(L[i, k]) normalised), π′ | z ~ Dirichlet(a + counts of z), several
  chains at once.
- :func:`prior_shift_log_bayes_factor`: log p(X | π′ ~ Dirichlet(a)) − log p(X | π′ = π₀), the
  evidence of "the prior has shifted" against "it is π₀". The second term is exact (a sum of
  log-sum-exps); the first is an integral over the simplex, estimated by *defensive importance
  sampling* (Hesterberg, *Technometrics* 37, 1995): a Dirichlet proposal matched to the Gibbs
  draws' moments and widened, mixed with the prior so that the importance weights stay bounded.
  Its Monte Carlo error is returned with it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln, logsumexp, xlogy

__all__ = [
    "PriorShiftDraws",
    "PriorShiftMode",
    "check_class_log_likelihood",
    "check_concentration",
    "dirichlet_log_density",
    "prior_shift_em",
    "prior_shift_gibbs",
    "prior_shift_log_bayes_factor",
    "prior_shift_log_likelihood",
    "prior_shift_log_posterior",
    "reweighted_proba",
]

#: Values of one block of (sample, row, class) work arrays: the memory bound of the loops below.
_BLOCK_VALUES = 4_000_000

#: The share of the importance proposal drawn from the prior (the defensive component).
_DEFENSIVE_SHARE = 0.1


@dataclass(frozen=True)
class PriorShiftMode:
    """The result of :func:`prior_shift_em`.

    Attributes
    ----------
    class_prob : ndarray of shape (n_classes,)
        The posterior mode of π′ (with a = 1, the maximum-likelihood estimate).
    log_posterior : ndarray of shape (n_iter + 1,)
        The unnormalised log posterior at the start and after each iteration.
    n_iter : int
    converged : bool
        Whether no probability moved by more than ``tol`` in the last iteration.
    """

    class_prob: np.ndarray
    log_posterior: np.ndarray
    n_iter: int
    converged: bool


@dataclass(frozen=True)
class PriorShiftDraws:
    """The result of :func:`prior_shift_gibbs`.

    Attributes
    ----------
    class_prob : ndarray of shape (n_chains, n_draws, n_classes)
        Draws of π′ after the tuning sweeps.
    """

    class_prob: np.ndarray


def check_class_log_likelihood(log_likelihood, name: str = "log_likelihood") -> np.ndarray:
    """``log_likelihood`` as a float array of shape (n_rows, n_classes), n_rows >= 1 and
    n_classes >= 2, with no NaN or +inf and a finite entry in every row; else a ValueError
    naming ``name`` (and the first bad row).

    Examples
    --------
    >>> from bayesgen.maths.prior_shift import check_class_log_likelihood
    >>> check_class_log_likelihood([[0.0, -float("inf")]]).tolist()
    [[0.0, -inf]]
    >>> check_class_log_likelihood([[-float("inf"), -float("inf")]])
    Traceback (most recent call last):
        ...
    ValueError: log_likelihood: row 0 has no class with a finite log-likelihood.
    """
    values = np.asarray(log_likelihood, dtype=np.float64)
    if values.ndim != 2 or values.shape[0] < 1 or values.shape[1] < 2:
        raise ValueError(
            f"{name}: expected an array of shape (n_rows >= 1, n_classes >= 2); got shape "
            f"{values.shape}."
        )
    invalid = np.isnan(values) | (values == np.inf)
    if invalid.any():
        row = int(np.argwhere(invalid)[0][0])
        raise ValueError(f"{name}: row {row} holds NaN or +inf.")
    impossible = ~np.isfinite(values).any(axis=1)
    if impossible.any():
        row = int(np.flatnonzero(impossible)[0])
        raise ValueError(f"{name}: row {row} has no class with a finite log-likelihood.")
    return values


def check_concentration(prior, n_classes: int, name: str = "prior") -> np.ndarray:
    """The Dirichlet concentration a of shape (n_classes,) from a number (every class the
    same) or one finite number > 0 per class; else an error naming ``name``.

    Examples
    --------
    >>> from bayesgen.maths.prior_shift import check_concentration
    >>> check_concentration(1.0, 3).tolist()
    [1.0, 1.0, 1.0]
    >>> check_concentration(0.0, 2)
    Traceback (most recent call last):
        ...
    ValueError: prior: expected a Dirichlet concentration, a number > 0 or 2 of them; got 0.0.
    """
    expected = f"{name}: expected a Dirichlet concentration, a number > 0 or {n_classes} of them"
    if isinstance(prior, (str, bytes, bool)):
        raise TypeError(f"{expected}; got {prior!r}.")
    try:
        values = np.asarray(prior, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{expected}; got {prior!r}.") from None
    values = np.broadcast_to(values, (n_classes,)) if values.ndim == 0 else values
    if values.shape != (n_classes,) or not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise ValueError(f"{expected}; got {prior!r}.")
    return values.astype(np.float64)


def prior_shift_log_likelihood(class_prob, log_likelihood) -> np.ndarray:
    """log p(X | π′) = Σ_i log Σ_k π′_k exp(L[i, k]) for π′ of shape (..., n_classes).

    Returns an array of shape (...). Each row's L is shifted by its largest entry, so the sum
    over classes is a matrix product (a row whose best classes all have π′_k = 0 gives -inf).
    """
    class_prob = np.asarray(class_prob, dtype=np.float64)
    batch = class_prob.shape[:-1]
    flat = class_prob.reshape(-1, class_prob.shape[-1])
    likelihood, row_max = _scaled_likelihood(log_likelihood)
    out = np.empty(flat.shape[0])
    step = max(1, _BLOCK_VALUES // likelihood.shape[0])
    for start in range(0, flat.shape[0], step):
        with np.errstate(divide="ignore"):
            log_mixture = np.log(flat[start : start + step] @ likelihood.T)
        out[start : start + step] = log_mixture.sum(axis=1)
    return out.reshape(batch) + row_max.sum()


def _scaled_likelihood(log_likelihood: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """exp(L − row max) and the row maxima: L as likelihoods without overflow or a row of 0s."""
    row_max = log_likelihood.max(axis=1)
    return np.exp(log_likelihood - row_max[:, None]), row_max


def prior_shift_log_posterior(class_prob, log_likelihood, concentration) -> np.ndarray:
    """The unnormalised log posterior log p(X | π′) + Σ_k (a_k − 1) log π′_k."""
    class_prob = np.asarray(class_prob, dtype=np.float64)
    log_prior = xlogy(np.asarray(concentration) - 1.0, class_prob).sum(axis=-1)
    return prior_shift_log_likelihood(class_prob, log_likelihood) + log_prior


def dirichlet_log_density(x, concentration) -> np.ndarray:
    """log Dirichlet(x; concentration), broadcast over leading axes of both (SciPy's
    ``dirichlet.logpdf`` takes one concentration at a time)."""
    x = np.asarray(x, dtype=np.float64)
    concentration = np.asarray(concentration, dtype=np.float64)
    normaliser = gammaln(concentration.sum(axis=-1)) - gammaln(concentration).sum(axis=-1)
    return normaliser + xlogy(concentration - 1.0, x).sum(axis=-1)


def prior_shift_em(
    log_likelihood,
    concentration,
    *,
    start=None,
    tol: float = 1e-10,
    max_iter: int = 10_000,
) -> PriorShiftMode:
    """The posterior mode of π′ by EM (Saerens et al. 2002, with a Dirichlet prior).

    E-step: the responsibilities r_ik ∝ π′_k exp(L[i, k]). M-step: π′_k ∝ Σ_i r_ik + a_k − 1,
    the mode of the Dirichlet(a + Σ_i r_i) the complete-data posterior would be. Each step
    raises the log posterior (or leaves it), as EM must.

    Parameters
    ----------
    log_likelihood : array-like of shape (n_rows, n_classes)
        L[i, k] = log p(x_i | y = k) + a constant per row.
    concentration : array-like of shape (n_classes,)
        The prior's a, every a_k >= 1: with some a_k < 1 the posterior density grows without
        bound towards π′_k = 0 and has no mode.
    start : array-like of shape (n_classes,), optional
        The starting π′ (Saerens: the training class probabilities); default uniform.
    tol : float, default 1e-10
        Stop when no probability moves by more than this.
    max_iter : int, default 10,000

    Returns
    -------
    PriorShiftMode

    Examples
    --------
    Two rows certainly of class 0 and one of class 1, a flat prior: the mode is the MLE 2/3.

    >>> import numpy as np
    >>> from bayesgen.maths.prior_shift import prior_shift_em
    >>> L = np.where(np.eye(2)[[0, 0, 1]] == 1, 0.0, -np.inf)  # log of one-hot rows
    >>> prior_shift_em(L, np.ones(2)).class_prob.round(3).tolist()
    [0.667, 0.333]
    """
    log_likelihood = check_class_log_likelihood(log_likelihood)
    n_classes = log_likelihood.shape[1]
    concentration = check_concentration(concentration, n_classes, "concentration")
    if np.any(concentration < 1):
        raise ValueError(
            "concentration: the posterior has no mode when some a_k < 1 (its density grows "
            "without bound towards π′_k = 0); use the Gibbs draws instead."
        )
    class_prob = np.full(n_classes, 1.0 / n_classes) if start is None else np.asarray(start)
    class_prob = np.asarray(class_prob, dtype=np.float64) / np.sum(class_prob)
    trace = [float(prior_shift_log_posterior(class_prob, log_likelihood, concentration))]
    converged, n_iter = False, 0
    pseudo_counts = concentration - 1.0
    likelihood, _ = _scaled_likelihood(log_likelihood)
    while n_iter < max_iter and not converged:
        weights = likelihood * class_prob
        responsibility = weights / weights.sum(axis=1, keepdims=True)
        expected_count = responsibility.sum(axis=0) + pseudo_counts
        updated = expected_count / expected_count.sum()
        converged = bool(np.max(np.abs(updated - class_prob)) <= tol)
        class_prob, n_iter = updated, n_iter + 1
        trace.append(float(prior_shift_log_posterior(class_prob, log_likelihood, concentration)))
    return PriorShiftMode(class_prob, np.asarray(trace), n_iter, converged)


def prior_shift_gibbs(
    log_likelihood,
    concentration,
    *,
    rng: np.random.Generator,
    chains: int = 4,
    draws: int = 2000,
    tune: int = 500,
) -> PriorShiftDraws:
    """Posterior draws of π′ by data augmentation, all chains in one array.

    Each sweep draws every latent label z_i | π′ ~ Categorical(π′_k exp(L[i, k]) normalised),
    then π′ | z ~ Dirichlet(a + counts of z). The chains start at independent draws from the
    prior, so that R-hat can see a chain that has not forgotten its start; the first ``tune``
    sweeps are dropped.

    Parameters
    ----------
    log_likelihood : array-like of shape (n_rows, n_classes)
    concentration : array-like of shape (n_classes,)
        The prior's a (any a_k > 0).
    rng : numpy.random.Generator
    chains, draws, tune : int

    Returns
    -------
    PriorShiftDraws

    Examples
    --------
    When every row's class is certain the posterior is Dirichlet(a + counts) exactly:

    >>> import numpy as np
    >>> from bayesgen.maths.prior_shift import prior_shift_gibbs
    >>> L = np.where(np.eye(2)[[0, 0, 0, 1]] == 1, 0.0, -np.inf)
    >>> result = prior_shift_gibbs(L, np.ones(2), rng=np.random.default_rng(0), draws=4000)
    >>> round(float(result.class_prob[..., 0].mean()), 2)  # Beta(4, 2): 4 / 6
    0.67
    """
    log_likelihood = check_class_log_likelihood(log_likelihood)
    n_rows, n_classes = log_likelihood.shape
    concentration = check_concentration(concentration, n_classes, "concentration")
    # exp(L - row max) once: each sweep then only multiplies by π′ (no exp, no log).
    likelihood, _ = _scaled_likelihood(log_likelihood)
    tiny = np.finfo(np.float64).tiny
    class_prob = _dirichlet_rows(rng, np.broadcast_to(concentration, (chains, n_classes)))
    out_prob = np.empty((chains, draws, n_classes))
    # Chain c's labels are counted in bins c K ... c K + K − 1 of one bincount.
    chain_offset = (np.arange(chains) * n_classes)[:, None]
    for sweep in range(tune + draws):
        # A π′_k that underflowed to 0 (tiny a) must not leave a row with no class at all.
        weights = likelihood[None] * np.maximum(class_prob, tiny)[:, None, :]
        cumulative = np.cumsum(weights, axis=2)
        threshold = rng.random((chains, n_rows, 1)) * cumulative[:, :, -1:]
        labels = (threshold >= cumulative).sum(axis=2)  # the first class whose cumsum exceeds u
        count = np.bincount((labels + chain_offset).ravel(), minlength=chains * n_classes)
        count = count.reshape(chains, n_classes).astype(np.float64)
        class_prob = _dirichlet_rows(rng, concentration + count)
        if sweep >= tune:
            out_prob[:, sweep - tune] = class_prob
    return PriorShiftDraws(out_prob)


def _dirichlet_rows(rng: np.random.Generator, concentration: np.ndarray) -> np.ndarray:
    """One Dirichlet draw per row of ``concentration`` (normalised Gamma variates)."""
    gamma = rng.standard_gamma(concentration)
    # Every variate of a tiny concentration may underflow to 0: then 0s, not 0 / 0.
    total = np.maximum(gamma.sum(axis=-1, keepdims=True), np.finfo(np.float64).tiny)
    return gamma / total


def prior_shift_log_bayes_factor(
    log_likelihood,
    concentration,
    null_class_prob,
    class_prob_draws,
    *,
    rng: np.random.Generator,
    n_samples: int = 4000,
) -> tuple[float, float]:
    """log p(X | π′ ~ Dirichlet(a)) − log p(X | π′ = π₀) and its Monte Carlo standard error.

    Positive values favour a shift. The first evidence is estimated by defensive importance
    sampling: the proposal is, with probability 0.9, a Dirichlet with the mean of the posterior
    draws and half their concentration (about twice their variance), and with probability 0.1
    the prior itself, which bounds the importance weights by max p(X | π′) / (0.1 p(X)). The
    standard error is the delta method's, sd(w) / (mean(w) √S).

    Parameters
    ----------
    log_likelihood : array-like of shape (n_rows, n_classes)
    concentration : array-like of shape (n_classes,)
    null_class_prob : array-like of shape (n_classes,)
        π₀, the class probabilities of "no shift".
    class_prob_draws : array-like of shape (..., n_classes)
        Posterior draws of π′ (:func:`prior_shift_gibbs`), which shape the proposal.
    rng : numpy.random.Generator
    n_samples : int, default 4000
        Importance samples S.

    Returns
    -------
    log_bayes_factor, mcse : float
    """
    log_likelihood = check_class_log_likelihood(log_likelihood)
    n_classes = log_likelihood.shape[1]
    concentration = check_concentration(concentration, n_classes, "concentration")
    proposal = _proposal_concentration(np.asarray(class_prob_draws).reshape(-1, n_classes))
    from_prior = rng.random(n_samples) < _DEFENSIVE_SHARE
    samples = _dirichlet_rows(
        rng, np.where(from_prior[:, None], concentration[None], proposal[None])
    )
    samples = np.maximum(samples, np.finfo(np.float64).tiny)  # a zero would give log 0 below
    samples /= samples.sum(axis=1, keepdims=True)
    log_prior = dirichlet_log_density(samples, concentration)
    log_proposal = np.logaddexp(
        np.log1p(-_DEFENSIVE_SHARE) + dirichlet_log_density(samples, proposal),
        np.log(_DEFENSIVE_SHARE) + log_prior,
    )
    log_weight = prior_shift_log_likelihood(samples, log_likelihood) + log_prior - log_proposal
    log_evidence = logsumexp(log_weight) - np.log(n_samples)
    relative = np.exp(log_weight - logsumexp(log_weight)) * n_samples  # w / mean(w)
    mcse = float(np.std(relative, ddof=1) / np.sqrt(n_samples))
    log_null = prior_shift_log_likelihood(np.asarray(null_class_prob, float), log_likelihood)
    return float(log_evidence - log_null), mcse


def _proposal_concentration(draws: np.ndarray) -> np.ndarray:
    """A Dirichlet with the draws' mean and about twice their variance.

    A Dirichlet(s m) has var_k = m_k (1 − m_k) / (s + 1); the smallest s the classes suggest
    (the widest) is halved.
    """
    mean = draws.mean(axis=0)
    variance = draws.var(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        strength = mean * (1.0 - mean) / variance - 1.0
    strength = strength[np.isfinite(strength) & (strength > 0)]
    total = 0.5 * strength.min() if strength.size else 1.0
    return np.maximum(mean * total, 1e-3)


def reweighted_proba(log_likelihood, class_prob_draws, probs) -> tuple[np.ndarray, np.ndarray]:
    """p(y = k | x_i, π′) ∝ π′_k exp(L[i, k]) averaged over draws of π′, and its quantiles.

    Parameters
    ----------
    log_likelihood : array-like of shape (n_rows, n_classes)
    class_prob_draws : array-like of shape (n_draws, n_classes)
    probs : sequence of float
        The quantiles wanted (e.g. an interval's two tails).

    Returns
    -------
    mean : ndarray of shape (n_rows, n_classes)
    quantiles : ndarray of shape (len(probs), n_rows, n_classes)
    """
    log_likelihood = check_class_log_likelihood(log_likelihood)
    draws = np.asarray(class_prob_draws, dtype=np.float64)
    n_rows, n_classes = log_likelihood.shape
    likelihood, _ = _scaled_likelihood(log_likelihood)
    mean = np.empty((n_rows, n_classes))
    quantiles = np.empty((len(probs), n_rows, n_classes))
    step = max(1, _BLOCK_VALUES // (draws.size))
    for start in range(0, n_rows, step):
        rows = slice(start, start + step)
        weights = likelihood[None, rows] * draws[:, None, :]
        proba = weights / weights.sum(axis=2, keepdims=True)
        mean[rows] = proba.mean(axis=0)
        quantiles[:, rows] = np.quantile(proba, probs, axis=0)
    return mean, quantiles
