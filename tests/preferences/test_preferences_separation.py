"""Separation beyond the systems' win graph (issue 38 item 4 and the rough case "a covariate with zero difference
gets SE 0"): votes predicted perfectly through the position bias, a covariate or the tie parameter, and designs whose
coefficients the votes do not identify. Each test fails on the code before the fix (SE 0, or a fit of an aliased
covariate)."""

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog

from mixeval.cli import main
from mixeval.errors import InputError, SeparationWarning
from mixeval.preferences import bradley_terry, simulate_arena
from mixeval.preferences import _separation
from mixeval.preferences._fixed import fit_fixed, outcome_model
from mixeval.preferences._separation import constraint_rows, find_separation, separated_rows

HERE = Path(__file__).parent / "fixtures"
R = json.loads((HERE / "r_general_separation.json").read_text())
FIRST_WINS = pd.DataFrame({"model_a": ["x", "y"] * 10, "model_b": ["y", "x"] * 10, "winner": ["model_a"] * 20})


def _quiet(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bradley_terry(*args, **kwargs)


def test_the_first_shown_system_winning_every_vote_leaves_nothing_identified():
    with pytest.warns(SeparationWarning, match=r"20 of 20 votes .* the position bias .*no vote is left") as rec:
        fit = bradley_terry(FIRST_WINS)
    assert "position='none'" in str(rec[0].message)
    r = R["position_two"]
    assert r["se"]["first"] > 1e4 and r["se"]["d_y"] > 1e4  # R's glm: where the deviance flattened
    assert fit.position_se == np.inf and np.all(fit.se == np.inf)
    assert fit.position_bias > 10  # where the fit stopped
    c = fit.contrasts()
    assert np.isinf(c.se.iloc[0]) and np.isnan(c.pvalue.iloc[0])
    assert set(fit.separated) == {"x", "y"}
    for method in ("profile", "bootstrap", "iid-bootstrap"):  # nothing bounds them: no interval is finite
        table = fit.intervals(method=method, n_resamples=10, random_state=1)
        assert np.all(np.isneginf(table.lower)) and np.all(np.isposinf(table.upper)), method
    none = bradley_terry(FIRST_WINS, position="none")  # without a position term: each won half, no separation
    assert np.all(np.isfinite(none.se)) and none.se.iloc[0] == pytest.approx(np.sqrt(1 / 20))


@pytest.mark.parametrize("ties", ["drop", "davidson", "ordinal"])
def test_a_separation_through_the_position_leaves_the_fit_of_the_other_votes(ties):
    # a-b (a first) and b-c (b first) are split; c, shown first against a, always won: with the position bias
    # growing and a, c moving apart the last votes are won with certainty while the first two keep their odds
    rows = ([("a", "b", w) for w in ["model_a"] * 5 + ["model_b"] * 3 + ["tie"] * 2]
            + [("b", "c", w) for w in ["model_a"] * 4 + ["model_b"] * 4 + ["tie"] * 3] + [("c", "a", "model_a")] * 6)
    log = pd.DataFrame(rows, columns=["model_a", "model_b", "winner"])
    with pytest.warns(SeparationWarning, match=r"6 of 2\d votes .* the position bias .* the groups \{a\} \| \{b\} "
                                               r"\| \{c\}"):
        fit = bradley_terry(log, ties=ties, reference="b")
    inner = bradley_terry(log.iloc[:21], ties=ties, reference="b", position="none")  # the same model on them
    assert fit.position_se == np.inf and fit.se["a"] == np.inf and fit.se["c"] == np.inf
    assert fit.loglik == pytest.approx(inner.loglik, abs=1e-6)
    if ties != "drop":
        assert fit.tie_parameter == pytest.approx(inner.tie_parameter, rel=1e-8)


def test_a_covariate_that_separates_is_infinite_and_the_rest_is_glm_on_the_other_votes():
    log = pd.read_csv(HERE / "separated_covariate_log.csv")
    with pytest.warns(SeparationWarning, match=r"73 of 490 votes .* the covariate 'length' have no finite") as rec:
        fit = bradley_terry(log, covariates={"length": ("len_a", "len_b")}, reference="sys00")
    message = str(rec[0].message)
    assert "leave out the covariate" in message and "position bias" not in message
    full, within = R["covariate_full"], R["covariate_within"]
    assert full["converged"] and full["se"]["length"] > 100  # glm says converged, with a wide but finite se
    assert fit.covariates.loc["length", "se"] == np.inf and np.isnan(fit.covariates.loc["length", "pvalue"])
    systems = ["sys01", "sys02", "sys03"]
    np.testing.assert_allclose(fit.abilities[systems], [within["coef"][f"d_{s}"] for s in systems], atol=1e-6)
    np.testing.assert_allclose(fit.se[systems], [within["se"][f"d_{s}"] for s in systems], rtol=1e-5)
    assert fit.position_bias == pytest.approx(within["coef"]["first"], abs=1e-6)
    assert fit.position_se == pytest.approx(within["se"]["first"], rel=1e-5)
    assert fit.loglik == pytest.approx(within["loglik"], abs=1e-5)
    assert fit.separated == ()  # every ability is identified
    profile = fit.intervals(method="profile")
    assert np.all(np.isfinite(profile[["lower", "upper"]]))
    assert np.all((profile.lower < fit.abilities) & (fit.abilities < profile.upper) | (fit.abilities == 0))
    assert np.all(np.isfinite(fit.contrasts().se))


@pytest.mark.parametrize("ties", ["davidson", "ordinal"])
def test_covariate_separation_with_ties_leaves_the_fit_of_the_other_votes(ties):
    log = pd.read_csv(HERE / "separated_covariate_log.csv")
    with pytest.warns(SeparationWarning, match="the covariate 'length'"):
        fit = bradley_terry(log, covariates={"length": ("len_a", "len_b")}, reference="sys00", ties=ties)
    inner = bradley_terry(log[log.len_a == log.len_b], reference="sys00", ties=ties)
    assert fit.covariates.loc["length", "se"] == np.inf
    np.testing.assert_allclose(fit.abilities, inner.abilities, atol=1e-6)
    np.testing.assert_allclose(fit.se, inner.se, rtol=1e-5)
    assert fit.position_se == pytest.approx(inner.position_se, rel=1e-5)
    assert fit.tie_parameter == pytest.approx(inner.tie_parameter, rel=1e-6)
    assert np.all(np.isfinite(fit.arena_abilities().se))


def test_a_tie_threshold_that_diverges_is_refused_by_name():
    # x-y and y-z always tie, x beat z: the win graph is strongly connected (ties count both ways), yet the
    # likelihood rises without bound as tau and the spread x > y > z grow together
    log = pd.DataFrame({"model_a": ["x", "y", "x"] * 4, "model_b": ["y", "z", "z"] * 4,
                        "winner": ["tie", "tie", "model_a"] * 4})
    for ties in ("davidson", "ordinal"):
        with pytest.raises(InputError, match=f"ties='{ties}' the tie parameter is infinite"):
            bradley_terry(log, ties=ties, position="none")


def _arena_with_judges(seed=2):
    log = simulate_arena(1200, {"a": 0.4, "b": 0.0, "c": -0.4}, n_judges=6, judge_sd=0.5, tie_tau=0.3,
                         random_state=seed)
    rng = np.random.default_rng(seed)
    picked = (log.winner != "tie") & (rng.uniform(size=len(log)) < 0.1)
    log["len_a"] = 10 + np.where(picked & (log.winner == "model_a"), 5, 0)
    log["len_b"] = 10 + np.where(picked & (log.winner == "model_b"), 5, 0)
    return log


@pytest.mark.parametrize("ties", ["drop", "ordinal"])
def test_random_effects_models_refuse_a_separation_through_position_or_a_covariate(ties):
    log = _arena_with_judges()
    with pytest.raises(InputError, match=r"separation through the covariate 'length'.*position='fixed'"):
        bradley_terry(log, judge="judge", position="random", covariates={"length": ("len_a", "len_b")}, ties=ties)
    first = FIRST_WINS.assign(judge=["j1", "j2"] * 10)
    if ties == "ordinal":
        first.loc[0, "winner"] = "tie"
        with pytest.raises(InputError, match="tie parameter is infinite"):
            bradley_terry(first, judge="judge", position="random", ties=ties)
    else:
        with pytest.raises(InputError, match=r"separation through the position bias"):
            bradley_terry(first, judge="judge", position="random")
    fixed = _quiet(log, covariates={"length": ("len_a", "len_b")}, ties=ties)  # the fixed model reports it
    assert fixed.covariates.loc["length", "se"] == np.inf and np.all(np.isfinite(fixed.se))


def _brute_force(A):
    """The maximal set of separated rows by the primal program: max sum(t), A z >= t, 0 <= t <= 1."""
    m, q = A.shape
    res = linprog(np.concatenate([np.zeros(q), -np.ones(m)]), A_ub=np.hstack([-A, np.eye(m)]), b_ub=np.zeros(m),
                  bounds=[(None, None)] * q + [(0, 1)] * m, method="highs")
    assert res.status == 0
    return res.x[q:] > 0.5


def test_the_separated_votes_are_the_maximal_set_on_random_small_logs():
    rng = np.random.default_rng(5)
    checked = {"separated": 0, "tie": 0, "none": 0}
    for _ in range(150):
        k, n = int(rng.integers(2, 5)), int(rng.integers(2, 12))
        ties = str(rng.choice(["drop", "davidson", "ordinal"]))
        a = rng.integers(0, k, n)
        b = (a + rng.integers(1, k, n)) % k
        X = np.zeros((n, k))
        X[np.arange(n), a] += 1
        X[np.arange(n), b] -= 1
        X = np.hstack([X[:, 1:], np.ones((n, 1))] + ([rng.integers(-2, 3, (n, 1))] if rng.uniform() < 0.5 else []))
        if np.linalg.matrix_rank(X) < X.shape[1]:
            continue
        outcome = rng.choice([0, 1, 2] if ties != "drop" else [0, 2], n)
        if ties != "drop":
            outcome[0] = 1
        count = rng.integers(1, 4, n).astype(float)
        model = outcome_model(ties)
        fit = fit_fixed(model, X, outcome, count, warn=False, covariance=False)
        sep = find_separation(model, X, outcome, count, fit.beta, fit.phi)
        A, _, vote = constraint_rows(model, X, outcome, count, fit.beta, fit.phi)
        votes = np.zeros(n, dtype=bool)
        votes[vote[_brute_force(A)]] = True
        tie_infinite = bool(model.n_phi and np.any(votes & (outcome == 1)))
        assert sep.tie_infinite == tie_infinite
        if not tie_infinite:
            np.testing.assert_array_equal(separated_rows(X, sep.null), votes)
        checked["tie" if tie_infinite else "separated" if votes.any() else "none"] += 1
    assert min(checked.values()) >= 20  # every kind of case was met


def test_the_score_is_a_positive_combination_of_the_constraint_rows():
    from mixeval.preferences._fixed import _counts_by_outcome, _score_and_information

    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 3))
    outcome = rng.integers(0, 3, 30)
    count = rng.integers(1, 5, 30).astype(float)
    beta = rng.normal(size=3)
    for ties in ("drop", "davidson", "ordinal"):
        model = outcome_model(ties)
        o = np.where(outcome == 1, 2, outcome) if ties == "drop" else outcome
        A, w, _ = constraint_rows(model, X, o, count, beta, 0.4)
        score = _score_and_information(model, X, _counts_by_outcome(o, count), beta, 0.4 if model.n_phi else 0.0,
                                       0.0, information=False)[0]
        assert np.all(w > 0)
        np.testing.assert_allclose(A.T @ w, score, atol=1e-10)


def test_a_log_without_separation_needs_no_linear_program(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the linear program ran on a log whose estimates exist")

    monkeypatch.setattr(_separation, "linprog", refuse)
    log = simulate_arena(3000, {f"s{k}": v for k, v in enumerate(np.linspace(-1, 1, 12))}, position=0.3,
                         tie_tau=0.4, random_state=4)
    log["len_a"], log["len_b"] = np.random.default_rng(4).normal(size=(2, len(log)))
    for ties in ("drop", "davidson", "ordinal"):
        fit = bradley_terry(log, ties=ties, covariates={"len": ("len_a", "len_b")})
        assert np.all(np.isfinite(fit.se)) and np.isfinite(fit.position_se)


def test_bootstrap_intervals_of_a_separated_fit_run():
    log = pd.read_csv(HERE / "separated_covariate_log.csv")
    fit = _quiet(log, covariates={"length": ("len_a", "len_b")}, reference="sys00")
    boot = fit.intervals(method="bootstrap", n_resamples=20, random_state=1)
    assert np.all(np.isfinite(boot.loc[["sys01", "sys02", "sys03"], ["lower", "upper"]]))


# ---------------------------------------------------------------------------------------------------- identification


def _votes(**columns):
    log = simulate_arena(400, {"a": 0.5, "b": 0.0, "c": -0.5}, position=0.2, random_state=7)
    return log.assign(**columns)


def test_a_covariate_with_zero_difference_is_refused_by_name():
    with pytest.raises(InputError, match=r"covariate 'length': its difference \(len_a - len_b\) is 0 in every vote"):
        bradley_terry(_votes(len_a=100, len_b=100), covariates={"length": ("len_a", "len_b")})
    with pytest.raises(InputError, match=r"is 0 in every vote used \(ties are left out with ties='drop'\)"):
        log = _votes(len_a=100, len_b=100, winner=["tie", "model_a", "model_b", "tie"] * 100)
        bradley_terry(log.assign(len_a=np.where(log.winner == "tie", 120, 100)),
                      covariates={"length": ("len_a", "len_b")})


def test_aliased_covariates_and_positions_are_refused_naming_what_they_alias():
    log = _votes()
    with pytest.raises(InputError, match=r"covariate 'length' is a linear combination of the position bias"):
        bradley_terry(log.assign(len_a=105, len_b=100), covariates={"length": ("len_a", "len_b")})
    shifted = bradley_terry(log.assign(len_a=105, len_b=100), covariates={"length": ("len_a", "len_b")},
                            position="none")  # without a position term it is one
    plain = bradley_terry(log)
    assert 5 * shifted.covariates.loc["length", "estimate"] == pytest.approx(plain.position_bias, rel=1e-8)
    size = {"a": 7.0, "b": 13.0, "c": 70.0}
    with pytest.raises(InputError, match=r"covariate 'size' is a linear combination of the systems' abilities"):
        bradley_terry(log.assign(size_a=log.model_a.map(size), size_b=log.model_b.map(size)),
                      covariates={"size": ("size_a", "size_b")})
    rng = np.random.default_rng(1)
    u = rng.normal(size=len(log))
    with pytest.raises(InputError, match=r"covariate 'twice' is a linear combination of covariate 'length'"):
        bradley_terry(log.assign(la=u, lb=0.0, ta=2 * u, tb=0.0),
                      covariates={"length": ("la", "lb"), "twice": ("ta", "tb")})
    one_order = log.assign(model_a=np.where(log.model_a < log.model_b, log.model_a, log.model_b),
                           model_b=np.where(log.model_a < log.model_b, log.model_b, log.model_a))
    chain = one_order[~((one_order.model_a == "a") & (one_order.model_b == "c"))]  # a-b and b-c, one order each
    with pytest.raises(InputError, match="the position bias cannot be told apart from the abilities"):
        bradley_terry(chain)
    assert np.all(np.isfinite(bradley_terry(chain, position="none").se))


def test_the_cli_refuses_a_covariate_with_zero_difference(capsys, tmp_path):
    path = tmp_path / "votes.csv"
    _votes(len_a=100, len_b=100).to_csv(path, index=False)
    code = main(["preferences", str(path), "--covariate", "length=len_a,len_b", "--json"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "covariate 'length'" in err and "len_a - len_b" in err
