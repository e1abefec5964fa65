"""notebooks/meta_evaluation: its numbers, read from its variables after a fresh run of its source, and its
committed outputs, which must show what that run shows.

The notebook's tables are computed on the generated text set; each number here is recomputed from the
pairs with the closed form it stands for (a share of correctly ordered pairs) or pinned to its documented
value (the tests of mixeval.meta check the estimators themselves).
"""

from __future__ import annotations

import pytest


#: run in the notebook's kernel after its last cell: the numbers checked below, one ``label = value`` line each
PROBE = """
def put(label, value):
    print(f"{label} = {float(value)!r}")

for m, row in matrix.iterrows():
    for sub, v in row.items():
        put(f"local accuracy {m} {sub}", v)
for m, row in rmatrix.iterrows():
    for sub, v in row.items():
        put(f"local accuracy {m} {sub} users", v)
for m, row in table_a.iterrows():
    for col, v in row.items():
        put(f"hypothesis A {m} {col}", v)
put("hypothesis B reversal statistic R", tb.statistic)
put("hypothesis B p-value", tb.pvalue)
put("hypothesis B Kendall W", tb.estimate)
for name, row in selective.iterrows():
    for col, v in row.items():
        put(f"system {name} {col}", v)
put("system B NiDMA", score)
"""


@pytest.fixture(scope="module", params=["executed", "committed"])
def run(request, notebook_runner):
    return notebook_runner(request, "meta_evaluation", needs_data=False, probe=PROBE)


def test_meta_notebook_runs_with_its_figures_and_the_committed_outputs_are_a_fresh_run(run):
    assert not run.errors
    assert run.images == 2  # local accuracy per system, accuracy-coverage curves
    assert not run.stale, "rebuild: python3 notebooks/build.py meta_evaluation\n" + "\n".join(run.stale)
    assert run.nb.cells[-1].source.startswith("## Conclusion")


def test_local_accuracy_table(run):
    # shares of 40 pairs (one per context)
    assert run["local accuracy wer faithful"] == pytest.approx(39 / 40)
    assert run["local accuracy wer terse"] == pytest.approx(23 / 40)
    assert run["local accuracy wer verbose"] == pytest.approx(19 / 40)
    assert run["local accuracy chrf verbose"] == pytest.approx(35 / 40)
    assert run["local accuracy rr light users"] == pytest.approx(0.825)
    assert run["local accuracy ap heavy users"] == 1.0


def test_hypotheses_a_and_b(run):
    assert run["hypothesis A wer F"] == pytest.approx(35.2, abs=5e-4)
    assert run["hypothesis A wer df"] == 2 and run["hypothesis A wer df denominator"] == 38
    assert run["hypothesis A wer p-value"] == pytest.approx(2.24e-09, rel=5e-3)
    assert 0.04 < run["hypothesis A f1 p-value"] < 0.05 and run["hypothesis A chrf p-value"] > 0.1
    assert run["hypothesis B reversal statistic R"] == pytest.approx(1.0)
    # a bootstrap p-value over 1,999 resamples (seeded): (k + 1) / 2000, here k = 810
    assert run["hypothesis B p-value"] * 2000 == pytest.approx(811, abs=1e-6)
    assert run["hypothesis B Kendall W"] == pytest.approx(0.5)


def test_disca_table(run):
    # Mishra et al.'s case 1: A has the higher AUC, B the higher DiSCA
    assert run["system A AUC"] == pytest.approx(0.8) and run["system B AUC"] == pytest.approx(0.735)
    assert (run["system A a"], run["system A b"], run["system B a"], run["system B b"]) == (0.99, 0.99, 0.9, 0.99)
    # DiSCA = x / a + y / b with x = y = 1/3 and no fluctuation (n = 0)
    assert run["system A fluctuations n"] == 0 and run["system B fluctuations n"] == 0
    assert run["system A DiSCA"] == pytest.approx((1 / 0.99 + 1 / 0.99) / 3, rel=1e-9)
    assert run["system B DiSCA"] == pytest.approx((1 / 0.9 + 1 / 0.99) / 3, rel=1e-9)
    assert run["system B NiDMA"] == pytest.approx(0.5328, abs=5e-5)
