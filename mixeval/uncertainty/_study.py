"""The uncertainty questions of a :class:`mixeval.Study`: variance tables with intervals, power of its comparison."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..formula import quote_name
from ..mixed.engine import confint
from ._components import delta_for
from ._power import PowerResult, run_power
from ._power_design import PowerSpec
from ._power_tests import check_tests

__all__ = ["variance_table_ci", "study_power", "set_difference"]


def variance_table_ci(fit, *, method: str = "profile", level: float = 0.95, **kwargs: Any) -> pd.DataFrame:
    """The book's variance-component table (Tables 3.1, 3.2, ...) with an interval for every variance.

    The interval of a variance is the interval of its standard deviation squared (``confint``'s ``sd_...``
    and ``sigma`` rows); ``kwargs`` go to :func:`mixeval.uncertainty.confint` (``n_resamples``,
    ``random_state`` for ``method="boot"``).

    Examples
    --------
    >>> from mixeval import lmer
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=15, systems=("A",), n_raters=4)
    >>> fit = lmer("score ~ 1 + (1|item)", df)
    >>> list(variance_table_ci(fit, method="wald").columns)
    ['component', 'variance', 'percent', 'lower', 'upper']
    """
    from ..reliability import variance_table

    table = variance_table(fit)
    ci = confint(fit, method=method, level=level, **kwargs).table
    name = {g: f"sd_(Intercept)|{g}" for g in fit.group_names}
    if fit.family.estimates_scale:
        name["Residual"] = "sigma"
    else:  # a GLMM's or an ordinal fit's latent residual variance is fixed by its link: no interval to give
        fixed = float(fit.distribution_variance)
        ci = pd.concat([ci, pd.DataFrame({"lower": [np.sqrt(fixed)], "upper": [np.sqrt(fixed)]}, index=["Residual"])])
        name["Residual"] = "Residual"
        table.attrs["note"] = (f"the Residual variance {fixed:.4g} is the latent residual variance fixed by the "
                               f"{fit.family.link} link (not estimated): its interval is that value")
    table["lower"] = [float(ci.loc[name[c], "lower"]) ** 2 for c in table.component]
    table["upper"] = [float(ci.loc[name[c], "upper"]) ** 2 for c in table.component]
    return table


def _fixed_effects(study, fit, truth: dict[str, float], pair, delta, fixed) -> tuple[list[str], tuple[str, str]]:
    """The systems and the compared pair; ``truth``'s fixed effects changed by ``fixed`` (by name) and ``delta``."""
    system = study.system
    data = study._require_rows("Study.power")
    systems = sorted(pd.unique(data[system].astype(str)))
    names = list(fit.fixed_names)
    allowed = {"(Intercept)"} | {f"{system}{lev}" for lev in systems}
    other = [k for k in names if k not in allowed]
    if other:
        raise InputError(f"power simulates the design 'score ~ {system} + random effects'; the fixed effects "
                         f"{other} of {study.formula!r} cannot be laid out on a new design. Fit the study without them.")
    if pair is None:
        pair = (systems[0], systems[1])
    if isinstance(pair, str) or len(pair) != 2:
        raise InputError(f"pair must name two systems, e.g. pair=('A', 'B'); got {pair!r}.")
    a, b = (str(pair[0]), str(pair[1]))
    for lev in (a, b):
        if lev not in systems:
            raise InputError(f"pair names {lev!r}, which is not a level of {system!r}; levels: {systems}.")
    if a == b:
        raise InputError(f"pair=({a!r}, {b!r}) compares a system with itself; name two different levels of "
                         f"{system!r} ({systems}).")
    if fixed is not None:
        unknown = set(fixed) - set(names)
        if unknown:
            raise InputError(f"fixed names {sorted(unknown)}, which are not fixed effects; fixed effects: {names}.")
        truth.update({k: float(v) for k, v in fixed.items()})
    if delta is not None:
        set_difference(truth, system, (a, b), float(delta))
    return systems, (a, b)


def _random_layout(study, fit) -> dict[str, int]:
    """The main random factors (facets) with their numbers of levels in the data; refuses random terms that a
    crossed design cannot hold (a slope of anything but the system, a factor only inside an interaction)."""
    system = study.system
    data = study.data
    slopes = [c for c in study.parsed.slope_columns if c != system]
    if slopes:
        raise InputError(f"power lays the study out on new designs of facets and systems; the random slopes of "
                         f"{slopes} in {study.formula!r} have no values there. Slopes of the system, e.g. "
                         f"(1 + {system} | item), are simulated.")
    facets: dict[str, int] = {}
    for term in study.parsed.random:
        if len(term.factors) == 1 and term.factors[0] != system:
            facets[term.factors[0]] = int(data[term.factors[0]].nunique())
    for term in study.parsed.random:
        lost = [f for f in term.factors if f != system and f not in facets]
        if lost:
            raise InputError(f"the random effect {term.label} involves {lost}, which is not a random factor of its "
                             f"own (e.g. raters nested in items); power lays out crossed designs of facets that each "
                             f"have a term such as (1|{lost[0]}).")
    return facets


def set_difference(truth: dict[str, float], system: str, pair: tuple[str, str], d: float) -> None:
    """``truth``'s fixed effects changed so that ``pair[1]``'s linear predictor is ``pair[0]``'s plus ``d``, ``pair[0]``'s
    unchanged (where ``pair[1]`` is the reference level, the intercept moves and ``pair[0]``'s coefficient becomes
    ``-d``; without an intercept, as for ordinal ratings, ``pair[0]``'s coefficient alone).

    Examples
    --------
    >>> t = {"(Intercept)": 1.0, "systemB": 0.2}
    >>> set_difference(t, "system", ("B", "A"), 0.5); t
    {'(Intercept)': 1.7, 'systemB': -0.5}
    """
    a, b = pair
    key_a, key_b = f"{system}{a}", f"{system}{b}"
    eta_a = truth.get("(Intercept)", 0.0) + truth.get(key_a, 0.0)
    if key_b in truth:
        truth[key_b] = truth.get(key_a, 0.0) + d
        return
    if "(Intercept)" in truth:
        truth["(Intercept)"] = eta_a + d
    truth[key_a] = -d


def _marginal_delta(fit, fam, truth: dict[str, float], system: str, pair: tuple[str, str], effect: float,
                    study) -> float:
    """The link-scale difference of the pair whose population-averaged means differ by ``effect``, at the fitted
    variances and ``pair[0]``'s linear predictor."""
    if study.parsed.has_slopes:
        raise InputError("effect= (a difference of population-averaged means) is computed for random intercepts; "
                         "with random slopes give delta= on the link scale.")
    variance = float(sum(v for k, v in fit.variances.items() if k != "Residual"))
    eta_a = truth.get("(Intercept)", 0.0) + truth.get(f"{system}{pair[0]}", 0.0)
    if fam.engine == "clmm":
        params = np.asarray(fit.threshold_values, dtype=float)
    else:
        params = fam.internal_parameters(np.array([truth[p] for p in fam.parameter_names]))
    return delta_for(fam, eta_a, effect, variance, params)


def study_power(study, *, n: Mapping[str, Sequence[int] | int], delta: float | None = None,
                effect: float | None = None, fixed: Mapping[str, float] | None = None,
                pair: tuple[str, str] | None = None, alpha: float = 0.05, test: str | Sequence[str] = "glrt",
                margin: float | None = None, lower_is_better: bool = False, df: str | None = None,
                n_resamples: int = 500, random_state: Any = None, replicates: int | None = None,
                progress: bool | None = None) -> PowerResult:
    """Power of a study's system comparison for changed designs, by simulation from its fit (simr's method).

    Parameters
    ----------
    study : Study
        Of any family (Gaussian, binomial, Poisson, glmmTMB's families, ordinal ratings), fitted on
        ``score ~ system + random effects``: random intercepts of facets and their interactions with each other and
        with the system (``(1|system:seed)``), and random slopes of the system (``(1 + system | item)``).
    n : mapping
        Sizes to try per facet (main random factors), e.g. ``{"sentence_id": [200, 400, 800]}``; facets not
        named keep their size in the data; ``"replicates"`` gives rows per (facets x system) cell.
    delta : float, optional
        The difference of ``pair[1]`` and ``pair[0]`` on the link scale (default: as fitted).
    effect : float, optional
        The same difference on the response scale, for population-averaged means (accuracy points, mean counts,
        mean category), converted to ``delta`` at the fitted variances and intercept (random intercepts).
    fixed : mapping, optional
        Fixed effects by R name (e.g. ``{"systemPostEdit": -0.003}``) replacing the fitted ones.
    pair : (str, str), optional
        Two different systems: those the Wald-type tests compare (``pair[1] - pair[0]``) and whose difference
        ``delta``/``effect`` set (default: the first two levels). With ``test="glrt"`` alone a pair needs ``delta``
        or ``effect`` (else it is refused, as it would not be used).
    alpha : float, default 0.05
    test : str or list of str, default "glrt"
        ``"glrt"``: the likelihood-ratio test of the system factor (ML fits, chi-square reference);
        ``"pairwise"``: the Wald test of ``pair`` (unadjusted for other pairs) with the Study's df rule;
        ``"equivalence"``: TOST within ``+-margin``; ``"noninferiority"``: ``pair[1]`` not worse than ``pair[0]`` by
        more than ``margin`` (``lower_is_better`` when smaller scores are better).
    margin : float, optional
        The equivalence or non-inferiority margin on the link scale (emmeans' ``delta``).
    df : str, optional
        The Wald-type tests' df (``"asymptotic"``, ``"kenward-roger"``, ``"satterthwaite"``); default emmeans'
        rule for each simulated design, as the Study's comparisons (Kenward-Roger for Gaussian designs of up to
        3,000 rows, z for other families).
    n_resamples : int, default 500
        Simulated data sets per design.
    random_state : None, int or Generator
    replicates : int, optional
        Rows per cell (default: the data's rows per cell, rounded).

    Returns
    -------
    PowerResult
        ``table`` with power and its Monte Carlo standard error per design and test, ``smallest(target)``,
        ``plot()``.

    Notes
    -----
    The simulated design is balanced and fully crossed: every level of every facet with every system,
    ``replicates`` rows per cell; interaction factors (``a:b``) follow from the crossing. Responses are drawn from
    the fitted model (variance components, correlations, the family's dispersion or thresholds, fixed effects
    changed by ``delta``/``effect``/``fixed``), and each simulated data set is refitted and tested (as R's simr
    ``extend`` + ``powerSim``). A Gaussian Study's Wald-type tests refit by REML (as its comparisons), the GLRT by
    ML; other families by maximum likelihood (the Laplace approximation; a restricted-Laplace Study's tests are
    simulated on ML fits, as lme4's glmer).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval import Study
    >>> rng = np.random.default_rng(0)
    >>> item = np.repeat(np.arange(20), 2)
    >>> df = pd.DataFrame({"item": item, "system": np.tile(["A", "B"], 20)})
    >>> df["score"] = rng.normal(size=20)[item] + 0.5 * (df.system == "B") + rng.normal(size=40)
    >>> r = study_power(Study(df, "score ~ system + (1|item)"), n={"item": [10]}, n_resamples=20, random_state=0,
    ...                 progress=False)
    >>> list(r.table["nobs"])
    [20]
    """
    system = study.system
    if system is None:
        raise InputError("power needs a system factor: pass system= to Study.")
    plan = check_tests(test, alpha, margin, lower_is_better)
    for name, value in (("delta", delta), ("effect", effect)):
        if value is not None and not np.isfinite(float(value)):
            raise InputError(f"{name} must be a finite difference; got {value!r}.")
    if delta is not None and effect is not None:
        raise InputError("give delta= (link scale) or effect= (response scale), not both.")
    if fixed is not None:
        bad = {k: v for k, v in fixed.items() if not np.isfinite(float(v))}
        if bad:
            raise InputError(f"fixed must give finite fixed effects; got {bad}.")
    if not study.parsed.response_is_column:
        raise InputError(f"power simulates one response column; {study.formula!r} has the response "
                         f"{study.parsed.response!r} (e.g. cbind(successes, failures)): give the proportion with "
                         "weights= (the trials) instead.")
    fit = study.fit
    fam = fit.family
    if not fam.support.power:
        raise fam.support.refusal(fam.name, "power")
    facets = _random_layout(study, fit)
    model = fit.model
    truth = dict(zip(model.param_names, np.asarray(model.estimates(), dtype=float)))
    given = pair
    systems, pair = _fixed_effects(study, fit, truth, pair, delta, fixed)
    if given is not None and plan.tests == ("glrt",) and delta is None and effect is None:
        raise InputError(f"pair={tuple(given)!r} with test='glrt' and no delta is not used: the GLRT tests all systems "
                         "at once at their fitted means. Pass test='pairwise' (the power of this pair's contrast) or "
                         "delta= (the GLRT's power when this pair differs by delta), or drop pair=.")
    if effect is not None:
        set_difference(truth, system, pair, _marginal_delta(fit, fam, truth, system, pair, float(effect), study))
    trials = 1
    if getattr(study, "weights", None) is not None:
        w = np.asarray(getattr(fit, "weights", np.ones(1)), dtype=float)
        if fam.support.weights != "trials" or not np.allclose(w, w[0]) or w[0] != round(w[0]):
            raise InputError("power simulates unweighted designs, or the same whole number of trials per row of a "
                             "binomial proportion; this Study's weights= vary: fit it without them (or plan with "
                             "mixeval.uncertainty.power_from_components(..., trials=)).")
        trials = int(round(w[0]))
    cells = int(np.prod(list(facets.values()))) * len(systems)
    reps = replicates if replicates is not None else max(1, int(round(fit.nobs / cells)))
    response = quote_name(study.parsed.response)
    random = " + ".join(t.label for t in study.parsed.random)
    spec = PowerSpec(formula=f"{response} ~ {system} + {random}", null_formula=f"{response} ~ 1 + {random}",
                     family=fam, system=system, systems=tuple(systems), pair=pair, truth=truth, facets=facets,
                     replicates=reps, levels=tuple(fit.levels) if fam.engine == "clmm" else None, trials=trials,
                     reml=bool(getattr(study, "reml", True)))
    return run_power(spec, plan, n=n, df=df, n_resamples=n_resamples, random_state=random_state, progress=progress)
