"""Which columns of a rank-deficient model matrix R keeps: lme4's ``chkRank.drop.cols`` and ordinal's ``drop.coef``.

Both take ``qr(X, tol = 1e-7, LAPACK = FALSE)`` (LINPACK's ``dqrdc2``, Householder QR with limited pivoting) and keep
the columns of its first ``rank`` pivots. ``dqrdc2`` moves a column to the end, for good, when the norm of what is
left of it after the columns before it falls below ``tol`` times its own norm; so the kept columns are the greedy,
left-to-right choice of columns that add a direction, in the matrix's order, and the dropped ones are the columns
that are (numerically) linear combinations of the kept columns before them.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from ..errors import RankDeficientWarning, caller_stacklevel

__all__ = ["kept_columns", "kept_columns_of_gram", "rank_message", "warn_dropped", "RANK_TOL"]

#: R's tolerance of ``qr()`` in lme4's and ordinal's rank checks (relative to each column's norm)
RANK_TOL = 1e-7


def _greedy(R: np.ndarray, tol: float) -> list[int]:
    """``dqrdc2``'s choice on a triangular factor ``R`` of unit-norm columns: column ``j`` is kept when its residual
    after the kept columns before it has norm ``>= tol``."""
    p = R.shape[1]
    basis = np.zeros((R.shape[0], 0))
    kept: list[int] = []
    for j in range(p):
        v = R[:, j].copy()
        for _ in range(2):  # Gram-Schmidt twice: orthogonal to working precision
            v -= basis @ (basis.T @ v)
        norm = float(np.linalg.norm(v))
        if norm >= tol:
            kept.append(j)
            basis = np.column_stack([basis, v / norm])
    return kept


def kept_columns(X: np.ndarray, tol: float = RANK_TOL) -> list[int]:
    """Indices of the columns of ``X`` that R's rank check keeps (lme4's ``chkRank.drop.cols``).

    Parameters
    ----------
    X : ndarray, shape (n, p)
        A model matrix.
    tol : float, default 1e-7
        R's ``qr()`` tolerance: a column is dropped when the norm of its residual on the kept columns before it is
        below ``tol`` times its own norm (a zero column is always dropped).

    Returns
    -------
    list of int
        The kept columns, in order; all of them when ``X`` has full column rank.

    Notes
    -----
    With ``D`` the column norms, ``X D^{-1} = Q R``; the residual of column ``j`` on columns ``K`` has the norm of
    the residual of ``R[:, j]`` on ``R[:, K]``, so the greedy choice runs on the ``p x p`` factor. A Gram-matrix
    screen comes first: when every column's squared relative residual on all the others exceeds ``1e-6`` the matrix
    has full rank with a wide margin and no QR is formed.

    Examples
    --------
    A two-by-two design with an empty cell: the interaction column repeats the second main effect.

    >>> X = np.array([[1, 0, 0, 0], [1, 1, 0, 0], [1, 0, 1, 0], [1, 0, 1, 0.]])
    >>> kept_columns(X)
    [0, 1, 2]
    """
    X = np.asarray(X, dtype=float)
    p = X.shape[1]
    if p == 0:
        return []
    norms = np.sqrt(np.einsum("ij,ij->j", X, X))
    nonzero = norms > 0
    scaled = X[:, nonzero] / norms[nonzero]
    if nonzero.all() and _gram_full_rank(scaled.T @ scaled):
        return list(range(p))
    if scaled.shape[0] >= scaled.shape[1]:
        R = np.linalg.qr(scaled, mode="r")
    else:  # fewer rows than columns: the rows' coordinates serve as well
        R = scaled
    index = np.flatnonzero(nonzero)
    return [int(index[j]) for j in _greedy(R, tol)]


def _gram_full_rank(gram: np.ndarray, margin: float = 1e-6) -> bool:
    """Every column of unit norm has squared residual above ``margin`` on all the others (``1 / (G^{-1})_jj``)."""
    try:
        inverse = np.linalg.inv(gram)
    except np.linalg.LinAlgError:
        return False
    diag = np.diag(inverse)
    return bool(np.all(np.isfinite(diag)) and np.all(diag > 0) and np.all(1.0 / diag > margin))


def kept_columns_of_gram(gram: np.ndarray, tol: float = 1e-11) -> list[int]:
    """:func:`kept_columns` from ``X'X`` alone (data summed by a query engine): the same greedy rule on the Cholesky
    factor, with ``tol`` a bound on the *squared* relative residual (the Gram matrix squares the rounding error, so
    R's ``1e-7`` on the norm cannot be resolved; exact aliasing, as of factors, leaves residuals near ``1e-16``).

    Examples
    --------
    >>> X = np.array([[1, 0, 0, 0], [1, 1, 0, 0], [1, 0, 1, 0], [1, 0, 1, 0.]])
    >>> kept_columns_of_gram(X.T @ X)
    [0, 1, 2]
    """
    gram = np.asarray(gram, dtype=float)
    d = np.sqrt(np.clip(np.diag(gram), 0.0, None))
    kept: list[int] = []
    for j in range(gram.shape[0]):
        if d[j] == 0.0:
            continue
        if kept:
            g = gram[np.ix_(kept, kept)] / np.outer(d[kept], d[kept])
            b = gram[kept, j] / (d[kept] * d[j])
            resid = 1.0 - b @ np.linalg.solve(g, b)
        else:
            resid = 1.0
        if resid >= tol:
            kept.append(j)
    return kept


def rank_message(dropped: Sequence[str], what: str = "fixed-effect model matrix") -> str:
    """lme4's message on dropping columns, naming them.

    Examples
    --------
    >>> rank_message(["a2:b2"])
    'fixed-effect model matrix is rank deficient so dropping 1 column / coefficient (a2:b2)'
    """
    n = len(dropped)
    noun = "column / coefficient" if n == 1 else "columns / coefficients"
    return f"{what} is rank deficient so dropping {n} {noun} ({', '.join(dropped)})"


def warn_dropped(dropped: Sequence[str]) -> None:
    """Warn (:class:`~mixeval.errors.RankDeficientWarning`) that a fit dropped the aliased fixed-effect ``dropped``.

    Examples
    --------
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_dropped(["systemC"])
    >>> caught[0].category.__name__
    'RankDeficientWarning'
    """
    warnings.warn(
        f"{rank_message(dropped)}; the kept coefficients are fitted (lme4's default). The dropped column(s) are "
        "linear combinations of the columns before them (e.g. an empty combination of factor levels, or a covariate "
        "that a factor determines): fixef() omits them, as lme4's does, and marginal means that need them are not "
        "estimable (NaN). Remove or recode the redundant terms to silence this.",
        RankDeficientWarning,
        stacklevel=caller_stacklevel(),
    )
