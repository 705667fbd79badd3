"""The prior's strength chosen by the evidence: ``GaussianNB(prior="evidence")`` and
``PoissonNB(rate_prior="evidence")`` (bayesgen.maths.prior_strength).

The evidence is written out here independently of the code under test: the normal–inverse-gamma
one as the chain of Student-t predictives (each row given the rows before it), then as the
textbook closed form checked against that chain; the Gamma–Poisson one as SciPy's negative
binomial of the class totals. Its maximiser is found by SciPy's Nelder–Mead from several
starts, and the data sets that call for a strong or a weak prior are drawn from the model
itself with a known prior.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from scipy import optimize
from scipy import stats as scipy_stats
from scipy.special import gammaln

import bayesgen
from bayesgen import GaussianNB, PoissonNB
from bayesgen.inference.smoothing import EvidenceBoundaryWarning
from bayesgen.maths.normal_inverse_gamma import NormalInverseGamma

FAST = {"inference": "conjugate", "compute_map": False, "prior_draws": 0, "random_seed": 0}


# --------------------------------------------------------------------------------------------
# The evidence, written out here.


def chained_cell_log_evidence(x, m0, k0, a0, b0) -> float:
    """log p(x_1, ..., x_n) of one cell as Σ_i log p(x_i | x_1..x_{i-1}): each a Student-t
    with 2a degrees of freedom, location m and scale √(b (κ + 1) / (a κ)), then the
    one-row update of (m, κ, a, b)."""
    m, k, a, b = m0, k0, a0, b0
    total = 0.0
    for value in x:
        total += scipy_stats.t.logpdf(value, 2 * a, loc=m, scale=np.sqrt(b * (k + 1) / (a * k)))
        b += k * (value - m) ** 2 / (2 * (k + 1))
        m = (k * m + value) / (k + 1)
        k += 1
        a += 0.5
    return total


def textbook_log_evidence(X, y, kappa, shape, ratio) -> float:
    """Σ_kj log p(x_·j of class k) under m₀ = the overall mean, κ₀, a₀ and b₀ = a₀ r s²."""
    X = np.asarray(X, dtype=float)
    m0, b0 = X.mean(axis=0), shape * ratio * X.var(axis=0)
    total = 0.0
    for label in np.unique(y):
        rows = X[y == label]
        n = len(rows)
        mean = rows.mean(axis=0)
        b_n = (
            b0
            + ((rows - mean) ** 2).sum(axis=0) / 2
            + kappa * n * (mean - m0) ** 2 / (2 * (kappa + n))
        )
        a_n = shape + n / 2
        total += np.sum(
            -n / 2 * np.log(2 * np.pi)
            + 0.5 * np.log(kappa / (kappa + n))
            + shape * np.log(b0)
            - a_n * np.log(b_n)
            + gammaln(a_n)
            - gammaln(shape)
        )
    return float(total)


def negative_binomial_log_evidence(X, y, shape, rate) -> float:
    """Σ_kj log NB(S_kj; a, b / (b + N_k)): the class totals, each rate Gamma(a, b)."""
    X = np.asarray(X, dtype=float)
    total = 0.0
    for label in np.unique(y):
        rows = X[y == label]
        total += scipy_stats.nbinom.logpmf(rows.sum(axis=0), shape, rate / (rate + len(rows))).sum()
    return float(total)


def nelder_mead_maximum(function, starts) -> tuple[np.ndarray, float]:
    """The best of Nelder–Mead's maxima of ``function`` (of the logs) from ``starts``."""
    best = None
    for start in starts:
        result = optimize.minimize(
            lambda t: -function(*np.exp(t)),
            np.log(start),
            method="Nelder-Mead",
            options={"xatol": 1e-9, "fatol": 1e-12, "maxiter": 20000, "maxfev": 20000},
        )
        if best is None or result.fun < best.fun:
            best = result
    return np.exp(best.x), -best.fun


def nig_data(seed, *, n_classes, n_rows, n_features, kappa, shape=3.0, scale=2.0):
    """Rows drawn from Gaussian naive Bayes under a known prior: σ² ~ Inv-Gamma(a₀, b₀),
    μ ~ N(0, σ² / κ₀)."""
    rng = np.random.default_rng(seed)
    variance = scale / rng.gamma(shape, size=(n_classes, n_features))
    mu = rng.normal(0.0, np.sqrt(variance / kappa))
    y = np.repeat(np.arange(n_classes), n_rows)
    return rng.normal(mu[y], np.sqrt(variance[y])), y


def poisson_data(seed, *, n_classes, n_rows, n_features, shape, mean=5.0):
    """Counts drawn from Poisson naive Bayes with every rate Gamma(shape, shape / mean)."""
    rng = np.random.default_rng(seed)
    rates = rng.gamma(shape, mean / shape, size=(n_classes, n_features))
    y = np.repeat(np.arange(n_classes), n_rows)
    return rng.poisson(rates[y]).astype(float), y


def chosen_gaussian_prior(est) -> tuple[float, float, float]:
    """(κ₀, a₀, r) of a fitted GaussianNB, r read back from b₀ = a₀ r s²."""
    fit = est.closed_form_
    return fit.attrs["prior_kappa"], fit.attrs["prior_shape"], fit.attrs["prior_variance_ratio"]


# --------------------------------------------------------------------------------------------
# Gaussian naive Bayes.


def test_the_textbook_evidence_is_the_chain_of_student_t_predictives():
    X, y = nig_data(0, n_classes=3, n_rows=5, n_features=2, kappa=1.0)
    kappa, shape, ratio = 0.7, 2.5, 0.4
    m0, b0 = X.mean(axis=0), shape * ratio * X.var(axis=0)
    chained = sum(
        chained_cell_log_evidence(X[y == k, j], m0[j], kappa, shape, b0[j])
        for k in range(3)
        for j in range(2)
    )
    assert textbook_log_evidence(X, y, kappa, shape, ratio) == pytest.approx(chained, rel=1e-12)


def test_the_chosen_gaussian_prior_maximises_the_evidence():
    X, y = nig_data(1, n_classes=6, n_rows=12, n_features=3, kappa=2.0)
    est = GaussianNB(prior="evidence", **FAST).fit(X, y)
    chosen = np.array(chosen_gaussian_prior(est))
    reference, best = nelder_mead_maximum(
        lambda k, a, r: textbook_log_evidence(X, y, k, a, r),
        [(0.01, 1.5, 0.3), (1.0, 5.0, 1.0), (30.0, 2.0, 0.5)],
    )
    assert textbook_log_evidence(X, y, *chosen) >= best - 1e-7
    np.testing.assert_allclose(chosen, reference, rtol=1e-3)
    # Stationary: the derivatives of the evidence in the logs vanish there.
    step = 1e-5
    for axis in range(3):
        shift = np.exp(step * np.eye(3)[axis])
        slope = (
            textbook_log_evidence(X, y, *(chosen * shift))
            - textbook_log_evidence(X, y, *(chosen / shift))
        ) / (2 * step)
        assert abs(slope) < 1e-4, (axis, slope)


def test_the_chosen_prior_is_recorded_and_refits_the_same_model():
    X, y = nig_data(2, n_classes=5, n_rows=10, n_features=3, kappa=2.0)
    est = GaussianNB(prior="evidence", **FAST).fit(X, y)
    kappa, shape, ratio = chosen_gaussian_prior(est)
    fit = est.closed_form_
    assert fit.attrs["prior_strength"] == "evidence"
    np.testing.assert_allclose(fit["prior_mean"].values, X.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(fit["prior_scale"].values, shape * ratio * X.var(axis=0))
    assert isinstance(est.prior_, NormalInverseGamma)
    assert (est.prior_.kappa, est.prior_.shape) == (kappa, shape)
    again = GaussianNB(prior=est.prior_, **FAST).fit(X, y)
    np.testing.assert_allclose(again.theta_, est.theta_, rtol=1e-14)
    np.testing.assert_allclose(again.var_, est.var_, rtol=1e-14)


def test_many_classes_with_close_means_get_a_strong_prior():
    # True κ₀ = 30: the class means lie within 1/√30 of a within-class SD of each other.
    X, y = nig_data(3, n_classes=40, n_rows=20, n_features=8, kappa=30.0)
    kappa, _, _ = chosen_gaussian_prior(GaussianNB(prior="evidence", **FAST).fit(X, y))
    assert 15.0 < kappa < 60.0


def test_classes_far_apart_get_a_weak_prior():
    # True κ₀ = 0.01, the default's: the class means spread over 10 within-class SDs.
    X, y = nig_data(4, n_classes=40, n_rows=20, n_features=8, kappa=0.01)
    est = GaussianNB(prior="evidence", **FAST).fit(X, y)
    kappa, _, _ = chosen_gaussian_prior(est)
    assert 0.005 < kappa < 0.02
    # So weak that the class means move less than 0.1% of their way to the overall mean.
    observed = est.closed_form_["mu_mle"].values
    moved = np.abs(est.theta_ - observed)
    assert np.all(moved <= 1e-3 * np.abs(X.mean(axis=0) - observed))


def test_identical_classes_take_the_bound_with_a_warning():
    # Every class the same rows: the class means and variances are explained as one.
    rng = np.random.default_rng(5)
    block = rng.normal(size=(10, 2))
    X, y = np.vstack([block] * 4), np.repeat(np.arange(4), 10)
    message = "prior='evidence': the evidence still increases beyond the bound of its search"
    with pytest.warns(EvidenceBoundaryWarning, match=re.escape(message)) as caught:
        est = GaussianNB(prior="evidence", **FAST).fit(X, y)
    assert "κ₀ → ∞ (κ₀ = 1e+06" in str(caught[0].message)
    assert est.prior_.kappa == 1e6


# The first chunks alone are too few rows to bound a₀: not what is tested here.
@pytest.mark.filterwarnings("ignore::bayesgen.inference.smoothing.EvidenceBoundaryWarning")
def test_partial_fit_chooses_the_prior_of_one_fit():
    X, y = nig_data(6, n_classes=4, n_rows=15, n_features=3, kappa=1.0)
    whole = GaussianNB(prior="evidence", **FAST).fit(X, y)
    chunked = GaussianNB(prior="evidence", **FAST)
    order = np.random.default_rng(0).permutation(len(y))
    for part in np.array_split(order, 3):
        chunked.partial_fit(X[part], y[part], classes=np.arange(4))
    np.testing.assert_allclose(
        chosen_gaussian_prior(chunked), chosen_gaussian_prior(whole), rtol=1e-6
    )


def test_a_gaussian_fit_with_the_chosen_prior_passes_compare():
    # a₀ = 4.05 > 4: the SDs of σ² have the finite fourth moment they are compared with.
    X, y = nig_data(9, n_classes=3, n_rows=15, n_features=2, kappa=1.0)
    est = GaussianNB(prior="evidence", inference="conjugate", draws=500, chains=2, random_seed=0)
    result = bayesgen.compare(est.fit(X, y))
    assert result.ok, str(result)


def test_a_saved_gaussian_fit_loads_with_the_prior_the_evidence_chose(tmp_path):
    X, y = nig_data(8, n_classes=3, n_rows=10, n_features=2, kappa=1.0)
    est = GaussianNB(prior="evidence", **FAST).fit(X, y)
    loaded = bayesgen.load(est.save(tmp_path / "evidence.nc"))
    assert loaded.get_params()["prior"] == "evidence"
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))
    assert chosen_gaussian_prior(loaded) == chosen_gaussian_prior(est)
    np.testing.assert_array_equal(loaded.prior_.scale, est.prior_.scale)


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        (
            "evidense",
            ValueError,
            "prior: expected None, 'evidence' or a bayesgen NormalInverseGamma",
        ),
        (0.01, TypeError, "prior: expected None, 'evidence' or a bayesgen NormalInverseGamma"),
    ],
)
def test_a_bad_gaussian_prior_is_refused_naming_it(value, error, message):
    X, y = nig_data(9, n_classes=2, n_rows=5, n_features=2, kappa=1.0)
    with pytest.raises(error, match=re.escape(message)):
        GaussianNB(prior=value, **FAST).fit(X, y)


# --------------------------------------------------------------------------------------------
# Poisson naive Bayes.


def test_the_chosen_rate_prior_maximises_the_negative_binomial_likelihood():
    X, y = poisson_data(0, n_classes=5, n_rows=8, n_features=4, shape=2.0)
    est = PoissonNB(rate_prior="evidence", **FAST).fit(X, y)
    reference, best = nelder_mead_maximum(
        lambda a, b: negative_binomial_log_evidence(X, y, a, b),
        [(1.0, 0.2), (10.0, 2.0), (0.3, 0.1)],
    )
    chosen = np.array(est.rate_prior_)
    assert negative_binomial_log_evidence(X, y, *chosen) >= best - 1e-7
    np.testing.assert_allclose(chosen, reference, rtol=1e-3)
    attrs = est.closed_form_.attrs
    assert (attrs["rate_prior_shape"], attrs["rate_prior_rate"]) == est.rate_prior_
    assert attrs["rate_prior_strength"] == "evidence"


def test_rates_alike_get_a_strong_rate_prior_and_rates_apart_a_weak_one():
    X, y = poisson_data(1, n_classes=40, n_rows=20, n_features=10, shape=50.0)
    strong, _ = PoissonNB(rate_prior="evidence", **FAST).fit(X, y).rate_prior_
    X, y = poisson_data(2, n_classes=40, n_rows=20, n_features=10, shape=0.5)
    weak, _ = PoissonNB(rate_prior="evidence", **FAST).fit(X, y).rate_prior_
    assert 30.0 < strong < 80.0
    assert 0.35 < weak < 0.7


def test_equal_class_totals_take_the_shape_bound_with_a_warning():
    X = np.array([[3, 1], [1, 3], [2, 2], [2, 2], [3, 1], [1, 3]], dtype=float)
    y = np.repeat(["a", "b", "c"], 2)  # every class's totals (4, 4)
    with pytest.warns(EvidenceBoundaryWarning, match=r"^rate_prior='evidence': .* a₀ → ∞"):
        est = PoissonNB(rate_prior="evidence", **FAST).fit(X, y)
    assert est.rate_prior_[0] == 1e6
    assert est.rate_prior_[0] / est.rate_prior_[1] == pytest.approx(2.0)


def test_counts_without_any_count_are_refused_for_the_evidence():
    with pytest.raises(ValueError, match="rate_prior='evidence': the data hold no count"):
        PoissonNB(rate_prior="evidence", **FAST).fit(np.zeros((4, 2)), [0, 0, 1, 1])


@pytest.mark.parametrize(
    ("value", "error"), [("evidense", ValueError), ((1.0, -1.0), ValueError), (2.0, TypeError)]
)
def test_a_bad_rate_prior_is_refused_naming_it(value, error):
    X, y = poisson_data(3, n_classes=2, n_rows=4, n_features=2, shape=1.0)
    with pytest.raises(error, match=re.escape("rate_prior: expected None, 'evidence' or a pair")):
        PoissonNB(rate_prior=value, **FAST).fit(X, y)


def test_a_poisson_fit_with_the_chosen_prior_passes_compare():
    X, y = poisson_data(4, n_classes=3, n_rows=10, n_features=3, shape=2.0)
    est = PoissonNB(rate_prior="evidence", inference="conjugate", draws=500, chains=2)
    result = bayesgen.compare(est.set_params(random_seed=0).fit(X, y))
    assert result.ok, str(result)


def test_a_saved_poisson_fit_loads_with_the_prior_the_evidence_chose(tmp_path):
    X, y = poisson_data(5, n_classes=3, n_rows=6, n_features=3, shape=2.0)
    est = PoissonNB(rate_prior="evidence", **FAST).fit(X, y)
    loaded = bayesgen.load(est.save(tmp_path / "evidence.nc"))
    assert loaded.get_params()["rate_prior"] == "evidence"
    assert loaded.rate_prior_ == est.rate_prior_
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))
    frozen = est.model_.fitted_prior(est.closed_form_, est.get_params())
    assert frozen == {"rate_prior": est.rate_prior_}


def test_partial_fit_chooses_the_rate_prior_of_one_fit():
    X, y = poisson_data(6, n_classes=3, n_rows=10, n_features=4, shape=2.0)
    whole = PoissonNB(rate_prior="evidence", **FAST).fit(X, y)
    chunked = PoissonNB(rate_prior="evidence", **FAST)
    for part in np.array_split(np.arange(len(y)), 3):
        chunked.partial_fit(X[part], y[part], classes=np.arange(3))
    np.testing.assert_allclose(chunked.rate_prior_, whole.rate_prior_, rtol=1e-9)
