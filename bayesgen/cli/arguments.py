"""How the ``bayesgen`` command reads and shows its options: the help layout, and the argparse
types that turn an option's text into a checked value (argparse names the option in their
errors).
"""

from __future__ import annotations

import argparse
import math

from bayesgen.estimators.mixed import BLOCK_ESTIMATORS
from bayesgen.maths.dirichlet import is_concentration
from bayesgen.maths.normal_inverse_gamma import NormalInverseGamma


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Descriptions keep the line breaks they are written with; every option's help ends with
    its default, where it has one (not for flags, whose default is off, nor for options whose
    default depends on the model, which say theirs in words)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default in (None, False) or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


def positive_int(text: str) -> int:
    return number(text, int, "a positive integer", lambda v: v >= 1)


def non_negative_int(text: str) -> int:
    return number(text, int, "an integer >= 0", lambda v: v >= 0)


def positive_float(text: str) -> float:
    return number(text, float, "a finite number > 0", lambda v: math.isfinite(v) and v > 0)


def smoothing(text: str) -> float | str:
    """A λ > 0, or "evidence" (chosen at fit by :mod:`bayesgen.inference.smoothing`)."""
    if text == "evidence":
        return text
    expected = "a finite number > 0 or 'evidence'"
    return number(text, float, expected, is_concentration)


#: What ``--alpha`` takes, for its error messages.
_ALPHA_EXPECTED = (
    "a finite number > 0, 'evidence', 'evidence_per_class' or one λ > 0 per class label "
    "(e.g. spam=0.5,ham=2)"
)


def feature_smoothing(text: str) -> float | str | dict[str, float]:
    """``--alpha``: as :func:`smoothing`, or "evidence_per_class", or one λ > 0 per class
    label as ``label=λ`` pairs separated by commas (their labels are matched against the
    target column at fit, :func:`bayesgen.cli.fit.per_class_alpha`)."""
    if text in ("evidence", "evidence_per_class"):
        return text
    if "=" not in text:
        if "," in text:
            # The old form: numbers in the order of the sorted labels, which an estimator no
            # longer takes (scikit-learn reads an alpha array as one λ per feature).
            raise argparse.ArgumentTypeError(
                f"one λ per class goes with its class label, as in spam=0.5,ham=2; got "
                f"{text!r}, a list of numbers (no longer taken: it gave the λs to the classes "
                "in the sort order of their labels)"
            )
        return number(text, float, _ALPHA_EXPECTED, is_concentration)
    per_class: dict[str, float] = {}
    for part in text.split(","):
        label, sep, value = (piece.strip() for piece in part.rpartition("="))
        if not sep or not label:
            raise argparse.ArgumentTypeError(
                f"expected {_ALPHA_EXPECTED}; got {text!r}: {part.strip()!r} is not label=λ"
            )
        if label in per_class:
            raise argparse.ArgumentTypeError(
                f"expected {_ALPHA_EXPECTED}; got {text!r}: class {label!r} is given twice"
            )
        try:
            per_class[label] = number(value, float, "", is_concentration)
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(
                f"expected {_ALPHA_EXPECTED}; got {text!r}: λ {value!r} of class {label!r} is "
                "not a finite number > 0"
            ) from None
    return per_class


def _is_positive(value: float) -> bool:
    return math.isfinite(value) and value > 0


#: ``--prior``'s fields: the NormalInverseGamma parameter -> (its rule, what the rule says).
_NIG_FIELDS = {
    "mean": (math.isfinite, "a finite number"),
    "kappa": (_is_positive, "a finite number > 0"),
    "shape": (_is_positive, "a finite number > 0"),
    "scale": (_is_positive, "a finite number > 0"),
}
_NIG_EXPECTED = (
    "'evidence' or name=value pairs separated by commas, names among mean, kappa, shape and "
    "scale (e.g. kappa=0.1,shape=2)"
)
_GAMMA_EXPECTED = "'evidence', SHAPE,RATE or shape=SHAPE,rate=RATE, each a finite number > 0"


def normal_inverse_gamma_prior(text: str) -> NormalInverseGamma | str:
    """``--prior`` (gaussian): "evidence", or the fields of the normal–inverse-gamma prior
    (:class:`~bayesgen.maths.normal_inverse_gamma.NormalInverseGamma`) as ``name=value``
    pairs: ``mean`` m₀, ``kappa`` κ₀, ``shape`` a₀, ``scale`` b₀, one number each (the same
    for every feature); a field left out keeps its default (m₀ and b₀ then follow the data).

    Examples
    --------
    >>> normal_inverse_gamma_prior("kappa=0.1, shape=2")
    NormalInverseGamma(mean=None, kappa=0.1, shape=2.0, scale=None)
    """
    if text.strip() == "evidence":
        return "evidence"
    fields = _named_numbers(text, _NIG_FIELDS, _NIG_EXPECTED)
    if not fields:
        raise argparse.ArgumentTypeError(f"expected {_NIG_EXPECTED}; got {text!r}")
    return NormalInverseGamma(**fields)


def gamma_prior(text: str) -> tuple[float, float] | str:
    """``--rate-prior`` (poisson): "evidence", or the Gamma prior's (shape, rate) as
    ``SHAPE,RATE`` or ``shape=SHAPE,rate=RATE``, both > 0 (rate an inverse scale: mean
    shape / rate).

    Examples
    --------
    >>> gamma_prior("2,0.5"), gamma_prior("rate=0.5,shape=2")
    ((2.0, 0.5), (2.0, 0.5))
    """
    if text.strip() == "evidence":
        return "evidence"
    if "=" in text:
        rules = {name: (_is_positive, "a finite number > 0") for name in ("shape", "rate")}
        fields = _named_numbers(text, rules, _GAMMA_EXPECTED)
        if set(fields) != set(rules):
            raise argparse.ArgumentTypeError(
                f"expected {_GAMMA_EXPECTED}; got {text!r}: both shape and rate are needed"
            )
        return fields["shape"], fields["rate"]
    parts = text.split(",")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"expected {_GAMMA_EXPECTED}; got {text!r}")
    shape, rate = (number(part.strip(), float, _GAMMA_EXPECTED, _is_positive) for part in parts)
    return shape, rate


def _named_numbers(text: str, rules: dict, expected: str) -> dict[str, float]:
    """``name=value,...`` as {name: float}, every name among ``rules`` and given once, every
    value keeping its rule; an ArgumentTypeError saying which part is wrong otherwise."""
    fields: dict[str, float] = {}
    for part in text.split(","):
        name, sep, value = (piece.strip() for piece in part.partition("="))
        if not sep or name not in rules:
            raise argparse.ArgumentTypeError(
                f"expected {expected}; got {text!r}: {part.strip()!r} is not name=value with a "
                f"name among {', '.join(rules)}"
            )
        if name in fields:
            raise argparse.ArgumentTypeError(f"expected {expected}; got {text!r}: {name} twice")
        ok, says = rules[name]
        try:
            fields[name] = number(value, float, says, ok)
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(
                f"expected {expected}; got {text!r}: {name} must be {says}, not {value!r}"
            ) from None
    return fields


#: What ``--blocks`` takes, for its help and error messages.
BLOCKS_EXPECTED = (
    "'auto' or blocks separated by ';', each NAME=MODEL:COLUMN[,COLUMN...] (NAME= may be left "
    f"out: the model's name), MODEL one of {', '.join(BLOCK_ESTIMATORS)}"
)


def block_spec(text: str) -> str | list[tuple[str, str, list[str]]]:
    """``--blocks`` (mixed): "auto", or the blocks of :class:`~bayesgen.NaiveBayes` as
    ``NAME=MODEL:COLUMN,COLUMN;NAME=MODEL:COLUMN``: each block a name (left out with its
    ``=``: the model's name), a model of
    :data:`~bayesgen.estimators.mixed.BLOCK_ESTIMATORS` and its columns; every name and
    every column once (a column in two blocks would count its evidence twice). A name or
    column holding ``;``, ``:``, ``,`` or ``=`` cannot be written here. Whether the columns
    are in the data is checked at fit.

    Examples
    --------
    >>> block_spec("size=gaussian:length, depth; categorical:island")
    [('size', 'gaussian', ['length', 'depth']), ('categorical', 'categorical', ['island'])]
    """
    if text.strip() == "auto":
        return "auto"
    blocks: list[tuple[str, str, list[str]]] = []
    placed: dict[str, str] = {}  # column -> its block
    parts = [part.strip() for part in text.split(";") if part.strip()]
    if not parts:
        raise argparse.ArgumentTypeError(f"expected {BLOCKS_EXPECTED}; got {text!r}")
    for part in parts:
        head, colon, listed = (piece.strip() for piece in part.partition(":"))
        name, equals, model = (piece.strip() for piece in head.rpartition("="))
        name = name if equals else model
        columns = [column.strip() for column in listed.split(",")]
        problem = None
        if not colon or not model:
            problem = "is not NAME=MODEL:COLUMN,..."
        elif model not in BLOCK_ESTIMATORS:
            problem = f"has model {model!r}, not one of {', '.join(BLOCK_ESTIMATORS)}"
        elif not name:
            problem = "has an empty NAME"
        elif any(block[0] == name for block in blocks):
            problem = f"reuses the block name {name!r}: give each block its own NAME="
        elif not all(columns):
            problem = "names no column (or an empty one) after its ':'"
        else:
            again = [c for c in columns if c in placed or columns.count(c) > 1]
            if again:
                first = placed.get(again[0], name)
                problem = f"names column {again[0]!r} again (it is in block {first!r})"
        if problem:
            raise argparse.ArgumentTypeError(
                f"block {part!r} {problem}; expected {BLOCKS_EXPECTED}"
            )
        placed.update(dict.fromkeys(columns, name))
        blocks.append((name, model, columns))
    return blocks


def column_models(text: str) -> dict[str, str]:
    """``--override`` (mixed): ``COLUMN=MODEL`` pairs separated by commas, each model one of
    :data:`~bayesgen.estimators.mixed.BLOCK_ESTIMATORS`, for ``auto_blocks(X, overrides=...)``.

    Examples
    --------
    >>> column_models("eggs=categorical, flag=bernoulli")
    {'eggs': 'categorical', 'flag': 'bernoulli'}
    """
    expected = f"COLUMN=MODEL[,COLUMN=MODEL...], MODEL one of {', '.join(BLOCK_ESTIMATORS)}"
    models: dict[str, str] = {}
    for part in text.split(","):
        column, equals, model = (piece.strip() for piece in part.rpartition("="))
        if not equals or not column or model not in BLOCK_ESTIMATORS:
            raise argparse.ArgumentTypeError(
                f"expected {expected}; got {text!r}: {part.strip()!r} is not COLUMN=MODEL"
            )
        if column in models:
            raise argparse.ArgumentTypeError(f"expected {expected}; got {text!r}: {column} twice")
        models[column] = model
    return models


def finite_float(text: str) -> float:
    return number(text, float, "a finite number", math.isfinite)


def probability(text: str) -> float:
    return number(text, float, "a number in (0, 1)", lambda v: 0 < v < 1)


def number(text: str, kind, expected: str, ok):
    """argparse type: ``kind(text)`` when ``ok``; argparse names the option in its error."""
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not ok(value):
        raise argparse.ArgumentTypeError(f"expected {expected}; got {text!r}")
    return value
