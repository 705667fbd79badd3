"""Gibbs sampling of GDA and QDA fitted to rows with missing entries (NaN), EM for the MAP,
and the same problem handed to NUTS.

With missing entries the normal-inverse-Wishart posterior is no longer conjugate, but it is
given the completed rows. So each sweep alternates two exact conditional draws:

1. the missing entries given the parameters: x_M | x_O, y = k ~ N(μ_kM − Λ_MM⁻¹(Λr)_M, Λ_MM⁻¹)
   for every row (:func:`bayesgen.maths.missing_gaussian.conditional_draws`, rows batched by
   how many entries they miss);
2. (π, μ, Σ) given the completed rows: the family's own exact conjugate draw
   (:meth:`Family.conjugate_draws <bayesgen.families.base.Family.conjugate_draws>`) from the
   statistics of the completed rows (π depends on the labels alone, all observed).

The prior is fixed once, from the observed entries (each feature's observed mean and
variance resolve the data-centred defaults of :class:`~bayesgen.maths.gaussian.
NormalInverseWishart`), so it does not move with the imputations. EM
(:func:`bayesgen.maths.missing_gaussian.niw_em`) gives the MAP of the observed-data posterior
and the chains' start. The result is laid out as the NUTS and conjugate posteriors are
(``posterior`` with dims chain, draw, class, feature, ...; the exact ``prior``;
``constant_data``), so R-hat and ESS come from ArviZ as for NUTS.

The fit's closed form (``closed_form_``) holds EM's *expected* completed-data statistics at
the MAP and the normal-inverse-Wishart estimates on them, with ``attrs["missing_entries"]``
(how many entries were missing) and ``attrs["missing_fit"] = "gibbs"``: a convenient summary,
not the posterior (whose means are the draws'), and no closed form holds there; the families
compare π alone and refuse the exact predictive, leave-one-out and evidence of such a fit.

NUTS (:func:`nuts_fit`, ``attrs["missing_fit"] = "nuts"``) samples the same posterior, with
the same fixed prior, closed form and MAP: its PyMC model observes the statistics of the
complete rows and, beside them, each incomplete row's density with its missing entries as
latent variables (:func:`bayesgen.families.gda_pymc.observe_incomplete_rows`).
"""

from __future__ import annotations

import datetime

import numpy as np
import pandas as pd
import scipy.sparse as sp
import xarray as xr

from bayesgen import __version__
from bayesgen.families import Family
from bayesgen.families.results import parameter_coords
from bayesgen.inference.progress import show_progress
from bayesgen.inference.sampling import exact_prior_draws, sample_nuts
from bayesgen.input.statistics import total_weight, training_data
from bayesgen.maths.gaussian import NormalInverseWishart
from bayesgen.maths.missing_gaussian import (
    conditional_draws,
    expected_statistics,
    missing_groups,
    niw_em,
)

__all__ = ["gibbs_fit", "has_missing_entries", "missing_entries_problem", "nuts_fit"]

#: What ``closed_form_`` means for a fit with missing entries (its attrs say so), by sampler.
CLOSED_FORM_MEANING = (
    "EM's expected completed-data statistics at the MAP and the normal-inverse-Wishart "
    "estimates on them; not the posterior, whose draws are idata_'s ({sampler})"
)
SAMPLER_NAMES = {"gibbs": "Gibbs", "nuts": "NUTS"}


def has_missing_entries(X) -> bool:
    """Whether a dense X (array, nested list or DataFrame) holds a missing entry (NaN, None,
    ``<NA>``); False for sparse and Dask input and for X that is not numeric (the data checks
    report those)."""
    if sp.issparse(X) or type(X).__module__.startswith("dask"):
        return False
    if isinstance(X, pd.DataFrame):
        return bool(X.isna().to_numpy().any())
    try:
        values = np.asarray(X)
    except (TypeError, ValueError):  # ragged lists
        return False
    if values.dtype.kind == "O":
        try:
            values = values.astype(np.float64)
        except (TypeError, ValueError):
            return False
    return values.dtype.kind == "f" and bool(np.isnan(values).any())


def missing_entries_problem(
    model_family: Family,
    X,
    y,
    *,
    prior: NormalInverseWishart | None,
    class_alpha: float,
    feature_names=None,
    sample_weight=None,
    sampler: str = "gibbs",
) -> dict:
    """The checked rows, EM's MAP and the fit's closed form (see the module docstring);
    ``sampler`` ("gibbs" or "nuts") is recorded as ``attrs["missing_fit"]``.

    Returns
    -------
    dict
        ``X`` (NaN kept), ``y`` (class codes), ``weights`` (or None), ``prior`` (resolved),
        ``fixed_prior`` (the same as a :class:`NormalInverseWishart`), ``estimates`` (the
        closed form, ``attrs["missing_entries"]``), ``map`` (the MAP's variables) and ``em``
        (:func:`~bayesgen.maths.missing_gaussian.niw_em`'s result).
    """
    if prior is None:
        raise ValueError(
            "prior: a fit with missing entries samples the posterior of the normal-inverse-"
            "Wishart prior; prior=None (the MLE) has none. Pass a NormalInverseWishart."
        )
    data = training_data(
        X,
        y,
        kind=model_family.feature_kind,
        feature_names=feature_names,
        sample_weight=sample_weight,
        missing=True,
    )
    rows, codes, weights = data.X, data.y, data.sample_weight
    observed = ~np.isnan(rows)
    w = np.ones(len(codes)) if weights is None else weights
    # The prior's data-centred defaults from the observed entries of each feature: fixed for
    # EM and every sweep.
    total = (observed * w[:, None]).sum(axis=0)
    mean = np.where(observed, rows, 0.0).T @ w / total
    variance = (np.where(observed, rows - mean, 0.0) ** 2).T @ w / total
    resolved = prior.resolve_moments(mean, variance, data.feature_names)
    shared = model_family.statistics["scatter"] == ("feature", "feature2")
    n_classes = len(data.classes)
    em = niw_em(rows, codes, n_classes, resolved, shared=shared, weights=weights)
    statistics = xr.Dataset(
        {
            "class_count": (("class",), em["class_count"]),
            "class_mean": (("class", "feature"), em["class_mean"]),
            "scatter": (model_family.statistics["scatter"], em["scatter"]),
        },
        coords={
            "class": data.classes,
            "feature": data.feature_names,
            "feature2": data.feature_names,
        },
        attrs={
            "model": model_family.name,
            "n_samples": total_weight(em["class_count"]),
            "feature_names_given": int(data.names_given),
        },
    )
    fixed_prior = NormalInverseWishart(
        mean=resolved["mean"], kappa=resolved["kappa"], dof=resolved["dof"], scale=resolved["scale"]
    )
    estimates = model_family.from_statistics(statistics, class_alpha=class_alpha, prior=fixed_prior)
    estimates.attrs.update(
        missing_entries=int((~observed).sum()),
        missing_fit=sampler,
        missing_closed_form=CLOSED_FORM_MEANING.format(sampler=SAMPLER_NAMES[sampler]),
        em_iterations=em["iterations"],
        em_converged=int(em["converged"]),
    )
    # EM's fixed point: the conjugate mode of its own expected statistics.
    mode = model_family.conjugate_mode(estimates)
    return {
        "X": rows,
        "y": codes,
        "weights": weights,
        "prior": resolved,
        "fixed_prior": fixed_prior,
        "estimates": estimates,
        "map": mode,
        "em": em,
    }


def map_point(problem: dict) -> xr.Dataset:
    """EM's MAP as a point Dataset (the layout of ``map_``)."""
    estimates = problem["estimates"]
    point = xr.Dataset(problem["map"], coords=parameter_coords(estimates))
    point.attrs = {
        "map_method": "em",
        "map_converged": estimates.attrs["em_converged"],
        "map_message": (
            f"EM on the observed entries, {estimates.attrs['em_iterations']} iterations: the "
            "mode of p(π, μ, Σ | observed entries)"
        ),
    }
    return point


def gibbs_draws(
    model_family: Family,
    problem: dict,
    *,
    draws: int,
    tune: int,
    chains: int,
    rng: np.random.Generator,
) -> dict[str, np.ndarray]:
    """``chains`` × ``draws`` Gibbs sweeps after ``tune`` discarded ones, each chain started
    at an exact conjugate draw given EM's expected statistics. Returns every parameter's
    draws, shape (chains, draws, ...)."""
    X, codes, weights = problem["X"], problem["y"], problem["weights"]
    estimates = problem["estimates"]
    n_classes = estimates.sizes["class"]
    shared = estimates["scatter"].ndim == 2
    groups = missing_groups(np.isnan(X))
    # One Dataset whose statistics each sweep overwrites in place: conjugate_draws reads
    # only the statistics, the prior and class_alpha.
    state = estimates[["class_count", "class_mean", "scatter", "prior_mean", "prior_scale"]].copy(
        deep=True
    )
    state.attrs = dict(estimates.attrs)
    out: dict[str, np.ndarray] = {}
    for chain, chain_rng in enumerate(rng.spawn(chains)):
        point = model_family.conjugate_draws(estimates, chain_rng, (1,), "float64", posterior=True)
        mu, cov = point["mu"][1][0], point["cov"][1][0]
        for sweep in range(tune + draws):
            completed = conditional_draws(X, codes, mu, cov, chain_rng, groups=groups)
            _, class_mean, scatter = expected_statistics(
                completed, codes, n_classes, None, None, shared=shared, groups=[], weights=weights
            )
            state["class_mean"].values[...] = class_mean
            state["scatter"].values[...] = scatter
            point = model_family.conjugate_draws(state, chain_rng, (1,), "float64", posterior=True)
            mu, cov = point["mu"][1][0], point["cov"][1][0]
            if sweep >= tune:
                for name, (_, values) in point.items():
                    if name not in out:
                        out[name] = np.empty((chains, draws, *values.shape[1:]))
                    out[name][chain, sweep - tune] = values[0]
    return out


def gibbs_fit(
    model_family: Family,
    X,
    y,
    *,
    prior: NormalInverseWishart | None,
    class_alpha: float = 1.0,
    feature_names=None,
    sample_weight=None,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    random_seed=None,
    prior_draws: int = 500,
    dtype: str = "float64",
) -> tuple[xr.Dataset, xr.DataTree, xr.Dataset]:
    """Fit GDA or QDA (``model_family``) to rows with missing entries by Gibbs sampling.

    Parameters
    ----------
    model_family : bayesgen.families.base.Family
        GDA's or QDA's (a normal-inverse-Wishart block).
    X : array-like or DataFrame of shape (n_samples, n_features)
        NaN (None, ``<NA>``) where an entry is missing, completely at random or at random
        given the observed entries and the label (MCAR/MAR): the missingness is ignored.
    y : array-like of shape (n_samples,)
    prior, class_alpha
        As the estimators take them; the prior's data-centred defaults come from the
        observed entries.
    draws, tune, chains : int
        Kept sweeps per chain, discarded sweeps per chain, chains.
    random_seed : int, numpy.random.Generator or None
    prior_draws : int
        Exact draws of the prior (the ``prior`` group); 0 skips it.
    dtype : {"float64", "float32"}
        Storage type of the draws.

    Returns
    -------
    estimates : xarray.Dataset
        The closed form (see the module docstring), ``attrs["missing_entries"]``.
    idata : xarray.DataTree
        ``posterior`` (chain, draw, ...), ``prior`` and ``constant_data``.
    map_point : xarray.Dataset
        EM's MAP.

    Examples
    --------
    GDA on six rows, two of them with a missing entry:

    >>> import numpy as np
    >>> from bayesgen.families import family
    >>> from bayesgen.maths.gaussian import NormalInverseWishart
    >>> X = np.array([[0.1, 0.3], [np.nan, -0.2], [-0.4, 0.1], [2.1, np.nan], [1.8, 2.2],
    ...               [2.3, 1.9]])
    >>> estimates, idata, map_point = gibbs_fit(
    ...     family("gda"), X, [0, 0, 0, 1, 1, 1], prior=NormalInverseWishart(), draws=50,
    ...     tune=10, chains=2, random_seed=0, prior_draws=0)
    >>> estimates.attrs["missing_entries"], estimates.attrs["missing_fit"]
    (2, 'gibbs')
    >>> idata.posterior["mu"].shape  # (chain, draw, class, feature)
    (2, 50, 2, 2)
    >>> map_point.attrs["map_method"]
    'em'
    """
    problem = missing_entries_problem(
        model_family,
        X,
        y,
        prior=prior,
        class_alpha=class_alpha,
        feature_names=feature_names,
        sample_weight=sample_weight,
    )
    estimates = problem["estimates"]
    rng = np.random.default_rng(random_seed)
    start = datetime.datetime.now(datetime.UTC)
    values = gibbs_draws(model_family, problem, draws=draws, tune=tune, chains=chains, rng=rng)
    seconds = (datetime.datetime.now(datetime.UTC) - start).total_seconds()
    dims = model_family.parameter_dims(estimates)
    coords = parameter_coords(estimates)
    posterior = xr.Dataset(
        {name: (("chain", "draw", *dims[name]), values[name]) for name in dims},
        coords=coords | {"chain": np.arange(chains), "draw": np.arange(draws)},
    )
    posterior.attrs = {
        "model": estimates.attrs["model"],
        "sampling_time": seconds,
        "tuning_steps": tune,
        "missing_entries": estimates.attrs["missing_entries"],
    }
    idata = draws_tree(
        model_family, estimates, posterior, rng=rng, prior_draws=prior_draws, dtype=dtype,
        library="bayesgen.gibbs", start=start,
    )  # fmt: skip
    return estimates, idata, map_point(problem)


def draws_tree(
    model_family: Family,
    estimates: xr.Dataset,
    posterior: xr.Dataset,
    *,
    rng,
    prior_draws: int,
    dtype: str,
    library: str,
    start: datetime.datetime,
) -> xr.DataTree:
    """The tree of a Gibbs sampler's draws (this module's and
    :mod:`bayesgen.inference.semi_supervised_gibbs`'s): ``posterior``, ``prior_draws`` exact
    prior draws of ``estimates``' prior, the statistics as ``constant_data``, the draws in
    ``dtype`` and marked with the sampler (``library``) and its ``start`` time."""
    tree = {"posterior": posterior}
    if prior_draws:
        tree["prior"] = exact_prior_draws(
            model_family, estimates, rng=rng, draws=prior_draws, dtype=dtype
        )
    statistics = model_family.statistics_of(estimates)
    statistics.attrs = dict(estimates.attrs)
    tree["constant_data"] = statistics
    idata = xr.DataTree.from_dict(tree)
    for group in ("posterior", "prior"):
        if group in idata.children:
            dataset = idata[group].to_dataset()
            attrs = dict(dataset.attrs)
            dataset = dataset.astype(dtype, copy=False)
            dataset.attrs = attrs | {
                "inference_library": library,
                "created_at": start.isoformat(),
                "bayesgen_version": __version__,
            }
            idata[group] = dataset
    return idata


def split_rows(model_family: Family, problem: dict) -> tuple[xr.Dataset, tuple]:
    """The closed form of the complete rows (their statistics at the fixed prior: class counts
    of those rows, so a class may have none) and the incomplete rows with their class codes,
    each repeated by its whole weight (a row of weight w is w rows, each with its own missing
    entries; weight 0 drops it)."""
    X, codes, weights = problem["X"], problem["y"], problem["weights"]
    estimates = problem["estimates"]
    complete = ~np.isnan(X).any(axis=1)
    shared = estimates["scatter"].ndim == 2
    count, class_mean, scatter = expected_statistics(
        X[complete],
        codes[complete],
        estimates.sizes["class"],
        None,
        None,
        shared=shared,
        groups=[],
        weights=None if weights is None else weights[complete],
    )
    statistics = estimates[["class_count", "class_mean", "scatter"]].copy(deep=True)
    statistics["class_count"].values[...] = count
    statistics["class_mean"].values[...] = class_mean
    statistics["scatter"].values[...] = scatter
    statistics.attrs = {
        "model": estimates.attrs["model"],
        "n_samples": total_weight(count),
        "feature_names_given": estimates.attrs.get("feature_names_given", 0),
    }
    complete_estimates = model_family.from_statistics(
        statistics, class_alpha=estimates.attrs["class_alpha"], prior=problem["fixed_prior"]
    )
    repeats = np.ones(len(codes), dtype=np.int64)
    if weights is not None:
        repeats = np.round(weights).astype(np.int64)
    incomplete = np.flatnonzero(~complete)
    return complete_estimates, (
        np.repeat(X[incomplete], repeats[incomplete], axis=0),
        np.repeat(codes[incomplete], repeats[incomplete]),
    )


def nuts_fit(
    model_family: Family,
    X,
    y,
    *,
    prior: NormalInverseWishart | None,
    class_alpha: float = 1.0,
    model_options: dict | None = None,
    feature_names=None,
    sample_weight=None,
    progressbar="auto",
    **nuts,
) -> tuple[xr.Dataset, xr.DataTree, xr.Dataset]:
    """Fit GDA or QDA (``model_family``) to rows with missing entries by NUTS.

    The PyMC model observes the sufficient statistics of the complete rows, as the model of
    complete data does, and beside them each incomplete row's density with its missing
    entries latent (the family's ``pymc_model(..., incomplete_rows=...)``); the prior is the
    one Gibbs sampling uses, its data-centred defaults fixed from the observed entries.

    Parameters
    ----------
    model_family, X, y, prior, class_alpha, feature_names, sample_weight
        As :func:`gibbs_fit` takes them; whole-number weights (a row of weight w counts as w
        rows).
    model_options : dict, optional
        The family's ``pymc_model`` options (GDA's ``cov_prior``, ``lkj_eta``).
    progressbar : bool or "auto"
        As the estimators take it.
    **nuts
        :func:`bayesgen.inference.sampling.sample_nuts`'s options (draws, tune, chains,
        cores, random_seed, nuts_sampler, target_accept, prior_draws, exact_prior, dtype).

    Returns
    -------
    estimates, idata, map_point
        As :func:`gibbs_fit` returns them (``attrs["missing_fit"] = "nuts"``); ``idata`` is
        NUTS' (the latent entries are not kept).
    """
    problem = missing_entries_problem(
        model_family,
        X,
        y,
        prior=prior,
        class_alpha=class_alpha,
        feature_names=feature_names,
        sample_weight=sample_weight,
        sampler="nuts",
    )
    estimates = problem["estimates"]
    complete_estimates, incomplete_rows = split_rows(model_family, problem)
    model = model_family.pymc_model(
        complete_estimates, **(model_options or {}), incomplete_rows=incomplete_rows
    )
    idata = sample_nuts(
        model,
        var_names=list(model_family.parameter_dims(estimates)),
        stats=estimates,
        model_family=model_family,
        progressbar=show_progress(progressbar),
        **nuts,
    )
    idata["posterior"].attrs["missing_entries"] = estimates.attrs["missing_entries"]
    return estimates, idata, map_point(problem)
