"""Which features matter: relevance Bayes factors against quadrature and closed forms written
out here, feature averaging against a brute-force average over every subset, calibration of
P(relevant), and the refusals (bayesgen.maths.feature_relevance,
bayesgen.estimators.feature_relevance)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import betaln, digamma

from bayesgen.maths import feature_relevance as fr

# -- the Bayes factors, each against an independent computation ------------------------------


def bernoulli_evidence_by_quadrature(x, a, b):
    """∫ Π_i φ^x_i (1 − φ)^(1 − x_i) Beta(φ; a, b) dφ."""
    ones, zeros = np.sum(x), np.size(x) - np.sum(x)
    value, _ = integrate.quad(
        lambda p: p**ones * (1 - p) ** zeros * stats.beta.pdf(p, a, b), 0, 1, epsabs=1e-14
    )
    return np.log(value)


def test_bernoulli_bayes_factor_equals_quadrature():
    x = {0: np.array([1, 1, 0, 1]), 1: np.array([0, 0, 1])}
    a, b = 0.7, 1.3
    relevant = sum(bernoulli_evidence_by_quadrature(v, a, b) for v in x.values())
    shared = bernoulli_evidence_by_quadrature(np.concatenate(list(x.values())), a, b)
    cells = fr.bernoulli_cells([[3.0], [1.0]], [[4.0], [3.0]], a, b)
    assert fr.log_bayes_factor(cells)[0] == pytest.approx(relevant - shared, abs=1e-9)


def test_categorical_bayes_factor_equals_quadrature_over_the_simplex():
    counts = np.array([[[2.0, 0.0, 1.0]], [[0.0, 3.0, 1.0]]])  # 2 classes, 1 feature, 3 codes
    alpha = np.array([0.5, 1.0, 2.0])

    def evidence(n):
        def integrand(p2, p1):
            p = np.array([p1, p2, 1 - p1 - p2])
            return np.prod(p**n) * stats.dirichlet.pdf(p, alpha)

        value, _ = integrate.dblquad(integrand, 0, 1, 0, lambda p1: 1 - p1, epsabs=1e-13)
        return np.log(value)

    relevant = evidence(counts[0, 0]) + evidence(counts[1, 0])
    shared = evidence(counts.sum(axis=0)[0])
    cells = fr.DirichletCells(counts, alpha)
    assert fr.log_bayes_factor(cells)[0] == pytest.approx(relevant - shared, rel=1e-6)


def test_categorical_padding_is_no_category():
    counts = np.array([[[2.0, 1.0, 0.0]], [[0.0, 3.0, 0.0]]])
    padded = fr.DirichletCells(counts, 1.0, mask=[[True, True, False]])
    two = fr.DirichletCells(counts[..., :2], 1.0)
    assert fr.log_bayes_factor(padded) == pytest.approx(fr.log_bayes_factor(two), abs=1e-12)


def test_gaussian_bayes_factor_equals_the_multivariate_t_marginal():
    # Under μ | σ² ~ N(m₀, σ²/κ₀), σ² ~ Inv-Gamma(a₀, b₀), n rows are jointly multivariate t
    # with 2 a₀ degrees of freedom, location m₀ and shape (b₀/a₀)(I + 11ᵀ/κ₀).
    m0, k0, a0, b0 = 0.5, 0.8, 1.5, 2.0
    rows = {0: np.array([0.1, 1.3, 0.7]), 1: np.array([3.0, 2.2])}

    def evidence(x):
        shape = b0 / a0 * (np.eye(x.size) + np.ones((x.size, x.size)) / k0)
        return stats.multivariate_t.logpdf(x, np.full(x.size, m0), shape, df=2 * a0)

    relevant = sum(evidence(x) for x in rows.values())
    shared = evidence(np.concatenate(list(rows.values())))
    count = np.array([[3.0], [2.0]])
    mean = np.array([[rows[0].mean()], [rows[1].mean()]])
    squares = np.array([[np.sum((rows[k] - rows[k].mean()) ** 2)] for k in (0, 1)])
    prior = {"mean": np.array([m0]), "kappa": k0, "shape": a0, "scale": np.array([b0])}
    cells = fr.NormalInverseGammaCells(count, mean, squares, prior)
    assert fr.log_bayes_factor(cells)[0] == pytest.approx(relevant - shared, abs=1e-9)


def test_poisson_bayes_factor_equals_quadrature():
    a0, b0 = 1.5, 0.7
    rows = {0: np.array([3, 5, 2]), 1: np.array([0, 1])}

    def evidence(x):
        value, _ = integrate.quad(
            lambda lam: np.prod(stats.poisson.pmf(x, lam)) * stats.gamma.pdf(lam, a0, scale=1 / b0),
            0,
            np.inf,
            epsabs=1e-15,
        )
        return np.log(value)

    relevant = sum(evidence(x) for x in rows.values())
    shared = evidence(np.concatenate(list(rows.values())))
    cells = fr.GammaPoissonCells([[10.0], [1.0]], [[3.0], [2.0]], a0, b0)
    assert fr.log_bayes_factor(cells)[0] == pytest.approx(relevant - shared, abs=1e-8)


def test_word_split_bayes_factor_is_the_collapsed_beta_binomial():
    # Tokens of word 0 against the rest, per class; prior of θ_k0 Beta(α_0, α_1 + α_2).
    counts = np.array([[5.0, 2.0, 1.0], [1.0, 4.0, 3.0]])
    alpha = np.array([0.5, 1.0, 1.5])
    a, b = alpha[0], alpha[1:].sum()

    def evidence(word, rest):
        value, _ = integrate.quad(
            lambda p: p**word * (1 - p) ** rest * stats.beta.pdf(p, a, b), 0, 1, epsabs=1e-15
        )
        return np.log(value)

    relevant = evidence(5, 3) + evidence(1, 7)
    shared = evidence(6, 10)
    cells = fr.word_split_cells(counts, alpha)
    assert fr.log_bayes_factor(cells)[0] == pytest.approx(relevant - shared, rel=1e-7)


def test_relevance_probability_is_the_posterior_odds():
    log_bf = np.array([-3.0, 0.0, 4.0])
    rho = 0.2
    odds = np.exp(log_bf) * rho / (1 - rho)
    assert fr.relevance_probability(log_bf, rho) == pytest.approx(odds / (1 + odds))


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5, float("nan"), "half"])
def test_prior_inclusion_outside_the_open_unit_interval_is_refused(bad):
    with pytest.raises(ValueError, match="prior_inclusion"):
        fr.relevance_probability([0.0], bad)


def test_monroe_z_score_written_out():
    counts = np.array([[9.0, 1.0, 4.0], [1.0, 9.0, 2.0]])
    alpha = np.array([0.5, 0.5, 1.0])
    a0 = alpha.sum()
    n = counts.sum(axis=1)
    # class 0, word 0 against class 1
    delta = np.log((9 + 0.5) / (n[0] + a0 - 9 - 0.5)) - np.log((1 + 0.5) / (n[1] + a0 - 1 - 0.5))
    z = delta / np.sqrt(1 / 9.5 + 1 / 1.5)
    assert fr.informative_dirichlet_z(counts, alpha)[0, 0] == pytest.approx(z)


# -- relevance on simulated data ---------------------------------------------------------------


def simulated_bernoulli(rng, n_rows, relevant, lam=1.0):
    """Rows of two classes whose features are relevant (per-class φ) or not (one φ)."""
    y = rng.integers(0, 2, n_rows)
    n_features = relevant.size
    phi = rng.beta(lam, lam, size=(2, n_features))
    phi[1, ~relevant] = phi[0, ~relevant]
    X = (rng.random((n_rows, n_features)) < phi[y]).astype(float)
    return X, y


def cells_of(X, y, lam=1.0):
    present = np.stack([X[y == k].sum(axis=0) for k in (0, 1)])
    rows = np.array([[np.sum(y == k)] for k in (0, 1)], dtype=float)
    return fr.bernoulli_cells(present, rows, lam, lam)


def test_relevance_goes_to_one_for_a_relevant_feature_and_below_half_for_noise():
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1], 1000)
    signal = np.where(y == 0, rng.random(2000) < 0.3, rng.random(2000) < 0.6)
    noise = rng.random(2000) < 0.4
    X = np.column_stack([signal, noise]).astype(float)
    p = fr.relevance_probability(fr.log_bayes_factor(cells_of(X, y)), 0.5)
    assert p[0] > 1 - 1e-12
    assert p[1] < 0.5


def test_relevance_probability_is_calibrated_on_draws_from_its_own_prior():
    # SBC-style: which features are relevant is drawn from ρ, then φ and the data; among
    # features given P(relevant) ≈ p, the share truly relevant must be p (binomial bands).
    rng = np.random.default_rng(7)
    rho, n_features = 0.3, 4000
    relevant = rng.random(n_features) < rho
    X, y = simulated_bernoulli(rng, 40, relevant)
    p = fr.relevance_probability(fr.log_bayes_factor(cells_of(X, y)), rho)
    # overall: Σ(s − p) / √Σ p(1 − p) is standard normal
    z = (relevant - p).sum() / np.sqrt((p * (1 - p)).sum())
    assert abs(z) < 3.5
    edges = np.linspace(0, 1, 6)
    for low, high in itertools.pairwise(edges):
        inside = (p >= low) & (p < high)
        if inside.sum() < 30:
            continue
        expected = p[inside].sum()
        sd = np.sqrt((p[inside] * (1 - p[inside])).sum())
        assert abs(relevant[inside].sum() - expected) < 4 * sd + 1, (low, high)


# -- feature averaging against a brute-force average over every subset -------------------------


def brute_force_bernoulli(X, y, x_new, lam, rho, class_alpha=1.0):
    """p(y = k | x_new, D) averaged over all 2^D subsets, every subset's evidence and
    predictive written out by Beta-Bernoulli formulas."""
    n_features = X.shape[1]
    classes = (0, 1)
    n_k = np.array([np.sum(y == k) for k in classes])
    class_pred = (n_k + class_alpha) / (n_k.sum() + 2 * class_alpha)

    def beta_bernoulli(ones, n):
        return betaln(ones + lam, n - ones + lam) - betaln(lam, lam)

    def predictive(x, ones, n):
        p = (ones + lam) / (n + 2 * lam)
        return np.log(p if x == 1 else 1 - p)

    total = np.zeros(2)
    log_weights, joints = [], []
    for subset in itertools.product((0, 1), repeat=n_features):
        log_w = 0.0
        joint = np.log(class_pred).copy()
        for d, s in enumerate(subset):
            if s:
                log_w += np.log(rho)
                for k in classes:
                    ones = X[y == k, d].sum()
                    log_w += beta_bernoulli(ones, n_k[k])
                    joint[k] += predictive(x_new[d], ones, n_k[k])
            else:
                log_w += np.log(1 - rho)
                log_w += beta_bernoulli(X[:, d].sum(), len(y))
                joint += predictive(x_new[d], X[:, d].sum(), len(y))
        log_weights.append(log_w)
        joints.append(joint)
    log_weights = np.array(log_weights)
    weights = np.exp(log_weights - log_weights.max())
    total = (weights[:, None] * np.exp(np.array(joints))).sum(axis=0)
    return total / total.sum()


def test_bernoulli_averaging_equals_brute_force_over_all_subsets():
    rng = np.random.default_rng(3)
    relevant = np.array([True, False, True, False, False, True, False])
    X, y = simulated_bernoulli(rng, 30, relevant, lam=1.0)
    lam, rho = 0.8, 0.3
    present = np.stack([X[y == k].sum(axis=0) for k in (0, 1)])
    rows = np.array([[np.sum(y == k)] for k in (0, 1)], dtype=float)
    cells = fr.bernoulli_cells(present, rows, lam, lam)
    new = rng.integers(0, 2, size=(4, X.shape[1])).astype(float)
    n_k = rows.ravel()
    log_class = np.log((n_k + 1) / (n_k.sum() + 2))
    joint = fr.averaged_log_likelihood(cells, new, rho) + log_class
    got = np.exp(joint - joint.max(axis=1, keepdims=True))
    got /= got.sum(axis=1, keepdims=True)
    for i, x_new in enumerate(new):
        assert got[i] == pytest.approx(brute_force_bernoulli(X, y, x_new, lam, rho), rel=1e-10)


def brute_force_gaussian(X, y, x_new, prior, rho):
    """The same over subsets for Gaussian features: multivariate-t evidences and the
    predictive as the ratio of evidences with and without the new row."""
    m0, k0, a0, b0 = prior

    def evidence(x):
        if x.size == 0:
            return 0.0
        shape = b0 / a0 * (np.eye(x.size) + np.ones((x.size, x.size)) / k0)
        return stats.multivariate_t.logpdf(x, np.full(x.size, m0), shape, df=2 * a0)

    n_features = X.shape[1]
    log_class = np.log(np.array([np.sum(y == k) + 1.0 for k in (0, 1)]) / (len(y) + 2))
    log_weights, joints = [], []
    for subset in itertools.product((0, 1), repeat=n_features):
        log_w, joint = 0.0, log_class.copy()
        for d, s in enumerate(subset):
            column = X[:, d]
            if s:
                log_w += np.log(rho) + sum(evidence(column[y == k]) for k in (0, 1))
                for k in (0, 1):
                    own = column[y == k]
                    joint[k] += evidence(np.append(own, x_new[d])) - evidence(own)
            else:
                log_w += np.log(1 - rho) + evidence(column)
                joint += evidence(np.append(column, x_new[d])) - evidence(column)
        log_weights.append(log_w)
        joints.append(joint)
    log_weights = np.array(log_weights)
    weights = np.exp(log_weights - log_weights.max())
    total = (weights[:, None] * np.exp(np.array(joints))).sum(axis=0)
    return total / total.sum()


def gaussian_cells(X, y, prior):
    m0, k0, a0, b0 = prior
    count = np.array([[np.sum(y == k)] for k in (0, 1)], dtype=float)
    mean = np.stack([X[y == k].mean(axis=0) for k in (0, 1)])
    squares = np.stack([((X[y == k] - X[y == k].mean(axis=0)) ** 2).sum(axis=0) for k in (0, 1)])
    n_features = X.shape[1]
    resolved = {
        "mean": np.full(n_features, m0),
        "kappa": k0,
        "shape": a0,
        "scale": np.full(n_features, b0),
    }
    return fr.NormalInverseGammaCells(count, mean, squares, resolved)


def test_gaussian_averaging_equals_brute_force_over_all_subsets():
    rng = np.random.default_rng(5)
    y = np.repeat([0, 1], 6)
    X = rng.normal(size=(12, 4)) + np.outer(y, [1.5, 0.0, 0.7, 0.0])
    prior = (0.2, 0.5, 2.0, 1.5)
    cells = gaussian_cells(X, y, prior)
    new = rng.normal(size=(3, 4))
    log_class = np.log(np.array([7.0, 7.0]) / 14)
    joint = fr.averaged_log_likelihood(cells, new, 0.4) + log_class
    got = np.exp(joint - joint.max(axis=1, keepdims=True))
    got /= got.sum(axis=1, keepdims=True)
    for i, x_new in enumerate(new):
        expected = brute_force_gaussian(X, y, x_new, prior, 0.4)
        assert got[i] == pytest.approx(expected, rel=1e-9)


def test_averaged_leave_one_out_equals_averaging_without_the_row():
    # Each row left out: the averaged joint of the cells counted without it.
    rng = np.random.default_rng(11)
    y = np.repeat([0, 1], 8)
    X = rng.poisson(np.where(y[:, None] == 0, [2.0, 3.0, 1.0], [2.0, 6.0, 1.0])).astype(float)

    def cells_without(keep):
        total = np.stack([X[keep & (y == k)].sum(axis=0) for k in (0, 1)])
        exposure = np.array([[np.sum(keep & (y == k))] for k in (0, 1)], dtype=float)
        return fr.GammaPoissonCells(total, exposure, 1.0, 0.5)

    everything = np.ones(y.size, dtype=bool)
    loo = fr.averaged_loo_log_likelihood(cells_without(everything), X, y, 0.5)
    for i in range(y.size):
        keep = everything.copy()
        keep[i] = False
        refit = fr.averaged_log_likelihood(cells_without(keep), X[i : i + 1], 0.5)
        assert loo[i] == pytest.approx(refit[0], rel=1e-10)


def test_categorical_leave_one_out_with_a_missing_entry_equals_the_refit():
    y = np.array([0, 0, 0, 1, 1, 1])
    X = np.array([[0, 1], [0, np.nan], [1, 1], [2, 0], [2, 0], [1, np.nan]], dtype=float)

    def cells_without(keep):
        counts = np.zeros((2, 2, 3))
        for row, label in zip(X[keep], y[keep], strict=True):
            for d, code in enumerate(row):
                if not np.isnan(code):
                    counts[label, d, int(code)] += 1
        return fr.DirichletCells(counts, 0.7, mask=[[True, True, True], [True, True, False]])

    everything = np.ones(y.size, dtype=bool)
    loo = fr.averaged_loo_log_likelihood(cells_without(everything), X, y, 0.5)
    for i in range(y.size):
        keep = everything.copy()
        keep[i] = False
        refit = fr.averaged_log_likelihood(cells_without(keep), X[i : i + 1], 0.5)
        assert loo[i] == pytest.approx(refit[0], rel=1e-10)


# -- effects -----------------------------------------------------------------------------------


def test_log_odds_mean_and_interval_match_beta_draws():
    cells = fr.bernoulli_cells([[8.0], [2.0]], [[10.0], [10.0]], 1.0, 1.0)
    effects = cells.effects(prob=0.9, n_draws=20000, rng=0)
    rng = np.random.default_rng(1)
    own, other = rng.beta(9, 3, 200000), rng.beta(3, 9, 200000)
    draws = np.log(own / (1 - own)) - np.log(other / (1 - other))
    present = 1  # categories (absent, present)
    assert effects["mean"][0, 0, present] == pytest.approx(draws.mean(), abs=0.01)
    assert effects["sd"][0, 0, present] == pytest.approx(draws.std(), abs=0.01)
    assert effects["lower"][0, 0, present] == pytest.approx(np.quantile(draws, 0.05), abs=0.05)
    assert effects["upper"][0, 0, present] == pytest.approx(np.quantile(draws, 0.95), abs=0.05)


def test_poisson_log_rate_ratio_mean_is_exact():
    cells = fr.GammaPoissonCells([[30.0], [10.0]], [[10.0], [10.0]], 1.0, 1.0)
    effects = cells.effects(n_draws=4000, rng=0)
    # E[log λ] = ψ(a) − log b
    expected = digamma(31) - np.log(11) - digamma(11) + np.log(11)
    assert effects["mean"][0, 0] == pytest.approx(expected)
    assert effects["lower"][0, 0] < expected < effects["upper"][0, 0]


def test_word_split_log_odds_sign_follows_the_counts():
    cells = fr.word_split_cells([[50.0, 5.0, 45.0], [5.0, 50.0, 45.0]], 1.0)
    effects = cells.effects(n_draws=500, rng=0)
    word = 0  # categories (word, rest)
    assert effects["lower"][0, 0, word] > 0 and effects["upper"][1, 0, word] < 0
