"""``lmer``: the public call that chains the stages of a fit."""

from __future__ import annotations

import dataclasses
import functools
import warnings
from typing import Any

import pandas as pd
from threadpoolctl import ThreadpoolController

import numpy as np
from scipy.linalg import LinAlgError

from ..errors import ConvergenceWarning, SingularFitWarning
from ._deviance import deviance_and_gradient, deviance_parts
from ._design import Design, build_design, complete_rows
from ._general import BlockStats, compute_block_stats, general_deviance_and_gradient, general_deviance_parts
from ._optimize import OptimResult, minimize_deviance, optimize_theta
from ._result import LmerResult, make_result, singular_terms
from ._reterms import build_restructure
from ._scaling import Scaling, standardize
from ._stats import SufficientStats, compute_stats

__all__ = ["lmer", "fit_from_stats", "fit_design", "design_stats", "optimize_general"]


@functools.lru_cache(maxsize=1)
def _controller() -> ThreadpoolController:
    return ThreadpoolController()  # inspects the loaded BLAS libraries once


def single_threaded_blas():
    """Context manager: BLAS on one thread. The engine's dense systems are small (tens to a few hundred
    rows), where multi-threaded BLAS only adds overhead, and under load thread oversubscription makes a
    200 x 200 Cholesky factorisation 100 times slower."""
    return _controller().limit(limits=1, user_api="blas")


def optimize_general(stats: BlockStats, reml: bool, theta0: np.ndarray | None = None,
                     lower: np.ndarray | None = None) -> OptimResult:
    """Minimise the profiled deviance of a model with vector-valued terms (:mod:`._general`).

    lme4's start (identity relative factors) and bounds (diagonals >= 0); the exact gradient
    (:func:`~._general.general_deviance_and_gradient`) through :func:`~._optimize.minimize_deviance`.
    """
    from ._reterms import _tril_template

    diag = np.concatenate([(lambda rc: rc[0] == rc[1])(_tril_template(d)) for d in stats.dims]) if stats.dims \
        else np.zeros(0, dtype=bool)
    x0 = np.where(diag, 1.0, 0.0) if theta0 is None else np.asarray(theta0, dtype=float)
    lo = np.where(diag, 0.0, -np.inf) if lower is None else np.asarray(lower, dtype=float)

    def fg(theta: np.ndarray) -> tuple[float, np.ndarray]:
        try:
            return general_deviance_and_gradient(stats, theta, reml)
        except np.linalg.LinAlgError as exc:  # numpy's batched Cholesky: treat as scipy's (infinite deviance)
            raise LinAlgError(str(exc)) from exc

    opt = minimize_deviance(fg, x0, lo)
    theta, dev, grad = _gradient_polish(fg, opt.theta, lo)
    return dataclasses.replace(opt, theta=theta, deviance=dev, gradient=grad)


def _gradient_polish(fg, theta: np.ndarray, lower: np.ndarray, steps: int = 6):
    """Newton steps on the zero of the exact gradient over the interior coordinates.

    Near the optimum the deviance is flat to rounding (a change of ``1e-7`` in theta moves it by
    ``~1e-13``), so a search that compares deviance values stops anywhere in that flat region;
    the gradient is exact to ``~1e-12`` and locates the optimum to about ``1e-12`` in theta. The
    Hessian (forward differences of the exact gradient, formed once: ``k + 1`` gradient calls) is
    kept for all steps; a step is kept when it reduces the gradient's norm without increasing the
    deviance beyond rounding.
    """
    dev, grad = fg(theta)
    idx = np.flatnonzero(theta > lower)
    if not idx.size:
        return theta, float(dev), grad
    h = np.empty((idx.size, idx.size))
    for a, i in enumerate(idx):
        step = 1e-6 * max(abs(theta[i]), 1e-2)
        tp = theta.copy()
        tp[i] += step
        h[a] = (fg(tp)[1][idx] - grad[idx]) / step
    h = 0.5 * (h + h.T)
    try:
        chol = np.linalg.cholesky(h)
    except np.linalg.LinAlgError:
        return theta, float(dev), grad
    for _ in range(steps):
        delta = np.linalg.solve(chol.T, np.linalg.solve(chol, grad[idx]))
        trial = theta.copy()
        trial[idx] = np.maximum(theta[idx] - delta, lower[idx])
        try:
            new_dev, new_grad = fg(trial)
        except LinAlgError:
            break
        if not (np.linalg.norm(new_grad[idx]) < np.linalg.norm(grad[idx]) and new_dev <= dev + 1e-11 * abs(dev)):
            break
        theta, dev, grad = trial, new_dev, new_grad
        if np.max(np.abs(delta)) < 1e-12 * max(1.0, float(np.max(np.abs(theta[idx])))):
            break
    return theta, float(dev), grad


def design_stats(design: Design) -> SufficientStats | BlockStats:
    """The statistics a fit of ``design`` needs: random-intercept sums, or per-level blocks for slopes."""
    if design.has_slopes:
        return compute_block_stats(build_restructure(design), design.X, design.y)
    return compute_stats(design)


def fit_design(design: Design, *, reml: bool, data: Any = None, warn: bool = True) -> LmerResult:
    """Fit a validated design: centre and scale (:func:`~._scaling.standardize`), form the statistics,
    optimise, map back to the data as given."""
    scaled, scaling = standardize(design)
    return fit_from_stats(design, design_stats(scaled), reml=reml, data=data, warn=warn, scaling=scaling)


def fit_from_stats(design: Design, stats: SufficientStats | BlockStats, *, reml: bool, data: Any = None,
                   warn: bool = True, scaling: Scaling | None = None) -> LmerResult:
    """Optimise, check and assemble a fit from precomputed statistics.

    ``stats`` may belong to a centred and scaled copy of ``design`` (then ``scaling`` maps back,
    :func:`fit_design`); random-intercept statistics go to the intercept path, per-level blocks
    (:class:`~._general.BlockStats`) to the general evaluator.
    """
    with single_threaded_blas():
        if isinstance(stats, BlockStats):
            opt = optimize_general(stats, reml)
            parts = general_deviance_parts(stats, opt.theta, reml)
        else:
            opt = optimize_theta(stats, reml)
            if stats.n_terms:
                theta, dev, grad = _gradient_polish(lambda t: deviance_and_gradient(stats, np.abs(t), reml), opt.theta,
                                                    np.zeros(stats.n_terms))
                opt = dataclasses.replace(opt, theta=theta, deviance=dev, gradient=grad)
            parts = deviance_parts(stats, opt.theta, reml)
        result = make_result(design, stats, opt, parts, data, scaling)
    if warn:
        check_fit(result)
    return result


def check_fit(result: LmerResult) -> None:
    """Warn on singular (boundary) fits and on non-convergence (lme4's ``checkConv``)."""
    if result.singular:
        dims = tuple(len(c) for c in result.term_coef_names)
        terms = singular_terms(dims, result.theta)
        scalar = [result.group_names[k] for k in terms if dims[k] == 1]
        vector = [result.term_labels[k] for k in terms if dims[k] > 1]
        what = []
        if scalar:
            what.append(f"the variance of {', '.join(repr(z) for z in scalar)} is estimated as (numerically) zero")
        if vector:
            what.append(f"the covariance matrix of {', '.join(vector)} is singular (a variance at 0 or a "
                        "correlation at +-1; see fit.correlations)")
        warnings.warn(
            f"boundary (singular) fit: {'; '.join(what)}. This is a valid estimate, not a failure; "
            + ("the component can be dropped without changing the fit." if not vector else
               "the random-effects structure can be simplified (drop a slope, or fit uncorrelated effects "
               "(1 + x || g)) without changing the fit much."),
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
    return fit_design(design, reml=bool(REML), data=design.data)
