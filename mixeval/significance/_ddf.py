"""Degrees of freedom of linear functions of the fixed effects, as emmeans offers them for lmer fits.

* ``"asymptotic"`` -- z tests (``df = inf``), the book's choice (emmeans' ``lmer.df = "asymptotic"``);
* ``"satterthwaite"`` -- lmerTest's Satterthwaite approximation (the engine's
  :meth:`LmerResult.satterthwaite_df`), standard errors from ``fit.cov_coef``; for glmer fits the
  linearised model's Satterthwaite approximation (SAS GLIMMIX's ``DDFM=SATTERTHWAITE``,
  :mod:`mixeval.significance._glmm_ddf`);
* ``"kenward-roger"`` -- pbkrtest's method (emmeans' default for lmer fits of up to 3,000 rows): the adjusted covariance
  of the fixed effects (``vcovAdj``) for the standard errors and its degrees of freedom (``Lb_ddf``);
* ``"satterthwaite-upper"`` (experimental) -- Satterthwaite's df with each variance component's part of the
  variance at an upper confidence bound (:mod:`mixeval.significance._satterthwaite`): near-nominal coverage where a
  component from 3-5 levels carries most of a mean's variance, where Satterthwaite's and Kenward-Roger's
  intervals undercover. For glmer fits and REML random-intercept lmer fits of balanced, crossed designs whose
  components have 3 or more levels (refused elsewhere: :mod:`mixeval.significance._upper_range`).

Kenward-Roger is computed in the space of the random effects: every quantity it needs (``X'V^-1X``,
``X'V^-1 G_r V^-1 X``, ``X'V^-1 G_r V^-1 G_s V^-1 X``, ``tr(V^-1 G_r V^-1 G_s)``) is a function of
the cross-products ``Z'Z``, ``Z'X``, ``X'X`` and of ``q x q`` matrices (``q`` random-effect levels),
through ``V^-1 = sigma^-2 (I - Z B Z')`` with ``B = Lambda (Lambda Z'Z Lambda + I)^-1 Lambda``
(Woodbury); no ``n x n`` matrix is formed.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.linalg import cho_factor, cho_solve
from threadpoolctl import ThreadpoolController

from ..errors import InputError
from ._glmm_ddf import glmm_ddf_pieces, is_glmm
from ._satterthwaite import satterthwaite_df, satterthwaite_upper_df

__all__ = ["DF_METHODS", "canonical_df", "DfInference", "df_inference", "kenward_roger_vcov", "DdfPieces",
           "ddf_pieces", "PBKRTEST_LIMIT", "LMERTEST_LIMIT", "default_df", "kenward_roger_problem",
           "expected_variance_covariance"]

#: Accepted ``df`` values (case-insensitive) and the method each names.
DF_METHODS: dict[str, str] = {
    "asymptotic": "asymptotic", "z": "asymptotic", "inf": "asymptotic",
    "satterthwaite": "satterthwaite", "satterth": "satterthwaite",
    "satterthwaite-upper": "satterthwaite-upper", "satterthwaite_upper": "satterthwaite-upper",
    "kenward-roger": "kenward-roger", "kenward_roger": "kenward-roger", "kr": "kenward-roger",
}

#: Relative standard deviations below this (lme4's singularity tolerance) are on the boundary: held fixed
#: in the Satterthwaite df (pbkrtest's Kenward-Roger keeps every variance parameter).
BOUNDARY_THETA = 1e-4

#: Largest number of random-effect levels for which the dense ``q x q`` Kenward-Roger pieces are formed.
KR_MAX_LEVELS = 12_000

#: emmeans' ``pbkrtest.limit``: Kenward-Roger by default for lmer fits of up to this many observations.
PBKRTEST_LIMIT = 3000

#: emmeans' ``lmerTest.limit``: Satterthwaite (where Kenward-Roger is not used) up to this many observations.
LMERTEST_LIMIT = 3000


def canonical_df(df: object) -> str:
    """The df method named by ``df`` (``"asymptotic"``, ``"satterthwaite"``, ``"kenward-roger"`` or
    ``"satterthwaite-upper"``).

    Examples
    --------
    >>> canonical_df("KR"), canonical_df("Satterthwaite"), canonical_df("asymptotic")
    ('kenward-roger', 'satterthwaite', 'asymptotic')
    """
    if isinstance(df, str):
        method = DF_METHODS.get(df.strip().lower())
        if method is not None:
            return method
    raise InputError(f"unknown degrees-of-freedom method df={df!r}; choose 'asymptotic' (z tests, the book's), "
                     "'satterthwaite' (lmerTest's), 'kenward-roger' (pbkrtest's) or "
                     "'satterthwaite-upper' (experimental: Satterthwaite with the components' shares at an upper "
                     "bound).")


@dataclass(frozen=True)
class DdfPieces:
    """Kenward-Roger and Satterthwaite pieces of a REML random-intercept fit.

    Attributes
    ----------
    vcov : ndarray
        The unadjusted covariance of the fixed effects, ``Phi = (X' V^-1 X)^-1``.
    vcov_adjusted : ndarray
        The Kenward-Roger adjusted covariance ``Phi_A = Phi + 2 Phi U Phi`` (pbkrtest's ``vcovAdj``).
    P : ndarray, shape (m, p, p)
        ``P_r = -X' V^-1 G_r V^-1 X = d Phi^-1 / d gamma_r`` for each variance parameter ``gamma_r``
        (random terms, then the residual).
    W_expected : ndarray, shape (m, m)
        ``2 I_E^-1``: covariance of the variance parameters from the expected REML information
        ``I_E[r, s] = tr(P G_r P G_s) / 2`` (``P`` the REML projection); pbkrtest's ``W``.
    W_observed : ndarray, shape (m, m)
        ``2 H^-1`` with ``H`` the Hessian of the REML criterion ``-2 l_R(gamma)``, lmerTest's covariance
        of the variance parameters (invariant to their parametrisation at an interior optimum); rows and
        columns of components on the boundary (``theta < 1e-4``) are 0, as lmerTest's Hessian in
        ``theta`` decouples them.
    component_df : ndarray, shape (m,)
        Degrees of freedom of each variance parameter's estimate: levels minus one of each grouping factor,
        ``n - rank X`` for the residual (for ``"satterthwaite-upper"``).
    """

    vcov: np.ndarray = field(repr=False)
    vcov_adjusted: np.ndarray = field(repr=False)
    P: np.ndarray = field(repr=False)
    W_expected: np.ndarray = field(repr=False)
    W_observed: np.ndarray = field(repr=False)
    component_df: np.ndarray = field(repr=False)

    def _variance_gradient(self, L: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        L = np.atleast_2d(np.asarray(L, dtype=float))
        PhiL = L @ self.vcov  # rows l' Phi
        var = np.einsum("ij,ij->i", PhiL, L)
        g = np.einsum("ij,rjk,ik->ir", PhiL, self.P, PhiL)  # -d(l' Phi l)/d gamma_r
        return var, g

    def _df(self, L: np.ndarray, W: np.ndarray) -> np.ndarray:
        return satterthwaite_df(*self._variance_gradient(L), W)

    def df_kenward_roger(self, L: np.ndarray) -> np.ndarray:
        """Kenward-Roger degrees of freedom of each row ``l`` of ``L`` (pbkrtest's ``Lb_ddf``).

        For one linear function pbkrtest's formulas reduce to ``df = 2 / A`` with
        ``A = sum_rs W_rs a_r a_s`` and ``a_r = l' Phi P_r Phi l / (l' Phi l)``, i.e.
        ``df = 2 (l' Phi l)^2 / (g' W g)`` with ``g_r = l' Phi P_r Phi l`` and ``W = W_expected``.
        """
        return self._df(L, self.W_expected)

    def df_satterthwaite(self, L: np.ndarray) -> np.ndarray:
        """Satterthwaite degrees of freedom of each row of ``L`` (lmerTest's):
        ``2 (l' Phi l)^2 / (g' W_observed g)``."""
        return self._df(L, self.W_observed)

    def df_satterthwaite_upper(self, L: np.ndarray) -> np.ndarray:
        """Satterthwaite df (``W_observed``) with each component's part of ``l' Phi l`` at its upper bound
        (:func:`mixeval.significance._satterthwaite.satterthwaite_upper_df`)."""
        var, g = self._variance_gradient(L)
        return satterthwaite_upper_df(var, g, self.W_observed, self.component_df)


def _random_intercept_terms(fit: object) -> tuple[np.ndarray, list[np.ndarray], list[int]]:
    design = getattr(fit, "design", None)
    X = getattr(design, "X", None)
    groups = getattr(design, "groups", None)
    if X is None or groups is None:
        raise InputError("Kenward-Roger degrees of freedom need the fitted rows (this fit was made from aggregates); "
                         "use df='asymptotic' or df='satterthwaite'.")
    theta = np.asarray(fit.theta, dtype=float)
    if theta.shape != (len(groups),):
        raise InputError("Kenward-Roger degrees of freedom are implemented for random-intercept models "
                         "(one variance per grouping factor); use df='satterthwaite' or df='asymptotic'.")
    codes = [np.asarray(g.codes, dtype=np.int64) for g in groups]
    sizes = [int(g.n_levels) for g in groups]
    return np.asarray(X, dtype=float), codes, sizes


def _root_weights(fit: object) -> np.ndarray | None:
    """``sqrt(w)`` of a weighted fit (residual variance ``sigma^2 / w_i``), None for an unweighted one.

    A weighted model is the unweighted model of the rows scaled by ``sqrt(w_i)``: ``V* = W^1/2 V W^1/2`` has
    the residual covariance ``sigma^2 I`` and a random-effects matrix with entries ``sqrt(w_i)``. ``X'V^-1X``,
    the traces of Kenward-Roger and the REML Hessian are invariant to that fixed transformation, so the pieces
    of the scaled rows are those of the weighted model.
    """
    weights = getattr(fit, "weights", None)
    return None if weights is None else np.sqrt(np.asarray(weights, dtype=float))


def ddf_pieces(fit: object) -> DdfPieces:
    """Kenward-Roger and Satterthwaite pieces of a REML random-intercept fit, cached per fit.

    Notes
    -----
    Variance parameters ``gamma = (sigma_1^2, ..., sigma_K^2, sigma^2)`` with ``V = sum_r gamma_r G_r``,
    ``G_k = Z_k Z_k'`` and ``G_res = I`` (pbkrtest's ``get_SigmaG``). With ``Phi = (X'V^-1X)^-1``,
    ``P_r = -X'V^-1 G_r V^-1 X``, ``Q_rs = X'V^-1 G_r V^-1 G_s V^-1 X`` and
    ``I_E[r, s] = tr(V^-1 G_r V^-1 G_s) - 2 tr(Phi Q_rs) + tr(Phi P_r Phi P_s) = tr(P G_r P G_s)``,
    ``W = 2 I_E^-1``, ``U = sum_rs W_rs (Q_rs - P_r Phi P_s)`` and ``Phi_A = Phi + 2 Phi U Phi``
    (Kenward & Roger 1997; the second-derivative term vanishes for a covariance linear in ``gamma``).
    The Hessian of the REML criterion is ``H_rs = -tr(P G_r P G_s) + 2 e' G_r P G_s e`` with
    ``e = P y = V^-1 (y - X b)``. Every product is formed from ``Z'Z``, ``Z'[X r]``, ``[X r]'[X r]``
    (``r`` the marginal residuals) through ``V^-1 = sigma^-2 (I - Z B Z')``.
    """
    key = id(fit)
    cached = _CACHE.get(key)
    if cached is not None and cached[0] is fit:
        return cached[1]
    if not getattr(fit, "reml", True):
        raise InputError("Kenward-Roger degrees of freedom are defined for REML fits; fit with REML=True "
                         "(or use df='satterthwaite' or df='asymptotic').")
    X, codes, sizes = _random_intercept_terms(fit)
    y = np.asarray(fit.design.y, dtype=float)
    root_w = _root_weights(fit)
    # one BLAS thread for moderate q: under load, thread oversubscription makes the small dense steps
    # many times slower (as in the engine)
    limit = _controller().limit(limits=1, user_api="blas") if sum(sizes) < 2000 else contextlib.nullcontext()
    with limit:
        pieces = _pieces(X, y, codes, sizes, np.asarray(fit.theta, dtype=float), float(fit.sigma2), root_w=root_w)
    if len(_CACHE) >= 8:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = (fit, pieces)
    return pieces


_CACHE: dict[int, tuple[object, DdfPieces]] = {}
_CONTROLLER: list[ThreadpoolController] = []


def _controller() -> ThreadpoolController:
    """One threadpoolctl controller per process (creating it inspects the loaded libraries: slow)."""
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


def _pieces(X: np.ndarray, y: np.ndarray, codes: list[np.ndarray], sizes: list[int], theta: np.ndarray,
            sigma2: float, *, dense: bool = False, root_w: np.ndarray | None = None) -> DdfPieces:
    """Stage chain: cross-products -> q-space blocks (diagonal for one factor, else dense) -> pieces.

    ``root_w``: ``sqrt`` of the prior weights of a weighted fit (:func:`_root_weights`); the rows of ``X`` and
    ``y`` and the entries of ``Z`` are scaled by it."""
    if root_w is not None:
        X, y = X * root_w[:, None], y * root_w
    q = int(sum(sizes))
    if len(sizes) > 1 or dense:
        if q > KR_MAX_LEVELS:
            raise InputError(f"Kenward-Roger and Satterthwaite need dense matrices over the {q:,} random-effect "
                             f"levels of crossed factors (limit {KR_MAX_LEVELS:,}); use df='asymptotic'.")
        blocks = _blocks_dense(X, y, codes, sizes, theta, sigma2, root_w)
    else:
        blocks = _blocks_one_factor(X, y, codes[0], sizes[0], float(theta[0]), sigma2, root_w)
    # df of each variance parameter's estimate: levels - 1 per factor, n - rank X for the residual
    k = np.array([max(n - 1, 1) for n in sizes] + [max(len(y) - np.linalg.matrix_rank(X), 1)], dtype=float)
    return _assemble(*blocks, theta=theta, component_df=k)


def _glsify(Fa: np.ndarray, XVXa: np.ndarray, XV2Xa: np.ndarray, XV2Za: np.ndarray, p: int):
    """``[X y] -> [X r]`` with ``r = y - X b`` the marginal residuals of the GLS estimate ``b`` at theta."""
    beta = np.linalg.solve(XVXa[:p, :p], XVXa[:p, p])
    T = np.eye(p + 1)
    T[:p, p] = -beta
    return Fa @ T, T.T @ XVXa @ T, T.T @ XV2Xa @ T, T.T @ XV2Za


def _blocks_one_factor(X: np.ndarray, y: np.ndarray, codes: np.ndarray, q: int, theta: float, s2: float,
                       root_w: np.ndarray | None = None):
    """The q-space blocks of a single random intercept: ``Z'Z``, ``B`` and ``Z'V^-1Z`` are diagonal (O(n p + q p^2));
    ``Z``'s entries are ``root_w`` (ones when None)."""
    n, p = X.shape
    Xa = np.column_stack([X, y])
    z = np.ones(n) if root_w is None else root_w
    d = np.bincount(codes, weights=z * z, minlength=q).astype(float)  # diag Z'Z
    ZtX = np.zeros((q, p + 1))
    np.add.at(ZtX, codes, z[:, None] * Xa)
    XtX = Xa.T @ Xa
    b = theta * theta / (1.0 + theta * theta * d)                  # diag B
    db = d * b
    h = (d - d * db) / s2                                          # diag Z' V^-1 Z
    Fa = (ZtX - db[:, None] * ZtX) / s2
    BZtX = b[:, None] * ZtX
    XVXa = (XtX - ZtX.T @ BZtX) / s2
    XV2Xa = (XVXa - BZtX.T @ Fa) / s2
    XV2Za = (Fa.T - BZtX.T * h[None, :]) / s2
    Fa, XVXa, XV2Xa, XV2Za = _glsify(Fa, XVXa, XV2Xa, XV2Za, p)
    F, XV2X, XV2Z, u = Fa[:, :p], XV2Xa[:p, :p], XV2Za[:p], Fa[:, p]
    Phi = np.linalg.inv(XVXa[:p, :p])
    Phi = 0.5 * (Phi + Phi.T)
    P = np.array([-F.T @ F, -XV2X])
    Xe = np.array([F.T @ u, XV2Xa[:p, p]])
    Q = np.empty((2, 2, p, p))
    Q[0, 0] = F.T @ (h[:, None] * F)
    Q[1, 0] = XV2Z @ F
    Q[0, 1] = Q[1, 0].T
    Q[1, 1] = (XV2X - F.T @ (b[:, None] * F)) / s2
    K = np.empty((2, 2))
    K[0, 0] = float(np.sum(h * h))
    K[0, 1] = K[1, 0] = (float(np.sum(h)) - float(np.sum(db * h))) / s2
    K[1, 1] = (n - 2.0 * float(np.sum(db)) + float(np.sum(db * db))) / (s2 * s2)
    E = np.empty((2, 2))
    E[0, 0] = float(u @ (h * u))
    E[0, 1] = E[1, 0] = float(XV2Za[p] @ u)
    E[1, 1] = (XV2Xa[p, p] - float(u @ (b * u))) / s2
    return Phi, P, Q, K, E, Xe


def _blocks_dense(X: np.ndarray, y: np.ndarray, codes: list[np.ndarray], sizes: list[int], theta: np.ndarray,
                  sigma2: float, root_w: np.ndarray | None = None):
    """The q-space blocks with dense ``q x q`` matrices (crossed or nested factors); ``Z``'s entries are ``root_w``
    (ones when None)."""
    n, p = X.shape
    q = int(sum(sizes))
    Xa = np.column_stack([X, y])                     # the response rides along as a last column
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    cols = np.concatenate([c + o for c, o in zip(codes, offsets[:-1])])
    rows = np.tile(np.arange(n), len(codes))
    entries = np.ones(rows.size) if root_w is None else np.tile(root_w, len(codes))
    Z = sp.csr_matrix((entries, (rows, cols)), shape=(n, q))
    ZtZ_sparse = (Z.T @ Z).tocsr()
    ZtZ = ZtZ_sparse.toarray()
    ZtX = np.asarray(Z.T @ Xa)
    XtX = Xa.T @ Xa
    lam = np.repeat(theta, sizes)
    B = lam[:, None] * _inverse_m(ZtZ, lam, sizes[0]) * lam[None, :]
    B = 0.5 * (B + B.T)                              # V^-1 = (I - Z B Z') / s2
    s2 = sigma2
    ZtZB = np.asarray(ZtZ_sparse @ B)
    H = (ZtZ - np.asarray((ZtZ_sparse @ ZtZB.T).T)) / s2  # Z' V^-1 Z
    Fa = (ZtX - ZtZB @ ZtX) / s2                     # Z' V^-1 [X r]
    BZtX = B @ ZtX
    XVXa = (XtX - ZtX.T @ BZtX) / s2                 # [X r]' V^-1 [X r]
    XV2Xa = (XVXa - BZtX.T @ Fa) / s2                # [X r]' V^-2 [X r]
    XV2Za = (Fa.T - BZtX.T @ H) / s2                 # [X r]' V^-2 Z
    Fa, XVXa, XV2Xa, XV2Za = _glsify(Fa, XVXa, XV2Xa, XV2Za, p)
    F, XV2X, XV2Z = Fa[:, :p], XV2Xa[:p, :p], XV2Za[:p]
    u = Fa[:, p]                                     # Z' e with e = V^-1 r
    Phi = np.linalg.inv(XVXa[:p, :p])
    Phi = 0.5 * (Phi + Phi.T)
    slices = [slice(int(offsets[k]), int(offsets[k + 1])) for k in range(len(sizes))]
    m = len(sizes) + 1
    P = np.empty((m, p, p))
    Q = np.empty((m, m, p, p))
    K = np.empty((m, m))                             # tr(V^-1 G_r V^-1 G_s)
    E = np.empty((m, m))                             # e' G_r V^-1 G_s e
    Xe = np.empty((m, p))                            # X' V^-1 G_r e
    for k, sk in enumerate(slices):
        P[k] = -F[sk].T @ F[sk]
        Xe[k] = F[sk].T @ u[sk]
    P[-1] = -XV2X
    Xe[-1] = XV2Xa[:p, p]
    for k, sk in enumerate(slices):
        for l_, sl in enumerate(slices[k:], start=k):
            Q[k, l_] = F[sk].T @ H[sk, sl] @ F[sl]
            Q[l_, k] = Q[k, l_].T
            K[k, l_] = K[l_, k] = float(np.sum(H[sk, sl] ** 2))
            E[k, l_] = E[l_, k] = float(u[sk] @ H[sk, sl] @ u[sl])
        Q[-1, k] = XV2Z[:, sk] @ F[sk]
        Q[k, -1] = Q[-1, k].T
        K[-1, k] = K[k, -1] = (np.trace(H[sk, sk]) - float(np.sum(ZtZB[sk, :] * H[:, sk].T))) / s2
        E[-1, k] = E[k, -1] = float(XV2Za[p, sk] @ u[sk])
    Q[-1, -1] = (XV2X - F.T @ B @ F) / s2
    K[-1, -1] = (n - 2.0 * np.trace(ZtZB) + float(np.sum(ZtZB * ZtZB.T))) / (s2 * s2)
    E[-1, -1] = (XV2Xa[p, p] - u @ B @ u) / s2      # e' V^-1 e = r' V^-3 r
    return Phi, P, Q, K, E, Xe


def _assemble(Phi: np.ndarray, P: np.ndarray, Q: np.ndarray, K: np.ndarray, E: np.ndarray, Xe: np.ndarray, *,
              theta: np.ndarray, component_df: np.ndarray) -> DdfPieces:
    """pbkrtest's adjusted covariance and W, lmerTest's observed-information W, from the q-space blocks."""
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
    ePGPGe = E - Xe @ Phi @ Xe.T                     # e' G_r P G_s e
    hessian = -trPGPG + 2.0 * ePGPGe
    # lmerTest differentiates in (theta, sigma): at theta_k = 0 the REML criterion is even in theta_k, so
    # that component decouples and does not enter the Satterthwaite df; in the variance parametrisation
    # it is held fixed (below lme4's singularity tolerance, as the engine's Satterthwaite does)
    free = np.flatnonzero(np.append(theta >= BOUNDARY_THETA, True))
    W_obs = np.zeros((m, m))
    W_obs[np.ix_(free, free)] = 2.0 * _inverse(hessian[np.ix_(free, free)])
    return DdfPieces(vcov=Phi, vcov_adjusted=PhiA, P=P, W_expected=W, W_observed=W_obs, component_df=component_df)


def _inverse_m(ZtZ: np.ndarray, lam: np.ndarray, q0: int) -> np.ndarray:
    """``M^-1`` for ``M = Lambda Z'Z Lambda + I``, whose first ``q0 x q0`` block is diagonal.

    The first grouping factor (the largest, as lme4 orders them) has one level per row, so its block of
    ``Z'Z`` is diagonal; eliminating it leaves a Schur complement over the other factors' levels only
    (``q - q0``), and the cost is ``O(q0^2 (q - q0))`` instead of ``O(q^3)``.
    """
    q = ZtZ.shape[0]
    d = lam[:q0] * lam[:q0] * np.diag(ZtZ)[:q0] + 1.0
    if q0 == q:
        return np.diag(1.0 / d)
    C = lam[:q0, None] * ZtZ[:q0, q0:] * lam[None, q0:]
    R = lam[q0:, None] * ZtZ[q0:, q0:] * lam[None, q0:]
    R[np.diag_indices(q - q0)] += 1.0
    DinvC = C / d[:, None]
    S = R - C.T @ DinvC
    Sinv = cho_solve(cho_factor(S, lower=True, check_finite=False), np.eye(q - q0), check_finite=False)
    DinvCSinv = DinvC @ Sinv
    out = np.empty((q, q))
    out[:q0, :q0] = DinvCSinv @ DinvC.T
    out[np.arange(q0), np.arange(q0)] += 1.0 / d
    out[:q0, q0:] = -DinvCSinv
    out[q0:, :q0] = -DinvCSinv.T
    out[q0:, q0:] = Sinv
    return out


def _inverse(A: np.ndarray) -> np.ndarray:
    """Inverse of a symmetric matrix, or its pseudo-inverse when it is (nearly) singular (as pbkrtest)."""
    eig = np.linalg.eigvalsh(A)
    return np.linalg.inv(A) if np.min(np.abs(eig)) > 1e-10 else np.linalg.pinv(A)


def expected_variance_covariance(fit: object, variances: dict[str, float] | None = None) -> np.ndarray:
    """``2 I_E^-1``: the asymptotic covariance of the REML estimates of ``(sigma_1^2, ..., sigma_K^2, sigma^2)`` (the
    groups in ``fit.group_names`` order, then the residual) from the expected information, at the fit's variances
    or at ``variances`` (``{group: variance}`` with ``"Residual"``): pbkrtest's ``W``, which depends on the design
    and the variances only (no response). For REML random-intercept lmer fits (:func:`kenward_roger_problem`).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import lmer
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"g": np.repeat(np.arange(20), 5)})
    >>> df["y"] = rng.normal(size=20)[df.g] + rng.normal(size=100)
    >>> W = expected_variance_covariance(lmer("y ~ 1 + (1|g)", df), {"g": 1.0, "Residual": 1.0})
    >>> round(float(W[1, 1]), 4)  # var of the residual variance: 2 sigma^4 / (n - 20) in a balanced one-way layout
    0.025
    """
    problem = kenward_roger_problem(fit)
    if problem is not None:
        raise InputError(f"the expected information of the variance components is computed for REML random-intercept "
                         f"lmer fits; this fit {problem}.")
    X, codes, sizes = _random_intercept_terms(fit)
    v = fit.variances if variances is None else variances
    sigma2 = float(v["Residual"])
    theta = np.sqrt(np.maximum([float(v[g]) for g in fit.group_names], 0.0) / sigma2)
    y = np.asarray(fit.design.y, dtype=float)
    return _pieces(X, y, codes, sizes, theta, sigma2, root_w=_root_weights(fit)).W_expected.copy()


def kenward_roger_vcov(fit: object) -> np.ndarray:
    """The Kenward-Roger adjusted covariance of the fixed effects of a REML fit (pbkrtest's ``vcovAdj``).

    Parameters
    ----------
    fit : LmerResult
        A REML fit with random intercepts only.

    Returns
    -------
    ndarray, shape (p, p)
        ``Phi + 2 Phi U Phi`` (see :func:`kenward_roger`), in the order of ``fit.fixed_names``.

    Raises
    ------
    InputError
        An ML fit, a fit without rows, random slopes, or more than ``KR_MAX_LEVELS`` random-effect levels.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import lmer
    >>> rng = np.random.default_rng(0)
    >>> g = np.repeat(np.arange(12), 3)
    >>> df = pd.DataFrame({"item": g, "system": np.tile(["A", "B", "C"], 12)})
    >>> df = df.iloc[rng.permutation(36)[:30]]  # unbalanced
    >>> df["score"] = rng.normal(size=12)[df.item] + rng.normal(size=30)
    >>> fit = lmer("score ~ system + (1|item)", df)
    >>> bool(np.all(np.diag(kenward_roger_vcov(fit)) >= np.diag(fit.cov_coef)))
    True
    """
    return ddf_pieces(fit).vcov_adjusted.copy()


@dataclass(frozen=True)
class DfInference:
    """The covariance used for standard errors and the degrees of freedom of linear functions.

    Attributes
    ----------
    method : str
        ``"asymptotic"``, ``"satterthwaite"``, ``"kenward-roger"`` or ``"satterthwaite-upper"``.
    vcov : ndarray
        Covariance of the fixed effects for the standard errors (Kenward-Roger: adjusted).
    """

    method: str
    vcov: np.ndarray = field(repr=False)
    fit: object = field(repr=False, compare=False)

    def df(self, L: np.ndarray) -> np.ndarray:
        """Degrees of freedom of each row of ``L`` (``inf`` for the asymptotic method)."""
        L = np.atleast_2d(np.asarray(L, dtype=float))
        if self.method == "asymptotic":
            return np.full(len(L), np.inf)
        if self.method == "kenward-roger":
            return ddf_pieces(self.fit).df_kenward_roger(L)
        if self.method == "satterthwaite-upper":
            pieces = glmm_ddf_pieces(self.fit) if is_glmm(self.fit) else ddf_pieces(self.fit)
            return pieces.df_satterthwaite_upper(L)
        if is_glmm(self.fit):
            return glmm_ddf_pieces(self.fit).df_satterthwaite(L)
        if _has_pieces(self.fit):
            return ddf_pieces(self.fit).df_satterthwaite(L)
        return np.array([_satterthwaite(self.fit, row) for row in L])  # the engine's, by numerical derivatives


def _require_upper_range(fit: object) -> None:
    from ._upper_range import upper_range_problems

    problems = upper_range_problems(fit)
    if problems:
        raise InputError("df='satterthwaite-upper' is experimental and calibrated only for balanced, crossed "
                         "random-intercept designs whose components have at least 3 levels; here "
                         + "; ".join(problems) + ". Use df='satterthwaite' or df='asymptotic'.")


def _has_pieces(fit: object) -> bool:
    return kenward_roger_problem(fit) is None


def kenward_roger_problem(fit: object) -> str | None:
    """Why Kenward-Roger is not available for ``fit`` (a phrase completing "the fit ..."), or None when it is.

    Kenward-Roger needs a REML lmer fit with random intercepts made from the rows, with at most
    ``KR_MAX_LEVELS`` random-effect levels over crossed factors (weighted fits included).
    """
    if is_glmm(fit) or _is_ordinal(fit):
        return "is not a linear mixed model"
    design = getattr(fit, "design", None)
    if not getattr(fit, "reml", False):
        return "was fitted by maximum likelihood (REML=False)"
    if getattr(design, "X", None) is None:
        return "was made from aggregates, not from the rows"
    if np.shape(fit.theta) != (len(design.groups),):
        return "has random slopes"
    if len(design.groups) > 1 and sum(g.n_levels for g in design.groups) > KR_MAX_LEVELS:
        return f"has more than {KR_MAX_LEVELS:,} random-effect levels over crossed factors"
    return None


def _is_ordinal(fit: object) -> bool:
    return getattr(getattr(fit, "family", None), "name", None) == "ordinal"


def default_df(fit: object) -> tuple[str, str]:
    """The df method emmeans chooses for ``fit`` by default, and why (a sentence for the tables' notes).

    Returns
    -------
    (method, reason)
        GLMMs and ordinal fits: ``"asymptotic"`` (emmeans' for glmer and clmm fits). Linear mixed models (emmeans'
        ``lmer.df`` rule): ``"kenward-roger"`` while ``nobs <= PBKRTEST_LIMIT`` (3,000), else
        ``"satterthwaite"`` while ``nobs <= LMERTEST_LIMIT`` (3,000, so never with emmeans' limits), else
        ``"asymptotic"``. Where this fit cannot have Kenward-Roger (an ML fit, random slopes, aggregates;
        :func:`kenward_roger_problem`), Satterthwaite takes its place within the limit, as emmeans falls back when
        pbkrtest cannot be used.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import lmer
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"item": np.repeat(np.arange(40), 3), "system": np.tile(["A", "B", "C"], 40)})
    >>> df["score"] = rng.normal(size=40)[df.item] + rng.normal(size=120)
    >>> default_df(lmer("score ~ system + (1|item)", df))[0]
    'kenward-roger'
    >>> default_df(lmer("score ~ system + (1|item)", df, REML=False))[0]
    'satterthwaite'
    """
    if is_glmm(fit) or _is_ordinal(fit):
        return "asymptotic", f"the default: emmeans' for {'clmm' if _is_ordinal(fit) else 'glmer'} fits"
    n = int(fit.nobs)
    problem = kenward_roger_problem(fit)
    if n <= PBKRTEST_LIMIT and problem is None:
        return "kenward-roger", f"the default: emmeans' for lmer fits of up to {PBKRTEST_LIMIT:,} observations ({n:,} here)"
    if n <= LMERTEST_LIMIT and hasattr(fit, "satterthwaite_df"):
        why = f"this fit {problem}" if n <= PBKRTEST_LIMIT else f"more than {PBKRTEST_LIMIT:,} observations"
        return "satterthwaite", (f"the default: emmeans' fallback from Kenward-Roger for lmer fits of up to "
                                 f"{LMERTEST_LIMIT:,} observations ({why})")
    if n <= LMERTEST_LIMIT:
        return "asymptotic", f"the default: this fit {problem} and has no Satterthwaite df"
    return "asymptotic", (f"the default: emmeans' for lmer fits of more than {LMERTEST_LIMIT:,} observations ({n:,} "
                          "here; df='kenward-roger' or df='satterthwaite' give t intervals)")


def _satterthwaite(fit: object, row: np.ndarray) -> float:
    if not np.any(row):
        return float("nan")
    return float(fit.satterthwaite_df(row))


def df_inference(fit: object, df: str = "asymptotic") -> DfInference:
    """Standard-error covariance and degrees-of-freedom function of ``fit`` for the method ``df``.

    ``"satterthwaite-upper"`` (experimental) is refused outside its calibrated range
    (:func:`mixeval.significance._upper_range.upper_range_problems`).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import lmer
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"item": np.repeat(np.arange(12), 2), "system": np.tile(["A", "B"], 12)})
    >>> df["score"] = rng.normal(size=12)[df.item] + rng.normal(size=24)
    >>> inf = df_inference(lmer("score ~ system + (1|item)", df), "kenward-roger")
    >>> inf.method, inf.df([0.0, 1.0]).round(6).tolist()   # the paired design: n - 1
    ('kenward-roger', [11.0])
    """
    method = canonical_df(df)
    if method == "satterthwaite-upper":
        _require_upper_range(fit)
    if is_glmm(fit):
        if method == "kenward-roger":
            raise InputError("Kenward-Roger degrees of freedom are defined for linear mixed models; for a glmer fit "
                             "use df='satterthwaite' (the linearised model's, SAS GLIMMIX's) or df='asymptotic' "
                             "(z, emmeans' for glmer).")
        return DfInference(method, np.asarray(fit.cov_coef, dtype=float), fit)
    if method == "kenward-roger":
        return DfInference(method, ddf_pieces(fit).vcov_adjusted, fit)
    if method == "satterthwaite-upper" and not _has_pieces(fit):
        raise InputError("df='satterthwaite-upper' is implemented for glmer fits and REML random-intercept lmer "
                         f"fits made from the rows; this fit {kenward_roger_problem(fit)}. Use df='satterthwaite' or "
                         "df='asymptotic' (Kenward-Roger needs the same kind of fit).")
    if method == "satterthwaite" and not hasattr(fit, "satterthwaite_df"):
        raise InputError("Satterthwaite degrees of freedom need a fit from mixeval.lmer(); use df='asymptotic'.")
    return DfInference(method, np.asarray(fit.cov_coef, dtype=float), fit)
