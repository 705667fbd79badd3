"""NUTS on PyMC's other back ends: ``nuts_sampler="numpyro"`` on CPU JAX.

numpyro and jax are not dependencies of bayesgen (JAX alone is several hundred MB;
docs/large-models.md says how to install them), so these slow tests skip where numpyro is not
installed: they check the path, not the package's default. The posterior is checked the
usual way, by ``compare()`` against the closed forms.
"""

import os
import warnings

import numpy as np
import pytest

import bayesgen


@pytest.mark.slow  # about a minute: JAX compiles each sampler anew in every process
@pytest.mark.parametrize(
    ("make", "data"),
    [
        (bayesgen.MultinomialNB, "counts"),
        (bayesgen.CategoricalNB, "categories"),
    ],
    ids=["multinomial", "categorical"],
)
def test_numpyro_draws_pass_compare(make, data, monkeypatch):
    pytest.importorskip("numpyro")
    if "JAX_PLATFORMS" not in os.environ:  # a CUDA plugin without a GPU fails on cuInit
        monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    rng = np.random.default_rng(0)
    y = np.arange(60) % 2
    if data == "counts":
        X = rng.poisson(np.where(y[:, None] == 1, [3.0, 1.0, 1.0, 2.0], [1.0, 2.0, 3.0, 1.0]))
    else:
        X = rng.integers(0, 3, size=(60, 4)) + (y[:, None] * rng.integers(0, 2, size=(60, 4)))
    est = make(
        inference="nuts",
        nuts_sampler="numpyro",
        chains=2,
        draws=1000,
        tune=1000,
        random_seed=0,
        progressbar=False,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    assert est.idata_["posterior"].attrs["inference_library"] == "numpyro"
    result = bayesgen.compare(est)
    assert result.ok, str(result)
