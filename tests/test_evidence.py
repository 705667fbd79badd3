"""The exact evidence log p(y, X | prior) (bayesgen.closed_form.log_evidence) and the naive
Bayes evidence as a function of λ (the families' feature_log_evidence).

The expected values are computed here independently of bayesgen's formulas: by numerical
integration of likelihood × prior density (scipy.integrate.quad / dblquad, in log space scaled
by the integrand's largest value), by exhaustive enumeration of every data set of a tiny size
(whose probabilities must sum to one), by PyMC's sequential Monte Carlo estimate of the log
marginal likelihood of a textbook model, and by the chain rule p(D) = p(D without i) ·
p(row i | D without i) with the exact leave-one-out predictive of refits.
"""

import itertools
import math
import time
import warnings

import numpy as np
import pytest
from scipy import integrate, optimize
from scipy.special import gammaln

from bayesgen import closed_form as cf
from bayesgen.families import family
from bayesgen.families.class_prior import class_log_evidence

RTOL = 1e-8  # the bar: log_evidence equals quadrature to 1e-8 relative
QUAD = {"epsabs": 0.0, "epsrel": 1e-11, "limit": 200}

X_BERNOULLI = np.array(
    [[1, 0, 1], [1, 1, 0], [0, 0, 0], [1, 0, 1], [0, 1, 1], [0, 1, 0], [1, 1, 1]]
)
Y_SMALL = np.array([0, 0, 0, 1, 1, 1, 1])
X_WORDS = np.array([[2, 0, 1], [1, 1, 0], [3, 0, 0], [0, 2, 1], [0, 1, 2], [1, 0, 2]])
Y_WORDS = np.array([0, 0, 0, 1, 1, 1])
X_CODES = np.array([[0, 2], [1, 0], [0, 1], [1, 2], [0, 0], [1, 1], [1, 0]])  # K_j = 2, 3
Y_CODES = np.array([0, 0, 0, 1, 1, 1, 1])
X_REAL = np.array([0.3, -0.4, 1.1, 2.0, 2.7, 1.6, 2.2])[:, None]
NIW_1D = {"mean": [0.5], "kappa": 0.7, "dof": 3.0, "scale": [[1.3]]}


def _prior(spec):
    return cf.NormalInverseWishart(
        mean=np.asarray(spec["mean"], dtype=float),
        kappa=spec["kappa"],
        dof=spec["dof"],
        scale=np.asarray(spec["scale"], dtype=float),
    )


# --------------------------------------------------------------------------------------------
# Quadrature helpers: ∫ exp(log f) with log f shifted by its value at an interior centre, so
# that neither the integrand nor the answer underflows.


def _log_quad(log_f, low, high, centre):
    shift = log_f(centre)
    value, _ = integrate.quad(
        lambda u: math.exp(log_f(u) - shift), low, high, points=[centre], **QUAD
    )
    return math.log(value) + shift


def _log_dirichlet_density(theta, concentration):
    return (
        math.lgamma(sum(concentration))
        - sum(math.lgamma(c) for c in concentration)
        + sum((c - 1.0) * math.log(t) for c, t in zip(concentration, theta, strict=True))
    )


def _log_beta_integral(ones, zeros, lam):
    """log ∫ φ^ones (1 − φ)^zeros Beta(φ | λ, λ) dφ."""

    def log_f(phi):
        return (
            _log_dirichlet_density((phi, 1.0 - phi), (lam, lam))
            + ones * math.log(phi)
            + zeros * math.log1p(-phi)
        )

    return _log_quad(log_f, 0.0, 1.0, (ones + 0.5) / (ones + zeros + 1.0))


def _log_simplex3_integral(counts, concentration):
    """log ∫ Π_w θ_w^counts_w Dirichlet(θ | concentration) over the 2-simplex, by dblquad."""

    def log_f(t1, t2):
        theta = (t1, t2, 1.0 - t1 - t2)
        return _log_dirichlet_density(theta, concentration) + sum(
            n * math.log(t) for n, t in zip(counts, theta, strict=True)
        )

    total = sum(counts) + sum(concentration)
    centre = [(n + c) / total for n, c in zip(counts, concentration, strict=True)]
    shift = log_f(centre[0], centre[1])
    value, _ = integrate.dblquad(
        lambda t2, t1: math.exp(log_f(t1, t2) - shift),
        0.0,
        1.0,
        0.0,
        lambda t1: 1.0 - t1,
        epsabs=0.0,
        epsrel=1e-11,
    )
    return math.log(value) + shift


def _log_class_term(y, n_classes, class_alpha):
    """The labels in order, π integrated out: K = 2 by quad, K = 3 by dblquad."""
    counts = np.bincount(y, minlength=n_classes)
    if n_classes == 2:
        a = class_alpha

        def log_f(p):
            return (
                _log_dirichlet_density((p, 1 - p), (a, a))
                + counts[0] * math.log(p)
                + counts[1] * math.log1p(-p)
            )

        return _log_quad(log_f, 0.0, 1.0, (counts[0] + a) / (counts.sum() + 2 * a))
    return _log_simplex3_integral(counts, (class_alpha,) * 3)


# --------------------------------------------------------------------------------------------
# (a) Against numerical integration on tiny data.


def test_class_term_equals_quadrature_over_the_simplex():
    y = np.array([0, 2, 2, 1, 2, 0, 2])
    est = cf.bernoulli_nb(np.zeros((7, 1)), y, class_alpha=1.6)
    expected = _log_class_term(y, 3, 1.6)
    assert class_log_evidence(est, 1.6) == pytest.approx(expected, rel=RTOL)


def test_bernoulli_evidence_equals_quadrature_of_each_beta_cell():
    lam, a = 0.6, 1.4
    est = cf.bernoulli_nb(X_BERNOULLI, Y_SMALL, alpha=lam, class_alpha=a)
    expected = _log_class_term(Y_SMALL, 2, a)
    for k in (0, 1):
        rows = X_BERNOULLI[Y_SMALL == k]
        for j in range(rows.shape[1]):
            ones = int(rows[:, j].sum())
            expected += _log_beta_integral(ones, len(rows) - ones, lam)
    assert cf.log_evidence(est) == pytest.approx(expected, rel=RTOL)


def test_multinomial_evidence_is_that_of_the_tokens_in_order_by_dblquad():
    lam, a = 1.7, 0.9
    est = cf.multinomial_nb(X_WORDS, Y_WORDS, alpha=lam, class_alpha=a)
    expected = _log_class_term(Y_WORDS, 2, a)
    for k in (0, 1):
        counts = X_WORDS[Y_WORDS == k].sum(axis=0)  # Π_i Π_w θ_w^x_iw: no coefficient
        expected += _log_simplex3_integral(tuple(counts), (lam,) * 3)
    assert cf.log_evidence(est) == pytest.approx(expected, rel=RTOL)


def test_categorical_evidence_integrates_each_feature_over_its_real_categories():
    lam, a = 1.3, 1.0
    est = cf.categorical_nb(X_CODES, Y_CODES, alpha=lam, class_alpha=a)
    assert est.sizes["category"] == 3  # the first feature is padded to three categories
    expected = _log_class_term(Y_CODES, 2, a)
    for k in (0, 1):
        rows = X_CODES[Y_CODES == k]
        ones = int((rows[:, 0] == 1).sum())
        expected += _log_beta_integral(ones, len(rows) - ones, lam)  # K_0 = 2: a Beta
        counts = tuple(int((rows[:, 1] == c).sum()) for c in range(3))
        expected += _log_simplex3_integral(counts, (lam,) * 3)
    assert cf.log_evidence(est) == pytest.approx(expected, rel=RTOL)


def _log_gaussian_evidence(groups, spec):
    """log p(x | y) for 1-D rows sharing one σ² (``groups`` the rows of each class), by
    quadrature: each μ_k ~ N(m₀, σ²/κ₀) integrated out by quad given σ², then σ² ~
    InverseGamma(ν₀/2, Ψ₀/2) (the 1-D inverse Wishart) by quad over log σ²."""
    m0, k0, nu0, psi0 = spec["mean"][0], spec["kappa"], spec["dof"], spec["scale"][0][0]
    log_2pi = math.log(2 * math.pi)

    def log_class(rows, var):
        rows = [float(v) for v in rows]

        def log_f(mu):
            prior = -0.5 * (log_2pi + math.log(var / k0) + (mu - m0) ** 2 * k0 / var)
            return (
                prior
                - 0.5 * len(rows) * (log_2pi + math.log(var))
                - 0.5 * sum((v - mu) ** 2 for v in rows) / var
            )

        centre = (k0 * m0 + sum(rows)) / (k0 + len(rows))
        width = 12.0 * math.sqrt(var / (k0 + len(rows)))
        return _log_quad(log_f, centre - width, centre + width, centre)

    def log_g(t):  # over t = log σ², with the Jacobian σ²
        var = math.exp(t)
        shape, scale = nu0 / 2, psi0 / 2
        prior = shape * math.log(scale) - math.lgamma(shape) - (shape + 1) * t - scale / var
        return prior + t + sum(log_class(rows, var) for rows in groups)

    mode = optimize.minimize_scalar(lambda t: -log_g(t), bounds=(-10, 10), method="bounded").x
    return _log_quad(log_g, mode - 15.0, mode + 15.0, mode)


def test_gda_evidence_equals_quadrature_over_the_means_and_shared_variance():
    est = cf.gda(X_REAL, Y_SMALL, prior=_prior(NIW_1D), class_alpha=1.5)
    groups = [X_REAL[Y_SMALL == k, 0] for k in (0, 1)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", integrate.IntegrationWarning)
        expected = _log_class_term(Y_SMALL, 2, 1.5) + _log_gaussian_evidence(groups, NIW_1D)
    assert cf.log_evidence(est) == pytest.approx(expected, rel=RTOL)


def test_qda_evidence_integrates_each_class_with_its_own_variance():
    est = cf.qda(X_REAL, Y_SMALL, prior=_prior(NIW_1D), class_alpha=1.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", integrate.IntegrationWarning)
        expected = _log_class_term(Y_SMALL, 2, 1.5) + sum(
            _log_gaussian_evidence([X_REAL[Y_SMALL == k, 0]], NIW_1D) for k in (0, 1)
        )
    assert cf.log_evidence(est) == pytest.approx(expected, rel=RTOL)


# --------------------------------------------------------------------------------------------
# Exhaustive enumeration: the evidence is a probability distribution over data sets.


def test_bernoulli_evidence_sums_to_the_label_probability_over_every_feature_table():
    y = np.array([0, 1, 1])
    label = class_log_evidence(cf.bernoulli_nb(np.zeros((3, 1)), y), 1.0)
    total = 0.0
    for cells in itertools.product((0, 1), repeat=6):
        est = cf.bernoulli_nb(np.reshape(cells, (3, 2)), y, alpha=0.7)
        total += math.exp(cf.log_evidence(est))
    assert total == pytest.approx(math.exp(label), rel=1e-12)


def test_multinomial_evidence_with_the_bag_coefficient_sums_to_the_label_probability():
    """Over every bag of words of fixed lengths (2 and 3 words of 3), log_evidence plus
    Σ_i log(L_i! / Π_w x_iw!) is a distribution: the evidence is that of the tokens in order."""
    y = np.array([0, 1])
    label = class_log_evidence(cf.multinomial_nb(np.ones((2, 3)), y), 1.0)

    def bags(length):
        return [b for b in itertools.product(range(length + 1), repeat=3) if sum(b) == length]

    total = 0.0
    for first, second in itertools.product(bags(2), bags(3)):
        X = np.array([first, second])
        coefficient = sum(gammaln(row.sum() + 1) - gammaln(row + 1).sum() for row in X)
        total += math.exp(cf.log_evidence(cf.multinomial_nb(X, y, alpha=0.8)) + coefficient)
    assert total == pytest.approx(math.exp(label), rel=1e-12)


# --------------------------------------------------------------------------------------------
# (b) Against PyMC's sequential Monte Carlo estimate of the log marginal likelihood.


@pytest.mark.slow  # 8 s with a warm compile cache, but 45 s or more with a cold one
def test_bernoulli_evidence_agrees_with_pymc_smc():
    """A textbook model written here, one Categorical label and one Bernoulli cell per row.

    SMC's estimate over 4 chains of 1,000 particles spreads with an SD of about 0.04 nats
    between chains (0.09 on other data), so their mean has a standard error of 0.02 to 0.045:
    0.1 nats is several of them, while λ = 0.8 → 1.6 moves the exact evidence by 1.3 nats and
    a multinomial coefficient for the labels (log 7!/(3! 4!)) would by 3.6.
    """
    pm = pytest.importorskip("pymc")
    lam, a = 0.8, 1.5
    exact = cf.log_evidence(cf.bernoulli_nb(X_BERNOULLI, Y_SMALL, alpha=lam, class_alpha=a))
    wrong = cf.log_evidence(cf.bernoulli_nb(X_BERNOULLI, Y_SMALL, alpha=2 * lam, class_alpha=a))
    assert abs(wrong - exact) > 1.0
    start = time.perf_counter()
    with pm.Model():
        class_prob = pm.Dirichlet("class_prob", a=np.full(2, a))
        pm.Categorical("y", p=class_prob, observed=Y_SMALL)
        feature_prob = pm.Beta("feature_prob", lam, lam, shape=(2, 3))
        pm.Bernoulli("x", p=feature_prob[Y_SMALL], observed=X_BERNOULLI)
        idata = pm.sample_smc(draws=1000, chains=4, random_seed=7, progressbar=False)
    # One value per stage and chain; the last stage's is the estimate of log p(y, X).
    stages = idata.sample_stats["log_marginal_likelihood"].values
    per_chain = np.array([_last_finite(chain) for chain in stages])
    assert abs(per_chain.mean() - exact) < 0.1, (per_chain, exact, time.perf_counter() - start)


def _last_finite(values) -> float:
    values = np.asarray(values, dtype=float).ravel()
    return float(values[np.isfinite(values)][-1])


# --------------------------------------------------------------------------------------------
# (c) The chain rule against the exact leave-one-out predictive.


def _refit(name, X, y, est):
    attrs = est.attrs
    if name in ("gda", "qda"):
        prior = cf.NormalInverseWishart(
            mean=est["prior_mean"].values,
            kappa=attrs["prior_kappa"],
            dof=attrs["prior_dof"],
            scale=est["prior_scale"].values,
        )
        return getattr(cf, name)(X, y, prior=prior, class_alpha=attrs["class_alpha"])
    options = {"alpha": attrs["alpha"], "class_alpha": attrs["class_alpha"]}
    if name == "categorical_nb":  # keep every feature's K_j when a row leaves
        options["n_categories"] = est["n_categories"].values
    return getattr(cf, name)(X, y, **options)


CHAIN_RULE_DATA = {
    "multinomial_nb": (X_WORDS, Y_WORDS),
    "bernoulli_nb": (X_BERNOULLI, Y_SMALL),
    "categorical_nb": (X_CODES, Y_CODES),
    "gda": (np.column_stack([X_REAL[:, 0], [1.0, 0.2, -0.3, 0.9, 1.4, 0.1, 2.0]]), Y_SMALL),
    "qda": (np.column_stack([X_REAL[:, 0], [1.0, 0.2, -0.3, 0.9, 1.4, 0.1, 2.0]]), Y_SMALL),
}


@pytest.mark.parametrize("name", list(CHAIN_RULE_DATA))
def test_evidence_ratio_is_the_exact_leave_one_out_joint(name):
    """log p(D) − log p(D without i) = log p(x_i, y_i | D without i), the loo_log_joint of
    the own class, less the multinomial coefficient that the latter includes (D = 2 for GDA
    and QDA: the shared Σ's update and the K κ factors enter)."""
    X, y = CHAIN_RULE_DATA[name]
    prior = {"mean": [0.5, 0.0], "kappa": 0.4, "dof": 4.0, "scale": [[1.2, 0.3], [0.3, 0.8]]}
    est = (
        cf.gda(X, y, prior=_prior(prior), class_alpha=1.2)
        if name == "gda"
        else cf.qda(X, y, prior=_prior(prior), class_alpha=1.2)
        if name == "qda"
        else getattr(cf, name)(X, y, alpha=0.9, class_alpha=1.2)
    )
    model = family(est)
    loo = model.loo_log_joint(est, model.prediction_features(est, X), y)
    for i in (0, 2, 5):
        keep = np.arange(len(y)) != i
        ratio = cf.log_evidence(est) - cf.log_evidence(_refit(name, X[keep], y[keep], est))
        if name == "multinomial_nb":
            ratio += gammaln(X[i].sum() + 1) - gammaln(X[i] + 1).sum()
        assert ratio == pytest.approx(loo[i, y[i]], rel=1e-10, abs=1e-10)


# --------------------------------------------------------------------------------------------
# (d) The λ grid, per-class λ and the derivative.

NB_FITS = {
    "multinomial_nb": lambda: cf.multinomial_nb(X_WORDS, Y_WORDS),
    "bernoulli_nb": lambda: cf.bernoulli_nb(X_BERNOULLI, Y_SMALL),
    "categorical_nb": lambda: cf.categorical_nb(X_CODES, Y_CODES),
}


@pytest.mark.parametrize("name", list(NB_FITS))
def test_lambda_grid_equals_scalar_calls_and_refits(name):
    est = NB_FITS[name]()
    model = family(est)
    grid = np.array([[0.05, 0.5], [1.0, 7.5]])
    values = model.feature_log_evidence(est, grid)
    assert values.shape == (2, 2)
    for lam, value in zip(grid.ravel(), values.ravel(), strict=True):
        assert value == model.feature_log_evidence(est, lam)
        refit = _refit(name, *_data_of(name), est.assign_attrs(alpha=float(lam)))
        label = class_log_evidence(refit, refit.attrs["class_alpha"])
        assert value == pytest.approx(cf.log_evidence(refit) - label, rel=1e-12)


def _data_of(name):
    return {
        "multinomial_nb": (X_WORDS, Y_WORDS),
        "bernoulli_nb": (X_BERNOULLI, Y_SMALL),
        "categorical_nb": (X_CODES, Y_CODES),
    }[name]


@pytest.mark.parametrize("name", list(NB_FITS))
def test_per_class_terms_sum_to_the_total_and_take_each_class_its_own_lambda(name):
    est = NB_FITS[name]()
    model = family(est)
    grid = np.array([0.3, 2.0, 4.0])
    terms = model.feature_log_evidence(est, grid[:, None], per_class=True)
    assert terms.shape == (3, 2)
    np.testing.assert_allclose(terms.sum(axis=1), model.feature_log_evidence(est, grid), rtol=1e-13)
    mixed = model.feature_log_evidence(est, np.array([[0.3, 4.0]]), per_class=True)
    np.testing.assert_array_equal(mixed[0], [terms[0, 0], terms[2, 1]])


@pytest.mark.parametrize("name", list(NB_FITS))
def test_derivative_matches_a_central_difference(name):
    est = NB_FITS[name]()
    evidence = family(est).feature_evidence(est)
    lam, step = np.array([0.2, 1.3]), 1e-6
    numeric = (evidence(lam + step) - evidence(lam - step)) / (2 * step)
    np.testing.assert_allclose(evidence.derivative(lam), numeric, rtol=1e-6)


def test_class_log_evidence_takes_a_grid_of_class_alpha():
    est = cf.bernoulli_nb(X_BERNOULLI, Y_SMALL)
    grid = np.array([0.5, 1.0, 3.0])
    np.testing.assert_array_equal(
        class_log_evidence(est, grid), [class_log_evidence(est, a) for a in grid]
    )


# --------------------------------------------------------------------------------------------
# Refusals: an improper prior has no evidence.


def test_lambda_zero_is_refused_with_the_argument_named():
    est = cf.multinomial_nb(X_WORDS, Y_WORDS, alpha=0.0)
    with pytest.raises(ValueError, match=r"alpha: expected values > 0 .*got \[0.0\]"):
        cf.log_evidence(est)


def test_class_alpha_zero_is_refused_with_the_argument_named():
    est = cf.bernoulli_nb(X_BERNOULLI, Y_SMALL, class_alpha=0.0)
    with pytest.raises(ValueError, match=r"class_alpha: expected values > 0"):
        cf.log_evidence(est)


def test_per_class_lambda_of_the_wrong_width_is_refused():
    est = cf.multinomial_nb(X_WORDS, Y_WORDS)
    with pytest.raises(
        ValueError, match=r"per_class=True expected a shape .*\(2,\).*got shape \(3,\)"
    ):
        family(est).feature_log_evidence(est, np.ones(3), per_class=True)


@pytest.mark.parametrize("name", ["gda", "qda"])
def test_gaussian_models_without_a_prior_have_no_evidence(name):
    est = getattr(cf, name)(CHAIN_RULE_DATA[name][0], Y_SMALL, prior=None)
    with pytest.raises(ValueError, match=r"log_evidence: needs the normal-inverse-Wishart prior"):
        cf.log_evidence(est)
