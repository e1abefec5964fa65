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


#: notebooks that still import a repository-only helper; every other notebook runs with nothing but
#: ``pip install mixeval``
STILL_ON_NBHELPERS: set[str] = set()


@pytest.mark.parametrize("name", NAMES)
def test_figures_are_readable_pngs(notebook_build, name):
    """Every figure is a PNG at least 450 pixels wide, and the sources set no resolution of their own."""
    import base64
    import io

    from PIL import Image

    outputs = [o for c in notebook_build.committed(name).cells for o in c.get("outputs", [])
               if "image/png" in o.get("data", {})]
    for out in outputs:
        assert Image.open(io.BytesIO(base64.b64decode(out["data"]["image/png"]))).size[0] >= 450
    source = (NOTEBOOKS / f"{name}.py").read_text(encoding="utf-8")
    assert "savefig" not in source and "dpi=" not in source


@pytest.mark.parametrize("name", sorted(set(NAMES) - STILL_ON_NBHELPERS))
def test_a_notebook_needs_only_mixeval_and_hides_no_warning(name):
    """Issue 41 item 12: no repository-only helper (a user has only ``pip install mixeval``), no file of the
    repository read, no silenced warnings, no table of quantities and values, and a conclusion at the end."""
    source = (NOTEBOOKS / f"{name}.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert imported <= {"mixeval", "numpy", "pandas", "matplotlib", "scipy", "IPython", "warnings", "math",
                        "tempfile"}, imported
    assert "_nbhelpers" not in source and "KeyNumbers" not in source and "Caught(" not in source
    assert 'simplefilter("ignore"' not in source and "filterwarnings(\"ignore" not in source
    assert "../" not in source and "Path(" not in source  # no repository file
    assert source.rstrip().split("# %% [markdown]")[-1].lstrip().startswith("# ## Conclusion")
