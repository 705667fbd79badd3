"""The Examples sections of the docstrings run, and every public name has one.

Public: exported by ``bayesgen`` (its lazy ``__all__``) or documented on the API page
(``docs/api.md``: its autosummary tables and ``auto...`` directives). Every module of the
package whose name has no ``_`` part has its doctests run here, in a temporary folder
(examples that write files write there) with matplotlib's Agg backend.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import matplotlib
import pytest

import bayesgen

API_PAGE = Path(__file__).resolve().parents[1] / "docs" / "api.md"
OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
# numpydoc's section header, as inspect.getdoc leaves it (indentation removed).
EXAMPLES_HEADER = re.compile(r"^Examples\n-{8,}$", re.MULTILINE)


def public_modules() -> list[str]:
    names = ["bayesgen"]
    for info in pkgutil.walk_packages(bayesgen.__path__, prefix="bayesgen."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


def documented_names() -> list[tuple[str, str]]:
    """(module, name) of every object listed in the API page's autosummary tables (each has a
    page of its own) or rendered by an ``auto...`` directive there, and of every name the
    package exports. Module-level data (``autodata``) needs no example."""
    names = []
    module = None
    in_table = False
    for raw in API_PAGE.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if in_table and raw and not raw.startswith(" "):
            in_table = False  # a table's entries are indented under the directive
        if found := re.match(r"\.\. currentmodule:: (\S+)$", line):
            module = found.group(1)
        elif re.match(r"\.\. autosummary::$", line):
            in_table = True
        elif in_table and line and not line.startswith(":"):
            names.append((module, line.lstrip("~")))
        elif found := re.match(r"\.\. auto(?:function|class|exception):: (\S+)$", line):
            names.append((module, found.group(1)))
    names += [(module, name) for name, module in bayesgen._LAZY.items()]
    return sorted(set(names))


@pytest.mark.parametrize("module_name", public_modules())
def test_docstring_examples_run(module_name, tmp_path, monkeypatch):
    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    module = importlib.import_module(module_name)
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    for test in doctest.DocTestFinder().find(module, module_name):
        runner.run(test)
    import matplotlib.pyplot as plt

    plt.close("all")
    results = runner.summarize(verbose=False)
    assert results.failed == 0, f"{results.failed} of {results.attempted} examples failed"


def test_api_page_lists_the_estimators_and_functions():
    # A parser that found nothing would let the next test pass vacuously.
    names = documented_names()
    assert ("bayesgen.estimators.models", "BernoulliNB") in names
    assert ("bayesgen.closed_form", "add_lambda") in names
    assert ("bayesgen.checks.calibration", "sbc") in names
    assert ("bayesgen.inference.smoothing", "EvidenceBoundaryWarning") in names
    assert ("bayesgen.generative", "TRACE_VARS") not in names  # data, rendered by autodata
    assert len(names) > 100


@pytest.mark.parametrize(("module_name", "name"), documented_names())
def test_public_name_has_an_examples_section(module_name, name):
    obj = getattr(importlib.import_module(module_name), name)
    docstring = inspect.getdoc(obj) or ""
    assert EXAMPLES_HEADER.search(docstring), f"{module_name}.{name} has no Examples section"
