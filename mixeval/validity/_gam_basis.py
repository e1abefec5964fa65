"""Cubic regression spline bases (mgcv's ``bs = "cr"``) and model terms of the GAM engine.

Every feature is turned once into a sparse "local" basis ``W`` (four non-zeros per row and
smooth) and a small dense map ``T`` so that its model matrix is ``X = W T``; a binary or nominal
feature becomes a treatment-coded factor term.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..errors import InputError

__all__ = ["cr_knots", "cr_matrices", "cr_local", "sum_to_zero_null_space", "Term", "term_kind", "build_term",
           "penalty_scale"]


# ----------------------------------------------------------------------------- basis


def cr_knots(x: np.ndarray, k: int) -> np.ndarray:
    """Knots of mgcv's cubic regression spline: evenly spaced over the sorted distinct values.

    Examples
    --------
    >>> cr_knots(np.arange(11.0), 3).tolist()
    [0.0, 5.0, 10.0]"""
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
class Term:
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


def term_kind(series: pd.Series, name: str, categorical: bool) -> str:
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


def build_term(series: pd.Series, name: str, k: int, categorical: bool) -> tuple[Term, sp.csr_matrix]:
    kind = term_kind(series, name, categorical)
    if kind == "factor":
        levels = tuple(sorted(series.unique().tolist(), key=lambda v: (str(type(v)), v)))
        term = Term(name=name, kind="factor", TZ=np.eye(len(levels) - 1), S=None, levels=levels)
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
    term = Term(name=name, kind="smooth", k=k_eff, knots=knots, TZ=TZ, S=(SZ + SZ.T) / 2, lo=float(x.min()), hi=float(x.max()),
                 saturated=k_eff == int(np.unique(x).size))
    return term, W


def penalty_scale(W: sp.csr_matrix, term: Term) -> float:
    """Scale a penalty to the size of its block of ``X'X`` (as mgcv does), so log-lambda bounds are sensible."""
    X = W @ term.TZ
    XtX_norm = float(np.linalg.norm(np.asarray(X.T @ X) if not sp.issparse(X) else (X.T @ X).toarray()))
    S_norm = float(np.linalg.norm(term.S))
    return XtX_norm / S_norm if S_norm > 0 else 1.0
