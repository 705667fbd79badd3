"""The Dirichlet compound multinomial's maths: histograms, likelihood, point fit, predictive,
simulation (bayesgen.maths.dirichlet_multinomial), against SciPy and by-hand forms."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats
from scipy.special import digamma, gammaln, polygamma

from bayesgen.maths.dirichlet_multinomial import (
    count_histograms,
    dirichlet_multinomial_log_pmf,
    exceedance,
    fit_concentration,
    histogram_log_likelihood,
    log_likelihood_gradient,
    log_objective,
    merge_histograms,
    simulate_documents,
)
from bayesgen.maths.dirichlet_multinomial_kernels import (
    DIRECT_LEVELS,
    exceedance_pairs,
    other_sums,
    pair_sums,
    rising_terms,
)

N_CLASSES, N_WORDS = 2, 20


def bursty_corpus(n_documents=60, seed=0, scale=0.5):
    """Documents from known α (small: bursty), lengths 15-50."""
    rng = np.random.default_rng(seed)
    alpha = rng.gamma(1.0, 1.0, size=(N_CLASSES, N_WORDS)) * scale + 0.3
    y = np.arange(n_documents) % N_CLASSES
    X = np.zeros((n_documents, N_WORDS))
    for i in range(n_documents):  # by hand, not by the module's simulator
        theta = rng.dirichlet(alpha[y[i]])
        X[i] = rng.multinomial(rng.integers(15, 50), theta)
    return X, y, alpha


def scipy_class_sums(X, y, alpha, weight=None):
    weight = np.ones(len(y)) if weight is None else weight
    per_document = np.array(
        [stats.dirichlet_multinomial.logpmf(X[i], alpha[y[i]], X[i].sum()) for i in range(len(y))]
    )
    return np.bincount(y, weights=weight * per_document, minlength=alpha.shape[0])


@pytest.mark.parametrize("sparse", [False, True])
def test_histogram_likelihood_equals_scipy_summed_over_documents(sparse):
    X, y, alpha = bursty_corpus()
    h = count_histograms(sp.csr_array(X) if sparse else X, y, N_CLASSES)
    np.testing.assert_allclose(
        histogram_log_likelihood(h, alpha), scipy_class_sums(X, y, alpha), rtol=0, atol=1e-10
    )


def test_histogram_likelihood_without_coefficient_drops_the_multinomial_coefficients():
    X, y, alpha = bursty_corpus()
    h = count_histograms(X, y, N_CLASSES)
    coefficients = gammaln(X.sum(1) + 1) - gammaln(X + 1).sum(1)
    np.testing.assert_allclose(
        histogram_log_likelihood(h, alpha, coefficient=False),
        scipy_class_sums(X, y, alpha) - np.bincount(y, weights=coefficients),
        rtol=0,
        atol=1e-10,
    )


def test_integer_weights_equal_repeated_documents():
    X, y, alpha = bursty_corpus(20)
    weight = np.arange(20) % 3  # 0: dropped
    repeated = np.repeat(np.arange(20), weight)
    weighted = count_histograms(X, y, N_CLASSES, sample_weight=weight)
    expected = scipy_class_sums(X[repeated], y[repeated], alpha)
    np.testing.assert_allclose(histogram_log_likelihood(weighted, alpha), expected, atol=1e-10)
    np.testing.assert_array_equal(weighted.class_count, np.bincount(y[repeated]))


def test_minkas_exceedance_form_equals_scipy():
    # Σ_c h(c) log(α + c − 1), h(c) = documents with x ≥ c; lengths likewise.
    X, y, alpha = bursty_corpus()
    h = count_histograms(X, y, N_CLASSES)
    tails = exceedance(h)
    for k in range(N_CLASSES):
        words = sum(
            (tails[k][w] * np.log(alpha[k, w] + np.arange(len(tails[k][w])))).sum()
            for w in range(N_WORDS)
        )
        lengths = X[y == k].sum(1).astype(int)
        g = np.array([(lengths >= c).sum() for c in range(1, lengths.max() + 1)])
        s = alpha[k].sum()
        coefficient = (gammaln(lengths + 1) - gammaln(X[y == k] + 1).sum(1)).sum()
        by_minka = words - (g * np.log(s + np.arange(len(g)))).sum() + coefficient
        assert by_minka == pytest.approx(scipy_class_sums(X, y, alpha)[k], abs=1e-9)


def test_histograms_store_only_the_distinct_nonzero_levels():
    X = np.array([[3, 0], [3, 0], [1, 0]])
    h = count_histograms(sp.csr_array(X), np.zeros(3, dtype=int), 1)
    assert h.word_level.tolist() == [1.0, 3.0] and h.word_weight.tolist() == [1.0, 2.0]
    assert h.length_level.tolist() == [1.0, 3.0] and h.length_weight.tolist() == [1.0, 2.0]


def test_merged_chunks_equal_the_histograms_of_all_documents():
    X, y, _ = bursty_corpus()
    whole = count_histograms(X, y, N_CLASSES)
    merged = count_histograms(X[:7], y[:7], N_CLASSES)
    for start, stop in ((7, 30), (30, 60)):
        merged = merge_histograms(merged, count_histograms(X[start:stop], y[start:stop], N_CLASSES))
    for mine, theirs in zip(merged, whole, strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-9)


def test_gradient_equals_finite_differences():
    X, y, alpha = bursty_corpus()
    h = count_histograms(X, y, N_CLASSES)
    step = 1e-6
    numeric = np.zeros_like(alpha)
    for k, w in [(0, 0), (1, 5), (0, 19)]:
        delta = np.zeros_like(alpha)
        delta[k, w] = step
        numeric[k, w] = (
            histogram_log_likelihood(h, alpha + delta)[k]
            - histogram_log_likelihood(h, alpha - delta)[k]
        ) / (2 * step)
        assert log_likelihood_gradient(h, alpha)[k, w] == pytest.approx(numeric[k, w], rel=1e-6)


def objective_gradient(h, fit, shape, rate, mean_prior, shared):
    """∂F/∂s_k and ∂F/∂m (per class, or the shared m's), by the chain rule from α's gradient."""
    g = log_likelihood_gradient(h, fit.alpha)
    d_s = (fit.mean * g).sum(1) + (shape - 1) / fit.concentration - rate
    c = np.broadcast_to(mean_prior, (N_WORDS,))
    if shared:
        d_m = (fit.concentration[:, None] * g).sum(0) + (c - 1) / fit.mean[0]
    else:
        d_m = fit.concentration[:, None] * g + (c - 1) / fit.mean
    return d_s, d_m


PRIORS = {
    "flat": ((1.0, 0.0), 1.0),
    "gamma-dirichlet": ((2.0, 0.05), 1.0 + np.linspace(0.1, 3.0, N_WORDS)),
}


@pytest.mark.parametrize("shared", [False, True], ids=["per_class", "pooled"])
@pytest.mark.parametrize("prior", PRIORS)
def test_fixed_point_is_stationary(shared, prior):
    X, y, _ = bursty_corpus()
    h = count_histograms(X, y, N_CLASSES)
    (shape, rate), mean_prior = PRIORS[prior]
    fit = fit_concentration(
        h, shared_mean=shared, concentration_prior=(shape, rate), mean_prior=mean_prior
    )
    assert fit.converged
    assert np.all(fit.mean > 0)  # every word is seen in both classes of this corpus
    d_s, d_m = objective_gradient(h, fit, shape, rate, mean_prior, shared)
    # s: zero; m: equal over the words (a Lagrange multiplier of Σ m = 1).
    assert np.max(np.abs(d_s * fit.concentration)) < 1e-5
    # Relative to the size of the likelihood's terms (a sum over the documents).
    assert np.max(np.ptp(d_m, axis=-1)) < 1e-6 * h.class_count.sum()


def fit_with_its_objective(shared, prior, **corpus):
    """The histograms of a bursty corpus, the prior's options, the fit under them, its mean
    as ``log_objective`` takes it (one row where shared) and the objective there."""
    X, y, _ = bursty_corpus(**corpus)
    h = count_histograms(X, y, N_CLASSES)
    (shape, rate), mean_prior = PRIORS[prior]
    options = {"concentration_prior": (shape, rate), "mean_prior": mean_prior}
    fit = fit_concentration(h, shared_mean=shared, **options)
    mean = fit.mean[:1] if shared else fit.mean
    return h, options, fit, mean, log_objective(h, fit.concentration, mean, **options)


@pytest.mark.parametrize("shared", [False, True], ids=["per_class", "pooled"])
@pytest.mark.parametrize("prior", PRIORS)
def test_fixed_point_beats_every_point_of_a_grid_around_it(shared, prior):
    h, options, fit, mean, best = fit_with_its_objective(shared, prior)
    rng = np.random.default_rng(1)
    directions = rng.normal(size=(6, *mean.shape))
    for s_factor in (0.9, 0.98, 1.0, 1.02, 1.1):
        for k in range(N_CLASSES):
            concentration = fit.concentration.copy()
            concentration[k] *= s_factor
            for direction in [np.zeros_like(mean), *directions]:
                for size in (0.02, 0.1):
                    moved = mean * np.exp(size * direction)
                    moved /= moved.sum(-1, keepdims=True)
                    value = log_objective(h, concentration, moved, **options)
                    assert value <= best + 1e-9


def test_fixed_point_recovers_the_concentration_of_a_large_sample():
    rng = np.random.default_rng(5)
    mean = rng.dirichlet(np.full(10, 5.0))
    X = np.array([rng.multinomial(50, rng.dirichlet(20.0 * mean)) for _ in range(3000)])
    fit = fit_concentration(count_histograms(X, np.zeros(3000, dtype=int), 1))
    assert fit.concentration[0] == pytest.approx(20.0, rel=0.1)
    np.testing.assert_allclose(fit.mean[0], mean, atol=0.01)


def test_flat_fit_gives_an_unseen_word_zero_mean():
    X = np.array([[3, 1, 0], [2, 2, 0], [0, 0, 4], [0, 1, 3]])
    fit = fit_concentration(count_histograms(X, np.array([0, 0, 1, 1]), 2), max_iter=2000)
    assert fit.mean[0, 2] == 0 and fit.mean[1, 0] == 0


def test_fit_refuses_a_gamma_shape_below_one():
    X, y, _ = bursty_corpus(10)
    with pytest.raises(ValueError, match="concentration_prior"):
        fit_concentration(count_histograms(X, y, N_CLASSES), concentration_prior=(0.5, 1.0))


def test_log_pmf_equals_scipy_for_every_document_class_and_draw():
    X, _, alpha = bursty_corpus(8)
    draws = np.stack([alpha, 2.0 * alpha, alpha + 1.0])  # (draw, class, word)
    ours = dirichlet_multinomial_log_pmf(sp.csr_array(X), draws)
    assert ours.shape == (3, 8, N_CLASSES)
    for d in range(3):
        for i in range(8):
            for k in range(N_CLASSES):
                expected = stats.dirichlet_multinomial.logpmf(X[i], draws[d, k], X[i].sum())
                assert ours[d, i, k] == pytest.approx(expected, abs=1e-10)


def test_predictive_tends_to_the_multinomial_as_the_concentration_grows():
    X, _, _ = bursty_corpus(10)
    mean = np.random.default_rng(2).dirichlet(np.ones(N_WORDS), size=N_CLASSES)
    multinomial = np.array([[stats.multinomial.logpmf(x, x.sum(), m) for m in mean] for x in X])
    gaps = [
        np.max(np.abs(dirichlet_multinomial_log_pmf(X, s * mean) - multinomial))
        for s in (1e4, 1e6, 1e8)
    ]
    # The gap shrinks as 1 / s.
    np.testing.assert_array_less(np.array(gaps[1:]) * 50, gaps[:-1])
    assert gaps[-1] < 1e-3


def test_zero_alpha_gives_a_shown_word_zero_probability():
    X = np.array([[1, 0], [0, 2]])
    values = dirichlet_multinomial_log_pmf(X, np.array([[1.0, 0.0]]))
    assert values[0, 0] == 0.0 and values[1, 0] == -np.inf


def test_simulated_documents_keep_their_lengths_and_the_dcm_moments():
    rng = np.random.default_rng(3)
    alpha = np.array([0.5, 1.5, 3.0])
    n = 10
    docs = simulate_documents(np.tile(alpha, (20_000, 1)), np.full(20_000, n), rng).toarray()
    assert np.all(docs.sum(1) == n)
    s, m = alpha.sum(), alpha / alpha.sum()
    np.testing.assert_allclose(docs.mean(0), n * m, rtol=0.02)
    # DirMult variance n m (1 − m) (n + s) / (1 + s): wider than the multinomial's.
    np.testing.assert_allclose(docs.var(0), n * m * (1 - m) * (n + s) / (1 + s), rtol=0.05)


def test_simulation_never_draws_a_word_of_zero_alpha():
    docs = simulate_documents(
        np.array([[1.0, 0.0, 2.0]] * 50), np.full(50, 30), np.random.default_rng(4)
    )
    assert docs.toarray()[:, 1].sum() == 0


# -- The Newton fit against the fixed point it replaced, and its kernels ----------------------


def fixed_point_reference(h, *, shared, shape, rate, mean_prior, tol=1e-14, max_iter=200_000):
    """Minka's alternated fixed points, as bayesgen had them before Newton's method (issue
    25), by SciPy's digamma: the maximiser the Newton fit must find again."""
    n_classes, n_features = h.n_classes, h.n_features
    extra = np.broadcast_to(np.asarray(mean_prior, dtype=float), (n_features,)) - 1.0
    cells = h.word_class * n_features + h.word_feature

    def digamma_sums(alpha):
        cell_alpha = np.maximum(alpha, 1e-300).ravel()[cells]
        terms = h.word_weight * (digamma(cell_alpha + h.word_level) - digamma(cell_alpha))
        words = np.bincount(cells, terms, minlength=n_classes * n_features)
        words = np.where(alpha > 0, words.reshape(n_classes, n_features), 0.0)
        total = alpha.sum(axis=1)[h.length_class]
        lengths = h.length_weight * (digamma(total + h.length_level) - digamma(total))
        return words, np.bincount(h.length_class, lengths, minlength=n_classes)

    pooled = np.bincount(h.word_feature, h.word_weight * h.word_level, minlength=n_features)
    mean = np.tile((pooled + 1.0) / (pooled + 1.0).sum(), (n_classes, 1))
    concentration = np.full(n_classes, float(n_features))
    for _ in range(max_iter):
        words, _ = digamma_sums(concentration[:, None] * mean)
        if shared:
            new_mean = mean[0] * (concentration[:, None] * words).sum(axis=0) + extra
            new_mean = np.tile(new_mean / new_mean.sum(), (n_classes, 1))
        else:
            new_mean = mean * concentration[:, None] * words + extra
            new_mean /= new_mean.sum(axis=1, keepdims=True)
        words, lengths = digamma_sums(concentration[:, None] * new_mean)
        new_concentration = (concentration * (new_mean * words).sum(axis=1) + shape - 1.0) / (
            lengths + rate
        )
        change = max(
            np.max(np.abs(new_concentration / concentration - 1.0)),
            np.max(np.abs(new_mean - mean) / np.maximum(mean, 1e-300)),
        )
        concentration, mean = new_concentration, new_mean
        if change < tol:
            return concentration, mean
    raise AssertionError("the reference fixed point did not converge")


def fractional_corpus(seed=3):
    """Bursty documents whose counts are scaled by 0.7: levels that are not whole numbers
    take the fit's other path (SciPy-free series), as do counts above 16."""
    X, y, _ = bursty_corpus(seed=seed)
    X = X * 0.7
    X[0, 0] = 40.0  # a level above the term-by-term sums
    return X, y


@pytest.mark.parametrize("data", ["whole", "fractional"])
@pytest.mark.parametrize("shared", [False, True], ids=["per_class", "pooled"])
@pytest.mark.parametrize("prior", PRIORS)
def test_newton_fit_finds_the_maximiser_of_the_fixed_point_it_replaced(data, shared, prior):
    X, y = bursty_corpus(seed=4)[:2] if data == "whole" else fractional_corpus()
    h = count_histograms(X, y, N_CLASSES)
    (shape, rate), mean_prior = PRIORS[prior]
    fit = fit_concentration(
        h, shared_mean=shared, concentration_prior=(shape, rate), mean_prior=mean_prior
    )
    concentration, mean = fixed_point_reference(
        h, shared=shared, shape=shape, rate=rate, mean_prior=mean_prior
    )
    assert fit.converged and fit.iterations < 30
    np.testing.assert_allclose(fit.concentration, concentration, rtol=1e-8)
    np.testing.assert_allclose(fit.mean, mean, rtol=1e-8, atol=0)


@pytest.mark.parametrize("shared", [False, True], ids=["per_class", "pooled"])
def test_flat_newton_fit_keeps_the_unseen_words_at_zero_like_the_fixed_point(shared):
    X, y, _ = bursty_corpus(seed=6)
    X[y == 0, :3] = 0  # words class 0 never shows
    X[:, 4] = 0  # a word no class shows
    h = count_histograms(X, y, N_CLASSES)
    fit = fit_concentration(h, shared_mean=shared)
    concentration, mean = fixed_point_reference(
        h, shared=shared, shape=1.0, rate=0.0, mean_prior=1.0
    )
    np.testing.assert_array_equal(fit.mean == 0, mean == 0)
    assert np.all(fit.mean[:, 4] == 0)
    if shared:  # class 1 shows them
        assert np.all(fit.mean[:, :3] > 0)
    else:
        assert np.all(fit.mean[0, :3] == 0) and np.all(fit.mean[1, :3] > 0)
    np.testing.assert_allclose(fit.concentration, concentration, rtol=1e-8)
    np.testing.assert_allclose(fit.mean, mean, rtol=1e-8, atol=0)


@pytest.mark.parametrize("shared", [False, True], ids=["per_class", "pooled"])
@pytest.mark.parametrize("prior", PRIORS)
def test_newton_fit_beats_random_perturbations_of_itself(shared, prior):
    h, options, fit, mean, best = fit_with_its_objective(shared, prior, seed=7)
    rng = np.random.default_rng(8)
    for size in (1e-4, 1e-2, 0.3):
        for _ in range(10):
            concentration = fit.concentration * np.exp(size * rng.normal(size=N_CLASSES))
            moved = mean * np.exp(size * rng.normal(size=mean.shape))
            moved /= moved.sum(-1, keepdims=True)
            assert log_objective(h, concentration, moved, **options) <= best + 1e-9


@pytest.mark.parametrize("shared", [False, True], ids=["per_class", "pooled"])
def test_newton_fit_never_decreases_the_objective(shared):
    X, y, _ = bursty_corpus(seed=9)
    h = count_histograms(X, y, N_CLASSES)
    options = {"concentration_prior": (2.0, 0.05), "mean_prior": 1.5}
    values = []
    for max_iter in range(1, 12):  # the fit is deterministic: max_iter = i gives step i
        fit = fit_concentration(h, shared_mean=shared, max_iter=max_iter, **options)
        values.append(
            log_objective(h, fit.concentration, fit.mean[:1] if shared else fit.mean, **options)
        )
    assert np.all(np.diff(values) >= -1e-9 * np.abs(values[-1]))
    assert not fit_concentration(h, shared_mean=shared, max_iter=1, **options).converged


def test_a_start_at_another_fit_ends_at_the_same_maximiser():
    X, y, _ = bursty_corpus(seed=10)
    h = count_histograms(X, y, N_CLASSES)
    mode = fit_concentration(h, concentration_prior=(2.0, 0.05), mean_prior=3.0)
    cold = fit_concentration(h)
    warm = fit_concentration(h, initial_concentration=mode.concentration, initial_mean=mode.mean)
    np.testing.assert_allclose(warm.concentration, cold.concentration, rtol=1e-9)
    np.testing.assert_allclose(warm.mean, cold.mean, rtol=1e-9, atol=0)


@pytest.mark.parametrize("shared", [False, True], ids=["per_class", "pooled"])
@pytest.mark.parametrize("data", ["identical", "poisson"])
def test_data_without_overdispersion_stop_unconverged_with_a_huge_concentration(data, shared):
    # The evidence grows with s to the multinomial limit: identical documents, or Poisson
    # counts (no burstiness).
    if data == "identical":
        X, y = np.array([[5, 5, 2]] * 3 + [[4, 6, 2]]), np.zeros(4, dtype=int)
    else:
        X, y = np.random.default_rng(13).poisson(1.0, size=(200, 30)), np.arange(200) % 2
    h = count_histograms(X, y, y.max() + 1)
    fit = fit_concentration(h, shared_mean=shared, max_iter=5000)
    # It stops once F no longer tells the steps apart, long before max_iter.
    assert not fit.converged and fit.iterations < 200
    assert np.all(np.isfinite(fit.mean)) and np.all(np.isfinite(fit.concentration))
    if shared:
        # A class's distance from the shared m looks like overdispersion: only some s → ∞.
        assert fit.concentration.max() > 1e6
    else:
        assert np.all(fit.concentration > 1e6)
        frequencies = [X[y == k].sum(0) / X[y == k].sum() for k in range(y.max() + 1)]
        np.testing.assert_allclose(fit.mean, frequencies, rtol=1e-4)


def test_a_class_without_documents_keeps_its_start():
    X, y, _ = bursty_corpus(seed=11)
    h = count_histograms(X, y, N_CLASSES + 1)  # class 2 has no document
    flat = fit_concentration(h)
    mode = fit_concentration(h, concentration_prior=(2.0, 0.05), mean_prior=3.0)
    assert flat.converged and mode.converged
    assert flat.concentration[2] == mode.concentration[2] == 1.0
    pooled = X.sum(0) + 1.0
    np.testing.assert_allclose(flat.mean[2], pooled / pooled.sum())
    np.testing.assert_allclose(mode.mean[2], np.full(N_WORDS, 1 / N_WORDS))  # the prior's mode


def test_fit_refuses_a_start_of_the_wrong_shape():
    X, y, _ = bursty_corpus(10)
    h = count_histograms(X, y, N_CLASSES)
    with pytest.raises(ValueError, match="initial_concentration"):
        fit_concentration(h, initial_concentration=[1.0])
    with pytest.raises(ValueError, match="initial_mean"):
        fit_concentration(h, initial_mean=np.ones(N_WORDS + 1))


LEVELS_BELOW = np.arange(1.0, DIRECT_LEVELS + 1.0)
LEVELS_ABOVE = np.array([DIRECT_LEVELS + 1.0, 20.0, 57.0, 300.0, 4000.0])
LEVELS_FRACTIONAL = np.array([0.3, 2.5, 15.9, 16.5, 80.25])


@pytest.mark.parametrize(
    "levels", [LEVELS_BELOW, LEVELS_ABOVE, LEVELS_FRACTIONAL], ids=["below", "above", "fraction"]
)
def test_rising_terms_equal_scipys_differences(levels):
    alpha = np.array([1e-3, 0.07, 0.5, 1.0, 3.7, 15.9, 16.0, 42.0])
    a, c = (grid.ravel() for grid in np.meshgrid(alpha, levels))
    value, first, second = rising_terms(a, c)
    np.testing.assert_allclose(value, gammaln(a + c) - gammaln(a), rtol=1e-12)
    np.testing.assert_allclose(first, digamma(a + c) - digamma(a), rtol=1e-12)
    np.testing.assert_allclose(second, polygamma(1, a) - polygamma(1, a + c), rtol=1e-12)


def test_exceedance_sums_equal_scipys_differences_summed_per_segment():
    rng = np.random.default_rng(12)
    levels = np.concatenate([LEVELS_BELOW, LEVELS_ABOVE, LEVELS_FRACTIONAL, [0.0]])
    n_segments = 40
    sizes = rng.integers(1, 6, size=n_segments)
    level = np.concatenate([np.sort(rng.choice(levels, size, replace=False)) for size in sizes])
    weight = rng.uniform(0.5, 3.0, size=level.size)
    start = np.append(0, np.cumsum(sizes))
    segment = np.repeat(np.arange(n_segments), sizes)
    alpha = rng.uniform(0.01, 30.0, size=n_segments)
    base, pair_segment, pair_offset, pair_weight, other, other_segment, segment_weight = (
        exceedance_pairs(start, level, weight)
    )
    first, second, factor = pair_sums(alpha, base, pair_segment, pair_offset, pair_weight)
    other_value = other_sums(
        alpha,
        other_segment,
        level[other],
        weight[other],
        np.arange(n_segments),
        first,
        second,
        n_segments,
    )
    value = other_value + base * np.log(alpha)
    value += np.bincount(pair_segment, pair_weight * np.log(factor), minlength=n_segments)
    a = alpha[segment]
    for mine, terms in [
        (value, gammaln(a + level) - gammaln(a)),
        (first, digamma(a + level) - digamma(a)),
        (second, polygamma(1, a) - polygamma(1, a + level)),
    ]:
        expected = np.bincount(segment, weight * terms, minlength=n_segments)
        np.testing.assert_allclose(mine, expected, rtol=1e-12)
    np.testing.assert_allclose(
        segment_weight, np.bincount(segment, weight * (level > 0), minlength=n_segments)
    )


def test_a_class_whose_documents_use_one_word_stops_unconverged_with_a_finite_mean():
    """Its likelihood does not depend on s (m puts all mass on the word), so the Gamma prior
    pushes s towards 0 until Newton's step overflows: the fit stops there, unconverged, and
    keeps m = (1, 0, …) (it returned NaN before; SBC found it)."""
    X = np.array([[12.0, 0, 0, 0, 0], [3, 4, 5, 0, 0]])
    fit = fit_concentration(count_histograms(X, np.array([1, 0]), 2), concentration_prior=(1, 0.2))
    assert not fit.converged and np.all(np.isfinite(fit.concentration))
    np.testing.assert_array_equal(fit.mean[1], [1.0, 0, 0, 0, 0])
    assert np.all(np.isfinite(fit.mean[0])) and fit.mean[0, 3:].sum() == 0
