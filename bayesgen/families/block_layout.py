"""How a mixed model holds its blocks in one Dataset: names scoped by the block's name.

A mixed model (:mod:`bayesgen.families.mixed`) is the class prior times several blocks, each
on its own columns. Its closed form, its posterior and its model file are single xarray
Datasets, so every block's variables, dims and attrs carry the block's name as a prefix, the
way PyMC names the variables of a named sub-model (``pm.Model(name="size")`` gives
``size::mu``):

* a variable ``mu`` of the block ``size`` is ``size::mu``;
* a dim ``feature`` of that block is ``size::feature`` (the blocks have different features);
  ``class`` and ``standardisation`` are shared by every block and keep their names;
* an attr ``prior_kappa`` is ``size::prior_kappa``.

The class prior's variables (``class_count``, ``class_prob``, ``class_prob_mle``) and attrs
(``class_alpha``, ``n_samples``) are shared and unscoped: every
block's own Dataset gets them back in :func:`block_dataset`. The same rule names the PyMC
model's variables and dims (:func:`bayesgen.families.shared_pymc.scoped_dim`), so the exact
draws and NUTS' draws of a mixed model have the same names.

xarray and NumPy only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import xarray as xr

#: Separates a block's name from its own names (PyMC's separator for named sub-models).
SEPARATOR = "::"
#: Dims every block shares.
SHARED_DIMS = ("class", "standardisation")
#: The class prior's variables and attrs, shared by the blocks and kept unscoped.
SHARED_VARIABLES = ("class_count", "class_prob", "class_prob_mle")
SHARED_ATTRS = ("class_alpha", "n_samples")


def scoped(block: str, name: str) -> str:
    """``name`` of the block ``block``: ``"size::mu"``.

    Examples
    --------
    >>> from bayesgen.families.block_layout import scoped
    >>> scoped("size", "mu")
    'size::mu'
    """
    return f"{block}{SEPARATOR}{name}"


def scoped_dim(block: str, dim: str) -> str:
    """A block's dim in the mixed model: shared dims keep their names, others are scoped.

    Examples
    --------
    >>> from bayesgen.families.block_layout import scoped_dim
    >>> scoped_dim("size", "feature"), scoped_dim("size", "class")
    ('size::feature', 'class')
    """
    return dim if dim in SHARED_DIMS else scoped(block, dim)


def scoped_dims(block: str, dims: Iterable[str]) -> tuple[str, ...]:
    """:func:`scoped_dim` of each of ``dims``."""
    return tuple(scoped_dim(block, dim) for dim in dims)


def scope_variables(block: str, variables: Mapping) -> dict:
    """``{name: (dims, values)}`` of a block's draws or modes, named and dimmed as in the
    mixed model; the shared ``class_prob`` is left out (the mixed model holds it once)."""
    return {
        scoped(block, name): (scoped_dims(block, dims), values)
        for name, (dims, values) in variables.items()
        if name not in SHARED_VARIABLES
    }


def scope_dataset(block: str, dataset: xr.Dataset) -> xr.Dataset:
    """A block's Dataset (statistics or estimates) with its own names scoped by ``block``.

    The shared variables and attrs are dropped: :func:`merge_blocks` adds them once.
    """
    own = dataset.drop_vars([name for name in SHARED_VARIABLES if name in dataset.variables])
    renames = {name: scoped(block, name) for name in own.data_vars}
    renames |= {dim: scoped_dim(block, dim) for dim in own.dims if dim not in SHARED_DIMS}
    renames |= {
        name: scoped(block, name)
        for name in own.coords
        if name not in own.dims and name not in SHARED_DIMS
    }
    own = own.rename(renames)
    own.attrs = {
        scoped(block, key): value for key, value in dataset.attrs.items() if key not in SHARED_ATTRS
    }
    return own


def block_dataset(block: str, dataset: xr.Dataset) -> xr.Dataset:
    """The block ``block``'s own Dataset out of a mixed model's: its scoped variables, dims
    and attrs under their own names, with the shared class variables and attrs.

    The inverse of :func:`scope_dataset` (with the shared parts of :func:`merge_blocks`).

    Examples
    --------
    >>> import numpy as np
    >>> import xarray as xr
    >>> from bayesgen.families.block_layout import block_dataset, scope_dataset
    >>> size = xr.Dataset(
    ...     {"class_count": ("class", [2, 3]), "mu": (("class", "feature"), np.ones((2, 1)))},
    ...     coords={"class": ["a", "b"], "feature": ["height"]},
    ...     attrs={"class_alpha": 1.0, "prior_kappa": 0.01},
    ... )
    >>> mixed = xr.merge([scope_dataset("size", size), size[["class_count"]]])
    >>> sorted(mixed.data_vars), sorted(mixed.dims)
    (['class_count', 'size::mu'], ['class', 'size::feature'])
    >>> mixed.attrs = {"class_alpha": 1.0, "size::prior_kappa": 0.01}
    >>> back = block_dataset("size", mixed)
    >>> back["mu"].dims, back.attrs["prior_kappa"], back.attrs["class_alpha"]
    (('class', 'feature'), 0.01, 1.0)
    """
    prefix = scoped(block, "")
    names = [name for name in dataset.data_vars if name.startswith(prefix)]
    shared = [name for name in SHARED_VARIABLES if name in dataset.data_vars]
    own = dataset[shared + names]
    own = own.drop_vars(
        [name for name in own.coords if name not in SHARED_DIMS and not name.startswith(prefix)]
    )
    own = own.rename({name: name.removeprefix(prefix) for name in names})
    dims = {dim: dim.removeprefix(prefix) for dim in own.dims if dim.startswith(prefix)}
    coords = {
        name: name.removeprefix(prefix)
        for name in own.coords
        if name.startswith(prefix) and name not in own.dims
    }
    own = own.rename(dims | coords)
    attrs = {key: dataset.attrs[key] for key in SHARED_ATTRS if key in dataset.attrs}
    attrs |= {
        key.removeprefix(prefix): value
        for key, value in dataset.attrs.items()
        if key.startswith(prefix)
    }
    own.attrs = attrs
    return own


def block_posterior(block: str, posterior: xr.Dataset) -> xr.Dataset:
    """A block's variables out of a mixed model's posterior (or MAP point), under their own
    names and dims, with the shared ``class_prob`` where the posterior has it (a DataTree
    node is read as its Dataset)."""
    if isinstance(posterior, xr.DataTree):
        posterior = posterior.to_dataset()
    prefix = scoped(block, "")
    names = [name for name in posterior.data_vars if name.startswith(prefix)]
    shared = [name for name in SHARED_VARIABLES if name in posterior.data_vars]
    own = posterior[shared + names]
    own = own.drop_vars(
        [name for name in own.coords if SEPARATOR in name and not name.startswith(prefix)]
    )
    renames = {name: name.removeprefix(prefix) for name in names}
    renames |= {dim: dim.removeprefix(prefix) for dim in own.dims if dim.startswith(prefix)}
    return own.rename(renames)


def merge_blocks(shared: xr.Dataset, blocks: Mapping[str, xr.Dataset]) -> xr.Dataset:
    """One Dataset of the shared class variables ``shared`` and every block's own,
    scoped by its name (:func:`scope_dataset`); attrs: ``shared``'s, then the blocks'."""
    parts = [shared] + [scope_dataset(name, dataset) for name, dataset in blocks.items()]
    merged = xr.merge(parts, join="exact", compat="no_conflicts", combine_attrs="drop")
    attrs = dict(shared.attrs)
    for part in parts[1:]:
        attrs |= part.attrs
    merged.attrs = attrs
    return merged


__all__ = [
    "SEPARATOR",
    "SHARED_ATTRS",
    "SHARED_DIMS",
    "SHARED_VARIABLES",
    "block_dataset",
    "block_posterior",
    "merge_blocks",
    "scope_dataset",
    "scope_variables",
    "scoped",
    "scoped_dim",
    "scoped_dims",
]
