"""R's bases of a numeric variable: orthogonal polynomials (``poly``, ``contr.poly``) and the B-spline and natural
spline bases of the ``splines`` package (``bs``, ``ns``), with the parameters that ``predict`` reuses.

Each basis is computed as R computes it, so that the columns (not only the space they span) are R's: the
coefficients of a fit, and ``predict`` on new data, agree with R's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.interpolate import BSpline

from ..errors import InputError

__all__ = ["PolyCoefs", "poly_coefs", "poly_basis", "contr_poly", "spline_design", "SplineKnots", "spline_knots",
           "bs_basis", "ns_basis", "r_quantile"]


@dataclass(frozen=True)
class PolyCoefs:
    """The three-term recurrence of orthogonal polynomials on the fitted data (R's ``attr(poly(x, k), "coefs")``)."""

    alpha: tuple[float, ...]
    norm2: tuple[float, ...]


def poly_coefs(x: np.ndarray, degree: int, *, what: str = "poly()") -> PolyCoefs:
    """The recurrence of the orthonormal polynomials of degree ``1..degree`` on ``x``.

    Notes
    -----
    With ``xc = x - mean(x)`` and ``Z_j`` the component of ``xc^j`` orthogonal to ``1, xc, .., xc^(j-1)`` (the
    QR decomposition of ``[xc^0 .. xc^k]``), ``norm2 = (1, |Z_0|^2, .., |Z_k|^2)`` and
    ``alpha_j = sum(xc Z_j^2) / |Z_j|^2 + mean(x)``; then ``Z_{j+1} = (x - alpha_j) Z_j - norm2_{j+1} / norm2_j
    Z_{j-1}`` (R's ``poly``).
    """
    x = np.asarray(x, dtype=float)
    if degree >= len(np.unique(x)):
        raise InputError(f"{what}: the degree ({degree}) must be less than the number of distinct values of the "
                         f"variable ({len(np.unique(x))}), as in R.")
    xbar = float(np.mean(x))
    xc = x - xbar
    Z = _poly_columns(xc, degree)
    norm2 = np.sum(Z**2, axis=0)
    alpha = (np.sum(xc[:, None] * Z**2, axis=0) / norm2 + xbar)[:degree]
    return PolyCoefs(alpha=tuple(float(a) for a in alpha), norm2=tuple([1.0, *(float(v) for v in norm2)]))


def _poly_columns(xc: np.ndarray, degree: int) -> np.ndarray:
    """``Q_j R_jj`` of the QR decomposition of ``[xc^0 .. xc^degree]``: the part of ``xc^j`` orthogonal to the lower
    powers (independent of the sign conventions of the factorisation)."""
    X = xc[:, None] ** np.arange(degree + 1)
    Q, R = np.linalg.qr(X)
    return Q * np.diag(R)


def poly_basis(x: np.ndarray, degree: int, coefs: PolyCoefs | None = None) -> np.ndarray:
    """The columns of R's ``poly(x, degree)``: on the fitted data (``coefs=None``) from the QR decomposition, on new
    data from the fitted recurrence (R's ``predict.poly``).

    Examples
    --------
    >>> x = np.array([1.0, 2, 3, 4, 5])
    >>> poly_basis(x, 2).round(6) + 0.0
    array([[-0.632456,  0.534522],
           [-0.316228, -0.267261],
           [ 0.      , -0.534522],
           [ 0.316228, -0.267261],
           [ 0.632456,  0.534522]])
    """
    x = np.asarray(x, dtype=float)
    if coefs is None:
        Z = _poly_columns(x - np.mean(x), degree)
        norm2 = np.sum(Z**2, axis=0)
        return Z[:, 1:] / np.sqrt(norm2[1:])
    alpha, norm2 = coefs.alpha, coefs.norm2
    Z = np.ones((len(x), degree + 1))
    Z[:, 1] = x - alpha[0]
    for i in range(1, degree):
        Z[:, i + 1] = (x - alpha[i]) * Z[:, i] - (norm2[i + 1] / norm2[i]) * Z[:, i - 1]
    return Z[:, 1:] / np.sqrt(np.asarray(norm2[2:]))


def contr_poly(n: int) -> np.ndarray:
    """R's ``contr.poly(n)``: orthonormal polynomial contrasts over the scores ``1..n`` (columns ``.L``, ``.Q``,
    ``.C``, ``^4``, ..).

    Examples
    --------
    >>> contr_poly(3).round(6) + 0.0
    array([[-0.707107,  0.408248],
           [ 0.      , -0.816497],
           [ 0.707107,  0.408248]])
    """
    scores = np.arange(1.0, n + 1)
    Z = _poly_columns(scores - scores.mean(), n - 1)
    Z = Z / np.sqrt(np.sum(Z**2, axis=0))
    return Z[:, 1:]


def spline_design(knots: np.ndarray, x: np.ndarray, order: int, derivs: int = 0) -> np.ndarray:
    """R's ``splines::splineDesign(knots, x, ord, derivs)``: the B-spline basis functions (or their ``derivs``-th
    derivatives) of order ``order`` on ``knots`` at ``x``, which must lie within the boundary knots (the right
    boundary knot included, as R)."""
    knots = np.asarray(knots, dtype=float)
    n_basis = len(knots) - order
    spline = BSpline(knots, np.eye(n_basis), order - 1, extrapolate=False)
    x = np.asarray(x, dtype=float)
    out = spline(x, nu=derivs) if derivs else spline(x)
    right = x == knots[n_basis]  # scipy leaves the right end open; R closes it from the left
    if right.any():
        below = np.nextafter(knots[n_basis], -np.inf)
        out[right] = spline(np.full(int(right.sum()), below), nu=derivs) if derivs else spline(
            np.full(int(right.sum()), below))
    return np.nan_to_num(out, nan=0.0)


def r_quantile(x: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """R's default ``quantile(x, probs)`` (type 7: linear interpolation of the order statistics)."""
    return np.quantile(np.asarray(x, dtype=float), probs, method="linear")


@dataclass(frozen=True)
class SplineKnots:
    """The knots a spline basis keeps for new data (R's ``makepredictcall`` for ``bs``/``ns``)."""

    knots: tuple[float, ...]
    boundary: tuple[float, float]
    intercept: bool
    degree: int


def spline_knots(x: np.ndarray, *, df: int | None, knots, degree: int, intercept: bool, boundary,
                 natural: bool, what: str) -> SplineKnots:
    """Interior knots at the quantiles of ``x`` for ``df`` (R's rule: ``df - degree - intercept`` of them for ``bs``,
    ``df - 1 - intercept`` for ``ns``), or the given ``knots``; boundary knots at the range of ``x`` unless given."""
    x = np.asarray(x, dtype=float)
    if boundary is None:
        lo, hi = float(np.min(x)), float(np.max(x))
    else:
        b = np.sort(np.asarray(boundary, dtype=float).ravel())
        if b.size != 2:
            raise InputError(f"{what}: Boundary.knots must be two numbers; got {b.size}.")
        lo, hi = float(b[0]), float(b[1])
    if not hi > lo:
        raise InputError(f"{what}: the boundary knots must differ; a spline basis needs at least two distinct values "
                         "of its variable.")
    if knots is not None:
        inner = np.sort(np.asarray(knots, dtype=float).ravel())
    elif df is not None:
        n_inner = int(df) - (1 if natural else degree) - int(intercept)
        if n_inner < 0:
            low = (1 if natural else degree) + int(intercept)
            raise InputError(f"{what}: df = {df} is too small; the smallest is {low} (R would use {low} with a "
                             "warning).")
        inside = x[(x >= lo) & (x <= hi)]
        inner = r_quantile(inside, np.linspace(0, 1, n_inner + 2)[1:-1]) if n_inner else np.zeros(0)
    else:
        inner = np.zeros(0)
    return SplineKnots(knots=tuple(float(k) for k in inner), boundary=(lo, hi), intercept=bool(intercept),
                       degree=int(degree))


def _all_knots(k: SplineKnots, order: int) -> np.ndarray:
    return np.sort(np.concatenate([np.repeat(k.boundary, order), np.asarray(k.knots)]))


def bs_basis(x: np.ndarray, k: SplineKnots) -> np.ndarray:
    """R's ``splines::bs`` basis; values beyond the boundary knots by the Taylor expansion at a pivot a quarter of the
    way to the nearest interior knot, as R (which warns that such bases may be ill-conditioned)."""
    x = np.asarray(x, dtype=float)
    order = k.degree + 1
    aknots = _all_knots(k, order)
    lo, hi = k.boundary
    below, above = x < lo, x > hi
    basis = np.zeros((len(x), len(aknots) - order))
    inside = ~(below | above)
    basis[inside] = spline_design(aknots, x[inside], order)
    scale = np.array([float(np.prod(np.arange(1, j + 1))) for j in range(order)])
    for mask, pivot in ((below, 0.75 * lo + 0.25 * aknots[order]), (above, 0.75 * hi + 0.25 * aknots[-order - 1])):
        if mask.any():
            derivs = np.vstack([spline_design(aknots, np.array([pivot]), order, d) for d in range(order)])
            powers = (x[mask] - pivot)[:, None] ** np.arange(order)
            basis[mask] = powers @ (derivs / scale[:, None])
    return basis if k.intercept else basis[:, 1:]


def ns_basis(x: np.ndarray, k: SplineKnots) -> np.ndarray:
    """R's ``splines::ns`` basis: the cubic B-splines constrained to zero second derivative at the boundary knots
    (the last columns of ``Q'`` of the QR decomposition of the constraints, computed with R's Householder
    reflections), linear beyond the boundary knots."""
    x = np.asarray(x, dtype=float)
    aknots = _all_knots(k, 4)
    lo, hi = k.boundary
    below, above = x < lo, x > hi
    basis = np.zeros((len(x), len(aknots) - 4))
    inside = ~(below | above)
    basis[inside] = spline_design(aknots, x[inside], 4)
    for mask, pivot in ((below, lo), (above, hi)):
        if mask.any():
            value = spline_design(aknots, np.array([pivot]), 4)[0]
            slope = spline_design(aknots, np.array([pivot]), 4, 1)[0]
            basis[mask] = value + (x[mask] - pivot)[:, None] * slope
    const = np.vstack([spline_design(aknots, np.array([b]), 4, 2)[0] for b in (lo, hi)])
    if not k.intercept:
        const, basis = const[:, 1:], basis[:, 1:]
    return _householder_qty(const.T, basis.T).T[:, 2:]


def _householder_qty(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``Q' B`` for the Householder QR decomposition of ``A`` (full column rank) as LINPACK's ``dqrdc2`` forms it:
    each reflection maps the column onto ``-sign(a_11) |a| e_1``."""
    A, B = A.astype(float).copy(), B.astype(float).copy()
    for j in range(A.shape[1]):
        a = A[j:, j]
        norm = float(np.linalg.norm(a))
        if norm == 0.0:
            continue
        signed = norm if a[0] >= 0 else -norm
        u = a / signed
        u[0] += 1.0
        for M in (A[j:, j:], B[j:]):
            M -= np.outer(u, (u @ M) / u[0])
    return B
