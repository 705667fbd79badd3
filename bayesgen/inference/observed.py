"""The training rows and their pointwise log-likelihood, laid out as PyMC and ArviZ expect.

After ``fit``, ``est.idata_`` holds, besides the posterior, one observed variable per training
row, ``y``, under the same name in every group that ArviZ matches by name:

* ``observed_data``: ``y`` (dim ``obs``), each row's class as an index into the ``class``
  coordinate (booleans and mixed labels have no NetCDF type, integers do); nothing else, so
  that ``az.loo_pit(est.idata_)`` and ``az.plot_ppc_dist(est.idata_)`` need no ``var_names``;
* ``log_likelihood``: ``y`` (chain, draw, obs) = log p(x_i, y_i | θ), the joint density of
  row i — its features and its label — for every posterior draw, fully normalised (for text,
  the multinomial given the document's length), in the posterior's float type. Leaving row i
  out removes both, so this is what ``az.loo`` and ``az.compare`` need (one variable: no
  ``var_name``); it is named after ``y``, the row's one observed variable;
* ``posterior_predictive`` (after ``est.sample_posterior_predictive``): ``y`` (chain, draw,
  obs), a label drawn from p(y | x_i, θ) for the row's own features and every draw θ (the
  narrowest signed integer type that holds the class codes). With
  the PSIS weights of the joint log-likelihood, ``az.loo_pit`` is then P(ỹ_i ≤ y_i | x_i,
  data without row i), randomised over ties: uniform when the leave-one-out class
  probabilities are calibrated (for any order of the classes), so ``az.plot_loo_pit`` checks
  the classifier's calibration; ``az.plot_ppc_rootogram`` compares the predicted and the
  observed class counts;
* ``constant_data``: besides the sufficient statistics, the rows X the model saw — dense as
  ``X`` (obs, feature), or a sparse matrix in CSR form as ``X_data`` and ``X_indices`` (dim
  ``nonzero``) and ``X_indptr`` (dim ``obs_pointer``), so that a bag of words costs its
  non-zeros — the weights ``sample_weight`` (obs) where any differs from 1, and the
  statistics that the predictive checks compare (the family's ``predictive_statistics``,
  e.g. ``distinct_words``); each of these has the attribute ``source = "training rows"``.

Data sets simulated from the posterior given the training labels (rows drawn from
p(x | y_i, θ) and their statistics, :mod:`bayesgen.inference.simulation`) go to their own group,
``posterior_predictive_rows``, as they have no observed variable of their own.

The rows are stored as the model saw them (after ``binarize``), so :func:`training_rows`
gives back exactly what was fitted. Files written before this layout (``row`` in
``log_likelihood``, the rows in ``observed_data``) are moved to it on load
(:func:`upgrade_layout`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp
import xarray as xr

from bayesgen.families import Family

#: Parameters held in float64 at once while computing log-likelihoods or predictions.
DRAW_CHUNK_ELEMENTS = 20_000_000
#: The one observed variable of every row, in observed_data, log_likelihood and the predictive.
OBSERVED = "y"
#: ``source`` attribute of the constant_data variables that come from the training rows.
TRAINING_ROWS = "training rows"
#: The variables that hold the rows X themselves (dense, or sparse in CSR form).
ROW_VARIABLES = ("X", "X_data", "X_indices", "X_indptr")
#: The model's coordinates that :func:`training_data` carries beside the rows.
MODEL_COORDS = ("class", "feature", "category")
_Y_MEANING = "index into the class coordinate"
_LOG_LIKELIHOOD_MEANING = "log p(x_i, y_i | theta): the joint density of row i, features and label"


def training_data(model_family: Family, estimates: xr.Dataset, X, y_codes) -> xr.Dataset:
    """Checked training rows X and class codes ``y_codes`` as one Dataset: ``y``, the rows
    (``X``, or ``X_data``, ``X_indices`` and ``X_indptr``) and the family's predictive
    statistics. :func:`add_training_data` puts it into a tree's groups.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen import closed_form
    >>> from bayesgen.families import family
    >>> X = np.array([[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]], dtype=float)
    >>> y_codes = np.array([0, 0, 1, 1])
    >>> stats = closed_form.multinomial_nb(X, y_codes)
    >>> from bayesgen.inference.observed import training_data
    >>> data = training_data(family(stats), stats, X, y_codes)
    >>> data["X"].shape, data["y"].values.tolist(), sorted(data.data_vars)
    ((4, 3), [0, 0, 1, 1], ['X', 'distinct_words', 'doc_length', 'y'])
    """
    n_rows = X.shape[0]
    variables = {OBSERVED: (("obs",), np.asarray(y_codes, dtype=np.int64))}
    if sp.issparse(X):
        X = sp.csr_array(X)
        variables |= {
            "X_data": (("nonzero",), X.data),
            "X_indices": (("nonzero",), X.indices.astype(np.int64)),
            "X_indptr": (("obs_pointer",), X.indptr.astype(np.int64)),
        }
    else:
        variables["X"] = (("obs", "feature"), np.asarray(X))
    variables |= model_family.predictive_statistics(estimates, X, y_codes)
    # The estimates' pandas indexes, reused rather than rebuilt from their values.
    coords = {"obs": np.arange(n_rows)}
    coords |= _model_coords(estimates)
    data = xr.Dataset(variables, coords=coords)
    data[OBSERVED].attrs["meaning"] = _Y_MEANING
    return data


def add_training_data(tree: xr.DataTree, data: xr.Dataset) -> None:
    """Put :func:`training_data` into ``tree``: ``y`` as ``observed_data``, the rest into
    ``constant_data`` (merged with what it holds), each marked ``source = "training rows"``.

    Examples
    --------
    >>> import numpy as np
    >>> import xarray as xr
    >>> from bayesgen import closed_form
    >>> from bayesgen.families import family
    >>> X = np.array([[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]], dtype=float)
    >>> y_codes = np.array([0, 0, 1, 1])
    >>> stats = closed_form.multinomial_nb(X, y_codes)
    >>> from bayesgen.inference.observed import add_training_data, training_data
    >>> tree = xr.DataTree()
    >>> add_training_data(tree, training_data(family(stats), stats, X, y_codes))
    >>> list(tree["observed_data"].data_vars), sorted(tree["constant_data"].data_vars)
    (['y'], ['X', 'distinct_words', 'doc_length'])
    """
    # Copies (of the variables, not their values), so that the marks leave ``data`` as it was.
    observed = data[[OBSERVED]].copy()
    observed = observed.drop_vars([name for name in observed.coords if name != "obs"])
    observed[OBSERVED].attrs["meaning"] = _Y_MEANING
    observed.attrs = {}
    rest = data.drop_vars(OBSERVED).copy()
    rest.attrs = {}
    for name in rest.data_vars:
        rest[name].attrs["source"] = TRAINING_ROWS
    if "constant_data" in tree.children:
        # Sufficient statistics and the model's pm.Data: other names, the same class and
        # feature coordinates.
        existing = tree["constant_data"].to_dataset()
        rest = xr.merge([existing, rest], join="exact", combine_attrs="override")
    tree["observed_data"] = observed
    tree["constant_data"] = rest


def read_training_data(tree: xr.DataTree) -> xr.Dataset | None:
    """The :func:`training_data` held by ``tree`` (None where it holds no training rows).

    Examples
    --------
    >>> import numpy as np
    >>> import xarray as xr
    >>> from bayesgen import closed_form
    >>> from bayesgen.families import family
    >>> X = np.array([[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]], dtype=float)
    >>> y_codes = np.array([0, 0, 1, 1])
    >>> stats = closed_form.multinomial_nb(X, y_codes)
    >>> from bayesgen.inference.observed import add_training_data, read_training_data, training_data
    >>> data = training_data(family(stats), stats, X, y_codes)
    >>> tree = xr.DataTree()
    >>> add_training_data(tree, data)
    >>> back = read_training_data(tree)
    >>> sorted(back.data_vars) == sorted(data.data_vars)
    True
    >>> all(back[name].equals(data[name]) for name in data.data_vars)
    True
    """
    if "observed_data" not in tree.children:
        return None
    parts = [tree["observed_data"].to_dataset()[[OBSERVED]]]
    model_coords = {}
    if "constant_data" in tree.children:
        constant = tree["constant_data"].to_dataset()
        names = [n for n, v in constant.data_vars.items() if v.attrs.get("source") == TRAINING_ROWS]
        rows = constant[names].copy()  # new attrs: the tree's keep their marks
        for name in names:
            rows[name].attrs = {k: v for k, v in rows[name].attrs.items() if k != "source"}
        parts.append(rows)
        # The model's coordinates, as training_data gives them: rows stored sparse use none
        # of them, and training_rows reads the number of features from "feature".
        model_coords = _model_coords(constant)
    data = xr.merge(parts, join="outer", combine_attrs="drop")
    data = data.drop_vars([name for name in data.coords if name not in data.dims])
    return data.assign_coords(model_coords)


def _model_coords(dataset: xr.Dataset) -> dict:
    """The :data:`MODEL_COORDS` that ``dataset`` has, as its pandas indexes."""
    return {name: dataset.indexes[name] for name in MODEL_COORDS if name in dataset.indexes}


def training_rows(idata: xr.DataTree) -> tuple[np.ndarray | sp.csr_array, np.ndarray]:
    """The checked training rows X and class codes y of a fit, from its ``observed_data``
    (``y``) and ``constant_data`` (the rows).

    Raises
    ------
    ValueError
        For a fit without the group (an older model file, or a posterior built by hand).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen import closed_form
    >>> from bayesgen.families import family
    >>> X = np.array([[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]], dtype=float)
    >>> y_codes = np.array([0, 0, 1, 1])
    >>> stats = closed_form.multinomial_nb(X, y_codes)
    >>> import xarray as xr
    >>> from bayesgen.inference.observed import add_training_data, training_data, training_rows
    >>> idata = xr.DataTree()
    >>> add_training_data(idata, training_data(family(stats), stats, X, y_codes))
    >>> rows, codes = training_rows(idata)
    >>> bool((rows == X).all()), codes.tolist()
    (True, [0, 0, 1, 1])
    """
    if "observed_data" not in idata.children:
        raise ValueError(
            "idata_: this fit holds no observed_data group (its training rows); model files "
            "written before the rows were stored lack it. Refit the model to use its rows."
        )
    y_codes = idata["observed_data"][OBSERVED].values.astype(np.int64)
    data = idata["constant_data"].to_dataset()
    if "X_data" in data.data_vars:
        shape = (len(y_codes), data.sizes["feature"])
        X = sp.csr_array(
            (data["X_data"].values, data["X_indices"].values, data["X_indptr"].values),
            shape=shape,
        )
    else:
        X = data["X"].values
    return X, y_codes


def log_likelihood(
    model_family: Family, estimates: xr.Dataset, X, y_codes, posterior: xr.Dataset
) -> xr.Dataset:
    """The ``log_likelihood`` group: ``y`` (chain, draw, obs) = log p(x_i, y_i | θ), the
    joint density of each training row (features and label) under each draw.

    Computed for blocks of draws (see :func:`draw_chunks`), stored in the posterior's float
    type (float32 halves it, as it does the draws).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen import closed_form
    >>> from bayesgen.families import family
    >>> X = np.array([[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]], dtype=float)
    >>> y_codes = np.array([0, 0, 1, 1])
    >>> stats = closed_form.multinomial_nb(X, y_codes)
    >>> from bayesgen.inference.sampling import conjugate_posterior
    >>> from bayesgen.inference.observed import log_likelihood
    >>> posterior = conjugate_posterior(stats, draws=50, random_seed=0)["posterior"].to_dataset()
    >>> rows = log_likelihood(family(stats), stats, X, y_codes, posterior)
    >>> rows["y"].dims, rows["y"].shape
    (('chain', 'draw', 'obs'), (2, 50, 4))
    """
    n_chains, n_draws = posterior.sizes["chain"], posterior.sizes["draw"]
    dtype = next(iter(posterior.data_vars.values())).dtype
    values = np.empty((n_chains, n_draws, X.shape[0]), dtype=dtype)
    extra = X.shape[0] * estimates.sizes["class"]  # draw_log_joint's (draw, obs, class)
    for chain, block, draws in draw_chunks(posterior, extra):
        values[chain, block] = model_family.row_log_likelihood(estimates, X, y_codes, draws)
    coords = {"chain": posterior["chain"].values, "draw": posterior["draw"].values}
    coords["obs"] = np.arange(X.shape[0])
    dataset = xr.Dataset({OBSERVED: (("chain", "draw", "obs"), values)}, coords=coords)
    dataset[OBSERVED].attrs["meaning"] = _LOG_LIKELIHOOD_MEANING
    return dataset


def draw_chunks(
    posterior: xr.Dataset, extra_per_draw: int = 0
) -> Iterator[tuple[int, slice, xr.Dataset]]:
    """Blocks of draws of one chain at a time: ``(chain, draw slice, draws)``.

    ``draws`` has dims (draw, ...); each block holds at most :data:`DRAW_CHUNK_ELEMENTS`
    parameters plus ``extra_per_draw`` values of what the caller computes per draw. Slices of
    one chain make no stacked copy of the whole posterior, which for a 20-class × 50,000-word
    model would be gigabytes.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen import closed_form
    >>> from bayesgen.families import family
    >>> X = np.array([[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]], dtype=float)
    >>> y_codes = np.array([0, 0, 1, 1])
    >>> stats = closed_form.multinomial_nb(X, y_codes)
    >>> from bayesgen.inference.sampling import conjugate_posterior
    >>> from bayesgen.inference.observed import draw_chunks
    >>> posterior = conjugate_posterior(stats, draws=50, random_seed=0)["posterior"].to_dataset()
    >>> [(chain, block) for chain, block, _ in draw_chunks(posterior)]
    [(0, slice(0, 50, None)), (1, slice(0, 50, None))]
    """
    n_chains, n_draws = posterior.sizes["chain"], posterior.sizes["draw"]
    per_draw = sum(variable[0, 0].size for variable in posterior.data_vars.values())
    step = max(1, DRAW_CHUNK_ELEMENTS // (per_draw + extra_per_draw))
    for chain, start in itertools.product(range(n_chains), range(0, n_draws, step)):
        block = slice(start, min(start + step, n_draws))
        yield chain, block, posterior.isel(chain=chain, draw=block).transpose("draw", ...)


def check_observed(
    tree: xr.DataTree, n_classes: int, n_features: int, *, missing: bool = False
) -> None:
    """Check a model file's training rows and their log-likelihood
    (:func:`bayesgen.io.model_files.load`),
    in the layout of this module (after :func:`upgrade_layout`); ``missing``: the model
    integrates missing entries out, so the rows may hold NaN (never ±inf).

    Raises
    ------
    ValueError
        Naming the group and variable that is wrong.
    """
    observed = tree["observed_data"].to_dataset()
    _check_dims(observed, "observed_data", {OBSERVED: ("obs",)})
    y = observed[OBSERVED].values
    if y.dtype.kind not in "iu" or ((y < 0) | (y >= n_classes)).any():
        raise ValueError(f"observed_data 'y' must hold class indices 0..{n_classes - 1}.")
    if "constant_data" not in tree.children:
        raise ValueError("the 'constant_data' group (the training rows) is missing.")
    data = tree["constant_data"].to_dataset()
    csr = "X_data" in data.data_vars
    rows = {"X_data": ("nonzero",), "X_indices": ("nonzero",), "X_indptr": ("obs_pointer",)}
    _check_dims(data, "constant_data", rows if csr else {"X": ("obs", "feature")})
    if csr:
        indptr, indices = data["X_indptr"].values, data["X_indices"].values
        if (
            len(indptr) != len(y) + 1
            or indptr[0] != 0
            or (np.diff(indptr) < 0).any()
            or indptr[-1] != len(indices)
            or ((indices < 0) | (indices >= n_features)).any()
        ):
            raise ValueError("constant_data's sparse rows (X_indptr, X_indices) are corrupt.")
        values = data["X_data"].values
    else:
        values = data["X"].values
        if values.shape != (len(y), n_features):
            raise ValueError(
                f"constant_data 'X' has shape {values.shape}; expected ({len(y)}, {n_features})."
            )
    allowed = np.isnan(values) if missing else False
    if not (np.isfinite(values) | allowed).all():
        raise ValueError("constant_data's training rows hold NaN or infinite values.")
    if "log_likelihood" in tree.children:
        loglik = tree["log_likelihood"].to_dataset()
        _check_dims(loglik, "log_likelihood", {OBSERVED: ("chain", "draw", "obs")})
        posterior = tree["posterior"]
        expected = (posterior.sizes["chain"], posterior.sizes["draw"], len(y))
        if loglik[OBSERVED].shape != expected:
            raise ValueError(
                f"log_likelihood 'y' has shape {loglik[OBSERVED].shape}; expected {expected} "
                "(chains, draws, training rows)."
            )


def upgrade_layout(tree: xr.DataTree) -> xr.DataTree:
    """A model file's tree in the layout of this module, from the one bayesgen wrote before:
    the log-likelihood named ``row``; the rows (``X``, or ``X_data``, ``X_indices`` and
    ``X_indptr``), ``sample_weight`` and the statistics in ``observed_data`` beside ``y``; and
    ``posterior_predictive`` / ``prior_predictive`` holding simulated rows and statistics,
    which become ``posterior_predictive_rows`` / ``prior_predictive_rows``. A tree in the
    current layout, or without training rows, comes back unchanged (a copy only where
    something moves); the values are not touched, so predictions stay the same.

    Examples
    --------
    >>> import numpy as np
    >>> import xarray as xr
    >>> from bayesgen.inference.observed import upgrade_layout
    >>> rows = {"y": ("obs", [0, 1]), "X": (("obs", "feature"), np.eye(2))}
    >>> loglik = {"row": (("chain", "draw", "obs"), np.zeros((1, 3, 2)))}
    >>> old = xr.DataTree.from_dict(
    ...     {"observed_data": xr.Dataset(rows), "log_likelihood": xr.Dataset(loglik)}
    ... )
    >>> new = upgrade_layout(old)
    >>> list(new["observed_data"].data_vars), list(new["constant_data"].data_vars)
    (['y'], ['X'])
    >>> list(new["log_likelihood"].data_vars)
    ['y']
    """
    old_loglik = "log_likelihood" in tree.children and "row" in tree["log_likelihood"].data_vars
    old_rows = "observed_data" in tree.children and set(tree["observed_data"].data_vars) - {
        OBSERVED
    }
    old_predictive = [
        group
        for group in ("posterior_predictive", "prior_predictive")
        if group in tree.children and OBSERVED not in tree[group].data_vars
    ]
    if not (old_loglik or old_rows or old_predictive):
        return tree
    tree = tree.copy()
    if old_loglik:
        loglik = tree["log_likelihood"].to_dataset().rename({"row": OBSERVED})
        loglik[OBSERVED].attrs["meaning"] = _LOG_LIKELIHOOD_MEANING
        tree["log_likelihood"] = loglik
    if old_rows:
        data = tree["observed_data"].to_dataset()
        del tree["observed_data"]
        add_training_data(tree, data)
    for group in old_predictive:
        simulated = tree[group].to_dataset()
        del tree[group]
        tree[f"{group}_rows"] = simulated
    return tree


def _check_dims(dataset: xr.Dataset, group: str, expected: dict) -> None:
    for variable, dims in expected.items():
        if variable not in dataset.data_vars:
            raise ValueError(f"the {group!r} group has no variable {variable!r}.")
        if dataset[variable].dims != tuple(dims):
            raise ValueError(
                f"{group} {variable!r} has dims {dataset[variable].dims}; expected {tuple(dims)}."
            )
