"""The ``bayesgen`` command: fit, predict, compare, report and demo.

Every command prints ``--help``. Every expected failure — bad arguments or data, a file that
cannot be read or written (a folder, a full disk, no permission), a damaged model file, memory
running out — ends with one line ``bayesgen COMMAND: error: ...`` on stderr and exit status 2,
never a traceback; ``compare`` exits 1 when the posterior and the closed forms disagree, and an
interrupt (Ctrl-C) exits 130. Output files and folders are written atomically, missing parent
folders are created, and CSV cells that a spreadsheet would run as formulas are escaped.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

from bayesgen import __version__
from bayesgen.families import FAMILIES

#: ``bayesgen fit MODEL``: the command-line name of each model -> its estimator class name
MODELS = {model_family.cli_name: model_family.estimator for model_family in FAMILIES.values()}


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


# -- argument parsing --------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bayesgen",
        description="Bayesian generative classifiers checked against their closed forms.",
    )
    parser.add_argument("--version", action="version", version=f"bayesgen {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    fit = commands.add_parser(
        "fit",
        help="fit a model to a CSV/TSV/Parquet file and save it",
        description="Fit a Bayesian generative classifier and save it as one NetCDF file.",
    )
    fit.add_argument("model", choices=sorted(MODELS), help="which classifier")
    fit.add_argument("data", help="a .csv, .tsv or .parquet file")
    fit.add_argument("--target", required=True, help="the column holding the class labels")
    _add_feature_options(fit)
    fit.add_argument(
        "--alpha",
        type=_feature_smoothing,
        default=1.0,
        help="smoothing λ (naive Bayes); 'evidence' to choose it by the evidence, "
        "'evidence_per_class' for one λ per class where the evidence supports it, or one λ "
        "per class, comma-separated in the order of the sorted class labels",
    )
    fit.add_argument(
        "--prior-mean",
        choices=("uniform", "pooled"),
        default="uniform",
        help="prior mean of the feature probabilities (naive Bayes): uniform (add-λ) or the "
        "class-pooled frequencies of the training data",
    )
    fit.add_argument(
        "--class-alpha",
        type=_smoothing,
        default=1.0,
        help="class prior concentration, or 'evidence' (naive Bayes)",
    )
    fit.add_argument("--binarize", type=_finite_float, default=None, help="threshold (Bernoulli)")
    fit.add_argument(
        "--cov-prior",
        choices=["conjugate", "lkj"],
        default="conjugate",
        help="covariance prior (GDA)",
    )
    fit.add_argument("--inference", choices=["nuts", "conjugate"], default="nuts")
    fit.add_argument("--draws", type=_positive_int, default=1000, help="posterior draws per chain")
    fit.add_argument(
        "--tune", type=_non_negative_int, default=1000, help="NUTS tuning steps per chain"
    )
    fit.add_argument("--chains", type=_positive_int, default=2)
    fit.add_argument("--seed", type=_non_negative_int, default=None, help="random seed")
    fit.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    fit.add_argument("--no-map", action="store_true", help="skip the MAP optimisation")
    fit.add_argument(
        "--output",
        help="model file, .nc (default models/<data>-<model>.nc); missing folders are "
        "created, an existing file is replaced only once the new one is complete",
    )
    fit.add_argument("--quiet", action="store_true", help="no progress bars")
    fit.set_defaults(run=_run_fit)

    predict = commands.add_parser(
        "predict",
        help="class probabilities with credible intervals, as CSV",
        description="Predict with a saved model: the class, p(class | x) (posterior mean) and "
        "its equal-tailed credible interval for each row. A model fitted from --text-column "
        "maps new texts onto the vocabulary it was fitted with. Labels that start with = + - @ "
        "get a leading ' so that spreadsheets do not run them as formulas.",
    )
    predict.add_argument("model_file", help="a saved model (.nc)")
    predict.add_argument("data", help="a .csv, .tsv or .parquet file")
    _add_feature_options(predict)
    predict.add_argument("--prob", type=_probability, default=0.94, help="interval mass (0.94)")
    predict.add_argument(
        "--output",
        help="CSV file to write (default: standard output); missing folders are created",
    )
    predict.set_defaults(run=_run_predict)

    compare = commands.add_parser(
        "compare",
        help="compare a saved model's posterior with its closed forms",
        description="Print the posterior-vs-closed-form comparison of a saved model; exit "
        "status 1 when some parameter disagrees or the diagnostics are not clean.",
    )
    compare.add_argument("model_file", help="a saved model (.nc)")
    compare.set_defaults(run=_run_compare)

    loo = commands.add_parser(
        "loo",
        help="rank saved models by their leave-one-out log score of the labels",
        description="Print bayesgen.compare_models for saved models fitted to the same "
        "labelled rows: elpd_loo = sum of log p(y_i | x_i, data without row i), exact for the "
        "conjugate models. Each model is named by its file's stem.",
    )
    loo.add_argument("model_files", nargs="+", help="saved models (.nc) of the same rows")
    loo.set_defaults(run=_run_loo)

    report = commands.add_parser(
        "report",
        help="write an HTML report with ArviZ plots",
        description="Write summary.csv, comparison.csv, PNG plots and index.html for a saved "
        "model; with --data and --target also calibration and predictive-interval plots.",
    )
    report.add_argument("model_file", help="a saved model (.nc)")
    report.add_argument(
        "--output-dir",
        help="folder (default reports/<model file stem>): new, empty, or holding an earlier "
        "report, which is replaced only once the new report is complete; missing parent "
        "folders are created; a symbolic link is refused",
    )
    report.add_argument("--data", help="held-out data (.csv/.tsv/.parquet)")
    report.add_argument("--target", help="the class column of --data")
    _add_feature_options(report)
    report.set_defaults(run=_run_report)

    demo = commands.add_parser(
        "demo",
        help="run every model on bundled data: comparisons, reports and saved models",
        description="Print the closed forms of the lecture example, then fit every model "
        "(digits counts: multinomial; binarized digits: Bernoulli; binned digits: categorical; "
        "wine: GDA and QDA; a bundled text corpus: multinomial and Bernoulli), print each "
        "comparison verdict, and write reports under reports/ and models under models/.",
    )
    demo.add_argument(
        "--dataset",
        choices=["builtin", "sms-spam"],
        default="builtin",
        help="text corpus for the text models (default: the bundled one)",
    )
    demo.add_argument("--data-path", help="local SMS Spam Collection file (label<TAB>text)")
    demo.add_argument(
        "--download",
        action="store_true",
        help="download the SMS Spam Collection when no --data-path is given",
    )
    demo.add_argument("--inference", choices=["nuts", "conjugate"], default="nuts")
    demo.add_argument("--draws", type=_positive_int, default=1000, help="posterior draws per chain")
    demo.add_argument(
        "--tune", type=_non_negative_int, default=500, help="NUTS tuning steps per chain"
    )
    demo.add_argument("--seed", type=_non_negative_int, default=0)
    demo.add_argument("--alpha", type=_positive_float, default=1.0, help="smoothing λ")
    demo.add_argument("--models-dir", default="models")
    demo.add_argument("--reports-dir", default="reports")
    demo.add_argument("--no-reports", action="store_true", help="skip the HTML reports")
    demo.add_argument("--no-map", action="store_true", help="skip the MAP optimisations")
    demo.add_argument(
        "--workers",
        type=_positive_int,
        default=None,
        help="models fitted and reported at a time, each in its own process (default: 2 "
        "where 2 cores or more are idle, else 1); 1 runs them in this process with PyMC's "
        "progress bars",
    )
    demo.add_argument(
        "--export",
        metavar="DIR",
        help="write the demo's data (messages.csv, new_messages.csv, digits.csv, wine.csv) "
        "into DIR for the command-line examples, print commands that use them, and stop",
    )
    demo.add_argument(
        "--quiet",
        action="store_true",
        help="no progress lines (on standard error) and no progress bars; results still print",
    )
    demo.set_defaults(run=_run_demo)
    return parser


def _positive_int(text: str) -> int:
    return _number(text, int, "a positive integer", lambda v: v >= 1)


def _non_negative_int(text: str) -> int:
    return _number(text, int, "an integer >= 0", lambda v: v >= 0)


def _positive_float(text: str) -> float:
    return _number(text, float, "a finite number > 0", lambda v: math.isfinite(v) and v > 0)


def _smoothing(text: str) -> float | str:
    """A λ > 0, or "evidence" (chosen at fit by :mod:`bayesgen.smoothing`)."""
    if text == "evidence":
        return text
    expected = "a finite number > 0 or 'evidence'"
    return _number(text, float, expected, lambda v: math.isfinite(v) and v > 0)


def _feature_smoothing(text: str) -> float | str | list[float]:
    """``--alpha``: as :func:`_smoothing`, or "evidence_per_class", or one λ > 0 per class
    separated by commas (their number is checked against the classes at fit)."""
    if text in ("evidence", "evidence_per_class"):
        return text
    expected = (
        "a finite number > 0, 'evidence', 'evidence_per_class' or numbers > 0 separated by "
        "commas (one per class)"
    )
    try:
        values = [_number(part, float, expected, _is_positive) for part in text.split(",")]
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected {expected}; got {text!r}") from None
    return values[0] if len(values) == 1 else values


def _is_positive(value: float) -> bool:
    return math.isfinite(value) and value > 0


def _finite_float(text: str) -> float:
    return _number(text, float, "a finite number", math.isfinite)


def _probability(text: str) -> float:
    return _number(text, float, "a number in (0, 1)", lambda v: 0 < v < 1)


def _number(text: str, kind, expected: str, ok):
    """argparse type: ``kind(text)`` when ``ok``; argparse names the option in its error."""
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not ok(value):
        raise argparse.ArgumentTypeError(f"expected {expected}; got {text!r}")
    return value


def _add_feature_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--text-column", help="a column of raw text (bag/set of words)")
    parser.add_argument(
        "--features", help="comma-separated feature columns (default: all but the target)"
    )


# -- commands ----------------------------------------------------------------------------------


def _run_fit(args: argparse.Namespace) -> int:
    import bayesgen
    from bayesgen import io
    from bayesgen.datasets import read_table

    output = Path(args.output or Path("models") / f"{Path(args.data).stem}-{args.model}.nc")
    io.check_output_path(output, argument="--output")  # before a fit that may take minutes
    if output.suffix != ".nc":
        raise ValueError(f"--output: expected a .nc file name; got {str(output)!r}.")
    table = read_table(args.data)
    y = _labels(table, args.target, args.data)
    estimator_class = getattr(bayesgen, MODELS[args.model])
    # A set-of-words model takes presence (0/1) of each word, the others its count.
    names_taken = estimator_class().get_params(deep=False)
    binary = "binarize" in names_taken
    X, names = _features(table, args, exclude=args.target, binary=binary)
    options = {
        "inference": args.inference,
        "draws": args.draws,
        "tune": args.tune,
        "chains": args.chains,
        "random_seed": args.seed,
        "dtype": args.dtype,
        "compute_map": not args.no_map,
        "progressbar": not args.quiet,
    }
    # Each option goes to the models that have it (GDA has no λ, only Bernoulli binarizes).
    model_options = {
        "alpha": args.alpha,
        "class_alpha": args.class_alpha,
        "prior_mean": args.prior_mean,
        "binarize": args.binarize,
        "cov_prior": args.cov_prior,
    }
    options.update({key: value for key, value in model_options.items() if key in names_taken})
    estimator = estimator_class(**options)
    estimator.fit(X, y, feature_names=names)
    if args.text_column:
        # Saved with the model, so that predict maps new texts onto this vocabulary (the
        # feature names) the same way; a refit replaces closed_form_ and forgets it.
        estimator.closed_form_.attrs[_TEXT_COLUMN] = args.text_column
        estimator.closed_form_.attrs[_TEXT_BINARY] = int(binary)
    estimator.save(output)
    print(
        f"saved {output} ({MODELS[args.model]}, {len(y)} rows, {len(estimator.classes_)} "
        f"classes, {estimator.n_features_in_} features)"
    )
    return 0


def _run_predict(args: argparse.Namespace) -> int:
    import pandas as pd

    from bayesgen import io
    from bayesgen.datasets import read_table

    if args.output:
        io.check_output_path(args.output, argument="--output")
    estimator = io.load(args.model_file)
    table = read_table(args.data)
    X, _ = _features(table, args, exclude=None, estimator=estimator)
    mean = estimator.predict_proba(X)
    lower, upper = estimator.predict_proba_interval(X, prob=args.prob)
    columns = {"predicted": estimator.classes_[np.argmax(mean, axis=1)]}
    for k, name in enumerate(estimator.classes_):
        columns[f"p_{name}"] = mean[:, k]
        columns[f"p_{name}_lower"] = lower[:, k]
        columns[f"p_{name}_upper"] = upper[:, k]
    frame = pd.DataFrame(columns)
    if args.output:
        io.write_csv(frame, args.output, index=False)
        print(f"wrote {args.output} ({len(frame)} rows)")
    else:
        io.escape_formulas(frame).to_csv(sys.stdout, index=False)
    return 0


def _run_compare(args: argparse.Namespace) -> int:
    from bayesgen.checks import compare
    from bayesgen.io import load

    comparison = compare(load(args.model_file))
    print(comparison)
    return 0 if comparison.ok else 1


def _run_loo(args: argparse.Namespace) -> int:
    from bayesgen.io import load
    from bayesgen.loo import compare_models

    names = [Path(path).stem for path in args.model_files]
    if len(set(names)) != len(names):
        raise ValueError(f"model_files: expected files with distinct names; got {names}.")
    table = compare_models(
        {name: load(path) for name, path in zip(names, args.model_files, strict=True)}
    )
    print(table.to_string())
    return 0


def _run_report(args: argparse.Namespace) -> int:
    from bayesgen import io
    from bayesgen.reporting import report

    out_dir = Path(args.output_dir or Path("reports") / Path(args.model_file).stem)
    io.check_output_path(out_dir, argument="--output-dir", folder=True)
    if args.target and not args.data:
        raise ValueError("--target: only with --data (the class column of the held-out data).")
    if args.data and not args.target:
        raise ValueError("--target: required with --data (the class column).")
    estimator = io.load(args.model_file)
    X_test = y_test = None
    if args.data:
        from bayesgen.datasets import read_table

        table = read_table(args.data)
        y_test = _labels(table, args.target, args.data)
        X_test, _ = _features(table, args, exclude=args.target, estimator=estimator)
    index = report(estimator, out_dir, X_test=X_test, y_test=y_test)
    print(f"wrote {index}")
    return 0


#: closed_form attrs of a model fitted by ``bayesgen fit --text-column``.
_TEXT_COLUMN, _TEXT_BINARY = "text_column", "text_binary"


def _labels(table, target: str, data) -> np.ndarray:
    """The class column, without missing values."""
    if target not in table.columns:
        raise ValueError(
            f"--target: no column {target!r} in {data}; columns are {list(table.columns)[:10]}."
        )
    labels = table[target]
    missing = np.flatnonzero(labels.isna().to_numpy())
    if missing.size:
        raise ValueError(
            f"--target: column {target!r} of {data} has no label in {_rows(missing)}; fill or "
            "drop those rows."
        )
    return labels.to_numpy()


def _rows(positions: np.ndarray) -> str:
    """Data rows counted from 1 (a CSV's line number is one more, for its header)."""
    shown = ", ".join(str(p + 1) for p in positions[:5])
    more = f" and {positions.size - 5} more" if positions.size > 5 else ""
    noun = "row" if positions.size == 1 else "rows"
    return f"data {noun} {shown}{more} (counting from 1 after the header)"


def _features(table, args, *, exclude, binary: bool = False, estimator=None):
    """The feature matrix of a table: a vectorized text column or numeric columns.

    Returns the matrix and the feature names to fit with (None when the table's own column
    names serve).
    """
    text_column = estimator.closed_form_.attrs.get(_TEXT_COLUMN) if estimator else None
    if args.text_column and args.features:
        raise ValueError("--text-column and --features: pass one of them, not both.")
    if args.text_column:
        from sklearn.feature_extraction.text import CountVectorizer

        if args.text_column not in table.columns:
            raise ValueError(
                f"--text-column: no column {args.text_column!r} in the data; columns are "
                f"{list(table.columns)[:10]}."
            )
        if args.text_column == exclude:
            raise ValueError(f"--text-column: {exclude!r} is the --target column.")
        texts = table[args.text_column].fillna("").astype(str)
        if estimator is None:
            vectorizer = CountVectorizer(binary=binary)
            try:
                return vectorizer.fit_transform(texts), vectorizer.get_feature_names_out()
            except ValueError as error:  # "empty vocabulary; perhaps the documents only..."
                raise ValueError(f"--text-column {args.text_column!r}: {error}") from None
        if text_column is None:
            raise ValueError(
                f"--text-column: this {type(estimator).__name__} was not fitted from a text "
                f"column (its {estimator.n_features_in_} features are columns such as "
                f"{[str(f) for f in estimator.closed_form_['feature'].values[:3]]}); pass "
                "those columns instead."
            )
        # The vocabulary is the model's feature names, in the fitted order.
        vocabulary = {str(w): j for j, w in enumerate(estimator.closed_form_["feature"].values)}
        binary = bool(estimator.closed_form_.attrs.get(_TEXT_BINARY, 0))
        vectorizer = CountVectorizer(binary=binary, vocabulary=vocabulary)
        return vectorizer.transform(texts), None
    if text_column is not None and not args.features:
        raise ValueError(
            f"--text-column: the model was fitted from the text column {text_column!r}; pass "
            f"--text-column {text_column} (or the column holding the texts)."
        )
    if args.features is not None:
        columns = [c.strip() for c in args.features.split(",") if c.strip()]
        if not columns:
            raise ValueError(
                f"--features: expected comma-separated column names; got {args.features!r}."
            )
        missing = [c for c in columns if c not in table.columns]
        if missing:
            raise ValueError(
                f"--features: columns {missing} are not in the data; columns are "
                f"{list(table.columns)[:10]}."
            )
        if exclude in columns:
            raise ValueError(f"--features: {exclude!r} is the --target column.")
    elif estimator is not None and getattr(estimator, "feature_names_in_", None) is not None:
        columns = [str(c) for c in estimator.feature_names_in_]
        missing = [c for c in columns if c not in table.columns]
        if missing:
            raise ValueError(f"data: the model needs feature columns {missing[:10]}.")
    else:
        columns = [c for c in table.columns if c != exclude]
        if not columns:
            raise ValueError("data: no feature columns besides the --target column.")
    frame = table[columns]
    text = [str(c) for c in columns if not _is_numeric(frame[c])]
    if text:
        raise ValueError(
            f"data: columns {text[:10]} are not numeric; choose numeric columns with --features, "
            "or pass a column of raw text as --text-column."
        )
    for column in columns:
        missing = np.flatnonzero(frame[column].isna().to_numpy())
        if missing.size:
            raise ValueError(f"data: column {column!r} has no value in {_rows(missing)}.")
    return frame, None


def _is_numeric(series) -> bool:
    import pandas as pd

    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def _run_demo(args: argparse.Namespace) -> int:
    from bayesgen import demo

    if args.workers is None:
        args.workers = demo.default_workers()
    return demo.run(args)


if __name__ == "__main__":
    sys.exit(main())
