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


def test_each_interval_against_its_target(run):
    text = run.text
    assert 0.85 < _value(text, "attenuation population / conditional") < 1.0
    assert _value(text, "median width ratio population-averaged / iid bootstrap") > 1.5
    assert (_value(text, "iid intervals containing the population truth")
            < _value(text, "population-averaged intervals containing the population truth"))
    assert (_value(text, "iid intervals containing the population truth")
            < _value(text, "iid intervals containing these judges' truth"))
    assert _value(text, "naive rank sets covering the true rank") < 1.0
    assert _value(text, "mixed rank sets covering the true rank") == 1.0
    assert re.search(r"^votes to separate neighbours, no judge effects = \d+$", text, flags=re.M)  # whole votes
    assert "votes to separate neighbours, fitted judge effects = never" in text


def test_coverage_over_many_logs(run):
    text = run.text
    assert _value(text, "replicates") == 20
    # 120 intervals each: Monte-Carlo SE about 0.02-0.05 with the correlation within a log
    assert _value(text, "fixed model coverage for new judges") < 0.8 < _value(text, "mixed model coverage for new judges")
