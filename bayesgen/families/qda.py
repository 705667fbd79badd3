"""Quadratic discriminant analysis: x | y = k ~ N(μ_k, Σ_k), one covariance per class.

π ~ Dirichlet(a) and, independently for every class, the normal-inverse-Wishart prior of
:class:`bayesgen.closed_form.NormalInverseWishart`: Σ_k ~ InverseWishart(ν₀, Ψ₀) and
μ_k | Σ_k ~ N(m₀, Σ_k / κ₀), with the same resolved (m₀, κ₀, ν₀, Ψ₀) for every class. The
sufficient statistics are the class counts N_k, the class means x̄_k and the class scatters
S_k = Σ_{i: y_i = k} (x_i − x̄_k)(x_i − x̄_k)ᵀ. Each class's posterior is normal-inverse-Wishart
again, with

* κ_k = κ₀ + N_k,  m_k = (κ₀ m₀ + N_k x̄_k) / κ_k,  ν_k = ν₀ + N_k
* Ψ_k = Ψ₀ + S_k + (κ₀ N_k / κ_k) (x̄_k − m₀)(x̄_k − m₀)ᵀ

(:func:`bayesgen.closed_form.niw_posterior` on one class), so E[Σ_k | data] =
Ψ_k / (ν_k − D − 1), and the exact draws, the joint mode and the posterior predictive are closed
forms. Unlike GDA, the quadratic term −½ xᵀΣ_k⁻¹x differs between classes, so p(y | x) is not
linear in x and every log-likelihood here is the full Gaussian log density.

This module is the whole of QDA: it goes through :class:`bayesgen.families.base.Family` alone.
The PyMC model imports PyMC and PyTensor inside :meth:`QuadraticFamily.pymc_model`.
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
from bayesgen.families.presentation import TopParameters
from bayesgen.families.qda_checks import qda_expected
from bayesgen.families.results import Marginal, Variable, niw_marginals
from bayesgen.input.alpha import check_smoothing
from bayesgen.input.statistics import gaussian_statistics, merge_gaussian_statistics
from bayesgen.maths.counts import class_means
from bayesgen.maths.covariance_memory import check_covariance_memory
from bayesgen.maths.dirichlet import add_lambda, dirichlet_draws, mode_of
from bayesgen.maths.gaussian import (
    DEFAULT_PRIOR,
    NormalInverseWishart,
    class_means_and_scatters,
    gaussian_rows,
    niw_posterior,
    overall_moments,
)
from bayesgen.maths.missing_gaussian import log_joint as missing_log_joint
from bayesgen.maths.standardise import standardised_problem

if TYPE_CHECKING:
    import pymc as pm


class QuadraticFamily(Family):
    """Quadratic discriminant analysis, one covariance per class (see the module docstring)."""

    name = "qda"
    estimator = "QuadraticDiscriminantAnalysis"
    cli_name = "qda"
    feature_kind = "real"
    # Predictions integrate a missing entry out; a fit with one is the estimators' Gibbs
    # sampler (the closed forms refuse it, FIT_MISSING_REASON).
    missing_values = True
    parameters: ClassVar[dict[str, tuple[str, ...]]] = {
        "class_prob": ("class",),
        "mu": ("class", "feature"),
        "cov": ("class", "feature", "feature2"),
    }
    statistics: ClassVar[dict[str, tuple[str, ...]]] = {
        "class_count": ("class",),
        "class_mean": ("class", "feature"),
        "scatter": ("class", "feature", "feature2"),
    }
    presentation = gaussian_presentation(
        top_parameter_label="standardised class mean (μ_kj − c_j) / s_j",
        top_parameter_caption="class means furthest from the overall mean, in within-class SDs",
        variable_symbols={"mu": "μ", "cov": "Σ"},
        linear_boundaries=False,
    )

    # -- plots and the report -------------------------------------------------------------

    def fitted_prior(self, estimates: xr.Dataset, params: Mapping) -> dict:
        """The normal-inverse-Wishart prior at its fitted values (see the base class)."""
        return fitted_niw_prior(estimates)

    def feature_scores(self, estimates: xr.Dataset) -> np.ndarray:
        """How far the class means of each feature lie from its overall mean, in pooled
        within-class standard deviations (the largest over the classes)."""
        return np.abs(_standardised_means(estimates, estimates["mu"])).max(axis=0).values

    def top_parameters(self, estimates: xr.Dataset, posterior: xr.Dataset) -> TopParameters:
        """Each class's standardised means (μ_kj − c_j) / s_j, ranked by their closed form:
        QDA has no linear weights, and these say which features set a class apart."""
        draws = _standardised_means(estimates, posterior["mu"])
        scores = np.abs(_standardised_means(estimates, estimates["mu"]).values)
        return TopParameters(draws.transpose("chain", "draw", "class", "feature"), scores)

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
        """Closed-form quadratic discriminant analysis, one covariance Σ_k per class.

        :meth:`sufficient_statistics` of the rows, then :meth:`from_statistics`.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Real-valued features.
        y : array-like of shape (n_samples,)
        class_alpha : float, default 1.0
            Dirichlet concentration of the class prior; 0 gives the MLE π_k = N_k / N.
        prior : NormalInverseWishart or None
            With a prior (the same for every class), ``mu`` and ``cov`` are the posterior means
            E[μ_k], E[Σ_k]; the resolved hyperparameters are stored as ``prior_mean``,
            ``prior_scale`` and attrs. With ``None`` they are the maximum-likelihood estimates
            x̄_k and S_k / N_k, which need more samples than features in every class.
        feature_names : sequence of str, optional
            Names of the columns of X; default DataFrame column names or ``x0, x1, ...``.
        sample_weight : array-like of shape (n_samples,), optional
            Finite weights ≥ 0: row i counts w_i times (see :mod:`bayesgen.input.statistics`).

        Returns
        -------
        xarray.Dataset
            ``class_count``, ``class_mean``, ``scatter`` (class, feature, feature2);
            ``class_prob``/``class_prob_mle``, ``mu``/``mu_mle`` (class, feature) and
            ``cov``/``cov_mle`` (class, feature, feature2).

        Raises
        ------
        ValueError
            With ``prior=None``, for a class whose maximum-likelihood covariance is singular
            (no more samples than features, or features constant or collinear within it);
            with a prior, for a class whose E[Σ_k] does not exist (ν₀ + N_k ≤ D + 1).
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
        """The (weighted) class counts N_k, class means x̄_k and class scatters
        S_k = Σ_{i: y_i = k} w_i (x_i − x̄_k)(x_i − x̄_k)ᵀ of X, y (see
        :mod:`bayesgen.input.statistics`); ``classes`` (``partial_fit``) fixes the class
        coordinate, a class without rows having N_k = 0, x̄_k = 0 and S_k = 0.

        ``draws`` (posterior draws, ``draws × chains``), ``prior_draws`` and ``dtype`` (the
        estimator's) size the memory of the covariances and their draws, refused at once where
        they cannot fit
        (:func:`~bayesgen.maths.covariance_memory.check_covariance_memory`).
        """
        # Before any work: at thousands of columns the covariance draws need hundreds of GiB.
        check_covariance_memory(
            X,
            n_covariances=_n_classes(y, classes),
            draws=draws,
            prior_draws=prior_draws,
            dtype=dtype,
            model=self.name,
        )
        X, feature_names = complete_training_rows(X, feature_names, kind=self.feature_kind)
        return gaussian_statistics(
            self,
            X,
            y,
            class_means_and_scatters,
            feature_names=feature_names,
            sample_weight=sample_weight,
            classes=classes,
        )

    def merge_statistics(self, first: xr.Dataset, second: xr.Dataset) -> xr.Dataset:
        """The statistics of the union of two sets of rows: counts add, each class's mean and
        scatter by Chan's parallel update (:func:`bayesgen.maths.gaussian.merge_class_moments`)."""
        return merge_gaussian_statistics(self, first, second)

    def from_statistics(
        self,
        statistics: xr.Dataset,
        *,
        class_alpha: float = 1.0,
        prior: NormalInverseWishart | None = DEFAULT_PRIOR,
    ) -> xr.Dataset:
        """The closed-form estimates of :meth:`fit` from sufficient statistics alone; the
        data-centred defaults of ``prior`` come from the overall moments the statistics give
        (:func:`bayesgen.maths.gaussian.overall_moments`)."""
        class_alpha = check_smoothing(class_alpha, "class_alpha")
        count = statistics["class_count"].values
        mean = statistics["class_mean"].values
        scatter = statistics["scatter"].values
        classes, feature_names = statistics["class"].values, statistics["feature"].values
        n_classes, n_features = statistics.sizes["class"], statistics.sizes["feature"]
        n_samples = count.sum()
        with np.errstate(invalid="ignore", divide="ignore"):  # NaN for a class without rows
            cov_mle = scatter / count[:, None, None]
        variables = {
            "class_count": (("class",), count),
            "class_mean": (("class", "feature"), mean),
            "scatter": (("class", "feature", "feature2"), scatter),
            "class_prob": (("class",), add_lambda(count, n_samples, class_alpha, n_classes)),
            "class_prob_mle": (("class",), count / n_samples),
            "mu_mle": (("class", "feature"), np.where((count > 0)[:, None], mean, np.nan)),
            "cov_mle": (("class", "feature", "feature2"), cov_mle),
        }
        attrs = {
            "model": self.name,
            "class_alpha": class_alpha,
            "n_samples": statistics.attrs["n_samples"],
            "feature_names_given": statistics.attrs["feature_names_given"],
            "prior": "none" if prior is None else "normal_inverse_wishart",
        }
        if prior is None:
            _check_class_covariances(count, mean, scatter, classes, feature_names)
            mu, cov = mean, cov_mle
        else:
            resolved = prior.resolve_moments(*overall_moments(count, mean, scatter), feature_names)
            posterior = per_class_niw_posterior(count, mean, scatter, resolved)
            _check_mean_covariance_exists(posterior["dof"], count, classes, resolved)
            mu = posterior["mean"]
            cov = posterior["scale"] / (posterior["dof"] - n_features - 1)[:, None, None]
            variables["prior_mean"] = (("feature",), resolved["mean"])
            variables["prior_scale"] = (("feature", "feature2"), resolved["scale"])
            attrs.update(prior_kappa=resolved["kappa"], prior_dof=resolved["dof"])
        variables["mu"] = (("class", "feature"), mu)
        variables["cov"] = (("class", "feature", "feature2"), cov)
        coords = {"class": classes, "feature": feature_names, "feature2": feature_names}
        return xr.Dataset(variables, coords=coords, attrs=attrs)

    def plug_in_log_joint(self, estimates: xr.Dataset, X) -> tuple[np.ndarray, None]:
        """log N(x | μ_k, Σ_k) + log π_k with the point estimates (over each row's observed
        coordinates); never zero-probability orders (every class has a sample, so π_k > 0)."""
        joint = missing_log_joint(
            X,
            estimates["class_prob"].values[None],
            estimates["mu"].values[None],
            estimates["cov"].values[None],
        )
        return joint[0], None

    def predictive_log_joint(self, estimates: xr.Dataset, X) -> np.ndarray:
        """Exact log p(x, y = k | data) under the per-class normal-inverse-Wishart posterior.

        Integrating μ_k and Σ_k out of N(x | μ_k, Σ_k) gives a multivariate Student-t with
        ν_k − D + 1 degrees of freedom, location m_k and shape Ψ_k (κ_k + 1) / (κ_k (ν_k − D +
        1)); π is independent of the (μ_k, Σ_k) a posteriori, so its mean multiplies in. A row
        with missing entries has the t's marginal over its observed ones
        (:func:`~bayesgen.families.gaussian_shared.niw_predictive_log_joint`).
        """
        return niw_predictive_log_joint(estimates, X, niw_posterior_parameters)

    # -- the exact conjugate posterior -------------------------------------------------

    def conjugate_draws(
        self, estimates: xr.Dataset, rng, sample_shape, dtype, *, posterior: bool
    ) -> dict[str, Variable]:
        """π from its Dirichlet, then for each class Σ_k from its inverse-Wishart and
        μ_k | Σ_k from its normal.

        The order of the random draws (π, then Σ_0, μ_0, Σ_1, μ_1, …) is part of the result:
        a seeded fit gives the same draws in every release.
        """
        concentration = class_concentration(estimates, posterior=posterior)
        class_prob = dirichlet_draws(rng, concentration, sample_shape, dtype)
        params = _niw_parameters(estimates, posterior=posterior)
        n_classes, n_features = estimates.sizes["class"], estimates.sizes["feature"]
        n_samples = int(np.prod(sample_shape))
        mu = np.empty((n_samples, n_classes, n_features))
        cov = np.empty((n_samples, n_classes, n_features, n_features))
        for k in range(n_classes):
            cov[:, k] = scipy_stats.invwishart.rvs(
                df=params["dof"][k], scale=params["scale"][k], size=n_samples, random_state=rng
            ).reshape(n_samples, n_features, n_features)
            chol = np.linalg.cholesky(cov[:, k])
            noise = rng.standard_normal((n_samples, n_features))
            mu[:, k] = params["mean"][k] + np.einsum("sij,sj->si", chol, noise) / np.sqrt(
                params["kappa"][k]
            )
        return {
            "class_prob": (("class",), class_prob),
            "mu": (("class", "feature"), mu.reshape(*sample_shape, n_classes, n_features)),
            "cov": (
                ("class", "feature", "feature2"),
                cov.reshape(*sample_shape, n_classes, n_features, n_features),
            ),
        }

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
        normal_inverse_wishart_statistics`): a wrong κ, ν or Ψ moves them. A fit with missing
        entries has only Σ log π."""
        if estimates.attrs.get("missing_entries"):
            return [class_statistic(estimates, posterior, class_alpha)]
        params = _niw_parameters(estimates, posterior=True)
        return gaussian_joint_statistics(estimates, posterior, class_alpha, params, shared=False)

    def conjugate_mode(self, estimates: xr.Dataset) -> dict[str, Variable]:
        """π at its Dirichlet mode, μ_k = m_k and Σ_k = Ψ_k / (ν_k + D + 2).

        That is the joint mode of (μ_k, Σ_k): the normal of μ_k adds one factor |Σ_k|^(-1/2) to
        the inverse-Wishart density |Σ_k|^(-(ν_k + D + 1)/2) exp(−½ tr Ψ_k Σ_k⁻¹).
        """
        class_prob = mode_of(class_concentration(estimates, posterior=True))
        params = _niw_parameters(estimates, posterior=True)
        n_features = estimates.sizes["feature"]
        cov = params["scale"] / (params["dof"] + n_features + 2)[:, None, None]
        return {
            "class_prob": (("class",), class_prob),
            "mu": (("class", "feature"), params["mean"]),
            "cov": (("class", "feature", "feature2"), cov),
        }

    def exact_marginals(self, estimates: xr.Dataset) -> dict[str, Marginal]:
        """π's Beta marginals, μ's Student-t and Σ's moments (inverse-gamma diagonal) of the
        normal-inverse-Wishart posterior (:func:`~bayesgen.families.results.niw_marginals`);
        ``coef`` and ``intercept`` have none."""
        params = _niw_parameters(estimates, posterior=True)
        marginals = niw_marginals(params["mean"], params["kappa"], params["dof"], params["scale"])
        return {"class_prob": class_marginal(estimates), **marginals}

    # -- PyMC ----------------------------------------------------------------------------

    def pymc_model(self, estimates: xr.Dataset, *, incomplete_rows=None) -> pm.Model:
        """QDA as a PyMC model on the sufficient statistics.

        For every class, the precision Λ_k ~ Wishart(ν₀, Ψ₀⁻¹) through its Bartlett
        decomposition (Λ_k = L A_k A_kᵀ Lᵀ with χ² variates on the diagonal of A_k and N(0, 1)
        below it, batched over the classes), μ_k | Λ_k ~ N(m₀, (κ₀ Λ_k)⁻¹) (one free variable
        ``mu`` over (class, feature)); Σ_k = Λ_k⁻¹ then follows
        the inverse-Wishart prior whose posterior means are the closed form.

        The Gaussian likelihood of the rows factorises exactly into that of the statistics,
        which are observed: the class counts ``class_count`` ~ Multinomial(N, π), the class
        means ``class_mean`` x̄_k ~ N(μ_k, Σ_k / N_k) (one batched variable) and the class
        scatters ``scatter_0``, ``scatter_1``, … S_k ~ Wishart(N_k − 1, Σ_k) (one variable per
        class). Their log densities are written on the precision's Cholesky factor
        (:mod:`bayesgen.families.gda_pymc`), whose graphs compile 3–4 times faster than
        PyMC's ``MvNormal`` and ``Wishart``; they stay random variables that PyMC simulates.
        A class whose S_k has no Wishart density (N_k − 1 < D, or features collinear or
        constant within it) has its kernel −(N_k − 1)/2 log|Σ_k| − ½ tr(Σ_k⁻¹ S_k)
        in the potential ``scatter_loglik`` instead, which PyMC does not simulate; a class
        without rows has no mean to observe.

        Parameters
        ----------
        estimates : xarray.Dataset
            From :meth:`fit` with a normal-inverse-Wishart prior (its resolved hyperparameters
            ``prior_mean``, ``prior_scale``, ``prior_kappa``, ``prior_dof``).
        incomplete_rows : tuple (rows, y_codes), optional
            Rows with missing entries (NaN) and their class codes, beside the complete rows
            that ``estimates`` holds the statistics of: each row's density with its missing
            entries latent (see :func:`bayesgen.families.gda_pymc.observe_incomplete_rows`).
        """
        from bayesgen.families.qda_pymc import qda_pymc_model  # heavy: PyMC

        return qda_pymc_model(estimates, incomplete_rows=incomplete_rows)

    def map_problem(self, estimates: xr.Dataset):
        """The statistics and prior of the standardised features, and the map of a point
        found there back (see :func:`bayesgen.maths.standardise.standardised_problem`); s is the
        pooled within-class standard deviation, Σ_k S_k summed over the classes."""
        return standardised_problem(estimates, estimates["scatter"].values.sum(axis=0))

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
        """π, μ_k and Σ_k under each class's normal-inverse-Wishart posterior (see
        :mod:`bayesgen.families.qda_checks`). Σ_k's mode is compared only for a closed-form
        MAP: find_MAP's is that of the Bartlett variables. A fit with missing entries has only
        π's (:func:`~bayesgen.families.gaussian_shared.missing_fit_expected`)."""
        if estimates.attrs.get("missing_entries"):
            return missing_fit_expected(estimates, class_alpha, self.parameters)
        return qda_expected(
            estimates,
            class_alpha=class_alpha,
            exact_map=map_method == "closed_form",
            posterior_parameters=niw_posterior_parameters,
        )

    # -- prediction from draws ------------------------------------------------------------

    def draw_log_joint(self, estimates: xr.Dataset, X, draws: xr.Dataset) -> np.ndarray:
        """log N(x | μ_k, Σ_k) + log π_k for every draw, in float64 through Cholesky factors;
        a row with missing entries over its observed coordinates
        (:func:`bayesgen.maths.missing_gaussian.log_joint`)."""
        return missing_log_joint(
            X,
            draws["class_prob"].values.astype(np.float64),
            draws["mu"].values.astype(np.float64),
            draws["cov"].values.astype(np.float64),
        )

    # -- the row-level generative model (draw_log_joint is the full density) ---------------

    def simulate_rows(self, estimates: xr.Dataset, X, y_codes, parameters, rng):
        """x_i ~ N(μ_{y_i}, Σ_{y_i}), blanked where the training rows miss an entry."""
        rows = gaussian_rows(parameters["mu"], parameters["cov"], y_codes, rng)
        return rows_with_missing_pattern(rows, X)

    def predictive_statistics(self, estimates: xr.Dataset, X, y_codes) -> dict:
        """``class_feature_mean``: each feature's mean within each class."""
        if np.isnan(np.asarray(X, dtype=np.float64)).any():  # over the observed entries
            means = observed_class_means(X, y_codes, estimates.sizes["class"])
        else:
            means = class_means(X, y_codes, estimates.sizes["class"], empty=np.nan)
        return {"class_feature_mean": (("class", "feature"), means)}

    # -- exact leave-one-out (bayesgen.checks.loo) -----------------------------------------------

    def loo_log_joint(
        self, estimates: xr.Dataset, X, y_codes: np.ndarray, *, options: dict | None = None
    ) -> np.ndarray:
        """log p(x_i, y = k | D without row i) under the per-class normal-inverse-Wishart
        posterior: log E[π_k | D_{-i}] plus the multivariate Student-t predictive of class k,
        where only the own class's (κ, m, ν, Ψ) lose row i (see
        :func:`bayesgen.maths.gaussian.niw_leave_one_out_log_density`)."""
        if estimates.attrs.get("missing_entries"):
            raise NotImplementedError("qda: a fit with missing entries has no closed-form LOO.")
        return gaussian_loo_log_joint(estimates, X, y_codes, niw_posterior_parameters)

    # -- the evidence (bayesgen.closed_form.log_evidence) ---------------------------------

    def log_evidence(self, estimates: xr.Dataset) -> float:
        """log p(y | a) + log p(X | y) under the normal-inverse-Wishart prior of the fit (see
        :func:`bayesgen.maths.evidence.niw_log_evidence`)."""
        refuse_missing_fit(estimates, "log_evidence")
        return gaussian_log_evidence(estimates, niw_posterior_parameters)


FAMILY = QuadraticFamily()


# --------------------------------------------------------------------------------------------
# Pure NumPy pieces.


def per_class_niw_posterior(class_count, class_mean, scatter, prior: dict) -> dict:
    """(m_k, κ_k, ν_k, Ψ_k) of each class's own normal-inverse-Wishart posterior."""
    per_class = [
        niw_posterior(class_count[k : k + 1], class_mean[k : k + 1], scatter[k], prior)
        for k in range(len(class_count))
    ]
    return {
        "mean": np.concatenate([post["mean"] for post in per_class]),
        "kappa": np.concatenate([post["kappa"] for post in per_class]),
        "dof": np.array([post["dof"] for post in per_class], dtype=np.float64),
        "scale": np.stack([post["scale"] for post in per_class]),
    }


def niw_posterior_parameters(estimates: xr.Dataset) -> dict:
    """(m_k, κ_k, ν_k, Ψ_k) of every class's posterior, from a fit with a prior."""
    return _niw_parameters(estimates, posterior=True)


# --------------------------------------------------------------------------------------------
# Private helpers.


def _niw_parameters(estimates: xr.Dataset, *, posterior: bool) -> dict:
    """(m_k, κ_k, ν_k, Ψ_k) per class of the posterior, or of the prior (no data)."""
    prior = {
        "mean": estimates["prior_mean"].values,
        "kappa": estimates.attrs["prior_kappa"],
        "dof": estimates.attrs["prior_dof"],
        "scale": estimates["prior_scale"].values,
    }
    count = estimates["class_count"].values
    if posterior:
        return per_class_niw_posterior(
            count, estimates["class_mean"].values, estimates["scatter"].values, prior
        )
    n_classes, n_features = estimates.sizes["class"], estimates.sizes["feature"]
    return {
        "mean": np.broadcast_to(prior["mean"], (n_classes, n_features)),
        "kappa": np.full(n_classes, prior["kappa"]),
        "dof": np.full(n_classes, prior["dof"]),
        "scale": np.broadcast_to(prior["scale"], (n_classes, n_features, n_features)),
    }


def _standardised_means(estimates: xr.Dataset, mu: xr.DataArray) -> xr.DataArray:
    """(μ_kj − c_j) / s_j: c the overall mean, s² the pooled within-class variance (s = 1 for
    a feature constant within every class)."""
    count = estimates["class_count"].values.astype(np.float64)
    center = count @ estimates["class_mean"].values / count.sum()
    pooled = np.diagonal(estimates["scatter"].values, axis1=-2, axis2=-1).sum(axis=0)
    scale = np.sqrt(pooled / count.sum())
    scale = np.where(scale > 0, scale, 1.0)
    return (mu - xr.DataArray(center, dims="feature")) / xr.DataArray(scale, dims="feature")


def _check_class_covariances(count, class_mean, scatter, classes, feature_names) -> None:
    """Raise a ValueError naming the class when its maximum-likelihood Σ_k is singular."""
    n_features = scatter.shape[-1]
    advice = "Fit with a prior (prior=NormalInverseWishart()), which every class can use"
    for k, label in enumerate(classes):
        if count[k] <= n_features:
            raise ValueError(
                f"X: class {str(label)!r} has {int(count[k])} samples for {n_features} features, "
                "so its maximum-likelihood covariance is singular (QDA needs more samples than "
                f"features in every class). {advice}, or use fewer features or more rows."
            )
        variance = np.diag(scatter[k])
        reference = variance + count[k] * np.square(class_mean[k])
        constant = np.flatnonzero(variance <= 1e-12 * reference)
        if constant.size:
            names = [str(feature_names[j]) for j in constant[:10]]
            raise ValueError(
                f"X: the covariance of class {str(label)!r} is singular because features {names} "
                f"do not vary within it. {advice}, or drop those features."
            )
        std = np.sqrt(variance)
        eigenvalues, eigenvectors = np.linalg.eigh(scatter[k] / np.outer(std, std))
        null = eigenvalues < 1e-10 * n_features
        if np.any(null):
            loadings = np.abs(eigenvectors[:, null]).max(axis=1)
            names = [str(feature_names[j]) for j in np.flatnonzero(loadings > 1e-3)[:10]]
            raise ValueError(
                f"X: the covariance of class {str(label)!r} is singular because features {names} "
                f"are collinear within it. {advice}, or drop one of them."
            )


def _check_mean_covariance_exists(dof, count, classes, prior: dict) -> None:
    """E[Σ_k] = Ψ_k / (ν_k − D − 1) exists only for ν_k = ν₀ + N_k > D + 1."""
    n_features = prior["scale"].shape[0]
    bad = np.flatnonzero(dof <= n_features + 1)
    if bad.size:
        k = bad[0]
        raise ValueError(
            f"prior dof: class {str(classes[k])!r} has N_k = {int(count[k])} samples, and "
            f"ν₀ + N_k = {dof[k]:g} ≤ D + 1 = {n_features + 1} leaves its posterior mean "
            f"covariance undefined; use dof > {n_features + 1 - count[k]:g} (the default is "
            f"D + 2 = {n_features + 2})."
        )


def _n_classes(y, classes) -> int:
    """The number of classes of y (or ``classes``), for sizing the covariances; 1 for a y
    that is not yet known to be labels (the data checks refuse it)."""
    if classes is not None:
        return len(classes)
    try:
        return max(1, len(np.unique(np.asarray(y))))
    except (TypeError, ValueError):
        return 1
