"""The aggregated Dirichlet draws of bayesgen.maths.aggregated and their numba kernels.

The kernels' logarithm is checked against NumPy's, their Gamma variates against scipy.stats'
Gamma law, and the per-document log joints against fully materialised Dirichlet draws made
here with NumPy; a document gets the same values in any batch, order or thread count.
"""

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from bayesgen.maths import gamma_kernels
from bayesgen.maths.aggregated import _gamma_parameters, aggregated_multinomial_log_joint


def keys(n, seed=7):
    return gamma_kernels.stream_tags(np.uint64(seed), np.arange(n, dtype=np.uint64), 1)


def test_log_into_matches_numpy_log_to_a_few_ulp():
    rng = np.random.default_rng(0)
    x = np.concatenate(
        [
            rng.random(20_000),  # the uniforms of the sampler
            1.0 + rng.normal(scale=1e-6, size=2_000),  # near 1, where the log is near 0
            10.0 ** rng.uniform(-300, 300, size=20_000),
            [np.finfo(np.float64).tiny, 1.0, 2.0, np.sqrt(2.0), 1e308],
        ]
    )
    out = np.empty_like(x)
    gamma_kernels.log_into(x, out)
    np.testing.assert_allclose(out, np.log(x), rtol=3e-16, atol=1e-300)  # about 1 ulp


@pytest.mark.parametrize("shape", [0.3, 1.0, 1.5, 2.5, 40.0, 2e5])  # 1: most text cells
def test_gamma_cells_have_the_gamma_law(shape):
    n = 20_000
    params, small = _gamma_parameters(np.full(n, shape))
    g, log_g = np.empty(n), np.empty(n)
    gamma_kernels.gamma_cells(keys(n), *params[:4], small, g, log_g, np.empty((5, n)))
    assert stats.kstest(g, stats.gamma(shape).cdf).pvalue > 1e-3
    np.testing.assert_allclose(log_g, np.log(g), rtol=1e-12, atol=1e-14)


def test_zero_shape_is_a_point_mass_with_a_clipped_log():
    params, small = _gamma_parameters(np.array([0.0, 2.0]))
    g, log_g = np.empty(2), np.empty(2)
    gamma_kernels.gamma_cells(keys(2), *params[:4], small, g, log_g, np.empty((5, 2)))
    assert g[0] == 0.0 and log_g[0] == np.log(np.finfo(np.float64).tiny)
    assert g[1] > 0.0


def small_model(alpha):
    rng = np.random.default_rng(3)
    counts = rng.poisson(3.0, size=(3, 8)).astype(float)
    counts[:, 5] = 0.0  # a word no class has seen: every cell of it is α
    class_concentration = np.array([4.0, 6.0, 5.0])
    X = sp.csr_array(np.array([[2, 0, 1, 0, 0, 1, 0, 3], [0, 4, 0, 0, 1, 0, 0, 0]]))
    return class_concentration, counts + alpha, X


@pytest.mark.parametrize("alpha", [0.3, 1.0, 2.5])
def test_log_joint_has_the_law_of_materialised_dirichlet_draws(alpha):
    class_concentration, concentration, X = small_model(alpha)
    n = 20_000
    aggregated = aggregated_multinomial_log_joint(class_concentration, concentration, X, n, 5)
    rng = np.random.default_rng(11)
    theta = np.stack([rng.dirichlet(row, size=n) for row in concentration], axis=1)
    class_prob = rng.dirichlet(class_concentration, size=n)
    counts = X.toarray()
    materialised = np.log(class_prob)[:, None, :] + np.einsum("nw,dkw->dnk", counts, np.log(theta))
    se = np.sqrt((aggregated.var(axis=0) + materialised.var(axis=0)) / n)
    assert np.abs((aggregated.mean(axis=0) - materialised.mean(axis=0)) / se).max() < 4.5
    for doc in range(2):
        for k in range(3):
            pvalue = stats.ks_2samp(aggregated[:, doc, k], materialised[:, doc, k]).pvalue
            assert pvalue > 1e-4, (doc, k, pvalue)


def test_same_seed_gives_the_same_draws_and_another_seed_others():
    class_concentration, concentration, X = small_model(1.0)
    first = aggregated_multinomial_log_joint(class_concentration, concentration, X, 50, 1)
    again = aggregated_multinomial_log_joint(class_concentration, concentration, X, 50, 1)
    other = aggregated_multinomial_log_joint(class_concentration, concentration, X, 50, 2)
    np.testing.assert_array_equal(first, again)
    assert not np.any(first == other)


def test_a_document_gets_the_same_draws_in_any_batch_order_and_dtype():
    class_concentration, concentration, X = small_model(1.0)
    rng = np.random.default_rng(4)
    batch = sp.csr_array(rng.poisson(0.7, size=(6, 8)))
    whole = aggregated_multinomial_log_joint(
        class_concentration, concentration, sp.vstack([X, batch]), 30, 9
    )
    alone = aggregated_multinomial_log_joint(class_concentration, concentration, X[[1]], 30, 9)
    reversed_batch = aggregated_multinomial_log_joint(
        class_concentration, concentration, sp.csr_array(X.toarray()[::-1].astype(float)), 30, 9
    )
    np.testing.assert_array_equal(whole[:, 1], alone[:, 0])
    np.testing.assert_array_equal(whole[:, :2], reversed_batch[:, ::-1])


def test_draws_do_not_depend_on_the_number_of_threads():
    class_concentration, concentration, X = small_model(0.5)
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = aggregated_multinomial_log_joint(class_concentration, concentration, X, 40, 3)
    finally:
        numba.set_num_threads(threads)
    many = aggregated_multinomial_log_joint(class_concentration, concentration, X, 40, 3)
    np.testing.assert_array_equal(one, many)


def test_a_zero_concentration_word_makes_its_class_impossible():
    class_concentration, concentration, X = small_model(1.0)
    concentration[1, 0] = 0.0  # θ_1,0 = 0: document 0 (two of word 0) cannot be class 1
    joint = aggregated_multinomial_log_joint(class_concentration, concentration, X, 20, 0)
    assert np.all(joint[:, 0, 1] < 2 * np.log(np.finfo(np.float64).tiny) + 50)
    assert np.all(np.isfinite(joint)) and np.all(joint[:, 0, [0, 2]] > -100)


def test_the_input_matrix_is_not_modified():
    class_concentration, concentration, _ = small_model(1.0)
    X = sp.csr_array(
        (np.array([1.0, 2.0, 3.0]), np.array([4, 0, 2]), np.array([0, 3])), shape=(1, 8)
    )
    assert not X.has_sorted_indices
    aggregated_multinomial_log_joint(class_concentration, concentration, X, 5, 0)
    np.testing.assert_array_equal(X.indices, [4, 0, 2])
    np.testing.assert_array_equal(X.data, [1.0, 2.0, 3.0])


def test_more_draws_than_the_streams_hold_are_refused():
    class_concentration, concentration, X = small_model(1.0)
    with pytest.raises(ValueError, match=r"n_draws: expected 1 to 1,048,576 draws per call; got"):
        aggregated_multinomial_log_joint(class_concentration, concentration, X, 2**20 + 1, 0)
