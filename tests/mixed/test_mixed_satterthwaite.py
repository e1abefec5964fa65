"""Satterthwaite t-tests of fixed effects against lmerTest 3.1-3 (fixture section "lmertest").

Both lmerTest and mixeval differentiate numerically (lmerTest: numDeriv on the deviance in (theta, sigma);
mixeval: central differences in the variance parametrisation), so df agree to ~5e-4 relative; tolerance 2e-3,
which moves p-values by far less than 1e-4 at these df.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from mixeval.mixed import lmer

FIX = json.loads((Path(__file__).parent / "fixtures" / "lme4_fixtures.json").read_text())
CASES = [c["name"] for c in FIX["lmertest"] if "slopes" not in c["fit"]]


@pytest.mark.parametrize("name", CASES)
def test_satterthwaite_matches_lmertest(lme4_fixtures, name):
    case = lme4_fixtures.section("lmertest", name)
    fit_case = lme4_fixtures.fit(case["fit"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = lmer(fit_case["formula"], lme4_fixtures.data(fit_case), REML=fit_case["REML"])
    table = fit.coef_tests()
    for term, ref in case["satterthwaite"]["coefficients"].items():
        row = table.loc[term]
        assert row["df"] == pytest.approx(ref["df"], rel=2e-3), term
        assert row["t"] == pytest.approx(ref["t value"], rel=1e-4), term
        assert row["pvalue"] == pytest.approx(ref["Pr(>|t|)"], abs=1e-4, rel=1e-3), term


def test_satterthwaite_balanced_one_way_is_a_minus_one():
    # balanced one-way random model: the intercept's Satterthwaite df is exactly a - 1
    rng = np.random.default_rng(5)
    a, n = 12, 4
    g = np.repeat(np.arange(a), n)
    import pandas as pd

    df = pd.DataFrame({"g": g, "y": rng.normal(0, 1, a)[g] + rng.normal(0, 0.5, a * n)})
    assert lmer("y ~ 1 + (1|g)", df).coef_tests().loc["(Intercept)", "df"] == pytest.approx(a - 1, rel=1e-4)
    with pytest.raises(ValueError, match="one per fixed effect"):
        lmer("y ~ 1 + (1|g)", df).satterthwaite_df(np.ones(2))
