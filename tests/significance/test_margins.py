"""Equivalence, non-inferiority and one-sided tests of means and contrasts against emmeans' ``test(..., null, delta,
side, adjust)`` and ``summary(..., infer = TRUE)`` (fixtures/margins/margin_fixtures.json, written by
fixtures/margins/make_margin_fixtures.R: R 4.2, lme4, emmeans 1.8.4-1, pbkrtest, lmerTest, ordinal).

Two layers. The test stage alone, fed emmeans' own estimates, standard errors and df, reproduces its statistics,
adjusted p-values and interval bounds to 1e-6 (``mvt``: emmeans integrates to 1e-3, against mvtnorm to 1e-8 within
1e-4). End to end, through our fits: lmer within the df tolerances of the df fixtures (estimates 1e-6, df 1e-4
relative, p-values and bounds 1e-4); glmer within the parity tolerances of test_glmer_emmeans_parity.py (estimates
1e-4, standard errors 5e-4 relative; statistics and p-values follow at 2e-3); clmm's standard errors differ from
R's by up to 2% (test_ordinal_emmeans.py), so its statistics are compared at 2e-2 relative.
"""

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mixeval
from mixeval import Study
from mixeval.errors import FewLevelsWarning, InputError
from mixeval.mixed import clmm, lmer
from mixeval.significance import contrast, emmeans, emmeans_ordinal, margin_tests, pairwise, pairwise_ordinal
from mixeval.significance._margins import families_of, margin_inference, margin_spec

FIX = Path(__file__).parent / "fixtures"
REF = json.loads((FIX / "margins" / "margin_fixtures.json").read_text())
WINE = Path(__file__).parents[1] / "mixed" / "fixtures" / "clmm" / "wine.csv"
INF = 1e300


def _finite(x):
    x = np.asarray(x, dtype=float)
    return np.where(np.abs(x) >= INF, np.sign(x) * np.inf, x)


# (fixture, delta, side, null, adjust, pairs, family columns, n_spec, log scale)
STAGE = [
    ("lmer", "pairs_equivalence_kr", 0.3, "equivalence", None, "tukey", True, [], 3, False),
    ("lmer", "pairs_noninferiority_satt", 0.3, ">", None, "tukey", True, [], 3, False),
    ("lmer", "pairs_nonsuperiority_kr_holm", 0.3, "<", None, "holm", True, [], 3, False),
    ("lmer", "pairs_equivalence_asym_none", 0.5, "equivalence", None, "none", True, [], 3, False),
    ("lmer", "pairs_superiority_satt", None, ">", None, "bonferroni", True, [], 3, False),
    ("lmer", "means_null_satt", None, ">", 0.5, "none", False, [], 3, False),
    ("lmer", "means_equivalence_kr_holm", 0.3, None, 0.5, "holm", False, [], 3, False),
    ("lmer", "means_two_sided_asym", None, None, 0.5, "none", False, [], 3, False),
    ("contrast", "trt_noninferiority_asym", 0.4, ">", None, "dunnettx", False, [], 4, False),
    ("contrast", "trt_equivalence_asym", 0.4, "equivalence", None, "dunnettx", False, [], 4, False),
    ("contrast", "pairs_by_equivalence_kr", 0.6, None, None, "tukey", True, ["domain"], 4, False),
    ("contrast", "revpairwise_noninferiority_asym", 0.4, ">", None, "holm", True, [], 4, False),
    ("binomial", "link_pairs_equivalence", 0.5, None, None, "tukey", True, [], 3, False),
    ("binomial", "ratio_pairs_equivalence", np.log(1.5), None, None, "tukey", True, [], 3, True),
    ("binomial", "difference_pairs_noninferiority", 0.05, ">", None, "tukey", True, [], 3, False),
    ("binomial", "response_means_equivalence", 0.05, None, 0.8, "none", False, [], 3, False),
    ("binomial", "link_means_superiority", None, ">", 1.0, "holm", False, [], 3, False),
    ("poisson", "link_pairs_nonsuperiority", 0.2, "<", None, "tukey", True, [], 3, False),
    ("poisson", "ratio_pairs_equivalence", np.log(1.25), None, None, "tukey", True, [], 3, True),
    ("poisson", "difference_pairs_equivalence", 0.5, None, None, "none", True, [], 3, False),
    ("clmm", "latent_pairs_equivalence", 1.0, None, None, "tukey", True, [], 4, False),
    ("clmm", "prob_pairs_noninferiority", 0.1, ">", None, "tukey", True, ["rating"], 2, False),
    ("clmm", "latent_means_superiority", None, ">", None, "none", False, [], 2, False),
]


@pytest.mark.parametrize("group,key,delta,side,null,adjust,pairs,by,n_spec,log", STAGE,
                         ids=[f"{c[0]}-{c[1]}" for c in STAGE])
def test_test_stage_reproduces_emmeans(group, key, delta, side, null, adjust, pairs, by, n_spec, log):
    """emmeans' statistics, p-values (adjusted as emmeans changes them) and bounds from its own estimates."""
    ref = REF[group][key]
    est, se = np.asarray(ref["estimate"], dtype=float), np.asarray(ref["se"], dtype=float)
    if log:  # ratios: tested on the log scale, intervals exponentiated
        est, se = np.log(est), se / est
    families = families_of(pd.DataFrame({b: ref[b] for b in by}), by) if by else [np.arange(est.size)]
    inf = margin_inference(est, se, _finite(ref["df"]), margin_spec(delta, side, null), adjust, 0.95, families,
                           n_spec=n_spec, pairs=pairs)
    np.testing.assert_allclose(inf.statistic, ref["statistic"], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(inf.p_adj, ref["pvalue"], rtol=1e-6, atol=1e-9)
    if "lower" in ref:
        lower, upper = (np.exp(inf.lower), np.exp(inf.upper)) if log else (inf.lower, inf.upper)
        # dunnettx intervals: emmeans solves its quantile to 5e-4
        tol = 5e-4 * se.max() if adjust == "dunnettx" and side == "equivalence" else 1e-6
        np.testing.assert_allclose(lower, _finite(ref["lower"]), atol=tol)
        np.testing.assert_allclose(upper, _finite(ref["upper"]), atol=tol)


def test_one_sided_mvt_against_mvtnorm():
    """consec contrasts with the one-sided multivariate normal: p-values within 1e-4 of mvtnorm integrated to 1e-8
    (emmeans' own, at 1e-3, within 2e-3); the one-sided quantile within 3e-4 (scipy's Genz integration to 1e-5 in
    probability, divided by the density of the maximum near its 95% quantile)."""
    ref, precise = REF["contrast"]["consec_mvt_noninferiority"], REF["contrast"]["consec_mvt_precise"]
    fit = lmer("score ~ system * domain + (1|item)", pd.read_csv(FIX / "contrast" / "scores.csv"))
    res = contrast(fit, "system", "consec", df="asymptotic", delta=0.4, side=">")
    np.testing.assert_allclose(res.table.estimate, ref["estimate"], atol=1e-6)
    np.testing.assert_allclose(res.table.pvalue, precise["pvalue"], atol=1e-4)
    np.testing.assert_allclose(res.table.pvalue, ref["pvalue"], atol=2e-3)
    crit = (res.table.estimate - res.table.lower) / res.table.se
    np.testing.assert_allclose(crit, precise["quantile"], atol=3e-4)
    assert res.adjust == "mvt" and np.isinf(res.table.upper).all()


def _compare(table, ref, *, est_col="estimate", est_tol=1e-6, se_rtol=1e-5, df_rtol=1e-4, p_tol=1e-4,
             stat_rtol=1e-4):
    np.testing.assert_allclose(table[est_col], ref["estimate"], atol=est_tol)
    np.testing.assert_allclose(table["se"], ref["se"], rtol=se_rtol)
    if "df" in table.columns:
        np.testing.assert_allclose(_finite(table["df"]), _finite(ref["df"]), rtol=df_rtol)
    np.testing.assert_allclose(table["statistic"], ref["statistic"], rtol=stat_rtol, atol=stat_rtol)
    np.testing.assert_allclose(table["pvalue"], ref["pvalue"], atol=p_tol)
    if "lower" in ref:
        np.testing.assert_allclose(table["lower"], _finite(ref["lower"]), atol=p_tol, rtol=se_rtol)
        np.testing.assert_allclose(table["upper"], _finite(ref["upper"]), atol=p_tol, rtol=se_rtol)


@pytest.fixture(scope="module")
def crossed():
    return lmer("y ~ sys + (1|item) + (1|rater)", pd.read_csv(FIX / "unbalanced_crossed.csv"))


@pytest.mark.parametrize("key,kwargs", [
    ("pairs_equivalence_kr", dict(df="kenward-roger", delta=0.3)),
    ("pairs_noninferiority_satt", dict(df="satterthwaite", delta=0.3, side=">")),
    ("pairs_nonsuperiority_kr_holm", dict(df="kenward-roger", delta=0.3, side="<", adjust="holm")),
    ("pairs_equivalence_asym_none", dict(df="asymptotic", delta=0.5, side="equivalence", adjust="none")),
    ("pairs_superiority_satt", dict(df="satterthwaite", side=">", adjust="bonferroni")),
])
def test_lmer_pairwise_against_emmeans(crossed, key, kwargs):
    res = pairwise(crossed, "sys", **kwargs)
    ref = REF["lmer"][key]
    assert res.table.contrast.tolist() == ref["contrast"]
    assert "z" not in res.table.columns and "t" not in res.table.columns
    _compare(res.table, ref)
    emmeans_adjust = [m for m in ref["messages"] if m.startswith("P value adjustment")]
    assert res.adjust == (emmeans_adjust[0].split()[3] if emmeans_adjust else res.adjust)


@pytest.mark.parametrize("key,kwargs", [
    ("means_null_satt", dict(df="satterthwaite", null=0.5, side=">")),
    ("means_equivalence_kr_holm", dict(df="kenward-roger", null=0.5, delta=0.3, adjust="holm")),
    ("means_two_sided_asym", dict(df="asymptotic", null=0.5)),
])
def test_lmer_means_against_emmeans(crossed, key, kwargs):
    table = emmeans(crossed, "sys", **kwargs)
    _compare(table, REF["lmer"][key], est_col="emmean")
    assert ("pvalue_unadjusted" in table.columns) == ("adjust" in kwargs)
    assert table.attrs["null"].startswith("H0: ")


@pytest.fixture(scope="module")
def scores_fit():
    return lmer("score ~ system * domain + (1|item)", pd.read_csv(FIX / "contrast" / "scores.csv"))


@pytest.mark.parametrize("key,kwargs", [
    ("trt_noninferiority_asym", dict(method="trt.vs.ctrl", df="asymptotic", delta=0.4, side=">")),
    ("trt_equivalence_asym", dict(method="trt.vs.ctrl", df="asymptotic", delta=0.4, side="equivalence")),
    ("revpairwise_noninferiority_asym", dict(method="revpairwise", df="asymptotic", delta=0.4, side=">",
                                             adjust="holm")),
])
def test_contrast_methods_against_emmeans(scores_fit, key, kwargs):
    res = contrast(scores_fit, "system", **kwargs)
    ref = REF["contrast"][key]
    assert res.table.contrast.tolist() == ref["contrast"]
    # dunnettx equivalence intervals: emmeans solves the quantile to 5e-4
    _compare(res.table, ref, p_tol=5e-4 * 0.1 if key == "trt_equivalence_asym" else 1e-4)
    assert res.adjust == ("holm" if key.startswith("rev") else "sidak")


def test_pairwise_by_groups_kenward_roger(scores_fit):
    res = pairwise(scores_fit, "system", by="domain", df="kenward-roger", delta=0.6)
    ref = REF["contrast"]["pairs_by_equivalence_kr"]
    assert res.table.domain.tolist() == ref["domain"]
    _compare(res.table, ref)
    assert res.ci_method == "tukey" and res.adjust == "sidak"  # emmeans: two-sided Tukey intervals, Sidak tests


@pytest.fixture(scope="module")
def binomial():
    data = pd.read_csv(FIX / "glmer_parity_sim.csv")
    return Study(data, "correct ~ system + (1|item) + (1|seed)", family="binomial")


GLMM = dict(est_tol=1e-4, se_rtol=5e-4, stat_rtol=2e-3, p_tol=2e-3)


@pytest.mark.parametrize("key,kwargs", [
    ("response_means_equivalence", dict(type="response", null=0.8, delta=0.05)),
    ("link_means_superiority", dict(type="link", null=1.0, side=">", adjust="holm")),
])
def test_binomial_means_tests(binomial, key, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewLevelsWarning)
        table = binomial.emmeans(**kwargs)
    est_col = "emmean" if kwargs.get("type") == "link" else "prob"
    _compare(table, REF["binomial"][key], est_col=est_col, **GLMM)


@pytest.fixture(scope="module")
def poisson():
    return Study(pd.read_csv(FIX / "margins" / "poisson_counts.csv"), "count ~ system + (1|item)", family="poisson")


_RATIO_COLUMN = {"binomial": "odds_ratio", "poisson": "ratio"}


@pytest.mark.parametrize("family,key,kwargs", [
    ("binomial", "link_pairs_equivalence", dict(scale="link", delta=0.5)),
    ("binomial", "ratio_pairs_equivalence", dict(scale="ratio", delta=np.log(1.5))),
    ("binomial", "difference_pairs_noninferiority", dict(scale="difference", delta=0.05, side=">")),
    ("poisson", "link_pairs_nonsuperiority", dict(scale="link", delta=0.2, side="<")),
    ("poisson", "ratio_pairs_equivalence", dict(scale="ratio", delta=np.log(1.25))),
    ("poisson", "difference_pairs_equivalence", dict(scale="difference", delta=0.5, adjust="none")),
])
def test_glmm_contrasts_on_each_scale(request, family, key, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewLevelsWarning)
        res = request.getfixturevalue(family).pairwise(**kwargs)
    est_col = _RATIO_COLUMN[family] if kwargs["scale"] == "ratio" else "estimate"
    _compare(res.table, REF[family][key], est_col=est_col, **GLMM)
    if kwargs["scale"] == "ratio":
        assert res.null_hypothesis.startswith(f"H0: |log {'odds ' if family == 'binomial' else ''}ratio|")


@pytest.fixture(scope="module")
def wine():
    return clmm("rating ~ temp + contact + (1|judge)", pd.read_csv(WINE))


CLMM = dict(est_tol=1e-4, se_rtol=2e-2, stat_rtol=2e-2, p_tol=1e-2)


def test_clmm_latent_equivalence(wine):
    res = margin_tests(pairwise_ordinal(wine, ["temp", "contact"], mode="latent"), delta=1.0)
    ref = REF["clmm"]["latent_pairs_equivalence"]
    assert res.table.contrast.tolist() == ref["contrast"]
    _compare(res.table, ref, **CLMM)


def test_clmm_probabilities_noninferiority_within_categories(wine):
    res = margin_tests(pairwise_ordinal(wine, "temp", mode="prob"), delta=0.1, side=">")
    ref = REF["clmm"]["prob_pairs_noninferiority"]
    assert res.table.rating.astype(str).tolist() == ref["rating"]
    _compare(res.table, ref, **CLMM)


def test_clmm_latent_means_one_sided(wine):
    table = margin_tests(emmeans_ordinal(wine, "temp", mode="latent"), side=">")
    _compare(table, REF["clmm"]["latent_means_superiority"], est_col="emmean", **CLMM)


def test_ordinal_study_passes_the_margin(wine):
    study = Study(pd.read_csv(WINE), "rating ~ temp + contact + (1|judge)", family="ordinal")
    res = study.pairwise("temp", scale="latent", delta=1.0)
    direct = margin_tests(pairwise_ordinal(study.fit, "temp", mode="latent"), delta=1.0)
    np.testing.assert_allclose(res.table.pvalue, direct.table.pvalue, rtol=1e-10)


def test_study_contrast_and_conditional_pass_the_margin(scores_fit):
    data = pd.read_csv(FIX / "contrast" / "scores.csv")
    study = Study(data, "score ~ system * domain + (1|item)")
    res = study.contrast("trt.vs.ctrl", df="asymptotic", delta=0.4, side=">")
    _compare(res.table, REF["contrast"]["trt_noninferiority_asym"])
    _, pairs, _ = Study(data, "score ~ system + (1|item)").conditional("domain", delta=0.6, df="kenward-roger")
    _compare(pairs.table, REF["contrast"]["pairs_by_equivalence_kr"])


def test_summary_and_dict_say_which_hypothesis(crossed):
    res = pairwise(crossed, "sys", delta=0.3, side=">")
    text = res.summary()
    assert "H0: estimate <= -0.3 (noninferiority" in text
    assert "changed to 'sidak'" in text and "one-sided" in text
    d = res.to_dict()
    assert d["side"] == ">" and d["delta"] == 0.3 and d["null_hypothesis"].startswith("H0")
    assert "statistic" in d["rows"][0]


def test_without_a_margin_the_tables_are_unchanged(crossed):
    plain = pairwise(crossed, "sys", df="asymptotic")
    assert "z" in plain.table.columns and "statistic" not in plain.table.columns and plain.null_hypothesis == ""
    assert "statistic" not in emmeans(crossed, "sys", df="asymptotic").columns


def test_bad_margins_are_refused_by_name(crossed):
    with pytest.raises(InputError, match="delta=-1"):
        pairwise(crossed, "sys", delta=-1)
    with pytest.raises(InputError, match="side='sideways'"):
        pairwise(crossed, "sys", delta=1, side="sideways")
    with pytest.raises(InputError, match="needs a margin"):
        pairwise(crossed, "sys", side="equivalence")
    with pytest.raises(InputError, match="adjust='holm' adjusts tests"):
        emmeans(crossed, "sys", adjust="holm")
    with pytest.raises(InputError, match="null=inf"):
        emmeans(crossed, "sys", null=float("inf"))
    with pytest.raises(InputError, match="already tested"):
        margin_tests(pairwise(crossed, "sys", delta=1), delta=1)
    with pytest.raises(InputError, match="needs a test"):
        margin_tests(pairwise(crossed, "sys"))
    with pytest.raises(InputError, match="delta=True"):
        Study(pd.read_csv(FIX / "unbalanced_crossed.csv"), "y ~ sys + (1|item)").pairwise(delta=True)


def test_tost_equals_the_interval_inside_the_margin(crossed):
    """Schuirmann: TOST at alpha rejects exactly when the 1 - 2 alpha interval lies inside +-delta."""
    for delta in (0.1, 0.3, 0.6, 1.0):
        res = pairwise(crossed, "sys", df="satterthwaite", delta=delta, adjust="none", level=0.90)
        inside = (res.table.lower > -delta) & (res.table.upper < delta)
        assert ((res.table.pvalue < 0.05) == inside).all()


def test_a_margin_without_its_scale_is_refused(binomial, wine):
    """0.05 is five accuracy points on the response scale and a tiny odds ratio on the link scale: name it."""
    with pytest.raises(InputError, match="scale='difference'"):
        binomial.pairwise(delta=0.05)
    with pytest.raises(InputError, match="type='response'"):
        binomial.emmeans(null=0.8, delta=0.05)
    study = Study(pd.read_csv(WINE), "rating ~ temp + contact + (1|judge)", family="ordinal")
    with pytest.raises(InputError, match="scale='latent'"):
        study.pairwise("temp", delta=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewLevelsWarning)
        assert binomial.pairwise(side=">", adjust="none").side == ">"  # a test of 0 needs no scale


def _tost_rejection_rate(theta: float, delta: float, n_sim: int, seed: int) -> float:
    """Share of simulated paired designs (30 items, two systems whose true difference is ``theta``) where the
    Kenward-Roger TOST at 5% declares equivalence within ``delta``."""
    rng = np.random.default_rng(seed)
    n = 30
    item = np.repeat(np.arange(n), 2)
    system = np.tile(["A", "B"], n)
    hits = 0
    for _ in range(n_sim):
        y = rng.normal(size=n)[item] + theta * (system == "B") + rng.normal(scale=0.4, size=2 * n)
        fit = lmer("y ~ system + (1|item)", pd.DataFrame({"y": y, "item": item, "system": system}))
        hits += pairwise(fit, "system", df="kenward-roger", delta=delta).table.pvalue.iloc[0] < 0.05
    return hits / n_sim


@pytest.mark.slow
def test_tost_holds_its_level_at_the_margin_and_has_power_inside():
    """Known truth: a true difference exactly at the margin is TOST's least favourable null, where its size is
    about 5% when the SE (0.4 sqrt(2/30) = 0.10) is small next to the margin 0.3; at a difference of 0 the power is
    P(|T_29| + 1.70 < 2.90), about 0.77. Monte Carlo SE at the margin with 150 draws: sqrt(0.05 * 0.95 / 150) =
    0.018, so the bounds 0.05 -+ 3 SE = [0, 0.103]; at 0 with 40 draws, 0.066, bound 0.77 - 3 SE = 0.57."""
    size = _tost_rejection_rate(0.3, 0.3, 150, seed=11)
    assert size <= 0.103, size
    assert _tost_rejection_rate(0.0, 0.3, 40, seed=12) > 0.57
