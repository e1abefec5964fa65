"""Intervals for phi and the D-study, cheapest_design(confidence=): correctness and (small) coverage."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from mixeval import lmer
from mixeval.errors import InputError
from mixeval.reliability import cheapest_design, dstudy, phi
from mixeval.uncertainty import component_draws, dstudy_intervals, phi_draws, phi_interval

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import phi_coverage  # noqa: E402


@pytest.fixture(scope="module")
def fit():
    rng = np.random.default_rng(8)
    df = phi_coverage.simulate({"item": 25, "rater": 4, "occ": 2},
                               {"item": 1.0, "rater": 0.2, "rater:item": 0.4, "Residual": 0.6}, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lmer("y ~ 1 + (1|item) + (1|rater) + (1|rater:item)", df)


@pytest.fixture(scope="module")
def draws(fit):
    return component_draws(fit, n_resamples=100, random_state=3, progress=False)


def test_phi_draws_equal_phi_row_by_row(draws):
    for kind in ("absolute", "relative"):
        vec = phi_draws(draws, "item", {"rater": 3}, kind=kind)
        loop = [phi(dict(zip(draws.columns, row)), "item", {"rater": 3}, kind=kind) for row in draws.to_numpy()]
        np.testing.assert_allclose(vec, loop, rtol=1e-13)


def test_phi_interval(fit, draws):
    ci = phi_interval(fit, "item", {"rater": 2}, draws=draws)
    assert ci["estimate"] == pytest.approx(phi(fit, "item", {"rater": 2}))
    assert 0 <= ci["lower"] < ci["estimate"] < ci["upper"] <= 1
    values = phi_draws(draws, "item", {"rater": 2})
    # the basic bootstrap interval on the logit scale: 2 logit(estimate) - quantiles of the draws' logits
    logit = lambda p: np.log(p / (1 - p))  # noqa: E731
    q_lo, q_hi = logit(np.quantile(values, [0.025, 0.975]))
    expected = 1 / (1 + np.exp(-(2 * logit(ci["estimate"]) - np.array([q_hi, q_lo]))))
    assert [ci["lower"], ci["upper"]] == pytest.approx(expected)
    # bias-corrected percentiles (Efron 1982): quantiles Phi(2 z0 -+ 1.96), z0 from the share of draws below
    bc = phi_interval(fit, "item", {"rater": 2}, draws=draws, method="bc")
    z0 = norm.ppf(np.mean(values < ci["estimate"]))
    assert [bc["lower"], bc["upper"]] == pytest.approx(np.quantile(values, norm.cdf([2 * z0 - 1.959964, 2 * z0 + 1.959964])))
    plain = phi_interval(fit, "item", {"rater": 2}, draws=draws, method="percentile")
    assert [plain["lower"], plain["upper"]] == pytest.approx(np.quantile(values, [0.025, 0.975]))
    with pytest.raises(InputError, match="method"):
        phi_interval(fit, "item", {"rater": 2}, draws=draws, method="bca")
    again = phi_interval(fit, "item", {"rater": 2}, n_resamples=100, random_state=3, progress=False)
    assert again == ci  # seeded: the same draws


def test_basic_logit_interval_at_the_boundary_and_outside_0_1():
    from mixeval.reliability import draws_interval

    values = np.linspace(0.0, 0.4, 101)
    values[:6] = 0.0  # the draws' 5% quantile on the boundary
    assert draws_interval(values, 0.0, 0.9) == pytest.approx(tuple(np.quantile(values, [0.05, 0.95])))  # no pivot
    lo, hi = draws_interval(values, 0.2, 0.9)  # pivot for the lower end; no upper bound from the draws
    q_hi = np.quantile(values, 0.95)
    assert hi == 1.0 and lo == pytest.approx(1 / (1 + np.exp(-(2 * np.log(0.25) - np.log(q_hi / (1 - q_hi))))))
    with pytest.raises(InputError, match=r"\[0, 1\]"):
        draws_interval(np.array([-1.0, 2.0]), 0.5, 0.9)
    assert draws_interval(np.array([-1.0, 2.0, 0.5]), 0.5, 0.5, "percentile")[0] < 0.5


def test_dstudy_intervals(fit, draws):
    grid = {"rater": [1, 2, 4, 8]}
    table = dstudy_intervals(fit, "item", grid, draws=draws, target=0.8)
    point = dstudy(fit, "item", grid)
    np.testing.assert_allclose(table["phi"], point["phi"])
    assert (table["phi_lower"] <= table["phi_upper"]).all()
    assert table["phi_lower"].is_monotonic_increasing and table["p_reach"].is_monotonic_increasing
    assert ((0 <= table["p_reach"]) & (table["p_reach"] <= 1)).all()


def test_cheapest_design_with_confidence(fit, draws):
    plain = cheapest_design(fit, "item", 0.8, max_n={"rater": 20})
    sure = cheapest_design(fit, "item", 0.8, max_n={"rater": 20}, confidence=0.9, draws=draws)
    assert sure.reached and sure.phi_lower >= 0.8
    assert sure.n["rater"] >= plain.n["rater"]
    designs = sure.designs.set_index("rater")
    assert (designs.loc[: sure.n["rater"] - 1, "phi_lower"] < 0.8).all()  # every cheaper design misses
    # p_reach: the share of reflected draws (2 logit(phi-hat) - logit(phi*)) reaching 0.8; >= 0.9 with the bound
    values = phi_draws(draws, "item", sure.n)
    est = phi(fit, "item", sure.n)
    logit = lambda p: np.log(p / (1 - p))  # noqa: E731
    assert sure.p_reach == pytest.approx(float(np.mean(2 * logit(est) - logit(values) >= logit(0.8))))
    assert sure.p_reach >= 0.9 - 1 / len(values)
    cheaper = designs.loc[: sure.n["rater"] - 1]
    assert (cheaper["p_reach"] <= 0.9 + 1 / len(values)).all()
    assert "lower bound" in sure.summary()
    none = cheapest_design(fit, "item", 0.999, max_n={"rater": 3}, confidence=0.9, draws=draws)
    assert not none.reached and "lower confidence bound" in none.summary()
    assert len(none.designs) == 3 and none.frontier.empty
    with pytest.raises(InputError, match="confidence"):
        cheapest_design(fit, "item", 0.8, max_n={"rater": 5}, confidence=90)


def test_boundary_component_does_not_break_the_interval():
    rng = np.random.default_rng(2)
    df = phi_coverage.simulate({"item": 30, "rater": 3}, {"item": 0.5, "rater": 0.0, "Residual": 1.0}, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = lmer("y ~ 1 + (1|item) + (1|rater)", df)
    ci = phi_interval(f, "item", n_resamples=60, random_state=0, progress=False)
    assert np.isfinite([ci["lower"], ci["upper"]]).all() and 0 <= ci["lower"] <= ci["upper"] <= 1


def test_intervals_need_a_fit():
    with pytest.raises(InputError, match="fitted model"):
        phi_interval({"item": 1.0, "Residual": 1.0}, "item")


@pytest.mark.slow
def test_phi_interval_coverage_small():
    """A small version of benchmarks/phi_coverage.py (the committed study has 600 data sets per design).

    30 data sets: under a true coverage of 95% fewer than 25 hits has probability 0.0002.
    """
    design = phi_coverage.DESIGNS[0]
    rows = phi_coverage.run(reps=30, boot=40, seed=99, designs=[design])
    assert min(rows[0]["coverage"], rows[0]["bc_coverage"], rows[0]["logit_coverage"]) >= 25 / 30


def test_an_interval_ending_at_1_because_refits_put_phi_at_0_warns_with_their_share():
    """A weak item variance (8 items, tiny share): many refits estimate it as 0, the basic interval's upper end is
    then 1; the warning names how many refits did so. A well-estimated phi gives no such warning."""
    from mixeval.errors import BoundaryWarning

    rng = np.random.default_rng(5)
    df = phi_coverage.simulate({"item": 8, "rater": 3}, {"item": 0.05, "rater": 0.1, "Residual": 1.0}, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        weak = lmer("y ~ 1 + (1|item) + (1|rater)", df)
    draws = component_draws(weak, n_resamples=200, random_state=1, progress=False)
    at_zero = int(np.sum(phi_draws(draws, "item") == 0))
    assert at_zero >= 0.025 * 200  # the case the warning is about
    with pytest.warns(BoundaryWarning, match=rf"{at_zero} of 200 bootstrap refits \(\d+%\) put phi at 0") as caught:
        ci = phi_interval(weak, "item", draws=draws)
    assert ci["upper"] == 1.0 and "upper end is 1" in str(caught[0].message)
    with pytest.warns(BoundaryWarning, match="put phi at 0"):
        dstudy_intervals(weak, "item", {"rater": [1, 2]}, draws=draws)


def test_a_well_estimated_phi_interval_does_not_warn(fit, draws):
    with warnings.catch_warnings():
        warnings.simplefilter("error", category=Warning)
        phi_interval(fit, "item", draws=draws)
