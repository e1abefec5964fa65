"""``mixeval significance --equivalence / --noninferiority [--lower-is-better]``: the same numbers as the library's
margin tests (themselves checked against emmeans in tests/significance/test_margins.py), and every misuse refused."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from mixeval import Study
from mixeval.cli import main

MODEL = "score ~ system + (1|item)"


@pytest.fixture(scope="module")
def csv(tmp_path_factory):
    rng = np.random.default_rng(4)
    n = 40
    df = pd.DataFrame({"item": np.repeat(np.arange(n), 3), "system": np.tile(["A", "B", "C"], n)})
    df["score"] = rng.normal(size=n)[df["item"]] + 0.1 * (df["system"] == "B") + rng.normal(scale=0.5, size=3 * n)
    df["acc"] = (df["score"] > 0).astype(int)
    df["domain"] = np.where(df["item"] % 2 == 0, "math", "code")
    path = tmp_path_factory.mktemp("margins") / "scores.csv"
    df.to_csv(path, index=False)
    return str(path), df


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _error(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err, err
    return err


@pytest.mark.parametrize("flags, side", [(["--equivalence", "0.5"], "equivalence"),
                                         (["--noninferiority", "0.3"], ">"),
                                         (["--noninferiority", "0.3", "--lower-is-better"], "<")])
def test_margin_flags_equal_study_pairwise(capsys, csv, flags, side):
    path, df = csv
    out = _json(capsys, ["significance", path, MODEL, *flags, "--json"])
    delta = float(flags[1])
    want = Study(df, MODEL).pairwise(delta=delta, side=side)
    assert out["side"] == side and out["delta"] == delta and out["null_hypothesis"] == want.null_hypothesis
    assert [r["pvalue"] for r in out["rows"]] == pytest.approx(list(want.table.pvalue), rel=1e-10)
    assert [r["statistic"] for r in out["rows"]] == pytest.approx(list(want.table.statistic), rel=1e-10)
    assert out["adjust"] == "sidak"  # one-sided tests (TOST too): emmeans changes tukey to sidak


def test_noninferiority_against_a_control_and_text_output(capsys, csv):
    path, df = csv
    out = _json(capsys, ["significance", path, MODEL, "--control", "A", "--noninferiority", "0.3", "--json"])
    want = Study(df, MODEL).contrast("trt.vs.ctrl", ref="A", delta=0.3, side=">")
    assert [r["pvalue"] for r in out["rows"]] == pytest.approx(list(want.table.pvalue), rel=1e-10)
    assert main(["significance", path, MODEL, "--equivalence", "0.5"]) == 0
    text = capsys.readouterr().out
    assert "Tests: H0: |estimate| >= 0.5" in text and "statistic" in text


def test_binomial_margin_on_the_named_scale(capsys, csv):
    path, df = csv
    formula = "acc ~ system + (1|item)"
    err = _error(capsys, ["significance", path, formula, "--family", "binomial", "--equivalence", "0.1"])
    assert "--scale" in err and "difference" in err
    out = _json(capsys, ["significance", path, formula, "--family", "binomial", "--equivalence", "0.1", "--scale",
                         "difference", "--json"])
    want = Study(df, formula, family="binomial").pairwise(scale="difference", delta=0.1)
    assert [r["pvalue"] for r in out["rows"]] == pytest.approx(list(want.table.pvalue), rel=1e-8)


@pytest.mark.parametrize("argv, words", [
    (["--lower-is-better"], "--lower-is-better sets the direction of --noninferiority"),
    (["--equivalence", "0"], "--equivalence 0: the margin must be a positive number"),
    (["--noninferiority", "-1"], "--noninferiority -1: the margin must be a positive number"),
    (["--equivalence", "nan"], "the margin must be a positive number"),
])
def test_bad_margin_flags_are_refused(capsys, csv, argv, words):
    err = _error(capsys, ["significance", csv[0], MODEL, *argv])
    assert words in err


def test_equivalence_and_noninferiority_together_are_refused(capsys, csv):
    with pytest.raises(SystemExit) as stop:
        main(["significance", csv[0], MODEL, "--equivalence", "1", "--noninferiority", "1"])
    assert stop.value.code == 2 and "not allowed with argument --equivalence" in capsys.readouterr().err


def test_binomial_margin_within_classes_needs_its_scale(capsys, csv):
    from mixeval.errors import InputError

    path, df = csv
    formula = "acc ~ system + (1|item)"
    with pytest.raises(InputError, match="conditional\\(\\) does not take"):
        Study(df, formula, family="binomial").conditional("domain", delta=0.1)
    err = _error(capsys, ["significance", path, formula, "--family", "binomial", "--by", "domain",
                          "--noninferiority", "0.1"])
    assert "--scale" in err
    out = _json(capsys, ["significance", path, formula, "--family", "binomial", "--by", "domain", "--scale",
                         "difference", "--noninferiority", "0.1", "--json"])
    assert out["side"] == ">" and len(out["rows"]) == 6 and all(0 <= r["pvalue"] <= 1 for r in out["rows"])
