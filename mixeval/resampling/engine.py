"""The resampling engine's building blocks for the packages built on it: bootstrap counts drawn in chunks, the
chunk sizes that bound memory, and the p-value helpers of the tests.

:mod:`mixeval.resampling` exports the tests and intervals a user calls (and :func:`~mixeval.resampling.as_generator`,
:func:`~mixeval.resampling.percentile_interval`); this module exports what other packages of mixeval build their
own resampling procedures from, so that none reaches into the private modules.

Examples
--------
>>> from mixeval.resampling import engine
>>> sorted(engine.__all__)
['bootstrap_counts', 'check_alternative', 'chunk_sizes', 'count_extreme']
"""

from ._common import check_alternative, count_extreme
from ._engine import bootstrap_counts, chunk_sizes

__all__ = ["bootstrap_counts", "chunk_sizes", "check_alternative", "count_extreme"]
