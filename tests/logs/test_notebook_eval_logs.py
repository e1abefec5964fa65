"""notebooks/eval_logs: the numbers it prints equal compare_logs on the same logs, executed and as committed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mixeval.logs import compare_logs

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module", params=["executed", "committed"])
def run(request, notebook_runner):
    return notebook_runner(request, "eval_logs", needs_data=False)


def _shown(text: str, label: str) -> float:
    m = re.search(rf"^{re.escape(label)} = (\S+)$", text, flags=re.M)
    assert m, label
    return float(m.group(1))


def test_executes_with_its_figures(run):
    assert run.images == 2 and not run.errors


def test_printed_numbers_equal_the_comparison(run):
    lm = compare_logs(DATA / "lm_eval", metric="acc", cluster="passage", mixed=False).pairs.iloc[2]
    for col in ("estimate", "se_unpaired", "se_cr2", "mcnemar_pvalue"):
        assert _shown(run.text, f"lm-eval dummy-b - dummy-c {col}") == pytest.approx(lm[col], rel=1e-5)
    ins = compare_logs(DATA / "inspect", metric="match", cluster="passage", mixed=False).pairs
    row = ins[(ins["model_a"] == "mockllm/strong") & (ins["model_b"] == "mockllm/weak")].iloc[0]
    for col in ("estimate", "se_naive", "se_cr2", "df", "n_needed"):
        assert _shown(run.text, f"inspect mockllm/strong - mockllm/weak {col}") == pytest.approx(row[col], rel=1e-5)
    assert _shown(run.text, "inspect mockllm/strong - mockllm/weak se_mixed") > 0
