"""Exact leave-one-out (bayesgen.loo_proba) and model comparison (bayesgen.compare_models).

The expected values come from refits without the row: bayesgen's closed form refitted to the
other rows and its exact posterior predictive, and the textbook conjugate updates written out
here with SciPy's densities (Dirichlet-multinomial, multivariate Student-t), never from the
leave-one-out code under test.
"""

import warnings

import arviz as az
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from conftest import GDA_PRIOR, bernoulli_data, categorical_data, gaussian_data, multinomial_data
from scipy import stats
from scipy.special import logsumexp
from sklearn.exceptions import NotFittedError

import bayesgen
from bayesgen import closed_form as cf
from bayesgen.checks.loo import LeaveOneOut, leave_one_out, loo_proba
from bayesgen.families import family

CONJUGATE = {"inference": "conjugate", "compute_map": False, "random_seed": 0, "prior_draws": 0}
MODELS = ("multinomial", "bernoulli", "categorical", "gda", "qda")
DATA = {
    "multinomial": multinomial_data,
    "bernoulli": bernoulli_data,
    "categorical": categorical_data,
    "gda": gaussian_data,
    "qda": gaussian_data,
}


def _prior():
    return bayesgen.NormalInverseWishart(
        mean=np.asarray(GDA_PRIOR["mean"]),
        kappa=GDA_PRIOR["kappa"],
        dof=GDA_PRIOR["dof"],
        scale=np.asarray(GDA_PRIOR["scale"]),
    )


def _estimator(name, **params):
    params = {**CONJUGATE, "draws": 50, "chains": 1, **params}
    if name in ("gda", "qda"):
        params.setdefault("prior", _prior())
    return {
        "multinomial": bayesgen.MultinomialNB,
        "bernoulli": bayesgen.BernoulliNB,
        "categorical": bayesgen.CategoricalNB,
        "gda": bayesgen.GaussianDiscriminantAnalysis,
        "qda": bayesgen.QuadraticDiscriminantAnalysis,
    }[name](**params)


def _fit(name, **params):
    X, y = DATA[name]()
    return _estimator(name, **params).fit(X, y), X, y


# --------------------------------------------------------------------------------------------
# The textbook leave-one-out joint: refit by hand on the other rows.


def _refit_log_joint(name, X, codes, i, *, n_classes, alpha=1.0, class_alpha=1.0):
    """log p(x_i, y = k | D without row i), each class k, from the conjugate updates."""
    X = np.asarray(X, dtype=float)
    keep = np.arange(len(codes)) != i
    others, other_codes, x = X[keep], codes[keep], X[i]
    count = np.bincount(other_codes, minlength=n_classes).astype(float)
    log_class = np.log((count + class_alpha) / (count.sum() + n_classes * class_alpha))
    joint = np.empty(n_classes)
    for k in range(n_classes):
        rows = others[other_codes == k]
        if name == "multinomial":
            concentration = rows.sum(axis=0) + alpha
            feature = stats.dirichlet_multinomial.logpmf(x, concentration, x.sum())
        elif name == "bernoulli":
            prob = (rows.sum(axis=0) + alpha) / (len(rows) + 2 * alpha)
            feature = stats.bernoulli.logpmf(x, prob).sum()
        elif name == "categorical":
            widths = X.max(axis=0) + 1  # the categories of the whole fit
            feature = sum(
                np.log((np.sum(rows[:, j] == x[j]) + alpha) / (len(rows) + widths[j] * alpha))
                for j in range(X.shape[1])
            )
        else:
            feature = _student_t(name, x, others, other_codes, k, n_classes)
        joint[k] = log_class[k] + feature
    return joint


def _student_t(name, x, others, other_codes, k, n_classes):
    """The normal-inverse-Wishart predictive of x for class k (Murphy 2007, eq. 232)."""
    m0, kappa0 = np.asarray(GDA_PRIOR["mean"]), GDA_PRIOR["kappa"]
    dof0, scale0 = GDA_PRIOR["dof"], np.asarray(GDA_PRIOR["scale"])
    n_features = len(x)

    def update(rows):
        n = len(rows)
        mean = rows.mean(axis=0)
        scatter = (rows - mean).T @ (rows - mean)
        kappa = kappa0 + n
        offset = mean - m0
        psi = scatter + kappa0 * n / kappa * np.outer(offset, offset)
        return (kappa0 * m0 + n * mean) / kappa, kappa, n, psi

    if name == "qda":  # Σ_k of class k's rows alone
        m, kappa, n, psi = update(others[other_codes == k])
        dof, psi = dof0 + n, scale0 + psi
    else:  # one Σ: every class's scatter and shrinkage enter Ψ, every row ν
        parts = [update(others[other_codes == c]) for c in range(n_classes)]
        m, kappa = parts[k][0], parts[k][1]
        dof, psi = dof0 + len(others), scale0 + sum(part[3] for part in parts)
    df = dof - n_features + 1
    shape = psi * (kappa + 1) / (kappa * df)
    return stats.multivariate_t.logpdf(x, loc=m, shape=shape, df=df)


def _refit_proba_nb(name, X, y, i, est):
    """p(y | x_i) of bayesgen's closed form refitted to the other rows (exact predictive)."""
    keep = np.arange(len(y)) != i
    rows = X.iloc[keep] if isinstance(X, pd.DataFrame) else X[keep]
    row = X.iloc[[i]] if isinstance(X, pd.DataFrame) else X[[i]]
    options = {"n_categories": est.n_categories_} if name == "categorical" else {}
    refit = getattr(cf, f"{name}_nb")(np.asarray(rows), np.asarray(y)[keep], **options)
    return cf.posterior_predictive_proba(refit, np.asarray(row))[0]


# --------------------------------------------------------------------------------------------
# Exact leave-one-out against refits.


@pytest.mark.parametrize("name", MODELS)
def test_loo_log_joint_equals_the_textbook_refit_without_each_row(name):
    est, X, _ = _fit(name)
    rows, codes = est.training_rows()
    joint = family(est.closed_form_).loo_log_joint(
        est.closed_form_, rows, codes, options=est.get_params()
    )
    expected = np.array(
        [
            _refit_log_joint(name, X, codes, i, n_classes=len(est.classes_))
            for i in range(len(codes))
        ]
    )
    np.testing.assert_allclose(joint, expected, rtol=1e-12, atol=1e-10)


@pytest.mark.parametrize("name", MODELS)
def test_loo_proba_equals_the_posterior_predictive_of_refits(name):
    est, X, y = _fit(name)
    codes = np.searchsorted(est.classes_, y)
    if name in ("gda", "qda"):
        expected = []
        for i in range(len(y)):
            joint = _refit_log_joint(name, X, codes, i, n_classes=len(est.classes_))
            expected.append(np.exp(joint - logsumexp(joint)))
    else:
        expected = [_refit_proba_nb(name, X, y, i, est) for i in range(len(y))]
    proba = loo_proba(est)
    assert proba.shape == (len(y), len(est.classes_))
    np.testing.assert_allclose(proba, np.array(expected), rtol=0, atol=1e-10)


def test_qda_with_three_classes_takes_the_row_out_of_its_own_class_only():
    rng = np.random.default_rng(5)
    codes = np.arange(30) % 3
    X = rng.normal(size=(30, 3)) + np.array([[0, 0, 0], [2, 0, 1], [0, 2, -1]])[codes]
    est = _estimator("qda").fit(X, codes)
    expected = [_refit_log_joint("qda", X, codes, i, n_classes=3) for i in range(30)]
    rows, y_codes = est.training_rows()
    joint = family("qda").loo_log_joint(est.closed_form_, rows, y_codes)
    np.testing.assert_allclose(joint, expected, rtol=1e-12, atol=1e-10)


def test_gda_with_three_classes_downdates_the_shared_covariance_for_every_class():
    rng = np.random.default_rng(6)
    codes = np.arange(30) % 3
    X = rng.normal(size=(30, 3)) + np.array([[0, 0, 0], [2, 0, 1], [0, 2, -1]])[codes]
    est = _estimator("gda").fit(X, codes)
    expected = [_refit_log_joint("gda", X, codes, i, n_classes=3) for i in range(30)]
    rows, y_codes = est.training_rows()
    joint = family("gda").loo_log_joint(est.closed_form_, rows, y_codes)
    np.testing.assert_allclose(joint, expected, rtol=1e-12, atol=1e-10)


def test_sparse_rows_take_the_non_zero_path_and_equal_the_refits():
    """Sparse X (with a stored zero, which is no word) gives the dense answer and the refit's."""
    X, y = multinomial_data()
    dense = np.asarray(X, dtype=float)
    codes = np.searchsorted(np.unique(y), y)
    for name, values in (("multinomial", dense), ("bernoulli", (dense > 1).astype(float))):
        matrix = sp.csr_array(values)
        matrix.data[0] = 0.0  # an explicitly stored zero
        values = matrix.toarray()
        est = _estimator(name).fit(matrix, y)
        rows, y_codes = est.training_rows()
        assert sp.issparse(rows)
        expected = [_refit_log_joint(name, values, codes, i, n_classes=3) for i in range(len(y))]
        joint = family(est.closed_form_).loo_log_joint(est.closed_form_, rows, y_codes)
        np.testing.assert_allclose(joint, expected, rtol=1e-12, atol=1e-10)
        with_stored_zero = family(est.closed_form_).loo_log_joint(est.closed_form_, matrix, y_codes)
        np.testing.assert_allclose(with_stored_zero, joint, rtol=1e-12, atol=1e-10)


def test_loo_proba_is_the_same_for_nuts_and_conjugate_draws_of_one_model():
    """The exact method reads the statistics, not the draws: a posterior of other draws (here
    another seed, as NUTS would give) has the same leave-one-out probabilities."""
    first, _, _ = _fit("gda", random_seed=1)
    second, _, _ = _fit("gda", random_seed=2)
    np.testing.assert_array_equal(loo_proba(first), loo_proba(second))


def test_own_column_agrees_with_psis_loo_of_the_joint_where_pareto_k_is_good():
    """The exact log p(x_i, y_i | D_{-i}) is the pointwise elpd that az.loo estimates from the
    fit's log_likelihood group (full normalisation on both sides)."""
    est, _, _ = _fit("gda", draws=4000, chains=2)
    rows, codes = est.training_rows()
    joint = family("gda").loo_log_joint(est.closed_form_, rows, codes)
    exact = joint[np.arange(len(codes)), codes]
    loo = az.loo(est.idata_, pointwise=True)
    good = loo.pareto_k.values < 0.7
    assert good.sum() >= 0.9 * len(codes)
    np.testing.assert_allclose(loo.elpd_i.values[good], exact[good], atol=0.05)


def test_psis_estimate_agrees_with_the_exact_one_where_pareto_k_is_good():
    est, _, _ = _fit("multinomial", draws=2000, chains=2)
    exact = leave_one_out(est, method="exact")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a row or two may have a high k
        psis = leave_one_out(est, method="psis")
    assert exact.method == "exact" and psis.method == "psis"
    assert np.all(np.isnan(exact.pareto_k)) and np.all(np.isfinite(psis.pareto_k))
    good = psis.pareto_k < 0.7
    assert good.sum() >= 0.9 * len(good)
    np.testing.assert_allclose(psis.proba[good], exact.proba[good], atol=0.02)


def test_lkj_gda_has_no_closed_form_and_falls_back_to_psis():
    est, _, _ = _fit("gda", draws=1000, chains=2)
    with pytest.raises(NotImplementedError, match="cov_prior='lkj'"):
        family("gda").loo_log_joint(
            est.closed_form_, *est.training_rows(), options={"cov_prior": "lkj"}
        )
    # The same posterior held by an LKJ-prior estimator: no closed form is claimed for it.
    lkj = bayesgen.GaussianDiscriminantAnalysis(cov_prior="lkj", prior=_prior())
    lkj.set_posterior(est.closed_form_, est.idata_)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        result = leave_one_out(lkj)
    assert result.method == "psis"
    with pytest.raises(ValueError, match="'exact' needs a closed-form posterior"):
        leave_one_out(lkj, method="exact")


def test_loo_refuses_an_unknown_method_alpha_zero_and_an_unfitted_model():
    est, _, _ = _fit("multinomial")
    with pytest.raises(
        ValueError, match=r"method: expected one of \['auto', 'exact', 'plug-in', 'psis'\]"
    ):
        loo_proba(est, method="kfold")
    X, y = bernoulli_data()
    unsmoothed = cf.bernoulli_nb(X, y, alpha=0.0)  # the estimators refuse alpha = 0 already
    with pytest.raises(ValueError, match="needs alpha > 0"):
        family(unsmoothed).loo_log_joint(unsmoothed, X, np.searchsorted([0, 1], y))
    with pytest.raises(NotFittedError, match="not fitted"):
        loo_proba(bayesgen.MultinomialNB())


def test_class_alpha_zero_gives_a_singleton_class_no_leave_one_out_probability():
    X = np.array([[3, 0], [2, 1], [0, 3], [1, 2], [2, 2]])
    estimates = cf.multinomial_nb(X, ["a", "a", "b", "b", "c"], class_alpha=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # log 0 is meant, not a warning
        joint = family(estimates).loo_log_joint(estimates, X, np.array([0, 0, 1, 1, 2]))
    assert joint[4, 2] == -np.inf  # no other row of class c: E[π_c | D_{-i}] = 0
    assert np.isfinite(np.delete(joint.ravel(), 4 * 3 + 2)).all()


# --------------------------------------------------------------------------------------------
# compare_models.


@pytest.fixture(scope="module")
def text_models():
    X, y = multinomial_data()
    return {
        "multinomial": _estimator("multinomial").fit(X, y),
        "bernoulli": _estimator("bernoulli", binarize=0.0).fit(X, y),
        "flat": _estimator("multinomial", alpha=1e4).fit(X, y),
    }, y


def test_compare_models_ranks_by_the_leave_one_out_log_score(text_models):
    models, y = text_models
    table = bayesgen.compare_models(models)
    assert list(table.columns) == [
        "elpd_loo",
        "se",
        "elpd_diff",
        "se_diff",
        "accuracy_loo",
        "method",
        "pareto_k_max",
    ]
    assert table.index.name == "model"
    scores = {}
    for name, est in models.items():
        codes = np.searchsorted(est.classes_, y)
        scores[name] = np.log(loo_proba(est)[np.arange(len(y)), codes])
    order = sorted(scores, key=lambda name: -scores[name].sum())
    assert list(table.index) == order
    assert order[-1] == "flat"  # λ = 10⁴ washes out the words: p(y | x) ≈ the class prior
    best = scores[order[0]]
    for name in order:
        row = table.loc[name]
        difference = best - scores[name]
        assert row["elpd_loo"] == pytest.approx(scores[name].sum(), rel=1e-12)
        assert row["se"] == pytest.approx(np.sqrt(len(y) * np.var(scores[name])), rel=1e-12)
        assert row["elpd_diff"] == pytest.approx(difference.sum(), rel=1e-12, abs=0)
        assert row["se_diff"] == pytest.approx(np.sqrt(len(y) * np.var(difference)), abs=1e-12)
        assert row["method"] == "exact" and np.isnan(row["pareto_k_max"])
    assert table.iloc[0]["elpd_diff"] == 0.0 and table.iloc[0]["se_diff"] == 0.0
    assert (table["elpd_diff"].iloc[1:] > 0).all()


def test_compare_models_reports_leave_one_out_accuracy(text_models):
    models, y = text_models
    table = bayesgen.compare_models({"multinomial": models["multinomial"]})
    est = models["multinomial"]
    expected = np.mean(est.classes_[loo_proba(est).argmax(axis=1)] == y)
    assert table.loc["multinomial", "accuracy_loo"] == pytest.approx(expected)
    assert table.loc["multinomial", "elpd_diff"] == 0.0


def test_compare_models_refuses_an_empty_dict_and_non_estimators():
    with pytest.raises(ValueError, match=r"models: .* got an empty dict"):
        bayesgen.compare_models({})
    with pytest.raises(TypeError, match=r"models: expected fitted bayesgen estimators; got \{'x'"):
        bayesgen.compare_models({"x": object()})
    with pytest.raises(TypeError, match="models: expected a dict"):
        bayesgen.compare_models([bayesgen.MultinomialNB()])


def test_compare_models_refuses_unfitted_models_by_name(text_models):
    models, _ = text_models
    with pytest.raises(NotFittedError, match=r"\['new'\] are not"):
        bayesgen.compare_models({"fitted": models["multinomial"], "new": bayesgen.BernoulliNB()})
    with pytest.raises(ValueError, match="must be fitted"):  # NotFittedError is a ValueError
        bayesgen.compare_models({"new": bayesgen.BernoulliNB()})


def test_compare_models_refuses_models_fitted_on_other_rows(text_models):
    models, y = text_models
    X, _ = multinomial_data()
    fewer = _estimator("multinomial").fit(X.iloc[:-1], y[:-1])
    with pytest.raises(ValueError, match="'fewer' has 35 rows, 'multinomial' has 36"):
        bayesgen.compare_models({"multinomial": models["multinomial"], "fewer": fewer})
    relabelled = np.array(y, dtype=object)
    relabelled[[0, 1]] = relabelled[[1, 0]]
    other = _estimator("multinomial").fit(X, relabelled)
    with pytest.raises(ValueError, match="'other' and 'multinomial' have different labels"):
        bayesgen.compare_models({"multinomial": models["multinomial"], "other": other})


def test_psis_takes_rows_whose_probability_is_one_in_every_draw():
    """Long documents of disjoint vocabularies: p(y_i | x_i, θ) is 1 to the last digit in
    every draw, so the PSIS weights are equal; ArviZ's Pareto fit refuses such a tail, and
    these rows must get the plain posterior average (Pareto k 0) instead of an error."""
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 20)
    X = np.stack([np.bincount(rng.choice(10, size=400) + 10 * label, minlength=20) for label in y])
    for i in (0, 25):  # two short, ambiguous rows whose probability does vary
        X[i] = np.bincount(rng.choice(20, size=3), minlength=20)
    est = bayesgen.MultinomialNB(**CONJUGATE, draws=200, chains=2).fit(X, y)
    with pytest.warns(UserWarning, match="Pareto k"):  # the two short rows: few draws (400)
        psis = leave_one_out(est, method="psis")
    exact = leave_one_out(est)
    plain = np.ones(len(y), dtype=bool)
    plain[[0, 25]] = False
    assert np.all(psis.pareto_k[plain] == 0.0) and np.all(psis.pareto_k[~plain] > 0.0)
    np.testing.assert_allclose(psis.proba[plain], exact.proba[plain], atol=1e-9)
    assert np.all(np.isfinite(psis.proba))


def test_largest_pareto_k_skips_rows_arviz_could_not_fit():
    # ArviZ gives k = NaN for a tail it cannot fit; a plain max made the whole column NaN.
    from bayesgen.checks.loo import _largest_estimated

    assert _largest_estimated(np.array([np.nan, 0.3, 0.71])) == 0.71
    assert np.isnan(_largest_estimated(np.array([np.nan, np.nan])))
    codes = np.array([0, 1, 0])
    result = LeaveOneOut(np.log(np.full((3, 2), 0.5)), codes, "psis", np.array([np.nan, 0.3, 0.71]))
    assert result.pareto_k_max == 0.71  # the figure compare_models' column shows
