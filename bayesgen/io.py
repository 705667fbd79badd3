"""Saving and loading fitted models: the only module that touches disk.

A model file is one NetCDF (HDF5) file holding a DataTree: the posterior (and prior,
sample_stats, constant_data groups), ``closed_form`` and ``map`` groups, and in the root attrs
the estimator's class, its hyperparameters as JSON, the class and feature names (as coords),
the file format version and the bayesgen version. There is no pickle anywhere, so loading a
file never runs code, and the file alone is enough to predict in a new process.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np
import xarray as xr

from bayesgen import __version__

FORMAT = "bayesgen-model"
FORMAT_VERSION = 1

_ESTIMATORS = ("GaussianDiscriminantAnalysis", "BernoulliNB", "MultinomialNB", "CategoricalNB")


def save(estimator, path) -> Path:
    """Write a fitted estimator to ``path`` atomically.

    The tree is written to a temporary file in the same folder, flushed to disk, then renamed
    over ``path``: a crash or a full disk never leaves a half-written model behind.

    Returns
    -------
    pathlib.Path
        The path written.
    """
    estimator._check_fitted()
    path = Path(path)
    if path.suffix != ".nc":
        raise ValueError(f"path: expected a .nc file name; got {str(path)!r}.")
    path.parent.mkdir(parents=True, exist_ok=True)
    tree = _to_tree(estimator)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(handle)
    try:
        tree.to_netcdf(temporary, engine="netcdf4")
        with open(temporary, "rb+") as written:
            os.fsync(written.fileno())
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return path


def load(path):
    """Read a model written by :func:`save`; returns a fitted estimator.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ValueError
        The file is truncated, not a bayesgen model, or from a newer format version.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"path: no model file at {str(path)!r}.")
    try:
        tree = xr.load_datatree(path, engine="netcdf4")
    except Exception as error:  # netCDF4/HDF5 raise OSError, RuntimeError, ValueError...
        raise ValueError(
            f"{str(path)!r} is not a readable bayesgen model file (truncated or not NetCDF): "
            f"{error}"
        ) from None
    attrs = tree.attrs
    if attrs.get("format") != FORMAT:
        raise ValueError(
            f"{str(path)!r} is a NetCDF file but not a bayesgen model (no format={FORMAT!r} "
            "attribute)."
        )
    version = int(attrs.get("format_version", -1))
    if version > FORMAT_VERSION:
        raise ValueError(
            f"{str(path)!r} uses model format {version}, newer than this bayesgen "
            f"({__version__}) reads ({FORMAT_VERSION}); upgrade bayesgen."
        )
    return _from_tree(tree, path)


def _to_tree(estimator) -> xr.DataTree:
    tree = estimator.idata_.copy()
    tree["closed_form"] = _netcdf_safe(estimator.closed_form_)
    if estimator.map_ is not None:
        tree["map"] = estimator.map_
    params = estimator.get_params(deep=False)
    prior = params.get("prior")
    if prior is not None:  # NormalInverseWishart: its resolved values live in closed_form
        params["prior"] = {
            key: (np.asarray(value).tolist() if value is not None else None)
            for key, value in vars(prior).items()
        }
    tree.attrs = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "bayesgen_version": __version__,
        "estimator": type(estimator).__name__,
        "params": json.dumps(params),
    }
    return tree


def _from_tree(tree: xr.DataTree, path: Path):
    import bayesgen
    from bayesgen.closed_form import NormalInverseWishart

    name = tree.attrs.get("estimator")
    if name not in _ESTIMATORS:
        raise ValueError(f"{str(path)!r}: unknown estimator {name!r} in the model file.")
    params = json.loads(tree.attrs["params"])
    if isinstance(params.get("prior"), dict):
        params["prior"] = NormalInverseWishart(**params["prior"])
    estimator = getattr(bayesgen, name)(**params)
    estimator.closed_form_ = _restore_closed_form(tree["closed_form"].to_dataset())
    estimator.map_ = tree["map"].to_dataset() if "map" in tree.children else None
    idata = tree.copy()
    for group in ("closed_form", "map"):
        if group in idata.children:
            del idata[group]
    idata.attrs = {}
    estimator.idata_ = idata
    estimator._set_fitted_attributes()
    return estimator


def _netcdf_safe(dataset: xr.Dataset) -> xr.Dataset:
    """NetCDF has no boolean type: store masks as int8 (restored on load)."""
    dataset = dataset.copy()
    for name, variable in dataset.data_vars.items():
        if variable.dtype == bool:
            dataset[name] = variable.astype(np.int8)
            dataset[name].attrs["bayesgen_dtype"] = "bool"
    return dataset


def _restore_closed_form(dataset: xr.Dataset) -> xr.Dataset:
    for name, variable in dataset.data_vars.items():
        if variable.attrs.get("bayesgen_dtype") == "bool":
            restored = variable.astype(bool)
            del restored.attrs["bayesgen_dtype"]  # the marker is not part of the saved data
            dataset[name] = restored
    return dataset
