"""Closed forms and conjugate draws for a fixed seed are bit-identical to today's main on the
five models.

The numbers were frozen from commit 2671bb0 (main on 2026-11-26), before the package was split
into layer folders (bayesgen/maths, families, inference, checks, plotting, ...), by
``tests/data/main-2026-11-26/generate.py`` (see the README.md there). Moving code must change
no number, so every comparison here is exact (equal bytes), not ``allclose``. The test imports
the generator for its settings and its calls, all of the public API the move keeps, and runs
them against the installed bayesgen; the data come from the frozen ``inputs.npz``, never
remade. Every fit draws exactly (``inference="conjugate"``): no NUTS, nothing compiled.
"""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

import bayesgen

FROZEN = Path(__file__).parent / "data" / "main-2026-11-26"

_spec = importlib.util.spec_from_file_location("frozen_main_2026_11_26", FROZEN / "generate.py")
generate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(generate)

MODELS = generate.MODELS


@pytest.fixture(scope="module")
def inputs():
    return generate.read_inputs(FROZEN)


def assert_bit_identical(actual, frozen) -> None:
    """Equal shape, dtype and bytes (so -0.0 differs from 0.0, as a changed sum would)."""
    actual, frozen = np.asarray(actual), np.asarray(frozen)
    np.testing.assert_array_equal(actual, frozen, strict=True)
    assert actual.tobytes() == frozen.tobytes()


def assert_dataset_bit_identical(actual: xr.Dataset, frozen: xr.Dataset) -> None:
    """Identical variables, coordinates and attrs, and the numbers equal to the byte."""
    xr.testing.assert_identical(actual, frozen)
    for name, variable in frozen.variables.items():
        if variable.dtype.kind in "biuf":
            assert_bit_identical(actual[name].values, variable.values)


def frozen_posterior(model: str) -> dict[str, np.ndarray]:
    with np.load(FROZEN / f"{model}-posterior.npz") as stored:
        return {name: stored[name] for name in stored}


def assert_posterior_is_frozen(est, model: str) -> None:
    frozen = frozen_posterior(model)
    actual = generate.posterior_arrays(est)
    assert sorted(actual) == sorted(frozen)
    for name, values in frozen.items():
        assert_bit_identical(actual[name], values)


@pytest.mark.parametrize("model", MODELS)
def test_closed_form_is_bit_identical(model, inputs):
    X, y = inputs[model]["X"], inputs[model]["y"]
    frozen = xr.load_dataset(FROZEN / f"{model}-closed-form.nc", engine="netcdf4")
    assert_dataset_bit_identical(generate.closed_form(model, X, y), frozen)


@pytest.mark.parametrize("model", MODELS)
def test_the_fits_closed_form_is_bit_identical(model, inputs):
    """``closed_form_`` of the estimator; under BernoulliNB's ``alpha_prior`` it holds λ's
    posterior from the quadrature."""
    est = generate.conjugate_fit(model, inputs[model]["X"], inputs[model]["y"])
    frozen = xr.load_dataset(FROZEN / generate.fit_closed_form_file(model), engine="netcdf4")
    assert_dataset_bit_identical(est.closed_form_, frozen)


@pytest.mark.parametrize("model", MODELS)
def test_conjugate_draws_for_the_seed_are_bit_identical(model, inputs):
    est = generate.conjugate_fit(model, inputs[model]["X"], inputs[model]["y"])
    assert est.idata_["posterior"].attrs["inference_library"] == "bayesgen.conjugate"
    assert_posterior_is_frozen(est, model)


@pytest.mark.parametrize("model", MODELS)
def test_predict_proba_is_bit_identical(model, inputs):
    est = generate.conjugate_fit(model, inputs[model]["X"], inputs[model]["y"])
    frozen = np.load(FROZEN / f"{model}-proba.npy")
    assert_bit_identical(est.predict_proba(inputs[model]["X_new"]), frozen)


@pytest.mark.parametrize("model", MODELS)
def test_log_evidence_of_the_closed_form_is_bit_identical(model, inputs):
    frozen = json.loads((FROZEN / "log-evidence.json").read_text())[model]["closed_form"]
    estimates = generate.closed_form(model, inputs[model]["X"], inputs[model]["y"])
    assert bayesgen.closed_form.log_evidence(estimates) == frozen


@pytest.mark.parametrize("model", MODELS)
def test_log_evidence_of_the_fit_is_bit_identical(model, inputs):
    """Under BernoulliNB's ``alpha_prior``, λ integrated out by quadrature."""
    frozen = json.loads((FROZEN / "log-evidence.json").read_text())[model]["fit"]
    est = generate.conjugate_fit(model, inputs[model]["X"], inputs[model]["y"])
    assert bayesgen.closed_form.log_evidence(est.closed_form_) == frozen


@pytest.mark.parametrize("model", MODELS)
def test_a_frozen_model_file_predicts_bit_identically(model, inputs):
    est = bayesgen.load(FROZEN / f"{model}-model.nc")
    frozen = np.load(FROZEN / f"{model}-proba.npy")
    assert_bit_identical(est.predict_proba(inputs[model]["X_new"]), frozen)


@pytest.mark.parametrize("model", MODELS)
def test_a_frozen_model_file_holds_or_redraws_the_frozen_draws(model):
    """Files of fits that had not drawn yet are redrawn from their seed on load; the others
    hold their draws (see generate.py)."""
    assert_posterior_is_frozen(bayesgen.load(FROZEN / f"{model}-model.nc"), model)
