"""mixeval: model-based statistics for ML and NLP evaluations.

Validity (is a model just reconstructing a label-defining rule?), reliability
(how much of the score variance comes from items, raters, seeds,
meta-parameters?) and significance (is system A better than B once all that is
accounted for?), with lme4-style formulas over pandas DataFrames and no R.

The main entry points are :class:`Study` and :func:`lmer`; the sub-packages hold the rest
(``mixeval.uncertainty.power_from_components`` works after ``import mixeval``: every sub-package
is imported on its first use).
"""

from __future__ import annotations

import importlib

# Public names and the module that defines them. Nothing heavy is imported with the package: each
# name is imported on first use (PEP 562), so ``import mixeval`` and the command line start fast.
_SUBMODULES = ("agreement", "cli", "datasets", "errors", "formula", "logs", "meta", "metric_model", "mixed", "plots",
               "preferences", "reliability", "report", "reproductions", "resampling", "scale", "significance",
               "study", "uncertainty", "validity")
_NAMES = {
    "ConfidenceInterval": "._results", "TestResult": "._results",
    "cohens_kappa": ".agreement", "krippendorff_alpha": ".agreement", "scotts_pi": ".agreement",
    "MetricModel": ".metric_model", "metric_ci": ".metric_model",
    "LmerResult": ".mixed", "compare": ".mixed", "fit": "._lmer", "lmer": "._lmer", "GlmerResult": ".mixed", "glmer": "._lmer",
    "MixedResult": ".mixed", "clmm": ".mixed", "ClmmResult": ".mixed",
    "cheapest_design": ".reliability", "dstudy": ".reliability", "phi": ".reliability", "variance_table": ".reliability",
    "Report": ".report", "build_report": ".report",
    "paired_bootstrap_test": ".resampling", "permutation_test": ".resampling",
    "PairwiseResult": ".significance", "emmeans": ".significance", "glrt": ".significance", "pairwise": ".significance",
    "Study": ".study", "bin_property": "._binning",
    "circularity_test": ".validity", "dataset_bias_test": ".validity", "distillation_test": ".validity",
    "fit_gam": ".validity", "transformation_invariance_test": ".validity",
}


def __getattr__(name: str):
    if name in _SUBMODULES:
        module = importlib.import_module(f".{name}", __name__)
    elif name in _NAMES:
        module = getattr(importlib.import_module(_NAMES[name], __name__), name)
    else:
        raise AttributeError(f"module 'mixeval' has no attribute {name!r}")
    globals()[name] = module
    return module


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__version__ = "0.1.0"

__all__ = [
    "Study",
    "fit",
    "lmer",
    "glmer",
    "MixedResult",
    "GlmerResult",
    "clmm",
    "ClmmResult",
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
    "logs",
    "meta",
    "metric_model",
    "plots",
    "preferences",
    "reliability",
    "report",
    "significance",
    "resampling",
    "validity",
    "cli",
    "formula",
    "mixed",
    "reproductions",
    "scale",
    "study",
    "uncertainty",
    "__version__",
]
