"""Numba kernels of the Dirichlet compound multinomial
(:mod:`bayesgen.maths.dirichlet_multinomial`).

* :func:`level_keys` and :func:`sum_runs` aggregate the entries of one (class, word, level):
  a single int64 key, (cell, level, position), sorted by ``np.sort`` (which NumPy vectorises,
  where ``lexsort`` of three arrays cost ten times as much), then its runs summed in order.
* :func:`document_sums` gives each document's length and multinomial coefficient, log n! −
  Σ_w log x_w!, from a table of log c! for the whole counts below 1,024.
* :func:`exceedance_pairs` and :func:`pair_sums` give lnΓ(α + c) − lnΓ(α) and its first two
  derivatives in α, ψ(α + c) − ψ(α) and ψ'(α) − ψ'(α + c), summed over a cell's entries: for
  the whole levels c ≤ ``DIRECT_LEVELS`` (most levels of text are 1, 2 or 3) they are
  Σ_{j<c} log(α + j), Σ_{j<c} 1/(α + j) and Σ_{j<c} 1/(α + j)², exact to rounding, gathered in
  Minka's exceedance form Σ_j H(j) f(α + j): one division per (cell, j) where SciPy's
  ``digamma`` costs a series per entry, and the logarithms are NumPy's, vectorised. The other
  levels (:func:`other_sums`, :func:`rising_terms`) use the recurrence ψ(x) = ψ(x + 1) − 1/x
  up to x ≥ ``ASYMPTOTIC_FROM``, the asymptotic (Bernoulli) series of ψ and ψ' there, accurate
  to 1e-18, and ``math.lgamma``.
* :func:`mean_derivatives`, :func:`shared_system`, :func:`mean_step`, :func:`class_direction`,
  :func:`step_bounds`, :func:`moved_means`: the loops over cells of Newton's method
  (:mod:`bayesgen.maths.dirichlet_multinomial_fit`).

Imported on first use (:func:`bayesgen.maths.dirichlet_multinomial_objective.kernels`):
importing numba takes a fraction of a second and compiling these a few seconds once
(``cache=True`` keeps the machine code on disk).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: Whole levels up to this are summed term by term.
DIRECT_LEVELS = 16
#: ψ and ψ' are their asymptotic series from here on (the next term is below 1e-18 there).
ASYMPTOTIC_FROM = 16.0
#: log c! is looked up for the whole counts below this.
LOG_FACTORIAL_TABLE = 1024


@njit(cache=True)
def largest_whole_level(level):
    """The largest of ``level`` if all are whole numbers ≥ 0 (below 2^53), else −1."""
    top = 0.0
    for value in level:
        if not (value >= 0.0 and value < 2.0**53 and value == np.floor(value)):
            return -1
        top = max(top, value)
    return int(top)


@njit(cache=True)
def level_keys(major, minor, level, minor_bits, level_bits, position_bits):
    """One int64 key per entry, major | minor | level | position in bit fields of
    ``minor_bits``, ``level_bits`` and ``position_bits`` (0: no position), whose sorted order
    is (major, minor, level, position)."""
    keys = np.empty(major.size, dtype=np.int64)
    for index in range(major.size):
        key = (major[index] << minor_bits) | minor[index]
        key = (key << level_bits) | np.int64(level[index])
        keys[index] = (key << position_bits) | index if position_bits else key
    return keys


@njit(cache=True)
def sum_runs(keys, minor_bits, level_bits, position_bits, weight):
    """The runs of one (major, minor, level) in sorted :func:`level_keys`, each with the sum
    of the weights of its members (``weight[position]``, in order; without positions, the
    number of members); runs summing to 0 dropped. Every field is read from the key: no
    access out of order.

    Returns
    -------
    (major, minor, level, summed) : four arrays of one length
    """
    n = keys.size
    position_mask = (np.int64(1) << position_bits) - 1
    level_mask = (np.int64(1) << level_bits) - 1
    minor_mask = (np.int64(1) << minor_bits) - 1
    out_major = np.empty(n, dtype=np.int64)
    out_minor = np.empty(n, dtype=np.int64)
    out_level = np.empty(n)
    summed = np.empty(n)
    n_out = 0
    index = 0
    while index < n:
        current = keys[index] >> position_bits
        total = 0.0
        while index < n and keys[index] >> position_bits == current:
            total += weight[keys[index] & position_mask] if position_bits else 1.0
            index += 1
        if total != 0:
            out_level[n_out] = current & level_mask
            cell = current >> level_bits
            out_minor[n_out] = cell & minor_mask
            out_major[n_out] = cell >> minor_bits
            summed[n_out] = total
            n_out += 1
    return out_major[:n_out], out_minor[:n_out], out_level[:n_out], summed[:n_out]


@njit(cache=True, inline="always")
def _log_factorial(value, table):
    if value < table.size and value >= 0.0:  # (a chained comparison compiles 7x slower)
        whole = int(value)
        if whole == value:
            return table[whole]
    return math.lgamma(value + 1.0)


@njit(cache=True)
def document_sums(rows, values, n_rows):
    """Each row's total (its length n) and log n! − Σ log x!, over the entries (row, x)."""
    table = np.empty(LOG_FACTORIAL_TABLE)
    for count in range(LOG_FACTORIAL_TABLE):
        table[count] = math.lgamma(count + 1.0)
    lengths = np.zeros(n_rows)
    for index in range(rows.size):
        lengths[rows[index]] += values[index]
    coefficient = np.empty(n_rows)
    for row in range(n_rows):
        coefficient[row] = _log_factorial(lengths[row], table)
    for index in range(rows.size):
        coefficient[rows[index]] -= _log_factorial(values[index], table)
    return lengths, coefficient


@njit(cache=True)
def _digamma_series(x):
    """ψ(x) for x ≥ ``ASYMPTOTIC_FROM``: log x − 1/(2x) − Σ_k B_2k / (2k x^2k)."""
    inverse = 1.0 / x
    square = inverse * inverse
    series = square * (
        1.0 / 12.0
        - square
        * (
            1.0 / 120.0
            - square
            * (
                1.0 / 252.0
                - square
                * (
                    1.0 / 240.0
                    - square * (1.0 / 132.0 - square * (691.0 / 32760.0 - square / 12.0))
                )
            )
        )
    )
    return math.log(x) - 0.5 * inverse - series


@njit(cache=True)
def _trigamma_series(x):
    """ψ'(x) for x ≥ ``ASYMPTOTIC_FROM``: 1/x + 1/(2x²) + Σ_k B_2k / x^(2k+1)."""
    inverse = 1.0 / x
    square = inverse * inverse
    series = (
        inverse
        * square
        * (
            1.0 / 6.0
            - square
            * (
                1.0 / 30.0
                - square
                * (
                    1.0 / 42.0
                    - square
                    * (
                        1.0 / 30.0
                        - square * (5.0 / 66.0 - square * (691.0 / 2730.0 - square * 7.0 / 6.0))
                    )
                )
            )
        )
    )
    return inverse + 0.5 * square + series


@njit(cache=True, error_model="numpy")
def _rising(alpha, level):
    """(lnΓ(α + c) − lnΓ(α), ψ(α + c) − ψ(α), ψ'(α) − ψ'(α + c)) at α > 0, c = ``level`` ≥ 0,
    by the recurrence up to ``ASYMPTOTIC_FROM`` and the series there."""
    # ψ(α) = ψ(x) − Σ 1/(α + j) with x = α + (number of terms) ≥ ASYMPTOTIC_FROM, and so on.
    low_first = 0.0
    low_second = 0.0
    low = alpha
    while low < ASYMPTOTIC_FROM:
        inverse = 1.0 / low
        low_first += inverse
        low_second += inverse * inverse
        low += 1.0
    high_first = 0.0
    high_second = 0.0
    high = alpha + level
    while high < ASYMPTOTIC_FROM:
        inverse = 1.0 / high
        high_first += inverse
        high_second += inverse * inverse
        high += 1.0
    first = (_digamma_series(high) - _digamma_series(low)) + (low_first - high_first)
    second = (_trigamma_series(low) - _trigamma_series(high)) + (low_second - high_second)
    return math.lgamma(alpha + level) - math.lgamma(alpha), first, second


@njit(cache=True, error_model="numpy")
def rising_terms(alpha, level):
    """Elementwise (lnΓ(α + c) − lnΓ(α), ψ(α + c) − ψ(α), ψ'(α) − ψ'(α + c)) of two arrays of
    one shape (α > 0, c ≥ 0), as three arrays."""
    flat_alpha, flat_level = alpha.ravel(), level.ravel()
    value = np.empty(flat_alpha.size)
    first = np.empty(flat_alpha.size)
    second = np.empty(flat_alpha.size)
    for index in range(flat_alpha.size):
        value[index], first[index], second[index] = _rising(flat_alpha[index], flat_level[index])
    return value.reshape(alpha.shape), first.reshape(alpha.shape), second.reshape(alpha.shape)


@njit(cache=True, inline="always")
def _direct(level):
    """Whether ``level`` is a whole number in 1 … DIRECT_LEVELS."""
    return level >= 1.0 and level <= DIRECT_LEVELS and level == np.floor(level)


@njit(cache=True)
def exceedance_pairs(start, level, weight):
    """Minka's exceedance form of the whole levels 1 … ``DIRECT_LEVELS`` of every segment i
    (a cell, or a class's lengths; its entries [start[i], start[i + 1])):
    Σ_e w_e Σ_{j<c_e} f(α + j) = Σ_j H_i(j) f(α + j), H_i(j) = Σ_{e: c_e > j} w_e.

    Returns
    -------
    base : (n_segments,)
        H_i(0), the weight of the segment's such levels (most of text's are 1: this is the
        whole sum of most cells).
    pair_segment, pair_offset, pair_weight : (n_pairs,)
        (i, j, H_i(j)) for 1 ≤ j below the segment's largest such level, by segment then j.
    other_entry, other_segment : (n_other,)
        The entries whose level is not such a whole number (their terms are made apart), and
        their segments.
    segment_weight : (n_segments,)
        Σ w of each segment's entries of level > 0 (a cell's documents).
    """
    n_segments = start.size - 1
    # The pairs of segment i are [first_pair[i], first_pair[i + 1]): j = 1 … its top − 1.
    first_pair = np.zeros(n_segments + 1, dtype=np.int64)
    segment_weight = np.zeros(n_segments)
    n_other = 0
    for segment in range(n_segments):
        top = 0
        for entry in range(start[segment], start[segment + 1]):
            c = level[entry]
            if _direct(c):
                top = max(top, np.int64(c))
            elif c != 0.0:
                n_other += 1
            if c > 0.0:
                segment_weight[segment] += weight[entry]
        first_pair[segment + 1] = first_pair[segment] + max(top - 1, 0)
    base = np.zeros(n_segments)
    pair_segment = np.empty(first_pair[-1], dtype=np.int32)
    pair_offset = np.empty(first_pair[-1])
    pair_weight = np.zeros(first_pair[-1])
    other_entry = np.empty(n_other, dtype=np.int64)
    other_segment = np.empty(n_other, dtype=np.int64)
    n_other = 0
    for segment in range(n_segments):
        for pair in range(first_pair[segment], first_pair[segment + 1]):
            pair_segment[pair] = segment
            pair_offset[pair] = pair - first_pair[segment] + 1
        for entry in range(start[segment], start[segment + 1]):
            c = level[entry]
            if _direct(c):
                # Entry e adds w_e to H(j) for every j < c_e.
                base[segment] += weight[entry]
                for pair in range(first_pair[segment], first_pair[segment] + np.int64(c) - 1):
                    pair_weight[pair] += weight[entry]
            elif c != 0.0:
                other_entry[n_other] = entry
                other_segment[n_other] = segment
                n_other += 1
    return base, pair_segment, pair_offset, pair_weight, other_entry, other_segment, segment_weight


@njit(cache=True, error_model="numpy")
def pair_sums(alpha, base, pair_segment, pair_offset, pair_weight):
    """Σ_j H(j) / (α + j) and Σ_j H(j) / (α + j)² of every segment (:func:`exceedance_pairs`),
    and each pair's α + j, j ≥ 1 (whose logarithms NumPy takes vectorised, and those of α:
    the value Σ_j H(j) log(α + j))."""
    first = np.empty(alpha.size)
    second = np.empty(alpha.size)
    for segment in range(alpha.size):
        inverse = 1.0 / alpha[segment]
        first[segment] = base[segment] * inverse
        second[segment] = base[segment] * inverse * inverse
    factor = np.empty(pair_segment.size)
    for pair in range(pair_segment.size):
        segment = pair_segment[pair]
        x = alpha[segment] + pair_offset[pair]
        factor[pair] = x
        inverse = 1.0 / x
        weighted = pair_weight[pair] * inverse
        first[segment] += weighted
        second[segment] += weighted * inverse
    return first, second, factor


@njit(cache=True, error_model="numpy")
def other_sums(alpha, segment_of, level, weight, segment_class, first, second, n_classes):
    """The terms of the entries left out of the pairs, by :func:`_rising`: their digamma and
    trigamma differences added into ``first`` and ``second`` (in place), and Σ w [lnΓ(α + c)
    − lnΓ(α)] of each class."""
    value = np.zeros(n_classes)
    for index in range(segment_of.size):
        segment = segment_of[index]
        term_value, term_first, term_second = _rising(alpha[segment], level[index])
        value[segment_class[segment]] += weight[index] * term_value
        first[segment] += weight[index] * term_first
        second[segment] += weight[index] * term_second
    return value


@njit(cache=True, error_model="numpy")
def mean_derivatives(
    cell_class, cell_coordinate, coordinate_group, s, m, first, second, extra, n_groups
):
    """The pieces of the gradient and Hessian of F that run over the cells (see
    :mod:`bayesgen.maths.dirichlet_multinomial_fit`), from the digamma sums A (``first``)
    and the trigamma sums −Q (``second``) of each cell.

    Returns
    -------
    gradient : (n_coordinates,)
        ∂F/∂m less constants: Σ s A + (c − 1) / m over the coordinate's cells.
    inverse : (n_coordinates,)
        1 / ∂²F/∂m², ∂²F/∂m² = Σ s² Q − (c − 1) / m² < 0.
    cross : (n_cells,)
        ∂²F/∂s ∂m less constants: A − s m (−Q).
    border, border_rhs : (n_groups,)
        Σ 1 / ∂²F/∂m² and Σ gradient / ∂²F/∂m² over each group's coordinates.
    """
    gradient = np.zeros(m.size)
    inverse = np.zeros(m.size)
    cross = np.empty(cell_class.size)
    for cell in range(cell_class.size):
        k = cell_class[cell]
        p = cell_coordinate[cell]
        gradient[p] += s[k] * first[cell]
        inverse[p] += s[k] * s[k] * second[cell]
        cross[cell] = first[cell] - s[k] * m[p] * second[cell]
    border = np.zeros(n_groups)
    border_rhs = np.zeros(n_groups)
    for p in range(m.size):
        inverse_m = 1.0 / m[p]
        gradient[p] += extra[p] * inverse_m
        inverse[p] = -1.0 / (inverse[p] + extra[p] * inverse_m * inverse_m)
        border[coordinate_group[p]] += inverse[p]
        border_rhs[coordinate_group[p]] += gradient[p] * inverse[p]
    return gradient, inverse, cross, border, border_rhs


@njit(cache=True, error_model="numpy")
def shared_system(
    coordinate_cell_start, coordinate_cells, cell_class, cross, gradient, inverse, n_classes
):
    """Σ_w h_kw h_jw / D_w, Σ_w h_kw / D_w and Σ_w h_kw g_w / D_w of a shared m (h the cells'
    ``cross`` terms, D = ∂²F/∂m², g the ``gradient``); the cells of coordinate w are
    ``coordinate_cells[coordinate_cell_start[w]:coordinate_cell_start[w + 1]]``."""
    matrix = np.zeros((n_classes, n_classes))
    linear = np.zeros(n_classes)
    rhs = np.zeros(n_classes)
    for p in range(coordinate_cell_start.size - 1):
        for a in range(coordinate_cell_start[p], coordinate_cell_start[p + 1]):
            cell = coordinate_cells[a]
            k = cell_class[cell]
            weighted = cross[cell] * inverse[p]
            linear[k] += weighted
            rhs[k] += weighted * gradient[p]
            for b in range(coordinate_cell_start[p], coordinate_cell_start[p + 1]):
                other = coordinate_cells[b]
                matrix[k, cell_class[other]] += weighted * cross[other]
    return matrix, linear, rhs


@njit(cache=True, error_model="numpy")
def mean_step(
    cell_class,
    cell_coordinate,
    coordinate_group,
    gradient,
    inverse,
    cross,
    step_s,
    multiplier,
    moving,
    n_groups,
):
    """Δm = −(gradient + Σ cross Δs + λ) / D at every coordinate (0 in a group not
    ``moving``), and Σ gradient Δm over each group (the slope of F along Δm)."""
    pushed = np.zeros(gradient.size)
    for cell in range(cell_class.size):
        pushed[cell_coordinate[cell]] += cross[cell] * step_s[cell_class[cell]]
    step = np.empty(gradient.size)
    slope = np.zeros(n_groups)
    for p in range(gradient.size):
        group = coordinate_group[p]
        if moving[group]:
            step[p] = -(gradient[p] + pushed[p] + multiplier[group]) * inverse[p]
        else:
            step[p] = 0.0
        slope[group] += gradient[p] * step[p]
    return step, slope


@njit(cache=True, error_model="numpy")
def step_bounds(values, steps, group, n_groups, keep):
    """Each group's largest t ≤ 1 with values + t steps ≥ keep values, and its largest
    |steps / values|."""
    longest = np.ones(n_groups)
    relative = np.zeros(n_groups)
    for index in range(values.size):
        g = group[index]
        ratio = steps[index] / values[index]
        if -ratio > 0.0 and (1.0 - keep) / -ratio < longest[g]:
            longest[g] = (1.0 - keep) / -ratio
        if abs(ratio) > relative[g]:
            relative[g] = abs(ratio)
    return longest, relative


@njit(cache=True, error_model="numpy")
def moved_means(m, step, t, group, unseen, unseen_step, unseen_extra):
    """m + t Δm and ρ + t Δρ (t per group), each group renormalised to Σ m + ρ E = 1."""
    n_groups = unseen.size
    moved = np.empty(m.size)
    moved_unseen = unseen + t * unseen_step
    total = moved_unseen * unseen_extra
    for p in range(m.size):
        moved[p] = m[p] + t[group[p]] * step[p]
        total[group[p]] += moved[p]
    for g in range(n_groups):
        if total[g] <= 0.0:
            total[g] = 1.0
        moved_unseen[g] /= total[g]
    for p in range(m.size):
        moved[p] /= total[group[p]]
    return moved, moved_unseen


@njit(cache=True, error_model="numpy")
def weighted_group_sums(weight, values, start):
    """Σ weight · values over each group's run [start[g], start[g + 1])."""
    out = np.zeros(start.size - 1)
    for group in range(start.size - 1):
        total = 0.0
        for index in range(start[group], start[group + 1]):
            total += weight[index] * values[index]
        out[group] = total
    return out


@njit(cache=True, error_model="numpy")
def class_direction(
    class_start,
    s,
    m,
    rho,
    first,
    second,
    extra,
    unseen_extra,
    length_first,
    length_second,
    shape,
    rate,
    free,
    coupled,
    slack,
    keep,
):
    """The step of every class where each has its own m (see
    :mod:`bayesgen.maths.dirichlet_multinomial_fit`): its cells [class_start[k],
    class_start[k + 1]) are the coordinates of its m, ``first`` and ``second`` their digamma
    and trigamma sums A and −Q, ``extra`` their c − 1.

    One pass over a class's cells sums its 2 × 2 KKT system, a second makes Δm. The Newton
    step is taken where ``coupled``, the Hessian is negative definite on Σ Δm = 0 and its
    slope is above −``slack``; else the uncoupled one: Δs a Newton step on log s (at most 1
    long, uphill where F is not concave in log s), Δm the m block's Newton step at fixed s.

    Returns
    -------
    step_s, step_m, step_rho, slope : the step, and F's derivative along it per class
    newton : whether the class took Newton's step
    longest, relative : the largest t ≤ 1 keeping every value ≥ ``keep`` times itself, and
        the largest |Δx / x| at t = 1, per class
    curvature : −∂²/∂(log s)² of max_m F, per class (where Newton's step was solved)
    """
    n_classes = s.size
    step_s = np.zeros(n_classes)
    step_rho = np.zeros(n_classes)
    step_m = np.zeros(m.size)
    slope = np.zeros(n_classes)
    newton = np.zeros(n_classes, dtype=np.bool_)
    longest = np.ones(n_classes)
    relative = np.zeros(n_classes)
    curvature = np.zeros(n_classes)
    for k in range(n_classes):
        if not free[k]:
            continue
        sk = s[k]
        mean_first = 0.0
        mean_second = 0.0
        square = 0.0
        linear = 0.0
        rhs = 0.0
        border = 0.0
        border_rhs = 0.0
        for cell in range(class_start[k], class_start[k + 1]):
            inverse_m = 1.0 / m[cell]
            gradient = sk * first[cell] + extra[cell] * inverse_m
            inverse_d = -1.0 / (sk * sk * second[cell] + extra[cell] * inverse_m * inverse_m)
            cross = first[cell] - sk * m[cell] * second[cell]
            mean_first += m[cell] * first[cell]
            mean_second += m[cell] * m[cell] * second[cell]
            weighted = cross * inverse_d
            square += cross * weighted
            linear += weighted
            rhs += weighted * gradient
            border += inverse_d
            border_rhs += gradient * inverse_d
        # ρ's row: gradient E/ρ, curvature −E/ρ², weight E in Σ m = 1.
        unseen = unseen_extra[k]
        border -= unseen * rho[k] * rho[k]
        border_rhs -= unseen * rho[k]
        gradient_s = mean_first - length_first[k] + (shape - 1.0) / sk - rate
        curvature_s = length_second[k] - mean_second - (shape - 1.0) / (sk * sk)
        log_curvature = sk * sk * curvature_s + sk * gradient_s
        log_step = np.sign(gradient_s)
        if log_curvature < 0:
            log_step = min(1.0, max(-1.0, -sk * gradient_s / log_curvature))
        uncoupled_s = sk * log_step
        uncoupled_multiplier = -border_rhs / border if border != 0 else 0.0
        # The multiplier's pivot −Σ 1/D + E ρ² > 0: eliminate λ; what is left of the s row
        # must be < 0.
        pivot = -border
        use = coupled[k] and pivot > 0
        newton_s = 0.0
        newton_multiplier = 0.0
        if use:
            reduced = curvature_s - square - linear * linear / pivot
            curvature[k] = -reduced * sk * sk
            use = reduced < 0
            newton_s = (rhs - gradient_s + linear * border_rhs / pivot) / reduced
            newton_multiplier = (border_rhs + linear * newton_s) / pivot
        for _ in range(2):
            d_s = newton_s if use else uncoupled_s
            multiplier = newton_multiplier if use else uncoupled_multiplier
            coupling = d_s if use else 0.0
            class_slope = gradient_s * d_s
            class_longest = 1.0
            class_relative = abs(d_s / sk)
            if d_s < 0:
                class_longest = min(class_longest, (1.0 - keep) * sk / -d_s)
            for cell in range(class_start[k], class_start[k + 1]):
                inverse_m = 1.0 / m[cell]
                gradient = sk * first[cell] + extra[cell] * inverse_m
                inverse_d = -1.0 / (sk * sk * second[cell] + extra[cell] * inverse_m * inverse_m)
                cross = first[cell] - sk * m[cell] * second[cell]
                d_m = -(gradient + cross * coupling + multiplier) * inverse_d
                step_m[cell] = d_m
                class_slope += gradient * d_m
                ratio = d_m * inverse_m
                class_relative = max(class_relative, abs(ratio))
                if ratio < 0:
                    class_longest = min(class_longest, (1.0 - keep) / -ratio)
            d_rho = 0.0
            if unseen > 0:
                d_rho = rho[k] + rho[k] * rho[k] * multiplier
                class_slope += unseen / rho[k] * d_rho
                ratio = d_rho / rho[k]
                class_relative = max(class_relative, abs(ratio))
                if ratio < 0:
                    class_longest = min(class_longest, (1.0 - keep) / -ratio)
            # On a negative definite Hessian Newton's slope is g'(−H)⁻¹g ≥ 0: below only
            # by rounding, near the maximum.
            if use and not class_slope > -slack[k]:
                use = False
                continue
            break
        step_s[k] = d_s
        step_rho[k] = d_rho
        slope[k] = class_slope
        newton[k] = use
        longest[k] = class_longest
        relative[k] = class_relative
    return step_s, step_m, step_rho, slope, newton, longest, relative, curvature
