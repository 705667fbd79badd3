"""How a command reads its data: the options that say how to read a table (file format,
header, columns, text or numeric features), and the class labels and feature matrix taken
from it, with errors that name the option and the data rows at fault.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import CountVectorizer

from bayesgen.estimators.mixed import NaiveBayes
from bayesgen.input.datasets import read_table

#: closed_form attrs of a model fitted by ``bayesgen fit --text-column``.
TEXT_COLUMN, TEXT_BINARY = "text_column", "text_binary"


def add_table_options(parser: argparse.ArgumentParser) -> None:
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
    parser.add_argument(
        "--na-values",
        help="comma-separated fields that mean a missing value besides an empty one (e.g. "
        "'NA,?'); the models that integrate a missing entry out (gaussian, poisson, "
        "bernoulli, categorical, and their blocks in mixed) take it as missing, the others "
        "refuse it",
    )


def read_data(args: argparse.Namespace, path):
    """The table at ``path``, read as the command's --format, --no-header and --columns say."""
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
    na_values = None
    if getattr(args, "na_values", None):
        na_values = [value.strip() for value in args.na_values.split(",")]
        if any(not value for value in na_values):
            raise ValueError(
                f"--na-values: expected comma-separated fields (an empty field is always "
                f"missing); got {args.na_values!r}."
            )
    return read_table(
        path,
        file_format=args.file_format,
        header=not args.no_header,
        columns=columns,
        na_values=na_values,
    )


def class_labels(table, target: str, data) -> np.ndarray:
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


def feature_matrix(table, args, *, exclude, binary: bool = False, estimator=None):
    """The feature matrix of a table: a vectorized text column or numeric columns.

    Returns the matrix and the feature names to fit with (None when the table's own column
    names serve).
    """
    if isinstance(estimator, NaiveBayes):
        return _mixed_columns(table, args, estimator), None
    fitted_column = estimator.closed_form_.attrs.get(TEXT_COLUMN) if estimator else None
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
        binary = bool(estimator.closed_form_.attrs.get(TEXT_BINARY, 0))
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
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def _mixed_columns(table, args: argparse.Namespace, estimator: NaiveBayes):
    """The columns a mixed model was fitted with, as read: it encodes strings, categories and
    texts itself, as it did at fit."""
    if getattr(estimator, "feature_names_in_", None) is None:
        raise ValueError(
            "data: this mixed model was fitted on column positions, not names; predict with "
            "it in Python (bayesgen.load(...).predict_proba(X))."
        )
    for option, value in (("--features", args.features), ("--text-column", args.text_column)):
        if value is not None:
            raise ValueError(
                f"{option}: a mixed model reads the columns it was fitted with "
                f"({', '.join(map(str, estimator.feature_names_in_[:10]))}); leave it out."
            )
    columns = [str(column) for column in estimator.feature_names_in_]
    missing = [column for column in columns if column not in table.columns]
    if missing:
        raise ValueError(f"data: the model needs columns {missing[:10]}.")
    return table[columns]
