"""The commands that judge or show saved models: ``compare`` (the posterior against its closed
forms), ``loo`` (models ranked by their leave-one-out log score) and ``report`` (an HTML
report with ArviZ plots).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from textwrap import dedent

from bayesgen.checks.comparison import compare
from bayesgen.checks.loo import compare_models
from bayesgen.cli.arguments import HelpFormatter
from bayesgen.cli.tables import add_table_options, class_labels, feature_matrix, read_data
from bayesgen.estimators.loading import load
from bayesgen.input import files as io


def add_compare_command(commands) -> None:
    """``compare`` among ``commands`` (the parser's subparsers)."""
    command = commands.add_parser(
        "compare",
        help="compare a saved model's posterior with its closed forms",
        formatter_class=HelpFormatter,
        description=dedent(
            """\
            Print the posterior-vs-closed-form comparison of a saved model.

            Exit status 1 when some parameter disagrees or the diagnostics are not clean."""
        ),
    )
    command.add_argument("model_file", help="a saved model (.nc)")
    command.set_defaults(run=_run_compare)


def add_loo_command(commands) -> None:
    """``loo`` among ``commands`` (the parser's subparsers)."""
    command = commands.add_parser(
        "loo",
        help="rank saved models by their leave-one-out log score of the labels",
        formatter_class=HelpFormatter,
        description=dedent(
            """\
            Print bayesgen.compare_models for saved models fitted to the same labelled rows:
            elpd_loo = sum of log p(y_i | x_i, data without row i), exact for the conjugate
            models, the point fit refitted without row i for the Dirichlet compound
            multinomial. Each model is named by its file's stem."""
        ),
    )
    command.add_argument("model_files", nargs="+", help="saved models (.nc) of the same rows")
    command.set_defaults(run=_run_loo)


def add_report_command(commands) -> None:
    """``report`` among ``commands`` (the parser's subparsers)."""
    command = commands.add_parser(
        "report",
        help="write an HTML report with ArviZ plots",
        formatter_class=HelpFormatter,
        description=dedent(
            """\
            Write summary.csv, comparison.csv, PNG plots and index.html for a saved model.

            With --data and --target also calibration and predictive-interval plots."""
        ),
    )
    command.add_argument("model_file", help="a saved model (.nc)")
    command.add_argument(
        "--output-dir",
        help="folder (default reports/<model file stem>): new, empty, or holding an earlier "
        "report, which is replaced only once the new report is complete; missing parent "
        "folders are created; a symbolic link is refused",
    )
    command.add_argument("--data", help="held-out data (.csv/.tsv/.parquet, or --format)")
    command.add_argument("--target", help="the class column of --data")
    add_table_options(command)
    command.set_defaults(run=_run_report)


def _run_compare(args: argparse.Namespace) -> int:
    comparison = compare(load(args.model_file))
    print(comparison)
    return 0 if comparison.ok else 1


def _run_loo(args: argparse.Namespace) -> int:
    names = [Path(path).stem for path in args.model_files]
    if len(set(names)) != len(names):
        raise ValueError(f"model_files: expected files with distinct names; got {names}.")
    table = compare_models(
        {name: load(path) for name, path in zip(names, args.model_files, strict=True)}
    )
    print(table.to_string())
    return 0


def _run_report(args: argparse.Namespace) -> int:
    from bayesgen.plotting.report import report  # heavy: matplotlib, ArviZ

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
    estimator = load(args.model_file)
    X_test = y_test = None
    if args.data:
        table = read_data(args, args.data)
        y_test = class_labels(table, args.target, args.data)
        X_test, _ = feature_matrix(table, args, exclude=args.target, estimator=estimator)
    index = report(estimator, out_dir, X_test=X_test, y_test=y_test)
    print(f"wrote {index}")
    return 0
