"""Estimator parameters: one rule per parameter and one checker, scikit-learn style.

As in scikit-learn, ``__init__`` only stores its arguments and ``fit`` checks them, so that
every message names the parameter, what it expects and what came. The estimators list their
rules (:data:`INFERENCE_RULES` for the parameters they share, their own beside it); the two
parameters that are about the data, ``binarize`` and ``n_categories``, are checked with the
data (:mod:`bayesgen.input.data` and the families), for the closed forms as well.
"""

from __future__ import annotations

from collections.abc import Mapping
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


class SeedOrGenerator(Seed):
    """A seed, or a ``numpy.random.Generator`` to draw from (where nothing is saved)."""

    expected = "None, an integer >= 0 or a numpy.random.Generator"

    def error(self, value) -> type[Exception] | None:
        return None if isinstance(value, np.random.Generator) else super().error(value)


def check_param(name: str, value, rule) -> None:
    """Raise ``rule``'s error for ``value``, naming ``name``, what was expected and what came.

    Examples
    --------
    >>> from bayesgen.input.params import Real, check_param
    >>> check_param("prob", 0.9, Real(low=0, high=1))
    >>> check_param("prob", "0.9", Real(low=0, high=1))
    Traceback (most recent call last):
        ...
    TypeError: prob: expected a number in (0, 1); got '0.9'.
    """
    error = rule.error(value)
    if error is not None:
        raise error(f"{name}: expected {rule.expected}; got {value!r}.")


def random_generator(random_seed, name: str = "random_seed") -> np.random.Generator:
    """The NumPy Generator of a method's ``random_seed``: None (fresh entropy), an integer
    >= 0, or a Generator (used as it is); anything else is refused naming ``name``.

    Examples
    --------
    >>> from bayesgen.input.params import random_generator
    >>> float(random_generator(0).random()) == float(random_generator(0).random())
    True
    >>> random_generator("x")
    Traceback (most recent call last):
        ...
    TypeError: random_seed: expected None, an integer >= 0 or a numpy.random.Generator; got 'x'.
    """
    check_param(name, random_seed, SeedOrGenerator())
    return np.random.default_rng(random_seed)


def check_probability(value, name: str = "prob") -> None:
    """Refuse ``value`` unless it is a real number in (0, 1), the mass of a credible interval
    (not a string, array or None, whose comparisons would fail in Python's or NumPy's words).

    Examples
    --------
    >>> from bayesgen.input.params import check_probability
    >>> check_probability(0.9)
    >>> check_probability("0.9")
    Traceback (most recent call last):
        ...
    TypeError: prob: expected a probability in (0, 1), a number such as 0.9; got '0.9' (str).
    >>> check_probability(1.5)
    Traceback (most recent call last):
        ...
    ValueError: prob: expected a probability in (0, 1); got 1.5.
    """
    if not is_real(value):
        raise TypeError(
            f"{name}: expected a probability in (0, 1), a number such as 0.9; got {value!r} "
            f"({type(value).__name__})."
        )
    if not 0 < value < 1:  # NaN fails this too
        raise ValueError(f"{name}: expected a probability in (0, 1); got {value!r}.")


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
    :mod:`bayesgen.inference.smoothing`). A string that is not an option is a ValueError, as for
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
class RealOptionOrMapping(RealOrOption):
    """A number under the rule ``number``, one of the strings ``options``, or a mapping
    {class label: λ} (a ``dict`` or a pandas ``Series`` indexed by class label), checked
    against the fitted classes at fit (the naive Bayes ``alpha``).

    A list, tuple or array is refused with :attr:`array_hint`: scikit-learn's naive Bayes reads
    an array ``alpha`` as one λ per feature, so reading it as one λ per class would give the
    same call two meanings (and, with as many features as classes, a silently wrong fit).
    """

    description: str = ""
    array_hint: str = ""

    @property
    def expected(self) -> str:
        return " or ".join([super().expected, self.description])

    def error(self, value) -> type[Exception] | None:
        if is_class_mapping(value):
            return None
        if is_array_like(value):
            return TypeError
        return super().error(value)

    def explain(self, value) -> str:
        """The hint for ``value``: why an array is refused; nothing for other values."""
        return self.array_hint if is_array_like(value) else ""


def is_class_mapping(value) -> bool:
    """Whether ``value`` gives one value per class by label: a mapping or a pandas Series."""
    import pandas as pd

    return isinstance(value, Mapping | pd.Series)


def is_array_like(value) -> bool:
    """A list, tuple, array or other sequence of numbers (not a string, mapping or Series)."""
    if isinstance(value, str | bytes) or is_class_mapping(value):
        return False
    return isinstance(value, list | tuple | np.ndarray) or (
        hasattr(value, "__array__") and np.ndim(value) > 0
    )


PROPER_PRIOR_HINT = (
    "The Bayesian model needs a proper prior; for the maximum-likelihood estimate ({name}=0) "
    "use bayesgen.closed_form.{model}(X, y, {name}=0)."
)
PRIOR_CONCENTRATION = Real(low=0, hint=PROPER_PRIOR_HINT)
#: The naive Bayes ``alpha`` and ``class_alpha``: a concentration, or "evidence" to choose it
#: by maximising the evidence (:mod:`bayesgen.inference.smoothing`).
EVIDENCE = "evidence"
SMOOTHING = RealOrOption(PRIOR_CONCENTRATION, (EVIDENCE,))
#: The naive Bayes ``alpha`` also takes one λ per class, given by class label or chosen by
#: the evidence where it supports them (:mod:`bayesgen.inference.smoothing`).
EVIDENCE_PER_CLASS = "evidence_per_class"
#: Why an array ``alpha`` is refused, and what to give instead.
ALPHA_ARRAY_HINT = (
    "scikit-learn's naive Bayes reads an array alpha as one λ per feature; bayesgen has no "
    "per-feature λ, and reading the array as one λ per class instead would give the same call "
    "two meanings. For one λ per class give a mapping from class label to λ, e.g. "
    "alpha={'ham': 0.5, 'spam': 2.0}, or a pandas Series indexed by the class labels."
)
CLASS_SMOOTHING = RealOptionOrMapping(
    PRIOR_CONCENTRATION,
    (EVIDENCE, EVIDENCE_PER_CLASS),
    "a mapping {class label: λ > 0} (a dict or a pandas Series indexed by the classes)",
    ALPHA_ARRAY_HINT,
)
#: The naive Bayes ``prior_mean`` (:mod:`bayesgen.families.naive_bayes`).
PRIOR_MEAN = OptionOrArray(("uniform", "pooled"), "an array of prior means of feature_prob")
#: Parameters of every estimator; each class adds its own in ``_parameter_rules``. The two
#: that are about the data, ``binarize`` and ``n_categories``, are checked with it
#: (:mod:`bayesgen.input.data`, :mod:`bayesgen.closed_form`), for the closed forms as well.
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
    "progressbar": BoolOrOptions(("auto",)),
}


#: The numpydoc Parameters of every estimator's inference, appended to each class's docstring.
INFERENCE_PARAMS_DOC = """
    inference : {"nuts", "conjugate"}, default "nuts"
        "nuts": PyMC's NUTS on the model of :mod:`bayesgen.generative`. "conjugate": the
        exact conjugate posterior, kept as its parameters (``posterior_``, a
        :class:`bayesgen.inference.conjugate.ConjugatePosterior`: exact means, SDs and intervals);
        its
        exact independent draws (``idata_``) are made on first use (fast; no compilation).
    draws : int, default 1000
        Posterior draws per chain (``draws * chains`` in all).
    tune : int, default 1000
        NUTS tuning (warm-up) steps per chain, discarded; ignored by "conjugate". Fewer than
        200 warn at fit.
    chains : int, default 4
        Independent chains, as PyMC samples by default: R-hat compares them, so a chain stuck
        in another mode shows. For "conjugate" they only lay out the exact independent draws
        as (chain, draw).
    cores : int or None, default None
        Chains NUTS runs in parallel (one process each); None: one per chain up to the number
        of CPUs, so on a 2-core machine the 4 default chains run two at a time (PyMC's own
        default would run them one after another there).
    random_seed : int or None, default None
        Seed (an integer >= 0) of the draws, of NUTS, the prior draws and the exact conjugate
        draws alike; the model file stores it. None draws fresh entropy (a conjugate fit then
        keeps the seed it drew, so a saved model still redraws the same draws). Not a
        ``numpy.random.Generator``, which a model file could not store.
    nuts_sampler : {"pymc", "nutpie", "numpyro", "blackjax"}, default "pymc"
        NUTS implementation, passed to ``pymc.sample`` (explicit, because PyMC's default
        silently becomes nutpie once that is installed).
    target_accept : float, default 0.9
        NUTS's target acceptance rate, in (0, 1): higher takes smaller steps (fewer
        divergences, slower sampling).
    compute_map : bool or "find_map", default True
        Also compute the MAP point (stored as ``map_``): exactly from the closed form wherever
        the prior is conjugate (nothing compiles, after NUTS too), with PyMC's ``find_MAP``
        for a hyperprior on λ or GDA's ``cov_prior="lkj"`` (GDA on standardised features).
        ``"find_map"`` runs ``find_MAP`` on the PyMC model in every case, so that
        :func:`bayesgen.compare` sets the PyMC model's own mode against the closed form.
        ``map_.attrs`` records the method and whether the optimiser converged.
    prior_draws : int, default 500
        Draws from the prior (the ``prior`` group, for prior-vs-posterior plots); 0 skips it.
    dtype : {"float64", "float32"}, default "float64"
        Storage of the draws; "float32" halves memory for large vocabularies.
    progressbar : bool or "auto", default "auto"
        Show a "compiling" line and PyMC's sampling progress bar during a NUTS fit.
        ``"auto"`` shows them when someone is watching (standard error is a terminal, or the
        fit runs in a Jupyter kernel) and keeps scripts, pipes and tests quiet; True always,
        False never. Display only: it changes no draw.
"""
