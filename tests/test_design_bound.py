"""The lower confidence bound of ``cheapest_design(confidence=)`` (issue 36 item 14): the bootstrap-t bound on the logit
scale with each draw's expected-information covariance (the default for REML random-intercept lmer fits), the basic
bound elsewhere; coverage by ``benchmarks/sim_design_bound.py``."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit

from mixeval import Study
from mixeval.errors import InputError
from mixeval.reliability import phi, studentized_bound
from mixeval.significance import expected_variance_covariance
from mixeval.uncertainty import component_draws


def _one_way(groups=12, per=5, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"item": np.repeat(np.arange(groups), per), "rater": np.tile(np.arange(per), groups)})
    df["y"] = rng.normal(0, 0.8, groups)[df.item] + rng.normal(0, 0.4, per)[df.rater] + rng.normal(size=len(df))
    return df


def test_expected_covariance_is_the_balanced_anova_closed_form():
    df = _one_way()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = Study(df, "y ~ 1 + (1|item)").fit
    a, n = 12, 5
    s2a, s2 = 0.7, 1.3
    W = expected_variance_covariance(fit, {"item": s2a, "Residual": s2})
    var_res = 2 * s2 ** 2 / (a * n - a)
    var_item = 2 / n ** 2 * ((s2 + n * s2a) ** 2 / (a - 1) + s2 ** 2 / (a * n - a))
    assert W[1, 1] == pytest.approx(var_res, rel=1e-10)
    assert W[0, 0] == pytest.approx(var_item, rel=1e-10)
    assert W[0, 1] == pytest.approx(-s2 ** 2 * 2 / (n * (a * n - a)), rel=1e-10)


def test_studentized_bound_is_the_bootstrap_t_on_the_logit_scale():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study = Study(_one_way(seed=0), "y ~ 1 + (1|item) + (1|rater)")
        draws = component_draws(study.fit, n_resamples=60, random_state=2, progress=False)
    fit, cols = study.fit, list(draws.columns)
    order = [[*fit.group_names, "Residual"].index(c) for c in cols]
    covs = np.array([expected_variance_covariance(fit, dict(zip(cols, r)))[np.ix_(order, order)]
                     for r in draws.to_numpy()])
    W = expected_variance_covariance(fit)[np.ix_(order, order)]
    n = {"rater": 3}

    def logit_phi_se(comps, cov):
        s2, r, e = comps["item"], comps["rater"], comps["Residual"]
        err = (r + e) / 3
        g = {"item": 1 / s2, "rater": -1 / 3 / err, "Residual": -1 / 3 / err}
        g = np.array([g[c] for c in cols])
        return np.log(s2) - np.log(err), float(np.sqrt(g @ cov @ g))

    est, se_hat = logit_phi_se(fit.variances, W)
    t = np.array([-np.inf if row[cols.index("item")] == 0 else (lambda v, s: (v - est) / s)(
        *logit_phi_se(dict(zip(cols, row)), cov)) for row, cov in zip(draws.to_numpy(), covs)])
    assert np.isinf(t).sum() < len(t)  # draws with the item variance at 0 sit below every bound
    want = expit(est - np.quantile(t, 0.9) * se_hat)
    got, reach = studentized_bound(draws, "item", n, "absolute", 0.9, 0.5, covs, fit.variances, W)
    assert got == pytest.approx(want, rel=1e-10) and est == pytest.approx(logit(phi(fit, "item", n)), rel=1e-10)
    assert reach == pytest.approx(np.mean(t <= (est - logit(0.5)) / se_hat))
    choice = study.cheapest_design(0.5, max_n={"rater": 6}, confidence=0.9, draws=draws)
    assert choice.bound == "studentized" and "(studentized)" in choice.summary()
    row = choice.designs.set_index("rater").loc[3]
    assert row["phi_lower"] == pytest.approx(want, rel=1e-10)


def test_bound_defaults_and_refusals():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study = Study(_one_way(seed=3), "y ~ 1 + (1|item) + (1|rater)")
        draws = component_draws(study.fit, n_resamples=20, random_state=1, progress=False)
        basic = study.cheapest_design(0.5, max_n={"rater": 4}, confidence=0.9, draws=draws, bound="basic-logit")
    assert basic.bound == "basic-logit"
    with pytest.raises(InputError, match="needs confidence="):
        study.cheapest_design(0.5, max_n={"rater": 4}, bound="studentized")
    with pytest.raises(InputError, match="bound must be one of"):
        study.cheapest_design(0.5, max_n={"rater": 4}, confidence=0.9, draws=draws, bound="bca")
    rng = np.random.default_rng(0)
    d = pd.DataFrame([(i, s) for i in range(40) for s in range(4)], columns=["item", "seed"])
    d["correct"] = (rng.random(len(d)) < expit(rng.normal(size=40)[d.item])).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        binary = Study(d, "correct ~ 1 + (1|item) + (1|seed)", family="binomial")
        bdraws = component_draws(binary.fit, n_resamples=10, random_state=1, progress=False)
        choice = binary.cheapest_design(0.3, max_n={"seed": 8}, confidence=0.8, draws=bdraws)
    assert choice.bound == "basic-logit" and choice.scale == "observed"
    with pytest.raises(InputError, match="bound='studentized' needs"):
        binary.cheapest_design(0.3, max_n={"seed": 8}, confidence=0.8, draws=bdraws, bound="studentized")
