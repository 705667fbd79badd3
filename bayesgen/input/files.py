"""Writing a file so that a failed write leaves the old one whole, and saying why it failed.

Every file bayesgen writes (model files, CSV tables, report folders) is written beside its
target and renamed into place (:func:`replacing`, :func:`replacing_folder`): a crash or a full
disk never leaves half a file behind nor destroys the previous one. A path that cannot be
written (a folder where a file is meant, a file or a broken symbolic link on the way) is
refused before any work (:func:`check_output_path`), and a write that the writing library
reports only in its own words is explained as the system would (:func:`write_failure`: "disk
full", "file size limit reached").
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

try:
    import resource  # the process's file size limit (ulimit -f); POSIX only
except ImportError:  # Windows
    resource = None

__all__ = [
    "STALE_AFTER_S",
    "check_output_path",
    "escape_formulas",
    "readable_size",
    "replacing",
    "replacing_folder",
    "write_csv",
    "write_failure",
]

#: Temporary files and folders of a write that are older than this were left by a killed
#: process (a save of gigabytes takes minutes) and are removed by the next write of the target.
STALE_AFTER_S = 3600.0

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def check_output_path(path, *, argument: str = "path", folder: bool = False) -> Path:
    """Check that ``path`` can be written as a file (or, with ``folder``, a folder).

    Missing parent folders are fine (the writers create them); a path that names an existing
    folder (a file when ``folder``), or lies under a file, is not.

    Parameters
    ----------
    path : str or os.PathLike
    argument : str
        The argument or option that gave ``path``, for the messages.
    folder : bool
        Whether ``path`` is to be a folder.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    ValueError
        Naming ``argument``, the path and what is in the way.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from bayesgen.input.files import check_output_path
    >>> folder = Path(tempfile.mkdtemp())
    >>> check_output_path(folder / "new" / "m.nc").name
    'm.nc'
    >>> _ = (folder / "table.csv").write_text("a,b")
    >>> check_output_path(folder / "table.csv" / "m.nc")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: path: '.../table.csv/m.nc' lies under '.../table.csv', which is a file, not a
    folder.
    """
    path = Path(path)
    if folder and path.exists() and not path.is_dir():
        raise ValueError(f"{argument}: {str(path)!r} is a file; expected a folder.")
    if not folder and path.is_dir():
        raise ValueError(f"{argument}: {str(path)!r} is a folder; expected a file name.")
    for parent in path.absolute().parents:
        if parent.is_symlink() and not parent.exists():
            raise ValueError(
                f"{argument}: {str(path)!r} lies under {str(parent)!r}, {_broken_link(parent)}"
            )
        if parent.exists():
            if not parent.is_dir():
                raise ValueError(
                    f"{argument}: {str(path)!r} lies under {str(parent)!r}, which is a file, "
                    "not a folder."
                )
            break
    return path


@contextlib.contextmanager
def replacing(path) -> Iterator[Path]:
    """Write a file atomically: yields a temporary path beside ``path``, renamed over it when
    the block succeeds.

    The temporary file is ``.NAME.<random>.tmp`` in the target's folder (created if missing),
    flushed to disk before the rename. On any error it is removed and ``path`` is left as it
    was. The new file gets the mode of the file it replaces, or else the umask's default
    (``0o666 & ~umask``), as ``open`` would give it. Temporary files of the same target older
    than :data:`STALE_AFTER_S` (left by a killed process) are removed.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from bayesgen.input.files import replacing
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     target = Path(folder) / "notes.txt"
    ...     with replacing(target) as temporary:
    ...         _ = temporary.write_text("first")
    ...     try:
    ...         with replacing(target) as temporary:
    ...             _ = temporary.write_text("half of the sec")
    ...             raise KeyboardInterrupt
    ...     except KeyboardInterrupt:
    ...         pass
    ...     print(target.read_text(), sorted(p.name for p in Path(folder).iterdir()))
    first ['notes.txt']
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(path)
    temporary, mode = _create_temporary(path)
    if path.exists():
        mode = os.stat(path).st_mode & 0o7777
    try:
        yield temporary
        with open(temporary, "rb+") as written:
            os.fsync(written.fileno())
        os.chmod(temporary, mode)  # writers such as HDF5 may recreate the file
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)


@contextlib.contextmanager
def replacing_folder(path) -> Iterator[Path]:
    """Write a folder as a whole: yields a new empty folder beside ``path``, swapped into place
    when the block succeeds.

    The swap renames the previous folder aside, the new one in, then removes the previous one;
    on any error before the swap the new folder is removed and the previous one stays intact.
    Files in the new folder are always fresh files, never links planted in the old folder.

    Raises
    ------
    ValueError
        ``path`` is a symbolic link or a file.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from bayesgen.input.files import replacing_folder
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     report = Path(folder) / "report"
    ...     with replacing_folder(report) as new:
    ...         _ = (new / "index.html").write_text("<p>first</p>")
    ...     with replacing_folder(report) as new:
    ...         _ = (new / "index.html").write_text("<p>second</p>")
    ...     print(sorted(p.name for p in Path(folder).iterdir()))
    ...     print((report / "index.html").read_text())
    ['report']
    <p>second</p>
    """
    path = Path(path)
    if path.is_symlink():
        raise ValueError(
            f"out_dir: {str(path)!r} is a symbolic link; pass the folder it points to "
            f"({str(path.resolve())!r}) if that is meant."
        )
    check_output_path(path, argument="out_dir", folder=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(path)
    mode = os.stat(path).st_mode & 0o7777 if path.exists() else None
    while True:
        temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
        try:
            os.mkdir(temporary)  # 0o777 & ~umask, as a plain mkdir
            break
        except FileExistsError:
            continue
    try:
        yield temporary
        if mode is not None:
            os.chmod(temporary, mode)
            aside = temporary.with_suffix(".old")
            os.rename(path, aside)
            try:
                os.rename(temporary, path)
            except BaseException:
                os.rename(aside, path)
                raise
            shutil.rmtree(aside, ignore_errors=True)
        else:
            os.rename(temporary, path)
    finally:
        if temporary.exists():
            shutil.rmtree(temporary, ignore_errors=True)


def write_failure(
    error: Exception, path: Path, temporary: Path, *, needed: int, what: str = "the file"
) -> OSError:
    """The OSError of a failed write that the writing library reported only in its own words.

    netCDF4 reports a full disk or a file past the process's size limit as "NetCDF: HDF
    error"; this says which it was, as the system would: ``EFBIG`` ("file size limit
    reached", the process's ``ulimit -f``), ``ENOSPC`` ("disk full"), or else ``EIO`` with the
    library's words.

    Parameters
    ----------
    error : Exception
        What the library raised.
    path : pathlib.Path
        The file being replaced (it is unchanged: the write went to ``temporary``).
    temporary : pathlib.Path
        The temporary file of :func:`replacing`, as far as it was written.
    needed : int
        About how many bytes the file needs.
    what : str
        The file, as the message names it ("the model file").

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from bayesgen.input.files import write_failure
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "m.nc"
    ...     failure = write_failure(RuntimeError("NetCDF: HDF error"), path, path, needed=10)
    >>> failure.strerror  # doctest: +ELLIPSIS
    "writing the file failed (NetCDF: HDF error); '.../m.nc' is unchanged"
    """
    written = temporary.stat().st_size if temporary.exists() else 0
    keep = f"{str(path)!r} is unchanged"
    limit = _file_size_limit()
    if limit is not None and max(needed, written) >= limit:
        return OSError(
            errno.EFBIG,
            f"file size limit reached: {what} needs about {readable_size(needed)} but this "
            f"process may write files of at most {readable_size(limit)} (ulimit -f); {keep}",
            str(path),
        )
    space = os.statvfs(temporary.parent if temporary.parent.exists() else path.parent)
    free = space.f_bavail * space.f_frsize
    if free + written < needed or free < 1 << 20:
        return OSError(
            errno.ENOSPC,
            f"disk full: {what} needs about {readable_size(needed)} and "
            f"{str(path.parent)!r} has {readable_size(free)} free; {keep}",
            str(path),
        )
    return OSError(errno.EIO, f"writing {what} failed ({error}); {keep}", str(path))


def escape_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` safe to open in a spreadsheet (OWASP's CSV-injection rule).

    Every string cell, column name and index label that starts with ``= + - @``, a tab or a
    carriage return gets a leading single quote, so that a spreadsheet shows it as text instead
    of running it as a formula (e.g. a class label ``=HYPERLINK(...)``). Numbers stay numbers.

    Examples
    --------
    >>> import pandas as pd
    >>> from bayesgen.input.files import escape_formulas
    >>> escape_formulas(pd.DataFrame({"label": ["=1+1", "ham"], "p": [-0.5, 0.5]}))
      label    p
    0 '=1+1 -0.5
    1   ham  0.5
    """

    def escape(value):
        if isinstance(value, str) and value.startswith(_FORMULA_START):
            return "'" + value
        return value

    def escape_index(index: pd.Index) -> pd.Index:
        if isinstance(index, pd.MultiIndex):
            return index.set_levels([level.map(escape) for level in index.levels])
        return index.map(escape)

    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column]):
            out[column] = out[column].map(escape)
    out.columns = escape_index(out.columns)
    out.index = escape_index(out.index)
    return out


def write_csv(frame: pd.DataFrame, path, **options) -> Path:
    """Write ``frame`` as CSV atomically (:func:`replacing`), formulas escaped
    (:func:`escape_formulas`); ``options`` go to ``DataFrame.to_csv``.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from bayesgen.input.files import write_csv
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = write_csv(pd.DataFrame({"label": ["@ham"]}), Path(folder) / "t.csv", index=False)
    ...     print(path.read_text().split())
    ['label', "'@ham"]
    """
    path = check_output_path(path)
    with replacing(path) as temporary:
        escape_formulas(frame).to_csv(temporary, **options)
    return path


def readable_size(n: float) -> str:
    """``n`` bytes as "512 bytes", "3.2 MiB" or "60.0 GiB".

    Examples
    --------
    >>> from bayesgen.input.files import readable_size
    >>> readable_size(512), readable_size(3.2 * 2**20), readable_size(2 * 10**9 * 2 * 8)
    ('512 bytes', '3.2 MiB', '29.8 GiB')
    """
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


# -- private ----------------------------------------------------------------------------------


def _file_size_limit() -> int | None:
    """The largest file this process may write (``ulimit -f``), or None where unlimited."""
    if resource is None:
        return None
    try:
        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    except (OSError, ValueError):
        return None
    return None if limit == resource.RLIM_INFINITY else limit


def _broken_link(link: Path) -> str:
    """What is wrong with a symbolic link that leads to no file or folder."""
    try:
        os.stat(link)
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "a symbolic link loop (following it leads back to it); expected a folder."
    return f"a symbolic link to {os.readlink(link)!r}, which does not exist; expected a folder."


def _create_temporary(path: Path) -> tuple[Path, int]:
    """A new empty file ``.NAME.<random>.tmp`` beside ``path`` and the mode it got."""
    while True:
        temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
        try:
            handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        try:
            return temporary, os.fstat(handle).st_mode & 0o7777
        finally:
            os.close(handle)


def _remove_stale(path: Path) -> None:
    """Remove temporaries of ``path`` left by killed writes (older than STALE_AFTER_S).

    Also recognises the ``tempfile.mkstemp`` names of bayesgen 0.1 (``.NAME.<8 chars>.tmp``).
    """
    if not path.parent.is_dir():
        return
    pattern = re.compile(re.escape(f".{path.name}.") + r"[A-Za-z0-9_]{8,16}\.(tmp|old)")
    cutoff = time.time() - STALE_AFTER_S
    for entry in os.scandir(path.parent):
        if not pattern.fullmatch(entry.name):
            continue
        try:
            if entry.stat(follow_symlinks=False).st_mtime >= cutoff:
                continue  # maybe another process's write in progress
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
        except FileNotFoundError:
            continue  # removed meanwhile
