"""Checks of a model file's parts, made before anything is computed from them.

:func:`bayesgen.io.model_files.load` reads a file's groups; the functions here check that
every group holds the model's variables with their dims, sizes, class and feature names and
finite values (:func:`check_groups`), then what those cannot show: that the hyperparameters
pass the estimator's own parameter rules, that every count is finite and non-negative and
every size attribute agrees with what the file holds or is within what bayesgen can draw,
that the closed-form estimates are those its statistics give, and that the groups a fit
writes together are there together. A file that fails is one that was altered (or damaged):
each function raises ``ValueError`` naming the part, what was expected and what it holds;
``load`` adds the file.

Nothing here writes; the closed forms are recomputed with the estimator's own code, so a
check never disagrees with a fit.
"""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr

from bayesgen.families import Family
from bayesgen.inference.observed import check_observed
from bayesgen.input.data import check_binarize as binarize_rule
from bayesgen.input.files import readable_size
from bayesgen.input.params import EVIDENCE, EVIDENCE_PER_CLASS

#: Most exact draws (all chains together) that a conjugate file may promise to make again on
#: load: the most that bayesgen's predictions draw in one pass (the multinomial model's
#: ``gamma_kernels.MAX_DRAWS``). A 20 kB file claiming 10^9 draws would otherwise load and
#: then ask for tens of GiB at its first prediction. :func:`bayesgen.io.model_files.save`
#: refuses the same, so that every file it writes loads.
MAX_CONJUGATE_DRAWS = 2**20

#: Relative tolerance of closed forms recomputed from a file's statistics (the same code on
#: the same numbers gives the same bits; files of bayesgen 0.1.0 were computed by other code).
RECOMPUTE_RTOL = 1e-9


def check_groups(tree: xr.DataTree, closed_form: xr.Dataset, model: Family) -> None:
    """Every group holds the model's variables with their dims, sizes, class and feature
    names and finite values, as :func:`bayesgen.io.model_files.save` writes them.

    Parameters
    ----------
    tree : xarray.DataTree
        The file's groups (in the layout of :mod:`bayesgen.inference.observed`).
    closed_form : xarray.Dataset
        Its closed_form group, which the other groups are checked against.
    model : Family
        The model of the file's estimator (its ``model_``).

    Raises
    ------
    ValueError
        Naming the group, the variable and what is wrong.

    Examples
    --------
    >>> import xarray as xr
    >>> from bayesgen import MultinomialNB
    >>> from bayesgen.io.file_checks import check_groups
    >>> est = MultinomialNB(inference="conjugate").fit([[2, 1], [0, 3], [1, 1]], ["a", "b", "b"])
    >>> tree = xr.DataTree.from_dict({"closed_form": est.closed_form_})
    >>> check_groups(tree, est.closed_form_, est.model_)
    >>> check_groups(tree, est.closed_form_.drop_vars("feature_prob"), est.model_)
    Traceback (most recent call last):
    ...
    ValueError: the 'closed_form' group has no variable 'feature_prob'.
    """
    n_classes = closed_form.sizes.get("class", 0)
    if n_classes < 1:
        raise ValueError("the closed_form group has no classes.")
    parameters = model.parameter_dims(closed_form)
    _check_variables(closed_form, "closed_form", {**parameters, **model.statistics})
    for dim in ("class", "feature"):
        values = closed_form[dim].values if dim in closed_form.coords else None
        if values is not None and len(set(values.tolist())) != len(values):
            raise ValueError(f"the closed_form group's {dim} names are not unique.")
    for group in ("posterior", "prior"):
        if group in tree.children:
            _check_draws(tree[group].to_dataset(), group, parameters)
    if "map" in tree.children:
        _check_variables(tree["map"].to_dataset(), "map", parameters)
    for variable in parameters:
        if not np.isfinite(closed_form[variable].values).all():
            raise ValueError(f"closed_form {variable!r} holds NaN or infinite values.")
    for child in tree.children.values():
        _check_alignment(child.to_dataset(), child.name, closed_form)
    if "sample_stats" in tree.children:
        stats, posterior = tree["sample_stats"], tree["posterior"]
        for dim in ("chain", "draw"):
            if dim in stats.dims and stats.sizes[dim] != posterior.sizes[dim]:
                raise ValueError(
                    f"sample_stats has {stats.sizes[dim]} {dim}s but the posterior has "
                    f"{posterior.sizes[dim]}."
                )
    if "observed_data" in tree.children:
        # Missing entries are NaN in the rows of a model that integrates them out.
        check_observed(
            tree, n_classes, closed_form.sizes["feature"], missing=model.missing_values is True
        )


def check_params(cls, params: dict):
    """The estimator of ``params`` (as :func:`bayesgen.io.model_files.load` read them), its
    parameters checked by the rules its ``fit`` applies.

    Raises
    ------
    ValueError
        ``params: NAME: expected ...; got ...`` (the estimator's own message).

    Examples
    --------
    >>> from bayesgen import MultinomialNB
    >>> from bayesgen.io.file_checks import check_params
    >>> check_params(MultinomialNB, {"draws": 100}).draws
    100
    >>> check_params(MultinomialNB, {"draws": "x"})
    Traceback (most recent call last):
    ...
    ValueError: params: draws: expected an integer >= 1; got 'x'.
    """
    estimator = cls(**params)
    try:
        with warnings.catch_warnings():
            # NUTS settings below the recommended ones warn at fit, not at every load.
            warnings.simplefilter("ignore", UserWarning)
            estimator._validate_params()  # the estimator's rules, never a copy of them
    except (TypeError, ValueError) as error:
        raise ValueError(f"params: {error}") from None
    return estimator


def check_binarize(estimator, closed_form: xr.Dataset) -> None:
    """``binarize``, the one parameter about the data that predictions apply, passes the data
    layer's rule and is the threshold the closed form was computed with (its attrs).

    Raises
    ------
    ValueError
        Naming both values where they differ.

    Examples
    --------
    >>> from bayesgen import BernoulliNB
    >>> from bayesgen.io.file_checks import check_binarize
    >>> est = BernoulliNB(inference="conjugate", binarize=0.5).fit([[1, 0], [0, 2]], ["a", "b"])
    >>> check_binarize(est, est.closed_form_)
    >>> check_binarize(est.set_params(binarize=None), est.closed_form_)
    Traceback (most recent call last):
    ...
    ValueError: params say binarize=None but the closed_form group was computed with binarize=0.5.
    """
    if "binarize" not in estimator.get_params(deep=False):
        return
    values = {}
    for where, value in (("params", estimator.binarize), ("closed_form attribute", None)):
        if where != "params":
            value = closed_form.attrs.get("binarize")
            value = value.item() if isinstance(value, np.generic) else value
        try:
            values[where] = binarize_rule(value)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{where}: {error}") from None
    if values["params"] != values["closed_form attribute"]:
        raise ValueError(
            f"params say binarize={values['params']!r} but the closed_form group was computed "
            f"with binarize={values['closed_form attribute']!r}."
        )


def check_statistics(closed_form: xr.Dataset, model: Family) -> None:
    """Counts finite and non-negative, sizes that agree with them, scatters that are scatters.

    Parameters
    ----------
    closed_form : xarray.Dataset
        A file's closed_form group.
    model : Family
        The model of the file's estimator (its ``model_``), whose statistics these are.

    Raises
    ------
    ValueError
        Naming the variable or attribute and the first bad value.

    Examples
    --------
    >>> from bayesgen import MultinomialNB, closed_form
    >>> from bayesgen.io.file_checks import check_statistics
    >>> fit = closed_form.multinomial_nb([[2, 1], [0, 3], [1, 1]], ["a", "b", "b"])
    >>> model = MultinomialNB().model_
    >>> check_statistics(fit, model)
    >>> check_statistics(fit.assign(class_count=("class", [1.0, -2.0])), model)
    Traceback (most recent call last):
    ...
    ValueError: closed_form 'class_count' holds negative counts (1 of 2; the first, -2, at ...
    """
    for name in model.statistics:
        values = closed_form[name].values
        if values.dtype == bool:
            continue
        finite = np.isfinite(values)
        if not finite.all():
            raise ValueError(
                f"closed_form {name!r} holds NaN or infinite values ({np.count_nonzero(~finite)} "
                f"of {values.size}; the first at {_where(closed_form[name], ~finite)}); expected "
                "finite statistics."
            )
        if name.endswith("count") and (values < 0).any():
            negative = values < 0
            raise ValueError(
                f"closed_form {name!r} holds negative counts ({np.count_nonzero(negative)} of "
                f"{values.size}; the first, {values[negative][0]:g}, at "
                f"{_where(closed_form[name], negative)}); expected counts >= 0."
            )
    _check_sizes(closed_form)
    if "n_categories" in closed_form and "category_mask" in closed_form:
        _check_categories(closed_form)
    if "scatter" in closed_form:
        _check_positive_definite(closed_form, "scatter", semi=True)
        for name in ("prior_scale", "cov"):
            if name in closed_form and closed_form[name].dims[-2:] == ("feature", "feature2"):
                _check_positive_definite(closed_form, name, semi=False)


def check_conjugate_layout(chains: int, draws: int, prior_draws: int, n_classes: int) -> None:
    """The draws a conjugate file promises to make again: at most :data:`MAX_CONJUGATE_DRAWS`.

    Raises
    ------
    ValueError
        Naming the attribute, the draws it promises and the memory one predicted row
        alone would take.

    Examples
    --------
    >>> from bayesgen.io.file_checks import check_conjugate_layout
    >>> check_conjugate_layout(4, 1000, 500, n_classes=2)
    >>> check_conjugate_layout(2, 10**9, 500, n_classes=2)
    Traceback (most recent call last):
    ...
    ValueError: conjugate_draws: 2 chains x 1,000,000,000 draws promise 2,000,000,000 exact draws,
    ... (predicting one row would hold 29.8 GiB); expected at most 1,048,576 in all chains.
    """
    if chains * draws > MAX_CONJUGATE_DRAWS:
        row = chains * draws * n_classes * 8  # p(y = k | x, θ) of one row, every draw
        raise ValueError(
            f"conjugate_draws: {chains:,} chains x {draws:,} draws promise {chains * draws:,} "
            "exact draws, made again from the closed form on load (predicting one row would "
            f"hold {readable_size(row)}); expected at most {MAX_CONJUGATE_DRAWS:,} in all chains."
        )
    if prior_draws > MAX_CONJUGATE_DRAWS:
        raise ValueError(
            f"conjugate_prior_draws: {prior_draws:,} prior draws, made again on load; expected "
            f"at most {MAX_CONJUGATE_DRAWS:,}."
        )


def check_groups_together(tree: xr.DataTree) -> None:
    """The groups a fit writes together are there together: posterior draws of a fit with
    training rows (``observed_data``) come with their pointwise ``log_likelihood``.

    Model files of bayesgen 0.1.0 hold no training rows, so none is asked of them.

    Raises
    ------
    ValueError
        Naming the missing group.

    Examples
    --------
    >>> import xarray as xr
    >>> from bayesgen.io.file_checks import check_groups_together
    >>> check_groups_together(xr.DataTree.from_dict({"posterior": xr.Dataset()}))
    >>> check_groups_together(
    ...     xr.DataTree.from_dict({"posterior": xr.Dataset(), "observed_data": xr.Dataset()})
    ... )
    Traceback (most recent call last):
    ...
    ValueError: the 'log_likelihood' group is missing: ...
    """
    groups = set(tree.children)
    if {"posterior", "observed_data"} <= groups and "log_likelihood" not in groups:
        raise ValueError(
            "the 'log_likelihood' group is missing: the file holds posterior draws and the "
            "training rows (observed_data), which bayesgen always writes with their pointwise "
            "log-likelihood (az.loo and bayesgen.checks.loo read it)."
        )
    if "log_likelihood" in groups and "posterior" not in groups:
        raise ValueError(
            "the file holds a 'log_likelihood' group but no posterior draws it could be of."
        )


def check_recomputed(estimator, closed_form: xr.Dataset) -> None:
    """The closed-form estimates equal those that the file's statistics give.

    Recomputed by the estimator's own code at the λ, a and prior the fit used (those chosen
    by the evidence are in the closed form's attrs), so that a class count changed beside an
    unchanged ``class_prob`` (or any estimate changed beside its counts) is refused.

    Under a hyperprior on λ (``alpha_prior``) ``feature_prob``, θ's mean over λ, is the one
    estimate not recomputed: its quadrature over λ costs about what the fit's did (seconds
    for 5 classes x 20,000 words), where every other check costs a fraction of reading the
    file. Its counts, class probabilities and MLEs are recomputed as for any fit.

    Raises
    ------
    ValueError
        Naming the first estimate that differs, by how much and where.

    Examples
    --------
    >>> from bayesgen import MultinomialNB
    >>> from bayesgen.io.file_checks import check_recomputed
    >>> est = MultinomialNB(inference="conjugate").fit([[2, 1], [0, 3], [1, 1]], ["a", "b", "b"])
    >>> check_recomputed(est, est.closed_form_)
    >>> altered = est.closed_form_.assign(class_count=("class", [1000.0, 2.0]))
    >>> check_recomputed(est, altered)
    Traceback (most recent call last):
    ...
    ValueError: closed_form 'class_prob' is not what its statistics ... give: 0.4 where they give
    0.997012 (at class='a'; 2 of 2 values differ). The statistics or the estimates were altered.
    """
    model_family = estimator.model_
    resolved = {}
    for key in ("alpha", "class_alpha"):
        value = getattr(estimator, key, None)
        if isinstance(value, str) and value in (EVIDENCE, EVIDENCE_PER_CLASS):
            resolved[key] = closed_form.attrs[key]  # as the evidence chose it at fit
    params = estimator.get_params(deep=False)
    # The prior as fitted: one the evidence chose (GaussianNB's, PoissonNB's) is not searched
    # again, and one scaled to the data keeps the scale the fit used (a fit with missing
    # entries scales it to the observed entries, not to its completed statistics).
    resolved |= model_family.fitted_prior(closed_form, params)
    skipped = set(model_family.statistics)
    if getattr(estimator, "alpha_prior", None) is not None:
        resolved["alpha_prior"] = None  # see the docstring: the mixture over λ is not redone
        skipped |= {"feature_prob", "alpha"}
    refit = estimator.__class__(**{**estimator.get_params(deep=False), **resolved})
    statistics = model_family.statistics_of(closed_form)
    statistics.attrs = dict(closed_form.attrs)
    try:
        with np.errstate(all="ignore"):
            recomputed = refit._estimates(statistics)
    except (ArithmeticError, ValueError, TypeError, KeyError, np.linalg.LinAlgError) as error:
        raise ValueError(
            f"its closed form cannot be recomputed from its statistics ({error})."
        ) from None
    for name, variable in recomputed.data_vars.items():
        if name in skipped or name not in closed_form.data_vars:
            continue
        stored = np.asarray(closed_form[name].values, dtype=np.float64)
        expected = np.asarray(variable.values, dtype=np.float64)
        if stored.shape != expected.shape:
            raise ValueError(
                f"closed_form {name!r} has shape {stored.shape}, but its statistics give "
                f"shape {expected.shape}."
            )
        scale = np.nanmax(np.abs(expected), initial=0.0)
        close = np.isclose(stored, expected, rtol=RECOMPUTE_RTOL, atol=1e-12 * max(scale, 1.0))
        close |= np.isnan(stored) & np.isnan(expected)
        if not close.all():
            at = np.unravel_index(np.argmax(~close), close.shape)
            raise ValueError(
                f"closed_form {name!r} is not what its statistics "
                f"({', '.join(model_family.statistics)}) give: {stored[at]:.6g} where they give "
                f"{expected[at]:.6g} (at {_where(closed_form[name], ~close)}; "
                f"{np.count_nonzero(~close)} of {close.size} values differ). The statistics or "
                "the estimates were altered."
            )


# -- private ----------------------------------------------------------------------------------


def _check_draws(dataset: xr.Dataset, group: str, parameters: dict) -> None:
    """A group of draws (posterior, prior): every parameter over (chain, draw, ...), at least
    one of each, finite, and probabilities in [0, 1]."""
    _check_variables(dataset, group, {k: ("chain", "draw", *d) for k, d in parameters.items()})
    for dim in ("chain", "draw"):
        if dataset.sizes[dim] < 1:
            raise ValueError(f"the {group!r} group has no {dim}s.")
    for variable in parameters:
        values = dataset[variable].values
        if not np.isfinite(values).all():
            raise ValueError(
                f"{group} {variable!r} holds {np.count_nonzero(~np.isfinite(values))} NaN "
                f"or infinite draws of {values.size}."
            )
        if variable.endswith("_prob") and not ((values >= 0) & (values <= 1)).all():
            raise ValueError(f"{group} {variable!r} holds values outside [0, 1].")


def _check_variables(dataset: xr.Dataset, group: str, expected: dict) -> None:
    for variable, dims in expected.items():
        if variable not in dataset.data_vars:
            raise ValueError(f"the {group!r} group has no variable {variable!r}.")
        if dataset[variable].dims != tuple(dims):
            raise ValueError(
                f"{group} {variable!r} has dims {dataset[variable].dims}; expected {tuple(dims)}."
            )


def _check_alignment(dataset: xr.Dataset, group: str, closed_form: xr.Dataset) -> None:
    """The class, feature and category dims of a group agree with the closed_form group."""
    for dim in ("class", "feature", "feature2", "category"):
        if dim not in dataset.dims or dim not in closed_form.dims:
            continue
        size, expected = dataset.sizes[dim], closed_form.sizes[dim]
        if size != expected:
            raise ValueError(
                f"the {group!r} group has {size} entries along {dim!r} but the closed_form "
                f"group has {expected}."
            )
        if dim in ("class", "feature") and dim in dataset.coords and dim in closed_form.coords:
            if not np.array_equal(dataset[dim].values, closed_form[dim].values):
                raise ValueError(
                    f"the {group!r} group's {dim} names {_preview(dataset[dim].values)} differ "
                    f"from the closed_form group's {_preview(closed_form[dim].values)}."
                )


def _preview(values: np.ndarray) -> str:
    shown = [str(v) for v in values[:5]]
    return str(shown)[:-1] + (", ...]" if len(values) > 5 else "]")


def _check_sizes(closed_form: xr.Dataset) -> None:
    """The size attributes: n_samples is the total weight of class_count, partial_fit_calls a
    number of calls, feature_names_given a flag."""
    attrs = closed_form.attrs
    total = float(closed_form["class_count"].values.sum())
    if not total > 0:
        raise ValueError("closed_form 'class_count' sums to 0; expected the counts of a fit.")
    n_samples = attrs.get("n_samples")
    if isinstance(n_samples, np.generic):
        n_samples = n_samples.item()
    number = isinstance(n_samples, int | float) and not isinstance(n_samples, bool)
    if not number or not np.isclose(n_samples, total, rtol=1e-9, atol=0):
        raise ValueError(
            f"closed_form attribute n_samples: expected the total of class_count, {total:g}; "
            f"got {n_samples!r}."
        )
    for key, minimum, maximum, meaning in (
        ("partial_fit_calls", 1, None, "the number of partial_fit calls"),
        ("feature_names_given", 0, 1, "0 or 1"),
        ("dask_chunks", 1, None, "the number of Dask row chunks"),
    ):
        if key not in attrs:
            continue
        value = attrs[key]
        if isinstance(value, np.generic):
            value = value.item()
        valid = isinstance(value, int) and not isinstance(value, bool) and value >= minimum
        if not valid or (maximum is not None and value > maximum):
            bound = f"from {minimum} to {maximum}" if maximum is not None else f">= {minimum}"
            raise ValueError(
                f"closed_form attribute {key}: expected an integer {bound} ({meaning}); "
                f"got {value!r}."
            )


def _check_categories(closed_form: xr.Dataset) -> None:
    """The categorical model: K_n categories per feature, the first K_n cells of the mask."""
    n_categories = closed_form["n_categories"].values
    width = closed_form.sizes["category"]
    whole = n_categories == np.round(n_categories)
    if not (whole & (n_categories >= 1) & (n_categories <= width)).all():
        raise ValueError(
            f"closed_form 'n_categories' must hold whole numbers from 1 to {width} (the "
            f"category dim); got {n_categories.tolist()[:10]}."
        )
    expected = np.arange(width)[None, :] < n_categories[:, None]
    if not np.array_equal(closed_form["category_mask"].values.astype(bool), expected):
        raise ValueError(
            "closed_form 'category_mask' does not mark the first n_categories cells of each "
            "feature."
        )


def _check_positive_definite(closed_form: xr.Dataset, name: str, *, semi: bool) -> None:
    """A (stack of) symmetric matrices over (feature, feature2), positive definite (or, with
    ``semi``, semi-definite: a scatter of fewer rows than features is singular)."""
    matrices = closed_form[name].values
    kind = "positive semi-definite" if semi else "positive definite"
    if not np.allclose(matrices, np.swapaxes(matrices, -1, -2), rtol=1e-10, atol=0):
        raise ValueError(f"closed_form {name!r} is not symmetric; expected a {kind} matrix.")
    size = matrices.shape[-1]
    trace = np.trace(matrices, axis1=-2, axis2=-1)
    # Cholesky of S + a rounding-sized ridge: fails only for an eigenvalue below -ridge.
    ridge = np.maximum(1e-10 * np.abs(trace) / size, np.finfo(np.float64).tiny) if semi else 0.0
    try:
        np.linalg.cholesky(matrices + np.asarray(ridge)[..., None, None] * np.eye(size))
    except np.linalg.LinAlgError:
        smallest = np.linalg.eigvalsh(matrices).min()
        raise ValueError(
            f"closed_form {name!r} is not {kind} (smallest eigenvalue {smallest:.4g}); "
            + (
                "a scatter Σ (x − x̄)(x − x̄)ᵀ never has a negative eigenvalue."
                if semi
                else "a covariance must be."
            )
        ) from None


def _where(variable: xr.DataArray, mask: np.ndarray) -> str:
    """The coordinates of the first True cell of ``mask``, as ``class='ham', feature='win'``."""
    index = np.unravel_index(np.argmax(mask), mask.shape)
    parts = []
    for dim, i in zip(variable.dims, index, strict=True):
        label = variable[dim].values[i] if dim in variable.coords else i
        parts.append(f"{dim}={label.item() if isinstance(label, np.generic) else label!r}")
    return ", ".join(parts)
