"""How a block is shown: its labels, captions and plots by name, as data.

A block declares one :class:`Presentation` (its class attribute ``presentation``) and ranks its
features for the plots (:meth:`~bayesgen.families.base.Family.feature_scores`,
:meth:`~bayesgen.families.base.Family.top_parameters`, which returns a :class:`TopParameters`).
The plot code is in :mod:`bayesgen.plotting`, which reads these; no block imports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import xarray as xr


@dataclass(frozen=True)
class Presentation:
    """The labels, captions and plot names of one block.

    Attributes
    ----------
    plot_variables : tuple of str
        The posterior variables the diagnostic plots (:mod:`bayesgen.plotting.plots`) and the
        report (:mod:`bayesgen.plotting.report`) show by default.
    top_parameter_label : str
        Axis label of :func:`bayesgen.plotting.plots.plot_top_features` ("P(word | class)").
    top_parameter_caption : str
        What those panels rank, as the report's caption says it ("most probable features").
    variable_symbols : mapping of str to str
        How captions write a variable (``{"mu": "μ"}``); the others by their name.
    mean_label : str
        Label of the line at the closed-form posterior mean on the posterior densities
        ("add-λ" for a smoothed model; default "closed form").
    mean_caption : str
        The same as the report's caption says it ("add-λ estimate").
    ppc_variables : tuple of str
        The statistics of :meth:`~bayesgen.families.base.Family.predictive_statistics` that
        the posterior predictive check (:func:`bayesgen.plotting.workflow.plot_ppc`) and the
        report show by default (none).
    ppc_caption : str
        What those statistics are and what a misfit looks like, as the report's caption
        says it.
    report_plots : tuple of str
        The block's own plots in the HTML report, by name (the keys of
        :data:`bayesgen.plotting.model_sections.SECTIONS`: "mu_pair", "decision_boundary",
        "feature_densities"); none by default. In a mixed model's report, a block's section
        draws those of them that can be drawn from the block alone (the keys of
        :data:`bayesgen.plotting.model_sections.BLOCK_SECTIONS`), else its top parameters.
    linear_boundaries : bool
        Whether the classes' boundaries are linear in x (default True), so that the
        decision-boundary plot can draw them.

    Examples
    --------
    >>> from bayesgen.families.presentation import Presentation
    >>> shown = Presentation(("class_prob", "mu"), "θ", "largest θ", variable_symbols={"mu": "μ"})
    >>> shown.mean_label, shown.report_plots
    ('closed form', ())
    """

    plot_variables: tuple[str, ...]
    top_parameter_label: str
    top_parameter_caption: str
    variable_symbols: Mapping[str, str] = field(default_factory=dict)
    mean_label: str = "closed form"
    mean_caption: str = "closed-form posterior mean"
    ppc_variables: tuple[str, ...] = ()
    ppc_caption: str = ""
    report_plots: tuple[str, ...] = ()
    linear_boundaries: bool = True


@dataclass(frozen=True)
class TopParameters:
    """What :meth:`~bayesgen.families.base.Family.top_parameters` returns.

    Attributes
    ----------
    draws : xarray.DataArray
        Posterior draws with dims ``chain, draw, class, feature`` (``, category`` for
        categorical cells): one panel per class.
    scores : numpy.ndarray
        The ranking, shape (class, feature[, category]): each panel shows the largest;
        non-finite scores are never shown.
    panel_title : str
        A ``str.format`` template for a panel's title, given the class label
        (``"class {}"``).
    """

    draws: xr.DataArray
    scores: np.ndarray
    panel_title: str = "class {}"


__all__ = ["Presentation", "TopParameters"]
