"""Negative binomial, beta, ordered beta and beta-binomial fits against glmmTMB (fixtures made by
tests/mixed/fixtures/glmmtmb/make_glmmtmb_fixtures.R on real and simulated data).

Tolerances (the issue's, glmmTMB's optimiser tolerances): log-likelihood equal or higher than glmmTMB's to 1e-6
relative; fixed effects 1e-3; random-effect variances, the dispersion and the standard errors 2% relative. REML
cases (glmmTMB's ``REML = TRUE``) compare the restricted log-likelihood, the variances and the dispersion (glmmTMB
reports the joint mode of random and fixed effects as its fixed effects, mixeval the Laplace deviance's mode at the
REML variances: see :func:`mixeval.glmer`).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mixeval
from mixeval.errors import MixevalWarning

HERE = Path(__file__).resolve().parents[1] / "fixtures" / "glmmtmb"
BOOKDATA = Path(__file__).resolve().parents[3].parent / "shared" / "bookdata"
FIXTURES = json.loads((HERE / "glmmtmb_fixtures.json").read_text())["cases"]


def _data(case: dict) -> pd.DataFrame:
    path = BOOKDATA / case["file"] if case["book"] else HERE / case["file"]
    if not path.exists():
        pytest.skip(f"{path} is not available")
    d = pd.read_csv(path, dtype=str)
    numeric = case["numeric"] if isinstance(case["numeric"], list) else [case["numeric"]]
    for column in numeric:
        d[column] = d[column].astype(float)
    return d


def _fit(name: str):
    case = FIXTURES[name]
    d = _data(case)
    weights = None
    if case["trials"]:
        response = case["formula"].split("~")[0].strip()
        d[response] = d[response] / d[case["trials"]]
        weights = case["trials"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MixevalWarning)
        return case, mixeval.fit(case["formula"], d, family=case["family"], weights=weights, REML=case["reml"])


@pytest.fixture(scope="module")
def fits() -> dict:
    return {}


def _cached(fits: dict, name: str):
    if name not in fits:
        fits[name] = _fit(name)
    return fits[name]


@pytest.mark.parametrize("name", list(FIXTURES))
def test_loglik_fixed_effects_and_dispersion_equal_glmmtmb(fits, name):
    case, fit = _cached(fits, name)
    assert fit.family.name == case["family"] and fit.nobs == case["nobs"] and fit.reml == case["reml"]
    # the Laplace likelihood at our optimum is at least glmmTMB's
    assert fit.loglik >= case["loglik"] - 1e-6 * abs(case["loglik"])
    assert fit.loglik == pytest.approx(case["loglik"], rel=1e-5)
    assert fit.dispersion == pytest.approx(case["dispersion"], rel=0.02)
    if case["reml"]:
        return
    ref = pd.Series(case["fixef"])
    got = fit.fixef.reindex(ref.index)
    np.testing.assert_allclose(got, ref, atol=1e-3, rtol=1e-3)
    if case["psi"] is not None:
        cut = fit.family_parameters
        np.testing.assert_allclose([cut["cutpoint_lower"], cut["cutpoint_upper"]], case["psi"], atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize("name", list(FIXTURES))
def test_variances_and_standard_errors_equal_glmmtmb(fits, name):
    case, fit = _cached(fits, name)
    vc = fit.varcorr
    for key, sd in case["sd"].items():
        group, coef = key.rsplit(".", 1) if not key.endswith(".(Intercept)") else (key[: -len(".(Intercept)")],
                                                                                   "(Intercept)")
        row = vc[(vc.group == group) & (vc.name == coef)]
        assert len(row) == 1, key
        if sd < 1e-3:  # a boundary estimate: both at (numerically) zero
            assert float(row["std"].iloc[0]) < 1e-3
            continue
        assert float(row["variance"].iloc[0]) == pytest.approx(sd**2, rel=0.02)
    if case["cor"]:
        for key, value in case["cor"].items():
            group = key[: -len(".cor")]
            corr = [c for label, c in fit.correlations.items() if label.endswith(f"| {group})")][0]
            assert corr.to_numpy()[1, 0] == pytest.approx(value, abs=0.02)
    if case["reml"]:
        return
    ref_se = pd.Series(case["se"])
    got_se = fit.coefficients["se"].reindex(ref_se.index)
    np.testing.assert_allclose(got_se, ref_se, rtol=0.02)
    if case["log_dispersion_se"] is not None:
        assert fit.family_parameters_se["dispersion"] == pytest.approx(case["log_dispersion_se"], rel=0.02)


def test_beta_binomial_cbind_and_proportions_give_one_fit(fits):
    """pass@k as successes / trials with weights=trials is R's cbind(k, n - k) (the fixture's glmmTMB call)."""
    case, fit = _cached(fits, "sim_betabin")
    assert case["r_formula"].startswith("cbind(k, n - k)")
    np.testing.assert_array_equal(fit.weights, 10.0)
    assert 0 < fit.dispersion < 50
