"""The evidence (marginal likelihood) of Dirichlet–multinomial counts, as a function of λ.

Every naive Bayes model is a set of simplices, each a Dirichlet(λ, ..., λ) over O outcomes
whose draws are counted: c_o draws of outcome o, T = Σ_o c_o in all. Integrating the
probabilities out, the draws *in their order* have

    log p(draws | λ) = lnΓ(O λ) − lnΓ(T + O λ) + Σ_o [lnΓ(c_o + λ) − lnΓ(λ)],

with no multinomial coefficient: that of the counts (the bag, not the sequence) adds
log(T! / Π_o c_o!), which does not depend on λ. A zero count adds nothing to the sum, so
beyond one term per distinct (outcomes, total) pair only the distinct non-zero counts of each
class need a lnΓ: :class:`DirichletEvidence` reduces the counts to these once, and then
evaluates a grid of λ (or per-class λ) at the cost of the distinct counts, not of the cells.

GDA and QDA have the normal-inverse-Wishart evidence of :func:`niw_log_evidence`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.special import digamma, gammaln, multigammaln


class DirichletEvidence:
    """log p(counts | λ) of Dirichlet–multinomial simplices grouped by class, for any λ.

    Parameters
    ----------
    counts : numpy.ndarray of shape (n_classes, ..., n_outcomes)
        The counts; the last axis is a simplex, the first the class.
    mask : numpy.ndarray of bool, optional
        Which outcomes exist, broadcastable to ``counts`` (the categorical model's padding
        is False); by default all.
    weight : numpy.ndarray, optional
        The prior Dirichlet(λ w) of a shared-mean prior, w broadcastable to ``counts``
        (summing to the outcomes over each simplex); by default 1, Dirichlet(λ, ..., λ).
    name : str, default "alpha"
        The argument named in error messages.

    Notes
    -----
    Calling the object gives the log evidence at ``alpha``; :meth:`derivative` its
    derivative in λ (by the digamma function), for an optimiser. With ``weight`` the cell
    terms are lnΓ(c_o + λ w_o) − lnΓ(λ w_o) and O is Σ_o w_o; the distinct (count, weight)
    pairs then need a lnΓ each, about one per non-zero cell.
    """

    def __init__(self, counts, mask=None, *, weight=None, name: str = "alpha"):
        counts = np.asarray(counts, dtype=np.float64)
        mask = np.ones(counts.shape, dtype=bool) if mask is None else mask
        mask = np.broadcast_to(np.asarray(mask, dtype=bool), counts.shape)
        weights = None
        if weight is not None:
            weight = np.asarray(weight, dtype=np.float64)
            weights = np.broadcast_to(weight, counts.shape)
            # The weights take few distinct values (one per pooled count): with whole counts
            # a pair (count, weight) is one integer, count · n + the weight's code, which
            # np.unique sorts three times faster than the complex numbers below.
            values, codes = np.unique(weight, return_inverse=True)
            codes = np.broadcast_to(codes.reshape(weight.shape), counts.shape)
            whole = np.all(counts == np.round(counts)) and counts.max(initial=0) < 2**62 / max(
                values.size, 1
            )
            weight_codes = (values, codes) if whole else None
        self.name = name
        self.n_classes = counts.shape[0]
        cell_class, cell_value, cell_weight, cell_prior = [], [], [], []
        one_class, one_prior, one_weight = [], [], []
        simplex_class, simplex_outcomes, simplex_total, simplex_weight = [], [], [], []
        self.n_nonzero = np.zeros(self.n_classes)
        for k in range(self.n_classes):
            real = mask[k]
            used = real & (counts[k] != 0)
            values = counts[k][used]
            if weights is None:
                distinct, multiplicity = np.unique(values, return_counts=True)
                prior = np.ones(distinct.size)
            elif weight_codes is not None:
                distinct_weights, codes = weight_codes
                n_codes = distinct_weights.size
                keys, multiplicity = np.unique(
                    values.astype(np.int64) * n_codes + codes[k][used], return_counts=True
                )
                pairs = (keys // n_codes) + 1j * distinct_weights[keys % n_codes]
            else:  # a pair (count, weight) as one complex number, as below
                pairs, multiplicity = np.unique(values + 1j * weights[k][used], return_counts=True)
            if weights is not None:
                # A count of 1 adds lnΓ(1 + λw) − lnΓ(λw) = ln(λw), the most common case in
                # text: a log instead of two lnΓ.
                single = pairs.real == 1
                one_class.append(np.full(int(single.sum()), k))
                one_prior.append(pairs.imag[single])
                one_weight.append(multiplicity[single])
                pairs, multiplicity = pairs[~single], multiplicity[~single]
                distinct, prior = pairs.real, pairs.imag
            cell_class.append(np.full(distinct.size, k))
            cell_value.append(distinct)
            cell_weight.append(multiplicity)
            cell_prior.append(prior)
            self.n_nonzero[k] = values.size
            if weights is None:
                outcomes = real.sum(axis=-1).ravel().astype(np.float64)
            else:
                outcomes = np.where(real, weights[k], 0.0).sum(axis=-1).ravel()
            totals = np.where(real, counts[k], 0.0).sum(axis=-1).ravel()
            used = outcomes > 0  # a simplex without outcomes (no such feature) adds nothing
            outcomes, totals = outcomes[used], totals[used]
            if outcomes.size and np.all(outcomes == outcomes[0]) and np.all(totals == totals[0]):
                # One shape (the Bernoulli model's pairs of a class): no sort needed.
                pairs = np.array([outcomes[0] + 1j * totals[0]])
                multiplicity = np.array([outcomes.size])
            else:
                # One complex number a pair: np.unique sorts these ten times faster than rows.
                pairs, multiplicity = np.unique(outcomes + 1j * totals, return_counts=True)
            simplex_class.append(np.full(pairs.size, k))
            simplex_outcomes.append(pairs.real)
            simplex_total.append(pairs.imag)
            simplex_weight.append(multiplicity)
        self._cell_class = np.concatenate(cell_class)
        self._cell_value = np.concatenate(cell_value)
        self._cell_prior = None if weights is None else np.concatenate(cell_prior)
        if weights is not None:
            self._one_class = np.concatenate(one_class)
            self._one_prior = np.concatenate(one_prior)
            self._one_sum = _class_sum(np.concatenate(one_weight), self._one_class, self.n_classes)
        self._cell_sum = _class_sum(np.concatenate(cell_weight), self._cell_class, self.n_classes)
        self._simplex_class = np.concatenate(simplex_class)
        self._simplex_outcomes = np.concatenate(simplex_outcomes)
        self._simplex_total = np.concatenate(simplex_total)
        self._simplex_sum = _class_sum(
            np.concatenate(simplex_weight), self._simplex_class, self.n_classes
        )

    def _lambdas(self, alpha, per_class: bool) -> tuple[np.ndarray, tuple[int, ...]]:
        """λ as (n_points, n_classes) and the shape of the answer."""
        values = np.asarray(alpha, dtype=np.float64)
        bad = ~(np.isfinite(values) & (values > 0))
        if np.any(bad):
            raise ValueError(
                f"{self.name}: expected values > 0 (only a proper Dirichlet prior has an "
                f"evidence); got {np.atleast_1d(values)[np.atleast_1d(bad)][:5].tolist()}."
            )
        if not per_class:
            points = values.reshape(-1, 1)
            return np.broadcast_to(points, (points.shape[0], self.n_classes)), values.shape
        try:
            shape = np.broadcast_shapes(values.shape, (self.n_classes,))
        except ValueError:
            raise ValueError(
                f"{self.name}: with per_class=True expected a shape that broadcasts against "
                f"(n_classes,) = ({self.n_classes},) on its last axis; got shape "
                f"{values.shape}."
            ) from None
        return np.broadcast_to(values, shape).reshape(-1, self.n_classes), shape

    def __call__(self, alpha, *, per_class: bool = False) -> np.ndarray:
        """log p(counts | λ) at ``alpha``.

        Parameters
        ----------
        alpha : float or array-like
            λ > 0. Without ``per_class``, any shape: one λ for all classes at each value.
            With ``per_class=True``, a shape that broadcasts against ``(n_classes,)`` on
            its last axis: ``(..., n_classes)`` gives each class its own λ,
            ``(..., 1)`` or a scalar one λ for all.
        per_class : bool, default False
            Return the term of each class (last axis) instead of their sum.

        Returns
        -------
        numpy.ndarray
            Shape ``np.shape(alpha)``, or with ``per_class=True``
            ``np.broadcast_shapes(np.shape(alpha), (n_classes,))``; the sum over the last
            axis of the latter is the former.
        """
        lam, shape = self._lambdas(alpha, per_class)
        ls = lam[:, self._simplex_class]
        outcomes, total = self._simplex_outcomes, self._simplex_total
        simplices = gammaln(outcomes * ls) - gammaln(total + outcomes * ls)
        if self._cell_prior is None:
            cells = gammaln(self._cell_value + lam[:, self._cell_class])
            empty = self.n_nonzero * gammaln(lam)  # lnΓ(λ) once per non-zero cell
        else:
            prior = lam[:, self._cell_class] * self._cell_prior
            cells = gammaln(self._cell_value + prior) - gammaln(prior)
            empty = -(np.log(lam[:, self._one_class] * self._one_prior) @ self._one_sum)
        terms = cells @ self._cell_sum + simplices @ self._simplex_sum - empty
        return terms.reshape(shape) if per_class else terms.sum(axis=1).reshape(shape)

    def derivative(self, alpha, *, per_class: bool = False) -> np.ndarray:
        """d/dλ of :meth:`__call__` (same arguments and shapes): with per-class λ, the
        derivative of each class's term in its own λ."""
        lam, shape = self._lambdas(alpha, per_class)
        ls = lam[:, self._simplex_class]
        outcomes, total = self._simplex_outcomes, self._simplex_total
        simplices = outcomes * (digamma(outcomes * ls) - digamma(total + outcomes * ls))
        if self._cell_prior is None:
            cells = digamma(self._cell_value + lam[:, self._cell_class])
            empty = self.n_nonzero * digamma(lam)
        else:
            prior = lam[:, self._cell_class] * self._cell_prior
            cells = self._cell_prior * (digamma(self._cell_value + prior) - digamma(prior))
            empty = -((1.0 / lam[:, self._one_class]) @ self._one_sum)  # d ln(λw) / dλ
        terms = cells @ self._cell_sum + simplices @ self._simplex_sum - empty
        return terms.reshape(shape) if per_class else terms.sum(axis=1).reshape(shape)


def _class_sum(weight: np.ndarray, group: np.ndarray, n_classes: int) -> sp.csr_array:
    """(n_items, n_classes) matrix summing weighted items into their classes."""
    items = np.arange(group.size)
    return sp.csr_array((weight.astype(np.float64), (items, group)), shape=(group.size, n_classes))


def niw_log_evidence(class_count, prior: dict, posterior: dict) -> float:
    """log p(X | y) of Gaussian rows under a normal-inverse-Wishart prior, μ and Σ integrated out.

    Σ ~ InverseWishart(ν₀, Ψ₀) and μ_k | Σ ~ N(m₀, Σ / κ₀) independently per class. Given Σ,
    integrating each μ_k out of its N_k rows leaves
    (2π)^(−N_k D/2) |Σ|^(−N_k/2) (κ₀/κ_k)^(D/2) exp(−½ tr Σ⁻¹ [S_k + (κ₀ N_k/κ_k) d_k d_kᵀ]),
    d_k = x̄_k − m₀, and the bracket summed over the classes that share Σ is Ψ_N − Ψ₀. The
    inverse-Wishart integral of |Σ|^(−N/2) exp(−½ tr Σ⁻¹ (Ψ_N − Ψ₀)) then gives, per Σ,

        −(N D/2) log π + Σ_k (D/2) log(κ₀/κ_k) + (ν₀/2) log|Ψ₀| − (ν_N/2) log|Ψ_N|
        + ln Γ_D(ν_N/2) − ln Γ_D(ν₀/2),

    with N the rows and ν_N = ν₀ + N of that Σ: one Σ for GDA (K κ factors, one Ψ update),
    one per class for QDA (the sum of K such terms).

    Parameters
    ----------
    class_count : numpy.ndarray of shape (n_classes,)
    prior : dict
        ``kappa`` κ₀, ``dof`` ν₀, ``scale`` Ψ₀ (D, D).
    posterior : dict
        ``kappa`` κ_k (n_classes,) and ``dof``, ``scale``: a scalar ν_N and Ψ_N (D, D)
        shared by the classes (GDA), or one ν_k and Ψ_k (K, D, D) per class (QDA), as
        :func:`bayesgen.maths.gaussian.niw_posterior` returns them.
    """
    count = np.asarray(class_count, dtype=np.float64)
    prior_scale = np.asarray(prior["scale"], dtype=np.float64)
    n_features = prior_scale.shape[-1]
    scale = np.asarray(posterior["scale"], dtype=np.float64).reshape(-1, n_features, n_features)
    dof = np.broadcast_to(np.asarray(posterior["dof"], dtype=np.float64), scale.shape[:1])
    _, log_det = np.linalg.slogdet(scale)
    _, prior_log_det = np.linalg.slogdet(prior_scale)
    prior_dof = float(prior["dof"])
    per_covariance = (
        0.5 * prior_dof * prior_log_det
        - 0.5 * dof * log_det
        + np.array([multigammaln(0.5 * nu, n_features) for nu in dof])
        - multigammaln(0.5 * prior_dof, n_features)
    )
    kappa = np.asarray(posterior["kappa"], dtype=np.float64)
    return float(
        -0.5 * count.sum() * n_features * np.log(np.pi)
        + 0.5 * n_features * np.sum(np.log(prior["kappa"] / kappa))
        + per_covariance.sum()
    )


#: Cells counting at most this many rows take sums of logs instead of lnΓ differences.
_SMALL_COUNT = 4


class BetaBernoulliEvidence(DirichletEvidence):
    """log p(X | y, λ) of the Bernoulli model's features, φ_kj ~ Beta(λ w_j, λ (2 − w_j)),
    from the non-zero counts only.

    :class:`DirichletEvidence` of the (present, absent) pairs would need a term for every class
    and feature, since the absent count n_k − c_kj is not zero where the feature is rare. Here
    every feature starts as absent from all n_k rows of its class, which depends on the class
    and on w_j alone (w takes few values: one per pooled count), and only the cells with
    c_kj > 0 are corrected:

        Σ_j [lnΓ(n_k + b_j) − lnΓ(b_j)] + V [lnΓ(2λ) − lnΓ(n_k + 2λ)]
        + Σ_{c_kj > 0} [lnΓ(c + a_j) − lnΓ(a_j) + lnΓ(n_k − c + b_j) − lnΓ(n_k + b_j)],

    a_j = λ w_j and b_j = λ (2 − w_j) (w = 1: Beta(λ, λ)). The cost of an evaluation is that of
    the distinct (class, count, w) of the non-zero cells and of classes × distinct w, not of
    classes × features.

    Parameters
    ----------
    present : numpy.ndarray of shape (n_classes, n_features)
        The rows of each class that have each feature.
    class_count : numpy.ndarray of shape (n_classes,)
        The rows of each class, n_k.
    weight : numpy.ndarray of shape (n_features,), optional
        w_j; by default 1.
    name : str, default "alpha"
    """

    def __init__(self, present, class_count, weight=None, *, name: str = "alpha"):
        present = np.asarray(present, dtype=np.float64)
        rows = np.asarray(class_count, dtype=np.float64)
        self.name = name
        self.n_classes, n_features = present.shape
        weight = np.ones(n_features) if weight is None else np.asarray(weight, dtype=np.float64)
        self._weights, codes = np.unique(weight, return_inverse=True)
        self._code_count = np.bincount(codes, minlength=self._weights.size).astype(np.float64)
        self._rows = rows
        self._n_features = float(n_features)
        k, j = np.nonzero(present)
        n_codes = self._weights.size
        group, values = k * n_codes + codes[j], present[k, j]
        top = values.max(initial=0.0)
        if np.all(values == np.round(values)) and (top + 1) * n_codes * self.n_classes < 2**62:
            # Whole counts (the common case): a cell is one integer (class · codes + code) ·
            # (largest count + 1) + count, which np.unique sorts five times faster than ...
            size = int(top) + 1
            keys, multiplicity = np.unique(
                group * size + values.astype(np.int64), return_counts=True
            )
            group, self._cell_value = keys // size, (keys % size).astype(np.float64)
        else:  # ... the complex number (class · codes + code) + i count of weighted counts
            keys, multiplicity = np.unique(group + 1j * values, return_counts=True)
            group, self._cell_value = keys.real.astype(np.int64), keys.imag
        self._cell_class, self._cell_code = group // n_codes, group % n_codes
        self._cell_sum = _class_sum(multiplicity, self._cell_class, self.n_classes)
        # Most cells count a few rows: for a whole count c the lnΓ differences are sums of c
        # logs, lnΓ(c + a) − lnΓ(a) = Σ_{i<c} ln(a + i), and their derivatives sums of c
        # reciprocals, far cheaper than four lnΓ (or ψ) a cell.
        c = self._cell_value
        small = (c == np.round(c)) & (c <= _SMALL_COUNT)
        self._large = np.flatnonzero(~small)
        self._rising = [np.flatnonzero(small & (c > i)) for i in range(_SMALL_COUNT)]

    def _parts(self, lam: np.ndarray):
        """(a, b) of the cells and of every (class, distinct w), at λ (points, classes)."""
        w = self._weights
        cell_lam = lam[:, self._cell_class]
        cell_w = w[self._cell_code]
        return (
            cell_lam * cell_w,
            cell_lam * (2.0 - cell_w),
            lam[:, :, None] * (2.0 - w),  # b of the all-absent start (points, classes, codes)
        )

    def __call__(self, alpha, *, per_class: bool = False) -> np.ndarray:
        lam, shape = self._lambdas(alpha, per_class)
        a, b, b_all = self._parts(lam)
        rows = self._rows
        start = (gammaln(rows[None, :, None] + b_all) - gammaln(b_all)) @ self._code_count
        simplices = self._n_features * (gammaln(2.0 * lam) - gammaln(rows + 2.0 * lam))
        cell_rows = rows[self._cell_class]
        c = self._cell_value
        cells = np.zeros(a.shape)
        big = self._large
        ab, bb, cb, nb = a[:, big], b[:, big], c[big], cell_rows[big]
        cells[:, big] = gammaln(cb + ab) - gammaln(ab) + gammaln(nb - cb + bb) - gammaln(nb + bb)
        for i, cell in enumerate(self._rising):
            cells[:, cell] += np.log(a[:, cell] + i) - np.log(
                cell_rows[cell] - c[cell] + b[:, cell] + i
            )
        terms = start + simplices + cells @ self._cell_sum
        return terms.reshape(shape) if per_class else terms.sum(axis=1).reshape(shape)

    def derivative(self, alpha, *, per_class: bool = False) -> np.ndarray:
        lam, shape = self._lambdas(alpha, per_class)
        a, b, b_all = self._parts(lam)
        rows, w = self._rows, self._weights
        start = ((2.0 - w) * (digamma(rows[None, :, None] + b_all) - digamma(b_all))) @ (
            self._code_count
        )
        simplices = 2.0 * self._n_features * (digamma(2.0 * lam) - digamma(rows + 2.0 * lam))
        cell_rows = rows[self._cell_class]
        c, cell_w = self._cell_value, w[self._cell_code]
        cells = np.zeros(a.shape)
        big = self._large
        ab, bb, cb, nb, wb = a[:, big], b[:, big], c[big], cell_rows[big], cell_w[big]
        cells[:, big] = wb * (digamma(cb + ab) - digamma(ab)) + (2.0 - wb) * (
            digamma(nb - cb + bb) - digamma(nb + bb)
        )
        for i, cell in enumerate(self._rising):
            cells[:, cell] += cell_w[cell] / (a[:, cell] + i) - (2.0 - cell_w[cell]) / (
                cell_rows[cell] - c[cell] + b[:, cell] + i
            )
        terms = start + simplices + cells @ self._cell_sum
        return terms.reshape(shape) if per_class else terms.sum(axis=1).reshape(shape)
