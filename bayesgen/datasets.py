"""Data sets for demos, examples and tests, and the table reader of the CLI.

``load_toy_spam`` is a 50-message corpus written for bayesgen and shipped in the package, so
the text models run on any fresh install. ``load_sms_spam`` reads the UCI SMS Spam Collection
(Almeida, Gómez Hidalgo and Yamakami, 2011; CC BY 4.0) from a local file, or downloads it
when asked and the network allows.
"""

from __future__ import annotations

import io
import urllib.request
import zipfile
from importlib import resources
from pathlib import Path

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
    >>> from bayesgen.datasets import load_toy_spam
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
    >>> from bayesgen.datasets import load_sms_spam
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


def read_table(path) -> pd.DataFrame:
    """Read a CSV, TSV or Parquet file into a DataFrame, chosen by the file's suffix.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ValueError
        Naming the file: an unknown suffix, an empty file, a header without data rows, text
        that is not UTF-8, or a line that does not parse.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from bayesgen.datasets import read_table
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "messages.csv"
    ...     table = {"text": ["free prize", "lunch at noon"], "label": ["spam", "ham"]}
    ...     pd.DataFrame(table).to_csv(path, index=False)
    ...     frame = read_table(path)
    >>> frame.shape, frame.columns.tolist()
    ((2, 2), ['text', 'label'])
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"data: no file at {str(path)!r}.")
    if path.is_dir():
        raise ValueError(
            f"data: {str(path)!r} is a folder; expected a .csv, .tsv or .parquet file."
        )
    suffix = path.suffix.lower()
    if suffix == ".csv":
        frame = _read_text_table(path, sep=",")
    elif suffix in (".tsv", ".tab", ".txt"):
        frame = _read_text_table(path, sep="\t")
    elif suffix in (".parquet", ".pq"):
        try:
            frame = pd.read_parquet(path)
        except ImportError:
            raise ValueError(
                "data: reading Parquet needs pyarrow (pip install pyarrow); or pass a CSV/TSV."
            ) from None
        except (OSError, ValueError) as error:
            if isinstance(error, PermissionError):
                raise
            raise ValueError(
                f"data: {str(path)!r} is not a readable Parquet file ({error})."
            ) from None
    else:
        raise ValueError(f"data: expected a .csv, .tsv or .parquet file; got {path.name!r}.")
    if len(frame) == 0:
        raise ValueError(
            f"data: {str(path)!r} has no data rows (only a header with columns "
            f"{[str(c) for c in frame.columns][:10]})."
        )
    return frame


def _read_text_table(path: Path, *, sep: str) -> pd.DataFrame:
    try:
        return pd.read_csv(path, sep=sep)
    except pd.errors.EmptyDataError:
        raise ValueError(f"data: {str(path)!r} is empty (no header, no rows).") from None
    except UnicodeDecodeError as error:
        raise ValueError(
            f"data: {str(path)!r} is not UTF-8 text ({error.reason}); save it as UTF-8."
        ) from None
    except pd.errors.ParserError as error:
        detail = " ".join(str(error).split())
        raise ValueError(f"data: {str(path)!r} does not parse as a table: {detail}") from None
