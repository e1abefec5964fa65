"""notebooks/eval_logs: the demo's harness logs compared as compare_logs compares them, the numbers its text states,
and committed outputs that show what a fresh run shows; it runs with nothing but mixeval installed."""

from __future__ import annotations

import re

import numpy as np
import pytest

from mixeval.datasets import write_demo
from mixeval.logs import compare_logs

#: run in the notebook's kernel after its last cell: one ``label = value`` line per number checked below
PROBE = """
def put(label, value):
    print(f"{label} = {float(value)!r}")

for (a, b), row in pairs.iterrows():
    for column in ("estimate", "lower", "upper", "pvalue_adjusted", "se_unpaired", "se_naive", "se_cr2", "mdd",
                   "n_needed"):
        put(f"{a} - {b} {column}", row[column])
for _, row in res.leaderboard.iterrows():
    for column in ("estimate", "lower", "upper", "rank_lower", "rank_upper"):
        put(f"{row['model']} {column}", row[column])
put("rows", len(logs))
"""


@pytest.fixture(scope="module", params=["executed", "committed"])
def run(request, notebook_runner):
    return notebook_runner(request, "eval_logs", needs_data=False, probe=PROBE)


@pytest.fixture(scope="module")
def expected(tmp_path_factory):
    logs = write_demo(tmp_path_factory.mktemp("demo"))["demo_logs"]
    return compare_logs(logs, metric="acc", cluster="passage")


def test_executes_with_its_figures_and_the_committed_outputs_are_a_fresh_run(run):
    assert run.images == 2 and not run.errors
    assert not run.stale, "rebuild: python3 notebooks/build.py eval_logs\n" + "\n".join(run.stale)


def test_the_numbers_are_compare_logs_on_the_demo_logs(run, expected):
    assert run["rows"] == 600
    for _, row in expected.pairs.iterrows():
        for column in ("estimate", "lower", "upper", "pvalue_adjusted", "se_unpaired", "se_cr2", "n_needed"):
            assert run[f"{row.model_a} - {row.model_b} {column}"] == pytest.approx(row[column], rel=1e-9)


def test_the_conclusion_states_the_numbers_and_the_truth_of_the_simulation(run):
    conclusion = run.nb.cells[-1].source
    assert conclusion.startswith("## Conclusion")
    shown = {float(x) for x in re.findall(r"-?\d+\.\d+", conclusion)}
    for pair in ("model-a - model-c", "model-a - model-b", "model-b - model-c"):
        for column in ("estimate", "lower", "upper"):
            assert round(run[f"{pair} {column}"], 3) in shown, (pair, column)
    assert round(run["model-a - model-b pvalue_adjusted"], 3) in shown
    # the truth: marginal accuracies of logistic(m + N(0, 0.8^2 + 1)), m = 1.2, 0.7, 0.6 (Gauss-Hermite)
    x, w = np.polynomial.hermite_e.hermegauss(60)
    truth = {m: float(w @ (1 / (1 + np.exp(-(effect + np.sqrt(1.64) * x))))) / w.sum()
             for m, effect in (("model-a", 1.2), ("model-b", 0.7), ("model-c", 0.6))}
    assert {round(v, 2) for v in truth.values()} <= shown
    for model, value in truth.items():
        assert run[f"{model} lower"] < value < run[f"{model} upper"]
    a_c = truth["model-a"] - truth["model-c"]
    assert round(a_c, 3) in shown and not run["model-a - model-c lower"] < a_c  # "just misses its own"
    assert run["model-a rank_lower"] == 1 and run["model-c rank_upper"] == 3
