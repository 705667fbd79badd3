"""Prior shift: the class probabilities at deployment, π′, from unlabelled rows, with p(x | y)
kept at the fit (Saerens, Latinne and Decaestecker, *Neural Computation* 14, 2002).

:func:`adjust_class_prior` (the estimators' ``adjust_class_prior`` method) takes a fitted
estimator and the unlabelled rows X_new, reads log p(x_i | y = k) from the estimator's model,
and returns a :class:`PriorShift`: the posterior of π′ under a Dirichlet prior (its mode by EM,
its draws by Gibbs sampling, :mod:`bayesgen.maths.prior_shift`), p(y | x) of X_new re-weighted
by it, and whether the prior has shifted.

Which p(x | y): the exact posterior predictive where the model has one (the parameters of
p(x | y) integrated out over their posterior, so their uncertainty enters each row's
likelihood), else the plug-in at the closed-form estimates. Either way the rows of X_new are
taken as independent given the fit: what they would teach about p(x | y) itself is not used.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
import xarray as xr

from bayesgen.input.params import check_probability, random_generator
from bayesgen.maths.diagnostics import mc_diagnostics
from bayesgen.maths.prior_shift import (
    check_concentration,
    prior_shift_em,
    prior_shift_gibbs,
    prior_shift_log_bayes_factor,
    reweighted_proba,
)

__all__ = ["PriorShift", "adjust_class_prior", "class_log_likelihood"]

#: The Gibbs chains of :func:`adjust_class_prior`.
CHAINS = 4
#: The fewest tuning sweeps before the kept draws (else half of ``draws``).
MIN_TUNE = 100

EXACT_PREDICTIVE = "exact posterior predictive"
PLUG_IN = "plug-in estimates"


@dataclass(frozen=True, eq=False)
class PriorShift:
    """The posterior of the deployment class probabilities π′ (:func:`adjust_class_prior`).

    Attributes
    ----------
    classes : ndarray of shape (n_classes,)
    class_prob : ndarray of shape (n_classes,)
        The posterior mean of π′.
    interval : tuple of two ndarrays of shape (n_classes,)
        The equal-tailed ``prob`` credible interval of each π′_k.
    map : ndarray of shape (n_classes,)
        The posterior mode of π′ by EM (with ``prior=1`` the maximum-likelihood estimate of
        Saerens et al.); NaN when some prior concentration is below 1 (no mode exists).
    draws : xarray.DataArray of dims (chain, draw, class)
        Gibbs draws of π′.
    training_class_prob : ndarray of shape (n_classes,)
        The fit's class probabilities (its posterior mean of π), "no shift".
    log_bayes_factor : float
        log p(X_new | π′ ~ Dirichlet(prior)) − log p(X_new | π′ = training_class_prob):
        above 0 the data favour a shift (above 2.3, by a factor of more than 10).
    log_bayes_factor_mcse : float
        Its Monte Carlo standard error (importance sampling).
    shifted : bool
        Whether the training probability of some class lies outside its ``prob`` interval.
    proba : ndarray of shape (n_rows, n_classes)
        p(y = k | x) of X_new re-weighted by π′, averaged over the draws of π′.
    proba_interval : tuple of two ndarrays of shape (n_rows, n_classes)
        Its ``prob`` interval over the draws of π′ (p(x | y) held fixed).
    prob : float
        The mass of the intervals.
    r_hat, ess : ndarray of shape (n_classes,)
        Rank-normalised split R-hat and bulk ESS of each π′_k.
    likelihood : str
        Where p(x | y) came from: the exact posterior predictive or the plug-in estimates.

    Examples
    --------
    :func:`adjust_class_prior` returns one; ``print`` shows its table.

    >>> import numpy as np
    >>> from bayesgen import MultinomialNB
    >>> est = MultinomialNB(inference="conjugate", draws=50, tune=10, chains=2, random_seed=0)
    >>> est = est.fit(np.array([[5, 1], [4, 0], [1, 5], [0, 4]]), ["ham", "ham", "spam", "spam"])
    >>> shift = adjust_class_prior(est, np.array([[5, 0], [6, 1], [0, 5]]), draws=50, random_seed=0)
    >>> shift.classes.tolist(), dict(shift.draws.sizes), shift.likelihood
    (['ham', 'spam'], {'chain': 4, 'draw': 50, 'class': 2}, 'exact posterior predictive')
    >>> print(shift)  # doctest: +ELLIPSIS
    Prior shift from 3 unlabelled rows (p(x | y): exact posterior predictive)
    class  training     MAP    mean  94% interval
    ham       0.500 ...
    """

    classes: np.ndarray
    class_prob: np.ndarray
    interval: tuple[np.ndarray, np.ndarray]
    map: np.ndarray
    draws: xr.DataArray
    training_class_prob: np.ndarray
    log_bayes_factor: float
    log_bayes_factor_mcse: float
    shifted: bool
    proba: np.ndarray
    proba_interval: tuple[np.ndarray, np.ndarray]
    prob: float
    r_hat: np.ndarray
    ess: np.ndarray
    likelihood: str

    def __str__(self) -> str:
        lower, upper = self.interval
        names = [str(name) for name in self.classes]
        width = max(5, *(len(name) for name in names))
        percent = f"{100 * self.prob:g}%"
        lines = [
            f"Prior shift from {self.proba.shape[0]} unlabelled rows (p(x | y): {self.likelihood})",
            f"{'class':<{width}}  training     MAP    mean  {percent} interval",
        ]
        for k, name in enumerate(names):
            lines.append(
                f"{name:<{width}}  {self.training_class_prob[k]:8.3f}  {self.map[k]:6.3f}  "
                f"{self.class_prob[k]:6.3f}  [{lower[k]:.3f}, {upper[k]:.3f}]"
            )
        outside = [
            name
            for name, train, low, high in zip(
                names, self.training_class_prob, lower, upper, strict=True
            )
            if not low <= train <= high
        ]
        verdict = (
            f"yes: the training probability lies outside the {percent} interval of "
            + ", ".join(outside)
            if self.shifted
            else f"no: every training probability lies inside its {percent} interval"
        )
        lines += [
            f"log Bayes factor, shifted vs not: {self.log_bayes_factor:.1f} "
            f"(MCSE {self.log_bayes_factor_mcse:.2f})",
            f"Shifted: {verdict}",
            f"Gibbs: {self.draws.sizes['chain']} chains x {self.draws.sizes['draw']} draws, "
            f"max R-hat {np.nanmax(self.r_hat):.3f}, min ESS {np.nanmin(self.ess):.0f}",
        ]
        return "\n".join(lines)


def class_log_likelihood(estimator, X_new) -> tuple[np.ndarray, str]:
    """log p(x_i | y = k) of a fitted estimator's model up to a constant per row, and where
    it came from (:data:`EXACT_PREDICTIVE` or :data:`PLUG_IN`).

    The model's log joint less its class term log π_k (the fit's ``class_prob``, which both
    joints use). Where the plug-in leaves some classes with zero probability (λ = 0, its
    ``order``), only the classes of the row's lowest order keep a likelihood.

    Parameters
    ----------
    estimator : a fitted bayesgen estimator
    X_new : array-like, DataFrame or sparse matrix of shape (n_rows, n_features)

    Returns
    -------
    log_likelihood : ndarray of shape (n_rows, n_classes)
    source : str
    """
    model, stats = estimator.model_, estimator.closed_form_
    try:
        X = model.prediction_features(stats, X_new)
    except (TypeError, ValueError) as error:
        renamed = _naming_x_new(error)
        if renamed is error:
            raise
        raise renamed from error
    if X.shape[0] == 0:
        raise ValueError("X_new: expected at least one unlabelled row; got none.")
    class_prob = stats["class_prob"].values.astype(np.float64)
    if np.any(class_prob <= 0):
        raise ValueError(
            "adjust_class_prior: a class with no training rows and class_alpha=0 has "
            "probability 0 in the fit, so its p(x | y) cannot be read from the fit's log "
            "joint; fit with class_alpha > 0."
        )
    # The naive Bayes blocks' exact predictive needs λ > 0; at λ = 0 it is the plug-in anyway.
    feature_alpha = np.asarray(stats.attrs.get("alpha", 1.0), dtype=np.float64)
    if model.has_exact_predictive(estimator.get_params()) and np.all(feature_alpha > 0):
        joint, source = model.predictive_log_joint(stats, X), EXACT_PREDICTIVE
    else:
        joint, order = model.plug_in_log_joint(stats, X)
        if order is not None:
            lowest = order.min(axis=-1, keepdims=True)
            joint = np.where(np.isclose(order, lowest, rtol=0, atol=1e-9), joint, -np.inf)
        source = PLUG_IN
    return np.asarray(joint, dtype=np.float64) - np.log(class_prob), source


def adjust_class_prior(
    estimator,
    X_new,
    *,
    prior=1.0,
    draws: int = 2000,
    prob: float = 0.94,
    random_seed=None,
) -> PriorShift:
    """The posterior of the class probabilities π′ of unlabelled rows X_new, p(x | y) kept at
    the fit, and X_new's p(y | x) re-weighted by it.

    π′ ~ Dirichlet(prior); every row of X_new has a latent class drawn from π′ and the fit's
    p(x | y) (:func:`class_log_likelihood`). The mode comes from EM started at the training
    probabilities, the draws from :data:`CHAINS` Gibbs chains (``draws`` each after
    ``max(draws // 2, 100)`` tuning sweeps), the log Bayes factor of "shifted" against "π′ =
    the training probabilities" from importance sampling (see
    :func:`bayesgen.maths.prior_shift.prior_shift_log_bayes_factor`). ``shifted`` is the
    interval rule: some class's training probability lies outside its central ``prob``
    interval. The training probabilities are taken as known; with N training rows their own
    uncertainty is of order 1/√N.

    Parameters
    ----------
    estimator : a fitted bayesgen estimator
    X_new : array-like, DataFrame or sparse matrix of shape (n_rows, n_features)
        Unlabelled rows with the columns of the fit.
    prior : float or array-like of shape (n_classes,), default 1.0
        The Dirichlet concentration of π′ (1: uniform over the simplex).
    draws : int, default 2000
        Kept Gibbs draws per chain.
    prob : float, default 0.94
        The mass of the credible intervals, in (0, 1).
    random_seed : None, int or numpy.random.Generator
        Seeds the Gibbs chains and the importance sampler.

    Returns
    -------
    PriorShift

    Examples
    --------
    A fit on as many "ham" rows as "spam" ones, then sixteen unlabelled rows that look like
    ham and two like spam: the training probability 0.5 falls outside both intervals.

    >>> import numpy as np
    >>> from bayesgen import MultinomialNB
    >>> X = np.array([[5, 1], [4, 0], [6, 1], [1, 5], [0, 4], [1, 6]])
    >>> y = np.repeat(["ham", "spam"], 3)
    >>> est = MultinomialNB(inference="conjugate", draws=50, tune=10, chains=2, random_seed=0)
    >>> est = est.fit(X, y)
    >>> X_new = np.r_[np.tile([[5, 0], [6, 1], [4, 1], [5, 1]], (4, 1)), [[0, 5], [1, 6]]]
    >>> shift = adjust_class_prior(est, X_new, draws=50, random_seed=0)
    >>> shift.training_class_prob.round(2).tolist(), shift.map.round(2).tolist()
    ([0.5, 0.5], [0.89, 0.11])
    >>> shift.shifted, shift.proba.shape
    (True, (18, 2))
    """
    check_probability(prob, "prob")
    if not isinstance(draws, numbers.Integral) or isinstance(draws, bool):
        raise TypeError(f"draws: expected an integer >= 1; got {draws!r}.")
    if draws < 1:
        raise ValueError(f"draws: expected an integer >= 1; got {draws!r}.")
    rng = random_generator(random_seed, "random_seed")
    classes = np.asarray(estimator.classes_)
    concentration = check_concentration(prior, classes.size, "prior")
    log_likelihood, source = class_log_likelihood(estimator, X_new)
    training = estimator.closed_form_["class_prob"].values.astype(np.float64)

    if np.all(concentration >= 1):
        mode = prior_shift_em(log_likelihood, concentration, start=training, tol=1e-9).class_prob
    else:
        mode = np.full(classes.size, np.nan)
    gibbs = prior_shift_gibbs(
        log_likelihood,
        concentration,
        rng=rng,
        chains=CHAINS,
        draws=int(draws),
        tune=max(int(draws) // 2, MIN_TUNE),
    )
    flat = gibbs.class_prob.reshape(-1, classes.size)
    tails = [(1 - prob) / 2, 1 - (1 - prob) / 2]
    lower, upper = np.quantile(flat, tails, axis=0)
    log_bayes_factor, mcse = prior_shift_log_bayes_factor(
        log_likelihood, concentration, training, flat, rng=rng
    )
    proba, proba_bounds = reweighted_proba(log_likelihood, flat, tails)
    _, ess, r_hat = mc_diagnostics(np.moveaxis(gibbs.class_prob, -1, 0))
    return PriorShift(
        classes=classes,
        class_prob=flat.mean(axis=0),
        interval=(lower, upper),
        map=mode,
        draws=xr.DataArray(
            gibbs.class_prob,
            dims=("chain", "draw", "class"),
            coords={
                "chain": np.arange(CHAINS),
                "draw": np.arange(int(draws)),
                "class": classes,
            },
            name="class_prob",
        ),
        training_class_prob=training,
        log_bayes_factor=log_bayes_factor,
        log_bayes_factor_mcse=mcse,
        shifted=bool(np.any((training < lower) | (training > upper))),
        proba=proba,
        proba_interval=(proba_bounds[0], proba_bounds[1]),
        prob=float(prob),
        r_hat=r_hat,
        ess=ess,
        likelihood=source,
    )


def _naming_x_new(error: Exception) -> Exception:
    """The data checks' error about "X" as one about ``X_new``, the argument's name here."""
    message = str(error)
    if message.startswith("X"):
        try:
            return type(error)("X_new" + message[1:])
        except TypeError:  # an exception class with other constructor arguments
            return error
    return error
