"""The semi-supervised fit of Dask input: EM with one pass over the chunks per iteration.

The expected values come from the in-memory EM on the same rows (a different code path: the
rows stacked once per class in memory, the responsibilities kept between iterations), from the
supervised fit of the labelled rows alone, and from counting how often each chunk is read.
All fits are conjugate (nothing compiles); the threaded scheduler runs them, and one test runs
on a two-process ``distributed.LocalCluster``, where every task's arguments are pickled.
"""

import threading

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

from bayesgen import (  # noqa: E402
    BernoulliNB,
    GaussianDiscriminantAnalysis,
    MultinomialNB,
    NaiveBayes,
)

FAST = {
    "inference": "conjugate",
    "draws": 20,
    "tune": 2,
    "chains": 1,
    "prior_draws": 0,
    "random_seed": 0,
}
N_ROWS, N_LABELLED = 120, 12
ROW_CHUNKS = (25, 25, 25, 25, 20)
MODELS = {
    "multinomial": (MultinomialNB, {"alpha": 2.0}),
    "bernoulli": (BernoulliNB, {"alpha": 2.0}),
    "gda": (GaussianDiscriminantAnalysis, {}),
}


@pytest.fixture(autouse=True)
def threads():
    with dask.config.set(scheduler="threads"):
        yield


def data(model: str, seed: int = 0):
    """Two classes, 12 rows labelled (both classes), the other 108 marked -1; shuffled, so
    that the chunks hold both kinds of row."""
    rng = np.random.default_rng(seed)
    truth = np.r_[[0, 1] * (N_LABELLED // 2), rng.integers(0, 2, N_ROWS - N_LABELLED)]
    if model == "gda":
        X = rng.normal(size=(N_ROWS, 3)) * [1.0, 2.0, 0.5] + truth[:, None] * 1.5
    else:
        rates = np.array([[3.0, 1.0, 1.0, 2.0, 0.5], [1.0, 3.0, 2.0, 1.0, 1.5]])
        X = rng.poisson(rates[truth]).astype(float)
        if model == "bernoulli":
            X = (X > 1).astype(float)
    y = np.r_[truth[:N_LABELLED], np.full(N_ROWS - N_LABELLED, -1)]
    order = rng.permutation(N_ROWS)
    return X[order], y[order]


def chunked(X, y, *, sparse=False):
    X_dask = da.from_array(X, chunks=(ROW_CHUNKS, X.shape[1]))
    if sparse:
        X_dask = X_dask.map_blocks(sp.csr_matrix, meta=sp.csr_matrix((0, 0)))
    return X_dask, da.from_array(y, chunks=(ROW_CHUNKS,))


def assert_same_fit(in_memory, on_dask, rtol=1e-10):
    """The same completed statistics, closed form and MAP (to rounding: the chunks' sums add
    in another order), the same EM iterations and trace."""
    expected, got = in_memory.closed_form_, on_dask.closed_form_
    assert list(got.data_vars) == list(expected.data_vars)
    for name, variable in expected.data_vars.items():
        if variable.dtype.kind == "f":
            scale = max(float(np.nanmax(np.abs(variable.values))), 1.0)
            assert_allclose(got[name].values, variable.values, rtol=rtol, atol=rtol * scale)
    for name in ("em_iterations", "em_converged", "unlabelled_rows", "unlabelled_weight"):
        assert got.attrs[name] == expected.attrs[name], name
    for name, variable in in_memory.map_.data_vars.items():
        assert_allclose(on_dask.map_[name].values, variable.values, rtol=rtol, atol=rtol)
    assert_allclose(on_dask.em_log_likelihood_, in_memory.em_log_likelihood_, rtol=rtol)


# -- equal to the in-memory EM ----------------------------------------------------------------


@pytest.mark.parametrize("weight", [1.0, 0.4])
@pytest.mark.parametrize("model", list(MODELS))
def test_em_over_the_chunks_equals_the_in_memory_em(model, weight):
    X, y = data(model)
    Estimator, options = MODELS[model]
    in_memory = Estimator(**options, **FAST).fit(
        X, y, unlabelled_label=-1, unlabelled_weight=weight
    )
    on_dask = Estimator(**options, **FAST).fit(
        *chunked(X, y), unlabelled_label=-1, unlabelled_weight=weight
    )
    assert in_memory.closed_form_.attrs["em_iterations"] > 3  # EM had work to do
    assert_same_fit(in_memory, on_dask)
    assert on_dask.closed_form_.attrs["dask_chunks"] == len(ROW_CHUNKS)
    assert 0 <= on_dask.closed_form_.attrs["em_stationarity_gap"] < 1e-6


def test_sparse_chunks_give_the_in_memory_em():
    X, y = data("multinomial", seed=1)
    in_memory = MultinomialNB(alpha=2.0, **FAST).fit(sp.csr_array(X), y, unlabelled_label=-1)
    on_dask = MultinomialNB(alpha=2.0, **FAST).fit(*chunked(X, y, sparse=True), unlabelled_label=-1)
    assert_same_fit(in_memory, on_dask)


def test_a_dask_dataframe_with_missing_labels_gives_the_in_memory_em():
    X, y = data("gda", seed=2)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    labels = pd.Series(np.where(y == -1, np.nan, y))
    in_memory = GaussianDiscriminantAnalysis(**FAST).fit(frame, labels)
    on_dask = GaussianDiscriminantAnalysis(**FAST).fit(
        dd.from_pandas(frame, npartitions=4), dd.from_pandas(labels, npartitions=4)
    )
    assert_same_fit(in_memory, on_dask)
    assert on_dask.feature_names_in_.tolist() == ["a", "b", "c"]


def test_sample_weights_in_chunks_give_the_in_memory_em():
    X, y = data("multinomial", seed=3)
    weights = np.random.default_rng(0).uniform(0.5, 2.0, N_ROWS)
    in_memory = MultinomialNB(alpha=2.0, **FAST).fit(
        X, y, unlabelled_label=-1, sample_weight=weights
    )
    X_dask, y_dask = chunked(X, y)
    on_dask = MultinomialNB(alpha=2.0, **FAST).fit(
        X_dask,
        y_dask,
        unlabelled_label=-1,
        sample_weight=da.from_array(weights, chunks=(ROW_CHUNKS,)),
    )
    assert_same_fit(in_memory, on_dask)


def test_unlabelled_weight_zero_is_the_labelled_rows_fit_in_one_pass():
    X, y = data("multinomial", seed=4)
    labelled = y != -1
    zero = MultinomialNB(alpha=2.0, **FAST).fit(
        *chunked(X, y), unlabelled_label=-1, unlabelled_weight=0.0
    )
    alone = MultinomialNB(alpha=2.0, **FAST).fit(X[labelled], y[labelled])
    for name in ("class_count", "feature_count", "feature_prob"):
        assert_allclose(zero.closed_form_[name].values, alone.closed_form_[name].values)
    assert zero.closed_form_.attrs["em_iterations"] == 0
    assert zero.closed_form_.attrs["em_dask_passes"] == 1


# -- one pass per iteration, rows not kept ----------------------------------------------------


def test_each_iteration_reads_every_chunk_once():
    X, y = data("multinomial", seed=5)
    reads, lock = [], threading.Lock()

    def counted(block, block_info=None):
        with lock:
            reads.append(block_info[0]["chunk-location"][0])
        return block

    X_dask, y_dask = chunked(X, y)
    est = MultinomialNB(alpha=2.0, **FAST).fit(
        X_dask.map_blocks(counted, dtype=float), y_dask, unlabelled_label=-1
    )
    iterations = est.closed_form_.attrs["em_iterations"]
    # The labelled pass, the start, then one pass per iteration.
    passes = iterations + 2
    assert est.closed_form_.attrs["em_dask_passes"] == passes
    assert sorted(reads) == sorted(list(range(len(ROW_CHUNKS))) * passes)


def test_the_posterior_is_the_conjugate_one_at_the_expected_statistics_without_rows():
    X, y = data("multinomial", seed=6)
    est = MultinomialNB(alpha=2.0, **FAST).fit(*chunked(X, y), unlabelled_label=-1)
    assert est.closed_form_.attrs["semi_supervised_posterior"] == "expected_statistics"
    assert "observed_data" not in est.idata_.children
    assert not hasattr(est, "transduction_") and not hasattr(est, "label_distributions_")
    # The Dirichlet posterior mean of the completed expected counts, by hand.
    counts = est.closed_form_["feature_count"].values + 2.0
    assert_allclose(
        est.posterior_mean()["feature_prob"].values,
        counts / counts.sum(axis=1, keepdims=True),
        rtol=1e-12,
    )


def test_minus_one_in_dask_labels_is_unlabelled_not_a_class():
    """Before the Dask EM, -1 in a Dask y was fitted as a third class."""
    X, y = data("multinomial", seed=7)
    est = MultinomialNB(alpha=2.0, **FAST).fit(*chunked(X, y), unlabelled_label=-1)
    assert est.classes_.tolist() == [0, 1]
    assert est.closed_form_.attrs["unlabelled_rows"] == N_ROWS - N_LABELLED
    assert_allclose(est.closed_form_["class_count"].values.sum(), N_ROWS)


def test_every_row_labelled_is_the_supervised_dask_fit_bit_for_bit():
    X, _ = data("gda", seed=8)
    y = np.arange(N_ROWS) % 2
    plain = GaussianDiscriminantAnalysis(**FAST).fit(*chunked(X, y))
    marked = GaussianDiscriminantAnalysis(**FAST).fit(*chunked(X, y), unlabelled_label=-1)
    for name, variable in plain.closed_form_.data_vars.items():
        assert_array_equal(marked.closed_form_[name].values, variable.values)
    assert "unlabelled_rows" not in marked.closed_form_.attrs


def test_the_em_runs_on_a_distributed_cluster():
    distributed = pytest.importorskip("distributed")
    X, y = data("gda", seed=9)
    in_memory = GaussianDiscriminantAnalysis(**FAST).fit(X, y, unlabelled_label=-1)
    with (
        distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster),
    ):
        on_dask = GaussianDiscriminantAnalysis(**FAST).fit(*chunked(X, y), unlabelled_label=-1)
    assert_same_fit(in_memory, on_dask)


# -- refused ----------------------------------------------------------------------------------


def test_all_rows_unlabelled_is_refused():
    X, _ = data("multinomial")
    with pytest.raises(ValueError, match=rf"^y: all {N_ROWS} rows are unlabelled"):
        MultinomialNB(**FAST).fit(*chunked(X, np.full(N_ROWS, -1)), unlabelled_label=-1)


def test_one_labelled_class_is_refused():
    X, y = data("multinomial")
    y = np.where(y == 1, 0, y)
    with pytest.raises(ValueError, match=r"^y: the labelled rows hold only one class, 0 \("):
        MultinomialNB(**FAST).fit(*chunked(X, y), unlabelled_label=-1)


def test_nuts_with_unlabelled_dask_rows_is_refused():
    X, y = data("multinomial")
    with pytest.raises(ValueError, match=r"^y: 108 rows of the dask input are unlabelled.*"):
        MultinomialNB(inference="nuts").fit(*chunked(X, y), unlabelled_label=-1)


def test_loo_weight_with_dask_input_is_refused_before_any_chunk_is_read():
    X, y = data("multinomial")

    def unreadable(block):
        raise AssertionError("a chunk was read")

    X_dask, y_dask = chunked(X, y)
    with pytest.raises(ValueError, match=r"^unlabelled_weight: 'loo' .* needs the rows in memory"):
        MultinomialNB(**FAST).fit(
            X_dask.map_blocks(unreadable, dtype=float),
            y_dask,
            unlabelled_label=-1,
            unlabelled_weight="loo",
        )


def test_an_unlabelled_marker_for_a_mixed_model_on_dask_is_refused():
    X, y = data("gda")
    frame = dd.from_pandas(pd.DataFrame(X, columns=["a", "b", "c"]), npartitions=2)
    labels = dd.from_pandas(pd.Series(y), npartitions=2)
    with pytest.raises(ValueError, match=r"^unlabelled_label: NaiveBayes fits no unlabelled"):
        NaiveBayes(**FAST).fit(frame, labels, unlabelled_label=-1)


def test_a_bad_value_in_an_unlabelled_row_names_its_chunk():
    X, y = data("multinomial")
    row = int(np.flatnonzero(y == -1)[-1])  # in the last chunk, rows 100 to 119
    X[row, 1] = -2.0
    with pytest.raises(ValueError, match=r"^X: Negative values") as in_memory:
        MultinomialNB(**FAST).fit(X, y, unlabelled_label=-1)
    with pytest.raises(ValueError, match=r"\[dask chunk 4 of 5, rows 100 to 119") as chunked_error:
        MultinomialNB(**FAST).fit(*chunked(X, y), unlabelled_label=-1)
    assert str(chunked_error.value).startswith(str(in_memory.value).split(".")[0])
