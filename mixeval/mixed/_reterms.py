"""The random-effects structure shared by every mixed model (lme4's ``mkReTrms``).

Each random-effects term ``(x1 + x2 | g)`` contributes, for every level of the
grouping factor ``g``, a block of ``p_k`` columns of ``Z`` (the term's model
matrix ``X_k`` times the level's indicator) and a ``p_k x p_k`` relative
covariance factor ``Lambda_k`` (lower-triangular, diagonal >= 0), so that
``Var(b_level) = sigma^2 Lambda_k Lambda_k'``. As in lme4:

- columns of ``Z`` are ordered term by term (terms in the order of the design),
  and within a term level by level, the ``p_k`` coefficients of a level adjacent;
- ``theta`` stacks, term by term, the lower triangle of ``Lambda_k`` column-wise
  (for ``p_k = 2``: ``[L11, L21, L22]``); its lower bounds are 0 on the diagonal and
  ``-inf`` off it; the starting value is the identity (1 on the diagonal, 0 off it);
- ``Lambda' = blockdiag(I_{n_levels} (x) Lambda_k')``.

The linear (:mod:`._deviance`) and generalised (PIRLS) engines both work from
a :class:`ReStructure`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp

__all__ = ["ReTerm", "ReStructure", "build_restructure", "theta_to_factors"]


@dataclass(frozen=True)
class ReTerm:
    """One random-effects term: a grouping factor and the model matrix of its coefficients.

    Attributes
    ----------
    group : str
        The group's name as lme4 prints it (``"subject"``, ``"rater:site"``).
    coef_names : tuple of str
        Names of the term's coefficients as lme4 prints them (``("(Intercept)", "x")``).
    codes : ndarray of int, shape (n,)
        Level code (0 .. n_levels - 1) of each row.
    levels : tuple of str
        Labels of the levels.
    X : ndarray, shape (n, p_k)
        The term's model matrix (a column of ones for a random intercept).
    codes2 : ndarray of int, shape (n,), optional
        A second level of each row (multiple membership): row ``i`` loads ``X[i]`` on level ``codes[i]``
        and ``X2[i]`` on level ``codes2[i]``, e.g. ``+1`` and ``-1`` for the difference of two systems'
        random effects in a paired comparison. ``None`` (the default): one level per row, as lme4.
    X2 : ndarray, shape (n, p_k), optional
        The loadings on ``codes2`` (required with it).

    Examples
    --------
    A multiple-membership term: each row is the difference of the effects of two levels.

    >>> import numpy as np
    >>> t = ReTerm("system:judge", ("(Intercept)",), np.array([0, 1]), ("a", "b", "c"), np.ones((2, 1)),
    ...            codes2=np.array([2, 0]), X2=-np.ones((2, 1)))
    >>> t.is_multiple_membership, ReStructure((t,), 2).Zt.toarray().tolist()
    (True, [[1.0, -1.0], [0.0, 1.0], [-1.0, 0.0]])
    """

    group: str
    coef_names: tuple[str, ...]
    codes: np.ndarray = field(repr=False)
    levels: tuple[str, ...] = field(repr=False)
    X: np.ndarray = field(repr=False)
    codes2: np.ndarray | None = field(default=None, repr=False)
    X2: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if (self.codes2 is None) != (self.X2 is None):
            raise ValueError("a multiple-membership term needs both codes2 and X2")  # internal construction error

    @property
    def is_multiple_membership(self) -> bool:
        """Each row loads on two levels (``codes2`` given); never eliminated block-diagonally."""
        return self.codes2 is not None

    @property
    def n_levels(self) -> int:
        return len(self.levels)

    @property
    def n_coef(self) -> int:
        return len(self.coef_names)

    @property
    def n_theta(self) -> int:
        p = self.n_coef
        return p * (p + 1) // 2

    @property
    def is_intercept(self) -> bool:
        """A scalar random intercept ``(1|g)``."""
        return self.coef_names == ("(Intercept)",)


def _tril_template(p: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of a ``p x p`` lower triangle, column-wise (lme4's theta order)."""
    rows, cols = [], []
    for j in range(p):
        for i in range(j, p):
            rows.append(i)
            cols.append(j)
    return np.array(rows, dtype=int), np.array(cols, dtype=int)


def theta_to_factors(terms: tuple[ReTerm, ...], theta: np.ndarray) -> list[np.ndarray]:
    """The relative covariance factors ``Lambda_k`` (lower-triangular ``p_k x p_k``) at ``theta``.

    Examples
    --------
    >>> import numpy as np
    >>> t = ReTerm("g", ("(Intercept)", "x"), np.zeros(2, int), ("a",), np.ones((2, 2)))
    >>> theta_to_factors((t,), np.array([1.0, 0.5, 2.0]))[0]
    array([[1. , 0. ],
           [0.5, 2. ]])
    """
    theta = np.asarray(theta, dtype=float)
    out, start = [], 0
    for term in terms:
        rows, cols = _tril_template(term.n_coef)
        lam = np.zeros((term.n_coef, term.n_coef))
        lam[rows, cols] = theta[start:start + term.n_theta]
        out.append(lam)
        start += term.n_theta
    return out


@dataclass(frozen=True)
class ReStructure:
    """The random-effects terms of a model with ``Z'``, the theta layout and ``Lambda'(theta)``.

    Examples
    --------
    One random intercept of three raters over five rows:

    >>> import numpy as np
    >>> term = ReTerm("rater", ("(Intercept)",), np.array([0, 0, 1, 1, 2]), ("r1", "r2", "r3"), np.ones((5, 1)))
    >>> re = ReStructure(terms=(term,), nobs=5)
    >>> re.n_theta, re.q, re.theta0.tolist()
    (1, 3, [1.0])
    """

    terms: tuple[ReTerm, ...]
    nobs: int

    @property
    def n_theta(self) -> int:
        return int(sum(t.n_theta for t in self.terms))

    @property
    def q(self) -> int:
        """Number of random effects (columns of ``Z``)."""
        return int(sum(t.n_levels * t.n_coef for t in self.terms))

    @cached_property
    def theta0(self) -> np.ndarray:
        """lme4's starting value: identity relative covariance factors."""
        return np.concatenate([np.where(_diag_mask(t.n_coef), 1.0, 0.0) for t in self.terms]) if self.terms else np.zeros(0)

    @cached_property
    def lower(self) -> np.ndarray:
        """Lower bounds of theta: 0 on the diagonals, ``-inf`` off them."""
        return np.concatenate([np.where(_diag_mask(t.n_coef), 0.0, -np.inf) for t in self.terms]) if self.terms else np.zeros(0)

    @cached_property
    def Zt(self) -> sp.csc_matrix:
        """``Z'`` as a sparse ``q x n`` matrix (lme4's ``Zt``)."""
        n = self.nobs
        blocks = []
        rows_idx = np.arange(n)
        for t in self.terms:
            p = t.n_coef
            r = (t.codes[:, None] * p + np.arange(p)[None, :]).ravel()
            c = np.repeat(rows_idx, p)
            block = sp.csr_matrix((t.X.ravel(), (r, c)), shape=(t.n_levels * p, n))
            if t.is_multiple_membership:
                r2 = (t.codes2[:, None] * p + np.arange(p)[None, :]).ravel()
                block = block + sp.csr_matrix((t.X2.ravel(), (r2, c)), shape=(t.n_levels * p, n))
            blocks.append(block)
        if not blocks:
            return sp.csc_matrix((0, n))
        return sp.vstack(blocks).tocsc()

    def lambdat(self, theta: np.ndarray) -> sp.csc_matrix:
        """``Lambda'(theta)``: block diagonal, ``Lambda_k'`` repeated over the levels of term ``k``."""
        blocks = [sp.kron(sp.identity(t.n_levels, format="csr"), sp.csr_matrix(lam.T))
                  for t, lam in zip(self.terms, theta_to_factors(self.terms, theta))]
        if not blocks:
            return sp.csc_matrix((0, 0))
        return sp.block_diag(blocks, format="csc")

    def covariances(self, theta: np.ndarray, sigma: float = 1.0) -> list[np.ndarray]:
        """``sigma^2 Lambda_k Lambda_k'`` per term: the covariance matrix of one level's effects."""
        return [sigma**2 * lam @ lam.T for lam in theta_to_factors(self.terms, theta)]


def _diag_mask(p: int) -> np.ndarray:
    rows, cols = _tril_template(p)
    return rows == cols


def build_restructure(design) -> ReStructure:
    """The random-effects structure of a validated :class:`~mixeval.mixed.Design`.

    One term per random-effects term of the design, in the design's order (decreasing number of
    levels, as lme4): a column of ones for a random intercept, the term's model matrix
    (:attr:`GroupingFactor.X`) for a term with slopes.

    Examples
    --------
    >>> import pandas as pd
    >>> from mixeval.mixed import build_design
    >>> d = build_design("y ~ 1 + (1|g)", pd.DataFrame({"y": [1.0, 2, 3, 5], "g": list("aabb")}))
    >>> re = build_restructure(d)
    >>> re.q, re.n_theta, re.Zt.toarray().tolist()
    (2, 1, [[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]])
    """
    n = design.nobs
    terms = tuple(
        ReTerm(group=g.name, coef_names=tuple(getattr(g, "coef_names", ("(Intercept)",))),
               codes=np.asarray(g.codes, dtype=np.int64), levels=tuple(g.labels),
               X=np.ones((n, 1)) if getattr(g, "X", None) is None else np.asarray(g.X, dtype=float))
        for g in design.groups
    )
    return ReStructure(terms=terms, nobs=n)
