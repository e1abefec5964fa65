"""Issue 41 items 7-8: the main commands' output fits a terminal 100 columns wide, in one number format."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mixeval import datasets
from mixeval.cli import main

WIDTH = 100
MODEL = "score ~ system + (1|item) + (1|rater) + (1|system:seed)"


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("demo")
    datasets.write_demo(folder)
    return folder


COMMANDS = {
    "fit": lambda d: ["fit", str(d / "demo_mt.csv"), MODEL],
    "significance": lambda d: ["significance", str(d / "demo_mt.csv"), MODEL],
    "reliability": lambda d: ["reliability", str(d / "demo_mt.csv"), "score ~ (1|item) + (1|rater) + (1|item:rater)",
                              "--grid", "rater=1:4"],
    "bootstrap": lambda d: ["bootstrap", str(d / "demo_scores.csv"), "--seed", "1", "--n-resamples", "500"],
    "agreement": lambda d: ["agreement", str(d / "demo_ratings.csv"), "--id", "translation", "--measurement",
                            "interval", "--seed", "1", "--n-resamples", "100"],
    "preferences": lambda d: ["preferences", str(d / "demo_votes.csv"), "--seed", "1"],
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_tables_fit_100_columns_in_one_number_format(name, demo, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    assert main(COMMANDS[name](demo)) == 0
    out = capsys.readouterr().out
    wide = [line for line in out.splitlines() if len(line) > WIDTH]
    assert wide == [], f"{len(wide)} line(s) wider than {WIDTH}: {wide[:2]}"
    assert not re.search(r"\b(inf|nan|NaN)\b", out), "Python's inf and nan (R's Inf, NA)"
    digits = [len(m.replace(".", "").lstrip("0")) for m in re.findall(r"\d+\.\d+", out)]
    assert max(digits, default=0) <= 6, "a number with more than 6 significant digits"
    assert not re.search(r"\S {2,}$", out, re.M), "an index-name row (pandas pads it with spaces)"
