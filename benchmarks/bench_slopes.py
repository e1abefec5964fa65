"""Benchmark: random-slope models, mixeval.lmer against lme4 (Rscript) and the PyPI package mixedlm, in one run.

    python benchmarks/bench_slopes.py [--skip-r] [--repeat 3]

Data are simulated here (seeded): the book's A.2.2 lexical-decision layout (subjects x items, items
nested in a category x, ``rt ~ x + (1 + x | subject) + (1 | item)``) at two sizes, and an evaluation log
with per-item system effects (``score ~ system + (1 + system | item) + (1 | seed)``). Times are wall-clock
seconds of one complete fit from an in-memory data frame (best of ``--repeat`` for the Python packages,
best of 3 inside one R session for lme4 with its default control, data loading excluded). "max rel diff"
is the largest relative difference of a variance/covariance from lme4's (components below 1e-6 of the
total variance compared on that scale). Prints a markdown table (figures: docs/performance.md).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from _timing import best_time


HERE = Path(__file__).resolve().parent


def lexical(n_subject: int, n_item: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    subject = np.repeat(np.arange(n_subject), n_item)
    item = np.tile(np.arange(n_item), n_subject)
    x = (item >= n_item // 2).astype(float)
    b = rng.multivariate_normal([0, 0], [[3600.0, 600.0], [600.0, 625.0]], size=n_subject)
    rt = 500 + 40 * x + b[subject, 0] + b[subject, 1] * x + rng.normal(0, 30, n_item)[item] + rng.normal(0, 50, subject.size)
    return pd.DataFrame({"subject": [f"s{v}" for v in subject], "item": [f"i{v}" for v in item], "x": x, "rt": rt})


def evaluation_log(n_item: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n_sys, n_seed = 3, 3
    item = np.repeat(np.arange(n_item), n_sys * n_seed)
    system = np.tile(np.repeat(np.arange(n_sys), n_seed), n_item)
    seed_ = np.tile(np.arange(n_seed), n_item * n_sys)
    b = rng.multivariate_normal([0, 0, 0], [[1.0, 0.3, -0.2], [0.3, 0.5, 0.1], [-0.2, 0.1, 0.4]], size=n_item)
    score = (0.2 * system + b[item, 0] + np.where(system > 0, b[item, np.maximum(system, 1)], 0.0)
             + rng.normal(0, 0.2, n_seed)[seed_] + rng.normal(0, 0.5, item.size))
    return pd.DataFrame({"item": [f"q{v}" for v in item], "system": np.array(list("ABC"))[system],
                         "seed": [f"r{v}" for v in seed_], "score": score})


CASES = {
    "A.2.2 lexical, 24 x 16": (lambda: lexical(24, 16, 1), "rt ~ x + (1 + x | subject) + (1 | item)"),
    "A.2.2 lexical, 60 x 80": (lambda: lexical(60, 80, 2), "rt ~ x + (1 + x | subject) + (1 | item)"),
    "A.2.2 lexical ||, 60 x 80": (lambda: lexical(60, 80, 2), "rt ~ x + (1 + x || subject) + (1 | item)"),
    "eval log, 1000 items": (lambda: evaluation_log(1000, 3), "score ~ system + (1 + system | item) + (1 | seed)"),
}


def run_mixeval(df, formula, repeat):
    from mixeval import lmer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, fit = best_time(lambda: lmer(formula, df), repeat)
    return t, fit.components, fit.loglik


def run_mixedlm(df, formula, repeat):
    import mixedlm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, fit = best_time(lambda: mixedlm.lmer(formula, df), max(1, repeat))
    out = {}
    try:
        vc = fit.VarCorr()
        for g, grp in vc.groups.items():
            names = list(grp.term_names)
            cov = np.asarray(grp.cov)
            for i, a in enumerate(names):
                out[g if a == "(Intercept)" else f"{g}.{a}"] = float(cov[i, i])
                for j in range(i + 1, len(names)):
                    out[f"{g}.{a}.{names[j]}"] = float(cov[i, j])
        out["Residual"] = float(vc.residual)
    except Exception:  # a different result API: report the time only
        out = {}
    return t, out


R_SCRIPT = r"""
suppressMessages({library(lme4); library(jsonlite)})
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1]); f <- as.formula(args[2])
best <- Inf
for (i in 1:3) { t <- system.time(m <- suppressMessages(lmer(f, d)))[["elapsed"]]; best <- min(best, t) }
vc <- as.data.frame(VarCorr(m))
cat(toJSON(list(seconds = best, grp = vc$grp, var1 = ifelse(is.na(vc$var1), "", vc$var1),
                var2 = ifelse(is.na(vc$var2), "", vc$var2), vcov = vc$vcov, loglik = as.numeric(logLik(m))),
           auto_unbox = TRUE, digits = NA))
"""


def run_lme4(df, formula):
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "d.csv"
        script = Path(tmp) / "t.R"
        df.to_csv(csv, index=False)
        script.write_text(R_SCRIPT)
        out = subprocess.run(["Rscript", str(script), str(csv), formula], capture_output=True, text=True, check=True)
    res = json.loads(out.stdout)
    comps = {}
    groups = set()
    for g, a, b, v in zip(res["grp"], res["var1"], res["var2"], res["vcov"]):
        base = g.split(".")[0] if g != "Residual" else g
        groups.add(base)
        key = base if g == "Residual" or (a == "(Intercept)" and not b) else (f"{base}.{a}" if not b else f"{base}.{a}.{b}")
        comps[key] = v
    return res["seconds"], comps, res["loglik"]


def max_rel_diff(a: dict, ref: dict) -> float:
    if not a:
        return float("nan")
    total = sum(abs(v) for v in ref.values())
    return max(abs(a.get(k, np.nan) - v) / max(abs(v), 1e-6 * total) for k, v in ref.items())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip-r", action="store_true")
    ap.add_argument("--skip-mixedlm", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rows = []
    for name, (make, formula) in CASES.items():
        df = make()
        t_me, comps, ll = run_mixeval(df, formula, args.repeat)
        row = {"model": name, "formula": formula, "rows": len(df), "mixeval_s": t_me}
        if not args.skip_r:
            t_r, ref, ll_r = run_lme4(df, formula)
            row.update({"lme4_s": t_r, "lme4/mixeval": t_r / t_me, "max rel diff vs lme4": max_rel_diff(comps, ref),
                        "logLik - lme4": ll - ll_r})
        if not args.skip_mixedlm:
            t_m, comps_m = run_mixedlm(df, formula, args.repeat)
            row.update({"mixedlm_s": t_m, "mixedlm/mixeval": t_m / t_me})
            if not args.skip_r:
                row["mixedlm max rel diff vs lme4"] = max_rel_diff(comps_m, ref)
        rows.append(row)
        print(json.dumps(row), flush=True)
    print(pd.DataFrame(rows).drop(columns="formula").to_markdown(index=False, floatfmt=".3g"))


if __name__ == "__main__":
    main()
