"""GDA's and QDA's fit of rows with missing entries: their normal-inverse-Wishart posterior is
then not conjugate, so ``inference="conjugate"`` draws it by Gibbs sampling and
``inference="nuts"`` samples it with the missing entries latent, both from EM's MAP
(:mod:`bayesgen.inference.gibbs`). Rows without a missing entry take the usual fit.
"""

from __future__ import annotations

from bayesgen.estimators.classifier import GenerativeClassifier
from bayesgen.inference import gibbs
from bayesgen.input.labels import unlabelled_rows

__all__ = ["MissingEntriesFit"]


class MissingEntriesFit(GenerativeClassifier):
    """The fit of the Gaussian models (GDA, QDA), with missing entries where X has NaN.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen import GaussianDiscriminantAnalysis
    >>> X = np.array([[0.0, 1.0], [0.5, np.nan], [1.0, 0.0], [3.0, 4.0], [np.nan, 3.5],
    ...               [4.0, 3.0], [0.2, 0.8], [3.4, 3.9]])
    >>> est = GaussianDiscriminantAnalysis(inference="conjugate", draws=50, tune=10,
    ...                                    chains=2, random_seed=0)
    >>> est.fit(X, ["a", "a", "a", "b", "b", "b", "a", "b"]).closed_form_.attrs["missing_fit"]
    'gibbs'
    """

    def fit(
        self,
        X,
        y,
        *,
        feature_names=None,
        sample_weight=None,
        unlabelled_label=None,
        unlabelled_weight=1.0,
    ):
        if not gibbs.has_missing_entries(X):
            return super().fit(
                X,
                y,
                feature_names=feature_names,
                sample_weight=sample_weight,
                unlabelled_label=unlabelled_label,
                unlabelled_weight=unlabelled_weight,
            )
        if unlabelled_rows(y, unlabelled_label=unlabelled_label).any():
            raise ValueError(
                f"y: {type(self).__name__} fits rows with missing entries (NaN in X) or "
                "unlabelled rows, not both in one fit; got both. Drop the unlabelled rows, or "
                "the rows with missing entries, or impute X first."
            )
        self._validate_params()
        if self.inference == "conjugate":
            stats, idata, map_point = gibbs.gibbs_fit(
                self._family, X, y, **self._prior_options(), feature_names=feature_names,
                sample_weight=sample_weight, draws=self.draws, tune=self.tune,
                chains=self.chains, random_seed=self.random_seed,
                prior_draws=self.prior_draws, dtype=self.dtype,
            )  # fmt: skip
        else:
            self._check_missing_entries_nuts()
            self._check_nuts_weights(sample_weight)
            stats, idata, map_point = gibbs.nuts_fit(
                self._family, X, y, **self._prior_options(),
                model_options=self._model_options(), feature_names=feature_names,
                sample_weight=sample_weight, draws=self.draws, tune=self.tune,
                chains=self.chains, cores=self.cores, random_seed=self.random_seed,
                nuts_sampler=self.nuts_sampler, target_accept=self.target_accept,
                prior_draws=self.prior_draws, exact_prior=self._has_conjugate_prior(),
                dtype=self.dtype, progressbar=self.progressbar,
            )  # fmt: skip
            self._warn_unconverged(idata)
        self._add_observed(idata, stats, X, y, sample_weight)
        return self.set_posterior(stats, idata, map_point if self.compute_map else None)

    fit.__doc__ = GenerativeClassifier.fit.__doc__

    def _check_missing_entries_nuts(self) -> None:
        """Raise where NUTS cannot fit missing entries with this prior (default: it can)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # missing entries: marginal densities, Gibbs at fit
        return tags
