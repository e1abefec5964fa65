"""Negative controls of docs/check_site.py: it finds broken links, missing anchors, network assets, and in
the browser an image that does not decode and a search that finds nothing."""

from __future__ import annotations

import base64
import importlib.util
import io
import os
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
_spec = importlib.util.spec_from_file_location("check_site", DOCS / "check_site.py")
check_site = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = check_site
_spec.loader.exec_module(check_site)


def _png() -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(1, 1))
    ax.plot([0, 1], [0, 1])
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=30)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


@pytest.fixture
def site(tmp_path) -> Path:
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "good.png").write_bytes(base64.b64decode(_png()))
    (tmp_path / "img" / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    (tmp_path / "index.html").write_text(
        '<html><body><h1 id="top">t</h1><a href="page.html#here">ok</a><a href="page.html#nowhere">bad anchor</a>'
        '<a href="missing.html">missing</a><a href="https://example.org/">external link is fine</a>'
        '<script src="https://cdn.example.org/x.js"></script><a href="#top">self</a></body></html>')
    (tmp_path / "page.html").write_text('<html><body><p id="here">x</p><img src="img/good.png">'
                                        '<img src="img/bad.png"></body></html>')
    (tmp_path / "search.html").write_text('<html><body><div id="search-results">'
                                          '<p class="search-summary">Your search did not match any documents.</p>'
                                          '</div></body></html>')
    return tmp_path


def test_static_check_finds_broken_links_anchors_and_network_assets(site):
    problems, with_images, _ = check_site.static_problems(site)
    text = "\n".join(problems)
    assert "missing.html" in text and "no id 'nowhere'" in text and "cdn.example.org" in text
    assert "#here" not in text and "example.org/\"" not in text and "#top" not in text
    assert len(problems) == 3
    assert [p.name for p in with_images] == ["page.html"]


def test_browser_check_finds_an_undecodable_image_and_an_empty_search(site):
    browser = check_site.chromium()
    if browser is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed; .ci/run installs it")
        pytest.skip("chromium not installed")
    report = check_site.browser_check(site, ["page.html"], "anything", browser)
    sizes = {src: (w, h) for src, w, h in report["pages"]["page.html"]["images"]}
    assert sizes["img/good.png"][0] > 0 and sizes["img/bad.png"] == (0, 0)
    problems = check_site.browser_problems(report, "anything", {"page.html"})
    assert any("img/bad.png" in p for p in problems)
    assert any("search for 'anything' returned no results" in p for p in problems)
    assert not any("img/good.png" in p for p in problems)


def _cell(output: bool, tags: str = "") -> str:
    out = '<div class="cell_output docutils container"><pre>1</pre></div>' if output else ""
    return (f'<div class="cell{tags} docutils container"><div class="cell_input docutils container">'
            f'<pre>x</pre></div>{out}</div>')


def test_output_check_finds_examples_without_output(tmp_path):
    (tmp_path / "guides").mkdir()
    (tmp_path / "good.html").write_text(_cell(False, " tag_setup") + _cell(True) + _cell(True))
    (tmp_path / "guides" / "bad.html").write_text("<p>text</p>" + _cell(True) + _cell(False))
    (tmp_path / "plain.html").write_text("<pre>code shown, never run</pre>")
    problems = check_site.output_problems(tmp_path, ["good", "guides/bad", "plain", "gone"])
    assert problems == ["guides/bad.html: code cell 2 shows no output",
                        "plain.html: no executed example (no code cell with output)",
                        "gone.html: missing"]


def test_the_pages_with_examples_include_every_guide():
    pages = check_site.pages_with_outputs()
    assert {"getting_started", "coming_from_r", "guides/significance", "guides/reliability"} <= set(pages)
    assert "guides/index" not in pages


def test_api_index_check_finds_a_name_listed_twice_and_names_not_listed(tmp_path):
    (tmp_path / "api").mkdir()
    row = ('<tr class="row-odd"><td><p><a class="reference internal" '
           'href="generated/mixeval.study.Study.html#mixeval.study.Study">')
    (tmp_path / "api" / "index.html").write_text(row + row)
    (tmp_path / "api" / "internals.html").write_text("")
    problems = check_site.api_index_problems(tmp_path)
    assert "api index: mixeval.study.Study listed 2 times" in problems
    assert "api index: mixeval.significance.emmeans not listed" in problems


def test_text_check_finds_build_paths_raw_warnings_broken_tables_and_cut_summaries(tmp_path):
    """Issue 41, items 1, 9 and 13: a page with a build path, a raw warning, a table broken by ``(1|g)`` and an
    API index with a summary cut at "Eq." and a constant described by its type; the clean page passes."""
    (tmp_path / "api").mkdir()
    (tmp_path / "guide.html").write_text(
        "<html><body><div class='output stderr'><pre>/work/main/mixeval/significance/_dominance.py:120: "
        "FewLevelsWarning: the variance component 'system:seed' has 9 levels</pre></div>"
        "<p>| seeds | a <code>(1</code> | 4.3.2 |</p></body></html>")
    (tmp_path / "clean.html").write_text(
        "<html><body><pre>FewLevelsWarning: the variance component 'system:seed' has 9 levels</pre>"
        "<table><tr><td>a <code>(1|system:seed)</code> term</td></tr></table></body></html>")
    (tmp_path / "api" / "index.html").write_text(
        '<table><tr class="row-odd"><td><p><a href="generated/mixeval.reliability.inter_rater.html">x</a></p></td>'
        "<td><p>Inter-rater reliability (book Eq.</p></td></tr>"
        '<tr class="row-even"><td><p><a href="generated/mixeval.agreement.LEVELS.html">y</a></p></td>'
        "<td><p>Built-in immutable sequence.</p></td></tr>"
        '<tr class="row-odd"><td><p><a href="generated/mixeval.phi.html">z</a></p></td>'
        "<td><p>Reliability phi (book Definition 3.2, Eq. 3.4).</p></td></tr></table>")
    problems = check_site.text_problems(tmp_path)
    text = "\n".join(problems)
    assert "guide.html: shows the build path" in text and "guide.html: shows a raw warning" in text
    assert "guide.html: a Markdown table did not render" in text and "guide.html: a code span is cut open" in text
    assert "cut at an abbreviation: 'Inter-rater reliability (book Eq.'" in text
    assert "described by its type: 'Built-in immutable sequence.'" in text
    assert "clean.html" not in text and "Eq. 3.4" not in text
    assert len(problems) == 6
