"""Saving and loading fitted models, and safe file writing: the module that touches disk.

A model file is one NetCDF (HDF5) file holding a DataTree: the posterior (and prior,
sample_stats, constant_data groups), ``closed_form`` and ``map`` groups, and in the root attrs
the estimator's class, its hyperparameters as JSON, the class and feature names (as coords),
the file format version and the bayesgen version. There is no pickle anywhere, so loading a
file never runs code, and the file alone is enough to predict in a new process.

:func:`load` checks the whole file against the schema that :func:`save` writes, and that its
parts agree (:mod:`bayesgen.io.file_checks`), and names what is wrong. Every file bayesgen writes
is written beside its target and renamed into place (:func:`replacing`,
:func:`replacing_folder`), so a crash or a full disk never leaves half a file behind nor
destroys the previous one.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import re
import secrets
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from bayesgen import __version__
from bayesgen.families import FAMILIES, family
from bayesgen.io.file_checks import readable_size as _size

FORMAT = "bayesgen-model"
#: 2: a conjugate fit whose draws were never made is written as its closed form, seed and
#: draw layout, without draws (format 1 files, which always hold them, still load).
FORMAT_VERSION = 2

#: Temporary files and folders of a write that are older than this were left by a killed
#: process (a save of gigabytes takes minutes) and are removed by the next write of the target.
STALE_AFTER_S = 3600.0

_HYPERPARAMETERS = ("alpha", "class_alpha")  # positive numbers, also in the closed_form attrs


class _ModelFileError(ValueError):
    """One problem of a model file; :func:`load` adds the file name."""


# -- writing files -----------------------------------------------------------------------------


def check_output_path(path, *, argument: str = "path", folder: bool = False) -> Path:
    """Check that ``path`` can be written as a file (or, with ``folder``, a folder).

    Missing parent folders are fine (the writers create them); a path that names an existing
    folder (a file when ``folder``), or lies under a file, is not.

    Raises
    ------
    ValueError
        Naming ``argument``, the path and what is in the way.
    """
    path = Path(path)
    if folder and path.exists() and not path.is_dir():
        raise ValueError(f"{argument}: {str(path)!r} is a file; expected a folder.")
    if not folder and path.is_dir():
        raise ValueError(f"{argument}: {str(path)!r} is a folder; expected a file name.")
    for parent in path.absolute().parents:
        if parent.is_symlink() and not parent.exists():
            raise ValueError(
                f"{argument}: {str(path)!r} lies under {str(parent)!r}, {_broken_link(parent)}"
            )
        if parent.exists():
            if not parent.is_dir():
                raise ValueError(
                    f"{argument}: {str(path)!r} lies under {str(parent)!r}, which is a file, "
                    "not a folder."
                )
            break
    return path


@contextlib.contextmanager
def replacing(path) -> Iterator[Path]:
    """Write a file atomically: yields a temporary path beside ``path``, renamed over it when
    the block succeeds.

    The temporary file is ``.NAME.<random>.tmp`` in the target's folder (created if missing),
    flushed to disk before the rename. On any error it is removed and ``path`` is left as it
    was. The new file gets the mode of the file it replaces, or else the umask's default
    (``0o666 & ~umask``), as ``open`` would give it. Temporary files of the same target older
    than :data:`STALE_AFTER_S` (left by a killed process) are removed.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(path)
    temporary, mode = _create_temporary(path)
    if path.exists():
        mode = os.stat(path).st_mode & 0o7777
    try:
        yield temporary
        with open(temporary, "rb+") as written:
            os.fsync(written.fileno())
        os.chmod(temporary, mode)  # writers such as HDF5 may recreate the file
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)


@contextlib.contextmanager
def replacing_folder(path) -> Iterator[Path]:
    """Write a folder as a whole: yields a new empty folder beside ``path``, swapped into place
    when the block succeeds.

    The swap renames the previous folder aside, the new one in, then removes the previous one;
    on any error before the swap the new folder is removed and the previous one stays intact.
    Files in the new folder are always fresh files, never links planted in the old folder.

    Raises
    ------
    ValueError
        ``path`` is a symbolic link or a file.
    """
    path = Path(path)
    if path.is_symlink():
        raise ValueError(
            f"out_dir: {str(path)!r} is a symbolic link; pass the folder it points to "
            f"({str(path.resolve())!r}) if that is meant."
        )
    check_output_path(path, argument="out_dir", folder=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(path)
    mode = os.stat(path).st_mode & 0o7777 if path.exists() else None
    while True:
        temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
        try:
            os.mkdir(temporary)  # 0o777 & ~umask, as a plain mkdir
            break
        except FileExistsError:
            continue
    try:
        yield temporary
        if mode is not None:
            os.chmod(temporary, mode)
            aside = temporary.with_suffix(".old")
            os.rename(path, aside)
            try:
                os.rename(temporary, path)
            except BaseException:
                os.rename(aside, path)
                raise
            shutil.rmtree(aside, ignore_errors=True)
        else:
            os.rename(temporary, path)
    finally:
        if temporary.exists():
            shutil.rmtree(temporary, ignore_errors=True)


def _broken_link(link: Path) -> str:
    """What is wrong with a symbolic link that leads to no file or folder."""
    try:
        os.stat(link)
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "a symbolic link loop (following it leads back to it); expected a folder."
    return f"a symbolic link to {os.readlink(link)!r}, which does not exist; expected a folder."


def _create_temporary(path: Path) -> tuple[Path, int]:
    """A new empty file ``.NAME.<random>.tmp`` beside ``path`` and the mode it got."""
    while True:
        temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
        try:
            handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        try:
            return temporary, os.fstat(handle).st_mode & 0o7777
        finally:
            os.close(handle)


def _remove_stale(path: Path) -> None:
    """Remove temporaries of ``path`` left by killed writes (older than STALE_AFTER_S).

    Also recognises the ``tempfile.mkstemp`` names of bayesgen 0.1 (``.NAME.<8 chars>.tmp``).
    """
    if not path.parent.is_dir():
        return
    pattern = re.compile(re.escape(f".{path.name}.") + r"[A-Za-z0-9_]{8,16}\.(tmp|old)")
    cutoff = time.time() - STALE_AFTER_S
    for entry in os.scandir(path.parent):
        if not pattern.fullmatch(entry.name):
            continue
        try:
            if entry.stat(follow_symlinks=False).st_mtime >= cutoff:
                continue  # maybe another process's write in progress
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
        except FileNotFoundError:
            continue  # removed meanwhile


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def escape_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` safe to open in a spreadsheet (OWASP's CSV-injection rule).

    Every string cell, column name and index label that starts with ``= + - @``, a tab or a
    carriage return gets a leading single quote, so that a spreadsheet shows it as text instead
    of running it as a formula (e.g. a class label ``=HYPERLINK(...)``). Numbers stay numbers.
    """

    def escape(value):
        if isinstance(value, str) and value.startswith(_FORMULA_START):
            return "'" + value
        return value

    def escape_index(index: pd.Index) -> pd.Index:
        if isinstance(index, pd.MultiIndex):
            return index.set_levels([level.map(escape) for level in index.levels])
        return index.map(escape)

    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column]):
            out[column] = out[column].map(escape)
    out.columns = escape_index(out.columns)
    out.index = escape_index(out.index)
    return out


def write_csv(frame: pd.DataFrame, path, **options) -> Path:
    """Write ``frame`` as CSV atomically (:func:`replacing`), formulas escaped
    (:func:`escape_formulas`); ``options`` go to ``DataFrame.to_csv``."""
    path = check_output_path(path)
    with replacing(path) as temporary:
        escape_formulas(frame).to_csv(temporary, **options)
    return path


# -- models ------------------------------------------------------------------------------------


def save(estimator, path) -> Path:
    """Write a fitted estimator to ``path`` atomically (see :func:`replacing`).

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
    ...     print(path.name, type(load(path)).__name__)
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
            raise _write_error(error, path, temporary, tree) from None
    return path


def _write_error(error: Exception, path: Path, temporary: Path, tree: xr.DataTree) -> OSError:
    """The OSError of a model file write that HDF5 reported only as an error of its own."""
    needed = sum(
        variable.nbytes for node in tree.subtree for variable in node.dataset.variables.values()
    )
    written = temporary.stat().st_size if temporary.exists() else 0
    keep = f"{str(path)!r} is unchanged"
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    except (ImportError, OSError, ValueError):  # no resource module (Windows)
        limit = None
    if limit is not None and limit != resource.RLIM_INFINITY and max(needed, written) >= limit:
        return OSError(
            errno.EFBIG,
            f"file size limit reached: the model file needs about {_size(needed)} but this "
            f"process may write files of at most {_size(limit)} (ulimit -f); {keep}",
            str(path),
        )
    space = os.statvfs(temporary.parent if temporary.parent.exists() else path.parent)
    free = space.f_bavail * space.f_frsize
    if free + written < needed or free < 1 << 20:
        return OSError(
            errno.ENOSPC,
            f"disk full: the model file needs about {_size(needed)} and "
            f"{str(path.parent)!r} has {_size(free)} free; {keep}",
            str(path),
        )
    return OSError(errno.EIO, f"writing the model file failed ({error}); {keep}", str(path))


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


def load(path):
    """Read a model written by :func:`save`; returns a fitted estimator.

    The whole file is checked against the schema that :func:`save` writes: the groups and
    variables, their dims, the class and feature coordinates of every group, the
    hyperparameters, and finite draws; then that its parts agree, before anything is
    computed from them (:mod:`bayesgen.io.file_checks`): the hyperparameters by the estimator's
    own rules, counts finite and non-negative, size attributes within what the file holds,
    the closed form equal to what its statistics give, and the groups a fit writes together.

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
    >>> from bayesgen import load
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     written = est.save(Path(folder) / "spam.nc")
    ...     loaded = load(written)
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
    attrs = tree.attrs
    if attrs.get("format") != FORMAT:
        raise ValueError(
            f"{str(path)!r} is a NetCDF file but not a bayesgen model (no format={FORMAT!r} "
            "attribute)."
        )
    try:
        return _from_tree(tree)
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


def _conjugate_groups(estimator, exact) -> xr.DataTree:
    """What a file holds of a conjugate fit besides its closed form and seed.

    Draws that were never made (``idata_`` not used since the fit) are left out: the seed and
    the closed form make the same ones again on load, and 2 x 1,000 draws of a 20 x
    50,000-word model would be 16 GB. Draws that were made are kept as they are, with any
    group added to them (``posterior_predictive``) or any change made to them.
    """
    from bayesgen.inference.conjugate import Lazy

    held = estimator.__dict__.get("_idata")
    drawn = held.made if isinstance(held, Lazy) else held
    if drawn is not None:
        return drawn.copy()
    from bayesgen.io.file_checks import check_conjugate_layout

    # The same bound as load's, so that every file save writes loads.
    check_conjugate_layout(
        exact.chains,
        exact.draws_per_chain,
        exact.prior_draws,
        n_classes=estimator.closed_form_.sizes["class"],
    )
    tree = xr.DataTree()
    if exact.observed is not None:
        from bayesgen.inference.observed import add_training_data

        add_training_data(tree, exact.observed)
    return tree


def _stored_params(estimator) -> dict:
    """The hyperparameters to store; one λ per class ({class label: λ}) as a list in the order
    of ``classes_`` (JSON keys could not keep the labels' types; the list's order can)."""
    from bayesgen.input.params import is_class_mapping

    params = estimator.get_params(deep=False)
    if is_class_mapping(params.get("alpha")):
        params["alpha"] = estimator.alpha_.tolist()
    return params


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
    from bayesgen.closed_form import NormalInverseWishart

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, NormalInverseWishart):  # its resolved values live in closed_form
        return dict(vars(value))
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


# -- reading and checking the tree -------------------------------------------------------------


def _from_tree(tree: xr.DataTree):
    import bayesgen
    from bayesgen.inference.observed import upgrade_layout

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
    # What save writes, per model: the family's posterior variables (the closed_form group
    # holds an estimate of each, with the same dims) and its sufficient statistics.
    estimators = {model_family.estimator: model_family for model_family in FAMILIES.values()}
    if name not in estimators:
        raise _ModelFileError(f"unknown estimator {name!r}; expected one of {list(estimators)}.")
    cls = getattr(bayesgen, name)
    conjugate = "conjugate_posterior_seed" in attrs
    # A conjugate fit's file holds no draws (they follow from its seed); others need theirs.
    for group in ("closed_form",) if conjugate else ("posterior", "closed_form"):
        if group not in tree.children:
            raise _ModelFileError(f"the {group!r} group is missing.")
    closed_form = _restore_closed_form(tree["closed_form"].to_dataset())
    model = closed_form.attrs.get("model")
    if model != estimators[name].name:
        raise _ModelFileError(
            f"the estimator attribute says {name} but the closed_form group is of model "
            f"{model!r} (a {name} has {estimators[name].name!r})."
        )
    params = _read_params(attrs, cls, closed_form)
    # Files written before the ArviZ layout of bayesgen.inference.observed (log-likelihood "row").
    try:
        tree = upgrade_layout(tree)
    except (KeyError, ValueError) as error:
        raise _ModelFileError(f"its training rows do not fit together: {error}") from None
    _check_groups(tree, closed_form, model)
    _check_parts(tree, cls, params, closed_form)
    map_point = tree["map"].to_dataset() if "map" in tree.children else None
    idata = tree.copy()
    for group in ("closed_form", "map"):
        if group in idata.children:
            del idata[group]
    idata.attrs = {}
    posterior = _conjugate_posterior(attrs, closed_form, idata) if conjugate else None
    if posterior is not None and "posterior" not in idata.children:
        idata = None  # drawn on first access, as after the fit
    try:
        return cls(**params).set_posterior(closed_form, idata, map_point, posterior=posterior)
    except (KeyError, ValueError, TypeError, IndexError) as error:
        raise _ModelFileError(f"its parts do not fit together: {error}") from None


def _check_parts(tree: xr.DataTree, cls, params: dict, closed_form: xr.Dataset) -> None:
    """What the groups' variables and dims do not show (:mod:`bayesgen.io.file_checks`): the
    params under the estimator's rules, counts and sizes, the groups a fit writes together,
    and the closed form against its statistics, in that order (the cheap checks first)."""
    from bayesgen.io import file_checks

    try:
        estimator = file_checks.check_params(cls, params)
        file_checks.check_binarize(estimator, closed_form)
        file_checks.check_statistics(closed_form)
        file_checks.check_groups_together(tree)
        file_checks.check_recomputed(estimator, closed_form)
    except ValueError as error:
        raise _ModelFileError(str(error)) from None


def _conjugate_posterior(attrs, closed_form: xr.Dataset, idata: xr.DataTree):
    """The exact posterior of a file saved from a conjugate fit (``conjugate_posterior_seed``),
    matching its stored draws; None for other files."""
    if "conjugate_posterior_seed" not in attrs:
        return None
    from bayesgen.inference.conjugate import ConjugatePosterior
    from bayesgen.inference.observed import read_training_data

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
        _check_layout(layout, closed_form.sizes["class"])
        if layout["dtype"] not in ("float64", "float32"):
            raise _ModelFileError(
                f"conjugate_dtype: expected 'float64' or 'float32'; got {layout['dtype']!r}."
            )
    return ConjugatePosterior(
        closed_form,
        random_seed=_positive_int(attrs, "conjugate_posterior_seed", minimum=0),
        created_at=str(attrs.get("conjugate_created_at", "")) or None,
        observed=read_training_data(idata),
        **layout,
    )


def _check_layout(layout: dict, n_classes: int) -> None:
    from bayesgen.io.file_checks import check_conjugate_layout

    try:
        check_conjugate_layout(
            layout["chains"], layout["draws"], layout["prior_draws"], n_classes=n_classes
        )
    except ValueError as error:
        raise _ModelFileError(str(error)) from None


def _positive_int(attrs, key: str, *, minimum: int) -> int:
    value = attrs.get(key)
    if isinstance(value, np.generic):  # netCDF attributes come back as NumPy scalars
        value = value.item()
    if not isinstance(value, int) or value < minimum:
        raise _ModelFileError(f"{key}: expected an integer >= {minimum}; got {value!r}.")
    return value


def _read_params(attrs, cls, closed_form: xr.Dataset) -> dict:
    from bayesgen.closed_form import NormalInverseWishart
    from bayesgen.input.params import EVIDENCE, EVIDENCE_PER_CLASS

    if "params" not in attrs:
        raise _ModelFileError("the 'params' attribute (the hyperparameters) is missing.")
    try:
        params = json.loads(attrs["params"])
    except (TypeError, json.JSONDecodeError) as error:
        raise _ModelFileError(f"the 'params' attribute is not valid JSON ({error}).") from None
    if not isinstance(params, dict):
        raise _ModelFileError(
            f"the 'params' attribute: expected a JSON object; got {type(params).__name__}."
        )
    unknown = sorted(set(params) - set(cls().get_params(deep=False)))
    if unknown:
        raise _ModelFileError(f"params: {cls.__name__} has no hyperparameters {unknown}.")
    for key in _HYPERPARAMETERS:
        if key not in params:
            continue
        value = params[key]
        chosen = (EVIDENCE, EVIDENCE_PER_CLASS) if key == "alpha" else (EVIDENCE,)
        if isinstance(value, str) and value in chosen and family(closed_form).smoothing:
            # Chosen at fit (naive Bayes): the closed_form attrs hold the number (alpha_).
            continue
        if key == "alpha" and isinstance(value, list) and family(closed_form).smoothing:
            params[key] = _read_class_alphas(value, closed_form)
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise _ModelFileError(f"params: {key} must be a positive number; got {value!r}.")
        if not math.isfinite(value):
            raise _ModelFileError(f"params: {key} must be finite; got {value!r}.")
        saved = closed_form.attrs.get(key)
        if key == "alpha" and params.get("alpha_prior") is not None:
            saved = None  # λ was learned: the closed_form attrs hold its posterior mean
        if saved is not None and not np.isclose(float(saved), value, rtol=1e-12, atol=0):
            raise _ModelFileError(
                f"params say {key}={value!r} but the closed_form group was computed with "
                f"{key}={float(saved)!r}."
            )
    if params.get("alpha_prior") is not None:
        params["alpha_prior"] = _read_alpha_prior(params["alpha_prior"], closed_form)
    if isinstance(params.get("prior"), dict):
        try:
            params["prior"] = NormalInverseWishart(**params["prior"])
        except TypeError as error:
            raise _ModelFileError(f"params: prior: {error}.") from None
    return params


def _read_class_alphas(value: list, closed_form: xr.Dataset) -> dict:
    """One λ per class (a JSON list in the order of the classes) as the estimator takes it, a
    mapping {class label: λ}; it must be the closed form's."""
    n_classes = closed_form.sizes.get("class", 0)
    valid = len(value) == n_classes and all(
        not isinstance(v, bool) and isinstance(v, int | float) and math.isfinite(v) and v > 0
        for v in value
    )
    if not valid:
        raise _ModelFileError(
            f"params: alpha must be a positive number or a list of {n_classes} finite "
            f"numbers > 0 (one λ per class); got {value!r}."
        )
    alpha = np.array(value, dtype=np.float64)
    saved = np.atleast_1d(np.asarray(closed_form.attrs.get("alpha", np.nan), dtype=np.float64))
    if saved.shape != alpha.shape or not np.allclose(saved, alpha, rtol=1e-12, atol=0):
        raise _ModelFileError(
            f"params say alpha={value!r} but the closed_form group was computed with "
            f"alpha={saved.tolist()!r}."
        )
    labels = closed_form["class"].values.tolist()  # Python scalars, as a user writes them
    return dict(zip(labels, alpha.tolist(), strict=True))


def _read_alpha_prior(value, closed_form: xr.Dataset) -> tuple[float, float]:
    """The Gamma hyperprior on λ (a JSON list), as the tuple the estimator was given; it must
    be the one the closed_form group records."""
    from bayesgen.families.hyperprior import (
        ALPHA_PRIOR_EXPECTED,
        GammaHyperprior,
        fitted_alpha_prior,
    )

    if GammaHyperprior().error(value) is not None:
        raise _ModelFileError(
            f"params: alpha_prior: expected {ALPHA_PRIOR_EXPECTED}; got {value!r}."
        )
    value = (float(value[0]), float(value[1]))
    saved = fitted_alpha_prior(closed_form)
    if saved is None or not np.allclose(saved, value, rtol=1e-12, atol=0):
        raise _ModelFileError(
            f"params say alpha_prior={list(value)!r} but the closed_form group was computed "
            f"with {'no hyperprior' if saved is None else f'alpha_prior={list(saved)!r}'}."
        )
    return value


def _check_groups(tree: xr.DataTree, closed_form: xr.Dataset, model: str) -> None:
    """Variables, dims, sizes, coordinates and finite values of every group."""
    n_classes = closed_form.sizes.get("class", 0)
    if n_classes < 1:
        raise _ModelFileError("the closed_form group has no classes.")
    model_family = family(model)
    parameters = model_family.parameter_dims(closed_form)
    _check_variables(closed_form, "closed_form", {**parameters, **model_family.statistics})
    for dim in ("class", "feature"):
        values = closed_form[dim].values if dim in closed_form.coords else None
        if values is not None and len(set(values.tolist())) != len(values):
            raise _ModelFileError(f"the closed_form group's {dim} names are not unique.")
    for group in ("posterior", "prior"):
        if group not in tree.children:
            continue
        dataset = tree[group].to_dataset()
        _check_variables(dataset, group, {k: ("chain", "draw", *d) for k, d in parameters.items()})
        for dim in ("chain", "draw"):
            if dataset.sizes[dim] < 1:
                raise _ModelFileError(f"the {group!r} group has no {dim}s.")
        for variable in parameters:
            values = dataset[variable].values
            if not np.isfinite(values).all():
                raise _ModelFileError(
                    f"{group} {variable!r} holds {np.count_nonzero(~np.isfinite(values))} NaN "
                    f"or infinite draws of {values.size}."
                )
            if variable.endswith("_prob") and not ((values >= 0) & (values <= 1)).all():
                raise _ModelFileError(f"{group} {variable!r} holds values outside [0, 1].")
    if "map" in tree.children:
        _check_variables(tree["map"].to_dataset(), "map", parameters)
    for variable in parameters:
        if not np.isfinite(closed_form[variable].values).all():
            raise _ModelFileError(f"closed_form {variable!r} holds NaN or infinite values.")
    for child in tree.children.values():
        _check_alignment(child.to_dataset(), child.name, closed_form)
    if "sample_stats" in tree.children:
        stats, posterior = tree["sample_stats"], tree["posterior"]
        for dim in ("chain", "draw"):
            if dim in stats.dims and stats.sizes[dim] != posterior.sizes[dim]:
                raise _ModelFileError(
                    f"sample_stats has {stats.sizes[dim]} {dim}s but the posterior has "
                    f"{posterior.sizes[dim]}."
                )
    if "observed_data" in tree.children:
        from bayesgen.inference.observed import check_observed

        try:
            check_observed(tree, n_classes, closed_form.sizes["feature"])
        except ValueError as error:
            raise _ModelFileError(str(error)) from None


def _check_variables(dataset: xr.Dataset, group: str, expected: dict) -> None:
    for variable, dims in expected.items():
        if variable not in dataset.data_vars:
            raise _ModelFileError(f"the {group!r} group has no variable {variable!r}.")
        if dataset[variable].dims != tuple(dims):
            raise _ModelFileError(
                f"{group} {variable!r} has dims {dataset[variable].dims}; expected {tuple(dims)}."
            )


def _check_alignment(dataset: xr.Dataset, group: str, closed_form: xr.Dataset) -> None:
    """The class, feature and category dims of a group agree with the closed_form group."""
    for dim in ("class", "feature", "feature2", "category"):
        if dim not in dataset.dims or dim not in closed_form.dims:
            continue
        size, expected = dataset.sizes[dim], closed_form.sizes[dim]
        if size != expected:
            raise _ModelFileError(
                f"the {group!r} group has {size} entries along {dim!r} but the closed_form "
                f"group has {expected}."
            )
        if dim in ("class", "feature") and dim in dataset.coords and dim in closed_form.coords:
            if not np.array_equal(dataset[dim].values, closed_form[dim].values):
                raise _ModelFileError(
                    f"the {group!r} group's {dim} names {_preview(dataset[dim].values)} differ "
                    f"from the closed_form group's {_preview(closed_form[dim].values)}."
                )


def _preview(values: np.ndarray) -> str:
    shown = [str(v) for v in values[:5]]
    return str(shown)[:-1] + (", ...]" if len(values) > 5 else "]")


def _restore_closed_form(dataset: xr.Dataset) -> xr.Dataset:
    for name, variable in dataset.data_vars.items():
        if variable.attrs.get("bayesgen_dtype") == "bool":
            restored = variable.astype(bool)
            del restored.attrs["bayesgen_dtype"]  # the marker is not part of the saved data
            dataset[name] = restored
    return dataset
