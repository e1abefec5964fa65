"""Evaluation logs of harnesses (lm-evaluation-harness, inspect_ai, HELM, any JSONL) and the paired,
cluster-robust comparison of the models in them.

The readers (also in :mod:`mixeval.datasets`) return the long format: one row per model x item x repeat
with columns ``model``, ``task``, ``item``, ``repeat``, ``item_hash``, the metrics and the item's fields.
:func:`compare_logs` compares every pair of models on their shared items.
"""

from __future__ import annotations

from ._compare import compare_logs
from ._mcnemar import cluster_mcnemar, mcnemar
from ._plots import plot_leaderboard, plot_pair_intervals
from ._readers import (
                       KEY_COLUMNS,
                       check_items,
                       inspect_value_to_float,
                       read_helm,
                       read_inspect,
                       read_jsonl,
                       read_lm_eval,
                       read_logs,
)
from ._result import LogComparison
from ._stats import clustered_means

__all__ = ["compare_logs", "LogComparison", "read_lm_eval", "read_inspect", "read_helm", "read_jsonl", "read_logs",
           "check_items", "inspect_value_to_float", "clustered_means", "mcnemar", "cluster_mcnemar",
           "plot_pair_intervals", "plot_leaderboard", "KEY_COLUMNS"]
