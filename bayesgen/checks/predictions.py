"""Predictions compared: plug-in add-λ vs MAP vs posterior-mean p(y | x) vs the exact predictive."""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr
from sklearn.metrics import accuracy_score, brier_score_loss, log_loss

from bayesgen.families.expected import class_expected
from bayesgen.families.hyperprior import has_alpha_prior
from bayesgen.maths.likelihood import normalize_log_proba

PLUG_IN_NB = "plug-in add-λ"
PLUG_IN_GDA = "plug-in NIW mean"
MAP_METHOD = "MAP"
POSTERIOR_MEAN = "posterior mean p(y|x)"
EXACT = "exact predictive"


def predictive_probabilities(est, X) -> dict[str, np.ndarray]:
    """p(y = k | x) by every method that applies to ``est``.

    Parameters
    ----------
    est : fitted bayesgen estimator
    X : array-like of shape (n_samples, n_features)

    Returns
    -------
    dict of str to ndarray of shape (n_samples, n_classes)
        ``"plug-in add-λ"`` (``"plug-in NIW mean"`` for GDA): the closed-form estimates plugged
        in; ``"MAP"``: the MAP point plugged in (when ``est.map_`` exists;
        absent where some n + α < 1 leaves the posterior without a mode);
        ``"posterior mean p(y|x)"``: p(y | x, θ) averaged over the draws
        (``est.predict_proba``); ``"exact predictive"``: the parameters integrated out
        analytically (Dirichlet-multinomial, or the add-λ plug-in for Bernoulli and categorical
        features; a multivariate Student-t for conjugate GDA; absent under the LKJ prior).

    Examples
    --------
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, random_seed=0).fit(X, y)
    >>> from bayesgen import predictive_probabilities
    >>> methods = predictive_probabilities(est, [[0, 1, 3]])
    >>> sorted(methods)
    ['exact predictive', 'plug-in add-λ', 'posterior mean p(y|x)']
    >>> methods["exact predictive"].round(3).tolist()
    [[0.054, 0.946]]
    """
    est.check_fitted()
    stats, model_family = est.closed_form_, est.model_
    features = model_family.prediction_features(stats, X)
    plug_in = normalize_log_proba(*model_family.plug_in_log_joint(stats, features))
    out = {_plug_in_name(model_family): plug_in}
    if getattr(est, "map_", None) is not None and not _has_unbounded_density(est):
        out[MAP_METHOD] = _plug_in_proba(est, est.map_, features)
    out[POSTERIOR_MEAN] = est.predict_proba(X)
    if model_family.has_exact_predictive(est.get_params()):  # LKJ: no closed form
        out[EXACT] = normalize_log_proba(model_family.predictive_log_joint(stats, features))
    return out


def _plug_in_name(model_family) -> str:
    """The plug-in's name: add-λ where the model smooths counts, else the NIW posterior mean."""
    return PLUG_IN_NB if model_family.smoothing else PLUG_IN_GDA


def compare_predictions(est, X, y) -> pd.DataFrame:
    """Accuracy, log loss and Brier score of every way of turning the posterior into p(y | x).

    Parameters
    ----------
    est : fitted bayesgen estimator
    X : array-like of shape (n_samples, n_features)
        Held-out features.
    y : array-like of shape (n_samples,)
        Their labels (each one of ``est.classes_``).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``method`` (see :func:`predictive_probabilities`; a method that does not
        apply gives a row of NaN), with columns ``accuracy``, ``log_loss``, ``brier`` (Brier's
        original score, the mean over examples of Σ_k (p_k − [y = k])², between 0 and 2),
        ``max_abs_diff_vs_posterior_mean`` (the largest ``|Δp|`` over examples and classes against
        the posterior-mean p(y | x)) and ``worst_example`` (the row where it occurs).

    Examples
    --------
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, random_seed=0).fit(X, y)
    >>> from bayesgen import compare_predictions
    >>> table = compare_predictions(est, [[0, 1, 3], [4, 1, 0]], ["spam", "ham"])
    >>> table.index.tolist()  # no MAP row values: this fit has no MAP
    ['plug-in add-λ', 'MAP', 'posterior mean p(y|x)', 'exact predictive']
    >>> table.loc["exact predictive", ["accuracy", "log_loss"]].astype(float).round(3).tolist()
    [1.0, 0.037]
    """
    probabilities = predictive_probabilities(est, X)
    classes = est.classes_
    y = np.asarray(y)
    reference = probabilities[POSTERIOR_MEAN]
    plug_in = _plug_in_name(est.model_)
    rows = {}
    for method in (plug_in, MAP_METHOD, POSTERIOR_MEAN, EXACT):
        proba = probabilities.get(method)
        if proba is None:
            rows[method] = dict.fromkeys(_PREDICTION_COLUMNS, np.nan)
            continue
        gap = np.abs(proba - reference).max(axis=1)
        rows[method] = {
            "accuracy": accuracy_score(y, classes[np.argmax(proba, axis=1)]),
            "log_loss": log_loss(y, proba, labels=classes),
            "brier": brier_score_loss(y, proba, labels=classes, scale_by_half=False),
            "max_abs_diff_vs_posterior_mean": float(gap.max()),
            "worst_example": int(np.argmax(gap)),
        }
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=_PREDICTION_COLUMNS)
    frame["worst_example"] = frame["worst_example"].astype("Int64")  # a row number, or <NA>
    frame.index.name = "method"
    return frame


_PREDICTION_COLUMNS = [
    "accuracy",
    "log_loss",
    "brier",
    "max_abs_diff_vs_posterior_mean",
    "worst_example",
]


def _has_unbounded_density(est) -> bool:
    """Whether some n + α < 1 leaves the fit's posterior without a mode (see
    :func:`bayesgen.checks.comparison.compare`)."""
    stats, model_family = est.closed_form_, est.model_
    blocks = [class_expected(stats, float(stats.attrs["class_alpha"]))]
    # Under a hyperprior on λ the MAP is conditional on λ's mode: only the class block counts.
    if model_family.smoothing and not has_alpha_prior(stats):
        alpha = stats.attrs["alpha"]  # one λ, or one per class
        blocks.append(model_family.feature_expected(stats, alpha))
    return any(block.unbounded.any() for block in blocks)


def _plug_in_proba(est, point: xr.Dataset, features) -> np.ndarray:
    """p(y | x) with the parameters of ``point`` (e.g. the MAP) plugged in, for ``features``
    as the model's ``prediction_features`` checked them.

    The point is scored as a single posterior draw, by the family's per-draw likelihood
    (which also clips an optimizer's exact 0 to the smallest normal number).
    """
    joint = est.model_.draw_log_joint(est.closed_form_, features, point.expand_dims("draw"))[0]
    return normalize_log_proba(joint)
