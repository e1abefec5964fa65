"""Location and scale: fit on a centred and scaled copy of the design, map the results back.

The profiled deviance is computed from cross-products such as ``y'y - y'Z Lambda A^{-1}
Lambda' Z'y``; with a response far from 0 (scores in the millions, timestamps) these
differences cancel catastrophically and the variance components drift (2% off at an offset
of 1e6, a LinAlgError at 1e12). The model is equivariant under these transformations, so
the engine fits an equivalent, well-scaled problem and maps the estimates back exactly:

- the response: ``y = a + s y*`` (``a`` its mean when the constant lies in the span of ``X``,
  else 0; ``s`` its standard deviation);
- the fixed effects: ``X* = X T`` (each non-intercept column centred when ``X`` has an
  explicit intercept column, and divided by its standard deviation);
- each random term with slopes: ``X_k* = X_k T_k`` likewise (its intercept column kept).

With ``c`` such that ``X c = 1`` the estimates map back as ``beta = s T beta* + a c``,
``Cov(beta) = s^2 T Cov(beta*) T'``, ``sigma = s sigma*``, ``b_k = s T_k b_k*`` and
``Lambda_k Lambda_k' = T_k Lambda_k* Lambda_k*' T_k'`` (re-factorised lower-triangular). The
relative covariance ``I + Z Lambda Lambda' Z'`` is unchanged, so the profiled criteria differ
only by Jacobian terms: ``ML: d = d* + 2 n log s``; ``REML: d = d* + 2 (n - p) log s -
2 log|det T|`` (``log|X'V^{-1}X|`` changes with the parametrisation of ``X``, as in lme4), and
the log-likelihood reported is the one of the data as given, comparable with lme4's.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Scaling", "standardize", "identity_scaling", "map_factor"]


@dataclass(frozen=True)
class Scaling:
    """The affine maps between the data as given and the scaled copy the optimiser sees.

    Attributes
    ----------
    y_shift, y_scale : float
        ``y = y_shift + y_scale * y*``.
    T : ndarray, shape (p, p)
        ``X* = X T``.
    c : ndarray, shape (p,)
        Coefficients with ``X c = 1`` (zero when the constant is not in the span of ``X``).
    term_T : tuple of ndarray
        ``X_k* = X_k T_k`` per random term (``[[1.]]`` for a random intercept).
    """

    y_shift: float
    y_scale: float
    T: np.ndarray = field(repr=False)
    c: np.ndarray = field(repr=False)
    term_T: tuple[np.ndarray, ...] = field(repr=False)

    @property
    def log_abs_det_T(self) -> float:
        return float(np.linalg.slogdet(self.T)[1]) if self.T.size else 0.0

    def criterion(self, criterion_scaled: float, nobs: int, p: int, reml: bool) -> float:
        """The criterion (``-2`` log-likelihood) of the data as given from the scaled fit's."""
        if reml:
            return criterion_scaled + 2.0 * (nobs - p) * np.log(self.y_scale) - 2.0 * self.log_abs_det_T
        return criterion_scaled + 2.0 * nobs * np.log(self.y_scale)

    def beta(self, beta_scaled: np.ndarray) -> np.ndarray:
        return self.y_scale * (self.T @ beta_scaled) + self.y_shift * self.c

    def cov_beta(self, cov_scaled: np.ndarray) -> np.ndarray:
        return self.y_scale**2 * (self.T @ cov_scaled @ self.T.T)


def identity_scaling(p: int, dims: tuple[int, ...]) -> Scaling:
    """No transformation (fits from aggregates, where the rows are not at hand)."""
    return Scaling(0.0, 1.0, np.eye(p), np.zeros(p), tuple(np.eye(d) for d in dims))


def _column_map(X: np.ndarray, names: tuple[str, ...]) -> np.ndarray:
    """``T`` with ``X T`` centred (given an explicit intercept column) and unit-scaled columns."""
    p = X.shape[1]
    T = np.eye(p)
    if p == 0:
        return T
    intercept = [j for j, nm in enumerate(names) if nm == "(Intercept)" and np.all(X[:, j] == 1.0)]
    j0 = intercept[0] if intercept else None
    for k in range(p):
        if k == j0:
            continue
        col = X[:, k]
        if j0 is not None:
            m = float(np.mean(col))
            d = float(np.std(col))
        else:
            m = 0.0
            d = float(np.sqrt(np.mean(col * col)))
        if not (np.isfinite(d) and d > 0):
            continue
        T[k, k] = 1.0 / d
        if j0 is not None:
            T[j0, k] = -m / d
    return T


def _constant_coefficients(X: np.ndarray, names: tuple[str, ...]) -> np.ndarray | None:
    """``c`` with ``X c = 1`` if the constant lies in the span of ``X`` (else None)."""
    p = X.shape[1]
    if p == 0:
        return None
    for j, nm in enumerate(names):
        if nm == "(Intercept)" and np.all(X[:, j] == 1.0):
            c = np.zeros(p)
            c[j] = 1.0
            return c
    c, *_ = np.linalg.lstsq(X, np.ones(X.shape[0]), rcond=None)
    if np.max(np.abs(X @ c - 1.0)) < 1e-10:
        return c
    return None


def standardize(design):
    """A copy of ``design`` with centred and scaled response and columns, and the map back.

    Parameters
    ----------
    design : Design
        A validated design with rows.

    Returns
    -------
    (Design, Scaling)

    Examples
    --------
    >>> import pandas as pd
    >>> from mixeval.mixed import build_design
    >>> d = build_design("y ~ x + (1|g)", pd.DataFrame({"y": [1e9, 1e9 + 2, 1e9 + 1, 1e9 + 5],
    ...                                                  "x": [1.0, 2, 3, 4], "g": list("aabb")}))
    >>> ds, sc = standardize(d)
    >>> float(abs(ds.y.mean())) < 1e-12, sc.y_shift
    (True, 1000000002.0)
    """
    X = np.asarray(design.X, dtype=float)
    y = np.asarray(design.y, dtype=float)
    c = _constant_coefficients(X, design.fixed_names)
    shift = float(np.mean(y)) if c is not None else 0.0
    yc = y - shift
    scale = float(np.std(yc)) if c is not None else float(np.sqrt(np.mean(yc * yc)))
    if not (np.isfinite(scale) and scale > 0):
        scale = 1.0
    T = _column_map(X, design.fixed_names)
    groups, term_T = [], []
    for g in design.groups:
        if getattr(g, "X", None) is None:
            groups.append(g)
            term_T.append(np.eye(1))
            continue
        Tk = _column_map(g.X, g.coef_names)
        term_T.append(Tk)
        groups.append(dataclasses.replace(g, X=g.X @ Tk))
    scaling = Scaling(shift, scale, T, np.zeros(X.shape[1]) if c is None else c, tuple(term_T))
    scaled = dataclasses.replace(design, y=yc / scale, X=X @ T, groups=tuple(groups))
    return scaled, scaling


def map_factor(T: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """The lower-triangular factor ``L`` (diagonal >= 0) with ``L L' = T lam lam' T'``.

    Notes
    -----
    From the QR decomposition ``(T lam)' = Q R``: ``T lam lam' T' = R'R``; rows of ``R`` with a negative
    diagonal are negated. Exact for ``T = 1`` (random intercepts).
    """
    if lam.shape == (1, 1):
        return np.abs(T * lam)
    r = np.linalg.qr((T @ lam).T, mode="r")
    signs = np.where(np.diag(r) < 0, -1.0, 1.0)
    return (signs[:, None] * r).T
