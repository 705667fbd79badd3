"""Whether the covariances of GDA and QDA fit in memory, checked before any work.

A Gaussian model holds D × D numbers per covariance (one for GDA, one per class for QDA), a few
copies of each for its statistics and closed forms, and one per draw for its posterior and prior
draws. At thousands of columns (a bag of words) that is hundreds of GiB: NumPy would say so only
after minutes of work ("Unable to allocate 885 GiB"). :func:`check_covariance_memory` says it at
once, from the shape of X alone.
"""

from __future__ import annotations

import contextlib
import math
import os

import numpy as np

try:
    import resource
except ImportError:  # Windows
    resource = None

#: D × D float64 arrays the statistics and closed forms hold per covariance (the scatter, the
#: MLE, the prior scale, the posterior scale and mean, the precision of the linear form) with
#: their temporaries: a rough count, for a bound that errs towards letting a fit run.
CLOSED_FORM_COPIES = 8

GIB = 2.0**30


def memory_limit() -> float:
    """Bytes of memory this process may use: the machine's physical memory, or less where a
    container (cgroup v2 ``memory.max``) or ``RLIMIT_AS`` allows less; infinite where the
    system says none of these (then nothing is refused)."""
    limits = [math.inf]
    with contextlib.suppress(AttributeError, ValueError, OSError):  # no sysconf (Windows)
        limits.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    with contextlib.suppress(OSError):  # no cgroup v2 limit to read (macOS, cgroup v1)
        with open("/sys/fs/cgroup/memory.max") as cgroup:
            text = cgroup.read().strip()
        if text.isdigit():  # else "max": no limit
            limits.append(int(text))
    if resource is not None:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            limits.append(soft)
    return min(limits)


def check_covariance_memory(
    X,
    *,
    n_covariances: int = 1,
    draws: int = 0,
    prior_draws: int = 0,
    dtype: str = "float64",
    model: str = "gda",
) -> None:
    """Refuse X when its covariances, their closed forms and draws cannot fit in memory.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Only its shape is read (``X.shape``, or that of ``np.asarray(X)`` for a list); X of
        another shape is left for the data checks to refuse.
    n_covariances : int, default 1
        Covariance matrices of the model: 1 for GDA, the number of classes for QDA.
    draws, prior_draws : int, default 0
        Posterior draws (``draws × chains``) and prior draws of the fit.
    dtype : {"float64", "float32"}
        The type of the draws; the closed forms are always float64.
    model : str
        The model's name, for the message.

    Raises
    ------
    ValueError
        Naming the number of columns, the size in GiB and the memory there is.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.maths.covariance_memory import check_covariance_memory
    >>> check_covariance_memory(np.zeros((10, 20)), draws=2000)  # 20 columns: 6 MiB
    >>> wide = np.broadcast_to(0.0, (10, 10**6))  # a million columns, no memory of its own
    >>> check_covariance_memory(wide)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: X: its 1,000,000 columns make each covariance of gda 1,000,000 × 1,000,000 ...
    """
    n_features = _n_columns(X)
    if n_features is None:
        return
    cells = float(n_features) ** 2 * n_covariances
    closed_forms = CLOSED_FORM_COPIES * cells * 8
    draw_bytes = (draws + prior_draws) * cells * np.dtype(dtype).itemsize
    limit = memory_limit()
    if closed_forms + draw_bytes <= limit:
        return
    per = "each covariance" if n_covariances == 1 else f"each of the {n_covariances} covariances"
    counted = f"its statistics and closed forms need about {closed_forms / GIB:,.1f} GiB"
    fewer = "fewer columns (e.g. a vectorizer's max_features)"
    if draws + prior_draws:
        counted += (
            f" and its {draws:,} posterior and {prior_draws:,} prior draws "
            f"{draw_bytes / GIB:,.1f} GiB in {dtype}"
        )
        fewer += ", fewer draws or chains, dtype='float32'"
    raise ValueError(
        f"X: its {n_features:,} columns make {per} of {model} {n_features:,} × "
        f"{n_features:,} ({cells * 8 / n_covariances / GIB:,.2f} GiB); {counted}, more than "
        f"the {limit / GIB:,.1f} GiB of memory here. Use {fewer}, or a naive Bayes model."
    )


def _n_columns(X) -> int | None:
    """The number of columns of a 2-D X, from its shape; None where it has none yet."""
    try:
        shape = np.shape(X)
    except (ValueError, TypeError):  # a ragged list: the data checks say what is wrong
        return None
    if len(shape) != 2 or not isinstance(shape[1], int | np.integer):
        return None  # not 2-D, or a Dask array of unknown width
    return int(shape[1])
