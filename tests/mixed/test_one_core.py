"""One model core: every family x random-effects structure x data source through the same pipeline and the
same result members, each cell of the matrix a test or a named refusal.

Families: Gaussian (``lmer``), binomial and Poisson (``glmer``), and glmmTMB's negative binomial, beta, ordered
beta and beta-binomial (``glmer``'s Laplace fit with the family's parameters); structures: one intercept, crossed
intercepts, a random slope; sources: a pandas DataFrame, a DuckDB relation and an Arrow table (fitted from
aggregates). Layers: the result members, pickling, predictions, simulation, Wald intervals, the command line, the
Study methods (for the families the Study layer dispatches on: :data:`STUDY_FAMILIES`).
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

import mixeval
from mixeval import Study
from mixeval.errors import InputError, InputTypeError, MixevalWarning
from mixeval.mixed import GlmerResult, LmerResult, MixedResult
from mixeval.mixed.families import get_family

#: the families whose Study layer is wired (the glmmTMB families reach Study in a later step)
STUDY_FAMILIES = ("gaussian", "binomial", "poisson")
FAMILIES = STUDY_FAMILIES + ("negative_binomial", "beta", "ordered_beta", "beta_binomial")
STRUCTURES = {
    "intercept": "{y} ~ system + (1|item)",
    "crossed": "{y} ~ system + (1|item) + (1|seed)",
    "slope": "{y} ~ system + x + (1 + x|item)",
}
RESPONSE = {"gaussian": "score", "binomial": "correct", "poisson": "count", "negative_binomial": "errors",
            "beta": "rouge", "ordered_beta": "f1", "beta_binomial": "passk"}
#: weights= of a family's fit (the trials of a beta-binomial proportion)
WEIGHTS = {"beta_binomial": "n"}

#: every fitted mixed model has these members, with these signatures
MEMBERS = ("varcorr", "components", "variances", "fixef", "vcov", "coefficients", "ranef", "loglik", "deviance",
           "criterion", "aic", "bic", "n_params", "ngrps", "nobs", "family", "link", "reml", "singular", "converged",
           "latent_components", "distribution_variance")
METHODS = ("refit", "simulate", "predict", "confint", "bootstrap", "summary", "to_dict", "_repr_html_",
           "varcorr_frame")


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    rng = np.random.default_rng(25)
    n_item, n_seed = 40, 3
    item = np.repeat(np.arange(n_item), 2 * n_seed)
    system = np.tile(np.repeat(["A", "B"], n_seed), n_item)
    seed = np.tile(np.arange(n_seed), 2 * n_item)
    x = rng.normal(size=item.size)
    eta = 0.2 + rng.normal(0, 0.8, n_item)[item] + rng.normal(0, 0.3, n_seed)[seed] + 0.5 * (system == "B") \
        + (0.3 + rng.normal(0, 0.3, n_item)[item]) * x
    mu = 1 / (1 + np.exp(-0.5 * eta))
    extra = {
        "errors": rng.negative_binomial(2.0, 2.0 / (2.0 + np.exp(0.5 + 0.3 * eta))),
        "rouge": np.clip(rng.beta(mu * 8, (1 - mu) * 8), 1e-3, 1 - 1e-3),
        "f1": get_family("ordered_beta").simulate(0.5 * eta, 1.0, rng, np.array([np.log(6.0), -2.0, 2.0])),
        "passk": rng.binomial(5, rng.beta(mu * 3, (1 - mu) * 3)) / 5.0,
        "n": np.full(item.size, 5.0),
    }
    return pd.DataFrame({
        "item": [f"i{i}" for i in item], "system": system, "seed": [f"s{s}" for s in seed], "x": x,
        "domain": np.where(item % 2 == 0, "news", "chat"),
        "score": eta + rng.normal(0, 0.7, item.size),
        "correct": (rng.random(item.size) < 1 / (1 + np.exp(-eta))).astype(int),
        "count": rng.poisson(np.exp(0.3 * eta)),
        **extra,
    })


def _fit(family: str, structure: str, source) -> MixedResult:
    formula = STRUCTURES[structure].format(y=RESPONSE[family])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MixevalWarning)
        if family == "gaussian":
            return mixeval.lmer(formula, source)
        return mixeval.glmer(formula, source, family=family, weights=WEIGHTS.get(family))


@pytest.mark.parametrize("structure", list(STRUCTURES))
@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_and_structure_gives_the_one_result_type(data, family, structure):
    fit = _fit(family, structure, data)
    assert isinstance(fit, MixedResult)
    assert isinstance(fit, LmerResult if family == "gaussian" else GlmerResult)
    assert fit.family.name == family
    for name in MEMBERS:
        getattr(fit, name)
    for name in METHODS:
        assert callable(getattr(fit, name))
    # the same conventions for every family
    assert list(fit.varcorr.columns) == ["group", "name", "variance", "std", "percent"]
    assert set(fit.variances) <= set(fit.components)
    assert fit.deviance == pytest.approx(-2 * fit.loglik)
    assert fit.aic == pytest.approx(-2 * fit.loglik + 2 * fit.n_params)
    assert fit.n_params == len(fit.fixed_names) + fit.theta.size + (family == "gaussian") + fit.family.n_parameters
    assert fit.dispersion > 0 and (fit.family.n_parameters or family == "gaussian" or fit.dispersion == 1.0)
    assert set(fit.to_dict()) >= {"nobs", "family", "link", "reml", "loglik", "deviance", "criterion", "aic",
                                  "bic", "varcorr", "fixef", "se", "singular", "converged", "dispersion"}
    assert list(fit.ranef) == list(dict.fromkeys(fit.group_names))
    assert ("Residual" in fit.components) == (family == "gaussian")
    assert "Residual" in fit.latent_components


@pytest.mark.parametrize("structure", list(STRUCTURES))
@pytest.mark.parametrize("family", FAMILIES)
def test_results_pickle_and_compare_equal(data, family, structure):
    fit = _fit(family, structure, data)
    fit.model  # a cached evaluator is not part of the pickled state
    back = pickle.loads(pickle.dumps(fit))
    assert back == fit
    assert back.summary() == fit.summary()
    np.testing.assert_array_equal(back.predict(), fit.predict())


@pytest.mark.parametrize("family", FAMILIES)
def test_refit_has_one_signature(data, family):
    fit = _fit(family, "intercept", data)
    ml = fit.refit(REML=False)
    assert not ml.reml
    assert ml.refit(REML=ml.reml) is ml
    with pytest.raises(TypeError):
        fit.refit(False)  # keyword-only for every family
    with pytest.raises(InputTypeError, match="REML"):
        fit.refit(REML="no")


@pytest.mark.parametrize("structure", list(STRUCTURES))
@pytest.mark.parametrize("family", FAMILIES)
def test_predict_and_simulate(data, family, structure):
    fit = _fit(family, structure, data)
    mu = fit.predict()
    assert mu.shape == (len(data),)
    np.testing.assert_allclose(mu, fit.fitted, rtol=1e-12, atol=1e-12)  # X beta + Z b at the conditional modes
    link = fit.predict(type="link")
    np.testing.assert_allclose(mu, fit.family.mean(link, fit._family_par), rtol=1e-12, atol=1e-12)
    if family != "ordered_beta":  # E[y] is the inverse link, except with the ordered beta's exact 0s and 1s
        np.testing.assert_allclose(link, fit.family.linkfun(mu) if family != "gaussian" else mu, rtol=1e-6, atol=1e-8)
    population = fit.predict(data, re=False, type="link")
    np.testing.assert_allclose(population, fit.design.X @ fit.coef)
    # lme4's default re.form = NULL: new rows that are the fitted rows get the fitted values
    np.testing.assert_allclose(fit.predict(data), mu, rtol=1e-10, atol=1e-12)
    sims = fit.simulate(3, random_state=1)
    assert sims.shape == (len(data), 3)
    np.testing.assert_array_equal(sims, fit.simulate(3, random_state=1))
    if family != "gaussian":  # draws are responses of the family (counts, proportions, successes of the trials)
        weights = np.full(len(data), 5.0) if family == "beta_binomial" else np.ones(len(data))
        for column in sims.T:
            fit.family.check_response(column, weights, "simulated")


def test_simulation_recovers_the_fitted_mean(data):
    """The simulated responses have the mean of the fitted model's marginal distribution (Poisson: E y = exp(eta +
    s^2 / 2) averaged over the random effects; checked as the grand mean within Monte-Carlo error)."""
    fit = _fit("poisson", "intercept", data)
    sims = fit.simulate(400, random_state=2)
    s2 = sum(fit.variances.values())
    expected = float(np.mean(np.exp(fit.design.X @ fit.coef + s2 / 2)))
    se = sims.mean(axis=0).std() / np.sqrt(sims.shape[1])
    assert abs(sims.mean() - expected) < 4 * se + 0.01


@pytest.mark.parametrize("family", FAMILIES)
def test_wald_confint_for_every_family(data, family):
    fit = _fit(family, "intercept", data)
    table = fit.confint(method="wald").table
    assert list(table.columns) == ["estimate", "lower", "upper"]
    fixed = table.loc[list(fit.fixed_names)]
    se = np.sqrt(np.diag(fit.cov_coef))
    np.testing.assert_allclose(fixed.upper - fixed.lower, 2 * 1.959963984540054 * se, rtol=1e-9)


# ----------------------------------------------------------------------------- sources

@pytest.fixture(scope="module")
def sources(data):
    duckdb = pytest.importorskip("duckdb")
    pa = pytest.importorskip("pyarrow")
    return {"duckdb": duckdb.from_df(data.drop(columns="x")), "arrow": pa.Table.from_pandas(data.drop(columns="x"))}


@pytest.mark.parametrize("source", ["duckdb", "arrow"])
@pytest.mark.parametrize("family", ["gaussian", "binomial"])
@pytest.mark.parametrize("structure", ["intercept", "crossed"])
def test_sources_beyond_memory_give_the_rows_fit(data, sources, family, structure, source):
    rows = _fit(family, structure, data)
    agg = _fit(family, structure, sources[source])
    assert type(agg) is type(rows)
    assert agg.nobs == rows.nobs
    assert agg.loglik == pytest.approx(rows.loglik, rel=1e-6)
    np.testing.assert_allclose(agg.coef, rows.coef, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(list(agg.variances.values()), list(rows.variances.values()), rtol=1e-3, atol=1e-6)


@pytest.mark.parametrize("source", ["duckdb", "arrow"])
def test_sources_refuse_what_they_cannot_fit_by_name(sources, source):
    for family in ("poisson", "negative_binomial", "beta", "ordered_beta", "beta_binomial"):
        with pytest.raises(InputError, match=family):
            _fit(family, "intercept", sources[source])
    with pytest.raises(InputError, match="weights"):
        mixeval.glmer("correct ~ system + (1|item)", sources[source], weights="seed")
    with pytest.raises(InputError, match="weights"):
        mixeval.lmer("score ~ system + (1|item)", sources[source], weights="seed")
    for fit in (mixeval.lmer, mixeval.glmer):
        with pytest.raises(InputError, match="drop_missing"):
            fit("correct ~ system + (1|item)", sources[source], drop_missing=True)


def test_glmer_with_the_gaussian_family_is_lmer(data):
    a = mixeval.glmer("score ~ system + (1|item)", data, family="gaussian")
    b = mixeval.lmer("score ~ system + (1|item)", data, REML=False)
    assert a == b


@pytest.mark.parametrize("value", [2.5, -1, True, "3"])
def test_nagq_must_be_a_whole_number(data, value):
    with pytest.raises(InputError, match="nAGQ"):
        mixeval.glmer("correct ~ system + (1|item)", data, nAGQ=value)


def test_poisson_counts_must_be_whole(data):
    with pytest.raises(InputError, match="whole counts"):
        mixeval.glmer("count ~ system + (1|item)", data.assign(count=data["count"] + 0.5), family="poisson")


# ----------------------------------------------------------------------------- layers: Study

@pytest.mark.parametrize("family", STUDY_FAMILIES)
def test_study_conditional_on_a_numeric_property_keeps_the_family(data, family):
    """Issue 25's first defect: a binomial Study's conditional() on a numeric property fitted a Gaussian LMM."""
    formula = STRUCTURES["intercept"].format(y=RESPONSE[family])
    study = Study(data, formula, family=None if family == "gaussian" else family)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MixevalWarning)
        glrt, slopes, cond = study.conditional("x")
    assert cond.fit.family.name == family
    assert glrt.details["formula_null"].endswith("(1|item)")
    assert glrt.df == 1.0
    assert set(slopes.emmeans[study.system]) == {"A", "B"}


@pytest.mark.parametrize("family", STUDY_FAMILIES)
def test_study_methods_honour_the_family(data, family):
    formula = STRUCTURES["crossed"].format(y=RESPONSE[family])
    study = Study(data, formula, family=None if family == "gaussian" else family)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MixevalWarning)
        fits = [study.fit, study.fit_ml, study.where("x > -1").fit]
        cond = study.conditional("domain")[2]
    assert {f.family.name for f in [*fits, cond.fit]} == {family}
    table = study.variance_components()
    assert table.variance.iloc[-1] == pytest.approx(study.fit.latent_components["Residual"])
    assert 0 < study.phi() < 1


def test_study_with_weights_uses_them(data):
    rng = np.random.default_rng(3)
    weighted = data.assign(w=rng.integers(1, 5, len(data)).astype(float))
    plain = Study(weighted, "score ~ system + (1|item)")
    with_w = Study(weighted, "score ~ system + (1|item)", weights="w")
    assert with_w.fit.loglik != pytest.approx(plain.fit.loglik)
    assert with_w.fit == mixeval.lmer("score ~ system + (1|item)", weighted, weights="w")


def test_reliability_refuses_slopes_for_every_family_by_name(data):
    for family in STUDY_FAMILIES:
        fit = _fit(family, "slope", data)
        with pytest.raises(InputError, match="random slopes"):
            mixeval.reliability.phi(fit, "item")


def test_one_satterthwaite_formula():
    """The Satterthwaite moment match is written once (mixed/_satterthwaite.py) and used by the engine and
    by the significance layer."""
    import inspect

    from mixeval.mixed import _result
    from mixeval.mixed._satterthwaite import satterthwaite_df
    from mixeval.significance import _satterthwaite

    assert _satterthwaite.satterthwaite_df is satterthwaite_df
    assert "2 * f0 * f0" not in inspect.getsource(_result)


@pytest.mark.parametrize("family", STUDY_FAMILIES)
def test_study_uncertainty_layer_for_every_family(data, family):
    """phi's bootstrap interval works for every family (a GLMM's draws carry its latent residual variance);
    power by simulation simulates and refits every family (it refused all but the Gaussian before)."""
    formula = STRUCTURES["intercept"].format(y=RESPONSE[family])
    study = Study(data, formula, family=None if family == "gaussian" else family)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MixevalWarning)
        iv = study.phi_interval(n_resamples=20, random_state=1, progress=False)
    assert iv.lower <= iv.estimate <= iv.upper
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MixevalWarning)
        res = study.power(n={"item": [20]}, n_resamples=5, random_state=1, progress=False)
    assert res.family == study.fit.family.name and list(res.table["item"]) == [20]
    assert res.table["failed"].iloc[0] < 5 and 0.0 <= res.table["power"].iloc[0] <= 1.0


# ----------------------------------------------------------------------------- layers: the command line

@pytest.mark.parametrize("family", FAMILIES)
def test_cli_fit_json_has_the_same_keys_for_every_family(data, family, tmp_path, capsys):
    import json

    from mixeval.cli import main

    path = tmp_path / "d.csv"
    data.to_csv(path, index=False)
    formula = STRUCTURES["crossed"].format(y=RESPONSE[family])
    weights = ["--weights", WEIGHTS[family]] if family in WEIGHTS else []
    assert main(["fit", str(path), formula, "--family", family, "--json", *weights]) == 0
    out = json.loads(capsys.readouterr().out)
    expected = _fit(family, "crossed", data).to_dict()
    assert set(out) - {"warnings"} == set(expected)
    assert out["loglik"] == pytest.approx(expected["loglik"], rel=1e-9)
    assert out["family"] == family
    assert out["dispersion"] == pytest.approx(expected["dispersion"], rel=1e-9)


def test_study_conditional_refuses_what_is_not_a_property(data):
    study = Study(data, STRUCTURES["crossed"].format(y="score"))
    for prop, match in [("system", "compared factor"), ("seed", "grouping factor"), ("nope", "nope")]:
        with pytest.raises(Exception, match=match) as info:
            study.conditional(prop)
        assert isinstance(info.value, InputError) or "not a column" in str(info.value) or "nope" in str(info.value)


# ----------------------------------------------------------------------------- the ordinal family in every layer

@pytest.fixture(scope="module")
def ratings() -> pd.DataFrame:
    rng = np.random.default_rng(28)
    n_item, n_rater = 40, 6
    item = np.repeat(np.arange(n_item), 3 * n_rater)
    system = np.tile(np.repeat(list("ABC"), n_rater), n_item)
    rater = np.tile(np.arange(n_rater), 3 * n_item)
    latent = (rng.normal(0, 1, n_item)[item] + rng.normal(0, 0.5, n_rater)[rater] + 0.4 * (system == "B")
              + 0.8 * (system == "C") + rng.logistic(size=item.size))
    return pd.DataFrame({"item": item, "system": system, "rater": rater, "domain": np.where(item % 2, "a", "b"),
                         "rating": np.digitize(latent, [-2, -0.7, 0.7, 2]) + 1})


def test_ordinal_study_through_every_layer(ratings, tmp_path, capsys):
    import json

    from mixeval.cli import main
    from mixeval.mixed import ClmmResult, clmm

    study = Study(ratings, "rating ~ system + (1|item) + (1|rater)", family="ordinal")
    fit = study.fit
    assert isinstance(fit, ClmmResult) and isinstance(fit, MixedResult) and not fit.reml
    assert fit == clmm("rating ~ system + (1|item) + (1|rater)", ratings)
    assert pickle.loads(pickle.dumps(fit)) == fit
    table = study.variance_components()
    assert table.variance.iloc[-1] == pytest.approx(np.pi**2 / 3)
    assert 0 < study.phi() < 1
    glrt = study.glrt()
    assert glrt.df == 2.0 and glrt.statistic > 0
    means = study.emmeans(type="mean.class")
    assert list(means.columns) == ["system", "mean.class", "se", "df", "lower", "upper"]
    assert means["mean.class"].is_monotonic_increasing  # the simulated order A < B < C
    pairs = study.pairwise(adjust="holm")
    assert len(pairs.table) == 3
    glrt_cond, pairs_cond, cond = study.conditional("domain")
    assert cond.fit.family.name == "ordinal" and glrt_cond.df == 4.0
    for bad, match in [(dict(reml=True), "maximum likelihood"), (dict(weights="rater"), "weights"),
                       (dict(link="log"), "link")]:
        with pytest.raises(InputError, match=match):
            Study(ratings, "rating ~ system + (1|item)", family="ordinal", **bad).fit
    with pytest.raises(InputError, match="asymptotic"):
        study.pairwise(df="kenward-roger")
    assert study.power(n={"item": [20]}, n_resamples=5, random_state=1, progress=False).family == "ordinal"
    path = tmp_path / "r.csv"
    ratings.to_csv(path, index=False)
    assert main(["significance", str(path), "rating ~ system + (1|item) + (1|rater)", "--family", "ordinal",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["glrt"]["statistic"] == pytest.approx(glrt.statistic, rel=1e-6)
