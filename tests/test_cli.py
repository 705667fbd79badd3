"""The command-line interface, run in-process through ``bayesgen.cli.main``."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from bayesgen.cli import main


@pytest.fixture
def spam_csv(tmp_path):
    texts = [
        "win cash now",
        "free prize call now",
        "lunch at noon",
        "see you at lunch",
        "claim free cash",
        "meeting at noon",
    ]
    labels = ["spam", "spam", "ham", "ham", "spam", "ham"]
    path = tmp_path / "messages.csv"
    pd.DataFrame({"text": texts, "label": labels}).to_csv(path, index=False)
    return path


def test_demo_prints_the_lecture_notes_answer_and_every_verdict(capsys, tmp_path):
    status = main(
        [
            "demo",
            "--inference",
            "conjugate",
            "--draws",
            "200",
            "--no-map",
            "--no-reports",
            "--quiet",
            "--models-dir",
            str(tmp_path / "models"),
        ]
    )
    assert status == 0
    out = capsys.readouterr().out
    # P(y=1 | "b c") = 0.2*0.6*0.5 / (0.2*0.6*0.5 + 0.4*0.2*0.5) = 0.6 in the notes.
    assert "MLE 0.6000" in out
    # add-1: (0.25*0.5) / (0.25*0.5 + 0.375*0.25) = 4/7.
    assert f"add-1 {4 / 7:.4f}" in out
    saved = sorted(p.name for p in (tmp_path / "models").glob("*.nc"))
    assert saved == sorted(
        [
            "digits-multinomial.nc",
            "digits-bernoulli.nc",
            "digits-categorical.nc",
            "digits-poisson.nc",
            "wine-gda.nc",
            "wine-qda.nc",
            "wine-gaussian-nb.nc",
            "penguins-mixed.nc",
            "toy-spam-multinomial.nc",
            "toy-spam-bernoulli.nc",
        ]
    )
    assert out.count("posterior = closed form") == 1  # the summary table's column


def test_no_command_prints_help_and_fails(capsys):
    assert main([]) == 2
    assert "usage: bayesgen" in capsys.readouterr().out


def test_compare_of_a_missing_file_is_a_clear_error(capsys, tmp_path):
    assert main(["compare", str(tmp_path / "absent.nc")]) == 2
    err = capsys.readouterr().err
    assert "no model file" in err and "absent.nc" in err


def test_fit_then_predict_a_text_column(capsys, tmp_path, spam_csv):
    model = tmp_path / "spam.nc"
    assert (
        main(
            [
                "fit",
                "multinomial",
                str(spam_csv),
                "--target",
                "label",
                "--text-column",
                "text",
                "--inference",
                "conjugate",
                "--draws",
                "200",
                "--no-map",
                "--seed",
                "1",
                "--quiet",
                "--output",
                str(model),
            ]
        )
        == 0
    )
    assert model.exists()
    out_csv = tmp_path / "pred.csv"
    assert (
        main(
            [
                "predict",
                str(model),
                str(spam_csv),
                "--text-column",
                "text",
                "--output",
                str(out_csv),
            ]
        )
        == 0
    )
    predictions = pd.read_csv(out_csv)
    assert list(predictions.columns) == [
        "row",
        "predicted",
        "p_ham",
        "p_ham_lower",
        "p_ham_upper",
        "p_spam",
        "p_spam_lower",
        "p_spam_upper",
    ]
    assert predictions["row"].tolist() == [1, 2, 3, 4, 5, 6]
    # written to 6 significant digits, each off by up to half a unit in the 6th
    np.testing.assert_allclose(predictions["p_ham"] + predictions["p_spam"], 1.0, atol=2e-6)
    assert (predictions["p_spam_lower"] <= predictions["p_spam"]).all()
    assert (predictions["p_spam"] <= predictions["p_spam_upper"]).all()
    assert predictions["predicted"].tolist() == ["spam", "spam", "ham", "ham", "spam", "ham"]


def test_fit_with_a_missing_target_column_fails_clearly(capsys, spam_csv):
    assert (
        main(
            [
                "fit",
                "multinomial",
                str(spam_csv),
                "--target",
                "nope",
                "--text-column",
                "text",
                "--inference",
                "conjugate",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "--target" in err and "nope" in err


def test_fit_of_an_unknown_file_type_fails_clearly(capsys, tmp_path):
    path = tmp_path / "data.xlsx"
    path.write_text("x")
    assert main(["fit", "gda", str(path), "--target", "y"]) == 2
    assert "expected a .csv, .tsv or .parquet" in capsys.readouterr().err


def test_console_script_help_on_subcommand():
    done = subprocess.run(
        [sys.executable, "-m", "bayesgen.cli", "demo", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0
    assert "--dataset" in done.stdout


def _saved_toy_model(tmp_path, spam_csv):
    model = tmp_path / "spam.nc"
    assert (
        main(
            [
                "fit",
                "bernoulli",
                str(spam_csv),
                "--target",
                "label",
                "--text-column",
                "text",
                "--inference",
                "conjugate",
                "--draws",
                "500",
                "--no-map",
                "--seed",
                "2",
                "--quiet",
                "--output",
                str(model),
            ]
        )
        == 0
    )
    return model


def test_compare_exits_zero_when_the_posterior_matches(capsys, tmp_path, spam_csv):
    model = _saved_toy_model(tmp_path, spam_csv)
    assert main(["compare", str(model)]) == 0
    assert "OK: every row agrees" in capsys.readouterr().out


def test_compare_exits_one_when_the_posterior_disagrees(capsys, tmp_path, spam_csv):
    import xarray as xr

    from bayesgen.estimators.loading import load

    model = _saved_toy_model(tmp_path, spam_csv)
    est = load(model)
    # Shift every posterior draw of feature_prob: its mean no longer equals add-λ.
    posterior = est.idata_["posterior"].to_dataset()
    shifted = (posterior["feature_prob"] * 0.9 + 0.05).clip(0, 1)
    est.idata_["posterior"] = posterior.assign(feature_prob=shifted)
    tampered = tmp_path / "tampered.nc"
    est.save(tampered)
    assert isinstance(xr.load_datatree(tampered), xr.DataTree)
    capsys.readouterr()
    assert main(["compare", str(tampered)]) == 1
    assert "NOT OK" in capsys.readouterr().out


SMS_SPAM = (
    __import__("pathlib").Path(__file__).resolve().parents[2]
    / "shared"
    / "data"
    / "sms_spam"
    / "SMSSpamCollection.tsv"
)


# 11 s on the 5,574 messages; the bundled corpus runs the demo in the default suite.
@pytest.mark.slow
@pytest.mark.skipif(not SMS_SPAM.exists(), reason=f"no SMS Spam Collection at {SMS_SPAM}")
def test_demo_runs_the_text_models_on_sms_spam(capsys, tmp_path):
    status = main(
        [
            "demo",
            "--dataset",
            "sms-spam",
            "--data-path",
            str(SMS_SPAM),
            "--inference",
            "conjugate",
            "--draws",
            "200",
            "--no-map",
            "--no-reports",
            "--quiet",
            "--models-dir",
            str(tmp_path / "models"),
        ]
    )
    assert status == 0
    assert (tmp_path / "models" / "sms-spam-multinomial.nc").exists()
    summary = capsys.readouterr().out.split("== Summary ==")[1]
    row = next(line for line in summary.splitlines() if "sms-spam-multinomial" in line)
    accuracy = float(row.split()[2])
    assert accuracy > 0.95  # naive Bayes on SMS spam is ~98% accurate


def test_demo_with_sms_spam_but_no_file_fails_clearly(capsys, tmp_path):
    status = main(
        [
            "demo",
            "--dataset",
            "sms-spam",
            "--data-path",
            str(tmp_path / "absent.tsv"),
            "--inference",
            "conjugate",
            "--no-map",
            "--no-reports",
            "--quiet",
            "--models-dir",
            str(tmp_path / "models"),
        ]
    )
    assert status == 2
    assert "absent.tsv" in capsys.readouterr().err


def _fit_cli(spam_csv, model, path):
    options = ["--inference", "conjugate", "--draws", "50", "--no-map", "--seed", "1"]
    args = ["fit", model, str(spam_csv), "--target", "label", "--text-column", "text"]
    assert main([*args, *options, "--quiet", "--output", str(path)]) == 0


def test_loo_ranks_saved_models_by_their_leave_one_out_score(capsys, tmp_path, spam_csv):
    import bayesgen

    _fit_cli(spam_csv, "multinomial", tmp_path / "multi.nc")
    _fit_cli(spam_csv, "bernoulli", tmp_path / "bern.nc")
    capsys.readouterr()
    assert main(["loo", str(tmp_path / "multi.nc"), str(tmp_path / "bern.nc")]) == 0
    out = capsys.readouterr().out
    expected = bayesgen.compare_models(
        {"multi": bayesgen.load(tmp_path / "multi.nc"), "bern": bayesgen.load(tmp_path / "bern.nc")}
    )
    assert out.splitlines()[0].split() == [
        "elpd_loo",
        "se",
        "elpd_diff",
        "se_diff",
        "accuracy_loo",
        "method",
        "pareto_k_max",
    ]
    best = expected.index[0]
    assert out.splitlines()[2].split()[0] == best
    assert f"{expected.loc[best, 'elpd_loo']:.6f}" in out


def test_loo_of_models_with_the_same_name_is_refused(capsys, tmp_path, spam_csv):
    _fit_cli(spam_csv, "multinomial", tmp_path / "a" / "m.nc")
    _fit_cli(spam_csv, "bernoulli", tmp_path / "b" / "m.nc")
    assert main(["loo", str(tmp_path / "a" / "m.nc"), str(tmp_path / "b" / "m.nc")]) == 2
    assert (
        "model_files: expected files with distinct names; got ['m', 'm']" in capsys.readouterr().err
    )


def test_fit_with_a_pooled_prior_mean_saves_it(tmp_path, spam_csv):
    import bayesgen

    path = tmp_path / "pooled.nc"
    options = ["--inference", "conjugate", "--draws", "50", "--no-map", "--seed", "1"]
    args = ["fit", "multinomial", str(spam_csv), "--target", "label", "--text-column", "text"]
    assert main([*args, *options, "--prior-mean", "pooled", "--quiet", "--output", str(path)]) == 0
    loaded = bayesgen.load(path)
    assert loaded.prior_mean == "pooled"
    counts = loaded.closed_form_["feature_count"].values.sum(axis=0) + 0.5
    np.testing.assert_allclose(loaded.prior_mean_, counts / counts.sum(), rtol=1e-12)
