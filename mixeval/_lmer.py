"""``mixeval.lmer``: one call for every kind of source.

A pandas DataFrame is fitted by the engine (:func:`mixeval.mixed.lmer`); a Parquet path or glob, an
Arrow table, a DuckDB relation or a Spark DataFrame is fitted from aggregates computed where the data
live (:func:`mixeval.scale.lmer_aggregate`). The dispatch lives here, above both, so that the engine
(:mod:`mixeval.mixed`) imports nothing from the packages built on it.
"""

from __future__ import annotations

import functools
from typing import Any

import pandas as pd

from .mixed import LmerResult
from .mixed import lmer as _lmer_frame
from .scale import is_aggregate_source, lmer_aggregate

__all__ = ["lmer"]


@functools.wraps(_lmer_frame, assigned=("__doc__",))
def lmer(formula: str, data: Any, *, REML: bool = True, drop_missing: bool = False) -> LmerResult:
    if not isinstance(data, pd.DataFrame) and is_aggregate_source(data):
        from ._validation import require_bool

        return lmer_aggregate(formula, data, REML=require_bool(REML, "REML"))
    return _lmer_frame(formula, data, REML=REML, drop_missing=drop_missing)
