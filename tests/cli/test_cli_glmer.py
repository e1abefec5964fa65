"""``mixeval fit/compare --family``: the glmer path of the CLI against lme4's glmer fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mixeval.cli import main

FIX = Path(__file__).parents[1] / "mixed" / "fixtures" / "glmer"
CASES = {c["name"]: c for c in json.loads((FIX / "glmer_fixtures.json").read_text())["fits"]}


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_fit_family_binomial_with_weights_json(capsys):
    c = CASES["binomial_proportions"]
    out = _json(capsys, ["fit", str(FIX / c["file"]), c["formula"], "--family", "binomial", "--weights", "trials", "--json"])
    assert out["family"] == "binomial" and out["link"] == "logit"
    assert out["loglik"] == pytest.approx(c["tight"]["loglik"], rel=1e-6)
    assert out["fixef"]["systemC"] == pytest.approx(c["tight"]["fixef"]["systemC"], abs=1e-5)
    assert out["aic"] == pytest.approx(c["tight"]["AIC"], rel=1e-6)


def test_compare_family_poisson_nagq(capsys):
    c = CASES["poisson_agq5"]
    out = _json(capsys, ["compare", str(FIX / c["file"]), c["formula"], "count ~ 1 + (1|item)", "--family", "poisson",
                         "--nagq", "5", "--json"])
    assert out["loglik_full"] == pytest.approx(c["tight"]["loglik"], rel=1e-6)
    assert out["df"] == 1 and out["statistic"] > 0


def test_fit_family_text_summary(capsys):
    c = CASES["binary_agq5"]
    assert main(["fit", str(FIX / c["file"]), c["formula"], "--family", "binomial", "--link", "probit"]) == 0
    text = capsys.readouterr().out
    assert "Family: binomial  ( probit )" in text and "z value" in text


def test_report_family_binomial_json(capsys, tmp_path):
    out = _json(capsys, ["report", str(FIX / "binary_crossed.csv"), "--score", "correct", "--system", "system",
                         "--item", "item", "--facet", "seed", "--family", "binomial", "--out", str(tmp_path / "r.html"),
                         "--json"])
    assert out["family"] == "binomial" and "(here, logit link" in out["scale"]
    residual = [c for c in out["variance_components"] if c["component"] == "Residual"][0]
    assert residual["variance"] == pytest.approx(3.289868, rel=1e-6)
    assert [m["system"] for m in out["means"]] == ["A", "B", "C"] and all(0 < m["prob"] < 1 for m in out["means"])
    html = (tmp_path / "r.html").read_text()
    assert "odds_ratio" in html and "pi^2/3" in html


def test_significance_and_reliability_family_binomial(capsys):
    data = str(FIX / "binary_crossed.csv")
    f = "correct ~ system + (1|item) + (1|seed)"
    sig = _json(capsys, ["significance", data, f, "--family", "binomial", "--adjust", "holm", "--scale", "difference", "--json"])
    assert sig["glrt"]["df"] == 2 and len(sig["rows"]) == 3 and all(abs(r["estimate"]) < 1 for r in sig["rows"])
    rel = _json(capsys, ["reliability", data, f, "--family", "binomial", "--n", "seed=3", "--json"])
    assert "(here, logit link" in rel["scale"]
    assert [r for r in rel["rows"] if r["component"] == "Residual"][0]["variance"] == pytest.approx(np.pi**2 / 3)


def test_significance_df_methods_family_binomial(capsys):
    """--family defaults to the Laplace fit with z tests (glmer + emmeans); --df and --reml pick others; the
    experimental upper df refuse an unbalanced design in one line."""
    data = str(FIX / "binary_crossed.csv")
    f = "correct ~ system + (1|item) + (1|seed)"
    base = ["significance", data, f, "--family", "binomial", "--adjust", "none", "--json"]
    default = _json(capsys, base)
    assert default["df_method"] == "asymptotic" and default["fit_criterion"] == "Laplace"
    assert not any("levels" in w for w in default["warnings"])  # crossed seeds cancel in the contrasts
    satt = _json(capsys, base + ["--df", "satterthwaite"])
    assert satt["df_method"] == "satterthwaite" and all("t" in r and r["df"] > 0 for r in satt["rows"])
    restricted = _json(capsys, base + ["--reml"])
    assert restricted["fit_criterion"] == "restricted Laplace"
    assert main(base + ["--df", "satterthwaite-upper"]) == 2
    assert "experimental" in capsys.readouterr().err


def test_significance_family_by_a_numeric_property_gives_slopes(tmp_path, capsys):
    """``--family binomial --by <numeric>`` compares the systems' slopes on the link scale (it was refused though
    ``--help`` promises slopes)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    d = pd.DataFrame({"item": np.repeat(np.arange(40), 6), "system": np.tile(list("ABC"), 80)})
    d["length"] = rng.normal(size=40)[d.item]
    eta = rng.normal(size=40)[d.item] + 0.5 * (d.system == "B")
    d["correct"] = (rng.random(240) < 1 / (1 + np.exp(-eta))).astype(int)
    path = tmp_path / "bin.csv"
    d.to_csv(path, index=False)
    out = _json(capsys, ["significance", str(path), "correct ~ system + (1|item)", "--family", "binomial",
                         "--by", "length", "--json"])
    assert out["trend"] == "length" and out["glrt"]["df"] == 2.0
    assert {r["system"] for r in out["slopes"]} == {"A", "B", "C"}
