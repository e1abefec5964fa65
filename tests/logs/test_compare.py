"""compare_logs against R (sandwich::vcovCL HC1, clubSandwich CR2 + Satterthwaite df, mcnemar.test, binom.test,
lme4) on tests/logs/fixtures/paired_long.csv; the values in reference.json were written by reference.R."""

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
    res = compare_logs(data, metric=metric, cluster=cluster, mixed=False, random_state=0)
    for row, ref in _rows(res.pairs, REF[key]):
        for col in ("estimate", "se_naive", "se_cluster", "se_cr2", "df", "pvalue"):
            assert row[col] == pytest.approx(ref[col], rel=TOL, abs=TOL), (key, col)


def test_without_clusters_cr2_is_the_paired_t_test(data):
    res = compare_logs(data, metric="score", mixed=False, random_state=0)
    assert np.allclose(res.pairs["se_cr2"], res.pairs["se_naive"], rtol=1e-12)
    assert np.allclose(res.pairs["df"], res.pairs["n_items"] - 1, rtol=1e-12)


def test_mcnemar_equals_r(data):
    once = data[data["repeat"] == 0]
    res = compare_logs(once, metric="correct", mixed=False, random_state=0)
    for row, ref in _rows(res.pairs, REF["mcnemar"]):
        assert (row["mcnemar_b"], row["mcnemar_c"]) == (ref["b"], ref["c"])
        for col, rcol in (("mcnemar_statistic", "statistic"), ("mcnemar_pvalue_asymptotic", "pvalue_asymptotic"),
                          ("mcnemar_pvalue", "pvalue"), ("mcnemar_midp", "midp")):
            assert row[col] == pytest.approx(ref[rcol], rel=TOL, abs=TOL), col


def test_mcnemar_is_not_given_with_repeats(data):
    res = compare_logs(data, metric="correct", mixed=False, random_state=0)
    assert res.pairs["mcnemar_pvalue"].isna().all()
    assert any("McNemar" in n for n in res.notes)


def test_heterogeneity_f_test_equals_r(data):
    res = compare_logs(data, metric="score", cluster="passage", by="subject", mixed=False, random_state=0)
    row = res.heterogeneity.query("model_a == 'alpha' and model_b == 'beta'").iloc[0]
    ref = REF["heterogeneity_subject"]
    for col in ("statistic", "df_num", "df_den", "pvalue"):
        assert row[col] == pytest.approx(ref[col], rel=1e-8), col
    # the pairs within each class are the pairs on that class's items
    math = compare_logs(data[data["subject"] == "math"], metric="score", cluster="passage", mixed=False, random_state=0)
    by = res.by_pairs[res.by_pairs["subject"] == "math"].reset_index(drop=True)
    pd.testing.assert_series_equal(by["se_cr2"], math.pairs["se_cr2"], check_names=False)


@pytest.mark.parametrize("metric", ["score", "correct"])
def test_mixed_model_of_the_differences_equals_lme4(data, metric):
    res = compare_logs(data, metric=metric, cluster="passage", random_state=0)
    assert res.mixed_model.startswith("lmer(d ~ 1 + (1 | passage), REML)")
    for row, ref in _rows(res.pairs, REF[f"lmer_differences_{metric}"]):
        assert row["mixed_estimate"] == pytest.approx(ref["estimate"], rel=1e-6, abs=1e-9)
        assert row["se_mixed"] == pytest.approx(ref["se"], rel=1e-6)
        assert row["sigma_mixed"] == pytest.approx(ref["sigma"], rel=1e-6)
        assert row["sd_cluster_mixed"] == pytest.approx(ref["sd_cluster"], rel=1e-5, abs=1e-6)
    assert "se_mixed" not in compare_logs(data, metric=metric, cluster="passage", mixed=False).pairs


def test_mixed_model_of_all_pairs_at_once_equals_one_lmer_fit_per_pair():
    from mixeval import lmer
    from mixeval.logs._stats import random_intercept

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
    res = compare_logs(data, metric="score", random_state=0)
    np.testing.assert_allclose(res.pairs["se_mixed"], res.pairs["se_naive"], rtol=1e-12)
    np.testing.assert_allclose(res.pairs["mixed_estimate"], res.pairs["estimate"], rtol=1e-12)
    assert "no random effect" in res.mixed_model and "se_mixed:" in res.summary()


def test_glmm_fits_the_logistic_model_per_pair_on_request(data):
    from mixeval import glmer

    pair = data[data["model"].isin(["alpha", "beta"])]
    res = compare_logs(pair, metric="correct", cluster="passage", glmm=True, random_state=0)
    frame = pd.DataFrame({"y": pair["correct"].to_numpy(float), "a": (pair["model"] == "alpha").to_numpy(float),
                          "m": pair["model"].to_numpy(), "i": pair["item"].astype(str).to_numpy(),
                          "c": pair["passage"].astype(str).to_numpy()})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = glmer("y ~ a + (1|i) + (1|i:m) + (1|c) + (1|c:m)", frame, family="binomial")
    assert res.pairs.loc[0, "glmer_log_odds_ratio"] == pytest.approx(float(ref.fixef["a"]), rel=1e-8)
    assert "glmer_log_odds_ratio" not in compare_logs(pair, metric="correct", random_state=0).pairs
    with pytest.raises(InputError, match="glmm=True.*0/1"):
        compare_logs(pair, metric="score", glmm=True)


def test_leaderboard_ses_equal_r_and_inspect_formula(data):
    res = compare_logs(data, metric="correct", cluster="passage", mixed=False, random_state=0)
    board = res.leaderboard.set_index("model")
    for ref in REF["per_model_correct"]:
        assert board.loc[ref["model"], "estimate"] == pytest.approx(ref["estimate"], rel=TOL)
        assert board.loc[ref["model"], "se_cluster"] == pytest.approx(ref["se_cluster"], rel=TOL)
        assert board.loc[ref["model"], "se_cr2"] == pytest.approx(ref["se_cr2"], rel=TOL)


def test_cr1_equals_statsmodels_cluster_covariance():
    import statsmodels.api as sm

    rng = np.random.default_rng(3)
    codes = rng.integers(0, 9, 50)
    d = rng.normal(size=(50, 1)) + codes[:, None] * 0.1
    cm = clustered_means(d, np.ones_like(d, dtype=bool), cluster_indicator(codes, 9))
    fit = sm.OLS(d[:, 0], np.ones(50)).fit(cov_type="cluster", cov_kwds={"groups": codes})
    assert cm.se_cr1[0] == pytest.approx(fit.bse[0], rel=1e-12)


def test_rank_sets_are_simultaneous_and_ordered(data):
    res = compare_logs(data, metric="score", cluster="passage", mixed=False, random_state=0)
    b = res.leaderboard
    assert (b["rank_lower"] <= b["rank"]).all() and (b["rank"] <= b["rank_upper"]).all()
    assert res.critical_value > 1.96  # a max over 3 pairs exceeds the single-pair quantile
    lower = compare_logs(data, metric="score", cluster="passage", mixed=False, higher_is_better=False, random_state=0)
    assert list(lower.leaderboard["model"]) == list(b["model"])[::-1]


def test_well_separated_models_get_single_ranks():
    rng = np.random.default_rng(0)
    n = 400
    rows = [pd.DataFrame({"model": m, "item": np.arange(n), "s": rng.normal(shift, 0.1, n)})
            for m, shift in (("a", 0.0), ("b", 1.0), ("c", 2.0))]
    res = compare_logs(pd.concat(rows), metric="s", mixed=False, random_state=1)
    assert list(res.leaderboard["model"]) == ["c", "b", "a"]
    assert (res.leaderboard["rank_lower"] == res.leaderboard["rank_upper"]).all()


def test_power_numbers(data):
    res = compare_logs(data, metric="score", cluster="passage", mixed=False, effect=0.2, random_state=0)
    row = res.pairs.iloc[0]
    z = 1.959963984540054 + 0.8416212335729143
    assert row["mdd"] == pytest.approx(z * row["se_cr2"], rel=1e-9)
    assert row["n_needed_effect"] == np.ceil(z ** 2 * row["n_items"] * row["se_cr2"] ** 2 / 0.04)
    assert "var_between" in res.pairs and (res.pairs["var_within"] > 0).all()


def test_adjusted_pvalues_use_holm_by_default(data):
    from mixeval._adjust import adjust_pvalues

    res = compare_logs(data, metric="score", mixed=False, random_state=0)
    assert np.allclose(res.pairs["pvalue_adjusted"], adjust_pvalues(res.pairs["pvalue"], "holm"))
    bh = compare_logs(data, metric="score", mixed=False, adjust="bh", random_state=0)
    assert np.allclose(bh.pairs["pvalue_adjusted"], adjust_pvalues(bh.pairs["pvalue"], "bh"))


def test_result_is_frozen_json_safe_and_renders(data):
    res = compare_logs(data, metric="correct", cluster="passage", by="subject", mixed=False, random_state=0)
    json.dumps(res.to_dict(), allow_nan=False)
    html = res.to_report().to_html()
    assert "Leaderboard" in html and "Conditional on subject" in html
    assert "alpha" in res.summary() and "Mixed model:" not in html
    mixed = compare_logs(data, metric="correct", cluster="passage", random_state=0)
    assert f"Mixed model: {mixed.mixed_model}" in mixed.to_report().to_html()
    with pytest.raises(AttributeError):
        res.metric = "x"


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
    ({"metric": "score", "n_resamples": 5}, InputError, "n_resamples"),
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
    missing = data.copy()
    missing.loc[3, "score"] = np.nan
    with pytest.raises(InputError, match="1 missing or infinite"):
        compare_logs(missing, metric="score", mixed=False)


def test_on_mismatch_drop_applies_to_a_table_with_item_hashes(data):
    from mixeval.errors import DroppedRowsWarning

    table = data.assign(task="t", item_hash=data["item"].astype(str))
    table.loc[(table["model"] == "beta") & (table["item"] == "q00"), "item_hash"] = "changed"
    with pytest.warns(DroppedRowsWarning, match="left out for every model"):
        res = compare_logs(table, metric="score", on_mismatch="drop", mixed=False, random_state=0)
    full = compare_logs(table, metric="score", mixed=False, random_state=0)
    assert (res.pairs["n_items"] == full.pairs["n_items"] - 1).all()
    with pytest.raises(ColumnError, match="item_hash"):
        compare_logs(data, metric="score", on_mismatch="drop")
    with pytest.raises(InputError, match="on_mismatch"):
        compare_logs(data, metric="score", on_mismatch="ignore")
