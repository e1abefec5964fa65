"""Coverage of clmm's Wald intervals and the type I error of its likelihood-ratio tests on rating designs.

Usage: nice -n 10 python3 benchmarks/sim_clmm.py [--reps 200] [--seed 1]
Design: items x systems x raters (30 items, 3 systems, 6 raters; every rater rates every item-system pair:
540 ratings on a 5-point scale, logit link), true thresholds (-2, -0.7, 0.6, 2), system effects (0, 0.5, 0.5),
item variance 1.0, rater variance 0.3. Per replicate: Wald intervals of the thresholds, the system effect and
the item and rater standard deviations (log scale); the GLRT of systems B = C (true null, df 1) and of
rater-specific thresholds (nominal = rater vs rater as a location effect, true null, df 15). Writes benchmarks/results/sim_clmm.json.
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

from mixeval.mixed import clmm, compare  # noqa: E402
from mixeval.errors import InputError  # noqa: E402
from mixeval.mixed._clmm import nominal_test  # noqa: E402

CUTS = np.array([-2.0, -0.7, 0.6, 2.0])
EFFECTS = {"A": 0.0, "B": 0.5, "C": 0.5}
VAR = {"item": 1.0, "rater": 0.3}


def simulate(rng: np.random.Generator, n_items: int = 30, n_raters: int = 6) -> pd.DataFrame:
    grid = pd.MultiIndex.from_product([range(n_items), list(EFFECTS), range(n_raters)],
                                      names=["item", "system", "rater"]).to_frame(index=False)
    eta = (grid.system.map(EFFECTS).to_numpy() + rng.normal(0, np.sqrt(VAR["item"]), n_items)[grid.item]
           + rng.normal(0, np.sqrt(VAR["rater"]), n_raters)[grid.rater])
    grid["rating"] = np.searchsorted(CUTS, eta + rng.logistic(size=len(grid))) + 1
    grid["item"] = "i" + grid.item.astype(str)
    grid["rater"] = "r" + grid.rater.astype(str)
    grid["bc"] = np.where(grid.system == "A", "A", "BC")
    return grid


def replicate(rng: np.random.Generator, nominal: bool) -> dict:
    df = simulate(rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = clmm("rating ~ system + (1|item) + (1|rater)", df)
        null = clmm("rating ~ bc + (1|item) + (1|rater)", df)
        out = {"converged": full.converged}
        ci = full.confint()
        truth = {"1|2": CUTS[0], "2|3": CUTS[1], "3|4": CUTS[2], "4|5": CUTS[3], "systemB": 0.5, "systemC": 0.5,
                 "sd.item": np.sqrt(VAR["item"]), "sd.rater": np.sqrt(VAR["rater"])}
        for k, v in truth.items():
            out[f"cover_{k}"] = bool(ci.loc[k, "lower"] <= v <= ci.loc[k, "upper"])
        out["p_system_bc"] = compare(full, null).pvalue
        if nominal:
            try:
                out["p_nominal_rater"] = nominal_test("rating ~ system + (1|item)", df, "rater").pvalue
            except InputError:  # a rater who never used a category: no rater-specific thresholds to test
                out["p_nominal_rater"] = np.nan
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-nominal", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    rows, t0 = [], time.time()
    for r in range(args.reps):
        rows.append(replicate(rng, not args.no_nominal))
        if (r + 1) % 20 == 0:
            print(r + 1, f"{time.time() - t0:.0f}s", flush=True)
    tab = pd.DataFrame(rows)
    summary = {c: float(tab[c].mean()) for c in tab.columns if c.startswith("cover_")}
    for c in [c for c in tab.columns if c.startswith("p_")]:
        summary[f"typeI_{c[2:]}"] = float((tab[c].dropna() < 0.05).mean())
        summary[f"tested_{c[2:]}"] = int(tab[c].notna().sum())
    summary["reps"] = len(tab)
    summary["converged"] = float(tab.converged.mean())
    summary["seconds"] = time.time() - t0
    print(json.dumps(summary, indent=2))
    (ROOT / "benchmarks" / "results" / "sim_clmm.json").write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
