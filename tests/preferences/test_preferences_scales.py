"""Scales of the abilities (issue 36 items 10 and 11): the win probabilities a fit implies, its abilities converted to
arena's scale (R's glm of the half-win and dropped-tie designs, fixtures/make_arena_fixture.R), and the
population-averaged (marginal) abilities of mixed models against what a fixed-effects fit of votes from new judges
estimates and against observed win rates (simulations with known truth; Monte Carlo errors stated per test)."""

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from mixeval.preferences import bradley_terry, simulate_arena
from mixeval.preferences._log import read_log
from mixeval.preferences._scales import distinct_pairs, implied_abilities, outcome_probabilities

HERE = Path(__file__).parent / "fixtures"
R = json.loads((HERE / "r_arena.json").read_text())
LOG = pd.read_csv(HERE / "arena_log.csv")
TRUTH = {"a": 1.0, "b": 0.3, "c": 0.0, "d": -1.3}


def _pair_rates(log: pd.DataFrame, system: str, versus: str) -> tuple[float, float, int]:
    """Observed share of outright wins of ``system`` and of ties among the votes between the two."""
    first = (log.model_a == system) & (log.model_b == versus)
    second = (log.model_a == versus) & (log.model_b == system)
    n = int((first | second).sum())
    wins = int((first & (log.winner == "model_a")).sum() + (second & (log.winner == "model_b")).sum())
    ties = int(((first | second) & (log.winner == "tie")).sum())
    return wins / n, ties / n, n


@pytest.fixture(scope="module")
def tied():
    return simulate_arena(20000, TRUTH, tie_tau=0.6, random_state=5)


def test_win_probabilities_are_the_models_formulas(tied):
    ordinal = bradley_terry(tied, ties="ordinal", position="none")
    c = ordinal.contrasts()
    tau = ordinal.tie_parameter
    np.testing.assert_allclose(c.win_probability, expit(c.estimate - tau), rtol=1e-12)
    np.testing.assert_allclose(c.tie_probability, expit(tau - c.estimate) - expit(-tau - c.estimate), rtol=1e-12)
    davidson = bradley_terry(tied, ties="davidson", position="none")
    c = davidson.contrasts()
    nu, half = davidson.tie_parameter, np.exp(c.estimate / 2)
    np.testing.assert_allclose(c.win_probability, half / (half + 1 / half + nu), rtol=1e-12)
    np.testing.assert_allclose(c.tie_probability, nu / (half + 1 / half + nu), rtol=1e-12)
    decisive = bradley_terry(tied, position="none").contrasts()
    np.testing.assert_allclose(decisive.win_probability, expit(decisive.estimate), rtol=1e-12)
    assert "tie_probability" not in decisive


def test_ordinal_win_probabilities_match_observed_rates(tied):
    """20,000 votes, about 3,300 per pair: the observed share of outright wins has SE <= 0.0087; the model's
    probability is within 3 of them (plus 0.01 of estimation error), where the log-odds read as a probability
    (the old ``win_probability``) is 0.03-0.09 off."""
    fit = bradley_terry(tied, ties="ordinal", position="none")
    for _, row in fit.contrasts().iterrows():
        win, tie, n = _pair_rates(tied, row.system, row.versus)
        mc = np.sqrt(win * (1 - win) / n)
        assert abs(row.win_probability - win) < 3 * mc + 0.01
        assert abs(row.tie_probability - tie) < 3 * np.sqrt(tie * (1 - tie) / n) + 0.01
        assert abs(expit(row.estimate) - win) > 0.03  # what the old column reported
    assert "cumulative log-odds" in fit.scale and fit.scale in fit.summary()


@pytest.mark.parametrize("position", ["fixed", "none", "random"])
@pytest.mark.parametrize("ties", ["half", "drop"])
def test_ordinal_abilities_convert_to_arenas_scale(position, ties):
    """The ordinal fit of arena_log.csv (equal to ordinal::clm; with a random position bias per judge, to
    ordinal::clmm) converted to arena's scale is arena's own fit of the same votes (R's glm on the half-win or
    dropped-tie design) within 0.4 of a standard error: two estimates of one target from the same votes."""
    judge = "judge" if position == "random" else None
    fit = bradley_terry(LOG, ties="ordinal", position=position, reference="sys00", judge=judge)
    arena = fit.arena_abilities(ties=ties)
    r = np.array([0.0] + [R[ties]["coef"][f"d_{s}"] for s in R["systems"][1:]])
    se = arena.se.to_numpy()
    assert np.all(np.abs(arena.ability.to_numpy() - r)[1:] < 0.4 * se[1:])
    np.testing.assert_allclose(arena.elo, 400 / np.log(10) * arena.ability + 1000)
    spread = np.ptp(fit.estimates)
    f = expit(fit.tie_parameter)
    if position == "random":
        return  # the conversion also averages over the judges
    if ties == "half":  # narrower, by about 4 F(tau) (1 - F(tau))
        assert np.ptp(r) < spread and np.ptp(r) / spread == pytest.approx(4 * f * (1 - f), rel=0.08)
    else:  # wider, by about 2 F(tau) near 0 and less far out
        assert np.ptp(r) > spread and 1 < np.ptp(r) / spread < 2 * f


def test_scales_that_are_the_models_own_are_unchanged():
    log = simulate_arena(3000, TRUTH, tie_tau=0.4, random_state=6)
    dropped = bradley_terry(log, position="none")
    arena = dropped.arena_abilities(ties="drop")
    np.testing.assert_allclose(arena.ability, dropped.estimates, atol=1e-8)
    np.testing.assert_allclose(arena.se, dropped.se, rtol=1e-4)
    davidson = bradley_terry(log, ties="davidson", position="none")
    np.testing.assert_allclose(davidson.arena_abilities(ties="drop").ability, davidson.estimates, atol=0.02)
    np.testing.assert_allclose(dropped.marginal_abilities().ability, dropped.estimates)
    with pytest.raises(Exception, match="says nothing about ties"):
        dropped.arena_abilities(ties="half")


@pytest.fixture(scope="module")
def judged():
    """16,000 votes by 2,000 judges whose position deviations have SD 1.2 (each judge about 8 votes): what a
    fixed-effects fit estimates is close to the population-averaged abilities."""
    s = np.array(list(TRUTH.values()))
    log = simulate_arena(16000, TRUTH, n_judges=2000, judge_sd=1.2, position=0.0, random_state=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mixed = bradley_terry(log, judge="judge", position="random")
    return s, log, mixed


def test_marginal_abilities_are_what_a_fixed_fit_of_new_judges_estimates(judged):
    s, log, mixed = judged
    truth = implied_abilities(distinct_pairs(read_log(log)), s, position_bias=0.0, variance=1.44)[0]
    marginal = mixed.marginal_abilities()
    fixed = bradley_terry(log)
    se = marginal.se.to_numpy()
    assert np.all(np.abs(marginal.ability - truth) < 3 * se)  # SE 0.017-0.021
    assert np.all(np.abs(mixed.estimates - (s - s.mean())) < 3 * mixed.se.to_numpy())  # conditional: the truth
    assert np.all(np.abs(marginal.ability.to_numpy() - fixed.estimates) < se)  # the same target, same votes
    ratio = marginal.ability.to_numpy() / mixed.estimates
    assert np.all((0.75 < ratio) & (ratio < 0.9))  # attenuated: about 1 / sqrt(1 + 0.346 * 1.44) = 0.82
    assert marginal.attrs["scale"] == "population-averaged" and "conditional" in mixed.scale


def test_marginal_win_probabilities_match_observed_rates_of_new_judges(judged):
    """Observed outright wins over about 2,700 votes per pair (SE <= 0.0096): the population-averaged probability
    is within 3 SE + 0.01, the typical judge's probability (conditional) is further off for clear pairs."""
    s, log, mixed = judged
    marginal, conditional = mixed.win_probabilities(marginal=True), mixed.win_probabilities()
    names = list(TRUTH)
    exact = outcome_probabilities("drop", s[:, None] - s[None, :], float("nan"), 1.44)[2]
    for i, a in enumerate(names):
        for j, b in enumerate(names[i + 1:], i + 1):
            win, _, n = _pair_rates(log, a, b)
            mc = np.sqrt(win * (1 - win) / n)
            assert abs(marginal.loc[a, b] - win) < 3 * mc + 0.01
            assert abs(marginal.loc[a, b] - exact[i, j]) < 0.015
            if abs(s[i] - s[j]) > 1.2:
                assert abs(conditional.loc[a, b] - win) > 3 * mc


def test_contrasts_on_the_marginal_scale_and_in_elo(judged):
    _, _, mixed = judged
    marginal = mixed.marginal_abilities()
    c = mixed.contrasts(marginal=True, scale="elo", adjust="none").set_index(["system", "versus"])
    assert c.loc[("a", "d"), "estimate"] == pytest.approx(400 / np.log(10) * (marginal.ability["a"]
                                                                              - marginal.ability["d"]))
    cond = mixed.contrasts(adjust="none").set_index(["system", "versus"])
    assert c.loc[("a", "d"), "z"] == pytest.approx(cond.loc[("a", "d"), "z"], rel=0.05)  # scale-free statistic
    assert c.attrs["probabilities"] == "population-averaged"


@pytest.mark.parametrize("target", ["model", "arena", "arena-drop"])
def test_the_delta_method_jacobian_equals_finite_differences(target):
    """``converted`` differentiates the conversion by the implicit function theorem; central differences of
    ``implied_abilities`` give the same covariance (a mixed ordinal model: position, tie parameter, variance)."""
    from mixeval.preferences._scales import converted

    fit = bradley_terry(LOG, ties="ordinal", position="random", judge="judge", reference="sys00")
    model = fit._fit
    variance = fit.vote_variance
    rows = distinct_pairs(fit._fit_log())
    C, m = model.design.C, model.design.n_abilities
    x0 = np.concatenate([model.beta, [model.phi]])

    def abilities(x):
        return implied_abilities(rows, C @ x[:m], ties="ordinal", phi=x[-1], position_bias=x[m], variance=variance,
                                 target=target, reference=0)[0]

    jac = np.column_stack([(abilities(x0 + h) - abilities(x0 - h)) / 2e-5 for h in 1e-5 * np.eye(x0.size)])
    est, cov = converted(model, fit._fit_log(), target=target, variance=variance)
    np.testing.assert_allclose(est, abilities(x0), atol=1e-10)
    np.testing.assert_allclose(cov, jac @ model.cov_joint @ jac.T, rtol=1e-5, atol=1e-10)
