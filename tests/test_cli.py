"""The command-line interface, run in-process through ``bayesgen.cli.main``."""

import subprocess
import sys

from bayesgen.cli import main


def test_demo_prints_the_lecture_notes_answer(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    # P(y=1 | "b c") = 0.2*0.6*0.5 / (0.2*0.6*0.5 + 0.4*0.2*0.5) = 0.6 in the notes.
    assert "MLE 0.6000" in out
    # add-1: (0.25*0.5) / (0.25*0.5 + 0.375*0.25) = 4/7.
    assert f"add-1 {4 / 7:.4f}" in out
    assert "held-out accuracy" in out


def test_no_command_prints_help_and_fails(capsys):
    assert main([]) == 2
    assert "usage: bayesgen" in capsys.readouterr().out


def test_compare_of_a_missing_file_is_a_clear_error(capsys, tmp_path):
    assert main(["compare", str(tmp_path / "absent.nc")]) == 2
    err = capsys.readouterr().err
    assert "no model file" in err and "absent.nc" in err


def test_console_script_help_on_subcommand():
    done = subprocess.run(
        [sys.executable, "-m", "bayesgen.cli", "demo", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0
    assert "--alpha" in done.stdout
