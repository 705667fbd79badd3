"""Input validation (bayesgen.input.data): one bad input per test, and the coordinates it produces.

Every error test checks both the exception type and that the message names the problem.
"""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from bayesgen.closed_form import (
    bernoulli_nb,
    categorical_nb,
    gda,
    multinomial_nb,
    predict,
    predict_proba,
)
from bayesgen.input.data import check_features, check_training_data, vectorize_text

COUNTS = np.array([[1, 0, 2], [0, 3, 1], [2, 2, 0], [1, 1, 1]], dtype=float)
LABELS = np.array([0, 1, 0, 1])

COUNT_MODELS = {"multinomial_nb": multinomial_nb, "categorical_nb": categorical_nb}


# --------------------------------------------------------------------------------------------
# Non-finite and out-of-range values.


def test_nan_in_X_is_rejected():
    X = COUNTS.copy()
    X[1, 2] = np.nan
    with pytest.raises(ValueError, match=r"X: expected finite values; got 1 NaN"):
        multinomial_nb(X, LABELS)


def test_inf_in_X_is_rejected():
    X = COUNTS.copy()
    X[0, 0] = np.inf
    with pytest.raises(ValueError, match=r"X: expected finite values; got 1 NaN or infinite"):
        multinomial_nb(X, LABELS)


def test_nan_in_sparse_X_is_rejected():
    X = sp.csr_array(COUNTS)
    X.data[0] = np.nan
    with pytest.raises(ValueError, match=r"X: expected finite values"):
        multinomial_nb(X, LABELS)


def test_nan_in_X_is_rejected_for_gda():
    X = np.random.default_rng(0).normal(size=(6, 2))
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"X: expected finite values"):
        gda(X, [0, 1, 0, 1, 0, 1])


@pytest.mark.parametrize("model", sorted(COUNT_MODELS))
def test_negative_values_are_rejected_for_count_models(model):
    X = COUNTS.copy()
    X[2, 1] = -1.0
    with pytest.raises(ValueError, match=r"got negative values \(min -1\)"):
        COUNT_MODELS[model](X, LABELS)


def test_negative_values_are_rejected_in_sparse_counts():
    X = sp.csr_array(COUNTS)
    X.data[-1] = -2.5
    with pytest.raises(ValueError, match=r"negative values \(min -2\.5\)"):
        multinomial_nb(X, LABELS)


def test_non_binary_values_are_rejected_for_bernoulli_without_binarize():
    with pytest.raises(ValueError, match=r"expects binary 0/1 features; got other values"):
        bernoulli_nb(COUNTS, LABELS)


def test_binarize_makes_the_rejected_counts_acceptable():
    est = bernoulli_nb(COUNTS, LABELS, binarize=0.5)
    # presence in class 0 (rows 0, 2): [1, 0, 1] + [1, 1, 0]; class 1 (rows 1, 3): [0, 1, 1]
    # + [1, 1, 1]
    np.testing.assert_array_equal(est["feature_count"].values, [[2.0, 1.0, 1.0], [1.0, 2.0, 2.0]])


def test_binarize_maps_values_above_threshold_to_one():
    X = np.array([[0.2, 0.7, 3.0], [0.9, 0.5, 0.0], [0.0, 0.6, 0.51], [1.0, 0.1, 0.4]])
    est = bernoulli_nb(X, LABELS, binarize=0.5)
    # class 0 (rows 0 and 2): above 0.5 -> [0, 1, 1] + [0, 1, 1]; class 1 (rows 1, 3): [1, 0, 0]
    # + [1, 0, 0].
    expected = np.array([[0.0, 2.0, 2.0], [2.0, 0.0, 0.0]])
    np.testing.assert_array_equal(est["feature_count"].values, expected)


def test_binarize_is_applied_again_at_prediction():
    X = np.array([[0.0, 0.9], [0.8, 0.0], [0.1, 0.7], [0.9, 0.2]])
    est = bernoulli_nb(X, LABELS, binarize=0.5)
    # 0.6 and 0.3 become [1, 0], which is the pattern of class 1 only.
    assert predict(est, [[0.6, 0.3]]).tolist() == [1]


def test_fractional_category_codes_are_rejected():
    X = COUNTS.copy()
    X[0, 0] = 1.5
    with pytest.raises(ValueError, match=r"integer category codes; got fractional values"):
        categorical_nb(X, LABELS)


# --------------------------------------------------------------------------------------------
# Shapes.


def test_X_and_y_of_different_lengths_are_rejected():
    with pytest.raises(ValueError, match=r"same number of samples; got X with 4 rows and y with 3"):
        multinomial_nb(COUNTS, [0, 1, 0])


def test_fewer_than_two_classes_are_rejected():
    with pytest.raises(ValueError, match=r"at least two classes; got only one class 'spam'"):
        multinomial_nb(COUNTS, ["spam"] * 4)


def test_X_with_no_rows_is_rejected():
    with pytest.raises(ValueError, match=r"one sample and one feature; got shape \(0, 3\)"):
        multinomial_nb(np.zeros((0, 3)), [])


def test_X_with_no_columns_is_rejected():
    with pytest.raises(ValueError, match=r"one sample and one feature; got shape \(4, 0\)"):
        multinomial_nb(np.zeros((4, 0)), LABELS)


def test_sparse_X_with_no_columns_is_rejected():
    with pytest.raises(ValueError, match=r"one sample and one feature; got shape \(4, 0\)"):
        multinomial_nb(sp.csr_array((4, 0)), LABELS)


def test_one_dimensional_X_is_rejected():
    with pytest.raises(ValueError, match=r"expected a 2-D array .* got a 1-D array of shape \(4,"):
        multinomial_nb(np.array([1.0, 2.0, 3.0, 4.0]), LABELS)


def test_two_dimensional_y_is_rejected():
    with pytest.raises(ValueError, match=r"y: expected a 1-D array of class labels"):
        multinomial_nb(COUNTS, np.zeros((4, 2)))


def test_prediction_with_a_different_number_of_features_is_rejected():
    est = multinomial_nb(COUNTS, LABELS)
    with pytest.raises(ValueError, match=r"X has 2 features, but the model was fitted with 3"):
        predict_proba(est, [[1, 2]])


def test_prediction_with_different_dataframe_feature_names_is_rejected():
    train = pd.DataFrame(COUNTS, columns=["cheap", "meeting", "viagra"])
    est = multinomial_nb(train, LABELS)
    test = pd.DataFrame([[1.0, 0.0, 1.0]], columns=["cheap", "meeting", "nips"])
    with pytest.raises(ValueError, match=r"unexpected \['nips'\], missing \['viagra'\]"):
        predict_proba(est, test)


def test_prediction_with_reordered_dataframe_columns_is_rejected():
    train = pd.DataFrame(COUNTS, columns=["cheap", "meeting", "viagra"])
    est = multinomial_nb(train, LABELS)
    test = pd.DataFrame([[1.0, 0.0, 1.0]], columns=["viagra", "meeting", "cheap"])
    with pytest.raises(ValueError, match=r"same names in a different order"):
        predict_proba(est, test)


def test_prediction_with_an_unseen_category_code_is_rejected():
    est = categorical_nb(COUNTS, LABELS)  # feature x1 has codes 0..3 at fit
    with pytest.raises(ValueError, match=r"category code 4 of feature 'x1' \(row 0\) was not"):
        predict_proba(est, [[0, 4, 0]])


# --------------------------------------------------------------------------------------------
# Types.


def test_string_array_X_is_rejected():
    X = np.array([["cheap", "pills"], ["team", "meeting"]])
    with pytest.raises(TypeError, match=r"expected numeric values; got dtype <U\d+ with non-num"):
        multinomial_nb(X, [0, 1])


def test_dataframe_with_a_string_column_is_rejected():
    X = pd.DataFrame({"count": [1, 2, 0, 1], "subject": ["hi", "buy", "re:", "win"]})
    with pytest.raises(
        TypeError, match=r"expected numeric columns; got non-numeric columns \['subject'\]"
    ):
        multinomial_nb(X, LABELS)


def test_ragged_X_is_rejected():
    with pytest.raises(TypeError, match=r"X: expected a 2-D numeric array; could not read it"):
        multinomial_nb([[1, 2], [3]], [0, 1])


def test_none_X_is_rejected():
    with pytest.raises(TypeError, match=r"X: expected a 2-D feature matrix; got None"):
        multinomial_nb(None, LABELS)


def test_mixed_label_types_are_rejected():
    y = np.array([0, "spam", 1, "ham"], dtype=object)
    with pytest.raises(TypeError, match=r"y: expected labels that are all integers or all str"):
        multinomial_nb(COUNTS, y)


def test_fractional_float_labels_are_rejected():
    with pytest.raises(ValueError, match=r"y: expected class labels .* got non-integer floats"):
        multinomial_nb(COUNTS, [0.0, 0.5, 1.0, 1.0])


@pytest.mark.parametrize("model", [multinomial_nb, bernoulli_nb, categorical_nb])
def test_negative_alpha_is_rejected(model):
    X = (COUNTS > 0).astype(float)
    with pytest.raises(ValueError, match=r"alpha: expected a finite number >= 0; got -0\.5"):
        model(X, LABELS, alpha=-0.5)


def test_negative_class_alpha_is_rejected():
    with pytest.raises(ValueError, match=r"class_alpha: expected a finite number >= 0; got -1"):
        multinomial_nb(COUNTS, LABELS, class_alpha=-1)


def test_non_numeric_alpha_is_rejected():
    with pytest.raises(TypeError, match=r"alpha: expected a non-negative number; got 'one'"):
        multinomial_nb(COUNTS, LABELS, alpha="one")


# --------------------------------------------------------------------------------------------
# What comes out: sparse stays sparse, names become coordinates.


@pytest.mark.parametrize("kind", ["count", "binary"])
def test_sparse_input_stays_sparse(kind):
    X = sp.random(200, 300, density=0.01, format="coo", random_state=0)
    X.data[:] = 1.0
    checked, _, _ = check_features(X, kind=kind)
    assert sp.issparse(checked)
    assert checked.format == "csr"
    assert checked.nnz == X.nnz


def test_sparse_input_is_densified_for_gda():
    X = sp.csr_array(np.random.default_rng(1).normal(size=(5, 2)))
    checked, _, _ = check_features(X, kind="real")
    assert isinstance(checked, np.ndarray)


def test_sparse_matrix_with_duplicate_entries_is_summed():
    # COO input may repeat an (i, j) pair; the counts must add up, not overwrite.
    X = sp.coo_matrix(([1.0, 2.0, 4.0], ([0, 0, 1], [1, 1, 0])), shape=(2, 2))
    data = check_training_data(X, [0, 1], kind="count")
    np.testing.assert_array_equal(data.X.toarray(), [[0.0, 3.0], [4.0, 0.0]])


def test_dataframe_columns_become_the_feature_coordinate():
    X = pd.DataFrame(COUNTS, columns=["cheap", "meeting", "viagra"])
    est = multinomial_nb(X, LABELS)
    assert est["feature"].values.tolist() == ["cheap", "meeting", "viagra"]


def test_array_features_get_default_names():
    est = multinomial_nb(COUNTS, LABELS)
    assert est["feature"].values.tolist() == ["x0", "x1", "x2"]


@pytest.mark.parametrize("n_features", [1, 10, 11, 1001])
def test_default_feature_names_count_up_from_x0(n_features):
    X = sp.csr_array(([1.0], ([0], [n_features - 1])), shape=(2, n_features))
    names = multinomial_nb(X, [0, 1])["feature"].values
    assert names.tolist() == [f"x{j}" for j in range(n_features)]


def test_string_labels_give_a_sorted_class_coordinate():
    est = multinomial_nb(COUNTS, ["spam", "ham", "eggs", "ham"])
    assert est["class"].values.tolist() == ["eggs", "ham", "spam"]


def test_string_labels_are_counted_under_their_sorted_class():
    est = multinomial_nb(COUNTS, ["spam", "ham", "eggs", "ham"])
    assert est["class_count"].sel({"class": "ham"}).item() == 2.0


def test_predict_returns_original_string_labels():
    est = multinomial_nb(COUNTS, ["spam", "ham", "spam", "ham"], alpha=0.1)
    # row 1 is a "ham" document; the word it repeats (feature 1) is most frequent in "ham".
    assert predict(est, [[0, 5, 0]]).tolist() == ["ham"]


def test_series_labels_are_accepted():
    est = multinomial_nb(COUNTS, pd.Series(["b", "a", "b", "a"]))
    np.testing.assert_array_equal(est["class_count"].values, [2.0, 2.0])


def test_vectorize_text_uses_token_lists_as_they_are():
    X, vectorizer = vectorize_text([["My", "dog"], ["stupid", "dog", "dog"]])
    assert vectorizer.get_feature_names_out().tolist() == ["My", "dog", "stupid"]
    np.testing.assert_array_equal(X.toarray(), [[1.0, 1.0, 0.0], [0.0, 2.0, 1.0]])


def test_vectorize_text_binary_records_presence():
    X, _ = vectorize_text(["spam spam spam eggs"], binary=True)
    np.testing.assert_array_equal(X.toarray(), [[1.0, 1.0]])


def test_vectorize_text_rejects_a_mix_of_strings_and_token_lists():
    with pytest.raises(TypeError, match=r"all raw strings or all token lists; got a mix"):
        vectorize_text([["a", "b"], "a b"])
