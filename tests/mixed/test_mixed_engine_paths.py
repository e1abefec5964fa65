"""The deviance's evaluation paths agree: count classes (dense stack, pair table), per-level pair table,
per-level products, the one-class shortcut; the gradient equals finite differences of the deviance."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from mixeval.mixed import build_design, compute_stats
from mixeval.mixed import _stats
from mixeval.mixed._deviance import deviance_and_gradient, profiled_deviance
from mixeval.mixed._stats import LevelClasses, level_classes


def _data(n_a, n_b, per_a, balanced, seed=0):
    rng = np.random.default_rng(seed)
    counts = np.full(n_a, per_a) if balanced else rng.integers(1, 2 * per_a, n_a)
    a = np.repeat(np.arange(n_a), counts)
    b = np.concatenate([rng.choice(n_b, c, replace=c > n_b) for c in counts])
    c = rng.integers(0, 3, a.size)
    y = rng.normal(size=n_a)[a] + 0.7 * rng.normal(size=n_b)[b] + 0.3 * c + rng.normal(size=a.size)
    return pd.DataFrame({"a": a.astype(str), "b": b.astype(str), "c": c.astype(str), "x": rng.normal(size=a.size), "y": y})


def _rowwise(stats):
    """The same statistics with the class products disabled (weighted products from the levels)."""
    fresh = dataclasses.replace(stats)
    counts, of_level, sizes = np.unique(stats.counts0, return_inverse=True, return_counts=True)
    fresh.__dict__["classes"] = LevelClasses(counts, sizes, of_level.astype(np.int64), True, fresh)
    return fresh


CASES = {
    "balanced two factors (one class)": (_data(300, 40, 6, True), "y ~ x + (1|a) + (1|b)"),
    "unbalanced two factors (pair table)": (_data(300, 400, 6, False), "y ~ x + (1|a) + (1|b)"),
    "balanced, crossed small factors (dense stack)": (_data(200, 4, 12, True), "y ~ x + (1|a) + (1|b) + (1|c)"),
    "unbalanced three factors": (_data(150, 30, 5, False), "y ~ c + (1|a) + (1|b) + (1|b:c)"),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("reml", [True, False])
def test_paths_agree_and_gradient_is_exact(name, reml):
    df, formula = CASES[name]
    stats = compute_stats(build_design(formula, df))
    slow = _rowwise(stats)
    assert slow.classes.rowwise and slow.classes._kk_table is None
    for theta in (np.full(stats.n_terms, 0.8), np.linspace(0.3, 1.4, stats.n_terms)):
        dev, grad = deviance_and_gradient(stats, theta, reml)
        dev_slow, grad_slow = deviance_and_gradient(slow, theta, reml)
        assert dev == pytest.approx(dev_slow, rel=1e-12)
        np.testing.assert_allclose(grad, grad_slow, rtol=1e-8, atol=1e-8)
        for i in range(theta.size):
            step = 1e-6
            up, down = theta.copy(), theta.copy()
            up[i] += step
            down[i] -= step
            fd = (profiled_deviance(stats, up, reml) - profiled_deviance(stats, down, reml)) / (2 * step)
            assert grad[i] == pytest.approx(fd, rel=1e-5, abs=1e-4)


def test_representation_follows_the_design():
    one = compute_stats(build_design(*CASES["balanced two factors (one class)"][::-1]))
    assert one.classes.counts.size == 1
    dense = compute_stats(build_design(*CASES["balanced, crossed small factors (dense stack)"][::-1]))
    assert not dense.classes.rowwise and dense.classes._kk_dense is not None
    scattered = compute_stats(build_design(*CASES["unbalanced two factors (pair table)"][::-1]))
    assert scattered.classes.rowwise and scattered.classes._kk_table is not None  # classes would not pay


def test_pair_table_equals_weighted_gram():
    rng = np.random.default_rng(5)
    k = sp.random(60, 25, density=0.15, random_state=7, format="csr") * 3
    w = rng.uniform(0.1, 1.0, 60)
    table = _stats._pair_table(k, np.arange(60), np.arange(61))
    lower = (table @ w).reshape(25, 25)
    full = lower + lower.T - np.diag(np.diag(lower))
    np.testing.assert_allclose(full, _stats.weighted_gram(k, w), rtol=1e-12, atol=1e-12)
    assert np.all(np.triu(lower, 1) == 0)


def test_level_quadratic_forms_equal_dense_products():
    """k_l' Lr P Lr k_l per level from the doubled pair table, P given by its lower triangle only."""
    stats = compute_stats(build_design(*CASES["unbalanced two factors (pair table)"][::-1]))
    cls = stats.classes
    assert cls.rowwise and cls._kk_table is not None
    rng = np.random.default_rng(2)
    q = stats.crr.shape[0]
    m = rng.normal(size=(q, q))
    p_full = m @ m.T
    scale = rng.uniform(0.5, 2.0, q)
    k = sp.csr_matrix(stats.cross0r).toarray()
    expected = np.einsum("li,ij,lj->l", k * scale, p_full, k * scale)
    np.testing.assert_allclose(cls.level_quadratic_forms(np.tril(p_full), scale), expected, rtol=1e-11)


@pytest.mark.parametrize("formula", ["y ~ x + (1|a) + (1|b) + (1|c)", "y ~ x + (1|a) + (1|b:c)", "y ~ 1 + (1|a) + (1|c)"])
def test_joint_cell_statistics_equal_pairwise_tables(formula, monkeypatch):
    """Small factors tabulated jointly give the same Z'Z and Z'W blocks as one pass per pair of factors."""
    design = build_design(formula, _data(60, 5, 8, False, seed=3))
    joint = compute_stats(design)
    monkeypatch.setattr(_stats, "JOINT_CELLS", 0)
    pairwise = compute_stats(design)

    def dense(m):
        return m.toarray() if sp.issparse(m) else np.asarray(m)

    for name in ("cross0r", "zrw", "crr", "z0w", "counts0", "ww"):
        np.testing.assert_allclose(dense(getattr(joint, name)), dense(getattr(pairwise, name)), rtol=1e-13, atol=1e-10,
                                   err_msg=name)


def test_worker_processes_cap_the_blas_threads():
    """Parallel refits call limit_threads_per_process(1): large factorisations then stay on one thread."""
    from threadpoolctl import threadpool_info

    from mixeval.mixed import _blas

    try:
        _blas.limit_threads_per_process(1)
        with _blas.single_threaded_blas(), _blas.blas_threads_for(_blas.THREADED_ROWS):
            assert max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas") == 1
    finally:
        _blas._MAX_THREADS[0] = None
