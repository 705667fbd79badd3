"""The Dirichlet compound multinomial (Pólya) distribution on count histograms.

A document x (counts over V words, length n = Σ_w x_w) of class k is x ~ DirMult(n, α_k),
α_k = s_k m_k (concentration s_k > 0, mean m_k on the simplex):

    log p(x | α) = log n! − Σ_w log x_w! + lnΓ(s) − lnΓ(n + s) + Σ_w [lnΓ(x_w + α_w) − lnΓ(α_w)].

Over the documents of a class the α-dependent part is a sum over *count levels*, not documents
(Minka 2000, "Estimating a Dirichlet distribution"):

    Σ_d [lnΓ(x_dw + α_w) − lnΓ(α_w)] = Σ_{c≥1} h_w(c) log(α_w + c − 1),

h_w(c) the number of documents with x_dw ≥ c, and likewise Σ_d [lnΓ(n_d + s) − lnΓ(s)] =
Σ_c g(c) log(s + c − 1) over the lengths. :class:`CountHistograms` stores the equivalent
*exact-level* histograms (the weight of the documents with x_dw = c exactly, for the non-zero
counts only, and with n_d = c for the lengths), from which h is a reverse cumulative sum
(:func:`exceedance`); each stored entry contributes lnΓ(c + α) − lnΓ(α) = Σ_{j<c} log(α + j),
so the cost grows with the distinct (class, word, level) triples, not the documents, and
a zero count costs nothing. Histograms of two sets of documents merge by adding
(:func:`merge_histograms`): ``partial_fit`` and Dask chunks.

The point fit (:func:`fit_concentration`) maximises log p(X | y, s, m) + log p(s) + log p(m)
over (s_k, m_k), with s_k ~ Gamma(a, b) and m_k ~ Dirichlet(c) (a flat prior, a = 1, b = 0,
c = 1, gives the evidence maximiser), m shared by the classes or one per class, by Newton's
method (:mod:`bayesgen.maths.dirichlet_multinomial_fit`).

Everything here is NumPy and SciPy on arrays, with numba kernels
(:mod:`bayesgen.maths.dirichlet_multinomial_kernels`) for the histograms and the fit; X may be
dense or a SciPy sparse matrix.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.special import digamma, gammaln

from bayesgen.maths.dirichlet_multinomial_fit import newton_fit
from bayesgen.maths.dirichlet_multinomial_objective import kernels

__all__ = [
    "CountHistograms",
    "PointFit",
    "count_histograms",
    "dirichlet_multinomial_log_pmf",
    "exceedance",
    "fit_concentration",
    "histogram_log_likelihood",
    "log_likelihood_gradient",
    "log_objective",
    "merge_histograms",
    "simulate_documents",
]


class CountHistograms(NamedTuple):
    """Weighted exact-level histograms of the documents of each class.

    Entry i of the ``word_*`` arrays says: the documents of class ``word_class[i]`` with
    count exactly ``word_level[i]`` (> 0) of word ``word_feature[i]`` weigh ``word_weight[i]``
    in all. The ``length_*`` arrays say the same of the document lengths (level 0 included:
    an empty document). Entries are unique and sorted by (class, feature, level).

    Attributes
    ----------
    word_class, word_feature : numpy.ndarray of int64
    word_level, word_weight : numpy.ndarray of float64
    length_class : numpy.ndarray of int64
    length_level, length_weight : numpy.ndarray of float64
    class_count : numpy.ndarray of float64, shape (n_classes,)
        The documents (total weight) of each class.
    log_coefficient : numpy.ndarray of float64, shape (n_classes,)
        Σ_d w_d [log n_d! − Σ_w log x_dw!] per class: the multinomial coefficients, free of α.
    n_features : int
    """

    word_class: np.ndarray
    word_feature: np.ndarray
    word_level: np.ndarray
    word_weight: np.ndarray
    length_class: np.ndarray
    length_level: np.ndarray
    length_weight: np.ndarray
    class_count: np.ndarray
    log_coefficient: np.ndarray
    n_features: int

    @property
    def n_classes(self) -> int:
        return int(self.class_count.shape[0])


def _aggregate(major, minor, level, weight, n_minor: int):
    """The unique (major, minor, level) triples, sorted, with their weights summed (zero sums
    dropped): (major, minor, level, weight); ``weight`` None: each entry weighs 1.

    Whole levels: one int64 key of bit fields sorted and its runs summed in order
    (:func:`~bayesgen.maths.dirichlet_multinomial_kernels.sum_runs`); other levels, or keys
    longer than 62 bits: ``lexsort``.
    """
    n_entries = major.size
    bits = [
        (int(major.max()) if n_entries else 0).bit_length(),
        (n_minor - 1).bit_length(),
        (kernels().largest_whole_level(level) + 1).bit_length(),
        0 if weight is None else n_entries.bit_length(),
    ]
    if n_entries and bits[2] and sum(bits) < 63:
        keys = kernels().level_keys(major, minor, level, *bits[1:])
        keys.sort()
        return kernels().sum_runs(keys, *bits[1:], np.ones(0) if weight is None else weight)
    weight = np.ones(n_entries) if weight is None else weight
    cells = major * n_minor + minor
    order = np.lexsort((level, cells))
    cells, level, weight = cells[order], level[order], weight[order]
    if n_entries == 0:
        return major[:0], minor[:0], level, weight
    start = np.ones(n_entries, dtype=bool)
    start[1:] = (cells[1:] != cells[:-1]) | (level[1:] != level[:-1])
    first = np.flatnonzero(start)
    summed = np.add.reduceat(weight, first)
    keep = summed != 0
    major, minor = np.divmod(cells[first][keep], n_minor)
    return major, minor, level[first][keep], summed[keep]


def _nonzeros(X) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, column, value) of the non-zero entries of a dense or sparse X, by row."""
    if sp.issparse(X):
        if X.format != "csr":
            X = sp.csr_array(X)
        rows = np.repeat(np.arange(X.shape[0], dtype=np.int64), np.diff(X.indptr))
        cols, values = X.indices.astype(np.int64), X.data.astype(np.float64)
        if not np.all(values != 0):
            keep = values != 0
            rows, cols, values = rows[keep], cols[keep], values[keep]
        return rows, cols, values
    X = np.asarray(X, dtype=np.float64)
    rows, cols = np.nonzero(X)
    return rows.astype(np.int64), cols.astype(np.int64), X[rows, cols]


def count_histograms(X, y_codes, n_classes: int, sample_weight=None) -> CountHistograms:
    """The exact-level histograms of the documents X (rows) with classes ``y_codes``.

    Parameters
    ----------
    X : array-like or scipy.sparse matrix of shape (n_documents, n_features)
        Counts ≥ 0 (whole numbers for a generative model; a fractional count enters the same
        lnΓ kernel as a weighted likelihood).
    y_codes : array-like of int, shape (n_documents,)
        Classes as indices in [0, n_classes).
    n_classes : int
    sample_weight : array-like of shape (n_documents,), optional
        Document d counts w_d times.

    Returns
    -------
    CountHistograms

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.maths.dirichlet_multinomial import count_histograms, exceedance
    >>> h = count_histograms(np.array([[2, 0], [1, 1], [0, 3]]), np.array([0, 0, 1]), 2)
    >>> h.word_level.tolist(), h.word_weight.tolist()
    ([1.0, 2.0, 1.0, 3.0], [1.0, 1.0, 1.0, 1.0])
    >>> exceedance(h)[0][0].tolist()  # class 0, word 0: h(1), h(2) = docs with ≥ 1, ≥ 2
    [2.0, 1.0]
    """
    y_codes = np.asarray(y_codes, dtype=np.int64)
    n_documents, n_features = X.shape
    weight = (
        np.ones(n_documents) if sample_weight is None else np.asarray(sample_weight, np.float64)
    )
    rows, cols, values = _nonzeros(X)
    word_class, word_feature, word_level, word_weight = _aggregate(
        y_codes[rows], cols, values, None if sample_weight is None else weight[rows], n_features
    )
    lengths, row_coefficient = kernels().document_sums(rows, values, n_documents)
    length_class, _, length_level, length_weight = _aggregate(
        y_codes,
        np.zeros(n_documents, dtype=np.int64),
        lengths,
        None if sample_weight is None else weight,
        1,
    )
    return CountHistograms(
        word_class=word_class,
        word_feature=word_feature,
        word_level=word_level,
        word_weight=word_weight,
        length_class=length_class,
        length_level=length_level,
        length_weight=length_weight,
        class_count=np.bincount(y_codes, weights=weight, minlength=n_classes).astype(np.float64),
        log_coefficient=np.bincount(
            y_codes, weights=weight * row_coefficient, minlength=n_classes
        ).astype(np.float64),
        n_features=int(n_features),
    )


def merge_histograms(first: CountHistograms, second: CountHistograms) -> CountHistograms:
    """The histograms of the union of two sets of documents (same classes and features).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.maths.dirichlet_multinomial import count_histograms, merge_histograms
    >>> X, y = np.array([[2, 0], [1, 1], [0, 3]]), np.array([0, 0, 1])
    >>> first, second = count_histograms(X[:1], y[:1], 2), count_histograms(X[1:], y[1:], 2)
    >>> merged = merge_histograms(first, second)
    >>> all(np.array_equal(a, b) for a, b in zip(merged, count_histograms(X, y, 2)))
    True
    """
    if first.n_features != second.n_features or first.n_classes != second.n_classes:
        raise ValueError(
            f"histograms: expected the same classes and features; got {first.n_classes} x "
            f"{first.n_features} and {second.n_classes} x {second.n_features}."
        )
    word_class, word_feature, word_level, word_weight = _aggregate(
        *(
            np.concatenate([getattr(part, name) for part in (first, second)])
            for name in ("word_class", "word_feature", "word_level", "word_weight")
        ),
        first.n_features,
    )
    length_class, _, length_level, length_weight = _aggregate(
        np.concatenate([first.length_class, second.length_class]),
        np.zeros(first.length_class.size + second.length_class.size, dtype=np.int64),
        np.concatenate([first.length_level, second.length_level]),
        np.concatenate([first.length_weight, second.length_weight]),
        1,
    )
    return CountHistograms(
        word_class=word_class,
        word_feature=word_feature,
        word_level=word_level,
        word_weight=word_weight,
        length_class=length_class,
        length_level=length_level,
        length_weight=length_weight,
        class_count=first.class_count + second.class_count,
        log_coefficient=first.log_coefficient + second.log_coefficient,
        n_features=first.n_features,
    )


def exceedance(histograms: CountHistograms) -> list[list[np.ndarray]]:
    """Minka's h_kw(c), c = 1 … max level, the weight of class-k documents with x_dw ≥ c:
    ``result[k][w]`` (an empty array for a word the class never shows). For tests and
    illustration; the likelihood reads the exact-level histograms."""
    result = [
        [np.zeros(0) for _ in range(histograms.n_features)] for _ in range(histograms.n_classes)
    ]
    for k, w in set(
        zip(histograms.word_class.tolist(), histograms.word_feature.tolist(), strict=True)
    ):
        at = (histograms.word_class == k) & (histograms.word_feature == w)
        levels = histograms.word_level[at].astype(np.int64)
        exact = np.zeros(levels.max() + 1)
        np.add.at(exact, levels, histograms.word_weight[at])
        result[k][w] = np.cumsum(exact[::-1])[::-1][1:]
    return result


def _check_alpha(histograms: CountHistograms, alpha) -> np.ndarray:
    alpha = np.asarray(alpha, dtype=np.float64)
    expected = (histograms.n_classes, histograms.n_features)
    if alpha.shape != expected:
        raise ValueError(f"alpha: expected shape {expected}; got {alpha.shape}.")
    return alpha


def histogram_log_likelihood(
    histograms: CountHistograms, alpha, *, coefficient: bool = True
) -> np.ndarray:
    """log p(X_k | α_k) of every class's documents, from the histograms alone, shape (K,).

    Σ_c h(c) [lnΓ(c + α) − lnΓ(α)] over the word entries minus the same over the lengths
    with s = Σ_w α_w, plus (``coefficient``) the multinomial coefficients; each class's sum
    over its documents of :func:`dirichlet_multinomial_log_pmf`.

    Parameters
    ----------
    histograms : CountHistograms
    alpha : array-like of shape (n_classes, n_features)
        Every α_kw ≥ 0 (0: a word the class never shows; −inf where it does).
    coefficient : bool, default True
        Include Σ_d log(n_d! / Π_w x_dw!), which does not depend on α.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> from bayesgen.maths.dirichlet_multinomial import count_histograms, histogram_log_likelihood
    >>> X, alpha = np.array([[2, 0, 1], [1, 1, 0]]), np.array([[0.5, 1.0, 2.0]])
    >>> h = count_histograms(X, np.zeros(2, dtype=int), 1)
    >>> by_document = stats.dirichlet_multinomial.logpmf(X, alpha[0], X.sum(1)).sum()
    >>> bool(np.isclose(histogram_log_likelihood(h, alpha)[0], by_document, rtol=0, atol=1e-12))
    True
    """
    alpha = _check_alpha(histograms, alpha)
    n_classes = histograms.n_classes
    cell_alpha = alpha[histograms.word_class, histograms.word_feature]
    with np.errstate(divide="ignore", invalid="ignore"):
        rising = gammaln(cell_alpha + histograms.word_level) - gammaln(cell_alpha)
    rising = np.where(cell_alpha > 0, rising, -np.inf)
    words = np.bincount(
        histograms.word_class, weights=histograms.word_weight * rising, minlength=n_classes
    )
    total = alpha.sum(axis=1)[histograms.length_class]
    lengths = np.bincount(
        histograms.length_class,
        weights=histograms.length_weight
        * (gammaln(total + histograms.length_level) - gammaln(total)),
        minlength=n_classes,
    )
    result = words - lengths
    return result + histograms.log_coefficient if coefficient else result


def log_likelihood_gradient(histograms: CountHistograms, alpha) -> np.ndarray:
    """∂ log p(X | y, α) / ∂α_kw = A_kw − B_k, shape (K, V), at α > 0: A_kw = Σ_c h(c)
    [ψ(c + α_kw) − ψ(α_kw)] over the word's levels, B_k the same over the lengths at s_k.
    By SciPy's digamma, for tests of the fit (which sums them in numba).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.maths.dirichlet_multinomial import (
    ...     count_histograms, histogram_log_likelihood, log_likelihood_gradient)
    >>> h = count_histograms(np.array([[2, 0, 1], [1, 1, 0]]), np.zeros(2, dtype=int), 1)
    >>> alpha, step = np.array([[0.5, 1.0, 2.0]]), np.array([[1e-6, 0, 0]])
    >>> up = histogram_log_likelihood(h, alpha + step)
    >>> down = histogram_log_likelihood(h, alpha - step)
    >>> numeric = (up - down) / 2e-6
    >>> bool(np.isclose(log_likelihood_gradient(h, alpha)[0, 0], numeric[0], atol=1e-7))
    True
    """
    alpha = _check_alpha(histograms, alpha)
    n_classes, n_features = alpha.shape
    cell_alpha = alpha[histograms.word_class, histograms.word_feature]
    word_sums = np.bincount(
        histograms.word_class * n_features + histograms.word_feature,
        weights=histograms.word_weight
        * (digamma(cell_alpha + histograms.word_level) - digamma(cell_alpha)),
        minlength=n_classes * n_features,
    ).reshape(n_classes, n_features)
    total = alpha.sum(axis=1)[histograms.length_class]
    length_terms = digamma(total + histograms.length_level) - digamma(total)
    length_sums = np.bincount(
        histograms.length_class,
        weights=histograms.length_weight * length_terms,
        minlength=n_classes,
    )
    return word_sums - length_sums[:, None]


class PointFit(NamedTuple):
    """The (s, m) that maximise the posterior density, and how the search ended.

    Attributes
    ----------
    concentration : numpy.ndarray of shape (n_classes,)
        s_k.
    mean : numpy.ndarray of shape (n_classes, n_features)
        m_k (rows equal where the mean is shared).
    iterations : int
        Newton steps taken.
    converged : bool
        The last Newton step moved no s_k and no m_kw by more than the tolerance, relative
        (its convergence being quadratic, the answer is then within about tol² of the
        maximiser, to rounding).
    """

    concentration: np.ndarray
    mean: np.ndarray
    iterations: int
    converged: bool

    @property
    def alpha(self) -> np.ndarray:
        """α_k = s_k m_k, shape (n_classes, n_features)."""
        return self.concentration[:, None] * self.mean


def log_objective(
    histograms: CountHistograms,
    concentration,
    mean,
    *,
    concentration_prior: tuple[float, float] = (1.0, 0.0),
    mean_prior=1.0,
) -> float:
    """log p(X | y, s, m) + log p(s) + log p(m) without their normalising constants (and
    without a Jacobian: the density of s and m as named, which ``find_MAP`` maximises).

    s_k ~ Gamma(a, b) (rate b; b = 0 with a = 1 is flat) and every row m_k (or the shared m,
    counted once, where ``mean`` is one row) ~ Dirichlet(c), c a number or one per word.
    """
    concentration = np.asarray(concentration, dtype=np.float64)
    mean = np.asarray(mean, dtype=np.float64)
    shape, rate = concentration_prior
    full_mean = np.broadcast_to(mean, (histograms.n_classes, histograms.n_features))
    likelihood = histogram_log_likelihood(
        histograms, concentration[:, None] * full_mean, coefficient=False
    ).sum()
    weights = np.broadcast_to(np.asarray(mean_prior, dtype=np.float64), mean.shape[-1:]) - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_term = np.where(weights != 0, weights * np.log(mean), 0.0).sum()
        shape_term = (shape - 1.0) * np.log(concentration) if shape != 1.0 else 0.0 * concentration
    return float(likelihood + np.sum(shape_term - rate * concentration) + mean_term)


def fit_concentration(
    histograms: CountHistograms,
    *,
    shared_mean: bool = False,
    concentration_prior: tuple[float, float] = (1.0, 0.0),
    mean_prior=1.0,
    initial_concentration=None,
    initial_mean=None,
    tol: float = 1e-10,
    max_iter: int = 20_000,
) -> PointFit:
    """The mode of p(s, m | X, y): the evidence maximiser under the flat prior (the default).

    Newton's method on (s, m) under Σ m = 1, safeguarded (see
    :mod:`bayesgen.maths.dirichlet_multinomial_fit`): each step solves the KKT system of the
    objective's quadratic model exactly, in one pass over the histograms, and a step that
    would decrease the objective is halved, so it never decreases (but by rounding, near
    the maximum). It stops when a Newton step moves no s_k and no m_kw by more than ``tol``
    relative. Under the flat prior a word a class never shows gets m_kw = 0 (α = 0: the
    class then gives it probability 0), and data with no overdispersion push s towards ∞
    (the multinomial limit), where the search stops at ``max_iter`` unconverged; a Gamma
    prior with b > 0 and c > 1 keep the mode inside. A class that shows no word keeps s = 1
    and, under a flat prior of m, its starting m.

    Parameters
    ----------
    histograms : CountHistograms
    shared_mean : bool, default False
        One m for all the classes (they then differ by s alone) instead of one per class.
    concentration_prior : (a, b), default (1, 0)
        Gamma(a, b) on every s_k, a ≥ 1 (the mode exists), b ≥ 0 (b = 0, a = 1: flat).
    mean_prior : float or array-like of shape (n_features,), default 1.0
        Dirichlet(c) on m (each m_k), every c_w ≥ 1 (1: flat).
    initial_concentration : array-like of shape (n_classes,), optional
        Where s starts; default the s whose expected number of distinct words per document
        matches the documents'.
    initial_mean : array-like of shape (n_features,) or (n_classes, n_features), optional
        Where m starts; default each word's number of documents plus c − 1 (for a word a
        class never shows, under a flat prior, 0).
    tol : float
        The largest relative change of any s_k or m_kw in the last Newton step.
    max_iter : int
        The most Newton steps.

    Returns
    -------
    PointFit

    Examples
    --------
    Bursty documents: each uses one word many times. The fit finds a small s (strong
    overdispersion).

    >>> import numpy as np
    >>> from bayesgen.maths.dirichlet_multinomial import count_histograms, fit_concentration
    >>> X = np.array([[5, 0, 0], [0, 6, 0], [0, 0, 4], [4, 1, 0], [0, 0, 5], [1, 5, 0]])
    >>> fit = fit_concentration(count_histograms(X, np.zeros(6, dtype=int), 1))
    >>> fit.converged, float(fit.concentration.round(3)[0]) < 1
    (True, True)
    """
    shape, rate = (float(value) for value in concentration_prior)
    if not (shape >= 1.0 and rate >= 0.0):
        raise ValueError(
            f"concentration_prior: expected a Gamma (a, b) with a >= 1 and b >= 0; got "
            f"{concentration_prior!r}."
        )
    n_classes, n_features = histograms.n_classes, histograms.n_features
    extra = np.broadcast_to(np.asarray(mean_prior, dtype=np.float64), (n_features,)) - 1.0
    if np.any(extra < 0) or not np.all(np.isfinite(extra)):
        raise ValueError(f"mean_prior: expected Dirichlet concentrations >= 1; got {mean_prior!r}.")
    if initial_mean is not None:
        initial_mean = np.asarray(initial_mean, dtype=np.float64)
        if initial_mean.shape not in ((n_features,), (n_classes, n_features)) or not np.all(
            np.isfinite(initial_mean) & (initial_mean >= 0)
        ):
            raise ValueError(
                f"initial_mean: expected finite values >= 0 of shape ({n_features},) or "
                f"({n_classes}, {n_features}); got shape {initial_mean.shape}."
            )
        initial_mean = initial_mean / initial_mean.sum(axis=-1, keepdims=True)
    if initial_concentration is not None:
        initial_concentration = np.array(initial_concentration, dtype=np.float64)
        if initial_concentration.shape != (n_classes,) or not np.all(
            np.isfinite(initial_concentration) & (initial_concentration > 0)
        ):
            raise ValueError(
                f"initial_concentration: expected {n_classes} finite values > 0; got "
                f"{initial_concentration!r}."
            )
    concentration, mean, iterations, converged = newton_fit(
        histograms,
        shared=shared_mean,
        shape=shape,
        rate=rate,
        extra=np.array(extra),
        initial_concentration=initial_concentration,
        initial_mean=initial_mean,
        tol=tol,
        max_iter=max_iter,
    )
    return PointFit(concentration, mean, iterations, converged)


def dirichlet_multinomial_log_pmf(X, alpha) -> np.ndarray:
    """log DirMult(x_i | α_k) of every document (row of X) under every class, in full.

    Parameters
    ----------
    X : array-like or scipy.sparse matrix of shape (n_documents, n_features)
    alpha : array-like of shape (..., n_classes, n_features)
        Leading dims (posterior draws) are kept.

    Returns
    -------
    numpy.ndarray of shape (..., n_documents, n_classes)

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> from bayesgen.maths.dirichlet_multinomial import dirichlet_multinomial_log_pmf
    >>> X, alpha = np.array([[2, 0, 1]]), np.array([[0.5, 1.0, 2.0], [3.0, 1.0, 1.0]])
    >>> ours = dirichlet_multinomial_log_pmf(X, alpha)
    >>> scipy_values = [stats.dirichlet_multinomial.logpmf(X[0], a, 3) for a in alpha]
    >>> bool(np.allclose(ours[0], scipy_values, rtol=0, atol=1e-12))
    True
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    rows, cols, values = _nonzeros(X)
    n_documents = X.shape[0]
    lengths = np.zeros(n_documents)
    np.add.at(lengths, rows, values)
    coefficient = gammaln(lengths + 1.0)
    np.subtract.at(coefficient, rows, gammaln(values + 1.0))
    leading = alpha.shape[:-2]
    flat = alpha.reshape(-1, *alpha.shape[-2:])
    out = np.empty((flat.shape[0], n_documents, flat.shape[1]))
    for index, draw in enumerate(flat):
        total = draw.sum(axis=1)
        cell = draw[:, cols]  # (K, nnz)
        with np.errstate(divide="ignore", invalid="ignore"):
            rising = np.where(cell > 0, gammaln(cell + values) - gammaln(cell), -np.inf)
        words = np.zeros((n_documents, draw.shape[0]))
        np.add.at(words, rows, rising.T)
        out[index] = (
            words
            + gammaln(total)[None, :]
            - gammaln(lengths[:, None] + total[None, :])
            + coefficient[:, None]
        )
    return out.reshape(*leading, n_documents, alpha.shape[-2])


def simulate_documents(alpha_rows, lengths, rng, *, chunk: int = 512) -> sp.csr_array:
    """One document per row of ``alpha_rows`` with the given length, by the Pólya urn.

    The urn (start with α_w balls of colour w; draw one, put it back with another of its
    colour; n times) has the law DirMult(n, α), which is drawn here as θ ~ Dirichlet(α)
    (normalised Gamma(α_w) variates; α_w = 0 never drawn), then x ~ Multinomial(n, θ).

    Parameters
    ----------
    alpha_rows : array-like of shape (n_documents, n_features)
    lengths : array-like of int, shape (n_documents,)
    rng : numpy.random.Generator
    chunk : int
        Documents drawn at once (memory is chunk × n_features).

    Returns
    -------
    scipy.sparse.csr_array of shape (n_documents, n_features)

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.maths.dirichlet_multinomial import simulate_documents
    >>> docs = simulate_documents(np.ones((3, 4)), [5, 0, 2], np.random.default_rng(0))
    >>> docs.sum(axis=1).tolist()
    [5.0, 0.0, 2.0]
    """
    alpha_rows = np.asarray(alpha_rows, dtype=np.float64)
    lengths = np.asarray(lengths, dtype=np.int64)
    parts = []
    for start in range(0, alpha_rows.shape[0], chunk):
        block = alpha_rows[start : start + chunk]
        gammas = rng.gamma(np.where(block > 0, block, 1.0)) * (block > 0)
        totals = gammas.sum(axis=1, keepdims=True)
        theta = np.where(totals > 0, gammas / np.where(totals > 0, totals, 1.0), 0.0)
        # Rounding can leave Σθ a hair above 1, which the multinomial refuses.
        theta /= np.maximum(theta.sum(axis=1, keepdims=True), 1.0) * (1.0 + 1e-12)
        n = lengths[start : start + chunk]
        empty = theta.sum(axis=1) == 0
        counts = rng.multinomial(np.where(empty, 0, n), theta)
        parts.append(sp.csr_array(counts.astype(np.float64)))
    if not parts:
        return sp.csr_array((0, alpha_rows.shape[1]))
    return sp.vstack(parts, format="csr")
