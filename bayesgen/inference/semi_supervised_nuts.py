"""The full posterior of a semi-supervised fit by NUTS, the unlabelled rows' labels marginalised.

The model is the Gibbs sampler's (:mod:`bayesgen.inference.semi_supervised_gibbs`): θ ~ p(θ);
every row has a class, y_i | θ ~ Categorical(π), x_i | y_i, θ ~ p(x | y_i, θ); the labels of the
unlabelled rows U are latent. Here they are summed out of the likelihood instead of drawn, so
NUTS samples p(θ | X, y_L) ∝ p(θ) Π_L p(x_i, y_i | θ) Π_U Σ_k π_k p(x_i | y = k, θ) directly:

* the labelled rows enter through the block's own PyMC model (``pymc_model``) on their
  sufficient statistics, as in a supervised NUTS fit, its prior fixed at the EM fit's (a prior
  the estimator derives from the data is frozen, as for the Gibbs sampler);
* the unlabelled rows enter through the potential ``unlabelled_loglik``, Σ_U w_i log Σ_k π_k
  p(x_i | y = k, θ), built from the block's symbolic per-class log-likelihood
  (:mod:`bayesgen.families.unlabelled_pymc`). A row of whole weight w counts as w rows, each
  with its own latent label (its mixture term w times); with λ_u < 1 every term is multiplied
  by λ_u, which tempers the unlabelled rows: the posterior is then exp of EM-λ's objective,
  whose mode is the EM's MAP, not that of a latent-label model.

NUTS starts every free variable that the MAP names (π, and e.g. μ and σ² of Gaussian naive
Bayes, the rates of Poisson naive Bayes) at the EM's MAP, where that point lies inside its
support; the others (the multinomial model's Gamma rates, GDA's Bartlett factors) start where
the block's model starts them, at the labelled rows' posterior mean. ``constant_data`` holds the
statistics the PyMC model observes: the labelled rows'. Beside the draws, each unlabelled row's
posterior class probabilities P(y_i = k | X, y_L), Rao-Blackwellised as the Gibbs sampler's:
the mean over the draws of p(y = k | x_i, θ), from the block's ``draw_log_joint``.

When to prefer it over the Gibbs sampler: for the same posterior, NUTS moves θ with the labels
integrated out, so it mixes where data augmentation sticks (labels that are uncertain and
strongly coupled to θ, few labelled rows), and it fits the unlabelled rows of models whose
prior is not conjugate; each gradient costs a pass over the unlabelled rows, and the graph
compiles first (seconds to a minute), so on large, well-separated data the Gibbs sampler is
cheaper.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import xarray as xr

from bayesgen.families import Family
from bayesgen.inference.sampling import conjugate_map, sample_nuts
from bayesgen.inference.semi_supervised import EMResult, LabelSplit, concatenate_rows

__all__ = [
    "NutsResult",
    "check_mixture_form",
    "label_probabilities",
    "labelled_statistics",
    "sample_split",
    "start_at",
]

#: Draws of p(y = k | x_i, θ) held at once: chunks of at most this many numbers.
_CHUNK_CELLS = 2**22


@dataclass(frozen=True)
class NutsResult:
    """What :func:`sample_split` drew.

    Attributes
    ----------
    idata : xarray.DataTree
        NUTS' ``posterior`` (chain, draw, ...), ``sample_stats``, ``prior`` (where asked for)
        and ``constant_data``.
    label_probabilities : numpy.ndarray of shape (n_unlabelled, n_classes)
        P(y_i = k | X, y_L) of every unlabelled row: the mean of p(y = k | x_i, θ) over the
        draws of every chain.
    """

    idata: xr.DataTree
    label_probabilities: np.ndarray


def check_mixture_form(model: Family, n_unlabelled: int) -> None:
    """Refuse, before any work, a model whose PyMC form gives no per-class log-likelihood of a
    row (:func:`bayesgen.families.unlabelled_pymc.has_mixture_form`).

    Raises
    ------
    ValueError
        Naming ``inference`` and saying why.

    Examples
    --------
    >>> from bayesgen.families import family
    >>> check_mixture_form(family("multinomial_nb"), 3)  # has one: nothing happens
    """
    if not _unlabelled_pymc().has_mixture_form(model):
        raise ValueError(
            f"inference: {n_unlabelled} rows are unlabelled, and inference='nuts' fits them "
            "with their labels marginalised, log p(x_i) = logsumexp_k (log π_k + log p(x_i | "
            f"y = k, θ)), which needs the model's per-class log-likelihood of a row in PyMC; "
            f"the {model.name!r} model has none. Use inference='conjugate' (EM for the MAP, "
            "then the full posterior by Gibbs sampling)."
        )


def labelled_statistics(
    split: LabelSplit,
    labelled_codes: np.ndarray,
    classes: np.ndarray,
    *,
    statistics_of: Callable[..., xr.Dataset],
    feature_names=None,
) -> xr.Dataset:
    """The sufficient statistics of the labelled rows, laid out as those of all the rows: the
    unlabelled rows are there with weight 0, so that the features and categories they show
    (a category code no labelled row has) have cells, as in the Gibbs sampler's completed
    statistics. ``statistics_of`` is the estimator's ``_statistics``."""
    n_labelled, n_unlabelled = len(labelled_codes), split.unlabelled.sum()
    labelled_weight = (
        np.ones(n_labelled) if split.weight_labelled is None else split.weight_labelled
    )
    statistics = statistics_of(
        concatenate_rows(split.X_labelled, split.X_unlabelled),
        np.r_[labelled_codes, np.zeros(n_unlabelled, dtype=np.int64)],
        feature_names=feature_names,
        sample_weight=np.r_[labelled_weight, np.zeros(n_unlabelled)],
        classes=np.arange(classes.size),  # codes: cheaper to check than labels
    )
    return statistics.assign_coords({"class": classes})


def sample_split(
    model: Family,
    split: LabelSplit,
    em: EMResult,
    labelled_codes: np.ndarray,
    *,
    statistics_of: Callable[..., xr.Dataset],
    estimates_of: Callable[[xr.Dataset], xr.Dataset],
    build_model: Callable,
    feature_names=None,
    unlabelled_weight: float = 1.0,
    **nuts,
) -> NutsResult:
    """Sample the semi-supervised posterior by NUTS (see the module's docstring): what an
    estimator's ``fit`` does with unlabelled rows and ``inference="nuts"``.

    Parameters
    ----------
    model : Family
    split : LabelSplit
        The rows split by :func:`~bayesgen.inference.semi_supervised.split_rows`, with
        whole-number weights.
    em : EMResult
        The EM's fit: its MAP starts NUTS, its closed form lays out the unlabelled rows.
    labelled_codes : numpy.ndarray of int
        The labelled rows' classes as indices into the fit's classes.
    statistics_of : callable
        ``(X, y, *, feature_names, sample_weight, classes)`` → sufficient statistics (the
        estimator's ``_statistics``).
    estimates_of : callable
        Statistics → closed form at the fixed prior.
    build_model : callable
        Closed form → the block's PyMC model (the estimator's ``_build_model``).
    feature_names : sequence of str, optional
    unlabelled_weight : float
        λ_u, multiplying every unlabelled row's term.
    **nuts
        :func:`~bayesgen.inference.sampling.sample_nuts`'s options (draws, tune, chains,
        cores, random_seed, nuts_sampler, target_accept, prior_draws, exact_prior, dtype,
        progressbar).

    Returns
    -------
    NutsResult

    Examples
    --------
    Building the model without sampling it (NUTS compiles for a minute the first time): two
    labelled rows and four unlabelled ones of a two-word multinomial model.

    >>> import numpy as np
    >>> from bayesgen.families import family
    >>> from bayesgen.families.unlabelled_pymc import add_unlabelled_rows
    >>> from bayesgen.inference.semi_supervised import fit_labelled_and_unlabelled, split_rows
    >>> model = family("multinomial_nb")
    >>> X = np.array([[5, 0], [0, 5], [4, 1], [3, 0], [1, 4], [0, 3]])
    >>> split = split_rows(X, ["a", "b", None, None, None, None], np.arange(6) >= 2)
    >>> def statistics_of(X, y, *, feature_names=None, sample_weight=None, classes=None):
    ...     return model.sufficient_statistics(X, y, sample_weight=sample_weight, classes=classes)
    >>> def estimates_of(statistics):
    ...     return model.from_statistics(statistics, alpha=2.0)
    >>> em, codes = fit_labelled_and_unlabelled(
    ...     model, split, statistics_of=statistics_of, estimates_of=estimates_of)
    >>> labelled = estimates_of(labelled_statistics(
    ...     split, codes, em.estimates["class"].values, statistics_of=statistics_of))
    >>> labelled["class_count"].values.tolist()  # the unlabelled rows weigh 0
    [1.0, 1.0]
    >>> pymc_model = model.pymc_model(labelled)
    >>> _ = add_unlabelled_rows(pymc_model, model, labelled, split.X_unlabelled)
    >>> start_at(pymc_model, conjugate_map(em.estimates, model_family=model))
    ['class_prob']
    """
    classes = em.estimates["class"].values
    statistics = labelled_statistics(
        split, labelled_codes, classes, statistics_of=statistics_of, feature_names=feature_names
    )
    labelled = estimates_of(statistics)
    pymc_model = build_model(labelled)
    unlabelled_rows = model.training_features(em.estimates, split.X_unlabelled)
    n_unlabelled = unlabelled_rows.shape[0]
    weights = np.ones(n_unlabelled) if split.weight_unlabelled is None else split.weight_unlabelled
    _unlabelled_pymc().add_unlabelled_rows(
        pymc_model, model, labelled, unlabelled_rows, weights=unlabelled_weight * weights
    )
    start_at(pymc_model, conjugate_map(em.estimates, model_family=model))
    idata = sample_nuts(
        pymc_model,
        var_names=list(model.parameter_dims(em.estimates)),
        stats=labelled,
        model_family=model,
        **nuts,
    )
    idata["posterior"].attrs |= {
        "unlabelled_rows": n_unlabelled,
        "sampler": "NUTS, the unlabelled rows' labels marginalised",
    }
    probabilities = label_probabilities(
        model, em.estimates, unlabelled_rows, idata["posterior"].to_dataset()
    )
    return NutsResult(idata, probabilities)


def start_at(pymc_model, point: xr.Dataset) -> list[str]:
    """Start NUTS at ``point`` (the EM's MAP) for every free variable of ``pymc_model`` that
    it names and whose value lies inside the variable's support (a mode on the boundary, a
    probability of 0 with α = 1, has no finite unconstrained value); returns their names.

    The support is read off the variable's transform: bayesgen's transforms state it
    (``contains``: positive rates, probabilities below σ(cap) for a capped standardised
    logit, ...), and of PyMC's the log, log-odds and simplex transforms are known; a variable
    with another transform keeps its start.
    """
    started = []
    free = set(pymc_model.free_RVs)
    for name in point.data_vars:
        if name not in pymc_model.named_vars or pymc_model[name] not in free:
            continue
        variable, value = pymc_model[name], np.asarray(point[name].values, dtype=np.float64)
        if not _inside(value, pymc_model.rvs_to_transforms.get(variable)):
            continue
        pymc_model.set_initval(variable, value)
        started.append(name)
    return started


def label_probabilities(model: Family, estimates: xr.Dataset, rows, posterior: xr.Dataset):
    """P(y_i = k | X, y_L) of every row: the mean over the draws of ``posterior`` of
    p(y = k | x_i, θ), from the block's ``draw_log_joint`` (which leaves out only terms the
    same for every class, so its softmax over the classes is exact), chunk by chunk.

    Examples
    --------
    Over exact draws of a supervised fit:

    >>> import numpy as np
    >>> from bayesgen import closed_form
    >>> from bayesgen.families import family
    >>> from bayesgen.inference.sampling import conjugate_posterior
    >>> stats = closed_form.multinomial_nb([[5, 0], [0, 5]], ["a", "b"], alpha=2.0)
    >>> draws = conjugate_posterior(stats, draws=20, chains=2, random_seed=0, prior_draws=0)
    >>> proba = label_probabilities(
    ...     family("multinomial_nb"), stats, np.array([[4, 0], [1, 3]]),
    ...     draws["posterior"].to_dataset())
    >>> proba.argmax(axis=1).tolist(), proba.sum(axis=1).round(12).tolist()
    ([0, 1], [1.0, 1.0])
    """
    n_rows, n_classes = rows.shape[0], estimates.sizes["class"]
    chunk = max(1, _CHUNK_CELLS // max(1, n_rows * n_classes))
    total = np.zeros((n_rows, n_classes))
    for chain in range(posterior.sizes["chain"]):
        draws = posterior.isel(chain=chain)
        for start in range(0, draws.sizes["draw"], chunk):
            joint = model.draw_log_joint(
                estimates, rows, draws.isel(draw=slice(start, start + chunk))
            )
            joint = joint - joint.max(axis=2, keepdims=True)
            proba = np.exp(joint)
            total += (proba / proba.sum(axis=2, keepdims=True)).sum(axis=0)
    return total / (posterior.sizes["chain"] * posterior.sizes["draw"])


def _positive(value) -> bool:
    """Every entry > 0: ``gamma_transforms_pymc.all_positive``, written here so that this
    module does not import PyMC and PyTensor at import time."""
    return bool(np.all(value > 0))


#: The domains of PyMC's own transforms that bayesgen's models use (bayesgen's transforms
#: state theirs: their ``contains``).
_PYMC_DOMAINS = {
    "log": _positive,
    "simplex": _positive,
    "logodds": lambda value: bool(np.all((value > 0) & (value < 1))),
}


def _inside(value: np.ndarray, transform) -> bool:
    """Whether ``value`` has a finite image under ``transform`` (None: any finite value); a
    transform that neither states its domain (``contains``) nor is one of PyMC's above: no."""
    if not np.all(np.isfinite(value)):
        return False
    if transform is None:
        return True
    contains = getattr(transform, "contains", None)
    if contains is not None:
        return contains(value)
    return _PYMC_DOMAINS.get(getattr(transform, "name", None), lambda value: False)(value)


def _unlabelled_pymc():
    """:mod:`bayesgen.families.unlabelled_pymc`, imported when a NUTS fit needs it."""
    from bayesgen.families import unlabelled_pymc  # heavy: PyMC

    return unlabelled_pymc
