"""Benchmark: mixeval.significance (emmeans + pairwise) against R's lme4 + emmeans, in one run.

    python benchmarks/bench_significance.py [--data ../shared/bookdata] [--repeat 5] [--skip-r]

For each book model: the time of the marginal means + all pairwise contrasts (Tukey) on an
existing REML fit ("contrasts"), and of the whole question from an in-memory data frame (REML fit +
contrasts, "fit + contrasts"). Best of ``--repeat`` runs on both sides (R: ``system.time`` inside one
Rscript process, data loading excluded). Prints a markdown table (figures: docs/performance.md).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from _timing import best_time


CASES = {
    "Table 4.2": ("mt_ter.csv.gz", "ter ~ system + (1|sentence_id)", "system", None),
    "Table 4.3": ("mt_ter.csv.gz", "ter ~ system * cls + (1|sentence_id)", "system", "cls"),
    "Figure 3.5": ("mt_grid_partial.csv.gz", "ter ~ src_length_class * delta_scheme + (1|sentence_id)", "delta_scheme",
                   "src_length_class"),
}

R_TEMPLATE = r"""
suppressMessages({library(lme4); library(emmeans)})
invisible(Sys.setlocale("LC_COLLATE", "C"))
d <- read.csv(gzfile("%(path)s"), colClasses = "character")
d$ter <- as.numeric(d$ter)
if ("src_length" %%in%% names(d)) {
  d$src_length <- as.numeric(d$src_length)
  d$cls <- c("short", "typical", "very long")[(d$src_length > 15) + (d$src_length > 55) + 1]
}
f <- as.formula("%(formula)s")
best <- function(expr_fn) min(sapply(1:%(repeat)d, function(i) system.time(expr_fn())[["elapsed"]]))
m <- lmer(f, data = d)
t_con <- best(function() summary(emmeans(m, %(specs)s, lmer.df = "asymptotic")$contrasts))
t_all <- best(function() { m2 <- lmer(f, data = d); summary(emmeans(m2, %(specs)s, lmer.df = "asymptotic")$contrasts) })
cat(sprintf("%%.6f %%.6f\n", t_con, t_all))
"""


def load(bookdata: Path, file: str) -> pd.DataFrame:
    df = pd.read_csv(bookdata / file)
    if file == "mt_ter.csv.gz":
        df["cls"] = np.array(["short", "typical", "very long"])[(df.src_length > 15).astype(int) + (df.src_length > 55).astype(int)]
    return df


def run_r(bookdata: Path, file: str, formula: str, specs: str, by: str | None, repeat: int) -> tuple[float, float]:
    rspecs = f"pairwise ~ {specs}" + (f" | {by}" if by else "")
    script = R_TEMPLATE % {"path": bookdata / file, "formula": formula, "specs": rspecs, "repeat": repeat}
    out = subprocess.run(["Rscript", "-e", script], capture_output=True, text=True, check=True)
    t_con, t_all = (float(v) for v in out.stdout.split()[-2:])
    return t_con, t_all


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "bookdata"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-r", action="store_true")
    args = parser.parse_args(argv)
    from mixeval.mixed import lmer
    from mixeval.significance import _grid, pairwise

    bookdata = Path(args.data)
    rows = []
    for name, (file, formula, specs, by) in CASES.items():
        df = load(bookdata, file)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = lmer(formula, df)

            def contrasts():
                _grid._GRID_CACHE.clear()  # time the full computation, not a cache hit
                return pairwise(fit, specs, by=by)

            def whole():
                return pairwise(lmer(formula, df), specs, by=by)

            t_con = best_time(contrasts, args.repeat)[0]
            t_all = best_time(whole, args.repeat)[0]
        r_con, r_all = (np.nan, np.nan) if args.skip_r else run_r(bookdata, file, formula, specs, by, args.repeat)
        rows.append((name, len(df), t_con, r_con, t_all, r_all))
        print(f"{name}: done", file=sys.stderr)
    print("| model | rows | mixeval contrasts (s) | emmeans (s) | ratio | mixeval fit + contrasts (s) | lme4 + emmeans (s) | ratio |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, n, t_con, r_con, t_all, r_all in rows:
        print(f"| {name} | {n:,} | {t_con:.4f} | {r_con:.4f} | {r_con / t_con:.1f}x | {t_all:.3f} | {r_all:.3f} | "
              f"{r_all / t_all:.1f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
