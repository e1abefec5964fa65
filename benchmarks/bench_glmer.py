"""Binary GLMMs: mixeval.glmer against lme4's glmer, mixedlm.glmer and the PyPI package glmm, and the aggregate path.

    python3 benchmarks/bench_glmer.py [--rows 9000 1000000] [--aggregate-rows 100000000] [--timeout 900]
    python3 benchmarks/bench_glmer.py --rows 9000 --link probit          # or --family poisson

Data: items x seeds x systems, one 0/1 judgment per cell, logit P(correct) = 0.5 + system + item + seed
(item SD 1.2, seed SD 0.4); model ``correct ~ system + (1|item) + (1|seed)`` (Laplace). ``--link probit``
fits the same binary rows with the probit link; ``--family poisson`` draws counts with log mean
-0.5 + system + item + seed (item SD 0.8, seed SD 0.3). Every tool fits the same rows in the same run;
each competitor runs in a child process (its import excluded from its time) with a time limit. Wall-clock
and CPU seconds and, beside them, the log-likelihood each tool reached; for mixeval also the number of
PIRLS runs (deviance evaluations, each with its gradient where analytic) of the whole fit.

Aggregate path: DuckDB writes a binary Parquet log (items x seeds x systems x prompt templates x repeated
judgments) and :func:`mixeval.scale.glmer_aggregate` fits ``correct ~ system + (1|item) + (1|seed) +
(1|template)`` from successes and trials per cell, in a fresh process whose peak RSS is reported.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
FORMULA = "correct ~ system + (1|item) + (1|seed)"
SIZES = {9_000: (600, 5, 3), 1_000_000: (20_000, 10, 5)}


def make_binary(n_item: int, n_seed: int, n_sys: int, seed: int = 1, family: str = "binomial") -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    d = pd.MultiIndex.from_product([range(n_item), range(n_seed), range(n_sys)], names=["item", "seed", "system"]).to_frame(index=False)
    eff = np.linspace(-0.3, 0.3, n_sys)
    if family == "poisson":  # counts in the column "correct" so that one formula serves every family
        eta = -0.5 + eff[d.system.to_numpy()] + rng.normal(0, 0.8, n_item)[d.item.to_numpy()] + rng.normal(0, 0.3, n_seed)[d.seed.to_numpy()]
        d["correct"] = rng.poisson(np.exp(eta))
    else:
        eta = 0.5 + eff[d.system.to_numpy()] + rng.normal(0, 1.2, n_item)[d.item.to_numpy()] + rng.normal(0, 0.4, n_seed)[d.seed.to_numpy()]
        d["correct"] = (rng.random(len(d)) < 1 / (1 + np.exp(-eta))).astype(int)
    d["item"] = "i" + d.item.astype(str)
    d["seed"] = "s" + d.seed.astype(str)
    d["system"] = "S" + d.system.astype(str)
    return d


CHILD = {
    "mixeval": """
import sys, time, json, warnings, pandas as pd
sys.path.insert(0, {root!r})
from mixeval import glmer
import mixeval.mixed._glmm as G
runs = [0]
_pirls = G.pirls
def counted(*a, **k):
    runs[0] += 1
    return _pirls(*a, **k)
G.pirls = counted
d = pd.read_parquet({path!r})
warnings.simplefilter("ignore")
t, c = time.perf_counter(), time.process_time(); m = glmer({formula!r}, d, family={family!r}, link={link!r})
s, cpu = time.perf_counter() - t, time.process_time() - c
print(json.dumps({{"seconds": s, "cpu_seconds": cpu, "loglik": m.loglik, "pirls_runs": runs[0], "converged": m.converged,
                  "fixef": dict(zip(m.fixed_names, map(float, m.coef))), "theta": list(map(float, m.theta))}}))
""",
    "mixedlm": """
import time, json, warnings, pandas as pd, mixedlm
d = pd.read_parquet({path!r})
warnings.simplefilter("ignore")
fam = mixedlm.families.Poisson() if {family!r} == "poisson" else mixedlm.families.Binomial(link={link!r})
t, c = time.perf_counter(), time.process_time(); m = mixedlm.glmer({formula!r}, d, family=fam)
s, cpu = time.perf_counter() - t, time.process_time() - c
ll = m.logLik() if callable(getattr(m, "logLik", None)) else m.loglik
print(json.dumps({{"seconds": s, "cpu_seconds": cpu, "loglik": float(getattr(ll, "value", ll))}}))
""",
    "glmm": """
import time, json, warnings, pandas as pd, glmm
d = pd.read_parquet({path!r})
warnings.simplefilter("ignore")
t, c = time.perf_counter(), time.process_time(); m = glmm.fit(d, {formula!r}, family={family!r}, link={link!r})
s, cpu = time.perf_counter() - t, time.process_time() - c
ll = getattr(m, "loglik", None)
ll = ll() if callable(ll) else ll
print(json.dumps({{"seconds": s, "cpu_seconds": cpu, "loglik": None if ll is None else float(ll)}}))
""",
}


def run_child(code: str, timeout: float) -> dict:
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"seconds": None, "note": f"no result in {timeout:g} s"}
    if out.returncode != 0:
        return {"seconds": None, "note": "failed: " + (out.stderr.strip().splitlines() or ["?"])[-1][:160]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_r(csv: Path, timeout: float, family: str, link: str) -> dict:
    try:
        out = subprocess.run(["Rscript", str(ROOT / "benchmarks" / "glmer_timings.R"), str(csv), FORMULA, family, link],
                             capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"seconds": None, "note": f"no result in {timeout:g} s"}
    if out.returncode != 0:
        return {"seconds": None, "note": "failed: " + out.stderr.strip()[-160:]}
    return json.loads(out.stdout)


def bench_rows(n: int, tmp: Path, timeout: float, repeat: int, family: str = "binomial", link: str = "logit",
               tools: tuple[str, ...] = ("mixeval", "lme4", "mixedlm", "glmm")) -> dict:
    d = make_binary(*SIZES[n], family=family)
    path, csv = tmp / f"{family}_{n}.parquet", tmp / f"{family}_{n}.csv"
    d.to_parquet(path)
    d.to_csv(csv, index=False)
    res = {"rows": len(d), "family": family, "link": link}
    for tool in tools:
        if tool == "lme4":
            res["lme4"] = run_r(csv, timeout, family, link)
            continue
        code = CHILD[tool].format(root=str(ROOT), path=str(path), formula=FORMULA, family=family, link=link)
        runs = [run_child(code, timeout) for _ in range(repeat if tool == "mixeval" else 1)]
        ok = [r for r in runs if r.get("seconds") is not None]
        res[tool] = min(ok, key=lambda r: r["cpu_seconds"]) if ok else runs[0]
        print(json.dumps({tool: res[tool]}), file=sys.stderr, flush=True)
    return res


AGG_CHILD = """
import sys, time, json, resource, warnings
sys.path.insert(0, {root!r})
from mixeval.scale import glmer_aggregate
warnings.simplefilter("ignore")
t, c = time.perf_counter(), time.process_time()
m = glmer_aggregate("correct ~ system + (1|item) + (1|seed) + (1|template)", {path!r})
s, cpu = time.perf_counter() - t, time.process_time() - c
print(json.dumps({{"seconds": s, "cpu_seconds": cpu, "loglik": m.loglik, "nobs": m.nobs, "cells": int(len(m.y)), "converged": m.converged,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "fixef": dict(zip(m.fixed_names, map(float, m.coef))), "variances": m.variances}}))
"""


def bench_aggregate(n_rows: int, tmp: Path, timeout: float, existing: str | None = None) -> dict:
    if existing:  # a log written by an earlier run of this function
        res = run_child(AGG_CHILD.format(root=str(ROOT), path=existing), timeout)
        res.update({"parquet": existing, "parquet_mb": Path(existing).stat().st_size / 2**20})
        return res
    import duckdb

    n_item, n_seed, n_sys, n_tmpl = 2000, 5, 4, 10
    reps = max(1, n_rows // (n_item * n_seed * n_sys * n_tmpl))
    path = tmp / "judge_log.parquet"
    t = time.perf_counter()
    con = duckdb.connect()
    con.execute("SET threads TO 2")
    # effects from hashes of the level (deterministic); P(correct) by the logistic of their sum
    con.execute(f"""
        COPY (
          WITH r AS (SELECT i, i % {n_item} AS item, (i // {n_item}) % {n_seed} AS seed,
                            (i // {n_item * n_seed}) % {n_sys} AS system, (i // {n_item * n_seed * n_sys}) % {n_tmpl} AS template
                     FROM range({n_item * n_seed * n_sys * n_tmpl * reps}) t(i))
          SELECT 'i' || item AS item, 's' || seed AS seed, 'S' || system AS system, 't' || template AS template,
                 (random() < 1 / (1 + exp(-(0.5 + 0.2 * system - 0.3
                      + 2.0 * ((hash(item) % 1000) / 1000.0 - 0.5)
                      + 0.6 * ((hash(seed + 7919) % 1000) / 1000.0 - 0.5)
                      + 0.8 * ((hash(template + 104729) % 1000) / 1000.0 - 0.5)))))::INTEGER AS correct
          FROM r
        ) TO '{path}' (FORMAT PARQUET)
    """)
    gen = time.perf_counter() - t
    res = run_child(AGG_CHILD.format(root=str(ROOT), path=str(path)), timeout)
    res.update({"rows_requested": n_rows, "generate_seconds": gen, "parquet_mb": path.stat().st_size / 2**20})
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, nargs="*", default=[9_000, 1_000_000])
    ap.add_argument("--aggregate-rows", type=int, default=0)
    ap.add_argument("--aggregate-parquet", default=None, help="re-use a log written by an earlier --aggregate-rows run")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--family", default="binomial", choices=["binomial", "poisson"])
    ap.add_argument("--link", default=None, help="logit (default) or probit for binomial; log for poisson")
    ap.add_argument("--tools", nargs="*", default=["mixeval", "lme4", "mixedlm", "glmm"])
    ap.add_argument("--out", default=None, help="also write the JSON to this file")
    args = ap.parse_args()
    link = args.link or ("log" if args.family == "poisson" else "logit")
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for n in args.rows:
            out[str(n)] = bench_rows(n, tmp, args.timeout, args.repeat if n <= 100_000 else 1, args.family, link,
                                     tuple(args.tools))
            print(json.dumps({n: out[str(n)]}), file=sys.stderr, flush=True)
        if args.aggregate_rows or args.aggregate_parquet:
            out["aggregate"] = bench_aggregate(args.aggregate_rows, tmp, args.timeout, args.aggregate_parquet)
    print(json.dumps(out, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
