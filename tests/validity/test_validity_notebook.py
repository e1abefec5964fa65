"""notebooks/ch2_validity: key numbers and verdicts, executed from its source and as committed."""

from __future__ import annotations

import json

import pytest


@pytest.fixture(scope="module", params=["executed", "committed"])
def run(request, notebook_runner):
    return notebook_runner(request, "ch2_validity")


@pytest.fixture(scope="module")
def results(run):
    found = {}
    for line in run.text.splitlines():
        if line.startswith("RESULT "):
            r = json.loads(line[len("RESULT "):])
            found[r["label"]] = r
    return found


def test_executes_with_figures(run):
    assert run.images == 3 and not run.errors  # Figure 2.9, Figure 2.10, the circular teacher's shapes


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
