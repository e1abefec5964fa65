"""Execute notebooks/ch2_validity.ipynb and check its key numbers and verdicts."""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NB = Path(__file__).resolve().parents[2] / "notebooks" / "ch2_validity.ipynb"


@pytest.fixture(scope="module")
def results(bookdata):
    nb = nbformat.read(NB, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.get("outputs"), "the notebook must be committed without outputs"
    env_before = os.environ.get("MIXEVAL_DATA")
    os.environ["MIXEVAL_DATA"] = str(bookdata)
    os.environ.setdefault("MPLBACKEND", "Agg")
    try:
        NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(NB.parent)}}).execute()
    finally:
        if env_before is None:
            os.environ.pop("MIXEVAL_DATA", None)
        else:
            os.environ["MIXEVAL_DATA"] = env_before
    found = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            text = out.get("text", "")
            for line in text.splitlines():
                if line.startswith("RESULT "):
                    r = json.loads(line[len("RESULT "):])
                    found[r["label"]] = r
    return found


def test_gold_labels_name_bilirubin(results):
    r = results["target"]
    assert r["circular"] == ["bili"]
    assert r["d2"] == pytest.approx(0.98025, abs=0.01)  # mgcv s(bili, bs = "cr", k = 10): 0.98025
    assert max(r["nullification"].values()) < 0.1


def test_larger_basis_resolves_steps(results):
    assert results["target~s(bili,k=40)"]["d2"] == pytest.approx(0.99671, abs=0.005)  # mgcv k = 40: 0.99671


def test_circular_teacher_names_bilirubin(results):
    r = results["sofa_circ"]
    assert r["circular"] == ["bili"] and r["d2"] > 0.97
    assert max(r["nullification"].values()) < 0.1


def test_noncircular_teacher_has_no_circular_set(results):
    r = results["sofa_nocirc"]
    assert r["circular"] == [] and r["d2"] < 0.5
    assert min(r["forced_bili_ratios"].values()) > 0.5
