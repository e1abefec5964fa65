"""The leaderboard: model means on the items every model has, their intervals (inside [0, 1] for proportions) and
simultaneous rank sets from the CR2 covariance of the means with the Bell-McCaffrey df."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from .._margin import margin_test
from ._items import ItemTable
from ._pairs import adjust_finite
from ._ranks import CriticalValue, bonferroni_critical, max_t_critical, rank_sets
from ._stats import clustered_means

__all__ = ["Leaderboard", "leaderboard", "wilson_interval", "cr2_covariance"]

WILSON = ("Wilson score interval with the effective number of items p(1 - p) / se_cr2^2 (the clustering's design "
          "effect) and the t quantile with the CR2 df: inside [0, 1]")
T_INTERVAL = "estimate +- t quantile (CR2 df) x se_cr2"


@dataclass(frozen=True)
class Leaderboard:
    """``table`` (one row per model, best first), ``critical`` the simultaneous critical value, ``n_items`` the
    items every model has, ``interval`` how the per-model intervals were made."""

    table: pd.DataFrame
    critical: CriticalValue | None
    n_items: int
    interval: str


def wilson_interval(p: np.ndarray, se: np.ndarray, n: np.ndarray, df: np.ndarray,
                    level: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score intervals for proportions with a design effect: inside [0, 1] also at 0 or 1.

    Notes
    -----
    With :math:`c` the t quantile of ``level`` (``df`` degrees of freedom) and the effective number of items
    :math:`\\tilde n = \\hat p (1 - \\hat p) / \\mathrm{SE}^2` (Kish's; ``n`` where :math:`\\hat p` is 0 or 1 or
    the SE is 0): :math:`\\frac{\\hat p + c^2/(2\\tilde n) \\pm c \\sqrt{\\hat p(1-\\hat p)/\\tilde n +
    c^2/(4\\tilde n^2)}}{1 + c^2/\\tilde n}`. Without clusters the effective n is :math:`n - 1` for 0/1 scores.

    Examples
    --------
    >>> lo, hi = wilson_interval(np.array([0.95, 1.0]), np.array([0.03, 0.0]), np.array([60, 60]),
    ...                          np.array([59.0, 59.0]), 0.95)
    >>> [round(float(x), 4) for x in (*lo, *hi)]
    [0.8523, 0.9374, 0.9843, 1.0]
    """
    p = np.asarray(p, dtype=float)
    se = np.asarray(se, dtype=float)
    var = p * (1 - p)
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = np.where((var > 0) & (se > 0), var / np.where(se > 0, se * se, 1.0), np.asarray(n, dtype=float))
    c = stats.t.ppf(0.5 + level / 2, df)
    centre = (p + c * c / (2 * n_eff)) / (1 + c * c / n_eff)
    half = c * np.sqrt(var / n_eff + c * c / (4 * n_eff * n_eff)) / (1 + c * c / n_eff)
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def cr2_covariance(y: np.ndarray, clusters) -> tuple[np.ndarray, np.ndarray]:
    """The CR2 covariance of the column means of ``y`` (items x models, every item used) and their mean.

    With one intercept per model the CR2 adjustment is the same for every model: cluster sums
    :math:`S_g` of the centred scores, :math:`V = \\sum_g S_g S_g^\\top / (1 - n_g/n) / n^2`; the variance of a
    difference is the CR2 variance of the paired difference on these items.
    """
    n = y.shape[0]
    mean = y.mean(axis=0)
    ct = clusters.T.tocsr()
    sums = np.asarray(ct @ (y - mean))
    sizes = np.asarray(ct.sum(axis=1)).ravel()
    keep = 1.0 - sizes / n
    used = sizes > 0
    return (sums[used] / keep[used, None]).T @ sums[used] / (n * n), mean


def leaderboard(table: ItemTable, *, level: float = 0.95, higher_is_better: bool = True,
                rank_method: str = "bonferroni", seed: int = 0, equivalence: float | None = None,
                adjust: str = "holm") -> Leaderboard:
    """Model means on the items every model has, with intervals and simultaneous rank sets.

    Notes
    -----
    The CR2 covariance :math:`V` of the model means (:func:`cr2_covariance`) gives each difference the standard
    error :math:`s_{ab}` of the pairwise CR2 test on these items and the common Bell-McCaffrey df :math:`\\nu`
    (it depends on the cluster sizes only). A pair is separated when :math:`|\\hat\\mu_a - \\hat\\mu_b| > q
    s_{ab}`: with ``"bonferroni"`` :math:`q = t_{\\nu, 1 - (1 - \\mathrm{level})/(2K)}` over the :math:`K`
    pairs, with ``"max-t"`` the ``level`` quantile of the largest :math:`|t|` of a multivariate t with
    :math:`\\nu` df and the correlation of :math:`V` (:func:`~mixeval.logs._ranks.max_t_critical`). A model's rank
    set runs from 1 + the models significantly better to the number of models minus those significantly worse
    (Klein, Wright & Wieczorek 2020). With ``equivalence`` each model is tested for equivalence with the best
    (TOST within ``+-equivalence``, p-values adjusted across the models by ``adjust``).
    """
    complete = table.present.all(axis=1)
    n = int(complete.sum())
    m = len(table.models)
    if n < 2:
        return Leaderboard(pd.DataFrame(), None, n, "")
    y = table.means[complete]
    clusters = table.clusters[np.flatnonzero(complete)]
    cm = clustered_means(y, np.ones_like(y, dtype=bool), clusters)
    cov, mean = cr2_covariance(y, clusters)
    df = float(cm.df_cr2[0])
    diag = np.diag(cov)
    with np.errstate(invalid="ignore"):
        se_pairs = np.sqrt(np.maximum(diag[:, None] + diag[None, :] - 2 * cov, 0.0))
    scale = np.abs(y).max() if y.size else 0.0
    se_pairs = np.where(se_pairs > 1e-10 * max(scale, np.finfo(float).tiny), se_pairs, np.nan)
    n_pairs = int(np.isfinite(se_pairs[np.triu_indices(m, 1)]).sum())
    if rank_method == "max-t":
        critical = max_t_critical(cov, level, df, seed=seed)
    else:
        critical = bonferroni_critical(level, n_pairs, df)
    rank, rank_lower, rank_upper = rank_sets(cm.estimate, se_pairs, critical.value, higher_is_better=higher_is_better)
    proportion = bool(((table.means[complete] >= 0) & (table.means[complete] <= 1)).all())
    if proportion:
        lower, upper = wilson_interval(cm.estimate, cm.se_cr2, cm.n, cm.df_cr2, level)
        interval = WILSON
    else:
        tcrit = stats.t.ppf(0.5 + level / 2, cm.df_cr2)
        lower, upper = cm.estimate - tcrit * cm.se_cr2, cm.estimate + tcrit * cm.se_cr2
        interval = T_INTERVAL
    board = pd.DataFrame({
        "model": list(table.models), "n_items": cm.n, "n_clusters": cm.n_clusters, "estimate": cm.estimate,
        "se_naive": cm.se_naive, "se_cluster": cm.se_cr1, "se_cr2": cm.se_cr2, "df": cm.df_cr2, "level": level,
        "lower": lower, "upper": upper, "rank": rank, "rank_lower": rank_lower, "rank_upper": rank_upper,
    })
    if equivalence is not None:
        best = int(np.argmin(rank))
        others = np.array([k for k in range(m) if k != best])
        _, p = margin_test(cm.estimate[others] - cm.estimate[best], np.nan_to_num(se_pairs[others, best]),
                           np.full(len(others), df), equivalence, "equivalence")
        pvalue = np.full(m, np.nan)
        adjusted = np.full(m, np.nan)
        pvalue[others] = p
        adjusted[others] = adjust_finite(p, adjust)
        board["equivalence_pvalue"] = pvalue
        board["equivalence_pvalue_adjusted"] = adjusted
        board["equivalent_to_best"] = np.where(np.arange(m) == best, True, adjusted < 1 - level)
    board = board.sort_values("rank", kind="stable").reset_index(drop=True)
    return Leaderboard(board, critical, n, interval)
