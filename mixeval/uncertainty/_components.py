"""Power for planning without data: the assumed model from variance components, a family and an effect.

Stages: :func:`check_components` validates the components and the design sizes; :func:`marginal_mean` is a system's
population-averaged mean on the response scale (the random effects integrated out by Gauss-Hermite quadrature);
:func:`intercept_for` and :func:`delta_for` solve it for the intercept of a baseline and the link-scale difference
of a response-scale effect; :func:`power_from_components` builds the :class:`~._power_design.PowerSpec` and runs the
simulation (:func:`~._power.run_power`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.optimize import brentq

from .._validation import require_positive_int
from ..errors import InputError
from ..mixed import Family, get_family
from ._power import PowerResult, run_power
from ._power_design import PowerSpec
from ._power_tests import check_tests

__all__ = ["power_from_components", "marginal_mean", "intercept_for", "delta_for", "check_components"]

SYSTEM = "system"

#: Gauss-Hermite nodes of the population-averaged means
_NODES, _WEIGHTS = np.polynomial.hermite.hermgauss(60)


def check_components(variances: Mapping[str, float], family: Family) -> tuple[dict[str, float], list[str]]:
    """The random components (name -> variance; ``"Residual"`` apart) and the main facets they involve.

    A component is a facet (``"item"``) or an interaction of facets and the compared factor (``"system:seed"``,
    ``"item:rater"``); the residual variance is ``"Residual"`` for a Gaussian model and fixed by the family otherwise.
    """
    if not isinstance(variances, Mapping) or not variances:
        raise InputError("variances must map components to variances, e.g. {'item': 1.0, 'system:seed': 0.05}.")
    comps: dict[str, float] = {}
    for name, value in variances.items():
        if not isinstance(name, str) or not name.strip():
            raise InputError(f"variances has a component name {name!r}; use facet names such as 'item' or 'system:seed'.")
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise InputError(f"the variance of {name!r} must be a number; got {value!r}.") from None
        if not (np.isfinite(v) and v >= 0):
            raise InputError(f"the variance of {name!r} must be finite and >= 0; got {value!r}.")
        comps[name.strip()] = v
    gaussian = family.engine == "lmer"
    if gaussian and not comps.get("Residual", 0.0) > 0:
        raise InputError("a Gaussian model needs the residual variance: variances={..., 'Residual': v} with v > 0.")
    if not gaussian and "Residual" in comps:
        raise InputError(f"family={family.name!r} has no 'Residual' variance to give: its latent residual variance is "
                         "fixed by the link" + (" and its dispersion is dispersion=" if family.n_parameters else "")
                         + "; drop 'Residual' from variances.")
    random = {k: v for k, v in comps.items() if k != "Residual"}
    if not random:
        raise InputError("variances has no random component; give at least the items', e.g. {'item': 1.0, ...}.")
    facets: list[str] = []
    for name in random:
        parts = name.split(":")
        if name == SYSTEM or any(not p for p in parts):
            raise InputError(f"component {name!r}: 'system' is the compared (fixed) factor; random components are "
                             "facets such as 'item' and interactions such as 'system:seed'.")
        for part in parts:
            if part != SYSTEM and part not in facets:
                facets.append(part)
    return comps, facets


def _link_draws(eta: float, variance: float) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Hermite points of ``eta + U``, ``U ~ N(0, variance)``, and their weights (summing to 1)."""
    return eta + np.sqrt(2.0 * variance) * _NODES, _WEIGHTS / np.sqrt(np.pi)


#: The parameters of a family without any beyond the mean (read only).
_NO_PARAMETERS = np.zeros(0)
_NO_PARAMETERS.flags.writeable = False


def marginal_mean(family: Family, eta: float, variance: float, params: np.ndarray = _NO_PARAMETERS) -> float:
    """``E[mu(eta + U)]``, ``U ~ N(0, variance)``: the population-averaged mean on the response scale (the family's
    :meth:`~mixeval.mixed.Family.mean` at its parameters ``params`` on the optimiser's scale; ordinal: the expected
    category index).

    Examples
    --------
    >>> from mixeval.mixed import get_family
    >>> round(marginal_mean(get_family("poisson"), 0.0, 0.5), 6) == round(float(np.exp(0.25)), 6)  # exp(s^2 / 2)
    True
    >>> round(marginal_mean(get_family("binomial"), 0.0, 1.0), 6)
    0.5
    """
    x, w = _link_draws(float(eta), float(variance))
    return float(w @ np.asarray(family.mean(x, params), dtype=float))


def _solve(fun, target: float, what: str, lo: float = -40.0, hi: float = 40.0) -> float:
    """The ``x`` in ``[lo, hi]`` with ``fun(x) = target`` (``fun`` increasing), or an InputError naming ``what``."""
    a, b = fun(lo) - target, fun(hi) - target
    if not (np.isfinite(a) and np.isfinite(b)) or a * b > 0:
        raise InputError(f"{what}: {target:g} is outside the range of the family's mean ({fun(lo):.4g} to "
                         f"{fun(hi):.4g}).")
    return float(brentq(lambda x: fun(x) - target, lo, hi, xtol=1e-12))


def intercept_for(family: Family, baseline: float, variance: float, params: np.ndarray = _NO_PARAMETERS) -> float:
    """The link-scale intercept whose population-averaged mean is ``baseline`` (:func:`marginal_mean`).

    Examples
    --------
    >>> from mixeval.mixed import get_family
    >>> b = intercept_for(get_family("binomial"), 0.7, 1.0)
    >>> round(b, 4), round(marginal_mean(get_family("binomial"), b, 1.0), 6)
    (1.0184, 0.7)
    """
    return _solve(lambda e: marginal_mean(family, e, variance, params), float(baseline), f"baseline={baseline!r}")


def delta_for(family: Family, intercept: float, effect: float, variance: float, params: np.ndarray = _NO_PARAMETERS) -> float:
    """The link-scale difference whose population-averaged means differ by ``effect`` on the response scale.

    Examples
    --------
    >>> from mixeval.mixed import get_family
    >>> fam = get_family("binomial")
    >>> d = delta_for(fam, 1.0184, 0.05, 1.0)                 # 70% -> 75% accuracy, item variance 1 (logit scale)
    >>> round(marginal_mean(fam, 1.0184 + d, 1.0) - marginal_mean(fam, 1.0184, 1.0), 6)
    0.05
    """
    base = marginal_mean(family, intercept, variance, params)
    return _solve(lambda d: marginal_mean(family, intercept + d, variance, params), base + float(effect),
                  f"effect={effect!r} from the baseline mean {base:.4g}") if effect else 0.0


def _finite(value: Any, argument: str) -> float | None:
    if value is None:
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{argument} must be a number; got {value!r}.") from None
    if not np.isfinite(x):
        raise InputError(f"{argument} must be finite; got {value!r}.")
    return x


def _family_parameters(family: Family, dispersion: Any, thresholds: Any) -> tuple[dict[str, float], tuple | None]:
    """The family's parameters by name (reported scale) and the categories of ordinal ratings."""
    d = _finite(dispersion, "dispersion")
    kinds = list(family.parameter_kinds)
    if family.engine == "clmm":
        if d is not None:
            raise InputError("dispersion= does not apply to ordinal ratings (their latent residual is the standard "
                             "logistic or normal); drop it.")
        cuts = _thresholds(thresholds, "ordinal ratings need thresholds= (the J - 1 cutpoints on the latent scale, "
                                       "increasing, e.g. [-1.5, -0.5, 0.5, 1.5] for a 1-5 scale)")
        levels = tuple(range(1, cuts.size + 2))
        return {f"{a}|{b}": float(c) for a, b, c in zip(levels[:-1], levels[1:], cuts)}, levels
    out: dict[str, float] = {}
    if "dispersion" in kinds:
        if d is None or d <= 0:
            raise InputError(f"family={family.name!r} needs dispersion= > 0 (glmmTMB's sigma(): "
                             + ("theta of Var = mu + mu^2 / theta" if family.name == "negative_binomial" else
                                "phi, the precision") + f"); got {dispersion!r}.")
        out["dispersion"] = d
    elif d is not None:
        raise InputError(f"dispersion= does not apply to family={family.name!r} (no dispersion parameter); drop it.")
    cut_names = [n for n, k in zip(family.parameter_names, kinds) if k == "cutpoint"]
    if cut_names:
        cuts = _thresholds(thresholds, f"family={family.name!r} needs thresholds= (its {len(cut_names)} cutpoints on "
                                       "the logit scale, increasing)")
        if cuts.size != len(cut_names):
            raise InputError(f"family={family.name!r} has {len(cut_names)} cutpoints; thresholds= gives {cuts.size}.")
        out.update(dict(zip(cut_names, cuts.tolist())))
    elif thresholds is not None:
        raise InputError(f"thresholds= applies to ordinal ratings and ordered beta proportions, not family="
                         f"{family.name!r}; drop it.")
    return out, None


def _thresholds(thresholds: Any, missing: str) -> np.ndarray:
    if thresholds is None:
        raise InputError(missing + ".")
    cuts = np.atleast_1d(np.asarray(thresholds, dtype=float))
    if cuts.ndim != 1 or cuts.size < 1 or not np.all(np.isfinite(cuts)) or np.any(np.diff(cuts) <= 0):
        raise InputError(f"thresholds must be finite and increasing; got {thresholds!r}.")
    return cuts


def power_from_components(variances: Mapping[str, float], *, n: Mapping[str, Sequence[int] | int],
                          delta: float | None = None, effect: float | None = None, family: str | Family = "gaussian",
                          link: str | None = None, intercept: float | None = None, baseline: float | None = None,
                          dispersion: float | None = None, thresholds: Sequence[float] | None = None, trials: int = 1,
                          systems: Sequence[str] = ("A", "B"), replicates: int = 1, alpha: float = 0.05,
                          test: str | Sequence[str] = "glrt", margin: float | None = None,
                          lower_is_better: bool = False, df: str | None = None, n_resamples: int = 500,
                          random_state: Any = None, progress: bool | None = None) -> PowerResult:
    """Power of comparing two (or more) systems in a study not yet run, from assumed variance components.

    Parameters
    ----------
    variances : mapping
        ``{component: variance}`` on the link (latent) scale: facets (``"item"``, ``"seed"``, ``"rater"``) and
        interactions (``"system:seed"``: a system's seed-to-seed variation; ``"item:rater"``), each a random
        intercept ``(1|component)``; a Gaussian model also ``"Residual"``.
    n : mapping
        Sizes to try, e.g. ``{"item": [100, 200, 400], "seed": 5}``: every facet needs one; ``"replicates"`` sets
        rows per cell. The designs are fully crossed (every item with every seed and system).
    delta : float, optional
        The difference of the last and the first system (sorted) on the link scale (log-odds, log, latent); other
        systems equal the first.
    effect : float, optional
        The same difference on the response scale, for population-averaged means (accuracy: ``0.03`` is 3 points;
        counts: mean counts; ordinal: mean category), converted to ``delta`` (:func:`delta_for`). One of
        ``delta``/``effect`` (``delta=0`` for the type I error or an equivalence study).
    family : str or Family, default "gaussian"
        ``"gaussian"``, ``"binomial"``, ``"poisson"``, ``"negative_binomial"``, ``"beta"``, ``"ordered_beta"``,
        ``"beta_binomial"`` or ``"ordinal"``; ``link`` its link.
    intercept : float, optional
        The first system's linear predictor for a typical item (random effects at 0; link scale). Or ``baseline``:
        its population-averaged mean on the response scale (e.g. accuracy 0.7), solved for the intercept
        (:func:`intercept_for`). A Gaussian model's intercept does not change its power (default 0); ordinal ratings
        have ``thresholds`` instead.
    dispersion : float, optional
        The family's dispersion (glmmTMB's ``sigma()``: theta of the negative binomial, phi of the beta families).
    thresholds : sequence of float, optional
        Ordinal ratings: the ``J - 1`` increasing cutpoints on the latent scale (the categories are 1..J);
        ordered beta: its two cutpoints.
    trials : int, default 1
        Trials per row of a binomial or beta-binomial response.
    systems, replicates
        The compared systems and the rows per cell.
    alpha : float, default 0.05
    test : str or list of str, default "glrt"
        ``"glrt"`` (likelihood-ratio test of the system effect, ML fits), ``"pairwise"`` (Wald test of the last
        minus the first system), ``"equivalence"`` (TOST within ``+-margin``) and ``"noninferiority"`` (the last
        system not worse than the first by more than ``margin``; ``lower_is_better`` when smaller scores are
        better); several at once share the simulations.
    margin : float, optional
        The equivalence or non-inferiority margin on the link scale (emmeans' ``delta``).
    df : str, optional
        The Wald-type tests' degrees of freedom: ``"asymptotic"`` (z), ``"kenward-roger"``, ``"satterthwaite"``;
        by default emmeans' rule (Kenward-Roger for Gaussian designs of up to 3,000 rows, z for other families).
    n_resamples : int, default 500
        Simulations per design.
    random_state : None, int or Generator
    progress : bool, optional
        A progress bar (default: on a terminal or in a notebook).

    Returns
    -------
    PowerResult
        ``table`` (power with its Monte Carlo standard error per design and test), ``smallest(target)``, ``plot()``.

    Notes
    -----
    As R's simr (Green & MacLeod 2016): responses are simulated from the model with the assumed parameters on
    each design, the model (and for the GLRT the model without the system effect) is refitted to each, and the
    share of rejections estimates the power, with Monte Carlo standard error ``sqrt(p (1 - p) / n_resamples)``.
    A response-scale ``effect`` or ``baseline`` is about population-averaged means ``E[g^-1(eta + U)]``, ``U`` the
    sum of the random effects of one observation (variance: the sum of the components), by Gauss-Hermite
    quadrature; the difference the tests see is on the link scale, for a typical item.

    Examples
    --------
    >>> r = power_from_components({"item": 1.0, "system:seed": 0.05}, family="binomial", intercept=0.5, delta=0.3,
    ...                           n={"item": [30, 60], "seed": 3}, test="glrt", n_resamples=20, random_state=1,
    ...                           progress=False)
    >>> list(r.table.columns)
    ['item', 'seed', 'nobs', 'test', 'power', 'se', 'singular', 'failed']
    """
    fam = get_family(family, link)
    if not fam.support.power:
        raise fam.support.refusal(fam.name, "power")
    comps, facets = check_components(variances, fam)
    missing = [f for f in facets if f not in n]
    if missing:
        raise InputError(f"n must give a size for every facet of the components; missing: {missing} (e.g. "
                         f"n={{{', '.join(repr(f) + ': 10' for f in facets)}}}).")
    systems = sorted({str(s) for s in systems})
    if len(systems) < 2:
        raise InputError(f"systems must name at least two systems to compare; got {systems!r}.")
    plan = check_tests(test, alpha, margin, lower_is_better)
    family_values, levels = _family_parameters(fam, dispersion, thresholds)
    trials = _trials(trials, fam)
    internal = fam.internal_parameters(np.array([family_values[p] for p in fam.parameter_names])) \
        if fam.engine != "clmm" else np.array(list(family_values.values()))
    variance = float(sum(v for k, v in comps.items() if k != "Residual"))
    b0 = _intercept(fam, intercept, baseline, variance, internal)
    d = _delta(fam, delta, effect, b0, variance, internal)
    truth: dict[str, float] = {f"sd_(Intercept)|{c}": float(np.sqrt(v)) for c, v in comps.items() if c != "Residual"}
    if fam.engine == "lmer":
        truth["sigma"] = float(np.sqrt(comps["Residual"]))
    truth.update(family_values)
    if fam.engine != "clmm":
        truth["(Intercept)"] = b0
    for level in systems[1:]:
        truth[f"{SYSTEM}{level}"] = d if level == systems[-1] else 0.0
    terms = "".join(f" + (1|{c})" for c in comps if c != "Residual")
    spec = PowerSpec(formula=f"y ~ {SYSTEM}{terms}", null_formula=f"y ~ 1{terms}", family=fam, system=SYSTEM,
                     systems=tuple(systems), pair=(systems[0], systems[-1]), truth=truth,
                     facets={f: int(np.atleast_1d(n[f])[0]) for f in facets}, replicates=_replicates(replicates),
                     levels=levels, trials=trials, reml=True)
    return run_power(spec, plan, n=n, df=df, n_resamples=n_resamples, random_state=random_state, progress=progress)


def _trials(trials: Any, family: Family) -> int:
    trials = require_positive_int(trials, "trials")
    if trials != 1 and family.support.weights != "trials":
        raise InputError(f"trials={trials} applies to binomial and beta-binomial responses (successes out of trials), "
                         f"not family={family.name!r}; drop it.")
    return int(trials)


def _replicates(replicates: Any) -> int:
    return require_positive_int(replicates, "replicates")


def _intercept(family: Family, intercept: Any, baseline: Any, variance: float, params: np.ndarray) -> float:
    b0, base = _finite(intercept, "intercept"), _finite(baseline, "baseline")
    if family.engine == "clmm":
        if b0 is not None or base is not None:
            raise InputError("ordinal ratings have no intercept or baseline: thresholds= place the categories.")
        return 0.0
    if b0 is not None and base is not None:
        raise InputError("give intercept= (link scale) or baseline= (the first system's mean on the response scale), "
                         "not both.")
    if base is not None:
        return intercept_for(family, base, variance, params)
    if b0 is None:
        if family.engine == "lmer":
            return 0.0
        raise InputError(f"family={family.name!r}: the power depends on where the means lie; give intercept= (the "
                         "first system's linear predictor for a typical item, e.g. 0.5 on the logit scale) or "
                         "baseline= (its population-averaged mean, e.g. baseline=0.7 for 70% accuracy).")
    return b0


def _delta(family: Family, delta: Any, effect: Any, intercept: float, variance: float, params: np.ndarray) -> float:
    d, e = _finite(delta, "delta"), _finite(effect, "effect")
    if d is not None and e is not None:
        raise InputError("give delta= (link scale) or effect= (response scale), not both.")
    if d is None and e is None:
        raise InputError("give the difference to detect: delta= on the link scale (log-odds for binomial) or effect= "
                         "on the response scale (e.g. effect=0.03 for 3 points of accuracy); delta=0 for the type I "
                         "error or an equivalence study.")
    if d is not None:
        return d
    return delta_for(family, intercept, e, variance, params)
