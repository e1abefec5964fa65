"""Coverage of the parametric-bootstrap interval of phi by simulation (known components, several designs).

For each design: draw a data set from known variance components, fit it (REML), draw ``--boot``
parametric-bootstrap refits (mixeval.uncertainty.component_draws), and record whether the 95% intervals
of phi from those draws contain the true phi: the percentile interval (``phi_interval(..., method="percentile")``)
and, from the same draws, the bias-corrected (BC) percentile interval, phi_interval's default (Efron 1982: the
percentiles ``Phi(2 z0 +- z_{0.975})`` with ``z0 = Phi^-1(share of draws below the estimate)``, ties counted half).
Prints a markdown table (coverage, its Monte-Carlo standard error, mean width, share of singular fits)
and writes it as JSON next to this script.

    python3 benchmarks/phi_coverage.py --reps 600 --boot 200 --seed 20261125 --designs 4,3,0 --out benchmarks/phi_coverage_final_a.json

The designs are visited round robin, and every replicate is appended to ``<out>.jsonl``, so an interrupted
run still reports the same number of completed replicates per design (``--summarise FILE.jsonl`` prints the
table from such a log).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from mixeval import lmer
from mixeval.reliability import phi

from mixeval.uncertainty import component_draws, phi_interval

# (name, facet sizes, formula, components, phi at n)
DESIGNS = [
    ("items 40 x raters 4 (1 rating each)", {"item": 40, "rater": 4}, "y ~ 1 + (1|item) + (1|rater)",
     {"item": 1.0, "rater": 0.3, "Residual": 1.0}, {"rater": 2}),
    ("items 20 x raters 5 x 2 occasions", {"item": 20, "rater": 5, "occ": 2},
     "y ~ 1 + (1|item) + (1|rater) + (1|rater:item)",
     {"item": 1.0, "rater": 0.2, "rater:item": 0.5, "Residual": 0.8}, {"rater": 3}),
    ("items 100 x raters 3, rater variance 0", {"item": 100, "rater": 3}, "y ~ 1 + (1|item) + (1|rater)",
     {"item": 0.5, "rater": 0.0, "Residual": 1.0}, {"rater": 1}),
    ("items 20 x raters 10", {"item": 20, "rater": 10}, "y ~ 1 + (1|item) + (1|rater)",
     {"item": 0.6, "rater": 0.1, "Residual": 1.0}, {"rater": 1}),
    ("items 15 x raters 6 x 2 occasions", {"item": 15, "rater": 6, "occ": 2},
     "y ~ 1 + (1|item) + (1|rater) + (1|rater:item)",
     {"item": 0.8, "rater": 0.3, "rater:item": 0.3, "Residual": 1.0}, {"rater": 2}),
    # added after the default (basic-logit) was chosen on trial runs of the five above: not looked at before
    ("items 12 x raters 8", {"item": 12, "rater": 8}, "y ~ 1 + (1|item) + (1|rater)",
     {"item": 0.5, "rater": 0.2, "Residual": 1.0}, {"rater": 4}),
]


def simulate(sizes: dict, comps: dict, rng: np.random.Generator) -> pd.DataFrame:
    names = list(sizes)
    grids = np.meshgrid(*[np.arange(sizes[f]) for f in names], indexing="ij")
    df = pd.DataFrame({f: g.ravel() for f, g in zip(names, grids)})
    y = rng.normal(0, np.sqrt(comps["Residual"]), len(df))
    for comp, var in comps.items():
        if comp == "Residual":
            continue
        factors = comp.split(":")
        key = df[factors].astype(str).agg("_".join, axis=1)
        codes, uniq = pd.factorize(key)
        y += rng.normal(0, np.sqrt(var), len(uniq))[codes]
    df["y"] = y
    for f in names:
        df[f] = df[f].astype(str)
    return df


def run(reps: int, boot: int, seed: int, designs=DESIGNS, log: Path | None = None) -> list[dict]:
    """Coverage per design; with ``log``, every replicate is appended to it as a JSON line (partial runs count)."""
    state = []
    for name, sizes, formula, comps, n in designs:
        state.append({"rng": np.random.default_rng([seed, DESIGNS.index((name, sizes, formula, comps, n))]),
                      "truth": phi(comps, "item", n), "hits": [], "widths": [], "singular": [], "bc_hits": [],
                      "bc_widths": [], "logit_hits": [], "logit_widths": [], "seconds": 0.0})
    # round robin over the designs (replicate r of every design, then r + 1): a run stopped early has the
    # same number of replicates for every design
    for r in range(reps):
        for (name, sizes, formula, comps, n), st in zip(designs, state):
            t0 = time.perf_counter()
            rng, truth = st["rng"], st["truth"]
            df = simulate(sizes, comps, rng)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit = lmer(formula, df)
            draws = component_draws(fit, n_resamples=boot, random_state=rng, progress=False)
            ci = phi_interval(fit, "item", n, draws=draws, method="percentile")
            bc_ci = phi_interval(fit, "item", n, draws=draws, method="bc")
            bc = (bc_ci["lower"], bc_ci["upper"])
            lg = phi_interval(fit, "item", n, draws=draws)  # the default: basic bootstrap on the logit scale
            st["logit_hits"].append(lg["lower"] <= truth <= lg["upper"])
            st["logit_widths"].append(lg["upper"] - lg["lower"])
            st["hits"].append(ci["lower"] <= truth <= ci["upper"])
            st["widths"].append(ci["upper"] - ci["lower"])
            st["bc_hits"].append(bc[0] <= truth <= bc[1])
            st["bc_widths"].append(bc[1] - bc[0])
            st["singular"].append(fit.singular)
            st["seconds"] += time.perf_counter() - t0
            if log is not None:
                with open(log, "a") as fh:
                    fh.write(json.dumps({"design": name, "rep": r, "hit": bool(st["hits"][-1]), "lower": ci["lower"],
                                         "upper": ci["upper"], "phi_hat": ci["estimate"], "truth": truth,
                                         "bc_lower": bc[0], "bc_upper": bc[1], "bc_hit": bool(st["bc_hits"][-1]),
                                         "logit_lower": lg["lower"], "logit_upper": lg["upper"],
                                         "logit_hit": bool(st["logit_hits"][-1]),
                                         "singular": bool(fit.singular)}) + "\n")
    rows = []
    for (name, sizes, formula, comps, n), st in zip(designs, state):
        cov, bcc, lgc = float(np.mean(st["hits"])), float(np.mean(st["bc_hits"])), float(np.mean(st["logit_hits"]))
        rows.append({"design": name, "phi": st["truth"], "n": n, "reps": reps, "boot": boot, "coverage": cov,
                     "mc_se": float(np.sqrt(cov * (1 - cov) / reps)), "mean_width": float(np.mean(st["widths"])),
                     "bc_coverage": bcc, "bc_mc_se": float(np.sqrt(bcc * (1 - bcc) / reps)),
                     "bc_mean_width": float(np.mean(st["bc_widths"])),
                     "logit_coverage": lgc, "logit_mc_se": float(np.sqrt(lgc * (1 - lgc) / reps)),
                     "logit_mean_width": float(np.mean(st["logit_widths"])),
                     "singular_fits": float(np.mean(st["singular"])), "seconds": st["seconds"]})
        print(rows[-1], flush=True)
    return rows


#: (label, hit, lower, upper) columns of the per-replicate log, one per interval method
METHODS = [("percentile", "hit", "lower", "upper"), ("BC", "bc_hit", "bc_lower", "bc_upper"),
           ("basic-logit (default)", "logit_hit", "logit_lower", "logit_upper")]


def summarise(paths: list[Path], out: Path | None = None) -> None:
    """Coverage table of per-replicate logs (pooled; methods a log lacks are shown as -); with ``out``, also JSON."""
    log = pd.concat([pd.read_json(p, lines=True) for p in paths], ignore_index=True)
    head = " | ".join(f"{label}: coverage (MC se) | mean width" for label, *_ in METHODS)
    print(f"| design | true phi | replicates | {head} | singular fits |\n|:--|--:|--:|" + "--:|--:|" * len(METHODS) + "--:|")
    rows = []
    for name, g in log.groupby("design", sort=False):
        k = len(g)
        row = {"design": name, "phi": float(g.truth.iloc[0]), "reps": k, "singular_fits": float(g.singular.mean())}
        cells = []
        for label, hit, lower, upper in METHODS:
            if hit not in g or g[hit].isna().any():
                cells.append("- | -")
                continue
            cov = float(g[hit].astype(float).mean())
            row[label] = {"coverage": cov, "mc_se": float(np.sqrt(cov * (1 - cov) / k)),
                          "mean_width": float((g[upper] - g[lower]).mean())}
            cells.append(f"{cov:.3f} ({row[label]['mc_se']:.3f}) | {row[label]['mean_width']:.3f}")
        rows.append(row)
        print(f"| {name} | {row['phi']:.3f} | {k} | " + " | ".join(cells) + f" | {row['singular_fits']:.2f} |")
    if out is not None:
        out.write_text(json.dumps({"logs": [str(p) for p in paths], "rows": rows}, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=250)
    ap.add_argument("--boot", type=int, default=120)
    ap.add_argument("--seed", type=int, default=20261123)
    ap.add_argument("--designs", default=None, help="comma-separated indices into DESIGNS (default: all)")
    ap.add_argument("--out", default=str(Path(__file__).with_name("phi_coverage.json")))
    ap.add_argument("--summarise", default=None, nargs="+",
                    help="print the coverage table of .jsonl logs (runs with different seeds pooled) and exit")
    args = ap.parse_args()
    args.out_given = "--out" in __import__("sys").argv
    if args.summarise:
        summarise([Path(p) for p in args.summarise], Path(args.out) if args.out_given else None)
        return
    chosen = DESIGNS if args.designs is None else [DESIGNS[int(i)] for i in args.designs.split(",")]
    rows = run(args.reps, args.boot, args.seed, chosen, log=Path(args.out).with_suffix(".jsonl"))
    Path(args.out).write_text(json.dumps({"reps": args.reps, "boot": args.boot, "seed": args.seed, "rows": rows},
                                         indent=1, default=float))
    summarise([Path(args.out).with_suffix(".jsonl")])


if __name__ == "__main__":
    main()
