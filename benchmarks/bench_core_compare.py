"""Engine timings of two checkouts in one run: this one against a git revision (the one-model-core refactor's
bar: "timings of benchmarks/bench_engine.py no worse than today in the same run").

    python benchmarks/bench_core_compare.py --base 9eeadb9 [--workloads table-3.11 crossed glmer] [--repeat 5]

The revision is checked out into a temporary git worktree; every fit runs in a fresh interpreter of the
checkout it times (``bench_engine.run_mixeval`` for the lmer workloads, a binomial glmer fit of the crossed design
for ``glmer``), and the two checkouts alternate, repeat by repeat, so that load on a shared machine hits both
alike. Reported: the best CPU seconds and wall seconds of each, the deviance evaluations and the criterion
(equal when the numerical path is unchanged). Prints a markdown table and writes ``results/bench_core_compare.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

_CHILD = r"""
import json, sys, time, warnings
import numpy as np, pandas as pd
sys.path.insert(0, {root!r})
sys.path.insert(0, {bench!r})
import bench_engine as be
from pathlib import Path
name = {name!r}
if name == "glmer":
    from mixeval import glmer
    df = be.crossed_design(n_users=1_000, n_prompts=200)
    df["correct"] = (df.rating > 0).astype(int)
    formula, fit_fn = "correct ~ system + (1|user) + (1|prompt)", lambda: glmer(
        "correct ~ system + (1|user) + (1|prompt)", df, family="binomial")
else:
    from mixeval import lmer
    df = be.load(name, Path({data!r}))
    formula = be.WORKLOADS[name][1]
    fit_fn = lambda: lmer(formula, df)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    t0, c0 = time.perf_counter(), time.process_time()
    fit = fit_fn()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
crit = float(getattr(fit, "criterion", getattr(fit, "deviance", float("nan"))))
print(json.dumps({{"seconds": wall, "cpu": cpu, "evals": int(fit.n_evaluations), "criterion": crit}}))
"""


def run_once(checkout: Path, name: str, data: str) -> dict:
    code = _CHILD.format(root=str(checkout), bench=str(checkout / "benchmarks"), name=name, data=data)
    out = subprocess.run([sys.executable, "-c", code], cwd=checkout, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="git revision to compare against (e.g. the commit before a change)")
    ap.add_argument("--workloads", nargs="*", default=["table-3.11", "crossed", "glmer"])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--data", default=os.environ.get("MIXEVAL_DATA", str(ROOT.parent / "shared" / "bookdata")))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base), args.base],
                       check=True, capture_output=True)
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
        print(f"| workload | base {args.base} cpu s | head {head} cpu s | ratio | base wall s | head wall s | "
              "evals base/head | criterion base/head |")
        print("|---|---|---|---|---|---|---|---|", flush=True)
        try:
            results = {}
            for name in args.workloads:
                runs = {"base": [], "head": []}
                for _ in range(args.repeat):
                    for label, checkout in (("base", base), ("head", ROOT)):
                        runs[label].append(run_once(checkout, name, args.data))
                results[name] = r = {label: {"cpu": min(x["cpu"] for x in rs), "seconds": min(x["seconds"] for x in rs),
                                             "evals": rs[0]["evals"], "criterion": rs[0]["criterion"]}
                                     for label, rs in runs.items()}
                b, h = r["base"], r["head"]
                print(f"| {name} | {b['cpu']:.3f} | {h['cpu']:.3f} | {h['cpu'] / b['cpu']:.2f} | {b['seconds']:.3f} | "
                      f"{h['seconds']:.3f} | {b['evals']}/{h['evals']} | {b['criterion']:.6f}/{h['criterion']:.6f} |",
                      flush=True)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], capture_output=True)
    out = HERE / "results" / "bench_core_compare.json"
    out.write_text(json.dumps({"base": args.base, "head": head.strip(), "repeat": args.repeat, "results": results},
                              indent=1))


if __name__ == "__main__":
    main()
