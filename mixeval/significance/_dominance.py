"""Each variance component's part of the variance of a mean or contrast, and the few-levels warning.

A component estimated from few levels (3 seeds, 4 prompt templates) that carries most of a mean's variance
makes its intervals cover less than their nominal level: z intervals (the default of GLMM and ordinal Studies,
emmeans' for glmer and clmm fits, and of Gaussian Studies above 3,000 rows) most, Kenward-Roger and
Satterthwaite t intervals (a Gaussian Study's default up to 3,000 rows) less. In the idealised model (the
component's estimate a scaled chi-square with ``k = levels - 1`` df carrying a share ``rho`` of the variance
``V``, the rest known, ``X ~ chi2_k``) the 95% intervals cover

    z:  c(k, rho) = E_X[2 Phi(1.96 sqrt(rho X / k + 1 - rho)) - 1],
    t:  c(k, rho) = E_X[2 Phi(t_{d(X)} sqrt(rho X / k + 1 - rho)) - 1],  d(X) = k (1 + (1 - rho) k / (rho X))^2,

``d(X)`` Satterthwaite's df of the estimated variance (Kenward-Roger's for one linear function up to its
adjusted standard error).

The warning must not rest on the estimated share: where the few-level component is underestimated (a seed
variance estimated near 0) the share looks small and the interval is narrowest, so a rule on the estimate is
silent exactly where coverage is worst. :func:`few_levels_warning` therefore evaluates the coverage up to an
upper confidence bound of the share: the component's standard deviation at its one-sided ``UPPER_LEVEL`` profile-
likelihood bound (the others at their estimates) gives the share ``1 - V(sd_j = 0) / V(sd_j = upper)``, and the
warning fires when the lowest idealised coverage over the shares from 0 to that bound falls below
:data:`COVERAGE_FLOOR` (1.5 points short of 95%; for z intervals the coverage at the bound, for t intervals, which
are exact at share 1, possibly an intermediate share). Where the estimated share already falls short the bound is
not computed (it can only widen the range of shares). The firing rule and the coverage with and without it are
measured in the documentation's Estimands page.

The point shares (:func:`component_shares`) come from Euler's theorem: ``V = l' Phi l`` is homogeneous of degree
one in the variance parameters (the residual or working variance included), so component ``j``'s part is
``v_j dV/dv_j = (1/2) d V(t theta_j) / dt`` at ``t = 1``, by a central difference; the parts and the residual
remainder add up to ``V``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
from scipy import optimize, stats

from ..errors import FewLevelsWarning, caller_stacklevel
from ._glmm_ddf import is_glmm
from ._labels import df_label

if TYPE_CHECKING:
    from ..mixed import MixedResult

__all__ = ["COVERAGE_FLOOR", "UPPER_LEVEL", "component_shares", "share_upper_bounds", "idealised_coverage",
           "worst_coverage", "idealised_z_coverage", "few_levels_warning", "warn_few_levels"]

#: Intervals whose coverage in the idealised model falls below this get a :class:`FewLevelsWarning`.
COVERAGE_FLOOR = 0.935

#: One-sided confidence of the upper bound of a component's standard deviation at which the share is taken
#: (the documentation's Estimands page).
UPPER_LEVEL = 0.8

#: Relative step of the central difference in each component's scale.
STEP = 1e-4

#: Methods whose intervals are t intervals on a Satterthwaite-type df (the idealised model's ``t`` line).
_T_METHODS = ("satterthwaite", "kenward-roger")


#: Quantile points of the chi-square expectation of the idealised coverage (midpoint rule in probability).
_POINTS = 4000


@lru_cache(maxsize=64)
def _chi2_points(k: int) -> np.ndarray:
    return stats.chi2.ppf((np.arange(_POINTS) + 0.5) / _POINTS, k)


@lru_cache(maxsize=8192)
def _coverage(k: int, rho: float, t: bool) -> float:
    """``E_X[2 Phi(q(X) sqrt(rho X / k + 1 - rho)) - 1]`` over ``X ~ chi2_k`` by the midpoint rule in probability
    (``_POINTS`` quantiles; error below 1e-4)."""
    x = _chi2_points(k)
    spread = rho * x / k + 1.0 - rho
    if t:
        with np.errstate(divide="ignore"):
            crit = stats.t.ppf(0.975, k * (1.0 + (1.0 - rho) * k / np.maximum(rho * x, 1e-300)) ** 2)
    else:
        crit = stats.norm.ppf(0.975)
    return float(np.mean(2.0 * stats.norm.cdf(crit * np.sqrt(spread)) - 1.0))


def idealised_coverage(levels: int, share: float, method: str = "asymptotic") -> float:
    """Coverage of the 95% interval of ``method`` when a component from ``levels`` levels carries ``share`` of ``V``.

    ``method``: ``"asymptotic"`` (z) or ``"satterthwaite"`` / ``"kenward-roger"`` (t on Satterthwaite's df of
    the estimated variance); other methods are taken as nominal (0.95).

    Examples
    --------
    >>> round(idealised_coverage(3, 1.0), 3), round(idealised_coverage(30, 0.5), 3)
    (0.811, 0.948)
    >>> round(idealised_coverage(3, 1.0, "kenward-roger"), 3)  # the exact t interval of 2 df
    0.95
    """
    share = float(np.clip(share, 0.0, 1.0))
    if levels < 2 or share <= 0 or method not in ("asymptotic", *_T_METHODS):
        return 0.95
    return _coverage(int(levels) - 1, round(share, 3), method in _T_METHODS)


def worst_coverage(levels: int, upper: float, method: str = "asymptotic") -> float:
    """The lowest :func:`idealised_coverage` over the shares in ``[0, upper]`` (every share the data do not rule out).

    z intervals cover less the larger the share, so this is the coverage at ``upper``; t intervals on Satterthwaite's
    df are exact at share 1 (a balanced design's t) and cover least at intermediate shares.

    Examples
    --------
    >>> round(worst_coverage(3, 1.0), 3), round(worst_coverage(3, 1.0, "kenward-roger"), 3)
    (0.811, 0.922)
    """
    upper = float(np.clip(upper, 0.0, 1.0))
    grid = np.unique(np.append(np.arange(0.0, upper, 0.05), upper))
    return min(idealised_coverage(levels, r, method) for r in grid)


def idealised_z_coverage(levels: int, share: float) -> float:
    """:func:`idealised_coverage` of the z interval.

    Examples
    --------
    >>> round(idealised_z_coverage(3, 1.0), 3)
    0.811
    """
    return idealised_coverage(levels, share, "asymptotic")


def _term_slices(fit: MixedResult) -> list[slice]:
    sizes = [t.n_theta for t in fit.model_terms] if is_glmm(fit) else _lmer_sizes(fit)
    ends = np.cumsum(sizes)
    return [slice(int(e - s), int(e)) for s, e in zip(sizes, ends)]


def _lmer_sizes(fit: MixedResult) -> list[int]:
    return [len(names) * (len(names) + 1) // 2 for names in fit.term_coef_names]


def _is_ordinal(fit: MixedResult) -> bool:
    return getattr(getattr(fit, "family", None), "name", None) == "ordinal"


def _covariance_function(fit: MixedResult) -> Callable[[np.ndarray], np.ndarray]:
    """``theta -> Phi(theta)``: the covariance of the parameters ``L`` refers to at random-effects parameters
    ``theta`` (the fit's own parametrisation), the other parameters at their estimates."""
    if _is_ordinal(fit):
        from ..mixed import clmm_covariance_at

        return clmm_covariance_at(fit)
    if is_glmm(fit):
        return fit.beta_covariance_at
    if getattr(fit, "_general", False):  # weighted fits: the general evaluator, over (theta, sigma)
        _, cov = fit._varpar_functions()
        return lambda theta: cov(np.append(theta, fit.sigma))
    s2 = float(fit.sigma2)
    return lambda theta: fit._cov_coef_at(np.concatenate([s2 * np.asarray(theta) ** 2, [s2]]))


def _quadratic(phi: np.ndarray, L: np.ndarray) -> np.ndarray:
    return np.einsum("ij,jk,ik->i", L, phi, L)


def _shares_computable(fit: MixedResult) -> bool:
    if _is_ordinal(fit):
        return all(t.n_coef == 1 for t in fit.problem.re.terms) and int(fit.nAGQ) <= 1 and fit.cov_params is not None
    return is_glmm(fit) or not getattr(fit, "has_slopes", False)


def component_shares(fit: MixedResult, L: np.ndarray) -> np.ndarray | None:
    """Share of each random term in the variance of each row of ``L``, shape (rows, terms); None when it is
    not computed (random slopes).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import lmer
    >>> rng = np.random.default_rng(0)
    >>> d = pd.DataFrame([(i, s) for i in range(30) for s in range(3)], columns=["item", "seed"])
    >>> d["score"] = rng.normal(size=30)[d.item] + rng.normal(0, 2, 3)[d.seed] + rng.normal(size=90)
    >>> shares = component_shares(lmer("score ~ 1 + (1|item) + (1|seed)", d), np.array([[1.0]]))
    >>> bool(shares[0, 1] > 0.8)  # the 3 seeds carry most of the grand mean's variance
    True
    """
    L = np.atleast_2d(np.asarray(L, dtype=float))
    if not _shares_computable(fit):
        return None
    phi = _covariance_function(fit)
    theta = np.asarray(fit.theta, dtype=float)
    base = _quadratic(phi(theta), L)
    out = np.zeros((len(L), len(fit.group_names)))
    for j, part in enumerate(_term_slices(fit)):
        if not np.any(theta[part]):
            continue
        up, down = theta.copy(), theta.copy()
        up[part] *= 1 + STEP
        down[part] *= 1 - STEP
        dV = (_quadratic(phi(up), L) - _quadratic(phi(down), L)) / (2 * STEP)
        with np.errstate(divide="ignore", invalid="ignore"):
            out[:, j] = np.where(base > 0, 0.5 * dV / base, 0.0)
    return np.clip(out, 0.0, 1.0)


# ---------------------------------------------------------------------------------------------- upper bounds
_UPPER_CACHE: dict[tuple[int, int, float], tuple[object, float]] = {}


def _profile_root(zeta: Callable[[float], float], start: float, target: float) -> float:
    """The value above ``start`` where the increasing signed root deviance ``zeta`` reaches ``target``."""
    hi = max(2.0 * start, start + 0.1, 1e-2)
    for _ in range(60):
        if zeta(hi) >= target:
            break
        hi *= 2.0
    else:
        return float("inf")
    if zeta(start) >= target:
        return start
    return float(optimize.brentq(lambda t: zeta(t) - target, start, hi, xtol=1e-6 * max(hi, 1e-3)))


def _lmer_theta_upper(fit: MixedResult, j: int, level: float) -> float:
    """One-sided ``level`` upper profile bound of ``theta_j`` (relative SD) of an lmer fit with random intercepts
    and no evaluator of its own (a weighted fit): the profiled criterion (lme4's ``devfun``, ``fit.criterion_at``)
    minimised over the other ``theta`` at every trial value."""
    theta = np.asarray(fit.theta, dtype=float)
    base = float(fit.criterion_at(theta))
    others = [i for i in range(theta.size) if i != j]
    target = float(stats.norm.ppf(level))
    state = {"x": theta[others].copy()}

    def profiled(t: float) -> float:
        if not others:
            return float(fit.criterion_at(np.array([t])))

        def f(x: np.ndarray) -> float:
            full = theta.copy()
            full[others] = x
            full[j] = t
            return float(fit.criterion_at(full))

        res = optimize.minimize(f, state["x"], method="L-BFGS-B", bounds=[(0.0, None)] * len(others))
        state["x"] = res.x
        return float(res.fun)

    def zeta(t: float) -> float:
        return float(np.sqrt(max(profiled(t) - base, 0.0)))

    return _profile_root(zeta, float(theta[j]), target)


def _theta_upper(fit: MixedResult, j: int, level: float) -> float:
    """One-sided ``level`` upper profile-likelihood bound of random term ``j``'s parameter in the fit's own
    ``theta`` scale (an lmer fit's relative standard deviation, a GLMM's or clmm's standard deviation; cached per
    fit)."""
    if level <= 0.5:  # the median-unbiased "bound": the estimate
        return float(np.asarray(fit.theta, dtype=float)[_term_slices(fit)[j]][0])
    key = (id(fit), j, float(level))
    cached = _UPPER_CACHE.get(key)
    if cached is not None and cached[0] is fit:
        return cached[1]
    try:
        model = fit.model
    except Exception:  # noqa: BLE001 -- a fit without an evaluator (weighted lmer): the profile over lme4's theta
        model = None
    if model is None:
        value = _lmer_theta_upper(fit, j, level)
    else:  # the engine's profile of the standard deviation (lmer: relative to the estimated residual SD)
        from ..mixed import profile_interval

        value = float(profile_interval(model, f"sd_(Intercept)|{fit.group_names[j]}", 2 * level - 1)[1])
        value /= float(np.sqrt(getattr(fit, "scale2", 1.0)))
    if len(_UPPER_CACHE) >= 64:
        _UPPER_CACHE.pop(next(iter(_UPPER_CACHE)))
    _UPPER_CACHE[key] = (fit, value)
    return value


_PHI_CACHE: dict[int, tuple[object, dict[bytes, np.ndarray]]] = {}


def _cached_covariance(fit: MixedResult) -> Callable[[np.ndarray], np.ndarray]:
    """:func:`_covariance_function` with its values kept per fit and ``theta`` (the means and the contrasts of
    one Study ask for the same ``theta``)."""
    entry = _PHI_CACHE.get(id(fit))
    if entry is None or entry[0] is not fit:
        if len(_PHI_CACHE) >= 16:
            _PHI_CACHE.pop(next(iter(_PHI_CACHE)))
        entry = (fit, {})
        _PHI_CACHE[id(fit)] = entry
    values, phi = entry[1], _covariance_function(fit)

    def at(theta: np.ndarray) -> np.ndarray:
        key = np.asarray(theta, dtype=float).tobytes()
        if key not in values:
            with np.errstate(all="ignore"):
                values[key] = phi(theta)
        return values[key]

    return at


def share_upper_bounds(fit: MixedResult, L: np.ndarray, *, components: list[int] | None = None,
                       level: float = UPPER_LEVEL) -> tuple[np.ndarray, np.ndarray] | None:
    """Each random term's share of the variance of each row of ``L`` at the estimates and at an upper bound.

    Returns
    -------
    (estimate, upper) : ndarrays of shape (rows, terms), or None where shares are not computed (random slopes)
        ``estimate``: ``1 - V(sd_j = 0) / V(sd_j = estimate)``; ``upper``: the same with the term's standard
        deviation at its one-sided ``level`` profile-likelihood bound, the other parameters at their estimates.
        ``components`` limits the computation (a profile per term) to those terms; the others are 0.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import lmer
    >>> rng = np.random.default_rng(2)
    >>> item, seed = np.repeat(np.arange(40), 3), np.tile(np.arange(3), 40)
    >>> y = rng.normal(size=40)[item] + rng.normal(0, 0.3, 3)[seed] + rng.normal(size=120)
    >>> fit = lmer("y ~ 1 + (1|item) + (1|seed)", pd.DataFrame({"item": item, "seed": seed, "y": y}))
    >>> estimate, upper = share_upper_bounds(fit, np.array([[1.0]]))
    >>> bool(upper[0, 1] > estimate[0, 1])  # 3 seeds bound their variance loosely from above
    True
    """
    L = np.atleast_2d(np.asarray(L, dtype=float))
    if not _shares_computable(fit):
        return None
    phi = _cached_covariance(fit)
    theta = np.asarray(fit.theta, dtype=float)
    slices = _term_slices(fit)
    estimate = np.zeros((len(L), len(fit.group_names)))
    upper = estimate.copy()
    v_hat = _quadratic(phi(theta), L)
    for j in range(len(fit.group_names)) if components is None else components:
        part = slices[j]
        zero = theta.copy()
        zero[part] = 0.0
        v0 = _quadratic(phi(zero), L)
        if np.any(theta[part]):
            with np.errstate(divide="ignore", invalid="ignore"):
                estimate[:, j] = np.clip(np.where(v_hat > 0, 1.0 - v0 / v_hat, 0.0), 0.0, 1.0)
            if np.all(estimate[:, j] < 1e-9):  # this term does not enter these rows (it cancels in contrasts)
                continue
        up = theta.copy()
        up[part] = _theta_upper(fit, j, level)
        if not np.isfinite(up[part]).all():
            upper[:, j] = 1.0
            continue
        vup = _quadratic(phi(up), L)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(vup > 0, 1.0 - v0 / vup, 0.0)
        upper[:, j] = np.maximum(estimate[:, j], np.clip(share, 0.0, 1.0))
    return estimate, upper


def few_levels_warning(fit: MixedResult, L: np.ndarray, labels: list[str], *, what: str = "mean",
                       method: str = "asymptotic") -> None:
    """Warn (:class:`~mixeval.errors.FewLevelsWarning`) when a component from few levels may make a row's 95%
    interval (of ``method``) undercover: its lowest coverage in the idealised model over the shares up to the upper
    bound of the component's share (:func:`share_upper_bounds`, :func:`worst_coverage`) falls below
    :data:`COVERAGE_FLOOR`; one warning naming the worst row."""
    levels = list(fit.n_levels)
    candidates = [j for j, n in enumerate(levels) if worst_coverage(n, 1.0, method) < COVERAGE_FLOOR]
    if not candidates:
        return
    def worst_of(shares: np.ndarray):
        worst = None
        for i in range(shares.shape[0]):
            for j in candidates:
                cover = worst_coverage(levels[j], shares[i, j], method)
                if cover < COVERAGE_FLOOR and (worst is None or cover < worst[0]):
                    worst = (cover, i, j)
        return worst

    # the estimated shares first: where they already fall short no bound is needed (it can only widen the range)
    estimated = share_upper_bounds(fit, L, components=candidates, level=0.5)
    if estimated is None:
        return
    point = estimated[0]
    worst = worst_of(point)
    if worst is not None:
        cover, i, j = worst
        share = f"carries an estimated {100 * point[i, j]:.0f}% (its upper confidence bound more)"
    else:
        upper = share_upper_bounds(fit, L, components=candidates)[1]
        worst = worst_of(upper)
        if worst is None:
            return
        cover, i, j = worst
        share = (f"may carry up to {100 * upper[i, j]:.0f}% ({100 * UPPER_LEVEL:g}% upper confidence bound; estimate "
                 f"{100 * point[i, j]:.0f}%)")
    from ._upper_range import upper_range_problems

    kind = "z" if method == "asymptotic" else f"t ({df_label(method)})"
    if method != "asymptotic":
        remedy = "more levels are the remedy (no df method fixes an interval whose variance rests on so few levels)"
    elif not upper_range_problems(fit):
        remedy = "df='satterthwaite-upper' (experimental) widens the intervals for this case"
    else:
        remedy = "df='satterthwaite' narrows the gap"
    name = fit.group_names[j]
    warnings.warn(
        f"the variance component {name!r} has {levels[j]} levels and {share} of the variance of the {what} "
        f"{labels[i]!r}: its 95% {kind} interval may cover as little as {100 * cover:.1f}% (idealised model). "
        f"More levels of {name!r} fix it; {remedy}.",
        FewLevelsWarning, stacklevel=caller_stacklevel())


def _linear_functions(fit: MixedResult, specs: str, by: str | None):
    """Cells and the link-scale (for ordinal fits: latent) linear functions of the marginal means of ``specs``."""
    if _is_ordinal(fit):
        from ._ordinal import latent_linfct

        return latent_linfct(fit, specs, by)
    from ._emmeans import marginal_means

    return marginal_means(fit, specs, by)


def warn_few_levels(fit: MixedResult, specs: str, by: str | None, *, contrasts: bool, method: str = "asymptotic") -> None:
    """:func:`few_levels_warning` for the link-scale (ordinal: latent) marginal means of ``specs`` (within ``by``),
    or for their pairwise contrasts within each ``by`` group, with intervals of ``method``.

    Examples
    --------
    Five items carry most of the variance of each system's mean: z intervals of the means undercover.

    >>> import warnings
    >>> from mixeval.datasets import toy_scores
    >>> from mixeval.mixed import lmer
    >>> fit = lmer("score ~ system + (1|item)", toy_scores(5, random_state=1))
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_few_levels(fit, "system", None, contrasts=False)
    >>> caught[0].category.__name__, str(caught[0].message)[:54]
    ('FewLevelsWarning', "the variance component 'item' has 5 levels and carries")
    """
    cells, L, specs_list, by_list = _linear_functions(fit, specs, by)
    labels = [" ".join(str(v) for v in row) for row in cells[specs_list].itertuples(index=False)]
    if contrasts:
        group = [tuple(row) for row in cells[by_list].itertuples(index=False)] if by_list else [()] * len(L)
        pairs = [(a, b) for a in range(len(L)) for b in range(a + 1, len(L)) if group[a] == group[b]]
        if not pairs:
            return
        L = np.array([L[a] - L[b] for a, b in pairs])
        labels = [f"{labels[a]} - {labels[b]}" for a, b in pairs]
    few_levels_warning(fit, L, labels, what="contrast" if contrasts else "mean", method=method)
