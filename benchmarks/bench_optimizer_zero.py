"""Evaluations of lmer/glmer fits with and without the optimiser's trial of a standard deviation at 0.

Usage: python3 benchmarks/bench_optimizer_zero.py [--out FILE]

:func:`mixeval.mixed._optimize.minimize_deviance` tries 0 once for a standard deviation that log-Newton steps cut
geometrically and whose even model puts a local minimum there (``_zero_candidates``). This fits simulated crossed
designs (40 x 6 levels; Gaussian, binomial, Poisson; four seeds; SDs (1, 0), (0, 0.5), (0.8, 0.4), (0.5, 0.05))
with scalar terms, and 40 x 12 designs with a random slope of a covariate by the second factor (Gaussian and
binomial, five seeds, slope SD 0 or 0.3), with the trial switched off and on, and reports the evaluations and the
log-likelihoods. Writes benchmarks/results/bench_optimizer_zero.json (or FILE).
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import mixeval  # noqa: E402
from mixeval.mixed import _optimize  # noqa: E402


def data(seed: int, sd_a: float, sd_b: float, n_a: int = 40, n_b: int = 6, family: str = "gaussian",
         slope: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a, b = np.repeat(np.arange(n_a), n_b), np.tile(np.arange(n_b), n_a)
    x = rng.normal(size=a.size)
    eta = 0.3 * x + rng.normal(0, sd_a, n_a)[a] + rng.normal(0, sd_b, n_b)[b]
    if slope:
        eta = eta + rng.normal(0, 0.3, n_b)[b] * x
    if family == "gaussian":
        y = eta + rng.normal(size=a.size)
    elif family == "binomial":
        y = (rng.uniform(size=a.size) < 1 / (1 + np.exp(-eta))).astype(float)
    else:
        y = rng.poisson(np.exp(eta)).astype(float)
    return pd.DataFrame({"y": y, "x": x, "a": a.astype(str), "b": b.astype(str)})


def fit(formula: str, df: pd.DataFrame, family: str):
    return mixeval.lmer(formula, df, REML=False) if family == "gaussian" else mixeval.glmer(formula, df, family=family)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "bench_optimizer_zero.json"))
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    trial = _optimize._zero_candidates

    def off(x, g, h, logs):
        return np.zeros_like(logs), 0.0

    cases = [(f"{fam} seed {seed} sd {sds}", "y ~ x + (1|a) + (1|b)", data(seed, *sds, family=fam), fam)
             for fam in ("gaussian", "binomial", "poisson") for seed in range(4)
             for sds in ((1.0, 0.0), (0.0, 0.5), (0.8, 0.4), (0.5, 0.05))]
    cases += [(f"{fam} slopes seed {seed} slope sd {0.3 if slope else 0.0}", "y ~ x + (1|a) + (1 + x|b)",
               data(seed, 0.7, 0.5, n_b=12, family=fam, slope=slope), fam)
              for fam in ("gaussian", "binomial") for seed in range(5) for slope in (False, True)]
    rows = {}
    for label, formula, df, fam in cases:
        row = {}
        for name, fn in (("without", off), ("with", trial)):
            _optimize._zero_candidates = fn
            f = fit(formula, df, fam)
            row[name] = {"evaluations": int(f.n_evaluations), "loglik": float(f.loglik)}
        _optimize._zero_candidates = trial
        rows[label] = row
        if row["with"]["evaluations"] != row["without"]["evaluations"]:
            print(f"{label:45s} {row['without']['evaluations']:4d} -> {row['with']['evaluations']:4d}  "
                  f"dll {row['with']['loglik'] - row['without']['loglik']:+.1e}", flush=True)
    totals = {part: {name: sum(r[name]["evaluations"] for k, r in rows.items() if ("slopes" in k) == (part == "slopes"))
                     for name in ("without", "with")} for part in ("scalar", "slopes")}
    print("totals:", totals)
    Path(args.out).write_text(json.dumps({"fits": rows, "totals": totals}, indent=1))


if __name__ == "__main__":
    main()
