"""mixeval.lmer dispatches by source; the engine's own lmer takes DataFrames; REML must be a bool."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mixeval
from mixeval.errors import InputTypeError, MixevalError
from mixeval.mixed import lmer as engine_lmer


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(4)
    item = np.repeat(np.arange(25), 4)
    df = pd.DataFrame({"item": item, "system": np.tile(["A", "B"], 50)})
    df["score"] = rng.normal(size=25)[item] + 0.4 * (df.system == "B") + rng.normal(0, 0.5, 100)
    return df


def test_dataframes_fit_the_same_through_both_entry_points(data):
    a = mixeval.lmer("score ~ system + (1|item)", data)
    b = engine_lmer("score ~ system + (1|item)", data)
    assert a.loglik == b.loglik and a.fixef.equals(b.fixef)


def test_parquet_goes_to_the_aggregate_path_and_the_engine_names_mixeval_lmer(data, tmp_path):
    pytest.importorskip("duckdb")
    pytest.importorskip("pyarrow")
    path = tmp_path / "scores.parquet"
    data.to_parquet(path)
    fit = mixeval.lmer("score ~ system + (1|item)", str(path))
    ref = engine_lmer("score ~ system + (1|item)", data)
    assert fit.fitted is None and fit.loglik == pytest.approx(ref.loglik, rel=1e-9)
    with pytest.raises(InputTypeError, match="mixeval.lmer"):
        engine_lmer("score ~ system + (1|item)", str(path))


@pytest.mark.parametrize("reml", ["no", 0, None, "False"])
def test_reml_must_be_a_bool(data, reml):
    with pytest.raises(InputTypeError, match="`REML` must be True or False") as info:
        mixeval.lmer("score ~ system + (1|item)", data, REML=reml)
    assert isinstance(info.value, MixevalError)
    with pytest.raises(InputTypeError, match="REML"):
        engine_lmer("score ~ system + (1|item)", data, REML=reml)


def test_numpy_bools_are_bools(data):
    assert engine_lmer("score ~ system + (1|item)", data, REML=np.bool_(False)).reml is False
