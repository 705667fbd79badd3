"""Gaussian naive Bayes: x_j | y = k ~ N(μ_kj, σ²_kj), one normal per class and feature.

π ~ Dirichlet(a) and, independently for every class k and feature j, the normal–inverse-gamma
prior of :class:`bayesgen.maths.normal_inverse_gamma.NormalInverseGamma`:
σ²_kj ~ Inv-Gamma(a₀, b₀_j) and μ_kj | σ²_kj ~ N(m₀_j, σ²_kj / κ₀). The sufficient statistics are
the class counts N_k, the class means x̄_kj and the sums of squares
S_kj = Σ_{i: y_i = k} (x_ij − x̄_kj)²; every cell's posterior is normal–inverse-gamma again
(:func:`~bayesgen.maths.normal_inverse_gamma.posterior`), so the posterior means, SDs and modes,
the exact draws, the Student-t predictive, the evidence and exact leave-one-out are closed forms
(see :mod:`bayesgen.maths.normal_inverse_gamma`). ``mu_mle`` and ``var_mle`` are x̄_kj and
S_kj / N_k: scikit-learn's ``GaussianNB(var_smoothing=0)`` ``theta_`` and ``var_``.

The prior is scikit-learn's ``var_smoothing`` made a model: it keeps a variance from vanishing
where a feature is constant within a class, by b₀ in units of the feature's own spread. With
``prior="evidence"`` the data choose its strength: m₀ and the scaling of b₀ stay the default's,
and κ₀, a₀ and r (b₀_j = a₀ r s²_j) are those that maximise the evidence
(:func:`~bayesgen.maths.normal_inverse_gamma.evidence_prior`).

Missing entries (NaN in a dense X) are integrated out, missing at random: a cell's statistics
are over the rows of its class where the feature is observed, with their own count n_kj
(``cell_count``, present only where X had a missing entry; without one the statistics are
exactly those of complete data), every closed form holds per cell with n_kj in place of N_k,
and a row's missing features drop out of its likelihood and its predictions.

This module is the whole of the block (a :class:`~bayesgen.families.base.Family`); its PyMC
model, on the statistics, is in :mod:`bayesgen.families.gaussian_nb_pymc`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import xarray as xr
from scipy import stats as scipy_stats

from bayesgen.families.base import Family
from bayesgen.families.class_prior import CLASS_PRIOR
from bayesgen.families.expected import Expected, reason_array
from bayesgen.families.presentation import Presentation, TopParameters
from bayesgen.families.results import Marginal, Variable
from bayesgen.input.alpha import check_smoothing
from bayesgen.input.statistics import (
    CELL_COUNT,
    cell_counts,
    check_mergeable,
    total_weight,
    training_data,
)
from bayesgen.maths import normal_inverse_gamma as nig
from bayesgen.maths.counts import class_means
from bayesgen.maths.normal_inverse_gamma import DEFAULT_PRIOR, NormalInverseGamma
from bayesgen.maths.prior_strength import describe_bounds

if TYPE_CHECKING:
    import pymc as pm

CELL = ("class", "feature")
#: The statistic of data with missing entries: the (weighted) observed rows of each cell.
NIG = "normal–inverse-gamma"
NO_MU_MEAN = "mean not compared: its Monte Carlo error needs Var(μ) to exist, a_n > 1"
NO_MU_SD = "SD not compared: its Monte Carlo error needs a finite fourth moment, a_n > 2"
NO_VAR_MEAN = "mean not compared: its Monte Carlo error needs Var(σ²) to exist, a_n > 2"
NO_VAR_SD = "SD not compared: its Monte Carlo error needs a finite fourth moment, a_n > 4"
#: ``prior="evidence"``: m₀ and the scaling of b₀ as the default's, κ₀, a₀ and r chosen by the
#: evidence (:func:`bayesgen.maths.normal_inverse_gamma.evidence_prior`).
EVIDENCE = "evidence"
#: What each limit of the evidence's search says, for the warning at a bound.
_SYMBOLS = {"kappa": "κ₀", "shape": "a₀", "variance_ratio": "r = b₀ / (a₀ s²)"}
_MEANINGS = {
    ("kappa", "upper"): "each feature's class means are explained as one, its overall mean",
    ("kappa", "lower"): "the class means are explained as unrelated to the overall mean",
    ("shape", "upper"): "each feature's class variances are explained as one",
    ("shape", "lower"): "the class variances are explained as wildly unequal",
    ("variance_ratio", "upper"): "the variances are explained as far above the overall one",
    ("variance_ratio", "lower"): "the variances are explained as far below the overall one",
}


class GaussianNaiveBayesFamily(Family):
    """Gaussian naive Bayes with a normal–inverse-gamma prior per cell (see the module
    docstring)."""

    name = "gaussian_nb"
    estimator = "GaussianNB"
    cli_name = "gaussian"
    feature_kind = "real"
    missing_values = True
    parameters: ClassVar[dict[str, tuple[str, ...]]] = {
        "class_prob": ("class",),
        "mu": CELL,
        "var": CELL,
    }
    statistics: ClassVar[dict[str, tuple[str, ...]]] = {
        "class_count": ("class",),
        "class_mean": CELL,
        "sum_squares": CELL,
    }
    presentation = Presentation(
        plot_variables=("class_prob", "mu", "var"),
        top_parameter_label="standardised class mean (μ_kj − c_j) / s_j",
        top_parameter_caption="class means furthest from the overall mean, in within-class SDs",
        variable_symbols={"mu": "μ", "var": "σ²"},
        ppc_variables=("class_feature_mean",),
        ppc_caption=(
            "class_feature_mean is each feature's mean within each class, in pooled within-class "
            "SDs from the feature's mean, all cells pooled. The model fits these directly, so a "
            "black curve outside the blue ones means a prior (mean, κ₀) strong enough to pull the "
            "class means."
        ),
        report_plots=("mu_pair", "feature_densities"),
        linear_boundaries=False,
    )

    # -- statistics and closed forms -------------------------------------------------------

    def fitted_prior(self, estimates: xr.Dataset, params: Mapping) -> dict:
        """The normal-inverse-gamma prior at its fitted values (see the base class)."""
        resolved = resolved_prior(estimates)
        prior = NormalInverseGamma(
            mean=np.array(resolved["mean"], copy=True),
            kappa=float(resolved["kappa"]),
            shape=float(resolved["shape"]),
            scale=np.array(resolved["scale"], copy=True),
        )
        return {"prior": prior}

    def sufficient_statistics(
        self, X, y, *, feature_names=None, sample_weight=None, classes=None
    ) -> xr.Dataset:
        """The (weighted) class counts N_k, class means x̄_kj and sums of squares S_kj of X, y
        (:func:`~bayesgen.maths.normal_inverse_gamma.class_moments`); ``classes``
        (``partial_fit``) fixes the class coordinate, a class without rows having zeros.

        Where X has missing entries (NaN) the means and sums of squares are over each cell's
        observed rows and ``cell_count`` (class, feature) holds their weight
        (:func:`~bayesgen.maths.normal_inverse_gamma.cell_moments`); without one the Dataset
        has no ``cell_count``."""
        data = training_data(
            X,
            y,
            kind=self.feature_kind,
            feature_names=feature_names,
            sample_weight=sample_weight,
            classes=classes,
            missing=True,
        )
        cells = None
        if np.isnan(data.X).any():
            count, cells, mean, sum_squares = nig.cell_moments(
                data.X, data.y, len(data.classes), data.sample_weight
            )
        else:
            count, mean, sum_squares = nig.class_moments(
                data.X, data.y, len(data.classes), data.sample_weight
            )
        return self._statistics_dataset(
            count,
            mean,
            sum_squares,
            coords={"class": data.classes, "feature": data.feature_names},
            attrs={"feature_names_given": int(data.names_given)},
            cells=cells,
        )

    def merge_statistics(self, first: xr.Dataset, second: xr.Dataset) -> xr.Dataset:
        """The statistics of the union of two sets of rows: counts add, means and sums of
        squares by Chan's parallel update (:func:`~bayesgen.maths.normal_inverse_gamma.
        merge_moments`), cell by cell where either holds ``cell_count``."""
        check_mergeable(first, second)
        coords = first[list(self.statistics)].coords
        if CELL_COUNT not in first and CELL_COUNT not in second:
            count, mean, sum_squares = nig.merge_moments(
                *(tuple(part[name].values for name in self.statistics) for part in (first, second))
            )
            return self._statistics_dataset(
                count, mean, sum_squares, coords=coords, attrs=first.attrs
            )
        cells, mean, sum_squares = nig.merge_moments(
            *(
                (cell_counts(part), part["class_mean"].values, part["sum_squares"].values)
                for part in (first, second)
            )
        )
        count = first["class_count"].values + second["class_count"].values
        return self._statistics_dataset(
            count, mean, sum_squares, coords=coords, attrs=first.attrs, cells=cells
        )

    def _statistics_dataset(
        self, count, mean, sum_squares, *, coords, attrs, cells=None
    ) -> xr.Dataset:
        variables = {
            "class_count": (("class",), count),
            "class_mean": (CELL, mean),
            "sum_squares": (CELL, sum_squares),
        }
        if cells is not None:
            variables[CELL_COUNT] = (CELL, cells)
        attrs = {**attrs, "model": self.name, "n_samples": total_weight(count)}
        return xr.Dataset(variables, coords=coords, attrs=attrs)

    def from_statistics(
        self,
        statistics: xr.Dataset,
        *,
        class_alpha: float = 1.0,
        prior: NormalInverseGamma | str | None = DEFAULT_PRIOR,
    ) -> xr.Dataset:
        """The closed-form estimates from the statistics alone.

        Parameters
        ----------
        statistics : xarray.Dataset
            From :meth:`sufficient_statistics` (or merged).
        class_alpha : float, default 1.0
            Dirichlet concentration of the class prior; 0 gives π_k = N_k / N.
        prior : NormalInverseGamma, "evidence" or None
            The prior of every cell; None is the default ``NormalInverseGamma()``, whose
            data-centred m₀ and b₀ come from the overall moments the statistics give (over
            the observed entries, where some are missing).
            "evidence": m₀ the overall mean and b₀_j = a₀ r s²_j, with κ₀, a₀ and r those
            that maximise the evidence of the statistics
            (:func:`~bayesgen.maths.normal_inverse_gamma.evidence_prior`).

        Returns
        -------
        xarray.Dataset
            The statistics; ``class_prob``, ``mu`` and ``var`` (the posterior means) with
            their ``*_mle`` (N_k / N, x̄_kj and S_kj / n_kj; NaN for a cell without rows),
            n_kj the cell's count (``cell_count`` where entries are missing, else N_k);
            ``prior_mean`` m₀ and ``prior_scale`` b₀ (feature), attrs ``prior_kappa`` κ₀ and
            ``prior_shape`` a₀. With ``prior="evidence"`` also attrs ``prior_strength``
            ("evidence") and ``prior_variance_ratio`` r, and, where the evidence still
            increases beyond a bound of its search, ``prior_evidence_bound`` saying which
            (the estimator warns with it).

        Raises
        ------
        ValueError
            For a cell whose E[σ²] does not exist (a₀ + n_kj / 2 ≤ 1), or a prior that does
            not resolve (:meth:`NormalInverseGamma.resolve_moments`).
        TypeError
            For a prior that is none of the above (ValueError for a string).
        """
        class_alpha = check_smoothing(class_alpha, "class_alpha")
        prior = DEFAULT_PRIOR if prior is None else prior
        count = statistics["class_count"].values
        # Per class where every entry is observed (exactly today's arithmetic), else per cell.
        counts = statistics[CELL_COUNT].values if CELL_COUNT in statistics else count
        mean = statistics["class_mean"].values
        sum_squares = statistics["sum_squares"].values
        feature_names = statistics["feature"].values
        chosen = {}
        if isinstance(prior, str) and prior == EVIDENCE:
            resolved, choice = nig.evidence_prior(counts, mean, sum_squares, feature_names)
            chosen = {
                "prior_strength": EVIDENCE,
                "prior_variance_ratio": choice.values["variance_ratio"],
            }
            if choice.at_bound:
                chosen["prior_evidence_bound"] = describe_bounds(choice, _SYMBOLS, _MEANINGS)
        elif isinstance(prior, NormalInverseGamma):
            resolved = prior.resolve_moments(
                *nig.overall_moments(counts, mean, sum_squares), feature_names
            )
        else:
            error = ValueError if isinstance(prior, str) else TypeError  # a misspelt option
            raise error(
                f"prior: expected None, 'evidence' or a bayesgen NormalInverseGamma; got {prior!r}."
            )
        posterior = nig.posterior(counts, mean, sum_squares, resolved)
        _check_mean_variance_exists(posterior["shape"], cell_counts(statistics), statistics)
        cells = cell_counts(statistics)
        empty = cells == 0
        with np.errstate(invalid="ignore", divide="ignore"):  # NaN for a cell without rows
            var_mle = sum_squares / cells
        variables = {name: statistics[name] for name in self.statistics}
        if CELL_COUNT in statistics:
            variables[CELL_COUNT] = statistics[CELL_COUNT]
        variables |= CLASS_PRIOR.estimates(count, class_alpha)
        variables |= {
            "mu": (CELL, posterior["mean"]),
            "mu_mle": (CELL, np.where(empty, np.nan, mean)),
            "var": (CELL, nig.variance_moments(posterior)[0]),
            "var_mle": (CELL, np.where(empty, np.nan, var_mle)),
            "prior_mean": (("feature",), resolved["mean"]),
            "prior_scale": (("feature",), resolved["scale"]),
        }
        attrs = {
            "model": self.name,
            "class_alpha": class_alpha,
            "n_samples": statistics.attrs["n_samples"],
            "feature_names_given": statistics.attrs["feature_names_given"],
            "prior": "normal_inverse_gamma",
            "prior_kappa": resolved["kappa"],
            "prior_shape": resolved["shape"],
            **chosen,
        }
        coords = {"class": statistics["class"].values, "feature": feature_names}
        return xr.Dataset(variables, coords=coords, attrs=attrs)

    def plug_in_log_joint(self, estimates: xr.Dataset, X) -> tuple[np.ndarray, None]:
        """log π_k + Σ_j log N(x_j | μ_kj, σ²_kj) at the posterior means, over the observed
        features of each row."""
        joint = nig.normal_log_joint(
            np.asarray(X, dtype=np.float64),
            estimates["class_prob"].values[None],
            estimates["mu"].values[None],
            estimates["var"].values[None],
        )
        return joint[0], None

    def predictive_log_joint(self, estimates: xr.Dataset, X) -> np.ndarray:
        """log E[π_k | data] + Σ_j log of each cell's Student-t predictive (μ and σ²
        integrated out; π is independent of them a posteriori), over the observed features
        of each row."""
        density = nig.predictive_log_density(X, posterior_parameters(estimates))
        return density + np.log(estimates["class_prob"].values)[None, :]

    def log_evidence(self, estimates: xr.Dataset) -> float:
        """log p(y | a) + Σ_kj log p(x_·j of class k | prior): the labels' Dirichlet term and
        every cell's normal–inverse-gamma evidence of its observed entries
        (:func:`~bayesgen.maths.normal_inverse_gamma.log_evidence`)."""
        labels = CLASS_PRIOR.log_evidence(estimates, estimates.attrs["class_alpha"])
        cells = nig.log_evidence(
            cell_counts(estimates),
            resolved_prior(estimates),
            posterior_parameters(estimates),
        )
        return float(labels + cells.sum())

    # -- the exact conjugate posterior -----------------------------------------------------

    def conjugate_draws(
        self, estimates: xr.Dataset, rng, sample_shape, dtype, *, posterior: bool
    ) -> dict[str, Variable]:
        """π from its Dirichlet, then every σ²_kj, then every μ_kj | σ²_kj
        (:func:`~bayesgen.maths.normal_inverse_gamma.normal_inverse_gamma_draws`); that order
        fixes which random numbers each gets."""
        class_prob = CLASS_PRIOR.draws(estimates, rng, sample_shape, dtype, posterior=posterior)
        params = _parameters(estimates, posterior=posterior)
        mu, var = nig.normal_inverse_gamma_draws(params, rng, sample_shape)
        return {
            "class_prob": class_prob,
            "mu": (CELL, mu.astype(dtype)),
            "var": (CELL, var.astype(dtype)),
        }

    def conjugate_mode(self, estimates: xr.Dataset) -> dict[str, Variable]:
        """π at its Dirichlet mode; μ_kj = m_n and σ²_kj = b_n / (a_n + 3/2), the joint mode of
        each cell's (μ, σ²) (:func:`~bayesgen.maths.normal_inverse_gamma.joint_mode`)."""
        mu, var = nig.joint_mode(posterior_parameters(estimates))
        return {"class_prob": CLASS_PRIOR.mode(estimates), "mu": (CELL, mu), "var": (CELL, var)}

    def exact_marginals(self, estimates: xr.Dataset) -> dict[str, Marginal]:
        """π's Beta marginals; μ_kj's Student-t with 2 a_n degrees of freedom, location m_n and
        scale √(b_n / (a_n κ_n)); σ²_kj's Inv-Gamma(a_n, b_n). A moment that does not exist
        is NaN."""
        params = posterior_parameters(estimates)
        a, b, kappa = params["shape"], params["scale"], params["kappa"]
        mu_mean, mu_sd, _ = nig.mean_moments(params)
        var_mean, var_sd, _ = nig.variance_moments(params)
        return {
            "class_prob": CLASS_PRIOR.marginal(estimates),
            "mu": Marginal(
                CELL,
                mu_mean,
                mu_sd,
                scipy_stats.t(2.0 * a, loc=params["mean"], scale=np.sqrt(b / (a * kappa))),
            ),
            "var": Marginal(CELL, var_mean, var_sd, scipy_stats.invgamma(a, scale=b)),
        }

    def loo_log_joint(
        self, estimates: xr.Dataset, X, y_codes: np.ndarray, *, options: dict | None = None
    ) -> np.ndarray:
        """log p(x_i, y = k | D without row i): π's leave-one-out term plus every cell's
        Student-t predictive, where only row i's own class loses it, in the cells row i is
        observed in (:func:`~bayesgen.maths.normal_inverse_gamma.leave_one_out_log_density`)."""
        y_codes = np.asarray(y_codes)
        density = nig.leave_one_out_log_density(X, y_codes, posterior_parameters(estimates))
        return CLASS_PRIOR.loo_log_prob(estimates, y_codes) + density

    # -- the generative model --------------------------------------------------------------

    def pymc_model(self, estimates: xr.Dataset) -> pm.Model:
        """Gaussian naive Bayes as a PyMC model on the sufficient statistics, which are
        observed (see :func:`bayesgen.families.gaussian_nb_pymc.gaussian_nb_pymc_model`)."""
        from bayesgen.families.gaussian_nb_pymc import gaussian_nb_pymc_model  # heavy: PyMC

        return gaussian_nb_pymc_model(estimates)

    def draw_log_joint(self, estimates: xr.Dataset, X, draws: xr.Dataset) -> np.ndarray:
        """log π_k + Σ_j log N(x_j | μ_kj, σ²_kj) for every draw, in full (nothing left out),
        over the observed features of each row."""
        return nig.normal_log_joint(
            np.asarray(X, dtype=np.float64),
            draws["class_prob"].transpose("draw", "class").values.astype(np.float64),
            draws["mu"].transpose("draw", *CELL).values.astype(np.float64),
            draws["var"].transpose("draw", *CELL).values.astype(np.float64),
        )

    def simulate_rows(self, estimates: xr.Dataset, X, y_codes, parameters, rng):
        """x_ij ~ N(μ_{y_i} j, σ²_{y_i} j), independently; NaN where X is missing, so that
        every simulated data set keeps the training rows' pattern of missing entries."""
        mu = np.asarray(parameters["mu"], dtype=np.float64)[y_codes]
        sd = np.sqrt(np.asarray(parameters["var"], dtype=np.float64)[y_codes])
        rows = mu + sd * rng.standard_normal(mu.shape)
        missing = np.isnan(np.asarray(X, dtype=np.float64))
        return np.where(missing, np.nan, rows) if missing.any() else rows

    def predictive_statistics(self, estimates: xr.Dataset, X, y_codes) -> dict:
        """``class_feature_mean``: each feature's mean within each class (over its observed
        entries; NaN for a cell without any)."""
        X = np.asarray(X, dtype=np.float64)
        n_classes = estimates.sizes["class"]
        missing = np.isnan(X)
        if not missing.any():
            means = class_means(X, y_codes, n_classes, empty=np.nan)
            return {"class_feature_mean": (CELL, means)}
        _, cells, means, _ = nig.cell_moments(X, np.asarray(y_codes), n_classes)
        return {"class_feature_mean": (CELL, np.where(cells > 0, means, np.nan))}

    # -- the comparison --------------------------------------------------------------------

    def expected(
        self,
        estimates: xr.Dataset,
        *,
        alpha: float | None,
        class_alpha: float,
        options: dict,
        map_method: str | None,
    ) -> list[Expected]:
        """π, μ and σ² under each cell's normal–inverse-gamma posterior. A check is made only
        where its Monte Carlo error exists: the mean needs a finite variance (μ: a_n > 1, σ²:
        a_n > 2), the SD a finite fourth moment (μ: a_n > 2, σ²: a_n > 4). The modes are the
        joint mode of (μ, σ²), which find_MAP's is too: the PyMC model declares μ and σ² as
        they are named."""
        params = posterior_parameters(estimates)
        shape = params["shape"]
        mu_mean, mu_sd, mu_kurtosis = nig.mean_moments(params)
        var_mean, var_sd, var_kurtosis = nig.variance_moments(params)
        mu_mode, var_mode = nig.joint_mode(params)
        prior = (
            f"NIG per cell (κ₀={estimates.attrs['prior_kappa']:g}, "
            f"a₀={estimates.attrs['prior_shape']:g})"
        )

        def block(variable, mean, sd, kurtosis, mode, needs, mle, identities):
            has_mean, has_sd = shape > needs[0], shape > needs[1]
            return Expected(
                variable=variable,
                keep=np.ones(shape.shape, dtype=bool),
                closed_form=np.where(has_mean, mean, np.nan),
                closed_form_sd=np.where(has_sd, sd, np.nan),
                closed_form_kurtosis=np.where(has_sd, kurtosis, np.nan),
                mle=mle,
                expected_map=mode,
                reasons=(
                    np.where(has_mean, "", needs[2]).astype(object),
                    np.where(has_sd, "", needs[3]).astype(object),
                    reason_array(shape.shape),
                ),
                hide_map=np.zeros(shape.shape, dtype=bool),
                prior=prior,
                mean_identity=identities[0],
                sd_identity=identities[1],
                map_identity=identities[2],
            )

        mu = block(
            "mu",
            mu_mean,
            mu_sd,
            mu_kurtosis,
            mu_mode,
            (1.0, 2.0, NO_MU_MEAN, NO_MU_SD),
            estimates["mu_mle"].values,
            (
                f"posterior mean of μ_kj under {NIG} = m_n = (κ₀ m₀ + N_k x̄_kj) / κ_n",
                f"posterior SD of μ_kj under {NIG} = √(b_n / (κ_n (a_n − 1)))",
                f"MAP of μ_kj under {NIG} = m_n",
            ),
        )
        var = block(
            "var",
            var_mean,
            var_sd,
            var_kurtosis,
            var_mode,
            (2.0, 4.0, NO_VAR_MEAN, NO_VAR_SD),
            estimates["var_mle"].values,
            (
                f"posterior mean of σ²_kj under {NIG} = b_n / (a_n − 1)",
                f"posterior SD of σ²_kj under {NIG} = b_n / ((a_n − 1) √(a_n − 2))",
                f"MAP of σ²_kj under {NIG} = b_n / (a_n + 3/2) (joint mode with μ)",
            ),
        )
        return [CLASS_PRIOR.expected(estimates, class_alpha), mu, var]

    # -- presentation ----------------------------------------------------------------------

    def feature_scores(self, estimates: xr.Dataset) -> np.ndarray:
        """How far the class means of each feature lie from its overall mean, in pooled
        within-class standard deviations (the largest over the classes; over the observed
        entries where some are missing)."""
        return np.abs(_standardised_means(estimates, estimates["mu"])).max(axis=0).values

    def top_parameters(self, estimates: xr.Dataset, posterior: xr.Dataset) -> TopParameters:
        """Each class's standardised means (μ_kj − c_j) / s_j, ranked by their closed form."""
        draws = _standardised_means(estimates, posterior["mu"])
        scores = np.abs(_standardised_means(estimates, estimates["mu"]).values)
        return TopParameters(draws.transpose("chain", "draw", *CELL), scores)


FAMILY = GaussianNaiveBayesFamily()


# --------------------------------------------------------------------------------------------
# The posterior's parameters, from a fit.


def resolved_prior(estimates: xr.Dataset) -> dict:
    """m₀, κ₀, a₀ and b₀ of a fit, as :meth:`NormalInverseGamma.resolve_moments` gave them."""
    return {
        "mean": estimates["prior_mean"].values,
        "kappa": estimates.attrs["prior_kappa"],
        "shape": estimates.attrs["prior_shape"],
        "scale": estimates["prior_scale"].values,
    }


def posterior_parameters(estimates: xr.Dataset) -> dict:
    """(m_n, κ_n, a_n, b_n) of every cell's posterior, each (class, feature), from a fit."""
    return _parameters(estimates, posterior=True)


def _parameters(estimates: xr.Dataset, *, posterior: bool) -> dict:
    prior = resolved_prior(estimates)
    if not posterior:
        return nig.prior_parameters(prior, estimates.sizes["class"])
    return nig.posterior(
        cell_counts(estimates),
        estimates["class_mean"].values,
        estimates["sum_squares"].values,
        prior,
    )


# --------------------------------------------------------------------------------------------
# Private helpers.


def _standardised_means(estimates: xr.Dataset, mu: xr.DataArray) -> xr.DataArray:
    """(μ_kj − c_j) / s_j: c the overall mean, s² the pooled within-class variance (s = 1 for
    a feature constant within every class); over the observed entries where some are
    missing."""
    if CELL_COUNT in estimates:
        cells = estimates[CELL_COUNT].values.astype(np.float64)
        total = cells.sum(axis=0)
        center = (cells * estimates["class_mean"].values).sum(axis=0) / total
        scale = np.sqrt(estimates["sum_squares"].values.sum(axis=0) / total)
        scale = np.where(scale > 0, scale, 1.0)
        return (mu - xr.DataArray(center, dims="feature")) / xr.DataArray(scale, dims="feature")
    count = estimates["class_count"].values.astype(np.float64)
    center = count @ estimates["class_mean"].values / count.sum()
    scale = np.sqrt(estimates["sum_squares"].values.sum(axis=0) / count.sum())
    scale = np.where(scale > 0, scale, 1.0)
    return (mu - xr.DataArray(center, dims="feature")) / xr.DataArray(scale, dims="feature")


def _check_mean_variance_exists(shape, cells, statistics: xr.Dataset) -> None:
    """E[σ²_kj] = b_n / (a_n − 1) exists only for a_n = a₀ + n_kj / 2 > 1, n_kj the cell's
    count (N_k where no entry is missing)."""
    bad = np.argwhere(shape <= 1.0)
    if not bad.size:
        return
    k, j = bad[0]
    count = cells[k, 0 if cells.shape[1] == 1 else j]
    where = f"class {str(statistics['class'].values[k])!r} has N_k = {count:g} samples"
    symbol = "N_k"
    if CELL_COUNT in statistics:
        feature = str(statistics["feature"].values[j])
        where = (
            f"class {str(statistics['class'].values[k])!r} has n = {count:g} samples with "
            f"feature {feature!r} observed"
        )
        symbol = "n"
    raise ValueError(
        f"prior shape: {where}, and a₀ + {symbol} / 2 = {shape[k, j]:g} ≤ 1 leaves its "
        f"posterior mean variance undefined; use shape > {1.0 - count / 2:g} (the default is "
        "1.5)."
    )
