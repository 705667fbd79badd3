"""The semi-supervised fit every estimator shares: :meth:`GenerativeClassifier.fit
<bayesgen.estimators.classifier.GenerativeClassifier.fit>` with unlabelled rows runs EM for
the MAP (:mod:`bayesgen.inference.semi_supervised`), then samples the full posterior, the
unlabelled rows' labels latent, by Gibbs sampling
(:mod:`bayesgen.inference.semi_supervised_gibbs`).

What the estimator holds (docs/semi-supervised.md):

* ``closed_form_``: the closed form at the EM's completed expected statistics (its mode is the
  MAP, ``map_``), with ``attrs["semi_supervised_posterior"]`` saying what ``idata_`` is;
* ``idata_``: with λ_u = 1 and whole-number weights (the model itself), the Gibbs draws of
  the full posterior (``"gibbs"``); where λ_u < 1 or an unlabelled row's weight is fractional
  (EM-λ's objective, which no latent-label model has), the conjugate posterior at the EM's
  expected statistics, an approximation (``"expected_statistics"``); with λ_u = 0 that is the
  exact posterior of the labelled rows;
* ``transduction_`` and ``label_distributions_`` at the MAP, and for a Gibbs fit
  ``posterior_label_distributions_``: P(y_i = k | X, y_L), each unlabelled row's posterior
  class probabilities.
"""

from __future__ import annotations

from sklearn.base import clone

from bayesgen.inference import semi_supervised, semi_supervised_gibbs

#: The fitted attributes of a fit with unlabelled rows (a refit without them drops them).
SEMI_SUPERVISED_ATTRIBUTES = (
    "transduction_",
    "label_distributions_",
    "em_log_likelihood_",
    "posterior_label_distributions_",
)
#: ``closed_form_.attrs["semi_supervised_posterior"]``: the full posterior by Gibbs sampling,
#: or the conjugate posterior at the EM's expected statistics.
GIBBS, EXPECTED_STATISTICS = "gibbs", "expected_statistics"


class SemiSupervisedFit:
    """``_fit_semi_supervised``, what ``fit`` does with unlabelled rows.

    Examples
    --------
    >>> from bayesgen import MultinomialNB
    >>> from bayesgen.estimators.semi_supervised import SemiSupervisedFit
    >>> X = [[3, 0], [2, 1], [0, 3], [1, 2], [3, 1], [0, 2]]
    >>> y = ["a", "a", "b", "b", None, None]
    >>> est = MultinomialNB(alpha=2.0, inference="conjugate", compute_map=False, random_seed=0,
    ...                     draws=100, tune=20, chains=2, prior_draws=0)
    >>> isinstance(est, SemiSupervisedFit), est.fit(X, y).transduction_.tolist()
    (True, ['a', 'a', 'b', 'b', 'a', 'b'])
    >>> est.closed_form_.attrs["semi_supervised_posterior"], dict(est.idata_["posterior"].sizes)
    ('gibbs', {'chain': 2, 'draw': 100, 'class': 2, 'feature': 2})
    """

    def _fit_semi_supervised(
        self, X, y, unlabelled, feature_names, sample_weight, unlabelled_weight
    ):
        """:meth:`fit` with unlabelled rows: EM for the MAP
        (:func:`bayesgen.inference.semi_supervised.em_map`), then the full posterior by Gibbs
        sampling where the model has one (see the module's docstring and :meth:`fit`'s
        Notes)."""
        if self.inference != "conjugate":
            raise ValueError(
                f"y: {int(unlabelled.sum())} rows are unlabelled (None/NaN or "
                "unlabelled_label), and inference='nuts' cannot fit them yet (their labels "
                "would be latent in the PyMC model). Use inference='conjugate': EM for the "
                "MAP, then the full posterior by Gibbs sampling."
            )
        split = semi_supervised.split_rows(X, y, unlabelled, sample_weight)
        result, labelled_codes = semi_supervised.fit_labelled_and_unlabelled(
            self._family,
            split,
            statistics_of=self._statistics,
            estimates_of=self._estimates,
            feature_names=feature_names,
            unlabelled_weight=unlabelled_weight,
        )
        gibbs = unlabelled_weight == 1 and (
            semi_supervised_gibbs.row_copies(split.weight_unlabelled, int(unlabelled.sum()))
            is not None
        )
        stats = result.estimates
        stats.attrs |= {
            "unlabelled_rows": int(unlabelled.sum()),
            "em_iterations": result.iterations,
            "em_converged": int(result.converged),
            "unlabelled_weight": unlabelled_weight,
            "semi_supervised_posterior": GIBBS if gibbs else EXPECTED_STATISTICS,
        }
        observed = self._observed_group(
            stats, split.X_labelled, split.y_labelled, split.weight_labelled
        )
        # The conjugate posterior at the EM's statistics: the fit's posterior where there is no
        # Gibbs sampler, and what fixes a prior derived from the data before sampling.
        self._set_conjugate(stats, observed)
        self.label_distributions_ = semi_supervised.label_distributions(
            unlabelled, labelled_codes, result.responsibilities
        )
        self.transduction_ = self.classes_[self.label_distributions_.argmax(axis=1)]
        self.em_log_likelihood_ = result.log_likelihood
        if gibbs:
            self._sample_semi_supervised(split, result, labelled_codes, feature_names)
            self.posterior_label_distributions_ = semi_supervised.label_distributions(
                unlabelled, labelled_codes, self._gibbs_label_probabilities
            )
            del self._gibbs_label_probabilities
        return self

    def _sample_semi_supervised(self, split, result, labelled_codes, feature_names) -> None:
        """Replace the posterior by the Gibbs draws of the full posterior, the prior fixed at
        the EM fit's hyperparameters (:func:`bayesgen.inference.semi_supervised_gibbs.
        sample_split`); ``closed_form_`` and ``map_`` stay the EM's."""
        frozen = self.fitted_hyperparameters()
        fixed = clone(self).set_params(**frozen) if frozen else self
        drawn = semi_supervised_gibbs.sample_split(
            self._family,
            split,
            result,
            labelled_codes,
            statistics_of=self._statistics,
            estimates_of=fixed._estimates,
            feature_names=feature_names,
            draws=self.draws,
            tune=self.tune,
            chains=self.chains,
            random_seed=self.random_seed,
            prior_draws=self.prior_draws,
            dtype=self.dtype,
        )
        stats = self.closed_form_
        self._add_observed(
            drawn.idata, stats, split.X_labelled, split.y_labelled, split.weight_labelled
        )
        map_point = self.__dict__.get("_map")  # the EM's MAP as _set_conjugate holds it
        self.set_posterior(stats, drawn.idata, map_point)
        self._gibbs_label_probabilities = drawn.label_probabilities
