"""The interface of a model family: what the generic layers may ask of a model.

A family is everything that makes one model itself: its sufficient statistics and closed
forms, the exact conjugate posterior (draws and mode), the PyMC model, the per-draw joint
log-likelihood used for prediction, and the names and dims of its parameters. The generic
layers (:mod:`bayesgen.closed_form`'s predictions, :mod:`bayesgen.inference`,
:mod:`bayesgen.estimators`, :mod:`bayesgen.io`, :mod:`bayesgen.cli`) reach a model only
through :func:`bayesgen.families.family` and these methods, so adding a model means one module
and one registry line, the way scikit-learn's ``_BaseDiscreteNB`` keeps the fit loop and lets
each subclass supply ``_count`` and ``_update_feature_log_prob``.

Families import only NumPy, SciPy and xarray at module level: :meth:`Family.pymc_model`
imports PyMC when it is called, so the closed forms stay importable without PyMC.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import xarray as xr

from bayesgen.data import FeatureKind, check_prediction_features

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    import pymc as pm

#: (dims, values) of one variable, as ``xarray.Dataset`` takes it.
Variable = tuple[tuple[str, ...], np.ndarray]


@dataclass(frozen=True)
class TopParameters:
    """What :meth:`Family.top_parameters` returns.

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


@dataclass(frozen=True)
class ReportSection:
    """One plot of the HTML report: its PNG's file name (None when the plot is skipped) and
    a one-line caption (or the reason for skipping it)."""

    title: str
    caption: str
    file: str | None = None


class Family:
    """One model. Subclasses set the class attributes and implement the methods.

    Attributes
    ----------
    name : str
        ``estimates.attrs["model"]``, stored in model files (never change it).
    estimator : str
        Name of the public scikit-learn estimator class in :mod:`bayesgen`.
    cli_name : str
        The model's name on the command line (``bayesgen fit NAME``).
    feature_kind : {"real", "count", "binary", "categorical"}
        What :mod:`bayesgen.data` checks X against.
    parameters : dict of str to tuple of str
        The posterior variables and their dims (besides chain and draw), in trace order.
    statistics : dict of str to tuple of str
        The sufficient statistics stored as ``constant_data`` and in model files.
    smoothing : bool
        Whether the model has a λ (``alpha``) besides ``class_alpha``.
    plot_variables : tuple of str
        The posterior variables the diagnostic plots (:mod:`bayesgen.plots`) and the report
        (:mod:`bayesgen.reporting`) show by default.
    variable_symbols : dict of str to str
        How captions write a variable (``{"mu": "μ"}``); the others by their name.
    mean_label : str
        Label of the line at the closed-form posterior mean on the posterior densities
        ("add-λ" for a smoothed model; default "closed form").
    mean_caption : str
        The same as the report's caption says it ("add-λ estimate").
    top_parameter_label : str
        Axis label of :func:`bayesgen.plots.plot_top_features` ("P(word | class)").
    top_parameter_caption : str
        What those panels rank, as the report's caption says it ("most probable features").
    """

    name: ClassVar[str]
    estimator: ClassVar[str]
    cli_name: ClassVar[str]
    feature_kind: ClassVar[FeatureKind]
    parameters: ClassVar[dict[str, tuple[str, ...]]]
    statistics: ClassVar[dict[str, tuple[str, ...]]]
    smoothing: ClassVar[bool] = True
    plot_variables: ClassVar[tuple[str, ...]]
    variable_symbols: ClassVar[dict[str, str]] = {}
    mean_label: ClassVar[str] = "closed form"
    mean_caption: ClassVar[str] = "closed-form posterior mean"
    top_parameter_label: ClassVar[str]
    top_parameter_caption: ClassVar[str]

    def parameter_dims(self, estimates: xr.Dataset) -> dict[str, tuple[str, ...]]:
        """The posterior variables and their dims for one fit (default :attr:`parameters`)."""
        return dict(self.parameters)

    # -- plots and the report -------------------------------------------------------------
    # The plot code is in the plot modules; a family says what to draw and imports the plot
    # modules (matplotlib, ArviZ) only inside report_sections.

    def feature_scores(self, estimates: xr.Dataset) -> np.ndarray:
        """How interesting each feature is, for :func:`bayesgen.plots.selected_features`.

        Returns
        -------
        numpy.ndarray
            One score per feature (dims ``feature``) or per cell (``feature, category``),
            larger first; non-finite scores (padding cells) are never shown.
        """
        raise NotImplementedError

    def top_parameters(self, estimates: xr.Dataset, posterior: xr.Dataset) -> TopParameters:
        """The parameters :func:`bayesgen.plots.plot_top_features` ranks, one panel a class."""
        raise NotImplementedError

    def report_sections(
        self, est, X_test, y_test
    ) -> Iterator[tuple[ReportSection, Callable[[], object] | None]]:
        """The model's own sections of the HTML report, after the prior-vs-posterior plot.

        Yields ``(section, make)``: ``make`` draws the plot (a matplotlib Figure or an ArviZ
        plot) when called without arguments; None with a ``section`` without ``file`` lists
        the plot as skipped, its caption saying why. ``X_test`` and ``y_test`` are the
        held-out data or both None. Default: none.
        """
        return iter(())

    # -- closed forms (NumPy) ------------------------------------------------------------

    def fit(self, X, y, **options) -> xr.Dataset:
        """Validate X and y; return the sufficient statistics and closed-form estimates.

        The Dataset has dims ``class`` and ``feature`` (more where the model needs them), the
        variables of :attr:`statistics`, an estimate of every parameter of :attr:`parameters`
        (``*_mle`` beside it), and ``attrs["model"] = name`` with the hyperparameters.
        """
        raise NotImplementedError

    def prediction_features(self, estimates: xr.Dataset, X):
        """Validate X at prediction time against the fitted features."""
        return check_prediction_features(
            X,
            kind=self.feature_kind,
            feature_names=estimates["feature"].values,
            names_given=bool(estimates.attrs.get("feature_names_given", 0)),
            binarize=estimates.attrs.get("binarize"),
        )

    def plug_in_log_joint(self, estimates: xr.Dataset, X) -> tuple[np.ndarray, np.ndarray | None]:
        """log p(x, y = k) with the closed-form estimates plugged in, for checked X.

        Returns ``(joint, order)``: ``order`` holds powers of λ → 0 where λ = 0 leaves zero
        probabilities (see :func:`bayesgen.closed_form.log_prob_terms`), else None.
        """
        raise NotImplementedError

    def predictive_log_joint(self, estimates: xr.Dataset, X) -> np.ndarray:
        """log p(x, y = k | data) of the exact posterior predictive, for checked X."""
        raise ValueError(f"posterior_predictive_proba: defined for naive Bayes, not {self.name!r}.")

    # -- the exact conjugate posterior -------------------------------------------------

    def conjugate_draws(
        self, estimates: xr.Dataset, rng, sample_shape, dtype, *, posterior: bool
    ) -> dict[str, Variable]:
        """Exact independent draws of every parameter, shape ``sample_shape + dims``.

        ``posterior=False`` draws from the prior (the posterior given no data).
        """
        raise NotImplementedError

    def conjugate_mode(self, estimates: xr.Dataset) -> dict[str, Variable]:
        """The exact posterior mode of every parameter (NaN where none exists)."""
        raise NotImplementedError

    # -- PyMC ----------------------------------------------------------------------------

    def pymc_model(self, estimates: xr.Dataset, **options) -> pm.Model:
        """The PyMC model on the sufficient statistics in ``estimates``."""
        raise NotImplementedError

    def map_problem(self, estimates: xr.Dataset):
        """Statistics to run ``find_MAP`` on, and a function mapping its point back.

        The default optimises the model as it is; a family whose parameters can be badly
        scaled (GDA's means in the units of the data) standardises first.
        """
        return estimates, lambda point: point

    # -- prediction from draws ------------------------------------------------------------

    def draw_log_joint(self, estimates: xr.Dataset, X, draws: xr.Dataset) -> np.ndarray:
        """log p(x, y = k | θ) for each draw of ``draws`` (dims draw, ...) and checked X.

        Returns an array of shape (n_draws, n_samples, n_classes).
        """
        raise NotImplementedError

    # -- the comparison (bayesgen.checks) -------------------------------------------------

    def expected(
        self,
        estimates: xr.Dataset,
        *,
        alpha: float | None,
        class_alpha: float,
        options: dict,
        map_method: str | None,
    ) -> list:
        """What the posterior summaries of every variable must equal, for :func:`bayesgen.compare`.

        Parameters
        ----------
        estimates : xarray.Dataset
            The closed-form fit (its sufficient statistics and attrs).
        alpha : float or None
            λ to compute the closed forms with (None for a model without one, see
            :attr:`smoothing`); may differ from the fitted one, to show that a check can fail.
        class_alpha : float
            The class prior's concentration, likewise.
        options : dict
            The estimator's parameters (``est.get_params()``), e.g. GDA's ``cov_prior``.
        map_method : {"closed_form", "find_MAP"} or None
            How the MAP was found: find_MAP's mode is that of the variables as PyMC declares
            them, which is not always the mode of the variable itself.

        Returns
        -------
        list of bayesgen.checks_expected.Expected
            One block per posterior variable, in the posterior's order. The generic pieces
            (the class probabilities' :func:`~bayesgen.checks_expected.class_expected`, the
            Dirichlet moments and modes, the reasons) are in :mod:`bayesgen.checks_expected`;
            import it inside this method, since the comparison needs pandas.
        """
        raise NotImplementedError

    def draw_identities(self, posterior: xr.Dataset) -> list[DrawIdentity]:
        """Identities every single posterior draw must satisfy (default: none).

        For variables computed from others in each draw (GDA's ``coef`` and ``intercept``,
        the linear form of the draw's π, μ, Σ): :func:`bayesgen.compare` fails a row whose
        error ratio exceeds 1.
        """
        return []


@dataclass(frozen=True)
class DrawIdentity:
    """An identity that holds in every posterior draw, and how far the draws are from it.

    Attributes
    ----------
    statements : dict of str to str
        Per variable, the identity as the comparison's identities table names it.
    errors : dict of str to numpy.ndarray
        Per variable (same keys), in its shape: the largest error over the draws in units of
        its tolerance (rounding of the stored draws); ≤ 1 agrees, NaN or inf does not.
    failure : str
        What a value that fails is, for the warning: "… values are not …".
    """

    statements: dict[str, str]
    errors: dict[str, np.ndarray]
    failure: str


def log(values) -> np.ndarray:
    """log of probabilities in float64; draws that underflowed to 0 (tiny Gamma variates in
    float32) are clipped to the smallest normal number instead of giving -inf."""
    values = np.asarray(values, dtype=np.float64)
    return np.log(np.maximum(values, np.finfo(np.float64).tiny))


# --------------------------------------------------------------------------------------------
# Dirichlet helpers shared by the families: every model has π ~ Dirichlet(class_alpha).


def dirichlet_draws(rng, concentration: np.ndarray, sample_shape, dtype) -> np.ndarray:
    """Dirichlet draws along the last axis of ``concentration`` via normalised Gamma variates.

    Written one draw at a time straight into a preallocated array of ``dtype``: 1,000 draws of
    a 20-class × 50,000-word model take 4 GB in float32 and no temporary of the same size.
    Zero concentrations give probability 0 (the padding of the categorical model).
    """
    concentration = np.asarray(concentration, dtype=np.float64)
    out = np.empty((*sample_shape, *concentration.shape), dtype=dtype)
    inactive = concentration <= 0
    shape = np.where(inactive, 1.0, concentration)
    has_inactive = bool(inactive.any())
    for index in np.ndindex(*sample_shape):
        draw = out[index]
        rng.standard_gamma(shape, dtype=out.dtype, out=draw)
        if has_inactive:
            draw[inactive] = 0
        # Sum in float64: 50,000 float32 terms would lose digits.
        draw /= draw.sum(axis=-1, keepdims=True, dtype=np.float64).astype(out.dtype)
    return out


def dirichlet_mode(concentration: np.ndarray) -> np.ndarray:
    """Mode of Dirichlet(concentration) along the last axis; zero concentrations are padding.

    NaN for a whole simplex without a mode: some concentration below 1 (unbounded density) or
    all of them 1 (flat, every point a mode).
    """
    concentration = np.asarray(concentration, dtype=np.float64)
    padding = concentration <= 0
    shifted = np.where(padding, 0.0, concentration - 1.0)
    unbounded = np.any(shifted < 0, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        mode = shifted / shifted.sum(axis=-1, keepdims=True)
    return np.where(padding, 0.0, np.where(unbounded, np.nan, mode))


def parameter_coords(estimates: xr.Dataset) -> dict[str, np.ndarray]:
    """The coords of the parameters: those of ``estimates`` among class, feature, feature2 and
    category (the posterior's, the MAP point's and the PyMC model's)."""
    names = ("class", "feature", "feature2", "category")
    return {name: estimates[name].values for name in names if name in estimates.coords}


def class_concentration(estimates: xr.Dataset, *, posterior: bool) -> np.ndarray:
    """Dirichlet concentration of π: class_alpha (+ the class counts for the posterior)."""
    weight = 1.0 if posterior else 0.0
    return estimates.attrs["class_alpha"] + weight * estimates["class_count"].values
