"""The semi-supervised fit every estimator shares: :meth:`GenerativeClassifier.fit
<bayesgen.estimators.classifier.GenerativeClassifier.fit>` with unlabelled rows runs EM for
the MAP (:mod:`bayesgen.inference.semi_supervised`) and holds the conjugate posterior at its
completed expected statistics.
"""

from __future__ import annotations

from bayesgen.inference import semi_supervised

#: The fitted attributes of a fit with unlabelled rows (a refit without them drops them).
SEMI_SUPERVISED_ATTRIBUTES = ("transduction_", "label_distributions_", "em_log_likelihood_")


class SemiSupervisedFit:
    """``_fit_semi_supervised``, what ``fit`` does with unlabelled rows.

    Examples
    --------
    >>> from bayesgen import MultinomialNB
    >>> from bayesgen.estimators.semi_supervised import SemiSupervisedFit
    >>> X = [[3, 0], [2, 1], [0, 3], [1, 2], [3, 1], [0, 2]]
    >>> y = ["a", "a", "b", "b", None, None]
    >>> est = MultinomialNB(alpha=2.0, inference="conjugate", compute_map=False, random_seed=0)
    >>> isinstance(est, SemiSupervisedFit), est.fit(X, y).transduction_.tolist()
    (True, ['a', 'a', 'b', 'b', 'a', 'b'])
    """

    def _fit_semi_supervised(
        self, X, y, unlabelled, feature_names, sample_weight, unlabelled_weight
    ):
        """:meth:`fit` with unlabelled rows: EM for the MAP
        (:func:`bayesgen.inference.semi_supervised.em_map`), then the conjugate posterior at
        the completed expected statistics (see :meth:`fit`'s Notes)."""
        if self.inference != "conjugate":
            raise ValueError(
                f"y: {int(unlabelled.sum())} rows are unlabelled (None/NaN or "
                "unlabelled_label), and inference='nuts' cannot fit them yet (their labels "
                "would be latent in the PyMC model). Use inference='conjugate': EM for the "
                "MAP, then the conjugate posterior at its expected statistics."
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
        stats = result.estimates
        stats.attrs |= {
            "unlabelled_rows": int(unlabelled.sum()),
            "em_iterations": result.iterations,
            "em_converged": int(result.converged),
            "unlabelled_weight": unlabelled_weight,
        }
        observed = self._observed_group(
            stats, split.X_labelled, split.y_labelled, split.weight_labelled
        )
        self._set_conjugate(stats, observed)
        self.label_distributions_ = semi_supervised.label_distributions(
            unlabelled, labelled_codes, result.responsibilities
        )
        self.transduction_ = self.classes_[self.label_distributions_.argmax(axis=1)]
        self.em_log_likelihood_ = result.log_likelihood
        return self
