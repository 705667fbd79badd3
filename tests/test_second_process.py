"""Figures drawn in a forked second process (bayesgen.plotting.second_process) and the report
that uses it: the same files as one process draws, its errors and warnings raised here."""

import os
import re
import sys
import threading
import warnings

import matplotlib
import numpy as np
import pytest

from bayesgen import MultinomialNB
from bayesgen.plotting import plots, second_process
from bayesgen.plotting import report as reporting

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2,
    reason="forks only on Linux with two or more cores",
)


@pytest.fixture(autouse=True)
def forking(monkeypatch):
    """Fork as in a process with no other Python thread: an earlier test in this worker may
    have left an idle pool behind (dask's threaded scheduler keeps one once used), and then
    the report rightly draws in one process."""
    monkeypatch.setattr(second_process.threading, "active_count", lambda: 1)
    assert second_process.can_fork()


class _Unpicklable(Exception):
    def __init__(self, handle):
        super().__init__("cannot travel")
        self.handle = handle

    def __reduce__(self):
        raise TypeError("no pickling")


def test_the_child_does_its_work_in_another_process(tmp_path):
    path = tmp_path / "pid.txt"
    with second_process.Forked(lambda: path.write_text(str(os.getpid()))):
        pass
    assert int(path.read_text()) != os.getpid()


def test_the_childs_exception_is_raised_here_with_its_traceback_as_a_note():
    def work():
        raise KeyError("drawn badly")

    with pytest.raises(KeyError, match="drawn badly") as caught:
        with second_process.Forked(work):
            pass
    assert "Raised in the second process drawing figures" in caught.value.__notes__[0]
    assert "in work" in caught.value.__notes__[0]


def test_an_exception_that_cannot_be_pickled_arrives_as_its_text():
    def work():
        raise _Unpicklable(lambda: None)

    with pytest.raises(RuntimeError, match="_Unpicklable: cannot travel"):
        with second_process.Forked(work):
            pass


def test_the_childs_warnings_are_issued_again_here():
    def work():
        warnings.warn("a figure with no data", UserWarning, stacklevel=1)

    with pytest.warns(UserWarning, match="a figure with no data"):
        with second_process.Forked(work):
            pass


def test_an_error_here_kills_the_child_and_reaps_it():
    pids = []

    def work():
        threading.Event().wait(60)  # never finishes on its own

    with pytest.raises(ValueError, match="the parent's own"):
        with second_process.Forked(work) as child:
            pids.append(child.pid)
            raise ValueError("the parent's own plot failed")
    with pytest.raises(ChildProcessError):  # already waited for: no zombie left
        os.waitpid(pids[0], os.WNOHANG)


def test_a_child_that_dies_without_a_word_is_an_error():
    with pytest.raises(RuntimeError, match="ended without a result"):
        with second_process.Forked(lambda: os._exit(3)):
            pass


def test_no_fork_with_an_interactive_backend_or_another_thread(monkeypatch):
    monkeypatch.setattr(matplotlib, "get_backend", lambda: "TkAgg")
    assert not second_process.can_fork()
    monkeypatch.undo()  # also the fixture's: threads are counted again
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not second_process.can_fork()
    finally:
        stop.set()
        thread.join()


# -- the report, drawn in one process and in two ----------------------------------------------


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    y = np.arange(60) % 2
    X = rng.poisson(np.where(y[:, None] == 1, [3.0, 1.0, 1.0, 2.0], [1.0, 3.0, 1.0, 2.0]))
    est = MultinomialNB(inference="conjugate", draws=200, random_seed=0)
    return est.fit(X[:40], y[:40]), X[40:], y[40:]


def test_a_report_in_two_processes_has_the_files_and_page_of_one_in_one(
    fitted, tmp_path, monkeypatch
):
    est, X_test, y_test = fitted
    two = reporting.report(est, tmp_path / "two", X_test, y_test)
    monkeypatch.setattr(second_process, "can_fork", lambda: False)
    one = reporting.report(est, tmp_path / "one", X_test, y_test)
    names = sorted(path.name for path in one.parent.iterdir())
    assert names == sorted(path.name for path in two.parent.iterdir())
    assert {"trace.png", "ess.png"} <= set(names)  # drawn in the second process
    # The page states when it was made, to the minute: the two were made a moment apart.
    made = re.compile(r", on \d{4}-\d\d-\d\d \d\d:\d\d UTC")
    assert made.search(one.read_text()) is not None
    assert made.sub("", two.read_text()) == made.sub("", one.read_text())
    # Every drawn figure is a complete PNG in both.
    for name in names:
        if name.endswith(".png"):
            assert (two.parent / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            assert (two.parent / name).stat().st_size > 1000


def test_a_plot_that_fails_in_the_second_process_fails_the_report(fitted, tmp_path, monkeypatch):
    est, X_test, y_test = fitted
    earlier = reporting.report(est, tmp_path / "report", X_test, y_test).read_text()

    def broken(*args, **kwargs):
        raise ValueError("trace plot broke")

    monkeypatch.setattr(plots, "plot_trace", broken)
    with pytest.raises(ValueError, match="trace plot broke"):
        reporting.report(est, tmp_path / "report", X_test, y_test)
    assert (tmp_path / "report" / "index.html").read_text() == earlier  # left intact


def test_a_warning_of_a_plot_drawn_in_the_second_process_reaches_the_caller(
    fitted, tmp_path, monkeypatch
):
    est, X_test, y_test = fitted
    draw_ess = plots.plot_ess

    def warning_ess(*args, **kwargs):
        warnings.warn("ESS drawn from few draws", UserWarning, stacklevel=1)
        return draw_ess(*args, **kwargs)

    monkeypatch.setattr(plots, "plot_ess", warning_ess)
    messages = []
    with pytest.warns(UserWarning, match="ESS drawn from few draws"):
        reporting.report(est, tmp_path / "report", X_test, y_test, progress=messages.append)
    assert "plotting Effective sample size (in a second process)" in messages
