"""The point fit of the Dirichlet compound multinomial: Newton's method on (s, m).

:func:`newton_fit` maximises F(s, m) = log p(X | y, s, m) + log p(s) + log p(m) (the
objective of :func:`bayesgen.maths.dirichlet_multinomial.log_objective`) over the precisions
s_k and the means m (one per class, or one shared), Σ_w m_w = 1, from the count histograms.

With α = s m, the likelihood's derivatives in α are A_w − B (A_w the digamma sums of the
word's levels at α_w, B those of the lengths at s) and its Hessian is diag(Q) + Z 11ᵀ (Q_w < 0
the trigamma sums, Z > 0 the lengths'; Minka 2000, "Estimating a Dirichlet distribution",
the Pólya section). In (s, m) the Z 11ᵀ part, and every term constant over the words, vanish
on the plane Σ Δm = 0, so the Newton step is the solution of a KKT system whose m block is
diagonal: eliminating Δm leaves a 2 × 2 system per class (one m per class), or K + 1 (a shared
m), solved exactly in O(cells). The cost is one pass over the histograms' entries per
iteration, and Newton's convergence is quadratic: 6 to 9 steps from the start below, where
Minka's fixed point (the mean's step alternated with the precision's) took 100 to 200.

Only the (class, word) cells the documents show are variables. Under a flat prior of m a
cell no document of its class shows has m = 0 at the maximum (the likelihood decreases in
it), and stays 0; under a Dirichlet(c) prior with c_w > 1 all the unseen cells of a class (of
all the classes, where m is shared) have m_w ∝ c_w − 1 at the maximum, and keep it on the
way: they are one variable ρ (m_w = ρ (c_w − 1)).

The start: m from each word's number of documents plus c − 1 (the maximum's m where every α
is small), s such that the expected number of distinct words of the documents, s Σ_d [ψ(s +
n_d) − ψ(s)] (the Chinese restaurant's tables, exact where every α is small), is theirs.

Safeguards. A step is cut to keep s and m at least a tenth of their values, and halved until
F does not decrease (F of each class separately, where the means are one per class: the
classes are then independent). Where the Hessian is not negative definite on the plane, or
the Newton step does not increase F, the step is the uncoupled one (the m block's Newton
step with s fixed, concave, and a 1-D step in log s). Where a Newton step is short (below
1e-3 relative) and the gain it predicts below the rounding of F (1e-11 of its terms' size),
it is taken without the test, which rounding could not decide. It stops, converged, when
the Newton step moves no s_k, m_kw or ρ by more than ``tol`` relative: its quadratic
convergence puts the answer then within about tol² of the maximiser, to rounding; and
unconverged where F's curvature in log s_k is below its rounding, or no step raises F above
it (s_k → ∞, the multinomial limit: F does not determine s_k), or its step overflows (s_k →
0 beyond floating point: a class whose documents each use one word has a likelihood free of
s, and a Gamma prior pushes s to 0).

F and its derivatives come from :mod:`bayesgen.maths.dirichlet_multinomial_objective`, which
lays the histograms out for the kernels; this module holds the iterations.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from bayesgen.maths.dirichlet_multinomial_objective import (
    Evaluation,
    Point,
    Problem,
    build_problem,
    evaluate,
    kernels,
    rising_sums,
)

if TYPE_CHECKING:
    from bayesgen.maths.dirichlet_multinomial import CountHistograms

#: The predicted gain below which F's rounding cannot tell a step's effect, relative to the
#: size of F's terms.
ROUNDING = 1e-11
#: A step keeps every s and m at least this fraction of its value.
KEEP = 0.1
#: A Newton step below this relative size whose gain is below F's rounding is near the
#: maximum, and taken untested.
NEAR = 1e-3
#: Halvings of a step before it is given up.
MAX_HALVINGS = 60
#: The start's Newton steps on log s: at most this many, each at most this long.
START_STEPS, START_STEP_LIMIT = 30, 2.0


class _Direction(NamedTuple):
    concentration: np.ndarray
    coordinates: np.ndarray
    unseen: np.ndarray
    slope: np.ndarray  # the derivative of each group's F along the direction


def _precision_derivatives(problem: Problem, point: Point, at: Evaluation):
    """∂F/∂s and ∂²F/∂s² of each class at fixed m."""
    s = point.concentration
    m = point.coordinates[problem.cell_coordinate]
    mean_first = kernels().weighted_group_sums(m, at.word_first, problem.class_cell_start)
    mean_second = kernels().weighted_group_sums(m * m, at.word_second, problem.class_cell_start)
    gradient = mean_first - at.length_first + (problem.shape - 1.0) / s - problem.rate
    curvature = at.length_second - mean_second - (problem.shape - 1.0) / s**2
    return gradient, curvature


def _direction(problem: Problem, point: Point, at: Evaluation, coupled: np.ndarray):
    """Each group's Newton step where ``coupled`` and the Newton step is uphill, else its
    uncoupled step (see the module's docstring); which groups took Newton's; each group's
    longest step t ≤ 1 keeping every value ≥ KEEP times itself, and its largest relative
    change |Δx / x| at t = 1; and each class's −∂²F/∂(log s)² (m's moves allowed for)."""
    if problem.shared:
        direction, newton, curvature = _shared_direction(problem, point, at, coupled)
        return (direction, newton, *_step_sizes(problem, point, direction), curvature)
    step_s, step_m, step_rho, slope, newton, longest, relative, curvature = (
        kernels().class_direction(
            problem.coordinate_start,
            point.concentration,
            point.coordinates,
            point.unseen,
            at.word_first,
            at.word_second,
            problem.coordinate_extra,
            problem.unseen_extra,
            at.length_first,
            at.length_second,
            problem.shape,
            problem.rate,
            problem.free,
            coupled,
            ROUNDING * at.scale,
            KEEP,
        )
    )
    return _Direction(step_s, step_m, step_rho, slope), newton, longest, relative, curvature


def _shared_direction(problem: Problem, point: Point, at: Evaluation, coupled: np.ndarray):
    """:func:`_direction` of a shared m (one group), whose (K + 1) × (K + 1) system couples
    the classes: (step, [whether Newton's], −∂²F/∂(log s)² per class)."""
    s, rho = point.concentration, point.unseen
    gradient_s, curvature_s = _precision_derivatives(problem, point, at)
    gradient_m, inverse_d, cross, border, border_rhs = kernels().mean_derivatives(
        problem.cell_class,
        problem.cell_coordinate,
        problem.coordinate_group,
        s,
        point.coordinates,
        at.word_first,
        at.word_second,
        problem.coordinate_extra,
        rho.size,
    )
    # ρ's row: gradient E/ρ, curvature −E/ρ², weight E in Σ m = 1 (E = Σ (c_w − 1) unseen).
    border -= problem.unseen_extra * rho**2
    border_rhs -= problem.unseen_extra * rho
    parts = (gradient_s, gradient_m, inverse_d, cross)
    newton_s, multiplier, curvature = _shared_newton(
        problem, s, curvature_s, *parts, border, border_rhs
    )
    if coupled[0] and np.all(np.isfinite(newton_s)) and np.all(np.isfinite(multiplier)):
        newton = _step(problem, point, parts, newton_s, multiplier, coupled=True)
        # On a negative definite Hessian the Newton step's slope is g'(−H)⁻¹g ≥ 0: below 0
        # only by rounding, near the maximum.
        if newton.slope[0] > -ROUNDING * at.scale[0]:
            return newton, np.array([True]), curvature
    # The uncoupled step: Newton's on log s (uphill where F is not concave in log s), and the
    # m block's with s fixed.
    log_curvature = s**2 * curvature_s + s * gradient_s
    with np.errstate(divide="ignore", invalid="ignore"):
        step = np.where(log_curvature < 0, -s * gradient_s / log_curvature, np.sign(gradient_s))
        multiplier = np.where(border != 0, -border_rhs / border, 0.0)
    step_s = s * np.clip(np.nan_to_num(step), -1.0, 1.0)
    return (
        _step(problem, point, parts, step_s, multiplier, coupled=False),
        np.array([False]),
        curvature,
    )


def _step(problem: Problem, point: Point, parts, step_s, multiplier, *, coupled: bool):
    """The whole step from Δs and the multiplier λ of Σ m = 1 (the KKT system's m rows,
    with the cross terms where ``coupled``); frozen classes and groups kept still."""
    gradient_s, gradient_m, inverse_d, cross = parts
    rho = point.unseen
    step_s = np.where(problem.free, step_s, 0.0)
    step_m, slope = kernels().mean_step(
        problem.cell_class,
        problem.cell_coordinate,
        problem.coordinate_group,
        gradient_m,
        inverse_d,
        cross,
        step_s if coupled else np.zeros_like(step_s),
        multiplier,
        problem.moving,
        rho.size,
    )
    has_unseen = problem.moving & (problem.unseen_extra > 0)
    step_rho = np.where(has_unseen, rho + rho**2 * multiplier, 0.0)
    slope += np.bincount(problem.class_group, gradient_s * step_s, minlength=rho.size)
    slope += np.where(has_unseen, problem.unseen_extra / rho * step_rho, 0.0)
    return _Direction(step_s, step_m, step_rho, slope)


def _shared_newton(
    problem, s, curvature_s, gradient_s, gradient_m, inverse_d, cross, border, border_rhs
):
    """(Δs, λ) of the (K + 1) × (K + 1) system of a shared m, NaN where its Hessian is not
    negative definite on the plane Σ Δm = 0; and −∂²F/∂(log s_k)² with λ eliminated."""
    free = np.flatnonzero(problem.free)
    curvature = np.zeros(s.size)
    failed = np.full(s.size, np.nan), np.array([np.nan]), curvature
    pivot = -border[0]
    if not pivot > 0:
        return failed
    matrix, linear, rhs = kernels().shared_system(
        problem.coordinate_cell_start,
        problem.coordinate_cells,
        problem.cell_class,
        cross,
        gradient_m,
        inverse_d,
        curvature_s.size,
    )
    s_border = -linear[free]
    reduced = np.diag(curvature_s[free]) - matrix[np.ix_(free, free)]
    reduced -= np.outer(s_border, s_border) / pivot
    reduced_rhs = rhs[free] - gradient_s[free] - s_border * border_rhs[0] / pivot
    curvature[free] = -np.diag(reduced) * s[free] ** 2
    if not np.all(np.diag(reduced) < 0):
        return failed
    # Jacobi scaling: the precisions' rows differ by orders of magnitude.
    scaling = 1.0 / np.sqrt(np.abs(np.diag(reduced)))
    try:
        factor = np.linalg.cholesky(-(reduced * scaling[:, None] * scaling[None, :]))
    except np.linalg.LinAlgError:
        return failed
    solved = np.linalg.solve(factor.T, np.linalg.solve(factor, -reduced_rhs * scaling))
    step_s = np.zeros(s.size)
    step_s[free] = solved * scaling
    return step_s, np.array([(border_rhs[0] - s_border @ step_s[free]) / pivot]), curvature


def _overflowed(problem: Problem, direction: _Direction) -> np.ndarray:
    """The groups whose step has a non-finite entry."""
    bad = ~np.isfinite(direction.unseen) | ~np.isfinite(direction.slope)
    bad[problem.class_group[~np.isfinite(direction.concentration)]] = True
    bad[problem.coordinate_group[~np.isfinite(direction.coordinates)]] = True
    return bad


def _without_groups(problem: Problem, direction: _Direction, groups: np.ndarray) -> _Direction:
    """``direction`` with the step of ``groups`` set to 0."""
    return _Direction(
        np.where(groups[problem.class_group], 0.0, direction.concentration),
        np.where(groups[problem.coordinate_group], 0.0, direction.coordinates),
        np.where(groups, 0.0, direction.unseen),
        np.where(groups, 0.0, direction.slope),
    )


def _moved(problem: Problem, point: Point, direction: _Direction, t: np.ndarray) -> Point:
    """point + t Δ (t per group), each group's m renormalised against rounding."""
    m, rho = kernels().moved_means(
        point.coordinates,
        direction.coordinates,
        t,
        problem.coordinate_group,
        point.unseen,
        direction.unseen,
        problem.unseen_extra,
    )
    return Point(point.concentration + t[problem.class_group] * direction.concentration, m, rho)


def _step_sizes(problem: Problem, point: Point, direction: _Direction):
    """Each group's longest step t ≤ 1 keeping every value ≥ KEEP times itself, and its
    largest relative change |Δx / x| at t = 1."""
    return kernels().step_bounds(
        np.concatenate(point),
        np.concatenate(direction[:3]),
        np.concatenate(
            [problem.class_group, problem.coordinate_group, np.arange(point.unseen.size)]
        ),
        point.unseen.size,
        KEEP,
    )


def _distinct_word_precision(problem: Problem) -> np.ndarray:
    """The s of each class whose expected number of distinct words per document, summed,
    s Σ_d [ψ(s + n_d) − ψ(s)] (the Chinese restaurant's tables: exact where every α_w is
    small), is the number the documents show; 1 for a class without."""
    s = np.ones(problem.free.size)
    shown = np.bincount(problem.cell_class, problem.cell_count, minlength=s.size)
    for _ in range(START_STEPS):
        _, first, second = rising_sums(problem.lengths, s, s.size, False)
        expected = s * first
        slope = expected - s * s * second  # d/d log s, > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(problem.free & (slope > 0), (shown - expected) / slope, 0.0)
        step = np.clip(np.nan_to_num(step), -START_STEP_LIMIT, START_STEP_LIMIT)
        s = s * np.exp(step)
        if np.max(np.abs(step), initial=0.0) < 1e-3:
            break
    return s


def _start(problem: Problem, initial_concentration, initial_mean) -> Point:
    """m from ``initial_mean`` or each word's documents plus c − 1 (the maximum's m where
    every α is small); s from ``initial_concentration`` or the distinct words."""
    n_groups = problem.unseen_extra.size
    s = (
        _distinct_word_precision(problem)
        if initial_concentration is None
        else initial_concentration
    )
    m = np.bincount(
        problem.cell_coordinate, problem.cell_count, minlength=problem.coordinate_extra.size
    )
    no_step = _Direction(np.zeros_like(s), np.zeros_like(m), np.zeros(n_groups), None)
    point = _moved(
        problem,
        Point(s, m + problem.coordinate_extra, np.ones(n_groups)),
        no_step,
        np.zeros(n_groups),
    )
    if initial_mean is None:
        return point
    rows = np.broadcast_to(initial_mean, (problem.free.size, initial_mean.shape[-1]))
    given = rows[np.searchsorted(problem.class_group, np.arange(n_groups))][
        problem.coordinate_group, problem.coordinate_feature
    ]
    # A word the documents show keeps some mass (α = 0 there is F = −∞).
    m = np.where(given > 0, given, point.coordinates)
    # ρ from the mass of the unseen words, where they have c > 1.
    unseen_mass = 1.0 - np.bincount(problem.coordinate_group, m, minlength=n_groups)
    with np.errstate(divide="ignore", invalid="ignore"):
        given_rho = unseen_mass / problem.unseen_extra
    rho = np.where((unseen_mass > 0) & (problem.unseen_extra > 0), given_rho, point.unseen)
    return _moved(problem, Point(s, m, rho), no_step, np.zeros(n_groups))


def newton_fit(
    histograms: CountHistograms,
    *,
    shared: bool,
    shape: float,
    rate: float,
    extra: np.ndarray,
    initial_concentration,
    initial_mean,
    tol: float,
    max_iter: int,
):
    """(s (K,), m (K, V), iterations, converged): see
    :func:`bayesgen.maths.dirichlet_multinomial.fit_concentration`."""
    problem = build_problem(histograms, shared, shape, rate, extra)
    point = _start(problem, initial_concentration, initial_mean)
    current = evaluate(problem, point)
    done = ~problem.moving
    stuck = np.zeros_like(done)
    coupled = np.ones_like(done)
    iterations = 0
    while iterations < max_iter and not np.all(done | stuck):
        iterations += 1
        direction, newton, longest, relative, curvature = _direction(
            problem, point, current, coupled
        )
        # A step that overflows (s → 0 or ∞ beyond floating point, where F does not determine
        # s) is no step: the group stops there, unconverged.
        overflowed = _overflowed(problem, direction)
        if overflowed.any():
            stuck |= overflowed
            direction = _without_groups(problem, direction, overflowed)
        finishing = newton & (longest == 1.0) & (relative < tol) & ~done & ~stuck
        # F flat in some s to rounding: that s is not determined (it goes to ∞, the
        # multinomial limit, or to 0), however small the step; the group stops, unconverged.
        flat = problem.free & (curvature <= ROUNDING * current.scale[problem.class_group])
        undetermined = np.bincount(problem.class_group, flat, minlength=done.size) > 0
        stuck |= finishing & undetermined
        finishing &= ~undetermined
        t = np.where(done | stuck, 0.0, longest)
        # Below F's rounding the test cannot decide: near the maximum (a short step), Newton's
        # step is taken. A long one with so little gain is F flat (s → ∞): it is tested.
        unseen_gain = (direction.slope <= ROUNDING * current.scale) & (relative < NEAR)
        accepted = done | stuck | finishing | (newton & unseen_gain)
        if np.all(done | stuck | finishing):
            point = _moved(problem, point, direction, t)
            done |= finishing
            break
        for _ in range(MAX_HALVINGS):
            moved = _moved(problem, point, direction, t)
            trial = evaluate(problem, moved)
            accepted |= trial.value >= current.value
            t = np.where(accepted, t, 0.5 * t)
            # A step whose gain would be below F's rounding is no step: it failed.
            if np.all(accepted | (t * direction.slope <= ROUNDING * current.scale)):
                break
        failed = ~accepted
        # A Newton step that failed is followed by an uncoupled one; an uncoupled one that
        # failed leaves nothing to try.
        stuck |= failed & ~newton
        coupled = ~(failed & newton)
        if failed.any():
            moved = _moved(problem, point, direction, np.where(failed, 0.0, t))
            trial = evaluate(problem, moved)
        point, current = moved, trial
        done |= finishing
    mean = _dense_mean(problem, point, histograms, extra, initial_mean)
    return point.concentration, mean, iterations, bool(np.all(done))


def _dense_mean(problem, point, histograms, extra, initial_mean):
    """m as a (K, V) array: the coordinates, ρ (c_w − 1) at the unseen words; a class with
    neither keeps its start, ``initial_mean`` or the pooled word frequencies (add-one)."""
    n_classes = problem.free.size
    if problem.shared:
        row = point.unseen[0] * extra
        row[problem.coordinate_feature] = point.coordinates
        return np.tile(row, (n_classes, 1))
    mean = point.unseen[:, None] * extra[None, :]
    mean[problem.cell_class, problem.coordinate_feature] = point.coordinates
    empty = (np.diff(problem.coordinate_start) == 0) & (problem.unseen_extra == 0)
    if empty.any():
        if initial_mean is None:
            initial_mean = (
                np.bincount(
                    histograms.word_feature,
                    weights=histograms.word_weight * histograms.word_level,
                    minlength=histograms.n_features,
                )
                + 1.0
            )
        rows = np.broadcast_to(initial_mean, mean.shape)
        mean[empty] = rows[empty] / rows[empty].sum(axis=1, keepdims=True)
    return mean
