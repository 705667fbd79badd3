"""Estimator parameters: one rule per parameter and one checker, scikit-learn style.

As in scikit-learn, ``__init__`` only stores its arguments and ``fit`` checks them, so that
every message names the parameter, what it expects and what came. The estimators list their
rules (:data:`INFERENCE_RULES` for the parameters they share, their own beside it); the two
parameters that are about the data, ``binarize`` and ``n_categories``, are checked with the
data (:mod:`bayesgen.input.data` and the families), for the closed forms as well.

A rule (:class:`Rule`) also says how a model file stores its parameter as JSON and reads it
back (:meth:`Rule.encode`, :meth:`Rule.decode`), so that the model files
(:mod:`bayesgen.io`) store any estimator's parameters without knowing any of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bayesgen.maths.dirichlet import is_concentration


def is_integer(value) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def is_real(value) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)


@dataclass(frozen=True)
class FitRecord:
    """What a fit records besides its parameters: what a stored parameter is read against.

    Attributes
    ----------
    classes : sequence
        The class labels, in the order of the fit (``classes_``).
    attrs : mapping
        The closed form's attributes: the numbers the fit was given or chose (``alpha``,
        ``class_alpha``...).
    params : mapping
        Every parameter as stored (JSON values): one parameter may change what the fit
        records of another (under a hyperprior λ is learned).
    """

    classes: Sequence = ()
    attrs: Mapping = field(default_factory=dict)
    params: Mapping = field(default_factory=dict)


class FitMismatch(ValueError):
    """A stored parameter that is not the one the fit was computed with: ``recorded`` is what
    the fit records instead, as the parameter would be stored."""

    def __init__(self, recorded):
        super().__init__(f"the fit was computed with {recorded!r}")
        self.recorded = recorded


class Rule:
    """What one parameter may be, and how a model file stores it.

    :meth:`error` says whether a value is acceptable and :attr:`expected` what is, for the
    message of :func:`check_param`, the one checker. :meth:`encode` and :meth:`decode` turn
    the value into JSON and back; by default a value is stored as it is.
    """

    expected: str = ""

    def error(self, value) -> type[Exception] | None:
        """None for an acceptable ``value``; else the exception class to raise."""
        raise NotImplementedError

    def encode(self, value, record: FitRecord):
        """``value`` as JSON can store it (NumPy scalars and arrays are left to the writer)."""
        return value

    def decode(self, name: str, stored, record: FitRecord):
        """The value that was stored as ``stored``; raises ValueError where ``stored`` is not
        what this rule stores (the message starts with ``name``), or :class:`FitMismatch`."""
        return stored


@dataclass(frozen=True)
class Integer(Rule):
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
class Real(Rule):
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
class Concentration(Real):
    """A prior concentration, a finite number > 0 (``class_alpha``, the naive Bayes λ), which
    the fit records in its closed form's attrs under the parameter's name.

    Examples
    --------
    >>> from bayesgen.input.params import Concentration, FitRecord
    >>> record = FitRecord(attrs={"class_alpha": 2.0})
    >>> Concentration().decode("class_alpha", 2.0, record)
    2.0
    >>> Concentration().decode("class_alpha", 0.5, record)
    Traceback (most recent call last):
        ...
    bayesgen.input.params.FitMismatch: the fit was computed with 2.0
    """

    low: float | None = 0

    def error(self, value) -> type[Exception] | None:
        if not is_real(value):
            return TypeError
        return None if is_concentration(value) else ValueError

    def decode(self, name: str, stored, record: FitRecord):
        if not is_real(stored) or not stored > 0:  # NaN fails this too
            raise ValueError(f"{name} must be a positive number; got {stored!r}.")
        if not np.isfinite(stored):
            raise ValueError(f"{name} must be finite; got {stored!r}.")
        if name in record.attrs:
            recorded = record.attrs[name]
            try:
                recorded = np.asarray(recorded, dtype=np.float64).tolist()
            except (TypeError, ValueError):
                raise FitMismatch(recorded) from None
            if not (is_real(recorded) and np.isclose(recorded, stored, rtol=1e-12, atol=0)):
                raise FitMismatch(recorded)
        return stored


@dataclass(frozen=True)
class BoolOrOptions(Rule):
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
class Options(Rule):
    options: tuple[str, ...]

    @property
    def expected(self) -> str:
        quoted = [repr(option) for option in self.options]
        return " or ".join(quoted) if len(quoted) == 2 else "one of " + ", ".join(quoted)

    def error(self, value) -> type[Exception] | None:
        if not isinstance(value, str):
            return TypeError
        return None if value in self.options else ValueError


class Bool(Rule):
    expected = "True or False"

    def error(self, value) -> type[Exception] | None:
        return None if isinstance(value, bool | np.bool_) else TypeError


class Seed(Rule):
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


def check_param(name: str, value, rule, *, model: str = "") -> None:
    """Raise ``rule``'s error for ``value``, naming ``name``, what was expected and what came.

    A number out of range gets the rule's ``hint`` (``{model}`` and ``{name}`` in it become
    ``model``, the model's closed-form function, and ``name``); a rule with an ``explain``
    method may explain any value instead (the naive Bayes ``alpha``: why an array is refused).

    Examples
    --------
    >>> from bayesgen.input.params import PRIOR_CONCENTRATION, Real, check_param
    >>> check_param("prob", 0.9, Real(low=0, high=1))
    >>> check_param("prob", "0.9", Real(low=0, high=1))
    Traceback (most recent call last):
        ...
    TypeError: prob: expected a number in (0, 1); got '0.9'.
    >>> check_param("class_alpha", 0, PRIOR_CONCENTRATION, model="gda")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: class_alpha: expected a finite number > 0; got 0. The Bayesian model ... use
    bayesgen.closed_form.gda(X, y, class_alpha=0).
    """
    error = rule.error(value)
    if error is None:
        return
    # The hint is about numbers out of range, not a misspelt option.
    numeric = error is ValueError and not isinstance(value, str)
    hint = getattr(rule, "hint", "") if numeric else ""
    hint = hint.format(model=model, name=name)
    if hasattr(rule, "explain"):
        hint = rule.explain(value) or hint
    raise error(f"{name}: expected {rule.expected}; got {value!r}. {hint}".rstrip())


def encode_param(value, rule, record: FitRecord):
    """``value`` as a model file stores it (JSON), by ``rule``'s :meth:`Rule.encode`; a
    parameter without a rule, or whose rule does not say, is stored as it is.

    Examples
    --------
    >>> from bayesgen.input.params import CLASS_SMOOTHING, FitRecord, encode_param
    >>> encode_param({"spam": 2, "ham": 0.5}, CLASS_SMOOTHING, FitRecord(["ham", "spam"]))
    [0.5, 2.0]
    >>> encode_param(0.5, None, FitRecord())
    0.5
    """
    encode = getattr(rule, "encode", None)
    return value if encode is None else encode(value, record)


def decode_param(name: str, stored, rule, record: FitRecord):
    """The value of parameter ``name`` that a model file stored as ``stored``, by ``rule``'s
    :meth:`Rule.decode`; a parameter without a rule, or whose rule does not say, as it is.

    Raises
    ------
    ValueError
        ``stored`` is not what the rule stores, naming ``name``; or :class:`FitMismatch`.

    Examples
    --------
    >>> from bayesgen.input.params import CLASS_SMOOTHING, FitRecord, decode_param
    >>> record = FitRecord(["ham", "spam"], {"alpha": [0.5, 2.0]})
    >>> decode_param("alpha", [0.5, 2.0], CLASS_SMOOTHING, record)
    {'ham': 0.5, 'spam': 2.0}
    >>> decode_param("alpha", [0.5], CLASS_SMOOTHING, record)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: alpha must be a positive number or a list of 2 finite numbers > 0 ...
    """
    decode = getattr(rule, "decode", None)
    return stored if decode is None else decode(name, stored, record)


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
class InstanceOf(Rule):
    cls: type
    description: str

    @property
    def expected(self) -> str:
        return f"None or {self.description}"

    def error(self, value) -> type[Exception] | None:
        return None if value is None or isinstance(value, self.cls) else TypeError

    def encode(self, value, record: FitRecord):
        # Its fields as given: the closed form holds the values the fit resolved from them.
        return dict(vars(value)) if isinstance(value, self.cls) else value

    def decode(self, name: str, stored, record: FitRecord):
        if not isinstance(stored, dict):
            return stored  # None, or what the checker refuses
        try:
            return self.cls(**stored)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{name}: {error}") from None


@dataclass(frozen=True)
class RealOrOption(Rule):
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

    def decode(self, name: str, stored, record: FitRecord):
        if isinstance(stored, str) and stored in self.options:
            return stored  # the closed form records the number the fit chose
        return self.number.decode(name, stored, record)


@dataclass(frozen=True)
class OptionOrArray(Rule):
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
    #: The parameter that, when given, makes the fit learn this one (a hyperprior): the
    #: closed form then records its posterior mean, not the value given.
    learned_with: str = ""

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

    def encode(self, value, record: FitRecord):
        # A mapping as a list in the order of the classes: JSON keys could not keep the
        # labels' types (1 and "1"); the list's order can.
        if is_class_mapping(value):
            return [float(value[label]) for label in record.classes]
        return value

    def decode(self, name: str, stored, record: FitRecord):
        if isinstance(stored, list):
            return self._decode_per_class(name, stored, record)
        if self.learned_with and record.params.get(self.learned_with) is not None:
            attrs = {key: value for key, value in record.attrs.items() if key != name}
            record = FitRecord(record.classes, attrs, record.params)
        return super().decode(name, stored, record)

    def _decode_per_class(self, name: str, stored: list, record: FitRecord) -> dict:
        """One value per class, stored as a list in the order of the classes: the mapping
        {class label: value} the estimator was given."""
        classes = list(record.classes)
        valid = len(stored) == len(classes) and all(
            is_real(value) and np.isfinite(value) and value > 0 for value in stored
        )
        if not valid:
            raise ValueError(
                f"{name} must be a positive number or a list of {len(classes)} finite "
                f"numbers > 0 (one λ per class); got {stored!r}."
            )
        values = np.array(stored, dtype=np.float64)
        recorded = np.atleast_1d(np.asarray(record.attrs.get(name, np.nan), dtype=np.float64))
        if recorded.shape != values.shape or not np.allclose(recorded, values, rtol=1e-12, atol=0):
            raise FitMismatch(recorded.tolist())
        return dict(zip(classes, values.tolist(), strict=True))


def is_class_mapping(value) -> bool:
    """Whether ``value`` gives one value per class by label: a mapping or a pandas Series."""
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
PRIOR_CONCENTRATION = Concentration(hint=PROPER_PRIOR_HINT)
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
    learned_with="alpha_prior",  # a Gamma hyperprior on λ (bayesgen.families.hyperprior)
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
        Exact draws wherever the prior is conjugate (a hyperprior on λ included: λ, then the
        rest given it), after NUTS too, so nothing compiles for them; PyMC's
        ``sample_prior_predictive`` otherwise (GDA's ``cov_prior="lkj"``, the Dirichlet
        compound multinomial).
    dtype : {"float64", "float32"}, default "float64"
        Storage of the draws; "float32" halves memory for large vocabularies.
    progressbar : bool or "auto", default "auto"
        Show a "compiling" line and PyMC's sampling progress bar during a NUTS fit.
        ``"auto"`` shows them when someone is watching (standard error is a terminal, or the
        fit runs in a Jupyter kernel) and keeps scripts, pipes and tests quiet; True always,
        False never. Display only: it changes no draw.
"""
