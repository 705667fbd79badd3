"""Inputs are never modified: every public entry point leaves every input bit-for-bit as it came.

Each input kind (dense arrays of several dtypes and layouts, every scipy.sparse format, including
CSR with unsorted indices and with duplicate entries, DataFrames, lists) goes through the closed
forms, the estimators' fit and predictions, ``compare_predictions``, ``lambda_sweep``, ``report``
and the CLI. A deep snapshot taken before each call is compared after it: values, dtype, shape,
strides, flags, the sparse structure arrays and the cached ``has_sorted_indices`` /
``has_canonical_format`` flags, and for a DataFrame its frame and column buffers.
"""

import copy

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer

import bayesgen
from bayesgen import closed_form as cf

TEXTS = [
    "win cash now win prize",
    "meeting moved to friday",
    "cheap pills cheap offer win",
    "lunch at noon with the team",
    "claim your prize cash now",
    "team meeting notes attached",
    "offer ends now claim cash",
    "friday lunch with the team",
]
LABELS = ["spam", "ham", "spam", "ham", "spam", "ham", "spam", "ham"]
FAST = {"inference": "conjugate", "compute_map": False, "draws": 50, "chains": 2}
FAST_FIT = {**FAST, "prior_draws": 0, "random_seed": 0}

ESTIMATORS = {
    "multinomial_nb": (bayesgen.MultinomialNB, {}),
    "bernoulli_nb": (bayesgen.BernoulliNB, {"binarize": 0.5}),
    "categorical_nb": (bayesgen.CategoricalNB, {}),
    "gda": (bayesgen.GaussianDiscriminantAnalysis, {}),
}
CLOSED_FORMS = {
    "multinomial_nb": lambda X, y, **kw: cf.multinomial_nb(X, y, **kw),
    "bernoulli_nb": lambda X, y, **kw: cf.bernoulli_nb(X, y, binarize=0.5, **kw),
    "categorical_nb": lambda X, y, **kw: cf.categorical_nb(X, y, **kw),
    "gda": lambda X, y, **kw: cf.gda(X, y, **kw),
}


# --------------------------------------------------------------------------------------------
# Deep snapshots.


def snapshot(obj):
    """Everything about ``obj`` that a call could change, copied."""
    if isinstance(obj, np.ndarray):
        state = {
            "type": type(obj),
            "dtype": obj.dtype,
            "shape": obj.shape,
            "strides": obj.strides,
            "flags": {flag: obj.flags[flag] for flag in ("C", "F", "W", "O", "A")},
        }
        if obj.dtype.kind == "O":
            state["values"] = copy.deepcopy(obj.tolist())
        else:
            state["bytes"] = obj.tobytes(order="A")
        if isinstance(obj.base, np.ndarray):  # a view: its parent must not change either
            state["base"] = snapshot(obj.base)
        return state
    if sp.issparse(obj):
        return {
            "type": type(obj),
            "format": obj.format,
            "shape": obj.shape,
            "dtype": obj.dtype,
            "attributes": {name: snapshot(value) for name, value in sorted(vars(obj).items())},
        }
    if isinstance(obj, pd.DataFrame):
        return {
            "frame": obj.copy(deep=True),
            "columns": [_column_bytes(obj.iloc[:, j]) for j in range(obj.shape[1])],
            "dtypes": obj.dtypes.copy(),
        }
    if isinstance(obj, pd.Series):
        return {"series": obj.copy(deep=True), "bytes": _column_bytes(obj)}
    if isinstance(obj, tuple):
        return tuple(snapshot(item) for item in obj)
    if isinstance(obj, dict):
        return {key: snapshot(value) for key, value in obj.items()}
    return copy.deepcopy(obj)


def _column_bytes(series: pd.Series):
    """The stored values of a column: its bytes, or for objects (strings) the objects' values.

    The bytes of an object array are pointers. pandas' string dtype backed by pyarrow (present
    once dask's dataframe extra is installed) makes new string objects at every ``to_numpy``,
    so their pointers differ between two snapshots of an unchanged Series.
    """
    values = series.to_numpy(copy=True)
    return copy.deepcopy(values.tolist()) if values.dtype.kind == "O" else values.tobytes()


def assert_same(before, after, where: str) -> None:
    """Compare two snapshots; DataFrames and Series with pandas' own strict comparison."""
    if isinstance(before, dict) and "frame" in before:
        pd.testing.assert_frame_equal(after["frame"], before["frame"], check_exact=True)
        assert after["columns"] == before["columns"], f"{where}: a column's bytes changed"
        pd.testing.assert_series_equal(after["dtypes"], before["dtypes"])
    elif isinstance(before, dict) and "series" in before:
        pd.testing.assert_series_equal(after["series"], before["series"], check_exact=True)
        assert after["bytes"] == before["bytes"], f"{where}: the Series' bytes changed"
    elif isinstance(before, dict):
        assert before.keys() == after.keys(), f"{where}: attributes {before.keys()} changed"
        for key in before:
            assert_same(before[key], after[key], f"{where}.{key}")
    elif isinstance(before, tuple | list) and not isinstance(before, str):
        assert len(before) == len(after), f"{where}: length changed"
        for i, (b, a) in enumerate(zip(before, after, strict=True)):
            assert_same(b, a, f"{where}[{i}]")
    else:
        assert type(before) is type(after) and before == after, f"{where}: {before!r} != {after!r}"


class Guard:
    """Snapshots the inputs once; ``check(entry_point)`` asserts none of them changed."""

    def __init__(self, **inputs):
        self.inputs = inputs
        self.before = snapshot(inputs)

    def check(self, entry_point: str) -> None:
        assert_same(self.before, snapshot(self.inputs), f"after {entry_point}: input")


# --------------------------------------------------------------------------------------------
# Input kinds, all holding the same matrix.


def count_matrix() -> sp.csr_matrix:
    """CountVectorizer's int64 CSR matrix, whose indices come out unsorted."""
    return CountVectorizer().fit_transform(TEXTS)


def real_matrix() -> np.ndarray:
    rng = np.random.default_rng(0)
    shift = np.where(np.array(LABELS) == "spam", 1.5, -1.5)[:, None]
    return np.round(rng.normal(size=(len(LABELS), 3)) + shift, 3)


def _unsorted_csr(dense: np.ndarray, cls):
    """CSR with each row's column indices in descending order (not canonical)."""
    indptr, indices, data = [0], [], []
    for row in dense:
        columns = np.flatnonzero(row)[::-1]
        indices.extend(columns)
        data.extend(row[columns])
        indptr.append(len(indices))
    matrix = cls(
        (np.asarray(data, dtype=dense.dtype), np.asarray(indices, dtype=np.int32), indptr),
        shape=dense.shape,
    )
    assert not matrix.has_sorted_indices
    return matrix


def _duplicated_csr(dense: np.ndarray):
    """CSR whose every stored value is split over two entries of the same (row, column)."""
    indptr, indices, data = [0], [], []
    for row in dense:
        for column in np.flatnonzero(row):
            half = row[column] // 2 if dense.dtype.kind in "iu" else row[column] / 2
            indices += [column, column]
            data += [half, row[column] - half]
        indptr.append(len(indices))
    matrix = sp.csr_array(
        (np.asarray(data, dtype=dense.dtype), np.asarray(indices, dtype=np.int32), indptr),
        shape=dense.shape,
    )
    assert not matrix.has_canonical_format
    return matrix


def _strided_view(dense: np.ndarray) -> np.ndarray:
    wide = np.zeros((dense.shape[0], 2 * dense.shape[1]), dtype=dense.dtype)
    wide[:, ::2] = dense
    view = wide[:, ::2]
    assert not view.flags.c_contiguous and not view.flags.f_contiguous
    return view


def _coo_with_duplicates(dense: np.ndarray):
    coo = sp.coo_array(dense)
    half = coo.data // 2 if dense.dtype.kind in "iu" else coo.data / 2
    return sp.coo_array(
        (np.concatenate([half, coo.data - half]), (np.tile(coo.row, 2), np.tile(coo.col, 2))),
        shape=dense.shape,
    )


def _frame(dense: np.ndarray) -> pd.DataFrame:
    frame = pd.DataFrame(dense, columns=[f"f{j}" for j in range(dense.shape[1])])
    return frame.astype({"f0": np.float64})  # two dtypes, so two blocks


X_KINDS = {
    "ndarray-int64": lambda d: d.astype(np.int64),
    "ndarray-float64": lambda d: d.astype(np.float64),
    "ndarray-float32": lambda d: d.astype(np.float32),
    "ndarray-fortran": lambda d: np.asfortranarray(d, dtype=np.float64),
    "ndarray-strided-view": lambda d: _strided_view(d.astype(np.float64)),
    "list": lambda d: d.tolist(),
    "dataframe": _frame,
    "csr_matrix-unsorted": lambda d: _unsorted_csr(d, sp.csr_matrix),
    "csr_array-unsorted-float64": lambda d: _unsorted_csr(d.astype(np.float64), sp.csr_array),
    "csr_array-duplicates": _duplicated_csr,
    "csr_matrix-canonical-float64": lambda d: sp.csr_matrix(d.astype(np.float64)),
    "csc_matrix": lambda d: sp.csc_matrix(d),
    "csc_array-unsorted": lambda d: _unsorted_csr(d.T.copy(), sp.csr_array).T,
    "coo_array-duplicates": _coo_with_duplicates,
    "lil_matrix": lambda d: sp.lil_matrix(d),
    "dok_array": lambda d: sp.dok_array(d),
    "bsr_array": lambda d: sp.bsr_array(d),
    "dia_array": lambda d: sp.dia_array(d),
}


def make_X(model: str, kind: str):
    dense = (
        count_matrix().toarray()
        if model != "gda"
        else (real_matrix() * 1000).astype(np.int64)
        if kind == "ndarray-int64"
        else real_matrix()
    )
    if kind == "csr_array-duplicates" and model == "gda":
        dense = dense.astype(np.float64)
    return X_KINDS[kind](dense)


CASES = [(model, kind) for model in ESTIMATORS for kind in X_KINDS]


# --------------------------------------------------------------------------------------------
# Every entry point, every input kind.


@pytest.mark.parametrize(("model", "kind"), CASES, ids=[f"{m}-{k}" for m, k in CASES])
def test_no_entry_point_modifies_its_inputs(model, kind):
    X = make_X(model, kind)
    y = list(LABELS)
    names = None if kind == "dataframe" else [f"w{j}" for j in range(np.shape(X)[1])]
    guard = Guard(X=X, y=y, feature_names=names)

    estimates = CLOSED_FORMS[model](X, y, feature_names=names)
    guard.check(f"closed_form.{model}")
    cf.predict_proba(estimates, X)
    guard.check("closed_form.predict_proba")
    if model != "gda":
        cf.posterior_predictive_proba(estimates, X)
        guard.check("closed_form.posterior_predictive_proba")

    cls, options = ESTIMATORS[model]
    est = cls(**FAST_FIT, **options).fit(X, y, feature_names=names)
    guard.check("fit")
    for method in ("predict", "predict_proba", "predict_proba_draws", "predict_proba_interval"):
        getattr(est, method)(X)
        guard.check(method)
    if model != "gda":
        est.posterior_predictive_proba(X)
        guard.check("posterior_predictive_proba")
    bayesgen.compare_predictions(est, X, y)
    guard.check("compare_predictions")
    if model != "gda":  # the sweep is over naive Bayes smoothing; it takes no feature_names
        sweep = {"draws": 50, "chains": 2, "compute_map": False}
        bayesgen.lambda_sweep(X, y, model=model, lambdas=(0.5, 2.0), **sweep, **options)
        guard.check("lambda_sweep")


Y_KINDS = {
    "ndarray-int64": lambda: np.array([1 if label == "spam" else 0 for label in LABELS]),
    "ndarray-str": lambda: np.array(LABELS),
    "ndarray-object": lambda: np.array(LABELS, dtype=object),
    "ndarray-float64": lambda: np.array([1.0 if label == "spam" else 0.0 for label in LABELS]),
    "ndarray-column": lambda: np.array(LABELS)[:, None],
    "ndarray-strided-view": lambda: np.repeat(np.array(LABELS), 2)[::2],
    "list": lambda: list(LABELS),
    "tuple": lambda: tuple(LABELS),
    "series": lambda: pd.Series(LABELS, index=np.arange(10, 10 + len(LABELS))),
    "series-category": lambda: pd.Series(LABELS, dtype="category"),
}


@pytest.mark.filterwarnings("ignore:A column-vector y was passed")
@pytest.mark.parametrize("kind", sorted(Y_KINDS))
def test_y_of_every_kind_is_left_unchanged(kind):
    X, y = count_matrix(), Y_KINDS[kind]()
    guard = Guard(X=X, y=y)
    cf.multinomial_nb(X, y)
    guard.check("closed_form.multinomial_nb")
    est = bayesgen.MultinomialNB(**FAST_FIT).fit(X, y)
    guard.check("fit")
    if kind != "ndarray-column":
        bayesgen.compare_predictions(est, X, y)
        guard.check("compare_predictions")


def test_sklearn_sees_the_same_counts_after_bayesgen_used_the_matrix():
    """The issue's case: CountVectorizer's unsorted CSR matrix, then scikit-learn on it."""
    from sklearn.naive_bayes import MultinomialNB

    X = count_matrix()
    assert not X.has_sorted_indices
    expected = MultinomialNB().fit(X, LABELS).feature_count_
    guard = Guard(X=X)
    cf.multinomial_nb(X, LABELS)
    est = bayesgen.MultinomialNB(**FAST_FIT).fit(X, LABELS)
    est.predict_proba(X)
    est.posterior_predictive_proba(X)
    guard.check("bayesgen")
    np.testing.assert_array_equal(MultinomialNB().fit(X, LABELS).feature_count_, expected)


def test_report_leaves_held_out_data_unchanged(tmp_path):
    X, y = make_X("multinomial_nb", "csr_matrix-unsorted"), np.array(LABELS)
    est = bayesgen.MultinomialNB(**FAST_FIT).fit(X, y)
    guard = Guard(X=X, y=y)
    bayesgen.report(est, tmp_path / "report", X_test=X, y_test=y, max_features=1, top_k=3)
    guard.check("report")


@pytest.mark.parametrize("kind", ["dataframe", "ndarray-strided-view", "csr_matrix-unsorted"])
def test_gda_plots_of_the_report_leave_held_out_data_unchanged(kind):
    """The report's only GDA-specific use of X_test (the rest is covered above)."""
    import matplotlib.pyplot as plt

    from bayesgen.plotting import plots

    X, y = make_X("gda", kind), list(LABELS)
    est = bayesgen.GaussianDiscriminantAnalysis(**FAST_FIT).fit(X, y)
    guard = Guard(X=X, y=y)
    plt.close(plots.plot_decision_boundary(est, X, y, n_boundaries=5))
    guard.check("plot_decision_boundary")


@pytest.mark.parametrize("model", ["multinomial", "gda"])
def test_cli_leaves_the_data_file_unchanged(model, tmp_path):
    from bayesgen.cli import main

    dense = count_matrix().toarray() if model != "gda" else real_matrix()
    table = pd.DataFrame(dense, columns=[f"f{j}" for j in range(dense.shape[1])])
    table["label"] = LABELS
    data = tmp_path / "train.csv"
    table.to_csv(data, index=False)
    before = data.read_bytes()
    model_file = tmp_path / "model.nc"
    fit = ["fit", model, str(data), "--target", "label", "--inference", "conjugate"]
    fit += ["--no-map", "--draws", "50", "--seed", "0", "--output", str(model_file), "--quiet"]
    assert main(fit) == 0
    assert data.read_bytes() == before
    model_bytes = model_file.read_bytes()
    predict = ["predict", str(model_file), str(data), "--output", str(tmp_path / "p.csv")]
    assert main(predict) == 0
    assert data.read_bytes() == before
    assert model_file.read_bytes() == model_bytes
