"""Catalogue of bad data: X, y, feature names, binarize and n_categories, as a new user passes them.

One table, one row per bad input: (id, call, expected exception type, message regex). Every
message names the argument, what was expected and what came. A second, smaller table lists
inputs that look odd but are valid, with the exact outcome each must give.
"""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from bayesgen import closed_form as cf
from bayesgen.estimators.models import BernoulliNB, GaussianDiscriminantAnalysis
from bayesgen.input.data import check_labels

COUNTS = np.array([[1, 0, 2], [0, 3, 1], [2, 2, 0], [1, 1, 1]], dtype=float)
LABELS = [0, 1, 0, 1]
REAL = np.array([[0.1, 1.2], [1.3, -0.4], [-0.5, 0.9], [2.1, 0.3], [0.7, -1.1], [1.9, 1.4]])
REAL_LABELS = [0, 1, 0, 1, 0, 1]
LABELS_BY_PAIR = [0, 0, 1, 1]
FAST = {"inference": "conjugate", "compute_map": False, "draws": 20, "prior_draws": 0}


HUGE_COUNTS = np.where(np.eye(4, 3) == 1, 1e308, COUNTS)  # finite, but they sum to inf


def counts_with(row: int, col: int, value) -> np.ndarray:
    X = COUNTS.astype(object if isinstance(value, str | dict) or value is None else float)
    X[row, col] = value
    return X


def multinomial(X=COUNTS, y=LABELS, **options):
    return lambda: cf.multinomial_nb(X, y, **options)


def bernoulli(X=COUNTS, y=LABELS, **options):
    return lambda: cf.bernoulli_nb(X, y, **options)


def categorical(X=COUNTS, y=LABELS, **options):
    return lambda: cf.categorical_nb(X, y, **options)


def predict_multinomial(X, **options):
    return lambda: cf.predict_proba(cf.multinomial_nb(COUNTS, LABELS, **options), X)


def predict_categorical(X, **options):
    return lambda: cf.predict_proba(cf.categorical_nb(COUNTS, LABELS, **options), X)


def frame(columns, values=COUNTS):
    return pd.DataFrame(values, columns=columns)


MIXED = r"y: expected labels that are all integers or all strings; got a mix of "
MISSING = r"y: missing labels \(None/NaN\) at positions "
NUL = r"must not contain the NUL character '\\0'"
BINARIZE = r"binarize: expected a finite real threshold or None; got "
N_CATEGORIES = r"n_categories: expected an int or an array of 3 ints \(one per feature\); got "
TOO_MANY_CELLS = r"class × feature × category table would need .* cells \(more than 1e\+08\)"
FINITE = r"X: expected finite values; got 1 NaN or infinite entries"

# One case per row or two, as a table; ruff format would spread each over six lines.
# fmt: off
BAD_INPUTS = [
    # -- y: labels that would merge, go missing or are not labels at all ----------------------
    ("y-int-and-str-stringify-alike", multinomial(y=[1, "1", 2, 2]), TypeError,
     MIXED + r"\['int', 'str'\]"),
    ("y-object-array-int-and-str", multinomial(y=np.array([0, "spam", 1, "ham"], dtype=object)),
     TypeError, MIXED + r"\['int', 'str'\]"),
    ("y-bool-and-int", multinomial(y=[True, 1, 0, 0]), TypeError, MIXED + r"\['bool', 'int'\]"),
    ("y-trailing-nul-label", multinomial(y=["x\0", "x", "y", "y"]), ValueError,
     r"y: labels " + NUL + r"; got 'x\\x00' at position 0"),
    ("y-inner-nul-label-array", multinomial(y=np.array(["a\0b", "ab", "c", "c"])), ValueError,
     r"y: labels " + NUL + r"; got 'a\\x00b' at position 0"),
    ("y-none-label", multinomial(y=["spam", None, "ham", "ham"]), ValueError,
     MISSING + r"\[1\]"),
    ("y-nan-label-float-array", multinomial(y=np.array([0.0, 1.0, np.nan, np.nan])), ValueError,
     MISSING + r"\[2, 3\]"),
    ("y-nan-label-in-list", multinomial(y=[0, np.nan, 1, 1]), ValueError, MISSING + r"\[1\]"),
    ("y-pandas-na-nullable-int", multinomial(y=pd.Series([1, pd.NA, 2, 2], dtype="Int64")),
     ValueError, MISSING + r"\[1\]"),
    ("y-pandas-na-string", multinomial(y=pd.Series(["a", "b", pd.NA, "a"], dtype="string")),
     ValueError, MISSING + r"\[2\]"),
    ("y-bytes-list", multinomial(y=[b"spam", b"ham", b"spam", b"ham"]), TypeError,
     r"y: expected integer or string labels; got bytes\. Decode them first"),
    ("y-bytes-array", multinomial(y=np.array([b"spam", b"ham", b"spam", b"ham"])), TypeError,
     r"y: expected integer or string labels; got bytes \(dtype \|S4\)\. Decode them first"),
    ("y-dict-labels", multinomial(y=[{}, {}, {}, {}]), TypeError,
     r"y: expected labels that are all integers or all strings; got labels of type dict\."),
    ("y-two-columns", multinomial(y=np.zeros((4, 2))), ValueError,
     r"y: expected a 1-D array of class labels \(multi-output targets are not supported\); "
     r"got shape \(4, 2\)"),
    ("y-three-dimensional", multinomial(y=np.zeros((4, 1, 1))), ValueError,
     r"y: expected a 1-D array of class labels; got shape \(4, 1, 1\)"),
    ("y-scalar", multinomial(y=5), ValueError,
     r"y: expected a 1-D array of class labels; got a single int value"),
    ("y-continuous", multinomial(y=[0.0, 0.5, 1.0, 1.0]), ValueError,
     r"y: expected class labels \(integers or strings\); got non-integer floats \(continuous "
     r"values such as \[0\.5\]\)"),
    ("y-infinite", multinomial(y=[np.inf, 0.0, 1.0, 1.0]), ValueError,
     r"got non-integer floats \(continuous values such as \[inf\]\)"),
    ("y-integer-beyond-int64", multinomial(y=[2**70, 0, 1, 1]), ValueError,
     r"y: expected integer labels that fit in 64 bits"),
    ("y-complex", multinomial(y=np.array([1j, 0, 1, 1])), TypeError,
     r"y: expected integer or string labels; got dtype complex128"),
    ("y-datetime", multinomial(y=np.array(["2024-01-01"] * 2 + ["2024-01-02"] * 2, "M8[D]")),
     TypeError, r"y: expected integer or string labels; got dtype datetime64\[D\]"),
    ("y-one-class", multinomial(y=["spam"] * 4), ValueError,
     r"y: a classifier needs at least two classes; got only one class 'spam'"),
    ("y-empty", lambda: check_labels([]), ValueError,
     r"y: expected at least one label per sample; got an empty y"),
    ("y-length-differs-from-X", multinomial(y=[0, 1, 0]), ValueError,
     r"X and y must have the same number of samples; got X with 4 rows and y with 3 labels"),
    # -- feature_names -----------------------------------------------------------------------
    ("feature-names-too-few", multinomial(feature_names=["a", "b"]), ValueError,
     r"feature_names: expected 3 names, one per column of X; got 2\."),
    ("feature-names-two-dimensional", multinomial(feature_names=[["a", "b", "c"]]), ValueError,
     r"feature_names: expected 3 names, one per column of X; got an array of shape \(1, 3\)"),
    ("feature-names-duplicates", multinomial(feature_names=["a", "b", "a"]), ValueError,
     r"feature_names: expected distinct names; got duplicates \['a'\]"),
    ("feature-names-nul", multinomial(feature_names=["a", "b", "c\0"]), ValueError,
     r"feature_names: names " + NUL + r"; got 'c\\x00' at position 2"),
    ("feature-names-ints", multinomial(feature_names=[0, 1, 2]), TypeError,
     r"feature_names: expected strings; got int 0 at position 0"),
    ("feature-names-none-entry", multinomial(feature_names=["a", None, "c"]), TypeError,
     r"feature_names: expected strings; got NoneType None at position 1"),
    ("feature-names-one-string", multinomial(feature_names="abc"), TypeError,
     r"feature_names: expected a sequence of 3 strings, one per column of X; got str"),
    ("feature-names-set", multinomial(feature_names={"a", "b", "c"}), TypeError,
     r"feature_names: expected a sequence of 3 strings, one per column of X; got set"),
    # -- DataFrame columns -------------------------------------------------------------------
    ("dataframe-duplicate-columns", multinomial(frame(["cheap", "win", "cheap"])), ValueError,
     r"X: expected distinct column names; got duplicates \['cheap'\]"),
    ("dataframe-int-and-str-column-alike", multinomial(frame([1, "1", "b"])), ValueError,
     r"X: expected distinct column names; got duplicates \['1'\]"),
    ("dataframe-nul-in-column", multinomial(frame(["a", "b\0", "c"])), ValueError,
     r"X: column names " + NUL + r"; got 'b\\x00' at position 1"),
    ("dataframe-string-column", multinomial(frame(["a", "b", "c"]).assign(c=list("wxyz"))),
     TypeError, r"X: expected numeric columns; got non-numeric columns \['c'\]"),
    ("dataframe-complex-column", multinomial(frame(["a", "b", "c"]).assign(c=1j)), TypeError,
     r"X: expected numeric columns; got non-numeric columns \['c'\]"),
    ("dataframe-nullable-na",
     multinomial(frame(["a", "b", "c"]).assign(c=pd.array([1, None, 2, 0], dtype="Int64"))),
     ValueError, FINITE),
    ("predict-dataframe-other-columns",
     lambda: cf.predict_proba(cf.multinomial_nb(frame(list("abc")), LABELS), frame(list("abd"))),
     ValueError, r"X feature names differ from those seen at fit \(unexpected \['d'\], missing "
     r"\['c'\]\)"),
    ("predict-dataframe-reordered",
     lambda: cf.predict_proba(cf.multinomial_nb(frame(list("abc")), LABELS), frame(list("cba"))),
     ValueError, r"X feature names differ from those seen at fit \(same names in a different "
     r"order\)"),
    # -- binarize ----------------------------------------------------------------------------
    ("binarize-nan", bernoulli(binarize=np.nan), ValueError, BINARIZE + r"nan\."),
    ("binarize-inf", bernoulli(binarize=np.inf), ValueError, BINARIZE + r"inf\."),
    ("binarize-minus-inf", bernoulli(binarize=-np.inf), ValueError, BINARIZE + r"-inf\."),
    ("binarize-string", bernoulli(binarize="0.5"), TypeError, BINARIZE + r"str '0\.5'\."),
    ("binarize-bool", bernoulli(binarize=True), TypeError, BINARIZE + r"bool True\."),
    ("binarize-array", bernoulli(binarize=np.array([0.5, 1.0, 2.0])), TypeError,
     BINARIZE + r"ndarray array\(\[0\.5, 1\. , 2\. \]\)\."),
    ("binarize-negative-sparse", bernoulli(sp.csr_array(COUNTS), binarize=-1.0), ValueError,
     r"binarize: a negative threshold \(-1\.0\) would turn every stored zero of the sparse X"),
    # -- values too large for float64 ----------------------------------------------------------
    ("counts-sum-overflows-at-fit", multinomial(HUGE_COUNTS), ValueError,
     r"X: the counts are too large for float64: they sum to inf \(largest value 1e\+308\)"),
    ("counts-sum-overflows-sparse", multinomial(sp.csr_array(HUGE_COUNTS)), ValueError,
     r"X: the counts are too large for float64: they sum to inf"),
    ("counts-sum-overflows-estimator",
     lambda: BernoulliNB(binarize=None, **FAST).fit(HUGE_COUNTS > 1, LABELS).predict_proba(
         [[1e308, 1e308, 0.0]]), ValueError, r"X: the Bernoulli model expects binary 0/1"),
    ("counts-sum-overflows-at-predict", predict_multinomial([[1e308, 1e308, 0.0]]), ValueError,
     r"X: the counts are too large for float64: they sum to inf"),
    # x2 has probability 0.3 in both classes: 1.7e308 · log 0.3 overflows to -inf in each.
    ("log-likelihood-overflows-at-predict", predict_multinomial([[0.0, 0.0, 1.7e308]]),
     ValueError, r"X: row 0 makes the log-likelihood overflow to NaN or infinity"),
    ("log-likelihood-overflows-exact-predictive",
     lambda: cf.posterior_predictive_proba(cf.multinomial_nb(COUNTS, LABELS), [[1e307, 0, 0]]),
     ValueError, r"X: row 0 makes the log-likelihood overflow to NaN or infinity"),
    ("gda-values-overflow-at-fit", lambda: cf.gda(REAL * 1e160, REAL_LABELS), ValueError,
     r"X: values as large as 2\.1e\+160 overflow float64 in the class means and the covariance"),
    ("gda-values-overflow-at-predict",
     lambda: cf.predict_proba(cf.gda(REAL, REAL_LABELS), [[1e300, 0.0]]), ValueError,
     r"X: values as large as 1e\+300 overflow float64"),
    # -- categorical codes -------------------------------------------------------------------
    ("category-code-1e12", categorical(counts_with(0, 1, 1e12)), ValueError,
     r"X: feature 'x1' \(column 1\): X has category code 1000000000000, so the " + TOO_MANY_CELLS
     + r".*OrdinalEncoder"),
    ("category-code-beyond-int64", categorical(counts_with(2, 0, 1e20)), ValueError,
     r"X: feature 'x0' \(column 0\): X has category code 100000000000000000000"),
    ("category-code-1e12-sparse", categorical(sp.csr_array(counts_with(0, 2, 1e12))), ValueError,
     r"X: feature 'x2' \(column 2\): X has category code 1000000000000"),
    ("category-code-1e12-named", categorical(frame(["colour", "size", "shape"],
                                                   counts_with(3, 2, 1e12))), ValueError,
     r"X: feature 'shape' \(column 2\): X has category code 1000000000000"),
    ("category-code-negative", categorical(counts_with(0, 0, -1.0)), ValueError,
     r"X: .*the model expects non-negative integer category codes; got negative values "
     r"\(min -1\)"),
    ("category-code-fractional", categorical(counts_with(0, 0, 1.5)), ValueError,
     r"X: the categorical model expects non-negative integer category codes; got fractional"),
    ("predict-category-code-unseen", predict_categorical([[0, 4, 0]]), ValueError,
     r"X: category code 4 of feature 'x1' \(row 0\) was not among the 4 categories at fit"),
    ("predict-category-code-1e12", predict_categorical([[0, 0, 1e12]]), ValueError,
     r"X: category code 1000000000000 of feature 'x2' \(row 0\) was not among the 3 categories"),
    ("predict-category-code-negative", predict_categorical([[0, -2, 0]]), ValueError,
     r"X: .*the model expects non-negative integer category codes; got negative values "
     r"\(min -2\)"),
    # -- n_categories ------------------------------------------------------------------------
    ("n-categories-wrong-length", categorical(n_categories=[4, 4]), ValueError,
     N_CATEGORIES + r"shape \(2,\)"),
    ("n-categories-two-dimensional", categorical(n_categories=[[4, 4, 4]]), ValueError,
     N_CATEGORIES + r"shape \(1, 3\)"),
    ("n-categories-string", categorical(n_categories="4"), TypeError, N_CATEGORIES + r"str '4'"),
    ("n-categories-bool", categorical(n_categories=True), TypeError, N_CATEGORIES + r"bool True"),
    ("n-categories-list-of-strings", categorical(n_categories=["4", "4", "4"]), TypeError,
     N_CATEGORIES + r"list \['4', '4', '4'\]"),
    ("n-categories-fractional", categorical(n_categories=4.5), ValueError,
     r"n_categories: expected whole numbers of categories; got \[4\.5\]"),
    ("n-categories-nan", categorical(n_categories=[4, np.nan, 4]), ValueError,
     r"n_categories: expected whole numbers of categories; got \[nan\]"),
    ("n-categories-negative", categorical(n_categories=[-1, 4, 4]), ValueError,
     r"n_categories: expected at least 1 category per feature; got \[-1\]"),
    ("n-categories-zero", categorical(n_categories=0), ValueError,
     r"n_categories: expected at least 1 category per feature; got \[0\]"),
    ("n-categories-below-max-code", categorical(n_categories=[3, 3, 3]), ValueError,
     r"n_categories: feature 'x1' \(column 1\) has category code 3 in X, but n_categories "
     r"gives only 3 categories"),
    ("n-categories-huge", categorical(n_categories=10**9), ValueError,
     r"X: feature 'x0' \(column 0\): n_categories gives 1000000000, so the " + TOO_MANY_CELLS),
    # -- X: shapes and types -----------------------------------------------------------------
    ("X-none", multinomial(None), TypeError, r"X: expected a 2-D feature matrix; got None"),
    ("X-ragged-rows", multinomial([[1, 2], [3]], [0, 1]), TypeError,
     r"X: expected a 2-D numeric array; could not read it: its rows have different lengths "
     r"\[2, 1\] \(expected rows of equal length\)"),
    ("X-strings", multinomial([["cheap", "pills"], ["team", "lunch"]], [0, 1]), TypeError,
     r"X: expected numeric values; got dtype <U5 with non-numeric entries \(strings\)"),
    ("X-numeric-strings", multinomial([["1", "2"], ["3", "4"]], [0, 1]), TypeError,
     r"X: expected numeric values; got dtype <U1 with non-numeric entries \(strings\)"),
    ("X-object-with-strings", multinomial(counts_with(0, 0, "1")), TypeError,
     r"X: expected numeric values; got dtype object with non-numeric entries \(strings\)"),
    ("X-object-with-dict", multinomial(counts_with(0, 0, {"a": 1})), TypeError,
     r"X: expected numeric values; got dtype object with non-numeric entries \(float\(\) "
     r"argument must be a string or a real number, not 'dict'\)"),
    ("X-object-with-none", multinomial(counts_with(2, 1, None)), ValueError,
     FINITE + r" \(missing values such as None count as NaN\)"),
    ("X-complex-dense", multinomial(COUNTS + 1j), ValueError,
     r"X: Complex data not supported; expected real numeric values, got dtype complex128"),
    ("X-complex-sparse", multinomial(sp.csr_array(COUNTS + 1j)), ValueError,
     r"X: Complex data not supported; expected a real sparse matrix, got dtype complex128"),
    ("X-datetime", multinomial(np.zeros((4, 3), dtype="M8[D]")), TypeError,
     r"X: expected real numeric values; got dtype datetime64\[D\]"),
    ("X-one-dimensional", multinomial(COUNTS[:, 0]), ValueError,
     r"X: expected a 2-D array \(n_samples, n_features\); got a 1-D array of shape \(4,\)\. "
     r".*X\.reshape\(-1, 1\) for one feature"),
    ("X-three-dimensional", multinomial(COUNTS[:, :, None]), ValueError,
     r"X: expected a 2-D array; got 3-D shape \(4, 3, 1\)"),
    ("X-no-rows", multinomial(np.zeros((0, 3)), []), ValueError,
     r"X: expected at least one sample and one feature; got .*0 sample\(s\)"),
    ("X-no-columns", multinomial(np.zeros((4, 0))), ValueError,
     r"X: expected at least one sample and one feature; got .*0 feature\(s\)"),
    ("X-sparse-no-columns", multinomial(sp.csr_array((4, 0))), ValueError,
     r"X: expected at least one sample and one feature; got .*0 feature\(s\)"),
    # -- X: values -----------------------------------------------------------------------------
    ("X-nan-dense", multinomial(counts_with(1, 2, np.nan)), ValueError, FINITE),
    ("X-inf-dense", multinomial(counts_with(0, 0, np.inf)), ValueError, FINITE),
    ("X-nan-sparse", multinomial(sp.csr_array(counts_with(1, 2, np.nan))), ValueError, FINITE),
    ("X-inf-sparse", multinomial(sp.csr_array(counts_with(3, 1, -np.inf))), ValueError, FINITE),
    ("X-nan-gda", lambda: cf.gda(np.where(REAL > 2, np.nan, REAL), REAL_LABELS), ValueError,
     FINITE),
    ("X-negative-counts", multinomial(counts_with(2, 1, -1.0)), ValueError,
     r"X: .*the model expects non-negative counts or weights .* got negative values \(min -1\)"),
    ("X-negative-counts-sparse", multinomial(sp.csr_array(counts_with(2, 1, -2.5))), ValueError,
     r"got negative values \(min -2\.5\)"),
    ("X-not-binary-for-bernoulli", bernoulli(), ValueError,
     r"X: the Bernoulli model expects binary 0/1 features; got other values such as \[2\.0, "
     r"3\.0\]\. Pass binarize=<threshold>"),
    ("predict-X-wrong-feature-count", predict_multinomial([[1.0, 2.0]]), ValueError,
     r"X has 2 features, but .* 3 features"),
    ("predict-X-nan", predict_multinomial([[1.0, np.nan, 0.0]]), ValueError, FINITE),
    # -- X: missing entries (NaN) -------------------------------------------------------------
    ("X-nan-multinomial-says-why", multinomial(counts_with(1, 2, np.nan)), ValueError,
     FINITE + r".*a document with a missing word count has no known length"),
    ("X-all-missing-column", bernoulli(np.where(np.arange(3) == 2, np.nan, COUNTS > 1)),
     ValueError, r"X: column 2 has no observed entry \(every row is missing it"),
    ("X-nan-in-sparse-for-a-model-taking-nan",
     bernoulli(sp.csr_array(np.where(np.eye(4, 3) == 1, np.nan, (COUNTS > 1).astype(float)))),
     ValueError, r"in a sparse matrix, whose unstored entries are zeros, not missing"),
    ("X-inf-for-a-model-taking-nan", bernoulli(np.where(np.eye(4, 3) == 1, np.inf, 0.0)),
     ValueError, r"infinite values are never taken"),
    ("y-nan-for-a-model-taking-nan", bernoulli(np.where(np.eye(4, 3) == 1, np.nan, 1.0),
                                                y=[0, np.nan, 1, 1]),
     ValueError, MISSING + r"\[1\]"),
    ("gda-lkj-with-nan",
     lambda: GaussianDiscriminantAnalysis(cov_prior="lkj", draws=200, tune=200, chains=2).fit(
         np.where(REAL > 2, np.nan, REAL), REAL_LABELS),
     ValueError, r"missing"),
    ("gda-sparse-X-estimator-complex",
     lambda: GaussianDiscriminantAnalysis(**FAST).fit(sp.csr_array(REAL + 1j), REAL_LABELS),
     ValueError, r"X: Complex data not supported"),
]
# fmt: on


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [case[1:] for case in BAD_INPUTS],
    ids=[case[0] for case in BAD_INPUTS],
)
def test_bad_input_gets_a_clear_error(call, error, message):
    with pytest.raises(error, match=message) as raised:
        call()
    assert type(raised.value) is error  # exactly this type, not a subclass (or NumPy's own)


def test_catalogue_ids_are_unique():
    ids = [case[0] for case in BAD_INPUTS]
    assert len(ids) == len(set(ids))


# --------------------------------------------------------------------------------------------
# Odd but valid: each gives an exact outcome, not an error.

# fmt: off
VALID_INPUTS = [
    ("y-column-vector-is-raveled",
     lambda: cf.multinomial_nb(COUNTS, np.array(LABELS)[:, None])["class_count"].values.tolist(),
     [2.0, 2.0]),
    ("y-bool-labels-are-two-classes",
     lambda: cf.multinomial_nb(COUNTS, [True, False, True, True])["class"].values.tolist(),
     [False, True]),
    ("y-integer-valued-floats-and-ints-mix",
     lambda: cf.multinomial_nb(COUNTS, [1, 2.0, 1.0, 2])["class"].values.tolist(), [1, 2]),
    ("y-one-column-dataframe",
     lambda: cf.multinomial_nb(COUNTS, pd.DataFrame({"y": ["b", "a", "b", "a"]}))[
         "class_count"].values.tolist(), [2.0, 2.0]),
    ("dataframe-int-column-names",
     lambda: cf.multinomial_nb(frame([0, 1, 2]), LABELS)["feature"].values.tolist(),
     ["0", "1", "2"]),
    ("X-bool-for-bernoulli",
     lambda: cf.bernoulli_nb(COUNTS > 1, LABELS)["feature_count"].values.tolist(),
     [[1.0, 1.0, 1.0], [0.0, 1.0, 0.0]]),
    ("binarize-numpy-float32",
     lambda: cf.bernoulli_nb(COUNTS, LABELS, binarize=np.float32(1.5))[
         "feature_count"].values.tolist(), [[1.0, 1.0, 1.0], [0.0, 1.0, 0.0]]),
    ("binarize-integer", lambda: cf.bernoulli_nb(COUNTS, LABELS, binarize=1).attrs["binarize"],
     1.0),
    ("n-categories-larger-than-needed",
     lambda: cf.categorical_nb(COUNTS, LABELS, n_categories=[5, 4, 6])[
         "n_categories"].values.tolist(), [5, 4, 6]),
    ("n-categories-integer-valued-float",
     lambda: cf.categorical_nb(COUNTS, LABELS, n_categories=5.0)["n_categories"].values.tolist(),
     [5, 5, 5]),
    ("class-whose-rows-all-miss-a-feature-keeps-its-prior",
     lambda: cf.bernoulli_nb(np.array([[1.0, np.nan], [0.0, np.nan], [1.0, 1.0], [0.0, 0.0]]),
                             LABELS_BY_PAIR)["feature_prob"].values[0, 1].item(), 0.5),
    ("row-with-every-entry-missing-predicts-the-class-prior",
     lambda: cf.predict_proba(cf.bernoulli_nb(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0],
                                                        [0.0, 0.0], [1.0, 0.0]]),
                                              [0, 0, 0, 1, 1]),
                              [[np.nan, np.nan]]).round(12).tolist(),
     [[round(4 / 7, 12), round(3 / 7, 12)]]),
    ("feature-names-numpy-strings",
     lambda: cf.multinomial_nb(COUNTS, LABELS, feature_names=np.array(["a", "b", "c"]))[
         "feature"].values.tolist(), ["a", "b", "c"]),
]
# fmt: on


@pytest.mark.parametrize(
    ("call", "expected"),
    [case[1:] for case in VALID_INPUTS],
    ids=[case[0] for case in VALID_INPUTS],
)
def test_odd_but_valid_input_gives_the_exact_outcome(call, expected):
    assert call() == expected
