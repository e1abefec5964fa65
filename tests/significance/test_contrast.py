"""contrast(): emmeans' contrast methods beyond pairs against R emmeans 1.8.4 (fixtures/contrast/, its R script):
estimates and standard errors to 1e-6, df to 1e-4 relative, p-values and interval bounds to 1e-5 (dunnettx: R solves
its quantile to 5e-4, so bounds within 5e-4 se; mvt: both integrate by quasi-Monte Carlo, 2e-4)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mixeval
from mixeval.errors import InputError
from scipy import stats

from mixeval.significance import contrast, pairwise
from mixeval.significance._contrast import dunnettx_critical_value, mvt_adjusted

HERE = Path(__file__).resolve().parent / "fixtures" / "contrast"
REF = json.loads((HERE / "contrast_fixtures.json").read_text())


@pytest.fixture(scope="module")
def fit():
    return mixeval.lmer("score ~ system * domain + (1|item)", pd.read_csv(HERE / "scores.csv"))


def _check(res, ref, *, p_tol=1e-5, bound_tol=1e-5):
    t = res.table
    assert list(t["contrast"]) == ref["contrast"]
    if ref.get("by"):
        assert list(t["domain"]) == ref["by"]
    np.testing.assert_allclose(t["estimate"], ref["estimate"], atol=1e-6)
    np.testing.assert_allclose(t["se"], ref["se"], rtol=1e-6)
    dof = np.where(np.isinf(t["df"]), 1e300, t["df"])
    np.testing.assert_allclose(dof, ref["df"], rtol=1e-4)
    np.testing.assert_allclose(t["pvalue"], ref["pvalue"], atol=p_tol)
    np.testing.assert_allclose(t["lower"], ref["lower"], atol=bound_tol)
    np.testing.assert_allclose(t["upper"], ref["upper"], atol=bound_tol)


def test_trt_vs_ctrl_dunnettx(fit):
    res = contrast(fit, "system")
    assert res.adjust == "dunnettx" and res.method == "trt.vs.ctrl"
    _check(res, REF["trt_asym"], bound_tol=5e-4 * 0.0958)


def test_reference_level_and_holm(fit):
    _check(contrast(fit, "system", ref="sysB", adjust="holm"), REF["trt_ref_holm"])


def test_last_level_control_satterthwaite(fit):
    _check(contrast(fit, "system", "trt.vs.ctrlk", df="satterthwaite"), REF["trtk_satt"], bound_tol=1e-4)


def test_consecutive_mvt(fit):
    """emmeans' own mvt values carry mvtnorm's abseps = 1e-3; against the same integrals to 1e-8 (mvtnorm with
    abseps = 1e-8 in the R script) the p-values agree to 2e-5 and the critical value to 1e-4."""
    res = contrast(fit, "system", "consec")
    _check(res, REF["consec_mvt"], p_tol=1e-3, bound_tol=1e-3)
    precise = REF["consec_mvt_precise"]
    np.testing.assert_allclose(res.table["pvalue"], precise["pvalue"], atol=2e-5)
    crit = (res.table["upper"] - res.table["estimate"]) / res.table["se"]
    np.testing.assert_allclose(crit, precise["quantile"], atol=1e-4)


def test_effects_by_domain(fit):
    res = contrast(fit, "system", "eff", by="domain")
    assert res.adjust == "BH"
    _check(res, REF["eff_by"])


def test_custom_weights_kenward_roger(fit):
    res = contrast(fit, "system", {"new vs base": [-1, 1 / 3, 1 / 3, 1 / 3], "B - C": [0, 0, 1, -1]},
                   df="kenward-roger")
    assert res.adjust == "none" and res.method == "custom"
    _check(res, REF["custom_kr"], bound_tol=1e-4)


def test_revpairwise_is_pairwise_reversed(fit):
    res = contrast(fit, "system", "revpairwise")
    _check(res, REF["revpairwise"])
    same = pairwise(fit, "system")
    assert sorted(np.round(-same.table.estimate, 12)) == sorted(np.round(res.table.estimate, 12))


def test_sidak_within_domains(fit):
    _check(contrast(fit, "system", by="domain", adjust="sidak", df="satterthwaite"), REF["sidak_by"], bound_tol=1e-4)


def test_glmer_link_scale():
    """A binomial glmer on the link scale: the standard errors within 1e-3 relative (lme4's vcov is its finite-difference
    Hessian of the Laplace deviance; the estimates agree to 2e-4)."""
    g = mixeval.glmer("correct ~ system + (1|item)", pd.read_csv(HERE / "correct.csv"), family="binomial")
    ref = REF["glmer_trt"]
    res = contrast(g, "system")
    np.testing.assert_allclose(res.table["estimate"], ref["estimate"], atol=2e-4)
    np.testing.assert_allclose(res.table["se"], ref["se"], rtol=1e-3)
    np.testing.assert_allclose(res.table["pvalue"], ref["pvalue"], atol=5e-4)


def test_every_argument_is_checked(fit):
    with pytest.raises(InputError, match="ref='nope'"):
        contrast(fit, "system", ref="nope")
    with pytest.raises(InputError, match="ref= is used by the trt.vs.ctrl"):
        contrast(fit, "system", "consec", ref="base")
    with pytest.raises(InputError, match="4 finite weights"):
        contrast(fit, "system", {"bad": [1, -1]})
    with pytest.raises(InputError, match="tukey"):
        contrast(fit, "system", "consec", adjust="tukey")
    with pytest.raises(InputError, match="random_state seeds"):
        contrast(fit, "system", adjust="holm", random_state=1)
    with pytest.raises(InputError, match="unknown contrast method"):
        contrast(fit, "system", "poly")
    with pytest.raises(InputError, match="mvt"):
        contrast(fit, "system", {"a": [1, -1, 0, 0], "b": [0, 0, 0.5, -1]}, adjust="mvt", df="kenward-roger")


@pytest.mark.parametrize("df", [np.inf, 12.0])
def test_simultaneous_critical_values_cover(df):
    """Known truth: Dunnett's many-to-one statistics with equal cells are equicorrelated (rho = 1/2). Over 400,000 draws
    P(max |T| < crit) is 0.95 for mvt (MC se 3.4e-4; within 1.5e-3) and for emmeans' dunnettx approximation within
    5e-3; Sidak's and unadjusted critical values cover more and less."""
    m = 4
    R = np.full((m, m), 0.5) + 0.5 * np.eye(m)
    rng = np.random.default_rng(11)
    z = rng.multivariate_normal(np.zeros(m), R, size=400_000)
    if np.isfinite(df):
        z = z / np.sqrt(rng.chisquare(df, size=(len(z), 1)) / df)
    top = np.abs(z).max(axis=1)
    _, crit_mvt = mvt_adjusted(np.zeros(m), R, df, 0.95)
    crit_dx = dunnettx_critical_value(0.95, m, df)
    assert abs(np.mean(top < crit_mvt) - 0.95) < 1.5e-3
    assert abs(np.mean(top < crit_dx) - 0.95) < 5e-3
    assert np.mean(top < stats.t.ppf(0.975, df)) < 0.90


def test_ordinal_fits_are_pointed_to_their_own_means():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"rater": np.repeat([f"r{i}" for i in range(10)], 30), "system": np.tile(["A", "B", "C"], 100)})
    df["y"] = np.clip(np.round(3 + rng.normal(0, 1, 300) + (df.system == "B")), 1, 5).astype(int)
    with pytest.warns(mixeval.errors.SingularFitWarning):
        f = mixeval.clmm("y ~ system + (1|rater)", df)
    for fn in (contrast, pairwise):
        with pytest.raises(InputError, match="emmeans_ordinal / pairwise_ordinal"):
            fn(f, "system")
