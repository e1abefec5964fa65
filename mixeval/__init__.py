"""mixeval: model-based statistics for ML and NLP evaluations.

Validity (is a model just reconstructing a label-defining rule?), reliability
(how much of the score variance comes from items, raters, seeds,
meta-parameters?) and significance (is system A better than B once all that is
accounted for?), with lme4-style formulas over pandas DataFrames and no R.
"""

from __future__ import annotations

from . import errors
from ._results import ConfidenceInterval, TestResult

__version__ = "0.1.0"

__all__ = [
    "errors",
    "TestResult",
    "ConfidenceInterval",
    "__version__",
]
