"""Power by simulation: the closed form of the paired design, a hand-written lme4 simulation, the Study API."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mixeval import Study
from mixeval.errors import InputError
from mixeval.uncertainty import closed_form_paired_power, crossed_design, power_from_components

FIX = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize("n_items, delta", [(12, 0.6), (30, 0.5)])
def test_paired_design_matches_closed_form(n_items, delta):
    """2 systems, one score per item and system: the REML z test is the paired t statistic (df n - 1)."""
    n_sim = 400
    res = power_from_components({"item": 1.0, "Residual": 1.0}, delta=delta, n={"item": [n_items]},
                                test="pairwise", n_resamples=n_sim, random_state=n_items, progress=False)
    exact = closed_form_paired_power(delta, np.sqrt(2.0), n_items)
    row = res.table.iloc[0]
    assert row["nobs"] == 2 * n_items
    assert abs(row["power"] - exact) <= 4 * np.sqrt(exact * (1 - exact) / n_sim), (row["power"], exact)


def test_closed_form_limits():
    assert closed_form_paired_power(0.0, 1.0, 50) == pytest.approx(2 * (1 - __import__("scipy").stats.t.cdf(1.959964, 49)), rel=1e-4)
    assert closed_form_paired_power(1.0, 1.0, 200) > 0.999


@pytest.mark.slow
def test_glrt_power_matches_lme4_simulation():
    ref = json.loads((FIX / "power_fixture.json").read_text())
    n_sim = 300
    comps = ref["variances"]
    res = power_from_components(comps, delta=ref["delta"], n={"item": 30, "rater": 4}, test="glrt",
                                n_resamples=n_sim, random_state=5, progress=False)
    p = res.table.iloc[0]["power"]
    tol = 4 * np.sqrt(ref["se"] ** 2 + p * (1 - p) / n_sim)
    assert abs(p - ref["power"]) <= tol, (p, ref["power"], tol)


def test_type_one_error_without_effect():
    res = power_from_components({"item": 0.5, "Residual": 1.0}, delta=0.0, n={"item": [40]}, test="glrt",
                                n_resamples=300, random_state=1, progress=False)
    assert abs(res.table.iloc[0]["power"] - 0.05) <= 4 * np.sqrt(0.05 * 0.95 / 300)


def test_study_power_grid_and_smallest():
    rng = np.random.default_rng(0)
    item = np.repeat(np.arange(30), 6)
    df = pd.DataFrame({"item": item, "system": np.tile(["A", "B", "C"], 60), "seed": np.tile([1, 1, 1, 2, 2, 2], 30)})
    df["score"] = rng.normal(size=30)[item] + (df.system == "B") * 0.3 + rng.normal(0, 0.5, 180)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study = Study(df, "score ~ system + (1|item) + (1|seed)")
        res = study.power(n={"item": [10, 40]}, delta=0.4, pair=("A", "B"), test="pairwise", n_resamples=60,
                          random_state=2, progress=False)
    t = res.table
    assert list(t["item"]) == [10, 40] and list(t["nobs"]) == [10 * 2 * 3 * 1, 40 * 2 * 3 * 1]
    assert t["power"].iloc[1] > t["power"].iloc[0]
    np.testing.assert_allclose(t["se"], np.sqrt(t["power"] * (1 - t["power"]) / 60))
    best = res.smallest(0.5)
    assert best is None or best["power"] >= 0.5
    assert res.to_dict()["rows"][0]["item"] == 10
    fig = res.plot()
    assert fig.axes[0].get_ylabel().startswith("power")
    with pytest.raises(InputError, match="not facets"):
        study.power(n={"rater": [3]}, n_resamples=10)
    with pytest.raises(InputError, match="not a level"):
        study.power(n={"item": [10]}, pair=("A", "Z"), n_resamples=10)


def test_power_is_seeded():
    kw = dict(delta=0.5, n={"item": [15]}, n_resamples=40, random_state=9, progress=False)
    a = power_from_components({"item": 1.0, "Residual": 1.0}, **kw)
    b = power_from_components({"item": 1.0, "Residual": 1.0}, **kw)
    pd.testing.assert_frame_equal(a.table, b.table)


def test_crossed_design_and_bad_input():
    d = crossed_design({"item": 3, "rater": 2}, ["A", "B"], replicates=2)
    assert len(d) == 3 * 2 * 2 * 2 and set(d.columns) == {"item", "rater", "system"}
    with pytest.raises(InputError, match="positive integer"):
        crossed_design({"item": 0}, ["A", "B"])
    with pytest.raises(InputError, match="size for every facet"):
        power_from_components({"item": 1.0, "rater": 0.1, "Residual": 1.0}, delta=0.1, n={"item": [10]})
    with pytest.raises(InputError, match="test"):
        power_from_components({"item": 1.0, "Residual": 1.0}, delta=0.1, n={"item": [10]}, test="t")


def _slope_log(seed: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(12), 8)
    df = pd.DataFrame({"g": g, "f": np.tile(["A", "B"], 48)})
    slope = rng.normal(0, 0.6, 12)[g] * (df["f"] == "B")
    df["y"] = rng.normal(size=12)[g] + (0.3 + slope) * (df["f"] == "B") + rng.normal(0, 0.5, 96)
    return df


def test_power_simulates_a_model_with_random_slopes():
    """A slope of the system, (1 + f | g), is laid out on the new design (it was refused before): the slope variance
    is simulated, so the power at the fitted effect is below that of intercepts alone."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study = Study(_slope_log(), "y ~ f + (1 + f | g)", system="f")
        res = study.power(n={"g": [12]}, delta=0.3, test="pairwise", df="asymptotic", n_resamples=40,
                          random_state=3, progress=False)
    assert "cor_(Intercept).fB|g" in res.parameters or any(k.startswith("cor_") for k in res.parameters)
    row = res.table.iloc[0]
    assert row["g"] == 12 and row["failed"] == 0 and 0.0 <= row["power"] <= 1.0


@pytest.mark.parametrize("delta", [float("nan"), float("inf"), -float("inf")])
def test_power_refuses_a_non_finite_delta(delta):
    rng = np.random.default_rng(0)
    item = np.repeat(np.arange(10), 2)
    df = pd.DataFrame({"item": item, "system": np.tile(["A", "B"], 10)})
    df["score"] = rng.normal(size=10)[item] + rng.normal(size=20)
    study = Study(df, "score ~ system + (1|item)")
    with pytest.raises(InputError, match="delta must be a finite"):
        study.power(n={"item": [10]}, delta=delta, n_resamples=10, progress=False)
    with pytest.raises(InputError, match="fixed must give finite"):
        study.power(n={"item": [10]}, fixed={"systemB": delta}, n_resamples=10, progress=False)
    with pytest.raises(InputError, match="effect must be a finite"):
        study.power(n={"item": [10]}, effect=delta, n_resamples=10, progress=False)
