"""Leave-one-out predictions of the label, and models ranked by them.

For a fitted generative classifier and each training row i, :func:`loo_proba` gives

    p(y = k | x_i, D_{-i}) = p(x_i, y = k | D_{-i}) / Σ_k' p(x_i, y = k' | D_{-i}),

the Bayesian prediction of row i's label from its features by the model fitted to the other
rows D_{-i}. Two ways to get it:

* **exact**, for the conjugate models (naive Bayes; GDA and QDA with the normal-inverse-Wishart
  prior), whatever inference drew the posterior: the family's
  :meth:`~bayesgen.families.base.Family.loo_log_joint` takes row i out of the sufficient
  statistics, for all rows at once, without refitting (under a hyperprior on the naive Bayes
  λ, λ integrated out over p(λ | D without row i) by quadrature,
  :func:`bayesgen.families.hyperprior.loo_log_joint`);
* **plug-in**, for a model fitted by a point estimate (the Dirichlet compound multinomial's
  (s, m)): the point fit refitted without row i (a short Newton run from the full fit), row
  i scored exactly given it (:mod:`bayesgen.maths.dirichlet_multinomial_loo`); its parameters
  are not integrated out;
* **PSIS**, for the others (GDA with the LKJ prior), or asked for: the posterior given
  D_{-i} and x_i is p(θ | D) / p(y_i | x_i, θ) up to a constant, so with importance weights
  w_s ∝ 1 / p(y_i | x_i, θ_s), Pareto-smoothed as ArviZ's ``psislw`` does
  (:func:`bayesgen.maths.psis.psis_log_weights`, all rows at once),
  p(y = k | x_i, D_{-i}) ≈ Σ_s w_s p(y = k | x_i, θ_s). Each row's Pareto k says how far the
  estimate can be trusted (above min(0.7, 1 − 1 / log₁₀ S) it cannot).

:func:`compare_models` ranks models by the leave-one-out log score of the labels,
elpd_loo = Σ_i log p(y_i | x_i, D_{-i}). Unlike ``az.compare`` on the joint log-likelihood,
it compares models of different representations of x (multinomial counts against Bernoulli
presence), because every model scores the same thing: the labels given the rows.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr
from scipy.special import logsumexp
from sklearn.exceptions import NotFittedError

from bayesgen.checks.parameter_table import parameter_draws
from bayesgen.estimators.classifier import GenerativeClassifier
from bayesgen.inference.observed import draw_chunks
from bayesgen.maths.diagnostics import ess_mean
from bayesgen.maths.likelihood import log_sum_exp
from bayesgen.maths.psis import psis_log_weights, psis_loo

METHODS = ("auto", "exact", "plug-in", "psis")
#: Rows whose log p(y_i | x_i, θ) spans at most this over the draws get equal PSIS weights.
_EQUAL_LOG_LIKELIHOOD = 1e-12
#: Columns of :func:`compare_models`, in order.
COMPARE_COLUMNS = (
    "elpd_loo",
    "se",
    "elpd_diff",
    "se_diff",
    "accuracy_loo",
    "method",
    "pareto_k_max",
)


@dataclass(frozen=True)
class LeaveOneOut:
    """The leave-one-out predictions of a fit's training labels.

    Attributes
    ----------
    log_proba : numpy.ndarray of shape (n_samples, n_classes)
        log p(y = k | x_i, D without row i).
    y_codes : numpy.ndarray of int, shape (n_samples,)
        The training labels, as indices into the classes.
    method : {"exact", "plug-in", "psis"}
    pareto_k : numpy.ndarray of shape (n_samples,)
        PSIS's Pareto k of each row; NaN for the exact and plug-in methods.
    """

    log_proba: np.ndarray
    y_codes: np.ndarray
    method: str
    pareto_k: np.ndarray

    @property
    def proba(self) -> np.ndarray:
        """p(y = k | x_i, D without row i), shape (n_samples, n_classes)."""
        return np.exp(self.log_proba)

    @property
    def pointwise(self) -> np.ndarray:
        """log p(y_i | x_i, D without row i) of each row: its leave-one-out log score."""
        return self.log_proba[np.arange(self.y_codes.size), self.y_codes]

    @property
    def elpd(self) -> float:
        """elpd_loo = Σ_i log p(y_i | x_i, D_{-i})."""
        return float(self.pointwise.sum())

    @property
    def se(self) -> float:
        """Standard error of :attr:`elpd`, sqrt(n · Var_i(pointwise))."""
        return _sum_se(self.pointwise)

    @property
    def pareto_k_max(self) -> float:
        """The largest Pareto k over the rows whose k ArviZ could estimate; NaN for none
        (and for the exact and plug-in methods)."""
        return _largest_estimated(self.pareto_k)

    @property
    def accuracy(self) -> float:
        """Share of rows whose most probable leave-one-out class is their own."""
        return float(np.mean(np.argmax(self.log_proba, axis=1) == self.y_codes))


def loo_proba(est, *, method: str = "auto") -> np.ndarray:
    """Leave-one-out class probabilities of the training rows.

    For each training row i, p(y = k | x_i, D_{-i}) = p(x_i, y = k | D_{-i}) /
    Σ_k' p(x_i, y = k' | D_{-i}): the label predicted from row i's features by the model
    fitted to the other rows. See :func:`leave_one_out` for the methods.

    Parameters
    ----------
    est : bayesgen estimator
        Fitted (its ``idata_`` holds the training rows).
    method : {"auto", "exact", "plug-in", "psis"}, default "auto"
        "exact" takes row i out of the conjugate posterior; "plug-in" refits a point fit
        without row i; "psis" reweights the posterior draws; "auto" is exact where the model
        has a closed form, plug-in where it has a point fit, else PSIS.

    Returns
    -------
    numpy.ndarray of shape (n_samples, n_classes)
        Columns in the order of ``est.classes_``.

    Examples
    --------
    >>> import bayesgen
    >>> X = [[2, 0, 1], [3, 1, 0], [0, 2, 3], [1, 3, 2], [2, 1, 0], [0, 1, 4]]
    >>> y = ["ham", "ham", "spam", "spam", "ham", "spam"]
    >>> est = bayesgen.MultinomialNB(inference="conjugate", compute_map=False, random_seed=0)
    >>> proba = bayesgen.loo_proba(est.fit(X, y))
    >>> proba.shape, bool((proba.argmax(axis=1) == [0, 0, 1, 1, 0, 1]).all())
    ((6, 2), True)
    """
    return leave_one_out(est, method=method).proba


def leave_one_out(est, *, method: str = "auto") -> LeaveOneOut:
    """Leave-one-out predictions of every training label, with how they were computed.

    Parameters
    ----------
    est : bayesgen estimator
        Fitted.
    method : {"auto", "exact", "plug-in", "psis"}, default "auto"
        "exact": log p(x_i, y = k | D_{-i}) from the family's conjugate posterior less row i
        (:meth:`~bayesgen.families.base.Family.loo_log_joint`), softmaxed over k in float64.
        The same for NUTS and conjugate draws: the model, so the posterior, is the same.
        "plug-in": the same, with the point fit of a model without a conjugate posterior
        (the Dirichlet compound multinomial's (s, m); see
        :meth:`~bayesgen.families.base.Family.loo_kind`) refitted without row i and held
        fixed there.
        "psis": the posterior draws reweighted by w_s ∝ 1 / p(y_i | x_i, θ_s), the ratio of
        the posterior given D_{-i} and x_i to the one given D, Pareto-smoothed;
        p(y = k | x_i, D_{-i}) ≈ Σ_s w_s p(y = k | x_i, θ_s). "auto": "exact" where the
        model has a closed form, "plug-in" where its leave-one-out refits a point fit, else
        "psis".

    Returns
    -------
    LeaveOneOut

    Raises
    ------
    sklearn.exceptions.NotFittedError
        For an unfitted estimator.
    ValueError
        For an unknown method, "exact" on a model without a closed form or "plug-in" on one
        without a point fit (or the other way round), fewer than two
        training rows, a row no class can explain (non-finite log-likelihoods), a fit with
        ``sample_weight`` or one by ``partial_fit`` (which keeps no rows).

    Warns
    -----
    UserWarning
        "psis" with rows whose Pareto k is too large for a reliable estimate.

    Examples
    --------
    >>> import bayesgen
    >>> from bayesgen.checks.loo import leave_one_out
    >>> X = [[2, 0, 1], [3, 1, 0], [0, 2, 3], [1, 3, 2], [2, 1, 0], [0, 1, 4]]
    >>> y = ["ham", "ham", "spam", "spam", "ham", "spam"]
    >>> est = bayesgen.MultinomialNB(inference="conjugate", compute_map=False, random_seed=0)
    >>> loo = leave_one_out(est.fit(X, y))
    >>> loo.method, loo.proba.shape, loo.y_codes.tolist()
    ('exact', (6, 2), [0, 0, 1, 1, 0, 1])
    """
    if method not in METHODS:
        raise ValueError(f"method: expected one of {list(METHODS)}; got {method!r}.")
    est.check_fitted()
    X, y_codes = est.training_rows()
    if est.training_weights() is not None:
        # Row i stands for w_i rows: neither leaving it out whole nor the unweighted
        # log_likelihood rows that PSIS reweights by answer "one row left out".
        raise ValueError(
            "est: leave-one-out is not defined for a fit with sample_weight (a row of weight "
            "w counts w times); refit without weights, repeating rows for integer weights."
        )
    y_codes = np.asarray(y_codes, dtype=np.int64)
    if y_codes.size < 2:
        raise ValueError(
            f"est: leaving one row out needs at least 2 training rows; got {y_codes.size}."
        )
    if method != "psis":
        model_family = est.model_
        kind = model_family.loo_kind(est.closed_form_)
        if method not in ("auto", kind):
            raise ValueError(
                f"method: {method!r} does not apply to {type(est).__name__}, whose "
                f"leave-one-out is {kind!r}; use {kind!r}, 'psis' or 'auto'."
            )
        try:
            joint = model_family.loo_log_joint(
                est.closed_form_, X, y_codes, options=est.get_params()
            )
        except NotImplementedError as reason:
            if method == "exact":
                raise ValueError(
                    f"method: 'exact' needs a closed-form posterior ({reason}); use 'psis' "
                    "or 'auto'."
                ) from None
        else:
            nan = np.full(y_codes.size, np.nan)
            return LeaveOneOut(_log_softmax(joint), y_codes, kind, nan)
    log_proba, pareto_k = _psis_log_proba(est, X, y_codes)
    return LeaveOneOut(log_proba, y_codes, "psis", pareto_k)


def joint_loo(est):
    """PSIS leave-one-out of the training rows' joint log-likelihood log p(x_i, y_i | θ).

    The numbers of ``arviz.loo(est.idata_, var_name="y", pointwise=True)`` (equal to 1e-10
    for a float64 log-likelihood, tested; a float32 one is computed in float64), computed for
    all rows at once (:func:`bayesgen.maths.psis.psis_loo`) where ArviZ loops over the rows
    in Python, twice. Unlike ``arviz.loo`` it raises no warning about large Pareto k: the
    result's ``warning`` says whether some row's k is above ``good_k``.

    This scores the whole row, features and label, so it compares models of the same
    features only; the label's own leave-one-out score is :func:`leave_one_out`.

    Parameters
    ----------
    est : fitted bayesgen estimator
        With its pointwise log-likelihood (``est.idata_["log_likelihood"]["y"]``).

    Returns
    -------
    arviz_stats.ELPDDataLOO
        ``elpd``, ``se``, ``p``, ``good_k`` = min(1 − 1 / log₁₀ S, 0.7), ``warning``, and
        the pointwise ``elpd_i``, ``pareto_k`` and ``log_weights``, as ``arviz.loo`` gives
        them; the relative efficiency r_eff for the tail length is ArviZ's (the mean
        ``arviz.ess(method="mean")`` of the posterior variables over the draws).

    Raises
    ------
    ValueError
        For a fit without its pointwise log-likelihood.

    Examples
    --------
    >>> from bayesgen import MultinomialNB
    >>> from bayesgen.checks.loo import joint_loo
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", draws=500, random_seed=0).fit(X, y)
    >>> result = joint_loo(est)
    >>> result.n_data_points, result.pareto_k.shape, round(result.good_k, 2)
    (4, (4,), 0.7)
    """
    import arviz as az  # heavy: ArviZ

    est.check_fitted()
    if "log_likelihood" not in est.idata_.children or "y" not in est.idata_["log_likelihood"]:
        raise ValueError(
            "joint_loo: this fit holds no pointwise log-likelihood of its training rows "
            "(est.idata_['log_likelihood']['y']); model files written before it was stored "
            "lack it. Refit the model to draw it."
        )
    log_lik = est.idata_["log_likelihood"]["y"]
    sample_dims = ["chain", "draw"]
    row_dims = [dim for dim in log_lik.dims if dim not in sample_dims]
    ordered = log_lik.transpose(*row_dims, *sample_dims)
    n_samples = log_lik.sizes["chain"] * log_lik.sizes["draw"]
    rows = ordered.values.reshape(-1, n_samples)
    elpd_i, p_loo_i, pareto_k, log_weights = psis_loo(rows, _posterior_relative_ess(est))

    def per_row(values: np.ndarray) -> xr.DataArray:
        row_shape = ordered.shape[: len(row_dims)]
        coords = {dim: ordered.coords[dim] for dim in row_dims if dim in ordered.coords}
        return xr.DataArray(values.reshape(row_shape), dims=row_dims, coords=coords)

    good_k = float(min(1 - 1 / np.log10(n_samples), 0.7)) if n_samples > 1 else 0.7
    se = np.sqrt(elpd_i.size * np.var(elpd_i, ddof=1)) if elpd_i.size > 1 else 0.0
    return az.ELPDDataLOO(
        elpd=float(elpd_i.sum()),
        se=float(se),
        p=float(p_loo_i.sum()),
        n_samples=n_samples,
        n_data_points=elpd_i.size,
        scale="log",
        warning=bool(np.any(pareto_k > good_k)),
        good_k=good_k,
        elpd_i=per_row(elpd_i),
        pareto_k=per_row(pareto_k),
        approx_posterior=False,
        log_weights=xr.DataArray(
            log_weights.reshape(ordered.shape), dims=ordered.dims, coords=ordered.coords
        ),
    )


def _posterior_relative_ess(est) -> float:
    """ArviZ's r_eff for ``loo``: the mean ``ess(method="mean")`` of every posterior value
    over the number of draws (1 for one chain)."""
    posterior = est.idata_["posterior"].to_dataset()
    n_chains, n_draws = posterior.sizes["chain"], posterior.sizes["draw"]
    if n_chains == 1:
        return 1.0
    ess = [ess_mean(parameter_draws(variable)) for variable in posterior.data_vars.values()]
    return float(np.concatenate(ess).mean() / (n_chains * n_draws))


def compare_models(models: Mapping[str, object], *, method: str = "auto") -> pd.DataFrame:
    """Rank models by the leave-one-out log score of the training labels.

    elpd_loo = Σ_i log p(y_i | x_i, D_{-i}), with p(y_i | x_i, D_{-i}) from
    :func:`leave_one_out`. Every model predicts the same labels from the same rows, so the
    score compares models of different representations of x (the counts of a multinomial
    model against the presence of a Bernoulli one), which the joint log-likelihood of
    ``az.compare`` cannot: its x differ.

    Parameters
    ----------
    models : dict of str to bayesgen estimator
        Fitted estimators, by name, all fitted on the same labelled rows (same number of rows,
        same labels in the same order).
    method : {"auto", "exact", "plug-in", "psis"}, default "auto"
        As for :func:`leave_one_out`, for every model.

    Returns
    -------
    pandas.DataFrame
        One row per model (index ``model``), best first, with columns:

        * ``elpd_loo``: Σ_i log p(y_i | x_i, D_{-i});
        * ``se``: its standard error, sqrt(n · Var_i of the pointwise scores);
        * ``elpd_diff``: elpd_loo of the best model minus this one's (0 for the best);
        * ``se_diff``: the standard error of that difference, sqrt(n · Var_i of the
          pointwise differences) (0 for the best);
        * ``accuracy_loo``: share of rows whose most probable leave-one-out class is theirs;
        * ``method``: "exact", "plug-in" or "psis";
        * ``pareto_k_max``: the largest Pareto k over the rows whose k ArviZ could estimate
          (it gives NaN for a tail too short or too flat to fit; NaN for "exact" and "plug-in").

    Raises
    ------
    TypeError
        For ``models`` that is not a dict of bayesgen estimators.
    ValueError
        For an empty dict, unfitted models (``NotFittedError``, a ValueError), or models not
        fitted on the same labelled rows; the message names the models.

    Examples
    --------
    >>> import bayesgen
    >>> X = [[2, 0, 1], [3, 1, 0], [0, 2, 3], [1, 3, 2], [2, 1, 0], [0, 1, 4]]
    >>> y = ["ham", "ham", "spam", "spam", "ham", "spam"]
    >>> options = {"inference": "conjugate", "compute_map": False, "random_seed": 0}
    >>> models = {
    ...     "multinomial": bayesgen.MultinomialNB(**options).fit(X, y),
    ...     "bernoulli": bayesgen.BernoulliNB(binarize=0.0, **options).fit(X, y),
    ... }
    >>> table = bayesgen.compare_models(models)
    >>> list(table.columns)
    ['elpd_loo', 'se', 'elpd_diff', 'se_diff', 'accuracy_loo', 'method', 'pareto_k_max']
    """
    if not isinstance(models, Mapping):
        raise TypeError(
            "models: expected a dict of name -> fitted bayesgen estimator; got "
            f"{type(models).__name__}."
        )
    if not models:
        raise ValueError(
            "models: expected a dict of name -> fitted bayesgen estimator; got an empty dict."
        )
    _check_fitted(models)
    results = {str(name): leave_one_out(est, method=method) for name, est in models.items()}
    labels = {
        name: np.asarray(models[key].classes_)[results[name].y_codes]
        for name, key in zip(results, models, strict=True)
    }
    _check_same_rows(labels)
    names = sorted(results, key=lambda name: -results[name].elpd)
    best = results[names[0]].pointwise
    rows = []
    for name in names:
        result = results[name]
        difference = best - result.pointwise
        rows.append(
            {
                "elpd_loo": result.elpd,
                "se": result.se,
                "elpd_diff": float(difference.sum()),
                "se_diff": _sum_se(difference),
                "accuracy_loo": result.accuracy,
                "method": result.method,
                "pareto_k_max": result.pareto_k_max,
            }
        )
    table = pd.DataFrame(rows, index=pd.Index(names, name="model"), columns=COMPARE_COLUMNS)
    # The best model's differences are exactly 0, not the rounding of a sum.
    table.iloc[0, table.columns.get_indexer(["elpd_diff", "se_diff"])] = 0.0
    return table


# --------------------------------------------------------------------------------------------
# Private helpers.


def _sum_se(pointwise: np.ndarray) -> float:
    """sqrt(n · Var(pointwise)): the standard error of a sum of n pointwise terms."""
    return float(np.sqrt(pointwise.size * np.var(pointwise)))


def _log_softmax(joint: np.ndarray) -> np.ndarray:
    """log p(y = k | x_i) from log p(x_i, y = k), refusing rows no class explains."""
    best = joint.max(axis=1)  # NaN propagates
    bad = ~np.isfinite(best)
    if np.any(bad):
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"X: training row {row} has no finite leave-one-out log-likelihood under any "
            "class (its values overflow float64, or the prior gives it probability 0)."
        )
    return joint - log_sum_exp(joint)


def _psis_log_proba(est, X, y_codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log Σ_s w_s p(y = k | x_i, θ_s) with Pareto-smoothed w_s ∝ 1 / p(y_i | x_i, θ_s).

    Two passes over blocks of draws, so that no (draw, row, class) array of the whole
    posterior is held: the first gets log p(y_i | x_i, θ_s) for the weights, the second sums
    the weighted class probabilities in log space.
    """
    model_family = est.model_
    posterior = est.idata_["posterior"].to_dataset()
    n_chains, n_draws = posterior.sizes["chain"], posterior.sizes["draw"]
    n_rows, n_classes = y_codes.size, est.closed_form_.sizes["class"]
    rows = np.arange(n_rows)

    def log_conditional(draws: xr.Dataset) -> np.ndarray:
        joint = model_family.draw_log_joint(est.closed_form_, X, draws)
        return joint - log_sum_exp(joint)  # (draw, row, class)

    own = np.empty((n_chains, n_draws, n_rows))
    for chain, block, draws in draw_chunks(posterior, n_rows * n_classes):
        own[chain, block] = log_conditional(draws)[:, rows, y_codes]
    # A row whose p(y_i | x_i, θ) is the same in every draw to 1e-12 (1 to the last digit,
    # for a plainly classified row) has equal weights to 1e-12: its estimate is the posterior
    # average (k = 0). ArviZ's Pareto fit refuses a tail of equal values, so only the others
    # go to it.
    varies = np.ptp(own, axis=(0, 1)) > _EQUAL_LOG_LIKELIHOOD
    log_weights = np.full(own.shape, -np.log(n_chains * n_draws))
    pareto_k = np.zeros(n_rows)
    if varies.any():
        log_lik = np.moveaxis(own[:, :, varies], -1, 0)  # (row, chain, draw)
        rows = log_lik.reshape(-1, n_chains * n_draws)
        smoothed, k = psis_log_weights(-rows, _relative_ess(log_lik))
        log_weights[:, :, varies] = np.moveaxis(smoothed.reshape(-1, n_chains, n_draws), 0, -1)
        pareto_k[varies] = k
    total = np.full((n_rows, n_classes), -np.inf)
    for chain, block, draws in draw_chunks(posterior, n_rows * n_classes):
        weighted = log_weights[chain, block][:, :, None] + log_conditional(draws)
        total = np.logaddexp(total, logsumexp(weighted, axis=0))
    _warn_pareto_k(pareto_k, n_chains * n_draws)
    return _log_softmax(total), pareto_k


def _largest_estimated(pareto_k: np.ndarray) -> float:
    """The largest Pareto k that is not NaN (NaN where none is): one row whose tail ArviZ
    could not fit must not hide every other row's k."""
    estimated = pareto_k[~np.isnan(pareto_k)]
    return float(estimated.max()) if estimated.size else float("nan")


def _relative_ess(log_lik: np.ndarray) -> float:
    """The relative efficiency of the draws for PSIS's tail length: the mean over rows of the
    effective sample size of p(y_i | x_i, θ) over the number of draws (1 for a row whose
    probability does not vary, as for independent draws); ``log_lik`` is (row, chain, draw)."""
    n_samples = log_lik.shape[1] * log_lik.shape[2]
    ess = ess_mean(np.exp(log_lik)) / n_samples
    return float(np.mean(np.where(np.isfinite(ess), ess, 1.0)))


def _warn_pareto_k(pareto_k: np.ndarray, n_samples: int) -> None:
    """Warn about rows whose Pareto k exceeds min(0.7, 1 − 1 / log₁₀ S) (ArviZ's rule)."""
    threshold = min(0.7, 1.0 - 1.0 / np.log10(n_samples))
    bad = np.flatnonzero(pareto_k > threshold)
    if bad.size:
        warnings.warn(
            f"loo_proba: {bad.size} of {pareto_k.size} rows have Pareto k above "
            f"{threshold:.2f} (first: row {int(bad[0])}, k = {pareto_k[bad[0]]:.2f}), so PSIS "
            "cannot estimate their leave-one-out probabilities reliably; refit without those "
            "rows, or draw more.",
            UserWarning,
            stacklevel=4,
        )


def _check_fitted(models: Mapping[str, object]) -> None:
    """Refuse non-estimators (TypeError) and unfitted estimators (NotFittedError), naming
    them."""
    wrong = {
        str(name): type(est).__name__
        for name, est in models.items()
        if not isinstance(est, GenerativeClassifier)
    }
    if wrong:
        raise TypeError(f"models: expected fitted bayesgen estimators; got {wrong} (name: type).")
    unfitted = [str(name) for name, est in models.items() if not hasattr(est, "idata_")]
    if unfitted:
        raise NotFittedError(
            f"models: every model must be fitted; {unfitted} are not. Call fit(X, y) on the "
            "same rows first."
        )


def _check_same_rows(labels: dict[str, np.ndarray]) -> None:
    """Refuse models fitted on other labelled rows: their scores would not be comparable."""
    first, reference = next(iter(labels.items()))
    for name, values in labels.items():
        if values.size != reference.size:
            raise ValueError(
                f"models: all must be fitted on the same labelled rows; {name!r} has "
                f"{values.size} rows, {first!r} has {reference.size}."
            )
        differ = np.flatnonzero(values.astype(object) != reference.astype(object))
        if differ.size:
            row = int(differ[0])
            raise ValueError(
                f"models: all must be fitted on the same labelled rows; {name!r} and "
                f"{first!r} have different labels ({differ.size} rows, first row {row}: "
                f"{values[row]!r} against {reference[row]!r})."
            )
