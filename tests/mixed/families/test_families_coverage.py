"""A small version of benchmarks/sim_families_coverage.py: data with known truth drawn from each glmmTMB family,
fitted by mixeval.fit; the 95% Wald intervals of the fixed effects and of the dispersion cover the truth.

With R = 25 replicates and 4 intervals each, a correct procedure's coverage is 0.95 with a Monte Carlo SE of
sqrt(0.95 * 0.05 / 25) = 0.044 per interval (0.022 pooled over 100 independent intervals); the test asks for at
least 0.85 pooled (below 0.95 by more than four pooled SEs) and 0.8 for the dispersion (three SEs), and a mean
dispersion within four Monte Carlo SEs (plus 5% for the small-sample bias of the ML estimate) of the truth. The committed script's 200 replicates per family are in benchmarks/README.md.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "benchmarks" / "sim_families_coverage.py"
_spec = importlib.util.spec_from_file_location("sim_families_coverage", SCRIPT)
sim = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sim)


@pytest.mark.parametrize("family", ["negative_binomial", "beta", "ordered_beta", "beta_binomial"])
def test_wald_intervals_cover_the_truth(family):
    res = sim.coverage(family, 25, n_item=25, n_seed=6, seed=7)
    names = ["(Intercept)", "systemB", "systemC", "dispersion"]
    pooled = np.mean([res[f"coverage_{n}"] for n in names])
    assert pooled >= 0.85, res
    assert res["coverage_dispersion"] >= 0.8, res
    assert abs(res["dispersion_mean"] - res["dispersion_true"]) < 4 * res["dispersion_mc_se"] + 0.05 * res["dispersion_true"], res
    assert res["converged"] == 1.0


def test_simulated_responses_are_the_family_s():
    """The simulation draws from the family at the truth: the fitted dispersion of a large data set is close."""
    rng = np.random.default_rng(3)
    d = sim.simulate("negative_binomial", 200, rng, 3)
    assert d.y.min() >= 0 and np.all(d.y == np.round(d.y)) and len(d) == 1800
    fit = sim.mixeval.fit(sim.FORMULA, d, family="negative_binomial")
    assert fit.dispersion == pytest.approx(2.0, rel=0.15)
