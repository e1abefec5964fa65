"""Comparisons conditional on an item property (``by``): the pairs within each class, adjusted across classes and
pairs, and per pair the CR2 HTZ Wald test that the difference is the same in every class."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ._items import ItemTable
from ._pairs import adjust_finite, all_pairs, pair_table, untestable_notes
from ._wald import cr2_wald_htz

__all__ = ["by_pairs", "heterogeneity"]


def by_pairs(table: ItemTable, by: str, adjust: str, notes: list[str], **kwargs: Any) -> pd.DataFrame:
    """The pairs within each class of ``by`` (the first column, named ``by``, or ``<by>_class`` where that name is
    taken by a column of the pairs); ``pvalue_adjusted`` over every class and pair (one family)."""
    frames = []
    for code, label in enumerate(table.by_labels):
        mask = table.by_codes == code
        where = f" in the class {by} = {label!r}"
        part = pair_table(table, item_mask=mask, where=where + " (bin a numeric property into a few classes "
                                                               "first, e.g. with mixeval.bin_property)", **kwargs)
        notes.extend(untestable_notes(part, where))
        part.insert(0, by if by not in part.columns else f"{by}_class", label)
        frames.append(part)
    out = pd.concat(frames, ignore_index=True)
    out.insert(out.columns.get_loc("pvalue") + 1, "pvalue_adjusted", adjust_finite(out["pvalue"], adjust))
    return out


def heterogeneity(table: ItemTable, adjust: str, notes: list[str]) -> pd.DataFrame:
    """Per pair: does the paired difference differ between the classes? The regression of the item-level
    differences on the classes (one mean per class) and the Wald test that the class means are equal, with
    the CR2 covariance (clusters of ``table``) and the HTZ reference distribution
    (:func:`~mixeval.logs._wald.cr2_wald_htz`, clubSandwich's ``Wald_test(test = "HTZ")``)."""
    ia, ib = all_pairs(len(table.models))
    present = table.present
    cluster = table.clusters.indices                      # one cluster per item
    rows = []
    for a, b in zip(ia, ib):
        w = present[:, a] & present[:, b]
        d = table.means[w, a] - table.means[w, b]
        codes = table.by_codes[w]
        used = np.unique(codes)
        row = {"model_a": table.models[a], "model_b": table.models[b], "n_classes": len(used),
               "statistic": np.nan, "df_num": np.nan, "df_den": np.nan, "pvalue": np.nan}
        rows.append(row)
        if len(used) < 2:
            continue
        x = (codes[:, None] == used[None, :]).astype(float)
        contrast = np.hstack([np.ones((len(used) - 1, 1)), -np.eye(len(used) - 1)])
        try:
            with np.errstate(divide="ignore", invalid="ignore"):
                test = cr2_wald_htz(x, d, cluster[w], contrast)
        except np.linalg.LinAlgError:
            test = None
        if test is None or not np.isfinite(test.statistic) or not test.df_den > 0:
            notes.append(f"heterogeneity {table.models[a]} - {table.models[b]}: no test (the difference is constant "
                         "within the classes, or a class lies within one cluster).")
            continue
        row.update(statistic=test.statistic, df_num=float(test.df_num), df_den=test.df_den, pvalue=test.pvalue)
    out = pd.DataFrame(rows)
    out["pvalue_adjusted"] = adjust_finite(out["pvalue"], adjust)
    return out
