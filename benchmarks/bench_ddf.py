"""Benchmark: emmeans degrees of freedom (asymptotic, Satterthwaite, Kenward-Roger) and emtrends, mixeval vs R.

    python benchmarks/bench_ddf.py [--data ../shared/bookdata] [--repeat 5] [--skip-r]

For each model and df method: the time of the pairwise contrasts (Tukey) on an existing REML fit,
with every cache cleared (reference grid, Kenward-Roger pieces) so the full computation is timed. The random-slope
cases (2,000 simulated rows each, seeded, written to a temporary directory) compare Kenward-Roger with Satterthwaite
on the same fit: Kenward-Roger's pieces are analytic, the engine's Satterthwaite for slopes differentiates the
criterion numerically.
R: ``summary(emmeans(m, pairwise ~ system, lmer.df = DF)$contrasts)`` (``emtrends`` for the slopes)
with ``emm_options(pbkrtest.limit = 1e6, lmerTest.limit = 1e6)``; best of ``--repeat`` on both sides,
data loading and the fit excluded. Prints a markdown table (figures: docs/performance.md).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from _timing import best_time


ROOT = Path(__file__).resolve().parents[1]
UNBALANCED = ROOT / "tests" / "significance" / "fixtures" / "unbalanced_crossed.csv"
# name -> (data, formula, specs, trend variable or None)
CASES = {
    "Table 4.2": ("bookdata:mt_ter.csv.gz", "ter ~ system + (1|sentence_id)", "system", None),
    "TER slopes in src_length": ("bookdata:mt_ter.csv.gz", "ter ~ system * src_length + (1|sentence_id)", "system",
                                 "src_length"),
    "unbalanced item x rater": (str(UNBALANCED), "y ~ sys + (1|item) + (1|rater)", "sys", None),
    "factor slopes, 250 items x 4 systems": ("simulated:factor_slopes", "score ~ system + (1 + system|item)", "system",
                                          None),
    "Barr: subject slopes, item intercepts": ("simulated:barr", "rt ~ cond + (1 + cond|subject) + (1|item)", "cond",
                                               None),
}


def simulate(name: str) -> pd.DataFrame:
    """2,000 rows of a random-slope design (seeded): 250 items x 4 systems x 2 seeds with correlated item slopes of
    the systems, or Barr's 50 subjects x 40 items with a within-subject, between-item condition."""
    rng = np.random.default_rng(20270301)
    if name == "factor_slopes":
        item = np.repeat(np.arange(250), 8)
        system = np.tile(np.repeat(list("ABCD"), 2), 250)
        codes = np.searchsorted(list("ABCD"), system)
        cov = 0.2 * np.eye(4) + 0.1
        b = rng.multivariate_normal(np.zeros(4), cov, size=250)
        y = 0.1 * codes + b[item, 0] + np.where(codes > 0, b[item, np.maximum(codes, 1)], 0) + rng.normal(size=2000)
        return pd.DataFrame({"item": [f"i{i:03d}" for i in item], "system": system, "score": y})
    subject, item = np.repeat(np.arange(50), 40), np.tile(np.arange(40), 50)
    cond = np.where(item % 2 == 0, "a", "b")
    b = rng.multivariate_normal([0, 0], [[0.6, 0.1], [0.1, 0.2]], size=50)
    rt = 6 + (0.3 + b[subject, 1]) * (cond == "b") + b[subject, 0] + rng.normal(0, 0.3, 40)[item] + rng.normal(0, 0.5, 2000)
    return pd.DataFrame({"subject": [f"p{s:02d}" for s in subject], "item": [f"w{i:02d}" for i in item], "cond": cond,
                         "rt": rt})
METHODS = ["asymptotic", "satterthwaite", "kenward-roger"]

R_TEMPLATE = r"""
suppressMessages({library(lme4); library(emmeans); library(pbkrtest); library(lmerTest)})
emm_options(pbkrtest.limit = 1e6, lmerTest.limit = 1e6)
invisible(Sys.setlocale("LC_COLLATE", "C"))
d <- read.csv("%(path)s")
for (cc in names(d)) if (is.character(d[[cc]])) d[[cc]] <- factor(d[[cc]])
m <- lme4::lmer(%(formula)s, data = d)
best <- function(expr_fn) min(sapply(1:%(repeat)d, function(i) system.time(expr_fn())[["elapsed"]]))
for (dfm in c("asymptotic", "satterthwaite", "kenward-roger")) {
  t <- best(function() %(call)s)
  cat(sprintf("%%s %%.6f\n", dfm, t))
}
"""


def load(source: str, bookdata: Path, tmp: Path) -> tuple[pd.DataFrame, Path]:
    if source.startswith("bookdata:"):
        path = bookdata / source.split(":", 1)[1]
    elif source.startswith("simulated:"):
        name = source.split(":", 1)[1]
        path = tmp / f"{name}.csv"
        simulate(name).to_csv(path, index=False)
    else:
        path = Path(source)
    return pd.read_csv(path), path


def run_r(path: Path, formula: str, specs: str, var: str | None, repeat: int) -> dict[str, float]:
    call = (f"summary(emmeans(m, pairwise ~ {specs}, lmer.df = dfm)$contrasts)" if var is None else
            f"summary(emtrends(m, pairwise ~ {specs}, var = '{var}', lmer.df = dfm)$contrasts)")
    script = R_TEMPLATE % {"path": path, "formula": formula, "call": call, "repeat": repeat}
    out = subprocess.run(["Rscript", "-e", script], capture_output=True, text=True, check=True)
    return {line.split()[0]: float(line.split()[1]) for line in out.stdout.strip().splitlines()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "bookdata"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-r", action="store_true")
    args = parser.parse_args(argv)
    from mixeval.mixed import lmer
    from mixeval.significance import _ddf, _grid, _trends, pairwise, pairwise_trends

    bookdata = Path(args.data)
    tmp = Path(tempfile.mkdtemp(prefix="bench_ddf_"))
    rows = []
    for name, (source, formula, specs, var) in CASES.items():
        df, path = load(source, bookdata, tmp)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = lmer(formula, df)
            for method in METHODS:
                def contrasts(method=method):
                    _grid._GRID_CACHE.clear()
                    _trends._TREND_CACHE.clear()
                    _ddf._CACHE.clear()
                    fit.__dict__.pop("_varpar_covariance", None)  # the engine's Satterthwaite Hessian (slopes)
                    if var is None:
                        return pairwise(fit, specs, df=method)
                    return pairwise_trends(fit, specs, var, df=method)

                rows.append([name, len(df), method, best_time(contrasts, args.repeat)[0]])
        r = {} if args.skip_r else run_r(path, formula.replace("|", " | "), specs, var, args.repeat)
        for row in rows[-len(METHODS):]:
            row.append(r.get(row[2], np.nan))
        print(f"{name}: done", file=sys.stderr)
    print("| model | rows | df | mixeval (s) | emmeans (s) | emmeans / mixeval |")
    print("| --- | ---: | --- | ---: | ---: | ---: |")
    for name, n, method, t, tr in rows:
        print(f"| {name} | {n:,} | {method} | {t:.4f} | {tr:.4f} | {tr / t:.1f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
