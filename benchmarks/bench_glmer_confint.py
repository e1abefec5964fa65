"""confint of GLMMs: mixeval.uncertainty.confint (profile) and bootstrap_fit against lme4's confint and bootMer.

    python3 benchmarks/bench_glmer_confint.py [--nsim 200] [--cases binary_item binary_crossed ...]

Data: the glmer fixtures of tests/mixed/fixtures/glmer/ (the cases of tests/uncertainty/test_glmer_confint.py).
For each case, in the same run: mixeval's profile intervals (``confint(fit, method="profile")``) and a
parametric bootstrap of ``nsim`` refits (``bootstrap_fit``, one process), lme4's
``confint(method = "profile")`` and ``bootMer(nsim)`` (benchmarks/glmer_confint_timings.R, one R session).
Wall-clock seconds of the interval computations (fits excluded); the largest difference of the profile ends
between the two tools, in units of the parameter's Wald standard error (sd's: a quarter of the sd).
Prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT / "tests" / "mixed" / "fixtures" / "glmer"
CASES = {
    "binary_item": ("binary_nested.csv", "correct ~ system + (1|item)", "binomial", None),
    "binomial_proportions": ("binomial_proportions.csv", "prop ~ system + (1|item)", "binomial", "trials"),
    "poisson_counts": ("poisson_counts.csv", "count ~ system + (1|item) + (1|seed)", "poisson", None),
    "binary_crossed": ("binary_crossed.csv", "correct ~ system + (1|item) + (1|seed)", "binomial", None),
}


def run_mixeval(name: str, nsim: int) -> dict:
    from mixeval import glmer
    from mixeval.uncertainty import bootstrap_fit, confint

    file, formula, family, weights = CASES[name]
    df = pd.read_csv(DATA / file)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        fit = glmer(formula, df, family=family, weights=weights)
        t_fit = time.perf_counter() - t
        t = time.perf_counter()
        prof = confint(fit, method="profile", progress=False)
        t_prof = time.perf_counter() - t
        t = time.perf_counter()
        bootstrap_fit(fit, n_resamples=nsim, random_state=1, progress=False)
        t_boot = time.perf_counter() - t
    return {"fit_seconds": t_fit, "profile_seconds": t_prof, "boot_seconds": t_boot, "table": prof.table,
            "se": dict(zip(fit.fixed_names, np.sqrt(np.diag(fit.cov_coef)))), "rows": fit.nobs}


def run_lme4(name: str, nsim: int) -> dict:
    file, formula, family, weights = CASES[name]
    cmd = ["Rscript", str(ROOT / "benchmarks" / "glmer_confint_timings.R"), str(DATA / file), formula, family, str(nsim)]
    if weights:
        cmd.append(weights)
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nsim", type=int, default=200)
    ap.add_argument("--cases", nargs="+", default=list(CASES))
    args = ap.parse_args()
    print(f"| model | rows | mixeval profile s | lme4 profile s | lme4/mixeval | mixeval boot {args.nsim} s | "
          f"lme4 bootMer {args.nsim} s | lme4/mixeval | max profile-end diff (se) |")
    print("|:--|--:|--:|--:|--:|--:|--:|--:|--:|")
    for name in args.cases:
        ours = run_mixeval(name, args.nsim)
        ref = run_lme4(name, args.nsim)
        diff = 0.0
        for param, (lo, hi) in ref["profile"].items():
            row = ours["table"].loc[param]
            scale = ours["se"].get(param, 0.25 * row.estimate)
            diff = max(diff, abs(row.lower - lo) / scale, abs(row.upper - hi) / scale)
        formula = CASES[name][1].replace("|", "\\|")  # a markdown table cell
        print(f"| `{formula}` ({CASES[name][2]}) | {ours['rows']:,} | {ours['profile_seconds']:.2f} | "
              f"{ref['profile_seconds']:.2f} | {ref['profile_seconds'] / ours['profile_seconds']:.2f} | "
              f"{ours['boot_seconds']:.2f} | {ref['boot_seconds']:.2f} | "
              f"{ref['boot_seconds'] / ours['boot_seconds']:.2f} | {diff:.1e} |", flush=True)


if __name__ == "__main__":
    main()
