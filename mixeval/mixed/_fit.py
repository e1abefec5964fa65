"""``lmer``: the public call that chains the stages of a fit."""

from __future__ import annotations

from typing import Any

import pandas as pd

from .._validation import require_bool
from ..errors import InputError, InputTypeError
from ._design import build_design, complete_rows, weights_array
from ._family import warn_discrete_response
from ._result import LmerResult, check_fit, design_stats, fit_design, fit_from_stats

__all__ = ["lmer", "fit_from_stats", "fit_design", "design_stats", "check_fit"]


def lmer(formula: str, data: pd.DataFrame, *, REML: bool = True, drop_missing: bool = False,
         weights: Any = None) -> LmerResult:
    """Fit a linear mixed-effects model with lme4 formula syntax.

    Parameters
    ----------
    formula : str
        ``"score ~ system + (1|item) + (1|rater:item) + (1|site/rater)"``: fixed effects in
        formulaic/Wilkinson syntax, random intercepts for any number of crossed or nested grouping
        factors, random slopes as lme4 writes them (``(1 + x | g)``, ``(x | g)``, ``(0 + x | g)``,
        uncorrelated ``(1 + x || g)``, factor slopes ``(1 + system | item)``). A formula without random
        terms fits the linear model (R's ``lm``).
    data : pandas.DataFrame, or (through :func:`mixeval.lmer` only) a Parquet path/glob, Arrow table, DuckDB relation or Spark DataFrame
        Long-format data (one row per observation); never modified. ``mixeval.lmer`` fits sources other
        than a DataFrame from aggregates computed by DuckDB or Spark (:func:`mixeval.scale.lmer_aggregate`:
        random intercepts and categorical/numeric fixed effects; ``fitted`` and ``residuals`` are then
        None); the engine's own ``mixeval.mixed.lmer`` takes DataFrames.
    REML : bool, default True
        Restricted maximum likelihood (lme4's default) or maximum likelihood (``REML=False``).
    drop_missing : bool, default False
        Drop rows with missing values in the used columns (warning with their number) instead of
        raising an error. Nothing is ever dropped silently.
    weights : str or array-like, optional
        Prior weights (lme4's ``weights``): a column name or one value > 0 per row; row ``i`` has residual
        variance ``sigma^2 / w_i`` (e.g. a score that is the mean of ``w_i`` judgements). Weighted fits use the
        general evaluator on the rows scaled by ``sqrt(w)``; the log-likelihood is that of the data as given
        (``+ sum(log w) / 2``, as lme4's).

    Returns
    -------
    LmerResult
        Frozen result: ``varcorr``, ``fixef``, ``coefficients``, ``ranef``, ``loglik``, ...

    Warns
    -----
    SingularFitWarning
        A variance component is estimated at 0 (reported as such, not an error).
    ConvergenceWarning
        The optimiser stopped without meeting its criterion.

    Notes
    -----
    The model is ``y = X beta + Z b + e`` with ``b ~ N(0, sigma^2 Lambda Lambda')``,
    ``e ~ N(0, sigma^2 I)``; for random intercepts ``Lambda`` is diagonal with ``theta_k``
    repeated over the levels of group ``k`` (so ``Var(b_k) = sigma^2 theta_k^2``). With
    ``A = Lambda Z'Z Lambda + I`` and the penalised residual sum of squares ``r^2(theta)``,
    the profiled criteria (Bates et al. 2015, Eqs. 34 and 41) are

    ``ML:   -2 l(theta) = log|A| + n (1 + log(2 pi r^2 / n))``

    ``REML: -2 l_R(theta) = log|A| + log|R_X|^2 + (n - p)(1 + log(2 pi r^2 / (n - p)))``

    and are minimised over ``theta >= lower`` (lme4's theta: per term the lower triangle of the relative
    covariance factor ``Lambda_k``, diagonal >= 0). Everything is computed from the sufficient statistics
    ``Z'Z``, ``Z'[X y]``, ``[X y]'[X y]``, so each evaluation is independent of the number of rows; models
    with random slopes use the general evaluator (:mod:`._general`). The fit runs on a centred and scaled
    copy of the data and maps back (:mod:`._scaling`): the estimates do not depend on the response's or a
    covariate's location or units, and ``loglik`` is the one of the data as given (as lme4's).

    Examples
    --------
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=30, systems=("A", "B"), n_raters=2)
    >>> fit = lmer("score ~ system + (1|item)", df)
    >>> list(fit.varcorr.group)
    ['item', 'Residual']
    """
    reml = require_bool(REML, "REML")
    if not isinstance(data, pd.DataFrame):
        raise InputTypeError(
            f"`data` must be a pandas DataFrame in long format (one row per observation); got "
            f"{type(data).__name__}. For Parquet files, Arrow tables, DuckDB relations or Spark DataFrames "
            "call mixeval.lmer, which fits them from aggregates (mixeval.scale.lmer_aggregate)."
        )
    if drop_missing:
        if weights is not None and not isinstance(weights, str):
            raise InputError("drop_missing=True needs weights= as a column name (so that it follows the kept rows).")
        data = complete_rows(formula, data)  # warns with the number of rows dropped
    design = build_design(formula, data)
    if design.trials is not None:
        raise InputError(f"the response {design.parsed.response} is glmer's binomial response (successes, failures); "
                         "fit it with mixeval.glmer(..., family='binomial').")
    w = None if weights is None else weights_array(weights, design.data, design.nobs, positive=True)
    warn_discrete_response(design.y, design.parsed.response)  # 0/1 or small counts: name the family= to use
    return fit_design(design, reml=reml, data=design.data, weights=w)
