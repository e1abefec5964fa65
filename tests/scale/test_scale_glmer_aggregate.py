"""The aggregate binomial GLMM path (successes and trials per cell by DuckDB) equals the fit on the rows."""


import numpy as np
import pandas as pd
import pytest

from mixeval import Study, compare, glmer
from mixeval.errors import InputError
from mixeval.scale import binary_cells, glmer_aggregate


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(11)
    n_item, n_seed, n_tmpl = 30, 3, 4
    idx = pd.MultiIndex.from_product([range(n_item), range(n_seed), range(n_tmpl), ["A", "B", "C"]],
                                     names=["item", "seed", "template", "system"]).to_frame(index=False)
    b_item, b_seed = rng.normal(0, 1.2, n_item), rng.normal(0, 0.5, n_seed)
    eta = 0.3 + b_item[idx.item] + b_seed[idx.seed] + idx.system.map({"A": 0.0, "B": 0.5, "C": -0.4})
    idx["correct"] = rng.random(len(idx)) < 1 / (1 + np.exp(-eta))  # logical response
    idx["item"] = "i" + idx.item.astype(str)
    idx["seed"] = "s" + idx.seed.astype(str)
    return idx


FORMULA = "correct ~ system + (1|item) + (1|seed)"


def test_cells_sum_to_rows(rows):
    cells, n = binary_cells(FORMULA, rows)
    assert n == len(rows) and cells.trials.sum() == len(rows) and cells.successes.sum() == rows.correct.sum()
    assert len(cells) == 30 * 3 * 3  # template is not in the model: 4 rows per cell


def test_aggregate_fit_equals_row_fit(rows, tmp_path):
    path = tmp_path / "log.parquet"
    rows.to_parquet(path)
    agg = glmer_aggregate(FORMULA, str(path))
    full = glmer(FORMULA, rows)
    assert agg.nobs == full.nobs == len(rows)
    assert agg.loglik == pytest.approx(full.loglik, rel=1e-8)
    assert agg.aic == pytest.approx(full.aic, rel=1e-8) and agg.bic == pytest.approx(full.bic, rel=1e-8)
    np.testing.assert_allclose(agg.coef, full.coef, atol=1e-6)
    np.testing.assert_allclose(agg.varcorr.variance, full.varcorr.variance, rtol=1e-5)
    np.testing.assert_allclose(np.sqrt(np.diag(agg.cov_coef)), np.sqrt(np.diag(full.cov_coef)), rtol=1e-4)
    assert agg.deviance_conditional == pytest.approx(full.deviance_conditional, rel=1e-6)


def test_aggregate_agq_equals_row_fit(rows):
    f = "correct ~ system + (1|item)"
    agg = glmer_aggregate(f, rows, nAGQ=5)
    full = glmer(f, rows, nAGQ=5)
    assert agg.loglik == pytest.approx(full.loglik, rel=1e-8)


def test_aggregate_lrt_and_study(rows, tmp_path):
    path = tmp_path / "log.parquet"
    rows.to_parquet(path)
    res = compare(glmer_aggregate(FORMULA, str(path)), glmer_aggregate("correct ~ 1 + (1|item) + (1|seed)", str(path)))
    ref = compare(glmer(FORMULA, rows), glmer("correct ~ 1 + (1|item) + (1|seed)", rows))
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-6) and res.df == 2
    st = Study(str(path), FORMULA, family="binomial")
    assert st.glrt().statistic == pytest.approx(ref.statistic, rel=1e-6)
    acc = st.emmeans()
    in_memory = Study(rows, FORMULA, family="binomial")
    np.testing.assert_allclose(acc.prob, in_memory.emmeans().prob, rtol=1e-5)
    np.testing.assert_allclose(st.emmeans(marginal=True).prob, in_memory.emmeans(marginal=True).prob, rtol=1e-5)


def test_aggregate_rejects_non_binary(rows):
    with pytest.raises(InputError, match="0/1"):
        glmer_aggregate(FORMULA, rows.assign(correct=rows.correct * 2.0))
