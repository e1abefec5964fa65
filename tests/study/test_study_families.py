"""Every public Study method with every family of the registry (issue 39): it works, checked against something that
can fail (the fit through the public door mixeval.fit, closed forms of Definition 3.2, likelihood-ratio statistics
recomputed from separate fits, the family's mean of the link-scale means, Wald statistics), or it is refused by name
with the family's reason (the family's Support table). The data are drawn from each family's own protocol
(Family.simulate), so a family added to the registry gets its row here; the sources (a DataFrame, aggregates from an
Arrow table) and cbind(successes, failures) are the other dimensions.

Correctness of the numbers against R is tested elsewhere: tests/significance/test_glmmtmb_response_scale.py
(glmmTMB + emmeans), tests/test_observed_scale.py (observed-scale reliability against simulation),
tests/mixed/families/test_glmmtmb_fixtures.py (the fits).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import mixeval
from mixeval import Study
from mixeval.errors import InputError
from mixeval.mixed.families import STUDY_METHODS, family_names, get_family

FORMULA = "y ~ system + (1|item) + (1|seed)"
SYSTEMS = {"A": 0.0, "B": 0.4, "C": -0.3}


def _parameters(family) -> np.ndarray:
    """Parameters (optimiser scale) to draw a family's responses: a dispersion of 6, cutpoints -1.6 and 1.4;
    an ordinal model's thresholds for five categories, a Gaussian residual sd of 1."""
    if family.engine == "clmm":
        return np.array([-1.5, -0.4, 0.6, 1.6])
    cuts = iter((-1.6, 1.4))
    return np.array([np.log(6.0) if kind == "dispersion" else next(cuts) for kind in family.parameter_kinds])


def _data(name: str, *, trials: int | None = None, seed: int = 0) -> pd.DataFrame:
    """30 items x 3 systems x 3 seeds drawn from the family: eta = 0.2 + system + item (sd 0.8) + seed (sd 0.3); a
    trials family's rows out of ``trials`` trials (6 by default for beta-binomial, 1 for binomial)."""
    family = get_family(name)
    rng = np.random.default_rng(seed)
    d = pd.DataFrame([(i, s, m) for i in range(30) for s in range(3) for m in SYSTEMS],
                     columns=["item", "seed", "system"])
    d["item"] = "i" + d["item"].astype(str).str.zfill(2)
    d["seed"] = "s" + d["seed"].astype(str)
    items = pd.factorize(d["item"])[0]
    seeds = pd.factorize(d["seed"])[0]
    eta = (0.2 + d["system"].map(SYSTEMS).to_numpy() + rng.normal(0, 0.8, 30)[items] + rng.normal(0, 0.3, 3)[seeds])
    d["length"] = np.round(rng.uniform(5, 60, 30)[items], 1)
    d["domain"] = np.where(items % 2 == 0, "news", "chat")
    if trials is None:
        trials = 6 if family.support.weights == "trials" and name != "binomial" else 1
    d["n"] = float(trials)
    y = family.simulate(eta, d["n"].to_numpy(), rng, _parameters(family))
    d["y"] = y + 1.0 if family.engine == "clmm" else y  # ratings 1..5
    if family.support.weights == "trials":
        d["k"] = np.round(d["y"] * d["n"])
        d["f"] = d["n"] - d["k"]
    return d


def _kwargs(name: str) -> dict:
    family = get_family(name)
    return {"family": name, "weights": "n" if family.support.weights == "trials" else None}


_STUDIES: dict[str, Study] = {}


def _study(name: str) -> Study:
    if name not in _STUDIES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            study = Study(_data(name), FORMULA, item="item", system="system", **_kwargs(name))
            study.fit
        _STUDIES[name] = study
    return _STUDIES[name]


def _quiet(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call()


# ----------------------------------------------------------------------------- what each method must satisfy
def _link_means(study: Study) -> pd.Series:
    """The systems' means on the link (latent) scale from the fixed effects: intercept + effect."""
    fit = study.fit
    coef = dict(zip(fit.fixed_names, fit.coef))
    base = coef.get("(Intercept)", 0.0)
    return pd.Series({s: base + coef.get(f"system{s}", 0.0) for s in SYSTEMS})


def check_fit(study: Study) -> None:
    fam = study.family
    door = _quiet(lambda: mixeval.fit(FORMULA, study.data, family=fam, weights=study.weights,
                                      REML=None if fam.engine != "lmer" else study.reml))
    assert study.fit.loglik == pytest.approx(door.loglik, rel=1e-9)
    np.testing.assert_allclose(study.fit.coef, door.coef, rtol=1e-7, atol=1e-9)


def check_variance_components(study: Study) -> None:
    table = study.variance_components()
    assert table["percent"].sum() == pytest.approx(100.0)
    comps = study.fit.latent_components
    assert table.set_index("component").loc["Residual", "variance"] == pytest.approx(comps["Residual"])
    if study.family.engine != "lmer":
        assert study.family.latent_note.rstrip(".") in table.attrs["note"]
    ci = _quiet(lambda: study.variance_components(ci="wald"))
    inside = ci.dropna(subset=["lower", "upper"])
    assert np.all((inside.lower <= inside.variance + 1e-12) & (inside.variance <= inside.upper + 1e-12))


def _definition_3_2(study: Study, n: int) -> float:
    v = study.fit.latent_components
    return v["item"] / (v["item"] + (v["seed"] + v["Residual"]) / n)


def check_phi(study: Study) -> None:
    latent = study.phi({"seed": 2}, scale="latent")
    assert latent == pytest.approx(_definition_3_2(study, 2), rel=1e-12)
    observed = study.phi({"seed": 2})
    assert 0 < observed < 1
    if study.family.engine != "lmer":
        assert observed != pytest.approx(latent, rel=1e-6)  # the mean observed score's coefficient is another


def check_reliability(study: Study) -> None:
    table = study.reliability({"seed": 2})
    assert table["value"].tolist() == pytest.approx([study.phi({"seed": 2}), study.phi({"seed": 2}, kind="relative")])
    assert table.attrs["note"]


def check_dstudy(study: Study) -> None:
    table = study.dstudy({"seed": [1, 3]}, scale="latent")
    assert table["phi"].tolist() == pytest.approx([_definition_3_2(study, 1), _definition_3_2(study, 3)], rel=1e-12)
    observed = study.dstudy({"seed": [3]})
    assert observed["phi"].iloc[0] == pytest.approx(study.phi({"seed": 3}))


def check_cheapest_design(study: Study) -> None:
    target = 0.9 * study.phi({"seed": 20}, scale="latent")
    choice = study.cheapest_design(target, max_n={"seed": 20}, scale="latent")
    k = choice.n["seed"]
    assert choice.phi >= target and (k == 1 or _definition_3_2(study, k - 1) < target)


def check_confint(study: Study) -> None:
    res = _quiet(lambda: study.confint(method="wald"))
    table = res.to_frame() if hasattr(res, "to_frame") else res.table
    fit = study.fit
    z = stats.norm.ppf(0.975)
    name = next(n for n in fit.fixed_names if n.startswith("system"))
    j = list(fit.fixed_names).index(name)
    row = table.set_index(table.columns[0]).loc[name] if name not in table.index else table.loc[name]
    se = np.sqrt(fit.cov_coef[j, j])
    assert (row["lower"], row["upper"]) == pytest.approx((fit.coef[j] - z * se, fit.coef[j] + z * se), rel=1e-8)


def check_phi_interval(study: Study) -> None:
    ci = _quiet(lambda: study.phi_interval({"seed": 2}, n_resamples=6, random_state=1, progress=False))
    assert ci.estimate == pytest.approx(study.phi({"seed": 2})) and ci.lower <= ci.upper


def check_dstudy_intervals(study: Study) -> None:
    table = _quiet(lambda: study.dstudy_intervals({"seed": [1, 2]}, n_resamples=6, random_state=1, progress=False))
    assert table["phi"].tolist() == pytest.approx(study.dstudy({"seed": [1, 2]})["phi"].tolist())
    assert np.all(table["phi_lower"] <= table["phi_upper"])


def check_power(study: Study) -> None:
    res = _quiet(lambda: study.power(n={"item": [20]}, n_resamples=4, random_state=1, progress=False))
    table = res.table if hasattr(res, "table") else res
    assert np.all((0 <= table["power"]) & (table["power"] <= 1))


def _ml(formula: str, study: Study, reml: bool = False):
    fam = study.family
    return _quiet(lambda: mixeval.fit(formula, study.data, family=fam, weights=study.weights,
                                      REML=reml if fam.support.reml else None))


def check_glrt(study: Study) -> None:
    res = study.glrt()
    null = _ml(study.null_formula(), study)
    full = _ml(FORMULA, study)
    assert res.df == 2 and res.statistic == pytest.approx(2 * (full.loglik - null.loglik), rel=1e-6, abs=1e-6)


def check_glrt_averaged(study: Study) -> None:
    res = study.glrt_averaged("seed")
    assert res.df == 2 and res.statistic >= 0 and 0 <= res.pvalue <= 1


def check_variance_lrt(study: Study) -> None:
    res = _quiet(lambda: study.variance_lrt("seed"))
    reml = study.family.engine == "lmer"
    full, null = _ml(FORMULA, study, reml), _ml("y ~ system + (1|item)", study, reml)
    assert res.statistic == pytest.approx(max(2 * (full.loglik - null.loglik), 0.0), abs=1e-5)


def check_emmeans(study: Study) -> None:
    fam = study.family
    if fam.engine == "clmm":  # the latent mode: the linear predictor less the mean threshold
        latent = study.emmeans(type="latent").set_index("system")["emmean"]
        diff = (latent - latent["A"]).to_numpy()
        np.testing.assert_allclose(diff, (_link_means(study) - _link_means(study)["A"]).to_numpy(), atol=1e-10)
        return
    link = _link_means(study)
    if fam.engine == "lmer":
        np.testing.assert_allclose(study.emmeans(df="asymptotic").set_index("system")["emmean"], link, rtol=1e-10)
        return
    table = study.emmeans(df="asymptotic").set_index("system")
    np.testing.assert_allclose(study.emmeans(type="link").set_index("system")["emmean"], link, rtol=1e-10)
    mean = fam.mean(link.to_numpy(), study.fit.family_par)
    np.testing.assert_allclose(table[fam.response_label], mean, rtol=1e-10)
    assert np.all((table.lower <= table[fam.response_label]) & (table[fam.response_label] <= table.upper))
    marginal = study.emmeans(marginal=True).set_index("system")[fam.response_label]
    assert np.all(np.isfinite(marginal)) and not np.allclose(marginal, mean)


def check_pairwise(study: Study) -> None:
    fam = study.family
    link = _link_means(study)
    if fam.engine == "clmm":
        res = study.pairwise(scale="latent")
    else:
        res = study.pairwise(df="asymptotic", **({"scale": "link"} if fam.engine == "glmer" else {}))
    first = res.table.iloc[0]
    assert first["contrast"] == "A - B" and first["estimate"] == pytest.approx(link["A"] - link["B"], rel=1e-8)
    if fam.engine == "glmer":
        default = study.pairwise(df="asymptotic").table.iloc[0]
        if fam.ratio_name:
            assert default[fam.ratio_name] == pytest.approx(np.exp(link["A"] - link["B"]), rel=1e-8)
        else:
            means = fam.mean(link.to_numpy(), study.fit.family_par)
            assert default["estimate"] == pytest.approx(means[0] - means[1], rel=1e-8)


def check_contrast(study: Study) -> None:
    res = study.contrast("trt.vs.ctrl", ref="A", df="asymptotic")
    link = _link_means(study)
    np.testing.assert_allclose(res.table["estimate"], [link["B"] - link["A"], link["C"] - link["A"]], rtol=1e-8)


def check_joint_tests(study: Study) -> None:
    table = study.joint_tests(df="asymptotic").set_index("term")
    fit = study.fit
    idx = [i for i, n in enumerate(fit.fixed_names) if n.startswith("system")]
    b, V = fit.coef[idx], fit.cov_coef[np.ix_(idx, idx)]
    wald = float(b @ np.linalg.solve(V, b))
    assert table.loc["system", "df1"] == 2 and table.loc["system", "F"] * 2 == pytest.approx(wald, rel=1e-6)


def check_conditional(study: Study) -> None:
    glrt, pairs, cond = _quiet(lambda: study.conditional("domain"))
    assert glrt.df == 4 and set(pairs.table["domain"]) == {"news", "chat"} and cond.family == study.family
    if study.family.engine == "clmm":
        with pytest.raises(InputError, match="not available for ordinal fits; pass cuts="):
            study.conditional("length")
        return
    glrt, slopes, _ = _quiet(lambda: study.conditional("length"))
    assert glrt.df == 2 and slopes.trend == "length" and len(slopes.table) == 3


def check_metric_comparisons(study: Study) -> None:
    with pytest.raises(InputError, match="no metric model"):
        study.metric_comparisons()


def check_report(study: Study) -> None:
    report = _quiet(lambda: study.report(progress=False))
    text = report.to_text()
    assert "Variance components" in text and "Residual" in text
    if study.family.engine != "lmer":
        assert f"family={study.family.name!r}" in text.replace("\n", "")


CALLS = {
    "fit": lambda s: s.fit, "variance_components": lambda s: s.variance_components(), "phi": lambda s: s.phi(),
    "reliability": lambda s: s.reliability(), "dstudy": lambda s: s.dstudy({"seed": [1, 2]}),
    "cheapest_design": lambda s: s.cheapest_design(0.5, max_n={"seed": 5}), "confint": lambda s: s.confint(),
    "phi_interval": lambda s: s.phi_interval(n_resamples=2), "dstudy_intervals": lambda s: s.dstudy_intervals(
        {"seed": [1]}, n_resamples=2), "power": lambda s: s.power(n={"item": [20]}, n_resamples=2),
    "glrt": lambda s: s.glrt(), "glrt_averaged": lambda s: s.glrt_averaged("seed"),
    "variance_lrt": lambda s: s.variance_lrt("seed"), "emmeans": lambda s: s.emmeans(),
    "pairwise": lambda s: s.pairwise(), "contrast": lambda s: s.contrast(), "joint_tests": lambda s: s.joint_tests(),
    "conditional": lambda s: s.conditional("domain"), "metric_comparisons": lambda s: s.metric_comparisons(),
    "report": lambda s: s.report(progress=False),
}
CHECKS = {name: globals()[f"check_{name}"] for name in STUDY_METHODS}


def test_the_matrix_covers_every_study_method():
    assert set(CALLS) == set(STUDY_METHODS) == set(CHECKS)
    public = {m for m in dir(Study) if not m.startswith("_")}
    assert set(STUDY_METHODS) <= public


@pytest.mark.parametrize("method", STUDY_METHODS)
@pytest.mark.parametrize("name", family_names())
def test_every_study_method_works_or_is_refused_by_name(name, method):
    study = _study(name)
    support = study.family.support
    if not support.allows(method):
        with pytest.raises(InputError, match=rf"family='{name}' does not support Study\.{method}\(\)"):
            _quiet(lambda: CALLS[method](study))
        return
    CHECKS[method](study)


@pytest.mark.parametrize("name", family_names())
def test_other_members_work_for_every_family(name):
    study = _study(name)
    assert study.data_design() == {"seed": 3}
    assert study.family.name in repr(study) or study.family.engine == "lmer"
    assert "Residual" in study.summary() and "<table" in study._repr_html_()
    sub = _quiet(lambda: study.where("seed != 's2'"))
    assert sub.family == study.family and sub.fit.nobs == 180
    with pytest.raises(InputError, match="interval"):
        study.confint(method="interval")


@pytest.mark.parametrize("name", family_names())
def test_sources_beyond_memory_work_or_are_refused_by_name(name):
    """An Arrow table: fitted from aggregates where the family's table has them (the DataFrame's numbers), else
    refused at construction naming the family."""
    pa = pytest.importorskip("pyarrow")
    d = _data(name)
    table = pa.Table.from_pandas(d)
    kwargs = _kwargs(name)
    if np.all(d["n"] == 1):  # 0/1 scores: an aggregated cell's trials are its rows
        kwargs["weights"] = None
    if not get_family(name).support.allows("aggregate_sources"):
        with pytest.raises(InputError, match=rf"family='{name}' is fitted from the rows"):
            Study(table, FORMULA, item="item", system="system", **kwargs)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        memory = Study(d, FORMULA, item="item", system="system", **kwargs)
        cells = Study(table, FORMULA, item="item", system="system", **kwargs)
        assert cells.fit.loglik == pytest.approx(memory.fit.loglik, rel=1e-6)
        assert cells.phi({"seed": 2}, scale="latent") == pytest.approx(memory.phi({"seed": 2}, scale="latent"),
                                                                       rel=1e-5)
        np.testing.assert_allclose(cells.pairwise(df="asymptotic").table["estimate" if name == "gaussian" else
                                                                       "odds_ratio"],
                                   memory.pairwise(df="asymptotic").table["estimate" if name == "gaussian" else
                                                                          "odds_ratio"], rtol=1e-5)
    with pytest.raises(InputError, match="needs the rows in memory"):
        cells.report(progress=False)


@pytest.mark.parametrize("name", family_names())
def test_cbind_response_for_trials_families(name):
    """cbind(successes, failures) is the proportion with weights = trials for every family whose weights are trials
    (the same fit, means and reliability; the proportion is the score of the averaged test and the report); other
    families refuse it by name."""
    family = get_family(name)
    formula = "cbind(k, f) ~ system + (1|item) + (1|seed)"
    if family.support.weights != "trials":
        d = _data("binomial", trials=6)
        with pytest.raises(InputError, match=rf"family='{name}' takes one response column"):
            Study(d, formula, family=name)
        return
    d = _data(name, trials=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pair = Study(d, formula, family=name)
        weighted = Study(d, FORMULA, family=name, weights="n")
        assert pair.fit.loglik == pytest.approx(weighted.fit.loglik, rel=1e-10)
        np.testing.assert_allclose(pair.emmeans()[family.response_label], weighted.emmeans()[family.response_label],
                                   rtol=1e-8)
        assert pair.phi({"seed": 2}) == pytest.approx(weighted.phi({"seed": 2}), rel=1e-8)
        assert "cbind(k, f)" in pair.report(progress=False).to_text()
        if family.support.allows("glrt_averaged"):
            assert pair.glrt_averaged("seed").statistic == pytest.approx(
                weighted.glrt_averaged("seed").statistic, rel=1e-10)
