"""``mixeval.lmer`` and ``mixeval.glmer``: one call for every family and every kind of source.

A pandas DataFrame is fitted by the engine (:mod:`mixeval.mixed`); a Parquet path or glob, an Arrow
table, a DuckDB relation or a Spark DataFrame is fitted from aggregates computed where the data live
(:mod:`mixeval.scale`: sufficient statistics for Gaussian models, successes and trials per cell for
binomial ones). :func:`fit_model` chooses the entry by family, so that a Study, the CLI and the report
fit every family through the same call. The dispatch lives here, above both, so that the engine
imports nothing from the packages built on it.
"""

from __future__ import annotations

import functools
from typing import Any

import pandas as pd

from ._validation import require_bool
from .errors import InputError
from .mixed import LmerResult, MixedResult
from .mixed import glmer as _glmer_frame
from .mixed import lmer as _lmer_frame
from .mixed._family import Family, get_family
from .scale import glmer_aggregate, is_aggregate_source, lmer_aggregate

__all__ = ["lmer", "glmer", "fit_model"]


def _is_source(data: Any) -> bool:
    return not isinstance(data, pd.DataFrame) and is_aggregate_source(data)


@functools.wraps(_lmer_frame, assigned=("__doc__",))
def lmer(formula: str, data: Any, *, REML: bool = True, drop_missing: bool = False, weights: Any = None) -> LmerResult:
    if _is_source(data):
        if weights is not None:
            raise InputError("weights= needs the rows: sources fitted from aggregates (DuckDB, Spark, Parquet) take "
                             "unweighted Gaussian models. Load the rows into a pandas DataFrame to fit weights.")
        if drop_missing:
            raise InputError("drop_missing= needs the rows; filter missing values in the query engine instead.")
        return lmer_aggregate(formula, data, REML=require_bool(REML, "REML"))
    return _lmer_frame(formula, data, REML=REML, drop_missing=drop_missing, weights=weights)


@functools.wraps(_glmer_frame, assigned=("__doc__",))
def glmer(formula: str, data: Any, *, family: str | Family = "binomial", link: str | None = None, nAGQ: int = 1,
          weights: Any = None, drop_missing: bool = False, REML: bool = False) -> MixedResult:
    if _is_source(data):
        if weights is not None:
            raise InputError("weights= is not taken by sources fitted from aggregates: a binary response's cells carry "
                             "their trials themselves. Load the rows into a pandas DataFrame to fit prior weights.")
        if drop_missing:
            raise InputError("drop_missing= needs the rows; filter missing values in the query engine instead.")
        return glmer_aggregate(formula, data, family=family, link=link, nAGQ=nAGQ, REML=require_bool(REML, "REML"))
    return _glmer_frame(formula, data, family=family, link=link, nAGQ=nAGQ, weights=weights,
                        drop_missing=drop_missing, REML=REML)


def fit_model(formula: str, data: Any, *, family: str | Family | None = None, link: str | None = None,
              REML: bool = True, weights: Any = None, drop_missing: bool = False, levels: Any = None) -> MixedResult:
    """Fit ``formula`` with the family's entry point: :func:`lmer` for the Gaussian family (also ``None``),
    :func:`glmer` for binomial and Poisson, :func:`mixeval.clmm` for ordinal ratings (maximum likelihood; a
    pandas DataFrame; ``levels`` the categories in order); every source each of them takes.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"item": np.repeat(np.arange(30), 4), "system": np.tile(["A", "B"], 60)})
    >>> df["y"] = rng.normal(size=30)[df.item] + rng.normal(size=120)
    >>> df["correct"] = (df.y > 0).astype(int)
    >>> [type(fit_model(f, df, family=fam)).__name__ for f, fam in
    ...  [("y ~ system + (1|item)", None), ("correct ~ system + (1|item)", "binomial")]]
    ['LmerResult', 'GlmerResult']
    """
    if family is not None and str(family).lower() == "ordinal":
        return _fit_ordinal(formula, data, link=link, REML=REML, weights=weights, drop_missing=drop_missing,
                            levels=levels)
    if levels is not None:
        raise InputError("levels= orders the categories of ordinal ratings; it needs family='ordinal'.")
    fam = get_family("gaussian" if family is None else family, link)
    if fam.name == "gaussian":
        return lmer(formula, data, REML=REML, weights=weights, drop_missing=drop_missing)
    return glmer(formula, data, family=fam, weights=weights, drop_missing=drop_missing, REML=REML)


def _fit_ordinal(formula: str, data: Any, *, link: str | None, REML: bool, weights: Any, drop_missing: bool,
                 levels: Any = None):
    """The cumulative link mixed model of ordinal ratings, refusing what it cannot take by name."""
    from .mixed import clmm

    if REML:
        raise InputError("ordinal models are fitted by maximum likelihood (as ordinal::clmm); there is no REML "
                         "criterion for them: use reml=False (the default of an ordinal Study).")
    if weights is not None:
        raise InputError("weights= is not available for ordinal models (ordinal::clmm's weights are frequency "
                         "weights; repeat the rows instead).")
    if _is_source(data):
        raise InputError("ordinal models need the rows in memory (a pandas DataFrame); sources fitted from "
                         "aggregates (DuckDB, Spark, Parquet) take Gaussian and binomial models.")
    return clmm(formula, data, link=link or "logit", drop_missing=drop_missing, levels=levels)
