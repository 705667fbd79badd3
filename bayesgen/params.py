"""Estimator parameters: one rule per parameter and one checker, scikit-learn style.

As in scikit-learn, ``__init__`` only stores its arguments and ``fit`` checks them, so that
every message names the parameter, what it expects and what came. The estimators list their
rules (:data:`INFERENCE_RULES` for the parameters they share, their own beside it); the two
parameters that are about the data, ``binarize`` and ``n_categories``, are checked with the
data (:mod:`bayesgen.data` and the families), for the closed forms as well.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def is_integer(value) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def is_real(value) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)


@dataclass(frozen=True)
class Integer:
    low: int
    allow_none: bool = False

    @property
    def expected(self) -> str:
        return f"an integer >= {self.low}" + (" or None" if self.allow_none else "")

    def error(self, value) -> type[Exception] | None:
        if value is None and self.allow_none:
            return None
        if not is_integer(value):
            return TypeError
        return None if value >= self.low else ValueError


@dataclass(frozen=True)
class Real:
    """A finite number, strictly between ``low`` and ``high`` where they are given.

    ``hint`` is added to the message of an out-of-range value; ``{model}`` and ``{name}`` in it
    become the model's closed-form function and the parameter.
    """

    low: float | None = None
    high: float | None = None
    allow_none: bool = False
    hint: str = ""

    @property
    def expected(self) -> str:
        if self.low is not None and self.high is not None:
            text = f"a number in ({self.low:g}, {self.high:g})"
        elif self.low is not None:
            text = f"a finite number > {self.low:g}"
        else:
            text = "a finite number"
        return text + (" or None" if self.allow_none else "")

    def error(self, value) -> type[Exception] | None:
        if value is None and self.allow_none:
            return None
        if not is_real(value):
            return TypeError
        inside = (self.low is None or value > self.low) and (self.high is None or value < self.high)
        return None if np.isfinite(value) and inside else ValueError


@dataclass(frozen=True)
class BoolOrOptions:
    """True, False or one of the named strings (``compute_map``: ``"find_map"``)."""

    options: tuple[str, ...]

    @property
    def expected(self) -> str:
        return "True, False or " + " or ".join(repr(option) for option in self.options)

    def error(self, value) -> type[Exception] | None:
        if isinstance(value, bool | np.bool_):
            return None
        if not isinstance(value, str):
            return TypeError
        return None if value in self.options else ValueError


@dataclass(frozen=True)
class Options:
    options: tuple[str, ...]

    @property
    def expected(self) -> str:
        quoted = [repr(option) for option in self.options]
        return " or ".join(quoted) if len(quoted) == 2 else "one of " + ", ".join(quoted)

    def error(self, value) -> type[Exception] | None:
        if not isinstance(value, str):
            return TypeError
        return None if value in self.options else ValueError


class Bool:
    expected = "True or False"

    def error(self, value) -> type[Exception] | None:
        return None if isinstance(value, bool | np.bool_) else TypeError


class Seed:
    # A Generator would fit but could not be saved: the model file keeps the seed as JSON so
    # that a loaded model says how its draws were made.
    expected = "None or an integer >= 0 (a seed the model file can store)"

    def error(self, value) -> type[Exception] | None:
        if value is None:
            return None
        if not is_integer(value):
            return TypeError
        return None if value >= 0 else ValueError  # NumPy's seeds are non-negative


@dataclass(frozen=True)
class InstanceOf:
    cls: type
    description: str

    @property
    def expected(self) -> str:
        return f"None or {self.description}"

    def error(self, value) -> type[Exception] | None:
        return None if value is None or isinstance(value, self.cls) else TypeError


@dataclass(frozen=True)
class RealOrOption:
    """A number under the rule ``number``, or one of the strings ``options``.

    The naive Bayes smoothing takes a λ or ``"evidence"`` (λ chosen by the evidence, see
    :mod:`bayesgen.smoothing`). A string that is not an option is a ValueError, as for
    :class:`Options`; ``hint`` is the number's, for numbers out of range.
    """

    number: Real
    options: tuple[str, ...]

    @property
    def hint(self) -> str:
        return self.number.hint

    @property
    def expected(self) -> str:
        return " or ".join([self.number.expected, *(repr(option) for option in self.options)])

    def error(self, value) -> type[Exception] | None:
        if isinstance(value, str):
            return None if value in self.options else ValueError
        return self.number.error(value)


@dataclass(frozen=True)
class OptionOrArray:
    """One of the strings ``options``, or an array-like checked against the data at fit (the
    naive Bayes ``prior_mean``: "uniform", "pooled" or the prior means themselves)."""

    options: tuple[str, ...]
    description: str

    @property
    def expected(self) -> str:
        return " or ".join([*(repr(option) for option in self.options), self.description])

    def error(self, value) -> type[Exception] | None:
        if isinstance(value, str):
            return None if value in self.options else ValueError
        return None if isinstance(value, np.ndarray | list | tuple) else TypeError


@dataclass(frozen=True)
class RealOptionOrArray(RealOrOption):
    """A number under the rule ``number``, one of the strings ``options``, or an array-like
    checked against the data at fit (the naive Bayes ``alpha``: one λ per class)."""

    description: str = ""

    @property
    def expected(self) -> str:
        return " or ".join([super().expected, self.description])

    def error(self, value) -> type[Exception] | None:
        if isinstance(value, np.ndarray | list | tuple) or (
            hasattr(value, "__array__") and np.ndim(value) > 0  # a pandas Series
        ):
            return None
        return super().error(value)


PROPER_PRIOR_HINT = (
    "The Bayesian model needs a proper prior; for the maximum-likelihood estimate ({name}=0) "
    "use bayesgen.closed_form.{model}(X, y, {name}=0)."
)
PRIOR_CONCENTRATION = Real(low=0, hint=PROPER_PRIOR_HINT)
#: The naive Bayes ``alpha`` and ``class_alpha``: a concentration, or "evidence" to choose it
#: by maximising the evidence (:mod:`bayesgen.smoothing`).
EVIDENCE = "evidence"
SMOOTHING = RealOrOption(PRIOR_CONCENTRATION, (EVIDENCE,))
#: The naive Bayes ``alpha`` also takes one λ per class, given or chosen by the evidence
#: where it supports them (:mod:`bayesgen.smoothing`).
EVIDENCE_PER_CLASS = "evidence_per_class"
FEATURE_SMOOTHING = RealOptionOrArray(
    PRIOR_CONCENTRATION, (EVIDENCE, EVIDENCE_PER_CLASS), "an array of one λ > 0 per class"
)
#: The naive Bayes ``prior_mean`` (:mod:`bayesgen.families.naive_bayes`).
PRIOR_MEAN = OptionOrArray(("uniform", "pooled"), "an array of prior means of feature_prob")
#: Parameters of every estimator; each class adds its own in ``_parameter_rules``. The two
#: that are about the data, ``binarize`` and ``n_categories``, are checked with it
#: (:mod:`bayesgen.data`, :mod:`bayesgen.closed_form`), for the closed forms as well.
INFERENCE_RULES = {
    "class_alpha": PRIOR_CONCENTRATION,
    "inference": Options(("nuts", "conjugate")),
    "draws": Integer(1),
    "tune": Integer(0),
    "chains": Integer(1),
    "cores": Integer(1, allow_none=True),
    "random_seed": Seed(),
    "nuts_sampler": Options(("pymc", "nutpie", "numpyro", "blackjax")),
    "target_accept": Real(low=0, high=1),
    # "find_map": PyMC's optimiser on the PyMC model, even where the mode has a closed form.
    "compute_map": BoolOrOptions(("find_map",)),
    "prior_draws": Integer(0),
    # Names only, not np.float32: the model file stores parameters as JSON.
    "dtype": Options(("float64", "float32")),
    "progressbar": Bool(),
}


#: The numpydoc Parameters of every estimator's inference, appended to each class's docstring.
INFERENCE_PARAMS_DOC = """
    inference : {"nuts", "conjugate"}, default "nuts"
        "nuts": PyMC's NUTS on the model of :mod:`bayesgen.generative`. "conjugate": the
        exact conjugate posterior, kept as its parameters (``posterior_``, a
        :class:`bayesgen.posterior.ConjugatePosterior`: exact means, SDs and intervals); its
        exact independent draws (``idata_``) are made on first use (fast; no compilation).
    draws, tune : int, default 1000
        Posterior draws and tuning steps per chain (``tune`` is ignored by "conjugate").
    chains : int, default 2
    cores : int, optional
        Parallel chains for NUTS; default one per chain up to the number of CPUs.
    random_seed : int, optional
    nuts_sampler : str, default "pymc"
        NUTS implementation ("pymc", "nutpie", "numpyro", "blackjax").
    target_accept : float, default 0.9
    compute_map : bool or "find_map", default True
        Also compute the MAP point (stored as ``map_``): exactly from the closed form wherever
        the prior is conjugate (nothing compiles, after NUTS too), with PyMC's ``find_MAP``
        for a hyperprior on λ or GDA's ``cov_prior="lkj"`` (GDA on standardised features).
        ``"find_map"`` runs ``find_MAP`` on the PyMC model in every case, so that
        :func:`bayesgen.compare` sets the PyMC model's own mode against the closed form.
        ``map_.attrs`` records the method and whether the optimiser converged.
    prior_draws : int, default 500
        Draws from the prior (the ``prior`` group, for prior-vs-posterior plots).
    dtype : {"float64", "float32"}, default "float64"
        Storage of the draws; "float32" halves memory for large vocabularies.
    progressbar : bool, default False
"""
