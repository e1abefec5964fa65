"""``mixeval metric-ci`` and ``mixeval reproduce goyal-table-*`` on the command line."""

from __future__ import annotations

import json
import re

import pytest

from mixeval.cli import main

BOLD = ["--p-control", "0.00456", "--p-treatment", "0.00236", "--n", "23679"]


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_metric_ci_json_reproduces_table1_bold(capsys):
    out = _json(capsys, ["metric-ci", *BOLD, "--precision", "0.8897", "--for", "0.22769", "--json"])
    for key in ["ate", "var_control", "var_treatment", "ci", "ci_uncorrected"]:
        assert key in out
    assert out["ci"] == pytest.approx([-0.00978, 0.00538], abs=1e-5)
    assert out["ci_uncorrected"] == pytest.approx([-0.00326, -0.00114], abs=1e-5)
    assert f"{out['var_control']:.3g}" == "7.5e-06" and f"{out['var_treatment']:.3g}" == "7.46e-06"
    assert out["ci_delta"] is None


def test_metric_ci_rtp_level_and_n_treatment(capsys):
    base = ["metric-ci", "--p-control", "0.09124", "--p-treatment", "0.09157", "--n", "99442",
            "--precision", "0.8897", "--for", "0.22769", "--json"]
    out = _json(capsys, base)
    assert out["ci"] == pytest.approx([-0.00365, 0.00431], abs=1e-5)
    # 90% interval: half-width scales by qnorm(.95) / qnorm(.975)
    out90 = _json(capsys, base + ["--level", "0.9"])
    ratio = (out90["ci"][1] - out90["ci"][0]) / (out["ci"][1] - out["ci"][0])
    assert ratio == pytest.approx(1.6448536269514722 / 1.959963984540054, rel=1e-12)
    out2 = _json(capsys, base + ["--n-treatment", "50000"])
    p_r = 0.8897 * 0.09157 + 0.22769 * (1 - 0.09157)
    assert out2["var_treatment"] == pytest.approx(p_r * (1 - p_r) / 49999, rel=1e-12)


def test_metric_ci_with_confusion_adds_delta(capsys):
    out = _json(capsys, ["metric-ci", *BOLD, "--confusion", "80,20,30,570", "--json"])
    assert out["precision"] == 0.8 and out["false_omission_rate"] == 0.05
    assert out["se_delta"] > out["se_corrected"]
    assert out["ci_delta"][0] < out["ci_corrected"][0]
    # agreeing precision/FOR may be given as well
    out2 = _json(capsys, ["metric-ci", *BOLD, "--confusion", "80,20,30,570", "--precision", "0.8", "--json"])
    assert out2 == out


def test_metric_ci_text_output(capsys):
    assert main(["metric-ci", *BOLD, "--precision", "0.8897", "--for", "0.22769"]) == 0
    text = capsys.readouterr().out
    assert "Goyal" in text and "-0.00978" in text


@pytest.mark.parametrize(
    "extra,match",
    [
        (["--precision", "1.3", "--for", "0.1"], "precision"),
        (["--precision", "0.2", "--for", "0.5"], "below the false omission rate"),
        (["--confusion", "1,2,3"], "four"),
        (["--confusion", "0,0,3,4"], "tp \\+ fp = 0"),
        (["--confusion", "80,20,30,570", "--precision", "0.9"], "disagrees"),
        ([], "--precision and --for"),
    ],
)
def test_metric_ci_errors(capsys, extra, match):
    assert main(["metric-ci", *BOLD, *extra]) == 2
    assert re.search(match, capsys.readouterr().err)


def test_metric_ci_small_n(capsys):
    assert main(["metric-ci", "--p-control", "0.1", "--p-treatment", "0.2", "--n", "1",
                 "--precision", "0.9", "--for", "0.1"]) == 2
    assert "n_control" in capsys.readouterr().err


def test_reproduce_goyal_tables(capsys):
    rows = _json(capsys, ["reproduce", "goyal-table-1", "--json"])["rows"]
    bold = rows[0]
    assert bold["dataset"] == "BOLD"
    assert [bold["ci_m_low"], bold["ci_m_high"]] == pytest.approx([-0.00978, 0.00538], abs=1e-5)
    assert rows[1]["ci_m_low"] == pytest.approx(-0.00365, abs=1e-5)
    rows2 = _json(capsys, ["reproduce", "goyal-table-2", "--json"])["rows"]
    assert [r["experiment"] for r in rows2 if not r["consistent_m"]] == ["Exp5"]
