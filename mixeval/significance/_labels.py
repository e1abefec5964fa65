"""What every table of means and contrasts says about how it was made: the fit criterion and the df method.

* :func:`fit_criterion` -- ``"REML"``, ``"ML"`` (lmer); ``"Laplace"``, ``"AGQ (nAGQ = k)"``, ``"nAGQ = 0"``
  (glmer's maximum-likelihood fits) or ``"restricted Laplace"`` (``glmer(..., REML=True)``, glmmTMB's
  ``REML = TRUE``);
* :func:`df_label` -- the df method in words (``satterthwaite-upper`` marked experimental);
* :func:`label_table` -- both in a DataFrame's ``attrs`` (``fit_criterion``, ``df_method``, ``note``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from ..mixed import MixedResult

__all__ = ["DF_LABELS", "df_label", "fit_criterion", "label_table", "footer", "note_df_rule", "chosen_df"]

#: The df methods in words, as the printed notes name them.
DF_LABELS: dict[str, str] = {
    "asymptotic": "asymptotic (z)",
    "satterthwaite": "Satterthwaite",
    "kenward-roger": "Kenward-Roger",
    "satterthwaite-upper": "Satterthwaite at the components' upper bounds (experimental)",
}


def df_label(method: str) -> str:
    """The df method in words.

    Examples
    --------
    >>> df_label("asymptotic")
    'asymptotic (z)'
    """
    return DF_LABELS.get(method, method)


def fit_criterion(fit: MixedResult) -> str:
    """The criterion the fit maximised, by the name R's summaries use.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import glmer, lmer
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"item": np.repeat(np.arange(30), 2), "system": np.tile(["A", "B"], 30)})
    >>> df["score"] = rng.normal(size=60)
    >>> df["correct"] = (df.score > 0).astype(int)
    >>> fit_criterion(lmer("score ~ system + (1|item)", df)), fit_criterion(glmer("correct ~ system + (1|item)", df))
    ('REML', 'Laplace')
    """
    from ._glmm_ddf import is_glmm

    reml = bool(getattr(fit, "reml", False))
    if not is_glmm(fit):
        return "REML" if reml else "ML"
    if reml:
        return "restricted Laplace"
    n_agq = int(getattr(fit, "nAGQ", 1))
    return {0: "nAGQ = 0", 1: "Laplace"}.get(n_agq, f"AGQ (nAGQ = {n_agq})")


def footer(criterion: str, method: str) -> str:
    """The one-line note naming the fit criterion and the df method.

    Examples
    --------
    >>> footer("REML", "kenward-roger")
    'Fit: REML; degrees of freedom: Kenward-Roger'
    """
    return f"Fit: {criterion}; degrees of freedom: {df_label(method)}"


def label_table(table: pd.DataFrame, fit: MixedResult, method: str, **extra: str) -> pd.DataFrame:
    """``table`` with ``attrs`` naming the fit criterion and the df method (and ``extra`` entries); in place."""
    criterion = fit_criterion(fit)
    table.attrs.update(fit_criterion=criterion, df_method=method, **extra)
    notes = [footer(criterion, method), *(f"{k.replace('_', ' ').capitalize()}: {v}" for k, v in extra.items())]
    table.attrs["note"] = "\n".join(notes)
    return table


def note_df_rule(result, rule: str | None):
    """``result`` (a table of means or a :class:`~._pairwise.PairwiseResult`) with the reason its df method was
    chosen (``rule``, e.g. "default: Kenward-Roger, emmeans' for lmer fits of up to 3,000 observations") in
    ``attrs["df_rule"]`` and the note, or in the result's ``df_rule`` (printed with its notes); unchanged for
    ``rule=None`` (a df the user chose).

    Examples
    --------
    >>> table = pd.DataFrame({"emmean": [0.1]})
    >>> table.attrs.update(df_method="asymptotic", note="Fit: Laplace; degrees of freedom: asymptotic (z)")
    >>> print(note_df_rule(table, "default: z, emmeans' for glmer fits").attrs["note"])
    Fit: Laplace; degrees of freedom: asymptotic (z)
    Degrees of freedom: asymptotic (z), default: z, emmeans' for glmer fits
    """
    if not rule:
        return result
    if isinstance(result, pd.DataFrame):
        result.attrs["df_rule"] = rule
        note = result.attrs.get("note", "")
        method = df_label(result.attrs.get("df_method", ""))
        result.attrs["note"] = (note + "\n" if note else "") + f"Degrees of freedom: {method}, {rule}"
        return result
    from dataclasses import replace

    return replace(result, df_rule=rule)


def chosen_df(fit: MixedResult, df: str | None) -> tuple[str, str | None]:
    """The df method of a table of ``fit``: ``df`` (canonical) when given, else emmeans' default rule
    (:func:`mixeval.significance._ddf.default_df`: Kenward-Roger for lmer fits of up to 3,000 rows, then
    Satterthwaite, then z; z for glmer and clmm fits) with the reason, for :func:`note_df_rule`."""
    from ._ddf import canonical_df, default_df

    if df is None:
        return default_df(fit)
    return canonical_df(df), None
