"""Evaluation reports: one self-contained HTML page, a notebook view and a concise text summary.

A :class:`Report` is a frozen tuple of :class:`Section` objects, each holding
:class:`Table` (a DataFrame with a caption), :class:`Figure` (a PNG, e.g. from
:mod:`mixeval.plots`), :class:`Paragraph` and :class:`Note` blocks.

Examples
--------
>>> import pandas as pd
>>> from mixeval import plots
>>> from mixeval.report import Report, Section, Table, Figure
>>> data = pd.DataFrame({"system": ["A", "A", "B", "B"], "score": [0.1, 0.3, 0.4, 0.6]})
>>> fig = plots.plot_system_boxplots(data, score="score", system="system")
>>> rep = Report("Scores", (Section("Data", (Table(data, "Table 1: the data"),
...                                         Figure.from_matplotlib(fig, "Figure 1: scores"))),))
>>> "data:image/png;base64," in rep.to_html()
True
"""

from __future__ import annotations

from .._format import format_number, text_table
from ._blocks import Figure, Note, Paragraph, Section, Table, figure_to_png
from ._build import build_report, default_dstudy_grid, interaction_test
from ._checks import check_evaluation_log, long_format_hint
from ._report import Report
from ._sections import (
                        comparison_section,
                        conditional_section,
                        data_section,
                        result_table,
                        trend_section,
                        variance_section,
)

__all__ = [
    "build_report",
    "default_dstudy_grid",
    "interaction_test",
    "Report",
    "Section",
    "Table",
    "Figure",
    "Paragraph",
    "Note",
    "data_section",
    "variance_section",
    "comparison_section",
    "conditional_section",
    "trend_section",
    "result_table",
    "check_evaluation_log",
    "long_format_hint",
    "figure_to_png",
    "format_number",
    "text_table",
]
