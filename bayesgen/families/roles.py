"""The roles a block plays, one small protocol per kind of caller.

:class:`~bayesgen.families.base.Family` declares everything a block supplies; each generic
layer uses a part of it, and annotates with the protocol of that part:

* :class:`ClosedForm`: the statistics and what is computed from them without draws (the
  estimators' fit, :mod:`bayesgen.closed_form`, :mod:`bayesgen.input.distributed`, model
  files);
* :class:`ExactPosterior`: the exact conjugate posterior and leave-one-out
  (:mod:`bayesgen.inference.conjugate`, :mod:`bayesgen.inference.sampling`,
  :mod:`bayesgen.checks.loo`);
* :class:`Generative`: the PyMC model, the per-draw likelihood and simulation (NUTS and MAP in
  the estimators, :mod:`bayesgen.inference.observed`, :mod:`bayesgen.inference.simulation`,
  SBC);
* :class:`Checks`: what :func:`bayesgen.compare` and the prediction checks hold the posterior
  against;
* :class:`Presentable`: what the plots and the report show.

Every :class:`~bayesgen.families.base.Family` is all five; the protocols only say which part a
caller relies on, so that a reader (and a type checker) sees it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

import numpy as np
import xarray as xr

if TYPE_CHECKING:
    import pymc as pm

    from bayesgen.families.expected import Expected
    from bayesgen.families.presentation import Presentation, TopParameters
    from bayesgen.families.results import DrawIdentity, Marginal, Variable


class ClosedForm(Protocol):
    """Statistics and closed forms: fit, merge, the plug-in and exact predictive, the evidence."""

    name: str
    feature_kind: str
    statistics: dict[str, tuple[str, ...]]

    def sufficient_statistics(
        self, X, y, *, feature_names=None, sample_weight=None, classes=None, **data_options
    ) -> xr.Dataset: ...
    def merge_statistics(self, first: xr.Dataset, second: xr.Dataset) -> xr.Dataset: ...
    def from_statistics(self, statistics: xr.Dataset, **prior) -> xr.Dataset: ...
    def fit(self, X, y, *, feature_names=None, sample_weight=None, **prior) -> xr.Dataset: ...
    def prediction_features(self, estimates: xr.Dataset, X): ...
    def plug_in_log_joint(
        self, estimates: xr.Dataset, X
    ) -> tuple[np.ndarray, np.ndarray | None]: ...
    def has_exact_predictive(self, options: Mapping | None = None) -> bool: ...
    def predictive_log_joint(self, estimates: xr.Dataset, X) -> np.ndarray: ...
    def log_evidence(self, estimates: xr.Dataset) -> float: ...


class ExactPosterior(Protocol):
    """The exact conjugate posterior: draws, mode, marginals, and exact leave-one-out."""

    statistics: dict[str, tuple[str, ...]]

    def parameter_dims(self, estimates: xr.Dataset) -> dict[str, tuple[str, ...]]: ...
    def conjugate_draws(
        self, estimates: xr.Dataset, rng, sample_shape, dtype, *, posterior: bool
    ) -> dict[str, Variable]: ...
    def conjugate_mode(self, estimates: xr.Dataset) -> dict[str, Variable]: ...
    def exact_marginals(self, estimates: xr.Dataset) -> dict[str, Marginal]: ...
    def feature_subset(self, estimates: xr.Dataset, labels: np.ndarray) -> xr.Dataset: ...
    def aggregated_log_joint(self, estimates: xr.Dataset, X, n_draws: int, seed: int): ...
    def has_exact_predictive(self, options: Mapping | None = None) -> bool: ...
    def loo_kind(self, estimates: xr.Dataset) -> str: ...
    def loo_log_joint(
        self, estimates: xr.Dataset, X, y_codes: np.ndarray, *, options: dict | None = None
    ) -> np.ndarray: ...


class Generative(Protocol):
    """The generative model: PyMC, the per-draw and per-row likelihood, simulation."""

    name: str

    def parameter_dims(self, estimates: xr.Dataset) -> dict[str, tuple[str, ...]]: ...
    def pymc_model(self, estimates: xr.Dataset, **options) -> pm.Model: ...
    def map_problem(self, estimates: xr.Dataset): ...
    def draw_log_joint(self, estimates: xr.Dataset, X, draws: xr.Dataset) -> np.ndarray: ...
    def row_log_likelihood(
        self, estimates: xr.Dataset, X, y_codes: np.ndarray, draws: xr.Dataset
    ) -> np.ndarray: ...
    def simulate_rows(
        self, estimates: xr.Dataset, X, y_codes: np.ndarray, parameters: dict, rng
    ): ...
    def predictive_statistics(
        self, estimates: xr.Dataset, X, y_codes: np.ndarray
    ) -> dict[str, Variable]: ...


class Checks(Protocol):
    """What the comparison holds a posterior against, and the prior options it may change."""

    name: str
    cli_name: str

    @property
    def smoothing(self) -> bool: ...
    def expected(
        self,
        estimates: xr.Dataset,
        *,
        alpha: float | None,
        class_alpha: float,
        options: dict,
        map_method: str | None,
    ) -> list[Expected]: ...
    def feature_expected(self, estimates: xr.Dataset, alpha: float) -> Expected: ...
    def draw_identities(self, posterior: xr.Dataset) -> list[DrawIdentity]: ...
    def joint_statistics(
        self,
        estimates: xr.Dataset,
        posterior: xr.Dataset,
        *,
        alpha,
        class_alpha: float,
        options: dict | None = None,
    ) -> list: ...
    def prediction_statistics(
        self, estimates: xr.Dataset, words: np.ndarray, n_draws: int, seed: int
    ) -> list: ...


class Presentable(Protocol):
    """What the plots and the report read: names, labels and plots as data, and a ranking."""

    name: str
    estimator: str
    presentation: Presentation

    def feature_scores(self, estimates: xr.Dataset) -> np.ndarray: ...
    def top_parameters(self, estimates: xr.Dataset, posterior: xr.Dataset) -> TopParameters: ...


__all__ = ["Checks", "ClosedForm", "ExactPosterior", "Generative", "Presentable"]
