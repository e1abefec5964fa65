"""A Study's default degrees of freedom follow emmeans' rule (issue 36 item 7): Kenward-Roger for lmer fits of up
to 3,000 observations (pbkrtest.limit), Satterthwaite where Kenward-Roger is not available up to 3,000
(lmerTest.limit), z above and for GLMMs and ordinal fits; every table names the method and why; ``df=`` chooses."""

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mixeval import Study
from mixeval.significance import emmeans
from mixeval.significance._ddf import default_df

FIXTURES = Path(__file__).parents[1] / "significance" / "fixtures"
ROOT = Path(__file__).parents[2]


def _case(name):
    cases = json.loads((FIXTURES / "df_trend_fixtures.json").read_text())["cases"]
    return next(c for c in cases if c["name"] == name)


def _quiet(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call()


def test_gaussian_default_is_emmeans_default_kenward_roger():
    case = _case("unbalanced_sys")  # 334 rows: emmeans' default lmer.df is Kenward-Roger
    study = Study(pd.read_csv(ROOT / case["data"]["file"]), case["formula_py"])
    table = _quiet(lambda: study.emmeans("sys"))
    want = pd.DataFrame(case["results"]["kenward-roger"]["means"])
    np.testing.assert_allclose(table["se"], want["SE"], rtol=1e-5)
    np.testing.assert_allclose(table["df"], want["df"], rtol=1e-4)
    np.testing.assert_allclose(table["lower"], want["LCL"], rtol=1e-5)
    assert table.attrs["df_method"] == "kenward-roger"
    assert table.attrs["df_rule"] == "the default: emmeans' for lmer fits of up to 3,000 observations (334 here)"
    assert "Degrees of freedom: Kenward-Roger, the default" in table.attrs["note"]
    pairs = _quiet(lambda: study.pairwise("sys"))
    want = pd.DataFrame(case["results"]["kenward-roger"]["contrasts"]["tukey"])
    np.testing.assert_allclose(pairs.table["df"], want["df"], rtol=1e-4)
    np.testing.assert_allclose(pairs.table["pvalue"], want["p.value"], rtol=1e-4)
    assert pairs.df_method == "kenward-roger" and "Kenward-Roger (the default: emmeans'" in pairs.summary()
    assert "Kenward-Roger (the default: emmeans'" in pairs._repr_html_()
    # df= still chooses, and then no rule is claimed
    z = study.emmeans("sys", df="asymptotic")
    assert np.all(np.isinf(z["df"])) and "df_rule" not in z.attrs


def test_above_3000_rows_is_asymptotic_as_the_book():
    case = _case("table4.2_system")  # 7,287 rows: emmeans' asymptotic, the book's Table 4.2
    data = pd.read_csv(ROOT.parent / "shared" / "bookdata" / Path(case["data"]["file"]).name)
    study = Study(data, case["formula_py"])
    pairs = study.pairwise()
    assert pairs.df_method == "asymptotic" and "more than 3,000 observations" in pairs.df_rule
    want = pd.DataFrame(case["results"]["asymptotic"]["contrasts"]["tukey"])
    np.testing.assert_allclose(pairs.table["pvalue"], want["p.value"], rtol=1e-4)
    assert pairs.table["pvalue"].iloc[2] == pytest.approx(0.1625, abs=1e-4)  # Marking - PostEdit


def _small(n_items=30, reml=True, slopes=False):
    rng = np.random.default_rng(4)
    d = pd.DataFrame([(i, s, m) for i in range(n_items) for s in range(4) for m in "AB"],
                     columns=["item", "seed", "system"])
    d["x"] = rng.normal(size=len(d))
    d["score"] = rng.normal(size=n_items)[d.item] + rng.normal(0, 0.3, 4)[d.seed] + rng.normal(size=len(d))
    formula = "score ~ system + (1 + x|item) + (1|seed)" if slopes else "score ~ system + (1|item) + (1|seed)"
    return Study(d, formula, reml=reml)


def test_ml_falls_back_to_satterthwaite_with_the_reason_and_slopes_keep_kenward_roger():
    ml = _quiet(lambda: _small(reml=False).emmeans())
    assert ml.attrs["df_method"] == "satterthwaite" and "maximum likelihood" in ml.attrs["df_rule"]
    slopes = _quiet(lambda: _small(slopes=True).pairwise())  # pbkrtest takes random slopes: emmeans' default
    assert slopes.df_method == "kenward-roger" and "up to 3,000 observations" in slopes.df_rule


def test_the_rule_on_limits_and_families():
    class Fit:  # a stand-in with emmeans' inputs: the number of observations and what the fit can do
        def __init__(self, nobs):
            self.nobs, self.reml, self.theta = nobs, True, np.ones(1)
            self.family = type("F", (), {"name": "gaussian", "estimates_scale": True})()
            self.design = type("D", (), {"X": np.ones((2, 1)), "groups": [type("G", (), {"n_levels": 3})()]})()

        def satterthwaite_df(self, row):
            return 1.0

    assert default_df(Fit(3000))[0] == "kenward-roger"
    assert default_df(Fit(3001))[0] == "asymptotic"


def test_glmm_and_ordinal_defaults_are_z_and_say_so():
    rng = np.random.default_rng(2)
    d = pd.DataFrame([(i, m) for i in range(40) for m in "AB"], columns=["item", "system"])
    eta = rng.normal(size=40)[d.item] + 0.4 * (d.system == "B")
    d["correct"] = (rng.random(len(d)) < 1 / (1 + np.exp(-eta))).astype(int)
    d["rating"] = np.digitize(eta + rng.logistic(size=len(d)), [-1, 0, 1]) + 1
    binary = Study(d, "correct ~ system + (1|item)", family="binomial").emmeans()
    assert binary.attrs["df_method"] == "asymptotic" and "glmer" in binary.attrs["df_rule"]
    ordinal = Study(d, "rating ~ system + (1|item)", family="ordinal").pairwise()
    assert ordinal.df_method == "asymptotic" and "clmm" in ordinal.df_rule


def test_joint_tests_default_uses_satterthwaite_in_place_of_kenward_roger():
    table = _quiet(lambda: _small().joint_tests())
    assert table.attrs["df_method"] == "satterthwaite" and "in place of Kenward-Roger" in table.attrs["df_rule"]


def test_conditional_default_is_resolved_on_the_conditional_fit():
    study = _small()
    study.data["cls"] = np.where(study.data["item"] < 15, "short", "long")
    _, pairs, cond = _quiet(lambda: study.conditional("cls"))
    assert pairs.df_method == "kenward-roger"
    want = emmeans(cond.fit, "system", by="cls", df="kenward-roger")
    np.testing.assert_allclose(pairs.emmeans["df"], want["df"], rtol=1e-10)
