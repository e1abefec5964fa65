"""Power of a system comparison by simulation (as R's simr; Green & MacLeod 2016).

Stages: :func:`crossed_design` lays out a balanced design (items x other facets x systems x replicates)
of the wanted size; :func:`simulation_model` puts assumed or fitted parameters on it; :func:`simulate_power`
simulates responses, refits and tests each, and counts rejections. The design's cross-products are built
once per design: a simulated response only changes ``Z'y``, ``X'y``, ``y'y`` (computed for a block of
responses by one sparse product), and the null model's statistics are a column selection of the full
model's.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import chi2, norm

from .._format import terminal_width, text_table
from .._progress import progress as _bar
from .._validation import require_level, require_positive_int
from ..errors import InputError
from ..mixed import build_design, compute_stats
from ..mixed import deviance_parts, optimize_theta
from ..mixed.engine import single_threaded_blas
from ..resampling import as_generator
from ..mixed.engine import LmmFitModel

__all__ = ["PowerResult", "crossed_design", "simulate_power", "power_from_components", "closed_form_paired_power"]

TESTS = ("glrt", "pairwise")


def crossed_design(sizes: Mapping[str, int], systems: Sequence[str], *, system: str = "system",
                   replicates: int = 1) -> pd.DataFrame:
    """A fully crossed layout: every level of every facet with every system, ``replicates`` rows per cell.

    Examples
    --------
    >>> crossed_design({"item": 2, "rater": 2}, ["A", "B"]).shape
    (8, 3)
    """
    names = list(sizes)
    for f, k in sizes.items():
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise InputError(f"the number of levels of {f!r} must be a positive integer; got {k!r}.")
    if replicates < 1:
        raise InputError(f"replicates must be >= 1; got {replicates!r}.")
    levels = [[f"{f}{i + 1}" for i in range(int(sizes[f]))] for f in names]
    rows = list(itertools.product(*levels, list(systems), range(int(replicates))))
    frame = pd.DataFrame(rows, columns=[*names, system, "_replicate"])
    return frame.drop(columns="_replicate")


@dataclass(frozen=True)
class _SimModel:
    """A design with the parameters to simulate from and the column indices of the tested effect."""

    model: LmmFitModel
    theta: np.ndarray
    sigma: float
    beta: np.ndarray
    tested: np.ndarray          # fixed-effect columns of the system factor
    contrast: np.ndarray        # for the pairwise test


class _DesignOnly:
    """The pieces of an :class:`LmerResult` that :class:`LmmFitModel` needs, for a design without a fit."""

    def __init__(self, design, stats, theta, sigma, beta) -> None:
        self.design, self.stats = design, stats
        self.reml = True
        self.nobs = design.nobs
        self.fixed_names = design.fixed_names
        self.group_names = tuple(g.name for g in design.groups)
        self.theta, self.sigma, self.coef = theta, sigma, beta


def simulation_model(formula: str, data: pd.DataFrame, variances: Mapping[str, float], fixed: Mapping[str, float],
                     system: str, pair: tuple[str, str] | None) -> _SimModel:
    """Design of ``formula`` on ``data`` with the components ``variances`` and fixed effects ``fixed`` (R names)."""
    frame = data.copy()
    frame[_response(formula)] = np.arange(len(frame), dtype=float) % 2  # a placeholder (the design is what counts)
    design = build_design(formula, frame)
    stats = compute_stats(design)
    groups = [g.name for g in design.groups]
    missing = [g for g in groups if g not in variances]
    if missing or "Residual" not in variances:
        raise InputError(f"variances must give every random effect of {formula!r} and 'Residual'; missing: "
                         f"{missing + ([] if 'Residual' in variances else ['Residual'])}.")
    sigma = float(np.sqrt(variances["Residual"]))
    if not sigma > 0:
        raise InputError("the residual variance must be positive.")
    theta = np.array([np.sqrt(variances[g]) / sigma for g in groups])
    names = list(design.fixed_names)
    unknown = set(fixed) - set(names)
    if unknown:
        raise InputError(f"effect names {sorted(unknown)} are not fixed effects of {formula!r}; fixed effects: {names}.")
    beta = np.array([float(fixed.get(k, 0.0)) for k in names])
    tested = np.array([i for i, k in enumerate(names) if k.startswith(system) and k != "(Intercept)"], dtype=int)
    if tested.size == 0:
        raise InputError(f"the formula {formula!r} has no fixed effect of the system factor {system!r}.")
    levels = sorted(pd.unique(frame[system].astype(str)))
    a, b = pair if pair is not None else (levels[0], levels[1])
    contrast = np.zeros(len(names))
    for lev, sign in ((b, 1.0), (a, -1.0)):
        if lev not in levels:
            raise InputError(f"system {lev!r} is not a level of {system!r}; levels: {levels}.")
        key = f"{system}{lev}"
        if key in names:
            contrast[names.index(key)] += sign
    shell = _DesignOnly(design, stats, theta, sigma, beta)
    model = LmmFitModel.__new__(LmmFitModel)
    model.fit, model.design, model.stats, model.reml = shell, design, stats, True
    model.nobs, model.fixed_names, model.group_names = design.nobs, tuple(names), tuple(groups)
    model.varpar_names = tuple(f"sd_(Intercept)|{g}" for g in groups) + ("sigma",)
    model.varpar_kinds = ("sd",) * len(groups) + ("sigma",)
    model.param_names = model.varpar_names + model.fixed_names
    return _SimModel(model=model, theta=theta, sigma=sigma, beta=beta, tested=tested, contrast=contrast)


def _response(formula: str) -> str:
    from ..formula import parse_formula

    return parse_formula(formula).response


def _drop_columns(stats, drop: np.ndarray):
    """Statistics of the model without the fixed-effect columns ``drop`` (the null model of the GLRT)."""
    p = stats.p
    keep = [i for i in range(p) if i not in set(drop.tolist())] + [p]
    return replace(stats, p=len(keep) - 1, z0w=stats.z0w[:, keep], zrw=stats.zrw[:, keep],
                   ww=stats.ww[np.ix_(keep, keep)])


def _pvalues(sim: _SimModel, Y: np.ndarray, test: str) -> tuple[np.ndarray, np.ndarray]:
    """p-value of the test for every column of ``Y``, and whether the (full) fit was singular."""
    model = sim.model
    pvals, singular = [], []
    start = np.where(sim.theta > 0, sim.theta, 0.1)
    for stats in model.stats_for(Y):
        if test == "glrt":
            full = optimize_theta(stats, False, theta0=start)
            null = optimize_theta(_drop_columns(stats, sim.tested), False, theta0=full.theta + 1e-3)
            w = max(null.deviance - full.deviance, 0.0)
            pvals.append(float(chi2.sf(w, sim.tested.size)))
            singular.append(bool(np.any(full.theta < 1e-4)))
        else:
            opt = optimize_theta(stats, True, theta0=start)
            parts = deviance_parts(stats, opt.theta, True)
            n, p = stats.nobs, stats.p
            sigma2 = parts.r2 / (n - p)
            cov = sigma2 * np.linalg.inv(parts.mxx)
            L = sim.contrast
            z = float(L @ parts.beta) / float(np.sqrt(L @ cov @ L))
            pvals.append(float(2.0 * norm.sf(abs(z))))
            singular.append(bool(np.any(opt.theta < 1e-4)))
    return np.array(pvals), np.array(singular)


def simulate_power(sim: _SimModel, *, alpha: float, test: str, n_resamples: int, rng: np.random.Generator,
                   progress: bool | None = None, desc: str = "power") -> dict[str, float]:
    """Share of ``n_resamples`` simulated data sets in which the test rejects at ``alpha``."""
    model = sim.model
    block = max(1, min(64, (1 << 22) // max(model.nobs, 1)))
    pvals, sing = [], []
    bar = iter(_bar(range(n_resamples), total=n_resamples, desc=desc, enabled=progress))
    done = 0
    with single_threaded_blas():
        while done < n_resamples:
            k = min(block, n_resamples - done)
            Y = model.simulate(k, rng, theta=sim.theta, sigma=sim.sigma, beta=sim.beta)
            p, s = _pvalues(sim, Y, test)
            pvals.append(p)
            sing.append(s)
            done += k
            for _ in range(k):
                next(bar, None)
    p = np.concatenate(pvals)
    power = float(np.mean(p < alpha))
    return {"power": power, "se": float(np.sqrt(power * (1.0 - power) / p.size)),
            "singular": float(np.mean(np.concatenate(sing)))}


@dataclass(frozen=True)
class PowerResult:
    """Power of a comparison over designs (one row per design).

    Attributes
    ----------
    table : DataFrame
        Facet sizes, ``nobs`` (rows of the design), ``power``, ``se`` (Monte-Carlo standard error
        ``sqrt(p (1 - p) / n_resamples)``) and ``singular`` (share of simulated fits with a zero component).
    test, alpha, n_resamples, effect
        What was simulated.

    Examples
    --------
    >>> r = power_from_components({"item": 1.0, "Residual": 1.0}, delta=0.5, n={"item": [10, 20]},
    ...                           n_resamples=20, random_state=0, progress=False)
    >>> list(r.table["item"]), r.smallest(1.01) is None
    ([10, 20], True)
    """

    table: pd.DataFrame = field(repr=False)
    test: str
    alpha: float
    n_resamples: int
    effect: dict = field(default_factory=dict)

    def smallest(self, target: float = 0.8) -> pd.Series | None:
        """The design with the fewest observations whose estimated power reaches ``target`` (None if none)."""
        ok = self.table[self.table["power"] >= target]
        if ok.empty:
            return None
        return ok.sort_values(["nobs", "power"], ascending=[True, False]).iloc[0]

    def plot(self, x: str | None = None, *, target: float | None = 0.8, ax=None):
        """Power curve with Monte-Carlo error bars (+- 2 se) against a facet's size."""
        from ..plots import _axes

        facets = [c for c in self.table.columns if c not in ("nobs", "power", "se", "singular")]
        x = x or facets[0]
        fig, ax = _axes(ax, (6.0, 4.0))
        others = [f for f in facets if f != x]
        groups = self.table.groupby(others) if others else [(None, self.table)]
        for key, part in groups:
            part = part.sort_values(x)
            label = None if key is None else ", ".join(f"{f} = {v}" for f, v in zip(others, np.atleast_1d(key)))
            ax.errorbar(part[x], part["power"], yerr=2 * part["se"], marker="o", capsize=3, label=label)
        if target is not None:
            ax.axhline(target, color="grey", linestyle="--", linewidth=1, label=f"power = {target:g}")
        ax.set_xlabel(x)
        ax.set_ylabel(f"power ({self.test}, alpha = {self.alpha:g})")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(frameon=False, fontsize="small")
        return fig

    def summary(self) -> str:
        head = f"power of the {self.test} at alpha = {self.alpha:g}, {self.n_resamples} simulations per design"
        return head + "\n" + text_table(self.table, width=terminal_width())

    def __str__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        return f"<p>{self.summary().splitlines()[0]}</p>" + self.table.to_html(index=False)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``mixeval power --json``."""
        return {"test": self.test, "alpha": self.alpha, "n_resamples": self.n_resamples, "effect": self.effect,
                "rows": self.table.to_dict(orient="records")}


def _grid(n: Mapping[str, Sequence[int] | int]) -> list[dict[str, int]]:
    if not isinstance(n, Mapping) or not n:
        raise InputError("n must map facets to sizes, e.g. {'item': [100, 200, 400]}.")
    names = list(n)
    lists = [list(np.atleast_1d(n[f]).astype(int)) for f in names]
    for f, sizes in zip(names, lists):
        smallest = 1 if f == "replicates" else 2
        if min(sizes) < smallest:
            what = "rows per cell" if f == "replicates" else "levels of a random factor (one level has no variance)"
            raise InputError(f"n gives {f} = {min(sizes)}: too few {what}; give sizes >= {smallest}.")
    return [dict(zip(names, combo)) for combo in itertools.product(*lists)]


def run_power(formula: str, variances: Mapping[str, float], fixed: Mapping[str, float], *, system: str,
              systems: Sequence[str], base_sizes: Mapping[str, int], n: Mapping[str, Sequence[int] | int],
              replicates: int, pair: tuple[str, str] | None, alpha: float, test: str, n_resamples: int,
              random_state: Any, progress: bool | None) -> PowerResult:
    """Power over the grid of designs ``n`` (other facets keep ``base_sizes``)."""
    if test not in TESTS:
        raise InputError(f"test must be one of {', '.join(TESTS)}; got {test!r}.")
    require_level(alpha, "alpha")
    n_sim = require_positive_int(n_resamples, "n_resamples")
    unknown = set(n) - set(base_sizes) - {"replicates"}
    if unknown:
        raise InputError(f"n names {sorted(unknown)}, which are not facets of the model; facets: {sorted(base_sizes)} "
                         "(and 'replicates', rows per cell).")
    rng = as_generator(random_state)
    rows = []
    for combo in _grid(n):
        sizes = {f: int(combo.get(f, k)) for f, k in base_sizes.items()}
        reps = int(combo.get("replicates", replicates))
        data = crossed_design(sizes, systems, system=system, replicates=reps)
        sim = simulation_model(formula, data, variances, fixed, system, pair)
        res = simulate_power(sim, alpha=alpha, test=test, n_resamples=n_sim, rng=rng, progress=progress,
                             desc="power " + ", ".join(f"{k}={v}" for k, v in combo.items()))
        rows.append({**combo, "nobs": len(data), **res})
    return PowerResult(table=pd.DataFrame(rows), test=test, alpha=float(alpha), n_resamples=n_sim,
                       effect={k: float(v) for k, v in fixed.items()})


def power_from_components(variances: Mapping[str, float], *, delta: float, n: Mapping[str, Sequence[int] | int],
                          item: str = "item", systems: Sequence[str] = ("A", "B"), replicates: int = 1,
                          alpha: float = 0.05, test: str = "pairwise", n_resamples: int = 500,
                          random_state: Any = None, progress: bool | None = None) -> PowerResult:
    """Power of comparing two (or more) systems in a new study, from assumed variance components (no data).

    Parameters
    ----------
    variances : mapping
        ``{facet or interaction: variance, ..., "Residual": variance}``, e.g.
        ``{"item": 0.09, "seed": 1e-4, "Residual": 0.02}``: each becomes a random intercept ``(1|name)``.
    delta : float
        Difference of the means of the last and the first system in sorted order (other systems equal the
        first); the pairwise test compares these two.
    n : mapping
        Sizes to try, e.g. ``{"item": [100, 200, 400], "seed": 3}``; every main facet (a component name
        without ``:``) needs a size; ``"replicates"`` sets rows per cell.
    test : {"pairwise", "glrt"}
        Wald z test of the two systems' difference (REML fit; the book's asymptotic comparison) or the
        likelihood-ratio test of the system factor (ML fits).

    Returns
    -------
    PowerResult

    Examples
    --------
    >>> r = power_from_components({"item": 1.0, "Residual": 1.0}, delta=0.5, n={"item": [20]},
    ...                           n_resamples=50, random_state=0, progress=False)
    >>> list(r.table.columns)
    ['item', 'nobs', 'power', 'se', 'singular']
    """
    comps = {str(k): float(v) for k, v in variances.items()}
    main = [c for c in comps if c != "Residual" and ":" not in c]
    if item not in main:
        raise InputError(f"item={item!r} must be one of the components {main}.")
    missing = [f for f in main if f not in n]
    if missing:
        raise InputError(f"n must give a size for every facet; missing: {missing}.")
    systems = [str(s) for s in systems]
    if len(systems) < 2:
        raise InputError("at least two systems are compared.")
    systems = sorted(set(systems))
    formula = "y ~ system" + "".join(f" + (1|{c})" for c in comps if c != "Residual")
    fixed = {"(Intercept)": 0.0, f"system{systems[-1]}": float(delta)}
    base = {f: int(np.atleast_1d(n[f])[0]) for f in main}
    return run_power(formula, comps, fixed, system="system", systems=systems, base_sizes=base, n=n,
                     replicates=replicates, pair=(systems[0], systems[-1]), alpha=alpha, test=test,
                     n_resamples=n_resamples, random_state=random_state, progress=progress)


def closed_form_paired_power(delta: float, sd_diff: float, n_items: int, alpha: float = 0.05) -> float:
    """Exact power of the pairwise z test in a balanced paired design (2 systems, one score per item and system).

    Notes
    -----
    With ``y_is = mu + a_s + b_i + e_is`` the REML fit with ``(1|item)`` (interior estimate) gives the
    paired analysis: ``z = dbar / (s_d / sqrt(n))`` with ``s_d`` the standard deviation of the item
    differences, i.e. a t statistic with ``n - 1`` degrees of freedom and non-centrality
    ``delta sqrt(n) / sd_diff``. The test rejects when ``|z| > z_{1 - alpha/2}``:
    ``power = P(|T_{n-1, ncp}| > z_{1 - alpha/2})``.

    Examples
    --------
    >>> round(closed_form_paired_power(0.5, 2 ** 0.5, 40), 3)
    0.611
    """
    from scipy.stats import nct

    zc = float(norm.ppf(1.0 - alpha / 2.0))
    ncp = delta * np.sqrt(n_items) / sd_diff
    upper = nct.sf(zc, n_items - 1, ncp)
    lower = nct.sf(zc, n_items - 1, -ncp)  # P(T < -zc) for ncp = P(T > zc) for -ncp (scipy's cdf can be NaN far in the tail)
    return float(np.nan_to_num(upper) + np.nan_to_num(lower))
