"""The full posterior of a semi-supervised fit by Gibbs sampling, for every model.

The model: θ ~ p(θ); every row has a class, y_i | θ ~ Categorical(π), x_i | y_i, θ ~ p(x | y_i, θ);
the labels of the unlabelled rows U are latent. Its posterior p(θ, z_U | X, y_L) is sampled by
data augmentation (Tanner and Wong 1987; for a mixture with some labels known, Diebolt and
Robert 1994), each sweep two exact conditional draws:

1. **the labels given θ**: every unlabelled row independently, z_i | θ, x_i ~ Categorical
   (p(y = k | x_i, θ)), from the family's ``draw_log_joint`` (which leaves out only terms that
   are the same for every class, so its row-wise softmax is exact);
2. **θ given the completed labels**: the family's exact conjugate draw (``conjugate_draws``)
   from the statistics of the labelled rows and the unlabelled rows with their drawn labels
   (``sufficient_statistics`` of the completed data, ``from_statistics`` at a fixed prior).

Both are conditionals of the target, so the target is invariant, and since p(y = k | x_i, θ) > 0
for every class wherever the class probabilities are positive, every labelling is reachable in
one sweep: the chain is irreducible and aperiodic and its draws converge to the posterior. θ
here is drawn given the completed labels at the end of every sweep, as the issue asks of the
collapsed sampler.

Why not the collapsed sampler (θ integrated out, each z_i drawn from the exact leave-one-out
predictive p(x_i, y = k | x_{-i}, z_{-i})): its conditionals change with every label drawn, so
the statistics must be updated one row at a time. The families' interface adds and removes
rows only through whole ``sufficient_statistics``/``merge_statistics``/``from_statistics``
calls (a few milliseconds of xarray each), so a collapsed sweep costs n_U of them, thousands of
times this sampler's one; the blocks' batch ``loo_log_joint`` cannot stand in for it, since
updating every label from the same leave-one-out state is not a Gibbs step (it leaves the
posterior). Where the labels are fairly certain, as with text, data augmentation mixes well
(π's ESS is measured in ``benchmarks/bench_semi_supervised_gibbs.py``).

A row of whole weight w counts as w rows, each with its own latent label (so it is drawn w
times); a fractional weight has no such reading and is the caller's to refuse. The prior is the
caller's, fixed: a prior the estimator derives from the data is fixed at its value in the EM fit
(:func:`bayesgen.estimators.hyperparameters.fitted_hyperparameters`), so that the chain has one
target.

Each chain starts from labels drawn from the EM's responsibilities. The result is laid out as
the conjugate and NUTS posteriors are (``posterior`` with dims chain, draw, class, feature, ...,
the exact ``prior``, ``constant_data``), so R-hat and ESS come from ArviZ; beside it, each
unlabelled row's posterior class probabilities P(y_i = k | X, y_L), Rao-Blackwellised: the mean
over the kept sweeps of p(y = k | x_i, θ).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import xarray as xr

from bayesgen.families import Family
from bayesgen.families.results import parameter_coords
from bayesgen.inference.gibbs import draws_tree
from bayesgen.inference.semi_supervised import EMResult, LabelSplit, concatenate_rows, take_rows

__all__ = [
    "GibbsResult",
    "class_probabilities",
    "draw_labels",
    "row_copies",
    "sample_split",
    "semi_supervised_gibbs",
]

#: ``idata_``'s ``inference_library`` for these draws.
INFERENCE_LIBRARY = "bayesgen.semi_supervised_gibbs"


@dataclass(frozen=True)
class GibbsResult:
    """What :func:`semi_supervised_gibbs` drew.

    Attributes
    ----------
    idata : xarray.DataTree
        ``posterior`` (chain, draw, ...), ``prior`` (where asked for) and ``constant_data``.
    label_probabilities : numpy.ndarray of shape (n_unlabelled, n_classes)
        P(y_i = k | X, y_L) of every unlabelled row: the mean of p(y = k | x_i, θ) over the
        kept sweeps of every chain.
    """

    idata: xr.DataTree
    label_probabilities: np.ndarray


def class_probabilities(model: Family, estimates: xr.Dataset, rows, draw: xr.Dataset):
    """p(y = k | x_i, θ) of every row at one draw θ (a Dataset with a draw dim of size 1)."""
    joint = model.draw_log_joint(estimates, rows, draw)[0]
    joint = joint - joint.max(axis=1, keepdims=True)
    proba = np.exp(joint)
    return proba / proba.sum(axis=1, keepdims=True)


def draw_labels(proba: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One class per row, row i's drawn from the probabilities ``proba[i]`` (by inversion)."""
    cumulative = np.cumsum(proba, axis=1)
    uniform = rng.random(proba.shape[0]) * cumulative[:, -1]
    codes = (uniform[:, None] >= cumulative).sum(axis=1)
    return np.minimum(codes, proba.shape[1] - 1)


def semi_supervised_gibbs(
    model: Family,
    *,
    reference: xr.Dataset,
    completed_statistics: Callable[[np.ndarray], xr.Dataset],
    estimates_of: Callable[[xr.Dataset], xr.Dataset],
    unlabelled_rows,
    copies: np.ndarray,
    initial: np.ndarray,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    random_seed=None,
    prior_draws: int = 500,
    dtype: str = "float64",
) -> GibbsResult:
    """Sample the posterior of a semi-supervised fit by data augmentation (see the module's
    docstring).

    Parameters
    ----------
    model : Family
        The model.
    reference : xarray.Dataset
        A closed form of the fit (the EM's): its coords, dims and prior lay out the draws and
        the ``prior`` group, its statistics are ``constant_data``.
    completed_statistics : callable
        ``codes`` → the statistics of the labelled rows with their labels and of every copy of
        an unlabelled row with the class ``codes[j]`` (indices into the classes), with the
        classes of ``reference``.
    estimates_of : callable
        Statistics → the closed form at the fixed prior.
    unlabelled_rows : numpy.ndarray or scipy.sparse.csr_array
        The unlabelled rows as the model checks them (``training_features``), once each.
    copies : numpy.ndarray of int
        For every copy of an unlabelled row, the row's index in ``unlabelled_rows`` (a row of
        weight w has w copies, each its own label; weight 1 throughout: ``arange(n)``).
    initial : numpy.ndarray of shape (n_unlabelled, n_classes)
        The probabilities the first labels of every chain are drawn from (EM's
        responsibilities).
    draws, tune, chains : int
        Kept sweeps per chain, discarded sweeps per chain, chains.
    random_seed : int, numpy.random.Generator or None
    prior_draws : int
        Exact draws of the prior (the ``prior`` group); 0 skips it.
    dtype : {"float64", "float32"}
        Storage type of the draws.

    Returns
    -------
    GibbsResult

    Examples
    --------
    Two labelled rows and four unlabelled ones of a two-word multinomial model, started from
    the EM's fit (:func:`~bayesgen.inference.semi_supervised.em_map`):

    >>> import numpy as np
    >>> from bayesgen.families import family
    >>> from bayesgen.inference.semi_supervised import em_map, stack_rows
    >>> model, classes = family("multinomial_nb"), np.array(["a", "b"])
    >>> X_l, X_u = np.array([[5, 0], [0, 5]]), np.array([[4, 1], [3, 0], [1, 4], [0, 3]])
    >>> def estimates_of(stats):
    ...     return model.from_statistics(stats, alpha=2.0)
    >>> def unlabelled(weights):
    ...     return model.sufficient_statistics(
    ...         stack_rows(X_u, 2), np.repeat(classes, 4), sample_weight=weights.T.ravel(),
    ...         classes=classes)
    >>> em = em_map(
    ...     model, labelled_statistics=model.sufficient_statistics(X_l, classes),
    ...     unlabelled_statistics=unlabelled, estimates_of=estimates_of, labelled_rows=X_l,
    ...     labelled_codes=np.array([0, 1]), unlabelled_rows=X_u)
    >>> def completed(codes):  # the labelled rows' classes, then the drawn ones
    ...     labels = classes[np.r_[[0, 1], codes]]
    ...     return model.sufficient_statistics(np.r_[X_l, X_u], labels, classes=classes)
    >>> result = semi_supervised_gibbs(
    ...     model, reference=em.estimates, completed_statistics=completed,
    ...     estimates_of=estimates_of, unlabelled_rows=X_u, copies=np.arange(4),
    ...     initial=em.responsibilities, draws=50, tune=10, chains=2, random_seed=0,
    ...     prior_draws=0)
    >>> result.idata.posterior["feature_prob"].shape  # (chain, draw, class, feature)
    (2, 50, 2, 2)
    >>> result.label_probabilities.argmax(axis=1).tolist()
    [0, 0, 1, 1]
    """
    rng = np.random.default_rng(random_seed)
    dims = model.parameter_dims(reference)
    coords = parameter_coords(reference)
    n_rows, n_classes = initial.shape
    values = {
        name: np.empty((chains, draws, *(reference.sizes[d] for d in dims[name]))) for name in dims
    }
    proba_sum = np.zeros((n_rows, n_classes))
    start = datetime.datetime.now(datetime.UTC)
    for chain, chain_rng in enumerate(rng.spawn(chains)):
        proba = initial
        for sweep in range(tune + draws):
            codes = draw_labels(proba[copies], chain_rng)
            estimates = estimates_of(completed_statistics(codes))
            point = model.conjugate_draws(estimates, chain_rng, (1,), "float64", posterior=True)
            draw = xr.Dataset(
                {name: (("draw", *dims_), value) for name, (dims_, value) in point.items()},
                coords=coords,
            )
            proba = class_probabilities(model, reference, unlabelled_rows, draw)
            if sweep >= tune:
                for name in dims:
                    values[name][chain, sweep - tune] = point[name][1][0]
                proba_sum += proba
    seconds = (datetime.datetime.now(datetime.UTC) - start).total_seconds()
    posterior = xr.Dataset(
        {name: (("chain", "draw", *dims[name]), values[name]) for name in dims},
        coords=coords | {"chain": np.arange(chains), "draw": np.arange(draws)},
    )
    posterior.attrs = {
        "model": reference.attrs["model"],
        "sampling_time": seconds,
        "tuning_steps": tune,
        "unlabelled_rows": n_rows,
        "sampler": "data-augmentation Gibbs over the unlabelled rows' labels",
    }
    idata = draws_tree(
        model, reference, posterior, rng=rng, prior_draws=prior_draws, dtype=dtype,
        library=INFERENCE_LIBRARY, start=start,
    )  # fmt: skip
    return GibbsResult(idata, proba_sum / (chains * draws))


def row_copies(weights: np.ndarray | None, n_rows: int) -> np.ndarray | None:
    """For every copy of a row, its index: a row of whole weight w is w rows, each with its own
    latent label (weight 0 drops it); None where a weight is not a whole number (such a row
    has no latent-label reading)."""
    if weights is None:
        return np.arange(n_rows)
    weights = np.asarray(weights, dtype=np.float64)
    if np.any(weights < 0) or np.any(weights != np.round(weights)):
        return None
    return np.repeat(np.arange(n_rows), weights.astype(np.int64))


def sample_split(
    model: Family,
    split: LabelSplit,
    em: EMResult,
    labelled_codes: np.ndarray,
    *,
    statistics_of: Callable[..., xr.Dataset],
    estimates_of: Callable[[xr.Dataset], xr.Dataset],
    feature_names=None,
    **sampling,
) -> GibbsResult:
    """:func:`semi_supervised_gibbs` on user data split by
    :func:`~bayesgen.inference.semi_supervised.split_rows`, started from the EM's
    responsibilities: what an estimator's ``fit`` does with unlabelled rows.

    Parameters
    ----------
    model : Family
    split : LabelSplit
        Unlabelled rows of whole-number weights (:func:`row_copies`).
    em : EMResult
        The EM's fit with λ_u = 1 (its closed form lays the draws out).
    labelled_codes : numpy.ndarray of int
        The labelled rows' classes as indices into the fit's classes.
    statistics_of : callable
        ``(X, y, *, feature_names, sample_weight, classes)`` → sufficient statistics (the
        estimator's ``_statistics``).
    estimates_of : callable
        Statistics → closed form at the fixed prior.
    feature_names : sequence of str, optional
    **sampling
        ``draws``, ``tune``, ``chains``, ``random_seed``, ``prior_draws``, ``dtype``.

    Raises
    ------
    ValueError
        Naming ``sample_weight`` where an unlabelled row's weight is not a whole number.
    """
    n_unlabelled = em.responsibilities.shape[0]
    copies = row_copies(split.weight_unlabelled, n_unlabelled)
    if copies is None:
        raise ValueError(
            "sample_weight: the Gibbs sampler counts an unlabelled row of weight w as w rows "
            "with their own labels, so their weights must be whole numbers >= 0."
        )
    classes = em.estimates["class"].values
    codes_of_classes = np.arange(classes.size)
    completed = concatenate_rows(split.X_labelled, take_rows(split.X_unlabelled, copies))
    weights = None
    if split.weight_labelled is not None:
        weights = np.r_[split.weight_labelled, np.ones(copies.size)]

    def completed_statistics(codes: np.ndarray) -> xr.Dataset:
        # The labels as codes (their checks are cheaper than those of strings), renamed after.
        statistics = statistics_of(
            completed,
            np.r_[labelled_codes, codes],
            feature_names=feature_names,
            sample_weight=weights,
            classes=codes_of_classes,
        )
        return statistics.assign_coords({"class": classes})

    return semi_supervised_gibbs(
        model,
        reference=em.estimates,
        completed_statistics=completed_statistics,
        estimates_of=estimates_of,
        unlabelled_rows=model.training_features(em.estimates, split.X_unlabelled),
        copies=copies,
        initial=em.responsibilities,
        **sampling,
    )
