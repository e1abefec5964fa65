"""Reliability on the observed scale: the G-theory coefficient of the mean observed score of a GLMM or an ordinal
model (Brennan 2001; Vispoel et al. 2018), by Gauss-Hermite quadrature over the random effects.

The model: item ``i``'s score in cell ``c`` (one level of every facet: rater, seed, ...) has the linear predictor
``eta = eta0 + a_i + sum_k b_k(c)``, ``a_i ~ N(0, s2_item)``, each further component ``k`` a normal effect shared by
the cells that agree on its facets ``F_k`` (its factors other than the item), and the score has mean ``g(eta)``
(the family's mean, the inverse link for most; for ordinal ratings the expected score ``sum_j s_j P(Y = j | eta)``)
and second moment ``q(eta) = E[y^2 | eta] = g(eta)^2 + Var(y | eta)`` (the family's variance with its dispersion). A
D-study observes ``N = prod_f n_f`` cells per item, the facets' levels drawn anew.
With ``T_i = E[y | a_i]`` (the item's expected score over the facets' populations) and ``Ybar_i`` the mean of
its ``N`` observed scores,

    phi_obs(n) = var(T) / E[(Ybar_i - E T)^2] = var(T) / (var(T) + E[var(Ybar_i | a_i)]),

    E[var(Ybar | a)] = (1 / N^2) [N (E q - E T^2) + sum_{S proper subset of F} count(S) (E_S - E T^2)],

``count(S) = prod_{f in S} n_f prod_{f not in S} n_f (n_f - 1)`` the ordered pairs of distinct cells that agree
exactly on the facets ``S``, and ``E_S = E[(E_D g(eta0 + W + D))^2]`` with ``W ~ N(0, s2_item + v_S)``,
``D ~ N(0, v_F - v_S)``: ``v_S`` the variance the two cells share (components with ``F_k`` inside ``S``), ``v_F``
all components but the item's. ``E T^2`` is ``E_S`` at ``S`` empty. The relative coefficient leaves out the
variance of the facets' effects common to all items, ``var(M) = (1 / N^2) sum_S count(S) (E^0_S - mu^2)`` (with
``count(F) = N``), ``E^0_S`` as ``E_S`` over the components that do not contain the item:
``phi_rel = var(T) / (var(T) + E[var(Ybar | a)] - var(M))``. For a Gaussian model both reduce to Definition 3.2
and Brennan's relative coefficient.

Every expectation is two nested Gauss-Hermite rules (:data:`NODES` nodes each), once per fixed predictor ``eta0``
and facet subset; the D-study's sizes enter only through the counts, so one set of :class:`ObservedMoments`
serves every design. A Study with fixed effects (systems) has one ``eta0`` per condition of its rows: the
coefficient is that of one condition's score with the moments averaged over the rows' conditions, weighted by their
rows (the ratio of the average true-score variance to the average mean squared error), ``ETA_POINTS`` quantiles
when the rows have more distinct predictors.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .errors import InputError

__all__ = ["ObservedMoments", "NODES", "ETA_POINTS", "observed_moments", "observed_coefficient", "moments_from",
           "score_functions"]

#: Gauss-Hermite nodes of each of the two nested rules.
NODES = 48

#: Largest number of distinct fixed predictors (conditions) the moments are averaged over.
ETA_POINTS = 40

RESIDUAL = "Residual"


@dataclass(frozen=True)
class ObservedMoments:
    """What the observed-scale coefficient of any D-study design needs (averaged over the conditions).

    Attributes
    ----------
    facets : tuple of str
        The facets (factors of the components other than the item).
    var_true : float
        ``var(T)``, the variance of the items' expected scores.
    same : float
        ``E q - E T^2``: the expected variance of one observed score about its item's expected score.
    shared : dict
        ``frozenset(S) -> E_S - E T^2`` for every proper subset ``S`` of the facets: the covariance of two scores of
        one item in cells that agree exactly on ``S``.
    common : dict
        ``frozenset(S) -> E^0_S - mu^2`` for every subset (the whole facet set included): the covariance of the
        facets' effects common to all items (for the relative coefficient).
    """

    facets: tuple[str, ...]
    var_true: float
    same: float
    shared: dict
    common: dict


def _gh(nodes: int = NODES) -> tuple[np.ndarray, np.ndarray]:
    z, w = np.polynomial.hermite_e.hermegauss(nodes)
    return z, w / w.sum()


def _inner(g: Callable[[np.ndarray], np.ndarray], x: np.ndarray, var: float, z: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``E_D g(x + D)``, ``D ~ N(0, var)``, for every entry of ``x``."""
    if var <= 0:
        return g(x)
    return g(x[:, None] + np.sqrt(var) * z[None, :]) @ w


def _square_mean(g, eta0: float, outer: float, inner: float, z, w) -> float:
    """``E_W[(E_D g(eta0 + W + D))^2]``, ``W ~ N(0, outer)``, ``D ~ N(0, inner)``."""
    x = eta0 + np.sqrt(max(outer, 0.0)) * z
    return float(w @ _inner(g, x, inner, z, w) ** 2)


def _mean(f, eta0: float, var: float, z, w) -> float:
    return float(w @ f(eta0 + np.sqrt(max(var, 0.0)) * z))


def _subsets(facets: Sequence[str]) -> list[frozenset]:
    return [frozenset(c) for r in range(len(facets) + 1) for c in itertools.combinations(facets, r)]


def moments_from(components: Mapping[str, float], item: str, etas: np.ndarray,
                 g: Callable[[np.ndarray], np.ndarray], q: Callable[[np.ndarray], np.ndarray],
                 weights: np.ndarray | None = None) -> ObservedMoments:
    """:class:`ObservedMoments` of the latent components (``{group: variance}``; a ``"Residual"`` entry is
    ignored) with the score's mean ``g`` and second moment ``q`` as functions of the linear predictor, averaged
    over the fixed predictors ``etas`` (one per condition, with ``weights``, equal by default)."""
    comps = {k: float(v) for k, v in components.items() if k != RESIDUAL}
    if item not in comps:
        raise InputError(f"the objects of measurement {item!r} are not a variance component; available: "
                         f"{', '.join(comps)}. Pass item= the factor of the test items.")
    own = {k: frozenset(k.split(":")) - {item} for k in comps if k != item}
    facets = tuple(sorted({f for fs in own.values() for f in fs}))
    s_item = comps[item]
    v_all = sum(comps[k] for k in own)
    with_item = {k for k in own if item in k.split(":")}
    z, w = _gh()
    subsets = _subsets(facets)
    var_true = same = 0.0
    shared = {S: 0.0 for S in subsets if len(S) < len(facets)}
    common = {S: 0.0 for S in subsets}
    etas = np.atleast_1d(np.asarray(etas, dtype=float))
    weights = np.full(etas.size, 1.0 / etas.size) if weights is None else np.asarray(weights, dtype=float)
    weights = weights / weights.sum()
    for eta0, wt in zip(etas, weights):
        total = s_item + v_all
        mu = _mean(g, eta0, total, z, w)
        et2 = _square_mean(g, eta0, s_item, v_all, z, w)
        var_true += wt * ((et2 - mu * mu) if s_item > 0 else 0.0)
        same += wt * (_mean(q, eta0, total, z, w) - et2)
        for S in shared:
            v_s = sum(comps[k] for k in own if own[k] <= S)
            shared[S] += wt * (_square_mean(g, eta0, s_item + v_s, v_all - v_s, z, w) - et2)
        for S in common:
            u_s = sum(comps[k] for k in own if own[k] <= S and k not in with_item)
            common[S] += wt * ((_square_mean(g, eta0, u_s, total - u_s, z, w) - mu * mu) if u_s > 0 else 0.0)
    return ObservedMoments(facets, var_true, same, shared, common)


def _count(S: frozenset, sizes: Mapping[str, float], facets: Sequence[str]) -> float:
    out = 1.0
    for f in facets:
        n = sizes.get(f, 1.0)
        out *= n if f in S else n * (n - 1.0)
    return out


def observed_coefficient(moments: ObservedMoments, n: Mapping[str, float] | None = None, *,
                         kind: str = "absolute") -> float:
    """phi (``kind="absolute"``) or the relative coefficient of the mean observed score over ``n`` levels of each
    facet (facets not named: one level).

    Examples
    --------
    Gaussian scores (identity link): Definition 3.2's phi, ``4 / (4 + 1/2 + 2/2 + 2/2)`` for two raters.

    >>> import numpy as np
    >>> m = moments_from({"s": 4.0, "r": 1.0, "r:s": 2.0}, "s", np.zeros(1), lambda x: x, lambda x: x * x + 2.0)
    >>> round(observed_coefficient(m, {"r": 2}), 6), round(4 / (4 + 0.5 + 1.0 + 1.0), 6)
    (0.615385, 0.615385)
    """
    sizes = dict(n or {})
    facets = moments.facets
    N = float(np.prod([sizes.get(f, 1.0) for f in facets])) if facets else 1.0
    error = N * moments.same + sum(_count(S, sizes, facets) * c for S, c in moments.shared.items())
    error /= N * N
    if kind == "relative":
        common = sum((N if len(S) == len(facets) else _count(S, sizes, facets)) * c for S, c in moments.common.items())
        error -= common / (N * N)
    elif kind != "absolute":
        raise InputError(f"kind must be 'absolute' or 'relative'; got {kind!r}.")
    var_true = max(moments.var_true, 0.0)  # rounding: a zero item variance gives 0 up to 1e-15
    denom = var_true + max(error, 0.0)
    if not denom > 0:
        raise InputError("the observed scores do not vary: phi is 0/0 and undefined.")
    return float(var_true / denom)


def _conditions(eta: np.ndarray, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The fixed predictors as conditions with weights: the distinct values with their number of rows (``rows``:
    the rows each entry of ``eta`` stands for, e.g. the trials of an aggregated cell), or ``ETA_POINTS`` equally
    weighted quantiles of the rows' distribution when there are more."""
    eta = np.asarray(eta, dtype=float).ravel()
    rows = np.ones(eta.size) if rows is None else np.asarray(rows, dtype=float).ravel()
    values, inverse = np.unique(np.round(eta, 10), return_inverse=True)
    counts = np.bincount(inverse.ravel(), weights=rows)
    if values.size <= ETA_POINTS:
        return values, counts
    order = np.argsort(eta)
    cum = (np.cumsum(rows[order]) - 0.5 * rows[order]) / rows.sum()
    probs = (np.arange(ETA_POINTS) + 0.5) / ETA_POINTS
    return np.interp(probs, cum, eta[order]), np.ones(ETA_POINTS)


def score_functions(fit, *, coef: np.ndarray | None = None, alpha: np.ndarray | None = None,
                    family_par: np.ndarray | None = None):
    """``(g, q, (etas, weights))``: the observed score's mean and second moment given the linear predictor, and the
    rows' fixed predictors (conditions, :func:`_conditions`) of a GLMM or ordinal fit, at its estimates or at other
    fixed effects ``coef`` (ordinal threshold parameters ``alpha``, the family's parameters ``family_par`` on the
    optimiser's scale); an InputError for a fit the observed scale is not defined for.

    A GLMM's score has the family's mean ``g = E[y | eta]`` (:meth:`~mixeval.mixed.families.Family.mean`) and
    ``q = g^2 + Var(y | eta)`` with the family's :meth:`~mixeval.mixed.families.Family.response_variance`, its
    dispersion included (a negative binomial's ``mu^2 / theta``, a beta score's ``mu (1 - mu) / (1 + phi)``). A row
    of a trials family (binomial, beta-binomial) with ``m`` trials scores the proportion ``k / m``, whose variance is
    linear in ``1 / m``: the rows' average is that at the harmonic mean of the trials. A fit to aggregated cells
    (:mod:`mixeval.scale`: ``nobs`` rows in fewer cells, each cell's trials its 0/1 rows) scores its rows (one trial
    each) and weighs each cell's condition by its rows."""
    family = fit.family
    X = getattr(getattr(fit, "design", None), "X", None)
    if X is None:
        raise InputError("the observed-scale coefficient needs the fitted rows (the conditions' fixed predictors); "
                         "this fit was made from aggregates. Use scale='latent', or fit the rows in memory.")
    if not family.support.allows("observed"):
        raise family.support.refusal(family.name, "observed")
    beta = np.asarray(fit.coef if coef is None else coef, dtype=float)
    if family.engine == "clmm":
        return _rating_functions(fit, X, beta, alpha)
    eta = np.asarray(X, dtype=float) @ beta if beta.size else np.zeros(np.shape(X)[0])
    offset = getattr(getattr(fit, "design", None), "offset", None)
    if offset is not None:
        eta = eta + np.asarray(offset, dtype=float)
    psi = np.asarray(getattr(fit, "family_par", ()) if family_par is None else family_par, dtype=float)
    weights = getattr(fit, "weights", None)
    trials = np.ones(eta.size) if weights is None else np.asarray(weights, dtype=float)
    cells = family.support.weights == "trials" and trials.size != int(fit.nobs)  # aggregated: 0/1 rows per cell
    per_row = float(1.0 / np.mean(1.0 / trials)) if family.support.weights == "trials" and not cells else 1.0

    def g(x: np.ndarray) -> np.ndarray:
        return family.mean(x, psi)

    def q(x: np.ndarray) -> np.ndarray:
        return family.mean(x, psi) ** 2 + family.response_variance(x, psi, per_row)

    return g, q, _conditions(eta, trials if cells else None)


def _rating_functions(fit, X, beta: np.ndarray, alpha: np.ndarray | None):
    """:func:`score_functions` of an ordinal fit: the expected rating ``sum_j s_j P(Y = j | eta)`` and its second
    moment, with the thresholds at ``alpha`` (the fit's by default)."""
    family = fit.family
    keep = [i for i, nm in enumerate(fit.design.fixed_names) if nm != "(Intercept)"]
    Xb = np.asarray(X, dtype=float)[:, keep]
    eta = Xb @ beta if beta.size else np.zeros(Xb.shape[0])
    if getattr(fit, "nominal", None) is not None or getattr(fit, "spread", None) is not None:
        raise InputError("the observed-scale coefficient of an ordinal model needs one set of thresholds; this fit "
                         "has nominal effects or random thresholds. Use scale='latent'.")
    from dataclasses import replace

    thresholds = (fit if alpha is None else replace(fit, alpha=np.asarray(alpha, dtype=float))).threshold_values
    scores = np.asarray(fit.scores, dtype=float)
    cdf = family.cdf

    def probs(x: np.ndarray) -> np.ndarray:
        shape = x.shape
        cum = cdf(thresholds[None, :] - x.reshape(-1, 1))
        cum = np.column_stack([np.zeros(cum.shape[0]), cum, np.ones(cum.shape[0])])
        return np.clip(np.diff(cum, axis=1), 0.0, 1.0).reshape(*shape, -1)

    return (lambda x: probs(x) @ scores), (lambda x: probs(x) @ (scores * scores)), _conditions(eta)


def observed_moments(fit, item: str, *, components: Mapping[str, float] | None = None,
                     coef: np.ndarray | None = None, alpha: np.ndarray | None = None,
                     family_par: np.ndarray | None = None) -> ObservedMoments:
    """:class:`ObservedMoments` of a GLMM or ordinal fit (at its estimates, or at bootstrap draws of the components,
    fixed effects, thresholds and the family's parameters).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import glmer
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"item": np.repeat(np.arange(100), 6), "seed": np.tile(np.arange(6), 100)})
    >>> eta = 1.4 + rng.normal(size=100)[df.item]
    >>> df["correct"] = (rng.random(600) < 1 / (1 + np.exp(-eta))).astype(int)
    >>> m = observed_moments(glmer("correct ~ 1 + (1|item) + (1|seed)", df), "item")
    >>> m.facets
    ('seed',)
    >>> 0 < observed_coefficient(m, {"seed": 6}) < 1
    True
    """
    g, q, (etas, weights) = score_functions(fit, coef=coef, alpha=alpha, family_par=family_par)
    comps = dict(fit.latent_components if components is None else components)
    return moments_from(comps, item, etas, g, q, weights)
