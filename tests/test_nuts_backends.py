"""NUTS on PyMC's other back ends: ``nuts_sampler="numpyro"`` on CPU JAX.

numpyro and jax are not dependencies of bayesgen (JAX alone is several hundred MB;
docs/large-models.md says how to install them), so these slow tests skip where numpyro is not
installed: they check the path, not the package's default. The posterior is checked the
usual way, by ``compare()`` against the closed forms.
"""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import bayesgen


@pytest.mark.slow  # about a minute: JAX compiles each sampler anew in every process
@pytest.mark.parametrize(
    ("make", "data", "transform"),
    [
        (bayesgen.MultinomialNB, "counts", "standardised_log"),
        (bayesgen.CategoricalNB, "categories", "standardised_log"),
        # The Wilson-Hilferty rates are plain PyTensor too, so JAX compiles them.
        (bayesgen.MultinomialNB, "counts", "cube_root"),
    ],
    ids=["multinomial", "categorical", "multinomial-cube-root"],
)
def test_numpyro_draws_pass_compare(make, data, transform, monkeypatch):
    pytest.importorskip("numpyro")
    from bayesgen.families import shared_pymc

    monkeypatch.setattr(shared_pymc, "GAMMA_RATE_TRANSFORM", transform)
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


@pytest.mark.parametrize(
    ("chains", "devices", "expected"),
    [(2, 1, "vectorized"), (4, 2, "vectorized"), (2, 2, "parallel"), (2, 100, "parallel")],
)
def test_chains_run_vectorised_only_where_devices_are_fewer(chains, devices, expected):
    from bayesgen.inference.sampling import chain_method_for

    assert chain_method_for(chains, devices) == expected


@pytest.mark.parametrize(
    ("nuts_sampler", "forwarded"),
    [("numpyro", {"nuts": {"chain_method": "vectorized"}}), ("pymc", {})],
)
def test_sample_nuts_hands_the_chain_method_to_the_jax_back_ends_only(
    nuts_sampler, forwarded, monkeypatch, sample_call
):
    # The call pm.sample receives, without sampling: JAX need not be installed.
    import pymc as pm
    from conftest import SampleCalled

    from bayesgen.inference import sampling

    monkeypatch.setattr(sampling, "_jax_chain_method", lambda chains, sampler: "vectorized")
    with pm.Model() as model:
        pm.Normal("x")
    with pytest.raises(SampleCalled):
        sampling.sample_nuts(model, var_names=["x"], nuts_sampler=nuts_sampler, prior_draws=0)
    assert sample_call["nuts_sampler"] == nuts_sampler
    assert {key: sample_call[key] for key in ("nuts",) if key in sample_call} == forwarded


@pytest.mark.parametrize("nuts_sampler", ["numpyro", "blackjax"])
def test_a_jax_back_end_without_jax_is_refused_by_name(nuts_sampler, monkeypatch):
    # What a user without JAX sees (make test installs none): the argument, what it needs and
    # how to get it, before anything compiles. None in sys.modules makes the import fail.
    import sys

    import pymc as pm

    from bayesgen.inference import sampling

    monkeypatch.setitem(sys.modules, "jax", None)
    with pm.Model() as model:
        pm.Normal("x")
    with pytest.raises(
        ImportError, match=rf"nuts_sampler='{nuts_sampler}' needs JAX .* pip install {nuts_sampler}"
    ):
        sampling.sample_nuts(model, var_names=["x"], nuts_sampler=nuts_sampler, prior_draws=0)


@pytest.mark.slow  # a fresh process: JAX compiles the sampler anew (about 30 s)
def test_vectorised_chains_on_one_device_pass_compare(tmp_path):
    # One XLA device, as on a single GPU: the chains run vectorised. JAX fixes its device count
    # when it starts, so this runs in its own process.
    pytest.importorskip("numpyro")
    script = tmp_path / "one_device.py"
    script.write_text(
        "import warnings\n"
        "import numpy as np\n"
        "import bayesgen\n"
        "rng = np.random.default_rng(0)\n"
        "y = np.arange(60) % 2\n"
        "X = rng.poisson(np.where(y[:, None] == 1, [3.0, 1.0, 1.0, 2.0], [1.0, 2.0, 3.0, 1.0]))\n"
        "est = bayesgen.MultinomialNB(inference='nuts', nuts_sampler='numpyro', chains=2,\n"
        "                             draws=1000, tune=1000, random_seed=0)\n"
        "with warnings.catch_warnings():\n"
        "    warnings.simplefilter('ignore')\n"
        "    est.fit(X, y)\n"
        "import jax\n"
        "print(jax.local_device_count(), est.idata_['posterior'].attrs['chain_method'])\n"
        "result = bayesgen.compare(est)\n"
        "print(result.ok)\n"
        "print(result)\n"
    )
    env = dict(os.environ)
    env.setdefault("JAX_PLATFORMS", "cpu")
    env["XLA_FLAGS"] = "--xla_force_host_platform_device_count=1"
    completed = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    lines = completed.stdout.splitlines()
    assert lines[0] == "1 vectorized"
    assert lines[1] == "True", completed.stdout
