"""The Dirichlet compound multinomial (Pólya) naive Bayes block, for bursty words.

π ~ Dirichlet(a), and a document x of class k is DirMult(n, α_k), α_k = s_k m_k: its word
distribution θ ~ Dirichlet(α_k) is drawn once per document, then its n tokens from θ. A small
concentration s_k makes words bursty (a word used once is likely used again in the same
document); s → ∞ is the multinomial model (Madsen, Kauchak and Elkan, ICML 2005).

The statistics are the per-(class, word) histograms of the count levels and the per-class
histograms of the lengths (:mod:`bayesgen.maths.dirichlet_multinomial`): the likelihood
depends on the documents only through them (Minka 2000), so the cost grows with the
distinct count levels, not with the documents, and two sets of documents merge by adding
their histograms (``partial_fit``, Dask chunks).

Priors (the estimator's parameters): s_k ~ Gamma(shape, rate), by default Gamma(1, 1 / V)
(an exponential whose mean is the vocabulary size V), or "flat"; m_k ~ Dirichlet(1 + λ f), f
the pooled add-½ word frequencies of the training set, so that the mode of the prior is f;
λ = ``mean_prior_strength`` (default V; 0: flat). ``prior_mean="pooled"`` shares one m by
the classes (they then differ in s alone); "per_class" (default) gives each its own.

What is exact and what is not
    The class probabilities' posterior is Dirichlet(a + N_k), exactly. (s, m) have no
    conjugate prior: their posterior is sampled by NUTS (:mod:`bayesgen.families.dcm_pymc`),
    and ``inference="conjugate"`` is refused. The closed form holds the point fit: the mode
    of p(s, m | X, y) under the priors (``concentration``, ``feature_mean``), found by Newton's
    method, and the evidence maximiser under a flat prior (``concentration_mle``,
    ``feature_mean_mle``; a word a class never shows gets m = 0 there). The comparison checks
    π exactly and the MAP of (s, m) (``find_MAP`` on the PyMC model) against the point fit;
    s and m's posterior means have no closed form.

Prediction: given α the DirMult log pmf is exact (:meth:`DirichletMultinomialFamily.draw_log_joint`,
per posterior draw). :meth:`~DirichletMultinomialFamily.predictive_log_joint` plugs in the
point fit α̂ (θ integrated out exactly given α̂, an empirical-Bayes predictive, not the full
posterior predictive; :meth:`~DirichletMultinomialFamily.has_exact_predictive` is False).
Given α the documents are independent, so a document's held-out predictive at fixed α is its
own DirMult pmf: leave-one-out (:meth:`~DirichletMultinomialFamily.loo_log_joint`, kind
"plug-in") refits α̂ without each document and scores it there, exactly given that α̂;
Pareto-smoothed importance sampling on the NUTS draws' pointwise log-likelihood
(``method="psis"``) approximates the fully Bayesian one.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import pandas as pd
import scipy.sparse as sp
import xarray as xr

import bayesgen.maths.dirichlet_multinomial as dcm
import bayesgen.maths.dirichlet_multinomial_loo as dcm_loo
from bayesgen.families.base import Family
from bayesgen.families.class_prior import CLASS_PRIOR
from bayesgen.families.expected import Expected, reason_array
from bayesgen.families.presentation import Presentation, TopParameters
from bayesgen.families.results import Variable
from bayesgen.input.alpha import check_smoothing
from bayesgen.input.statistics import check_mergeable, total_weight, training_data
from bayesgen.maths.dirichlet import log

if TYPE_CHECKING:
    import pymc as pm

#: The two ways of sharing m.
PRIOR_MEANS = ("per_class", "pooled")
#: ``concentration_prior="flat"``: p(s) ∝ 1 on s > 0.
FLAT = "flat"
#: Why s and m have no closed-form mean or SD, for the comparison's table.
NO_CLOSED_FORM = "no closed form: the Dirichlet compound multinomial has no conjugate prior"
#: Why a MAP is not compared where the point fit did not converge.
NOT_CONVERGED = "MAP not compared: the point fit did not converge (s → ∞, no mode)"

#: The class labels the histograms' class codes stand for, in the statistics before a fit (see
#: :func:`histograms_of`); the fit's own codes index its class coordinate.
ENTRY_CLASS = "entry_class"
#: The histograms' variables: (name, dims).
_HISTOGRAMS = {
    "word_entry_class": ("word_entry",),
    "word_entry_feature": ("word_entry",),
    "word_entry_level": ("word_entry",),
    "word_entry_weight": ("word_entry",),
    "length_entry_class": ("length_entry",),
    "length_entry_level": ("length_entry",),
    "length_entry_weight": ("length_entry",),
}


def histograms_of(statistics: xr.Dataset) -> dcm.CountHistograms:
    """The histograms a fit's statistics hold (a
    :class:`~bayesgen.maths.dirichlet_multinomial.CountHistograms`), their class codes
    indices into ``statistics["class"]``.

    Statistics straight from :meth:`DirichletMultinomialFamily.sufficient_statistics` or
    :meth:`~DirichletMultinomialFamily.merge_statistics` also hold ``entry_class``, the labels
    the codes stood for when they were made: the Dask reduction aligns two chunks' statistics
    on the union of their classes (``reindex``) and drops the classes without weight
    (``isel``), which move the class coordinate under the codes, and the labels put each
    entry back in its class. Entries of a class no longer there are dropped (a class is only
    dropped where it has no weight, so they weigh nothing).
    """
    values = {name: statistics[name].values for name in _HISTOGRAMS}
    word_class = values["word_entry_class"].astype(np.int64)
    length_class = values["length_entry_class"].astype(np.int64)
    word_keep = length_keep = slice(None)
    if ENTRY_CLASS in statistics:
        position = pd.Index(statistics["class"].values).get_indexer(statistics[ENTRY_CLASS].values)
        word_class, length_class = position[word_class], position[length_class]
        word_keep, length_keep = word_class >= 0, length_class >= 0
    return dcm.CountHistograms(
        word_class=word_class[word_keep],
        word_feature=values["word_entry_feature"].astype(np.int64)[word_keep],
        word_level=values["word_entry_level"].astype(np.float64)[word_keep],
        word_weight=values["word_entry_weight"].astype(np.float64)[word_keep],
        length_class=length_class[length_keep],
        length_level=values["length_entry_level"].astype(np.float64)[length_keep],
        length_weight=values["length_entry_weight"].astype(np.float64)[length_keep],
        class_count=statistics["class_count"].values.astype(np.float64),
        log_coefficient=statistics["log_coefficient"].values.astype(np.float64),
        n_features=statistics.sizes["feature"],
    )


def _statistics_dataset(histograms: dcm.CountHistograms, coords: dict, attrs: dict) -> xr.Dataset:
    """The statistics of :meth:`DirichletMultinomialFamily.sufficient_statistics`, with the
    class labels of the codes (``entry_class``, see :func:`histograms_of`)."""
    variables = _histogram_variables(histograms)
    variables[ENTRY_CLASS] = (("class_code",), np.asarray(coords["class"]))
    return xr.Dataset(variables, coords=coords, attrs=attrs)


def _histogram_variables(histograms: dcm.CountHistograms) -> dict:
    feature_count = np.zeros((histograms.n_classes, histograms.n_features))
    np.add.at(
        feature_count,
        (histograms.word_class, histograms.word_feature),
        histograms.word_weight * histograms.word_level,
    )
    return {
        "class_count": (("class",), histograms.class_count),
        "feature_count": (("class", "feature"), feature_count),
        "log_coefficient": (("class",), histograms.log_coefficient),
        "word_entry_class": (("word_entry",), histograms.word_class),
        "word_entry_feature": (("word_entry",), histograms.word_feature),
        "word_entry_level": (("word_entry",), histograms.word_level),
        "word_entry_weight": (("word_entry",), histograms.word_weight),
        "length_entry_class": (("length_entry",), histograms.length_class),
        "length_entry_level": (("length_entry",), histograms.length_level),
        "length_entry_weight": (("length_entry",), histograms.length_weight),
    }


def pooled_frequencies(statistics: xr.Dataset) -> np.ndarray:
    """f_w = (N_w + ½) / (N + V / 2), the add-½ word frequencies of all the classes together:
    the mode of the prior of m."""
    counts = statistics["feature_count"].values.sum(axis=0)
    return (counts + 0.5) / (counts.sum() + 0.5 * counts.size)


def check_prior_mean(prior_mean) -> str:
    """``prior_mean`` checked: "per_class" or "pooled"."""
    if not isinstance(prior_mean, str) or prior_mean not in PRIOR_MEANS:
        raise ValueError(f"prior_mean: expected one of {list(PRIOR_MEANS)}; got {prior_mean!r}.")
    return prior_mean


def concentration_prior_of(concentration_prior, n_features: int) -> tuple[float, float]:
    """The (shape, rate) of the Gamma prior of s: None gives (1, 1 / V), "flat" (1, 0), a
    pair itself (shape ≥ 1, so that the mode exists; rate > 0)."""
    if concentration_prior is None:
        return 1.0, 1.0 / max(n_features, 1)
    if isinstance(concentration_prior, str):
        if concentration_prior != FLAT:
            raise ValueError(
                f"concentration_prior: expected None, {FLAT!r} or a pair (shape, rate) with "
                f"shape >= 1 and rate > 0; got {concentration_prior!r}."
            )
        return 1.0, 0.0
    try:
        shape, rate = (float(value) for value in concentration_prior)
    except (TypeError, ValueError):
        shape = rate = np.nan
    if not (np.isfinite(shape) and np.isfinite(rate) and shape >= 1.0 and rate > 0.0):
        raise ValueError(
            f"concentration_prior: expected None, {FLAT!r} or a pair (shape, rate) with shape "
            f">= 1 and rate > 0; got {concentration_prior!r}."
        )
    return shape, rate


def mean_prior_strength_of(strength, n_features: int) -> float:
    """λ of the prior Dirichlet(1 + λ f) of m: None gives V; a number ≥ 0 itself."""
    if strength is None:
        return float(n_features)
    value = float(strength) if isinstance(strength, int | float | np.number) else np.nan
    if not (np.isfinite(value) and value >= 0) or isinstance(strength, bool):
        raise ValueError(
            f"mean_prior_strength: expected None or a finite number >= 0; got {strength!r}."
        )
    return value


def prior_of(estimates: xr.Dataset) -> tuple[tuple[float, float], np.ndarray]:
    """The Gamma (shape, rate) of s and the Dirichlet concentrations c (V,) of m of a fit."""
    attrs = estimates.attrs
    shape = float(attrs["concentration_prior_shape"])
    rate = float(attrs["concentration_prior_rate"])
    mean_prior = 1.0 + float(attrs["mean_prior_strength"]) * estimates["prior_frequency"].values
    return (shape, rate), mean_prior


class DirichletMultinomialFamily(Family):
    """The Dirichlet compound multinomial block: x | y = k ~ DirMult(n, s_k m_k)."""

    name = "dcm_nb"
    estimator = "DirichletMultinomialNB"
    cli_name = "dcm"
    feature_kind = "count"
    missing_values = "the Dirichlet compound multinomial needs whole documents (no NaN)"
    parameters: ClassVar[dict[str, tuple[str, ...]]] = {
        "class_prob": ("class",),
        "concentration": ("class",),
        "feature_mean": ("class", "feature"),
    }
    statistics: ClassVar[dict[str, tuple[str, ...]]] = {
        "class_count": ("class",),
        # Each word's total count in each class (the histograms' first moments): the pooled
        # frequencies, and the feature coordinate.
        "feature_count": ("class", "feature"),
        # Σ_d log(n_d! / Π_w x_dw!) per class: the likelihood's part free of α.
        "log_coefficient": ("class",),
        **_HISTOGRAMS,
    }
    presentation = Presentation(
        plot_variables=("class_prob", "concentration"),
        top_parameter_label="m (mean word probability in the class)",
        top_parameter_caption="largest mean word probabilities",
        variable_symbols={"concentration": "s", "feature_mean": "m"},
        mean_label="point fit",
        mean_caption="the point fit (the posterior mode, by Newton's method)",
        ppc_variables=("distinct_words",),
        ppc_caption=(
            "distinct_words is each document's number of different words, the labels and "
            "lengths kept as observed: bursty text has fewer than a multinomial gives."
        ),
        linear_boundaries=False,
    )

    def has_exact_predictive(self, options=None) -> bool:
        """False: (s, m) have no conjugate posterior, so no exact predictive (leave-one-out
        refits the point fit: :meth:`loo_kind`)."""
        return False

    # -- statistics and closed forms ------------------------------------------------------

    def sufficient_statistics(
        self, X, y, *, feature_names=None, sample_weight=None, classes=None
    ) -> xr.Dataset:
        """The class counts, the multinomial coefficients and the count histograms (see
        :func:`bayesgen.maths.dirichlet_multinomial.count_histograms`)."""
        data = training_data(
            X,
            y,
            kind=self.feature_kind,
            feature_names=feature_names,
            sample_weight=sample_weight,
            classes=classes,
        )
        histograms = dcm.count_histograms(data.X, data.y, len(data.classes), data.sample_weight)
        attrs = {
            "model": self.name,
            "n_samples": total_weight(histograms.class_count),
            "feature_names_given": int(data.names_given),
        }
        coords = {"class": data.classes, "feature": data.feature_names}
        return _statistics_dataset(histograms, coords, attrs)

    def merge_statistics(self, first: xr.Dataset, second: xr.Dataset) -> xr.Dataset:
        """The histograms of the union: entries of the same (class, word, level) add."""
        check_mergeable(first, second)
        merged = dcm.merge_histograms(histograms_of(first), histograms_of(second))
        attrs = dict(first.attrs)
        attrs["n_samples"] = total_weight(merged.class_count)
        coords = {"class": first["class"].values, "feature": first["feature"].values}
        return _statistics_dataset(merged, coords, attrs)

    def from_statistics(
        self,
        statistics: xr.Dataset,
        *,
        class_alpha: float = 1.0,
        prior_mean: str = "per_class",
        concentration_prior=None,
        mean_prior_strength=None,
    ) -> xr.Dataset:
        """The point fit: the mode of (s, m) under the priors (``concentration``,
        ``feature_mean``) and the evidence maximiser under a flat prior (``*_mle``), both by
        :func:`~bayesgen.maths.dirichlet_multinomial.fit_concentration`; π's posterior mean.

        Returns
        -------
        xarray.Dataset
            The statistics, ``class_prob`` (+ ``_mle``), ``concentration`` (+ ``_mle``),
            ``feature_mean`` (+ ``_mle``), ``prior_frequency`` (f, the prior's mode of m);
            attrs ``model``, ``class_alpha``, ``prior_mean``, ``concentration_prior_shape``,
            ``concentration_prior_rate``, ``mean_prior_strength``, ``point_fit_converged``
            and ``mle_converged`` (1 or 0), ``n_samples``, ``feature_names_given``.
        """
        class_alpha = check_smoothing(class_alpha, "class_alpha")
        prior_mean = check_prior_mean(prior_mean)
        n_features = statistics.sizes["feature"]
        shape, rate = concentration_prior_of(concentration_prior, n_features)
        strength = mean_prior_strength_of(mean_prior_strength, n_features)
        histograms = histograms_of(statistics)
        frequency = pooled_frequencies(statistics)
        shared = prior_mean == "pooled"
        mode = dcm.fit_concentration(
            histograms,
            shared_mean=shared,
            concentration_prior=(shape, rate),
            mean_prior=1.0 + strength * frequency,
        )
        flat = dcm.fit_concentration(histograms, shared_mean=shared, max_iter=5_000)
        # The codes re-made against the class coordinate (see histograms_of).
        variables = _histogram_variables(histograms)
        variables |= CLASS_PRIOR.estimates(histograms.class_count, class_alpha)
        variables |= {
            "concentration": (("class",), mode.concentration),
            "concentration_mle": (("class",), flat.concentration),
            "feature_mean": (("class", "feature"), mode.mean),
            "feature_mean_mle": (("class", "feature"), flat.mean),
            "prior_frequency": (("feature",), frequency),
        }
        attrs = {
            "model": self.name,
            "class_alpha": class_alpha,
            "prior_mean": prior_mean,
            "concentration_prior_shape": shape,
            "concentration_prior_rate": rate,
            "mean_prior_strength": strength,
            "point_fit_converged": int(mode.converged),
            "mle_converged": int(flat.converged),
            "n_samples": statistics.attrs["n_samples"],
            "feature_names_given": statistics.attrs["feature_names_given"],
        }
        coords = {"class": statistics["class"].values, "feature": statistics["feature"].values}
        return xr.Dataset(variables, coords=coords, attrs=attrs)

    @staticmethod
    def point_alpha(estimates: xr.Dataset) -> np.ndarray:
        """α̂_k = s_k m_k at the point fit, shape (K, V)."""
        return estimates["concentration"].values[:, None] * estimates["feature_mean"].values

    def plug_in_log_joint(self, estimates: xr.Dataset, X) -> tuple[np.ndarray, np.ndarray | None]:
        """log π_k + log DirMult(x; α̂_k) at the point fit, in full."""
        class_order, log_class = CLASS_PRIOR.log_terms(estimates)
        joint = log_class + dcm.dirichlet_multinomial_log_pmf(X, self.point_alpha(estimates))
        order = np.broadcast_to(class_order, joint.shape)
        return joint, (order if np.any(order) else None)

    def predictive_log_joint(self, estimates: xr.Dataset, X) -> np.ndarray:
        """log E[π_k | D] + log DirMult(x; α̂_k): θ integrated out exactly given the point
        fit α̂ (an empirical-Bayes predictive; (s, m) are not integrated out)."""
        with np.errstate(divide="ignore"):
            log_class = np.log(estimates["class_prob"].values)
        return log_class + dcm.dirichlet_multinomial_log_pmf(X, self.point_alpha(estimates))

    def log_evidence(self, estimates: xr.Dataset) -> float:
        """log p(y | a) + log p(X | y, α̂) at the point fit α̂ (the labels' evidence exact,
        the documents' a plug-in: (s, m) are not integrated out)."""
        labels = CLASS_PRIOR.log_evidence(estimates, estimates.attrs["class_alpha"])
        documents = dcm.histogram_log_likelihood(
            histograms_of(estimates), self.point_alpha(estimates)
        ).sum()
        return float(np.sum(labels) + documents)

    # -- no conjugate posterior -----------------------------------------------------------

    def conjugate_draws(self, estimates, rng, sample_shape, dtype, *, posterior: bool):
        """Prior draws (``posterior=False``): π ~ Dirichlet(a), s_k ~ Gamma(shape, rate), m_k ~
        Dirichlet(1 + λ f) (one m for all the classes where it is pooled), in that order.
        Posterior draws raise: (s, m) have no conjugate posterior; NUTS draws them.

        Raises
        ------
        ValueError
            For ``posterior=True``, or a flat (improper) prior of s.
        """
        if posterior:
            raise ValueError(
                "inference: the Dirichlet compound multinomial has no exact conjugate draws; "
                "use inference='nuts'."
            )
        (shape, rate), mean_prior = prior_of(estimates)
        if rate <= 0:
            raise ValueError(
                "concentration_prior: 'flat' is improper, so s has no prior draws; use a "
                "pair (shape, rate) with rate > 0."
            )
        class_prob = CLASS_PRIOR.draws(estimates, rng, sample_shape, dtype, posterior=False)
        n_classes = estimates.sizes["class"]
        concentration = rng.gamma(shape, 1.0 / rate, size=(*sample_shape, n_classes))
        if estimates.attrs["prior_mean"] == "pooled":
            shared = rng.dirichlet(mean_prior, size=tuple(sample_shape))
            mean = np.repeat(shared[..., None, :], n_classes, axis=-2)
        else:
            mean = rng.dirichlet(mean_prior, size=(*sample_shape, n_classes))
        return {
            "class_prob": class_prob,
            "concentration": (("class",), concentration.astype(dtype)),
            "feature_mean": (("class", "feature"), mean.astype(dtype)),
        }

    def prior_draws_problem(self, estimates: xr.Dataset, options=None):
        """A flat prior of s has no draws, and the default prior of m is centred on the
        training frequencies f, so it would move with every simulated data set: SBC needs
        a rate > 0 and ``mean_prior_strength=0``."""
        (_, rate), _ = prior_of(estimates)
        if rate <= 0:
            return (
                "SBC draws s from its Gamma prior; got concentration_prior='flat', which is "
                "improper. Use a pair (shape, rate) with rate > 0."
            )
        if estimates.attrs["mean_prior_strength"] > 0:
            return (
                "SBC needs a prior that is the same for every data set; the prior of m, "
                "Dirichlet(1 + λ f), is centred on the training data's word frequencies f "
                f"(mean_prior_strength = {estimates.attrs['mean_prior_strength']:g}). Use "
                "mean_prior_strength=0."
            )
        return None

    def conjugate_mode(self, estimates: xr.Dataset) -> dict[str, Variable]:
        """π's exact mode, and the mode of (s, m) found by the point fit."""
        return {
            "class_prob": CLASS_PRIOR.mode(estimates),
            "concentration": (("class",), estimates["concentration"].values),
            "feature_mean": (("class", "feature"), estimates["feature_mean"].values),
        }

    def loo_kind(self, estimates: xr.Dataset) -> str:
        """Always "plug-in": leave-one-out refits the point fit without each row."""
        return "plug-in"

    def loo_log_joint(self, estimates, X, y_codes, *, options=None) -> np.ndarray:
        """log E[π_k | D_{-i}] + log DirMult(x_i | α̂_k^{(-i)}): π's exact leave-one-out and
        the point fit refitted without document i (see
        :mod:`bayesgen.maths.dirichlet_multinomial_loo`), a plug-in: (s, m) are not
        integrated out. Only the document's own class is refitted where m is per class;
        the priors are held as fitted.

        Warns
        -----
        UserWarning
            Where some refits did not converge (s → ∞ under a flat prior, the multinomial
            limit, or s → 0), their last point is used.
        """
        y_codes = np.asarray(y_codes, dtype=np.int64)
        concentration_prior, mean_prior = prior_of(estimates)
        refits = dcm_loo.leave_one_out_log_pmf(
            X,
            y_codes,
            histograms_of(estimates),
            estimates["concentration"].values,
            estimates["feature_mean"].values,
            shared_mean=estimates.attrs["prior_mean"] == "pooled",
            concentration_prior=concentration_prior,
            mean_prior=mean_prior,
        )
        unconverged = int(np.count_nonzero(~refits.converged))
        if unconverged:
            warnings.warn(
                f"loo: {unconverged} of {y_codes.size} point fits without one document did "
                "not converge (the data do not determine some s: s -> infinity, the "
                "multinomial limit, or s -> 0); their last point is used.",
                UserWarning,
                stacklevel=2,
            )
        return CLASS_PRIOR.loo_log_prob(estimates, y_codes) + refits.log_pmf

    # -- the generative model -------------------------------------------------------------

    def pymc_model(self, estimates: xr.Dataset) -> pm.Model:
        """π ~ Dirichlet(a), s_k ~ Gamma, m ~ Dirichlet(1 + λ f), the documents observed
        through their histograms (see :func:`bayesgen.families.dcm_pymc.dcm_pymc_model`)."""
        from bayesgen.families.dcm_pymc import dcm_pymc_model  # heavy: PyMC

        concentration_prior, mean_prior = prior_of(estimates)
        return dcm_pymc_model(
            estimates,
            histograms_of(estimates),
            concentration_prior=concentration_prior,
            mean_prior=mean_prior,
        )

    def draw_log_joint(self, estimates: xr.Dataset, X, draws: xr.Dataset) -> np.ndarray:
        """log π_k + log DirMult(x; s_k m_k) per draw, in full (no term is left out)."""
        concentration = draws["concentration"].transpose("draw", "class").values
        mean = draws["feature_mean"].transpose("draw", "class", "feature").values
        log_class = log(draws["class_prob"].transpose("draw", "class").values)
        pmf = dcm.dirichlet_multinomial_log_pmf(X, concentration[..., None] * mean)
        return pmf + log_class[:, None, :]

    def simulate_rows(self, estimates: xr.Dataset, X, y_codes, parameters, rng):
        """One document per training row from DirMult(n_i, s_y m_y) by the Pólya urn, each
        of the training row's length; sparse."""
        alpha = np.asarray(parameters["concentration"], dtype=np.float64)[:, None] * np.asarray(
            parameters["feature_mean"], dtype=np.float64
        )
        lengths = np.rint(np.asarray(X.sum(axis=1)).ravel()).astype(np.int64)
        return dcm.simulate_documents(alpha[np.asarray(y_codes)], lengths, rng)

    def predictive_statistics(self, estimates: xr.Dataset, X, y_codes) -> dict[str, Variable]:
        """``distinct_words``: each document's number of different words (burstiness)."""
        if sp.issparse(X):
            distinct = np.diff(sp.csr_array(sp.csr_array(X) != 0).indptr)
        else:
            distinct = np.count_nonzero(np.asarray(X), axis=1)
        return {"distinct_words": (("obs",), distinct.astype(np.int64))}

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
        """π exactly; s and m: no closed-form mean or SD, their MAP is the point fit."""
        (shape, rate), _ = prior_of(estimates)
        strength = estimates.attrs["mean_prior_strength"]
        converged = bool(estimates.attrs.get("point_fit_converged", 1))
        blocks = [CLASS_PRIOR.expected(estimates, class_alpha)]
        for variable, symbol, prior in (
            ("concentration", "s", f"Gamma({shape:g}, {rate:g})"),
            ("feature_mean", "m", f"Dirichlet(1 + {strength:g} f)"),
        ):
            values = estimates[variable].values.astype(np.float64)
            nothing = np.full(values.shape, np.nan)
            blocks.append(
                Expected(
                    variable=variable,
                    keep=np.ones(values.shape, dtype=bool),
                    closed_form=nothing,
                    closed_form_sd=nothing,
                    mle=estimates[f"{variable}_mle"].values.astype(np.float64),
                    expected_map=values if converged else nothing,
                    reasons=(
                        reason_array(values.shape, NO_CLOSED_FORM),
                        reason_array(values.shape, NO_CLOSED_FORM),
                        reason_array(values.shape, "" if converged else NOT_CONVERGED),
                    ),
                    hide_map=np.zeros(values.shape, dtype=bool),
                    prior=prior,
                    mean_identity=None,
                    sd_identity=None,
                    map_identity=f"MAP of {symbol} = the point fit under {prior}",
                )
            )
        return blocks

    # -- presentation ---------------------------------------------------------------------

    def feature_scores(self, estimates: xr.Dataset) -> np.ndarray:
        """The largest mean word probability m_kw of each word over the classes."""
        return estimates["feature_mean"].values.max(axis=0)

    def top_parameters(self, estimates: xr.Dataset, posterior: xr.Dataset) -> TopParameters:
        """Each class's mean word probabilities, ranked by the point fit."""
        return TopParameters(posterior["feature_mean"], estimates["feature_mean"].values)


FAMILY = DirichletMultinomialFamily()

__all__ = [
    "ENTRY_CLASS",
    "FAMILY",
    "FLAT",
    "PRIOR_MEANS",
    "DirichletMultinomialFamily",
    "check_prior_mean",
    "concentration_prior_of",
    "histograms_of",
    "mean_prior_strength_of",
    "pooled_frequencies",
    "prior_of",
]
