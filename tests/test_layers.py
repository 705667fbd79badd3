"""The layers of issue 21 hold: imports go one way down, and there is no import cycle.

* ``lint-imports`` keeps the contracts of ``pyproject.toml`` (``[tool.importlinter]``): each
  layer imports only itself and the layers below it; maths, input, the model blocks (but for
  their ``*_pymc`` modules) and ``closed_form`` import no PyMC, ArviZ or matplotlib.
* No import cycle inside ``bayesgen``: the module graph, built here from the source with
  :mod:`ast` (imports at module level and inside functions, not those under
  ``if TYPE_CHECKING:``), has no strongly connected component of more than one module.
* An import of a bayesgen module inside a function is rare (fewer than 15), and its line says
  which heavy dependency it puts off loading (PyMC, ArviZ, matplotlib, numba, dask). An import
  deferred only to dodge a cycle has no such reason.
* A fresh interpreter that imports every module of a light layer loads no heavy dependency and
  no bayesgen module above that layer.

That README.md's layout table names every module is checked by ``tests/test_readme.py``.

The graph, the cycle finder and the loader are plain functions, each also run on a small fake
package in ``tmp_path``: every check is seen to fail on a package that breaks its rule and to
pass on one that keeps it.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import textwrap
import tokenize
import tomllib
from collections import deque
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "bayesgen"

#: What the light layers must not load: the heavy dependencies, and Dask, an optional extra.
HEAVY = ("pymc", "pytensor", "arviz", "arviz_base", "arviz_stats", "arviz_plots", "matplotlib")
OPTIONAL = ("dask", "distributed")
#: The only reasons an import of a bayesgen module may sit inside a function.
HEAVY_REASON = re.compile(r"\b(PyMC|ArviZ|matplotlib|numba|dask)\b", re.IGNORECASE)
#: Function-level imports of bayesgen's own modules must number fewer than this.
FUNCTION_LEVEL_LIMIT = 15
SUBPROCESS_TIMEOUT_S = 120


# -- the module graph, from the source ---------------------------------------------------------


@dataclass(frozen=True)
class Import:
    """One module named by one import statement, resolved to an absolute module name."""

    importer: str
    imported: str
    path: Path
    line: int
    end_line: int
    in_function: bool
    #: The file, from the folder that holds the package, and the line: ``bayesgen/cli.py:12``.
    where: str


def package_modules(package_dir: Path) -> dict[str, Path]:
    """Every module of the package in ``package_dir``, by its dotted name, with its file."""
    modules = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = path.relative_to(package_dir.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _ImportStatements(ast.NodeVisitor):
    """The import statements of a module, each with whether it runs inside a function."""

    def __init__(self) -> None:
        self.found: list[tuple[ast.Import | ast.ImportFrom, bool]] = []
        self._function_depth = 0

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._function_depth += 1
        self.generic_visit(node)
        self._function_depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_If(self, node: ast.If) -> None:
        # Names for annotations only: nothing under `if TYPE_CHECKING:` runs.
        for child in node.orelse if _is_type_checking(node.test) else [*node.body, *node.orelse]:
            self.visit(child)

    def visit_Import(self, node: ast.Import) -> None:
        self.found.append((node, self._function_depth > 0))

    visit_ImportFrom = visit_Import


def _base_of_relative(importer: str, is_package: bool, level: int) -> str:
    """The package a ``from`` import with ``level`` leading dots starts from."""
    parts = importer.split(".") if is_package else importer.split(".")[:-1]
    return ".".join(parts[: len(parts) - (level - 1)])


def _named_modules(
    node: ast.Import | ast.ImportFrom, importer: str, is_package: bool, known: set[str]
) -> list[str]:
    """The absolute names of the modules one statement imports (``from m import sub`` names
    ``m.sub`` where that is a module, else ``m``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        base = ".".join(
            filter(None, [_base_of_relative(importer, is_package, node.level), node.module])
        )
    return [
        f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names
    ]


def _nearest_module(name: str, known: set[str]) -> str | None:
    """The deepest module of the package that ``name`` is or lies in, or None if outside."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in known:
            return ".".join(parts[:end])
    return None


@cache
def package_imports(package_dir: Path) -> tuple[Import, ...]:
    """Every import of a module of the package by a module of the package, at any depth (read
    once per folder and session: several checks walk the same graph)."""
    modules = package_modules(package_dir)
    known = set(modules)
    imports = []
    for importer, path in modules.items():
        collector = _ImportStatements()
        collector.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        is_package = path.name == "__init__.py"
        file = path.relative_to(package_dir.parent).as_posix()
        for node, in_function in collector.found:
            for name in _named_modules(node, importer, is_package, known):
                imported = _nearest_module(name, known)
                if imported is not None and imported != importer:
                    imports.append(
                        Import(
                            importer,
                            imported,
                            path,
                            node.lineno,
                            node.end_lineno or node.lineno,
                            in_function,
                            f"{file}:{node.lineno}",
                        )
                    )
    return tuple(imports)


def import_graph(package_dir: Path) -> dict[str, set[str]]:
    """Each module of the package, with the modules of the package it imports."""
    graph: dict[str, set[str]] = {name: set() for name in package_modules(package_dir)}
    for found in package_imports(package_dir):
        graph[found.importer].add(found.imported)
    return graph


def strongly_connected_components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of ``graph``, each sorted (iterative, so a long
    chain of imports cannot exhaust Python's recursion limit)."""
    index: dict[str, int] = {}
    lowlink: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for root in sorted(graph):
        if root in index:
            continue
        index[root] = lowlink[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(sorted(graph[root])))]
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = lowlink[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph.get(successor, ())))))
                    break
                if successor in on_stack:
                    lowlink[node] = min(lowlink[node], index[successor])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    lowlink[parent] = min(lowlink[parent], lowlink[node])
                if lowlink[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or through others: the strongly
    connected components of more than one module, largest first."""
    cycles = [c for c in strongly_connected_components(graph) if len(c) > 1]
    return sorted(cycles, key=lambda c: (-len(c), c))


def shortest_cycle(graph: dict[str, set[str]], start: str) -> list[str]:
    """The shortest chain of imports from ``start`` back to itself (empty if there is none)."""
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for successor in sorted(graph[node]):
            if successor == start:
                chain = [node]
                while chain[-1] != start:
                    chain.append(came_from[chain[-1]])
                return [*reversed(chain), start]
            if successor not in came_from:
                came_from[successor] = node
                queue.append(successor)
    return []


def describe_cycles(package_dir: Path) -> str:
    """Each import cycle of the package: its modules and one chain round it, line by line."""
    imports = package_imports(package_dir)
    graph = import_graph(package_dir)
    first_line = {}
    for found in imports:
        first_line.setdefault((found.importer, found.imported), found)
    lines = []
    for cycle in import_cycles(graph):
        chain = shortest_cycle(graph, cycle[0])
        lines.append(f"{len(cycle)} modules import each other: {', '.join(cycle)}")
        lines.append("  for one, " + " -> ".join(chain) + ":")
        for importer, imported in pairwise(chain):
            lines.append(f"    {first_line[importer, imported].where} imports {imported}")
    return "\n".join(lines)


def _comments(path: Path) -> dict[int, str]:
    """The comments of a source file, by line."""
    with path.open("rb") as source:
        return {
            token.start[0]: token.string
            for token in tokenize.tokenize(source.readline)
            if token.type == tokenize.COMMENT
        }


def function_level_imports(package_dir: Path) -> list[Import]:
    """The imports of the package's own modules inside its functions, one per statement."""
    statements = {}
    for found in package_imports(package_dir):
        if found.in_function:
            statements.setdefault((found.path, found.line), found)
    return list(statements.values())


def without_a_heavy_reason(imports: list[Import]) -> list[Import]:
    """The imports whose statement carries no comment naming a heavy dependency."""
    comments: dict[Path, dict[int, str]] = {}
    missing = []
    for found in imports:
        if found.path not in comments:
            comments[found.path] = _comments(found.path)
        said = [comments[found.path].get(n, "") for n in range(found.line, found.end_line + 1)]
        if not any(HEAVY_REASON.search(comment) for comment in said):
            missing.append(found)
    return missing


# -- what a fresh interpreter loads ---------------------------------------------------------------

#: Imports a package and every module under it (walked with pkgutil), but modules whose name
#: ends with argv[2], and prints, for each module that came into sys.modules on the way, the
#: module whose import brought it in.
LOAD_EVERY_MODULE = """
import importlib, json, pkgutil, sys
package, skipped_suffix = sys.argv[1], sys.argv[2]
loaded_by = {}
pending = [package]
while pending:
    name = pending.pop(0)
    if skipped_suffix and name.endswith(skipped_suffix):
        continue
    before = set(sys.modules)
    module = importlib.import_module(name)
    for new in set(sys.modules) - before:
        loaded_by.setdefault(new, name)
    if hasattr(module, "__path__"):
        pending += sorted(info.name for info in pkgutil.iter_modules(module.__path__, name + "."))
print(json.dumps(loaded_by))
"""


def modules_loaded_by_importing(
    package: str, *, skipped_suffix: str = "", pythonpath: Path | None = None
) -> dict[str, str]:
    """Every module a fresh interpreter loads while importing ``package`` and all its modules,
    each with the module of ``package`` whose import loaded it first."""
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pythonpath), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", LOAD_EVERY_MODULE, package, skipped_suffix],
        capture_output=True,
        text=True,
        cwd=ROOT if pythonpath is None else pythonpath,
        env=env,
        timeout=SUBPROCESS_TIMEOUT_S,
    )
    assert done.returncode == 0, f"importing {package} failed:\n{done.stderr[-3000:]}"
    return json.loads(done.stdout.splitlines()[-1])


@dataclass(frozen=True)
class LightLayer:
    """A layer users import for light work: what it may load of bayesgen, what it skips."""

    package: str
    #: The bayesgen packages it may load: itself and the layers below it.
    may_load: tuple[str, ...]
    #: Its modules that may load PyMC, not imported here.
    skipped_suffix: str = ""


LIGHT_LAYERS = [
    LightLayer("bayesgen.maths", ("bayesgen.maths",)),
    LightLayer("bayesgen.input", ("bayesgen.input", "bayesgen.maths")),
    LightLayer(
        "bayesgen.families",
        ("bayesgen.families", "bayesgen.input", "bayesgen.maths"),
        skipped_suffix="_pymc",
    ),
    LightLayer(
        "bayesgen.closed_form",
        (
            "bayesgen.closed_form",
            "bayesgen.generative",
            "bayesgen.inference",
            "bayesgen.families",
            "bayesgen.input",
            "bayesgen.maths",
        ),
    ),
]


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def layer_breaches(loaded_by: dict[str, str], layer: LightLayer) -> list[str]:
    """What importing ``layer`` loaded that it must not: a heavy or optional dependency, or a
    bayesgen module above it, each with the module that loaded it."""
    root = layer.package.split(".")[0]
    heavy = [m for m in sorted(loaded_by) if m in HEAVY or m in OPTIONAL]
    above = [
        m for m in sorted(loaded_by) if m.startswith(root + ".") and not _within(m, layer.may_load)
    ]
    return [f"{module} (loaded by importing {loaded_by[module]})" for module in heavy + above]


# -- the checks on bayesgen ------------------------------------------------------------------------


def test_lint_imports_keeps_the_layer_contracts():
    lint_imports = Path(sys.executable).parent / "lint-imports"
    assert lint_imports.exists(), "lint-imports is missing: pip install -e '.[test]'"
    done = subprocess.run(
        [str(lint_imports), "--no-cache", "--no-logo"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=SUBPROCESS_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_only_pymc_modules_are_let_import_pymc_among_the_blocks():
    # The contract's exceptions are listed by hand (import-linter has no "*_pymc" wildcard): a
    # line for any other module would let PyMC back into a block that users import light.
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    [blocks] = [
        c
        for c in contracts
        if c.get("source_modules") == ["bayesgen.families"]
        and "pymc" in c.get("forbidden_modules", [])
    ]
    importers = {line.split("->")[0].strip() for line in blocks["ignore_imports"]}
    assert {i for i in importers if not re.fullmatch(r"bayesgen\.families\.\w+_pymc", i)} == set()


def test_no_import_cycle_inside_bayesgen():
    cycles = describe_cycles(PACKAGE)
    assert not cycles, "import cycles inside bayesgen:\n" + cycles


def test_fewer_than_15_imports_of_bayesgen_modules_inside_functions():
    found = function_level_imports(PACKAGE)
    listed = "\n".join(f"  {f.where}: {f.imported}" for f in found)
    assert len(found) < FUNCTION_LEVEL_LIMIT, (
        f"{len(found)} imports of bayesgen modules inside functions "
        f"(fewer than {FUNCTION_LEVEL_LIMIT} allowed):\n{listed}"
    )


def test_each_import_of_a_bayesgen_module_inside_a_function_names_its_heavy_dependency():
    missing = without_a_heavy_reason(function_level_imports(PACKAGE))
    listed = "\n".join(f"  {f.where}: {f.imported}" for f in missing)
    assert not missing, (
        f"{len(missing)} imports of bayesgen modules inside functions give no reason on their "
        "line (a comment naming PyMC, ArviZ, matplotlib, numba or dask, e.g. "
        f"`# heavy: PyMC`); import them at the top of the module:\n{listed}"
    )


@pytest.mark.parametrize("layer", LIGHT_LAYERS, ids=lambda layer: layer.package)
def test_a_light_layer_loads_no_heavy_dependency_and_nothing_above_it(layer):
    loaded_by = modules_loaded_by_importing(layer.package, skipped_suffix=layer.skipped_suffix)
    breaches = layer_breaches(loaded_by, layer)
    assert not breaches, (
        f"importing every module of {layer.package} loaded what it must not:\n  "
        + "\n  ".join(breaches)
    )


# -- the checks on fake packages: each can fail, and pass ---------------------------------------


def write_package(root: Path, files: dict[str, str]) -> Path:
    """A package under ``root`` made of ``files`` (path -> source); returns its folder."""
    for relative, source in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source), encoding="utf-8")
    return root / Path(next(iter(files))).parts[0]


def test_a_cycle_through_relative_and_function_level_imports_is_found(tmp_path):
    package = write_package(
        tmp_path,
        {
            "fake/__init__.py": "",
            "fake/low/__init__.py": "from . import kernels\n",
            "fake/low/kernels.py": (
                "def f():\n    from fake.high.front import g  # reaches up\n    return g\n"
            ),
            "fake/high/__init__.py": "",
            "fake/high/front.py": "from ..low import kernels\n\ndef g():\n    return 1\n",
            "fake/alone.py": "import fake.low.kernels\n",
        },
    )
    assert import_cycles(import_graph(package)) == [["fake.high.front", "fake.low.kernels"]]
    described = describe_cycles(package)
    assert "2 modules import each other: fake.high.front, fake.low.kernels" in described
    assert "fake.high.front -> fake.low.kernels -> fake.high.front" in described
    assert "fake/low/kernels.py:2 imports fake.high.front" in described


def test_imports_under_type_checking_make_no_cycle(tmp_path):
    package = write_package(
        tmp_path,
        {
            "fake/__init__.py": "",
            "fake/a.py": "from fake import b\n",
            "fake/b.py": (
                "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from fake import a\n"
                "else:\n    import json\n"
            ),
        },
    )
    assert import_graph(package) == {"fake": set(), "fake.a": {"fake.b"}, "fake.b": set()}
    assert import_cycles(import_graph(package)) == []
    assert describe_cycles(package) == ""


def test_the_cycle_finder_separates_cycles_and_ignores_chains():
    graph = {
        "a": {"b"},
        "b": {"c"},
        "c": {"a", "d"},
        "d": {"e"},
        "e": {"d"},
        "f": {"a"},
        "g": set(),
    }
    assert import_cycles(graph) == [["a", "b", "c"], ["d", "e"]]
    assert shortest_cycle(graph, "a") == ["a", "b", "c", "a"]
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_function_level_imports_are_counted_and_need_a_heavy_reason(tmp_path):
    package = write_package(
        tmp_path,
        {
            "fake/__init__.py": "",
            "fake/base.py": "X = 1\n",
            "fake/user.py": (
                "import json\n"
                "from fake import base\n\n"
                "def draw():\n"
                "    from fake.base import X  # heavy: PyMC\n"
                "    import numpy  # a third-party import is not counted\n"
                "    return X\n\n"
                "class Model:\n"
                "    def fit(self):\n"
                "        from fake import (  # dodges a cycle\n"
                "            base,\n"
                "        )\n"
                "        return base\n"
            ),
        },
    )
    found = function_level_imports(package)
    assert sorted(f.where for f in found) == ["fake/user.py:11", "fake/user.py:5"]
    assert [f.where for f in without_a_heavy_reason(found)] == ["fake/user.py:11"]


def test_the_loader_names_what_each_import_brought_in_and_what_breaks_the_layer(tmp_path):
    write_package(
        tmp_path,
        {
            "fake/__init__.py": "",
            "fake/low/__init__.py": "",
            "fake/low/light.py": "import json\n",
            "fake/low/reaching_up.py": "import fake.high.top\n",
            "fake/low/model_pymc.py": "import pymc\n",
            "fake/high/__init__.py": "",
            # A stand-in on the fake's path: the real one need not be installed or loaded.
            "fake/high/top.py": "import matplotlib\n",
        },
    )
    (tmp_path / "matplotlib.py").write_text("", encoding="utf-8")
    loaded_by = modules_loaded_by_importing("fake.low", skipped_suffix="_pymc", pythonpath=tmp_path)
    assert loaded_by["fake.low.light"] == "fake.low.light"
    assert loaded_by["fake.high.top"] == "fake.low.reaching_up"
    assert loaded_by["matplotlib"] == "fake.low.reaching_up"
    assert "fake.low.model_pymc" not in loaded_by
    assert "pymc" not in loaded_by
    assert layer_breaches(loaded_by, LightLayer("fake.low", ("fake.low",), "_pymc")) == [
        "matplotlib (loaded by importing fake.low.reaching_up)",
        "fake.high (loaded by importing fake.low.reaching_up)",
        "fake.high.top (loaded by importing fake.low.reaching_up)",
    ]
    assert layer_breaches(loaded_by, LightLayer("fake.low", ("fake.low", "fake.high"))) == [
        "matplotlib (loaded by importing fake.low.reaching_up)",
    ]
    (tmp_path / "fake/low/reaching_up.py").unlink()
    kept = modules_loaded_by_importing("fake.low", skipped_suffix="_pymc", pythonpath=tmp_path)
    assert layer_breaches(kept, LightLayer("fake.low", ("fake.low",), "_pymc")) == []
