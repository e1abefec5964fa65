"""Every bad-input rule of DESIGN.md gets a clear, specific error."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mixeval.errors import ColumnError, FormulaError, IdentifiabilityWarning, InputError, ModelComparisonError, RankDeficientWarning
from mixeval.mixed import compare, lmer


@pytest.fixture
def df() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    g = np.repeat(np.arange(10), 6)
    out = pd.DataFrame({"g": g, "s": np.tile(["A", "B", "C"], 20), "h": np.tile(np.arange(6), 10)})
    out["y"] = rng.normal(size=10)[g] + rng.normal(size=60)
    return out


def test_missing_column_lists_available(df):
    with pytest.raises(ColumnError, match=r"'item'.*available columns: g, s, h, y"):
        lmer("y ~ s + (1|item)", df)
    with pytest.raises(ColumnError, match="'score'"):
        lmer("score ~ 1 + (1|g)", df)
    with pytest.raises(ColumnError, match="'sys'"):
        lmer("y ~ sys + (1|g)", df)


def test_non_numeric_response(df):
    with pytest.raises(InputError, match="response column 's' must be numeric.*to_numeric"):
        lmer("s ~ 1 + (1|g)", df)


def test_missing_and_infinite_values(df):
    bad = df.copy()
    bad.loc[3, "y"] = np.nan
    with pytest.raises(InputError, match=r"'y' has 1 missing value.*dropna"):
        lmer("y ~ 1 + (1|g)", bad)
    bad = df.copy()
    bad.loc[3, "y"] = np.inf
    with pytest.raises(InputError, match="1 infinite"):
        lmer("y ~ 1 + (1|g)", bad)
    bad = df.copy()
    bad["g"] = bad["g"].astype(object)
    bad.loc[0, "g"] = None
    with pytest.raises(InputError, match="'g' has 1 missing"):
        lmer("y ~ 1 + (1|g)", bad)


def test_single_level_and_too_many_levels(df):
    with pytest.raises(InputError, match="only 1 level"):
        lmer("y ~ 1 + (1|one)", df.assign(one="x"))
    with pytest.raises(InputError, match="60 levels for 60 observations"):
        lmer("y ~ 1 + (1|row)", df.assign(row=np.arange(60)))


def test_unsupported_formulas(df):
    with pytest.raises(FormulaError, match="no '~'"):
        lmer("y + (1|g)", df)
    with pytest.raises(InputError, match=r"response log\(y\) is missing or not finite in \d+ of 60 rows"):
        lmer("log(y) ~ 1 + (1|g)", df)  # a response expression is R's, and undefined where y <= 0
    with pytest.raises(FormulaError, match="in parentheses"):
        lmer("y ~ 1 + 1|g", df)
    with pytest.raises(TypeError, match="must be a string"):
        lmer(42, df)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="pandas DataFrame"):
        lmer("y ~ 1 + (1|g)", df.to_dict())  # type: ignore[arg-type]


def test_rank_deficient_fixed_effects_drop_the_aliased_column_as_lme4(df):
    with pytest.warns(RankDeficientWarning, match=r"dropping 2 columns / coefficients \(s2B, s2C\)"):
        fit = lmer("y ~ s + s2 + (1|g)", df.assign(s2=df.s))
    assert fit.dropped_columns == ("s2B", "s2C") and fit.fixed_names == ("(Intercept)", "sB", "sC")


def test_compare_refuses_non_nested_and_different_rows(df):
    full = lmer("y ~ s + (1|g)", df, REML=False)
    other = lmer("y ~ 1 + (1|h)", df, REML=False)
    with pytest.raises(ModelComparisonError, match="not nested"):
        compare(full, other)
    sub = lmer("y ~ 1 + (1|g)", df.iloc[:-6], REML=False)
    with pytest.raises(ModelComparisonError, match="different rows"):
        compare(full, sub)
    with pytest.raises(ModelComparisonError, match="same number of parameters"):
        compare(full, full)
    reml_a, reml_b = lmer("y ~ s + (1|g)", df), lmer("y ~ 1 + (1|g)", df)
    with pytest.raises(ModelComparisonError, match="REML likelihoods"):
        compare(reml_a, reml_b, refit=False)


def test_confounded_factors_warn(df):
    with pytest.warns(IdentifiabilityWarning, match="'g' and 'g2' partition the data identically"):
        lmer("y ~ 1 + (1|g) + (1|g2)", df.assign(g2=df.g.map(lambda v: f"x{v}")))


def test_drop_missing_only_when_asked_and_says_how_many(df):
    from mixeval import Study
    from mixeval.errors import DroppedRowsWarning

    bad = df.copy()
    bad.loc[[3, 7], "y"] = np.nan
    bad.loc[11, "y"] = np.inf
    with pytest.raises(InputError, match="missing"):
        lmer("y ~ s + (1|g)", bad)
    with pytest.warns(DroppedRowsWarning, match="dropped 3 of 60 rows"):
        fit = lmer("y ~ s + (1|g)", bad, drop_missing=True)
    ref = lmer("y ~ s + (1|g)", bad.drop(index=[3, 7, 11]))
    assert fit.nobs == 57 and fit.criterion == pytest.approx(ref.criterion, rel=1e-12)
    assert len(fit.data) == 57  # the fit carries the rows it used
    with pytest.warns(DroppedRowsWarning, match="dropped 3 of 60"):
        study = Study(bad, "y ~ s + (1|g)", drop_missing=True)
    assert len(study.data) == 57 and len(bad) == 60  # input untouched


def test_formula_that_is_not_a_string_is_an_input_type_error(df):
    from mixeval.errors import InputTypeError

    with pytest.raises(InputTypeError, match="`formula` must be a string"):
        lmer(["y ~ s + (1|g)"], df)


def test_glmer_predict_type_is_checked_before_predicting(df):
    from mixeval.mixed import glmer

    df = df.assign(hit=(df["y"] > 0).astype(float))
    fit = glmer("hit ~ 1 + (1|g)", df)
    with pytest.raises(InputError, match="`type` must be 'link' or 'response'; got 'probability'"):
        fit.predict(type="probability")
