"""Poisson naive Bayes (:mod:`bayesgen.families.poisson_nb`, :class:`bayesgen.PoissonNB`):
x_ij | y_i = k ~ Poisson(λ_kj), λ_kj ~ Gamma(a₀, b₀), π ~ Dirichlet(a).

Every expected value is computed here from the raw rows and the textbook Gamma–Poisson update
(shape a₀ + Σ_i x_ij, rate b₀ + N_k), SciPy's distributions (``nbinom``, ``poisson``,
``gamma``, ``dirichlet``) and numerical quadrature; never from the block's own methods.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import xarray as xr
from scipy import integrate, stats
from scipy.special import gammaln, logsumexp

import bayesgen
from bayesgen import closed_form
from bayesgen.estimators.poisson_nb import PoissonNB, RatePrior
from bayesgen.families import family
from bayesgen.families.poisson_nb import FAMILY, PoissonFamily
from bayesgen.input.params import FitMismatch, FitRecord
from bayesgen.maths import gamma_poisson

PRIOR = (2.0, 0.5)  # Gamma(shape 2, rate 0.5): mean 4, a prior of half a row
CONJUGATE = {"inference": "conjugate", "random_seed": 0, "rate_prior": PRIOR}
CLASSES = np.array(["a", "b", "c"])


@pytest.fixture(scope="module")
def data():
    """Three classes of five-feature counts with different rates, 30 rows."""
    rng = np.random.default_rng(11)
    rates = np.array(
        [[4.0, 3.0, 1.0, 0.5, 0.2], [0.5, 1.0, 2.0, 4.0, 6.0], [2.0, 2.0, 2.0, 0.1, 9.0]]
    )
    y = np.repeat([0, 1, 2], [12, 10, 8])
    X = rng.poisson(rates[y]).astype(float)
    return X, CLASSES[y]


def gamma_posterior(X, y, prior=PRIOR, classes=CLASSES):
    """(shape, rate) of each class's Gamma posterior, summed here from the raw rows."""
    a0, b0 = prior
    shape = np.array([a0 + X[y == label].sum(axis=0) for label in classes])
    rate = np.array([b0 + np.sum(y == label) for label in classes], dtype=float)
    return shape, rate


def scipy_log_predictive(x, X, y, prior=PRIOR, class_alpha=1.0, classes=CLASSES):
    """log p(x, y = k | X, y) from SciPy's negative binomial and the Dirichlet's mean."""
    shape, rate = gamma_posterior(X, y, prior, classes)
    counts = np.array([np.sum(y == label) for label in classes])
    class_term = np.log((counts + class_alpha) / (counts.sum() + len(classes) * class_alpha))
    features = stats.nbinom.logpmf(x[None, :], shape, (rate / (rate + 1.0))[:, None])
    return class_term + features.sum(axis=1)


def softmax(log_joint):
    return np.exp(log_joint - logsumexp(log_joint, axis=-1, keepdims=True))


# -- closed forms ----------------------------------------------------------------------------


def test_the_mle_is_the_class_mean_count(data):
    X, y = data
    est = PoissonNB(**CONJUGATE).fit(X, y)
    means = np.array([X[y == label].mean(axis=0) for label in CLASSES])
    np.testing.assert_allclose(est.closed_form_["feature_rate_mle"], means, rtol=1e-12, atol=0)


def test_posterior_means_sds_and_modes_are_the_gamma_posteriors(data):
    X, y = data
    est = PoissonNB(**CONJUGATE).fit(X, y)
    shape, rate = gamma_posterior(X, y)
    mean, sd, mode = shape / rate[:, None], np.sqrt(shape) / rate[:, None], None
    mode = (shape - 1.0) / rate[:, None]  # every shape is ≥ a₀ = 2 here
    np.testing.assert_allclose(est.closed_form_["feature_rate"], mean, rtol=1e-12)
    np.testing.assert_allclose(est.posterior_.mean()["feature_rate"], mean, rtol=1e-12)
    np.testing.assert_allclose(est.posterior_.sd()["feature_rate"], sd, rtol=1e-12)
    np.testing.assert_allclose(est.map_["feature_rate"], mode, rtol=1e-12)
    np.testing.assert_allclose(est.feature_rate_, mean, rtol=1e-12)
    interval = est.posterior_.interval(0.9)["feature_rate"]
    low = stats.gamma.ppf(0.05, shape, scale=1.0 / rate[:, None])
    np.testing.assert_allclose(interval.sel(bound="lower"), low, rtol=1e-10)


def test_a_rate_with_a_shape_below_one_has_no_mode(data):
    X, y = data
    est = PoissonNB(**{**CONJUGATE, "rate_prior": (0.5, 1.0)}).fit(X, y)
    zero = est.closed_form_["feature_count"].values == 0
    assert zero.any()
    assert np.isnan(est.map_["feature_rate"].values[zero]).all()
    assert np.isfinite(est.map_["feature_rate"].values[~zero]).all()


def test_the_default_rate_prior_is_gamma_one_over_the_mean_count(data):
    X, y = data
    est = PoissonNB(inference="conjugate", random_seed=0).fit(X, y)
    assert est.rate_prior_ == pytest.approx((1.0, X.size / X.sum()), rel=1e-12)
    shape, rate = gamma_posterior(X, y, prior=(1.0, X.size / X.sum()))
    np.testing.assert_allclose(est.feature_rate_, shape / rate[:, None], rtol=1e-12)


def test_the_default_rate_prior_of_rows_without_counts_is_gamma_one_one():
    est = PoissonNB(inference="conjugate", random_seed=0).fit(np.zeros((4, 2)), [0, 0, 1, 1])
    assert est.rate_prior_ == (1.0, 1.0)


def test_the_exact_predictive_is_negative_binomial(data):
    X, y = data
    est = PoissonNB(**CONJUGATE).fit(X, y)
    rows = np.array([[3.0, 3.0, 1.0, 1.0, 0.0], [0.0, 1.0, 2.0, 3.0, 5.0], [2.0] * 5])
    expected = softmax(np.stack([scipy_log_predictive(x, X, y) for x in rows]))
    np.testing.assert_allclose(est.posterior_predictive_proba(rows), expected, rtol=1e-12)
    np.testing.assert_allclose(
        closed_form.posterior_predictive_proba(est.closed_form_, sp.csr_array(rows)),
        expected,
        rtol=1e-12,
    )


def test_the_negative_binomial_log_pmf_is_scipys_for_dense_and_sparse_rows():
    rng = np.random.default_rng(3)
    X = rng.poisson(1.5, size=(9, 6)).astype(float)
    shape, rate = rng.uniform(0.3, 5.0, size=(3, 6)), rng.uniform(0.2, 4.0, size=3)
    expected = np.array(
        [[stats.nbinom.logpmf(x, shape[k], rate[k] / (rate[k] + 1)).sum() for k in range(3)]
         for x in X]
    )  # fmt: skip
    for rows in (X, sp.csr_array(X), sp.coo_array(X)):
        got = gamma_poisson.negative_binomial_log_pmf(rows, shape, rate)
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_plug_in_predict_proba_of_the_closed_form_is_poisson_at_the_posterior_means(data):
    X, y = data
    est = PoissonNB(**CONJUGATE).fit(X, y)
    rate = est.closed_form_["feature_rate"].values
    joint = np.log(est.closed_form_["class_prob"].values) + stats.poisson.logpmf(
        X[:, None, :], rate[None]
    ).sum(axis=-1)
    np.testing.assert_allclose(closed_form.predict_proba(est.closed_form_, X), softmax(joint))


def test_predict_proba_is_the_posterior_mean_of_p_y_given_x(data):
    X, y = data
    est = PoissonNB(**{**CONJUGATE, "draws": 300, "chains": 2}).fit(X, y)
    posterior = est.idata_["posterior"]
    rate = posterior["feature_rate"].transpose("chain", "draw", "class", "feature").values
    class_prob = posterior["class_prob"].transpose("chain", "draw", "class").values
    rate, class_prob = rate.reshape(-1, *rate.shape[2:]), class_prob.reshape(-1, 3)
    rows = X[:6]
    joint = np.log(class_prob)[:, None, :] + stats.poisson.logpmf(
        rows[None, :, None, :], rate[:, None, :, :]
    ).sum(axis=-1)
    np.testing.assert_allclose(est.predict_proba(rows), softmax(joint).mean(axis=0), rtol=1e-9)


def test_the_pointwise_log_likelihood_is_the_full_poisson_log_pmf(data):
    X, y = data
    est = PoissonNB(**{**CONJUGATE, "draws": 50, "chains": 2}).fit(X, y)
    posterior = est.idata_["posterior"]
    codes = np.searchsorted(CLASSES, y)
    rate = posterior["feature_rate"].values[:, :, codes, :]  # (chain, draw, obs, feature)
    class_prob = posterior["class_prob"].values[:, :, codes]
    expected = np.log(class_prob) + stats.poisson.logpmf(X, rate).sum(axis=-1)
    log_lik = est.idata_["log_likelihood"]["y"].transpose("chain", "draw", "obs").values
    np.testing.assert_allclose(log_lik, expected, rtol=1e-10)


# -- the evidence ------------------------------------------------------------------------------


def quadrature_log_evidence(X, y, prior, class_alpha, classes):
    """log p(y, X) of tiny data: the labels in order by their sequential Dirichlet predictive,
    every (class, feature) by quadrature of ∫ Π_i Poisson(x_ij | λ) Gamma(λ; a₀, b₀) dλ."""
    a0, b0 = prior
    seen = np.zeros(len(classes))
    labels = 0.0
    for i, label in enumerate(y):
        k = list(classes).index(label)
        labels += np.log((seen[k] + class_alpha) / (i + len(classes) * class_alpha))
        seen[k] += 1
    features = 0.0
    for label in classes:
        rows = X[y == label]
        for j in range(X.shape[1]):
            counts = rows[:, j]

            def integrand(lam, counts=counts):
                log_pmf = stats.poisson.logpmf(counts, lam).sum()
                return np.exp(log_pmf + stats.gamma.logpdf(lam, a0, scale=1.0 / b0))

            value, _ = integrate.quad(integrand, 0, np.inf, epsabs=0, epsrel=1e-13, limit=200)
            features += np.log(value)
    return labels + features


def test_the_evidence_equals_quadrature_on_tiny_data():
    X = np.array([[0.0, 3.0], [2.0, 1.0], [1.0, 0.0], [4.0, 2.0], [0.0, 0.0]])
    y = np.array(["a", "b", "a", "b", "b"])
    for prior, class_alpha in (((2.0, 0.5), 1.0), ((0.7, 3.0), 0.5)):
        est = PoissonNB(inference="conjugate", rate_prior=prior, class_alpha=class_alpha)
        est.fit(X, y)
        expected = quadrature_log_evidence(X, y, prior, class_alpha, np.array(["a", "b"]))
        assert closed_form.log_evidence(est.closed_form_) == pytest.approx(expected, abs=1e-8)


def test_the_evidence_is_the_product_of_the_sequential_predictives(data):
    X, y = data
    est = PoissonNB(**CONJUGATE).fit(X, y)
    terms = []
    for i in range(len(y)):
        joint = scipy_log_predictive(X[i], X[:i], y[:i])
        terms.append(joint[list(CLASSES).index(y[i])])
    assert closed_form.log_evidence(est.closed_form_) == pytest.approx(sum(terms), rel=1e-12)


def test_the_evidence_takes_any_prior_at_once(data):
    X, y = data
    est = PoissonNB(**CONJUGATE).fit(X, y)
    stats_ = est.closed_form_
    grid = gamma_poisson.log_evidence(
        stats_["feature_count"].values,
        stats_["class_count"].values,
        stats_["feature_log_factorial"].values,
        np.array([[2.0], [1.0]]),
        np.array([0.5, 3.0]),
    )
    assert grid.shape == (2, 2)
    for (i, j), prior in zip([(0, 0), (1, 1)], [(2.0, 0.5), (1.0, 3.0)], strict=True):
        fit = PoissonNB(inference="conjugate", rate_prior=prior).fit(X, y).closed_form_
        labels = closed_form.log_evidence(fit) - grid[i, j]
        assert labels == pytest.approx(closed_form.log_evidence(stats_) - grid[0, 0], rel=1e-12)


# -- leave-one-out -----------------------------------------------------------------------------


def test_exact_leave_one_out_equals_refitting_without_each_row(data):
    X, y = data
    est = PoissonNB(**{**CONJUGATE, "draws": 50}).fit(X, y)
    codes = np.searchsorted(CLASSES, y)
    joint = FAMILY.loo_log_joint(est.closed_form_, X, codes)
    refits = []
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        refits.append(scipy_log_predictive(X[i], X[keep], y[keep]))
    np.testing.assert_allclose(joint, np.stack(refits), rtol=1e-11)
    np.testing.assert_allclose(bayesgen.loo_proba(est), softmax(np.stack(refits)), rtol=1e-10)


# -- the posterior checks ----------------------------------------------------------------------


def test_compare_finds_the_exact_draws_agree_with_the_closed_forms(data):
    X, y = data
    result = bayesgen.compare(PoissonNB(**CONJUGATE).fit(X, y))
    assert result.ok, str(result)
    assert set(result.table["variable"]) == {"class_prob", "feature_rate"}
    rates = result.table[result.table["variable"] == "feature_rate"]
    shape, rate = gamma_posterior(X, y)
    np.testing.assert_allclose(rates["closed_form"], (shape / rate[:, None]).ravel(), rtol=1e-12)
    np.testing.assert_allclose(
        rates["closed_form_sd"], (np.sqrt(shape) / rate[:, None]).ravel(), rtol=1e-12
    )


def test_compare_passes_the_exact_posterior_in_49_of_50_seeds(data):
    X, y = data
    passed = 0
    for seed in range(50):
        options = {**CONJUGATE, "random_seed": seed, "draws": 500, "chains": 2}
        est = PoissonNB(**options, compute_map=False, prior_draws=0).fit(X, y)
        passed += bayesgen.compare(est).ok
    assert passed >= 49


def wrong_draws(change):
    """``conjugate_draws`` whose posterior rates are changed by ``change(draws)`` (the prior's
    draws, the truth in SBC, stay right)."""
    exact = PoissonFamily.conjugate_draws

    def draws(self, estimates, rng, sample_shape, dtype, *, posterior):
        variables = exact(self, estimates, rng, sample_shape, dtype, posterior=posterior)
        if posterior:
            dims, rates = variables["feature_rate"]
            variables["feature_rate"] = (dims, change(rates, len(sample_shape)))
        return variables

    return draws


def shifted_mean(rates, n_axes):
    return rates + 0.25 * rates.std(axis=tuple(range(n_axes)))


def halved_sd(rates, n_axes):
    mean = rates.mean(axis=tuple(range(n_axes)))
    return mean + (rates - mean) / 2.0


@pytest.mark.parametrize("change", [shifted_mean, halved_sd])
def test_compare_rejects_a_wrong_posterior(data, monkeypatch, change):
    X, y = data
    monkeypatch.setattr(PoissonFamily, "conjugate_draws", wrong_draws(change))
    result = bayesgen.compare(PoissonNB(**CONJUGATE).fit(X, y))
    assert not result.ok
    wrong = result.table[~result.table["agrees"]]
    assert set(wrong["variable"]) == {"feature_rate"}


def test_sbc_finds_the_conjugate_posterior_calibrated(data):
    X, y = data
    est = PoissonNB(**{**CONJUGATE, "draws": 50}).fit(X, y)
    result = bayesgen.sbc(est, n_simulations=40, n_draws=19, n_bins=5, random_seed=3)
    assert result.ok, str(result)
    assert set(result.p_values.index) == {"class_prob", "feature_rate"}


def test_sbc_fails_under_a_25_fold_prior_mismatch(data):
    X, y = data
    est = PoissonNB(**{**CONJUGATE, "draws": 50}).fit(X, y)
    # The rates are drawn from the fit's Gamma(2, 0.5); the refits use a rate 25 times larger.
    est.set_params(rate_prior=(PRIOR[0], 25 * PRIOR[1]))
    result = bayesgen.sbc(est, n_simulations=40, n_draws=19, n_bins=5, random_seed=3)
    assert not result.ok
    assert result.p_values["feature_rate"] < result.level < result.p_values["class_prob"]


# -- fitting: chunks, weights, sparse rows -----------------------------------------------------

STATISTICS = ["class_count", "feature_count", "feature_log_factorial", "feature_rate"]


def test_partial_fit_on_two_chunks_equals_one_fit(data):
    X, y = data
    whole = PoissonNB(inference="conjugate", random_seed=0).fit(X, y)
    chunks = PoissonNB(inference="conjugate", random_seed=0)
    chunks.partial_fit(X[::2], y[::2], classes=CLASSES).partial_fit(X[1::2], y[1::2])
    xr.testing.assert_allclose(chunks.closed_form_[STATISTICS], whole.closed_form_[STATISTICS])
    assert chunks.rate_prior_ == pytest.approx(whole.rate_prior_, rel=1e-12)


def test_integer_weights_equal_repeated_rows(data):
    X, y = data
    weights = np.arange(len(y)) % 3
    repeated = np.repeat(np.arange(len(y)), weights)
    weighted = PoissonNB(**CONJUGATE).fit(X, y, sample_weight=weights)
    copies = PoissonNB(**CONJUGATE).fit(X[repeated], y[repeated])
    xr.testing.assert_allclose(weighted.closed_form_[STATISTICS], copies.closed_form_[STATISTICS])
    assert closed_form.log_evidence(weighted.closed_form_) == pytest.approx(
        closed_form.log_evidence(copies.closed_form_), rel=1e-12
    )


def test_sparse_rows_give_the_fit_of_dense_rows(data):
    X, y = data
    dense = PoissonNB(**CONJUGATE).fit(X, y)
    sparse = PoissonNB(**CONJUGATE).fit(sp.csr_array(X), y)
    xr.testing.assert_allclose(sparse.closed_form_, dense.closed_form_)
    np.testing.assert_allclose(bayesgen.loo_proba(sparse), bayesgen.loo_proba(dense), rtol=1e-12)


def test_the_log_factorial_statistic_is_the_sum_of_log_x_factorial(data):
    X, y = data
    est = PoissonNB(**CONJUGATE).fit(X, y)
    expected = np.array([gammaln(X[y == label] + 1.0).sum(axis=0) for label in CLASSES])
    np.testing.assert_allclose(est.closed_form_["feature_log_factorial"], expected, rtol=1e-12)


# -- parameters, saving, the registry ------------------------------------------------------------


@pytest.mark.parametrize(
    ("rate_prior", "error"),
    # A string other than "evidence" is a value out of its options, as for every option.
    [((1.0, 0.0), ValueError), ((1.0,), ValueError), ("weak", ValueError), (2.0, TypeError)],
)
def test_a_bad_rate_prior_is_refused_by_name_at_fit(data, rate_prior, error):
    X, y = data
    with pytest.raises(error, match="rate_prior: expected None, 'evidence' or a pair"):
        PoissonNB(inference="conjugate", rate_prior=rate_prior).fit(X, y)


def test_the_rule_reads_back_only_the_prior_the_fit_used():
    record = FitRecord(attrs={"rate_prior_shape": 2.0, "rate_prior_rate": 0.5})
    assert RatePrior().decode("rate_prior", [2, 0.5], record) == (2.0, 0.5)
    assert RatePrior().decode("rate_prior", None, record) is None
    with pytest.raises(FitMismatch):
        RatePrior().decode("rate_prior", [2, 1], record)
    with pytest.raises(ValueError, match="rate_prior"):
        RatePrior().decode("rate_prior", [2, -1], record)


@pytest.mark.parametrize("rate_prior", [None, PRIOR])
def test_a_saved_model_loads_and_predicts_the_same(data, tmp_path, rate_prior):
    X, y = data
    est = PoissonNB(**{**CONJUGATE, "rate_prior": rate_prior, "draws": 200}).fit(X, y)
    loaded = bayesgen.load(est.save(tmp_path / "poisson.nc"))
    assert type(loaded) is PoissonNB and loaded.model_ is FAMILY
    assert loaded.get_params() == est.get_params()
    xr.testing.assert_identical(loaded.closed_form_, est.closed_form_)
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))


def test_a_saved_model_with_altered_statistics_is_refused(data, tmp_path):
    X, y = data
    est = PoissonNB(**CONJUGATE, draws=50).fit(X, y)
    est.closed_form_["feature_count"] = est.closed_form_["feature_count"] + 1.0
    with pytest.raises(ValueError, match="feature_rate"):
        bayesgen.load(est.save(tmp_path / "altered.nc"))


def test_the_block_is_registered_under_its_names():
    assert family("poisson_nb") is FAMILY and PoissonNB().model_ is FAMILY
    assert (FAMILY.estimator, FAMILY.cli_name, FAMILY.feature_kind) == (
        "PoissonNB",
        "poisson",
        "count",
    )
    assert bayesgen.PoissonNB is PoissonNB


# -- the generative model ----------------------------------------------------------------------


def test_simulated_rows_have_the_poisson_means_of_their_class(data):
    X, y = data
    est = PoissonNB(**CONJUGATE).fit(X, y)
    codes = np.repeat([0, 1, 2], 4000)
    rates = np.array([[1.0, 2.0, 0.5, 3.0, 0.0]] * 3) * np.array([[1.0], [2.0], [3.0]])
    rows = FAMILY.simulate_rows(
        est.closed_form_, X, codes, {"feature_rate": rates}, np.random.default_rng(0)
    )
    for k in range(3):
        np.testing.assert_allclose(rows[codes == k].mean(axis=0), rates[k], atol=0.1)
    assert sp.issparse(
        FAMILY.simulate_rows(est.closed_form_, sp.csr_array(X), codes[:5], {"feature_rate": rates},
                             np.random.default_rng(0))
    )  # fmt: skip


def test_posterior_predictive_rows_keep_the_row_totals_and_zero_counts(data):
    X, y = data
    est = PoissonNB(**{**CONJUGATE, "draws": 20, "chains": 2}).fit(X, y)
    tree = est.sample_posterior_predictive(random_seed=0)
    rows = tree["posterior_predictive_rows"]
    assert rows["X"].shape == (2, 20, *X.shape)
    np.testing.assert_array_equal(rows["row_total"], rows["X"].sum("feature"))
    np.testing.assert_array_equal(rows["zero_counts"], (rows["X"] == 0).sum("feature"))
    observed = est.idata_["constant_data"]
    np.testing.assert_array_equal(observed["row_total"], X.sum(axis=1))


def test_the_pymc_model_observes_the_statistics_and_has_the_exact_posterior(data):
    X, y = data
    est = PoissonNB(**CONJUGATE).fit(X, y)
    model = est.pymc_model()
    assert [rv.name for rv in model.observed_RVs] == ["class_count", "feature_count"]
    logp = model.compile_logp(jacobian=False)
    shape, rate = gamma_posterior(X, y)
    concentration = 1.0 + np.array([np.sum(y == label) for label in CLASSES])
    rng = np.random.default_rng(5)
    points, exact = [], []
    for _ in range(2):
        rates = rng.gamma(shape, 1.0 / rate[:, None])
        class_prob = rng.dirichlet(concentration)
        points.append(_value_point(model, {"feature_rate": rates, "class_prob": class_prob}))
        exact.append(
            stats.gamma.logpdf(rates, shape, scale=1.0 / rate[:, None]).sum()
            + stats.dirichlet.logpdf(class_prob, concentration)
        )
    # The model's log density is the posterior's up to a constant (the evidence).
    assert logp(points[0]) - logp(points[1]) == pytest.approx(exact[0] - exact[1], rel=1e-9)


def test_the_pymc_model_simulates_the_sums_from_the_prior(data):
    import pymc as pm

    X, y = data
    est = PoissonNB(**CONJUGATE).fit(X, y)
    with est.pymc_model():
        prior = pm.sample_prior_predictive(draws=4000, random_seed=1, var_names=["feature_count"])
    sums = prior.prior_predictive["feature_count"].values.reshape(-1, 3, 5)
    # S ~ Poisson(N_k λ), λ ~ Gamma(a₀, b₀): mean N_k a₀ / b₀, variance N_k a₀ / b₀ (1 + N_k / b₀)
    rows = np.array([np.sum(y == label) for label in CLASSES], dtype=float)[:, None]
    mean = rows * PRIOR[0] / PRIOR[1]
    standard_error = np.sqrt(mean * (1.0 + rows / PRIOR[1]) / sums.shape[0])
    assert np.all(np.abs(sums.mean(axis=0) - mean) < 5 * standard_error)


def test_fractional_counts_enter_the_pymc_model_as_a_weighted_likelihood(data):
    X, y = data
    est = PoissonNB(**CONJUGATE).fit(X + np.pi / 10, y)  # sums that are not whole
    model = est.pymc_model()
    assert [rv.name for rv in model.observed_RVs] == ["class_count"]
    assert [potential.name for potential in model.potentials] == ["feature_loglik"]


def _value_point(model, values: dict) -> dict:
    """The point of ``model``'s value variables (transformed) for the variables ``values``."""
    point = {}
    for rv in model.free_RVs:
        value_var = model.rvs_to_values[rv]
        transform = model.rvs_to_transforms[rv]
        value = np.asarray(values[rv.name], dtype=np.float64)
        if transform is not None:
            value = transform.forward(value, *rv.owner.inputs).eval()
        point[value_var.name] = value
    return point


@pytest.mark.slow
def test_nuts_on_the_pymc_model_agrees_with_the_closed_forms(data):
    X, y = data
    est = PoissonNB(
        rate_prior=PRIOR, draws=500, tune=500, chains=2, random_seed=0, progressbar=False
    ).fit(X, y)
    result = bayesgen.compare(est)
    assert result.ok, str(result)
