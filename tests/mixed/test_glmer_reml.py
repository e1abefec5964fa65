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
from mixeval.mixed._glmm import GlmmFit
from mixeval.mixed._pirls import supports_beta_gradient

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

    The reported fixed effects are not glmmTMB's joint mode but the Laplace deviance's mode at the REML theta
    (:func:`laplace_beta_at`; the joint mode is biased towards 0 for binary data): checked here to be the
    stationary point of the Laplace deviance in beta and within 0.2 standard errors of the joint mode.
    """
    case = CASES[name]
    fit = _fit(case)
    ref = case["reml_criterion"]
    assert fit.reml and fit.deviance <= ref + 1e-6 * abs(ref)
    assert abs(fit.deviance - ref) <= 1e-6 * abs(ref)
    # glmmTMB reports the joint mode of (u, beta): the engine's REML stage ends there
    engine = GlmmFit(fit.problem, 1)
    engine.stage1_reml(fit.theta)
    np.testing.assert_allclose(engine.beta, list(case["fixef"].values()), rtol=1e-5, atol=1e-6)
    ours = {_key(k): v for k, v in fit.variances.items()}
    for group, var in case["variances"].items():
        assert ours[_key(group)] == pytest.approx(var, rel=1e-4, abs=1e-5), group
    if supports_beta_gradient(fit.problem):
        _, grad = engine.stage2_and_gradient_beta(np.concatenate([fit.theta, fit.coef]))
        assert np.max(np.abs(grad)) < 1e-4
    se = np.sqrt(np.diag(fit.cov_coef))
    assert np.all(np.abs(fit.coef - np.array(list(case["fixef"].values()))) < 0.2 * se)


def test_reml_fixed_effects_are_not_attenuated():
    """At 90% accuracy with 5 seeds the joint mode of (u, beta) is biased towards 0 by ~0.15 on the logit scale
    (half a standard error); the Laplace mode at the REML theta is not (known truth, 30 data sets)."""
    b0 = np.log(9)
    rng = np.random.default_rng(7)
    ours, joint = [], []
    for _ in range(30):
        item = np.repeat(np.arange(60), 15)
        seed = np.tile(np.repeat(np.arange(5), 3), 60)
        eta = b0 + rng.normal(0, 1, 60)[item] + rng.normal(0, 0.4, 5)[seed]
        df = pd.DataFrame({"item": item, "seed": seed, "y": (rng.random(item.size) < 1 / (1 + np.exp(-eta))).astype(int)})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = glmer("y ~ 1 + (1|item) + (1|seed)", df, REML=True)
        engine = GlmmFit(fit.problem, 1)
        engine.stage1_reml(fit.theta)
        ours.append(fit.coef[0])
        joint.append(engine.beta[0])
    assert np.mean(joint) - b0 < -0.08
    assert abs(np.mean(ours) - b0) < 0.06


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
