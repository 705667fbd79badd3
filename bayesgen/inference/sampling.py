"""Inference: NUTS through PyMC, exact conjugate draws, and the MAP point.

Every path returns an ``xarray.DataTree`` with the same layout: ``posterior`` (dims chain,
draw, class, feature, ...), ``prior``, ``constant_data`` (the sufficient statistics), and for
NUTS ``sample_stats``. Variable names and dims are those of :mod:`bayesgen.generative`, so the
comparison, reports and predictions work on either. ``fit`` then adds the training rows in
PyMC's layout (:mod:`bayesgen.inference.observed`): ``y`` in ``observed_data`` and
``log_likelihood``,
the rows beside the statistics in ``constant_data``. PyMC's own ``observed_data`` (the
statistics its random variables observe) is dropped, so that ``y`` is the only observed
variable and ArviZ's functions need no ``var_names``.
"""

from __future__ import annotations

import datetime
import logging
import os
import warnings

import numpy as np
import xarray as xr

from bayesgen import __version__
from bayesgen.families import Family, family
from bayesgen.families.results import parameter_coords
from bayesgen.inference.progress import wide_progress_table

#: Warnings PyMC emits for choices we make on purpose (few chains on 2 cores, Potentials in
#: prior sampling); hidden so that users see only what concerns them.
_EXPECTED_WARNINGS = (
    "The effect of Potentials on other parameters is ignored",
    "We recommend running at least 4 chains",
    "PyTensor could not link to a BLAS",
    "This process .* is multi-threaded, use of fork",
    # PyMC's mass-matrix update can overflow in the first tuning steps of a jittered start
    # (quadpotential.py); harmless, and adaptation recovers within a few steps.
    "overflow encountered in dot",
)


def sample_nuts(
    model,
    *,
    var_names: list[str],
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 2,
    cores: int | None = None,
    random_seed: int | None = None,
    nuts_sampler: str = "pymc",
    target_accept: float = 0.9,
    prior_draws: int = 500,
    progressbar: bool = False,
    dtype: str = "float64",
    stats: xr.Dataset | None = None,
    model_family: Family | None = None,
    exact_prior: bool = False,
) -> xr.DataTree:
    """Draw from the posterior of ``model`` with NUTS, and from its prior.

    Parameters
    ----------
    model : pymc.Model
        From :mod:`bayesgen.generative`.
    var_names : list of str
        Variables to keep in the trace (the parameterisation's raw variables are dropped).
    draws, tune, chains : int
        Per chain.
    cores : int, optional
        Parallel chains; default ``min(chains, os.cpu_count())``, 2 on a 2-core machine (PyMC's
        own default would run them one after the other there).
    random_seed : int, optional
    nuts_sampler : {"pymc", "nutpie", "numpyro", "blackjax"}
        Explicit, because PyMC's default silently changes to nutpie once that is installed.
        The JAX back ends run the chains vectorised on one device where JAX has fewer
        devices than chains (a single GPU; :func:`chain_method_for`).
    target_accept : float
    prior_draws : int
        Draws for the ``prior`` group (prior-vs-posterior plots); 0 skips it.
    progressbar : bool
    dtype : {"float64", "float32"}
        Storage type of the draws; float32 halves memory.
    stats : xarray.Dataset, optional
        The closed-form Dataset the model was built from. Its sufficient statistics are added to
        ``constant_data`` (next to the model's ``pm.Data``, which hold them under other names or
        in a transformed form, e.g. ``class_count_data``, ``scatter_root``), so that both
        inference paths store the same statistics under the same names. PyMC's
        ``observed_data`` (the statistics observed by the model's random variables, named like
        the statistics) and ``prior_predictive`` groups are dropped.
    model_family : Family, optional
        The model ``stats`` belongs to, as the estimators hand it in; None looks it up by
        ``stats.attrs["model"]`` (:func:`bayesgen.families.family`), for a closed-form Dataset
        on its own.
    exact_prior : bool, default False
        Make the ``prior`` group of exact draws from the conjugate prior (:func:`exact_prior_draws`,
        marked ``inference_library="bayesgen.conjugate"``; needs ``stats``) instead of PyMC's
        forward sampling, which compiles a graph of its own the first time a shape is seen.
        Only for a model whose prior is the family's conjugate one.

    Examples
    --------
    >>> from bayesgen import closed_form
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> stats = closed_form.multinomial_nb(X, ["ham", "ham", "spam", "spam"])
    >>> from bayesgen.generative import TRACE_VARS, model_for
    >>> from bayesgen.inference.sampling import sample_nuts
    >>> idata = sample_nuts(  # doctest: +SKIP
    ...     model_for(stats), var_names=TRACE_VARS["multinomial_nb"], draws=500, tune=500,
    ...     random_seed=0, stats=stats,
    ... )
    >>> sorted(idata.children)  # doctest: +SKIP
    ['constant_data', 'posterior', 'prior', 'sample_stats']
    """
    import pymc as pm
    from threadpoolctl import threadpool_limits  # a dependency of PyMC and scikit-learn

    if exact_prior and stats is None:
        raise ValueError("exact_prior: the exact prior draws need the model's `stats`; got None.")
    cores = min(chains, os.cpu_count() or 1) if cores is None else cores
    backend_options = {}
    if nuts_sampler in ("numpyro", "blackjax"):
        backend_options["nuts"] = {"chain_method": _jax_chain_method(chains, nuts_sampler)}
    # One BLAS thread per chain. OpenBLAS threads the leapfrog's dot products once the model
    # has more than about 10,000 parameters; with the chains on every core those threads
    # fight for them (2 × 10,000 words, 30 + 30 steps of 2 chains on 2 cores: 1.3 s with
    # this limit, over 9 minutes without). PyMC sets no limit in the workers it forks (the
    # Linux default; pymc#7354); they inherit this one, set in the parent before the fork.
    with (
        model,
        _quiet(progressbar),
        threadpool_limits(limits=1, user_api="blas"),
        wide_progress_table(),
    ):
        idata = pm.sample(
            draws=draws,
            tune=tune,
            chains=chains,
            cores=cores,
            random_seed=random_seed,
            nuts_sampler=nuts_sampler,
            target_accept=target_accept,
            var_names=var_names,
            quiet=not progressbar,
            progressbar=progressbar,
            compute_convergence_checks=False,
            **backend_options,
        )
        if prior_draws and not exact_prior:
            with _quiet(False):  # no "Sampling: [...]" log line after the progress bar
                prior = pm.sample_prior_predictive(
                    draws=prior_draws, var_names=var_names, random_seed=random_seed
                )
            idata["prior"] = prior["prior"]
    for group in ("prior_predictive", "observed_data"):
        if group in idata.children:
            del idata[group]
    if "nuts" in backend_options:  # how the chains ran, beside PyMC's inference_library
        idata["posterior"].attrs["chain_method"] = backend_options["nuts"]["chain_method"]
    if stats is not None:  # always given with exact_prior (checked above)
        model_family = model_family or family(stats)
        if prior_draws and exact_prior:
            rng = np.random.default_rng(random_seed)
            idata["prior"] = exact_prior_draws(
                model_family, stats, rng=rng, draws=prior_draws, dtype=dtype
            )
        data = idata["constant_data"].to_dataset() if "constant_data" in idata.children else None
        statistics = _statistics(model_family, stats)
        if data is not None:
            statistics = xr.merge(
                [data, statistics], join="exact", compat="no_conflicts", combine_attrs="override"
            )
        idata["constant_data"] = statistics
    return _finish(idata, dtype=dtype, library="pymc")


def chain_method_for(chains: int, devices: int) -> str:
    """numpyro's ``chain_method`` for ``chains`` chains on ``devices`` JAX devices.

    "parallel" maps one chain to each device (``pmap``); with fewer devices than chains,
    numpyro would run them one after the other, so they run as one "vectorized" program
    (``vmap``) on the one device instead, as on a single GPU.

    Parameters
    ----------
    chains : int
    devices : int
        ``jax.local_device_count()``.

    Returns
    -------
    {"parallel", "vectorized"}

    Examples
    --------
    >>> from bayesgen.inference.sampling import chain_method_for
    >>> chain_method_for(chains=2, devices=1)  # one GPU
    'vectorized'
    >>> chain_method_for(chains=2, devices=100)  # PyMC's 100 XLA CPU devices
    'parallel'
    """
    return "parallel" if devices >= chains else "vectorized"


def _jax_chain_method(chains: int, nuts_sampler: str) -> str:
    try:
        import jax
    except ImportError as error:
        raise ImportError(
            f"nuts_sampler={nuts_sampler!r} needs JAX and {nuts_sampler}, which bayesgen does "
            f"not install: pip install {nuts_sampler} (docs/large-models.md); got no module "
            f"{error.name!r}."
        ) from None
    # pymc.sampling.jax asks XLA for 100 CPU devices when imported, which it must be before
    # JAX counts its devices (the count is fixed once JAX's back end starts).
    import pymc.sampling.jax  # noqa: F401

    return chain_method_for(chains, jax.local_device_count())


def find_map(model, *, var_names: list[str], maxiter: int | None = None) -> xr.Dataset:
    """The MAP point of ``model`` (PyMC's ``find_MAP``, L-BFGS-B) as a Dataset.

    ``find_MAP`` maximises the density in the constrained space (no Jacobian), so the result is
    the mode of the posterior of the parameters as they are named, e.g. (n + α - 1) /
    (N + K(α - 1)) for a Dirichlet. Where that mode is on the boundary the optimiser can only
    approach it; :mod:`bayesgen.checks.comparison` flags those cases. L-BFGS-B declares success
    when the
    objective stops decreasing, which on badly scaled parameters happens far from the mode:
    run it on well-scaled ones (the families' ``map_problem``; GDA standardises its features).

    Parameters
    ----------
    model : pymc.Model
    var_names : list of str
        The variables of the point.
    maxiter : int, optional
        Most L-BFGS-B iterations (PyMC's default otherwise).

    Returns
    -------
    xarray.Dataset
        The point, with attrs ``map_method="find_MAP"``, ``map_converged`` (1 when L-BFGS-B
        reported success, else 0) and ``map_message`` (its message and the largest gradient
        component in its unconstrained coordinates), so that a check can tell an optimiser
        that stopped early from a posterior that disagrees with its closed form.

    Examples
    --------
    With α = λ + 1 = 2 the MAP is add-1 smoothing (this compiles the model's log density once):

    >>> from bayesgen import closed_form
    >>> from bayesgen.generative import TRACE_VARS, model_for
    >>> from bayesgen.inference.sampling import find_map
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> stats = closed_form.multinomial_nb(X, ["ham", "ham", "spam", "spam"], alpha=2)
    >>> point = find_map(model_for(stats), var_names=TRACE_VARS["multinomial_nb"])
    >>> point["feature_prob"].values.round(3).tolist()
    [[0.6, 0.2, 0.2], [0.154, 0.231, 0.615]]
    >>> closed_form.add_lambda([[5, 1, 1], [1, 2, 7]], [[7], [10]], 1, 3).round(3).tolist()
    [[0.6, 0.2, 0.2], [0.154, 0.231, 0.615]]
    """
    import pymc as pm

    # scipy's default tolerance stops L-BFGS-B once the log density changes by less than about
    # 2e-9 of its size, which for thousands of rows can leave a mean 1e-3 away from the
    # mode; a tolerance far below that costs a few more iterations.
    options = {"tol": 1e-12} if maxiter is None else {"maxiter": maxiter, "tol": 1e-12}
    with model, _quiet(False):
        tree = pm.find_MAP(return_inferencedata=True, jitter=False, progressbar=False, **options)
    point = tree["posterior"].to_dataset().squeeze(("chain", "draw"), drop=True)[var_names]
    result = tree["optimizer_result"]
    gradient = float(np.max(np.abs(result["jac"].values), initial=0.0))
    point.attrs = {
        "map_method": "find_MAP",
        "map_converged": int(bool(result["success"].values)),
        "map_message": f"{result['message'].values}; max |gradient| {gradient:.3g}",
    }
    return point


def conjugate_map(stats: xr.Dataset, *, model_family: Family | None = None) -> xr.Dataset:
    """The exact posterior mode of a conjugate model, from its closed form: nothing compiles.

    The mode is that of the parameters as they are named (the density in the constrained
    space, as ``find_MAP`` defines it): (n + α − 1) / (N + K(α − 1)) on every Dirichlet or
    Beta simplex, NaN where no mode exists (some n + α < 1 makes the density unbounded, or
    every n + α = 1 makes it flat). For GDA with the normal-inverse-Wishart posterior the joint
    mode of (μ, Σ) is μ_k = m_k and Σ = Ψ_N / (ν_N + D + 1 + K): each of the K class means
    adds a factor |Σ|^(-1/2) to the inverse-Wishart density. ``coef`` and ``intercept`` are the
    linear form at that point, as ``find_MAP`` reports its deterministics. ``model_family``: the
    model ``stats`` belongs to, or None to look it up by ``stats.attrs["model"]``.

    Returns
    -------
    xarray.Dataset
        Same variables, dims and coords as one posterior draw, with attrs
        ``map_method="closed_form"``, ``map_converged=1`` and ``map_message``.
    """
    variables = (model_family or family(stats)).conjugate_mode(stats)
    point = xr.Dataset(variables, coords=parameter_coords(stats))
    hyperprior = "alpha_prior_shape" in stats.attrs
    point.attrs = {
        "map_method": "closed_form",
        "map_converged": 1,
        "map_message": (
            "λ at the mode of p(λ | D), π and θ at their modes given it (the joint mode has "
            "no closed form)"
            if hyperprior
            else "exact mode of the conjugate posterior"
        ),
    }
    return point


def conjugate_posterior(
    stats: xr.Dataset,
    *,
    draws: int = 1000,
    chains: int = 2,
    random_seed: int | None = None,
    prior_draws: int = 500,
    dtype: str = "float64",
    model_family: Family | None = None,
) -> xr.DataTree:
    """Exact independent draws from the conjugate posterior, in the NUTS layout.

    Dirichlet and Beta draws are made as normalised Gamma variates, one draw at a time, written
    straight into a preallocated array of ``dtype``: 1,000 draws of a 20-class × 50,000-word
    model take 4 GB in float32 (8 GB in float64) and no temporary of the same size. GDA draws
    Σ from the inverse-Wishart and μ_k | Σ from the normal of
    :class:`bayesgen.closed_form.NormalInverseWishart`. ``model_family``: the model ``stats``
    belongs to, as the estimators hand it in, or None to look it up by ``stats.attrs["model"]``.

    Examples
    --------
    >>> from bayesgen import closed_form
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> stats = closed_form.multinomial_nb(X, ["ham", "ham", "spam", "spam"])
    >>> from bayesgen.inference.sampling import conjugate_posterior
    >>> idata = conjugate_posterior(stats, draws=500, chains=2, random_seed=0)
    >>> sorted(idata.children)
    ['constant_data', 'posterior', 'prior']
    >>> idata["posterior"]["feature_prob"].shape  # chain, draw, class, feature
    (2, 500, 2, 3)
    >>> # the posterior mean is add-λ, up to Monte Carlo error
    >>> mean = idata["posterior"]["feature_prob"].mean(("chain", "draw"))
    >>> bool(abs(mean - stats["feature_prob"]).max() < 0.02)
    True
    """
    rng = np.random.default_rng(random_seed)
    model = stats.attrs["model"]
    model_family = model_family or family(stats)
    draws_of = model_family.conjugate_draws
    posterior = _conjugate_draws(draws_of, stats, rng, (chains, draws), dtype, posterior=True)
    tree = {"posterior": posterior, "constant_data": _statistics(model_family, stats)}
    if prior_draws:
        tree["prior"] = exact_prior_draws(
            model_family, stats, rng=rng, draws=prior_draws, dtype=dtype
        )
    idata = xr.DataTree.from_dict(tree)
    idata["posterior"].attrs["model"] = model
    return _finish(idata, dtype=dtype, library="bayesgen.conjugate")


def exact_prior_draws(
    model_family: Family, stats: xr.Dataset, *, rng, draws: int, dtype: str = "float64"
) -> xr.Dataset:
    """``draws`` exact draws of every parameter from the conjugate prior of ``stats`` (one
    chain), as the ``prior`` group: the family's ``conjugate_draws`` given no data, nothing to
    compile. Its attrs say ``inference_library="bayesgen.conjugate"``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen import closed_form
    >>> from bayesgen.families import family
    >>> stats = closed_form.multinomial_nb([[2, 1, 0], [0, 2, 3]], ["ham", "spam"])
    >>> prior = exact_prior_draws(
    ...     family(stats), stats, rng=np.random.default_rng(0), draws=4000
    ... )
    >>> prior["feature_prob"].shape  # chain, draw, class, feature
    (1, 4000, 2, 3)
    >>> # Dirichlet(1, 1, 1): each word's prior mean is 1/3, whatever the counts
    >>> bool(abs(prior["feature_prob"].mean(("chain", "draw")) - 1 / 3).max() < 0.02)
    True
    """
    prior = _conjugate_draws(
        model_family.conjugate_draws, stats, rng, (1, draws), dtype, posterior=False
    )
    prior.attrs["inference_library"] = "bayesgen.conjugate"
    return prior


def _conjugate_draws(draws_of, stats, rng, sample_shape, dtype, *, posterior: bool) -> xr.Dataset:
    variables = draws_of(stats, rng, sample_shape, dtype, posterior=posterior)
    sample_dims = ("chain", "draw")
    data_vars = {name: (sample_dims + dims, values) for name, (dims, values) in variables.items()}
    coords = parameter_coords(stats)
    coords |= {"chain": np.arange(sample_shape[0]), "draw": np.arange(sample_shape[1])}
    return xr.Dataset(data_vars, coords=coords)


def _statistics(model_family: Family, stats: xr.Dataset) -> xr.Dataset:
    """The sufficient statistics, as the ``constant_data`` group."""
    statistics = model_family.statistics_of(stats)
    statistics.attrs = dict(stats.attrs)
    return statistics


def _finish(idata: xr.DataTree, *, dtype: str, library: str) -> xr.DataTree:
    if dtype not in ("float64", "float32"):
        raise ValueError(f"dtype: expected 'float64' or 'float32'; got {dtype!r}.")
    for group in ("posterior", "prior"):
        if group in idata.children:
            dataset = idata[group].to_dataset()
            attrs = dict(dataset.attrs)
            dataset = dataset.astype(dtype, copy=False)  # no copy of gigabytes of draws
            attrs.setdefault("inference_library", library)
            attrs.setdefault("created_at", datetime.datetime.now(datetime.UTC).isoformat())
            attrs["bayesgen_version"] = __version__
            dataset.attrs = attrs
            idata[group] = dataset
    return idata


class _quiet:
    """Silence PyMC's expected warnings and log lines (unless a progress bar was asked for)."""

    def __init__(self, verbose: bool):
        self.verbose = verbose

    def __enter__(self):
        self._warnings = warnings.catch_warnings()
        self._warnings.__enter__()
        for message in _EXPECTED_WARNINGS:
            warnings.filterwarnings("ignore", message=message)
        self._logger = logging.getLogger("pymc")
        self._level = self._logger.level
        if not self.verbose:
            self._logger.setLevel(logging.ERROR)
        return self

    def __exit__(self, *exc):
        self._logger.setLevel(self._level)
        self._warnings.__exit__(*exc)
        return False
