"""``mixeval significance``: --df on every row, slopes for a numeric --by, argument errors naming the flag."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mixeval.cli import main

FIXTURES = Path(__file__).parent / "fixtures"
UNBALANCED = str(FIXTURES / "unbalanced_crossed.csv")
CASES = {c["name"]: c for c in json.loads((FIXTURES / "df_trend_fixtures.json").read_text())["cases"]}


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("dfm", ["kenward-roger", "satterthwaite"])
def test_df_on_each_row(capsys, dfm):
    out = _json(capsys, ["significance", UNBALANCED, "y ~ sys + (1|item) + (1|rater)", "--df", dfm, "--json"])
    ref = CASES["unbalanced_sys"]["results"][dfm]["contrasts"]["tukey"]
    assert out["df_method"] == dfm
    np.testing.assert_allclose([r["df"] for r in out["rows"]], [r["df"] for r in ref], rtol=2e-5)
    np.testing.assert_allclose([r["pvalue"] for r in out["rows"]], [r["p.value"] for r in ref], atol=1e-6)
    assert all("effect_size" in r and "t" in r for r in out["rows"])


def test_numeric_by_gives_slopes(capsys):
    out = _json(capsys, ["significance", UNBALANCED, "y ~ sys + (1|item) + (1|rater)", "--by", "x", "--json"])
    ref = CASES["unbalanced_trend_x"]
    assert out["trend"] == "x" and out["glrt"]["df"] == 2
    assert out["glrt"]["statistic"] == pytest.approx(ref["glrt"]["chisq"], rel=1e-5)
    np.testing.assert_allclose([r["trend"] for r in out["slopes"]],
                               [r["estimate"] for r in ref["results"]["asymptotic"]["means"]], rtol=1e-5)
    assert main(["significance", UNBALANCED, "y ~ sys + (1|item) + (1|rater)", "--by", "x"]) == 0
    text = capsys.readouterr().out
    assert "Slope of each sys in x" in text and "effect_size = estimate / residual SD" in text


def test_argument_errors_name_the_flag(capsys):
    assert main(["significance", UNBALANCED, "y ~ sys + (1|item)", "--by", "x", "--cuts", "abc"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--cuts" in err and "'abc'" in err and len(err.splitlines()) == 1
    assert main(["significance", UNBALANCED, "y ~ sys + (1|item)", "--by", "x", "--cuts", "500,600"]) == 2
    err = capsys.readouterr().err
    assert "'(500, 600]', '> 600' are empty" in err
    assert main(["significance", UNBALANCED, "y ~ sys + (1|item)", "--cuts", "20"]) == 2
    assert "--by" in capsys.readouterr().err
    for flag, value in (("--adjust", "bogus"), ("--df", "bogus")):
        with pytest.raises(SystemExit):
            main(["significance", UNBALANCED, "y ~ sys + (1|item)", flag, value])
        assert flag in capsys.readouterr().err


def test_reliability_size_errors_name_the_flag(capsys):
    assert main(["reliability", UNBALANCED, "y ~ (1|item) + (1|rater)", "--n", "rater=two"]) == 2
    assert "--n" in capsys.readouterr().err
    assert main(["reliability", UNBALANCED, "y ~ (1|item) + (1|rater)", "--grid", "rater=1:x"]) == 2
    assert "--grid" in capsys.readouterr().err
