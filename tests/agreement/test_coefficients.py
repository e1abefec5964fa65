"""Agreement coefficients: the book's worked examples, the krippendorff package, statsmodels."""

from __future__ import annotations

import warnings

import krippendorff
import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa
from statsmodels.stats.inter_rater import fleiss_kappa

from mixeval.agreement import agreement, cohens_kappa, krippendorff_alpha, scotts_pi
from mixeval.agreement._coefficients import _alpha_batch, _alpha_parts, _encode, ratings_matrix
from mixeval.errors import InputError, MixevalWarning


def _wide(a, b):
    return np.column_stack([a, b]).astype(float)


# Book Section 3.3.1 (examples from Krippendorff 2004)
BOOK_1 = _wide([1, 1, 0, 0, 0, 0, 0, 0, 0, 0], [0, 1, 1, 0, 0, 1, 0, 1, 0, 0])
BOOK_2 = _wide([0, 0, 0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 0, 0, 1])
BOOK_3 = _wide([0, 0, 0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0, 0, 1])
BOOK_4 = _wide([0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 1])
BOOK_5 = _wide([0] * 8, [0] * 8)


def test_book_example_10_items():
    res = krippendorff_alpha(BOOK_1, level=None)
    # coincidences o01 = 4 (x2), n0 = 14, n1 = 6, n = 20: alpha = 1 - 19 * 8 / (2 * 14 * 6)
    assert res.value == pytest.approx(1 - 19 * 8 / (2 * 14 * 6), rel=1e-12)
    assert round(res.value, 3) == 0.095
    assert res.percent_agreement == pytest.approx(0.6)
    # the book: chance agreement (9.6 + 1.6) / 20 = 56%  ->  expected disagreement 1 - 0.56
    assert res.expected_disagreement == pytest.approx(2 * 4.421052631578947 / 20, rel=1e-12)
    assert 1 - res.expected_disagreement == pytest.approx(0.56, abs=0.005)


def test_book_example_negative_alpha():
    res = krippendorff_alpha(BOOK_2, level=None)
    assert res.value == pytest.approx(1 - 2 / (2 * 14 / 15), rel=1e-12)  # 1 - 2 / 1.87
    assert round(res.value, 2) == -0.07
    assert res.percent_agreement == pytest.approx(0.75)
    assert 1 - res.expected_disagreement == pytest.approx(0.766, abs=0.001)


def test_book_near_identical_tables_give_one_and_zero():
    assert krippendorff_alpha(BOOK_3, level=None).value == pytest.approx(1.0)
    r4 = krippendorff_alpha(BOOK_4, level=None)
    assert r4.value == pytest.approx(0.0, abs=1e-12)
    assert r4.percent_agreement == pytest.approx(7 / 8)


def test_book_zero_variation_is_undefined_and_handled_explicitly():
    with pytest.warns(MixevalWarning, match="undefined"):
        res = krippendorff_alpha(BOOK_5, level=None)
    assert np.isnan(res.value)
    assert res.observed_disagreement == 0 and res.expected_disagreement == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert krippendorff_alpha(BOOK_5, if_undefined="zero", level=None).value == 0.0
    with pytest.raises(InputError, match="undefined"):
        krippendorff_alpha(BOOK_5, if_undefined="raise", level=None)
    with pytest.warns(MixevalWarning):
        assert np.isnan(cohens_kappa(BOOK_5, level=None).value)


def _random_ratings(seed, n_units, n_raters, n_values, p_missing, scale=1.0):
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, n_values + 1, size=n_units)
    noise = rng.integers(-1, 2, size=(n_units, n_raters)) * (rng.uniform(size=(n_units, n_raters)) < 0.4)
    r = np.clip(truth[:, None] + noise, 1, n_values).astype(float) * scale
    r[rng.uniform(size=r.shape) < p_missing] = np.nan
    return r


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
@pytest.mark.parametrize("seed, units, raters, values, missing", [(0, 40, 3, 5, 0.2), (1, 200, 5, 7, 0.35),
                                                                    (2, 15, 2, 3, 0.0)])
def test_agrees_with_krippendorff_package(level, seed, units, raters, values, missing):
    r = _random_ratings(seed, units, raters, values, missing)
    ours = krippendorff_alpha(r, level, level=None).value
    theirs = krippendorff.alpha(reliability_data=r.T, level_of_measurement=level)
    assert ours == pytest.approx(theirs, rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("level", ["interval", "ratio"])
def test_continuous_ratings_agree_with_krippendorff_package(level):
    rng = np.random.default_rng(4)
    truth = rng.gamma(3.0, size=60)
    r = truth[:, None] + rng.normal(scale=0.7, size=(60, 4))
    r = np.abs(r)
    r[rng.uniform(size=r.shape) < 0.15] = np.nan
    ours = krippendorff_alpha(r, level, level=None).value
    assert ours == pytest.approx(krippendorff.alpha(reliability_data=r.T, level_of_measurement=level), rel=1e-10)


def test_string_labels_and_long_format():
    wide = pd.DataFrame({"ann1": ["pos", "neg", "neu", "pos", None, "neg"],
                         "ann2": ["pos", "neg", "pos", "pos", "neg", "neu"],
                         "ann3": [None, "neg", "neu", "neu", "neg", "neg"]})
    long = wide.reset_index().melt(id_vars="index", var_name="rater", value_name="label").dropna()
    a_wide = krippendorff_alpha(wide, level=None).value
    a_long = krippendorff_alpha(long, unit="index", rater="rater", value="label", level=None).value
    assert a_wide == pytest.approx(a_long, rel=1e-12)
    codes = wide.replace({"neg": 0, "neu": 1, "pos": 2}).to_numpy(dtype=float)
    assert a_wide == pytest.approx(krippendorff.alpha(reliability_data=codes.T, level_of_measurement="nominal"))
    with pytest.raises(InputError, match="numeric"):
        krippendorff_alpha(wide, "interval", level=None)


def test_kappa_matches_statsmodels_nominal_and_quadratic():
    r = _random_ratings(5, 120, 2, 4, 0.0)
    table = pd.crosstab(r[:, 0], r[:, 1]).to_numpy()
    assert table.shape == (4, 4)
    assert cohens_kappa(r, level=None).value == pytest.approx(sm_kappa(table).kappa, rel=1e-10)
    # interval-level kappa on equally spaced codes = quadratically weighted kappa
    weighted = sm_kappa(table, wt="quadratic").kappa
    assert cohens_kappa(r, "interval", level=None).value == pytest.approx(weighted, rel=1e-10)


def test_pi_is_two_rater_fleiss_kappa_and_related_to_alpha():
    r = _random_ratings(6, 80, 2, 3, 0.0)
    counts = np.stack([(r == v).sum(axis=1) for v in (1.0, 2.0, 3.0)], axis=1)
    pi = scotts_pi(r, level=None).value
    assert pi == pytest.approx(fleiss_kappa(counts, method="fleiss"), rel=1e-10)
    N = r.shape[0]
    alpha = krippendorff_alpha(r, level=None).value
    assert 1 - alpha == pytest.approx((2 * N - 1) / (2 * N) * (1 - pi), rel=1e-10)
    # and for the book's 10-item table
    pi_book = scotts_pi(BOOK_1, level=None).value
    assert 1 - krippendorff_alpha(BOOK_1, level=None).value == pytest.approx(19 / 20 * (1 - pi_book))


def test_vectorised_bootstrap_batch_equals_recomputation_on_replicated_units():
    r = _random_ratings(7, 30, 4, 5, 0.25)
    rng = np.random.default_rng(0)
    for level in ("nominal", "ordinal", "interval", "ratio"):
        codes, domain = _encode(ratings_matrix(r), level)
        N, m = _alpha_parts(codes, domain, level)
        keep = (~np.isnan(r)).sum(axis=1) >= 2
        W = rng.multinomial(len(N), np.full(len(N), 1 / len(N)), size=3).astype(float)
        num, den, _, _ = _alpha_batch(N, m, W, level, domain)
        for w, a_batch in zip(W, 1 - num / den):
            replicated = np.repeat(r[keep], w.astype(int), axis=0)
            direct = krippendorff_alpha(replicated, level, level=None).value
            assert a_batch == pytest.approx(direct, rel=1e-10), level


def test_bootstrap_intervals_reproducible_and_sensible():
    r = _random_ratings(8, 150, 3, 5, 0.1)
    res1 = krippendorff_alpha(r, "interval", n_resamples=1000, random_state=3)
    res2 = krippendorff_alpha(r, "interval", n_resamples=1000, random_state=3)
    assert res1.confidence_interval == res2.confidence_interval
    ci = res1.confidence_interval
    assert ci.lower < res1.value < ci.upper and ci.upper - ci.lower < 0.3
    for fn in (cohens_kappa, scotts_pi):
        two = r[:, :2][~np.isnan(r[:, :2]).any(axis=1)]
        res = fn(two, "ordinal", n_resamples=500, random_state=1)
        assert res.confidence_interval.lower < res.value < res.confidence_interval.upper


def test_bootstrap_interval_coverage_of_alpha():
    # population: two raters, 3 categories; alpha's large-sample value estimated from a huge sample
    rng = np.random.default_rng(12)

    def sample(n):
        t = rng.integers(0, 3, size=n)
        flip = rng.uniform(size=(n, 2)) < 0.3
        return np.where(flip, rng.integers(0, 3, size=(n, 2)), t[:, None]).astype(float)

    truth = krippendorff_alpha(sample(200_000), level=None).value
    hits = sum(
        (lambda ci: ci.lower <= truth <= ci.upper)(krippendorff_alpha(sample(80), n_resamples=400,
                                                                   random_state=rng).confidence_interval)
        for _ in range(150)
    )
    assert 0.86 <= hits / 150 <= 0.99


def test_agreement_table_and_bad_input():
    table = agreement(BOOK_1, level=None)
    assert table["coefficient"].tolist() == ["alpha", "kappa", "pi"]
    three = _random_ratings(0, 10, 3, 3, 0.0)
    assert agreement(three, level=None)["coefficient"].tolist() == ["alpha"]
    with pytest.raises(InputError, match="exactly two raters"):
        cohens_kappa(three, level=None)
    with pytest.raises(InputError, match="measurement"):
        krippendorff_alpha(three, "cardinal", level=None)
    with pytest.raises(InputError, match="two or more ratings"):
        krippendorff_alpha(np.array([[1.0, np.nan], [np.nan, 2.0]]), level=None)
    dup = pd.DataFrame({"u": [1, 1, 2], "r": ["a", "a", "b"], "v": [1, 2, 3]})
    with pytest.raises(InputError, match="duplicate"):
        krippendorff_alpha(dup, unit="u", rater="r", value="v", level=None)
    with pytest.raises(InputError, match="non-negative"):
        krippendorff_alpha(np.array([[-1.0, 2.0], [1.0, 1.0]]), "ratio", level=None)
    before = BOOK_1.copy()
    krippendorff_alpha(BOOK_1, n_resamples=50, random_state=0)
    np.testing.assert_array_equal(before, BOOK_1)


@pytest.mark.parametrize("level", ["interval", "ordinal"])
def test_many_distinct_values_stay_cheap(level):
    """Continuous ratings (thousands of distinct values) need no values x values matrix."""
    rng = np.random.default_rng(3)
    truth = rng.normal(size=1500)
    r = truth[:, None] + rng.normal(scale=0.8, size=(1500, 3))
    res = krippendorff_alpha(r, level, n_resamples=200, random_state=0)
    v = r.ravel()
    n = v.size
    if level == "interval":
        # independent check: D_e over all ordered pairs of values, D_o within units
        d_e = np.sum((v[:, None] - v[None, :]) ** 2) / (n * (n - 1))
        d_o = np.sum((r[:, :, None] - r[:, None, :]) ** 2) / (2 * n)  # m_u - 1 = 2
        assert res.value == pytest.approx(1 - d_o / d_e, rel=1e-10)
    else:
        # ordinal alpha on distinct continuous values = interval alpha on their ranks (mid-ranks)
        ranks = stats_rankdata(v).reshape(r.shape)
        assert res.value == pytest.approx(krippendorff_alpha(ranks, "interval", level=None).value, rel=1e-10)
    assert res.confidence_interval.lower < res.value < res.confidence_interval.upper


def stats_rankdata(x):
    from scipy.stats import rankdata

    return rankdata(x)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_pi_alpha_identity_holds_at_every_level(level):
    # two raters, no missing values: alpha and pi share the pooled marginals and differ only by
    # drawing with / without replacement, so 1 - alpha = (2N - 1) / (2N) * (1 - pi)
    r = _random_ratings(9, 70, 2, 6, 0.0)
    N = r.shape[0]
    alpha = krippendorff_alpha(r, level, level=None).value
    pi = scotts_pi(r, level, level=None).value
    assert 1 - alpha == pytest.approx((2 * N - 1) / (2 * N) * (1 - pi), rel=1e-10)
    # and the vectorised bootstrap path of pi agrees with a direct recomputation on a resample
    w = np.random.default_rng(1).multinomial(N, np.full(N, 1 / N))
    from mixeval.agreement._coefficients import _encode, _kappa_pi_batch

    codes, domain = _encode(ratings_matrix(r), level)
    for which, fn in (("pi", scotts_pi), ("kappa", cohens_kappa)):
        o, e, _ = _kappa_pi_batch(codes[:, 0], codes[:, 1], domain.size, w[None].astype(float), level, domain, which)
        direct = fn(np.repeat(r, w, axis=0), level, level=None).value
        assert 1 - o[0] / e[0] == pytest.approx(direct, rel=1e-10)


def test_the_names_of_mixeval_0_1_still_work_with_a_future_warning():
    """``level`` is the confidence level everywhere; 0.1's ``level="interval"`` and ``confidence=`` warn."""
    r = _random_ratings(3, 20, 2, 4, 0.0)
    new = krippendorff_alpha(r, measurement="interval", level=None)
    with pytest.warns(FutureWarning, match="measurement='interval'"):
        old = krippendorff_alpha(r, level="interval", confidence=None)
    assert old == new and new.measurement == "interval" and new.confidence_interval is None
    with pytest.warns(FutureWarning, match="`confidence=` is now `level=`"):
        assert cohens_kappa(r, confidence=None) == cohens_kappa(r, level=None)


def test_an_id_column_is_refused_as_a_rater():
    """Issue 38: agreement without --id counted the unit id column as a rater."""
    rng = np.random.default_rng(5)
    ratings = pd.DataFrame({"r1": rng.integers(1, 5, 20), "r2": rng.integers(1, 5, 20)})
    for ids in ({"id": np.arange(1, 21)}, {"unit": [f"u{i}" for i in range(20)]}):
        (name,) = ids
        with pytest.raises(InputError, match=rf"'{name}' looks like a unit identifier .*set_index\('{name}'\)"):
            krippendorff_alpha(ratings.assign(**ids), level=None)
        with_index = krippendorff_alpha(ratings.assign(**ids).set_index(name), level=None)
        assert with_index.value == krippendorff_alpha(ratings, level=None).value
    ranks = pd.DataFrame({f"r{k}": rng.permutation(8) + 1 for k in range(3)})  # rankings, not identifiers
    assert krippendorff_alpha(ranks, "ordinal", level=None).n_raters == 3
