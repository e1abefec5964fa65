"""joint_tests(): F tests of fixed-effect terms against R (fixtures/contrast/make_joint_tests_fixtures.R) on an
unbalanced design: emmeans' joint_tests (asymptotic; it stores F rounded to 3 decimals) and lmerTest's
anova(type = 3, Satterthwaite): F to 1e-6 relative, df2 to 1e-4 relative, p-values to 1e-6."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mixeval
from mixeval.errors import InputError
from mixeval.significance import joint_tests

HERE = Path(__file__).resolve().parent / "fixtures" / "contrast"
REF = json.loads((HERE / "joint_tests_fixtures.json").read_text())
DATA = pd.read_csv(HERE / "scores_unbalanced.csv")


@pytest.fixture(scope="module")
def factors():
    return mixeval.lmer("score ~ system * domain + (1|item)", DATA)


@pytest.fixture(scope="module")
def covariate():
    return mixeval.lmer("score2 ~ system * length + (1|item)", DATA)


def _check(table, ref, *, f_rounded=False, rows=None):
    rows = list(range(len(ref["term"]))) if rows is None else rows
    t = table.iloc[rows].reset_index(drop=True)
    assert list(t["term"]) == [ref["term"][i] for i in rows]
    assert list(t["df1"]) == [ref["df1"][i] for i in rows]
    f = np.array([ref["F"][i] for i in rows])
    np.testing.assert_allclose(t["F"], f, atol=5e-4 if f_rounded else 0, rtol=0 if f_rounded else 1e-6)
    df2 = np.where(np.isinf(t["df2"]), 1e300, t["df2"])
    np.testing.assert_allclose(df2, [ref["df2"][i] for i in rows], rtol=1e-4)
    np.testing.assert_allclose(t["pvalue"], [ref["pvalue"][i] for i in rows], atol=1e-6, rtol=1e-4)


def test_joint_tests_asymptotic(factors):
    _check(joint_tests(factors), REF["joint_factors"], f_rounded=True)


def test_joint_tests_by(factors):
    table = joint_tests(factors, by="domain")
    _check(table, REF["joint_by"], f_rounded=True)
    assert list(table["domain"]) == REF["joint_by"]["by"]


def test_lmertest_anova_type3(factors):
    _check(joint_tests(factors, df="satterthwaite"), REF["anova_factors"])


def test_covariate_terms(covariate):
    """emmeans holds the covariate at its mean (the system test differs from lmerTest's, which tests system at
    length = 0); the slope terms agree with both."""
    _check(joint_tests(covariate), REF["joint_covariate"], f_rounded=True)
    _check(joint_tests(covariate, df="satterthwaite"), REF["anova_covariate"], rows=[1, 2])


def test_single_df_term_is_the_squared_t():
    rng = np.random.default_rng(2)
    g = np.repeat(np.arange(20), 4)
    df = pd.DataFrame({"item": g, "system": np.tile(["A", "B"], 40)})
    df["score"] = rng.normal(size=20)[g] + (df.system == "B") * 0.4 + rng.normal(size=80)
    fit = mixeval.lmer("score ~ system + (1|item)", df)
    row = joint_tests(fit, df="satterthwaite").iloc[0]
    t = mixeval.significance.pairwise(fit, "system", df="satterthwaite").table.iloc[0]
    assert row.F == pytest.approx(t.t ** 2, rel=1e-8) and row.df2 == pytest.approx(t.df, rel=1e-8)
    assert row.pvalue == pytest.approx(t.pvalue, rel=1e-8)


def test_refusals(factors):
    with pytest.raises(InputError, match="kenward-roger"):
        joint_tests(factors, df="kenward-roger")
    with pytest.raises(InputError, match="by='nope'"):
        joint_tests(factors, by="nope")
