"""The hand-written Gaussian log densities of the GDA and QDA PyMC models
(:mod:`bayesgen.families.gda_pymc`) against SciPy.

The models write x̄_k ~ N(μ_k, Σ_k / N_k), S ~ Wishart(ν, Σ) and μ_k ~ N(m₀, Σ_k / κ₀) on the
Cholesky factor of the precision, built from the Bartlett variables. Here every term is
compared, at a random point, with SciPy's density at Σ = (L_V A Aᵀ L_Vᵀ)⁻¹ rebuilt in NumPy
from the point's Bartlett variables, on statistics computed here from the rows; the linear
form (coef, intercept) with Σ⁻¹ μ_k. Three classes, so that GDA keeps one coef row a class.
One small graph is compiled per model; no NUTS.
"""

import warnings

import numpy as np
import pytest
from scipy import stats

from bayesgen import closed_form as cf
from bayesgen.generative import model_for

pm = pytest.importorskip("pymc")

PRIOR = {
    "mean": [0.5, -0.5, 1.0],
    "kappa": 0.7,
    "dof": 6.0,
    "scale": [[2.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 1.5]],
}


def _rows(seed=5, n=30):
    rng = np.random.default_rng(seed)
    code = np.arange(n) % 3
    means = np.array([[0.0, 0.0, 1.0], [1.5, -1.0, 2.0], [-1.0, 0.5, 0.0]])
    root = np.array([[1.0, 0.0, 0.0], [0.5, 0.8, 0.0], [-0.3, 0.2, 0.6]])
    return means[code] + rng.normal(size=(n, 3)) @ root.T, np.array(["a", "b", "c"])[code]


def _point(model, seed):
    rng = np.random.default_rng(seed)
    start = model.initial_point()
    return {key: value + 0.3 * rng.normal(size=np.shape(value)) for key, value in start.items()}


def _evaluate(model, point, terms, names):
    """The log density of each of ``terms`` (summed) and the values of ``names``."""
    logps = model.logp(vars=[model[t] for t in terms], jacobian=False, sum=False)
    outputs = [pt_sum(term) for term in logps]
    outputs += model.replace_rvs_by_values([model[name] for name in names])
    fn = model.compile_fn(outputs, inputs=model.value_vars, on_unused_input="ignore")
    values = fn(point)
    return dict(zip(terms, values[: len(terms)], strict=True)), dict(
        zip(names, values[len(terms) :], strict=True)
    )


def pt_sum(term):
    return term.sum()


def _bartlett_precision(chi2, below):
    """L_V A Aᵀ L_Vᵀ with L_V the Cholesky factor of Ψ₀⁻¹ and A filled row by row."""
    scale_chol = np.linalg.cholesky(np.linalg.inv(np.array(PRIOR["scale"])))
    factor = np.diag(np.sqrt(chi2))
    factor[np.tril_indices(3, k=-1)] = below
    root = scale_chol @ factor
    return root @ root.T


def _class_statistics(X, y):
    labels = np.unique(y)
    means = np.array([X[y == label].mean(axis=0) for label in labels])
    centred = [X[y == label] - mean for label, mean in zip(labels, means, strict=True)]
    scatters = np.array([rows.T @ rows for rows in centred])
    counts = np.array([np.sum(y == label) for label in labels])
    return counts, means, scatters


def test_gda_log_density_terms_equal_scipy():
    X, y = _rows()
    model = model_for(cf.gda(X, y, prior=cf.NormalInverseWishart(**PRIOR)))
    point = _point(model, seed=0)
    terms, values = _evaluate(
        model,
        point,
        ["class_mean", "scatter", "mu"],
        ["bartlett_chi2", "bartlett_normal", "mu", "cov", "coef", "intercept", "class_prob"],
    )
    cov = np.linalg.inv(_bartlett_precision(values["bartlett_chi2"], values["bartlett_normal"]))
    np.testing.assert_allclose(values["cov"], cov, rtol=1e-10)
    counts, means, scatters = _class_statistics(X, y)
    mu = values["mu"]
    expected_means = sum(
        stats.multivariate_normal.logpdf(means[k], mu[k], cov / counts[k]) for k in range(3)
    )
    expected_scatter = stats.wishart.logpdf(scatters.sum(axis=0), df=len(y) - 3, scale=cov)
    expected_mu = sum(
        stats.multivariate_normal.logpdf(mu[k], PRIOR["mean"], cov / PRIOR["kappa"])
        for k in range(3)
    )
    np.testing.assert_allclose(terms["class_mean"], expected_means, rtol=1e-10)
    np.testing.assert_allclose(terms["scatter"], expected_scatter, rtol=1e-10)
    np.testing.assert_allclose(terms["mu"], expected_mu, rtol=1e-10)
    coef = np.linalg.solve(cov, mu.T).T
    np.testing.assert_allclose(values["coef"], coef, rtol=1e-9)
    intercept = -0.5 * np.sum(mu * coef, axis=1) + np.log(values["class_prob"])
    np.testing.assert_allclose(values["intercept"], intercept, rtol=1e-9)


def test_qda_log_density_terms_equal_scipy():
    X, y = _rows(seed=6)
    model = model_for(cf.qda(X, y, prior=cf.NormalInverseWishart(**PRIOR)))
    point = _point(model, seed=1)
    scatter_terms = [f"scatter_{k}" for k in range(3)]
    terms, values = _evaluate(
        model,
        point,
        ["class_mean", *scatter_terms, "mu"],
        ["bartlett_chi2", "bartlett_normal", "mu", "cov"],
    )
    cov = np.linalg.inv(
        [
            _bartlett_precision(values["bartlett_chi2"][k], values["bartlett_normal"][k])
            for k in range(3)
        ]
    )
    np.testing.assert_allclose(values["cov"], cov, rtol=1e-10)
    counts, means, scatters = _class_statistics(X, y)
    mu = values["mu"]
    expected_means = sum(
        stats.multivariate_normal.logpdf(means[k], mu[k], cov[k] / counts[k]) for k in range(3)
    )
    np.testing.assert_allclose(terms["class_mean"], expected_means, rtol=1e-10)
    for k, name in enumerate(scatter_terms):
        expected = stats.wishart.logpdf(scatters[k], df=counts[k] - 1, scale=cov[k])
        np.testing.assert_allclose(terms[name], expected, rtol=1e-10)
    expected_mu = sum(
        stats.multivariate_normal.logpdf(mu[k], PRIOR["mean"], cov[k] / PRIOR["kappa"])
        for k in range(3)
    )
    np.testing.assert_allclose(terms["mu"], expected_mu, rtol=1e-10)


def test_gda_simulated_statistics_have_their_moments():
    """At one fixed parameter point, the simulated x̄_k average μ_k and S averages ν Σ,
    each within 4.5 Monte Carlo standard errors (2,000 draws)."""
    X, y = _rows()
    model = model_for(cf.gda(X, y, prior=cf.NormalInverseWishart(**PRIOR)))
    point = _point(model, seed=2)
    _, values = _evaluate(
        model, point, [], ["bartlett_chi2", "bartlett_normal", "mu", "class_prob", "cov"]
    )
    draws = 2000
    posterior = {
        name: np.broadcast_to(values[name], (1, draws, *np.shape(values[name])))
        for name in ("bartlett_chi2", "bartlett_normal", "mu", "class_prob")
    }
    import xarray as xr

    tree = xr.DataTree.from_dict(
        {
            "posterior": xr.Dataset(
                {
                    name: (("chain", "draw", *[f"{name}_{i}" for i in range(v.ndim - 2)]), v)
                    for name, v in posterior.items()
                }
            )
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        simulated = pm.sample_posterior_predictive(
            tree,
            model=model,
            var_names=["class_mean", "scatter"],
            random_seed=3,
            progressbar=False,
        )["posterior_predictive"]
    scatter = simulated["scatter"].values[0]
    means = simulated["class_mean"].values[0]
    for sample, expected in ((scatter, (len(y) - 3) * values["cov"]), (means, values["mu"])):
        se = sample.std(axis=0, ddof=1) / np.sqrt(draws)
        assert (np.abs(sample.mean(axis=0) - expected) / se).max() <= 4.5
    np.testing.assert_allclose(scatter, np.swapaxes(scatter, -1, -2), atol=1e-9)
