"""compare_logs against R on tests/logs/fixtures (paired_long.csv, by_crossed.csv): sandwich::vcovCL HC1,
clubSandwich CR2 + Satterthwaite df and Wald_test(test = "HTZ"), mcnemar.test / binom.test, Durkalski's clustered
McNemar with its sign-flip test enumerated, lme4 + lmerTest, emmeans' test(delta, side), power.t.test; the values
in reference.json were written by reference.R beside it."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mixeval.errors import ColumnError, InputError, InputTypeError
from mixeval.logs import compare_logs
from mixeval.logs._stats import cluster_indicator, clustered_means

FIXTURES = Path(__file__).parent / "fixtures"
REF = json.loads((FIXTURES / "reference.json").read_text())
TOL = 1e-8


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    return pd.read_csv(FIXTURES / "paired_long.csv")


def _rows(pairs: pd.DataFrame, ref: list[dict]) -> list[tuple[pd.Series, dict]]:
    out = []
    for r in ref:
        row = pairs[(pairs["model_a"] == r["model_a"]) & (pairs["model_b"] == r["model_b"])]
        assert len(row) == 1
        out.append((row.iloc[0], r))
    return out


@pytest.mark.parametrize("metric, cluster, key", [("score", "passage", "score_clustered"),
                                                  ("score", None, "score_items"),
                                                  ("correct", "passage", "correct_clustered")])
def test_pair_standard_errors_equal_sandwich_and_clubsandwich(data, metric, cluster, key):
    res = compare_logs(data, metric=metric, cluster=cluster, mixed=False)
    for row, ref in _rows(res.pairs, REF[key]):
        for col in ("estimate", "se_naive", "se_cluster", "se_cr2", "df", "pvalue"):
            assert row[col] == pytest.approx(ref[col], rel=TOL, abs=TOL), (key, col)


def test_without_clusters_cr2_is_the_paired_t_test(data):
    res = compare_logs(data, metric="score", mixed=False)
    assert np.allclose(res.pairs["se_cr2"], res.pairs["se_naive"], rtol=1e-12)
    assert np.allclose(res.pairs["df"], res.pairs["n_items"] - 1, rtol=1e-12)


def test_mcnemar_equals_r(data):
    once = data[data["repeat"] == 0]
    res = compare_logs(once, metric="correct", mixed=False)
    assert res.mcnemar_test.startswith("McNemar: ") and "mcnemar.test" in res.mcnemar_test
    for row, ref in _rows(res.pairs, REF["mcnemar"]):
        assert (row["mcnemar_b"], row["mcnemar_c"]) == (ref["b"], ref["c"])
        for col, rcol in (("mcnemar_statistic", "statistic"), ("mcnemar_pvalue_asymptotic", "pvalue_asymptotic"),
                          ("mcnemar_pvalue", "pvalue"), ("mcnemar_midp", "midp")):
            assert row[col] == pytest.approx(ref[rcol], rel=TOL, abs=TOL), col


def test_clustered_mcnemar_equals_durkalski_and_the_enumerated_sign_flip_test(data):
    once = data[data["repeat"] == 0]
    res = compare_logs(once, metric="correct", cluster="passage", mixed=False)
    assert "Durkalski" in res.mcnemar_test and "McNemar's test" in res.summary()
    assert "mcnemar_statistic Durkalski et al.'s (2003) statistic, (sum" in res.mcnemar_test  # a sentence
    for row, ref in _rows(res.pairs, REF["cluster_mcnemar"]):
        for col in ("statistic", "pvalue_asymptotic", "pvalue", "midp"):
            assert row[f"mcnemar_{col}"] == pytest.approx(ref[col], rel=TOL, abs=TOL), col
    # b and c stay the counts of discordant items; each item its own cluster gives back McNemar's exact test
    items = compare_logs(once.assign(one=once["item"]), metric="correct", cluster="one", mixed=False).pairs
    plain = compare_logs(once, metric="correct", mixed=False).pairs
    for col in ("mcnemar_b", "mcnemar_c", "mcnemar_pvalue", "mcnemar_midp"):
        np.testing.assert_allclose(items[col], plain[col], rtol=1e-12)


def test_mcnemar_is_not_given_with_repeats(data):
    res = compare_logs(data, metric="correct", mixed=False)
    assert res.pairs["mcnemar_pvalue"].isna().all()
    assert any("McNemar" in n for n in res.notes)


def test_heterogeneity_is_clubsandwichs_htz_test(data):
    res = compare_logs(data, metric="score", cluster="passage", by="subject", mixed=False)
    for row, ref in _rows(res.heterogeneity, REF["htz_subject"]):
        for col in ("statistic", "df_num", "df_den", "pvalue"):
            assert row[col] == pytest.approx(ref[col], rel=1e-8), col
    crossed = compare_logs(pd.read_csv(FIXTURES / "by_crossed.csv"), metric="score", cluster="passage", by="level",
                           mixed=False)
    for row, ref in _rows(crossed.heterogeneity, REF["htz_crossed"]):      # 3 classes that cross the passages
        for col in ("statistic", "df_num", "df_den", "pvalue"):
            assert row[col] == pytest.approx(ref[col], rel=1e-8), col
    from mixeval._adjust import adjust_pvalues
    np.testing.assert_allclose(crossed.heterogeneity["pvalue_adjusted"],
                               adjust_pvalues(crossed.heterogeneity["pvalue"], "holm"))


def test_pairs_within_classes_are_adjusted_and_printed(data):
    from mixeval._adjust import adjust_pvalues

    res = compare_logs(data, metric="score", cluster="passage", by="subject", mixed=False, adjust="bh")
    by = res.by_pairs
    np.testing.assert_allclose(by["pvalue_adjusted"], adjust_pvalues(by["pvalue"], "bh"))   # one family: 2 x 3
    text = res.summary(width=100)
    assert "Pairs within each subject" in text and "HTZ" in text
    assert all(len(line) <= 100 for line in text.splitlines() if "  " in line)
    math = compare_logs(data[data["subject"] == "math"], metric="score", cluster="passage", mixed=False)
    pd.testing.assert_series_equal(by[by["subject"] == "math"]["se_cr2"].reset_index(drop=True),
                                   math.pairs["se_cr2"], check_names=False)


@pytest.mark.parametrize("metric", ["score", "correct"])
def test_mixed_model_of_the_differences_equals_lme4_and_lmertest(data, metric):
    from scipy import stats

    res = compare_logs(data, metric=metric, cluster="passage")
    assert res.mixed_model.startswith("lmer(d ~ 1 + (1 | passage), REML)") and "Satterthwaite" in res.mixed_model
    for row, ref in _rows(res.pairs, REF[f"lmer_differences_{metric}"]):
        assert row["mixed_estimate"] == pytest.approx(ref["estimate"], rel=1e-6, abs=1e-9)
        assert row["se_mixed"] == pytest.approx(ref["se"], rel=1e-6)
        assert row["sigma_mixed"] == pytest.approx(ref["sigma"], rel=1e-6)
        assert row["sd_cluster_mixed"] == pytest.approx(ref["sd_cluster"], rel=1e-5, abs=1e-6)
        assert row["df_mixed"] == pytest.approx(ref["df"], rel=1e-4)              # lmerTest's Satterthwaite
        half = stats.t.ppf(0.975, row["df_mixed"]) * row["se_mixed"]
        assert row["upper_mixed"] - row["mixed_estimate"] == pytest.approx(half, rel=1e-12)
    assert "se_mixed" not in compare_logs(data, metric=metric, cluster="passage", mixed=False).pairs


def test_se_mixed_is_printed_beside_mixed_estimate_not_the_raw_estimate(data):
    res = compare_logs(data, metric="score", cluster="passage")
    text = res.summary(width=200)

    def header(after: str) -> list[str]:
        lines = text.split(after, 1)[1].splitlines()
        return next(line for line in lines if line.startswith("model_a  ")).split()

    mixed = header("Mixed model of the differences")
    assert mixed[:4] == ["model_a", "model_b", "mixed_estimate", "se_mixed"] and "df_mixed" in mixed
    main = header("Paired differences")
    assert "se_mixed" not in main and main[3:5] == ["estimate", "se_cr2"]


def test_mixed_model_of_all_pairs_at_once_equals_one_lmer_fit_per_pair():
    from mixeval import lmer
    from mixeval.logs._mixed import random_intercept

    rng = np.random.default_rng(5)
    sizes = rng.integers(1, 6, 30)
    cluster = np.repeat(np.arange(30), sizes)
    n = len(cluster)
    columns = np.column_stack([rng.normal(0.1, 1, n) + rng.normal(0, sd, 30)[cluster] for sd in (0, 0.2, 0.6, 1.5)])
    mask = rng.random(columns.shape) > 0.15                  # every column its own items
    cm = clustered_means(columns, mask, cluster_indicator(cluster, 30))
    fit = random_intercept(cm.sums, cm.sizes, cm.ss, cm.n, cm.estimate)
    for k in range(columns.shape[1]):
        frame = pd.DataFrame({"d": columns[mask[:, k], k], "c": cluster[mask[:, k]].astype(str)})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # singular fits where the cluster sd is 0
            ref = lmer("d ~ 1 + (1 | c)", frame)
        assert fit.estimate[k] == pytest.approx(float(ref.fixef.iloc[0]), rel=1e-6, abs=1e-8)
        assert fit.se[k] == pytest.approx(float(np.sqrt(ref.vcov.iloc[0, 0])), rel=1e-6)
        assert fit.deviance[k] <= ref.deviance + 1e-8     # the same REML criterion, at least as well minimised
        assert fit.deviance[k] == pytest.approx(ref.deviance, abs=1e-6)


def test_without_clusters_the_mixed_model_is_the_paired_t(data):
    res = compare_logs(data, metric="score")
    np.testing.assert_allclose(res.pairs["se_mixed"], res.pairs["se_naive"], rtol=1e-12)
    np.testing.assert_allclose(res.pairs["mixed_estimate"], res.pairs["estimate"], rtol=1e-12)
    np.testing.assert_allclose(res.pairs["df_mixed"], res.pairs["n_items"] - 1)
    assert "no random effect" in res.mixed_model and "Mixed model of the differences" in res.summary()


def test_one_item_per_cluster_leaves_the_cluster_variance_unidentified(data):
    once = data[data["repeat"] == 0]
    res = compare_logs(once.assign(one=once["item"]), metric="score", cluster="one")
    np.testing.assert_allclose(res.pairs["se_mixed"], res.pairs["se_naive"], rtol=1e-12)
    np.testing.assert_allclose(res.pairs["df_mixed"], res.pairs["n_items"] - 1)
    assert res.pairs["sd_cluster_mixed"].isna().all() and any("holds one shared item" in n for n in res.notes)


def test_glmm_fits_the_logistic_model_per_pair_on_request(data):
    from mixeval import glmer

    pair = data[data["model"].isin(["alpha", "beta"])]
    res = compare_logs(pair, metric="correct", cluster="passage", glmm=True)
    frame = pd.DataFrame({"y": pair["correct"].to_numpy(float), "a": (pair["model"] == "alpha").to_numpy(float),
                          "m": pair["model"].to_numpy(), "i": pair["item"].astype(str).to_numpy(),
                          "c": pair["passage"].astype(str).to_numpy()})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = glmer("y ~ a + (1|i) + (1|i:m) + (1|c) + (1|c:m)", frame, family="binomial")
    assert res.pairs.loc[0, "glmer_log_odds_ratio"] == pytest.approx(float(ref.fixef["a"]), rel=1e-8)
    assert "Logistic mixed model (GLMM, glmer)" in res.summary() and "glmer_log_odds_ratio" in res.summary()
    assert "glmer_log_odds_ratio" not in compare_logs(pair, metric="correct").pairs
    with pytest.raises(InputError, match="glmm=True.*0/1"):
        compare_logs(pair, metric="score", glmm=True)


def test_leaderboard_ses_equal_r_and_inspect_formula(data):
    res = compare_logs(data, metric="correct", cluster="passage", mixed=False)
    board = res.leaderboard.set_index("model")
    for ref in REF["per_model_correct"]:
        assert board.loc[ref["model"], "estimate"] == pytest.approx(ref["estimate"], rel=TOL)
        assert board.loc[ref["model"], "se_cluster"] == pytest.approx(ref["se_cluster"], rel=TOL)
        assert board.loc[ref["model"], "se_cr2"] == pytest.approx(ref["se_cr2"], rel=TOL)


def test_leaderboard_pairs_use_the_cr2_covariance_and_df_of_the_pairwise_tests(data):
    from scipy import stats

    res = compare_logs(data, metric="score", cluster="passage", mixed=False)
    ref = REF["max_t"]
    assert res.rank_method == "bonferroni"
    assert res.critical_value == pytest.approx(ref["bonferroni"], rel=1e-10)       # qt(1 - 0.05 / 6, CR2 df)
    assert res.critical_value == pytest.approx(stats.t.ppf(1 - 0.05 / 6, res.pairs["df"].iloc[0]), rel=1e-12)
    assert "Bonferroni over 3 pairs" in res.critical_text and "8.01 df" in res.critical_text
    # the same SEs as clubSandwich's linear_contrast of the stacked model's CR2 covariance
    np.testing.assert_allclose(res.pairs["se_cr2"], ref["se"], rtol=1e-10)


def test_max_t_rank_sets_on_request_are_seeded_and_exact(data):
    res = compare_logs(data, metric="score", cluster="passage", mixed=False, ranks="max-t")
    again = compare_logs(data, metric="score", cluster="passage", mixed=False, ranks="max-t")
    assert res.critical_value == again.critical_value                     # seeded (0) by default
    assert "seed 0" in res.critical_text and "standard error" in res.critical_text
    other = compare_logs(data, metric="score", cluster="passage", mixed=False, ranks="max-t", random_state=7)
    assert "seed 7" in other.critical_text and abs(other.critical_value - res.critical_value) < 0.01
    assert res.critical_value < compare_logs(data, metric="score", cluster="passage", mixed=False).critical_value


def test_rank_sets_are_simultaneous_and_ordered(data):
    res = compare_logs(data, metric="score", cluster="passage", mixed=False)
    b = res.leaderboard
    assert (b["rank_lower"] <= b["rank"]).all() and (b["rank"] <= b["rank_upper"]).all()
    lower = compare_logs(data, metric="score", cluster="passage", mixed=False, higher_is_better=False)
    assert list(lower.leaderboard["model"]) == list(b["model"])[::-1]


def test_well_separated_models_get_single_ranks():
    rng = np.random.default_rng(0)
    n = 400
    rows = [pd.DataFrame({"model": m, "item": np.arange(n), "s": rng.normal(shift, 0.1, n)})
            for m, shift in (("a", 0.0), ("b", 1.0), ("c", 2.0))]
    res = compare_logs(pd.concat(rows), metric="s", mixed=False)
    assert list(res.leaderboard["model"]) == ["c", "b", "a"]
    assert (res.leaderboard["rank_lower"] == res.leaderboard["rank_upper"]).all()


def test_accuracy_intervals_stay_inside_0_1():
    rng = np.random.default_rng(3)
    n = 40
    acc = {"top": 0.98, "mid": 0.7, "perfect": 1.0}
    frame = pd.concat([pd.DataFrame({"model": m, "item": np.arange(n), "passage": np.arange(n) // 4,
                                     "acc": (rng.random(n) < p).astype(float)}) for m, p in acc.items()])
    res = compare_logs(frame, metric="acc", cluster="passage", mixed=False)
    board = res.leaderboard
    assert (board["lower"] >= 0).all() and (board["upper"] <= 1).all() and "Wilson" in res.interval
    assert board.set_index("model").loc["perfect", "upper"] == 1.0
    assert board.set_index("model").loc["perfect", "lower"] < 1.0         # not a zero-width interval at 100%
    score = compare_logs(frame.assign(acc=frame["acc"] * 3), metric="acc", mixed=False)
    assert "t quantile" in score.interval                                    # not a proportion: the t interval


def test_wilson_interval_without_design_effect_is_the_score_interval():
    from statsmodels.stats.proportion import proportion_confint

    from mixeval.logs._leaderboard import wilson_interval

    n, k = np.array([50, 50, 50]), np.array([35, 50, 3])
    p = k / n
    lo, hi = wilson_interval(p, np.sqrt(p * (1 - p) / n), n, np.full(3, np.inf), 0.95)
    ref = proportion_confint(k, n, method="wilson")
    np.testing.assert_allclose(lo, ref[0], rtol=1e-10)
    np.testing.assert_allclose(hi, ref[1], rtol=1e-10)


def test_design_numbers_equal_power_t_test_and_use_a_stated_effect(data):
    res = compare_logs(data, metric="score", mixed=False, effect=0.3)
    for row, ref in _rows(res.pairs, REF["power_items"]):
        assert row["n_needed"] == ref["n_needed"]
        assert row["mdd"] == pytest.approx(ref["mdd"], rel=1e-6)        # noncentral t with the CR2 (here n - 1) df
    assert res.effect == 0.3 and res.effect_source == "stated"
    # never post-hoc power: the items needed do not move with the observed difference
    shifted = data.copy()
    shifted.loc[shifted["model"] == "alpha", "score"] += 5.0
    again = compare_logs(shifted, metric="score", mixed=False, effect=0.3)
    np.testing.assert_array_equal(again.pairs["n_needed"], res.pairs["n_needed"])
    assert "n_needed_effect" not in res.pairs


def test_mdd_uses_the_cr2_df_with_few_clusters(data):
    from scipy import stats

    res = compare_logs(data, metric="score", cluster="passage", mixed=False)
    row = res.pairs.iloc[0]
    normal = (stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) * row["se_cr2"]
    assert row["mdd"] > 1.1 * normal                                         # 8 df: larger than the z formula
    assert "var_between" in compare_logs(data, metric="score", mixed=False).pairs


def test_default_effect_is_two_points_for_accuracy(data):
    res = compare_logs(data, metric="correct", mixed=False)
    assert res.effect == 0.02 and "two points" in res.effect_source and "0.02" in res.summary()
    score = compare_logs(data, metric="score", mixed=False)
    assert "0.2 standard deviations" in score.effect_source


def test_equivalence_equals_emmeans_and_clubsandwich(data):
    plain = compare_logs(data, metric="score", mixed=False, equivalence=0.5, noninferiority=0.5)
    for row, ref in _rows(plain.pairs, REF["decisions_items"]):      # no clusters: emmeans on d ~ 1
        assert row["equivalence_statistic"] == pytest.approx(ref["equivalence_statistic"], rel=1e-8)
        assert row["equivalence_pvalue"] == pytest.approx(ref["equivalence_pvalue"], rel=1e-8)
        assert row["noninferiority_statistic_a"] == pytest.approx(ref["noninferiority_statistic"], rel=1e-8)
        assert row["noninferiority_pvalue_a"] == pytest.approx(ref["noninferiority_pvalue"], rel=1e-8)
    clustered = compare_logs(data, metric="score", cluster="passage", mixed=False, equivalence=0.5)
    for row, ref in _rows(clustered.pairs, REF["decisions_cr2"]):
        assert row["equivalence_statistic"] == pytest.approx(ref["equivalence_statistic"], rel=1e-8)
        assert row["equivalence_pvalue"] == pytest.approx(ref["equivalence_pvalue"], rel=1e-8)
    assert "Equivalence (TOST)" in clustered.summary() and "equivalence_pvalue_adjusted" in clustered.pairs


def test_leaderboard_marks_models_equivalent_to_the_best():
    rng = np.random.default_rng(4)
    n = 3000
    base = rng.normal(size=n)
    frame = pd.concat([pd.DataFrame({"model": m, "item": np.arange(n), "s": base + shift + rng.normal(0, 0.1, n)})
                       for m, shift in (("best", 1.0), ("twin", 0.995), ("far", 0.5))])
    res = compare_logs(frame, metric="s", mixed=False, equivalence=0.05)
    marks = res.leaderboard.set_index("model")["equivalent_to_best"]
    assert marks.to_dict() == {"best": True, "twin": True, "far": False}
    nonint = compare_logs(frame, metric="s", mixed=False, noninferiority=0.05)
    row = nonint.pairs.set_index(["model_a", "model_b"]).loc[("best", "twin")]
    assert row["noninferiority_pvalue_b"] < 0.001                            # twin is not worse by 0.05
    lower = compare_logs(frame, metric="s", mixed=False, noninferiority=0.05, higher_is_better=False)
    assert lower.pairs.set_index(["model_a", "model_b"]).loc[("best", "far"), "noninferiority_pvalue_a"] > 0.99


def test_adjusted_pvalues_use_holm_by_default(data):
    from mixeval._adjust import adjust_pvalues

    res = compare_logs(data, metric="score", mixed=False)
    assert np.allclose(res.pairs["pvalue_adjusted"], adjust_pvalues(res.pairs["pvalue"], "holm"))
    bh = compare_logs(data, metric="score", mixed=False, adjust="bh")
    assert np.allclose(bh.pairs["pvalue_adjusted"], adjust_pvalues(bh.pairs["pvalue"], "bh"))


def test_result_is_frozen_json_safe_and_renders(data):
    res = compare_logs(data, metric="correct", cluster="passage", by="subject", mixed=False)
    json.dumps(res.to_dict(), allow_nan=False)
    html = res.to_report().to_html()
    assert "Leaderboard" in html and "Pairs within each subject" in html and "Wilson" in html
    assert "alpha" in res.summary() and "Mixed model" not in html
    assert "made by" not in res.to_report().meta and {"mixeval", "date"} <= set(res.to_report().meta)  # once
    mixed = compare_logs(data, metric="correct", cluster="passage")
    assert "Mixed model of the differences" in mixed.to_report().to_html()
    with pytest.raises(AttributeError):
        res.metric = "x"


def test_report_tables_are_a_few_columns_wide(data):
    res = compare_logs(data, metric="correct", cluster="passage", by="subject", equivalence=0.1)
    for section in res.to_report().sections:
        for table in section.tables:
            assert table.data.shape[1] <= 11, (section.title, list(table.data.columns))


@pytest.mark.parametrize("kwargs, error, text", [
    ({"metric": "nope"}, ColumnError, "unknown metric 'nope'"),
    ({"metric": "score", "cluster": "nope"}, ColumnError, "cluster='nope'"),
    ({"metric": "score", "by": "nope"}, ColumnError, "by='nope'"),
    ({"metric": "score", "level": 1.5}, InputError, "level"),
    ({"metric": "score", "adjust": "magic"}, InputError, "adjustment"),
    ({"metric": "score", "mixed": "yes"}, InputTypeError, "mixed"),
    ({"metric": "correct", "glmm": 1}, InputTypeError, "glmm"),
    ({"metric": "score", "power": 0}, InputError, "power"),
    ({"metric": "score", "effect": 0}, InputError, "effect"),
    ({"metric": "score", "equivalence": -1}, InputError, "equivalence must be a positive number"),
    ({"metric": "score", "noninferiority": float("nan")}, InputError, "noninferiority must be a positive"),
    ({"metric": "score", "ranks": "tukey"}, InputError, "ranks must be one of"),
    ({"metric": "score", "random_state": 0}, InputError, "random_state seeds the max-t"),
    ({"metric": "score", "ranks": "max-t", "random_state": -1}, InputError, "non-negative int"),
    ({"metric": "score", "on_error": "drop"}, InputError, "on_error='drop'"),
    ({"metric": "subject"}, InputTypeError, "not numeric"),
    ({"metric": "score", "cluster": "model"}, InputError, "property of the item"),
    ({}, InputError, "name the score column"),
])
def test_bad_arguments_are_refused(data, kwargs, error, text):
    with pytest.raises(error, match=text):
        compare_logs(data, **{"mixed": False, **kwargs})


def test_one_model_no_shared_items_and_single_cluster_are_refused(data):
    with pytest.raises(InputError, match="one model only"):
        compare_logs(data[data["model"] == "alpha"], metric="score", mixed=False)
    disjoint = data.copy()
    disjoint.loc[disjoint["model"] == "beta", "item"] += "_b"
    with pytest.raises(InputError, match="'alpha' and 'beta' share 0 items"):
        compare_logs(disjoint, metric="score", mixed=False)
    one = data.assign(passage="P")
    with pytest.raises(InputError, match="single cluster"):
        compare_logs(one, metric="score", cluster="passage", mixed=False)
    infinite = data.copy()
    infinite.loc[3, "score"] = np.inf
    with pytest.raises(InputError, match="1 infinite values"):
        compare_logs(infinite, metric="score", mixed=False)


def test_on_mismatch_drop_applies_to_a_table_with_item_hashes(data):
    from mixeval.errors import DroppedRowsWarning

    table = data.assign(task="t", item_hash=data["item"].astype(str))
    table.loc[(table["model"] == "beta") & (table["item"] == "q00"), "item_hash"] = "changed"
    with pytest.warns(DroppedRowsWarning, match="left out for every model"):
        res = compare_logs(table, metric="score", on_mismatch="drop", mixed=False)
    assert any("left out for every model" in w for w in res.warnings)
    assert "left out for every model" in res.summary() and "left out for every model" in res.to_report().to_html()
    full = compare_logs(table, metric="score", mixed=False)
    assert (res.pairs["n_items"] == full.pairs["n_items"] - 1).all()
    with pytest.raises(ColumnError, match="item_hash"):
        compare_logs(data, metric="score", on_mismatch="drop")
    with pytest.raises(InputError, match="on_mismatch"):
        compare_logs(data, metric="score", on_mismatch="ignore")
