"""Full-Bayes λ: ``alpha_prior=(shape, rate)``, a Gamma hyperprior on the naive Bayes λ.

The reference values are computed here by ``scipy.integrate.quad`` of evidence × prior (the
evidence from the families' ``feature_log_evidence``), never by the grid quadrature of
:mod:`bayesgen.families.hyperprior` under test.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from scipy import integrate, interpolate, optimize, stats
from scipy.special import gammaln

from bayesgen import BernoulliNB, CategoricalNB, MultinomialNB, compare, load
from bayesgen import closed_form as cf
from bayesgen.families import family
from bayesgen.families import hyperprior as hp

PRIOR = (2.0, 1.5)


def _data(name, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.poisson(1.2, (24, 5))
    y = rng.integers(0, 2, 24)
    if name == "bernoulli":
        return BernoulliNB, (X > 0).astype(np.int64), y
    if name == "categorical":
        return CategoricalNB, np.minimum(X, 3), y
    return MultinomialNB, X, y


def _fit(name, draws=2000, seed=0, **params):
    cls, X, y = _data(name)
    params = {"inference": "conjugate", "compute_map": False, "random_seed": seed, **params}
    return cls(alpha_prior=PRIOR, draws=draws, **params).fit(X, y)


class QuadPosterior:
    """p(λ | D) ∝ exp(log evidence) · Gamma(λ; shape, rate), integrated by scipy's quad."""

    def __init__(self, stats_, prior=PRIOR):
        self.evidence = family(stats_).feature_evidence(stats_)
        shape, rate = prior
        self.shape, self.rate = shape, rate
        peak = optimize.minimize_scalar(
            lambda u: -self._log_unnormalised(np.exp(u)), bounds=(-10, 10), method="bounded"
        )
        self.peak_alpha = float(np.exp(peak.x))
        self.offset = self._log_unnormalised(self.peak_alpha)
        self.norm = self.integral(lambda lam: 1.0)

    def _log_unnormalised(self, lam):
        return float(
            self.evidence(lam) + stats.gamma.logpdf(lam, self.shape, scale=1.0 / self.rate)
        )

    def density(self, lam):
        return np.exp(self._log_unnormalised(lam) - self.offset)

    def integral(self, f, upper=np.inf):
        # Split at the peak so that quad sees where the mass is.
        pieces = [(0.0, min(self.peak_alpha, upper)), (self.peak_alpha, upper)]
        total = 0.0
        for low, high in pieces:
            if high > low:
                total += integrate.quad(
                    lambda lam: f(lam) * self.density(lam),
                    low,
                    high,
                    limit=200,
                    epsabs=0,
                    epsrel=1e-12,
                )[0]
        return total

    def mean(self, f=lambda lam: lam):
        return self.integral(f) / self.norm


@pytest.mark.parametrize("name", ["multinomial", "bernoulli", "categorical"])
def test_quadrature_mean_and_sd_of_alpha_equal_scipy_quad(name):
    est = _fit(name, draws=10)
    reference = QuadPosterior(est.closed_form_)
    mean = reference.mean()
    sd = np.sqrt(reference.mean(lambda lam: (lam - mean) ** 2))
    posterior = hp.posterior_of(est.model_, est.closed_form_, PRIOR)
    assert posterior.mean == pytest.approx(mean, rel=1e-6)
    assert posterior.sd == pytest.approx(sd, rel=1e-6)
    # Stored as the representative λ and in the attrs.
    attrs = est.closed_form_.attrs
    assert attrs["alpha"] == pytest.approx(mean, rel=1e-6)
    assert attrs["alpha_sd"] == pytest.approx(sd, rel=1e-6)
    assert (attrs["alpha_prior_shape"], attrs["alpha_prior_rate"]) == PRIOR
    assert float(est.closed_form_["alpha"]) == pytest.approx(mean, rel=1e-6)
    assert est.alpha_ == pytest.approx(mean, rel=1e-6)


def test_quadrature_handles_a_posterior_of_alpha_spread_over_many_decades():
    # Every feature in every row: the evidence tends to 1 as λ → 0, so p(log λ | D) falls
    # only as the Gamma(0.5, ·) prior's λ^0.5 on the left, over dozens of e-folds.
    X = np.ones((5, 3), dtype=np.int64)
    y = np.array([0, 0, 1, 1, 1])
    prior = (0.5, 0.1)
    est = BernoulliNB(alpha_prior=prior, inference="conjugate", draws=10, random_seed=0)
    est.fit(X, y)
    reference = QuadPosterior(est.closed_form_, prior)
    mean = reference.mean()
    sd = np.sqrt(reference.mean(lambda lam: (lam - mean) ** 2))
    posterior = hp.posterior_of(est.model_, est.closed_form_, prior)
    assert posterior.mean == pytest.approx(mean, rel=1e-6)
    assert posterior.sd == pytest.approx(sd, rel=1e-6)
    theta = reference.mean(lambda lam: (3 + lam) / (3 + 2 * lam))  # class 1: 3 of 3 rows
    assert est.closed_form_["feature_prob"].values[1, 0] == pytest.approx(theta, rel=1e-6)


def test_alpha_draws_follow_the_collapsed_posterior():
    est = _fit("multinomial", draws=2000, seed=3)
    draws = np.sort(est.idata_["posterior"]["alpha"].values.ravel())
    assert est.idata_["posterior"]["alpha"].dims == ("chain", "draw")
    reference = QuadPosterior(est.closed_form_)
    # The CDF by quad between 400 points spanning the draws, interpolated monotonically
    # (its error, about 1e-8, is far below the KS statistic's resolution of 1/n).
    edges = np.linspace(0.0, draws[-1], 401)
    pieces = [
        integrate.quad(reference.density, low, high, epsabs=0, epsrel=1e-10)[0]
        for low, high in itertools.pairwise(edges)
    ]
    cdf_at_edges = np.concatenate([[0.0], np.cumsum(pieces)]) / reference.norm
    cdf = interpolate.PchipInterpolator(edges, cdf_at_edges)(draws)
    n = draws.size
    ks = max(np.max(np.arange(1, n + 1) / n - cdf), np.max(cdf - np.arange(n) / n))
    assert stats.kstwo.sf(ks, n) > 0.001
    mean = reference.mean()
    sd = np.sqrt(reference.mean(lambda lam: (lam - mean) ** 2))
    assert abs(draws.mean() - mean) < 4.5 * sd / np.sqrt(n)  # independent draws: ESS = n


def test_prior_draws_of_alpha_follow_the_gamma_hyperprior():
    est = _fit("bernoulli", draws=10, prior_draws=2000)
    draws = est.idata_["prior"]["alpha"].values.ravel()
    assert stats.kstest(draws, stats.gamma(PRIOR[0], scale=1.0 / PRIOR[1]).cdf).pvalue > 0.001


@pytest.mark.parametrize("name", ["multinomial", "bernoulli", "categorical"])
def test_theta_posterior_mean_is_add_lambda_averaged_over_the_alpha_posterior(name):
    est = _fit(name, draws=10)
    stats_ = est.closed_form_
    reference = QuadPosterior(stats_)
    counts = stats_["feature_count"].values.astype(np.float64)
    class_count = stats_["class_count"].values.astype(np.float64)
    if name == "multinomial":
        n, total, outcomes = counts[1, 2], counts[1].sum(), counts.shape[1]
    elif name == "bernoulli":
        n, total, outcomes = counts[1, 2], class_count[1], 2
    else:
        k = stats_["n_categories"].values[2]
        n, total, outcomes = counts[1, 2, 1], class_count[1], k
    expected = reference.mean(lambda lam: (n + lam) / (total + outcomes * lam))
    got = stats_["feature_prob"].values[(1, 2, 1) if name == "categorical" else (1, 2)]
    assert got == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("name", ["multinomial", "bernoulli", "categorical"])
def test_compare_passes_the_right_hyperprior_and_fails_another(name):
    est = _fit(name, draws=2000)
    right = compare(est)
    assert right.ok, right.warnings
    alpha_row = right.table[right.table["variable"] == "alpha"]
    assert len(alpha_row) == 1 and bool(alpha_row["agrees"].iloc[0])
    assert right.settings["alpha_prior"] == PRIOR
    # A hyperprior with 20 times the prior mean of λ: the expected values move, the draws
    # do not, so rows for λ and θ disagree.
    wrong = compare(est, alpha_prior=(PRIOR[0], PRIOR[1] / 20))
    assert not wrong.ok
    failed = set(wrong.table.loc[~wrong.table["agrees"], "variable"])
    assert {"alpha", "feature_prob"} <= failed


def test_conjugate_map_is_the_mode_of_alpha_then_of_theta_given_it():
    cls, X, y = _data("multinomial")
    est = cls(alpha_prior=PRIOR, inference="conjugate", draws=10, random_seed=0).fit(X, y)
    reference = QuadPosterior(est.closed_form_)
    mode = optimize.minimize_scalar(
        lambda lam: -reference._log_unnormalised(lam),
        bracket=(0.5 * reference.peak_alpha, reference.peak_alpha),
        tol=1e-12,
    ).x
    assert float(est.map_["alpha"]) == pytest.approx(mode, rel=1e-6)
    counts = est.closed_form_["feature_count"].values
    theta = (counts + mode - 1) / (counts.sum(axis=1, keepdims=True) + counts.shape[1] * (mode - 1))
    np.testing.assert_allclose(est.map_["feature_prob"].values, theta, rtol=1e-6)


def test_save_and_load_keep_the_hyperprior(tmp_path):
    est = _fit("categorical", draws=200)
    path = tmp_path / "model.nc"
    est.save(path)
    loaded = load(path)
    assert loaded.alpha_prior == PRIOR
    assert isinstance(loaded.alpha_prior, tuple)
    assert loaded.closed_form_.attrs["alpha_prior_shape"] == PRIOR[0]
    assert loaded.closed_form_.attrs["alpha_prior_rate"] == PRIOR[1]
    np.testing.assert_array_equal(
        loaded.idata_["posterior"]["alpha"].values, est.idata_["posterior"]["alpha"].values
    )
    assert loaded.alpha_ == est.alpha_
    X = _data("categorical")[1]
    np.testing.assert_allclose(loaded.predict_proba(X), est.predict_proba(X))


BAD_PRIORS = [
    ((0.0, 1.0), ValueError),
    ((2.0, -1.0), ValueError),
    ((2.0, float("inf")), ValueError),
    ((2.0,), ValueError),
    ((1.0, 2.0, 3.0), ValueError),
    (("2", 1.0), TypeError),
    ((True, 1.0), TypeError),
    (2.0, TypeError),
    ("gamma", TypeError),
]


@pytest.mark.parametrize(("value", "error"), BAD_PRIORS)
def test_bad_alpha_prior_is_refused_naming_it(value, error):
    cls, X, y = _data("multinomial")
    message = (
        f"alpha_prior: expected None or a pair (shape, rate) of finite numbers > 0; got {value!r}."
    )
    with pytest.raises(error, match=re.escape(message)):
        cls(alpha_prior=value, inference="conjugate").fit(X, y)


@pytest.mark.parametrize("alpha", [0.5, "evidence"])
def test_alpha_must_stay_default_beside_alpha_prior(alpha):
    cls, X, y = _data("bernoulli")
    with pytest.raises(ValueError, match=re.escape("alpha: leave it at its default 1.0 when")):
        cls(alpha=alpha, alpha_prior=PRIOR, inference="conjugate").fit(X, y)


def test_compare_refuses_alpha_and_alpha_prior_together():
    est = _fit("multinomial", draws=10)
    with pytest.raises(ValueError, match=re.escape("alpha_prior: pass either alpha")):
        compare(est, alpha=1.0, alpha_prior=PRIOR)


def test_load_refuses_an_alpha_prior_that_the_closed_form_does_not_record(tmp_path):
    import json

    import xarray as xr

    est = _fit("multinomial", draws=20)
    path = tmp_path / "model.nc"
    est.save(path)
    tree = xr.open_datatree(path).load()
    params = json.loads(tree.attrs["params"])
    params["alpha_prior"] = [3.0, 1.5]
    tree.attrs["params"] = json.dumps(params)
    tampered = tmp_path / "tampered.nc"
    tree.to_netcdf(tampered)
    with pytest.raises(ValueError, match=re.escape("params say alpha_prior=[3.0, 1.5]")):
        load(tampered)


def test_posterior_predictive_integrates_alpha_out():
    _cls, X, _y = _data("bernoulli")
    est = _fit("bernoulli", draws=10)
    stats_ = est.closed_form_
    reference = QuadPosterior(stats_)
    counts = stats_["feature_count"].values.astype(np.float64)
    class_count = stats_["class_count"].values.astype(np.float64)
    x = X[0]

    def likelihood(k):  # p(x | y = k, D, λ) as a function of λ: one add-λ per feature
        def at(lam):
            prob = (counts[k] + lam) / (class_count[k] + 2 * lam)
            return np.prod(np.where(x == 1, prob, 1 - prob))

        return at

    class_prob = stats_["class_prob"].values
    joint = np.array([class_prob[k] * reference.mean(likelihood(k)) for k in range(2)])
    np.testing.assert_allclose(est.posterior_predictive_proba(X[:1])[0], joint / joint.sum())


@pytest.mark.parametrize("name", ["multinomial", "bernoulli", "categorical"])
def test_leave_one_out_integrates_alpha_over_its_posterior_without_the_row(name):
    """Each row's leave-one-out prediction equals a refit without it, whose exact predictive
    integrates λ over p(λ | D without the row) on its own grid."""
    from bayesgen.checks import loo

    cls, X, y = _data(name)
    est = _fit(name, draws=50)
    result = loo.leave_one_out(est)
    assert result.method == "exact"
    options = {"alpha_prior": PRIOR, "inference": "conjugate", "compute_map": False}
    if name == "categorical":
        options["n_categories"] = 4  # a refit keeps the categories a left-out row may hold
    for i in range(0, len(y), 5):
        keep = np.arange(len(y)) != i
        refit = cls(**options, draws=50).fit(X[keep], y[keep])
        expected = refit.posterior_predictive_proba(X[i : i + 1])[0]
        np.testing.assert_allclose(np.exp(result.log_proba[i]), expected, rtol=1e-9, atol=0)


def test_leave_one_out_differs_from_a_fixed_alpha_at_its_posterior_mean():
    """λ's posterior moves when a row is left out: the answer is not the fixed-λ LOO at the
    full data's E[λ | D] (the test above could not tell the two apart otherwise)."""
    from bayesgen.checks import loo

    cls, X, y = _data("multinomial")
    est = _fit("multinomial", draws=50)
    fixed = cls(alpha=est.alpha_, inference="conjugate", compute_map=False, draws=50).fit(X, y)
    gap = np.abs(loo.loo_proba(est) - loo.loo_proba(fixed)).max()
    assert gap > 1e-4


# -- the PyMC model ---------------------------------------------------------------------------


def _nb_log_pmf(n, r, beta):
    """log NB(n; shape r, Gamma rate beta) = log ∫ Gamma(g; r, beta) Poisson(n | g) dg."""
    return stats.nbinom.logpmf(n, r, beta / (1.0 + beta))


def test_gamma_poisson_form_with_its_correction_has_the_collapsed_posterior_of_alpha():
    # Integrating every rate g ~ Gamma(λ, β(λ)) out of the Poisson counts gives a product of
    # negative binomials; divided by the totals' negative binomials (the model's correction)
    # it must be the Dirichlet-multinomial evidence up to a constant in λ.
    _cls, X, y = _data("multinomial")
    stats_ = cf.multinomial_nb(X, y)
    counts = stats_["feature_count"].values
    total = counts.sum(axis=1)
    size = counts.shape[1]
    evidence = family(stats_).feature_evidence(stats_)

    def model_marginal(lam):
        beta = size * lam / np.maximum(total, 1.0)
        cells = _nb_log_pmf(counts, lam, beta[:, None]).sum()
        totals = _nb_log_pmf(total, size * lam, beta).sum()
        # The multinomial coefficient of each class's counts: free of λ.
        coefficient = (gammaln(total + 1) - gammaln(counts + 1).sum(axis=1)).sum()
        return cells - totals - coefficient

    lams = np.array([0.3, 1.0, 4.0])
    differences = np.array([model_marginal(lam) for lam in lams]) - evidence(lams)
    np.testing.assert_allclose(differences, 0.0, atol=1e-9)


def test_pymc_model_log_density_at_a_point_equals_scipy():
    pytest.importorskip("pymc")
    _cls, X, y = _data("multinomial")
    stats_ = hp.with_alpha_prior(family("multinomial_nb"), cf.multinomial_nb(X[:, :3], y), PRIOR)
    model = family(stats_).pymc_model(stats_)
    assert {rv.name for rv in model.free_RVs} == {"class_prob", "alpha", "feature_rate"}
    rng = np.random.default_rng(5)
    lam, rate, prob = 2.3, rng.gamma(2.0, 1.0, (2, 3)), np.array([0.4, 0.6])
    point = model.initial_point()
    point["alpha_log__"] = np.log(lam)
    for name, value in (("feature_rate", rate), ("class_prob", prob)):
        variable = model[name]  # its value lives in the transform's coordinates
        point[model.rvs_to_values[variable].name] = (
            model.rvs_to_transforms[variable].forward(value).eval()
        )
    got = model.compile_logp(jacobian=False)(point)

    counts = stats_["feature_count"].values
    class_count = stats_["class_count"].values
    total = counts.sum(axis=1)
    beta = 3 * lam / np.maximum(total, 1.0)
    expected = (
        stats.gamma.logpdf(lam, PRIOR[0], scale=1.0 / PRIOR[1])
        + stats.dirichlet.logpdf(prob, [1.0, 1.0])
        + stats.multinomial.logpmf(class_count, class_count.sum(), prob)
        + stats.gamma.logpdf(rate, lam, scale=1.0 / beta[:, None]).sum()
        + (counts * np.log(rate) - rate).sum()  # the Poisson kernel, without log n!
        - (_nb_log_pmf(total, 3 * lam, beta) + gammaln(total + 1)).sum()  # without log T!
    )
    assert got == pytest.approx(expected, rel=1e-9)


def test_bernoulli_pymc_model_has_beta_lambda_lambda_with_random_lambda():
    pytest.importorskip("pymc")
    _cls, X, y = _data("bernoulli")
    stats_ = hp.with_alpha_prior(family("bernoulli_nb"), cf.bernoulli_nb(X, y), PRIOR)
    model = family(stats_).pymc_model(stats_)
    point = model.initial_point()
    lam, prob = 1.7, np.full((2, 5), 0.3)
    point["alpha_log__"] = np.log(lam)
    variable = model["feature_prob"]  # its value lives in the standardised logit's coordinates
    point[model.rvs_to_values[variable].name] = (
        model.rvs_to_transforms[variable].forward(prob).eval()
    )
    logp = model.compile_logp(vars=[model["feature_prob"], model["alpha"]], jacobian=False)
    expected = stats.gamma.logpdf(lam, PRIOR[0], scale=1.0 / PRIOR[1]) + (
        stats.beta.logpdf(prob, lam, lam).sum()
    )
    assert logp(point) == pytest.approx(expected, rel=1e-7)  # the logit round trip


@pytest.mark.slow  # up to a minute a model on two cores
@pytest.mark.parametrize("name", ["multinomial", "bernoulli", "categorical"])
def test_nuts_samples_alpha_jointly_and_passes_compare(name):
    cls, X, y = _data(name)
    est = cls(
        alpha_prior=PRIOR,
        inference="nuts",
        draws=1000,  # the defaults: R-hat ≤ 1.01 needs them
        tune=1000,
        chains=2,
        random_seed=0,
        compute_map=False,
    ).fit(X, y)
    assert "alpha" in est.idata_["posterior"]
    result = compare(est)
    assert result.ok, result.warnings


def test_map_under_a_hyperprior_says_what_it_is_and_feeds_the_prediction_comparison():
    from bayesgen.checks.predictions import compare_predictions

    cls, X, y = _data("bernoulli")
    est = cls(alpha_prior=PRIOR, inference="conjugate", draws=50, random_seed=0).fit(X, y)
    assert est.map_.attrs["map_message"].startswith("λ at the mode of p(λ | D)")
    table = compare_predictions(est, X, y)
    assert len(table) >= 3 and table.notna().all().all()
