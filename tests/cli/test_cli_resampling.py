"""Command line: mixeval bootstrap / permutation / agreement."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from mixeval.agreement import krippendorff_alpha, scotts_pi
from mixeval.cli import main
from mixeval.resampling import paired_bootstrap_test, permutation_test


@pytest.fixture()
def scores_csv(tmp_path):
    rng = np.random.default_rng(0)
    base = rng.normal(0.4, 0.1, size=150)
    df = pd.DataFrame({"item": [f"s{i}" for i in range(150)], "base": base,
                       "A": base + 0.02 + rng.normal(0, 0.05, 150), "B": base + rng.normal(0, 0.05, 150)})
    path = tmp_path / "scores.csv"
    df.to_csv(path, index=False)
    return path, df


def _json(capsys):
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("command", ["bootstrap", "permutation"])
def test_two_systems_json_matches_library(command, scores_csv, capsys):
    path, df = scores_csv
    assert main([command, str(path), "--systems", "A", "base", "--seed", "3", "--n-resamples", "2000",
                 "--alternative", "greater", "--json"]) == 0
    out = _json(capsys)
    fn = paired_bootstrap_test if command == "bootstrap" else permutation_test
    ref = fn(df["A"], df["base"], alternative="greater", n_resamples=2000, random_state=3)
    assert out["statistic"] == pytest.approx(ref.statistic, rel=1e-12)
    assert out["pvalue"] == pytest.approx(ref.pvalue, rel=1e-12)
    assert out["system_a"] == "A" and out["system_b"] == "base"
    if command == "bootstrap":
        assert out["confidence_interval"] == pytest.approx([ref.confidence_interval.low,
                                                            ref.confidence_interval.high])


def test_many_systems_and_long_format(scores_csv, tmp_path, capsys):
    path, df = scores_csv
    assert main(["permutation", str(path), "--baseline", "base", "--seed", "1", "--n-resamples", "500",
                 "--json"]) == 0
    wide = _json(capsys)
    assert [(c["system_a"], c["system_b"]) for c in wide["comparisons"]] == [("A", "base"), ("B", "base")]
    assert all(c["pvalue_adjusted"] >= c["pvalue"] for c in wide["comparisons"])
    long = df.melt(id_vars="item", var_name="system", value_name="ter")
    lpath = tmp_path / "long.csv"
    long.to_csv(lpath, index=False)
    assert main(["permutation", str(lpath), "--item", "item", "--system", "system", "--score", "ter",
                 "--baseline", "base", "--seed", "1", "--n-resamples", "500", "--json"]) == 0
    assert _json(capsys)["comparisons"] == wide["comparisons"]
    assert main(["bootstrap", str(path), "--seed", "1", "--n-resamples", "300"]) == 0
    assert "pvalue_adjusted" in capsys.readouterr().out


def test_errors_exit_with_code_2(scores_csv, capsys):
    path, _ = scores_csv
    assert main(["bootstrap", str(path), "--systems", "A", "nope"]) == 2
    assert "nope" in capsys.readouterr().err
    assert main(["permutation", str(path) + ".missing"]) == 2


def test_agreement_wide_json_book_example(tmp_path, capsys):
    ratings = pd.DataFrame({"id": range(10), "A": [1, 1, 0, 0, 0, 0, 0, 0, 0, 0],
                            "B": [0, 1, 1, 0, 0, 1, 0, 1, 0, 0]})
    path = tmp_path / "r.csv"
    ratings.to_csv(path, index=False)
    assert main(["agreement", str(path), "--id", "id", "--json", "--level", "0"]) == 0
    out = _json(capsys)
    assert out["alpha"] == pytest.approx(1 - 19 * 8 / (2 * 14 * 6))
    assert out["pi"] == pytest.approx(scotts_pi(ratings[["A", "B"]], level=None).value)
    assert out["kappa"] is not None and out["alpha_ci"] is None


def test_agreement_long_many_raters_and_zero_variation(tmp_path, capsys):
    rng = np.random.default_rng(1)
    wide = pd.DataFrame(rng.integers(1, 5, size=(30, 3)).astype(float), columns=["r1", "r2", "r3"])
    wide.iloc[3, 1] = np.nan
    long = wide.reset_index().melt(id_vars="index", var_name="rater", value_name="score").dropna()
    path = tmp_path / "long.csv"
    long.to_csv(path, index=False)
    assert main(["agreement", str(path), "--unit", "index", "--rater", "rater", "--value", "score",
                 "--measurement", "interval", "--seed", "2", "--n-resamples", "300", "--json"]) == 0
    out = _json(capsys)
    ref = krippendorff_alpha(wide, "interval", level=None)
    assert out["alpha"] == pytest.approx(ref.value, rel=1e-12)
    assert out["kappa"] is None and out["pi"] is None and len(out["alpha_ci"]) == 2
    flat = tmp_path / "flat.csv"
    pd.DataFrame({"a": [0] * 5, "b": [0] * 5}).to_csv(flat, index=False)
    assert main(["agreement", str(flat), "--json", "--level", "0"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["alpha"] is None
    assert "warning: Krippendorff's alpha is undefined" in captured.err  # one line on stderr, not a Python warning
    assert main(["agreement", str(flat), "--if-undefined", "zero", "--json", "--level", "0"]) == 0
    assert _json(capsys)["alpha"] == 0.0


def test_exact_permutation_flag(tmp_path, capsys):
    d = np.array([0.31, -0.17, 0.52, 0.08, 0.23, -0.05, 0.44, 0.12])
    path = tmp_path / "small.csv"
    pd.DataFrame({"x": d + 1.0, "y": np.ones(8)}).to_csv(path, index=False)
    assert main(["permutation", str(path), "--exact", "--json"]) == 0
    out = _json(capsys)
    assert out["pvalue"] == pytest.approx(permutation_test(d + 1.0, np.ones(8), exact=True).pvalue)
    assert out["details"]["n_resamples"] == 256


@pytest.mark.parametrize("command", ["bootstrap", "permutation"])
def test_unseeded_run_reports_its_seed_and_repeats(command, scores_csv, capsys):
    # without --seed a fresh seed is drawn and reported; --seed with it repeats the run exactly
    path, _ = scores_csv
    args = [command, str(path), "--systems", "A", "base", "--n-resamples", "500", "--json"]
    assert main(args) == 0
    first = _json(capsys)
    assert isinstance(first["seed"], int) and first["seed"] >= 0
    assert main(args + ["--seed", str(first["seed"])]) == 0
    again = _json(capsys)
    assert again == first
    assert main(args[:-1]) == 0  # text output names the seed too
    assert "seed: " in capsys.readouterr().out
    assert main(args + ["--seed", "-1"]) == 2
    assert "--seed must be a non-negative integer" in capsys.readouterr().err


def test_agreement_unseeded_reports_its_seed(tmp_path, capsys):
    rng = np.random.default_rng(4)
    path = tmp_path / "wide.csv"
    pd.DataFrame(rng.integers(1, 4, size=(25, 2)), columns=["r1", "r2"]).to_csv(path, index=False)
    args = ["agreement", str(path), "--measurement", "ordinal", "--n-resamples", "200", "--json"]
    assert main(args) == 0
    first = _json(capsys)
    assert main(args + ["--seed", str(first["seed"])]) == 0
    assert _json(capsys) == first
