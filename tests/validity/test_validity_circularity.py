"""The circularity test (book Def. 2.5): synthetic rules with known answers and the liver SOFA data."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from mixeval.errors import BasisLimitWarning, ColumnError, FamilyWarning, InputError
from mixeval.validity import circularity_test, distillation_test, nullification_ratios, rank_features

LABELS = ["target", "sofa_circ", "sofa_nocirc"]


@pytest.fixture(scope="module")
def liver(bookdata):
    return pd.read_csv(bookdata / "liver_sofa_test.csv.gz")


def _quiet(f, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BasisLimitWarning)
        return f(*a, **kw)


def _rule_data(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    d = pd.DataFrame(rng.normal(size=(n, 4)), columns=["a", "b", "c", "e"])
    d["b"] += 0.8 * d["a"]  # correlated with the rule's feature but not part of the rule
    d["c"] += 0.5 * d["a"]
    d["label"] = np.digitize(d["a"], [-1.0, 0.0, 1.0]).astype(float)
    return d


# --- synthetic: known answers -----------------------------------------------------------------
def test_step_rule_on_one_feature_is_circular_and_others_nullified():
    d = _rule_data()
    res = _quiet(circularity_test, d, "label", k=30)
    assert res.circular == ("a",) and res.is_circular
    assert res.candidates[0] == "a"
    assert len(res.models) == 15  # powerset of 4 candidates
    assert set(res.nullification) == {"b", "c", "e"}
    assert res.nullification["b"] < 0.05 and res.nullification["c"] < 0.05  # 0.005 measured
    # e is pure noise: its ratio is ill-defined (tiny / tiny) but its share is negligible
    assert all(res.nullified.values()) and res.share["e"] < 0.01
    # without the rule feature, b and c do carry signal
    assert res.sd_without["b"] > 0.1 and res.sd_without["c"] > 0.1
    assert res.d2 > 0.98


def test_additive_noisy_truth_is_not_circular():
    rng = np.random.default_rng(1)
    d = pd.DataFrame(rng.normal(size=(3000, 3)), columns=["a", "b", "c"])
    d["y"] = np.sin(d["a"]) + 0.5 * d["b"] ** 2 + rng.normal(0, 0.7, len(d))
    res = _quiet(circularity_test, d, "y")
    assert not res.is_circular and res.circular == ()
    assert res.d2 < 0.9
    assert "no subset" in res.reason


def test_two_feature_rule_like_kidney_sofa():
    # label = max of two step scores (as kidney SOFA from creatinine and urine)
    rng = np.random.default_rng(2)
    d = pd.DataFrame(rng.normal(size=(5000, 4)), columns=["crea", "urine", "bun", "temp"])
    d["bun"] += d["crea"]
    d["temp"] += 0.5 * d["urine"]
    d["label"] = np.maximum(np.digitize(d["crea"], [0.0, 1.0]), np.digitize(-d["urine"], [0.5])).astype(float)
    res = _quiet(circularity_test, d, "label", k=30)
    assert set(res.best) == {"crea", "urine"} and res.is_circular
    # additivity cannot represent max() exactly, so D^2 is high but not 1 (the book: 93-95%) ...
    assert 0.85 < res.d2 < 0.99
    # ... while the label is a function of (crea, urine): the neighbour estimate of its noise is ~0
    assert res.determinism > 0.98
    assert res.added_ratio < 0.05


def test_greedy_search_beyond_max_exhaustive():
    d = _rule_data()
    rng = np.random.default_rng(3)
    for j in range(8):
        d[f"n{j}"] = rng.normal(size=len(d)) + 0.1 * d["a"]
    res = _quiet(circularity_test, d, "label", top=None, max_exhaustive=5, k=30, k_check=False)
    assert res.search == "greedy" and res.circular == ("a",)
    assert len(res.models) < 2 ** 12 - 1


def test_tolerance_and_thresholds_are_respected():
    d = _rule_data()
    strict = _quiet(circularity_test, d, "label", k=30, k_check=False, gain_threshold=0.0, negligible_gain=0.0)
    assert strict.added > 0 and not strict.is_circular and "partial" in strict.reason
    high = _quiet(circularity_test, d, "label", k=30, k_check=False, d2_threshold=0.99999)
    assert not high.is_circular and "no subset" in high.reason
    exact = _quiet(circularity_test, d, "label", k=30, k_check=False, determinism_threshold=0.99999999)
    assert not exact.is_circular and "function of it" in exact.reason
    loose_sd = _quiet(circularity_test, d, "label", k=30, k_check=False, nullification_threshold=1e-6, negligible=0.0)
    assert loose_sd.is_circular  # the sd view is reported, the deviance view decides


def test_binomial_family_on_thresholded_labels():
    # a noisy threshold (no perfect separation, which makes every logit GAM diverge)
    d = _rule_data(n=2000)
    rng = np.random.default_rng(4)
    d["pos"] = (d["a"] + rng.normal(0, 0.1, len(d)) > 0.3).astype(int)
    res = _quiet(circularity_test, d, "pos", features=["a", "b", "c", "e"], family="binomial", d2_threshold=0.7,
                 determinism_threshold=0.7)
    assert res.best == ("a",) and res.d2 > 0.7
    assert res.is_circular


def test_deterministic_binary_teacher_separates_like_the_patent_example():
    # book Table 2.5: every model containing the rule's features has D^2 = 100%; the smallest wins
    d = _rule_data(n=2000)
    X = d[["a", "b", "c", "e"]]
    with pytest.warns(Warning) as caught:
        res = distillation_test(lambda f: (f["a"] > 0.3) * 1.0, X, threshold=0.5, k=10)
    assert any("separate the 0/1 target perfectly" in str(w.message) for w in caught)
    assert res.family == "binomial" and res.circular == ("a",)
    assert res.models["d2"].iloc[0] == 1.0
    assert all(r.d2 == 1.0 for r in res.fits.values() if "a" in r.features)
    assert all(r.d2 < 1.0 for r in res.fits.values() if "a" not in r.features)


def test_distillation_with_callable_estimator_and_array():
    d = _rule_data()
    X = d[["a", "b", "c", "e"]]

    class Teacher:
        def predict(self, frame):
            return np.digitize(frame["a"], [-1.0, 0.0, 1.0]) + 0.0

    for model in (Teacher(), Teacher().predict, Teacher().predict(X)):
        res = _quiet(distillation_test, model, X, k=30, k_check=False)
        assert res.circular == ("a",) and res.target == "prediction"
    rng = np.random.default_rng(5)
    noisy = X["a"].to_numpy() + rng.normal(0, 0.1, len(X))  # a noisy classifier score
    binary = _quiet(distillation_test, noisy, X, threshold=0.3, features=["a", "b"], d2_threshold=0.7,
                    determinism_threshold=0.7)
    assert binary.family == "binomial" and binary.best == ("a",) and binary.is_circular
    with pytest.raises(InputError, match="predictions for"):
        distillation_test(np.zeros(3), X)


def test_nullification_ratios_and_ranking():
    d = _rule_data()
    tab = _quiet(nullification_ratios, d, "label", ["a"], ["b", "c"], k=30)
    assert (tab["ratio"] < 0.1).all() and tab.attrs["d2_with"] > tab.attrs["d2_without"]
    r = rank_features(d, "label")
    assert r["feature"].iloc[0] == "a"
    np.testing.assert_allclose(r.set_index("feature").loc["b", "r"], np.corrcoef(d["b"], d["label"])[0, 1])


def test_json_shape():
    res = _quiet(circularity_test, _rule_data(), "label", k=30)
    out = json.loads(json.dumps(res.to_dict()))
    assert out["circular"] == ["a"]
    assert {"features", "d2", "edf"} <= set(out["models"][0])
    assert set(out["nullification"]) == set(out["gain"]) == {"b", "c", "e"}
    assert {"determinism", "added", "explained_alone", "added_ratio", "k", "basis"} <= set(out)
    assert out["basis"][0]["feature"] == "a" and out["k"]["a"] > 10
    assert "CIRCULAR" in res.summary()


def test_bad_input():
    d = _rule_data()
    with pytest.raises(ColumnError):
        circularity_test(d, "nope")
    with pytest.raises(InputError, match="missing"):
        circularity_test(d.assign(b=d["b"].where(d.index > 5)), "label", ["a", "b"])
    with pytest.raises(InputError, match="constant"):
        circularity_test(d.assign(z=2.0), "label", ["a", "z"])
    with pytest.raises(InputError, match="must be numeric"):
        circularity_test(d.assign(label=d["label"].astype(str)), "label", ["a", "b"])
    with pytest.raises(InputError, match="non-negative"):
        circularity_test(d, "label", d2_tolerance=-1)


# --- the book's liver SOFA analyses (Section 2.4.3) ----------------------------------------
@pytest.fixture(scope="module")
def liver_results(liver):
    return {label: _quiet(circularity_test, liver, label, exclude=[l for l in LABELS if l != label]) for label in LABELS}


@pytest.mark.parametrize("label", ["target", "sofa_circ"])
def test_liver_circular_labels_name_bili(liver_results, label):
    res = liver_results[label]
    assert res.circular == ("bili",)
    assert res.candidates[:4] == ("bili", "thrombo", "hzv", "svri")
    assert len(res.models) == 31
    # k = 10 cannot resolve the bilirubin steps: the k-check raises its basis (only its)
    assert res.k["bili"] == 40 and all(v == 10 for f, v in res.k.items() if f != "bili")
    assert res.basis.set_index("feature").loc["bili", "k"] == 40
    assert res.d2 > 0.98 and res.determinism > 0.99
    assert res.added_ratio < 0.01  # 0.0003-0.0013 measured
    assert max(res.nullification.values()) < 0.1  # the sd view agrees (0.03-0.08 measured)
    assert min(res.sd_without.values()) > 0.1  # the others matter without bilirubin (0.14-0.31)


def test_liver_without_k_check_keeps_k_and_warns(liver):
    with pytest.warns(BasisLimitWarning):  # k = 10 cannot resolve the bilirubin steps, and says so
        fixed = circularity_test(liver, "target", exclude=["sofa_circ", "sofa_nocirc"], k_check=False)
    assert fixed.circular == ("bili",) and fixed.k["bili"] == 10 and fixed.basis.empty


def test_liver_noncircular_teacher(liver, liver_results):
    res = liver_results["sofa_nocirc"]
    assert not res.is_circular and res.circular == ()
    assert res.d2 < 0.6 and "no subset" in res.reason
    tab = _quiet(nullification_ratios, liver, "sofa_nocirc", ["bili"], ["asat", "hzv", "alat", "lactate"])
    assert (tab["ratio"] > 0.5).all()  # about 0.7-0.9: bilirubin does not nullify the others


def test_mixed_smooth_factor_and_binary_candidates():
    rng = np.random.default_rng(6)
    d = pd.DataFrame({"a": rng.normal(size=2000), "grp": rng.choice(["u", "v", "w"], 2000),
                      "flag": rng.integers(0, 2, 2000)})
    d["y"] = np.digitize(d["a"], [0.0, 1.0]) + (d["grp"] == "w") * 1.0
    res = _quiet(circularity_test, d, "y", ["a", "grp", "flag"], k=20)
    assert set(res.circular) == {"a", "grp"} and res.nullified == {"flag": True}
    full = res.full_model
    assert full.edf_terms["grp"] == pytest.approx(2.0) and full.edf_terms["flag"] == pytest.approx(1.0)
    eta = rank_features(d, "y", ["grp"])["r"].iloc[0]  # correlation ratio for a nominal feature
    groups = d.groupby("grp")["y"]
    expected = np.sqrt((groups.count() * (groups.mean() - d["y"].mean()) ** 2).sum() / ((d["y"] - d["y"].mean()) ** 2).sum())
    assert eta == pytest.approx(expected, abs=1e-12)


def test_nullification_shrinks_with_sample_size_proposition_2_1():
    # consistency: the shape of a feature outside a deterministic rule tends to zero as n grows
    for seed in range(3):
        ratios = []
        for n in (400, 25600):
            rng = np.random.default_rng(seed)
            d = pd.DataFrame(rng.normal(size=(n, 2)), columns=["a", "b"])
            d["b"] += d["a"]
            d["y"] = np.digitize(d["a"], [-1.0, 0.0, 1.0]).astype(float)
            ratios.append(_quiet(nullification_ratios, d, "y", ["a"], ["b"], k=20)["ratio"].iloc[0])
        assert ratios[1] < ratios[0] and ratios[1] < 0.005  # measured 0.0006-0.0021 at n = 25,600


# --- simulated rules of book Table 2.7's kind and non-circular labels (docs/circularity_calibration.md) ---
from mixeval.validity._simulate import simulate  # noqa: E402


@pytest.mark.parametrize("family", ["step", "max"])
def test_simulated_circular_rules_are_found(family):
    d = simulate(family, 4000, seed=11)
    res = _quiet(circularity_test, d, "y")
    assert res.is_circular and set(res.circular) == set(d.attrs["circular"])
    assert res.determinism > 0.97 and res.added_ratio < 0.05


def test_max_rule_nullifies_by_deviance_where_the_sd_view_would_not():
    # the example: a distractor correlated with both defining features keeps much of its
    # partial-effect sd (the additive fit of max() leaves a residual it can partly follow) but adds
    # almost nothing to D^2 relative to what it explains alone
    d = simulate("max", 4000, seed=12)
    res = _quiet(circularity_test, d, "y")
    assert res.is_circular and set(res.circular) == {"u", "v"}
    assert res.nullification["d3"] > 0.2 and res.gain["d3"] < 0.01
    old_rule = res.d2 >= 0.9 and all(v <= 0.2 or res.share[f] <= 0.025 for f, v in res.nullification.items())
    assert not old_rule


def test_simulated_and_rule_with_binomial_family():
    d = simulate("and", 1500, seed=13)
    res = _quiet(circularity_test, d, "y", ["u", "v", "d1", "d3"], family="binomial", top=4, k_max=20)
    assert res.is_circular and set(res.circular) == {"u", "v"}


@pytest.mark.parametrize("family", ["additive", "latent"])
def test_simulated_noisy_labels_are_not_circular(family):
    d = simulate(family, 4000, seed=14)
    res = _quiet(circularity_test, d, "y")
    assert not res.is_circular
    if family == "additive":
        # D^2 0.9 with the four true features: only the determinism tells 10% noise from a rule
        assert res.d2 > 0.85 and res.determinism < 0.93 and "function of it" in res.reason


def test_simulated_noisy_binary_label_is_not_circular():
    d = simulate("logistic", 1500, seed=15)
    res = _quiet(circularity_test, d, "y", ["u", "v", "d1", "d3"], family="binomial", top=4, k_check=False)
    assert not res.is_circular and res.d2 < 0.8


def test_k_check_raises_only_the_terms_that_need_it():
    d = _rule_data()
    res = _quiet(circularity_test, d, "label")
    assert res.k["a"] > 10 and all(v == 10 for f, v in res.k.items() if f != "a")
    row = res.basis.iloc[0]
    assert row["feature"] == "a" and row["k_initial"] == 10 and row["k"] == res.k["a"]
    assert "basis check" in res.summary()
    capped = _quiet(circularity_test, d, "label", k_max=10)
    assert capped.k["a"] == 10


@pytest.mark.parametrize("n", [6, 10, 15])
def test_small_n_noise_is_refused_not_called_circular(n):
    """3 noise features, n = 6..15 rows: the GAM of the candidates (28 coefficients at k = 10) would interpolate
    any labels (it said CIRCULAR with D^2 = 1); refused as mgcv refuses it, naming a k the rows support. At that
    k the noise is not circular."""
    import re
    import warnings

    from mixeval.errors import InputError
    from mixeval.validity import circularity_test

    for seed in range(3):
        rng = np.random.default_rng(100 * n + seed)
        df = pd.DataFrame(rng.normal(size=(n, 4)), columns=["a", "b", "c", "y"])
        with pytest.raises(InputError, match="more coefficients than data") as info:
            circularity_test(df, "y")
        k = int(re.search(r"Use k=(\d+)", str(info.value)).group(1)) if "Use k=" in str(info.value) else None
        if k is not None:
            assert 1 + 3 * (k - 1) <= n < 1 + 3 * k
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                assert not circularity_test(df, "y", k=k).is_circular


def test_thresholds_that_are_shares_and_an_unused_or_low_k_max_are_refused():
    rng = np.random.default_rng(2)
    d = pd.DataFrame(rng.normal(size=(120, 2)), columns=["a", "b"]).assign(y=lambda x: x.a + rng.normal(size=120))
    with pytest.raises(InputError, match=r"`d2_threshold` is a share .* \[0, 1\]; got 1.5"):
        circularity_test(d, "y", d2_threshold=1.5)
    with pytest.raises(InputError, match=r"`k_max` \(6\) is below the initial basis dimension `k` \(12\)"):
        circularity_test(d, "y", k=12, k_max=6)
    with pytest.raises(InputError, match="with `k_check`=False it is not used"):
        circularity_test(d, "y", k_check=False, k_max=20)


def test_binary_target_under_the_gaussian_family_warns_and_the_summary_says_unmet_thresholds():
    rng = np.random.default_rng(3)
    d = pd.DataFrame(rng.normal(size=(200, 2)), columns=["a", "b"])
    d["label"] = (d["a"] + rng.normal(size=200) > 0).astype(int)
    with pytest.warns(FamilyWarning, match="only takes the values 0 and 1; family='gaussian'.*family='binomial'"):
        res = circularity_test(d, "label", k_check=False)
    text = res.summary()
    assert f"D^2 = {res.d2:.4f} (below the threshold 0.8)" in text and "(>= 0.8)" not in text
    with pytest.raises(InputError, match=r"^the target column 'c' is constant \(every value is 2\)"):
        circularity_test(d.assign(c=2.0), "c")
