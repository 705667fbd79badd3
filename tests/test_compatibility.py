"""Model files saved by bayesgen 0.1.0 still load, and predict exactly what 0.1.0 predicted."""

from pathlib import Path

import numpy as np
import pytest
from conftest import DATA

import bayesgen

FIXTURES = Path(__file__).parent / "data" / "v0.1.0"
FILES = {
    "multinomial": "multinomial_nb",
    "bernoulli": "bernoulli_nb",
    "categorical": "categorical_nb",
    "gda": "gda",
    "multinomial-nuts-map": "multinomial_nb",
}


@pytest.mark.parametrize(("stem", "model"), FILES.items())
def test_a_0_1_0_model_file_loads_and_predicts_as_it_did(stem, model):
    est = bayesgen.load(FIXTURES / f"{stem}.nc")
    X, _ = DATA[model]()
    expected = np.load(FIXTURES / f"{stem}-proba.npy")
    np.testing.assert_allclose(est.predict_proba(X), expected, rtol=1e-12, atol=1e-15)
    assert est.closed_form_.attrs["model"] == model


def test_a_0_1_0_find_map_point_loads_without_convergence_attributes():
    """0.1.0 recorded no map_converged; such a MAP is read as converged (unknown)."""
    est = bayesgen.load(FIXTURES / "multinomial-nuts-map.nc")
    assert est.map_ is not None
    assert "map_converged" not in est.map_.attrs
    assert bayesgen.compare(est).map_computed
