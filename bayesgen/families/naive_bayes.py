"""What the three naive Bayes blocks share: the fit loop and the Dirichlet posterior.

As scikit-learn's ``_BaseDiscreteNB``, :class:`NaiveBayesFamily` keeps one fit loop (validate,
count the classes, derive the add-λ and maximum-likelihood probabilities) and each subclass
supplies its features' statistics, the layout of their Dirichlet or Beta simplices and its
likelihood (the hooks are listed in :class:`NaiveBayesFamily`), from which the exact conjugate
posterior, the evidence, leave-one-out and the comparison follow.

Naive Bayes (counts N, class totals N_k, smoothing λ = ``alpha``):

* ``class_prob``   = (N_k + a) / (N + K a),            a = ``class_alpha``
* ``feature_prob`` = (count + λ) / (total + K λ) over each simplex of the model

These are the posterior means under Dirichlet(a) / Beta(λ, λ) / Dirichlet(λ) priors; the
``*_mle`` variables are the same with λ = 0.

Missing entries (the Bernoulli and categorical blocks, ``missing_values = True``): under
missing at random a missing entry's factor drops out of the likelihood, so each (class,
feature) cell counts only the rows observed in it. Where X has a NaN the statistics hold
``cell_count`` (class, feature) = Σ_i w_i [y_i = k, x_ij observed], and every formula takes it
in place of the class's rows N_k (:meth:`NaiveBayesFamily.cell_totals`): the Beta posterior
of a Bernoulli cell is (N_jk + λ, cell_count − N_jk + λ), a categorical feature's total is
the sum of its category counts. Without a NaN there is no ``cell_count`` and nothing changes.

With ``prior_mean="pooled"`` the feature prior has a shared mean instead of a uniform one,
the hierarchical Dirichlet of MacKay & Peto (1995): Dirichlet(λ O m) over each simplex of O
outcomes, m the add-½ frequencies of the training counts pooled over the classes (Beta(2λ m,
2λ (1 − m)) for the Bernoulli model), so that ``feature_prob`` = (count + λ O m) /
(total + O λ). The estimates then hold ``prior_weight`` = O m (1 everywhere would be add-λ),
and every concentration is λ times it (:meth:`NaiveBayesFamily.prior_weights`;
:mod:`bayesgen.families.naive_bayes_prior`). What the comparison checks is in
:mod:`bayesgen.families.naive_bayes_checks`.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import xarray as xr

import bayesgen.families.hyperprior as hyperprior
import bayesgen.families.naive_bayes_checks as checks
from bayesgen.families.base import Family
from bayesgen.families.class_prior import CLASS_PRIOR, class_log_evidence, loo_class_log_prob
from bayesgen.families.expected import Expected
from bayesgen.families.hyperprior import has_alpha_prior
from bayesgen.families.naive_bayes_prior import FeaturePrior, check_prior_mean
from bayesgen.families.presentation import Presentation, TopParameters
from bayesgen.families.results import Variable, dirichlet_marginal
from bayesgen.input.alpha import check_class_smoothing, check_smoothing
from bayesgen.input.data import TrainingData
from bayesgen.input.statistics import (
    CELL_COUNT,
    cell_counts,
    check_mergeable,
    total_weight,
    training_data,
)
from bayesgen.maths.counts import class_counts, observed_counts
from bayesgen.maths.dirichlet import add_lambda, dirichlet_draws, mode_of, per_class
from bayesgen.maths.evidence import DirichletEvidence

#: The statistic of fits with missing entries: the rows observed in each (class, feature) cell.


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


def naive_bayes_presentation(
    top_parameter_label: str, ppc_variables: tuple[str, ...], ppc_caption: str
) -> Presentation:
    """The :class:`~bayesgen.families.presentation.Presentation` of a naive Bayes block: π and
    ``feature_prob`` plotted, add-λ as the closed form, the most probable features ranked."""
    return Presentation(
        plot_variables=("class_prob", "feature_prob"),
        top_parameter_label=top_parameter_label,
        top_parameter_caption="most probable features",
        mean_label="add-λ",
        mean_caption="add-λ estimate",
        ppc_variables=ppc_variables,
        ppc_caption=ppc_caption,
    )


class NaiveBayesFamily(FeaturePrior, Family):
    """A naive Bayes block: π ~ Dirichlet(a) and a Dirichlet or Beta ``feature_prob``.

    This class supplies the statistics' loop, the closed forms, the exact posterior, the
    evidence, leave-one-out and the comparison; the prior mean of ``feature_prob`` and its
    weights are :class:`~bayesgen.families.naive_bayes_prior.FeaturePrior`'s. Subclasses
    set the class attributes of :class:`~bayesgen.families.base.Family` (``presentation``
    by :func:`naive_bayes_presentation`) and supply eleven hooks:

    * their features: :meth:`feature_statistics` (the counts of checked rows),
      :meth:`smoothing_terms` (add-λ's totals, outcomes and mask over them),
      :meth:`feature_simplices` (the counts as Dirichlet simplices, for the evidence) and
      :meth:`concentrations` (the Dirichlet or Beta concentration of ``feature_prob``);
    * the likelihood: :meth:`plug_in_log_joint`, :meth:`draw_log_joint` and
      :meth:`loo_feature_log_likelihood`;
    * the PyMC model (:meth:`pymc_model`) and simulation (:meth:`simulate_rows`,
      :meth:`predictive_statistics`, the statistics of the predictive checks);
    * the comparison's moments of ``feature_prob`` (:meth:`feature_moments`).

    All but :meth:`predictive_statistics` (which has the empty default of every block) are
    abstract. A subclass may override :meth:`integrated_log_joint` (where the exact predictive
    is not the add-λ plug-in), :meth:`aligned_statistics`, :meth:`ranked_probabilities`,
    :meth:`simplex_prior_weights` and :meth:`pooled_prior_weight` (simplices laid out other
    than the cells) and the shortcuts of :class:`~bayesgen.families.base.Family`.
    """

    smoothing_parameters = ("alpha",)
    #: Most ψ evaluations (cells × draws) for the hyperprior's per-draw joint statistic.
    JOINT_BUDGET = checks.JOINT_BUDGET

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
            The variables of :attr:`statistics` (and ``cell_count`` where an entry of X is
            missing, see the module's docstring) and attrs ``model``, ``n_samples`` (the total
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
            missing=self.missing_values,  # True, or the reason a NaN is refused
        )
        class_count = class_counts(data.y, len(data.classes), data.sample_weight)
        features = self.feature_statistics(data, class_count, **model_options)
        variables = {"class_count": (("class",), class_count)}
        variables.update(features.variables)
        cells = observed_counts(data.X, data.y, len(data.classes), data.sample_weight)
        if cells is not None:  # some entry is missing: each cell counts its observed rows
            variables["cell_count"] = (("class", "feature"), cells)
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
        alpha = check_class_smoothing(alpha, statistics["class"].values, "alpha")
        class_alpha = check_smoothing(class_alpha, "class_alpha")
        variables = {"class_count": (("class",), class_count)}
        variables |= CLASS_PRIOR.estimates(class_count, class_alpha)
        for name in self.statistics:
            if name not in ("class_count", "feature_count"):
                variables[name] = statistics[name]
        if CELL_COUNT in statistics:
            variables[CELL_COUNT] = statistics[CELL_COUNT]
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
        if CELL_COUNT in first or CELL_COUNT in second:  # a chunk had missing entries
            merged[CELL_COUNT] = (
                ("class", "feature"),
                self.cell_totals(first) + self.cell_totals(second),
            )
        merged.attrs = dict(first.attrs)
        merged.attrs["n_samples"] = total_weight(merged["class_count"].values)
        return merged

    def aligned_statistics(
        self, first: xr.Dataset, second: xr.Dataset
    ) -> tuple[xr.Dataset, xr.Dataset]:
        """Two statistics Datasets brought to the same shape before their counts add
        (default: as they are)."""
        return first, second

    def cell_totals(self, statistics: xr.Dataset) -> np.ndarray:
        """The rows each (class, feature) cell counts, shape (n_classes, n_features) or, without
        missing entries, (n_classes, 1): ``cell_count`` where X had a NaN (the rows observed
        there), else the class's rows N_k for every feature."""
        return cell_counts(statistics)

    @abstractmethod
    def smoothing_terms(self, statistics: xr.Dataset):
        """``(totals, n_outcomes, mask)`` of add-λ over the feature counts: ``feature_prob`` =
        (count + λ) / (total + n_outcomes λ), and 0 outside ``mask`` (None: everywhere)."""

    @abstractmethod
    def feature_statistics(
        self, data: TrainingData, class_count: np.ndarray, **options
    ) -> FeatureStatistics:
        """The (weighted, ``data.sample_weight``) feature counts of checked training data."""

    def class_log_terms(self, estimates: xr.Dataset) -> tuple[np.ndarray, np.ndarray]:
        """(order, finite part) of log π_k (:meth:`ClassPrior.log_terms
        <bayesgen.families.class_prior.ClassPrior.log_terms>`)."""
        return CLASS_PRIOR.log_terms(estimates)

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

    @abstractmethod
    def concentrations(
        self, estimates: xr.Dataset, *, posterior: bool
    ) -> tuple[tuple[str, ...], np.ndarray, bool]:
        """Posterior (or, ``posterior=False``, prior) concentration of ``feature_prob``.

        Returns ``(dims, concentration, beta)``: the simplex is the last axis of the
        concentration; ``beta`` marks a Beta pair (present, absent), whose first component is
        the parameter; a zero concentration is padding (the categorical model's missing
        categories).
        """

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
        """π, then ``feature_prob``, from their Dirichlet (Beta) laws; under a hyperprior on λ,
        λ from p(λ | D) first, then θ | λ per draw."""
        if has_alpha_prior(estimates):
            return hyperprior.conjugate_draws(
                self, estimates, rng, sample_shape, dtype, posterior=posterior
            )
        # class_prob first, then feature_prob: the order of the generator's calls fixes which
        # seeded draws each parameter gets.
        variables = {
            "class_prob": CLASS_PRIOR.draws(
                estimates, rng, sample_shape, dtype, posterior=posterior
            )
        }
        dims, concentration, beta = self.concentrations(estimates, posterior=posterior)
        draws = dirichlet_draws(rng, concentration, sample_shape, dtype)
        variables["feature_prob"] = (dims, draws[..., 0] if beta else draws)
        return variables

    def conjugate_mode(self, estimates: xr.Dataset) -> dict[str, Variable]:
        """The Dirichlet (Beta) modes of π and ``feature_prob``; under a hyperprior on λ, at
        λ's mode (see :func:`bayesgen.families.hyperprior.conjugate_mode`)."""
        if has_alpha_prior(estimates):
            return hyperprior.conjugate_mode(self, estimates)
        variables = {"class_prob": CLASS_PRIOR.mode(estimates)}
        dims, concentration, beta = self.concentrations(estimates, posterior=True)
        mode = mode_of(concentration)
        variables["feature_prob"] = (dims, mode[..., 0] if beta else mode)
        return variables

    def exact_marginals(self, estimates: xr.Dataset) -> dict:
        """π and ``feature_prob`` componentwise Beta(a_j, a0 − a_j) from their Dirichlet (or
        Beta) concentrations; under a hyperprior on λ only π (θ's marginal is then a mixture
        over p(λ | D), left to draws)."""
        marginals = {"class_prob": CLASS_PRIOR.marginal(estimates)}
        if not has_alpha_prior(estimates):
            dims, concentration, beta = self.concentrations(estimates, posterior=True)
            marginals["feature_prob"] = dirichlet_marginal(dims, concentration, beta=beta)
        return marginals

    # -- the comparison (bayesgen.checks.comparison) -----------------------------------------

    def expected(
        self,
        estimates: xr.Dataset,
        *,
        alpha: float | hyperprior.AlphaPosterior | None,
        class_alpha: float,
        options: dict,
        map_method: str | None,
    ) -> list[Expected]:
        """π under Dirichlet(a) and ``feature_prob`` under Dirichlet(λ) (Beta(λ, λ)); with
        ``alpha`` a :class:`~bayesgen.families.hyperprior.AlphaPosterior` (a Gamma hyperprior on
        λ), mixtures over p(λ | D) (see :mod:`bayesgen.families.naive_bayes_checks`)."""
        return checks.naive_bayes_expected(self, estimates, alpha, class_alpha)

    def feature_expected(self, estimates: xr.Dataset, alpha: float) -> Expected:
        """The :class:`~bayesgen.families.expected.Expected` of ``feature_prob`` under λ =
        ``alpha``, from the subclass's :meth:`feature_moments`."""
        return checks.feature_expected(self, estimates, alpha)

    @abstractmethod
    def feature_moments(self, estimates: xr.Dataset, alpha: float) -> dict:
        """The posterior moments and mode of ``feature_prob`` under λ = ``alpha``.

        Returns the keywords ``keep`` (the cells that exist), ``closed_form`` (add-λ),
        ``closed_form_sd``, ``closed_form_kurtosis``, ``expected_map`` and ``status`` (of
        :func:`bayesgen.maths.dirichlet.simplex_mode`), and ``beta`` for a Beta(λ, λ) prior,
        of :func:`bayesgen.families.expected.simplex_block`.
        """

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
        hyperprior on λ, Σ log θ given each draw's own λ, within :attr:`JOINT_BUDGET`
        (:func:`bayesgen.families.naive_bayes_checks.naive_bayes_joint_statistics`)."""
        return checks.naive_bayes_joint_statistics(
            self,
            estimates,
            posterior,
            alpha=alpha,
            class_alpha=class_alpha,
            budget=self.JOINT_BUDGET,
        )

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

    @abstractmethod
    def loo_feature_log_likelihood(self, estimates: xr.Dataset, X, y_codes) -> np.ndarray:
        """log p(x_i | y = k, D without row i), in full, shape (n_samples, n_classes).

        Only the own class y_i's counts change; every other class's column is the posterior
        predictive given all the rows.
        """

    # -- the evidence (bayesgen.closed_form.log_evidence) ---------------------------------

    @abstractmethod
    def feature_simplices(self, estimates: xr.Dataset) -> tuple[np.ndarray, np.ndarray | None]:
        """The feature counts as Dirichlet simplices: ``(counts, mask)``, counts of shape
        (class, ..., outcome) with a simplex on the last axis, and the real outcomes
        (broadcastable to counts) or None where all are real."""

    def feature_evidence(self, estimates: xr.Dataset) -> DirichletEvidence:
        """log p(X | y, λ) as a function of λ, the counts reduced once (call it with λ; its
        ``derivative`` gives d/dλ)."""
        counts, mask = self.feature_simplices(estimates)
        weight = self.simplex_prior_weights(estimates) if "prior_weight" in estimates else None
        return DirichletEvidence(counts, mask, weight=weight)

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
