"""Warnings on the command line and in the reports it writes: no progress bar on a pipe, each warning on its own
line in the command's flags, and every HTML report carrying the warnings and its provenance."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mixeval.cli import main

FIXTURE = Path(__file__).resolve().parents[1] / "logs" / "fixtures" / "paired_long.csv"


@pytest.fixture
def singular_log(tmp_path) -> str:
    """20 items x 2 systems x 3 raters whose rater variance is estimated as 0 (a singular fit)."""
    rng = np.random.default_rng(2)
    df = pd.DataFrame([(i, s, r) for i in range(20) for s in ("A", "B") for r in ("r1", "r2", "r3")],
                      columns=["item", "system", "rater"])
    df["score"] = rng.normal(size=20)[df["item"]] + 0.4 * (df["system"] == "B") + rng.normal(0, 0.5, len(df))
    path = tmp_path / "log.csv"
    df.to_csv(path, index=False)
    return str(path)


@pytest.fixture
def few_seeds_log(tmp_path) -> str:
    """Three seeds per system that carry the whole variance of the contrast (the few-levels warning), on more than
    3,000 rows (where emmeans' rule, and a Study's default, is z)."""
    rng = np.random.default_rng(3)
    df = pd.DataFrame([(i, s, k) for i in range(520) for s in "AB" for k in range(3)], columns=["item", "system", "seed"])
    seed_effect = 2 * rng.normal(size=(2, 3))
    df["score"] = (rng.normal(size=520)[df.item] + seed_effect[(df.system == "B").astype(int), df.seed]
                   + rng.normal(size=len(df)))
    path = tmp_path / "few.csv"
    df.to_csv(path, index=False)
    return str(path)


def test_piped_output_has_no_progress_bar_and_no_glued_warning(capsys, singular_log, tmp_path, monkeypatch):
    """Standard error is not a terminal here (pytest captures it): no bar, even one that would show at once."""
    import mixeval._progress as progress_module

    shown = progress_module.tqdm
    monkeypatch.setattr(progress_module, "tqdm", lambda *a, **k: shown(*a, **{**k, "delay": 0, "mininterval": 0}))
    out = tmp_path / "r.html"
    assert main(["report", singular_log, "--score", "score", "--system", "system", "--item", "item",
                 "--facet", "rater", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "\r" not in err and "it/s" not in err and "report:" not in err
    lines = err.splitlines()
    assert lines and all(line.startswith("warning: ") for line in lines)
    assert any("boundary (singular) fit" in line for line in lines)


def test_report_html_carries_the_warnings_and_its_provenance(capsys, singular_log, tmp_path):
    out = tmp_path / "r.html"
    assert main(["report", singular_log, "--score", "score", "--system", "system", "--item", "item",
                 "--facet", "rater", "--out", str(out)]) == 0
    page = out.read_text()
    assert re.search(r'class="box warning"><b>Warning:</b>boundary \(singular\) fit', page)
    for fact in (f"data: {singular_log}", "rows: 120", "command: mixeval report", "mixeval: ", "date: "):
        assert fact in page


def test_a_python_argument_in_a_warning_is_said_as_the_commands_flag(capsys, few_seeds_log):
    """The few-levels warning advises ``df='satterthwaite'`` in Python; ``mixeval significance`` has ``--df``."""
    assert main(["significance", few_seeds_log, "score ~ system + (1|item) + (1|system:seed)"]) == 0
    err = capsys.readouterr().err
    assert "warning: the variance component 'system:seed' has 6 levels" in err
    assert "--df satterthwaite" in err and "df='" not in err


def test_preferences_html_states_its_data_command_and_warnings(capsys, tmp_path):
    votes = pd.DataFrame({"model_a": ["a", "b", "b", "c", "a", "c"] * 10, "model_b": ["b", "a", "c", "b", "c", "a"] * 10,
                          "winner": ["model_a", "model_b"] * 30})  # a beats b beats c, always: separation
    path, html = tmp_path / "votes.csv", tmp_path / "board.html"
    votes.to_csv(path, index=False)
    assert main(["preferences", str(path), "--seed", "1", "--html", str(html), "--iid-resamples", "0"]) == 0
    captured = capsys.readouterr()
    page = html.read_text()
    assert "warning: separation" in captured.err and "warning: separation" not in captured.out
    assert '<h2>Warnings</h2>' in page and "separation: 60 of 60 votes are won" in page
    for fact in (f"data: {path}", "rows: 60", "command: mixeval preferences", "mixeval: ", "date: "):
        assert fact in page


def test_compare_logs_html_states_its_data_and_command(capsys, tmp_path):
    html = tmp_path / "logs.html"
    assert main(["compare-logs", str(FIXTURE), "--metric", "score", "--no-mixed", "--html", str(html)]) == 0
    page = html.read_text()
    assert f"data: {FIXTURE}" in page and "command: mixeval compare-logs" in page
