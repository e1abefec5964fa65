"""Study(family="ordinal"): every method of Study works for ratings or refuses by name."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from mixeval import Study
from mixeval.errors import InputError
from mixeval.mixed import ClmmResult


@pytest.fixture(scope="module")
def study() -> Study:
    rng = np.random.default_rng(3)
    grid = pd.MultiIndex.from_product([range(16), ["A", "B", "C"], range(4)],
                                      names=["item", "system", "rater"]).to_frame(index=False)
    eta = (grid.system.map({"A": 0.0, "B": 0.5, "C": 1.0}).to_numpy() + rng.normal(0, 1.0, 16)[grid.item]
           + rng.normal(0, 0.5, 4)[grid.rater])
    grid["rating"] = np.searchsorted([-2.0, -0.7, 0.6, 2.0], eta + rng.logistic(size=len(grid))) + 1
    grid["item"] = "i" + grid.item.astype(str)
    grid["rater"] = "r" + grid.rater.astype(str)
    grid["length"] = rng.normal(size=len(grid))
    grid["domain"] = np.where(grid.item.str[1:].astype(int) % 2 == 0, "news", "chat")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        st = Study(grid, "rating ~ system + (1|item) + (1|rater)", family="ordinal", system="system", item="item")
        st.fit
    return st


def test_fits_are_clmm_fits(study):
    assert isinstance(study.fit, ClmmResult) and study.fit_ml is study.fit


def test_confint_by_every_method(study):
    """Wald, profile and bootstrap intervals of an ordinal Study through the one confint."""
    wald = study.confint(method="wald")
    prof = study.confint(method="profile", progress=False)
    boot = study.confint(method="boot", n_resamples=20, random_state=1, progress=False)
    for ci in (wald, prof, boot):
        assert list(ci.table.index) == list(study.fit.model.param_names)
        assert (ci.table.lower <= ci.table.upper).all()
    # the profile interval of a location effect is close to Wald's (192 ratings)
    assert prof.table.loc["systemC", "lower"] == pytest.approx(wald.table.loc["systemC", "lower"], abs=0.1)


@pytest.mark.parametrize("method", ["wald", "boot"])
def test_variance_components_with_intervals(study, method):
    """(The profile path is the same code: confint's table squared.)"""
    kw = {"n_resamples": 10, "random_state": 2, "progress": False} if method == "boot" else {}
    table = study.variance_components(ci=method, **kw)
    ci = study.confint(method=method, **kw).table
    row = table.set_index("component").loc["item"]
    assert row.lower == pytest.approx(ci.loc["sd_(Intercept)|item", "lower"] ** 2)
    res = table.set_index("component").loc["Residual"]  # fixed by the link: pi^2 / 3, no interval
    assert res.lower == res.upper == pytest.approx(np.pi**2 / 3)
    assert "fixed by the logit link" in table.attrs["note"]


def test_reliability_and_dstudy_on_the_latent_scale(study):
    comps = study.fit.latent_components
    phi = study.phi({"rater": 3}, scale="latent")
    expected = comps["item"] / (comps["item"] + (comps["rater"] + comps["Residual"]) / 3)
    assert phi == pytest.approx(expected, rel=1e-12)
    assert study.dstudy({"rater": [3]}, scale="latent")["phi"].iloc[0] == pytest.approx(expected, rel=1e-12)
    assert study.reliability()["scale"].tolist() == ["observed", "observed"]  # the default for ratings
    assert len(study.reliability()) == 2
    assert len(study.dstudy({"rater": [1, 3]})) == 2
    assert study.cheapest_design(0.5, max_n={"rater": 10}) is not None


def test_bootstrap_intervals_of_phi_and_the_dstudy(study):
    iv = study.phi_interval({"rater": 3}, n_resamples=15, random_state=1)
    assert iv.lower <= iv.estimate <= iv.upper
    table = study.dstudy_intervals({"rater": [1, 3]}, n_resamples=15, random_state=1)
    assert {"phi_lower", "phi_upper"} <= set(table.columns)
    best = study.cheapest_design(0.5, max_n={"rater": 10}, confidence=0.9, n_resamples=15, random_state=1)
    assert best is not None


def test_significance_methods(study):
    assert study.glrt().df == 2
    lrt = study.variance_lrt("rater")
    assert lrt.pvalue == pytest.approx(lrt.details["pvalue_naive"] / 2)
    assert len(study.emmeans()) == 3
    assert len(study.pairwise().table) == 3
    glrt, pairs, cond = study.conditional("domain")
    assert glrt.df == 4 and set(pairs.table["domain"]) == {"news", "chat"}  # system and system:domain terms
    assert isinstance(cond.fit, ClmmResult)


def test_refusals_name_the_reason(study):
    with pytest.raises(InputError, match="pair names 'Z'"):
        study.power(n={"item": [20]}, pair=("A", "Z"), test="pairwise", n_resamples=5)
    with pytest.raises(InputError, match="not available for ordinal fits; pass cuts="):
        study.conditional("length")
    with pytest.raises(InputError, match="reml=True"):
        Study(study.data, study.formula, family="ordinal", reml=True).fit
    with pytest.raises(InputError, match="ordinal"):
        study.emmeans(df="kenward-roger")
    with pytest.raises(InputError, match="averaged ratings are not ratings"):
        study.glrt_averaged("rater")
