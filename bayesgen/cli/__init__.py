"""The ``bayesgen`` command: fit, predict, compare, report and demo.

Every command prints ``--help``. Every expected failure — bad arguments or data, a file that
cannot be read or written (a folder, a full disk, no permission), a damaged model file, memory
running out — ends with one line ``bayesgen COMMAND: error: ...`` on stderr and exit status 2,
never a traceback; ``compare`` exits 1 when the posterior and the closed forms disagree, and an
interrupt (Ctrl-C) exits 130. Output files and folders are written atomically, missing parent
folders are created, and CSV cells that a spreadsheet would run as formulas are escaped.

The top layer: it may import any bayesgen module, and none imports it. This module is the
entry point (the parser of every command, and how a command ends); each command's options and
run are in :mod:`~bayesgen.cli.fit`, :mod:`~bayesgen.cli.predict`,
:mod:`~bayesgen.cli.saved_models` (compare, loo, report) and :mod:`~bayesgen.cli.demo_command`;
reading the data is :mod:`~bayesgen.cli.tables`, the option types :mod:`~bayesgen.cli.arguments`.
"""

from __future__ import annotations

import argparse
import sys
import warnings

from bayesgen import __version__
from bayesgen.cli.arguments import HelpFormatter
from bayesgen.cli.demo_command import add_demo_command
from bayesgen.cli.fit import add_fit_command
from bayesgen.cli.predict import add_predict_command
from bayesgen.cli.saved_models import add_compare_command, add_loo_command, add_report_command


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``bayesgen`` console script; returns the exit status.

    Examples
    --------
    ``main`` takes the arguments of the ``bayesgen`` command:

    >>> import tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from bayesgen.cli import main
    >>> messages = pd.DataFrame({
    ...     "text": ["win a free prize", "lunch at noon", "free prize now", "see you at noon"],
    ...     "label": ["spam", "ham", "spam", "ham"],
    ... })
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     data, model = Path(folder) / "messages.csv", Path(folder) / "spam.nc"
    ...     messages.to_csv(data, index=False)
    ...     status = main([
    ...         "fit", "multinomial", str(data), "--target", "label", "--text-column", "text",
    ...         "--inference", "conjugate", "--no-map", "--seed", "0", "--output", str(model),
    ...         "--quiet",
    ...     ])
    saved .../spam.nc (MultinomialNB, 4 rows, 2 classes, 9 features)
    >>> status
    0
    >>> main(["fit", "naive", "messages.csv"])  # errors go to stderr, with exit status 2
    2
    """
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:  # --help, --version, or argparse's own usage error
        return done.code if isinstance(done.code, int) else 2
    if args.command is None:
        parser.print_help()
        return 2
    format_warning = warnings.formatwarning
    # A warning is one line like an error (not Python's file:line and source line).
    warnings.formatwarning = _warning_formatter(args.command)
    try:
        return args.run(args)
    except BrokenPipeError:  # e.g. `bayesgen compare m.nc | head`: the reader left early
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print(f"bayesgen {args.command}: interrupted", file=sys.stderr)
        return 130
    except (ValueError, TypeError, KeyError, OSError, MemoryError) as error:
        print(f"bayesgen {args.command}: error: {_message(error)}", file=sys.stderr)
        return 2
    finally:
        warnings.formatwarning = format_warning


def _parser() -> argparse.ArgumentParser:
    """The parser of ``bayesgen`` and of each command, in the order ``--help`` lists them."""
    parser = argparse.ArgumentParser(
        prog="bayesgen",
        description="Bayesian generative classifiers checked against their closed forms.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"bayesgen {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add_command in (
        add_fit_command,
        add_predict_command,
        add_compare_command,
        add_loo_command,
        add_report_command,
        add_demo_command,
    ):
        add_command(commands)
    return parser


def _warning_formatter(command: str):
    """``warnings.formatwarning`` for the command: ``bayesgen COMMAND: warning: ...``."""

    def format_warning(message, category, filename, lineno, line=None) -> str:
        return f"bayesgen {command}: warning: {' '.join(str(message).splitlines())}\n"

    return format_warning


def _message(error: BaseException) -> str:
    """One line saying what went wrong, for any expected failure."""
    if isinstance(error, OSError) and error.strerror:
        # the system's words ("No space left on device") and the file they concern
        message = error.strerror
        if error.filename is not None:
            message = f"{error.filename}: {message}"
    elif isinstance(error, KeyError) and error.args:
        message = str(error.args[0])
    elif isinstance(error, MemoryError):
        message = f"out of memory{': ' + str(error) if str(error) else ''}; try smaller data."
    else:
        message = str(error) or type(error).__name__
    return " ".join(message.splitlines())


__all__ = ["main"]
