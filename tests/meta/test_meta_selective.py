"""Selective answering: curve, AUC, DiSCA/DiDMA/NiDMA against hand computations,
the six adversarial cases of Mishra et al.'s Table 1, degenerate curves and errors."""

from __future__ import annotations

import numpy as np
import pytest

from mixeval.errors import InputError
from mixeval.meta import (
    accuracy_coverage_curve,
    didma,
    disca,
    nidma,
    parse_weights,
    plot_accuracy_coverage,
    selective_auc,
)

TOL = 1e-12


def groups(*spec: tuple[float, int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Build (confidence, correct) from tie groups (confidence, n_answers, n_correct)."""
    conf, ok = [], []
    for c, n, k in spec:
        conf += [c] * n
        ok += [1] * k + [0] * (n - k)
    return np.array(conf), np.array(ok)


# ----------------------------------------------------------------------------- hand-computed curves


def test_curve_points_with_ties_hand_computed():
    curve = accuracy_coverage_curve([0.6, 0.8, 0.9, 0.8], [1, 0, 1, 1])
    assert curve.threshold.tolist() == [0.9, 0.8, 0.6]
    assert curve.n_answered.tolist() == [1, 3, 4]
    assert curve.n_correct.tolist() == [1, 2, 3]
    np.testing.assert_allclose(curve.coverage, [0.25, 0.75, 1.0], rtol=0, atol=TOL)
    np.testing.assert_allclose(curve.accuracy, [1.0, 2 / 3, 0.75], rtol=0, atol=TOL)
    frame = curve.to_frame()
    assert list(frame.columns) == ["threshold", "n_answered", "n_correct", "coverage", "accuracy"]


def test_auc_step_and_trapezoid_hand_computed():
    conf, ok = [0.9, 0.8, 0.8, 0.6], [1, 1, 0, 1]
    # step: .25*1 + .5*(2/3) + .25*.75
    assert selective_auc(conf, ok) == pytest.approx(0.25 + 0.5 * 2 / 3 + 0.25 * 0.75, abs=TOL)
    # trapezoid: .25*1 + .5*(1 + 2/3)/2 + .25*(2/3 + 3/4)/2
    expected = 0.25 + 0.5 * (1 + 2 / 3) / 2 + 0.25 * (2 / 3 + 0.75) / 2
    assert selective_auc(conf, ok, method="trapezoid") == pytest.approx(expected, abs=TOL)
    with pytest.raises(InputError, match="step"):
        selective_auc(conf, ok, method="simpson")


def test_auc_without_ties_is_mean_of_prefix_accuracies():
    rng = np.random.default_rng(3)
    conf = rng.permutation(np.linspace(0.3, 0.99, 50))
    ok = rng.random(50) < 0.7
    order = np.argsort(-conf)
    prefix = np.cumsum(ok[order]) / np.arange(1, 51)
    assert selective_auc(conf, ok) == pytest.approx(prefix.mean(), abs=TOL)


def test_disca_terms_hand_computed():
    r = disca([0.9, 0.8, 0.8, 0.6], [1, 1, 0, 1], tolerance=0.9)
    # accuracies 1, 2/3, 3/4 at maxprob .9, .8, .6
    assert r.a == 0.8  # first step below 100%
    assert r.b == 0.9  # step 2 is below .9, so the last admissible cut-off is .9
    assert r.n == 1  # 2/3 -> 3/4
    assert r.fluctuation_penalty == pytest.approx((3 / 4 - 2 / 3) / 0.2, abs=1e-12)
    assert r.disca == pytest.approx((1 / 0.8 + 1 / 0.9 - (1 / 12) / 0.2) / 3, abs=1e-12)
    assert r.auc == pytest.approx(0.25 + 0.5 * 2 / 3 + 0.25 * 0.75, abs=TOL)
    assert r.accuracy_dropped and r.tolerance_admissible
    row = r.fluctuations.iloc[0]
    assert (row.c1, row.c2, row.weight) == (0.8, 0.6, 1.0)
    assert row.c == pytest.approx(0.2, abs=1e-12)


def test_disca_several_fluctuations_weighted_by_rank():
    # accuracies 0, 1/2, 1/3, 1/2, 3/5: rises at steps 2, 4, 5 -> n = 3, weights 3, 2, 1
    r = disca([0.9, 0.8, 0.7, 0.6, 0.5], [0, 1, 0, 1, 1], tolerance=0.5, weights=(0.2, 0.3, 0.5))
    assert r.n == 3
    terms = np.array([(1 / 2 - 0) / 0.1, (1 / 2 - 1 / 3) / 0.1, (3 / 5 - 1 / 2) / 0.1])
    penalty = (3 * terms[0] + 2 * terms[1] + 1 * terms[2]) / 6
    assert r.fluctuation_penalty == pytest.approx(penalty, rel=1e-12)
    assert r.fluctuations["weight"].tolist() == [3.0, 2.0, 1.0]
    assert r.a == 0.9
    # first step (accuracy 0) is already below .5: no admissible cut-off, b = highest maxprob
    assert r.b == 0.9 and not r.tolerance_admissible
    assert r.disca == pytest.approx(0.2 / 0.9 + 0.3 / 0.9 - 0.5 * penalty, rel=1e-12)


def test_disca_min_gap_floors_tiny_maxprob_differences():
    r = disca([0.9, 0.8995], [0, 1], tolerance=0.5)
    assert r.n == 1
    assert r.fluctuations["c"].iloc[0] == 0.001
    assert r.fluctuation_penalty == pytest.approx(0.5 / 0.001, rel=1e-12)
    r2 = disca([0.9, 0.8995], [0, 1], tolerance=0.5, min_gap=1e-4)
    assert r2.fluctuation_penalty == pytest.approx(0.5 / 0.0005, rel=1e-9)


# ----------------------------------------------------------------------------- degenerate curves


def test_accuracy_never_drops_below_100_percent():
    r = disca([0.95, 0.9, 0.7], [1, 1, 1])
    assert r.auc == 1.0
    assert not r.accuracy_dropped and r.a == 0.7  # lowest maxprob
    assert r.b == 0.7 and r.tolerance_admissible
    assert r.n == 0 and r.fluctuation_penalty == 0.0
    assert r.disca == pytest.approx((1 / 0.7 + 1 / 0.7) / 3, rel=1e-12)
    assert r.fluctuations.empty


def test_every_answer_wrong():
    r = disca([0.9, 0.6, 0.5], [0, 0, 0])
    assert r.auc == 0.0 and selective_auc([0.9, 0.6, 0.5], [0, 0, 0], method="trapezoid") == 0.0
    assert r.a == 0.9 and r.accuracy_dropped
    assert r.b == 0.9 and not r.tolerance_admissible
    assert r.n == 0  # accuracy 0, 0, 0 never rises
    assert r.disca == pytest.approx(2 / 0.9 / 3, rel=1e-12)


def test_all_confidences_tied_is_one_step():
    conf, ok = [0.7] * 4, [1, 0, 1, 1]
    curve = accuracy_coverage_curve(conf, ok)
    assert curve.threshold.tolist() == [0.7] and curve.coverage.tolist() == [1.0]
    assert selective_auc(conf, ok) == 0.75 == selective_auc(conf, ok, method="trapezoid")
    r = disca(conf, ok, tolerance=0.9)
    assert (r.a, r.b, r.n, r.tolerance_admissible) == (0.7, 0.7, 0, False)
    r = disca(conf, ok, tolerance=0.75)  # accuracy exactly at the tolerance is admissible
    assert (r.b, r.tolerance_admissible) == (0.7, True)


def test_ties_enter_together_and_order_within_ties_is_irrelevant():
    conf = [0.9, 0.9, 0.5, 0.5]
    r1 = disca(conf, [0, 1, 1, 1], tolerance=0.5, weights=(0.5, 0.25, 0.25))
    r2 = disca(conf, [1, 0, 1, 1], tolerance=0.5, weights=(0.5, 0.25, 0.25))
    # steps: (cov .5, acc .5) at .9, (cov 1, acc .75) at .5
    for r in (r1, r2):
        assert r.auc == pytest.approx(0.5 * 0.5 + 0.5 * 0.75, abs=TOL)
        assert (r.a, r.b, r.n) == (0.9, 0.5, 1)
        assert r.fluctuation_penalty == pytest.approx(0.25 / 0.4, rel=1e-12)
        assert r.disca == pytest.approx(0.5 / 0.9 + 0.25 / 0.5 - 0.25 * 0.625, rel=1e-12)
    assert r1.disca == r2.disca


def test_single_answer():
    r = disca([0.8], [1])
    assert (r.auc, r.a, r.b, r.n) == (1.0, 0.8, 0.8, 0)


# ----------------------------------------------------------------------------- Table 1: AUC prefers A, DiSCA prefers B


def _case_1_auc_tail():
    # A: flat 80% accuracy, errors already among the most confident answers.
    a = groups((0.99, 10, 8), (0.95, 10, 8))
    # B: 100% accurate in the high-confidence region, lower accuracy in the tail.
    b = groups((0.99, 2, 2), (0.9, 10, 7), (0.6, 8, 4))
    return a, b


def _case_2_fluctuation_at_low_coverage():
    conf = np.round(0.99 - 0.01 * np.arange(20), 2)
    ok = np.ones(20, int)
    ok[2] = 0  # one error among the most confident answers; accuracy then rises 17 times
    b = groups((0.99, 5, 5), (0.7, 15, 11))
    return (conf, ok), b


def _case_3_fluctuations_at_high_coverage():
    conf = np.round(0.99 - 0.01 * np.arange(20), 2)
    ok = np.ones(20, int)
    ok[[14, 16]] = 0  # errors late in the curve; accuracy rises 4 times afterwards
    b = groups((0.99, 12, 12), (0.5, 8, 4))
    return (conf, ok), b


def _case_4_many_small_fluctuations():
    conf = np.round(0.99 - 0.005 * np.arange(40), 3)
    ok = np.ones(40, int)
    ok[4::5] = 0  # every fifth answer wrong: a saw-tooth curve
    b = groups((0.99, 6, 6), (0.55, 34, 20))
    return (conf, ok), b


def _case_5_one_large_fluctuation():
    a = groups((0.95, 4, 2), (0.9, 16, 16))  # accuracy jumps from .5 to .9
    b = groups((0.95, 2, 2), (0.6, 18, 12))
    return a, b


def _case_6_plateau():
    # A answers everything with high maxprob: accuracy plateaus above 90%.
    a = groups((0.99, 5, 5), (0.97, 45, 42), (0.96, 50, 45))
    # B spreads its maxprob over a wide range; its maxprob indicates correctness.
    b = groups((0.99, 20, 20), (0.8, 30, 27), (0.5, 50, 38))
    return a, b


CASES = {
    "1-auc-tail": _case_1_auc_tail,
    "2-fluctuation-low-coverage": _case_2_fluctuation_at_low_coverage,
    "3-fluctuation-high-coverage": _case_3_fluctuations_at_high_coverage,
    "4-many-small-fluctuations": _case_4_many_small_fluctuations,
    "5-one-large-fluctuation": _case_5_one_large_fluctuation,
    "6-plateau": _case_6_plateau,
}


@pytest.mark.parametrize("name", list(CASES))
def test_table_1_auc_prefers_a_but_disca_prefers_b(name):
    (conf_a, ok_a), (conf_b, ok_b) = CASES[name]()
    ra, rb = disca(conf_a, ok_a), disca(conf_b, ok_b)
    assert ra.auc > rb.auc, (ra.auc, rb.auc)
    assert rb.disca > ra.disca, (ra.disca, rb.disca)


def test_table_1_case_values_hand_computed():
    (ca, oa), (cb, ob) = _case_1_auc_tail()
    ra, rb = disca(ca, oa), disca(cb, ob)
    assert ra.auc == pytest.approx(0.8, abs=TOL)
    assert rb.auc == pytest.approx(0.1 * 1 + 0.5 * 9 / 12 + 0.4 * 13 / 20, abs=TOL)
    assert ra.disca == pytest.approx((1 / 0.99 + 1 / 0.99) / 3, rel=1e-12)
    assert rb.disca == pytest.approx((1 / 0.9 + 1 / 0.99) / 3, rel=1e-12)
    (ca, oa), (cb, ob) = _case_5_one_large_fluctuation()
    ra, rb = disca(ca, oa), disca(cb, ob)
    assert ra.auc == pytest.approx(0.2 * 0.5 + 0.8 * 0.9, abs=TOL)
    assert ra.n == 1 and ra.fluctuation_penalty == pytest.approx(0.4 / 0.05, rel=1e-9)
    assert rb.disca == pytest.approx((1 / 0.6 + 1 / 0.95) / 3, rel=1e-12)
    (ca, oa), (cb, ob) = _case_6_plateau()
    ra, rb = disca(ca, oa), disca(cb, ob)
    assert ra.auc == pytest.approx(0.05 + 0.45 * 47 / 50 + 0.5 * 0.92, abs=TOL)
    assert (ra.a, ra.b) == (0.97, 0.96)  # never below .9: b is the lowest maxprob
    assert (rb.a, rb.b) == (0.8, 0.8)


# ----------------------------------------------------------------------------- DiDMA, NiDMA, weights


def test_didma_and_nidma_hand_computed():
    assert didma(0.6, 2.0, weights=(0.8, 0.2)) == pytest.approx(0.58, abs=TOL)
    r = disca([0.95, 0.9, 0.7], [1, 1, 1])
    assert didma(r, 4.0) == pytest.approx(0.5 * r.disca + 0.5 / 4.0, abs=TOL)
    assert nidma(0.58, 0.2, weights=(0.5, 0.5)) == pytest.approx(0.39, abs=TOL)
    assert nidma(1.0, r, weights="1/4,3/4") == pytest.approx(0.25 + 0.75 * r.disca, abs=TOL)
    with pytest.raises(InputError, match="energy"):
        didma(0.5, 0.0)
    with pytest.raises(InputError, match="sum to 1"):
        nidma(0.5, 0.5, weights=(0.6, 0.6))


def test_parse_weights():
    assert parse_weights("1/3, 1/3, 1/3", 3) == pytest.approx((1 / 3,) * 3)
    assert parse_weights("0.2,0.3,0.5", 3) == (0.2, 0.3, 0.5)
    with pytest.raises(InputError, match="sums to 0.99"):
        parse_weights([0.33, 0.33, 0.33], 3)
    with pytest.raises(InputError, match="3 entries"):
        parse_weights([0.5, 0.5], 3)
    with pytest.raises(InputError, match="non-negative"):
        parse_weights([1.5, -0.5, 0.0], 3)
    with pytest.raises(InputError, match="comma-separated"):
        parse_weights("a,b,c", 3)


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize("bad", [[0.5, 1.2], [-0.1, 0.5], [50.0, 90.0]])
def test_confidence_outside_unit_interval_is_rejected(bad):
    with pytest.raises(InputError, match=r"\[0, 1\]"):
        disca(bad, [1, 0])


def test_other_bad_input():
    with pytest.raises(InputError, match="NaN"):
        disca([0.5, np.nan], [1, 0])
    with pytest.raises(InputError, match="sum to 1"):
        disca([0.5, 0.4], [1, 0], weights=(0.5, 0.5, 0.5))
    with pytest.raises(InputError, match="same length"):
        disca([0.5, 0.4], [1, 0, 1])
    with pytest.raises(InputError, match="0/1"):
        disca([0.5, 0.4], [1, 2])
    with pytest.raises(TypeError, match="0/1"):
        disca([0.5, 0.4], ["yes", "no"])
    with pytest.raises(InputError, match="empty"):
        disca([], [])
    with pytest.raises(InputError, match="tolerance"):
        disca([0.5, 0.4], [1, 0], tolerance=0.0)
    with pytest.raises(InputError, match="tolerance"):
        disca([0.5, 0.4], [1, 0], tolerance=1.5)
    with pytest.raises(InputError, match="min_gap"):
        disca([0.5, 0.4], [1, 0], min_gap=0.0)
    with pytest.raises(InputError, match="infinite"):
        disca([0.0, 0.0], [1, 0])
    # a zero maxprob is fine when its term has weight 0
    r = disca([0.5, 0.0], [1, 0], weights=(0.0, 0.0, 1.0))
    assert (r.a, r.b, r.disca) == (0.0, 0.5, 0.0)


def test_input_is_not_modified():
    conf = np.array([0.3, 0.9, 0.5])
    ok = np.array([1, 0, 1])
    disca(conf, ok)
    assert conf.tolist() == [0.3, 0.9, 0.5] and ok.tolist() == [1, 0, 1]


def test_result_printing_and_plot():
    import matplotlib

    matplotlib.use("Agg")
    r = disca([0.9, 0.8, 0.8, 0.6], [1, 1, 0, 1])
    assert "DiSCA" in r.summary() and "DiscaResult" in repr(r)
    assert set(r.to_dict()) >= {"auc", "a", "b", "n", "disca"}
    fig = plot_accuracy_coverage({"A": r.curve, "B": accuracy_coverage_curve([0.9, 0.1], [0, 1])})
    assert len(fig.axes[0].lines) == 2
