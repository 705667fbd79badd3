"""Leave-one-out of the Dirichlet compound multinomial (bayesgen.maths.dirichlet_multinomial_loo,
the family's loo_log_joint): every document scored under the point fit refitted without it.

The yardstick is the refit from scratch: the histograms of the other documents counted
anew and fitted from the default start, not from the full fit.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import gammaln

import bayesgen
from bayesgen.checks.loo import leave_one_out
from bayesgen.families.dcm import FAMILY
from bayesgen.maths.dirichlet_multinomial import count_histograms, fit_concentration
from bayesgen.maths.dirichlet_multinomial_loo import (
    class_histograms,
    leave_one_out_log_pmf,
    without_document,
)

PRIOR = {"concentration_prior": (1.5, 0.2), "mean_prior": 1.3}


def corpus(n_documents=24, n_words=7, n_classes=2, seed=0):
    rng = np.random.default_rng(seed)
    alpha = rng.gamma(1.0, 1.0, size=(n_classes, n_words)) + 0.2
    y = np.arange(n_documents) % n_classes
    X = np.array([rng.multinomial(rng.integers(3, 25), rng.dirichlet(alpha[k])) for k in y])
    return X.astype(float), y


def dirmult_by_gammaln(x, alpha):
    """log DirMult(x | α) written out (−∞ where a word of x has α = 0)."""
    n, s, seen = x.sum(), alpha.sum(), x > 0
    if np.any(alpha[seen] == 0):
        return -np.inf
    return (
        gammaln(n + 1)
        - gammaln(x + 1).sum()
        + gammaln(s)
        - gammaln(n + s)
        + (gammaln(x[seen] + alpha[seen]) - gammaln(alpha[seen])).sum()
    )


def refit_from_scratch(X, y, i, n_classes, shared):
    keep = np.arange(y.size) != i
    rest = count_histograms(X[keep], y[keep], n_classes)
    return fit_concentration(rest, shared_mean=shared, **PRIOR)


@pytest.mark.parametrize("shared", [False, True], ids=["per_class_mean", "shared_mean"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_every_document_is_scored_by_the_fit_to_the_others(shared, n_classes):
    X, y = corpus(n_classes=n_classes)
    histograms = count_histograms(X, y, n_classes)
    fit = fit_concentration(histograms, shared_mean=shared, **PRIOR)
    loo = leave_one_out_log_pmf(
        X, y, histograms, fit.concentration, fit.mean, shared_mean=shared, **PRIOR
    )
    assert loo.converged.all()
    for i in range(y.size):
        alpha = refit_from_scratch(X, y, i, n_classes, shared).alpha
        expected = [dirmult_by_gammaln(X[i], alpha[k]) for k in range(n_classes)]
        np.testing.assert_allclose(loo.log_pmf[i], expected, rtol=1e-8, atol=1e-9)
    # Leaving a document out moves its own class's fit: not the full fit's score.
    full = [dirmult_by_gammaln(X[0], fit.alpha[k]) for k in range(n_classes)]
    assert abs(loo.log_pmf[0, y[0]] - full[y[0]]) > 1e-3


def test_sparse_documents_give_the_dense_answer():
    X, y = corpus()
    histograms = count_histograms(X, y, 2)
    fit = fit_concentration(histograms, **PRIOR)
    args = (histograms, fit.concentration, fit.mean)
    dense = leave_one_out_log_pmf(X, y, *args, shared_mean=False, **PRIOR)
    sparse = leave_one_out_log_pmf(sp.csr_array(X), y, *args, shared_mean=False, **PRIOR)
    np.testing.assert_allclose(sparse.log_pmf, dense.log_pmf, rtol=1e-12)


@pytest.mark.parametrize("i", [0, 5, 11])
def test_without_document_equals_the_histograms_of_the_others(i):
    X, y = corpus(n_documents=12)
    left = without_document(count_histograms(X, y, 2), X[i : i + 1], int(y[i]))
    keep = np.arange(12) != i
    rest = count_histograms(X[keep], y[keep], 2)
    for mine, theirs in zip(left, rest, strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)


def test_class_histograms_is_the_histograms_of_that_class_alone():
    X, y = corpus(n_classes=3)
    own = class_histograms(count_histograms(X, y, 3), 2)
    alone = count_histograms(X[y == 2], np.zeros(np.count_nonzero(y == 2), dtype=int), 1)
    for mine, theirs in zip(own, alone, strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)


def family_fit(X, y, **options):
    labels = np.array(["ham", "spam", "eggs"])[y]
    return FAMILY.fit(X, labels, **options), labels


def test_family_leave_one_out_is_the_class_predictive_times_the_refitted_dirmult():
    """Under a flat prior of m the priors do not involve the pooled frequencies, so the
    refit of the whole fit without row i is the target itself."""
    X, y = corpus()
    options = {"concentration_prior": (2.0, 0.1), "mean_prior_strength": 0.0, "class_alpha": 1.0}
    estimates, labels = family_fit(X, y, **options)
    joint = FAMILY.loo_log_joint(estimates, X, y)
    n, counts = y.size, np.bincount(y, minlength=2)
    for i in [0, 1, 7, 23]:
        keep = np.arange(n) != i
        rest = FAMILY.fit(X[keep], labels[keep], **options)
        alpha = FAMILY.point_alpha(rest)
        class_prob = (counts - (np.arange(2) == y[i]) + 1.0) / (n - 1 + 2.0)
        expected = [np.log(class_prob[k]) + dirmult_by_gammaln(X[i], alpha[k]) for k in (0, 1)]
        np.testing.assert_allclose(joint[i], expected, rtol=1e-8)
    assert FAMILY.loo_kind(estimates) == "plug-in"


def test_unconverged_refits_are_warned_of():
    """Multinomial documents (no overdispersion) under a flat prior push s to ∞."""
    rng = np.random.default_rng(1)
    X = rng.multinomial(40, [0.25, 0.25, 0.25, 0.25], size=10).astype(float)
    y = np.arange(10) % 2
    estimates, _ = family_fit(X, y, concentration_prior="flat", mean_prior_strength=0.0)
    with pytest.warns(UserWarning, match=r"loo: \d+ of 10 point fits .* did not converge"):
        FAMILY.loo_log_joint(estimates, X, y)


def test_exact_and_plug_in_methods_are_refused_where_they_do_not_apply():
    X, y = corpus()
    multinomial = bayesgen.MultinomialNB(inference="conjugate", compute_map=False).fit(X, y)
    with pytest.raises(ValueError, match=r"^method: 'plug-in' does not apply to MultinomialNB"):
        leave_one_out(multinomial, method="plug-in")
    assert leave_one_out(multinomial).method == "exact"


def test_mixed_model_with_a_dcm_block_is_plug_in_and_sums_the_blocks():
    X, y = corpus()
    rng = np.random.default_rng(3)
    heights = rng.normal(y, 1.0)[:, None]
    data = np.hstack([X, heights])
    blocks = [("words", "dcm", list(range(7))), ("height", "gaussian", [7])]
    est = bayesgen.NaiveBayes(blocks=blocks)
    labels = np.array(["ham", "spam"])[y]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimates = est._closed_form(data, labels)  # the fit's closed form, without NUTS
    mixed = est.model_
    assert mixed.loo_kind(estimates) == "plug-in"
    joint = mixed.loo_log_joint(estimates, data, y, options=est.get_params())
    words = FAMILY.loo_log_joint(FAMILY.fit(X, labels), X, y)
    gaussian = bayesgen.GaussianNB().model_
    height = gaussian.loo_log_joint(gaussian.fit(heights, labels), heights, y)
    class_term = np.log((np.bincount(y) - (np.arange(2) == y[:, None]) + 1.0) / (y.size - 1 + 2))
    np.testing.assert_allclose(joint, words + height - class_term, rtol=1e-10)
