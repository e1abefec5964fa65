"""The HTML/text report of a :class:`~mixeval.logs.LogComparison`, built from mixeval.report's blocks."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..report import Figure, Note, Paragraph, Report, Section, Table
from ._plots import plot_leaderboard, plot_pair_intervals

__all__ = ["comparison_report"]

_PAIR_COLUMNS = ["model_a", "model_b", "n_items", "n_clusters", "estimate", "se_unpaired", "se_naive", "se_cluster",
                 "se_cr2", "df", "lower", "upper", "pvalue", "pvalue_adjusted"]
_METHOD_COLUMNS = ["model_a", "model_b", "estimate", "lower_naive", "upper_naive", "lower_cluster", "upper_cluster",
                   "lower", "upper", "mixed_estimate", "lower_mixed", "upper_mixed", "sd_cluster_mixed", "glmer_log_odds_ratio",
                   "glmer_se", "glmer_pvalue", "mcnemar_b", "mcnemar_c", "mcnemar_pvalue", "mcnemar_midp",
                   "mcnemar_pvalue_asymptotic"]
_DESIGN_COLUMNS = ["model_a", "model_b", "estimate", "se_cr2", "var_between", "var_within", "mdd", "n_needed",
                   "n_needed_effect"]


def _cols(frame: pd.DataFrame, wanted: list[str]) -> pd.DataFrame:
    return frame[[c for c in wanted if c in frame.columns]]


def _significant(pairs: pd.DataFrame, level: float) -> str:
    alpha = 1 - level
    sig = pairs[pairs["pvalue_adjusted"] < alpha]
    if sig.empty:
        return f"No pair differs at adjusted p < {alpha:g}."
    shown = ", ".join(f"{r.model_a} - {r.model_b} = {r.estimate:.4g}" for r in sig.head(6).itertuples())
    return f"{len(sig)} of {len(pairs)} pairs differ at adjusted p < {alpha:g}: {shown}" + (" ..." if len(sig) > 6 else "")


def comparison_report(result: Any, *, title: str | None = None) -> Report:
    """Sections: pairs (the SEs side by side), methods (intervals three ways, McNemar), leaderboard with
    rank sets, design (MDD, items needed), conditional pairs and the heterogeneity test, notes."""
    pairs, level = result.pairs, result.level
    where = f" clustered by {result.cluster!r}" if result.cluster else " (each item its own cluster)"
    sections = [Section("Paired differences", (
        Paragraph(f"Each row compares model_a - model_b on the items both have, metric {result.metric!r}{where}; "
                  "repeats are averaged within item first. se_unpaired treats the models as run on different "
                  "items (an unpaired comparison); se_naive pairs the items; se_cluster (CR1) and se_cr2 (CR2, "
                  "Bell-McCaffrey df) allow for clustered items; the interval and p-value use CR2, adjusted across "
                  f"pairs by {result.adjust}."),
        Table(_cols(pairs, _PAIR_COLUMNS), "Table 1: paired differences, standard errors side by side")),
        summary=(_significant(pairs, level),))]
    mixed = (Paragraph(f"Mixed model: {result.mixed_model}."),) if result.mixed_model else ()
    sections.append(Section("Three ways to the interval", (
        *mixed,
        Figure.from_matplotlib(plot_pair_intervals(result), "Figure 1: each pair's interval: naive, CR2, mixed model"),
        Table(_cols(pairs, _METHOD_COLUMNS), f"Table 2: {100 * level:g}% intervals: naive, cluster-robust (CR1 "
              "normal, CR2 t), mixed model (Wald); glmer log odds ratios and McNemar's test for 0/1 scores"),)))
    if len(result.leaderboard):
        sections.append(Section("Leaderboard", (
            Paragraph(f"Means on the {result.n_common_items} items all models share. The rank set of a model "
                      "holds every rank it can take given simultaneous intervals of all pairwise differences "
                      f"(max-|t| critical value {result.critical_value:.4g})."),
            Table(result.leaderboard, "Table 3: leaderboard with CR2 intervals and simultaneous rank sets"),
            Figure.from_matplotlib(plot_leaderboard(result), "Figure 2: model means and rank sets")),
            summary=tuple(f"{r.rank}. {r.model}: {r.estimate:.4g} [{r.lower:.4g}, {r.upper:.4g}], ranks "
                          f"{r.rank_lower}-{r.rank_upper}" for r in result.leaderboard.head(10).itertuples())))
    sections.append(Section("Design: detectable differences and items needed", (
        Table(_cols(pairs, _DESIGN_COLUMNS), "Table 4: minimum detectable difference and items needed for "
              "the power asked (from the variance of the paired differences, clustering included)"),)))
    if result.by_pairs is not None:
        sections.append(Section(f"Conditional on {result.by}", (
            Table(_cols(result.by_pairs, [result.by] + _PAIR_COLUMNS), f"Table 5: pairs within each {result.by}"),
            Table(result.heterogeneity, f"Table 6: does the difference vary with {result.by}? (cluster-robust F)"))))
    if result.notes:
        sections.append(Section("Notes", tuple(Note(n, "warning") for n in result.notes[:20])))
    meta = {"models": str(len(result.models)), "metric": result.metric, "level": f"{level:g}"}
    return Report(title or f"Comparison of {len(result.models)} models on {result.metric}", tuple(sections), meta)
