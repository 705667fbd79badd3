"""Saving and loading fitted models (bayesgen.io.model_files)."""

import json
import subprocess
import sys
import textwrap

import netCDF4
import numpy as np
import pandas as pd
import pytest
import xarray as xr
from conftest import DATA, MODELS

import bayesgen

PREDICT_IN_A_NEW_PROCESS = textwrap.dedent(
    """
    import json, sys
    import numpy as np, pandas as pd
    import bayesgen

    for job in json.load(open(sys.argv[1])):
        est = bayesgen.load(job["model"])
        X = np.load(job["X"])
        if job["columns"] is not None:
            X = pd.DataFrame(X, columns=job["columns"])
        np.save(job["proba"], est.predict_proba(X))
        with open(job["labels"], "w") as f:
            json.dump([str(label) for label in est.predict(X)], f)
    """
)


def _new_rows(name):
    return DATA[name](seed=99, n=6)[0]


def test_save_load_predict_in_a_fresh_process_gives_identical_probabilities(fits, tmp_path):
    jobs, expected = [], {}
    for name in MODELS:
        est = fits.nuts(name).est
        X_new = _new_rows(name)
        est.save(tmp_path / f"{name}.nc")
        np.save(tmp_path / f"{name}_X.npy", np.asarray(X_new))
        columns = list(X_new.columns) if isinstance(X_new, pd.DataFrame) else None
        jobs.append(
            {
                "model": str(tmp_path / f"{name}.nc"),
                "X": str(tmp_path / f"{name}_X.npy"),
                "columns": columns,
                "proba": str(tmp_path / f"{name}_proba.npy"),
                "labels": str(tmp_path / f"{name}_labels.json"),
            }
        )
        expected[name] = (est.predict_proba(X_new), [str(v) for v in est.predict(X_new)])
    (tmp_path / "jobs.json").write_text(json.dumps(jobs))
    # the training data stay in this process: the child gets only the model files and new rows
    result = subprocess.run(
        [sys.executable, "-c", PREDICT_IN_A_NEW_PROCESS, str(tmp_path / "jobs.json")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    for name, job in zip(MODELS, jobs, strict=True):
        proba, labels = expected[name]
        loaded = np.load(job["proba"])
        assert np.array_equal(loaded, proba), name
        assert json.loads(open(job["labels"]).read()) == labels


def test_load_restores_the_fitted_state(fits, tmp_path):
    est = fits.map("categorical_nb").est
    path = tmp_path / "model.nc"
    est.save(path)
    loaded = bayesgen.load(path)
    assert type(loaded) is type(est)
    assert loaded.get_params() == est.get_params()
    np.testing.assert_array_equal(loaded.classes_, est.classes_)
    assert loaded.closed_form_.identical(est.closed_form_)
    assert loaded.closed_form_["category_mask"].dtype == bool
    assert loaded.map_ is not None
    xr.testing.assert_identical(loaded.map_, est.map_)
    xr.testing.assert_identical(
        loaded.idata_["posterior"].to_dataset(), est.idata_["posterior"].to_dataset()
    )
    for j in range(len(est.feature_log_prob_)):
        np.testing.assert_array_equal(loaded.feature_log_prob_[j], est.feature_log_prob_[j])


def test_load_keeps_the_gda_prior_and_float32_draws(fits, tmp_path):
    est = fits.conjugate("gda", dtype="float32").est
    est.save(tmp_path / "gda.nc")
    loaded = bayesgen.load(tmp_path / "gda.nc")
    assert loaded.idata_["posterior"]["mu"].dtype == np.float32
    np.testing.assert_array_equal(loaded.prior.scale, est.prior.scale)
    assert loaded.prior.kappa == est.prior.kappa
    np.testing.assert_array_equal(loaded.feature_names_in_, est.feature_names_in_)
    X_new = _new_rows("gda")
    assert np.array_equal(loaded.predict_proba(X_new), est.predict_proba(X_new))


def _wide_text(seed=0, n_words=400):
    rng = np.random.default_rng(seed)
    X = rng.poisson(0.3, size=(40, n_words))
    return X, np.repeat(["ham", "spam"], 20)


def _lazy_fit(**options):
    X, y = _wide_text()
    params = {"inference": "conjugate", "compute_map": False, "random_seed": 3, **options}
    return bayesgen.MultinomialNB(**params).fit(X, y), X


def test_conjugate_file_without_draws_loads_the_same_draws_lazily(tmp_path):
    est, X = _lazy_fit(chains=2, draws=300, prior_draws=50, dtype="float32")
    est.save(tmp_path / "lazy.nc")
    tree = xr.open_datatree(tmp_path / "lazy.nc", engine="netcdf4")
    assert {"posterior", "prior", "log_likelihood"}.isdisjoint(tree.children)
    assert {"closed_form", "observed_data"} <= set(tree.children)
    tree.close()
    loaded = bayesgen.load(tmp_path / "lazy.nc")
    assert loaded.__dict__["_idata"].made is None
    for group in ("posterior", "prior", "log_likelihood"):
        expected = est.idata_[group].to_dataset()
        xr.testing.assert_identical(loaded.idata_[group].to_dataset(), expected)
    assert loaded.idata_["posterior"]["feature_prob"].dtype == np.float32
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))


def test_conjugate_file_is_small_until_the_draws_are_made(tmp_path):
    est, _ = _lazy_fit(chains=2, draws=500)
    est.save(tmp_path / "lazy.nc")
    # Now drawn: 2 x 500 draws of 2 x 400 word probabilities, and the prior's.
    assert est.idata_["posterior"].sizes["draw"] == 500
    est.save(tmp_path / "drawn.nc")
    lazy, drawn = (tmp_path / "lazy.nc").stat().st_size, (tmp_path / "drawn.nc").stat().st_size
    assert drawn > 6_400_000  # the posterior draws alone are 2 x 500 x 800 float64
    assert lazy < drawn / 20


def test_drawn_and_changed_conjugate_draws_are_saved_as_changed(tmp_path):
    est, _ = _lazy_fit()
    posterior = est.idata_["posterior"].to_dataset()
    est.idata_["posterior"] = posterior.assign(feature_prob=posterior["feature_prob"] ** 2)
    est.save(tmp_path / "changed.nc")
    loaded = bayesgen.load(tmp_path / "changed.nc")
    xr.testing.assert_identical(
        loaded.idata_["posterior"]["feature_prob"], posterior["feature_prob"] ** 2
    )


@pytest.mark.parametrize(
    ("attr", "value", "fragment"),
    [
        ("conjugate_chains", 0, "conjugate_chains: expected an integer >= 1; got 0"),
        ("conjugate_draws", "many", "conjugate_draws: expected an integer >= 1; got 'many'"),
        ("conjugate_prior_draws", -1, "conjugate_prior_draws: expected an integer >= 0"),
        ("conjugate_dtype", "float16", "conjugate_dtype: expected 'float64' or 'float32'"),
        ("conjugate_posterior_seed", -3, "conjugate_posterior_seed: expected an integer >= 0"),
    ],
)
def test_conjugate_file_with_a_bad_draw_layout_names_it(tmp_path, attr, value, fragment):
    est, _ = _lazy_fit()
    est.save(tmp_path / "lazy.nc")
    tree = xr.load_datatree(tmp_path / "lazy.nc", engine="netcdf4")
    tree.attrs[attr] = value
    tree.to_netcdf(tmp_path / "bad.nc", engine="netcdf4")
    with pytest.raises(ValueError, match="is not a valid bayesgen model file") as raised:
        bayesgen.load(tmp_path / "bad.nc")
    assert fragment in str(raised.value)


# --------------------------------------------------------------------------------------------
# Files that are not (readable) bayesgen models.


@pytest.fixture
def saved(fits, tmp_path):
    path = tmp_path / "model.nc"
    fits.conjugate("multinomial_nb").est.save(path)
    return path


@pytest.mark.parametrize("keep", [0.1, 0.5, 0.9])
def test_truncated_file_gives_a_clear_error(saved, tmp_path, keep):
    data = saved.read_bytes()
    truncated = tmp_path / "truncated.nc"
    truncated.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(ValueError, match="not a readable bayesgen model"):
        bayesgen.load(truncated)


def test_foreign_netcdf_gives_a_clear_error(tmp_path):
    path = tmp_path / "foreign.nc"
    xr.Dataset({"temperature": ("time", [1.0, 2.0, 3.0])}).to_netcdf(path)
    with pytest.raises(ValueError, match="not a bayesgen model"):
        bayesgen.load(path)


def test_newer_format_version_gives_a_clear_error(saved):
    with netCDF4.Dataset(saved, "r+") as handle:
        assert handle.getncattr("format") == "bayesgen-model"
        handle.setncattr("format_version", 99)
    with pytest.raises(ValueError, match="newer"):
        bayesgen.load(saved)


def test_missing_file_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        bayesgen.load(tmp_path / "nothing.nc")


def test_estimator_save_returns_the_path_it_wrote(fits, tmp_path):
    target = tmp_path / "model.nc"
    written = fits.conjugate("multinomial_nb").est.save(target)
    assert written == target
    assert target.is_file()


def test_save_needs_a_nc_suffix_and_a_fitted_estimator(fits, tmp_path):
    from sklearn.exceptions import NotFittedError

    with pytest.raises(ValueError, match=r"\.nc"):
        fits.conjugate("multinomial_nb").est.save(tmp_path / "model.pkl")
    with pytest.raises(NotFittedError):
        bayesgen.MultinomialNB().save(tmp_path / "model.nc")
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------------------------
# Atomic writes.


def _failing_to_netcdf(self, filepath, *args, **kwargs):
    with open(filepath, "wb") as handle:
        handle.write(b"\x89HDF\r\n\x1a\n half a model")
    raise OSError("No space left on device")


def test_failed_save_leaves_no_file_and_no_temporary(fits, tmp_path, monkeypatch):
    est = fits.conjugate("multinomial_nb").est
    monkeypatch.setattr(xr.DataTree, "to_netcdf", _failing_to_netcdf)
    with pytest.raises(OSError, match="No space"):
        est.save(tmp_path / "model.nc")
    assert list(tmp_path.iterdir()) == []


def test_failed_save_keeps_the_previous_file_intact(fits, saved, monkeypatch):
    before = saved.read_bytes()
    monkeypatch.setattr(xr.DataTree, "to_netcdf", _failing_to_netcdf)
    with pytest.raises(OSError):
        fits.conjugate("bernoulli_nb").est.save(saved)
    monkeypatch.undo()
    assert saved.read_bytes() == before
    assert [p.name for p in saved.parent.iterdir()] == [saved.name]
    assert isinstance(bayesgen.load(saved), bayesgen.MultinomialNB)


# --------------------------------------------------------------------------------------------
# No pickle: plain NetCDF of numbers and strings.


@pytest.mark.parametrize("name", MODELS)
def test_model_file_holds_only_numbers_and_strings(fits, tmp_path, name):
    path = tmp_path / "model.nc"
    fits.nuts(name).est.save(path)
    tree = xr.load_datatree(path, engine="netcdf4")
    assert {"posterior", "prior", "constant_data", "sample_stats", "closed_form"} <= set(
        tree.children
    )
    for node in tree.subtree:
        for variable in node.dataset.variables.values():
            assert variable.dtype.kind in "biufUS", (node.path, variable.name, variable.dtype)
        attrs = [*node.attrs.values()] + [
            value for var in node.dataset.variables.values() for value in var.attrs.values()
        ]
        for value in attrs:
            assert isinstance(value, str | int | float | np.number | np.ndarray | list), value
            if isinstance(value, np.ndarray):
                assert value.dtype.kind in "biufUS"
    assert tree.attrs["format"] == "bayesgen-model"
    params = json.loads(tree.attrs["params"])
    assert isinstance(params, dict) and params["random_seed"] == 20240
    # and netCDF4 itself reads every group without any Python object (VLEN) types
    with netCDF4.Dataset(path) as handle:
        for group in handle.groups.values():
            for variable in group.variables.values():
                assert variable.dtype is str or np.dtype(variable.dtype).kind in "biufS"
