"""alpha="evidence": λ (and a) chosen by maximising the evidence (bayesgen.inference.smoothing).

The evidence here is computed independently of bayesgen, from the raw rows: every naive Bayes
model is a set of Dirichlet(λ) simplices with counts c_o (T in all, O outcomes), and the
labelled rows have log p = Σ lnΓ(O λ) − lnΓ(T + O λ) + Σ_o [lnΓ(c_o + λ) − lnΓ(λ)].
"""

import re

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import brentq
from scipy.special import digamma, gammaln
from sklearn.base import clone

import bayesgen
from bayesgen import BernoulliNB, CategoricalNB, GaussianDiscriminantAnalysis, MultinomialNB
from bayesgen.cli import main
from bayesgen.inference.smoothing import EvidenceBoundaryWarning, evidence_alpha

FAST = {"inference": "conjugate", "compute_map": False, "draws": 20, "prior_draws": 0}

#: What the naive Bayes alpha accepts, as a parameter and on the command line.
ALPHA = (
    "a finite number > 0 or 'evidence' or 'evidence_per_class' or a mapping "
    "{class label: λ > 0} (a dict or a pandas Series indexed by the classes)"
)
CLI_ALPHA = (
    "a finite number > 0, 'evidence', 'evidence_per_class' or one λ > 0 per class label "
    "(e.g. spam=0.5,ham=2)"
)


# -- data drawn from each model with a known λ, and its simplices counted by hand -----------


def _multinomial_data(rng):
    labels = rng.integers(0, 3, size=60)
    theta = rng.dirichlet(np.full(30, 0.5), size=3)
    X = np.stack([rng.multinomial(40, theta[k]) for k in labels])
    simplices = [X[labels == k].sum(axis=0) for k in range(3)]
    return X, labels, simplices


def _bernoulli_data(rng):
    labels = rng.integers(0, 2, size=200)
    phi = rng.beta(2.0, 2.0, size=(2, 20))
    X = (rng.random((200, 20)) < phi[labels]).astype(int)
    simplices = []
    for k in range(2):
        present = X[labels == k].sum(axis=0)
        simplices += [np.array([p, (labels == k).sum() - p]) for p in present]
    return X, labels, simplices


def _categorical_data(rng):
    labels = rng.integers(0, 2, size=200)
    n_categories = np.array([2, 3, 4, 4, 5, 3])
    theta = [[rng.dirichlet(np.full(n, 2.0)) for n in n_categories] for _ in range(2)]
    X = np.stack(
        [[rng.choice(n, p=theta[k][j]) for j, n in enumerate(n_categories)] for k in labels]
    )
    # Every category occurs, so that the default K_n = max code + 1 is n_categories.
    X[: n_categories.max()] = np.minimum(np.arange(n_categories.max())[:, None], n_categories - 1)
    simplices = [
        np.bincount(X[labels == k, j], minlength=n)
        for k in range(2)
        for j, n in enumerate(n_categories)
    ]
    return X, labels, simplices


DATA = {
    MultinomialNB: _multinomial_data,
    BernoulliNB: _bernoulli_data,
    CategoricalNB: _categorical_data,
}


def _log_evidence(simplices, lam):
    """Σ over simplices of the Dirichlet–multinomial log evidence, at each λ of ``lam``."""
    lam = np.asarray(lam, dtype=float)[:, None]
    total = np.zeros(lam.shape[0])
    for counts in simplices:
        counts = np.asarray(counts, dtype=float)
        n, t = counts.size, counts.sum()
        total += (gammaln(n * lam) - gammaln(t + n * lam)).ravel()
        total += (gammaln(counts + lam) - gammaln(lam)).sum(axis=1)
    return total


def _log_evidence_slope(simplices, lam):
    """d/dλ of :func:`_log_evidence` at one λ."""
    slope = 0.0
    for counts in simplices:
        counts = np.asarray(counts, dtype=float)
        n, t = counts.size, counts.sum()
        slope += n * (digamma(n * lam) - digamma(t + n * lam))
        slope += (digamma(counts + lam) - digamma(lam)).sum()
    return slope


@pytest.fixture(params=list(DATA), ids=lambda cls: cls.__name__)
def fitted(request):
    cls = request.param
    X, y, simplices = DATA[cls](np.random.default_rng(1))
    est = cls(alpha="evidence", random_seed=0, **FAST).fit(X, y)
    return est, X, y, simplices


# -- alpha="evidence" ------------------------------------------------------------------------


def test_alpha_is_the_argmax_of_the_evidence_on_a_fine_grid(fitted):
    est, _, _, simplices = fitted
    grid = np.logspace(-3, 3, 2000)
    best = grid[np.argmax(_log_evidence(simplices, grid))]
    assert 1e-3 < best < 1e3  # an interior optimum, which the data were drawn to have
    assert est.alpha_ == pytest.approx(best, rel=0.01)


def test_alpha_is_the_root_of_the_evidence_slope_to_1e_6(fitted):
    est, _, _, simplices = fitted
    root = brentq(lambda lam: _log_evidence_slope(simplices, lam), 1e-3, 1e3, xtol=1e-14)
    assert est.alpha_ == pytest.approx(root, rel=1e-6)


def test_posterior_is_fitted_at_the_chosen_alpha(fitted):
    est, _, _, _ = fitted
    assert isinstance(est.alpha_, float)
    assert est.closed_form_.attrs["alpha"] == est.alpha_
    assert est.get_params()["alpha"] == "evidence"
    assert bayesgen.compare(est).ok


def test_multinomial_feature_prob_is_add_lambda_at_alpha_():
    X, y, simplices = _multinomial_data(np.random.default_rng(1))
    est = MultinomialNB(alpha="evidence", random_seed=0, **FAST).fit(X, y)
    counts = np.stack(simplices).astype(float)
    lam = est.alpha_
    add_lambda = (counts + lam) / (counts.sum(axis=1, keepdims=True) + counts.shape[1] * lam)
    np.testing.assert_allclose(est.closed_form_["feature_prob"].values, add_lambda, rtol=1e-12)


def test_evidence_alpha_of_the_closed_form_is_the_estimator_alpha_():
    X, y, _ = _bernoulli_data(np.random.default_rng(1))
    est = BernoulliNB(alpha="evidence", random_seed=0, **FAST).fit(X, y)
    assert evidence_alpha(bayesgen.closed_form.bernoulli_nb(X, y, alpha=5.0)) == est.alpha_


def test_a_numeric_alpha_is_also_alpha_():
    X, y, _ = _multinomial_data(np.random.default_rng(1))
    est = MultinomialNB(alpha=0.3, class_alpha=2.0, random_seed=0, **FAST).fit(X, y)
    assert (est.alpha_, est.class_alpha_) == (0.3, 2.0)


# -- class_alpha="evidence" ------------------------------------------------------------------


def test_class_alpha_is_the_argmax_of_the_label_evidence():
    X, _, _ = _multinomial_data(np.random.default_rng(1))
    y = np.repeat([0, 1, 2], [40, 15, 5])  # uneven classes: a finite a explains them best
    est = MultinomialNB(alpha=1.0, class_alpha="evidence", random_seed=0, **FAST).fit(X, y)
    grid = np.logspace(-3, 3, 2000)
    best = grid[np.argmax(_log_evidence([np.bincount(y)], grid))]
    assert 1e-3 < best < 1e3
    assert est.class_alpha_ == pytest.approx(best, rel=0.01)
    assert est.closed_form_.attrs["class_alpha"] == est.class_alpha_
    assert est.alpha_ == 1.0


# -- the bounds of the search ------------------------------------------------------------------


def test_features_constant_within_each_class_put_alpha_at_the_lower_bound():
    X = np.array([[1, 0, 1], [1, 0, 1], [0, 1, 1], [0, 1, 1]])
    message = (
        "alpha='evidence': the evidence still increases as alpha → 0; alpha_ is the search's "
        "bound 1e-06 (it searches [1e-06, 1e+06])"
    )
    with pytest.warns(EvidenceBoundaryWarning, match=re.escape(message)):
        est = BernoulliNB(alpha="evidence", random_seed=0, **FAST).fit(X, [0, 0, 1, 1])
    assert est.alpha_ == 1e-6
    assert est.closed_form_.attrs["alpha"] == 1e-6


def test_uniform_word_counts_put_alpha_at_the_upper_bound():
    X = np.ones((4, 5), dtype=int)  # every word once in every document
    message = "alpha='evidence': the evidence still increases as alpha → ∞; alpha_ is the search's"
    with pytest.warns(EvidenceBoundaryWarning, match=re.escape(message)):
        est = MultinomialNB(alpha="evidence", random_seed=0, **FAST).fit(X, [0, 0, 1, 1])
    assert est.alpha_ == 1e6


def test_balanced_classes_put_class_alpha_at_the_upper_bound():
    X, _, _ = _multinomial_data(np.random.default_rng(1))
    with pytest.warns(EvidenceBoundaryWarning, match=r"^class_alpha='evidence': .* → ∞"):
        est = MultinomialNB(class_alpha="evidence", random_seed=0, **FAST).fit(
            X, np.repeat([0, 1, 2], 20)
        )
    assert est.class_alpha_ == 1e6


# -- parameters --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cls", "params", "error", "message"),
    [
        (
            MultinomialNB,
            {"alpha": "evidnce"},
            ValueError,
            f"alpha: expected {ALPHA}; got 'evidnce'.",
        ),
        (
            CategoricalNB,
            {"class_alpha": "Evidence"},
            ValueError,
            "class_alpha: expected a finite number > 0 or 'evidence'; got 'Evidence'.",
        ),
        (
            BernoulliNB,
            {"alpha": None},
            TypeError,
            f"alpha: expected {ALPHA}; got None.",
        ),
        (  # GDA has no naive Bayes evidence search
            GaussianDiscriminantAnalysis,
            {"class_alpha": "evidence"},
            TypeError,
            "class_alpha: expected a finite number > 0; got 'evidence'.",
        ),
    ],
)
def test_bad_smoothing_is_refused_with_its_exact_message(cls, params, error, message):
    X, y, _ = _bernoulli_data(np.random.default_rng(1))
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        cls(**params, **FAST).fit(X, y)


def test_clone_and_get_params_keep_evidence():
    est = MultinomialNB(alpha="evidence", class_alpha="evidence")
    copy = clone(est)
    assert copy.get_params()["alpha"] == "evidence"
    assert copy.get_params()["class_alpha"] == "evidence"
    assert copy.set_params(alpha=0.5).alpha == 0.5


def test_save_and_load_keep_evidence_and_alpha_(tmp_path):
    X, y, _ = _categorical_data(np.random.default_rng(1))
    est = CategoricalNB(alpha="evidence", random_seed=0, **FAST).fit(X, y)
    est.save(tmp_path / "model.nc")
    loaded = bayesgen.load(tmp_path / "model.nc")
    assert loaded.get_params()["alpha"] == "evidence"
    assert loaded.alpha_ == est.alpha_
    assert loaded.class_alpha_ == 1.0
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))


def test_cli_fit_accepts_alpha_evidence(tmp_path):
    X, y, _ = _multinomial_data(np.random.default_rng(1))
    table = pd.DataFrame(X, columns=[f"w{j}" for j in range(X.shape[1])]).assign(label=y)
    table.to_csv(tmp_path / "counts.csv", index=False)
    output = tmp_path / "model.nc"
    argv = ["fit", "multinomial", str(tmp_path / "counts.csv"), "--target", "label"]
    options = ["--inference", "conjugate", "--draws", "20", "--no-map", "--quiet"]
    assert main([*argv, *options, "--alpha", "evidence", "--output", str(output)]) == 0
    loaded = bayesgen.load(output)
    assert loaded.alpha == "evidence"
    assert loaded.alpha_ == pytest.approx(evidence_alpha(loaded.closed_form_), rel=1e-12)


def test_cli_refuses_another_word_for_alpha(tmp_path, capsys):
    argv = ["fit", "multinomial", str(tmp_path / "counts.csv"), "--target", "label"]
    assert main([*argv, "--alpha", "auto"]) == 2
    assert f"--alpha: expected {CLI_ALPHA}; got 'auto'" in (capsys.readouterr().err)


# -- the per-class Bayes factor against scipy's quad, with the pooled prior mean -------------

#: smoothing.per_class_log_bayes_factor's stated agreement with quad on small data, in nats.
BAYES_FACTOR_ATOL = 2e-9
LOG_BOUNDS = (np.log(1e-6), np.log(1e6))  # smoothing.BOUNDS in log λ

# Two classes, three features (multinomial: words; Bernoulli: presence; categorical: codes of
# K_j = 3 categories). The pooled prior mean fits both classes, so their evidences flatten
# towards λ → ∞ instead of falling away: the case of the 1e-5 nats errors.
Y_POOLED = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1])
X_POOLED = np.array(
    [
        [3, 1, 0],
        [2, 2, 1],
        [4, 0, 1],
        [3, 1, 1],
        [1, 2, 2],
        [2, 1, 3],
        [0, 3, 1],
        [1, 1, 2],
        [2, 0, 2],
    ]
)
POOLED_DATA = {
    "multinomial": (bayesgen.closed_form.multinomial_nb, X_POOLED),
    "bernoulli": (bayesgen.closed_form.bernoulli_nb, (X_POOLED > 1).astype(int)),
    "categorical": (bayesgen.closed_form.categorical_nb, np.minimum(X_POOLED, 2)),
}


def _pooled_simplices(name, X, k):
    """Class k's (counts, prior weights w) pairs under Dirichlet(λ w), w = O × the add-½
    frequencies pooled over the classes."""
    rows = X[Y_POOLED == k]
    if name == "multinomial":
        pooled = X.sum(axis=0) + 0.5
        return [(rows.sum(axis=0), X.shape[1] * pooled / pooled.sum())]
    if name == "bernoulli":
        share = (X.sum(axis=0) + 0.5) / (len(X) + 1.0)
        present = rows.sum(axis=0)
        return [
            (np.array([p, len(rows) - p]), np.array([2 * s, 2 * (1 - s)]))
            for p, s in zip(present, share, strict=True)
        ]
    out = []
    for j in range(X.shape[1]):
        pooled = np.bincount(X[:, j], minlength=3) + 0.5
        out.append((np.bincount(rows[:, j], minlength=3), 3 * pooled / pooled.sum()))
    return out


def _weighted_log_evidence(simplices, lam):
    """Σ over (counts, w) of lnΓ(λ W) − lnΓ(T + λ W) + Σ_o [lnΓ(c_o + λ w_o) − lnΓ(λ w_o)]."""
    total = 0.0
    for counts, weight in simplices:
        a = lam * np.asarray(weight, dtype=float)
        total += gammaln(a.sum()) - gammaln(counts.sum() + a.sum())
        total += np.sum(gammaln(counts + a) - gammaln(a))
    return total


def _log_integral_by_quad(log_f):
    """log ∫ f(λ) p(log λ) d log λ, p uniform over LOG_BOUNDS, by quad split at the peak."""
    from scipy import integrate

    low, high = LOG_BOUNDS
    grid = np.linspace(low, high, 2001)
    values = np.array([log_f(np.exp(u)) for u in grid])
    centre, shift = grid[np.argmax(values)], values.max()
    value, _ = integrate.quad(
        lambda u: np.exp(log_f(np.exp(u)) - shift),
        low,
        high,
        points=[centre],
        epsabs=0.0,
        epsrel=1e-12,
        limit=1000,
    )
    return np.log(value) + shift - np.log(high - low)


@pytest.mark.parametrize("name", list(POOLED_DATA))
def test_per_class_log_bayes_factor_with_the_pooled_mean_equals_quad(name, monkeypatch):
    fit, X = POOLED_DATA[name]
    est = fit(X, Y_POOLED, prior_mean="pooled")
    classes = [_pooled_simplices(name, X, k) for k in (0, 1)]
    separate = sum(
        _log_integral_by_quad(lambda lam, s=s: _weighted_log_evidence(s, lam)) for s in classes
    )
    together = _log_integral_by_quad(
        lambda lam: sum(_weighted_log_evidence(s, lam) for s in classes)
    )
    # The integrals that do not fall away within the local grid go to the adaptive rule.
    adaptive = []
    rule = bayesgen.inference.smoothing._log_integrals_adaptive
    monkeypatch.setattr(
        bayesgen.inference.smoothing,
        "_log_integrals_adaptive",
        lambda *args: adaptive.append(args[2]) or rule(*args),
    )
    value = bayesgen.inference.smoothing.per_class_log_bayes_factor(est)
    assert adaptive, "the flat tails should have been integrated by the adaptive rule"
    assert value == pytest.approx(separate - together, abs=BAYES_FACTOR_ATOL, rel=0)


def test_per_class_log_bayes_factor_of_classes_at_the_upper_bound_equals_quad():
    # Both classes draw words alike and like the pooled mean: every evidence peaks at λ = 1e6,
    # the bound, where the local trapezoid grid used to end on a non-zero integrand.
    X = np.array([[2, 2, 2], [3, 2, 1], [2, 3, 2], [2, 2, 3], [3, 2, 2], [2, 2, 2]])
    y = np.array([0, 0, 0, 1, 1, 1])
    est = bayesgen.closed_form.multinomial_nb(X, y, prior_mean="pooled")
    pooled = X.sum(axis=0) + 0.5
    weight = 3 * pooled / pooled.sum()
    classes = [[(X[y == k].sum(axis=0), weight)] for k in (0, 1)]
    separate = sum(
        _log_integral_by_quad(lambda lam, s=s: _weighted_log_evidence(s, lam)) for s in classes
    )
    together = _log_integral_by_quad(
        lambda lam: sum(_weighted_log_evidence(s, lam) for s in classes)
    )
    value = bayesgen.inference.smoothing.per_class_log_bayes_factor(est)
    assert value == pytest.approx(separate - together, abs=BAYES_FACTOR_ATOL, rel=0)


@pytest.mark.parametrize("prior_mean", ["uniform", "pooled"])
def test_per_class_log_bayes_factor_of_many_bernoulli_features_equals_quad(prior_mean):
    # 150 rows × 30 features: peaks sharp enough, and tails long enough, for the former
    # trapezoid grids to err by 4e-6 (uniform) and 7e-8 nats (pooled).
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1], 75)
    X = (rng.random((150, 30)) < rng.beta(0.5, 0.5, 30)).astype(int)
    est = bayesgen.closed_form.bernoulli_nb(X, y, prior_mean=prior_mean)
    share = (X.sum(axis=0) + 0.5) / (len(X) + 1.0) if prior_mean == "pooled" else np.full(30, 0.5)
    classes = [
        [
            (np.array([p, 75 - p]), np.array([2 * s, 2 * (1 - s)]))
            for p, s in zip(X[y == k].sum(axis=0), share, strict=True)
        ]
        for k in (0, 1)
    ]
    separate = sum(
        _log_integral_by_quad(lambda lam, s=s: _weighted_log_evidence(s, lam)) for s in classes
    )
    together = _log_integral_by_quad(
        lambda lam: sum(_weighted_log_evidence(s, lam) for s in classes)
    )
    value = bayesgen.inference.smoothing.per_class_log_bayes_factor(est)
    assert value == pytest.approx(separate - together, abs=BAYES_FACTOR_ATOL, rel=0)
