"""The model layer: one module per model family (its statistics, closed forms, exact
posterior, evidence, exact predictive and leave-one-out, likelihood and simulation, and what the
comparison must check), its PyMC model in a ``*_pymc`` module, and the registry of families by
name (:mod:`bayesgen.families.registry`).

Modules here import :mod:`bayesgen.input` and :mod:`bayesgen.maths`, never the layers above;
PyMC and PyTensor only in the ``*_pymc`` modules (``shared_pymc`` holds their common parts).
"""

from bayesgen.families.base import Family
from bayesgen.families.registry import FAMILIES, family, register

__all__ = ["FAMILIES", "Family", "family", "register"]
