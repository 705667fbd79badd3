"""Data sets for demos, examples and tests, and the table reader of the CLI.

``load_toy_spam`` is a 50-message corpus written for bayesgen and shipped in the package, so
the text models run on any fresh install. ``load_sms_spam`` reads the UCI SMS Spam Collection
(Almeida, Gómez Hidalgo and Yamakami, 2011; CC BY 4.0) from a local file, or downloads it
when asked and the network allows. ``load_penguins`` reads the Palmer penguins (Horst, Hill
and Gorman, 2020; CC0), a table of categories and measurements, from the CSV that the
``palmerpenguins`` package ships.
"""

from __future__ import annotations

import csv
import io
import urllib.request
import warnings
import zipfile
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

SMS_SPAM_URL = "https://archive.ics.uci.edu/static/public/228/sms+spam+collection.zip"


def load_toy_spam() -> tuple[list[str], list[str]]:
    """The bundled toy corpus: 30 ham and 20 spam short messages.

    Returns
    -------
    texts : list of str
    labels : list of str
        "ham" or "spam".

    Examples
    --------
    >>> from bayesgen.input.datasets import load_toy_spam
    >>> texts, labels = load_toy_spam()
    >>> len(texts), labels.count("spam")
    (50, 20)
    """
    with resources.files("bayesgen").joinpath("_data/toy_spam.tsv").open(encoding="utf-8") as f:
        frame = pd.read_csv(f, sep="\t")
    return frame["text"].tolist(), frame["label"].tolist()


def load_sms_spam(path=None, *, download: bool = False) -> tuple[list[str], list[str]]:
    r"""The UCI SMS Spam Collection: 5,574 messages labelled "ham" or "spam".

    Parameters
    ----------
    path : str or Path, optional
        A local copy: tab-separated ``label<TAB>text`` lines, with or without a header line
        (the UCI file ``SMSSpamCollection`` has none).
    download : bool, default False
        Without ``path``, fetch the collection from the UCI repository.

    Returns
    -------
    texts, labels : list of str

    Examples
    --------
    A local copy in the UCI format (``label<TAB>text`` lines):

    >>> import tempfile
    >>> from pathlib import Path
    >>> from bayesgen.input.datasets import load_sms_spam
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "SMSSpamCollection"
    ...     _ = path.write_text("ham\tSee you soon\nspam\tWIN a prize now\n", encoding="utf-8")
    ...     texts, labels = load_sms_spam(path)
    >>> texts, labels
    (['See you soon', 'WIN a prize now'], ['ham', 'spam'])
    """
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"data path: no SMS Spam Collection file at {str(path)!r}.")
        raw = path.read_text(encoding="utf-8", errors="replace")
    elif download:
        with urllib.request.urlopen(SMS_SPAM_URL, timeout=30) as response:
            archive = zipfile.ZipFile(io.BytesIO(response.read()))
        raw = archive.read("SMSSpamCollection").decode("utf-8", errors="replace")
    else:
        raise ValueError(
            "load_sms_spam: pass path=<file> (tab-separated label<TAB>text) or download=True."
        )
    labels, texts = [], []
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        label, sep, text = line.partition("\t")
        if not sep:
            raise ValueError(
                f"SMS Spam file line {number}: expected 'label<TAB>text'; got {line!r:.60}."
            )
        if number == 1 and label.lower() == "label":
            continue  # a header line
        labels.append(label.strip())
        texts.append(text)
    if not texts:
        raise ValueError("SMS Spam file: no messages found.")
    return texts, labels


#: The penguins' feature columns, in the order :func:`load_penguins` returns them.
PENGUIN_CATEGORIES = ("island", "sex")
PENGUIN_MEASUREMENTS = ("bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g")


def load_penguins(*, dropna: bool = True) -> tuple[pd.DataFrame, np.ndarray]:
    """The Palmer penguins: species from the island, the sex and four body measurements.

    344 penguins of three species (Adelie, Chinstrap, Gentoo) measured on three islands of the
    Palmer Archipelago, Antarctica, 2007-2009 (Horst, Hill and Gorman, 2020, from the data of
    Gorman, Williams and Fraser, 2014; CC0). Read from the CSV shipped by the
    ``palmerpenguins`` package; the ``year`` column is left out.

    Parameters
    ----------
    dropna : bool, default True
        Leave out the 11 penguins with a missing entry (2 without measurements or sex, 9 more
        without sex), keeping 333.

    Returns
    -------
    X : pandas.DataFrame
        Columns ``island`` and ``sex`` (pandas category dtype: "Biscoe", "Dream",
        "Torgersen"; "female", "male"), then ``bill_length_mm``, ``bill_depth_mm``,
        ``flipper_length_mm`` and ``body_mass_g`` (float64, as in the CSV). With
        ``dropna=False`` the missing entries are NaN.
    y : numpy.ndarray of str
        The species.

    Examples
    --------
    >>> from bayesgen.input.datasets import load_penguins
    >>> X, y = load_penguins()
    >>> X.shape, list(X.columns[:2]), list(X["island"].cat.categories)
    ((333, 6), ['island', 'sex'], ['Biscoe', 'Dream', 'Torgersen'])
    >>> sorted(set(y.tolist())), int((y == "Chinstrap").sum())
    (['Adelie', 'Chinstrap', 'Gentoo'], 68)
    >>> load_penguins(dropna=False)[0].shape
    (344, 6)
    """
    source = resources.files("palmerpenguins").joinpath("data/penguins.csv")
    with source.open(encoding="utf-8") as f:
        frame = pd.read_csv(f)
    if dropna:
        frame = frame.dropna().reset_index(drop=True)
    X = frame[[*PENGUIN_CATEGORIES, *PENGUIN_MEASUREMENTS]].copy()
    for column in PENGUIN_CATEGORIES:
        X[column] = X[column].astype("category")
    for column in PENGUIN_MEASUREMENTS:
        X[column] = X[column].astype("float64")
    return X, frame["species"].to_numpy(dtype=str)


#: ``read_table``'s formats, by the file-name suffixes that name them.
TABLE_FORMATS = {
    "csv": (".csv",),
    "tsv": (".tsv", ".tab", ".txt"),
    "parquet": (".parquet", ".pq"),
}


def read_table(
    path,
    *,
    file_format: str | None = None,
    header: bool = True,
    columns=None,
    na_values=None,
) -> pd.DataFrame:
    r"""Read a CSV, TSV or Parquet file into a DataFrame.

    A TSV (tab-separated) file has no quoting: every line is one row and every tab separates
    two fields, so a quote character inside a message is read as itself (pandas' default
    quoting would join the lines between two stray quotes into one field, losing rows
    silently). A CSV file is read with the usual double-quote quoting; a field that then
    holds a line break is warned about, since a stray quote has the same effect there. In
    both, only an empty field is a missing value: "NA", "None" or "null" stay text (pandas
    would read them as missing, and a message "NA" would become no text at all).

    Parameters
    ----------
    path : str or Path
    file_format : {"csv", "tsv", "parquet"}, optional
        By default the file-name suffix tells: .csv; .tsv, .tab or .txt; .parquet or .pq.
        Needed for any other name.
    header : bool, default True
        Whether the first line of a CSV/TSV file names the columns. Without one, ``columns``
        names them.
    columns : sequence of str, optional
        The column names of a file without a header line (``header=False``), one per column.
    na_values : sequence of str, optional
        Fields of a CSV/TSV file that mean a missing value besides an empty one (``["NA",
        "?"]``), in every column: a missing number becomes NaN and a missing category or
        text None, which the models that integrate missing entries out take as missing.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ValueError
        Naming the file: an unknown suffix without ``file_format``, an empty file, a header
        without data rows, text that is not UTF-8, a line that does not parse, or ``columns``
        that are not one distinct name per column.

    Warns
    -----
    UserWarning
        A CSV field holding a line break (naming its column and row).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from bayesgen.input.datasets import read_table
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "messages.csv"
    ...     table = {"text": ["free prize", "lunch at noon"], "label": ["spam", "ham"]}
    ...     pd.DataFrame(table).to_csv(path, index=False)
    ...     frame = read_table(path)
    >>> frame.shape, frame.columns.tolist()
    ((2, 2), ['text', 'label'])

    A tab-separated file without a header line, such as the UCI ``SMSSpamCollection``:

    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "SMSSpamCollection"
    ...     _ = path.write_text('ham\t"Hi, see you soon\nspam\tWIN a prize now\n')
    ...     frame = read_table(path, file_format="tsv", header=False, columns=["label", "text"])
    >>> frame["text"].tolist()
    ['"Hi, see you soon', 'WIN a prize now']
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"data: no file at {str(path)!r}.")
    if path.is_dir():
        raise ValueError(
            f"data: {str(path)!r} is a folder; expected a .csv, .tsv or .parquet file."
        )
    file_format = _table_format(path, file_format)
    names = _column_names(header, columns)
    if file_format == "parquet":
        if names is not None:
            raise ValueError("header: a Parquet file always names its columns; use header=True.")
        if na_values is not None:
            raise ValueError(
                "na_values: a Parquet file stores a missing value as null; na_values is for "
                "CSV/TSV files."
            )
        frame = _read_parquet(path)
    else:
        frame = _read_text_table(
            path,
            sep="," if file_format == "csv" else "\t",
            names=names,
            na_values=_check_na_values(na_values),
        )
    if len(frame) == 0:
        raise ValueError(
            f"data: {str(path)!r} has no data rows (only a header with columns "
            f"{[str(c) for c in frame.columns][:10]})."
        )
    if file_format == "csv":
        _warn_line_breaks(frame, path)
    return frame


def _table_format(path: Path, file_format: str | None) -> str:
    """The format named by ``file_format``, or else by the suffix of ``path``."""
    if file_format is not None:
        if file_format not in TABLE_FORMATS:
            raise ValueError(
                f"file_format: expected one of {sorted(TABLE_FORMATS)}; got {file_format!r}."
            )
        return file_format
    suffix = path.suffix.lower()
    for name, suffixes in TABLE_FORMATS.items():
        if suffix in suffixes:
            return name
    raise ValueError(
        f"data: expected a .csv, .tsv or .parquet file; got {path.name!r}. For another name, "
        "give the format: --format csv, tsv or parquet (file_format= in Python)."
    )


def _column_names(header: bool, columns) -> list[str] | None:
    """The names of a file without a header line; None for a file with one."""
    if header not in (True, False):
        raise TypeError(f"header: expected True or False; got {header!r}.")
    if header:
        if columns is not None:
            raise ValueError("columns: only for a file without a header line (header=False).")
        return None
    if columns is None or isinstance(columns, str):
        raise ValueError(
            "columns: a file without a header line (header=False) needs its column names, "
            f"one per column; got {columns!r}."
        )
    names = [str(name) for name in columns]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if not names or repeated or "" in names:
        reason = f"{repeated} repeated" if repeated else "an empty name"
        raise ValueError(f"columns: expected distinct non-empty names; got {names} ({reason}).")
    return names


def _read_parquet(path: Path) -> pd.DataFrame:
    try:
        return pd.read_parquet(path)
    except ImportError:
        raise ValueError(
            "data: reading Parquet needs pyarrow (pip install pyarrow); or pass a CSV/TSV."
        ) from None
    except (OSError, ValueError) as error:
        if isinstance(error, PermissionError):
            raise
        raise ValueError(f"data: {str(path)!r} is not a readable Parquet file ({error}).") from None


def _check_na_values(na_values) -> list[str]:
    """The fields that mean missing: the empty one, and ``na_values`` (strings)."""
    if na_values is None:
        return [""]
    if isinstance(na_values, str) or not all(isinstance(v, str) for v in na_values):
        raise TypeError(
            f"na_values: expected a list of strings (the fields meaning missing); got "
            f"{na_values!r}."
        )
    return ["", *na_values]


def _read_text_table(
    path: Path, *, sep: str, names: list[str] | None, na_values: list[str]
) -> pd.DataFrame:
    # TSV has no quoting: a quote is a character of its field (see read_table).
    quoting = csv.QUOTE_MINIMAL if sep == "," else csv.QUOTE_NONE
    try:
        frame = pd.read_csv(
            path,
            sep=sep,
            quoting=quoting,
            header=None if names else "infer",
            # Only an empty field (and those the caller names) is missing: by default a
            # message "NA", "None" or "null" is text.
            keep_default_na=False,
            na_values=na_values,
        )
    except pd.errors.EmptyDataError:
        raise ValueError(f"data: {str(path)!r} is empty (no header, no rows).") from None
    except UnicodeDecodeError as error:
        raise ValueError(
            f"data: {str(path)!r} is not UTF-8 text ({error.reason}); save it as UTF-8."
        ) from None
    except pd.errors.ParserError as error:
        detail = " ".join(str(error).split())
        raise ValueError(f"data: {str(path)!r} does not parse as a table: {detail}") from None
    if names is not None:
        # Checked here, not left to pandas: fewer names than fields would silently make the
        # first fields an index.
        if len(names) != frame.shape[1]:
            raise ValueError(
                f"columns: {str(path)!r} has {frame.shape[1]} columns; expected one name per "
                f"column; got {len(names)}: {names}."
            )
        frame.columns = names
    return frame


def _warn_line_breaks(frame: pd.DataFrame, path: Path) -> None:
    """Warn about CSV fields holding a line break: legal when quoted, but also what a stray
    quote character does, joining the lines up to the next quote into one field."""
    for column in frame.columns:
        values = frame[column]
        if values.dtype != object and not pd.api.types.is_string_dtype(values):
            continue  # numbers hold no line breaks
        broken = np.flatnonzero(values.astype(str).str.contains("[\r\n]", regex=True).to_numpy())
        if broken.size:
            rows = ", ".join(str(row + 1) for row in broken[:5])
            one = broken.size == 1
            warnings.warn(
                f"data: {broken.size} {'field' if one else 'fields'} of column {str(column)!r} "
                f"in {str(path)!r} {'holds' if one else 'hold'} a line break (data "
                f"{'row' if one else 'rows'} {rows}{', ...' if broken.size > 5 else ''}, "
                "counting from 1 after the header): a quoted line break, or a stray quote "
                "character that joined several lines into one field.",
                UserWarning,
                stacklevel=3,
            )
