"""emmeans / pairwise: closed forms, hand computations, display, bad input, the interaction plot."""

from __future__ import annotations

import doctest
import os

os.environ.setdefault("MPLBACKEND", "Agg")

import matplotlib  # noqa: E402

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from scipy import stats  # noqa: E402

import mixeval.significance as sig  # noqa: E402
from mixeval.errors import InputError  # noqa: E402
from mixeval.mixed import lmer  # noqa: E402
from mixeval.significance import (  # noqa: E402
    PairwiseResult,
    bin_property,
    emmeans,
    pairwise,
    plot_contrasts,
    plot_emmeans,
    reference_grid,
    tukey_critical_value,
    tukey_pvalue,
)


def _balanced(n_items=40, seed=0):
    rng = np.random.default_rng(seed)
    item = np.repeat(np.arange(n_items), 3)
    df = pd.DataFrame({"item": item, "system": np.tile(["A", "B", "C"], n_items)})
    df["score"] = rng.normal(0, 0.8, n_items)[item] + df.system.map({"A": 0.0, "B": 0.3, "C": 0.5}) + rng.normal(size=item.size)
    return df


# ---------------------------------------------------------------- closed forms
def test_tukey_constants_match_r():
    # R: qtukey(0.95, 3, Inf) / sqrt(2) = 2.34370058790214 ; qtukey(0.95, 5, Inf) = 3.857656 (Harter's table 3.858)
    assert tukey_critical_value(0.95, 3) == pytest.approx(2.34370058790214, abs=1e-7)
    assert tukey_critical_value(0.95, 5) * np.sqrt(2) == pytest.approx(3.8577, abs=1e-3)
    # p at the critical value is 1 - level; k = 2 is the two-sided normal test
    assert tukey_pvalue(np.array([2.34370058790214]), 3)[0] == pytest.approx(0.05, abs=1e-8)
    assert tukey_pvalue(np.array([1.959963985]), 2)[0] == pytest.approx(0.05, abs=1e-9)
    assert tukey_critical_value(0.95, 2) == pytest.approx(stats.norm.ppf(0.975), abs=1e-12)


def test_balanced_design_means_and_contrast_se():
    """Balanced complete design: marginal means = raw system means; Var(contrast) = 2 sigma^2 / n."""
    df = _balanced()
    fit = lmer("score ~ system + (1|item)", df)
    em = emmeans(fit, "system")
    np.testing.assert_allclose(em.emmean, df.groupby("system").score.mean().to_numpy(), atol=1e-10)
    res = pairwise(fit, "system", adjust="none")
    np.testing.assert_allclose(res.table.se, np.sqrt(2 * fit.sigma ** 2 / 40), rtol=1e-8)
    np.testing.assert_allclose(res.table.pvalue, 2 * stats.norm.sf(np.abs(res.table.estimate / res.table.se)), rtol=1e-12)
    assert res.table.contrast.tolist() == ["A - B", "A - C", "B - C"]


def test_linear_model_means_are_cell_means_with_ols_se():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"g": np.repeat(["x", "y", "z"], [5, 8, 11]), "v": rng.normal(size=24)})
    fit = lmer("v ~ g", df)  # REML linear model: sigma^2 = RSS / (n - p)
    em = emmeans(fit, "g")
    groups = df.groupby("g").v
    rss = float(((df.v - groups.transform("mean")) ** 2).sum())
    np.testing.assert_allclose(em.emmean, groups.mean().to_numpy(), atol=1e-10)
    np.testing.assert_allclose(em.se, np.sqrt(rss / 21 / groups.size().to_numpy()), rtol=1e-8)
    z = stats.norm.ppf(0.975)
    np.testing.assert_allclose(em.upper - em.lower, 2 * z * em.se, rtol=1e-12)


def test_equal_weights_and_covariate_at_mean_by_hand():
    """Unbalanced additive model: emmean(a) = average over b of the predictions at x = mean(x)."""
    rng = np.random.default_rng(2)
    n = 80
    df = pd.DataFrame({"a": rng.choice(["p", "q"], n, p=[0.3, 0.7]), "b": rng.choice(["u", "v", "w"], n, p=[0.6, 0.3, 0.1]),
                       "x": rng.uniform(1, 4, n), "s": np.repeat(np.arange(20), 4)})
    df["y"] = (df.a == "q") * 0.5 + (df.b == "w") * 1.0 + 0.3 * np.log(df.x) + rng.normal(size=n)
    fit = lmer("y ~ a + b + np.log(x) + (1|s)", df)
    b = fit.fixef
    xbar = df.x.mean()
    hand = {}
    for lev in ["p", "q"]:
        preds = [b["(Intercept)"] + (lev == "q") * b["aq"] + (lb == "v") * b["bv"] + (lb == "w") * b["bw"]
                 + np.log(xbar) * b["np.log(x)"] for lb in ["u", "v", "w"]]
        hand[lev] = np.mean(preds)
    em = emmeans(fit, "a")
    assert em.emmean.tolist() == pytest.approx([hand["p"], hand["q"]], abs=1e-12)
    # the raw (count-weighted) means differ: emmeans are not the marginal averages of the data
    assert abs(em.emmean.iloc[0] - df[df.a == "p"].y.mean()) > 1e-3
    rg = reference_grid(fit)
    assert rg.covariates == {"x": pytest.approx(xbar)}
    assert len(rg.grid) == 6


def test_pairwise_by_groups_are_separate_families():
    df = _balanced(60).assign(cls=lambda d: np.where(d.item < 30, "short", "long"))
    fit = lmer("score ~ system * cls + (1|item)", df)
    res = pairwise(fit, "system", by="cls", adjust="bonferroni")
    t = res.table
    assert t.cls.tolist() == ["long"] * 3 + ["short"] * 3  # levels sorted, as R
    # Bonferroni within each class: factor 3 (the family), not 6 (all contrasts)
    np.testing.assert_allclose(t.pvalue, np.minimum(1, 3 * t.pvalue_unadjusted), rtol=1e-12)
    holm = pairwise(fit, "system", by="cls", adjust="holm").table
    for cls in ["long", "short"]:
        p = t[t.cls == cls].pvalue_unadjusted.to_numpy()
        order = np.argsort(p)
        expected = np.maximum.accumulate(np.minimum(1, (3 - np.arange(3)) * p[order]))
        np.testing.assert_allclose(np.sort(holm[holm.cls == cls].pvalue.to_numpy()), np.sort(expected), rtol=1e-12)


def test_adjust_names_case_insensitive_and_ci_rules():
    fit = lmer("score ~ system + (1|item)", _balanced())
    a = pairwise(fit, "system", adjust="bh")
    b = pairwise(fit, "system", adjust="BH")
    pd.testing.assert_frame_equal(a.table, b.table)
    assert a.adjust == "BH" and a.ci_method == "bonferroni"
    assert pairwise(fit, "system", adjust="Tukey").ci_method == "tukey"
    assert pairwise(fit, "system", adjust="none").ci_method == "none"
    # widths: none < tukey < bonferroni for 3 means
    w = {m: float((pairwise(fit, "system", adjust=m).table.eval("upper - lower")).iloc[0])
         for m in ["none", "tukey", "bonferroni"]}
    assert w["none"] < w["tukey"] < w["bonferroni"]
    assert w["bonferroni"] / w["none"] == pytest.approx(stats.norm.ppf(1 - 0.05 / 6) / stats.norm.ppf(0.975), rel=1e-12)


def test_level_changes_intervals_only():
    fit = lmer("score ~ system + (1|item)", _balanced())
    a, b = pairwise(fit, "system", level=0.95), pairwise(fit, "system", level=0.99)
    np.testing.assert_allclose(a.table.pvalue, b.table.pvalue)
    assert ((b.table.upper - b.table.lower) > (a.table.upper - a.table.lower)).all()


# ---------------------------------------------------------------- result object and display
def test_result_display_and_immutability():
    fit = lmer("score ~ system + (1|item)", _balanced())
    res = pairwise(fit, "system")
    assert isinstance(res, PairwiseResult)
    text = res.summary()
    assert "A - B" in text and "tukey method for comparing a family of 3 estimates" in text
    assert "<table" in res._repr_html_()
    assert "n_contrasts=3" in repr(res)
    assert list(res.table.columns) == ["contrast", "estimate", "se", "df", "z", "pvalue", "lower", "upper",
                                       "pvalue_unadjusted", "effect_size"]
    with pytest.raises(AttributeError):
        res.adjust = "none"  # frozen
    frame = res.to_frame()
    frame.loc[0, "estimate"] = 99.0
    assert res.table.loc[0, "estimate"] != 99.0
    assert res.emmeans.shape[0] == 3


def test_inputs_not_modified_and_cache_safe():
    df = _balanced()
    before = df.copy()
    fit = lmer("score ~ system + (1|item)", df)
    rg = reference_grid(fit)
    rg.grid.loc[0, "system"] = "C"  # the user's copy; must not poison later calls
    em = emmeans(fit, "system")
    em.loc[0, "emmean"] = 1e9
    again = emmeans(fit, "system")
    assert again.system.tolist() == ["A", "B", "C"] and again.emmean.iloc[0] < 1e3
    pd.testing.assert_frame_equal(df, before)


def test_multiple_specs_label_cells():
    rng = np.random.default_rng(7)
    df = pd.DataFrame({"a": np.tile(["a1", "a2"], 30), "b": np.repeat(["lo", "hi"], 30), "s": np.tile(np.arange(10), 6)})
    df["y"] = rng.normal(size=60)
    res = pairwise(lmer("y ~ a * b + (1|s)", df), ["a", "b"])
    assert res.table.contrast.tolist()[:3] == ["a1 hi - a2 hi", "a1 hi - a1 lo", "a1 hi - a2 lo"]
    assert res.family_size == 4 and len(res.table) == 6


# ---------------------------------------------------------------- conditional comparisons
def test_bin_property_right_closed_and_pure():
    df = pd.DataFrame({"len": [3, 15, 16, 55, 56]})
    out = bin_property(df, "len", (15, 55), ("short", "typical", "very long"))
    assert out["len_class"].tolist() == ["short", "short", "typical", "typical", "very long"]
    assert list(df.columns) == ["len"]


def test_conditional_comparison_through_binning():
    df = _balanced(60)
    df["length"] = np.repeat(np.random.default_rng(3).integers(1, 80, 60), 3)
    binned = bin_property(df, "length", (15, 55), ("short", "typical", "very long"), name="cls")
    fit = lmer("score ~ system * cls + (1|item)", binned)
    res = pairwise(fit, "system", by="cls")
    assert res.table.cls.astype(str).tolist() == ["short"] * 3 + ["typical"] * 3 + ["very long"] * 3
    # each class's contrasts are the cell-mean differences (complete balanced cells)
    for cls, rows in res.table.groupby("cls", observed=True):
        means = binned[binned.cls == cls].groupby("system").score.mean()
        assert rows.estimate.iloc[0] == pytest.approx(means["A"] - means["B"], abs=1e-10)


# ---------------------------------------------------------------- bad input
@pytest.fixture(scope="module")
def cov_fit():
    df = _balanced()
    df["x"] = np.random.default_rng(9).normal(size=len(df))
    return lmer("score ~ system + x + (1|item)", df)


def test_unknown_factor_lists_model_factors(cov_fit):
    with pytest.raises(InputError, match=r"'sytem'.*model's factors: 'system'"):
        emmeans(cov_fit, "sytem")
    with pytest.raises(InputError, match=r"`by` names 'cls'.*'system'"):
        pairwise(cov_fit, "system", by="cls")


def test_numeric_covariate_as_spec(cov_fit):
    with pytest.raises(InputError, match="numeric covariate.*bin_property"):
        pairwise(cov_fit, "x")


def test_unknown_adjust(cov_fit):
    with pytest.raises(InputError, match="'tukey', 'holm', 'bonferroni', 'BH', 'none'"):
        pairwise(cov_fit, "system", adjust="scheffe")
    with pytest.raises(InputError, match="adjust"):
        pairwise(cov_fit, "system", adjust=None)


def test_other_bad_arguments(cov_fit):
    with pytest.raises(InputError, match="both"):
        emmeans(cov_fit, "system", by="system")
    with pytest.raises(InputError, match="specs"):
        emmeans(cov_fit, 3)
    with pytest.raises(InputError):
        emmeans(cov_fit, [])
    with pytest.raises(ValueError, match="level"):
        pairwise(cov_fit, "system", level=1.5)
    with pytest.raises(InputError, match="mixeval.lmer"):
        emmeans(object(), "system")


# ---------------------------------------------------------------- plot
def test_plot_emmeans_draws_ci_bars():
    df = _balanced(60).assign(cls=lambda d: np.where(d.item < 30, "short", "long"))
    fit = lmer("score ~ system * cls + (1|item)", df)
    fig = plot_emmeans(fit, "system", by="cls")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["A", "B", "C"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["long", "short"]
    em = emmeans(fit, "system", by="cls")
    line = ax.get_lines()[0]  # system A across classes
    np.testing.assert_allclose(line.get_ydata(), em[em.system == "A"].emmean.to_numpy())
    assert "95% CI" in ax.get_ylabel()
    with pytest.raises(InputError, match="interval"):
        plot_emmeans(fit, "system", by="cls", interval="sd")
    import matplotlib.pyplot as plt

    plt.close("all")


def test_plot_contrasts_bars_are_the_intervals():
    df = _balanced(60).assign(cls=lambda d: np.where(d.item < 30, "short", "long"))
    res = pairwise(lmer("score ~ system * cls + (1|item)", df), "system", by="cls", adjust="bonferroni")
    fig = plot_contrasts(res)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0] == "A - B | long" and labels[-1] == "B - C | short" and len(labels) == 6
    segments = ax.collections[0].get_segments()  # the horizontal error bars, in table order
    np.testing.assert_allclose([s[0][0] for s in segments], res.table.lower)
    np.testing.assert_allclose([s[1][0] for s in segments], res.table.upper)
    assert "bonferroni" in ax.get_xlabel()
    with pytest.raises(InputError, match="PairwiseResult"):
        plot_contrasts(res.table)
    import matplotlib.pyplot as plt

    plt.close("all")


# ---------------------------------------------------------------- docstring examples
@pytest.mark.parametrize("module", ["_grid", "_emmeans", "_pairwise", "_glrt", "_plots"])
def test_docstring_examples(module):
    mod = __import__(f"mixeval.significance.{module}", fromlist=["x"])
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_public_names():
    assert set(sig.__all__) >= {"emmeans", "pairwise", "PairwiseResult", "glrt", "glrt_averaged", "bin_property",
                                "plot_emmeans"}


def test_tukey_critical_value_refuses_a_level_outside_0_1():
    from mixeval.errors import InputError
    from mixeval.significance import tukey_critical_value

    with pytest.raises(InputError, match="`level` must lie strictly between 0 and 1"):
        tukey_critical_value(95, 4, 10.0)
    from mixeval.significance._tukey import qtukey

    with pytest.raises(InputError, match="`p` must lie strictly between 0 and 1"):
        qtukey(1.0, 4)


def test_floored_pvalues_print_as_below_2_2e_16_and_stay_numbers():
    """Tukey p-values below machine epsilon (the far tail by its union bound, 0 where it underflows, as R's
    ptukey) print as R prints them; the table keeps the number."""
    from mixeval import lmer
    from mixeval.significance import pairwise

    rng = np.random.default_rng(0)
    g = np.repeat(np.arange(40), 3)
    df = pd.DataFrame({"item": g, "system": np.tile(["A", "B", "C"], 40)})
    df["score"] = rng.normal(size=40)[g] + df["system"].map({"A": 0, "B": 5, "C": 10}) + rng.normal(size=120)
    res = pairwise(lmer("score ~ system + (1|item)", df), "system")
    assert (res.table["pvalue"] >= 0).all() and (res.table["pvalue"] <= np.finfo(float).eps).all()
    assert "< 2.2e-16" in res.summary() and "2.22e-16" not in res.summary()
    assert "< 2.2e-16" in res._repr_html_().replace("&lt;", "<")
