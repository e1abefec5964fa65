"""Power by simulation for every family: known truth (type I error, Monte Carlo SE), the response-scale effect,
the smallest design, and agreement with lme4/ordinal simulate-and-refit loops in R (simr's method) within Monte
Carlo error (fixtures/make_power_{lmm,glmm,clmm}_fixture.R)."""

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from mixeval.errors import InputError
from mixeval.mixed import get_family
from mixeval.uncertainty import power_from_components
from mixeval.uncertainty._components import marginal_mean

FIXTURES = Path(__file__).with_name("fixtures")


def _run(variances, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return power_from_components(variances, progress=False, **kw)


def test_type_one_error_of_a_binomial_study_is_near_alpha():
    """delta = 0: the GLRT and the Wald z test reject about alpha of the time (binary scores, items x seeds).
    Tolerance: 3 Monte Carlo SE of a rate of 0.05 in 300 simulations (0.038)."""
    m = 300
    r = _run({"item": 1.0, "system:seed": 0.05}, family="binomial", intercept=0.5, delta=0.0,
             n={"item": 30, "seed": 3}, test=["glrt", "pairwise"], n_resamples=m, random_state=11)
    tol = 3 * np.sqrt(0.05 * 0.95 / m)
    for _, row in r.table.iterrows():
        assert row["failed"] == 0
        assert abs(row["power"] - 0.05) < tol, row.to_dict()
        assert row["se"] == pytest.approx(np.sqrt(row["power"] * (1 - row["power"]) / m))


def test_equivalence_at_the_margin_keeps_its_level():
    """TOST with the true difference on the margin rejects at most alpha (plus 3 MC SE); inside the margin it
    gains power."""
    m = 200
    kw = dict(n={"item": 40}, test=["equivalence"], margin=0.5, df="asymptotic", n_resamples=m, random_state=5)
    edge = _run({"item": 1.0, "Residual": 1.0}, delta=0.5, **kw)
    inside = _run({"item": 1.0, "Residual": 1.0}, delta=0.0, **kw)
    assert edge.table["power"].iloc[0] < 0.05 + 3 * np.sqrt(0.05 * 0.95 / m)
    assert inside.table["power"].iloc[0] > 0.3


def test_effect_on_the_response_scale_is_a_difference_of_population_averaged_accuracy():
    r = _run({"item": 1.0}, family="binomial", baseline=0.7, effect=0.05, n={"item": 20}, n_resamples=5,
             random_state=0)
    fam = get_family("binomial")
    b0, d = r.parameters["(Intercept)"], r.parameters["systemB"]
    assert marginal_mean(fam, b0, 1.0) == pytest.approx(0.7, abs=1e-9)
    assert marginal_mean(fam, b0 + d, 1.0) - marginal_mean(fam, b0, 1.0) == pytest.approx(0.05, abs=1e-9)


def test_smallest_design_reaching_the_target():
    r = _run({"item": 0.5}, family="poisson", intercept=1.0, delta=0.3, n={"item": [10, 30, 60]}, n_resamples=60,
             random_state=2)
    t = r.table
    assert t["power"].iloc[-1] > t["power"].iloc[0]
    best = r.smallest(0.6)
    reached = t[t["power"] >= 0.6]
    assert best is not None and best["nobs"] == reached["nobs"].min()
    assert r.smallest(1.0) is None or r.table["power"].max() == 1.0


@pytest.mark.parametrize("family, kw", [
    ("negative_binomial", dict(intercept=1.0, dispersion=2.0)),
    ("beta", dict(intercept=0.0, dispersion=10.0)),
    ("ordered_beta", dict(intercept=0.0, dispersion=10.0, thresholds=[-2.0, 2.0])),
    ("beta_binomial", dict(intercept=0.0, dispersion=3.0, trials=5)),
])
def test_every_family_of_the_registry_is_simulated(family, kw):
    r = _run({"item": 0.5}, family=family, delta=0.4, n={"item": 10}, test=["glrt", "pairwise"], n_resamples=3,
             random_state=1, **kw)
    assert r.family == family and set(r.table["test"]) == {"glrt", "pairwise"}
    assert (r.table["failed"] == 0).all()
    assert r.parameters["dispersion"] == kw["dispersion"] and r.parameters["systemB"] == 0.4


@pytest.mark.parametrize("bad, match", [
    (dict(family="binomial", delta=0.3), "intercept="),
    (dict(family="negative_binomial", intercept=1.0, delta=0.3), "dispersion="),
    (dict(family="ordinal", delta=0.3), "thresholds="),
    (dict(family="poisson", intercept=1.0, delta=0.3, trials=3), "trials=3"),
    (dict(family="binomial", intercept=0.0, delta=0.3, effect=0.05), "not both"),
    (dict(delta=0.3, test="pairwise", margin=0.2), "does not use it"),
])
def test_planning_arguments_are_used_or_refused(bad, match):
    variances = {"item": 1.0} if bad.get("family") else {"item": 1.0, "Residual": 1.0}
    with pytest.raises(InputError, match=match):
        power_from_components(variances, n={"item": 10}, n_resamples=2, progress=False, **bad)


def _agree(fixture: str, variances, m: int, seed: int, **kw):
    ref = json.loads((FIXTURES / fixture).read_text())
    r = _run(variances, test=["glrt", "pairwise"], n_resamples=m, random_state=seed, **kw)
    for test in ("glrt", "pairwise"):
        row = r.table[r.table["test"] == test].iloc[0]
        mc = np.hypot(row["se"], ref[test]["se"])
        assert abs(row["power"] - ref[test]["power"]) < 3 * mc, (test, row["power"], ref[test])
    return r


@pytest.mark.slow
def test_gaussian_power_equals_lme4_refits():
    """lmer ML GLRT and emmeans' Kenward-Roger pairwise t test (REML) in R vs mixeval: within 3 combined MC SE."""
    _agree("power_lmm_fixture.json", {"item": 1.0, "system:seed": 0.1, "Residual": 0.5}, 500, 3, delta=0.5,
           n={"item": 20, "seed": 4})


@pytest.mark.slow
def test_binomial_power_equals_glmer_refits():
    """glmer (Laplace) GLRT and Wald z test in R vs mixeval: within 3 combined MC SE."""
    _agree("power_glmm_fixture.json", {"item": 1.0, "system:seed": 0.05}, 500, 4, family="binomial",
           intercept=0.5, delta=0.5, n={"item": 40, "seed": 6})


@pytest.mark.slow
def test_ordinal_power_equals_clmm_refits():
    """ordinal::clmm GLRT and Wald z test in R vs mixeval: within 3 combined MC SE."""
    _agree("power_clmm_fixture.json", {"item": 1.0, "rater": 0.3}, 100, 5, family="ordinal",
           thresholds=[-1.5, -0.5, 0.5, 1.5], delta=0.5, n={"item": 30, "rater": 4})


def test_binomial_study_with_a_random_slope_at_a_correlation_of_minus_one():
    """A binary Study with (1 + system | item) whose fitted correlation is -1 (a boundary estimate) is simulated
    from that estimate (it was refused: the correlation matrix has no strict Cholesky factor)."""
    from mixeval import Study

    rng = np.random.default_rng(0)
    import pandas as pd

    d = pd.MultiIndex.from_product([range(30), ["A", "B"], range(2)], names=["item", "system", "rep"]).to_frame(
        index=False)
    eta = 0.3 + 0.5 * (d.system == "B") + rng.normal(0, 1, 30)[d.item] + rng.normal(0, .5, 30)[d.item] * (
        d.system == "B")
    d["y"] = rng.binomial(1, 1 / (1 + np.exp(-eta)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study = Study(d, "y ~ system + (1 + system | item)", family="binomial")
        r = study.power(n={"item": [30]}, test=["glrt", "pairwise"], n_resamples=3, random_state=1, progress=False)
    assert r.parameters["cor_systemB.(Intercept)|item"] == pytest.approx(-1.0)
    assert r.family == "binomial" and (r.table["failed"] == 0).all()
