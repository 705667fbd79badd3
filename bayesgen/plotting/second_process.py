"""Figures drawn in a second process, beside the first.

matplotlib holds the GIL while it lays out and renders a figure, so a second thread cannot
share a report's plotting; a forked process can. :class:`Forked` forks this process, runs the
work it is handed there (drawing figures and writing their files) and lets this one go on
with its own. :meth:`Forked.join` waits for the child, warns again with the warnings it
recorded and raises the exception it raised, so that a report drawn in two processes fails
or warns as one drawn in one does.

Forking is only done where it is safe and helps (:func:`can_fork`): on Linux, with
matplotlib's non-interactive Agg backend (a GUI toolkit does not survive a fork), with no
Python thread but this one (a lock another thread holds at the fork stays held in the child,
so the caller forks before it starts threads of its own) and with two or more cores to run on.
The child should run plotting code only: the thread pools of native libraries (BLAS, numba's
parallel kernels) are not all rebuilt after a fork.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import threading
import traceback
import warnings
from collections.abc import Callable

import matplotlib

__all__ = ["Forked", "can_fork"]


def can_fork() -> bool:
    """Whether :class:`Forked` may fork: Linux, the Agg backend, no other Python thread, at
    least two usable cores.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> isinstance(can_fork(), bool)
    True
    """
    return (
        sys.platform.startswith("linux")
        and matplotlib.get_backend().lower() == "agg"
        and threading.active_count() == 1
        and len(os.sched_getaffinity(0)) >= 2
    )


class Forked:
    """``work()`` run in a forked child process; a context manager.

    On leaving the ``with`` block the child is waited for (:meth:`join`, if the block did not
    call it) or, where the block raised, killed. The child exits without returning into the
    caller's code and without running its clean-up (``os._exit``).

    Parameters
    ----------
    work : callable
        Called with no arguments in the child. Its return value is dropped; what it raised is
        raised again by :meth:`join`, with the child's traceback as a note, and the warnings
        it issued (under the filters in force at the fork) are issued again by :meth:`join`.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "child.txt"
    ...     with Forked(lambda: path.write_text("drawn")) as child:
    ...         pass  # the parent's own share of the work
    ...     print(path.read_text())
    drawn
    """

    def __init__(self, work: Callable[[], object]):
        self._work = work
        self._pid: int | None = None
        self._reader: int | None = None

    def __enter__(self) -> Forked:
        sys.stdout.flush()  # else the child inherits, and one day writes, the same buffer
        sys.stderr.flush()
        reader, writer = os.pipe()
        with warnings.catch_warnings():
            # Python counts native threads too: BLAS's pool, which the library rebuilds in
            # the child. The threads whose locks could stay held, Python's, can_fork rules out.
            warnings.filterwarnings(
                "ignore", message=r"This process .* is multi-threaded", category=DeprecationWarning
            )
            pid = os.fork()
        if pid == 0:  # pragma: no cover  (the child; coverage does not follow a fork)
            os.close(reader)
            _run_in_child(self._work, writer)
        os.close(writer)
        self._pid, self._reader = pid, reader
        return self

    def __exit__(self, kind, error, trace) -> bool:
        if self._pid is None:
            return False
        if error is None:
            self.join()
        else:
            os.kill(self._pid, signal.SIGKILL)
            self._reap()
        return False

    @property
    def pid(self) -> int | None:
        """The child's process id; None before the fork and once it has been waited for."""
        return self._pid

    def join(self) -> None:
        """Wait for the child; issue its warnings and raise its exception here."""
        if self._pid is None:
            return
        reader, self._reader = self._reader, None  # the file object below closes it
        with os.fdopen(reader, "rb") as pipe:
            message = pipe.read()
        status = self._reap()
        if not message:
            raise RuntimeError(
                f"the second process drawing figures ended without a result (wait status "
                f"{status}): killed, or out of memory."
            )
        caught, raised = pickle.loads(message)
        for text, category, filename, lineno in caught:
            warnings.warn_explicit(text, category, filename, lineno)
        if raised is not None:
            raise raised

    def _reap(self) -> int:
        _, status = os.waitpid(self._pid, 0)
        self._pid = None
        if self._reader is not None:
            os.close(self._reader)
            self._reader = None
        return status


def _run_in_child(work: Callable[[], object], writer: int) -> None:
    """Run ``work``, send (its warnings, its exception or None) to the parent, exit."""
    code = 0
    try:
        raised = None
        with warnings.catch_warnings(record=True) as caught:
            try:
                work()
            except BaseException as error:  # everything goes back to the parent
                raised, code = error, 1
        records = [(w.message, w.category, w.filename, w.lineno) for w in caught]
        payload = _pickled(records, raised)
        with os.fdopen(writer, "wb") as pipe:
            pipe.write(payload)
    finally:
        os._exit(code)


def _pickled(records: list, raised: BaseException | None) -> bytes:
    """The child's result, its exception made picklable (as RuntimeError with its text where
    it is not) and carrying the child's traceback as a note."""
    if raised is not None:
        trace = "".join(traceback.format_exception(raised))
        try:
            pickle.loads(pickle.dumps(raised))
        except Exception:
            raised = RuntimeError(f"{type(raised).__name__}: {raised}")
        raised.add_note(f"Raised in the second process drawing figures:\n{trace}")
    try:
        return pickle.dumps((records, raised))
    except Exception:  # a warning whose message does not pickle: send its text
        records = [(str(text), *where) for text, *where in records]
        return pickle.dumps((records, raised))
