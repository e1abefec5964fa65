"""Stages 3 and 4 (lme4's ``optimizeLmer`` and ``checkConv``): minimise the profiled deviance over theta >= lower.

The deviance is smooth and even in each bounded theta_k, and an evaluation does
not touch the rows, but with thousands of levels in the second-largest factor one
evaluation costs a dense factorisation, so the number of evaluations is what
counts. :func:`minimize_deviance` is a projected Newton method: second-order
information from the Hessian (given, or by forward differences of the exact
gradient at the start and at the end) and BFGS updates in between, so a fit
takes a handful of iterations with one evaluation each. Components that go to
the bound 0 are singular fits (reported, not errors). It is the one optimiser
of every mixed model of the package (random intercepts, random slopes, GLMMs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
from scipy.linalg import LinAlgError

from ._deviance import average_information, deviance_parts, gradient_from_parts, profiled_deviance
from ._start import moment_start
from ._stats import SufficientStats

__all__ = ["OptimResult", "minimize_deviance", "canonical_factors", "even_coordinates", "finite_difference_gradient",
           "finite_difference_hessian", "optimize_theta", "information_hessian", "SINGULAR_TOL", "DECREASE_TOL",
           "THETA_RTOL"]

#: theta below this is "on the boundary" (lme4's ``isSingular`` default tolerance).
SINGULAR_TOL = 1e-4

#: the fit has converged when a Newton step predicts a decrease of the deviance below this (deviance units:
#: twice the log-likelihood, which does not depend on where the response is located or on its units)
DECREASE_TOL = 1e-6

#: iterations stop when the predicted decrease is below this, or (usually first) when the Newton step would
#: change no theta by more than :data:`THETA_RTOL`
_STOP_TOL = 1e-16

#: a Newton step smaller than this (relative to theta, absolute below 1e-6; in log(theta) for standard
#: deviations) is not taken: theta is then known to about eight digits, two orders of magnitude beyond
#: lme4's optimisers, and a further evaluation (a factorisation and its inverse) would buy only digits
#: that the deviance's rounding hides
THETA_RTOL = 1e-8

#: another round (with the Hessian formed afresh) only when the fresh Newton step predicts more than this
_ROUND_TOL = 1e-13

#: steps predicted to gain less than this are not used to judge the quadratic model (rounding dominates)
_JUDGE_TOL = 1e-6

#: a step predicted to gain less than this (deviance units) ends within about 0.0015 standard errors of the
#: optimum (a gain of ``z^2 / 2``), where the deviance is quadratic to its third-order terms: there the
#: Hessian is not formed afresh (it hardly changes over such a step) but corrected along the step by the
#: secant condition (a BFGS update), which supplies the curvature a given approximation (the average
#: information, least accurate for terms with few levels) misses and makes the last iterations superlinear.
#: Longer steps carry the curvature of a region the iterations have left and are not used that way.
_SECANT_TOL = 1e-6


@dataclass(frozen=True)
class OptimResult:
    """Outcome of the optimisation over theta."""

    theta: np.ndarray
    deviance: float
    converged: bool
    n_evaluations: int
    message: str
    gradient: np.ndarray
    #: the Hessian (or its approximation) the convergence check used at ``theta``, when one was formed
    hessian: np.ndarray | None = None
    #: the model's own evaluation at ``theta`` (``DevianceParts`` for :func:`optimize_theta`) when the
    #: optimiser's last evaluation was there, so that the caller need not repeat it
    parts: object | None = field(default=None, repr=False)


def finite_difference_gradient(f: Callable[[np.ndarray], float]) -> Callable[[np.ndarray], tuple[float, np.ndarray]]:
    """Wrap ``f(theta) -> deviance`` as ``fg(theta) -> (deviance, gradient)`` by central differences."""

    def fg(theta: np.ndarray) -> tuple[float, np.ndarray]:
        theta = np.asarray(theta, dtype=float)
        value = f(theta)
        grad = np.empty_like(theta)
        for i in range(theta.size):
            step = 1e-6 * max(abs(theta[i]), 1e-2)
            tp, tm = theta.copy(), theta.copy()
            tp[i] += step
            tm[i] -= step
            grad[i] = (f(tp) - f(tm)) / (2 * step)
        return value, grad

    return fg


def finite_difference_hessian(fg: Callable[[np.ndarray], tuple[float, np.ndarray]], theta: np.ndarray,
                              grad: np.ndarray) -> np.ndarray:
    """Forward differences of the gradient (one evaluation per coordinate, steps upwards), symmetrised.

    Upward steps keep a coordinate at its lower bound feasible; at ``theta_k = 0``, where the deviance is
    even, ``g_k(h) / h`` is the curvature itself.
    """
    return _complete_hessian(fg, theta, grad, np.full((theta.size, theta.size), np.nan))


def _complete_hessian(fg, theta: np.ndarray, grad: np.ndarray, hess: np.ndarray, step: float = 1e-4) -> np.ndarray:
    """Fill the rows (and columns) of ``hess`` that hold NaN by forward differences of the gradient (steps
    ``step * max(|theta_i|, 0.1)``), symmetrised."""
    h = np.array(hess, dtype=float)
    # rows with a NaN diagonal first: their columns then fill the other rows' NaN in those columns
    for missing in (np.flatnonzero(np.isnan(np.diag(h))), None):
        if missing is None:
            missing = np.flatnonzero(np.isnan(h).any(axis=1) | np.isnan(h).any(axis=0))
        for i in missing:
            h_i = step * max(abs(theta[i]), 0.1)
            trial = theta.copy()
            trial[i] += h_i
            h[i] = (fg(trial)[1] - grad) / h_i
        h[:, missing] = h[missing].T  # the differenced rows also give those columns
    return 0.5 * (h + h.T)


def _newton_direction(hess: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """``-|H|^+ g``: the eigenvalues' absolute values (negative curvature is descended, not ascended), and no
    step along flat directions (confounded factors, whose split of a variance is not identified)."""
    if grad.size == 0:
        return grad.copy()
    values, vectors = np.linalg.eigh(hess)
    size = np.abs(values)
    top = size.max() if size.size else 0.0
    inv = np.where(size > 1e-10 * top, 1.0 / np.where(size > 0, size, 1.0), 0.0) if top > 0 else np.zeros_like(size)
    return -(vectors @ (inv * (vectors.T @ grad)))


def _bfgs_update(hess: np.ndarray, s: np.ndarray, y: np.ndarray) -> np.ndarray:
    """BFGS update of a Hessian approximation (skipped unless the curvature condition holds clearly)."""
    sy = float(s @ y)
    hs = hess @ s
    shs = float(s @ hs)
    if not (sy > 1e-10 * np.linalg.norm(s) * np.linalg.norm(y) and shs > 0):
        return hess
    return hess - np.outer(hs, hs) / shs + np.outer(y, y) / sy


def _positive_definite(hess: np.ndarray, x: np.ndarray, grad: np.ndarray, lower: np.ndarray, bounded: np.ndarray) -> bool:
    """The Hessian is clearly positive definite on the coordinates not held at their bound (a minimum, not a saddle)."""
    free = ~(bounded & (x <= lower) & (grad >= 0))
    if not free.any():
        return True
    values = np.linalg.eigvalsh(hess[np.ix_(free, free)])
    return bool(values[0] > 1e-8 * max(values[-1], 0.0))


def _snap_to_boundary(f, theta: np.ndarray, base: float, bounded: np.ndarray) -> tuple[np.ndarray, float]:
    """Set near-zero bounded thetas to exactly 0 when that does not increase the deviance (beyond rounding)."""
    theta = theta.copy()
    for i in np.argsort(np.abs(theta)):
        if not bounded[i] or theta[i] == 0.0 or abs(theta[i]) >= SINGULAR_TOL:
            continue
        trial = theta.copy()
        trial[i] = 0.0
        value = f(trial)
        if value <= base + 1e-9 * max(1.0, abs(base)):
            theta, base = trial, min(base, value)
    return theta, base


_PROBES = (1e-3, 1e-2, 0.03, 0.1, 0.3, 1.0)

#: a fit with ``factors`` ending with bounded thetas in ``[SINGULAR_TOL, _ZERO_TRY)`` is re-optimised once from
#: the nearest singular point (:func:`_reduced_start`): where the deviance's curvature at 0 is small the iterations
#: approach a zero optimum slowly, and a factor with a small diagonal element reaches a singular optimum
#: only along a curved valley (its columns rotate into each other), which a component set to 0 alone misses
_ZERO_TRY = 1e-2


def _factor_layout(factors: tuple[int, ...] | None, lower: np.ndarray) -> list[tuple[int, int]]:
    """``(offset, p_k)`` of each lower-triangular factor with lme4's bounds (0 on the diagonal, ``-inf`` off it)
    among the leading coordinates; factors of size 1 (and any with other bounds) are left out."""
    out, offset = [], 0
    for p in factors or ():
        n = p * (p + 1) // 2
        diag = np.array([i == j for j in range(p) for i in range(j, p)])
        block = lower[offset:offset + n]
        if p > 1 and block.size == n and np.all(block[diag] == 0.0) and np.all(np.isneginf(block[~diag])):
            out.append((offset, p))
        offset += n
    return out


def _column_indices(offset: int, p: int) -> list[np.ndarray]:
    """The coordinates of each column of a factor stored at ``offset`` (lower triangle column-wise, diagonal first)."""
    starts = offset + np.concatenate([[0], np.cumsum(np.arange(p, 1, -1))])
    return [np.arange(start, start + p - j) for j, start in enumerate(starts)]


def canonical_factors(theta: np.ndarray, layout: list[tuple[int, int]]) -> np.ndarray:
    """An equivalent ``theta`` (the same ``Lambda_k Lambda_k'``) in which every column of a factor whose diagonal
    is 0 is 0 throughout.

    A singular ``Lambda_k`` has many lower-triangular factors; in one with ``L_jj = 0`` but ``L_mj != 0`` below
    it, the covariances reachable nearby are only those with a correlation near +-1 between coefficients
    ``j`` and ``m``, so such a point can be a minimum over ``theta`` and not over the covariance. Rotating
    column ``j`` with column ``m`` (``m = j + 1, ...``; a Givens rotation of the rows ``>= m``, which keeps the
    factor lower-triangular with ``L_mm >= 0``) moves the entries below the zero diagonal into the later columns;
    from there every nearby covariance is reachable, and the deviance is even in column ``j`` as a whole.

    Examples
    --------
    theta ``[L11, L21, L31, L22, L32, L33]`` of a 3 x 3 factor with ``L22 = 0`` and ``L32 = 0.3``:

    >>> canonical_factors(np.array([1.0, 0.5, 0.2, 0.0, 0.3, 0.4]), [(0, 3)]).round(4).tolist()
    [1.0, 0.5, 0.2, 0.0, 0.0, 0.5]
    """
    theta = np.array(theta, dtype=float)
    for offset, p in layout:
        columns = _column_indices(offset, p)
        lam = np.zeros((p, p))
        for j, idx in enumerate(columns):
            lam[j:, j] = theta[idx]
        for j in range(p - 1):
            if lam[j, j] != 0.0:
                continue
            for m in range(j + 1, p):
                a, b = lam[m, j], lam[m, m]
                if a == 0.0:
                    continue
                r = float(np.hypot(a, b))
                c, s = b / r, a / r
                col_j, col_m = lam[m:, j].copy(), lam[m:, m].copy()
                lam[m:, j] = c * col_j - s * col_m
                lam[m:, m] = s * col_j + c * col_m
                lam[m, j] = 0.0
        for j, idx in enumerate(columns):
            theta[idx] = lam[j:, j]
    return theta


def _reduced_start(theta: np.ndarray, small: np.ndarray, layout: list[tuple[int, int]]) -> np.ndarray:
    """``theta`` with its ``small`` components at 0; a factor of ``layout`` with a small diagonal element is
    replaced by the factor of rank one less nearest to it (``Lambda_k Lambda_k'`` without its smallest
    eigenvalue, brought to lower-triangular form by a QR decomposition and to :func:`canonical_factors`)."""
    out = np.where(small, 0.0, theta)
    for offset, p in layout:
        columns = _column_indices(offset, p)
        if not any(small[idx[0]] for idx in columns):
            continue
        lam = np.zeros((p, p))
        for j, idx in enumerate(columns):
            lam[j:, j] = theta[idx]
        values, vectors = np.linalg.eigh(lam @ lam.T)
        reduced = vectors[:, 1:] * np.sqrt(np.maximum(values[1:], 0.0))
        low = np.linalg.qr(np.column_stack([reduced, np.zeros(p)]).T, mode="r").T  # low low' = reduced reduced'
        low *= np.where(np.diag(low) < 0, -1.0, 1.0)
        for j, idx in enumerate(columns):
            out[idx] = low[j:, j]
    return canonical_factors(out, layout)


def _zero_columns(theta: np.ndarray, layout: list[tuple[int, int]]) -> list[np.ndarray]:
    """The coordinates of every column of a factor that is 0 throughout and has entries below the diagonal."""
    return [idx for offset, p in layout for idx in _column_indices(offset, p)[:-1] if not np.any(theta[idx])]


def _column_directions(fg, theta: np.ndarray, grad: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Curvatures and directions (eigenpairs of the Hessian block, diagonal component >= 0) of a zero column.

    The deviance is even in the column as a whole, so the block (forward differences of the gradient, one
    evaluation per entry) is the second-order term of every move of the column off 0.
    """
    step = 1e-4
    block = np.empty((idx.size, idx.size))
    for a, i in enumerate(idx):
        trial = theta.copy()
        trial[i] = step
        block[a] = (fg(trial)[1][idx] - grad[idx]) / step
    values, vectors = np.linalg.eigh(0.5 * (block + block.T))
    return values, vectors * np.where(vectors[0] < 0, -1.0, 1.0)


def _canonical_point(fg, x: np.ndarray, value: float, grad: np.ndarray, layout: list[tuple[int, int]]):
    """``x`` moved to :func:`canonical_factors` when that changes it and not the deviance (beyond rounding);
    returns the point, its deviance and gradient and whether it moved."""
    canon = canonical_factors(x, layout)
    if np.array_equal(canon, x):
        return x, value, grad, False
    c_value, c_grad = fg(canon)
    if not c_value <= value + 1e-9 * max(1.0, abs(value)):
        return x, value, grad, False
    return canon, c_value, c_grad, True


def _escape_boundary(f, theta: np.ndarray, base: float, bounded: np.ndarray, curvature: np.ndarray,
                     probes: tuple[float, ...] = _PROBES, columns: tuple = ()) -> np.ndarray | None:
    """A point with lower deviance than ``theta`` obtained by moving one zero bounded component off 0, if any.

    Where the curvature at 0 is negative a step off 0 decreases the deviance; where it is positive 0 is a
    local minimum along that coordinate and the probes look for a better one further away. ``columns``
    holds ``(indices, curvatures, directions)`` of zero factor columns (:func:`_column_directions`): their
    coordinates move together along each direction in place of one at a time.
    """
    best, best_value = None, base - 1e-10 * max(1.0, abs(base))
    moves = [(np.array([i]), np.ones((1, 1)), curvature[i:i + 1]) for i in np.flatnonzero(bounded & (theta == 0.0))
             if not any(i in idx for idx, _, _ in columns)]
    moves += [(idx, vectors, values) for idx, values, vectors in columns]
    for idx, vectors, values in moves:
        for direction, curv in zip(vectors.T, values):
            for step in probes:
                trial = theta.copy()
                trial[idx] = step * direction
                value = f(trial)
                if value < best_value:
                    best, best_value = trial, value
                    if curv < 0:
                        break
    return best


def _zero_candidates(x: np.ndarray, grad: np.ndarray, hess: np.ndarray, logs: np.ndarray) -> tuple[np.ndarray, float]:
    """Standard deviations (``logs``) whose even model ``D0 + A t^2 + B t^4`` along their coordinate, matched to the
    gradient ``g`` and curvature ``H`` there (``A = (3 g / t - H) / 4``, ``B = (H - g / t) / (8 t^2)``), has
    ``A > 0`` (a local minimum at 0), and the decrease those models predict at 0, ``sum A t^2 + B t^4``.

    A deviance even in ``t`` with its minimum at 0 is approached by Newton steps in ``log t`` only geometrically
    (by ``exp(-1/2)`` per step where it is quadratic in ``t``), so :func:`_newton_iterations` tries 0 itself once
    for such a coordinate after two steps that each cut it by a quarter or more (converging to ``t* > 0`` the cuts
    shrink; towards 0 they stay), and keeps it where the deviance falls by at least half the predicted decrease.
    A minimum at ``t* > 0`` of an even quartic never qualifies: for ``A' (t^2 - t*^2)^2`` the fitted ``A`` is
    ``-2 A' t*^2 < 0``.
    """
    if not logs.any():
        return logs, 0.0
    t = np.where(logs, x, 1.0)
    h = np.diag(hess)
    slope = grad / t
    with np.errstate(invalid="ignore"):
        a = (3.0 * slope - h) / 4.0
        b = (h - slope) / (8.0 * t * t)
        zero = logs & (a > 0.0) & np.isfinite(h)
    predicted = float(np.sum(np.where(zero, a * t**2 + b * t**4, 0.0)))
    return zero, predicted


def even_coordinates(lower: np.ndarray, factors: tuple[int, ...] | None = None) -> np.ndarray:
    """The coordinates in which a deviance is even: those bounded below at 0 (standard deviations), less the
    diagonal elements of a factor ``Lambda_k`` with entries below them in their column (stored right after them,
    bounded by ``-inf``), where it is not even in the diagonal element alone.

    With ``factors`` (as for :func:`minimize_deviance`) those elements are known; without, every standard deviation
    followed by an unbounded coordinate is left out, as it may be one (a point with such an element at 0 and
    entries below it is one the bounds' optimality conditions can hold at without a minimum there).

    Examples
    --------
    >>> lower = np.array([0.0, 0.0, -np.inf, 0.0, -np.inf])
    >>> even_coordinates(lower, factors=(1, 2)).tolist(), even_coordinates(lower).tolist()
    ([True, False, False, True, False], [True, False, False, False, False])
    """
    lower = np.asarray(lower, dtype=float)
    mask = lower == 0.0
    if factors is None:
        return mask & ~np.isneginf(np.append(lower[1:], 0.0))
    for offset, p in _factor_layout(factors, lower):
        for column in _column_indices(offset, p)[:-1]:
            mask[column[0]] = False
    return mask


def _newton_iterations(fg, hessian, x, value, grad, hess, lower, bounded, max_iter: int, cheap_hessian=None,
                       coarse: float = 0.0, refresh: float = np.inf, even: np.ndarray | None = None):
    """Projected Newton iterations with BFGS updates and a backtracking (Armijo) line search.

    Coordinates at their lower bound whose gradient points outwards (or is 0, as at theta_k = 0) are held.
    A step never lands on a bound: a coordinate heading below its bound moves 90% of the way there
    (the deviance is stationary at theta_k = 0, so a coordinate put there by a long first step would
    stay although its optimum is elsewhere; one whose optimum is 0 gets there geometrically and is
    snapped). After a step that needed backtracking or gained less than a quarter of the predicted
    decrease (or was predicted to gain more than ``refresh``) the Hessian is formed afresh; otherwise it is taken from
    ``cheap_hessian(x)`` when that returns one (a given Hessian that needs no evaluations there), except near the optimum (a step
    predicted to gain less than ``_SECANT_TOL``) where, as without ``cheap_hessian``, it is BFGS-updated.
    A standard deviation in which the deviance is even (``even``) and that the steps cut geometrically towards 0
    is tried at 0 once (:func:`_zero_candidates`).
    Stops when the predicted decrease is below ``_STOP_TOL``, the Newton step would move no theta by
    more than :data:`THETA_RTOL`, or no step decreases the deviance (or, with ``coarse``, predicts a decrease
    below it).
    """
    decrease = np.inf
    radius = 1.0
    steps = tiny_steps = 0
    tried = np.zeros(x.size, dtype=bool) if even is None else ~even
    shrinking = np.zeros(x.size, dtype=int)  # consecutive steps that cut a standard deviation by a quarter or more
    for _ in range(max_iter):
        # standard deviations away from 0 take Newton steps in log(theta): the deviance is roughly
        # logarithmic in them far from the optimum (where steps in theta overshoot), and a step in the
        # logarithm never reaches 0, where the deviance is stationary
        logs = bounded & (lower == 0.0) & (x > 0.0)
        zero, predicted = _zero_candidates(x, grad, hess, logs & ~tried & (shrinking >= 2))
        if zero.any() and predicted > 0.0:
            tried |= zero
            trial = np.where(zero, lower, x)
            t_value, t_grad = fg(trial)
            if value - t_value >= 0.5 * predicted:
                x, value, grad = trial, t_value, t_grad
                steps += 1
                continue
        held = bounded & (x <= lower) & (grad >= 0)
        free = ~held
        sc = np.where(logs, x, 1.0)
        g_t = grad * sc
        h_t = hess * sc[:, None] * sc[None, :] + np.diag(np.where(logs, grad * x, 0.0))
        step = np.zeros_like(x)
        step[free] = _newton_direction(h_t[np.ix_(free, free)], g_t[free])
        decrease = -0.5 * float(g_t @ step)
        if not decrease > max(_STOP_TOL, coarse) or np.all(np.abs(step) <= THETA_RTOL * np.where(logs, 1.0, np.maximum(np.abs(x), 1e-6))):
            decrease = max(decrease, 0.0)
            break
        # near the optimum differences of the deviance are at its rounding error: a Newton step that does
        # not increase it beyond rounding is taken (the gradient, not the difference, is then the guide)
        rounding = 1e-12 * max(1.0, abs(value)) if decrease < _JUDGE_TOL else 0.0
        # trust box: no log-coordinate moves by more than `radius`, no other by more than `radius` times its size
        reach = np.where(logs, radius, radius * np.maximum(np.abs(x), 0.05))
        size = np.max(np.abs(step) / reach)
        if size > 1.0:
            step /= size
        floor = np.full_like(x, -np.inf)  # unbounded coordinates (lower = -inf) have no floor
        floor[bounded] = lower[bounded] + 0.1 * (x[bounded] - lower[bounded])
        alpha = 1.0
        while alpha > 1e-10:
            trial = np.where(logs, x * np.exp(alpha * step), np.maximum(x + alpha * step, floor))
            t_value, t_grad = fg(trial)
            slope = float(grad @ (trial - x))
            if t_value <= value + 1e-4 * min(slope, 0.0) + rounding and np.isfinite(t_value):
                break
            # safeguarded quadratic interpolation of the deviance along the step
            curv = t_value - value - slope
            alpha *= 0.5 if not (np.isfinite(t_value) and curv > 0) else min(0.5, max(0.1, -0.5 * slope / curv))
        else:
            break
        if not (t_value < value or (rounding and t_value <= value + rounding)):  # the step changes nothing
            break
        tiny_steps = tiny_steps + 1 if rounding else 0
        if tiny_steps > 3:
            x, value, grad = trial, t_value, t_grad
            break
        taken = alpha * step
        predicted = -float(g_t @ taken) - 0.5 * float(taken @ h_t @ taken)
        ratio = (value - t_value) / predicted if predicted > 0 else 0.0
        poor = (alpha < 1.0 or ratio < 0.25) and decrease > _JUDGE_TOL
        radius = radius / 4.0 if poor else (min(2.0 * radius, 1e3) if ratio > 0.75 else radius)
        s_, y_ = trial - x, t_grad - grad
        shrinking = np.where(logs & (trial < 0.75 * x), shrinking + 1, 0)
        x, value, grad = trial, t_value, t_grad
        if poor or decrease > refresh:
            hess = hessian(x, grad)
        elif decrease < _SECANT_TOL or cheap_hessian is None:
            hess = _bfgs_update(hess, s_, y_)
        else:
            fresh = cheap_hessian(x)
            hess = _bfgs_update(hess, s_, y_) if fresh is None else fresh
        steps += 1
    return x, value, grad, hess, decrease, steps


def minimize_deviance(fun_and_grad: Callable[[np.ndarray], tuple[float, np.ndarray]], theta0: np.ndarray,
                      lower: np.ndarray, *, hess: Callable[[np.ndarray], np.ndarray] | None = None,
                      fun: Callable[[np.ndarray], float] | None = None, max_iter: int = 200,
                      probes: tuple[float, ...] | None = None, factors: tuple[int, ...] | None = None,
                      coarse: float = 0.0, refresh: float = np.inf, fd_step: float = 1e-4,
                      partial_hess: bool = False, even: np.ndarray | None = None) -> OptimResult:
    """Minimise a profiled deviance over ``theta >= lower`` (the one optimiser of every mixed model).

    Parameters
    ----------
    fun_and_grad : callable
        ``theta -> (deviance, gradient)``; may raise ``LinAlgError`` where the criterion is undefined
        (treated as ``+inf``). Use :func:`finite_difference_gradient` when no analytic gradient exists.
    theta0 : ndarray
        Starting values (lme4: 1 on the diagonal of each relative covariance factor, 0 off it).
    lower : ndarray
        Lower bounds: 0 for the diagonal elements of the relative covariance factors (standard deviations),
        ``-inf`` for off-diagonal elements (lme4's ``lower``).
    hess : callable, optional
        ``theta -> Hessian`` of the deviance (or an approximation); rows it leaves NaN, and by default all,
        are forward differences of ``fun_and_grad``'s gradient (:func:`finite_difference_hessian`, one
        evaluation per row), formed at the start, after poor steps and to confirm the optimum.
    fun : callable, optional
        ``theta -> deviance`` alone, when cheaper than with the gradient (used for the boundary checks).
    max_iter : int
        Newton iterations per round.
    probes : tuple of float, optional
        Values at which a component ending at 0 is tried (default ``(1e-3, 1e-2, 0.03, 0.1, 0.3, 1.0)``); a
        caller that moves components with negative curvature off 0 itself (the exact Hessian tells) may
        keep only the distant ones, which look for a better optimum away from 0.
    factors : tuple of int, optional
        The sizes ``p_k`` of the relative covariance factors whose lower triangles (column-wise, lme4's
        layout) are the leading coordinates of theta. A singular factor is then brought to
        :func:`canonical_factors` before the boundary checks, and a zero column is moved off 0 as a whole,
        along the eigenvectors of its Hessian block, not one coordinate at a time.
    coarse : float
        A tolerance in deviance units: stop once a Newton step predicts a decrease below it, with no fresh
        Hessian to confirm (a start stage's, or a final one well below :data:`DECREASE_TOL`; 0, the default:
        converge to rounding).
    refresh : float
        Form the Hessian afresh (``hess`` completed by differences) after a step predicted to gain more than
        this, in place of a BFGS update (default ``inf``: only after poor steps); for a ``hess`` that leaves a
        few rows to differences, where a fresh Hessian costs few evaluations.
    fd_step : float
        Relative step of those differences (``fd_step * max(|theta_i|, 0.1)``); smaller than the default
        ``1e-4`` only for a gradient that is exact to rounding at nearby points.
    partial_hess : bool
        ``hess`` always leaves some rows to differences: it is not tried between iterations (where only a
        complete one is used), only where the Hessian is formed afresh.
    even : ndarray of bool, optional
        The coordinates in which the deviance is even (default :func:`even_coordinates` of ``lower`` and
        ``factors``, which without ``factors`` leaves out any standard deviation followed by an unbounded
        coordinate): one that Newton steps in its logarithm cut by a quarter twice running, and whose even model
        puts a local minimum at 0 (:func:`_zero_candidates`), is tried at 0 once.

    Returns
    -------
    OptimResult
        ``n_evaluations`` counts the calls of ``fun_and_grad`` and ``fun``.

    Notes
    -----
    Projected Newton iterations: the step solves ``|H| d = -g`` on the coordinates not held at their
    bound (absolute eigenvalues, no step along flat directions), a backtracking line search along the
    step clipped to the bounds, BFGS updates of ``H`` between iterations (or ``hess`` afresh at every
    iterate when it is given and leaves no row to finite differences there). A round ends when the
    step changes theta by less than :data:`THETA_RTOL` (relative) or the
    predicted decrease ``-g'd / 2`` is below 1e-16; the Hessian is then formed afresh and another round
    starts while its step predicts more than 1e-13 (at most three rounds). Standard deviations away
    from 0 take their steps in ``log(theta)``. The deviance of a scalar term is even in its theta, so
    ``theta_k = 0`` is always stationary: bounded coordinates that end within ``SINGULAR_TOL`` of 0 are set to
    exactly 0 when that does not increase the deviance, zero coordinates are probed away from 0 and the
    search restarted from any better point.

    A factor ``Lambda_k`` with more than one row (``factors``) is singular when a diagonal element is 0; the
    deviance is even in that factor's column as a whole only when the entries below the diagonal are 0 too,
    and from a factor with ``L_jj = 0, L_mj != 0`` only covariances with a correlation near +-1 are reachable
    nearby, so such a point can satisfy the bounds' optimality conditions in theta without being a minimum
    over the covariance. The factor is therefore rotated to an equivalent one whose zero-diagonal columns
    are 0 throughout (:func:`canonical_factors`), where the gradient of such a column vanishes and its
    Hessian block decides: the column is probed along every eigenvector (along a negative curvature the
    first decrease is taken), so a saddle whose way down moves an off-diagonal and a diagonal element
    together is left. A fit with ``factors`` ending with a bounded coordinate below 0.01 is re-optimised
    once from the nearest singular point (those coordinates at 0, a factor with such a diagonal element
    replaced by the nearest factor of lower rank) and the better optimum is kept.

    Convergence (lme4's ``checkConv`` in spirit) means the Newton step with the fresh Hessian predicts a
    decrease below :data:`DECREASE_TOL`: a criterion in deviance
    units, which do not depend on the response's location or scale (shifting or rescaling ``y`` adds a
    constant to the deviance and leaves theta unchanged).
    """
    lower = np.asarray(lower, dtype=float)
    k = lower.size
    bounded = np.isfinite(lower)
    layout = _factor_layout(factors, lower)
    even = even_coordinates(lower, factors) if even is None else np.asarray(even, dtype=bool)
    n_evals = [0]

    def fg(x: np.ndarray) -> tuple[float, np.ndarray]:
        n_evals[0] += 1
        try:
            value, grad = fun_and_grad(np.maximum(x, lower))
        except LinAlgError:
            return float("inf"), np.zeros(k)
        value = float(value)
        return (value, np.asarray(grad, dtype=float)) if np.isfinite(value) else (float("inf"), np.zeros(k))

    def f(x: np.ndarray) -> float:
        if fun is None:
            return fg(x)[0]
        n_evals[0] += 1
        try:
            value = float(fun(np.maximum(x, lower)))
        except LinAlgError:
            return float("inf")
        return value if np.isfinite(value) else float("inf")

    def cheap_hessian(x: np.ndarray) -> np.ndarray | None:
        """The given Hessian at ``x`` when it is complete (no rows left to finite differences), else None."""
        if hess is None:
            return None
        h = np.asarray(hess(np.maximum(x, lower)), dtype=float)
        return None if np.isnan(h).any() else 0.5 * (h + h.T)

    def hessian(x: np.ndarray, grad: np.ndarray) -> np.ndarray:
        if hess is not None:
            return _complete_hessian(fg, x, grad, np.asarray(hess(np.maximum(x, lower)), dtype=float), fd_step)
        return _complete_hessian(fg, x, grad, np.full((k, k), np.nan), fd_step)

    if k == 0:
        value = fg(np.zeros(0))[0]
        return OptimResult(np.zeros(0), value, True, 1, "no random effects", np.zeros(0))
    x = np.maximum(np.asarray(theta0, dtype=float), lower)
    value, grad = fg(x)
    if not np.isfinite(value):
        return OptimResult(x, value, False, n_evals[0], "the deviance is not finite at the starting values", grad)
    h = hessian(x, grad)
    decrease = np.inf
    message = "predicted decrease below tolerance"
    kept = None  # the optimum before its small components were tried at 0
    for _ in range(2 * k + 1):  # restarts from better points found off the boundary
        for rounds in range(3):  # rounds, each ended by a fresh Hessian
            x, value, grad, h, decrease, steps = _newton_iterations(fg, hessian, x, value, grad, h, lower, bounded, max_iter,
                                                                    None if partial_hess else cheap_hessian, coarse,
                                                                    refresh, even)
            if coarse and decrease <= coarse:
                break
            if steps == 0 and rounds:  # the fresh Hessian's step no longer decreases the deviance: at rounding level
                break
            if decrease <= _ROUND_TOL and _positive_definite(h, x, grad, lower, bounded):
                # the round ended on a step predicted (by the updated Hessian) to gain below rounding: a fresh
                # Hessian would cost k evaluations to confirm what the gradient polish then checks anyway
                break
            h = hessian(x, grad)
            held = bounded & (x <= lower) & (grad >= 0)
            free = ~held
            decrease = max(-0.5 * float(grad[free] @ _newton_direction(h[np.ix_(free, free)], grad[free])), 0.0)
            if decrease <= _ROUND_TOL:
                break
        snapped, snapped_value = _snap_to_boundary(f, x, value, bounded)
        if not np.array_equal(snapped, x):  # (the Hessian of the unsnapped point serves the checks below)
            x = snapped
            value, grad = fg(x)
        columns: tuple = ()
        if layout:
            x, value, grad, moved = _canonical_point(fg, x, value, grad, layout)
            h = None if moved else h
            columns = tuple((idx, *_column_directions(fg, x, grad, idx)) for idx in _zero_columns(x, layout))
        curvature = np.diag(h) if h is not None else np.zeros(k)
        start = _escape_boundary(f, x, value, bounded, curvature, _PROBES if probes is None else tuple(probes), columns)
        small = bounded & (lower == 0.0) & (x > 0.0) & (x < _ZERO_TRY)
        if start is None and kept is None and layout and small.any():
            # a zero optimum approached slowly (the deviance nearly quartic in theta_k): the other components
            # re-optimised with those thetas at 0; the better of the two optima is kept
            kept = (x, value, grad, h, decrease)
            start = _reduced_start(x, small, layout)
        if start is None:
            break
        x = start
        value, grad = fg(x)
        h = hessian(x, grad)
    if kept is not None and kept[1] < value:
        x, value, grad, h, decrease = kept
    converged = bool(np.isfinite(value) and decrease < DECREASE_TOL)
    if not converged:
        message = f"predicted decrease {decrease:.3g} above {DECREASE_TOL:g}"
    return OptimResult(theta=x, deviance=float(value), converged=converged, n_evaluations=n_evals[0],
                       message=message, gradient=grad, hessian=h)


def optimize_theta(stats: SufficientStats, reml: bool, theta0: np.ndarray | None = None) -> OptimResult:
    """Minimise the profiled deviance of a random-intercept model over ``theta >= 0``.

    Parameters
    ----------
    stats : SufficientStats
    reml : bool
    theta0 : ndarray, optional
        Starting values; by default the moment estimates of :func:`~._start.moment_start` (lme4 starts
        at 1 for every random intercept, which is used when those fail).

    Returns
    -------
    OptimResult

    Notes
    -----
    :func:`minimize_deviance` with the exact gradient of :func:`~._deviance.deviance_and_gradient`, started from
    Henderson's Method 1 estimates (exact for balanced designs, close otherwise), which saves the
    evaluations lme4's start at 1 spends finding the region of the optimum, and with Hessians from the
    average information (:func:`information_hessian`: ``k + p`` solves with the factor an evaluation
    has formed, in place of ``k`` gradient evaluations of finite differences; within a few percent of the
    exact Hessian near the optimum of designs with many levels). Convergence is still judged by the
    exact gradient and the optimum is the same; only the path to it is shorter.

    Examples
    --------
    Three groups of two: the ML optimum is ``theta = sigma_g / sigma = sqrt(2.889 / 1)``.

    >>> import pandas as pd
    >>> from mixeval.mixed import build_design, compute_stats
    >>> df = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")})
    >>> opt = optimize_theta(compute_stats(build_design("y ~ 1 + (1|g)", df)), reml=False)
    >>> opt.converged, round(float(opt.theta[0]), 4), round(float(opt.deviance), 4)
    (True, 1.6997, 22.7682)
    """
    k = stats.n_terms
    if k == 0:
        return OptimResult(np.zeros(0), profiled_deviance(stats, np.zeros(0), reml), True, 1, "no random effects", np.zeros(0))
    if theta0 is None:
        theta0 = moment_start(stats)
    x0 = np.ones(k) if theta0 is None else np.asarray(theta0, dtype=float)
    last: list = [None]  # the latest evaluation: the Hessian is asked for where the gradient was just formed

    def fun_and_grad(t: np.ndarray) -> tuple[float, np.ndarray]:
        last[0] = deviance_parts(stats, np.abs(t), reml)
        return gradient_from_parts(stats, last[0])

    res = minimize_deviance(fun_and_grad, x0, np.zeros(k), fun=lambda t: profiled_deviance(stats, np.abs(t), reml),
                            hess=lambda t: information_hessian(stats, np.abs(t), reml, last[0]))
    if last[0] is not None and np.array_equal(last[0].theta, np.abs(res.theta)):
        res = replace(res, parts=last[0])
    return res


#: at or below this theta (on the boundary, :data:`SINGULAR_TOL`) the average information misses the curvature:
#: the deviance is even in theta_j with a curvature of its own at 0, the information vanishes like theta_j^2;
#: those rows are finite differences
AI_MIN_THETA = SINGULAR_TOL


def information_hessian(stats: SufficientStats, theta: np.ndarray, reml: bool, parts=None) -> np.ndarray:
    """The average-information Hessian (:func:`~._deviance.average_information`) with NaN rows for the thetas
    below :data:`AI_MIN_THETA` (left to finite differences by :func:`minimize_deviance`).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import build_design, compute_stats
    >>> df = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")})
    >>> s = compute_stats(build_design("y ~ 1 + (1|g)", df))
    >>> bool(information_hessian(s, np.array([1.5]), reml=False)[0, 0] > 0), information_hessian(s, np.array([0.0]), False)
    (True, array([[nan]]))
    """
    h = average_information(stats, theta, reml, parts)
    small = np.abs(theta) <= AI_MIN_THETA
    h[small, :] = np.nan
    h[:, small] = np.nan
    return h
