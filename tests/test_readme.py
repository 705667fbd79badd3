"""The README and the docs pages run as written, and print what they show.

Every fenced ```` ```python ```` and ```` ```sh ```` block of ``README.md`` and of ``docs/*.md`` is
run exactly as a reader would copy it, on the bundled data, in a temporary folder that holds a
copy of ``examples/`` and a link to the checkout's ``.venv`` (so nothing is written into the
repository: ``models/``, ``reports/`` and ``pred.csv`` land in the temporary folder):

* the python blocks of a page run in order, in one namespace (a page's snippets continue from
  each other), under the virtual environment's interpreter;
* the sh blocks of a page run in order, in one ``bash -e`` session whose ``PATH`` does *not*
  hold ``.venv/bin``: a page must say how to get the ``bayesgen`` command (``. .venv/bin/activate``)
  or the test fails with ``bayesgen: command not found``, as a reader's shell would;
* a ```` ```text ```` block that follows a code block with nothing but blank lines between is
  what that block prints; it is compared with the printed output as doctest compares (``...``
  matches anything, runs of whitespace are equal), so draws that vary between versions are
  written ``...`` and everything else must match.

Nothing is skipped silently. What does not run is listed below, each with its reason:
``SKIPPED_COMMANDS`` (set-up lines such as ``make demo``: the suite already runs inside the
``.venv`` they create), ``SKIPPED_BLOCKS`` (code fragments that are not programs) and
``SKIPPED_PAGES``. ``SLOW`` lists the blocks that run only in the slow suite (NUTS, with more
than ~30 s of work on a warm compile cache), with those after them on their page. The
default suite runs each page's blocks up to its first slow one; the slow suite runs them all.
``test_skip_lists_name_existing_blocks`` fails when an entry no longer matches anything, so
the lists cannot go stale.
"""

from __future__ import annotations

import doctest
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv"
PAGES = ["README.md", *sorted(f"docs/{path.name}" for path in (ROOT / "docs").glob("*.md"))]
RUN_TIMEOUT_S = 900  # a guard only: no session takes more than a few minutes

#: Shell lines that are not run, matched on the command without its comment.
SKIPPED_COMMANDS = {
    "make demo": "sets up .venv, which this suite runs in, then runs the NUTS demo (minutes)",
    "make test": "would run this test suite inside itself",
    "make test-slow": "would run this test suite inside itself",
    "make test-all": "would run this test suite inside itself",
    "make lint": "ruff runs in CI's lint step, not here",
    "make bench": "a benchmark of minutes; its figures are in docs/performance.md",
    "make docs": "tests/test_docs_render.py builds the site",
}
#: (page, first line of the block) of code blocks that are not run, with why.
SKIPPED_BLOCKS = {
    # Run, it put JAX with CUDA (gigabytes), numpyro and nutpie into the project's .venv from
    # inside the suite: 104 s of a fresh clone's run, and every later test saw JAX installed.
    ("docs/large-models.md", ".venv/bin/pip install numpyro"): (
        "installs optional NUTS back ends into the project's .venv: the suite must not change "
        "the environment it runs in"
    ),
    # Both need the optional back ends the block above installs; tests/test_nuts_backends.py
    # (slow suite) fits through numpyro where it is installed, and says it skips otherwise.
    ("docs/large-models.md", "from bayesgen import MultinomialNB"): (
        "fits with nuts_sampler='numpyro' and 'nutpie', which make test does not install"
    ),
    ("docs/large-models.md", 'est = MultinomialNB(inference="nuts", nuts_sampler="numpyro"'): (
        "fits with nuts_sampler='numpyro', which make test does not install"
    ),
    ("docs/large-models.md", "cd benchmarks"): (
        "NUTS benchmarks for a machine with a GPU and JAX, minutes each; measured and reported "
        "in docs/performance.md"
    ),
}
#: Pages whose blocks are not run.
SKIPPED_PAGES = {
    "docs/performance.md": "benchmark commands of minutes each, measured and reported there",
}
#: (page, first line of the block) of blocks that run only in the slow suite, with why; the
#: blocks after one of these on its page run there too (they continue from it).
SLOW = {
    ("README.md", 'clf = bayesgen.MultinomialNB(alpha=1.0, inference="nuts"'): (
        "NUTS: 54 s on 2 shared cores with a warm compile cache"
    ),
    ("docs/getting-started.md", "import bayesgen"): (
        "NUTS, then a report of the NUTS fit: 36 + 38 s on 2 shared cores, warm cache"
    ),
    (
        "README.md",
        "bayesgen fit multinomial examples/messages.csv --target label --text-column "
        "text --output models/messages-nuts.nc",
    ): "NUTS, then the demo with NUTS (minutes)",
    (
        "README.md",
        "bayesgen fit multinomial examples/messages.csv --target label --text-column text "
        "--inference conjugate",
    ): (
        "the shell session of every command (fits, predict, compare, loo, a report, the mixed "
        "penguins): 37 s on 2 cores; tests/test_cli*.py run each command in the default suite"
    ),
    (
        "docs/getting-started.md",
        "bayesgen fit multinomial examples/messages.csv --target label --text-column text "
        "--inference conjugate --output models/spam.nc",
    ): "fit, compare and a report from the shell: 22 s on 2 cores; tests/test_cli.py has each",
    ("docs/large-models.md", "import dask"): "a Dask LocalCluster starts: 8-30 s on 2 cores",
    ("docs/getting-started.md", "bayesgen demo --inference conjugate"): (
        "every model and its report: minutes on 2 cores"
    ),
}

FENCE = re.compile(
    r"^(?P<fence>`{3,})(?P<info>[^`\n]*)\n(?P<code>.*?)^(?P=fence)[ \t]*$", re.M | re.S
)
OUTPUT_OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@dataclass(frozen=True)
class Block:
    """One fenced block: where it starts, its language, its code, and the output shown below."""

    page: str
    line: int
    language: str
    code: str
    output: str | None = None

    @property
    def first_line(self) -> str:
        return self.code.strip().splitlines()[0] if self.code.strip() else ""


def fenced_blocks(page: str, text: str) -> list[Block]:
    """The code blocks of one Markdown page, each with the ``text`` block that follows it."""
    found: list[tuple[int, int, str, str]] = []
    for match in FENCE.finditer(text):
        found.append((match.start(), match.end(), match["info"].strip(), match["code"]))
    blocks = []
    for i, (_, end, language, code) in enumerate(found):
        if language not in ("python", "sh"):
            continue
        output = None
        if i + 1 < len(found):
            start_next, _, next_language, next_code = found[i + 1]
            if next_language == "text" and not text[end:start_next].strip():
                output = next_code
        line = text.count("\n", 0, found[i][0]) + 1
        blocks.append(Block(page, line, language, code, output))
    return blocks


def page_blocks(page: str) -> list[Block]:
    return fenced_blocks(page, (ROOT / page).read_text(encoding="utf-8"))


def command_of(line: str) -> str:
    """A shell line without its trailing comment and surrounding spaces."""
    return line.split("#", 1)[0].strip()


def named_by(block: Block, table: dict) -> str | None:
    """The key of ``table`` (``SKIPPED_BLOCKS`` or ``SLOW``) that names ``block``, if any."""
    return next(
        (key for page, key in table if page == block.page and block.first_line.startswith(key)),
        None,
    )


def session_blocks(page: str, language: str, *, slow: bool) -> list[Block]:
    """The blocks one session runs: all that are not skipped, or those before the first slow one."""
    blocks = [b for b in page_blocks(page) if b.language == language]
    blocks = [b for b in blocks if named_by(b, SKIPPED_BLOCKS) is None]
    if slow:
        return blocks
    first_slow = next((i for i, b in enumerate(blocks) if named_by(b, SLOW)), len(blocks))
    return blocks[:first_slow]


def sessions() -> list:
    """One pytest parameter per (page, language) with blocks to run; a second, marked slow and
    running every block in order, where some blocks are slow."""
    params = []
    for page in PAGES:
        if page in SKIPPED_PAGES:
            continue
        for language in ("python", "sh"):
            fast = session_blocks(page, language, slow=False)
            every = session_blocks(page, language, slow=True)
            if fast:
                params.append(pytest.param(page, language, False, id=f"{page}-{language}"))
            if len(every) > len(fast):
                params.append(
                    pytest.param(
                        page, language, True, marks=pytest.mark.slow, id=f"{page}-{language}-slow"
                    )
                )
    return params


# -- Running a session ---------------------------------------------------------------------------

PYTHON_RUNNER = textwrap.dedent(
    """
    import contextlib, io, json, linecache, sys, time, traceback


    def main(blocks_path, results_path):
        blocks = json.load(open(blocks_path, encoding="utf-8"))
        namespace = {"__name__": "__main__"}
        results = []
        for block in blocks:
            printed, error, start = io.StringIO(), None, time.perf_counter()
            # Tracebacks then show the block's own lines.
            lines = block["code"].splitlines(keepends=True)
            linecache.cache[block["where"]] = (len(block["code"]), None, lines, block["where"])
            try:
                code = compile(block["code"], block["where"], "exec")
                with contextlib.redirect_stdout(printed):
                    exec(code, namespace)
            except BaseException:
                error = traceback.format_exc()
            seconds = time.perf_counter() - start
            results.append({"printed": printed.getvalue(), "error": error, "seconds": seconds})
            if error:
                break
        json.dump(results, open(results_path, "w", encoding="utf-8"))


    # Guarded: a Dask or multiprocessing worker started by spawning imports this file again.
    if __name__ == "__main__":
        main(*sys.argv[1:])
    """
)
BLOCK_MARK = "@@ bayesgen test_readme block {} @@"


@pytest.fixture
def workdir(tmp_path) -> Path:
    """A folder laid out like the checkout for what the pages use: examples/ and .venv."""
    if not (VENV / "bin" / "python").exists():
        pytest.skip("needs the project's .venv (make test creates it)")
    shutil.copytree(
        ROOT / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("__pycache__")
    )
    (tmp_path / ".venv").symlink_to(VENV, target_is_directory=True)
    return tmp_path


def environment() -> dict[str, str]:
    """The caller's environment without the virtual environment on PATH (see the docstring)."""
    env = dict(os.environ, MPLBACKEND="Agg")
    env.pop("VIRTUAL_ENV", None)
    venv_bins = {str(VENV / "bin"), str(VENV.resolve() / "bin"), str(Path(sys.prefix) / "bin")}
    path = [entry for entry in env.get("PATH", "").split(os.pathsep) if entry not in venv_bins]
    env["PATH"] = os.pathsep.join(path or ["/usr/bin", "/bin"])
    return env


def run_python(blocks: list[Block], cwd: Path) -> list[dict]:
    """Run the blocks in one interpreter; each block's printed output, or its traceback."""
    (cwd / "blocks.json").write_text(
        json.dumps([{"code": b.code, "where": f"{b.page}:{b.line}"} for b in blocks]), "utf-8"
    )
    (cwd / "runner.py").write_text(PYTHON_RUNNER, "utf-8")
    completed = subprocess.run(
        [str(VENV / "bin" / "python"), "runner.py", "blocks.json", "results.json"],
        cwd=cwd,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )
    results_path = cwd / "results.json"
    if not results_path.exists():
        pytest.fail(
            f"the python runner died (status {completed.returncode}):\n{completed.stderr[-4000:]}"
        )
    return json.loads(results_path.read_text("utf-8"))


def shell_script(blocks: list[Block]) -> tuple[str, list[str]]:
    """The blocks as one script, each preceded by its mark; and the lines skipped."""
    lines, skipped = ["set -o pipefail", "PS4='+ $ '", "set -x"], []
    for i, block in enumerate(blocks):
        lines.append(f"echo '{BLOCK_MARK.format(i)}'")
        for line in block.code.splitlines():
            if command_of(line) in SKIPPED_COMMANDS:
                skipped.append(command_of(line))
                lines.append(f": skipped {command_of(line)!r}")
            else:
                lines.append(line)
    return "\n".join(lines) + "\n", skipped


def run_shell(blocks: list[Block], cwd: Path) -> tuple[list[str], subprocess.CompletedProcess]:
    """Run the blocks in one ``bash -e``; the standard output of each block that ran."""
    script, _ = shell_script(blocks)
    (cwd / "blocks.sh").write_text(script, "utf-8")
    completed = subprocess.run(
        ["bash", "--noprofile", "--norc", "-e", "blocks.sh"],
        cwd=cwd,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )
    parts = re.split(
        r"^" + re.escape(BLOCK_MARK).replace(r"\{\}", r"\d+") + r"\n", completed.stdout, flags=re.M
    )
    return parts[1:], completed


def output_differs(want: str, got: str) -> str | None:
    """doctest's report of how ``got`` differs from ``want``, or None when they match."""
    checker = doctest.OutputChecker()
    if checker.check_output(want, got, OUTPUT_OPTIONS):
        return None
    example = doctest.Example("", want)
    return checker.output_difference(example, got, OUTPUT_OPTIONS)


# -- The tests -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("page", "language", "slow"), sessions())
def test_page_runs_as_written(page, language, slow, workdir):
    blocks = session_blocks(page, language, slow=slow)
    if language == "python":
        results = run_python(blocks, workdir)
        printed = [result["printed"] for result in results]
        for block, result in zip(blocks, results, strict=False):
            print(f"{page}:{block.line} ran in {result['seconds']:.1f} s")
        errors = [(b, r["error"]) for b, r in zip(blocks, results, strict=False) if r["error"]]
        assert not errors, f"{page}:{errors[0][0].line} failed:\n{errors[0][1]}"
    else:
        printed, completed = run_shell(blocks, workdir)
        # The trace of the commands without that of scripts they source (the activation).
        trace = "\n".join(line for line in completed.stderr.splitlines() if line[:2] != "++")
        assert completed.returncode == 0, (
            f"{page}: block {len(printed)} of {len(blocks)} (line {blocks[len(printed) - 1].line}) "
            f"exited {completed.returncode}:\n{trace[-4000:]}"
        )
    assert len(printed) == len(blocks)
    differences = {
        f"{page}:{block.line}": difference
        for block, got in zip(blocks, printed, strict=True)
        if block.output is not None and (difference := output_differs(block.output, got))
    }
    assert not differences, "\n".join(f"{where}:\n{diff}" for where, diff in differences.items())


def test_readme_tells_a_new_shell_where_bayesgen_is():
    # The commands run in a shell of their own, as a reader's would: the README's first shell
    # block must put .venv/bin on PATH, or every later `bayesgen ...` is "command not found".
    first = next(b for b in page_blocks("README.md") if b.language == "sh")
    commands = [command_of(line) for line in first.code.splitlines()]
    assert ". .venv/bin/activate" in commands or "source .venv/bin/activate" in commands


def layout_modules(readme: str) -> set[str]:
    """The package's modules that the README's layout table names, as paths under bayesgen/.

    A row's first cell starts with its folder (``bayesgen/`` or ``bayesgen/families/``); the
    other file names in the row are in that folder.
    """
    named = set()
    section = readme.split("## Layout", 1)[1].split("\n## ", 1)[0]
    for row in section.splitlines():
        first = re.match(r"\| `bayesgen/(\w+/)?", row)
        if not first:
            continue
        folder = first.group(1) or ""
        for path in re.findall(r"`([\w/]+\.py)`", row):
            # A path under bayesgen/ is whole; a bare name is in the row's folder.
            named.add(path.removeprefix("bayesgen/") if "/" in path else folder + path)
    return named


def test_readme_layout_names_every_module_and_only_those():
    package = ROOT / "bayesgen"
    modules = {
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if path.relative_to(package).as_posix() != "__init__.py"
    }
    assert layout_modules((ROOT / "README.md").read_text("utf-8")) == modules


def test_layout_modules_reads_folders_and_names():
    readme = (
        "## Layout\n| path | what |\n|---|---|\n"
        "| `bayesgen/families/` | `gda.py` and `__init__.py` |\n"
        "| `bayesgen/inference/`, `bayesgen/closed_form.py` | `sampling.py`; the front end |\n"
        "| `bayesgen/cli.py` | the command |\n| `models/` | data |\n"
        "## Tests\n| `bayesgen/x.py` |\n"
    )
    assert layout_modules(readme) == {
        "families/gda.py",
        "families/__init__.py",
        "inference/sampling.py",
        "closed_form.py",
        "cli.py",
    }


def test_skip_lists_name_existing_blocks():
    blocks = [b for page in PAGES for b in page_blocks(page)]
    for table in (SKIPPED_BLOCKS, SLOW):
        named = {(b.page, named_by(b, table)) for b in blocks if named_by(b, table) is not None}
        assert set(table) == named
    assert set(SKIPPED_PAGES) <= set(PAGES)
    commands = {
        command_of(line) for b in blocks if b.language == "sh" for line in b.code.splitlines()
    }
    assert set(SKIPPED_COMMANDS) <= commands


# -- The extraction and the checks do what they say, on small made-up pages ---------------------

PAGE = """# A page

```sh
make demo    # set-up
bayesgen fit x
```

Prose.

```python
print("a", 1)
```

```text
a 1
```

```{figure} x.png
```

```python
print(2)
```

Between.

```text
not the output: prose lies between
```
"""


def test_fenced_blocks_pair_code_with_the_output_right_below_it():
    blocks = fenced_blocks("p.md", PAGE)
    assert [(b.line, b.language, b.output) for b in blocks] == [
        (3, "sh", None),
        (10, "python", "a 1\n"),
        (21, "python", None),
    ]
    assert blocks[0].code == "make demo    # set-up\nbayesgen fit x\n"


def test_shell_script_replaces_set_up_lines_and_keeps_the_rest():
    script, skipped = shell_script(fenced_blocks("p.md", PAGE)[:1])
    assert skipped == ["make demo"]
    assert "bayesgen fit x" in script.splitlines()
    assert "make demo    # set-up" not in script


def test_output_check_uses_ellipsis_and_catches_a_changed_number():
    assert output_differs("worst |z| = ..., n = 462\n", "worst |z| = 3.17, n = 462\n") is None
    assert output_differs("a  b\nc\n", "a b c\n") is None
    assert output_differs("n = 462\n", "n = 463\n") is not None


def test_a_failing_block_and_a_wrong_output_fail(workdir):
    bad = [Block("p.md", 1, "python", "print(1)\n", "2\n"), Block("p.md", 5, "python", "1 / 0\n")]
    results = run_python(bad, workdir)
    assert (results[0]["printed"], results[0]["error"]) == ("1\n", None)
    assert "ZeroDivisionError" in results[1]["error"]
    assert output_differs(bad[0].output, results[0]["printed"]) is not None


def test_a_shell_without_the_venv_does_not_find_bayesgen(workdir):
    # The failure a reader of the old README met; and the activation line that fixes it.
    printed, completed = run_shell([Block("p.md", 1, "sh", "bayesgen --help\n")], workdir)
    assert completed.returncode == 127 and "bayesgen: command not found" in completed.stderr
    fixed = Block("p.md", 1, "sh", ". .venv/bin/activate\nbayesgen --help > /dev/null\necho ok\n")
    printed, completed = run_shell([fixed], workdir)
    assert completed.returncode == 0, completed.stderr
    assert printed == ["ok\n"]
