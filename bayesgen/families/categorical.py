"""Categorical naive Bayes: feature n takes one of K_n categories.

π ~ Dirichlet(a), θ_kn ~ Dirichlet(λ) over the K_n categories of feature n:

* ``feature_prob`` (class, feature, category) = (N_k,n,c + λ) / (N_k + K_n λ)

Features with fewer categories than the widest one are padded with probability 0 (a category
that does not exist never occurs); the boolean ``category_mask`` (feature, category) marks the
real ones.

A missing entry (NaN in a dense X) is integrated out: it is counted in no category, a
(class, feature)'s total is the n_kn = ``cell_count`` class-k rows observed at feature n in
place of N_k (θ_kn | data ~ Dirichlet(N_k,n,c + λ) still, with add-λ over n_kn + K_n λ), and a
prediction multiplies the factors of the observed features only. At prediction a category
code beyond K_n is refused, or, with ``attrs["handle_unknown"] = "ignore"`` (the estimator's
``handle_unknown="ignore"``), treated as missing: its factor drops out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import numpy as np
import scipy.sparse as sp
import xarray as xr

from bayesgen.families.expected import dirichlet_kurtosis, dirichlet_sd
from bayesgen.families.naive_bayes import (
    FeatureStatistics,
    NaiveBayesFamily,
    naive_bayes_presentation,
)
from bayesgen.input.data import TrainingData
from bayesgen.maths.counts import category_counts, feature_counts, missing_entries
from bayesgen.maths.dirichlet import add_lambda, log, log_prob_terms, simplex_mode
from bayesgen.maths.likelihood import categorical_log_likelihood

if TYPE_CHECKING:
    import pymc as pm

#: Cells of uniform variates times categories compared at once while simulating rows.
_SIMULATION_BLOCK = 4_000_000

MAX_CATEGORY_CELLS = 10**8
"""Largest class × feature × category table (800 MB in float64) a categorical fit builds."""


class CategoricalFamily(NaiveBayesFamily):
    """Categorical naive Bayes on integer category codes 0, 1, ..., K_n - 1."""

    name = "categorical_nb"
    estimator = "CategoricalNB"
    cli_name = "categorical"
    feature_kind = "categorical"
    missing_values = True
    presentation = naive_bayes_presentation(
        top_parameter_label="P(feature = category | class)",
        ppc_variables=("class_category_freq",),
        ppc_caption=(
            "class_category_freq is the share of each class's rows in each category of each "
            "feature, all cells pooled. The model fits these directly, so a black curve wider than "
            "the blue ones means a λ strong enough to pull the frequencies towards uniform."
        ),
    )
    parameters: ClassVar[dict[str, tuple[str, ...]]] = {
        "class_prob": ("class",),
        "feature_prob": ("class", "feature", "category"),
    }
    statistics: ClassVar[dict[str, tuple[str, ...]]] = {
        "class_count": ("class",),
        "feature_count": ("class", "feature", "category"),
        "n_categories": ("feature",),
        "category_mask": ("feature", "category"),
    }

    def ranked_probabilities(self, estimates: xr.Dataset) -> np.ndarray:
        """``feature_prob``, with the padding cells (categories a feature does not have)
        never shown."""
        mask = estimates["category_mask"].values
        return np.where(mask, estimates["feature_prob"].values, -np.inf)

    def feature_statistics(
        self, data: TrainingData, class_count: np.ndarray, *, n_categories=None
    ) -> FeatureStatistics:
        """Category counts N_k,n,c, zero-padded to the widest feature.

        ``n_categories`` is K_n per feature (an int or one per feature); by default
        ``max(X[:, n]) + 1`` (scikit-learn's rule).
        """
        n_classes = len(data.classes)
        n_categories = _resolve_n_categories(data.X, n_categories, n_classes, data.feature_names)
        counts = category_counts(data.X, data.y, n_classes, n_categories, data.sample_weight)
        mask = np.arange(counts.shape[-1]) < n_categories[:, None]
        return FeatureStatistics(
            dims=("class", "feature", "category"),
            counts=counts,
            variables={
                "n_categories": (("feature",), n_categories),
                "category_mask": (("feature", "category"), mask),
            },
            coords={"category": np.arange(counts.shape[-1])},
        )

    def smoothing_terms(self, statistics: xr.Dataset):
        """Each (class, feature)'s category counts over the class's rows observed there, K_n
        real outcomes; the padding cells get probability 0."""
        return (
            self.cell_totals(statistics)[..., None],
            statistics["n_categories"].values[:, None],
            statistics["category_mask"].values,
        )

    def aligned_statistics(
        self, first: xr.Dataset, second: xr.Dataset
    ) -> tuple[xr.Dataset, xr.Dataset]:
        """Both padded to the wider category axis, each feature then having the larger of its
        two K_n: chunks whose default K_n (largest code + 1) differ merge into the K_n of all
        their rows, as one fit on them would give."""
        width = max(first.sizes["category"], second.sizes["category"])
        n_categories = np.maximum(first["n_categories"].values, second["n_categories"].values)
        mask = np.arange(width) < n_categories[:, None]

        def widen(statistics: xr.Dataset) -> xr.Dataset:
            counts = statistics["feature_count"].values
            padded = np.zeros((*counts.shape[:2], width))
            padded[..., : counts.shape[-1]] = counts
            out = statistics.drop_vars(["feature_count", "category_mask", "category"])
            out = out.assign_coords(category=np.arange(width))
            out["n_categories"] = (("feature",), n_categories)
            out["category_mask"] = (("feature", "category"), mask)
            out["feature_count"] = (("class", "feature", "category"), padded)
            return out

        return widen(first), widen(second)

    def prediction_features(self, estimates: xr.Dataset, X):
        """Validate X as :class:`Family` does, and refuse codes beyond a feature's K_n; with
        ``attrs["handle_unknown"] == "ignore"`` such a code is missing instead (NaN, in a
        copy: the caller's X is never modified)."""
        X = super().prediction_features(estimates, X)
        codes = np.asarray(X.toarray() if sp.issparse(X) else X)
        n_cat = estimates["n_categories"].values
        with np.errstate(invalid="ignore"):  # a missing entry (NaN) is not unseen
            unseen = codes >= n_cat
        if np.any(unseen) and estimates.attrs.get("handle_unknown") == "ignore":
            return np.where(unseen, np.nan, codes.astype(np.float64))
        if np.any(unseen):
            row, col = np.argwhere(unseen)[0]
            raise ValueError(
                f"X: category code {int(codes[row, col])} of feature "
                f"{str(estimates['feature'].values[col])!r} (row {row}) was not among the "
                f"{int(n_cat[col])} categories at fit; refit with n_categories large enough, "
                "or pass handle_unknown='ignore' to treat it as missing."
            )
        return X

    def plug_in_log_joint(self, estimates: xr.Dataset, X) -> tuple[np.ndarray, np.ndarray | None]:
        class_order, log_class = self.class_log_terms(estimates)
        alpha, counts = self.feature_alpha(estimates), estimates["feature_count"].values
        totals = self.cell_totals(estimates)[..., None]
        mask = estimates["category_mask"].values
        n_cat = estimates["n_categories"].values[:, None]
        # The padding's weight is 0: 1 there keeps its (unused) log finite.
        weight = np.where(mask, self.prior_weights(estimates), 1.0)
        order, log_p = log_prob_terms(counts, totals, alpha, n_cat, weight)
        log_p = np.where(mask, log_p, -np.inf)
        joint = observed_categorical(X, log_class, log_p)
        order_x = observed_categorical(X, class_order, np.where(mask, order, 0.0))
        return joint, (order_x if np.any(order_x) else None)

    def concentrations(
        self, estimates: xr.Dataset, *, posterior: bool
    ) -> tuple[tuple[str, ...], np.ndarray, bool]:
        # A Dirichlet over the real categories of each feature; the padding gets 0.
        weight = 1.0 if posterior else 0.0  # the prior is the posterior given zero counts
        counts = weight * estimates["feature_count"].values
        dims = tuple(estimates["feature_count"].dims)
        mask = estimates["category_mask"].values
        return dims, np.where(mask, self.prior_pseudocounts(estimates) + counts, 0.0), False

    def feature_simplices(self, estimates: xr.Dataset) -> tuple[np.ndarray, np.ndarray]:
        """One simplex per (class, feature) over its K_n real categories (the padding is
        not an outcome)."""
        return estimates["feature_count"].values, estimates["category_mask"].values

    def pymc_model(self, estimates: xr.Dataset) -> pm.Model:
        """Categorical naive Bayes: θ_kn ~ Dirichlet(λ) over the K_n categories of feature n.

        ``feature_prob`` has dims (class, feature, category), padded with 0 beyond K_n (see
        ``category_mask``), as in :meth:`fit`. Observed: the class counts ``class_count`` ~
        Multinomial(N, π) and the counts of the real (feature, category) cells ``cell_count``
        (class, cell) ~ Poisson(g_k,cell), the Gamma-Poisson form of each feature's
        Dirichlet (see :mod:`bayesgen.generative`). The padding cells are not observed: their
        count is always 0 and their probability 0, so they add nothing to the likelihood.
        """
        from bayesgen.families.categorical_pymc import categorical_nb_pymc_model  # heavy: PyMC

        return categorical_nb_pymc_model(estimates)

    def draw_log_joint(self, estimates: xr.Dataset, X, draws: xr.Dataset) -> np.ndarray:
        mask = estimates["category_mask"].values
        log_prob = np.where(mask, log(draws["feature_prob"].values), -np.inf)
        return observed_categorical(X, log(draws["class_prob"].values), log_prob)

    # -- the row-level generative model ---------------------------------------------------

    def simulate_rows(self, estimates: xr.Dataset, X, y_codes, parameters, rng):
        """x_in ~ Categorical(θ_{y_i} n) by inverting each cell's CDF with one uniform; where
        the training rows miss entries, the simulated rows miss the same ones (float codes
        with NaN there)."""
        prob = np.asarray(parameters["feature_prob"], dtype=np.float64)
        prob = np.where(estimates["category_mask"].values, prob, 0.0)
        cdf = np.cumsum(prob, axis=-1)
        cdf /= cdf[..., -1:]  # float32 draws need not sum to exactly 1
        out = np.empty(X.shape, dtype=np.int64)
        step = max(1, _SIMULATION_BLOCK // max(1, X.shape[1] * prob.shape[-1]))
        for start in range(0, X.shape[0], step):
            codes = y_codes[start : start + step]
            uniform = rng.random((len(codes), X.shape[1], 1))
            out[start : start + step] = (uniform >= cdf[codes]).sum(axis=-1)
        # A uniform of exactly 1 - ε past a rounded CDF stays within the real categories.
        out = np.minimum(out, estimates["n_categories"].values - 1)
        missing = missing_entries(X)
        return out if missing is None else np.where(missing, np.nan, out)

    def predictive_statistics(self, estimates: xr.Dataset, X, y_codes) -> dict:
        """``class_category_freq``: the share of each class's rows in each category of each
        feature (whose posterior predictive mean is add-λ), over the rows observed there."""
        n_classes = estimates.sizes["class"]
        missing = missing_entries(X)
        if missing is None:
            codes = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.int64)
            rows = np.bincount(y_codes, minlength=n_classes)[:, None, None]
        else:  # category_counts leaves the NaN out
            codes = X
            rows = feature_counts((~missing).astype(np.float64), y_codes, n_classes)[..., None]
        counts = category_counts(codes, y_codes, n_classes, estimates["n_categories"].values)
        with np.errstate(invalid="ignore", divide="ignore"):
            freq = counts / rows
        freq = np.where(estimates["category_mask"].values, freq, np.nan)
        return {"class_category_freq": (("class", "feature", "category"), freq)}

    def feature_moments(self, estimates: xr.Dataset, alpha: float) -> dict:
        """θ_kn | data ~ Dirichlet(N_k,n,c + λ) over the K_n real categories; the padding
        cells get no row (``keep`` False) and NaN moments."""
        counts = estimates["feature_count"].values.astype(np.float64)
        totals = self.cell_totals(estimates).astype(np.float64)[..., None]
        keep = np.broadcast_to(estimates["category_mask"].values, counts.shape)
        n_categories = estimates["n_categories"].values[:, None]
        weight = self.prior_weights(estimates)
        closed = add_lambda(
            counts,
            totals,
            self.feature_alpha(estimates, alpha),
            n_categories,
            weight,
        )
        prior = np.broadcast_to(self.prior_pseudocounts(estimates, alpha), counts.shape)
        concentration = np.where(keep, counts + prior, 0.0)
        mode, status = simplex_mode(counts, np.where(keep, prior, 1.0), active=keep)
        return {
            "keep": keep,
            "closed_form": np.where(keep, closed, np.nan),
            "closed_form_sd": np.where(keep, dirichlet_sd(concentration), np.nan),
            "closed_form_kurtosis": np.where(keep, dirichlet_kurtosis(concentration), np.nan),
            "expected_map": mode,
            "status": status,
        }

    def loo_feature_log_likelihood(self, estimates: xr.Dataset, X, y_codes) -> np.ndarray:
        """The Dirichlet-categorical log p(x_i | y = k, D_{-i}) = Σ_n log P(x_in | k, D_{-i}).

        Each feature is one draw, so the predictive is add-λ: (N_k,n,c + λ) / (N_k + K_n λ)
        for the other classes, and (N_k,n,x_in − 1 + λ) / (N_k − 1 + K_n λ) for the own
        class, which loses row i's one count in each feature. With missing entries N_k is
        each cell's observed rows, and row i leaves only the features it is observed at (its
        missing ones add nothing).
        """
        alpha = self.feature_alpha(estimates)  # (class, 1, 1) with one λ per class
        counts = estimates["feature_count"].values.astype(np.float64)
        class_count = estimates["class_count"].values.astype(np.float64)
        totals = self.cell_totals(estimates).astype(np.float64)  # (class, feature or 1)
        mask = estimates["category_mask"].values
        n_categories = estimates["n_categories"].values.astype(np.float64)
        denominator = totals[..., None] + n_categories[None, :, None] * alpha
        prior = np.broadcast_to(self.prior_pseudocounts(estimates), counts.shape)
        log_prob = np.where(
            mask, np.log(np.where(mask, counts + prior, 1.0) / denominator), -np.inf
        )
        missing = missing_entries(X)
        if missing is not None:
            return self._loo_with_missing(estimates, X, y_codes, log_prob, prior, totals)
        codes = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.int64)
        out = categorical_log_likelihood(codes, np.zeros(len(class_count)), log_prob)
        features = np.arange(codes.shape[1])
        own_count = counts[y_codes[:, None], features[None, :], codes]  # (n, F)
        own_prior = prior[y_codes[:, None], features[None, :], codes]
        own_alpha = np.broadcast_to(np.ravel(alpha), class_count.shape)[y_codes, None]  # λ of y_i
        own_total = (class_count[y_codes] - 1.0)[:, None] + n_categories[None, :] * own_alpha
        out[np.arange(codes.shape[0]), y_codes] = np.log(own_count - 1.0 + own_prior).sum(
            axis=1
        ) - np.log(own_total).sum(axis=1)
        return out

    def _loo_with_missing(self, estimates, X, y_codes, log_prob, prior, totals) -> np.ndarray:
        """:meth:`loo_feature_log_likelihood` for a dense X with NaN: the own class's cells
        lose row i's count only at its observed features."""
        alpha = self.feature_alpha(estimates)
        counts = estimates["feature_count"].values.astype(np.float64)
        n_categories = estimates["n_categories"].values.astype(np.float64)
        out = observed_categorical(X, np.zeros(counts.shape[0]), log_prob)
        missing = np.isnan(X)
        codes = np.where(missing, 0, X).astype(np.int64)
        features = np.arange(codes.shape[1])
        own_count = counts[y_codes[:, None], features[None, :], codes]  # (n, F)
        own_prior = prior[y_codes[:, None], features[None, :], codes]
        own_alpha = np.broadcast_to(np.ravel(alpha), (counts.shape[0],))[y_codes, None]
        rows = np.broadcast_to(totals, counts.shape[:2])[y_codes]  # the own cells' rows
        own_total = rows - 1.0 + n_categories[None, :] * own_alpha
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.log(own_count - 1.0 + own_prior) - np.log(own_total)
        out[np.arange(codes.shape[0]), y_codes] = np.where(missing, 0.0, terms).sum(axis=1)
        return out


def observed_categorical(codes, log_class_prob, log_feature_prob) -> np.ndarray:
    """:func:`~bayesgen.maths.likelihood.categorical_log_likelihood` over the observed entries
    of ``codes``: a missing entry (NaN) adds nothing. Without one, that function itself.

    A missing entry reads an extra category of log-probability 0 appended to every feature.
    """
    missing = missing_entries(codes)
    if missing is None:
        return categorical_log_likelihood(codes, log_class_prob, log_feature_prob)
    width = log_feature_prob.shape[-1]
    extra = np.zeros((*log_feature_prob.shape[:-1], 1))
    widened = np.concatenate([log_feature_prob, extra], axis=-1)
    return categorical_log_likelihood(np.where(missing, width, codes), log_class_prob, widened)


def _resolve_n_categories(X, n_categories, n_classes: int, feature_names) -> np.ndarray:
    """K_n per feature: checked ``n_categories``, or the largest code of X plus one."""
    # The largest codes stay floats until checked: a code of 1e20 does not fit in int64.
    # A missing entry (NaN) is no code: each column has an observed one (check_features).
    largest = X.max(axis=0).toarray() if sp.issparse(X) else np.nanmax(X, axis=0)
    seen = np.asarray(largest).ravel() + 1
    if n_categories is not None:
        given = _check_n_categories(n_categories, seen.size)
        too_small = np.flatnonzero(given < seen)
        if too_small.size:
            j = too_small[0]
            raise ValueError(
                f"n_categories: feature {str(feature_names[j])!r} (column {j}) has category "
                f"code {int(seen[j] - 1)} in X, but n_categories gives only {int(given[j])} "
                "categories."
            )
        seen = given
    widest = int(np.argmax(seen))
    cells = float(n_classes) * seen.size * float(seen[widest])
    if cells > MAX_CATEGORY_CELLS:
        source = "n_categories gives" if n_categories is not None else "X has category code"
        count = int(seen[widest]) if n_categories is not None else int(seen[widest] - 1)
        raise ValueError(
            f"X: feature {str(feature_names[widest])!r} (column {widest}): {source} {count}, "
            f"so the class × feature × category table would need {cells:.3g} cells (more than "
            f"{MAX_CATEGORY_CELLS:.0e}). Category codes must be 0, 1, ..., K - 1: encode "
            "categories with sklearn's OrdinalEncoder."
        )
    return seen.astype(np.int64)


def _check_n_categories(n_categories, n_features: int) -> np.ndarray:
    """``n_categories`` as int64 of shape (n_features,): an int or one int per feature, >= 1."""
    expected = f"an int or an array of {n_features} ints (one per feature)"
    values = np.asarray(n_categories)
    if values.dtype.kind not in "iuf" or isinstance(n_categories, bool | np.bool_):
        raise TypeError(
            f"n_categories: expected {expected}; got {type(n_categories).__name__} "
            f"{n_categories!r}."
        )
    if values.ndim > 1 or (values.ndim == 1 and values.shape != (n_features,)):
        raise ValueError(f"n_categories: expected {expected}; got shape {values.shape}.")
    whole = np.isfinite(values) & (values == np.round(values))
    if not np.all(whole):
        bad = np.atleast_1d(values)[~np.atleast_1d(whole)][:5].tolist()
        raise ValueError(f"n_categories: expected whole numbers of categories; got {bad}.")
    if np.any(values < 1):
        bad = np.atleast_1d(values)[np.atleast_1d(values < 1)][:5].tolist()
        raise ValueError(f"n_categories: expected at least 1 category per feature; got {bad}.")
    # float, not int64, until bounded: n_categories=1e20 must reach the size check intact.
    return np.broadcast_to(values.astype(np.float64), (n_features,)).copy()


FAMILY = CategoricalFamily()
