"""Bradley-Terry fits: constraints, scales, tie models, grouped votes, bad input, inference methods."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

from mixeval.errors import InputError, SeparationWarning
from mixeval.preferences import bradley_terry, simulate_arena, to_elo, votes_needed
from mixeval.preferences._fixed import _counts_by_outcome, loglik, outcome_model

TRUTH = dict(zip(["gpt", "claude", "llama", "mistral", "qwen"], [0.8, 0.5, 0.0, -0.3, -1.0]))


@pytest.fixture(scope="module")
def log():
    return simulate_arena(4000, TRUTH, n_judges=6, position=0.25, judge_sd=0.4, tie_tau=0.4, random_state=3)


def test_reference_and_sum_to_zero_give_the_same_differences(log):
    a = bradley_terry(log, reference="llama")
    b = bradley_terry(log)
    assert a.abilities["llama"] == 0.0
    assert b.estimates.sum() == pytest.approx(0.0, abs=1e-10)
    np.testing.assert_allclose(a.estimates - a.estimates.mean(), b.estimates, atol=1e-8)
    assert a.loglik == pytest.approx(b.loglik, abs=1e-9)
    ca, cb = a.contrasts(), b.contrasts()
    np.testing.assert_allclose(ca.estimate, cb.estimate, atol=1e-8)
    np.testing.assert_allclose(ca.se, cb.se, rtol=1e-6)


def test_elo_scale(log):
    fit = bradley_terry(log)
    np.testing.assert_allclose(fit.elo.to_numpy(), 400 / np.log(10) * fit.estimates + 1000)
    assert to_elo(0.0) == 1000.0


def test_estimates_recover_truth_on_a_large_log():
    big = simulate_arena(60000, TRUTH, position=0.25, random_state=11)
    fit = bradley_terry(big, reference="llama")
    truth = pd.Series(TRUTH)
    np.testing.assert_allclose(fit.abilities[truth.index], truth.to_numpy(), atol=4 * fit.se.max())
    assert fit.position_bias == pytest.approx(0.25, abs=4 * fit.position_se)


def test_davidson_is_the_maximum_likelihood(log):
    fit = bradley_terry(log, ties="davidson", reference="llama")
    d = fit._fit.design
    model = outcome_model("davidson")
    used = fit._fit_log().collapse(judge=False, prompt=False)
    y = _counts_by_outcome(used.outcome, used.count)

    def nll(x):
        return -loglik(model, d.X, y, x[:-1], x[-1])

    x0 = np.concatenate([fit._fit.beta, [fit._fit.phi]])
    generic = minimize(nll, np.zeros_like(x0), method="BFGS", options={"gtol": 1e-8})
    assert -generic.fun <= fit.loglik + 1e-6
    np.testing.assert_allclose(generic.x, x0, atol=1e-4)
    assert fit.tie_parameter == pytest.approx(np.exp(fit._fit.phi))


def test_davidson_probabilities_sum_to_one_and_match_definition():
    model = outcome_model("davidson")
    eta = np.array([-2.0, 0.0, 1.3])
    probs = model.probabilities(eta, np.log(0.7))[0]
    np.testing.assert_allclose(probs.sum(axis=0), 1.0)
    pa, pb = np.exp(eta / 2), np.exp(-eta / 2)
    np.testing.assert_allclose(probs[1], 0.7 / (pa + pb + 0.7))  # nu sqrt(pi_a pi_b) / (pi_a + pi_b + ...)
    np.testing.assert_allclose(probs[2], pa / (pa + pb + 0.7))


def test_counted_votes_equal_the_expanded_log(log):
    counted = log.groupby(["model_a", "model_b", "winner"]).size().rename("n").reset_index()
    a = bradley_terry(log, ties="ordinal")
    b = bradley_terry(counted, ties="ordinal", count="n")
    np.testing.assert_allclose(a.estimates, b.estimates, atol=1e-10)
    assert a.loglik == pytest.approx(b.loglik)
    assert b.n_votes == len(log)


def test_numeric_margin_and_string_names():
    df = pd.DataFrame({"model_a": ["A-1", "B 2", "A-1", "C", "B 2", "C"] * 5,
                       "model_b": ["B 2", "C", "C", "A-1", "A-1", "B 2"] * 5,
                       "margin": [2, -1, 0, 1, 3, -2] * 5})
    fit = bradley_terry(df, winner="margin", ties="davidson")
    assert fit.systems == ("A-1", "B 2", "C")
    assert fit.n_ties == 5


def test_style_control_covariate():
    rng = np.random.default_rng(5)
    df = simulate_arena(6000, TRUTH, random_state=5)
    df["len_a"], df["len_b"] = rng.normal(size=len(df)), rng.normal(size=len(df))
    # redraw outcomes with a length effect of 0.5 per unit difference
    s = pd.Series(TRUTH)
    eta = s[df.model_a].to_numpy() - s[df.model_b].to_numpy() + 0.5 * (df.len_a - df.len_b)
    df["winner"] = np.where(rng.random(len(df)) < 1 / (1 + np.exp(-eta)), "model_a", "model_b")
    fit = bradley_terry(df, covariates={"length": ("len_a", "len_b")}, position="none")
    est = fit.covariates.loc["length"]
    assert est.estimate == pytest.approx(0.5, abs=4 * est.se)


def test_self_pairs_are_refused():
    df = pd.DataFrame({"model_a": ["x", "y", "x"], "model_b": ["y", "y", "y"], "winner": ["model_a"] * 3})
    with pytest.raises(InputError, match="compare a system with itself"):
        bradley_terry(df)


def test_disconnected_graph_names_the_components():
    df = pd.DataFrame({"model_a": ["a", "b", "c", "d"], "model_b": ["b", "a", "d", "c"],
                       "winner": ["model_a", "model_a", "model_b", "model_a"]})
    with pytest.raises(InputError, match=r"disconnected.*\{a, b\}; \{c, d\}"):
        bradley_terry(df)


def test_unknown_verdict_and_bad_arguments(log):
    bad = log.assign(winner=log.winner.where(log.index > 2, "draw"))
    with pytest.raises(InputError, match="'draw'"):
        bradley_terry(bad)
    with pytest.raises(InputError, match="ties="):
        bradley_terry(log, ties="split")
    with pytest.raises(InputError, match="reference="):
        bradley_terry(log, reference="nobody")
    with pytest.raises(InputError, match="needs judge="):
        bradley_terry(log, position="random")
    with pytest.raises(InputError, match="unknown random-effects term"):
        bradley_terry(log, judge="judge", random="judge:prompt")


def test_a_system_that_never_wins_is_warned_with_finite_estimates():
    df = simulate_arena(600, {"a": 0.5, "b": 0.0, "c": -0.5}, random_state=2)
    loser = pd.DataFrame({"model_a": ["z"] * 20 + ["a"] * 20, "model_b": ["b"] * 20 + ["z"] * 20,
                          "winner": ["model_b"] * 20 + ["model_a"] * 20})
    with pytest.warns(SeparationWarning, match=r"from the top: \{a, b, c\} > \{z\}"):
        fit = bradley_terry(pd.concat([df, loser]), position="none")
    assert np.all(np.isfinite(fit.estimates))
    assert fit.separated == ("z",)
    assert fit.ranks().loc["z", "rank"] == 4


def test_rank_sets_cover_the_point_ranks_and_separate_clear_gaps(log):
    fit = bradley_terry(log)
    ranks = fit.ranks(0.95)
    assert (ranks["rank_lower"] <= ranks["rank"]).all() and (ranks["rank"] <= ranks["rank_upper"]).all()
    assert ranks.loc["gpt", "rank_lower"] == 1 and ranks.loc["qwen", "rank_upper"] == 5
    assert ranks.loc["qwen", "rank_lower"] == 5  # 1 log-odds below the next: certainly last
    crit = ranks.attrs["critical_value"]
    assert 1.96 < crit < 3.5


def test_contrasts_adjustments(log):
    fit = bradley_terry(log)
    raw = fit.contrasts(adjust="none")
    holm = fit.contrasts(adjust="holm")
    tukey = fit.contrasts(adjust="tukey")
    maxt = fit.contrasts(adjust="max-t")
    assert len(raw) == 10
    assert (holm.pvalue_adjusted >= raw.pvalue - 1e-15).all()
    assert (tukey.upper - tukey.lower > raw.upper - raw.lower).all()
    # the max-t and Tukey-Kramer adjustments agree closely for nearly equicorrelated contrasts
    np.testing.assert_allclose(maxt.upper - maxt.lower, tukey.upper - tukey.lower, rtol=0.05)
    with pytest.raises(InputError, match="adjust="):
        fit.contrasts(adjust="sidak-ish")


def test_profile_intervals_close_to_wald_on_a_large_log(log):
    fit = bradley_terry(log, ties="davidson")
    wald, prof = fit.intervals(method="wald"), fit.intervals(method="profile")
    np.testing.assert_allclose(prof.lower, wald.lower, atol=0.01)
    np.testing.assert_allclose(prof.upper, wald.upper, atol=0.01)
    mixed = bradley_terry(log, judge="judge", position="random")
    with pytest.raises(InputError, match="profile intervals"):
        mixed.intervals(method="profile")


def test_glrt_of_systems_and_of_the_judge_variance(log):
    fit = bradley_terry(log, judge="judge", position="random")
    systems = fit.test_systems()
    assert systems.df == 4 and systems.pvalue < 1e-10
    judge = fit.test_random("judge")
    fixed = bradley_terry(log, position="fixed")
    assert judge.statistic == pytest.approx(2 * (fit.loglik - fixed.loglik), abs=1e-6)
    with pytest.raises(InputError, match="not a random term"):
        fit.test_random("prompt")
    shares = fit.variance_shares()
    assert shares.share.sum() == pytest.approx(1.0)
    assert shares.loc[0, "variance"] == pytest.approx(fit.varcorr.variance.iloc[0])


def test_votes_needed_by_simulation():
    n = int(round(votes_needed(0.3, power=0.8)))
    rng = np.random.default_rng(1)
    p = 1 / (1 + np.exp(-0.3))
    wins = rng.binomial(n, p, 4000)
    est = np.log(wins / (n - wins))
    se = np.sqrt(1 / wins + 1 / (n - wins))
    power = np.mean(np.abs(est / se) > 1.959964)
    assert power == pytest.approx(0.8, abs=0.03)
    assert votes_needed(0.3, fixed_variance=1.0) == np.inf


def test_result_to_dict_is_json_safe(log):
    import json

    fit = bradley_terry(log, ties="ordinal")
    out = json.loads(json.dumps(fit.to_dict(), allow_nan=False))
    assert set(out["abilities"]) == set(TRUTH) and len(out["thresholds"]) == 2
    assert "Bradley-Terry" in fit.summary()


def test_too_many_system_by_prompt_levels_are_refused():
    df = simulate_arena(4000, np.zeros(10), n_prompts=3500, random_state=4)
    with pytest.raises(InputError, match="system-by-group deviations"):
        bradley_terry(df, prompt="prompt", random="system:prompt")


def test_prompt_intercept_and_system_by_prompt_fit():
    df = simulate_arena(2000, np.linspace(-1, 1, 4), n_prompts=25, prompt_sd=0.7, random_state=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = bradley_terry(df, prompt="prompt", random=("system:prompt",), position="none")
    assert fit.varcorr.group.tolist() == ["system:prompt"]
    assert 0.2 < fit.varcorr.variance.iloc[0] < 1.0  # true variance 0.49
    test = fit.test_random("system:prompt")
    assert test.pvalue < 1e-3


def test_parametric_bootstrap_agrees_with_wald_for_the_fixed_model(log):
    fit = bradley_terry(log, ties="ordinal")
    boot = fit.intervals(method="bootstrap", n_resamples=150, random_state=2)
    wald = fit.intervals()
    np.testing.assert_allclose(boot.upper - boot.lower, wald.upper - wald.lower, rtol=0.25)
    mixed = bradley_terry(log, judge="judge", position="random")
    draws = mixed.bootstrap_abilities(n_resamples=5, random_state=3)
    assert draws.shape == (5, 5) and np.allclose(draws.sum(axis=1), 0.0)
    off = ~np.eye(5, dtype=bool)
    probs = bradley_terry(log).win_probabilities().to_numpy()  # decisive votes: P(a beats b) + P(b beats a) = 1
    np.testing.assert_allclose((probs + probs.T)[off], 1.0)
    win = fit.win_probabilities().to_numpy()  # outright wins: the rest is a tie
    assert np.all((win + win.T)[off] < 1.0)


def test_davidson_with_random_effects_is_refused(log):
    with pytest.raises(InputError, match="neither a GLMM family nor a cumulative link"):
        bradley_terry(log, judge="judge", position="random", ties="davidson")


def test_a_tie_model_without_ties_is_refused():
    df = simulate_arena(300, {"a": 0.5, "b": 0.0, "c": -0.5}, random_state=2)
    with pytest.raises(InputError, match="has none"):
        bradley_terry(df, ties="davidson")
