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

from ._design import Design
from ._family import Family
from ._optimize import (
    OptimResult,
    even_coordinates,
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

#: stage 1 of a fit with the family's parameters stops once a Newton step predicts a decrease below this (deviance
#: units: a hundredth of a standard error's worth, z^2 / 2 with z = 0.14), stage 2 then converging all of them
STAGE1_COARSE = 0.01

#: above this many fixed effects the second stage's Hessian in ``beta`` is ``2 R_X' R_X``
#: (:meth:`GlmmFit.stage2_beta_hessian`), not finite differences of the gradient
EXACT_HESSIAN_MAX_P = 20

__all__ = ["GlmmFit", "reml_criterion", "check_separation", "glmm_problem", "optimize_glmm", "response_values",
           "laplace_beta_at", "reml_fit"]


def response_values(y: np.ndarray, family: Family, weights: np.ndarray, name: str) -> None:
    """Validate the response ``y`` (column ``name``) with ``weights`` for ``family`` (:meth:`Family.check_response`)."""
    family.check_response(y, weights, name)


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
    eta = fam.linkfun(fam.initialize(y, wt))
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
    """The deviance functions of a GLMM with warm-started PIRLS (state carried between evaluations).

    With ``free_parameters`` the family's parameters (:attr:`~.families.Family.parameter_names`: a dispersion's
    logarithm, cutpoints) are coordinates of every criterion, after the others: stage 1 and the restricted
    criterion take ``(theta, psi)``, stage 2 ``(theta, beta, psi)``. Otherwise they are held at the problem's
    :attr:`~._pirls.GlmmProblem.family_par`.
    """

    def __init__(self, problem: GlmmProblem, n_agq: int, *, free_parameters: bool = False):
        self.problem = problem
        self.n_agq = int(n_agq)
        self.n_theta = problem.re.n_theta
        self.n_psi = problem.family.n_parameters if free_parameters else 0
        self.beta = _start_beta(problem)
        self._beta0 = self.beta.copy()
        self.u = np.zeros(problem.re.q)
        self.psi = problem.family_par

    def start_parameters(self) -> np.ndarray:
        """The family's start parameters at the start ``beta`` (:meth:`~.families.Family.start_parameters`)."""
        pr = self.problem
        eta = pr.offset + (pr.X @ self.beta if pr.p else 0.0)
        mu = np.asarray(pr.family.linkinv(eta + np.zeros(pr.nobs)), dtype=float)
        return np.asarray(pr.family.start_parameters(pr.y, pr.weights, mu), dtype=float)

    def _split1(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """``(theta, psi)`` of a stage-1 point (``psi`` None when held)."""
        x = np.asarray(x, dtype=float)
        return x[: self.n_theta], (x[self.n_theta:] if self.n_psi else None)

    def _split2(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """``(theta, beta, psi)`` of a stage-2 point."""
        x = np.asarray(x, dtype=float)
        k, p = self.n_theta, self.problem.p
        return x[:k], x[k:k + p], (x[k + p:] if self.n_psi else None)

    def _pirls(self, theta: np.ndarray, beta: np.ndarray, joint: bool, psi: np.ndarray | None) -> PirlsState:
        """PIRLS warm-started at the last modes; where that start fails (a penalised system that is not positive
        definite, from modes that suited a distant point), once more from ``u = 0`` (and the start ``beta`` when
        ``beta`` is estimated with ``u``)."""
        # far from the optimum (the optimiser's trial points, a cold start) the mean can overflow: such a point's
        # criterion is infinite or the system singular, which the optimiser handles, not a warning to the user
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            try:
                return pirls(self.problem, theta, beta, self.u, joint=joint, psi=psi)
            except LinAlgError:
                if not np.any(self.u) and not joint:
                    raise
                cold = self._beta0 if joint else beta
                return pirls(self.problem, theta, cold, np.zeros_like(self.u), joint=joint, psi=psi)

    def stage1(self, x: np.ndarray) -> float:
        """Laplace deviance at ``theta`` (and ``psi``) with ``beta`` from PIRLS (lme4's ``nAGQ = 0`` criterion)."""
        theta, psi = self._split1(x)
        st = self._pirls(theta, self.beta, True, psi)
        if np.all(np.isfinite(st.u)):
            self.u, self.beta = st.u, st.beta
        return laplace_deviance(self.problem, st)

    def stage1_reml(self, x: np.ndarray) -> float:
        """The restricted Laplace criterion at ``theta``: ``u`` and ``beta`` integrated out together.

        ``-2 log p(y | u*, beta*) + ||u*||^2 + log|L|^2 + log|R_X|^2 - p log(2 pi)`` at the joint mode
        ``(u*, beta*)`` of PIRLS: minus twice the Laplace approximation of the likelihood integrated over
        ``beta`` with a flat prior (glmmTMB's ``REML = TRUE``), which for a Gaussian response is lmer's REML
        criterion.
        """
        theta, psi = self._split1(x)
        st = self._pirls(theta, self.beta, True, psi)
        if np.all(np.isfinite(st.u)):
            self.u, self.beta = st.u, st.beta
        return reml_criterion(self.problem, st)

    def state(self, x: np.ndarray) -> PirlsState:
        theta, beta, psi = self._split2(x)
        st = self._pirls(theta, beta, False, psi)
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
        fixed = slice(k, k + self.problem.p)
        h[fixed, fixed] = 2 * joint_system(self.problem, x[:k], st).beta_precision_unscaled()
        return h

    def stage2(self, x: np.ndarray) -> float:
        """Laplace (``nAGQ = 1``) or adaptive Gauss-Hermite deviance at ``(theta, beta)``."""
        st = self.state(x)
        if np.all(np.isfinite(st.u)):
            self.u = st.u
        if self.n_agq > 1:
            return agq_deviance(self.problem, st, x[: self.n_theta], self.n_agq)
        return laplace_deviance(self.problem, st)


    def stage1_and_gradient(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """:meth:`stage1` and its analytic gradient in ``theta`` (and ``psi``) (:func:`laplace_gradient` with
        ``joint=True``)."""
        theta, psi = self._split1(x)
        st = self._pirls(theta, self.beta, True, psi)
        if np.all(np.isfinite(st.u)):
            self.u, self.beta = st.u, st.beta
        return laplace_deviance(self.problem, st), laplace_gradient(self.problem, theta, st, joint=True,
                                                                    with_psi=bool(self.n_psi))

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
        value, grad = laplace_deviance(self.problem, st), laplace_gradient(self.problem, x[: self.n_theta], st,
                                                                           with_psi=bool(self.n_psi))
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
    """lme4's two optimisation stages; returns ``theta``, ``beta`` and the last optimiser result (whose point ends
    with the family's parameters when the fit estimates them: ``fit.n_psi`` of them, also left in ``fit.psi``).

    With ``reml`` the restricted criterion (:meth:`GlmmFit.stage1_reml`) is minimised over ``theta`` alone
    and ``beta`` is the joint mode at the optimum. Otherwise, with scalar random-effects terms
    (:func:`supports_gradient`) both stages use the analytic gradient of :func:`laplace_gradient`; else
    central differences (in ``beta`` analytic where available).
    """
    re = fit.problem.re
    # vector-valued terms: the optimiser's boundary checks over whole covariance factors (stage 1 and REML are
    # over theta alone, whose layout the factors describe; stage 2 starts from stage 1's optimum)
    factors = tuple(t.n_coef for t in re.terms) if any(t.n_coef > 1 for t in re.terms) else None
    k, m = fit.n_theta, fit.n_psi
    # the family's parameters (free, after theta) in every stage; the deviance is even in no one of them
    x1 = np.concatenate([re.theta0, fit.start_parameters() if m else np.zeros(0)])
    lower1 = np.concatenate([re.lower, np.full(m, -np.inf)])
    even = np.concatenate([even_coordinates(re.lower, factors), np.zeros(m, dtype=bool)])
    if reml:
        opt = minimize_deviance(finite_difference_gradient(fit.stage1_reml), x1, lower1, factors=factors, even=even)
        fit.stage1_reml(opt.theta)  # leaves beta and u at the optimum
        fit.psi = opt.theta[k:]
        return opt.theta[:k], fit.beta.copy(), opt
    analytic = supports_gradient(fit.problem)
    stage1 = fit.stage1_and_gradient if analytic else finite_difference_gradient(fit.stage1)
    # with the family's parameters, stage 1 only starts stage 2 (which re-optimises them all): it ends once a Newton
    # step predicts less than STAGE1_COARSE (deviance units); lme4's two stages are kept for its families
    coarse = STAGE1_COARSE if m and fit.n_agq else 0.0
    opt1 = minimize_deviance(stage1, x1, lower1, fun=fit.stage1, factors=factors, even=even, coarse=coarse)
    fit.stage1(opt1.theta)  # leaves beta and u at the stage-1 optimum
    fit.psi = opt1.theta[k:]
    if fit.n_agq == 0:
        return opt1.theta[:k], fit.beta.copy(), opt1
    x0 = np.concatenate([opt1.theta[:k], fit.beta, fit.psi])
    lower = np.concatenate([re.lower, np.full(fit.problem.p + m, -np.inf)])
    if fit.n_agq == 1 and analytic:
        fun_and_grad = fit.stage2_and_gradient
    else:
        fun_and_grad = finite_difference_gradient(fit.stage2)
    hess = fit.stage2_beta_hessian if fit.n_agq == 1 and fit.problem.p > EXACT_HESSIAN_MAX_P else None
    opt2 = minimize_deviance(fun_and_grad, x0, lower, fun=fit.stage2, hess=hess)
    theta, beta, psi = fit._split2(opt2.theta)
    fit.psi = np.zeros(0) if psi is None else psi
    return theta, beta, opt2


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


def laplace_beta_at(fit: GlmmFit, theta: np.ndarray, beta0: np.ndarray, psi: np.ndarray | None = None) -> np.ndarray:
    """``beta`` minimising the Laplace deviance at fixed ``theta`` (and the family's parameters ``psi`` when the
    fit estimates them): the marginal-likelihood mode.

    For a linear mixed model this is the GLS estimate at ``theta``, which is also the joint mode of
    ``(u, beta)``; for binary data the joint mode (PIRLS over both, the penalised quasi-likelihood
    estimate) is biased towards 0 (by about half a standard error at 90% accuracy with 5 seeds), the
    Laplace mode is not.
    """
    problem = fit.problem
    if not problem.p:
        return np.zeros(0)
    tail = np.zeros(0) if psi is None or not fit.n_psi else np.asarray(psi, dtype=float)

    def fg(b: np.ndarray) -> tuple[float, np.ndarray]:
        x = np.concatenate([theta, b, tail])
        if supports_beta_gradient(problem):
            value, grad = fit.stage2_and_gradient_beta(x)
            return value, grad
        return finite_difference_gradient(lambda bb: fit.stage2(np.concatenate([theta, bb, tail])))(b)

    opt = minimize_deviance(fg, np.asarray(beta0, dtype=float), np.full(problem.p, -np.inf))
    return opt.theta


def reml_fit(fit: GlmmFit):
    """Restricted-Laplace fit: ``theta`` minimising :meth:`GlmmFit.stage1_reml`; ``beta`` the Laplace
    deviance's mode at that ``theta`` (:func:`laplace_beta_at`), its covariance lme4's RX-based matrix there;
    the covariance of ``theta`` ``2 H^-1`` of the restricted criterion (block-diagonal ``cov_params``: the two
    are asymptotically uncorrelated, as in REML for linear models)."""
    problem = fit.problem
    theta, beta_joint, opt = optimize_glmm(fit, reml=True)
    psi = fit.psi if fit.n_psi else None
    joint = pirls(problem, theta, beta_joint, fit.u, joint=True, psi=psi)
    dev = reml_criterion(problem, joint)
    beta = laplace_beta_at(fit, theta, joint.beta, psi)
    state = pirls(problem, theta, beta, joint.u, joint=False, psi=psi)
    unsc = joint_system(problem, theta, state).beta_covariance_unscaled() if problem.p else np.zeros((0, 0))
    k, p, m = theta.size, problem.p, fit.n_psi
    cov_params = None
    try:
        h = _hessian(fit.stage1_reml, opt.theta)  # over (theta, psi)
        cov_t = 2 * np.linalg.inv(h)
        if np.all(np.isfinite(cov_t)):
            # the layout of stage 2's point: (theta, beta, psi); beta's block uncorrelated with the others
            order = np.concatenate([np.arange(k), np.arange(k + p, k + p + m)])
            cov_params = np.zeros((k + p + m, k + p + m))
            cov_params[np.ix_(order, order)] = 0.5 * (cov_t + cov_t.T)
            cov_params[k:k + p, k:k + p] = unsc
    except np.linalg.LinAlgError:
        pass
    return theta, beta, opt, state, dev, unsc, cov_params
