"""A single self-contained HTML page: inline CSS, images as base64 PNG data URIs, no external requests.

The page uses no scripts, fonts, style sheets or images from anywhere else, so it opens offline
and can be mailed or attached as one file.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Mapping, Sequence

import pandas as pd

from .._format import column_blocks, display_frame, formatted_columns
from ._blocks import Block, Figure, Note, Paragraph, Section, Table

__all__ = [
    "CSS",
    "png_data_uri",
    "table_html",
    "figure_html",
    "note_html",
    "section_html",
    "page_html",
    "fragment_html",
    "slug",
]

CSS = """
.mxr { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1f2328;
       line-height: 1.45; max-width: 1000px; margin: 0 auto; padding: 0 1em 2em 1em; }
.mxr h1 { font-size: 1.6em; border-bottom: 2px solid #d0d7de; padding-bottom: .3em; }
.mxr h2 { font-size: 1.25em; margin-top: 1.8em; border-bottom: 1px solid #d8dee4; padding-bottom: .2em; }
.mxr .meta { color: #57606a; font-size: .9em; }
.mxr table.mxr-table { border-collapse: collapse; margin: .8em 0 1.2em 0; font-size: .9em; }
.mxr table.mxr-table caption { caption-side: top; text-align: left; font-weight: 600; padding: .3em 0; }
.mxr .mxr-wide { max-width: 100%; overflow-x: auto; }
.mxr table.mxr-table th, .mxr table.mxr-table td { border: 1px solid #d0d7de; padding: .25em .6em; }
.mxr table.mxr-table th { background: #f6f8fa; text-align: left; }
.mxr table.mxr-table td.num { text-align: right; font-variant-numeric: tabular-nums; }
.mxr table.mxr-table tr:nth-child(even) td { background: #fbfcfd; }
.mxr figure { margin: 1em 0 1.4em 0; }
.mxr figure img { max-width: 100%; height: auto; border: 1px solid #eaeef2; }
.mxr figcaption { color: #57606a; font-size: .9em; margin-top: .3em; }
.mxr .box { border-left: 4px solid #0969da; background: #ddf4ff; padding: .5em .8em; margin: .8em 0; }
.mxr .box.warning { border-left-color: #bf8700; background: #fff8c5; }
.mxr .box b { margin-right: .4em; }
.mxr nav ul { margin: .3em 0; padding-left: 1.2em; }
.mxr ul.summary { margin: .4em 0; }
"""


def slug(text: str) -> str:
    """An HTML id from a title (lower case letters, digits and dashes)."""
    out = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return out or "section"


def png_data_uri(png: bytes) -> str:
    """``data:image/png;base64,...`` for PNG bytes."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _is_numeric(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


#: characters of table text that fit the page (about 970 px of 0.9 em text, ~8 px a character; 2 of padding a cell)
PAGE_CHARACTERS = 120


def table_html(table: Table) -> str:
    """A ``<table>`` with a ``<caption>``; numbers right-aligned in one format per column.

    A table too wide for the page is shown as several tables of consecutive columns, each starting with the label
    columns (as the text summary prints it), the caption saying which columns each holds.
    """
    frame = display_frame(table.data, table.index)
    numeric = [_is_numeric(frame[c]) for c in frame.columns]
    columns = formatted_columns(frame, table.digits)
    widths = [max([len(str(name))] + [len(text) for text in texts]) for name, texts in zip(frame.columns, columns)]
    blocks = column_blocks(widths, numeric, PAGE_CHARACTERS)
    parts = []
    for number, block in enumerate(blocks, start=1):
        caption = table.caption
        if len(blocks) > 1:
            shown = [str(frame.columns[j]) for j in block if any(j not in other for other in blocks)]
            span = shown[0] if len(shown) == 1 else f"{shown[0]} .. {shown[-1]}"
            caption = f"{caption} ({number}/{len(blocks)}: {span})".strip()
        head = "".join(f"<th>{html.escape(str(frame.columns[j]))}</th>" for j in block)
        rows = []
        for i in range(len(frame)):
            cells = [f'<td class="num">{html.escape(columns[j][i])}</td>' if numeric[j]
                     else f"<td>{html.escape(columns[j][i])}</td>" for j in block]
            rows.append("<tr>" + "".join(cells) + "</tr>")
        caption_html = f"<caption>{html.escape(caption)}</caption>" if caption else ""
        parts.append(f'<div class="mxr-wide"><table class="mxr-table">{caption_html}<thead><tr>{head}</tr></thead>'
                     f"<tbody>{''.join(rows)}</tbody></table></div>")
    return "".join(parts)


def figure_html(figure: Figure) -> str:
    """A ``<figure>`` with the PNG inlined as a data URI and a ``<figcaption>``."""
    alt = html.escape(figure.alt or figure.caption, quote=True)
    caption = f"<figcaption>{html.escape(figure.caption)}</figcaption>" if figure.caption else ""
    return f'<figure><img src="{png_data_uri(figure.png)}" alt="{alt}">{caption}</figure>'


def note_html(note: Note) -> str:
    """A note or warning box."""
    label = "Warning:" if note.kind == "warning" else "Note:"
    return f'<div class="box {note.kind}"><b>{label}</b>{html.escape(note.text)}</div>'


def _block_html(block: Block) -> str:
    if isinstance(block, Table):
        return table_html(block)
    if isinstance(block, Figure):
        return figure_html(block)
    if isinstance(block, Note):
        return note_html(block)
    if isinstance(block, Paragraph):
        return f"<p>{html.escape(block.text)}</p>"
    raise TypeError(f"cannot render {type(block).__name__} as HTML")


def section_html(section: Section, anchor: str | None = None) -> str:
    """A ``<section>`` with an ``<h2>`` heading, its summary lines and its blocks."""
    anchor = anchor or slug(section.title)
    parts = [f'<section id="{html.escape(anchor, quote=True)}"><h2>{html.escape(section.title)}</h2>']
    if section.summary:
        items = "".join(f"<li>{html.escape(line)}</li>" for line in section.summary)
        parts.append(f'<ul class="summary">{items}</ul>')
    parts.extend(_block_html(block) for block in section.blocks)
    parts.append("</section>")
    return "".join(parts)


def _anchors(sections: Sequence[Section]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for section in sections:
        base = slug(section.title)
        seen[base] = seen.get(base, 0) + 1
        out.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    return out


def _body(title: str, sections: Sequence[Section], meta: Mapping[str, str], toc: bool) -> str:
    anchors = _anchors(sections)
    parts = [f"<h1>{html.escape(title)}</h1>"]
    if meta:
        items = " &middot; ".join(f"{html.escape(str(k))}: {html.escape(str(v))}" for k, v in meta.items())
        parts.append(f'<p class="meta">{items}</p>')
    if toc and len(sections) > 1:
        links = "".join(
            f'<li><a href="#{html.escape(a, quote=True)}">{html.escape(s.title)}</a></li>'
            for s, a in zip(sections, anchors)
        )
        parts.append(f"<nav><ul>{links}</ul></nav>")
    parts.extend(section_html(s, a) for s, a in zip(sections, anchors))
    return "".join(parts)


def page_html(title: str, sections: Sequence[Section], meta: Mapping[str, str] | None = None, *,
              toc: bool = True) -> str:
    """A complete HTML5 document (``<!DOCTYPE html>``, UTF-8, inline CSS, no external resources)."""
    body = _body(title, sections, meta or {}, toc)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head>"
        f'<body><main class="mxr">{body}</main></body></html>\n'
    )


def fragment_html(title: str, sections: Sequence[Section], meta: Mapping[str, str] | None = None) -> str:
    """The same content as a ``<div>`` for notebooks (styles scoped to ``.mxr``)."""
    return f'<div class="mxr"><style>{CSS}</style>{_body(title, sections, meta or {}, toc=False)}</div>'
