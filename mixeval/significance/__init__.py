"""Significance of differences between systems (book Section 4.3).

* :func:`emmeans` -- estimated marginal means on emmeans' reference grid, with asymptotic (the
  book's), Satterthwaite or Kenward-Roger degrees of freedom (``df=``);
* :func:`emtrends` / :func:`pairwise_trends` -- slopes of a numeric covariate per factor level and
  their pairwise contrasts (conditional comparisons by a numeric data property);
* :func:`kenward_roger_vcov` -- pbkrtest's adjusted covariance of the fixed effects; :func:`df_inference` -- the
  covariance and degrees of freedom of linear functions of a fit's fixed effects by any df method, and
  :func:`default_df` the method emmeans chooses for a fit;
  :func:`expected_variance_covariance` -- its ``W``, the covariance of the variance components (REML);
* :func:`pairwise` -- all pairwise contrasts with Tukey, Holm, Bonferroni, BH or no adjustment,
  optionally conditional on the levels of other factors (``by=``, Table 4.3);
* :func:`contrast` -- emmeans' other contrast methods: treatment versus control (Dunnett), consecutive levels,
  effects, custom weights, with Dunnett/multivariate-t/Sidak/step-wise adjustments;
* :func:`margin_tests` -- emmeans' ``test(..., null, delta, side)`` on means or contrasts: equivalence (two
  one-sided tests), non-inferiority and non-superiority against a margin (also ``delta=``/``side=`` of
  :func:`emmeans`, :func:`pairwise` and :func:`contrast`);
* :func:`joint_tests` -- F tests of every fixed-effect term (emmeans' ``joint_tests``; with Satterthwaite df
  lmerTest's type III ``anova``);
* :func:`glrt` / :func:`glrt_averaged` -- generalized likelihood-ratio tests of nested models
  (Table 4.1);
* :func:`emmeans_ordinal` / :func:`pairwise_ordinal` -- emmeans' ordinal modes (latent, prob, cum.prob,
  exc.prob, mean.class) of a :func:`mixeval.clmm` fit and their contrasts;
* :func:`bin_property` -- classes of a numeric data property for conditional comparisons;
* :func:`plot_emmeans` -- the interaction plot of marginal means (Figure 4.7); :func:`plot_contrasts`
  -- a forest plot of the contrasts with their adjusted intervals; :func:`plot_trends` -- the fitted lines
  of a numeric property per system with their confidence bands.
"""

from .._binning import bin_property
from ._contrast import CONTRAST_METHODS, contrast
from ._ddf import DF_METHODS, default_df, df_inference, expected_variance_covariance, kenward_roger_vcov
from ._emmeans import emmeans
from ._glrt import glrt, glrt_averaged
from ._grid import ReferenceGrid, reference_grid
from ._joint import joint_tests
from ._margins import margin_tests
from ._ordinal import ORDINAL_MODES, emmeans_ordinal, pairwise_ordinal
from ._pairwise import ADJUSTMENTS, PairwiseResult, pairwise, tukey_critical_value, tukey_pvalue
from ._plots import plot_contrasts, plot_emmeans, plot_trends
from ._response_scale import emmeans_response, pairwise_differences, pairwise_ratios
from ._trends import emtrends, pairwise_trends

__all__ = [
    "emmeans",
    "emtrends",
    "pairwise",
    "pairwise_trends",
    "kenward_roger_vcov",
    "expected_variance_covariance",
    "DF_METHODS",
    "default_df",
    "df_inference",
    "PairwiseResult",
    "glrt",
    "glrt_averaged",
    "bin_property",
    "plot_emmeans",
    "plot_contrasts",
    "plot_trends",
    "reference_grid",
    "ReferenceGrid",
    "tukey_pvalue",
    "tukey_critical_value",
    "ADJUSTMENTS",
    "emmeans_response",
    "pairwise_ratios",
    "pairwise_differences",
    "emmeans_ordinal",
    "pairwise_ordinal",
    "ORDINAL_MODES",
    "contrast",
    "CONTRAST_METHODS",
    "joint_tests",
    "margin_tests",
]

from . import engine as engine  # noqa: E402  the building blocks for the other packages (``mixeval.significance.engine``)
