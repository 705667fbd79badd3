"""The command line as a new user meets it (issue 20, sections 3 to 5): tables read whole,
refusals that name what is wrong, help that shows defaults, predictions with ids.

Every CLI case runs in-process through ``bayesgen.cli.main``; fits use exact conjugate draws.
"""

import argparse
import re
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.feature_extraction.text import CountVectorizer

import bayesgen
from bayesgen.cli import _parser, _warning_formatter, main
from bayesgen.input.datasets import load_sms_spam, read_table
from bayesgen.maths import covariance_memory

FAST = ["--inference", "conjugate", "--draws", "20", "--no-map", "--seed", "1", "--quiet"]
TEXTS = [
    "win cash now",
    "free prize call now",
    "lunch at noon",
    "see you at lunch",
    "claim free cash",
    "meeting at noon",
]
LABELS = ["spam", "spam", "ham", "ham", "spam", "ham"]
SMS_SPAM = Path(__file__).resolve().parents[2] / "shared/data/sms_spam/SMSSpamCollection.tsv"


def _error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


@pytest.fixture
def texts_csv(tmp_path):
    path = tmp_path / "messages.csv"
    pd.DataFrame({"text": TEXTS, "label": LABELS}).to_csv(path, index=False)
    return path


# --------------------------------------------------------------------------------------------
# Tables read whole: TSV without quoting, --format, --no-header/--columns.

# A message with an opening quote and no closing one: pandas' default quoting reads on to the
# next quote character, joining the lines between into one field.
STRAY_QUOTE_TSV = (
    "Label\tSMS\n"
    "ham\tsee you at noon\n"
    'ham\t"Hi, I am on my way\n'
    "spam\twin a free prize now\n"
    "ham\tok, lunch then\n"
    'spam\tclaim your "free" cash\n'
)


def test_tsv_keeps_every_line_as_a_row_despite_a_stray_quote(tmp_path):
    path = tmp_path / "sms.tsv"
    path.write_text(STRAY_QUOTE_TSV, encoding="utf-8")
    table = read_table(path)
    assert table["Label"].tolist() == ["ham", "ham", "spam", "ham", "spam"]
    assert table["SMS"].tolist() == [
        "see you at noon",
        '"Hi, I am on my way',
        "win a free prize now",
        "ok, lunch then",
        'claim your "free" cash',
    ]


def test_cli_fit_of_a_tsv_with_a_stray_quote_reads_every_row(tmp_path, capsys):
    path = tmp_path / "sms.tsv"
    path.write_text(STRAY_QUOTE_TSV, encoding="utf-8")
    argv = ["fit", "multinomial", str(path), "--target", "Label", "--text-column", "SMS"]
    assert main([*argv, *FAST, "--output", str(tmp_path / "m.nc")]) == 0
    assert "(MultinomialNB, 5 rows, 2 classes," in capsys.readouterr().out


@pytest.mark.skipif(not SMS_SPAM.exists(), reason=f"no SMS Spam Collection at {SMS_SPAM}")
def test_the_sms_spam_collection_reads_as_its_5574_messages():
    texts, labels = load_sms_spam(SMS_SPAM)
    table = read_table(SMS_SPAM)
    assert len(table) == 5574
    assert table["SMS"].tolist() == texts
    assert table["Label"].tolist() == labels


def test_csv_field_holding_a_line_break_is_warned_about(tmp_path):
    path = tmp_path / "messages.csv"
    path.write_text('label,text\nham,see you\nham,"Hi there\nspam,win now\nham,ok"\nspam,cash\n')
    with pytest.warns(UserWarning) as caught:
        table = read_table(path)
    assert len(table) == 3  # what a stray quote does: three lines joined into one field
    assert str(caught[0].message) == (
        f"data: 1 field of column 'text' in {str(path)!r} holds a line break (data row 2, "
        "counting from 1 after the header): a quoted line break, or a stray quote character "
        "that joined several lines into one field."
    )


def test_words_pandas_takes_for_missing_stay_text(tmp_path):
    path = tmp_path / "sms.tsv"
    path.write_text("label\ttext\tcount\nham\tNA\t1\nham\tNone\t\nspam\tnull\t2\n")
    table = read_table(path)
    assert table["text"].tolist() == ["NA", "None", "null"]
    assert table["count"].isna().tolist() == [False, True, False]  # an empty field is missing


def test_a_number_column_holding_na_says_where(tmp_path, capsys):
    path = tmp_path / "counts.csv"
    path.write_text("label,x,y\nham,1,2\nspam,NA,3\nham,2,1\n")
    assert main(["fit", "multinomial", str(path), "--target", "label", *FAST]) == 2
    assert _error_line(capsys) == (
        "bayesgen fit: error: data: columns ['x'] are not numeric: 'x' holds 'NA' in data row 2 "
        "(counting from 1 after the header), and only an empty field is a missing value; choose "
        "numeric columns with --features, or pass a column of raw text as --text-column."
    )


def test_a_warning_of_a_command_is_one_line():
    line = _warning_formatter("fit")("data: two\nlines", UserWarning, "x.py", 3)
    assert line == "bayesgen fit: warning: data: two lines\n"


def test_file_without_a_suffix_needs_format(tmp_path, capsys):
    path = tmp_path / "SMSSpamCollection"
    path.write_text("ham\tsee you\nspam\twin a prize\nham\tok then\n")
    argv = ["fit", "multinomial", str(path), "--target", "label", "--text-column", "text"]
    argv += ["--no-header", "--columns", "label,text", *FAST]
    assert main(argv) == 2
    assert _error_line(capsys) == (
        "bayesgen fit: error: data: expected a .csv, .tsv or .parquet file; got "
        "'SMSSpamCollection'. For another name, give the format: --format csv, tsv or parquet "
        "(file_format= in Python)."
    )
    assert main([*argv, "--format", "tsv", "--output", str(tmp_path / "m.nc")]) == 0
    assert "(MultinomialNB, 3 rows, 2 classes, 6 features)" in capsys.readouterr().out


def test_headerless_file_takes_its_column_names(tmp_path):
    path = tmp_path / "raw.tsv"
    path.write_text('ham\tsee you\nspam\t"win" a prize\n')
    table = read_table(path, header=False, columns=["label", "text"])
    assert table.to_dict("list") == {"label": ["ham", "spam"], "text": ["see you", '"win" a prize']}


HEADER_CASES = {
    "no-header without columns": (
        ["--no-header"],
        "--no-header: name the file's columns with --columns, e.g. --columns label,text.",
    ),
    "columns without no-header": (
        ["--columns", "label,text"],
        "--columns: only with --no-header (the file's header line names its columns).",
    ),
    "too few columns": (
        ["--no-header", "--columns", "label"],
        "columns: '{path}' has 2 columns; expected one name per column; got 1: ['label'].",
    ),
    "a repeated column": (
        ["--no-header", "--columns", "label,label"],
        "columns: expected distinct non-empty names; got ['label', 'label'] (['label'] repeated).",
    ),
    "an empty column name": (
        ["--no-header", "--columns", "label,"],
        "columns: expected distinct non-empty names; got ['label', ''] (an empty name).",
    ),
    "parquet without header": (
        ["--no-header", "--columns", "label,text", "--format", "parquet"],
        "--no-header: a Parquet file always names its columns.",
    ),
}


@pytest.mark.parametrize("case", HEADER_CASES, ids=str)
def test_header_options_that_do_not_fit_are_one_error_line(case, tmp_path, capsys):
    options, expected = HEADER_CASES[case]
    path = tmp_path / "raw.tsv"
    path.write_text("ham\tsee you\nspam\twin a prize\n")
    argv = ["fit", "multinomial", str(path), "--target", "label", "--text-column", "text"]
    assert main([*argv, *options, *FAST]) == 2
    assert _error_line(capsys) == f"bayesgen fit: error: {expected.format(path=path)}"


# --------------------------------------------------------------------------------------------
# GDA and QDA refuse, at once, covariances that cannot fit in memory.

ONE_GIB = 2**30


def test_gda_on_a_million_columns_is_refused_at_once_without_allocating():
    wide = np.broadcast_to(np.arange(6.0)[:, None], (6, 10**6))  # no memory of its own
    y = ["a", "a", "a", "b", "b", "b"]
    for estimator in (
        bayesgen.GaussianDiscriminantAnalysis(inference="conjugate"),
        bayesgen.QuadraticDiscriminantAnalysis(inference="conjugate"),
    ):
        tracemalloc.start()
        start = time.perf_counter()
        with pytest.raises(ValueError, match=r"^X: its 1,000,000 columns make each"):
            estimator.fit(wide, y)
        elapsed = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert elapsed < 1.0
        assert peak < 20 * 2**20  # bytes: nothing of the size of X, let alone of Σ


def test_gda_refusal_names_the_columns_and_the_size(monkeypatch):
    monkeypatch.setattr(covariance_memory, "memory_limit", lambda: ONE_GIB)
    X = np.broadcast_to(np.arange(6.0)[:, None], (6, 2000))
    estimator = bayesgen.GaussianDiscriminantAnalysis(
        inference="conjugate", draws=100, chains=2, prior_draws=0
    )
    # Σ: 2000² float64 = 32e6 bytes = 0.0298 GiB; 8 copies 0.238 GiB; 200 draws 5.96 GiB.
    expected = (
        "X: its 2,000 columns make each covariance of gda 2,000 × 2,000 (0.03 GiB); its "
        "statistics and closed forms need about 0.2 GiB and its 200 posterior and 0 prior draws "
        "6.0 GiB in float64, more than the 1.0 GiB of memory here. Use fewer columns (e.g. a "
        "vectorizer's max_features), fewer draws or chains, dtype='float32', or a naive Bayes "
        "model."
    )
    with pytest.raises(ValueError) as refused:
        estimator.fit(X, ["a", "a", "b", "b", "c", "c"])
    assert str(refused.value) == expected


def test_qda_refusal_counts_one_covariance_per_class(monkeypatch):
    monkeypatch.setattr(covariance_memory, "memory_limit", lambda: ONE_GIB)
    X = np.broadcast_to(np.arange(6.0)[:, None], (6, 2000))
    estimator = bayesgen.QuadraticDiscriminantAnalysis(
        inference="conjugate", draws=100, chains=2, prior_draws=0
    )
    # 3 classes: 8 × 3 × 32e6 bytes = 0.715 GiB; 200 × 3 × 32e6 bytes = 17.88 GiB.
    expected = (
        "X: its 2,000 columns make each of the 3 covariances of qda 2,000 × 2,000 (0.03 GiB); "
        "its statistics and closed forms need about 0.7 GiB and its 200 posterior and 0 prior "
        "draws 17.9 GiB in float64"
    )
    with pytest.raises(ValueError, match=re.escape(expected)):
        estimator.fit(X, ["a", "a", "b", "b", "c", "c"])


def test_cli_fit_gda_on_too_many_columns_is_one_error_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(covariance_memory, "memory_limit", lambda: ONE_GIB)
    rng = np.random.default_rng(0)
    table = pd.DataFrame(rng.normal(size=(6, 2000)), columns=[f"x{j}" for j in range(2000)])
    table.assign(label=LABELS).to_csv(tmp_path / "wide.csv", index=False)
    argv = ["fit", "gda", str(tmp_path / "wide.csv"), "--target", "label", *FAST]
    assert main([*argv, "--draws", "100", "--chains", "2"]) == 2
    # 200 posterior and 500 prior draws: 700 × 32e6 bytes = 20.86 GiB.
    assert _error_line(capsys).startswith(
        "bayesgen fit: error: X: its 2,000 columns make each covariance of gda 2,000 × 2,000 "
        "(0.03 GiB); its statistics and closed forms need about 0.2 GiB and its 200 posterior "
        "and 500 prior draws 20.9 GiB in float64, more than the 1.0 GiB of memory here."
    )


# --------------------------------------------------------------------------------------------
# Options that do not apply to the model are refused, not dropped.

#: Every option that only some models take, and the models that do not take it.
NOT_TAKEN = {
    "--alpha": (["gda", "qda"], "0.5", "bernoulli, categorical, multinomial"),
    "--prior-mean": (["gda", "qda"], "pooled", "bernoulli, categorical, dcm, multinomial"),
    "--binarize": (["categorical", "gda", "multinomial", "qda"], "0.5", "bernoulli"),
    "--cov-prior": (["bernoulli", "categorical", "multinomial", "qda"], "conjugate", "gda"),
}
PAIRS = [
    (option, model, value, takers)
    for option, (models, value, takers) in NOT_TAKEN.items()
    for model in models
]


@pytest.mark.parametrize(("option", "model", "value", "takers"), PAIRS)
def test_option_the_model_does_not_take_is_refused(option, model, value, takers, tmp_path, capsys):
    # Refused before the data are read: the file need not exist.
    argv = ["fit", model, str(tmp_path / "absent.csv"), "--target", "label", option, value]
    assert main(argv) == 2
    assert _error_line(capsys) == (
        f"bayesgen fit: error: {option} does not apply to {model} (only to {takers}). Leave "
        "out what does not apply."
    )


def test_gda_with_alpha_and_prior_mean_names_both(tmp_path, capsys):
    argv = ["fit", "gda", str(tmp_path / "d.csv"), "--target", "label"]
    assert main([*argv, "--alpha", "0.001", "--prior-mean", "pooled"]) == 2
    assert _error_line(capsys) == (
        "bayesgen fit: error: --alpha does not apply to gda (only to bernoulli, categorical, "
        "multinomial); nor does --prior-mean apply to gda. Leave out what does not apply."
    )


def test_class_alpha_evidence_is_for_naive_bayes_only(tmp_path, capsys):
    argv = ["fit", "qda", str(tmp_path / "d.csv"), "--target", "label"]
    assert main([*argv, "--class-alpha", "evidence"]) == 2
    assert _error_line(capsys) == (
        "bayesgen fit: error: --class-alpha evidence does not apply to qda (only to bernoulli, "
        "categorical, multinomial). Leave out what does not apply."
    )


def test_tune_does_not_apply_to_exact_draws(tmp_path, capsys):
    argv = ["fit", "multinomial", str(tmp_path / "d.csv"), "--target", "label"]
    assert main([*argv, "--inference", "conjugate", "--tune", "500"]) == 2
    assert _error_line(capsys) == (
        "bayesgen fit: error: --tune does not apply to --inference conjugate (only to "
        "--inference nuts). Leave out what does not apply."
    )


def test_options_the_model_takes_are_applied(tmp_path, texts_csv):
    argv = ["fit", "bernoulli", str(texts_csv), "--target", "label", "--text-column", "text"]
    options = ["--alpha", "0.25", "--prior-mean", "pooled", "--binarize", "0.5"]
    assert main([*argv, *options, *FAST, "--output", str(tmp_path / "b.nc")]) == 0
    params = bayesgen.load(tmp_path / "b.nc").get_params()
    assert (params["alpha"], params["prior_mean"], params["binarize"]) == (0.25, "pooled", 0.5)


@pytest.mark.parametrize(
    "options", [["--format", "tsv"], ["--text-column", "text"], ["--no-header", "--columns", "a"]]
)
def test_report_refuses_table_options_without_data(options, tmp_path, capsys):
    argv = ["report", str(tmp_path / "absent.nc"), "--output-dir", str(tmp_path / "r")]
    assert main([*argv, *options]) == 2
    assert _error_line(capsys) == (
        f"bayesgen report: error: {options[0]}: only with --data (it says how to read the "
        "held-out data)."
    )


# --------------------------------------------------------------------------------------------
# Messages that say what is wrong.


def test_a_feature_named_twice_is_said_to_be_repeated(tmp_path, capsys):
    table = pd.DataFrame({"w1": [0, 2, 1, 0], "w2": [1, 0, 0, 3], "label": LABELS[:4]})
    table.to_csv(tmp_path / "counts.csv", index=False)
    argv = ["fit", "multinomial", str(tmp_path / "counts.csv"), "--target", "label"]
    assert main([*argv, "--features", "w1,w1,w2", *FAST]) == 2
    assert _error_line(capsys) == (
        "bayesgen fit: error: --features: 'w1' is repeated in 'w1,w1,w2'; name each column once."
    )


# --------------------------------------------------------------------------------------------
# --help: every option explained with its default; descriptions as written.


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = _parser()
    (subparsers,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(subparsers.choices)


@pytest.mark.parametrize("command", ["fit", "predict", "compare", "loo", "report", "demo"])
def test_help_explains_every_option_and_shows_its_default(command):
    parser = _commands()[command]
    text = " ".join(parser.format_help().split())
    for action in parser._actions:
        assert action.help, f"{command} {action.option_strings or action.dest} has no help"
        if action.option_strings and action.default not in (None, False, argparse.SUPPRESS):
            assert f"(default: {action.default})" in text, (command, action.option_strings)
    # An option whose default depends on the model says it in words.
    if command == "fit":
        for option in ("--alpha", "--prior-mean", "--binarize", "--cov-prior", "--tune"):
            (action,) = [a for a in parser._actions if option in a.option_strings]
            assert "default" in action.help


def test_help_keeps_the_line_breaks_of_a_description(capsys):
    assert main(["predict", "--help"]) == 0
    out = capsys.readouterr().out
    assert "counting from 1 after the header), the class, p(class | x)\n" in out
    assert "6 significant digits.\n\nA model fitted from a text column" in out


# --------------------------------------------------------------------------------------------
# predict: an id column, 6 significant digits, the fitted text column by default.


@pytest.fixture
def text_model(tmp_path, texts_csv):
    path = tmp_path / "spam.nc"
    argv = ["fit", "multinomial", str(texts_csv), "--target", "label", "--text-column", "text"]
    assert main([*argv, *FAST, "--output", str(path)]) == 0
    return path


def _significant_digits(field: str) -> int:
    mantissa = field.lower().split("e")[0].lstrip("-").replace(".", "").lstrip("0")
    return len(mantissa)


def test_predict_writes_row_ids_and_six_significant_digits(tmp_path, texts_csv, text_model):
    output = tmp_path / "pred.csv"
    assert main(["predict", str(text_model), str(texts_csv), "--output", str(output)]) == 0
    lines = output.read_text().splitlines()
    assert lines[0] == (
        "row,predicted,p_ham,p_ham_lower,p_ham_upper,p_spam,p_spam_lower,p_spam_upper"
    )
    rows = [line.split(",") for line in lines[1:]]
    assert [row[0] for row in rows] == ["1", "2", "3", "4", "5", "6"]
    numbers = [field for row in rows for field in row[2:]]
    assert max(_significant_digits(field) for field in numbers) == 6
    table = pd.read_csv(output)
    np.testing.assert_allclose(table["p_ham"] + table["p_spam"], 1.0, atol=2e-6)


def test_predict_takes_the_id_column_of_the_data(tmp_path, text_model, capsys):
    data = tmp_path / "new.csv"
    ids = ["m-17", "=cmd", "m-3"]
    pd.DataFrame({"id": ids, "text": ["free cash", "lunch", "noon"]}).to_csv(data, index=False)
    assert main(["predict", str(text_model), str(data), "--id-column", "id"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("id,predicted,")
    assert [line.split(",")[0] for line in out[1:]] == ["m-17", "'=cmd", "m-3"]


def test_predict_refuses_an_unknown_id_column(tmp_path, texts_csv, text_model, capsys):
    assert main(["predict", str(text_model), str(texts_csv), "--id-column", "key"]) == 2
    assert _error_line(capsys) == (
        "bayesgen predict: error: --id-column: no column 'key' in the data; columns are "
        "['text', 'label']."
    )


def test_predict_reads_the_text_column_the_model_was_fitted_on(tmp_path, texts_csv, text_model):
    given, default = tmp_path / "given.csv", tmp_path / "default.csv"
    argv = ["predict", str(text_model), str(texts_csv)]
    assert main([*argv, "--text-column", "text", "--output", str(given)]) == 0
    assert main([*argv, "--output", str(default)]) == 0
    assert default.read_text() == given.read_text()
    assert pd.read_csv(default)["predicted"].tolist() == LABELS


def test_predict_without_the_fitted_text_column_asks_for_one(tmp_path, text_model, capsys):
    data = tmp_path / "other.csv"
    pd.DataFrame({"body": ["free cash"], "label": ["spam"]}).to_csv(data, index=False)
    assert main(["predict", str(text_model), str(data)]) == 2
    assert _error_line(capsys) == (
        "bayesgen predict: error: --text-column: the model was fitted from the text column "
        "'text', which the data lacks (columns ['body', 'label']); pass --text-column COLUMN, "
        "the column holding the texts."
    )
    assert main(["predict", str(text_model), str(data), "--text-column", "body"]) == 0


# --------------------------------------------------------------------------------------------
# --alpha: one λ per class, by label.


def _add_lambda(texts, labels, alpha_by_class):
    """(count + λ_k) / (total_k + V λ_k) per class, counted here with scikit-learn."""
    counts = CountVectorizer().fit_transform(texts).toarray()
    labels = np.asarray(labels)
    rows = []
    for label in sorted(alpha_by_class):
        in_class = counts[labels == label].sum(axis=0)
        lam = alpha_by_class[label]
        rows.append((in_class + lam) / (in_class.sum() + counts.shape[1] * lam))
    return np.array(rows)


def test_alpha_per_class_label(tmp_path, texts_csv):
    argv = ["fit", "multinomial", str(texts_csv), "--target", "label", "--text-column", "text"]
    assert (
        main([*argv, "--alpha", "spam=0.5,ham=2", *FAST, "--output", str(tmp_path / "m.nc")]) == 0
    )
    loaded = bayesgen.load(tmp_path / "m.nc")
    np.testing.assert_array_equal(loaded.alpha_, [2.0, 0.5])  # classes_ ham, spam
    expected = _add_lambda(TEXTS, LABELS, {"ham": 2.0, "spam": 0.5})
    np.testing.assert_allclose(loaded.closed_form_["feature_prob"].values, expected, rtol=1e-12)


def test_alpha_labels_take_the_type_of_the_target_column(tmp_path):
    table = pd.DataFrame({"text": TEXTS, "label": [1, 1, 0, 0, 1, 0]})
    table.to_csv(tmp_path / "coded.csv", index=False)
    argv = ["fit", "multinomial", str(tmp_path / "coded.csv"), "--target", "label"]
    argv += ["--text-column", "text", "--alpha", "1=0.5,0=2"]
    assert main([*argv, *FAST, "--output", str(tmp_path / "m.nc")]) == 0
    loaded = bayesgen.load(tmp_path / "m.nc")
    assert loaded.classes_.tolist() == [0, 1]
    np.testing.assert_array_equal(loaded.alpha_, [2.0, 0.5])


ALPHA_CASES = {
    "a list of numbers": (
        "0.5,2",
        "argument --alpha: one λ per class goes with its class label, as in spam=0.5,ham=2; got "
        "'0.5,2', a list of numbers (no longer taken: it gave the λs to the classes in the "
        "sort order of their labels)",
    ),
    "an unknown label": (
        "spam=0.5,hm=2",
        "--alpha: expected one λ per class label of column 'label' (ham, spam); no class "
        "['hm'] in column 'label'; no λ for class ['ham'].",
    ),
    "a missing class": (
        "spam=0.5",
        "--alpha: expected one λ per class label of column 'label' (ham, spam); no λ for class "
        "['ham'].",
    ),
    "a class twice": (
        "spam=0.5,spam=2",
        "argument --alpha: expected a finite number > 0, 'evidence', 'evidence_per_class' or "
        "one λ > 0 per class label (e.g. spam=0.5,ham=2); got 'spam=0.5,spam=2': class 'spam' "
        "is given twice",
    ),
    "a λ of 0": (
        "spam=0,ham=2",
        "argument --alpha: expected a finite number > 0, 'evidence', 'evidence_per_class' or "
        "one λ > 0 per class label (e.g. spam=0.5,ham=2); got 'spam=0,ham=2': λ '0' of class "
        "'spam' is not a finite number > 0",
    ),
}


@pytest.mark.parametrize("case", ALPHA_CASES, ids=str)
def test_alpha_that_is_not_one_lambda_per_label_is_one_error_line(case, texts_csv, capsys):
    alpha, expected = ALPHA_CASES[case]
    argv = ["fit", "multinomial", str(texts_csv), "--target", "label", "--text-column", "text"]
    assert main([*argv, "--alpha", alpha, *FAST]) == 2
    assert _error_line(capsys) == f"bayesgen fit: error: {expected}"


@pytest.mark.parametrize("alpha", ["1.0", "evidence", "evidence_per_class"])
def test_alpha_of_one_number_or_a_rule_still_fits(alpha, tmp_path, texts_csv):
    argv = ["fit", "multinomial", str(texts_csv), "--target", "label", "--text-column", "text"]
    assert main([*argv, "--alpha", alpha, *FAST, "--output", str(tmp_path / "m.nc")]) == 0
    assert bayesgen.load(tmp_path / "m.nc").get_params()["alpha"] == (
        float(alpha) if alpha == "1.0" else alpha
    )
