"""The normal–inverse-gamma prior of one normal per class and feature (Gaussian naive Bayes).

For the rows of class k, feature j is x ~ N(μ, σ²) with, independently for every cell (k, j),

    σ² ~ Inv-Gamma(a₀, b₀)   and   μ | σ² ~ N(m₀, σ² / κ₀).

Given the cell's (weighted) count n, mean x̄ and sum of squares S = Σ_i w_i (x_i − x̄)², the
posterior is normal–inverse-gamma again (:func:`posterior`):

* κ_n = κ₀ + n,  m_n = (κ₀ m₀ + n x̄) / κ_n,  a_n = a₀ + n / 2,
* b_n = b₀ + S / 2 + κ₀ n (x̄ − m₀)² / (2 κ_n).

Its marginals: σ² ~ Inv-Gamma(a_n, b_n), mean b_n / (a_n − 1), variance
b_n² / ((a_n − 1)² (a_n − 2)); μ is Student-t with 2 a_n degrees of freedom, location m_n and
scale √(b_n / (a_n κ_n)), variance b_n / (κ_n (a_n − 1)). The joint density of (μ, σ²) is
∝ (σ²)^−(a_n + 3/2) exp(−(b_n + κ_n (μ − m_n)² / 2) / σ²), whose mode is μ = m_n,
σ² = b_n / (a_n + 3/2). The posterior predictive of a new x is Student-t with 2 a_n degrees of
freedom, location m_n and scale √(b_n (κ_n + 1) / (a_n κ_n)), and the evidence of the cell's
rows, in any order,

    log p(x) = −(n / 2) log 2π + ½ log(κ₀ / κ_n) + a₀ log b₀ − a_n log b_n + lnΓ(a_n) − lnΓ(a₀).

Missing entries (NaN) drop out of the likelihood of their cell: each cell (k, j) has its own
count n_kj, the (weighted) rows of class k where x_j is observed, and every formula above holds
per cell with that count (:func:`cell_moments`). A function that takes counts takes either the
class counts N_k (shape (K,), or (K, 1)) or the cell counts (K, D).

In one dimension the normal-inverse-Wishart of :mod:`bayesgen.maths.gaussian` is this prior with
a₀ = ν₀ / 2 and b₀ = Ψ₀ / 2. NumPy and SciPy only; every function takes and returns arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from bayesgen.maths.prior_strength import EvidenceChoice, normal_inverse_gamma_strength

__all__ = [
    "DEFAULT_PRIOR",
    "NormalInverseGamma",
    "cell_moments",
    "class_moments",
    "evidence_prior",
    "joint_mode",
    "leave_one_out_log_density",
    "log_evidence",
    "mean_moments",
    "merge_moments",
    "normal_inverse_gamma_draws",
    "normal_log_joint",
    "overall_moments",
    "posterior",
    "predictive_log_density",
    "prior_parameters",
    "variance_moments",
]

_LOG_2PI = np.log(2.0 * np.pi)


def _per_cell(count) -> np.ndarray:
    """Counts as a (K, 1) column of class counts or the (K, D) cell counts, float64: what
    broadcasts against a (K, D) statistic."""
    count = np.asarray(count, dtype=np.float64)
    return count[:, None] if count.ndim == 1 else count


def _is_per_class(count: np.ndarray) -> bool:
    """Whether counts in :func:`_per_cell`'s form are one per class (a column)."""
    return count.shape[1] == 1


@dataclass(frozen=True)
class NormalInverseGamma:
    """Conjugate prior of Gaussian naive Bayes: one normal–inverse-gamma per class and feature.

    σ²_kj ~ Inv-Gamma(a₀, b₀_j) and μ_kj | σ²_kj ~ N(m₀_j, σ²_kj / κ₀), independently for every
    class k and feature j, with the same (m₀_j, κ₀, a₀, b₀_j) for every class.

    Parameters
    ----------
    mean : float or array-like of shape (n_features,), optional
        m₀. Default: the overall mean of each feature (centres the prior on the data's
        location).
    kappa : float, default 0.01
        κ₀ > 0, the prior's weight on m₀ in pseudo-observations: 0.01 is weak (the prior SD of
        μ_kj is 10 times the within-class SD).
    shape : float, default 1.5
        a₀ > 0. The default is that of the normal-inverse-Wishart prior of GDA and QDA in one
        dimension (ν₀ = D + 2 = 3, a₀ = ν₀ / 2), the fewest for which E[σ²] exists with room
        to spare; a₀ is worth 2 a₀ observations of the variance.
    scale : float or array-like of shape (n_features,), optional
        b₀ > 0 (the inverse-gamma's scale, SciPy's ``invgamma(a₀, scale=b₀)``). Default
        (a₀ − 1) s² with s² the overall variance of each feature, so that the prior mean of
        σ²_kj is s² (for a₀ ≤ 1, where that mean does not exist, s² / 2: the 1-D
        normal-inverse-Wishart's Ψ₀ = s²). A feature constant over all rows has no variance
        to centre on and is refused.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.maths.normal_inverse_gamma import NormalInverseGamma
    >>> X = np.array([[0.0, 1.0], [1.0, 0.5], [0.5, 0.0], [3.0, 3.5], [4.0, 3.0], [3.5, 4.0]])
    >>> resolved = NormalInverseGamma(kappa=1.0).resolve(X, ["x0", "x1"])
    >>> resolved["mean"].tolist(), resolved["shape"]
    ([2.0, 2.0], 1.5)
    >>> (resolved["scale"] / X.var(axis=0)).tolist()  # a₀ − 1: the prior mean of σ² is s²
    [0.5, 0.5]
    """

    mean: float | np.ndarray | None = None
    kappa: float = 0.01
    shape: float = 1.5
    scale: float | np.ndarray | None = None

    def resolve(self, X: np.ndarray, feature_names) -> dict:
        """Fill the data-dependent defaults from the rows X; returns m₀, κ₀, a₀, b₀."""
        X = np.asarray(X, dtype=np.float64)
        return self.resolve_moments(X.mean(axis=0), X.var(axis=0), feature_names)

    def resolve_moments(self, data_mean, data_variance, feature_names) -> dict:
        """:meth:`resolve` from each feature's overall mean and (population) variance alone,
        which the sufficient statistics give (:func:`overall_moments`): a fit merged from
        chunks, or with sample weights, resolves the same prior as one on all rows.

        Returns
        -------
        dict
            ``mean`` m₀ and ``scale`` b₀ of shape (n_features,), ``kappa`` κ₀ and ``shape``
            a₀ as floats.

        Raises
        ------
        ValueError
            For κ₀ ≤ 0, a₀ ≤ 0, a mean or scale of the wrong shape or not finite, a scale
            ≤ 0, or (default scale) a feature constant over all rows.
        """
        data_mean = np.asarray(data_mean, dtype=np.float64)
        variance = np.asarray(data_variance, dtype=np.float64)
        n_features = data_mean.shape[0]
        kappa, shape = _positive(self.kappa, "kappa", "κ₀"), _positive(self.shape, "shape", "a₀")
        mean = data_mean if self.mean is None else _per_feature(self.mean, n_features, "mean")
        if self.scale is None:
            constant = np.flatnonzero(variance <= 1e-12 * (data_mean**2 + 1e-300))
            if constant.size:
                names = [str(feature_names[j]) for j in constant[:10]]
                raise ValueError(
                    f"X: features {names} are constant, so the default prior scale has no "
                    "variance to centre on. Drop those features, or give the prior's scale."
                )
            # (a₀ − 1) s² puts the prior mean of σ² on s²; that mean exists only for a₀ > 1.
            scale = variance * (shape - 1.0 if shape > 1.0 else 0.5)
        else:
            scale = _per_feature(self.scale, n_features, "scale")
            if np.any(scale <= 0):
                raise ValueError(f"prior scale: expected b₀ > 0 for every feature; got {scale}.")
        return {"mean": mean, "kappa": kappa, "shape": shape, "scale": scale}


#: The default prior of Gaussian naive Bayes: weak and centred on the data (frozen: one serves).
DEFAULT_PRIOR = NormalInverseGamma()


def evidence_prior(
    class_count, class_mean, sum_squares, feature_names
) -> tuple[dict, EvidenceChoice]:
    """The data-centred prior whose strength the evidence chooses (``prior="evidence"``).

    m₀_j is the overall mean of feature j, as in the default, and b₀_j = a₀ r s²_j keeps the
    default's scaling by each feature's overall variance s²_j; the three numbers κ₀, a₀ and r
    are those that maximise Σ_kj log p(x_·j of class k | prior)
    (:func:`bayesgen.maths.prior_strength.normal_inverse_gamma_strength`). All from the class
    statistics alone.

    Returns
    -------
    resolved : dict
        m₀, κ₀, a₀ and b₀ as :meth:`NormalInverseGamma.resolve_moments` returns them.
    choice : EvidenceChoice
        κ₀, a₀ and r, the log evidence, and which of them sit at a bound of the search.

    Raises
    ------
    ValueError
        For a feature constant over all rows (no variance to scale b₀ by).

    Examples
    --------
    Twenty classes whose true means differ by only 0.3 of the rows' SD: the evidence pools
    them strongly, κ₀ near 1 / 0.3² ≈ 11 rows (the default's is 0.01), and finds the
    variances alike (a₀ large) at about the overall variance (r near 1).

    >>> import numpy as np
    >>> from bayesgen.maths.normal_inverse_gamma import class_moments, evidence_prior
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat(np.arange(20), 50)
    >>> X = rng.normal(0.3 * rng.normal(size=(20, 5))[y], 1.0)
    >>> resolved, choice = evidence_prior(*class_moments(X, y, 20), [f"x{j}" for j in range(5)])
    >>> round(resolved["kappa"], 1), round(choice.values["variance_ratio"], 2), choice.at_bound
    (15.2, 0.94, ())
    """
    moments = overall_moments(class_count, class_mean, sum_squares)
    # The default's m₀ and its refusal of constant features; only the strength is replaced.
    default = DEFAULT_PRIOR.resolve_moments(*moments, feature_names)
    choice = normal_inverse_gamma_strength(
        class_count, class_mean, sum_squares, default["mean"], moments[1]
    )
    kappa, shape = choice.values["kappa"], choice.values["shape"]
    scale = shape * choice.values["variance_ratio"] * moments[1]
    return {"mean": default["mean"], "kappa": kappa, "shape": shape, "scale": scale}, choice


def _positive(value, name: str, symbol: str) -> float:
    if isinstance(value, bool) or not np.isscalar(value) or not np.isfinite(value) or value <= 0:
        raise ValueError(f"prior {name}: expected {symbol} > 0, a finite number; got {value!r}.")
    return float(value)


def _per_feature(value, n_features: int, name: str) -> np.ndarray:
    """A number or one per feature, as float64 of shape (n_features,)."""
    array = np.asarray(value, dtype=np.float64)
    if array.ndim > 1 or (array.ndim == 1 and array.shape != (n_features,)):
        raise ValueError(
            f"prior {name}: expected a number or an array of shape ({n_features},); got shape "
            f"{array.shape}."
        )
    if not np.all(np.isfinite(array)):
        raise ValueError(f"prior {name}: expected finite values; got {array}.")
    return np.broadcast_to(array, (n_features,)).copy()


# -- sufficient statistics ----------------------------------------------------------------


def class_moments(X: np.ndarray, y: np.ndarray, n_classes: int, weights=None):
    """(Weighted) class counts N_k, class means x̄_kj and sums of squares
    S_kj = Σ_{i: y_i = k} w_i (x_ij − x̄_kj)² of dense X; a class without weight has 0, 0, 0.

    Two passes per class (the mean, then the squares about it), as scikit-learn's
    ``GaussianNB`` computes its ``var_``: S_kj / N_k is its variance without ``var_smoothing``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.maths.normal_inverse_gamma import class_moments
    >>> X = np.array([[0.0, 1.0], [2.0, 1.0], [5.0, 5.0], [7.0, 3.0]])
    >>> count, mean, sum_squares = class_moments(X, np.array([0, 0, 1, 1]), 2)
    >>> count.tolist(), mean.tolist(), sum_squares.tolist()
    ([2.0, 2.0], [[1.0, 1.0], [6.0, 4.0]], [[2.0, 0.0], [2.0, 2.0]])
    """
    X = np.asarray(X, dtype=np.float64)
    n_features = X.shape[1]
    count = np.zeros(n_classes)
    mean = np.zeros((n_classes, n_features))
    sum_squares = np.zeros((n_classes, n_features))
    for k in range(n_classes):
        rows = y == k
        X_k = X[rows]
        w_k = None if weights is None else np.asarray(weights, dtype=np.float64)[rows]
        total = X_k.shape[0] if w_k is None else w_k.sum()
        if total <= 0:
            continue
        count[k] = total
        mean[k] = np.average(X_k, axis=0, weights=w_k)
        squares = np.square(X_k - mean[k])
        sum_squares[k] = squares.sum(axis=0) if w_k is None else w_k @ squares
    return count, mean, sum_squares


def cell_moments(X: np.ndarray, y: np.ndarray, n_classes: int, weights=None):
    """:func:`class_moments` of dense X with missing entries (NaN): each cell's mean and sum
    of squares over the rows of its class where the feature is observed.

    Returns
    -------
    class_count : numpy.ndarray of shape (n_classes,)
        N_k, the (weighted) rows of each class, as :func:`class_moments` counts them.
    cell_count : numpy.ndarray of shape (n_classes, n_features)
        n_kj = Σ_{i: y_i = k, x_ij observed} w_i.
    class_mean, sum_squares : numpy.ndarray of shape (n_classes, n_features)
        Over those rows; 0 and 0 for a cell without any.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.maths.normal_inverse_gamma import cell_moments
    >>> X = np.array([[0.0, 1.0], [2.0, np.nan], [4.0, 3.0], [5.0, np.nan]])
    >>> count, cells, mean, squares = cell_moments(X, np.array([0, 0, 0, 1]), 2)
    >>> count.tolist(), cells.tolist()
    ([3.0, 1.0], [[3.0, 2.0], [1.0, 0.0]])
    >>> mean.tolist(), squares.tolist()
    ([[2.0, 2.0], [5.0, 0.0]], [[8.0, 2.0], [0.0, 0.0]])
    """
    X = np.asarray(X, dtype=np.float64)
    n_features = X.shape[1]
    observed = ~np.isnan(X)
    count = np.zeros(n_classes)
    cells = np.zeros((n_classes, n_features))
    mean = np.zeros((n_classes, n_features))
    sum_squares = np.zeros((n_classes, n_features))
    for k in range(n_classes):
        rows = y == k
        seen = observed[rows]
        w_k = (
            np.ones(seen.shape[0])
            if weights is None
            else np.asarray(weights, dtype=np.float64)[rows]
        )
        total = seen.shape[0] if weights is None else w_k.sum()
        if total <= 0:
            continue
        count[k] = total
        cell_weight = w_k[:, None] * seen  # 0 where the entry is missing
        cells[k] = cell_weight.sum(axis=0)
        values = np.where(seen, X[rows], 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean[k] = np.where(cells[k] > 0, (cell_weight * values).sum(axis=0) / cells[k], 0.0)
        squares = np.square(np.where(seen, values - mean[k], 0.0))
        sum_squares[k] = (cell_weight * squares).sum(axis=0)
    return count, cells, mean, sum_squares


def merge_moments(first: tuple, second: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts, means and sums of squares of two sets of rows, merged by Chan et al.'s parallel
    update: with n = n_a + n_b and δ = x̄_b − x̄_a, x̄ = x̄_a + δ n_b / n and
    S = S_a + S_b + (n_a n_b / n) δ². Each argument is ``(count (K,), mean (K, D),
    sum_squares (K, D))``, or with the cell counts ``(K, D)`` of rows with missing entries
    (:func:`cell_moments`, cell by cell); a class (cell) without weight on one side takes the
    other's mean exactly.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.maths.normal_inverse_gamma import merge_moments
    >>> a = (np.array([2.0]), np.array([[1.0]]), np.array([[2.0]]))  # rows 0 and 2
    >>> b = (np.array([1.0]), np.array([[4.0]]), np.array([[0.0]]))  # row 4
    >>> [part.tolist() for part in merge_moments(a, b)]  # rows 0, 2, 4
    [[3.0], [[2.0]], [[8.0]]]
    """
    count_a, mean_a, squares_a = (np.asarray(part, dtype=np.float64) for part in first)
    count_b, mean_b, squares_b = (np.asarray(part, dtype=np.float64) for part in second)
    count = count_a + count_b
    cells_a, cells_b, cells = _per_cell(count_a), _per_cell(count_b), _per_cell(count)
    safe = np.where(cells > 0, cells, 1.0)
    delta = mean_b - mean_a
    mean = mean_a + delta * cells_b / safe
    mean = np.where(cells_a == 0, mean_b, np.where(cells_b == 0, mean_a, mean))
    squares = squares_a + squares_b + (cells_a * cells_b) / safe * np.square(delta)
    return count, mean, squares


def overall_moments(class_count, class_mean, sum_squares) -> tuple[np.ndarray, np.ndarray]:
    """Each feature's overall mean and population variance from the class statistics:
    mean = Σ_k N_k x̄_k / N and variance = (Σ_k S_k + Σ_k N_k (x̄_k − mean)²) / N, what
    ``X.mean(axis=0)`` and ``X.var(axis=0)`` give on the (weighted) rows. With cell counts
    (K, D) the sums run over the observed entries of each feature: ``np.nanmean`` and
    ``np.nanvar``."""
    count = np.asarray(class_count, dtype=np.float64)
    if count.ndim == 2 and not _is_per_class(count):
        cell_total = count.sum(axis=0)
        mean = (count * class_mean).sum(axis=0) / cell_total
        between = (count * np.square(class_mean - mean)).sum(axis=0)
        return mean, (np.sum(sum_squares, axis=0) + between) / cell_total
    count = count.ravel()
    total = count.sum()
    mean = count @ class_mean / total
    between = count @ np.square(class_mean - mean)
    return mean, (np.sum(sum_squares, axis=0) + between) / total


# -- the posterior --------------------------------------------------------------------------


def posterior(class_count, class_mean, sum_squares, prior: dict) -> dict:
    """(m_n, κ_n, a_n, b_n) of every cell's posterior, each of shape (K, D).

    ``class_count`` is N_k (K,) or the cell counts n_kj (K, D) of rows with missing entries;
    ``prior`` holds m₀ (D,), κ₀, a₀ and b₀ (D,) as :meth:`NormalInverseGamma.resolve_moments`
    returns them; a class (cell) without rows keeps the prior.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.maths.normal_inverse_gamma import posterior
    >>> prior = {"mean": np.zeros(1), "kappa": 1.0, "shape": 1.0, "scale": np.ones(1)}
    >>> post = posterior(np.array([3.0]), np.array([[2.0]]), np.array([[1.5]]), prior)
    >>> [float(post[name][0, 0]) for name in ("mean", "kappa", "shape", "scale")]
    [1.5, 4.0, 2.5, 3.25]
    """
    count = _per_cell(class_count)
    class_mean = np.asarray(class_mean, dtype=np.float64)
    kappa = prior["kappa"] + count
    mean = (prior["kappa"] * prior["mean"] + count * class_mean) / kappa
    # The class mean of an empty class is 0 by convention; its weight 0 keeps it out.
    shrink = prior["kappa"] * count / kappa
    scale = (
        prior["scale"]
        + 0.5 * np.asarray(sum_squares)
        + 0.5 * shrink * np.square(class_mean - prior["mean"])
    )
    shape = prior["shape"] + 0.5 * count
    shape_kd = np.broadcast_to(shape, mean.shape).copy()
    return {
        "mean": mean,
        "kappa": np.broadcast_to(kappa, mean.shape).copy(),
        "shape": shape_kd,
        "scale": scale,
    }


def prior_parameters(prior: dict, n_classes: int) -> dict:
    """The prior's (m₀, κ₀, a₀, b₀) broadcast to (K, D) cells: the posterior given no data."""
    mean = np.broadcast_to(prior["mean"], (n_classes, np.size(prior["mean"])))
    return {
        "mean": mean.copy(),
        "kappa": np.full(mean.shape, prior["kappa"]),
        "shape": np.full(mean.shape, prior["shape"]),
        "scale": np.broadcast_to(prior["scale"], mean.shape).copy(),
    }


def mean_moments(params: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, SD and kurtosis of μ's Student-t marginal (2 a degrees of freedom); NaN where a
    moment does not exist (the mean needs a > ½, the SD a > 1, the kurtosis a > 2)."""
    a, b, kappa = params["shape"], params["scale"], params["kappa"]
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(a > 0.5, params["mean"], np.nan)
        sd = np.where(a > 1.0, np.sqrt(b / (kappa * (a - 1.0))), np.nan)
        kurtosis = np.where(a > 2.0, 3.0 + 6.0 / (2.0 * a - 4.0), np.nan)
    return mean, sd, kurtosis


def variance_moments(params: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean b / (a − 1), SD b / ((a − 1) √(a − 2)) and kurtosis
    3 + 6 (5a − 11) / ((a − 3)(a − 4)) of σ² ~ Inv-Gamma(a, b); NaN where they do not exist
    (a ≤ 1, a ≤ 2, a ≤ 4)."""
    a, b = params["shape"], params["scale"]
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(a > 1.0, b / (a - 1.0), np.nan)
        sd = np.where(a > 2.0, b / ((a - 1.0) * np.sqrt(a - 2.0)), np.nan)
        kurtosis = np.where(a > 4.0, 3.0 + 6.0 * (5.0 * a - 11.0) / ((a - 3.0) * (a - 4.0)), np.nan)
    return mean, sd, kurtosis


def joint_mode(params: dict) -> tuple[np.ndarray, np.ndarray]:
    """The mode of the joint density of (μ, σ²): μ = m and σ² = b / (a + 3/2) (the normal of μ
    adds (σ²)^−½ to the inverse-gamma's (σ²)^−(a + 1))."""
    return params["mean"].copy(), params["scale"] / (params["shape"] + 1.5)


def log_evidence(class_count, prior: dict, params: dict) -> np.ndarray:
    """log p(x | prior) of every cell's rows (μ and σ² integrated out), shape (K, D); the
    module docstring's formula, with n the cell's (weighted) count (``class_count`` (K,) or
    the cell counts (K, D))."""
    count = _per_cell(class_count)
    a0, b0 = prior["shape"], prior["scale"]
    return (
        -0.5 * count * _LOG_2PI
        + 0.5 * (np.log(prior["kappa"]) - np.log(params["kappa"]))
        + a0 * np.log(b0)
        - params["shape"] * np.log(params["scale"])
        + gammaln(params["shape"])
        - gammaln(a0)
    )


def _student_t_log_density(x, mean, kappa, shape, scale):
    """log of the posterior predictive Student-t of one cell at x (elementwise)."""
    spread = 2.0 * scale * (kappa + 1.0) / kappa  # ν s² with ν = 2a
    return (
        gammaln(shape + 0.5)
        - gammaln(shape)
        - 0.5 * np.log(np.pi * spread)
        - (shape + 0.5) * np.log1p(np.square(x - mean) / spread)
    )


def predictive_log_density(X, params: dict) -> np.ndarray:
    """log p(x | y = k, data) of every row and class: the sum over the features of each cell's
    Student-t predictive, shape (n_samples, K). A missing entry (NaN) drops out: its factor
    integrates to 1."""
    X = np.asarray(X, dtype=np.float64)
    missing = np.isnan(X)
    return np.column_stack(
        [
            _observed_sum(
                _student_t_log_density(
                    X,
                    params["mean"][k],
                    params["kappa"][k],
                    params["shape"][k],
                    params["scale"][k],
                ),
                missing,
            )
            for k in range(params["mean"].shape[0])
        ]
    ).reshape(X.shape[0], -1)


def _observed_sum(terms: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """Σ_j of per-entry log densities (n, D) over the observed entries of each row."""
    if missing.any():
        terms = np.where(missing, 0.0, terms)
    return terms.sum(axis=1)


def leave_one_out_log_density(X, y_codes, params: dict) -> np.ndarray:
    """log p(x_i | y = k, data without row i) for every row i and class k, exactly.

    Row i (of class c = y_i, weight 1) leaves only its own class's cells, each by the update
    that adds a point run backwards: κ' = κ − 1, m' = (κ m − x) / (κ − 1), a' = a − ½ and
    b' = b − κ (x − m)² / (2 (κ − 1)). The other classes' predictives are those given all
    the rows. All rows together cost O(n K D), without a refit. With missing entries (NaN),
    ``params`` those of the cell counts, row i leaves only the cells it is observed in, and
    its missing entries drop out.

    Examples
    --------
    Two rows and the prior (m₀, κ₀, a₀, b₀) = (0, 1, 1, 1): without row 0 the posterior is that
    of row 1 alone.

    >>> import numpy as np
    >>> from bayesgen.maths.normal_inverse_gamma import (
    ...     leave_one_out_log_density, posterior, predictive_log_density)
    >>> prior = {"mean": np.zeros(1), "kappa": 1.0, "shape": 1.0, "scale": np.ones(1)}
    >>> X = np.array([[1.0], [3.0]])
    >>> both = posterior(np.array([2.0]), np.array([[2.0]]), np.array([[2.0]]), prior)
    >>> alone = posterior(np.array([1.0]), np.array([[3.0]]), np.array([[0.0]]), prior)
    >>> loo = leave_one_out_log_density(X, np.array([0, 0]), both)
    >>> bool(np.isclose(loo[0, 0], predictive_log_density(X[:1], alone)[0, 0]))
    True
    """
    X = np.asarray(X, dtype=np.float64)
    y_codes = np.asarray(y_codes)
    joint = predictive_log_density(X, params)
    kappa, mean = params["kappa"][y_codes], params["mean"][y_codes]
    shape, scale = params["shape"][y_codes], params["scale"][y_codes]
    left = kappa - 1.0
    held_mean = (kappa * mean - X) / left
    held_scale = scale - 0.5 * kappa * np.square(X - mean) / left
    own = _observed_sum(
        _student_t_log_density(X, held_mean, left, shape - 0.5, held_scale), np.isnan(X)
    )
    joint[np.arange(X.shape[0]), y_codes] = own
    return joint


def normal_inverse_gamma_draws(params: dict, rng, sample_shape) -> tuple[np.ndarray, np.ndarray]:
    """Exact draws (μ, σ²) of every cell, each of shape ``sample_shape + (K, D)``: σ² = b / G
    with G ~ Gamma(a, 1), then μ = m + √(σ² / κ) Z with Z ~ N(0, 1).

    The order of the random draws (all σ², then all μ) is part of the result: a seeded fit
    gives the same draws in every release.
    """
    size = (*tuple(sample_shape), *params["mean"].shape)
    variance = params["scale"] / rng.standard_gamma(params["shape"], size=size)
    mu = params["mean"] + np.sqrt(variance / params["kappa"]) * rng.standard_normal(size)
    return mu, variance


# -- the likelihood of given parameters ---------------------------------------------------


def normal_log_joint(X: np.ndarray, class_prob, mu, var) -> np.ndarray:
    """log π_k + Σ_j log N(x_j | μ_kj, σ²_kj) for a batch of parameters: ``class_prob``
    (S, K), ``mu`` and ``var`` (S, K, D); returns (S, n, K). A missing x_j (NaN) drops out.

    Expanded as Σ_j [−½ log 2πσ² − μ² / 2σ²] + x·(μ / σ²) − ½ x²·(1 / σ²), two matrix
    products per class, with no (S, n, K, D) array."""
    n_features = X.shape[1]
    precision = 1.0 / var
    # Draws of π that underflowed to 0 (float32) are clipped to the smallest normal number.
    log_class_prob = np.log(np.maximum(class_prob, np.finfo(np.float64).tiny))
    missing = np.isnan(X)
    if missing.any():
        # Each row's terms over its observed features: a missing x_j is 0 in the products,
        # and the constant terms of feature j count only where x_j is observed.
        observed = (~missing).astype(np.float64)
        values = np.where(missing, 0.0, X)
        per_feature = np.log(2.0 * np.pi) + np.log(var) + np.square(mu) * precision
        constant = log_class_prob[:, None, :] - 0.5 * np.einsum(
            "nj,skj->snk", observed, per_feature
        )
        linear = np.einsum("nj,skj->snk", values, mu * precision)
        quadratic = np.einsum("nj,skj->snk", np.square(values), precision)
        return constant + linear - 0.5 * quadratic
    constant = log_class_prob - 0.5 * (
        n_features * np.log(2.0 * np.pi)
        + np.log(var).sum(axis=-1)
        + (np.square(mu) * precision).sum(axis=-1)
    )
    linear = np.einsum("nj,skj->snk", X, mu * precision)
    quadratic = np.einsum("nj,skj->snk", np.square(X), precision)
    return constant[:, None, :] + linear - 0.5 * quadratic
