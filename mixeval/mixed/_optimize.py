"""Stages 3 and 4 (lme4's ``optimizeLmer`` and ``checkConv``): minimise the profiled deviance over theta >= 0.

The deviance is smooth and even in each theta_k, and cheap to evaluate (it does
not touch the rows), so a quasi-Newton method with bounds and the exact gradient
converges to the optimum to near machine precision on the deviance
scale. Components that go to the bound 0 are singular fits (reported, not errors).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from ._stats import SufficientStats
from scipy.linalg import LinAlgError

from ._deviance import deviance_and_gradient, make_deviance_function

__all__ = ["OptimResult", "optimize_theta", "SINGULAR_TOL"]

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


def _snap_to_boundary(f, theta: np.ndarray) -> np.ndarray:
    """Set near-zero thetas to exactly 0 when that does not increase the deviance (beyond rounding)."""
    theta = theta.copy()
    base = f(theta)
    for i in np.argsort(theta):
        if theta[i] == 0.0 or theta[i] >= SINGULAR_TOL:
            continue
        trial = theta.copy()
        trial[i] = 0.0
        value = f(trial)
        if value <= base + 1e-9 * max(1.0, abs(base)):
            theta, base = trial, min(base, value)
    return theta


_PROBES = (1e-3, 1e-2, 0.03, 0.1, 0.3, 1.0)


def _escape_boundary(f, theta: np.ndarray) -> np.ndarray | None:
    """A point with lower deviance than ``theta`` obtained by moving one zero component off 0, if any."""
    base = f(theta)
    best, best_value = None, base - 1e-10 * max(1.0, abs(base))
    for i in np.flatnonzero(theta == 0.0):
        for step in _PROBES:
            trial = theta.copy()
            trial[i] = step
            value = f(trial)
            if value < best_value:
                best, best_value = trial, value
    return best


def _hessian(stats: SufficientStats, reml: bool, theta: np.ndarray, free: np.ndarray) -> np.ndarray:
    """Central differences of the exact gradient over the free coordinates."""
    idx = np.flatnonzero(free)
    h = np.empty((idx.size, idx.size))
    for a, i in enumerate(idx):
        step = 1e-5 * max(theta[i], 1e-3)
        tp, tm = theta.copy(), theta.copy()
        tp[i] += step
        tm[i] -= step
        gp = deviance_and_gradient(stats, tp, reml)[1]
        gm = deviance_and_gradient(stats, tm, reml)[1]
        h[a] = (gp[idx] - gm[idx]) / (2 * step)
    return 0.5 * (h + h.T)


def _newton_polish(stats: SufficientStats, reml: bool, theta: np.ndarray, steps: int = 4):
    """A few projected Newton steps on the interior coordinates; returns the predicted remaining decrease."""
    dev, grad = deviance_and_gradient(stats, theta, reml)
    decrease = np.inf
    for _ in range(steps):
        free = theta > 0
        if not free.any():
            return theta, dev, grad, 0.0
        hess = _hessian(stats, reml, theta, free)
        g = grad[free]
        step = np.linalg.pinv(hess, rcond=1e-10) @ g  # pinv: flat directions (confounded factors) get no step
        decrease = float(0.5 * g @ step)
        if not np.isfinite(decrease) or decrease < 1e-12:
            break
        trial = theta.copy()
        trial[free] = np.maximum(theta[free] - step, 0.0)
        new_dev, new_grad = deviance_and_gradient(stats, trial, reml)
        if not new_dev < dev:
            break
        theta, dev, grad = trial, new_dev, new_grad
    return theta, dev, grad, abs(decrease) if np.isfinite(decrease) else np.inf


def optimize_theta(stats: SufficientStats, reml: bool, theta0: np.ndarray | None = None) -> OptimResult:
    """Minimise the profiled deviance over ``theta >= 0``.

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
    L-BFGS-B with the exact gradient (:func:`deviance_and_gradient`), then a second run
    from the solution to polish; thetas that end within rounding of 0 are set to exactly 0.
    """
    k = stats.n_terms
    f = make_deviance_function(stats, reml)
    if k == 0:
        return OptimResult(np.zeros(0), f(np.zeros(0)), True, 1, "no random effects", np.zeros(0))
    x0 = np.ones(k) if theta0 is None else np.asarray(theta0, dtype=float)
    bounds = [(0.0, None)] * k
    n_evals = [0]

    def fg(x: np.ndarray) -> tuple[float, np.ndarray]:
        n_evals[0] += 1
        try:
            return deviance_and_gradient(stats, np.maximum(x, 0.0), reml)
        except LinAlgError:
            return float("inf"), np.zeros(k)

    options = {"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-10, "maxcor": 30}
    res = minimize(fg, x0, jac=True, method="L-BFGS-B", bounds=bounds, options=options)
    # polish from the solution (removes the occasional early stop on a flat ridge)
    res = minimize(fg, np.maximum(res.x, 0.0), jac=True, method="L-BFGS-B", bounds=bounds, options=options)
    theta = _snap_to_boundary(f, np.maximum(res.x, 0.0))
    for _ in range(2 * k):
        # theta_k = 0 is a stationary point of the (even) deviance whether or not it is a minimum:
        # probe away from every zero component and restart from any better point.
        start = _escape_boundary(f, theta)
        if start is None:
            break
        res = minimize(fg, start, jac=True, method="L-BFGS-B", bounds=bounds, options=options)
        theta = _snap_to_boundary(f, np.maximum(res.x, 0.0))
    theta, dev, grad, decrease = _newton_polish(stats, reml, theta)
    # lme4-style criterion: the Newton step predicts a negligible further decrease of the deviance
    converged = bool(np.isfinite(dev) and decrease < 1e-6)
    return OptimResult(theta=theta, deviance=float(dev), converged=converged, n_evaluations=n_evals[0],
                       message=str(res.message), gradient=grad)
