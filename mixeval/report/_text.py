"""Concise plain-text summaries: aligned tables, wrapped paragraphs, sections."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

from .._format import text_table
from ._blocks import Figure, Note, Paragraph, Section, Table

__all__ = ["wrap", "section_text", "report_text", "TEST_COLUMNS"]


def wrap(text: str, width: int = 88, indent: str = "") -> str:
    """``text`` wrapped to ``width`` columns, every line prefixed by ``indent``."""
    return textwrap.fill(text, width=width, initial_indent=indent, subsequent_indent=indent or "",
                         break_long_words=False, break_on_hyphens=False)


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
                                    index=block.index, caption=block.caption, width=width))
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
