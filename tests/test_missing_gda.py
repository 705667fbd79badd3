"""GDA and QDA with missing entries (issue 23, part 2): exact marginal predictions, EM's MAP,
the Gibbs sampler and what compare() says of such a fit."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from scipy import stats

import bayesgen
from bayesgen import GaussianDiscriminantAnalysis, QuadraticDiscriminantAnalysis
from bayesgen.families import family
from bayesgen.inference import gibbs
from bayesgen.maths import missing_gaussian
from bayesgen.maths.gaussian import DEFAULT_PRIOR


def _data(n_rows=300, n_features=3, missing=0.0, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n_rows)
    factor = rng.normal(size=(n_features, n_features))
    cov = factor @ factor.T / n_features + np.eye(n_features)
    X = 1.5 * y[:, None] + rng.multivariate_normal(np.zeros(n_features), cov, size=n_rows)
    if missing:
        X[rng.random(X.shape) < missing] = np.nan
    return X, y


def _rows_with_gaps(n_features=3, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(8, n_features))
    X[0, 1] = X[1, [0, 2]] = X[2, 0] = np.nan
    X[3] = np.nan  # nothing observed
    return X


def _observed_reference(X, log_density):
    """Σ over rows of the reference density on each row's observed sub-vector (0 if none)."""
    out = np.zeros(X.shape[0])
    for i, row in enumerate(X):
        observed = ~np.isnan(row)
        if observed.any():
            out[i] = log_density(row[observed], observed)
    return out


@pytest.mark.parametrize("name", ["gda", "qda"])
def test_plug_in_joint_is_scipy_normal_over_the_observed_coordinates(name):
    model = family(name)
    X, y = _data()
    estimates = model.fit(X, y)
    rows = _rows_with_gaps()
    joint, _ = model.plug_in_log_joint(estimates, rows)
    for k in range(2):
        cov = estimates["cov"].values
        cov = cov[k] if cov.ndim == 3 else cov
        mean = estimates["mu"].values[k]
        expected = _observed_reference(
            rows,
            lambda x, o, mean=mean, cov=cov: stats.multivariate_normal.logpdf(
                x, mean[o], cov[np.ix_(o, o)]
            ),
        ) + np.log(estimates["class_prob"].values[k])
        np.testing.assert_allclose(joint[:, k], expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", ["gda", "qda"])
def test_predictive_joint_is_scipy_student_t_over_the_observed_coordinates(name):
    model = family(name)
    X, y = _data()
    estimates = model.fit(X, y)
    rows = _rows_with_gaps()
    post = importlib.import_module(f"bayesgen.families.{name}").niw_posterior_parameters(estimates)
    joint = model.predictive_log_joint(estimates, rows)
    n_features = rows.shape[1]
    for k, kappa in enumerate(post["kappa"]):
        dof = np.broadcast_to(post["dof"], (2,))[k] - n_features + 1
        scale = post["scale"][k] if post["scale"].ndim == 3 else post["scale"]
        shape = scale * (kappa + 1) / (kappa * dof)
        expected = _observed_reference(
            rows,
            lambda x, o, loc=post["mean"][k], shape=shape, dof=dof: stats.multivariate_t.logpdf(
                x, loc[o], shape[np.ix_(o, o)], df=dof
            ),
        ) + np.log(estimates["class_prob"].values[k])
        np.testing.assert_allclose(joint[:, k], expected, rtol=1e-10, atol=1e-10)


def test_a_row_with_nothing_observed_gets_the_class_prior():
    X, y = _data()
    est = GaussianDiscriminantAnalysis(
        inference="conjugate", compute_map=False, draws=200, chains=2, random_seed=0
    ).fit(X, y)
    proba = est.predict_proba(np.full((1, 3), np.nan))
    draws = est.idata_["posterior"]["class_prob"].values.reshape(-1, 2)
    np.testing.assert_allclose(proba[0], draws.mean(axis=0), rtol=1e-10)
    exact = bayesgen.closed_form.posterior_predictive_proba(
        est.closed_form_, np.full((1, 3), np.nan)
    )
    np.testing.assert_allclose(exact[0], est.closed_form_["class_prob"].values, rtol=1e-12)


def test_closed_forms_and_nuts_refuse_missing_entries_at_fit_saying_why():
    X, y = _data(missing=0.1)
    with pytest.raises(ValueError, match="Gibbs sampler, inference='conjugate'"):
        bayesgen.closed_form.gda(X, y)
    with pytest.raises(ValueError, match="NUTS with missing entries is not supported"):
        GaussianDiscriminantAnalysis(inference="nuts").fit(X, y)


@pytest.mark.parametrize("name", ["gda", "qda"])
def test_em_without_missing_entries_is_the_exact_mode_in_one_step(name):
    model = family(name)
    X, y = _data()
    estimates = model.fit(X, y)
    prior = DEFAULT_PRIOR.resolve(X, estimates["feature"].values)
    result = missing_gaussian.niw_em(X, y, 2, prior, shared=name == "gda")
    mode = model.conjugate_mode(estimates)
    assert result["iterations"] == 1 and result["converged"]
    np.testing.assert_allclose(result["mu"], mode["mu"][1], rtol=1e-12)
    np.testing.assert_allclose(result["cov"], mode["cov"][1], rtol=1e-12)


@pytest.mark.parametrize("shared", [True, False])
def test_em_with_missing_entries_is_a_mode_of_the_observed_posterior(shared):
    X, y = _data(missing=0.15)
    prior = {"mean": np.zeros(3), "kappa": 0.1, "dof": 5.0, "scale": np.eye(3)}
    result = missing_gaussian.niw_em(X, y, 2, prior, shared=shared)
    assert result["converged"] and result["iterations"] > 1
    at_mode = missing_gaussian.observed_log_posterior(X, y, result["mu"], result["cov"], prior)
    rng = np.random.default_rng(3)
    for _ in range(10):
        step = rng.normal(size=result["cov"].shape) * 1e-3
        step = step + np.swapaxes(step, -1, -2)
        moved_mu = result["mu"] + rng.normal(size=result["mu"].shape) * 1e-3
        assert at_mode > missing_gaussian.observed_log_posterior(
            X, y, moved_mu, result["cov"] + step, prior
        )


def test_gibbs_without_missing_entries_draws_the_exact_conjugate_posterior():
    model = family("gda")
    X, y = _data()
    problem = gibbs.missing_entries_problem(model, X, y, prior=DEFAULT_PRIOR, class_alpha=1.0)
    exact = model.fit(X, y)
    np.testing.assert_allclose(problem["estimates"]["mu"], exact["mu"], rtol=1e-12)
    np.testing.assert_allclose(problem["estimates"]["cov"], exact["cov"], rtol=1e-12)
    draws = gibbs.gibbs_draws(
        model, problem, draws=2000, tune=0, chains=1, rng=np.random.default_rng(0)
    )
    marginals = model.exact_marginals(exact)
    for name in ("mu", "cov"):
        values = draws[name][0]
        mcse = values.std(axis=0) / np.sqrt(values.shape[0])  # independent draws here
        z = (values.mean(axis=0) - exact[name].values) / mcse
        assert np.abs(z).max() < 4.5, name
    assert "mu" in marginals


@pytest.mark.parametrize("estimator", [GaussianDiscriminantAnalysis, QuadraticDiscriminantAnalysis])
def test_gibbs_fit_has_the_posterior_layout_and_diagnostics(estimator):
    import arviz as az

    X, y = _data(missing=0.1)
    est = estimator(inference="conjugate", draws=300, tune=50, chains=2, random_seed=0).fit(X, y)
    posterior = est.idata_["posterior"]
    expected_dims = est.model_.parameter_dims(est.closed_form_)
    assert set(posterior.data_vars) == set(expected_dims)
    for name, dims in expected_dims.items():
        assert posterior[name].dims == ("chain", "draw", *dims)
    assert est.closed_form_.attrs["missing_entries"] == int(np.isnan(X).sum())
    assert est.map_.attrs["map_method"] == "em"
    rhat = az.rhat(posterior.dataset)
    assert float(rhat["mu"].max()) < 1.05
    assert np.isfinite(est.idata_["log_likelihood"]["y"].values).all()
    assert est.score(X, y) > 0.7
    with pytest.raises(ValueError, match="missing entries"):
        bayesgen.closed_form.posterior_predictive_proba(est.closed_form_, X[:2])


def test_gibbs_fit_is_reproducible_with_a_seed():
    X, y = _data(n_rows=100, missing=0.1)
    fits = [
        GaussianDiscriminantAnalysis(
            inference="conjugate", draws=50, tune=10, chains=2, random_seed=7, prior_draws=0
        ).fit(X, y)
        for _ in range(2)
    ]
    np.testing.assert_array_equal(
        fits[0].idata_["posterior"]["mu"].values, fits[1].idata_["posterior"]["mu"].values
    )


def test_em_map_is_the_mode_of_a_long_gibbs_runs_density():
    """No draw of a long Gibbs run has a higher observed-data log posterior than EM's MAP,
    and the run's mean of μ lies within a few posterior SDs of it."""
    model = family("gda")
    X, y = _data(missing=0.1)
    problem = gibbs.missing_entries_problem(model, X, y, prior=DEFAULT_PRIOR, class_alpha=1.0)
    draws = gibbs.gibbs_draws(
        model, problem, draws=1000, tune=50, chains=2, rng=np.random.default_rng(1)
    )
    prior = problem["prior"]
    mode = problem["map"]
    at_mode = missing_gaussian.observed_log_posterior(X, y, mode["mu"][1], mode["cov"][1], prior)
    mu, cov = draws["mu"].reshape(-1, 2, 3), draws["cov"].reshape(-1, 3, 3)
    sample = np.arange(0, len(mu), 20)
    densities = [
        missing_gaussian.observed_log_posterior(X, y, mu[s], cov[s], prior) for s in sample
    ]
    assert max(densities) < at_mode
    spread = mu.std(axis=0)
    assert np.abs(mu.mean(axis=0) - mode["mu"][1]).max() < 0.5 * spread.max()


def test_compare_checks_the_class_prior_and_says_why_nothing_else():
    X, y = _data(missing=0.1)
    est = GaussianDiscriminantAnalysis(
        inference="conjugate", draws=500, tune=50, chains=2, random_seed=0
    ).fit(X, y)
    comparison = bayesgen.compare(est)
    table = comparison.table
    class_rows = table[table["variable"] == "class_prob"]
    assert class_rows["agrees"].all() and class_rows["closed_form"].notna().all()
    others = table[table["variable"] != "class_prob"]
    assert others["closed_form"].isna().all()
    assert others["reason"].str.contains("fitted with missing entries (Gibbs)", regex=False).all()
    assert comparison.ok


@pytest.mark.slow
def test_gibbs_is_calibrated_under_mcar_blanking():
    """Simulation-based calibration: θ from the (fixed) prior, rows from θ, 10 % of the
    entries blanked at random, Gibbs; the rank of the true μ and Σ_00 among the draws is
    uniform (χ² test over 10 bins, each p > 0.001)."""
    model = family("gda")
    rng = np.random.default_rng(11)
    X0, y0 = _data(n_rows=60, n_features=2)
    template = model.fit(X0, y0)
    n_sims, n_draws = 200, 99
    ranks = {"mu": [], "cov": []}
    for _ in range(n_sims):
        truth = model.conjugate_draws(template, rng, (1,), "float64", posterior=False)
        mu, cov = truth["mu"][1][0], truth["cov"][1][0]
        y = rng.integers(0, 2, 60)
        X = mu[y] + rng.multivariate_normal(np.zeros(2), cov, size=60)
        X[rng.random(X.shape) < 0.1] = np.nan
        if np.isnan(X).all(axis=0).any():
            continue
        from bayesgen.maths.gaussian import NormalInverseWishart

        prior = NormalInverseWishart(
            mean=template["prior_mean"].values,
            kappa=template.attrs["prior_kappa"],
            dof=template.attrs["prior_dof"],
            scale=template["prior_scale"].values,
        )
        problem = gibbs.missing_entries_problem(model, X, y, prior=prior, class_alpha=1.0)
        draws = gibbs.gibbs_draws(model, problem, draws=n_draws * 3, tune=30, chains=1, rng=rng)
        thinned = {name: values[0, ::3] for name, values in draws.items()}
        ranks["mu"].append((thinned["mu"][:, 0, 0] < mu[0, 0]).sum())
        ranks["cov"].append((thinned["cov"][:, 0, 0] < cov[0, 0]).sum())
    for name, values in ranks.items():
        counts = np.bincount(np.asarray(values) // 10, minlength=10)
        assert stats.chisquare(counts).pvalue > 1e-3, (name, counts)
