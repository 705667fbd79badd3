"""Pareto-smoothed importance sampling leave-one-out (PSIS-LOO) over many rows at once.

ArviZ's algorithm (``arviz_stats``: Vehtari, Gelman and Gabry 2017; Vehtari et al. 2024),
vectorised over the rows. ArviZ smooths each row's weights in a Python loop, and ``az.loo``
does so twice (once for the weights, once more for each row's elpd). Every row has the same
number of draws and the same relative efficiency, so every row's tail has the same length,
and the selection of the tail, the generalised Pareto fit and the smoothing run as array
operations over all rows together. The tests check the numbers against ArviZ's; the speed-up
is measured in docs/performance.md.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from bayesgen.maths.likelihood import log_sum_exp

#: The generalised Pareto fit's prior (Zhang and Stephens 2009, with the weakly informative
#: prior on k centred at 0.5 of Vehtari et al. 2024), as ArviZ sets it.
_PRIOR_B = 3
_PRIOR_K = 10


def tail_length(n_draws: int, r_eff: float) -> int:
    """Draws in the tail that PSIS fits a generalised Pareto distribution to.

    ``3 √(S / r_eff)`` for ``S · r_eff > 225``, else ``S / 5``, rounded down (ArviZ's rule
    for one tail).

    Examples
    --------
    >>> from bayesgen.maths.psis import tail_length
    >>> tail_length(4000, 1.0), tail_length(4000, 2.0), tail_length(100, 1.0)
    (189, 134, 20)
    """
    if n_draws * r_eff > 225:
        return int(np.floor(3 * (n_draws / r_eff) ** 0.5))
    return int(np.floor(n_draws / 5))


def psis_log_weights(log_ratios: np.ndarray, r_eff: float) -> tuple[np.ndarray, np.ndarray]:
    """Pareto-smoothed, normalised log importance weights of many rows at once.

    Parameters
    ----------
    log_ratios : ndarray of shape (n_rows, n_draws)
        Each row's log importance ratios; for leave-one-out, minus the row's log-likelihood
        in each posterior draw.
    r_eff : float
        Relative efficiency of the draws (ESS / number of draws), which sets the tail length
        (:func:`tail_length`).

    Returns
    -------
    log_weights : ndarray of shape (n_rows, n_draws)
        Each row's smoothed log weights, normalised so that their exponentials sum to 1.
    pareto_k : ndarray of shape (n_rows,)
        The fitted shape k of each row's tail: below 0.7 (lower with few draws) the weights
        are reliable. NaN where the tail is too short-tailed to fit, as in ArviZ.

    Raises
    ------
    ValueError
        Where fewer than 5 draws would be in the tail, or a row's tail values are all equal
        (ArviZ's errors).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.maths.psis import psis_log_weights
    >>> rng = np.random.default_rng(0)
    >>> log_ratios = rng.normal(size=(3, 1000))
    >>> log_weights, k = psis_log_weights(log_ratios, 1.0)
    >>> np.allclose(np.exp(log_weights).sum(axis=1), 1.0), bool((k < 0.7).all())
    (True, True)
    """
    log_ratios = np.asarray(log_ratios, dtype=np.float64)
    tails = _smoothed_tails(log_ratios - log_ratios.max(axis=1, keepdims=True), r_eff)
    return _normalised_weights(tails), tails.k


def psis_loo(log_lik: np.ndarray, r_eff: float):
    """PSIS leave-one-out of many rows at once: ``az.loo``'s pointwise numbers.

    Parameters
    ----------
    log_lik : ndarray of shape (n_rows, n_draws)
        Each row's log-likelihood in each posterior draw (chains flattened into draws).
    r_eff : float
        Relative efficiency of the draws, as for :func:`psis_log_weights`.

    Returns
    -------
    elpd_i : ndarray of shape (n_rows,)
        Each row's leave-one-out log predictive density, log Σ_s w_s p(row | θ_s).
    p_loo_i : ndarray of shape (n_rows,)
        Each row's effective number of parameters: its in-sample log predictive density
        (log of the mean likelihood over the draws) minus ``elpd_i``.
    pareto_k : ndarray of shape (n_rows,)
    log_weights : ndarray of shape (n_rows, n_draws)

    Examples
    --------
    With independent draws of a parameter a row barely depends on, leaving the row out
    changes little: ``elpd_i`` is close to the in-sample density and ``p_loo_i`` near 0.

    >>> import numpy as np
    >>> from bayesgen.maths.psis import psis_loo
    >>> theta = np.random.default_rng(1).normal(0.0, 0.05, size=2000)
    >>> log_lik = -0.5 * (np.array([[0.1], [-0.2]]) - theta) ** 2  # two rows
    >>> elpd_i, p_loo_i, k, _ = psis_loo(log_lik, 1.0)
    >>> bool((abs(p_loo_i) < 0.01).all()), bool((k < 0.5).all())
    (True, True)
    """
    log_lik = np.asarray(log_lik, dtype=np.float64)
    # The log ratios are −log p_s; shifted to a maximum of 0, min_s log p_s − log p_s.
    lowest = log_lik.min(axis=1)
    tails = _smoothed_tails(lowest[:, None] - log_lik, r_eff)
    log_weights = _normalised_weights(tails)
    # log w_s + log p_s is the same for every draw below the tail (the raw ratio is 1 / p_s):
    # min_s log p_s minus the weights' normaliser. Only the tail's terms differ.
    n_draws = log_lik.shape[1]
    body_term = lowest - tails.log_total
    tail_terms = log_weights[tails.rows, tails.index] + log_lik[tails.rows, tails.index]
    top = np.maximum(body_term, tail_terms.max(axis=1))
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore", over="ignore"):
        elpd_i = top + np.log(
            (n_draws - tails.index.shape[1]) * np.exp(body_term - top)
            + np.exp(tail_terms - top[:, None]).sum(axis=1)
        )
    lppd_i = log_sum_exp(log_lik)[:, 0] - np.log(n_draws)
    return elpd_i, lppd_i - elpd_i, tails.k, log_weights


def _normalised_weights(tails: _Tails) -> np.ndarray:
    """The smoothed log weights, normalised, written over ``tails.shifted``."""
    weights = tails.shifted
    weights[tails.rows, tails.index] = tails.smoothed
    weights -= tails.log_total[:, None]
    return weights


class _Tails(NamedTuple):
    """Each row's ratios shifted to a maximum of 0 (which :func:`_normalised_weights`
    overwrites with the weights), its tail and the tail smoothed."""

    shifted: np.ndarray  # (rows, draws): log ratios minus the row's largest
    rows: np.ndarray  # (rows, 1): row numbers, to index ``shifted`` with ``index``
    index: np.ndarray  # (rows, tail): the tail's draws, ascending in ratio
    smoothed: np.ndarray  # (rows, tail): the tail's log weights (its ratios where not fitted)
    k: np.ndarray  # (rows,)
    log_total: np.ndarray  # (rows,): log Σ of the smoothed weights, their normaliser


def _smoothed_tails(shifted: np.ndarray, r_eff: float) -> _Tails:
    """The tail of each row of log ratios ``shifted`` to a maximum of 0, smoothed by the
    generalised Pareto fit (ArviZ's ``_ps_tail``)."""
    n_rows, n_draws = shifted.shape
    n_tail = tail_length(n_draws, r_eff)
    if n_tail < 5:
        raise ValueError(f"PSIS needs at least 5 draws in the tail; {n_draws} draws give {n_tail}.")
    if n_tail >= n_draws:
        raise ValueError(f"PSIS needs more draws than its tail ({n_tail}); got {n_draws}.")
    # The tail and the largest draw below it, without sorting the rest (ArviZ sorts it all).
    cut = n_draws - n_tail - 1
    partition = np.argpartition(shifted, cut, axis=1)[:, cut:]
    rows = np.arange(n_rows)[:, None]
    values = shifted[rows, partition]
    log_cutoff = values[:, 0]
    order = np.argsort(values[:, 1:], axis=1)
    index = np.take_along_axis(partition[:, 1:], order, axis=1)
    log_tail = np.take_along_axis(values[:, 1:], order, axis=1)  # ascending
    max_tail, min_tail = log_tail[:, -1], log_tail[:, 0]
    if np.any(np.abs(max_tail - min_tail) < np.finfo(float).tiny):
        raise ValueError("All tail values are the same")
    cutoff = np.exp(log_cutoff)
    k, sigma = _gpd_fit(np.exp(log_tail) - cutoff[:, None])

    probabilities = np.arange(0.5, n_tail) / n_tail
    with np.errstate(all="ignore"):
        smoothed = np.log(_gpd_quantiles(probabilities, k, sigma, cutoff))
    smoothed = np.where(smoothed > max_tail[:, None], max_tail[:, None], smoothed)
    smoothed = np.where(np.isfinite(k)[:, None], smoothed, log_tail)

    # The normaliser: the draws below the tail as they are, the tail smoothed; shifted by the
    # largest of them so that no sum overflows or vanishes.
    top = np.maximum(log_cutoff, smoothed.max(axis=1))
    top = np.where(np.isfinite(top), top, 0.0)
    below = np.exp(shifted - top[:, None])
    below[rows, index] = 0.0
    with np.errstate(divide="ignore"):
        log_total = top + np.log(below.sum(axis=1) + np.exp(smoothed - top[:, None]).sum(axis=1))
    return _Tails(shifted, rows, index, smoothed, k, log_total)


def _gpd_fit(excess: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Empirical-Bayes shape k and scale σ of a generalised Pareto distribution for each
    row of ascending exceedances (Zhang and Stephens 2009; ArviZ's ``_gpdfit``), with the
    prior on k centred at 0.5; (NaN, NaN) where the first quartile is not above the minimum,
    (inf, NaN) where k is NaN."""
    n_rows, n = excess.shape
    m_est = 30 + int(n**0.5)
    first_quartile = excess[:, int((n / 4 + 0.5) - 1)]
    degenerate = first_quartile <= excess[:, 0]
    grid = 1 - np.sqrt(m_est / (np.arange(1, m_est + 1, dtype=float) - 0.5))
    # Tails too short to fit (a first quartile of 0, an infinite largest value) give
    # infinities and NaN here, as in ArviZ; they are the NaN and inf of k below.
    with np.errstate(all="ignore"):
        b = grid[None, :] / (_PRIOR_B * first_quartile[:, None]) + 1 / excess[:, -1:]
        k_grid = np.empty_like(b)
        # (rows, grid, tail) in blocks of rows, so that the temporary stays near 2**22 values.
        block = max(1, 2**22 // (m_est * n))
        for start in range(0, n_rows, block):
            rows = slice(start, start + block)
            k_grid[rows] = np.log1p(-b[rows, :, None] * excess[rows, None, :]).mean(axis=2)
        profile = n * (np.log(-b / k_grid) - k_grid - 1)
        weights = np.exp(profile - log_sum_exp(profile))
        # ArviZ drops grid points of negligible (or NaN) weight before normalising; where it
        # drops them all, the posterior mean of b is an empty sum, 0.
        kept = weights >= 10 * np.finfo(float).eps
        weights = np.where(kept, weights, 0.0)
        weights /= weights.sum(axis=1, keepdims=True)
        b_post = np.where(kept, b * weights, 0.0).sum(axis=1)
        k = np.log1p(-b_post[:, None] * excess).mean(axis=1)
        sigma = -k / b_post
    k = (n * k + _PRIOR_K * 0.5) / (n + _PRIOR_K)
    undefined = np.isnan(k)
    k, sigma = np.where(undefined, np.inf, k), np.where(undefined, np.nan, sigma)
    k = np.where(degenerate, np.nan, k)
    sigma = np.where(degenerate, np.nan, sigma)
    return k, sigma


def _gpd_quantiles(p: np.ndarray, k: np.ndarray, sigma: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """Quantiles ``p`` of generalised Pareto distributions, one row per (k, σ, μ); NaN where
    σ ≤ 0 (ArviZ's ``_gpinv``)."""
    k, sigma, mu = k[:, None], sigma[:, None], mu[:, None]
    log1p_p = np.log1p(-p)[None, :]
    safe_k = np.where(k == 0, 1.0, k)
    quantiles = np.where(
        k == 0,
        mu - sigma * log1p_p,
        mu + sigma * np.expm1(-safe_k * log1p_p) / safe_k,
    )
    return np.where(sigma <= 0, np.nan, quantiles)
