"""Validity tests of book Chapter 2 (Section 2.4).

* :func:`circularity_test` (Def. 2.5) and :func:`distillation_test`: is a dataset's labelling, or a
  black-box model's prediction, just the reconstruction of a rule over a few features? GAMs over
  subsets of candidate features, deviance explained D^2, effective df, and nullification as a number.
* :func:`fit_gam`: the penalized regression spline GAM engine behind it (mgcv's ``bs = "cr"``, GCV/UBRE).
* :func:`dataset_bias_test` (Def. 2.2): feature-label correlation in-domain vs out-of-domain.
* :func:`transformation_invariance_test` (Def. 2.3): refit after permissible scale transformations.
* :func:`plot_shapes`, :func:`plot_shape`: feature shapes with and without the circular set;
  :func:`plot_correlations`: the dataset bias picture.
"""

from ._bias import DatasetBiasResult, correlation_difference_test, dataset_bias_test
from ._circularity import CircularityResult, circularity_test, distillation_test, nullification_ratios, rank_features
from ._gam import GAMResult, fit_gam
from ._invariance import InvarianceResult, permissible_transform, transformation_invariance_test
from ._plots import plot_correlations, plot_shape, plot_shapes, step_function

__all__ = [
    "GAMResult",
    "fit_gam",
    "CircularityResult",
    "circularity_test",
    "distillation_test",
    "nullification_ratios",
    "rank_features",
    "DatasetBiasResult",
    "correlation_difference_test",
    "dataset_bias_test",
    "InvarianceResult",
    "permissible_transform",
    "transformation_invariance_test",
    "plot_correlations",
    "plot_shape",
    "plot_shapes",
    "step_function",
]
