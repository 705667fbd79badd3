"""The vectorised PSIS-LOO (bayesgen.maths.psis, bayesgen.checks.loo.joint_loo) against ArviZ's.

ArviZ's ``psislw`` and ``loo`` loop over the rows; bayesgen's run over all rows at once. The
expected numbers here come from ArviZ, on log-likelihoods chosen to reach each branch of its
generalised Pareto fit: well-behaved tails, heavy tails (k above 0.7), tails whose fit is
undefined (k = NaN) or left to its prior, and tails the fit refuses.
"""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
import pytest
import xarray as xr
from numpy.testing import assert_allclose, assert_array_equal

import bayesgen
from bayesgen.checks.loo import joint_loo
from bayesgen.maths.psis import psis_log_weights, psis_loo, tail_length

SAMPLE_DIMS = ["chain", "draw"]


def _arviz_psis(log_lik: np.ndarray, r_eff: float):
    """ArviZ's per-row PSIS of a (chain, draw, obs) log-likelihood, rows first."""
    da = xr.DataArray(log_lik, dims=("chain", "draw", "obs"))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        log_weights, _ = da.azstats.psislw(r_eff=r_eff, dim=SAMPLE_DIMS)
        elpd_i, pareto_k, p_loo_i = da.azstats.loo(sample_dims=SAMPLE_DIMS, r_eff=r_eff)
    n_rows = log_lik.shape[2]
    log_weights = log_weights.transpose("obs", "chain", "draw").values.reshape(n_rows, -1)
    return elpd_i.values, p_loo_i.values, pareto_k.values, log_weights


def _rows(log_lik: np.ndarray) -> np.ndarray:
    return np.moveaxis(log_lik, 2, 0).reshape(log_lik.shape[2], -1)


def _log_likelihoods():
    rng = np.random.default_rng(0)
    return {
        # light tails of different widths, 4 chains: k well below 0.7
        "normal": (rng.normal(size=(4, 1000, 60)) * rng.gamma(1.0, 1.0, size=60), 2.0),
        # heavy-tailed ratios: k above 0.7 in many rows; NaN where the tail's ratios underflow
        # (the fit is undefined and the tail is not smoothed); and a row whose grid of the
        # fit gets no weight at all, so that k is the prior's alone, 5 / (n + 10)
        "heavy": (-(rng.standard_t(2, size=(2, 500, 80)) ** 2), 1.0),
        "cauchy": (rng.standard_cauchy(size=(2, 1000, 60)), 0.7),
        # few draws: the tail is a fifth of them
        "short": (rng.normal(size=(1, 100, 20)), 1.0),
        # whole-number ratios: where a quarter of the tail ties with the cutoff, ArviZ's fit
        # is undefined (k = NaN) and the tail is not smoothed
        "discrete": (-rng.poisson(0.2, size=(2, 2000, 30)).astype(float), 1.0),
    }


@pytest.mark.parametrize("case", ["normal", "heavy", "cauchy", "short", "discrete"])
def test_psis_equals_arviz_row_by_row(case):
    log_lik, r_eff = _log_likelihoods()[case]
    elpd_i, p_loo_i, pareto_k, log_weights = psis_loo(_rows(log_lik), r_eff)
    expected_elpd, expected_p, expected_k, expected_weights = _arviz_psis(log_lik, r_eff)
    assert_allclose(pareto_k, expected_k, rtol=1e-12, atol=1e-12)  # inf and NaN where ArviZ's
    assert_allclose(elpd_i, expected_elpd, rtol=1e-12, atol=1e-12)
    assert_allclose(p_loo_i, expected_p, rtol=1e-10, atol=1e-12)
    # Tied ratios may trade places, so the weights are compared as sorted rows.
    assert_allclose(np.sort(log_weights, axis=1), np.sort(expected_weights, axis=1), atol=1e-12)


def test_the_cases_reach_every_branch_of_the_pareto_fit():
    """Otherwise the comparison above would not cover them."""
    ks = {case: _arviz_psis(ll, r_eff)[2] for case, (ll, r_eff) in _log_likelihoods().items()}
    assert np.all(np.isfinite(ks["normal"])) and np.any(ks["normal"] < 0.5)
    n_tail = tail_length(1000, 1.0)
    assert np.any(ks["heavy"] > 0.7) and np.any(np.isnan(ks["heavy"]))
    assert np.any(ks["heavy"] == 5 / (n_tail + 10))
    assert np.any(np.isnan(ks["discrete"]))


def test_weights_are_normalised_and_smooth_only_the_tail():
    log_lik, r_eff = _log_likelihoods()["normal"]
    rows = _rows(log_lik)
    log_weights, _ = psis_log_weights(-rows, r_eff)
    assert_allclose(np.exp(log_weights).sum(axis=1), 1.0, rtol=1e-12)
    n_tail = tail_length(rows.shape[1], r_eff)
    # Below the tail each weight is its raw ratio, up to the row's normalising constant.
    order = np.argsort(-rows, axis=1)[:, : rows.shape[1] - n_tail]
    body = np.take_along_axis(log_weights + rows, order, axis=1)
    assert_allclose(body - body[:, :1], 0.0, atol=1e-10)


@pytest.mark.parametrize(
    ("n_draws", "r_eff", "expected"),
    [(4000, 1.0, 189), (4000, 2.0, 134), (2000, 0.5, 189), (100, 1.0, 20), (200, 1.0, 40)],
)
def test_tail_length_is_arviz_rule(n_draws, r_eff, expected):
    # 3 sqrt(S / r_eff) where S r_eff > 225, else S / 5; rounded down (worked by hand)
    assert tail_length(n_draws, r_eff) == expected


def test_a_tail_of_equal_values_is_refused_as_arviz_does():
    rows = np.zeros((2, 1000))
    rows[0] = np.random.default_rng(1).normal(size=1000)
    with pytest.raises(ValueError, match="All tail values are the same"):
        psis_loo(rows, 1.0)
    with pytest.raises(ValueError, match="All tail values are the same"):
        _arviz_psis(rows.T[None, :, :], 1.0)


def test_too_few_draws_are_refused():
    with pytest.raises(ValueError, match="at least 5 draws in the tail"):
        psis_loo(np.random.default_rng(2).normal(size=(3, 20)), 1.0)


def test_input_is_not_modified():
    rows = np.random.default_rng(3).normal(size=(5, 400))
    before = rows.copy()
    psis_loo(rows, 1.0)
    psis_log_weights(rows, 1.0)
    assert_array_equal(rows, before)


# -- joint_loo on fitted estimators ---------------------------------------------------------------


@pytest.fixture(scope="module")
def fits():
    rng = np.random.default_rng(4)
    X = rng.poisson(1.0, size=(40, 6))
    y = np.repeat(["a", "b"], 20)
    conjugate = bayesgen.MultinomialNB(
        inference="conjugate", compute_map=False, draws=500, chains=2, random_seed=0
    ).fit(X, y)
    X[0] += 30  # one row its class explains badly: a large k
    outlier = bayesgen.MultinomialNB(
        inference="conjugate", compute_map=False, draws=500, chains=2, random_seed=0
    ).fit(X, y)
    one_chain = bayesgen.MultinomialNB(
        inference="conjugate", compute_map=False, draws=800, chains=1, random_seed=1
    ).fit(X, y)  # r_eff is 1 with one chain
    return {"conjugate": conjugate, "outlier": outlier, "one_chain": one_chain}


@pytest.mark.parametrize("name", ["conjugate", "outlier", "one_chain"])
def test_joint_loo_equals_arviz_loo(fits, name):
    est = fits[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = az.loo(est.idata_, var_name="y", pointwise=True)
    result = joint_loo(est)
    assert isinstance(result, az.ELPDDataLOO)
    for field in ("elpd", "se", "p", "good_k"):
        assert_allclose(result[field], expected[field], rtol=1e-10)
    assert (result.n_samples, result.n_data_points) == (expected.n_samples, expected.n_data_points)
    assert result.warning == expected.warning
    assert result.pareto_k.dims == expected.pareto_k.dims
    assert_allclose(result.pareto_k.values, expected.pareto_k.values, rtol=1e-10)
    assert_allclose(result.elpd_i.values, expected.elpd_i.values, rtol=1e-10)
    assert_allclose(
        result.log_weights.transpose(*expected.log_weights.dims).values,
        expected.log_weights.values,
        atol=1e-10,
    )


def test_joint_loo_flags_a_row_arviz_warns_about(fits):
    with pytest.warns(UserWarning, match="Estimated shape parameter of Pareto"):
        az.loo(fits["outlier"].idata_, var_name="y", pointwise=True)
    result = joint_loo(fits["outlier"])
    assert result.warning and result.pareto_k.values[0] > result.good_k


def test_joint_loo_needs_the_log_likelihood(fits):
    est = fits["conjugate"]
    saved = est.idata_
    try:
        est.idata_ = xr.DataTree.from_dict({"posterior": saved["posterior"].to_dataset()})
        with pytest.raises(ValueError, match="joint_loo: this fit holds no pointwise"):
            joint_loo(est)
    finally:
        est.idata_ = saved


def test_log_sum_exp_is_scipys_to_the_bit():
    """psis_loo and every predict_proba share it; SciPy's logsumexp is the yardstick."""
    from scipy.special import logsumexp

    from bayesgen.maths.likelihood import log_sum_exp

    rng = np.random.default_rng(8)
    values = rng.normal(size=(9, 40)) * 300
    values[1] = -np.inf  # a row of -inf sums to -inf
    values[2, 3] = np.nan
    values[3, 4] = np.inf
    values[4, :10] = -np.inf
    values[5] = 1e308
    values[6, :2] = np.inf
    values[7] = np.round(values[7] / 300)  # tied largest terms
    values[8, :] = 2.5  # all tied
    with np.errstate(all="ignore"):
        expected = logsumexp(values, axis=-1, keepdims=True)
    assert log_sum_exp(values).tobytes() == expected.tobytes()


@pytest.mark.parametrize("n_classes", [2, 3, 10, 16, 17])
def test_log_sum_exp_and_softmax_over_a_few_classes_are_scipys_to_the_bit(n_classes):
    """A short class axis is reduced slice by slice: the same bits as SciPy's, special
    values and ties included."""
    from scipy.special import logsumexp

    from bayesgen.maths.likelihood import log_sum_exp, normalize_log_proba

    rng = np.random.default_rng(n_classes)
    values = rng.normal(size=(3, 200, n_classes)) * 40
    values[0, 0] = -np.inf
    values[0, 1, 0] = np.nan
    values[0, 2, -1] = np.inf
    values[0, 3, :1] = -np.inf
    values[0, 4] = 1e308
    values[0, 5] = 2.5  # every class tied
    values[0, 6, : n_classes // 2 + 1] = 7.0  # some tied for the largest
    values[1] = np.round(values[1] / 40)  # many ties
    with np.errstate(all="ignore"):
        expected = logsumexp(values, axis=-1, keepdims=True)
        assert log_sum_exp(values).tobytes() == expected.tobytes()
    finite = values[2]  # every row has a finite largest value
    softmax = np.exp(finite - logsumexp(finite, axis=-1, keepdims=True))
    assert normalize_log_proba(finite).tobytes() == softmax.tobytes()
