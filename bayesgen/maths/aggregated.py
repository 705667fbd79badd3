"""Exact draws of log p(x, y = k | θ) for documents, drawing only the words they contain.

By the Dirichlet aggregation property, θ_k restricted to a document's words plus one cell for
the rest of the vocabulary is Dirichlet(the words' concentrations, the rest's): so
θ_kw = g_kw / (Σ_{w∈x} g_kw + R_k) with independent g_kw ~ Gamma(a_kw) and R_k ~ Gamma(the
concentration of the words the document lacks) has the exact posterior law, and a batch of
documents costs its distinct words × classes × draws Gamma variates, not the vocabulary's.

The variates come from numba kernels (:mod:`bayesgen.maths.gamma_kernels`), each from
its own counter-based stream keyed by (seed, word, class, draw) or (seed, the document's
content, class, draw), and each document's sums are added in its words' order: a document
gets the same values, bit for bit, in any batch, order or number of threads. They replace
one NumPy Generator per word drawing broadcast-shape Gammas (25 M/s, 13 s for 1,000
documents × 1,000 draws of a 20 × 50,000 model on 2 cores; see benchmarks/bench_lazy.py).
"""

from __future__ import annotations

import hashlib

import numpy as np
import scipy.sparse as sp

from bayesgen.maths.dirichlet import dirichlet_draws


def _stream(seed: int, *key: int) -> np.random.Generator:
    """A generator keyed by (seed, key): the same numbers whatever else is drawn."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, *key])))


def _seed_key(seed: int, purpose: int) -> np.uint64:
    return np.random.SeedSequence([seed, purpose]).generate_state(1, np.uint64)[0]


def _gamma_parameters(shape: np.ndarray) -> tuple[np.ndarray, bool]:
    """Marsaglia–Tsang's d, c, log d and 1/a per cell, and 1.0 where a = 1 (an exponential),
    stacked (5, cells), for the kernels; and whether any cell has a < 1 (boosted) or a = 0
    (a point mass)."""
    shape = np.asarray(shape, dtype=np.float64).ravel()
    small = shape < 1.0
    d = np.where(small, shape + 1.0, shape) - 1.0 / 3.0
    inverse = np.zeros_like(shape)
    np.divide(1.0, shape, out=inverse, where=small & (shape > 0))
    inverse[shape <= 0] = -1.0
    exponential = (shape == 1.0).astype(np.float64)
    params = np.stack([d, 1.0 / np.sqrt(9.0 * d), np.log(d), inverse, exponential])
    return params, bool(small.any())


def aggregated_multinomial_log_joint(
    class_concentration: np.ndarray, concentration: np.ndarray, X, n_draws: int, seed: int
) -> np.ndarray:
    """log π_k + Σ_w x_w log θ_kw for ``n_draws`` draws, drawing only the documents' words
    (see :meth:`~bayesgen.families.multinomial.MultinomialFamily.aggregated_log_joint`).

    Parameters
    ----------
    class_concentration : ndarray of shape (n_classes,)
        Dirichlet posterior of π; its draws (stream key 0) are shared by all documents.
    concentration : ndarray of shape (n_classes, n_words)
        Dirichlet posteriors of θ_k. A zero cell is θ_kw = 0; its log is clipped to the
        log of the smallest normal double.
    X : array-like or sparse matrix of shape (n_docs, n_words)
        Word counts; never modified.
    n_draws : int
        At most 2^20 per call (the layout of the variates' streams).
    seed : int

    Returns
    -------
    ndarray of shape (n_draws, n_docs, n_classes)

    Raises
    ------
    ValueError
        For ``n_draws`` out of range, or a concentration that is NaN, infinite or negative
        (counts altered in a model file): the sampler would never finish on one.
    """
    concentration = np.asarray(concentration, dtype=np.float64)
    for name, values in (
        ("class_concentration", np.asarray(class_concentration, dtype=np.float64)),
        ("concentration", concentration),
    ):
        # The Gamma sampler's rejection loop never accepts for a NaN or negative shape: it
        # would spin forever, so such a posterior (altered counts) is refused here.
        bad = ~(np.isfinite(values) & (values >= 0))
        if bad.any():
            raise ValueError(
                f"{name}: expected finite Dirichlet concentrations >= 0 (counts + λ); got "
                f"{values[bad][0]!r} at index {np.argwhere(bad)[0].tolist()} "
                f"({np.count_nonzero(bad)} of {values.size} values are not)."
            )

    from bayesgen.maths import gamma_kernels  # heavy: numba compiles its kernels on import

    if not 0 < n_draws <= gamma_kernels.MAX_DRAWS:
        raise ValueError(
            f"n_draws: expected 1 to {gamma_kernels.MAX_DRAWS:,} draws per call; got {n_draws}."
        )
    X = sp.csr_array(X)
    if not X.has_sorted_indices:  # a copy: the caller's matrix is never modified
        X = X.copy()
        X.sort_indices()
    n_docs, n_classes = X.shape[0], concentration.shape[0]
    tiny = np.finfo(np.float64).tiny
    class_prob = dirichlet_draws(_stream(seed, 0), class_concentration, (n_draws,), np.float64)
    words = np.unique(X.indices)
    columns = sp.csc_array(X[:, words])  # documents × the batch's words, sorted per column
    columns.sort_indices()
    totals = concentration.sum(axis=1)
    rests, digests = np.empty((n_docs, n_classes)), np.empty(n_docs, dtype=np.uint64)
    for doc in range(n_docs):  # the remainder: the concentration of the words it lacks
        span = slice(X.indptr[doc], X.indptr[doc + 1])
        indices, values = X.indices[span], X.data[span]
        rests[doc] = np.maximum(totals - concentration[:, indices].sum(axis=1), 0.0)
        content = indices.astype(np.int64).tobytes() + values.astype(np.float64).tobytes()
        digest = hashlib.blake2b(content, digest_size=8).digest()  # whatever the dtypes
        digests[doc] = np.frombuffer(digest, dtype=np.uint64)[0]
    word_params, small_words = _gamma_parameters(concentration[:, words].T)  # word-major
    rest_params, small_rests = _gamma_parameters(rests)
    out = np.empty((n_draws, n_docs, n_classes))
    gamma_kernels.aggregated_log_joint(
        gamma_kernels.stream_tags(_seed_key(seed, 1), words.astype(np.uint64), n_classes),
        word_params,
        columns.indptr.astype(np.int64),
        columns.indices.astype(np.int64),
        columns.data.astype(np.float64),
        gamma_kernels.stream_tags(_seed_key(seed, 2), digests, n_classes),
        rest_params,
        np.asarray(X.sum(axis=1), dtype=np.float64).ravel(),
        np.log(np.maximum(class_prob, tiny)),
        small_words or small_rests,
        out,
    )
    return out
