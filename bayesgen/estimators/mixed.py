"""The mixed-column estimator, :class:`NaiveBayes`: one class prior and a block per group of
columns (the model is :mod:`bayesgen.families.mixed`; the columns' encoding
:mod:`bayesgen.input.columns`).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pandas as pd
import xarray as xr
from sklearn.base import clone

from bayesgen.estimators.classifier import GenerativeClassifier
from bayesgen.estimators.dcm import DirichletMultinomialNB
from bayesgen.estimators.feature_relevance import feature_relevance
from bayesgen.estimators.gaussian_nb import GaussianNB
from bayesgen.estimators.hyperparameters import fitted_hyperparameters
from bayesgen.estimators.models import (
    BernoulliNB,
    CategoricalNB,
    GaussianDiscriminantAnalysis,
    MultinomialNB,
    QuadraticDiscriminantAnalysis,
)
from bayesgen.estimators.poisson_nb import PoissonNB
from bayesgen.families import family
from bayesgen.families.block_layout import SEPARATOR
from bayesgen.inference import smoothing
from bayesgen.input import columns as table_columns
from bayesgen.input import distributed
from bayesgen.input.columns import auto_blocks, auto_plan, block_encoding
from bayesgen.input.params import (
    INFERENCE_PARAMS_DOC,
    SMOOTHING,
    FitRecord,
    Rule,
    decode_param,
    encode_param,
)
from bayesgen.maths.likelihood import normalize_log_proba

__all__ = ["BLOCK_ESTIMATORS", "NaiveBayes", "auto_blocks"]

#: A block's model by its name in ``blocks`` (the CLI's names), and the estimator it takes.
BLOCK_ESTIMATORS = {
    "gaussian": GaussianNB,
    "poisson": PoissonNB,
    "bernoulli": BernoulliNB,
    "categorical": CategoricalNB,
    "multinomial": MultinomialNB,
    "gda": GaussianDiscriminantAnalysis,
    "qda": QuadraticDiscriminantAnalysis,
    "dcm": DirichletMultinomialNB,
}
#: The parameters a block's estimator takes from the mixed estimator (its own are ignored).
_SHARED_PARAMS = ("class_alpha", "draws", "chains", "prior_draws", "dtype", "random_seed")
#: Rows of a Dask X that blocks="auto" looks at to propose the blocks.
_DASK_SAMPLE_ROWS = 1000


class BlockPlan(Rule):
    """``blocks``: "auto", or a list of ``(name, model, columns[, vectorizer])`` where model
    is a name of :data:`BLOCK_ESTIMATORS` or an unfitted estimator of one of those classes.

    A model file stores each block's estimator as its model name and its parameters (by
    that estimator's own rules); a vectorizer as its parameters."""

    expected = (
        '"auto" or a list of (name, model, columns[, vectorizer]) tuples, model one of '
        f"{list(BLOCK_ESTIMATORS)} or an estimator of those"
    )

    def error(self, value) -> type[Exception] | None:
        if isinstance(value, str):
            return None if value == "auto" else ValueError
        if not isinstance(value, list | tuple) or not value:
            return TypeError
        names = []
        for spec in value:
            if not isinstance(spec, list | tuple) or len(spec) not in (3, 4):
                return TypeError
            name, model = spec[0], spec[1]
            if not isinstance(name, str) or not name or SEPARATOR in name:
                return ValueError
            if isinstance(model, str):
                if model not in BLOCK_ESTIMATORS:
                    return ValueError
            elif not isinstance(model, tuple(BLOCK_ESTIMATORS.values())):
                return TypeError
            names.append(name)
        return ValueError if len(set(names)) != len(names) else None

    def explain(self, value) -> str:
        if isinstance(value, list | tuple):
            names = [spec[0] for spec in value if isinstance(spec, list | tuple) and spec]
            if len(set(names)) != len(names):
                return "Each block needs its own name."
            if any(isinstance(n, str) and SEPARATOR in n for n in names):
                return f"A block's name may not hold {SEPARATOR!r}."
        return ""

    def encode(self, value, record: FitRecord):
        if isinstance(value, str):
            return value
        stored = []
        for spec in value:
            name, model, columns = spec[0], spec[1], spec[2]
            if isinstance(columns, range | slice):
                raise ValueError(
                    f"blocks: block {name!r} columns {columns!r}: a model file stores a list "
                    "of column positions; give list(...) instead."
                )
            entry = {"name": name, "columns": _plain(columns)}
            if isinstance(model, str):
                entry["model"] = model
            else:
                entry["model"] = _model_name(model)
                rules = type(model).parameter_rules()
                params = model.get_params(deep=False)
                own = _block_record(record, name, params)
                entry["params"] = {
                    key: encode_param(val, rules.get(key), own)
                    for key, val in params.items()
                    if key not in _SHARED_PARAMS
                }
            if len(spec) == 4 and spec[3] is not None:
                vectorizer = spec[3]
                entry["vectorizer"] = (
                    vectorizer if isinstance(vectorizer, dict) else vectorizer.get_params()
                )
            stored.append(entry)
        return stored

    def decode(self, name: str, stored, record: FitRecord):
        if isinstance(stored, str):
            return stored
        if not isinstance(stored, list):
            raise ValueError(f"{name}: expected a list of blocks; got {type(stored).__name__}.")
        blocks = []
        for entry in stored:
            try:
                cls = BLOCK_ESTIMATORS[entry["model"]]
                model = entry["model"]
                if "params" in entry:
                    rules = cls.parameter_rules()
                    own = _block_record(record, entry["name"], entry["params"])
                    model = cls(
                        **{
                            key: decode_param(
                                f"{name}: block {entry['name']!r} {key}", val, rules.get(key), own
                            )
                            for key, val in entry["params"].items()
                        }
                    )
                spec = [entry["name"], model, entry["columns"]]
                if "vectorizer" in entry:
                    spec.append(entry["vectorizer"])
            except (KeyError, TypeError) as error:
                raise ValueError(f"{name}: a stored block is not readable ({error}).") from None
            blocks.append(tuple(spec))
        return blocks


def _block_record(record: FitRecord, block: str, params) -> FitRecord:
    """What one block's parameters are read against: its own attrs of the fit."""
    prefix = f"{block}{SEPARATOR}"
    attrs = {
        key.removeprefix(prefix): value
        for key, value in record.attrs.items()
        if key.startswith(prefix)
    }
    return FitRecord(record.classes, attrs, params)


def _plain(columns):
    if isinstance(columns, str | int | np.integer):
        return columns.item() if isinstance(columns, np.generic) else columns
    return [c.item() if isinstance(c, np.generic) else c for c in columns]


def _model_name(estimator) -> str:
    for name, cls in BLOCK_ESTIMATORS.items():
        if type(estimator) is cls:
            return name
    raise ValueError(f"blocks: {type(estimator).__name__} cannot be a block.")


class NaiveBayes(GenerativeClassifier):
    __doc__ = (
        """Bayesian naive Bayes over a table's mixed columns: one class prior and a block per
    group of columns, each with its own event model.

    p(x, y) = π_y · Π_b p(x_b | y, θ_b): numbers in a Gaussian block, counts in a Poisson block,
    flags in a Bernoulli block, categories (strings or pandas ``category``, encoded inside
    and stored in the model file) in a categorical block, a raw text column in a multinomial
    (bag of words) or Bernoulli (set of words) block with its vectorizer, or numeric columns
    with a full covariance in a GDA/QDA block. The posterior is exact block by block: π's
    Dirichlet times each block's own conjugate posterior, so its evidence, exact predictive
    and exact leave-one-out are the sums of the blocks' (the class term counted once).

    Parameters
    ----------
    blocks : "auto" or list of tuple, default "auto"
        ``(name, model, columns)`` or ``(name, model, column, vectorizer)`` per block, in the
        spirit of scikit-learn's ``ColumnTransformer``:

        * ``name``: the block's name; its variables are ``name::mu``, ``name::feature_prob``…
        * ``model``: "gaussian", "poisson", "bernoulli", "categorical", "multinomial", "gda"
          or "qda", or an unfitted estimator of those classes (:class:`GaussianNB`,
          :class:`MultinomialNB` …) whose prior parameters (``alpha``, ``prior``,
          ``rate_prior``, ``binarize``, ``cov_prior`` …) the block takes; its ``class_alpha``
          and sampling parameters are this estimator's.
        * ``columns``: DataFrame column names, or positions of an array or sparse matrix (a
          list, ``range`` or ``slice``). A multinomial or Bernoulli block given one column
          name of strings is a text block: a ``CountVectorizer`` (``vectorizer``, or its
          parameters as a dict; default ``CountVectorizer()``) turns it into words.

        "auto": :func:`auto_blocks` proposes them from each column's dtype and values
        (:meth:`plan` shows the proposal without fitting).
    class_alpha : float, default 1.0
        Dirichlet concentration of the class probabilities."""
        + INFERENCE_PARAMS_DOC
        + """
    Attributes
    ----------
    classes_, n_features_in_, feature_names_in_, class_count_
        As in scikit-learn (the columns of X at fit).
    blocks_ : list of tuple
        The blocks fitted, ``(name, estimator, columns)``, "auto" resolved.
    closed_form_ : xarray.Dataset
        Every block's statistics and estimates under its name (``size::mu``), the class
        prior's once, and the columns' encodings (``attrs["layout"]``).
    idata_, posterior_, map_
        As in :class:`~bayesgen.MultinomialNB`.

    Examples
    --------
    >>> import pandas as pd
    >>> from bayesgen import NaiveBayes
    >>> table = pd.DataFrame({
    ...     "mass": [3.1, 3.4, 3.0, 4.6, 4.9, 5.1],
    ...     "island": ["Dream", "Dream", "Biscoe", "Biscoe", "Biscoe", "Biscoe"],
    ... })
    >>> y = ["Adelie", "Adelie", "Adelie", "Gentoo", "Gentoo", "Gentoo"]
    >>> clf = NaiveBayes(inference="conjugate", compute_map=False, random_seed=0).fit(table, y)
    >>> [(name, type(model).__name__, columns) for name, model, columns in clf.blocks_]
    [('gaussian', 'GaussianNB', ['mass']), ('categorical', 'CategoricalNB', ['island'])]
    >>> clf.predict(pd.DataFrame({"mass": [3.2, 5.0], "island": ["Dream", "Biscoe"]})).tolist()
    ['Adelie', 'Gentoo']
    >>> sorted(v for v in clf.closed_form_.data_vars if v.startswith("gaussian::"))[:3]
    ['gaussian::class_mean', 'gaussian::mu', 'gaussian::mu_mle']
    """
    )

    _family = family("mixed_nb")
    _parameter_rules: ClassVar[dict] = {"blocks": BlockPlan(), "class_alpha": SMOOTHING}

    def __init__(
        self,
        blocks="auto",
        *,
        class_alpha=1.0,
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
        self.blocks = blocks
        self.class_alpha = class_alpha
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

    # -- the plan ----------------------------------------------------------------------------

    def plan(self, X) -> pd.DataFrame:
        """The block every column goes to, without fitting: one row per column with its
        block, model, encoding and (for ``blocks="auto"``) the reason.

        Examples
        --------
        >>> import pandas as pd
        >>> from bayesgen import NaiveBayes
        >>> NaiveBayes().plan(pd.DataFrame({"mass": [3.1, 4.2], "sex": ["f", "m"]}))
           column        block        model     encoding          reason
        0    mass     gaussian     gaussian      numeric    real numbers
        1     sex  categorical  categorical  categorical  2 distinct values
        """
        self._validate_params()
        table = table_columns.as_table(X)
        reasons = {}
        if isinstance(self.blocks, str):
            reasons = {column: reason for column, _, _, reason in auto_plan(table, {})}
        rows = []
        for spec in self._plan(table):
            for column in table_columns.resolve_columns(table, spec["columns"], name=spec["name"]):
                rows.append(
                    {
                        "column": column,
                        "block": spec["name"],
                        "model": spec["cli_name"],
                        "encoding": spec["encoding"],
                        "reason": reasons.get(column, "given"),
                    }
                )
        return pd.DataFrame(rows)

    def _resolved_blocks(self, table) -> list[tuple]:
        """``blocks`` with "auto" resolved and every model an estimator sharing this one's
        class prior and sampling parameters."""
        blocks = auto_blocks(table) if isinstance(self.blocks, str) else self.blocks
        shared = {name: getattr(self, name) for name in _SHARED_PARAMS}
        resolved = []
        for spec in blocks:
            name, model, columns = spec[0], spec[1], spec[2]
            estimator = BLOCK_ESTIMATORS[model]() if isinstance(model, str) else clone(model)
            estimator.set_params(**shared)
            resolved.append((name, estimator, columns, *spec[3:]))
        return resolved

    def _plan(self, table) -> list[dict]:
        plan = []
        for spec in self._resolved_blocks(table):
            name, estimator, columns = spec[0], spec[1], spec[2]
            cli_name = _model_name(estimator)
            plan.append(
                {
                    "name": name,
                    "cli_name": cli_name,
                    "model": estimator.model_.name,
                    "estimator": estimator,
                    "columns": columns,
                    "encoding": block_encoding(table, cli_name, columns, name=name),
                    "vectorizer": _vectorizer(spec, cli_name),
                    # A category unseen at fit: an error, or missing (CategoricalNB's option).
                    "handle_unknown": getattr(estimator, "handle_unknown", "error"),
                    "data_options": estimator._data_options(),
                }
            )
        return plan

    # -- the fit -----------------------------------------------------------------------------

    def _statistics(self, X, y, *, feature_names=None, sample_weight=None, classes=None):
        layout = getattr(self, "_chunk_layout", None)
        if distributed.has_dask_input(X, y, sample_weight):
            # The encodings are fixed before the chunks are read, from the dtypes (the
            # categories) and, for blocks="auto", the first rows.
            table = _dask_sample(X)
            plan = self._stripped_plan(table)
            if layout is None:
                layout = self._family.learn_layout(table, plan, from_dtypes=True).to_json()
            return distributed.sufficient_statistics(
                self._family,
                X,
                y,
                feature_names=feature_names,
                sample_weight=sample_weight,
                classes=classes,
                plan=plan,
                layout=layout,
            )
        table = table_columns.as_table(X)
        return self._family.sufficient_statistics(
            table,
            y,
            feature_names=feature_names,
            sample_weight=sample_weight,
            classes=classes,
            plan=self._stripped_plan(table),
            layout=layout,
        )

    def _stripped_plan(self, table) -> list[dict]:
        """The plan without its estimators (what the model takes), ``blocks_`` set."""
        plan = self._plan(table)
        self.blocks_ = [(spec["name"], spec["estimator"], spec["columns"]) for spec in plan]
        return [{k: v for k, v in spec.items() if k != "estimator"} for spec in plan]

    def partial_fit(self, X, y, classes=None, sample_weight=None, *, feature_names=None):
        # Later chunks are encoded as the first was (its categories and words).
        fitted = hasattr(self, "closed_form_")
        self._chunk_layout = self.closed_form_.attrs["layout"] if fitted else None
        try:
            return super().partial_fit(
                X, y, classes=classes, sample_weight=sample_weight, feature_names=feature_names
            )
        finally:
            del self._chunk_layout

    partial_fit.__doc__ = GenerativeClassifier.partial_fit.__doc__

    def _estimates(self, statistics: xr.Dataset) -> xr.Dataset:
        """Every block's closed form by its own estimator (its prior, the evidence where it
        asks for it), at this estimator's class prior."""
        estimators = self._block_estimators(statistics)
        if isinstance(self.class_alpha, str):  # "evidence": from the class counts, once
            class_alpha = smoothing.evidence_class_alpha(statistics)
            estimators = {
                name: clone(estimator).set_params(class_alpha=class_alpha)
                for name, estimator in estimators.items()
            }
        parts = {
            block.name: estimators[block.name]._estimates(block.estimates)
            for block in self._family.blocks(statistics)
        }
        return self._family.assemble(statistics, parts)

    def _block_estimators(self, fit: xr.Dataset) -> dict:
        """The estimator of every block of ``fit`` by name: ``blocks_`` where this estimator
        made the fit, else the blocks as given (or their defaults), as a loaded model has them."""
        layout = self._family.layout(fit)
        names = [block.name for block in layout.blocks]
        if hasattr(self, "blocks_") and [b[0] for b in self.blocks_] == names:
            return {name: estimator for name, estimator, _ in self.blocks_}
        return {b.name: self._loaded_block(b.name, b.model) for b in layout.blocks}

    def _build_model(self, stats: xr.Dataset):
        estimators = self._block_estimators(stats)
        options = {name: estimator._model_options() for name, estimator in estimators.items()}
        return self._family.pymc_model(stats, blocks=options)

    def _check_conjugate(self) -> None:
        if isinstance(self.blocks, str):
            return
        for _, estimator, _, *_ in self._resolved_blocks(None):
            estimator._check_conjugate()

    def fitted_hyperparameters(self) -> dict:
        """Every block's fitted hyperparameters (see the base class), as ``blocks`` over the
        encoded columns the model computes with (category codes, word counts): a refit to
        rows simulated from the model (:func:`bayesgen.sbc`) has the same blocks and priors.
        """
        self.check_fitted()
        estimators = self._block_estimators(self.closed_form_)
        frozen = {}
        if isinstance(self.class_alpha, str):
            frozen["class_alpha"] = float(self.closed_form_.attrs["class_alpha"])
        blocks = []
        for block in self._family.blocks(self.closed_form_):
            estimator = estimators[block.name]
            own = fitted_hyperparameters(block.model, block.estimates, estimator.get_params())
            own.pop("class_alpha", None)
            columns = list(range(block.start, block.stop))
            blocks.append((block.name, clone(estimator).set_params(**own), columns))
        frozen["blocks"] = blocks
        return frozen

    def get_params(self, deep=True):
        # The blocks' estimators are parts of one parameter, as in a ColumnTransformer, and
        # are not listed separately (they are cloned at fit).
        return super().get_params(deep=False)

    def _set_fitted_attributes(self) -> None:
        super()._set_fitted_attributes()
        layout = self._family.layout(self.closed_form_)
        columns = self._family.input_columns(self.closed_form_)
        self.n_features_in_ = len(columns)
        if layout.by_name:
            self.feature_names_in_ = np.array(columns, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        if not hasattr(self, "blocks_") or len(self.blocks_) != len(layout.blocks):
            self.blocks_ = [
                (b.name, self._loaded_block(b.name, b.model), b.columns) for b in layout.blocks
            ]

    def _loaded_block(self, name: str, model: str):
        given = {} if isinstance(self.blocks, str) else {s[0]: s[1] for s in self.blocks}
        estimator = given.get(name)
        if estimator is None or isinstance(estimator, str):
            cli = next(k for k, cls in BLOCK_ESTIMATORS.items() if cls()._family.name == model)
            estimator = BLOCK_ESTIMATORS[cli]()
        return clone(estimator).set_params(**{k: getattr(self, k) for k in _SHARED_PARAMS})

    def _set_point_attributes(self, means: xr.Dataset) -> None:
        self.class_prior_ = means["class_prob"].values

    def posterior_predictive_proba(self, X) -> np.ndarray:
        """Exact posterior predictive p(y | x, data): every block's parameters integrated out
        (the sum of the blocks' exact predictive log joints, the class term once)."""
        self.check_fitted()
        self._check_n_features(X)
        checked = self._family.prediction_features(self.closed_form_, X)
        return normalize_log_proba(self._family.predictive_log_joint(self.closed_form_, checked))

    def feature_relevance(self, prior_inclusion: float = 0.5, **options) -> pd.DataFrame:
        """Every naive Bayes block's features by their probability of depending on the class,
        with a ``block`` column (:func:`bayesgen.estimators.feature_relevance.feature_relevance`;
        GDA and QDA blocks are left out)."""
        return feature_relevance(self, prior_inclusion=prior_inclusion, **options)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        # The blocks that take missing entries integrate them out (blocks="auto" on numbers
        # makes a Gaussian one); the others refuse them, naming the block's reason.
        tags.input_tags.allow_nan = True
        return tags


def _dask_sample(X):
    """A Dask X's first rows, with its dtypes (a DataFrame's categories included)."""
    sample = X.head(_DASK_SAMPLE_ROWS, npartitions=-1) if hasattr(X, "head") else None
    if sample is None:  # a dask array: its first row chunk
        sample = X.blocks[0].compute() if X.numblocks[0] else X._meta
        sample = sample.toarray() if hasattr(sample, "toarray") else np.asarray(sample)
    return sample


def _vectorizer(spec: tuple, cli_name: str):
    vectorizer = spec[3] if len(spec) > 3 else None
    if vectorizer is None and cli_name == "bernoulli":
        return {"binary": True}
    return vectorizer
