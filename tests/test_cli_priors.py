"""``bayesgen fit gaussian --prior`` and ``bayesgen fit poisson --rate-prior``: the priors reach
the estimator and its saved model, and bad values are refused naming the option.

Expected posterior values are computed here from the conjugate updates, not by the package."""

import numpy as np
import pandas as pd
import pytest

import bayesgen
from bayesgen.cli import fit as cli_fit
from bayesgen.cli import main
from bayesgen.cli.arguments import gamma_prior, normal_inverse_gamma_prior

FIT = ["--target", "label", "--inference", "conjugate", "--no-map", "--seed", "0", "--quiet"]


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    rng = np.random.default_rng(5)
    codes = np.arange(40) % 2
    frame = pd.DataFrame(
        {
            "height": rng.normal(size=40) + codes,
            "width": 2.0 * rng.normal(size=40),
            "visits": rng.poisson(2.0 + 3.0 * codes),
            "label": np.array(["low", "high"])[codes],
        }
    )
    path = tmp_path_factory.mktemp("data") / "table.csv"
    frame.to_csv(path, index=False)
    return path, frame


def _fit(table, model: str, *options: str, tmp_path, features: str) -> bayesgen.GaussianNB:
    path, _ = table
    output = tmp_path / f"{model}.nc"
    args = ["fit", model, str(path), *FIT, "--features", features, "--output", str(output)]
    assert main([*args, *options]) == 0
    return bayesgen.load(output)


def test_gaussian_prior_fields_reach_the_saved_model(table, tmp_path):
    _, frame = table
    prior = "mean=1,kappa=0.5,shape=3,scale=2"
    model = _fit(table, "gaussian", "--prior", prior, tmp_path=tmp_path, features="height")
    attrs = model.closed_form_.attrs
    assert (attrs["prior_kappa"], attrs["prior_shape"]) == (0.5, 3.0)
    assert model.closed_form_["prior_mean"].values.tolist() == [1.0]
    assert model.closed_form_["prior_scale"].values.tolist() == [2.0]
    # The posterior mean of μ of class "high": (κ₀ m₀ + n x̄) / (κ₀ + n).
    rows = frame.loc[frame["label"] == "high", "height"].to_numpy()
    expected = (0.5 * 1.0 + rows.size * rows.mean()) / (0.5 + rows.size)
    got = model.closed_form_["mu"].sel({"class": "high", "feature": "height"})
    assert float(got) == pytest.approx(expected, rel=1e-12)


def test_gaussian_prior_fields_left_out_keep_their_defaults(table, tmp_path):
    _, frame = table
    model = _fit(table, "gaussian", "--prior", "kappa=0.25", tmp_path=tmp_path, features="width")
    attrs = model.closed_form_.attrs
    assert (attrs["prior_kappa"], attrs["prior_shape"]) == (0.25, 1.5)
    # m₀ the data's mean, b₀ = (a₀ − 1) times its population variance.
    width = frame["width"].to_numpy()
    assert float(model.closed_form_["prior_mean"][0]) == pytest.approx(width.mean(), rel=1e-12)
    assert float(model.closed_form_["prior_scale"][0]) == pytest.approx(0.5 * width.var())


@pytest.mark.parametrize("given", ["2,0.5", "shape=2,rate=0.5", "rate=0.5, shape=2"])
def test_poisson_rate_prior_reaches_the_saved_model(table, tmp_path, given):
    _, frame = table
    model = _fit(table, "poisson", "--rate-prior", given, tmp_path=tmp_path, features="visits")
    assert model.rate_prior == (2.0, 0.5)
    attrs = model.closed_form_.attrs
    assert (attrs["rate_prior_shape"], attrs["rate_prior_rate"]) == (2.0, 0.5)
    rows = frame.loc[frame["label"] == "low", "visits"].to_numpy()
    got = model.closed_form_["feature_rate"].sel({"class": "low", "feature": "visits"})
    assert float(got) == pytest.approx((2.0 + rows.sum()) / (0.5 + rows.size), rel=1e-12)


@pytest.mark.parametrize(
    ("model", "option", "value", "message"),
    [
        ("gaussian", "--prior", "kappa=0", "kappa must be a finite number > 0, not '0'"),
        ("gaussian", "--prior", "shape=-1", "shape must be a finite number > 0"),
        ("gaussian", "--prior", "scale=inf", "scale must be a finite number > 0"),
        ("gaussian", "--prior", "mean=nan", "mean must be a finite number"),
        ("gaussian", "--prior", "width=1", "'width=1' is not name=value with a name among"),
        ("gaussian", "--prior", "kappa=1,kappa=2", "kappa twice"),
        ("gaussian", "--prior", "0.1", "'0.1' is not name=value"),
        ("poisson", "--rate-prior", "1", "got '1'"),
        ("poisson", "--rate-prior", "2,-1", "got '-1'"),
        ("poisson", "--rate-prior", "shape=2", "both shape and rate are needed"),
        ("poisson", "--rate-prior", "shape=2,rate=0", "rate must be a finite number > 0"),
    ],
)
def test_bad_prior_values_are_refused_naming_the_option(
    table, capsys, model, option, value, message
):
    path, _ = table
    assert main(["fit", model, str(path), *FIT, option, value]) == 2
    err = capsys.readouterr().err
    assert f"argument {option}: expected" in err
    assert message in err


@pytest.mark.parametrize(
    ("model", "option", "value", "taker"),
    [
        ("poisson", "--prior", "kappa=1", "gaussian"),
        ("gaussian", "--rate-prior", "1,1", "poisson"),
        # GDA's prior is a normal-inverse-Wishart, which --prior does not build.
        ("gda", "--prior", "kappa=1", "gaussian"),
    ],
)
def test_a_prior_option_of_another_model_is_refused(table, capsys, model, option, value, taker):
    path, _ = table
    assert main(["fit", model, str(path), *FIT, option, value]) == 2
    assert f"{option} does not apply to {model} (only to {taker})" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("model", "option", "parameter"),
    [("gaussian", "--prior", "prior"), ("poisson", "--rate-prior", "rate_prior")],
)
def test_evidence_is_passed_to_the_estimator_as_given(
    table, capsys, monkeypatch, model, option, parameter
):
    # Whether the estimator takes "evidence" is its own rule; the command line hands it on.
    estimator_class = cli_fit.ESTIMATORS[model]

    class Recording(estimator_class):
        def fit(self, X, y, **kwargs):
            raise ValueError(f"recorded {parameter}={getattr(self, parameter)!r}")

    monkeypatch.setitem(cli_fit.ESTIMATORS, model, Recording)
    path, _ = table
    assert main(["fit", model, str(path), *FIT, option, "evidence"]) == 2
    assert f"recorded {parameter}='evidence'" in capsys.readouterr().err


def test_option_types_read_evidence_and_numbers():
    assert normal_inverse_gamma_prior("evidence") == "evidence"
    assert gamma_prior("evidence") == "evidence"
    prior = normal_inverse_gamma_prior("shape=2, scale=0.5")
    assert (prior.mean, prior.kappa, prior.shape, prior.scale) == (None, 0.01, 2.0, 0.5)
    assert gamma_prior("3, 1.5") == (3.0, 1.5)


def test_fit_help_lists_the_prior_options(capsys):
    assert main(["fit", "--help"]) == 0
    text = capsys.readouterr().out
    assert "--prior PRIOR" in text and "--rate-prior RATE_PRIOR" in text
