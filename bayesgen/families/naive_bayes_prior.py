"""The prior mean of a naive Bayes ``feature_prob``: uniform (add-λ), pooled, or given.

The feature prior of each simplex of O outcomes is Dirichlet(λ O m) (Beta(2λ m, 2λ (1 − m))
for a Bernoulli feature) for a prior mean m. A fit stores ``prior_weight`` = O m per cell of
``feature_count`` without the class axis (1 everywhere is add-λ's uniform m, and is not stored):

* ``"uniform"``: m = 1 / O, add-λ;
* ``"pooled"``: m the add-½ frequencies of the training counts summed over the classes, the
  hierarchical Dirichlet of MacKay & Peto (1995) (:meth:`FeaturePrior.pooled_prior_weight`);
* an array: m given, refused unless a proper prior mean
  (:meth:`FeaturePrior.given_prior_weight`).

:class:`FeaturePrior` holds it for :class:`~bayesgen.families.naive_bayes.NaiveBayesFamily`,
which it is mixed into: the layout of a block's simplices comes from that class's hooks
``smoothing_terms`` and ``feature_simplices``.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from bayesgen.maths.dirichlet import per_class

#: The prior means of ``feature_prob`` on offer: add-λ's uniform one, or the pooled frequencies.
PRIOR_MEANS = ("uniform", "pooled")


def check_prior_mean(value):
    """``prior_mean``, refused if a name other than those of :data:`PRIOR_MEANS` (an array is
    checked against the data, :meth:`FeaturePrior.given_prior_weight`)."""
    if isinstance(value, str) and value not in PRIOR_MEANS:
        raise ValueError(
            f"prior_mean: expected one of {', '.join(map(repr, PRIOR_MEANS))} or an array of "
            f"prior means; got {value!r}."
        )
    return value


class FeaturePrior:
    """The feature prior Dirichlet(λ w) of a naive Bayes block: λ and the weights w per cell.

    Mixed into :class:`~bayesgen.families.naive_bayes.NaiveBayesFamily`, whose hooks
    ``smoothing_terms`` and ``feature_simplices`` give the layout of the simplices.
    """

    def prior_weight_of(self, statistics: xr.Dataset, prior_mean) -> np.ndarray | float:
        """The ``prior_weight`` of ``prior_mean`` (see the block's ``fit``): 1.0 for
        "uniform", else an array in the layout of ``feature_count`` without the class axis."""
        if isinstance(prior_mean, str):
            check_prior_mean(prior_mean)
            return self.pooled_prior_weight(statistics) if prior_mean == "pooled" else 1.0
        return self.given_prior_weight(statistics, prior_mean)

    def given_prior_weight(self, statistics: xr.Dataset, prior_mean) -> np.ndarray:
        """``prior_weight`` O m of a prior mean m given as an array of the shape of
        ``feature_prob`` without the class axis, refused unless a proper prior mean: > 0 on
        every real outcome and summing to 1 over each simplex (the Bernoulli model: each
        P(present) strictly between 0 and 1)."""
        shape = statistics["feature_count"].shape[1:]
        try:
            mean = np.array(prior_mean, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(
                f"prior_mean: expected 'uniform', 'pooled' or an array of shape {shape} (the "
                f"prior mean of feature_prob); got {type(prior_mean).__name__}."
            ) from None
        if mean.shape != shape:
            raise ValueError(
                f"prior_mean: expected 'uniform', 'pooled' or an array of shape {shape} (the "
                f"prior mean of feature_prob without the class axis); got shape {mean.shape}."
            )
        _, n_outcomes, mask = self.smoothing_terms(statistics)
        real = np.ones(shape, dtype=bool) if mask is None else np.broadcast_to(mask, shape)
        bad = real & ~(np.isfinite(mean) & (mean > 0))
        if np.any(bad):
            raise ValueError(
                "prior_mean: expected a probability > 0 for every outcome (a zero would forbid "
                f"it whatever the data); got {mean[bad][:5].tolist()}."
            )
        # O per cell: n_outcomes broadcasts against feature_count without its class axis
        n_outcomes = np.broadcast_to(np.asarray(n_outcomes, dtype=np.float64), shape)
        weight = np.where(real, n_outcomes * mean, 0.0)
        # Over each simplex (a Bernoulli feature's pair (w, 2 − w)) the weights of a proper
        # prior mean are > 0 and sum to the simplex's outcomes.
        probe = statistics.assign(prior_weight=(statistics["feature_count"].dims[1:], weight))
        simplex = self.simplex_prior_weights(probe)
        outcomes = np.ones(simplex.shape, dtype=bool) if mask is None else mask
        sums, expected = np.where(outcomes, simplex, 0.0).sum(axis=-1), outcomes.sum(axis=-1)
        off = ~np.isclose(sums, expected, rtol=1e-6, atol=0.0)
        if np.any(off) or np.any(simplex[outcomes] <= 0):
            raise ValueError(
                "prior_mean: expected probabilities that sum to 1 over each simplex of "
                "feature_prob (the vocabulary; a feature's categories; for the Bernoulli model "
                f"each P(present) < 1); got sums {(sums / expected)[off][:5].tolist()}."
            )
        return weight

    def pooled_prior_weight(self, statistics: xr.Dataset) -> np.ndarray:
        """``prior_weight`` of ``prior_mean="pooled"``: O m per cell of ``feature_count``
        (without the class axis), m the add-½ frequencies of the counts summed over the
        classes within each simplex of ``feature_simplices``, O its real outcomes. The
        simplices' outcomes are the cells here; a block whose simplices are laid out otherwise
        (the Bernoulli model's pairs) overrides this."""
        counts, mask = self.feature_simplices(statistics)
        real = np.ones(counts.shape[1:], dtype=bool) if mask is None else mask
        real = np.broadcast_to(real, counts.shape)[0]
        pooled = np.where(real, counts.sum(axis=0) + 0.5, 0.0)
        with np.errstate(invalid="ignore"):  # a simplex without outcomes has no weight
            weight = real.sum(axis=-1, keepdims=True) * pooled / pooled.sum(axis=-1, keepdims=True)
        return np.nan_to_num(weight)

    def prior_weights(self, estimates: xr.Dataset) -> np.ndarray | float:
        """λ's multiplier w per cell of ``feature_count`` (broadcast over the classes): the
        prior concentration of a cell is λ w. 1.0 for add-λ's uniform prior mean; the
        ``prior_weight`` of a shared-mean prior."""
        if "prior_weight" in estimates:
            return estimates["prior_weight"].values
        return 1.0

    def simplex_prior_weights(self, estimates: xr.Dataset) -> np.ndarray | float:
        """:meth:`prior_weights` in the layout of ``feature_simplices`` (the same here; the
        Bernoulli model adds the absent outcome's 2 − w)."""
        return self.prior_weights(estimates)

    def feature_alpha(self, estimates: xr.Dataset, alpha=None):
        """λ ready to broadcast against ``feature_count``: a number, or one λ per class
        shaped (n_classes, 1, ...) (:func:`bayesgen.maths.dirichlet.per_class`); at ``alpha``
        (default: the fitted λ)."""
        alpha = estimates.attrs["alpha"] if alpha is None else alpha
        return per_class(alpha, estimates["feature_count"].ndim)

    def prior_pseudocounts(self, estimates: xr.Dataset, alpha=None):
        """λ w: the prior concentration of each cell of ``feature_count`` (see
        :meth:`prior_weights`), at ``alpha`` (default: the fitted λ). With one λ for all
        classes it may lack the class axis (it broadcasts over it)."""
        return self.feature_alpha(estimates, alpha) * self.prior_weights(estimates)

    def prior_mean(self, estimates: xr.Dataset) -> np.ndarray:
        """E[``feature_prob``] under the prior, per cell of ``feature_count`` without the
        class axis: w / O (see :meth:`prior_weights`); 0 in padding."""
        shape = estimates["feature_count"].shape[1:]
        _, n_outcomes, mask = self.smoothing_terms(estimates)
        mean = np.broadcast_to(self.prior_weights(estimates), shape) / np.broadcast_to(
            np.asarray(n_outcomes, dtype=np.float64), shape
        )
        return mean if mask is None else np.where(mask, mean, 0.0)


__all__ = ["PRIOR_MEANS", "FeaturePrior", "check_prior_mean"]
