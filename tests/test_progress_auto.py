"""A first NUTS fit says what it is doing when someone watches, and stays quiet otherwise."""

import logging
import os
import sys

import pytest
from conftest import multinomial_data

from bayesgen import MultinomialNB
from bayesgen.inference.progress import interactive, show_progress

SMALL = {"tune": 60, "draws": 60, "chains": 2, "random_seed": 0, "compute_map": False}


def test_auto_is_quiet_when_standard_error_is_not_a_terminal(monkeypatch):
    monkeypatch.setattr(sys, "stderr", open("/dev/null", "w"))
    assert not interactive()
    assert show_progress("auto") is False
    assert show_progress(True) is True and show_progress(False) is False


def test_auto_shows_progress_on_a_terminal(monkeypatch):
    class Terminal:
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stderr", Terminal())
    assert show_progress("auto") is True


def test_the_default_is_auto():
    assert MultinomialNB().get_params()["progressbar"] == "auto"


def test_a_bad_progressbar_is_refused():
    with pytest.raises(ValueError, match="progressbar: expected True, False or 'auto'"):
        MultinomialNB(progressbar="yes").fit(*multinomial_data())


@pytest.mark.filterwarnings("ignore:NUTS")
def test_a_watched_fit_says_compiling_and_prints_no_sampling_log_line(capfd, caplog):
    X, y = multinomial_data()
    with caplog.at_level(logging.INFO, logger="pymc"):
        MultinomialNB(progressbar=True, prior_draws=20, **SMALL).fit(X, y)
    err = capfd.readouterr().err
    assert "compiling the multinomial_nb model's NUTS graph" in err
    logged = " ".join(record.getMessage() for record in caplog.records)
    assert "Sampling: [" not in logged and "Sampling: [" not in err


@pytest.mark.filterwarnings("ignore:NUTS")
def test_an_unwatched_fit_prints_nothing(capfd):
    X, y = multinomial_data()
    MultinomialNB(prior_draws=20, **SMALL).fit(X, y)
    captured = capfd.readouterr()
    assert captured.err == "" and captured.out == ""


# -- PyMC's progress table gets room where no terminal gives a width ---------------------------


def test_the_progress_table_is_wide_where_no_terminal_gives_a_width(monkeypatch):
    from rich.console import Console

    from bayesgen.inference import progress

    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("JUPYTER_COLUMNS", raising=False)
    monkeypatch.setattr(progress, "_on_a_terminal", lambda: False)
    with progress.wide_progress_table():
        assert Console().width == progress.PROGRESS_TABLE_COLUMNS >= 120
    assert "COLUMNS" not in os.environ and "JUPYTER_COLUMNS" not in os.environ


def test_the_progress_table_keeps_a_width_the_user_set(monkeypatch):
    from rich.console import Console

    from bayesgen.inference import progress

    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setattr(progress, "_on_a_terminal", lambda: False)
    with progress.wide_progress_table():
        assert Console().width == 100
    assert os.environ["COLUMNS"] == "100"


def test_the_progress_table_keeps_a_terminals_own_width(monkeypatch):
    from bayesgen.inference import progress

    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(progress, "_on_a_terminal", lambda: True)
    with progress.wide_progress_table():
        assert "COLUMNS" not in os.environ
