"""The machinery every bayesgen estimator shares: fit, predict, save, scikit-learn's tags.

``fit`` is three steps: the closed-form statistics and estimates of the model's family
(:mod:`bayesgen.families`), the PyMC model on those statistics or the exact conjugate
posterior (:mod:`bayesgen.inference.sampling`), and the MAP point. Predictions average p(y | x) over
the posterior draws, chunk by chunk. The public estimators (:mod:`bayesgen.estimators.models`) add
their parameters, their family and their fitted attributes.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import ClassVar

import numpy as np
import xarray as xr
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import DataConversionWarning, NotFittedError

from bayesgen.estimators.hyperparameters import FittedHyperparameters
from bayesgen.estimators.nuts_fit import NutsFit
from bayesgen.estimators.prediction import PosteriorPrediction
from bayesgen.estimators.semi_supervised import (
    EXPECTED_STATISTICS,
    SEMI_SUPERVISED_ATTRIBUTES,
    SemiSupervisedFit,
)
from bayesgen.estimators.workflow import GenerativeWorkflow
from bayesgen.families import Family
from bayesgen.inference import sampling as inference
from bayesgen.inference import semi_supervised, semi_supervised_dask
from bayesgen.inference.conjugate import ConjugatePosterior, Lazy
from bayesgen.inference.unlabelled_weight import fit_at_chosen_weight
from bayesgen.input import distributed, statistics
from bayesgen.input.labels import unlabelled_rows
from bayesgen.input.params import INFERENCE_RULES, check_param
from bayesgen.io import model_files as io


class GenerativeClassifier(
    PosteriorPrediction,
    GenerativeWorkflow,
    SemiSupervisedFit,
    NutsFit,
    FittedHyperparameters,
    ClassifierMixin,
    BaseEstimator,
):
    """Shared fit/predict machinery; subclasses name the model and its closed form.

    Examples
    --------
    Every estimator is one; the methods below work alike for all five.

    >>> from bayesgen import MultinomialNB
    >>> from bayesgen.estimators.classifier import GenerativeClassifier
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, draws=200, random_seed=0)
    >>> isinstance(est, GenerativeClassifier)
    True
    >>> est.fit(X, y).predict_proba([[0, 1, 3]]).round(2)
    array([[0.06, 0.94]])
    >>> low, high = est.predict_proba_interval([[0, 1, 3]], prob=0.9)
    >>> bool((low <= est.predict_proba([[0, 1, 3]])).all())
    True
    """

    #: The model family (:mod:`bayesgen.families`): everything that makes the model itself.
    _family: Family

    @property
    def model_(self) -> Family:
        """The model this estimator fits (a :class:`bayesgen.families.base.Family`): the one
        way the layers above the estimators reach it (checks, plots, reports, the CLI).

        Read-only; the same object before and after ``fit``.

        Examples
        --------
        >>> from bayesgen import MultinomialNB
        >>> MultinomialNB().model_.name
        'multinomial_nb'
        """
        return self._family

    # -- fitting -------------------------------------------------------------------------

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
        """Fit the posterior to X and y; returns self.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
            Or a ``dask.array`` (dense or sparse chunks) or ``dask.dataframe``: the statistics
            are then reduced chunk by chunk on Dask and no rows are kept (no
            ``observed_data``); see :mod:`bayesgen.input.distributed`, and Notes for
            unlabelled rows in it.
        y : array-like of shape (n_samples,)
            A Dask array or Series with X's row chunks where X is a Dask collection. A
            missing label (None, NaN) marks an unlabelled row, and so does
            ``unlabelled_label``: see Notes.
        feature_names : sequence of str, optional
            Column names for X when it has none (e.g. a vectorizer's vocabulary for a sparse
            bag-of-words); they become the ``feature`` coordinate and ``feature_names_in_``.
        sample_weight : array-like of shape (n_samples,), optional
            Finite weights ≥ 0 summing to at most 2**52 (float64 holds whole counts exactly up
            to 2**53): row i counts w_i times in the sufficient statistics, so integer
            weights equal repeated rows and zero weights equal dropping the rows (their class
            too, when no other row has it); see :mod:`bayesgen.input.statistics`. NUTS needs whole
            numbers (its model observes counts); ``inference="conjugate"`` takes any. The
            training rows (``y`` in ``observed_data``, X in ``constant_data``) are those of
            positive weight and, where any weight differs from 1, ``constant_data`` holds the
            weights as ``sample_weight`` (obs); the ``log_likelihood``
            group's rows are then the unweighted log p(x_i, y_i | θ) of each row, and exact
            leave-one-out (:func:`bayesgen.loo_proba`) refuses such a fit.
        unlabelled_label : int, str or None, default None
            The label that marks an unlabelled row besides None/NaN: ``-1`` for integer
            labels as ``sklearn.semi_supervised`` marks them, or a string such as ``""``. Not
            implied: -1 is an ordinary class where the labels are -1 and 1.
        unlabelled_weight : float in [0, 1] or "loo", default 1.0
            λ_u, how much an unlabelled row counts beside a labelled one (Nigam's EM-λ); 0
            fits the labelled rows alone and only predicts the unlabelled ones. ``"loo"``
            chooses it from (0, 0.01, 0.03, 0.1, 0.3, 1) by the exact leave-one-out log score
            of the labelled rows
            (:func:`~bayesgen.inference.unlabelled_weight.choose_unlabelled_weight`, a fit of
            a single draw per value), then fits at the λ_u chosen: the fit of
            ``unlabelled_weight=choice.best``, its ``closed_form_.attrs`` recording
            ``unlabelled_weight`` (the λ_u chosen), ``unlabelled_weight_rule="loo"``,
            ``unlabelled_weight_grid`` and ``unlabelled_weight_elpd`` (each value's score).
            Not with ``sample_weight`` (leaving a weighted row out is not defined) nor Dask
            input (the rows are not kept). There is no ``"evidence"`` rule: below λ_u = 1 the
            objective is no model's likelihood, so p(data | λ_u) compares nothing.

        Raises
        ------
        TypeError, ValueError
            For a parameter of the wrong type or value (the message names it), before any
            data is read or any model compiled. For unlabelled rows that cannot be fitted
            (all of them, one labelled class; NUTS on Dask input), naming ``y``.

        Warns
        -----
        UserWarning
            NUTS with fewer than ``ess_min`` draws in all or fewer than 200 tuning steps.
        DataConversionWarning
            For a column-vector y of shape (n_samples, 1), as scikit-learn's classifiers.

        Notes
        -----
        Semi-supervised fit: with unlabelled rows (see :mod:`bayesgen.inference.semi_supervised` and
        docs/semi-supervised.md), the classes are those of the labelled rows (two or more), EM finds
        the MAP with each unlabelled row's class latent (``map_``), and ``closed_form_`` holds the
        closed form at EM's completed expected statistics (attrs ``unlabelled_rows``,
        ``em_iterations``, ``em_converged``, ``unlabelled_weight``, ``em_stationarity_gap``).
        With ``inference="conjugate"`` the posterior is drawn by Gibbs sampling over the
        unlabelled rows' classes (attrs ``semi_supervised_posterior="gibbs"``;
        :mod:`bayesgen.inference.semi_supervised_gibbs`), exact in the limit of its draws, with
        ``posterior_label_distributions_`` each row's posterior class probabilities; where
        ``unlabelled_weight`` < 1 or a weight is fractional there is no latent-label model, and
        the posterior is the conjugate one at EM's statistics (``"expected_statistics"``), an
        approximation. ``inference="nuts"`` samples the posterior with the unlabelled rows'
        labels summed out of the likelihood (attrs ``semi_supervised_posterior="nuts"``;
        :mod:`bayesgen.inference.semi_supervised_nuts`). ``transduction_`` holds every
        training row's label (the given one, or the most probable class at the MAP for an
        unlabelled row), ``label_distributions_`` p(y | x_i, θ̂) (one-hot for a labelled row),
        and ``em_log_likelihood_`` the EM's trace. ``observed_data`` holds the labelled rows.
        With every row labelled the fit is the supervised one, bit for bit.

        Unlabelled rows in Dask input (:mod:`bayesgen.inference.semi_supervised_dask`): the
        first pass over the chunks reduces the labelled rows' statistics and counts the
        unlabelled ones, then EM makes one pass per iteration, each chunk's responsibilities
        and weighted statistics reduced on the cluster: the same MAP and iterations as in
        memory, to rounding (attrs ``em_dask_passes``, the iterations + 2). No rows are kept,
        so there is no Gibbs sampler: the posterior is the conjugate one at EM's completed
        statistics (``"expected_statistics"``, as for λ_u < 1), and there is no
        ``transduction_`` or ``label_distributions_`` (``predict(X)`` labels the rows).
        ``inference="conjugate"`` only; ``NaiveBayes`` (mixed columns) refuses unlabelled
        rows in Dask input.
        """
        self._validate_params()
        _warn_column_vector(y)
        unlabelled_weight = semi_supervised.check_unlabelled_weight(unlabelled_weight)
        for name in SEMI_SUPERVISED_ATTRIBUTES:  # a refit replaces a semi-supervised one
            self.__dict__.pop(name, None)
        dask_input = distributed.has_dask_input(X, y, sample_weight)
        unlabelled = None if dask_input else unlabelled_rows(y, unlabelled_label=unlabelled_label)
        if unlabelled is not None and unlabelled.any():
            if unlabelled_weight == "loo":
                return fit_at_chosen_weight(
                    self,
                    X,
                    y,
                    unlabelled_label=unlabelled_label,
                    feature_names=feature_names,
                    sample_weight=sample_weight,
                )
            return self._fit_semi_supervised(
                X, y, unlabelled, feature_names, sample_weight, unlabelled_weight
            )
        if dask_input and type(self)._statistics is GenerativeClassifier._statistics:
            # The first pass over the chunks finds the unlabelled rows; EM then makes one more
            # pass per iteration.
            stats, em = semi_supervised_dask.fit_closed_form(
                self._family,
                X,
                y,
                estimates_of=self._estimates,
                data_options=self._data_options(),
                inference=self.inference,
                feature_names=feature_names,
                sample_weight=sample_weight,
                unlabelled_label=unlabelled_label,
                unlabelled_weight=unlabelled_weight,
            )
            if em is not None:  # no rows kept, so no Gibbs sampler: the expected statistics'
                stats.attrs["semi_supervised_posterior"] = EXPECTED_STATISTICS
                self.em_log_likelihood_ = em.log_likelihood
                return self._set_conjugate(stats, None)
        else:
            if dask_input:  # NaiveBayes makes its own statistics (its column plan)
                semi_supervised_dask.refuse_unlabelled(self, unlabelled_label, unlabelled_weight)
            stats = self._closed_form(
                X, y, feature_names=feature_names, sample_weight=sample_weight
            )
        self._check_nuts_weights(sample_weight)
        if self.inference == "conjugate":  # the exact posterior, no draws until asked
            observed = None
            if "dask_chunks" not in stats.attrs:
                observed = self._observed_group(stats, X, y, sample_weight)
            return self._set_conjugate(stats, observed)
        idata = self._infer(stats)
        if "dask_chunks" not in stats.attrs:  # dask input is out of core: no rows kept
            self._add_observed(idata, stats, X, y, sample_weight)
        return self.set_posterior(stats, idata, self._find_map(stats) if self.compute_map else None)

    def partial_fit(self, X, y, classes=None, sample_weight=None, *, feature_names=None):
        """Add a chunk of rows to the fit; returns self.

        The chunk's sufficient statistics are merged into those of the earlier calls (counts
        add; GDA's and QDA's class means and scatter by Chan's parallel update), the closed
        form is recomputed from the merged statistics, and the posterior is refreshed from
        it: exact draws for ``inference="conjugate"`` (cheap), a new NUTS run otherwise (the
        cost of a whole fit at every call; call it on large chunks, or fit once at the end).
        After any sequence of chunks the closed form equals that of :meth:`fit` on all their
        rows (to rounding), and so does a seeded conjugate posterior. A fitted estimator (by
        :meth:`fit` too) is continued; :meth:`fit` starts afresh.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
            The same columns in every call.
        y : array-like of shape (n_samples,)
            One class is enough in a chunk.
        classes : array-like, optional
            Every class the stream will hold, on the first call (scikit-learn's convention);
            classes without rows yet have zero counts. Default: the classes of the first
            chunk's y, which must then hold two or more; a later label outside them is
            refused. On a later call it must equal ``classes_``.
        sample_weight : array-like of shape (n_samples,), optional
            As for :meth:`fit`.
        feature_names : sequence of str, optional
            As for :meth:`fit`.

        Notes
        -----
        The chunks' rows are not kept (memory stays that of the statistics): the fit has no
        ``observed_data`` or ``log_likelihood`` group, and :meth:`training_rows`, predictive
        simulation and leave-one-out raise an error naming partial_fit. ``closed_form_.attrs
        ["partial_fit_calls"]`` counts the chunks.
        """
        self._validate_params()
        _warn_column_vector(y)
        first = not hasattr(self, "closed_form_")
        if first:
            known = None if classes is None else statistics.check_classes(classes)
        else:
            self._check_n_features(X)
            known = self.classes_
            if classes is not None and not np.array_equal(statistics.check_classes(classes), known):
                raise ValueError(
                    f"classes: expected those of the first partial_fit, {known.tolist()[:10]}; "
                    f"got {np.unique(np.asarray(classes)).tolist()[:10]}."
                )
        chunk = self._statistics(
            X, y, feature_names=feature_names, sample_weight=sample_weight, classes=known
        )
        calls = 1
        if not first:
            calls += int(self.closed_form_.attrs.get("partial_fit_calls", 1))
            previous = self._family.statistics_of(self.closed_form_)
            chunk = self._family.merge_statistics(previous, chunk)
        stats = self._estimates(chunk)
        stats.attrs["partial_fit_calls"] = calls
        self._check_nuts_weights(sample_weight)
        if self.inference == "conjugate":
            return self._set_conjugate(stats, None)
        idata = self._infer(stats)
        return self.set_posterior(stats, idata, self._find_map(stats) if self.compute_map else None)

    def _closed_form(self, X, y, feature_names=None, sample_weight=None) -> xr.Dataset:
        """The family's closed form of X, y: their sufficient statistics, then the estimates."""
        statistics = self._statistics(
            X, y, feature_names=feature_names, sample_weight=sample_weight
        )
        estimates = self._estimates(statistics)
        if "dask_chunks" in statistics.attrs:
            estimates.attrs["dask_chunks"] = statistics.attrs["dask_chunks"]
        return estimates

    def _statistics(
        self, X, y, *, feature_names=None, sample_weight=None, classes=None
    ) -> xr.Dataset:
        """The family's sufficient statistics of X, y (``_data_options`` go with them);
        chunk by chunk on Dask for Dask input (:mod:`bayesgen.input.distributed`)."""
        if distributed.has_dask_input(X, y, sample_weight):
            return distributed.sufficient_statistics(
                self._family,
                X,
                y,
                feature_names=feature_names,
                sample_weight=sample_weight,
                classes=classes,
                **self._data_options(),
            )
        return self._family.sufficient_statistics(
            X,
            y,
            feature_names=feature_names,
            sample_weight=sample_weight,
            classes=classes,
            **self._data_options(),
        )

    def _data_options(self) -> dict:
        """Options of the statistics beyond X and y (``binarize``, ``n_categories``)."""
        return {}

    def _estimates(self, statistics: xr.Dataset) -> xr.Dataset:
        """The closed-form estimates from sufficient statistics, at this estimator's prior."""
        return self._family.from_statistics(statistics, **self._prior_options())

    def _prior_options(self) -> dict:
        """The prior's parameters as the family's ``from_statistics`` takes them."""
        return {"class_alpha": self.class_alpha}

    def set_posterior(
        self, closed_form: xr.Dataset, idata: xr.DataTree | None, map_point=None, *, posterior=None
    ):
        """Hold a posterior as :meth:`fit` leaves it (used to load a saved model); returns self.

        Parameters
        ----------
        closed_form : xarray.Dataset
            The family's closed-form Dataset (``closed_form_``).
        idata : xarray.DataTree or None
            The posterior and its companion groups (``idata_``); None with ``posterior``:
            materialised from it on first access.
        map_point : xarray.Dataset, optional
            The MAP point (``map_``).
        posterior : bayesgen.inference.conjugate.ConjugatePosterior, optional
            The exact conjugate posterior (``posterior_``) of a conjugate fit.
        """
        if posterior is not None and not isinstance(posterior, ConjugatePosterior):
            raise TypeError(
                f"posterior: expected a ConjugatePosterior or None; got {type(posterior).__name__}."
            )
        if idata is None and posterior is None:
            raise ValueError(
                "idata: expected a DataTree (or a posterior to draw it from); got None."
            )
        self.closed_form_ = closed_form
        self.__dict__.pop("posterior_", None)
        if posterior is not None:
            self.posterior_ = posterior
        self.idata_ = Lazy(posterior.idata) if idata is None else idata
        self.map_ = map_point
        self._set_fitted_attributes()
        return self

    @property
    def idata_(self) -> xr.DataTree:
        """The posterior draws and their companion groups (an ``xarray.DataTree``).

        A conjugate fit holds its exact posterior as parameters (``posterior_``) and makes
        this tree on first access: the same draws, seed for seed, as a fit that drew at once
        (``chains`` x ``draws`` of every parameter, ``prior_draws`` prior draws, the training
        rows and their pointwise log-likelihood), kept from then on.
        """
        return self._held("idata_")

    @idata_.setter
    def idata_(self, value) -> None:
        self.__dict__["_idata"] = value

    @idata_.deleter
    def idata_(self) -> None:
        self.__dict__.pop("_idata", None)

    @property
    def map_(self) -> xr.Dataset | None:
        """The MAP point (``compute_map``), or None; a conjugate fit computes it on first
        access (its exact mode)."""
        return self._held("map_")

    @map_.setter
    def map_(self, value) -> None:
        self.__dict__["_map"] = value

    def _held(self, name: str):
        """What the fit stored for the attribute ``name`` (``idata_`` or ``map_``) under
        ``_idata`` / ``_map``, a :class:`~bayesgen.inference.conjugate.Lazy` one made now."""
        key = "_" + name.removesuffix("_")
        # ``name`` itself in the instance's dict: an estimator pickled before it was a property.
        if key not in self.__dict__ and name not in self.__dict__:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        held = self.__dict__.get(key, self.__dict__.get(name))
        return held.value() if isinstance(held, Lazy) else held

    def _set_conjugate(self, stats: xr.Dataset, observed: xr.Dataset | None):
        """Hold the exact conjugate posterior of ``stats``; ``idata_`` is drawn on first use."""
        posterior = ConjugatePosterior(
            stats,
            random_seed=self.random_seed,
            chains=self.chains,
            draws=self.draws,
            prior_draws=self.prior_draws,
            dtype=self.dtype,
            observed=observed,
            model_family=self._family,
        )
        if not self.compute_map:
            map_point = None
        elif isinstance(self.compute_map, str):  # "find_map": PyMC's optimiser, now
            map_point = self._find_map(stats)
        else:  # the exact mode, computed when first asked for
            map_point = Lazy(inference.conjugate_map, stats)
        return self.set_posterior(stats, None, map_point, posterior=posterior)

    def _observed_group(self, stats: xr.Dataset, X, y, sample_weight) -> xr.Dataset:
        """The ``observed_data`` group of the training rows, made at fit (the rows are not
        kept otherwise); the ``log_likelihood`` group waits for the draws."""
        return self._observed_data(stats, X, y, sample_weight)[0]

    #: The class's own parameters, beside ``INFERENCE_RULES``.
    _parameter_rules: ClassVar[dict] = {}

    @classmethod
    def parameter_rules(cls) -> dict:
        """The rule of every parameter (:mod:`bayesgen.input.params`): what it may be, and how
        a model file stores it.

        Examples
        --------
        >>> from bayesgen import MultinomialNB
        >>> MultinomialNB.parameter_rules()["draws"].expected
        'an integer >= 1'
        """
        return {**INFERENCE_RULES, **cls._parameter_rules}

    def _validate_params(self) -> None:
        """Check every parameter against its rule (:meth:`parameter_rules`)."""
        for name, rule in self.parameter_rules().items():
            check_param(name, getattr(self, name), rule, model=self._family.name)
        if self.inference == "conjugate":
            self._check_conjugate()
        else:
            self._warn_short_nuts()

    def _check_conjugate(self) -> None:
        """Raise when the chosen prior has no conjugate posterior."""

    def _set_fitted_attributes(self) -> None:
        stats = self.closed_form_
        self.classes_ = stats["class"].values
        self.n_features_in_ = stats.sizes["feature"]
        if stats.attrs.get("feature_names_given"):
            self.feature_names_in_ = stats["feature"].values.astype(object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.class_count_ = stats["class_count"].values
        # The prior the posterior was fitted with: class_alpha, or the one the evidence chose.
        self.class_alpha_ = float(stats.attrs["class_alpha"])
        means = self.posterior_mean()
        self.class_log_prior_ = np.log(means["class_prob"].values)
        self._set_point_attributes(means)

    def _set_point_attributes(self, means: xr.Dataset) -> None:
        raise NotImplementedError

    # -- posterior summaries ---------------------------------------------------------------

    def posterior_mean(self) -> xr.Dataset:
        """Posterior means of every parameter (dims class, feature, ...), in float64."""
        self.check_fitted()
        exact = self.__dict__.get("posterior_")
        if exact is not None and exact.is_exact():
            return exact.mean()
        # Accumulate in float64 without a float64 copy of (possibly gigabytes of) float32 draws.
        return (
            self.idata_["posterior"]
            .to_dataset()
            .mean(("chain", "draw"), dtype="float64", skipna=False)
        )

    # -- persistence -------------------------------------------------------------------------

    def save(self, path) -> Path:
        """Write the fitted model to one NetCDF file and return its path (see
        :func:`bayesgen.io.model_files.save`).

        Parameters
        ----------
        path : str or os.PathLike
            The ``.nc`` file to write; a file already there is replaced atomically (it stays
            intact if the write fails).
        """
        return io.save(self, path)

    def _check_n_features(self, X) -> None:
        # scikit-learn's words, naming the class, which its estimator checks look for; the
        # data checks behind this compare the feature names.
        n_columns = _n_columns(X)
        if n_columns is not None and n_columns != self.n_features_in_:
            raise ValueError(
                f"X has {n_columns} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input. Pass the same columns (or the same "
                "vectorizer) as at fit."
            )

    def check_fitted(self) -> None:
        """Raise scikit-learn's ``NotFittedError`` unless :meth:`fit` has run."""
        # Not hasattr(self, "idata_"), which would draw a lazy posterior.
        if "_idata" not in self.__dict__ and "idata_" not in self.__dict__:
            raise NotFittedError(
                f"This {type(self).__name__} is not fitted yet; call fit(X, y) first."
            )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True  # GDA densifies (its scatter matrix is dense anyway)
        tags.non_deterministic = self.random_seed is None
        return tags


def _shape(data) -> tuple[int, ...] | None:
    """Shape of an array, DataFrame, sparse matrix or nested list; None where it has none."""
    try:
        return tuple(data.shape) if hasattr(data, "shape") else np.shape(data)
    except (TypeError, ValueError):  # ragged lists: the data checks report them
        return None


def _n_columns(X) -> int | None:
    shape = _shape(X)
    return shape[1] if shape is not None and len(shape) == 2 else None


def _warn_column_vector(y) -> None:
    shape = _shape(y)
    if shape is not None and len(shape) == 2 and shape[1] == 1:
        # scikit-learn's words, which its estimator checks look for.
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected. Please change the "
            "shape of y to (n_samples,), for example using ravel().",
            DataConversionWarning,
            stacklevel=3,
        )
