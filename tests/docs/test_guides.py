"""The Python code blocks of the documentation pages run (each page's blocks in order, one namespace).

Code cells (```{code-cell} python, which the documentation build executes to show their output) and blocks fenced
as ```python are run; ```text, ```sh and ```r blocks are not. The pages that show outputs must be MyST notebooks. The book data are found
through ``$MIXEVAL_DATA`` / ``../shared/bookdata`` like everywhere else.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

DOCS = Path(__file__).resolve().parents[2] / "docs"
# The site's own pages; method notes that others add to docs/ are tested by their authors, and docs/spark.md
# connects to a YARN / Kubernetes cluster (a recipe, not runnable here).
PAGES = sorted([*(DOCS / f"{name}.md" for name in ("index", "getting_started", "coming_from_r", "which_test")),
                *DOCS.glob("guides/*.md")])
BLOCK = re.compile(r"^```(?:python|\{code-cell\} python)\n(.*?)^```", flags=re.S | re.M)
#: the pages whose every example must show its output (executed at build time)
EXECUTED = ("getting_started", "coming_from_r", *(p.stem for p in DOCS.glob("guides/*.md") if p.stem != "index"))


def python_blocks(page: Path) -> list[str]:
    return BLOCK.findall(page.read_text(encoding="utf-8"))


def test_the_guides_have_runnable_examples():
    with_code = [p.stem for p in PAGES if python_blocks(p)]
    for stem in ("getting_started", "validity", "reliability", "significance", "metric_models",
                 "meta_evaluation", "resampling", "big_logs", "report_cli"):
        assert stem in with_code, stem


@pytest.mark.parametrize("stem", EXECUTED)
def test_example_pages_are_executed_notebooks(stem):
    path = DOCS / f"{stem}.md" if (DOCS / f"{stem}.md").exists() else DOCS / "guides" / f"{stem}.md"
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\nfile_format: mystnb\n"), f"{path.name}: not a MyST notebook (no outputs shown)"
    assert "```python\n" not in text, f"{path.name}: a ```python block is shown without its output; use a code-cell"


@pytest.mark.parametrize("page", [p for p in PAGES if python_blocks(p)], ids=lambda p: p.stem)
def test_page_code_runs(page, tmp_path, monkeypatch):
    if page.stem == "big_logs":
        pytest.importorskip("duckdb")
        pytest.importorskip("pyarrow")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": f"docs_{page.stem}"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, block in enumerate(python_blocks(page)):
            exec(compile(block, f"{page.name} block {i + 1}", "exec"), namespace)


def test_citation_names_the_installed_version_and_the_book():
    text = (DOCS / "citing.md").read_text(encoding="utf-8")
    import mixeval

    assert f"version = {{{mixeval.__version__}}}" in text
    assert "Riezler, Stefan and Hagmann, Michael" in text and "Validity, Reliability, and Significance" in text


def test_getting_started_fits_the_model_of_mixeval_demo():
    """`mixeval demo` and Getting Started show the same model (hence the same numbers)."""
    from mixeval.cli.cmd_report import DEMO_FORMULA

    text = (DOCS / "getting_started.md").read_text(encoding="utf-8")
    assert f'"{DEMO_FORMULA}")' in text.replace('(\n    demo, "', '(demo, "')
