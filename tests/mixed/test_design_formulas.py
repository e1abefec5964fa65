"""The design stage reads R's formula language: what the fixed part, the response and new rows mean."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import mixeval
from mixeval.errors import ColumnError, FormulaError, InputError
from mixeval.mixed import build_design


def _data(seed: int = 5, n_items: int = 30) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"item": np.repeat(np.arange(n_items), 4), "system": np.tile(list("ABCD"), n_items)})
    df["len"] = np.repeat(rng.integers(3, 40, n_items), 4).astype(np.int64)
    df["level"] = np.repeat(rng.integers(1, 4, n_items), 4).astype(np.int64)
    df["score"] = rng.normal(size=n_items)[df.item] + 0.01 * df.len**2 + rng.normal(size=len(df))
    df["correct"] = (df.score > df.score.median()).astype(int)
    df["k"] = rng.integers(0, 6, len(df))
    df["n"] = df.k + rng.integers(1, 6, len(df))
    return df


def test_a_squared_integer_column_is_a_square_not_xor():
    df = _data()
    fit = mixeval.lmer("score ~ system + I(len^2) + len + (1|item)", df, REML=False)
    by_hand = mixeval.lmer("score ~ system + len2 + len + (1|item)", df.assign(len2=df.len.astype(float) ** 2),
                           REML=False)
    assert fit.loglik == pytest.approx(by_hand.loglik, rel=1e-12)
    assert list(fit.fixed_names) == ["(Intercept)", "systemB", "systemC", "systemD", "I(len^2)", "len"]


def test_a_fixed_factor_with_one_level_is_refused_with_the_column_and_the_fix():
    """lme4 refuses it ("contrasts can be applied only to factors with 2 or more levels"); formulaic would drop it."""
    df = _data().assign(system="A")
    for fit in (lambda: mixeval.lmer("score ~ system + len + (1|item)", df),
                lambda: mixeval.glmer("correct ~ system + (1|item)", df, family="binomial"),
                lambda: mixeval.lmer("score ~ factor(one) + (1|item)", df.assign(one=1))):
        with pytest.raises(InputError, match=r"factor '(system|factor\(one\))' has a single level .*Remove"):
            fit()


def test_numbers_given_as_text_in_new_rows_are_named():
    df = _data()
    fit = mixeval.lmer("score ~ system + len + (1|item)", df)
    new = df.head(3).assign(len=lambda d: d.len.astype(str))
    with pytest.raises(InputError, match=r"new data column 'len' holds .* used it as a number.*to_numeric"):
        fit.predict(new)
    with pytest.raises(InputError, match="holds text"):
        mixeval.lmer("score ~ system + log(len) + (1|item)", df).predict(new)


def test_binomial_responses_as_r_reads_them():
    df = _data()
    two_column = mixeval.glmer("cbind(k, n - k) ~ system + (1|item)", df, family="binomial")
    proportion = mixeval.glmer("p ~ system + (1|item)", df.assign(p=df.k / df.n), family="binomial", weights="n")
    assert two_column.loglik == pytest.approx(proportion.loglik, rel=1e-10)
    np.testing.assert_allclose(two_column.coef, proportion.coef, rtol=1e-7)
    factor = mixeval.glmer("y ~ system + (1|item)", df.assign(y=pd.Categorical(
        np.where(df.correct == 1, "yes", "no"), categories=["no", "yes"])), family="binomial")
    binary = mixeval.glmer("correct ~ system + (1|item)", df, family="binomial")
    assert factor.loglik == pytest.approx(binary.loglik, rel=1e-12)
    with pytest.raises(InputError, match="mixeval.glmer"):
        mixeval.lmer("cbind(k, n - k) ~ system + (1|item)", df)
    with pytest.raises(InputError, match="successes out of trials"):
        mixeval.glmer("cbind(k, n - k) ~ system + (1|item)", df, family="poisson")
    with pytest.raises(InputError, match="whole counts"):
        mixeval.glmer("cbind(k, n - k + 0.5) ~ system + (1|item)", df, family="binomial")


def test_an_expression_response_is_the_model_of_the_computed_column():
    df = _data().assign(rt=lambda d: np.exp(d.score / 10))
    fit = mixeval.lmer("log(rt) ~ system + (1|item)", df, REML=False)
    same = mixeval.lmer("lrt ~ system + (1|item)", df.assign(lrt=np.log(df.rt)), REML=False)
    assert fit.loglik == pytest.approx(same.loglik, rel=1e-12) and fit.formula.startswith("log(rt)")


def test_design_columns_and_missing_values():
    df = _data()
    d = build_design("score ~ factor(level) * poly(len, 2) + offset(log(len)) + (1 + I(len/10) | item)", df)
    assert d.fixed_names[:3] == ("(Intercept)", "factor(level)2", "factor(level)3")
    assert "factor(level)3:poly(len, 2)2" in d.fixed_names
    np.testing.assert_allclose(d.offset, np.log(df.len))
    assert d.groups[0].coef_names == ("(Intercept)", "I(len/10)")
    with pytest.raises(ColumnError, match="'nothere'"):
        build_design("score ~ log(nothere) + (1|item)", df)
    with pytest.raises(InputError, match="missing"):
        build_design("score ~ log(len) + (1|item)", df.assign(len=df.len.where(df.index != 3)))
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        kept = build_design("score ~ log(len) + (1|item)", df.assign(len=df.len.where(df.index != 3)),
                            drop_missing=True)
    assert kept.nobs == len(df) - 1
    with pytest.raises(InputError, match=r"log\(len - 10\) is not finite .* rows"):
        build_design("score ~ log(len - 10) + (1|item)", df)
    with pytest.raises(FormulaError, match="offset\\(\\) belongs to the fixed part"):
        build_design("score ~ 1 + (offset(len) + x | item)", df.assign(x=1.0))
