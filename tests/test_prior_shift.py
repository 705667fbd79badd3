"""Prior shift: the deployment class probabilities π′ from unlabelled rows (issue 24, part 2).

The maths (EM, Gibbs, the Bayes factor) is checked against what is known without it: the
Dirichlet posterior when every row's class is certain, a grid maximum and a quadrature for two
classes. The estimator's ``adjust_class_prior`` is checked by simulation: a known shift of π
from 0.5/0.5 to 0.9/0.1 must fall inside the 94 % interval in at least 90 % of data sets.
"""

import numpy as np
import pytest
from scipy import stats
from scipy.integrate import quad
from sklearn.exceptions import NotFittedError

from bayesgen import GaussianNB, MultinomialNB
from bayesgen.estimators.prior_shift import EXACT_PREDICTIVE, PLUG_IN, class_log_likelihood
from bayesgen.maths.prior_shift import (
    prior_shift_em,
    prior_shift_gibbs,
    prior_shift_log_bayes_factor,
)

#: Class means of the two-feature Gaussian data (unit variances).
MEANS = np.array([[0.0, 0.0], [2.0, 1.0]])
TRUE_SHIFT = np.array([0.9, 0.1])


def gaussian_log_likelihood(x, means=(0.0, 2.0)):
    """L[i, k] = log N(x_i; mean_k, 1), the true class likelihoods of one feature."""
    return stats.norm.logpdf(np.asarray(x)[:, None], np.asarray(means)[None, :])


def one_feature_rows(rng, n, class_prob, means=(0.0, 2.0)):
    labels = rng.choice(len(class_prob), size=n, p=class_prob)
    return rng.normal(size=n) + np.asarray(means)[labels], labels


def certain_rows(labels, n_classes):
    """L of rows whose class is certain: 0 for the row's class, -inf for the others."""
    return np.where(np.eye(n_classes)[labels] == 1, 0.0, -np.inf)


def mixture_log_likelihood(p, log_likelihood):
    """log p(X | π′ = (p, 1 − p)), written out for two classes."""
    return float(
        np.logaddexp(np.log(p) + log_likelihood[:, 0], np.log1p(-p) + log_likelihood[:, 1]).sum()
    )


# -- EM ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("prior", [1.0, 3.0])
def test_em_never_lowers_the_log_posterior(prior):
    rng = np.random.default_rng(0)
    means = (0.0, 1.0, 2.0)  # three overlapping classes: EM takes many small steps
    x, _ = one_feature_rows(rng, 300, [0.6, 0.3, 0.1], means)
    result = prior_shift_em(gaussian_log_likelihood(x, means), np.full(3, prior))
    assert result.n_iter > 10
    assert np.all(np.diff(result.log_posterior) >= -1e-9)
    assert result.converged


def test_em_mode_of_certain_rows_is_the_dirichlet_mode():
    labels = np.array([0, 0, 0, 1, 2, 2])
    concentration = np.array([2.0, 1.0, 3.0])
    result = prior_shift_em(certain_rows(labels, 3), concentration)
    # Dirichlet(a + counts) = Dirichlet(5, 2, 5): mode (a + n − 1) / (N + Σa − K)
    np.testing.assert_allclose(result.class_prob, [4 / 9, 1 / 9, 4 / 9], atol=1e-9)


def test_em_mode_is_the_grid_maximum_for_two_classes():
    rng = np.random.default_rng(1)
    x, _ = one_feature_rows(rng, 200, [0.8, 0.2])
    log_likelihood = gaussian_log_likelihood(x)
    grid = np.linspace(1e-4, 1 - 1e-4, 20_001)
    log_posterior = [mixture_log_likelihood(p, log_likelihood) + np.log(p) for p in grid]
    best = grid[int(np.argmax(log_posterior))]
    result = prior_shift_em(log_likelihood, np.array([2.0, 1.0]))  # prior Beta(2, 1): p^1
    assert result.class_prob[0] == pytest.approx(best, abs=1e-4)


def test_em_reaches_one_mode_from_several_starts():
    rng = np.random.default_rng(2)
    means = (0.0, 2.0, 4.0)
    x, _ = one_feature_rows(rng, 400, [0.5, 0.2, 0.3], means)
    log_likelihood = gaussian_log_likelihood(x, means)
    modes = [
        prior_shift_em(log_likelihood, np.ones(3), start=start).class_prob
        for start in ([1 / 3] * 3, [0.98, 0.01, 0.01], [0.01, 0.01, 0.98])
    ]
    for mode in modes[1:]:
        np.testing.assert_allclose(mode, modes[0], atol=1e-6)


def test_em_refuses_a_prior_without_a_mode():
    with pytest.raises(ValueError, match="no mode"):
        prior_shift_em(certain_rows(np.array([0, 1]), 2), np.array([0.5, 1.0]))


# -- Gibbs ------------------------------------------------------------------------------------


def test_gibbs_draws_of_certain_rows_are_the_exact_dirichlet_posterior():
    labels = np.repeat([0, 1, 2], [12, 5, 3])
    concentration = np.array([1.0, 2.0, 0.5])
    draws = prior_shift_gibbs(
        certain_rows(labels, 3), concentration, rng=np.random.default_rng(3), draws=4000
    ).class_prob.reshape(-1, 3)
    posterior = stats.dirichlet(concentration + np.bincount(labels))
    sd = np.sqrt(posterior.var())
    # every sweep draws π′ | z afresh with z certain: the 16,000 draws are independent
    np.testing.assert_array_less(np.abs(draws.mean(axis=0) - posterior.mean()), 4 * sd / 126)
    np.testing.assert_allclose(draws.std(axis=0), sd, rtol=0.05)


def test_gibbs_draws_are_densest_near_the_em_mode():
    rng = np.random.default_rng(4)
    x, _ = one_feature_rows(rng, 300, [0.7, 0.3])
    log_likelihood = gaussian_log_likelihood(x)
    mode = prior_shift_em(log_likelihood, np.ones(2)).class_prob[0]
    draws = prior_shift_gibbs(log_likelihood, np.ones(2), rng=rng, draws=4000).class_prob
    density = stats.gaussian_kde(draws[..., 0].ravel())
    grid = np.linspace(0.4, 1.0, 601)
    assert grid[np.argmax(density(grid))] == pytest.approx(mode, abs=0.02)


# -- the Bayes factor -------------------------------------------------------------------------


@pytest.mark.parametrize(("deployed", "prior"), [(0.5, 1.0), (0.62, 2.0), (0.9, 1.0)])
def test_log_bayes_factor_equals_quadrature_for_two_classes(deployed, prior):
    """No shift (negative), a borderline one, a large one (far in the posterior's tail)."""
    rng = np.random.default_rng(5)
    x, _ = one_feature_rows(rng, 200, [deployed, 1 - deployed])
    log_likelihood = gaussian_log_likelihood(x)
    concentration = np.full(2, prior)
    null = mixture_log_likelihood(0.5, log_likelihood)
    peak = max(mixture_log_likelihood(p, log_likelihood) for p in np.linspace(0.01, 0.99, 99))
    integral, _ = quad(
        lambda p: (
            np.exp(mixture_log_likelihood(p, log_likelihood) - peak)
            * stats.beta.pdf(p, prior, prior)
        ),
        0,
        1,
        points=[deployed],
        limit=200,
        epsabs=0,
    )
    expected = np.log(integral) + peak - null
    draws = prior_shift_gibbs(log_likelihood, concentration, rng=rng).class_prob
    value, mcse = prior_shift_log_bayes_factor(
        log_likelihood, concentration, np.array([0.5, 0.5]), draws, rng=rng
    )
    assert mcse < 0.05
    assert value == pytest.approx(expected, abs=5 * mcse + 0.01)


# -- the estimator ----------------------------------------------------------------------------


def labelled_gaussian(rng, n_per_class=500):
    y = np.repeat([0, 1], n_per_class)
    return rng.normal(size=(y.size, 2)) + MEANS[y], y


def deployed_gaussian(rng, n, class_prob):
    y = rng.choice(2, size=n, p=class_prob)
    return rng.normal(size=(n, 2)) + MEANS[y]


def quick_gaussian_fit(X, y, seed=0):
    """A conjugate fit; its own posterior draws play no part in adjust_class_prior."""
    return GaussianNB(
        inference="conjugate", draws=100, chains=1, compute_map=False, random_seed=seed
    ).fit(X, y)


def covered_shifts(n_sets, draws):
    """How many of ``n_sets`` simulated data sets (a balanced labelled fit, 200 rows deployed
    with π′ = 0.9/0.1) hold the true π′ inside the 94 % interval."""
    covered = 0
    for seed in range(n_sets):
        rng = np.random.default_rng(1000 + seed)
        est = quick_gaussian_fit(*labelled_gaussian(rng), seed=seed)
        X_new = deployed_gaussian(rng, 200, TRUE_SHIFT)
        shift = est.adjust_class_prior(X_new, draws=draws, random_seed=seed)
        lower, upper = shift.interval
        covered += bool(np.all((lower <= TRUE_SHIFT) & (TRUE_SHIFT <= upper)))
    return covered


def test_a_known_shift_lies_in_its_interval_in_most_of_20_data_sets():
    assert covered_shifts(20, draws=500) >= 16


@pytest.mark.slow
def test_a_known_shift_lies_in_its_interval_in_90_of_100_data_sets():
    assert covered_shifts(100, draws=1000) >= 90


def test_no_shift_is_called_no_shift_in_most_data_sets():
    not_shifted, evidence_against = 0, 0
    for seed in range(20):
        rng = np.random.default_rng(2000 + seed)
        est = quick_gaussian_fit(*labelled_gaussian(rng), seed=seed)
        X_new = deployed_gaussian(rng, 200, [0.5, 0.5])
        shift = est.adjust_class_prior(X_new, draws=500, random_seed=seed)
        not_shifted += not shift.shifted
        evidence_against += shift.log_bayes_factor < 0
    assert not_shifted >= 16
    assert evidence_against >= 16


def test_a_shift_is_called_a_shift():
    rng = np.random.default_rng(6)
    est = quick_gaussian_fit(*labelled_gaussian(rng))
    shift = est.adjust_class_prior(deployed_gaussian(rng, 300, TRUE_SHIFT), random_seed=0)
    assert shift.shifted
    assert shift.log_bayes_factor > 10
    assert shift.map[0] == pytest.approx(TRUE_SHIFT[0], abs=0.06)
    assert np.all(shift.r_hat < 1.01) and np.all(shift.ess > 400)


def test_proba_is_the_exact_predictive_reweighted_by_each_draw():
    rng = np.random.default_rng(7)
    est = quick_gaussian_fit(*labelled_gaussian(rng, 50))
    X_new = deployed_gaussian(rng, 30, TRUE_SHIFT)
    shift = est.adjust_class_prior(X_new, draws=300, random_seed=0)
    assert shift.likelihood == EXACT_PREDICTIVE
    # p(k | x) ∝ E[π_k] p(x | k) from the fit; re-weighted: ∝ π′_k / E[π_k] · p(k | x)
    fitted = est.posterior_predictive_proba(X_new)
    ratio = shift.draws.values.reshape(-1, 2) / est.closed_form_["class_prob"].values
    weights = ratio[:, None, :] * fitted[None]
    expected = (weights / weights.sum(axis=2, keepdims=True)).mean(axis=0)
    np.testing.assert_allclose(shift.proba, expected, rtol=1e-9)
    lower, upper = shift.proba_interval
    assert np.all((lower <= shift.proba) & (shift.proba <= upper))
    assert np.all((shift.interval[0] <= shift.class_prob) & (shift.class_prob <= shift.interval[1]))


def test_plug_in_likelihood_where_the_model_has_no_exact_predictive(monkeypatch):
    rng = np.random.default_rng(8)
    est = quick_gaussian_fit(*labelled_gaussian(rng, 50))
    monkeypatch.setattr(type(est.model_), "has_exact_predictive", lambda self, options=None: False)
    X_new = deployed_gaussian(rng, 10, TRUE_SHIFT)
    log_likelihood, source = class_log_likelihood(est, X_new)
    assert source == PLUG_IN
    mu, var = est.closed_form_["mu"].values, est.closed_form_["var"].values
    expected = stats.norm.logpdf(X_new[:, None, :], mu[None], np.sqrt(var)[None]).sum(axis=2)
    np.testing.assert_allclose(
        log_likelihood - log_likelihood[:, :1], expected - expected[:, :1], rtol=1e-9
    )


def test_draws_are_labelled_by_the_classes_and_reproducible():
    rng = np.random.default_rng(9)
    X = rng.poisson(2.0, size=(80, 4))
    X[40:, 0] += 4
    y = np.repeat(["ham", "spam"], 40)
    est = MultinomialNB(inference="conjugate", compute_map=False, random_seed=0).fit(X, y)
    first = est.adjust_class_prior(X[:50], draws=200, random_seed=3)
    second = est.adjust_class_prior(X[:50], draws=200, random_seed=3)
    assert first.draws.dims == ("chain", "draw", "class")
    assert first.draws.sizes == {"chain": 4, "draw": 200, "class": 2}
    assert first.draws["class"].values.tolist() == ["ham", "spam"]
    np.testing.assert_array_equal(first.draws.values, second.draws.values)
    assert first.log_bayes_factor == second.log_bayes_factor
    text = str(first)
    assert "ham" in text and "spam" in text and "Shifted:" in text and "94% interval" in text


def test_a_prior_below_one_gives_draws_and_no_mode():
    rng = np.random.default_rng(10)
    est = quick_gaussian_fit(*labelled_gaussian(rng, 50))
    shift = est.adjust_class_prior(deployed_gaussian(rng, 40, TRUE_SHIFT), prior=0.5, draws=200)
    assert np.isnan(shift.map).all()
    assert np.isfinite(shift.class_prob).all()


# -- bad input --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fitted():
    return quick_gaussian_fit(*labelled_gaussian(np.random.default_rng(11), 30))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"X_new": np.empty((0, 2))}, ValueError, "X_new"),
        ({"X_new": np.ones((5, 3))}, ValueError, "X_new has 3 features"),
        ({"X_new": [["a", "b"]]}, TypeError, "X_new"),
        ({"prior": 0.0}, ValueError, "prior"),
        ({"prior": -1.0}, ValueError, "prior"),
        ({"prior": [1.0, 1.0, 1.0]}, ValueError, "prior"),
        ({"prior": "flat"}, TypeError, "prior"),
        ({"prob": 0.0}, ValueError, "prob"),
        ({"prob": 1.0}, ValueError, "prob"),
        ({"prob": 1.5}, ValueError, "prob"),
        ({"draws": 0}, ValueError, "draws"),
        ({"draws": 2.5}, TypeError, "draws"),
        ({"random_seed": "x"}, TypeError, "random_seed"),
    ],
)
def test_bad_input_is_refused_naming_the_argument(fitted, kwargs, error, match):
    arguments = {"X_new": np.zeros((4, 2)), **kwargs}
    with pytest.raises(error, match=match):
        fitted.adjust_class_prior(arguments.pop("X_new"), **arguments)


def test_an_unfitted_estimator_is_refused():
    with pytest.raises(NotFittedError):
        GaussianNB().adjust_class_prior(np.zeros((3, 2)))


def test_a_log_likelihood_without_a_finite_class_is_refused():
    with pytest.raises(ValueError, match="row 1"):
        prior_shift_em(np.array([[0.0, -1.0], [-np.inf, -np.inf]]), np.ones(2))


def test_gibbs_draws_stay_on_the_simplex_under_a_tiny_prior():
    rng = np.random.default_rng(12)
    x, _ = one_feature_rows(rng, 20, [0.5, 0.5])
    draws = prior_shift_gibbs(
        gaussian_log_likelihood(x), np.full(2, 1e-3), rng=rng, draws=200
    ).class_prob
    assert np.isfinite(draws).all()
    np.testing.assert_allclose(draws.sum(axis=-1), 1.0)
