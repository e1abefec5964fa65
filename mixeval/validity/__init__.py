"""Validity tests of book Chapter 2: GAM circularity test, dataset bias, transformation invariance."""

from ._circularity import CircularityResult, circularity_test, distillation_test, nullification_ratios, rank_features
from ._gam import GAMResult, fit_gam

__all__ = [
    "GAMResult",
    "fit_gam",
    "CircularityResult",
    "circularity_test",
    "distillation_test",
    "nullification_ratios",
    "rank_features",
]
