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

__all__ = ["DifferenceDesign", "difference_design", "constraint_matrix", "reference_index", "unidentified",
           "aliased_columns", "gram_null", "POSITION", "POSITIONS", "RANK_TOL"]

POSITION = "position"
POSITIONS = ("none", "fixed", "random")
#: a direction counts as unidentified when its squared norm under the unit-norm columns is below this share of
#: the largest (the engine's tolerance for aliased fixed-effects columns)
RANK_TOL = 1e-10


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



def _gram(X) -> np.ndarray:
    """``X' X`` by a sparse product (a difference design has two nonzero ability entries per row)."""
    X = sp.csr_matrix(X, dtype=float)
    return np.asarray((X.T @ X).toarray())


def _scaled(gram: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A Gram matrix of unit-norm columns and the column norms (1 for a zero column)."""
    scale = np.sqrt(np.maximum(np.diag(gram), 0.0))
    scale = np.where(scale > 0, scale, 1.0)
    return gram / np.outer(scale, scale), scale


def gram_null(gram: np.ndarray) -> np.ndarray:
    """Orthonormal basis of the null space of a Gram matrix ``X' W X`` (``W`` positive diagonal), i.e. of ``X``:
    the eigenvectors of the Gram matrix of the unit-norm columns whose eigenvalue is below :data:`RANK_TOL` times
    the largest (a rescaled column is not mistaken for a dependent one), mapped back to the original columns."""
    p = gram.shape[0]
    scaled, scale = _scaled(gram)
    vals, vecs = np.linalg.eigh(scaled)
    small = vals <= RANK_TOL * max(float(vals.max(initial=0.0)), 1e-300)
    if not small.any():
        return np.zeros((p, 0))
    u, sv, _ = np.linalg.svd(vecs[:, small] / scale[:, None], full_matrices=False)
    return u[:, sv > 1e-12 * sv.max()]


def unidentified(X: np.ndarray) -> np.ndarray:
    """Orthonormal ``p x r`` basis of the coefficient directions ``d`` with ``X d = 0`` (numerically,
    :func:`gram_null`): those the rows of ``X`` do not identify (``r = 0`` for full column rank; every direction
    for no rows).

    Examples
    --------
    >>> X = np.array([[1.0, 2.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 1.0]])
    >>> N = unidentified(X)
    >>> N.shape, bool(np.allclose(X @ N, 0))
    ((3, 1), True)
    """
    if X.shape[0] == 0:
        return np.eye(X.shape[1])
    return gram_null(_gram(X))


def aliased_columns(X: np.ndarray, names: tuple[str, ...]) -> list[tuple[str, tuple[str, ...]]]:
    """The columns of ``X`` that are linear combinations of earlier ones, each with the columns of that
    combination (itself included; a zero column: itself alone), in column order.

    Examples
    --------
    >>> X = np.array([[1.0, 1.0, 0.0, 3.0], [-1.0, 1.0, 0.0, 3.0], [1.0, 1.0, 0.0, 3.0]])
    >>> aliased_columns(X, ("x", "position", "zero", "length"))
    [('zero', ('zero',)), ('length', ('position', 'length'))]
    """
    full = _gram(X)
    if gram_null(full).shape[1] == 0:
        return []
    gram, scale = _scaled(full)
    out, rank = [], 0
    for j in range(gram.shape[0]):
        vals, vecs = np.linalg.eigh(gram[:j + 1, :j + 1])
        small = vals <= RANK_TOL * max(float(vals.max(initial=0.0)), 1e-300)
        if j + 1 - int(small.sum()) > rank:
            rank += 1
            continue
        null = vecs[:, small] / scale[:j + 1, None]
        v = null[:, np.argmax(np.abs(null[j]))]
        v = v / np.max(np.abs(v))
        out.append((names[j], tuple(names[k] for k in range(j + 1) if abs(v[k]) > 1e-6)))
    return out
