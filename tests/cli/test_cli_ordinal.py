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
