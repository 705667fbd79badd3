"""The PyMC models (bayesgen.generative) and the inference paths (bayesgen.inference.sampling).

The posterior means and standard deviations of NUTS and of the exact conjugate draws are
checked against the closed-form posterior written out in conftest.py (from X and y, not from
bayesgen), to within 4 Monte Carlo standard errors (ArviZ's ``mcse``, method "mean" / "sd")
*per parameter*. The four models have 74 parameters, so one path makes 148 comparisons; if the
MCSEs were exact, a 4-MCSE bound would fail by chance with probability 148 × 6.3e-5 ≈ 1 % per
run. In practice the draws are seeded (the conjugate ones fully; NUTS up to the compile-cache
caveat of the PyMC 6 notes), and over 35 re-seeded runs the largest deviation was 3.5 MCSE. A
systematic error of a few per cent is tens of MCSEs (checked by mutating the models)."""

import arviz as az
import numpy as np
import pytest
import xarray as xr
from conftest import DATA, MODELS, NB_MODELS

from bayesgen import closed_form as cf

N_SIGMA = 4.0


def _posterior(case) -> xr.Dataset:
    return case.est.idata_["posterior"].to_dataset()


def _parameters(case, statistic="mean") -> tuple[xr.Dataset, dict]:
    """The posterior draws of the model's parameters and their expected means (or sds).

    The categorical model's zero padding (categories a feature does not have) is dropped: it
    is a constant 0, not a parameter, and has no MCSE or R-hat.
    """
    posterior = _posterior(case)[case.parameters]
    source = case.expected if statistic == "mean" else case.expected["sd"]
    expected = {variable: np.asarray(source[variable]) for variable in case.parameters}
    if case.name == "categorical_nb":
        mask = case.expected["mask"]
        cells = posterior["feature_prob"].values[:, :, :, mask]
        posterior["feature_prob"] = (("chain", "draw", "class", "cell"), cells)
        expected["feature_prob"] = expected["feature_prob"][:, mask]
    return posterior, expected


def _assert_within_mcse(case, statistic="mean"):
    """Posterior mean (or sd) of every parameter within 4 MCSE of the closed form."""
    posterior, expected = _parameters(case, statistic)
    mcse = az.mcse(posterior, method=statistic)
    for variable in case.parameters:
        draws = posterior[variable]
        if statistic == "mean":
            estimate = draws.mean(("chain", "draw")).values
        else:
            estimate = draws.std(("chain", "draw"), ddof=1).values
        error = mcse[variable].values
        assert np.all(error > 0), f"{variable}: MCSE must be positive"
        # a sanity bound: the MCSE of a 4,000-draw estimate is far below the posterior's scale
        assert np.all(error < 0.05 * np.abs(expected[variable]).max())
        z = np.abs(estimate - expected[variable]) / error
        worst = np.unravel_index(z.argmax(), z.shape)
        where = [int(i) for i in worst]
        assert z.max() <= N_SIGMA, (
            f"{case.name} {variable}{where}: posterior {statistic} {estimate[worst]:.5f} "
            f"is {z.max():.1f} MCSE from the closed form {expected[variable][worst]:.5f}"
        )


# --------------------------------------------------------------------------------------------
# NUTS and conjugate posteriors against the closed form.


def test_nuts_posterior_means_are_within_4_mcse_of_the_closed_form(nuts_case):
    _assert_within_mcse(nuts_case)


def test_nuts_posterior_sds_are_within_4_mcse_of_the_closed_form(nuts_case):
    _assert_within_mcse(nuts_case, "sd")


def test_nuts_rhat_is_at_most_1_01(nuts_case):
    posterior, _ = _parameters(nuts_case)
    rhat = az.rhat(posterior)
    for variable in nuts_case.parameters:
        values = rhat[variable].values
        assert np.all(np.isfinite(values))
        assert values.max() <= 1.01, f"{variable}: R-hat {values.max():.4f}"


def test_nuts_posterior_is_not_the_prior(nuts_case):
    """The likelihood is switched on: posterior sds are far below the prior's."""
    tree = nuts_case.est.idata_
    for variable in nuts_case.parameters:
        prior_sd = tree["prior"][variable].std(("chain", "draw")).values
        post_sd = tree["posterior"][variable].std(("chain", "draw")).values
        real = prior_sd > 0  # not the categorical padding
        assert np.all(post_sd[real] < 0.8 * prior_sd[real]), variable


def test_conjugate_posterior_means_are_within_4_mcse_of_the_closed_form(conjugate_case):
    _assert_within_mcse(conjugate_case)


def test_conjugate_posterior_sds_are_within_4_mcse_of_the_closed_form(conjugate_case):
    _assert_within_mcse(conjugate_case, "sd")


def test_conjugate_draws_are_independent(conjugate_case):
    """Exact draws: the bulk ESS is close to the number of draws (NUTS would not need this)."""
    posterior = _posterior(conjugate_case)[["class_prob"]]
    ess = az.ess(posterior)["class_prob"].values
    n_draws = posterior.sizes["chain"] * posterior.sizes["draw"]
    assert np.all(ess > 0.7 * n_draws)


@pytest.mark.parametrize("group", ["posterior", "prior"])
def test_conjugate_tree_has_the_variables_and_dims_of_the_nuts_tree(fits, group, nuts_case):
    conjugate = fits.conjugate(nuts_case.name).est.idata_[group].to_dataset()
    nuts = nuts_case.est.idata_[group].to_dataset()
    assert set(conjugate.data_vars) == set(nuts.data_vars)
    for name in nuts.data_vars:
        assert conjugate[name].dims == nuts[name].dims, name
        for dim in nuts[name].dims:
            if dim not in ("chain", "draw"):
                np.testing.assert_array_equal(conjugate[dim].values, nuts[dim].values)


def test_nuts_tree_groups(nuts_case):
    children = set(nuts_case.est.idata_.children)
    assert {"posterior", "prior", "constant_data", "sample_stats"} <= children
    # bayesgen's row-level groups, not PyMC's statistics-level ones (those are dropped).
    assert {"observed_data", "log_likelihood"} <= children
    assert "prior_predictive" not in children
    assert "y" in nuts_case.est.idata_["observed_data"].to_dataset()
    stats = nuts_case.est.idata_["sample_stats"].to_dataset()
    assert stats.sizes["chain"] == 2 and stats.sizes["draw"] == 2000
    assert int(stats["diverging"].sum()) == 0


def test_conjugate_tree_groups(conjugate_case):
    children = set(conjugate_case.est.idata_.children)
    assert {"posterior", "prior", "constant_data", "observed_data", "log_likelihood"} <= children
    assert "sample_stats" not in children


@pytest.mark.parametrize("kind", ["nuts", "conjugate"])
@pytest.mark.parametrize("name", MODELS)
def test_constant_data_holds_the_sufficient_statistics(fits, kind, name):
    case = getattr(fits, kind)(name)
    data = case.est.idata_["constant_data"].to_dataset()
    names = ["class_count", "class_mean", "scatter"] if name == "gda" else ["class_count"]
    if name != "gda":
        names.append("feature_count")
    for variable in names:
        np.testing.assert_allclose(data[variable].values, case.expected[variable], rtol=1e-12)
    np.testing.assert_array_equal(data["class"].values, case.expected["classes"])


def test_prior_group_holds_prior_draws(nuts_case):
    """Prior means of the Dirichlet/Beta parameters are within 4 standard errors of α_i / α_0."""
    prior = nuts_case.est.idata_["prior"].to_dataset()
    assert prior.sizes["draw"] * prior.sizes["chain"] == 100
    K = len(nuts_case.expected["classes"])
    checks = [("class_prob", np.full(K, 1.0), None)]
    if nuts_case.name == "multinomial_nb":
        checks.append(("feature_prob", np.ones(4), None))
    elif nuts_case.name == "bernoulli_nb":
        checks.append(("feature_prob", np.ones(2), 0))  # Beta(1, 1) = Dirichlet(1, 1)
    elif nuts_case.name == "categorical_nb":
        checks.append(("feature_prob", np.where(nuts_case.expected["mask"], 1.0, 0.0), None))
    for variable, concentration, index in checks:
        a0 = concentration.sum(axis=-1, keepdims=True)
        mean, var = concentration / a0, concentration * (a0 - concentration) / (a0**2 * (a0 + 1))
        if index is not None:
            mean, var = mean[index], var[index]
        draws = prior[variable].values.reshape(100, *prior[variable].shape[2:])
        real = np.broadcast_to(var > 0, draws.shape[1:])
        z = np.abs(draws.mean(axis=0) - mean)[real] / np.sqrt(
            np.broadcast_to(var, real.shape)[real] / 100
        )
        assert z.max() <= N_SIGMA, variable


def test_a_conjugate_prior_is_drawn_exactly_not_by_pymc(nuts_case):
    """Where the prior is conjugate, the prior group is of exact draws: PyMC's forward
    sampling would compile a graph of its own."""
    assert nuts_case.est.idata_["prior"].attrs["inference_library"] == "bayesgen.conjugate"
    assert nuts_case.est.idata_["posterior"].attrs["inference_library"] == "pymc"


class _Sampled(Exception):
    """Raised by a stand-in for sample_nuts once it has seen its arguments."""


def _record_sample_nuts(monkeypatch, module) -> dict:
    """Replace ``module.sample_nuts`` by a stand-in that records its options in the returned
    dict and raises :class:`_Sampled`, so a fit stops before sampling."""
    seen = {}

    def stand_in(model, **options):
        seen.update(options)
        raise _Sampled

    monkeypatch.setattr(module, "sample_nuts", stand_in)
    return seen


@pytest.mark.parametrize(
    "estimator, params, exact",
    [
        ("MultinomialNB", {}, True),
        ("MultinomialNB", {"alpha_prior": (2.0, 2.0)}, True),  # exact: λ, then θ given λ
        ("GaussianDiscriminantAnalysis", {}, True),
        ("GaussianDiscriminantAnalysis", {"cov_prior": "lkj"}, False),
        ("DirichletMultinomialNB", {}, False),  # (s, m) have no conjugate prior
    ],
)
def test_a_nuts_fit_asks_for_exact_prior_draws_only_where_the_prior_is_conjugate(
    monkeypatch, estimator, params, exact
):
    import bayesgen
    from bayesgen.inference import sampling

    seen = _record_sample_nuts(monkeypatch, sampling)
    X = np.array([[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4], [2, 2, 2], [0, 1, 5]])
    y = np.array([0, 0, 1, 1, 0, 1])
    est = getattr(bayesgen, estimator)(inference="nuts", **params)
    with pytest.raises(_Sampled):
        est.fit(X.astype(float) if estimator.startswith("Gaussian") else X, y)
    assert seen["exact_prior"] is exact


@pytest.mark.parametrize("rows", ["missing entries", "unlabelled rows"])
def test_fits_with_missing_entries_or_unlabelled_rows_draw_the_prior_exactly_too(monkeypatch, rows):
    import bayesgen
    from bayesgen.inference import gibbs, semi_supervised_nuts

    module = gibbs if rows == "missing entries" else semi_supervised_nuts
    seen = _record_sample_nuts(monkeypatch, module)
    rng = np.random.default_rng(0)
    y = np.arange(30) % 2
    if rows == "missing entries":
        X = rng.normal(size=(30, 2)) + y[:, None]
        X[3, 1] = np.nan
        est = bayesgen.GaussianDiscriminantAnalysis(inference="nuts")
    else:
        X = rng.poisson(2.0, size=(30, 3))
        y = np.where(np.arange(30) < 20, y, np.nan)  # the last ten unlabelled
        est = bayesgen.MultinomialNB(inference="nuts")
    with pytest.raises(_Sampled):
        est.fit(X, y)
    assert seen["exact_prior"] is True


def test_exact_prior_draws_need_the_statistics():
    from bayesgen.generative import model_for
    from bayesgen.inference.sampling import sample_nuts

    stats = cf.multinomial_nb(*DATA["multinomial_nb"]())
    with pytest.raises(ValueError, match="exact_prior: the exact prior draws need the model's"):
        sample_nuts(model_for(stats), var_names=["class_prob"], exact_prior=True)


# --------------------------------------------------------------------------------------------
# MAP (find_MAP) against the Dirichlet / Beta mode.


def _mode(case, alpha):
    """dirichlet_mode of the model's counts, arranged as the model's feature_prob."""
    counts, class_count = case.expected["feature_count"], case.expected["class_count"]
    if case.name == "bernoulli_nb":
        pair = np.stack([counts, class_count[:, None] - counts], axis=-1)
        return cf.dirichlet_mode(pair, alpha)[..., 0]
    if case.name == "categorical_nb":
        mode = np.zeros_like(counts)
        for j, width in enumerate(case.expected["mask"].sum(axis=1)):
            mode[:, j, :width] = cf.dirichlet_mode(counts[:, j, :width], alpha)
        return mode
    return cf.dirichlet_mode(counts, alpha)


@pytest.mark.parametrize("method", ["closed_form", "find_MAP"])
@pytest.mark.parametrize("name", NB_MODELS)
def test_map_is_the_dirichlet_mode(fits, name, method):
    case = fits.map(name, method=method)
    assert case.est.map_.attrs["map_method"] == method
    assert case.est.map_.attrs["map_converged"] == 1
    alpha = case.extra["lam"] + 1.0
    map_ = case.est.map_
    np.testing.assert_allclose(
        map_["class_prob"].values, cf.dirichlet_mode(case.expected["class_count"], 1.0), atol=1e-4
    )
    np.testing.assert_allclose(map_["feature_prob"].values, _mode(case, alpha), atol=1e-4)


@pytest.mark.parametrize("method", ["closed_form", "find_MAP"])
@pytest.mark.parametrize("name", NB_MODELS)
def test_map_with_alpha_lambda_plus_one_is_add_lambda(fits, name, method):
    """With α = λ + 1 the MAP is the add-λ estimate (n + λ) / (N + K λ) (here λ = 0.5)."""
    case = fits.map(name, method=method)
    map_ = case.est.map_
    np.testing.assert_allclose(
        map_["feature_prob"].values, case.expected["feature_prob"], atol=1e-4
    )
    # class_alpha = 1: the class MAP is the MLE N_k / N, not the posterior mean
    class_count = case.expected["class_count"]
    np.testing.assert_allclose(
        map_["class_prob"].values, class_count / class_count.sum(), atol=1e-4
    )
    assert not np.allclose(map_["class_prob"].values, case.expected["class_prob"], atol=1e-3)


@pytest.mark.parametrize("method", ["closed_form", "find_MAP"])
def test_map_has_the_coords_of_the_posterior(fits, method):
    case = fits.map("multinomial_nb", method=method)
    map_ = case.est.map_
    assert map_["feature_prob"].dims == ("class", "feature")
    np.testing.assert_array_equal(map_["feature"].values, case.X.columns)
    np.testing.assert_array_equal(map_["class"].values, case.expected["classes"])


# --------------------------------------------------------------------------------------------
# The graph is declared on sufficient statistics: it does not grow with the number of rows.


def _stats(name, n):
    X, y = DATA[name](seed=11, n=n)
    if name == "gda":
        return cf.gda(X, y, prior=cf.NormalInverseWishart(kappa=0.5))
    return getattr(cf, name)(X, y)


def _graph_size(model):
    from pytensor.graph.traversal import apply_ancestors, graph_inputs

    logp = model.logp()
    n_nodes = sum(1 for _ in apply_ancestors([logp]))
    n_elements = sum(
        int(np.size(v.get_value() if hasattr(v, "get_value") else getattr(v, "data", 0)))
        for v in graph_inputs([logp])
    )
    return n_nodes, n_elements


@pytest.mark.parametrize(
    "name",
    # GDA's logp is a graph of its own to compile (about 15 s with a cold cache): slow
    [*NB_MODELS, pytest.param("gda", marks=pytest.mark.slow)],
)
def test_model_graph_does_not_grow_with_rows(name):
    import pymc as pm

    from bayesgen.generative import model_for

    small, large = _stats(name, 100), _stats(name, 10_000)
    model = model_for(small)
    logp = model.compile_logp()
    rng = np.random.default_rng(0)
    point = {k: v + 0.1 * rng.normal(size=np.shape(v)) for k, v in model.initial_point().items()}
    logp_small = logp(point)
    size_small = _graph_size(model)

    fresh = model_for(large)
    # every pm.Data of the model (counts, class means, scatter root, prior hyperparameters)
    data = {variable.name: variable.get_value() for variable in fresh.data_vars}
    assert data["class_count_data"].sum() == 10_000
    assert all(
        np.shape(data[k]) == np.shape(v.get_value())
        for k, v in model.named_vars.items()
        if k in data
    )
    with model:
        pm.set_data(data)
    logp_large = logp(point)

    expected = fresh.compile_logp()(point)
    np.testing.assert_allclose(logp_large, expected, rtol=1e-10)
    assert not np.isclose(logp_large, logp_small, rtol=1e-3)  # set_data changed the data
    # same nodes, and inputs (data, constants) of the same total size for N = 100 and 10,000
    assert size_small == _graph_size(model) == _graph_size(fresh)
    assert size_small[1] < 1_000


def test_categorical_graph_grows_linearly_with_the_features():
    # Each feature's rates are summed over its categories by a scatter-add over the cells. A
    # product with a dense (cell, feature) indicator matrix gives the same sums, but puts
    # cells x features numbers into the graph and into every gradient (20,000 x 4,000 at
    # 4,000 features of 5 categories).
    from bayesgen.generative import model_for

    inputs = {}
    for n_features in (20, 200):
        rng = np.random.default_rng(0)
        X = rng.integers(0, 3, size=(60, n_features))
        X[:3] = np.arange(3)[:, None]  # every category in every feature: 3 cells each
        inputs[n_features] = _graph_size(model_for(cf.categorical_nb(X, np.arange(60) % 2)))[1]
    # 10 times the features: 10 times the counts and constants, not 100 times
    assert 9 * inputs[20] <= inputs[200] <= 11 * inputs[20]
