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
    assert run.images == 4 and not run.errors  # Figures 2.9, 2.10, the circular teacher's shapes, Figure 2.8


def test_gold_labels_name_bilirubin(results):
    r = results["target"]
    assert r["circular"] == ["bili"] and r["k_bili"] == 40  # the k-check raised bilirubin's basis
    assert r["d2"] == pytest.approx(0.99671, abs=0.002)  # mgcv s(bili, bs = "cr", k = 40): 0.99671
    assert r["determinism"] > 0.99 and r["added_ratio"] < 0.01
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


def test_max_rule_of_kidney_kind(results):
    r = results["simulated-max"]
    assert sorted(r["circular"]) == ["u", "v"] and 0.85 < r["d2"] < 0.92 and r["determinism"] > 0.98
    assert r["sd_ratio_d3"] > 0.2 and r["gain_d3"] < 0.01  # the sd view alone would have refused


def test_table_2_5_and_binomial(results):
    r = results["table-2.5"]
    assert r["features"][0] == "{examiner, family, inventor}"
    assert r["d2"][:4] == pytest.approx([1.0] * 4, abs=1e-9)
    assert r["d2"][4] == pytest.approx(r["d2_mgcv"][4], abs=2e-4)
    b = results["ir-binomial"]
    assert sorted(b["circular"]) == ["cited_examiner", "cited_family", "cited_inventor"] and b["d2"] == 1.0
    assert sorted(b["student_circular"]) == ["score_neural", "score_tfIdf"]
