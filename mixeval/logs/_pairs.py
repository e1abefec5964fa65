"""The table of paired differences of every pair of models (vectorised over pairs): CR2 t tests and intervals, the
other standard errors side by side, the mixed model of the differences, McNemar, equivalence and design numbers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .._adjust import adjust_pvalues
from .._margin import margin_test
from ._items import ItemTable
from ._mcnemar import cluster_mcnemar, mcnemar
from ._mixed import random_intercept, satterthwaite_df
from ._stats import clustered_means, items_needed, minimum_detectable

__all__ = ["pair_table", "all_pairs", "mixed_model_name", "untestable_notes", "adjust_finite"]

_CHUNK = 256  # pairs per block of the vectorised computation (items x pairs floats each)


def all_pairs(n_models: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``(a, b)`` of every pair ``a < b``."""
    a, b = np.triu_indices(n_models, k=1)
    return a, b


def adjust_finite(pvalues: Any, method: str) -> np.ndarray:
    """``pvalues`` adjusted by ``method`` over the ones that are not NaN (the family R's ``p.adjust`` takes); NaN
    stays NaN (a pair without a test).

    Examples
    --------
    >>> adjust_finite([0.01, float("nan"), 0.04], "bonferroni").tolist()
    [0.02, nan, 0.08]
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    finite = np.isfinite(p)
    if finite.any():
        out[finite] = adjust_pvalues(p[finite], method)
    return out


def _numeric_ids(ids: pd.Series) -> set[float]:
    values = pd.to_numeric(ids, errors="coerce")
    return set(values[values.notna()].tolist())


def _check_shared(table: ItemTable, present: np.ndarray, ia: np.ndarray, ib: np.ndarray, n: np.ndarray,
                  where: str) -> None:
    from ..errors import InputError

    few = np.flatnonzero(n < 2)
    if not few.size:
        return
    k = few[0]
    a, b = table.models[ia[k]], table.models[ib[k]]
    hint = " Did they run the same tasks?"
    if n[k] == 0:
        ids_a = table.items["item"][present[:, ia[k]]]
        ids_b = table.items["item"][present[:, ib[k]]]
        if _numeric_ids(ids_a) & _numeric_ids(ids_b):
            hint = (f" Their item ids look alike as numbers but differ as text (e.g. {ids_a.iloc[0]!r} for {a!r}, "
                    f"{ids_b.iloc[0]!r} for {b!r}): ids are compared as text, and a CSV column with a missing value "
                    "is read as floats (1.0). Write the ids the same way for every model.")
    raise InputError(f"models {a!r} and {b!r} share {int(n[k])} items{where}; a paired comparison needs at least 2 "
                     f"({few.size} such pairs).{hint}")


def _unpaired_se(var_a: np.ndarray, var_b: np.ndarray, n: np.ndarray) -> np.ndarray:
    return np.sqrt(np.maximum(var_a + var_b, 0.0) / n)


def _column_var(values: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per column: the variance of ``values`` over the rows in ``mask`` (n - 1 denominator) and the largest
    absolute value."""
    n = mask.sum(axis=0)
    x = np.where(mask, values, 0.0)
    mean = x.sum(axis=0) / n
    dev = np.where(mask, values - mean, 0.0)
    return (dev * dev).sum(axis=0) / (n - 1), np.abs(x).max(axis=0)


def _within(table: ItemTable, present: np.ndarray, a: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pooled within-item (repeat) variance of models ``a`` on the items ``w``, and their mean of 1/repeats."""
    reps = np.where(present[:, a] & w, table.repeats[:, a], 1.0)
    dfs = np.where(w, reps - 1, 0.0).sum(axis=0)
    ss = np.where(w, table.within_ss[:, a], 0.0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.where(dfs > 0, ss / np.where(dfs > 0, dfs, 1.0), 0.0)
    return var, np.where(w, 1.0 / reps, 0.0).sum(axis=0) / w.sum(axis=0)


def mixed_model_name(cluster: str | None) -> str:
    """What gave ``se_mixed``: the mixed model of the pair's item-level differences."""
    if cluster is None:
        return ("d ~ 1 on the item-level differences d = a - b (repeats averaged within item; no cluster, so no "
                "random effect: se_mixed is se_naive, df_mixed n - 1)")
    return (f"lmer(d ~ 1 + (1 | {cluster}), REML) on the item-level differences d = a - b (repeats averaged "
            "within item); t interval with lmerTest's Satterthwaite df")


def _mixed_block(cm: Any, clustered: bool, level: float, flat: np.ndarray) -> dict[str, np.ndarray]:
    """The mixed model of the item-level differences of each pair: ``d ~ 1 + (1 | cluster)`` by REML (all pairs
    at once) with Satterthwaite df, ``d ~ 1`` (the paired t) without clusters, and where every cluster of the
    pair holds one item (the cluster variance is then not identified; lme4 refuses such a model)."""
    plain = ~clustered | (cm.sizes.max(axis=0) <= 1) | flat
    estimate, se, df = cm.estimate.copy(), cm.se_naive.copy(), cm.n - 1.0
    extra = {"sigma_mixed": cm.sd.copy()}
    if clustered:
        extra["sd_cluster_mixed"] = np.full(len(cm.n), np.nan)
        fitted = np.flatnonzero(~plain)
        if fitted.size:
            part = (cm.sums[:, fitted], cm.sizes[:, fitted], cm.ss[fitted], cm.n[fitted])
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                fit = random_intercept(*part, cm.estimate[fitted])
                df[fitted] = satterthwaite_df(fit, *part)
            estimate[fitted], se[fitted] = fit.estimate, fit.se
            extra["sd_cluster_mixed"][fitted], extra["sigma_mixed"][fitted] = fit.sd_cluster, fit.sigma
    df = np.where(flat, np.nan, df)
    se = np.where(flat, np.nan, se)
    tq = stats.t.ppf(0.5 + level / 2, df)
    return {"mixed_estimate": estimate, "se_mixed": se, "df_mixed": df, "lower_mixed": estimate - tq * se,
            "upper_mixed": estimate + tq * se, **extra}


def _mcnemar_block(table: ItemTable, present: np.ndarray, ia: np.ndarray, ib: np.ndarray, w: np.ndarray,
                   cm: Any) -> dict[str, np.ndarray]:
    ya, yb = table.means[:, ia], table.means[:, ib]
    b = (w & (ya == 1) & (yb == 0)).sum(axis=0)
    c = (w & (ya == 0) & (yb == 1)).sum(axis=0)
    single = ~np.any(w & ((table.repeats[:, ia] != 1) | (table.repeats[:, ib] != 1)), axis=0)
    if table.cluster_labels is None:
        mc = mcnemar(b, c)
    else:
        mc = cluster_mcnemar(b, c, cm.sums + cm.sizes * cm.estimate)
    return {name: np.where(single, values, np.nan) for name, values in (
        ("mcnemar_b", mc.b), ("mcnemar_c", mc.c), ("mcnemar_statistic", mc.statistic),
        ("mcnemar_pvalue_asymptotic", mc.pvalue_asymptotic), ("mcnemar_pvalue", mc.pvalue), ("mcnemar_midp", mc.midp))}


def pair_table(table: ItemTable, *, level: float = 0.95, alpha: float = 0.05, power: float = 0.8,
               effect: float = 0.02, mixed: bool = False, equivalence: float | None = None,
               noninferiority_margin: float | None = None, higher_is_better: bool = True,
               item_mask: np.ndarray | None = None, where: str = "") -> pd.DataFrame:
    """Paired differences ``model_a - model_b`` of every pair of models on their shared items.

    The columns are described in :func:`~mixeval.logs.compare_logs`; ``item_mask`` restricts the items (a class
    of ``by``), ``where`` names that restriction in error messages.
    """
    ia_all, ib_all = all_pairs(len(table.models))
    present = table.present
    if item_mask is not None:
        present = present & item_mask[:, None]
    shared = (present[:, ia_all] & present[:, ib_all]).sum(axis=0)
    _check_shared(table, present, ia_all, ib_all, shared, where)
    repeats = bool((table.repeats > 1).any())
    clustered = table.cluster_labels is not None
    q = stats.norm.ppf(0.5 + level / 2)
    blocks = []
    for start in range(0, len(ia_all), _CHUNK):
        ia, ib = ia_all[start:start + _CHUNK], ib_all[start:start + _CHUNK]
        w = present[:, ia] & present[:, ib]
        ya, yb = table.means[:, ia], table.means[:, ib]
        d = np.where(w, ya - yb, 0.0)
        cm = clustered_means(d, w, table.clusters)
        n = cm.n
        var_a, _ = _column_var(ya, w)
        var_b, _ = _column_var(yb, w)
        _, scale = _column_var(d, w)
        flat = cm.se_cr2 <= 1e-10 * scale                      # every difference the same (or identical models)
        constant = cm.sd <= 1e-10 * scale
        se = np.where(flat, np.nan, cm.se_cr2)                 # not estimable: no variation to estimate it from
        se_naive = np.where(constant, np.nan, cm.se_naive)
        se_cr1 = np.where(flat, np.nan, cm.se_cr1)
        tcrit = stats.t.ppf(0.5 + level / 2, cm.df_cr2)
        statistic = cm.estimate / se
        block: dict[str, Any] = {
            "model_a": [table.models[i] for i in ia], "model_b": [table.models[i] for i in ib],
            "n_items": cm.n, "n_clusters": cm.n_clusters,
            "mean_a": np.where(w, ya, 0).sum(axis=0) / n, "mean_b": np.where(w, yb, 0).sum(axis=0) / n,
            "estimate": cm.estimate, "se_unpaired": _unpaired_se(var_a, var_b, n),
            "se_naive": se_naive, "se_cluster": se_cr1, "se_cr2": se, "df": cm.df_cr2,
            "statistic": statistic, "pvalue": 2 * stats.t.sf(np.abs(statistic), cm.df_cr2),
            "level": level, "lower": cm.estimate - tcrit * se, "upper": cm.estimate + tcrit * se,
            "lower_cluster": cm.estimate - q * se_cr1, "upper_cluster": cm.estimate + q * se_cr1,
            "lower_naive": cm.estimate - q * se_naive, "upper_naive": cm.estimate + q * se_naive,
        }
        if mixed:
            block.update(_mixed_block(cm, clustered, level, flat))
        if table.binary:
            block.update(_mcnemar_block(table, present, ia, ib, w, cm))
        if repeats:
            var_wa, inv_a = _within(table, present, ia, w)
            var_wb, inv_b = _within(table, present, ib, w)
            block["var_within"] = var_wa + var_wb
            block["var_between"] = np.maximum(cm.sd ** 2 - (var_wa * inv_a + var_wb * inv_b), 0.0)
        if equivalence is not None:
            block["equivalence_statistic"], block["equivalence_pvalue"] = margin_test(cm.estimate, se, cm.df_cr2,
                                                                                        equivalence, "equivalence")
        if noninferiority_margin is not None:
            sign = 1.0 if higher_is_better else -1.0
            for side, direction in (("a", sign), ("b", -sign)):
                t_ni, p_ni = margin_test(direction * cm.estimate, se, cm.df_cr2, noninferiority_margin, ">")
                block[f"noninferiority_statistic_{side}"], block[f"noninferiority_pvalue_{side}"] = t_ni, p_ni
        block["mdd"] = np.where(flat, np.nan, minimum_detectable(cm.se_cr2, cm.df_cr2, alpha=alpha, power=power))
        block["n_needed"] = items_needed(effect, se, cm.n, cm.df_cr2, alpha=alpha, power=power)
        blocks.append(pd.DataFrame(block))
    return pd.concat(blocks, ignore_index=True)


def untestable_notes(pairs: pd.DataFrame, where: str = "") -> list[str]:
    """Notes naming the pairs without a test (no variation of the difference to estimate its SE from)."""
    notes = []
    for row in pairs[pairs["se_cr2"].isna()].itertuples():
        if row.estimate == 0 and np.isnan(row.se_naive):
            notes.append(f"{row.model_a} and {row.model_b} have identical scores on every shared item{where}: "
                         "estimate 0; no standard error, test or interval (left empty).")
        else:
            notes.append(f"{row.model_a} - {row.model_b}{where}: the difference is {row.estimate:.4g} on every shared "
                         "item (or its cluster sums cancel): no standard error can be estimated, so no test or "
                         "interval (left empty).")
    return notes
