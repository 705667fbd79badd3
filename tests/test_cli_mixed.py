"""``bayesgen fit mixed``: the blocks of a table's mixed columns (auto, --override, --blocks),
--plan without fitting, and a saved mixed model that ``bayesgen predict`` reads a CSV with."""

import argparse

import numpy as np
import pandas as pd
import pytest

import bayesgen
from bayesgen.cli import main
from bayesgen.cli.arguments import block_spec, column_models

FIT = ["--target", "label", "--inference", "conjugate", "--draws", "100", "--no-map"]
FIT += ["--seed", "0", "--quiet"]


@pytest.fixture(scope="module")
def birds(tmp_path_factory):
    """Two well-separated classes: every column tells them apart."""
    rng = np.random.default_rng(3)
    n = 30
    codes = np.arange(n) % 2
    frame = pd.DataFrame(
        {
            "length": rng.normal(size=n) + 6.0 * codes,
            "depth": rng.normal(size=n) - 4.0 * codes,
            "island": np.where(codes == 1, "Biscoe", "Dream"),
            "eggs": rng.poisson(1.0 + 8.0 * codes),
            "banded": codes,
            "notes": np.where(codes == 1, "big loud bird", "small quiet bird"),
            "label": np.array(["Adelie", "Gentoo"])[codes],
        }
    )
    frame.loc[0, "eggs"] = 0  # a count column, whatever the draws
    path = tmp_path_factory.mktemp("data") / "birds.csv"
    frame.to_csv(path, index=False)
    return path, frame


def _plan(capsys, path, *options) -> dict[str, list[str]]:
    """--plan's table as {column: [block, model, encoding, reason...]}."""
    capsys.readouterr()  # what came before
    assert main(["fit", "mixed", str(path), *FIT, "--plan", *options]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].split() == ["column", "block", "model", "encoding", "reason"]
    return {line.split()[0]: line.split()[1:] for line in lines[1:]}


def _fit(birds, tmp_path, *options) -> bayesgen.NaiveBayes:
    path, _ = birds
    output = tmp_path / "birds-mixed.nc"
    assert main(["fit", "mixed", str(path), *FIT, "--output", str(output), *options]) == 0
    return bayesgen.load(output)


def _blocks(model) -> dict[str, tuple[str, list[str]]]:
    return {
        name: (type(estimator).__name__, list(np.atleast_1d(columns)))
        for name, estimator, columns in model.blocks_
    }


def test_plan_prints_every_column_but_the_target_and_fits_nothing(birds, capsys, tmp_path):
    path, _ = birds
    plan = _plan(capsys, path, "--output", str(tmp_path / "never.nc"))
    assert {column: row[1] for column, row in plan.items()} == {
        "length": "gaussian",
        "depth": "gaussian",
        "island": "categorical",
        "eggs": "poisson",
        "banded": "bernoulli",
        "notes": "multinomial",
    }
    assert plan["notes"][:3] == ["notes", "multinomial", "text"]
    assert not (tmp_path / "never.nc").exists()


def test_fit_mixed_saves_a_naive_bayes_of_the_auto_blocks(birds, capsys, tmp_path):
    model = _fit(birds, tmp_path)
    assert isinstance(model, bayesgen.NaiveBayes)
    assert _blocks(model) == {
        "gaussian": ("GaussianNB", ["length", "depth"]),
        "categorical": ("CategoricalNB", ["island"]),
        "poisson": ("PoissonNB", ["eggs"]),
        "bernoulli": ("BernoulliNB", ["banded"]),
        "notes": ("MultinomialNB", ["notes"]),
    }
    said = capsys.readouterr().out
    assert "NaiveBayes, 30 rows, 2 classes" in said and "notes (multinomial)" in said


def test_predict_reads_the_csv_of_a_mixed_model(birds, capsys, tmp_path):
    path, frame = birds
    _fit(birds, tmp_path)
    predictions = tmp_path / "predictions.csv"
    model = tmp_path / "birds-mixed.nc"
    assert main(["predict", str(model), str(path), "--output", str(predictions)]) == 0
    table = pd.read_csv(predictions)
    # The classes are far apart in every column: each training row is predicted right.
    assert table["predicted"].tolist() == frame["label"].tolist()
    np.testing.assert_allclose(table["p_Adelie"] + table["p_Gentoo"], 1.0, atol=2e-6)
    assert (table["p_Gentoo_lower"] <= table["p_Gentoo"]).all()


def test_predict_names_a_column_the_mixed_model_needs(birds, capsys, tmp_path):
    _, frame = birds
    _fit(birds, tmp_path)
    fewer = tmp_path / "fewer.csv"
    frame.drop(columns=["island"]).to_csv(fewer, index=False)
    assert main(["predict", str(tmp_path / "birds-mixed.nc"), str(fewer)]) == 2
    assert "needs columns ['island']" in capsys.readouterr().err


def test_blocks_give_the_block_names_and_only_their_columns(birds, capsys, tmp_path):
    spec = "size=gaussian:length,depth; where=categorical:island; words=multinomial:notes"
    model = _fit(birds, tmp_path, "--blocks", spec)
    assert _blocks(model) == {
        "size": ("GaussianNB", ["length", "depth"]),
        "where": ("CategoricalNB", ["island"]),
        "words": ("MultinomialNB", ["notes"]),
    }
    assert list(model.feature_names_in_) == ["length", "depth", "island", "notes"]
    # One column of strings in a multinomial block is raw text, as in auto's text block.
    path, _ = birds
    plan = _plan(capsys, path, "--blocks", spec)
    assert plan["notes"][:3] == ["words", "multinomial", "text"]
    assert plan["length"][3] == "given"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("size=gaussian", "is not NAME=MODEL:COLUMN"),
        ("size=normal:length", "has model 'normal'"),
        ("a=gaussian:length;a=poisson:eggs", "reuses the block name 'a'"),
        ("gaussian:length;gaussian:depth", "reuses the block name 'gaussian'"),
        ("a=gaussian:length;b=poisson:length", "names column 'length' again"),
        ("a=gaussian:length,,depth", "names no column"),
        (";", "expected 'auto' or blocks"),
    ],
)
def test_a_bad_blocks_spec_is_a_usage_error_naming_blocks(birds, capsys, spec, message):
    path, _ = birds
    assert main(["fit", "mixed", str(path), *FIT, "--blocks", spec]) == 2
    err = capsys.readouterr().err
    assert "argument --blocks:" in err
    assert message in err


def test_blocks_naming_a_missing_column_or_the_target_are_refused(birds, capsys):
    path, _ = birds
    assert main(["fit", "mixed", str(path), *FIT, "--blocks", "a=gaussian:length,wing"]) == 2
    assert "--blocks: columns ['wing'] are not in the data" in capsys.readouterr().err
    assert main(["fit", "mixed", str(path), *FIT, "--blocks", "a=categorical:label"]) == 2
    assert "--blocks: 'label' is the --target column" in capsys.readouterr().err


def test_override_moves_a_column_to_another_block(birds, capsys, tmp_path):
    path, _ = birds
    plan = _plan(capsys, path, "--override", "eggs=categorical")
    assert plan["eggs"][:3] == ["categorical", "categorical", "categorical"]
    assert plan["eggs"][3] == "--override"
    assert plan["length"][3:] == ["real", "numbers"]  # the others keep auto's reason
    model = _fit(birds, tmp_path, "--override", "eggs=categorical", "--override", "banded=poisson")
    blocks = _blocks(model)
    assert blocks["categorical"] == ("CategoricalNB", ["island", "eggs"])
    assert blocks["poisson"] == ("PoissonNB", ["banded"])
    assert "bernoulli" not in blocks


def test_override_of_an_unknown_column_or_with_blocks_is_refused(birds, capsys):
    path, _ = birds
    assert main(["fit", "mixed", str(path), *FIT, "--override", "wing=gaussian"]) == 2
    assert "--override: columns ['wing']" in capsys.readouterr().err
    options = ["--blocks", "a=gaussian:length", "--override", "eggs=categorical"]
    assert main(["fit", "mixed", str(path), *FIT, *options]) == 2
    assert "--override:" in capsys.readouterr().err
    assert main(["fit", "mixed", str(path), *FIT, "--override", "eggs=normal"]) == 2
    assert "argument --override:" in capsys.readouterr().err


def test_features_choose_the_columns_auto_sees(birds, capsys, tmp_path):
    model = _fit(birds, tmp_path, "--features", "length,island")
    assert _blocks(model) == {
        "gaussian": ("GaussianNB", ["length"]),
        "categorical": ("CategoricalNB", ["island"]),
    }


@pytest.mark.parametrize("option", [["--blocks", "a=gaussian:length"], ["--plan"]])
def test_mixed_options_are_refused_for_other_models(birds, capsys, option):
    path, _ = birds
    assert main(["fit", "gaussian", str(path), *FIT, "--features", "length", *option]) == 2
    assert f"{option[0]} does not apply to gaussian (only to mixed)" in capsys.readouterr().err


def test_options_of_single_models_are_refused_for_mixed(birds, capsys):
    path, _ = birds
    assert main(["fit", "mixed", str(path), *FIT, "--alpha", "2"]) == 2
    assert "--alpha does not apply to mixed" in capsys.readouterr().err
    assert main(["fit", "mixed", str(path), *FIT, "--text-column", "notes"]) == 2
    assert "--text-column does not apply to mixed" in capsys.readouterr().err


def test_option_types_read_blocks_and_overrides():
    assert block_spec(" auto ") == "auto"
    assert block_spec("poisson:eggs; where=categorical:island, sex;") == [
        ("poisson", "poisson", ["eggs"]),
        ("where", "categorical", ["island", "sex"]),
    ]
    assert column_models("eggs=categorical, banded=poisson") == {
        "eggs": "categorical",
        "banded": "poisson",
    }
    with pytest.raises(argparse.ArgumentTypeError, match="eggs twice"):
        column_models("eggs=categorical,eggs=poisson")


def test_fit_help_shows_the_blocks_syntax(capsys):
    assert main(["fit", "--help"]) == 0
    text = capsys.readouterr().out
    assert "--blocks BLOCKS" in text and "--override COLUMN=MODEL" in text
    assert "NAME=MODEL:COLUMN[,COLUMN...]" in text
