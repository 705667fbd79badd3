"""Which features matter: relevance Bayes factors and naive Bayes averaged over feature subsets.

For a naive Bayes block each feature d is one of two models, given the training labels y:

* *relevant*, M₁: its distribution depends on the class, one parameter θ_kd per class, each
  with the block's prior;
* *shared*, M₀: one parameter θ_d for every class, with the same prior, the rows of all the
  classes pooled.

Both evidences are conjugate closed forms of the block's sufficient statistics, so

    log BF_d = Σ_k log p(x_{k,d} | M₁) − log p(x_{·,d} | M₀)

is exact: Beta-binomial (Bernoulli), Dirichlet-multinomial over the categories (categorical),
normal-inverse-gamma (Gaussian: mean *and* variance depend on the class), Gamma-Poisson (the
Σ log x! of the counts is the same under both and cancels). Under a prior inclusion
probability ρ the posterior probability of relevance is

    P_d = P(M₁ | data) = 1 / (1 + (1 − ρ) / ρ · exp(−log BF_d)) = expit(log BF_d + logit ρ).

The multinomial's per-word relevance is an approximation: a document's words are not
independent features, so "word w depends on the class" is scored on the collapsed two-outcome
model, the tokens of
each class split into (w, every other word). By the Dirichlet aggregation property the prior of
θ_kw is then Beta(α_w, α₀ − α_w) (α the model's pseudo-counts, α₀ their sum), and the Bayes
factor is the exact one of that collapsed model: Beta-binomial of (N_kw, N_k − N_kw) per class
against that of the pooled (N_w, N − N_w). It ignores what w's shift does to the other words.
Averaging over which words depend on the class is exact instead, on the multinomial written as a
Dirichlet tree of binary splits (:mod:`bayesgen.maths.word_tree`), whose nodes are independent.

Per class k, the *effect* compares the feature's parameter in class k with that of the other
classes pooled (one parameter for them, the pooled prior, their data together), from the exact
posteriors, which are independent: the log-odds logit θ_kc − logit θ_{−k,c} of a category (a
Beta marginal of the Dirichlet; mean ψ(a_k) − ψ(b_k) − ψ(a_o) + ψ(b_o) exactly), the log rate
ratio log λ_k − log λ_{−k} (Poisson), the standardised mean difference
(μ_k − μ_{−k}) / √((σ²_k + σ²_{−k}) / 2) (Gaussian); the equal-tailed interval from exact
draws (logit θ = log G_a − log G_b for G ~ Gamma). For words, Monroe, Colaresi and Quinn's
(2008) log-odds with an informative Dirichlet prior, z = δ / σ with
δ = log((y_k + α)/(n_k + α₀ − y_k − α)) − log((y_o + α)/(n_o + α₀ − y_o − α)) and
σ² = 1/(y_k + α) + 1/(y_o + α) (:func:`informative_dirichlet_z`).

Averaging over all 2^D feature subsets (Dash and Cooper, ICML 2002). Let s ∈ {0, 1}^D say
which features are relevant, a priori independent with P(s_d = 1) = ρ. Given s and y the
features are conditionally independent with independent priors, so the evidence factorises,
p(X | y, s) = Π_d E_d(s_d), and the posterior over subsets is a product of independent
Bernoullis with P(s_d = 1 | D) = P_d above. The class prior does not depend on s. The
predictive of a new row, parameters integrated out given s, is

    p(x, y = k | D, s) = p(y = k | D) Π_d p_{s_d}(x_d | k, D),

p₁ the class-k posterior predictive of feature d, p₀ the pooled one. Averaging over
p(s | D) = Π_d P_d^{s_d} (1 − P_d)^{1 − s_d}, each s_d enters one factor only, so the sum over
the 2^D subsets is a product of D sums of two terms:

    p(x, y = k | D) = p(y = k | D) Π_d [P_d p₁(x_d | k, D) + (1 − P_d) p₀(x_d | D)],

exact in time linear in D, and p(y = k | x, D) is its normalisation over k. The weights are the
posterior inclusion probabilities of the *training* data: the factorisation holds for the
average of the joint p(x, y | D, s). Averaging the conditionals p(y | x, D, s) with those weights
is not the Bayesian answer (it ignores that x itself is evidence about s, p(s | D, x)), and it
does not factorise; normalising the averaged joint over k is, and does.

Exact leave-one-out. Each evidence is a product of sequential predictives, so leaving row i
(class c) out divides it by its predictive given the others:
log BF_d^{(−i)} = log BF_d − log p₁(x_id | c, D_{−i}) + log p₀(x_id | D_{−i}), and then
p(x_i, y = k | D_{−i}) is the formula above with P_d^{(−i)} and the predictives of D_{−i}
(class c's cells less row i, the pooled cells less row i). All rows at once, no refit.

A missing entry (NaN) is missing at random: its factor is 1 under both models, so it drops out
of the evidence (the cells count their observed rows) and of the predictive.

NumPy and SciPy only. The cell classes (:class:`DirichletCells`, :class:`NormalInverseGammaCells`,
:class:`GammaPoissonCells`, and :class:`~bayesgen.maths.word_tree.WordTreeCells` for words)
hold a block's statistics as arrays and give the per-cell evidence, predictives, their
leave-one-out forms and the effects; the functions below combine them, a chunk of rows at a
time (a sparse X is densified one chunk at a time).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.special import digamma, gammaln, log_expit, logit, polygamma

from bayesgen.maths import normal_inverse_gamma as nig

__all__ = [
    "DirichletCells",
    "GammaPoissonCells",
    "NormalInverseGammaCells",
    "averaged_log_likelihood",
    "averaged_loo_log_likelihood",
    "bernoulli_cells",
    "check_prior_inclusion",
    "informative_dirichlet_z",
    "log_bayes_factor",
    "relevance_probability",
    "word_split_cells",
]

#: Cells × rows of predictive densities held at once while averaging.
_CHUNK = 2**22


def check_prior_inclusion(value, name: str = "prior_inclusion") -> float:
    """ρ, refused unless a number strictly between 0 and 1.

    Examples
    --------
    >>> from bayesgen.maths.feature_relevance import check_prior_inclusion
    >>> check_prior_inclusion(0.25)
    0.25
    >>> check_prior_inclusion(1.0)
    Traceback (most recent call last):
        ...
    ValueError: prior_inclusion: expected a probability strictly between 0 and 1 (the prior \
probability that a feature depends on the class); got 1.0.
    """
    try:
        rho = float(value)
    except (TypeError, ValueError):
        rho = np.nan
    if not 0.0 < rho < 1.0:
        raise ValueError(
            f"{name}: expected a probability strictly between 0 and 1 (the prior probability "
            f"that a feature depends on the class); got {value!r}."
        )
    return rho


def relevance_probability(log_bayes_factor, prior_inclusion: float = 0.5) -> np.ndarray:
    """P(relevant | data) = expit(log BF + logit ρ).

    Examples
    --------
    >>> from bayesgen.maths.feature_relevance import relevance_probability
    >>> relevance_probability([0.0, 2.0], 0.5).round(4).tolist()
    [0.5, 0.8808]
    """
    rho = check_prior_inclusion(prior_inclusion)
    return np.exp(log_expit(np.asarray(log_bayes_factor, dtype=np.float64) + logit(rho)))


def log_bayes_factor(cells) -> np.ndarray:
    """log BF_d of "depends on the class" against "one distribution for all", shape (D,).

    Examples
    --------
    One binary feature, present in 3 of 3 rows of class 0 and 0 of 3 of class 1, Beta(1, 1):
    the relevant model's evidence is (1/4)², the shared one's 3! 3! / 7!.

    >>> import numpy as np
    >>> from bayesgen.maths.feature_relevance import bernoulli_cells, log_bayes_factor
    >>> cells = bernoulli_cells([[3.0], [0.0]], [[3.0], [3.0]], 1.0, 1.0)
    >>> bool(np.isclose(log_bayes_factor(cells)[0], np.log(140 / 16)))
    True
    """
    return cells.log_evidence().sum(axis=0) - cells.pooled().log_evidence()[0]


def averaged_log_likelihood(cells, X, prior_inclusion: float = 0.5) -> np.ndarray:
    """Σ_d log[P_d p₁(x_d | k, D) + (1 − P_d) p₀(x_d | D)] of each row and class, (n, K): the
    feature term of the naive Bayes averaged over all feature subsets (module docstring); add
    log p(y = k | D) for the joint."""
    rho = check_prior_inclusion(prior_inclusion)
    z = log_bayes_factor(cells) + logit(rho)
    pooled = cells.pooled()
    out = []
    for rows in _row_chunks(X, cells):
        relevant, shared = cells.log_predictive(rows), pooled.log_predictive(rows)
        out.append(_mixture(z, relevant, shared))
    return np.concatenate(out) if out else np.zeros((0, cells.n_classes))


def averaged_loo_log_likelihood(cells, X, y_codes, prior_inclusion: float = 0.5) -> np.ndarray:
    """:func:`averaged_log_likelihood` of each training row i with row i left out of
    everything: the cells, the pooled cells and the inclusion probabilities (module
    docstring). X and ``y_codes`` are the (unweighted) rows the cells were counted from."""
    rho = check_prior_inclusion(prior_inclusion)
    log_bf = log_bayes_factor(cells)
    pooled = cells.pooled()
    y_codes = np.asarray(y_codes, dtype=np.int64)
    out, start = [], 0
    for rows in _row_chunks(X, cells):
        labels = y_codes[start : start + rows.shape[0]]
        start += rows.shape[0]
        relevant = cells.loo_log_predictive(rows, labels)
        shared = pooled.loo_log_predictive(rows, np.zeros_like(labels))
        own = relevant[np.arange(labels.size), labels]  # (n, D): row i's own-class factor
        z = log_bf[None, :] - own + shared[:, 0] + logit(rho)
        out.append(_mixture(z[:, None, :], relevant, shared))
    return np.concatenate(out) if out else np.zeros((0, cells.n_classes))


def _mixture(z, relevant: np.ndarray, shared: np.ndarray) -> np.ndarray:
    """Σ_d log(expit(z) e^relevant + expit(−z) e^shared) over the last axis."""
    return np.logaddexp(log_expit(z) + relevant, log_expit(-z) + shared).sum(axis=-1)


def _row_chunks(X, cells):
    """Dense float rows of X, a chunk at a time; a sparse X (word counts) is densified one
    chunk at a time only."""
    X = sp.csr_array(X) if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    size = max(1, _CHUNK // max(1, cells.n_classes * X.shape[1]))
    for start in range(0, X.shape[0], size):
        rows = X[start : start + size]
        yield rows.toarray().astype(np.float64) if sp.issparse(rows) else rows


def _equal_tailed(draws: np.ndarray, prob: float) -> tuple[np.ndarray, np.ndarray]:
    """The equal-tailed ``prob`` interval over the first axis."""
    tail = 0.5 * (1.0 - prob)
    lower, upper = np.quantile(draws, [tail, 1.0 - tail], axis=0)
    return lower, upper


def _log_gamma_draws(rng, shape: np.ndarray, n_draws: int) -> np.ndarray:
    """log G, G ~ Gamma(shape, 1), without underflow at small shapes:
    G_a = G_{a+1} U^{1/a} in law."""
    shape = np.asarray(shape, dtype=np.float64)
    size = (n_draws, *shape.shape)
    return np.log(rng.standard_gamma(shape + 1.0, size=size)) + np.log(rng.random(size)) / shape


def _others(values: np.ndarray) -> np.ndarray:
    """Σ over the classes other than k, for every k (first axis)."""
    return values.sum(axis=0, keepdims=True) - values


class DirichletCells:
    """Category counts per (class, feature) under Dirichlet priors, for relevance.

    Parameters
    ----------
    counts : array-like of shape (K, D, C)
        The (weighted) rows of class k with feature d in category c.
    prior : array-like broadcastable to (K, D, C)
        The Dirichlet concentration of every cell's categories (one per class where λ is).
    mask : array-like of bool of shape (D, C), optional
        The real categories (the categorical model's padding is False); by default all.
    pooled_prior : array-like of shape (D, C), optional
        The concentration of the shared model; by default ``prior`` averaged over the classes.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.maths.feature_relevance import DirichletCells, log_bayes_factor
    >>> counts = np.array([[[4.0, 0.0, 0.0]], [[0.0, 0.0, 4.0]]])  # 2 classes, 1 feature
    >>> bool(log_bayes_factor(DirichletCells(counts, 1.0))[0] > 0)
    True
    """

    def __init__(self, counts, prior, mask=None, pooled_prior=None):
        self.counts = np.asarray(counts, dtype=np.float64)
        self.mask = (
            np.ones(self.counts.shape[1:], dtype=bool)
            if mask is None
            else np.broadcast_to(np.asarray(mask, dtype=bool), self.counts.shape[1:])
        )
        prior = np.broadcast_to(np.asarray(prior, dtype=np.float64), self.counts.shape)
        self.prior = np.where(self.mask, prior, 0.0)
        if pooled_prior is None:
            pooled_prior = self.prior.mean(axis=0)
        self.pooled_prior = np.where(self.mask, pooled_prior, 0.0)
        self.n_classes = self.counts.shape[0]

    def subset(self, features) -> DirichletCells:
        """The cells of the features ``features`` (indices) alone."""
        return DirichletCells(
            self.counts[:, features],
            self.prior[:, features],
            self.mask[features],
            self.pooled_prior[features],
        )

    def pooled(self) -> DirichletCells:
        """The shared model: every class's counts in one cell per feature."""
        counts = self.counts.sum(axis=0, keepdims=True)
        return DirichletCells(counts, self.pooled_prior[None], self.mask, self.pooled_prior)

    def _posterior(self) -> np.ndarray:
        return np.where(self.mask, self.counts + self.prior, 1.0)  # 1: padding, log 0

    def log_evidence(self) -> np.ndarray:
        """log p(counts of cell (k, d)), the rows in order, shape (K, D): lnΓ(A) − lnΓ(A + T)
        + Σ_c [lnΓ(n_c + a_c) − lnΓ(a_c)] over the real categories."""
        prior = np.where(self.mask, self.prior, 1.0)
        post = self._posterior()
        total = np.where(self.mask, self.counts, 0.0).sum(axis=-1)
        prior_total = self.prior.sum(axis=-1)
        return (
            gammaln(prior_total)
            - gammaln(prior_total + total)
            + np.where(self.mask, gammaln(post) - gammaln(prior), 0.0).sum(axis=-1)
        )

    def _codes(self, X) -> tuple[np.ndarray, np.ndarray]:
        X = np.asarray(X, dtype=np.float64)
        missing = np.isnan(X)
        return np.where(missing, 0, X).astype(np.int64), missing

    def log_predictive(self, X) -> np.ndarray:
        """log p(x_d | class k, data) of category codes X (n, D), NaN missing (0), (n, K, D)."""
        codes, missing = self._codes(X)
        post = self._posterior()
        total = (self.counts + self.prior).sum(axis=-1)  # (K, D)
        features = np.arange(codes.shape[1])
        cell = post[:, features[None, :], codes]  # (K, n, D)
        out = np.log(cell) - np.log(total)[:, None, :]
        return np.where(missing[None], 0.0, out).transpose(1, 0, 2)

    def loo_log_predictive(self, X, y_codes) -> np.ndarray:
        """:meth:`log_predictive` with each row left out of its own class's cells."""
        codes, missing = self._codes(X)
        out = self.log_predictive(X)
        rows = np.arange(codes.shape[0])
        features = np.arange(codes.shape[1])
        # A missing entry was counted nowhere: nothing to take out (and its factor is 1).
        taken = np.where(missing, 0.0, 1.0)
        own = self._posterior()[y_codes[:, None], features[None, :], codes] - taken
        total = (self.counts + self.prior).sum(axis=-1)[y_codes] - taken
        out[rows, y_codes] = np.where(missing, 0.0, np.log(own) - np.log(total))
        return out

    def _beta_pairs(self):
        """(a, b) of θ_kdc's Beta marginal for class k and for the other classes pooled."""
        total = (self.counts + self.prior).sum(axis=-1, keepdims=True)
        a = self.counts + self.prior
        others = _others(self.counts)
        a_o = others + self.pooled_prior[None]
        b_o = others.sum(axis=-1, keepdims=True) + self.pooled_prior.sum(axis=-1)[None, :, None]
        return a, total - a, a_o, b_o - a_o

    def effects(self, *, prob: float = 0.94, n_draws: int = 1000, rng=None) -> dict:
        """logit θ_kdc − logit θ_{−k,dc}: ``mean`` (exact), ``sd`` (exact), ``lower`` and
        ``upper`` (equal-tailed ``prob``, from ``n_draws`` exact draws), each (K, D, C);
        NaN in padding."""
        rng = np.random.default_rng(rng)
        a, b, a_o, b_o = (np.where(self.mask, part, 1.0) for part in self._beta_pairs())
        mean = digamma(a) - digamma(b) - digamma(a_o) + digamma(b_o)
        sd = np.sqrt(sum(polygamma(1, part) for part in (a, b, a_o, b_o)))
        draws = (
            _log_gamma_draws(rng, a, n_draws)
            - _log_gamma_draws(rng, b, n_draws)
            - _log_gamma_draws(rng, a_o, n_draws)
            + _log_gamma_draws(rng, b_o, n_draws)
        )
        lower, upper = _equal_tailed(draws, prob)
        pad = ~self.mask[None]
        return {
            name: np.where(pad, np.nan, value)
            for name, value in {"mean": mean, "sd": sd, "lower": lower, "upper": upper}.items()
        }


def bernoulli_cells(present, rows, prior_present, prior_absent) -> DirichletCells:
    """A Bernoulli block's cells: categories (absent, present), so a 0/1 X is its own code.

    Parameters
    ----------
    present : array-like of shape (K, D)
        The rows of class k with feature d.
    rows : array-like broadcastable to (K, D)
        The rows of class k observed at feature d (N_k without missing entries).
    prior_present, prior_absent : array-like broadcastable to (K, D)
        φ's prior Beta(a, b).
    """
    present = np.asarray(present, dtype=np.float64)
    absent = np.broadcast_to(np.asarray(rows, dtype=np.float64), present.shape) - present
    a = np.broadcast_to(np.asarray(prior_present, dtype=np.float64), present.shape)
    b = np.broadcast_to(np.asarray(prior_absent, dtype=np.float64), present.shape)
    return DirichletCells(np.stack([absent, present], axis=-1), np.stack([b, a], axis=-1))


def word_split_cells(counts, prior) -> DirichletCells:
    """The multinomial's approximation: each word against the rest, categories (word, rest).

    Parameters
    ----------
    counts : array-like of shape (K, V)
        Tokens of word w in class k.
    prior : array-like broadcastable to (K, V)
        The Dirichlet pseudo-counts α_kw; the rest's is Σ_v α_kv − α_kw (aggregation).
    """
    counts = np.asarray(counts, dtype=np.float64)
    prior = np.broadcast_to(np.asarray(prior, dtype=np.float64), counts.shape)
    rest = counts.sum(axis=1, keepdims=True) - counts
    rest_prior = prior.sum(axis=1, keepdims=True) - prior
    return DirichletCells(np.stack([counts, rest], axis=-1), np.stack([prior, rest_prior], -1))


def informative_dirichlet_z(counts, prior) -> np.ndarray:
    """Monroe, Colaresi and Quinn's (2008) z-scores of every word in every class against the
    other classes, under the Dirichlet prior α (their informative prior where α is the
    pooled frequencies times a strength; see the module docstring), shape (K, V).

    Examples
    --------
    >>> from bayesgen.maths.feature_relevance import informative_dirichlet_z
    >>> z = informative_dirichlet_z([[9.0, 1.0], [1.0, 9.0]], [1.0, 1.0])
    >>> z.round(3).tolist()
    [[4.156, -4.156], [-4.156, 4.156]]
    """
    counts = np.asarray(counts, dtype=np.float64)
    prior = np.broadcast_to(np.asarray(prior, dtype=np.float64), counts.shape)
    prior_total = prior.sum(axis=1, keepdims=True)
    total = counts.sum(axis=1, keepdims=True)
    others, others_total = _others(counts), _others(total)
    own = counts + prior
    other = others + prior
    delta = np.log(own / (total + prior_total - own)) - np.log(
        other / (others_total + prior_total - other)
    )
    return delta / np.sqrt(1.0 / own + 1.0 / other)


class NormalInverseGammaCells:
    """Gaussian cells (count, mean, sum of squares) under one normal-inverse-gamma prior.

    Parameters
    ----------
    count, mean, sum_squares : array-like of shape (K, D)
        n_kd, x̄_kd and S_kd of every cell (over its observed rows).
    prior : dict
        ``mean`` m₀ (D,), ``kappa`` κ₀, ``shape`` a₀, ``scale`` b₀ (D,)
        (:mod:`bayesgen.maths.normal_inverse_gamma`).
    """

    def __init__(self, count, mean, sum_squares, prior: dict):
        self.mean = np.asarray(mean, dtype=np.float64)
        self.count = np.broadcast_to(np.asarray(count, dtype=np.float64), self.mean.shape)
        self.sum_squares = np.asarray(sum_squares, dtype=np.float64)
        self.prior = prior
        self.n_classes = self.mean.shape[0]

    def subset(self, features) -> NormalInverseGammaCells:
        prior = dict(self.prior)
        for name in ("mean", "scale"):
            prior[name] = np.broadcast_to(prior[name], self.mean.shape[1:])[features]
        return NormalInverseGammaCells(
            self.count[:, features], self.mean[:, features], self.sum_squares[:, features], prior
        )

    def pooled(self) -> NormalInverseGammaCells:
        count, mean, squares = _pool_moments(self.count, self.mean, self.sum_squares)
        return NormalInverseGammaCells(count, mean, squares, self.prior)

    def posterior(self) -> dict:
        return nig.posterior(self.count, self.mean, self.sum_squares, self.prior)

    def log_evidence(self) -> np.ndarray:
        return nig.log_evidence(self.count, self.prior, self.posterior())

    def log_predictive(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        post = self.posterior()
        out = _student_t(X[:, None, :], *(post[n][None] for n in _NIG))
        return np.where(np.isnan(X)[:, None, :], 0.0, out)

    def loo_log_predictive(self, X, y_codes) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        out = self.log_predictive(X)
        post = self.posterior()
        mean, kappa, shape, scale = (post[n][y_codes] for n in _NIG)
        left = kappa - 1.0
        held_mean = (kappa * mean - X) / left
        held_scale = scale - 0.5 * kappa * np.square(X - mean) / left
        own = _student_t(X, held_mean, left, shape - 0.5, held_scale)
        out[np.arange(X.shape[0]), y_codes] = np.where(np.isnan(X), 0.0, own)
        return out

    def effects(self, *, prob: float = 0.94, n_draws: int = 1000, rng=None) -> dict:
        """(μ_k − μ_{−k}) / √((σ²_k + σ²_{−k}) / 2), from exact draws: ``mean``, ``sd``,
        ``lower``, ``upper``, each (K, D)."""
        rng = np.random.default_rng(rng)
        own = self.posterior()
        count, mean, squares = _pool_moments(self.count, self.mean, self.sum_squares, others=True)
        other = nig.posterior(count, mean, squares, self.prior)
        mu_k, var_k = nig.normal_inverse_gamma_draws(own, rng, (n_draws,))
        mu_o, var_o = nig.normal_inverse_gamma_draws(other, rng, (n_draws,))
        draws = (mu_k - mu_o) / np.sqrt(0.5 * (var_k + var_o))
        lower, upper = _equal_tailed(draws, prob)
        return {"mean": draws.mean(axis=0), "sd": draws.std(axis=0), "lower": lower, "upper": upper}


_NIG = ("mean", "kappa", "shape", "scale")


def _student_t(x, mean, kappa, shape, scale):
    """log of the normal-inverse-gamma predictive, Student-t with 2a degrees of freedom,
    location m and scale² b (κ + 1) / (a κ)."""
    spread = 2.0 * scale * (kappa + 1.0) / kappa
    with np.errstate(invalid="ignore"):  # NaN x: dropped by the caller
        return (
            gammaln(shape + 0.5)
            - gammaln(shape)
            - 0.5 * np.log(np.pi * spread)
            - (shape + 0.5) * np.log1p(np.square(x - mean) / spread)
        )


def _pool_moments(count, mean, squares, *, others: bool = False):
    """Count, mean and sum of squares of all the classes' rows together, (1, D); with
    ``others`` those of the classes other than k, for every k, (K, D)."""
    total = count.sum(axis=0, keepdims=True)
    weighted = (count * mean).sum(axis=0, keepdims=True)
    moment = (squares + count * np.square(mean)).sum(axis=0, keepdims=True)  # Σ x²
    if others:
        total = total - count
        weighted = weighted - count * mean
        moment = moment - (squares + count * np.square(mean))
    safe = np.where(total > 0, total, 1.0)
    pooled_mean = np.where(total > 0, weighted / safe, 0.0)
    pooled_squares = np.maximum(moment - total * np.square(pooled_mean), 0.0)
    return total, pooled_mean, pooled_squares


class GammaPoissonCells:
    """Poisson cells (sum of the counts S_kd, exposure n_kd) under one Gamma(a₀, b₀) prior.

    The evidences leave out Σ log x!, the same under both models.
    """

    def __init__(self, total, exposure, prior_shape: float, prior_rate: float):
        self.total = np.asarray(total, dtype=np.float64)
        self.exposure = np.broadcast_to(np.asarray(exposure, dtype=np.float64), self.total.shape)
        self.prior_shape, self.prior_rate = float(prior_shape), float(prior_rate)
        self.n_classes = self.total.shape[0]

    def subset(self, features) -> GammaPoissonCells:
        return GammaPoissonCells(
            self.total[:, features], self.exposure[:, features], self.prior_shape, self.prior_rate
        )

    def pooled(self) -> GammaPoissonCells:
        return GammaPoissonCells(
            self.total.sum(axis=0, keepdims=True),
            self.exposure.sum(axis=0, keepdims=True),
            self.prior_shape,
            self.prior_rate,
        )

    def _posterior(self):
        return self.prior_shape + self.total, self.prior_rate + self.exposure

    def log_evidence(self) -> np.ndarray:
        a0, b0 = self.prior_shape, self.prior_rate
        shape, rate = self._posterior()
        return a0 * np.log(b0) - gammaln(a0) + gammaln(shape) - shape * np.log(rate)

    def log_predictive(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        shape, rate = self._posterior()
        out = _negative_binomial(X[:, None, :], shape[None], rate[None])
        return np.where(np.isnan(X)[:, None, :], 0.0, out)

    def loo_log_predictive(self, X, y_codes) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        out = self.log_predictive(X)
        shape, rate = self._posterior()
        own = _negative_binomial(X, shape[y_codes] - X, rate[y_codes] - 1.0)
        out[np.arange(X.shape[0]), y_codes] = np.where(np.isnan(X), 0.0, own)
        return out

    def effects(self, *, prob: float = 0.94, n_draws: int = 1000, rng=None) -> dict:
        """log λ_k − log λ_{−k}: exact ``mean`` and ``sd``, ``lower``/``upper`` from exact
        draws, each (K, D)."""
        rng = np.random.default_rng(rng)
        shape, rate = self._posterior()
        shape_o = self.prior_shape + _others(self.total)
        rate_o = self.prior_rate + _others(self.exposure)
        mean = digamma(shape) - np.log(rate) - digamma(shape_o) + np.log(rate_o)
        sd = np.sqrt(polygamma(1, shape) + polygamma(1, shape_o))
        draws = (
            _log_gamma_draws(rng, shape, n_draws)
            - np.log(rate)
            - _log_gamma_draws(rng, shape_o, n_draws)
            + np.log(rate_o)
        )
        lower, upper = _equal_tailed(draws, prob)
        return {"mean": mean, "sd": sd, "lower": lower, "upper": upper}


def _negative_binomial(x, shape, rate):
    with np.errstate(invalid="ignore"):  # NaN x: dropped by the caller
        return (
            gammaln(shape + x)
            - gammaln(shape)
            - gammaln(x + 1.0)
            + shape * np.log(rate / (rate + 1.0))
            - x * np.log1p(rate)
        )
