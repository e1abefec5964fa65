"""Every result type follows one convention: summary() text, _repr_html_(), JSON-safe to_dict(), == by value."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from mixeval._results import ConfidenceInterval, Result, TestResult, to_plain


def _results():
    from mixeval.agreement import cohens_kappa
    from mixeval.meta import disca, example_translations, local_accuracy, score_pairs, word_error_rate
    from mixeval.meta._selective import accuracy_coverage_curve
    from mixeval.metric_model import MetricModel, metric_ci
    from mixeval.mixed import glmer, lmer
    from mixeval.reliability import cheapest_design
    from mixeval.resampling import budget_ci, paired_bootstrap_test
    from mixeval.significance import reference_grid
    from mixeval.validity import circularity_test, dataset_bias_test, fit_gam, transformation_invariance_test

    rng = np.random.default_rng(0)
    a, b = rng.normal(size=30), rng.normal(size=30)
    conf, correct = rng.uniform(size=50), rng.uniform(size=50) < 0.7
    ratings = pd.DataFrame({"r1": rng.integers(0, 3, 40), "r2": rng.integers(0, 3, 40)})
    pairs = score_pairs(example_translations(12), {"wer": word_error_rate}, context="reference", output="hypothesis",
                        subset="system", context_id="context", random_state=1)
    u = rng.beta(5, 2, size=20)
    ratings_long = pd.DataFrame({"item": np.repeat(np.arange(12), 3), "rater": np.tile(np.arange(3), 12)})
    ratings_long["y"] = rng.normal(size=12)[ratings_long["item"]] + rng.normal(size=36)
    ratings_long["hit"] = (ratings_long["y"] + rng.normal(size=36) > 0).astype(float)
    feats = pd.DataFrame(rng.normal(size=(300, 2)), columns=["a", "b"])
    feats["y"] = feats["a"] + feats["b"]
    other = pd.DataFrame(rng.normal(size=(300, 2)), columns=["a", "b"])
    other["y"] = other["b"] - other["a"]
    return {
        "TestResult": lambda: paired_bootstrap_test(a, b, n_resamples=200, random_state=1),
        "AgreementResult": lambda: cohens_kappa(ratings, n_resamples=100, random_state=1),
        "DesignChoice": lambda: cheapest_design({"item": 1.0, "rater": 0.5, "Residual": 1.0}, "item", 0.8,
                                                max_n={"rater": 6}),
        "BudgetResult": lambda: budget_ci(u, budgets=[1, 5], n_resamples=100, random_state=1),
        "CoverageCurve": lambda: accuracy_coverage_curve(conf, correct),
        "DiscaResult": lambda: disca(conf, correct),
        "LocalAccuracyResult": lambda: local_accuracy(pairs, lower_is_better=["wer"]),
        "MetricCI": lambda: metric_ci(0.4, 0.5, 200, metric=MetricModel.from_rates(0.9, 0.1)),
        "LmerResult": lambda: lmer("y ~ 1 + (1 | item)", ratings_long),
        "GlmerResult": lambda: glmer("hit ~ 1 + (1 | item)", ratings_long, family="binomial"),
        "GAMResult": lambda: fit_gam(feats, "y", ["a"], k=8),
        "CircularityResult": lambda: circularity_test(feats, "y", ["a", "b"]),
        "InvarianceResult": lambda: transformation_invariance_test(_OLS, feats, "y", "b", "interval", random_state=1),
        "DatasetBiasResult": lambda: dataset_bias_test(feats, other, "y"),
        "ReferenceGrid": lambda: reference_grid(lmer("y ~ C(rater) + (1 | item)", ratings_long)),
    }


class _OLS:
    def fit(self, X, y):
        X = np.column_stack([np.ones(len(X)), np.asarray(X, dtype=float)])
        self.beta = np.linalg.lstsq(X, np.asarray(y, dtype=float), rcond=None)[0]
        return self

    def predict(self, X):
        return np.column_stack([np.ones(len(X)), np.asarray(X, dtype=float)]) @ self.beta


NAMES = ["TestResult", "AgreementResult", "DesignChoice", "BudgetResult", "CoverageCurve", "DiscaResult",
         "LocalAccuracyResult", "MetricCI", "LmerResult", "GlmerResult", "GAMResult", "CircularityResult",
         "InvarianceResult", "DatasetBiasResult", "ReferenceGrid"]


@pytest.mark.parametrize("name", NAMES)
def test_result_convention(name):
    make = _results()[name]
    res = make()
    assert type(res).__name__ == name
    assert isinstance(res, Result), name
    assert isinstance(res.summary(), str) and res.summary() and str(res) == res.summary()
    assert isinstance(res._repr_html_(), str) and res._repr_html_().startswith("<")
    plain = res.to_dict()
    json.dumps(plain, allow_nan=False)  # JSON-safe: no NaN, no numpy types
    assert res == res
    assert make() == res  # same input and seed, equal result (compared by value, arrays included)
    with pytest.raises(TypeError):
        hash(res)


def test_test_results_compare_by_value_with_arrays():
    a = TestResult(1.0, 0.5, null_distribution=np.array([0.1, np.nan]), details={"x": np.arange(3)})
    b = TestResult(1.0, 0.5, null_distribution=np.array([0.1, np.nan]), details={"x": np.arange(3)})
    c = TestResult(1.0, 0.5, null_distribution=np.array([0.1, 0.2]), details={"x": np.arange(3)})
    assert a == b and a != c and a != 1.0
    with pytest.raises(TypeError):
        hash(a)


def test_to_plain_rules():
    assert to_plain({"ci": ConfidenceInterval(0.1, 0.2), "nan": float("nan"), "i": np.int32(3),
                     "t": pd.DataFrame({"x": [1.5]})}) == {"ci": [0.1, 0.2], "nan": None, "i": 3, "t": [{"x": 1.5}]}
    assert TestResult(1.0, 0.5, null_distribution=np.zeros(3)).to_dict().get("null_distribution") is None
