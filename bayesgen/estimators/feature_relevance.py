"""Which features matter, for a fitted naive Bayes estimator: :func:`feature_relevance` (a
table of every feature's relevance Bayes factor, P(relevant) and per-class effects) and the
naive Bayes averaged over all feature subsets (:func:`average_features_predict_proba`, with
its exact leave-one-out :func:`average_features_loo_proba`).

The maths is :mod:`bayesgen.maths.feature_relevance`; this module reads a fit's sufficient
statistics and prior (``closed_form_``) into its cells. Each block's reading is one entry of
:data:`RELEVANCE_CELLS`, keyed by the block's model (a block without one, GDA or QDA, has no
per-feature relevance), and of :data:`AVERAGING_CELLS` for averaging: the same cells, except
that a multinomial's words are averaged over the nodes of its Dirichlet tree
(:mod:`bayesgen.maths.word_tree`; exact), where its table scores each word against the rest
(order-free, an approximation). A Dirichlet compound multinomial (DCM) block's table is that
of its words' *presence*, an approximation (:func:`_dcm`); it has no feature averaging. A mixed
model (:class:`~bayesgen.estimators.mixed.NaiveBayes`) gives every block's features, with a
``block`` column, and averages every block's features.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from bayesgen.families.class_prior import loo_class_log_prob
from bayesgen.families.dcm import histograms_of
from bayesgen.families.gaussian_nb import resolved_prior
from bayesgen.families.hyperprior import has_alpha_prior
from bayesgen.families.poisson_nb import rate_prior_of
from bayesgen.input.statistics import cell_counts
from bayesgen.maths import feature_relevance as fr
from bayesgen.maths.likelihood import normalize_log_proba
from bayesgen.maths.word_tree import WordTreeCells

__all__ = [
    "AVERAGING_CELLS",
    "RELEVANCE_CELLS",
    "FeatureRelevanceMixin",
    "average_features_loo_proba",
    "average_features_predict_proba",
    "feature_relevance",
    "relevance_unavailable",
]

#: What each block's effect column measures, class k against the other classes pooled.
EFFECT_KINDS = {
    "bernoulli_nb": "log-odds of presence",
    "categorical_nb": "log-odds of the category",
    "multinomial_nb": "log-odds of the word",
    "gaussian_nb": "standardised mean difference",
    "poisson_nb": "log rate ratio",
    "dcm_nb": "log-odds of presence",
}


def _bernoulli(family, estimates: xr.Dataset):
    present, absent = family.pair_pseudocounts(estimates)
    return fr.bernoulli_cells(
        estimates["feature_count"].values, family.cell_totals(estimates), present, absent
    )


def _categorical(family, estimates: xr.Dataset):
    _, prior, _ = family.concentrations(estimates, posterior=False)
    return fr.DirichletCells(
        estimates["feature_count"].values, prior, estimates["category_mask"].values
    )


def _multinomial(family, estimates: xr.Dataset):
    return fr.word_split_cells(
        estimates["feature_count"].values, family.prior_pseudocounts(estimates)
    )


def _dcm(family, estimates: xr.Dataset):
    """A DCM block's words scored by their presence, a documented approximation.

    Under the DCM a word's repeats within a document are bursts, so its relevance is read
    from the number of class-k documents that contain it, h_kw(1) out of N_k (the first
    level of the count histograms), with a flat Beta(1, 1) prior on each presence
    probability: the exact Bayes factor of that Bernoulli coarsening of the documents. Where
    α_w is the same in every class and the classes' documents have the same lengths, the
    presence probabilities are equal (the shared model holds); repeats beyond the first and
    the lengths are left out, so classes whose documents differ in length alone can differ
    in presence too.
    """
    histograms = histograms_of(estimates)
    n_classes, n_features = histograms.n_classes, histograms.n_features
    present = np.bincount(
        histograms.word_class * n_features + histograms.word_feature,
        weights=histograms.word_weight,
        minlength=n_classes * n_features,
    ).reshape(n_classes, n_features)
    return fr.bernoulli_cells(present, histograms.class_count[:, None], 1.0, 1.0)


def _gaussian(family, estimates: xr.Dataset):
    return fr.NormalInverseGammaCells(
        cell_counts(estimates),
        estimates["class_mean"].values,
        estimates["sum_squares"].values,
        resolved_prior(estimates),
    )


def _poisson(family, estimates: xr.Dataset):
    shape, rate = rate_prior_of(estimates)
    return fr.GammaPoissonCells(
        estimates["feature_count"].values, cell_counts(estimates), shape, rate
    )


#: model name → (the statistics it needs, a reader of a fit into relevance cells). Where λ
#: differs between classes, the shared model's prior is the classes' average.
RELEVANCE_CELLS = {
    "bernoulli_nb": (("class_count", "feature_count"), _bernoulli),
    "categorical_nb": (("class_count", "feature_count", "category_mask"), _categorical),
    "multinomial_nb": (("class_count", "feature_count"), _multinomial),
    "gaussian_nb": (("class_count", "class_mean", "sum_squares", "prior_mean"), _gaussian),
    "poisson_nb": (("class_count", "feature_count"), _poisson),
    "dcm_nb": (("class_count", "word_entry_class", "word_entry_weight"), _dcm),
}


def _blocks(est) -> list[tuple[str | None, object, xr.Dataset, slice | None]]:
    """(block name, family, fit, columns) of every block of a fitted estimator; one block
    named None for a single-block model."""
    est.check_fitted()
    family, fit = est.model_, est.closed_form_
    if hasattr(family, "blocks"):  # the mixed model: its blocks side by side
        return [(b.name, b.model, b.estimates, slice(b.start, b.stop)) for b in family.blocks(fit)]
    return [(None, family, fit, None)]


def _cells(family, estimates: xr.Dataset, block: str | None):
    """The relevance cells of one block's fit, its statistics and prior checked."""
    _check_cells(estimates, block)
    return RELEVANCE_CELLS[estimates.attrs["model"]][1](family, estimates)


def _check_cells(estimates: xr.Dataset, block: str | None) -> None:
    """Refuses a block without relevance cells: not naive Bayes, no statistics, a
    hyperprior on λ."""
    where = "" if block is None else f" (block {block!r})"
    model = estimates.attrs.get("model")
    if model not in RELEVANCE_CELLS:
        raise ValueError(
            f"est: feature relevance needs a naive Bayes block (one of "
            f"{', '.join(sorted(RELEVANCE_CELLS))}){where}; got model {model!r}."
        )
    needed, _ = RELEVANCE_CELLS[model]
    missing = [name for name in needed if name not in estimates]
    if missing:
        raise ValueError(
            f"est: feature relevance needs the fit's sufficient statistics{where}; its "
            f"closed_form_ lacks {', '.join(missing)}."
        )
    if has_alpha_prior(estimates):
        raise ValueError(
            f"alpha_prior: feature relevance needs a fixed λ{where}; a hyperprior on λ ties "
            "the features together (fit with alpha or alpha='evidence' instead)."
        )


def relevance_unavailable(est) -> str | None:
    """Why :func:`feature_relevance` refuses a fitted ``est`` (its message), or None where it
    gives a table; cheap: no Bayes factor is computed.

    Examples
    --------
    >>> from bayesgen import BernoulliNB, MultinomialNB
    >>> from bayesgen.estimators.feature_relevance import relevance_unavailable
    >>> options = {"inference": "conjugate", "compute_map": False, "prior_draws": 0}
    >>> print(relevance_unavailable(BernoulliNB(**options).fit([[1, 0], [0, 1]], [0, 1])))
    None
    >>> hyper = MultinomialNB(alpha_prior=(1.0, 1.0), **options).fit([[1, 0], [0, 1]], [0, 1])
    >>> relevance_unavailable(hyper).split(":")[0]
    'alpha_prior'
    """
    blocks = _blocks(est)
    mixed = blocks[0][0] is not None
    if mixed:
        blocks = [b for b in blocks if b[2].attrs.get("model") in RELEVANCE_CELLS]
        if not blocks:
            return "est: no block of this mixed model is a naive Bayes block."
    for name, _, estimates, _ in blocks:
        try:
            _check_cells(estimates, name)
        except ValueError as reason:
            return str(reason)
    return None


def feature_relevance(
    est,
    *,
    prior_inclusion: float = 0.5,
    prob: float = 0.94,
    n_draws: int = 1000,
    top: int | None = None,
    random_seed: int | None = 0,
) -> pd.DataFrame:
    """Every feature's probability of depending on the class, most relevant first.

    Per feature, the log Bayes factor of "its distribution depends on the class" (one
    parameter per class) against "one distribution for all the classes" (the rows pooled),
    both under the fit's prior, exact from the conjugate evidences; for the multinomial the
    word against the rest of the vocabulary (see :mod:`bayesgen.maths.feature_relevance`),
    an approximation that reads as "does this word matter" in any order; feature averaging
    weighs the nodes of the words' Dirichlet tree instead (:mod:`bayesgen.maths.word_tree`);
    for the Dirichlet compound multinomial the words' presence in the documents (an
    approximation: see :func:`_dcm`). P(relevant) = 1 / (1 + (1 − ρ) / ρ · exp(−log BF)).

    Parameters
    ----------
    est : bayesgen naive Bayes estimator
        Fitted: ``BernoulliNB``, ``CategoricalNB``, ``MultinomialNB``, ``GaussianNB``,
        ``PoissonNB``, ``DirichletMultinomialNB`` or a ``NaiveBayes`` (mixed) of such blocks
        (GDA and QDA blocks are left out).
    prior_inclusion : float, default 0.5
        ρ, the prior probability that a feature depends on the class, in (0, 1).
    prob : float, default 0.94
        The mass of the equal-tailed intervals of the effects.
    n_draws : int, default 1000
        Exact posterior draws per cell for the intervals.
    top : int, optional
        Keep the ``top`` most relevant features (the effects are drawn for those only).
    random_seed : int, optional
        Seed of the draws.

    Returns
    -------
    pandas.DataFrame
        One row per feature (per feature and category for a categorical block), sorted by
        log Bayes factor, highest first (the order of P(relevant)): ``block`` (mixed models),
        ``feature``, ``category`` (categorical blocks), ``log_bayes_factor``, ``p_relevant``,
        ``effect_kind`` and, for every class c, ``effect[c]`` (the posterior mean of class c
        against the other classes pooled), ``effect_lower[c]``, ``effect_upper[c]``; for words
        also ``z[c]``, Monroe et al.'s informative-Dirichlet z-score.

    Raises
    ------
    ValueError
        ``prior_inclusion`` outside (0, 1), ``prob`` outside (0, 1), a fit without its
        statistics, a model without per-feature relevance, a hyperprior on λ.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen import BernoulliNB
    >>> from bayesgen.estimators.feature_relevance import feature_relevance
    >>> X = np.array([[1, 0], [1, 1], [1, 0], [0, 1], [0, 0], [0, 1]] * 5)
    >>> y = ["a", "a", "a", "b", "b", "b"] * 5
    >>> est = BernoulliNB(inference="conjugate", compute_map=False).fit(X, y)
    >>> table = feature_relevance(est)
    >>> table["feature"].tolist(), bool(table["p_relevant"].iloc[0] > 0.99)
    (['x0', 'x1'], True)
    """
    fr.check_prior_inclusion(prior_inclusion)
    if not 0.0 < float(prob) < 1.0:
        raise ValueError(f"prob: expected a probability strictly between 0 and 1; got {prob!r}.")
    if top is not None and (int(top) != top or top < 1):
        raise ValueError(f"top: expected None or a whole number ≥ 1; got {top!r}.")
    rng = np.random.default_rng(random_seed)
    blocks = _blocks(est)
    mixed = blocks[0][0] is not None
    frames = []
    for name, family, estimates, _ in blocks:
        if mixed and estimates.attrs.get("model") not in RELEVANCE_CELLS:
            continue  # GDA, QDA: no per-feature relevance
        cells = _cells(family, estimates, name)
        frame = _block_table(cells, estimates, prior_inclusion, prob, n_draws, top, rng)
        if mixed:
            frame.insert(0, "block", name)
        frames.append(frame)
    if not frames:
        raise ValueError("est: no block of this mixed model is a naive Bayes block.")
    table = pd.concat(frames, ignore_index=True)
    table = table.sort_values("log_bayes_factor", ascending=False, kind="stable")
    if top is not None:
        kept = table.drop_duplicates(["block", "feature"] if mixed else ["feature"]).head(top)
        keys = ["block", "feature"] if mixed else ["feature"]
        table = table.merge(kept[keys], on=keys)
    return table.reset_index(drop=True)


def _block_table(cells, estimates, prior_inclusion, prob, n_draws, top, rng) -> pd.DataFrame:
    model = estimates.attrs["model"]
    log_bf = fr.log_bayes_factor(cells)
    order = np.argsort(-log_bf, kind="stable")
    if top is not None:
        order = order[:top]
    effects = cells.subset(order).effects(prob=prob, n_draws=n_draws, rng=rng)
    classes = estimates["class"].values
    features = estimates["feature"].values[order]
    columns = {
        "feature": features,
        "log_bayes_factor": log_bf[order],
        "p_relevant": fr.relevance_probability(log_bf[order], prior_inclusion),
        "effect_kind": EFFECT_KINDS[model],
    }
    if model == "categorical_nb":  # a row per (feature, real category)
        mask = estimates["category_mask"].values[order]
        feature_index, category = np.nonzero(mask)
        columns = {name: _take(value, feature_index) for name, value in columns.items()}
        columns = {
            "feature": columns.pop("feature"),
            "category": estimates["category"].values[category],
            **columns,
        }
        picked = {n: v[:, feature_index, category] for n, v in effects.items()}
    else:
        # Bernoulli cells are (absent, present) and word cells (word, rest): report the first
        # of those that is the feature itself.
        index = {"bernoulli_nb": 1, "dcm_nb": 1, "multinomial_nb": 0}.get(model)
        picked = {n: (v if index is None else v[..., index]) for n, v in effects.items()}
    frame = pd.DataFrame(columns)
    for k, label in enumerate(classes):
        frame[f"effect[{label}]"] = picked["mean"][k]
        frame[f"effect_lower[{label}]"] = picked["lower"][k]
        frame[f"effect_upper[{label}]"] = picked["upper"][k]
    if model == "multinomial_nb":
        word_prior = cells.prior[..., 0]  # the model's α_kw
        z = fr.informative_dirichlet_z(estimates["feature_count"].values, word_prior)[:, order]
        for k, label in enumerate(classes):
            frame[f"z[{label}]"] = z[k]
    return frame


def _take(value, index):
    return value[index] if isinstance(value, np.ndarray) else value


# -- the naive Bayes averaged over all feature subsets ------------------------------------------


def _word_tree(family, estimates: xr.Dataset):
    return WordTreeCells(estimates["feature_count"].values, family.prior_pseudocounts(estimates))


#: model name → a reader of a fit into the cells that averaging over feature subsets sums
#: over: the relevance cells, except for words, whose average is over the nodes of the
#: multinomial written as a Dirichlet tree (:mod:`bayesgen.maths.word_tree`), exact where the
#: word-against-the-rest cells are not.
AVERAGING_CELLS = {
    name: reader for name, (_, reader) in RELEVANCE_CELLS.items() if name != "dcm_nb"
} | {"multinomial_nb": _word_tree}


def _averaging_blocks(est):
    """(cells, columns) of every block, refusing what averaging cannot take."""
    out = []
    for name, family, estimates, columns in _blocks(est):
        _check_cells(estimates, name)
        if estimates.attrs["model"] not in AVERAGING_CELLS:
            where = "" if name is None else f" (block {name!r})"
            raise ValueError(
                f"est: feature averaging needs conjugate blocks{where}; a Dirichlet compound "
                "multinomial's (s, m) have no closed-form evidence per word."
            )
        out.append((AVERAGING_CELLS[estimates.attrs["model"]](family, estimates), columns))
    return out


def average_features_predict_proba(est, X, *, prior_inclusion: float = 0.5) -> np.ndarray:
    """p(y | x, D) of the naive Bayes averaged over all 2^D feature subsets (Dash and Cooper,
    2002): exact, in time linear in D.

    Each feature (for words, each node of the tree) is, a priori independently with
    probability ρ, class-dependent or shared;
    the average of the joint predictive over the subsets is
    p(y = k | D) Π_d [P_d p(x_d | k, D) + (1 − P_d) p(x_d | D)], P_d = P(relevant | D),
    normalised over k (see :mod:`bayesgen.maths.feature_relevance` for the derivation).

    Parameters
    ----------
    est : bayesgen naive Bayes estimator
        Fitted ``BernoulliNB``, ``CategoricalNB``, ``MultinomialNB``, ``GaussianNB``,
        ``PoissonNB`` or mixed ``NaiveBayes`` of such blocks. A multinomial's words share one
        document length, so they are averaged as the nodes of its Dirichlet tree, word j
        against the words after it in the order of the pooled training counts
        (:mod:`bayesgen.maths.word_tree`): with every node class-dependent it is the
        multinomial itself.
    X : array-like of shape (n_samples, n_features)
        Rows with the columns of the fit.
    prior_inclusion : float, default 0.5
        ρ in (0, 1).

    Returns
    -------
    numpy.ndarray of shape (n_samples, n_classes)

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen import BernoulliNB
    >>> from bayesgen.estimators.feature_relevance import average_features_predict_proba
    >>> X = np.array([[1, 0], [1, 1], [1, 0], [0, 1], [0, 0], [0, 1]] * 5)
    >>> y = ["a", "a", "a", "b", "b", "b"] * 5
    >>> est = BernoulliNB(inference="conjugate", compute_map=False).fit(X, y)
    >>> average_features_predict_proba(est, [[1, 1]]).round(3).tolist()
    [[0.914, 0.086]]
    """
    fr.check_prior_inclusion(prior_inclusion)
    blocks = _averaging_blocks(est)
    est._check_n_features(X)
    checked = est.model_.prediction_features(est.closed_form_, X)
    with np.errstate(divide="ignore"):  # class_alpha = 0 and a class without rows
        joint = np.log(est.closed_form_["class_prob"].values)[None, :]
    for cells, columns in blocks:
        rows = checked if columns is None else checked[:, columns]
        joint = joint + fr.averaged_log_likelihood(cells, rows, prior_inclusion)
    return normalize_log_proba(joint)


def average_features_loo_proba(est, *, prior_inclusion: float = 0.5) -> np.ndarray:
    """Exact leave-one-out p(y = k | x_i, D without row i) of the feature-averaged naive
    Bayes (:func:`average_features_predict_proba`): row i leaves the cells, the pooled cells
    and the inclusion probabilities; no refit.

    Parameters
    ----------
    est : fitted naive Bayes estimator
        A conjugate fit that kept its rows (not by ``partial_fit`` or on Dask input).
    prior_inclusion : float, default 0.5
        The prior probability ρ, in (0, 1), that a feature's distribution depends on the
        class, as in :func:`average_features_predict_proba`.

    Returns
    -------
    numpy.ndarray of shape (n_samples, n_classes)

    Raises
    ------
    ValueError
        A fit with ``sample_weight`` (a row of weight w is not one row to leave out), or by
        ``partial_fit`` (which keeps no rows), and what
        :func:`average_features_predict_proba` refuses.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen import BernoulliNB
    >>> from bayesgen.estimators.feature_relevance import average_features_loo_proba
    >>> X = np.array([[1, 0], [1, 1], [1, 0], [0, 1], [0, 0], [0, 1]] * 5)
    >>> y = ["a", "a", "a", "b", "b", "b"] * 5
    >>> est = BernoulliNB(inference="conjugate", compute_map=False).fit(X, y)
    >>> average_features_loo_proba(est).shape
    (30, 2)
    """
    fr.check_prior_inclusion(prior_inclusion)
    blocks = _averaging_blocks(est)
    X, y_codes = est.training_rows()
    if est.training_weights() is not None:
        raise ValueError(
            "est: leave-one-out is not defined for a fit with sample_weight (a row of weight "
            "w counts w times); refit without weights."
        )
    y_codes = np.asarray(y_codes, dtype=np.int64)
    joint = loo_class_log_prob(est.closed_form_, y_codes)
    for cells, columns in blocks:
        rows = X if columns is None else X[:, columns]
        joint = joint + fr.averaged_loo_log_likelihood(cells, rows, y_codes, prior_inclusion)
    return normalize_log_proba(joint)


class FeatureRelevanceMixin:
    """``feature_relevance``, ``average_features_predict_proba`` and
    ``average_features_loo_proba`` as estimator methods (:func:`feature_relevance`,
    :func:`average_features_predict_proba`, :func:`average_features_loo_proba`)."""

    def feature_relevance(self, prior_inclusion: float = 0.5, **options) -> pd.DataFrame:
        """:func:`bayesgen.estimators.feature_relevance.feature_relevance` of this fit.

        Parameters
        ----------
        prior_inclusion : float, default 0.5
            The prior probability ρ, in (0, 1), that a feature's distribution depends on
            the class.
        options : keyword arguments
            Passed on to :func:`~bayesgen.estimators.feature_relevance.feature_relevance`.
        """
        return feature_relevance(self, prior_inclusion=prior_inclusion, **options)

    def average_features_predict_proba(self, X, prior_inclusion: float = 0.5) -> np.ndarray:
        """:func:`bayesgen.estimators.feature_relevance.average_features_predict_proba` of
        this fit.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to classify.
        prior_inclusion : float, default 0.5
            The prior probability ρ, in (0, 1), that a feature's distribution depends on
            the class.
        """
        return average_features_predict_proba(self, X, prior_inclusion=prior_inclusion)

    def average_features_loo_proba(self, prior_inclusion: float = 0.5) -> np.ndarray:
        """:func:`bayesgen.estimators.feature_relevance.average_features_loo_proba` of this
        fit.

        Parameters
        ----------
        prior_inclusion : float, default 0.5
            The prior probability ρ, in (0, 1), that a feature's distribution depends on
            the class.
        """
        return average_features_loo_proba(self, prior_inclusion=prior_inclusion)
