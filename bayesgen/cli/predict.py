"""``bayesgen predict MODEL_FILE DATA``: class probabilities with credible intervals, as CSV."""

from __future__ import annotations

import argparse
import sys
from textwrap import dedent

import numpy as np
import pandas as pd

from bayesgen.cli.arguments import HelpFormatter, probability
from bayesgen.cli.tables import add_table_options, feature_matrix, read_data
from bayesgen.estimators.loading import load
from bayesgen.input import files as io

#: How ``predict`` writes probabilities: 6 significant digits.
_FLOAT_FORMAT = "%.6g"


def add_predict_command(commands) -> None:
    """``predict`` among ``commands`` (the parser's subparsers)."""
    predict = commands.add_parser(
        "predict",
        help="class probabilities with credible intervals, as CSV",
        formatter_class=HelpFormatter,
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
    add_table_options(predict)
    predict.add_argument(
        "--id-column",
        help="a column of the data to write as each row's id (default: a column 'row', the "
        "data row's number counting from 1 after the header)",
    )
    predict.add_argument("--prob", type=probability, default=0.94, help="interval mass")
    predict.add_argument(
        "--output",
        help="CSV file to write (default: standard output); missing folders are created",
    )
    predict.set_defaults(run=_run_predict)


def _run_predict(args: argparse.Namespace) -> int:
    if args.output:
        io.check_output_path(args.output, argument="--output")
    estimator = load(args.model_file)
    table = read_data(args, args.data)
    ids = _row_ids(table, args.id_column)
    X, _ = feature_matrix(table, args, exclude=None, estimator=estimator)
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


def _row_ids(table, id_column: str | None):
    """The id of each row: the ``--id-column`` of the table, or else a column ``row`` holding
    the data row's number counting from 1 after the header, as the error messages count."""
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
