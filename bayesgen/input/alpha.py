"""The smoothing λ (``alpha``), the class prior a (``class_alpha``) and the Gamma hyperprior on λ
(``alpha_prior``) as they come: checked here, for every model and every way in (estimators,
closed forms, Dask, model files).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayesgen.input.params import (
    FitMismatch,
    FitRecord,
    Rule,
    is_class_mapping,
    is_real,
)
from bayesgen.maths.dirichlet import is_concentration

__all__ = [
    "ALPHA_PRIOR_EXPECTED",
    "GAMMA_PRIOR_EXPECTED",
    "GammaPrior",
    "check_alpha_prior",
    "check_class_smoothing",
    "check_gamma_prior",
    "check_smoothing",
]


def check_class_smoothing(value, classes, name: str = "alpha") -> float | np.ndarray:
    """The naive Bayes λ: a number >= 0 (one λ for every class), or one λ > 0 per class.

    One λ per class comes as a mapping {class label: λ} (a ``dict``, or a pandas ``Series``
    read by its index, never by position), whose keys must be exactly the classes; or, inside
    bayesgen, as an array in the order of the classes (a fit's ``attrs["alpha"]``).

    Parameters
    ----------
    value : float, mapping or array-like
    classes : array-like or int
        The class labels (the closed form's ``class`` coordinate, ``classes_``); or their
        number, where only a number or an array in class order can come.
    name : str
        The parameter, for the messages.

    Returns
    -------
    float or numpy.ndarray of shape (n_classes,)
        A float, or a new float array in the order of ``classes`` (the caller's array is not
        kept, so that later changes to it do not reach a fit).

    Examples
    --------
    >>> from bayesgen.input.alpha import check_class_smoothing
    >>> check_class_smoothing(1, ["ham", "spam"])
    1.0
    >>> check_class_smoothing({"spam": 2, "ham": 0.5}, ["ham", "spam"]).tolist()
    [0.5, 2.0]
    >>> check_class_smoothing({"ham": 0.5, "eggs": 2}, ["ham", "spam"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: alpha: expected one λ for each class ['ham', 'spam']; missing ['spam'] ...
    >>> check_class_smoothing([0.5, 2, 1], 2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: alpha: expected ... an array of shape (n_classes,) = (2,); got shape (3,).
    """

    labels = None if np.ndim(classes) == 0 else np.asarray(classes)
    n_classes = int(classes) if labels is None else labels.size
    if is_class_mapping(value):
        if labels is None:
            raise TypeError(
                f"{name}: a mapping {{class label: λ}} needs the class labels to be read, and "
                f"only their number ({n_classes}) is known here; got {_short_repr(value)}."
            )
        value = _values_by_class(value, labels, name)
    elif np.ndim(value) == 0:
        return check_smoothing(value, name)
    expected = (
        f"a number >= 0 or one λ > 0 per class, an array of shape (n_classes,) = ({n_classes},)"
    )
    try:
        values = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected {expected}; got {value!r}.") from None
    if values.shape != (n_classes,):
        raise ValueError(f"{name}: expected {expected}; got shape {values.shape}.")
    bad = ~(np.isfinite(values) & (values > 0))
    if np.any(bad):
        # Per class only a proper prior: λ = 0 (the MLE) is one λ for all classes.
        raise ValueError(
            f"{name}: expected {expected} with every value finite and > 0; got "
            f"{values[bad][:5].tolist()}."
        )
    return values


def _values_by_class(mapping, labels: np.ndarray, name: str) -> np.ndarray:
    """The values of ``mapping`` (a dict or a Series, by its index) in the order of
    ``labels``; its keys must be exactly the labels, each value a number > 0."""

    if isinstance(mapping, pd.Series):
        if not mapping.index.is_unique:
            repeated = mapping.index[mapping.index.duplicated()].unique().tolist()
            raise ValueError(f"{name}: a Series with a repeated class label {repeated[:5]}.")
        mapping = dict(zip(mapping.index.tolist(), mapping.tolist(), strict=True))
    wanted = [label.item() if isinstance(label, np.generic) else label for label in labels]
    missing = [label for label in wanted if label not in mapping]
    extra = [key for key in mapping if key not in set(wanted)]
    if missing or extra:
        found = []
        if missing:
            found.append(f"missing {missing[:10]}")
        if extra:
            found.append(f"not classes {extra[:10]}")
        raise ValueError(
            f"{name}: expected one λ for each class {wanted[:10]}; "
            f"{' and '.join(found)} (keys are class labels, as in classes_, and a Series is "
            "read by its index, never by position)."
        )
    values = np.empty(len(wanted), dtype=np.float64)
    for k, label in enumerate(wanted):
        lam = mapping[label]
        if isinstance(lam, bool | np.bool_) or not isinstance(
            lam, int | float | np.integer | np.floating
        ):
            raise TypeError(f"{name}: expected a number > 0 for class {label!r}; got {lam!r}.")
        if not (np.isfinite(lam) and lam > 0):
            raise ValueError(
                f"{name}: expected a finite number > 0 for class {label!r}; got {lam!r}."
            )
        values[k] = lam
    return values


def _short_repr(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_smoothing(value, name: str) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected a non-negative number; got {value!r}.") from None
    if not is_concentration(value, proper=False):
        raise ValueError(f"{name}: expected a finite number >= 0; got {value}.")
    return value


#: What a Gamma prior parameter (``alpha_prior``, ``rate_prior``) may be.
GAMMA_PRIOR_EXPECTED = "None or a pair (shape, rate) of finite numbers > 0"
ALPHA_PRIOR_EXPECTED = GAMMA_PRIOR_EXPECTED


def _gamma_pair_error(value) -> type[Exception] | None:
    """None for a pair (shape, rate) of finite numbers > 0; else the exception class."""
    if not isinstance(value, tuple | list) or not all(is_real(v) for v in value):
        return TypeError
    if len(value) != 2 or not all(np.isfinite(v) and v > 0 for v in value):
        return ValueError
    return None


def check_gamma_prior(value, name: str) -> tuple[float, float] | None:
    """A Gamma prior parameter (``rate_prior``, ``alpha_prior``) as (shape, rate) floats, or
    None (the parameter's default); raises naming ``name`` otherwise.

    Examples
    --------
    >>> from bayesgen.input.alpha import check_gamma_prior
    >>> check_gamma_prior([2, 0.5], "rate_prior"), check_gamma_prior(None, "rate_prior")
    ((2.0, 0.5), None)
    >>> check_gamma_prior((1.0, 0.0), "rate_prior")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: rate_prior: expected None or a pair (shape, rate) of ... > 0; got (1.0, 0.0).
    """
    if value is None:
        return None
    error = _gamma_pair_error(value)
    if error is not None:
        raise error(f"{name}: expected {GAMMA_PRIOR_EXPECTED}; got {value!r}.")
    return float(value[0]), float(value[1])


@dataclass(frozen=True)
class GammaPrior(Rule):
    """The rule of a Gamma prior parameter: None, or (shape, rate) as a pair of finite numbers
    > 0, which a fit records in its closed form's attrs ``{recorded_as}_shape`` and
    ``{recorded_as}_rate``: ``alpha_prior``, λ ~ Gamma (:mod:`bayesgen.families.hyperprior`),
    and the Poisson rates' ``rate_prior`` (:mod:`bayesgen.families.poisson_nb`).

    Examples
    --------
    >>> from bayesgen.input.alpha import GammaPrior
    >>> from bayesgen.input.params import FitRecord
    >>> record = FitRecord(attrs={"alpha_prior_shape": 2.0, "alpha_prior_rate": 1.0})
    >>> GammaPrior("alpha_prior").decode("alpha_prior", [2, 1], record)
    (2.0, 1.0)
    """

    recorded_as: str = "alpha_prior"
    expected = GAMMA_PRIOR_EXPECTED

    def error(self, value) -> type[Exception] | None:
        return None if value is None else _gamma_pair_error(value)

    def decode(self, name: str, stored, record: FitRecord):
        """The (shape, rate) tuple the estimator was given, which must be the prior the closed
        form records; None (the default) as it is."""
        if stored is None:
            return None
        if self.error(stored) is not None:
            raise ValueError(f"{name}: expected {self.expected}; got {stored!r}.")
        value = (float(stored[0]), float(stored[1]))
        prefix = self.recorded_as
        recorded = [record.attrs.get(f"{prefix}_shape"), record.attrs.get(f"{prefix}_rate")]
        if None in recorded:
            raise FitMismatch(None)
        recorded = [float(v) for v in recorded]
        if not np.allclose(recorded, value, rtol=1e-12, atol=0):
            raise FitMismatch(recorded)
        return value


def check_alpha_prior(value) -> tuple[float, float]:
    """``alpha_prior`` as (shape, rate) floats; raises naming ``alpha_prior`` otherwise.

    Examples
    --------
    >>> from bayesgen.input.alpha import check_alpha_prior
    >>> check_alpha_prior([2, 1])
    (2.0, 1.0)
    >>> check_alpha_prior((2, -1))
    Traceback (most recent call last):
        ...
    ValueError: alpha_prior: expected a pair (shape, rate) of finite numbers > 0; got (2, -1).
    """
    error = TypeError if value is None else _gamma_pair_error(value)
    if error is not None:
        raise error(
            f"alpha_prior: expected a pair (shape, rate) of finite numbers > 0; got {value!r}."
        )
    return float(value[0]), float(value[1])
