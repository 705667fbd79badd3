"""Numba kernels of the aggregated Dirichlet draws (:mod:`bayesgen.maths.aggregated`).

Every Gamma variate comes from its own counter-based stream: a key made from (seed, word or
document, class, draw) is advanced SplitMix64-style, ``mix64(key + n φ)`` for n = 0, 1, …,
so a variate is the same whatever else is drawn, in any order and on any number of threads.
The variates are Marsaglia and Tsang's exact rejection sampler (a Box–Muller normal, and
Gamma(a + 1) U^(1/a) below a = 1); each attempt runs for a block of values in loops LLVM
vectorises, with a logarithm and a cosine written out as polynomials because libm's are not
vectorised without Intel's SVML; the rejected values (1 to 5 per cent) are gathered and
tried again together. ``fastmath={"contract"}`` lets LLVM fuse multiply-adds and nothing
else (no reassociation: the same inputs give the same bits on a given machine).

Imported on first use only: compiling costs seconds once (``cache=True`` keeps the machine
code on disk), and importing numba a fraction of a second.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # SplitMix64's increment, 2^64 / φ
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
#: A cell's variate for draw d and class k is made from positions (k 2^44 + d 2^24 + n) of
#: the SplitMix64 stream of its word (or document), n = 0, 1, … its own counter: distinct
#: positions, so no two variates of a word share a number, for up to 2^20 draws and classes.
CLASS_STRIDE = np.uint64((0x9E3779B97F4A7C15 << 44) % 2**64)
DRAW_STRIDE = np.uint64((0x9E3779B97F4A7C15 << 24) % 2**64)
MAX_DRAWS = 2**20
_MANTISSA = np.uint64(0x000FFFFFFFFFFFFF)
_ONE_BITS = np.uint64(0x3FF0000000000000)
_LOW53 = np.uint64(2**53 - 1)
_LN2_HI = 6.93147180369123816490e-01  # ln 2 split so that e ln 2 is exact to double rounding
_LN2_LO = 1.90821492927058770002e-10
_SQRT2 = 1.4142135623730951
_LG1, _LG2, _LG3, _LG4 = (
    6.666666666666735130e-01,
    3.999999999940941908e-01,
    2.857142874366239149e-01,
    2.222219843214978396e-01,
)
_LG5, _LG6, _LG7 = 1.818357216161805012e-01, 1.531383769920937332e-01, 1.479819860511658591e-01
_HALF_PI = 1.5707963267948966
#: log of the smallest normal double: the log of a zero-concentration cell (θ = 0), clipped.
LOG_TINY = math.log(np.finfo(np.float64).tiny)
#: Values of one block: its dozen float64 buffers stay in a core's L2 cache.
BLOCK_CELLS = 4096
#: Draws of one parallel task: a word's values for them are one contiguous row of
#: DRAW_BLOCK × classes, which its documents' sums take in vectorised loops.
DRAW_SHIFT = 2
DRAW_BLOCK = 1 << DRAW_SHIFT


@njit(inline="always", cache=True, error_model="numpy", fastmath={"contract"})
def mix64(z):
    """SplitMix64's output function (Stafford's mix 13): a bijection of 64-bit words."""
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(inline="always", cache=True, error_model="numpy", fastmath={"contract"})
def _unit(bits):
    """A uniform in (0, 1) from the top 53 bits: never 0, so its log is finite."""
    return (np.float64(bits >> np.uint64(11)) + 0.5) * 2.0**-53


@njit(inline="always", cache=True, error_model="numpy", fastmath={"contract"})
def _signed_cosine(bits):
    """±cos(π u / 2), u uniform from the low 53 bits, sign from the top bit: the law of
    cos(2π U) that Box–Muller needs, with a Taylor series on [0, π/2] (error < 2e-17)."""
    u = (np.float64(bits & _LOW53) + 0.5) * 2.0**-53
    x = _HALF_PI * u
    z = x * x
    c = -1.0 / 2432902008176640000.0  # -1/20!
    c = c * z + 1.0 / 6402373705728000.0
    c = c * z - 1.0 / 355687428096000.0
    c = c * z + 1.0 / 87178291200.0
    c = c * z - 1.0 / 479001600.0
    c = c * z + 1.0 / 3628800.0
    c = c * z - 1.0 / 40320.0
    c = c * z + 1.0 / 720.0
    c = c * z - 1.0 / 24.0
    c = c * z + 0.5
    c = 1.0 - c * z
    return -c if (bits >> np.uint64(63)) else c


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def log_into(x, out):
    """``out[i] = log(x[i])`` for positive normal doubles, to about 1 ulp: ln 2 times the
    exponent plus 2 atanh(s) of the mantissa, s = (m - 1) / (m + 1), m in [√½, √2), as
    fdlibm's ``__ieee754_log`` computes it (its polynomial; no table, no branches)."""
    x_bits, out_bits = x.view(np.uint64), out.view(np.uint64)
    for i in range(x.size):  # the mantissa as a double in [1, 2)
        out_bits[i] = (x_bits[i] & _MANTISSA) | _ONE_BITS
    for i in range(x.size):
        e = np.float64(np.int64(x_bits[i] >> np.uint64(52)) - 1023)
        m = out[i]
        if m > _SQRT2:
            m *= 0.5
            e += 1.0
        f = m - 1.0
        s = f / (2.0 + f)
        z = s * s
        w = z * z  # fdlibm's e_log.c: its minimax R(z) of 2 atanh(s) = 2s + s R(z)
        r = z * (_LG1 + w * (_LG3 + w * (_LG5 + w * _LG7))) + w * (_LG2 + w * (_LG4 + w * _LG6))
        half_f2 = 0.5 * f * f
        out[i] = e * _LN2_HI - ((half_f2 - (s * (half_f2 + r) + e * _LN2_LO)) - f)


@njit(inline="always", cache=True, error_model="numpy", fastmath={"contract"})
def _attempt_inputs(key, radius, angle, accept_u, i):
    radius[i] = _unit(mix64(key + GOLDEN))
    angle[i] = _signed_cosine(mix64(key + np.uint64(2) * GOLDEN))
    accept_u[i] = _unit(mix64(key + np.uint64(3) * GOLDEN))


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def _attempt_finish(n, d, c, log_d, g, log_g, accepted, scratch):
    """The sampler's steps after the uniforms, for values 0…n - 1."""
    radius, angle, accept_u, logs = scratch[0, :n], scratch[1, :n], scratch[2, :n], scratch[3, :n]
    log_into(radius, logs)
    log_into(accept_u, radius)  # radius now holds log U of the acceptance test
    for i in range(n):
        x = math.sqrt(-2.0 * logs[i]) * angle[i]
        t = 1.0 + c[i] * x
        angle[i] = x
        g[i] = t  # kept: its sign decides; the log below sees a safe positive stand-in
        accept_u[i] = t if t > 0.0 else 1.0
    log_into(accept_u, logs)
    for i in range(n):
        x, t, log_t, di = angle[i], g[i], logs[i], d[i]
        v = t * t * t
        ok = (t > 0.0) & (radius[i] < 0.5 * x * x + di - di * v + 3.0 * di * log_t)
        g[i] = di * v
        log_g[i] = log_d[i] + 3.0 * log_t
        accepted[i] = 1.0 if ok else 0.0


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def _attempt(keys, d, c, log_d, attempt, g, log_g, accepted, scratch):
    """Attempt ``attempt`` of Marsaglia and Tsang's sampler for every value, in loops LLVM
    vectorises: g and log g where ``accepted`` (1.0), else to be tried again."""
    n = keys.size
    step = np.uint64(3) * np.uint64(attempt) * GOLDEN
    radius, angle, accept_u = scratch[0], scratch[1], scratch[2]
    for i in range(n):
        _attempt_inputs(keys[i] + step, radius, angle, accept_u, i)
    _attempt_finish(n, d, c, log_d, g, log_g, accepted, scratch)


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def _retry(keys, d, c, log_d, g, log_g, accepted, spare):
    """Attempts 1, 2, … of the values not yet ``accepted``, gathered into the ``spare``
    buffers (index, key, d, c, log d, g, log g, accepted, scratch (4, n)) so that the
    sampler's loops stay vectorised: a few per cent of the values, fewer each round."""
    index, sub_keys, sub_d, sub_c, sub_log_d, sub_g, sub_log_g, sub_ok, sub_scratch = spare
    m = 0
    for i in range(keys.size):
        if accepted[i] == 0.0:
            index[m] = i
            m += 1
    attempt = 1
    while m:
        for q in range(m):
            i = index[q]
            sub_keys[q], sub_d[q], sub_c[q], sub_log_d[q] = keys[i], d[i], c[i], log_d[i]
        _attempt(
            sub_keys[:m], sub_d, sub_c, sub_log_d, attempt, sub_g, sub_log_g, sub_ok,
            sub_scratch,
        )  # fmt: skip
        still = 0
        for q in range(m):
            i = index[q]
            if sub_ok[q] == 1.0:
                g[i], log_g[i] = sub_g[q], sub_log_g[q]
            else:
                index[still] = i
                still += 1
        m = still
        attempt += 1


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def spare_buffers(n):
    """The buffers :func:`_retry` gathers up to n values into."""
    return (
        np.empty(n, dtype=np.int64),
        np.empty(n, dtype=np.uint64),
        np.empty(n),
        np.empty(n),
        np.empty(n),
        np.empty(n),
        np.empty(n),
        np.empty(n),
        np.empty((4, n)),
    )


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def _small_shapes(keys, inv_shape, g, log_g):
    """Gamma(a) = Gamma(a + 1) U^(1/a) below a = 1, kept in logs (counter 0 of the stream);
    a = 0 is a point mass at 0, its log clipped to :data:`LOG_TINY`."""
    for i in range(keys.size):
        if inv_shape[i] > 0.0:
            log_g[i] += math.log(_unit(mix64(keys[i]))) * inv_shape[i]
            g[i] = math.exp(log_g[i])
        elif inv_shape[i] < 0.0:
            g[i], log_g[i] = 0.0, LOG_TINY


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def gamma_cells(keys, d, c, log_d, inv_shape, has_small, g, log_g, scratch):
    """Gamma variates g and log g of the values with stream ``keys``.

    Per value: d = a' - 1/3, c = 1/√(9 d) and log d of a' = a (a >= 1) or a + 1 (a < 1);
    ``inv_shape`` is 0 for a >= 1, 1/a for 0 < a < 1 and -1 for a = 0 (g = 0, log g
    clipped to :data:`LOG_TINY`). ``scratch`` is (5, n) float64. Counter 0 of a stream is
    the boost's uniform, counters 3m + 1…3m + 3 attempt m of the sampler.
    """
    n = keys.size
    accepted = scratch[4, :n]
    _attempt(keys, d, c, log_d, 0, g, log_g, accepted, scratch)
    _retry(keys, d, c, log_d, g[:n], log_g[:n], accepted, spare_buffers(n))
    if has_small:
        _small_shapes(keys, inv_shape, g, log_g)


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def stream_tags(seed_key, ids, n_classes):
    """The tag of every cell (id, class), id-major: its variate for draw d draws the numbers
    ``mix64(tag + d DRAW_STRIDE + n φ)``, n = 0, 1, …. ``ids`` are word indices or document
    digests."""
    tags = np.empty(ids.size * n_classes, dtype=np.uint64)
    for owner in range(ids.size):
        key = mix64(seed_key ^ mix64(ids[owner] + GOLDEN))
        for k in range(n_classes):
            tags[owner * n_classes + k] = key + np.uint64(k) * CLASS_STRIDE
    return tags


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def _exponential_values(tags, cells, m, lo, first_draw, g, log_g, buffers):
    """Exp(1) = Gamma(1) values, -log U (counter 0 of each stream), and their logs, of the
    ``m`` cells listed in ``cells``, put in their places of the block's (cell, draw)
    layout: under the default α = 1 the zero-count cells, often most of them, at half the
    cost of the rejection sampler."""
    n = m * DRAW_BLOCK
    uniform, value, log_value = buffers[5][0, :n], buffers[5][1, :n], buffers[5][2, :n]
    for q in range(m):  # per cell, its DRAW_BLOCK draws: no gathers per value
        tag, row = tags[cells[q]], q * DRAW_BLOCK
        for b in range(DRAW_BLOCK):
            uniform[row + b] = _unit(mix64(tag + np.uint64(first_draw + b) * DRAW_STRIDE))
    log_into(uniform, value)
    for i in range(n):
        value[i] = -value[i]
    log_into(value, log_value)
    _put_in_place(cells, m, lo, value, log_value, g, log_g)


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def _sampled_values(tags, params, cells, m, lo, first_draw, has_small, g, log_g, buffers):
    """Marsaglia–Tsang values of the ``m`` cells listed in ``cells``, put in their places
    of the block's (cell, draw) layout."""
    n = m * DRAW_BLOCK
    keys, d, c, log_d, inv_shape, scratch, spare, value, log_value = buffers
    for q in range(m):  # per cell, its DRAW_BLOCK draws: no gathers per value
        cell, row = cells[q], q * DRAW_BLOCK
        tag, cell_d, cell_c, cell_log_d = (
            tags[cell],
            params[0, cell],
            params[1, cell],
            params[2, cell],
        )
        for b in range(DRAW_BLOCK):
            keys[row + b] = tag + np.uint64(first_draw + b) * DRAW_STRIDE
            d[row + b], c[row + b], log_d[row + b] = cell_d, cell_c, cell_log_d
    accepted = scratch[4, :n]
    _attempt(keys[:n], d, c, log_d, 0, value, log_value, accepted, scratch)
    _retry(keys[:n], d[:n], c[:n], log_d[:n], value[:n], log_value[:n], accepted, spare)
    if has_small:
        for i in range(n):
            inv_shape[i] = params[3, cells[i >> DRAW_SHIFT]]
        _small_shapes(keys[:n], inv_shape[:n], value, log_value)
    _put_in_place(cells, m, lo, value, log_value, g, log_g)


@njit(inline="always", cache=True, error_model="numpy", fastmath={"contract"})
def _put_in_place(cells, m, lo, value, log_value, g, log_g):
    """The values of the ``m`` cells listed in ``cells`` (in their order, DRAW_BLOCK each)
    put in their places of the block's (cell, draw) layout."""
    for q in range(m):
        place, row = (cells[q] - lo) * DRAW_BLOCK, q * DRAW_BLOCK
        for b in range(DRAW_BLOCK):
            g[place + b], log_g[place + b] = value[row + b], log_value[row + b]


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def block_variates(tags, params, lo, hi, first_draw, has_small, g, log_g, buffers, cells):
    """g and log g of cells lo…hi for draws first_draw + 0…DRAW_BLOCK - 1, laid out (cell,
    draw), with ``buffers`` (keys, d, c, log d, 1/a, scratch (5, n), :func:`spare_buffers`,
    value, log value) of n values and ``cells`` (2, cells) of indices: the cells of shape 1
    (``params[4]`` is 1) take the exponential, the others the rejection sampler."""
    exponential, other = cells[0], cells[1]
    m_exp = m_other = 0
    for cell in range(lo, hi):  # without branches: which kind a cell is, is random
        is_exp = params[4, cell] == 1.0
        exponential[m_exp] = cell
        other[m_other] = cell
        m_exp += is_exp
        m_other += 1 - is_exp
    if m_exp:
        _exponential_values(tags, exponential, m_exp, lo, first_draw, g, log_g, buffers)
    if m_other:
        _sampled_values(tags, params, other, m_other, lo, first_draw, has_small, g, log_g, buffers)
    return (hi - lo) * DRAW_BLOCK


@njit(parallel=True, cache=True, error_model="numpy", fastmath={"contract"})
def aggregated_log_joint(
    word_tags,
    word_params,
    col_ptr,
    col_docs,
    col_counts,
    doc_tags,
    doc_params,
    lengths,
    log_class_prob,
    has_small,
    out,
):
    """``out[d, n, k] = log π_dk + Σ_w x_nw log g_dkw - L_n log(Σ_w g_dkw + R_dnk)``.

    ``word_tags`` and ``word_params`` ((4, words × classes), :func:`gamma_cells`' d, c, log d
    and 1/a) describe the cells of the batch's words, ``doc_tags`` and ``doc_params`` the
    documents' remainder cells; the words' documents are the CSC arrays ``col_ptr``,
    ``col_docs``, ``col_counts``. Blocks of :data:`DRAW_BLOCK` draws run in parallel (the
    last block's extra draws are made and dropped); a document's sums are added in its
    words' order, so its values depend neither on the batch nor on the number of threads.
    """
    n_draws, n_docs, n_classes = out.shape
    n_words = word_tags.size // n_classes
    width = n_classes * DRAW_BLOCK  # a word's values for one block: (class, draw)
    per_block = max(1, BLOCK_CELLS // width)
    size = per_block * width
    for block in prange((n_draws + DRAW_BLOCK - 1) // DRAW_BLOCK):
        first = block * DRAW_BLOCK
        log_terms, word_sums = np.zeros((n_docs, width)), np.zeros((n_docs, width))
        g, log_g = np.empty(size), np.empty(size)
        buffers = (
            np.empty(size, dtype=np.uint64),
            np.empty(size),
            np.empty(size),
            np.empty(size),
            np.empty(size),
            np.empty((5, size)),
            spare_buffers(size),
            np.empty(size),
            np.empty(size),
        )
        cells = np.empty((2, per_block * n_classes), dtype=np.int64)
        for start in range(0, n_words, per_block):
            stop = min(start + per_block, n_words)
            block_variates(
                word_tags,
                word_params,
                start * n_classes,
                stop * n_classes,
                first,
                has_small,
                g,
                log_g,
                buffers,
                cells,
            )
            for offset in range(stop - start):  # not j - start: that indexing is 3x slower
                j, row = start + offset, offset * width
                for p in range(col_ptr[j], col_ptr[j + 1]):
                    doc, count = col_docs[p], col_counts[p]
                    for i in range(width):
                        log_terms[doc, i] += count * log_g[row + i]
                        word_sums[doc, i] += g[row + i]
        for start in range(0, n_docs, per_block):  # each document's remainder cells
            stop = min(start + per_block, n_docs)
            block_variates(
                doc_tags,
                doc_params,
                start * n_classes,
                stop * n_classes,
                first,
                has_small,
                g,
                log_g,
                buffers,
                cells,
            )
            for offset in range(stop - start):
                doc, row = start + offset, offset * width
                for k in range(n_classes):
                    for b in range(min(DRAW_BLOCK, n_draws - first)):
                        i = k * DRAW_BLOCK + b
                        total = word_sums[doc, i] + g[row + i]
                        out[first + b, doc, k] = (
                            log_class_prob[first + b, k]
                            + log_terms[doc, i]
                            - lengths[doc] * math.log(total)
                        )
