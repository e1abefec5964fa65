"""One grammar for every entry point: the same R formula means the same model in lmer, glmer, clmm, Study, the
command line, the report, power analysis, the aggregate path and predict(newdata)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import mixeval
from mixeval.cli import main
from mixeval.scale import lmer_aggregate

FORMULA = "log(latency) ~ system + I(len^2) + offset(log(len)/10) + (1|item) + (1|seed)"


@pytest.fixture(scope="module")
def log() -> pd.DataFrame:
    rng = np.random.default_rng(8)
    n_items = 40
    df = pd.DataFrame({"item": np.repeat(np.arange(n_items), 6), "system": np.tile(list("ABC"), 2 * n_items),
                       "seed": np.tile([1, 1, 1, 2, 2, 2], n_items)})
    df["len"] = np.repeat(rng.integers(5, 60, n_items), 6).astype(np.int64)
    df["latency"] = np.exp(1 + 0.3 * rng.normal(size=n_items)[df.item] + 1e-4 * df.len**2 + 0.1 * (df.system == "B")
                           + rng.normal(0, 0.2, len(df)))
    return df


@pytest.fixture(scope="module")
def reference(log):
    """The model of FORMULA written with precomputed columns."""
    by_hand = log.assign(lat=np.log(log.latency), len2=log.len.astype(float) ** 2, o=np.log(log.len) / 10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixeval.lmer("lat ~ system + len2 + offset(o) + (1|item) + (1|seed)", by_hand, REML=False)


def test_lmer_study_cli_and_aggregate_fit_the_same_model(log, reference, tmp_path, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = {"lmer": mixeval.lmer(FORMULA, log, REML=False).loglik,
                "Study": mixeval.Study(log, FORMULA).fit_ml.loglik,
                "aggregate": lmer_aggregate(FORMULA, pa.Table.from_pandas(log), REML=False).loglik}
        path = tmp_path / "log.csv"
        log.to_csv(path, index=False)
        assert main(["fit", str(path), FORMULA, "--ml", "--json"]) == 0
    fits["cli"] = json.loads(capsys.readouterr().out)["loglik"]
    for where, loglik in fits.items():
        assert loglik == pytest.approx(reference.loglik, rel=1e-9), where


def test_study_report_and_power_read_the_formula_as_r(log):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study = mixeval.Study(log, "log(latency) ~ system + (1|item) + (1|seed)")
        assert study.parsed.response == "log(latency)" and "log(latency)" in study.data.columns
        table = study.power(n={"item": [20, 40]}, delta=0.1, n_resamples=10, random_state=0).table
        report = mixeval.Study(log, "latency ~ system + scale(len) + offset(log(len)) + (1|item)").report()
    assert list(table["item"]) == [20, 40]
    assert type(report).__name__ == "Report"


def test_predict_newdata_keeps_the_fitted_transforms(log):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = mixeval.lmer("log(latency) ~ system + poly(len, 2) + scale(seed) + (1|item)", log)
    new = log.head(4).assign(len=[5, 30, 60, 90], seed=[1, 2, 2, 3])  # beyond the fitted ranges
    by_hand = np.column_stack([np.ones(4), (new.system == "B"), (new.system == "C")]).astype(float)
    from mixeval.formula._bases import poly_basis, poly_coefs

    x, seed = log.len.to_numpy(float), log.seed.to_numpy(float)
    by_hand = np.column_stack([by_hand, poly_basis(new.len.to_numpy(float), 2, poly_coefs(x, 2)),
                               (new.seed - seed.mean()) / seed.std(ddof=1)])
    np.testing.assert_allclose(fit.predict(new, re=False), by_hand @ fit.coef, rtol=1e-10)


@pytest.mark.parametrize("formula", ["y ~ C(s, sum) + (1|g)", "y ~ factor(k) + (1|g)", "y ~ s * t + (1|g)"])
def test_fits_with_r_contrasts_or_dropped_columns_pickle(formula):
    """R's contrasts (``factor()``, ``C()``) and a rank-deficient fit's spec survive pickling; predictions agree."""
    import pickle

    rng = np.random.default_rng(5)
    df = pd.DataFrame({"y": rng.normal(size=32), "g": np.repeat(list("abcdefgh"), 4), "s": list("xy") * 16,
                       "k": [1, 2, 3, 1] * 8, "t": list("uuuuvvvv") * 4})
    df = df[~((df.s == "y") & (df.t == "v"))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = mixeval.lmer(formula, df)
    again = pickle.loads(pickle.dumps(fit))
    assert again == fit and again.dropped_columns == fit.dropped_columns
    np.testing.assert_allclose(again.predict(df.head(3)), fit.predict(df.head(3)))


def test_an_unpickled_fit_predicts_in_a_fresh_process(tmp_path):
    """R's coding of ``a:b`` (indicators of both factors, a column dropped) is built by mixeval's own formulaic
    materializer, which a new Python process must find by name before any formula has been parsed there."""
    import pickle
    import subprocess
    import sys

    rng = np.random.default_rng(7)
    df = pd.DataFrame({"y": rng.normal(size=48), "g": np.repeat(list("abcdefgh"), 6), "a": list("xyz") * 16,
                       "b": list("pq") * 24})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = mixeval.lmer("y ~ a:b + (1|g)", df)
    (tmp_path / "fit.pkl").write_bytes(pickle.dumps(fit))
    df.head(5).to_csv(tmp_path / "new.csv", index=False)
    script = ("import pickle, sys, pandas as pd; fit = pickle.load(open(sys.argv[1], 'rb')); "
              "print(repr(fit.predict(pd.read_csv(sys.argv[2]), re=False).tolist()))")
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "fit.pkl"), str(tmp_path / "new.csv")],
                         capture_output=True, text=True, check=True).stdout
    np.testing.assert_allclose(eval(out), fit.predict(df.head(5), re=False), rtol=1e-12)
