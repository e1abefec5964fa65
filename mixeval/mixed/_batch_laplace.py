"""Many Laplace refits of one GLMM design at once: the simulated responses of a parametric bootstrap or a power
simulation, refitted side by side.

A refit of a binomial or Poisson GLMM with random intercepts spends its time in Python overhead (a few small arrays
per PIRLS step), not in arithmetic. Here the responses of a block are the rows of 2-d arrays: PIRLS runs on all of
them together (every sum one ``np.bincount`` over the block, the penalised systems a stack of small Schur
complements over the largest factor, factorised by one batched Cholesky), and the outer optimisation over
``(theta, beta)`` is Newton's method with the Hessian of the Laplace deviance from finite differences at a stencil of
points evaluated in the same batch. Stages: :func:`supports_batch` (which problems), :class:`BatchLaplace`
(:meth:`~BatchLaplace.deviance` at many points, :meth:`~BatchLaplace.refit` of a block of responses).

The deviance of a scalar random-intercept term is even in its theta, so the optimisation runs over an unconstrained
``s`` with ``theta = |s|`` (the boundary ``theta = 0`` is an interior point there).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ._optimize import SINGULAR_TOL
from ._pirls import GlmmProblem

__all__ = ["BatchLaplace", "BatchRefits", "supports_batch"]

#: the stencil's chunk: points x rows of the arrays of one evaluation (a few hundred kilobytes each, so that the
#: elementwise passes of PIRLS stay in cache)
MAX_CELLS = 250_000

#: the outer Newton iterations stop when the step predicts a decrease below this (deviance units)
STOP_DECREASE = 1e-9

#: the relative step of the finite differences (of ``max(|s|, 0.1)`` and ``max(|beta|, 1)``)
FD_STEP = 1e-4

#: PIRLS takes its last step when the largest is below this: Newton's quadratic convergence leaves an error of its
#: square (the deviance to about 1e-12)
PIRLS_STEP = 1e-6


def supports_batch(problem: GlmmProblem, n_agq: int) -> bool:
    """Whether :class:`BatchLaplace` refits ``problem``: the Laplace deviance (``nAGQ = 1``) of a binomial (logit) or
    Poisson (log) model with scalar random intercepts, a dense fixed-effects matrix and no family parameters."""
    fam = problem.family
    canonical = (fam.name, fam.link) in (("binomial", "logit"), ("poisson", "log"))
    terms = problem.re.terms
    return bool(n_agq == 1 and canonical and terms and not sp.issparse(problem.X) and problem.family_par.size == 0
                and all(t.is_intercept and not t.is_multiple_membership for t in terms))


def _onehot(index: np.ndarray, size: int) -> sp.csr_matrix:
    """The ``(size, n)`` indicator matrix of ``index`` (row ``j``: the rows ``i`` with ``index[i] = j``)."""
    return sp.csr_matrix((np.ones(index.size), (index, np.arange(index.size))), shape=(size, index.size))


@dataclass(frozen=True)
class BatchRefits:
    """The optimum of every response of a block (rows: responses).

    Attributes
    ----------
    theta, beta : ndarray
        ``(B, k)`` and ``(B, p)``.
    deviance : ndarray
        ``(B,)`` Laplace deviances (lme4's ``-2 log L``).
    cov_rx : ndarray
        ``(B, p, p)`` lme4's RX-based ``vcov(use.hessian = FALSE)``.
    cov_hessian : ndarray
        ``(B, p, p)`` the fixed effects' block of ``2 H^-1`` (lme4's default ``vcov``), NaN where ``H`` is not
        positive definite.
    converged : ndarray of bool
    """

    theta: np.ndarray
    beta: np.ndarray
    deviance: np.ndarray
    cov_rx: np.ndarray
    cov_hessian: np.ndarray
    converged: np.ndarray

    @property
    def singular(self) -> np.ndarray:
        return np.any(self.theta < SINGULAR_TOL, axis=1)


class _Systems:
    """The penalised systems ``Lambda'Z'WZ Lambda + I`` of ``P`` points, factorised by elimination of the largest
    factor (diagonal ``d0``) and a batched Cholesky of the Schur complement of the others."""

    def __init__(self, d0: np.ndarray, C: np.ndarray, S: np.ndarray):
        self.d0, self.C = d0, C
        self.chol = np.linalg.cholesky(S) if S.shape[1] else S
        diag = np.log(np.diagonal(self.chol, axis1=1, axis2=2)) if S.shape[1] else np.zeros((d0.shape[0], 0))
        self.logdet = np.sum(np.log(d0), axis=1) + 2.0 * np.sum(diag, axis=1)

    def solve(self, g0: np.ndarray, gr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``A^-1 [g0; gr]`` for every point (``g0``: ``(P, L0[, r])``, ``gr``: ``(P, m[, r])``)."""
        vec = g0.ndim == 2
        if vec:
            g0, gr = g0[..., None], gr[..., None]
        t0 = g0 / self.d0[..., None]
        if self.chol.shape[1]:
            rhs = gr - np.matmul(np.swapaxes(self.C, 1, 2), t0)
            z = np.linalg.solve(self.chol, rhs)
            xr = np.linalg.solve(np.swapaxes(self.chol, 1, 2), z)
            x0 = t0 - np.matmul(self.C, xr) / self.d0[..., None]
        else:
            xr, x0 = gr, t0
        return (x0[..., 0], xr[..., 0]) if vec else (x0, xr)


class BatchLaplace:
    """Laplace deviances and refits of one GLMM design for many responses at once (:func:`supports_batch`).

    Parameters
    ----------
    problem : GlmmProblem
        The design (its response is not used: every evaluation brings its own).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval import glmer
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"item": np.repeat(np.arange(40), 4), "system": np.tile(["A", "B"], 80)})
    >>> eta = rng.normal(size=40)[df.item] + 0.5 * (df.system == "B")
    >>> df["correct"] = (rng.random(160) < 1 / (1 + np.exp(-eta))).astype(int)
    >>> fit = glmer("correct ~ system + (1|item)", df)
    >>> batch = BatchLaplace(fit.problem)
    >>> res = batch.refit(fit.problem.y[:, None], np.concatenate([fit.theta, fit.coef]))
    >>> bool(abs(res.deviance[0] - fit.deviance) < 1e-6)
    True
    """

    def __init__(self, problem: GlmmProblem):
        self.problem = problem
        terms = problem.re.terms
        self.k = len(terms)
        self.p = problem.p
        self.codes = [np.asarray(t.codes, dtype=np.intp) for t in terms]
        self.levels = [int(t.n_levels) for t in terms]
        self.b0 = problem.block_term()
        self.rest = [k for k in range(self.k) if k != self.b0]
        self.m = sum(self.levels[k] for k in self.rest)
        L0 = self.levels[self.b0]
        self.onehot = [_onehot(c, L) for c, L in zip(self.codes, self.levels)]
        self.cross0 = {k: _onehot(self.codes[self.b0] * self.levels[k] + self.codes[k], L0 * self.levels[k])
                       for k in self.rest}
        self.cross = {(k, m): _onehot(self.codes[k] * self.levels[m] + self.codes[m], self.levels[k] * self.levels[m])
                      for i, k in enumerate(self.rest) for m in self.rest[i + 1:]}
        offs = np.cumsum([0] + [self.levels[k] for k in self.rest])
        self.where = {k: slice(int(offs[i]), int(offs[i + 1])) for i, k in enumerate(self.rest)}
        self.X = np.asarray(problem.X, dtype=float)
        self.offset = np.asarray(problem.offset, dtype=float)
        self.wt = np.asarray(problem.weights, dtype=float)
        self.unit_wt = bool(np.all(self.wt == 1.0))
        self.has_offset = bool(np.any(self.offset != 0.0))
        self.logit = problem.family.name == "binomial"
        self.n = problem.nobs
        self.L0 = L0

    # ------------------------------------------------------------------ pieces
    @staticmethod
    def _sums(onehot: sp.csr_matrix, values: np.ndarray) -> np.ndarray:
        """``sum values[p, i]`` over rows ``i`` of level ``j`` (``onehot``: :func:`_onehot`), for every point ``p``:
        ``(P, size)``."""
        return np.ascontiguousarray((onehot @ values.T).T)

    def _eta(self, theta: np.ndarray, beta: np.ndarray, u: list[np.ndarray]) -> np.ndarray:
        eta = beta @ self.X.T if self.p else np.zeros((theta.shape[0], self.n))
        if self.has_offset:
            eta += self.offset
        for k in range(self.k):
            eta += (theta[:, k:k + 1] * u[k])[:, self.codes[k]]
        return eta

    def _weights(self, mu: np.ndarray) -> np.ndarray:
        """The working weights ``w mu (1 - mu)`` (logit), ``w mu`` (log)."""
        w = mu * (1.0 - mu) if self.logit else mu.copy()
        if not self.unit_wt:
            w *= self.wt
        return w

    def _mean(self, eta: np.ndarray) -> np.ndarray:
        """``1 / (1 + e^-eta)`` (logit, in place on one array: to a few ulps, 0 where ``e^-eta`` overflows) or
        ``e^eta`` (log)."""
        if not self.logit:
            return np.exp(eta)
        mu = np.negative(eta)
        with np.errstate(over="ignore"):
            np.exp(mu, out=mu)
        mu += 1.0
        return np.divide(1.0, mu, out=mu)

    def _term_sums(self, r: np.ndarray) -> list[np.ndarray]:
        """``Z_k' r`` of every term for every point (the other terms' from their cross-tabulation with the largest
        factor, whose margins they are)."""
        P, out = r.shape[0], [None] * self.k
        for k in self.rest:
            table = self._sums(self.cross0[k], r).reshape(P, self.L0, self.levels[k])
            out[k] = table.sum(axis=1)
            if out[self.b0] is None:
                out[self.b0] = table.sum(axis=2)
        if out[self.b0] is None:
            out[self.b0] = self._sums(self.onehot[self.b0], r)
        return out

    def _system(self, theta: np.ndarray, w: np.ndarray) -> _Systems:
        P, b0 = w.shape[0], self.b0
        C = np.empty((P, self.L0, self.m))
        diag = np.empty((P, self.m))
        s0 = None
        for k in self.rest:
            sk = self.where[k]
            table = self._sums(self.cross0[k], w).reshape(P, self.L0, self.levels[k])
            s0 = table.sum(axis=2) if s0 is None else s0
            diag[:, sk] = 1.0 + theta[:, k:k + 1] ** 2 * table.sum(axis=1)
            np.multiply((theta[:, b0] * theta[:, k])[:, None, None], table, out=C[:, :, sk])
        if s0 is None:
            s0 = self._sums(self.onehot[b0], w)
        d0 = 1.0 + theta[:, b0:b0 + 1] ** 2 * s0
        # the Schur complement: the other terms' block less C' diag(d0)^-1 C
        S = np.matmul(np.swapaxes(C, 1, 2), C / d0[:, :, None])
        np.negative(S, out=S)
        S[:, np.arange(self.m), np.arange(self.m)] += diag
        for (k, m), index in self.cross.items():
            block = (theta[:, k] * theta[:, m])[:, None, None] * self._sums(
                index, w).reshape(P, self.levels[k], self.levels[m])
            S[:, self.where[k], self.where[m]] += block
            S[:, self.where[m], self.where[k]] += np.swapaxes(block, 1, 2)
        return _Systems(d0, C, S)

    def _split(self, u: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        first = u[self.b0]
        rest = np.concatenate([u[k] for k in self.rest], axis=1) if self.rest else \
            np.zeros(first.shape[:1] + (0,) + first.shape[2:])
        return u[self.b0], rest

    def _join(self, x0: np.ndarray, xr: np.ndarray) -> list[np.ndarray]:
        out = [None] * self.k
        out[self.b0] = x0
        for k in self.rest:
            out[k] = xr[:, self.where[k]]
        return out

    def _kernel(self, Y: np.ndarray, eta: np.ndarray, mu: np.ndarray) -> np.ndarray:
        """``-2 log p(y | eta)`` of every point up to a function of ``y`` alone: ``2 sum w (log(1 + e^eta) - y eta)``
        (logit, with ``log(1 + e^eta) = max(eta, 0) - log(max(mu, 1 - mu))`` from the means, exact to rounding
        on both sides of zero), ``2 sum w (mu - y eta)`` (log)."""
        if self.logit:
            t = np.log(np.maximum(mu, 1.0 - mu))
            np.subtract(np.maximum(eta, 0.0), t, out=t)
            t -= Y * eta
            return 2.0 * (t @ self.wt)
        return 2.0 * ((mu - Y * eta) @ self.wt)

    # ------------------------------------------------------------------ PIRLS and the deviance
    def _pirls(self, theta: np.ndarray, beta: np.ndarray, Y: np.ndarray, u: list[np.ndarray], maxit: int = 60):
        """The conditional modes at every point (Newton steps with step halving, as lme4's ``pwrssUpdate``); the
        penalised deviance at the start is evaluated only where a step's acceptance needs it (a point whose first
        step is below :data:`PIRLS_STEP` takes it without a test)."""
        P = theta.shape[0]
        u = [v.copy() for v in u]
        eta = self._eta(theta, beta, u)
        mu = self._mean(eta)
        pw = np.full(P, np.nan)
        active = np.ones(P, dtype=bool)
        for it in range(maxit):
            idx = np.flatnonzero(active)
            if idx.size == 0:
                break
            every = idx.size == P  # the whole block: views, no copies
            th, mu_a, Y_a, beta_a = (theta, mu, Y, beta) if every else (theta[idx], mu[idx], Y[idx], beta[idx])
            w = self._weights(mu_a)
            r = Y_a - mu_a
            if not self.unit_wt:
                r *= self.wt
            system = self._system(th, w)
            g = [th[:, k:k + 1] * z - u[k][idx] for k, z in enumerate(self._term_sums(r))]
            d0, dr = system.solve(*self._split(g))
            du = self._join(d0, dr)
            decrement = sum(np.sum(a * b, axis=1) for a, b in zip(du, g))
            size = np.max(np.abs(np.concatenate(du, axis=1)), axis=1)
            step = np.ones(idx.size)
            small = size < PIRLS_STEP
            if it == 0:
                need = idx[~small]
                pw[need] = self._kernel(Y[need], eta[need], mu[need]) + sum(np.sum(v[need] ** 2, axis=1) for v in u)
            done = small | (decrement < 1e-13 * (1.0 + np.abs(pw[idx])))
            for _ in range(30):
                trial = [u[k][idx] + step[:, None] * du[k] for k in range(self.k)]
                eta_t = self._eta(th, beta_a, trial)
                mu_t = self._mean(eta_t)
                pw_t = self._kernel(Y_a, eta_t, mu_t) + sum(np.sum(v * v, axis=1) for v in trial)
                ok = (pw_t <= pw[idx] + 1e-14 * (1.0 + np.abs(pw[idx]))) | done
                if ok.all():
                    break
                step = np.where(ok, step, 0.5 * step)
            keep = idx[ok]  # no decrease along a direction: at the modes within rounding
            if every and ok.all():
                u, mu, pw = trial, mu_t, pw_t
            else:
                for k in range(self.k):
                    u[k][keep] = trial[k][ok]
                mu[keep], pw[keep] = mu_t[ok], pw_t[ok]
            active[idx[done | ~ok]] = False
        return u, mu, pw

    def deviance(self, x: np.ndarray, Y: np.ndarray, u: list[np.ndarray]):
        """The Laplace deviances ``sum d_i + ||u||^2 + log|L|^2`` (up to :meth:`_constant`) at the points ``x``
        (``(P, k + p)``: ``s`` with ``theta = |s|``, then ``beta``) for the responses ``Y`` (``(P, n)``), PIRLS started at
        ``u``; with the modes, the means and the factorised systems there."""
        theta, beta = np.abs(x[:, :self.k]), x[:, self.k:]
        u, mu, pw = self._pirls(theta, beta, Y, u)
        w = self._weights(mu)
        try:
            system = self._system(theta, w)
            logdet = system.logdet
        except np.linalg.LinAlgError:
            system, logdet = None, np.full(x.shape[0], np.inf)
        return pw + logdet, u, mu, system

    def _mode_derivatives(self, x: np.ndarray, Y: np.ndarray, u: list[np.ndarray], mu: np.ndarray,
                          system: _Systems) -> list[np.ndarray]:
        """``du / d(theta, beta)`` at the modes (per term ``(B, L_k, k + p)``): ``A^-1 dg/dx`` for the score
        ``g = Lambda'Z'r - u``, whose derivatives are ``-Lambda'Z'W X_j`` in ``beta_j`` and ``Z_k'r`` (on term ``k``)
        ``- Lambda'Z'W Z_k u_k`` in ``theta_k``; they predict the modes at nearby points (PIRLS' start there)."""
        theta = np.abs(x[:, :self.k])
        B, d = x.shape
        w = self._weights(mu)
        rhs = [np.zeros((B, L, d)) for L in self.levels]
        for j in range(self.p):
            for t, z in enumerate(self._term_sums(w * self.X[:, j])):
                rhs[t][:, :, self.k + j] = -theta[:, t:t + 1] * z
        zr = self._term_sums(self.wt * (Y - mu))
        for c in range(self.k):
            for t, z in enumerate(self._term_sums(w * u[c][:, self.codes[c]])):
                rhs[t][:, :, c] = -theta[:, t:t + 1] * z
            rhs[c][:, :, c] += zr[c]
        x0, xr = system.solve(*self._split(rhs))
        return self._join(x0, xr)

    @staticmethod
    def _predict(u: list[np.ndarray], J: list[np.ndarray], x: np.ndarray, points: np.ndarray, k: int) -> list[np.ndarray]:
        """Modes at ``points`` (``(B, S, d)``) from those at ``x`` (``(B, d)``): ``u + J (dtheta, dbeta)``, ``theta = |s|``."""
        delta = points - x[:, None, :]
        delta[..., :k] = np.abs(points[..., :k]) - np.abs(x[:, None, :k])
        return [v[:, None, :] + np.einsum("bld,bsd->bsl", j, delta) for v, j in zip(u, J)]

    def _constant(self, Y: np.ndarray) -> np.ndarray:
        """``c(y)``: R's ``aic(y, mu)`` (``-2 log p(y | mu)``) less :meth:`_kernel` of every response (independent of
        ``mu``)."""
        fam = self.problem.family
        eta = np.zeros((1, self.n))
        mu = self._mean(eta)
        return np.array([fam.aic(y, mu[0], self.wt) - float(self._kernel(y[None], eta, mu)[0]) for y in Y])

    def _stencil(self, x: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, list]:
        """Points ``x``, ``x +- h_i e_i`` and ``x + h_i e_i + h_j e_j`` (``i < j``) of every response."""
        d = x.shape[1]
        offsets, pairs = [np.zeros(d)], []
        for i in range(d):
            for sign in (1.0, -1.0):
                e = np.zeros(d)
                e[i] = sign
                offsets.append(e)
        for i in range(d):
            for j in range(i + 1, d):
                e = np.zeros(d)
                e[i] = e[j] = 1.0
                offsets.append(e)
                pairs.append((i, j))
        off = np.array(offsets)  # (S, d)
        pts = x[:, None, :] + off[None, :, :] * h[:, None, :]
        return pts, pairs

    def _derivatives(self, D: np.ndarray, h: np.ndarray, pairs: list) -> tuple[np.ndarray, np.ndarray]:
        """Gradient and Hessian of every response from the deviances at its stencil (``D``: ``(B, S)``)."""
        B, d = h.shape
        f0 = D[:, 0]
        plus, minus = D[:, 1:2 * d + 1:2], D[:, 2:2 * d + 1:2]
        g = (plus - minus) / (2.0 * h)
        H = np.zeros((B, d, d))
        H[:, np.arange(d), np.arange(d)] = (plus - 2.0 * f0[:, None] + minus) / h**2
        for c, (i, j) in enumerate(pairs):
            v = (D[:, 2 * d + 1 + c] - plus[:, i] - plus[:, j] + f0) / (h[:, i] * h[:, j])
            H[:, i, j] = H[:, j, i] = v
        return g, H

    def _evaluate(self, pts: np.ndarray, Y: np.ndarray, starts: list[np.ndarray]) -> np.ndarray:
        """Deviances at ``pts`` (``(B, S, d)``), PIRLS started at ``starts`` (per term ``(B, S, L)``)."""
        B, S, d = pts.shape
        x = pts.reshape(B * S, d)
        Yr = np.repeat(Y, S, axis=0)
        ur = [v.reshape(B * S, -1) for v in starts]
        chunk = max(1, MAX_CELLS // max(self.n + self.L0 * max(self.m, 1), 1))
        D = np.empty(B * S)
        for a in range(0, B * S, chunk):
            sl = slice(a, a + chunk)
            D[sl] = self.deviance(x[sl], Yr[sl], [v[sl] for v in ur])[0]
        return D.reshape(B, S)

    def _centre(self, x: np.ndarray, Y: np.ndarray, u: list[np.ndarray]):
        """Deviance, modes and mode derivatives at the current points (one per response)."""
        D, u, mu, system = self.deviance(x, Y, u)
        if system is None:
            return D, u, [np.zeros(v.shape + (x.shape[1],)) for v in u]
        return D, u, self._mode_derivatives(x, Y, u, mu, system)

    # ------------------------------------------------------------------ refits
    def refit(self, Y: np.ndarray, x0: np.ndarray, *, max_iter: int = 50) -> BatchRefits:
        """The Laplace optimum of every column of ``Y`` (``(n, B)``), each search started at ``x0 = (theta, beta)``
        (a zero theta moved to 0.1, where the deviance is stationary).

        Notes
        -----
        Newton's method over ``(s, beta)``, ``theta = |s|``: at each iterate the deviance at the stencil ``x +- h_i
        e_i``, ``x + h_i e_i + h_j e_j`` gives the gradient (central differences) and the Hessian; the step solves
        ``|H| d = -g`` (absolute eigenvalues), at most a unit move per coordinate, with backtracking until the
        deviance decreases; a search stops when the step predicts a decrease below :data:`STOP_DECREASE`. PIRLS at
        every point starts from the modes predicted by their derivatives at the iterate (:meth:`_mode_derivatives`),
        so it needs a step or two.
        """
        Y = np.ascontiguousarray(np.asarray(Y, dtype=float).T)
        B, k, p = Y.shape[0], self.k, self.p
        d = k + p
        start = np.asarray(x0, dtype=float).copy()
        start[:k] = np.maximum(np.abs(start[:k]), 0.1)
        x = np.tile(start, (B, 1))
        f, u, J = self._centre(x, Y, [np.zeros((B, L)) for L in self.levels])
        H = np.tile(np.eye(d), (B, 1, 1))
        active = np.ones(B, dtype=bool)
        converged = np.zeros(B, dtype=bool)
        for _ in range(max_iter):
            idx = np.flatnonzero(active)
            if idx.size == 0:
                break
            xi = x[idx]
            h = FD_STEP * np.maximum(np.abs(xi), np.r_[np.full(k, 0.1), np.ones(p)])
            pts, pairs = self._stencil(xi, h)
            ui, Ji = [v[idx] for v in u], [j[idx] for j in J]
            others = self._evaluate(pts[:, 1:], Y[idx], [v[:, 1:] for v in self._predict(ui, Ji, xi, pts, k)])
            gi, Hi = self._derivatives(np.column_stack([f[idx], others]), h, pairs)
            H[idx] = Hi
            vals, vecs = np.linalg.eigh(Hi)
            floor = 1e-8 * np.maximum(np.max(np.abs(vals), axis=1, keepdims=True), 1.0)
            step = -np.einsum("bij,bj,bkj,bk->bi", vecs, 1.0 / np.maximum(np.abs(vals), floor), vecs, gi)
            predicted = -0.5 * np.sum(gi * step, axis=1)
            stop = ~(predicted > STOP_DECREASE)
            converged[idx[stop]] = True
            active[idx[stop]] = False
            # the last Newton step predicts a change of the deviance below rounding: taken without a search, it moves
            # the estimates by the error of the iterate (the modes and deviance stay those of the iterate)
            x[idx[stop]] += np.where(np.isfinite(step[stop]), step[stop], 0.0)
            keep = ~stop
            move, step, slope = idx[keep], step[keep], np.sum(gi[keep] * step[keep], axis=1)
            if move.size == 0:
                break
            step = step / np.maximum(np.max(np.abs(step) / np.maximum(1.0, np.abs(x[move])), axis=1), 1.0)[:, None]
            slope = np.sum(gi[keep] * step, axis=1)
            alpha = np.ones(move.size)
            pending = np.ones(move.size, dtype=bool)
            for _ in range(20):
                sel = np.flatnonzero(pending)
                rows = move[sel]
                trial = x[rows] + alpha[sel, None] * step[sel]
                starts = self._predict([v[rows] for v in u], [j[rows] for j in J], x[rows], trial[:, None, :], k)
                Dt, ut, Jt = self._centre(trial, Y[rows], [v[:, 0] for v in starts])
                ok = Dt <= f[rows] + 1e-4 * alpha[sel] * np.minimum(slope[sel], 0.0) + 1e-10
                acc = rows[ok]
                x[acc], f[acc] = trial[ok], Dt[ok]
                for c in range(k):
                    u[c][acc], J[c][acc] = ut[c][ok], Jt[c][ok]
                pending[sel[ok]] = False
                alpha[sel[~ok]] *= 0.5
                if not pending.any():
                    break
            stuck = move[pending]  # no decrease along the step: at the optimum within rounding
            converged[stuck] = True
            active[stuck] = False
        theta, beta = np.abs(x[:, :k]), x[:, k:]
        cov_h = np.full((B, p, p), np.nan)
        for b in range(B):
            try:
                full = 2.0 * np.linalg.inv(H[b])
            except np.linalg.LinAlgError:
                continue
            block = 0.5 * (full + full.T)[k:, k:]
            if np.all(np.isfinite(block)) and np.min(np.linalg.eigvalsh(block)) > 0:
                cov_h[b] = block
        return BatchRefits(theta=theta, beta=beta, deviance=f + self._constant(Y),
                           cov_rx=self._cov_rx(theta, beta, Y, u), cov_hessian=cov_h, converged=converged)

    def _cov_rx(self, theta: np.ndarray, beta: np.ndarray, Y: np.ndarray, u: list[np.ndarray]) -> np.ndarray:
        """``(X'WX - X'WZ Lambda A^-1 Lambda'Z'WX)^-1`` at the modes (lme4's ``unsc()``)."""
        B, p = theta.shape[0], self.p
        if not p:
            return np.zeros((B, 0, 0))
        u, mu, _ = self._pirls(theta, beta, Y, u)
        w = self._weights(mu)
        system = self._system(theta, w)
        wx = w[:, :, None] * self.X[None]  # (B, n, p)
        cols = [theta[:, k, None, None] * np.stack([self._sums(self.onehot[k], wx[:, :, j])
                                                    for j in range(p)], axis=2) for k in range(self.k)]
        z0, zr = self._split(cols)
        s0, sr = system.solve(z0, zr)
        xwx = np.einsum("ni,bn,nj->bij", self.X, w, self.X)
        prec = xwx - np.einsum("bli,blj->bij", z0, s0) - np.einsum("bli,blj->bij", zr, sr)
        try:
            return np.linalg.inv(prec)
        except np.linalg.LinAlgError:
            return np.full((B, p, p), np.nan)
