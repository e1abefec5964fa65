"""Building blocks of the significance package for the rest of mixeval: the df rules (which method, emmeans'
default and why), the notes and footers that name them, the checks of ``adjust`` and of few levels, and the
parametric-bootstrap LRT.

:mod:`mixeval.significance` exports what a user calls (``emmeans``, ``pairwise``, ``glrt``, ...); :class:`~mixeval.Study`,
the report and the reliability functions assemble their output from these pieces, so that no package reaches into
this one's private modules.

Examples
--------
>>> from mixeval.significance import engine
>>> engine.canonical_adjust("Holm"), engine.canonical_df("kr")
('holm', 'kenward-roger')
"""

from ._bootstrap_lrt import bootstrap_lrt
from ._ddf import canonical_df, random_intercept_problem
from ._dominance import warn_few_levels
from ._labels import footer, note_df_rule
from ._pairwise import canonical_adjust

__all__ = ["canonical_df", "random_intercept_problem", "canonical_adjust", "note_df_rule", "footer",
           "warn_few_levels", "bootstrap_lrt"]
