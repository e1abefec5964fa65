"""Reliability on the observed scale (issue 36 item 9): the G-theory coefficient of the mean observed score of
binomial, Poisson and ordinal models (mixeval._observed), checked against its Gaussian closed form and against
brute-force simulation with known truth; the Study, the D-study, the cheapest design and the intervals take
``scale=`` and name it."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit
from scipy.stats import norm

from mixeval import Study, reliability
from mixeval._observed import moments_from, observed_coefficient
from mixeval.errors import InputError

COMPS = {"item": 1.0, "seed": 0.3, "item:seed": 0.5}


def _brute(draw_scores, n, rng, items=300_000):
    """phi_obs by simulation: var(T) as the covariance of two means of one item over disjoint facet draws, the
    mean squared error as the variance of one mean; with a Monte Carlo standard error by the delta method."""
    a = rng.normal(0.0, 1.0, items)
    y1, y2 = draw_scores(a, n, rng), draw_scores(a, n, rng)
    c1, c2 = y1 - y1.mean(), y2 - y2.mean()
    cov, var = np.mean(c1 * c2), np.mean(c1 * c1)
    ratio = cov / var
    infl = (c1 * c2 - cov) / var - ratio * (c1 * c1 - var) / var  # influence function of cov / var
    return ratio, float(np.std(infl) / np.sqrt(items))


def _binary(eta0):
    def draw(a, n, rng):
        eta = eta0 + a[:, None] + rng.normal(0, np.sqrt(0.3), (a.size, n)) + rng.normal(0, np.sqrt(0.5), (a.size, n))
        return (rng.random((a.size, n)) < expit(eta)).mean(axis=1)
    return draw


def test_gaussian_scores_give_definition_3_2_and_the_relative_coefficient():
    comps = {"s": 4.0, "r": 1.0, "o": 0.5, "r:s": 2.0, "o:s": 1.0, "o:r": 0.5}
    m = moments_from(comps, "s", np.zeros(1), lambda x: x, lambda x: x * x + 2.0)
    latent = {**comps, "Residual": 2.0}
    for n in ({"r": 1}, {"r": 3, "o": 2}, {"r": 2.5, "o": 4}):
        for kind in ("absolute", "relative"):
            assert observed_coefficient(m, n, kind=kind) == pytest.approx(reliability.phi(latent, "s", n, kind=kind),
                                                                          rel=1e-10)


@pytest.mark.parametrize("n", [1, 6])
def test_binary_observed_phi_matches_brute_force_simulation(n):
    eta0 = 1.6  # about 80% accuracy
    rng = np.random.default_rng(n)
    want, se = _brute(_binary(eta0), n, rng)
    m = moments_from(COMPS, "item", np.array([eta0]), expit, expit)
    got = observed_coefficient(m, {"seed": n})
    assert got == pytest.approx(want, abs=4 * se)
    latent = reliability.phi({**COMPS, "Residual": np.pi ** 2 / 3}, "item", {"seed": n})
    assert got < latent - 0.05  # the logit scale overstates the reliability of the mean accuracy


def test_binary_relative_coefficient_matches_simulation_of_crossed_seeds():
    eta0, n, items, reps = 1.6, 3, 400, 2500
    rng = np.random.default_rng(11)
    within = np.empty(reps)
    for r in range(reps):  # seeds shared by every item of a replicate: their main effect is common to all items
        a = rng.normal(0, 1, items)
        eta = (eta0 + a[:, None] + rng.normal(0, np.sqrt(0.3), n)[None, :]
               + rng.normal(0, np.sqrt(0.5), (items, n)))
        within[r] = np.var((rng.random((items, n)) < expit(eta)).mean(axis=1), ddof=1)
    m = moments_from(COMPS, "item", np.array([eta0]), expit, expit)
    # E[within-replicate variance of the item means] = var(T) + relative error variance
    phi_rel = observed_coefficient(m, {"seed": n}, kind="relative")
    want = m.var_true / phi_rel
    assert np.mean(within) == pytest.approx(want, abs=4 * np.std(within) / np.sqrt(reps))


def test_poisson_and_ordinal_observed_phi_match_simulation():
    rng = np.random.default_rng(5)
    n = 4
    comps = {"item": 0.5, "rater": 0.2, "item:rater": 0.3}

    def counts(a, n, rng):
        eta = 0.7 + np.sqrt(0.5) * a[:, None] + rng.normal(0, np.sqrt(0.2), (a.size, n)) \
            + rng.normal(0, np.sqrt(0.3), (a.size, n))
        return rng.poisson(np.exp(eta)).mean(axis=1)

    want, se = _brute(counts, n, rng)
    m = moments_from(comps, "item", np.array([0.7]), np.exp, lambda x: np.exp(x) + np.exp(2 * x))
    assert observed_coefficient(m, {"rater": n}) == pytest.approx(want, abs=4 * se)

    cuts = np.array([-1.0, 0.0, 1.2])  # probit cumulative link: P(Y <= j) = Phi(theta_j - eta), ratings 1..4

    def ratings(a, n, rng):
        latent = np.sqrt(0.5) * a[:, None] + rng.normal(0, np.sqrt(0.2), (a.size, n)) \
            + rng.normal(0, np.sqrt(0.3), (a.size, n)) + rng.normal(size=(a.size, n))
        return (np.digitize(latent, cuts) + 1.0).mean(axis=1)

    def probs(x):
        cum = norm.cdf(cuts[None, :] - np.ravel(x)[:, None])
        return np.diff(np.column_stack([np.zeros(cum.shape[0]), cum, np.ones(cum.shape[0])]), axis=1).reshape(
            *np.shape(x), 4)

    scores = np.arange(1.0, 5.0)
    want, se = _brute(ratings, n, rng)
    m = moments_from(comps, "item", np.zeros(1), lambda x: probs(x) @ scores, lambda x: probs(x) @ scores ** 2)
    assert observed_coefficient(m, {"rater": n}) == pytest.approx(want, abs=4 * se)


def _binary_study(items=150, seeds=6, rng=3):
    rng = np.random.default_rng(rng)
    d = pd.DataFrame([(i, s, m) for i in range(items) for s in range(seeds) for m in "AB"],
                     columns=["item", "seed", "system"])
    eta = 1.2 + 0.6 * (d.system == "B") + rng.normal(0, 1, items)[d.item] + rng.normal(0, 0.3, seeds)[d.seed]
    d["correct"] = (rng.random(len(d)) < expit(eta)).astype(int)
    return Study(d, "correct ~ system + (1|item) + (1|seed)", family="binomial")


def test_study_phi_defaults_to_the_observed_scale_and_names_it():
    study = _binary_study()
    fit = study.fit
    observed, latent = study.phi({"seed": 6}), study.phi({"seed": 6}, scale="latent")
    v = fit.latent_components
    assert latent == pytest.approx(v["item"] / (v["item"] + (v["seed"] + v["Residual"]) / 6), rel=1e-12)
    assert observed < latent
    # the observed coefficient pools the two systems' conditions: the ratio of the averaged moments
    from mixeval._observed import observed_moments
    moments = observed_moments(fit, "item")
    eta = np.unique(fit.design.X @ fit.coef)
    single = [moments_from(v, "item", np.array([e]), expit, expit) for e in eta]
    var_true = np.mean([m.var_true for m in single])
    error = np.mean([m.same for m in single]) / 6
    assert moments.var_true == pytest.approx(var_true, rel=1e-12)
    assert observed == pytest.approx(var_true / (var_true + error), rel=1e-9)
    table = study.reliability({"seed": 6})
    assert list(table["scale"]) == ["observed", "observed"] and "observed scale" in table.attrs["note"]
    d = study.dstudy({"seed": [1, 6]})
    assert d.attrs["scale"] == "observed" and d["phi"].iloc[1] == pytest.approx(observed)
    assert study.dstudy({"seed": [6]}, scale="latent")["phi"].iloc[0] == pytest.approx(latent)
    assert study.data_design() == {"seed": 6}
    choice = study.cheapest_design(0.5, max_n={"seed": 20})
    assert choice.scale == "observed" and "(observed scale)" in choice.summary()
    assert study.cheapest_design(0.5, max_n={"seed": 20}, scale="latent").n["seed"] < choice.n["seed"]


def test_scale_is_refused_where_it_has_no_meaning():
    with pytest.raises(InputError, match="scale='observed' needs a fitted model"):
        reliability.phi({"s": 1.0, "Residual": 1.0}, "s", scale="observed")
    with pytest.raises(InputError, match="scale must be one of"):
        reliability.phi({"s": 1.0, "Residual": 1.0}, "s", scale="logit")
    rng = np.random.default_rng(0)
    d = pd.DataFrame({"item": np.repeat(np.arange(20), 3), "rater": np.tile([0, 1, 2], 20)})
    d["score"] = rng.normal(size=20)[d.item] + rng.normal(size=60)
    gaussian = Study(d, "score ~ (1|item) + (1|rater)")
    assert gaussian.phi(scale="observed") == gaussian.phi(scale="latent") == gaussian.phi()
    with pytest.raises(InputError, match="not a facet"):
        _binary_study(items=40).phi({"rater": 2})


def test_intervals_and_confident_design_on_the_observed_scale():
    from mixeval.uncertainty import component_draws, dstudy_intervals, phi_interval

    study = _binary_study(items=60, seeds=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        draws = component_draws(study.fit, n_resamples=40, random_state=1, progress=False)
    assert draws.attrs["coef"].shape == (40, 2)
    ci = phi_interval(study.fit, "item", {"seed": 4}, draws=draws)
    assert ci.estimate == pytest.approx(study.phi({"seed": 4})) and "observed scale" in ci.method
    assert 0 <= ci.lower < ci.estimate < ci.upper <= 1
    latent = phi_interval(study.fit, "item", {"seed": 4}, draws=draws, scale="latent")
    assert latent.estimate == pytest.approx(study.phi({"seed": 4}, scale="latent"))
    table = dstudy_intervals(study.fit, "item", {"seed": [1, 4]}, draws=draws)
    assert table.attrs["scale"] == "observed" and table["phi"].iloc[1] == pytest.approx(ci.estimate)
    assert table["phi_lower"].iloc[1] == pytest.approx(ci.lower)
    choice = study.cheapest_design(0.4, max_n={"seed": 12}, confidence=0.8, draws=draws)
    assert choice.scale == "observed" and choice.phi_lower <= choice.phi
    plain = draws.copy()
    plain.attrs.clear()
    with pytest.raises(InputError, match="fixed effects"):
        phi_interval(study.fit, "item", {"seed": 4}, draws=plain)


def test_a_study_from_aggregates_has_the_rows_observed_phi():
    pa = pytest.importorskip("pyarrow")
    rng = np.random.default_rng(3)
    d = pd.DataFrame([(i, s, m) for i in range(60) for s in range(4) for m in "AB"], columns=["item", "seed", "system"])
    eta = 1.2 + 0.6 * (d.system == "B") + rng.normal(0, 1, 60)[d.item] + rng.normal(0, 0.3, 4)[d.seed]
    d["correct"] = (rng.random(len(d)) < expit(eta)).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        memory = Study(d, "correct ~ system + (1|item) + (1|seed)", family="binomial")
        cells = Study(pa.Table.from_pandas(d), "correct ~ system + (1|item) + (1|seed)", family="binomial")
        assert cells.phi({"seed": 4}) == pytest.approx(memory.phi({"seed": 4}), rel=1e-6)


# ----------------------------------------------------------------------------- glmmTMB's families (issue 39)
#: (family, fixed predictor, the family's parameters on the optimiser's scale)
TRUTH = {
    "negative_binomial": (1.0, np.log([2.5])),
    "beta": (0.5, np.log([8.0])),
    "ordered_beta": (0.3, np.array([np.log(6.0), -1.5, 1.8])),
    "beta_binomial": (0.4, np.log([3.0])),
}


def _draw(family, a, n, rng, trials=None):
    """Scores of ``n`` cells per item drawn with numpy's generators (not the family's own simulate): item effect
    ``a`` (sd 1), seed and item:seed effects as COMPS."""
    eta0, psi = TRUTH[family]
    eta = eta0 + a[:, None] + rng.normal(0, np.sqrt(0.3), (a.size, n)) + rng.normal(0, np.sqrt(0.5), (a.size, n))
    mu = expit(eta)
    if family == "negative_binomial":
        theta, mean = np.exp(psi[0]), np.exp(eta)
        return rng.negative_binomial(theta, theta / (theta + mean)).astype(float)
    phi = np.exp(psi[0])
    if family == "beta":
        return rng.beta(mu * phi, (1 - mu) * phi)
    if family == "beta_binomial":
        m = rng.choice(trials, size=eta.shape)
        return rng.binomial(m, rng.beta(mu * phi, (1 - mu) * phi)) / m
    u = rng.random(eta.shape)
    zero, one = 1 - expit(eta - psi[1]), expit(eta - psi[2])
    return np.where(u < zero, 0.0, np.where(u < 1 - one, rng.beta(mu * phi, (1 - mu) * phi), 1.0))


def _family_fit(family):
    """A fit of the family to a small simulated design (its rows, weights and family give the score functions)."""
    rng = np.random.default_rng(2)
    d = pd.DataFrame([(i, s) for i in range(60) for s in range(4)], columns=["item", "seed"])
    a = rng.normal(size=60)
    d["n"] = np.tile([5.0, 20.0], len(d) // 2)
    y = _draw(family, a[d.item.to_numpy()], 1, rng, trials=np.array([5, 20]))[:, 0]
    if family == "beta_binomial":  # the rows' own trials
        mu = expit(TRUTH[family][0] + a[d.item.to_numpy()])
        y = rng.binomial(d.n.astype(int), rng.beta(mu * 3, (1 - mu) * 3)) / d.n
    d["y"] = y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Study(d, "y ~ 1 + (1|item) + (1|seed)", family=family,
                     weights="n" if family == "beta_binomial" else None).fit


@pytest.mark.parametrize("family", list(TRUTH))
@pytest.mark.parametrize("n", [1, 4])
def test_new_families_observed_phi_matches_brute_force_simulation(family, n):
    """The observed-scale coefficient from the family's mean and variance (its dispersion included) against the
    covariance of two independent means of one item's scores; 4 Monte Carlo standard errors."""
    from mixeval._observed import observed_moments

    fit = _family_fit(family)
    eta0, psi = TRUTH[family]
    m = observed_moments(fit, "item", components=COMPS, coef=np.array([eta0]), family_par=psi)
    got = observed_coefficient(m, {"seed": n})
    rng = np.random.default_rng(10 + n)
    want, se = _brute(lambda a, k, r: _draw(family, a, k, r, trials=np.array([5, 20])).mean(axis=1), n, rng)
    assert got == pytest.approx(want, abs=4 * se)
    # the dispersion is part of the score's variance: without it the coefficient is another (larger) number
    if family in ("negative_binomial", "beta"):
        tight = observed_moments(fit, "item", components=COMPS, coef=np.array([eta0]), family_par=psi + 6.0)
        assert observed_coefficient(tight, {"seed": n}) - got > max(0.05, 2 * se)


@pytest.mark.parametrize("family", list(TRUTH))
def test_new_family_study_reliability_on_both_scales_with_intervals(family):
    from mixeval.uncertainty import component_draws, phi_interval

    fit = _family_fit(family)
    observed = reliability.phi(fit, "item", {"seed": 4})
    latent = reliability.phi(fit, "item", {"seed": 4}, scale="latent")
    assert 0 < observed < 1 and 0 < latent < 1 and observed != pytest.approx(latent)
    note = reliability.scale_note(fit, "observed")
    assert "observed scale" in note
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        draws = component_draws(fit, n_resamples=12, random_state=3, progress=False)
    psi = draws.attrs["family_par"]
    assert psi.shape == (12, fit.family.n_parameters) and np.all(np.isfinite(psi))
    assert np.std(psi[:, 0]) > 0  # the dispersion is redrawn with every refit
    if family == "negative_binomial":  # its latent residual moves with theta and the mean count
        assert np.std(draws["Residual"]) > 0
    ci = phi_interval(fit, "item", {"seed": 4}, draws=draws)
    assert ci.estimate == pytest.approx(observed) and "observed scale" in ci.method
    assert 0 <= ci.lower <= ci.upper <= 1
