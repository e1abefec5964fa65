"""notebooks/preferences_arena: the numbers it prints, executed from its source and as committed."""

from __future__ import annotations

import re

import pytest


@pytest.fixture(scope="module", params=["executed", "committed"])
def run(request, notebook_runner):
    return notebook_runner(request, "preferences_arena", needs_data=False)


def _value(text: str, label: str) -> float:
    return float(re.search(rf"^{re.escape(label)} = (\S+)$", text, flags=re.M).group(1))


def test_executes_with_the_figure(run):
    assert run.images == 1 and not run.errors


def test_iid_intervals_too_narrow_and_rank_sets(run):
    text = run.text
    assert _value(text, "median width ratio mixed / iid bootstrap") > 1.5
    assert _value(text, "iid intervals containing the truth") < _value(text, "mixed intervals containing the truth")
    assert _value(text, "naive rank sets covering the true rank") < 1.0
    assert _value(text, "mixed rank sets covering the true rank") == 1.0
    assert _value(text, "votes to separate neighbours, fitted judge effects") == float("inf")
    assert _value(text, "replicates") == 80


def test_coverage_study_read_from_the_committed_results(run):
    import json
    from pathlib import Path

    sim = json.loads((Path(__file__).resolve().parents[2] / "benchmarks" / "results"
                      / "sim_preferences_coverage.json").read_text())["summary"]
    # the notebook's text quotes these: mixed within 2 Monte-Carlo SEs of 0.95, fixed far below
    assert abs(sim["mixed_cover"]["coverage"] - 0.95) < 2 * sim["mixed_cover"]["mc_se"]
    assert sim["fixed_wald_cover"]["coverage"] < 0.6 and sim["iid_cover"]["coverage"] < 0.6
    assert "0.925" in run.text
