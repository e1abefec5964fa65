"""``glmer``: the public call that chains the stages of a generalised linear mixed model fit (lme4's
``glFormula -> mkGlmerDevfun -> optimizeGlmer -> mkMerMod``): :func:`~._design.build_design`,
:func:`~._glmm.glmm_problem`, :func:`~._glmm.optimize_glmm`, :func:`~._glmm_result.fit_glmm`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..errors import InputError, InputTypeError
from ._design import build_design, weights_array
from ._family import Family, get_family
from ._fit import lmer
from ._glmm_result import GlmerResult, fit_glmm

if TYPE_CHECKING:
    from ._result import LmerResult

__all__ = ["glmer"]


def _prepare_response(data: pd.DataFrame, response: str, family: Family) -> pd.DataFrame:
    """Logical responses become 0/1 floats (on a copy); a binomial factor response is 0 at its first level and 1
    at the others (R's binomial family), a text column with two values likewise (sorted: the first is 0)."""
    if response not in data.columns:
        return data
    column = data[response]
    if pd.api.types.is_bool_dtype(column):
        return data.assign(**{response: column.astype(float)})
    if family.name != "binomial" or pd.api.types.is_numeric_dtype(column):
        return data
    if isinstance(column.dtype, pd.CategoricalDtype):
        first = column.cat.remove_unused_categories().cat.categories[0]
    else:
        values = sorted(set(column.dropna().astype(str)))
        if len(values) != 2:
            raise InputError(f"the binomial response {response!r} is text with {len(values)} distinct values; give "
                             "0/1, logical, a factor (its first level is failure, as R), or text with two values.")
        first = values[0]
        column = column.astype(str).where(column.notna())
    return data.assign(**{response: (column != first).astype(float).where(column.notna())})


def glmer(formula: str, data: pd.DataFrame, *, family: str | Family = "binomial", link: str | None = None,
          nAGQ: int = 1, weights: Any = None, drop_missing: bool = False, REML: bool = False) -> GlmerResult | LmerResult:
    """Fit a generalised linear mixed model (lme4's ``glmer``).

    Parameters
    ----------
    formula : str
        lme4 formula, e.g. ``"correct ~ system + (1|item) + (1|seed)"``; the same random-effects terms
        as :func:`~mixeval.lmer`.
    data : pandas.DataFrame
        Long-format data, one row per observation; never modified.
    family : str or Family
        A family of the registry (:mod:`mixeval.mixed.families`). ``"binomial"``: the response is 0/1, logical,
        or a proportion with ``weights=`` the number of trials (R's ``cbind(successes, failures)``).
        ``"poisson"``: counts. glmmTMB's families, fitted by its criterion (the Laplace approximation with the
        family's parameters estimated jointly with the variance parameters): ``"negative_binomial"`` (``nbinom2``:
        overdispersed counts), ``"beta"`` (``beta_family``: proportions strictly inside (0, 1)),
        ``"ordered_beta"`` (``ordbeta``: proportions in [0, 1] with exact 0s and 1s), ``"beta_binomial"``
        (``betabinomial``: successes out of ``weights=`` trials).
    link : str, optional
        Link function; the family's default (canonical) link by default.
    nAGQ : int, default 1
        1: Laplace approximation; > 1: adaptive Gauss-Hermite quadrature with that many nodes (a single
        scalar random-effects term only); 0: the faster, less exact criterion with beta from PIRLS.
    weights : str or array-like, optional
        Prior weights: a column name or values; the number of trials of each row for binomial and beta-binomial
        proportions, glmmTMB's weights (each row's log-likelihood counted ``w`` times) for the other families.
    drop_missing : bool, default False
        Drop rows with missing values in the used columns (warning with their number) instead of raising;
        ``weights`` must then be a column name.
    REML : bool, default False
        False: maximum likelihood, as lme4's glmer. True: the variance components minimise the restricted
        Laplace criterion (glmmTMB's ``REML = TRUE``), which does not bias them downwards for the fixed effects
        estimated from the same data (with 5 seeds the ML seed variance is about 20% too small, and intervals
        of marginal means too narrow); the fixed effects are the Laplace deviance's mode at those components
        (glmmTMB reports the joint mode of random and fixed effects, which is biased towards 0 for binary
        data); likelihood-ratio tests refit by ML.

    Returns
    -------
    GlmerResult or LmerResult
        An :class:`~mixeval.mixed.LmerResult` for ``family="gaussian"`` (as lme4's ``glmer``), else with
        ``dispersion`` (glmmTMB's ``sigma()``: 1 for binomial and Poisson) and ``family_parameters``.

    Warns
    -----
    SeparationWarning, SingularFitWarning, ConvergenceWarning

    Notes
    -----
    ``y_i | b ~ F(mu_i)``, ``g(mu_i) = x_i' beta + z_i' b``, ``b = Lambda u``, ``u ~ N(0, I)``. For given
    ``theta`` and ``beta``, PIRLS finds the mode ``u*`` of ``-2 log p(y | u) + ||u||^2`` and the Laplace
    approximation of the deviance is ``-2 log p(y | u*) + ||u*||^2 + log|L|^2`` with ``L L' = Lambda' Z' W Z
    Lambda + I`` (Bates et al. 2015; lme4's ``glmerLaplace``). The REML criterion integrates ``beta`` (flat
    prior) with ``u``: at the joint mode ``(u*, beta*)`` it adds ``log|R_X|^2``, ``R_X' R_X = X'WX -
    X'WZ Lambda (Lambda'Z'WZ Lambda + I)^-1 Lambda'Z'WX``; for a Gaussian response it is lmer's REML. As lme4,
    theta is first optimised with beta from PIRLS, then (theta, beta) jointly. With scalar random-effects
    terms (random intercepts, ``(0 + x|g)``) both ML stages use the analytic gradient of the Laplace deviance
    (envelope theorem at the conditional modes plus the derivative of ``log|L|^2`` through the weights; see
    ``mixed/_pirls.laplace_gradient``). Fixed-effect standard errors come from the Hessian of the deviance
    over (theta, beta) as lme4's ``vcov`` (central differences of the analytic gradient, or of the deviance
    for vector-valued terms and ``nAGQ > 1``; the RX-based matrix if that is not positive definite); z tests
    are Wald tests.

    Examples
    --------
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=40, systems=("A", "B"), n_raters=2, response="correct")
    >>> fit = glmer("correct ~ system + (1|item)", df, family="binomial")
    >>> list(fit.fixef.index)
    ['(Intercept)', 'systemB']
    """
    fam = get_family(family, link)
    if isinstance(nAGQ, bool) or not isinstance(nAGQ, (int, np.integer, float)) or nAGQ != int(nAGQ) \
            or not 0 <= nAGQ <= 100:
        raise InputError(f"nAGQ must be a whole number between 0 and 100 (1: Laplace, > 1: adaptive quadrature "
                         f"nodes); got {nAGQ!r}.")
    n_agq = int(nAGQ)
    if fam.name == "gaussian":  # as lme4's glmer(family = gaussian): the linear mixed model
        if n_agq != 1:
            raise InputError(f"nAGQ={nAGQ!r} applies to binomial and Poisson models; a Gaussian model's likelihood "
                             "is exact (lmer).")
        return lmer(formula, data, REML=REML, drop_missing=drop_missing, weights=weights)
    if not isinstance(data, pd.DataFrame):
        raise InputError("glmer() takes a pandas DataFrame; for Parquet, DuckDB or Spark sources of a binary "
                         "response use mixeval.scale.glmer_aggregate.")
    from ..formula import parse_formula

    parsed = parse_formula(formula)
    if not parsed.random:
        raise InputError(f"the formula {formula!r} has no random-effects term; glmer needs at least one, e.g. (1|item).")
    if drop_missing:
        if weights is not None and not isinstance(weights, str):
            raise InputError("drop_missing=True needs weights= as a column name (so that it follows the kept rows).")
        from ._design import complete_rows

        data = complete_rows(parsed, data)  # warns with the number of rows dropped
    if parsed.response_is_column:
        data = _prepare_response(data, parsed.response, fam)
    design = build_design(parsed, data, allow_n=True)
    w = weights_array(weights, design.data, design.nobs)
    if design.trials is not None:
        if fam.support.weights != "trials":
            raise InputError(f"cbind(successes, failures) is the response of a model of successes out of trials "
                             f"(binomial, beta_binomial); family={fam.name!r} takes one response column.")
        w = w * design.trials  # R's binomial: prior weights times the trials successes + failures
    if not isinstance(REML, (bool, np.bool_)):
        raise InputTypeError(f"REML must be True or False; got {REML!r}.")
    return fit_glmm(design, fam, w, n_agq=n_agq, data=design.data, reml=bool(REML))
