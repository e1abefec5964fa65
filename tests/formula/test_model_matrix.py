"""R's ``model.matrix`` of right-hand sides in R's formula language (``fixtures/make_bases.R``): the same columns,
named as R names them, to 1e-10; and the same columns for new rows under the fitted parameters."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mixeval.formula import model_frame_spec, model_matrix

FIX = json.loads((Path(__file__).parent / "fixtures" / "model_matrix.json").read_text())


def _data() -> pd.DataFrame:
    cols = {}
    for name, v in FIX["data"].items():
        if isinstance(v, dict):
            cols[name] = pd.Categorical.from_codes(v["codes"], categories=v["levels"], ordered=v["ordered"])
        else:
            cols[name] = np.asarray(v)
    df = pd.DataFrame(cols)
    df["k"] = df["k"].astype(np.int64)
    return df


@pytest.mark.parametrize("case", FIX["cases"], ids=[c["rhs"] for c in FIX["cases"]])
def test_model_matrix_is_rs(case):
    """Every case, ``a:b``, ``0 + x + a:b`` and ``b %in% a`` included (R codes a factor by indicators where the
    term without it is in no earlier term, here rank deficient as in R)."""
    df = _data()
    X_r = np.asarray(case["X"], dtype=float)
    names_r = case["names"] if isinstance(case["names"], list) else [case["names"]]
    got = model_matrix(case["rhs"], df)
    assert list(got.columns) == names_r
    np.testing.assert_allclose(got.to_numpy(), X_r, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("rhs", ["poly(x, 3)", "ns(x, df = 3)", "bs(x, df = 4)", "scale(x)", "factor(k) + o",
                                 "relevel(factor(a), ref = \"q\")", "I(x > 3) + l"])
def test_new_rows_use_the_fitted_parameters(rhs):
    """The spec rebuilds the fitted rows' columns exactly from any subset of them (R's makepredictcall): the
    parameters (centre, scale, knots, coefficients, levels) are those of the fitted data, not of the new rows."""
    df = _data()
    X, spec = model_frame_spec(rhs, df)
    rows = [5, 1, 17]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(spec.get_model_matrix(df.iloc[rows]), X[rows], rtol=1e-12, atol=1e-12)
