"""Significance of differences between systems (book Section 4.3).

* :func:`emmeans` -- estimated marginal means on emmeans' reference grid (asymptotic inference);
* :func:`pairwise` -- all pairwise contrasts with Tukey, Holm, Bonferroni, BH or no adjustment,
  optionally conditional on the levels of other factors (``by=``, Table 4.3);
* :func:`glrt` / :func:`glrt_averaged` -- generalized likelihood-ratio tests of nested models
  (Table 4.1);
* :func:`bin_property` -- classes of a numeric data property for conditional comparisons;
* :func:`plot_emmeans` -- the interaction plot of marginal means (Figure 4.7); :func:`plot_contrasts`
  -- a forest plot of the contrasts with their adjusted intervals.
"""

from ..study import bin_property
from ._emmeans import emmeans
from ._glrt import glrt, glrt_averaged
from ._grid import ReferenceGrid, reference_grid
from ._pairwise import ADJUSTMENTS, PairwiseResult, pairwise, tukey_critical_value, tukey_pvalue
from ._plots import plot_contrasts, plot_emmeans
from ._response_scale import emmeans_response, pairwise_differences, pairwise_ratios

__all__ = [
    "emmeans",
    "pairwise",
    "PairwiseResult",
    "glrt",
    "glrt_averaged",
    "bin_property",
    "plot_emmeans",
    "plot_contrasts",
    "reference_grid",
    "ReferenceGrid",
    "tukey_pvalue",
    "tukey_critical_value",
    "ADJUSTMENTS",
    "emmeans_response",
    "pairwise_ratios",
    "pairwise_differences",
]
