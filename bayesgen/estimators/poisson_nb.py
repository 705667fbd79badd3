"""The Poisson naive Bayes estimator, :class:`PoissonNB`, and the rule of its ``rate_prior``.

The model is :mod:`bayesgen.families.poisson_nb`; fitting, prediction, saving and the checks
are those every estimator shares (:class:`~bayesgen.estimators.classifier.GenerativeClassifier`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import xarray as xr

from bayesgen.estimators.classifier import GenerativeClassifier
from bayesgen.estimators.feature_relevance import FeatureRelevanceMixin
from bayesgen.families.poisson_nb import EVIDENCE, FAMILY
from bayesgen.inference.smoothing import EvidenceBoundaryWarning
from bayesgen.input.alpha import GammaPrior
from bayesgen.input.params import INFERENCE_PARAMS_DOC, FitMismatch, FitRecord
from bayesgen.maths.likelihood import normalize_log_proba

__all__ = ["PoissonNB", "RatePrior"]


@dataclass(frozen=True)
class RatePrior(GammaPrior):
    """The rule of ``rate_prior``: None (Gamma(1, 1 / m̄), scaled to the data), "evidence"
    (the Gamma that maximises the evidence) or a pair (shape, rate) of finite numbers > 0,
    which a model file stores as it was given and the fit records as attrs
    ``rate_prior_shape`` and ``rate_prior_rate`` ("evidence" also as
    ``rate_prior_strength``).

    Examples
    --------
    >>> from bayesgen.estimators.poisson_nb import RatePrior
    >>> from bayesgen.input.params import FitRecord
    >>> record = FitRecord(attrs={"rate_prior_shape": 2.0, "rate_prior_rate": 0.5})
    >>> RatePrior().decode("rate_prior", [2, 0.5], record)
    (2.0, 0.5)
    >>> RatePrior().decode("rate_prior", [2, 1], record)
    Traceback (most recent call last):
        ...
    bayesgen.input.params.FitMismatch: the fit was computed with [2.0, 0.5]
    >>> RatePrior().error("evidence") is None, RatePrior().error("evidense").__name__
    (True, 'ValueError')
    """

    recorded_as: str = "rate_prior"
    expected = f"None, {EVIDENCE!r} or a pair (shape, rate) of finite numbers > 0"

    def error(self, value) -> type[Exception] | None:
        if isinstance(value, str):
            return None if value == EVIDENCE else ValueError
        return super().error(value)

    def decode(self, name: str, stored, record: FitRecord):
        if isinstance(stored, str) and stored == EVIDENCE:
            # The closed form holds the Gamma the evidence chose; it must say it chose it.
            if record.attrs.get("rate_prior_strength") != EVIDENCE:
                raise FitMismatch(None)
            return stored
        return super().decode(name, stored, record)


class PoissonNB(FeatureRelevanceMixin, GenerativeClassifier):
    __doc__ = (
        """Bayesian Poisson naive Bayes for counts: x_j | y = k ~ Poisson(λ_kj).

    π ~ Dirichlet(class_alpha) and every rate λ_kj ~ Gamma(shape, rate) of ``rate_prior``,
    independently. The posterior of λ_kj is Gamma(shape + S_kj, rate + N_k), S_kj the sum of
    feature j over the N_k rows of class k: its mean (shape + S_kj) / (rate + N_k) tends to the
    maximum-likelihood estimate, the class mean count S_kj / N_k. A new row's counts are
    negative binomial given the data (:meth:`posterior_predictive_proba`); the evidence
    (:func:`bayesgen.closed_form.log_evidence`) and leave-one-out
    (:func:`bayesgen.loo_proba`) are exact. See :mod:`bayesgen.families.poisson_nb`.

    Missing entries (NaN, None or ``<NA>`` in a dense X) are integrated out, missing at
    random: in ``fit`` each cell's sum and exposure count only the rows of its class where the
    feature is observed (``closed_form_["cell_count"]``), so λ_kj | data ~
    Gamma(shape + S_kj, rate + n_kj) with n_kj those rows; every closed form, the evidence,
    leave-one-out, the PyMC model and the simulations (which keep the rows' missing entries)
    hold per cell. In :meth:`predict_proba`, :meth:`posterior_predictive_proba` and the
    intervals a missing feature's factor drops out: a row with every feature missing gets
    the class probabilities alone. Data without a missing entry fit exactly as before (no
    ``cell_count``). A sparse X has no missing entries (its unstored entries are zeros).

    Parameters
    ----------
    class_alpha : float, default 1.0
        Dirichlet concentration a > 0 of the class probabilities.
    rate_prior : (shape, rate) or None, default None
        The Gamma(shape, rate) prior of every rate (rate an inverse scale: mean shape / rate).
        None: Gamma(1, 1 / m̄), m̄ the mean count of the training data per row and feature,
        a weak prior scaled to the data (one count added to each class's sum, spread over
        1 / m̄ rows: the prior mean and SD of every rate are m̄); Gamma(1, 1) where the data
        hold no count. ``rate_prior_`` holds the prior of the fit.

        "evidence": the one Gamma(shape, rate) for every rate that maximises the evidence
        p(X | y, shape, rate), the rates integrated out
        (:func:`bayesgen.maths.prior_strength.gamma_poisson_strength`): each feature's class
        total is then negative binomial, and this fits that negative binomial to the class
        totals by maximum likelihood. Rates alike over classes and features give a large
        shape (strong pooling), rates far apart a small one. One prior for all the rates,
        as the model has it, not one per feature: the prior mean is where every rate is
        pulled, so features of very different levels make the evidence weaken the prior
        rather than pull their rates together. The search reads the statistics only
        (``partial_fit`` and Dask choose as one fit does); ``rate_prior_`` and the closed
        form's attrs hold the prior chosen. Where the shape would grow beyond 1e6 (every
        rate alike) the fit takes the bound with an
        :class:`~bayesgen.inference.smoothing.EvidenceBoundaryWarning`; data without any
        count are refused."""
        + INFERENCE_PARAMS_DOC
        + """
    Attributes
    ----------
    classes_, n_features_in_, feature_names_in_
        As in scikit-learn.
    idata_, posterior_, map_
        As in :class:`~bayesgen.MultinomialNB`.
    closed_form_ : xarray.Dataset
        The sufficient statistics (``class_count``, ``feature_count``,
        ``feature_log_factorial``; ``cell_count``, each cell's observed rows, where X had
        missing entries), ``class_prob`` and ``feature_rate`` (posterior means) and their
        MLEs.
    class_count_ : ndarray of shape (n_classes,)
        Rows (total weight) per class.
    feature_count_ : ndarray of shape (n_classes, n_features)
        Each feature's sum over each class's rows.
    feature_rate_ : ndarray of shape (n_classes, n_features)
        Posterior means of the rates.
    class_log_prior_ : ndarray of shape (n_classes,)
        Log of the posterior mean of π.
    rate_prior_ : tuple of float
        The (shape, rate) of the fit's Gamma prior.

    Examples
    --------
    Counts of three kinds of event per day, on quiet and busy days:

    >>> from bayesgen import PoissonNB
    >>> X = [[1, 0, 2], [0, 1, 1], [2, 0, 1], [5, 4, 6], [7, 3, 4], [6, 5, 8]]
    >>> y = ["quiet", "quiet", "quiet", "busy", "busy", "busy"]
    >>> clf = PoissonNB(inference="conjugate", compute_map=False, random_seed=0).fit(X, y)
    >>> clf.predict([[1, 1, 1], [6, 4, 5]]).tolist()
    ['quiet', 'busy']
    >>> clf.closed_form_["feature_rate_mle"].values.round(2).tolist()  # class mean counts
    [[6.0, 4.0, 6.0], [1.0, 0.33, 1.33]]
    >>> clf.rate_prior_  # Gamma(1, 1 / m̄), m̄ = 56 counts / (6 rows × 3 features)
    (1.0, 0.3214285714285714)

    The evidence's prior: the busy days' rates are about five times the quiet days', so the
    evidence keeps the prior weak, a shape of one and a half counts.

    >>> chosen = PoissonNB(rate_prior="evidence", inference="conjugate", compute_map=False)
    >>> [round(value, 3) for value in chosen.fit(X, y).rate_prior_]
    [1.578, 0.507]
    """
    )

    _family = FAMILY
    _parameter_rules: ClassVar[dict] = {"rate_prior": RatePrior()}

    def __init__(
        self,
        class_alpha=1.0,
        *,
        rate_prior=None,
        inference="nuts",
        draws=1000,
        tune=1000,
        chains=4,
        cores=None,
        random_seed=None,
        nuts_sampler="pymc",
        target_accept=0.9,
        compute_map=True,
        prior_draws=500,
        dtype="float64",
        progressbar="auto",
    ):
        self.class_alpha = class_alpha
        self.rate_prior = rate_prior
        self.inference = inference
        self.draws = draws
        self.tune = tune
        self.chains = chains
        self.cores = cores
        self.random_seed = random_seed
        self.nuts_sampler = nuts_sampler
        self.target_accept = target_accept
        self.compute_map = compute_map
        self.prior_draws = prior_draws
        self.dtype = dtype
        self.progressbar = progressbar

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True  # counts
        tags.input_tags.allow_nan = True  # a missing entry's factor drops out
        # As scikit-learn's naive Bayes: the independence assumption costs accuracy on the
        # correlated features of its generic test data.
        tags.classifier_tags.poor_score = True
        return tags

    def _prior_options(self) -> dict:
        return {"class_alpha": self.class_alpha, "rate_prior": self.rate_prior}

    def _estimates(self, statistics: xr.Dataset) -> xr.Dataset:
        """The closed form (see the base class), with a warning where
        ``rate_prior="evidence"`` took a bound of its search."""
        estimates = super()._estimates(statistics)
        bound = estimates.attrs.get("rate_prior_evidence_bound")
        if bound:
            warnings.warn(
                f"rate_prior='evidence': the evidence still increases beyond the bound of its "
                f"search: {bound}. The fit takes the bound; pass rate_prior=(shape, rate) to "
                "choose it yourself.",
                EvidenceBoundaryWarning,
                skip_file_prefixes=(str(Path(__file__).parents[1]),),
            )
        return estimates

    def posterior_predictive_proba(self, X) -> np.ndarray:
        """Exact posterior predictive p(y | x, data): every rate integrated out, each class's
        counts negative binomial
        (:meth:`~bayesgen.families.poisson_nb.PoissonFamily.predictive_log_joint`). Differs
        from :meth:`predict_proba`, which averages p(y | x, λ) over posterior draws.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
            Counts, with the columns of the fit; NaN (dense X) where an entry is missing,
            whose factor drops out.
        """
        self.check_fitted()
        self._check_n_features(X)
        X = self._family.prediction_features(self.closed_form_, X)
        return normalize_log_proba(self._family.predictive_log_joint(self.closed_form_, X))

    def _set_point_attributes(self, means) -> None:
        attrs = self.closed_form_.attrs
        self.rate_prior_ = (float(attrs["rate_prior_shape"]), float(attrs["rate_prior_rate"]))
        self.feature_count_ = self.closed_form_["feature_count"].values
        self.feature_rate_ = means["feature_rate"].values
