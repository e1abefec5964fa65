"""notebooks/goyal_metric_model: the numbers it prints, executed from its source and as committed."""

from __future__ import annotations

import re

import pytest


@pytest.fixture(scope="module", params=["executed", "committed"])
def run(request, notebook_runner):
    return notebook_runner(request, "goyal_metric_model", needs_data=False)


@pytest.fixture(scope="module")
def outputs(run) -> str:
    return run.text


def test_executes_with_the_figure(run):
    assert run.images == 1 and not run.errors  # the flip-rate plot


def test_table1_bounds_printed(outputs):
    assert "BOLD                 CI_D = (-0.00326, -0.00114)   CI_M = (-0.00978, 0.00538)" in outputs
    assert "CI_D = (-0.00220, 0.00286)   CI_M = (-0.00365, 0.00431)" in outputs
    assert re.search(r"Exp5 .* True\s+False", outputs)


def _summary_row(outputs: str, method: str) -> list[str]:
    m = re.search(rf"^{method}\s+(.*)$", outputs.split("BOLD, no effect")[-1], flags=re.M)
    assert m, method
    return m.group(1).split()


def test_coverage_numbers(outputs):
    mc = 3 * (0.95 * 0.05 / 4000) ** 0.5
    # columns: BOLD no effect, BOLD effect, estimated rates, per-system error, paired
    cal = _summary_row(outputs, "calibrated")
    assert abs(float(cal[0]) - 0.95) < mc and abs(float(cal[1]) - 0.95) < mc
    assert float(cal[2]) < 0.8 and float(cal[3]) < 0.05
    goyal = _summary_row(outputs, "goyal")
    assert goyal[:2] == ["1.0000", "1.0000"]
    delta = _summary_row(outputs, "delta")
    assert abs(float(delta[2]) - 0.95) < mc and abs(float(delta[4]) - 0.95) < mc
    ppi = _summary_row(outputs, "ppi")
    assert abs(float(ppi[3]) - 0.95) < mc
    unc = _summary_row(outputs, "uncorrected")
    assert abs(float(unc[0]) - 0.95) < mc and float(unc[1]) < 0.8
    boot = float(re.search(r"percentile bootstrap .*coverage (\d\.\d+)", outputs).group(1))
    assert abs(boot - 0.95) < 3 * (0.95 * 0.05 / 2000) ** 0.5


def test_flip_table(outputs):
    # at no effect the uncorrected test rejects ~5% and the paper's never
    row = re.search(r"^\s+0\.0046\s+0\.0000\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)$", outputs, flags=re.M)
    assert row, "flip table row for no effect"
    reject_unc, reject_goyal = float(row.group(1)), float(row.group(2))
    assert abs(reject_unc - 0.05) < 0.025 and reject_goyal == 0.0
