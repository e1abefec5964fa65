"""Uncertainty tools against lme4, side by side in one run.

1. Parametric bootstrap, 1000 refits of the Table 3.1 model (Marking annotations): mixeval
   ``bootstrap_fit`` vs lme4 ``bootMer`` (``nsim = 1000``, same statistic: sd's, sigma, fixed effects).
2. Profile intervals of the Table 3.1 model: mixeval ``confint(method="profile")`` vs lme4
   ``confint(method = "profile")``.
3. Power curve: 5 designs (1,000 ... 5,000 items x 5 seeds x 2 systems; 10,000 ... 50,000 rows) x
   ``--nsim`` simulations of ``score ~ system + (1|item) + (1|seed)``, GLRT of the system effect (ML fits):
   mixeval ``power_from_components`` vs the simulate/refit loop of ``power_lme4.R`` (lme4 ``simulate`` with
   the assumed parameters, ``refit`` of the full and null models, ``anova``). R runs ``--r-nsim``
   simulations per design here, or its log from a run started beside this one is read (``--r-power-log``:
   the R loop takes hours at 500 simulations per design, so it runs in the background); the table reports
   the simulations R completed and its measured time per simulation, nothing extrapolated.

    Rscript benchmarks/power_lme4.R 1000,2000,3000,4000,5000 500 benchmarks/results/power_lme4.log &
    python3 benchmarks/bench_uncertainty.py --bookdata /work/shared/bookdata --nsim 500 \
        --r-power-log benchmarks/results/power_lme4.log
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from mixeval import lmer
from mixeval.uncertainty import bootstrap_fit, confint, power_from_components

T31 = ("score ~ (1|sentence) + (1|rater) + (1|occasion) + (1|rater:sentence) + (1|occasion:rater) + "
       "(1|occasion:sentence)")
COMPS = {"item": 0.06, "seed": 0.0005, "Residual": 0.003}
DELTA = 0.001
ITEMS = [1000, 2000, 3000, 4000, 5000]

R_BOOT = r"""
suppressMessages(library(lme4)); invisible(Sys.setlocale("LC_COLLATE", "C"))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1], colClasses = "character"); d$score <- as.numeric(d$score)
for (v in c("sentence", "rater", "occasion")) d[[v]] <- factor(d[[v]], levels = sort(unique(d[[v]])))
fit <- lmer(%s, d)
fun <- function(m) c(as.data.frame(VarCorr(m))$sdcor, fixef(m))
cpu <- function() { p <- proc.time(); p[["user.self"]] + p[["sys.self"]] }
t0 <- proc.time()[["elapsed"]]; c0 <- cpu()
b <- suppressWarnings(suppressMessages(bootMer(fit, fun, nsim = as.integer(args[2]), seed = 1, use.u = FALSE)))
t_boot <- proc.time()[["elapsed"]] - t0; c_boot <- cpu() - c0
t_prof <- NA
if (args[3] == "1") {
  t0 <- proc.time()[["elapsed"]]
  ci <- suppressWarnings(suppressMessages(confint(fit, method = "profile", oldNames = FALSE)))
  t_prof <- proc.time()[["elapsed"]] - t0
}
cat(sprintf("%%.3f %%.3f %%.3f\n", t_boot, c_boot, t_prof))
""" % T31

R_POWER = Path(__file__).with_name("power_lme4.R")


def rscript(code: str, *args: str) -> str:
    with tempfile.NamedTemporaryFile("w", suffix=".R", delete=False) as f:
        f.write(code)
    return subprocess.run(["Rscript", f.name, *args], capture_output=True, text=True, check=True).stdout


def bench_boot(args) -> dict:
    """1000 parametric-bootstrap refits (and the profile intervals) of Table 3.1: mixeval, then lme4."""
    d = pd.read_csv(Path(args.bookdata) / "mt_annotation.csv.gz")
    d = d[d["mode"] == "Marking"].reset_index(drop=True)
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        d.to_csv(f.name, index=False)
        marking_csv = f.name
    t0 = time.perf_counter()
    fit = lmer(T31, d)
    t_fit = time.perf_counter() - t0
    t0, c0 = time.perf_counter(), time.process_time()
    bootstrap_fit(fit, n_resamples=args.nboot, random_state=1, n_jobs=args.jobs, progress=False)
    t_boot, c_boot = time.perf_counter() - t0, time.process_time() - c0
    t_prof = None
    if not args.no_profile:
        t0 = time.perf_counter()
        confint(fit, method="profile", progress=False)
        t_prof = time.perf_counter() - t0
    print(f"mixeval: {args.nboot} refits in {t_boot:.1f} s ({c_boot:.1f} s CPU)", flush=True)
    r_boot, r_cpu, r_prof = (float("nan") if x == "NA" else float(x) for x in
                             rscript(R_BOOT, marking_csv, str(args.nboot), "0" if args.no_profile else "1").split())
    return {"nboot": args.nboot, "jobs": args.jobs, "mixeval_fit": t_fit, "mixeval_boot": t_boot,
            "mixeval_boot_cpu": c_boot, "lme4_boot": r_boot, "lme4_boot_cpu": r_cpu, "mixeval_profile": t_prof,
            "lme4_profile": None if np.isnan(r_prof) else r_prof}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bookdata", default="/work/shared/bookdata")
    ap.add_argument("--nboot", type=int, default=1000)
    ap.add_argument("--nsim", type=int, default=500)
    ap.add_argument("--r-nsim", type=int, default=20)
    ap.add_argument("--r-power-log", default=None, help="log of a power_lme4.R run (instead of running R here)")
    ap.add_argument("--no-profile", action="store_true", help="skip the profile-interval timing")
    ap.add_argument("--skip-boot", action="store_true", help="only the power job")
    ap.add_argument("--skip-power", action="store_true", help="only the bootstrap (and profile) job")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "bench_uncertainty.json"))
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    results: dict = {}
    out = Path(args.out)
    # a run of one job keeps the other job's last results in the file
    kept = json.loads(out.read_text()) if out.exists() else {}

    if not args.skip_boot:
        results["table_3_1"] = bench_boot(args)
        print(results["table_3_1"], flush=True)
    if args.skip_power:
        out.write_text(json.dumps({**kept, **results}, indent=1))
        report(args, results)
        return
    mix_per_sim, rows = {}, []
    for items in ITEMS:
        t0 = time.perf_counter()
        res = power_from_components(COMPS, delta=DELTA, n={"item": [items], "seed": 5}, test="glrt",
                                    n_resamples=args.nsim, random_state=items, progress=False)
        mix_per_sim[items] = (time.perf_counter() - t0) / args.nsim
        rows.extend(res.table.to_dict(orient="records"))
        print(items, mix_per_sim[items], flush=True)
    if args.r_power_log:
        r_log = pd.read_csv(args.r_power_log, sep=" ")
    else:
        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
            log_path = f.name
        subprocess.run(["Rscript", str(R_POWER), ",".join(map(str, ITEMS)), str(args.r_nsim), log_path], check=True,
                       capture_output=True)
        r_log = pd.read_csv(log_path, sep=" ")
    r_done = r_log.groupby("items")["sim"].count().to_dict()
    r_per_sim = r_log.groupby("items")["seconds"].mean().to_dict()
    r_power = r_log.groupby("items")["reject"].mean().to_dict()
    results["power"] = {"nsim": args.nsim, "mixeval_seconds": sum(mix_per_sim.values()) * args.nsim,
                        "mixeval_seconds_per_sim": mix_per_sim, "lme4_sims_completed": r_done,
                        "lme4_seconds_per_sim": r_per_sim, "lme4_seconds_completed": float(r_log["seconds"].sum()),
                        "rows": rows, "lme4_power": r_power}
    print(results["power"], flush=True)
    out.write_text(json.dumps({**kept, **results}, indent=1))
    report(args, results)


def report(args, results: dict) -> None:
    """Markdown tables of the results."""
    b = results.get("table_3_1")
    if b:
        print("\n| job | mixeval s (CPU s) | lme4 s (CPU s) | lme4 / mixeval (elapsed; CPU) |\n|:--|--:|--:|--:|")
        print(f"| {args.nboot} bootstrap refits, Table 3.1 ({args.jobs} process) | {b['mixeval_boot']:.1f} "
              f"({b['mixeval_boot_cpu']:.1f}) | {b['lme4_boot']:.1f} ({b['lme4_boot_cpu']:.1f}) | "
              f"{b['lme4_boot'] / b['mixeval_boot']:.2f}x; {b['lme4_boot_cpu'] / b['mixeval_boot_cpu']:.2f}x |")
        if b["mixeval_profile"] is not None:
            print(f"| profile intervals, Table 3.1 | {b['mixeval_profile']:.1f} | {b['lme4_profile']:.1f} | "
                  f"{b['lme4_profile'] / b['mixeval_profile']:.2f}x |")
    p = results.get("power")
    if not p:
        return
    print("\n| items (rows) | mixeval power (se) | mixeval s / sim | lme4 sims done | lme4 power | lme4 s / sim | lme4 / mixeval |")
    print("|--:|--:|--:|--:|--:|--:|--:|")
    for row in p["rows"]:
        i = row["item"]
        print(f"| {i} ({row['nobs']}) | {row['power']:.3f} ({row['se']:.3f}) | {p['mixeval_seconds_per_sim'][i]:.3f} | "
              f"{p['lme4_sims_completed'][i]} | {p['lme4_power'][i]:.3f} | {p['lme4_seconds_per_sim'][i]:.3f} | "
              f"{p['lme4_seconds_per_sim'][i] / p['mixeval_seconds_per_sim'][i]:.0f}x |")
    print(f"mixeval, all 5 x {args.nsim}: {p['mixeval_seconds']:.1f} s")


if __name__ == "__main__":
    main()
