"""Likelihood-ratio tests of nested linear mixed models (lme4's ``anova(m0, m1)``)."""

from __future__ import annotations

from math import comb

import numpy as np
from scipy import stats as sps

from .._results import TestResult
from ..errors import InputTypeError, ModelComparisonError
from ._base import MixedResult

__all__ = ["compare", "boundary_mixture_pvalue"]


def _spans(X_big: np.ndarray, X_small: np.ndarray) -> bool:
    """True if every column of ``X_small`` lies in the column space of ``X_big``."""
    if X_small.shape[1] == 0:
        return True
    if X_big.shape[1] == 0:
        return False
    coef, *_ = np.linalg.lstsq(X_big, X_small, rcond=None)
    resid = X_small - X_big @ coef
    return bool(np.linalg.norm(resid) <= 1e-8 * max(1.0, float(np.linalg.norm(X_small))))


def _fixed_nested(big: MixedResult, small: MixedResult) -> bool:
    """The fixed effects of ``small`` lie in the span of those of ``big``.

    Fits from aggregates (``mixeval.scale``) have no model matrix; for them nesting is judged
    by the coefficient names (every column of ``small`` is a column of ``big``).
    """
    if big.design.X is None or small.design.X is None or big.design.X.shape[0] != small.design.X.shape[0]:
        # (aggregate GLMM fits: cells of different models differ; both are fitted to the same rows)
        return set(small.fixed_names) <= set(big.fixed_names)
    return _spans(big.design.X, small.design.X)


def _check_same_rows(a: MixedResult, b: MixedResult) -> None:
    if a.nobs != b.nobs or a.design.row_key != b.design.row_key:
        raise ModelComparisonError(
            f"the two models were fitted to different rows ({a.nobs} vs {b.nobs} observations, or different "
            "response values); a likelihood-ratio test needs both fitted to the same data."
        )


def _check_nested(full: MixedResult, null: MixedResult) -> None:
    missing = [g for g in null.group_names if g not in full.group_names]
    if missing:
        raise ModelComparisonError(
            f"models are not nested: the smaller model {null.formula!r} has random term(s) "
            f"{', '.join(missing)} that {full.formula!r} lacks."
        )
    if not _fixed_nested(full, null):
        raise ModelComparisonError(
            f"models are not nested: the fixed effects of {null.formula!r} are not contained in those of "
            f"{full.formula!r}."
        )


def _check_same_family(a, b) -> None:
    """Both fits Gaussian, or both GLMMs of the same family, link, quadrature and prior weights."""
    kinds = [(m.family.name, m.link, m.approximation) for m in (a, b)]
    if kinds[0] != kinds[1]:
        raise ModelComparisonError(
            f"the two models differ in family, link or nAGQ ({kinds[0]} vs {kinds[1]}); a likelihood-ratio test "
            "needs both fitted with the same response distribution and the same likelihood approximation."
        )
    weights = [m.weights for m in (a, b)]
    per_row = all(w is not None and m.nobs == len(w) for m, w in zip((a, b), weights))  # not cells (mixeval.scale)
    if (weights[0] is None) != (weights[1] is None) or (per_row and not np.array_equal(*weights)):
        raise ModelComparisonError("the two models were fitted with different weights; refit both with the same weights.")


def boundary_mixture_pvalue(statistic: float, n_components: int) -> float:
    """p-value of a LRT for ``n_components`` variance components on the boundary (Self & Liang 1987).

    Under H0 the statistic follows the mixture ``sum_j C(d, j) 2^-d chi2_j`` (``chi2_0`` a point
    mass at 0) for ``d`` independent random intercepts tested against 0.

    Examples
    --------
    >>> round(boundary_mixture_pvalue(2.705543, 1), 4)  # half the naive chi2_1 p-value
    0.05
    """
    d = int(n_components)
    if statistic <= 0:
        return 1.0
    return float(sum(comb(d, j) * sps.chi2.sf(statistic, j) for j in range(1, d + 1)) / 2**d)


def compare(model_a: MixedResult, model_b: MixedResult, *, refit: bool = True) -> TestResult:
    """Likelihood-ratio test of two nested fits (lme4's ``anova``).

    Parameters
    ----------
    model_a, model_b : MixedResult
        Two fits to the same rows, one nested in the other (either order).
    refit : bool, default True
        Refit REML fits by maximum likelihood first, as lme4's ``anova`` does. With ``refit=False``
        REML fits are compared on the REML likelihood, valid only when the fixed effects are the
        same (tests of variance components, ``anova(..., refit = FALSE)``).

    Returns
    -------
    TestResult
        ``statistic`` (``2 (l_full - l_null)``), ``df`` (difference in parameters), ``pvalue``
        (chi-square). When the models differ only in variance components, ``details`` also holds
        ``pvalue_boundary``, the Self-Liang chi-square mixture p-value, beside the naive one (random intercepts
        only).

    Raises
    ------
    ModelComparisonError
        Models fitted to different rows, not nested, or REML fits with different fixed effects
        compared with ``refit=False``.

    Notes
    -----
    Wilks: ``W = 2 (l_1 - l_0) ~ chi2(k_1 - k_0)`` under H0 when no parameter lies on the
    boundary of its space; for variance components tested against 0 the reference distribution is
    a chi-square mixture and the naive p-value is conservative.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import lmer
    >>> rng = np.random.default_rng(0)
    >>> g = np.repeat(np.arange(20), 6)
    >>> df = pd.DataFrame({"g": g, "s": np.tile(["A", "B", "C"], 40)})
    >>> df["y"] = rng.normal(size=20)[g] + rng.normal(size=120)
    >>> res = compare(lmer("y ~ s + (1|g)", df), lmer("y ~ 1 + (1|g)", df))
    >>> res.df
    2.0
    """
    if not isinstance(model_a, MixedResult) or not isinstance(model_b, MixedResult):
        raise InputTypeError("compare() takes two fitted mixed models (mixeval.lmer, mixeval.glmer, mixeval.clmm).")
    _check_same_family(model_a, model_b)
    _check_same_rows(model_a, model_b)
    null, full = sorted((model_a, model_b), key=lambda m: m.n_params)
    if null.n_params == full.n_params:
        raise ModelComparisonError(
            f"the models {null.formula!r} and {full.formula!r} have the same number of parameters; "
            "a likelihood-ratio test needs one nested in the other with fewer parameters."
        )
    _check_nested(full, null)
    same_fixed = _fixed_nested(null, full)
    refitted = False
    if null.reml or full.reml:
        if refit:
            null, full = null.refit(REML=False), full.refit(REML=False)
            refitted = True
        elif not (null.reml and full.reml and same_fixed):
            raise ModelComparisonError(
                "REML likelihoods are comparable only between models with the same fixed effects and both "
                "fitted by REML; use refit=True (ML refit) to compare fixed effects."
            )
    statistic = 2.0 * (full.loglik - null.loglik)
    if -1e-7 < statistic < 0:
        statistic = 0.0
    df = float(full.n_params - null.n_params)
    pvalue = float(sps.chi2.sf(max(statistic, 0.0), df))
    details: dict[str, object] = {
        "loglik_null": null.loglik,
        "loglik_full": full.loglik,
        "npar_null": null.n_params,
        "npar_full": full.n_params,
        "formula_null": null.formula,
        "formula_full": full.formula,
        "criterion": "REML" if (full.reml and not refitted) else "ML",
        "refitted": refitted,
    }
    extra_components = len(full.group_names) - len(null.group_names)
    if same_fixed and extra_components > 0 and not (full.has_slopes or null.has_slopes):
        # random intercepts tested against 0: each lies on its boundary (Self & Liang); with slopes the null
        # distribution mixes chi-squares of other degrees of freedom and no mixture is given; with the same terms
        # (an ordinal fit with nominal effects against one without) there is no variance on a boundary
        details["pvalue_boundary"] = boundary_mixture_pvalue(statistic, extra_components)
    return TestResult(statistic=float(statistic), pvalue=pvalue, df=df, method="likelihood-ratio test", details=details)
