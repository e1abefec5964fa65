"""mixeval.significance against R's emmeans (lme4 fits, lmer.df = "asymptotic").

Two fixture files:
* tests/significance/fixtures/significance_fixtures.json (make_significance_fixtures.R): marginal
  means with intervals and pairwise contrasts for every adjustment WITH their adjusted intervals;
* tests/mixed/fixtures/lme4_fixtures.json, section "emmeans" (the lead's fixtures: Tables 4.2, 4.3,
  Figure 3.5, synthetic designs).

Tolerances (from the brief): estimates 1e-6 absolute, SE 1e-4 relative, p-values 1e-4 absolute
(Tukey included), interval ends 1e-6 absolute; labels exactly as emmeans prints them.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mixeval.mixed import lmer
from mixeval.significance import emmeans, pairwise

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
FIXTURES = json.loads((HERE / "fixtures" / "significance_fixtures.json").read_text())
CASES = {c["name"]: c for c in FIXTURES["cases"]}

EST_TOL = 1e-6
SE_RTOL = 1e-4
P_TOL = 1e-4
CI_TOL = 1e-6

_FITS: dict = {}


def _fit(formula: str, data: pd.DataFrame, REML: bool, key: tuple):
    if key not in _FITS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _FITS[key] = lmer(formula, data, REML=REML)
    return _FITS[key]


def _case_data(case: dict, request) -> pd.DataFrame:
    source = case["data"]["file"]
    if source.startswith("bookdata/"):
        bookdata = request.getfixturevalue("bookdata")
        df = pd.read_csv(bookdata / source.split("/", 1)[1])
        if "cls" in (case["data"].get("preprocess") or ""):
            df = df.assign(cls=np.array(["short", "typical", "very long"])[
                (df.src_length > 15).astype(int) + (df.src_length > 55).astype(int)])
        return df
    return pd.read_csv(ROOT / source)


def _labels(frame: pd.DataFrame, columns: list[str]) -> list[tuple]:
    return [tuple(str(v) for v in row) for row in frame[columns].itertuples(index=False)]


def _check_emmeans(ours: pd.DataFrame, ref: pd.DataFrame, factors: list[str], with_ci: bool) -> None:
    assert _labels(ours, factors) == _labels(ref, factors)
    np.testing.assert_allclose(ours["emmean"], ref["emmean"], rtol=0, atol=EST_TOL)
    np.testing.assert_allclose(ours["se"], ref["SE"], rtol=SE_RTOL, atol=0)
    assert np.isinf(ours["df"]).all()
    if with_ci:
        np.testing.assert_allclose(ours["lower"], ref["asymp_LCL"], rtol=0, atol=CI_TOL)
        np.testing.assert_allclose(ours["upper"], ref["asymp_UCL"], rtol=0, atol=CI_TOL)


def _check_contrasts(ours: pd.DataFrame, ref: pd.DataFrame, by: list[str], with_ci: bool) -> None:
    assert ours["contrast"].tolist() == ref["contrast"].tolist()
    for b in by:
        assert [str(v) for v in ours[b]] == ref[b].tolist()
    np.testing.assert_allclose(ours["estimate"], ref["estimate"], rtol=0, atol=EST_TOL)
    np.testing.assert_allclose(ours["se"], ref["SE"], rtol=SE_RTOL, atol=0)
    np.testing.assert_allclose(ours["z"], ref["z_ratio"], rtol=SE_RTOL, atol=0)
    np.testing.assert_allclose(ours["pvalue"], ref["p_value"], rtol=0, atol=P_TOL)
    if with_ci:
        np.testing.assert_allclose(ours["lower"], ref["asymp_LCL"], rtol=0, atol=CI_TOL)
        np.testing.assert_allclose(ours["upper"], ref["asymp_UCL"], rtol=0, atol=CI_TOL)


# ---------------------------------------------------------------- own fixtures (with intervals)
@pytest.mark.parametrize("name", list(CASES))
def test_emmeans_and_intervals_match_r(name, request):
    case = CASES[name]
    data = _case_data(case, request)
    fit = _fit(case["formula_py"], data, case["REML"], (case["formula_py"], case["data"]["file"], case["REML"]))
    by = case["by"] or []
    ours = emmeans(fit, case["specs"], by=case["by"], level=case["level"])
    _check_emmeans(ours, pd.DataFrame(case["emmeans"]), case["specs"] + by, with_ci=True)


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("adjust", ["tukey", "holm", "bonferroni", "BH", "none"])
def test_pairwise_pvalues_and_adjusted_intervals_match_r(name, adjust, request):
    case = CASES[name]
    data = _case_data(case, request)
    fit = _fit(case["formula_py"], data, case["REML"], (case["formula_py"], case["data"]["file"], case["REML"]))
    res = pairwise(fit, case["specs"], by=case["by"], adjust=adjust, level=case["level"])
    _check_contrasts(res.table, pd.DataFrame(case["contrasts"][adjust]), case["by"] or [], with_ci=True)
    # the interval method emmeans reports for this adjustment ("Conf-level adjustment: ...")
    message = " ".join(case["messages"][adjust])
    expected = "tukey" if "Conf-level adjustment: tukey" in message else (
        "bonferroni" if "Conf-level adjustment: bonferroni" in message else "none")
    assert res.ci_method == expected


def test_table_4_2_book_numbers(request):
    """The numbers the book prints in Table 4.2 (DESIGN.md reference row)."""
    case = CASES["table4.2_system"]
    fit = _fit(case["formula_py"], _case_data(case, request), True, ("t42",))
    t = pairwise(fit, "system").table.set_index("contrast")
    assert t.loc["Baseline - Marking", "estimate"] == pytest.approx(0.01234, abs=5e-6)
    assert t.loc["Baseline - Marking", "se"] == pytest.approx(0.00211, abs=5e-6)
    assert t.loc["Baseline - Marking", "pvalue"] < 1e-4
    assert t.loc["Baseline - PostEdit", "estimate"] == pytest.approx(0.00962, abs=5e-6)
    assert t.loc["Marking - PostEdit", "estimate"] == pytest.approx(-0.00272, abs=5e-6)
    assert t.loc["Marking - PostEdit", "pvalue"] == pytest.approx(0.1625, abs=5e-5)
    assert t.loc["Marking - PostEdit", "pvalue_unadjusted"] == pytest.approx(0.0685, abs=5e-5)


def test_table_4_3_book_tukey_pvalues(request):
    case = CASES["table4.3_system_by_cls"]
    fit = _fit(case["formula_py"], _case_data(case, request), True, ("t43",))
    p = pairwise(fit, "system", by="cls").table["pvalue"].to_numpy()
    book = [0.0000, 0.0002, 0.2683, 0.0175, 0.2098, 0.3052, 0.0003, 0.0000, 0.0252]
    np.testing.assert_allclose(p, book, atol=5e-5)


# ---------------------------------------------------------------- the lead's lme4 fixtures (section "emmeans")
LME4 = json.loads((ROOT / "tests" / "mixed" / "fixtures" / "lme4_fixtures.json").read_text())
LME4_EMMEANS = [c["name"] for c in LME4["emmeans"]]


@pytest.mark.parametrize("name", LME4_EMMEANS)
def test_lme4_fixture_emmeans_section(name, request):
    case = next(c for c in LME4["emmeans"] if c["name"] == name)
    fit_case = next(f for f in LME4["fits"] if f["name"] == case["fit"])
    if fit_case["data"].startswith("bookdata/"):
        fixtures = request.getfixturevalue("lme4_fixtures")
        data = fixtures.data(fit_case)
    else:
        data = pd.read_csv(ROOT / "tests" / "mixed" / "fixtures" / fit_case["data"])
    fit = _fit(fit_case["formula"], data, fit_case["REML"], ("lme4", fit_case["name"]))
    rhs = case["specs"].split("~", 1)[1]
    specs = [s.strip() for s in rhs.split("|")[0].split("*")]
    by = case["by"] or []
    _check_emmeans(emmeans(fit, specs, by=by or None), pd.DataFrame(case["emmeans"]), specs + by, with_ci=False)
    for adjust, rows in case["contrasts"].items():
        res = pairwise(fit, specs, by=by or None, adjust=adjust)
        _check_contrasts(res.table, pd.DataFrame(rows), by, with_ci=False)
