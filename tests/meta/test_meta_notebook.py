"""Execute notebooks/meta_evaluation.ipynb (committed without outputs) and check what it prints."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "meta_evaluation.ipynb"


def test_meta_notebook_runs_and_prints_the_documented_numbers():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), "commit the notebook without outputs"
    client = nbclient.NotebookClient(
        nb, kernel_name="python3", timeout=300, resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    )
    client.execute()
    text = "\n".join(
        out["text"] for cell in nb.cells for out in cell.get("outputs", []) if out.get("output_type") == "stream"
    )
    assert "wer        0.975  0.575    0.475" in text
    assert "A wer   F =   35.200  df = (2, 38)  p = 2.24e-09" in text
    assert "A: AUC = 0.8000  a = 0.99  b = 0.99  n = 0  DiSCA = 0.6734" in text
    assert "B: AUC = 0.7350  a = 0.9  b = 0.99  n = 0  DiSCA = 0.7071" in text
    assert "NiDMA = 0.5328" in text
