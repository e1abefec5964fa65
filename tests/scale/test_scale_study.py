"""Study and lmer over sources beyond memory give the in-memory answers (DuckDB on Parquet)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from mixeval import Study, lmer
from mixeval.errors import InputError

pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")


@pytest.fixture
def log(tmp_path):
    rng = np.random.default_rng(7)
    idx = pd.MultiIndex.from_product([range(60), ["A", "B", "C"], range(3), range(4)],
                                     names=["item", "system", "seed", "judge"]).to_frame(index=False)
    idx["item"] = "i" + idx["item"].astype(str)
    idx["judge"] = "j" + idx["judge"].astype(str)
    idx["score"] = (rng.normal(0, 1, 60)[idx.item.str[1:].astype(int)] + 0.3 * (idx.system == "B")
                    + rng.normal(0, 0.3, 4)[idx.judge.str[1:].astype(int)] + rng.normal(0, 0.5, len(idx)))
    path = tmp_path / "log.parquet"
    idx.to_parquet(path)
    return idx, path


def test_lmer_routes_parquet_to_aggregates(log):
    df, path = log
    formula = "score ~ system + (1|item) + (1|judge)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mem, agg = lmer(formula, df), lmer(formula, str(path))
    assert agg.fitted is None and agg.residuals is None
    assert agg.criterion == pytest.approx(mem.criterion, rel=1e-10)
    for g, v in mem.variances.items():
        assert agg.variances[g] == pytest.approx(v, rel=1e-6)


def test_study_from_parquet_matches_in_memory(log):
    df, path = log
    formula = "score ~ system + (1|item) + (1|judge)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mem, agg = Study(df, formula), Study(str(path), formula)
        assert (agg.item, agg.system) == ("item", "system")
        pd.testing.assert_frame_equal(agg.variance_components(), mem.variance_components(), rtol=1e-6)
        assert agg.phi({"judge": 2}) == pytest.approx(mem.phi({"judge": 2}), rel=1e-6)
        assert agg.glrt().statistic == pytest.approx(mem.glrt().statistic, rel=1e-6)
        pd.testing.assert_frame_equal(agg.pairwise().table, mem.pairwise().table, rtol=1e-5)
    with pytest.raises(InputError, match="Study.where needs the rows in memory"):
        agg.where(system="A")
    with pytest.raises(InputError, match="Study.report needs the rows"):
        agg.report()
    assert "from aggregates" in repr(agg)
