"""Gaussian discriminant analysis: x | y = k ~ N(μ_k, Σ) with one covariance Σ for all classes.

π ~ Dirichlet(a) and the conjugate normal-inverse-Wishart prior of
:class:`bayesgen.closed_form.NormalInverseWishart`: Σ ~ InverseWishart(ν₀, Ψ₀) and
μ_k | Σ ~ N(m₀, Σ / κ₀). The sufficient statistics are the class counts N_k, the class means
x̄_k and the pooled within-class scatter S; the posterior is normal-inverse-Wishart again
(:func:`bayesgen.closed_form.niw_posterior`), so the posterior means, the exact draws and the
joint mode are all closed forms. p(y | x) is a softmax of x (for two classes a logistic
function), whose ``coef`` and ``intercept`` are stored beside μ and Σ.

The PyMC model (:meth:`GaussianFamily.pymc_model`) is built only when asked for: this module
imports PyMC and PyTensor inside that method, so the closed forms stay importable without them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import xarray as xr
from scipy import stats as scipy_stats

from bayesgen.families.base import Family
from bayesgen.families.class_prior import class_concentration, class_marginal, class_statistic
from bayesgen.families.gaussian_shared import (
    complete_training_rows,
    fitted_niw_prior,
    gaussian_joint_statistics,
    gaussian_log_evidence,
    gaussian_loo_log_joint,
    gaussian_presentation,
    missing_fit_expected,
    niw_predictive_log_joint,
    observed_class_means,
    refuse_missing_fit,
    rows_with_missing_pattern,
)
from bayesgen.families.gda_checks import (
    LINEAR_FORM_FAILURE,
    LINEAR_FORM_IDENTITY,
    gda_expected,
    linear_form_errors,
)
from bayesgen.families.presentation import TopParameters
from bayesgen.families.results import DrawIdentity, Marginal, Variable, niw_marginals
from bayesgen.input.alpha import check_smoothing
from bayesgen.input.statistics import gaussian_statistics, merge_gaussian_statistics
from bayesgen.maths.counts import class_means, class_means_and_scatter
from bayesgen.maths.covariance_memory import check_covariance_memory
from bayesgen.maths.dirichlet import add_lambda, dirichlet_draws, mode_of
from bayesgen.maths.gaussian import (
    DEFAULT_PRIOR,
    NormalInverseWishart,
    check_pooled_covariance,
    gaussian_rows,
    gda_linear_form,
    niw_posterior,
    overall_moments,
)
from bayesgen.maths.likelihood import linear_log_likelihood
from bayesgen.maths.missing_gaussian import log_joint as missing_log_joint
from bayesgen.maths.standardise import standardised_problem

if TYPE_CHECKING:
    import pymc as pm


class GaussianFamily(Family):
    """Gaussian discriminant analysis with a shared covariance (see the module docstring)."""

    name = "gda"
    estimator = "GaussianDiscriminantAnalysis"
    cli_name = "gda"
    feature_kind = "real"
    # Predictions integrate a missing entry out; a fit with one is the estimators' Gibbs
    # sampler (the closed forms refuse it, FIT_MISSING_REASON).
    missing_values = True
    # The K > 2 form; two classes store the logistic θ, θ₀ instead (see parameter_dims).
    parameters: ClassVar[dict[str, tuple[str, ...]]] = {
        "class_prob": ("class",),
        "mu": ("class", "feature"),
        "cov": ("feature", "feature2"),
        "coef": ("class", "feature"),
        "intercept": ("class",),
    }
    statistics: ClassVar[dict[str, tuple[str, ...]]] = {
        "class_count": ("class",),
        "class_mean": ("class", "feature"),
        "scatter": ("feature", "feature2"),
    }
    presentation = gaussian_presentation(
        top_parameter_label="standardised discriminant weight θ·s",
        top_parameter_caption=(
            "discriminant weights θ in standard units (θ·s, s the feature's within-class SD, as "
            "the plots' feature selection ranks them)"
        ),
        variable_symbols={"mu": "μ"},
        linear_boundaries=True,
    )

    def fitted_prior(self, estimates: xr.Dataset, params: Mapping) -> dict:
        """The normal-inverse-Wishart prior at its fitted values (see the base class)."""
        return fitted_niw_prior(estimates)

    def has_exact_predictive(self, options: Mapping | None = None) -> bool:
        """False for the LKJ covariance prior (``options["cov_prior"] == "lkj"``), which has
        no closed-form posterior; True for the normal-inverse-Wishart prior."""
        return (options or {}).get("cov_prior", "conjugate") == "conjugate"

    def prior_draws_problem(self, estimates: xr.Dataset, options: Mapping | None = None):
        """The LKJ covariance prior has no exact prior draws; None for the
        normal-inverse-Wishart one."""
        if self.has_exact_predictive(options):
            return None
        return (
            "SBC draws the parameters from the conjugate prior; got cov_prior="
            f"{(options or {}).get('cov_prior')!r}, which has no exact prior draws. Use "
            "cov_prior='conjugate'."
        )

    def parameter_dims(self, estimates: xr.Dataset) -> dict[str, tuple[str, ...]]:
        """The parameters and their dims for this fit: two classes have one ``coef`` vector
        θ = w₁ − w₀ and a scalar ``intercept`` θ₀ = b₁ − b₀."""
        if estimates.sizes["class"] == 2:
            return self.parameters | {"coef": ("feature",), "intercept": ()}
        return dict(self.parameters)

    # -- plots and the report -------------------------------------------------------------

    def feature_scores(self, estimates: xr.Dataset) -> np.ndarray:
        """The largest |discriminant weight| of each feature times its within-class standard
        deviation: the weight of the feature in standard units."""
        coef = np.abs(np.atleast_2d(estimates["coef"].values)).max(axis=0)
        return coef * np.sqrt(np.diag(estimates["cov"].values))

    def top_parameters(self, estimates: xr.Dataset, posterior: xr.Dataset) -> TopParameters:
        """The discriminant weights of each class in standard units, θ_j·s_j (s_j the
        feature's within-class SD, from the closed-form Σ), ranked by their closed-form
        |θ·s|: the weights :meth:`feature_scores` ranks by, so a change of a feature's units
        changes neither. Two classes have one panel, the weights of the log-odds of the
        second class."""
        scale = np.sqrt(np.diag(estimates["cov"].values))
        coef = posterior["coef"] * xr.DataArray(scale, dims="feature")
        title = "class {}"
        if "class" not in coef.dims:
            coef = coef.expand_dims({"class": [estimates["class"].values[1]]}, axis=2)
            title = "log-odds of class {}"
        scores = np.abs(np.atleast_2d(estimates["coef"].values)) * scale
        return TopParameters(coef, scores, title)

    # -- closed forms (NumPy) ------------------------------------------------------------

    def fit(
        self,
        X,
        y,
        *,
        class_alpha: float = 1.0,
        prior: NormalInverseWishart | None = DEFAULT_PRIOR,
        feature_names=None,
        sample_weight=None,
    ) -> xr.Dataset:
        """Closed-form Gaussian discriminant analysis with one shared covariance Σ.

        :meth:`sufficient_statistics` of the rows, then :meth:`from_statistics`.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Real-valued features.
        y : array-like of shape (n_samples,)
        class_alpha : float, default 1.0
            Dirichlet concentration of the class prior; 0 gives the MLE φ = N_1 / N.
        prior : NormalInverseWishart or None
            With a prior, ``mu`` and ``cov`` are the posterior means E[μ_k], E[Σ] (the prior's
            resolved hyperparameters are stored as ``prior_mean``, ``prior_scale`` and attrs).
            With ``None`` they are the maximum-likelihood estimates.
        feature_names : sequence of str, optional
            Names of the columns of X; default DataFrame column names or ``x0, x1, ...``.
        sample_weight : array-like of shape (n_samples,), optional
            Finite weights ≥ 0: row i counts w_i times (see :mod:`bayesgen.input.statistics`).

        Returns
        -------
        xarray.Dataset
            ``class_count``, ``class_mean``, ``scatter``; ``class_prob``/``class_prob_mle``,
            ``mu``/``mu_mle`` (class, feature), ``cov``/``cov_mle`` (feature, feature2), and
            the linear form of p(y | x) from the point estimates: for two classes ``coef``
            θ = Σ⁻¹(μ₁ - μ₀) and ``intercept`` θ₀ = -½(μ₁ᵀΣ⁻¹μ₁ - μ₀ᵀΣ⁻¹μ₀) + log(φ / (1 - φ));
            for K classes ``coef`` w_k = Σ⁻¹μ_k and ``intercept`` b_k = -½ μ_kᵀΣ⁻¹μ_k + log π_k.
        """
        class_alpha = check_smoothing(class_alpha, "class_alpha")  # before the data are read
        statistics = self.sufficient_statistics(
            X, y, feature_names=feature_names, sample_weight=sample_weight
        )
        return self.from_statistics(statistics, class_alpha=class_alpha, prior=prior)

    def sufficient_statistics(
        self,
        X,
        y,
        *,
        feature_names=None,
        sample_weight=None,
        classes=None,
        draws: int = 0,
        prior_draws: int = 0,
        dtype: str = "float64",
    ) -> xr.Dataset:
        """The (weighted) class counts N_k, class means x̄_k and pooled within-class scatter
        S = Σ_i w_i (x_i − x̄_{y_i})(x_i − x̄_{y_i})ᵀ of X, y (see :mod:`bayesgen.input.statistics`);
        ``classes`` (``partial_fit``) fixes the class coordinate, a class without rows having
        N_k = 0 and x̄_k = 0.

        ``draws`` (posterior draws, ``draws × chains``), ``prior_draws`` and ``dtype`` (the
        estimator's) size the memory of the covariance and its draws, refused at once where
        they cannot fit (:func:`~bayesgen.maths.covariance_memory.check_covariance_memory`).
        """
        # Before any work: at thousands of columns the covariance draws need hundreds of GiB.
        check_covariance_memory(X, draws=draws, prior_draws=prior_draws, dtype=dtype)
        X, feature_names = complete_training_rows(X, feature_names, kind=self.feature_kind)
        return gaussian_statistics(
            self,
            X,
            y,
            class_means_and_scatter,
            feature_names=feature_names,
            sample_weight=sample_weight,
            classes=classes,
        )

    def merge_statistics(self, first: xr.Dataset, second: xr.Dataset) -> xr.Dataset:
        """The statistics of the union of two sets of rows: counts add, class means and the
        pooled scatter by Chan's parallel update
        (:func:`bayesgen.maths.gaussian.merge_class_moments`)."""
        return merge_gaussian_statistics(self, first, second)

    def from_statistics(
        self,
        statistics: xr.Dataset,
        *,
        class_alpha: float = 1.0,
        prior: NormalInverseWishart | None = DEFAULT_PRIOR,
    ) -> xr.Dataset:
        """The closed-form estimates of :meth:`fit` from sufficient statistics alone.

        The data-centred defaults of ``prior`` (m₀, Ψ₀) come from the overall mean and
        variance that the statistics give (:func:`bayesgen.maths.gaussian.overall_moments`).
        """
        class_alpha = check_smoothing(class_alpha, "class_alpha")
        count = statistics["class_count"].values
        mean = statistics["class_mean"].values
        scatter = statistics["scatter"].values
        n_classes, n_features = statistics.sizes["class"], statistics.sizes["feature"]
        n_samples = count.sum()
        feature_names = statistics["feature"].values
        cov_mle = scatter / n_samples
        variables = {
            "class_count": (("class",), count),
            "class_mean": (("class", "feature"), mean),
            "scatter": (("feature", "feature2"), scatter),
            "class_prob": (("class",), add_lambda(count, n_samples, class_alpha, n_classes)),
            "class_prob_mle": (("class",), count / n_samples),
            "mu_mle": (("class", "feature"), np.where((count > 0)[:, None], mean, np.nan)),
            "cov_mle": (("feature", "feature2"), cov_mle),
        }
        attrs = {
            "model": self.name,
            "class_alpha": class_alpha,
            "n_samples": statistics.attrs["n_samples"],
            "feature_names_given": statistics.attrs["feature_names_given"],
            "prior": "none" if prior is None else "normal_inverse_wishart",
        }
        if prior is None:
            check_pooled_covariance(scatter, count, feature_names, class_mean=mean)
            mu, cov = mean, cov_mle
        else:
            resolved = prior.resolve_moments(*overall_moments(count, mean, scatter), feature_names)
            posterior = niw_posterior(count, mean, scatter, resolved)
            mu = posterior["mean"]
            cov = posterior["scale"] / (posterior["dof"] - n_features - 1)
            variables["prior_mean"] = (("feature",), resolved["mean"])
            variables["prior_scale"] = (("feature", "feature2"), resolved["scale"])
            attrs.update(prior_kappa=resolved["kappa"], prior_dof=resolved["dof"])
        variables["mu"] = (("class", "feature"), mu)
        variables["cov"] = (("feature", "feature2"), cov)
        variables.update(_linear_form_variables(variables["class_prob"][1], mu, cov))
        coords = {
            "class": statistics["class"].values,
            "feature": feature_names,
            "feature2": feature_names,
        }
        return xr.Dataset(variables, coords=coords, attrs=attrs)

    def plug_in_log_joint(self, estimates: xr.Dataset, X) -> tuple[np.ndarray, None]:
        """x·w_k + b_k from the point estimates: log p(x, y = k) up to the quadratic term
        -½ xᵀΣ⁻¹x, which is the same for every class. Never has zero-probability orders. With
        missing entries, log N(x_O | μ_kO, Σ_OO) + log π_k over each row's observed ones."""
        draw = estimates[["class_prob", "mu", "cov"]].expand_dims("draw")
        return self.draw_log_joint(estimates, X, draw)[0], None

    def predictive_log_joint(self, estimates: xr.Dataset, X) -> np.ndarray:
        """Exact log p(x, y = k | data) under the normal-inverse-Wishart prior.

        Integrating μ_k and Σ out of N(x | μ_k, Σ) gives a multivariate Student-t with
        ν_N − D + 1 degrees of freedom, location m_k and shape Ψ_N (κ_k + 1) / (κ_k (ν_N − D +
        1)); π is independent of (μ, Σ) a posteriori, so its mean multiplies in. A row with
        missing entries has the t's marginal over its observed ones
        (:func:`~bayesgen.families.gaussian_shared.niw_predictive_log_joint`).
        """
        return niw_predictive_log_joint(estimates, X, niw_posterior_parameters)

    # -- the exact conjugate posterior -------------------------------------------------

    def conjugate_draws(
        self, estimates: xr.Dataset, rng, sample_shape, dtype, *, posterior: bool
    ) -> dict[str, Variable]:
        """π from its Dirichlet, then Σ from the inverse-Wishart and μ_k | Σ from its normal.

        The order of the random draws (π, then Σ, then μ) is part of the result: a seeded fit
        gives the same draws in every release.
        """
        concentration = class_concentration(estimates, posterior=posterior)
        class_prob = dirichlet_draws(rng, concentration, sample_shape, dtype)
        params = _niw_parameters(estimates, posterior=posterior)
        n_classes, n_features = estimates.sizes["class"], estimates.sizes["feature"]
        n_samples = int(np.prod(sample_shape))
        cov = scipy_stats.invwishart.rvs(
            df=params["dof"], scale=params["scale"], size=n_samples, random_state=rng
        ).reshape(n_samples, n_features, n_features)
        chol = np.linalg.cholesky(cov)
        noise = rng.standard_normal((n_samples, n_classes, n_features))
        mu = (
            params["mean"]
            + np.einsum("sij,skj->ski", chol, noise) / np.sqrt(params["kappa"])[:, None]
        )

        def unflatten(values):
            return values.reshape(*sample_shape, *values.shape[1:])

        flat_class_prob = class_prob.reshape(n_samples, n_classes)
        out = {
            "class_prob": (("class",), class_prob),
            "mu": (("class", "feature"), unflatten(mu)),
            "cov": (("feature", "feature2"), unflatten(cov)),
        }
        for name, (dims, values) in _linear_form_variables(flat_class_prob, mu, cov).items():
            out[name] = (dims, unflatten(values))
        return out

    def conjugate_mode(self, estimates: xr.Dataset) -> dict[str, Variable]:
        """π at its Dirichlet mode, μ_k = m_k and Σ = Ψ_N / (ν_N + D + 1 + K).

        That is the joint mode of (μ, Σ): each of the K class means adds a factor |Σ|^(-1/2)
        to the inverse-Wishart density. ``coef`` and ``intercept`` are the linear form at that
        point, as ``find_MAP`` reports its deterministics.
        """
        class_prob = mode_of(class_concentration(estimates, posterior=True))
        params = _niw_parameters(estimates, posterior=True)
        n_classes, n_features = estimates.sizes["class"], estimates.sizes["feature"]
        mu = params["mean"]
        cov = params["scale"] / (params["dof"] + n_features + 1 + n_classes)
        return {
            "class_prob": (("class",), class_prob),
            "mu": (("class", "feature"), mu),
            "cov": (("feature", "feature2"), cov),
            **_linear_form_variables(class_prob, mu, cov),
        }

    def exact_marginals(self, estimates: xr.Dataset) -> dict[str, Marginal]:
        """π's Beta marginals, μ's Student-t and Σ's moments (inverse-gamma diagonal) of the
        normal-inverse-Wishart posterior (:func:`~bayesgen.families.results.niw_marginals`);
        ``coef`` and ``intercept`` have none."""
        params = _niw_parameters(estimates, posterior=True)
        marginals = niw_marginals(params["mean"], params["kappa"], params["dof"], params["scale"])
        return {"class_prob": class_marginal(estimates), **marginals}

    # -- PyMC ----------------------------------------------------------------------------

    def pymc_model(
        self,
        estimates: xr.Dataset,
        *,
        cov_prior: str = "conjugate",
        lkj_eta: float = 2.0,
        incomplete_rows=None,
    ) -> pm.Model:
        """GDA as a PyMC model on the sufficient statistics.

        Parameters
        ----------
        estimates : xarray.Dataset
            From :meth:`fit` with a normal-inverse-Wishart prior (its resolved hyperparameters
            ``prior_mean``, ``prior_scale``, ``prior_kappa``, ``prior_dof`` define the conjugate
            prior and the scales of the LKJ one).
        cov_prior : {"conjugate", "lkj"}
            "conjugate": normal-inverse-Wishart (through a Bartlett-decomposed Wishart on Σ⁻¹),
            for which the closed-form posterior means are exact. "lkj": LKJ(η) correlation with
            half-normal standard deviations σ_j ~ HalfNormal(2.5 s_j) and independent
            μ_k ~ N(m₀, (10 s)²), PyMC's recommended prior for covariances, with no closed form.
        lkj_eta : float, default 2.0
            LKJ shape; 1 is uniform over correlation matrices, larger favours weaker
            correlation.
        incomplete_rows : tuple (rows, y_codes), optional
            Rows with missing entries (NaN) and their class codes, beside the complete rows
            that ``estimates`` holds the statistics of (its prior fixed by the caller): their
            labels and each row's density with its missing entries latent (see
            :func:`bayesgen.families.gda_pymc.observe_incomplete_rows`).

        Notes
        -----
        The Gaussian likelihood of the rows factorises exactly into that of the statistics,
        which are observed: the class counts ``class_count`` ~ Multinomial(N, π), the class
        means ``class_mean`` x̄_k ~ N(μ_k, Σ / N_k) and the pooled within-class scatter
        ``scatter`` S ~ Wishart(N − K, Σ), independent given the parameters. Where S has no
        Wishart density (N − K < D, or features collinear or constant within the classes) its
        kernel −(N − K)/2 log|Σ| − ½ tr(Σ⁻¹ S) enters as the potential ``scatter_loglik``
        instead, which PyMC does not simulate. Classes without rows have no mean to observe.
        """
        from bayesgen.families.gda_pymc import gda_pymc_model  # heavy: PyMC

        return gda_pymc_model(
            estimates, cov_prior=cov_prior, lkj_eta=lkj_eta, incomplete_rows=incomplete_rows
        )

    def map_problem(self, estimates: xr.Dataset):
        """The statistics and prior of the standardised features (x − c) / s, and the map
        μ = c + s μ', Σ = diag(s) Σ' diag(s) of a point found there back to the original ones.

        L-BFGS-B stops on a gradient tolerance, so on features of very different scales
        (wine's proline is in the hundreds, its hue below 1) it stops early. The
        normal-inverse-Wishart and LKJ models are equivariant under this affine map: the
        Bartlett factors are unchanged, μ and Σ transform linearly, so the mode found on the
        standardised features maps back exactly. c is the overall mean, s the pooled
        within-class standard deviation (1 for a constant feature); ``coef`` and ``intercept``
        are recomputed from the restored μ and Σ.
        """
        scaled, restore_mu_cov = standardised_problem(estimates, estimates["scatter"].values)

        def restore(point: xr.Dataset) -> xr.Dataset:
            restored = restore_mu_cov(point)
            linear = _linear_form_variables(
                point["class_prob"].values, restored["mu"].values, restored["cov"].values
            )
            for name, (dims, values) in linear.items():
                restored[name] = (dims, values)
            return restored

        return scaled, restore

    # -- prediction from draws ------------------------------------------------------------

    def draw_log_joint(self, estimates: xr.Dataset, X, draws: xr.Dataset) -> np.ndarray:
        """x·w_k + b_k for every draw, with the linear form computed in float64; where X has
        missing entries, every row's full log density over its observed coordinates
        (:func:`bayesgen.maths.missing_gaussian.log_joint`)."""
        class_prob, mu, cov = (
            draws[name].values.astype(np.float64) for name in ("class_prob", "mu", "cov")
        )
        if np.isnan(X).any():
            return missing_log_joint(X, class_prob, mu, _per_class(cov, mu))
        return linear_log_likelihood(X, *gda_linear_form(class_prob, mu, cov))

    # -- the row-level generative model ---------------------------------------------------

    def row_log_likelihood(self, estimates: xr.Dataset, X, y_codes, draws) -> np.ndarray:
        """log π_{y_i} + log N(x_i | μ_{y_i}, Σ), in full (over the observed coordinates of a
        row with missing entries): the linear form of :meth:`draw_log_joint` drops −½ xᵀΣ⁻¹x
        − ½ log |2πΣ|, which varies with Σ."""
        mu = draws["mu"].values.astype(np.float64)
        cov = _per_class(draws["cov"].values.astype(np.float64), mu)
        joint = missing_log_joint(X, draws["class_prob"].values.astype(np.float64), mu, cov)
        return joint[:, np.arange(len(y_codes)), y_codes]

    def simulate_rows(self, estimates: xr.Dataset, X, y_codes, parameters, rng):
        """x_i ~ N(μ_{y_i}, Σ), blanked where the training rows miss an entry."""
        rows = gaussian_rows(parameters["mu"], parameters["cov"], y_codes, rng)
        return rows_with_missing_pattern(rows, X)

    def predictive_statistics(self, estimates: xr.Dataset, X, y_codes) -> dict:
        """``class_feature_mean``: each feature's mean within each class."""
        if np.isnan(np.asarray(X, dtype=np.float64)).any():  # over the observed entries
            means = observed_class_means(X, y_codes, estimates.sizes["class"])
        else:
            means = class_means(X, y_codes, estimates.sizes["class"], empty=np.nan)
        return {"class_feature_mean": (("class", "feature"), means)}

    # -- the comparison (bayesgen.checks.comparison) -----------------------------------------------

    def expected(
        self,
        estimates: xr.Dataset,
        *,
        alpha: float | None,
        class_alpha: float,
        options: dict,
        map_method: str | None,
    ) -> list:
        """π, μ, Σ, coef and intercept under the normal-inverse-Wishart posterior (see
        :mod:`bayesgen.families.gda_checks`); under ``options["cov_prior"] == "lkj"`` only π
        has closed forms. Σ's mode is compared only for a closed-form MAP: find_MAP's is that
        of the Bartlett variables. A fit with missing entries has only π's
        (:func:`~bayesgen.families.gaussian_shared.missing_fit_expected`)."""
        if estimates.attrs.get("missing_entries"):
            return missing_fit_expected(estimates, class_alpha, self.parameter_dims(estimates))
        return gda_expected(
            estimates,
            class_alpha=class_alpha,
            cov_prior=options.get("cov_prior", "conjugate"),
            exact_map=map_method == "closed_form",
            posterior_parameters=niw_posterior_parameters,
        )

    def joint_statistics(
        self,
        estimates: xr.Dataset,
        posterior: xr.Dataset,
        *,
        alpha,
        class_alpha: float,
        options: dict | None = None,
    ) -> list:
        """Σ log π, and under the normal-inverse-Wishart prior κ (μ − m)ᵀ Σ⁻¹ (μ − m) ~ χ²
        and tr(Ψ Σ⁻¹) ~ χ² of each draw (:func:`bayesgen.maths.joint_statistics.
        normal_inverse_wishart_statistics`): a wrong κ, ν or Ψ moves them."""
        if (options or {}).get("cov_prior", "conjugate") != "conjugate" or estimates.attrs.get(
            "missing_entries"
        ):
            return [class_statistic(estimates, posterior, class_alpha)]
        params = _niw_parameters(estimates, posterior=True)
        return gaussian_joint_statistics(estimates, posterior, class_alpha, params, shared=True)

    def draw_identities(self, posterior: xr.Dataset) -> list[DrawIdentity]:
        """Every draw's ``coef`` and ``intercept`` are the linear form of its own (π, μ, Σ),
        whatever the prior, to the rounding of the stored draws."""
        return [
            DrawIdentity(
                statements=LINEAR_FORM_IDENTITY,
                errors=linear_form_errors(posterior),
                failure=LINEAR_FORM_FAILURE,
            )
        ]

    # -- exact leave-one-out (bayesgen.checks.loo) -----------------------------------------------

    def loo_log_joint(
        self, estimates: xr.Dataset, X, y_codes: np.ndarray, *, options: dict | None = None
    ) -> np.ndarray:
        """log p(x_i, y = k | D without row i) under the normal-inverse-Wishart posterior.

        log E[π_k | D_{-i}] plus the multivariate Student-t predictive of every class given
        D_{-i}: row i leaves κ, m of its own class and, since Σ is shared, ν and Ψ of every
        class (see :func:`bayesgen.maths.gaussian.niw_leave_one_out_log_density`).

        Raises
        ------
        NotImplementedError
            For ``options["cov_prior"] == "lkj"``, which has no closed-form posterior.
        """
        if not self.has_exact_predictive(options):
            raise NotImplementedError(
                "gda: cov_prior='lkj' has no closed-form leave-one-out posterior."
            )
        if estimates.attrs.get("missing_entries"):
            raise NotImplementedError("gda: a fit with missing entries has no closed-form LOO.")
        return gaussian_loo_log_joint(estimates, X, y_codes, niw_posterior_parameters)

    # -- the evidence (bayesgen.closed_form.log_evidence) ---------------------------------

    def log_evidence(self, estimates: xr.Dataset) -> float:
        """log p(y | a) + log p(X | y) under the normal-inverse-Wishart prior of the fit (see
        :func:`bayesgen.maths.evidence.niw_log_evidence`)."""
        refuse_missing_fit(estimates, "log_evidence")
        return gaussian_log_evidence(estimates, niw_posterior_parameters)


FAMILY = GaussianFamily()


# --------------------------------------------------------------------------------------------
# Private helpers.


def _linear_form_variables(class_prob, mu, cov) -> dict[str, Variable]:
    """``coef`` and ``intercept`` of one point or a batch of draws (leading axes kept)."""
    coef, intercept = gda_linear_form(class_prob, mu, cov)
    if coef.shape[-2] == 2:
        return {
            "coef": (("feature",), coef[..., 1, :] - coef[..., 0, :]),
            "intercept": ((), intercept[..., 1] - intercept[..., 0]),
        }
    return {"coef": (("class", "feature"), coef), "intercept": (("class",), intercept)}


def _per_class(cov: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """The shared Σ of each draw (S, D, D) as one per class (S, K, D, D), a view."""
    return np.broadcast_to(cov[:, None], (*mu.shape, mu.shape[-1]))


def niw_posterior_parameters(estimates: xr.Dataset) -> dict:
    """(m_k, κ_k, ν_N, Ψ_N) of a GDA fit's normal-inverse-Wishart posterior."""
    return _niw_parameters(estimates, posterior=True)


def _niw_parameters(estimates: xr.Dataset, *, posterior: bool) -> dict:
    """(m_k, κ_k, ν, Ψ) of the posterior, or of the prior (the posterior given no data)."""
    prior = {
        "mean": estimates["prior_mean"].values,
        "kappa": estimates.attrs["prior_kappa"],
        "dof": estimates.attrs["prior_dof"],
        "scale": estimates["prior_scale"].values,
    }
    if posterior:
        return niw_posterior(
            estimates["class_count"].values,
            estimates["class_mean"].values,
            estimates["scatter"].values,
            prior,
        )
    n_classes, n_features = estimates.sizes["class"], estimates.sizes["feature"]
    return {
        "mean": np.broadcast_to(prior["mean"], (n_classes, n_features)),
        "kappa": np.full(n_classes, prior["kappa"]),
        "dof": prior["dof"],
        "scale": prior["scale"],
    }
