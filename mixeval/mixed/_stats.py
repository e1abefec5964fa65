"""Sufficient statistics of a random-intercept linear mixed model.

Everything the profiled deviance needs is a function of counts and sums per
factor level and per pair of factor levels: ``Z'Z``, ``Z'[X y]`` and
``[X y]'[X y]``. They are formed once in one pass over the rows; afterwards each
deviance evaluation costs a function of the number of random-effect levels only.
The same statistics can be computed by a database with GROUP BY queries
(see :mod:`mixeval.scale`), which is why the fit does not need the rows.

The first (largest) grouping factor's block of ``Z'Z`` is diagonal; it is kept
as a vector of counts and eliminated by a Schur complement in the deviance. The
weights of that elimination, ``1 / (theta_0^2 n_l + 1)``, take one value per
distinct level count ``n_l``, so every product weighted by them is a sum over
count classes of products formed once (:class:`LevelClasses`): a deviance
evaluation then costs a function of the other factors' levels and the number of
distinct counts, not of the largest factor's levels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from ._design import Design

__all__ = ["SufficientStats", "LevelClasses", "compute_stats", "level_classes"]


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
    coef_shift : ndarray, shape (p,), optional
        When the statistics are those of a centred response ``y - c`` (summed by a query engine, where
        the sums of ``y = 1e12 + noise`` would lose the noise), the coefficients ``delta`` with
        ``X delta = c 1``: the fit is the same except ``beta = beta_centred + delta``.

    Examples
    --------
    >>> import pandas as pd
    >>> from mixeval.mixed import build_design
    >>> df = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")})
    >>> s = compute_stats(build_design("y ~ 1 + (1|g)", df))
    >>> s.nobs, s.p, s.n_levels, s.counts0.tolist()  # counts0: rows per level of g (the diagonal of Z'Z)
    (6, 1, (3,), [2.0, 2.0, 2.0])
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
    coef_shift: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "cross0r", _cross_representation(self.cross0r))

    def uncentred(self) -> SufficientStats:
        """The statistics of the response itself, ``y = y_c + X delta`` (for comparisons; fits use the centred)."""
        if self.coef_shift is None:
            return self
        p, d = self.p, self.coef_shift

        def shift_w(zw: np.ndarray) -> np.ndarray:
            out = zw.copy()
            out[:, p] += zw[:, :p] @ d
            return out

        ww = self.ww.copy()
        xx_d = self.ww[:p, :p] @ d
        ww[:p, p] += xx_d
        ww[p, :p] = ww[:p, p]
        ww[p, p] += 2.0 * d @ self.ww[:p, p] + d @ xx_d
        return SufficientStats(self.nobs, p, self.n_levels, self.counts0, self.cross0r, self.crr,
                               shift_w(self.z0w), shift_w(self.zrw), ww)

    @property
    def n_terms(self) -> int:
        return len(self.n_levels)

    @property
    def term_of_column(self) -> np.ndarray:
        """For each column of ``Z_r``, the index of its grouping factor (1-based over all terms)."""
        return np.repeat(np.arange(1, self.n_terms), self.n_levels[1:]).astype(np.int64)

    @cached_property
    def classes(self) -> LevelClasses:
        """The largest factor's levels grouped by count, with their cross-products (formed on first use)."""
        return level_classes(self)


#: at most this many float64 values are kept for the per-class cross-products (256 MiB); beyond it the
#: weighted products are formed from the levels at every evaluation instead
CLASS_BUDGET = 2**25


def weighted_gram(k, w: np.ndarray) -> np.ndarray:
    """``K' diag(w) K`` as a dense array, for a dense or a sparse ``K``."""
    if sp.issparse(k):
        return (k.T @ sp.diags(w) @ k).toarray()
    return (k * w[:, None]).T @ k


@dataclass(frozen=True)
class LevelClasses:
    """Weighted cross-products over the largest factor's levels, for weights constant within count classes.

    With ``K = Z_0'Z_r`` (one row per level ``l`` of the largest factor), ``A = Z_0'W`` and weights
    ``w_l = v[c(l)]`` that depend on the level only through its class ``c(l)`` (its count), the products
    ``K' diag(w) K``, ``K' diag(w) A`` and ``A' diag(w) A`` are ``sum_c v_c G_c`` with per-class products
    ``G_c`` formed once. ``kk`` is stored as a dense stack ``(classes, q_r, q_r)`` when ``K`` is dense, and
    as the non-zero pattern of ``K'K`` with one column of values per class when ``K`` is sparse. When the
    per-class products would exceed :data:`CLASS_BUDGET` values they are not formed (``rowwise``) and
    the products are computed from the levels at each call.

    Attributes
    ----------
    counts : ndarray, shape (n_classes,)
        The distinct level counts.
    sizes : ndarray, shape (n_classes,)
        Number of levels with each count.
    of_level : ndarray, shape (q_0,)
        Class index of every level.
    rowwise : bool
        True when the per-class products were not formed.
    """

    counts: np.ndarray
    sizes: np.ndarray
    of_level: np.ndarray = field(repr=False)
    rowwise: bool
    _stats: SufficientStats = field(repr=False)
    _kk_dense: np.ndarray | None = field(default=None, repr=False)
    _kk_table: sp.csc_matrix | None = field(default=None, repr=False)
    _ka: np.ndarray | None = field(default=None, repr=False)
    _aa: np.ndarray | None = field(default=None, repr=False)

    def kk(self, v: np.ndarray, *, full: bool = True) -> np.ndarray:
        """``K' diag(w) K`` (dense ``q_r x q_r``) for class weights ``v``.

        With ``full=False`` only the lower triangle is guaranteed (the upper may be zero): all a
        Cholesky factorisation reads, and it spares a pass over a matrix that can be thousands wide.
        """
        s = self._stats
        qr = s.crr.shape[0]
        if self._kk_dense is not None:
            return np.tensordot(v, self._kk_dense, axes=1)
        if self._kk_table is not None:
            out = (self._kk_table @ (v[self.of_level] if self.rowwise else v)).reshape(qr, qr)  # lower triangle
            if full:
                diagonal = np.diag(out).copy()
                out += out.T
                out[np.diag_indices(qr)] = diagonal
            return out
        return weighted_gram(s.cross0r, v[self.of_level])

    def level_quadratic_forms(self, lower: np.ndarray, scale: np.ndarray) -> np.ndarray:
        """``k_l' diag(s) P diag(s) k_l`` for every level ``l`` (``k_l`` its row of ``K``), from the pair table.

        ``P`` is symmetric and given by the lower triangle of the C-ordered ``lower`` (the upper triangle is
        not read); only for the per-level pair table (``rowwise`` with a sparse ``K``).
        """
        p = lower * scale[:, None]
        p *= scale[None, :]
        return self._kk_table_symmetric.T @ p.ravel()

    @cached_property
    def _kk_table_symmetric(self) -> sp.csc_matrix:
        """The pair table with the entries below the diagonal doubled (each stands for itself and its mirror)."""
        table = self._kk_table
        qr = self._stats.crr.shape[0]
        a, b = np.divmod(table.indices, qr)
        return sp.csc_matrix((np.where(a == b, table.data, 2.0 * table.data), table.indices, table.indptr),
                             shape=table.shape)

    def kk_times(self, v: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``K' diag(w) K b`` without forming ``K' diag(w) K`` when ``K`` is kept per level."""
        if self._kk_dense is not None:
            return np.einsum("c,cij,jk->ik", v, self._kk_dense, b)
        k = self._stats.cross0r
        return np.asarray(k.T @ (v[self.of_level][:, None] * np.asarray(k @ b)))

    @cached_property
    def diagonal_crr(self) -> bool:
        """``Z_r'Z_r`` is diagonal (a single factor besides the largest, or factors that never co-occur)."""
        crr = self._stats.crr
        if len(self._stats.n_levels) <= 2:
            return True
        return bool(np.count_nonzero(crr) == np.count_nonzero(np.diag(crr)))

    def ka(self, v: np.ndarray) -> np.ndarray:
        """``K' diag(w) A`` (``q_r x (p + 1)``)."""
        if self.rowwise:
            s = self._stats
            return np.asarray(s.cross0r.T @ (s.z0w * v[self.of_level][:, None]))
        return np.tensordot(v, self._ka, axes=1)

    def aa(self, v: np.ndarray) -> np.ndarray:
        """``A' diag(w) A`` (``(p + 1) x (p + 1)``)."""
        if self.rowwise:
            s = self._stats
            return s.z0w.T @ (s.z0w * v[self.of_level][:, None])
        return np.tensordot(v, self._aa, axes=1)


def _pairs_per_row(k) -> int:
    """``sum_l nnz_l (nnz_l + 1) / 2``: the products a weighted ``K'K`` (lower triangle) costs from the levels."""
    nnz_row = np.diff(k.indptr) if sp.issparse(k) else np.full(k.shape[0], k.shape[1])
    return int(np.sum(nnz_row * (nnz_row + 1) // 2))


def _worth_classes(k, n_classes: int) -> bool:
    """Per-class products pay when they hold at most a quarter of the per-level products (and fit the budget).

    A dense ``K`` (a factor crossed with every level of the others) with few distinct counts gains by the
    number of levels per class; a sparse ``K`` with scattered level pairs (two large crossed factors)
    gains nothing, as every pair of levels occurs in few rows.
    """
    qr = k.shape[1]
    pairs = _pairs_per_row(k)
    table = n_classes * (qr * (qr + 1) // 2 if not sp.issparse(k) else min(qr * (qr + 1) // 2, pairs))
    return table <= min(CLASS_BUDGET, pairs // 4)


def _pair_table(k, order: np.ndarray, ptr: np.ndarray) -> sp.csc_matrix:
    """``T`` with ``T @ v`` the lower triangle of ``K' diag(w) K`` (flattened ``q_r x q_r``), ``w_l = v[col(l)]``.

    The rows of ``K`` are taken in ``order`` and column ``j`` of ``T`` holds the products
    ``K_la K_lb`` (``a >= b``) of the rows ``order[ptr[j]:ptr[j + 1]]``, listed at once; duplicate
    positions are summed by the product itself, so nothing is sorted.
    """
    k = sp.csr_matrix(k)
    if not np.array_equal(order, np.arange(k.shape[0])):
        k = k[order]
    k.sum_duplicates()
    qr = k.shape[1]
    nnz_row = np.diff(k.indptr)
    pairs_per_row = nnz_row * (nnz_row + 1) // 2
    # 32-bit indices where they fit: the arrays below have one entry per pair of entries in a row
    small = int(pairs_per_row.sum()) < 2**31 and qr * qr < 2**31
    it = np.int32 if small else np.int64
    row_of_entry = np.repeat(np.arange(k.shape[0], dtype=it), nnz_row)
    row_start = k.indptr.astype(it)[row_of_entry]
    rank = np.arange(k.nnz, dtype=it) - row_start  # position of the entry within its row (columns sorted)
    left = np.repeat(np.arange(k.nnz, dtype=it), rank + 1)  # entry e is paired with the entries of its row up to e
    first = np.cumsum(rank + 1, dtype=it) - (rank + 1)
    right = np.repeat(row_start - first, rank + 1)
    right += np.arange(left.size, dtype=it)
    indices = k.indices.astype(it)
    position = indices[left] * it(qr)
    position += indices[right]
    col_ptr = np.concatenate([[0], np.cumsum(pairs_per_row)])[ptr]
    index_type = it
    return sp.csc_matrix((k.data[left] * k.data[right], position.astype(index_type, copy=False), col_ptr), shape=(qr * qr, ptr.size - 1))


def _class_products(k, a: np.ndarray, members: list[np.ndarray]):
    """Per class: ``K_c'K_c`` (a dense stack, or a pair table), ``K_c'A_c`` and ``A_c'A_c``."""
    qr = k.shape[1]
    n_classes = len(members)
    ka = np.stack([np.asarray(k[m].T @ a[m]) for m in members]) if qr else np.zeros((n_classes, 0, a.shape[1]))
    aa = np.stack([a[m].T @ a[m] for m in members])
    if not sp.issparse(k):
        return np.stack([k[m].T @ k[m] for m in members]), None, ka, aa
    table = _pair_table(k, np.concatenate(members), np.concatenate([[0], np.cumsum([m.size for m in members])]))
    table.sum_duplicates()
    return None, table, ka, aa


def level_classes(stats: SufficientStats) -> LevelClasses:
    """Group the largest factor's levels by count and form the per-class cross-products once.

    Examples
    --------
    >>> import pandas as pd
    >>> from mixeval.mixed import build_design
    >>> df = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7, 8], "g": list("aabbccc")})
    >>> c = level_classes(compute_stats(build_design("y ~ 1 + (1|g)", df)))
    >>> c.counts, c.sizes
    (array([2., 3.]), array([2, 1]))
    """
    counts, of_level, sizes = np.unique(stats.counts0, return_inverse=True, return_counts=True)
    of_level = of_level.astype(np.int64)
    order = np.argsort(of_level, kind="stable")
    members = np.split(order, np.cumsum(sizes)[:-1])
    k, a = stats.cross0r, stats.z0w
    qr, p1 = stats.crr.shape[0], a.shape[1]
    if counts.size * (qr * p1 + p1 * p1) > CLASS_BUDGET or not _worth_classes(k, counts.size):
        table = None
        if sp.issparse(k) and _pairs_per_row(k) <= CLASS_BUDGET:  # weights per level through a pair table
            table = _pair_table(k, np.arange(k.shape[0]), np.arange(k.shape[0] + 1))
        return LevelClasses(counts, sizes, of_level, True, stats, _kk_table=table)
    products = _class_products(k, a, members)
    kk_dense, kk_table, ka, aa = products
    return LevelClasses(counts, sizes, of_level, False, stats, kk_dense, kk_table, ka, aa)


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


#: contingency tables up to this many cells are counted densely (one bincount) before being made sparse
DENSE_TABLE_CELLS = 2**22


def _sparse_cross(a: np.ndarray, na: int, b: np.ndarray, nb: int) -> sp.csr_matrix:
    """Contingency table of two code vectors as a sparse ``na x nb`` matrix (canonical CSR: sorted, summed).

    Small tables are counted by one ``bincount`` of the cell index; large ones by the sorted distinct cell
    indices, which are already in CSR order (row-major), so no sparse constructor has to sort or sum.
    """
    cell = a.astype(np.int64) * nb + b
    if na * nb <= DENSE_TABLE_CELLS:
        table = np.bincount(cell, minlength=na * nb)
        cells = np.flatnonzero(table)
        counts = table[cells]
    else:
        cells, counts = np.unique(cell, return_counts=True)
    rows, cols = np.divmod(cells, nb)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=na))])
    index_type = np.int32 if max(nb, cells.size) < 2**31 else np.int64
    return sp.csr_matrix((counts.astype(float), cols.astype(index_type), indptr.astype(index_type)), shape=(na, nb))


def _level_sums(codes: np.ndarray, n: int, W: np.ndarray) -> np.ndarray:
    """``Z'W`` for one factor: column sums of ``W`` within each level."""
    out = np.empty((n, W.shape[1]))
    for j in range(W.shape[1]):
        out[:, j] = np.bincount(codes, weights=W[:, j], minlength=n)
    return out


#: the factors besides the largest are tabulated jointly when they have at most this many level combinations
JOINT_CELLS = 2**16


def _joint_cell_stats(g0, rest, W: np.ndarray):
    """``(Z_0'Z_r, Z_r'W, Z_r'Z_r)`` from one table of the rest factors' joint cells, or None when too many.

    When the factors besides the largest have few level combinations (a grid of hyperparameters), the
    rows are counted once per (level of factor 0, joint cell) and summed once per joint cell; every
    block is then a marginal of those tables, which replaces a pass over the rows per pair of factors.
    """
    sizes = [g.n_levels for g in rest]
    n_cells = int(np.prod(sizes, dtype=np.int64))
    if n_cells > JOINT_CELLS or g0.n_levels * n_cells > DENSE_TABLE_CELLS:
        return None
    cell = np.zeros(W.shape[0], dtype=np.int64)
    for g in rest:  # mixed radix, first factor most significant (C order of the reshaped tables)
        cell *= g.n_levels
        cell += g.codes
    table = np.bincount(g0.codes.astype(np.int64) * n_cells + cell, minlength=g0.n_levels * n_cells)
    table = table.reshape([g0.n_levels, *sizes]).astype(float)
    cell_counts = table.sum(axis=0)
    cell_w = np.stack([np.bincount(cell, weights=W[:, j], minlength=n_cells) for j in range(W.shape[1])], axis=-1)
    cell_w = cell_w.reshape([*sizes, W.shape[1]])
    m = len(rest)
    axes = range(m)

    def marginal(a: np.ndarray, keep: tuple[int, ...], offset: int = 0) -> np.ndarray:
        return a.sum(axis=tuple(offset + i for i in axes if i not in keep))

    cross0r = np.hstack([marginal(table, (i,), offset=1) for i in axes])
    zrw = np.vstack([marginal(cell_w, (i,)) for i in axes])
    blocks = []
    for i in axes:
        row = []
        for j in axes:
            if i == j:
                row.append(np.diag(marginal(cell_counts, (i,))))
            else:
                both = marginal(cell_counts, (i, j))  # axes in increasing order
                row.append(both if i < j else both.T)
        blocks.append(row)
    return cross0r, zrw, np.block(blocks)


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
    joint = _joint_cell_stats(g0, rest, W) if rest else None
    if joint is not None:
        cross0r, zrw, crr = joint
    elif rest:
        cross0r = sp.hstack([_sparse_cross(g0.codes, g0.n_levels, g.codes, g.n_levels) for g in rest], format="csr")
        zrw = np.vstack([_level_sums(g.codes, g.n_levels, W) for g in rest])
        blocks = [[np.diag(np.bincount(a.codes, minlength=a.n_levels).astype(float)) if a is b
                   else _cross_counts(a.codes, a.n_levels, b.codes, b.n_levels) for b in rest] for a in rest]
        crr = blocks[0][0] if len(rest) == 1 else np.block(blocks)
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
