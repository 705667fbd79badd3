"""Multinomial (bag-of-words) naive Bayes.

π ~ Dirichlet(a), θ_k ~ Dirichlet(λ) over the vocabulary for each class, and the words of a
document of class k are multinomial draws from θ_k:

* ``feature_prob`` = (N_kw + λ) / (N_k + V λ),    N_k = tokens in class k
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import numpy as np
import scipy.sparse as sp
import xarray as xr
from scipy.special import gammaln

from bayesgen.families.expected import dirichlet_kurtosis, dirichlet_sd
from bayesgen.families.hyperprior import has_alpha_prior
from bayesgen.families.naive_bayes import (
    FeatureStatistics,
    NaiveBayesFamily,
    naive_bayes_presentation,
)
from bayesgen.input.data import TrainingData
from bayesgen.maths.counts import feature_counts
from bayesgen.maths.dirichlet import add_lambda, log, log_prob_terms, simplex_mode
from bayesgen.maths.joint_statistics import JointStatistic
from bayesgen.maths.likelihood import linear_in_x, multinomial_log_likelihood

if TYPE_CHECKING:
    import pymc as pm


class MultinomialFamily(NaiveBayesFamily):
    """Multinomial naive Bayes: word counts (or TF-IDF weights) per class."""

    name = "multinomial_nb"
    estimator = "MultinomialNB"
    cli_name = "multinomial"
    feature_kind = "count"
    missing_values = (
        "a document with a missing word count has no known length, and the multinomial "
        "likelihood of its words needs it (the counts of one document are not independent)"
    )
    presentation = naive_bayes_presentation(
        top_parameter_label="P(word | class)",
        ppc_variables=("distinct_words",),
        ppc_caption=(
            "distinct_words counts the different words of each document, its length kept as "
            "observed: real text repeats its words (burstiness), so a black curve left of the blue "
            "ones (fewer distinct words than a multinomial draws) is this model's known misfit."
        ),
    )
    parameters: ClassVar[dict[str, tuple[str, ...]]] = {
        "class_prob": ("class",),
        "feature_prob": ("class", "feature"),
    }
    statistics: ClassVar[dict[str, tuple[str, ...]]] = {
        "class_count": ("class",),
        "feature_count": ("class", "feature"),
    }

    def feature_statistics(self, data: TrainingData, class_count: np.ndarray) -> FeatureStatistics:
        counts = feature_counts(data.X, data.y, len(data.classes), data.sample_weight)
        return FeatureStatistics(dims=("class", "feature"), counts=counts)

    def smoothing_terms(self, statistics: xr.Dataset):
        """Each class's word counts over its total, V = n_features outcomes."""
        counts = statistics["feature_count"].values
        return counts.sum(axis=1, keepdims=True), counts.shape[1], None

    def plug_in_log_joint(self, estimates: xr.Dataset, X) -> tuple[np.ndarray, np.ndarray | None]:
        class_order, log_class = self.class_log_terms(estimates)
        alpha, counts = self.feature_alpha(estimates), estimates["feature_count"].values
        total = counts.sum(axis=1, keepdims=True)
        weight = self.prior_weights(estimates)
        order, log_p = log_prob_terms(counts, total, alpha, counts.shape[1], weight)
        joint = multinomial_log_likelihood(X, log_class, log_p)
        order_x = linear_in_x(X, order) + class_order[None, :]
        return joint, (order_x if np.any(order_x) else None)

    def integrated_log_joint(self, estimates: xr.Dataset, X) -> np.ndarray:
        """The Dirichlet-multinomial p(x | k, data) ∝ Γ(A_k) / Γ(A_k + L) ·
        Π_w Γ(a_kw + x_w) / Γ(a_kw), with a_kw = N_kw + λ, A_k = Σ_w a_kw and L = Σ_w x_w.

        For a one-word document this equals the add-λ plug-in; for longer documents it is less
        confident, because repeated words are more likely under uncertainty about θ.
        """
        concentration = estimates["feature_count"].values + self.prior_pseudocounts(estimates)
        total = concentration.sum(axis=1)
        doc_length = np.asarray(X.sum(axis=1)).ravel()
        with np.errstate(over="ignore", invalid="ignore"):  # refused by normalize_log_proba
            return (
                gammaln(total)[None, :]
                - gammaln(total[None, :] + doc_length[:, None])
                + _dirichlet_multinomial_word_terms(X, concentration)
                + np.log(estimates["class_prob"].values)[None, :]
            )

    def concentrations(
        self, estimates: xr.Dataset, *, posterior: bool
    ) -> tuple[tuple[str, ...], np.ndarray, bool]:
        weight = 1.0 if posterior else 0.0  # the prior is the posterior given zero counts
        counts = weight * estimates["feature_count"].values
        dims = tuple(estimates["feature_count"].dims)
        return dims, self.prior_pseudocounts(estimates) + counts, False

    def feature_subset(self, estimates: xr.Dataset, labels: np.ndarray) -> xr.Dataset:
        """The words ``labels`` and one remainder cell per class holding the others: by the
        Dirichlet aggregation property, Dirichlet(a_F, Σ_{w∉F} a_w) is the exact joint law of
        θ_kF (the remainder's count is set so that count + λ is that sum)."""
        if has_alpha_prior(estimates):  # λ random: the remainder's concentration moves with it
            return estimates
        keep = np.isin(estimates["feature"].values, labels)
        counts = estimates["feature_count"].values
        alpha = np.ravel(self.feature_alpha(estimates))  # one λ, or one per class
        subset = estimates.isel(feature=np.flatnonzero(keep))[["class_count", "feature_count"]]
        variables = {"class_count": subset["class_count"]}
        if "prior_weight" in estimates:  # the remainder's weight is the sum of the others'
            rest = counts[:, ~keep].sum(axis=1)
            weight = estimates["prior_weight"].values
            variables["prior_weight"] = (
                ("feature",),
                np.concatenate([weight[keep], [weight[~keep].sum()]]),
            )
        else:
            rest = counts[:, ~keep].sum(axis=1) + alpha * (np.count_nonzero(~keep) - 1)
        cells = np.concatenate([subset["feature_count"].values, rest[:, None]], axis=1)
        variables["feature_count"] = (("class", "feature"), cells)
        features = np.concatenate([subset["feature"].values.astype(object), ["(other words)"]])
        return xr.Dataset(
            variables,
            coords={"class": estimates["class"].values, "feature": features},
            attrs=estimates.attrs,
        )

    def aggregated_log_joint(self, estimates: xr.Dataset, X, n_draws: int, seed: int):
        """log p(x, y = k | θ) for exact draws of the cells each document needs.

        θ_kw = g_kw / (Σ_{w∈x} g_kw + R_k) with g_kw ~ Gamma(N_kw + λ) and R_k ~ Gamma of the
        concentration of the words the document lacks: by the Dirichlet aggregation property
        that is exactly Dirichlet(θ_k restricted to the document's words, the rest), so each
        document's draws of p(y | x, θ) have the exact posterior law. Each g_kw is drawn from
        a stream keyed by (seed, word, class, draw) and R from one keyed by (seed, the
        document's content, class, draw), and a document's sums are added in its words'
        order, so a document gets the same draws, bit for bit, in any batch, order or number
        of threads (:mod:`bayesgen.maths.aggregated`); documents share the g of their
        common words but not the remainder, so draws of different documents are not
        jointly those of one θ. The cost is the batch's distinct words × classes × draws
        Gamma variates, not the vocabulary's. None under a hyperprior on λ.
        """
        if has_alpha_prior(estimates):
            return None
        return aggregated_multinomial_log_joint(
            estimates["class_count"].values + estimates.attrs["class_alpha"],
            estimates["feature_count"].values + self.prior_pseudocounts(estimates),
            X,
            n_draws,
            seed,
        )

    def prediction_statistics(
        self, estimates: xr.Dataset, words: np.ndarray, n_draws: int, seed: int
    ) -> list:
        """The draws predictions use (:meth:`aggregated_log_joint`), checked: one statistic
        per class over one-word documents of ``words`` (positions in the vocabulary).

        A one-word document w has log p(x, y = k | θ) = log π_k + log θ_kw, so u_w = π_k θ_kw
        with π_k ~ Beta(a_k, a₀ − a_k) shared by the documents and θ_kw ~ Beta(c_kw, C_k −
        c_kw) independent across them (each has its own remainder cell). The standardised
        sum R = Σ_w (u_w − E u_w) / SD u_w / √Var has mean 0 and variance 1 exactly:
        Var = Σ_w 1 + Var(π_k) ((Σ_w E θ_w / SD u_w)² − Σ_w (E θ_w / SD u_w)²).
        """
        if has_alpha_prior(estimates) or len(words) == 0:
            return []
        documents = sp.csr_matrix(
            (np.ones(len(words)), (np.arange(len(words)), words)),
            shape=(len(words), estimates.sizes["feature"]),
        )
        joint = self.aggregated_log_joint(estimates, documents, n_draws, seed)
        u = np.exp(joint)  # (draw, word, class)
        class_concentration = estimates["class_count"].values + estimates.attrs["class_alpha"]
        total = class_concentration.sum()
        pi_mean = class_concentration / total
        pi_square = class_concentration * (class_concentration + 1) / (total * (total + 1))
        concentration = estimates["feature_count"].values + self.prior_pseudocounts(estimates)
        concentration = np.broadcast_to(concentration, estimates["feature_count"].shape)
        rows = concentration.sum(axis=1, keepdims=True)
        cells = concentration[:, words]
        theta_mean = (cells / rows).T  # (word, class)
        theta_square = (cells * (cells + 1) / (rows * (rows + 1))).T
        u_mean = pi_mean * theta_mean
        u_sd = np.sqrt(pi_square * theta_square - u_mean**2)
        # Signs s_w = ±1 turn a prior of the wrong strength (every θ_w pulled towards, or
        # pushed away from, its prior mean) into one direction of the sum; unsigned, the
        # words above and below their prior mean would cancel.
        prior = np.broadcast_to(self.prior_pseudocounts(estimates), concentration.shape)
        prior_mean = (prior / prior.sum(axis=1, keepdims=True))[:, words].T
        signs = {
            "": np.ones_like(theta_mean),
            "signed by θ_w − prior mean, ": np.where(theta_mean >= prior_mean, 1.0, -1.0),
        }
        classes = estimates["class"].values
        statistics = []
        for label, sign in signs.items():
            weight = sign * theta_mean / u_sd
            variance = len(words) + (pi_square - pi_mean**2) * (
                weight.sum(axis=0) ** 2 - (weight**2).sum(axis=0)
            )
            standardised = (sign * (u - u_mean) / u_sd).sum(axis=1) / np.sqrt(variance)
            statistics += [
                JointStatistic(
                    name=f"prediction draws π θ_w of one-word documents, {label}class {classes[k]}",
                    variable="feature_prob",
                    standardised=standardised[None, :, k],
                    fourth_moment=None,
                )
                for k in range(len(classes))
            ]
        return statistics

    def feature_simplices(self, estimates: xr.Dataset) -> tuple[np.ndarray, None]:
        """One simplex per class: its word counts over the vocabulary."""
        return estimates["feature_count"].values, None

    def pymc_model(self, estimates: xr.Dataset) -> pm.Model:
        """Multinomial (bag-of-words) naive Bayes.

        π ~ Dirichlet(a), θ_k ~ Dirichlet(λ) (with a shared mean Dirichlet(λ w), w the
        ``prior_weight``) over the vocabulary for each class, with
        a = ``class_alpha`` and λ = ``alpha`` from ``estimates.attrs``, or with a hyperprior
        the random variable ``alpha`` ~ Gamma (:mod:`bayesgen.families.hyperprior`). Observed: the
        class
        counts ``class_count`` ~ Multinomial(N, π) and the word counts ``feature_count`` N_kw ~
        Poisson(g_kw), the Gamma-Poisson form of the Dirichlet (θ_k = g_k / Σ_w g_kw; see
        :mod:`bayesgen.generative`). Fractional counts (TF-IDF weights) enter as a weighted
        likelihood through the potential ``feature_loglik`` instead, which PyMC cannot
        simulate; the class counts stay observed.
        """
        from bayesgen.families.multinomial_pymc import multinomial_nb_pymc_model  # heavy: PyMC

        return multinomial_nb_pymc_model(estimates)

    def draw_log_joint(self, estimates: xr.Dataset, X, draws: xr.Dataset) -> np.ndarray:
        return multinomial_log_likelihood(
            X, log(draws["class_prob"].values), log(draws["feature_prob"].values)
        )

    # -- the row-level generative model ---------------------------------------------------
    # A document of class k and length L is L words drawn from θ_k: x | y = k, L ~
    # Multinomial(L, θ_k). The length is not modelled; simulations keep the observed ones.

    def row_log_constant(self, X) -> np.ndarray:
        """The multinomial coefficient log L! − Σ_w log x_w! of each document."""
        X = sp.csr_array(X)
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        per_word = np.zeros(X.shape[0])
        np.add.at(per_word, rows, gammaln(X.data + 1.0))
        return gammaln(np.asarray(X.sum(axis=1)).ravel() + 1.0) - per_word

    def simulate_rows(self, estimates: xr.Dataset, X, y_codes, parameters, rng):
        """Each document's length in words drawn from its class's θ, as a sparse matrix.

        Each class's documents cost what the cheaper of two exact ways costs: where they hold
        more tokens than cells (documents × vocabulary: long documents over few words, such
        as pixel counts), each document's counts are one Multinomial(length, θ_k) draw;
        otherwise (text: short documents over a large vocabulary) the class's words are drawn
        as one stream of tokens split into the documents (its word counts, then their tokens
        in a random order), so the cost is that of the tokens.
        """
        lengths = _document_lengths(X)
        prob = np.asarray(parameters["feature_prob"], dtype=np.float64)
        n_words = prob.shape[1]
        rows, words, counts = [], [], []
        for k in range(prob.shape[0]):
            members = np.flatnonzero(y_codes == k)
            n_tokens = lengths[members]
            total = n_tokens.sum()
            if total == 0:
                continue
            theta = prob[k] / prob[k].sum()
            if members.size * n_words <= total:
                per_document = rng.multinomial(n_tokens, theta)
                member, word = np.nonzero(per_document)
                rows.append(members[member])
                words.append(word)
                counts.append(per_document[member, word].astype(np.float64))
            else:
                # The stream's word counts are Multinomial(total, θ_k) and, given them, every
                # order of its tokens is as likely: the counts' tokens shuffled are the stream
                # (a quarter to a fifth of the cost of drawing each token on its own).
                stream = np.repeat(np.arange(n_words), rng.multinomial(total, theta))
                rng.shuffle(stream)
                rows.append(np.repeat(members, n_tokens))
                words.append(stream)
                counts.append(np.ones(total))
        if not rows:
            return sp.csr_array(X.shape, dtype=np.float64)
        simulated = sp.csr_array(
            (np.concatenate(counts), (np.concatenate(rows), np.concatenate(words))), shape=X.shape
        )
        simulated.sum_duplicates()
        return simulated

    def predictive_statistics(self, estimates: xr.Dataset, X, y_codes) -> dict:
        """``doc_length`` (tokens per document, kept as observed by the simulations) and
        ``distinct_words`` per document: real text repeats its words more than a multinomial
        does (burstiness), which this statistic shows."""
        X = sp.csr_array(X)
        return {
            "doc_length": (("obs",), np.asarray(X.sum(axis=1)).ravel()),
            "distinct_words": (("obs",), np.diff(sp.csr_array(X > 0).indptr).astype(np.int64)),
        }

    def feature_moments(self, estimates: xr.Dataset, alpha: float) -> dict:
        """θ_k | data ~ Dirichlet(N_kw + λ w_w) over the vocabulary (w = 1: add-λ)."""
        counts = estimates["feature_count"].values.astype(np.float64)
        weight = self.prior_weights(estimates)
        prior = self.prior_pseudocounts(estimates, alpha)
        mode, status = simplex_mode(counts, prior)
        return {
            "keep": np.ones(counts.shape, dtype=bool),
            "closed_form": add_lambda(
                counts,
                counts.sum(axis=1, keepdims=True),
                self.feature_alpha(estimates, alpha),
                counts.shape[1],
                weight,
            ),
            "closed_form_sd": dirichlet_sd(counts + prior),
            "closed_form_kurtosis": dirichlet_kurtosis(counts + prior),
            "expected_map": mode,
            "status": status,
        }

    def loo_feature_log_likelihood(self, estimates: xr.Dataset, X, y_codes) -> np.ndarray:
        """The Dirichlet-multinomial log p(x_i | y = k, D_{-i}) given the document's length L:

            log L! − Σ_w log x_w! + log Γ(A) − log Γ(A + L) + Σ_w [log Γ(a_w + x_w) − log Γ(a_w)]

        with a_w = N_kw + λ and A = Σ_w a_w for the other classes, and for the own class
        a_w − x_w and A − L, where the word terms become log Γ(a_w) − log Γ(a_w − x_w): sums
        over the non-zeros of X, O(nnz · K) for all rows together.
        """
        X = sp.csr_array(X)
        n_rows = X.shape[0]
        concentration = estimates["feature_count"].values + self.prior_pseudocounts(estimates)
        total = concentration.sum(axis=1)
        length = np.asarray(X.sum(axis=1)).ravel()
        coefficient = self.row_log_constant(X)
        out = (
            coefficient[:, None]
            + gammaln(total)[None, :]
            - gammaln(total[None, :] + length[:, None])
            + _dirichlet_multinomial_word_terms(X, concentration)
        )
        rows = np.repeat(np.arange(n_rows), np.diff(X.indptr))
        own = concentration[y_codes[rows], X.indices]  # row i's own words were counted in a
        words = np.bincount(rows, weights=gammaln(own) - gammaln(own - X.data), minlength=n_rows)
        own_total = total[y_codes]
        out[np.arange(n_rows), y_codes] = (
            coefficient + gammaln(own_total - length) - gammaln(own_total) + words
        )
        return out


from bayesgen.maths.aggregated import aggregated_multinomial_log_joint  # noqa: E402


def _dirichlet_multinomial_word_terms(X, concentration: np.ndarray) -> np.ndarray:
    """Σ_w [log Γ(a_kw + x_w) - log Γ(a_kw)] for every row; only non-zero x_w contribute."""
    X = sp.csr_array(X)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    a = concentration[:, X.indices]  # (K, nnz)
    terms = gammaln(a + X.data) - gammaln(a)
    out = np.zeros((X.shape[0], concentration.shape[0]))
    np.add.at(out, rows, terms.T)
    return out


FAMILY = MultinomialFamily()


def _document_lengths(X) -> np.ndarray:
    """Tokens per document, refusing rows that are not whole counts (TF-IDF weights have no
    generative model to simulate from)."""
    X = sp.csr_array(X)
    if not np.all(X.data == np.round(X.data)):
        raise ValueError(
            "X: simulating documents needs whole word counts; the training rows hold "
            "fractional weights (TF-IDF?), which the multinomial model only weighs. Fit on "
            "counts (CountVectorizer) to simulate."
        )
    return np.asarray(X.sum(axis=1)).ravel().astype(np.int64)
