"""Let a submodule be called like its main function.

``bayesgen.compare`` and ``bayesgen.report`` are both a module and a function. Importing the
submodule binds the module to that name in the package, shadowing the lazily imported function,
so ``bayesgen.report(est, ...)`` would work once and then fail. Making the module callable keeps
both spellings working, whichever is imported first.
"""

from __future__ import annotations

import sys
import types


def make_module_callable(module_name: str, function_name: str) -> None:
    """Make ``sys.modules[module_name](...)`` call its ``function_name``."""

    class _CallableModule(types.ModuleType):
        def __call__(self, *args, **kwargs):
            return getattr(self, function_name)(*args, **kwargs)

    sys.modules[module_name].__class__ = _CallableModule
