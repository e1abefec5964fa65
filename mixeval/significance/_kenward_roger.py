"""Kenward-Roger and Satterthwaite pieces of a REML lmer fit, for every lme4 random-effects structure.

Stage chain: :func:`re_layout` (the variance parameters and their ``G`` matrices) -> q-space blocks
(:func:`_qspace_one_factor` when every term shares one grouping factor, else :func:`_qspace_dense`) ->
:func:`_variance_blocks` -> :func:`_assemble` (pbkrtest's ``vcovAdj``: ``Phi_A`` and ``W``; lmerTest's
observed-information ``W`` for random-intercept fits).

Variance parameters (pbkrtest's ``get_SigmaG``): term by term, the lower triangle (column-wise, lme4's theta order)
of the term's covariance matrix ``Sigma_k = sigma^2 Lambda_k Lambda_k'``, then the residual variance ``sigma^2``.
``V = sum_r gamma_r G_r`` with ``G_r = Z_k (I_levels (x) S_r) Z_k'``, ``S_r = E_ij + E_ji`` (a covariance) or
``E_ii`` (a variance), and ``G_res = I``. ``V`` is linear in ``gamma``, so the second derivatives ``R_ij`` of
Kenward & Roger (1997) vanish; pbkrtest leaves them out for the same reason.

Every quantity is formed in the space of the random effects (``q`` columns of ``Z``) through
``V^-1 = sigma^-2 (I - Z B Z')`` with ``B = Lambda (Lambda' Z'Z Lambda + I)^-1 Lambda'`` (Woodbury); no ``n x n``
matrix is formed. Terms on the same grouping factor (``(1 + x || g)``, ``(1 | g) + (0 + x | g)``) are merged into one
block per level, so a model whose terms all share one factor has block-diagonal q-space matrices (``O(n b^2 + L b^4)``
for ``L`` levels of ``b`` coefficients); crossed factors use dense ``q x q`` matrices with the largest factor's blocks
eliminated first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.linalg import cho_factor, cho_solve

from ..errors import InputError
from ._satterthwaite import satterthwaite_df, satterthwaite_upper_df

__all__ = ["DdfPieces", "ReLayout", "re_layout", "kr_pieces", "BOUNDARY_THETA", "KR_MAX_EFFECTS"]

#: Relative standard deviations below this (lme4's singularity tolerance) are on the boundary: held fixed
#: in the Satterthwaite df (pbkrtest's Kenward-Roger keeps every variance parameter).
BOUNDARY_THETA = 1e-4

#: Largest number of random effects (columns of ``Z``) over crossed factors for which the dense ``q x q`` pieces
#: are formed.
KR_MAX_EFFECTS = 12_000


@dataclass(frozen=True)
class DdfPieces:
    """Kenward-Roger and Satterthwaite pieces of a REML lmer fit.

    Attributes
    ----------
    vcov : ndarray
        The unadjusted covariance of the fixed effects, ``Phi = (X' V^-1 X)^-1``.
    vcov_adjusted : ndarray
        The Kenward-Roger adjusted covariance ``Phi_A = Phi + 2 Phi U Phi`` (pbkrtest's ``vcovAdj``).
    P : ndarray, shape (m, p, p)
        ``P_r = -X' V^-1 G_r V^-1 X = d Phi^-1 / d gamma_r`` for each variance parameter ``gamma_r``
        (the random terms' variances and covariances, then the residual).
    W_expected : ndarray, shape (m, m)
        ``2 I_E^-1``: covariance of the variance parameters from the expected REML information
        ``I_E[r, s] = tr(P G_r P G_s) / 2`` (``P`` the REML projection); pbkrtest's ``W``.
    W_observed : ndarray, shape (m, m), or None
        ``2 H^-1`` with ``H`` the Hessian of the REML criterion ``-2 l_R(gamma)``, lmerTest's covariance
        of the variance parameters (invariant to their parametrisation at an interior optimum); rows and
        columns of components on the boundary (``theta < 1e-4``) are 0, as lmerTest's Hessian in
        ``theta`` decouples them. None for fits with random slopes, whose Satterthwaite df the engine
        computes in lmerTest's ``(theta, sigma)`` (which differs from ``gamma`` at a singular covariance).
    component_df : ndarray, shape (m,)
        Degrees of freedom of each variance parameter's estimate: levels minus one of its grouping factor,
        ``n - rank X`` for the residual (for ``"satterthwaite-upper"``).
    """

    vcov: np.ndarray = field(repr=False)
    vcov_adjusted: np.ndarray = field(repr=False)
    P: np.ndarray = field(repr=False)
    W_expected: np.ndarray = field(repr=False)
    W_observed: np.ndarray | None = field(repr=False)
    component_df: np.ndarray = field(repr=False)

    def _variance_gradient(self, L: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        L = np.atleast_2d(np.asarray(L, dtype=float))
        PhiL = L @ self.vcov  # rows l' Phi
        var = np.einsum("ij,ij->i", PhiL, L)
        g = np.einsum("ij,rjk,ik->ir", PhiL, self.P, PhiL)  # -d(l' Phi l)/d gamma_r
        return var, g

    def _observed(self) -> np.ndarray:
        if self.W_observed is None:
            raise InputError("these pieces have no observed information (a fit with random slopes: the engine's "
                             "fit.satterthwaite_df gives lmerTest's df).")
        return self.W_observed

    def df_kenward_roger(self, L: np.ndarray) -> np.ndarray:
        """Kenward-Roger degrees of freedom of each row ``l`` of ``L`` (pbkrtest's ``Lb_ddf``).

        For one linear function pbkrtest's formulas reduce to ``df = 2 / A`` with
        ``A = sum_rs W_rs a_r a_s`` and ``a_r = l' Phi P_r Phi l / (l' Phi l)``, i.e.
        ``df = 2 (l' Phi l)^2 / (g' W g)`` with ``g_r = l' Phi P_r Phi l`` and ``W = W_expected``.
        """
        return satterthwaite_df(*self._variance_gradient(L), self.W_expected)

    def df_satterthwaite(self, L: np.ndarray) -> np.ndarray:
        """Satterthwaite degrees of freedom of each row of ``L`` (lmerTest's):
        ``2 (l' Phi l)^2 / (g' W_observed g)``."""
        return satterthwaite_df(*self._variance_gradient(L), self._observed())

    def df_satterthwaite_upper(self, L: np.ndarray) -> np.ndarray:
        """Satterthwaite df (``W_observed``) with each component's part of ``l' Phi l`` at its upper bound
        (:func:`mixeval.significance._satterthwaite.satterthwaite_upper_df`)."""
        var, g = self._variance_gradient(L)
        return satterthwaite_upper_df(var, g, self._observed(), self.component_df)


# ----------------------------------------------------------------------------------------------- stage 1: layout
@dataclass(frozen=True)
class ReLayout:
    """The random-effects structure as the variance parameters see it.

    Terms on the same grouping factor are merged into one factor whose ``b`` coefficients are the terms'
    coefficients side by side; its relative covariance factor is block diagonal over the terms.

    Attributes
    ----------
    codes, n_levels : per factor, the level of each row and the number of levels.
    Z : per factor, ``(n, b)``: the coefficients' model-matrix values of each row.
    lam : per factor, ``(b, b)``: ``Lambda_f`` (``Var(b_level) = sigma^2 Lambda_f Lambda_f'``).
    params : per variance parameter, ``(factor, S_r)`` with ``S_r`` the ``b x b`` symmetric unit pattern of
        ``G_r = Z_f (I (x) S_r) Z_f'``, in pbkrtest's order (terms as lme4 orders them, lower triangle column-wise).
    intercepts_only : every term is a scalar random intercept.
    """

    codes: tuple[np.ndarray, ...] = field(repr=False)
    n_levels: tuple[int, ...]
    Z: tuple[np.ndarray, ...] = field(repr=False)
    lam: tuple[np.ndarray, ...] = field(repr=False)
    params: tuple[tuple[int, np.ndarray], ...] = field(repr=False)
    intercepts_only: bool

    @property
    def widths(self) -> tuple[int, ...]:
        return tuple(z.shape[1] for z in self.Z)

    @property
    def q(self) -> int:
        return int(sum(n * b for n, b in zip(self.n_levels, self.widths)))

    @property
    def slices(self) -> list[slice]:
        """Each factor's columns of ``Z`` (factor by factor, level-major within a factor)."""
        ends = np.cumsum([n * b for n, b in zip(self.n_levels, self.widths)])
        return [slice(int(e - n * b), int(e)) for e, n, b in zip(ends, self.n_levels, self.widths)]


def _lower_triangle(b: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows and columns of a ``b x b`` lower triangle, column-wise (lme4's theta order, pbkrtest's ``ggamma``)."""
    cols, rows = np.triu_indices(b)
    return rows, cols


def re_layout(terms, theta: np.ndarray) -> ReLayout:
    """The layout of lme4-style random terms (``fit.model_terms``: ``group``, ``codes``, ``levels``, ``X``) at the
    relative covariance parameters ``theta`` (lme4's layout).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import lmer
    >>> rng = np.random.default_rng(0)
    >>> d = pd.DataFrame({"g": np.repeat(np.arange(10), 4), "x": np.tile([0.0, 1, 2, 3], 10)})
    >>> d["y"] = rng.normal(size=10)[d.g] + d.x + rng.normal(size=40)
    >>> lay = re_layout(lmer("y ~ x + (1 + x || g)", d).model_terms, np.array([1.0, 0.5]))
    >>> lay.n_levels, lay.widths, [S.tolist() for _, S in lay.params]
    ((10,), (2,), [[[1.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 1.0]]])
    """
    theta = np.asarray(theta, dtype=float)
    factor_of: list[int] = []
    keys: list[tuple[str, np.ndarray]] = []
    for t in terms:
        if getattr(t, "codes2", None) is not None:
            raise InputError("Kenward-Roger is not available for multiple-membership random terms; "
                             "use df='asymptotic'.")
        match = next((i for i, (name, codes) in enumerate(keys)
                      if name == t.group and np.array_equal(codes, t.codes)), None)
        if match is None:
            keys.append((t.group, np.asarray(t.codes, dtype=np.int64)))
            match = len(keys) - 1
        factor_of.append(match)
    n_f = len(keys)
    z_cols: list[list[np.ndarray]] = [[] for _ in range(n_f)]
    lam_blocks: list[list[np.ndarray]] = [[] for _ in range(n_f)]
    n_levels = [0] * n_f
    start = 0
    placed = []  # (factor, column offset within the factor, term width) per term
    for t, f in zip(terms, factor_of):
        b = t.X.shape[1]
        n_th = b * (b + 1) // 2
        lam = np.zeros((b, b))
        rows, cols = _lower_triangle(b)
        lam[rows, cols] = theta[start:start + n_th]
        start += n_th
        placed.append((f, sum(z.shape[1] for z in z_cols[f]), b))
        z_cols[f].append(np.asarray(t.X, dtype=float))
        lam_blocks[f].append(lam)
        n_levels[f] = len(t.levels)
    if start != theta.size:
        raise InputError(f"theta has {theta.size} entries; the random terms need {start}.")
    Z = [np.column_stack(zs) for zs in z_cols]
    lams = [_block_diag(blocks) for blocks in lam_blocks]
    params = []
    for f, off, b in placed:
        width = Z[f].shape[1]
        for i, j in zip(*_lower_triangle(b)):
            S = np.zeros((width, width))
            S[off + i, off + j] = S[off + j, off + i] = 1.0
            params.append((f, S))
    # the factor with the most random effects first: it is eliminated block by block in the dense path
    order = sorted(range(n_f), key=lambda f: -n_levels[f] * Z[f].shape[1])
    rank = {f: k for k, f in enumerate(order)}
    return ReLayout(codes=tuple(keys[f][1] for f in order), n_levels=tuple(n_levels[f] for f in order),
                    Z=tuple(Z[f] for f in order), lam=tuple(lams[f] for f in order),
                    params=tuple((rank[f], S) for f, S in params),
                    intercepts_only=all(getattr(t, "coef_names", ("(Intercept)",)) == ("(Intercept)",) for t in terms))


def _block_diag(blocks: list[np.ndarray]) -> np.ndarray:
    width = sum(b.shape[0] for b in blocks)
    out = np.zeros((width, width))
    k = 0
    for b in blocks:
        out[k:k + b.shape[0], k:k + b.shape[0]] = b
        k += b.shape[0]
    return out


# ------------------------------------------------------------------------------------------ stage 2: q-space
@dataclass(frozen=True)
class _QSpace:
    """``Z' V^-1 [X r]``, ``[X r]' V^-k [X r]`` and the operators on ``H = Z' V^-1 Z`` the pieces need
    (``r = y - X b`` the marginal residuals of the GLS estimate; ``Z`` columns level-major within each factor)."""

    Fa: np.ndarray        # (q, p+1) Z' V^-1 [X r]
    XVXa: np.ndarray      # (p+1, p+1) [X r]' V^-1 [X r]
    XV2Xa: np.ndarray     # (p+1, p+1) [X r]' V^-2 [X r]
    XV2Za: np.ndarray     # (p+1, q) [X r]' V^-2 Z
    h_dot: Callable[[int, np.ndarray], np.ndarray]   # (f, Y_f) -> H[:, f] @ Y_f
    moments: Callable[[int, int], np.ndarray]        # (f, g) -> M[i, j, k, l] = sum_ab H_ab[i, j] H_ab[k, l]
    v2_blocks: Callable[[int], np.ndarray]           # f -> level blocks of Z' V^-2 Z, (L_f, b_f, b_f)
    K_res: float          # tr(V^-2)
    Q_res: np.ndarray     # X' V^-3 X
    E_res: float          # e' V^-1 e, e = V^-1 r


def _glsify(Fa: np.ndarray, XVXa: np.ndarray, XV2Xa: np.ndarray, XV2Za: np.ndarray, p: int):
    """``[X y] -> [X r]`` with ``r = y - X b`` the marginal residuals of the GLS estimate ``b`` at theta."""
    beta = np.linalg.solve(XVXa[:p, :p], XVXa[:p, p])
    T = np.eye(p + 1)
    T[:p, p] = -beta
    return Fa @ T, T.T @ XVXa @ T, T.T @ XV2Xa @ T, T.T @ XV2Za


def _bdot(blocks: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """A block-diagonal matrix (``(L, b, b)`` blocks) times ``Y`` (``L b`` rows)."""
    L, b, _ = blocks.shape
    return np.einsum("aij,ajc->aic", blocks, Y.reshape(L, b, -1)).reshape(L * b, -1)


def _qspace_one_factor(Xa: np.ndarray, lay: ReLayout, s2: float) -> _QSpace:
    """Every term on one grouping factor: ``Z'Z``, ``B`` and ``H`` are block diagonal with one ``b x b`` block per
    level (``O(n b^2 p + L b^3)``)."""
    n, p1 = Xa.shape
    p = p1 - 1
    codes, L, z, lam = lay.codes[0], lay.n_levels[0], lay.Z[0], lay.lam[0]
    b = z.shape[1]
    ZtZ = np.empty((L, b, b))
    for i in range(b):
        for j in range(i, b):
            ZtZ[:, i, j] = ZtZ[:, j, i] = np.bincount(codes, weights=z[:, i] * z[:, j], minlength=L)
    ZtX: np.ndarray = np.empty((L, b, p1))
    for i in range(b):
        ZtX[:, i, :] = sp.csr_matrix((z[:, i], (codes, np.arange(n))), shape=(L, n)) @ Xa
    ZtX = ZtX.reshape(L * b, p1)
    M = np.einsum("ji,ajk,kl->ail", lam, ZtZ, lam) + np.eye(b)
    B = lam @ np.linalg.solve(M, np.broadcast_to(lam.T, (L, b, b)))
    B = 0.5 * (B + B.transpose(0, 2, 1))                   # V^-1 = (I - Z B Z') / s2
    ZtZB = ZtZ @ B
    H = (ZtZ - ZtZB @ ZtZ) / s2                            # Z' V^-1 Z
    H = 0.5 * (H + H.transpose(0, 2, 1))
    Fa = (ZtX - _bdot(ZtZB, ZtX)) / s2
    BZtX = _bdot(B, ZtX)
    XVXa = (Xa.T @ Xa - ZtX.T @ BZtX) / s2
    XV2Xa = (XVXa - BZtX.T @ Fa) / s2
    XV2Za = (Fa - _bdot(H, BZtX)).T / s2
    Fa, XVXa, XV2Xa, XV2Za = _glsify(Fa, XVXa, XV2Xa, XV2Za, p)
    BF = _bdot(B, Fa)
    flat = H.reshape(L, b * b).T
    return _QSpace(
        Fa=Fa, XVXa=XVXa, XV2Xa=XV2Xa, XV2Za=XV2Za,
        h_dot=lambda f, Y: _bdot(H, Y),
        moments=lambda f, g: (flat @ flat.T).reshape(b, b, b, b),
        v2_blocks=lambda f: (H - ZtZB @ H) / s2,
        K_res=(n - 2.0 * float(np.einsum("aii->", ZtZB)) + float(np.einsum("aij,aji->", ZtZB, ZtZB))) / (s2 * s2),
        Q_res=(XV2Xa[:p, :p] - Fa[:, :p].T @ BF[:, :p]) / s2,
        E_res=float(XV2Xa[p, p] - Fa[:, p] @ BF[:, p]) / s2,
    )


def _z_matrix(lay: ReLayout) -> sp.csr_matrix:
    """``Z`` (``n x q``), columns factor by factor, level-major within a factor."""
    n = lay.codes[0].size
    blocks = []
    for codes, L, z in zip(lay.codes, lay.n_levels, lay.Z):
        b = z.shape[1]
        cols = (codes[:, None] * b + np.arange(b)[None, :]).ravel()
        blocks.append(sp.csr_matrix((z.ravel(), (np.repeat(np.arange(n), b), cols)), shape=(n, L * b)))
    return sp.hstack(blocks).tocsr()


def _inverse_m(M: np.ndarray, L0: int, b0: int) -> np.ndarray:
    """``M^-1`` for ``M = Lambda' Z'Z Lambda + I``, whose first ``L0 b0`` rows and columns (the first factor) are
    block diagonal with ``b0 x b0`` blocks.

    Eliminating the first factor leaves a Schur complement over the other factors' effects only (``q - q0``), and
    the cost is ``O(q0^2 (q - q0))`` instead of ``O(q^3)``.
    """
    q, q0 = M.shape[0], L0 * b0
    idx = np.arange(L0)
    D = M[:q0, :q0].reshape(L0, b0, L0, b0)[idx, :, idx, :]
    Dinv = np.linalg.inv(D)
    if q0 == q:
        out = np.zeros((L0, b0, L0, b0))
        out[idx, :, idx, :] = Dinv
        return out.reshape(q, q)
    DinvC = _bdot(Dinv, M[:q0, q0:])
    S = M[q0:, q0:] - M[:q0, q0:].T @ DinvC
    Sinv = cho_solve(cho_factor(S, lower=True, check_finite=False), np.eye(q - q0), check_finite=False)
    DinvCSinv = DinvC @ Sinv
    top = DinvCSinv @ DinvC.T
    top.reshape(L0, b0, L0, b0)[idx, :, idx, :] += Dinv
    out = np.empty((q, q))
    out[:q0, :q0] = top
    out[:q0, q0:] = -DinvCSinv
    out[q0:, :q0] = -DinvCSinv.T
    out[q0:, q0:] = Sinv
    return out


def _qspace_dense(Xa: np.ndarray, lay: ReLayout, s2: float) -> _QSpace:
    """Crossed or nested factors: dense ``q x q`` matrices, ``Z'Z`` kept sparse."""
    n, p1 = Xa.shape
    p = p1 - 1
    q = lay.q
    if q > KR_MAX_EFFECTS:
        raise InputError(f"Kenward-Roger and Satterthwaite need dense matrices over the {q:,} random effects of "
                         f"crossed factors (limit {KR_MAX_EFFECTS:,}); use df='asymptotic'.")
    Z = _z_matrix(lay)
    ZtZ_sparse = (Z.T @ Z).tocsr()
    ZtX = np.asarray(Z.T @ Xa)
    Lam = sp.block_diag([sp.kron(sp.identity(L, format="csr"), sp.csr_matrix(lam))
                         for L, lam in zip(lay.n_levels, lay.lam)], format="csr")
    M = (Lam.T @ ZtZ_sparse @ Lam).toarray()
    M[np.diag_indices(q)] += 1.0
    Minv = _inverse_m(M, lay.n_levels[0], lay.widths[0])
    B = np.asarray(Lam @ np.asarray(Lam @ Minv).T)
    B = 0.5 * (B + B.T)                                    # V^-1 = (I - Z B Z') / s2
    ZtZB = np.asarray(ZtZ_sparse @ B)
    H = (ZtZ_sparse.toarray() - np.asarray((ZtZ_sparse @ ZtZB.T).T)) / s2  # Z' V^-1 Z
    H = 0.5 * (H + H.T)
    Fa = (ZtX - ZtZB @ ZtX) / s2
    BZtX = B @ ZtX
    XVXa = (Xa.T @ Xa - ZtX.T @ BZtX) / s2
    XV2Xa = (XVXa - BZtX.T @ Fa) / s2
    XV2Za = (Fa.T - BZtX.T @ H) / s2
    Fa, XVXa, XV2Xa, XV2Za = _glsify(Fa, XVXa, XV2Xa, XV2Za, p)
    sl = lay.slices

    def moments(f: int, g: int) -> np.ndarray:
        bf, bg = lay.widths[f], lay.widths[g]
        T = H[sl[f], sl[g]].reshape(lay.n_levels[f], bf, lay.n_levels[g], bg)
        A = T.transpose(1, 3, 0, 2).reshape(bf * bg, -1)
        return (A @ A.T).reshape(bf, bg, bf, bg)

    def v2_blocks(f: int) -> np.ndarray:
        L, b = lay.n_levels[f], lay.widths[f]
        idx = np.arange(L)
        cross = np.einsum("aic,cak->aik", ZtZB[sl[f]].reshape(L, b, q), H[:, sl[f]].reshape(q, L, b))
        return (H[sl[f], sl[f]].reshape(L, b, L, b)[idx, :, idx, :] - cross) / s2

    BF = B @ Fa
    return _QSpace(
        Fa=Fa, XVXa=XVXa, XV2Xa=XV2Xa, XV2Za=XV2Za,
        h_dot=lambda f, Y: H[:, sl[f]] @ Y,
        moments=moments, v2_blocks=v2_blocks,
        K_res=(n - 2.0 * np.trace(ZtZB) + float(np.sum(ZtZB * ZtZB.T))) / (s2 * s2),
        Q_res=(XV2Xa[:p, :p] - Fa[:, :p].T @ BF[:, :p]) / s2,
        E_res=float(XV2Xa[p, p] - Fa[:, p] @ BF[:, p]) / s2,
    )


# ------------------------------------------------------------------------------- stage 3: per-parameter blocks
def _variance_blocks(qs: _QSpace, lay: ReLayout):
    """``Phi``, ``P_r``, ``Q_rs = X'V^-1 G_r V^-1 G_s V^-1 X``, ``K_rs = tr(V^-1 G_r V^-1 G_s)``,
    ``E_rs = e' G_r V^-1 G_s e`` and ``Xe_r = X' V^-1 G_r e`` for every pair of variance parameters."""
    p = qs.Fa.shape[1] - 1
    sl = lay.slices
    m = len(lay.params) + 1
    Phi = np.linalg.inv(qs.XVXa[:p, :p])
    Phi = 0.5 * (Phi + Phi.T)
    P = np.empty((m, p, p))
    Q = np.empty((m, m, p, p))
    K = np.empty((m, m))
    E = np.empty((m, m))
    Xe = np.empty((m, p))
    # (I (x) S_r) Z' V^-1 [X r] on the factor's rows; every product below is one (p+1) x (p+1) matrix product whose
    # [:p, :p] block is the X part and whose [p, p] (or [:p, p]) entry is the residual's (one BLAS call, not several)
    DFa = []
    for f, S in lay.params:
        L, b = lay.n_levels[f], lay.widths[f]
        DFa.append(np.einsum("ij,ajc->aic", S, qs.Fa[sl[f]].reshape(L, b, p + 1)).reshape(L * b, p + 1))
    v2 = {f: qs.v2_blocks(f).sum(axis=0) for f in {f for f, _ in lay.params}}
    mom = {}
    for r, (f, S) in enumerate(lay.params):
        FD = qs.Fa[sl[f]].T @ DFa[r]                  # [X r]' V^-1 Z (I (x) S_r) Z' V^-1 [X r]
        P[r], Xe[r] = -FD[:p, :p], FD[:p, p]
        VD = qs.XV2Za[:, sl[f]] @ DFa[r]              # [X r]' V^-2 Z (I (x) S_r) Z' V^-1 [X r]
        Q[-1, r] = VD[:p, :p]
        Q[r, -1] = Q[-1, r].T
        E[-1, r] = E[r, -1] = VD[p, p]
        K[-1, r] = K[r, -1] = float(np.sum(S * v2[f]))
    for s, (g, Ss) in enumerate(lay.params):
        Y = qs.h_dot(g, DFa[s])                      # H (I (x) S_s) Z' V^-1 [X r]
        for r in range(s + 1):
            f, Sr = lay.params[r]
            DY = DFa[r].T @ Y[sl[f]]
            Q[r, s] = DY[:p, :p]
            Q[s, r] = Q[r, s].T
            E[r, s] = E[s, r] = DY[p, p]
            key = (f, g)
            if key not in mom:
                mom[key] = qs.moments(f, g)
            K[r, s] = K[s, r] = float(np.einsum("ab,cd,bcad->", Sr, Ss, mom[key]))
    P[-1] = -qs.XV2Xa[:p, :p]
    Xe[-1] = qs.XV2Xa[:p, p]
    Q[-1, -1] = qs.Q_res
    K[-1, -1] = qs.K_res
    E[-1, -1] = qs.E_res
    return Phi, P, Q, K, E, Xe


# ---------------------------------------------------------------------------------------- stage 4: assemble
def _inverse(A: np.ndarray) -> np.ndarray:
    """Inverse of a symmetric matrix, or its pseudo-inverse when it is (nearly) singular (as pbkrtest)."""
    eig = np.linalg.eigvalsh(A)
    return np.linalg.inv(A) if np.min(np.abs(eig)) > 1e-10 else np.linalg.pinv(A)


def _assemble(Phi: np.ndarray, P: np.ndarray, Q: np.ndarray, K: np.ndarray, E: np.ndarray, Xe: np.ndarray, *,
              lay: ReLayout, component_df: np.ndarray) -> DdfPieces:
    """pbkrtest's adjusted covariance and W; lmerTest's observed-information W for random-intercept fits."""
    m, p = P.shape[0], P.shape[1]
    trPGPG = np.empty((m, m))
    for r in range(m):
        PhiPr = Phi @ P[r]
        for s in range(r, m):
            trPGPG[r, s] = trPGPG[s, r] = (K[r, s] - 2.0 * np.sum(Phi * Q[r, s])
                                           + np.sum(PhiPr * (Phi @ P[s]).T))
    W = 2.0 * _inverse(trPGPG)
    U = np.zeros((p, p))
    for r in range(m):
        for s in range(m):
            U += W[r, s] * (Q[r, s] - P[r] @ Phi @ P[s])
    PhiA = Phi + 2.0 * Phi @ U @ Phi
    PhiA = 0.5 * (PhiA + PhiA.T)
    W_obs = None
    if lay.intercepts_only:
        ePGPGe = E - Xe @ Phi @ Xe.T                 # e' G_r P G_s e
        hessian = -trPGPG + 2.0 * ePGPGe
        # lmerTest differentiates in (theta, sigma): at theta_k = 0 the REML criterion is even in theta_k, so
        # that component decouples and does not enter the Satterthwaite df; in the variance parametrisation
        # it is held fixed (below lme4's singularity tolerance, as the engine's Satterthwaite does)
        theta = np.sqrt([float(np.sum(S * (lay.lam[f] @ lay.lam[f].T))) for f, S in lay.params])
        free = np.flatnonzero(np.append(theta >= BOUNDARY_THETA, True))
        W_obs = np.zeros((m, m))
        W_obs[np.ix_(free, free)] = 2.0 * _inverse(hessian[np.ix_(free, free)])
    return DdfPieces(vcov=Phi, vcov_adjusted=PhiA, P=P, W_expected=W, W_observed=W_obs, component_df=component_df)


def kr_pieces(X: np.ndarray, y: np.ndarray, lay: ReLayout, sigma2: float, *, dense: bool = False,
              root_w: np.ndarray | None = None) -> DdfPieces:
    """The pieces of the REML fit of ``y`` on ``X`` with random effects ``lay`` at residual variance ``sigma2``.

    ``root_w``: ``sqrt`` of the prior weights of a weighted fit; the rows of ``X``, ``y`` and ``Z`` are scaled by
    it (the weighted model is the unweighted model of the scaled rows). ``dense=True`` forces the dense path.
    """
    Xa = np.column_stack([X, y])                     # the response rides along as a last column
    if root_w is not None:
        Xa = Xa * root_w[:, None]
        lay = ReLayout(codes=lay.codes, n_levels=lay.n_levels, Z=tuple(z * root_w[:, None] for z in lay.Z),
                       lam=lay.lam, params=lay.params, intercepts_only=lay.intercepts_only)
    if len(lay.n_levels) > 1 or dense:
        qs = _qspace_dense(Xa, lay, float(sigma2))
    else:
        qs = _qspace_one_factor(Xa, lay, float(sigma2))
    n = Xa.shape[0]
    k = np.array([max(lay.n_levels[f] - 1, 1) for f, _ in lay.params]
                 + [max(n - np.linalg.matrix_rank(X), 1)], dtype=float)
    return _assemble(*_variance_blocks(qs, lay), lay=lay, component_df=k)

