"""Sufficient statistics of a random-intercept linear mixed model.

Everything the profiled deviance needs is a function of counts and sums per
factor level and per pair of factor levels: ``Z'Z``, ``Z'[X y]`` and
``[X y]'[X y]``. They are formed once in one pass over the rows; afterwards each
deviance evaluation costs a function of the number of random-effect levels only.
The same statistics can be computed by a database with GROUP BY queries
(see :mod:`mixeval.scale`), which is why the fit does not need the rows.

The first (largest) grouping factor's block of ``Z'Z`` is diagonal; it is kept
as a vector of counts and eliminated by a Schur complement in the deviance.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ._design import Design

__all__ = ["SufficientStats", "compute_stats"]


@dataclass(frozen=True)
class SufficientStats:
    """Cross-products of ``Z = [Z_0 Z_r]`` and ``W = [X y]`` a random-intercept fit needs.

    Attributes
    ----------
    nobs, p : int
        Rows and fixed-effect columns.
    n_levels : tuple of int
        Levels per grouping factor, largest first (``n_levels[0]`` is the diagonal block).
    counts0 : ndarray, shape (q0,)
        Diagonal of ``Z_0'Z_0``.
    cross0r : ndarray or scipy.sparse.csr_matrix, shape (q0, qr)
        ``Z_0'Z_r`` (counts of level pairs of factor 0 with every other factor). Stored sparse when few
        pairs occur (nested or interaction factors), dense otherwise (fully crossed designs); either form
        given here is converted to the better one.
    crr : ndarray, shape (qr, qr)
        ``Z_r'Z_r``.
    z0w, zrw : ndarray, shape (q0, p + 1), (qr, p + 1)
        ``Z_0'W`` and ``Z_r'W``.
    ww : ndarray, shape (p + 1, p + 1)
        ``W'W`` (last row/column belongs to the response).
    """

    nobs: int
    p: int
    n_levels: tuple[int, ...]
    counts0: np.ndarray = field(repr=False)
    cross0r: np.ndarray | sp.csr_matrix = field(repr=False)
    crr: np.ndarray = field(repr=False)
    z0w: np.ndarray = field(repr=False)
    zrw: np.ndarray = field(repr=False)
    ww: np.ndarray = field(repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "cross0r", _cross_representation(self.cross0r))

    @property
    def n_terms(self) -> int:
        return len(self.n_levels)

    @property
    def term_of_column(self) -> np.ndarray:
        """For each column of ``Z_r``, the index of its grouping factor (1-based over all terms)."""
        return np.repeat(np.arange(1, self.n_terms), self.n_levels[1:]).astype(np.int64)


def _cross_counts(a: np.ndarray, na: int, b: np.ndarray, nb: int) -> np.ndarray:
    """Contingency table of two code vectors as a dense ``na x nb`` float matrix."""
    return np.bincount(a * nb + b, minlength=na * nb).reshape(na, nb).astype(float)


#: below this share of non-zero level pairs the cross block is kept sparse
SPARSE_DENSITY = 0.1


def _cross_representation(cross) -> np.ndarray | sp.csr_matrix:
    """Dense array for a dense cross block, CSR for a sparse one (dense BLAS beats sparse kernels there)."""
    size = cross.shape[0] * cross.shape[1]
    nnz = cross.nnz if sp.issparse(cross) else int(np.count_nonzero(cross))
    if size and nnz / size < SPARSE_DENSITY:
        return cross.tocsr() if sp.issparse(cross) else sp.csr_matrix(cross)
    return cross.toarray() if sp.issparse(cross) else np.asarray(cross, dtype=float)


def _sparse_cross(a: np.ndarray, na: int, b: np.ndarray, nb: int) -> sp.csr_matrix:
    """Contingency table of two code vectors as a sparse ``na x nb`` matrix (duplicates summed)."""
    m = sp.csr_matrix((np.ones(a.size), (a, b)), shape=(na, nb))
    m.sum_duplicates()
    return m


def _level_sums(codes: np.ndarray, n: int, W: np.ndarray) -> np.ndarray:
    """``Z'W`` for one factor: column sums of ``W`` within each level."""
    out = np.empty((n, W.shape[1]))
    for j in range(W.shape[1]):
        out[:, j] = np.bincount(codes, weights=W[:, j], minlength=n)
    return out


def compute_stats(design: Design) -> SufficientStats:
    """One pass over the rows: all cross-products of ``Z`` and ``[X y]``.

    Parameters
    ----------
    design : Design
        Output of :func:`mixeval.mixed.build_design`.

    Returns
    -------
    SufficientStats

    Notes
    -----
    With ``k`` grouping factors of ``q_1 >= ... >= q_k`` levels and ``p`` fixed columns
    the cost is ``O(n (p + k)^2)`` time and ``O(q_1 (q_2 + ... + q_k) + (q_2 + ... + q_k)^2)`` memory.

    Examples
    --------
    >>> import pandas as pd
    >>> from mixeval.mixed import build_design
    >>> df = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")})
    >>> compute_stats(build_design("y ~ 1 + (1|g)", df)).counts0
    array([2., 2., 2.])
    """
    W = np.column_stack([design.X, design.y])
    groups = design.groups
    p = design.X.shape[1]
    if not groups:
        empty = np.zeros((0, p + 1))
        return SufficientStats(design.nobs, p, (), np.zeros(0), np.zeros((0, 0)), np.zeros((0, 0)), empty, empty, W.T @ W)
    g0 = groups[0]
    counts0 = np.bincount(g0.codes, minlength=g0.n_levels).astype(float)
    z0w = _level_sums(g0.codes, g0.n_levels, W)
    rest = groups[1:]
    if rest:
        cross0r = sp.hstack([_sparse_cross(g0.codes, g0.n_levels, g.codes, g.n_levels) for g in rest], format="csr")
        zrw = np.vstack([_level_sums(g.codes, g.n_levels, W) for g in rest])
        blocks = [[_cross_counts(a.codes, a.n_levels, b.codes, b.n_levels) for b in rest] for a in rest]
        crr = np.block(blocks)
    else:
        cross0r = np.zeros((g0.n_levels, 0))
        zrw = np.zeros((0, p + 1))
        crr = np.zeros((0, 0))
    return SufficientStats(
        nobs=design.nobs,
        p=p,
        n_levels=tuple(g.n_levels for g in groups),
        counts0=counts0,
        cross0r=cross0r,
        crr=crr,
        z0w=z0w,
        zrw=zrw,
        ww=W.T @ W,
    )
