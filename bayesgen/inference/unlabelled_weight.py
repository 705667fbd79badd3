"""Choosing λ_u, the weight of the unlabelled rows in a semi-supervised fit (Nigam's EM-λ), by
exact leave-one-out of the labelled rows.

A semi-supervised fit (:mod:`bayesgen.inference.semi_supervised`) maximises

    log p(θ) + Σ_{i∈L} log p(x_i, y_i | θ) + λ_u Σ_{j∈U} log p(x_j | θ),

and λ_u ∈ [0, 1] says how much an unlabelled row counts beside a labelled one. Where the model
fits the data, unlabelled rows sharpen θ and λ_u = 1 is best; where it does not (the classes
are not the clusters the model would find, or the unlabelled rows come from elsewhere), they
pull θ away from what predicts the labels, and a small λ_u is better. The labels themselves
say which: for every λ_u of a grid, fit by EM and score the labelled rows by their exact
leave-one-out log predictive of the label,

    elpd_loo(λ_u) = Σ_{i∈L} log p(y_i | x_i, D_{-i}(λ_u)),

and keep the λ_u with the highest score. λ_u = 0 scores the supervised fit on the labelled
rows alone, so the choice falls back to it where the unlabelled rows do not help.

**The approximation.** D_{-i}(λ_u) is the fit's *completed expected statistics* with row i's
own statistics taken out (the family's exact ``loo_log_joint`` on the fit's closed form, no
refits): the unlabelled rows enter it with their responsibilities r_jk *held at the full fit*.
Exactly, leaving row i out would rerun EM, and the responsibilities would move. Holding them
fixed lets row i's label reach its own prediction through the unlabelled rows it pulled towards
its class, so the score is somewhat optimistic for λ_u > 0, most where few labels seed many
unlabelled rows; a λ_u whose gain on the labelled rows is small is therefore not a reliable
gain on new data (compare the choice against held-out labels, as
``benchmarks/bench_semi_supervised.py`` does). At λ_u = 0 the score is the exact
leave-one-out of the supervised fit.

Nothing here knows a model or imports an estimator: :func:`labelled_loo_log_proba` takes the
family, closed form and rows; :func:`choose_unlabelled_weight` takes any bayesgen estimator
(its ``fit(X, y, unlabelled_weight=...)``, ``model_``, ``closed_form_`` and ``training_rows``).

Examples
--------
Two labelled rows per class and thirty unlabelled rows of the same two-word classes:

>>> import numpy as np
>>> from bayesgen import MultinomialNB
>>> rng = np.random.default_rng(0)
>>> y_all = np.r_[[0, 1, 0, 1], rng.integers(0, 2, 30)]
>>> X = np.array([rng.multinomial(10, [0.7, 0.3] if k == 0 else [0.3, 0.7]) for k in y_all])
>>> y = np.r_[y_all[:4], np.full(30, -1)]
>>> est = MultinomialNB(
...     alpha=2.0, inference="conjugate", compute_map=False, draws=100, tune=20, random_seed=0
... )
>>> choice = choose_unlabelled_weight(est, X, y, unlabelled_label=-1, grid=[0.0, 1.0])
>>> choice.grid.tolist(), choice.elpd.shape, choice.best in (0.0, 1.0)
([0.0, 1.0], (2,), True)
>>> choice.estimator.closed_form_.attrs["unlabelled_weight"] == choice.best
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr
from sklearn.base import clone

from bayesgen.families import Family
from bayesgen.maths.likelihood import log_sum_exp

#: The λ_u tried by default: none, a little on a log scale, all.
DEFAULT_GRID = (0.0, 0.01, 0.03, 0.1, 0.3, 1.0)
#: The sampling settings of the grid's fits, which are scored on their closed form alone.
_FEWEST_DRAWS = {"draws": 1, "tune": 0, "chains": 1, "prior_draws": 0, "compute_map": False}


@dataclass(frozen=True)
class UnlabelledWeightChoice:
    """What :func:`choose_unlabelled_weight` found.

    Attributes
    ----------
    grid : numpy.ndarray
        The λ_u tried, in the order given.
    elpd : numpy.ndarray
        Σ_labelled log p(y_i | x_i, D_{-i}(λ_u)) at each λ_u (the unlabelled rows'
        responsibilities held at that λ_u's full fit; see the module's docstring).
    accuracy : numpy.ndarray
        Share of the labelled rows whose most probable leave-one-out class is their own.
    pointwise : numpy.ndarray of shape (n_grid, n_labelled)
        log p(y_i | x_i, D_{-i}(λ_u)) of each labelled row at each λ_u.
    best : float
        The λ_u of the highest ``elpd`` (the smallest such λ_u where several tie).
    estimator : estimator
        A clone of the estimator handed in, fitted at ``best`` (with its own settings, or with
        one draw where ``refit`` is False).
    """

    grid: np.ndarray
    elpd: np.ndarray
    accuracy: np.ndarray
    pointwise: np.ndarray
    best: float
    estimator: object

    @property
    def se_diff(self) -> np.ndarray:
        """Standard error of each λ_u's ``elpd`` minus the best one's, sqrt(n · Var_i of the
        pointwise differences) (0 at the best): a gain smaller than about two of these is
        noise."""
        best = int(np.flatnonzero(self.grid == self.best)[0])
        differences = self.pointwise - self.pointwise[best]
        return np.sqrt(differences.shape[1] * differences.var(axis=1))

    def table(self) -> pd.DataFrame:
        """One row per λ_u: ``elpd_loo``, ``se_diff`` and ``accuracy_loo``."""
        return pd.DataFrame(
            {"elpd_loo": self.elpd, "se_diff": self.se_diff, "accuracy_loo": self.accuracy},
            index=pd.Index(self.grid, name="unlabelled_weight"),
        )


def labelled_loo_log_proba(
    model: Family, estimates: xr.Dataset, rows, codes: np.ndarray, *, options: dict | None = None
) -> np.ndarray:
    """log p(y = k | x_i, D_{-i}) of every row i of a fit and class k, from the family's exact
    ``loo_log_joint`` on its closed form.

    For a semi-supervised fit, ``estimates`` is the closed form at the completed expected
    statistics and ``rows`` are the labelled rows: row i leaves the statistics, the unlabelled
    rows' expected statistics stay as they are.

    Parameters
    ----------
    model : Family
        The fit's model (``est.model_``).
    estimates : xarray.Dataset
        The fit's closed form (``est.closed_form_``).
    rows : numpy.ndarray or scipy.sparse.csr_array
        The rows whose statistics ``estimates`` holds, checked (``est.training_rows()[0]``).
    codes : numpy.ndarray of int
        Their classes, as indices into the classes.
    options : dict, optional
        The estimator's parameters (``est.get_params()``).

    Returns
    -------
    numpy.ndarray of shape (n_rows, n_classes)

    Raises
    ------
    NotImplementedError
        For a model without an exact leave-one-out predictive (GDA with the LKJ prior).
    """
    joint = model.loo_log_joint(estimates, rows, np.asarray(codes, np.int64), options=options)
    return joint - log_sum_exp(joint)


def fitted_loo_log_proba(est) -> tuple[np.ndarray, np.ndarray]:
    """:func:`labelled_loo_log_proba` of a fitted estimator's training (labelled) rows.

    Returns
    -------
    log_proba : numpy.ndarray of shape (n_labelled, n_classes)
    codes : numpy.ndarray of int
        The labelled rows' classes.

    Raises
    ------
    ValueError
        For a fit with ``sample_weight`` (a row of weight w counts w times: leaving it out is
        not defined), with fewer than two labelled rows, or of a model without an exact
        leave-one-out predictive.
    """
    if est.training_weights() is not None:
        raise ValueError(
            "sample_weight: leave-one-out of the labelled rows is not defined for a fit with "
            "sample_weight (a row of weight w counts w times); choose unlabelled_weight "
            "without weights."
        )
    rows, codes = est.training_rows()
    codes = np.asarray(codes, dtype=np.int64)
    if codes.size < 2:
        raise ValueError(
            f"y: leaving one labelled row out needs at least 2 labelled rows; got {codes.size}."
        )
    try:
        log_proba = labelled_loo_log_proba(
            est.model_, est.closed_form_, rows, codes, options=est.get_params()
        )
    except NotImplementedError as reason:
        raise ValueError(
            "unlabelled_weight: choosing it by leave-one-out needs an exact leave-one-out "
            f"predictive, which this model has not ({reason})."
        ) from None
    return log_proba, codes


def choose_unlabelled_weight(
    estimator,
    X,
    y,
    *,
    grid=DEFAULT_GRID,
    unlabelled_label=None,
    feature_names=None,
    refit: bool = True,
) -> UnlabelledWeightChoice:
    """λ_u by the exact leave-one-out log score of the labelled rows over a grid.

    For each λ_u of ``grid``, a clone of ``estimator`` is fitted by
    ``fit(X, y, unlabelled_weight=λ_u)`` and its labelled rows scored by
    Σ_labelled log p(y_i | x_i, D_{-i}(λ_u)) (the unlabelled rows' responsibilities held at
    the full fit: see the module's docstring for what that approximates). The λ_u of the
    highest score is chosen and a clone fitted at it returned. The score reads the fits'
    closed forms (the EM's completed statistics), not their posterior draws, so the grid is
    fitted with a single draw; only the returned fit samples with the estimator's settings
    (the full posterior by Gibbs sampling where λ_u = 1).

    Parameters
    ----------
    estimator : bayesgen estimator
        Unfitted or fitted (it is cloned, not changed); ``inference="conjugate"``.
    X, y
        As :meth:`fit <bayesgen.estimators.classifier.GenerativeClassifier.fit>` takes them,
        with the unlabelled rows' labels missing (None/NaN or ``unlabelled_label``).
    grid : sequence of float in [0, 1], default (0, 0.01, 0.03, 0.1, 0.3, 1)
        The λ_u to try. 0 is the supervised fit on the labelled rows alone; keep it in the
        grid so that the choice can fall back to it.
    unlabelled_label : int, str or None
        As ``fit`` takes it.
    feature_names : sequence of str, optional
        As ``fit`` takes them.
    refit : bool, default True
        Fit the chosen λ_u again with the estimator's own settings. False returns the grid's
        fit at it instead: its closed form, exact predictive (``posterior_predictive_proba``)
        and MAP are the same, its posterior holds a single draw.

    Returns
    -------
    UnlabelledWeightChoice

    Raises
    ------
    ValueError
        For an empty grid, a value outside [0, 1], a model without an exact leave-one-out
        predictive, and whatever ``fit`` refuses (it names the parameter).

    Examples
    --------
    The module's docstring fits a grid on a small corpus. The grid is checked before any fit:

    >>> from bayesgen import MultinomialNB
    >>> choose_unlabelled_weight(MultinomialNB(inference="conjugate"), [[1, 0]], [0], grid=[2.0])
    Traceback (most recent call last):
    ...
    ValueError: grid: expected one or more values of unlabelled_weight in [0, 1]; got [2.0].
    """
    values = np.asarray(grid, dtype=np.float64).ravel()
    if values.size == 0 or not np.all((values >= 0.0) & (values <= 1.0)):
        raise ValueError(
            f"grid: expected one or more values of unlabelled_weight in [0, 1]; got {grid!r}."
        )
    fit_options = {
        "feature_names": feature_names,
        "unlabelled_label": unlabelled_label,
    }
    # The score reads the closed form (EM's), never the posterior's draws: the grid's fits draw
    # as little as the estimator allows (λ_u = 1 would otherwise run the full Gibbs sampler).
    scoring = clone(estimator).set_params(
        **{name: value for name, value in _FEWEST_DRAWS.items() if name in estimator.get_params()}
    )
    pointwise, accuracy, fits = [], [], []
    for weight in values:
        fitted = clone(scoring).fit(X, y, unlabelled_weight=float(weight), **fit_options)
        fits.append(fitted)
        log_proba, codes = fitted_loo_log_proba(fitted)
        pointwise.append(log_proba[np.arange(codes.size), codes])
        accuracy.append(float(np.mean(log_proba.argmax(axis=1) == codes)))
    pointwise = np.stack(pointwise)
    elpd = pointwise.sum(axis=1)
    # argmax over the grid sorted ascending: of several equal scores, the smallest λ_u.
    order = np.argsort(values, kind="stable")
    best_index = int(order[np.argmax(elpd[order])])
    best = float(values[best_index])
    chosen = fits[best_index]
    if refit:
        chosen = clone(estimator).fit(X, y, unlabelled_weight=best, **fit_options)
    return UnlabelledWeightChoice(values, elpd, np.asarray(accuracy), pointwise, best, chosen)


def fit_at_chosen_weight(
    estimator,
    X,
    y,
    *,
    grid=DEFAULT_GRID,
    unlabelled_label=None,
    feature_names=None,
    sample_weight=None,
):
    """``estimator.fit(X, y, unlabelled_weight="loo")``: λ_u chosen from ``grid`` by
    :func:`choose_unlabelled_weight` (on clones, a single draw each), then ``estimator``
    itself fitted at the chosen λ_u with its own settings; returns it.

    The fit is that of ``fit(X, y, unlabelled_weight=choice.best)``, and its
    ``closed_form_.attrs`` record the choice: ``unlabelled_weight`` (the λ_u chosen),
    ``unlabelled_weight_rule`` (``"loo"``), ``unlabelled_weight_grid`` and
    ``unlabelled_weight_elpd`` (the λ_u tried and the labelled rows' leave-one-out score of
    each).

    Raises
    ------
    ValueError
        For ``sample_weight`` (a row of weight w counts w times: leaving it out is not
        defined), before any fit; and whatever :func:`choose_unlabelled_weight` refuses.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen import MultinomialNB
    >>> X = np.array([[5, 0], [4, 1], [0, 5], [1, 4], [4, 0], [3, 1], [0, 4], [1, 3]])
    >>> y = np.array([0, 0, 1, 1, -1, -1, -1, -1])
    >>> est = MultinomialNB(alpha=2.0, inference="conjugate", compute_map=False, draws=20,
    ...                     tune=5, chains=1, random_seed=0)
    >>> attrs = est.fit(X, y, unlabelled_label=-1, unlabelled_weight="loo").closed_form_.attrs
    >>> attrs["unlabelled_weight_rule"], attrs["unlabelled_weight"] in DEFAULT_GRID
    ('loo', True)
    """
    if sample_weight is not None:
        raise ValueError(
            "sample_weight: unlabelled_weight='loo' scores each labelled row left out, which "
            "is not defined for weighted rows (a row of weight w counts w times); give "
            "unlabelled_weight a number, or fit without sample_weight."
        )
    fit_options = {"unlabelled_label": unlabelled_label, "feature_names": feature_names}
    choice = choose_unlabelled_weight(estimator, X, y, grid=grid, refit=False, **fit_options)
    estimator.fit(X, y, unlabelled_weight=choice.best, **fit_options)
    estimator.closed_form_.attrs |= {
        "unlabelled_weight_rule": "loo",
        "unlabelled_weight_grid": choice.grid,
        "unlabelled_weight_elpd": choice.elpd,
    }
    return estimator


__all__ = [
    "DEFAULT_GRID",
    "UnlabelledWeightChoice",
    "choose_unlabelled_weight",
    "fit_at_chosen_weight",
    "fitted_loo_log_proba",
    "labelled_loo_log_proba",
]
