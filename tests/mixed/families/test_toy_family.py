"""Adding a family touches only its own file and the registry: two families defined here, in the test suite alone,
are registered and fitted through the one protocol, and give the fits of engines they must agree with.

* ``toy_normal``: a Gaussian response with identity link and its residual SD as the family's parameter (a
  ``"dispersion"``), fitted by the Laplace path; the Laplace approximation is exact for it, so the fit is lmer's
  maximum-likelihood fit (log-likelihood, fixed effects, their SEs, variances, sigma).
* ``toy_poisson``: the Poisson distribution written through ``loglik`` and its derivatives (not lme4's deviance
  kernel); its fit is the built-in Poisson family's (itself tested against lme4's glmer).
"""

from __future__ import annotations

import json
import pickle
import warnings
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest
from scipy import special

import mixeval
from mixeval.errors import MixevalWarning
from mixeval.mixed import families
from mixeval.mixed.families import Family, Support, get_family, register_family, unregister_family


@dataclass(frozen=True, eq=False, repr=False)
class ToyNormal(Family):
    """``y ~ N(eta, sigma^2 / w)`` with ``log sigma`` the optimiser's coordinate."""

    name: ClassVar[str] = "toy_normal"
    links: ClassVar[tuple[str, ...]] = ("identity",)
    parameter_names: ClassVar[tuple[str, ...]] = ("dispersion",)
    parameter_kinds: ClassVar[tuple[str, ...]] = ("dispersion",)
    description: ClassVar[str] = "a test family"
    support: ClassVar[Support] = Support(study_methods=frozenset({"fit"}), intervals=frozenset({"wald"}),
                                         power=False, aggregate_sources=False)

    def start_parameters(self, y, weights, mu):
        return np.array([np.log(np.std(y - mu))])

    def loglik(self, y, eta, weights, params):
        s2 = np.exp(2 * params[0])
        return float(np.sum(weights * (-0.5 * np.log(2 * np.pi * s2) - 0.5 * (y - eta) ** 2 / s2)))

    def eta_derivatives(self, y, eta, weights, params, third=True):
        s2 = np.exp(2 * params[0])
        return weights * (y - eta) / s2, -weights / s2 * np.ones_like(eta), (np.zeros_like(eta) if third else None)

    def fisher_weights(self, eta, weights, params):
        return weights / np.exp(2 * params[0]) * np.ones_like(eta)

    def parameter_derivatives(self, y, eta, weights, params):
        s2 = np.exp(2 * params[0])
        r = y - eta
        return ((weights * (-1 + r * r / s2))[:, None], (-2 * weights * r / s2)[:, None],
                (2 * weights / s2 * np.ones_like(eta))[:, None])

    def variance(self, mu, params=(), weights=1.0):
        return np.exp(2 * params[0]) / weights * np.ones_like(mu)

    def simulate(self, eta, weights, rng, params=()):
        return eta + rng.normal(0, np.exp(params[0]), np.shape(eta)) / np.sqrt(weights)


@dataclass(frozen=True, eq=False, repr=False)
class ToyPoisson(Family):
    """The Poisson distribution through the general protocol (log link)."""

    name: ClassVar[str] = "toy_poisson"
    links: ClassVar[tuple[str, ...]] = ("log",)
    description: ClassVar[str] = "a test family"

    def loglik(self, y, eta, weights, params):
        return float(np.sum(weights * (y * eta - np.exp(eta) - special.gammaln(y + 1))))

    def eta_derivatives(self, y, eta, weights, params, third=True):
        mu = np.exp(eta)
        return weights * (y - mu), -weights * mu, (-weights * mu if third else None)

    def fisher_weights(self, eta, weights, params):
        return weights * np.exp(eta)

    def variance(self, mu, params=(), weights=1.0):
        return mu

    def simulate(self, eta, weights, rng, params=()):
        return rng.poisson(np.exp(eta)).astype(float)


@pytest.fixture
def toys():
    for cls in (ToyNormal, ToyPoisson):
        register_family(cls)
    yield
    for cls in (ToyNormal, ToyPoisson):
        unregister_family(cls.name)


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    item = np.repeat(np.arange(30), 6)
    system = np.tile(np.repeat(["A", "B", "C"], 2), 30)
    seed = np.tile([0, 1], 90)
    eta = 0.5 + rng.normal(0, 0.7, 30)[item] + rng.normal(0, 0.3, 6)[np.tile(np.arange(6), 30)] + 0.4 * (system == "B")
    return pd.DataFrame({"item": [f"i{k}" for k in item], "system": system, "seed": [f"s{k}" for k in seed],
                         "score": eta + rng.normal(0, 0.6, item.size), "count": rng.poisson(np.exp(0.5 * eta))})


FORMULA = "{y} ~ system + (1|item) + (1|system:seed)"


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MixevalWarning)
        return fn(*args, **kwargs)


def test_a_family_defined_in_one_place_is_lmer_by_laplace(toys, data):
    toy = _quiet(mixeval.fit, FORMULA.format(y="score"), data, family="toy_normal")
    ref = _quiet(mixeval.lmer, FORMULA.format(y="score"), data, REML=False)
    assert toy.loglik == pytest.approx(ref.loglik, rel=1e-9)
    np.testing.assert_allclose(toy.coef, ref.coef, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.sqrt(np.diag(toy.cov_coef)), np.sqrt(np.diag(ref.cov_coef)), rtol=1e-4)
    for group in ("item", "system:seed"):
        assert toy.variances[group] == pytest.approx(ref.variances[group], rel=1e-5)
    assert toy.dispersion == pytest.approx(ref.sigma, rel=1e-6)
    assert toy.n_params == ref.n_params
    table = toy.confint(method="wald").table
    assert table.loc["dispersion", "lower"] < toy.dispersion < table.loc["dispersion", "upper"]


def test_a_family_with_its_own_loglik_is_the_builtin_one(toys, data):
    toy = _quiet(mixeval.fit, FORMULA.format(y="count"), data, family="toy_poisson")
    ref = _quiet(mixeval.glmer, FORMULA.format(y="count"), data, family="poisson")
    assert toy.loglik == pytest.approx(ref.loglik, rel=1e-9)
    np.testing.assert_allclose(toy.coef, ref.coef, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(toy.cov_coef, ref.cov_coef, rtol=1e-4, atol=1e-9)
    np.testing.assert_allclose(list(toy.variances.values()), list(ref.variances.values()), rtol=1e-5)
    sims = toy.simulate(2, random_state=3)
    assert sims.shape == (len(data), 2) and np.all(sims == np.round(sims))


def test_a_registered_family_reaches_the_registry_pickling_and_the_command_line(toys, data, tmp_path, capsys):
    assert "toy_normal" in families.family_names() and families.FAMILIES["toy_poisson"] == ("log",)
    fam = get_family("toy_normal")
    assert pickle.loads(pickle.dumps(fam)) == fam
    path = tmp_path / "d.csv"
    data.to_csv(path, index=False)
    from mixeval.cli import main

    assert main(["fit", str(path), FORMULA.format(y="score"), "--family", "toy_normal", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["family"] == "toy_normal" and out["dispersion"] > 0


def test_an_unregistered_family_is_refused_by_name():
    with pytest.raises(mixeval.errors.InputError, match="toy_normal"):
        get_family("toy_normal")
