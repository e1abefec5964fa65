"""Transformation invariance test (Def. 2.3): leaky patient IDs (book Figure 2.6) and exact invariances."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mixeval.errors import InputError
from mixeval.validity import permissible_transform, transformation_invariance_test


class OLS:
    """Least squares with intercept (exactly invariant to affine maps of a feature)."""

    def fit(self, X, y):
        A = np.column_stack([np.ones(len(X)), X.to_numpy(float)])
        self.b = np.linalg.lstsq(A, np.asarray(y, float), rcond=None)[0]
        return self

    def predict(self, X):
        return np.column_stack([np.ones(len(X)), X.to_numpy(float)]) @ self.b


class BinnedMajority:
    """Majority label per quantile bin of one feature (uses only the order of the values)."""

    def __init__(self, column, bins=20):
        self.column, self.bins = column, bins

    def fit(self, X, y):
        x = X[self.column].to_numpy(float)
        self.edges = np.quantile(x, np.linspace(0, 1, self.bins + 1)[1:-1])
        idx = np.searchsorted(self.edges, x, side="right")
        y = np.asarray(y)
        self.vote = np.array([np.round(y[idx == b].mean()) if np.any(idx == b) else 0 for b in range(self.bins)])
        return self

    def predict(self, X):
        return self.vote[np.searchsorted(self.edges, X[self.column].to_numpy(float), side="right")]


def _patients(seed=0, n=3000):
    """Labels leak through consecutive patient-ID ranges (malignant cases from two institutions)."""
    rng = np.random.default_rng(seed)
    pid = rng.choice(np.arange(1, 5_000_000), n, replace=False)
    leak = (pid < 1_000_000) | ((pid > 3_000_000) & (pid < 3_800_000))
    marker = rng.normal(size=n)
    y = (rng.uniform(size=n) < np.where(leak, 0.9, 0.05) + 0.02 * marker).astype(int)
    return pd.DataFrame({"patient_id": pid, "marker": marker, "y": y})


def test_leaky_patient_id_fails_nominal_invariance():
    d = _patients()
    train, test = d.iloc[:2000].reset_index(drop=True), d.iloc[2000:].reset_index(drop=True)
    res = transformation_invariance_test(
        BinnedMajority("patient_id"), train, "y", "patient_id", "nominal", features=["patient_id", "marker"],
        test_data=test, n_transforms=5, random_state=0,
    )
    assert not res.invariant
    assert res.metric_name == "accuracy" and res.metric_original > 0.85
    # permuting the IDs destroys the leak: accuracy falls to about the majority rate
    assert (res.table["metric_change"] < -0.15).all()
    assert (res.table["share_changed"] > 0.1).all()


def test_ordinal_model_is_invariant_under_monotone_maps():
    d = _patients()
    res = transformation_invariance_test(BinnedMajority("patient_id"), d, "y", "patient_id", "ordinal",
                                         features=["patient_id"], random_state=1)
    assert res.invariant and (res.table["max_abs_change"] == 0).all()


@pytest.mark.parametrize("scale", ["interval", "ratio"])
def test_least_squares_is_invariant_under_affine_and_scaling(scale):
    rng = np.random.default_rng(2)
    d = pd.DataFrame({"x": rng.normal(size=300), "z": rng.normal(size=300)})
    d["y"] = 1 + 2 * d["x"] - d["z"] + rng.normal(size=300)
    res = transformation_invariance_test(OLS(), d, "y", "x", scale, random_state=3)
    assert res.invariant and res.metric_name == "mean squared error"
    assert res.table["max_abs_change"].max() < 1e-8


def test_least_squares_is_not_invariant_under_ordinal_maps():
    rng = np.random.default_rng(4)
    d = pd.DataFrame({"x": rng.normal(size=300)})
    d["y"] = 2 * d["x"] + rng.normal(size=300)
    res = transformation_invariance_test(OLS, d, "y", "x", "ordinal", random_state=5)  # factory form
    assert not res.invariant and (res.table["metric_change"] > 0).all()


def test_transforms_are_permissible_and_seeded():
    v = np.array([3, 1, 2, 2, 5])
    T = permissible_transform(v, "nominal", random_state=0)
    assert sorted(set(T(v).tolist())) == [1, 2, 3, 5] and not np.array_equal(T(v), v)
    O = permissible_transform(v, "ordinal", random_state=0)
    assert np.all(np.diff(O(np.array([1, 2, 3, 5]))) > 0)
    I = permissible_transform(v, "interval", random_state=0)
    x = np.array([0.0, 1.0, 2.0])
    assert np.allclose(np.diff(I(x), 2), 0) and I(x)[1] > I(x)[0]
    R = permissible_transform(v, "ratio", random_state=0)
    assert R(np.array([0.0]))[0] == 0
    a = permissible_transform(v, "nominal", random_state=7)(v)
    b = permissible_transform(v, "nominal", random_state=7)(v)
    assert np.array_equal(a, b)


def test_invariance_bad_input():
    d = _patients(n=100)
    with pytest.raises(InputError, match="scale"):
        transformation_invariance_test(OLS(), d, "y", "marker", "log")
    with pytest.raises(InputError, match="features"):
        transformation_invariance_test(OLS(), d, "y", "marker", "interval", features=["patient_id"])
    with pytest.raises(InputError, match="fit"):
        transformation_invariance_test(object(), d, "y", "marker", "interval")
