"""Study.conditional: numeric properties (slopes, emtrends), classes with empty cuts, argument checks, df methods."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mixeval.errors import InputError, MixevalWarning
from mixeval.study import Study

FIXTURES = Path(__file__).resolve().parents[1] / "significance" / "fixtures"
CASES = {c["name"]: c for c in json.loads((FIXTURES / "df_trend_fixtures.json").read_text())["cases"]}


def _simulate(rng, n_items=40, slopes=(0.01, 0.01, 0.01)) -> pd.DataFrame:
    item = np.repeat(np.arange(n_items), 3)
    length = rng.integers(5, 60, size=n_items)[item]
    system = np.tile(["A", "B", "C"], n_items)
    slope = np.select([system == "A", system == "B"], slopes[:2], slopes[2])
    score = rng.normal(0, 0.5, n_items)[item] + slope * length + rng.normal(0, 0.3, item.size)
    return pd.DataFrame({"item": item, "system": system, "length": length, "score": score})


def _unbalanced() -> pd.DataFrame:
    return pd.read_csv(FIXTURES / "unbalanced_crossed.csv")


@pytest.mark.parametrize("dfm", ["asymptotic", "satterthwaite", "kenward-roger"])
def test_numeric_property_gives_slopes_as_emtrends(dfm):
    case = CASES["unbalanced_trend_x"]
    study = Study(_unbalanced(), "y ~ sys + (1|item) + (1|rater)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        glrt, pairs, cond = study.conditional("x", df=dfm)
    assert cond.formula == "y ~ sys * x + (1|item) + (1|rater)"
    assert pairs.trend == "x" and pairs.df_method == dfm
    ref = case["glrt"]
    assert glrt.df == ref["df"]
    assert glrt.statistic == pytest.approx(ref["chisq"], rel=1e-5)
    assert glrt.pvalue == pytest.approx(ref["p_value"], abs=1e-6)
    slopes = case["results"][dfm]["means"]
    np.testing.assert_allclose(pairs.emmeans["trend"], [r["estimate"] for r in slopes], rtol=1e-5)
    np.testing.assert_allclose(pairs.emmeans["se"], [r["SE"] for r in slopes], rtol=2e-5)
    contrasts = case["results"][dfm]["contrasts"]["tukey"]
    assert list(pairs.table.contrast) == [r["contrast"] for r in contrasts]
    np.testing.assert_allclose(pairs.table["pvalue"], [r["p.value"] for r in contrasts], atol=1e-6)
    np.testing.assert_allclose(pairs.table["effect_size"], pairs.table["estimate"] / cond.fit.sigma, rtol=1e-12)


def test_numeric_property_on_table_4_3_data(bookdata):
    ter = pd.read_csv(bookdata / "mt_ter.csv.gz")
    glrt, pairs, _ = Study(ter, "ter ~ system + (1|sentence_id)").conditional("src_length")
    ref = CASES["ter_trend_src_length"]
    assert glrt.statistic == pytest.approx(ref["glrt"]["chisq"], rel=1e-5)
    assert glrt.pvalue == pytest.approx(ref["glrt"]["p_value"], abs=1e-6)
    np.testing.assert_allclose(pairs.emmeans["trend"], [r["estimate"] for r in ref["results"]["asymptotic"]["means"]],
                               rtol=1e-6)
    np.testing.assert_allclose(pairs.table["pvalue"], [r["p.value"] for r in ref["results"]["asymptotic"]["contrasts"]["tukey"]],
                               atol=1e-6)


def test_cuts_outside_the_data_name_the_empty_classes():
    df = _simulate(np.random.default_rng(1))
    study = Study(df, "score ~ system + (1|item)")
    with pytest.raises(InputError, match=r"'\(500, 600\]', '> 600' are empty.*ranges from"):
        study.conditional("length", cuts=(500, 600))
    with pytest.warns(MixevalWarning, match=r"'> 500' of 'length' are empty"):
        _, pairs, cond = study.conditional("length", cuts=(30, 500))
    assert list(cond.data["length_class"].cat.categories) == ["<= 30", "(30, 500]"]
    assert set(pairs.table["length_class"]) == {"<= 30", "(30, 500]"}


def test_bad_arguments_fail_before_fitting_whatever_the_number_of_contrasts():
    df = _simulate(np.random.default_rng(2))
    two = Study(df[df.system != "C"], "score ~ system + (1|item)")
    with pytest.raises(InputError, match="adjust='bogus'"):
        two.conditional("length", cuts=(30,), adjust="bogus")
    with pytest.raises(InputError, match="adjust='bogus'"):
        two.conditional("length", adjust="bogus")
    with pytest.raises(InputError, match="df='t'"):
        two.conditional("length", df="t")
    with pytest.raises(InputError, match="`cuts` must be numbers.*'abc'"):
        two.conditional("length", cuts=["abc"])
    with pytest.raises(InputError, match="df="):
        two.pairwise(df="bogus")
    with pytest.raises(InputError, match="adjust='bogus'"):
        two.pairwise(adjust="bogus")


def test_class_comparisons_carry_df_with_kenward_roger():
    df = _simulate(np.random.default_rng(3))
    df = df.drop(index=np.random.default_rng(4).choice(len(df), 20, replace=False))  # unbalanced
    study = Study(df, "score ~ system + (1|item)")
    _, pairs, _ = study.conditional("length", cuts=(30,), df="kenward-roger")
    assert pairs.df_method == "kenward-roger" and "t" in pairs.table and np.all(np.isfinite(pairs.table["df"]))
    assert np.all(pairs.table["df"] < len(df))
    means = study.emmeans(df="kenward-roger")
    assert np.all(np.isfinite(means["df"]))
