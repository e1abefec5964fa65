"""notebooks/meta_evaluation: what it prints, executed from its source and as committed."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module", params=["executed", "committed"])
def run(request, notebook_runner):
    return notebook_runner(request, "meta_evaluation", needs_data=False)


def test_meta_notebook_runs_and_prints_the_documented_numbers(run):
    assert not run.errors
    assert run.images == 2  # local accuracy per system, accuracy-coverage curves
    text = run.text
    assert "wer        0.975  0.575    0.475" in text
    assert "A wer   F =   35.200  df = (2, 38)  p = 2.24e-09" in text
    assert "A: AUC = 0.8000  a = 0.99  b = 0.99  n = 0  DiSCA = 0.6734" in text
    assert "B: AUC = 0.7350  a = 0.9  b = 0.99  n = 0  DiSCA = 0.7071" in text
    assert "NiDMA = 0.5328" in text
