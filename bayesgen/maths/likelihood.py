"""Joint log-likelihoods log p(x, y = k) of the generative classifiers, and their softmax.

NumPy and SciPy only; X may be a dense array or a sparse matrix, the parameters a single point
or a batch of posterior draws (leading axes). :mod:`bayesgen.closed_form` re-exports every
public name, its home before 0.2.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def multinomial_log_likelihood(X, log_class_prob, log_feature_prob) -> np.ndarray:
    """Joint log-likelihood log p(x, y = k) up to a constant, shape (..., n_samples, n_classes).

    The multinomial coefficient of each document is the same for every class and is dropped.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.closed_form import multinomial_log_likelihood
    >>> log_class_prob = np.log([0.5, 0.5])
    >>> log_feature_prob = np.log([[0.5, 0.5], [0.9, 0.1]])
    >>> joint = multinomial_log_likelihood(np.array([[2, 0]]), log_class_prob, log_feature_prob)
    >>> np.exp(joint).round(3).tolist()  # 0.5 * 0.5^2 and 0.5 * 0.9^2
    [[0.125, 0.405]]
    """
    return linear_in_x(X, log_feature_prob) + log_class_prob[..., None, :]


def bernoulli_log_likelihood(X, log_class_prob, log_feature_prob, log1m_feature_prob):
    """Σ_j [x_j log φ_jk + (1 - x_j) log(1 - φ_jk)] + log π_k; absent features count too.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.closed_form import bernoulli_log_likelihood
    >>> phi = np.array([[0.5, 0.5], [0.9, 0.2]])
    >>> joint = bernoulli_log_likelihood(
    ...     np.array([[1, 0]]), np.log([0.5, 0.5]), np.log(phi), np.log1p(-phi)
    ... )
    >>> np.exp(joint).round(3).tolist()  # 0.5 * 0.5 * 0.5 and 0.5 * 0.9 * 0.8
    [[0.125, 0.36]]
    """
    presence = linear_in_x(X, log_feature_prob - log1m_feature_prob)
    return presence + (log1m_feature_prob.sum(axis=-1) + log_class_prob)[..., None, :]


def categorical_log_likelihood(codes, log_class_prob, log_feature_prob) -> np.ndarray:
    """Σ_n log P(x_n | y = k) + log π_k with ``log_feature_prob`` of shape (..., K, F, C).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.closed_form import categorical_log_likelihood
    >>> # 2 classes, 1 feature with 3 categories
    >>> feature_prob = np.array([[[0.2, 0.2, 0.6]], [[0.5, 0.25, 0.25]]])
    >>> joint = categorical_log_likelihood(
    ...     np.array([[2], [0]]), np.log([0.5, 0.5]), np.log(feature_prob)
    ... )
    >>> np.exp(joint).round(3).tolist()
    [[0.3, 0.125], [0.1, 0.25]]
    """
    codes = np.asarray(codes.toarray() if sp.issparse(codes) else codes, dtype=np.int64)
    n_samples, n_features = codes.shape
    n_categories = log_feature_prob.shape[-1]
    # Rows one-hot over the flattened (feature, category) cells, times the flattened
    # log-probabilities: one sparse product instead of gathering (..., K, n, F) elements
    # (3.4 billion, 37 s and 6 GB for 1,000 draws of the digits model).
    cells = (np.arange(n_features) * n_categories + codes).ravel()
    one_hot = sp.csr_array(
        (np.ones(cells.size), cells, np.arange(0, cells.size + 1, n_features)),
        shape=(n_samples, n_features * n_categories),
    )
    flat = log_feature_prob.reshape(*log_feature_prob.shape[:-2], n_features * n_categories)
    finite = np.isfinite(flat)
    joint = linear_in_x(one_hot, np.where(finite, flat, 0.0))
    if not finite.all():  # 1 · (-inf) summed with finite terms: a row in an impossible cell
        joint[linear_in_x(one_hot, (~finite).astype(np.float64)) > 0] = -np.inf
    return joint + log_class_prob[..., None, :]


def linear_log_likelihood(X, coef, intercept) -> np.ndarray:
    """x·w_k + b_k: GDA's log p(x, y = k) up to the class-independent quadratic term.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.closed_form import linear_log_likelihood
    >>> coef = np.array([[0.0, 0.0], [1.0, -1.0]])
    >>> intercept = np.array([0.0, 0.5])
    >>> linear_log_likelihood(np.array([[2.0, 1.0]]), coef, intercept).tolist()
    [[0.0, 1.5]]
    """
    return linear_in_x(X, coef) + intercept[..., None, :]


def linear_in_x(X, weights) -> np.ndarray:
    """X @ weightsᵀ for weights of shape (..., K, F), returning (..., n, K); X may be sparse."""
    batch, (n_classes, n_features) = weights.shape[:-2], weights.shape[-2:]
    flat = weights.reshape(-1, n_features)
    # Huge X may overflow here; normalize_log_proba then names the row instead of a warning.
    with np.errstate(over="ignore", invalid="ignore"):
        product = np.asarray(X @ flat.T)  # (n, B*K); sparse X touches only its non-zeros
    product = product.reshape(X.shape[0], -1, n_classes)
    return np.moveaxis(product, 0, -2).reshape(*batch, X.shape[0], n_classes)


def normalize_log_proba(joint: np.ndarray, order: np.ndarray | None = None) -> np.ndarray:
    """Softmax over the last axis, in log space; with ``order``, lexicographic (see
    :func:`log_prob_terms`): only classes of the smallest order keep probability.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.closed_form import normalize_log_proba
    >>> normalize_log_proba(np.log([[1.0, 3.0]])).round(3).tolist()
    [[0.25, 0.75]]
    >>> normalize_log_proba(np.log([[1.0, 3.0]]), order=np.array([[0.0, 1.0]])).tolist()
    [[1.0, 0.0]]
    """
    if order is not None:
        lowest = order.min(axis=-1, keepdims=True)
        joint = np.where(np.isclose(order, lowest, rtol=0, atol=1e-9), joint, -np.inf)
    best = _last_axis_max(joint)  # NaN propagates
    _check_finite_best(best[..., 0])
    return np.exp(joint - log_sum_exp(joint, largest=best))


def log_sum_exp(values: np.ndarray, *, largest: np.ndarray | None = None) -> np.ndarray:
    """log Σ exp over the last axis, kept as an axis of length 1: SciPy's
    ``logsumexp(values, axis=-1, keepdims=True)`` for real input, to the bit.

    SciPy's arithmetic (the m tied largest terms apart: log1p(Σ_rest exp(x − max) / m) +
    log m + max), without its array-API dispatch, which costs more than the arithmetic on
    (draw, row, class) arrays of a few classes. ``largest`` is ``values.max(axis=-1,
    keepdims=True)`` where the caller has it.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.maths.likelihood import log_sum_exp
    >>> log_sum_exp(np.log([[1.0, 3.0], [2.0, 2.0]])).round(6).tolist()
    [[1.386294], [1.386294]]
    >>> log_sum_exp(np.full((1, 2), -np.inf)).tolist()
    [[-inf]]
    """
    best = _last_axis_max(values) if largest is None else largest
    is_best = values == best
    ties = _last_axis_count(is_best, values.dtype)
    # A row of −inf sums to −inf, as in SciPy: shift it by 0, not by −inf.
    shift = np.where(np.isfinite(best), best, 0.0)
    # A row holding NaN has no tie (ties = 0): its sum is NaN, as in SciPy, without warnings.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        rest = _last_axis_sum(np.exp(np.where(is_best, -np.inf, values) - shift))
        rest = np.where(rest == 0, rest, rest / ties)
        return np.log1p(rest) + np.log(ties) + best


#: Longest last axis that :func:`_last_axis_max` takes slice by slice. NumPy reduces a short
#: last axis (the classes of a (draw, row, class) array) one element at a time, which on
#: (4,000, 1,114, 2) took 8 times as long as one ``np.maximum`` of the two classes' slices.
_FEW_CLASSES = 16


def _last_axis_max(values: np.ndarray) -> np.ndarray:
    """``values.max(axis=-1, keepdims=True)``: the same numbers, NaN included (a maximum
    does not depend on the order it is taken in), by slices where the axis is short."""
    n = values.shape[-1]
    if not 1 < n <= _FEW_CLASSES:
        return values.max(axis=-1, keepdims=True)
    largest = np.maximum(values[..., :1], values[..., 1:2])
    for k in range(2, n):
        np.maximum(largest, values[..., k : k + 1], out=largest)
    return largest


def _last_axis_count(mask: np.ndarray, dtype) -> np.ndarray:
    """``mask.sum(axis=-1, keepdims=True, dtype=dtype)``, by slices where the axis is short
    (whole numbers add up exactly in any order)."""
    n = mask.shape[-1]
    if not 1 < n <= _FEW_CLASSES:
        return mask.sum(axis=-1, keepdims=True, dtype=dtype)
    count = mask[..., :1].astype(dtype)
    for k in range(1, n):
        count += mask[..., k : k + 1]
    return count


def _last_axis_sum(values: np.ndarray) -> np.ndarray:
    """``values.sum(axis=-1, keepdims=True)`` to the bit: for two classes, one addition of
    their slices (one addition has no order to differ in); else NumPy's own sum, whose order
    of additions a loop over slices would not keep."""
    if values.shape[-1] == 2:
        return values[..., :1] + values[..., 1:]
    return values.sum(axis=-1, keepdims=True)


def _check_finite_best(best: np.ndarray) -> None:
    """Refuse rows whose best class has no finite log-likelihood (NaN, +inf or all -inf).

    Valid inputs always leave one finite class; huge values of X (say 1e308 counts times a log
    probability) overflow instead, and the softmax would turn them into NaN probabilities.
    """
    bad = ~np.isfinite(best)
    if np.any(bad):
        row = int(np.argwhere(bad)[0][-1])
        raise ValueError(
            f"X: row {row} makes the log-likelihood overflow to NaN or infinity: its values "
            "are too large for float64 arithmetic. Rescale X or check that row for corrupt "
            "values."
        )
