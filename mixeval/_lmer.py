"""``mixeval.fit``, ``mixeval.lmer`` and ``mixeval.glmer``: one call for every family and every kind of source.

A pandas DataFrame is fitted by the engine (:mod:`mixeval.mixed`); a Parquet path or glob, an Arrow
table, a DuckDB relation or a Spark DataFrame is fitted from aggregates computed where the data live
(:mod:`mixeval.scale`: sufficient statistics for Gaussian models, successes and trials per cell for
binomial ones). :func:`fit` is the one public door: the family (from the registry,
:mod:`mixeval.mixed.families`) names the fit that serves it (``lmer``, ``glmer`` or ``clmm``) and what it
supports, so that a Study, the CLI and the report fit every family through the same call. The dispatch
lives here, above both, so that the engine imports nothing from the packages built on it.
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
from .mixed.families import Family, get_family
from .scale import glmer_aggregate, is_aggregate_source, lmer_aggregate

__all__ = ["fit", "lmer", "glmer", "fit_model"]


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
        fam = get_family(family, link)
        if not fam.support.aggregate_sources:
            raise fam.support.refusal(fam.name, "aggregate_sources (DuckDB, Spark, Parquet, Arrow); load the rows "
                                                "into a pandas DataFrame")
        if weights is not None:
            raise InputError("weights= is not taken by sources fitted from aggregates: a binary response's cells carry "
                             "their trials themselves. Load the rows into a pandas DataFrame to fit prior weights.")
        if drop_missing:
            raise InputError("drop_missing= needs the rows; filter missing values in the query engine instead.")
        return glmer_aggregate(formula, data, family=family, link=link, nAGQ=nAGQ, REML=require_bool(REML, "REML"))
    return _glmer_frame(formula, data, family=family, link=link, nAGQ=nAGQ, weights=weights,
                        drop_missing=drop_missing, REML=REML)


def fit(formula: str, data: Any, *, family: str | Family = "gaussian", link: str | None = None,
        REML: bool | None = None, weights: Any = None, nAGQ: int = 1, drop_missing: bool = False,
        **options: Any) -> MixedResult:
    """Fit a mixed model of any family: the one door behind :func:`lmer`, :func:`glmer` and :func:`mixeval.clmm`.

    Parameters
    ----------
    formula : str
        lme4 formula, e.g. ``"score ~ system + (1|item) + (1|system:seed)"``.
    data : pandas.DataFrame, or a Parquet path/glob, Arrow table, DuckDB relation or Spark DataFrame
        Long-format data; sources other than a DataFrame are fitted from aggregates where the family supports
        it (Gaussian, binomial: ``family.support.aggregate_sources``).
    family : str or Family, default "gaussian"
        A name from the registry (:func:`mixeval.mixed.families.family_names`; glmmTMB's names too):
        ``"gaussian"`` (lmer), ``"binomial"``, ``"poisson"``, ``"negative_binomial"`` (``nbinom2``), ``"beta"``
        (``beta_family``), ``"ordered_beta"`` (``ordbeta``), ``"beta_binomial"`` (``betabinomial``), all by
        :func:`glmer`'s Laplace approximation, or ``"ordinal"`` (:func:`mixeval.clmm`).
    link : str, optional
        The family's link (its default when None).
    REML : bool, optional
        Restricted likelihood; default the family's engine's (lmer: True, as lme4; glmer: False, as lme4's
        glmer and glmmTMB; an ordinal model has none and refuses True).
    weights : str or array-like, optional
        What ``weights`` means is the family's (``family.support.weights``): precision weights of a Gaussian
        score, the trials of a binomial or beta-binomial proportion, glmmTMB's prior weights (each row's
        log-likelihood counted ``w`` times) for the other GLMMs; refused for ordinal ratings.
    nAGQ : int, default 1
        Laplace (1), adaptive quadrature (> 1, where the family supports it), or lme4's ``nAGQ = 0``.
    drop_missing : bool, default False
        Drop rows with missing values in the used columns (with a warning) instead of raising.
    **options
        Options of the ordinal fit (:func:`mixeval.clmm`: ``threshold``, ``levels``, ``nominal``,
        ``random_thresholds``); refused for the other families.

    Returns
    -------
    MixedResult
        ``LmerResult``, ``GlmerResult`` (with ``dispersion`` and ``family_parameters`` where the family has
        them) or ``ClmmResult``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import mixeval
    >>> rng = np.random.default_rng(1)
    >>> df = pd.DataFrame({"item": np.repeat(np.arange(40), 6), "system": np.tile(list("AB"), 120)})
    >>> mu = np.exp(0.8 + 0.3 * (df.system == "B") + rng.normal(0, 0.5, 40)[df.item])
    >>> df["errors"] = rng.negative_binomial(2.0, 2.0 / (2.0 + mu))
    >>> nb = mixeval.fit("errors ~ system + (1|item)", df, family="negative_binomial")
    >>> type(nb).__name__, nb.family.name, bool(1.0 < nb.dispersion < 4.0)
    ('GlmerResult', 'negative_binomial', True)
    """
    fam = get_family(family, link)
    unused = sorted(options) if fam.engine != "clmm" else []
    if unused:
        raise InputError(f"{', '.join(unused)}: option(s) of ordinal models (mixeval.clmm), not of family="
                         f"{fam.name!r}; drop them.")
    if fam.engine == "lmer":
        if nAGQ != 1:
            raise InputError(f"nAGQ={nAGQ!r} applies to GLMMs and ordinal models; a Gaussian model's likelihood is "
                             "exact (lmer).")
        return lmer(formula, data, REML=True if REML is None else REML, weights=weights, drop_missing=drop_missing)
    if fam.engine == "clmm":
        if REML:
            raise InputError("ordinal models are fitted by maximum likelihood (as ordinal::clmm); there is no REML "
                             "criterion for them: use REML=False (the default of an ordinal fit).")
        if weights is not None:
            raise InputError("weights= is not available for ordinal models (ordinal::clmm's weights are frequency "
                             "weights; repeat the rows instead).")
        if _is_source(data):
            raise fam.support.refusal(fam.name, "aggregate_sources (DuckDB, Spark, Parquet, Arrow); load the "
                                                "rows into a pandas DataFrame")
        from .mixed import clmm

        return clmm(formula, data, link=fam.link, nAGQ=nAGQ, drop_missing=drop_missing, **options)
    return glmer(formula, data, family=fam, nAGQ=nAGQ, weights=weights, drop_missing=drop_missing,
                 REML=False if REML is None else REML)


def fit_model(formula: str, data: Any, *, family: str | Family | None = None, link: str | None = None,
              REML: bool = True, weights: Any = None, drop_missing: bool = False) -> MixedResult:
    """Fit ``formula`` with the family's entry point (:func:`fit`): :func:`lmer` for the Gaussian family (also
    ``None``), :func:`glmer` for the GLMM families, :func:`mixeval.clmm` for ordinal ratings (maximum likelihood; a
    pandas DataFrame); every source each of them takes.

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
    return fit(formula, data, family="gaussian" if family is None else family, link=link, REML=REML,
               weights=weights, drop_missing=drop_missing)
