"""Fits on Dask input: statistics reduced chunk by chunk equal the in-memory fit.

Every fit runs on a two-process ``distributed.LocalCluster`` (one per module) and on the
threaded scheduler. All fits are conjugate (nothing compiles).
"""

import subprocess
import sys
import threading

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

dask = pytest.importorskip("dask")  # a guard only: `make test` installs the dask extra
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

from bayesgen import (  # noqa: E402
    BernoulliNB,
    CategoricalNB,
    GaussianDiscriminantAnalysis,
    MultinomialNB,
    QuadraticDiscriminantAnalysis,
)
from bayesgen import closed_form as cf  # noqa: E402

FAST = {"inference": "conjugate", "compute_map": False, "draws": 30, "prior_draws": 0}
MODELS = {
    "multinomial": (MultinomialNB, cf.multinomial_nb),
    "bernoulli": (BernoulliNB, cf.bernoulli_nb),
    "categorical": (CategoricalNB, cf.categorical_nb),
    "gda": (GaussianDiscriminantAnalysis, cf.gda),
    "qda": (QuadraticDiscriminantAnalysis, cf.qda),
}
N_ROWS, N_FEATURES = 60, 4
ROW_CHUNKS = (13, 13, 13, 13, 8)


@pytest.fixture(scope="module")
def cluster_client():
    with (
        distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


@pytest.fixture(params=["distributed", "threads"])
def scheduler(request, cluster_client):
    """The active distributed Client, or (config overriding it) the threaded scheduler."""
    if request.param == "threads":
        with dask.config.set(scheduler="threads"):
            yield None
    else:
        yield cluster_client


def data(model: str, seed: int = 0):
    """Rows of the model's kind (three classes, 20 rows each, shuffled)."""
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.repeat(["a", "b", "c"], N_ROWS // 3))
    shift = (y == "b")[:, None] * 1.5 + (y == "c")[:, None] * 3.0
    if model in ("gda", "qda"):
        X = rng.normal(size=(N_ROWS, N_FEATURES)) * [1.0, 2.0, 0.5, 3.0] + shift
    elif model == "categorical":
        X = np.minimum(rng.poisson(1.0 + shift, size=(N_ROWS, N_FEATURES)), 4).astype(float)
    else:
        X = rng.poisson(1.0 + shift, size=(N_ROWS, N_FEATURES)).astype(float)
        if model == "bernoulli":
            X = (X > 1).astype(float)
    return X, y


def dask_input(X, y, *, sparse: bool = False):
    """X in row chunks (and two column chunks, joined per row chunk), y in the same rows."""
    X_dask = da.from_array(X, chunks=(ROW_CHUNKS, (2, 2)))
    if sparse:
        X_dask = X_dask.map_blocks(sp.csr_matrix, meta=sp.csr_matrix((0, 0)))
    return X_dask, da.from_array(y, chunks=(ROW_CHUNKS,))


def assert_same_closed_form(expected, got, rtol: float = 1e-12) -> None:
    """Same variables and coordinates; every value equal to ``rtol`` (Chan's merge of the
    Gaussian moments rounds differently from one pass)."""
    assert list(got.data_vars) == list(expected.data_vars)
    for name in expected.coords:
        np.testing.assert_array_equal(got[name].values, expected[name].values)
    for name, variable in expected.data_vars.items():
        left, right = variable.values, got[name].values
        if left.dtype.kind == "f":
            scale = np.nanmax(np.abs(left)) if np.any(np.isfinite(left)) else 1.0
            np.testing.assert_allclose(right, left, rtol=rtol, atol=rtol * scale, err_msg=name)
        else:
            np.testing.assert_array_equal(right, left, err_msg=name)
    assert got.attrs["n_samples"] == expected.attrs["n_samples"]


# -- results equal the in-memory fit ----------------------------------------------------------


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("model", list(MODELS))
def test_fit_on_dask_array_equals_in_memory_fit(model, sparse, scheduler):
    X, y = data(model)
    estimator = MODELS[model][0]
    whole = estimator(random_seed=3, **FAST).fit(X, y)
    chunked = estimator(random_seed=3, **FAST).fit(*dask_input(X, y, sparse=sparse))
    assert_same_closed_form(whole.closed_form_, chunked.closed_form_)
    assert chunked.closed_form_.attrs["dask_chunks"] == len(ROW_CHUNKS)
    # Seeded conjugate draws: the same generator calls on the same closed form.
    for name, draws in whole.idata_["posterior"].to_dataset().data_vars.items():
        np.testing.assert_allclose(
            chunked.idata_["posterior"][name].values, draws.values, rtol=1e-9, atol=1e-12
        )


@pytest.mark.parametrize("model", list(MODELS))
def test_closed_form_function_on_dask_array_equals_in_memory(model, scheduler):
    X, y = data(model, seed=1)
    fit = MODELS[model][1]
    assert_same_closed_form(fit(X, y), fit(*dask_input(X, y)))


def test_statistics_are_the_counts_of_all_rows(scheduler):
    X, y = data("multinomial", seed=2)
    got = cf.multinomial_nb(*dask_input(X, y, sparse=True), alpha=0.5)
    one_hot = (y[:, None] == np.array(["a", "b", "c"])).astype(float)
    np.testing.assert_array_equal(got["feature_count"].values, one_hot.T @ X)
    np.testing.assert_array_equal(got["class_count"].values, one_hot.sum(axis=0))
    expected = (one_hot.T @ X + 0.5) / ((one_hot.T @ X).sum(axis=1, keepdims=True) + 4 * 0.5)
    np.testing.assert_allclose(got["feature_prob"].values, expected, rtol=1e-14)


def test_dask_dataframe_input_keeps_column_names(scheduler):
    X, y = data("gda", seed=4)
    frame = pd.DataFrame(X, columns=["w", "x", "y", "z"]).assign(label=y)
    chunked = dd.from_pandas(frame, npartitions=4)
    whole = GaussianDiscriminantAnalysis(random_seed=0, **FAST).fit(frame[["w", "x", "y", "z"]], y)
    fitted = GaussianDiscriminantAnalysis(random_seed=0, **FAST).fit(
        chunked[["w", "x", "y", "z"]], chunked["label"]
    )
    assert_same_closed_form(whole.closed_form_, fitted.closed_form_)
    assert fitted.feature_names_in_.tolist() == ["w", "x", "y", "z"]


def test_the_classes_are_aligned_across_chunks_holding_some_of_them(scheduler):
    # Sorted labels: the first chunks hold class "a" only, the last "c" only.
    X, y = data("qda", seed=5)
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    assert_same_closed_form(cf.qda(X, y), cf.qda(*dask_input(X, y)))


def test_zero_weights_drop_rows_and_classes_as_in_memory(scheduler):
    X, y = data("multinomial", seed=6)
    weights = np.where(y == "c", 0.0, 2.0)
    weights[:13] = 0.0  # one chunk without any positive weight
    whole = MultinomialNB(random_seed=0, **FAST).fit(X, y, sample_weight=weights)
    X_dask, y_dask = dask_input(X, y)
    chunked = MultinomialNB(random_seed=0, **FAST).fit(
        X_dask, y_dask, sample_weight=da.from_array(weights, chunks=(ROW_CHUNKS,))
    )
    assert chunked.classes_.tolist() == ["a", "b"]
    assert_same_closed_form(whole.closed_form_, chunked.closed_form_)


def test_the_chunks_are_reduced_on_the_active_client(cluster_client):
    X, y = data("multinomial")
    with distributed.get_task_stream(cluster_client) as tasks:
        cf.multinomial_nb(*dask_input(X, y))
    names = [
        task["key"][0] if isinstance(task["key"], tuple) else task["key"] for task in tasks.data
    ]
    assert sum(name.startswith("_chunk_statistics") for name in names) == len(ROW_CHUNKS)
    assert any(name.startswith("_merge_all") for name in names)


# -- no rows kept -----------------------------------------------------------------------------


def test_a_dask_fit_keeps_no_rows_and_training_rows_says_why():
    X, y = data("bernoulli")
    with dask.config.set(scheduler="synchronous"):
        est = BernoulliNB(random_seed=0, **FAST).fit(*dask_input(X, y))
    assert "observed_data" not in est.idata_.children
    with pytest.raises(ValueError, match=r"training_rows: this model was fitted on dask input"):
        est.training_rows()


def test_each_chunk_is_computed_once():
    X, y = data("multinomial")
    calls, lock = [], threading.Lock()

    def counted(block, block_info=None):
        with lock:
            calls.append(block_info[None]["chunk-location"])
        return block

    X_dask, y_dask = dask_input(X, y)
    with dask.config.set(scheduler="threads"):
        cf.multinomial_nb(X_dask.map_blocks(counted, dtype=float), y_dask)
    assert sorted(calls) == sorted({(i, j) for i in range(len(ROW_CHUNKS)) for j in range(2)})


# -- bad chunks give the in-memory errors, naming the chunk -----------------------------------


def test_a_bad_value_in_a_chunk_names_the_chunk(scheduler):
    X, y = data("multinomial")
    X[30, 1] = -2.0  # chunk 2 holds rows 26 to 38
    with pytest.raises(ValueError, match=r"^X: Negative values in data") as in_memory:
        cf.multinomial_nb(X, y)
    with pytest.raises(ValueError, match=r"\[dask chunk 2 of 5, rows 26 to 38\]$") as chunked:
        MultinomialNB(**FAST).fit(*dask_input(X, y))
    assert str(chunked.value).startswith(str(in_memory.value))


def test_a_missing_label_in_a_chunk_names_the_chunk_and_its_local_position(scheduler):
    X, y = data("gda")
    y = y.astype(object)
    y[28] = None
    with pytest.raises(
        ValueError,
        match=r"^y: missing labels \(None/NaN\) at positions \[2\].*\[dask chunk 2 of 5, rows "
        r"26 to 38; positions count from its first row\]$",
    ):
        cf.gda(*dask_input(X, y))


def test_one_class_in_all_chunks_is_refused_as_in_memory():
    X, _ = data("multinomial")
    y = np.full(N_ROWS, "a")
    with pytest.raises(ValueError, match=r"^y: a classifier needs at least two classes; got only"):
        cf.multinomial_nb(*dask_input(X, y))


def test_labels_of_different_types_in_different_chunks_are_refused():
    X, _ = data("multinomial")
    y = np.array(["a", "b"] * 13 + [1, 2] * 17, dtype=object)
    y_dask = da.from_array(y, chunks=(ROW_CHUNKS,))
    with (
        dask.config.set(scheduler="threads"),
        pytest.raises(TypeError, match=r"^y: expected labels that are all integers or all"),
    ):
        cf.multinomial_nb(da.from_array(X, chunks=(ROW_CHUNKS, 4)), y_dask)


def test_y_split_unlike_a_dataframe_is_refused():
    X, y = data("gda")
    frame = dd.from_pandas(pd.DataFrame(X), npartitions=3)
    with pytest.raises(ValueError, match=r"^y: expected 3 chunks, one per row chunk of X"):
        cf.gda(frame, dd.from_pandas(pd.Series(y), npartitions=2))
    with pytest.raises(TypeError, match=r"^y: X's row chunks have unknown sizes"):
        cf.gda(frame, y)


def test_a_dask_y_with_in_memory_x_is_refused():
    X, y = data("gda")
    with pytest.raises(TypeError, match=r"^X: expected a dask.array.Array or dask.dataframe"):
        cf.gda(X, da.from_array(y, chunks=10))


# -- optional dependency ----------------------------------------------------------------------


# A module set to None in sys.modules cannot be imported, and importlib finds no spec for it.
BLOCK_DASK = "import sys\nsys.modules.update(dask=None, distributed=None)\n"


def test_the_package_works_where_dask_cannot_be_imported():
    code = BLOCK_DASK + (
        "from bayesgen import MultinomialNB, closed_form as cf\n"
        "cf.multinomial_nb([[1, 0], [0, 2]], [0, 1])\n"
        "MultinomialNB(inference='conjugate', compute_map=False, draws=5, prior_draws=0)"
        ".fit([[1, 0], [0, 2]], [0, 1])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
