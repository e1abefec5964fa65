"""Power of a system comparison by simulation (R's simr: Green & MacLeod 2016), for every family and structure.

Stages: :func:`~._power_design.design_models` lays the assumed model out on each design of the grid (a pilot fit
whose evaluator, the one :class:`~mixeval.uncertainty.FitModel` protocol of every fit, is set to the assumed
parameters by ``at()``); :func:`simulate_design` draws responses from it in blocks, refits the full model (and the
null model for the likelihood-ratio test), each refit started at the assumed parameters, computes every test's
p-value (:mod:`._power_tests`) and counts rejections; :func:`run_power` chains them over the grid into a
:class:`PowerResult` with Monte Carlo standard errors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from .._format import terminal_width, text_table
from .._progress import progress as progress_bar
from .._random import as_generator
from .._results import Result
from .._validation import require_positive_int
from ..errors import InputError
from ..significance import df_inference
from ._power_design import DesignModels, PowerSpec, crossed_design, design_grid, design_models
from ._power_tests import WALD_TESTS, TestPlan, glrt_pvalues, wald_pvalues

__all__ = ["PowerResult", "simulate_design", "run_power", "closed_form_paired_power"]

#: at most this many simulated responses are held at once (``nobs x BLOCK`` doubles)
BLOCK = 32


@dataclass(frozen=True, eq=False)
class PowerResult(Result):
    """Power of tests of a system comparison over designs, by simulation.

    Attributes
    ----------
    table : DataFrame
        One row per design and test: the facet sizes, ``nobs`` (rows of the design), ``test``, ``power`` (the share
        of simulated data sets in which the test rejects at ``alpha``), ``se`` (its Monte Carlo standard error
        ``sqrt(p (1 - p) / m)``, ``m`` the simulations whose refits succeeded), ``singular`` (share of refits
        with a variance at 0) and ``failed`` (simulations whose refit failed, left out of ``m``).
    tests : tuple of str
        ``"glrt"``, ``"pairwise"``, ``"equivalence"``, ``"noninferiority"``.
    alpha : float
    n_resamples : int
        Simulations per design.
    family : str
    parameters : dict
        The assumed model: every parameter by name (lme4's ``sd_(Intercept)|item``, ``sigma``, fixed effects,
        the family's parameters).
    contrast : str
        The compared pair of the Wald-type tests (``"B - A"``, on the link scale of the model).
    df : str or None
        The df method of the Wald-type tests (``"asymptotic"``: z; ``"kenward-roger"``, ``"satterthwaite"``: t).
    margin : float or None
        The equivalence or non-inferiority margin (emmeans' ``delta``).
    notes : tuple of str
        The hypotheses and what the numbers are.

    Examples
    --------
    >>> from mixeval.uncertainty import power_from_components
    >>> r = power_from_components({"item": 1.0, "Residual": 1.0}, delta=0.5, n={"item": [10, 20]},
    ...                           n_resamples=20, random_state=0, progress=False)
    >>> list(r.table["item"]), r.smallest(1.0) is None
    ([10, 20], True)
    """

    table: pd.DataFrame = field(repr=False)
    tests: tuple[str, ...]
    alpha: float
    n_resamples: int
    family: str = "gaussian"
    parameters: dict = field(default_factory=dict, repr=False)
    contrast: str = ""
    df: str | None = None
    margin: float | None = None
    notes: tuple[str, ...] = ()

    @property
    def effect(self) -> dict[str, float]:
        """The assumed fixed effects (link scale) by name."""
        return {k: v for k, v in self.parameters.items() if not k.startswith(("sd_", "cor_")) and k != "sigma"}

    def _rows(self, test: str | None) -> pd.DataFrame:
        if test is None:
            if len(self.tests) > 1:
                raise InputError(f"this result holds several tests {list(self.tests)}; name one with test=.")
            return self.table
        if test not in self.tests:
            raise InputError(f"test={test!r} was not simulated; this result holds {list(self.tests)}.")
        return self.table[self.table["test"] == test]

    def smallest(self, target: float = 0.8, *, test: str | None = None) -> pd.Series | None:
        """The design with the fewest observations whose estimated power reaches ``target`` (None if none does).

        The estimate has the Monte Carlo error in its ``se``; where a design's power is within about two of those
        of ``target``, more simulations (``n_resamples``) settle which design reaches it.

        Examples
        --------
        >>> from mixeval.uncertainty import power_from_components
        >>> r = power_from_components({"item": 1.0, "Residual": 1.0}, delta=1.0, n={"item": [10, 40]},
        ...                           n_resamples=40, random_state=1, progress=False)
        >>> int(r.smallest(0.3)["item"])
        10
        """
        target = float(target)
        if not 0.0 < target <= 1.0:
            raise InputError(f"target must be a power in (0, 1]; got {target!r}.")
        rows = self._rows(test)
        ok = rows[rows["power"] >= target]
        if ok.empty:
            return None
        return ok.sort_values(["nobs", "power"], ascending=[True, False]).iloc[0]

    def plot(self, x: str | None = None, *, target: float | None = 0.8, test: str | None = None, ax=None):
        """Power curves with Monte Carlo error bars (+- 2 se) against a facet's size, one per test (or ``test``) and
        per size of the other facets."""
        from ..plots import _axes

        table = self.table if test is None else self._rows(test)
        facets = [c for c in self.table.columns if c not in ("nobs", "test", "power", "se", "singular", "failed")]
        x = x or facets[0]
        if x not in facets:
            raise InputError(f"x={x!r} is not a facet of the grid; facets: {facets}.")
        fig, ax = _axes(ax, (6.0, 4.0))
        others = [f for f in facets if f != x] + (["test"] if table["test"].nunique() > 1 else [])
        groups = table.groupby(others, sort=False) if others else [(None, table)]
        for key, part in groups:
            part = part.sort_values(x)
            label = None if key is None else ", ".join(f"{f} = {v}" for f, v in zip(others, np.atleast_1d(key)))
            ax.errorbar(part[x], part["power"], yerr=2 * part["se"], marker="o", capsize=3, label=label)
        if target is not None:
            ax.axhline(target, color="grey", linestyle="--", linewidth=1, label=f"power = {target:g}")
        ax.set_xlabel(x)
        shown = "/".join(table["test"].unique())
        ax.set_ylabel(f"power ({shown}, alpha = {self.alpha:g})")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(frameon=False, fontsize="small")
        return fig

    def summary(self) -> str:
        head = (f"Power by simulation ({self.family}; simulate from the assumed model, refit, test at alpha = "
                f"{self.alpha:g}; {self.n_resamples} simulations per design; se: Monte Carlo standard error)")
        return "\n".join([head, text_table(self.table, width=terminal_width()), *[f"  {n}" for n in self.notes]])

    def _repr_html_(self) -> str:
        import html

        from .._format import display_frame

        notes = "".join(f"<br>{html.escape(n)}" for n in self.notes)
        return (f"<p>{html.escape(self.summary().splitlines()[0])}</p>" + display_frame(self.table).to_html(index=False)
                + f"<p>{notes[4:]}</p>")

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``mixeval power --json`` (``rows``: the table's records)."""
        out = super().to_dict()
        out["rows"] = out.pop("table")
        return out


def _refit(model, Y: np.ndarray, **options) -> list:
    """``model.refit(Y)``; where a block fails, column by column, a failed column as None."""
    try:
        return model.refit(Y, **options)
    except (np.linalg.LinAlgError, FloatingPointError):
        out = []
        for b in range(Y.shape[1]):
            try:
                out.extend(model.refit(Y[:, b:b + 1], **options))
            except (np.linalg.LinAlgError, FloatingPointError):
                out.append(None)
        return out


def _criterion(refits: list) -> np.ndarray:
    return np.array([np.nan if r is None else r.criterion for r in refits])


def _contrast_numbers(refits: list, L: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The contrast's estimate and standard error of every refit (the location effects are the last parameters)."""
    p = L.size
    est, se = [], []
    for r in refits:
        if r is None:
            est.append(np.nan)
            se.append(np.nan)
            continue
        est.append(float(L @ r.params[-p:]))
        se.append(float(np.sqrt(max(L @ r.cov_coef @ L, 0.0))))
    return np.array(est), np.array(se)


def _wald_by_result(models: DesignModels, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Estimate, standard error and t df of the contrast from full refits (Kenward-Roger or Satterthwaite)."""
    L = models.contrast
    est, se, dfs = [], [], []
    for b in range(Y.shape[1]):
        try:
            res = models.wald.refit_result(Y[:, b], reml=models.wald_reml)
            inf = df_inference(res, models.df_method)
            est.append(float(L @ np.asarray(res.coef, dtype=float)))
            se.append(float(np.sqrt(max(L @ inf.vcov @ L, 0.0))))
            dfs.append(float(inf.df(L)[0]))
        except (np.linalg.LinAlgError, FloatingPointError):
            est.append(np.nan)
            se.append(np.nan)
            dfs.append(np.nan)
    return np.array(est), np.array(se), np.array(dfs)


def _block_pvalues(models: DesignModels, plan: TestPlan, Y: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Every test's p-value for each column of ``Y`` (NaN where a refit failed) and each full refit's singularity."""
    out: dict[str, np.ndarray] = {}
    full = None
    asymptotic = models.df_method == "asymptotic"
    shared = plan.wald and asymptotic and models.wald is models.full  # one ML refit serves the GLRT and the Wald tests
    if plan.glrt:
        full = _refit(models.full, Y, reml=False, hessian=shared)
        null = _refit(models.null, Y, reml=False)
        out["glrt"] = glrt_pvalues(_criterion(null), _criterion(full), models.n_tested)
    if plan.wald:
        if asymptotic:
            refits = full if shared and full is not None else _refit(models.wald, Y, reml=models.wald_reml,
                                                                    hessian=True)
            full = full if full is not None else refits
            est, se = _contrast_numbers(refits, models.contrast)
            df = np.full(est.size, np.inf)
        else:
            est, se, df = _wald_by_result(models, Y)
        out.update(wald_pvalues(plan, est, se, df))
    singular = np.array([np.nan if r is None else float(r.singular) for r in full]) if full is not None else \
        np.full(Y.shape[1], np.nan)
    return out, singular


def simulate_design(models: DesignModels, plan: TestPlan, n_resamples: int, rng: np.random.Generator,
                    advance=None) -> list[dict[str, float]]:
    """One row per test of :class:`PowerResult`'s table for one design: power, its Monte Carlo se, singular and
    failed refits, from ``n_resamples`` responses simulated from ``models.full``."""
    block = max(1, min(BLOCK, (1 << 22) // max(models.nobs, 1)))
    pvals: dict[str, list[np.ndarray]] = {t: [] for t in plan.tests}
    singular: list[np.ndarray] = []
    done = 0
    while done < n_resamples:
        k = min(block, n_resamples - done)
        Y = models.full.simulate(k, rng)
        with np.errstate(all="ignore"):
            p, s = _block_pvalues(models, plan, Y)
        for t in plan.tests:
            pvals[t].append(p[t])
        singular.append(s)
        done += k
        if advance is not None:
            advance(k)
    sing = np.concatenate(singular)
    rows = []
    for t in plan.tests:
        p = np.concatenate(pvals[t])
        ok = np.isfinite(p)
        m = int(ok.sum())
        power = float(np.mean(p[ok] < plan.alpha)) if m else float("nan")
        rows.append({"test": t, "power": power, "se": float(np.sqrt(power * (1.0 - power) / m)) if m else float("nan"),
                     "singular": float(np.nanmean(sing)) if np.isfinite(sing).any() else float("nan"),
                     "failed": int(p.size - m)})
    return rows


def _describe_df(models: DesignModels) -> str | None:
    if models.df_method is None:
        return None
    what = {"asymptotic": "z (asymptotic)", "kenward-roger": "t with Kenward-Roger df",
            "satterthwaite": "t with Satterthwaite df"}.get(models.df_method, f"t with {models.df_method} df")
    return what + (f" ({models.df_rule})" if models.df_rule else "")


def run_power(spec: PowerSpec, plan: TestPlan, *, n: Mapping[str, Sequence[int] | int], df: str | None,
              n_resamples: int, random_state: Any, progress: bool | None) -> PowerResult:
    """Power of ``plan``'s tests over the grid of designs ``n`` (facets not named keep ``spec.facets``)."""
    n_sim = require_positive_int(n_resamples, "n_resamples")
    grid = design_grid(n, list(spec.facets))
    rng = as_generator(random_state)
    rows, notes, df_notes = [], [], []
    bar = progress_bar(range(n_sim * len(grid)), total=n_sim * len(grid), desc="power", enabled=progress)
    it = iter(bar)

    def advance(k: int) -> None:
        for _ in range(k):
            next(it, None)

    try:
        for combo in grid:
            sizes = {f: int(combo.get(f, k)) for f, k in spec.facets.items()}
            reps = int(combo.get("replicates", spec.replicates))
            frame = crossed_design(sizes, spec.systems, system=spec.system, replicates=reps)
            models = design_models(spec, plan, df, frame, rng)
            described = _describe_df(models)
            if described and described not in df_notes:
                df_notes.append(described)
            for row in simulate_design(models, plan, n_sim, rng, advance):
                rows.append({**combo, "nobs": len(frame), **row})
    finally:
        if hasattr(bar, "close"):
            bar.close()
    for t in plan.tests:
        notes.append("H0 of " + plan.hypothesis(t, spec.contrast_label))
    if plan.wald:
        notes.append(f"{', '.join(t for t in plan.tests if t in WALD_TESTS)}: "
                     + "; ".join(df_notes) + f"; the contrast {spec.contrast_label} on the link scale")
    method = df if df is not None else (None if not plan.wald else models.df_method)
    return PowerResult(table=pd.DataFrame(rows), tests=plan.tests, alpha=plan.alpha, n_resamples=n_sim,
                       family=spec.family.name, parameters={k: float(v) for k, v in spec.truth.items()},
                       contrast=spec.contrast_label, df=method, margin=plan.margin, notes=tuple(notes))


def closed_form_paired_power(delta: float, sd_diff: float, n_items: int, alpha: float = 0.05, *,
                             df: str = "asymptotic") -> float:
    """Exact power of the pairwise test in a balanced paired design (2 systems, one score per item and system).

    Notes
    -----
    With ``y_is = mu + a_s + b_i + e_is`` the REML fit with ``(1|item)`` (interior estimate) gives the
    paired analysis: the Wald statistic is ``dbar / (s_d / sqrt(n))`` with ``s_d`` the standard deviation of the item
    differences, i.e. a t statistic with ``n - 1`` degrees of freedom and non-centrality
    ``delta sqrt(n) / sd_diff``. The z test (``df="asymptotic"``) rejects when it exceeds ``z_{1 - alpha/2}``, the
    Kenward-Roger t test (``df="kenward-roger"``, whose df here are ``n - 1``) when it exceeds ``t_{n-1, 1 - alpha/2}``:
    ``power = P(|T_{n-1, ncp}| > c)``.

    Examples
    --------
    >>> round(closed_form_paired_power(0.5, 2 ** 0.5, 40), 3)
    0.611
    >>> round(closed_form_paired_power(0.5, 2 ** 0.5, 40, df="kenward-roger"), 3)
    0.587
    """
    from scipy.stats import nct, t

    if df not in ("asymptotic", "kenward-roger"):
        raise InputError(f"df must be 'asymptotic' or 'kenward-roger'; got {df!r}.")
    crit = float(norm.ppf(1.0 - alpha / 2.0)) if df == "asymptotic" else float(t.ppf(1.0 - alpha / 2.0, n_items - 1))
    ncp = delta * np.sqrt(n_items) / sd_diff
    upper = nct.sf(crit, n_items - 1, ncp)
    lower = nct.sf(crit, n_items - 1, -ncp)  # P(T < -c) for ncp = P(T > c) for -ncp (scipy's cdf can be NaN far in the tail)
    return float(np.nan_to_num(upper) + np.nan_to_num(lower))
