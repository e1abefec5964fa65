"""The profiled deviance of a model with vector-valued random-effects terms (random slopes).

The random-intercept path (:mod:`._stats`, :mod:`._deviance`) exploits scalar
relative factors. Here every term ``k`` has a ``p_k x p_k`` lower-triangular
factor ``Lambda_k`` (lme4's ``mkReTrms`` layout, :mod:`._reterms`), and the same
Schur-complement idea is generalised: the term with most levels (term 0) gives
a block-diagonal part of ``A = Lambda' Z'Z Lambda + I`` with one ``p_0 x p_0``
block per level, factorised for all levels at once (batched Cholesky); the other
terms' block is dense.

With ``L_l`` the Cholesky factor of level ``l``'s block ``A_00,l``,
``F = L^{-1} A_0r``, ``g_0 = L^{-1} Lambda_0' Z_0'W``, the Schur complement
``S = A_rr - F'F`` and ``h = Lambda_r' Z_r'W - F' g_0``::

    log|A|        = sum_l log|A_00,l| + log|S|
    W'Z Lambda A^{-1} Lambda' Z'W = g_0' g_0 + h' S^{-1} h

and ``M = W'W - W'Z Lambda A^{-1} Lambda' Z'W`` gives ``beta``, the penalised
residual sum of squares and the profiled REML/ML criteria exactly as in
:mod:`._deviance` (Bates et al. 2015, Eqs. 34 and 41). Everything is computed
from sums per level and per pair of levels (:class:`BlockStats`), formed once;
an evaluation costs ``O(q_0 q_r^2 + q_r^3)`` (``q_0 = n_0 p_0``,
``q_r`` the other terms' random effects), independent of the number of rows.
The dense ``q_0 x q_r`` cross block limits the designs this evaluator takes
(:data:`MAX_CROSS_ENTRIES`); random-intercept models use the intercept path.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import LinAlgError, cho_solve, cholesky

from ..errors import InputError
from ._deviance import profile_fixed_effects, profiled_criterion
from ._optimize import THETA_RTOL, OptimResult, minimize_deviance
from ._reterms import ReStructure, _tril_template, theta_to_factors

__all__ = ["BlockStats", "GeneralParts", "compute_block_stats", "general_deviance_parts", "general_deviance",
           "general_deviance_and_gradient", "general_random_effects", "optimize_general", "gradient_polish",
           "MAX_CROSS_ENTRIES"]


#: largest ``q_0 * q_r`` (entries of the dense cross block) the evaluator accepts (about 400 MB)
MAX_CROSS_ENTRIES = 50_000_000


@dataclass(frozen=True)
class BlockStats:
    """Cross-products of ``Z = [Z_0 Z_r]`` and ``W = [X y]`` for vector-valued terms.

    Attributes
    ----------
    nobs, p : int
        Rows and fixed-effect columns.
    dims : tuple of int
        Coefficients per term ``p_k`` (term 0 has the most levels).
    n_levels : tuple of int
        Levels per term.
    c00 : ndarray, shape (n_0, p_0, p_0)
        The diagonal blocks of ``Z_0'Z_0`` (one per level of term 0).
    c0r : ndarray, shape (q_0, q_r)
        ``Z_0'Z_r``.
    crr : ndarray, shape (q_r, q_r)
        ``Z_r'Z_r``.
    z0w, zrw : ndarray, shape (q_0, p + 1), (q_r, p + 1)
        ``Z_0'W`` and ``Z_r'W``.
    ww : ndarray, shape (p + 1, p + 1)
        ``W'W`` (last row/column: the response).
    """

    nobs: int
    p: int
    dims: tuple[int, ...]
    n_levels: tuple[int, ...]
    c00: np.ndarray = field(repr=False)
    c0r: np.ndarray = field(repr=False)
    crr: np.ndarray = field(repr=False)
    z0w: np.ndarray = field(repr=False)
    zrw: np.ndarray = field(repr=False)
    ww: np.ndarray = field(repr=False)

    @property
    def n_terms(self) -> int:
        return len(self.dims)

    @property
    def n_theta(self) -> int:
        return int(sum(d * (d + 1) // 2 for d in self.dims))


def compute_block_stats(re: ReStructure, X: np.ndarray, y: np.ndarray) -> BlockStats:
    """One pass over the rows: the cross-products :func:`general_deviance_parts` needs.

    Parameters
    ----------
    re : ReStructure
        Terms in the design's order (the first has the most levels).
    X : ndarray, shape (n, p)
    y : ndarray, shape (n,)

    Returns
    -------
    BlockStats

    Raises
    ------
    InputError
        When the dense cross block ``Z_0'Z_r`` would exceed :data:`MAX_CROSS_ENTRIES` entries.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import build_design
    >>> from mixeval.mixed._reterms import build_restructure
    >>> df = pd.DataFrame({"y": [1.0, 2, 3, 5, 4, 6], "x": [0.0, 1, 0, 1, 0, 1], "g": list("aabbcc")})
    >>> d = build_design("y ~ x + (1 + x|g)", df)
    >>> compute_block_stats(build_restructure(d), d.X, d.y).c00[0]
    array([[2., 1.],
           [1., 1.]])
    """
    terms = re.terms
    W = np.column_stack([X, y]).astype(float)
    p = X.shape[1]
    if not terms:
        empty = np.zeros((0, p + 1))
        return BlockStats(re.nobs, p, (), (), np.zeros((0, 0, 0)), np.zeros((0, 0)), np.zeros((0, 0)), empty, empty,
                          W.T @ W)
    t0 = terms[0]
    q0 = t0.n_levels * t0.n_coef
    qr = re.q - q0
    if q0 * qr > MAX_CROSS_ENTRIES:
        raise InputError(
            f"the random-slope model has {q0} x {qr} random-effect pairs between its largest term {t0.group!r} and "
            "the others, too many for the dense evaluator of slope models; fit fewer slope terms or group "
            "levels, or the random intercepts alone."
        )
    x0 = t0.X
    outer = x0[:, :, None] * x0[:, None, :]
    c00 = np.zeros((t0.n_levels, t0.n_coef, t0.n_coef))
    np.add.at(c00, t0.codes, outer)
    zt = re.Zt.tocsr()
    zw = np.asarray(zt @ W)
    if qr:
        zr = zt[q0:]
        c0r = np.asarray((zt[:q0] @ zr.T).toarray())
        crr = np.asarray((zr @ zr.T).toarray())
    else:
        c0r = np.zeros((q0, 0))
        crr = np.zeros((0, 0))
    return BlockStats(nobs=re.nobs, p=p, dims=tuple(t.n_coef for t in terms),
                      n_levels=tuple(t.n_levels for t in terms), c00=c00, c0r=c0r, crr=crr,
                      z0w=zw[:q0], zrw=zw[q0:], ww=W.T @ W)


@dataclass(frozen=True)
class GeneralParts:
    """Everything computed on the way to the deviance at one theta (the general evaluator)."""

    theta: np.ndarray
    deviance: float
    reml: bool
    logdet_a: float
    logdet_mxx: float
    r2: float
    beta: np.ndarray
    mxx: np.ndarray = field(repr=False)
    factors: list = field(repr=False)
    linv: np.ndarray = field(repr=False)
    g0: np.ndarray = field(repr=False)
    f: np.ndarray = field(repr=False)
    h: np.ndarray = field(repr=False)
    chol_s: np.ndarray = field(repr=False)


def _left_lambda_t(m: np.ndarray, dims, n_levels, lams) -> np.ndarray:
    """``Lambda' M`` for ``M`` with rows in the ReStructure layout (terms, levels, coefficients)."""
    return _left_lambda(m, dims, n_levels, [lam.T for lam in lams])


def _right_lambda(m: np.ndarray, dims, n_levels, lams) -> np.ndarray:
    """``M Lambda`` for ``M`` with columns in the ReStructure layout: ``(Lambda' M')'``."""
    return _left_lambda_t(m.T, dims, n_levels, lams).T


def _terms_of(stats: BlockStats):
    """A stand-in for the ReStructure's terms: only the dimensions matter for theta_to_factors."""
    return tuple(_Dim(d) for d in stats.dims)


@dataclass(frozen=True)
class _Dim:
    n_coef: int

    @property
    def n_theta(self) -> int:
        return self.n_coef * (self.n_coef + 1) // 2


def general_deviance_parts(stats: BlockStats, theta: np.ndarray, reml: bool) -> GeneralParts:
    """Evaluate the profiled deviance of a model with vector-valued terms at ``theta``.

    Parameters
    ----------
    stats : BlockStats
    theta : ndarray, shape (n_theta,)
        lme4's theta: per term the lower triangle of ``Lambda_k`` column-wise.
    reml : bool
        REML criterion if True, else the ML deviance.

    Returns
    -------
    GeneralParts

    Raises
    ------
    LinAlgError
        Where the criterion is undefined (a residual sum of squares of 0, a singular ``M_XX``).
    """
    theta = np.asarray(theta, dtype=float)
    p, n = stats.p, stats.nobs
    lams = theta_to_factors(_terms_of(stats), theta)
    if stats.n_terms:
        lam0, d0, n0 = lams[0], stats.dims[0], stats.n_levels[0]
        a00 = lam0.T @ stats.c00 @ lam0
        a00 += np.eye(d0)[None]
        chol0 = np.linalg.cholesky(a00)
        logdet_a = 2.0 * float(np.sum(np.log(np.diagonal(chol0, axis1=1, axis2=2))))
        linv = np.linalg.inv(chol0)
        g0 = linv @ (lam0.T @ stats.z0w.reshape(n0, d0, p + 1))
        g0 = g0.reshape(n0 * d0, p + 1)
        quad = g0.T @ g0
    else:
        linv = np.zeros((0, 0, 0))
        g0 = np.zeros((0, p + 1))
        quad = np.zeros_like(stats.ww)
        logdet_a = 0.0
    qr = stats.crr.shape[0]
    if qr:
        rdims, rlev, rlams = stats.dims[1:], stats.n_levels[1:], lams[1:]
        a0r = _right_lambda(stats.c0r, rdims, rlev, rlams)
        a0r = lam0.T @ a0r.reshape(n0, d0, qr)
        f = (linv @ a0r).reshape(n0 * d0, qr)
        arr = _left_lambda_t(_right_lambda(stats.crr, rdims, rlev, rlams), rdims, rlev, rlams)
        s = arr - f.T @ f
        s[np.diag_indices_from(s)] += 1.0
        chol_s = cholesky(s, lower=True, check_finite=False)
        h = _left_lambda_t(stats.zrw, rdims, rlev, rlams) - f.T @ g0
        quad = quad + h.T @ cho_solve((chol_s, True), h, check_finite=False)
        logdet_a += 2.0 * float(np.sum(np.log(np.diag(chol_s))))
    else:
        f = np.zeros((g0.shape[0], 0))
        h = np.zeros((0, p + 1))
        chol_s = np.zeros((0, 0))
    beta, mxx, logdet_mxx, r2 = profile_fixed_effects(stats.ww - quad, p)
    dev = profiled_criterion(logdet_a, logdet_mxx, r2, n, p, reml)
    return GeneralParts(theta=theta.copy(), deviance=float(dev), reml=reml, logdet_a=logdet_a,
                        logdet_mxx=logdet_mxx, r2=r2, beta=beta, mxx=mxx, factors=lams, linv=linv, g0=g0,
                        f=f, h=h, chol_s=chol_s)


def general_deviance(stats: BlockStats, theta: np.ndarray, reml: bool) -> float:
    """The profiled REML criterion or ML deviance at ``theta`` (``inf`` where undefined).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import build_design
    >>> from mixeval.mixed._reterms import build_restructure
    >>> df = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")})
    >>> d = build_design("y ~ 1 + (1|g)", df)
    >>> s = compute_block_stats(build_restructure(d), d.X, d.y)
    >>> round(general_deviance(s, np.array([0.0]), reml=False), 3)  # theta = 0: the linear model
    25.176
    """
    try:
        return general_deviance_parts(stats, theta, reml).deviance
    except (LinAlgError, np.linalg.LinAlgError):
        return float("inf")


def general_random_effects(stats: BlockStats, parts: GeneralParts) -> list[np.ndarray]:
    """Conditional modes ``b = Lambda u`` per term, each of shape ``(n_levels_k, p_k)``.

    ``u`` solves ``A u = Lambda' Z'(y - X beta)``: ``u_r = S^{-1} h c`` and
    ``u_0 = L^{-T} (g_0 c - F u_r)`` per level, with ``c = (-beta, 1)``.
    """
    if not stats.n_terms:
        return []
    c = np.append(-parts.beta, 1.0)
    lams = parts.factors
    d0, n0 = stats.dims[0], stats.n_levels[0]
    if parts.h.shape[0]:
        ur = cho_solve((parts.chol_s, True), parts.h @ c, check_finite=False)
    else:
        ur = np.zeros(0)
    rhs0 = (parts.g0 @ c - parts.f @ ur).reshape(n0, d0)
    u0 = (np.swapaxes(parts.linv, 1, 2) @ rhs0[:, :, None])[:, :, 0]  # L_l^{-T} rhs_l
    out = [u0 @ lams[0].T]
    start = 0
    for d, nl, lam in zip(stats.dims[1:], stats.n_levels[1:], lams[1:]):
        out.append(ur[start:start + d * nl].reshape(nl, d) @ lam.T)
        start += d * nl
    return out


def _left_lambda(m: np.ndarray, dims, n_levels, lams) -> np.ndarray:
    """``Lambda M`` for ``M`` with rows in the ReStructure layout."""
    out = np.empty_like(m)
    start = 0
    for d, nl, lam in zip(dims, n_levels, lams):
        size = d * nl
        block = m[start:start + size].reshape(nl, d, -1)
        out[start:start + size] = (lam @ block).reshape(size, -1)
        start += size
    return out


def _diag_blocks(m: np.ndarray, d: int, nl: int) -> np.ndarray:
    """The ``d x d`` diagonal blocks of a square ``(d nl) x (d nl)`` matrix, shape ``(nl, d, d)``."""
    r = m.reshape(nl, d, nl, d)
    idx = np.arange(nl)
    return r[idx, :, idx, :]


def general_deviance_and_gradient(stats: BlockStats, theta: np.ndarray, reml: bool) -> tuple[float, np.ndarray]:
    """The profiled deviance and its exact gradient with respect to lme4's theta.

    Notes
    -----
    With ``C = Z'Z``, ``U = A^{-1} Lambda' Z'W``, ``R = Z'W - C Lambda U`` and ``B = A^{-1} Lambda' C``,
    a change ``dLambda`` (one element of ``Lambda_k`` in every level's block) gives

    ``d log|A| = 2 tr(B dLambda)``, ``dM = -(R' dLambda U + U' dLambda' R)``,

    hence ``d r^2 = c' dM c`` with ``c = (-beta, 1)`` and ``d log|M_XX| = tr(M_XX^{-1} dM_XX)``. Only the
    per-level diagonal blocks of ``B`` are needed; they follow from the block inverse of ``A`` with the
    factors of :func:`general_deviance_parts` (``E = A_00^{-1} A_0r``, ``S``): for term 0
    ``A_00^{-1} K_00 + E S^{-1} E' K_00 - E S^{-1} K_r0`` per level, for the others
    ``S^{-1} (K_rr - E' K_0r)``, with ``K = Lambda' C``. The cost is a few evaluations of the deviance.
    """
    from scipy.linalg import solve_triangular

    theta = np.asarray(theta, dtype=float)
    parts = general_deviance_parts(stats, theta, reml)
    p, n = stats.p, stats.nobs
    if not stats.n_terms:
        return parts.deviance, np.zeros(0)
    lams = parts.factors
    dims, nlev = stats.dims, stats.n_levels
    d0, n0 = dims[0], nlev[0]
    q0 = d0 * n0
    qr = stats.crr.shape[0]
    rdims, rlev, rlams = dims[1:], nlev[1:], lams[1:]
    # U = A^{-1} G
    ur = cho_solve((parts.chol_s, True), parts.h, check_finite=False) if qr else np.zeros((0, p + 1))
    rhs0 = (parts.g0 - parts.f @ ur).reshape(n0, d0, p + 1)
    u0 = (np.swapaxes(parts.linv, 1, 2) @ rhs0).reshape(q0, p + 1)
    # R = Z'W - C Lambda U
    lu0 = _left_lambda(u0, dims[:1], nlev[:1], lams[:1])
    r0 = stats.z0w - (stats.c00 @ lu0.reshape(n0, d0, p + 1)).reshape(q0, p + 1)
    if qr:
        lur = _left_lambda(ur, rdims, rlev, rlams)
        r0 = r0 - stats.c0r @ lur
        rr = stats.zrw - stats.c0r.T @ lu0 - stats.crr @ lur
    else:
        rr = np.zeros((0, p + 1))
    # diagonal blocks of B = A^{-1} Lambda' C
    k00 = lams[0].T @ stats.c00  # Lambda_0' C_00,l
    a00inv = np.swapaxes(parts.linv, 1, 2) @ parts.linv  # L^{-T} L^{-1}
    b0 = a00inv @ k00
    blocks = [b0]
    if qr:
        e = (np.swapaxes(parts.linv, 1, 2) @ parts.f.reshape(n0, d0, qr)).reshape(q0, qr)  # L^{-T} F
        y = solve_triangular(parts.chol_s, e.T, lower=True, check_finite=False)  # (qr, q0)
        kr0 = _left_lambda_t(stats.c0r.T.copy(), rdims, rlev, rlams)  # Lambda_r' C_r0, (qr, q0)
        z2 = solve_triangular(parts.chol_s, kr0, lower=True, check_finite=False)
        y3 = y.T.reshape(n0, d0, qr)  # (level, a, r)
        ese = y3 @ np.swapaxes(y3, 1, 2)
        b0 = b0 + ese @ k00 - y3 @ np.swapaxes(z2.T.reshape(n0, d0, qr), 1, 2)
        blocks = [b0]
        k0r = (lams[0].T @ stats.c0r.reshape(n0, d0, qr)).reshape(q0, qr)
        krr = _left_lambda_t(stats.crr, rdims, rlev, rlams)
        br = cho_solve((parts.chol_s, True), krr - e.T @ k0r, check_finite=False)
        start = 0
        for d, nl in zip(rdims, rlev):
            size = d * nl
            blocks.append(_diag_blocks(br[start:start + size, start:start + size], d, nl))
            start += size
    c = np.append(-parts.beta, 1.0)
    u_all = np.vstack([u0, ur])
    r_all = np.vstack([r0, rr])
    rc, uc = r_all @ c, u_all @ c
    if p:
        mxx_inv = cho_solve((cholesky(parts.mxx, lower=True, check_finite=False), True), np.eye(p), check_finite=False)
        rm = r_all[:, :p] @ mxx_inv
    grad = []
    start = 0
    for d, nl, blk in zip(dims, nlev, blocks):
        size = d * nl
        sl = slice(start, start + size)
        qc = rc[sl].reshape(nl, d).T @ uc[sl].reshape(nl, d)
        qx = np.tensordot(rm[sl].reshape(nl, d, p), u_all[sl, :p].reshape(nl, d, p), axes=([0, 2], [0, 2])) if p else np.zeros((d, d))
        trb = blk.sum(axis=0)
        for b in range(d):
            for a in range(b, d):  # theta order: lower triangle column-wise, element (a, b)
                dlogdet = 2.0 * trb[b, a]
                dr2 = -2.0 * qc[a, b]
                if reml:
                    g = dlogdet - 2.0 * qx[a, b] + (n - p) * dr2 / parts.r2
                else:
                    g = dlogdet + n * dr2 / parts.r2
                grad.append(g)
        start += size
    return parts.deviance, np.array(grad)


def optimize_general(stats: BlockStats, reml: bool, theta0: np.ndarray | None = None,
                     lower: np.ndarray | None = None) -> OptimResult:
    """Minimise the profiled deviance of a model with vector-valued terms (:mod:`._general`).

    lme4's start (identity relative factors) and bounds (diagonals >= 0); the exact gradient
    (:func:`~._general.general_deviance_and_gradient`) through :func:`~._optimize.minimize_deviance`.
    """
    diag = np.concatenate([(lambda rc: rc[0] == rc[1])(_tril_template(d)) for d in stats.dims]) if stats.dims \
        else np.zeros(0, dtype=bool)
    x0 = np.where(diag, 1.0, 0.0) if theta0 is None else np.asarray(theta0, dtype=float)
    lo = np.where(diag, 0.0, -np.inf) if lower is None else np.asarray(lower, dtype=float)

    def fg(theta: np.ndarray) -> tuple[float, np.ndarray]:
        try:
            return general_deviance_and_gradient(stats, theta, reml)
        except np.linalg.LinAlgError as exc:  # numpy's batched Cholesky: treat as scipy's (infinite deviance)
            raise LinAlgError(str(exc)) from exc

    opt = minimize_deviance(fg, x0, lo, factors=stats.dims)
    calls = [0]

    def counted(theta: np.ndarray) -> tuple[float, np.ndarray]:
        calls[0] += 1
        return fg(theta)

    theta, dev, grad = gradient_polish(counted, opt.theta, lo, hessian=opt.hessian, start=(opt.deviance, opt.gradient))
    return dataclasses.replace(opt, theta=theta, deviance=dev, gradient=grad, n_evaluations=opt.n_evaluations + calls[0])


def gradient_polish(fg, theta: np.ndarray, lower: np.ndarray, steps: int = 6, *, hessian: np.ndarray | None = None,
                    start: tuple[float, np.ndarray] | None = None):
    """Newton steps on the zero of the exact gradient over the interior coordinates.

    Near the optimum the deviance is flat to rounding (a change of ``1e-7`` in theta moves it by
    ``~1e-13``), so a search that compares deviance values stops anywhere in that flat region;
    the gradient is exact to ``~1e-12`` and locates the optimum far more closely: steps are taken until
    the next one would move no theta by more than :data:`~._optimize.THETA_RTOL` (relative). The
    Hessian (``hessian``, the optimiser's at ``theta``, or forward differences of the exact gradient,
    formed once: ``k`` gradient calls) is kept for all steps; a step is kept when it reduces the
    gradient's norm without increasing the deviance beyond rounding. ``start`` is ``fg(theta)`` when
    already known.
    """
    dev, grad = fg(theta) if start is None else start
    idx = np.flatnonzero(theta > lower)
    if not idx.size:
        return theta, float(dev), grad
    if hessian is not None and np.all(np.isfinite(hessian)):
        h = np.asarray(hessian, dtype=float)[np.ix_(idx, idx)]
    else:
        h = np.empty((idx.size, idx.size))
        for a, i in enumerate(idx):
            step = 1e-6 * max(abs(theta[i]), 1e-2)
            tp = theta.copy()
            tp[i] += step
            h[a] = (fg(tp)[1][idx] - grad[idx]) / step
    h = 0.5 * (h + h.T)
    try:
        chol = np.linalg.cholesky(h)
    except np.linalg.LinAlgError:
        return theta, float(dev), grad
    for _ in range(steps):
        delta = np.linalg.solve(chol.T, np.linalg.solve(chol, grad[idx]))
        if np.all(np.abs(delta) <= THETA_RTOL * np.maximum(np.abs(theta[idx]), 1e-6)):
            break  # at the optimum to rounding: the step would not change theta
        trial = theta.copy()
        trial[idx] = np.maximum(theta[idx] - delta, lower[idx])
        try:
            new_dev, new_grad = fg(trial)
        except LinAlgError:
            break
        if not (np.linalg.norm(new_grad[idx]) < np.linalg.norm(grad[idx]) and new_dev <= dev + 1e-11 * abs(dev)):
            break
        theta, dev, grad = trial, new_dev, new_grad
    return theta, float(dev), grad
