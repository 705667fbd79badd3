"""The Dirichlet compound multinomial block (bayesgen.families.dcm) and its estimator
(bayesgen.DirichletMultinomialNB): statistics, point fit, NUTS, MAP, compare, saving.

The NUTS runs are tiny (2 classes x 20 words, 60 documents, 2 x 300 draws) and share one fit.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import xarray as xr
from scipy import stats

import bayesgen
from bayesgen import DirichletMultinomialNB
from bayesgen.families.dcm import FAMILY, histograms_of
from bayesgen.maths.dirichlet_multinomial import count_histograms, fit_concentration

N_WORDS = 20
SMALL_NUTS = {
    "draws": 300,
    "tune": 300,
    "chains": 2,
    "random_seed": 0,
    "prior_draws": 0,
    "progressbar": False,
}


def corpus(n_documents=60, seed=0):
    rng = np.random.default_rng(seed)
    alpha = rng.gamma(1.0, 1.0, size=(2, N_WORDS)) + 0.3
    y = np.arange(n_documents) % 2
    X = np.array([rng.multinomial(rng.integers(15, 50), rng.dirichlet(alpha[k])) for k in y])
    return X.astype(float), np.where(y == 0, "ham", "spam")


@pytest.fixture(scope="module")
def nuts_fit():
    X, y = corpus()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DirichletMultinomialNB(**SMALL_NUTS).fit(X, y), X, y


def test_the_estimator_fits_the_block():
    assert bayesgen.DirichletMultinomialNB().model_ is FAMILY


def test_statistics_are_the_histograms_of_the_documents():
    X, y = corpus()
    stats_ = FAMILY.sufficient_statistics(sp.csr_array(X), y)
    expected = count_histograms(X, (y == "spam").astype(int), 2)
    for mine, theirs in zip(histograms_of(stats_), expected, strict=True):
        np.testing.assert_allclose(mine, theirs)
    assert stats_.attrs["n_samples"] == 60


def test_merged_chunks_give_the_fit_of_all_documents():
    X, y = corpus()
    whole = FAMILY.fit(X, y)
    classes = np.unique(y)
    merged = FAMILY.sufficient_statistics(X[:25], y[:25], classes=classes)
    merged = FAMILY.merge_statistics(
        merged, FAMILY.sufficient_statistics(X[25:], y[25:], classes=classes)
    )
    chunked = FAMILY.from_statistics(merged)
    for name in ("concentration", "feature_mean", "class_prob", "concentration_mle"):
        np.testing.assert_allclose(chunked[name].values, whole[name].values, rtol=1e-12)


def test_flat_prior_point_fit_is_the_evidence_maximiser():
    X, y = corpus()
    fit = FAMILY.fit(X, y, concentration_prior="flat", mean_prior_strength=0.0)
    direct = fit_concentration(count_histograms(X, (y == "spam").astype(int), 2))
    np.testing.assert_allclose(fit["concentration"].values, direct.concentration, rtol=1e-10)
    np.testing.assert_allclose(fit["concentration_mle"].values, direct.concentration, rtol=1e-10)


def test_pooled_mean_is_one_mean_for_every_class():
    X, y = corpus()
    fit = FAMILY.fit(X, y, prior_mean="pooled")
    np.testing.assert_allclose(fit["feature_mean"].values[0], fit["feature_mean"].values[1])


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("prior_mean", "shared"),
        ("concentration_prior", (0.5, 1.0)),
        ("concentration_prior", "flatt"),
        ("mean_prior_strength", -1.0),
    ],
)
def test_bad_prior_options_are_refused_by_name(option, value):
    X, y = corpus(10)
    with pytest.raises(ValueError, match=option):
        FAMILY.fit(X, y, **{option: value})


def test_conjugate_inference_is_refused_naming_inference():
    X, y = corpus(10)
    with pytest.raises(ValueError, match="inference"):
        DirichletMultinomialNB(inference="conjugate").fit(X, y)


def test_draw_log_joint_equals_scipy_per_draw_and_class():
    X, y = corpus(6)
    fit = FAMILY.fit(X, y)
    concentration = np.array([[3.0, 5.0], [10.0, 1.5]])
    mean = np.random.default_rng(1).dirichlet(np.ones(N_WORDS), size=(2, 2))
    draws = xr.Dataset(
        {
            "class_prob": (("draw", "class"), np.array([[0.3, 0.7], [0.5, 0.5]])),
            "concentration": (("draw", "class"), concentration),
            "feature_mean": (("draw", "class", "feature"), mean),
        }
    )
    joint = FAMILY.draw_log_joint(fit, X, draws)
    for d in range(2):
        for i in range(6):
            for k in range(2):
                expected = np.log(draws["class_prob"].values[d, k]) + (
                    stats.dirichlet_multinomial.logpmf(
                        X[i], concentration[d, k] * mean[d, k], X[i].sum()
                    )
                )
                assert joint[d, i, k] == pytest.approx(expected, abs=1e-10)


def test_simulated_rows_keep_the_training_lengths():
    X, y = corpus(10)
    fit = FAMILY.fit(X, y)
    parameters = {
        "concentration": fit["concentration"].values,
        "feature_mean": fit["feature_mean"].values,
    }
    rows = FAMILY.simulate_rows(
        fit, X, (y == "spam").astype(int), parameters, np.random.default_rng(0)
    )
    np.testing.assert_array_equal(np.asarray(rows.sum(axis=1)).ravel(), X.sum(1))


def _find_map_from_elsewhere(estimates):
    """PyMC's find_MAP on the family's model, started far from the fixed point."""
    import pymc as pm

    model = FAMILY.pymc_model(estimates)
    start = {"concentration": np.ones(2)}
    name = "shared_mean" if estimates.attrs["prior_mean"] == "pooled" else "feature_mean"
    shape = estimates["feature_mean"].shape if name == "feature_mean" else (N_WORDS,)
    start[name] = np.full(shape, 1.0 / N_WORDS)
    with model, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        point = pm.find_MAP(
            initvals=start,
            return_inferencedata=True,
            jitter=False,
            progressbar=False,
            tol=1e-14,
        )
    return {k: v.squeeze(("chain", "draw")).values for k, v in point["posterior"].items()}


@pytest.mark.parametrize(
    "options",
    [
        # Its own graph to compile (32 s cold on two cores); the default prior's runs here.
        pytest.param(
            {"concentration_prior": "flat", "mean_prior_strength": 0.0}, marks=pytest.mark.slow
        ),
        {},
        # Its own graph to compile (about 20 s cold on two cores).
        pytest.param({"prior_mean": "pooled"}, marks=pytest.mark.slow),
    ],
    ids=["flat", "default-prior", "pooled"],
)
def test_pymc_map_equals_the_fixed_point(options):
    X, y = corpus()
    estimates = FAMILY.fit(X, y, **options)
    point = _find_map_from_elsewhere(estimates)
    np.testing.assert_allclose(point["concentration"], estimates["concentration"].values, rtol=1e-4)
    np.testing.assert_allclose(
        point["feature_mean"], estimates["feature_mean"].values, rtol=1e-3, atol=1e-6
    )


def test_nuts_fit_predicts_and_holds_the_groups_loo_needs(nuts_fit):
    est, X, y = nuts_fit
    assert {"posterior", "log_likelihood", "observed_data"} <= set(est.idata_.children)
    assert (est.predict(X) == y).mean() > 0.9
    proba = est.predict_proba(X[:5])
    np.testing.assert_allclose(proba.sum(1), 1.0)
    np.testing.assert_allclose(np.exp(est.predict_log_proba(X[:5])), proba, rtol=1e-10)
    import arviz as az

    loo = az.loo(est.idata_)
    assert np.isfinite(loo.elpd)


def test_leave_one_out_of_the_labels_refits_the_point_fit_by_default(nuts_fit):
    est, X, y = nuts_fit
    loo = bayesgen.leave_one_out(est)
    assert loo.method == "plug-in" and np.isnan(loo.pareto_k).all()
    codes = (y == "spam").astype(int)
    joint = FAMILY.loo_log_joint(est.closed_form_, X, codes)
    expected = joint - np.logaddexp(joint[:, 0], joint[:, 1])[:, None]
    np.testing.assert_allclose(loo.log_proba, expected, rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        psis = bayesgen.leave_one_out(est, method="psis")
    # Two estimates of nearly the same thing on 60 well-separated documents.
    assert psis.method == "psis" and abs(psis.elpd - loo.elpd) < 0.5
    with pytest.raises(ValueError, match=r"^method: 'exact' does not apply to .*'plug-in'"):
        bayesgen.leave_one_out(est, method="exact")


def test_pointwise_log_likelihood_is_the_documents_dirmult_and_class_term(nuts_fit):
    est, X, y = nuts_fit
    posterior = est.idata_["posterior"]
    codes = (y == "spam").astype(int)
    k = codes[3]
    s = posterior["concentration"].values[0, 0, k]
    m = posterior["feature_mean"].values[0, 0, k]
    pi = posterior["class_prob"].values[0, 0, k]
    expected = np.log(pi) + stats.dirichlet_multinomial.logpmf(X[3], s * m, X[3].sum())
    value = est.idata_["log_likelihood"]["y"].values[0, 0, 3]
    assert value == pytest.approx(expected, abs=1e-8)


def test_compare_passes_on_the_fit(nuts_fit):
    est, _, _ = nuts_fit
    result = bayesgen.compare(est)
    assert result.ok, str(result)


def test_compare_fails_when_the_map_is_off(nuts_fit):
    est, _, _ = nuts_fit
    shifted = est.map_.copy()
    shifted["concentration"] = shifted["concentration"] * 1.1
    saved = est.map_
    try:
        est.map_ = shifted
        assert not bayesgen.compare(est).ok
    finally:
        est.map_ = saved


def test_sbc_refuses_a_prior_of_m_centred_on_the_data_naming_the_parameter(nuts_fit):
    est, _, _ = nuts_fit
    with pytest.raises(ValueError, match=r"^estimator: SBC needs .* Use mean_prior_strength=0"):
        bayesgen.sbc(est, n_simulations=2)


def test_a_flat_prior_of_s_has_no_prior_draws():
    X, y = corpus()
    estimates = FAMILY.fit(X, y, concentration_prior="flat", mean_prior_strength=0.0)
    assert "concentration_prior='flat'" in FAMILY.prior_draws_problem(estimates)
    with pytest.raises(ValueError, match=r"^concentration_prior: 'flat' is improper"):
        FAMILY.conjugate_draws(estimates, np.random.default_rng(0), (2,), float, posterior=False)


@pytest.mark.parametrize("prior_mean", ["per_class", "pooled"])
def test_prior_draws_have_the_priors_moments(prior_mean):
    X, y = corpus()
    options = {"concentration_prior": (3.0, 0.5), "mean_prior_strength": 4.0}
    estimates = FAMILY.fit(X, y, prior_mean=prior_mean, **options)
    assert FAMILY.prior_draws_problem(estimates) is not None  # λ > 0: f is the data's
    draws = FAMILY.conjugate_draws(
        estimates, np.random.default_rng(0), (20_000,), np.float64, posterior=False
    )
    s = draws["concentration"][1]
    np.testing.assert_allclose(s.mean(axis=0), 3.0 / 0.5, rtol=0.02)  # Gamma(3, rate 0.5)
    np.testing.assert_allclose(s.var(axis=0), 3.0 / 0.25, rtol=0.05)
    counts = X.sum(axis=0)
    c = 1.0 + 4.0 * (counts + 0.5) / (counts.sum() + 0.5 * N_WORDS)  # Dirichlet(1 + λ f)
    m = draws["feature_mean"][1]
    np.testing.assert_allclose(m.mean(axis=0), np.tile(c / c.sum(), (2, 1)), atol=0.004)
    np.testing.assert_allclose(draws["class_prob"][1].mean(axis=0), [0.5, 0.5], atol=0.01)
    assert np.array_equal(m[:, 0], m[:, 1]) == (prior_mean == "pooled")
    with pytest.raises(ValueError, match=r"^inference: .* no exact conjugate draws"):
        FAMILY.conjugate_draws(estimates, np.random.default_rng(0), (2,), float, posterior=True)


def test_relevance_is_the_beta_bernoulli_bayes_factor_of_the_words_presence(nuts_fit):
    from scipy.special import betaln

    est, X, y = nuts_fit
    present = np.stack([(X[y == label] > 0).sum(axis=0) for label in est.classes_])
    documents = np.array([(y == label).sum() for label in est.classes_])[:, None]
    class_dependent = (betaln(1 + present, 1 + documents - present) - betaln(1, 1)).sum(axis=0)
    pooled = betaln(1 + present.sum(0), 1 + documents.sum() - present.sum(0)) - betaln(1, 1)
    table = est.feature_relevance().set_index("feature")
    expected = pd.Series(class_dependent - pooled, index=est.closed_form_["feature"].values)
    np.testing.assert_allclose(
        table.loc[expected.index, "log_bayes_factor"].values, expected.values, rtol=0, atol=1e-10
    )
    assert (table["effect_kind"] == "log-odds of presence").all()
    with pytest.raises(ValueError, match=r"est: feature averaging needs conjugate blocks"):
        est.average_features_predict_proba(X)


def test_save_and_load_round_trip(nuts_fit, tmp_path):
    est, X, _ = nuts_fit
    from bayesgen.io import model_files

    path = est.save(tmp_path / "dcm.nc")
    # bayesgen.load's list of estimator classes (bayesgen/estimators/loading.py) does not name
    # this one yet: the model file's reader, handed the class.
    loaded = model_files.load(path, (DirichletMultinomialNB,))
    np.testing.assert_allclose(loaded.predict_proba(X[:5]), est.predict_proba(X[:5]))
    np.testing.assert_allclose(
        loaded.closed_form_["concentration"].values, est.closed_form_["concentration"].values
    )


def test_point_proba_is_the_dirmult_at_the_point_fit(nuts_fit):
    est, X, _ = nuts_fit
    fit = est.closed_form_
    alpha = fit["concentration"].values[:, None] * fit["feature_mean"].values
    joint = np.log(fit["class_prob"].values) + np.array(
        [[stats.dirichlet_multinomial.logpmf(x, a, x.sum()) for a in alpha] for x in X[:4]]
    )
    expected = np.exp(joint - np.logaddexp.reduce(joint, axis=1, keepdims=True))
    np.testing.assert_allclose(est.point_proba(X[:4]), expected, rtol=1e-9)


# -- partial_fit, sample weights, Dask: the histograms merge --------------------------------

#: The least NUTS that makes a fit (the tests below check its statistics and point fit).
TINY_NUTS = {
    "draws": 20,
    "tune": 20,
    "chains": 1,
    "random_seed": 0,
    "prior_draws": 0,
    "progressbar": False,
    "compute_map": False,
}
#: The point fit and the histograms, compared bit for bit.
POINT_FIT = [
    "class_count",
    "word_entry_class",
    "word_entry_feature",
    "word_entry_level",
    "word_entry_weight",
    "length_entry_class",
    "length_entry_level",
    "length_entry_weight",
    "feature_count",
    "concentration",
    "feature_mean",
    "concentration_mle",
    "feature_mean_mle",
    "class_prob",
]


def tiny_fit(X, y, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NUTS that short warns
        return DirichletMultinomialNB(**TINY_NUTS).fit(X, y, **kwargs)


def assert_same_point_fit(fit, expected):
    for name in POINT_FIT:
        np.testing.assert_array_equal(fit[name].values, expected[name].values, err_msg=name)
    np.testing.assert_allclose(
        fit["log_coefficient"].values, expected["log_coefficient"].values, rtol=1e-13
    )


def test_partial_fit_in_three_chunks_equals_one_fit():
    X, y = corpus(30)
    est = DirichletMultinomialNB(**TINY_NUTS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for rows in (slice(0, 7), slice(7, 19), slice(19, 30)):
            est.partial_fit(X[rows], y[rows], classes=["ham", "spam"])
    assert est.closed_form_.attrs["partial_fit_calls"] == 3
    assert_same_point_fit(est.closed_form_, FAMILY.fit(X, y))
    assert est.idata_["posterior"].sizes["draw"] == TINY_NUTS["draws"]


def test_whole_sample_weights_equal_repeated_documents():
    X, y = corpus(30)
    weights = np.arange(30) % 3  # 0 drops a document, 2 doubles it
    repeated = np.repeat(np.arange(30), weights)
    est = tiny_fit(X, y, sample_weight=weights)
    assert_same_point_fit(est.closed_form_, FAMILY.fit(X[repeated], y[repeated]))


def test_fractional_sample_weights_are_refused_by_nuts():
    X, y = corpus(10)
    with pytest.raises(ValueError, match="sample_weight"):
        tiny_fit(X, y, sample_weight=np.full(10, 0.5))


def test_dask_input_is_reduced_chunk_by_chunk_to_the_fit_of_all_documents():
    da = pytest.importorskip("dask.array")
    X, y = corpus(30)
    # Sorted by class, so that the first and last chunks hold one class each: the chunks'
    # statistics are aligned on the union of their classes before they merge.
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    est = tiny_fit(da.from_array(sp.csr_array(X), chunks=(8, N_WORDS)), da.from_array(y, chunks=8))
    assert est.closed_form_.attrs["dask_chunks"] == 4
    assert_same_point_fit(est.closed_form_, FAMILY.fit(X, y))
    np.testing.assert_array_equal(est.classes_, ["ham", "spam"])


# -- the coordinates NUTS samples in (bayesgen.families.dcm_transforms_pymc) ----------------


def _histogram_log_likelihood(histograms, alpha, total):
    """Σ h(c) [lnΓ(α + c) − lnΓ(α)] − Σ g(n) [lnΓ(s + n) − lnΓ(s)] from SciPy's gammaln."""
    from scipy.special import gammaln

    a = alpha[histograms.word_class, histograms.word_feature]
    words = histograms.word_weight * (gammaln(a + histograms.word_level) - gammaln(a))
    s = total[histograms.length_class]
    lengths = histograms.length_weight * (gammaln(s + histograms.length_level) - gammaln(s))
    return words.sum() - lengths.sum()


def test_curvature_sums_are_the_derivatives_of_the_log_likelihood():
    from bayesgen.families.dcm_transforms_pymc import curvature_sums

    X, y = corpus()
    fit = FAMILY.fit(X, y)
    histograms = histograms_of(fit)
    s, m = fit["concentration"].values, fit["feature_mean"].values
    first, second, length_first, length_second = curvature_sums(histograms, s, m)
    alpha, step = s[:, None] * m, 1e-4
    for k, w in [(0, 0), (1, 3), (0, 11)]:

        def words_at(value, k=k, w=w):
            moved = alpha.copy()
            moved[k, w] = value
            return _histogram_log_likelihood(histograms, moved, s)

        a = alpha[k, w]
        up, here, down = words_at(a + step), words_at(a), words_at(a - step)
        assert first[k, w] == pytest.approx((up - down) / (2 * step), rel=1e-6)
        assert second[k, w] == pytest.approx(-(up - 2 * here + down) / step**2, rel=1e-4)

    def lengths_at(total):  # the words' part held fixed: −Σ g(n) [lnΓ(s + n) − lnΓ(s)] + C
        return _histogram_log_likelihood(histograms, alpha, total)

    for k in (0, 1):
        unit = np.eye(2)[k] * 1e-3
        up, here, down = lengths_at(s + unit), lengths_at(s), lengths_at(s - unit)
        assert length_first[k] == pytest.approx(-(up - down) / 2e-3, rel=1e-6)
        assert length_second[k] == pytest.approx((up - 2 * here + down) / 1e-6, rel=1e-4)


@pytest.mark.parametrize("options", [{}, {"concentration_prior": "flat"}])
@pytest.mark.parametrize("at", ["point_fit", "sampling_start"])
def test_log_concentration_constants_are_a_newton_step_of_the_sampled_density(options, at):
    from bayesgen.families.dcm_transforms_pymc import (
        concentration_standardisation,
        sampling_start_mean,
    )

    X, y = corpus()
    fit = FAMILY.fit(X, y, **options)
    histograms = histograms_of(fit)
    s, m = fit["concentration"].values, fit["feature_mean"].values
    shape = float(fit.attrs["concentration_prior_shape"])
    rate = float(fit.attrs["concentration_prior_rate"])
    if at == "sampling_start":
        prior = 1.0 + float(fit.attrs["mean_prior_strength"]) * fit["prior_frequency"].values
        m = sampling_start_mean(histograms, s, m, prior=prior, pooled=False)
    location, scale, log_scale = concentration_standardisation(
        histograms, s, m, shape=shape, rate=rate
    )

    def log_density(log_s):  # m held fixed; the Gamma prior and the log-Jacobian + log s
        total = np.exp(log_s)
        prior_and_jacobian = np.sum(shape * log_s - rate * total)
        return _histogram_log_likelihood(histograms, total[:, None] * m, total) + prior_and_jacobian

    step = 1e-3
    for k in (0, 1):
        unit = np.eye(2)[k] * step
        u = np.log(s)
        up, here, down = log_density(u + unit), log_density(u), log_density(u - unit)
        curvature = -(up - 2 * here + down) / step**2
        gradient = (up - down) / (2 * step)
        assert scale[k] == pytest.approx(curvature**-0.5, rel=1e-3)
        assert location[k] == pytest.approx(u[k] + gradient / curvature, abs=1e-4)
    np.testing.assert_allclose(log_scale, np.log(scale))


def _log_ratio_constants(shape, seed=1):
    rng = np.random.default_rng(seed)
    log_scale = rng.normal(-1.0, 0.5, size=shape)
    weight = rng.gamma(1.0, 1.0, size=shape)
    return (
        rng.normal(size=shape),
        np.exp(log_scale),
        log_scale,
        weight / weight.sum(axis=-1, keepdims=True),
    )


def _compiled_log_ratio(method, shape=(5,)):
    import pytensor
    import pytensor.tensor as pt

    from bayesgen.families.dcm_transforms_pymc import StandardisedLogRatio

    value = pt.tensor("value", shape=(None,) * len(shape))
    transform = StandardisedLogRatio(*_log_ratio_constants(shape))
    return pytensor.function([value], getattr(transform, method)(value))


@pytest.mark.parametrize("shape", [(5,), (2, 6)], ids=["one", "per-class"])
def test_log_ratio_forward_inverts_backward(shape):
    backward, forward = (
        _compiled_log_ratio("backward", shape),
        _compiled_log_ratio("forward", shape),
    )
    rng = np.random.default_rng(2)
    free = (*shape[:-1], shape[-1] - 1)
    for _ in range(5):
        z = rng.normal(size=free) * 2
        m = backward(z)
        np.testing.assert_allclose(m.sum(axis=-1), 1.0)
        assert np.all(m > 0)
        np.testing.assert_allclose(forward(m), z, atol=1e-9)
        simplex = rng.dirichlet(np.ones(shape[-1]), size=shape[:-1])
        np.testing.assert_allclose(backward(forward(simplex)), simplex, rtol=1e-9)


def _log_jacobian_by_differences(backward, z, step=1e-6):
    """log |det ∂m_{−r} / ∂z| (r: the word left out, any one: all give the same value)."""
    columns = [
        (backward(z + step * unit)[:-1] - backward(z - step * unit)[:-1]) / (2 * step)
        for unit in np.eye(z.size)
    ]
    return np.linalg.slogdet(np.column_stack(columns))[1]


def test_log_ratio_log_jacobian_is_that_of_the_free_coordinates():
    backward, log_jacobian = _compiled_log_ratio("backward"), _compiled_log_ratio("log_jac_det")
    for z in (np.array([0.3, -1.2, 0.8, 2.0]), np.zeros(4), np.array([-2.0, 1.0, 0.1, -0.5])):
        expected = _log_jacobian_by_differences(backward, z)
        assert float(log_jacobian(z)) == pytest.approx(expected, rel=1e-7)


def test_pymc_density_of_the_log_ratio_is_scipys_dirichlet_times_the_jacobian():
    import pymc as pm
    import pytensor
    import pytensor.tensor as pt

    from bayesgen.families.dcm_transforms_pymc import StandardisedLogRatio

    a = np.random.default_rng(3).gamma(2.0, 2.0, size=(2, 5))
    constants = _log_ratio_constants((2, 5), seed=4)
    with pm.Model() as model:
        pm.Dirichlet("m", a=a, default_transform=StandardisedLogRatio(*constants))
    logp = model.compile_logp(jacobian=True, sum=False)
    value = pt.dvector()
    z = np.array([[0.5, -0.7, 1.3, 0.1], [-1.0, 0.2, 0.4, 2.2]])
    for k in (0, 1):
        one_class = [c[k] for c in constants]
        backward = pytensor.function([value], StandardisedLogRatio(*one_class).backward(value))
        expected = stats.dirichlet.logpdf(backward(z[k]), a[k])
        expected += _log_jacobian_by_differences(backward, z[k])
        got = logp({"m_standardised_log_ratio__": z})[0]
        assert float(np.ravel(got)[k]) == pytest.approx(expected, rel=1e-8)


def test_nuts_samples_coordinates_close_to_standard_normal(nuts_fit):
    # The coordinates are built from the point fit; their draws should then have means near 0
    # and SDs near 1 (the mass matrix has little left to adapt).
    import pytensor
    import pytensor.tensor as pt

    from bayesgen.families.dcm_transforms_pymc import StandardisedLogRatio
    from bayesgen.families.shared_pymc import StandardisedLog

    est, _, _ = nuts_fit
    model = FAMILY.pymc_model(est.closed_form_)
    posterior = est.idata_["posterior"]
    s_constants = model["concentration_standardisation"].get_value()
    m_constants = model["feature_mean_log_ratio"].get_value()
    value = pt.dvector()
    to_z = pytensor.function([value], StandardisedLog(*s_constants).forward(value))
    s_z = np.stack([to_z(s) for s in posterior["concentration"].values.reshape(-1, 2)])
    matrix = pt.dmatrix()
    to_y = pytensor.function([matrix], StandardisedLogRatio(*m_constants).forward(matrix))
    m_z = np.stack([to_y(m) for m in posterior["feature_mean"].values.reshape(-1, 2, N_WORDS)])
    for z in (s_z.reshape(len(s_z), -1), m_z.reshape(len(m_z), -1)):
        assert np.all(np.abs(z.mean(axis=0)) < 1.0)
        assert np.all((z.std(axis=0) > 0.5) & (z.std(axis=0) < 2.0))


def test_nuts_starts_at_z_zero():
    X, y = corpus()
    start = FAMILY.pymc_model(FAMILY.fit(X, y)).initial_point()
    np.testing.assert_allclose(start["feature_mean_standardised_log_ratio__"], 0.0, atol=1e-9)
    np.testing.assert_allclose(start["concentration_standardised_log__"], 0.0, atol=1e-9)


def test_the_pymc_model_builds_where_a_class_has_no_mode_of_s():
    """One class of one document of one word: s → 0 at the point fit (unconverged); NUTS's
    constants must still be finite (pm.Data refused NaN before)."""
    X = np.array([[12.0, 0, 0, 0, 0], [3, 4, 5, 0, 0], [2, 6, 1, 1, 0]])
    estimates = FAMILY.fit(X, np.array(["b", "a", "a"]), mean_prior_strength=0.0)
    assert estimates.attrs["point_fit_converged"] == 0
    model = FAMILY.pymc_model(estimates)
    assert np.isfinite(model.compile_logp()(model.initial_point()))
