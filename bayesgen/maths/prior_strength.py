"""The strength of a conjugate prior chosen by the evidence (type-II maximum likelihood).

Two priors scaled to the data have hyperparameters that the data can choose: their marginal
likelihood, the parameters integrated out, is a closed form of the sufficient statistics, and
its maximiser is the empirical-Bayes prior.

Gaussian naive Bayes (:mod:`bayesgen.maths.normal_inverse_gamma`)
    σ²_kj ~ Inv-Gamma(a₀, b₀_j), μ_kj | σ²_kj ~ N(m₀_j, σ²_kj / κ₀), m₀_j the overall mean of
    feature j and b₀_j = a₀ r s²_j, s²_j its overall variance. :func:`normal_inverse_gamma_strength`
    maximises Σ_kj log p(x_·j of class k) over (κ₀, a₀, r): κ₀ is how strongly the class means
    pool towards m₀, a₀ how strongly the class variances pool (in 2 a₀ observations of the
    variance), and r where they pool to: the prior's harmonic-mean variance
    b₀ / a₀ = 1 / E[1 / σ²] is r s²_j. Parametrised so, the limit of equal variances
    (a₀ → ∞) keeps r finite.

Poisson naive Bayes (:mod:`bayesgen.maths.gamma_poisson`)
    λ_kj ~ Gamma(a, b), one prior for every rate. Integrating λ out, the total S_kj of feature j
    over the N_k rows of class k is negative binomial, with shape a and mean N_k a / b, so the
    evidence is that negative binomial's likelihood of the class totals (times the Poisson
    multinomial coefficients, which do not depend on (a, b)). :func:`gamma_poisson_strength`
    maximises it over the shape a (the pseudo-counts: how strongly the rates pool) and the
    prior mean m = a / b (where they pool to). Its maximiser in m is unique for each a, and
    a → ∞ is the limit of one rate for every class and feature.

The search is on the logs of the hyperparameters, within fixed bounds: the log evidence on a
coarse grid, then L-BFGS-B with the analytic gradient (digamma functions) from the grid's best
point, all deterministic. A hyperparameter the evidence drives to a bound of the search is
reported (:class:`EvidenceChoice`), for the caller to warn.

NumPy and SciPy only: the statistics in, the hyperparameters out, so that a fit merged from
chunks (``partial_fit``, Dask) chooses the same prior as one fit on all the rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize
from scipy.special import digamma, gammaln

__all__ = [
    "GAMMA_MEAN_BOUNDS",
    "GAMMA_SHAPE_BOUNDS",
    "KAPPA_BOUNDS",
    "SHAPE_BOUNDS",
    "VARIANCE_RATIO_BOUNDS",
    "EvidenceChoice",
    "describe_bounds",
    "gamma_poisson_evidence",
    "gamma_poisson_strength",
    "normal_inverse_gamma_evidence",
    "normal_inverse_gamma_strength",
]

#: κ₀ searched: from a millionth of a row (the class means as observed) to a million rows
#: (the class means all m₀, to within what most fits could tell).
KAPPA_BOUNDS = (1e-6, 1e6)
#: a₀ searched, from a prior of the variances as heavy-tailed as a hundredth of an observation
#: to one worth two million observations (every class's variance equal); the lower bound is
#: raised above 1 − N_k / 2 for every class, where the posterior mean of σ² exists.
SHAPE_BOUNDS = (1e-2, 1e6)
#: r = b₀ / (a₀ s²_j), the prior's harmonic-mean variance as a share of the overall variance.
VARIANCE_RATIO_BOUNDS = (1e-6, 1e6)
#: The Gamma prior's shape a: as for the naive Bayes λ (:mod:`bayesgen.inference.smoothing`).
GAMMA_SHAPE_BOUNDS = (1e-6, 1e6)
#: The Gamma prior's mean a / b, in units of the data's mean count per row and feature.
GAMMA_MEAN_BOUNDS = (1e-6, 1e6)

_LOG_2PI = np.log(2.0 * np.pi)
#: Grid points per decade-spanning axis of the coarse search (about two decades apart).
_GRID_POINTS = 7


@dataclass(frozen=True)
class EvidenceChoice:
    """The hyperparameters that maximise the evidence, and those at a bound of the search.

    Attributes
    ----------
    values : dict
        Each hyperparameter by name (``kappa``, ``shape``, ``variance_ratio``; or ``shape``,
        ``mean``).
    log_evidence : float
        The log evidence there.
    at_bound : tuple of (str, str)
        (name, "lower" or "upper") of each hyperparameter at a bound, where the evidence still
        increases beyond it.
    bounds : dict
        The range searched for each hyperparameter.
    """

    values: dict
    log_evidence: float
    at_bound: tuple = ()
    bounds: dict = field(default_factory=dict)


def describe_bounds(choice: EvidenceChoice, symbols: dict, meanings: dict) -> str:
    """What the hyperparameters at a bound of the search say, for a warning: one clause per
    hyperparameter, ``symbols[name]`` naming it and ``meanings[(name, side)]`` saying what
    the limit means; "" where none is at a bound.

    Examples
    --------
    >>> from bayesgen.maths.prior_strength import EvidenceChoice, describe_bounds
    >>> choice = EvidenceChoice({"shape": 1e6}, 0.0, (("shape", "upper"),), {"shape": (1, 1e6)})
    >>> describe_bounds(choice, {"shape": "a"}, {("shape", "upper"): "the rates are equal"})
    'a → ∞ (a = 1e+06, the bound of [1, 1e+06]): the rates are equal'
    """
    clauses = []
    for name, side in choice.at_bound:
        low, high = choice.bounds[name]
        limit = "0" if side == "lower" else "∞"
        symbol = symbols[name]
        clauses.append(
            f"{symbol} → {limit} ({symbol} = {choice.values[name]:g}, the bound of "
            f"[{low:g}, {high:g}]): {meanings[(name, side)]}"
        )
    return "; ".join(clauses)


# -- Gaussian naive Bayes: the normal–inverse-gamma prior ---------------------------------------


def normal_inverse_gamma_evidence(
    class_count, class_mean, sum_squares, prior_mean, data_variance, kappa, shape, ratio
) -> tuple[float, np.ndarray]:
    """Σ_kj log p(x_·j of class k | m₀, κ₀, a₀, b₀ = a₀ r s²) and its gradient in
    (log κ₀, log a₀, log r).

    Parameters
    ----------
    class_count : array-like of shape (n_classes,) or (n_classes, n_features)
        N_k (weighted), or with missing entries each cell's count n_kj of observed entries; a
        class (cell) without rows adds nothing.
    class_mean, sum_squares : array-like of shape (n_classes, n_features)
        x̄_kj and S_kj (over the cell's observed entries).
    prior_mean, data_variance : array-like of shape (n_features,)
        m₀_j and s²_j > 0.
    kappa, shape, ratio : float
        κ₀, a₀ and r > 0.

    Returns
    -------
    log_evidence : float
    gradient : numpy.ndarray of shape (3,)

    Examples
    --------
    One row x = 1 of one class, m₀ = 0, κ₀ = 1, a₀ = 1, b₀ = 1 (r = 1, s² = 1): the marginal of
    x is Student-t with 2 a₀ = 2 degrees of freedom, location 0 and scale
    √(b₀ (κ₀ + 1) / (a₀ κ₀)) = √2.

    >>> import numpy as np
    >>> from scipy import stats
    >>> from bayesgen.maths.prior_strength import normal_inverse_gamma_evidence
    >>> value, _ = normal_inverse_gamma_evidence(
    ...     [1.0], [[1.0]], [[0.0]], [0.0], [1.0], 1.0, 1.0, 1.0)
    >>> bool(np.isclose(value, stats.t.logpdf(1.0, 2, scale=np.sqrt(2.0))))
    True
    """
    n = _per_cell(class_count)
    squared_offset = np.square(np.asarray(class_mean, dtype=np.float64) - prior_mean)
    prior_scale = shape * ratio * np.asarray(data_variance, dtype=np.float64)  # b₀_j
    # Counts per class (K, 1) repeat over the features: their sums over the cells are the
    # sums over the classes times D. Cell counts (K, D) are summed cell by cell.
    repeats = squared_offset.shape[1] if n.shape[1] == 1 else 1
    kappa_n = kappa + n
    posterior_scale = (
        prior_scale + 0.5 * np.asarray(sum_squares) + 0.5 * kappa * n * squared_offset / kappa_n
    )
    shape_n = shape + 0.5 * n  # (K, 1) or (K, D)
    value = (
        -0.5 * _LOG_2PI * repeats * n.sum()
        + 0.5 * repeats * np.sum(np.log(kappa) - np.log(kappa_n))
        + np.sum(shape * np.log(prior_scale) - shape_n * np.log(posterior_scale))
        + repeats * np.sum(gammaln(shape_n) - gammaln(shape))
    )
    pull = shape_n / posterior_scale  # ∂(−a_n log B)/∂B, negated
    d_log_kappa = kappa * (
        0.5 * repeats * np.sum(1.0 / kappa - 1.0 / kappa_n)
        - np.sum(pull * 0.5 * np.square(n / kappa_n) * squared_offset)
    )
    # b₀ ∝ a₀ r: its own term, shared by both derivatives.
    d_scale = np.sum(shape - pull * prior_scale)
    d_log_shape = (
        shape
        * (
            np.sum(np.log(prior_scale) - np.log(posterior_scale))
            + repeats * np.sum(digamma(shape_n) - digamma(shape))
        )
        + d_scale
    )
    return float(value), np.array([d_log_kappa, d_log_shape, d_scale])


def normal_inverse_gamma_strength(
    class_count, class_mean, sum_squares, prior_mean, data_variance
) -> EvidenceChoice:
    """The (κ₀, a₀, r) that maximise the normal–inverse-gamma evidence of the statistics.

    Parameters
    ----------
    class_count, class_mean, sum_squares, prior_mean, data_variance
        As for :func:`normal_inverse_gamma_evidence`.

    Returns
    -------
    EvidenceChoice
        ``values``: ``kappa`` κ₀, ``shape`` a₀ and ``variance_ratio`` r, so that
        b₀_j = a₀ r s²_j.

    Examples
    --------
    Eight classes whose true means differ by far more than the rows' noise: the evidence
    leaves the class means nearly alone (κ₀ a small fraction of a row).

    >>> import numpy as np
    >>> from bayesgen.maths.normal_inverse_gamma import class_moments, overall_moments
    >>> from bayesgen.maths.prior_strength import normal_inverse_gamma_strength
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat(np.arange(8), 20)
    >>> X = rng.normal(10.0 * rng.normal(size=(8, 3))[y], 1.0)
    >>> count, mean, squares = class_moments(X, y, 8)
    >>> choice = normal_inverse_gamma_strength(
    ...     count, mean, squares, *overall_moments(count, mean, squares))
    >>> bool(choice.values["kappa"] < 0.05), choice.at_bound
    (True, ())
    """
    count = np.asarray(class_count, dtype=np.float64)
    seen = count[count > 0]
    shape_low = SHAPE_BOUNDS[0]
    if seen.size < count.size or np.any(seen <= 2.0):
        # E[σ²] = b_n / (a_n − 1) must exist for every class (cell), an empty one (a_n = a₀)
        # too.
        smallest = 0.0 if seen.size < count.size else seen.min()
        shape_low = max(shape_low, (1.0 - smallest / 2.0) * (1.0 + 1e-6) + 1e-9)
    bounds = {
        "kappa": KAPPA_BOUNDS,
        "shape": (shape_low, SHAPE_BOUNDS[1]),
        "variance_ratio": VARIANCE_RATIO_BOUNDS,
    }

    def evidence(log_values: np.ndarray) -> tuple[float, np.ndarray]:
        kappa, shape, ratio = np.exp(log_values)
        return normal_inverse_gamma_evidence(
            count, class_mean, sum_squares, prior_mean, data_variance, kappa, shape, ratio
        )

    n_features = np.shape(class_mean)[1]
    return _maximise(evidence, bounds, scale=max(_observations(count, n_features), n_features))


# -- Poisson naive Bayes: the Gamma prior of the rates ------------------------------------------


def gamma_poisson_evidence(feature_count, class_count, shape, mean) -> tuple[float, np.ndarray]:
    """Σ_kj log NB(S_kj; a, b / (b + N_k)), b = a / m, without the counts' multinomial
    coefficients (free of a and b), and its gradient in (log a, log m).

    Each class total S_kj of N_k Poisson(λ_kj) counts, λ_kj ~ Gamma(a, b) integrated out, has
    log p = a log b − lnΓ(a) + lnΓ(a + S_kj) − (a + S_kj) log(b + N_k) + (terms of the counts).

    Parameters
    ----------
    feature_count : array-like of shape (n_classes, n_features)
        S_kj.
    class_count : array-like of shape (n_classes,) or (n_classes, n_features)
        N_k, or with missing entries each cell's count n_kj of observed entries (the
        exposure of S_kj).
    shape, mean : float
        a and m = a / b > 0.

    Returns
    -------
    log_evidence : float
    gradient : numpy.ndarray of shape (2,)

    Examples
    --------
    One count of 2 in one row under Gamma(1, 1): ∫ λ² e^(−2λ) dλ = 1 / 4 (the 1 / 2! of the
    Poisson's coefficient left out).

    >>> import numpy as np
    >>> from bayesgen.maths.prior_strength import gamma_poisson_evidence
    >>> value, _ = gamma_poisson_evidence([[2.0]], [1.0], 1.0, 1.0)
    >>> round(float(np.exp(value)), 12)
    0.25
    """
    sums = np.asarray(feature_count, dtype=np.float64)
    rows = _per_cell(class_count)
    rate = shape / mean
    posterior_shape = shape + sums
    log_ratio = np.log(rate) - np.log(rate + rows)  # (K, 1) or (K, D)
    value = np.sum(
        shape * log_ratio + gammaln(posterior_shape) - gammaln(shape) - sums * np.log(rate + rows)
    )
    d_rate = np.sum(shape / rate - posterior_shape / (rate + rows))
    d_shape = np.sum(log_ratio + digamma(posterior_shape) - digamma(shape))
    gradient = np.array([shape * d_shape + rate * d_rate, -rate * d_rate])
    return float(value), gradient


def gamma_poisson_strength(feature_count, class_count) -> EvidenceChoice:
    """The Gamma(a, b) of every rate that maximises the Poisson evidence of the statistics.

    Parameters
    ----------
    feature_count, class_count
        As for :func:`gamma_poisson_evidence`; at least one count > 0.

    Returns
    -------
    EvidenceChoice
        ``values``: ``shape`` a and ``mean`` m = a / b (the rate b = a / m); the bounds of m
        are :data:`GAMMA_MEAN_BOUNDS` times the mean count per row and feature.

    Raises
    ------
    ValueError
        When the statistics hold no count: the evidence then grows without bound as m → 0.

    Examples
    --------
    Rates that differ between the classes: the evidence keeps the prior weak.

    >>> from bayesgen.maths.prior_strength import gamma_poisson_strength
    >>> choice = gamma_poisson_strength([[40.0, 2.0], [3.0, 50.0]], [10.0, 10.0])
    >>> round(choice.values["shape"], 3), round(choice.values["mean"], 3)
    (0.753, 2.375)
    """
    sums = np.asarray(feature_count, dtype=np.float64)
    rows = np.asarray(class_count, dtype=np.float64)
    cells = _observations(rows, sums.shape[1])
    mean_count = sums.sum() / cells if cells > 0 else 0.0
    if not mean_count > 0:
        raise ValueError(
            "rate_prior='evidence': the data hold no count, so the evidence has no maximum "
            "(it grows as the prior mean rate → 0). Give rate_prior as (shape, rate)."
        )
    bounds = {
        "shape": GAMMA_SHAPE_BOUNDS,
        "mean": (GAMMA_MEAN_BOUNDS[0] * mean_count, GAMMA_MEAN_BOUNDS[1] * mean_count),
    }

    def evidence(log_values: np.ndarray) -> tuple[float, np.ndarray]:
        shape, mean = np.exp(log_values)
        return gamma_poisson_evidence(sums, rows, shape, mean)

    return _maximise(evidence, bounds, scale=max(cells, sums.shape[1]))


# -- counts per class or per cell ------------------------------------------------------------


def _per_cell(count) -> np.ndarray:
    """Class counts (K,) as a (K, 1) column, or cell counts (K, D) as they are, float64."""
    count = np.asarray(count, dtype=np.float64)
    return count[:, None] if count.ndim == 1 else count


def _observations(count: np.ndarray, n_features: int) -> float:
    """The observed entries: Σ_k N_k · D for class counts, Σ_kj n_kj for cell counts."""
    if count.ndim == 2 and count.shape[1] != 1:
        return float(count.sum())
    return float(count.sum()) * n_features


# -- the search -----------------------------------------------------------------------------


def _maximise(evidence, bounds: dict, *, scale: float) -> EvidenceChoice:
    """The maximiser of ``evidence`` (log values → (value, gradient in the logs)) within
    ``bounds``: the best point of a coarse grid over the log bounds, then L-BFGS-B from it.

    ``scale`` (the number of observations) divides the objective so that its gradient is of
    order one, whatever the size of the data, for the optimiser's tolerances.
    """
    names = list(bounds)
    log_bounds = np.log(np.array([bounds[name] for name in names]))
    axes = [
        np.linspace(low, high, max(2, int(np.ceil((high - low) / np.log(100.0))) + 1))
        for low, high in log_bounds
    ]
    # The grid: its interior points only, where the evidence is rarely extreme (the bounds
    # are reached by the optimiser where the evidence asks).
    axes = [axis[1:-1] if axis.size > 2 else axis for axis in axes]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, len(names))
    values = np.array([evidence(point)[0] for point in grid])
    start = grid[int(np.nanargmax(np.where(np.isfinite(values), values, -np.inf)))]

    def objective(log_values: np.ndarray) -> tuple[float, np.ndarray]:
        value, gradient = evidence(log_values)
        return -value / scale, -gradient / scale

    def climb(point: np.ndarray) -> tuple[np.ndarray, float]:
        result = minimize(
            objective,
            point,
            jac=True,
            method="L-BFGS-B",
            bounds=log_bounds,
            options={"ftol": 1e-15, "gtol": 1e-10, "maxiter": 1000},
        )
        found = np.clip(result.x, log_bounds[:, 0], log_bounds[:, 1])
        return found, evidence(found)[0]

    best, value = climb(start)
    # Where the evidence flattens towards a bound (a₀ → ∞: equal variances; a → ∞: equal
    # rates) the optimiser can stop on the plateau: climb again from that bound, and keep
    # whichever is higher.
    gradient = evidence(best)[1]
    for i in np.flatnonzero(gradient != 0):
        moved = best.copy()
        moved[i] = log_bounds[i, 1] if gradient[i] > 0 else log_bounds[i, 0]
        candidate, candidate_value = climb(moved)
        if candidate_value > value:
            best, value = candidate, candidate_value
    value, gradient = evidence(best)
    at_bound = []
    for i, name in enumerate(names):
        if np.isclose(best[i], log_bounds[i, 0], atol=1e-9, rtol=0) and gradient[i] <= 0:
            at_bound.append((name, "lower"))
        elif np.isclose(best[i], log_bounds[i, 1], atol=1e-9, rtol=0) and gradient[i] >= 0:
            at_bound.append((name, "upper"))
    chosen = dict(zip(names, np.exp(best).tolist(), strict=True))
    # A value at a bound is the bound itself, not its exp(log) round trip.
    for name, side in at_bound:
        chosen[name] = float(bounds[name][0 if side == "lower" else 1])
    return EvidenceChoice(chosen, value, tuple(at_bound), dict(bounds))
