"""Penalised iteratively reweighted least squares (PIRLS) and the Laplace / adaptive Gauss-Hermite deviance.

lme4's ``pwrssUpdate``, ``glmerLaplace`` and ``glmerAGQ`` on a :class:`~._reterms.ReStructure`. For
spherical random effects ``u`` (``b = Lambda u``) and fixed effects ``beta`` the linear predictor is
``eta = offset + X beta + Z Lambda u``; PIRLS minimises the penalised deviance
``sum d_i(y_i, mu_i) + ||u||^2`` by Newton steps with step halving (Fisher scoring for the canonical
links, where the two agree; the observed information for probit). The penalised system

``A = [Lambda' Z' W Z Lambda + I, Lambda' Z' W X; X' W Z Lambda, X' W X]``

(``W`` the working weights ``w_i mu_eta_i^2 / V(mu_i)``) is solved by block elimination: the random-
effects term with the most levels gives a block-diagonal block (each row meets one level of it), the
other terms and ``X`` a small dense Schur complement. ``log|L|^2`` is ``log`` of the determinant of the
random-effects part of ``A``. For scalar terms every entry of ``A`` is a weighted cross-tabulation
computed by one ``np.bincount`` over index arrays built once (:class:`CountLayout`), and
:func:`laplace_gradient` gives the exact gradient of the Laplace deviance for one adjoint solve.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgError, cho_factor, cho_solve, solve_triangular

from ._family import Family
from ._reterms import ReStructure, theta_to_factors

__all__ = ["GlmmProblem", "PirlsState", "agq_deviance", "gauss_hermite_rule", "joint_system", "laplace_beta_gradient",
           "laplace_deviance", "laplace_gradient", "pirls", "row_patterns", "supports_beta_gradient", "supports_gradient",
           "weights_and_derivatives", "weighted_crossproduct", "level_by_x", "padded_rows", "distinct_rows"]


@dataclass(frozen=True)
class GlmmProblem:
    """Data of a GLMM fit: response, prior weights, fixed-effects matrix and random-effects structure.

    ``X`` is a dense array or a scipy sparse matrix (CSR; e.g. a paired-comparison design with two nonzeros
    per row), whose products are then formed sparsely. A family with its own log-likelihood (not
    :attr:`~.families.Family.exponential`: negative binomial, beta, ...) is evaluated through
    :meth:`~.families.Family.loglik` and :meth:`~.families.Family.eta_derivatives` at parameters ``psi``
    (:attr:`family_par` unless an evaluation gives its own).
    """

    y: np.ndarray = field(repr=False)
    X: np.ndarray = field(repr=False)
    weights: np.ndarray = field(repr=False)
    offset: np.ndarray = field(repr=False)
    re: ReStructure = field(repr=False)
    family: Family
    family_par: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    """The family's parameters (optimiser scale: a dispersion's logarithm, cutpoints) at which evaluations that do
    not estimate them hold them (a fit's problem holds its estimates); empty for binomial and Poisson."""

    @property
    def nobs(self) -> int:
        return int(self.y.shape[0])

    @property
    def p(self) -> int:
        return int(self.X.shape[1])

    def block_term(self) -> int:
        """Index of the term eliminated block-diagonally: the one with the most levels among those with one
        level per row (-1 when there is none: multiple-membership terms are eliminated densely)."""
        sizes = [-1 if t.is_multiple_membership else t.n_levels for t in self.re.terms]
        if not sizes or max(sizes) < 0:
            return -1
        return int(np.argmax(sizes))

    @cached_property
    def unit_weights(self) -> bool:
        """Every prior weight is 1 (0/1 responses): products with the weights are skipped."""
        return bool(np.all(self.weights == 1.0))

    @cached_property
    def binary(self) -> bool:
        """A binomial response of 0/1 values with unit weights (``-2 log p(y | u)`` is then the deviance kernel)."""
        return bool(self.family.name == "binomial" and self.unit_weights and np.all((self.y == 0) | (self.y == 1)))

    @cached_property
    def _success(self) -> np.ndarray:
        return self.y == 1

    @property
    def general(self) -> bool:
        """The family has its own log-likelihood (:meth:`~.families.Family.loglik`), not lme4's deviance kernel."""
        return not self.family.exponential

    def psi(self, psi: np.ndarray | None) -> np.ndarray:
        """``psi``, or the held :attr:`family_par` when None."""
        return self.family_par if psi is None else np.asarray(psi, dtype=float)

    def kernel(self, mu: np.ndarray, eta: np.ndarray | None = None, psi: np.ndarray | None = None) -> float:
        """The sum of the deviance residuals up to a constant in ``y`` (PIRLS' criterion; for a 0/1 response
        ``-2 sum log P(y_i)``, one logarithm per row); ``-2 log p(y | eta)`` for a family with its own
        log-likelihood."""
        if self.general:
            return -2.0 * self.family.loglik(self.y, eta, self.weights, self.psi(psi))
        if self.binary:
            return float(-2 * np.sum(np.log(np.where(self._success, mu, 1 - mu))))
        return self.family.dev_kernel(self.y, mu, self.weights)

    @cached_property
    def has_offset(self) -> bool:
        return bool(np.any(self.offset != 0.0))

    @cached_property
    def x_rows(self) -> tuple[np.ndarray, np.ndarray] | None:
        """A sparse ``X``'s rows as padded arrays (:func:`padded_rows`; ``None`` for a dense ``X``)."""
        return padded_rows(self.X) if sp.issparse(self.X) else None

    @cached_property
    def x_distinct(self) -> tuple | None:
        """The distinct padded rows of a sparse ``X`` (:func:`distinct_rows`), when few."""
        return distinct_rows(self.x_rows) if self.x_rows is not None else None

    @cached_property
    def layout(self) -> CountLayout | None:
        """The weighted-count layout of scalar terms (:func:`count_layout`), built once per problem."""
        return count_layout(self)

    def term_slices(self) -> list[slice]:
        """Positions of every term's random effects in ``u`` (lme4's order)."""
        out, start = [], 0
        for t in self.re.terms:
            out.append(slice(start, start + t.n_levels * t.n_coef))
            start += t.n_levels * t.n_coef
        return out


@dataclass
class PirlsState:
    """Where PIRLS ended: spherical effects, fixed effects, linear predictor, mean and diagnostics.

    ``pwrss`` is the penalised deviance ``sum d_i + ||u||^2`` up to a constant that depends only on ``y``.
    """

    u: np.ndarray
    beta: np.ndarray
    eta: np.ndarray
    mu: np.ndarray
    ldl2: float
    pwrss: float
    iterations: int
    converged: bool
    system: _System
    psi: np.ndarray | None = None
    """The family's parameters of the evaluation (None: the problem's :attr:`GlmmProblem.family_par`)."""


class _System:
    """The factorised penalised system at given weights (block-diagonal part + dense Schur complement).

    ``blocks`` (``L x p_b x p_b``) is the block term's part of ``A`` (identity added), ``c`` (``q_b x m``) its
    coupling to the dense columns and ``d`` (``m x m``) the dense columns' part (identity added on the
    random-effects columns).
    """

    def __init__(self, problem: GlmmProblem, joint: bool, blocks: np.ndarray, c: np.ndarray, d: np.ndarray):
        self.problem = problem
        self.b = problem.block_term()
        self.slices = problem.term_slices()
        self.joint = joint
        self.m = d.shape[0]
        self.q_rest = self.m - (problem.p if joint else 0)
        self.n_lev, self.p_b = (blocks.shape[0], blocks.shape[1]) if self.b >= 0 else (0, 0)
        if self.b >= 0:
            if self.p_b == 1:
                diag = blocks[:, 0, 0]
                if np.any(diag <= 0) or not np.all(np.isfinite(diag)):
                    raise LinAlgError("penalised system not positive definite")
                self.block_chol = np.sqrt(blocks)
            else:
                self.block_chol = np.linalg.cholesky(blocks)  # L x pb x pb, lower
            self.logdet_block = float(2 * np.sum(np.log(np.diagonal(self.block_chol, axis1=1, axis2=2))))
        else:
            self.block_chol = np.zeros((0, 0, 0))
            self.logdet_block = 0.0
        self.c = c
        if self.m:
            if self.b >= 0:
                d = d - c.T @ self._block_solve(c)
            self.schur = cho_factor(d, lower=True, check_finite=False)
            diag = np.diag(self.schur[0])
            if np.any(diag <= 0) or not np.all(np.isfinite(diag)):
                raise LinAlgError("penalised system not positive definite")
            self.logdet_rest = float(2 * np.sum(np.log(diag[: self.q_rest])))
        else:
            self.schur = None
            self.logdet_rest = 0.0

    @property
    def ldl2(self) -> float:
        """``log|L|^2``: log-determinant of the random-effects part of the penalised system."""
        return self.logdet_block + self.logdet_rest

    @property
    def logdet_beta(self) -> float:
        """``log|R_X|^2``: log-determinant of the fixed effects' Schur complement ``X'WX - X'WZ Lambda A^-1
        Lambda'Z'WX`` (joint systems; 0 without fixed effects)."""
        if not (self.joint and self.problem.p):
            return 0.0
        return float(2 * np.sum(np.log(np.diag(self.schur[0])[self.q_rest:])))

    def _block_solve(self, rhs: np.ndarray) -> np.ndarray:
        """``B^{-1} rhs`` for the block-diagonal part (rhs: q_b x k)."""
        L, pb = self.n_lev, self.p_b
        r = rhs.reshape(L, pb, -1)
        if pb == 1:
            return (r / (self.block_chol**2)).reshape(rhs.shape)
        from numpy.linalg import solve

        full = self.block_chol @ np.swapaxes(self.block_chol, 1, 2)
        return solve(full, r).reshape(rhs.shape)

    def solve(self, rhs_u: np.ndarray, rhs_beta: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
        """Solve ``A x = rhs`` (rhs and x in lme4's ``u`` order, then ``beta`` when joint)."""
        p = self.problem
        sl = self.slices
        b = self.b
        if b >= 0:
            r_b = rhs_u[sl[b]]
            r_rest = np.concatenate([rhs_u[sl[k]] for k in range(len(sl)) if k != b]) if self.q_rest else np.zeros(0)
        else:
            r_b, r_rest = np.zeros(0), rhs_u
        r_m = np.concatenate([r_rest, rhs_beta]) if self.joint and p.p else r_rest
        if b >= 0:
            binv_rb = self._block_solve(r_b[:, None])[:, 0]
            if self.m:
                x_m = cho_solve(self.schur, r_m - self.c.T @ binv_rb, check_finite=False)
                x_b = self._block_solve((r_b - self.c @ x_m)[:, None])[:, 0]
            else:
                x_m, x_b = np.zeros(0), binv_rb
        else:
            x_m = cho_solve(self.schur, r_m, check_finite=False) if self.m else np.zeros(0)
            x_b = np.zeros(0)
        x_u = np.empty_like(rhs_u)
        start = 0
        for k, s in enumerate(sl):
            if k == b:
                x_u[s] = x_b
            else:
                n = s.stop - s.start
                x_u[s] = x_m[start:start + n]
                start += n
        x_beta = x_m[self.q_rest:] if self.joint and p.p else None
        return x_u, x_beta

    def beta_precision_unscaled(self) -> np.ndarray:
        """``R_X' R_X = X' W X - X' W Z Lambda A_u^{-1} Lambda' Z' W X``: the inverse of
        :meth:`beta_covariance_unscaled`."""
        p = self.problem.p
        if not (self.joint and p):
            raise ValueError("needs the joint system")  # internal: callers use it only on the joint system
        lbb = np.tril(self.schur[0][self.q_rest:, self.q_rest:])
        return lbb @ lbb.T

    def beta_covariance_unscaled(self) -> np.ndarray:
        """``(X' W X - X' W Z Lambda A_u^{-1} Lambda' Z' W X)^{-1}``: lme4's ``unsc()`` (RX-based vcov)."""
        p = self.problem.p
        if not (self.joint and p):
            raise ValueError("needs the joint system")  # internal: callers use it only on the joint system
        lower = self.schur[0]
        lbb = np.tril(lower[self.q_rest:, self.q_rest:])
        inv = np.linalg.inv(lbb)
        return inv.T @ inv


def problem_theta_slice(problem: GlmmProblem, theta: np.ndarray, k: int) -> np.ndarray:
    """The entries of ``theta`` belonging to term ``k``."""
    start = sum(t.n_theta for t in problem.re.terms[:k])
    return np.asarray(theta, dtype=float)[start:start + problem.re.terms[k].n_theta]


def dense_part(problem: GlmmProblem, zl: list[sp.csr_matrix], joint: bool):
    """The columns eliminated densely: ``Z Lambda`` of every term but the block term, then ``X`` when joint.

    A dense array when it is small (``n m <= 4e6``), else a sparse matrix.
    """
    b = problem.block_term()
    rest = [zl[k] for k in range(len(zl)) if k != b]
    m = sum(z.shape[1] for z in rest) + (problem.p if joint else 0)
    if problem.nobs * m <= 4_000_000 and not sp.issparse(problem.X):
        cols = [z.toarray() for z in rest] + ([problem.X] if joint and problem.p else [])
        return np.hstack(cols) if cols else np.zeros((problem.nobs, 0))
    cols = rest + ([sp.csr_matrix(problem.X)] if joint and problem.p else [])
    return sp.hstack(cols, format="csc")


def zl_blocks(problem: GlmmProblem, theta: np.ndarray) -> list[sp.csr_matrix]:
    """``Z Lambda`` per term, each ``n x (n_levels p_k)`` sparse (rows: observations)."""
    out = []
    n = problem.nobs
    rows = np.arange(n)
    for term, lam in zip(problem.re.terms, theta_to_factors(problem.re.terms, theta)):
        p = term.n_coef
        v = term.X @ lam  # n x p: row i's coefficients x_i' Lambda_k
        cols = (term.codes[:, None] * p + np.arange(p)[None, :]).ravel()
        zl = sp.csr_matrix((v.ravel(), (np.repeat(rows, p), cols)), shape=(n, term.n_levels * p))
        if term.is_multiple_membership:
            cols2 = (term.codes2[:, None] * p + np.arange(p)[None, :]).ravel()
            zl = zl + sp.csr_matrix(((term.X2 @ lam).ravel(), (np.repeat(rows, p), cols2)),
                                    shape=(n, term.n_levels * p))
        out.append(zl)
    return out


class _SparseOps:
    """``Z Lambda`` products and the penalised system for any terms (sparse ``Z Lambda`` per term)."""

    def __init__(self, problem: GlmmProblem, theta: np.ndarray, joint: bool):
        self.problem, self.theta, self.joint = problem, theta, joint
        self.zl = zl_blocks(problem, theta)
        self.slices = problem.term_slices()
        b = problem.block_term()
        self.b = b
        self.dm = dense_part(problem, self.zl, joint)
        if b >= 0:
            term = problem.re.terms[b]
            self.v_b = term.X @ theta_to_factors((term,), problem_theta_slice(problem, theta, b))[0]
            self.zbt = self.zl[b].T.tocsr()

    def eta(self, u: np.ndarray, beta: np.ndarray) -> np.ndarray:
        p = self.problem
        eta = p.offset + (p.X @ beta if p.p else 0.0)
        for z, s in zip(self.zl, self.slices):
            eta = eta + z @ u[s]
        return eta

    def zlt(self, r: np.ndarray) -> np.ndarray:
        return np.concatenate([np.asarray(z.T @ r) for z in self.zl]) if self.zl else np.zeros(0)

    def system(self, w: np.ndarray) -> _System:
        p, b = self.problem, self.b
        if b >= 0:
            term = p.re.terms[b]
            pb, L, v = term.n_coef, term.n_levels, self.v_b
            blocks = np.empty((L, pb, pb))
            for a in range(pb):
                for c2 in range(a, pb):
                    s_ac = np.bincount(term.codes, weights=w * v[:, a] * v[:, c2], minlength=L)
                    blocks[:, a, c2] = s_ac
                    blocks[:, c2, a] = s_ac
            blocks += np.eye(pb)[None, :, :]
        else:
            blocks = np.zeros((0, 0, 0))
        dm = self.dm
        m = dm.shape[1]
        if m:
            if sp.issparse(dm):
                wd = dm.multiply(w[:, None]).tocsc()
                d = (dm.T @ wd).toarray()
            else:
                wd = dm * w[:, None]
                d = dm.T @ wd
            q_rest = m - (p.p if self.joint else 0)
            d[np.arange(q_rest), np.arange(q_rest)] += 1.0
            if b >= 0:
                c = self.zbt @ wd
                c = c.toarray() if sp.issparse(c) else np.asarray(c)
            else:
                c = np.zeros((0, m))
        else:
            d = np.zeros((0, 0))
            c = np.zeros((blocks.shape[0] * max(blocks.shape[1], 0), 0))
        return _System(p, self.joint, blocks, c, d)


#: a sparse X whose rows have at most this many nonzeros is kept as padded (column, value) arrays
MAX_ROW_NNZ = 8


def padded_rows(X) -> tuple[np.ndarray, np.ndarray] | None:
    """A sparse ``X`` as ``(columns, values)``, each ``n x k`` (``k`` the most nonzeros of a row; short rows
    padded with value 0), or ``None`` when a row has more than :data:`MAX_ROW_NNZ` nonzeros.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> cols, vals = padded_rows(sp.csr_matrix([[1.0, -1.0, 0.0], [0.0, 0.0, 2.0]]))
    >>> cols.tolist(), vals.tolist()
    ([[0, 1], [2, 0]], [[1.0, -1.0], [2.0, 0.0]])
    """
    X = sp.csr_matrix(X)
    counts = np.diff(X.indptr)
    k = int(counts.max(initial=0))
    if k > MAX_ROW_NNZ:
        return None
    n = X.shape[0]
    cols, vals = np.zeros((n, max(k, 1)), dtype=np.intp), np.zeros((n, max(k, 1)))
    rows = np.repeat(np.arange(n), counts)
    slot = np.arange(X.nnz) - np.repeat(X.indptr[:-1], counts)
    cols[rows, slot], vals[rows, slot] = X.indices, X.data
    return cols, vals


def weighted_crossproduct(X, w: np.ndarray, rows: tuple[np.ndarray, np.ndarray] | None = None,
                          distinct: tuple | None = None) -> np.ndarray:
    """``X' diag(w) X`` (dense ``p x p``) for a dense or sparse ``X``. With the padded rows of a sparse ``X``
    (:func:`padded_rows`), ``k^2`` weighted counts over the pairs of each row's nonzeros: for a paired-comparison
    design (rows ``e_a - e_b``) the weighted Laplacian of the pairs, in ``O(n)``; with ``distinct``
    (:func:`distinct_rows`) the weights are first summed per distinct row (one count over the rows)."""
    if not sp.issparse(X):
        return X.T @ (X * w[:, None])
    if rows is None:
        return np.asarray((X.T @ sp.diags(w) @ X).toarray())
    cols, vals = rows
    p = X.shape[1]
    # few distinct rows (a paired-comparison design has one per ordered pair): weights summed per distinct row first
    if distinct is not None:
        index, (cols, vals) = distinct
        w = np.bincount(index, weights=w, minlength=cols.shape[0])
    out = np.zeros(p * p)
    for a in range(cols.shape[1]):
        wa = w * vals[:, a]
        for b in range(cols.shape[1]):
            out += np.bincount(cols[:, a] * p + cols[:, b], weights=wa * vals[:, b], minlength=p * p)
    return out.reshape(p, p)



def distinct_rows(rows: tuple[np.ndarray, np.ndarray]) -> tuple | None:
    """Each padded row's index among the distinct rows and those rows (padded), or ``None`` when they are more
    than a quarter of the rows (then summing by distinct row does not pay)."""
    cols, vals = rows
    k = cols.shape[1]
    # one sort of a projection of the rows (checked exactly), as row_patterns does
    proj = cols @ (1.0 + np.sqrt(np.arange(2, k + 2)) / 7.0) + vals @ (np.pi + np.sqrt(np.arange(3, k + 3)))
    _, first, index = np.unique(proj, return_index=True, return_inverse=True)
    index = np.asarray(index).ravel()
    if first.size * 4 > cols.shape[0]:
        return None
    if not (np.array_equal(cols[first][index], cols) and np.array_equal(vals[first][index], vals)):
        uniq, index = np.unique(np.column_stack([cols.astype(float), vals]), axis=0, return_inverse=True)
        if uniq.shape[0] * 4 > cols.shape[0]:
            return None
        return np.asarray(index).ravel(), (uniq[:, :k].astype(np.intp), uniq[:, k:])
    return index, (cols[first], vals[first])


def level_by_x(codes: np.ndarray, n_levels: int, wv: np.ndarray, X,
               rows: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """``sum_i wv_i x_i'`` per level (``n_levels x p``) for a sparse ``X``: one weighted count over the padded
    rows (:func:`padded_rows`), else one sparse product."""
    n, p = codes.size, X.shape[1]
    if rows is None:
        indicator = sp.csr_matrix((wv, (codes, np.arange(n))), shape=(n_levels, n))
        return np.asarray((indicator @ X).toarray())
    cols, vals = rows
    return np.bincount((codes[:, None] * p + cols).ravel(), weights=(wv[:, None] * vals).ravel(),
                       minlength=n_levels * p).reshape(n_levels, p)


#: the cross-tabulations of the largest factor with the others (entries) above which the sparse operators are used
MAX_CROSS_CELLS = 4_000_000


@dataclass(frozen=True)
class CountLayout:
    """Index arrays, built once per problem, that turn every sum of :class:`_ScalarOps` into one ``np.bincount``.

    ``patterns`` indexes each row's distinct row of ``X`` (``x_patterns``: P x p) when there are few of them
    (categorical fixed effects), else is ``None``; ``by_pattern[k]`` is ``codes_k * P + patterns``; ``pairs[(k, l)]``
    is ``codes_k * L_l + codes_l`` for the cross-tabulations the penalised system needs; ``ones[k]`` says
    term ``k`` is a random intercept (``x_k = 1``, so its weights need no product). ``parent`` is, for two terms
    whose block term (the larger) is nested in the other (every level of it occurs with one level of the other,
    as ``(1|RESP:PROD)`` in ``(1|RESP)``), the other term's level of each block level, else ``None``.
    """

    patterns: np.ndarray | None = field(repr=False)
    x_patterns: np.ndarray = field(repr=False)
    by_pattern: tuple[np.ndarray, ...] = field(repr=False)
    pairs: dict = field(repr=False)
    ones: tuple[bool, ...]
    parent: np.ndarray | None = field(default=None, repr=False)


def row_patterns(X: np.ndarray, max_patterns: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Index of each row's distinct row of ``X`` and those rows, or ``None`` beyond ``max_patterns`` of them.

    Rows are told apart by their projection on a fixed direction (one sort of ``n`` numbers), the result
    checked exactly; on a collision of projections, by ``np.unique`` over the rows.
    """
    n, p = X.shape
    if p == 0:
        return np.zeros(n, dtype=np.intp), np.zeros((1, 0))
    proj = X @ (1.0 + np.sqrt(np.arange(2, p + 2)) / 7.0)
    values, first, index = np.unique(proj, return_index=True, return_inverse=True)
    if len(values) > max_patterns:  # distinct rows are at least as many as distinct projections
        return None
    x_patterns = X[first]
    index = index.astype(np.intp).ravel()
    if not np.array_equal(x_patterns[index], X):
        x_patterns, index = np.unique(X, axis=0, return_inverse=True)
        if len(x_patterns) > max_patterns:
            return None
        index = index.astype(np.intp).ravel()
    return index, x_patterns


def count_layout(problem: GlmmProblem) -> CountLayout | None:
    """The :class:`CountLayout` of a problem whose random-effects terms are all scalar, else ``None``."""
    terms = problem.re.terms
    if not terms or any(t.n_coef != 1 or t.is_multiple_membership for t in terms):
        return None
    b = problem.block_term()
    levels = [t.n_levels for t in terms]
    if sum(levels[b] * levels[k] for k in range(len(terms)) if k != b) > MAX_CROSS_CELLS:
        return None
    n = problem.nobs
    # pattern sums pay when the pattern cross-tabulations are smaller than the rows (a sparse X: products by it)
    found = None if sp.issparse(problem.X) else row_patterns(
        problem.X, max(1, min(n // max(levels), MAX_CROSS_CELLS // max(levels))))
    if found is None:
        patterns, x_patterns, by_pattern = None, np.zeros((0, problem.p)), ()
    else:
        patterns, x_patterns = found
        n_pat = x_patterns.shape[0]
        by_pattern = tuple(t.codes.astype(np.intp) * n_pat + patterns for t in terms)
    rest = [k for k in range(len(terms)) if k != b]
    pairs = {}
    for a, k in enumerate(rest):
        pairs[(b, k)] = terms[b].codes.astype(np.intp) * levels[k] + terms[k].codes
        for k2 in rest[a + 1:]:
            pairs[(k, k2)] = terms[k].codes.astype(np.intp) * levels[k2] + terms[k2].codes
    ones = tuple(bool(np.all(t.X[:, 0] == 1.0)) for t in terms)
    parent = nesting(terms[b].codes, levels[b], terms[rest[0]].codes) if len(rest) == 1 else None
    return CountLayout(patterns, x_patterns, by_pattern, pairs, ones, parent)


def nesting(inner: np.ndarray, n_inner: int, outer: np.ndarray) -> np.ndarray | None:
    """The level of ``outer`` of each level of ``inner`` when every level of ``inner`` occurs (with one level of
    ``outer`` only: ``inner`` is nested in ``outer``), else ``None``.

    Examples
    --------
    >>> nesting(np.array([0, 1, 2, 1]), 3, np.array([0, 0, 1, 0])).tolist()
    [0, 0, 1]
    >>> nesting(np.array([0, 1, 1]), 2, np.array([0, 0, 1])) is None
    True
    """
    parent = np.zeros(n_inner, dtype=np.intp)
    parent[inner] = outer
    if np.bincount(inner, minlength=n_inner).min(initial=1) == 0 or not np.array_equal(parent[inner], outer):
        return None
    return parent


class _ScalarOps:
    """The same for scalar terms only (``(1|g)``, ``(0 + x|g)``): weighted counts by ``np.bincount``, no sparse matrices.

    With ``v_k = theta_k x_k`` the entries of ``Lambda' Z' W Z Lambda`` are weighted cross-tabulations of the
    level codes, ``sum_i w_i v_ki v_li [codes_k(i) = a, codes_l(i) = c]``, each one ``np.bincount`` over the
    index arrays of the problem's :class:`CountLayout`. With few distinct rows of ``X`` (P patterns) the
    products with ``X`` come from the cross-tabulation of each factor with the patterns
    (``Lambda_k' Z_k' W X = theta_k N_k X_P``, ``N_k`` levels x P) and ``X beta`` from ``X_P beta``.
    ``v[k]`` is ``theta_k`` itself for a random intercept.
    """

    def __init__(self, problem: GlmmProblem, theta: np.ndarray, joint: bool):
        self.problem, self.joint = problem, joint
        self.layout = layout = problem.layout
        terms = problem.re.terms
        self.codes = [t.codes for t in terms]
        self.levels = [t.n_levels for t in terms]
        self.theta = [float(th) for th in theta]
        self.x = [None if one else t.X[:, 0] for t, one in zip(terms, layout.ones)]
        self.v = [th if x is None else x * th for th, x in zip(self.theta, self.x)]
        self.slices = problem.term_slices()
        self.b = problem.block_term()
        self.rest = [k for k in range(len(terms)) if k != self.b]
        # two random intercepts (the block term and the first other) are handled together through their
        # cross-tabulation: one gather for Z Lambda u and one bincount for Lambda' Z' r instead of two each
        first = self.rest[0] if self.rest else None
        self.pair = (self.b, first) if first is not None and self.x[self.b] is None and self.x[first] is None else None
        # a block term nested in the other: the other's sums are the block's summed by parent (no cross-tabulation)
        self.nested = layout.parent is not None and self.pair is not None
        if layout.parent is not None:
            self.pair = None

    def eta(self, u: np.ndarray, beta: np.ndarray) -> np.ndarray:
        p, lay = self.problem, self.layout
        if not p.p:
            eta = p.offset.copy()
        else:
            eta = np.take(lay.x_patterns @ beta, lay.patterns) if lay.patterns is not None else p.X @ beta
            if p.has_offset:
                eta += p.offset
        for k, (codes, th, x, s) in enumerate(zip(self.codes, self.theta, self.x, self.slices)):
            if self.pair and k in self.pair:
                if k == self.pair[0]:
                    b, k0 = self.pair
                    table = (th * u[s])[:, None] + (self.theta[k0] * u[self.slices[k0]])[None, :]
                    eta += np.take(table.ravel(), lay.pairs[self.pair])
                continue
            eta += np.take(th * u[s], codes) if x is None else x * np.take(th * u[s], codes)
        return eta

    def xt(self, r: np.ndarray) -> np.ndarray:
        """``X' r`` (through the patterns of ``X`` when there are few)."""
        lay = self.layout
        if lay.patterns is None:
            return self.problem.X.T @ r
        return lay.x_patterns.T @ np.bincount(lay.patterns, weights=r, minlength=lay.x_patterns.shape[0])

    def _weighted(self, k: int, w: np.ndarray, power: int = 1) -> np.ndarray:
        """``w x_k^power`` (``w`` itself for a random intercept)."""
        x = self.x[k]
        return w if x is None else w * x**power

    def sums(self, r: np.ndarray) -> np.ndarray:
        """``Z' r``: ``sum x_ki r_i`` per level of every term (``Lambda' Z' r`` without the thetas)."""
        out = {}
        if self.nested:
            b, k = self.b, self.rest[0]
            out[b] = np.bincount(self.codes[b], weights=r, minlength=self.levels[b])
            out[k] = np.bincount(self.layout.parent, weights=out[b], minlength=self.levels[k])
        elif self.pair:
            b, k0 = self.pair
            table = np.bincount(self.layout.pairs[self.pair], weights=r,
                                minlength=self.levels[b] * self.levels[k0]).reshape(self.levels[b], self.levels[k0])
            out[b], out[k0] = table.sum(axis=1), table.sum(axis=0)
        return np.concatenate([out[k] if k in out else np.bincount(c, weights=self._weighted(k, r), minlength=L)
                               for k, (c, L) in enumerate(zip(self.codes, self.levels))])

    def zlt(self, r: np.ndarray) -> np.ndarray:
        return self.sums(r) * np.repeat(self.theta, self.levels)

    def _raw_cross(self, k: int, m: int, w: np.ndarray) -> np.ndarray:
        """``sum w x_k x_l`` per pair of levels of terms ``k`` and ``m`` (``L_k x L_l``, without the thetas)."""
        Lk, Lm = self.levels[k], self.levels[m]
        wkl = self._weighted(k, w) if self.x[m] is None else self._weighted(k, w) * self.x[m]
        return np.bincount(self.layout.pairs[(k, m)], weights=wkl, minlength=Lk * Lm).reshape(Lk, Lm)

    def _table(self, k: int, w: np.ndarray) -> np.ndarray:
        """The level x pattern table of ``w x_k`` (``L_k x P``)."""
        lay, L = self.layout, self.levels[k]
        n_pat = lay.x_patterns.shape[0]
        return np.bincount(lay.by_pattern[k], weights=self._weighted(k, w), minlength=L * n_pat).reshape(L, n_pat)

    def _by_level(self, k: int, w: np.ndarray, table: np.ndarray | None) -> np.ndarray:
        """``Lambda_k' Z_k' W X``: levels x p."""
        if table is not None:
            return self.theta[k] * (table @ self.layout.x_patterns)
        X = self.problem.X
        wv = self._weighted(k, w) * self.theta[k]
        if sp.issparse(X):
            return level_by_x(self.codes[k], self.levels[k], wv, X, self.problem.x_rows)
        return np.column_stack([np.bincount(self.codes[k], weights=wv * X[:, j], minlength=self.levels[k])
                                for j in range(X.shape[1])]) if X.shape[1] else np.zeros((self.levels[k], 0))

    def _xwx(self, w: np.ndarray, b_table: np.ndarray | None) -> np.ndarray:
        lay, X = self.layout, self.problem.X
        if lay.patterns is None:
            return weighted_crossproduct(X, w, self.problem.x_rows, self.problem.x_distinct)
        n_pat = lay.x_patterns.shape[0]
        counts = b_table.sum(axis=0) if self.x[self.b] is None else np.bincount(lay.patterns, weights=w, minlength=n_pat)
        return lay.x_patterns.T @ (lay.x_patterns * counts[:, None])

    def system(self, w: np.ndarray) -> _System:
        """The penalised system at weights ``w``: one ``np.bincount`` per cross-tabulation of the largest factor
        with another (and of the other factors among themselves), plus, with ``X`` (joint), one per factor
        with the patterns of ``X``; the diagonal sums are margins of those tables where every term involved
        is a random intercept."""
        p, b, rest, th = self.problem, self.b, self.rest, self.theta
        with_x = bool(self.joint and p.p)
        if self.layout.parent is not None and not with_x:
            return self._nested_system(w)
        tables = {k: self._table(k, w) for k in [b, *rest]} if with_x and self.layout.patterns is not None else {}
        cross = {k: self._raw_cross(b, k, w) for k in rest}
        intercept_pair = [k for k in rest if self.x[k] is None] if self.x[b] is None else []

        def level_sums(k: int) -> np.ndarray:  # sum w x_k^2 per level of term k
            if self.x[k] is None and k in tables:
                return tables[k].sum(axis=1)
            if k == b and intercept_pair:
                return cross[intercept_pair[0]].sum(axis=1)
            if k != b and k in intercept_pair:
                return cross[k].sum(axis=0)
            return np.bincount(self.codes[k], weights=self._weighted(k, w, 2), minlength=self.levels[k])

        blocks = (th[b] ** 2 * level_sums(b) + 1.0)[:, None, None]
        sizes = [self.levels[k] for k in rest]
        q_rest = sum(sizes)
        m = q_rest + (p.p if with_x else 0)
        d = np.zeros((m, m))
        c = np.zeros((self.levels[b], m))
        offs = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        for a, k in enumerate(rest):
            sa = slice(offs[a], offs[a + 1])
            d[sa, sa] = np.diag(th[k] ** 2 * level_sums(k) + 1.0)
            for a2 in range(a + 1, len(rest)):
                sb = slice(offs[a2], offs[a2 + 1])
                x = (th[k] * th[rest[a2]]) * self._raw_cross(k, rest[a2], w)
                d[sa, sb] = x
                d[sb, sa] = x.T
            c[:, sa] = (th[b] * th[k]) * cross[k]
            if with_x:
                zx = self._by_level(k, w, tables.get(k))
                d[sa, q_rest:] = zx
                d[q_rest:, sa] = zx.T
        if with_x:
            d[q_rest:, q_rest:] = self._xwx(w, tables.get(b))
            c[:, q_rest:] = self._by_level(b, w, tables.get(b))
        return _System(p, self.joint, blocks, c, d)

    def _nested_system(self, w: np.ndarray) -> _NestedSystem:
        """The penalised system of a block term nested in the only other term (``layout.parent``): the
        coupling has one entry per block level, ``c_i = theta_b theta_k sum w x_b x_k`` over the rows of level
        ``i``, and the diagonal sums of the outer term are those of the block levels summed by parent where both
        are random intercepts."""
        b, k, th, parent = self.b, self.rest[0], self.theta, self.layout.parent
        cb, Lb, Lk = self.codes[b], self.levels[b], self.levels[k]
        s_b = np.bincount(cb, weights=self._weighted(b, w, 2), minlength=Lb)
        both = self.x[b] is None and self.x[k] is None
        cross = s_b if both else np.bincount(cb, weights=self._weighted(b, w) * (1.0 if self.x[k] is None else self.x[k]),
                                             minlength=Lb)
        s_k = np.bincount(parent, weights=s_b, minlength=Lk) if both else np.bincount(
            self.codes[k], weights=self._weighted(k, w, 2), minlength=Lk)
        return _NestedSystem(self.problem, th[b] ** 2 * s_b + 1.0, (th[b] * th[k]) * cross, th[k] ** 2 * s_k + 1.0,
                             parent, b, self.slices)


class _NestedSystem(_System):
    """:class:`_System` of a scalar block term nested in the only other scalar term (no fixed effects in it).

    With one coupling entry ``c_i`` per block level (at its parent ``j = parent(i)``) the Schur complement
    ``D - C' B^{-1} C`` is diagonal: ``S_j = D_j - sum_{parent(i) = j} c_i^2 / B_i``; a solve is
    ``x_j = (r_j - sum_{parent(i) = j} c_i r_i / B_i) / S_j``, ``x_i = (r_i - c_i x_{parent(i)}) / B_i``.
    """

    def __init__(self, problem: GlmmProblem, blocks: np.ndarray, c: np.ndarray, d: np.ndarray, parent: np.ndarray,
                 b: int, slices: list[slice]):
        self.problem = problem
        self.b = b
        self.k = 1 - b
        self.slices = slices
        self.joint = False
        self.m = self.q_rest = d.size
        self.n_lev, self.p_b = blocks.size, 1
        self.parent = parent
        if np.any(blocks <= 0) or not np.all(np.isfinite(blocks)):
            raise LinAlgError("penalised system not positive definite")
        self.block_chol = np.sqrt(blocks)[:, None, None]
        self.logdet_block = float(np.sum(np.log(blocks)))
        self.b_diag, self.c = blocks, c
        self.c_over_b = c / blocks
        self.s_diag = d - np.bincount(parent, weights=c * self.c_over_b, minlength=d.size)
        if np.any(self.s_diag <= 0) or not np.all(np.isfinite(self.s_diag)):
            raise LinAlgError("penalised system not positive definite")
        self.schur = None
        self.logdet_rest = float(np.sum(np.log(self.s_diag)))

    def solve(self, rhs_u: np.ndarray, rhs_beta: np.ndarray | None) -> tuple[np.ndarray, None]:
        sb, sk = self.slices[self.b], self.slices[self.k]
        r_b = rhs_u[sb]
        x_k = (rhs_u[sk] - np.bincount(self.parent, weights=self.c_over_b * r_b, minlength=self.m)) / self.s_diag
        x_u = np.empty_like(rhs_u)
        x_u[sk] = x_k
        x_u[sb] = (r_b - self.c * x_k[self.parent]) / self.b_diag
        return x_u, None


def _ops(problem: GlmmProblem, theta: np.ndarray, joint: bool):
    """The fast scalar-term operators when every term is scalar and the cross-tabulations are small."""
    if problem.layout is not None:
        return _ScalarOps(problem, theta, joint)
    return _SparseOps(problem, theta, joint)


#: PIRLS takes its last Newton step when the largest step is below this (the steps shrink quadratically,
#: typically 1e-4, 1e-9, 1e-14 from a warm start: the error after a step of 1e-8 is at rounding level)
STEP_TOL = 1e-8


def pirls(problem: GlmmProblem, theta: np.ndarray, beta: np.ndarray, u0: np.ndarray | None = None, *,
          joint: bool = False, psi: np.ndarray | None = None, tol: float = 1e-20, maxit: int = 100) -> PirlsState:
    """Conditional modes ``u`` (and ``beta`` when ``joint``) at ``theta`` by PIRLS.

    Parameters
    ----------
    problem : GlmmProblem
    theta : ndarray
        Relative covariance parameters.
    beta : ndarray
        Fixed effects (held fixed unless ``joint``; the start when ``joint``).
    u0 : ndarray, optional
        Starting spherical random effects (zeros by default).
    joint : bool
        Optimise ``beta`` with ``u`` (lme4's ``nAGQ = 0`` stage) instead of holding it fixed.
    psi : ndarray, optional
        The family's parameters (default: the problem's :attr:`GlmmProblem.family_par`).
    tol : float
        Stop when the Newton decrement ``delta' grad`` of the penalised deviance falls below
        ``tol * (1 + pwrss)`` or the largest step below :data:`STEP_TOL` (that last step is taken: Newton's
        quadratic convergence leaves an error of order ``STEP_TOL^2``). The Laplace deviance is not stationary
        in ``u`` (``log|L|^2`` depends on it), so the modes must be exact to near rounding for its gradients.

    Returns
    -------
    PirlsState
    """
    fam, y, wt = problem.family, problem.y, problem.weights
    psi = problem.psi(psi)
    if problem.general and not fam.valid_parameters(psi):
        raise LinAlgError(f"the {fam.name} likelihood is not defined at its parameters {psi.tolist()}")
    wt_w = 1.0 if problem.unit_weights and not problem.general else wt
    ops = _ops(problem, np.asarray(theta, dtype=float), joint)
    q = problem.re.q
    u = np.zeros(q) if u0 is None else np.asarray(u0, dtype=float).copy()
    beta = np.asarray(beta, dtype=float).copy()
    eta = ops.eta(u, beta)
    mu = fam.linkinv(eta)
    pwrss = problem.kernel(mu, eta, psi) + float(u @ u)
    converged = False
    it = 0
    system = None
    for it in range(1, maxit + 1):  # noqa: B007 (the count is reported after the loop)
        w, r, _, wo = weights_and_derivatives(fam, y, wt_w, eta, mu, derivatives=False, psi=psi)
        # Newton steps: the observed information (equal to the working weights for canonical links; for probit
        # Fisher scoring would converge only linearly). A family with its own log-likelihood: the exact Hessian while
        # it is positive definite, else the observed information with the expected one where it is not positive
        if problem.general and wo is not w:
            try:
                system = ops.system(w)
            except LinAlgError:
                system = ops.system(wo)
        else:
            system = ops.system(w if wo is w else np.where(wo > 0, wo, w))
        rhs_u = ops.zlt(r) - u
        rhs_b = problem.X.T @ r if joint and problem.p else None
        du, db = system.solve(rhs_u, rhs_b)
        decrement = float(du @ rhs_u + (db @ rhs_b if db is not None else 0.0))
        size = max(float(np.max(np.abs(du), initial=0.0)), float(np.max(np.abs(db), initial=0.0)) if db is not None else 0.0)
        if decrement < tol * (1.0 + abs(pwrss)) or size < STEP_TOL:
            # the last Newton step is tiny: take it (quadratic convergence leaves an error ~ size^2) and stop
            u = u + du
            beta = beta + db if db is not None else beta
            eta = ops.eta(u, beta)
            mu = fam.linkinv(eta)
            pwrss = problem.kernel(mu, eta, psi) + float(u @ u)
            converged = True
            break
        step = 1.0
        for _ in range(30):
            u_new = u + step * du
            beta_new = beta + step * db if db is not None else beta
            eta_new = ops.eta(u_new, beta_new)
            mu_new = fam.linkinv(eta_new)
            pw_new = problem.kernel(mu_new, eta_new, psi) + float(u_new @ u_new)
            if pw_new <= pwrss + 1e-14 * (1.0 + abs(pwrss)):
                break
            step /= 2
        else:
            break  # no decrease along the Newton direction: at the optimum within rounding
        u, beta, eta, mu, pwrss = u_new, beta_new, eta_new, mu_new, pw_new
    # weights and factorisation at the final modes (the Laplace approximation's curvature: lme4's working weights,
    # or the observed information of a family with its own log-likelihood, as glmmTMB's Laplace approximation)
    w = weights_and_derivatives(fam, y, wt_w, eta, mu, derivatives=False, psi=psi)[0]
    system = ops.system(w)
    return PirlsState(u=u, beta=beta, eta=eta, mu=mu, ldl2=system.ldl2, pwrss=pwrss, iterations=it,
                      converged=converged, system=system, psi=psi)


def weights_and_derivatives(family: Family, y: np.ndarray, wt: np.ndarray, eta: np.ndarray, mu: np.ndarray,
                            derivatives: bool = True, psi: np.ndarray | None = None
                            ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
    """PIRLS' working weights ``w``, the score ``r``, ``dw / d eta`` and the observed weights ``-dr / d eta``.

    Notes
    -----
    ``w = wt mu_eta^2 / V``, ``r = wt (y - mu) mu_eta / V`` (``d log p / d eta``). Canonical links (logit, log):
    ``-dr / d eta = w`` and ``dw / d eta = w (1 - 2 mu)`` (logit) or ``w`` (log). Probit (``mu_eta = phi``,
    ``k = phi / V``): ``dw / d eta = w (-2 eta - (1 - 2 mu) k)`` and ``-dr / d eta = w + r (eta + (1 - 2 mu) k)``,
    positive because the probit log-likelihood is concave in ``eta``. ``wt`` may be the scalar 1 (unit prior
    weights); without ``derivatives`` the third value is ``None``.

    A family with its own log-likelihood (``psi`` its parameters): ``r = dl / d eta``, ``w = -d^2 l / d eta^2`` (the
    observed information, the curvature of glmmTMB's Laplace approximation) and ``dw / d eta = -d^3 l / d eta^3``
    from :meth:`~.families.Family.eta_derivatives`; without ``derivatives`` the fourth value is the observed
    information where it is positive and the expected one elsewhere (PIRLS' Newton steps).
    """
    if not family.exponential:
        l1, l2, l3 = family.eta_derivatives(y, eta, wt, psi, third=derivatives)
        w = -l2
        if derivatives:
            return w, l1, -l3, w
        if np.all(w > 0):
            return w, l1, None, w
        return w, l1, None, np.where(w > 0, w, family.fisher_weights(eta, wt, psi))
    if family.link in ("logit", "log"):
        # mu_eta / V = 1 (logit: mu (1 - mu) / (mu (1 - mu)), log: mu / mu)
        w = mu * (1 - mu) if family.link == "logit" else mu
        r = y - mu
        if not np.isscalar(wt):
            w, r = wt * w, wt * r
        if not derivatives:
            return w, r, None, w
        return w, r, (w * (1 - 2 * mu) if family.link == "logit" else w), w
    me = family.mu_eta(eta)
    var = family.variance(mu)
    k = me / var
    w = wt * me * k
    r = wt * (y - mu) * k
    spread = (1 - 2 * mu) * k
    return w, r, w * (-2 * eta - spread), w + r * (eta + spread)


def supports_gradient(problem: GlmmProblem) -> bool:
    """The analytic gradient of the Laplace deviance applies: scalar random-effects terms (weighted counts), or
    scalar terms of which some are multiple-membership (:func:`_membership_gradient`)."""
    if not problem.re.terms:
        return False
    if isinstance(_ops(problem, problem.re.theta0, False), _ScalarOps):
        return True
    return _membership_scalar(problem)


def _membership_scalar(problem: GlmmProblem) -> bool:
    terms = problem.re.terms
    return all(t.n_coef == 1 for t in terms) and any(t.is_multiple_membership for t in terms)


def _row_loadings(problem: GlmmProblem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row's random-effects columns (positions in ``u``), their loadings ``z_i`` (without theta) and the term
    of each: ``n x m`` arrays, ``m`` the number of terms plus the multiple-membership ones (scalar terms)."""
    pos, load, term_of = [], [], []
    start = 0
    for k, t in enumerate(problem.re.terms):
        pos.append(start + t.codes)
        load.append(t.X[:, 0])
        term_of.append(k)
        if t.is_multiple_membership:
            pos.append(start + t.codes2)
            load.append(t.X2[:, 0])
            term_of.append(k)
        start += t.n_levels
    return np.column_stack(pos).astype(np.intp), np.column_stack(load), np.asarray(term_of)


def _inverse_at(system: _System, problem: GlmmProblem, pa: np.ndarray, pb: np.ndarray) -> np.ndarray:
    """Entries ``(A^{-1})[pa, pb]`` of the inverse of the random-effects part of the penalised system (positions in
    ``u``; of the block term, only pairs of one level each with itself or with a dense column)."""
    q_rest = system.q_rest
    sl = system.slices
    b = system.b
    q = problem.re.q
    in_block = np.zeros(q, dtype=bool)
    dense_index = np.full(q, -1, dtype=np.intp)
    start = 0
    for k, s in enumerate(sl):
        if k == b:
            in_block[s] = True
        else:
            dense_index[s] = np.arange(start, start + s.stop - s.start)
            start += s.stop - s.start
    cache = system.__dict__.setdefault("_inverse_parts", {})
    if "sinv" not in cache:
        if q_rest:
            low = np.tril(system.schur[0][:q_rest, :q_rest])
            linv = solve_triangular(low, np.eye(q_rest), lower=True, check_finite=False)
            cache["sinv"] = linv.T @ linv
        else:
            cache["sinv"] = np.zeros((0, 0))
        if b >= 0:
            binv = 1.0 / system.block_chol[:, 0, 0] ** 2
            gmat = system.c[:, :q_rest] * binv[:, None]
            gs = gmat @ cache["sinv"]
            cache["gs"], cache["diag_bb"] = gs, binv + np.einsum("ij,ij->i", gs, gmat)
    sinv = cache["sinv"]
    block_start = sl[b].start if b >= 0 else 0
    out = np.zeros(pa.shape)
    ba, bb = in_block[pa], in_block[pb]
    dd = ~ba & ~bb
    out[dd] = sinv[dense_index[pa[dd]], dense_index[pb[dd]]]
    if b >= 0:
        same = ba & bb
        out[same] = np.where(pa[same] == pb[same], cache["diag_bb"][pa[same] - block_start], np.nan)
        mixed = ba & ~bb
        out[mixed] = -cache["gs"][pa[mixed] - block_start, dense_index[pb[mixed]]]
        mixed = ~ba & bb
        out[mixed] = -cache["gs"][pb[mixed] - block_start, dense_index[pa[mixed]]]
    return out


def _membership_gradient(problem: GlmmProblem, theta: np.ndarray, state: PirlsState, *, joint: bool,
                         with_psi: bool = False) -> np.ndarray:
    """:func:`laplace_gradient` for scalar terms some of which are multiple-membership (each row loads on up to two
    levels of such a term): the same formulas with the row's loading vector ``z_i`` (a few nonzeros) in place of
    one level per term. ``g`` and ``h`` come from the entries of ``A^{-1}`` among each row's columns."""
    fam = problem.family
    theta = np.asarray(theta, dtype=float)
    ops = _ops(problem, theta, joint)
    wt = 1.0 if problem.unit_weights and not problem.general else problem.weights
    w, r, dw, wo = weights_and_derivatives(fam, problem.y, wt, state.eta, state.mu, psi=problem.psi(state.psi))
    system = state.system
    pos, z, term_of = _row_loadings(problem)
    lz = z * theta[term_of][None, :]  # Lambda' z_i: the loadings times the term's theta
    m = pos.shape[1]
    ainv_z = np.zeros_like(z)  # (A^{-1} Lambda' z_i) at the row's columns
    for a in range(m):
        for c in range(m):
            ainv_z[:, a] += _inverse_at(system, problem, pos[:, a], pos[:, c]) * lz[:, c]
    h = np.sum(lz * ainv_z, axis=1)
    hd = h * dw
    with_x = joint and problem.p
    system_o = ops.system(wo) if wo is not w else system
    lam_u, lam_b = system_o.solve(ops.zlt(hd), problem.X.T @ hd if with_x else None)
    zeta = ops.eta(lam_u, lam_b if with_x else np.zeros(problem.p))
    if problem.has_offset:
        zeta -= problem.offset
    base = hd - wo * zeta - 2 * r
    n_terms = len(problem.re.terms)
    grad = np.empty(n_terms + (0 if joint else problem.p))
    for k in range(n_terms):
        cols = np.flatnonzero(term_of == k)
        s_k = np.sum(z[:, cols] * state.u[pos[:, cols]], axis=1)
        lam_k = np.sum(z[:, cols] * lam_u[pos[:, cols]], axis=1)
        grad[k] = s_k @ base + 2 * np.sum(w[:, None] * z[:, cols] * ainv_z[:, cols]) + lam_k @ r
    if not joint:
        grad[n_terms:] = problem.X.T @ base
    return np.concatenate([grad, _psi_gradient(problem, state, h, zeta)]) if with_psi else grad


def _psi_gradient(problem: GlmmProblem, state: PirlsState, h: np.ndarray, zeta: np.ndarray) -> np.ndarray:
    """Gradient of the Laplace deviance in the family's parameters (see :func:`laplace_gradient`)."""
    lp, l1p, l2p = problem.family.parameter_derivatives(problem.y, state.eta, problem.weights, problem.psi(state.psi))
    return -2.0 * lp.sum(axis=0) - h @ l2p + zeta @ l1p


def supports_beta_gradient(problem: GlmmProblem) -> bool:
    """The analytic beta-gradient applies (:func:`supports_gradient`)."""
    return supports_gradient(problem)


def _inverse_diagonal_terms(ops: _ScalarOps, system: _System) -> list[np.ndarray]:
    """``g_ki = (A^{-1} z_i)_{(k, c_k(i))}`` per term ``k``: row ``i``'s entry of ``A^{-1} Lambda' z_i`` at its level of ``k``.

    ``A`` is the random-effects part of the penalised system (for a joint system, the leading block of its Schur
    complement's Cholesky factor is that of ``A``'s).
    """
    b, rest = ops.b, ops.rest
    q_rest = system.q_rest
    binv = 1.0 / system.block_chol[:, 0, 0] ** 2
    cb, vb = ops.codes[b], ops.v[b]
    g = [np.zeros(0)] * len(ops.codes)
    if not q_rest:
        g[b] = vb * binv[cb]
        return g
    if isinstance(system, _NestedSystem):
        # A^{-1}: 1 / S_j on the outer levels, -c_i / (B_i S_j) between block level i and its parent j, and
        # 1 / B_i + c_i^2 / (B_i^2 S_j) on the block levels
        k = rest[0]
        sinv = 1.0 / system.s_diag
        gs = system.c_over_b * sinv[system.parent]
        cross = gs[cb]
        g[b] = vb * (binv + gs * system.c_over_b)[cb] - ops.v[k] * cross
        g[k] = ops.v[k] * sinv[ops.codes[k]] - vb * cross
        return g
    low = np.tril(system.schur[0][:q_rest, :q_rest])
    linv = solve_triangular(low, np.eye(q_rest), lower=True, check_finite=False)
    sinv = linv.T @ linv
    gmat = system.c[:, :q_rest] * binv[:, None]
    gs = gmat @ sinv
    diag_bb = binv + np.einsum("ij,ij->i", gs, gmat)
    sizes = [ops.levels[k] for k in rest]
    offs = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    sl = {k: slice(offs[a], offs[a + 1]) for a, k in enumerate(rest)}
    pairs = ops.layout.pairs
    g[b] = vb * diag_bb[cb]
    for k in rest:
        g[k] = ops.v[k] * np.diag(sinv[sl[k], sl[k]])[ops.codes[k]]
    for a, k in enumerate(rest):
        cross = np.ascontiguousarray(gs[:, sl[k]]).ravel()[pairs[(b, k)]]  # -(A^{-1})_{b, k} at row i's levels
        g[b] = g[b] - ops.v[k] * cross
        g[k] = g[k] - vb * cross
        for k2 in rest[a + 1:]:
            between = np.ascontiguousarray(sinv[sl[k], sl[k2]]).ravel()[pairs[(k, k2)]]
            g[k] = g[k] + ops.v[k2] * between
            g[k2] = g[k2] + ops.v[k] * between
    return g


def laplace_gradient(problem: GlmmProblem, theta: np.ndarray, state: PirlsState, *, joint: bool = False,
                     with_psi: bool = False) -> np.ndarray:
    """Gradient of the Laplace deviance: in ``(theta, beta)`` at fixed ``beta`` (``joint=False``, ``state`` from
    PIRLS on ``u``), or in ``theta`` with ``beta`` from PIRLS (``joint=True``, lme4's ``nAGQ = 0`` criterion); with
    ``with_psi`` followed by its gradient in the family's parameters ``psi`` (optimiser scale).

    Notes
    -----
    ``D = -2 log p(y | u*) + ||u*||^2 + log|A|``, ``A = Lambda' Z' W Z Lambda + I``, scalar terms
    ``eta = X beta + sum_k theta_k x_k u_k[c_k]``. The first two terms are stationary in the mode
    (``u* = Lambda' Z' r``; with ``joint`` also ``X' r = 0``), so their derivative is the partial one at fixed
    ``u*``: ``-2 sum_i r_i d eta_i`` with ``d eta / d theta_k = s_k = x_k u_k[c_k]`` and ``d eta / d beta = X``.
    ``d log|A| = tr(A^{-1} dA)``: at fixed ``W``, ``2 sum_i w_i x_ki g_ki`` (:func:`_inverse_diagonal_terms`);
    through ``W``, ``sum_i h_i w'_i d eta_i`` with ``h_i = sum_k theta_k x_ki g_ki = z_i' Lambda A^{-1} Lambda'
    z_i``, where the mode moves: ``A_o du = E_k' Z' r - Lambda' Z' W_o s_k`` (``A_o`` with the observed weights
    ``W_o``; with ``joint`` the full system in ``(u, beta)``). One adjoint solve ``A_o lambda = Lambda' Z' (h w')``
    (joint: ``[Lambda' Z' (h w'); X' (h w')]``) and ``zeta = Z Lambda lambda_u (+ X lambda_beta)`` give every
    component: ``a = h w' - w_o zeta``, ``dD / d theta_k = s_k' (a - 2 r) + 2 (w x_k)' g_k + lambda_k' Z_k' r``
    and ``dD / d beta = X' (a - 2 r)``. Only for scalar terms (:func:`supports_gradient`).

    A family with its own log-likelihood has ``w = w_o``, the observed information; in its parameters ``psi`` the
    first two terms again contribute their partial derivative, ``-2 sum_i d l_i / d psi``, and ``log|A|`` the trace
    ``sum_i h_i (d w_i / d psi + w'_i d eta_i / d psi)`` with the mode moving as ``A_o du = Lambda' Z' (d r / d psi)``
    (joint: with ``X' (d r / d psi)``); the adjoint above turns the second part into ``zeta' (d r / d psi)``:
    ``dD / d psi = -2 sum l_psi + h' (d w / d psi) + zeta' (d r / d psi)``
    (:meth:`~.families.Family.parameter_derivatives`).
    """
    fam = problem.family
    theta = np.asarray(theta, dtype=float)
    ops = _ops(problem, theta, joint)
    if not isinstance(ops, _ScalarOps):
        return _membership_gradient(problem, theta, state, joint=joint, with_psi=with_psi)
    wt = 1.0 if problem.unit_weights and not problem.general else problem.weights
    w, r, dw, wo = weights_and_derivatives(fam, problem.y, wt, state.eta, state.mu, psi=problem.psi(state.psi))
    system = state.system
    g = _inverse_diagonal_terms(ops, system)
    h = sum(v * gk for v, gk in zip(ops.v, g))
    hd = h * dw
    with_x = joint and problem.p
    system_o = ops.system(wo) if wo is not w else system
    lam_u, lam_b = system_o.solve(ops.zlt(hd), ops.xt(hd) if with_x else None)
    zeta = ops.eta(lam_u, lam_b if with_x else np.zeros(problem.p))
    if problem.has_offset:
        zeta -= problem.offset
    base = hd - wo * zeta - 2 * r
    grad = np.empty(len(ops.codes) + (0 if joint else problem.p))
    z_base, z_r = ops.sums(base), ops.sums(r)
    for k, (x, sl) in enumerate(zip(ops.x, ops.slices)):
        grad[k] = state.u[sl] @ z_base[sl] + 2 * ((w if x is None else w * x) @ g[k]) + lam_u[sl] @ z_r[sl]
    if not joint:
        grad[len(ops.codes):] = ops.xt(base)
    return np.concatenate([grad, _psi_gradient(problem, state, h, zeta)]) if with_psi else grad


def laplace_beta_gradient(problem: GlmmProblem, theta: np.ndarray, state: PirlsState) -> np.ndarray:
    """Gradient of the Laplace deviance with respect to ``beta`` at ``(theta, beta)`` (``state`` from PIRLS on u).

    Notes
    -----
    The ``beta`` part of :func:`laplace_gradient`: ``-2 X' r + sum_i h_i w'_i d eta_i / d beta`` with
    ``d eta / d beta = X - Z Lambda A_o^{-1} Lambda' Z' W_o X`` (implicit differentiation of the mode).
    Only for scalar terms (:func:`supports_gradient`).
    """
    return laplace_gradient(problem, theta, state, joint=False)[problem.re.n_theta:problem.re.n_theta + problem.p]


def joint_system(problem: GlmmProblem, theta: np.ndarray, state: PirlsState) -> _System:
    """The penalised system in ``(u, beta)`` at the weights of ``state`` (for lme4's RX-based ``vcov``)."""
    fam = problem.family
    if problem.general:  # the observed information, the expected one where it is not positive
        w = weights_and_derivatives(fam, problem.y, problem.weights, state.eta, state.mu, derivatives=False,
                                    psi=problem.psi(state.psi))[3]
    else:
        me = fam.mu_eta(state.eta)
        w = problem.weights * me * me / fam.variance(state.mu)
    return _ops(problem, np.asarray(theta, dtype=float), True).system(w)


def laplace_deviance(problem: GlmmProblem, state: PirlsState) -> float:
    """lme4's Laplace deviance ``-2 log p(y | u) + ||u||^2 + log|L|^2`` (``glmResp::Laplace``; for a family with its
    own log-likelihood glmmTMB's, ``L`` from the observed information)."""
    if problem.general:
        return float(problem.kernel(state.mu, state.eta, state.psi) + state.u @ state.u + state.ldl2)
    if problem.binary:  # R's aic is the kernel itself for 0/1 responses, and pwrss = kernel + ||u||^2
        return float(state.pwrss + state.ldl2)
    return float(problem.family.aic(problem.y, state.mu, problem.weights) + state.u @ state.u + state.ldl2)


def gauss_hermite_rule(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of the ``n``-point Gauss-Hermite rule for the standard normal density (weights sum to 1).

    Examples
    --------
    >>> z, w = gauss_hermite_rule(3)
    >>> [round(float(v), 6) for v in z], [round(float(v), 6) for v in w]
    ([-1.732051, 0.0, 1.732051], [0.166667, 0.666667, 0.166667])
    """
    z, w = np.polynomial.hermite_e.hermegauss(int(n))
    w = w / w.sum()
    # symmetrise as lme4's GHrule does
    z = (z - z[::-1]) / 2
    w = (w + w[::-1]) / 2
    return z, w


def agq_deviance(problem: GlmmProblem, state: PirlsState, theta: np.ndarray, n_agq: int) -> float:
    """lme4's adaptive Gauss-Hermite deviance for one scalar random-effects term (``glmerAGQ``).

    Notes
    -----
    Per level ``j`` with conditional mode ``u_j`` and conditional SD ``s_j = 1 / L_jj``,
    ``devc_j(u) = u^2 + sum_{i in j} d_i(u)`` (deviance residuals) and
    ``m_j = sum_k w_k exp(-(devc_j(u_j + s_j z_k) - devc_j(u_j)) / 2 + z_k^2 / 2)``; the deviance is
    ``sum_j devc_j(u_j) + log|L|^2 - 2 sum_j log m_j``. As lme4, it is built on the deviance residuals
    (not on ``-2 log p(y | u)``), so for proportions and counts it differs from the Laplace scale by the
    saturated model's constant (for 0/1 responses the two coincide).
    """
    re = problem.re
    if len(re.terms) != 1 or re.terms[0].n_coef != 1 or re.terms[0].is_multiple_membership:
        # internal guard: fit_glmm refuses such a model with an InputError before it gets here
        raise ValueError("adaptive Gauss-Hermite quadrature (nAGQ > 1) needs a single scalar random-effects term")
    fam, y, wt = problem.family, problem.y, problem.weights
    term = re.terms[0]
    codes = term.codes
    L = term.n_levels
    sd = 1.0 / state.system.block_chol[:, 0, 0]
    zl_col = term.X[:, 0] * float(theta[0])
    u0 = state.u
    base = state.eta
    def devc(u: np.ndarray) -> np.ndarray:
        eta = base + zl_col * (u - u0)[codes]
        mu = fam.linkinv(eta)
        return u * u + np.bincount(codes, weights=fam.dev_resid(y, mu, wt), minlength=L)

    devc0 = devc(u0)
    z, w = gauss_hermite_rule(n_agq)
    mult = np.zeros(L)
    for zk, wk in zip(z, w):
        if zk == 0.0:
            mult += wk
        else:
            mult += wk * np.exp(-0.5 * (devc(u0 + zk * sd) - devc0) + 0.5 * zk * zk)
    return float(devc0.sum() + state.ldl2 - 2 * np.sum(np.log(mult)))
