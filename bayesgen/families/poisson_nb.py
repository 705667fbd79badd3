"""Poisson naive Bayes: counts per class and feature, each with a Gamma-distributed rate.

π ~ Dirichlet(a), λ_kj ~ Gamma(a₀, b₀) (shape a₀, rate b₀), and the count of feature j in a
row of class k is x_ij ~ Poisson(λ_kj), independently over the features. The statistics are
the (weighted) rows of each class N_k, the sums of each feature over them S_kj and, for the
evidence, Σ_i log x_ij! per class and feature; from them (:mod:`bayesgen.maths.gamma_poisson`):

* ``feature_rate_mle`` = S_kj / N_k, the class mean counts;
* λ_kj | data ~ Gamma(a₀ + S_kj, b₀ + N_k): ``feature_rate`` = (a₀ + S_kj) / (b₀ + N_k), its
  mean; SD √(a₀ + S_kj) / (b₀ + N_k), mode (a₀ + S_kj − 1) / (b₀ + N_k);
* the exact predictive of a new row is a product of negative binomials, and its
  leave-one-out form takes the row out of its class's Gamma;
* the evidence is a product of Gamma integrals, one per class and feature.

The rate prior
    ``rate_prior=(a₀, b₀)``, or by default Gamma(1, 1 / m̄), m̄ the mean count of the training
    data over all rows and features (Σ_kj S_kj / (N · D)): the shape 1 adds one count to each
    class's sum, as add-one smoothing does, and the rate spreads it over 1 / m̄ rows, so that
    the prior mean of every rate is the data's mean count and (an exponential) its SD too.
    A weak prior scaled to the data, as GDA's default prior is; with no count at all in the
    data, Gamma(1, 1). The fit records the prior it used in ``attrs["rate_prior_shape"]`` and
    ``attrs["rate_prior_rate"]``.

    ``rate_prior="evidence"``: the (a₀, b₀) that maximise the evidence, one Gamma for every
    rate as the model has it (:func:`bayesgen.maths.prior_strength.gamma_poisson_strength`).
    Each feature's class totals S_kj are then negative binomial with shape a₀ and mean
    N_k a₀ / b₀, so this is that negative binomial fitted to the class totals by maximum
    likelihood: a₀ large where the rates of the classes and features are alike (a₀ → ∞ is
    one rate for all), small where they spread.

Missing entries (NaN in a dense X) are integrated out, missing at random: S_kj and
Σ_i log x_ij! run over the observed entries and each cell's exposure is n_kj, the (weighted)
rows of class k where feature j is observed (``cell_count``, present only where X had a
missing entry), in place of N_k: λ_kj | data ~ Gamma(a₀ + S_kj, b₀ + n_kj), and a row's
missing features drop out of its likelihood and its predictions. The default prior's m̄ is
then the mean of the observed entries.

Counts need not be whole: a fractional x (a weight) enters the same kernel λˣ e^(−λ) / Γ(x + 1),
a weighted likelihood for which every closed form above holds; the PyMC model then takes the
sums through a potential, which it cannot simulate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import scipy.sparse as sp
import xarray as xr
from scipy import stats

import bayesgen.maths.gamma_poisson as gamma_poisson
from bayesgen.families.base import Family
from bayesgen.families.class_prior import CLASS_PRIOR
from bayesgen.families.expected import Expected, reason_array
from bayesgen.families.presentation import Presentation, TopParameters
from bayesgen.families.results import Marginal, Variable
from bayesgen.input.alpha import check_gamma_prior, check_smoothing
from bayesgen.input.statistics import (
    CELL_COUNT,
    cell_counts,
    check_mergeable,
    total_weight,
    training_data,
)
from bayesgen.maths.counts import class_counts, feature_counts
from bayesgen.maths.dirichlet import log
from bayesgen.maths.likelihood import linear_in_x
from bayesgen.maths.prior_strength import describe_bounds, gamma_poisson_strength

if TYPE_CHECKING:
    import pymc as pm

#: Why a rate has no posterior mode, for the comparison's table.
NO_GAMMA_MODE = (
    "boundary: Gamma(a < 1) has no mode (its density is unbounded at 0), so no MAP exists to "
    "compare with"
)


#: ``rate_prior="evidence"``: the Gamma prior of the rates chosen by the evidence.
EVIDENCE = "evidence"
#: What each limit of the evidence's search says, for the warning at a bound.
_SYMBOLS = {"shape": "the shape a₀", "mean": "the prior mean a₀ / b₀"}
_MEANINGS = {
    ("shape", "upper"): "every class and feature is explained by one rate (no overdispersion)",
    ("shape", "lower"): "the rates are explained as spread over many orders of magnitude",
    ("mean", "upper"): "the rates are explained as far above the mean count",
    ("mean", "lower"): "the rates are explained as far below the mean count",
}


def evidence_rate_prior(statistics: xr.Dataset) -> tuple[float, float, dict]:
    """The Gamma(a₀, b₀) that maximises the evidence of the statistics, and the attrs that
    record the choice (``rate_prior_strength``, and ``rate_prior_evidence_bound`` where the
    evidence still increases beyond a bound of the search).

    Examples
    --------
    Two classes whose rates differ tenfold: a weak prior (a₀ about one count), centred on
    the mean count.

    >>> import numpy as np
    >>> from bayesgen.families.poisson_nb import FAMILY, evidence_rate_prior
    >>> X = np.array([[12, 1], [9, 0], [11, 2], [1, 10], [0, 12], [2, 9]])
    >>> stats = FAMILY.sufficient_statistics(X, ["a", "a", "a", "b", "b", "b"])
    >>> shape, rate, attrs = evidence_rate_prior(stats)
    >>> round(shape, 3), round(shape / rate, 3), attrs
    (1.068, 5.75, {'rate_prior_strength': 'evidence'})
    """
    choice = gamma_poisson_strength(statistics["feature_count"].values, _exposures(statistics))
    shape = choice.values["shape"]
    attrs = {"rate_prior_strength": EVIDENCE}
    if choice.at_bound:
        attrs["rate_prior_evidence_bound"] = describe_bounds(choice, _SYMBOLS, _MEANINGS)
    return shape, shape / choice.values["mean"], attrs


def default_rate_prior(statistics: xr.Dataset) -> tuple[float, float]:
    """Gamma(1, 1 / m̄), m̄ the mean count per row and feature of the statistics' rows (per
    observed entry where some are missing); Gamma(1, 1) where they hold no count (see the
    module docstring)."""
    total = float(statistics["feature_count"].values.sum())
    if CELL_COUNT in statistics:
        cells = float(statistics[CELL_COUNT].values.sum())
    else:
        cells = float(statistics["class_count"].values.sum()) * statistics.sizes["feature"]
    mean_count = total / cells if cells > 0 else 0.0
    return 1.0, (1.0 / mean_count if mean_count > 0 else 1.0)


def _exposures(statistics: xr.Dataset) -> np.ndarray:
    """The class counts N_k (K,) where every entry is observed, else the cell counts (K, D)."""
    if CELL_COUNT in statistics:
        return statistics[CELL_COUNT].values.astype(np.float64)
    return statistics["class_count"].values


def rate_prior_of(estimates: xr.Dataset) -> tuple[float, float]:
    """The (shape, rate) of the Gamma prior a fit used (its attrs)."""
    attrs = estimates.attrs
    return float(attrs["rate_prior_shape"]), float(attrs["rate_prior_rate"])


class PoissonFamily(Family):
    """Poisson naive Bayes: x_ij | y_i = k ~ Poisson(λ_kj), λ_kj ~ Gamma(a₀, b₀)."""

    name = "poisson_nb"
    estimator = "PoissonNB"
    cli_name = "poisson"
    feature_kind = "count"
    missing_values = True
    parameters: ClassVar[dict[str, tuple[str, ...]]] = {
        "class_prob": ("class",),
        "feature_rate": ("class", "feature"),
    }
    statistics: ClassVar[dict[str, tuple[str, ...]]] = {
        "class_count": ("class",),
        "feature_count": ("class", "feature"),
        # Σ_i log x_ij! over each class's rows: the evidence's normalisation, which the sums
        # alone do not give.
        "feature_log_factorial": ("class", "feature"),
    }
    presentation = Presentation(
        plot_variables=("class_prob", "feature_rate"),
        top_parameter_label="λ (mean count of the feature in the class)",
        top_parameter_caption="largest rates",
        variable_symbols={"feature_rate": "λ"},
        ppc_variables=("row_total", "zero_counts"),
        ppc_caption=(
            "row_total is each row's total count and zero_counts its features with a count of "
            "0, the labels kept as observed: counts more spread out than a Poisson's "
            "(overdispersion) show as a black curve wider than the blue ones, and more zeros "
            "than a Poisson gives (zero inflation) as one to their right."
        ),
        report_plots=("feature_densities",),
    )

    # -- statistics and closed forms ------------------------------------------------------

    def fitted_prior(self, estimates: xr.Dataset, params: Mapping) -> dict:
        """``rate_prior`` at its fitted value where it was left to the data (None or
        "evidence")."""
        given = params.get("rate_prior")
        fitted = given is None or (isinstance(given, str) and given == EVIDENCE)
        return {"rate_prior": rate_prior_of(estimates)} if fitted else {}

    def sufficient_statistics(
        self, X, y, *, feature_names=None, sample_weight=None, classes=None
    ) -> xr.Dataset:
        """The (weighted) rows per class N_k, the sums of each feature over them S_kj, and
        Σ_i log x_ij! per class and feature; where X has missing entries (NaN) the sums are
        over the observed entries and ``cell_count`` (class, feature) holds each cell's
        (weighted) observed rows, its exposure (without one the Dataset has none)."""
        data = training_data(
            X,
            y,
            kind=self.feature_kind,
            feature_names=feature_names,
            sample_weight=sample_weight,
            classes=classes,
            missing=True,
        )
        n_classes = len(data.classes)
        class_count = class_counts(data.y, n_classes, data.sample_weight)
        rows = data.X
        missing = None if sp.issparse(rows) else np.isnan(rows)
        if missing is not None and missing.any():
            rows = np.where(missing, 0.0, rows)  # a missing entry adds nothing to the sums
        else:
            missing = None
        log_factorials = gamma_poisson.log_factorials(rows)
        variables = {
            "class_count": (("class",), class_count),
            "feature_count": (
                ("class", "feature"),
                feature_counts(rows, data.y, n_classes, data.sample_weight),
            ),
            "feature_log_factorial": (
                ("class", "feature"),
                feature_counts(log_factorials, data.y, n_classes, data.sample_weight),
            ),
        }
        if missing is not None:
            observed = (~missing).astype(np.float64)
            variables[CELL_COUNT] = (
                ("class", "feature"),
                feature_counts(observed, data.y, n_classes, data.sample_weight),
            )
        attrs = {
            "model": self.name,
            "n_samples": total_weight(class_count),
            "feature_names_given": int(data.names_given),
        }
        coords = {"class": data.classes, "feature": data.feature_names}
        return xr.Dataset(variables, coords=coords, attrs=attrs)

    def merge_statistics(self, first: xr.Dataset, second: xr.Dataset) -> xr.Dataset:
        """The statistics of the union of two sets of rows: every statistic adds (the cell
        counts too, N_k standing for those of a side without missing entries)."""
        check_mergeable(first, second)
        merged = first[list(self.statistics)].copy()
        for name in self.statistics:  # plain arrays: the coords were checked equal
            merged[name] = (first[name].dims, first[name].values + second[name].values)
        if CELL_COUNT in first or CELL_COUNT in second:
            cells = sum(
                np.broadcast_to(cell_counts(part), part["feature_count"].shape)
                for part in (first, second)
            )
            merged[CELL_COUNT] = (("class", "feature"), cells)
        merged.attrs = dict(first.attrs)
        merged.attrs["n_samples"] = total_weight(merged["class_count"].values)
        return merged

    def from_statistics(
        self, statistics: xr.Dataset, *, class_alpha: float = 1.0, rate_prior=None
    ) -> xr.Dataset:
        """The closed-form estimates: ``class_prob``, ``feature_rate`` (posterior means) and
        their MLEs, at the class prior ``class_alpha`` and the Gamma ``rate_prior`` (None:
        Gamma(1, 1 / m̄); "evidence": the Gamma that maximises the evidence,
        :func:`evidence_rate_prior`; see the module docstring).

        Returns
        -------
        xarray.Dataset
            The statistics, ``class_prob``, ``class_prob_mle``, ``feature_rate`` and
            ``feature_rate_mle`` (S_kj / n_kj, n_kj = N_k unless entries are missing; NaN for
            a cell without rows), ``cell_count`` where entries are missing; attrs ``model``,
            ``class_alpha``, ``rate_prior_shape``, ``rate_prior_rate``, ``n_samples`` and
            ``feature_names_given``; for "evidence" also ``rate_prior_strength`` and, at a
            bound of the search, ``rate_prior_evidence_bound``.
        """
        class_alpha = check_smoothing(class_alpha, "class_alpha")
        chosen = {}
        if isinstance(rate_prior, str):
            if rate_prior != EVIDENCE:
                raise ValueError(
                    f"rate_prior: expected None, {EVIDENCE!r} or a pair (shape, rate) of finite "
                    f"numbers > 0; got {rate_prior!r}."
                )
            prior_shape, prior_rate, chosen = evidence_rate_prior(statistics)
        else:
            checked = check_gamma_prior(rate_prior, "rate_prior")
            prior_shape, prior_rate = default_rate_prior(statistics) if checked is None else checked
        count = statistics["class_count"].values.astype(np.float64)
        cells = cell_counts(statistics)
        feature_count = statistics["feature_count"].values
        shape, rate = gamma_poisson.gamma_posterior(prior_shape, prior_rate, feature_count, cells)
        variables = {name: statistics[name] for name in self.statistics}
        if CELL_COUNT in statistics:
            variables[CELL_COUNT] = statistics[CELL_COUNT]
        variables |= CLASS_PRIOR.estimates(count, class_alpha)
        variables["feature_rate"] = (("class", "feature"), gamma_poisson.gamma_mean(shape, rate))
        with np.errstate(divide="ignore", invalid="ignore"):  # a cell without rows: NaN
            mle = feature_count / cells
        variables["feature_rate_mle"] = (("class", "feature"), mle)
        attrs = {
            "model": self.name,
            "class_alpha": class_alpha,
            "rate_prior_shape": prior_shape,
            "rate_prior_rate": prior_rate,
            "n_samples": statistics.attrs["n_samples"],
            "feature_names_given": statistics.attrs["feature_names_given"],
            **chosen,
        }
        return xr.Dataset(variables, coords=statistics.coords, attrs=attrs)

    def posterior_parameters(
        self, estimates: xr.Dataset, *, posterior: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """(shape (K, D), rate (K, 1), or (K, D) where entries are missing) of every λ_kj's
        Gamma: the posterior, or with ``posterior=False`` the prior (the posterior given no
        rows)."""
        prior_shape, prior_rate = rate_prior_of(estimates)
        weight = 1.0 if posterior else 0.0
        return gamma_poisson.gamma_posterior(
            prior_shape,
            prior_rate,
            weight * estimates["feature_count"].values,
            weight * cell_counts(estimates),
        )

    def plug_in_log_joint(self, estimates: xr.Dataset, X) -> tuple[np.ndarray, np.ndarray | None]:
        """log π_k + Σ_j log Poisson(x_j; λ_kj) at the posterior means, in full, over the
        observed features of each row."""
        class_order, log_class = CLASS_PRIOR.log_terms(estimates)
        rate = estimates["feature_rate"].values
        joint = self._poisson_log_joint(X, log_class, rate) + self.row_log_constant(X)[:, None]
        order = np.broadcast_to(class_order, joint.shape)
        return joint, (order if np.any(order) else None)

    def predictive_log_joint(self, estimates: xr.Dataset, X) -> np.ndarray:
        """log E[π_k | D] + Σ_j log NB(x_j; a₀ + S_kj, b₀ + n_kj): λ integrated out, over
        the observed features of each row."""
        shape, rate = self.posterior_parameters(estimates)
        with np.errstate(divide="ignore"):  # class_alpha = 0 and a class without rows
            log_class = np.log(estimates["class_prob"].values)
        return log_class + gamma_poisson.negative_binomial_log_pmf(X, shape, rate)

    def log_evidence(self, estimates: xr.Dataset) -> float:
        """log p(y | a) + log p(X | y, a₀, b₀) of the training rows in their order."""
        labels = CLASS_PRIOR.log_evidence(estimates, estimates.attrs["class_alpha"])
        features = gamma_poisson.log_evidence(
            estimates["feature_count"].values,
            _exposures(estimates),
            estimates["feature_log_factorial"].values,
            *rate_prior_of(estimates),
        )
        return float(labels + features)

    # -- the exact conjugate posterior ----------------------------------------------------

    def conjugate_draws(
        self, estimates: xr.Dataset, rng, sample_shape, dtype, *, posterior: bool
    ) -> dict[str, Variable]:
        """π, then every λ_kj, from their Dirichlet and Gamma laws."""
        # π first, then λ: the order of the generator's calls fixes which draws each gets.
        class_prob = CLASS_PRIOR.draws(estimates, rng, sample_shape, dtype, posterior=posterior)
        shape, rate = self.posterior_parameters(estimates, posterior=posterior)
        size = (*sample_shape, *shape.shape)
        rates = rng.gamma(shape, 1.0 / rate, size=size).astype(dtype)
        return {"class_prob": class_prob, "feature_rate": (("class", "feature"), rates)}

    def conjugate_mode(self, estimates: xr.Dataset) -> dict[str, Variable]:
        """π's Dirichlet mode and each rate's (a − 1) / b (NaN for a < 1)."""
        shape, rate = self.posterior_parameters(estimates)
        return {
            "class_prob": CLASS_PRIOR.mode(estimates),
            "feature_rate": (("class", "feature"), gamma_poisson.gamma_mode(shape, rate)),
        }

    def exact_marginals(self, estimates: xr.Dataset) -> dict[str, Marginal]:
        """π's Beta marginals and every λ_kj's Gamma(a₀ + S_kj, b₀ + n_kj)."""
        shape, rate = self.posterior_parameters(estimates)
        rate = np.broadcast_to(rate, shape.shape)
        return {
            "class_prob": CLASS_PRIOR.marginal(estimates),
            "feature_rate": Marginal(
                ("class", "feature"),
                gamma_poisson.gamma_mean(shape, rate),
                gamma_poisson.gamma_sd(shape, rate),
                stats.gamma(shape, scale=1.0 / rate),
            ),
        }

    def feature_subset(self, estimates: xr.Dataset, labels: np.ndarray) -> xr.Dataset:
        """The features ``labels`` alone: every rate is independent of the others."""
        keep = np.flatnonzero(np.isin(estimates["feature"].values, labels))
        return estimates.isel(feature=keep)

    def loo_log_joint(
        self, estimates: xr.Dataset, X, y_codes: np.ndarray, *, options: dict | None = None
    ) -> np.ndarray:
        """log E[π_k | D_{-i}] + Σ_j log NB(x_ij; ·) with row i taken out of its own class's
        Gamma (a₀ + S_kj − x_ij, b₀ + n_kj − 1) in the cells row i is observed in, every row
        at once."""
        y_codes = np.asarray(y_codes)
        shape, rate = self.posterior_parameters(estimates)
        features = gamma_poisson.leave_one_out_log_pmf(X, y_codes, shape, rate)
        return CLASS_PRIOR.loo_log_prob(estimates, y_codes) + features

    # -- the generative model -------------------------------------------------------------

    def pymc_model(self, estimates: xr.Dataset) -> pm.Model:
        """π ~ Dirichlet(a) and λ_kj ~ Gamma(a₀, b₀); observed: ``class_count`` ~
        Multinomial(N, π) and ``feature_count`` S_kj ~ Poisson(N_k λ_kj), the sum of N_k
        Poisson(λ_kj) counts, which is all the rows say about λ (the factorisation theorem).
        See :func:`bayesgen.families.poisson_nb_pymc.poisson_nb_pymc_model`."""
        from bayesgen.families.poisson_nb_pymc import poisson_nb_pymc_model  # heavy: PyMC

        return poisson_nb_pymc_model(estimates, *rate_prior_of(estimates))

    def draw_log_joint(self, estimates: xr.Dataset, X, draws: xr.Dataset) -> np.ndarray:
        """log π_k + Σ_j (x_j log λ_kj − λ_kj) per draw, over the observed features of each
        row; −Σ_j log x_j! is :meth:`row_log_constant`."""
        rate = draws["feature_rate"].transpose("draw", "class", "feature").values
        log_class = log(draws["class_prob"].transpose("draw", "class").values)
        return self._poisson_log_joint(X, log_class, rate)

    def row_log_constant(self, X) -> np.ndarray:
        """−Σ_j log x_j! of every row (its observed entries), the Poisson terms free of λ."""
        return -np.asarray(gamma_poisson.log_factorials(X).sum(axis=1)).ravel()

    def simulate_rows(self, estimates: xr.Dataset, X, y_codes, parameters, rng):
        """x_ij ~ Poisson(λ_{y_i j}) for every training row, sparse where X is; NaN where X
        is missing, so that every simulated data set keeps the training rows' pattern of
        missing entries."""
        rates = np.asarray(parameters["feature_rate"], dtype=np.float64)
        rows = rng.poisson(rates[np.asarray(y_codes)]).astype(np.float64)
        if sp.issparse(X):
            return sp.csr_array(rows)
        missing = np.isnan(np.asarray(X, dtype=np.float64))
        return np.where(missing, np.nan, rows) if missing.any() else rows

    def predictive_statistics(self, estimates: xr.Dataset, X, y_codes) -> dict[str, Variable]:
        """``row_total`` (each row's total count) and ``zero_counts`` (its features with a
        count of 0), which show overdispersion and zero inflation; over the observed entries
        where some are missing."""
        if not sp.issparse(X) and np.isnan(np.asarray(X, dtype=np.float64)).any():
            X = np.asarray(X, dtype=np.float64)
            total = np.nansum(X, axis=1)
            zeros = np.count_nonzero(X == 0, axis=1).astype(np.int64)
            return {"row_total": (("obs",), total), "zero_counts": (("obs",), zeros)}
        total = np.asarray(X.sum(axis=1)).ravel().astype(np.float64)
        if sp.issparse(X):
            nonzero = np.diff(sp.csr_array(X != 0).indptr)
        else:
            nonzero = np.count_nonzero(np.asarray(X), axis=1)
        zeros = (X.shape[1] - nonzero).astype(np.int64)
        return {"row_total": (("obs",), total), "zero_counts": (("obs",), zeros)}

    # -- the comparison -------------------------------------------------------------------

    def expected(
        self,
        estimates: xr.Dataset,
        *,
        alpha: float | None,
        class_alpha: float,
        options: dict,
        map_method: str | None,
    ) -> list[Expected]:
        """π under Dirichlet(a) and every λ_kj under Gamma(a₀ + S_kj, b₀ + n_kj): mean a / b,
        SD √a / b, kurtosis 3 + 6 / a and mode (a − 1) / b (none for a < 1)."""
        shape, rate = self.posterior_parameters(estimates)
        rate = np.broadcast_to(rate, shape.shape)
        no_mode = shape < 1.0
        map_reasons = reason_array(shape.shape)
        map_reasons[no_mode] = NO_GAMMA_MODE
        prior_shape, prior_rate = rate_prior_of(estimates)
        prior = f"Gamma({prior_shape:g}, {prior_rate:g})"
        rates = Expected(
            variable="feature_rate",
            keep=np.ones(shape.shape, dtype=bool),
            closed_form=gamma_poisson.gamma_mean(shape, rate),
            closed_form_sd=gamma_poisson.gamma_sd(shape, rate),
            closed_form_kurtosis=gamma_poisson.gamma_kurtosis(shape),
            mle=estimates["feature_rate_mle"].values.astype(np.float64),
            expected_map=gamma_poisson.gamma_mode(shape, rate),
            reasons=(reason_array(shape.shape), reason_array(shape.shape), map_reasons),
            hide_map=no_mode,
            prior=prior,
            mean_identity=f"posterior mean under {prior} = (a₀ + S) / (b₀ + N_k)",
            sd_identity=f"posterior SD under {prior} = √(a₀ + S) / (b₀ + N_k)",
            map_identity=f"MAP under {prior} = (a₀ + S − 1) / (b₀ + N_k)",
            unbounded=no_mode,
        )
        return [CLASS_PRIOR.expected(estimates, class_alpha), rates]

    # -- presentation ---------------------------------------------------------------------

    def feature_scores(self, estimates: xr.Dataset) -> np.ndarray:
        """The largest posterior mean rate of each feature over the classes."""
        return estimates["feature_rate"].values.max(axis=0)

    def top_parameters(self, estimates: xr.Dataset, posterior: xr.Dataset) -> TopParameters:
        """Each class's rates, ranked by their posterior means."""
        return TopParameters(posterior["feature_rate"], estimates["feature_rate"].values)

    # -- helpers --------------------------------------------------------------------------

    @staticmethod
    def _poisson_log_joint(X, log_class: np.ndarray, rate: np.ndarray) -> np.ndarray:
        """log π_k + Σ_j (x_j log λ_kj − λ_kj) for rates of shape (..., K, D) and log π of
        shape (..., K): shape (..., n_samples, K); a missing x_j (NaN) drops out."""
        if not sp.issparse(X):
            missing = np.isnan(np.asarray(X, dtype=np.float64))
            if missing.any():
                values = np.where(missing, 0.0, X)
                observed = (~missing).astype(np.float64)
                return (
                    linear_in_x(values, log(rate))
                    - linear_in_x(observed, rate)
                    + log_class[..., None, :]
                )
        return linear_in_x(X, log(rate)) + (log_class - rate.sum(axis=-1))[..., None, :]


FAMILY = PoissonFamily()

__all__ = [
    "EVIDENCE",
    "FAMILY",
    "NO_GAMMA_MODE",
    "PoissonFamily",
    "default_rate_prior",
    "evidence_rate_prior",
    "rate_prior_of",
]
