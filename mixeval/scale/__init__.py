"""Evaluation logs beyond memory: fits and resampling tests computed by a query engine.

The expensive inputs of a random-intercept linear mixed model are sufficient
statistics (counts and sums per factor level and per pair of levels), so a query
engine can compute them where the data live; only these aggregates come back to
Python. Sources: Parquet files or globs, Arrow tables and DuckDB relations (run by
DuckDB, the embedded default) and Spark DataFrames (run by Spark SQL; optional
``pyspark``).

* :func:`lmer_aggregate`: the same fit as :func:`mixeval.lmer` from aggregates;
* :func:`aggregate_stats`: the design and sufficient statistics alone;
* :func:`glmer_aggregate`: a binomial GLMM of a 0/1 response from successes and trials per cell;
* :func:`poisson_bootstrap_paired`: a paired Poisson bootstrap of a mean difference
  computed inside the engine with hash-based, seeded weights;
* :func:`poisson_weights`: the same weights in numpy (for checks and in-memory use).
"""

from ._aggregate import SUPPORTED_MODELS, AggregateDesign, aggregate_stats, lmer_aggregate
from ._bootstrap import poisson_bootstrap_paired, poisson_weights
from ._glmm_aggregate import binary_cells, glmer_aggregate
from ._sources import as_engine, is_aggregate_source

__all__ = [
    "lmer_aggregate",
    "glmer_aggregate",
    "binary_cells",
    "aggregate_stats",
    "AggregateDesign",
    "SUPPORTED_MODELS",
    "poisson_bootstrap_paired",
    "poisson_weights",
    "as_engine",
    "is_aggregate_source",
]
