"""The training rows and their pointwise log-likelihood: the ``observed_data`` and
``log_likelihood`` groups of a fit.

After ``fit``, ``est.idata_`` holds, besides the posterior:

* ``observed_data``: ``y`` (dim ``obs``: each row's class, as an index into the ``class``
  coordinate; booleans and mixed labels have no NetCDF type, integers do), the rows X — dense
  as ``X`` (obs, feature), or a sparse matrix in CSR form as ``X_data`` and ``X_indices`` (dim
  ``nonzero``) and ``X_indptr`` (dim ``obs_pointer``), so that a bag of words costs its
  non-zeros — and the statistics the predictive checks compare (the family's
  ``predictive_statistics``, e.g. ``distinct_words``);
* ``log_likelihood``: ``row`` (chain, draw, obs) = log p(x_i, y_i | θ) for every training row
  and posterior draw, fully normalised (for text, the multinomial given the document's
  length), in the posterior's float type. ``az.loo(est.idata_)`` reads it.

The rows are stored as the model saw them (after ``binarize``), so :func:`training_rows`
gives back exactly what was fitted.
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


def observed_data(model_family: Family, estimates: xr.Dataset, X, y_codes) -> xr.Dataset:
    """The ``observed_data`` group of checked training rows X and class codes ``y_codes``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen import closed_form
    >>> from bayesgen.families import family
    >>> X = np.array([[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]], dtype=float)
    >>> y_codes = np.array([0, 0, 1, 1])
    >>> stats = closed_form.multinomial_nb(X, y_codes)
    >>> from bayesgen.observed import observed_data
    >>> data = observed_data(family(stats), stats, X, y_codes)
    >>> data["X"].shape, data["y"].values.tolist(), data.attrs["X_format"]
    ((4, 3), [0, 0, 1, 1], 'dense')
    """
    n_rows = X.shape[0]
    variables = {"y": (("obs",), np.asarray(y_codes, dtype=np.int64))}
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
    coords = {"obs": np.arange(n_rows), "class": estimates.indexes["class"]}
    coords["feature"] = estimates.indexes["feature"]
    if "category" in estimates.coords:
        coords["category"] = estimates.indexes["category"]
    data = xr.Dataset(variables, coords=coords)
    data["y"].attrs["meaning"] = "index into the class coordinate"
    data.attrs["X_format"] = "csr" if "X_data" in data else "dense"
    return data


def training_rows(idata: xr.DataTree) -> tuple[np.ndarray | sp.csr_array, np.ndarray]:
    """The checked training rows X and class codes y of a fit, from its ``observed_data``.

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
    >>> from bayesgen.observed import observed_data, training_rows
    >>> data = observed_data(family(stats), stats, X, y_codes)
    >>> idata = xr.DataTree.from_dict({"observed_data": data})
    >>> rows, codes = training_rows(idata)
    >>> bool((rows == X).all()), codes.tolist()
    (True, [0, 0, 1, 1])
    """
    if "observed_data" not in idata.children:
        raise ValueError(
            "idata_: this fit holds no observed_data group (its training rows); model files "
            "written before the rows were stored lack it. Refit the model to use its rows."
        )
    data = idata["observed_data"].to_dataset()
    y_codes = data["y"].values.astype(np.int64)
    if data.attrs.get("X_format") == "csr":
        shape = (data.sizes["obs"], data.sizes["feature"])
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
    """The ``log_likelihood`` group: ``row`` (chain, draw, obs) = log p(x_i, y_i | θ).

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
    >>> from bayesgen.inference import conjugate_posterior
    >>> from bayesgen.observed import log_likelihood
    >>> posterior = conjugate_posterior(stats, draws=50, random_seed=0)["posterior"].to_dataset()
    >>> rows = log_likelihood(family(stats), stats, X, y_codes, posterior)
    >>> rows["row"].dims, rows["row"].shape
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
    return xr.Dataset({"row": (("chain", "draw", "obs"), values)}, coords=coords)


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
    >>> from bayesgen.inference import conjugate_posterior
    >>> from bayesgen.observed import draw_chunks
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


def check_observed(tree: xr.DataTree, n_classes: int, n_features: int) -> None:
    """Check a model file's training rows and their log-likelihood (:func:`bayesgen.io.load`).

    Raises
    ------
    ValueError
        Naming the group and variable that is wrong.
    """
    data = tree["observed_data"].to_dataset()
    csr = data.attrs.get("X_format") == "csr"
    rows = {"X_data": ("nonzero",), "X_indices": ("nonzero",), "X_indptr": ("obs_pointer",)}
    _check_dims(
        data, "observed_data", {"y": ("obs",), **(rows if csr else {"X": ("obs", "feature")})}
    )
    y = data["y"].values
    if y.ndim != 1 or y.dtype.kind not in "iu" or ((y < 0) | (y >= n_classes)).any():
        raise ValueError(f"observed_data 'y' must hold class indices 0..{n_classes - 1}.")
    if csr:
        indptr, indices = data["X_indptr"].values, data["X_indices"].values
        if (
            len(indptr) != len(y) + 1
            or indptr[0] != 0
            or (np.diff(indptr) < 0).any()
            or indptr[-1] != len(indices)
            or ((indices < 0) | (indices >= n_features)).any()
        ):
            raise ValueError("observed_data's sparse rows (X_indptr, X_indices) are corrupt.")
        values = data["X_data"].values
    else:
        values = data["X"].values
        if values.shape != (len(y), n_features):
            raise ValueError(
                f"observed_data 'X' has shape {values.shape}; expected ({len(y)}, {n_features})."
            )
    if not np.isfinite(values).all():
        raise ValueError("observed_data's rows hold NaN or infinite values.")
    if "log_likelihood" in tree.children:
        loglik = tree["log_likelihood"].to_dataset()
        _check_dims(loglik, "log_likelihood", {"row": ("chain", "draw", "obs")})
        posterior = tree["posterior"]
        expected = (posterior.sizes["chain"], posterior.sizes["draw"], len(y))
        if loglik["row"].shape != expected:
            raise ValueError(
                f"log_likelihood 'row' has shape {loglik['row'].shape}; expected {expected} "
                "(chains, draws, training rows)."
            )


def _check_dims(dataset: xr.Dataset, group: str, expected: dict) -> None:
    for variable, dims in expected.items():
        if variable not in dataset.data_vars:
            raise ValueError(f"the {group!r} group has no variable {variable!r}.")
        if dataset[variable].dims != tuple(dims):
            raise ValueError(
                f"{group} {variable!r} has dims {dataset[variable].dims}; expected {tuple(dims)}."
            )
