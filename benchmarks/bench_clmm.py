"""mixeval.clmm against ordinal::clmm (Rscript) and interlace-lme's clmm, in one run.

Usage: nice -n 10 python3 benchmarks/bench_clmm.py [--no-r] [--no-interlace] [--big N]
Writes benchmarks/results/bench_clmm.json. Designs: the ordinal package's soup data (1,847 ratings,
respondents x products), a crossed items x raters rating study with 9,448 ratings (5-point scale, logit) and,
for mixeval alone, a log of N ratings (default 1,000,000: 50,000 items x 20 raters, 4 systems).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mixeval.mixed import clmm  # noqa: E402

SOUP = ROOT / "tests" / "mixed" / "fixtures" / "clmm" / "soup.csv"


def rating_study(n_items: int, n_raters: int, n_systems: int, seed: int) -> pd.DataFrame:
    """Items x raters crossed; each item answered by one system; 5-point ratings from a logistic latent scale."""
    rng = np.random.default_rng(seed)
    item = np.repeat(np.arange(n_items), n_raters)
    rater = np.tile(np.arange(n_raters), n_items)
    system = item % n_systems
    effects = np.linspace(0.0, 0.9, n_systems)
    latent = effects[system] + rng.normal(0, 1.0, n_items)[item] + rng.normal(0, 0.5, n_raters)[rater]
    rating = np.digitize(latent + rng.logistic(size=item.size), [-2.0, -0.7, 0.6, 2.0]) + 1
    return pd.DataFrame({"rating": rating, "system": [f"s{k}" for k in system], "item": [f"i{k}" for k in item],
                         "rater": [f"r{k}" for k in rater]})


def time_ours(df: pd.DataFrame, formula: str) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0, c0 = time.perf_counter(), time.process_time()
        fit = clmm(formula, df)
        secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"seconds": secs, "cpu_seconds": cpu, "loglik": fit.loglik, "beta": dict(fit.fixef), "variances": fit.components,
            "converged": fit.converged, "n_evaluations": fit.n_evaluations}


def time_r(path: Path, formula: str) -> dict:
    out = subprocess.run(["Rscript", str(ROOT / "benchmarks" / "clmm_timings.R"), str(path), formula],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def time_interlace(df: pd.DataFrame, formula: str) -> dict:
    import interlace

    fixed, *random = [s.strip() for s in formula.split("+ (")]
    random = ["(" + r if not r.startswith("(") else r for r in random]
    fixed = formula.split("+ (")[0].strip()
    data = df.copy()
    for i, term in enumerate(random):  # interlace takes no g1:g2 grouping: a combined column instead
        group = term.strip("() ").split("|")[1].strip()
        if ":" in group:
            name = group.replace(":", "_")
            data[name] = data[group.split(":")].astype(str).agg(":".join, axis=1)
            random[i] = term.replace(group, name)
    resp = fixed.split("~")[0].strip()
    data[resp] = pd.Categorical(data[resp], ordered=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0, c0 = time.perf_counter(), time.process_time()
        fit = interlace.clmm(fixed, data, random=random)
        secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    ll = getattr(fit, "loglik", None) or getattr(fit, "llf", None)
    return {"seconds": secs, "cpu_seconds": cpu, "loglik": float(ll) if ll is not None else None}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-r", action="store_true")
    ap.add_argument("--no-interlace", action="store_true")
    ap.add_argument("--big", type=int, default=1_000_000)
    args = ap.parse_args()
    cases = [("soup", pd.read_csv(SOUP), "SURENESS ~ PROD + (1|RESP) + (1|RESP:PROD)"),
             ("items_x_raters_9448", rating_study(1181, 8, 2, 1), "rating ~ system + (1|item) + (1|rater)")]
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, df, formula in cases:
            row = {"nobs": len(df), "formula": formula, "mixeval": time_ours(df, formula)}
            print(name, "mixeval", row["mixeval"], flush=True)
            if not args.no_r:
                path = Path(tmp) / f"{name}.csv"
                df.to_csv(path, index=False)
                row["clmm"] = time_r(path, formula)
                print(name, "clmm", row["clmm"], flush=True)
                # CPU seconds: the machine is shared, so wall-clock times carry the other jobs' load
                row["cpu_speedup_vs_clmm"] = row["clmm"]["cpu_seconds"] / row["mixeval"]["cpu_seconds"]
                row["loglik_minus_clmm"] = row["mixeval"]["loglik"] - row["clmm"]["loglik"]
            if not args.no_interlace:
                try:
                    row["interlace"] = time_interlace(df, formula)
                except Exception as exc:  # a competitor's failure is a result, not a crash of the benchmark
                    row["interlace"] = {"error": f"{type(exc).__name__}: {exc}"}
                print(name, "interlace", row["interlace"], flush=True)
            results[name] = row
    if args.big:
        n_raters = 20
        df = rating_study(args.big // n_raters, n_raters, 4, 2)
        row = {"nobs": len(df), "formula": "rating ~ system + (1|item) + (1|rater)",
               "mixeval": time_ours(df, "rating ~ system + (1|item) + (1|rater)")}
        print("big", row, flush=True)
        results[f"log_{len(df)}"] = row
    out = ROOT / "benchmarks" / "results" / "bench_clmm.json"
    out.write_text(json.dumps(results, indent=2, default=float))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
