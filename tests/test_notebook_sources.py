"""The committed notebooks are generated from their jupytext sources and committed executed.

``notebooks/<name>.py`` (percent format) is the source of truth; ``notebooks/build.py`` writes
``<name>.ipynb`` from it and executes it. These checks need no kernel: they compare the committed
``.ipynb`` with its source cell by cell and check that it carries its outputs. The numbers the notebooks
print are checked, executed and as committed, by each notebook's own test module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
NAMES = ["ch2_validity", "ch3_reliability", "ch4_significance", "eval_logs", "goyal_metric_model", "meta_evaluation",
         "ordinal_ratings", "preferences_arena"]


def test_every_notebook_has_a_source_and_every_source_a_notebook(notebook_build):
    assert [p.stem for p in notebook_build.sources()] == NAMES
    assert sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb")) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_committed_notebook_matches_its_source(notebook_build, name):
    committed = notebook_build.committed(name)
    source = notebook_build.from_source(notebook_build.source_path(name))
    assert notebook_build.differences(committed, source) == [], \
        f"notebooks/{name}.ipynb differs from {name}.py: run python3 notebooks/build.py {name}"


@pytest.mark.parametrize("name", NAMES)
def test_committed_notebook_is_executed_and_modest(notebook_build, name):
    nb = notebook_build.committed(name)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.execution_count is not None for c in code), "commit the notebook executed"
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1)), "executed top to bottom"
    assert not notebook_build.errors(nb)
    assert notebook_build.image_count(nb) >= 1  # every notebook shows at least one figure
    # figures at print resolution (200 dpi) with a 64-colour palette: a few hundred kB per notebook
    assert (NOTEBOOKS / f"{name}.ipynb").stat().st_size < 600_000


@pytest.mark.parametrize("name", NAMES)
def test_figures_are_at_print_resolution(notebook_build, name):
    """Every figure is a PNG saved at ``_nbhelpers.DPI`` (>= 200) and shown at 80 pixels per inch: its pixel width
    is about DPI / 80 times its displayed width (``bbox_inches="tight"`` trims or extends the margins a little)."""
    import base64
    import io
    import re

    from PIL import Image

    dpi = int(re.search(r"^DPI = (\d+)", (NOTEBOOKS / "_nbhelpers.py").read_text(), flags=re.M).group(1))
    assert dpi >= 200
    outputs = [o for c in notebook_build.committed(name).cells for o in c.get("outputs", [])
               if "image/png" in o.get("data", {})]
    for out in outputs:
        pixels = Image.open(io.BytesIO(base64.b64decode(out["data"]["image/png"]))).size[0]
        shown = out["metadata"]["image/png"]["width"]
        assert pixels / shown > 0.85 * dpi / 80, (pixels, shown)
    source = (NOTEBOOKS / f"{name}.py").read_text(encoding="utf-8")
    assert "savefig" not in source and "dpi=" not in source  # one resolution, set in _nbhelpers.show_figure


@pytest.mark.parametrize("name", NAMES)
def test_sources_import_the_shared_helpers_instead_of_pasting_them(name):
    tree = ast.parse((NOTEBOOKS / f"{name}.py").read_text(encoding="utf-8"))
    defined = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    assert not defined & {"show", "show_figure", "Caught", "data_dir"}
    assert "environ" not in (NOTEBOOKS / f"{name}.py").read_text(encoding="utf-8")  # data path: _nbhelpers
