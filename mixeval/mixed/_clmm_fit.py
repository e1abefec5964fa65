"""The public entry points of cumulative link mixed models: :func:`clmm` (the formula, the response's categories and
the options validated, then the engine's stages: :func:`~._clmm.fit_clmm`, or
:func:`~._clmm_thresholds.fit_spread_model` with random threshold spreads) and the likelihood-ratio tests of how
raters use the scale (:func:`nominal_test`, :func:`threshold_spread_test`)."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._validation import require_columns
from ..errors import InputError, InputTypeError
from ._clmm import check_nominal_cells, fit_clmm, nominal_design
from ._clmm_thresholds import fit_spread_model, spread_model_of
from ._design import build_design
from ._ordinal import get_ordinal, ordered_response

if TYPE_CHECKING:
    from .._results import TestResult

__all__ = ["clmm", "nominal_test", "threshold_spread_test"]


def clmm(formula: str, data: pd.DataFrame, *, link: str = "logit", threshold: str = "flexible",
         levels: Any = None, nominal: str | None = None, nAGQ: int = 1, drop_missing: bool = False,
         random_thresholds: str | None = None):
    """Fit a cumulative link mixed model to ordinal ratings (``ordinal::clmm``).

    Parameters
    ----------
    formula : str
        lme4 formula with the rating on the left, e.g. ``"rating ~ system + (1|item) + (1|rater)"``; crossed,
        nested (``(1|site/rater)``) and vector-valued (``(1 + x|rater)``) random-effects terms as for
        :func:`~mixeval.lmer`. The intercept is replaced by the thresholds.
    data : pandas.DataFrame
        One row per rating; never modified.
    link : {"logit", "probit"}
        ``F`` the standard logistic or normal distribution function.
    threshold : {"flexible", "equidistant", "symmetric"}
        Threshold structure (``ordinal``'s ``threshold=``).
    levels : sequence, optional
        The categories of the scale in increasing order (``[1, 2, 3, 4, 5]``); needed for a string column,
        and to keep categories nobody used. By default: an ordered Categorical's categories, or the
        distinct whole numbers.
    nominal : str, optional
        A factor whose levels get their own thresholds (``"rater"`` or ``"~rater"``: ``ordinal::clm``'s nominal
        effects, e.g. raters who use the scale differently); flexible thresholds only.
    nAGQ : int, default 1
        1: Laplace approximation; > 1: adaptive Gauss-Hermite quadrature with that many nodes (one scalar
        random-effects term).
    drop_missing : bool, default False
        Drop rows with missing values in the used columns (with a warning) instead of raising.
    random_thresholds : str, optional
        A grouping factor with a random intercept in the formula (``"rater"`` with ``(1|rater)``) whose levels
        also spread their thresholds at random: the random-effects counterpart of ``nominal`` for many raters
        (:mod:`mixeval.mixed._clmm_thresholds`; flexible thresholds, Laplace). The factor's term then has the
        coefficients ``(Intercept)`` (the shift) and ``spread`` with an unstructured covariance;
        :func:`~mixeval.mixed.threshold_spread_test` tests the spread.

    Returns
    -------
    ClmmResult

    Warns
    -----
    EmptyCategoryWarning, SingularFitWarning, ConvergenceWarning

    Notes
    -----
    ``P(Y_i <= j | b) = F(theta_j - x_i' beta - z_i' b)``, ``b = Lambda u``, ``u ~ N(0, I)``: a positive
    ``beta`` moves ratings up (``ordinal``'s sign). The Laplace deviance is ``-2 sum log P(y_i | u*) +
    ||u*||^2 + log|Lambda' Z' W Z Lambda + I|`` at the conditional modes ``u*`` (Newton's method),
    ``W`` the curvature of ``-log P`` in the linear predictor; it is minimised over ``(theta, alpha, beta)``
    jointly with its exact gradient (scalar random-effects terms) by the package's one optimiser.
    Variance components are on the latent scale, where the residual has variance ``pi^2 / 3`` (logit) or
    1 (probit). Wald standard errors come from the Hessian of the deviance (central differences of
    the gradient), as clmm's.

    Examples
    --------
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=10, systems=("A", "B"), n_raters=10, response="rating")
    >>> fit = clmm("rating ~ system + (1|rater)", df)
    >>> list(fit.thresholds.index), list(fit.fixef.index)
    (['1|2', '2|3', '3|4', '4|5'], ['systemB'])
    >>> spread = clmm("rating ~ system + (1|rater)", df, random_thresholds="rater")
    >>> spread.spread, list(spread.ranef["rater"].columns), spread.n_params - fit.n_params
    ('rater', ['(Intercept)', 'spread'], 2)
    """
    if random_thresholds is not None:
        _check_random_thresholds(random_thresholds, data, nominal, nAGQ, threshold)
    fam = get_ordinal(link, threshold)
    n_agq = int(nAGQ)
    if n_agq < 1 or n_agq > 100:
        raise InputError(f"nAGQ must be an integer between 1 and 100; got {nAGQ!r}.")
    if not isinstance(data, pd.DataFrame):
        raise InputTypeError(f"clmm() takes a pandas DataFrame; got {type(data).__name__}.")
    if not isinstance(drop_missing, (bool, np.bool_)):
        raise InputTypeError(f"drop_missing must be True or False; got {drop_missing!r}.")
    from ..formula import parse_formula

    parsed = _column_response(parse_formula(formula))
    require_columns(data, [parsed.response])
    if drop_missing:
        from ._design import complete_rows

        data = complete_rows(parsed, data)
    response = ordered_response(data[parsed.response], levels)
    coded = data.assign(**{parsed.response: response.codes.astype(float)})
    design = build_design(parsed, coded)
    nom = nominal_design(design.data, nominal) if nominal is not None else None
    if nom is not None:
        check_nominal_cells(nom[0], response, data, nominal)
    if random_thresholds is not None:
        return fit_spread_model(design, response, fam, random_thresholds, data=data)
    return fit_clmm(design, response, fam, n_agq=n_agq, nominal=nom, data=data, nominal_spec=nominal)


def _column_response(parsed):
    """The ratings' column: a column by name, or R's ``factor(rating)`` / ``ordered(rating)`` of one (the scale's
    order is that of the column's categories or sorted values, or ``levels=``)."""
    if parsed.response_is_column:
        return parsed
    from ..formula import parse_formula

    node = parsed.response_node
    inner = getattr(node, "args", ())
    if getattr(node, "base", None) in ("factor", "ordered", "as.factor", "as.ordered") and len(inner) == 1 \
            and type(inner[0].value).__name__ == "Name":
        column = inner[0].value.id
        rest = parsed.formula.split("~", 1)[1]
        return parse_formula(f"`{column}` ~ {rest}")
    raise InputError(f"the response {parsed.response} of an ordinal model must be the ratings' column (or "
                     "factor(column)); pass the scale's order with levels=.")


def _check_random_thresholds(factor: Any, data: pd.DataFrame, nominal: Any, nAGQ: Any, threshold: str) -> None:
    if not isinstance(data, pd.DataFrame):
        raise InputTypeError(f"clmm() takes a pandas DataFrame; got {type(data).__name__}.")
    if not isinstance(factor, str) or factor not in data.columns:
        raise InputError(f"random_thresholds={factor!r} is not a column of the data.")
    if nominal is not None or nAGQ != 1:
        raise InputError(f"random_thresholds cannot be combined with nominal={nominal!r} or nAGQ={nAGQ!r}: the spread "
                         "is the random counterpart of nominal thresholds, fitted by the Laplace approximation.")
    if threshold != "flexible":
        raise InputError("random threshold spreads are defined for flexible thresholds (threshold='flexible').")


def _quiet_fit(formula: str, data: pd.DataFrame, options: dict):
    """The fit without spreads (its warnings belong to the model the user asked for, which is fitted next)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return clmm(formula, data, **options)


def nominal_test(formula: str, data: pd.DataFrame, factor: str, **options: Any):
    """Likelihood-ratio test that the levels of ``factor`` (e.g. raters) use the rating scale differently.

    Fits ``formula`` with ``factor`` as a location effect (each rater shifts every threshold alike) and with
    ``factor`` as a nominal effect (each rater has thresholds of its own, ``ordinal::clm``'s ``nominal =
    ~factor``), and compares them: ``W = 2 (l_nominal - l_location) ~ chi2((L - 1)(J - 2))`` for ``L`` levels
    and ``J`` categories.

    Parameters
    ----------
    formula : str
        The model without ``factor`` (e.g. ``"rating ~ system + (1|item)"``).
    data : DataFrame
    factor : str
        A column of ``data``.
    **options
        Passed to :func:`clmm` (``link``, ``levels``, ``nAGQ``); flexible thresholds.

    Returns
    -------
    TestResult
        ``statistic``, ``df``, ``pvalue``; ``details`` holds both fits.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(2)
    >>> df = pd.DataFrame({"rater": np.repeat(["a", "b", "c"], 100), "system": np.tile(["A", "B"], 150)})
    >>> df["rating"] = np.digitize(0.5 * (df.system == "B") + rng.logistic(size=300), [-1, 0, 1]) + 1
    >>> res = nominal_test("rating ~ system", df, "rater")
    >>> res.df
    4.0
    """
    from scipy import stats as sps

    from .._results import TestResult

    if "threshold" in options and options["threshold"] != "flexible":
        raise InputError("nominal_test compares rater-specific thresholds with flexible ones; threshold= must be "
                         "'flexible'.")
    if not isinstance(factor, str) or factor not in data.columns:
        raise InputError(f"factor={factor!r} is not a column of the data.")
    lhs, rhs = formula.split("~", 1)
    location = clmm(f"{lhs.strip()} ~ {factor} + {rhs.strip()}", data, **options)
    nominal = clmm(formula, data, nominal=factor, **options)
    statistic = max(2.0 * (nominal.loglik - location.loglik), 0.0)
    df = float(nominal.n_params - location.n_params)
    return TestResult(statistic=float(statistic), pvalue=float(sps.chi2.sf(statistic, df)), df=df,
                      method="likelihood-ratio test of nominal (group-specific) thresholds",
                      details={"location": location, "nominal": nominal, "factor": factor})


def threshold_spread_test(formula: str, data: pd.DataFrame, factor: str, *, n_resamples: int | None = None,
                          random_state: Any = None, **options: Any) -> TestResult:
    """Likelihood-ratio test that the levels of ``factor`` (raters) spread their thresholds differently.

    Compares ``formula`` (which contains ``(1|factor)``: raters shift their thresholds at random) with the same
    model whose raters also spread their thresholds at random (:func:`~mixeval.clmm` with
    ``random_thresholds=factor``): ``H0: Var(s_r) = 0``.

    Parameters
    ----------
    formula : str
        The model under the null, with ``(1|factor)``, e.g. ``"rating ~ system + (1|item) + (1|rater)"``.
    data : DataFrame
    factor : str
    n_resamples : int, optional
        A parametric-bootstrap p-value from this many rating sets simulated under the null (both models refitted
        to each); without it the boundary mixture's p-value.
    random_state : None, int or Generator, optional
        Seed of the bootstrap (with ``n_resamples`` only).
    **options
        Passed to :func:`~mixeval.clmm` (``link``, ``levels``); flexible thresholds, Laplace.

    Returns
    -------
    TestResult
        ``statistic = 2 (l_1 - l_0)``, ``pvalue``, ``df = 2``; ``details`` holds both fits, the mixture's and the
        naive p-values and, with ``n_resamples``, the bootstrap's ``null_distribution`` and its Monte Carlo
        standard error ``pvalue_se``.

    Notes
    -----
    Under ``H0`` the spread's variance is on the boundary of its space and its covariance with the shift vanishes
    with it, so ``2 (l_1 - l_0)`` follows the 50:50 mixture of ``chi2(1)`` and ``chi2(2)`` (Self & Liang 1987;
    Stram & Lee 1994): ``p = (P(chi2_1 > W) + P(chi2_2 > W)) / 2``. With few raters the fits often end at a
    correlation of +-1 and the mixture is conservative (the method notes give the simulation); the parametric
    bootstrap (``n_resamples``: ``p = (1 + #{W* >= W}) / (1 + B)`` over the finite refits, Davison & Hinkley 1997)
    refers the statistic to its own null distribution at the fitted null model. The naive ``chi2(2)`` p-value is in
    ``details["pvalue_naive"]``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(3)
    >>> df = pd.DataFrame({"rater": np.repeat(np.arange(10), 30), "item": np.tile(np.arange(30), 10)})
    >>> latent = rng.normal(0, 1, 30)[df.item] + rng.normal(0, 0.5, 10)[df.rater] + rng.logistic(size=300)
    >>> df["rating"] = np.digitize(latent, [-2, -0.7, 0.7, 2]) + 1
    >>> res = threshold_spread_test("rating ~ 1 + (1|item) + (1|rater)", df, "rater")
    >>> res.df, bool(0 <= res.pvalue <= 1), res.statistic >= 0
    (2.0, True, True)
    """
    from scipy import stats as sps

    from .._results import TestResult

    if "random_thresholds" in options:
        raise InputError("threshold_spread_test fits the model with and without random threshold spreads of `factor`; "
                         "drop random_thresholds=.")
    if random_state is not None and n_resamples is None:
        raise InputError("random_state= seeds the parametric bootstrap; give n_resamples= too (e.g. 200), or drop "
                         "random_state=.")
    _check_random_thresholds(factor, data, options.get("nominal"), options.get("nAGQ", 1),
                             options.get("threshold", "flexible"))
    null = _quiet_fit(formula, data, {k: v for k, v in options.items() if k not in ("nAGQ", "threshold")})
    alt = spread_model_of(null, factor)
    statistic = max(2.0 * (alt.loglik - null.loglik), 0.0)
    mixture = 0.5 * (sps.chi2.sf(statistic, 1) + sps.chi2.sf(statistic, 2))
    details = {"null": null, "alternative": alt, "factor": factor, "pvalue_naive": float(sps.chi2.sf(statistic, 2)),
               "pvalue_mixture": float(mixture)}
    if n_resamples is None:
        return TestResult(statistic=float(statistic), pvalue=float(mixture), df=2.0,
                          method="likelihood-ratio test of random threshold spreads (50:50 chi2(1):chi2(2) mixture)",
                          details=details)
    from .._random import as_generator
    from .._validation import require_positive_int
    from ._clmm_thresholds import spread_null_statistics

    draws = spread_null_statistics(null, alt, require_positive_int(n_resamples, "n_resamples"),
                                   as_generator(random_state))
    finite = draws[np.isfinite(draws)]
    pvalue = (1.0 + np.sum(finite >= statistic * (1 - 1e-9))) / (1.0 + finite.size)
    details.update(null_distribution=draws, n_resamples=int(n_resamples), failed_refits=int(draws.size - finite.size),
                   pvalue_se=float(np.sqrt(pvalue * (1 - pvalue) / max(finite.size, 1))))
    return TestResult(statistic=float(statistic), pvalue=float(pvalue), df=2.0,
                      method=f"likelihood-ratio test of random threshold spreads (parametric bootstrap, {finite.size} "
                             "refits)", details=details)
