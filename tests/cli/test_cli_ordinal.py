"""``mixeval fit/compare --family ordinal``: the clmm path of the CLI against ordinal::clmm's fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mixeval.cli import main

FIX = Path(__file__).parents[1] / "mixed" / "fixtures" / "clmm"
CASES = {c["name"]: c for c in json.loads((FIX / "clmm_fixtures.json").read_text())["fits"]}


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", ["wine", "wine_probit"])
def test_fit_family_ordinal_json(capsys, name):
    c = CASES[name]
    argv = ["fit", str(FIX / c["file"]), c["formula"], "--family", "ordinal", "--json"]
    out = _json(capsys, argv + (["--link", "probit"] if c["link"] == "probit" else []))
    assert out["family"] == "ordinal" and out["link"] == c["link"]
    assert out["loglik"] == pytest.approx(c["loglik"], rel=1e-6)
    assert list(out["thresholds"]) == ["1|2", "2|3", "3|4", "4|5"]
    for k, v in c["alpha"].items():
        assert out["thresholds"][k] == pytest.approx(v, abs=1e-4)
    for k, v in c["beta"].items():
        assert out["fixef"][k] == pytest.approx(v, abs=1e-4)
    assert out["varcorr"]["judge"] == pytest.approx(c["variances"]["judge"], abs=1e-3)


def test_compare_family_ordinal(capsys):
    c = CASES["wine"]
    out = _json(capsys, ["compare", str(FIX / c["file"]), c["formula"], "rating ~ temp + (1|judge)", "--family",
                         "ordinal", "--json"])
    assert out["df"] == 1 and out["statistic"] > 10


def test_weights_refused_in_one_line(capsys):
    c = CASES["wine"]
    assert main(["fit", str(FIX / c["file"]), c["formula"], "--family", "ordinal", "--weights", "judge"]) == 2
    assert "--weights is not available with --family ordinal" in capsys.readouterr().err


PROFILES = json.loads((FIX / "clmm_profile_fixtures.json").read_text())


def test_confint_family_ordinal_profile_equals_ordinals(capsys):
    """``mixeval confint --family ordinal``: the profile intervals of tests/mixed/test_clmm_model.py (ordinal's
    signed root deviance, fixtures of make_clmm_profile_fixtures.R) within 1e-4."""
    c = PROFILES["wine_clmm_logit"]
    out = _json(capsys, ["confint", str(FIX / "wine.csv"), c["formula"], "--family", "ordinal", "--json"])
    assert out["method"] == "profile"
    names = {"tw": "tempwarm", "cy": "contactyes", "sd_judge": "sd_(Intercept)|judge"}
    for k, (lo, hi) in c["tight"].items():
        assert out["intervals"][names[k]] == pytest.approx([lo, hi], abs=1e-4)
    assert list(out["intervals"])[1:5] == ["1|2", "2|3", "3|4", "4|5"]


def test_confint_family_ordinal_boot_and_wald(capsys):
    argv = ["confint", str(FIX / "wine.csv"), "rating ~ temp + (1|judge)", "--family", "ordinal", "--json"]
    boot = _json(capsys, argv + ["--method", "boot", "--nsim", "8", "--seed", "3"])
    assert boot["n_resamples"] == 8 and boot["seed"] == 3 and len(boot["intervals"]) == 6
    wald = _json(capsys, argv + ["--method", "wald", "--level", "0.9"])
    assert wald["level"] == 0.9 and wald["intervals"]["tempwarm"][0] < wald["estimate"]["tempwarm"]


def test_reliability_family_ordinal_with_bootstrap_intervals(capsys):
    """``mixeval reliability --family ordinal --ci``: phi on the latent scale with parametric-bootstrap intervals
    (ratings drawn from the clmm fit and refitted), the same seed the same interval."""
    argv = ["reliability", str(FIX / "wine.csv"), "rating ~ (1|bottle) + (1|judge)", "--item", "bottle", "--family",
            "ordinal", "--n", "judge=3", "--grid", "judge=1:4", "--ci", "--nsim", "12", "--seed", "5", "--json"]
    out = _json(capsys, argv)
    assert out["phi_ci"][0] <= out["phi"] <= out["phi_ci"][1] and len(out["dstudy"]) == 4  # judge = 1..4
    assert _json(capsys, argv)["phi_ci"] == out["phi_ci"]
