"""Random slopes: lme4 fixtures (fixtures/slopes, made by make_slope_fixtures.R), the general evaluator
against the intercept path and the dense reference, location/scale invariance, names and warnings."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mixeval.errors import FormulaError, SingularFitWarning
from mixeval.formula import parse_formula
from mixeval.mixed import build_design, compute_stats, lmer, profiled_deviance
from mixeval.mixed._general import compute_block_stats, general_deviance, general_random_effects, general_deviance_parts
from mixeval.mixed._reterms import build_restructure

sys.path.insert(0, str(Path(__file__).parent))
from test_mixed_reterms import _dense_deviance  # noqa: E402

HERE = Path(__file__).parent / "fixtures" / "slopes"
FIXTURES = {f["name"]: f for f in json.loads((HERE / "lme4_slope_fixtures.json").read_text())["fits"]}
DATA = {"barr_singular": "barr_singular.csv", "barr": "barr.csv", "systems": "systems.csv", "unbalanced": "unbalanced.csv"}


def _data(name: str) -> pd.DataFrame:
    key = next(k for k in DATA if name.startswith(k))
    return pd.read_csv(HERE / DATA[key])


def _fit(formula, df, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SingularFitWarning)
        return lmer(formula, df, **kw)


def _lme4_name(grp: str, var1: str, var2: str, groups) -> str:
    """Our component name of an lme4 as.data.frame(VarCorr) row (lme4 numbers repeated groups g.1)."""
    if grp != "Residual" and grp not in groups:
        grp = grp.rsplit(".", 1)[0]
    if grp == "Residual" or (var1 == "(Intercept)" and not var2):
        return grp
    return f"{grp}.{var1}" if not var2 else f"{grp}.{var1}.{var2}"


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_slope_fit_matches_lme4(name):
    case = FIXTURES[name]
    fit = _fit(case["formula"], _data(name), REML=case["REML"])
    vc = case["varcorr"]
    ref = {_lme4_name(g, a, b, fit.group_names): v for g, a, b, v in zip(vc["grp"], vc["var1"], vc["var2"], vc["vcov"])}
    ours = fit.components
    assert set(ours) == set(ref)
    total = sum(v for k, v in ref.items() if "." not in k or k.count(".") == 1 and "(Intercept)" not in k)
    for k, v in ref.items():
        # variances and covariances within 1e-4 relative, 1e-6 of the total variance where near 0
        assert abs(ours[k] - v) <= max(1e-4 * abs(v), 1e-6 * total), (k, ours[k], v)
    assert fit.loglik == pytest.approx(case["loglik"], rel=1e-6)
    assert fit.criterion == pytest.approx(case["criterion"], rel=1e-6)
    ref_beta = np.array(list(case["fixef"].values()))
    assert np.max(np.abs(fit.coef - ref_beta)) <= 1e-6 * np.max(np.abs(ref_beta))
    assert list(fit.fixef.index) == list(case["fixef"])
    se = np.sqrt(np.diag(fit.cov_coef))
    assert se == pytest.approx(np.array(list(case["se"].values())), rel=1e-4)
    assert fit.singular == case["singular"]
    # our criterion at lme4's theta is lme4's criterion (theta in lme4's layout and order)
    assert fit.criterion_at(np.array(case["theta"])) == pytest.approx(case["criterion"], rel=1e-8)
    # conditional modes per group and coefficient
    for group, r in case["ranef"].items():
        ours_re = fit.ranef[group]
        frame = ours_re.to_frame() if isinstance(ours_re, pd.Series) else ours_re
        columns = [r["columns"]] if isinstance(r["columns"], str) else r["columns"]  # auto_unbox
        assert list(frame.columns) == list(columns)
        assert list(frame.index) == list(r["levels"])
        values = np.column_stack([np.asarray(c, dtype=float) for c in r["values"]])
        scale = np.max(np.abs(values))
        assert np.max(np.abs(frame.to_numpy() - values)) <= 1e-4 * scale


def test_singular_slope_warns_and_reports():
    case = FIXTURES["barr_singular_reml"]
    with pytest.warns(SingularFitWarning, match=r"covariance matrix of \(1 \+ x \| subject\) is singular"):
        fit = lmer(case["formula"], _data("barr_singular"))
    assert fit.singular
    corr = fit.correlations["(1 + x | subject)"]
    assert corr.shape == (2, 2)


def test_general_evaluator_equals_intercept_path_and_dense_reference():
    rng = np.random.default_rng(5)
    n = 150
    df = pd.DataFrame({"g": rng.integers(0, 11, n).astype(str), "h": rng.integers(0, 6, n).astype(str),
                       "x": rng.normal(size=n), "f": rng.choice(list("abc"), n)})
    df["y"] = rng.normal(size=n) + df.x
    d = build_design("y ~ x + (1|g) + (1|h) + (1|g:h)", df)
    bs = compute_block_stats(build_restructure(d), d.X, d.y)
    st = compute_stats(d)
    for reml in (True, False):
        for _ in range(4):
            theta = rng.uniform(0.0, 2.0, 3)
            assert general_deviance(bs, theta, reml) == pytest.approx(profiled_deviance(st, theta, reml), rel=1e-10)
    for formula in ("y ~ x + (1 + x|g) + (1|h)", "y ~ x + (1 + x||g) + (1 + f|h)", "y ~ f + (0 + f|g) + (x|h)"):
        d = build_design(formula, df)
        re = build_restructure(d)
        bs = compute_block_stats(re, d.X, d.y)
        for reml in (True, False):
            theta = re.theta0 + np.where(np.isfinite(re.lower), rng.uniform(0, 1, re.n_theta), rng.normal(0, 0.5, re.n_theta))
            assert general_deviance(bs, theta, reml) == pytest.approx(_dense_deviance(re, d.X, d.y, theta, reml), rel=1e-10)


def test_general_random_effects_solve_the_mixed_model_equations():
    df = _data("unbalanced")
    d = build_design("y ~ x + (1 + x|g) + (1|h)", df)
    re = build_restructure(d)
    bs = compute_block_stats(re, d.X, d.y)
    theta = np.array([0.9, -0.2, 0.5, 0.7])
    parts = general_deviance_parts(bs, theta, True)
    b = np.concatenate([np.asarray(v).ravel() for v in general_random_effects(bs, parts)])
    # dense: u = (Lambda' Z'Z Lambda + I)^{-1} Lambda' Z'(y - X beta), b = Lambda u
    lt = re.lambdat(theta).toarray()
    zt = re.Zt.toarray()
    a = lt @ zt @ zt.T @ lt.T + np.eye(re.q)
    u = np.linalg.solve(a, lt @ zt @ (d.y - d.X @ parts.beta))
    assert np.allclose(b, lt.T @ u, rtol=1e-10, atol=1e-12)


def _dyadic(values: np.ndarray) -> np.ndarray:
    """Values on a 1/64 grid, so that adding up to 1e12 is exact in double precision."""
    return np.round(np.asarray(values) * 64) / 64


@pytest.mark.parametrize("offset", [1e3, 1e6, 1e9, 1e12])
def test_response_offset_changes_nothing(offset):
    df = _data("barr").assign(c=lambda d: _dyadic(d.rt - 500))
    for formula, tol in (("~ x + (1|subject) + (1|item)", 1e-8), ("~ x + (1 + x|subject) + (1|item)", 1e-8)):
        base = _fit("c " + formula, df)
        moved = _fit("y " + formula, df.assign(y=df.c + offset))
        for k, v in base.components.items():
            assert moved.components[k] == pytest.approx(v, rel=tol), (formula, k)
        assert moved.loglik == pytest.approx(base.loglik, rel=1e-10, abs=1e-8)
        assert moved.coef[1] == pytest.approx(base.coef[1], rel=1e-6)
        assert moved.coef[0] - offset == pytest.approx(base.coef[0], abs=1e-6 * abs(base.coef[0]) + 1e-3)


@pytest.mark.parametrize("scale", [1e-12, 1e-6, 1e6, 1e12])
def test_response_units_change_nothing(scale):
    df = _data("barr").assign(c=lambda d: d.rt - 500)
    for formula, tol in (("~ x + (1|subject) + (1|item)", 1e-8), ("~ x + (1 + x|subject) + (1|item)", 1e-8)):
        base = _fit("c " + formula, df)
        scaled = _fit("y " + formula, df.assign(y=df.c * scale))
        for k, v in base.components.items():
            assert scaled.components[k] == pytest.approx(v * scale**2, rel=tol), (formula, k)
        # REML log-likelihood: the density of the n - p error contrasts changes by (n - p) log(scale)
        assert scaled.loglik == pytest.approx(base.loglik - (base.nobs - 2) * np.log(scale), rel=1e-9)
        assert scaled.coef == pytest.approx(base.coef * scale, rel=1e-6)


def test_covariate_offset_beyond_the_rank_tolerance_is_dropped_as_lme4_drops_it():
    """At an offset of 1e9 the centred covariate is 1e-9 of its column's norm, below lme4's rank tolerance (1e-7):
    lme4 drops the column with its rank-deficiency message (checked in R 4.x, lme4 1.1), and so does mixeval."""
    from mixeval.errors import RankDeficientWarning

    df = _data("unbalanced")
    with pytest.warns(RankDeficientWarning, match=r"dropping 1 column / coefficient \(w\)"):
        moved = _fit("y ~ w + (1|g) + (1|h)", df.assign(w=_dyadic(df.x) + 1e9))
    assert list(moved.fixed_names) == ["(Intercept)"]


@pytest.mark.parametrize("offset", [1e3, 1e6])
def test_covariate_offset(offset):
    df = _data("unbalanced")
    df["z"] = _dyadic(df.x)
    # a fixed-only covariate: every variance component unchanged, the slope unchanged
    base = _fit("y ~ z + (1|g) + (1|h)", df)
    moved = _fit("y ~ w + (1|g) + (1|h)", df.assign(w=df.z + offset))
    for k, v in base.components.items():
        assert moved.components[k] == pytest.approx(v, rel=1e-8)
    assert moved.coef[1] == pytest.approx(base.coef[1], rel=1e-8)
    # a covariate in a slope term: the model is reparametrised, the likelihood and the implied marginal
    # covariance of one group's two observations at covariate values z1, z2 are unchanged
    base = _fit("y ~ z + (1 + z|g) + (1|h)", df)
    moved = _fit("y ~ w + (1 + w|g) + (1|h)", df.assign(w=df.z + offset))
    assert moved.loglik == pytest.approx(base.loglik, rel=1e-9)
    sb = base.covariances["(1 + z | g)"].to_numpy()
    sm = moved.covariances["(1 + w | g)"].to_numpy()
    # same covariance of (intercept at w = 0, slope): T Sigma T' with T = [[1, -offset], [0, 1]]; the
    # optimiser's resolution of the slope variance is multiplied by offset^2 there, so compare in norm
    T = np.array([[1.0, -offset], [0.0, 1.0]])
    expected = T @ sb @ T.T
    assert np.max(np.abs(sm - expected)) <= 1e-6 * np.max(np.abs(expected))
    assert sm[1, 1] == pytest.approx(sb[1, 1], rel=1e-5)


def test_component_names_and_json():
    fit = _fit("rt ~ x + (1 + x|subject) + (1|item)", _data("barr"))
    assert list(fit.components) == ["subject", "subject.x", "subject.(Intercept).x", "item", "Residual"]
    assert list(fit.to_dict()["varcorr"]) == list(fit.components)
    assert list(fit.variances) == ["subject", "subject.x", "item", "Residual"]
    vc = fit.varcorr
    assert list(vc.columns) == ["group", "name", "variance", "std", "percent"]
    assert list(vc.name) == ["(Intercept)", "x", "(Intercept)", ""]
    assert fit.n_params == 2 + 4 + 1
    frame = fit.varcorr_frame()
    row = frame[frame.name == "subject.(Intercept).x"].iloc[0]
    cov = fit.covariances["(1 + x | subject)"]
    assert row.vcov == pytest.approx(cov.iloc[0, 1])
    assert row.sdcor == pytest.approx(fit.correlations["(1 + x | subject)"].iloc[0, 1])
    text = fit.summary()
    assert "Corr" in text and "subject" in text
    factor = _fit("score ~ system + (1 + system|item)", _data("systems"))
    assert list(factor.components)[:3] == ["item", "item.systemB", "item.systemC"]
    assert "item.(Intercept).systemB" in factor.components


def test_formula_syntax():
    p = parse_formula("rt ~ x + (1 + x || subject) + (0 + x | item) + (x | a/b) + (1 | `my col`)")
    assert [t.label for t in p.random] == ["(1 | subject)", "(0 + x | subject)", "(0 + x | item)", "(x | a)",
                                           "(x | b:a)", "(1 | my col)"]
    assert p.columns == ("subject", "item", "a", "b", "my col")
    assert p.slope_columns == ("x",)
    with pytest.raises(FormulaError, match="backticks"):
        parse_formula("y ~ 1 + (1 | my col)")
    with pytest.raises(FormulaError, match="more than once"):
        parse_formula("y ~ (1 + x | g) + (1 + x | g)")


def test_backticked_columns_fit():
    df = _data("barr").rename(columns={"subject": "test subject", "x": "cat-B"})
    fit = _fit("rt ~ `cat-B` + (1 + `cat-B` | `test subject`) + (1 | item)", df)
    ref = _fit("rt ~ x + (1 + x | subject) + (1 | item)", _data("barr"))
    assert fit.group_names == ("test subject", "item")
    assert fit.loglik == pytest.approx(ref.loglik, rel=1e-10)
    assert "test subject.cat-B" in fit.components


def test_grouping_factor_also_fixed_warns():
    from mixeval.errors import IdentifiabilityWarning

    df = _data("systems")
    with pytest.warns(IdentifiabilityWarning, match=r"\(1\|system\) is not identified"):
        _fit("score ~ system + (1|system) + (1|item)", df)
    # a fixed factor constant within the groups' levels: the group means are fixed effects
    df2 = df.assign(family=df.system.map({"A": "f1", "B": "f1", "C": "f2"}))
    with pytest.warns(IdentifiabilityWarning, match=r"\(1\|family\)"):
        _fit("score ~ system + (1|family) + (1|item)", df2)
    # items nested in a fixed category (the book's A.2.2 layout) are identified: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", IdentifiabilityWarning)
        _fit("rt ~ x + (1|subject) + (1|item)", _data("barr"))


def test_reliability_refuses_slopes_with_the_reason():
    from mixeval.errors import InputError
    from mixeval.reliability import variance_table

    fit = _fit("score ~ system + (1 + system|item)", _data("systems"))
    with pytest.raises(InputError, match=r"random slopes \(1 \+ systemB \+ systemC \| item\).*depends on the covariate"):
        variance_table(fit)


def test_aggregate_path_names_the_in_memory_path():
    duckdb = pytest.importorskip("duckdb")
    from mixeval.scale import lmer_aggregate

    with pytest.raises(FormulaError, match=r"random slopes \(1 \+ x \| subject\).*mixeval.lmer"):
        lmer_aggregate("rt ~ x + (1 + x|subject) + (1|item)", duckdb.from_df(_data("barr")))


def test_general_gradient_is_exact():
    from mixeval.mixed._general import general_deviance_and_gradient
    from mixeval.mixed._optimize import finite_difference_gradient

    rng = np.random.default_rng(2)
    df = _data("unbalanced").assign(f=lambda d: rng.choice(list("abc"), len(d)))
    for formula in ("y ~ x + (1 + x|g) + (1|h) + (1|g:h)", "y ~ x + (1 + x||g) + (1 + f|h)", "y ~ 0 + (0 + f|g)"):
        d = build_design(formula, df)
        re = build_restructure(d)
        bs = compute_block_stats(re, d.X, d.y)
        for reml in (True, False):
            theta = re.theta0 + np.where(np.isfinite(re.lower), rng.uniform(0.1, 0.9, re.n_theta), rng.normal(0, 0.3, re.n_theta))
            fd = finite_difference_gradient(lambda t: general_deviance(bs, t, reml))(theta)[1]
            exact = general_deviance_and_gradient(bs, theta, reml)[1]
            assert np.max(np.abs(exact - fd)) < 1e-5 * max(1.0, np.max(np.abs(exact)))


def test_bad_inputs_get_clear_errors():
    from mixeval.errors import ColumnError, InputError

    df = _data("unbalanced")
    with pytest.raises(InputError, match="response 'y' is constant"):
        lmer("y ~ x + (1|g)", df.assign(y=3.0))
    with pytest.raises(InputError, match=r"column\(s\) x .* infinite"):
        lmer("y ~ x + (1|g)", df.assign(x=np.where(np.arange(len(df)) == 3, np.inf, df.x)))
    with pytest.raises(InputError, match="random term .* non-finite"):
        lmer("y ~ 1 + (1 + x|g)", df.assign(x=np.where(np.arange(len(df)) == 3, np.inf, df.x)))
    with pytest.raises(ColumnError, match="several columns named 'x'"):
        lmer("y ~ x + (1|g)", pd.concat([df, df[["x"]]], axis=1))
    with pytest.raises(InputError, match="reproduces the response exactly"):
        lmer("y ~ x + (1|g)", df.assign(y=2.0 * df.x + 1.0))


def test_study_keeps_the_slopes_in_its_null_models():
    from mixeval import Study

    study = Study(_data("systems"), "score ~ system + (1 + system | item)", system="system")
    assert study.null_formula() == "score ~ 1 + (1 + system|item)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SingularFitWarning)
        test = study.glrt()
    assert test.df == 2  # only the two fixed system effects are dropped
    barr = _data("barr").rename(columns={"subject": "test subject"})
    barr["x"] = np.where(barr["x"] > barr["x"].mean(), "high", "low")  # the compared factor holds labels
    assert Study(barr,
                 "rt ~ x + (1 + x || `test subject`) + (1|item)", system="x").null_formula() == \
        "rt ~ 1 + (1|`test subject`) + (0 + x|`test subject`) + (1|item)"


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_satterthwaite_df_matches_lmertest(name):
    case = FIXTURES[name]
    fit = _fit(case["formula"], _data(name), REML=case["REML"])
    table = fit.coef_tests()
    for coef, df in case["satterthwaite_df"].items():
        assert table.loc[coef, "df"] == pytest.approx(df, rel=1e-4), coef


def test_varcomp_cov_of_the_general_path_equals_the_intercept_path():
    """The delta-method covariance over lmerTest's (theta, sigma) equals the variance-parametrised one
    of the intercept path when the general evaluator fits a random-intercept model (1e-3: differences)."""
    from mixeval.mixed import fit_from_stats
    from mixeval.mixed._scaling import standardize

    d = build_design("rt ~ x + (1|subject) + (1|item)", _data("barr"))
    intercept = _fit("rt ~ x + (1|subject) + (1|item)", _data("barr"))
    scaled, scaling = standardize(d)
    general = fit_from_stats(d, compute_block_stats(build_restructure(scaled), scaled.X, scaled.y), reml=True,
                             scaling=scaling)
    assert general._general and not general.has_slopes and general.loglik == pytest.approx(intercept.loglik, rel=1e-12)
    a, b = general.varcomp_cov(), intercept.varcomp_cov()
    a, b = a.loc[list(b.index), list(b.columns)].to_numpy(), b.to_numpy()
    scale = np.sqrt(np.outer(np.diag(b), np.diag(b)))
    assert np.all(np.abs(a - b) <= 1e-3 * scale)  # on the scale of the standard errors
    assert general.coef_tests()["df"].to_numpy() == pytest.approx(intercept.coef_tests()["df"].to_numpy(), rel=1e-3)
    se = general.varcorr_se
    assert se["se"].notna().all()


@pytest.mark.parametrize("units", [1e-12, 1e-6, 1e6, 1e12])
def test_covariate_units(units):
    """A covariate in other units: ML log-likelihood and the intercept and residual variances unchanged; the
    slope's variance scales by 1 / units^2 and the covariance by 1 / units."""
    df = _data("unbalanced")
    base = _fit("y ~ x + (1 + x|g) + (1|h)", df, REML=False)
    moved = _fit("y ~ w + (1 + w|g) + (1|h)", df.assign(w=df.x * units), REML=False)
    assert moved.loglik == pytest.approx(base.loglik, rel=1e-10)
    for k in ("g", "h", "Residual"):
        assert moved.components[k] == pytest.approx(base.components[k], rel=1e-8)
    assert moved.components["g.w"] == pytest.approx(base.components["g.x"] / units**2, rel=1e-8)
    assert moved.components["g.(Intercept).w"] == pytest.approx(base.components["g.(Intercept).x"] / units, rel=1e-7)
    assert moved.coef[1] == pytest.approx(base.coef[1] / units, rel=1e-8)
