"""Sampling-based and parametric significance tests for paired system comparisons.

Book (Riezler & Hagmann) Algorithms 4.1 (paired bootstrap, shift method), 4.2
(approximate randomization), Section 4.1 (Z-test, paired t-test) and Algorithm 3.1
(confidence interval under a computational budget), vectorised and reproducible:
every resampling function takes keyword-only ``n_resamples=`` and
``random_state=`` and gives identical output for identical seeds.
"""

from ._budget import BudgetResult, budget_ci, expected_max, plot_budget
from ._common import percentile_interval
from ._engine import as_generator, backend
from ._metrics import (
    accuracy_from_counts,
    bleu_from_counts,
    f1_from_counts,
    precision_from_counts,
    recall_from_counts,
)
from ._multi import compare_systems, multi_bootstrap_test, wide_scores
from ._paired import bca_interval, bootstrap_ci, paired_bootstrap_test, permutation_test
from ._parametric import paired_t_test, z_test

__all__ = [
    "permutation_test",
    "paired_bootstrap_test",
    "bootstrap_ci",
    "percentile_interval",
    "bca_interval",
    "z_test",
    "paired_t_test",
    "f1_from_counts",
    "precision_from_counts",
    "recall_from_counts",
    "accuracy_from_counts",
    "bleu_from_counts",
    "as_generator",
    "backend",
    "compare_systems",
    "multi_bootstrap_test",
    "wide_scores",
    "expected_max",
    "budget_ci",
    "BudgetResult",
    "plot_budget",
]

from . import engine as engine  # noqa: E402  the building blocks for the other packages (``mixeval.resampling.engine``)
