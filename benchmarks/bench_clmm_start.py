"""Where clmm starts and stops: evaluations of the Laplace deviance on rating designs with known truth.

Usage: python3 benchmarks/bench_clmm_start.py [--repeats K] [--out FILE]

Compares, on the same data in one run, the start and stopping rules of :func:`mixeval.mixed._clmm.optimize_clmm`:

- ``lme4-start``: theta-only stage from lme4's start (1), stopped at a predicted gain of 0.1; joint stage
  polished to rounding (the rules before the quadratic-expansion start);
- ``quadratic``: theta-only stage from :func:`~mixeval.mixed._clmm.quadratic_start` (the Laplace deviance of the
  quadratic expansion of the log-likelihood about the fit without random effects), stopped within one standard
  error (``_START_TOL``), joint stage stopped within 1e-5 standard errors (``_JOINT_TOL``): the defaults;
- ``quadratic-no-stage``: the joint stage straight from the quadratic start (no theta-only stage).

Each row reports the evaluations of the deviance (with its gradient, or alone) over the whole fit (starts, joint
stage and the standard errors' Hessian), the least CPU time of K fits, and the log-likelihood and variances beside
the defaults'. Writes benchmarks/results/bench_clmm_start.json (or FILE).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mixeval.mixed import _clmm, clmm  # noqa: E402

SOUP = ROOT / "tests" / "mixed" / "fixtures" / "clmm" / "soup.csv"


def crossed(n_items: int, n_raters: int, n_sys: int, sd_item: float, sd_rater: float, seed: int,
            cuts=(-2.0, -0.7, 0.6, 2.0), probit: bool = False) -> pd.DataFrame:
    """Items x raters crossed, each item from one of ``n_sys`` systems (effects 0 .. 0.9)."""
    rng = np.random.default_rng(seed)
    item = np.repeat(np.arange(n_items), n_raters)
    rater = np.tile(np.arange(n_raters), n_items)
    system = item % n_sys
    latent = (np.linspace(0, 0.9, n_sys)[system] + rng.normal(0, sd_item, n_items)[item]
              + rng.normal(0, sd_rater, n_raters)[rater])
    noise = rng.normal(size=item.size) if probit else rng.logistic(size=item.size)
    return pd.DataFrame({"rating": np.digitize(latent + noise, cuts) + 1, "system": [f"s{k}" for k in system],
                         "item": [f"i{k}" for k in item], "rater": [f"r{k}" for k in rater]})


def nested(n_sites: int, raters_per: int, n_items: int, sd_site: float, sd_rater: float, seed: int) -> pd.DataFrame:
    """Raters nested in sites, every rater rating the same items from two systems."""
    rng = np.random.default_rng(seed)
    site = np.repeat(np.arange(n_sites), raters_per * n_items)
    rater = np.tile(np.repeat(np.arange(raters_per), n_items), n_sites)
    item = np.tile(np.arange(n_items), n_sites * raters_per)
    system = item % 2
    latent = (0.6 * system + rng.normal(0, sd_site, n_sites)[site]
              + rng.normal(0, sd_rater, (n_sites, raters_per))[site, rater])
    return pd.DataFrame({"rating": np.digitize(latent + rng.logistic(size=site.size), [-1.5, -0.3, 0.8, 2.0]) + 1,
                         "sys": [f"k{k}" for k in system], "site": [f"S{k}" for k in site],
                         "rater": [f"R{k}" for k in rater]})


def slopes(n_raters: int, n_items: int, seed: int) -> pd.DataFrame:
    """Random intercepts and slopes of a covariate by rater (a vector-valued term)."""
    rng = np.random.default_rng(seed)
    rater = np.repeat(np.arange(n_raters), n_items)
    x = np.tile(np.linspace(-1, 1, n_items), n_raters)
    latent = 0.7 * x + rng.normal(0, 0.8, n_raters)[rater] + rng.normal(0, 0.5, n_raters)[rater] * x
    return pd.DataFrame({"rating": np.digitize(latent + rng.logistic(size=x.size), [-1.5, 0.0, 1.5]) + 1, "x": x,
                         "rater": [f"r{k}" for k in rater]})


def designs() -> list[tuple[str, str, pd.DataFrame, dict]]:
    soup = pd.read_csv(SOUP)
    crossed_f = "rating ~ system + (1|item) + (1|rater)"
    out = [
        ("soup", "SURENESS ~ PROD + (1|RESP) + (1|RESP:PROD)", soup, {}),
        ("soup probit", "SURENESS ~ PROD + (1|RESP) + (1|RESP:PROD)", soup, {"link": "probit"}),
        ("soup (1|RESP)", "SURENESS ~ PROD + (1|RESP)", soup, {}),
        ("items x raters 9,448", crossed_f, crossed(472, 20, 4, 1.0, 0.5, 1).iloc[:9448], {}),
    ]
    for n_raters in (3, 4, 5, 6):
        for seed in (1, 2, 3):
            out.append((f"{n_raters} raters x 60 items, seed {seed}", crossed_f,
                        crossed(60, n_raters, 3, 1.0, 0.6, 10 * n_raters + seed), {}))
    out += [
        ("item SD 2.5, 3 categories", crossed_f, crossed(80, 8, 2, 2.5, 1.0, 5, cuts=(-0.5, 0.5)), {}),
        ("item SD 2.5, 3 categories, seed 2", crossed_f, crossed(80, 8, 2, 2.5, 1.0, 15, cuts=(-0.5, 0.5)), {}),
        ("rater variance 0", crossed_f, crossed(100, 6, 2, 1.0, 0.0, 6), {}),
        ("item variance 0", crossed_f, crossed(100, 6, 2, 0.0, 0.7, 7), {}),
        ("probit, 7 points", crossed_f,
         crossed(120, 5, 3, 0.8, 0.4, 8, cuts=(-1.5, -1, -0.4, 0.3, 0.9, 1.6), probit=True), {"link": "probit"}),
        ("raters nested in sites", "rating ~ sys + (1|site) + (1|site:rater)", nested(8, 5, 20, 0.6, 0.5, 9), {}),
        ("one term", "rating ~ system + (1|item)", crossed(150, 4, 3, 1.2, 0.0, 11), {}),
        ("random slopes", "rating ~ x + (1 + x|rater)", slopes(30, 20, 12), {}),
        ("equidistant", crossed_f, crossed(100, 5, 2, 1.0, 0.5, 13), {"threshold": "equidistant"}),
    ]
    return out


def _lme4_start(dev, fixed):
    return dev.problem.re.theta0


VARIANTS = {
    "lme4-start": {"quadratic_start": _lme4_start, "_START_TOL": 0.1, "_JOINT_TOL": 0.0},
    "quadratic": {},
    "quadratic-no-stage": {"_START_TOL": np.inf},
}


class _Counter:
    """Counts evaluations of the Laplace deviance of models with random effects."""

    def __init__(self):
        self.n = 0
        self._dg, self._d = _clmm.ClmmDeviance._deviance_and_gradient, _clmm.ClmmDeviance.deviance
        counter = self

        def dg(dev, x):
            counter.n += dev.k > 0
            return counter._dg(dev, x)

        def d(dev, x):
            counter.n += dev.k > 0
            return counter._d(dev, x)

        _clmm.ClmmDeviance._deviance_and_gradient, _clmm.ClmmDeviance.deviance = dg, d


def run(repeats: int) -> dict:
    counter = _Counter()
    defaults = {name: getattr(_clmm, name) for v in VARIANTS.values() for name in v}
    out: dict = {}
    for label, formula, df, kw in designs():
        row = {"nobs": len(df), "formula": formula, **kw}
        for variant, settings in VARIANTS.items():
            for name, value in {**defaults, **settings}.items():
                setattr(_clmm, name, value)
            cpu = []
            for _ in range(repeats):
                counter.n = 0
                c0 = time.process_time()
                fit = clmm(formula, df, **kw)
                cpu.append(time.process_time() - c0)
            row[variant] = {"evaluations": counter.n, "cpu_seconds": min(cpu), "loglik": fit.loglik,
                            "variances": {k: float(v) for k, v in fit.components.items()},
                            "converged": bool(fit.converged)}
        for name, value in defaults.items():
            setattr(_clmm, name, value)
        base = row["quadratic"]
        for variant in VARIANTS:
            row[variant]["loglik_minus_default"] = row[variant]["loglik"] - base["loglik"]
        out[label] = row
        print(f"{label:36s} " + "  ".join(f"{v}: {row[v]['evaluations']:4d} ({1000 * row[v]['cpu_seconds']:6.1f} ms, "
                                          f"dll {row[v]['loglik_minus_default']:+.1e})" for v in VARIANTS), flush=True)
    totals = {v: sum(r[v]["evaluations"] for r in out.values()) for v in VARIANTS}
    print("total evaluations:", totals)
    return {"designs": out, "total_evaluations": totals}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "bench_clmm_start.json"))
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    clmm("r ~ g + (1|h)", pd.DataFrame({"r": [1, 2, 3, 1, 2, 3] * 4, "g": list("ab") * 12, "h": list("xyzw") * 6}))
    result = run(args.repeats)
    Path(args.out).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
