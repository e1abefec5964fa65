"""Stage 2: votes -> the difference design of a Bradley-Terry model.

Row ``i`` (systems ``a`` first, ``b`` second) has the linear predictor
``eta_i = s_a - s_b + gamma [position] + delta' (z_a - z_b) [covariates]``. The abilities ``s`` (one per
system) are identified by a constraint: a reference system's ability 0 (its column dropped) or
``sum s = 0`` (effects coding: the last system's column is ``-1`` times every other); either way
``s = C beta_s`` for a ``K x (K - 1)`` matrix ``C``, and the covariance of all abilities is ``C V C'``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..errors import InputError
from ._log import VoteLog

__all__ = ["DifferenceDesign", "difference_design", "constraint_matrix", "reference_index", "POSITION", "POSITIONS"]

POSITION = "position"
POSITIONS = ("none", "fixed", "random")


@dataclass(frozen=True)
class DifferenceDesign:
    """The fixed-effects matrix of the votes and how its first columns map to the abilities.

    Attributes
    ----------
    X : ndarray or scipy.sparse.csr_matrix, shape (n, p)
        Ability columns (``K - 1``), then ``position`` (all ones: ``model_a`` is the one shown first) when
        modelled, then the covariate differences.
    names : tuple of str
    C : ndarray, shape (K, K - 1)
        ``abilities = C beta[:K - 1]``.
    n_abilities : int
        ``K - 1`` (0 in a null model without abilities).
    """

    X: np.ndarray = field(repr=False)
    names: tuple[str, ...]
    C: np.ndarray = field(repr=False)
    n_abilities: int

    @property
    def p(self) -> int:
        return int(self.X.shape[1])


def constraint_matrix(k: int, reference: int | None) -> np.ndarray:
    """``C`` with ``s = C beta``: the reference's row 0 (identity elsewhere), or effects coding (sum 0).

    Examples
    --------
    >>> constraint_matrix(3, None).tolist()
    [[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]]
    >>> constraint_matrix(3, 0).tolist()
    [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]
    """
    if reference is None:
        return np.vstack([np.eye(k - 1), -np.ones((1, k - 1))])
    c = np.zeros((k, k - 1))
    others = [j for j in range(k) if j != reference]
    c[others, np.arange(k - 1)] = 1.0
    return c


def difference_design(log: VoteLog, *, reference: int | None, position: bool, abilities: bool = True,
                      sparse: bool = False) -> DifferenceDesign:
    """The difference design of ``log`` (``abilities=False``: the null model of equal abilities).

    ``sparse=True`` builds ``X`` as a CSR matrix (two ability entries per row, then the position and
    covariate columns) for the random-effects engine, which then forms ``X' W X`` as a weighted Laplacian of
    the pairs in ``O(n)`` instead of a dense ``n x p`` product.

    Examples
    --------
    >>> import pandas as pd
    >>> from mixeval.preferences._log import read_log
    >>> log = read_log(pd.DataFrame({"model_a": ["x", "y"], "model_b": ["y", "z"], "winner": ["model_a", "tie"]}))
    >>> d = difference_design(log, reference=0, position=True)
    >>> d.names, d.X.tolist()
    (('y', 'z', 'position'), [[-1.0, 0.0, 1.0], [1.0, -1.0, 1.0]])
    """
    k, n = log.n_systems, log.n_rows
    C = constraint_matrix(k, reference)
    if sparse:
        return _sparse_difference_design(log, C, reference, position, abilities)
    cols, names = [], []
    if abilities:
        full = np.zeros((n, k))
        full[np.arange(n), log.a] += 1.0
        full[np.arange(n), log.b] -= 1.0
        cols.append(full @ C)
        names += [log.systems[j] for j in range(k) if j != reference] if reference is not None else list(log.systems[:-1])
    if position:
        cols.append(np.ones((n, 1)))
        names.append(POSITION)
    if log.covariate_names:
        cols.append(log.covariates)
        names += list(log.covariate_names)
    X = np.hstack(cols) if cols else np.zeros((n, 0))
    return DifferenceDesign(X=X, names=tuple(names), C=C, n_abilities=k - 1 if abilities else 0)


def _ability_names(log: VoteLog, reference: int | None) -> list[str]:
    k = log.n_systems
    return [log.systems[j] for j in range(k) if j != reference] if reference is not None else list(log.systems[:-1])


def _sparse_difference_design(log: VoteLog, C: np.ndarray, reference: int | None, position: bool,
                              abilities: bool) -> DifferenceDesign:
    """:func:`difference_design` as a CSR matrix: ``(e_a - e_b)' C`` per row, from the sparse rows of ``C``."""
    k, n = log.n_systems, log.n_rows
    rows = np.arange(n)
    blocks, names = [], []
    if abilities:
        full = sp.csr_matrix((np.concatenate([np.ones(n), -np.ones(n)]),
                              (np.concatenate([rows, rows]), np.concatenate([log.a, log.b]))), shape=(n, k))
        blocks.append(full @ sp.csr_matrix(C))
        names += _ability_names(log, reference)
    if position:
        blocks.append(sp.csr_matrix(np.ones((n, 1))))
        names.append(POSITION)
    if log.covariate_names:
        blocks.append(sp.csr_matrix(log.covariates))
        names += list(log.covariate_names)
    X = sp.hstack(blocks, format="csr") if blocks else sp.csr_matrix((n, 0))
    X.eliminate_zeros()
    return DifferenceDesign(X=X, names=tuple(names), C=C, n_abilities=k - 1 if abilities else 0)


def reference_index(systems: tuple[str, ...], reference: str | None) -> int | None:
    """Index of the reference system (``None``: sum-to-zero)."""
    if reference is None:
        return None
    if str(reference) not in systems:
        raise InputError(f"reference={reference!r} is not one of the log's systems "
                         f"({', '.join(systems[:10])}{', ...' if len(systems) > 10 else ''}).")
    return systems.index(str(reference))

