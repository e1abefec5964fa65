"""glmer(REML=True): the restricted Laplace criterion against glmmTMB(REML = TRUE), and its purpose."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mixeval import compare
from mixeval.errors import InputError, InputTypeError
from mixeval.mixed import glmer

FIX = Path(__file__).parent / "fixtures"
CASES = json.loads((FIX / "glmer_reml" / "glmer_reml_fixtures.json").read_text())


def _fit(case, **kw):
    df = pd.read_csv(FIX / "glmer" / case["data"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return glmer(case["formula"], df, family=case["family"], weights=case["weights"] or None, REML=True, **kw)


def _key(name: str) -> str:
    return {"rep:template": "template:rep"}.get(name, name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_reml_matches_glmmtmb(name):
    """Criterion within 1e-6 relative (or lower), fixed effects 1e-5, variances 1e-4 relative (1e-5 absolute for
    the near-zero template variance of the nested case, where the criterion is flat: both tools agree on the
    criterion to 1e-12 there).

    Standard errors: ours are lme4's RX-based ``vcov`` at the REML estimate; glmmTMB's come from its
    ``sdreport`` of the integrated fixed effects and differ by up to 0.5%.
    """
    case = CASES[name]
    fit = _fit(case)
    ref = case["reml_criterion"]
    assert fit.reml and fit.deviance <= ref + 1e-6 * abs(ref)
    assert abs(fit.deviance - ref) <= 1e-6 * abs(ref)
    np.testing.assert_allclose(fit.coef, list(case["fixef"].values()), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.sqrt(np.diag(fit.cov_coef)), list(case["se"].values()), rtol=5e-3)
    ours = {_key(k): v for k, v in fit.variances.items()}
    for group, var in case["variances"].items():
        assert ours[_key(group)] == pytest.approx(var, rel=1e-4, abs=1e-5), group


def test_reml_is_ml_plus_the_fixed_effects_determinant():
    """refit() moves between the REML and the ML fit; ML gives the smaller seed variance (5 levels)."""
    case = CASES["binary_crossed"]
    reml = _fit(case)
    ml = reml.refit(REML=False)
    assert not ml.reml and ml.refit(REML=False) is ml
    assert ml.variances["seed"] < reml.variances["seed"]  # ML shrinks the seed variance (5 levels)
    again = ml.refit(REML=True)
    assert again.deviance == pytest.approx(reml.deviance, rel=1e-10)


def test_compare_refits_reml_fits_by_ml():
    case = CASES["binary_crossed"]
    df = pd.read_csv(FIX / "glmer" / case["data"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = glmer(case["formula"], df, family="binomial", REML=True)
        null = glmer("correct ~ 1 + (1|item) + (1|seed)", df, family="binomial", REML=True)
        ml = compare(glmer(case["formula"], df, family="binomial"), glmer("correct ~ 1 + (1|item) + (1|seed)", df,
                                                                           family="binomial"))
    res = compare(full, null)
    assert res.details["refitted"] and res.details["criterion"] == "ML"
    assert res.statistic == pytest.approx(ml.statistic, rel=1e-6)


def test_reml_removes_the_downward_bias_of_a_few_levels():
    """Recovery on generated data with known truth (40 items x 4 seeds x 2 systems, seed variance 0.5):
    the ML seed variance is biased down by about (1 - 1/4); REML's mean is close to the truth."""
    rng = np.random.default_rng(11)
    ml, reml = [], []
    for _ in range(40):
        item = np.repeat(np.arange(40), 8)
        seed = np.tile(np.repeat(np.arange(4), 2), 40)
        system = np.tile([0, 1], 160)
        eta = rng.normal(0, 1.0, 40)[item] + rng.normal(0, np.sqrt(0.5), 4)[seed] + 0.4 * system
        df = pd.DataFrame({"y": (rng.random(eta.size) < 1 / (1 + np.exp(-eta))).astype(int), "item": item,
                           "seed": seed, "system": np.where(system, "B", "A")})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = glmer("y ~ system + (1|item) + (1|seed)", df, family="binomial", REML=True)
        reml.append(r.variances["seed"])
        ml.append(r.refit(REML=False).variances["seed"])
    assert np.mean(ml) < np.mean(reml)
    assert abs(np.mean(reml) - 0.5) < abs(np.mean(ml) - 0.5)


def test_reml_bad_arguments():
    case = CASES["binary_crossed"]
    df = pd.read_csv(FIX / "glmer" / case["data"])
    with pytest.raises(InputTypeError, match="REML"):
        glmer(case["formula"], df, family="binomial", REML="yes")
    with pytest.raises(InputError, match="nAGQ=1"):
        glmer("correct ~ system + (1|item)", df, family="binomial", REML=True, nAGQ=5)
