"""Intervals of a random-slope model against lme4, side by side in one run.

``rt ~ x + (1 + x | subject) + (1 | item)`` on the simulated 30 subjects x 40 items design of
``tests/uncertainty/fixtures/slopes_sim.csv`` (1,200 rows; REML fit):

1. profile intervals of all 7 parameters: mixeval ``confint(method="profile")`` vs lme4
   ``confint(method = "profile")``;
2. parametric bootstrap, ``--nboot`` refits: mixeval ``bootstrap_fit`` vs lme4 ``bootMer`` (same statistic:
   sd's, the correlation, sigma, fixed effects), one process each.

    python3 benchmarks/bench_confint_slopes.py --nboot 500
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import pandas as pd

from mixeval import lmer
from mixeval.uncertainty import bootstrap_fit, confint

DATA = Path(__file__).resolve().parents[1] / "tests" / "uncertainty" / "fixtures" / "slopes_sim.csv"
FORMULA = "rt ~ x + (1 + x | subject) + (1 | item)"

R_CODE = r"""
suppressMessages(library(lme4))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1], colClasses = "character"); d$rt <- as.numeric(d$rt); d$x <- as.numeric(d$x)
d$subject <- factor(d$subject); d$item <- factor(d$item)
fit <- lmer(%s, d)
t0 <- proc.time()[["elapsed"]]
ci <- suppressWarnings(suppressMessages(confint(fit, method = "profile", oldNames = FALSE)))
t_prof <- proc.time()[["elapsed"]] - t0
fun <- function(m) c(as.data.frame(VarCorr(m), order = "lower.tri")$sdcor, fixef(m))
t0 <- proc.time()[["elapsed"]]
b <- suppressWarnings(suppressMessages(bootMer(fit, fun, nsim = as.integer(args[2]), seed = 1, use.u = FALSE)))
t_boot <- proc.time()[["elapsed"]] - t0
cat(sprintf("%%.3f %%.3f\n", t_prof, t_boot))
""" % FORMULA


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nboot", type=int, default=500)
    ap.add_argument("--out", default=str(Path(__file__).with_name("results") / "bench_confint_slopes.json"))
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    df = pd.read_csv(DATA)
    fit = lmer(FORMULA, df)
    t0 = time.perf_counter()
    confint(fit, method="profile", progress=False)
    t_prof = time.perf_counter() - t0
    t0 = time.perf_counter()
    bootstrap_fit(fit, n_resamples=args.nboot, random_state=1, progress=False)
    t_boot = time.perf_counter() - t0
    with tempfile.NamedTemporaryFile("w", suffix=".R", delete=False) as f:
        f.write(R_CODE)
    out = subprocess.run(["Rscript", f.name, str(DATA), str(args.nboot)], capture_output=True, text=True, check=True)
    r_prof, r_boot = (float(v) for v in out.stdout.split())
    res = {"nboot": args.nboot, "mixeval_profile": t_prof, "lme4_profile": r_prof, "mixeval_boot": t_boot,
           "lme4_boot": r_boot}
    Path(args.out).parent.mkdir(exist_ok=True)
    Path(args.out).write_text(json.dumps(res, indent=1))
    print("| job | mixeval s | lme4 s | lme4 / mixeval |\n|:--|--:|--:|--:|")
    print(f"| profile intervals, 7 parameters | {t_prof:.1f} | {r_prof:.1f} | {r_prof / t_prof:.1f}x |")
    print(f"| {args.nboot} bootstrap refits | {t_boot:.1f} | {r_boot:.1f} | {r_boot / t_boot:.1f}x |")


if __name__ == "__main__":
    main()
