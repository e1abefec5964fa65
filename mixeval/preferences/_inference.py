"""Questions asked of fitted abilities: pairwise contrasts with multiplicity control, simultaneous rank
sets (max-t over all pairs), variance shares and the number of votes that separates two systems.

Pure functions of the estimates and their covariance (and the fitted variance components); the result
class (:mod:`._result`) calls them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as sps

from .._adjust import ADJUST_METHODS, adjust_pvalues
from .._margin import canonical_side, margin_test
from .._random import as_generator
from .._validation import require_level
from ..errors import InputError

__all__ = ["pair_indices", "max_t_critical", "max_t_pvalues", "contrast_table", "rank_sets", "ELO_SCALE",
           "to_elo", "attenuation", "votes_needed", "LOGISTIC_VARIANCE", "NULL_TOL", "ability_se"]

#: arena leaderboards: 400 / ln(10) Elo points per unit of log-odds, centred at 1000
ELO_SCALE = 400.0 / np.log(10.0)
LOGISTIC_VARIANCE = float(np.pi**2 / 3)
#: Zeger, Liang & Albert (1988): marginal logit ~ conditional logit / sqrt(1 + c^2 sigma^2)
_ZEGER_C2 = (16 * np.sqrt(3) / (15 * np.pi)) ** 2


def to_elo(s: np.ndarray | float) -> np.ndarray | float:
    """Log-odds abilities on the Elo scale of arena leaderboards: ``400 / ln(10) * s + 1000``.

    Examples
    --------
    >>> round(float(to_elo(np.log(10) / 4)), 6)
    1100.0
    """
    return ELO_SCALE * np.asarray(s) + 1000.0


def pair_indices(k: int) -> tuple[np.ndarray, np.ndarray]:
    """All pairs ``i < j`` of ``k`` systems."""
    i, j = np.triu_indices(k, 1)
    return i, j


#: a linear function ``c'beta`` counts as inestimable when ``|N'c| > NULL_TOL |c|`` (``N``: the separation basis)
NULL_TOL = 1e-8


def _pair_se(cov: np.ndarray, i: np.ndarray, j: np.ndarray, null: np.ndarray | None = None) -> np.ndarray:
    """Standard errors of ``s_i - s_j``; infinite for differences the votes do not identify (``null``: the
    ``K x r`` separation directions of the abilities, :attr:`ModelFit.null_basis` mapped by ``C``)."""
    d = np.diag(cov)
    se = np.sqrt(np.maximum(d[i] + d[j] - 2 * cov[i, j], 0.0))
    if null is not None and null.shape[1]:
        se = np.where(np.linalg.norm(null[i] - null[j], axis=1) > NULL_TOL, np.inf, se)
    return se


def ability_se(cov: np.ndarray, null: np.ndarray | None = None) -> np.ndarray:
    """Standard errors of the abilities (under the fit's constraint); infinite where not identified."""
    se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    if null is not None and null.shape[1]:
        se = np.where(np.linalg.norm(null, axis=1) > NULL_TOL, np.inf, se)
    return se


def _max_abs_t_draws(cov: np.ndarray, n_draws: int, random_state, chunk: int = 2000,
                     null: np.ndarray | None = None, pairs: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Draws of ``max_{i<j} |z_i - z_j| / se_ij`` for ``z ~ N(0, cov)`` (the null distribution of max-t) over the
    pairs whose difference is identified."""
    rng = as_generator(random_state)
    k = cov.shape[0]
    vals, vecs = np.linalg.eigh(0.5 * (cov + cov.T))
    root = vecs * np.sqrt(np.maximum(vals, 0.0))
    i, j = pair_indices(k) if pairs is None else pairs
    se = _pair_se(cov, i, j, null)
    ok = (se > 0) & np.isfinite(se)
    i, j, se = i[ok], j[ok], se[ok]
    out = np.empty(n_draws)
    for start in range(0, n_draws, chunk):
        m = min(chunk, n_draws - start)
        z = rng.standard_normal((m, k)) @ root.T
        out[start:start + m] = np.max(np.abs(z[:, i] - z[:, j]) / se, axis=1, initial=0.0)
    return out


def max_t_critical(cov: np.ndarray, level: float, *, n_draws: int = 20000, random_state=0,
                   null: np.ndarray | None = None, pairs: tuple[np.ndarray, np.ndarray] | None = None) -> float:
    """The ``level`` quantile of ``max |t|`` over all pairwise differences (simultaneous intervals).

    Examples
    --------
    Two systems: the max over one pair is the normal quantile.

    >>> round(max_t_critical(np.eye(2), 0.95, n_draws=200000), 1)
    2.0
    """
    return float(np.quantile(_max_abs_t_draws(cov, n_draws, random_state, null=null, pairs=pairs), level))


def max_t_pvalues(cov: np.ndarray, t: np.ndarray, *, n_draws: int = 20000, random_state=0,
                  null: np.ndarray | None = None, pairs: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Single-step max-t adjusted p-values ``P(max |T| >= |t|)`` (Hothorn, Bretz & Westfall 2008) over ``pairs``
    (default all)."""
    draws = np.sort(_max_abs_t_draws(cov, n_draws, random_state, null=null, pairs=pairs))
    return 1.0 - np.searchsorted(draws, np.abs(t), side="left") / draws.size


def _null_hypothesis(delta: float | None, side: str, unit: str) -> str:
    if delta is None:
        return "difference = 0"
    return {"equivalence": f"|difference| >= {delta:g} {unit}", ">": f"difference <= -{delta:g} {unit}",
            "<": f"difference >= {delta:g} {unit}"}[side]


def contrast_table(systems: tuple[str, ...], est: np.ndarray, cov: np.ndarray, *, adjust: str = "holm",
                   level: float = 0.95, random_state=0, null: np.ndarray | None = None,
                   pairs: tuple[np.ndarray, np.ndarray] | None = None, delta: float | None = None,
                   side: str = "equivalence", unit: float = 1.0, unit_name: str = "log-odds") -> pd.DataFrame:
    """Pairwise differences ``s_i - s_j``: estimate, se, z, p-values (raw and adjusted) and intervals.

    ``adjust``: one of R's ``p.adjust`` methods (:func:`mixeval._adjust.adjust_pvalues`; unadjusted intervals),
    ``"tukey"`` (Tukey-Kramer: studentised range with infinite df) or ``"max-t"`` (single-step multivariate
    normal; exact for any covariance); the last two give simultaneous intervals and are for two-sided tests.
    ``pairs``: the ``(i, j)`` index arrays (default all ``i < j``). ``delta`` (in units of ``unit``, e.g. Elo
    points with ``unit = 400 / ln 10``) turns the test into emmeans' ``test(..., delta, side)``
    (:func:`mixeval._margin.margin_test`). Differences the votes do not identify (``null``, separation) get an infinite se and
    NaN z and p-values; the others are adjusted among themselves (as R's ``p.adjust`` treats missing values).
    Estimates, se and intervals are multiplied by ``unit``.
    """
    k = len(systems)
    i, j = pair_indices(k) if pairs is None else pairs
    d = est[i] - est[j]
    se = _pair_se(cov, i, j, null)
    finite = np.isfinite(se)
    method = adjust.strip().lower() if isinstance(adjust, str) else adjust
    if delta is None:
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(finite, d / se, np.nan)
        p = np.where(finite, 2 * sps.norm.sf(np.abs(z)), np.nan)
    else:
        side = canonical_side(side)
        if not (isinstance(delta, (int, float, np.floating)) and np.isfinite(delta) and delta > 0):
            raise InputError(f"delta={delta!r} must be a positive number (the margin, in {unit_name}).")
        if method in ("tukey", "max-t"):
            raise InputError(f"adjust={adjust!r} is for two-sided tests; with delta= use one of R's p.adjust methods "
                             f"({', '.join(ADJUST_METHODS)}), e.g. 'holm' (emmeans changes 'tukey' to 'sidak' there).")
        z, p = margin_test(d, se, np.inf, float(delta) / unit, side)
        z, p = np.where(finite, z, np.nan), np.where(finite, p, np.nan)
    p_adj = np.full(d.size, np.nan)
    if method == "tukey":
        from ..significance import tukey_critical_value, tukey_pvalue

        if pairs is not None:
            raise InputError("adjust='tukey' is for all pairwise comparisons; against one system use 'max-t' "
                             "(Dunnett's single-step method) or a p.adjust method.")
        p_adj[finite] = tukey_pvalue(z[finite], k)
        crit = tukey_critical_value(level, k)
    elif method == "max-t":
        p_adj[finite] = max_t_pvalues(cov, z[finite], random_state=random_state, null=null, pairs=(i, j))
        crit = max_t_critical(cov, level, random_state=random_state, null=null, pairs=(i, j))
    else:
        if not isinstance(method, str) or method not in {a for al in ADJUST_METHODS.values() for a in al}:
            raise InputError(f"adjust={adjust!r}: choose 'tukey', 'max-t' or one of {', '.join(ADJUST_METHODS)}.")
        if finite.any():
            p_adj[finite] = adjust_pvalues(p[finite], method)
        crit = sps.norm.ppf(0.5 + level / 2)
    out = pd.DataFrame({
        "system": [systems[a] for a in i], "versus": [systems[b] for b in j], "estimate": unit * d, "se": unit * se,
        "z": z, "pvalue": p, "pvalue_adjusted": p_adj, "lower": unit * (d - crit * se),
        "upper": unit * (d + crit * se), "level": level,
    })
    out.attrs.update({"null": _null_hypothesis(delta, side, unit_name), "adjust": adjust, "scale": unit_name})
    return out


def rank_sets(est: np.ndarray, cov: np.ndarray, level: float, *, random_state=0,
              null: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Ranks (1 = best) and a simultaneous ``level`` confidence set of ranks for every system.

    Notes
    -----
    With ``c`` the ``level`` quantile of ``max_{i<j} |(hat d_ij - d_ij) / se_ij|`` (:func:`max_t_critical`),
    the intervals ``hat d_ij +- c se_ij`` hold for all pairs at once with probability ``level``; on that event
    system ``i`` is beaten by at least ``B_i = #{j: lower(s_j - s_i) > 0}`` and beats at least
    ``W_i = #{j: lower(s_i - s_j) > 0}`` systems, so its rank lies in ``[1 + B_i, K - W_i]`` (simultaneously
    for all systems). A difference the votes do not identify (separation: infinite se) separates no pair.
    """
    k = est.size
    crit = max_t_critical(cov, level, random_state=random_state, null=null)
    d = est[:, None] - est[None, :]
    i, j = np.meshgrid(np.arange(k), np.arange(k), indexing="ij")
    se = _pair_se(cov, i.ravel(), j.ravel(), null).reshape(k, k)
    with np.errstate(invalid="ignore"):
        above = (d - crit * se) > 0  # above[i, j]: i significantly better than j
    np.fill_diagonal(above, False)
    lower = 1 + above.sum(axis=0)
    upper = k - above.sum(axis=1)
    rank = 1 + np.argsort(np.argsort(-est, kind="stable"), kind="stable")
    return rank, lower, upper, crit


def attenuation(latent_variance: float) -> float:
    """Factor by which random vote-level deviations of this variance shrink a log-odds difference when it is
    averaged over them (Zeger, Liang & Albert 1988: ``1 / sqrt(1 + c^2 sigma^2)``, ``c = 16 sqrt(3) / (15 pi)``)."""
    return float(1.0 / np.sqrt(1.0 + _ZEGER_C2 * latent_variance))


def votes_needed(delta: float, *, power: float = 0.8, alpha: float = 0.05, vote_variance: float = 0.0,
                 fixed_variance: float = 0.0) -> float:
    """Head-to-head votes needed to tell two systems ``delta`` apart (log-odds) by a two-sided Wald test.

    Notes
    -----
    One vote between the two carries Fisher information ``p (1 - p)`` about the (marginal) log-odds,
    ``p = F(delta_m)``, ``delta_m = delta * attenuation(vote_variance)`` where ``vote_variance`` is the
    latent variance of the per-vote random deviations (system-by-prompt ``2 sigma^2``, prompt and judge
    intercepts). The estimate must reach ``Var = (delta_m / (z_{1-alpha/2} + z_power))^2``; a part
    ``fixed_variance`` that more votes do not remove (``2 sigma^2_{system:judge} / n_judges``, on the
    attenuated scale) is subtracted first: ``n = 1 / (p (1 - p) (Var - fixed_variance))``, infinite when
    ``fixed_variance >= Var``. A large-sample approximation (checked by simulation in the tests).

    Examples
    --------
    >>> round(votes_needed(0.2))  # 0.2 log-odds ~ 35 Elo points
    793
    """
    power, alpha = require_level(power, "power"), require_level(alpha, "alpha")
    if delta == 0:
        return float("inf")
    dm = abs(delta) * attenuation(vote_variance)
    target = (dm / (sps.norm.ppf(1 - alpha / 2) + sps.norm.ppf(power))) ** 2
    left = target - fixed_variance * attenuation(vote_variance) ** 2
    if left <= 0:
        return float("inf")
    p = 1 / (1 + np.exp(-dm))
    return float(1.0 / (p * (1 - p) * left))
