"""The hyperparameters a fit derived from its data, at their fitted values: what a refit to
other data keeps so as to have the same prior (simulation-based calibration refits simulated
data sets so).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from bayesgen.families import Family

__all__ = ["FittedHyperparameters", "fitted_hyperparameters"]


class FittedHyperparameters:
    """The estimators' ``fitted_hyperparameters`` method."""

    def fitted_hyperparameters(self) -> dict:
        """The hyperparameters this fit derived from its data, at their fitted values: what
        a refit to other data keeps so as to have the same prior (simulation-based
        calibration refits simulated data sets so).

        λ or ``class_alpha`` chosen by the evidence, a pooled prior mean, the number of
        categories, and a prior scaled to the data (:meth:`Family.fitted_prior
        <bayesgen.families.base.Family.fitted_prior>`).

        Examples
        --------
        >>> from bayesgen import MultinomialNB
        >>> est = MultinomialNB(alpha="evidence", inference="conjugate", compute_map=False)
        >>> est = est.fit([[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]], ["a", "a", "b", "b"])
        >>> sorted(est.fitted_hyperparameters())
        ['alpha']
        """
        self.check_fitted()
        return fitted_hyperparameters(self._family, self.closed_form_, self.get_params())


def fitted_hyperparameters(model: Family, fitted: xr.Dataset, params: dict) -> dict:
    """The hyperparameters ``params`` of an estimator of ``model`` that its fit ``fitted``
    derived from the data, at their fitted values (see
    :meth:`GenerativeClassifier.fitted_hyperparameters`)."""
    frozen = {}
    # alpha="evidence" picks λ from each data set: a refit keeps the λ fitted.
    for name in ("alpha", "class_alpha"):
        if isinstance(params.get(name), str) and name in fitted.attrs:
            value = fitted.attrs[name]  # alpha: one λ, or one per class in class order
            frozen[name] = (
                float(value)
                if np.ndim(value) == 0  # one per class: by label, as the estimators take it
                else dict(zip(fitted["class"].values.tolist(), map(float, value), strict=True))
            )
    # prior_mean="pooled" takes m from each data set: a refit keeps the m fitted.
    if isinstance(params.get("prior_mean"), str) and "prior_weight" in fitted:
        frozen["prior_mean"] = np.asarray(model.prior_mean(fitted)).copy()
    if "n_categories" in params and "n_categories" in fitted:
        frozen["n_categories"] = fitted["n_categories"].values.copy()
    # A prior scaled to the data (GDA's, Gaussian NB's, the Poisson rates'): the one fitted.
    frozen |= model.fitted_prior(fitted, params)
    return frozen
