"""The Bayesian workflow of a fitted estimator: its PyMC model, its training rows, and data
sets simulated from its prior and posterior.

:class:`GenerativeWorkflow` is a mixin of
:class:`bayesgen.estimators.classifier.GenerativeClassifier`
(as scikit-learn's ``ClassifierMixin``): it stores the training rows and their pointwise
log-likelihood at ``fit`` (:mod:`bayesgen.inference.observed`) and simulates from them
(:mod:`bayesgen.inference.simulation`). It reads the estimator's ``_family``, ``closed_form_``,
``idata_`` and ``_build_model``.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from bayesgen.inference import observed, simulation
from bayesgen.inference.conjugate import Lazy
from bayesgen.input.labels import check_labels
from bayesgen.input.params import random_generator


class GenerativeWorkflow:
    """``pymc_model``, ``training_rows`` and prior and posterior predictive simulation.

    Examples
    --------
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    >>> est = est.fit(X, y)
    >>> from bayesgen.estimators.workflow import GenerativeWorkflow
    >>> isinstance(est, GenerativeWorkflow)
    True
    >>> rows, codes = est.training_rows()
    >>> rows.shape, codes.tolist()
    ((4, 3), [0, 0, 1, 1])
    >>> [rv.name for rv in est.pymc_model().observed_RVs]
    ['class_count', 'feature_count']
    """

    def _add_observed(self, idata: xr.DataTree, stats: xr.Dataset, X, y, sample_weight=None):
        """The training rows (``y`` in ``observed_data``, X in ``constant_data``) and their
        pointwise log-likelihood (``log_likelihood``), see :mod:`bayesgen.inference.observed`: the
        rows
        of positive weight, the weights kept as ``sample_weight`` where any differs from 1."""
        data, rows, codes = self._observed_data(stats, X, y, sample_weight)
        observed.add_training_data(idata, data)
        posterior = idata["posterior"].to_dataset()
        idata["log_likelihood"] = observed.log_likelihood(
            self._family, stats, rows, codes, posterior
        )

    def _observed_data(self, stats: xr.Dataset, X, y, sample_weight=None):
        """The training data (:func:`bayesgen.inference.observed.training_data`), and the checked
        rows
        and class codes it holds (a conjugate fit makes it at fit and the log-likelihood when
        drawn)."""
        # The same checks as the fit's, so the rows are those the model saw (binarized).
        rows = self._family.training_features(stats, X)
        codes, labels = check_labels(y)
        weights = None
        if sample_weight is not None:
            weights = np.asarray(sample_weight, dtype=np.float64).ravel()
            keep = np.flatnonzero(weights > 0)
            rows, codes, weights = rows[keep], codes[keep], weights[keep]
            # Classes whose rows all had weight 0 are not in the fit.
            codes = np.searchsorted(stats["class"].values, labels[codes])
            weights = None if np.all(weights == 1) else weights
        data = observed.training_data(self._family, stats, rows, codes)
        if weights is not None:
            data["sample_weight"] = (("obs",), weights)
            data["sample_weight"].attrs["meaning"] = (
                "row i counts w_i times in the statistics; the log_likelihood rows are unweighted"
            )
        return data, rows, codes

    def pymc_model(self):
        """The fitted model as a ``pymc.Model`` (on the training data's sufficient statistics).

        Its observed variables are the statistics (class counts, word counts, ...), so
        ``pm.sample_prior_predictive`` and ``pm.sample_posterior_predictive`` simulate them;
        :meth:`sample_posterior_predictive` simulates whole rows instead.
        """
        self.check_fitted()
        return self._build_model(self.closed_form_)

    def training_rows(self):
        """The training rows and labels as the model saw them (``constant_data`` and
        ``observed_data``).

        Returns
        -------
        X : numpy.ndarray or scipy.sparse.csr_array of shape (n_samples, n_features)
            After the model's checks (``binarize`` applied); sparse where X was.
        y_codes : numpy.ndarray of int
            Each row's class as an index into ``classes_``.

        Raises
        ------
        ValueError
            For a fit by :meth:`partial_fit` or on dask input, which keep no rows, or one
            without the group.
        """
        self.check_fitted()
        tree = self._rows_tree()
        if "observed_data" not in tree.children and "dask_chunks" in self.closed_form_.attrs:
            raise ValueError(
                "training_rows: this model was fitted on dask input "
                f"({self.closed_form_.attrs['dask_chunks']} chunks), which is out of core: only "
                "the chunks' sufficient statistics were gathered, no rows. fit(X, y) on "
                "in-memory rows keeps them for predictive checks and leave-one-out."
            )
        if "observed_data" not in tree.children and self.closed_form_.attrs.get(
            "partial_fit_calls"
        ):
            raise ValueError(
                "training_rows: this model was fitted by partial_fit, which keeps no training "
                "rows (only their sufficient statistics); fit(X, y) on all the rows keeps them "
                "for predictive checks and leave-one-out."
            )
        return observed.training_rows(tree)

    def training_weights(self) -> np.ndarray | None:
        """The weights of the training rows (:meth:`training_rows`) where any differs from
        1 (``constant_data["sample_weight"]``), else None."""
        self.check_fitted()
        tree = self._rows_tree()
        if "constant_data" not in tree.children:
            return None
        weights = tree["constant_data"].to_dataset().get("sample_weight")
        return None if weights is None else weights.values

    def _rows_tree(self) -> xr.DataTree:
        """A tree holding the training rows: ``idata_``, or, for a conjugate fit that has not
        drawn its posterior yet, the rows it kept at fit (leave-one-out and simulation need
        the rows, not thousands of draws of every parameter)."""
        held = self.__dict__.get("_idata")
        exact = self.__dict__.get("posterior_")
        kept = getattr(exact, "observed", None)
        if isinstance(held, Lazy) and held.made is None and kept is not None:
            tree = xr.DataTree()
            observed.add_training_data(tree, kept)
            return tree
        return self.idata_

    def sample_posterior_predictive(
        self, random_seed=None, *, draws: int | None = None, keep_rows: bool = True
    ) -> xr.DataTree:
        """Simulate data sets like the training data from the posterior; returns ``idata_``.

        Adds (or replaces) two groups (see :mod:`bayesgen.inference.simulation`):

        * ``posterior_predictive``: ``y`` (chain, draw, obs), for every posterior draw θ a
          label drawn from p(y | x_i, θ) for each training row's features, named like
          ``observed_data`` and ``log_likelihood``, so that ``az.loo_pit``,
          ``az.plot_loo_pit``, ``az.plot_ppc_dist`` and ``az.plot_ppc_rootogram`` work on
          ``idata_`` with no ``var_names``;
        * ``posterior_predictive_rows``: for ``draws`` posterior draws θ, every training row
          drawn again from p(x | y_i, θ) (the labels stay, and for text so do the document
          lengths): the rows ``X`` (chain, draw, obs, feature) and the statistics that
          ``constant_data`` holds for the training rows, which
          :func:`bayesgen.plotting.workflow.plot_ppc` draws.

        Parameters
        ----------
        random_seed : int, numpy.random.Generator or None, default None
            Seed (an integer >= 0) or Generator of the simulation; None draws fresh entropy.
        draws : int, optional
            Posterior draws to simulate data sets from, spread evenly over the chains; all by
            default. The labels are drawn for every draw.
        keep_rows : bool, default True
            Keep the simulated rows; False keeps only their statistics (text at scale).

        Returns
        -------
        xarray.DataTree
            ``idata_``, with the new group.
        """
        return self._simulate("posterior", random_seed, draws, keep_rows)

    def sample_prior_predictive(
        self, random_seed=None, *, draws: int | None = None, keep_rows: bool = True
    ) -> xr.DataTree:
        """Simulate data sets like the training data from the prior; returns ``idata_``.

        As :meth:`sample_posterior_predictive`, from the draws of the ``prior`` group (see
        ``prior_draws``), into the ``prior_predictive`` and ``prior_predictive_rows`` groups.

        Parameters
        ----------
        random_seed : int, numpy.random.Generator or None, default None
            Seed (an integer >= 0) or Generator of the simulation; None draws fresh entropy.
        draws : int, optional
            Prior draws to simulate from, spread evenly over the chains; all by default.
        keep_rows : bool, default True
            Keep the simulated rows; False keeps only their statistics (text at scale).
        """
        return self._simulate("prior", random_seed, draws, keep_rows)

    def _simulate(self, source: str, random_seed, draws, keep_rows) -> xr.DataTree:
        rng = random_generator(random_seed)  # a bad seed is refused before any work
        X, y_codes = self.training_rows()
        if source not in self.idata_.children:
            raise ValueError(
                f"prior_draws: this fit has no {source} group to simulate from; fit with "
                "prior_draws > 0."
            )
        groups = simulation.predictive_groups(
            self._family,
            self.closed_form_,
            self.idata_[source].to_dataset(),
            X,
            y_codes,
            source=source,
            draws=draws,
            keep_rows=keep_rows,
            rng=rng,
        )
        for name, group in groups.items():
            self.idata_[name] = group
        return self.idata_
