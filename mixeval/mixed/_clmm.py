"""Cumulative link mixed models (``ordinal::clmm``) on the random-effects structure of every mixed model.

``P(Y_i <= j | b) = F(theta_j - x_i' beta - z_i' b)``, ``b = Lambda u``, ``u ~ N(0, I)``. Stages, each callable
alone: :func:`clmm_problem` (validated design -> :class:`ClmmProblem`: category codes, threshold design,
fixed-effects matrix without intercept, random-effects structure), :class:`ClmmDeviance` (the Laplace
or adaptive Gauss-Hermite deviance at ``x = (theta, alpha, beta)``: a Newton inner loop over ``u`` on the
penalised system of :mod:`._pirls`, and the exact gradient for scalar random-effects terms),
:func:`optimize_clmm` (:func:`~._optimize.minimize_deviance`: first ``(alpha, beta)`` without random effects,
then everything jointly), :func:`fit_clmm` (with the Hessian for Wald intervals and the frozen result).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.linalg import LinAlgError

from ..errors import ConvergenceWarning, InputError, SingularFitWarning, caller_stacklevel
from ._design import Design
from ._optimize import OptimResult, even_coordinates, finite_difference_gradient, minimize_deviance
from ._ordinal import (
    OPEN_END,
    OrderedResponse,
    Ordinal,
    row_derivatives,
    row_log_probability,
    threshold_jacobian,
    warn_empty_categories,
)
from ._pirls import STEP_TOL, GlmmProblem, _inverse_diagonal_terms, _ops, _ScalarOps, gauss_hermite_rule
from ._reterms import ReStructure, build_restructure

__all__ = ["ClmmProblem", "ClmmDeviance", "clmm_problem", "optimize_clmm", "quadratic_deviance", "quadratic_start",
           "fit_clmm", "nominal_design", "check_nominal_cells", "check_clmm_fit", "covariance_from_hessian"]

_LOG_2PI = float(np.log(2.0 * np.pi))

#: evaluations of :meth:`ClmmDeviance.deviance_and_gradient` remembered by their exact argument: the optimiser
#: re-evaluates its last point (boundary checks, the next stage's start) and its last forward-difference
#: Hessian's points are the upper half of the central differences of :meth:`ClmmDeviance.hessian`
_RECENT = 64


@dataclass(frozen=True)
class ClmmProblem:
    """Data of a cumulative link (mixed) model.

    Attributes
    ----------
    y : ndarray of int
        Category code of each row among the *estimated* categories (0 .. K-1).
    U, L : scipy.sparse.csr_matrix, shape (n, n_alpha)
        Each row's upper and lower threshold as a linear function of the threshold parameters ``alpha``
        (zero rows where the category is the top or the bottom one).
    X : ndarray, shape (n, p)
        Fixed effects without intercept (the thresholds take its place).
    re : ReStructure
    family : Ordinal
    alpha_names : tuple of str
    offset : ndarray, shape (n,), or None
        The known part of each row's location (the formula's ``offset()`` terms), added to ``X beta``.

    Examples
    --------
    The problem behind a fit (ratings 1-5: four thresholds; one fixed effect beside them):

    >>> from mixeval.datasets import toy_scores
    >>> from mixeval.mixed import clmm
    >>> fit = clmm("rating ~ system + (1|rater)", toy_scores(10, ("A", "B"), n_raters=10, response="rating"))
    >>> problem = fit.problem
    >>> problem.nobs, problem.n_categories, problem.alpha_names, problem.p
    (200, 5, ('1|2', '2|3', '3|4', '4|5'), 1)
    """

    y: np.ndarray = field(repr=False)
    U: sp.csr_matrix = field(repr=False)
    L: sp.csr_matrix = field(repr=False)
    X: np.ndarray = field(repr=False)
    re: ReStructure = field(repr=False)
    family: Ordinal
    alpha_names: tuple[str, ...]
    n_categories: int
    offset: np.ndarray | None = field(default=None, repr=False)

    @property
    def nobs(self) -> int:
        return int(self.y.shape[0])

    @property
    def p(self) -> int:
        return int(self.X.shape[1])

    @property
    def n_alpha(self) -> int:
        return int(self.U.shape[1])

    @cached_property
    def open_ends(self) -> tuple[np.ndarray, np.ndarray]:
        """``+OPEN_END`` on the top category's rows (upper argument), ``-OPEN_END`` on the bottom's (lower)."""
        return OPEN_END * self.top, -OPEN_END * self.bottom

    @cached_property
    def top(self) -> np.ndarray:
        return self.y == self.n_categories - 1

    @cached_property
    def bottom(self) -> np.ndarray:
        return self.y == 0

    @cached_property
    def transposes(self) -> tuple[sp.csr_matrix, sp.csr_matrix]:
        """``U'`` and ``L'`` (for the gradient in ``alpha``)."""
        return self.U.T.tocsr(), self.L.T.tocsr()

    @cached_property
    def argument_jacobians(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``M_a = [U, -X]`` and ``M_b = [L, -X]`` dense (the arguments' derivatives in ``(alpha, beta)``) when they
        fit in one chunk of :data:`_CHUNK` rows, else None (formed chunk by chunk)."""
        if self.nobs > _CHUNK:
            return None
        return np.hstack([self.U.toarray(), -self.X]), np.hstack([self.L.toarray(), -self.X])

    def arguments(self, alpha: np.ndarray, offset: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``a = theta_upper - offset`` and ``b = theta_lower - offset`` (``+-inf`` at the open ends)."""
        return self.U @ alpha + self.open_ends[0] - offset, self.L @ alpha + self.open_ends[1] - offset

    def without_random_effects(self) -> ClmmProblem:
        """The same rows without random effects (``ordinal::clm``'s model)."""
        return ClmmProblem(self.y, self.U, self.L, self.X, ReStructure(terms=(), nobs=self.nobs), self.family,
                           self.alpha_names, self.n_categories, self.offset)

    def evaluator(self, n_agq: int = 1) -> ClmmDeviance:
        """The deviance of this problem (:class:`ClmmDeviance`), for the evaluator of a fit (``fit.model``)."""
        return ClmmDeviance(self, n_agq)

    def linear_problem(self) -> GlmmProblem:
        """The random-effects operators' view (no fixed effects: those enter through the offset)."""
        n = self.nobs
        return GlmmProblem(y=np.zeros(n), X=np.zeros((n, 0)), weights=np.ones(n), offset=np.zeros(n), re=self.re,
                           family=self.family)  # type: ignore[arg-type]


def nominal_design(data: pd.DataFrame, nominal: str) -> tuple[np.ndarray, tuple[str, ...]]:
    """Columns of the nominal effects (``"rater"`` or ``"~rater"``, R's formula language as ordinal's ``nominal =
    ~ rater``; treatment coding, the intercept left to the thresholds)."""
    from ..formula import model_frame_spec

    spec = nominal.strip()
    spec = spec[1:] if spec.startswith("~") else spec
    X, frame = model_frame_spec(spec, data, what=f"nominal={nominal!r}")
    keep = [i for i, nm in enumerate(frame.column_names) if nm != "(Intercept)"]
    return X[:, keep], tuple(frame.column_names[i] for i in keep)


def threshold_design(codes: np.ndarray, jac: np.ndarray, names: tuple[str, ...], threshold_names: tuple[str, ...],
                      nominal: tuple[np.ndarray, tuple[str, ...]] | None) -> tuple[sp.csr_matrix, sp.csr_matrix, tuple]:
    """``U`` and ``L`` (rows: observations; columns: ``alpha`` then nominal effects threshold by threshold).

    Examples
    --------
    Three rows in categories 1, 2 and 3 of three (flexible thresholds: ``J`` is the identity); the top category
    has no upper threshold and the bottom one no lower:

    >>> U, L, names = threshold_design(np.array([0, 1, 2]), np.eye(2), ("1|2", "2|3"), ("1|2", "2|3"), None)
    >>> U.toarray().tolist(), L.toarray().tolist(), names
    ([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]], [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]], ('1|2', '2|3'))
    """
    n = codes.size
    m, k = jac.shape
    K = m + 1
    up = np.minimum(codes, m - 1)
    lo = np.maximum(codes - 1, 0)
    blocks_u = [sp.csr_matrix(jac[up] * (codes < K - 1)[:, None])]
    blocks_l = [sp.csr_matrix(jac[lo] * (codes > 0)[:, None])]
    all_names = list(names)
    if nominal is not None:
        N, nom_names = nominal
        for c, nm in enumerate(nom_names):
            rows_u = np.arange(n)
            x = N[:, c]
            blocks_u.append(sp.csr_matrix((x * (codes < K - 1), (rows_u, up)), shape=(n, m)))
            blocks_l.append(sp.csr_matrix((x * (codes > 0), (rows_u, lo)), shape=(n, m)))
            all_names += [f"{t}.{nm}" for t in threshold_names]
    return sp.hstack(blocks_u, format="csr"), sp.hstack(blocks_l, format="csr"), tuple(all_names)


def clmm_problem(design: Design, response: OrderedResponse, family: Ordinal,
                 nominal: tuple[np.ndarray, tuple[str, ...]] | None = None,
                 re: ReStructure | None = None) -> tuple[ClmmProblem, np.ndarray]:
    """The :class:`ClmmProblem` of a validated design and the indices of the estimated categories.

    With flexible thresholds only the observed categories are estimated (an empty category's probability
    has its maximum at 0); with equidistant or symmetric thresholds every category of the scale is.
    """
    codes = response.codes
    if family.threshold == "flexible":
        kept = np.flatnonzero(response.observed)
        codes = np.searchsorted(kept, codes)
    else:
        kept = np.arange(len(response.levels))
    K = kept.size
    lv = [str(response.levels[j]) for j in kept]
    tnames = tuple(f"{a}|{b}" for a, b in zip(lv[:-1], lv[1:]))
    jac, anames = threshold_jacobian(K - 1, family.threshold)
    if family.threshold == "flexible":
        anames = tnames
    if nominal is not None and family.threshold != "flexible":
        raise InputError("nominal effects (group-specific thresholds) need threshold='flexible', as in ordinal::clm.")
    U, Lm, names = threshold_design(codes, jac, anames, tnames, nominal)
    names_x = list(design.fixed_names)
    X = np.asarray(design.X, dtype=float)
    if "(Intercept)" not in names_x:
        raise InputError(f"the formula {design.parsed.formula!r} removes the intercept; a cumulative link model's "
                         "thresholds take its place, so keep it (write the fixed effects as for lmer).")
    keep_cols = [i for i, nm in enumerate(names_x) if nm != "(Intercept)"]
    X = X[:, keep_cols]
    re = build_restructure(design) if re is None else re
    problem = ClmmProblem(y=codes.astype(np.int64), U=U, L=Lm, X=X, re=re, family=family, alpha_names=names,
                          n_categories=int(K), offset=design.offset)
    return problem, kept


def _start_alpha(problem: ClmmProblem) -> np.ndarray:
    """Thresholds at the link of the cumulative proportions, least squares onto ``alpha``; nominal effects 0."""
    K = problem.n_categories
    cum = np.cumsum(np.bincount(problem.y, minlength=K))[:-1] / problem.nobs
    cum = np.clip(cum, 0.5 / problem.nobs, 1 - 0.5 / problem.nobs)
    # spread thresholds of empty categories (equidistant/symmetric structures keep them)
    theta = problem.family.quantile(cum) + 1e-3 * np.arange(K - 1)
    jac, _ = threshold_jacobian(K - 1, problem.family.threshold)
    alpha = np.zeros(problem.n_alpha)
    alpha[:jac.shape[1]] = np.linalg.lstsq(jac, theta, rcond=None)[0]
    return alpha


class ClmmDeviance:
    """The Laplace (or adaptive Gauss-Hermite) deviance of a CLMM at ``x = (theta, alpha, beta)``.

    The conditional modes ``u`` are carried from one evaluation to the next (warm starts); evaluations with the
    gradient are remembered by their exact argument (the most recent 64), as the optimiser and the Hessian revisit
    points.

    Examples
    --------
    At a fit's estimates ``x = (theta, alpha, beta)`` the deviance is the fit's:

    >>> from mixeval.datasets import toy_scores
    >>> from mixeval.mixed import clmm
    >>> fit = clmm("rating ~ system + (1|rater)", toy_scores(10, ("A", "B"), n_raters=10, response="rating"))
    >>> dev = ClmmDeviance(fit.problem)
    >>> x = optimize_clmm(dev).theta
    >>> round(dev.deviance(x), 4), round(-2 * fit.loglik, 4)
    (633.8756, 633.8756)
    """

    def __init__(self, problem: ClmmProblem, n_agq: int = 1):
        self.problem = problem
        self.lin = problem.linear_problem()
        self.n_agq = int(n_agq)
        self.k = problem.re.n_theta
        self.u = np.zeros(problem.re.q)
        self.scalar = bool(problem.re.terms) and isinstance(_ops(self.lin, problem.re.theta0, False), _ScalarOps)
        self._recent: dict[bytes, tuple[float, np.ndarray]] = {}
        self._tangent: tuple | None = None
        self._last: tuple | None = None
        self._base: tuple | None = None

    def split(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        k, m = self.k, self.problem.n_alpha
        return x[:k], x[k:k + m], x[k + m:]

    def fixed_offset(self, beta: np.ndarray) -> np.ndarray:
        """The location's fixed part ``X beta``, plus the formula's offset."""
        location = self.problem.X @ beta if self.problem.p else np.zeros(self.problem.nobs)
        return location if self.problem.offset is None else location + self.problem.offset

    def _arguments(self, alpha: np.ndarray, offset: np.ndarray, eta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows' arguments at ``eta``; their part without ``eta`` is kept for the same ``alpha`` and ``offset``
        (the passes of one mode search)."""
        base = self._base
        if base is None or base[0] is not offset or not np.array_equal(base[1], alpha):
            base = self._base = (offset, alpha.copy(), *self.problem.arguments(alpha, offset))
        return base[2] - eta, base[3] - eta

    def log_probabilities(self, alpha: np.ndarray, offset: np.ndarray, eta: np.ndarray) -> np.ndarray:
        return row_log_probability(self.problem.family.link, *self._arguments(alpha, offset, eta))

    def rows(self, alpha: np.ndarray, offset: np.ndarray, eta: np.ndarray, third: bool = False):
        return row_derivatives(self.problem.family.link, *self._arguments(alpha, offset, eta), third=third)

    def modes(self, theta: np.ndarray, alpha: np.ndarray, offset: np.ndarray, *, tol: float = STEP_TOL,
              maxit: int = 100, third: bool = False):
        """Conditional modes of ``u`` by Newton steps with step halving on ``-2 sum log P + ||u||^2``.

        Returns ``(u, eta, rows, system, ops)`` at the modes, or raises ``LinAlgError`` where the thresholds
        are out of order (a probability <= 0).
        """
        ops = _ops(self.lin, theta, False)
        zero = np.zeros(0)
        u = self.u.copy() if self.u.size else np.zeros(0)
        eta = ops.eta(u, zero)
        rows = self.rows(alpha, offset, eta)
        pen = -2.0 * float(np.sum(rows.l)) + float(u @ u)
        if not np.isfinite(pen):
            u = np.zeros_like(u)
            eta = ops.eta(u, zero)
            rows = self.rows(alpha, offset, eta)
            pen = -2.0 * float(np.sum(rows.l))
            if not np.isfinite(pen):
                raise LinAlgError("thresholds out of order")
        system, converged = None, False
        for _ in range(maxit):
            w = rows.w
            system = ops.system(w)
            rhs = ops.zlt(rows.r) - u
            du, _ = system.solve(rhs, None)
            size = float(np.max(np.abs(du), initial=0.0))
            if size < tol or float(du @ rhs) < 1e-20 * (1.0 + abs(pen)):
                # the last Newton step is below tol: its factorisation (weights within ~tol of those at the mode)
                # serves the Laplace term and the gradient
                u = u + du
                eta = ops.eta(u, zero)
                rows = self.rows(alpha, offset, eta, third=third)
                converged = True
                break
            step, rows_new = 1.0, None
            for _ in range(30):
                u_new = u + step * du
                eta_new = ops.eta(u_new, zero)
                if step == 1.0:  # the full step is usually taken: its likelihood terms serve the next iteration
                    rows_new = self.rows(alpha, offset, eta_new)
                    logp = rows_new.l
                else:
                    rows_new, logp = None, self.log_probabilities(alpha, offset, eta_new)
                pen_new = -2.0 * float(np.sum(logp)) + float(u_new @ u_new)
                if pen_new <= pen + 1e-14 * (1.0 + abs(pen)):
                    break
                step /= 2
            else:
                break
            u, eta, pen = u_new, eta_new, pen_new
            rows = rows_new if rows_new is not None else self.rows(alpha, offset, eta)
        if not converged:
            system = ops.system(rows.w)
        return u, eta, rows, system, ops

    def _state(self, x: np.ndarray, third: bool = False):
        theta, alpha, beta = self.split(np.asarray(x, dtype=float))
        offset = self.fixed_offset(beta)
        if not self.problem.re.q:
            rows = self.rows(alpha, offset, np.zeros(self.problem.nobs))  # no third derivatives: no log|A|
            if not np.all(np.isfinite(rows.l)):
                raise LinAlgError("thresholds out of order")
            return theta, alpha, beta, offset, np.zeros(0), rows, None, None
        predicted = self._predicted_modes(x)
        if predicted is not None:
            self.u = predicted
        u, eta, rows, system, ops = self.modes(theta, alpha, offset, third=third)
        if not np.all(np.isfinite(rows.l)):
            raise LinAlgError("thresholds out of order")
        if np.all(np.isfinite(u)):
            self.u = u
        if third and rows.wa is None:
            rows = self.rows(alpha, offset, eta, third=True)
        return theta, alpha, beta, offset, u, rows, system, ops

    def _predicted_modes(self, x: np.ndarray) -> np.ndarray | None:
        """The modes at ``x`` to first order from the last exact-gradient evaluation (implicit function theorem),
        when the warm start is still that evaluation's modes and no theta has changed by more than
        :data:`_PREDICT_THETA` of itself; else None.

        At the modes ``Lambda' Z' r - u = 0``; moving ``x`` by ``dx`` with ``u`` fixed moves the arguments by
        ``da = U d alpha - X d beta - s``, ``db = L d alpha - X d beta - s`` (``s = sum_k d theta_k x_k u_k[c_k]``), so
        ``A du = Lambda' Z' (r_a da + r_b db) + d Lambda' Z' r`` with the factorised ``A`` of that evaluation.
        """
        if self._tangent is None:
            return None
        x0, u0, ra, rb, z_r, system, ops = self._tangent
        if x0.shape != x.shape or not np.array_equal(self.u, u0):
            return None
        problem = self.problem
        d_theta, d_alpha, d_beta = self.split(x - x0)
        if np.any(np.abs(d_theta) > _PREDICT_THETA * np.maximum(np.abs(x0[:self.k]), 0.1)):
            return None
        shift = problem.X @ d_beta if problem.p else 0.0
        s = np.zeros(problem.nobs)
        for dt, xk, sl, codes in zip(d_theta, ops.x, ops.slices, ops.codes):
            if dt:
                s += dt * (u0[sl][codes] if xk is None else xk * u0[sl][codes])
        da = problem.U @ d_alpha - shift - s
        db = problem.L @ d_alpha - shift - s
        rhs = ops.zlt(np.where(problem.top, 0.0, ra * da) + np.where(problem.bottom, 0.0, rb * db))
        rhs += z_r * np.repeat(d_theta, ops.levels)
        du, _ = system.solve(rhs, None)
        u = u0 + du
        return u if np.all(np.isfinite(u)) else None

    def deviance(self, x: np.ndarray) -> float:
        """``-2 log`` of the Laplace (``n_agq = 1``) or adaptive Gauss-Hermite approximation of the likelihood."""
        theta, alpha, beta, offset, u, rows, system, ops = self._state(x)
        if system is None:
            return -2.0 * float(np.sum(rows.l))
        if self.n_agq > 1:
            return self._agq(theta, alpha, offset, u, system)
        return -2.0 * float(np.sum(rows.l)) + float(u @ u) + system.ldl2

    def _agq(self, theta: np.ndarray, alpha: np.ndarray, offset: np.ndarray, u0: np.ndarray, system) -> float:
        """Adaptive Gauss-Hermite over the levels of the single scalar term (``glmerAGQ`` on ``-2 log P``)."""
        term = self.problem.re.terms[0]
        codes, L = term.codes, term.n_levels
        sd = 1.0 / system.block_chol[:, 0, 0]
        col = term.X[:, 0] * float(theta[0])

        def devc(u: np.ndarray) -> np.ndarray:
            rows = self.rows(alpha, offset, col * u[codes])
            return u * u - 2.0 * np.bincount(codes, weights=rows.l, minlength=L)

        d0 = devc(u0)
        z, w = gauss_hermite_rule(self.n_agq)
        mult = np.zeros(L)
        for zk, wk in zip(z, w):
            mult += wk if zk == 0.0 else wk * np.exp(-0.5 * (devc(u0 + zk * sd) - d0) + 0.5 * zk * zk)
        return float(d0.sum() + system.ldl2 - 2.0 * np.sum(np.log(mult)))

    def _remembered_gradient(self, x: np.ndarray) -> np.ndarray | None:
        """The gradient at ``x`` when the last exact-gradient evaluation was at ``x`` (its modes and tangent are
        then ``x``'s) and is remembered; else None."""
        if self._tangent is None or not np.array_equal(self._tangent[0], x):
            return None
        hit = self._recent.get(np.asarray(x, dtype=float).tobytes())
        return None if hit is None else hit[1].copy()

    def modes_at(self, x: np.ndarray) -> np.ndarray:
        """The conditional modes ``u`` at ``x`` (those of the last exact-gradient evaluation when it was at ``x``)."""
        x = np.asarray(x, dtype=float)
        if self._remembered_gradient(x) is not None:
            return self._tangent[1].copy()
        return self._state(x)[4]

    def deviance_and_gradient(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """The Laplace deviance and its exact gradient in ``(theta, alpha, beta)`` (scalar terms or none).

        Notes
        -----
        With ``a_i, b_i`` the upper and lower arguments, ``l_i = log P_i`` and the curvature
        ``w_i = -d^2 l_i / d eta_i^2``, the per-row coefficients of ``da`` and ``db`` in ``dD`` are
        ``c_a = -2 l_a + h w_a + zeta r_a`` and ``c_b`` likewise: the likelihood at fixed modes, ``log|A|``
        through the weights at fixed modes (``h_i = z_i' Lambda A^{-1} Lambda' z_i``) and the shift of the
        modes (one adjoint solve ``A lambda = Lambda' Z' (h w_eta)``, ``zeta = Z Lambda lambda``;
        ``r = d l / d eta``, ``r_a = d r / d a``). Then ``dD/d alpha = U' c_a + L' c_b``,
        ``dD/d beta = -X'(c_a + c_b)`` and ``dD/d theta_k = -s_k'(c_a + c_b) + 2 (w x_k)' g_k +
        lambda_k' Z_k' r`` with ``s_k = x_k u_k[c_k]`` (as :func:`~._pirls.laplace_gradient`).
        """
        if not self.analytic:
            raise ValueError("the exact gradient is that of the Laplace deviance with scalar random-effects terms; "
                             "use fun_and_grad(), which differences the deviance (adaptive quadrature, vector terms)")
        x = np.asarray(x, dtype=float)
        key = x.tobytes()
        if key in self._recent:
            value, grad = self._recent[key]
            return value, grad.copy()
        value, grad = self._deviance_and_gradient(x)
        if len(self._recent) >= _RECENT:
            del self._recent[next(iter(self._recent))]
        self._recent[key] = (value, grad.copy())
        return value, grad

    def _deviance_and_gradient(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        problem = self.problem
        theta, alpha, beta, offset, u, rows, system, ops = self._state(x, third=True)
        self._last = (x.copy(), rows.laa, rows.lab, rows.lbb, system, ops)
        r = rows.r
        ra = -(rows.laa + rows.lab)
        rb = -(rows.lab + rows.lbb)
        w = rows.w
        value = -2.0 * float(np.sum(rows.l))
        if system is None:
            ca, cb = -2.0 * rows.la, -2.0 * rows.lb
            grad_t = np.zeros(0)
        else:
            value += float(u @ u) + system.ldl2
            g = _inverse_diagonal_terms(ops, system)
            h = sum(v * gk for v, gk in zip(ops.v, g))
            w_eta = -(rows.wa + rows.wb)
            lam_u, _ = system.solve(ops.zlt(h * w_eta), None)
            zeta = ops.eta(lam_u, np.zeros(0))
            ca = -2.0 * rows.la + h * rows.wa + zeta * ra
            cb = -2.0 * rows.lb + h * rows.wb + zeta * rb
            base = -(ca + cb)
            z_base, z_r = ops.sums(base), ops.sums(r)
            grad_t = np.empty(len(ops.codes))
            for k, (xk, sl) in enumerate(zip(ops.x, ops.slices)):
                grad_t[k] = u[sl] @ z_base[sl] + 2.0 * ((w if xk is None else w * xk) @ g[k]) + lam_u[sl] @ z_r[sl]
            self._tangent = (x.copy(), u.copy(), ra, rb, z_r, system, ops)
        ca = np.where(problem.top, 0.0, ca)
        cb = np.where(problem.bottom, 0.0, cb)
        ut, lt = problem.transposes
        grad_a = ut @ ca + lt @ cb
        grad_b = -(problem.X.T @ (ca + cb)) if problem.p else np.zeros(0)
        return value, np.concatenate([grad_t, grad_a, grad_b])

    def fixed_curvature(self, x: np.ndarray) -> np.ndarray:
        """The Hessian of the deviance in ``(alpha, beta)`` at the modes, without the curvature of ``log|A|``
        (exact without random effects), and NaN in the rows and columns of ``theta``: for
        :func:`~._optimize.minimize_deviance`, which forms those rows by differences of the gradient.

        Notes
        -----
        With ``M_a = [U, -X]``, ``M_b = [L, -X]`` (the arguments' derivatives in ``phi = (alpha, beta)``) the
        penalised deviance ``P = -2 sum l_i + ||u||^2`` has ``P_phiphi = -2 (M_a' l_aa M_a + M_a' l_ab M_b +
        M_b' l_ab M_a + M_b' l_bb M_b)``, ``P_phiu = -2 G``, ``G = (M_a' r_a + M_b' r_b) Z Lambda`` and ``P_uu = 2 A``,
        so the Hessian of ``P`` at the modes ``u(phi)`` is ``P_phiphi - 2 G A^{-1} G'``.
        """
        x = np.asarray(x, dtype=float)
        if self._last is None or not np.array_equal(self._last[0], x):
            if not self.analytic:
                return np.full((x.size, x.size), np.nan)
            self._deviance_and_gradient(x)  # (not the remembered value: the rows at x are needed)
        _, laa, lab, lbb, system, ops = self._last
        problem = self.problem
        U, L, X = problem.U, problem.L, problem.X
        h = np.zeros((x.size - self.k,) * 2)
        dense = problem.argument_jacobians
        for start in range(0, problem.nobs, _CHUNK):  # M_a, M_b dense (by chunks of rows on a large log)
            sl = slice(start, start + _CHUNK)
            ma, mb = dense if dense is not None else (np.hstack([U[sl].toarray(), -X[sl]]),
                                                      np.hstack([L[sl].toarray(), -X[sl]]))
            a, b, c = laa[sl, None], lab[sl, None], lbb[sl, None]
            h += ma.T @ (a * ma + b * mb) + mb.T @ (b * ma + c * mb)
        h *= -2.0
        if system is not None:
            ra, rb = -(laa + lab), -(lab + lbb)
            if dense is not None:
                cols = list((ra[:, None] * dense[0] + rb[:, None] * dense[1]).T)
            else:
                ut, lt = problem.transposes
                cols = [ra * ut[j].toarray().ravel() + rb * lt[j].toarray().ravel() for j in range(problem.n_alpha)]
                d2 = laa + 2.0 * lab + lbb  # on beta's columns (-X): r_a M_a + r_b M_b = -(r_a + r_b) X = d2 X
                cols += [d2 * X[:, j] for j in range(problem.p)]
            gt = np.column_stack([ops.zlt(col) for col in cols])
            ainv_gt = np.column_stack([system.solve(col, None)[0] for col in gt.T])
            h -= 2.0 * (gt.T @ ainv_gt)
        out = np.full((x.size, x.size), np.nan)
        out[self.k:, self.k:] = 0.5 * (h + h.T)
        return out

    @property
    def analytic(self) -> bool:
        """The exact gradient applies: Laplace with scalar random-effects terms (or none)."""
        return self.n_agq <= 1 and (self.scalar or not self.problem.re.terms)

    def fun_and_grad(self):
        return self.deviance_and_gradient if self.analytic else finite_difference_gradient(self.deviance)

    def hessian(self, x: np.ndarray, *, forward: bool = False) -> np.ndarray:
        """The Hessian of the deviance at ``x``: exact without random effects (:meth:`fixed_curvature`), else by
        differences of its gradient, symmetrised.

        Central differences with steps ``1e-4 max(|x_i|, 0.1)`` by default, each point's modes started from
        those at ``x``: smooth in ``x`` to about ``1e-10`` relative, for callers that difference the Hessian
        itself (Satterthwaite's df). ``forward=True`` (the fit's standard errors), with the exact gradient:
        forward differences with steps ``1e-6 max(|x_i|, 0.1)``, the modes at each point started from their
        first-order prediction from ``x`` (:meth:`_predicted_modes`, within ``O(step^2)``), n evaluations in
        place of 2n, accurate to about ``1e-6`` relative (the truncation error).
        """
        x = np.asarray(x, dtype=float)
        h = np.empty((x.size, x.size))
        if not self.problem.re.terms:
            return self.fixed_curvature(x)
        if forward and self.analytic:
            # the modes at x and their tangent: each point starts from both
            g0 = self._remembered_gradient(x)
            if g0 is None:
                _, g0 = self._deviance_and_gradient(x)
            u0, tangent = self._tangent[1].copy(), self._tangent
            steps = _FORWARD_STEP * np.maximum(np.abs(x), 0.1)
            for i in range(x.size):
                self.u, self._tangent = u0.copy(), tangent
                t = x.copy()
                t[i] += steps[i]
                h[i] = (self.deviance_and_gradient(t)[1] - g0) / steps[i]
            self.u, self._tangent = u0, tangent
            return 0.5 * (h + h.T)
        fg = self.fun_and_grad()
        u0 = self._state(x)[4].copy() if self.problem.re.q else np.zeros(0)
        steps = 1e-4 * np.maximum(np.abs(x), 0.1)
        for i in range(x.size):
            grads = []
            for sign in (1.0, -1.0):
                self.u = u0.copy()
                t = x.copy()
                t[i] += sign * steps[i]
                grads.append(fg(t)[1])
            h[i] = (grads[0] - grads[1]) / (2 * steps[i])
        self.u = u0
        return 0.5 * (h + h.T)


#: the modes are not predicted across a change of some theta_k by more than this times max(|theta_k|, 0.1): over
#: such a change the first-order prediction can land farther from the modes than the previous ones
_PREDICT_THETA = 1.0

#: rows per chunk of the dense threshold and fixed-effects design in :meth:`ClmmDeviance.fixed_curvature`
_CHUNK = 65_536

#: relative step of the forward differences of the exact gradient in :meth:`ClmmDeviance.hessian` and in the
#: optimiser's Hessians (whose points at the optimum the standard errors then reuse)
_FORWARD_STEP = 1e-6


def optimize_clmm(dev: ClmmDeviance, x0: np.ndarray | None = None) -> OptimResult:
    """Minimise the deviance over ``(theta, alpha, beta)`` (:func:`~._optimize.minimize_deviance`).

    Without a start: ``alpha`` from the cumulative proportions, then ``(alpha, beta)`` of the model without
    random effects (``ordinal::clm``), then ``theta`` alone with those held (:func:`start_theta`, from the
    quadratic-expansion start :func:`quadratic_start`; on a subsample of a large log), then everything jointly
    to within :data:`_JOINT_TOL`.

    Examples
    --------
    >>> from mixeval.datasets import toy_scores
    >>> from mixeval.mixed import clmm
    >>> fit = clmm("rating ~ system + (1|rater)", toy_scores(10, ("A", "B"), n_raters=10, response="rating"))
    >>> opt = optimize_clmm(ClmmDeviance(fit.problem))
    >>> opt.converged, round(opt.deviance, 4), opt.theta.size  # theta, four thresholds, one effect
    (True, 633.8756, 6)
    """
    problem = dev.problem
    k = dev.k
    re = problem.re
    lower = np.concatenate([re.lower, np.full(problem.n_alpha + problem.p, -np.inf)])
    if x0 is None:
        fixed = ClmmDeviance(problem.without_random_effects())
        start = np.concatenate([_start_alpha(problem), np.zeros(problem.p)])
        opt0 = minimize_deviance(fixed.deviance_and_gradient, start, np.full(start.size, -np.inf),
                                 hess=fixed.fixed_curvature)
        if not k:
            return opt0
        x0 = np.concatenate([start_theta(dev, opt0.theta), opt0.theta])
    even = np.concatenate([_even(re), np.zeros(problem.n_alpha + problem.p, dtype=bool)])
    return minimize_deviance(dev.fun_and_grad(), np.asarray(x0, dtype=float), lower, fun=dev.deviance, even=even,
                             hess=dev.fixed_curvature if dev.analytic else None, refresh=_REFRESH, coarse=_JOINT_TOL,
                             fd_step=_FORWARD_STEP if dev.analytic else 1e-4, partial_hess=True)


def _even(re: ReStructure) -> np.ndarray:
    """The thetas in which the deviance is even (:func:`~._optimize.even_coordinates` of the terms' factors)."""
    return even_coordinates(re.lower, tuple(t.n_coef for t in re.terms))


def start_theta(dev: ClmmDeviance, fixed: np.ndarray) -> np.ndarray:
    """``theta`` minimising the deviance with the thresholds and effects held at the fit without random effects
    (a few cheap iterations over ``theta`` alone from :func:`quadratic_start`, ended within :data:`_START_TOL`: joint
    steps from a poor start can overshoot a variance whose mean is confounded with the thresholds, e.g. that of a
    few raters, or one the quadratic expansion understates, and then cost many evaluations). On a large
    log this start is taken from the rows of a subsample of the largest factor's levels (:func:`_start_rows`):
    it only places the joint optimisation, which then uses every row.

    Examples
    --------
    With the thresholds and the effect held at the optimum, ``theta`` alone comes close to the joint optimum's:

    >>> from mixeval.datasets import toy_scores
    >>> from mixeval.mixed import clmm
    >>> fit = clmm("rating ~ system + (1|rater)", toy_scores(10, ("A", "B"), n_raters=10, response="rating"))
    >>> dev = ClmmDeviance(fit.problem)
    >>> x = optimize_clmm(dev).theta
    >>> round(float(x[0]), 2), round(float(start_theta(dev, x[1:])[0]), 2)
    (0.41, 0.42)
    """
    sub = _start_rows(dev.problem)
    start = dev if sub is None else ClmmDeviance(sub, dev.n_agq)
    re = start.problem.re
    fg = start.fun_and_grad()
    k = start.k

    def theta_only(t: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad = fg(np.concatenate([t, fixed]))
        return value, grad[:k]

    return minimize_deviance(theta_only, quadratic_start(start, fixed), re.lower, max_iter=20, probes=(), even=_even(re),
                             coarse=_START_TOL, refresh=_REFRESH,
                             fd_step=_FORWARD_STEP if start.analytic else 1e-4).theta


def quadratic_deviance(dev: ClmmDeviance, fixed: np.ndarray):
    """The Laplace deviance of the quadratic expansion of the log-likelihood about the fit without random effects,
    as ``theta -> (value, gradient)`` (up to a constant); None where that fit's curvature is not finite.

    Notes
    -----
    With ``r_i = d log P_i / d eta_i`` and ``w_i = -d^2 log P_i / d eta_i^2`` at ``eta = 0`` (the thresholds and
    effects ``fixed``), ``log P(eta) ~ log P(0) + r' eta - eta' W eta / 2`` makes the integrand Gaussian in ``u``:
    with ``A = I + Lambda' Z' W Z Lambda`` and ``c = Lambda' Z' r``,

    ``D(theta) = log|A| - c' A^{-1} c``

    (the ML criterion of the working response ``r / w`` with known variances ``1 / w``: one step of penalised
    quasi-likelihood). For a single random intercept it is ``sum_j log(1 + W_j theta^2) - S_j^2 theta^2 /
    (1 + W_j theta^2)`` with the level sums ``S_j`` of ``r`` and ``W_j`` of ``w``. Its gradient for scalar terms is
    ``dD/d theta_k = 2 (w x_k)' g_k - 2 s_k' (r - W Z Lambda u)`` with ``u = A^{-1} c``, ``s_k = x_k u_k[c_k]`` and
    ``g_k`` as in :meth:`ClmmDeviance.deviance_and_gradient`; other terms difference ``D``. An evaluation is one
    factorisation of ``A`` and no pass over the likelihood's rows.
    """
    problem = dev.problem
    alpha, beta = fixed[:problem.n_alpha], fixed[problem.n_alpha:]
    rows = dev.rows(alpha, dev.fixed_offset(beta), np.zeros(problem.nobs))
    r, w = rows.r, rows.w
    if not (np.all(np.isfinite(r)) and np.all(np.isfinite(w))):
        return None
    zero = np.zeros(0)

    def solved(t: np.ndarray):
        ops = _ops(dev.lin, np.asarray(t, dtype=float), False)
        system = ops.system(w)
        c = ops.zlt(r)
        u, _ = system.solve(c, None)
        return ops, system, u, float(system.ldl2 - c @ u)

    def value_and_gradient(t: np.ndarray) -> tuple[float, np.ndarray]:
        ops, system, u, d = solved(t)
        g = _inverse_diagonal_terms(ops, system)
        z = ops.sums(r - w * ops.eta(u, zero))
        grad = np.array([2.0 * ((w if xk is None else w * xk) @ g[k]) - 2.0 * (u[sl] @ z[sl])
                         for k, (xk, sl) in enumerate(zip(ops.x, ops.slices))])
        return d, grad

    return value_and_gradient if dev.scalar else finite_difference_gradient(lambda t: solved(t)[3])


def quadratic_start(dev: ClmmDeviance, fixed: np.ndarray) -> np.ndarray:
    """``theta`` minimising :func:`quadratic_deviance` from lme4's start (to within :data:`_QUADRATIC_TOL`), standard
    deviations below :data:`_START_FLOOR` raised to it; lme4's start where that criterion is not finite.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import build_design
    >>> from mixeval.mixed._ordinal import get_ordinal, ordered_response
    >>> rng = np.random.default_rng(3)
    >>> df = pd.DataFrame({"rater": np.repeat(np.arange(30), 20)})
    >>> latent = rng.normal(0, 1.0, 30)[df.rater] + rng.logistic(size=600)
    >>> df["rating"] = np.digitize(latent, [-1.5, 0.0, 1.5]) + 1
    >>> resp = ordered_response(df.rating, None)
    >>> design = build_design("rating ~ 1 + (1|rater)", df.assign(rating=resp.codes.astype(float)))
    >>> problem, _ = clmm_problem(design, resp, get_ordinal("logit", "flexible"))
    >>> fixed = optimize_clmm(ClmmDeviance(problem.without_random_effects())).theta
    >>> start = quadratic_start(ClmmDeviance(problem), fixed)
    >>> laplace = optimize_clmm(ClmmDeviance(problem)).theta[0]
    >>> bool(abs(start[0] - laplace) < 0.1 * laplace)
    True
    """
    re = dev.problem.re
    fg = quadratic_deviance(dev, fixed)
    if fg is None:
        return re.theta0
    opt = minimize_deviance(fg, re.theta0, re.lower, max_iter=50, probes=(), coarse=_QUADRATIC_TOL, even=_even(re),
                            fd_step=_FORWARD_STEP if dev.scalar else 1e-4)
    if not np.all(np.isfinite(opt.theta)):
        return re.theta0
    return np.where(re.lower == 0.0, np.maximum(opt.theta, _START_FLOOR), opt.theta)


#: the joint stage forms its Hessian afresh (differences in theta, :meth:`ClmmDeviance.fixed_curvature` for the
#: rest) after a step predicted to gain more than this (deviance units: far from the optimum, where the curvature
#: of the point left behind, updated by BFGS, is a poor model of the next one)
_REFRESH = 10.0

#: the quadratic-expansion start (:func:`quadratic_start`) stops once a Newton step predicts a decrease of its
#: criterion below this (deviance units)
_QUADRATIC_TOL = 0.01

#: standard deviations of the quadratic-expansion start are at least this: the Laplace deviance is stationary at
#: 0, so a start there would hold a component the likelihood puts away from 0 (0.1 is a tenth of lme4's start and
#: small beside the latent residual SD, 1 for probit and 1.8 for logit)
_START_FLOOR = 0.1

#: the joint stage stops once a Newton step predicts a decrease of the deviance below this. The predicted decrease
#: ``g' H^{-1} g / 2`` with ``H = 2 cov^{-1}`` is the squared distance to the optimum in standard errors, so the
#: estimates are then within 1e-5 of their standard errors of it (and the deviance within 1e-10)
_JOINT_TOL = 1e-10

#: the theta-only start stage stops once a Newton step predicts a decrease of the deviance below this: the start
#: is then within about one standard error (the predicted decrease is a squared distance in those units, as for
#: :data:`_JOINT_TOL`) of the optimum over theta alone, and the joint stage, which converges fully, takes over
_START_TOL = 1.0


#: logs with more rows than this take the theta-only start stage on a subsample of about this many rows
_START_ROWS = 50_000


def _start_rows(problem: ClmmProblem) -> ClmmProblem | None:
    """The rows of every ``s``-th level of the factor with the most levels (all of those levels' rows, with every
    other factor), ``s`` chosen for about :data:`_START_ROWS` rows; None for smaller logs."""
    from dataclasses import replace

    terms = problem.re.terms
    if problem.nobs <= 2 * _START_ROWS or not terms:
        return None
    big = max(terms, key=lambda t: t.n_levels)
    step = int(np.ceil(problem.nobs / _START_ROWS))
    rows = np.flatnonzero(big.codes % step == 0)
    if rows.size < _START_ROWS // 4:
        return None
    sub_terms = tuple(replace(t, codes=t.codes[rows], X=t.X[rows],
                              codes2=None if t.codes2 is None else t.codes2[rows],
                              X2=None if t.X2 is None else t.X2[rows]) for t in terms)
    return ClmmProblem(problem.y[rows], problem.U[rows], problem.L[rows], problem.X[rows],
                       ReStructure(terms=sub_terms, nobs=int(rows.size)), problem.family, problem.alpha_names,
                       problem.n_categories, None if problem.offset is None else problem.offset[rows])


def check_clmm_fit(result) -> None:
    """Warn on singular (boundary) fits and non-convergence."""
    if result.singular:
        warnings.warn(
            f"boundary (singular) fit: a variance of {', '.join(repr(g) for g in result.singular_groups)} is "
            "estimated as (numerically) zero. This is a valid estimate, not a failure.",
            SingularFitWarning, stacklevel=caller_stacklevel())
    if not result.converged:
        warnings.warn("the optimiser did not meet its convergence criterion; treat the estimates with care.",
                      ConvergenceWarning, stacklevel=caller_stacklevel())


def covariance_from_hessian(hessian: Callable[[], np.ndarray]) -> np.ndarray | None:
    """``2 H^-1`` symmetrised (the Wald covariance of the parameters from the deviance's Hessian ``H``), or None
    where ``H`` cannot be formed or inverted or the result is not finite."""
    try:
        full = 2.0 * np.linalg.inv(hessian())
    except (np.linalg.LinAlgError, LinAlgError):
        return None
    cov = 0.5 * (full + full.T)
    return cov if np.all(np.isfinite(cov)) else None


def fit_clmm(design: Design, response: OrderedResponse, family: Ordinal, *, n_agq: int = 1,
             nominal: tuple[np.ndarray, tuple[str, ...]] | None = None, data: Any = None, warn: bool = True,
             x0: np.ndarray | None = None, nominal_spec: str | None = None, hessian: bool = True):
    """Fit a CLMM from a validated design and response (the stages after the formula); ``hessian=False`` leaves
    out the Hessian (no standard errors: the parametric bootstrap's refits)."""
    from ._blas import single_threaded_blas
    from ._clmm_result import make_clmm_result

    problem, kept = clmm_problem(design, response, family, nominal)
    terms = problem.re.terms
    if n_agq > 1 and not (len(terms) == 1 and terms[0].n_coef == 1):
        raise InputError(f"nAGQ={n_agq} (adaptive Gauss-Hermite quadrature) needs a single scalar random-effects "
                         "term such as (1|rater); use nAGQ=1 (Laplace) for crossed, nested or vector-valued terms.")
    if warn:
        warn_empty_categories(response, family.threshold)
    with single_threaded_blas():
        dev = ClmmDeviance(problem, n_agq)
        opt = optimize_clmm(dev, x0)
        x = opt.theta
        # the optimiser evaluated x (remembered with its gradient, modes and tangent), which the Hessian and the
        # modes reuse
        deviance = dev.deviance_and_gradient(x)[0] if dev.analytic else dev.deviance(x)
        cov_params = covariance_from_hessian(lambda: dev.hessian(x, forward=True)) if hessian else None
        modes = dev.modes_at(x)

    refitter = partial(_refit, design, response, family, n_agq, nominal, data, nominal_spec)
    result = make_clmm_result(design, response, problem, kept, x, deviance, modes, opt, cov_params, n_agq,
                              nominal_spec, data, refitter)
    if warn:
        check_clmm_fit(result)
    return result


def check_nominal_cells(N: np.ndarray, response: OrderedResponse, data: pd.DataFrame, nominal: str) -> None:
    """Refuse nominal effects for a group that never used an observed category (its own thresholds would cross)."""
    _, group = np.unique(N, axis=0, return_inverse=True)
    group = np.asarray(group).ravel()
    kept = np.flatnonzero(response.observed)
    codes = np.searchsorted(kept, response.codes)
    counts = np.zeros((group.max() + 1, kept.size), dtype=np.int64)
    np.add.at(counts, (group, codes), 1)
    empty = np.argwhere(counts == 0)
    if empty.size:
        g, j = empty[0]
        row = int(np.flatnonzero(group == g)[0])
        spec = nominal.lstrip("~").strip()
        label = data[spec].iloc[row] if spec in data.columns else f"group {g}"
        raise InputError(f"nominal={nominal!r}: {label!r} never used the category {response.levels[kept[j]]!r} "
                         f"({len(empty)} empty group x category cell(s) in all), so its own thresholds are not "
                         "estimable (they would coincide). Merge sparse categories, or test with fewer, larger groups.")


def _refit(design: Design, response: OrderedResponse, family: Ordinal, n_agq: int, nominal, data: Any,
           nominal_spec: str | None, *, new_y: np.ndarray, x0: np.ndarray | None = None, hessian: bool = True):
    """The model fitted again to new category codes (a picklable refitter for the result), from ``x0`` if given."""
    resp = OrderedResponse(np.asarray(new_y, dtype=np.int64), response.levels, response.name)
    return fit_clmm(design, resp, family, n_agq=n_agq, nominal=nominal, data=data, warn=False,
                    nominal_spec=nominal_spec, x0=x0, hessian=hessian)
