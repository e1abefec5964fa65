"""notebooks/ch2_validity: key numbers and verdicts, read from the notebook's variables after a fresh run of its
source, and its committed outputs, which must show what that run shows.

The references are mgcv's fits (``tests/validity/fixtures``) and the verdicts of the book (Section 2.4.3).
"""

from __future__ import annotations

import pytest


#: run in the notebook's kernel after its last cell: the numbers checked below, one ``label = value`` line each
PROBE = """
def put(label, value):
    print(f"{label} = {value}" if isinstance(value, str) else f"{label} = {float(value)!r}")

def verdict(result, label):
    put(f"{label} circular set", ", ".join(result.circular) or "none")
    put(f"{label} D^2", result.d2)
    put(f"{label} determinism", result.determinism)
    if result.nullification:
        put(f"{label} added / alone", result.added_ratio)
        put(f"{label} max sd ratio", max(result.nullification.values()))

verdict(gold, "target")
put("target k of bili after the k-check", gold.k["bili"])
put("target ~ s(bili, k=40) D^2", bili40.d2)
put("target ~ s(bili, k=40) edf", bili40.edf)
verdict(circ, "sofa_circ")
verdict(nocirc, "sofa_nocirc")
for feature, ratio in zip(forced["feature"], forced["ratio"]):
    put(f"sofa_nocirc sd ratio of {feature} with bili forced in", ratio)
verdict(kid, "simulated max rule")
put("simulated max rule sd ratio of d3", kid.nullification["d3"])
put("simulated max rule D^2 added by d3", kid.gain["d3"])
for i, row in enumerate(table25.itertuples()):
    put(f"Table 2.5 row {i + 1} features", row.features)
    put(f"Table 2.5 row {i + 1} D^2", row.d2)
    put(f"Table 2.5 row {i + 1} D^2 mgcv", row.d2_mgcv)
verdict(ir_bin, "binary relevance")
put("distilled student circular set", ", ".join(student.circular) or "none")
"""


@pytest.fixture(scope="module", params=["executed", "committed"])
def run(request, notebook_runner):
    return notebook_runner(request, "ch2_validity", probe=PROBE)


def test_executes_with_figures_and_the_committed_outputs_are_a_fresh_run(run):
    assert run.images == 4 and not run.errors  # Figures 2.9, 2.10, the circular teacher's shapes, Figure 2.8
    assert not run.stale, "rebuild: python3 notebooks/build.py ch2_validity\n" + "\n".join(run.stale)
    assert run.nb.cells[-1].source.startswith("## Conclusion")


def test_gold_labels_name_bilirubin(run):
    assert run.raw("target circular set") == "bili"
    assert run["target k of bili after the k-check"] == 40  # the k-check raised bilirubin's basis
    assert run["target D^2"] == pytest.approx(0.99671, abs=0.002)  # mgcv s(bili, bs = "cr", k = 40): 0.99671
    assert run["target determinism"] > 0.99 and run["target added / alone"] < 0.01
    assert run["target max sd ratio"] < 0.1


def test_larger_basis_resolves_steps(run):
    assert run["target ~ s(bili, k=40) D^2"] == pytest.approx(0.99671, abs=0.005)  # mgcv k = 40: 0.99671
    assert 30 < run["target ~ s(bili, k=40) edf"] <= 40


def test_circular_teacher_names_bilirubin(run):
    assert run.raw("sofa_circ circular set") == "bili" and run["sofa_circ D^2"] > 0.97
    assert run["sofa_circ max sd ratio"] < 0.1


def test_noncircular_teacher_has_no_circular_set(run):
    assert run.raw("sofa_nocirc circular set") == "none" and run["sofa_nocirc D^2"] < 0.5
    ratios = [float(v) for k, v in run.values.items() if k.startswith("sofa_nocirc sd ratio of ")]
    assert len(ratios) == 4 and min(ratios) > 0.5


def test_max_rule_of_kidney_kind(run):
    assert run.raw("simulated max rule circular set") == "u, v"
    assert 0.85 < run["simulated max rule D^2"] < 0.92 and run["simulated max rule determinism"] > 0.98
    # the sd view alone would have refused
    assert run["simulated max rule sd ratio of d3"] > 0.2 and run["simulated max rule D^2 added by d3"] < 0.01


def test_table_2_5_and_binomial(run):
    assert run.raw("Table 2.5 row 1 features") == "{examiner, family, inventor}"
    for i in range(1, 5):
        assert run[f"Table 2.5 row {i} D^2"] == pytest.approx(1.0, abs=1e-9)
    assert run["Table 2.5 row 5 D^2"] == pytest.approx(run["Table 2.5 row 5 D^2 mgcv"], abs=2e-4)
    assert sorted(run.raw("binary relevance circular set").split(", ")) == [
        "cited_examiner", "cited_family", "cited_inventor"]
    assert run["binary relevance D^2"] == 1.0
    assert sorted(run.raw("distilled student circular set").split(", ")) == ["score_neural", "score_tfIdf"]
