"""The PyMC models declare their likelihood as observed random variables.

Each model observes its sufficient statistics (``class_count`` ~ Multinomial(N, π), the feature
counts, the Gaussian class means and scatters), so PyMC can simulate them. The posterior must
be exactly the per-row model's: between any two parameter points the model's log density
changes by the per-row log-likelihood change, computed here with SciPy from the rows X, y
(plus, for the Gamma-Poisson models, the Poisson term of the totals, which depends only on
the scale Σg that θ = g / Σg does not see), plus the prior change. No NUTS: only logp graphs
and forward draws are compiled.
"""

import warnings

import numpy as np
import pytest
import xarray as xr
from conftest import DATA, GDA_PRIOR
from scipy import stats

from bayesgen import closed_form as cf
from bayesgen.generative import model_for

pm = pytest.importorskip("pymc")

#: What every model observes, and which likelihood terms stay potentials.
OBSERVED = {
    "multinomial_nb": ["class_count", "feature_count"],
    "bernoulli_nb": ["class_count", "feature_count"],
    "categorical_nb": ["class_count", "cell_count"],
    "gda": ["class_count", "class_mean", "scatter"],
    "gda_lkj": ["class_count", "class_mean", "scatter"],
    "qda": ["class_count", "class_mean", "scatter_0", "scatter_1"],
}


def _rows(name):
    return DATA["gda" if name.startswith(("gda", "qda")) else name]()


def _stats(name, X, y):
    prior = cf.NormalInverseWishart(**GDA_PRIOR)
    if name.startswith("gda"):
        return cf.gda(X, y, prior=prior)
    if name == "qda":
        return cf.qda(X, y, prior=prior)
    return getattr(cf, name)(X, y)


def _model(name, stats):
    return model_for(stats, cov_prior="lkj") if name == "gda_lkj" else model_for(stats)


@pytest.fixture(scope="module", params=list(OBSERVED))
def case(request):
    name = request.param
    X, y = _rows(name)
    stats = _stats(name, X, y)
    return name, np.asarray(X, dtype=float), y, stats, _model(name, stats)


def test_every_model_observes_its_statistics(case):
    name, _, _, _, model = case
    assert [rv.name for rv in model.observed_RVs] == OBSERVED[name]
    assert model.potentials == []


# --------------------------------------------------------------------------------------------
# The log density changes exactly as the per-row likelihood (SciPy) plus the prior.


def _row_log_likelihood(name, X, y, statistics, values):
    """log p(X, y | parameters) from the rows, up to a constant, with SciPy densities."""
    classes = list(statistics["class"].values)
    codes = np.array([classes.index(label) for label in y])
    total = np.log(values["class_prob"])[codes].sum()
    if name == "multinomial_nb":
        theta = values["feature_prob"]
        total += sum(
            stats_multinomial(x, theta[k]) for x, k in zip(X.astype(int), codes, strict=True)
        )
        # The Poisson form adds T_k ~ Poisson(Σ_w g_kw): the scale only.
        totals = statistics["feature_count"].values.sum(axis=1)
        total += _poisson(totals, values["feature_rate"].sum(axis=1))
    elif name == "bernoulli_nb":
        phi = values["feature_prob"][codes]
        total += stats_bernoulli(X, phi)
    elif name == "categorical_nb":
        theta = values["feature_prob"]
        columns = np.arange(X.shape[1])
        total += sum(
            np.log(theta[k, columns, x.astype(int)]).sum() for x, k in zip(X, codes, strict=True)
        )
        mask = statistics["category_mask"].values
        widths = mask.sum(axis=1)
        counts = statistics["class_count"].values[:, None] * np.ones(len(widths))  # T_kn = N_k
        rate = values["cell_rate"]  # (class, cell), the real cells in row-major order
        cell_feature = np.nonzero(mask)[0]
        scale = np.stack([rate[:, cell_feature == j].sum(axis=1) for j in columns], axis=1)
        total += _poisson(counts, scale)
    else:
        cov = values["cov"]
        for x, k in zip(X, codes, strict=True):
            total += stats_mvn(x, values["mu"][k], cov[k] if name == "qda" else cov)
    return total


def stats_multinomial(x, p):
    return stats.multinomial.logpmf(x, n=x.sum(), p=p)


def stats_bernoulli(X, phi):
    return stats.bernoulli.logpmf(X.astype(int), phi).sum()


def stats_mvn(x, mean, cov):
    return stats.multivariate_normal.logpdf(x, mean, cov)


def _poisson(counts, mean):
    return stats.poisson.logpmf(np.rint(counts).astype(int), mean).sum()


def _points(model, seed):
    rng = np.random.default_rng(seed)
    start = model.initial_point()
    return [
        {key: value + 0.3 * rng.normal(size=np.shape(value)) for key, value in start.items()}
        for _ in range(2)
    ]


def _values(model, point, names):
    fn = model.compile_fn(
        model.replace_rvs_by_values([model[name] for name in names]),
        inputs=model.value_vars,
        on_unused_input="ignore",
    )
    return dict(zip(names, fn(point), strict=True))


@pytest.mark.parametrize(
    "name", ["multinomial_nb", "bernoulli_nb", "categorical_nb", "gda", "gda_lkj", "qda"]
)
def test_log_density_changes_by_the_row_likelihood_plus_the_prior(name):
    X, y = _rows(name)
    statistics = _stats(name, X, y)
    _check_log_density(name, np.asarray(X, dtype=float), y, statistics, _model(name, statistics))


def _check_log_density(name, X, y, statistics, model):
    names = ["class_prob"]
    names += ["mu", "cov"] if name.startswith(("gda", "qda")) else ["feature_prob"]
    names += {"multinomial_nb": ["feature_rate"], "categorical_nb": ["cell_rate"]}.get(name, [])
    total = model.compile_logp(jacobian=False)
    prior = model.compile_logp(vars=model.free_RVs, jacobian=False)
    first, second = _points(model, seed=0)
    change = total(second) - total(first)
    prior_change = prior(second) - prior(first)
    likelihood_change = _row_log_likelihood(
        name, X, y, statistics, _values(model, second, names)
    ) - _row_log_likelihood(name, X, y, statistics, _values(model, first, names))
    assert abs(likelihood_change) > 1e-3  # the two points differ in the likelihood
    np.testing.assert_allclose(change, likelihood_change + prior_change, rtol=1e-9, atol=1e-8)


# ... where no observed variable has the density, a potential with the same kernel


def test_singular_gaussian_scatters_stay_exact_as_potentials():
    """4 rows in 3 dimensions: N − K = 2 < D for GDA and N_k − 1 < D for QDA."""
    X, y = DATA["gda"](n=4)  # classes of 1 and 3 rows
    X = np.asarray(X, dtype=float)
    for name in ("gda", "qda"):
        statistics = _stats(name, X, y)
        model = _model(name, statistics)
        assert [rv.name for rv in model.observed_RVs] == ["class_count", "class_mean"]
        assert [p.name for p in model.potentials] == ["scatter_loglik"]
        _check_log_density(name, X, y, statistics, model)


def test_fractional_word_counts_stay_a_weighted_potential():
    X, y = DATA["multinomial_nb"]()
    statistics = cf.multinomial_nb(np.asarray(X, dtype=float) * 0.5, y)
    model = model_for(statistics)
    assert [rv.name for rv in model.observed_RVs] == ["class_count"]
    assert [p.name for p in model.potentials] == ["feature_loglik"]


def test_fractional_class_counts_are_refused():
    X, y = DATA["bernoulli_nb"]()
    statistics = cf.bernoulli_nb(X, y)
    statistics["class_count"] = statistics["class_count"] + 0.5
    with pytest.raises(ValueError, match="class_count must hold whole numbers"):
        model_for(statistics)


# --------------------------------------------------------------------------------------------
# Simulation: prior and posterior predictive.


def _prior_predictive(model, draws=200):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pm.sample_prior_predictive(draws=draws, model=model, random_seed=1)


@pytest.mark.parametrize(
    "case",
    [
        # The LKJ prior's random graph is its own compile (34 s cold on 2 cores); its log
        # density is checked in the default suite (test_log_density_changes_...).
        pytest.param(name, marks=pytest.mark.slow) if name == "gda_lkj" else name
        for name in OBSERVED
    ],
    indirect=True,
)
def test_prior_predictive_simulates_every_statistic_in_its_shape(case):
    name, X, _, statistics, model = case
    simulated = _prior_predictive(model)["prior_predictive"].to_dataset()
    assert sorted(simulated.data_vars) == sorted(OBSERVED[name])
    sizes = {dim: statistics.sizes[dim] for dim in statistics.dims}
    sizes["cell"] = int(statistics["category_mask"].sum()) if "category_mask" in statistics else 0
    for variable in OBSERVED[name]:
        dims = simulated[variable].dims
        assert dims[:2] == ("chain", "draw")
        assert simulated[variable].shape[2:] == tuple(sizes[dim] for dim in dims[2:]), variable
    # every simulated data set has N rows
    assert np.all(simulated["class_count"].sum("class").values == X.shape[0])
    if "scatter" in simulated:  # symmetric positive definite
        scatter = simulated["scatter"].values
        np.testing.assert_allclose(scatter, np.swapaxes(scatter, -1, -2), atol=1e-9)
        assert np.all(np.linalg.eigvalsh(scatter) > 0)


def _posterior_tree(model, variables: dict) -> xr.DataTree:
    """A DataTree whose posterior group holds the given draws (chain 1, draw n)."""
    data = {}
    for name, values in variables.items():
        dims = ("chain", "draw", *model.named_vars_to_dims.get(name, ()))
        data[name] = (dims, values[None])
    coords = {dim: np.asarray(labels) for dim, labels in model.coords.items()}
    return xr.DataTree.from_dict({"posterior": xr.Dataset(data, coords=coords)})


def _posterior_predictive(model, tree):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pm.sample_posterior_predictive(tree, model=model, random_seed=2, progressbar=False)


def test_posterior_predictive_of_multinomial_counts_matches_the_posterior():
    """With exact posterior draws of π and of the rates (Gamma(λ + n, β + 1), β = V λ / T_k),
    the simulated class counts have mean N E[π] and the simulated word counts
    (λ + n) / (β + 1), whose total over the vocabulary is the observed number of tokens T_k of
    each class."""
    X, y = DATA["multinomial_nb"]()
    statistics = cf.multinomial_nb(X, y)
    model = model_for(statistics)
    rng = np.random.default_rng(3)
    draws = 2000
    counts = statistics["feature_count"].values
    class_count = statistics["class_count"].values
    alpha, n_words = statistics.attrs["alpha"], counts.shape[1]
    prior_rate = n_words * alpha / counts.sum(axis=1, keepdims=True)
    class_prob = rng.dirichlet(class_count + 1.0, size=draws)
    rate = rng.gamma(counts + alpha, 1.0 / (prior_rate + 1.0), size=(draws, *counts.shape))
    tree = _posterior_tree(model, {"class_prob": class_prob, "feature_rate": rate})
    simulated = _posterior_predictive(model, tree)["posterior_predictive"].to_dataset()
    assert simulated["feature_count"].dims == ("chain", "draw", "class", "feature")

    n_rows = class_count.sum()
    sim_class = simulated["class_count"].values[0]
    assert np.all(sim_class.sum(axis=1) == n_rows)
    expected_class = n_rows * (class_count + 1.0) / (n_rows + len(class_count))
    _assert_mean_within_mcse(sim_class, expected_class)

    sim_words = simulated["feature_count"].values[0]
    _assert_mean_within_mcse(sim_words, (counts + alpha) / (prior_rate + 1.0))
    _assert_mean_within_mcse(sim_words.sum(axis=2), counts.sum(axis=1))


def test_posterior_predictive_bernoulli_frequencies_match_add_lambda():
    """Simulated present counts / N_k have posterior predictive mean (N_jk + λ) / (N_k + 2λ)."""
    from bayesgen.inference.sampling import conjugate_posterior

    X, y = DATA["bernoulli_nb"]()
    statistics = cf.bernoulli_nb(X, y)
    model = model_for(statistics)
    posterior = conjugate_posterior(statistics, draws=2000, chains=1, random_seed=4)
    simulated = _posterior_predictive(model, posterior)["posterior_predictive"].to_dataset()
    class_count = statistics["class_count"].values
    frequency = simulated["feature_count"].values[0] / class_count[:, None]
    counts = statistics["feature_count"].values
    add_lambda = (counts + 1.0) / (class_count[:, None] + 2.0)
    _assert_mean_within_mcse(frequency, add_lambda)


def _assert_mean_within_mcse(draws, expected, n_sigma=4.5):
    """Mean over the first axis within n_sigma standard errors of ``expected``."""
    draws = np.asarray(draws, dtype=float)
    mean = draws.mean(axis=0)
    se = draws.std(axis=0, ddof=1) / np.sqrt(draws.shape[0])
    z = np.abs(mean - expected) / se
    assert z.max() <= n_sigma, f"{z.max():.1f} standard errors"
