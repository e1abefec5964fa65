"""Faithful confidence intervals when the metric is itself a model (Goyal et al. 2023).

A toxicity classifier or an LLM judge labels each system's outputs; its errors
are described by a :class:`MetricModel` (precision and false omission rate, or
the confusion counts of an annotated test set). :func:`metric_ci` reproduces the
paper's interval from summary numbers; :func:`metric_comparisons` compares systems
from their labels with the paper's interval and calibrated alternatives (delta
method and parametric bootstrap for estimated rates, prediction-powered inference
with a gold subset). :func:`coverage_study` measures the coverage of every
interval by simulation.
"""

from ._comparisons import METHODS, metric_comparisons
from ._model import MetricModel
from ._simulate import coverage_study
from ._summary import MetricCI, metric_ci

__all__ = ["MetricModel", "MetricCI", "metric_ci", "metric_comparisons", "coverage_study", "METHODS"]
