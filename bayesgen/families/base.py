"""The interface of a block: what the generic layers may ask of a model.

A model is a class prior (:mod:`bayesgen.families.class_prior`) times conditionally independent
feature blocks. :class:`Family` is what a block supplies: its sufficient statistics and closed
forms, the exact conjugate posterior (draws and mode) and leave-one-out, its PyMC model and
per-draw likelihood, its simulation, what the comparison checks and how it is shown. The
generic layers (:mod:`bayesgen.closed_form`'s predictions, :mod:`bayesgen.inference`,
:mod:`bayesgen.estimators`, :mod:`bayesgen.io`, :mod:`bayesgen.checks`,
:mod:`bayesgen.plotting`, :mod:`bayesgen.cli`) are handed the model and call these methods,
never a model by name; they annotate with the role each uses
(:mod:`bayesgen.families.roles`).

The abstract methods are what every block must supply; the other methods have defaults
that are right for a block without the extra (no shortcut, no identity, no statistic to add).
What a model can do beyond the interface it declares, never leaving it to be probed:
:attr:`Family.smoothing_parameters` (the λ of naive Bayes) and
:meth:`Family.has_exact_predictive`. Adding a model means one module and one registry line
(see docs, "Adding a block"), the way scikit-learn's ``_BaseNB`` declares the two methods its
subclasses supply.

Blocks import NumPy, SciPy and xarray at module level: :meth:`Family.pymc_model` imports PyMC
when it is called (from the block's ``*_pymc`` module), so the closed forms stay importable
without PyMC.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import xarray as xr

from bayesgen.families.presentation import Presentation, TopParameters
from bayesgen.families.results import DrawIdentity, Marginal, Variable
from bayesgen.input.data import FeatureKind, check_features, check_prediction_features
from bayesgen.input.statistics import CELL_COUNT

if TYPE_CHECKING:
    import pymc as pm

    from bayesgen.families.expected import Expected

#: The class attributes every block declares (checked when a block is made).
REQUIRED_ATTRIBUTES = (
    "name",
    "estimator",
    "cli_name",
    "feature_kind",
    "parameters",
    "statistics",
    "presentation",
)

#: Statistics a fit holds only sometimes, which :meth:`Family.statistics_of` keeps where they
#: are: ``cell_count`` (class, feature), the weight of the rows observed in each cell of a fit
#: whose rows had missing entries (absent: every row observed, ``class_count`` per cell).
OPTIONAL_STATISTICS = (CELL_COUNT,)
#: The attrs of a fit's statistics that :meth:`Family.statistics_of` keeps for a merge.
STATISTICS_ATTRS = ("model", "n_samples", "feature_names_given", "binarize")


class Family(ABC):
    """One block. Subclasses set the class attributes and implement the abstract methods.

    Attributes
    ----------
    name : str
        ``estimates.attrs["model"]``, stored in model files (never change it).
    estimator : str
        Name of the public scikit-learn estimator class in :mod:`bayesgen`.
    cli_name : str
        The model's name on the command line (``bayesgen fit NAME``).
    feature_kind : {"real", "count", "binary", "categorical"}
        What :mod:`bayesgen.input.data` checks X against.
    parameters : dict of str to tuple of str
        The posterior variables and their dims (besides chain and draw), in trace order.
    statistics : dict of str to tuple of str
        The sufficient statistics stored as ``constant_data`` and in model files.
    presentation : bayesgen.families.presentation.Presentation
        Labels, captions and plot names; each field is also read as an attribute of the block
        (``model.plot_variables``, ``model.mean_label``, …).
    missing_values : bool or str
        True where the block integrates a missing entry (NaN in a dense X) out: its
        statistics count, per (class, feature) cell, the rows observed there, and its
        predictions drop a missing entry's factor; otherwise the reason a NaN is refused.
    smoothing_parameters : tuple of str
        The estimator parameters that set a smoothing λ of the feature prior besides
        ``class_alpha`` (naive Bayes: ``("alpha",)``); none by default. The comparison's
        ``alpha``, SBC's ``prior_alpha`` and the λ sweep apply only to a block that has one.

    Examples
    --------
    Every model is one instance, found by :func:`bayesgen.families.family` (by the estimators,
    the public front ends and model files; every other layer is handed it):

    >>> from bayesgen.families import family
    >>> gda = family("gda")
    >>> gda.estimator, gda.cli_name, gda.feature_kind, gda.smoothing
    ('GaussianDiscriminantAnalysis', 'gda', 'real', False)
    >>> list(gda.parameters)
    ['class_prob', 'mu', 'cov', 'coef', 'intercept']
    >>> gda.plot_variables == gda.presentation.plot_variables
    True
    """

    name: ClassVar[str]
    estimator: ClassVar[str]
    cli_name: ClassVar[str]
    feature_kind: ClassVar[FeatureKind]
    parameters: ClassVar[dict[str, tuple[str, ...]]]
    statistics: ClassVar[dict[str, tuple[str, ...]]]
    presentation: ClassVar[Presentation]
    smoothing_parameters: ClassVar[tuple[str, ...]] = ()
    #: True where the block integrates a missing entry (NaN) out, in its fit and its
    #: predictions; else why it cannot (the error a NaN gets).
    missing_values: ClassVar[bool | str] = "this model cannot integrate a missing entry out yet"

    def __init__(self) -> None:
        missing = [name for name in REQUIRED_ATTRIBUTES if not hasattr(type(self), name)]
        if missing:
            raise TypeError(
                f"{type(self).__name__}: a block declares the class attributes "
                f"{list(REQUIRED_ATTRIBUTES)}; missing {missing}."
            )

    # -- capabilities ----------------------------------------------------------------------

    @property
    def smoothing(self) -> bool:
        """Whether the block has a λ besides ``class_alpha`` (:attr:`smoothing_parameters`)."""
        return bool(self.smoothing_parameters)

    def fitted_prior(self, estimates: xr.Dataset, params: Mapping) -> dict:
        """The estimator parameters that fix the prior at its value in this fit, where the
        default prior is scaled to the data (GDA's normal-inverse-Wishart, Gaussian naive
        Bayes' normal-inverse-gamma, the Poisson rates' Gamma): simulation-based calibration
        refits simulated data sets under the prior they were drawn from. ``params`` are the
        estimator's (``get_params()``). Default: none.
        """
        return {}

    def has_exact_predictive(self, options: Mapping | None = None) -> bool:
        """Whether a fit with the estimator's parameters ``options`` has the exact posterior
        predictive (:meth:`predictive_log_joint`) and its exact leave-one-out form
        (:meth:`loo_log_joint`). True by default: every block's prior is conjugate; GDA's
        LKJ covariance prior (``cov_prior="lkj"``) is not."""
        return True

    def prior_draws_problem(self, estimates: xr.Dataset, options: Mapping | None = None):
        """Why :meth:`conjugate_draws` cannot draw this fit's parameters from a prior that
        stays the same for every data set (a sentence naming the estimator's parameter), or
        None where it can. Simulation-based calibration (:func:`bayesgen.sbc`) draws its true
        parameters so, and refuses a fit with a problem. Default: None where the prior is
        conjugate (:meth:`has_exact_predictive`)."""
        if self.has_exact_predictive(options):
            return None
        return (
            f"SBC draws the parameters from the conjugate prior; got a {self.estimator}, "
            "whose prior is not conjugate (no exact prior draws)."
        )

    def loo_kind(self, estimates: xr.Dataset) -> str:
        """What :meth:`loo_log_joint` gives for this fit: "exact" (row i taken out of the
        conjugate posterior; the default) or "plug-in" (a point fit refitted without row i,
        then held fixed: the Dirichlet compound multinomial's (s, m))."""
        return "exact"

    def parameter_dims(self, estimates: xr.Dataset) -> dict[str, tuple[str, ...]]:
        """The posterior variables and their dims for one fit (default :attr:`parameters`)."""
        return dict(self.parameters)

    # -- statistics and closed forms (NumPy) ------------------------------------------------

    @abstractmethod
    def sufficient_statistics(
        self, X, y, *, feature_names=None, sample_weight=None, classes=None, **data_options
    ) -> xr.Dataset:
        """The (weighted) sufficient statistics of X, y: the variables of :attr:`statistics`,
        with attrs ``model``, ``n_samples`` (the total weight) and ``feature_names_given``.

        ``classes`` (``partial_fit``) fixes the class coordinate; y may then hold only some of
        them. ``data_options`` are the estimator's ``_data_options()`` (``binarize``, …).
        """

    @abstractmethod
    def merge_statistics(self, first: xr.Dataset, second: xr.Dataset) -> xr.Dataset:
        """The statistics of the union of two sets of rows (``partial_fit``, Dask chunks)."""

    @abstractmethod
    def from_statistics(self, statistics: xr.Dataset, **prior) -> xr.Dataset:
        """The closed-form estimates from the statistics alone, at the prior ``prior`` (the
        estimator's ``_prior_options()``: ``class_alpha`` and the block's own).

        The Dataset has dims ``class`` and ``feature`` (more where the model needs them), the
        variables of :attr:`statistics`, an estimate of every parameter of :attr:`parameters`
        (``*_mle`` beside it), and ``attrs["model"] = name`` with the hyperparameters.
        """

    def fit(self, X, y, *, feature_names=None, sample_weight=None, **prior) -> xr.Dataset:
        """Validate X and y; return the sufficient statistics and closed-form estimates:
        :meth:`sufficient_statistics`, then :meth:`from_statistics` at ``prior``."""
        statistics = self.sufficient_statistics(
            X, y, feature_names=feature_names, sample_weight=sample_weight
        )
        return self.from_statistics(statistics, **prior)

    def prediction_features(self, estimates: xr.Dataset, X):
        """Validate X at prediction time against the fitted features."""
        return check_prediction_features(
            X,
            kind=self.feature_kind,
            feature_names=estimates["feature"].values,
            names_given=bool(estimates.attrs.get("feature_names_given", 0)),
            binarize=estimates.attrs.get("binarize"),
            missing=self.missing_values,
        )

    def training_features(self, estimates: xr.Dataset, X):
        """The training rows X as the model saw them (checked, binarized): what the fit's
        ``constant_data`` keeps and its log-likelihood is computed on."""
        rows, _, _ = check_features(
            X,
            kind=self.feature_kind,
            binarize=estimates.attrs.get("binarize"),
            missing=self.missing_values,
        )
        return rows

    def statistics_of(self, estimates: xr.Dataset) -> xr.Dataset:
        """The sufficient statistics of a fit with the attrs a merge needs: what
        :meth:`merge_statistics` takes (``partial_fit`` continues a fit with them)."""
        names = [*self.statistics, *OPTIONAL_STATISTICS]
        statistics = estimates[[name for name in names if name in estimates]]
        statistics.attrs = {
            key: value for key, value in estimates.attrs.items() if key in STATISTICS_ATTRS
        }
        return statistics

    @abstractmethod
    def plug_in_log_joint(self, estimates: xr.Dataset, X) -> tuple[np.ndarray, np.ndarray | None]:
        """log p(x, y = k) with the closed-form estimates plugged in, for checked X.

        Returns ``(joint, order)``: ``order`` holds powers of λ → 0 where λ = 0 leaves zero
        probabilities (see :func:`bayesgen.maths.dirichlet.log_prob_terms`), else None.
        """

    @abstractmethod
    def predictive_log_joint(self, estimates: xr.Dataset, X) -> np.ndarray:
        """log p(x, y = k | data) of the exact posterior predictive, for checked X, shape
        (n_samples, n_classes)."""

    @abstractmethod
    def log_evidence(self, estimates: xr.Dataset) -> float:
        """log p(y, X | prior) of the training rows, the parameters integrated out.

        The labels and rows in their order: the class term is that of the label sequence
        (:meth:`~bayesgen.families.class_prior.ClassPrior.log_evidence`), and a multinomial
        document that of its tokens in order (see :mod:`bayesgen.maths.evidence`).
        """

    # -- the exact conjugate posterior -----------------------------------------------------

    @abstractmethod
    def conjugate_draws(
        self, estimates: xr.Dataset, rng, sample_shape, dtype, *, posterior: bool
    ) -> dict[str, Variable]:
        """Exact independent draws of every parameter, shape ``sample_shape + dims``.

        ``posterior=False`` draws from the prior (the posterior given no data).
        """

    @abstractmethod
    def conjugate_mode(self, estimates: xr.Dataset) -> dict[str, Variable]:
        """The exact posterior mode of every parameter as named (the density without a
        Jacobian, as ``find_MAP`` defines it; NaN where none exists)."""

    def exact_marginals(self, estimates: xr.Dataset) -> dict[str, Marginal]:
        """The closed-form marginal of each parameter that has one (:class:`Marginal`), for
        :class:`bayesgen.inference.conjugate.ConjugatePosterior`; default none (it then falls
        back to a bounded number of exact draws)."""
        return {}

    def feature_subset(self, estimates: xr.Dataset, labels: np.ndarray) -> xr.Dataset:
        """Statistics whose :meth:`conjugate_draws` give exact joint draws of the features
        ``labels`` (the caller selects them afterwards). Default: ``estimates`` itself (all
        features are drawn); the multinomial model aggregates the other words into one cell."""
        return estimates

    def aggregated_log_joint(self, estimates: xr.Dataset, X, n_draws: int, seed: int):
        """log p(x, y = k | θ) for ``n_draws`` exact posterior draws of θ, drawing only the
        cells X needs, shape (n_draws, n_samples, n_classes); None (the default) where the
        block has no such shortcut and predictions use the materialised draws."""
        return None

    @abstractmethod
    def loo_log_joint(
        self, estimates: xr.Dataset, X, y_codes: np.ndarray, *, options: dict | None = None
    ) -> np.ndarray:
        """log p(x_i, y = k | D without row i) for every training row i and class k, exactly.

        Row i is taken out of the sufficient statistics, for all rows together (no refits).
        The normalisation is that of the ``log_likelihood`` group, log π_y + log p(x | y, θ)
        in full, so that the column of row i's own class is the exact pointwise elpd of the
        joint, which PSIS-LOO (``az.loo``) estimates.

        Parameters
        ----------
        estimates : xarray.Dataset
            The closed-form fit to all the rows D.
        X : numpy.ndarray or scipy.sparse.csr_array
            The checked training rows (as :meth:`prediction_features` returns them).
        y_codes : numpy.ndarray of int
            Their classes, as indices into the ``class`` coordinate.
        options : dict, optional
            The estimator's parameters (``est.get_params()``), e.g. GDA's ``cov_prior``.

        Returns
        -------
        numpy.ndarray of shape (n_samples, n_classes)

        Raises
        ------
        NotImplementedError
            Where :meth:`has_exact_predictive` is False for ``options``:
            :mod:`bayesgen.checks.loo` then uses Pareto-smoothed importance sampling.
        """

    # -- the generative model: PyMC, per-draw likelihood, simulation -----------------------

    @abstractmethod
    def pymc_model(self, estimates: xr.Dataset, **options) -> pm.Model:
        """The PyMC model on the sufficient statistics in ``estimates``, its data observed
        (imported from the block's ``*_pymc`` module when called)."""

    def map_problem(self, estimates: xr.Dataset):
        """Statistics to run ``find_MAP`` on, and a function mapping its point back.

        The default optimises the model as it is; a block whose parameters can be badly
        scaled (GDA's means in the units of the data) standardises first.
        """
        return estimates, lambda point: point

    @abstractmethod
    def draw_log_joint(self, estimates: xr.Dataset, X, draws: xr.Dataset) -> np.ndarray:
        """log p(x, y = k | θ) for each draw of ``draws`` (dims draw, ...) and checked X.

        Returns an array of shape (n_draws, n_samples, n_classes). A term that does not depend
        on θ may be left out (:meth:`row_log_constant`).
        """

    def row_log_likelihood(
        self, estimates: xr.Dataset, X, y_codes: np.ndarray, draws: xr.Dataset
    ) -> np.ndarray:
        """log p(x_i, y_i | θ) of every training row for each draw, fully normalised.

        Returns an array of shape (n_draws, n_samples): the pointwise log-likelihood of the
        ``log_likelihood`` group, which ``az.loo`` reads. The default takes each row's own
        class from :meth:`draw_log_joint` and adds :meth:`row_log_constant`; a block whose
        ``draw_log_joint`` drops a term that depends on θ overrides it.
        """
        joint = self.draw_log_joint(estimates, X, draws)
        own = joint[:, np.arange(len(y_codes)), y_codes]
        return own + self.row_log_constant(X)[None, :]

    def row_log_constant(self, X) -> np.ndarray:
        """The part of log p(x_i | y_i, θ) that :meth:`draw_log_joint` leaves out because it
        does not depend on θ (default: none), one value per row."""
        return np.zeros(X.shape[0])

    @abstractmethod
    def simulate_rows(self, estimates: xr.Dataset, X, y_codes: np.ndarray, parameters: dict, rng):
        """Rows drawn from p(x | y_i, θ) for one draw θ, shaped like the training rows X.

        Parameters
        ----------
        estimates : xarray.Dataset
            The closed-form fit.
        X : numpy.ndarray or scipy.sparse.csr_array
            The training rows (checked), for what the simulation keeps fixed (a document's
            length).
        y_codes : numpy.ndarray of int
            The training labels, kept: the rows are simulated given them.
        parameters : dict of str to numpy.ndarray
            One draw of every posterior (or prior) variable, in its dims.
        rng : numpy.random.Generator

        Returns
        -------
        numpy.ndarray or scipy.sparse.csr_array of shape X.shape
        """

    def predictive_statistics(
        self, estimates: xr.Dataset, X, y_codes: np.ndarray
    ) -> dict[str, Variable]:
        """The statistics of a data set that its predictive checks compare (dims obs, class,
        feature, ...), for the training rows and each simulated data set alike; none by
        default (then :attr:`Presentation.ppc_variables
        <bayesgen.families.presentation.Presentation.ppc_variables>` names none)."""
        return {}

    # -- the comparison (bayesgen.checks.comparison) ---------------------------------------

    @abstractmethod
    def expected(
        self,
        estimates: xr.Dataset,
        *,
        alpha: float | None,
        class_alpha: float,
        options: dict,
        map_method: str | None,
    ) -> list[Expected]:
        """What the posterior summaries of every variable must equal, for :func:`bayesgen.compare`.

        Parameters
        ----------
        estimates : xarray.Dataset
            The closed-form fit (its sufficient statistics and attrs).
        alpha : float or None
            λ to compute the closed forms with (None for a block without one, see
            :attr:`smoothing_parameters`); may differ from the fitted one, to show that a
            check can fail.
        class_alpha : float
            The class prior's concentration, likewise.
        options : dict
            The estimator's parameters (``est.get_params()``), e.g. GDA's ``cov_prior``.
        map_method : {"closed_form", "find_MAP"} or None
            How the MAP was found: find_MAP's mode is that of the variables as PyMC declares
            them, which is not always the mode of the variable itself.

        Returns
        -------
        list of bayesgen.families.expected.Expected
            One block per posterior variable, in the posterior's order; the class
            probabilities' is :meth:`ClassPrior.expected
            <bayesgen.families.class_prior.ClassPrior.expected>`.
        """

    def feature_expected(self, estimates: xr.Dataset, alpha: float) -> Expected:
        """The :class:`~bayesgen.families.expected.Expected` block of ``feature_prob`` under a
        Dirichlet(λ) (Beta(λ, λ)) prior, at any λ: for a block with a λ
        (:attr:`smoothing_parameters`).

        Raises
        ------
        ValueError
            For a block without a λ (GDA, QDA).
        """
        raise ValueError(f"stats: feature_expected needs a naive Bayes model; got {self.name!r}.")

    def draw_identities(self, posterior: xr.Dataset) -> list[DrawIdentity]:
        """Identities every single posterior draw must satisfy (default: none).

        For variables computed from others in each draw (GDA's ``coef`` and ``intercept``,
        the linear form of the draw's π, μ, Σ): :func:`bayesgen.compare` fails a row whose
        error ratio exceeds 1.
        """
        return []

    def joint_statistics(
        self,
        estimates: xr.Dataset,
        posterior: xr.Dataset,
        *,
        alpha,
        class_alpha: float,
        options: dict | None = None,
    ) -> list:
        """Statistics of each whole draw with an exact law under the posterior (default:
        none): a list of :class:`bayesgen.maths.joint_statistics.JointStatistic`, which
        :func:`bayesgen.compare` checks for location and spread. They see what the marginal
        checks cannot: e.g. every concentration 10 % off (see
        :mod:`bayesgen.maths.joint_statistics`)."""
        return []

    def prediction_statistics(
        self, estimates: xr.Dataset, words: np.ndarray, n_draws: int, seed: int
    ) -> list:
        """Statistics with an exact law of the draws that predictions use where they are not
        ``idata_``'s (:meth:`aggregated_log_joint`), over the features ``words``: a list of
        :class:`bayesgen.maths.joint_statistics.JointStatistic` (default: none, the predictions
        use ``idata_``'s draws, which :func:`bayesgen.compare` reads)."""
        return []

    # -- presentation (the plot code is in bayesgen.plotting) ------------------------------

    @abstractmethod
    def feature_scores(self, estimates: xr.Dataset) -> np.ndarray:
        """How interesting each feature is, for :func:`bayesgen.plotting.plots.selected_features`.

        Returns
        -------
        numpy.ndarray
            One score per feature (dims ``feature``) or per cell (``feature, category``),
            larger first; non-finite scores (padding cells) are never shown.
        """

    @abstractmethod
    def top_parameters(self, estimates: xr.Dataset, posterior: xr.Dataset) -> TopParameters:
        """The parameters :func:`bayesgen.plotting.plots.plot_top_features` ranks, one panel
        a class."""

    # The fields of ``presentation``, read as attributes by the plots and the report.

    @property
    def plot_variables(self) -> tuple[str, ...]:
        """:attr:`Presentation.plot_variables` of :attr:`presentation`."""
        return self.presentation.plot_variables

    @property
    def variable_symbols(self) -> Mapping[str, str]:
        """:attr:`Presentation.variable_symbols` of :attr:`presentation`."""
        return self.presentation.variable_symbols

    @property
    def mean_label(self) -> str:
        """:attr:`Presentation.mean_label` of :attr:`presentation`."""
        return self.presentation.mean_label

    @property
    def mean_caption(self) -> str:
        """:attr:`Presentation.mean_caption` of :attr:`presentation`."""
        return self.presentation.mean_caption

    @property
    def top_parameter_label(self) -> str:
        """:attr:`Presentation.top_parameter_label` of :attr:`presentation`."""
        return self.presentation.top_parameter_label

    @property
    def top_parameter_caption(self) -> str:
        """:attr:`Presentation.top_parameter_caption` of :attr:`presentation`."""
        return self.presentation.top_parameter_caption

    @property
    def ppc_variables(self) -> tuple[str, ...]:
        """:attr:`Presentation.ppc_variables` of :attr:`presentation`."""
        return self.presentation.ppc_variables

    @property
    def ppc_caption(self) -> str:
        """:attr:`Presentation.ppc_caption` of :attr:`presentation`."""
        return self.presentation.ppc_caption

    @property
    def report_plots(self) -> tuple[str, ...]:
        """:attr:`Presentation.report_plots` of :attr:`presentation`."""
        return self.presentation.report_plots

    @property
    def linear_boundaries(self) -> bool:
        """:attr:`Presentation.linear_boundaries` of :attr:`presentation`."""
        return self.presentation.linear_boundaries


__all__ = ["REQUIRED_ATTRIBUTES", "Family"]
