"""The one Family protocol: every registered family's log-likelihood derivatives agree with finite differences,
its simulation has the family's mean and variance, its response checks name the column, and the registry is
the one list of families."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from mixeval.errors import InputError
from mixeval.mixed import families
from mixeval.mixed.families import REGISTRY, Family, family_names, get_family

#: (family, link, response, weights, parameters on the optimiser's scale)
rng = np.random.default_rng(7)
ETA = rng.normal(0.3, 0.8, 12)
CASES = {
    "binomial": ("logit", rng.integers(0, 5, 12) / 4.0, np.full(12, 4.0), np.zeros(0)),
    "poisson": ("log", rng.poisson(2.0, 12).astype(float), np.ones(12), np.zeros(0)),
    "negative_binomial": ("log", rng.poisson(3.0, 12).astype(float), rng.uniform(0.5, 2, 12), np.log([1.7])),
    "beta": ("logit", rng.uniform(0.02, 0.98, 12), np.ones(12), np.log([6.0])),
    "beta_probit": ("probit", rng.uniform(0.02, 0.98, 12), np.ones(12), np.log([6.0])),
    "ordered_beta": ("logit", np.r_[0.0, 1.0, 0.0, rng.uniform(0.05, 0.95, 8), 1.0], np.ones(12),
                     np.array([np.log(4.0), -1.2, 1.5])),
    "beta_binomial": ("logit", rng.integers(0, 6, 12) / 5.0, np.full(12, 5.0), np.log([3.0])),
}


def _family(case: str) -> Family:
    return get_family(case.removesuffix("_probit"), CASES[case][0])


def _fd(f, x: np.ndarray, h: float = 1e-5) -> np.ndarray:
    return (f(x + h) - f(x - h)) / (2 * h)


@pytest.mark.parametrize("case", list(CASES))
def test_eta_derivatives_are_those_of_the_loglik(case):
    fam = _family(case)
    _, y, w, par = CASES[case]
    l1, l2, l3 = fam.eta_derivatives(y, ETA, w, par)
    rows = lambda e: np.array([fam.loglik(y[i:i + 1], e[i:i + 1], w[i:i + 1], par) for i in range(y.size)])
    np.testing.assert_allclose(l1, _fd(rows, ETA), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(l2, _fd(lambda e: fam.eta_derivatives(y, e, w, par)[0], ETA), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(l3, _fd(lambda e: fam.eta_derivatives(y, e, w, par)[1], ETA), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("case", [c for c in CASES if CASES[c][3].size])
def test_parameter_derivatives_are_those_of_the_loglik(case):
    fam = _family(case)
    _, y, w, par = CASES[case]
    lp, l1p, l2p = fam.parameter_derivatives(y, ETA, w, par)
    assert lp.shape == (y.size, par.size) == l1p.shape == l2p.shape
    for j in range(par.size):
        def at(v, what):
            q = par.copy()
            q[j] = v
            if what == "l":
                return np.array([fam.loglik(y[i:i + 1], ETA[i:i + 1], w[i:i + 1], q) for i in range(y.size)])
            return fam.eta_derivatives(y, ETA, w, q)[what]
        h = 1e-5
        for got, what in ((lp, "l"), (l1p, 0), (l2p, 1)):
            num = (at(par[j] + h, what) - at(par[j] - h, what)) / (2 * h)
            np.testing.assert_allclose(got[:, j], num, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("case", [c for c in CASES if CASES[c][3].size])
def test_fisher_weights_are_positive_and_the_mean_observed_information(case):
    """E[-l''] at simulated responses: the average observed information approaches the Fisher weights."""
    fam = _family(case)
    _, _, w, par = CASES[case]
    fisher = fam.fisher_weights(ETA, w, par)
    assert np.all(fisher > 0)
    if case in ("ordered_beta", "beta_binomial"):
        return  # their weights are a positive working approximation, not the exact expectation
    sims = fam.simulate(np.repeat(ETA[:, None], 20000, axis=1), w[:, None], np.random.default_rng(1), par)
    observed = np.mean([-fam.eta_derivatives(sims[:, k], ETA, w, par)[1] for k in range(2000)], axis=0)
    np.testing.assert_allclose(observed, fisher, rtol=0.08)


@pytest.mark.parametrize("case", list(CASES))
def test_simulation_has_the_family_mean_and_variance(case):
    fam = _family(case)
    _, _, w, par = CASES[case]
    n_sim = 40000
    sims = fam.simulate(np.repeat(ETA[:, None], n_sim, axis=1), w[:, None], np.random.default_rng(3), par)
    mean = fam.mean(ETA, par)
    se = sims.std(axis=1) / np.sqrt(n_sim)
    assert np.all(np.abs(sims.mean(axis=1) - mean) < 5 * se + 1e-12)
    if fam.exponential:
        return
    var = fam.variance(fam.linkinv(ETA), par, w)
    np.testing.assert_allclose(sims.var(axis=1), var, rtol=0.05)


@pytest.mark.parametrize("case", list(CASES))
def test_mean_derivatives_are_those_of_the_mean(case):
    """The delta method of response-scale means rests on them (significance/_marginal.py)."""
    fam = _family(case)
    _, _, _, par = CASES[case]
    mean, d1, d2, dp = fam.mean_derivatives(ETA, par)
    np.testing.assert_allclose(mean, fam.mean(ETA, par), rtol=1e-14)
    np.testing.assert_allclose(d1, _fd(lambda e: fam.mean(e, par), ETA), rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(d2, _fd(lambda e: fam.mean_derivatives(e, par)[1], ETA), rtol=1e-6, atol=1e-9)
    assert dp.shape == (ETA.size, par.size)
    for j in range(par.size):
        def at(v):
            q = par.copy()
            q[j] = v
            return fam.mean(ETA, q)
        np.testing.assert_allclose(dp[:, j], _fd(at, par[j]), rtol=1e-6, atol=1e-10)
    assert fam.mean_is_inverse_link == np.allclose(fam.mean(ETA, par), fam.linkinv(ETA))


@pytest.mark.parametrize("case", list(CASES))
def test_response_variance_is_that_of_the_simulated_responses(case):
    """Var(y | eta) of the scored response, the dispersion included: the observed-scale reliability's input."""
    fam = _family(case)
    _, _, w, par = CASES[case]
    sims = fam.simulate(np.repeat(ETA[:, None], 40000, axis=1), w[:, None], np.random.default_rng(4), par)
    np.testing.assert_allclose(sims.var(axis=1), fam.response_variance(ETA, par, w), rtol=0.05)


def test_labels_and_ratio_scales_are_the_familys():
    labels = {name: (get_family(name).response_label, get_family(name).ratio_name)
              for name in ("binomial", "poisson", "negative_binomial", "beta", "ordered_beta", "beta_binomial")}
    assert labels == {"binomial": ("prob", "odds_ratio"), "poisson": ("rate", "ratio"),
                      "negative_binomial": ("rate", "ratio"), "beta": ("proportion", "odds_ratio"),
                      "ordered_beta": ("proportion", None), "beta_binomial": ("prob", "odds_ratio")}
    assert get_family("binomial", "probit").ratio_name is None and get_family("beta", "probit").ratio_name is None


def test_registry_lists_every_family_once_and_pickles_by_name():
    names = family_names()
    assert names == tuple(REGISTRY) and len(set(names)) == len(names)
    assert {"gaussian", "binomial", "poisson", "negative_binomial", "beta", "ordered_beta", "beta_binomial",
            "ordinal"} <= set(names)
    for name in names:
        for link in REGISTRY[name].links:
            fam = get_family(name, link)
            assert pickle.loads(pickle.dumps(fam)) == fam and fam.name == name and fam.link == link
    assert get_family("nbinom2") == get_family("negative_binomial")
    assert get_family("ordbeta").name == "ordered_beta" and get_family("betabinomial").name == "beta_binomial"
    with pytest.raises(InputError, match="negative_binomial"):
        get_family("gamma")
    with pytest.raises(InputError, match="link"):
        get_family("negative_binomial", "logit")


@pytest.mark.parametrize("name", ["negative_binomial", "beta", "ordered_beta", "beta_binomial"])
def test_dispersion_is_glmmtmb_sigma(name):
    fam = get_family(name)
    params = np.array([np.log(2.5)] + [-1.0, 1.0][: fam.n_parameters - 1])
    assert fam.dispersion(params) == pytest.approx(2.5)
    np.testing.assert_allclose(fam.internal_parameters(list(fam.parameter_values(params).values())), params)


def test_compatibility_names_of_the_engine():
    from mixeval.mixed._family import DISTRIBUTION_VARIANCE, FAMILIES, GAUSSIAN, get_family as old_get

    assert GAUSSIAN.name == "gaussian" and GAUSSIAN.estimates_scale
    assert FAMILIES["binomial"] == ("logit", "probit") and DISTRIBUTION_VARIANCE["probit"] == 1.0
    assert old_get is families.get_family


# ----------------------------------------------------------------------------- response checks

@pytest.mark.parametrize("name, y, w, match", [
    ("beta", [0.2, 0.0, 0.5], None, "ordered_beta"),
    ("beta", [0.2, 1.0, 0.5], None, "ordered_beta"),
    ("beta", [0.2, 1.5, 0.5], None, r"\(y - a\) / \(b - a\)"),
    ("negative_binomial", [1.0, 2.5, 0.0], None, "whole counts"),
    ("negative_binomial", [1.0, -2.0, 0.0], None, "counts >= 0"),
    ("beta_binomial", [0.5, 1.4, 0.0], [4, 5, 2], "more successes than trials"),
    ("beta_binomial", [0.5, 0.3, 0.0], [4, 5, 2], "whole number of successes"),
    ("beta_binomial", [1.0, 0.0, 1.0], [1, 1, 1], "single trial"),
    ("ordered_beta", [0.2, 1.2, 0.0], None, r"\[0, 1\]"),
    ("ordered_beta", [0.0, 1.0, 1.0], None, "binomial"),
])
def test_response_checks_name_the_column_and_the_fix(name, y, w, match):
    y = np.asarray(y, dtype=float)
    w = np.ones_like(y) if w is None else np.asarray(w, dtype=float)
    with pytest.raises(InputError, match=match) as info:
        get_family(name).check_response(y, w, "rouge")
    assert "'rouge'" in str(info.value)


def test_support_tables_generate_refusals():
    for name in family_names():
        support = REGISTRY[name].support
        assert support.study_methods <= set(families.STUDY_METHODS)
        if not support.power:
            err = support.refusal(name, "power")
            assert isinstance(err, InputError) and name in str(err)
    assert REGISTRY["gaussian"].support.power and REGISTRY["binomial"].support.aggregate_sources
    assert not REGISTRY["negative_binomial"].support.aggregate_sources
