"""A quick run of benchmarks/sim_logs_clustered.py (the full run and its results are in benchmarks/results):
with questions clustered in passages the naive SE undercovers and the cluster-robust intervals do not; with
repeats, the mixed model of the repeat-level rows has the estimate and SE of the paired analysis of item means."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "sim_logs_clustered.py"


@pytest.fixture(scope="module")
def sim():
    spec = importlib.util.spec_from_file_location("sim_logs_clustered", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_clustered_questions_naive_undercovers(sim):
    rng = np.random.default_rng(7)
    rows = [sim.one_clusters(rng, mixed=False) for _ in range(80)]
    naive = np.mean([r["naive"] for r in rows])
    cr2 = np.mean([r["cr2"] for r in rows])
    # expected about 0.71 (SE ratio 0.55) and 0.95; 80 replicates give binomial SEs of 0.05 and 0.025
    assert naive < 0.85 and cr2 > 0.85 and cr2 - naive > 0.1


def test_repeats_mixed_model_is_the_paired_analysis_of_item_means(sim):
    rng = np.random.default_rng(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = [sim.one_repeats(rng, mixed=True) for _ in range(3)]
    for r in rows:
        assert r["mixed_minus_paired_estimate"] < 1e-9
        assert r["mixed_over_paired_se"] == pytest.approx(1.0, rel=1e-4)
