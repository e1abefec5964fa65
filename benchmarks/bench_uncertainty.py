"""Uncertainty tools against lme4, side by side in one run.

1. Parametric bootstrap, 1000 refits of the Table 3.1 model (Marking annotations): mixeval
   ``bootstrap_fit`` vs lme4 ``bootMer`` (``nsim = 1000``, same statistic: sd's, sigma, fixed effects).
2. Profile intervals of the Table 3.1 model: mixeval ``confint(method="profile")`` vs lme4
   ``confint(method = "profile")``.
3. Power curve: 5 designs (1,000 ... 5,000 items x 5 seeds x 2 systems; 10,000 ... 50,000 rows) x
   ``--nsim`` simulations of ``score ~ system + (1|item) + (1|seed)``, GLRT of the system effect (ML fits):
   mixeval ``power_from_components`` vs a simulate/refit loop in R (lmer twice + anova per simulation).
   R runs ``--r-nsim`` simulations per design (it needs about a second per simulation at 50,000 rows);
   its time for the full job is extrapolated per design from its measured time per simulation, and says so.

    python3 benchmarks/bench_uncertainty.py --bookdata /work/shared/bookdata --nsim 500 --r-nsim 20
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
t0 <- proc.time()[["elapsed"]]
b <- suppressWarnings(suppressMessages(bootMer(fit, fun, nsim = as.integer(args[2]), seed = 1, use.u = FALSE)))
t_boot <- proc.time()[["elapsed"]] - t0
t0 <- proc.time()[["elapsed"]]
ci <- suppressWarnings(suppressMessages(confint(fit, method = "profile", oldNames = FALSE)))
t_prof <- proc.time()[["elapsed"]] - t0
cat(sprintf("%%.3f %%.3f\n", t_boot, t_prof))
""" % T31

R_POWER = r"""
suppressMessages(library(lme4))
args <- commandArgs(trailingOnly = TRUE)
items <- as.integer(strsplit(args[1], ",")[[1]]); nsim <- as.integer(args[2])
set.seed(1)
for (ni in items) {
  d <- expand.grid(item = factor(1:ni), seed = factor(1:5), system = factor(c("A", "B")))
  t0 <- proc.time()[["elapsed"]]
  rej <- 0
  for (s in seq_len(nsim)) {
    d$y <- %g * (d$system == "B") + rnorm(ni, 0, sqrt(%g))[d$item] + rnorm(5, 0, sqrt(%g))[d$seed] +
           rnorm(nrow(d), 0, sqrt(%g))
    full <- suppressMessages(lmer(y ~ system + (1|item) + (1|seed), d, REML = FALSE))
    null <- suppressMessages(lmer(y ~ 1 + (1|item) + (1|seed), d, REML = FALSE))
    rej <- rej + (anova(null, full)[["Pr(>Chisq)"]][2] < 0.05)
  }
  cat(sprintf("%%d %%d %%.3f %%.4f\n", ni, nrow(d), proc.time()[["elapsed"]] - t0, rej / nsim))
}
""" % (DELTA, COMPS["item"], COMPS["seed"], COMPS["Residual"])


def rscript(code: str, *args: str) -> str:
    with tempfile.NamedTemporaryFile("w", suffix=".R", delete=False) as f:
        f.write(code)
    return subprocess.run(["Rscript", f.name, *args], capture_output=True, text=True, check=True).stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bookdata", default="/work/shared/bookdata")
    ap.add_argument("--nboot", type=int, default=1000)
    ap.add_argument("--nsim", type=int, default=500)
    ap.add_argument("--r-nsim", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", default=str(Path(__file__).with_name("bench_uncertainty.json")))
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    results: dict = {}

    d = pd.read_csv(Path(args.bookdata) / "mt_annotation.csv.gz")
    d = d[d["mode"] == "Marking"].reset_index(drop=True)
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        d.to_csv(f.name, index=False)
        marking_csv = f.name
    t0 = time.perf_counter()
    fit = lmer(T31, d)
    t_fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    bootstrap_fit(fit, n_resamples=args.nboot, random_state=1, n_jobs=args.jobs, progress=False)
    t_boot = time.perf_counter() - t0
    t0 = time.perf_counter()
    confint(fit, method="profile", progress=False)
    t_prof = time.perf_counter() - t0
    r_boot, r_prof = (float(x) for x in rscript(R_BOOT, marking_csv, str(args.nboot)).split())
    results["table_3_1"] = {"nboot": args.nboot, "jobs": args.jobs, "mixeval_fit": t_fit, "mixeval_boot": t_boot,
                            "lme4_boot": r_boot, "mixeval_profile": t_prof, "lme4_profile": r_prof}
    print(results["table_3_1"], flush=True)

    t0 = time.perf_counter()
    res = power_from_components(COMPS, delta=DELTA, n={"item": ITEMS, "seed": 5}, test="glrt",
                                n_resamples=args.nsim, random_state=1, progress=False)
    t_power = time.perf_counter() - t0
    r_rows = [line.split() for line in rscript(R_POWER, ",".join(map(str, ITEMS)), str(args.r_nsim)).strip().splitlines()]
    r_per_sim = {int(r[0]): float(r[2]) / args.r_nsim for r in r_rows}
    r_power = {int(r[0]): float(r[3]) for r in r_rows}
    r_total = sum(r_per_sim[i] * args.nsim for i in ITEMS)
    results["power"] = {"nsim": args.nsim, "r_nsim": args.r_nsim, "mixeval_seconds": t_power,
                        "lme4_seconds_extrapolated": r_total, "lme4_seconds_per_sim": r_per_sim,
                        "rows": res.table.to_dict(orient="records"), "lme4_power": r_power}
    print(results["power"], flush=True)
    Path(args.out).write_text(json.dumps(results, indent=1))

    b = results["table_3_1"]
    print("\n| job | mixeval s | lme4 s | lme4 / mixeval |\n|:--|--:|--:|--:|")
    print(f"| {args.nboot} bootstrap refits, Table 3.1 ({args.jobs} process) | {b['mixeval_boot']:.1f} | {b['lme4_boot']:.1f} | "
          f"{b['lme4_boot'] / b['mixeval_boot']:.2f}x |")
    print(f"| profile intervals, Table 3.1 | {b['mixeval_profile']:.1f} | {b['lme4_profile']:.1f} | "
          f"{b['lme4_profile'] / b['mixeval_profile']:.2f}x |")
    p = results["power"]
    print(f"| power curve, 5 designs x {args.nsim} sims (10k-50k rows) | {p['mixeval_seconds']:.1f} | "
          f"{p['lme4_seconds_extrapolated']:.0f} (extrapolated from {args.r_nsim} sims per design) | "
          f"{p['lme4_seconds_extrapolated'] / p['mixeval_seconds']:.0f}x |")


if __name__ == "__main__":
    main()
