"""GLRTs of nested models (book Table 4.1, Table 4.3's omnibus test) against R.

References: tests/mixed/fixtures/lme4_fixtures.json, section "anova" (R expressions in its "expr"
maps). Tolerances: statistic 1e-5 relative, p-value 1e-4 absolute.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mixeval.errors import ColumnError, InputError, ModelComparisonError
from mixeval.significance import glrt, glrt_averaged
from mixeval.study import Study

STAT_RTOL = 1e-5
P_ATOL = 1e-4


def _check(result, ref):
    assert result.statistic == pytest.approx(ref["statistic"], rel=STAT_RTOL)
    assert result.df == ref["df"]
    assert result.pvalue == pytest.approx(ref["pvalue"], abs=P_ATOL)
    assert result.pvalue == pytest.approx(stats.chi2.sf(result.statistic, result.df), rel=1e-12)


def test_table_4_1_averaged_linear_model(lme4_fixtures):
    ref = lme4_fixtures.section("anova", "table4.1a_lm_lrt")
    raw = pd.read_csv(lme4_fixtures.bookdata / "mt_ter.csv.gz")
    before = raw.copy()
    res = glrt_averaged(raw, score="ter", system="system", item="sentence_id", over="replication")
    pd.testing.assert_frame_equal(raw, before)  # input untouched
    _check(res, ref)
    assert res.details["loglik_null"] == pytest.approx(ref["loglik"][0], rel=1e-9)
    assert res.details["loglik_full"] == pytest.approx(ref["loglik"][1], rel=1e-9)
    assert res.pvalue == pytest.approx(0.517, abs=5e-4)  # the book's value
    assert res.details["residual_sd_ols"] == pytest.approx(0.2576, abs=5e-5)  # the book's residual sd
    assert res.details["n_cells"] == 3 * raw.sentence_id.nunique()


def test_table_4_1_lmem(lme4_fixtures):
    ref = lme4_fixtures.section("anova", "table4.1b_lmm_lrt")
    data = lme4_fixtures.data(lme4_fixtures.fit("table4.1b_lmm_system_ml"))
    res = glrt(data, "ter ~ system + (1|sentence_id)", "ter ~ 1 + (1|sentence_id)")
    _check(res, ref)
    assert res.details["loglik_full"] == pytest.approx(ref["loglik"][1], rel=1e-8)


def test_table_4_3_conditional_omnibus(lme4_fixtures):
    ref = lme4_fixtures.section("anova", "table4.3_lmm_lrt")
    data = lme4_fixtures.data(lme4_fixtures.fit("table4.3_lmm_interaction_ml"))
    res = glrt(data, "ter ~ system * cls + (1|sentence_id)", "ter ~ cls + (1|sentence_id)")
    _check(res, ref)
    assert res.statistic == pytest.approx(66.52, abs=5e-3)


def test_figure_3_5_delta_scheme(lme4_fixtures):
    ref = lme4_fixtures.section("anova", "figure3.5_delta_scheme_lrt")
    data = lme4_fixtures.data(lme4_fixtures.fit("figure3.5_partial_delta_ml"))
    res = glrt(data, "ter ~ src_length_class * delta_scheme + (1|sentence_id)", "ter ~ src_length_class + (1|sentence_id)")
    _check(res, ref)


def test_synthetic_interaction():
    import json
    from pathlib import Path

    root = Path(__file__).parent.parent / "mixed" / "fixtures"
    ref = next(c for c in json.loads((root / "lme4_fixtures.json").read_text())["anova"]
               if c["name"] == "syn_factorial_interaction_lrt")
    data = pd.read_csv(root / "synthetic" / "factorial_ab.csv")
    _check(glrt(data, "y ~ a * b + (1|subject)", "y ~ a + b + (1|subject)"), ref)


def test_order_of_models_does_not_matter():
    rng = np.random.default_rng(3)
    item = np.repeat(np.arange(25), 3)
    df = pd.DataFrame({"item": item, "system": np.tile(["A", "B", "C"], 25)})
    df["y"] = rng.normal(size=25)[item] + rng.normal(size=75)
    a = glrt(df, "y ~ system + (1|item)", "y ~ 1 + (1|item)")
    b = glrt(df, "y ~ 1 + (1|item)", "y ~ system + (1|item)")
    assert a.statistic == pytest.approx(b.statistic, rel=1e-12) and a.df == b.df == 2


def test_linear_model_glrt_closed_form():
    """Without random terms: W = n log(RSS0 / RSS1) (ML Gaussian linear models)."""
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"g": np.repeat(["a", "b", "c", "d"], 10), "y": rng.normal(size=40)})
    df.loc[df.g == "d", "y"] += 0.8
    res = glrt(df, "y ~ g", "y ~ 1")
    rss1 = float(((df.y - df.groupby("g").y.transform("mean")) ** 2).sum())
    rss0 = float(((df.y - df.y.mean()) ** 2).sum())
    assert res.statistic == pytest.approx(40 * np.log(rss0 / rss1), rel=1e-10)
    assert res.df == 3


def test_study_glrt_agrees(lme4_fixtures):
    """The Study's GLRTs (the lead's wiring) give the same numbers as this module."""
    data = lme4_fixtures.data(lme4_fixtures.fit("table4.1b_lmm_system_ml"))
    study = Study(data, "ter ~ system + (1|sentence_id)", item="sentence_id", system="system")
    ours = glrt(data, "ter ~ system + (1|sentence_id)", "ter ~ 1 + (1|sentence_id)")
    assert study.glrt().statistic == pytest.approx(ours.statistic, rel=1e-9)
    averaged = glrt_averaged(data, score="ter", system="system", item="sentence_id", over="replication")
    assert study.glrt_averaged("replication").statistic == pytest.approx(averaged.statistic, rel=1e-9)


# ---------------------------------------------------------------- bad input
def _toy():
    rng = np.random.default_rng(5)
    item = np.repeat(np.arange(10), 3)
    return pd.DataFrame({"item": item, "system": np.tile(["A", "B", "C"], 10), "seed": 1,
                         "y": rng.normal(size=30)})


def test_not_nested_is_an_error():
    df = _toy().assign(x=np.arange(30.0))
    with pytest.raises(ModelComparisonError, match="not nested"):
        glrt(df, "y ~ system + (1|item)", "y ~ x + (1|item)")


def test_formula_must_be_a_string():
    with pytest.raises(InputError, match="full_formula"):
        glrt(_toy(), None, "y ~ 1")
    with pytest.raises(InputError, match="null_formula"):
        glrt(_toy(), "y ~ system", "y")


def test_averaged_missing_column_lists_columns():
    with pytest.raises(ColumnError, match="replication"):
        glrt_averaged(_toy(), score="y", system="system", item="item", over="replication")


def test_averaged_single_system():
    with pytest.raises(InputError, match="single level"):
        glrt_averaged(_toy().assign(system="A"), score="y", system="system", item="item", over="seed")


def test_averaged_non_numeric_score():
    with pytest.raises(InputError):
        glrt_averaged(_toy().assign(y="x"), score="y", system="system", item="item", over="seed")
