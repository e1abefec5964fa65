"""A purpose-built penalized regression spline engine for generalized additive models.

The engine follows mgcv's ``bs = "cr"`` cubic regression splines (knots at quantiles of the
distinct values, integrated squared second derivative penalty, sum-to-zero identifiability
constraint over the data) with smoothing parameters chosen by GCV (Gaussian) or UBRE
(binomial, performance iteration), as ``mgcv::gam(method = "GCV.Cp")``.

Every feature is turned once into a sparse "local" basis ``W`` (four non-zeros per row and
smooth) and a small dense map ``T`` so that its model matrix is ``X = W T``. For the Gaussian
family the cross products ``X'X`` and ``X'y`` of *all* candidate features are formed once; the
fit of any subset of features is then an ``O(p^3)`` computation on a sub-block, independent of
the number of rows. That is what makes a powerset search over candidate features cheap.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.optimize import minimize

from ..errors import BasisLimitWarning, ConvergenceWarning, InputError
from .._validation import require_columns, require_dataframe, require_no_missing, require_positive_int
from ._threads import single_blas_thread

__all__ = ["GAMResult", "fit_gam"]

_FAMILIES = ("gaussian", "binomial")
_RHO_BOUND = 25.0
# Binomial fits add RIDGE * n to the diagonal of X'WX for every non-intercept coefficient: a very
# weak prior that keeps fits finite when some region of a feature holds only 0s or only 1s
# (quasi-separation, common for thresholded teacher predictions); its effect on other fits is
# below 1e-4 in D^2 (the mgcv comparisons in the tests include it).
_RIDGE = 1e-6


# ----------------------------------------------------------------------------- basis


def cr_knots(x: np.ndarray, k: int) -> np.ndarray:
    """Knots of mgcv's cubic regression spline: evenly spaced over the sorted distinct values."""
    u = np.unique(x)
    n = u.size
    if k > n:
        raise InputError(f"a basis of dimension k={k} needs at least {k} distinct values; got {n}.")
    if k == 2:
        return u[[0, -1]].astype(float)
    delta = (n - 1) / (k - 1)
    i = np.arange(1, k - 1)
    lbi = np.floor(delta * i).astype(int) + 1  # R's 1-based lower index
    frac = delta * i + 1 - lbi
    knots = np.empty(k)
    knots[0], knots[-1] = u[0], u[-1]
    knots[1:-1] = u[lbi - 1] * (1 - frac) + u[lbi] * frac
    return knots


def cr_matrices(knots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``F`` (knot values -> second derivatives at the knots) and the penalty ``S = D' B^{-1} D``."""
    k = knots.size
    h = np.diff(knots)
    D = np.zeros((k - 2, k))
    B = np.zeros((k - 2, k - 2))
    for i in range(k - 2):
        D[i, i] = 1.0 / h[i]
        D[i, i + 1] = -1.0 / h[i] - 1.0 / h[i + 1]
        D[i, i + 2] = 1.0 / h[i + 1]
        B[i, i] = (h[i] + h[i + 1]) / 3.0
        if i < k - 3:
            B[i, i + 1] = B[i + 1, i] = h[i + 1] / 6.0
    BinvD = np.linalg.solve(B, D)
    F = np.zeros((k, k))
    F[1:-1] = BinvD
    S = D.T @ BinvD
    return F, (S + S.T) / 2.0


def cr_local(x: np.ndarray, knots: np.ndarray) -> sp.csr_matrix:
    """Sparse local basis ``W`` (n x 2k): columns of knot values then of second derivatives.

    Outside the knot range the spline is continued linearly with the slope at the boundary knot
    (as mgcv's ``Predict.matrix`` for ``bs = "cr"``).
    """
    k = knots.size
    n = x.size
    xc = np.clip(x, knots[0], knots[-1])
    j = np.clip(np.searchsorted(knots, xc, side="right") - 1, 0, k - 2)
    h = knots[j + 1] - knots[j]
    right = knots[j + 1] - xc
    left = xc - knots[j]
    am = right / h
    ap = left / h
    cm = (right**3 / h - h * right) / 6.0
    cp = (left**3 / h - h * left) / 6.0
    out = x - xc  # distance beyond the boundary (0 inside)
    if np.any(out != 0):
        # derivatives of the four local functions at the clipped point, times the distance
        am = am + out * (-1.0 / h)
        ap = ap + out * (1.0 / h)
        cm = cm + out * ((-3.0 * right**2 / h + h) / 6.0)
        cp = cp + out * ((3.0 * left**2 / h - h) / 6.0)
    rows = np.repeat(np.arange(n), 4)
    cols = np.column_stack([j, j + 1, k + j, k + j + 1]).ravel()
    vals = np.column_stack([am, ap, cm, cp]).ravel()
    return sp.csr_matrix((vals, (rows, cols)), shape=(n, 2 * k))


def sum_to_zero_null_space(colsums: np.ndarray) -> np.ndarray:
    """Orthonormal basis ``Z`` of the null space of the constraint ``colsums' beta = 0`` (Householder QR)."""
    q, _ = np.linalg.qr(colsums.reshape(-1, 1), mode="complete")
    return q[:, 1:]


# ----------------------------------------------------------------------------- terms


@dataclass(frozen=True)
class _Term:
    """One model term: a smooth of a numeric feature or the dummy coding of a factor."""

    name: str
    kind: str  # "smooth" or "factor"
    k: int = 0
    knots: np.ndarray | None = field(default=None, repr=False)
    TZ: np.ndarray | None = field(default=None, repr=False)  # (2k or L-1) x ncol
    S: np.ndarray | None = field(default=None, repr=False)  # ncol x ncol penalty (scaled)
    levels: tuple = ()
    lo: float = np.nan
    hi: float = np.nan
    saturated: bool = False  # one basis function per distinct value: the basis cannot be enlarged

    @property
    def ncol(self) -> int:
        return self.TZ.shape[1]

    def local(self, values: pd.Series | np.ndarray) -> sp.csr_matrix:
        """The sparse local basis of ``values`` for this term."""
        if self.kind == "smooth":
            return cr_local(np.asarray(values, dtype=float), self.knots)
        codes = pd.Categorical(np.asarray(values), categories=list(self.levels)).codes
        n = codes.size
        keep = codes > 0
        return sp.csr_matrix(
            (np.ones(int(keep.sum())), (np.nonzero(keep)[0], codes[keep] - 1)), shape=(n, len(self.levels) - 1)
        )


def _term_kind(series: pd.Series, name: str, categorical: bool) -> str:
    if categorical or not (pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)):
        n_levels = series.nunique()
        if n_levels < 2:
            raise InputError(
                f"feature {name!r} has a single level ({series.iloc[0]!r}); a constant cannot explain "
                "anything. Drop it from `features`."
            )
        return "factor"
    n_unique = series.nunique()
    if n_unique < 2:
        raise InputError(
            f"feature {name!r} is constant (every value is {series.iloc[0]!r}); a constant feature has no "
            "shape to estimate. Drop it from `features`."
        )
    if n_unique == 2:
        return "factor"  # a binary feature is a parametric (indicator) term
    return "smooth"


def _build_term(series: pd.Series, name: str, k: int, categorical: bool) -> tuple[_Term, sp.csr_matrix]:
    kind = _term_kind(series, name, categorical)
    if kind == "factor":
        levels = tuple(sorted(series.unique().tolist(), key=lambda v: (str(type(v)), v)))
        term = _Term(name=name, kind="factor", TZ=np.eye(len(levels) - 1), S=None, levels=levels)
        return term, term.local(series)
    x = series.to_numpy(dtype=float)
    k_eff = min(k, int(np.unique(x).size))
    knots = cr_knots(x, k_eff)
    F, S = cr_matrices(knots)
    T = np.vstack([np.eye(k_eff), F])
    W = cr_local(x, knots)
    colsums = np.asarray(W.sum(axis=0)).ravel() @ T
    Z = sum_to_zero_null_space(colsums)
    TZ = T @ Z
    SZ = Z.T @ S @ Z
    term = _Term(name=name, kind="smooth", k=k_eff, knots=knots, TZ=TZ, S=(SZ + SZ.T) / 2, lo=float(x.min()), hi=float(x.max()),
                 saturated=k_eff == int(np.unique(x).size))
    return term, W


# ----------------------------------------------------------------------------- family helpers


def _binomial_deviance(y: np.ndarray, mu: np.ndarray) -> float:
    mu = np.clip(mu, 1e-15, 1 - 1e-15)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(y > 0, y * np.log(y / mu), 0.0)
        b = np.where(y < 1, (1 - y) * np.log((1 - y) / (1 - mu)), 0.0)
    return float(2.0 * np.sum(a + b))


def _expit(eta: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * eta))


# ----------------------------------------------------------------------------- penalized solve


@dataclass
class _PenalizedFit:
    beta: np.ndarray
    Ainv: np.ndarray
    edf_diag: np.ndarray
    rss: float
    lam: np.ndarray


def _solve(G: np.ndarray, b: np.ndarray, yy: float, S_list: list[tuple[slice, np.ndarray]], lam: np.ndarray) -> tuple:
    """Penalized solve: ``(A, A^{-1}, beta, RSS, log|A|, RSS + beta' S beta)`` with ``A = G + sum lam_k S_k``."""
    A = G.copy()
    for (sl, S), l in zip(S_list, lam):
        A[sl, sl] += l * S
    try:
        c, _ = sla.cho_factor(A, lower=False, check_finite=False)
        inv, info = sla.lapack.dpotri(c, lower=0)
        if info != 0:
            raise np.linalg.LinAlgError("dpotri failed")
        Ainv = np.triu(inv) + np.triu(inv, 1).T
        logdet = 2.0 * float(np.sum(np.log(np.abs(np.diag(c)))))
    except np.linalg.LinAlgError:
        Ainv = np.linalg.pinv(A, hermitian=True)
        logdet = float(np.linalg.slogdet(A)[1])
    beta = Ainv @ b
    rss = float(yy - 2.0 * beta @ b + beta @ G @ beta)
    return A, Ainv, beta, max(rss, 0.0), logdet, float(yy - beta @ b)


def _select_smoothing(
    G: np.ndarray, b: np.ndarray, yy: float, n: float, S_list: list[tuple[slice, np.ndarray]], criterion: str,
    start: np.ndarray | None = None,
) -> _PenalizedFit:
    """Choose log smoothing parameters by one of four criteria.

    ``GCV``: ``n RSS / (n - tau)^2``; ``UBRE``: ``RSS/n - 1 + 2 tau / n`` (scale 1);
    ``REML``: restricted likelihood with the scale profiled out,
    ``(n - M_p)/2 log(D_p) + 1/2 log|A| - 1/2 sum_k r_k rho_k``; ``REML1``: the same with scale 1,
    ``D_p/2 + 1/2 log|A| - 1/2 sum_k r_k rho_k``. ``D_p = RSS + beta' S beta``, ``r_k = rank(S_k)``,
    ``M_p`` the dimension of the penalty null space (constants dropped).
    """
    m = len(S_list)
    if m == 0:
        _, Ainv, beta, rss, _, _ = _solve(G, b, yy, S_list, np.zeros(0))
        return _PenalizedFit(beta, Ainv, np.einsum("ij,ji->i", Ainv, G), rss, np.zeros(0))
    ranks = np.array([np.linalg.matrix_rank(S) for _, S in S_list], dtype=float)
    n_null = G.shape[0] - ranks.sum()

    def reml(rho: np.ndarray) -> tuple[float, np.ndarray]:
        lam = np.exp(rho)
        _, Ainv, beta, _, logdet, dp = _solve(G, b, yy, S_list, lam)
        dp = max(dp, 1e-300)
        bSb = np.array([beta[sl] @ S @ beta[sl] for sl, S in S_list])
        trAS = np.array([np.sum(Ainv[sl, sl] * S) for sl, S in S_list])
        if criterion == "REML":
            value = 0.5 * (n - n_null) * np.log(dp) + 0.5 * logdet - 0.5 * ranks @ rho
            grad = 0.5 * (n - n_null) * lam * bSb / dp + 0.5 * lam * trAS - 0.5 * ranks
        else:
            value = 0.5 * dp + 0.5 * logdet - 0.5 * ranks @ rho
            grad = 0.5 * lam * bSb + 0.5 * lam * trAS - 0.5 * ranks
        return float(value), grad

    def objective(rho: np.ndarray) -> tuple[float, np.ndarray]:
        # tau = tr(A^{-1} G) = p - sum_j lam_j tr(A^{-1}_jj S_j); only penalty blocks are touched,
        # so one evaluation costs the Cholesky inverse plus O(m^2 k^3), not several p^3 products.
        lam = np.exp(rho)
        _, Ainv, beta, rss, _, _ = _solve(G, b, yy, S_list, lam)
        C = [[Ainv[sk, sj] @ Sj for (sj, Sj) in S_list] for (sk, _) in S_list]
        trC = np.array([np.trace(C[k][k]) for k in range(m)])
        tau = float(G.shape[0] - lam @ trC)
        cross = np.array([[np.sum(C[k][j] * C[j][k].T) for j in range(m)] for k in range(m)])
        d_tau = -lam * (trC - cross @ lam)
        Sb = np.zeros_like(beta)
        for (sl, S), l in zip(S_list, lam):
            Sb[sl] += l * (S @ beta[sl])
        AinvSb = Ainv @ Sb
        d_rss = np.array([2.0 * l * AinvSb[sl] @ (S @ beta[sl]) for (sl, S), l in zip(S_list, lam)])
        if criterion == "GCV":
            denom = max(n - tau, 1e-8)
            rss_s = max(rss, 1e-300)
            value = np.log(rss_s) - 2.0 * np.log(denom)
            grad = d_rss / rss_s + 2.0 * d_tau / denom
        else:  # UBRE with scale 1
            value = rss / n - 1.0 + 2.0 * tau / n
            grad = d_rss / n + 2.0 * d_tau / n
        return float(value), grad

    best = None
    starts = [np.full(m, 0.0), np.full(m, 6.0)] if start is None else [np.asarray(start, dtype=float)]
    for x0 in starts:
        res = minimize(
            reml if criterion.startswith("REML") else objective, x0, jac=True, method="L-BFGS-B",
            bounds=[(-_RHO_BOUND, _RHO_BOUND)] * m, options={"maxiter": 200, "ftol": 1e-12, "gtol": 1e-8},
        )
        if best is None or res.fun < best.fun:
            best = res
    lam = np.exp(best.x)
    _, Ainv, beta, rss, _, _ = _solve(G, b, yy, S_list, lam)
    return _PenalizedFit(beta, Ainv, np.einsum("ij,ji->i", Ainv, G), rss, lam)


# ----------------------------------------------------------------------------- the design cache


class _Design:
    """All candidate terms of one response, with the cross products needed to fit any subset."""

    def __init__(self, data: pd.DataFrame, y: np.ndarray, features: list[str], family: str,
                 k: int | dict[str, int], categorical: set[str], method: str = "GCV") -> None:
        self.n = y.size
        self.method = method
        self.y = y
        self.family = family
        self.features = list(features)
        self.terms: list[_Term] = []
        self.W: list[sp.csr_matrix] = []
        for f in features:
            term, W = _build_term(data[f], f, k[f] if isinstance(k, dict) else k, f in categorical)
            if term.kind == "smooth":
                scale = _penalty_scale(W, term)
                term = replace(term, S=term.S * scale)
            self.terms.append(term)
            self.W.append(W)
        # column layout of the full model matrix: intercept, then each term
        self.slices: list[slice] = []
        start = 1
        for t in self.terms:
            self.slices.append(slice(start, start + t.ncol))
            start += t.ncol
        self.p = start
        self._dense: np.ndarray | None = None
        if self.n * self.p <= 2.5e7:
            self._dense = self.model_matrix(range(len(self.terms)))
        if family == "gaussian":
            self.ybar = float(y.mean())
            yc = y - self.ybar
            self.G = self.gram(None)
            self.b = self.cross(yc)
            self.yy = float(yc @ yc)

    # model matrices -------------------------------------------------------
    def model_matrix(self, idx) -> np.ndarray:
        blocks = [np.ones((self.n, 1))]
        for i in idx:
            blocks.append(np.asarray(self.W[i] @ self.terms[i].TZ))
        return np.hstack(blocks)

    def gram(self, w: np.ndarray | None, idx=None) -> np.ndarray:
        """``X' diag(w) X`` over the intercept and terms ``idx`` (all terms when None)."""
        idx = list(range(len(self.terms))) if idx is None else list(idx)
        if self._dense is not None:
            cols = self.columns(idx)
            X = self._dense[:, cols]
            Xw = X if w is None else X * w[:, None]
            return X.T @ Xw
        ones = sp.csr_matrix(np.ones((self.n, 1)))
        Wall = sp.hstack([ones] + [self.W[i] for i in idx], format="csr")
        Ww = Wall if w is None else sp.csr_matrix(Wall.multiply(w[:, None]))
        WtW = (Wall.T @ Ww).toarray()
        T = sla.block_diag(np.ones((1, 1)), *[self.terms[i].TZ for i in idx])
        return T.T @ WtW @ T

    def cross(self, v: np.ndarray, idx=None) -> np.ndarray:
        idx = list(range(len(self.terms))) if idx is None else list(idx)
        if self._dense is not None:
            return self._dense[:, self.columns(idx)].T @ v
        parts = [np.array([v.sum()])] + [self.terms[i].TZ.T @ (self.W[i].T @ v) for i in idx]
        return np.concatenate(parts)

    def columns(self, idx) -> np.ndarray:
        return np.concatenate([[0]] + [np.arange(self.slices[i].start, self.slices[i].stop) for i in idx]).astype(int)

    def linear_predictor(self, idx, beta: np.ndarray) -> np.ndarray:
        if self._dense is not None:
            # a zero-filled full coefficient vector: no copy of the selected columns of the n x p matrix
            full = np.zeros(self.p)
            full[self.columns(idx)] = beta
            return self._dense @ full
        eta = np.full(self.n, beta[0])
        pos = 1
        for i in idx:
            nc = self.terms[i].ncol
            eta += self.W[i] @ (self.terms[i].TZ @ beta[pos:pos + nc])
            pos += nc
        return eta

    def term_values(self, i: int, coef: np.ndarray) -> np.ndarray:
        return np.asarray(self.W[i] @ (self.terms[i].TZ @ coef)).ravel()

    # fitting --------------------------------------------------------------
    def fit(self, idx, *, max_iter: int = 50, tol: float = 1e-7) -> "GAMResult":
        """Fit the GAM on the terms ``idx`` (indices into ``self.terms``)."""
        with single_blas_thread():
            return self._fit(list(idx), max_iter=max_iter, tol=tol)

    def _fit(self, idx: list[int], *, max_iter: int, tol: float) -> "GAMResult":
        local_slices = []
        pos = 1
        for i in idx:
            nc = self.terms[i].ncol
            local_slices.append(slice(pos, pos + nc))
            pos += nc
        S_list = [(sl, self.terms[i].S) for sl, i in zip(local_slices, idx) if self.terms[i].kind == "smooth"]
        smooth_idx = [i for i in idx if self.terms[i].kind == "smooth"]
        converged = True
        separated = False
        if self.family == "gaussian":
            cols = self.columns(idx)
            G = self.G[np.ix_(cols, cols)]
            pf = _select_smoothing(G, self.b[cols], self.yy, float(self.n), S_list,
                                   "GCV" if self.method == "GCV" else "REML")
            beta = pf.beta.copy()
            beta[0] += self.ybar
            deviance = pf.rss
            null_deviance = self.yy
            scale = deviance / max(self.n - pf.edf_diag.sum(), 1.0)
            fitted = self.linear_predictor(idx, beta)
            iterations = 1
        else:
            y = self.y
            mu = (y + 0.5) / 2.0
            eta = np.log(mu / (1 - mu))
            dev_old = np.inf
            iterations = 0
            rho = None
            binary = bool(np.all((y == 0) | (y == 1)))
            for iterations in range(1, max_iter + 1):
                w = np.clip(mu * (1 - mu), 1e-10, None)
                z = eta + (y - mu) / w
                G = self.gram(w, idx)
                if _RIDGE:
                    G = G + _RIDGE * np.diag(np.r_[0.0, np.ones(G.shape[0] - 1)]) * self.n
                bz = self.cross(w * z, idx)
                zz = float(np.sum(w * z * z))
                pf = _select_smoothing(G, bz, zz, float(self.n), S_list,
                                       "UBRE" if self.method == "GCV" else "REML1", start=rho)
                rho = np.log(np.maximum(pf.lam, 1e-300)) if len(S_list) else None
                eta = self.linear_predictor(idx, pf.beta)
                mu = _expit(eta)
                dev = _binomial_deviance(y, mu)
                if binary and np.all((eta > 0) == (y > 0.5)):
                    separated = True  # complete separation: the likelihood's supremum is the saturated fit
                    break
                if abs(dev - dev_old) <= tol * (abs(dev) + 0.1):
                    break
                dev_old = dev
            else:
                converged = False
            beta = pf.beta
            deviance = 0.0 if separated else _binomial_deviance(y, mu)
            ybar = float(np.clip(y.mean(), 1e-15, 1 - 1e-15))
            null_deviance = _binomial_deviance(y, np.full(self.n, ybar))
            scale = 1.0
            fitted = mu
        if separated:
            warnings.warn(
                f"the features {[self.terms[i].name for i in idx]} separate the 0/1 target perfectly: the "
                "logit GAM has no finite maximum, its deviance tends to 0, so D^2 = 1 is reported (as mgcv "
                "does). A deterministic rule over these features reproduces the labels.",
                ConvergenceWarning, stacklevel=3,
            )
        if not converged:
            warnings.warn(
                f"penalized IRLS did not converge in {max_iter} iterations for features "
                f"{[self.terms[i].name for i in idx]}; D^2 may be inaccurate (perfect separation?).",
                ConvergenceWarning, stacklevel=3,
            )
        edf_terms = {}
        coefs = {}
        lam_by_term = {}
        li = 0
        for sl, i in zip(local_slices, idx):
            t = self.terms[i]
            edf_terms[t.name] = float(pf.edf_diag[sl].sum())
            coefs[t.name] = beta[sl].copy()
            if t.kind == "smooth":
                lam_by_term[t.name] = float(pf.lam[li])
                li += 1
        d2 = 1.0 - deviance / null_deviance if null_deviance > 0 else np.nan
        vp_scale = scale
        return GAMResult(
            features=tuple(self.terms[i].name for i in idx),
            family=self.family,
            n=self.n,
            d2=float(d2),
            deviance=float(deviance),
            null_deviance=float(null_deviance),
            edf=float(pf.edf_diag.sum()),
            edf_terms=edf_terms,
            smoothing=lam_by_term,
            intercept=float(beta[0]),
            scale=float(vp_scale),
            converged=converged,
            separated=separated,
            iterations=iterations,
            _design=self,
            _idx=tuple(idx),
            _coefs=coefs,
            _cov=pf.Ainv * vp_scale,
            _slices=tuple(local_slices),
            _fitted=fitted,
        )


def _penalty_scale(W: sp.csr_matrix, term: _Term) -> float:
    """Scale a penalty to the size of its block of ``X'X`` (as mgcv does), so log-lambda bounds are sensible."""
    X = W @ term.TZ
    XtX_norm = float(np.linalg.norm(np.asarray(X.T @ X) if not sp.issparse(X) else (X.T @ X).toarray()))
    S_norm = float(np.linalg.norm(term.S))
    return XtX_norm / S_norm if S_norm > 0 else 1.0


# ----------------------------------------------------------------------------- results


@dataclass(frozen=True)
class GAMResult:
    """A fitted GAM: deviance explained, effective degrees of freedom and feature shapes.

    Attributes
    ----------
    features : tuple of str
        The model's terms, in order.
    family : str
        ``"gaussian"`` (identity link) or ``"binomial"`` (logit link).
    n : int
        Number of rows.
    d2 : float
        Deviance explained ``1 - D(mu) / D(mu_0)`` (book Eq. 2.9).
    deviance, null_deviance : float
        Deviance of the model and of the intercept-only model.
    edf : float
        Effective degrees of freedom, ``tr((X'WX + S_lambda)^{-1} X'WX)``, intercept included.
    edf_terms : dict
        Effective degrees of freedom of each term.
    smoothing : dict
        Selected smoothing parameter of each smooth term (on the engine's internal penalty scale).
    intercept : float
        The intercept (every smooth sums to zero over the data).
    scale : float
        Residual variance (Gaussian) or 1 (binomial).
    converged : bool
        Whether the fit converged (always True for Gaussian).
    separated : bool
        Binomial only: the fitted linear predictor separates the 0/1 labels completely; the
        deviance's infimum 0 and ``d2 = 1`` are reported (a :class:`ConvergenceWarning` says so).
    """

    features: tuple[str, ...]
    family: str
    n: int
    d2: float
    deviance: float
    null_deviance: float
    edf: float
    edf_terms: dict[str, float]
    smoothing: dict[str, float]
    intercept: float
    scale: float
    converged: bool = True
    separated: bool = False
    iterations: int = 1
    _design: Any = field(default=None, repr=False, compare=False)
    _idx: tuple[int, ...] = field(default=(), repr=False, compare=False)
    _coefs: dict[str, np.ndarray] = field(default_factory=dict, repr=False, compare=False)
    _cov: np.ndarray | None = field(default=None, repr=False, compare=False)
    _slices: tuple[slice, ...] = field(default=(), repr=False, compare=False)
    _fitted: np.ndarray | None = field(default=None, repr=False, compare=False)

    # numbers -------------------------------------------------------------
    @property
    def fitted(self) -> np.ndarray:
        """Fitted means (response scale) for every row."""
        return self._fitted.copy()

    def basis_dimension(self, feature: str) -> int:
        """``k`` of a smooth term (0 for a parametric term)."""
        return self._design.terms[self._term_index(feature)].k

    def term_contributions(self, scale: str = "link") -> pd.DataFrame:
        """Each term's contribution for every row, one column per feature.

        ``scale="link"``: ``f_k(x_k)``. ``scale="response"``: the change of the fitted mean when the
        term is removed, ``mu - g^{-1}(eta - f_k(x_k))`` (identical to the link scale for the
        Gaussian family; for the binomial family a change in predicted probability, which stays
        finite where the logit diverges).
        """
        if scale not in ("link", "response"):
            raise InputError(f"`scale` must be 'link' or 'response'; got {scale!r}.")
        out = {}
        for f in self.features:
            i = self._term_index(f)
            out[f] = self._design.term_values(i, self._coefs[f])
        tc = pd.DataFrame(out)
        if scale == "response" and self.family == "binomial":
            eta = self.intercept + tc.sum(axis=1).to_numpy()
            mu = _expit(eta)
            tc = pd.DataFrame({f: mu - _expit(eta - tc[f].to_numpy()) for f in self.features})
        return tc

    def term_sd(self, scale: str = "link") -> dict[str, float]:
        """Standard deviation over the data of each term's contribution (the nullification measure)."""
        tc = self.term_contributions(scale)
        return {f: float(np.std(tc[f].to_numpy())) for f in self.features}

    def shape(self, feature: str, grid: int = 200) -> pd.DataFrame:
        """The feature shape on a grid (smooth) or per level (factor): columns ``x``, ``f``, ``se``.

        ``se`` is the Bayesian standard error of ``f`` (as mgcv's ``plot.gam``).
        """
        if feature not in self.features:
            raise InputError(f"{feature!r} is not a term of this model; terms: {', '.join(self.features)}.")
        require_positive_int(grid, "grid", minimum=2)
        i = self._term_index(feature)
        term = self._design.terms[i]
        pos = self.features.index(feature)
        sl = self._slices[pos]
        V = self._cov[sl, sl]
        if term.kind == "smooth":
            x = np.linspace(term.lo, term.hi, grid)
            Xg = np.asarray(cr_local(x, term.knots) @ term.TZ)
        else:
            x = np.array(term.levels, dtype=object)
            Xg = np.vstack([np.zeros((1, term.ncol)), np.eye(term.ncol)])
        f = Xg @ self._coefs[feature]
        se = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", Xg, V, Xg), 0.0))
        return pd.DataFrame({"x": x, "f": f, "se": se})

    def predict(self, data: pd.DataFrame, *, scale: str = "response") -> np.ndarray:
        """Predictions for new rows (smooths continue linearly beyond the data range, as mgcv).

        Parameters
        ----------
        data : pandas.DataFrame
            Must hold every feature of the model; factor levels must have been seen in the fit.
        scale : {"response", "link"}
            Fitted means, or the linear predictor.
        """
        data = require_dataframe(data)
        require_columns(data, list(self.features))
        require_no_missing(data, list(self.features))
        if scale not in ("link", "response"):
            raise InputError(f"`scale` must be 'link' or 'response'; got {scale!r}.")
        eta = np.full(len(data), self.intercept)
        for f in self.features:
            t = self._design.terms[self._term_index(f)]
            if t.kind == "factor":
                unseen = set(pd.unique(data[f])) - set(t.levels)
                if unseen:
                    raise InputError(f"feature {f!r} has level(s) {sorted(map(str, unseen))} not seen in the fit.")
            else:
                vals = data[f].to_numpy(dtype=float)
                if not np.all(np.isfinite(vals)):
                    raise InputError(f"feature {f!r} has infinite values.")
            eta += np.asarray(t.local(data[f]) @ (t.TZ @ self._coefs[f])).ravel()
        if scale == "link" or self.family == "gaussian":
            return eta
        return _expit(eta)

    def residuals(self) -> np.ndarray:
        """Deviance residuals (``y - mu`` for the Gaussian family), as mgcv's ``residuals(m)``."""
        y = self._design.y
        mu = self._fitted
        if self.family == "gaussian":
            return y - mu
        m = np.clip(mu, 1e-15, 1 - 1e-15)
        with np.errstate(divide="ignore", invalid="ignore"):
            d = 2 * (np.where(y > 0, y * np.log(y / m), 0.0) + np.where(y < 1, (1 - y) * np.log((1 - y) / (1 - m)), 0.0))
        return np.sign(y - mu) * np.sqrt(np.maximum(d, 0.0))

    def basis_check(
        self, *, subsample: int = 5000, n_resamples: int = 400, random_state: int | np.random.Generator | None = None
    ) -> pd.DataFrame:
        """Is the basis dimension large enough? mgcv's ``k.check``: k', edf, k-index and its p-value.

        Residuals are ordered by each smooth's covariate; if the basis missed a pattern,
        neighbouring residuals are similar and ``k_index = mean(diff(r)^2) / 2 / mean(r^2)`` falls
        below 1. The p-value is the share of ``n_resamples`` random orderings with a smaller
        value. Above ``subsample`` rows a random subsample is used (as mgcv). A low k-index
        with ``edf`` close to ``k'`` means: increase ``k``.

        Returns
        -------
        pandas.DataFrame
            Columns ``feature``, ``k_prime``, ``edf``, ``k_index``, ``p_value`` (smooth terms only).
        """
        rng = random_state if isinstance(random_state, np.random.Generator) else np.random.default_rng(random_state)
        rsd = self.residuals()
        n = rsd.size
        idx = np.arange(n) if n <= subsample else np.sort(rng.choice(n, subsample, replace=False))
        r = rsd[idx]
        rows = []
        for f in self.features:
            t = self._design.terms[self._term_index(f)]
            if t.kind != "smooth":
                continue
            x = np.asarray(self.feature_values(f), dtype=float)[idx]
            v_obs = float(np.mean(np.diff(r[np.argsort(x, kind="stable")]) ** 2) / 2)
            ve = np.array([np.mean(np.diff(r[rng.permutation(r.size)]) ** 2) / 2 for _ in range(n_resamples)])
            rows.append({"feature": f, "k_prime": t.ncol, "edf": self.edf_terms[f],
                         "k_index": v_obs / float(np.mean(r**2)), "p_value": float(np.mean(ve < v_obs))})
        return pd.DataFrame(rows, columns=["feature", "k_prime", "edf", "k_index", "p_value"])

    def feature_values(self, feature: str) -> np.ndarray:
        """Observed values of ``feature`` (for rug plots)."""
        i = self._term_index(feature)
        return self._design._values[i]

    def _term_index(self, feature: str) -> int:
        return self._design.features.index(feature)

    # printing ------------------------------------------------------------
    def summary(self) -> str:
        """A short text summary (D^2, edf per term)."""
        link = "identity" if self.family == "gaussian" else "logit"
        lines = [
            f"GAM ({self.family}, {link} link), n = {self.n}",
            f"deviance explained D^2 = {self.d2:.4f}, edf = {self.edf:.3f}",
            "term         kind     k   edf",
        ]
        for f in self.features:
            t = self._design.terms[self._term_index(f)]
            lines.append(f"{f:12s} {t.kind:7s} {t.k:3d} {self.edf_terms[f]:6.3f}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"GAMResult(features={list(self.features)}, family={self.family!r}, d2={self.d2:.6g}, edf={self.edf:.6g}, n={self.n})"

    def _repr_html_(self) -> str:
        return "<pre>" + self.summary() + "</pre>"


# ----------------------------------------------------------------------------- public entry


def prepare_response(data: pd.DataFrame, target: str, family: str) -> np.ndarray:
    """Validate and return the response as float array."""
    if family not in _FAMILIES:
        raise InputError(f"`family` must be one of {', '.join(_FAMILIES)}; got {family!r}.")
    series = data[target]
    if not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)):
        example = series.astype(str).head(3).tolist()
        raise InputError(
            f"the target column {target!r} must be numeric for the {family} family; it has dtype "
            f"{series.dtype} (e.g. {example}). Encode it as numbers (for two classes use 0/1 and "
            "family='binomial')."
        )
    y = series.to_numpy(dtype=float)
    if family == "binomial" and (np.any(y < 0) or np.any(y > 1)):
        bad = np.unique(y[(y < 0) | (y > 1)])[:5].tolist()
        raise InputError(
            f"the binomial family needs a 0/1 target (or proportions in [0, 1]); {target!r} has values "
            f"{bad}. Threshold it first, e.g. (data[{target!r}] >= 2).astype(int)."
        )
    if np.all(y == y[0]):
        raise InputError(f"the target column {target!r} is constant ({y[0]!r}); there is no deviance to explain.")
    return y


def validate_inputs(data: object, target: str, features: list[str]) -> pd.DataFrame:
    data = require_dataframe(data)
    if isinstance(features, str):
        raise InputError(f"`features` must be a list of column names, not a string; write features=[{features!r}].")
    features = list(features)
    if not features:
        raise InputError("`features` is empty; name at least one feature column.")
    if len(set(features)) != len(features):
        raise InputError(f"`features` lists a column twice: {features}.")
    if target in features:
        raise InputError(f"the target {target!r} is also listed in `features`; remove it.")
    require_columns(data, [target, *features])
    require_no_missing(data, [target, *features])
    for f in features:
        s = data[f]
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            v = s.to_numpy(dtype=float)
            if not np.all(np.isfinite(v)):
                raise InputError(f"feature {f!r} has infinite values; remove or cap them first.")
    return data


def make_design(data: pd.DataFrame, target: str, features: list[str], family: str, k: int | Mapping[str, int],
                categorical: list[str] | None, method: str = "GCV") -> _Design:
    """Validate the inputs and build the design of every candidate term (``k`` per feature or one for all)."""
    data = validate_inputs(data, target, features)
    if isinstance(k, Mapping):
        missing = [f for f in features if f not in k]
        if missing:
            raise InputError(f"`k` is a mapping but has no basis dimension for {missing}.")
        k = {f: require_positive_int(k[f], f"k[{f!r}]", minimum=3) for f in features}
    else:
        k = require_positive_int(k, "k", minimum=3)
    y = prepare_response(data, target, family)
    if method not in ("GCV", "REML"):
        raise InputError(f"`method` must be 'GCV' (mgcv's default GCV.Cp: GCV, or UBRE for binomial) or 'REML'; got {method!r}.")
    cat = set(categorical or [])
    unknown = cat - set(features)
    if unknown:
        raise InputError(f"`categorical` names {sorted(unknown)} which are not in `features`.")
    with single_blas_thread():
        design = _Design(data, y, features, family, k, cat, method)
    design._values = [data[f].to_numpy() for f in features]
    return design


def check_basis(result: GAMResult, threshold: float = 0.9, stacklevel: int = 2) -> list[str]:
    """Warn (:class:`BasisLimitWarning`) for smooths whose edf is close to their basis limit ``k - 1``."""
    hit = []
    for f in result.features:
        t = result._design.terms[result._term_index(f)]
        if t.kind == "smooth" and not t.saturated and result.edf_terms[f] >= threshold * (t.k - 1):
            hit.append(f)
    if hit:
        desc = ", ".join(f"{f} (edf {result.edf_terms[f]:.2f} of {result.basis_dimension(f) - 1})" for f in hit)
        warnings.warn(
            f"smooth term(s) {desc} use nearly all the freedom of their basis; the shape may be "
            "under-resolved (e.g. a step function). Refit with a larger `k` (the book used 100-230 knots "
            "for thresholds).",
            BasisLimitWarning, stacklevel=stacklevel + 1,
        )
    return hit


def fit_gam(
    data: pd.DataFrame,
    target: str,
    features: list[str],
    *,
    family: str = "gaussian",
    k: int = 10,
    categorical: list[str] | None = None,
    method: str = "GCV",
    basis_warning: float = 0.9,
) -> GAMResult:
    """Fit a generalized additive model with penalized cubic regression splines.

    Numeric features with three or more distinct values get a smooth term ``s(x, bs = "cr", k = k)``
    (``k`` is lowered to the number of distinct values if needed); binary and non-numeric features
    (and those named in ``categorical``) get a parametric, treatment-coded term. Smoothing
    parameters are chosen by GCV (Gaussian) or UBRE (binomial), as ``mgcv::gam`` does by default.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per observation; not modified.
    target : str
        Response column (numeric; 0/1 or proportions for ``family="binomial"``).
    features : list of str
        Feature columns.
    family : {"gaussian", "binomial"}
        Gaussian with identity link, or binomial with logit link.
    k : int
        Basis dimension of every smooth (mgcv's ``k``; at least 3).
    categorical : list of str, optional
        Numeric columns to treat as categorical (nominal codes).
    method : {"GCV", "REML"}
        Smoothing parameter selection: ``"GCV"`` is mgcv's default ``"GCV.Cp"`` (GCV for
        Gaussian, UBRE for binomial); ``"REML"`` is restricted maximum likelihood (for the
        binomial family on the working model of each PIRLS step).
    basis_warning : float
        Warn with :class:`~mixeval.errors.BasisLimitWarning` when a smooth's edf reaches this
        fraction of its maximum ``k - 1``.

    Returns
    -------
    GAMResult

    Notes
    -----
    The model is :math:`g(E[Y|x]) = \\beta_0 + \\sum_k f_k(x_k)` with
    :math:`f_k = X_k \\beta_k` and :math:`\\sum_n f_k(x_k^n) = 0`; coefficients minimise
    :math:`\\|\\sqrt{W}(z - X\\beta)\\|^2 + \\sum_k \\lambda_k \\beta_k' S_k \\beta_k` where
    :math:`S_k` is the integrated squared second derivative. The smoothing parameters minimise
    GCV :math:`n\\,D/(n-\\tau)^2` (Gaussian) or UBRE :math:`D/n - 1 + 2\\tau/n` (binomial), or
    the restricted likelihood (``method="REML"``), with
    :math:`\\tau = \\mathrm{tr}((X'WX + S_\\lambda)^{-1} X'WX)` the effective degrees of freedom.
    The deviance explained is :math:`D^2 = 1 - D(\\hat\\mu)/D(\\hat\\mu_0)` (book Eq. 2.9).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.validity import fit_gam
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x": rng.uniform(0, 1, 500)})
    >>> df["y"] = np.sin(2 * np.pi * df["x"]) + rng.normal(0, 0.2, 500)
    >>> m = fit_gam(df, "y", ["x"])
    >>> round(m.d2, 2)
    0.93
    """
    design = make_design(data, target, features, family, k, categorical, method)
    result = design.fit(range(len(design.terms)))
    check_basis(result, basis_warning)
    return result
