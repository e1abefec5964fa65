"""Reliability from variance components (book Section 3.3.3): phi, its relatives, the D-study.

Components are keyed by lme4's group names (``"sentence"``, ``"rater:sentence"``,
``"Residual"``); a component's *facets* are the factors in its name other than
the objects of measurement (the item factor). All functions take either a
fitted model (:class:`mixeval.mixed.LmerResult`) or a plain mapping of
variances, so a D-study can be run on published components too.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeGuard

import numpy as np
import pandas as pd
from scipy.special import expit, logit

from ._results import Result
from ._validation import require_level
from .errors import InputError, InputTypeError
from .mixed import MixedResult

if TYPE_CHECKING:
    from ._observed import ObservedMoments

__all__ = [
    "SCALES",
    "resolve_scale",
    "scale_note",
    "draws_interval",
    "reach_probability",
    "components_of",
    "variance_table",
    "phi",
    "error_variance",
    "intra_rater",
    "inter_rater",
    "dstudy",
    "cheapest_design",
    "DesignChoice",
    "latent_components",
    "latent_scale_note",
    "draw_moments",
    "studentized_bound",
    "BOUND_METHODS",
]

RESIDUAL = "Residual"

#: The scales a reliability coefficient is computed on (:func:`resolve_scale`).
SCALES = ("observed", "latent")


def _has_latent_scale(source: object) -> TypeGuard[MixedResult]:
    """A fit whose family does not estimate the residual scale (not Gaussian): its observed and latent coefficients
    differ."""
    return isinstance(source, MixedResult) and not source.family.estimates_scale


def resolve_scale(source: object, scale: str | None) -> str:
    """The scale of a coefficient: ``"observed"`` (the G-theory coefficient of the mean observed score; the default
    for a fit whose family has it, :attr:`~mixeval.mixed.families.Support.scales`) or ``"latent"`` (of the components
    on the link scale; the default for a mapping of components and for a family without an observed scale). For
    Gaussian fits the two coincide (identity link) and ``"latent"`` is reported; a scale the family's table leaves
    out is refused by name.

    Examples
    --------
    >>> resolve_scale({"s": 1.0, "Residual": 1.0}, None)
    'latent'
    >>> resolve_scale({"s": 1.0, "Residual": 1.0}, "observed")
    Traceback (most recent call last):
    ...
    mixeval.errors.InputError: scale='observed' needs a fitted model (the link, the fixed effects and the thresholds
    define the observed score); a mapping of components gives the latent coefficient (scale='latent').
    """
    if scale is not None and scale not in SCALES:
        raise InputError(f"scale must be one of {list(SCALES)} (or None for the default); got {scale!r}.")
    if not isinstance(source, MixedResult):
        if scale == "observed":
            raise InputError("scale='observed' needs a fitted model (the link, the fixed effects and the thresholds "
                             "define the observed score); a mapping of components gives the latent coefficient "
                             "(scale='latent').")
        return "latent"
    if not _has_latent_scale(source):
        return "latent"
    support = source.family.support
    if scale is not None and not support.allows(scale):
        raise support.refusal(source.family.name, scale)
    return scale or ("observed" if support.allows("observed") else "latent")


def scale_note(source: object, scale: str) -> str:
    """One sentence naming the scale of a coefficient (for tables and reports).

    Examples
    --------
    >>> scale_note({"s": 1.0, "Residual": 1.0}, "latent")
    'phi of the variance components as given'
    """
    if not _has_latent_scale(source):
        return ("phi of the scores (Gaussian model: the latent and observed scales coincide)"
                if isinstance(source, MixedResult) else "phi of the variance components as given")
    what = "ratings" if source.family.engine == "clmm" else "scores"
    if scale == "observed":
        return (f"observed scale: phi of the mean observed {what} (the G-theory coefficient over the design's "
                "facets, drawn anew; Gauss-Hermite quadrature over the random effects)")
    return (f"latent ({source.link}) scale: phi of the latent propensity with the distribution-specific residual "
            f"variance, not of the observed {what}")


def components_of(source: MixedResult | Mapping[str, float]) -> dict[str, float]:
    """Variance components as ``{group: variance}`` with ``"Residual"``, from a fit or a mapping.

    Examples
    --------
    >>> components_of({"item": 2.0, "Residual": 1.0})
    {'item': 2.0, 'Residual': 1.0}
    >>> import pandas as pd
    >>> from mixeval.mixed import lmer
    >>> fit = lmer("y ~ 1 + (1|g)", pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")}))
    >>> {k: round(v, 4) for k, v in components_of(fit).items()}  # REML: (MSB - MSW) / 2 and MSW
    {'g': 4.5833, 'Residual': 1.0}
    """
    if isinstance(source, MixedResult):
        spread = getattr(source, "spread", None)
        if spread is not None:
            raise InputError(
                f"reliability (phi, D-studies, the variance table) is defined by the variance components of the "
                f"latent location; this fit's {spread!r} term also spreads each {spread}'s thresholds "
                f"(random_thresholds={spread!r}), which is not a component of the location. Fit the model without "
                "random_thresholds for reliability (the spread test says whether raters use the scale differently), "
                "or pass the location components as a mapping {component: variance} with the 'Residual'.")
        if source.has_slopes:
            slopes = ", ".join(lab for lab, c in zip(source.term_labels, source.term_coef_names) if len(c) > 1)
            raise InputError(
                f"reliability (phi, D-studies, the variance table) needs random intercepts only; the fit has random "
                f"slopes {slopes}. With a slope, a facet's variance depends on the covariate (for (1 + x | g): "
                "Var(b_0 + b_1 x) = s0^2 + 2 x s01 + x^2 s1^2), so it has no single share of the total and phi is "
                "not defined by one number. Fit the intercept-only model for reliability, or evaluate the "
                "components at a covariate value from fit.covariances and pass them as a mapping."
            )
        return source.latent_components
    if not isinstance(source, Mapping):
        raise InputTypeError("pass a fitted model (mixeval.lmer) or a mapping {component: variance}.")
    comps = {str(k): float(v) for k, v in source.items()}
    if RESIDUAL not in comps:
        raise InputError(f"the variance components need a {RESIDUAL!r} entry; got {sorted(comps)}.")
    bad = [k for k, v in comps.items() if not np.isfinite(v) or v < 0]
    if bad:
        raise InputError(f"variance components must be finite and >= 0; check {bad}.")
    return comps


def latent_components(fit: MixedResult) -> dict[str, float]:
    """Variance components of a GLMM on the latent (link) scale, with the distribution-specific variance as ``"Residual"``.

    Notes
    -----
    Nakagawa & Schielzeth (2010, 2017): on the latent scale of a binomial model the residual is the
    variance of the standard logistic distribution, ``pi^2 / 3`` (logit link), or of the standard normal,
    ``1`` (probit link); phi and the D-study computed from these components are reliabilities of the
    latent propensity, not of the observed 0/1 scores. For a Poisson model with log link the observation-level
    variance is the lognormal approximation ``log(1 + 1 / lambda)`` with ``lambda = mean(exp(X beta)) exp(s2 / 2)``
    (``s2`` the summed random-effect variances).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import glmer
    >>> rng = np.random.default_rng(1)
    >>> df = pd.DataFrame({"item": np.repeat(np.arange(60), 4)})
    >>> df["correct"] = (rng.random(240) < 1 / (1 + np.exp(-rng.normal(0, 1.5, 60)[df.item]))).astype(int)
    >>> round(latent_components(glmer("correct ~ 1 + (1|item)", df))["Residual"], 4)  # pi^2 / 3
    3.2899
    """
    return fit.latent_components


def latent_scale_note(fit: MixedResult) -> str:
    """One sentence stating the scale of the variance components of a GLMM or an ordinal model (for tables and
    reports): the family's :attr:`~mixeval.mixed.families.Family.latent_note`, the value of its latent residual
    variance in this fit, and the scale phi is on by default.

    Examples
    --------
    >>> from mixeval.mixed import glmer
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=40, systems=("A", "B"), n_raters=2, response="correct")
    >>> fit = glmer("correct ~ system + (1|item)", df, family="binomial")
    >>> print(latent_scale_note(fit))
    Latent scale of a binomial GLMM: 'Residual' is the distribution-specific variance ... (here, logit link: 3.29). ...
    """
    family = fit.family
    residual = fit.latent_components.get(RESIDUAL, float("nan"))
    what = "rating" if family.engine == "clmm" else "score"
    default = ("phi and the D-study are on the observed scale of the mean " + what + " by default; scale='latent' "
               "gives the reliability of the latent scale, which these shares describe."
               if family.support.allows("observed") else "phi and the D-study are on this latent scale.")
    return f"{family.latent_note.rstrip('.')} (here, {fit.link} link: {residual:.3g}). {default}"


def variance_table(source: MixedResult | Mapping[str, float]) -> pd.DataFrame:
    """The book's variance-component table: component, variance, percent of the total (Tables 3.1-3.12).

    Rows are sorted by decreasing variance with the residual last, as the book prints them.

    Examples
    --------
    >>> variance_table({"item": 3.0, "rater": 1.0, "Residual": 1.0}).percent.tolist()
    [60.0, 20.0, 20.0]
    """
    comps = components_of(source)
    total = sum(comps.values())
    if total <= 0:
        raise InputError("all variance components are zero; the table of percentages is undefined.")
    rows = sorted(((k, v) for k, v in comps.items() if k != RESIDUAL), key=lambda kv: -kv[1])
    rows.append((RESIDUAL, comps[RESIDUAL]))
    return pd.DataFrame(
        {"component": [k for k, _ in rows], "variance": [v for _, v in rows], "percent": [100 * v / total for _, v in rows]}
    )


def _factors(component: str) -> frozenset[str]:
    return frozenset(component.split(":"))


def _check_item(comps: Mapping[str, float], item: str) -> None:
    if item not in comps:
        raise InputError(
            f"the objects of measurement {item!r} are not a variance component; available: "
            f"{', '.join(k for k in comps if k != RESIDUAL)}. Pass item= the factor of the test items."
        )


def _check_n(n: Mapping[str, float], facets: set[str]) -> dict[str, float]:
    out = {}
    for f, v in n.items():
        if f not in facets:
            raise InputError(f"n names {f!r}, which is not a facet of these components; facets: {', '.join(sorted(facets)) or 'none'}.")
        if not (isinstance(v, (int, float, np.integer, np.floating)) and v >= 1):
            raise InputError(f"sample size n[{f!r}] must be a number >= 1; got {v!r}.")
        out[f] = float(v)
    return out


def error_variance(
    source: MixedResult | Mapping[str, float], item: str, n: Mapping[str, float] | None = None, *, kind: str = "absolute"
) -> float:
    """The error variance of Definition 3.2 (absolute) or of Brennan's relative coefficient (footnote 9).

    Notes
    -----
    Absolute: ``sigma2_Delta = sum_c sigma2_c / prod_{f in facets(c)} n_f`` over every component ``c``
    except the items, where ``facets(c)`` are the factors of ``c`` other than the item factor and the
    residual counts every facet. Relative: only components that interact with the items (contain the
    item factor and at least one facet) and the residual.

    Examples
    --------
    >>> v = {"sentence": 4.0, "rater": 1.0, "occasion": 0.5, "rater:sentence": 2.0,
    ...      "occasion:sentence": 1.0, "occasion:rater": 0.5, "Residual": 2.0}
    >>> error_variance(v, "sentence")                   # every non-item component, n = 1
    7.0
    >>> error_variance(v, "sentence", {"rater": 2})     # 1/2 + 0.5 + 2/2 + 1 + 0.5/2 + 2/2
    4.25
    >>> error_variance(v, "sentence", kind="relative")  # rater:sentence + occasion:sentence + Residual
    5.0
    """
    comps = components_of(source)
    _check_item(comps, item)
    if kind not in ("absolute", "relative"):
        raise InputError(f"kind must be 'absolute' or 'relative'; got {kind!r}.")
    facets = {f for c in comps if c != RESIDUAL for f in _factors(c)} - {item}
    sizes = _check_n(n or {}, facets)
    total = 0.0
    for comp, var in comps.items():
        if comp == item:
            continue
        if comp == RESIDUAL:
            total += var / float(np.prod([sizes.get(f, 1.0) for f in facets]))
            continue
        own = _factors(comp) - {item}
        if kind == "relative" and item not in _factors(comp):
            continue
        total += var / float(np.prod([sizes.get(f, 1.0) for f in own]))
    return total


def phi(
    source: MixedResult | Mapping[str, float], item: str, n: Mapping[str, float] | None = None, *, kind: str = "absolute",
    scale: str | None = None,
) -> float:
    """Reliability coefficient phi (Definition 3.2), or the relative coefficient (footnote 9).

    Parameters
    ----------
    source : LmerResult or mapping
        A fitted model, or variance components ``{group: variance}`` including ``"Residual"``.
    item : str
        The objects of measurement (e.g. ``"sentence"``).
    n : mapping, optional
        Sample size per facet (``{"rater": 2, "occasion": 3}``); facets not named count once.
    kind : {"absolute", "relative"}
        Brennan's absolute coefficient (the book's phi) or the relative (generalizability) one.
    scale : {"observed", "latent"}, optional
        For a binomial, Poisson or ordinal fit: the coefficient of the mean observed score (``"observed"``, the
        default: what an average of 0/1 scores, counts or ratings over the design's facets achieves) or of the
        latent propensity (``"latent"``, the components on the link scale with the distribution-specific residual
        variance). A Gaussian fit's two scales coincide; a mapping of components is latent.

    Returns
    -------
    float

    Notes
    -----
    Latent scale: ``phi = sigma2_s / (sigma2_s + sigma2_Delta)`` with, for a rater x instantiation design (Eq. 3.11),
    ``sigma2_Delta = s2_r/n_r + s2_i/n_i + s2_sr/n_r + s2_si/n_i + s2_ri/(n_r n_i) + s2_res/(n_r n_i)``;
    the relative coefficient keeps only ``s2_sr/n_r + s2_si/n_i + s2_res/(n_r n_i)``. With every
    ``n_f = 1`` phi is the items' percentage of the total variance. (The book's companion code for
    Figure 3.3 leaves out ``s2_ri/(n_r n_i)``; Definition 3.2, implemented here, includes it.)

    Observed scale (Brennan 2001; Vispoel et al. 2018): ``phi_obs(n) = var(T_i) / E[(Ybar_i - E T)^2]`` with
    ``T_i`` item ``i``'s expected score over the facets' populations and ``Ybar_i`` the mean of its observed scores
    over ``n`` levels of each facet, drawn anew, computed by Gauss-Hermite quadrature over the random effects
    (:mod:`mixeval._observed`). On the logit scale the coefficient is larger, and describes no average a user
    computes.

    Examples
    --------
    >>> comps = {"s": 4.0, "r": 1.0, "r:s": 2.0, "Residual": 2.0}
    >>> phi(comps, "s")
    0.4444444444444444
    >>> phi(comps, "s", {"r": 2})
    0.6153846153846154
    """
    if resolve_scale(source, scale) == "observed" and isinstance(source, MixedResult):  # a fit, as resolve_scale checked
        from ._observed import observed_coefficient

        _check_n(n or {}, set(_observed_moments(source, item).facets))
        return observed_coefficient(_observed_moments(source, item), n, kind=kind)
    comps = components_of(source)
    _check_item(comps, item)
    s2 = comps[item]
    denom = s2 + error_variance(comps, item, n, kind=kind)
    if denom <= 0:
        raise InputError("all variance components are zero; phi is 0/0 and undefined.")
    return s2 / denom


def _lookup(comps: Mapping[str, float], *factors: str) -> float:
    """Variance of the component made of exactly these factors (any order), 0 if absent."""
    want = frozenset(factors)
    for comp, var in comps.items():
        if comp != RESIDUAL and _factors(comp) == want:
            return var
    return 0.0


def intra_rater(source: MixedResult | Mapping[str, float], item: str, rater: str, occasion: str, n_rater: int = 1) -> float:
    """Intra-rater reliability (book Eq. 3.18): one rater fixed, generalising over instantiations.

    Notes
    -----
    ``(s2_s + s2_sr/n_r) / (s2_s + s2_sr/n_r + s2_si + s2_res/n_r)``. The book prints ``s2_ri`` in the
    denominator of (3.18); its companion code (``stability()``) and Brennan's relative logic use the
    item x instantiation component ``s2_si``, as here: with the rater fixed, the rater's own interaction
    with items is part of the true score and what varies between instantiations of an item is ``s2_si``.

    Examples
    --------
    >>> v = {"sentence": 4.0, "rater": 1.0, "occasion": 0.5, "rater:sentence": 2.0,
    ...      "occasion:sentence": 1.0, "occasion:rater": 0.5, "Residual": 2.0}
    >>> round(intra_rater(v, "sentence", "rater", "occasion"), 4)    # (4 + 2) / (4 + 2 + 1 + 2)
    0.6667
    """
    comps = components_of(source)
    _check_item(comps, item)
    num = comps[item] + _lookup(comps, item, rater) / n_rater
    den = num + _lookup(comps, item, occasion) + comps[RESIDUAL] / n_rater
    return num / den


def inter_rater(source: MixedResult | Mapping[str, float], item: str, rater: str, occasion: str) -> float:
    """Inter-rater reliability (book Eq. 3.19): one instantiation fixed, generalising over raters.

    Notes
    -----
    ``(s2_s + s2_si) / (s2_s + s2_si + s2_sr + s2_res)``.

    Examples
    --------
    >>> v = {"sentence": 4.0, "rater": 1.0, "occasion": 0.5, "rater:sentence": 2.0,
    ...      "occasion:sentence": 1.0, "occasion:rater": 0.5, "Residual": 2.0}
    >>> round(inter_rater(v, "sentence", "rater", "occasion"), 4)    # (4 + 1) / (4 + 1 + 2 + 2)
    0.5556
    """
    comps = components_of(source)
    _check_item(comps, item)
    num = comps[item] + _lookup(comps, item, occasion)
    return num / (num + _lookup(comps, item, rater) + comps[RESIDUAL])


def dstudy(
    source: MixedResult | Mapping[str, float], item: str, grid: Mapping[str, Sequence[int]], *,
    scale: str | None = None,
) -> pd.DataFrame:
    """phi (absolute and relative) over a grid of facet sample sizes (book Figure 3.3).

    Parameters
    ----------
    source, item
        As for :func:`phi`.
    grid : mapping
        ``{"rater": range(1, 13), "occasion": range(1, 6)}``.
    scale : {"observed", "latent"}, optional
        As for :func:`phi` (observed by default for binomial, Poisson and ordinal fits).

    Returns
    -------
    DataFrame
        One row per design: a column per facet, ``phi`` (absolute) and ``phi_relative``; ``attrs["scale"]`` names
        the scale and ``attrs["note"]`` says what it means.

    Examples
    --------
    >>> t = dstudy({"s": 4.0, "r": 1.0, "r:s": 2.0, "Residual": 2.0}, "s", {"r": [1, 2, 3]})
    >>> t.round(3).values.tolist()
    [[1.0, 0.444, 0.5], [2.0, 0.615, 0.667], [3.0, 0.706, 0.75]]
    """
    chosen = resolve_scale(source, scale)
    if not grid:
        raise InputError("grid must name at least one facet, e.g. {'rater': range(1, 13)}.")
    names = list(grid)
    if chosen == "observed" and isinstance(source, MixedResult):  # a fit, as resolve_scale checked
        from ._observed import observed_coefficient

        moments = _observed_moments(source, item)

        def coefficient(n, kind):
            return observed_coefficient(moments, n, kind=kind)
        facets = set(moments.facets)
    else:
        comps = components_of(source)

        def coefficient(n, kind):
            return phi(comps, item, n, kind=kind)
        facets = {f for c in comps if c != RESIDUAL for f in _factors(c)} - {item}
    rows = []
    for combo in itertools.product(*(list(grid[f]) for f in names)):
        n = _check_n(dict(zip(names, combo)), facets)
        rows.append({**{f: combo[i] for i, f in enumerate(names)}, "phi": coefficient(n, "absolute"),
                     "phi_relative": coefficient(n, "relative")})
    table = pd.DataFrame(rows)
    table.attrs.update(scale=chosen, note=scale_note(source, chosen))
    return table


_MOMENTS_CACHE: dict[tuple[int, str], tuple[object, object]] = {}


def _observed_moments(fit: MixedResult, item: str):
    """The fit's :class:`~mixeval._observed.ObservedMoments` (cached per fit and item)."""
    from ._observed import observed_moments

    components_of(fit)  # the fit's refusals (random slopes, random thresholds) first
    key = (id(fit), item)
    cached = _MOMENTS_CACHE.get(key)
    if cached is not None and cached[0] is fit:
        return cached[1]
    moments = observed_moments(fit, item)
    if len(_MOMENTS_CACHE) >= 32:
        _MOMENTS_CACHE.pop(next(iter(_MOMENTS_CACHE)))
    _MOMENTS_CACHE[key] = (fit, moments)
    return moments


@dataclass(frozen=True, eq=False)
class DesignChoice(Result):
    """The cheapest design reaching a target phi, with every feasible Pareto-optimal alternative.

    Attributes
    ----------
    n : dict
        Sample size per facet of the chosen design (None if no design in the search space reaches the target).
    phi : float
        Its coefficient.
    cost : float
        Its cost.
    frontier : DataFrame
        The designs that reach the target and are not dominated (no other feasible design is at most as
        large in every facet), sorted by cost. With ``confidence``: also ``phi_lower`` (the one-sided lower
        confidence bound) and ``p_reach`` (the confidence that the design's phi reaches the target).
    confidence : float or None
        The confidence of the lower bound the choice was made on (None: on the point estimate).
    scale : str
        ``"observed"`` or ``"latent"``: the scale of phi (:func:`resolve_scale`) of a binomial, Poisson or ordinal
        fit, named in the summary; ``""`` where the two coincide (Gaussian fits, a mapping of components).
    bound : str
        With ``confidence``: how the lower bound was computed (``"studentized"`` or ``"basic-logit"``).
    phi_lower, p_reach : float
        The chosen design's lower bound and probability of reaching the target (NaN without ``confidence``).
    designs : DataFrame or None
        Every design of the search space with ``phi``, ``phi_lower``, ``p_reach`` and ``cost`` (with ``confidence``).

    Examples
    --------
    With ``sigma^2_s = 4``, ``sigma^2_r = 1``, ``sigma^2_rs + sigma^2_e = 4``: ``phi = 4 / (4 + 5 / n_r)``,
    so three raters reach 0.7 (two give 0.615):

    >>> c = cheapest_design({"s": 4.0, "r": 1.0, "r:s": 2.0, "Residual": 2.0}, "s", 0.7, max_n={"r": 10})
    >>> c.n, round(c.phi, 4), c.kind
    ({'r': 3}, 0.7059, 'absolute')
    """

    target: float
    kind: str
    n: dict[str, int] | None
    phi: float
    cost: float
    frontier: pd.DataFrame = field(repr=False)
    confidence: float | None = None
    phi_lower: float = float("nan")
    p_reach: float = float("nan")
    designs: pd.DataFrame | None = field(default=None, repr=False)
    scale: str = ""
    bound: str = ""

    @property
    def reached(self) -> bool:
        return self.n is not None

    def summary(self) -> str:
        what = f"{self.kind} phi" + (f" ({self.scale} scale)" if self.scale else "")
        if self.n is None:
            if self.confidence is not None:
                return (f"no design in the search space has a {100 * self.confidence:g}% lower confidence bound of "
                        f"{what} >= {self.target}")
            return f"no design in the search space reaches {what} >= {self.target}"
        sizes = ", ".join(f"{k} = {v}" for k, v in self.n.items())
        if self.confidence is not None:
            return (f"cheapest design whose {100 * self.confidence:g}% lower bound ({self.bound}) of {what} reaches "
                    f"{self.target}: {sizes} (phi = {self.phi:.4f}, lower bound = {self.phi_lower:.4f}, "
                    f"P(phi >= {self.target}) = {self.p_reach:.3f}, cost = {self.cost:g})")
        return f"cheapest design with {what} >= {self.target}: {sizes} (phi = {self.phi:.4f}, cost = {self.cost:g})"


def cheapest_design(
    source: MixedResult | Mapping[str, float],
    item: str,
    target: float = 0.8,
    *,
    max_n: Mapping[str, int],
    cost_per_unit: Mapping[str, float] | None = None,
    cost_per_observation: float = 0.0,
    kind: str = "absolute",
    confidence: float | None = None,
    draws: pd.DataFrame | None = None,
    scale: str | None = None,
    bound: str | None = None,
) -> DesignChoice:
    """The cheapest design (facet sample sizes) whose phi reaches ``target``.

    Parameters
    ----------
    source, item
        As for :func:`phi`.
    target : float
        Required coefficient, e.g. 0.8 (Jiang 2018's threshold).
    max_n : mapping
        Largest sample size to consider per facet, e.g. ``{"rater": 12, "occasion": 5}``.
    cost_per_unit : mapping, optional
        Cost of one more level of a facet per item (a rater, a run, an instantiation).
    cost_per_observation : float
        Cost of one observation per item (``prod n_f`` observations per item), e.g. one rating.
    kind : {"absolute", "relative"}
    confidence : float, optional
        Choose on the one-sided lower confidence bound of phi instead of its estimate: the cheapest design
        whose bound at this confidence (e.g. 0.9) reaches ``target``. Needs ``draws``.
    draws : DataFrame, optional
        Bootstrap draws of the components, ``mixeval.uncertainty.component_draws(fit)`` (``Study.cheapest_design``
        makes them itself).
    scale : {"observed", "latent"}, optional
        As for :func:`phi` (observed by default for binomial, Poisson and ordinal fits); the choice names it.
    bound : {"studentized", "basic-logit"}, optional
        How the lower bound is computed with ``confidence``: the bootstrap-t bound on the logit scale
        (:func:`studentized_bound`; the default for REML random-intercept lmer fits on the latent scale, whose
        components have an expected-information covariance at every draw) or the basic bootstrap bound on the logit
        scale (:func:`draws_interval`; the default elsewhere). Coverage of both: the documentation's Estimands page.

    Notes
    -----
    ``cost(n) = sum_f c_f n_f + c_obs prod_f n_f`` per item. With ``confidence`` the bound of a design is
    the one-sided bound at that confidence from the bootstrap draws (the basic bootstrap bound on the logit
    scale, :func:`draws_interval`) and ``p_reach`` the confidence that the design reaches the target
    (:func:`reach_probability`: at least ``confidence`` exactly when the bound reaches it). All designs in the grid are evaluated (the grid
    is small); ties in cost are broken by higher phi. Without any cost, cost = number of observations.

    Examples
    --------
    >>> comps = {"s": 4.0, "r": 1.0, "r:s": 2.0, "Residual": 2.0}
    >>> cheapest_design(comps, "s", 0.7, max_n={"r": 10}).n
    {'r': 3}
    """
    target = require_level(target, "target")
    costs = dict(cost_per_unit or {})
    unknown = set(costs) - set(max_n)
    if unknown:
        raise InputError(f"cost_per_unit names {sorted(unknown)}, which are not in max_n {sorted(max_n)}.")
    per_obs = cost_per_observation if (costs or cost_per_observation) else 1.0
    grid = {f: range(1, int(m) + 1) for f, m in max_n.items()}
    chosen = resolve_scale(source, scale)
    label = chosen if isinstance(source, MixedResult) and _has_latent_scale(source) else ""  # Gaussian: one scale
    table = dstudy(source, item, grid, scale=chosen)
    col = "phi" if kind == "absolute" else "phi_relative"
    facets = list(max_n)
    sizes = table[facets].to_numpy(dtype=float)
    table["cost"] = sizes @ np.array([costs.get(f, 0.0) for f in facets]) + per_obs * sizes.prod(axis=1)
    crit = col
    if confidence is not None:
        confidence = require_level(confidence, "confidence", example=0.9)
        if not isinstance(draws, pd.DataFrame) or RESIDUAL not in draws.columns:
            raise InputError("confidence= needs draws=: bootstrap draws of the components, e.g. "
                             "mixeval.uncertainty.component_draws(fit) (Study.cheapest_design makes them itself).")
        fit = source if isinstance(source, MixedResult) else None  # observed and studentized need a fit (checked)
        moments = draw_moments(fit, item, draws) if fit is not None and chosen == "observed" else None
        bound = _bound_method(source, chosen, bound)
        student = _student_inputs(fit, draws) if fit is not None and bound == "studentized" else None
        table["phi_lower"], table["p_reach"] = _lower_bounds(draws, item, table, facets, kind, confidence, target,
                                                             moments, student)
        crit = "phi_lower"
    elif bound is not None:
        raise InputError(f"bound={bound!r} chooses how the lower confidence bound is computed; it needs confidence=.")
    feasible = table[table[crit] >= target]
    designs = table.copy() if confidence is not None else None
    if feasible.empty:
        return DesignChoice(target, kind, None, float("nan"), float("nan"), feasible.reset_index(drop=True),
                            confidence=confidence, designs=designs, scale=label, bound=bound or "")
    fs = feasible[facets].to_numpy()
    dominated = [bool(np.any(np.all(fs <= row, axis=1) & np.any(fs < row, axis=1))) for row in fs]
    frontier = feasible[~np.array(dominated)].sort_values(["cost", crit], ascending=[True, False]).reset_index(drop=True)
    best = frontier.iloc[0]
    return DesignChoice(
        target=target,
        kind=kind,
        n={f: int(best[f]) for f in facets},
        phi=float(best[col]),
        cost=float(best["cost"]),
        frontier=frontier,
        confidence=confidence,
        phi_lower=float(best["phi_lower"]) if confidence is not None else float("nan"),
        p_reach=float(best["p_reach"]) if confidence is not None else float("nan"),
        designs=designs,
        scale=label,
        bound=bound or "",
    )


def _bound_method(source: object, scale: str, bound: str | None) -> str:
    """``bound`` of :func:`cheapest_design`, checked; None: studentized where the draws' covariances exist."""
    from .significance.engine import random_intercept_problem

    available = scale == "latent" and isinstance(source, MixedResult) and random_intercept_problem(source) is None
    if bound is None:
        return "studentized" if available else "basic-logit"
    if bound not in BOUND_METHODS:
        raise InputError(f"bound must be one of {list(BOUND_METHODS)}; got {bound!r}.")
    if bound == "studentized" and not available:
        raise InputError("bound='studentized' needs the components' covariance at every bootstrap draw, computed "
                         "for REML random-intercept lmer fits on the latent scale; use bound='basic-logit'.")
    return bound


def _student_inputs(fit: MixedResult, draws: pd.DataFrame) -> tuple:
    """Each draw's expected-information covariance of its components, the fit's components and theirs, in the
    draws' column order."""
    from .significance import expected_variance_covariance

    cols = list(draws.columns)
    order = [[*fit.group_names, RESIDUAL].index(c) for c in cols]
    covs = np.array([expected_variance_covariance(fit, dict(zip(cols, row)))[np.ix_(order, order)]
                     for row in draws.to_numpy(dtype=float)])
    comps = components_of(fit)
    return covs, comps, expected_variance_covariance(fit)[np.ix_(order, order)]



def draw_moments(fit: MixedResult, item: str, draws: pd.DataFrame) -> list:
    """The observed-scale moments (:class:`mixeval._observed.ObservedMoments`) of every bootstrap draw: its
    components with its fixed effects (and thresholds, the family's parameters), which
    :func:`mixeval.uncertainty.component_draws` keeps in ``draws.attrs["coef"]`` (and ``attrs["alpha"]``,
    ``attrs["family_par"]``).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval import glmer
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame([(i, s) for i in range(40) for s in range(4)], columns=["item", "seed"])
    >>> df["correct"] = (2 * rng.normal(size=40)[df.item] + rng.logistic(size=160) > -1).astype(int)
    >>> fit = glmer("correct ~ 1 + (1|item)", df, family="binomial")
    >>> draws = fit.varcorr_frame()[["grp", "vcov"]].set_index("grp").T.reset_index(drop=True)
    >>> draws.attrs["coef"] = np.array([fit.coef])
    >>> len(draw_moments(fit, "item", draws))  # one draw: the fit itself
    1
    """
    from ._observed import observed_moments

    coef = draws.attrs.get("coef")
    if coef is None or len(coef) != len(draws):
        raise InputError("observed-scale intervals need each refit's fixed effects: pass the draws of "
                         "mixeval.uncertainty.component_draws(fit) (they keep them), or use scale='latent'.")
    alpha, psi = draws.attrs.get("alpha"), draws.attrs.get("family_par")
    cols = list(draws.columns)
    out: list[ObservedMoments | None] = []
    for i, row in enumerate(draws.to_numpy(dtype=float)):
        comps = dict(zip(cols, row))
        if not np.all(np.isfinite(row)):
            out.append(None)
            continue
        out.append(observed_moments(fit, item, components=comps, coef=np.asarray(coef[i]),
                                    alpha=None if alpha is None else np.asarray(alpha[i]),
                                    family_par=None if psi is None else np.asarray(psi[i])))
    return out


def _phi_draws(draws: pd.DataFrame, item: str, n: Mapping[str, float] | None = None, *,
               kind: str = "absolute", moments: list | None = None) -> np.ndarray:
    """phi of every row of ``draws`` (one column per component and ``"Residual"``) at sample sizes ``n``; with
    ``moments`` (:func:`draw_moments`), on the observed scale.

    The error variance is linear in the components, ``s2_Delta = sum_c w_c(n) s2_c``, with the weights of
    :func:`error_variance` at unit components, so ``phi = s2_item / (s2_item + D w)`` for the matrix ``D``.
    """
    if moments is not None:
        from ._observed import observed_coefficient

        values = []
        for m in moments:
            try:
                values.append(np.nan if m is None else observed_coefficient(m, n, kind=kind))
            except InputError:  # a refit whose scores do not vary: no coefficient
                values.append(np.nan)
        return np.array(values, dtype=float)
    cols = list(draws.columns)
    if item not in cols:
        raise InputError(f"the objects of measurement {item!r} are not a component of the draws; columns: {cols}.")
    w = np.array([error_variance({c: float(c == k) for c in cols}, item, n, kind=kind) for k in cols])
    D = draws.to_numpy(dtype=float)
    s2 = D[:, cols.index(item)]
    with np.errstate(invalid="ignore", divide="ignore"):
        return s2 / (s2 + D @ w)


#: interval methods of the bootstrap draws of a coefficient (the first is the default)
INTERVAL_METHODS = ("basic-logit", "bc", "percentile")


def draws_interval(values: np.ndarray, estimate: float, level: float, method: str = "basic-logit") -> tuple[float, float]:
    """Interval of a coefficient in [0, 1] from its bootstrap draws.

    Parameters
    ----------
    values : ndarray
        The coefficient recomputed from each bootstrap refit's components (non-finite draws are left out).
    estimate : float
        The coefficient at the fit's components.
    level : float
        Two-sided confidence level.
    method : {"basic-logit", "bc", "percentile"}
        The basic bootstrap interval on the logit scale (default), the bias-corrected percentile interval,
        or the plain percentile interval.

    Returns
    -------
    (lower, upper)

    Notes
    -----
    ``"basic-logit"``: with ``L = logit`` and ``q_a`` the ``a`` quantile of ``L(values)``, the interval is
    ``expit(2 L(estimate) - q_{(1+level)/2}), expit(2 L(estimate) - q_{(1-level)/2})`` (Davison & Hinkley 1997,
    Eq. 5.6, on a transformed scale). It is exact when ``L(estimate) - L(coefficient)`` is a pivot, and phi
    and its kin are close to one: ``logit(phi) = log s2_item - log s2_error``, and on the log scale the error
    of a variance estimate hardly depends on the variance (``log(chi2_nu / nu)``). The percentile interval
    reads the same quantiles the other way round; when the estimate is biased and skewed (a variance
    estimated from 20 items) it sits too low and undercovers on such designs, and the BC correction
    (``Phi(2 z0 -+ z)`` quantiles, ``z0 = Phi^{-1}(share of draws below the estimate)``, Efron 1982) recovers
    only part of it (a coverage study by simulation). Quantiles commute with the monotone logit, so
    only the two quantiles of the draws enter. When at least ``(1 - level) / 2`` of the refits put the
    coefficient at 0 (the item variance estimated as 0), its lower quantile is 0, the reflected upper end
    is unbounded and the upper end is 1 (the draws cannot bound the coefficient from above; a fallback to
    the percentile end there undercovered badly in the coverage study); at 1, symmetrically, the lower end is 0.
    Where the estimate itself is 0 or 1 there is no pivot and the interval is the percentile interval.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> values = 1 / (1 + np.exp(-(0.5 + 0.3 * rng.standard_normal(4000))))  # symmetric on the logit scale
    >>> basic, pct = draws_interval(values, 1 / (1 + np.exp(-0.5)), 0.95), draws_interval(values, 0.6225, 0.95, "percentile")
    >>> bool(np.allclose(basic, pct, atol=0.01))  # a symmetric pivot: basic and percentile agree
    True
    >>> lo, hi = draws_interval(np.linspace(0.2, 0.6, 401), 0.5, 0.9)  # draws mostly below the estimate
    >>> bool(hi > 0.6)  # the interval reaches above them
    True
    """
    from .resampling import bca_interval, percentile_interval  # imported when intervals are asked for

    if method not in INTERVAL_METHODS:
        raise InputError(f"`method` must be one of {INTERVAL_METHODS}; got {method!r}.")
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return float("nan"), float("nan")
    if method == "percentile":
        ci = percentile_interval(finite, level)
        return float(ci.lower), float(ci.upper)
    if method == "bc":
        ci = bca_interval(finite, estimate, None, level)
        return float(ci.lower), float(ci.upper)
    if np.any((finite < 0) | (finite > 1)) or not 0 <= estimate <= 1:
        raise InputError("method='basic-logit' is for coefficients in [0, 1]; use method='bc' or 'percentile' "
                         "for other functions of the components.")
    a = (1.0 - level) / 2.0
    q_lo, q_hi = np.quantile(finite, [a, 1.0 - a])
    if not 0.0 < estimate < 1.0:  # no logit pivot at an estimate on the boundary
        return float(q_lo), float(q_hi)
    centre = 2.0 * logit(estimate)
    lower = 0.0 if q_hi >= 1.0 else float(expit(centre - logit(q_hi)))
    upper = 1.0 if q_lo <= 0.0 else float(expit(centre - logit(q_lo)))
    return lower, upper


def reach_probability(values: np.ndarray, estimate: float, target: float, method: str = "basic-logit") -> float:
    """The confidence that a coefficient reaches ``target``: the largest ``c`` whose one-sided lower bound
    (:func:`draws_interval` at level ``2c - 1``) is at least ``target``.

    Notes
    -----
    ``"percentile"``: the share of draws at or above ``target``; ``"bc"``: ``Phi(2 z0 - Phi^{-1}(G(target)))``
    with ``G`` the draws' distribution function; ``"basic-logit"``: the share of draws at or below
    ``expit(2 logit(estimate) - logit(target))`` (the reflected draws that reach ``target``), or the
    percentile share where the estimate is 0 or 1. So a design's ``p_reach`` is at least 0.9 exactly when
    its 90 % lower bound reaches the target (up to the interpolation between draws).

    Examples
    --------
    >>> import numpy as np
    >>> values = np.linspace(0.0, 1.0, 101)
    >>> round(reach_probability(values, 0.5, 0.805, "percentile"), 3)  # 20 of 101 draws at or above 0.805
    0.198
    >>> round(reach_probability(values, 0.5, 0.805), 3)  # draws symmetric about the estimate on the logit scale
    0.198
    """
    if method not in INTERVAL_METHODS:
        raise InputError(f"`method` must be one of {INTERVAL_METHODS}; got {method!r}.")
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return float("nan")
    if method == "bc":
        from scipy.special import ndtr, ndtri

        share_below = (np.sum(finite < estimate) + 0.5 * np.sum(finite == estimate)) / finite.size
        z0 = ndtri(np.clip(share_below, 0.5 / finite.size, 1 - 0.5 / finite.size))
        g = np.clip(np.mean(finite < target), 0.5 / finite.size, 1 - 0.5 / finite.size)
        return float(ndtr(2.0 * z0 - ndtri(g)))
    if method == "basic-logit" and 0.0 < estimate < 1.0 and 0.0 < target < 1.0:
        return float(np.mean(finite <= expit(2.0 * logit(estimate) - logit(target))))
    return float(np.mean(finite >= target))


def _lower_bounds(draws: pd.DataFrame, item: str, table: pd.DataFrame, facets: list[str], kind: str,
                  confidence: float, target: float, moments: list | None = None,
                  student: tuple | None = None) -> tuple[np.ndarray, np.ndarray]:
    """One-sided lower confidence bound of phi and the confidence that it reaches ``target``, per design: the
    bootstrap-t bound of :func:`studentized_bound` with ``student`` (the draws' and the fit's covariances of the
    components), else the lower end of the two-sided :func:`draws_interval` at level ``2 confidence - 1`` with
    :func:`reach_probability`."""
    lower, prob = [], []
    col = "phi" if kind == "absolute" else "phi_relative"
    for _, cell in table.iterrows():
        n = {f: float(cell[f]) for f in facets}
        if student is not None:
            bound, reach = studentized_bound(draws, item, n, kind, confidence, target, *student)
            lower.append(bound)
            prob.append(reach)
            continue
        values = _phi_draws(draws, item, n, kind=kind, moments=moments)
        lower.append(draws_interval(values, float(cell[col]), 2.0 * confidence - 1.0)[0])
        prob.append(reach_probability(values, float(cell[col]), target))
    return np.array(lower), np.array(prob)


#: How ``cheapest_design(confidence=)`` bounds phi from below (the first is the default where available).
BOUND_METHODS = ("studentized", "basic-logit")


def _logit_phi_and_gradient(D: np.ndarray, cols: list[str], item: str, n: Mapping[str, float] | None,
                            kind: str) -> tuple[np.ndarray, np.ndarray]:
    """``logit phi`` of every row of the components ``D`` and its gradient in the components:
    ``logit phi = log s2_item - log s2_error`` with ``s2_error = D w`` linear in the components."""
    w = np.array([error_variance({c: float(c == k) for c in cols}, item, n, kind=kind) for k in cols])
    s2 = D[:, cols.index(item)]
    err = D @ w
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.log(s2) - np.log(err)
        grad = -w[None, :] / err[:, None]
        grad[:, cols.index(item)] += 1.0 / s2
    return value, grad


def studentized_bound(draws: pd.DataFrame, item: str, n: Mapping[str, float] | None, kind: str, confidence: float,
                      target: float, covariances: np.ndarray, fit_components: Mapping[str, float],
                      fit_covariance: np.ndarray) -> tuple[float, float]:
    """The bootstrap-t lower confidence bound of phi on the logit scale and the confidence that phi reaches
    ``target``.

    Parameters
    ----------
    draws : DataFrame
        Bootstrap draws of the components (:func:`mixeval.uncertainty.component_draws`).
    covariances : ndarray, shape (B, m, m)
        The asymptotic covariance of each draw's components (in the columns' order), e.g. the expected-information
        covariance :func:`mixeval.significance.expected_variance_covariance` at the draw's components.
    fit_components, fit_covariance
        The fit's components and their covariance.

    Notes
    -----
    ``t_b = (logit phi_b - logit phi_hat) / se_b`` with ``se_b`` the delta-method standard error of ``logit phi``
    at draw ``b`` (``g' W_b g``, ``g`` the gradient of ``logit phi = log s2_item - log s2_error``); the bound is
    ``expit(logit phi_hat - q_c se_hat)`` with ``q_c`` the ``confidence`` quantile of the ``t_b`` (Efron & Tibshirani
    1993, ch. 12; a draw with phi at 0 has ``t = -inf``). It corrects the basic bound's tail where the spread of
    ``logit phi``'s estimate varies with phi itself (with few items; its coverage study is in the estimands page,
    "Lower bound of cheapest_design(confidence=)").
    ``confidence`` of phi reaching ``target``: the share of ``t_b`` at or below
    ``(logit phi_hat - logit target) / se_hat``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(1)
    >>> draws = pd.DataFrame({"item": rng.gamma(50, 1 / 50, 400), "Residual": rng.gamma(50, 1 / 50, 400)})
    >>> cov = np.tile(np.diag([0.02, 0.02]), (400, 1, 1))
    >>> bound, conf = studentized_bound(draws, "item", {}, "absolute", 0.9, 0.3, cov, {"item": 1.0, "Residual": 1.0},
    ...                                 np.diag([0.02, 0.02]))
    >>> bool(0.3 < bound < 0.5), bool(conf > 0.9)  # phi_hat = 0.5 with a narrow spread
    (True, True)
    """
    cols = list(draws.columns)
    D = draws.to_numpy(dtype=float)
    est, g_hat = _logit_phi_and_gradient(np.array([[float(fit_components[c]) for c in cols]]), cols, item, n, kind)
    se_hat = float(np.sqrt(g_hat[0] @ fit_covariance @ g_hat[0]))
    values, grads = _logit_phi_and_gradient(D, cols, item, n, kind)
    with np.errstate(invalid="ignore"):
        se = np.sqrt(np.einsum("bi,bij,bj->b", grads, covariances, grads))
        t = (values - est[0]) / se
    t = np.where(np.isneginf(values), -np.inf, t)  # phi_b = 0: below every bound
    t = t[~np.isnan(t)]
    if np.isneginf(est[0]):  # the item variance estimated as 0: nothing bounds phi away from 0
        return 0.0, 0.0
    if not (np.isfinite(est[0]) and np.isfinite(se_hat) and se_hat > 0 and t.size):
        return float("nan"), float("nan")
    q = float(np.quantile(t, confidence))
    bound = float(expit(est[0] - q * se_hat))
    return bound, float(np.mean(t <= (est[0] - logit(target)) / se_hat))
