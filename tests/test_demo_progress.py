"""The demo says what it is doing: a progress line per step on standard error, a line before a
model graph compiles, nothing under --quiet; ``--export DIR`` writes the demo's data."""

from __future__ import annotations

import argparse
import io
import re

import numpy as np
import pandas as pd
import pytest

import bayesgen
from bayesgen import demo
from bayesgen.cli import main
from bayesgen.inference.progress import COMPILE_COST, Progress

_STAMP = re.compile(r"^\[ *\d+ s\] ")

# Two classes over three words; the conjugate posterior and its MAP are closed forms.
_X = np.array([[2, 0, 1], [1, 1, 0], [0, 3, 1], [0, 2, 2], [3, 0, 0], [0, 1, 3]])
_Y = np.array(["spam", "spam", "ham", "ham", "spam", "ham"])


def _tiny_job(name="tiny", **options) -> demo.Job:
    estimator = bayesgen.MultinomialNB(
        inference="conjugate", draws=50, chains=2, prior_draws=20, random_seed=0, **options
    )
    return demo.Job(name, estimator, _X, _Y, _X[:2], _Y[:2], ["a", "b", "c"])


def _args(tmp_path, *, quiet=False, no_reports=True) -> argparse.Namespace:
    return argparse.Namespace(
        models_dir=str(tmp_path / "models"),
        reports_dir=str(tmp_path / "reports"),
        no_reports=no_reports,
        quiet=quiet,
    )


def _messages(stderr: str) -> list[str]:
    """The progress lines without their time stamps (every line must have one)."""
    lines = stderr.splitlines()
    assert all(_STAMP.match(line) for line in lines), lines
    return [_STAMP.sub("", line) for line in lines]


def test_a_conjugate_job_prints_a_line_per_step_and_no_compile(capsys, tmp_path):
    row = demo.fit_compare_report(_tiny_job(), _args(tmp_path))
    captured = capsys.readouterr()
    models = tmp_path / "models"
    assert _messages(captured.err) == [
        "tiny: fitting the exact conjugate posterior (nothing to compile)",
        f"tiny: saving {models / 'tiny.nc'}",
        "tiny: comparing the posterior with the closed forms",
        "tiny: held-out accuracy",
        "tiny: finished",
    ]
    assert row["saved"] == str(models / "tiny.nc")
    assert "== tiny: MultinomialNB ==" in captured.out  # results stay on standard output


def test_quiet_prints_no_progress_but_still_the_results(capsys, tmp_path):
    demo.fit_compare_report(_tiny_job(), _args(tmp_path, quiet=True))
    captured = capsys.readouterr()
    assert captured.err == ""
    assert "== tiny: MultinomialNB ==" in captured.out


def test_the_reports_steps_are_printed_under_the_jobs_name(capsys, tmp_path, monkeypatch):
    from bayesgen.plotting import report as reporting

    def fake_report(est, out_dir, X_test=None, y_test=None, *, progress=None, comparison=None):
        progress("plotting Trace")
        progress("plotting Rank")
        return out_dir / "index.html"

    monkeypatch.setattr(reporting, "report", fake_report)
    demo.fit_compare_report(_tiny_job(), _args(tmp_path, no_reports=False))
    messages = _messages(capsys.readouterr().err)
    assert messages[-4:] == [
        f"tiny: writing the report in {tmp_path / 'reports' / 'tiny'}",
        "tiny: report: plotting Trace",
        "tiny: report: plotting Rank",
        "tiny: finished",
    ]


@pytest.mark.slow  # a whole report: tens of seconds on 2 busy cores
def test_the_report_prints_a_line_per_plot_it_draws(capsys, tmp_path):
    demo.fit_compare_report(_tiny_job(compute_map=False), _args(tmp_path, no_reports=False))
    messages = _messages(capsys.readouterr().err)
    report = tmp_path / "reports" / "tiny"
    plotted = [m for m in messages if m.startswith("tiny: report: plotting ")]
    # one line per PNG in the finished report, announced before it was drawn
    assert len(plotted) == len(list(report.glob("*.png"))) > 0
    assert messages.index(f"tiny: writing the report in {report}") < messages.index(plotted[0])
    assert messages[-1] == "tiny: finished"


class _Recorded(Exception):
    pass


class _CompilingEstimator:
    """Stands for a NUTS estimator: its fit records that the compile started, then stops."""

    inference, compute_map, chains, tune, draws = "nuts", True, 4, 500, 1000

    def __init__(self, events: list[str]):
        self.events = events

    def fit(self, X, y, *, feature_names=None):
        self.events.append("fit (compiles)")
        raise _Recorded

    def _map_by_optimiser(self) -> bool:
        return False  # a conjugate prior: the exact mode, no MAP graph


class _EventStream(io.StringIO):
    def __init__(self, events: list[str]):
        super().__init__()
        self.events = events

    def write(self, text: str) -> int:
        self.events.append(_STAMP.sub("", text.rstrip("\n")))
        return len(text)


def test_the_compile_announcement_comes_before_the_compile(capsys, tmp_path):
    events: list[str] = []
    job = demo.Job("wine-gda", _CompilingEstimator(events), _X, _Y, _X, _Y)
    args = _args(tmp_path)
    args.progress = Progress(stream=_EventStream(events))
    with pytest.raises(_Recorded):
        demo.fit_compare_report(job, args)
    assert events == [
        f"wine-gda: compiling the NUTS graph — {COMPILE_COST}",  # its MAP is a closed form
        "wine-gda: NUTS, 4 chains × (500 tuning + 1000 draws)",
        "fit (compiles)",
    ]


def test_progress_stamps_the_seconds_since_it_started():
    out = io.StringIO()
    readings = iter([100.0, 113.2])
    progress = Progress(stream=out, clock=lambda: next(readings))
    progress("step")
    assert out.getvalue() == "[  13 s] step\n"


def test_workers_print_each_jobs_results_in_the_jobs_order(capsys, tmp_path):
    jobs = [_tiny_job("first"), _tiny_job("second")]
    rows = demo.run_jobs(jobs, _args(tmp_path, quiet=True), workers=2)
    out = capsys.readouterr().out
    assert [row["model"] for row in rows] == ["first", "second"]
    assert out.index("== first: MultinomialNB ==") < out.index("== second: MultinomialNB ==")
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == ["first.nc", "second.nc"]


def test_export_writes_the_demo_data_and_fits_nothing(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--export", "data", "--quiet"]) == 0
    messages = pd.concat([pd.read_csv("data/messages.csv"), pd.read_csv("data/new_messages.csv")])
    # The bundled corpus: 30 ham and 20 spam messages, split 3:1 between the two files.
    assert list(messages.columns) == ["text", "label"]
    assert messages["label"].value_counts().to_dict() == {"ham": 30, "spam": 20}
    assert len(pd.read_csv("data/new_messages.csv")) == 13  # a quarter of 50, rounded up
    wine = pd.read_csv("data/wine.csv")
    assert wine.shape == (178, 14)
    assert sorted(wine["cultivar"].unique()) == ["class_0", "class_1", "class_2"]
    digits = pd.read_csv("data/digits.csv")
    assert digits.shape == (1797, 65)
    assert digits["pixel_0_2"].max() <= 16
    penguins = pd.read_csv("data/penguins.csv")
    assert penguins.shape == (333, 7)  # palmerpenguins' 344 less the 11 with missing entries
    assert sorted(penguins["species"].unique()) == ["Adelie", "Chinstrap", "Gentoo"]
    assert not (tmp_path / "models").exists()
    assert "bayesgen fit multinomial data/messages.csv" in capsys.readouterr().out


def test_export_into_a_file_is_refused(capsys, tmp_path):
    target = tmp_path / "taken"
    target.write_text("x")
    assert main(["demo", "--export", str(target), "--quiet"]) == 2
    expected = f"bayesgen demo: error: --export: {str(target)!r} is a file; expected a folder."
    assert capsys.readouterr().err.strip() == expected


def test_workers_must_be_a_positive_integer(capsys):
    assert main(["demo", "--workers", "0"]) == 2
    assert "--workers: expected a positive integer; got '0'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("cores", "load", "workers"),
    [(2, 0.3, 2), (2, 1.0, 2), (2, 1.6, 1), (2, 4.0, 1), (1, 0.0, 1), (8, 3.0, 2)],
)
def test_a_second_worker_only_where_a_second_core_is_idle(monkeypatch, cores, load, workers):
    monkeypatch.setattr(demo.os, "cpu_count", lambda: cores)
    monkeypatch.setattr(demo.os, "getloadavg", lambda: (load, load, load))
    assert demo.default_workers("conjugate") == workers


@pytest.mark.parametrize(("cores", "load"), [(2, 0.0), (8, 0.0), (1, 0.0), (2, 4.0)])
def test_one_worker_for_nuts_whose_chains_use_the_cores(monkeypatch, cores, load):
    monkeypatch.setattr(demo.os, "cpu_count", lambda: cores)
    monkeypatch.setattr(demo.os, "getloadavg", lambda: (load, load, load))
    assert demo.default_workers("nuts") == 1
    assert demo.default_workers() == 1  # the demo's default inference


def test_the_cli_picks_the_workers_for_its_inference(monkeypatch):
    asked = []
    monkeypatch.setattr(demo, "default_workers", lambda inference: asked.append(inference) or 1)
    monkeypatch.setattr(demo, "run", lambda args: 0)
    assert main(["demo", "--quiet"]) == 0
    assert main(["demo", "--inference", "conjugate", "--quiet"]) == 0
    assert asked == ["nuts", "conjugate"]
