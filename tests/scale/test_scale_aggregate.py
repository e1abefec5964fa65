"""Fits from aggregates (DuckDB) against the in-memory engine on the same rows."""

from __future__ import annotations

import warnings

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mixeval.errors import ColumnError, FormulaError, IdentifiabilityWarning, InputError, RankDeficientWarning
from mixeval.mixed import build_design, compare, compute_stats, deviance_parts, lmer, make_result
from mixeval.mixed._optimize import OptimResult
from mixeval.scale import aggregate_stats, lmer_aggregate

STAT_FIELDS = ("counts0", "crr", "z0w", "zrw", "ww")


def _synthetic(seed: int = 0, n: int = 3000) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "item": rng.integers(0, 80, n),
            "rater": rng.choice([f"r{i:02d}" for i in range(12)], n),
            "cond": rng.choice(["b", "a", "c"], n),
            "flag": rng.random(n) < 0.3,
            "x": rng.normal(size=n),
        }
    )
    df["y"] = (
        rng.normal(size=80)[df["item"]] + rng.normal(0, 0.5, 12)[df["rater"].str[1:].astype(int)]
        + 0.3 * df["x"] + 0.4 * (df["cond"] == "b") - 0.2 * df["flag"] + rng.normal(size=n)
    )
    return df


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300)) if b.size else 0.0


def _assert_stats_equal(s_agg, s_mem, tol: float = 1e-12) -> None:
    s_agg = s_agg.uncentred()  # the query engine sums y - mean(y)
    assert s_agg.nobs == s_mem.nobs and s_agg.p == s_mem.p and s_agg.n_levels == s_mem.n_levels
    for name in STAT_FIELDS:
        assert _rel(getattr(s_agg, name), getattr(s_mem, name)) < tol, name
    assert abs(s_agg.cross0r - s_mem.cross0r).max() == 0.0 if s_mem.cross0r.shape[1] else True


SYN_FORMULAS = [
    "y ~ x * cond + flag + (1|item) + (1|rater)",
    "y ~ cond + (1|rater/item)",
    "y ~ 1 + (1|item) + (1|rater:cond)",
    "y ~ 0 + cond:x + C(item) + (1|rater)",
    "y ~ x + cond - 1 + (1|item)",
    "y ~ cond + (1|rater:cond) + (1|item)",  # a fixed-effect column inside an interaction group
    "y ~ cond*flag + x + (1|cond:item)",
]


@pytest.mark.parametrize("formula", SYN_FORMULAS)
def test_scale_stats_equal_in_memory(formula: str) -> None:
    df = _synthetic()
    design_mem = build_design(formula, df)
    design_agg, s_agg = aggregate_stats(formula, pa.Table.from_pandas(df))
    assert design_agg.fixed_names == design_mem.fixed_names
    assert [g.name for g in design_agg.groups] == [g.name for g in design_mem.groups]
    assert [g.labels for g in design_agg.groups] == [g.labels for g in design_mem.groups]
    _assert_stats_equal(s_agg, compute_stats(design_mem))


@pytest.mark.parametrize("reml", [True, False])
def test_scale_fit_equals_in_memory_synthetic(reml: bool) -> None:
    # categorical + numeric fixed effects, crossed random intercepts, well-determined optimum
    df = _synthetic(1)
    formula = "y ~ x * cond + flag + (1|item) + (1|rater)"
    m = lmer(formula, df, REML=reml)
    a = lmer_aggregate(formula, duckdb.from_df(df), REML=reml)
    assert a.fixed_names == m.fixed_names
    assert len(a.fixed_names) == 7 and a.fixed_names[-2:] == ("x:condb", "x:condc")
    assert a.fitted is None and a.residuals is None
    assert a.nobs == m.nobs and a.ngrps == m.ngrps
    # 1) the same theta gives the same estimates to 1e-10: the whole result assembled from the
    #    aggregates at the in-memory optimum equals the in-memory result
    opt = OptimResult(m.theta, m.criterion, True, 0, "", np.zeros(len(m.theta)))
    same = make_result(a.design, a.stats, opt, deviance_parts(a.stats, m.theta, reml), None)
    assert _rel(same.coef, m.coef) < 1e-10
    assert _rel(same.cov_coef, m.cov_coef) < 1e-10
    assert abs(same.sigma2 - m.sigma2) / m.sigma2 < 1e-10
    assert abs(same.loglik - m.loglik) / abs(m.loglik) < 1e-12
    for g in m.ranef:
        assert list(same.ranef[g].index) == list(m.ranef[g].index)
        assert _rel(same.ranef[g].to_numpy(), m.ranef[g].to_numpy()) < 1e-10
    # 2) the independent optimisation reaches the same optimum: criterion to 1e-12 relative, estimates
    #    to the optimiser's resolution (the deviance is flat at its minimum: theta is resolved to ~1e-9)
    assert abs(a.criterion - m.criterion) / abs(m.criterion) < 1e-12
    assert _rel(a.theta, m.theta) < 1e-7 and _rel(a.coef, m.coef) < 1e-7
    for g in m.ranef:
        assert _rel(a.ranef[g].to_numpy(), m.ranef[g].to_numpy()) < 1e-7


TABLE_311 = (
    "ter ~ (1|sentence_id) + (1|learning_rate) + (1|seed) + (1|decoder_dropout) + (1|decoder_dropout_hidden) "
    "+ (1|encoder_dropout)"
)


@pytest.fixture(scope="module")
def grid_full(bookdata) -> pd.DataFrame:
    df = pd.read_csv(bookdata / "mt_grid_full.csv.gz")
    return df[df["delta_scheme"] == "(-0.5:0.5)"].reset_index(drop=True)


def test_scale_table_311_book_data(grid_full: pd.DataFrame, tmp_path) -> None:
    """Table 3.11 (mt_grid_full, 168,642 rows, six crossed factors) from a Parquet file through DuckDB."""
    path = tmp_path / "grid.parquet"
    pq.write_table(pa.Table.from_pandas(grid_full), path)
    design_mem = build_design(TABLE_311, grid_full)
    s_mem = compute_stats(design_mem)
    design_agg, s_agg = aggregate_stats(TABLE_311, str(path))
    assert design_agg.nobs == 168_642
    assert [g.labels for g in design_agg.groups] == [g.labels for g in design_mem.groups]
    _assert_stats_equal(s_agg, s_mem)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = lmer(TABLE_311, grid_full)
        a = lmer_aggregate(TABLE_311, str(path))
    # the same theta gives the same criterion and estimates (at the in-memory optimum)
    pa_, pm = deviance_parts(s_agg, m.theta, True), deviance_parts(s_mem, m.theta, True)
    assert abs(pa_.deviance - pm.deviance) / abs(pm.deviance) < 1e-12
    assert abs(pa_.r2 - pm.r2) / pm.r2 < 1e-10
    # the intercept is a ratio of two differences with ~2,800-fold cancellation (M_XX = 61 from
    # n = 168,642), so the 1e-14 summation-order differences of the statistics become ~1e-10 here
    assert _rel(pa_.beta, pm.beta) < 1e-9
    # the two optimiser runs see statistics that differ in the last bits; the REML surface is flat
    # along the confounded pair decoder_dropout_hidden / encoder_dropout (only their sum is identified),
    # so the fits agree to the optimiser's resolution, not to 1e-10 (lme4 runs differ more than that).
    assert abs(a.criterion - m.criterion) < 1e-6
    va, vm = a.variances, m.variances
    for g in ("sentence_id", "Residual"):
        assert abs(va[g] - vm[g]) / vm[g] < 1e-6, g
    assert abs(va["learning_rate"] - vm["learning_rate"]) / vm["learning_rate"] < 1e-4  # 6 levels: flat
    pair = ("decoder_dropout_hidden", "encoder_dropout")
    assert abs(sum(va[g] for g in pair) - sum(vm[g] for g in pair)) / sum(vm[g] for g in pair) < 1e-5
    assert _rel(a.coef, m.coef) < 1e-8
    # book Table 3.11 as printed (half a unit of the last printed digit)
    assert va["sentence_id"] == pytest.approx(0.109, abs=5e-4)
    assert va["Residual"] == pytest.approx(0.0173, abs=5e-5)
    assert va["learning_rate"] == pytest.approx(0.000413, abs=5e-7)
    assert va["decoder_dropout"] == pytest.approx(0.00000670, abs=2e-8)  # 6.714e-6 here, lme4 6.700e-6: a flat 3-level component


def test_scale_sources_agree(tmp_path) -> None:
    df = _synthetic(2, 800)
    formula = "y ~ cond + x + (1|item) + (1|rater)"
    ref = lmer(formula, df)
    pq.write_table(pa.Table.from_pandas(df.iloc[:400]), tmp_path / "part-0.parquet")
    pq.write_table(pa.Table.from_pandas(df.iloc[400:]), tmp_path / "part-1.parquet")
    con = duckdb.connect()
    sources = [df, pa.Table.from_pandas(df), con.from_df(df), str(tmp_path / "*.parquet"), tmp_path]
    for src in sources:
        fit = lmer_aggregate(formula, src)
        assert _rel(fit.coef, ref.coef) < 1e-9 and _rel(fit.theta, ref.theta) < 1e-8, type(src)


def test_scale_glrt_from_aggregates() -> None:
    df = _synthetic(3)
    rel = duckdb.from_df(df)
    full_a = lmer_aggregate("y ~ cond + (1|item) + (1|rater)", rel, REML=False)
    null_a = lmer_aggregate("y ~ 1 + (1|item) + (1|rater)", rel, REML=False)
    res_a = compare(full_a, null_a)
    res_m = compare(lmer("y ~ cond + (1|item) + (1|rater)", df, REML=False), lmer("y ~ 1 + (1|item) + (1|rater)", df, REML=False))
    assert res_a.df == res_m.df == 2.0
    assert abs(res_a.statistic - res_m.statistic) < 1e-7
    assert abs(res_a.pvalue - res_m.pvalue) < 1e-9
    # REML fits are refitted by ML from the same aggregates
    res_r = compare(lmer_aggregate("y ~ cond + (1|item) + (1|rater)", rel), lmer_aggregate("y ~ 1 + (1|item) + (1|rater)", rel))
    assert abs(res_r.statistic - res_m.statistic) < 1e-7


def test_scale_confounded_warning_and_property() -> None:
    df = _synthetic(4, 600)
    df["item2"] = "i" + df["item"].astype(str)
    with pytest.warns(IdentifiabilityWarning, match="partition the data identically"):
        fit = lmer_aggregate("y ~ 1 + (1|item) + (1|item2) + (1|rater)", df)
    assert fit.confounded == [("item", "item2")]


# --------------------------------------------------------------------------- bad input
def test_scale_missing_columns_listed() -> None:
    df = _synthetic(0, 200)
    with pytest.raises(ColumnError, match=r"'judge'.*available columns: item, rater, cond, flag, x, y"):
        lmer_aggregate("y ~ cond + (1|judge)", pa.Table.from_pandas(df))


def test_scale_nulls_counted() -> None:
    df = _synthetic(0, 200)
    df.loc[[3, 7, 9], "y"] = np.nan  # NaN in pandas becomes NULL in Arrow
    df["rater"] = df["rater"].astype(object)
    df.loc[[5], "rater"] = None
    with pytest.raises(InputError, match=r"NULL counts: 'y': 3, 'rater': 1; 200 rows.*IS NOT NULL"):
        lmer_aggregate("y ~ 1 + (1|rater)", pa.Table.from_pandas(df, preserve_index=False))


def test_scale_non_numeric_response() -> None:
    df = _synthetic(0, 200)
    df["label"] = df["cond"]
    with pytest.raises(InputError, match="response column 'label' is not numeric"):
        lmer_aggregate("label ~ 1 + (1|item)", df)


def test_scale_non_finite_response() -> None:
    con = duckdb.connect()
    rel = con.sql("SELECT (range % 7)::VARCHAR AS g, CASE WHEN range = 3 THEN 'inf'::DOUBLE ELSE range END AS y FROM range(50)")
    with pytest.raises(InputError, match="NaN or infinite"):
        lmer_aggregate("y ~ 1 + (1|g)", rel)


@pytest.mark.parametrize(
    "formula, match",
    [
        ("y ~ x + (x|item)", "random slopes"),
        ("y ~ scale(x) + (1|item)", r"scale\(\) needs the parameters of all rows"),
        ("y ~ ns(x, 3) + (1|item)", r"ns\(\) needs the parameters"),
        ("y ~ I(x > 0) + (1|item)", "logical or text values"),
        ("y ~ x:flag2 + (1|item)", "not linear"),
    ],
)
def test_scale_unsupported_models_name_in_memory_path(formula: str, match: str) -> None:
    df = _synthetic(0, 300)
    df["flag2"] = df["x"] * 2.0 + 1.0
    with pytest.raises(FormulaError, match=match) as info:
        lmer_aggregate(formula, df)
    if match != "random slopes":
        assert "mixeval.lmer" in str(info.value)


def test_scale_bad_levels_and_rank() -> None:
    df = _synthetic(0, 300)
    df["one"] = "a"
    df["cond2"] = df["cond"]
    with pytest.raises(InputError, match="only 1 level"):
        lmer_aggregate("y ~ 1 + (1|one)", df)
    with pytest.warns(RankDeficientWarning, match=r"dropping 2 columns / coefficients \(cond2b, cond2c\)"):
        fit = lmer_aggregate("y ~ cond + cond2 + (1|item)", df)
    with pytest.warns(RankDeficientWarning):
        ref = lmer("y ~ cond + cond2 + (1|item)", df)
    assert fit.fixed_names == ref.fixed_names and fit.dropped_columns == ref.dropped_columns == ("cond2b", "cond2c")
    assert abs(fit.loglik - ref.loglik) < 1e-8 * abs(ref.loglik)
    with pytest.raises(TypeError, match="Parquet path"):
        lmer_aggregate("y ~ 1 + (1|item)", [1, 2, 3])
    with pytest.raises(InputError, match="no Parquet file"):
        lmer_aggregate("y ~ 1 + (1|item)", "/nonexistent/*.parquet")


def test_scale_engine_reuse_rolls_up_tables() -> None:
    """A null model on the same engine is computed from the full model's tables (no new scans)."""
    from mixeval.scale import as_engine

    df = _synthetic(5, 1500)
    engine = as_engine(duckdb.from_df(df))
    calls: list[str] = []
    original = engine.query
    engine.query = lambda sql: calls.append(sql) or original(sql)  # count the scans
    full = lmer_aggregate("y ~ cond + (1|item) + (1|rater)", engine, REML=False)
    n_full = len(calls)
    null = lmer_aggregate("y ~ 1 + (1|item) + (1|rater)", engine, REML=False)
    assert n_full == 5  # overview, moments, two level-sum tables, one pair table
    # no scan at all: its columns were counted by the full model's overview, and its response is centred at the
    # same constant (a second SUM by a parallel engine may differ in the last bits, which would miss the tables)
    assert len(calls) == n_full
    ref = lmer("y ~ 1 + (1|item) + (1|rater)", df, REML=False)
    assert abs(null.criterion - ref.criterion) / abs(ref.criterion) < 1e-12
    assert _rel(null.coef, ref.coef) < 1e-7
    assert compare(full, null).df == 2.0
