"""Concise plain-text summaries: aligned tables, wrapped paragraphs, sections."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

import pandas as pd

from ._blocks import Figure, Note, Paragraph, Section, Table
from .._results import is_pvalue_column
from ._format import display_frame, format_cell

__all__ = ["text_table", "wrap", "section_text", "report_text", "TEST_COLUMNS"]


def wrap(text: str, width: int = 88, indent: str = "") -> str:
    """``text`` wrapped to ``width`` columns, every line prefixed by ``indent``."""
    return textwrap.fill(text, width=width, initial_indent=indent, subsequent_indent=indent or "",
                         break_long_words=False, break_on_hyphens=False)


def text_table(data: pd.DataFrame, *, digits: int = 4, max_rows: int | None = 12, index: bool | None = None,
               caption: str = "") -> str:
    """A DataFrame as an aligned plain-text table (numbers right-aligned, strings left-aligned).

    With more than ``max_rows`` rows, the first ``max_rows`` are shown and a line says how
    many were left out (nothing is dropped silently).

    Examples
    --------
    >>> import pandas as pd
    >>> print(text_table(pd.DataFrame({"component": ["item", "residual"], "variance": [0.0905, 0.0197]})))
    component  variance
    item        0.09050
    residual    0.01970
    """
    frame = display_frame(data, index)
    n_rows = len(frame)
    shown = frame if max_rows is None or n_rows <= max_rows else frame.iloc[:max_rows]
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
               for c in frame.columns]
    header = [str(c) for c in frame.columns]
    pvalue = [is_pvalue_column(c) for c in frame.columns]
    body = [[format_cell(v, digits, pvalue=p) for v, p in zip(row, pvalue)]
            for row in shown.itertuples(index=False, name=None)]
    widths = [max([len(h)] + [len(r[j]) for r in body]) for j, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        out = [cell.rjust(widths[j]) if numeric[j] else cell.ljust(widths[j]) for j, cell in enumerate(cells)]
        return "  ".join(out).rstrip()

    lines = [caption] if caption else []
    lines.append(line(header))
    lines.extend(line(r) for r in body)
    if len(shown) < n_rows:
        lines.append(f"... {n_rows - len(shown)} more row(s) not shown ({n_rows} in total)")
    return "\n".join(lines)


#: the columns of a one-row test table (``result_table``): the section's summary line states the same test
TEST_COLUMNS = ["test", "statistic", "df", "p.value"]


def section_text(section: Section, width: int = 88) -> str:
    """A section as text: its heading, its summary lines, notes; tables when it has no summary.

    A test's one-row table is left out when the section has a summary (its summary line states the test), so
    no test is printed twice.
    """
    lines = [section.title, "-" * len(section.title)]
    for item in section.summary:
        lines.append(textwrap.fill(item, width=width, initial_indent="- ", subsequent_indent="  ",
                                   break_long_words=False, break_on_hyphens=False))
    show_tables = section.text_tables or not section.summary
    for block in section.blocks:
        if isinstance(block, Note):
            label = "WARNING" if block.kind == "warning" else "note"
            lines.append(wrap(f"{label}: {block.text}", width))
        elif isinstance(block, Table) and section.summary and list(block.data.columns) == TEST_COLUMNS:
            continue
        elif isinstance(block, Table) and show_tables:
            lines.append("")
            lines.append(text_table(block.data, digits=block.digits, max_rows=block.max_text_rows,
                                    index=block.index, caption=block.caption))
        elif isinstance(block, Paragraph) and not section.summary:
            lines.append(wrap(block.text, width))
        elif isinstance(block, Figure):
            continue  # figures live in the HTML report only
    return "\n".join(lines)


def report_text(title: str, sections: Sequence[Section], meta: Mapping[str, str] | None = None,
                width: int = 88) -> str:
    """Title, meta line and every section, separated by blank lines."""
    lines = [title, "=" * len(title)]
    if meta:
        lines.append(wrap("; ".join(f"{k}: {v}" for k, v in meta.items()), width))
    out = "\n".join(lines)
    for section in sections:
        out += "\n\n" + section_text(section, width)
    n_figures = sum(len(s.figures) for s in sections)
    if n_figures:
        out += f"\n\n({n_figures} figure(s) in the HTML report: Report.save('report.html'))"
    return out + "\n"
