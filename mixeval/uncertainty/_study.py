"""The uncertainty questions of a :class:`mixeval.Study`: variance tables with intervals, power of its comparison."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..formula import quote_name
from ..mixed.engine import confint
from ._power import PowerResult, run_power

__all__ = ["variance_table_ci", "study_power"]


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


def _systems_and_fixed(study, fit, pair, delta, effect) -> tuple[list[str], dict[str, float], tuple[str, str]]:
    system = study.system
    if system is None:
        raise InputError("power needs a system factor: pass system= to Study.")
    data = study._require_rows("Study.power")
    systems = sorted(pd.unique(data[system].astype(str)))
    names = list(fit.fixed_names)
    allowed = {"(Intercept)"} | {f"{system}{lev}" for lev in systems}
    other = [k for k in names if k not in allowed]
    if other:
        raise InputError(f"power simulates the design 'score ~ {system} + random effects'; the fixed effects "
                         f"{other} of {study.formula!r} cannot be laid out on a new design. Fit the study without them.")
    fixed = {k: float(v) for k, v in zip(names, fit.coef)}
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
    if effect is not None:
        unknown = set(effect) - set(names)
        if unknown:
            raise InputError(f"effect names {sorted(unknown)}, which are not fixed effects; fixed effects: {names}.")
        fixed.update({k: float(v) for k, v in effect.items()})
    if delta is not None:
        mean_a = fixed.get(f"{system}{a}", 0.0)
        key_b = f"{system}{b}"
        if key_b not in fixed:  # b is the reference level: move a instead
            fixed[f"{system}{a}"] = -float(delta)
        else:
            fixed[key_b] = mean_a + float(delta)
    return systems, fixed, (a, b)


def _require_intercepts_only(study) -> None:
    """Power simulates random intercepts; a term with slopes would be simulated without them (and overstate power)."""
    terms = [t for t in study.parsed.random if t.lhs.replace(" ", "") != "1"]
    if terms:
        system, g = study.system or "system", terms[0].name
        raise InputError(
            f"power simulates random intercepts only; {study.formula!r} has random slopes "
            f"{', '.join(f'({t.lhs}|{t.name})' for t in terms)}, whose variance the simulation would leave out "
            f"(overstating the power). For a slope of the system, fit the study with (1|{g}) + (1|{g}:{system}) "
            f"instead (the {system}-by-{g} variance as an intercept term, which power simulates); at the data's own design, "
            "mixeval.uncertainty.bootstrap_fit(study.fit, statistic=...) simulates the slope model and refits "
            "(a statistic returning each refit's p-value gives the power).")


def study_power(study, *, n: Mapping[str, Sequence[int] | int], delta: float | None = None,
                effect: Mapping[str, float] | None = None, pair: tuple[str, str] | None = None, alpha: float = 0.05,
                test: str = "glrt", n_resamples: int = 500, random_state: Any = None, replicates: int | None = None,
                progress: bool | None = None) -> PowerResult:
    """Power of a study's system comparison for changed designs, by simulation from its fit.

    Parameters
    ----------
    study : Study
        Fitted on ``score ~ system + (1|item) + ...`` (random intercepts; the fixed part is the system factor).
        A formula with random slopes is refused: the simulation lays out intercepts only.
    n : mapping
        Sizes to try per facet (main random factors), e.g. ``{"sentence_id": [200, 400, 800]}``; facets not
        named keep their size in the data; ``"replicates"`` gives rows per (facets x system) cell.
    delta : float, optional
        The difference of the means of ``pair[1]`` and ``pair[0]`` to detect (default: as fitted).
    effect : mapping, optional
        Fixed effects (R names, e.g. ``{"systemPostEdit": -0.003}``) replacing the fitted ones.
    pair : (str, str), optional
        Two different systems: those compared by ``test="pairwise"``, and those whose difference ``delta``
        sets (default: the first two levels). With ``test="glrt"`` a pair needs ``delta`` (else it is refused,
        as it would not be used).
    alpha : float, default 0.05
    test : {"glrt", "pairwise"}
        Likelihood-ratio test of the system factor (ML fits, chi-square reference) or the Wald z test of
        ``pair`` (REML fit, asymptotic as the book's Table 4.2; unadjusted for other pairs).
    n_resamples : int, default 500
        Simulated data sets per design.
    random_state : None, int or Generator
    replicates : int, optional
        Rows per cell (default: the data's rows per cell, rounded).

    Returns
    -------
    PowerResult
        ``table`` with power and its Monte-Carlo standard error per design, ``smallest(target)``, ``plot()``.

    Notes
    -----
    The simulated design is balanced and fully crossed: every level of every main random factor with every
    system, ``replicates`` rows per cell; interaction factors (``a:b``) follow from the crossing. Responses
    are drawn from the fitted variance components and fixed effects (changed by ``delta``/``effect``), and
    each simulated data set is refitted and tested (as R's simr ``extend`` + ``powerSim``).

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
    _require_intercepts_only(study)
    if delta is not None and not np.isfinite(float(delta)):
        raise InputError(f"delta must be a finite difference of means; got {delta!r}.")
    if effect is not None:
        bad = {k: v for k, v in effect.items() if not np.isfinite(float(v))}
        if bad:
            raise InputError(f"effect must give finite fixed effects; got {bad}.")
    fit = study.fit
    given = pair
    systems, fixed, pair = _systems_and_fixed(study, fit, pair, delta, effect)
    if given is not None and test == "glrt" and delta is None:
        raise InputError(f"pair={pair!r} with test='glrt' and no delta is not used: the GLRT tests all systems at "
                         "once at their fitted means. Pass test='pairwise' (the power of this pair's contrast) or "
                         "delta= (the GLRT's power when this pair differs by delta), or drop pair=.")
    main = {g: k for g, k in zip(fit.group_names, fit.n_levels) if ":" not in g}
    interactions = [g for g in fit.group_names if ":" in g]
    for g in interactions:
        parts = g.split(":")
        if any(p not in main and p != study.system for p in parts):
            raise InputError(f"the random effect {g!r} involves a factor that is not a random factor of its own; "
                             "power cannot lay it out on a new design.")
    cells = int(np.prod(list(main.values()))) * len(systems)
    reps = replicates if replicates is not None else max(1, int(round(fit.nobs / cells)))
    formula = f"{quote_name(study.parsed.response)} ~ {study.system}" + "".join(f" + (1|{g})" for g in fit.group_names)
    return run_power(formula, fit.variances, fixed, system=study.system, systems=systems, base_sizes=main, n=n,
                     replicates=reps, pair=pair, alpha=alpha, test=test, n_resamples=n_resamples,
                     random_state=random_state, progress=progress)
