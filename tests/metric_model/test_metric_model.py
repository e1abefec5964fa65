"""Goyal et al. (2023) model-based metric intervals: paper tables, closed forms, hand computations."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from mixeval.errors import ColumnError, InputError
from mixeval.metric_model import MetricModel, metric_comparisons, metric_ci
from mixeval.reproductions import get

PREC, FOR = 0.8897, 0.22769  # Goyal et al., Section 3.1
TOXIGEN = MetricModel.from_rates(precision=PREC, false_omission_rate=FOR)


def sig3(x: float) -> float:
    return float(f"{x:.3g}")


# --------------------------------------------------------------------------- Table 1
def test_table1_bold_intervals_match_paper():
    r = metric_ci(0.00456, 0.00236, 23679, metric=TOXIGEN)
    # published CI_D (-0.00325 in the paper's table, -0.00326 from the rounded means), CI_M (-0.00978, 0.00538)
    assert r.ci_uncorrected.low == pytest.approx(-0.00326, abs=1e-5)
    assert r.ci_uncorrected.low == pytest.approx(-0.00325, abs=1e-5)
    assert r.ci_uncorrected.high == pytest.approx(-0.00114, abs=1e-5)
    assert r.confidence_interval.low == pytest.approx(-0.00978, abs=1e-5)
    assert r.confidence_interval.high == pytest.approx(0.00538, abs=1e-5)
    assert round(r.ci_uncorrected.low, 5) == -0.00326 and round(r.confidence_interval.low, 5) == -0.00978
    # variances to three significant digits
    assert sig3(r.var_control) == 7.50e-6
    assert sig3(r.var_treatment) == 7.46e-6
    assert sig3(r.var_control_uncorrected) == 1.92e-7
    # the paper prints 9.97e-8, which needs a mean >= 0.0023655 (it prints 0.00236): 0.3% off
    assert r.var_treatment_uncorrected == pytest.approx(9.97e-8, rel=4e-3)
    # conclusion flips: uncorrected excludes 0, the paper's includes it
    assert r.ci_uncorrected.high < 0 < r.confidence_interval.high


def test_table1_rtp_intervals_match_paper():
    r = metric_ci(0.09124, 0.09157, 99442, metric=TOXIGEN)
    assert r.confidence_interval.low == pytest.approx(-0.00365, abs=1e-5)
    assert r.confidence_interval.high == pytest.approx(0.00431, abs=1e-5)
    assert r.ci_uncorrected.low == pytest.approx(-0.00220, abs=1e-5)
    assert r.ci_uncorrected.high == pytest.approx(0.00286, abs=1e-5)
    assert r.ate == pytest.approx(0.00033, abs=1e-12)
    # published to 6-7 digits: 2.06247e-6 and 2.063405e-6
    assert r.var_control == pytest.approx(2.06247e-6, rel=1e-5)
    assert r.var_treatment == pytest.approx(2.063405e-6, rel=1e-5)
    assert sig3(r.var_control_uncorrected) == 8.34e-7
    assert sig3(r.var_treatment_uncorrected) == 8.37e-7


def test_reproduction_goyal_table_1_matches_its_paper_columns():
    t = get("goyal-table-1")(None)
    assert list(t["dataset"]) == ["BOLD", "RealToxicityPrompts"]
    for col in ["ci_d_high", "ci_m_low", "ci_m_high"]:
        np.testing.assert_allclose(t[col], t[col + "_paper"], atol=1e-5)
    np.testing.assert_allclose(t["ci_d_low"], t["ci_d_low_paper"], atol=1e-5)
    np.testing.assert_allclose(t["var_m_gpt2"], t["var_m_gpt2_paper"], rtol=5e-3)
    np.testing.assert_allclose(t["var_m_gptneo"], t["var_m_gptneo_paper"], rtol=5e-3)


def test_reproduction_goyal_table_2_flags_exp5():
    t = get("goyal-table-2")(None).set_index("experiment")
    assert t["consistent_d"].all()
    assert list(t.index[~t["consistent_m"]]) == ["Exp5"]
    # Exp1: from the variances 1.82e-4 + 2.04e-4 the half-width is 1.96 * sqrt(3.86e-4) = 0.038508
    assert t.loc["Exp1", "ci_m_high"] - t.loc["Exp1", "ate"] == pytest.approx(1.96 * np.sqrt(3.86e-4), rel=1e-12)
    assert t.loc["Exp1", "ci_m_low"] == pytest.approx(-0.06556, abs=2e-5)


# --------------------------------------------------------------------------- closed forms
def test_eq10_to_14_by_hand():
    p_c, p_t, n_c, n_t = 0.3, 0.2, 400, 250
    r = metric_ci(p_c, p_t, n_c, n_t, metric=MetricModel.from_rates(0.9, 0.1), level=0.9)
    pr_c = 0.9 * 0.3 + 0.1 * 0.7
    pr_t = 0.9 * 0.2 + 0.1 * 0.8
    assert r.p_true_control == pytest.approx(pr_c, rel=1e-14)
    assert r.var_control == pytest.approx(pr_c * (1 - pr_c) / 399, rel=1e-14)
    assert r.var_treatment == pytest.approx(pr_t * (1 - pr_t) / 249, rel=1e-14)
    z = 1.6448536269514722  # qnorm(0.95)
    half = z * np.sqrt(pr_c * (1 - pr_c) / 399 + pr_t * (1 - pr_t) / 249)
    assert r.confidence_interval.low == pytest.approx(-0.1 - half, rel=1e-12)
    assert r.confidence_interval.high == pytest.approx(-0.1 + half, rel=1e-12)
    # calibrated: (prec - FOR)^2 p (1 - p) / (N - 1)
    assert r.ate_corrected == pytest.approx(0.8 * -0.1, rel=1e-12)
    se = np.sqrt(0.64 * (0.21 / 399 + 0.16 / 249))
    assert r.se_corrected == pytest.approx(se, rel=1e-12)
    # Var(R) = E[Var(R|O)] + Var(E[R|O]): Eq. 13 exceeds the calibrated variance by E[Var(R|O)]/(N-1)
    within = (0.3 * 0.9 * 0.1 + 0.7 * 0.1 * 0.9) / 399
    assert r.var_control - 0.64 * 0.21 / 399 == pytest.approx(within, rel=1e-12)


@pytest.mark.parametrize("p_c,p_t,n", [(0.00456, 0.00236, 23679), (0.5, 0.1, 2), (0.0, 1.0, 10)])
def test_perfect_model_reduces_to_deterministic_variance(p_c, p_t, n):
    r = metric_ci(p_c, p_t, n, metric=MetricModel.from_rates(1.0, 0.0))
    assert r.var_control == r.var_control_uncorrected  # A.1 holds exactly
    assert r.var_treatment == r.var_treatment_uncorrected
    assert tuple(r.confidence_interval) == tuple(r.ci_uncorrected)
    assert r.se_corrected**2 == pytest.approx(r.var_control + r.var_treatment, rel=1e-14, abs=1e-300)


def test_perfect_model_equals_eq5_on_raw_labels():
    rng = np.random.default_rng(1)
    a, b = rng.binomial(1, 0.3, 137), rng.binomial(1, 0.45, 211)
    t = metric_comparisons({"A": a, "B": b}, metric=MetricModel.from_rates(1, 0), methods=["goyal", "calibrated", "uncorrected"])
    eq5 = np.var(a, ddof=1) / a.size + np.var(b, ddof=1) / b.size
    np.testing.assert_allclose(t["se"] ** 2, eq5, rtol=1e-12)
    np.testing.assert_allclose(t["estimate"], b.mean() - a.mean(), rtol=1e-12)


def test_delta_method_binary_closed_form_and_numerical_gradient():
    m = MetricModel.from_confusion(tp=80, fp=20, fn=30, tn=570)  # prec 0.8 (100), FOR 0.05 (600)
    assert (m.precision, m.false_omission_rate) == (0.8, 0.05)
    r = metric_ci(0.12, 0.30, 2000, 1500, metric=m)
    var_q = 0.8 * 0.2 / 100 + 0.05 * 0.95 / 600
    cal = 0.75**2 * (0.12 * 0.88 / 1999 + 0.3 * 0.7 / 1499)
    assert r.se_delta**2 == pytest.approx(cal + 0.18**2 * var_q, rel=1e-12)

    # the gradient of theta(prec, FOR) = (prec - FOR)(p_T - p_C) by finite differences
    def theta(prec, fomr):
        return metric_ci(0.12, 0.30, 2000, 1500, metric=MetricModel.from_rates(prec, fomr)).ate_corrected

    h = 1e-6
    g_prec = (theta(0.8 + h, 0.05) - theta(0.8 - h, 0.05)) / (2 * h)
    g_for = (theta(0.8, 0.05 + h) - theta(0.8, 0.05 - h)) / (2 * h)
    extra = g_prec**2 * 0.8 * 0.2 / 100 + g_for**2 * 0.05 * 0.95 / 600
    assert r.se_delta**2 - r.se_corrected**2 == pytest.approx(extra, rel=1e-6)


# --------------------------------------------------------------------------- multi-class (A.2)
def test_multiclass_eq17_and_collapse_to_binary():
    q = (0.05, 0.05, 0.8)  # classes 0 and 1 behave alike: must equal the binary metric
    m3 = MetricModel.from_class_rates(q)
    m2 = MetricModel.from_rates(0.8, 0.05)
    p3_c, p3_t = (0.6, 0.3, 0.1), (0.5, 0.3, 0.2)
    r3 = metric_ci(p3_c, p3_t, 500, metric=m3)
    r2 = metric_ci(0.1, 0.2, 500, metric=m2)
    assert r3.p_true_control == pytest.approx(0.05 * 0.9 + 0.8 * 0.1, rel=1e-14)
    for f in ["var_control", "var_treatment", "ate", "ate_corrected", "se_corrected"]:
        assert getattr(r3, f) == pytest.approx(getattr(r2, f), rel=1e-12)


def test_multiclass_calibrated_is_sample_variance_of_q_of_o():
    rng = np.random.default_rng(5)
    q = np.array([0.02, 0.3, 0.7, 0.95])
    a = rng.choice(4, size=300, p=[0.4, 0.3, 0.2, 0.1])
    b = rng.choice(4, size=250, p=[0.3, 0.3, 0.2, 0.2])
    t = metric_comparisons({"a": a, "b": b}, metric=MetricModel.from_class_rates(q), methods=["calibrated", "goyal"])
    cal = t.set_index("method").loc["calibrated"]
    assert cal["estimate"] == pytest.approx(q[b].mean() - q[a].mean(), rel=1e-12)
    assert cal["se"] ** 2 == pytest.approx(np.var(q[a], ddof=1) / 300 + np.var(q[b], ddof=1) / 250, rel=1e-12)
    go = t.set_index("method").loc["goyal"]
    pr_a, pr_b = q[a].mean(), q[b].mean()
    assert go["se"] ** 2 == pytest.approx(pr_a * (1 - pr_a) / 299 + pr_b * (1 - pr_b) / 249, rel=1e-12)
    # the uncorrected analysis counts the last class as positive by default
    assert go["estimate"] == pytest.approx(np.mean(b == 3) - np.mean(a == 3), rel=1e-12)


def test_multiclass_confusion_matrix_rates_and_delta():
    m = MetricModel.from_confusion_matrix([[190, 10], [60, 40], [5, 95]])
    np.testing.assert_allclose(m.rates, [0.05, 0.4, 0.95])
    np.testing.assert_allclose(m.rate_variances(), [0.05 * 0.95 / 200, 0.24 / 100, 0.95 * 0.05 / 100])
    p_c, p_t = np.array([0.7, 0.2, 0.1]), np.array([0.5, 0.3, 0.2])
    r = metric_ci(p_c, p_t, 1000, metric=m)
    extra = np.sum((p_t - p_c) ** 2 * m.rate_variances())
    assert r.se_delta**2 - r.se_corrected**2 == pytest.approx(extra, rel=1e-12)


# --------------------------------------------------------------------------- paired (A.3)
def _paired_sample(seed=3, n=400, k=2):
    rng = np.random.default_rng(seed)
    c = rng.choice(k, size=n, p=np.full(k, 1 / k) if k > 2 else [0.7, 0.3])
    flip = rng.random(n) < 0.25
    t = np.where(flip, rng.choice(k, size=n), c)
    items = rng.permutation(n)
    df = pd.DataFrame(
        {"system": ["C"] * n + ["T"] * n, "score": np.r_[c, t], "item": np.r_[items, items]}
    ).sample(frac=1, random_state=0)  # row order must not matter
    return df, c, t


def test_paired_eq20_by_hand():
    df, c, t = _paired_sample()
    t_out = metric_comparisons(df, metric=TOXIGEN, item="item", control="C",
                            methods=["uncorrected", "goyal", "calibrated"]).set_index("method")
    q = np.array([FOR, PREC])
    n = c.size
    pr_c, pr_t = q[c].mean(), q[t].mean()
    cross = sum(q[x] * q[y] * np.mean((c == x) & (t == y)) for x, y in itertools.product([0, 1], [0, 1]))
    cov = (cross - pr_c * pr_t) / (n - 1)  # Eq. 20
    var_m = pr_c * (1 - pr_c) / (n - 1) + pr_t * (1 - pr_t) / (n - 1) - 2 * cov
    assert cov > 0
    assert t_out.loc["goyal", "se"] ** 2 == pytest.approx(var_m, rel=1e-12)
    assert t_out.loc["uncorrected", "se"] ** 2 == pytest.approx(np.var(t - c, ddof=1) / n, rel=1e-12)
    assert t_out.loc["calibrated", "se"] ** 2 == pytest.approx(np.var(q[t] - q[c], ddof=1) / n, rel=1e-12)
    assert bool(t_out["paired"].all())
    # pairing matters: the unpaired analysis of the same labels is wider (positive correlation)
    unp = metric_comparisons(df, metric=TOXIGEN, control="C", methods=["calibrated"])
    assert unp["se"].iloc[0] > t_out.loc["calibrated", "se"]


def test_paired_perfect_model_and_independent_joint():
    df, c, t = _paired_sample(seed=9)
    out = metric_comparisons(df, metric=MetricModel.from_rates(1, 0), item="item", control="C",
                          methods=["goyal", "uncorrected"]).set_index("method")
    assert out.loc["goyal", "se"] == pytest.approx(out.loc["uncorrected", "se"], rel=1e-12)
    # exactly independent joint table: Eq. 20 gives zero covariance
    from mixeval.metric_model import _core

    pc, pt = np.array([0.7, 0.3]), np.array([0.6, 0.4])
    q = np.array([FOR, PREC])
    mom = _core.paired_moments(np.outer(pc, pt), 1000, q, q, np.array([0.0, 1]), np.array([0.0, 1]),
                               np.zeros(2), np.zeros(2), True)
    assert abs(float(mom.cov_goyal)) < 1e-18


# --------------------------------------------------------------------------- PPI, bootstrap
def test_ppi_by_hand():
    rng = np.random.default_rng(11)
    m = MetricModel.from_rates(0.8, 0.1)
    q = np.array([0.1, 0.8])
    a, b = rng.binomial(1, 0.2, 3000), rng.binomial(1, 0.3, 2000)
    ga, gb = rng.binomial(1, 0.2, 150), rng.binomial(1, 0.3, 120)
    ra, rb = rng.binomial(1, q[ga]), rng.binomial(1, q[gb])
    gold = pd.DataFrame({"system": ["A"] * 150 + ["B"] * 120, "score": np.r_[ga, gb], "truth": np.r_[ra, rb]})
    for pred, f in (("calibrated", q), ("observed", np.array([0.0, 1.0]))):
        out = metric_comparisons({"A": a, "B": b}, metric=m, gold=gold, methods=["ppi"], ppi_predictor=pred).iloc[0]
        th_a = f[a].mean() - np.mean(f[ga] - ra)
        th_b = f[b].mean() - np.mean(f[gb] - rb)
        v = (np.var(f[a], ddof=1) / 3000 + np.var(f[ga] - ra, ddof=1) / 150
             + np.var(f[b], ddof=1) / 2000 + np.var(f[gb] - rb, ddof=1) / 120)
        assert out["estimate"] == pytest.approx(th_b - th_a, rel=1e-12)
        assert out["se"] ** 2 == pytest.approx(v, rel=1e-12)


def test_bootstrap_reproducible_and_close_to_delta():
    rng = np.random.default_rng(2)
    data = {"A": rng.binomial(1, 0.1, 4000), "B": rng.binomial(1, 0.2, 4000)}
    m = MetricModel.from_confusion(tp=160, fp=40, fn=15, tn=285)
    kw = dict(metric=m, methods=["delta", "bootstrap"], n_resamples=4000)
    t1 = metric_comparisons(data, random_state=7, **kw)
    t2 = metric_comparisons(data, random_state=np.random.default_rng(7), **kw)
    t3 = metric_comparisons(data, random_state=8, **kw)
    pd.testing.assert_frame_equal(t1, t2)
    assert t1.loc[1, "ci_low"] != t3.loc[1, "ci_low"]
    se_delta, se_boot = t1["se"]
    assert se_boot == pytest.approx(se_delta, rel=0.08)  # 4000 resamples: MC error of an SD ~1.1%


def test_default_methods_and_columns():
    rng = np.random.default_rng(0)
    data = {"x": rng.binomial(1, 0.1, 300), "y": rng.binomial(1, 0.2, 300), "z": rng.binomial(1, 0.15, 300)}
    t = metric_comparisons(data, metric=TOXIGEN)
    assert list(t["contrast"].unique()) == ["y - x", "z - x", "z - y"]
    assert set(t["method"]) == {"goyal", "calibrated"}
    for col in ["contrast", "estimate", "se", "ci_low", "ci_high", "se_uncorrected", "estimand"]:
        assert col in t.columns
    t2 = metric_comparisons(data, metric=MetricModel.from_confusion(50, 10, 20, 300), control="y", random_state=0)
    assert list(t2["contrast"].unique()) == ["x - y", "z - y"]
    assert set(t2["method"]) == {"goyal", "calibrated", "delta", "bootstrap"}


def test_per_system_metric_models_add_rate_variances():
    m_a = MetricModel.from_confusion(80, 20, 30, 570)
    m_b = MetricModel.from_confusion(80, 20, 30, 570)  # equal numbers, independent test sets
    rng = np.random.default_rng(4)
    data = {"A": rng.binomial(1, 0.1, 1000), "B": rng.binomial(1, 0.3, 1000)}
    shared = metric_comparisons(data, metric=m_a, methods=["delta"]).iloc[0]
    separate = metric_comparisons(data, metric={"A": m_a, "B": m_b}, methods=["delta"]).iloc[0]
    pa, pb = data["A"].mean(), data["B"].mean()
    vq = m_a.rate_variances()
    cal = 0.75**2 * (np.var(data["A"], ddof=1) / 1000 + np.var(data["B"], ddof=1) / 1000)
    assert separate["se"] ** 2 == pytest.approx(cal + np.dot([(1 - pa) ** 2, pa**2], vq)
                                                + np.dot([(1 - pb) ** 2, pb**2], vq), rel=1e-12)
    assert shared["se"] ** 2 == pytest.approx(cal + (pb - pa) ** 2 * vq.sum(), rel=1e-12)


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(precision=1.2, false_omission_rate=0.1), "precision"),
        (dict(precision=0.9, false_omission_rate=-0.1), "false_omission_rate"),
        (dict(precision=0.1, false_omission_rate=0.3), "below the false omission rate"),
        (dict(precision=0.3, false_omission_rate=0.3), "no information"),
    ],
)
def test_bad_rates(kwargs, match):
    with pytest.raises(InputError, match=match):
        MetricModel.from_rates(**kwargs)


@pytest.mark.parametrize(
    "counts,exc,match",
    [
        ((0, 0, 5, 10), InputError, "tp \\+ fp = 0"),
        ((5, 3, 0, 0), InputError, "fn \\+ tn = 0"),
        ((5, -1, 2, 10), InputError, "fp"),
        ((5.5, 1, 2, 10), TypeError, "tp"),
        ((1, 9, 9, 1), InputError, "below the false omission rate"),
    ],
)
def test_inconsistent_confusion_counts(counts, exc, match):
    with pytest.raises(exc, match=match):
        MetricModel.from_confusion(*counts)


def test_bad_metric_ci_inputs():
    with pytest.raises(InputError, match="p_control"):
        metric_ci(1.5, 0.1, 100, metric=TOXIGEN)
    with pytest.raises(InputError, match="n_control"):
        metric_ci(0.1, 0.1, 1, metric=TOXIGEN)
    with pytest.raises(InputError, match="n_treatment"):
        metric_ci(0.1, 0.1, 10, 1, metric=TOXIGEN)
    with pytest.raises(InputError, match="level"):
        metric_ci(0.1, 0.1, 10, metric=TOXIGEN, level=1.0)
    with pytest.raises(TypeError, match="MetricModel"):
        metric_ci(0.1, 0.1, 10, metric=(0.9, 0.1))
    with pytest.raises(InputError, match="3 class proportions"):
        metric_ci((0.5, 0.5), (0.5, 0.5), 10, metric=MetricModel.from_class_rates((0.1, 0.5, 0.9)))
    with pytest.raises(InputError, match="single rate"):
        metric_ci(0.5, 0.5, 10, metric=MetricModel.from_class_rates((0.1, 0.5, 0.9)))
    with pytest.raises(InputError, match="sum"):
        metric_ci((0.5, 0.6), (0.5, 0.5), 10, metric=TOXIGEN)
    with pytest.raises(InputError, match="confusion matrix"):
        MetricModel.from_confusion_matrix([[1, 2], [0, 0], [3, 4]])
    with pytest.raises(InputError, match="whole"):
        MetricModel(rates=(0.1, 0.8), counts=(7, 9))


def test_bad_compare_inputs_and_no_mutation():
    df = pd.DataFrame({"system": ["a", "a", "b", "b"], "score": [0, 1, 0, 1], "item": [1, 2, 1, 3]})
    before = df.copy()
    with pytest.raises(ColumnError, match="available columns"):
        metric_comparisons(df, metric=TOXIGEN, score="label")
    with pytest.raises(InputError, match="only for"):
        metric_comparisons(df, metric=TOXIGEN, item="item")
    dup = pd.DataFrame({"system": ["a", "a", "b", "b"], "score": [0, 1, 0, 1], "item": [1, 1, 1, 2]})
    with pytest.raises(InputError, match="more than once"):
        metric_comparisons(dup, metric=TOXIGEN, item="item")
    with pytest.raises(InputError, match="observed classes 0..1"):
        metric_comparisons(df.assign(score=[0.2, 0.9, 1, 1]), metric=TOXIGEN)
    with pytest.raises(InputError, match="single system"):
        metric_comparisons(df.assign(system="a"), metric=TOXIGEN)
    with pytest.raises(InputError, match="unknown method"):
        metric_comparisons(df, metric=TOXIGEN, methods=["wald"])
    with pytest.raises(InputError, match="from_confusion"):
        metric_comparisons(df, metric=TOXIGEN, methods=["delta"])
    with pytest.raises(InputError, match="gold"):
        metric_comparisons(df, metric=TOXIGEN, methods=["ppi"])
    with pytest.raises(InputError, match="missing"):
        metric_comparisons(df.assign(score=[0, np.nan, 1, 1]), metric=TOXIGEN)
    with pytest.raises(InputError, match="control"):
        metric_comparisons(df, metric=TOXIGEN, control="zzz")
    with pytest.raises(InputError, match="at least 2"):
        metric_comparisons({"a": [1], "b": [0, 1]}, metric=TOXIGEN)
    with pytest.raises(InputError, match="no metric model"):
        metric_comparisons(df, metric={"a": TOXIGEN})
    pd.testing.assert_frame_equal(df, before)


def test_boundary_warnings_and_non_numeric_scores():
    from mixeval.errors import BoundaryWarning

    with pytest.warns(BoundaryWarning, match="exactly 0 or 1"):
        MetricModel.from_confusion(tp=50, fp=0, fn=5, tn=95)
    with pytest.warns(BoundaryWarning, match="degenerate"):
        metric_comparisons({"a": [0, 0, 0], "b": [0, 1, 1]}, metric=TOXIGEN)
    with pytest.raises(InputError, match="must be numeric"):
        metric_comparisons(pd.DataFrame({"system": ["a", "b"], "score": ["toxic", "ok"]}), metric=TOXIGEN)


def test_paired_bootstrap_close_to_paired_delta():
    df, c, t = _paired_sample(seed=21, n=3000)
    m = MetricModel.from_confusion(tp=160, fp=40, fn=15, tn=285)
    out = metric_comparisons(df, metric=m, item="item", control="C", methods=["delta", "bootstrap"],
                          n_resamples=4000, random_state=3).set_index("method")
    assert out.loc["bootstrap", "se"] == pytest.approx(out.loc["delta", "se"], rel=0.08)
    unpaired = metric_comparisons(df, metric=m, control="C", methods=["bootstrap"], n_resamples=4000, random_state=3)
    assert unpaired["se"].iloc[0] > out.loc["bootstrap", "se"]  # positive dependence ignored -> wider


def test_result_to_dict_is_json_ready():
    import json

    r = metric_ci(0.1, 0.2, 100, metric=MetricModel.from_confusion(8, 2, 3, 87))
    d = json.loads(json.dumps(r.to_dict()))
    assert d["ci_delta"] == [r.ci_delta.low, r.ci_delta.high]
    assert d["estimate"] == r.ate
    assert "Goyal" in r.summary() and "delta" in r.summary()
