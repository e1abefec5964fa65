"""Study: roles, subsetting, the GLRTs of Table 4.1, variance-component LRTs, and a simulation study."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from mixeval.errors import InputError
from mixeval.study import Study, bin_property, drop_fixed_effect


def _simulate(rng, n_items=60, n_raters=6, n_seeds=3, s2=(1.0, 0.3, 0.2, 0.5)) -> pd.DataFrame:
    """Items x raters x seeds x 2 systems, with known variance components (item, rater, seed, residual)."""
    s2_item, s2_rater, s2_seed, s2_res = s2
    idx = pd.MultiIndex.from_product([range(n_items), range(n_raters), range(n_seeds), ["A", "B"]],
                                     names=["item", "rater", "seed", "system"]).to_frame(index=False)
    y = (rng.normal(0, np.sqrt(s2_item), n_items)[idx.item] + rng.normal(0, np.sqrt(s2_rater), n_raters)[idx.rater]
         + rng.normal(0, np.sqrt(s2_seed), n_seeds * 2)[idx.seed * 2 + (idx.system == "B")]
         + 0.2 * (idx.system == "B") + rng.normal(0, np.sqrt(s2_res), len(idx)))
    return idx.assign(score=y, seed=idx.seed.astype(str) + idx.system)


def test_roles_are_inferred_and_validated():
    df = _simulate(np.random.default_rng(0), n_items=10, n_raters=3, n_seeds=2)
    study = Study(df, "score ~ system + (1|item) + (1|rater)")
    assert (study.item, study.system) == ("item", "system")
    with pytest.raises(InputError, match="item='judge' is not a random effect"):
        Study(df, "score ~ system + (1|item)", item="judge")
    with pytest.raises(InputError, match="no random intercept"):
        Study(df, "score ~ system")
    sub = study.where(system="A")
    assert len(sub.data) == len(df) // 2 and sub.item == "item"
    assert study.where("rater < 2").data.rater.max() == 1
    with pytest.raises(InputError, match="empty"):
        study.where(system="Z")


@pytest.mark.parametrize("system, formula, words", [
    ("rater", "score ~ system + (1|item) + (1|rater)", "'rater' (system= / --system) is a random grouping factor"),
    ("seed", "score ~ system + (1|item) + (1|rater)", "'seed' (system= / --system) is not a fixed effect"),
    ("rater", "score ~ 1 + (1|item) + (1|rater)", "put it in the fixed part: 'score ~ rater + (1|item)'"),
    ("coded", "score ~ coded + (1|item)", "'coded' holds numbers (0, 1), which the formula fits as a slope"),
])
def test_the_compared_factor_must_be_a_categorical_fixed_effect(system, formula, words):
    """Issue 38: --system naming a random factor gave 'the models have the same number of parameters'."""
    df = _simulate(np.random.default_rng(1), n_items=10, n_raters=3, n_seeds=2)
    df["coded"] = (df["system"] == "B").astype(int)
    with pytest.raises(InputError, match=re.escape(words)):
        Study(df, formula, system=system)
    with pytest.raises(InputError, match=r"no system factor: .*If 'coded' codes the systems"):
        Study(df, "score ~ coded + (1|item)").glrt()


def test_drop_fixed_effect_and_bin_property():
    assert drop_fixed_effect("system * cls", "system") == "1 + cls"
    assert drop_fixed_effect("system + x", "system") == "1 + x"
    df = pd.DataFrame({"len": [1, 15, 16, 55, 56]})
    out = bin_property(df, "len", (15, 55))
    assert out["len_class"].tolist() == ["<= 15", "<= 15", "(15, 55]", "(15, 55]", "> 55"]
    assert "len_class" not in df.columns  # input untouched


@pytest.mark.filterwarnings("ignore")
def test_table_4_1_glrts(lme4_fixtures):
    ter = pd.read_csv(lme4_fixtures.bookdata / "mt_ter.csv.gz")
    study = Study(ter, "ter ~ system + (1|sentence_id)")
    lmm = study.glrt()
    ref = lme4_fixtures.section("anova", "table4.1b_lmm_lrt")
    assert lmm.statistic == pytest.approx(ref["statistic"], rel=1e-5)
    assert lmm.df == 2 and lmm.pvalue == pytest.approx(ref["pvalue"], abs=1e-4)
    assert lmm.statistic == pytest.approx(34.09, abs=0.005)
    averaged = study.glrt_averaged("replication")
    ref = lme4_fixtures.section("anova", "table4.1a_lm_lrt")
    assert averaged.statistic == pytest.approx(ref["statistic"], rel=1e-6)
    assert averaged.pvalue == pytest.approx(0.517, abs=5e-4)


@pytest.mark.filterwarnings("ignore")
def test_variance_lrt_matches_anova_refit_false(lme4_fixtures):
    for name, subset, component in [("table3.1_marking_drop_rater", "Marking", "rater")]:
        ref = lme4_fixtures.section("varcomp_lrt", name)
        raw = pd.read_csv(lme4_fixtures.bookdata / "mt_annotation.csv.gz")
        study = Study(raw[raw["mode"] == subset],
                      "score ~ (1|sentence)+(1|rater)+(1|occasion)+(1|rater:sentence)+(1|occasion:rater)+(1|occasion:sentence)",
                      item="sentence")
        res = study.variance_lrt(component)
        assert res.statistic == pytest.approx(ref["statistic"], rel=1e-4)
        assert res.pvalue == pytest.approx(ref["pvalue_mixture"], abs=1e-4)  # the boundary mixture, as documented
        assert res.details["pvalue_naive"] == pytest.approx(ref["pvalue_naive"], abs=1e-4)
        assert res.alternative == "greater" and "(one-sided, greater)" in res.summary()


def test_variance_lrt_of_a_slope_term_keeps_the_conservative_naive_pvalue():
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"item": np.repeat(np.arange(30), 4), "rater": np.tile([1, 2, 3, 4], 30),
                       "x": rng.normal(size=120)})
    df["score"] = rng.normal(size=30)[df["item"]] + rng.normal(size=120)
    res = Study(df, "score ~ x + (1 + x|item) + (1|rater)").variance_lrt("item")
    assert res.df == 3 and res.pvalue == res.details["pvalue_naive"] and "pvalue_boundary" not in res.details
    assert "conservative" in res.method


def test_simulation_recovers_variance_components_and_phi():
    # mean over replicates within 5 % of the truth (REML is unbiased-ish for balanced designs)
    truth = {"item": 1.0, "rater": 0.3, "seed": 0.2, "Residual": 0.5}
    rng = np.random.default_rng(20261122)
    est, phis = [], []
    for _ in range(60):
        df = _simulate(rng, n_items=40, n_raters=8, n_seeds=6, s2=tuple(truth.values()))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            study = Study(df, "score ~ system + (1|item) + (1|rater) + (1|seed)")
            est.append(study.fit.variances)
            phis.append(study.phi({"rater": 2}))
    mean = pd.DataFrame(est).mean()
    for k, v in truth.items():
        assert mean[k] == pytest.approx(v, rel=0.05 if k in ("item", "Residual") else 0.25), k
    true_phi = 1.0 / (1.0 + 0.3 / 2 + 0.2 + 0.5 / 2)
    assert np.mean(phis) == pytest.approx(true_phi, rel=0.05)


def test_metric_comparisons_need_a_metric_model_and_match_metric_model_metric_comparisons():
    from mixeval.metric_model import MetricModel, metric_comparisons

    rng = np.random.default_rng(3)
    n = 400
    df = pd.DataFrame({"prompt": np.tile(np.arange(n), 2), "system": np.repeat(["A", "B"], n)})
    df["toxic"] = (rng.random(2 * n) < np.where(df.system == "A", 0.10, 0.15)).astype(int)
    plain = Study(df, "toxic ~ system + (1|prompt)")
    with pytest.raises(InputError, match="no metric model"):
        plain.metric_comparisons()
    metric = MetricModel.from_rates(0.9, 0.05)
    study = Study(df, "toxic ~ system + (1|prompt)", metric_model=metric)
    table = study.metric_comparisons(methods=["uncorrected", "goyal", "calibrated"])
    expected = metric_comparisons(df, metric=metric, system="system", score="toxic", item="prompt",
                               methods=["uncorrected", "goyal", "calibrated"])
    pd.testing.assert_frame_equal(table, expected)
    assert study.where("prompt < 200").metric_model is metric


@pytest.mark.filterwarnings("ignore")
def test_factor_codings_as_in_r():
    # logical -> factor, pandas 'string' dtype -> strings, unused categories dropped (R's droplevels)
    rng = np.random.default_rng(0)
    n = 30
    df = pd.DataFrame({"item": np.repeat(np.arange(n), 4), "system": np.tile(["A", "B", "A", "B"], n)})
    df["score"] = rng.normal(size=n)[df.item] + 0.2 * (df.system == "B") + rng.normal(0, 0.5, len(df))
    ref = Study(df, "score ~ system + (1|item)")
    variants = {
        "logical": df.assign(system=df.system == "B"),
        "string": df.astype({"system": "string"}),
        "unused category": df.assign(system=pd.Categorical(df.system, categories=["A", "B", "C"])),
    }
    for label, data in variants.items():
        study = Study(data, "score ~ system + (1|item)")
        assert study.system == "system", label
        assert len(study.fit.fixed_names) == 2, label
        assert study.fit.criterion == pytest.approx(ref.fit.criterion, rel=1e-12), label
        assert abs(study.pairwise().table.estimate.iloc[0]) == pytest.approx(
            abs(ref.pairwise().table.estimate.iloc[0]), rel=1e-10), label
    assert variants["unused category"].system.cat.categories.tolist() == ["A", "B", "C"]  # input untouched
