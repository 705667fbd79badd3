"""How an estimator samples its posterior with PyMC's NUTS and finds its MAP point.

:class:`NutsFit` is the part of :class:`~bayesgen.estimators.classifier.GenerativeClassifier`
that runs PyMC: the warnings for too few draws or tuning steps before sampling and for
unconverged chains after it (the same family-wise limits ``compare()`` holds the draws to),
whole-number weights for a model that observes counts, the PyMC model built from the family's
statistics, and the MAP — the exact mode wherever the prior is conjugate, ``find_MAP``
elsewhere. Where the prior is conjugate the ``prior`` group is of exact draws too, so the only
graphs a fit compiles are NUTS's own.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
import xarray as xr

from bayesgen.inference import sampling as inference
from bayesgen.inference.progress import show_progress
from bayesgen.maths.diagnostics import ESS_MIN, convergence_problems

__all__ = ["NutsFit"]

#: Fewer NUTS tuning steps than this leave the mass matrix adapted at most once (PyMC adapts
#: it in windows of about 100 steps), so fit warns; ``draws * chains`` is held against
#: compare's ``ess_min`` the same way.
_MIN_TUNE = 200


class NutsFit:
    """The PyMC half of ``fit``: NUTS draws, their convergence warnings and the MAP point.

    A mixin of :class:`~bayesgen.estimators.classifier.GenerativeClassifier`; it reads the
    estimator's parameters (``draws``, ``tune``, ``chains``, ``inference``, ...) and its
    model family ``_family``.

    Examples
    --------
    >>> from bayesgen import MultinomialNB
    >>> from bayesgen.estimators.nuts_fit import NutsFit
    >>> est = MultinomialNB(inference="nuts")
    >>> isinstance(est, NutsFit), est._map_by_optimiser()  # conjugate prior: the exact mode
    (True, False)
    """

    def _check_nuts_weights(self, sample_weight) -> None:
        """NUTS observes counts (``class_count`` ~ Multinomial), so its weights must be whole."""
        if sample_weight is None or self.inference == "conjugate":
            return
        weights = np.asarray(sample_weight, dtype=np.float64).ravel()
        fractional = np.flatnonzero(weights != np.round(weights))
        if fractional.size:
            raise ValueError(
                "sample_weight: inference='nuts' needs whole-number weights (its PyMC model "
                f"observes counts); got {weights[fractional[0]]} at position {fractional[0]}. "
                "Use inference='conjugate' for fractional weights."
            )

    def _warn_short_nuts(self) -> None:
        problems = []
        if self.draws * self.chains < ESS_MIN:
            problems.append(
                f"draws={self.draws} x chains={self.chains} keeps {self.draws * self.chains} "
                f"draws, fewer than the {ESS_MIN:g} effective draws that compare() asks for"
            )
        if self.tune < _MIN_TUNE:
            problems.append(
                f"tune={self.tune} is below {_MIN_TUNE} tuning steps, too few for NUTS to "
                "adapt its step size and mass matrix"
            )
        if problems:
            warnings.warn(
                f"NUTS: {'; '.join(problems)}. Use draws * chains >= {ESS_MIN:g} and tune >= "
                f"{_MIN_TUNE} (the defaults: draws=1000, tune=1000, chains=4).",
                UserWarning,
                stacklevel=4,
            )

    def _infer(self, stats: xr.Dataset) -> xr.DataTree:
        common = {
            "draws": self.draws,
            "chains": self.chains,
            "random_seed": self.random_seed,
            "prior_draws": self.prior_draws,
            "dtype": self.dtype,
        }
        if self.inference == "conjugate":
            return inference.conjugate_posterior(stats, **common, model_family=self._family)

        progressbar = show_progress(self.progressbar)
        if progressbar:
            # PyMC compiles before its progress bar appears: say why nothing moves yet.
            print(
                f"bayesgen: compiling the {self._family.name} model's NUTS graph (up to a "
                "minute the first time for this shape, seconds once cached), then sampling "
                f"{self.chains} chains x ({self.tune} tune + {self.draws} draws)...",
                file=sys.stderr,
                flush=True,
            )
        idata = inference.sample_nuts(
            self._build_model(stats),
            var_names=list(self._family.parameter_dims(stats)),
            tune=self.tune,
            cores=self.cores,
            nuts_sampler=self.nuts_sampler,
            target_accept=self.target_accept,
            progressbar=progressbar,
            stats=stats,
            model_family=self._family,
            exact_prior=self._has_conjugate_prior(),
            **common,
        )
        self._warn_unconverged(idata)
        return idata

    def _warn_unconverged(self, idata: xr.DataTree) -> None:
        """Warn, as PyMC does after sampling, where compare() will fail the sampler: the
        family-wise R-hat and ESS limits of :mod:`bayesgen.maths.diagnostics`."""
        posterior = idata["posterior"]
        diverging = idata["sample_stats"].get("diverging") if "sample_stats" in idata else None
        problems = convergence_problems(
            {name: posterior[name].values for name in posterior.data_vars},
            divergences=0 if diverging is None else int(diverging.values.sum()),
        )
        if problems:
            warnings.warn(
                f"NUTS did not converge: {'; '.join(problems)}. compare() will fail these "
                "draws; run longer (more tune and draws) or raise target_accept.",
                UserWarning,
                stacklevel=5,
            )

    def _find_map(self, stats: xr.Dataset) -> xr.Dataset:
        """The MAP point: the exact mode wherever the prior is conjugate, else PyMC's
        ``find_MAP``.

        A NUTS fit of a conjugate model samples the very posterior whose mode
        :func:`~bayesgen.inference.sampling.conjugate_map` gives in closed form, so it takes that:
        no
        second graph to compile (about 30 s the first time for the digits model) and no
        optimiser tolerance. ``find_MAP`` runs where no closed-form mode exists: a hyperprior
        on λ (the joint mode of λ, π and θ) or GDA's LKJ covariance prior.
        """
        if self._map_by_optimiser():
            return self._optimise_map(stats)
        return inference.conjugate_map(stats, model_family=self._family)  # no compile

    def _map_by_optimiser(self) -> bool:
        """Whether the MAP comes from PyMC's ``find_MAP`` (a graph to compile) rather than the
        closed form: asked for (``compute_map="find_map"``), or a NUTS fit whose prior has no
        closed-form mode (a hyperprior on λ, GDA's LKJ prior)."""
        if isinstance(self.compute_map, str):  # "find_map": the PyMC model's own mode
            return True
        if self.inference == "conjugate":
            return False
        if getattr(self, "alpha_prior", None) is not None:  # the joint mode of λ, π and θ
            return True
        return not self._has_conjugate_prior()

    def _has_conjugate_prior(self) -> bool:
        """Whether the prior is conjugate, so that its draws, the posterior's draws and its
        mode are exact (the ``prior`` group of a NUTS fit is then drawn so: PyMC's forward
        sampling would compile a graph of its own, about 7 s the first time)."""
        try:
            self._check_conjugate()  # raises for a prior without a conjugate posterior
        except ValueError:
            return False
        return True

    def _optimise_map(self, stats: xr.Dataset) -> xr.Dataset:
        # The family may optimise in better-scaled coordinates (GDA standardises its features).
        problem, restore = self._family.map_problem(stats)
        variables = list(self._family.parameter_dims(stats))
        return restore(inference.find_map(self._build_model(problem), var_names=variables))

    def _build_model(self, stats: xr.Dataset):
        return self._family.pymc_model(stats, **self._model_options())

    def _model_options(self) -> dict:
        """Options of the PyMC model beyond the statistics (GDA's covariance prior)."""
        return {}
