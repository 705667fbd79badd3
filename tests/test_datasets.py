"""Bundled and downloadable data sets, and the CLI's table reader."""

from pathlib import Path

import pandas as pd
import pytest

from bayesgen.input.datasets import load_sms_spam, load_toy_spam, read_table

SMS_SPAM = Path(__file__).resolve().parents[2] / "shared" / "data" / "sms_spam"


def test_toy_corpus_ships_with_the_package():
    texts, labels = load_toy_spam()
    assert len(texts) == len(labels) == 50
    assert sorted(set(labels)) == ["ham", "spam"]
    assert labels.count("spam") == 20
    assert all(isinstance(t, str) and t for t in texts)


@pytest.mark.skipif(not SMS_SPAM.exists(), reason=f"no SMS Spam Collection under {SMS_SPAM}")
def test_sms_spam_local_copy_has_the_documented_counts():
    texts, labels = load_sms_spam(SMS_SPAM / "SMSSpamCollection.tsv")
    # shared/data/sms_spam/README.md: 5,574 messages, 4,827 ham and 747 spam.
    assert len(texts) == 5574
    assert labels.count("ham") == 4827 and labels.count("spam") == 747


def test_sms_spam_file_without_header_is_read_too(tmp_path):
    path = tmp_path / "sms.tsv"
    path.write_text("ham\thello there\nspam\tWIN a prize\n", encoding="utf-8")
    assert load_sms_spam(path) == (["hello there", "WIN a prize"], ["ham", "spam"])


def test_sms_spam_line_without_a_tab_is_a_clear_error(tmp_path):
    path = tmp_path / "sms.tsv"
    path.write_text("ham\thello\nthis line has no tab\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 2: expected 'label<TAB>text'"):
        load_sms_spam(path)


def test_sms_spam_needs_a_path_or_download():
    with pytest.raises(ValueError, match=r"path=<file>.*download=True"):
        load_sms_spam()


def test_sms_spam_missing_file_names_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nope\.tsv"):
        load_sms_spam(tmp_path / "nope.tsv")


@pytest.mark.parametrize(("suffix", "sep"), [(".csv", ","), (".tsv", "\t")])
def test_read_table_by_suffix(tmp_path, suffix, sep):
    path = tmp_path / f"data{suffix}"
    pd.DataFrame({"a": [1, 2], "y": ["p", "q"]}).to_csv(path, sep=sep, index=False)
    frame = read_table(path)
    assert frame.columns.tolist() == ["a", "y"]
    assert frame["a"].tolist() == [1, 2]


def test_read_table_rejects_unknown_suffix(tmp_path):
    path = tmp_path / "data.json"
    path.write_text("{}")
    with pytest.raises(ValueError, match=r"expected a \.csv, \.tsv or \.parquet file"):
        read_table(path)


def test_read_table_takes_the_fields_it_is_told_mean_missing(tmp_path):
    from bayesgen.input.datasets import read_table

    path = tmp_path / "birds.csv"
    path.write_text("mass,island\n3.1,NA\n,Dream\n?,Biscoe\n", encoding="utf-8")
    default = read_table(path)
    assert default["island"].tolist() == ["NA", "Dream", "Biscoe"]  # "NA" is text by default
    assert default["mass"].isna().tolist() == [False, True, False]
    told = read_table(path, na_values=["NA", "?"])
    assert told["island"].isna().tolist() == [True, False, False]
    assert told["mass"].isna().tolist() == [False, True, True]
    with pytest.raises(TypeError, match="na_values: expected a list of strings"):
        read_table(path, na_values="NA")
