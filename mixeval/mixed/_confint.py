"""``confint``: confidence intervals of a mixed-model fit by profile likelihood, parametric bootstrap or Wald."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._format import terminal_width, text_table
from .._validation import require_level
from ..errors import InputError
from ._bootstrap import bootstrap_fit
from ._profile import profile_intervals
from ._protocol import as_fit_model

__all__ = ["ConfintResult", "confint", "wald_intervals"]

METHODS = ("profile", "boot", "wald")


@dataclass(frozen=True)
class ConfintResult:
    """Confidence intervals of a fit's parameters (rows named as lme4's ``confint(oldNames = FALSE)``).

    Attributes
    ----------
    table : DataFrame
        Index: parameter; columns ``estimate``, ``lower``, ``upper``.
    method : str
        ``"profile"``, ``"boot"`` or ``"wald"``.
    level : float
    n_resamples : int or None
        Refits of a bootstrap interval.

    Examples
    --------
    >>> from mixeval import lmer
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=15, systems=("A",), n_raters=4)
    >>> fit = lmer("score ~ 1 + (1|item)", df)
    >>> confint(fit, method="wald").to_dict()["method"]
    'wald'
    """

    table: pd.DataFrame = field(repr=False)
    method: str
    level: float
    n_resamples: int | None = None

    @property
    def intervals(self) -> dict[str, tuple[float, float]]:
        return {k: (float(r.lower), float(r.upper)) for k, r in self.table.iterrows()}

    def summary(self) -> str:
        pct = f"{100 * self.level:g}%"
        extra = f", {self.n_resamples} refits" if self.n_resamples else ""
        return f"{pct} {self.method} intervals{extra}\n" + text_table(self.table, width=terminal_width())

    def __str__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        return f"<p>{100 * self.level:g}% {self.method} intervals</p>" + self.table.to_html()

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``mixeval confint --json``."""
        return {"method": self.method, "level": self.level, "n_resamples": self.n_resamples,
                "intervals": {k: [lo, hi] for k, (lo, hi) in self.intervals.items()},
                "estimate": {k: float(v) for k, v in self.table["estimate"].items()}}


def wald_intervals(fit, level: float = 0.95) -> dict[str, tuple[float, float]]:
    """Wald intervals: ``estimate -/+ z se``.

    Notes
    -----
    Fixed effects: the standard errors of the fit (as lme4's ``confint(method = "Wald")``). Standard
    deviations and ``sigma`` (lme4 gives NA): the delta method on the asymptotic covariance of the variances,
    ``se(sd) = se(variance) / (2 sd)``, truncated at 0; NaN for a component on the boundary (estimated 0),
    where the normal approximation does not hold (use the profile or the bootstrap). A GLMM's variances take
    their standard errors from the Hessian of its deviance (:attr:`~mixeval.mixed.GlmerResult.varcorr_se`);
    its correlations get NaN.

    Examples
    --------
    >>> from mixeval import lmer
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=15, systems=("A",), n_raters=4)
    >>> fit = lmer("score ~ 1 + (1|item)", df)
    >>> lo, hi = wald_intervals(fit)["(Intercept)"]
    >>> bool(lo < fit.coef[0] < hi)
    True
    """
    level = require_level(level)
    return as_fit_model(fit).wald_intervals(level)


def confint(fit, *, method: str = "profile", level: float = 0.95, n_resamples: int | None = None,
            random_state: Any = None, n_jobs: int | None = None, progress: bool | None = None,
            df: str = "asymptotic") -> ConfintResult:
    """Confidence intervals for the standard deviations, ``sigma`` and the fixed effects of a fit.

    Parameters
    ----------
    fit : LmerResult, GlmerResult or ClmmResult
        A fitted model (:func:`mixeval.lmer`, :func:`mixeval.glmer` for the GLMM families, or
        :func:`mixeval.clmm` for ratings).
    method : {"profile", "boot", "wald"}
        Profile likelihood (lme4's default), parametric-bootstrap percentiles, or Wald.
    level : float, default 0.95
    n_resamples, random_state, n_jobs, progress
        For ``method="boot"``: refits (lme4's ``nsim``, default 500), seed, worker processes (default 1), progress
        bar; the first three are refused with the other methods, which do not resample.
    df : {"asymptotic", "satterthwaite"}
        Wald intervals with ``z`` (the default, lme4's and clmm's) or with ``t`` on Satterthwaite df for the fixed
        parameters, where the fit's evaluator offers them (ordinal fits: their thresholds and effects,
        :func:`~mixeval.mixed._clmm_ddf.clmm_satterthwaite_df`); the table then has a ``df`` column (inf for the
        variance parameters, whose Wald intervals are unchanged). Refused with the other methods, and for fits
        without such df (Gaussian and binomial/Poisson fits: their Satterthwaite df are in
        :func:`mixeval.emmeans` and :class:`mixeval.Study` with ``df=``).

    Returns
    -------
    ConfintResult

    Notes
    -----
    Profile: ``{v : |zeta(v)| <= z_{1 - alpha/2}}`` with ``zeta`` the signed root of the ML deviance
    increase, every other parameter re-optimised (see :mod:`mixeval.uncertainty._profile`); as in lme4 the
    ML fit is profiled also for a REML fit. Bootstrap: percentiles of the refits' estimates (REML refits for a
    REML fit, as ``bootMer``). Wald: see :func:`wald_intervals`.

    GLMMs (:class:`~mixeval.uncertainty.GlmmFitModel`): the parameters are the random effects' sd's (and
    correlations), the family's own parameters (``dispersion`` in glmmTMB's ``sigma()`` parameterisation, an
    ordered beta model's ``cutpoint_lower`` and ``cutpoint_upper``; a dispersion's Wald interval on its log
    scale, as glmmTMB's ``confint``) and the fixed effects, no ``sigma``; the profile is on the fit's own deviance (Laplace,
    or adaptive Gauss-Hermite for ``nAGQ > 1``), every other parameter re-optimised as lme4's
    ``profile.glmerMod``; the bootstrap draws binomial (out of each row's trials) or Poisson responses
    with new random effects and refits.

    Ordinal fits (:class:`~mixeval.uncertainty.ClmmFitModel`): the sd's, the threshold parameters and the location
    effects, every one profiled over all the others on the Laplace (or quadrature) deviance, as ``ordinal``'s
    ``profile.clm`` and ``profile.clmm2``; the bootstrap draws ratings with new random effects and refits; Wald
    intervals of the sd's are taken on the log scale.

    Examples
    --------
    >>> from mixeval import lmer
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=15, systems=("A",), n_raters=4)
    >>> ci = confint(lmer("score ~ 1 + (1|item)", df), method="wald")
    >>> list(ci.table.index)
    ['sd_(Intercept)|item', 'sigma', '(Intercept)']
    """
    method = str(method).lower()
    if method not in METHODS:
        raise InputError(f"method must be one of {', '.join(METHODS)}; got {method!r}.")
    level = require_level(level)
    given = [name for name, v in (("n_resamples", n_resamples), ("random_state", random_state), ("n_jobs", n_jobs))
             if v is not None]
    if given and method != "boot":
        raise InputError(f"{', '.join(given)} set the parametric bootstrap; method={method!r} does not resample. "
                         "Drop them, or use method='boot'.")
    if df not in ("asymptotic", "satterthwaite"):
        raise InputError(f"df must be 'asymptotic' (z) or 'satterthwaite' (t on Satterthwaite df); got {df!r}.")
    if df == "satterthwaite" and method != "wald":
        raise InputError(f"df='satterthwaite' sets the degrees of freedom of Wald t intervals; method={method!r} "
                         "has none. Use method='wald', or drop df.")
    model = as_fit_model(fit)
    names = list(model.param_names)
    estimate = model.estimates()
    n_used = None
    dof = None
    if df == "satterthwaite":
        dof = model.satterthwaite_df()
        if dof is None:
            raise InputError(f"df='satterthwaite' Wald intervals are offered for ordinal (clmm) fits; this "
                             f"{type(fit).__name__} has its Satterthwaite df in mixeval.emmeans / Study(..., df=). "
                             "Drop df, or use those.")
    if method == "profile":
        iv = profile_intervals(model, level, progress=progress)
    elif method == "wald" and dof is not None:
        iv = _wald_t_intervals(model, estimate, names, dof, level)
    elif method == "wald":
        iv = wald_intervals(fit, level)
    else:
        boot = bootstrap_fit(fit, n_resamples=500 if n_resamples is None else n_resamples, random_state=random_state,
                             n_jobs=1 if n_jobs is None else n_jobs, progress=progress)
        q = boot.interval(level)
        iv = {k: (float(q.loc[k, "lower"]), float(q.loc[k, "upper"])) for k in names}
        n_used = boot.n_resamples
    table = pd.DataFrame({"estimate": estimate, "lower": [iv[k][0] for k in names], "upper": [iv[k][1] for k in names]},
                         index=pd.Index(names, name="parameter"))
    if dof is not None:
        table["df"] = [float(dof[k]) if k in dof.index else np.inf for k in names]
    table.attrs["level"] = float(level)
    return ConfintResult(table=table, method=method, level=float(level), n_resamples=n_used)


def _wald_t_intervals(model, estimate: np.ndarray, names: list[str], dof, level: float) -> dict[str, tuple[float, float]]:
    """Wald intervals with ``t_df`` quantiles for the parameters in ``dof`` (``estimate -/+ t se``, the
    ``se`` of the z interval), the z ones for the others."""
    from scipy import stats as sps

    z = float(sps.norm.ppf(0.5 + level / 2.0))
    out = dict(model.wald_intervals(level))
    for k, d in dof.items():
        i = names.index(k)
        lo, hi = out[k]
        half = (hi - lo) / 2.0
        se = half / z
        t = float(sps.t.ppf(0.5 + level / 2.0, float(d)))
        out[k] = (float(estimate[i] - t * se), float(estimate[i] + t * se))
    return out
