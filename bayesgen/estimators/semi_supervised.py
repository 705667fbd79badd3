"""The semi-supervised fit every estimator shares: :meth:`GenerativeClassifier.fit
<bayesgen.estimators.classifier.GenerativeClassifier.fit>` with unlabelled rows runs EM for
the MAP (:mod:`bayesgen.inference.semi_supervised`), then samples the full posterior, the
unlabelled rows' labels latent: by Gibbs sampling over them for ``inference="conjugate"``
(:mod:`bayesgen.inference.semi_supervised_gibbs`), by NUTS with them marginalised for
``inference="nuts"`` (:mod:`bayesgen.inference.semi_supervised_nuts`).

What the estimator holds (docs/semi-supervised.md):

* ``closed_form_``: the closed form at the EM's completed expected statistics (its mode is the
  MAP, ``map_``), with ``attrs["semi_supervised_posterior"]`` saying what ``idata_`` is;
* ``idata_``: for ``inference="nuts"``, NUTS' draws of the posterior with every unlabelled
  row's likelihood the mixture over the classes (``"nuts"``; with λ_u < 1 the unlabelled rows
  tempered by λ_u); for ``inference="conjugate"`` with λ_u = 1 and whole-number weights (the
  model itself), the Gibbs draws of the full posterior (``"gibbs"``); where λ_u < 1 or an
  unlabelled row's weight is fractional (EM-λ's objective, which no latent-label model has),
  the conjugate posterior at the EM's expected statistics, an approximation
  (``"expected_statistics"``); with λ_u = 0 that is the exact posterior of the labelled rows;
* ``transduction_`` and ``label_distributions_`` at the MAP, and for a Gibbs or NUTS fit
  ``posterior_label_distributions_``: P(y_i = k | X, y_L), each unlabelled row's posterior
  class probabilities.
"""

from __future__ import annotations

from sklearn.base import clone

from bayesgen.inference import semi_supervised, semi_supervised_gibbs, semi_supervised_nuts
from bayesgen.inference.progress import show_progress

#: The fitted attributes of a fit with unlabelled rows (a refit without them drops them).
SEMI_SUPERVISED_ATTRIBUTES = (
    "transduction_",
    "label_distributions_",
    "em_log_likelihood_",
    "posterior_label_distributions_",
)
#: ``closed_form_.attrs["semi_supervised_posterior"]``: the full posterior by Gibbs sampling or
#: by NUTS, or the conjugate posterior at the EM's expected statistics.
GIBBS, NUTS, EXPECTED_STATISTICS = "gibbs", "nuts", "expected_statistics"


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
        sampling where the model has one, or by NUTS (see the module's docstring and
        :meth:`fit`'s Notes)."""
        nuts = self.inference != "conjugate"
        if nuts:  # refused before any work
            self._check_semi_supervised_nuts(int(unlabelled.sum()), sample_weight)
        split = semi_supervised.split_rows(X, y, unlabelled, sample_weight)
        result, labelled_codes = semi_supervised.fit_labelled_and_unlabelled(
            self._family,
            split,
            statistics_of=self._statistics,
            estimates_of=self._estimates,
            feature_names=feature_names,
            unlabelled_weight=unlabelled_weight,
        )
        gibbs = (
            not nuts
            and unlabelled_weight == 1
            and (
                semi_supervised_gibbs.row_copies(split.weight_unlabelled, int(unlabelled.sum()))
                is not None
            )
        )
        stats = result.estimates
        stats.attrs |= {
            "unlabelled_rows": int(unlabelled.sum()),
            "em_iterations": result.iterations,
            "em_converged": int(result.converged),
            "unlabelled_weight": unlabelled_weight,
            "semi_supervised_posterior": NUTS if nuts else GIBBS if gibbs else EXPECTED_STATISTICS,
        }
        observed = self._observed_group(
            stats, split.X_labelled, split.y_labelled, split.weight_labelled
        )
        # The conjugate posterior at the EM's statistics: the fit's posterior where there is no
        # sampler, and what fixes a prior derived from the data before sampling.
        self._set_conjugate(stats, observed)
        self.label_distributions_ = semi_supervised.label_distributions(
            unlabelled, labelled_codes, result.responsibilities
        )
        self.transduction_ = self.classes_[self.label_distributions_.argmax(axis=1)]
        self.em_log_likelihood_ = result.log_likelihood
        if nuts or gibbs:
            sample = self._sample_semi_supervised_nuts if nuts else self._sample_semi_supervised
            probabilities = sample(split, result, labelled_codes, feature_names, unlabelled_weight)
            self.posterior_label_distributions_ = semi_supervised.label_distributions(
                unlabelled, labelled_codes, probabilities
            )
        return self

    def _check_semi_supervised_nuts(self, n_unlabelled: int, sample_weight) -> None:
        """Refuse what NUTS cannot fit with unlabelled rows, before EM: a model without a
        mixture form, a prior without a conjugate form (EM finds the MAP under the conjugate
        prior: GDA's LKJ), fractional weights (the labelled rows' counts are observed, and an
        unlabelled row of weight w counts as w rows)."""
        semi_supervised_nuts.check_mixture_form(self._family, n_unlabelled)
        try:
            self._check_conjugate()
        except ValueError:  # its message is about inference='conjugate'; this one is not
            raise ValueError(
                f"inference: {n_unlabelled} rows are unlabelled, and the semi-supervised fit "
                "finds its MAP by EM under the model's conjugate prior, which this estimator's "
                "prior is not; fit them with the conjugate prior (GDA: cov_prior='conjugate')."
            ) from None
        self._check_nuts_weights(sample_weight)

    def _fixed_prior(self):
        """This estimator with a prior derived from the data fixed at its value in the EM fit
        (``fitted_hyperparameters``), so that the sampler has one target."""
        frozen = self.fitted_hyperparameters()
        return clone(self).set_params(**frozen) if frozen else self

    def _sample_semi_supervised(
        self, split, result, labelled_codes, feature_names, unlabelled_weight
    ):
        """Replace the posterior by the Gibbs draws of the full posterior, the prior fixed at
        the EM fit's hyperparameters (:func:`bayesgen.inference.semi_supervised_gibbs.
        sample_split`); ``closed_form_`` and ``map_`` stay the EM's. Returns the unlabelled
        rows' posterior class probabilities."""
        drawn = semi_supervised_gibbs.sample_split(
            self._family,
            split,
            result,
            labelled_codes,
            statistics_of=self._statistics,
            estimates_of=self._fixed_prior()._estimates,
            feature_names=feature_names,
            draws=self.draws,
            tune=self.tune,
            chains=self.chains,
            random_seed=self.random_seed,
            prior_draws=self.prior_draws,
            dtype=self.dtype,
        )
        self._hold_semi_supervised(drawn.idata, split)
        return drawn.label_probabilities

    def _sample_semi_supervised_nuts(
        self, split, result, labelled_codes, feature_names, unlabelled_weight
    ):
        """Replace the posterior by NUTS' draws of the full posterior, the unlabelled rows'
        labels marginalised and the prior fixed at the EM fit's hyperparameters
        (:func:`bayesgen.inference.semi_supervised_nuts.sample_split`); ``closed_form_`` and
        ``map_`` stay the EM's. Returns the unlabelled rows' posterior class probabilities."""
        drawn = semi_supervised_nuts.sample_split(
            self._family,
            split,
            result,
            labelled_codes,
            statistics_of=self._statistics,
            estimates_of=self._fixed_prior()._estimates,
            build_model=self._build_model,
            feature_names=feature_names,
            unlabelled_weight=unlabelled_weight,
            draws=self.draws,
            tune=self.tune,
            chains=self.chains,
            cores=self.cores,
            random_seed=self.random_seed,
            nuts_sampler=self.nuts_sampler,
            target_accept=self.target_accept,
            prior_draws=self.prior_draws,
            exact_prior=self._has_conjugate_prior(),
            dtype=self.dtype,
            progressbar=show_progress(self.progressbar),
        )
        self._warn_unconverged(drawn.idata)
        self._hold_semi_supervised(drawn.idata, split)
        return drawn.label_probabilities

    def _hold_semi_supervised(self, idata, split) -> None:
        """Hold the sampler's draws as the fit's posterior, beside the labelled rows
        (``observed_data``, ``log_likelihood``) and the EM's closed form and MAP."""
        stats = self.closed_form_
        self._add_observed(idata, stats, split.X_labelled, split.y_labelled, split.weight_labelled)
        map_point = self.__dict__.get("_map")  # the EM's MAP as _set_conjugate holds it
        self.set_posterior(stats, idata, map_point)
