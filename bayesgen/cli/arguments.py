"""How the ``bayesgen`` command reads and shows its options: the help layout, and the argparse
types that turn an option's text into a checked value (argparse names the option in their
errors).
"""

from __future__ import annotations

import argparse
import math

from bayesgen.maths.dirichlet import is_concentration


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
