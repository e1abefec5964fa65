"""The HTML/text report of a :class:`~mixeval.logs.LogComparison`, built from mixeval.report's blocks: the same
blocks as the text summary, each wide table split into tables of a few columns (the key columns repeated)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from ..report import Figure, Note, Paragraph, Report, Section, Table
from ._blocks import result_blocks
from ._plots import plot_leaderboard, plot_pair_intervals

if TYPE_CHECKING:
    from ._result import LogComparison

__all__ = ["comparison_report"]

_COLUMNS_PER_TABLE = 8      # besides the key columns: tables that fit the page


def _significant(pairs: pd.DataFrame, level: float) -> str:
    alpha = 1 - level
    tested = pairs[pairs["pvalue_adjusted"].notna()]
    sig = tested[tested["pvalue_adjusted"] < alpha]
    if sig.empty:
        return f"No pair differs at adjusted p < {alpha:g} ({len(tested)} pairs tested)."
    shown = ", ".join(f"{r.model_a} - {r.model_b} = {r.estimate:.4g}" for r in sig.head(6).itertuples())
    return (f"{len(sig)} of {len(tested)} pairs differ at adjusted p < {alpha:g}: {shown}"
            + (" ..." if len(sig) > 6 else ""))


def _tables(frame: pd.DataFrame, keys: list[str], columns: list[str], caption: str) -> list[Table]:
    keys = [k for k in keys if k in frame.columns]
    wanted = [c for c in columns if c in frame.columns and c not in keys]
    groups = [wanted[i:i + _COLUMNS_PER_TABLE] for i in range(0, len(wanted), _COLUMNS_PER_TABLE)] or [[]]
    return [Table(frame[keys + g], caption + (f" ({k + 1} of {len(groups)})" if len(groups) > 1 else ""))
            for k, g in enumerate(groups)]


def comparison_report(result: LogComparison, *, title: str | None = None) -> Report:
    """One section per block of :func:`~mixeval.logs._result.result_blocks` (paired differences, the SEs side
    by side, mixed model, McNemar, GLMM, equivalence, design, leaderboard, conditional pairs), with the figures,
    then the notes and warnings."""
    sections = []
    for number, (heading, text, frame, keys, columns) in enumerate(result_blocks(result), 1):
        blocks: list[Any] = [Paragraph(text), *_tables(frame, keys, columns, f"Table {number}: {heading}")]
        summary: tuple[str, ...] = ()
        if heading == "Paired differences":
            summary = (_significant(result.pairs, result.level),)
            blocks.append(Figure.from_matplotlib(plot_pair_intervals(result),
                                                 "Each pair's interval: naive, CR2 and mixed model"))
        if heading == "Leaderboard":
            summary = tuple(f"{r.rank}. {r.model}: {r.estimate:.4g} [{r.lower:.4g}, {r.upper:.4g}], ranks "
                            f"{r.rank_lower}-{r.rank_upper}" for r in result.leaderboard.head(10).itertuples())
            blocks.append(Figure.from_matplotlib(plot_leaderboard(result), "Model means and rank sets"))
        sections.append(Section(heading, tuple(blocks), summary=summary))
    notes = [Note(n, "note") for n in result.notes[:20]] + [Note(w, "warning") for w in result.warnings[:20]]
    if notes:
        sections.append(Section("Notes and warnings", tuple(notes)))
    meta = {"models": str(len(result.models)), "metric": result.metric,
            "items": f"{int(result.pairs['n_items'].max())} shared by a pair at most, {result.n_common_items} by all",
            "clusters": result.cluster or "none (each item its own)", "level": f"{result.level:g}",
            "adjustment": result.adjust}
    return Report(title or f"Comparison of {len(result.models)} models on {result.metric}", tuple(sections), meta)
