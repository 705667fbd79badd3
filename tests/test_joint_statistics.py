"""Per-draw joint statistics with an exact law: what the marginal checks of compare() miss.

Expected values come from Monte Carlo draws of NumPy's own Dirichlet sampler, or from
posteriors made wrong on purpose (concentrations 10 % off, λ draws shuffled against θ, θ drawn
at one λ), never from the code under test.
"""

import copy

import numpy as np
import pytest

from bayesgen import CategoricalNB, MultinomialNB, compare
from bayesgen.maths.joint_statistics import (
    dirichlet_log_sum_cumulants,
    fixed_statistic,
    statistic_z,
)


def test_cumulants_of_the_log_sum_match_monte_carlo():
    a = np.array([[0.7, 2.0, 5.0], [1.5, 1.5, 0.0]])  # the second simplex has a padding cell
    rng = np.random.default_rng(0)
    first = np.log(rng.dirichlet(a[0], size=400_000)).sum(axis=1)
    second = np.log(rng.dirichlet(a[1, :2], size=400_000)).sum(axis=1)
    t = first + second
    mean, variance, third, fourth = dirichlet_log_sum_cumulants(a)
    assert mean == pytest.approx(t.mean(), abs=0.01)
    assert variance == pytest.approx(t.var(), rel=0.01)
    centred = t - t.mean()
    assert third == pytest.approx(np.mean(centred**3), rel=0.05)
    assert fourth == pytest.approx(np.mean(centred**4) - 3 * t.var() ** 2, rel=0.05)


def test_correct_draws_give_standard_z_and_wrong_concentrations_do_not():
    a = np.array([[3.0, 1.0, 2.0], [1.0, 1.0, 5.0]])
    rng = np.random.default_rng(1)
    right, wrong = [], []
    for _ in range(100):
        draws = np.stack([rng.dirichlet(row, size=(2, 1000)) for row in a], axis=2)
        right.append(statistic_z(fixed_statistic("T", "f", draws, a))[:2])
        draws = np.stack([rng.dirichlet(1.1 * row, size=(2, 1000)) for row in a], axis=2)
        wrong.append(statistic_z(fixed_statistic("T", "f", draws, a))[:2])
    right, wrong = np.array(right), np.array(wrong)
    assert np.abs(right.mean(axis=0)).max() < 0.3
    assert right.std(axis=0) == pytest.approx([1.0, 1.0], abs=0.2)
    assert np.abs(wrong[:, 0]).mean() > 4  # the location shifts by several errors


def categorical_data(seed=0, n=300, n_features=12, n_categories=4):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, size=n)
    probs = rng.dirichlet(np.ones(n_categories), size=(3, n_features))
    X = np.array([[rng.choice(n_categories, p=probs[k, j]) for j in range(n_features)] for k in y])
    return X, np.array(["a", "b", "c"])[y]


def swap_feature_draws(est, other):
    """``est`` with its feature_prob draws replaced by ``other``'s."""
    est = copy.copy(est)
    tree = est.idata_.copy()
    posterior = tree["posterior"].to_dataset()
    tree["posterior"] = posterior.assign(feature_prob=other.idata_["posterior"]["feature_prob"])
    est.idata_ = tree
    return est


def test_a_categorical_lambda_ten_percent_off_is_seen_best_by_the_joint_check():
    X, y = categorical_data()
    options = {"inference": "conjugate", "random_seed": 0, "compute_map": False}
    right = CategoricalNB(alpha=1.0, **options).fit(X, y)
    wrong = CategoricalNB(alpha=1.1, **options).fit(X, y)
    result = compare(swap_feature_draws(right, wrong))
    row = result.joint.set_index("statistic").loc["Σ log feature_prob"]
    assert not row["agrees"]
    # one statistic of the whole draw sees it more clearly than any single parameter
    worst_marginal = np.nanmax(np.abs(result.table[["z", "z_sd"]].to_numpy()))
    assert abs(row["z_mean"]) > worst_marginal
    assert not result.agrees and not result.ok
    assert any("does not follow its exact law" in w for w in result.warnings)
    assert compare(right).ok


def hyperprior_fit():
    rng = np.random.default_rng(2)
    X = rng.poisson(0.4, size=(30, 40))
    y = np.repeat(["ham", "spam"], 15)
    return MultinomialNB(
        alpha_prior=(1.0, 1.0), inference="conjugate", random_seed=0, compute_map=False
    ).fit(X, y)


def test_lambda_draws_shuffled_against_theta_fail_the_joint_check():
    est = hyperprior_fit()
    assert compare(est).ok
    tree = est.idata_.copy()
    posterior = tree["posterior"].to_dataset()
    shuffled = np.random.default_rng(3).permutation(posterior["alpha"].values.ravel())
    tree["posterior"] = posterior.assign(
        alpha=(posterior["alpha"].dims, shuffled.reshape(posterior["alpha"].shape))
    )
    tampered = copy.copy(est)
    tampered.idata_ = tree
    result = compare(tampered)
    row = result.joint.set_index("statistic").loc["Σ log feature_prob given λ"]
    assert not row["agrees"]
    assert not result.ok


def test_theta_drawn_at_one_lambda_fails_the_joint_check():
    est = hyperprior_fit()
    at_mean = MultinomialNB(
        alpha=float(est.idata_["posterior"]["alpha"].mean()),
        inference="conjugate",
        random_seed=1,
        compute_map=False,
    ).fit(*hyperprior_data_of(est))
    result = compare(swap_feature_draws(est, at_mean))
    row = result.joint.set_index("statistic").loc["Σ log feature_prob given λ"]
    assert not row["agrees"]
    assert not result.ok


def hyperprior_data_of(est):
    rng = np.random.default_rng(2)
    X = rng.poisson(0.4, size=(30, 40))
    return X, np.repeat(["ham", "spam"], 15)
