"""A catalogue of bad input files, arguments and file-system faults, each with its exact outcome.

Every CLI case is run in-process through ``bayesgen.cli.main``: an expected failure is one line
``bayesgen COMMAND: error: ...`` on stderr with exit status 2 (argparse's own usage errors print
the usage first, then that line), never a traceback. Every tampered model file is built from a
good saved model with xarray, and ``bayesgen.load`` must name the file and what is wrong.
Fits use exact conjugate draws (no PyMC compilation) on a few rows.
"""

import errno
import os
import stat
import time

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import bayesgen
from bayesgen.cli import main
from bayesgen.input import files
from bayesgen.io import model_files as io

FAST = ["--inference", "conjugate", "--draws", "20", "--chains", "2", "--no-map", "--quiet"]
COUNTS = pd.DataFrame(
    {
        "label": ["ham", "spam", "ham", "spam", "ham", "spam"],
        "cheap": [0, 3, 1, 2, 0, 4],
        "offer": [1, 2, 0, 3, 1, 2],
        "win": [0, 1, 0, 2, 1, 3],
    }
)
TEXTS = pd.DataFrame(
    {
        "text": [
            "win cash now",
            "free prize call now",
            "lunch at noon",
            "see you at lunch",
            "claim free cash",
            "meeting at noon",
        ],
        "label": ["spam", "spam", "ham", "ham", "spam", "ham"],
    }
)


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    """Data files, two saved models and file-system obstacles, shared by the catalogue."""
    root = tmp_path_factory.mktemp("catalogue")
    COUNTS.to_csv(root / "counts.csv", index=False)
    TEXTS.to_csv(root / "texts.csv", index=False)
    (root / "a_file.txt").write_text("not a folder\n")
    (root / "a_dir").mkdir()
    (root / "foreign").mkdir()
    (root / "foreign" / "photo.jpg").write_bytes(b"\xff\xd8\xff")
    (root / "link_dir").symlink_to(root / "a_dir", target_is_directory=True)
    (root / "header_only.csv").write_text("label,cheap,offer,win\n")
    (root / "empty.csv").write_text("")
    (root / "missing_label.csv").write_text(
        "label,cheap,offer,win\nham,0,1,0\nspam,3,2,1\n,1,0,0\nspam,2,3,2\n"
    )
    (root / "missing_feature.csv").write_text(
        "label,cheap,offer,win\nham,0,1,0\nspam,,2,1\nham,1,0,0\nspam,2,3,2\n"
    )
    (root / "words.csv").write_text("label,cheap,colour\nham,0,red\nspam,3,blue\nham,1,red\n")
    (root / "latin1.csv").write_bytes("label,cheap\nh\xe9m,1\nspam,2\n".encode("latin-1"))
    (root / "ragged.csv").write_text('label,cheap\nham,1\nspam,2,3,4\n"unclosed,5\n')
    (root / "blank_texts.csv").write_text('text,label\n"",ham\n"  ",spam\n')
    (root / "data.xlsx").write_text("x")
    (root / "not_a_model.nc").write_text("label,cheap\nham,1\n")
    for model, data, extra in (
        ("counts.nc", "counts.csv", []),
        ("texts.nc", "texts.csv", ["--text-column", "text"]),
    ):
        argv = ["fit", "multinomial", str(root / data), "--target", "label", *extra, *FAST]
        assert main([*argv, "--seed", "1", "--output", str(root / model)]) == 0
    return root


def _argv(template, place):
    return [part.format(p=place) for part in template]


def _one_error_line(err: str, command: str) -> str:
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines[-1].startswith(f"bayesgen {command}: error: "), err
    return lines[-1]


# --------------------------------------------------------------------------------------------
# CLI arguments: each (argv, exit status, fragment of the error line).

FIT = ["fit", "multinomial", "{p}/counts.csv", "--target", "label"]

ARGUMENT_CASES = {
    "draws 0": ([*FIT, "--draws", "0"], "argument --draws: expected a positive integer; got '0'"),
    "draws 1.5": ([*FIT, "--draws", "1.5"], "--draws: expected a positive integer; got '1.5'"),
    "chains -1": ([*FIT, "--chains", "-1"], "--chains: expected a positive integer"),
    "tune -5": ([*FIT, "--tune", "-5"], "--tune: expected an integer >= 0; got '-5'"),
    "seed abc": ([*FIT, "--seed", "abc"], "--seed: expected an integer >= 0; got 'abc'"),
    "seed -1": ([*FIT, "--seed", "-1"], "--seed: expected an integer >= 0"),
    "alpha 0": (
        [*FIT, "--alpha", "0"],
        "--alpha: expected a finite number > 0, 'evidence', 'evidence_per_class' or one λ > 0 "
        "per class label (e.g. spam=0.5,ham=2); got '0'",
    ),
    "alpha nan": (
        [*FIT, "--alpha", "nan"],
        "--alpha: expected a finite number > 0, 'evidence', 'evidence_per_class' or one λ > 0 "
        "per class label (e.g. spam=0.5,ham=2); got 'nan'",
    ),
    "class-alpha -1": ([*FIT, "--class-alpha", "-1"], "--class-alpha: expected a finite number"),
    "binarize nan": (
        ["fit", "bernoulli", "{p}/counts.csv", "--target", "label", "--binarize", "nan"],
        "--binarize: expected a finite number; got 'nan'",
    ),
    "dtype float16": ([*FIT, "--dtype", "float16"], "argument --dtype: invalid choice"),
    "unknown model": (
        ["fit", "svm", "{p}/counts.csv", "--target", "label"],
        "argument model: invalid choice: 'svm'",
    ),
    "no target": (["fit", "gda", "{p}/counts.csv"], "the following arguments are required"),
    "prob 1.5": (
        ["predict", "{p}/counts.nc", "{p}/counts.csv", "--prob", "1.5"],
        "--prob: expected a number in (0, 1); got '1.5'",
    ),
    "prob 0": (
        ["predict", "{p}/counts.nc", "{p}/counts.csv", "--prob", "0"],
        "--prob: expected a number in (0, 1)",
    ),
}


@pytest.mark.parametrize("case", ARGUMENT_CASES, ids=str)
def test_argument_error_is_a_usage_line_and_exit_status_2(case, place, capsys):
    template, fragment = ARGUMENT_CASES[case]
    argv = _argv(template, place)
    assert main([*argv, *FAST[:2]] if argv[0] == "fit" else argv) == 2
    line = _one_error_line(capsys.readouterr().err, argv[0])
    assert fragment in line


# Options that parse but do not fit the data: one error line each.
OPTION_CASES = {
    "unknown target": ([*FIT[:4], "nope"], "fit", "--target: no column 'nope' in"),
    "empty features": ([*FIT, "--features", ","], "fit", "--features: expected comma-separated"),
    "unknown feature": ([*FIT, "--features", "cheap,nope"], "fit", "columns ['nope'] are not"),
    "target as feature": (
        [*FIT, "--features", "cheap,label"],
        "fit",
        "--features: 'label' is the --target column",
    ),
    "text and features": (
        [*FIT, "--features", "cheap", "--text-column", "label"],
        "fit",
        "--text-column and --features: pass one of them",
    ),
    "unknown text column": (
        [*FIT, "--text-column", "body"],
        "fit",
        "--text-column: no column 'body' in the data",
    ),
    "text column is the target": (
        [*FIT, "--text-column", "label"],
        "fit",
        "--text-column: 'label' is the --target column",
    ),
    "output not .nc": ([*FIT, "--output", "{p}/model.pkl"], "fit", "--output: expected a .nc"),
    "report target without data": (
        ["report", "{p}/counts.nc", "--target", "label", "--output-dir", "{p}/r1"],
        "report",
        "--target: only with --data",
    ),
    "report data without target": (
        ["report", "{p}/counts.nc", "--data", "{p}/counts.csv", "--output-dir", "{p}/r2"],
        "report",
        "--target: required with --data",
    ),
    "report unknown target": (
        ["report", "{p}/counts.nc", "--data", "{p}/counts.csv", "--target", "kind"],
        "report",
        "--target: no column 'kind'",
    ),
    "text model predicted from data without its text column": (
        ["predict", "{p}/texts.nc", "{p}/counts.csv"],
        "predict",
        "--text-column: the model was fitted from the text column 'text', which the data lacks",
    ),
    "count model predicted from a text column": (
        ["predict", "{p}/counts.nc", "{p}/texts.csv", "--text-column", "text"],
        "predict",
        "--text-column: this MultinomialNB was not fitted from a text column",
    ),
    "data lacks the model's features": (
        ["predict", "{p}/counts.nc", "{p}/texts.csv"],
        "predict",
        "the model needs feature columns ['cheap', 'offer', 'win']",
    ),
}


@pytest.mark.parametrize("case", OPTION_CASES, ids=str)
def test_option_that_does_not_fit_the_data_is_one_error_line(case, place, capsys):
    template, command, fragment = OPTION_CASES[case]
    argv = _argv(template, place)
    assert main([*argv, *FAST] if command == "fit" else argv) == 2
    assert fragment in _one_error_line(capsys.readouterr().err, command)


# --------------------------------------------------------------------------------------------
# Data files.

DATA_CASES = {
    "header only": ("header_only.csv", "has no data rows (only a header with columns ['label'"),
    "empty file": ("empty.csv", "is empty (no header, no rows)"),
    "missing label": (
        "missing_label.csv",
        "--target: column 'label' of {p}/missing_label.csv has no label in data row 3 ",
    ),
    "missing feature value": ("missing_feature.csv", "column 'cheap' has no value in data row 2 "),
    "non-numeric column": ("words.csv", "columns ['colour'] are not numeric"),
    "not UTF-8": ("latin1.csv", "is not UTF-8 text (invalid continuation byte); save it as UTF-8."),
    "ragged rows": ("ragged.csv", "does not parse as a table"),
    "unknown suffix": ("data.xlsx", "expected a .csv, .tsv or .parquet file; got 'data.xlsx'"),
    "missing file": ("absent.csv", "data: no file at '{p}/absent.csv'"),
    "a folder": ("a_dir", "is a folder; expected a .csv, .tsv or .parquet file"),
}


@pytest.mark.parametrize("case", DATA_CASES, ids=str)
def test_bad_data_file_is_one_error_line(case, place, capsys):
    name, fragment = DATA_CASES[case]
    assert main(["fit", "multinomial", str(place / name), "--target", "label", *FAST]) == 2
    assert fragment.format(p=place) in _one_error_line(capsys.readouterr().err, "fit")


def test_text_column_without_words_is_one_error_line(place, capsys):
    argv = ["fit", "bernoulli", str(place / "blank_texts.csv"), "--target", "label"]
    assert main([*argv, "--text-column", "text", *FAST]) == 2
    line = _one_error_line(capsys.readouterr().err, "fit")
    assert "--text-column 'text': empty vocabulary" in line


# --------------------------------------------------------------------------------------------
# Output paths and model files on the file system.

PATH_CASES = {
    "fit output is a folder": (
        [*FIT, "--output", "{p}/a_dir"],
        "--output: '{p}/a_dir' is a folder; expected a file name",
    ),
    "fit output under a file": (
        [*FIT, "--output", "{p}/a_file.txt/model.nc"],
        "--output: '{p}/a_file.txt/model.nc' lies under '{p}/a_file.txt', which is a file",
    ),
    "predict output is a folder": (
        ["predict", "{p}/counts.nc", "{p}/counts.csv", "--output", "{p}/a_dir"],
        "--output: '{p}/a_dir' is a folder",
    ),
    "predict output under a file": (
        ["predict", "{p}/counts.nc", "{p}/counts.csv", "--output", "{p}/a_file.txt/x/p.csv"],
        "lies under '{p}/a_file.txt', which is a file",
    ),
    "report output-dir is a file": (
        ["report", "{p}/counts.nc", "--output-dir", "{p}/a_file.txt"],
        "--output-dir: '{p}/a_file.txt' is a file; expected a folder",
    ),
    "report output-dir under a file": (
        ["report", "{p}/counts.nc", "--output-dir", "{p}/a_file.txt/report"],
        "lies under '{p}/a_file.txt'",
    ),
    "report output-dir is a symbolic link": (
        ["report", "{p}/counts.nc", "--output-dir", "{p}/link_dir"],
        "out_dir: '{p}/link_dir' is a symbolic link",
    ),
    "report output-dir holds other files": (
        ["report", "{p}/counts.nc", "--output-dir", "{p}/foreign"],
        "holds files that are not a bayesgen report (e.g. 'photo.jpg')",
    ),
    "compare a missing model": (["compare", "{p}/absent.nc"], "no model file at '{p}/absent.nc'"),
    "compare a folder": (["compare", "{p}/a_dir"], "'{p}/a_dir' is a folder, not a model file"),
    "compare a CSV named .nc": (
        ["compare", "{p}/not_a_model.nc"],
        "'{p}/not_a_model.nc' is not a readable bayesgen model file",
    ),
    "predict with a CSV as the model": (
        ["predict", "{p}/counts.csv", "{p}/counts.csv"],
        "is not a readable bayesgen model file",
    ),
}


@pytest.mark.parametrize("case", PATH_CASES, ids=str)
def test_unusable_path_is_one_error_line(case, place, capsys):
    template, fragment = PATH_CASES[case]
    argv = _argv(template, place)
    assert main([*argv, *FAST] if argv[0] == "fit" else argv) == 2
    assert fragment.format(p=place) in _one_error_line(capsys.readouterr().err, argv[0])
    assert sorted(p.name for p in (place / "foreign").iterdir()) == ["photo.jpg"]
    assert (place / "a_file.txt").read_text() == "not a folder\n"


def test_fit_output_in_missing_folders_creates_them(place, tmp_path):
    output = tmp_path / "new" / "deeper" / "model.nc"
    assert main([*_argv(FIT, place), *FAST, "--output", str(output)]) == 0
    assert isinstance(bayesgen.load(output), bayesgen.MultinomialNB)


def _no_space(*args, **kwargs):
    path = kwargs.get("path_or_buf", args[1] if len(args) > 1 else None)
    if path is not None and not hasattr(path, "write"):
        with open(path, "wb") as handle:
            handle.write(b"half")
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))


def test_fit_on_a_full_disk_keeps_the_previous_model_and_no_temporary(
    place, tmp_path, monkeypatch, capsys
):
    output = tmp_path / "model.nc"
    assert main([*_argv(FIT, place), *FAST, "--output", str(output)]) == 0
    before = output.read_bytes()
    monkeypatch.setattr(xr.DataTree, "to_netcdf", _no_space)
    status = main([*_argv(FIT, place), *FAST, "--seed", "5", "--output", str(output)])
    assert status == 2
    line = _one_error_line(capsys.readouterr().err, "fit")
    assert line.endswith(": No space left on device")
    assert output.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["model.nc"]


def test_predict_on_a_full_disk_keeps_the_previous_csv(place, tmp_path, monkeypatch, capsys):
    output = tmp_path / "pred.csv"
    output.write_text("earlier predictions\n")
    monkeypatch.setattr(pd.DataFrame, "to_csv", _no_space)
    argv = ["predict", str(place / "counts.nc"), str(place / "counts.csv")]
    assert main([*argv, "--output", str(output)]) == 2
    assert "No space left on device" in _one_error_line(capsys.readouterr().err, "predict")
    assert output.read_text() == "earlier predictions\n"
    assert [p.name for p in tmp_path.iterdir()] == ["pred.csv"]


def test_unreadable_model_file_is_one_error_line(place, monkeypatch, capsys):
    def refuse(path, *args, **kwargs):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))

    # tests run as root here, where chmod 000 does not stop reading: refuse in io's open
    monkeypatch.setattr(io, "open", refuse, raising=False)
    assert main(["compare", str(place / "counts.nc")]) == 2
    line = _one_error_line(capsys.readouterr().err, "compare")
    assert line == f"bayesgen compare: error: {place / 'counts.nc'}: Permission denied"


@pytest.mark.parametrize(
    ("raised", "status", "expected"),
    [
        (KeyboardInterrupt(), 130, "bayesgen fit: interrupted"),
        (MemoryError(), 2, "bayesgen fit: error: out of memory; try smaller data."),
        (
            IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), "/x"),
            2,
            "bayesgen fit: error: /x: Is a directory",
        ),
        (
            NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), "/y"),
            2,
            "bayesgen fit: error: /y: Not a directory",
        ),
        (ValueError("X: two\nlines"), 2, "bayesgen fit: error: X: two lines"),
    ],
    ids=["interrupt", "memory", "is-a-directory", "not-a-directory", "multi-line"],
)
def test_failure_inside_fit_is_one_line(raised, status, expected, place, monkeypatch, capsys):
    def fail(self, *args, **kwargs):
        raise raised

    monkeypatch.setattr(bayesgen.MultinomialNB, "fit", fail)
    assert main([*_argv(FIT, place), *FAST]) == status
    err = capsys.readouterr().err
    assert err.strip() == expected
    assert "Traceback" not in err


# --------------------------------------------------------------------------------------------
# Text columns at prediction: the fitted vocabulary.


def test_text_model_predicts_from_its_vocabulary_not_from_zero_rows(place, capsys):
    argv = ["predict", str(place / "texts.nc"), str(place / "texts.csv"), "--text-column", "text"]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split(",")[1] for line in out[1:]] == TEXTS["label"].tolist()  # after the id
    # an all-zero row would give the class prior, 0.5 for two classes of three rows each
    assert all(abs(float(line.split(",")[2]) - 0.5) > 0.2 for line in out[1:])


# --------------------------------------------------------------------------------------------
# CSV injection: cells a spreadsheet would run.


def test_predicted_labels_that_look_like_formulas_are_escaped(tmp_path, capsys):
    labels = ['=HYPERLINK("http://x","y")', "@SUM(1)"]
    data = COUNTS.assign(label=[labels[i % 2] for i in range(6)])
    data.to_csv(tmp_path / "d.csv", index=False)
    model, output = tmp_path / "m.nc", tmp_path / "p.csv"
    assert main(["fit", "multinomial", str(tmp_path / "d.csv"), "--target", "label", *FAST,
                 "--output", str(model)]) == 0  # fmt: skip
    assert main(["predict", str(model), str(tmp_path / "d.csv"), "--output", str(output)]) == 0
    written = pd.read_csv(output)
    assert set(written["predicted"]) <= {"'" + label for label in labels}
    assert "p_@SUM(1)" in written.columns  # starts with p_: not a formula
    assert _formula_cells(output) == []


def _formula_cells(path) -> list[str]:
    """Cells of a CSV file that a spreadsheet would run as formulas (numbers are fine)."""
    import csv

    with open(path, newline="") as handle:
        cells = [cell for row in csv.reader(handle) for cell in row]
    running = []
    for cell in cells:
        try:
            float(cell)
        except ValueError:
            if cell.startswith(("=", "+", "-", "@", "\t", "\r")):
                running.append(cell)
    return running


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ("=1+1", "'=1+1"),
        ("+1", "'+1"),
        ("-1", "'-1"),
        ("@A1", "'@A1"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("ham", "ham"),
        ("a=b", "a=b"),
    ],
)
def test_escape_formulas_prefixes_a_quote_to_cells_a_spreadsheet_would_run(cell, written):
    frame = pd.DataFrame({cell: [cell, 1.5], "n": [-2.0, 3.0]}, index=[cell, "x"])
    escaped = files.escape_formulas(frame)
    assert escaped.iloc[0, 0] == written and escaped.columns[0] == written
    assert escaped.index[0] == written
    assert escaped["n"].tolist() == [-2.0, 3.0]  # numbers are not text
    assert frame.iloc[0, 0] == cell  # the input is not modified


# --------------------------------------------------------------------------------------------
# Saving: modes, stale temporaries, NumPy hyperparameters, names.


@pytest.fixture(scope="module")
def small_fit():
    X, y = COUNTS[["cheap", "offer", "win"]], COUNTS["label"].to_numpy()
    options = {
        "inference": "conjugate",
        "draws": 20,
        "chains": 2,
        "prior_draws": 10,
        "compute_map": False,
    }
    return bayesgen.MultinomialNB(random_seed=0, **options).fit(X, y), X, y, options


def test_new_model_file_gets_the_umask_default_mode(small_fit, tmp_path):
    old = os.umask(0o022)
    try:
        small_fit[0].save(tmp_path / "m.nc")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "m.nc").st_mode) == 0o644


def test_overwritten_model_file_keeps_its_mode(small_fit, tmp_path):
    path = tmp_path / "m.nc"
    small_fit[0].save(path)
    for mode in (0o640, 0o604):
        os.chmod(path, mode)
        small_fit[0].save(path)
        assert stat.S_IMODE(os.stat(path).st_mode) == mode


def test_save_removes_stale_temporaries_of_the_same_target_only(small_fit, tmp_path):
    stale = tmp_path / ".m.nc.0123456789abcdef.tmp"  # left by a killed save
    legacy = tmp_path / ".m.nc.k3j_x9a2.tmp"  # tempfile.mkstemp's name in bayesgen 0.1
    recent = tmp_path / ".m.nc.fedcba9876543210.tmp"  # perhaps a save in progress
    other = tmp_path / ".n.nc.0123456789abcdef.tmp"  # another model's
    for path in (stale, legacy, recent, other):
        path.write_bytes(b"half a model")
    hours_ago = time.time() - 2 * 3600
    for path in (stale, legacy, other):
        os.utime(path, (hours_ago, hours_ago))
    small_fit[0].save(tmp_path / "m.nc")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["m.nc", recent.name, other.name])


@pytest.mark.parametrize(
    ("param", "value", "expected"),
    [
        ("random_seed", np.int64(3), 3),
        ("alpha", np.float32(0.5), 0.5),
        ("class_alpha", np.float64(2.0), 2.0),
        ("prior_draws", np.int32(10), 10),
    ],
)
def test_numpy_scalar_hyperparameters_save_and_load_equal(small_fit, tmp_path, param, value,
                                                          expected):  # fmt: skip
    _, X, y, options = small_fit
    est = bayesgen.MultinomialNB(**{**options, param: value}).fit(X, y)
    est.save(tmp_path / "m.nc")
    loaded = bayesgen.load(tmp_path / "m.nc")
    assert loaded.get_params()[param] == expected == value
    assert type(loaded.get_params()[param]) is type(expected)


def test_gda_prior_of_numpy_arrays_round_trips(tmp_path):
    from bayesgen import NormalInverseWishart

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(12, 2)), np.arange(12) % 2
    prior = NormalInverseWishart(mean=np.zeros(2), kappa=np.float64(0.5), dof=np.int64(5))
    est = bayesgen.GaussianDiscriminantAnalysis(
        prior=prior, inference="conjugate", draws=20, prior_draws=0, compute_map=False
    ).fit(X, y)
    est.save(tmp_path / "g.nc")
    loaded = bayesgen.load(tmp_path / "g.nc").prior
    assert loaded.kappa == 0.5 and loaded.dof == 5 and loaded.scale is None
    np.testing.assert_array_equal(loaded.mean, [0.0, 0.0])


def test_hyperparameter_that_json_cannot_hold_is_named(small_fit, tmp_path):
    est = small_fit[0]
    est.set_params(random_seed=np.random.default_rng(0))
    try:
        with pytest.raises(ValueError, match=r"random_seed: cannot store Generator"):
            est.save(tmp_path / "m.nc")
    finally:
        est.set_params(random_seed=0)
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------------------------
# Tampered model files: each a good file altered with xarray; load names the problem.


@pytest.fixture(scope="module")
def good_model(small_fit, tmp_path_factory):
    path = tmp_path_factory.mktemp("good") / "good.nc"
    # Drawn, so that the file holds the draws these tests tamper with.
    assert "posterior" in small_fit[0].idata_.children
    small_fit[0].save(path)
    return path


def _group(tree, name, change):
    tree[name] = change(tree[name].to_dataset())


def _wide_posterior(tree):
    n = 10_000
    posterior = tree["posterior"].to_dataset()
    feature_prob = np.full((2, 20, 2, n), 1.0 / n)
    tree["posterior"] = posterior.drop_vars(["feature_prob", "feature"]).assign(
        feature_prob=(("chain", "draw", "class", "feature"), feature_prob),
        feature=[f"w{j}" for j in range(n)],
    )


def _set_attr(key, value):
    def change(tree):
        tree.attrs = {**tree.attrs, key: value}

    return change


def _drop_attr(key):
    def change(tree):
        tree.attrs = {k: v for k, v in tree.attrs.items() if k != key}

    return change


def _params(**changes):
    import json

    def change(tree):
        params = {**json.loads(tree.attrs["params"]), **changes}
        tree.attrs = {**tree.attrs, "params": json.dumps(params)}

    return change


def _drop_group(name):
    def change(tree):
        del tree[name]

    return change


TAMPERED = {
    "posterior of 10,000 features": (
        _wide_posterior,
        "the 'posterior' group has 10000 entries along 'feature' but the closed_form group has 3",
    ),
    "relabelled BernoulliNB": (
        _set_attr("estimator", "BernoulliNB"),
        "the estimator attribute says BernoulliNB but the closed_form group is of model "
        "'multinomial_nb'",
    ),
    "alpha -5": (_params(alpha=-5), "params: alpha must be a positive number; got -5"),
    "alpha NaN": (_params(alpha=float("nan")), "params: alpha must be a positive number"),
    "alpha unlike the closed form": (
        _params(alpha=2.0),
        "params say alpha=2.0 but the closed_form group was computed with alpha=1.0",
    ),
    "class_alpha a string": (_params(class_alpha="1"), "class_alpha must be a positive number"),
    "unknown hyperparameter": (_params(gamma=1), "MultinomialNB has no hyperparameters ['gamma']"),
    "all-NaN posterior": (
        lambda t: _group(t, "posterior", lambda d: d * np.nan),
        "posterior 'class_prob' holds 80 NaN or infinite draws of 80",
    ),
    "probabilities above 1": (
        lambda t: _group(t, "posterior", lambda d: d.assign(feature_prob=d["feature_prob"] * 4)),
        "posterior 'feature_prob' holds values outside [0, 1]",
    ),
    # Without its seed (a conjugate fit's file may leave the draws out: they follow from it).
    "no posterior": (
        lambda t: [_drop_group("posterior")(t), _drop_attr("conjugate_posterior_seed")(t)],
        "the 'posterior' group is missing",
    ),
    "no closed form": (_drop_group("closed_form"), "the 'closed_form' group is missing"),
    "no feature_prob draws": (
        lambda t: _group(t, "posterior", lambda d: d.drop_vars("feature_prob")),
        "the 'posterior' group has no variable 'feature_prob'",
    ),
    "no class_count": (
        lambda t: _group(t, "closed_form", lambda d: d.drop_vars("class_count")),
        "the 'closed_form' group has no variable 'class_count'",
    ),
    "transposed draws": (
        lambda t: _group(t, "posterior", lambda d: d.transpose("chain", "draw", "feature", ...)),
        "posterior 'feature_prob' has dims ('chain', 'draw', 'feature', 'class'); expected "
        "('chain', 'draw', 'class', 'feature')",
    ),
    "prior of other classes": (
        lambda t: _group(t, "prior", lambda d: d.assign_coords({"class": ["eggs", "spam"]})),
        "the 'prior' group's class names ['eggs', 'spam'] differ from the closed_form group's "
        "['ham', 'spam']",
    ),
    "posterior of other features": (
        lambda t: _group(t, "posterior", lambda d: d.assign_coords(feature=["a", "b", "c"])),
        "the 'posterior' group's feature names ['a', 'b', 'c'] differ",
    ),
    "duplicate feature names": (
        lambda t: [
            _group(t, g, lambda d: d.assign_coords(feature=["x", "x", "y"]))
            for g in ("posterior", "prior", "closed_form", "constant_data")
        ],
        "the closed_form group's feature names are not unique",
    ),
    "NaN closed form": (
        lambda t: _group(
            t, "closed_form", lambda d: d.assign(feature_prob=d["feature_prob"] * np.nan)
        ),
        "closed_form 'feature_prob' holds NaN or infinite values",
    ),
    "no params": (_drop_attr("params"), "the 'params' attribute (the hyperparameters) is missing"),
    "params not JSON": (
        _set_attr("params", "{alpha: 1"),
        "the 'params' attribute is not valid JSON",
    ),
    "params a list": (_set_attr("params", "[1, 2]"), "expected a JSON object; got list"),
    "no estimator": (_drop_attr("estimator"), "unknown estimator None"),
    "unknown estimator": (_set_attr("estimator", "os.system"), "unknown estimator 'os.system'"),
    "no format version": (_drop_attr("format_version"), "format_version: expected an integer"),
    "newer format version": (_set_attr("format_version", 99), "uses model format 99, newer"),
}


@pytest.mark.parametrize("case", TAMPERED, ids=str)
def test_tampered_model_file_names_the_file_and_the_problem(case, good_model, tmp_path):
    change, fragment = TAMPERED[case]
    tree = xr.load_datatree(good_model, engine="netcdf4")
    change(tree)
    path = tmp_path / "tampered.nc"
    tree.to_netcdf(path, engine="netcdf4")
    with pytest.raises(ValueError) as raised:
        bayesgen.load(path)
    message = str(raised.value)
    assert message.startswith(f"{str(path)!r} is not a valid bayesgen model file: "), message
    assert fragment in message


def test_tampered_model_file_in_the_cli_is_one_error_line(good_model, tmp_path, capsys):
    tree = xr.load_datatree(good_model, engine="netcdf4")
    _params(alpha=-5)(tree)
    tree.to_netcdf(tmp_path / "t.nc", engine="netcdf4")
    assert main(["compare", str(tmp_path / "t.nc")]) == 2
    line = _one_error_line(capsys.readouterr().err, "compare")
    assert line.endswith("alpha must be a positive number; got -5.")


def test_untampered_copy_loads(good_model, tmp_path):
    # the round trip the tampering tests start from: xarray itself changes nothing
    xr.load_datatree(good_model, engine="netcdf4").to_netcdf(tmp_path / "copy.nc")
    assert isinstance(bayesgen.load(tmp_path / "copy.nc"), bayesgen.MultinomialNB)


# --------------------------------------------------------------------------------------------
# Reports: built aside and swapped in.


@pytest.fixture
def quick_report(monkeypatch):
    """Reports with two plots only (the file handling is under test, not the plots)."""
    from bayesgen.plotting import plots, report

    full_plan = report._plan

    def plan(*args, **kwargs):
        sections = list(full_plan(*args, **kwargs))
        return [s for s in sections if s[0].file in ("trace.png", "rank.png")]

    monkeypatch.setattr(report, "_plan", plan)
    return report, plots


# A plot fails in this thread; the summary and the comparison in the report's second thread.
@pytest.mark.parametrize("part", ["plot_rank", "write_summary", "compare"])
def test_failed_report_leaves_the_previous_one_byte_identical(small_fit, tmp_path, quick_report,
                                                              monkeypatch, part):  # fmt: skip
    report, plots = quick_report
    out = tmp_path / "report"
    report.report(small_fit[0], out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert {"index.html", "summary.csv", "comparison.csv", "trace.png", "rank.png"} <= set(before)

    def broken(*args, **kwargs):
        raise RuntimeError(f"{part} failed")

    owner = {"plot_rank": plots, "write_summary": report, "compare": report.checks}[part]
    monkeypatch.setattr(owner, part, broken)
    with pytest.raises(RuntimeError, match=f"{part} failed"):
        report.report(small_fit[0], out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]  # no temporary left


def test_report_does_not_write_through_a_planted_link(small_fit, tmp_path, quick_report):
    report, _ = quick_report
    out = tmp_path / "report"
    report.report(small_fit[0], out)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    (out / "summary.csv").unlink()
    (out / "summary.csv").symlink_to(victim)
    report.report(small_fit[0], out)
    assert victim.read_text() == "keep me\n"
    assert not (out / "summary.csv").is_symlink()
    assert (out / "summary.csv").read_text().startswith(",mean,sd")


def test_report_keeps_the_folder_mode_and_escapes_its_csvs(tmp_path, quick_report):
    report, _ = quick_report
    X = COUNTS[["cheap", "offer", "win"]].rename(columns={"win": "=cmd|' /C calc'!A0"})
    y = np.where(COUNTS["label"] == "ham", "-ham", "+spam")
    est = bayesgen.MultinomialNB(inference="conjugate", draws=20, compute_map=False).fit(X, y)
    out = tmp_path / "report"
    out.mkdir(mode=0o750)
    os.chmod(out, 0o750)
    report.report(est, out)
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o750
    for name in ("summary.csv", "comparison.csv"):
        assert _formula_cells(out / name) == [], name
    assert "'+spam" in (out / "comparison.csv").read_text()


def test_report_into_an_empty_existing_folder_is_fine(small_fit, tmp_path, quick_report):
    report, _ = quick_report
    index = report.report(small_fit[0], tmp_path)
    assert index == tmp_path / "index.html" and index.is_file()


def test_compare_of_a_model_that_disagrees_still_exits_1(small_fit, tmp_path, capsys):
    est = bayesgen.load(_saved(small_fit[0], tmp_path / "m.nc"))
    posterior = est.idata_["posterior"].to_dataset()
    est.idata_["posterior"] = posterior.assign(feature_prob=posterior["feature_prob"] ** 3)
    est.save(tmp_path / "bad.nc")
    assert main(["compare", str(tmp_path / "bad.nc")]) == 1
    assert "NOT OK" in capsys.readouterr().out


def _saved(est, path):
    est.save(path)
    return path
