"""Metric meta-evaluation: how good are the evaluation metrics and scores themselves?

* Local metric accuracy (Deviyani & Diaz): how often a metric scores an output above
  its degraded version, per subset of outputs, with confidence intervals, a test of
  equal accuracy across subsets (hypothesis A) and a test of a change in the ordering
  of metrics across subsets (hypothesis B); pluggable, seeded perturbations.
* Selective answering (Mishra et al.): the accuracy-coverage curve by MaxProb, its
  AUC, and the DiSCA, DiDMA and NiDMA scores.
"""

from __future__ import annotations

from ._example_data import example_translations
from ._hypotheses import accuracy_equality_table, accuracy_equality_test, rank_stability_test
from ._local import LocalAccuracyResult, local_accuracy, plot_local_accuracy
from ._pairs import score_pairs
from ._perturb import DropWords, Perturbation, RandomTranspositions, n_transpositions, perturb
from ._selective import (
    CoverageCurve,
    DiscaResult,
    accuracy_coverage_curve,
    didma,
    disca,
    nidma,
    parse_weights,
    plot_accuracy_coverage,
    selective_auc,
)
from ._text_metrics import chrf, unigram_f1, word_error_rate

__all__ = [
    # local accuracy
    "score_pairs",
    "local_accuracy",
    "LocalAccuracyResult",
    "accuracy_equality_test",
    "accuracy_equality_table",
    "rank_stability_test",
    "plot_local_accuracy",
    # perturbations
    "Perturbation",
    "DropWords",
    "RandomTranspositions",
    "n_transpositions",
    "perturb",
    # example metrics and data
    "word_error_rate",
    "unigram_f1",
    "chrf",
    "example_translations",
    # selective answering
    "CoverageCurve",
    "DiscaResult",
    "accuracy_coverage_curve",
    "selective_auc",
    "disca",
    "didma",
    "nidma",
    "parse_weights",
    "plot_accuracy_coverage",
]
