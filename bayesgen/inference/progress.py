"""Progress lines for long work: one line per step on standard error, none when quiet.

Results (comparisons, tables) go to standard output; these lines go to standard error, so that
``bayesgen demo > results.txt`` keeps the results clean while the terminal still shows what
is being done, and ``--quiet`` silences them without hiding a result.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

#: What a first compilation of a PyMC model graph costs (numba compilation by PyTensor); the
#: compiled code is cached under PyTensor's ``base_compiledir`` and reused afterwards.
COMPILE_COST = "about a minute the first time, seconds once cached"


def interactive() -> bool:
    """Whether someone is watching: standard error is a terminal, or this is a Jupyter
    (IPython kernel) session. Decides ``progressbar="auto"``.

    Examples
    --------
    >>> from bayesgen.inference.progress import interactive
    >>> isinstance(interactive(), bool)
    True
    """
    shell = sys.modules.get("IPython")
    if shell is not None:
        ipython = shell.get_ipython() if hasattr(shell, "get_ipython") else None
        if ipython is not None and "IPKernelApp" in getattr(ipython, "config", {}):
            return True
    stream = sys.stderr
    return bool(stream is not None and hasattr(stream, "isatty") and stream.isatty())


def show_progress(progressbar) -> bool:
    """``progressbar`` as the estimators take it (True, False or "auto") made a bool."""
    return interactive() if isinstance(progressbar, str) else bool(progressbar)


#: Columns PyMC's NUTS progress table needs to show every column (draws, divergences, step
#: size, gradient evaluations, speed, elapsed and remaining time) whole.
PROGRESS_TABLE_COLUMNS = 132


def _on_a_terminal() -> bool:
    """Whether a standard stream is a terminal, whose own width the table then takes."""
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        try:
            os.get_terminal_size(stream.fileno())
        except (AttributeError, ValueError, OSError):
            continue
        return True
    return False


@contextmanager
def wide_progress_table() -> Iterator[None]:
    """Give PyMC's progress table room where it cannot measure any: rich, which draws it,
    assumes 80 columns where no standard stream is a terminal (a log, a notebook's output
    capture) and 115 in Jupyter, and cuts the table's columns to fit. Inside, ``COLUMNS``
    and ``JUPYTER_COLUMNS`` are :data:`PROGRESS_TABLE_COLUMNS` unless the user set them or a
    terminal gives its own width; afterwards they are as before.

    Examples
    --------
    >>> import os
    >>> from bayesgen.inference.progress import wide_progress_table
    >>> before = os.environ.get("COLUMNS")
    >>> with wide_progress_table():
    ...     pass
    >>> os.environ.get("COLUMNS") == before
    True
    """
    names = ("COLUMNS", "JUPYTER_COLUMNS")
    if any(name in os.environ for name in names) or _on_a_terminal():
        yield
        return
    os.environ.update(dict.fromkeys(names, str(PROGRESS_TABLE_COLUMNS)))
    try:
        yield
    finally:
        for name in names:
            os.environ.pop(name, None)


class Progress:
    """Writes ``[  12 s] message`` lines: the time since it was made, then the step.

    Parameters
    ----------
    quiet : bool, default False
        Write nothing.
    stream : file-like, optional
        Where to write; default ``sys.stderr`` as it is when a line is written (so that a
        redirected or captured standard error receives it).
    clock : callable, default time.monotonic
        Seconds, for the elapsed time of each line. ``time.monotonic`` is one clock for every
        process of the machine, so a worker process given the parent's ``start`` counts from
        the same moment.
    start : float, optional
        The ``clock`` reading that lines count from; default when the object is made.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> progress = Progress(stream=out, clock=lambda: 0.0)
    >>> progress("wine-gda: writing the report")
    >>> progress.compiling("the NUTS graph", "wine-gda")
    >>> print(out.getvalue(), end="")  # doctest: +NORMALIZE_WHITESPACE
    [   0 s] wine-gda: writing the report
    [   0 s] wine-gda: compiling the NUTS graph — about a minute the first time, seconds
    once cached
    >>> Progress(quiet=True, stream=out).quiet
    True
    """

    def __init__(
        self,
        *,
        quiet: bool = False,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        start: float | None = None,
    ) -> None:
        self.quiet = quiet
        self._stream = stream
        self._clock = clock
        self.start = clock() if start is None else start

    def __call__(self, message: str) -> None:
        """Write one line for a step that starts now."""
        if self.quiet:
            return
        stream = self._stream if self._stream is not None else sys.stderr
        elapsed = self._clock() - self.start
        stream.write(f"[{elapsed:4.0f} s] {message}\n")
        stream.flush()  # a line per step is only useful if it shows while the step runs

    def compiling(self, what: str, name: str) -> None:
        """Announce, before it starts, the compilation of ``what`` (e.g. "the NUTS graph")
        for ``name``."""
        self(f"{name}: compiling {what} — {COMPILE_COST}")
