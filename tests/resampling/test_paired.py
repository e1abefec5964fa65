"""Paired bootstrap / permutation tests: exact enumeration, type I error, scipy agreement."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from mixeval.errors import InputError
from mixeval.resampling import (
    bootstrap_ci,
    f1_from_counts,
    paired_bootstrap_test,
    permutation_test,
)

D10 = np.array([0.31, -0.17, 0.52, 0.08, 0.23, -0.05, 0.44, 0.12, -0.29, 0.19])


def _mc_tol(p: float, R: int) -> float:
    """4 Monte-Carlo standard errors of a resampled p-value (plus the +1 correction)."""
    return 4 * np.sqrt(p * (1 - p) / R) + 2.0 / R


def _exact_permutation_p(null: np.ndarray, observed: float, alternative: str) -> float:
    eps = 1e-12
    if alternative == "two-sided":
        return float(np.mean(np.abs(null) >= abs(observed) - eps))
    if alternative == "greater":
        return float(np.mean(null >= observed - eps))
    return float(np.mean(null <= observed + eps))


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_permutation_mean_matches_full_enumeration(alternative):
    a = np.linspace(0.2, 0.8, D10.size)
    b = a - D10
    signs = np.array(list(itertools.product([1.0, -1.0], repeat=D10.size)))
    exact_null = signs @ D10 / D10.size
    exact = _exact_permutation_p(exact_null, D10.mean(), alternative)
    R = 20_000
    res = permutation_test(a, b, alternative=alternative, n_resamples=R, random_state=7)
    assert res.statistic == pytest.approx(D10.mean(), rel=1e-12)
    assert abs(res.pvalue - exact) <= _mc_tol(exact, R), (res.pvalue, exact)
    # the null distribution itself: symmetric with variance sum(d^2)/n^2
    assert res.null_distribution.var() == pytest.approx(np.sum(D10**2) / D10.size**2, rel=0.05)


def _f1_items(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    A = rng.integers(0, 6, size=(n, 3)).astype(float)
    B = rng.integers(0, 6, size=(n, 3)).astype(float)
    return A, B


def test_permutation_corpus_f1_matches_full_enumeration():
    A, B = _f1_items(3, 10)
    observed = f1_from_counts(A.sum(0)[None])[0] - f1_from_counts(B.sum(0)[None])[0]
    keep = np.array(list(itertools.product([1.0, 0.0], repeat=10)))  # 1 = keep, 0 = swap
    sums_a = keep @ A + (1 - keep) @ B
    sums_b = keep @ B + (1 - keep) @ A
    exact_null = f1_from_counts(sums_a) - f1_from_counts(sums_b)
    exact = _exact_permutation_p(exact_null, observed, "two-sided")
    R = 20_000
    res = permutation_test(A, B, metric="f1", n_resamples=R, random_state=11)
    assert res.statistic == pytest.approx(observed, rel=1e-12)
    assert res.details["metric_a"] == pytest.approx(f1_from_counts(A.sum(0)[None])[0])
    assert abs(res.pvalue - exact) <= _mc_tol(exact, R), (res.pvalue, exact)


def _exact_bootstrap(values_fn, n: int) -> np.ndarray:
    """The statistic on every one of the n**n equally likely ordered resamples."""
    idx = np.array(list(itertools.product(range(n), repeat=n)))
    return values_fn(idx)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_bootstrap_mean_matches_full_enumeration(alternative):
    # data chosen (seed search) so that no atom of the exact distribution lies within
    # Monte-Carlo error of the rejection threshold
    d = np.array([-0.29, 0.69, 0.31, 0.31, 0.2, 0.19])
    n = d.size
    boot = _exact_bootstrap(lambda idx: d[idx].mean(axis=1), n)
    shifted = boot - boot.mean()
    obs = d.mean()
    # the test is only well posed if no atom of the distribution sits on the threshold
    R = 20_000
    assert np.min(np.abs(np.abs(shifted) - abs(obs))) > 5 * boot.std() / np.sqrt(R)
    exact = _exact_permutation_p(shifted, obs, alternative)
    res = paired_bootstrap_test(d + 1.0, np.ones(n), alternative=alternative, n_resamples=R, random_state=5)
    assert abs(res.pvalue - exact) <= _mc_tol(exact, R), (res.pvalue, exact)
    # bootstrap standard error of the mean: sqrt(sum (d - mean)^2) / n
    assert res.details["bootstrap_se"] == pytest.approx(boot.std(), rel=0.03)


def test_bootstrap_corpus_f1_matches_full_enumeration():
    A, B = _f1_items(581, 6)
    n = 6

    def diff(idx):
        return f1_from_counts(A[idx].sum(axis=1)) - f1_from_counts(B[idx].sum(axis=1))

    boot = _exact_bootstrap(diff, n)
    observed = diff(np.arange(n)[None])[0]
    R = 20_000
    res = paired_bootstrap_test(A, B, metric="f1", n_resamples=R, random_state=9)
    exact = _exact_permutation_p(boot - boot.mean(), observed, "two-sided")
    # MC shift: the threshold may move by the MC error of the bootstrap mean; check it is clear of atoms
    assert np.min(np.abs(np.abs(boot - boot.mean()) - abs(observed))) > 5 * boot.std() / np.sqrt(R)
    assert abs(res.pvalue - exact) <= _mc_tol(exact, R), (res.pvalue, exact)
    assert res.details["bootstrap_mean"] == pytest.approx(boot.mean(), abs=4 * boot.std() / np.sqrt(R))
    q = np.quantile(boot, [0.025, 0.975])
    ci = res.confidence_interval
    assert abs(ci.low - q[0]) < 0.1 * (q[1] - q[0]) and abs(ci.high - q[1]) < 0.1 * (q[1] - q[0])


@pytest.mark.parametrize("test", [permutation_test, paired_bootstrap_test])
def test_type_one_error_near_nominal(test):
    rng = np.random.default_rng(2024)
    n_sim, n, R, alpha = 400, 60, 400, 0.05
    rejections = 0
    for _ in range(n_sim):
        base = rng.normal(size=n)
        a = base + rng.normal(scale=0.5, size=n)
        b = base + rng.normal(scale=0.5, size=n)
        rejections += test(a, b, n_resamples=R, random_state=rng).pvalue <= alpha
    rate = rejections / n_sim
    # binomial 99.9% band around 0.05 for 400 simulations is about [0.02, 0.09]
    assert 0.02 <= rate <= 0.09, rate


def test_power_against_a_real_difference():
    rng = np.random.default_rng(1)
    a = rng.normal(0.5, 0.2, size=300)
    b = a - 0.05 + rng.normal(0, 0.1, size=300)
    for test in (permutation_test, paired_bootstrap_test):
        res = test(a, b, n_resamples=999, random_state=0)
        assert res.pvalue == pytest.approx(1 / 1000)  # never 0: (c + 1) / (R + 1)
        res_less = test(a, b, alternative="less", n_resamples=999, random_state=0)
        assert res_less.pvalue > 0.9


def test_same_seed_same_result_and_generators_accepted():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=500), rng.normal(size=500)
    for test in (permutation_test, paired_bootstrap_test):
        r1 = test(a, b, n_resamples=3000, random_state=42)
        r2 = test(a, b, n_resamples=3000, random_state=42)
        np.testing.assert_array_equal(r1.null_distribution, r2.null_distribution)
        assert r1.pvalue == r2.pvalue
        r3 = test(a, b, n_resamples=3000, random_state=np.random.default_rng(42))
        np.testing.assert_array_equal(r1.null_distribution, r3.null_distribution)
        r4 = test(a, b, n_resamples=3000, random_state=43)
        assert not np.array_equal(r1.null_distribution, r4.null_distribution)


def test_many_chunks_give_same_distribution_as_enumeration_moments():
    # n large enough that resamples are split into several chunks
    rng = np.random.default_rng(3)
    d = rng.exponential(size=70_000) - 1.0
    res = permutation_test(d, np.zeros_like(d), n_resamples=300, random_state=1)
    sd_exact = np.sqrt(np.sum(d**2)) / d.size
    assert res.null_distribution.std() == pytest.approx(sd_exact, rel=0.15)
    boot = paired_bootstrap_test(d, np.zeros_like(d), n_resamples=300, random_state=1)
    assert boot.details["bootstrap_se"] == pytest.approx(d.std() / np.sqrt(d.size), rel=0.15)


def test_bca_and_percentile_agree_with_scipy_bootstrap():
    rng = np.random.default_rng(8)
    x = rng.exponential(size=60)
    y = x * 0.8 + rng.exponential(scale=0.3, size=60)
    for method, ours in (("BCa", "bca"), ("percentile", "percentile")):
        ref = stats.bootstrap((x,), np.mean, n_resamples=20_000, method=method, random_state=1).confidence_interval
        ci = bootstrap_ci(x, method=ours, n_resamples=20_000, random_state=2)
        width = ref.high - ref.low
        assert abs(ci.low - ref.low) < 0.06 * width and abs(ci.high - ref.high) < 0.06 * width, (ci, ref)
        ref2 = stats.bootstrap((x, y), lambda u, v, axis=-1: u.mean(axis=axis) - v.mean(axis=axis), paired=True,
                               n_resamples=20_000, method=method, random_state=1).confidence_interval
        ci2 = bootstrap_ci(x, y, method=ours, n_resamples=20_000, random_state=2)
        width2 = ref2.high - ref2.low
        assert abs(ci2.low - ref2.low) < 0.06 * width2 and abs(ci2.high - ref2.high) < 0.06 * width2


def test_bca_is_asymmetric_for_skewed_data_and_covers():
    rng = np.random.default_rng(10)
    n_sim, hits_bca, hits_pct = 200, 0, 0
    for _ in range(n_sim):
        x = rng.exponential(size=40)
        hits_bca += bootstrap_ci(x, method="bca", n_resamples=500, random_state=rng).low <= 1.0 <= \
            bootstrap_ci(x, method="bca", n_resamples=500, random_state=rng).high
        ci = bootstrap_ci(x, method="percentile", n_resamples=500, random_state=rng)
        hits_pct += ci.low <= 1.0 <= ci.high
    # nominal 95%; bootstrap intervals undercover slightly at n = 40 for exponential data
    assert 0.86 <= hits_bca / n_sim <= 0.99
    assert 0.84 <= hits_pct / n_sim <= 0.99


def test_custom_metric_callable_and_single_system_interval():
    rng = np.random.default_rng(0)
    correct = rng.integers(0, 2, size=(400, 1)).astype(float)
    stats_a = np.hstack([correct, np.ones((400, 1))])
    ci = bootstrap_ci(stats_a, metric="accuracy", method="percentile", n_resamples=4000, random_state=1)
    acc = correct.mean()
    se = np.sqrt(acc * (1 - acc) / 400)
    assert ci.low == pytest.approx(acc - 1.96 * se, abs=0.01)
    assert ci.high == pytest.approx(acc + 1.96 * se, abs=0.01)

    def ratio(sums):
        return sums[:, 0] / sums[:, 1]

    ci2 = bootstrap_ci(stats_a, metric=ratio, method="percentile", n_resamples=4000, random_state=1)
    assert (ci2.low, ci2.high) == pytest.approx((ci.low, ci.high))


def test_bleu_matches_sacrebleu_when_available():
    sacrebleu = pytest.importorskip("sacrebleu")
    from mixeval.resampling import bleu_from_counts

    hyps = ["the cat sat on the mat", "a quick brown fox", "hello there world", "nothing matches here at all"]
    refs = ["the cat is on the mat", "the quick brown fox jumps", "hello world", "completely different words"]
    bleu = sacrebleu.metrics.BLEU()
    stats_ = np.array([bleu._extract_corpus_statistics([h], [[r]])[0] for h, r in zip(hyps, refs)], dtype=float)
    expected = bleu.corpus_score(hyps, [refs]).score
    assert bleu_from_counts(stats_.sum(0)[None])[0] == pytest.approx(expected, rel=1e-9)


def test_bad_input_messages():
    with pytest.raises(InputError, match="same items"):
        permutation_test([1, 2, 3], [1, 2], n_resamples=10)
    with pytest.raises(InputError, match="NaN"):
        paired_bootstrap_test([1, np.nan, 3], [1, 2, 3], n_resamples=10)
    with pytest.raises(InputError, match="alternative"):
        permutation_test([1, 2, 3], [1, 2, 3], alternative="bigger", n_resamples=10)
    with pytest.raises(InputError, match="needs 3 statistics"):
        permutation_test(np.ones((5, 2)), np.ones((5, 2)), metric="f1", n_resamples=10)
    with pytest.raises(TypeError, match="n_resamples"):
        permutation_test([1, 2, 3], [1, 2, 3], n_resamples=10.5)
    with pytest.raises(TypeError, match="random_state"):
        permutation_test([1, 2, 3], [1, 2, 3], n_resamples=10, random_state="seed")
    with pytest.raises(ValueError, match="unknown metric"):
        permutation_test(np.ones((5, 3)), np.ones((5, 3)), metric="rouge", n_resamples=10)


def test_input_is_not_modified():
    a = np.array([0.1, 0.5, 0.3, 0.7])
    b = np.array([0.2, 0.4, 0.1, 0.6])
    a0, b0 = a.copy(), b.copy()
    paired_bootstrap_test(a, b, ci="bca", n_resamples=50, random_state=0)
    permutation_test(a, b, n_resamples=50, random_state=0)
    np.testing.assert_array_equal(a, a0)
    np.testing.assert_array_equal(b, b0)


def test_bleu_from_counts_matches_sacrebleu_reference_values():
    from mixeval.resampling import bleu_from_counts

    # reference: sacrebleu 2.6.0, BLEU()._compute_score_from_stats(stats).score (default 'exp' smoothing)
    stats_ = np.array([[9, 10, 7, 4, 2, 1, 9, 8, 7, 6],  # brevity penalty
                       [6, 6, 5, 2, 0, 0, 6, 5, 4, 3],  # two orders without matches: exp smoothing
                       [12, 10, 8, 5, 3, 0, 12, 11, 10, 9],  # longer hypothesis, one zero order
                       [0, 5, 0, 0, 0, 0, 0, 0, 0, 0],  # empty hypothesis
                       [3, 3, 3, 2, 1, 0, 3, 2, 1, 0]], dtype=float)  # no 4-grams at all
    expected = [33.010083098515025, 24.274588585366175, 26.65837681702886, 0.0, 0.0]
    np.testing.assert_allclose(bleu_from_counts(stats_), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_exact_permutation_equals_brute_force(alternative):
    a = np.linspace(0.2, 0.8, D10.size)
    b = a - D10
    signs = np.array(list(itertools.product([1.0, -1.0], repeat=D10.size)))
    exact = _exact_permutation_p(signs @ D10 / D10.size, D10.mean(), alternative)
    res = permutation_test(a, b, alternative=alternative, exact=True)
    assert res.pvalue == pytest.approx(exact, rel=1e-12)
    assert res.details["n_resamples"] == 2**D10.size and res.details["exact"]
    A, B = _f1_items(3, 12)
    keep = np.array(list(itertools.product([1.0, 0.0], repeat=12)))
    null = f1_from_counts(keep @ A + (1 - keep) @ B) - f1_from_counts(keep @ B + (1 - keep) @ A)
    obs = f1_from_counts(A.sum(0)[None])[0] - f1_from_counts(B.sum(0)[None])[0]
    res_f1 = permutation_test(A, B, metric="f1", alternative=alternative, exact=True)
    assert res_f1.pvalue == pytest.approx(_exact_permutation_p(null, obs, alternative), rel=1e-12)
    with pytest.raises(InputError, match="at most 24"):
        permutation_test(np.zeros(25), np.ones(25), exact=True)


# --- the bootstrap kernel: fast path against a plain reference of the documented stream ---------------------


def _reference_bootstrap_sums(S: np.ndarray, n_resamples: int, seed: int, per: int) -> np.ndarray:
    """Straightforward re-implementation of the documented random stream: chunk c of ``per``
    resamples uses SFC64 seeded by child c of SeedSequence(seed).spawn(n_chunks); each int64 draw v on [0, n^m)
    (m = 3 if n^3 < 2^63, else 2) gives m indices, its base-n digits (blocks of most significant
    digits first); sums by a Python loop over Python ints."""
    n = S.shape[0]
    m = 3 if n**3 < 2**63 else 2
    sizes = [per] * (n_resamples // per) + ([n_resamples % per] if n_resamples % per else [])
    children = np.random.SeedSequence(seed).spawn(len(sizes))
    rows = []
    for size, child in zip(sizes, children):
        gen = np.random.Generator(np.random.SFC64(child))
        v = [int(x) for x in gen.integers(0, n**m, size=-(-size * n // m), dtype=np.int64)]
        digits = [[(x // n ** (m - 1 - j)) % n for x in v] for j in range(m)]
        idx = np.array(sum(digits, []))[: size * n].reshape(size, n)
        for r in range(size):
            rows.append(sum((S[i] for i in idx[r]), np.zeros(S.shape[1])))
    return np.array(rows)


@pytest.mark.parametrize("k", [1, 2, 5])
def test_bootstrap_kernel_equals_reference_stream(monkeypatch, k):
    from mixeval.resampling import _engine

    rng = np.random.default_rng(4)
    S = rng.normal(size=(37, k))
    # small chunks so that several child streams (and the odd-length last draw) are exercised
    monkeypatch.setattr(_engine, "BOOTSTRAP_CHUNK_ELEMENTS", 37 * 7)
    ref = _reference_bootstrap_sums(S, 100, seed=123, per=7)
    for workers in (1, 2, 3):
        fast = _engine.bootstrap_sums(S, 100, _engine.as_generator(123), workers=workers)
        np.testing.assert_allclose(fast, ref, rtol=1e-12, atol=1e-12)
    # the parallel path proper (above PARALLEL_MIN_ELEMENTS) gives bit-identical output for any thread count
    monkeypatch.setattr(_engine, "PARALLEL_MIN_ELEMENTS", 1)
    one = _engine.bootstrap_sums(S, 100, np.random.default_rng(123), workers=1)
    two = _engine.bootstrap_sums(S, 100, np.random.default_rng(123), workers=2)
    np.testing.assert_array_equal(one, two)


def test_paired_bootstrap_null_equals_reference_path():
    # end to end: the shifted null distribution is the reference stream's mean differences, centred
    rng = np.random.default_rng(6)
    a, b = rng.normal(size=50), rng.normal(size=50)
    res = paired_bootstrap_test(a, b, n_resamples=200, random_state=77)
    from mixeval.resampling import _engine

    per = max(1, _engine.BOOTSTRAP_CHUNK_ELEMENTS // 50)
    dist = _reference_bootstrap_sums((a - b)[:, None], 200, seed=77, per=per)[:, 0] / 50
    np.testing.assert_allclose(res.null_distribution, dist - dist.mean(), rtol=1e-9, atol=1e-12)
    assert res.details["bootstrap_mean"] == pytest.approx(dist.mean(), rel=1e-12)


@pytest.mark.parametrize("n", [1, 2, 5])
def test_bootstrap_counts_are_multinomial(n):
    # S = identity turns the column sums into the resample counts: Multinomial(n, 1/n each)
    from mixeval.resampling import _engine

    R = 40_000
    counts = _engine.bootstrap_sums(np.eye(n), R, np.random.default_rng(2))
    assert np.all(counts.sum(axis=1) == n) and np.all(counts >= 0) and np.all(counts == np.round(counts))
    if n == 1:
        return
    p = 1.0 / n
    se_mean = np.sqrt(n * p * (1 - p) / R)
    np.testing.assert_allclose(counts.mean(axis=0), 1.0, atol=5 * se_mean)
    cov = np.cov(counts, rowvar=False)
    expected = n * (np.diag(np.full(n, p)) - p * p)
    np.testing.assert_allclose(cov, expected, atol=0.05)
    # exact law of one count, chi-square against Binomial(n, 1/n)
    obs = np.bincount(counts[:, 0].astype(int), minlength=n + 1)
    exp = R * stats.binom.pmf(np.arange(n + 1), n, p)
    keep = exp > 5
    assert stats.chisquare(obs[keep], exp[keep] * obs[keep].sum() / exp[keep].sum()).pvalue > 1e-4


def test_bootstrap_indices_digit_split_without_overflow():
    from mixeval.resampling import _engine

    assert [_engine.index_digits(n) for n in (1, 2_097_151, 2_097_152, 3_037_000_499, 3_037_000_500)] == \
        [3, 3, 2, 2, 1]
    n = 3_000_000  # n**3 > 2**63: two digits per draw; n * n > 2**32; indices must stay in range
    idx = _engine.bootstrap_indices(n, 1, np.random.default_rng(0))
    assert idx.shape == (1, n) and idx.min() >= 0 and idx.max() < n
    # both digit blocks are uniform: means near (n - 1) / 2 (4 standard errors)
    half = n // 2
    for part in (idx[0, :half], idx[0, half:]):
        assert abs(part.mean() - (n - 1) / 2) < 4 * n / np.sqrt(12 * half)
    # three digits per draw for n = 2,097,151 (n**3 just below 2**63): digits in range, and uniform
    n3 = 2_097_151
    idx3 = _engine.bootstrap_indices(n3, 1, np.random.default_rng(1))[0]
    assert idx3.min() >= 0 and idx3.max() < n3
    third = -(-n3 // 3)
    for part in (idx3[:third], idx3[third:2 * third], idx3[2 * third:]):
        assert abs(part.mean() - (n3 - 1) / 2) < 4 * n3 / np.sqrt(12 * part.size)


def test_bootstrap_seeding_int_generator_and_legacy_generator():
    from mixeval.resampling import _engine

    rng = np.random.default_rng(0)
    a, b = rng.normal(size=300), rng.normal(size=300)
    by_int = paired_bootstrap_test(a, b, n_resamples=500, random_state=9)
    by_gen = paired_bootstrap_test(a, b, n_resamples=500, random_state=np.random.default_rng(9))
    np.testing.assert_array_equal(by_int.null_distribution, by_gen.null_distribution)
    # a Generator passed in spawns fresh children on each call: two calls differ
    g = np.random.default_rng(9)
    first = paired_bootstrap_test(a, b, n_resamples=500, random_state=g)
    second = paired_bootstrap_test(a, b, n_resamples=500, random_state=g)
    assert not np.array_equal(first.null_distribution, second.null_distribution)

    def legacy(seed):
        bg = np.random.MT19937()
        bg._legacy_seeding(seed)
        return np.random.Generator(bg)

    with pytest.raises(TypeError):
        legacy(3).spawn(1)  # the fallback path is really exercised
    x = _engine.bootstrap_sums(a[:, None], 200, legacy(3))
    y = _engine.bootstrap_sums(a[:, None], 200, legacy(3))
    np.testing.assert_array_equal(x, y)
    assert x.std() == pytest.approx(a.std() * np.sqrt(300), rel=0.2)


def test_a_bootstrap_of_one_item_is_an_error_not_p_0_001():
    from mixeval.errors import InputError
    from mixeval.resampling import bootstrap_ci

    with pytest.raises(InputError, match="at least 2 items"):
        paired_bootstrap_test([0.9], [0.1], n_resamples=999, random_state=0)
    with pytest.raises(InputError, match="at least 2 items"):
        bootstrap_ci([0.9], n_resamples=99, random_state=0)
