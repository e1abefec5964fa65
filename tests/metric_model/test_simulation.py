"""Coverage of the model-based metric intervals by simulation (seeded, vectorised over replicates).

Labels come from a known metric model: the metric labels an output positive with
probability p_s, the true label is Bernoulli(q[O]). Targets: the difference of TRUE
rates theta_R = q_T . p_T - q_C . p_C (coverage) and of OBSERVED rates (coverage_observed).
Tolerance: 3 Monte-Carlo standard errors of a 95% coverage, sqrt(.95 * .05 / B).
The percentile bootstrap runs with fewer replicates (B = 2000) but 1000 resamples each:
with only 300 resamples its coverage drops measurably (0.941 vs 0.947 with 1500, paired
design below, 10,000 replicates) because the 2.5% quantile of few draws is too central.
"""

from __future__ import annotations

import numpy as np
import pytest

from mixeval.errors import InputError
from mixeval.metric_model import coverage_study

B = 4000
MC_SE = np.sqrt(0.95 * 0.05 / B)
TOXIGEN = (0.22769, 0.8897)  # (FOR, precision)


B_BOOT = 2000
MC_SE_BOOT = np.sqrt(0.95 * 0.05 / B_BOOT)


def _run(b: int = B, **kw):
    return coverage_study(n_replicates=b, random_state=kw.pop("seed", 42), **kw).set_index("method")


def calibrated(x: float, se: float = MC_SE) -> bool:
    return abs(x - 0.95) <= 3 * se


def test_null_effect_uncorrected_test_keeps_its_level_and_goyal_is_conservative():
    # same observed rate, same metric: no true difference. The uncorrected test of "no
    # difference" is exact (true difference = (prec - FOR) x observed difference).
    t = _run(p_control=0.1, p_treatment=0.1, n=5000, rates=(0.05, 0.8), n_gold=300)
    assert t.loc["uncorrected", "target_true"] == 0
    assert calibrated(t.loc["uncorrected", "coverage"])
    assert calibrated(t.loc["calibrated", "coverage"])
    assert calibrated(t.loc["ppi", "coverage"])
    assert t.loc["goyal", "coverage"] > 0.95 + 2 * MC_SE  # wider than needed
    assert abs(t.loc["uncorrected", "reject_rate"] - 0.05) <= 3 * MC_SE


def test_bold_like_setting_goyal_never_rejects_calibrated_does():
    # Table 1 BOLD rates with the ToxiGen metric, rates known and transportable
    t = _run(p_control=0.00456, p_treatment=0.00236, n=23679, rates=TOXIGEN)
    assert t.loc["goyal", "coverage"] == 1.0 and t.loc["goyal", "reject_rate"] < 0.01
    assert calibrated(t.loc["calibrated", "coverage"])
    assert t.loc["calibrated", "reject_rate"] > 0.95  # the effect is real and detectable
    assert t.loc["uncorrected", "coverage"] < 0.80  # centred at the observed, not the true difference
    assert calibrated(t.loc["uncorrected", "coverage_observed"])  # ... which it covers exactly


def test_effect_with_known_rates():
    t = _run(p_control=0.10, p_treatment=0.13, n=5000, rates=(0.05, 0.8), n_gold=300)
    assert t.loc["uncorrected", "coverage"] < 0.85
    assert t.loc["goyal", "coverage"] < 0.90  # biased centre: wider is not enough
    assert calibrated(t.loc["calibrated", "coverage"])
    assert calibrated(t.loc["ppi", "coverage"])
    # E[estimate] = target (calibrated), (prec - FOR)^-1 x target (observed)
    assert t.loc["calibrated", "mean_estimate"] == pytest.approx(0.0225, abs=3e-4)
    assert t.loc["uncorrected", "mean_estimate"] == pytest.approx(0.03, abs=3e-4)


def test_estimated_rates_need_delta_or_bootstrap():
    # precision from 100 annotated positives, FOR from 300 negatives; large N and effect
    kw = dict(p_control=0.10, p_treatment=0.20, n=20000, rates=(0.05, 0.8), calibration_counts=(300, 100))
    t = _run(**kw, seed=7)
    assert t.loc["calibrated", "coverage"] < 0.80  # treats estimated rates as constants
    assert calibrated(t.loc["delta", "coverage"])
    assert t.loc["delta", "mean_width"] > 1.5 * t.loc["calibrated", "mean_width"]
    tb = _run(B_BOOT, **kw, n_resamples=1000, seed=8)
    assert calibrated(tb.loc["bootstrap", "coverage"], MC_SE_BOOT)


def test_metric_that_errs_differently_per_system_only_ppi_holds():
    # FOR doubles on the treatment's outputs: same observed rates, different true rates
    t = _run(p_control=0.10, p_treatment=0.10, n=5000, rates=(0.05, 0.8),
             rates_treatment=(0.10, 0.8), n_gold=400)
    assert t.loc["ppi", "target_true"] == pytest.approx(0.045)
    for m in ["uncorrected", "goyal", "calibrated"]:
        assert t.loc[m, "coverage"] < 0.05
    assert calibrated(t.loc["ppi", "coverage"])


def test_rates_control_moves_the_control_systems_truth():
    # the mirror case: FOR doubles on the control's outputs; theta_R = (0.05*0.9 + 0.8*0.1) - (0.10*0.9 + 0.8*0.1)
    t = _run(200, p_control=0.10, p_treatment=0.10, n=5000, rates=(0.05, 0.8), rates_control=(0.10, 0.8))
    assert t.loc["uncorrected", "target_true"] == pytest.approx(-0.045)
    assert t.loc["uncorrected", "target_observed"] == 0.0
    for m in ["uncorrected", "goyal", "calibrated"]:  # all assume the test-set rates hold for both systems
        assert t.loc[m, "coverage"] < 0.05


def test_paired_design_a3():
    joint = np.array([[0.62, 0.08], [0.03, 0.27]])  # P(O_C = x, O_T = y), positively dependent
    t = _run(joint=joint, n=3000, rates=(0.05, 0.8), seed=3)
    assert calibrated(t.loc["calibrated", "coverage"])
    assert calibrated(t.loc["uncorrected", "coverage_observed"])
    assert t.loc["goyal", "coverage_observed"] > 0.95 + 2 * MC_SE
    t2 = _run(joint=joint, n=3000, rates=(0.05, 0.8), calibration_counts=(400, 200), seed=4)
    assert calibrated(t2.loc["delta", "coverage"])
    t3 = _run(B_BOOT, joint=joint, n=3000, rates=(0.05, 0.8), calibration_counts=(400, 200), n_resamples=1000, seed=5)
    assert calibrated(t3.loc["bootstrap", "coverage"], MC_SE_BOOT)


def test_coverage_study_reproducible_and_validated():
    a = coverage_study(p_control=0.1, p_treatment=0.2, n=500, rates=(0.1, 0.9), n_replicates=50, random_state=1)
    b = coverage_study(p_control=0.1, p_treatment=0.2, n=500, rates=(0.1, 0.9), n_replicates=50, random_state=1)
    assert a.equals(b)
    with pytest.raises(InputError, match="joint"):
        coverage_study(n=100, rates=(0.1, 0.9))
    with pytest.raises(InputError, match="calibration_counts"):
        coverage_study(p_control=0.1, p_treatment=0.1, n=100, rates=(0.1, 0.9), calibration_counts=(0, 5))
