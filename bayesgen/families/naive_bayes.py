"""What the three naive Bayes families share: the fit loop and the Dirichlet posterior.

As scikit-learn's ``_BaseDiscreteNB``, :class:`NaiveBayesFamily` keeps one fit loop (validate,
count the classes, derive the add-λ and maximum-likelihood probabilities) and each subclass
supplies the feature statistics (:meth:`NaiveBayesFamily.feature_statistics`) and the Dirichlet
or Beta concentrations of its ``feature_prob`` (:meth:`NaiveBayesFamily.concentrations`), from
which the exact conjugate draws and mode follow.

Naive Bayes (counts N, class totals N_k, smoothing λ = ``alpha``):

* ``class_prob``   = (N_k + a) / (N + K a),            a = ``class_alpha``
* ``feature_prob`` = (count + λ) / (total + K λ) over each simplex of the model

These are the posterior means under Dirichlet(a) / Beta(λ, λ) / Dirichlet(λ) priors; the
``*_mle`` variables are the same with λ = 0.

With ``prior_mean="pooled"`` the feature prior has a shared mean instead of a uniform one,
the hierarchical Dirichlet of MacKay & Peto (1995): Dirichlet(λ O m) over each simplex of O
outcomes, m the add-½ frequencies of the training counts pooled over the classes (Beta(2λ m,
2λ (1 − m)) for the Bernoulli model), so that ``feature_prob`` = (count + λ O m) /
(total + O λ). The estimates then hold ``prior_weight`` = O m (1 everywhere would be add-λ),
and every concentration is λ times it (:meth:`NaiveBayesFamily.prior_weights`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import xarray as xr

import bayesgen.families.hyperprior as hyperprior
import bayesgen.maths.joint_statistics as joint
from bayesgen.families.base import (
    Family,
    TopParameters,
    Variable,
    class_concentration,
    class_log_evidence,
    class_marginal,
    class_statistic,
    dirichlet_marginal,
    loo_class_log_prob,
)
from bayesgen.families.expected import class_expected, simplex_block
from bayesgen.families.hyperprior import has_alpha_prior
from bayesgen.input.alpha import check_class_smoothing, check_smoothing
from bayesgen.input.data import TrainingData
from bayesgen.input.statistics import check_mergeable, total_weight, training_data
from bayesgen.maths.counts import class_counts
from bayesgen.maths.dirichlet import add_lambda, dirichlet_draws, log_prob_terms, mode_of, per_class
from bayesgen.maths.evidence import DirichletEvidence

#: The prior means of ``feature_prob`` on offer: add-λ's uniform one, or the pooled frequencies.
PRIOR_MEANS = ("uniform", "pooled")


@dataclass
class FeatureStatistics:
    """The feature part of a naive Bayes fit's statistics, as a subclass's hook returns it.

    ``counts`` become ``feature_count`` (dims ``dims``); ``variables`` and ``coords`` are
    stored besides (before ``feature_count``). The add-λ estimate over them comes from the
    statistics alone (:meth:`NaiveBayesFamily.smoothing_terms`).
    """

    dims: tuple[str, ...]
    counts: np.ndarray
    variables: dict[str, Variable] = field(default_factory=dict)
    coords: dict[str, np.ndarray] = field(default_factory=dict)


class NaiveBayesFamily(Family):
    """A naive Bayes model: π ~ Dirichlet(a) and a Dirichlet or Beta ``feature_prob``.

    Subclasses implement :meth:`feature_statistics`, :meth:`concentrations`,
    :meth:`plug_in_log_joint`, :meth:`draw_log_joint` and :meth:`pymc_model`.
    """

    # -- plots and the report -------------------------------------------------------------
    plot_variables = ("class_prob", "feature_prob")
    mean_label = "add-λ"
    mean_caption = "add-λ estimate"
    top_parameter_caption = "most probable features"

    def parameter_dims(self, estimates: xr.Dataset) -> dict[str, tuple[str, ...]]:
        """:attr:`parameters`, and λ (``alpha``, a scalar) where it has a hyperprior."""
        dims = dict(self.parameters)
        if has_alpha_prior(estimates):
            dims["alpha"] = ()
        return dims

    def ranked_probabilities(self, estimates: xr.Dataset) -> np.ndarray:
        """The closed-form ``feature_prob`` as the plots rank it (-inf: never shown)."""
        return estimates["feature_prob"].values

    def feature_scores(self, estimates: xr.Dataset) -> np.ndarray:
        """The largest closed-form probability of each feature (or cell) over the classes."""
        return self.ranked_probabilities(estimates).max(axis=0)

    def top_parameters(self, estimates: xr.Dataset, posterior: xr.Dataset) -> TopParameters:
        """``feature_prob`` of each class, ranked by its closed-form estimate."""
        return TopParameters(posterior["feature_prob"], self.ranked_probabilities(estimates))

    # -- closed forms ---------------------------------------------------------------------

    def fit(
        self,
        X,
        y,
        *,
        alpha: float = 1.0,
        class_alpha: float = 1.0,
        prior_mean: str = "uniform",
        feature_names=None,
        sample_weight=None,
        **model_options,
    ) -> xr.Dataset:
        """Sufficient statistics and closed-form estimates of the model fitted to X, y.

        :meth:`sufficient_statistics` of the rows, then :meth:`from_statistics`.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        alpha : float or mapping, default 1.0
            Smoothing λ ≥ 0 for the feature probabilities, or one λ > 0 per class as a
            mapping {class label: λ} (a dict, or a pandas Series read by its index).
        class_alpha : float, default 1.0
            Smoothing for the class prior; 0 gives N_k / N.
        prior_mean : {"uniform", "pooled"}, default "uniform"
            The prior mean of ``feature_prob``: uniform (add-λ) or the class-pooled add-½
            frequencies of the training counts (see the module's docstring).
        feature_names : sequence of str, optional
        sample_weight : array-like of shape (n_samples,), optional
            Finite weights ≥ 0: row i counts w_i times (see :mod:`bayesgen.input.statistics`).
        **model_options
            ``binarize`` for binary features; the rest go to :meth:`feature_statistics`
            (e.g. the categorical model's ``n_categories``).

        Returns
        -------
        xarray.Dataset
            ``class_count``, ``class_prob``, ``class_prob_mle``, the model's statistics,
            ``feature_count``, ``feature_prob`` (add-λ) and ``feature_prob_mle``; attrs record
            the model, λ, a, the number of samples (the total weight) and whether feature
            names were given.
        """
        if np.ndim(alpha) == 0 and not isinstance(alpha, Mapping):  # per class: checked below
            alpha = check_smoothing(alpha, "alpha")
        class_alpha = check_smoothing(class_alpha, "class_alpha")
        check_prior_mean(prior_mean)
        statistics = self.sufficient_statistics(
            X, y, feature_names=feature_names, sample_weight=sample_weight, **model_options
        )
        return self.from_statistics(
            statistics, alpha=alpha, class_alpha=class_alpha, prior_mean=prior_mean
        )

    def sufficient_statistics(
        self,
        X,
        y,
        *,
        feature_names=None,
        sample_weight=None,
        classes=None,
        **model_options,
    ) -> xr.Dataset:
        """The (weighted) class counts and the model's feature counts of X, y.

        As scikit-learn's ``_BaseDiscreteNB._count``, with the weighted one-hot Y:
        ``class_count`` = Yᵀ1 and ``feature_count`` = YᵀX. ``classes`` (``partial_fit``)
        fixes the class coordinate; y may then hold only some of them.

        Returns
        -------
        xarray.Dataset
            The variables of :attr:`statistics` and attrs ``model``, ``n_samples`` (the total
            weight), ``feature_names_given`` (and ``binarize``).
        """
        # Only binary features have a threshold; elsewhere binarize stays in model_options,
        # and the hook refuses it as an unexpected keyword.
        binarize = model_options.pop("binarize", None) if self.feature_kind == "binary" else None
        data = training_data(
            X,
            y,
            kind=self.feature_kind,
            binarize=binarize,
            feature_names=feature_names,
            sample_weight=sample_weight,
            classes=classes,
        )
        class_count = class_counts(data.y, len(data.classes), data.sample_weight)
        features = self.feature_statistics(data, class_count, **model_options)
        variables = {"class_count": (("class",), class_count)}
        variables.update(features.variables)
        variables["feature_count"] = (features.dims, features.counts)
        coords = {"class": data.classes, "feature": data.feature_names, **features.coords}
        attrs = {
            "model": self.name,
            "n_samples": total_weight(class_count),
            "feature_names_given": int(data.names_given),
        }
        if binarize is not None:
            attrs["binarize"] = float(binarize)
        return xr.Dataset(variables, coords=coords, attrs=attrs)

    def from_statistics(
        self,
        statistics: xr.Dataset,
        *,
        alpha: float = 1.0,
        class_alpha: float = 1.0,
        prior_mean: str = "uniform",
    ) -> xr.Dataset:
        """The closed-form estimates from sufficient statistics alone (:meth:`fit`'s result).

        Parameters
        ----------
        statistics : xarray.Dataset
            From :meth:`sufficient_statistics` or :meth:`merge_statistics` (any fit holds
            them too).
        alpha : float or array-like of shape (n_classes,)
            λ, or one λ per class.
        class_alpha : float
            a.
        prior_mean : {"uniform", "pooled"}, default "uniform"
            The prior mean of ``feature_prob`` (see :meth:`fit`).
        """
        class_count = statistics["class_count"].values
        n_classes, n_samples = class_count.size, class_count.sum()
        alpha = check_class_smoothing(alpha, statistics["class"].values, "alpha")
        class_alpha = check_smoothing(class_alpha, "class_alpha")
        variables = {
            "class_count": (("class",), class_count),
            "class_prob": (
                ("class",),
                add_lambda(class_count, n_samples, class_alpha, n_classes),
            ),
            "class_prob_mle": (("class",), class_count / n_samples),
        }
        for name in self.statistics:
            if name not in ("class_count", "feature_count"):
                variables[name] = statistics[name]
        counts = statistics["feature_count"]
        totals, n_outcomes, mask = self.smoothing_terms(statistics)
        weight = self.prior_weight_of(statistics, prior_mean)
        prob = add_lambda(counts.values, totals, per_class(alpha, counts.ndim), n_outcomes, weight)
        prob_mle = add_lambda(counts.values, totals, 0.0, n_outcomes)
        if mask is not None:
            prob = np.where(mask, prob, 0.0)
            prob_mle = np.where(mask, prob_mle, 0.0)
        variables["feature_count"] = counts
        variables["feature_prob"] = (counts.dims, prob)
        variables["feature_prob_mle"] = (counts.dims, prob_mle)
        if not np.isscalar(weight):
            variables["prior_weight"] = (counts.dims[1:], weight)
        attrs = {"model": self.name, "alpha": alpha, "class_alpha": class_alpha}
        attrs["n_samples"] = statistics.attrs["n_samples"]
        attrs["feature_names_given"] = statistics.attrs["feature_names_given"]
        if "binarize" in statistics.attrs:
            attrs["binarize"] = statistics.attrs["binarize"]
        return xr.Dataset(variables, coords=statistics.coords, attrs=attrs)

    def merge_statistics(self, first: xr.Dataset, second: xr.Dataset) -> xr.Dataset:
        """The statistics of the union of two sets of rows: the counts add.

        Both must have the same classes and features
        (:func:`bayesgen.input.statistics.check_mergeable`);
        a subclass whose statistics have more structure (the categorical model's categories)
        aligns them first (:meth:`aligned_statistics`).
        """
        check_mergeable(first, second)
        first, second = self.aligned_statistics(first, second)
        merged = first[list(self.statistics)].copy()
        for name in ("class_count", "feature_count"):
            # Plain arrays: the coords were checked equal, and xarray would align them anyway.
            merged[name] = (first[name].dims, first[name].values + second[name].values)
        merged.attrs = dict(first.attrs)
        merged.attrs["n_samples"] = total_weight(merged["class_count"].values)
        return merged

    def aligned_statistics(
        self, first: xr.Dataset, second: xr.Dataset
    ) -> tuple[xr.Dataset, xr.Dataset]:
        """Two statistics Datasets brought to the same shape before their counts add
        (default: as they are)."""
        return first, second

    def prior_weight_of(self, statistics: xr.Dataset, prior_mean) -> np.ndarray | float:
        """The ``prior_weight`` of ``prior_mean`` (see :meth:`fit`): 1.0 for "uniform", else
        an array in the layout of ``feature_count`` without the class axis."""
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
        classes within each simplex of :meth:`feature_simplices`, O its real outcomes. The
        simplices' outcomes are the cells here; a family whose simplices are laid out
        otherwise (the Bernoulli model's pairs) overrides this."""
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

    def feature_alpha(self, estimates: xr.Dataset, alpha=None):
        """λ ready to broadcast against ``feature_count``: a number, or one λ per class
        shaped (n_classes, 1, ...) (:func:`bayesgen.closed_form.per_class`); at ``alpha``
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

    def smoothing_terms(self, statistics: xr.Dataset):
        """``(totals, n_outcomes, mask)`` of add-λ over the feature counts: ``feature_prob`` =
        (count + λ) / (total + n_outcomes λ), and 0 outside ``mask`` (None: everywhere)."""
        raise NotImplementedError

    def feature_statistics(
        self, data: TrainingData, class_count: np.ndarray, **options
    ) -> FeatureStatistics:
        """The (weighted, ``data.sample_weight``) feature counts of checked training data."""
        raise NotImplementedError

    def class_log_terms(self, estimates: xr.Dataset) -> tuple[np.ndarray, np.ndarray]:
        """(order, finite part) of log π_k (see :func:`bayesgen.closed_form.log_prob_terms`)."""
        return log_prob_terms(
            estimates["class_count"].values,
            estimates.attrs["n_samples"],
            estimates.attrs["class_alpha"],
            estimates.sizes["class"],
        )

    def predictive_log_joint(self, estimates: xr.Dataset, X) -> np.ndarray:
        """log p(x, y = k | data) with the parameters integrated out, for checked X.

        The class term is E[π_k] = (N_k + a) / (N + K a) in every case. Needs λ > 0.
        """
        if np.any(np.asarray(estimates.attrs["alpha"]) <= 0):
            raise ValueError(
                "posterior_predictive_proba: needs alpha > 0 (a proper Dirichlet prior)."
            )
        if has_alpha_prior(estimates):  # λ integrated out too, over p(λ | D)
            return hyperprior.predictive_log_joint(self, estimates, X)
        return self.integrated_log_joint(estimates, X)

    def integrated_log_joint(self, estimates: xr.Dataset, X) -> np.ndarray:
        """:meth:`predictive_log_joint` once λ > 0 is checked.

        By default the add-λ plug-in: where each feature is one draw (Bernoulli, categorical),
        E[φ] is the add-λ estimate, so the exact predictive *equals* the plug-in. With λ > 0
        no probability is zero (and every class has a sample), so the plug-in has no order.
        """
        joint, _ = self.plug_in_log_joint(estimates, X)
        return joint

    # -- the exact conjugate posterior -------------------------------------------------

    def concentrations(
        self, estimates: xr.Dataset, *, posterior: bool
    ) -> tuple[tuple[str, ...], np.ndarray, bool]:
        """Posterior (or, ``posterior=False``, prior) concentration of ``feature_prob``.

        Returns ``(dims, concentration, beta)``: the simplex is the last axis of the
        concentration; ``beta`` marks a Beta pair (present, absent), whose first component is
        the parameter; a zero concentration is padding (the categorical model's missing
        categories).
        """
        raise NotImplementedError

    def feature_subset(self, estimates: xr.Dataset, labels: np.ndarray) -> xr.Dataset:
        """The statistics of the features ``labels`` alone: each feature's Beta (Dirichlet
        over its categories) is independent of the others', so their draws are exact joint
        draws (the multinomial model, whose simplex spans the vocabulary, aggregates
        instead)."""
        if has_alpha_prior(estimates):  # one λ for all features: drawn from all of them
            return estimates
        keep = np.flatnonzero(np.isin(estimates["feature"].values, labels))
        return estimates.isel(feature=keep)

    def conjugate_draws(
        self, estimates: xr.Dataset, rng, sample_shape, dtype, *, posterior: bool
    ) -> dict[str, Variable]:
        if has_alpha_prior(estimates):  # λ drawn from p(λ | D), then θ | λ per draw
            return hyperprior.conjugate_draws(
                self, estimates, rng, sample_shape, dtype, posterior=posterior
            )
        # class_prob first, then feature_prob: the order of the generator's calls fixes which
        # seeded draws each parameter gets.
        concentration = class_concentration(estimates, posterior=posterior)
        variables = {
            "class_prob": (("class",), dirichlet_draws(rng, concentration, sample_shape, dtype))
        }
        dims, concentration, beta = self.concentrations(estimates, posterior=posterior)
        draws = dirichlet_draws(rng, concentration, sample_shape, dtype)
        variables["feature_prob"] = (dims, draws[..., 0] if beta else draws)
        return variables

    def conjugate_mode(self, estimates: xr.Dataset) -> dict[str, Variable]:
        if has_alpha_prior(estimates):
            return hyperprior.conjugate_mode(self, estimates)
        concentration = class_concentration(estimates, posterior=True)
        variables = {"class_prob": (("class",), mode_of(concentration))}
        dims, concentration, beta = self.concentrations(estimates, posterior=True)
        mode = mode_of(concentration)
        variables["feature_prob"] = (dims, mode[..., 0] if beta else mode)
        return variables

    def exact_marginals(self, estimates: xr.Dataset) -> dict:
        """π and ``feature_prob`` componentwise Beta(a_j, a0 − a_j) from their Dirichlet (or
        Beta) concentrations; under a hyperprior on λ only π (θ's marginal is then a mixture
        over p(λ | D), left to draws)."""
        marginals = {"class_prob": class_marginal(estimates)}
        if not has_alpha_prior(estimates):
            dims, concentration, beta = self.concentrations(estimates, posterior=True)
            marginals["feature_prob"] = dirichlet_marginal(dims, concentration, beta=beta)
        return marginals

    # -- the comparison (bayesgen.checks.comparison) -----------------------------------------------

    def expected(
        self,
        estimates: xr.Dataset,
        *,
        alpha: float | hyperprior.AlphaPosterior | None,
        class_alpha: float,
        options: dict,
        map_method: str | None,
    ) -> list:
        """π under Dirichlet(a) and ``feature_prob`` under Dirichlet(λ) (Beta(λ, λ)); with
        ``alpha`` a :class:`~bayesgen.families.hyperprior.AlphaPosterior` (a Gamma hyperprior on λ),
        θ's moments mixed over p(λ | D) and a block for λ itself."""
        if isinstance(alpha, hyperprior.AlphaPosterior):  # λ ~ Gamma: mixtures over p(λ | D)
            return hyperprior.expected_blocks(self, estimates, alpha, class_alpha)
        return [class_expected(estimates, class_alpha), self.feature_expected(estimates, alpha)]

    def feature_expected(self, estimates: xr.Dataset, alpha: float):
        """The :class:`~bayesgen.families.expected.Expected` of ``feature_prob`` under λ =
        ``alpha``, from the subclass's :meth:`feature_moments`."""
        return simplex_block(
            "feature_prob",
            alpha=alpha,
            mle=estimates["feature_prob_mle"].values.astype(np.float64),
            shared_mean="prior_weight" in estimates,
            **self.feature_moments(estimates, alpha),
        )

    def feature_moments(self, estimates: xr.Dataset, alpha: float) -> dict:
        """The posterior moments and mode of ``feature_prob`` under λ = ``alpha``.

        Returns the keywords ``keep`` (the cells that exist), ``closed_form`` (add-λ),
        ``closed_form_sd``, ``closed_form_kurtosis``, ``expected_map`` and ``status`` (of
        :func:`bayesgen.families.expected.simplex_mode`), and ``beta`` for a Beta(λ, λ) prior,
        of :func:`bayesgen.families.expected.simplex_block`.
        """
        raise NotImplementedError

    #: Most ψ evaluations (cells × draws) for the hyperprior's per-draw joint statistic.
    JOINT_BUDGET = 50_000_000

    def joint_statistics(
        self,
        estimates: xr.Dataset,
        posterior: xr.Dataset,
        *,
        alpha,
        class_alpha: float,
        options: dict | None = None,
    ) -> list:
        """Σ log π and Σ log θ of each draw under their exact Dirichlet (Beta) law; under a
        hyperprior on λ, Σ log θ given each draw's own λ (see
        :mod:`bayesgen.maths.joint_statistics`)."""

        class_prob = posterior["class_prob"].values
        statistics = [class_statistic(estimates, posterior, class_alpha)]
        draws = posterior["feature_prob"].values
        if self.concentrations(estimates, posterior=True)[2]:  # a Beta pair: (φ, 1 − φ)
            draws = np.stack([draws, 1.0 - draws], axis=-1)
        if isinstance(alpha, hyperprior.AlphaPosterior):
            if "alpha" not in posterior:
                return statistics
            one = self._concentration_at(estimates, 1.0)
            per_lambda = self._concentration_at(estimates, 2.0) - one
            if one.size * class_prob.shape[0] * class_prob.shape[1] > self.JOINT_BUDGET:
                return statistics
            statistics.append(
                joint.conditional_statistic(
                    "Σ log feature_prob given λ",
                    "feature_prob",
                    draws,
                    one - per_lambda,
                    per_lambda,
                    posterior["alpha"].values,
                )
            )
            return statistics
        statistics.append(
            joint.fixed_statistic(
                "Σ log feature_prob",
                "feature_prob",
                draws,
                self._concentration_at(estimates, alpha),
            )
        )
        return statistics

    def _concentration_at(self, estimates: xr.Dataset, alpha) -> np.ndarray:
        """The posterior concentration of ``feature_prob`` with λ = ``alpha``."""
        at = estimates.copy()
        at.attrs = {**estimates.attrs, "alpha": alpha}
        return self.concentrations(at, posterior=True)[1]

    # -- exact leave-one-out (bayesgen.checks.loo) -----------------------------------------------

    def loo_log_joint(
        self, estimates: xr.Dataset, X, y_codes: np.ndarray, *, options: dict | None = None
    ) -> np.ndarray:
        """log p(x_i, y = k | D without row i) = log E[π_k | D_{-i}] + log p(x_i | k, D_{-i}).

        Both factors are conjugate: E[π_k | D_{-i}] = (N_k − [k = y_i] + a) / (N − 1 + K a),
        and the feature term is the subclass's :meth:`loo_feature_log_likelihood`, the
        Dirichlet (Beta) predictive of x_i given class k's counts less row i's own. Needs
        λ > 0 (a proper prior, so that a feature seen only in row i keeps a probability).
        Under a hyperprior on λ, λ is integrated out over p(λ | D without row i) by
        quadrature (:func:`bayesgen.families.hyperprior.loo_log_joint`).
        """
        if np.any(np.asarray(estimates.attrs["alpha"]) <= 0):
            raise ValueError(
                "loo_proba: needs alpha > 0 (a proper Dirichlet prior); with alpha = 0 a "
                "feature seen only in the left-out row has probability 0."
            )
        y_codes = np.asarray(y_codes)
        if has_alpha_prior(estimates):  # λ integrated out over p(λ | D without row i)
            return hyperprior.loo_log_joint(self, estimates, X, y_codes)
        return loo_class_log_prob(estimates, y_codes) + self.loo_feature_log_likelihood(
            estimates, X, y_codes
        )

    def loo_feature_log_likelihood(self, estimates: xr.Dataset, X, y_codes) -> np.ndarray:
        """log p(x_i | y = k, D without row i), in full, shape (n_samples, n_classes).

        Only the own class y_i's counts change; every other class's column is the posterior
        predictive given all the rows.
        """
        raise NotImplementedError

    # -- the evidence (bayesgen.closed_form.log_evidence) ---------------------------------

    def feature_simplices(self, estimates: xr.Dataset) -> tuple[np.ndarray, np.ndarray | None]:
        """The feature counts as Dirichlet simplices: ``(counts, mask)``, counts of shape
        (class, ..., outcome) with a simplex on the last axis, and the real outcomes
        (broadcastable to counts) or None where all are real."""
        raise NotImplementedError

    def feature_evidence(self, estimates: xr.Dataset) -> DirichletEvidence:
        """log p(X | y, λ) as a function of λ, the counts reduced once (call it with λ; its
        ``derivative`` gives d/dλ)."""
        counts, mask = self.feature_simplices(estimates)
        weight = self.simplex_prior_weights(estimates) if "prior_weight" in estimates else None
        return DirichletEvidence(counts, mask, weight=weight)

    def simplex_prior_weights(self, estimates: xr.Dataset) -> np.ndarray | float:
        """:meth:`prior_weights` in the layout of :meth:`feature_simplices` (the same here;
        the Bernoulli model adds the absent outcome's 2 − w)."""
        return self.prior_weights(estimates)

    def feature_log_evidence(
        self, estimates: xr.Dataset, alpha, *, per_class: bool = False
    ) -> np.ndarray:
        """log p(X | y, λ): the features of the training rows given their labels, with
        ``feature_prob`` integrated out, at λ = ``alpha``.

        Parameters
        ----------
        estimates : xarray.Dataset
            The fit, for its counts (its own ``alpha`` is not used).
        alpha : float or array-like
            λ > 0; any shape, one λ for every class. With ``per_class=True`` the shape must
            broadcast against ``(n_classes,)`` on its last axis, so that
            ``(n_alpha, n_classes)`` gives each class its own λ.
        per_class : bool, default False
            Return each class's term on a last axis of length n_classes; summed over it,
            they are the total.

        Returns
        -------
        numpy.ndarray
            Shape ``np.shape(alpha)``; with ``per_class=True``
            ``np.broadcast_shapes(np.shape(alpha), (n_classes,))``.

        Notes
        -----
        Per class k, a sum of Dirichlet–multinomial terms, one per simplex (the vocabulary of
        the multinomial model; each feature's Beta(λ, λ) of the Bernoulli model; each
        feature's K_j real categories of the categorical model):
        lnΓ(O λ) − lnΓ(T + O λ) + Σ_o [lnΓ(c_o + λ) − lnΓ(λ)]. The multinomial model's is the
        probability of each document's tokens in order, without the multinomial coefficient
        log(L_i! / Π_w x_iw!) that the ``log_likelihood`` group's rows include (it does not
        depend on λ).
        """
        return self.feature_evidence(estimates)(alpha, per_class=per_class)

    def log_evidence(self, estimates: xr.Dataset) -> float:
        """log p(y | a) + log p(X | y, λ) at the fitted a = ``class_alpha`` and λ = ``alpha``;
        under a hyperprior on λ, log p(X | y) with λ integrated out over it instead."""
        attrs = estimates.attrs
        if has_alpha_prior(estimates):  # not at λ = E[λ | D]: ∫ p(X | y, λ) Gamma(λ) dλ
            labels = class_log_evidence(estimates, attrs["class_alpha"])
            return float(labels + hyperprior.feature_log_evidence(self, estimates))
        # per_class: one λ per class enters class by class (a number broadcasts over them)
        features = self.feature_log_evidence(estimates, attrs["alpha"], per_class=True)
        return float(class_log_evidence(estimates, attrs["class_alpha"]) + features.sum())


def check_prior_mean(value):
    """``prior_mean``, refused if a name other than those of :data:`PRIOR_MEANS` (an array is
    checked against the data, :meth:`NaiveBayesFamily.given_prior_weight`)."""
    if isinstance(value, str) and value not in PRIOR_MEANS:
        raise ValueError(
            f"prior_mean: expected one of {', '.join(map(repr, PRIOR_MEANS))} or an array of "
            f"prior means; got {value!r}."
        )
    return value
