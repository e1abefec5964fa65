"""``lmer``: the public call that chains the stages of a fit."""

from __future__ import annotations

import functools
import warnings
from typing import Any

import pandas as pd
from threadpoolctl import ThreadpoolController

from ..errors import ConvergenceWarning, SingularFitWarning
from ._deviance import deviance_parts
from ._design import Design, build_design, complete_rows
from ._family import warn_discrete_response
from ._optimize import SINGULAR_TOL, optimize_theta
from ._result import LmerResult, make_result
from ._stats import SufficientStats, compute_stats

__all__ = ["lmer", "fit_from_stats"]


@functools.lru_cache(maxsize=1)
def _controller() -> ThreadpoolController:
    return ThreadpoolController()  # inspects the loaded BLAS libraries once


def single_threaded_blas():
    """Context manager: BLAS on one thread. The engine's dense systems are small (tens to a few hundred
    rows), where multi-threaded BLAS only adds overhead, and under load thread oversubscription makes a
    200 x 200 Cholesky factorisation 100 times slower."""
    return _controller().limit(limits=1, user_api="blas")


def fit_from_stats(design: Design, stats: SufficientStats, *, reml: bool, data: Any = None, warn: bool = True) -> LmerResult:
    """Optimise, check and assemble a fit from precomputed sufficient statistics."""
    with single_threaded_blas():
        opt = optimize_theta(stats, reml)
        parts = deviance_parts(stats, opt.theta, reml)
        result = make_result(design, stats, opt, parts, data)
    if warn:
        check_fit(result)
    return result


def check_fit(result: LmerResult) -> None:
    """Warn on singular (boundary) fits and on non-convergence (lme4's ``checkConv``)."""
    if result.singular:
        zero = [g for g, t in zip(result.group_names, result.theta) if t < SINGULAR_TOL]
        warnings.warn(
            f"boundary (singular) fit: the variance of {', '.join(repr(z) for z in zero)} is estimated as "
            "(numerically) zero. This is a valid estimate, not a failure; the component can be dropped "
            "without changing the fit.",
            SingularFitWarning,
            stacklevel=3,
        )
    if not result.converged:
        warnings.warn(
            "the optimiser did not meet its convergence criterion (projected gradient of the deviance "
            "not ~0); treat the estimates with care and check the model specification.",
            ConvergenceWarning,
            stacklevel=3,
        )


def lmer(formula: str, data: pd.DataFrame, *, REML: bool = True, drop_missing: bool = False) -> LmerResult:
    """Fit a linear mixed-effects model with lme4 formula syntax.

    Parameters
    ----------
    formula : str
        ``"score ~ system + (1|item) + (1|rater:item) + (1|site/rater)"``: fixed effects in
        formulaic/Wilkinson syntax, random intercepts for any number of crossed or nested grouping
        factors. A formula without random terms fits the linear model (R's ``lm``).
    data : pandas.DataFrame, or a Parquet path/glob, Arrow table, DuckDB relation or Spark DataFrame
        Long-format data (one row per observation); never modified. Sources other than a DataFrame are
        fitted from aggregates computed by DuckDB or Spark (:func:`mixeval.scale.lmer_aggregate`: random
        intercepts and categorical/numeric fixed effects; ``fitted`` and ``residuals`` are then None).
    REML : bool, default True
        Restricted maximum likelihood (lme4's default) or maximum likelihood (``REML=False``).
    drop_missing : bool, default False
        Drop rows with missing values in the used columns (warning with their number) instead of
        raising an error. Nothing is ever dropped silently.

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

    and are minimised over ``theta >= 0``. Everything is computed from the sufficient statistics
    ``Z'Z``, ``Z'[X y]``, ``[X y]'[X y]``, so each evaluation is independent of the number of rows.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(1)
    >>> item = np.repeat(np.arange(30), 4)
    >>> df = pd.DataFrame({"item": item, "system": np.tile(["A", "B"], 60)})
    >>> df["score"] = rng.normal(size=30)[item] + (df.system == "B") * 0.5 + rng.normal(0, 0.5, 120)
    >>> fit = lmer("score ~ system + (1|item)", df)
    >>> list(fit.varcorr.group)
    ['item', 'Residual']
    """
    if not isinstance(data, pd.DataFrame):
        from ..scale import is_aggregate_source, lmer_aggregate

        if is_aggregate_source(data):
            return lmer_aggregate(formula, data, REML=bool(REML))
    if drop_missing:
        data = complete_rows(formula, data)  # warns with the number of rows dropped
    design = build_design(formula, data)
    warn_discrete_response(design.y, design.parsed.response)  # 0/1 or small counts: name the family= to use
    stats = compute_stats(design)
    return fit_from_stats(design, stats, reml=bool(REML), data=design.data)
