"""Many-system comparisons with multiplicity control, and the multi-bootstrap over items and seeds."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mixeval._adjust import adjust_pvalues
from mixeval.errors import InputError
from mixeval.resampling import compare_systems, multi_bootstrap_test, paired_bootstrap_test


def _systems(seed=0, n=200, effects=(0.0, 0.03, 0.0, -0.02)):
    rng = np.random.default_rng(seed)
    base = rng.normal(0.4, 0.15, size=n)
    return pd.DataFrame({f"S{k}": base + e + rng.normal(0, 0.06, size=n) for k, e in enumerate(effects)})


def test_all_pairs_t_matches_scipy_and_adjustment():
    df = _systems()
    out = compare_systems(df, test="t", adjust="holm")
    assert len(out) == 6
    for row in out.itertuples():
        ref = stats.ttest_rel(df[row.system_a], df[row.system_b])
        assert row.statistic == pytest.approx(ref.statistic, rel=1e-12)
        assert row.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
    np.testing.assert_allclose(out["pvalue_adjusted"], adjust_pvalues(out["pvalue"], "holm"))


def test_baseline_comparisons_and_long_format_and_reproducible():
    df = _systems(1)
    out = compare_systems(df, baseline="S0", test="permutation", adjust="bh", n_resamples=999, random_state=3)
    assert out[["system_a", "system_b"]].values.tolist() == [["S1", "S0"], ["S2", "S0"], ["S3", "S0"]]
    np.testing.assert_allclose(out["estimate"], [df[s].mean() - df["S0"].mean() for s in ("S1", "S2", "S3")])
    again = compare_systems(df, baseline="S0", test="permutation", adjust="bh", n_resamples=999, random_state=3)
    pd.testing.assert_frame_equal(out, again)
    long = df.reset_index().melt(id_vars="index", var_name="sys", value_name="ter")
    via_long = compare_systems(long, item="index", system="sys", score="ter", baseline="S0", test="permutation",
                               adjust="bh", n_resamples=999, random_state=3)
    pd.testing.assert_frame_equal(out, via_long)
    boot = compare_systems(df, baseline="S0", test="bootstrap", n_resamples=999, random_state=3)
    assert (boot["lower"] < boot["estimate"]).all() and (boot["estimate"] < boot["upper"]).all()


def test_holm_controls_familywise_error_under_the_global_null():
    rng = np.random.default_rng(11)
    n_sim, any_raw, any_holm = 300, 0, 0
    for _ in range(n_sim):
        base = rng.normal(size=40)
        df = pd.DataFrame({f"S{k}": base + rng.normal(size=40) for k in range(5)})
        out = compare_systems(df, test="t", adjust="holm")
        any_raw += (out["pvalue"] <= 0.05).any()
        any_holm += (out["pvalue_adjusted"] <= 0.05).any()
    assert any_raw / n_sim > 0.15  # 10 comparisons unadjusted: FWER far above 5%
    assert any_holm / n_sim <= 0.08


def test_compare_systems_bad_input():
    df = _systems()
    with pytest.raises(InputError, match="baseline"):
        compare_systems(df, baseline="nope", test="t")
    with pytest.raises(InputError, match="test"):
        compare_systems(df, test="wilcoxon")
    with pytest.raises(InputError, match="adjustment"):
        compare_systems(df, test="t", adjust="tukey")
    with pytest.raises(InputError, match="at least two systems"):
        compare_systems(df[["S0"]], test="t")
    long = df.reset_index().melt(id_vars="index", var_name="sys", value_name="ter").iloc[:-1]
    with pytest.raises(InputError, match="lack scores"):
        compare_systems(long, item="index", system="sys", score="ter", test="t")


def _long(YA, YB, seeds_b=None):
    rows = []
    for label, Y, seeds in (("A", YA, range(YA.shape[1])), ("B", YB, seeds_b or range(YB.shape[1]))):
        for i in range(Y.shape[0]):
            for j, s in enumerate(seeds):
                rows.append({"item": i, "seed": s, "system": label, "score": Y[i, j]})
    return pd.DataFrame(rows)


def test_multi_bootstrap_matches_full_enumeration():
    # values found by a seed search so that no atom sits within Monte-Carlo error of the threshold
    YA = np.array([[0.71, 0.86], [-0.01, 0.47], [0.7, 0.77], [0.63, 0.8]])
    YB = np.array([[0.51, 0.56], [0.49, 0.24], [0.28, 0.53], [0.33, 0.7]])
    D = YA - YB
    vals = np.array([D[np.ix_(it, se)].mean()
                     for it in itertools.product(range(4), repeat=4) for se in itertools.product(range(2), repeat=2)])
    exact = np.mean(np.abs(vals - vals.mean()) >= abs(D.mean()))
    R = 20_000
    res = multi_bootstrap_test(_long(YA, YB), score="score", item="item", seed="seed", system="system", a="A",
                               b="B", n_resamples=R, random_state=4)
    assert res.details["paired_seeds"]
    assert res.statistic == pytest.approx(D.mean())
    assert abs(res.pvalue - exact) <= 4 * np.sqrt(exact * (1 - exact) / R) + 2 / R
    assert res.details["bootstrap_se"] == pytest.approx(vals.std(), rel=0.03)


def test_single_seed_reduces_to_paired_bootstrap():
    rng = np.random.default_rng(2)
    YA = rng.normal(size=(300, 1))
    YB = YA + 0.1 + rng.normal(size=(300, 1))
    multi = multi_bootstrap_test(_long(YA, YB), score="score", item="item", seed="seed", system="system",
                                 a="A", b="B", n_resamples=4000, random_state=1)
    single = paired_bootstrap_test(YA[:, 0], YB[:, 0], n_resamples=4000, random_state=1)
    assert multi.statistic == pytest.approx(single.statistic)
    assert multi.details["bootstrap_se"] == pytest.approx(single.details["bootstrap_se"], rel=0.06)


def test_seed_variance_is_not_ignored():
    """Under H0 with large run-to-run variation, an item-only bootstrap of run-averaged
    scores over-rejects; the multi-bootstrap (unpaired seeds) stays much closer to nominal."""
    rng = np.random.default_rng(9)
    n_sim, n, S = 150, 40, 5
    rej_multi = rej_naive = 0
    for _ in range(n_sim):
        item_eff = rng.normal(size=(n, 1))
        YA = item_eff + rng.normal(scale=0.3, size=(1, S)) + rng.normal(scale=0.2, size=(n, S))
        YB = item_eff + rng.normal(scale=0.3, size=(1, S)) + rng.normal(scale=0.2, size=(n, S))
        df = _long(YA, YB, seeds_b=list(range(100, 100 + S)))
        res = multi_bootstrap_test(df, score="score", item="item", seed="seed", system="system", a="A", b="B",
                                   n_resamples=300, random_state=rng)
        naive = paired_bootstrap_test(YA.mean(axis=1), YB.mean(axis=1), n_resamples=300, random_state=rng)
        rej_multi += res.pvalue <= 0.05
        rej_naive += naive.pvalue <= 0.05
    assert rej_naive / n_sim > 0.4
    assert rej_multi / n_sim < 0.2


def test_multi_bootstrap_bad_input():
    YA = np.ones((3, 2))
    df = _long(YA, YA + 1)
    with pytest.raises(InputError, match="not found"):
        multi_bootstrap_test(df, score="score", item="item", seed="seed", system="system", a="A", b="C",
                             n_resamples=10)
    with pytest.raises(InputError, match="lacks"):
        multi_bootstrap_test(df.iloc[1:], score="score", item="item", seed="seed", system="system", a="A",
                             b="B", n_resamples=10)
    with pytest.raises(InputError, match="duplicate"):
        multi_bootstrap_test(pd.concat([df, df.iloc[:1]]), score="score", item="item", seed="seed",
                             system="system", a="A", b="B", n_resamples=10)


def test_corpus_metric_comparisons_match_single_tests():
    rng = np.random.default_rng(5)
    stats_ = {name: rng.integers(0, 5, size=(120, 3)).astype(float) for name in ("x", "y", "z")}
    out = compare_systems(stats_, metric="f1", test="permutation", adjust="bonferroni", n_resamples=500,
                          random_state=2)
    seeds = np.random.default_rng(2).integers(0, 2**63 - 1, size=3)
    from mixeval.resampling import permutation_test

    for row, seed in zip(out.itertuples(), seeds):
        ref = permutation_test(stats_[row.system_a], stats_[row.system_b], metric="f1", n_resamples=500,
                               random_state=int(seed))
        assert row.pvalue == ref.pvalue and row.estimate == pytest.approx(ref.estimate)
    np.testing.assert_allclose(out["pvalue_adjusted"], np.minimum(1, 3 * out["pvalue"]))
    with pytest.raises(InputError, match="corpus `metric`"):
        compare_systems(stats_, metric="f1", test="t")


def test_an_id_column_is_refused_as_a_system_and_counted_nowhere():
    """Issue 38 item 8: a wide file's item-id column was compared as a system (3 tests adjusted instead of 1)."""
    df = _systems(2, n=40, effects=(0.0, 0.03))
    with pytest.raises(InputError, match=r"'id' looks like an item identifier .*whole numbers 1\.\.40.*set_index"):
        compare_systems(df.assign(id=np.arange(1, 41)), n_resamples=9)
    out = compare_systems(df.assign(id=np.arange(1, 41)).set_index("id"), n_resamples=99, random_state=1)
    assert out[["system_a", "system_b"]].values.tolist() == [["S0", "S1"]]
    ranks = pd.DataFrame({"A": np.random.default_rng(1).permutation(40) + 1, "B": np.arange(1, 41)})
    assert len(compare_systems(ranks, test="t")) == 1  # two rankings are scores, not identifiers
    assert len(compare_systems(df.assign(sample=df["S0"] + 0.1), test="t")) == 3  # decimals: a system


def test_a_score_column_with_a_text_cell_is_refused_not_dropped():
    df = _systems(3, n=20, effects=(0.0, 0.02, 0.0))
    df["S1"] = df["S1"].astype(object)
    df.loc[4, "S1"] = "err"
    with pytest.raises(InputError, match=r"'S1' must be numeric; 1 of its 20 values is not a number: 'err' \(row 5\)"):
        compare_systems(df, test="t")


def test_bca_intervals_reach_every_comparison_and_ci_is_refused_for_other_tests():
    df = _systems(4, n=60, effects=(0.0, 0.03, 0.0))
    bca = compare_systems(df, test="bootstrap", ci="bca", n_resamples=499, random_state=2)
    ref = paired_bootstrap_test(df["S0"], df["S1"], ci="bca", n_resamples=499,
                                random_state=int(np.random.default_rng(2).integers(0, 2**63 - 1, size=3)[0]))
    assert (bca.lower[0], bca.upper[0]) == pytest.approx((ref.confidence_interval.lower, ref.confidence_interval.upper))
    with pytest.raises(InputError, match="ci='bca' chooses the bootstrap interval"):
        compare_systems(df, test="t", ci="bca")
