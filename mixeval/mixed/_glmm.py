"""``glmer``: generalised linear mixed models (binomial, Poisson) fitted as lme4 fits them.

Stages, each callable alone: :func:`glmm_problem` (design -> response, weights, random-effects
structure), :func:`check_separation` (complete / quasi-complete separation of a binary response by
the fixed effects), :func:`optimize_glmm` (lme4's two stages: theta with beta from PIRLS, then theta
and beta jointly by the Laplace or adaptive Gauss-Hermite deviance; analytic gradients for scalar
terms); :func:`~._glmm_result.fit_glmm` assembles the frozen result and :func:`~._glmer.glmer` chains
the stages.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgError
from scipy.optimize import linprog

from ..errors import InputError
from ._design import Design
from ._family import Family
from ._optimize import (
    OptimResult,
    finite_difference_gradient,
    minimize_deviance,
)
from ._pirls import (
    GlmmProblem,
    PirlsState,
    agq_deviance,
    joint_system,
    laplace_beta_gradient,
    laplace_deviance,
    laplace_gradient,
    pirls,
    row_patterns,
    supports_beta_gradient,
    supports_gradient,
    weighted_crossproduct,
)
from ._reterms import ReStructure, build_restructure

_LOG_2PI = float(np.log(2.0 * np.pi))

#: above this many fixed effects the second stage's Hessian in ``beta`` is ``2 R_X' R_X``
#: (:meth:`GlmmFit.stage2_beta_hessian`), not finite differences of the gradient
EXACT_HESSIAN_MAX_P = 20

__all__ = ["GlmmFit", "reml_criterion", "check_separation", "glmm_problem", "optimize_glmm", "response_values",
           "laplace_beta_at", "reml_fit"]


def response_values(y: np.ndarray, family: Family, weights: np.ndarray, name: str) -> None:
    """Validate the response of a binomial (0/1 or proportion in [0, 1]) or Poisson (counts >= 0) model."""
    if family.name == "binomial":
        bad = (y < 0) | (y > 1)
        if bad.any():
            raise InputError(
                f"the response {name!r} of a binomial model must be 0/1, logical or a proportion in [0, 1]; "
                f"{int(bad.sum())} value(s) lie outside (e.g. {y[bad][:3].tolist()}). For successes out of "
                "trials pass the proportion successes / trials with weights=trials (R's cbind(successes, failures))."
            )
        m = weights * y
        if np.any(np.abs(m - np.round(m)) > 1e-3):
            raise InputError(
                f"the response {name!r} times weights is not a whole number of successes; a binomial proportion "
                "needs weights = the number of trials of each row."
            )
    else:
        if np.any(y < 0):
            raise InputError(f"the response {name!r} of a Poisson model must be counts >= 0; it has negative values.")
        fractional = np.abs(y - np.round(y)) > 1e-8
        if fractional.any():
            raise InputError(
                f"the response {name!r} of a Poisson model must be whole counts; {int(fractional.sum())} value(s) are "
                f"not (e.g. {y[fractional][:3].tolist()}). Counts of events are whole numbers: check for averaged or "
                "rescaled values (a rate per exposure is a count with an offset), or fit a Gaussian model.")


def glmm_problem(design: Design, family: Family, weights: np.ndarray, re: ReStructure | None = None) -> GlmmProblem:
    """Response, prior weights, fixed-effects matrix and random-effects structure of a GLMM."""
    y = np.asarray(design.y, dtype=float)
    response_values(y, family, weights, design.parsed.response)
    re = build_restructure(design) if re is None else re
    X = design.X.tocsr().astype(float) if sp.issparse(design.X) else np.asarray(design.X, dtype=float)
    offset = np.zeros(len(y)) if design.offset is None else np.asarray(design.offset, dtype=float)
    return GlmmProblem(y=y, X=X, weights=weights, offset=offset, re=re, family=family)


#: Above this many distinct rows of ``[X, outcome]`` the separation LP is skipped (continuous covariates on
#: millions of rows); estimates beyond :data:`DIVERGED_LOGIT` on the link scale are flagged instead.
MAX_SEPARATION_ROWS = 20_000
DIVERGED_LOGIT = 15.0


def check_separation(problem: GlmmProblem, names: tuple[str, ...]) -> list[str]:
    """Fixed-effect columns involved in complete or quasi-complete separation of a binomial response.

    Notes
    -----
    Konis' linear program: the response is separated when some direction ``b != 0`` has
    ``X_i b >= 0`` wherever every trial succeeded, ``X_i b <= 0`` wherever every trial failed and
    ``X_i b = 0`` on rows with both outcomes. Maximising ``sum s_i X_i b`` (``s_i = +-1``) over
    ``-1 <= b <= 1`` under these constraints gives a positive value exactly then; the columns with
    ``b_j != 0`` are those whose maximum-likelihood estimates diverge. Computed on the distinct rows
    of ``[X, outcome class]``.
    """
    if problem.family.name != "binomial" or problem.p == 0 or sp.issparse(problem.X):
        return []  # a sparse X is large: make_glmer_result's check of diverging estimates applies
    keep = problem.weights > 0
    y = problem.y[keep]
    s = np.where(y >= 1, 1.0, np.where(y <= 0, -1.0, 0.0))
    found = row_patterns(np.column_stack([problem.X[keep], s]), MAX_SEPARATION_ROWS)
    if found is None:
        return []  # too many distinct rows for the LP: make_glmer_result's check of diverging estimates applies
    rows = found[1]
    X, s = rows[:, :-1], rows[:, -1]
    signed = X[s != 0] * s[s != 0][:, None]
    eq = X[s == 0]
    c = -signed.sum(axis=0)
    res = linprog(c, A_ub=-signed if len(signed) else None, b_ub=np.zeros(len(signed)) if len(signed) else None,
                  A_eq=eq if len(eq) else None, b_eq=np.zeros(len(eq)) if len(eq) else None,
                  bounds=[(-1, 1)] * X.shape[1], method="highs")
    if res.status != 0 or -res.fun <= 1e-7 * max(1.0, len(signed)):
        return []
    return [n for n, b in zip(names, res.x) if abs(b) > 1e-7]


def _start_beta(problem: GlmmProblem) -> np.ndarray:
    """R's ``mustart`` linearised: weighted least squares of ``g(mustart)`` on ``X``."""
    y, wt, fam = problem.y, problem.weights, problem.family
    if problem.p == 0:
        return np.zeros(0)
    mustart = (wt * y + 0.5) / (wt + 1) if fam.name == "binomial" else y + 0.1
    eta = fam.linkfun(mustart)
    if sp.issparse(problem.X):  # the normal equations (p x p) of the weighted least squares
        w = np.maximum(wt, 1e-12)
        return np.linalg.lstsq(weighted_crossproduct(problem.X, w), problem.X.T @ (w * eta), rcond=None)[0]
    sw = np.sqrt(np.maximum(wt, 1e-12))
    beta, *_ = np.linalg.lstsq(problem.X * sw[:, None], eta * sw, rcond=None)
    return beta


def reml_criterion(problem: GlmmProblem, state: PirlsState) -> float:
    """The restricted Laplace criterion at a joint PIRLS mode (see :meth:`GlmmFit.stage1_reml`)."""
    return laplace_deviance(problem, state) + state.system.logdet_beta - problem.p * _LOG_2PI


class GlmmFit:
    """The deviance functions of a GLMM with warm-started PIRLS (state carried between evaluations)."""

    def __init__(self, problem: GlmmProblem, n_agq: int):
        self.problem = problem
        self.n_agq = int(n_agq)
        self.n_theta = problem.re.n_theta
        self.beta = _start_beta(problem)
        self.u = np.zeros(problem.re.q)

    def stage1(self, theta: np.ndarray) -> float:
        """Laplace deviance at ``theta`` with ``beta`` from PIRLS (lme4's ``nAGQ = 0`` criterion)."""
        st = pirls(self.problem, theta, self.beta, self.u, joint=True)
        if np.all(np.isfinite(st.u)):
            self.u, self.beta = st.u, st.beta
        return laplace_deviance(self.problem, st)

    def stage1_reml(self, theta: np.ndarray) -> float:
        """The restricted Laplace criterion at ``theta``: ``u`` and ``beta`` integrated out together.

        ``-2 log p(y | u*, beta*) + ||u*||^2 + log|L|^2 + log|R_X|^2 - p log(2 pi)`` at the joint mode
        ``(u*, beta*)`` of PIRLS: minus twice the Laplace approximation of the likelihood integrated over
        ``beta`` with a flat prior (glmmTMB's ``REML = TRUE``), which for a Gaussian response is lmer's REML
        criterion.
        """
        st = pirls(self.problem, theta, self.beta, self.u, joint=True)
        if np.all(np.isfinite(st.u)):
            self.u, self.beta = st.u, st.beta
        return reml_criterion(self.problem, st)

    def state(self, x: np.ndarray) -> PirlsState:
        theta, beta = x[: self.n_theta], x[self.n_theta:]
        st = pirls(self.problem, theta, beta, self.u, joint=False)
        self._last_state = (np.asarray(x, dtype=float).tobytes(), st)
        return st

    def stage2_beta_hessian(self, x: np.ndarray) -> np.ndarray:
        """The Hessian of the Laplace deviance in ``beta`` approximated by ``2 R_X' R_X`` (the Schur complement of
        the fixed effects in the penalised system at ``x``: exact but for the derivatives of ``log|L|^2`` through
        the weights); the ``theta`` rows and columns NaN (left to finite differences by the optimiser).

        Used for many fixed effects (more than :data:`EXACT_HESSIAN_MAX_P`), where finite differences of the
        gradient would cost one PIRLS run per fixed effect at every fresh Hessian."""
        x = np.asarray(x, dtype=float)
        k = self.n_theta
        last = self.__dict__.get("_last_state")
        st = last[1] if last is not None and last[0] == x.tobytes() else self.state(x)
        h = np.full((x.size, x.size), np.nan)
        h[k:, k:] = 2 * joint_system(self.problem, x[:k], st).beta_precision_unscaled()
        return h

    def stage2(self, x: np.ndarray) -> float:
        """Laplace (``nAGQ = 1``) or adaptive Gauss-Hermite deviance at ``(theta, beta)``."""
        st = self.state(x)
        if np.all(np.isfinite(st.u)):
            self.u = st.u
        if self.n_agq > 1:
            return agq_deviance(self.problem, st, x[: self.n_theta], self.n_agq)
        return laplace_deviance(self.problem, st)


    def stage1_and_gradient(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """:meth:`stage1` and its analytic gradient in ``theta`` (:func:`laplace_gradient` with ``joint=True``)."""
        st = pirls(self.problem, theta, self.beta, self.u, joint=True)
        if np.all(np.isfinite(st.u)):
            self.u, self.beta = st.u, st.beta
        return laplace_deviance(self.problem, st), laplace_gradient(self.problem, theta, st, joint=True)

    def stage2_and_gradient_beta(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """Laplace deviance at ``x = (theta, beta)`` and its analytic gradient in ``beta`` alone."""
        st = self.state(x)
        if np.all(np.isfinite(st.u)):
            self.u = st.u
        return laplace_deviance(self.problem, st), laplace_beta_gradient(self.problem, x[: self.n_theta], st)

    def stage2_and_gradient(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """Laplace deviance and its analytic gradient in ``(theta, beta)`` (:func:`laplace_gradient`); the last
        gradients are kept (by point) for :meth:`stage2_hessian`."""
        st = self.state(x)
        if np.all(np.isfinite(st.u)):
            self.u = st.u
        value, grad = laplace_deviance(self.problem, st), laplace_gradient(self.problem, x[: self.n_theta], st)
        cache = self.__dict__.setdefault("_gradients", {})
        if len(cache) >= 4 * (x.size + 1):
            cache.pop(next(iter(cache)))
        cache[np.asarray(x, dtype=float).tobytes()] = grad
        return value, grad

    @staticmethod
    def hessian_steps(x: np.ndarray) -> np.ndarray:
        """Difference steps of the Hessians, ``1e-4 max(|x_i|, 0.1)`` (those of ``finite_difference_hessian``)."""
        return 1e-4 * np.maximum(np.abs(x), 0.1)

    def _gradient_rows(self, x: np.ndarray, steps: np.ndarray, sign: float) -> np.ndarray:
        """Gradients at ``x + sign * steps_i e_i`` (rows), PIRLS warm-started from the modes at ``x``; those the
        optimiser's forward differences already evaluated are taken from the cache."""
        cache = self.__dict__.get("_gradients", {})
        u0 = self.u.copy()
        rows = np.empty((x.size, x.size))
        for i in range(x.size):
            trial = x.copy()
            trial[i] += sign * steps[i]
            kept = cache.get(trial.tobytes())
            if kept is not None:
                rows[i] = kept
                continue
            self.u = u0
            try:
                rows[i] = self.stage2_and_gradient(trial)[1]
            except LinAlgError:
                rows[i] = 0.0  # as minimize_deviance treats an undefined criterion
        self.u = u0
        return rows

    def stage2_hessian(self, x: np.ndarray) -> np.ndarray:
        """Hessian of the Laplace deviance in ``(theta, beta)``: central differences of the analytic gradient,
        symmetrised (``2 (k + p)`` PIRLS runs; ``k + p`` when the optimiser's last forward differences were taken
        at ``x``, as they are at a converged optimum whose Hessian it formed)."""
        x = np.array(x, dtype=float)
        steps = self.hessian_steps(x)
        self.u = self.state(x).u
        plus = self._gradient_rows(x, steps, 1.0)
        minus = self._gradient_rows(x, steps, -1.0)
        h = (plus - minus) / (2 * steps[:, None])
        return 0.5 * (h + h.T)


def optimize_glmm(fit: GlmmFit, reml: bool = False) -> tuple[np.ndarray, np.ndarray, OptimResult]:
    """lme4's two optimisation stages; returns ``theta``, ``beta`` and the last optimiser result.

    With ``reml`` the restricted criterion (:meth:`GlmmFit.stage1_reml`) is minimised over ``theta`` alone
    and ``beta`` is the joint mode at the optimum. Otherwise, with scalar random-effects terms
    (:func:`supports_gradient`) both stages use the analytic gradient of :func:`laplace_gradient`; else
    central differences (in ``beta`` analytic where available).
    """
    re = fit.problem.re
    # vector-valued terms: the optimiser's boundary checks over whole covariance factors (stage 1 and REML are
    # over theta alone, whose layout the factors describe; stage 2 starts from stage 1's optimum)
    factors = tuple(t.n_coef for t in re.terms) if any(t.n_coef > 1 for t in re.terms) else None
    if reml:
        opt = minimize_deviance(finite_difference_gradient(fit.stage1_reml), re.theta0, re.lower, factors=factors)
        fit.stage1_reml(opt.theta)  # leaves beta and u at the optimum
        return opt.theta, fit.beta.copy(), opt
    analytic = supports_gradient(fit.problem)
    stage1 = fit.stage1_and_gradient if analytic else finite_difference_gradient(fit.stage1)
    opt1 = minimize_deviance(stage1, re.theta0, re.lower, fun=fit.stage1, factors=factors)
    fit.stage1(opt1.theta)  # leaves beta and u at the stage-1 optimum
    if fit.n_agq == 0:
        return opt1.theta, fit.beta.copy(), opt1
    x0 = np.concatenate([opt1.theta, fit.beta])
    lower = np.concatenate([re.lower, np.full(fit.problem.p, -np.inf)])
    if fit.n_agq == 1 and analytic:
        fun_and_grad = fit.stage2_and_gradient
    else:
        fun_and_grad = finite_difference_gradient(fit.stage2)
    hess = fit.stage2_beta_hessian if fit.n_agq == 1 and fit.problem.p > EXACT_HESSIAN_MAX_P else None
    opt2 = minimize_deviance(fun_and_grad, x0, lower, fun=fit.stage2, hess=hess)
    return opt2.theta[: fit.n_theta], opt2.theta[fit.n_theta:], opt2


def _hessian(f, x: np.ndarray, delta: float | np.ndarray = 1e-4, forward: np.ndarray | None = None) -> np.ndarray:
    """Finite-difference Hessian of ``f`` at ``x``: central differences (lme4's ``deriv12`` stencil) with step
    ``delta`` (a scalar or one per coordinate), forward ones in the coordinates flagged in ``forward`` (a
    parameter that cannot go below ``x``, e.g. a variance at 0). Each point is evaluated once."""
    k = x.size
    steps = np.broadcast_to(np.asarray(delta, dtype=float), (k,))
    fwd = np.zeros(k, dtype=bool) if forward is None else np.asarray(forward, dtype=bool)
    cache: dict[tuple, float] = {}

    def at(*offsets: tuple[int, int]) -> float:
        key = tuple(sorted(offsets))
        if key not in cache:
            z = np.array(x, dtype=float)
            for i, m in offsets:
                z[i] += m * steps[i]
            cache[key] = float(f(z))
        return cache[key]

    h = np.empty((k, k))
    f0 = at()
    for i in range(k):
        if fwd[i]:
            h[i, i] = (at((i, 2)) - 2 * at((i, 1)) + f0) / steps[i] ** 2
        else:
            h[i, i] = (at((i, 1)) - 2 * f0 + at((i, -1))) / steps[i] ** 2
        for j in range(i):
            if fwd[i] and fwd[j]:
                val = (at((i, 1), (j, 1)) - at((i, 1)) - at((j, 1)) + f0) / (steps[i] * steps[j])
            elif fwd[i] or fwd[j]:
                a, b = (j, i) if fwd[i] else (i, j)  # a central, b forward
                val = (at((a, 1), (b, 1)) - at((a, -1), (b, 1)) - at((a, 1)) + at((a, -1))) / (2 * steps[a] * steps[b])
            else:
                val = (at((i, 1), (j, 1)) - at((i, 1), (j, -1)) - at((i, -1), (j, 1)) + at((i, -1), (j, -1))) / (
                    4 * steps[i] * steps[j])
            h[i, j] = h[j, i] = val
    return h


def laplace_beta_at(fit: GlmmFit, theta: np.ndarray, beta0: np.ndarray) -> np.ndarray:
    """``beta`` minimising the Laplace deviance at fixed ``theta`` (the marginal-likelihood mode).

    For a linear mixed model this is the GLS estimate at ``theta``, which is also the joint mode of
    ``(u, beta)``; for binary data the joint mode (PIRLS over both, the penalised quasi-likelihood
    estimate) is biased towards 0 (by about half a standard error at 90% accuracy with 5 seeds), the
    Laplace mode is not.
    """
    problem = fit.problem
    if not problem.p:
        return np.zeros(0)

    def fg(b: np.ndarray) -> tuple[float, np.ndarray]:
        x = np.concatenate([theta, b])
        if supports_beta_gradient(problem):
            value, grad = fit.stage2_and_gradient_beta(x)
            return value, grad
        return finite_difference_gradient(lambda bb: fit.stage2(np.concatenate([theta, bb])))(b)

    opt = minimize_deviance(fg, np.asarray(beta0, dtype=float), np.full(problem.p, -np.inf))
    return opt.theta


def reml_fit(fit: GlmmFit):
    """Restricted-Laplace fit: ``theta`` minimising :meth:`GlmmFit.stage1_reml`; ``beta`` the Laplace
    deviance's mode at that ``theta`` (:func:`laplace_beta_at`), its covariance lme4's RX-based matrix there;
    the covariance of ``theta`` ``2 H^-1`` of the restricted criterion (block-diagonal ``cov_params``: the two
    are asymptotically uncorrelated, as in REML for linear models)."""
    problem = fit.problem
    theta, beta_joint, opt = optimize_glmm(fit, reml=True)
    joint = pirls(problem, theta, beta_joint, fit.u, joint=True)
    dev = reml_criterion(problem, joint)
    beta = laplace_beta_at(fit, theta, joint.beta)
    state = pirls(problem, theta, beta, joint.u, joint=False)
    unsc = joint_system(problem, theta, state).beta_covariance_unscaled() if problem.p else np.zeros((0, 0))
    k = theta.size
    cov_params = None
    try:
        h = _hessian(fit.stage1_reml, theta)
        cov_t = 2 * np.linalg.inv(h)
        if np.all(np.isfinite(cov_t)):
            cov_params = np.zeros((k + problem.p, k + problem.p))
            cov_params[:k, :k] = 0.5 * (cov_t + cov_t.T)
            cov_params[k:, k:] = unsc
    except np.linalg.LinAlgError:
        pass
    return theta, beta, opt, state, dev, unsc, cov_params
