"""Prior and posterior predictive simulation, in the groups ArviZ reads and in whole data sets.

:func:`predictive_groups` makes two groups from the draws θ of the posterior (or prior):

* ``posterior_predictive`` (``prior_predictive``): ``y`` (chain, draw, obs), for every draw
  a label drawn from p(y | x_i, θ) for each training row's own features: the predictive of
  the model's one observed variable per row, named as in ``observed_data`` and
  ``log_likelihood`` (see :mod:`bayesgen.inference.observed`), so that ``az.loo_pit``,
  ``az.plot_loo_pit``, ``az.plot_ppc_dist`` and ``az.plot_ppc_rootogram`` work on
  ``est.idata_`` as they are;
* ``posterior_predictive_rows`` (``prior_predictive_rows``): for chosen draws (``draws``),
  data sets simulated like the training data (:func:`simulate`), with the same labels (the
  rows are drawn from p(x | y_i, θ)), and for text the same document lengths, which the
  multinomial model does not model. The group holds the simulated rows as ``X`` (chain,
  draw, obs, feature) and the statistics that the predictive checks compare (the family's
  ``predictive_statistics``, the variables of ``constant_data`` marked ``source = "training
  rows"``), which :func:`bayesgen.plotting.workflow.plot_ppc` draws.

The statistics are computed from each simulated data set as it is drawn and the rows are
kept only on request (``keep_rows``): a bag of words of 5,000 documents × 8,000 words takes
320 MB per draw as a dense array, which is why simulated text rows are made sparse and
reduced at once.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import xarray as xr

from bayesgen.families import Family
from bayesgen.inference.observed import OBSERVED, draw_chunks

#: The largest ``X`` a predictive group may hold; beyond it ask for fewer draws or no rows.
MAX_ROWS_BYTES = 2**30


def simulate(
    model_family: Family,
    estimates: xr.Dataset,
    parameters: xr.Dataset,
    X,
    y_codes: np.ndarray,
    *,
    draws: int | None = None,
    keep_rows: bool = True,
    rng: np.random.Generator,
) -> xr.Dataset:
    """A predictive group: data sets simulated from chosen draws of ``parameters``.

    Parameters
    ----------
    model_family : bayesgen.families.Family
    estimates : xarray.Dataset
        The closed-form fit.
    parameters : xarray.Dataset
        Draws (chain, draw, ...) of every parameter: the posterior or the prior group.
    X, y_codes
        The training rows and their class codes (:func:`bayesgen.inference.observed.training_rows`).
    draws : int, optional
        How many draws to simulate from, spread evenly over each chain; all by default.
    keep_rows : bool, default True
        Keep the simulated rows as ``X`` besides the statistics.
    rng : numpy.random.Generator

    Returns
    -------
    xarray.Dataset
        ``X`` (chain, draw, obs, feature) when ``keep_rows``, and the statistics; ``draw``
        holds the indices of the draws used.

    Raises
    ------
    ValueError
        For ``draws`` that is not a positive integer, and for rows that would take more
        than 1 GiB (the message says how many draws fit).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen import closed_form
    >>> from bayesgen.families import family
    >>> X = np.array([[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]], dtype=float)
    >>> y_codes = np.array([0, 0, 1, 1])
    >>> stats = closed_form.multinomial_nb(X, y_codes)
    >>> from bayesgen.inference.sampling import conjugate_posterior
    >>> from bayesgen.inference.simulation import simulate
    >>> posterior = conjugate_posterior(stats, draws=50, random_seed=0)["posterior"].to_dataset()
    >>> rng = np.random.default_rng(0)
    >>> simulated = simulate(family(stats), stats, posterior, X, y_codes, draws=6, rng=rng)
    >>> simulated["X"].dims, simulated["X"].shape  # 3 draws of each chain
    (('chain', 'draw', 'obs', 'feature'), (2, 3, 4, 3))
    >>> # a multinomial keeps each document's length
    >>> bool((simulated["X"].sum("feature") == X.sum(axis=1)).all())
    True
    """
    chosen = _chosen_draws(parameters.sizes["chain"], parameters.sizes["draw"], draws)
    n_chains, n_chosen = parameters.sizes["chain"], len(chosen)
    if keep_rows:
        _check_rows_size(n_chains * n_chosen, X)
    statistics: dict[str, list] = {}
    rows = []
    for chain in range(n_chains):
        for draw in chosen:
            point = parameters.isel(chain=chain, draw=int(draw))
            values = {name: point[name].values for name in point.data_vars}
            simulated = model_family.simulate_rows(estimates, X, y_codes, values, rng)
            stats = model_family.predictive_statistics(estimates, simulated, y_codes)
            for name, (dims, value) in stats.items():
                statistics.setdefault(name, [dims, []])[1].append(value)
            if keep_rows:
                rows.append(simulated.toarray() if sp.issparse(simulated) else simulated)
    shape = (n_chains, n_chosen)
    variables = {
        name: (("chain", "draw", *dims), np.stack(values).reshape(*shape, *values[0].shape))
        for name, (dims, values) in statistics.items()
    }
    if keep_rows:
        variables["X"] = (
            ("chain", "draw", "obs", "feature"),
            np.stack(rows).reshape(*shape, *X.shape),
        )
    coords = {
        "chain": parameters["chain"].values,
        "draw": parameters["draw"].values[chosen],
        "obs": np.arange(X.shape[0]),
        "class": estimates["class"].values,
        "feature": estimates["feature"].values,
    }
    if "category" in estimates.coords:
        coords["category"] = estimates["category"].values
    return xr.Dataset(variables, coords=coords)


def predictive_groups(
    model_family: Family,
    estimates: xr.Dataset,
    parameters: xr.Dataset,
    X,
    y_codes: np.ndarray,
    *,
    source: str,
    draws: int | None = None,
    keep_rows: bool = True,
    rng: np.random.Generator,
) -> dict[str, xr.Dataset]:
    """The ``{source}_predictive`` group (labels, :func:`predictive_labels`) and the
    ``{source}_predictive_rows`` group (data sets, :func:`simulate`).

    The labels are drawn for every draw of ``parameters``, whatever ``draws`` says: a
    label per row and draw costs what the log-likelihood costs, and ``az.loo_pit`` pairs
    them draw by draw with the ``log_likelihood`` group, which holds every draw. ``draws``
    limits the data sets, which cost a whole simulated X each.

    Parameters
    ----------
    source : {"posterior", "prior"}
        Which draws ``parameters`` are, for the groups' names.

    Other parameters are those of :func:`simulate`; the rows are simulated first, so that a
    seed gives the same rows as :func:`simulate` alone.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen import closed_form
    >>> from bayesgen.families import family
    >>> X = np.array([[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]], dtype=float)
    >>> y_codes = np.array([0, 0, 1, 1])
    >>> stats = closed_form.multinomial_nb(X, y_codes)
    >>> from bayesgen.inference.sampling import conjugate_posterior
    >>> from bayesgen.inference.simulation import predictive_groups
    >>> posterior = conjugate_posterior(stats, draws=50, random_seed=0)["posterior"].to_dataset()
    >>> groups = predictive_groups(
    ...     family(stats), stats, posterior, X, y_codes, source="posterior", draws=6,
    ...     rng=np.random.default_rng(0),
    ... )
    >>> sorted(groups["posterior_predictive"].data_vars)
    ['y']
    >>> sorted(groups["posterior_predictive_rows"].data_vars)
    ['X', 'distinct_words', 'doc_length']
    >>> groups["posterior_predictive"]["y"].shape  # every draw; 3 data sets a chain
    (2, 50, 4)
    >>> groups["posterior_predictive_rows"]["X"].shape
    (2, 3, 4, 3)
    """
    if source not in ("posterior", "prior"):
        raise ValueError(f"source: expected 'posterior' or 'prior'; got {source!r}.")
    rows = simulate(
        model_family,
        estimates,
        parameters,
        X,
        y_codes,
        draws=draws,
        keep_rows=keep_rows,
        rng=rng,
    )
    labels = predictive_labels(model_family, estimates, parameters, X, rng=rng)
    return {f"{source}_predictive": labels, f"{source}_predictive_rows": rows}


def predictive_labels(
    model_family: Family, estimates: xr.Dataset, parameters: xr.Dataset, X, *, rng
) -> xr.Dataset:
    """``y`` (chain, draw, obs): for every draw θ of ``parameters`` and every row x_i of X, a
    class code drawn from p(y | x_i, θ) = p(x_i, y | θ) / Σ_k p(x_i, k | θ).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen import closed_form
    >>> from bayesgen.families import family
    >>> X = np.array([[9, 0, 0], [0, 0, 9]], dtype=float)
    >>> stats = closed_form.multinomial_nb(X, [0, 1])
    >>> from bayesgen.inference.sampling import conjugate_posterior
    >>> from bayesgen.inference.simulation import predictive_labels
    >>> posterior = conjugate_posterior(stats, draws=20, random_seed=0)["posterior"].to_dataset()
    >>> labels = predictive_labels(family(stats), stats, posterior, X, rng=np.random.default_rng(0))
    >>> labels["y"].mean(("chain", "draw")).values.round(2).tolist()  # clear-cut rows
    [0.0, 1.0]
    """
    n_chains, n_draws = parameters.sizes["chain"], parameters.sizes["draw"]
    n_classes = estimates.sizes["class"]
    # The narrowest signed integer (int8 up to 127 classes): a label per row and draw.
    codes = np.empty((n_chains, n_draws, X.shape[0]), dtype=np.min_scalar_type(-n_classes))
    for chain, block, draws in draw_chunks(parameters, X.shape[0] * n_classes):
        joint = model_family.draw_log_joint(estimates, X, draws)  # (draw, obs, class)
        joint = joint - joint.max(axis=-1, keepdims=True)
        cumulative = np.cumsum(np.exp(joint), axis=-1)
        # A uniform on [0, total) against the unnormalised cumulative sums: the first class
        # whose sum exceeds it, which the min keeps in range when rounding reaches the total.
        uniform = rng.random((*cumulative.shape[:-1], 1)) * cumulative[..., -1:]
        codes[chain, block] = np.minimum((cumulative <= uniform).sum(axis=-1), n_classes - 1)
    coords = {"chain": parameters["chain"].values, "draw": parameters["draw"].values}
    coords["obs"] = np.arange(X.shape[0])
    labels = xr.Dataset({OBSERVED: (("chain", "draw", "obs"), codes)}, coords=coords)
    labels[OBSERVED].attrs["meaning"] = "class drawn from p(y | x_i, theta), as an index"
    return labels


def _chosen_draws(n_chains: int, n_draws: int, draws) -> np.ndarray:
    """Indices of ``draws`` draws in all, spread evenly over each chain (all for None)."""
    if draws is None:
        return np.arange(n_draws)
    if isinstance(draws, bool) or not isinstance(draws, int | np.integer) or draws < 1:
        raise ValueError(f"draws: expected a positive integer or None; got {draws!r}.")
    per_chain = min(n_draws, -(-int(draws) // n_chains))
    return np.unique(np.linspace(0, n_draws - 1, per_chain).round().astype(np.int64))


def _check_rows_size(n_data_sets: int, X) -> None:
    cells = n_data_sets * X.shape[0] * X.shape[1]
    item = 8  # the widest the families simulate: float64 or int64
    if cells * item > MAX_ROWS_BYTES:
        fit = max(1, MAX_ROWS_BYTES // (item * X.shape[0] * X.shape[1]))
        raise ValueError(
            f"draws: simulating rows for {n_data_sets} draws would hold {cells * item / 2**30:.1f} "
            f"GiB ({n_data_sets} x {X.shape[0]} rows x {X.shape[1]} features); pass draws <= "
            f"{fit}, or keep_rows=False to keep only the statistics of each simulated data set."
        )
