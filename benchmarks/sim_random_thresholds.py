"""Random rater thresholds (``clmm(..., random_thresholds="rater")``): recovery, the spread GLRT and the coverage of
the fit's 95% Wald intervals by simulation.

Usage: nice -n 10 python3 benchmarks/sim_random_thresholds.py [--reps 50] [--raters 60] [--items 50] [--seed 1]
                                                               [--setting 0|1|2] [--out FILE]
Writes benchmarks/results/sim_random_thresholds.json (or FILE: settings, per-replicate rows, summaries); with
``--setting`` only that setting (the two can run side by side; setting k draws from seed + k either way).

Truth: ``P(Y <= j | rater r, item i) = F(theta_j + s_r d_j - 0.5 [system B] - b_i - c_r)``, logit, 5 points,
``theta = (-2, -0.7, 0.7, 2)``, ``d = (-1, -1/3, 1/3, 1)``, item sd 1, rater shift sd 0.5, every rater rates every
item, half the items from system B. Spread sd 0 (the GLRT's type I error), 0.4 with correlation 0.3 between
shift and spread (power, and recovery of the spread sd and of the correlation) and 0.15 (power near the null).
Each replicate also records whether the alternative fit's 95% Wald intervals (``fit.confint(method="wald")``: the
Hessian of the Laplace deviance; sd's on the log scale) cover the true thresholds, system effect and sd's.
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

from mixeval.mixed import threshold_spread_test  # noqa: E402

THETA = np.array([-2.0, -0.7, 0.7, 2.0])
D = np.linspace(-1.0, 1.0, 4)


def simulate(rng: np.random.Generator, n_raters: int, n_items: int, spread_sd: float, corr: float) -> pd.DataFrame:
    rater = np.repeat(np.arange(n_raters), n_items)
    item = np.tile(np.arange(n_items), n_raters)
    system = item % 2
    cov = np.array([[0.25, corr * 0.5 * spread_sd], [corr * 0.5 * spread_sd, spread_sd**2]])
    cs = rng.multivariate_normal(np.zeros(2), cov, size=n_raters) if spread_sd > 0 else \
        np.column_stack([rng.normal(0, 0.5, n_raters), np.zeros(n_raters)])
    latent = 0.5 * system + rng.normal(0, 1.0, n_items)[item] + rng.logistic(size=rater.size)
    cuts = THETA[None, :] + cs[:, 1:2] * D[None, :] - cs[:, 0:1]
    rating = (latent[:, None] > cuts[rater]).sum(axis=1) + 1
    return pd.DataFrame({"rating": rating, "system": np.where(system == 1, "B", "A"), "item": item, "rater": rater})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--setting", type=int, choices=(0, 1, 2), default=None)
    ap.add_argument("--raters", type=int, default=60)
    ap.add_argument("--items", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "sim_random_thresholds.json"))
    args = ap.parse_args()
    settings = [{"spread_sd": 0.0, "corr": 0.0}, {"spread_sd": 0.4, "corr": 0.3}, {"spread_sd": 0.15, "corr": 0.0}]
    formula = "rating ~ system + (1|item) + (1|rater)"
    out = {"formula": formula, "raters": args.raters, "items": args.items, "reps": args.reps, "seed": args.seed,
           "settings": []}
    for index, st in enumerate(settings):
        if args.setting is not None and index != args.setting:
            continue
        rng = np.random.default_rng(args.seed + index)
        rows = []
        for rep in range(args.reps):
            df = simulate(rng, args.raters, args.items, st["spread_sd"], st["corr"])
            t0 = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = threshold_spread_test(formula, df, "rater")
            alt = res.details["alternative"]
            cov = alt.covariances["(1 + spread | rater)"].to_numpy()
            sd = np.sqrt(np.diag(cov))
            wald = alt.confint(method="wald").table
            truth = {**dict(zip(alt.alpha_names, THETA)), "systemB": 0.5, "sd_(Intercept)|item": 1.0,
                     "sd_(Intercept)|rater": 0.5, "sd_spread|rater": st["spread_sd"]}
            covered = {k: bool(wald.loc[k, "lower"] <= v <= wald.loc[k, "upper"])
                       for k, v in truth.items() if np.isfinite(wald.loc[k, "lower"])}
            rows.append({"rep": rep, "statistic": res.statistic, "pvalue": res.pvalue,
                         "pvalue_naive": res.details["pvalue_naive"], "shift_sd": float(sd[0]),
                         "spread_sd": float(sd[1]),
                         "corr": float(cov[0, 1] / (sd[0] * sd[1])) if sd[1] > 1e-8 and sd[0] > 0 else None,
                         "systemB": float(alt.fixef["systemB"]), "item_var": float(alt.components["item"]),
                         "wald_covered": covered, "converged": alt.converged, "cpu_seconds": time.process_time() - t0})
            print(st, rep, {k: rows[-1][k] for k in ("statistic", "pvalue", "spread_sd", "cpu_seconds")}, flush=True)
        p = np.array([r["pvalue"] for r in rows])
        pn = np.array([r["pvalue_naive"] for r in rows])
        sds = np.array([r["spread_sd"] for r in rows])
        corrs = np.array([r["corr"] for r in rows if r["corr"] is not None])
        summary = {"reject_5pct": float(np.mean(p < 0.05)), "reject_5pct_se": float(np.sqrt(0.05 * 0.95 / len(p))),
                   "reject_5pct_naive_chi2_2": float(np.mean(pn < 0.05)), "reject_10pct": float(np.mean(p < 0.10)),
                   "share_statistic_zero": float(np.mean(np.array([r["statistic"] for r in rows]) < 1e-6)),
                   "spread_sd_mean": float(sds.mean()), "spread_sd_mc_se": float(sds.std(ddof=1) / np.sqrt(len(sds))),
                   "shift_sd_mean": float(np.mean([r["shift_sd"] for r in rows])),
                   "corr_mean": float(corrs.mean()) if corrs.size else None,
                   "systemB_mean": float(np.mean([r["systemB"] for r in rows])),
                   "item_var_mean": float(np.mean([r["item_var"] for r in rows])),
                   "all_converged": bool(all(r["converged"] for r in rows)),
                   "wald_coverage": {k: {"coverage": float(np.mean(v)), "mc_se": float(np.sqrt(0.95 * 0.05 / len(v))),
                                         "n": len(v)}
                                     for k in rows[0]["wald_covered"]
                                     for v in [[r["wald_covered"][k] for r in rows if k in r["wald_covered"]]]},
                   "cpu_seconds_total": float(sum(r["cpu_seconds"] for r in rows))}
        out["settings"].append({**st, "summary": summary, "replicates": rows})
        print(st, summary, flush=True)
        Path(args.out).write_text(json.dumps(out, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
