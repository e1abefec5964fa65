"""Coverage of the parametric-bootstrap interval of phi by simulation (known components, several designs).

For each design: draw a data set from known variance components, fit it (REML), draw ``--boot``
parametric-bootstrap refits (mixeval.uncertainty.component_draws), and record whether the 95% intervals
of phi from those draws contain the true phi: the percentile interval (``phi_interval(..., method="percentile")``)
and, from the same draws, the bias-corrected (BC) percentile interval, phi_interval's default (Efron 1982: the
percentiles ``Phi(2 z0 +- z_{0.975})`` with ``z0 = Phi^-1(share of draws below the estimate)``, ties counted half).
Prints a markdown table (coverage, its Monte-Carlo standard error, mean width, share of singular fits)
and writes it as JSON next to this script.

    python3 benchmarks/phi_coverage.py --reps 600 --boot 200 --seed 20261125 --designs 4,3,0 --out benchmarks/results/phi_coverage_final_a.json

The designs are visited round robin, and every replicate is appended to ``<out>.jsonl``, so an interrupted
run still reports the same number of completed replicates per design (``--summarise FILE.jsonl`` prints the
table from such a log).
"""

from __future__ import annotations

import argparse
import json
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
    """Coverage per design (:func:`coverage_table`); with ``log``, every replicate is appended to it as a JSON
    line (partial runs count)."""
    streams = [np.random.default_rng([seed, DESIGNS.index(d)]) for d in designs]
    records = []
    # round robin over the designs (replicate r of every design, then r + 1): a run stopped early has the
    # same number of replicates for every design
    for r in range(reps):
        for (name, sizes, formula, comps, n), rng in zip(designs, streams):
            truth = phi(comps, "item", n)
            df = simulate(sizes, comps, rng)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit = lmer(formula, df)
            draws = component_draws(fit, n_resamples=boot, random_state=rng, progress=False)
            record = {"design": name, "rep": r, "truth": truth, "singular": bool(fit.singular)}
            for _, prefix, method in METHODS:
                ci = phi_interval(fit, "item", n, draws=draws, method=method)
                record.update({f"{prefix}lower": ci.lower, f"{prefix}upper": ci.upper,
                               f"{prefix}hit": bool(ci.lower <= truth <= ci.upper)})
                record["phi_hat"] = ci.estimate
            records.append(record)
            if log is not None:
                with open(log, "a") as fh:
                    fh.write(json.dumps(record) + "\n")
    return coverage_table(pd.DataFrame(records))


#: (label, column prefix in the per-replicate log, ``phi_interval`` method), one per interval method
METHODS = [("percentile", "", "percentile"), ("BC", "bc_", "bc"), ("basic-logit (default)", "logit_", "basic-logit")]


def coverage_table(log: pd.DataFrame) -> list[dict]:
    """Per design: coverage, its Monte-Carlo se and the mean width of each interval method the log holds
    (keys ``coverage``, ``bc_coverage``, ``logit_coverage``, ...), and the share of singular fits."""
    rows = []
    for name, g in log.groupby("design", sort=False):
        k = len(g)
        row = {"design": name, "phi": float(g.truth.iloc[0]), "reps": k, "singular_fits": float(g.singular.mean())}
        for _, prefix, _ in METHODS:
            hit = f"{prefix}hit"
            if hit in g and g[hit].notna().all():
                cov = float(g[hit].astype(float).mean())
                row.update({f"{prefix}coverage": cov, f"{prefix}mc_se": float(np.sqrt(cov * (1 - cov) / k)),
                            f"{prefix}mean_width": float((g[f"{prefix}upper"] - g[f"{prefix}lower"]).mean())})
        rows.append(row)
    return rows


def print_table(rows: list[dict]) -> None:
    head = " | ".join(f"{label}: coverage (MC se) | mean width" for label, *_ in METHODS)
    print(f"| design | true phi | replicates | {head} | singular fits |\n|:--|--:|--:|" + "--:|--:|" * len(METHODS) + "--:|")
    for row in rows:
        cells = [f"{row[p + 'coverage']:.3f} ({row[p + 'mc_se']:.3f}) | {row[p + 'mean_width']:.3f}"
                 if p + "coverage" in row else "- | -" for _, p, _ in METHODS]
        print(f"| {row['design']} | {row['phi']:.3f} | {row['reps']} | " + " | ".join(cells)
              + f" | {row['singular_fits']:.2f} |")


def summarise(paths: list[Path], out: Path | None = None) -> None:
    """Coverage table of per-replicate logs (pooled; methods a log lacks are shown as -); with ``out``, also JSON."""
    rows = coverage_table(pd.concat([pd.read_json(p, lines=True) for p in paths], ignore_index=True))
    print_table(rows)
    if out is not None:
        out.write_text(json.dumps({"logs": [str(p) for p in paths], "rows": rows}, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=250)
    ap.add_argument("--boot", type=int, default=120)
    ap.add_argument("--seed", type=int, default=20261123)
    ap.add_argument("--designs", default=None, help="comma-separated indices into DESIGNS (default: all)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "phi_coverage.json"))
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
    print_table(rows)


if __name__ == "__main__":
    main()
