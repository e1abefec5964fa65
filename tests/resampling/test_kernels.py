"""The compiled resampling kernels against the numpy implementation of the same streams.

Integer-valued statistics make every sum exact whatever the order of additions, so the two
backends must then agree bit for bit: equal sums over thousands of resamples mean the same
resamples. Real-valued statistics agree to rounding.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from mixeval.resampling import _engine, backend, paired_bootstrap_test, permutation_test


@pytest.fixture
def ck():
    """The compiled extension; in CI its absence is a failure (the build must work there)."""
    if _engine._ckernels is None:
        if os.environ.get("CI"):
            pytest.fail("the compiled kernels (mixeval.resampling._ckernels) were not built")
        pytest.skip("the compiled kernels were not built (no C compiler at install time)")
    return _engine._ckernels


def _both(monkeypatch, fn):
    """``fn()`` with the compiled kernels and with numpy (MIXEVAL_KERNELS=numpy)."""
    monkeypatch.delenv(_engine.BACKEND_VARIABLE, raising=False)
    assert backend() == "compiled"
    fast = fn()
    monkeypatch.setenv(_engine.BACKEND_VARIABLE, "numpy")
    assert backend() == "numpy"
    slow = fn()
    monkeypatch.delenv(_engine.BACKEND_VARIABLE)
    return fast, slow


def test_backend_switch(monkeypatch, ck):
    monkeypatch.delenv(_engine.BACKEND_VARIABLE, raising=False)
    assert backend() == "compiled"
    for value in ("numpy", " NumPy "):
        monkeypatch.setenv(_engine.BACKEND_VARIABLE, value)
        assert backend() == "numpy"
    monkeypatch.setattr(_engine, "_ckernels", None)
    monkeypatch.delenv(_engine.BACKEND_VARIABLE)
    assert backend() == "numpy"


def _sfc64_state(bg: np.random.SFC64) -> np.ndarray:
    return bg.state["state"]["state"][None, :].copy()


@pytest.mark.parametrize("bound", [2**32 + 1, 10**15, 2_097_151**3, 3_037_000_499**2, 2**62 + 12345, 2**63 - 1])
@pytest.mark.parametrize("seed", [0, 11, 2**100 + 7])
def test_fused_draws_equal_numpy_sfc64_integers(ck, bound, seed):
    # numpy's SFC64 inline and the 64-bit bounded draw (Lemire's method as numpy implements it)
    bg = np.random.SFC64(np.random.SeedSequence(seed))
    out = np.empty(50_000, dtype=np.int64)
    ck.sfc64_draws(_sfc64_state(bg), bound, out)
    ref = np.random.Generator(bg).integers(0, bound, size=out.size, dtype=np.int64)
    np.testing.assert_array_equal(out, ref)


def test_rejections_happen_and_match(ck):
    # a bound just above 2**62 rejects about a quarter of the raw words: the rejection loop is exercised
    bound = 2**62 + 1
    bg = np.random.SFC64(3)
    state = _sfc64_state(bg)
    out = np.empty(10_000, dtype=np.int64)
    ck.sfc64_draws(state, bound, out)
    np.testing.assert_array_equal(out, np.random.Generator(bg).integers(0, bound, size=10_000, dtype=np.int64))
    assert bg.state["state"]["state"][3] - state[0, 3] > 12_000  # the counter: raw words consumed


@pytest.mark.parametrize("n", [1, 2, 5, 37, 1625, 1626, 2500])
@pytest.mark.parametrize("k", [1, 3])
def test_bootstrap_sums_integer_statistics_identical(monkeypatch, ck, n, k):
    # n <= 1625: numpy draws the words (32-bit range), the kernel splits and sums them;
    # n >= 1626 with k == 1: the kernel draws them itself (SFC64 inline), four chunks per call
    S = np.random.default_rng(n).integers(-1000, 1000, size=(n, k)).astype(float)
    monkeypatch.setattr(_engine, "BOOTSTRAP_CHUNK_ELEMENTS", max(n, 3 * n + 1))  # 3 resamples per chunk
    R = 61 if n > 100 else 301  # several groups of four chunks and a shorter last chunk
    fast, slow = _both(monkeypatch, lambda: _engine.bootstrap_sums(S, R, np.random.default_rng(5), workers=2))
    np.testing.assert_array_equal(fast, slow)


@pytest.mark.parametrize("bit_generator", [np.random.SFC64, np.random.Philox, np.random.PCG64DXSM])
def test_bootstrap_sums_other_bit_generators_identical(monkeypatch, ck, bit_generator):
    n = 3000
    S = np.random.default_rng(1).integers(-50, 50, size=(n, 1)).astype(float)
    monkeypatch.setattr(_engine, "BOOTSTRAP_CHUNK_ELEMENTS", 2 * n)
    fast, slow = _both(
        monkeypatch, lambda: _engine.bootstrap_sums(S, 23, np.random.Generator(bit_generator(8)), workers=1)
    )
    np.testing.assert_array_equal(fast, slow)


def test_bootstrap_sums_legacy_seeded_generator_identical(monkeypatch, ck):
    def legacy():
        bg = np.random.MT19937()
        bg._legacy_seeding(3)
        return np.random.Generator(bg)

    S = np.random.default_rng(2).integers(-9, 9, size=(2000, 1)).astype(float)
    fast, slow = _both(monkeypatch, lambda: _engine.bootstrap_sums(S, 40, legacy()))
    np.testing.assert_array_equal(fast, slow)


def test_bootstrap_sums_real_statistics_agree_to_rounding(monkeypatch, ck):
    rng = np.random.default_rng(9)
    for n, k in ((3000, 1), (500, 4)):
        S = rng.normal(size=(n, k))
        fast, slow = _both(monkeypatch, lambda: _engine.bootstrap_sums(S, 200, np.random.default_rng(4)))
        scale = np.abs(S).sum(axis=0)
        assert np.max(np.abs(fast - slow) / scale) < 1e-14


def test_bootstrap_thread_count_does_not_change_output(monkeypatch, ck):
    monkeypatch.setattr(_engine, "PARALLEL_MIN_ELEMENTS", 1)
    monkeypatch.setattr(_engine, "BOOTSTRAP_CHUNK_ELEMENTS", 4000)
    S = np.random.default_rng(0).normal(size=(2000, 1))
    outs = [_engine.bootstrap_sums(S, 97, np.random.default_rng(12), workers=w) for w in (1, 2, 3)]
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], outs[2])


@pytest.mark.parametrize("n", [1, 7, 8, 9, 100, 1001])
@pytest.mark.parametrize("k", [1, 4])
def test_sign_flip_sums_integer_statistics_identical(monkeypatch, ck, n, k):
    D = np.random.default_rng(n).integers(-1000, 1000, size=(n, k)).astype(float)
    fast, slow = _both(monkeypatch, lambda: _engine.sign_flip_sums(D, 501, np.random.default_rng(6)))
    np.testing.assert_array_equal(fast, slow)


def test_sign_flip_sums_parallel_path_identical(monkeypatch, ck):
    # above PARALLEL_MIN_ELEMENTS the chunks are summed by worker threads while the next are drawn
    monkeypatch.setattr(_engine, "PARALLEL_MIN_ELEMENTS", 1)
    monkeypatch.setattr(_engine, "CHUNK_ELEMENTS", 64 * 50)
    D = np.random.default_rng(1).integers(-30, 30, size=(300, 2)).astype(float)
    fast, slow = _both(monkeypatch, lambda: _engine.sign_flip_sums(D, 1001, np.random.default_rng(2)))
    np.testing.assert_array_equal(fast, slow)


def test_tests_identical_across_backends(monkeypatch, ck):
    rng = np.random.default_rng(21)
    a = rng.normal(0.5, 0.2, size=4000)
    b = a - 0.004 + rng.normal(0, 0.1, size=4000)
    for test in (permutation_test, paired_bootstrap_test):
        fast, slow = _both(monkeypatch, lambda: test(a, b, n_resamples=3000, random_state=4))
        assert fast.pvalue == slow.pvalue
        np.testing.assert_allclose(fast.null_distribution, slow.null_distribution, rtol=0, atol=1e-15)
    boot_fast, boot_slow = _both(monkeypatch, lambda: paired_bootstrap_test(a, b, n_resamples=3000, random_state=4))
    ci_fast, ci_slow = boot_fast.confidence_interval, boot_slow.confidence_interval
    np.testing.assert_allclose([ci_fast.lower, ci_fast.upper], [ci_slow.lower, ci_slow.upper], rtol=1e-12)


def test_kernel_argument_errors(ck):
    S = np.zeros((10, 1))
    out = np.empty((2, 1))
    with pytest.raises(ValueError, match="outside"):
        ck.bootstrap_sums(np.array([1000] * 7, dtype=np.int64), S, 10, 3, 2, out)
    with pytest.raises(ValueError, match="outside"):
        ck.bootstrap_sums(np.array([-1] * 7, dtype=np.int64), S, 10, 3, 2, out)
    with pytest.raises(ValueError, match="draws: expected"):
        ck.bootstrap_sums(np.zeros(6, dtype=np.int64), S, 10, 3, 2, out)
    with pytest.raises(ValueError, match="out: expected"):
        ck.bootstrap_sums(np.zeros(7, dtype=np.int64), S, 10, 3, 2, np.empty(3))
    with pytest.raises(ValueError, match="2\\*\\*63"):
        ck.bootstrap_sums(np.zeros(7, dtype=np.int64), np.zeros((2_097_152, 1)), 2_097_152, 3, 1, out)
    with pytest.raises(ValueError, match="n >= 1"):
        ck.bootstrap_sums(np.zeros(7, dtype=np.int64), S, 10, 4, 2, out)
    state = _sfc64_state(np.random.SFC64(1))
    with pytest.raises(ValueError, match="k == 1"):
        ck.bootstrap_sums_sfc64(state, np.zeros((3000, 2)), 3000, 3, 1, np.empty(2))
    with pytest.raises(ValueError, match="2\\*\\*32"):
        ck.bootstrap_sums_sfc64(state, np.zeros((100, 1)), 100, 3, 1, np.empty(1))
    with pytest.raises(ValueError, match="SFC64 states"):
        ck.bootstrap_sums_sfc64(np.zeros(3, dtype=np.uint64), np.zeros((3000, 1)), 3000, 3, 1, np.empty(1))
    with pytest.raises(ValueError, match="out: expected"):
        ck.bootstrap_sums_sfc64(np.vstack([state, state]), np.zeros((3000, 1)), 3000, 3, 1, np.empty(1))
    with pytest.raises(ValueError, match="sign_flip_sums"):
        ck.sign_flip_sums(np.zeros((2, 3), dtype=np.uint8), np.zeros((1, 16)), 2, np.empty(2))


def test_bootstrap_sums_two_digits_per_draw_identical(monkeypatch, ck):
    # n > 2,097,151: n**3 overflows, so each draw carries two indices (m = 2); fused draws there too
    n = 2_097_152
    assert _engine.index_digits(n) == 2
    S = np.random.default_rng(3).integers(-3, 4, size=(n, 1)).astype(float)
    monkeypatch.setattr(_engine, "BOOTSTRAP_CHUNK_ELEMENTS", n)  # one resample per chunk
    fast, slow = _both(monkeypatch, lambda: _engine.bootstrap_sums(S, 5, np.random.default_rng(8), workers=2))
    np.testing.assert_array_equal(fast, slow)
