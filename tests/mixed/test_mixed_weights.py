"""Weighted linear mixed models (prior weights, lme4's ``weights =``) against lme4 (fixtures/make_weighted_fixtures.R),
and the rules for bad weights."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mixeval
from mixeval.errors import InputError

CASES = json.loads((Path(__file__).parent / "fixtures" / "weighted_fixtures.json").read_text())["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
@pytest.mark.parametrize("reml", [True, False])
def test_weighted_lmer_matches_lme4(case, reml):
    ref = next(f for f in case["fits"] if f["reml"] == reml)
    data = pd.DataFrame(case["data"])
    fit = mixeval.lmer(case["formula"], data, weights="w", REML=reml)
    assert fit.loglik == pytest.approx(ref["loglik"], rel=1e-7) or fit.loglik > ref["loglik"]
    np.testing.assert_allclose(fit.coef, list(ref["fixef"].values()), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(list(fit.components.values()), ref["vcov"], rtol=1e-3, atol=1e-6)
    np.testing.assert_allclose(np.sqrt(np.diag(fit.cov_coef)), ref["se"], rtol=1e-3)


def test_weights_change_the_fit_and_unit_weights_do_not():
    data = pd.DataFrame(CASES[0]["data"])
    plain = mixeval.lmer("y ~ x + (1|g)", data)
    unit = mixeval.lmer("y ~ x + (1|g)", data, weights=np.ones(len(data)))
    weighted = mixeval.lmer("y ~ x + (1|g)", data, weights="w")
    assert unit.loglik == pytest.approx(plain.loglik, rel=1e-9)
    np.testing.assert_allclose(unit.coef, plain.coef, rtol=1e-7)
    assert abs(weighted.loglik - plain.loglik) > 1.0


@pytest.mark.parametrize("weights, match", [
    ("nope", "not a column"),
    (np.zeros(150), "> 0"),
    (np.ones(3), "one value per row"),
    (np.full(150, np.nan), "finite"),
])
def test_bad_weights_are_refused(weights, match):
    data = pd.DataFrame(CASES[0]["data"])
    with pytest.raises(InputError, match=match):
        mixeval.lmer("y ~ x + (1|g)", data, weights=weights)


def test_weighted_fit_refit_pickle_and_named_refusals():
    import pickle

    data = pd.DataFrame(CASES[0]["data"])
    fit = mixeval.lmer("y ~ x + (1|g)", data, weights="w")
    ref_ml = next(f for f in CASES[0]["fits"] if not f["reml"])
    assert fit.refit(REML=False).loglik == pytest.approx(ref_ml["loglik"], rel=1e-7)
    assert pickle.loads(pickle.dumps(fit)) == fit
    with pytest.raises(InputError, match="weighted lmer"):
        fit.confint(method="profile")
