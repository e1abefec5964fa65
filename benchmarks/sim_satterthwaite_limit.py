"""How close to 95 % a Satterthwaite (or any plug-in df) interval of a mean can come when its variance is
dominated by a component estimated from few levels.

The idealised model behind the 3-seed GLMM designs: an estimate ``b`` with

    b - beta ~ N(0, V),   V = rho * V + (1 - rho) * V,

where the share ``rho`` of ``V`` comes from a variance component whose estimate is ``V * rho * U / k``
with ``U ~ chi2(k)`` (``k`` = levels - 1: a component from three seeds has ``k = 2``) and the rest is known
(the binomial variance of a GLMM, or a residual estimated with many df). The estimated variance is
``Vhat = rho * V * U / k + (1 - rho) * V``; the interval is ``b +- q * sqrt(Vhat)``. Compared:

- ``satterthwaite``: ``q`` the t quantile with ``nu = 2 Vhat^2 / Var(Vhat) = k / rhohat^2`` (lmerTest;
  Kenward-Roger gives the same df for a one-df contrast in this balanced structure);
- ``plugin_exact``: ``q`` the exact 97.5 % quantile of the pivot ``(b - beta) / sqrt(Vhat)`` at
  ``rho = rhohat``, the best any plug-in df (or a parametric bootstrap-t) can do;
- ``fiducial``: the generalized pivotal quantity (Weerahandi 1993), ``b - Z sqrt(k * part / U' + known)``
  with ``part`` the component's estimated part of ``Vhat`` and ``U' ~ chi2(k)``: the component drawn from
  its posterior under the ``1 / variance`` prior.

Exact for ``rho = 1`` (the balanced Gaussian case, a t with ``k`` df); the question is ``0 < rho < 1``.

The second part, ``satterthwaite-upper`` (:mod:`mixeval.significance._satterthwaite`), evaluates the df at each
component's upper bound ``k / chi2_p(k)``; ``calibrate`` chooses ``p`` (the worst coverage error over ``k`` in
2-19 and ``rho`` in (0, 1] at 95 %, then checked at 90 % and 99 %). ``analog`` fits the Gaussian counterpart of
the 3-seed binary design (``sim_gaussian_analog.R``: 60 items x 3 seeds x 4 systems, item variance 0.25, seed
variance 0.36, residual 6.25) with mixeval's lmer and summarises R's run of the same design.

    python benchmarks/sim_satterthwaite_limit.py            # -> results/sim_satterthwaite_limit.{json,md}
    python benchmarks/sim_satterthwaite_limit.py calibrate  # -> results/sim_satterthwaite_calibration.md
    python benchmarks/sim_satterthwaite_limit.py analog 1000  # -> results/sim_gaussian_analog.md
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np
from scipy import optimize, special, stats

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from mixeval.significance._satterthwaite import (  # noqa: E402
    SHARE_QUANTILE, satterthwaite_df, satterthwaite_upper_df)

HERE = os.path.dirname(os.path.abspath(__file__))
LEVEL = 0.95
RHOS = (0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 1.0)
KS = (2, 3, 4, 9)
N_REP = 200_000     # replicates per (k, rho): Monte Carlo se of a coverage near 95 % is 0.05 points
N_STRATA = 20_000   # chi2 quantile points for the exact mixture quantiles
RHO_GRID = np.linspace(0.0, 1.0, 401)


def scale_mixture_quantile(k: int, fiducial: bool) -> np.ndarray:
    """The 95 % quantile of ``|Z| * s`` on ``RHO_GRID``, ``s = 1 / sqrt(rho U / k + 1 - rho)`` (the pivot of
    a plug-in interval) or ``s = sqrt(rho k / U + 1 - rho)`` (the fiducial draw), ``U ~ chi2(k)``.

    Deterministic: the expectation ``P(|Z| s <= x) = E[2 Phi(x / s) - 1]`` over ``N_STRATA`` stratified
    quantiles of ``U``, solved for ``x`` by Brent's method.
    """
    u = stats.chi2.ppf((np.arange(N_STRATA) + 0.5) / N_STRATA, k)
    out = []
    for r in RHO_GRID:
        s = np.sqrt(r * k / u + 1 - r) if fiducial else 1 / np.sqrt(r * u / k + 1 - r)
        cdf = lambda x: np.mean(2 * special.ndtr(x / s) - 1) - LEVEL  # noqa: E731
        out.append(optimize.brentq(cdf, 1e-3, 1e3, xtol=1e-10))
    return np.array(out)


def _idealised(k: int, rho: float, n: int, rng: np.random.Generator):
    """Replicates of the idealised model: ``z = (b - beta) / sqrt(V)``, the component's estimated part of
    ``Vhat`` and ``Vhat`` (``V = 1``)."""
    u = rng.chisquare(k, n)
    z = rng.standard_normal(n)
    part = rho * u / k
    return z, part, part + (1 - rho)


def idealised_df(part: np.ndarray, vhat: np.ndarray, k: int, quantile: float | None = None) -> np.ndarray:
    """The package's df in the idealised model (one component, ``g' A g = 2 part^2 / k``): Satterthwaite's
    (``quantile=None``) or satterthwaite-upper's with that quantile."""
    g = (part * np.sqrt(2.0 / k))[:, None]
    if quantile is None:
        return satterthwaite_df(vhat, g, np.eye(1))
    return satterthwaite_upper_df(vhat, g, np.eye(1), np.array([float(k)]), quantile=quantile)


def _covered(nu: np.ndarray, z: np.ndarray, vhat: np.ndarray, level: float = LEVEL) -> np.ndarray:
    """Whether ``|z| <= t_nu quantile * sqrt(vhat)``, by the t cdf (10x faster than the quantile)."""
    return special.stdtr(nu, np.abs(z) / np.sqrt(vhat)) <= 0.5 + level / 2


def coverage(k: int, rho: float, rng: np.random.Generator) -> dict:
    z, part, vhat = _idealised(k, rho, N_REP, rng)
    rhohat = part / vhat
    sat = _covered(idealised_df(part, vhat, k), z, vhat)
    plug = np.abs(z) <= np.interp(rhohat, RHO_GRID, scale_mixture_quantile(k, False)) * np.sqrt(vhat)
    fid = np.abs(z) <= np.interp(rhohat, RHO_GRID, scale_mixture_quantile(k, True)) * np.sqrt(vhat)
    upper = _covered(idealised_df(part, vhat, k, SHARE_QUANTILE), z, vhat)
    return {"k": k, "rho": rho, "satterthwaite": float(sat.mean()), "plugin_exact": float(plug.mean()),
            "fiducial": float(fid.mean()), "satterthwaite_upper": float(upper.mean())}


def main() -> None:
    rng = np.random.default_rng(20261123)
    rows = [coverage(k, rho, rng) for k in KS for rho in RHOS]
    out = os.path.join(HERE, "results", "sim_satterthwaite_limit")
    with open(out + ".json", "w") as fh:
        json.dump(rows, fh, indent=1)
    lines = ["| levels - 1 (k) | rho | Satterthwaite % | best plug-in % | fiducial % | Satterthwaite-upper % |",
             "|--:|--:|--:|--:|--:|--:|"]
    for r in rows:
        lines.append(f"| {r['k']} | {r['rho']:.2f} | {100 * r['satterthwaite']:.1f} | "
                     f"{100 * r['plugin_exact']:.1f} | {100 * r['fiducial']:.1f} | "
                     f"{100 * r['satterthwaite_upper']:.1f} |")
    lines.append("")
    lines.append(f"{N_REP:,} replicates per row (Monte Carlo se 0.05 points); quantiles exact (stratified chi2).")
    _write(out + ".md", lines)


CAL_KS = (2, 3, 4, 6, 9, 19)
CAL_RHOS = np.array([0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.98, 1.0])
CAL_QUANTILES = np.round(np.arange(0.20, 0.501, 0.01), 2)
N_CAL = 100_000


def _coverage_grid(quantile: float | None, level: float, draws: dict) -> np.ndarray:
    """Coverage (k x rho) of Satterthwaite (``quantile=None``) or satterthwaite-upper on common draws."""
    out = np.empty((len(CAL_KS), len(CAL_RHOS)))
    for a, k in enumerate(CAL_KS):
        for b, rho in enumerate(CAL_RHOS):
            z, part, vhat = draws[k, rho]
            out[a, b] = np.mean(_covered(idealised_df(part, vhat, k, quantile), z, vhat, level))
    return out


def calibrate() -> None:
    """Choose ``p``: the smallest worst-case coverage error at 95 % over ``CAL_KS`` x ``CAL_RHOS``."""
    rng = np.random.default_rng(20261124)
    draws = {(k, rho): _idealised(k, rho, N_CAL, rng) for k in CAL_KS for rho in CAL_RHOS}
    lines = ["| p | worst error at 95 % (points) | lowest % | highest % |", "|--:|--:|--:|--:|"]
    worst = {}
    for q in CAL_QUANTILES:
        cov = 100 * _coverage_grid(q, 0.95, draws)
        worst[q] = float(np.max(np.abs(cov - 95)))
        lines.append(f"| {q:.2f} | {worst[q]:.2f} | {cov.min():.2f} | {cov.max():.2f} |")
    best = min(worst, key=worst.get)
    lines += ["", f"Chosen p = {best:.2f} (the package's SHARE_QUANTILE is {SHARE_QUANTILE}).", "",
              "| level | method | " + " | ".join(f"k = {k}" for k in CAL_KS) + " |",
              "|--:|---|" + "--:|" * len(CAL_KS)]
    for level in (0.90, 0.95, 0.99):
        for name, q in (("Satterthwaite", None), ("Satterthwaite-upper", SHARE_QUANTILE)):
            cov = 100 * _coverage_grid(q, level, draws)
            cells = " | ".join(f"{lo:.1f}-{hi:.1f}" for lo, hi in zip(cov.min(axis=1), cov.max(axis=1)))
            lines.append(f"| {100 * level:.0f} % | {name} | {cells} |")
    lines += ["", f"Coverage range over rho in {{{', '.join(f'{r:g}' for r in CAL_RHOS)}}}; {N_CAL:,} common "
              "replicates per (k, rho) (Monte Carlo se 0.07 points at 95 %).", "",
              "Two estimated components, 95 %:", ""] + two_components()
    _write(os.path.join(HERE, "results", "sim_satterthwaite_calibration.md"), lines)


TWO_COMPONENTS = ((2, 2, 0.45, 0.45), (2, 2, 0.3, 0.3), (2, 2, 0.1, 0.1), (2, 2, 0.6, 0.2), (3, 3, 0.4, 0.4),
                  (2, 9, 0.5, 0.3), (2, 59, 0.5, 0.3), (2, 59, 0.8, 0.05))


def two_components() -> list[str]:
    """Two estimated components (``k1``, ``k2`` df, shares ``rho1``, ``rho2``): the package's per-component
    upper bounds against pooling both parts into one scaled chi-square (Satterthwaite's df of their sum)."""
    rng = np.random.default_rng(20261127)
    lines = ["| k1 | k2 | rho1 | rho2 | Satterthwaite % | upper, per component (package) % | upper, pooled % |",
             "|--:|--:|--:|--:|--:|--:|--:|"]
    for k1, k2, r1, r2 in TWO_COMPONENTS:
        z = rng.standard_normal(N_REP)
        s1, s2 = r1 * rng.chisquare(k1, N_REP) / k1, r2 * rng.chisquare(k2, N_REP) / k2
        vhat = s1 + s2 + (1 - r1 - r2)
        g = np.column_stack([s1 * np.sqrt(2.0 / k1), s2 * np.sqrt(2.0 / k2)])
        satt = satterthwaite_df(vhat, g, np.eye(2))
        per = satterthwaite_upper_df(vhat, g, np.eye(2), np.array([float(k1), float(k2)]))
        total = s1 + s2
        k_pool = total ** 2 / (s1 ** 2 / k1 + s2 ** 2 / k2)
        m_pool = k_pool / stats.chi2.ppf(SHARE_QUANTILE, k_pool)
        pooled = np.minimum(satterthwaite_df(vhat + (m_pool - 1) * total, g * m_pool[:, None], np.eye(2)), satt)
        cov = [np.mean(_covered(nu, z, vhat)) for nu in (satt, per, pooled)]
        lines.append(f"| {k1} | {k2} | {r1} | {r2} | " + " | ".join(f"{100 * c:.1f}" for c in cov) + " |")
    return lines + ["", f"{N_REP:,} replicates per row."]


def analog(n_rep: int) -> None:
    """mixeval's lmer on the Gaussian counterpart of the 3-seed design, and R's run of it."""
    import warnings

    import pandas as pd

    from mixeval import lmer
    from mixeval.significance import emmeans

    methods = ("asymptotic", "satterthwaite", "kenward-roger", "satterthwaite-upper")
    rng = np.random.default_rng(20261125)
    d = pd.MultiIndex.from_product([range(60), range(3), range(4)], names=["item", "seed", "system"]).to_frame(index=False)
    codes = d.copy()
    d["item"] = "i" + d.item.astype(str)
    d["seed"] = "s" + d.seed.astype(str)
    d["system"] = np.array(list("ABCD"))[codes.system]
    truth = np.log(0.8 / 0.2)
    cover = {m: [] for m in methods}
    for _ in range(n_rep):
        d["y"] = (truth + rng.normal(0, 0.5, 60)[codes.item] + rng.normal(0, 0.6, 3)[codes.seed]
                  + rng.normal(0, 2.5, len(d)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = lmer("y ~ system + (1|item) + (1|seed)", d)
        for m in methods:
            e = emmeans(fit, "system", df=m)
            cover[m].append(float(np.mean((e.lower <= truth) & (truth <= e.upper))))
    lines = ["| tool | df method | reps | coverage of the 4 system means % |", "|---|---|--:|--:|"]
    for m in methods:
        c = np.array(cover[m])
        lines.append(f"| mixeval lmer | {m} | {n_rep} | {100 * c.mean():.1f} ({100 * c.std(ddof=1) / np.sqrt(n_rep):.1f}) |")
    r_csv = os.path.join(HERE, "results", "sim_gaussian_analog.csv.gz")
    if os.path.exists(r_csv):
        r = pd.read_csv(r_csv)
        for m, g in r.groupby("method", sort=False):
            per = g.groupby("rep").cover.mean()
            lines.append(f"| R lmerTest/pbkrtest + emmeans | {m} | {per.size} | {100 * per.mean():.1f} "
                         f"({100 * per.std(ddof=1) / np.sqrt(per.size):.1f}) |")
    lines += ["", "Monte Carlo SEs in parentheses (from the per-replicate means); the R rows are "
              "`sim_gaussian_analog.R` (another random stream)."]
    _write(os.path.join(HERE, "results", "sim_gaussian_analog.md"), lines)


def _write(path: str, lines: list[str]) -> None:
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "calibrate":
        calibrate()
    elif len(sys.argv) > 1 and sys.argv[1] == "two":
        print("\n".join(two_components()))
    elif len(sys.argv) > 1 and sys.argv[1] == "analog":
        analog(int(sys.argv[2]) if len(sys.argv) > 2 else 1000)
    else:
        main()
