"""Tests of the report infrastructure: blocks, HTML page, text summary, Report."""

from __future__ import annotations

import base64
import re
from html.parser import HTMLParser

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import mixeval  # noqa: E402
from matplotlib.figure import Figure as MplFigure  # noqa: E402

from mixeval.report import Figure, Note, Paragraph, Report, Section, Table, format_number, text_table  # noqa: E402
from mixeval.report import _html  # noqa: E402


def _png(width: float = 2.0) -> bytes:
    fig = MplFigure(figsize=(width, 1.5))
    fig.add_subplot().plot([0, 1], [1, 0])
    return Figure.from_matplotlib(fig, "x").png


class _Collect(HTMLParser):
    """Collects tags, attributes and text of a page; fails on unbalanced structural tags."""

    VOID = {"meta", "img", "br", "hr", "link", "input"}

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.stack: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, (tag, self.stack[-5:])
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def _parse(page: str) -> _Collect:
    parser = _Collect()
    parser.feed(page)
    parser.close()
    assert parser.stack == [], parser.stack
    return parser


@pytest.fixture
def report() -> Report:
    vc = pd.DataFrame({"component": ["sentence_id", "Residual"], "variance": [0.09046723, 0.01968357]})
    vc["percent"] = 100 * vc["variance"] / vc["variance"].sum()
    pairs = pd.DataFrame(
        {"contrast": ["Baseline - Marking", "Baseline - PostEdit", "Marking - PostEdit"],
         "estimate": [0.01234, 0.00962, -0.00272], "p.value": [3.2e-9, 1.1e-5, 0.1625]}
    )
    return Report(
        "TER study <mt_ter>",
        (
            Section("Variance components", (Table(vc, "Table 3.8: variance components"), Figure(_png(), "Figure 1"),
                                            Note("the fit is singular", "warning")),
                    summary=("sentence explains 82.13% of the variance",)),
            Section("Pairwise comparisons", (Paragraph("Tukey-adjusted p-values & more."),
                                             Table(pairs, "Table 4.2: pairwise"), Figure(_png(3.0), "Figure 2"))),
        ),
        meta={"data": "mt_ter.csv", "rows": 7287},
    )


# --------------------------------------------------------------------------- formatting


@pytest.mark.parametrize(
    "value, text",
    [(0.0123449, "0.01234"), (47752.135, "47752"), (3.96e-8, "3.96e-08"), (60.8829, "60.88"), (0.0, "0"),
     (-0.00272, "-0.00272"), (1.5e7, "1.5e+07"), (float("nan"), "NA"), (float("inf"), "Inf"), (82.13, "82.13"),
     (2.0, "2"), (-64.0, "-64"), (999999.0, "999999"), (0.5, "0.5")],
)
def test_format_number(value, text):
    assert format_number(value) == text


def test_text_table_alignment_truncation_and_index():
    frame = pd.DataFrame({"name": ["a", "bb", "c"], "x": [1.5, -20.25, np.nan], "n": [1, 22, 333]})
    out = text_table(frame, max_rows=2, caption="T")
    assert out.splitlines() == ["T", "name       x   n", "a       1.50   1", "bb    -20.25  22",
                                "... 1 more row(s) not shown (3 in total)"]
    indexed = frame.set_index("name")
    assert text_table(indexed).splitlines()[0].split() == ["name", "x", "n"]
    assert "NA" in text_table(frame)


# --------------------------------------------------------------------------- blocks


def test_blocks_validate_and_copy_their_input():
    frame = pd.DataFrame({"a": [1.0]})
    table = Table(frame, "c")
    frame.loc[0, "a"] = 2.0
    assert table.data.loc[0, "a"] == 1.0  # the report keeps its own copy
    with pytest.raises(TypeError, match="DataFrame"):
        Table([1, 2], "c")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="digits"):
        Table(frame, "c", digits=0)
    with pytest.raises(ValueError, match="PNG"):
        Figure(b"GIF89a", "c")
    with pytest.raises(ValueError, match="kind"):
        Note("x", "error")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="blocks must be"):
        Section("s", ("text",))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="title"):
        Section(" ")
    with pytest.raises(TypeError, match="Section"):
        Report("r", ("not a section",))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="matplotlib Figure"):
        Figure.from_matplotlib("fig", "c")


def test_figure_from_matplotlib_renders_png_of_the_figure_size():
    fig = MplFigure(figsize=(4, 3))
    fig.add_subplot().plot([1, 2, 3])
    block = Figure.from_matplotlib(fig, "Figure 9", dpi=50, close=False)
    width, height = int.from_bytes(block.png[16:20], "big"), int.from_bytes(block.png[20:24], "big")
    assert 150 <= width <= 200 and 100 <= height <= 150  # 4 x 3 in at 50 dpi, tight box
    assert block.alt == "Figure 9"


# --------------------------------------------------------------------------- HTML


def test_page_is_well_formed_and_holds_tables_figures_notes(report):
    page = report.to_html()
    assert page.startswith("<!DOCTYPE html>")
    parsed = _parse(page)
    tags = [t for t, _ in parsed.tags]
    assert tags.count("table") == 2 and tags.count("caption") == 2 and tags.count("img") == 2
    assert tags.count("h1") == 1 and tags.count("h2") == 2 and tags.count("section") == 2
    text = "".join(parsed.text)
    assert "TER study <mt_ter>" in text  # escaped in the source, intact for the reader
    assert "<mt_ter>" not in page.split("<body>")[1]
    assert "Tukey-adjusted p-values & more." in text and "&amp;" in page
    assert "Warning:" in text and "the fit is singular" in text
    assert "sentence explains 82.13% of the variance" in text
    # numbers: 4 significant digits, right-aligned numeric cells
    assert '<td class="num">0.09047</td>' in page and '<td class="num">82.13</td>' in page
    assert '<td class="num">3.2e-09</td>' in page and "<td>Baseline - Marking</td>" in page
    # table of contents links to the section ids
    hrefs = [a["href"] for t, a in parsed.tags if t == "a"]
    ids = [a["id"] for t, a in parsed.tags if t == "section"]
    assert hrefs == [f"#{i}" for i in ids] == ["#variance-components", "#pairwise-comparisons"]


def test_images_are_embedded_png_data_uris(report):
    parsed = _parse(report.to_html())
    sources = [a["src"] for t, a in parsed.tags if t == "img"]
    assert len(sources) == 2
    for src, figure in zip(sources, [b for s in report.sections for b in s.blocks if isinstance(b, Figure)]):
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1]) == figure.png


def test_page_makes_no_external_requests(report):
    page = report.to_html()
    parsed = _parse(page)
    for tag, attrs in parsed.tags:
        for key in ("src", "href", "srcset", "data", "action", "poster"):
            value = attrs.get(key)
            if value is not None:
                assert value.startswith(("data:", "#")), (tag, key, value[:60])
        assert tag not in ("script", "link", "iframe", "object", "embed")
    assert not re.search(r"url\(|@import", page)  # nothing pulled in from CSS either


def test_duplicate_section_titles_get_unique_anchors():
    rep = Report("r", (Section("Same"), Section("Same")))
    ids = [a["id"] for t, a in _parse(rep.to_html()).tags if t == "section"]
    assert ids == ["same", "same-2"]


def test_repr_html_is_a_fragment(report):
    fragment = report._repr_html_()
    assert fragment.startswith('<div class="mxr">') and "<html" not in fragment and "<nav>" not in fragment
    parsed = _parse(fragment)
    assert [t for t, _ in parsed.tags].count("img") == 2


def test_table_index_shown_when_meaningful():
    frame = pd.DataFrame({"estimate": [0.1, 0.2]}, index=pd.Index(["A", "B"], name="system"))
    html_table = _html.table_html(Table(frame, "t"))
    assert "<th>system</th>" in html_table and "<td>A</td>" in html_table
    plain = _html.table_html(Table(frame.reset_index(drop=True), "t"))
    assert "<th>system</th>" not in plain and plain.count("<th>") == 1


# --------------------------------------------------------------------------- text and saving


def test_text_summary_is_concise(report):
    text = report.to_text()
    lines = text.splitlines()
    assert lines[:2] == ["TER study <mt_ter>", "=================="]
    assert lines[2].startswith(f"data: mt_ter.csv; rows: 7287; mixeval: {mixeval.__version__}; date: ")
    assert "- sentence explains 82.13% of the variance" in lines
    assert "WARNING: the fit is singular" in lines
    # a section with a summary shows the summary, not its tables; one without shows its tables
    assert "Table 3.8: variance components" not in text
    assert "Table 4.2: pairwise" in text and "Baseline - Marking" in text
    assert "(2 figure(s) in the HTML report" in text
    assert str(report) == text
    assert repr(report) == "Report('TER study <mt_ter>': 2 section(s), 2 table(s), 2 figure(s))"


def test_save_html_and_text(report, tmp_path):
    html_path = report.save(tmp_path / "report.html")
    assert html_path.read_text(encoding="utf-8") == report.to_html()
    txt_path = report.save(str(tmp_path / "report.txt"))
    assert txt_path.read_text(encoding="utf-8") == report.to_text()
    with pytest.raises(FileNotFoundError, match="does not exist"):
        report.save(tmp_path / "missing" / "r.html")


def test_report_is_frozen_and_sections_found_by_title(report):
    with pytest.raises(AttributeError):
        report.title = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        report.meta["x"] = "y"  # type: ignore[index]
    assert report.section("Pairwise comparisons").tables[0].caption == "Table 4.2: pairwise"
    with pytest.raises(KeyError, match="'Variance components', 'Pairwise comparisons'"):
        report.section("GLRT")


def test_extended_returns_a_new_report(report):
    longer = report.extended(Section("Notes", (Note("appended"),)))
    assert [s.title for s in longer.sections][-1] == "Notes" and len(report.sections) == 2
    assert longer.meta == report.meta and longer.title == report.title
    with pytest.raises(TypeError, match="Section"):
        report.extended("not a section")  # type: ignore[arg-type]


def test_every_block_of_a_split_table_repeats_all_its_label_columns():
    """A split table's later blocks keep every leading label column (contrast and class), so each row says which
    class it is (the demo report's per-class contrasts lost length_class in their second block)."""
    from mixeval.report._html import table_html

    wide = pd.DataFrame({"contrast": ["a - b", "a - b"], "length_class": ["short", "long"],
                         **{f"statistic_{j}": [1.23456, -0.000123] for j in range(20)}})
    for k in range(3, 22):  # a width whose last block holds one column: the caption names it once
        tables = re.findall(r"<table.*?</table>", table_html(Table(wide.iloc[:, :k], "T")))
        if len(tables) > 1 and tables[-1].count("<th>") == 3:
            assert re.search(r"<caption>T \(\d/\d: statistic_\d+\)</caption>", tables[-1])
            break
    else:
        raise AssertionError("no width leaves one column in the last block")
    tables = re.findall(r"<table.*?</table>", table_html(Table(wide, "Table 9: wide")))
    heads = [re.findall(r"<th>(.*?)</th>", t) for t in tables]
    assert len(heads) > 1 and all(h[:2] == ["contrast", "length_class"] for h in heads)
    assert sum(len(h) - 2 for h in heads) == 20
    assert all("<td>short</td>" in t and "<td>long</td>" in t for t in tables)
    captions = re.findall(r"<caption>(.*?)</caption>", "".join(tables))
    assert captions[1].startswith("Table 9: wide (2/") and "length_class" not in captions[1]


def test_a_table_too_wide_for_the_page_is_split_into_blocks_of_columns():
    """Issue 41 item 8: a 20-column table is not cut off; each block starts with the label column."""
    from mixeval.report._html import PAGE_CHARACTERS, page_html, table_html

    wide = pd.DataFrame({"contrast": ["baseline - system_a", "baseline - system_b"],
                         **{f"statistic_{j}": [1.23456, -0.000123] for j in range(20)}})
    page = table_html(Table(wide, "Table 9: wide"))
    tables = re.findall(r"<table.*?</table>", page)
    assert len(tables) > 1
    heads = [re.findall(r"<th>(.*?)</th>", t) for t in tables]
    assert all(h[0] == "contrast" for h in heads) and sum(len(h) - 1 for h in heads) == 20
    for head in heads:
        assert sum(max(len(name), 10) + 2 for name in head) <= PAGE_CHARACTERS + 12
    assert "Table 9: wide (1/" in page and "overflow-x: auto" in page_html("t", [Section("s", (Table(wide, "w"),))])
