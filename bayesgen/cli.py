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
import warnings
from pathlib import Path
from textwrap import dedent

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


# -- argument parsing --------------------------------------------------------------------------


class _HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Descriptions keep the line breaks they are written with; every option's help ends with
    its default, where it has one (not for flags, whose default is off, nor for options whose
    default depends on the model, which say theirs in words)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default in (None, False) or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bayesgen",
        description="Bayesian generative classifiers checked against their closed forms.",
        formatter_class=_HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"bayesgen {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    fit = commands.add_parser(
        "fit",
        help="fit a model to a CSV/TSV/Parquet file and save it",
        formatter_class=_HelpFormatter,
        description=dedent(
            """\
            Fit a Bayesian generative classifier and save it as one NetCDF file.

            The features are a column of raw text (--text-column: its bag of words, or set
            of words for bernoulli) or numeric columns (--features, default all but the
            target). Options that the chosen model does not take are refused: --alpha and
            --prior-mean are for the naive Bayes models (multinomial, bernoulli,
            categorical), --binarize for bernoulli, --cov-prior for gda, --tune for
            --inference nuts."""
        ),
    )
    fit.add_argument("model", choices=sorted(MODELS), help="which classifier")
    fit.add_argument("data", help="a .csv, .tsv or .parquet file (or any name with --format)")
    fit.add_argument("--target", required=True, help="the column holding the class labels")
    _add_feature_options(fit)
    fit.add_argument(
        "--alpha",
        type=_feature_smoothing,
        default=None,
        help="smoothing λ of the feature probabilities (naive Bayes; default 1.0): a number, "
        "'evidence' to choose it by the evidence, 'evidence_per_class' for one λ per class "
        "where the evidence supports it, or one λ per class label, as in spam=0.5,ham=2",
    )
    fit.add_argument(
        "--prior-mean",
        choices=("uniform", "pooled"),
        default=None,
        help="prior mean of the feature probabilities (naive Bayes; default uniform): uniform "
        "(add-λ) or the class-pooled frequencies of the training data",
    )
    fit.add_argument(
        "--class-alpha",
        type=_smoothing,
        default=1.0,
        help="Dirichlet concentration of the class probabilities, or 'evidence' to choose it "
        "by the evidence (naive Bayes)",
    )
    fit.add_argument(
        "--binarize",
        type=_finite_float,
        default=None,
        help="threshold above which a count is 1 (bernoulli; default: none, for a text column "
        "or features that are already 0/1)",
    )
    fit.add_argument(
        "--cov-prior",
        choices=["conjugate", "lkj"],
        default=None,
        help="covariance prior (gda; default conjugate): normal-inverse-Wishart, or LKJ "
        "(--inference nuts only)",
    )
    fit.add_argument(
        "--inference",
        choices=["nuts", "conjugate"],
        default="nuts",
        help="NUTS in PyMC, or exact draws from the conjugate posterior (nothing compiled)",
    )
    # Left out, these take the estimators' defaults (shown in the help as they are now).
    defaults = _estimator_defaults()
    fit.add_argument(
        "--draws",
        type=_positive_int,
        default=None,
        help=f"posterior draws per chain (default {defaults['draws']})",
    )
    fit.add_argument(
        "--tune",
        type=_non_negative_int,
        default=None,
        help=f"NUTS tuning steps per chain (--inference nuts; default {defaults['tune']})",
    )
    fit.add_argument(
        "--chains",
        type=_positive_int,
        default=None,
        help=f"chains of draws (default {defaults['chains']})",
    )
    fit.add_argument(
        "--seed", type=_non_negative_int, default=None, help="random seed (default: fresh)"
    )
    fit.add_argument(
        "--dtype",
        choices=["float64", "float32"],
        default="float64",
        help="floating-point type of the draws (float32 halves their memory)",
    )
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
        formatter_class=_HelpFormatter,
        description=dedent(
            """\
            Predict with a saved model. For each row of the data: an id (--id-column, or
            the data row's number counting from 1 after the header), the class, p(class | x)
            (posterior mean) and its equal-tailed credible interval, to 6 significant digits.

            A model fitted from a text column reads the texts of the column of that name
            (or of --text-column) and maps them onto the vocabulary it was fitted with.
            Cells that start with = + - @ get a leading ' so that spreadsheets do not run
            them as formulas."""
        ),
    )
    predict.add_argument("model_file", help="a saved model (.nc)")
    predict.add_argument("data", help="a .csv, .tsv or .parquet file (or any name with --format)")
    _add_feature_options(predict)
    predict.add_argument(
        "--id-column",
        help="a column of the data to write as each row's id (default: a column 'row', the "
        "data row's number counting from 1 after the header)",
    )
    predict.add_argument("--prob", type=_probability, default=0.94, help="interval mass")
    predict.add_argument(
        "--output",
        help="CSV file to write (default: standard output); missing folders are created",
    )
    predict.set_defaults(run=_run_predict)

    compare = commands.add_parser(
        "compare",
        help="compare a saved model's posterior with its closed forms",
        formatter_class=_HelpFormatter,
        description=dedent(
            """\
            Print the posterior-vs-closed-form comparison of a saved model.

            Exit status 1 when some parameter disagrees or the diagnostics are not clean."""
        ),
    )
    compare.add_argument("model_file", help="a saved model (.nc)")
    compare.set_defaults(run=_run_compare)

    loo = commands.add_parser(
        "loo",
        help="rank saved models by their leave-one-out log score of the labels",
        formatter_class=_HelpFormatter,
        description=dedent(
            """\
            Print bayesgen.compare_models for saved models fitted to the same labelled rows:
            elpd_loo = sum of log p(y_i | x_i, data without row i), exact for the conjugate
            models. Each model is named by its file's stem."""
        ),
    )
    loo.add_argument("model_files", nargs="+", help="saved models (.nc) of the same rows")
    loo.set_defaults(run=_run_loo)

    report = commands.add_parser(
        "report",
        help="write an HTML report with ArviZ plots",
        formatter_class=_HelpFormatter,
        description=dedent(
            """\
            Write summary.csv, comparison.csv, PNG plots and index.html for a saved model.

            With --data and --target also calibration and predictive-interval plots."""
        ),
    )
    report.add_argument("model_file", help="a saved model (.nc)")
    report.add_argument(
        "--output-dir",
        help="folder (default reports/<model file stem>): new, empty, or holding an earlier "
        "report, which is replaced only once the new report is complete; missing parent "
        "folders are created; a symbolic link is refused",
    )
    report.add_argument("--data", help="held-out data (.csv/.tsv/.parquet, or --format)")
    report.add_argument("--target", help="the class column of --data")
    _add_feature_options(report)
    report.set_defaults(run=_run_report)

    demo = commands.add_parser(
        "demo",
        help="run every model on bundled data: comparisons, reports and saved models",
        formatter_class=_HelpFormatter,
        description=dedent(
            """\
            Print the closed forms of the lecture example, then fit every model:

              digits counts      multinomial
              binarized digits   bernoulli
              binned digits      categorical
              wine               gda and qda
              a text corpus      multinomial and bernoulli (bundled, or --dataset sms-spam)

            print each comparison verdict, and write reports under reports/ and models
            under models/."""
        ),
    )
    demo.add_argument(
        "--dataset",
        choices=["builtin", "sms-spam"],
        default="builtin",
        help="text corpus for the text models: the bundled one or the SMS Spam Collection",
    )
    demo.add_argument("--data-path", help="local SMS Spam Collection file (label<TAB>text)")
    demo.add_argument(
        "--download",
        action="store_true",
        help="download the SMS Spam Collection when no --data-path is given",
    )
    demo.add_argument(
        "--inference",
        choices=["nuts", "conjugate"],
        default="nuts",
        help="NUTS in PyMC, or exact draws from the conjugate posteriors (much faster)",
    )
    demo.add_argument("--draws", type=_positive_int, default=1000, help="posterior draws per chain")
    demo.add_argument(
        "--tune", type=_non_negative_int, default=500, help="NUTS tuning steps per chain"
    )
    demo.add_argument("--seed", type=_non_negative_int, default=0, help="random seed")
    demo.add_argument("--alpha", type=_positive_float, default=1.0, help="smoothing λ")
    demo.add_argument("--models-dir", default="models", help="folder of the saved models")
    demo.add_argument("--reports-dir", default="reports", help="folder of the HTML reports")
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


def _estimator_defaults() -> dict:
    """The defaults of the inference parameters that every estimator shares."""
    import inspect

    from bayesgen.estimators.models import MultinomialNB

    parameters = inspect.signature(MultinomialNB).parameters
    return {name: parameters[name].default for name in ("draws", "tune", "chains")}


def _positive_int(text: str) -> int:
    return _number(text, int, "a positive integer", lambda v: v >= 1)


def _non_negative_int(text: str) -> int:
    return _number(text, int, "an integer >= 0", lambda v: v >= 0)


def _positive_float(text: str) -> float:
    return _number(text, float, "a finite number > 0", lambda v: math.isfinite(v) and v > 0)


def _smoothing(text: str) -> float | str:
    """A λ > 0, or "evidence" (chosen at fit by :mod:`bayesgen.inference.smoothing`)."""
    if text == "evidence":
        return text
    expected = "a finite number > 0 or 'evidence'"
    return _number(text, float, expected, lambda v: math.isfinite(v) and v > 0)


#: What ``--alpha`` takes, for its error messages.
_ALPHA_EXPECTED = (
    "a finite number > 0, 'evidence', 'evidence_per_class' or one λ > 0 per class label "
    "(e.g. spam=0.5,ham=2)"
)


def _feature_smoothing(text: str) -> float | str | dict[str, float]:
    """``--alpha``: as :func:`_smoothing`, or "evidence_per_class", or one λ > 0 per class
    label as ``label=λ`` pairs separated by commas (their labels are matched against the
    target column at fit, :func:`_per_class_alpha`)."""
    if text in ("evidence", "evidence_per_class"):
        return text
    if "=" not in text:
        if "," in text:
            # The old form: numbers in the order of the sorted labels, which an estimator no
            # longer takes (scikit-learn reads an alpha array as one λ per feature).
            raise argparse.ArgumentTypeError(
                f"one λ per class goes with its class label, as in spam=0.5,ham=2; got "
                f"{text!r}, a list of numbers (no longer taken: it gave the λs to the classes "
                "in the sort order of their labels)"
            )
        return _number(text, float, _ALPHA_EXPECTED, _is_positive)
    per_class: dict[str, float] = {}
    for part in text.split(","):
        label, sep, value = (piece.strip() for piece in part.rpartition("="))
        if not sep or not label:
            raise argparse.ArgumentTypeError(
                f"expected {_ALPHA_EXPECTED}; got {text!r}: {part.strip()!r} is not label=λ"
            )
        if label in per_class:
            raise argparse.ArgumentTypeError(
                f"expected {_ALPHA_EXPECTED}; got {text!r}: class {label!r} is given twice"
            )
        try:
            per_class[label] = _number(value, float, "", _is_positive)
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(
                f"expected {_ALPHA_EXPECTED}; got {text!r}: λ {value!r} of class {label!r} is "
                "not a finite number > 0"
            ) from None
    return per_class


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
    """The options of a command that reads a table: which file format, which columns."""
    parser.add_argument(
        "--text-column",
        help="a column of raw text (bag/set of words); for a model fitted from one, the "
        "default is the column of the name it was fitted with",
    )
    parser.add_argument(
        "--features",
        help="comma-separated feature columns, each named once (default: all but the "
        "target, or those the model was fitted with)",
    )
    parser.add_argument(
        "--format",
        choices=("csv", "tsv", "parquet"),
        default=None,
        dest="file_format",
        help="format of the data file (default: told by its suffix: .csv; .tsv, .tab or "
        ".txt; .parquet or .pq); needed for any other name. TSV has no quoting: each line "
        "is one row, and a quote character is part of its field",
    )
    parser.add_argument(
        "--no-header",
        action="store_true",
        help="the CSV/TSV file has no header line: name its columns with --columns",
    )
    parser.add_argument(
        "--columns",
        help="with --no-header: the name of each column of the file, comma-separated",
    )


def _read_data(args: argparse.Namespace, path):
    """The table at ``path``, read as the command's --format, --no-header and --columns say."""
    from bayesgen.input.datasets import read_table

    columns = None
    if args.columns is not None:
        if not args.no_header:
            raise ValueError(
                "--columns: only with --no-header (the file's header line names its columns)."
            )
        columns = [name.strip() for name in args.columns.split(",")]
    elif args.no_header:
        raise ValueError(
            "--no-header: name the file's columns with --columns, e.g. --columns label,text."
        )
    if args.no_header and args.file_format == "parquet":
        raise ValueError("--no-header: a Parquet file always names its columns.")
    return read_table(
        path, file_format=args.file_format, header=not args.no_header, columns=columns
    )


# -- commands ----------------------------------------------------------------------------------


#: ``fit`` options that only some models take: the option -> the estimator parameter it sets.
#: Left out (None) they take the estimator's default; given to a model without that parameter
#: they are refused (:func:`_check_model_options`), never dropped without a word.
MODEL_OPTIONS = {
    "--alpha": "alpha",
    "--prior-mean": "prior_mean",
    "--binarize": "binarize",
    "--cov-prior": "cov_prior",
}


def _run_fit(args: argparse.Namespace) -> int:
    import bayesgen
    from bayesgen.io import model_files as io

    estimator_class = getattr(bayesgen, MODELS[args.model])
    names_taken = estimator_class().get_params(deep=False)
    _check_model_options(args, names_taken)
    output = Path(args.output or Path("models") / f"{Path(args.data).stem}-{args.model}.nc")
    io.check_output_path(output, argument="--output")  # before a fit that may take minutes
    if output.suffix != ".nc":
        raise ValueError(f"--output: expected a .nc file name; got {str(output)!r}.")
    table = _read_data(args, args.data)
    y = _labels(table, args.target, args.data)
    # A set-of-words model takes presence (0/1) of each word, the others its count.
    binary = "binarize" in names_taken
    X, names = _features(table, args, exclude=args.target, binary=binary)
    options = {
        "inference": args.inference,
        "random_seed": args.seed,
        "dtype": args.dtype,
        "compute_map": not args.no_map,
        "progressbar": not args.quiet,
        "class_alpha": args.class_alpha,
    }
    for name in ("draws", "tune", "chains"):  # left out: the estimator's default
        if getattr(args, name) is not None:
            options[name] = getattr(args, name)
    for name in MODEL_OPTIONS.values():
        value = getattr(args, name)
        if value is not None:
            options[name] = value
    if isinstance(options.get("alpha"), dict):
        options["alpha"] = _per_class_alpha(options["alpha"], y, args.target)
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


def _check_model_options(args: argparse.Namespace, names_taken) -> None:
    """Refuse the options given that the model of ``args.model`` (or its ``--inference``) does
    not take: the fit would otherwise run without them, and the user believe them applied."""
    import bayesgen

    def models_taking(name: str) -> str:
        return ", ".join(
            model
            for model, estimator in sorted(MODELS.items())
            if name in getattr(bayesgen, estimator)().get_params(deep=False)
        )

    refused = [
        (option, args.model, models_taking(name))
        for option, name in MODEL_OPTIONS.items()
        if getattr(args, name) is not None and name not in names_taken
    ]
    if args.class_alpha == "evidence" and "alpha" not in names_taken:
        refused.append(("--class-alpha evidence", args.model, models_taking("alpha")))
    if args.tune is not None and args.inference == "conjugate":
        refused.append(("--tune", "--inference conjugate", "--inference nuts"))
    if refused:
        (option, target, takers), *others = refused
        nor = "".join(f"; nor does {other[0]} apply to {other[1]}" for other in others)
        raise ValueError(
            f"{option} does not apply to {target} (only to {takers}){nor}. Leave out what "
            "does not apply."
        )


def _per_class_alpha(per_class: dict[str, float], labels: np.ndarray, target: str) -> dict:
    """``--alpha label=λ,...`` as the estimator takes it: {class label: λ}, each label of the
    target column's own type (an integer for a column of integers), every class given."""
    classes = {}
    for label in labels:
        classes.setdefault(str(label), label.item() if isinstance(label, np.generic) else label)
    unknown = [label for label in per_class if label not in classes]
    missing = [label for label in classes if label not in per_class]
    if unknown or missing:
        problem = f"no class {unknown} in column {target!r}" if unknown else ""
        if missing:
            problem += f"{'; ' if problem else ''}no λ for class {missing}"
        raise ValueError(
            f"--alpha: expected one λ per class label of column {target!r} "
            f"({', '.join(sorted(classes))}); {problem}."
        )
    return {classes[label]: value for label, value in per_class.items()}


def _run_predict(args: argparse.Namespace) -> int:
    import pandas as pd

    from bayesgen.io import model_files as io

    if args.output:
        io.check_output_path(args.output, argument="--output")
    estimator = io.load(args.model_file)
    table = _read_data(args, args.data)
    ids = _row_ids(table, args.id_column)
    X, _ = _features(table, args, exclude=None, estimator=estimator)
    mean = estimator.predict_proba(X)
    lower, upper = estimator.predict_proba_interval(X, prob=args.prob)
    columns = {ids.name: ids.to_numpy(), "predicted": estimator.classes_[np.argmax(mean, axis=1)]}
    for k, name in enumerate(estimator.classes_):
        columns[f"p_{name}"] = mean[:, k]
        columns[f"p_{name}_lower"] = lower[:, k]
        columns[f"p_{name}_upper"] = upper[:, k]
    if len(columns) < 2 + 3 * len(estimator.classes_):  # an --id-column of an output's name
        raise ValueError(
            f"--id-column: {ids.name!r} is also the name of an output column; rename it."
        )
    frame = pd.DataFrame(columns)
    # 6 significant digits: p and its interval are Monte Carlo estimates, good to a few
    # digits; 17 would only show noise (and triple the file).
    if args.output:
        io.write_csv(frame, args.output, index=False, float_format=_FLOAT_FORMAT)
        print(f"wrote {args.output} ({len(frame)} rows)")
    else:
        io.escape_formulas(frame).to_csv(sys.stdout, index=False, float_format=_FLOAT_FORMAT)
    return 0


def _run_compare(args: argparse.Namespace) -> int:
    from bayesgen.checks.comparison import compare
    from bayesgen.io.model_files import load

    comparison = compare(load(args.model_file))
    print(comparison)
    return 0 if comparison.ok else 1


def _run_loo(args: argparse.Namespace) -> int:
    from bayesgen.checks.loo import compare_models
    from bayesgen.io.model_files import load

    names = [Path(path).stem for path in args.model_files]
    if len(set(names)) != len(names):
        raise ValueError(f"model_files: expected files with distinct names; got {names}.")
    table = compare_models(
        {name: load(path) for name, path in zip(names, args.model_files, strict=True)}
    )
    print(table.to_string())
    return 0


def _run_report(args: argparse.Namespace) -> int:
    from bayesgen.io import model_files as io
    from bayesgen.plotting.report import report

    out_dir = Path(args.output_dir or Path("reports") / Path(args.model_file).stem)
    io.check_output_path(out_dir, argument="--output-dir", folder=True)
    if args.target and not args.data:
        raise ValueError("--target: only with --data (the class column of the held-out data).")
    if args.data and not args.target:
        raise ValueError("--target: required with --data (the class column).")
    table_options = {
        "--text-column": args.text_column,
        "--features": args.features,
        "--format": args.file_format,
        "--no-header": args.no_header or None,
        "--columns": args.columns,
    }
    given = [option for option, value in table_options.items() if value is not None]
    if given and not args.data:
        raise ValueError(f"{given[0]}: only with --data (it says how to read the held-out data).")
    estimator = io.load(args.model_file)
    X_test = y_test = None
    if args.data:
        table = _read_data(args, args.data)
        y_test = _labels(table, args.target, args.data)
        X_test, _ = _features(table, args, exclude=args.target, estimator=estimator)
    index = report(estimator, out_dir, X_test=X_test, y_test=y_test)
    print(f"wrote {index}")
    return 0


#: How ``predict`` writes probabilities: 6 significant digits.
_FLOAT_FORMAT = "%.6g"


def _row_ids(table, id_column: str | None):
    """The id of each row: the ``--id-column`` of the table, or else a column ``row`` holding
    the data row's number counting from 1 after the header, as the error messages count."""
    import pandas as pd

    if id_column is None:
        return pd.Series(np.arange(1, len(table) + 1), name="row")
    if id_column not in table.columns:
        raise ValueError(
            f"--id-column: no column {id_column!r} in the data; columns are "
            f"{list(table.columns)[:10]}."
        )
    ids = table[id_column]
    # As written in the file: the float format of the probabilities would round an id.
    return ids.astype(str) if ids.dtype.kind == "f" else ids


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
    fitted_column = estimator.closed_form_.attrs.get(_TEXT_COLUMN) if estimator else None
    if args.text_column and args.features:
        raise ValueError("--text-column and --features: pass one of them, not both.")
    text_column = args.text_column
    if text_column is None and fitted_column is not None and args.features is None:
        if fitted_column not in table.columns:
            raise ValueError(
                f"--text-column: the model was fitted from the text column {fitted_column!r}, "
                f"which the data lacks (columns {list(table.columns)[:10]}); pass "
                "--text-column COLUMN, the column holding the texts."
            )
        text_column = fitted_column  # the column of the name the model was fitted with
    if text_column:
        from sklearn.feature_extraction.text import CountVectorizer

        if text_column not in table.columns:
            raise ValueError(
                f"--text-column: no column {text_column!r} in the data; columns are "
                f"{list(table.columns)[:10]}."
            )
        if text_column == exclude:
            raise ValueError(f"--text-column: {exclude!r} is the --target column.")
        texts = table[text_column].fillna("").astype(str)
        if estimator is None:
            vectorizer = CountVectorizer(binary=binary)
            try:
                return vectorizer.fit_transform(texts), vectorizer.get_feature_names_out()
            except ValueError as error:  # "empty vocabulary; perhaps the documents only..."
                raise ValueError(f"--text-column {text_column!r}: {error}") from None
        if fitted_column is None:
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
    if args.features is not None:
        columns = [c.strip() for c in args.features.split(",") if c.strip()]
        if not columns:
            raise ValueError(
                f"--features: expected comma-separated column names; got {args.features!r}."
            )
        repeated = sorted({c for c in columns if columns.count(c) > 1})
        if repeated:
            raise ValueError(
                f"--features: {', '.join(map(repr, repeated))} "
                f"{'is' if len(repeated) == 1 else 'are'} repeated in {args.features!r}; name "
                "each column once."
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
            f"data: columns {text[:10]} are not numeric{_first_word(frame[text[0]])}; choose "
            "numeric columns with --features, or pass a column of raw text as --text-column."
        )
    for column in columns:
        missing = np.flatnonzero(frame[column].isna().to_numpy())
        if missing.size:
            raise ValueError(f"data: column {column!r} has no value in {_rows(missing)}.")
    return frame, None


def _first_word(series) -> str:
    """Where a column that should hold numbers first holds something else, e.g. a missing
    value written "NA" (only an empty field is missing,
    :func:`bayesgen.input.datasets.read_table`)."""
    import pandas as pd

    numbers = pd.to_numeric(series, errors="coerce")
    words = np.flatnonzero((numbers.isna() & series.notna()).to_numpy())
    if not words.size:
        return ""
    word = series.iloc[words[0]]
    said = f": {series.name!r} holds {word!r} in {_rows(words[:1])}"
    if str(word).strip().lower() in {"na", "n/a", "nan", "null", "none", "#n/a", "<na>"}:
        said += ", and only an empty field is a missing value"
    return said


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
