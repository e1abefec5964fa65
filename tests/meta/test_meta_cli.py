"""`mixeval meta selective` and `mixeval meta local` command lines."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mixeval.cli import main


def _run(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_selective_json_hand_computed(tmp_path, capsys):
    path = tmp_path / "answers.csv"
    pd.DataFrame({"maxprob": [0.9, 0.8, 0.8, 0.6], "ok": [True, True, False, True]}).to_csv(path, index=False)
    code, out, _ = _run(["meta", "selective", str(path), "--confidence", "maxprob", "--correct", "ok", "--json"], capsys)
    assert code == 0
    res = json.loads(out)
    assert set(res) >= {"auc", "a", "b", "n", "disca"}
    assert res["auc"] == pytest.approx(0.25 + 0.5 * 2 / 3 + 0.25 * 0.75, abs=1e-12)
    assert (res["a"], res["b"], res["n"]) == (0.8, 0.9, 1)
    assert res["disca"] == pytest.approx((1 / 0.8 + 1 / 0.9 - (1 / 12) / 0.2) / 3, abs=1e-12)


def test_selective_weights_tolerance_and_text_output(tmp_path, capsys):
    path = tmp_path / "answers.csv"
    pd.DataFrame({"c": [0.9, 0.9, 0.5, 0.5], "y": ["false", "true", "true", "true"]}).to_csv(path, index=False)
    argv = ["meta", "selective", str(path), "--confidence", "c", "--correct", "y",
            "--tolerance", "0.5", "--weights", "0.5,0.25,0.25", "--json"]
    code, out, _ = _run(argv, capsys)
    res = json.loads(out)
    assert res["disca"] == pytest.approx(0.5 / 0.9 + 0.25 / 0.5 - 0.25 * 0.625, rel=1e-12)
    assert res["weights"] == [0.5, 0.25, 0.25] and res["tolerance"] == 0.5
    code, out, _ = _run(argv[:-1], capsys)
    assert code == 0 and "DiSCA" in out


@pytest.mark.parametrize(
    "frame, extra, message",
    [
        ({"c": [0.5, 1.5], "y": [1, 0]}, [], "[0, 1]"),
        ({"c": [0.5, 0.4], "y": [1, 0]}, ["--weights", "0.5,0.5,0.5"], "sum to 1"),
        ({"c": [0.5, 0.4], "y": [1, 0]}, ["--weights", "0.33,0.33,0.33"], "sums to 0.99"),
        ({"c": [0.5, 0.4], "y": ["maybe", "no"]}, [], "1/0 or True/False"),
        ({"c": [0.5, np.nan], "y": [1, 0]}, [], "missing"),
        ({"conf": [0.5, 0.4], "y": [1, 0]}, [], "available columns"),
    ],
)
def test_selective_errors_are_clean(tmp_path, capsys, frame, extra, message):
    path = tmp_path / "bad.csv"
    pd.DataFrame(frame).to_csv(path, index=False)
    code, out, err = _run(["meta", "selective", str(path), "--confidence", "c", "--correct", "y", *extra], capsys)
    assert code == 2 and out == ""
    assert "error:" in err and message in err


def test_local_json(tmp_path, capsys):
    from mixeval.meta import chrf, example_translations, score_pairs, word_error_rate

    pairs = score_pairs(
        example_translations(),
        {"wer": word_error_rate, "chrf": chrf},
        context="reference",
        output="hypothesis",
        subset="system",
        context_id="context",
        random_state=1,
    )
    path = tmp_path / "pairs.csv"
    pairs.rename(columns={"subset": "system", "perturbed": "score_perturbed"}).to_csv(path, index=False)
    argv = ["meta", "local", str(path), "--context", "context", "--subset", "system", "--metric", "metric",
            "--score", "score", "--perturbed", "score_perturbed", "--lower-is-better", "wer",
            "--n-resamples", "199", "--json"]
    code, out, _ = _run(argv, capsys)
    assert code == 0
    res = json.loads(out)
    rows = {(r["metric"], r["subset"]): r for r in res["rows"]}
    assert rows[("wer", "verbose")]["accuracy"] == pytest.approx(0.475, abs=1e-12)
    assert rows[("chrf", "faithful")]["accuracy"] == pytest.approx(0.975, abs=1e-12)
    assert res["hypothesis_a"]["wer"]["statistic"] == pytest.approx(35.2, abs=1e-9)
    assert 0 < res["hypothesis_b"]["pvalue"] <= 1
    p_wer, p_chrf = res["hypothesis_a"]["wer"]["pvalue"], res["hypothesis_a"]["chrf"]["pvalue"]
    assert res["hypothesis_a"]["wer"]["pvalue_holm"] == pytest.approx(2 * p_wer, rel=1e-12)  # the smaller p
    assert res["hypothesis_a"]["chrf"]["pvalue_holm"] == pytest.approx(max(2 * p_wer, p_chrf), rel=1e-12)
    code, out, _ = _run(argv[:-1], capsys)
    assert code == 0 and "hypothesis A, wer" in out
    code, out, _ = _run([*argv, "--ci", "t"], capsys)
    row = {(r["metric"], r["subset"]): r for r in json.loads(out)["rows"]}[("wer", "verbose")]
    assert row["lower"] == pytest.approx(0.475 - stats.t.ppf(0.975, 39) * row["se"], rel=1e-12)
    code, _, err = _run([*argv[:-1], "--lower-is-better", "ter"], capsys)
    assert code == 2 and "lower_is_better" in err


def test_local_single_subset_is_a_clean_error(tmp_path, capsys):
    path = tmp_path / "pairs.csv"
    pd.DataFrame({"x": [1, 2], "q": ["a", "a"], "m": ["f", "f"], "s": [1.0, 0.0], "p": [0.5, 0.5]}).to_csv(path, index=False)
    argv = ["meta", "local", str(path), "--context", "x", "--subset", "q", "--metric", "m", "--score", "s", "--perturbed", "p"]
    code, _, err = _run(argv, capsys)
    assert code == 2 and "single subset" in err
