"""scikit-learn estimators holding a posterior: one class per model.

Each class names its model family (:mod:`bayesgen.families`), stores its parameters and sets
its fitted attributes; fitting, prediction and saving are shared
(:class:`bayesgen.estimators.classifier.GenerativeClassifier`).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from bayesgen import closed_form as cf
from bayesgen.estimators.missing_entries import MissingEntriesFit
from bayesgen.estimators.naive_bayes import NaiveBayesClassifier
from bayesgen.families import family
from bayesgen.input.params import INFERENCE_PARAMS_DOC, InstanceOf, Options, Real


class MultinomialNB(NaiveBayesClassifier):
    __doc__ = (
        """Bayesian multinomial (bag-of-words) naive Bayes.

    π ~ Dirichlet(class_alpha), θ_k ~ Dirichlet(alpha) over the vocabulary, and each token of a
    class-k document is a draw from θ_k. The posterior mean of θ is add-λ smoothing with
    λ = alpha; the MAP with alpha = λ + 1 is add-λ too.

    Parameters
    ----------
    alpha : float, "evidence", "evidence_per_class" or mapping, default 1.0
        Dirichlet concentration λ > 0 of the word probabilities. "evidence" chooses λ as the
        maximiser of the evidence p(X | y, λ), θ integrated out (empirical Bayes, see
        :mod:`bayesgen.inference.smoothing`; searched in [1e-6, 1e6], with a warning at a bound),
        and
        fits the posterior at it; ``alpha_`` holds it. A mapping {class label: λ_k} (a
        ``dict``, or a pandas ``Series`` indexed by class label; read by label, never by
        position) gives class k its own λ_k; its keys must be exactly the classes.
        "evidence_per_class" chooses one per class where the evidence supports it (a positive
        log Bayes factor against one λ for all,
        ``closed_form_.attrs["alpha_log_bayes_factor"]``), else the "evidence" λ for every
        class; ``alpha_`` is then an array in the order of ``classes_``. A list or array is
        refused: scikit-learn's naive Bayes reads it as one λ per feature, which bayesgen
        does not offer.
    class_alpha : float or "evidence", default 1.0
        Dirichlet concentration a > 0 of the class probabilities; "evidence" maximises
        p(y | a).
    alpha_prior : (shape, rate) or None, default None
        A Gamma(shape, rate) hyperprior on λ (rate an inverse scale): λ is then learned with
        θ, and ``alpha`` must stay at its default. ``inference="conjugate"`` samples λ exactly
        from its collapsed posterior p(λ | D) by quadrature, then θ | λ; NUTS samples both.
        The posterior gets the variable ``alpha``; see :mod:`bayesgen.families.hyperprior`.
    prior_mean : "uniform", "pooled" or array-like, default "uniform"
        The prior mean m of each class's word distribution: θ_k ~ Dirichlet(λ V m).
        "uniform" (m = 1/V) is add-λ. "pooled" takes the add-½ word frequencies of the
        training set, summed over the classes (the hierarchical Dirichlet of MacKay & Peto,
        1995): a word rare in every class stays rare in a class that has not shown it, and
        with ``alpha="evidence"`` this is far better calibrated on Zipf-distributed text
        (see docs/performance.md, "Learned smoothing"); the evidence compares the two priors
        (:func:`bayesgen.closed_form.log_evidence`). An array of shape (n_features,) gives m.
        ``prior_mean_`` holds the m of the fit."""
        + INFERENCE_PARAMS_DOC
        + """
    Attributes
    ----------
    classes_, n_features_in_, feature_names_in_
        As in scikit-learn.
    idata_ : xarray.DataTree
        posterior, prior, sample_stats (NUTS) and constant_data (the sufficient statistics).
        A conjugate fit draws it on first access (the same draws, seed for seed).
    posterior_ : bayesgen.inference.conjugate.ConjugatePosterior
        Conjugate fits only: the exact posterior as its parameters (means, SDs, intervals
        without draws).
    map_ : xarray.Dataset or None
        The MAP point.
    closed_form_ : xarray.Dataset
        :func:`bayesgen.closed_form.multinomial_nb` for the same data and priors.
    alpha_ : float or ndarray of shape (n_classes,)
        λ of the fit: ``alpha``, or the value the evidence chose; one per class, in the
        order of ``classes_``, where ``alpha`` is a mapping or "evidence_per_class".
    class_alpha_ : float
        a of the fit: ``class_alpha``, or the value the evidence chose.
    prior_mean_ : ndarray
        The prior mean of ``feature_prob`` (without the class axis) of the fit.
    class_count_, feature_count_ : ndarray
    class_log_prior_, feature_log_prob_ : ndarray
        Logs of the posterior means.

    Examples
    --------
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> clf = MultinomialNB(inference="conjugate", compute_map=False, random_seed=0)
    >>> clf.fit(X, ["ham", "ham", "spam", "spam"]).predict([[0, 1, 3]]).tolist()
    ['spam']
    """
    )

    _family = family("multinomial_nb")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True  # counts
        return tags

    def __init__(
        self,
        alpha=1.0,
        class_alpha=1.0,
        *,
        alpha_prior=None,
        prior_mean="uniform",
        inference="nuts",
        draws=1000,
        tune=1000,
        chains=4,
        cores=None,
        random_seed=None,
        nuts_sampler="pymc",
        target_accept=0.9,
        compute_map=True,
        prior_draws=500,
        dtype="float64",
        progressbar="auto",
    ):
        self.alpha = alpha
        self.class_alpha = class_alpha
        self.alpha_prior = alpha_prior
        self.prior_mean = prior_mean
        self.inference = inference
        self.draws = draws
        self.tune = tune
        self.chains = chains
        self.cores = cores
        self.random_seed = random_seed
        self.nuts_sampler = nuts_sampler
        self.target_accept = target_accept
        self.compute_map = compute_map
        self.prior_draws = prior_draws
        self.dtype = dtype
        self.progressbar = progressbar


class BernoulliNB(NaiveBayesClassifier):
    __doc__ = (
        """Bayesian multivariate Bernoulli (set-of-words) naive Bayes.

    π ~ Dirichlet(class_alpha), φ_jk ~ Beta(alpha, alpha), x_j | y = k ~ Bernoulli(φ_jk). The
    posterior mean of φ is (N_jk + λ) / (N_k + 2λ).

    Parameters
    ----------
    alpha : float, "evidence", "evidence_per_class" or mapping, default 1.0
        Beta(λ, λ) prior, λ > 0; "evidence" chooses λ by the evidence, a mapping {class
        label: λ_k} gives each class its own, "evidence_per_class" chooses one per class
        where the evidence supports it, as for :class:`MultinomialNB`.
    class_alpha : float or "evidence", default 1.0
        Dirichlet concentration of the class probabilities, as for :class:`MultinomialNB`.
    alpha_prior : (shape, rate) or None, default None
        A Gamma(shape, rate) hyperprior on λ (rate an inverse scale): λ is then learned with
        θ, and ``alpha`` must stay at its default. ``inference="conjugate"`` samples λ exactly
        from its collapsed posterior p(λ | D) by quadrature, then θ | λ; NUTS samples both.
        The posterior gets the variable ``alpha``; see :mod:`bayesgen.families.hyperprior`.
    prior_mean : "uniform", "pooled" or array-like, default "uniform"
        The prior mean m_j of each feature's probability: φ_jk ~ Beta(2λ m_j, 2λ (1 − m_j)).
        "uniform" (m = ½) is Beta(λ, λ); "pooled" takes the add-½ share of all training rows
        that have feature j; an array of shape (n_features,) in (0, 1) gives m. See
        :class:`MultinomialNB`.
    binarize : float or None, default None
        Threshold mapping X to 0/1 (a missing entry stays missing); None requires 0/1 input."""
        + INFERENCE_PARAMS_DOC
        + """
    Notes
    -----
    The fitted attributes are those of :class:`MultinomialNB`.

    Missing entries (NaN in a dense X, or None / pandas' ``<NA>``) are integrated out under
    missing at random: φ_jk | data ~ Beta(N_jk + λ, n_jk − N_jk + λ) with n_jk the class-k rows
    observed at feature j (``closed_form_["cell_count"]``), and a prediction multiplies the
    factors of a row's observed features only.

    Examples
    --------
    Which words a message contains, from the bundled toy corpus:

    >>> from bayesgen import BernoulliNB
    >>> from bayesgen.input.data import vectorize_text
    >>> from bayesgen.input.datasets import load_toy_spam
    >>> texts, labels = load_toy_spam()
    >>> X, vectorizer = vectorize_text(texts, binary=True)
    >>> clf = BernoulliNB(inference="conjugate", compute_map=False, draws=200, random_seed=0)
    >>> clf.fit(X, labels, feature_names=vectorizer.get_feature_names_out()).classes_.tolist()
    ['ham', 'spam']
    >>> new = vectorizer.transform(["win a free prize now", "see you at lunch tomorrow"])
    >>> clf.predict(new).tolist()
    ['spam', 'ham']
    """
    )

    _family = family("bernoulli_nb")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # a missing entry's factor drops out
        return tags

    def __init__(
        self,
        alpha=1.0,
        class_alpha=1.0,
        *,
        alpha_prior=None,
        prior_mean="uniform",
        binarize=None,
        inference="nuts",
        draws=1000,
        tune=1000,
        chains=4,
        cores=None,
        random_seed=None,
        nuts_sampler="pymc",
        target_accept=0.9,
        compute_map=True,
        prior_draws=500,
        dtype="float64",
        progressbar="auto",
    ):
        self.alpha = alpha
        self.class_alpha = class_alpha
        self.alpha_prior = alpha_prior
        self.prior_mean = prior_mean
        self.binarize = binarize
        self.inference = inference
        self.draws = draws
        self.tune = tune
        self.chains = chains
        self.cores = cores
        self.random_seed = random_seed
        self.nuts_sampler = nuts_sampler
        self.target_accept = target_accept
        self.compute_map = compute_map
        self.prior_draws = prior_draws
        self.dtype = dtype
        self.progressbar = progressbar

    def _data_options(self):
        return {"binarize": self.binarize}


class CategoricalNB(NaiveBayesClassifier):
    __doc__ = (
        """Bayesian categorical naive Bayes for integer-coded categorical features.

    π ~ Dirichlet(class_alpha), θ_kn ~ Dirichlet(alpha) over the K_n categories of feature n.
    ``feature_prob`` has dims (class, feature, category), zero-padded beyond K_n.

    Parameters
    ----------
    alpha : float, "evidence", "evidence_per_class" or mapping, default 1.0
        Dirichlet(λ) prior of each feature's categories, λ > 0; "evidence" chooses λ by the
        evidence, a mapping {class label: λ_k} gives each class its own,
        "evidence_per_class" chooses one per class where the evidence supports it, as for
        :class:`MultinomialNB`.
    class_alpha : float or "evidence", default 1.0
        Dirichlet concentration of the class probabilities, as for :class:`MultinomialNB`.
    alpha_prior : (shape, rate) or None, default None
        A Gamma(shape, rate) hyperprior on λ (rate an inverse scale): λ is then learned with
        θ, and ``alpha`` must stay at its default. ``inference="conjugate"`` samples λ exactly
        from its collapsed posterior p(λ | D) by quadrature, then θ | λ; NUTS samples both.
        The posterior gets the variable ``alpha``; see :mod:`bayesgen.families.hyperprior`.
    prior_mean : "uniform", "pooled" or array-like, default "uniform"
        The prior mean of each feature's category probabilities: Dirichlet(λ K_n m_n).
        "uniform" is add-λ; "pooled" takes the add-½ category frequencies of all training
        rows; an array of shape (n_features, max K_n) gives m (0 in the padding). See
        :class:`MultinomialNB`.
    n_categories : int, array-like or None, default None
        K_n, one for every feature or one per feature; None: each feature's max code + 1.
    handle_unknown : "error" or "ignore", default "error"
        A category code ≥ K_n at prediction (a category the fit did not have), as
        scikit-learn's ``OneHotEncoder`` names it: "error" raises, naming the feature and the
        code; "ignore" treats the entry as missing, so its factor drops out of the likelihood
        (the prediction uses the other features only). Set at fit: the closed form records
        it (``closed_form_.attrs["handle_unknown"]``).

    Missing entries (NaN in a dense X, or None / pandas' ``<NA>``) are integrated out under
    missing at random: each (class, feature) counts the rows observed there
    (``closed_form_["cell_count"]``), and a prediction drops a missing entry's factor."""
        + INFERENCE_PARAMS_DOC
        + """
    Attributes
    ----------
    feature_log_prob_ : list of ndarray
        One (n_classes, K_n) array per feature, as scikit-learn's ``CategoricalNB``.

    Examples
    --------
    Two integer-coded features (say outlook 0-2 and wind 0-1):

    >>> from bayesgen import CategoricalNB
    >>> X = [[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [1, 1]]
    >>> y = ["no", "no", "yes", "yes", "no", "yes"]
    >>> clf = CategoricalNB(inference="conjugate", compute_map=False, draws=200, random_seed=0)
    >>> clf.fit(X, y).n_categories_.tolist()
    [3, 2]
    >>> clf.predict_proba([[1, 0]]).round(2)
    array([[0.19, 0.81]])
    """
    )

    _family = family("categorical_nb")
    _parameter_rules: ClassVar[dict] = {
        **NaiveBayesClassifier._parameter_rules,
        "handle_unknown": Options(("error", "ignore")),
    }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True  # integer codes
        tags.input_tags.positive_only = True
        tags.input_tags.allow_nan = True  # a missing entry's factor drops out
        return tags

    def __init__(
        self,
        alpha=1.0,
        class_alpha=1.0,
        *,
        alpha_prior=None,
        prior_mean="uniform",
        n_categories=None,
        handle_unknown="error",
        inference="nuts",
        draws=1000,
        tune=1000,
        chains=4,
        cores=None,
        random_seed=None,
        nuts_sampler="pymc",
        target_accept=0.9,
        compute_map=True,
        prior_draws=500,
        dtype="float64",
        progressbar="auto",
    ):
        self.alpha = alpha
        self.class_alpha = class_alpha
        self.alpha_prior = alpha_prior
        self.prior_mean = prior_mean
        self.n_categories = n_categories
        self.handle_unknown = handle_unknown
        self.inference = inference
        self.draws = draws
        self.tune = tune
        self.chains = chains
        self.cores = cores
        self.random_seed = random_seed
        self.nuts_sampler = nuts_sampler
        self.target_accept = target_accept
        self.compute_map = compute_map
        self.prior_draws = prior_draws
        self.dtype = dtype
        self.progressbar = progressbar

    def _data_options(self):
        return {"n_categories": self.n_categories}

    def _estimates(self, statistics):
        # The family reads it where it checks the rows to predict (prediction_features);
        # "error", the default, leaves the closed form as it always was.
        estimates = super()._estimates(statistics)
        if self.handle_unknown == "ignore":
            estimates.attrs["handle_unknown"] = "ignore"
        return estimates

    def _set_point_attributes(self, means):
        super()._set_point_attributes(means)
        n_categories = self.closed_form_["n_categories"].values
        self.n_categories_ = n_categories
        self.feature_log_prob_ = [
            self.feature_log_prob_[:, j, :k] for j, k in enumerate(n_categories)
        ]


class GaussianDiscriminantAnalysis(MissingEntriesFit):
    __doc__ = (
        """Bayesian Gaussian discriminant analysis: x | y = k ~ N(μ_k, Σ), one shared Σ.

    Its p(y | x) is a softmax (for two classes a logistic function) of x with θ = Σ⁻¹(μ₁ - μ₀).

    Parameters
    ----------
    class_alpha : float, default 1.0
        Dirichlet concentration of the class probabilities.
    cov_prior : {"conjugate", "lkj"}, default "conjugate"
        "conjugate": normal-inverse-Wishart, whose posterior means are the closed form (and
        which ``inference="conjugate"`` samples exactly). "lkj": an LKJ correlation prior with
        half-normal scales, PyMC's usual recommendation, sampled by NUTS only.
    prior : NormalInverseWishart or None, default None
        Hyperparameters (m₀, κ₀, ν₀, Ψ₀); None: :class:`NormalInverseWishart()`, weak and
        centred on the data (see its docstring). Also sets the scales of the LKJ prior.
    lkj_eta : float, default 2.0
        Shape η > 0 of the LKJ prior on the correlation matrix (``cov_prior="lkj"`` only):
        1 is uniform over correlation matrices, larger values pull towards the identity
        (PyMC's ``LKJCholeskyCov(eta=...)``)."""
        + INFERENCE_PARAMS_DOC
        + """
    Attributes
    ----------
    means_ : ndarray (n_classes, n_features)
    covariance_ : ndarray (n_features, n_features)
    coef_, intercept_ : ndarray
        Posterior means of the linear form; shapes as scikit-learn's
        ``LinearDiscriminantAnalysis`` ((1, n_features) and (1,) for two classes).
    idata_, posterior_
        As in :class:`MultinomialNB`.

    Examples
    --------
    >>> from bayesgen import GaussianDiscriminantAnalysis
    >>> X = [[0.0, 1.0], [1.0, 0.5], [0.5, 0.0], [3.0, 3.5], [4.0, 3.0], [3.5, 4.0]]
    >>> y = ["a", "a", "a", "b", "b", "b"]
    >>> clf = GaussianDiscriminantAnalysis(
    ...     inference="conjugate", compute_map=False, draws=500, random_seed=0
    ... )
    >>> clf.fit(X, y).predict([[0.5, 0.5], [3.0, 3.0]]).tolist()
    ['a', 'b']
    >>> clf.means_.round(1)
    array([[0.5, 0.5],
           [3.5, 3.5]])
    """
    )

    _family = family("gda")
    _parameter_rules: ClassVar[dict] = {
        "cov_prior": Options(("conjugate", "lkj")),
        "prior": InstanceOf(cf.NormalInverseWishart, "a bayesgen.NormalInverseWishart"),
        "lkj_eta": Real(low=0),
    }

    def __init__(
        self,
        class_alpha=1.0,
        *,
        cov_prior="conjugate",
        prior=None,
        lkj_eta=2.0,
        inference="nuts",
        draws=1000,
        tune=1000,
        chains=4,
        cores=None,
        random_seed=None,
        nuts_sampler="pymc",
        target_accept=0.9,
        compute_map=True,
        prior_draws=500,
        dtype="float64",
        progressbar="auto",
    ):
        self.class_alpha = class_alpha
        self.cov_prior = cov_prior
        self.prior = prior
        self.lkj_eta = lkj_eta
        self.inference = inference
        self.draws = draws
        self.tune = tune
        self.chains = chains
        self.cores = cores
        self.random_seed = random_seed
        self.nuts_sampler = nuts_sampler
        self.target_accept = target_accept
        self.compute_map = compute_map
        self.prior_draws = prior_draws
        self.dtype = dtype
        self.progressbar = progressbar

    def _prior_options(self):
        prior = cf.DEFAULT_PRIOR if self.prior is None else self.prior
        return {"class_alpha": self.class_alpha, "prior": prior}

    def _model_options(self):
        return {"cov_prior": self.cov_prior, "lkj_eta": self.lkj_eta}

    def _data_options(self):
        # The draws size the covariances' memory, refused before any work (covariance_memory).
        draws = self.draws * self.chains
        return {"draws": draws, "prior_draws": self.prior_draws, "dtype": self.dtype}

    def _check_conjugate(self):
        if self.cov_prior != "conjugate":
            raise ValueError(
                "inference='conjugate' needs cov_prior='conjugate' (the LKJ prior has no "
                "closed-form posterior); use inference='nuts' for cov_prior='lkj'."
            )

    def _check_missing_entries_nuts(self):
        if self.cov_prior != "conjugate":
            raise ValueError(
                "cov_prior='lkj' with missing entries is not supported: their fit's MAP "
                "(EM) and prior are the normal-inverse-Wishart's; use cov_prior='conjugate'."
            )

    def _set_point_attributes(self, means):
        self.means_ = means["mu"].values
        self.covariance_ = means["cov"].values
        self.coef_ = np.atleast_2d(means["coef"].values)
        self.intercept_ = np.atleast_1d(means["intercept"].values)


class QuadraticDiscriminantAnalysis(MissingEntriesFit):
    __doc__ = (
        """Bayesian quadratic discriminant analysis: x | y = k ~ N(μ_k, Σ_k), one Σ_k per class.

    Each class has its own normal-inverse-Wishart prior Σ_k ~ InverseWishart(ν₀, Ψ₀),
    μ_k | Σ_k ~ N(m₀, Σ_k / κ₀), with the same hyperparameters for every class; p(y | x) is a
    softmax of a quadratic function of x.

    Parameters
    ----------
    class_alpha : float, default 1.0
        Dirichlet concentration of the class probabilities.
    prior : NormalInverseWishart or None, default None
        Hyperparameters (m₀, κ₀, ν₀, Ψ₀) of every class; None:
        :class:`NormalInverseWishart()`, weak and centred on the data (see its docstring)."""
        + INFERENCE_PARAMS_DOC
        + """
    Attributes
    ----------
    means_ : ndarray (n_classes, n_features)
        Posterior means of μ_k.
    covariance_ : ndarray (n_classes, n_features, n_features)
        Posterior means of Σ_k.
    idata_, posterior_
        As in :class:`MultinomialNB`.
    closed_form_ : xarray.Dataset
        :func:`bayesgen.closed_form.qda` for the same data and prior.

    Examples
    --------
    >>> from bayesgen import QuadraticDiscriminantAnalysis
    >>> X = [[0.0, 0.1], [0.3, -0.2], [-0.2, 0.2], [0.1, 0.0],
    ...      [3.0, 2.0], [4.5, 1.0], [2.0, 3.5], [3.5, 3.0]]
    >>> y = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> clf = QuadraticDiscriminantAnalysis(inference="conjugate", compute_map=False,
    ...                                     random_seed=0)
    >>> clf.fit(X, y).predict([[0.0, 0.0], [3.0, 2.5]]).tolist()
    ['a', 'b']
    >>> clf.covariance_.shape
    (2, 2, 2)
    """
    )

    _family = family("qda")
    _parameter_rules: ClassVar[dict] = {
        "prior": InstanceOf(cf.NormalInverseWishart, "a bayesgen.NormalInverseWishart"),
    }

    def __init__(
        self,
        class_alpha=1.0,
        *,
        prior=None,
        inference="nuts",
        draws=1000,
        tune=1000,
        chains=4,
        cores=None,
        random_seed=None,
        nuts_sampler="pymc",
        target_accept=0.9,
        compute_map=True,
        prior_draws=500,
        dtype="float64",
        progressbar="auto",
    ):
        self.class_alpha = class_alpha
        self.prior = prior
        self.inference = inference
        self.draws = draws
        self.tune = tune
        self.chains = chains
        self.cores = cores
        self.random_seed = random_seed
        self.nuts_sampler = nuts_sampler
        self.target_accept = target_accept
        self.compute_map = compute_map
        self.prior_draws = prior_draws
        self.dtype = dtype
        self.progressbar = progressbar

    def _prior_options(self):
        prior = cf.DEFAULT_PRIOR if self.prior is None else self.prior
        return {"class_alpha": self.class_alpha, "prior": prior}

    def _data_options(self):
        # The draws size the covariances' memory, refused before any work (covariance_memory).
        draws = self.draws * self.chains
        return {"draws": draws, "prior_draws": self.prior_draws, "dtype": self.dtype}

    def posterior_predictive_proba(self, X) -> np.ndarray:
        """Exact posterior predictive p(y | x, data): μ_k and Σ_k integrated out, each class a
        multivariate Student-t (:meth:`bayesgen.families.qda.QuadraticFamily.predictive_log_joint`).
        Differs from :meth:`predict_proba`, which averages p(y | x, θ) over posterior draws.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
            Rows with the columns of the fit (the same vectorizer for text).
        """
        self.check_fitted()
        self._check_n_features(X)
        return cf.posterior_predictive_proba(self.closed_form_, X)

    def _set_point_attributes(self, means):
        self.means_ = means["mu"].values
        self.covariance_ = means["cov"].values
