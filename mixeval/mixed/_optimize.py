"""Stages 3 and 4 (lme4's ``optimizeLmer`` and ``checkConv``): minimise the profiled deviance over theta >= 0.

The deviance is smooth and even in each theta_k, and cheap to evaluate (it does
not touch the rows), so a quasi-Newton method with bounds and the exact gradient
converges to the optimum to near machine precision on the deviance
scale. Components that go to the bound 0 are singular fits (reported, not errors).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError
from scipy.optimize import minimize

from ._deviance import deviance_and_gradient, profiled_deviance
from ._stats import SufficientStats

__all__ = ["OptimResult", "minimize_deviance", "finite_difference_gradient", "optimize_theta", "SINGULAR_TOL"]

#: theta below this is "on the boundary" (lme4's ``isSingular`` default tolerance).
SINGULAR_TOL = 1e-4


@dataclass(frozen=True)
class OptimResult:
    """Outcome of the optimisation over theta."""

    theta: np.ndarray
    deviance: float
    converged: bool
    n_evaluations: int
    message: str
    gradient: np.ndarray


def _snap_to_boundary(f, theta: np.ndarray, at_bound: np.ndarray) -> np.ndarray:
    """Set near-zero bounded thetas to exactly 0 when that does not increase the deviance (beyond rounding)."""
    theta = theta.copy()
    base = f(theta)
    for i in np.argsort(np.abs(theta)):
        if not at_bound[i] or theta[i] == 0.0 or theta[i] >= SINGULAR_TOL:
            continue
        trial = theta.copy()
        trial[i] = 0.0
        value = f(trial)
        if value <= base + 1e-9 * max(1.0, abs(base)):
            theta, base = trial, min(base, value)
    return theta


_PROBES = (1e-3, 1e-2, 0.03, 0.1, 0.3, 1.0)


def _escape_boundary(f, theta: np.ndarray, bounded: np.ndarray) -> np.ndarray | None:
    """A point with lower deviance than ``theta`` obtained by moving one zero bounded component off 0, if any."""
    base = f(theta)
    best, best_value = None, base - 1e-10 * max(1.0, abs(base))
    for i in np.flatnonzero(bounded & (theta == 0.0)):
        for step in _PROBES:
            trial = theta.copy()
            trial[i] = step
            value = f(trial)
            if value < best_value:
                best, best_value = trial, value
    return best


def _hessian(fg, theta: np.ndarray, free: np.ndarray) -> np.ndarray:
    """Central differences of the gradient over the free coordinates."""
    idx = np.flatnonzero(free)
    h = np.empty((idx.size, idx.size))
    for a, i in enumerate(idx):
        step = 1e-5 * max(abs(theta[i]), 1e-3)
        tp, tm = theta.copy(), theta.copy()
        tp[i] += step
        tm[i] -= step
        h[a] = (fg(tp)[1][idx] - fg(tm)[1][idx]) / (2 * step)
    return 0.5 * (h + h.T)


def _newton_polish(fg, theta: np.ndarray, lower: np.ndarray, steps: int = 4):
    """A few projected Newton steps on the interior coordinates; returns the predicted remaining decrease."""
    dev, grad = fg(theta)
    decrease = np.inf
    for _ in range(steps):
        free = theta > lower
        if not free.any():
            return theta, dev, grad, 0.0
        hess = _hessian(fg, theta, free)
        g = grad[free]
        step = np.linalg.pinv(hess, rcond=1e-10) @ g  # pinv: flat directions (confounded factors) get no step
        decrease = float(0.5 * g @ step)
        if not np.isfinite(decrease) or decrease < 1e-12:
            break
        trial = theta.copy()
        trial[free] = np.maximum(theta[free] - step, lower[free])
        new_dev, new_grad = fg(trial)
        if not new_dev < dev:
            break
        theta, dev, grad = trial, new_dev, new_grad
    return theta, dev, grad, abs(decrease) if np.isfinite(decrease) else np.inf


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


def minimize_deviance(fun_and_grad: Callable[[np.ndarray], tuple[float, np.ndarray]], theta0: np.ndarray,
                      lower: np.ndarray) -> OptimResult:
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

    Returns
    -------
    OptimResult

    Notes
    -----
    L-BFGS-B with bounds, then a second run from the solution to polish. The deviance is even in
    every bounded coordinate, so ``theta_k = 0`` is always stationary: bounded coordinates that end
    within rounding of 0 are set to exactly 0, and zero coordinates are probed away from 0 and the
    search restarted from any better point. A few Newton steps on the interior coordinates finish;
    convergence (lme4's ``checkConv`` in spirit) means the Newton step predicts a decrease of the
    deviance below ``1e-6``, a criterion on the deviance scale that does not depend on the response's units.
    """
    lower = np.asarray(lower, dtype=float)
    k = lower.size
    bounded = np.isfinite(lower)
    n_evals = [0]

    def fg(x: np.ndarray) -> tuple[float, np.ndarray]:
        n_evals[0] += 1
        try:
            value, grad = fun_and_grad(np.maximum(x, lower))
        except LinAlgError:
            return float("inf"), np.zeros(k)
        return float(value), np.asarray(grad, dtype=float)

    def f(x: np.ndarray) -> float:
        return fg(x)[0]

    if k == 0:
        value = fg(np.zeros(0))[0]
        return OptimResult(np.zeros(0), value, True, 1, "no random effects", np.zeros(0))
    x0 = np.asarray(theta0, dtype=float)
    bounds = [(lo if np.isfinite(lo) else None, None) for lo in lower]
    options = {"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-10, "maxcor": 30}
    res = minimize(fg, x0, jac=True, method="L-BFGS-B", bounds=bounds, options=options)
    # polish from the solution (removes the occasional early stop on a flat ridge)
    res = minimize(fg, np.maximum(res.x, lower), jac=True, method="L-BFGS-B", bounds=bounds, options=options)
    theta = _snap_to_boundary(f, np.maximum(res.x, lower), bounded)
    for _ in range(2 * k):
        start = _escape_boundary(f, theta, bounded)
        if start is None:
            break
        res = minimize(fg, start, jac=True, method="L-BFGS-B", bounds=bounds, options=options)
        theta = _snap_to_boundary(f, np.maximum(res.x, lower), bounded)
    theta, dev, grad, decrease = _newton_polish(fg, theta, lower)
    converged = bool(np.isfinite(dev) and decrease < 1e-6)
    return OptimResult(theta=theta, deviance=float(dev), converged=converged, n_evaluations=n_evals[0],
                       message=str(res.message), gradient=grad)


def optimize_theta(stats: SufficientStats, reml: bool, theta0: np.ndarray | None = None) -> OptimResult:
    """Minimise the profiled deviance of a random-intercept model over ``theta >= 0``.

    Parameters
    ----------
    stats : SufficientStats
    reml : bool
    theta0 : ndarray, optional
        Starting values (lme4 starts at 1 for every random intercept).

    Returns
    -------
    OptimResult

    Notes
    -----
    :func:`minimize_deviance` with the exact gradient of :func:`deviance_and_gradient`.
    """
    k = stats.n_terms
    if k == 0:
        return OptimResult(np.zeros(0), profiled_deviance(stats, np.zeros(0), reml), True, 1, "no random effects", np.zeros(0))
    x0 = np.ones(k) if theta0 is None else np.asarray(theta0, dtype=float)
    return minimize_deviance(lambda t: deviance_and_gradient(stats, np.abs(t), reml), x0, np.zeros(k))
