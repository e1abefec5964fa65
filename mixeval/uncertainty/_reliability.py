"""Intervals for reliability coefficients and D-studies from the parametric bootstrap of the components.

Every coefficient of :mod:`mixeval.reliability` (phi, the relative coefficient, intra- and inter-rater
reliability, every cell of a D-study) is a function of the variance components. The fit is simulated
and refitted (:func:`~mixeval.uncertainty.parametric_refits`), the coefficient is recomputed from each
refit's components, and the interval is the basic bootstrap interval of those values on the logit scale
(:func:`mixeval.reliability.draws_interval`; ``method="bc"`` or ``"percentile"`` for the others). One set of draws
serves every coefficient and every design, so a whole D-study costs one bootstrap.

Why this construction: phi is a ratio of variance components whose estimates are skewed and often on
the boundary (a component at 0). The bootstrap distribution carries both without a normal
approximation (a delta-method interval is symmetric and undefined at 0), refits at the boundary are
ordinary draws, and the interval stays within [0, 1]. Its coverage is measured by simulation (the
documentation's method notes).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._results import ConfidenceInterval
from .._validation import require_level
from ..errors import BoundaryWarning, InputError, caller_stacklevel
from ..mixed import MixedResult
from ..mixed.engine import parametric_refits
from ..reliability import components_of, draw_moments, draws_interval, reach_probability, resolve_scale

__all__ = ["component_draws", "coefficient_interval", "phi_interval", "phi_draws", "dstudy_intervals",
           "reach_probability", "warn_boundary_draws"]


def component_draws(fit: MixedResult, *, n_resamples: int = 1000, random_state: Any = None, n_jobs: int = 1,
                    progress: bool | None = None) -> pd.DataFrame:
    """Variance components of ``n_resamples`` parametric-bootstrap refits: one row per refit, one column per group.

    ``attrs["coef"]`` holds each refit's fixed effects (rows of an array; ``attrs["alpha"]`` the threshold
    parameters of an ordinal fit, ``attrs["family_par"]`` the family's parameters on the optimiser's scale: a
    dispersion's logarithm, cutpoints), which observed-scale coefficients need
    (:func:`mixeval.reliability.draw_moments`). A GLMM's ``"Residual"`` is its family's latent residual variance at
    each refit's fixed effects, components and parameters (constant for a binomial model; the lognormal
    approximation of a count model moves with them).

    Examples
    --------
    >>> from mixeval import lmer
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=15, systems=("A",), n_raters=4)
    >>> component_draws(lmer("score ~ 1 + (1|item)", df), n_resamples=20, random_state=0, progress=False).shape
    (20, 2)
    """
    if not isinstance(fit, MixedResult):
        raise InputError("intervals need a fitted model (mixeval.lmer, mixeval.glmer or Study.fit) to simulate from; "
                         f"got {type(fit).__name__}. Published components alone carry no uncertainty.")
    refits = parametric_refits(fit, n_resamples=n_resamples, random_state=random_state, n_jobs=n_jobs,
                               progress=progress)
    draws = pd.DataFrame([r.variances for r in refits])
    names = list(fit.model.param_names)
    params = np.array([r.params for r in refits], dtype=float).reshape(len(refits), len(names))
    draws.attrs["coef"] = params[:, [names.index(c) for c in fit.fixed_names]]
    family = fit.family
    if family.n_parameters:
        values = params[:, [names.index(n) for n in family.parameter_names]]
        draws.attrs["family_par"] = np.array([family.internal_parameters(v) for v in values])
    if hasattr(fit, "alpha_names"):
        draws.attrs["alpha"] = params[:, [names.index(a) for a in fit.alpha_names]]
    if "Residual" not in draws.columns:  # a GLMM: the latent residual variance of its family at each refit
        draws["Residual"] = _latent_residuals(fit, draws)
    return draws


def _latent_residuals(fit: MixedResult, draws: pd.DataFrame) -> np.ndarray | float:
    """The family's latent residual variance (:meth:`~mixeval.mixed.families.Family.latent_residual_variance`) of
    every draw: at its fixed predictors, summed variances and family parameters; the fit's own where the rows'
    fixed predictors are not at hand (an ordinal fit, a fit from aggregates)."""
    X = getattr(getattr(fit, "design", None), "X", None)
    if fit.family.engine != "glmer" or X is None:
        return fit.latent_components["Residual"]
    X = np.asarray(X, dtype=float)
    psi = draws.attrs.get("family_par", np.zeros((len(draws), 0)))
    coef, total = draws.attrs["coef"], draws.sum(axis=1).to_numpy()
    out = np.full(len(draws), np.nan)
    for i in range(len(draws)):
        if np.isfinite(total[i]) and np.all(np.isfinite(coef[i])) and np.all(np.isfinite(psi[i])):
            out[i] = fit.family.latent_residual_variance(X @ coef[i], total[i], psi[i])
    return out


def _draws(source, draws: pd.DataFrame | None, n_resamples: int, random_state: Any,
           progress: bool | None = None) -> pd.DataFrame:
    if draws is not None:
        if not isinstance(draws, pd.DataFrame) or "Residual" not in draws.columns:
            raise InputError("draws must be the DataFrame of component_draws() (one column per component and 'Residual').")
        return draws
    return component_draws(source, n_resamples=n_resamples, random_state=random_state, progress=progress)


def warn_boundary_draws(values: np.ndarray, level: float, what: str = "phi") -> None:
    """Warn when so many refits put the coefficient at 0 (or 1) that an end of the interval is set by them.

    With at least ``(1 - level) / 2`` of the draws at 0 the basic interval's upper end is 1 (at 1, the lower end
    is 0): the draws cannot bound the coefficient there (see :func:`mixeval.reliability.draws_interval`).

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_boundary_draws(np.r_[np.zeros(300), np.full(700, 0.4)], 0.95)
    >>> print(caught[0].message)  # doctest: +ELLIPSIS
    300 of 1000 bootstrap refits (30%) put phi at 0 (the item variance estimated as 0): ...
    """
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    tail = (1.0 - level) / 2.0
    for at, end, side in ((0.0, 1, "upper"), (1.0, 0, "lower")):
        count = int(np.sum(values == at))
        if values.size and count / values.size >= tail:
            cause = "the item variance estimated as 0" if at == 0 else "every error variance estimated as 0"
            warnings.warn(f"{count} of {values.size} bootstrap refits ({count / values.size:.0%}) put {what} at "
                          f"{at:g} ({cause}): the interval's {side} end is {end} because the refits cannot bound "
                          f"{what} on that side, not because the data show it; the design estimates the components "
                          "poorly (more items or conditions narrow it).", BoundaryWarning,
                          stacklevel=caller_stacklevel())


def _values(fn: Callable[[Mapping[str, float]], float], draws: pd.DataFrame) -> np.ndarray:
    cols = list(draws.columns)
    return np.array([fn(dict(zip(cols, row))) for row in draws.to_numpy()])


#: How each ``method`` of :func:`mixeval.reliability.draws_interval` is named in the interval it returns.
METHOD_NAMES = {"basic-logit": "parametric bootstrap, basic interval on the logit scale",
                "bc": "parametric bootstrap, bias-corrected percentiles",
                "percentile": "parametric bootstrap percentiles"}


def coefficient_interval(fn: Callable[[Mapping[str, float]], float], source: MixedResult, *, level: float = 0.95,
                         method: str = "basic-logit", draws: pd.DataFrame | None = None, n_resamples: int = 1000,
                         random_state: Any = None, progress: bool | None = None) -> ConfidenceInterval:
    """Bootstrap interval of any function of the variance components, e.g. intra-rater reliability.

    ``method``: ``"basic-logit"`` (default), ``"bc"`` or ``"percentile"`` (:func:`mixeval.reliability.draws_interval`).

    Returns
    -------
    ConfidenceInterval
        ``lower``, ``upper``, ``level``, ``method``, ``estimate`` (at the fit's components) and ``se`` (standard
        deviation of the draws).

    Examples
    --------
    >>> from mixeval import lmer
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=15, systems=("A",), n_raters=4)
    >>> fit = lmer("score ~ 1 + (1|item)", df)
    >>> ci = coefficient_interval(lambda c: c["item"] / (c["item"] + c["Residual"]), fit, n_resamples=30, random_state=0)
    >>> bool(0 <= ci.lower <= ci.upper <= 1)
    True
    """
    level = require_level(level)
    d = _draws(source, draws, n_resamples, random_state, progress)
    values = _values(fn, d)
    estimate = float(fn(components_of(source)))
    warn_boundary_draws(values, level, "the coefficient")
    lo, hi = draws_interval(values, estimate, level, method)
    return ConfidenceInterval(lo, hi, level, METHOD_NAMES.get(method, method), estimate, float(np.nanstd(values, ddof=1)))


def phi_interval(source: MixedResult, item: str, n: Mapping[str, float] | None = None, *, kind: str = "absolute",
                 level: float = 0.95, method: str = "basic-logit", draws: pd.DataFrame | None = None, n_resamples: int = 1000,
                 random_state: Any = None, progress: bool | None = None, scale: str | None = None) -> ConfidenceInterval:
    """Parametric-bootstrap interval of phi (Definition 3.2) or the relative coefficient: a
    :class:`~mixeval.ConfidenceInterval` with the ``estimate`` and ``se`` (standard deviation of the draws).

    ``method``: ``"basic-logit"`` (default), ``"bc"`` or ``"percentile"`` (:func:`mixeval.reliability.draws_interval`).
    ``scale``: ``"observed"`` (default for binomial, Poisson and ordinal fits: the coefficient of the mean observed
    score, recomputed from each refit's components, fixed effects and thresholds) or ``"latent"``
    (:func:`mixeval.reliability.phi`). Their coverage by simulation is in the documentation's method notes.

    Examples
    --------
    >>> from mixeval import lmer
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=30, systems=("A",), n_raters=4)
    >>> ci = phi_interval(lmer("score ~ 1 + (1|item)", df), "item", n_resamples=100, random_state=0)
    >>> 0 <= ci.lower < ci.estimate < ci.upper <= 1
    True
    """
    from ..reliability import phi

    level = require_level(level)
    chosen = resolve_scale(source, scale)
    d = _draws(source, draws, n_resamples, random_state, progress)
    moments = draw_moments(source, item, d) if chosen == "observed" else None
    values = phi_draws(d, item, n, kind=kind, moments=moments)
    estimate = float(phi(source, item, n, kind=kind, scale=chosen))
    warn_boundary_draws(values, level, "phi" if kind == "absolute" else "the relative coefficient")
    lo, hi = draws_interval(values, estimate, level, method)
    return ConfidenceInterval(lo, hi, level, f"{METHOD_NAMES.get(method, method)}; {chosen} scale", estimate,
                              float(np.nanstd(values, ddof=1)))


def phi_draws(draws: pd.DataFrame, item: str, n: Mapping[str, float] | None = None, *,
              kind: str = "absolute", moments: list | None = None) -> np.ndarray:
    """phi of every row of ``draws`` at sample sizes ``n`` (vectorised); on the observed scale with ``moments``
    (:func:`mixeval.reliability.draw_moments`).

    Notes
    -----
    The error variance of Definition 3.2 is linear in the components, ``s2_Delta = sum_c w_c(n) s2_c``; the
    weights are those of :func:`mixeval.reliability.error_variance` at unit components, so
    ``phi = s2_item / (s2_item + D w)`` for the matrix ``D`` of draws.

    Examples
    --------
    >>> d = pd.DataFrame({"s": [4.0, 1.0], "r": [1.0, 1.0], "Residual": [1.0, 2.0]})
    >>> phi_draws(d, "s", {"r": 2}).round(3).tolist()
    [0.8, 0.4]
    """
    from ..reliability import _phi_draws

    return _phi_draws(draws, item, n, kind=kind, moments=moments)


def dstudy_intervals(source: MixedResult, item: str, grid: Mapping[str, Sequence[int]], *, level: float = 0.95,
                     method: str = "basic-logit", target: float | None = None, draws: pd.DataFrame | None = None,
                     n_resamples: int = 1000,
                     random_state: Any = None, progress: bool | None = None, scale: str | None = None) -> pd.DataFrame:
    """The D-study table (:func:`mixeval.reliability.dstudy`) with an interval for every cell.

    ``method``: ``"basic-logit"`` (default), ``"bc"`` or ``"percentile"`` (:func:`mixeval.reliability.draws_interval`).
    ``scale``: as :func:`phi_interval` (``attrs["scale"]`` names it).

    Returns
    -------
    DataFrame
        Facet columns, ``phi``, ``phi_lower``, ``phi_upper``, ``phi_relative``, ``phi_relative_lower``,
        ``phi_relative_upper``, and with ``target`` the confidence that the design reaches it
        (``p_reach``, ``p_reach_relative``; :func:`mixeval.reliability.reach_probability` with the same ``method``).

    Examples
    --------
    >>> from mixeval import lmer
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=15, systems=("A",), n_raters=4)
    >>> fit = lmer("score ~ 1 + (1|item) + (1|rater)", df)
    >>> t = dstudy_intervals(fit, "item", {"rater": [1, 2]}, n_resamples=30, random_state=0)
    >>> list(t.columns[:4])
    ['rater', 'phi', 'phi_lower', 'phi_upper']
    """
    from ..reliability import dstudy

    level = require_level(level)
    chosen = resolve_scale(source, scale)
    d = _draws(source, draws, n_resamples, random_state, progress)
    moments = draw_moments(source, item, d) if chosen == "observed" else None
    table = dstudy(source, item, grid, scale=chosen)
    names = list(grid)
    rows: dict[str, list[float]] = {c: [] for c in ("phi_lower", "phi_upper", "phi_relative_lower", "phi_relative_upper",
                                                    "p_reach", "p_reach_relative")}
    for row, (_, cell) in enumerate(table.iterrows()):
        n = {f: float(cell[f]) for f in names}
        for kind, prefix in (("absolute", "phi"), ("relative", "phi_relative")):
            values = phi_draws(d, item, n, kind=kind, moments=moments)
            if row == 0 and kind == "absolute":  # a refit at 0 (or 1) is so in every design: said once
                warn_boundary_draws(values, level, "phi")
            lo, hi = draws_interval(values, float(cell[prefix]), level, method)
            rows[f"{prefix}_lower"].append(lo)
            rows[f"{prefix}_upper"].append(hi)
            key = "p_reach" if kind == "absolute" else "p_reach_relative"
            rows[key].append(reach_probability(values, float(cell[prefix]), target, method) if target is not None
                             else np.nan)
    out = table.assign(**{k: v for k, v in rows.items() if target is not None or not k.startswith("p_reach")})
    order = names + ["phi", "phi_lower", "phi_upper", "phi_relative", "phi_relative_lower", "phi_relative_upper"]
    if target is not None:
        order += ["p_reach", "p_reach_relative"]
    out = out[order]
    out.attrs.update(table.attrs)
    return out
