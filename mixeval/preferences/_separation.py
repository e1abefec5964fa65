"""Separation of a preference model's votes: the directions of the coefficients along which the likelihood rises
without bound, found on the fixed-effects difference design (abilities, position bias, covariates, tie parameter).

A vote's likelihood tends to its supremum (1, or a constant) along a direction ``z`` of the parameters iff
``r' z >= 0`` for each of its *constraint rows* ``r`` below, and it falls to 0 if any is negative (``x``: the vote's
row of the difference design, ``z = (d, d_phi)``, ``d_phi`` the tie parameter's part):

* ``ties="drop"`` (binomial): ``x`` if the first-shown system won, ``-x`` if the second did;
* ordinal (``P(b) = F(-tau - eta)``, ``P(b or tie) = F(tau - eta)``): ``(x, -1)``, ``(-x, -1)`` for a win of the
  first or the second; a tie both ``(x, 1)`` and ``(-x, 1)``;
* Davidson (``phi = log nu``): a win of the first ``(x, 0)`` and ``(x, -2)``, of the second ``(-x, 0)`` and
  ``(-x, -2)``; a tie ``(x, 2)`` and ``(-x, 2)``.

The maximum-likelihood estimates exist iff the cone ``{z: A z >= 0}`` of the constraint rows ``A`` holds only
directions with ``A z = 0`` (Albert & Anderson 1984; Konis 2007, R's ``detectseparation``); the rows some ``z`` of
the cone makes positive are the *separated* ones (won with probability 1 in the limit). Their set is maximal when
found from one point of the cone's relative interior (Goldman-Tucker): the separated rows are exactly those with
``y_j = 0`` in every ``y >= 0`` with ``A' y = 0`` (Stiemke's alternative), so a ``y`` that is positive on a set of
rows proves those rows not separated.

Two such ``y`` come cheaply: the score of the model at any parameters is ``A' w`` with ``w > 0`` (the weights of
:func:`constraint_rows`), so at a converged fit ``w`` corrected to ``A' y = 0`` (one ``p x p`` solve) is positive on
every row not being pushed to probability 1; the rows it proves fix the rest to a subspace ``L``, and only the
rows that move within ``L`` (usually few: those of the separated votes) enter a linear program solved by
``scipy.optimize.linprog`` (HiGHS):
``max sum(u)`` subject to ``B' (u + v) = 0``, ``0 <= u <= 1``, ``v >= 0`` (``B`` those rows in ``L``'s
coordinates), whose optimum has ``u_j = 1`` exactly on the rows that are not separated.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog
from scipy.special import expit

from ..errors import SeparationWarning, caller_stacklevel
from ._design import POSITION, DifferenceDesign, difference_design, gram_null, unidentified
from ._fixed import OutcomeModel
from ._log import VoteLog

__all__ = ["Separation", "constraint_rows", "find_separation", "separated_rows", "unbounded_sides", "ability_groups",
           "separated_systems", "describe_separation", "warn_separation"]

#: a row counts as moving along the directions ``N`` when ``|x' N| > _ROW_TOL |x|``
_ROW_TOL = 1e-9
#: rows whose loser's fitted probability is below this enter the linear program instead of the score's proof
_TINY = 1e-8


@dataclass(frozen=True)
class Separation:
    """Where a preference model's maximum-likelihood estimates do not exist.

    Attributes
    ----------
    null : ndarray, shape (p, r)
        Orthonormal basis of the coefficient directions the non-separated votes do not identify (``r = 0``: the
        estimates exist; the directions of a separation, and of any aliasing): a linear function ``f' beta`` has
        a finite estimate iff ``f`` is orthogonal to it.
    tie_infinite : bool
        The tie parameter grows without bound too (every decisive vote separated, the ties between them).
    """

    null: np.ndarray
    tie_infinite: bool = False

    @property
    def any(self) -> bool:
        return bool(self.null.shape[1] or self.tie_infinite)


def separated_rows(X, null: np.ndarray) -> np.ndarray:
    """Rows of the design ``X`` (dense or sparse) that move along the directions ``null``: the separated votes
    (the votes that are not separated have ``X N = 0``)."""
    if null.shape[1] == 0:
        return np.zeros(X.shape[0], dtype=bool)
    moved = np.linalg.norm(np.asarray(X @ null), axis=1)
    size = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel()) if sp.issparse(X) else np.linalg.norm(X, axis=1)
    return moved > _ROW_TOL * np.maximum(size, 1e-300)


def constraint_rows(model: OutcomeModel, X: np.ndarray, outcome: np.ndarray, count: np.ndarray, beta: np.ndarray,
                    phi: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The constraint rows ``A`` of the votes (module docstring), the weights ``w > 0`` with ``A' w`` the score of
    ``(beta, phi)`` and the vote each row belongs to.

    Examples
    --------
    >>> from ._fixed import outcome_model
    >>> X = np.array([[1.0], [1.0]])
    >>> A, w, vote = constraint_rows(outcome_model("drop"), X, np.array([2, 0]), np.array([3.0, 1.0]),
    ...                              np.array([0.0]), float("nan"))
    >>> A.ravel().tolist(), w.tolist(), float((A.T @ w)[0])  # score 3 (1 - 1/2) - 1/2 = 1
    ([1.0, -1.0], [1.5, 0.5], 1.0)
    """
    eta = X @ beta
    n = np.asarray(count, dtype=float)
    a, b, t = outcome == 2, outcome == 0, outcome == 1
    if model.name == "binomial":
        pa = expit(eta)
        sign = np.where(a, 1.0, -1.0)
        return X * sign[:, None], n * np.where(a, 1 - pa, pa), np.arange(X.shape[0])
    one = np.ones((X.shape[0], 1))
    if model.name == "ordinal":
        hi, lo = expit(phi - eta), expit(-phi - eta)
        p_tie = np.maximum(hi - lo, 1e-300)
        parts = [(a, np.hstack([X, -one]), hi), (b, np.hstack([-X, -one]), 1 - lo),
                 (t, np.hstack([-X, one]), hi * (1 - hi) / p_tie), (t, np.hstack([X, one]), lo * (1 - lo) / p_tie)]
    else:  # davidson: P(a) : P(tie) : P(b) = e^(eta/2) : e^phi : e^(-eta/2)
        probs = model.probabilities(eta, phi)[0]
        pb, pt, pa = probs
        parts = [(a, np.hstack([X, 0 * one]), pb), (a, np.hstack([X, -2 * one]), pt / 2),
                 (b, np.hstack([-X, 0 * one]), pa), (b, np.hstack([-X, -2 * one]), pt / 2),
                 (t, np.hstack([X, 2 * one]), pb / 2), (t, np.hstack([-X, 2 * one]), pa / 2)]
    rows = np.vstack([r[m] for m, r, _ in parts])
    weights = np.concatenate([n[m] * w[m] for m, _, w in parts])
    votes = np.concatenate([np.flatnonzero(m) for m, _, _ in parts])
    return rows, weights, votes


def _proved(A: np.ndarray, w: np.ndarray, size: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows proved not separated: the weights ``w`` of rows whose loser is not all but certain, corrected to
    ``y = w (1 - A delta)`` with ``A' y = 0`` (``delta`` from one weighted least-squares solve), on the rows where
    ``y`` stays positive (rows dropped and the correction repeated until it does). Also returns the weighted
    Gram matrix ``A' W A`` of those rows (its null space is theirs)."""
    keep = w > _TINY * size
    A = sp.csr_matrix(A)
    for _ in range(8):
        if not keep.any():
            break
        Ak, wk = A[keep], w[keep]
        gram = np.asarray((Ak.T @ Ak.multiply(wk[:, None])).toarray())
        delta = np.linalg.lstsq(gram, Ak.T @ wk, rcond=None)[0]
        shift = Ak @ delta
        if np.all(shift < 0.5):
            return keep, gram
        idx = np.flatnonzero(keep)
        keep[idx[shift >= 0.5]] = False
    return np.zeros(A.shape[0], dtype=bool), np.zeros((A.shape[1], A.shape[1]))


def _maximal_separated(B: np.ndarray) -> np.ndarray:
    """Rows ``j`` of ``B`` with ``B_j z > 0`` for some ``z`` of the cone ``{z: B z >= 0}``: the linear program
    ``max sum(u)``, ``B' (u + v) = 0``, ``0 <= u <= 1``, ``v >= 0`` (rows scaled to unit norm) has ``u_j = 1`` on
    the others and 0 on these."""
    m, r = B.shape
    B = B / np.linalg.norm(B, axis=1, keepdims=True)
    Bt = sp.csr_matrix(B.T)
    res = linprog(np.concatenate([-np.ones(m), np.zeros(m)]), A_eq=sp.hstack([Bt, Bt], format="csr"),
                  b_eq=np.zeros(r), bounds=[(0, 1)] * m + [(0, None)] * m, method="highs")
    if res.status != 0:  # the program is feasible (0) and bounded (by m): a solver failure
        raise RuntimeError(f"the separation linear program failed: {res.message}")
    return res.x[:m] < 0.5


def find_separation(model: OutcomeModel, X: np.ndarray, outcome: np.ndarray, count: np.ndarray,
                    beta: np.ndarray, phi: float) -> Separation:
    """The separation of the votes (rows of the dense design ``X`` with their outcomes and counts), from a fit
    ``(beta, phi)`` of them (converged, or stopped where the likelihood flattened): the module docstring.

    Examples
    --------
    The system shown first won every vote, in both orders: the position bias is infinite and, with no vote left
    to compare them, so is the difference of the abilities.

    >>> from ._fixed import fit_fixed, outcome_model
    >>> X = np.array([[1.0, 1.0], [-1.0, 1.0]])  # x first, y first (sum-to-zero ability, position)
    >>> model = outcome_model("drop")
    >>> fit = fit_fixed(model, X, np.array([2, 2]), np.array([10.0, 10.0]), warn=False, covariance=False)
    >>> find_separation(model, X, np.array([2, 2]), np.array([10.0, 10.0]), fit.beta, fit.phi).null.shape
    (2, 2)
    """
    p = X.shape[1]
    used = np.asarray(count) > 0
    X, outcome, count = X[used], np.asarray(outcome)[used], np.asarray(count, dtype=float)[used]
    A, w, vote = constraint_rows(model, X, outcome, count, beta, phi)
    proved, gram = _proved(A, w, count[vote])
    span = gram_null(gram) if proved.any() else np.eye(A.shape[1])
    if span.shape[1] == 0:  # the proved rows identify every direction (so does X: no aliasing either)
        return Separation(null=np.zeros((p, 0)))
    separated = np.zeros(A.shape[0], dtype=bool)
    moving = separated_rows(A, span)
    if moving.any():
        separated[np.flatnonzero(moving)[_maximal_separated(A[moving] @ span)]] = True
    out = np.zeros(X.shape[0], dtype=bool)
    out[vote[separated]] = True
    if model.n_phi and np.any(out & (outcome == 1)):
        return Separation(null=np.eye(p), tie_infinite=True)
    return Separation(null=unidentified(X[~out]))


def unbounded_sides(model: OutcomeModel, X: np.ndarray, outcome: np.ndarray, count: np.ndarray, null: np.ndarray,
                    c: np.ndarray) -> tuple[bool, bool]:
    """Whether the likelihood leaves ``c' beta`` unbounded below and above: some direction ``z`` of the separation's
    cone (``A z >= 0`` on the constraint rows with the tie parameter held, ``z`` in the span of ``null``) has
    ``c' z < 0`` (below) or ``> 0`` (above). A profile-likelihood interval is infinite on those sides and finite
    on the others (moving that way costs separated votes their certainty).

    Examples
    --------
    >>> from ._fixed import outcome_model
    >>> X = np.array([[1.0]])  # x beat y in the only vote: its ability is bounded below by the data, not above
    >>> unbounded_sides(outcome_model("drop"), X, np.array([2]), np.array([1.0]), np.eye(1), np.array([1.0]))
    (False, True)
    """
    cn = c @ null
    if null.shape[1] == 0 or np.linalg.norm(cn) <= LOAD_TOL * max(np.linalg.norm(c), 1e-300):
        return False, False
    used = np.asarray(count) > 0
    A = constraint_rows(model, X[used], np.asarray(outcome)[used], np.asarray(count, dtype=float)[used],
                        np.zeros(X.shape[1]), 0.0)[0][:, :X.shape[1]] @ null
    A = A[np.linalg.norm(A, axis=1) > 0]
    sides = []
    for sign in (1.0, -1.0):  # min c'z, then max c'z over the cone within the unit box
        res = linprog(sign * cn, A_ub=-A if len(A) else None, b_ub=np.zeros(len(A)) if len(A) else None,
                      bounds=[(-1, 1)] * null.shape[1], method="highs")
        sides.append(res.status == 0 and res.fun < -1e-9)  # min c'z < 0, or max c'z > 0
    return sides[0], sides[1]


#: a coefficient loads on the unidentified directions when the norm of its row of ``N`` exceeds this
LOAD_TOL = 1e-8


def ability_groups(null: np.ndarray, design: DifferenceDesign) -> np.ndarray:
    """Group labels of the systems: two share a group iff the votes identify the difference of their abilities
    (its row ``c`` has ``c' N = 0``); groups numbered by size, largest first (then by their first system).

    Examples
    --------
    >>> from ._design import constraint_matrix
    >>> d = DifferenceDesign(X=np.zeros((0, 2)), names=("y", "z"), C=constraint_matrix(3, 0), n_abilities=2)
    >>> ability_groups(np.array([[0.0], [1.0]]), d).tolist()  # z apart from x and y
    [0, 0, 1]
    """
    m = design.n_abilities
    k = design.C.shape[0]
    loads = design.C @ null[:m] if m else np.zeros((k, null.shape[1]))
    labels = np.full(k, -1)
    groups = 0
    for i in range(k):
        if labels[i] < 0:
            labels[(labels < 0) & (np.linalg.norm(loads - loads[i], axis=1) <= LOAD_TOL)] = groups
            groups += 1
    sizes = np.bincount(labels)
    order = sorted(range(groups), key=lambda g: (-sizes[g], int(np.flatnonzero(labels == g)[0])))
    rank = np.empty(groups, dtype=np.int64)
    rank[order] = np.arange(groups)
    return rank[labels]


def separated_systems(labels: np.ndarray, systems: tuple[str, ...]) -> list[str]:
    """Systems whose ability is infinite relative to the rest: those outside the largest group of
    :func:`ability_groups`, every system when all groups are single systems; empty without separation."""
    if np.all(labels == 0):
        return []
    if np.sum(labels == 0) == 1:
        return list(systems)
    return [systems[i] for i in np.flatnonzero(labels != 0)]


def _group_text(groups: list[list[str]], sep: str) -> str:
    shown = sep.join("{" + ", ".join(g[:6]) + (", ..." if len(g) > 6 else "") + "}" for g in groups[:8])
    return shown + (sep + "..." if len(groups) > 8 else "")


def _loaded(null: np.ndarray, design: DifferenceDesign) -> list[str]:
    """Names of the position and covariate coefficients the unidentified directions ``null`` move."""
    m = design.n_abilities
    return [nm for j, nm in enumerate(design.names) if j >= m and np.linalg.norm(null[j]) > LOAD_TOL]


def _parts(null: np.ndarray, design: DifferenceDesign, systems: tuple[str, ...]) -> list[str]:
    parts = []
    loaded = _loaded(null, design)
    if POSITION in loaded:
        parts.append("the position bias (of the system shown first)")
    covs = [nm for nm in loaded if nm != POSITION]
    if covs:
        parts.append(f"the covariate{'s' if len(covs) > 1 else ''} {', '.join(repr(c) for c in covs)}")
    labels = ability_groups(null, design)
    if labels.max(initial=0) > 0:
        groups = [[systems[i] for i in np.flatnonzero(labels == g)] for g in range(int(labels.max()) + 1)]
        parts.append(f"the abilities of the groups {_group_text(groups, ' | ')}")
    return parts


def describe_separation(null: np.ndarray, design: DifferenceDesign, systems: tuple[str, ...]) -> str:
    """What the unidentified directions ``null`` move, in words: the position bias, covariates, and the ability
    differences between groups of systems (:func:`ability_groups`)."""
    parts = _parts(null, design, systems)
    return " and ".join([", ".join(parts[:-1]), parts[-1]] if len(parts) > 1 else parts)


def _ordered_components(log: VoteLog, labels: np.ndarray) -> list[list[str]]:
    """The groups of a separation among systems alone from the top (winners) down: a topological order of the win
    graph's condensation."""
    n = int(labels.max()) + 1
    used = log.count > 0
    a, b, o = log.a[used], log.b[used], log.outcome[used]
    win, lose = np.where(o == 2, a, b), np.where(o == 2, b, a)
    between = (o != 1) & (labels[win] != labels[lose])
    edges = {(int(labels[w]), int(labels[v])) for w, v in zip(win[between], lose[between])}
    indegree = np.zeros(n, dtype=int)
    for _, v in edges:
        indegree[v] += 1
    order, ready = [], sorted(c for c in range(n) if indegree[c] == 0)
    while ready:
        c = ready.pop(0)
        order.append(c)
        for w, v in sorted(edges):
            if w == c:
                indegree[v] -= 1
                if indegree[v] == 0:
                    ready.append(v)
    return [[log.systems[i] for i in np.flatnonzero(labels == c)] for c in order]


def warn_separation(log: VoteLog, null: np.ndarray, *, reference: int | None, position: bool) -> None:
    """Warn that some estimates are infinite, naming what separates: groups of systems that never both beat and
    lost to one another (the win graph's wording), or the position bias, covariates and groups of systems with the
    number of votes they predict without exception. ``log``: the votes the fit used."""
    if null.shape[1] == 0:
        return
    flat = log.collapse(judge=False, prompt=False)
    design = difference_design(flat, reference=reference, position=position)
    labels = ability_groups(null, design)
    if not _loaded(null, design):
        groups = _ordered_components(flat, labels)
        warnings.warn(
            f"separation: the systems fall into {len(groups)} groups, none of which both beat and lost to another "
            f"(ties count both ways), from the top: {_group_text(groups, ' > ')}. Ability differences "
            "between groups are infinite (their maximum-likelihood estimates do not exist): the values reported are "
            "where the fit stopped, with infinite standard errors for every ability and contrast that compares "
            "systems of different groups; differences within a group are estimated as usual (with reference= a "
            "system of a group, that group's abilities are finite). Collect more votes between the groups, or bound "
            "the differences on one side with intervals(method='profile').",
            SeparationWarning, stacklevel=caller_stacklevel())
        return
    moved = separated_rows(design.X, null)
    k, n = int(round(float(flat.count[moved].sum()))), flat.n_votes
    loaded = _loaded(null, design)
    hints = (["fit position='none'"] if POSITION in loaded else []) + (
        ["leave out the covariate"] if any(nm != POSITION for nm in loaded) else [])
    rest = f"the other {n - k} votes do not identify them" if k < n else "no vote is left to identify them"
    warnings.warn(
        f"separation: {k} of {n} votes are won, without exception, by the side that some combination of the "
        "model's coefficients favours (quasi-complete separation), so the likelihood rises without bound along it: "
        f"{describe_separation(null, design, log.systems)} have no finite maximum-likelihood estimates ({rest}). "
        "They are reported where the fit stopped, with infinite standard errors, as is every ability, contrast and "
        "coefficient that depends on them"
        + (f"; the rest is the fit to the other {n - k} votes" if k < n else "") + ". Collect votes that break the "
        "pattern" + (f", or {' or '.join(hints)}" if hints else "") + ".",
        SeparationWarning, stacklevel=caller_stacklevel())
