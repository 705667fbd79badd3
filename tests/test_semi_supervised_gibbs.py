"""The full posterior of a semi-supervised fit by Gibbs sampling over the unlabelled rows' labels.

The expected values come from outside the sampler: the exact posterior of a tiny data set by
enumerating every labelling of its unlabelled rows (a mixture of Dirichlets, weighted by each
completed data set's evidence, written here with gammaln), and simulation-based calibration
(parameters drawn from the prior, 80 % of the labels hidden).
"""

import itertools

import arviz as az
import numpy as np
import pytest
from numpy.testing import assert_array_equal
from scipy import stats
from scipy.special import gammaln, logsumexp

from bayesgen import GaussianNB, MultinomialNB, NormalInverseGamma
from bayesgen.families import family
from bayesgen.inference.semi_supervised import em_map, stack_rows, stationarity_gap

CLASS_ALPHA, ALPHA = 1.0, 1.0
GIBBS = {"inference": "conjugate", "prior_draws": 0, "compute_map": False}


def tiny_data(seed=0, n_labelled=8, n_unlabelled=8):
    """Two classes of 6-word documents over three words, the first rows alternating the
    classes (labelled), the last ``n_unlabelled`` unlabelled."""
    rng = np.random.default_rng(seed)
    y = np.r_[[0, 1] * (n_labelled // 2), rng.integers(0, 2, n_unlabelled)]
    theta = np.array([[0.6, 0.3, 0.1], [0.2, 0.3, 0.5]])
    X = np.array([rng.multinomial(6, theta[k]) for k in y])
    hidden = y.astype(float)
    hidden[n_labelled:] = np.nan
    return X, hidden


def exact_posterior(X, hidden):
    """Posterior means of π and θ and every unlabelled row's P(y = 1 | data) for multinomial
    naive Bayes with Dirichlet(CLASS_ALPHA) and Dirichlet(ALPHA) priors, by enumerating the
    labellings z of the unlabelled rows: p(z | data) ∝ p(y_L, z) p(X | y_L, z), both
    Dirichlet-multinomial evidences; given z the posterior is conjugate."""
    labelled = ~np.isnan(hidden)
    y_labelled = hidden[labelled].astype(int)
    n_unlabelled, n_words = int((~labelled).sum()), X.shape[1]
    X_ordered = np.r_[X[labelled], X[~labelled]]
    log_weights, class_means, word_means, labellings = [], [], [], []
    for z in itertools.product([0, 1], repeat=n_unlabelled):
        y = np.r_[y_labelled, z]
        class_count = np.bincount(y, minlength=2)
        word_count = np.stack([X_ordered[y == k].sum(axis=0) for k in range(2)])
        log_weight = gammaln(2 * CLASS_ALPHA) - gammaln(len(y) + 2 * CLASS_ALPHA)
        log_weight += np.sum(gammaln(class_count + CLASS_ALPHA) - gammaln(CLASS_ALPHA))
        for k in range(2):
            log_weight += gammaln(n_words * ALPHA) - gammaln(word_count[k].sum() + n_words * ALPHA)
            log_weight += np.sum(gammaln(word_count[k] + ALPHA) - gammaln(ALPHA))
        log_weights.append(log_weight)
        class_means.append((class_count + CLASS_ALPHA) / (len(y) + 2 * CLASS_ALPHA))
        word_means.append(
            (word_count + ALPHA) / (word_count.sum(axis=1, keepdims=True) + n_words * ALPHA)
        )
        labellings.append(z)
    weights = np.exp(np.array(log_weights) - logsumexp(log_weights))
    return (
        np.tensordot(weights, np.array(class_means), axes=1),
        np.tensordot(weights, np.array(word_means), axes=1),
        weights @ np.array(labellings),
    )


def within_mcse(draws, expected, factor=4.5):
    """Whether every posterior mean of ``draws`` (chain, draw, ...) is within ``factor``
    Monte Carlo standard errors of ``expected``."""
    mean = draws.mean(axis=(0, 1))
    mcse = az.mcse(draws.reshape(draws.shape[0], draws.shape[1], -1)).reshape(mean.shape)
    return np.abs(mean - expected) <= factor * mcse, mean, mcse


# -- exactness -----------------------------------------------------------------------------------


def test_gibbs_means_equal_the_enumerated_exact_posterior():
    X, hidden = tiny_data()
    est = MultinomialNB(
        alpha=ALPHA, class_alpha=CLASS_ALPHA, draws=1500, tune=100, chains=2, random_seed=1, **GIBBS
    ).fit(X, hidden)
    class_mean, word_mean, label_mean = exact_posterior(X, hidden)
    posterior = est.idata_["posterior"]
    for name, expected in (("class_prob", class_mean), ("feature_prob", word_mean)):
        ok, mean, mcse = within_mcse(posterior[name].values, expected)
        assert ok.all(), (name, mean, expected, mcse)
    # P(y = 1 | data) of each unlabelled row, Rao-Blackwellised: far tighter than the draws.
    labels = est.posterior_label_distributions_[8:, 1]
    np.testing.assert_allclose(labels, label_mean, atol=0.03)


def test_gibbs_is_not_the_expected_statistics_approximation():
    """The test above can fail: the conjugate posterior at EM's expected statistics (λ_u < 1
    keeps it) is narrower than the exact one."""
    X, hidden = tiny_data()
    options = {"alpha": ALPHA + 1, "class_alpha": CLASS_ALPHA, "draws": 400, "chains": 2}
    gibbs = MultinomialNB(**options, tune=50, random_seed=0, **GIBBS).fit(X, hidden)
    approximate = MultinomialNB(**options, random_seed=0, **GIBBS).fit(
        X, hidden, unlabelled_weight=1 - 1e-12
    )
    assert approximate.closed_form_.attrs["semi_supervised_posterior"] == "expected_statistics"
    assert gibbs.closed_form_.attrs["semi_supervised_posterior"] == "gibbs"
    sd_gibbs = gibbs.idata_["posterior"]["class_prob"].std(("chain", "draw")).values
    sd_approximate = approximate.idata_["posterior"]["class_prob"].std(("chain", "draw")).values
    assert np.all(sd_gibbs > sd_approximate)


# -- what the estimator holds ----------------------------------------------------------------------


def test_posterior_is_laid_out_as_the_supervised_one_with_diagnostics():
    X, hidden = tiny_data()
    est = MultinomialNB(alpha=2.0, draws=200, tune=20, chains=2, random_seed=0, **GIBBS)
    est.fit(X, hidden)
    supervised = MultinomialNB(alpha=2.0, draws=200, chains=2, random_seed=0, **GIBBS)
    supervised.fit(X[:8], hidden[:8])
    posterior, reference = est.idata_["posterior"], supervised.idata_["posterior"]
    assert set(posterior.data_vars) == set(reference.data_vars)
    for name in reference.data_vars:
        assert posterior[name].dims == reference[name].dims
    summary = az.summary(posterior.dataset, kind="diagnostics")
    assert np.isfinite(summary["ess_bulk"]).all() and (summary["r_hat"] < 1.05).all()
    assert est.idata_["observed_data"].sizes["obs"] == 8  # the labelled rows
    assert est.idata_["log_likelihood"]["y"].shape[:2] == (2, 200)
    distributions = est.posterior_label_distributions_
    assert distributions.shape == (len(X), 2)
    assert_array_equal(distributions[:8], est.label_distributions_[:8])  # one-hot, given


def test_map_and_closed_form_stay_the_em_ones():
    X, hidden = tiny_data()
    options = {"alpha": 2.0, "draws": 50, "tune": 5, "chains": 1, "random_seed": 0}
    gibbs = MultinomialNB(**options, **GIBBS | {"compute_map": True}).fit(X, hidden)
    approximate = MultinomialNB(**options, **GIBBS | {"compute_map": True}).fit(
        X, hidden, unlabelled_weight=0.999999999
    )
    assert gibbs.map_ is not None
    assert gibbs.closed_form_.attrs["em_converged"] == 1
    assert_array_equal(
        gibbs.closed_form_["feature_count"].values.round(3),
        approximate.closed_form_["feature_count"].values.round(3),
    )


def test_same_seed_same_draws_other_seed_other_draws():
    X, hidden = tiny_data()
    options = {"alpha": 2.0, "draws": 30, "tune": 5, "chains": 2, **GIBBS}
    first = MultinomialNB(**options, random_seed=3).fit(X, hidden)
    second = MultinomialNB(**options, random_seed=3).fit(X, hidden)
    other = MultinomialNB(**options, random_seed=4).fit(X, hidden)
    for name in first.idata_["posterior"].data_vars:
        values = first.idata_["posterior"][name].values
        assert_array_equal(values, second.idata_["posterior"][name].values)
        assert not np.array_equal(values, other.idata_["posterior"][name].values)


def test_fractional_weights_of_unlabelled_rows_keep_the_approximation():
    X, hidden = tiny_data()
    weights = np.ones(len(X))
    weights[-1] = 0.5
    est = MultinomialNB(alpha=2.0, draws=30, random_seed=0, **GIBBS).fit(
        X, hidden, sample_weight=weights
    )
    assert est.closed_form_.attrs["semi_supervised_posterior"] == "expected_statistics"
    assert not hasattr(est, "posterior_label_distributions_")


def test_a_refit_without_unlabelled_rows_drops_the_gibbs_attributes():
    X, hidden = tiny_data()
    est = MultinomialNB(alpha=2.0, draws=20, tune=2, chains=1, random_seed=0, **GIBBS)
    est.fit(X, hidden).fit(X[:8], hidden[:8])
    assert not hasattr(est, "posterior_label_distributions_")


# -- simulation-based calibration ----------------------------------------------------------------


def sbc_ranks(simulate, fit_draws, n_sets, rng):
    """Ranks of the true parameters among posterior draws, one row per simulated data set."""
    ranks = []
    for _ in range(n_sets):
        truth, X, hidden = simulate(rng)
        draws = fit_draws(X, hidden, int(rng.integers(2**31)))
        ranks.append((draws < truth[None, :]).sum(axis=0))
    return np.array(ranks)


def assert_uniform(ranks, n_draws, bins=5):
    """Chi-square test of the ranks' uniformity on 0..n_draws, per parameter (p > 0.001)."""
    for column in ranks.T:
        counts = np.bincount(column * bins // (n_draws + 1), minlength=bins)
        assert stats.chisquare(counts).pvalue > 0.001, counts


def hide(y, rng, share=0.8):
    """y as floats with ``share`` of the labels hidden (NaN), keeping one of each class."""
    hidden = y.astype(float)
    candidates = np.r_[np.flatnonzero(y == 0)[1:], np.flatnonzero(y == 1)[1:]]
    n_hidden = min(round(share * len(y)), candidates.size)
    hidden[rng.choice(candidates, n_hidden, replace=False)] = np.nan
    return hidden


N_SBC_DRAWS = 99


def thinned(posterior, name, index):
    values = posterior[name].values.reshape(-1, *posterior[name].shape[2:])
    return values[:: max(1, len(values) // N_SBC_DRAWS)][:N_SBC_DRAWS][(slice(None), *index)]


@pytest.mark.slow
def test_sbc_multinomial():
    def simulate(rng):
        class_prob = rng.dirichlet([2.0, 2.0])
        feature_prob = rng.dirichlet(np.full(4, 2.0), size=2)
        y = np.r_[0, 1, rng.choice(2, 28, p=class_prob)]
        X = np.array([rng.multinomial(8, feature_prob[k]) for k in y])
        return np.r_[class_prob[0], feature_prob[0, 0], feature_prob[1, 2]], X, hide(y, rng)

    def fit_draws(X, hidden, seed):
        est = MultinomialNB(
            alpha=2.0, class_alpha=2.0, draws=400, tune=50, chains=1, random_seed=seed, **GIBBS
        ).fit(X, hidden)
        posterior = est.idata_["posterior"]
        return np.stack(
            [
                thinned(posterior, "class_prob", (0,)),
                thinned(posterior, "feature_prob", (0, 0)),
                thinned(posterior, "feature_prob", (1, 2)),
            ],
            axis=1,
        )

    ranks = sbc_ranks(simulate, fit_draws, 120, np.random.default_rng(0))
    assert_uniform(ranks, N_SBC_DRAWS)


@pytest.mark.slow
def test_sbc_gaussian_nb():
    prior = NormalInverseGamma(mean=0.0, kappa=0.5, shape=3.0, scale=2.0)

    def simulate(rng):
        class_prob = rng.dirichlet([2.0, 2.0])
        var = stats.invgamma(3.0, scale=2.0).rvs(size=(2, 2), random_state=rng)
        mu = rng.normal(0.0, np.sqrt(var / 0.5))
        y = np.r_[0, 1, rng.choice(2, 28, p=class_prob)]
        X = rng.normal(mu[y], np.sqrt(var[y]))
        return np.r_[class_prob[0], mu[0, 0], var[1, 1]], X, hide(y, rng)

    def fit_draws(X, hidden, seed):
        est = GaussianNB(
            class_alpha=2.0, prior=prior, draws=400, tune=50, chains=1, random_seed=seed, **GIBBS
        ).fit(X, hidden)
        posterior = est.idata_["posterior"]
        return np.stack(
            [
                thinned(posterior, "class_prob", (0,)),
                thinned(posterior, "mu", (0, 0)),
                thinned(posterior, "var", (1, 1)),
            ],
            axis=1,
        )

    ranks = sbc_ranks(simulate, fit_draws, 120, np.random.default_rng(1))
    assert_uniform(ranks, N_SBC_DRAWS)


# -- the EM's MAP is a stationary point ------------------------------------------------------------


@pytest.mark.parametrize(
    ("Estimator", "options"),
    [(MultinomialNB, {"alpha": 2.0}), (GaussianNB, {})],
    ids=["multinomial", "gaussian"],
)
def test_em_map_satisfies_the_mode_identities_at_its_expected_statistics(Estimator, options):
    X, hidden = tiny_data(n_unlabelled=20)
    est = Estimator(**options, draws=10, tune=0, chains=1, random_seed=0, **GIBBS)
    gap = est.fit(X.astype(float), hidden).closed_form_.attrs["em_stationarity_gap"]
    assert est.closed_form_.attrs["em_converged"] == 1
    assert 0 <= gap < 1e-6


def test_stationarity_gap_is_large_one_step_from_the_start():
    """The check can fail: after one EM step the MAP still moves."""
    X, hidden = tiny_data(n_unlabelled=20)
    model = family("multinomial_nb")
    labelled = ~np.isnan(hidden)
    X_unlabelled = X[~labelled]
    classes = np.array([0, 1])
    stacked = stack_rows(X_unlabelled, 2)

    def unlabelled(weights):
        return model.sufficient_statistics(
            stacked,
            np.repeat(classes, len(X_unlabelled)),
            sample_weight=weights.T.ravel(),
            classes=classes,
        )

    common = {
        "labelled_statistics": model.sufficient_statistics(X[labelled], hidden[labelled]),
        "unlabelled_statistics": unlabelled,
        "estimates_of": lambda statistics: model.from_statistics(statistics, alpha=2.0),
    }
    start = np.full((len(X_unlabelled), 2), 0.5)
    one_step = em_map(
        model,
        labelled_rows=X[labelled],
        labelled_codes=hidden[labelled].astype(int),
        unlabelled_rows=X_unlabelled,
        initial=start,
        max_iter=1,
        **common,
    )
    assert stationarity_gap(model, one_step, **common) > 1e-3
