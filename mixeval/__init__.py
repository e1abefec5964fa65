"""mixeval: model-based statistics for ML and NLP evaluations.

Validity (is a model just reconstructing a label-defining rule?), reliability
(how much of the score variance comes from items, raters, seeds,
meta-parameters?) and significance (is system A better than B once all that is
accounted for?), with lme4-style formulas over pandas DataFrames and no R.

The main entry points are :class:`Study` and :func:`lmer`; the sub-packages
``reliability``, ``validity``, ``resampling``, ``agreement``,
``metric_model``, ``meta``, ``datasets`` and ``report`` hold the rest.
"""

from __future__ import annotations

from . import agreement, datasets, errors, meta, metric_model, plots, reliability, report, resampling, scale, significance, validity
from ._results import ConfidenceInterval, TestResult
from .agreement import cohens_kappa, krippendorff_alpha, scotts_pi
from .metric_model import MetricModel, metric_ci
from .mixed import GlmerResult, LmerResult, compare, glmer, lmer
from .reliability import cheapest_design, dstudy, phi, variance_table
from .report import Report, build_report
from .resampling import paired_bootstrap_test, permutation_test
from .significance import PairwiseResult, emmeans, glrt, pairwise
from .study import Study, bin_property
from .validity import circularity_test, dataset_bias_test, distillation_test, fit_gam, transformation_invariance_test

__version__ = "0.1.0"

__all__ = [
    "Study",
    "lmer",
    "glmer",
    "GlmerResult",
    "compare",
    "LmerResult",
    "bin_property",
    "phi",
    "dstudy",
    "cheapest_design",
    "variance_table",
    "emmeans",
    "pairwise",
    "PairwiseResult",
    "glrt",
    "circularity_test",
    "distillation_test",
    "dataset_bias_test",
    "transformation_invariance_test",
    "fit_gam",
    "build_report",
    "Report",
    "paired_bootstrap_test",
    "permutation_test",
    "krippendorff_alpha",
    "cohens_kappa",
    "scotts_pi",
    "MetricModel",
    "metric_ci",
    "TestResult",
    "ConfidenceInterval",
    "agreement",
    "datasets",
    "errors",
    "meta",
    "metric_model",
    "plots",
    "reliability",
    "report",
    "significance",
    "resampling",
    "validity",
    "__version__",
]
