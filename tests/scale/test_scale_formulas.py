"""R's formula language on the aggregate path: expressions computed by the query engine, the rest refused."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from mixeval.errors import FormulaError
from mixeval.mixed import lmer
from mixeval.scale import lmer_aggregate


def _data(seed: int = 3, n: int = 1500) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"item": rng.integers(0, 60, n), "level": rng.integers(1, 4, n),
                       "sys": rng.choice(["a", "b", "c"], n), "x": rng.uniform(0.5, 4.0, n),
                       "hours": rng.uniform(1.0, 3.0, n)})
    df["y"] = (rng.normal(size=60)[df["item"]] + 0.3 * df["x"] ** 2 - 0.5 * np.log(df["x"]) + 0.2 * df["level"]
               + np.log(df["hours"]) + rng.normal(size=n) + 20.0)
    return df


FORMULAS = [
    "y ~ I(x^2) + log(x) + (1|item)",
    "y ~ factor(level) * x + relevel(sys, ref = \"b\") + (1|item)",
    "y ~ sqrt(x) + I(x %% 1) + C(sys, sum) + offset(log(hours)) + (1|item)",
    "log(y) ~ poly(level, 1, raw = TRUE) + exp(-x) + (1|item)",
]


@pytest.mark.parametrize("formula", FORMULAS[:3] + [FORMULAS[3].replace("poly(level, 1, raw = TRUE)", "level")])
def test_expressions_computed_by_the_engine_give_the_in_memory_fit(formula: str) -> None:
    df = _data()
    mem = lmer(formula, df, REML=False)
    agg = lmer_aggregate(formula, pa.Table.from_pandas(df), REML=False)
    assert agg.fixed_names == mem.fixed_names
    assert abs(agg.loglik - mem.loglik) < 1e-8 * abs(mem.loglik)
    np.testing.assert_allclose(agg.coef, mem.coef, rtol=1e-7, atol=1e-9)


def test_reference_grid_of_an_aggregate_fit_uses_the_formula_as_written() -> None:
    df = _data()
    formula = "y ~ sys + I(x^2) + offset(log(hours)) + (1|item)"
    mem = lmer(formula, df, REML=False)
    agg = lmer_aggregate(formula, pa.Table.from_pandas(df), REML=False)
    grid = pd.DataFrame({"sys": ["a", "c"], "x": [2.0, 3.0], "hours": [1.0, 2.0]})
    np.testing.assert_allclose(agg.design.fixed_spec.get_model_matrix(grid),
                               mem.design.fixed_spec.get_model_matrix(grid))
    np.testing.assert_allclose(agg.design.fixed_spec.offset(grid), np.log([1.0, 2.0]))


@pytest.mark.parametrize("formula, match", [
    ("y ~ scale(x) + (1|item)", r"scale\(\) needs the parameters of all rows"),
    ("y ~ poly(x, 2) + (1|item)", r"poly\(\) needs"),
    ("y ~ bs(x, 4) + (1|item)", r"bs\(\) needs"),
    ("y ~ factor(level) + level + (1|item)", "both as a factor and as a number"),
    ("cbind(level, level) ~ x + (1|item)", "binomial response"),
    ("y ~ ifelse(x > 1, 1, 0) + (1|item)", r"ifelse\(\) has no SQL translation"),
])
def test_what_needs_the_rows_is_refused_by_name(formula: str, match: str) -> None:
    with pytest.raises(FormulaError, match=match) as info:
        lmer_aggregate(formula, pa.Table.from_pandas(_data(n=200)))
    assert "mixeval.lmer" in str(info.value)


def test_an_expression_undefined_on_some_rows_is_named() -> None:
    df = _data(n=300).assign(x=lambda d: d.x - 2.0)
    with pytest.raises(Exception, match=r"'log\(x\)' is not finite"):
        lmer_aggregate("y ~ log(x) + (1|item)", pa.Table.from_pandas(df))
