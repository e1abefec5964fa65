"""Metric meta-evaluation: how good are the evaluation metrics and scores themselves?

* Selective answering (Mishra et al.): the accuracy-coverage curve by MaxProb, its
  AUC, and the DiSCA, DiDMA and NiDMA scores.
"""

from __future__ import annotations

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

__all__ = [
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
