"""The interface of a model family: what the generic layers may ask of a model.

A family is everything that makes one model itself: its sufficient statistics and closed
forms, the exact conjugate posterior (draws and mode), the PyMC model, the per-draw joint
log-likelihood used for prediction, and the names and dims of its parameters. The generic
layers (:mod:`bayesgen.closed_form`'s predictions, :mod:`bayesgen.inference.sampling`,
:mod:`bayesgen.estimators.models`, :mod:`bayesgen.io.model_files`, :mod:`bayesgen.cli`) reach a
model only
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
import pandas as pd
import xarray as xr

from bayesgen.input.data import FeatureKind, check_prediction_features
from bayesgen.maths.evidence import DirichletEvidence
from bayesgen.maths.joint_statistics import fixed_statistic, normal_inverse_wishart_statistics

if TYPE_CHECKING:
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
        What :mod:`bayesgen.input.data` checks X against.
    parameters : dict of str to tuple of str
        The posterior variables and their dims (besides chain and draw), in trace order.
    statistics : dict of str to tuple of str
        The sufficient statistics stored as ``constant_data`` and in model files.
    smoothing : bool
        Whether the model has a λ (``alpha``) besides ``class_alpha``.
    plot_variables : tuple of str
        The posterior variables the diagnostic plots (:mod:`bayesgen.plotting.plots`) and the report
        (:mod:`bayesgen.plotting.report`) show by default.
    variable_symbols : dict of str to str
        How captions write a variable (``{"mu": "μ"}``); the others by their name.
    mean_label : str
        Label of the line at the closed-form posterior mean on the posterior densities
        ("add-λ" for a smoothed model; default "closed form").
    mean_caption : str
        The same as the report's caption says it ("add-λ estimate").
    top_parameter_label : str
        Axis label of :func:`bayesgen.plotting.plots.plot_top_features` ("P(word | class)").
    top_parameter_caption : str
        What those panels rank, as the report's caption says it ("most probable features").
    ppc_variables : tuple of str
        The statistics of :meth:`predictive_statistics` that the posterior predictive check
        (:func:`bayesgen.plotting.workflow.plot_ppc`) and the report show by default (none).
    ppc_caption : str
        What those statistics are and what a misfit looks like, as the report's caption
        says it.
    report_plots : tuple of str
        The model's own plots in the HTML report, by name (the keys of
        :data:`bayesgen.plotting.model_sections.SECTIONS`: "mu_pair", "decision_boundary");
        none by default.
    linear_boundaries : bool
        Whether the classes' boundaries are linear in x (default True), so that the
        decision-boundary plot can draw them.

    Examples
    --------
    Every model is one instance, found by :func:`bayesgen.families.family`:

    >>> from bayesgen.families import family
    >>> gda = family("gda")
    >>> gda.estimator, gda.cli_name, gda.feature_kind, gda.smoothing
    ('GaussianDiscriminantAnalysis', 'gda', 'real', False)
    >>> list(gda.parameters)
    ['class_prob', 'mu', 'cov', 'coef', 'intercept']
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
    ppc_variables: ClassVar[tuple[str, ...]] = ()
    ppc_caption: ClassVar[str] = ""
    report_plots: ClassVar[tuple[str, ...]] = ()
    linear_boundaries: ClassVar[bool] = True

    def parameter_dims(self, estimates: xr.Dataset) -> dict[str, tuple[str, ...]]:
        """The posterior variables and their dims for one fit (default :attr:`parameters`)."""
        return dict(self.parameters)

    # -- plots and the report -------------------------------------------------------------
    # The plot code is in bayesgen.plotting; a family only names what to draw (report_plots).

    def feature_scores(self, estimates: xr.Dataset) -> np.ndarray:
        """How interesting each feature is, for :func:`bayesgen.plotting.plots.selected_features`.

        Returns
        -------
        numpy.ndarray
            One score per feature (dims ``feature``) or per cell (``feature, category``),
            larger first; non-finite scores (padding cells) are never shown.
        """
        raise NotImplementedError

    def top_parameters(self, estimates: xr.Dataset, posterior: xr.Dataset) -> TopParameters:
        """The parameters :func:`bayesgen.plotting.plots.plot_top_features` ranks, one panel a
        class."""
        raise NotImplementedError

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

    def exact_marginals(self, estimates: xr.Dataset) -> dict[str, Marginal]:
        """The closed-form marginal of each parameter that has one (:class:`Marginal`), for
        :class:`bayesgen.inference.conjugate.ConjugatePosterior`; default none (it then falls back
        to
        a bounded number of exact draws)."""
        return {}

    def feature_subset(self, estimates: xr.Dataset, labels: np.ndarray) -> xr.Dataset:
        """Statistics whose :meth:`conjugate_draws` give exact joint draws of the features
        ``labels`` (the caller selects them afterwards). Default: ``estimates`` itself (all
        features are drawn); the multinomial model aggregates the other words into one cell."""
        return estimates

    def aggregated_log_joint(self, estimates: xr.Dataset, X, n_draws: int, seed: int):
        """log p(x, y = k | θ) for ``n_draws`` exact posterior draws of θ, drawing only the
        cells X needs, shape (n_draws, n_samples, n_classes); None (the default) where the
        family has no such shortcut and predictions use the materialised draws."""
        return None

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

    # -- the row-level generative model (bayesgen.inference.observed, bayesgen.inference.simulation)

    def row_log_likelihood(
        self, estimates: xr.Dataset, X, y_codes: np.ndarray, draws: xr.Dataset
    ) -> np.ndarray:
        """log p(x_i, y_i | θ) of every training row for each draw, fully normalised.

        Returns an array of shape (n_draws, n_samples): the pointwise log-likelihood of the
        ``log_likelihood`` group, which ``az.loo`` reads. The default takes each row's own
        class from :meth:`draw_log_joint` and adds :meth:`row_log_constant`; a family whose
        ``draw_log_joint`` drops a term that depends on θ overrides it.
        """
        joint = self.draw_log_joint(estimates, X, draws)
        own = joint[:, np.arange(len(y_codes)), y_codes]
        return own + self.row_log_constant(X)[None, :]

    def row_log_constant(self, X) -> np.ndarray:
        """The part of log p(x_i | y_i, θ) that :meth:`draw_log_joint` leaves out because it
        does not depend on θ (default: none), one value per row."""
        return np.zeros(X.shape[0])

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
        raise NotImplementedError

    def predictive_statistics(
        self, estimates: xr.Dataset, X, y_codes: np.ndarray
    ) -> dict[str, Variable]:
        """The statistics of a data set that its predictive checks compare (dims obs, class,
        feature, ...), for the training rows and each simulated data set alike."""
        raise NotImplementedError

    # -- the comparison (bayesgen.checks.comparison) -----------------------------------------------

    def feature_expected(self, estimates: xr.Dataset, alpha: float):
        """The :class:`~bayesgen.families.expected.Expected` block of ``feature_prob`` under a
        Dirichlet(λ) (Beta(λ, λ)) prior, at any λ: for a model with a λ (:attr:`smoothing`).

        Raises
        ------
        ValueError
            For a model without a λ (GDA, QDA).
        """
        raise ValueError(f"stats: feature_expected needs a naive Bayes model; got {self.name!r}.")

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
        list of bayesgen.families.expected.Expected
            One block per posterior variable, in the posterior's order. The generic pieces
            (the class probabilities' :func:`~bayesgen.families.expected.class_expected`, the
            Dirichlet moments and modes, the reasons) are in :mod:`bayesgen.families.expected`;
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

    # -- exact leave-one-out (bayesgen.checks.loo) -----------------------------------------------

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
            For a model without a closed-form posterior (the default): :mod:`bayesgen.checks.loo`
            then uses Pareto-smoothed importance sampling.
        """
        raise NotImplementedError(f"{self.name}: no closed-form leave-one-out posterior.")

    # -- the evidence (bayesgen.closed_form.log_evidence) ---------------------------------

    def log_evidence(self, estimates: xr.Dataset) -> float:
        """log p(y, X | prior) of the training rows, the parameters integrated out.

        The labels and rows in their order: the class term is that of the label sequence
        (see :func:`class_log_evidence`), and a multinomial document that of its tokens in
        order (no multinomial coefficient; see :mod:`bayesgen.maths.evidence`).
        """
        raise NotImplementedError(f"{self.name}: no closed-form evidence.")


@dataclass(frozen=True)
class Marginal:
    """The exact marginal posterior of every scalar of one parameter.

    Attributes
    ----------
    dims : tuple of str
        The parameter's dims (as :attr:`Family.parameters`).
    mean, sd : numpy.ndarray
        Exact posterior mean and SD of each scalar, in the parameter's shape.
    distribution : scipy.stats frozen distribution, optional
        With array parameters broadcasting to that shape: its ``ppf`` gives the intervals.
        None where no scalar has a standard closed-form marginal.
    has_interval : numpy.ndarray of bool, optional
        The scalars whose ``distribution`` is their marginal (default: all of them); the
        others (Σ's off-diagonal entries) get their intervals from draws.
    point_mass : numpy.ndarray of bool, optional
        Scalars that are a constant (the categorical model's padding cells, always 0): their
        mean, SD and interval are ``mean``, 0 and [mean, mean].
    """

    dims: tuple[str, ...]
    mean: np.ndarray
    sd: np.ndarray
    distribution: object = None
    has_interval: np.ndarray | None = None
    point_mass: np.ndarray | None = None


def dirichlet_marginal(
    dims: tuple[str, ...], concentration: np.ndarray, *, beta: bool = False
) -> Marginal:
    """Component marginals of Dirichlet(concentration) along the last axis: Beta(a_j, a0 − a_j).

    ``beta`` marks a (present, absent) pair whose first component is the parameter. Zero
    concentrations are padding, a point mass at 0.
    """
    concentration = np.asarray(concentration, dtype=np.float64)
    total = concentration.sum(axis=-1, keepdims=True)
    if beta:
        concentration, total = concentration[..., 0], total[..., 0]
    return beta_marginal(dims, concentration, total)


def beta_marginal(dims: tuple[str, ...], concentration: np.ndarray, total) -> Marginal:
    """Beta(a, a0 − a) marginals of concentrations a of totals a0 (see
    :func:`dirichlet_marginal`); a zero a is padding, a point mass at 0."""
    from scipy import stats

    padding = concentration <= 0
    if not padding.any():  # the common case, in few passes over a million cells
        mean = concentration / total
        # √(m (1 − m) / (a0 + 1)) in place: each temporary of a million cells costs a pass
        sd = 1.0 - mean
        sd *= mean
        sd /= total + 1.0
        np.sqrt(sd, out=sd)
        return Marginal(dims, mean, sd, stats.beta(concentration, total - concentration))
    a = np.where(padding, 1.0, concentration)
    b = np.where(padding, 1.0, total - concentration)
    mean = np.where(padding, 0.0, a / (a + b))
    sd = np.where(padding, 0.0, np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1.0))))
    return Marginal(dims, mean, sd, stats.beta(a, b), point_mass=padding)


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


def niw_marginals(mean, kappa, dof, scale) -> dict[str, Marginal]:
    """Exact marginals of μ and Σ under normal-inverse-Wishart parameters (GDA and QDA).

    ``mean`` (K, D) and ``kappa`` (K,) are the class means' m_k and κ_k; ``dof`` ν and
    ``scale`` Ψ are one (D, D) scale for a shared Σ (GDA) or ν (K,) and Ψ (K, D, D) per class
    (QDA). μ_kj is Student-t with ν − D + 1 degrees of freedom, location m_kj and scale
    √(Ψ_jj / (κ_k (ν − D + 1))); Σ_jj is inverse-gamma((ν − D + 1) / 2, Ψ_jj / 2). Every Σ_ij
    has the inverse-Wishart mean Ψ_ij / (ν − D − 1) and variance
    ((ν − D + 1) Ψ_ij² + (ν − D − 1) Ψ_ii Ψ_jj) / ((ν − D)(ν − D − 1)²(ν − D − 3)), but the
    off-diagonal entries have no standard marginal: their intervals come from draws. A
    moment that does not exist (too few degrees of freedom) is NaN.
    """
    from scipy import stats

    mean, kappa = np.asarray(mean, dtype=np.float64), np.asarray(kappa, dtype=np.float64)
    dof, scale = np.asarray(dof, dtype=np.float64), np.asarray(scale, dtype=np.float64)
    n_features = scale.shape[-1]
    shared = scale.ndim == 2
    nu = dof - n_features  # ν − D, broadcast per class for QDA
    diagonal = np.diagonal(scale, axis1=-2, axis2=-1)  # (D,) or (K, D)
    df = nu + 1.0
    nu_k = np.broadcast_to(nu, kappa.shape)[:, None]
    t_scale = np.sqrt(diagonal / (kappa[:, None] * (nu_k + 1.0)))
    with np.errstate(divide="ignore", invalid="ignore"):
        mu_sd = np.where(nu_k > 1.0, t_scale * np.sqrt((nu_k + 1.0) / (nu_k - 1.0)), np.nan)
        mu_mean = np.where(nu_k > 0.0, mean, np.nan)
        nu_c = nu if shared else nu[:, None, None]
        cov_mean = np.where(nu_c > 1.0, scale / (nu_c - 1.0), np.nan)
        outer = diagonal[..., :, None] * diagonal[..., None, :]
        variance = ((nu_c + 1.0) * scale**2 + (nu_c - 1.0) * outer) / (
            nu_c * (nu_c - 1.0) ** 2 * (nu_c - 3.0)
        )
        cov_sd = np.where(nu_c > 3.0, np.sqrt(variance), np.nan)
    eye = np.broadcast_to(np.eye(n_features, dtype=bool), scale.shape)
    shape_ig = np.broadcast_to(df if shared else df[:, None, None], scale.shape) / 2.0
    # Off the diagonal the inverse-gamma is a placeholder that has_interval masks out.
    scale_ig = np.where(eye, scale, outer) / 2.0
    cov_dims = ("feature", "feature2") if shared else ("class", "feature", "feature2")
    return {
        "mu": Marginal(
            ("class", "feature"),
            mu_mean,
            mu_sd,
            stats.t(np.broadcast_to(nu_k + 1.0, mean.shape), loc=mean, scale=t_scale),
        ),
        "cov": Marginal(
            cov_dims, cov_mean, cov_sd, stats.invgamma(shape_ig, scale=scale_ig), has_interval=eye
        ),
    }


# --------------------------------------------------------------------------------------------
# Dirichlet helpers shared by the families: every model has π ~ Dirichlet(class_alpha).


def parameter_coords(estimates: xr.Dataset) -> dict[str, pd.Index]:
    """The coords of the parameters: those of ``estimates`` among class, feature, feature2 and
    category (the posterior's, the MAP point's and the PyMC model's)."""
    names = ("class", "feature", "feature2", "category")
    # The pandas indexes themselves: a new Dataset reuses them, where from their values it
    # would build each index again (20 ms for 50,000 feature names, several times a fit).
    return {name: estimates.indexes[name] for name in names if name in estimates.coords}


def class_marginal(estimates: xr.Dataset) -> Marginal:
    """π's exact marginals: Beta(N_k + a, N + K a − N_k − a) for every class."""
    return dirichlet_marginal(("class",), class_concentration(estimates, posterior=True))


def class_concentration(estimates: xr.Dataset, *, posterior: bool) -> np.ndarray:
    """Dirichlet concentration of π: class_alpha (+ the class counts for the posterior).

    Examples
    --------
    >>> from bayesgen import closed_form
    >>> from bayesgen.families.base import class_concentration
    >>> est = closed_form.multinomial_nb([[1, 0], [0, 1], [1, 1]], [0, 1, 1], class_alpha=0.5)
    >>> class_concentration(est, posterior=False).tolist()
    [0.5, 0.5]
    >>> class_concentration(est, posterior=True).tolist()
    [1.5, 2.5]
    """
    weight = 1.0 if posterior else 0.0
    return estimates.attrs["class_alpha"] + weight * estimates["class_count"].values


def class_statistic(estimates: xr.Dataset, posterior: xr.Dataset, class_alpha: float):
    """Σ log π of each draw under its exact Dirichlet(class_alpha + N_k) law (a
    :class:`bayesgen.maths.joint_statistics.JointStatistic`)."""

    concentration = class_alpha + estimates["class_count"].values.astype(np.float64)
    return fixed_statistic(
        "Σ log class_prob", "class_prob", posterior["class_prob"].values, concentration
    )


def gaussian_statistics(
    estimates: xr.Dataset, posterior: xr.Dataset, class_alpha: float, params: dict, *, shared
) -> list:
    """Σ log π, κ (μ − m)ᵀ Σ⁻¹ (μ − m) and tr(Ψ Σ⁻¹) of each draw under the normal-inverse-
    Wishart posterior ``params`` (one Σ where ``shared``; see
    :func:`bayesgen.maths.joint_statistics.normal_inverse_wishart_statistics`)."""
    moments = normal_inverse_wishart_statistics(
        posterior["mu"].values, posterior["cov"].values, params, shared=shared
    )
    return [class_statistic(estimates, posterior, class_alpha), *moments]


def class_log_evidence(estimates: xr.Dataset, class_alpha) -> np.ndarray:
    """log p(y | a) of the training labels in their order, π ~ Dirichlet(a) integrated out:

        lnΓ(K a) − lnΓ(N + K a) + Σ_k [lnΓ(N_k + a) − lnΓ(a)]

    (no multinomial coefficient: adding log(N! / Π_k N_k!) gives that of the class counts).

    Parameters
    ----------
    estimates : xarray.Dataset
        A fit, for its ``class_count``.
    class_alpha : float or array-like
        a > 0, any shape.

    Returns
    -------
    numpy.ndarray of shape ``np.shape(class_alpha)``
    """
    counts = estimates["class_count"].values[None, :]
    return DirichletEvidence(counts, name="class_alpha")(class_alpha)


def loo_class_log_prob(estimates: xr.Dataset, y_codes: np.ndarray) -> np.ndarray:
    """log E[π_k | D without row i] = log((N_k − [k = y_i] + a) / (N − 1 + K a)), shape
    (n_samples, n_classes): the class term of every model's exact leave-one-out joint.

    −inf where a class loses its only row under a = ``class_alpha`` = 0.
    """
    count = estimates["class_count"].values.astype(np.float64)
    class_alpha = estimates.attrs["class_alpha"]
    n_classes = count.size
    own = np.arange(n_classes)[None, :] == np.asarray(y_codes)[:, None]
    with np.errstate(divide="ignore"):
        return np.log(count[None, :] - own + class_alpha) - np.log(
            count.sum() - 1.0 + n_classes * class_alpha
        )
