"""``mixeval compare-logs``: every flag used, bad input ends in one line (exit 2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from mixeval.cli import main

DATA = Path(__file__).resolve().parents[1] / "logs" / "data"
FIXTURE = Path(__file__).resolve().parents[1] / "logs" / "fixtures" / "paired_long.csv"


def _json(capsys, argv) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _error(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    return err


def test_json_pairs_have_the_documented_fields(capsys):
    out = _json(capsys, ["compare-logs", str(DATA / "lm_eval"), "--metric", "acc", "--cluster", "passage", "--json",
                         "--no-mixed"])
    pair = out["pairs"][0]
    for key in ("model_a", "model_b", "n_items", "estimate", "se_naive", "se_cluster", "se_cr2", "df", "pvalue",
                "pvalue_adjusted", "mcnemar_pvalue", "mcnemar_midp", "mdd", "n_needed", "lower", "upper"):
        assert key in pair, key
    assert "se_mixed" not in pair and out["mixed_model"] is None  # --no-mixed
    assert out["cluster"] == "passage" and len(out["pairs"]) == 3 and len(out["leaderboard"]) == 3


def test_mixed_by_html_and_the_other_flags(capsys, tmp_path):
    html = tmp_path / "r.html"
    out = _json(capsys, ["compare-logs", str(DATA / "inspect"), "--metric", "includes", "--cluster", "passage",
                         "--by", "subject", "--level", "0.9", "--adjust", "bh", "--power", "0.9", "--alpha", "0.1",
                         "--effect", "0.1", "--equivalence", "0.2", "--noninferiority", "0.1", "--lower-is-better",
                         "--ranks", "max-t", "--seed", "3", "--glmm", "--json", "--html", str(html)])
    assert html.read_text().startswith("<!DOCTYPE html>") and out["html"] == str(html)
    pair = out["pairs"][0]
    assert pair["level"] == 0.9 and out["adjust"] == "bh" and "se_mixed" in pair and out["effect"] == 0.1
    assert out["power"] == 0.9 and out["alpha"] == 0.1 and "equivalence_pvalue" in pair
    assert "noninferiority_pvalue_a" in pair and out["higher_is_better"] is False
    assert out["rank_method"] == "max-t" and "seed 3" in out["critical_text"]
    assert "glmer_log_odds_ratio" in pair and out["mixed_model"].startswith("lmer(d ~ 1 + (1 | passage), REML)")
    assert out["by"] == "subject" and out["heterogeneity"] and out["by_pairs"]
    board = out["leaderboard"]
    assert board[0]["estimate"] <= board[-1]["estimate"]  # lower is better: the lowest mean ranks first
    assert "equivalent_to_best" in board[0]
    assert any("singular" in w for w in out["warnings"] + out["notes"])


def test_power_changes_the_items_needed(capsys):
    base = ["compare-logs", str(FIXTURE), "--metric", "score", "--json", "--no-mixed"]
    n80 = _json(capsys, base)["pairs"][0]["n_needed"]
    n95 = _json(capsys, base + ["--power", "0.95"])["pairs"][0]["n_needed"]
    assert n95 > n80


def test_text_output(capsys):
    assert main(["compare-logs", str(FIXTURE), "--metric", "correct", "--no-mixed"]) == 0
    out = capsys.readouterr().out
    assert "Paired comparisons of 3 models" in out and "Leaderboard" in out


def test_text_output_prints_glmm_effect_and_equivalence_and_fits_the_terminal(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "90")
    assert main(["compare-logs", str(FIXTURE), "--metric", "correct", "--cluster", "passage", "--glmm", "--effect",
                 "0.07", "--equivalence", "0.1"]) == 0
    out = capsys.readouterr().out
    words = " ".join(out.split())
    assert "Logistic mixed model (GLMM, glmer)" in out and "glmer_log_odds_ratio" in out
    assert "a difference of 0.07 (stated)" in words and "n_needed" in out
    assert "Equivalence (TOST)" in out and "equivalent_to_best" in out
    assert max(len(line) for line in out.splitlines() if "  " in line) <= 90


def _mismatched_copy(tmp_path: Path) -> Path:
    """The lm-eval logs with dummy-b's first question changed (another doc hash)."""
    root = tmp_path / "lm_eval"
    shutil.copytree(DATA / "lm_eval", root)
    sample = next((root / "dummy-b").glob("samples_*.jsonl"))
    lines = sample.read_text().splitlines()
    rec = json.loads(lines[0])
    rec["doc_hash"] = "0" * 64
    sample.write_text("\n".join([json.dumps(rec), *lines[1:]]) + "\n")
    return root


def test_warnings_reach_the_text_and_the_html_report(capsys, tmp_path):
    root = _mismatched_copy(tmp_path)
    html = tmp_path / "r.html"
    assert main(["compare-logs", str(root), "--no-mixed", "--drop-mismatched", "--html", str(html)]) == 0
    captured = capsys.readouterr()
    assert "left out for every model" in captured.out and captured.err == ""
    assert "left out for every model" in html.read_text()


def test_drop_mismatched(capsys, tmp_path):
    root = _mismatched_copy(tmp_path)
    err = _error(capsys, ["compare-logs", str(root), "--no-mixed"])
    assert "same id but a different question" in err and "dummy-b" in err and "--drop-mismatched" in err
    out = _json(capsys, ["compare-logs", str(root), "--no-mixed", "--drop-mismatched", "--json"])
    assert out["pairs"][0]["n_items"] == 23 and any("left out for every model" in w for w in out["warnings"])


@pytest.mark.parametrize("extra, text", [
    (["--metric", "nope"], "unknown metric 'nope'"),
    (["--metric", "acc", "--cluster", "chapter"], "no column 'chapter'"),
    (["--metric", "acc", "--by", "chapter"], "no column 'chapter'"),
    (["--metric", "acc", "--level", "95"], "--level must lie strictly between 0 and 1"),
    (["--metric", "acc", "--adjust", "tukey"], "unknown p-value adjustment method"),
    (["--metric", "acc", "--power", "1"], "--power must lie"),
    (["--metric", "acc", "--alpha", "0"], "--alpha must lie"),
    (["--metric", "acc", "--effect", "0"], "--effect must be a positive number"),
    (["--metric", "acc", "--equivalence", "-0.1"], "--equivalence must be a positive number"),
    (["--metric", "acc", "--noninferiority", "nan"], "--noninferiority must be a finite number"),
    (["--metric", "acc", "--seed", "3"], "--seed seeds the max-t integration"),
])
def test_bad_flags(capsys, extra, text):
    assert text in _error(capsys, ["compare-logs", str(DATA / "lm_eval"), "--no-mixed", *extra])


def test_bad_input(capsys, tmp_path):
    assert "one model only" in _error(capsys, ["compare-logs", str(DATA / "lm_eval" / "dummy-a")])
    assert "several metrics" in _error(capsys, ["compare-logs", str(DATA / "inspect"), "--no-mixed"])
    assert "no such file" in _error(capsys, ["compare-logs", str(tmp_path / "nope")])
    assert "does not exist" in _error(capsys, ["compare-logs", str(FIXTURE), "--metric", "score",
                                               "--html", str(tmp_path / "no" / "r.html")])
    disjoint = tmp_path / "disjoint.csv"
    pd.DataFrame({"model": ["a", "a", "b", "b"], "item": [1, 2, 3, 4], "s": [1, 0, 1, 1]}).to_csv(disjoint, index=False)
    assert "share 0 items" in _error(capsys, ["compare-logs", str(disjoint), "--metric", "s", "--no-mixed"])
    assert "single cluster" in _error(capsys, ["compare-logs", str(DATA / "helm"), "--metric", "exact_match",
                                               "--cluster", "split", "--no-mixed"])


def test_glmm_of_a_score_that_is_not_0_1_is_refused(capsys):
    err = _error(capsys, ["compare-logs", str(FIXTURE), "--metric", "score", "--glmm"])
    assert "--glmm" in err and "0/1" in err


def test_drop_errored_inspect_samples(capsys, tmp_path):
    for model in ("m1", "m2"):
        samples = [{"id": i, "epoch": 1, "input": f"q{i}", "target": "a",
                    "scores": {"match": {"value": "C" if (i + len(model) * (model == "m2")) % 3 else "I"}}}
                   for i in range(8)]
        if model == "m2":
            samples[5] = {"id": 5, "epoch": 1, "input": "q5", "target": "a", "error": {"message": "timeout"}}
        (tmp_path / f"{model}.json").write_text(json.dumps({"version": 2, "status": "success",
                                                             "eval": {"model": model, "task": "t"}, "samples": samples}))
    err = _error(capsys, ["compare-logs", str(tmp_path), "--no-mixed"])
    assert "ended in an error (timeout)" in err and "--drop-errored" in err
    out = _json(capsys, ["compare-logs", str(tmp_path), "--no-mixed", "--drop-errored", "--json"])
    assert out["pairs"][0]["n_items"] == 7 and any("ended in an error and are left out" in w for w in out["warnings"])
