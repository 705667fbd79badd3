"""Saving and loading fitted models: the module that touches disk.

A model file is one NetCDF (HDF5) file holding a DataTree: the posterior (and prior,
sample_stats, constant_data groups), ``closed_form`` and ``map`` groups, and in the root attrs
the estimator's class, its hyperparameters as JSON, the class and feature names (as coords),
the file format version and the bayesgen version. There is no pickle anywhere, so loading a
file never runs code, and the file alone is enough to predict in a new process.

The hyperparameters are stored and read back by the estimator's own parameter rules
(:mod:`bayesgen.input.params`), so this module knows no model's hyperparameters. The estimator
classes a file may name are handed to :func:`load`: this layer sits below the estimators.
:func:`load` checks the whole file against the schema that :func:`save` writes, and that its
parts agree (:mod:`bayesgen.io.file_checks`), and names what is wrong. The file is written
beside its target and renamed into place (:func:`bayesgen.input.files.replacing`), so a crash
or a full disk never leaves half a file behind nor destroys the previous one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import xarray as xr

from bayesgen import __version__
from bayesgen.inference.conjugate import ConjugatePosterior, Lazy
from bayesgen.inference.observed import add_training_data, read_training_data, upgrade_layout

# The "as" imports re-export names whose home was this module before bayesgen.input.files.
from bayesgen.input.files import check_output_path, replacing, write_failure
from bayesgen.input.params import (
    FitMismatch,
    FitRecord,
    decode_param,
    encode_param,
)
from bayesgen.io import file_checks

FORMAT = "bayesgen-model"
#: 2: a conjugate fit whose draws were never made is written as its closed form, seed and
#: draw layout, without draws (format 1 files, which always hold them, still load).
FORMAT_VERSION = 2


class _ModelFileError(ValueError):
    """One problem of a model file; :func:`load` adds the file name."""


def save(estimator, path) -> Path:
    """Write a fitted estimator to ``path`` atomically (see
    :func:`bayesgen.input.files.replacing`).

    The tree is written to a temporary file in the same folder, flushed to disk, then renamed
    over ``path``: a crash or a full disk never leaves a half-written model behind, and the
    previous file at ``path`` stays intact. Missing parent folders are created.

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    ValueError
        ``path`` does not end in ``.nc``, names a folder, lies under a file or a broken
        symbolic link; a hyperparameter cannot be stored as JSON; a class label or feature
        name is not text a file can hold (a NUL or a lone surrogate); or a conjugate fit
        promises more draws than a file may (:data:`bayesgen.io.file_checks.MAX_CONJUGATE_DRAWS`).
    OSError
        The write failed: "disk full" (ENOSPC), "file size limit reached" (EFBIG, the
        process's ``ulimit -f``) or the system's own error; the previous file is intact.

    Examples
    --------
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    >>> est = est.fit(X, y)
    >>> import tempfile
    >>> from pathlib import Path
    >>> from bayesgen.io.model_files import load, save
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = save(est, Path(folder) / "spam.nc")
    ...     print(path.name, type(load(path, [MultinomialNB])).__name__)
    spam.nc MultinomialNB
    """
    estimator.check_fitted()
    path = Path(path)
    if path.suffix != ".nc":
        raise ValueError(f"path: expected a .nc file name; got {str(path)!r}.")
    check_output_path(path)
    tree = _to_tree(estimator)
    _check_text(tree)
    with replacing(path) as temporary:
        try:
            tree.to_netcdf(temporary, engine="netcdf4")
        except (RuntimeError, OSError) as error:
            if isinstance(error, OSError) and error.strerror:
                raise  # already the system's words ("No space left on device")
            # netCDF4 reports a failed write as "NetCDF: HDF error": say which it was.
            needed = sum(
                variable.nbytes
                for node in tree.subtree
                for variable in node.dataset.variables.values()
            )
            raise write_failure(
                error, path, temporary, needed=needed, what="the model file"
            ) from None
    return path


def load(path, classes: Iterable[type]):
    """Read a model written by :func:`save`; returns a fitted estimator.

    The whole file is checked against the schema that :func:`save` writes: the groups and
    variables, their dims, the class and feature coordinates of every group, the
    hyperparameters, and finite draws; then that its parts agree, before anything is
    computed from them (:mod:`bayesgen.io.file_checks`): the hyperparameters by the estimator's
    own rules, counts finite and non-negative, size attributes within what the file holds,
    the closed form equal to what its statistics give, and the groups a fit writes together.

    Parameters
    ----------
    path : str or os.PathLike
    classes : iterable of estimator classes
        The classes a file may name (its ``estimator`` attribute is the class's name); this
        layer sits below the estimators, which hand them in (``bayesgen.load``).

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    PermissionError
        The file cannot be read.
    ValueError
        Naming the file and what is wrong with it: a folder, truncated, not a bayesgen model,
        from a newer format version, or parts that are missing or disagree.

    Examples
    --------
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    >>> est = est.fit(X, y)
    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from bayesgen.io.model_files import load
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     written = est.save(Path(folder) / "spam.nc")
    ...     loaded = load(written, [MultinomialNB])
    >>> bool(np.array_equal(loaded.predict_proba(X), est.predict_proba(X)))
    True
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"path: no model file at {str(path)!r}.")
    if path.is_dir():
        raise ValueError(f"path: {str(path)!r} is a folder, not a model file.")
    with open(path, "rb"):  # an unreadable file is a PermissionError, not a format problem
        pass
    try:
        tree = xr.load_datatree(path, engine="netcdf4")
    except Exception as error:  # netCDF4/HDF5 raise OSError, RuntimeError, ValueError...
        raise ValueError(
            f"{str(path)!r} is not a readable bayesgen model file (truncated or not NetCDF): "
            f"{error}"
        ) from None
    if tree.attrs.get("format") != FORMAT:
        raise ValueError(
            f"{str(path)!r} is a NetCDF file but not a bayesgen model (no format={FORMAT!r} "
            "attribute)."
        )
    try:
        return _from_tree(tree, {cls.__name__: cls for cls in classes})
    except _ModelFileError as error:
        raise ValueError(f"{str(path)!r} is not a valid bayesgen model file: {error}") from None


# -- writing the tree --------------------------------------------------------------------------


def _to_tree(estimator) -> xr.DataTree:
    exact = getattr(estimator, "posterior_", None)
    tree = _conjugate_groups(estimator, exact) if exact is not None else estimator.idata_.copy()
    tree["closed_form"] = _netcdf_safe(estimator.closed_form_)
    if estimator.map_ is not None:
        tree["map"] = estimator.map_
    tree.attrs = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "bayesgen_version": __version__,
        "estimator": type(estimator).__name__,
        "params": _params_json(_stored_params(estimator)),
    }
    if exact is not None:  # a conjugate fit: loading draws its posterior again (same seed)
        tree.attrs |= {
            "conjugate_posterior_seed": exact.random_seed,
            "conjugate_chains": exact.chains,
            "conjugate_draws": exact.draws_per_chain,
            "conjugate_prior_draws": exact.prior_draws,
            "conjugate_dtype": exact.dtype,
            "conjugate_created_at": exact.created_at,
        }
    return tree


def _conjugate_groups(estimator, exact: ConjugatePosterior) -> xr.DataTree:
    """What a file holds of a conjugate fit besides its closed form and seed.

    Draws that were never made (``idata_`` not used since the fit) are left out: the seed and
    the closed form make the same ones again on load, and 2 x 1,000 draws of a 20 x
    50,000-word model would be 16 GB. Draws that were made are kept as they are, with any
    group added to them (``posterior_predictive``) or any change made to them.
    """
    held = estimator.__dict__.get("_idata")
    drawn = held.made if isinstance(held, Lazy) else held
    if drawn is not None:
        return drawn.copy()
    # The same bound as load's, so that every file save writes loads.
    file_checks.check_conjugate_layout(
        exact.chains,
        exact.draws_per_chain,
        exact.prior_draws,
        n_classes=estimator.closed_form_.sizes["class"],
    )
    tree = xr.DataTree()
    if exact.observed is not None:
        add_training_data(tree, exact.observed)
    return tree


def _stored_params(estimator) -> dict:
    """The hyperparameters as the estimator's rules store them (:meth:`Rule.encode
    <bayesgen.input.params.Rule.encode>`)."""
    params = estimator.get_params(deep=False)
    rules = type(estimator).parameter_rules()
    record = FitRecord(estimator.classes_, estimator.closed_form_.attrs, params)
    return {name: encode_param(value, rules.get(name), record) for name, value in params.items()}


def _params_json(params: dict) -> str:
    """The hyperparameters as JSON; NumPy scalars and arrays become numbers and lists."""
    for key, value in params.items():
        try:
            json.dumps(value, default=_to_json)
        except TypeError:
            raise ValueError(
                f"{key}: cannot store {value!r} ({type(value).__name__}) in a model file; "
                "expected a number, string, list or None."
            ) from None
    return json.dumps(params, default=_to_json)


def _to_json(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(type(value).__name__)


def _netcdf_safe(dataset: xr.Dataset) -> xr.Dataset:
    """NetCDF has no boolean type: store masks as int8 (restored on load). HDF5 strings end at
    a NUL character: refuse names holding one rather than store them cut."""
    for dim in ("class", "feature"):
        if dim in dataset.coords and dataset[dim].dtype.kind in "USO":
            for name in dataset[dim].values:
                if "\x00" in str(name):
                    raise ValueError(
                        f"{dim} names: {str(name)!r} holds a NUL character, which a model file "
                        "cannot store; rename it."
                    )
    dataset = dataset.copy()
    for name, variable in dataset.data_vars.items():
        if variable.dtype == bool:
            dataset[name] = variable.astype(np.int8)
            dataset[name].attrs["bayesgen_dtype"] = "bool"
    return dataset


def _check_text(tree: xr.DataTree) -> None:
    """Refuse, before anything is written, labels and names a model file cannot hold: a
    lone surrogate (half of a UTF-16 pair, e.g. from a file decoded with
    ``errors="surrogateescape"``) is not Unicode text, and HDF5 strings are UTF-8."""
    for node in tree.subtree:
        for name, variable in node.dataset.variables.items():
            if variable.dtype.kind not in "UO":
                continue
            values = variable.values.ravel()
            try:
                "".join(map(str, values)).encode("utf-8")
                continue
            except UnicodeEncodeError:
                pass
            bad = next(str(v) for v in values if not _is_utf8(str(v)))
            what = {"class": "class label", "feature": "feature name", "feature2": "feature name"}
            raise ValueError(
                f"{what.get(name, f'{node.name} {name!r} value')} {bad!r} holds a lone "
                "surrogate (half of a UTF-16 pair), which is not Unicode text and a model file "
                "cannot store; rename it (e.g. decode its bytes with the right encoding)."
            )


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# -- reading the tree --------------------------------------------------------------------------


def _from_tree(tree: xr.DataTree, classes: dict[str, type]):
    attrs = tree.attrs
    version = attrs.get("format_version")
    if not isinstance(version, int | np.integer) or not 1 <= version:
        raise _ModelFileError(f"format_version: expected an integer >= 1; got {version!r}.")
    if version > FORMAT_VERSION:
        raise _ModelFileError(
            f"it uses model format {version}, newer than this bayesgen ({__version__}) reads "
            f"({FORMAT_VERSION}); upgrade bayesgen."
        )
    name = attrs.get("estimator")
    if name not in classes:
        raise _ModelFileError(f"unknown estimator {name!r}; expected one of {list(classes)}.")
    cls = classes[name]
    model = cls().model_
    conjugate = "conjugate_posterior_seed" in attrs
    # A conjugate fit's file holds no draws (they follow from its seed); others need theirs.
    for group in ("closed_form",) if conjugate else ("posterior", "closed_form"):
        if group not in tree.children:
            raise _ModelFileError(f"the {group!r} group is missing.")
    closed_form = _restore_closed_form(tree["closed_form"].to_dataset())
    if closed_form.attrs.get("model") != model.name:
        raise _ModelFileError(
            f"the estimator attribute says {name} but the closed_form group is of model "
            f"{closed_form.attrs.get('model')!r} (a {name} has {model.name!r})."
        )
    params = _read_params(attrs, cls, closed_form)
    # Files written before the ArviZ layout of bayesgen.inference.observed (log-likelihood "row").
    try:
        tree = upgrade_layout(tree)
    except (KeyError, ValueError) as error:
        raise _ModelFileError(f"its training rows do not fit together: {error}") from None
    try:
        file_checks.check_groups(tree, closed_form, model)
        _check_parts(tree, cls, params, closed_form)
    except ValueError as error:
        raise _ModelFileError(str(error)) from None
    map_point = tree["map"].to_dataset() if "map" in tree.children else None
    idata = tree.copy()
    for group in ("closed_form", "map"):
        if group in idata.children:
            del idata[group]
    idata.attrs = {}
    posterior = _conjugate_posterior(attrs, closed_form, idata, model) if conjugate else None
    if posterior is not None and "posterior" not in idata.children:
        idata = None  # drawn on first access, as after the fit
    try:
        return cls(**params).set_posterior(closed_form, idata, map_point, posterior=posterior)
    except (KeyError, ValueError, TypeError, IndexError) as error:
        raise _ModelFileError(f"its parts do not fit together: {error}") from None


def _read_params(attrs, cls, closed_form: xr.Dataset) -> dict:
    """The estimator's parameters, read back by its rules (:meth:`Rule.decode
    <bayesgen.input.params.Rule.decode>`) against what its closed form records."""
    if "params" not in attrs:
        raise _ModelFileError("the 'params' attribute (the hyperparameters) is missing.")
    try:
        stored = json.loads(attrs["params"])
    except (TypeError, json.JSONDecodeError) as error:
        raise _ModelFileError(f"the 'params' attribute is not valid JSON ({error}).") from None
    if not isinstance(stored, dict):
        raise _ModelFileError(
            f"the 'params' attribute: expected a JSON object; got {type(stored).__name__}."
        )
    unknown = sorted(set(stored) - set(cls().get_params(deep=False)))
    if unknown:
        raise _ModelFileError(f"params: {cls.__name__} has no hyperparameters {unknown}.")
    rules = cls.parameter_rules()
    labels = closed_form["class"].values.tolist() if "class" in closed_form.dims else []
    record = FitRecord(labels, dict(closed_form.attrs), stored)
    params = {}
    for name, value in stored.items():
        rule = rules.get(name)
        try:
            params[name] = decode_param(name, value, rule, record)
        except FitMismatch as mismatch:
            raise _ModelFileError(
                f"params say {name}={value!r} but the closed_form group was computed with "
                f"{name}={mismatch.recorded!r}."
            ) from None
        except (TypeError, ValueError) as error:
            raise _ModelFileError(f"params: {error}") from None
    return params


def _check_parts(tree: xr.DataTree, cls, params: dict, closed_form: xr.Dataset) -> None:
    """What the groups' variables and dims do not show (:mod:`bayesgen.io.file_checks`): the
    params under the estimator's rules, counts and sizes, the groups a fit writes together,
    and the closed form against its statistics, in that order (the cheap checks first)."""
    estimator = file_checks.check_params(cls, params)
    file_checks.check_binarize(estimator, closed_form)
    file_checks.check_statistics(closed_form, estimator.model_)
    file_checks.check_groups_together(tree)
    file_checks.check_recomputed(estimator, closed_form)


def _conjugate_posterior(attrs, closed_form: xr.Dataset, idata: xr.DataTree, model):
    """The exact posterior of a file saved from a conjugate fit (``conjugate_posterior_seed``),
    matching its stored draws."""
    if "posterior" in idata.children:  # written before files left the draws out
        posterior = idata["posterior"]
        layout = {
            "chains": posterior.sizes["chain"],
            "draws": posterior.sizes["draw"],
            "prior_draws": idata["prior"].sizes["draw"] if "prior" in idata.children else 0,
            "dtype": str(next(iter(posterior.data_vars.values())).dtype),
        }
    else:
        layout = {
            key: _positive_int(attrs, f"conjugate_{key}", minimum=0 if key == "prior_draws" else 1)
            for key in ("chains", "draws", "prior_draws")
        }
        layout["dtype"] = attrs.get("conjugate_dtype")
        try:
            file_checks.check_conjugate_layout(
                layout["chains"],
                layout["draws"],
                layout["prior_draws"],
                n_classes=closed_form.sizes["class"],
            )
        except ValueError as error:
            raise _ModelFileError(str(error)) from None
        if layout["dtype"] not in ("float64", "float32"):
            raise _ModelFileError(
                f"conjugate_dtype: expected 'float64' or 'float32'; got {layout['dtype']!r}."
            )
    return ConjugatePosterior(
        closed_form,
        model_family=model,
        random_seed=_positive_int(attrs, "conjugate_posterior_seed", minimum=0),
        created_at=str(attrs.get("conjugate_created_at", "")) or None,
        observed=read_training_data(idata),
        **layout,
    )


def _positive_int(attrs, key: str, *, minimum: int) -> int:
    value = attrs.get(key)
    if isinstance(value, np.generic):  # netCDF attributes come back as NumPy scalars
        value = value.item()
    if not isinstance(value, int) or value < minimum:
        raise _ModelFileError(f"{key}: expected an integer >= {minimum}; got {value!r}.")
    return value


def _restore_closed_form(dataset: xr.Dataset) -> xr.Dataset:
    for name, variable in dataset.data_vars.items():
        if variable.attrs.get("bayesgen_dtype") == "bool":
            restored = variable.astype(bool)
            del restored.attrs["bayesgen_dtype"]  # the marker is not part of the saved data
            dataset[name] = restored
    return dataset
