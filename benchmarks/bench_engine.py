"""Benchmark: the LMEM engine's speed on three scales, side by side with lme4 and mixedlm in one run.

    python benchmarks/bench_engine.py [--data ../shared/bookdata] [--workloads table-3.11 insteval crossed]
                                      [--skip-r] [--repeat 3]

Workloads (issue 19):

* ``table-3.11``: the book's Table 3.11 (168,642 rows, six crossed factors);
* ``insteval``: lme4's ``InstEval`` (73,421 ratings, 2,972 students x 1,128 lecturers crossed,
  ``y ~ service + (1|s) + (1|d) + (1|dept:service)``), loaded by ``mixedlm.load_insteval()``;
* ``crossed``: 250,000 rows, 25,000 users x 5,000 prompts crossed (each user rates 10 prompts),
  ``rating ~ system + (1|user) + (1|prompt)``; lme4 is not run on it by default (about 27 min on
  this machine, issue 14), ``--r-crossed`` runs it.

Times are wall-clock seconds of one complete fit from an in-memory DataFrame (formula -> result), best of
``--repeat`` for mixeval (one run on ``crossed``), one run for mixedlm and lme4 (data loading excluded for
all); ``cpu s`` is the process's CPU time of the same fit (all its threads), less sensitive than wall time
to other jobs on a shared machine. ``evals`` is the number of deviance evaluations of mixeval's fit (lme4: ``feval``). Also timed:
``mixeval --help`` and ``import mixeval`` in a fresh interpreter (best of 5). Prints markdown tables.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's mixeval, not an installed one
WORK = HERE / "_work"
META = ("ter ~ (1|sentence_id) + (1|learning_rate) + (1|seed) + (1|decoder_dropout) + (1|decoder_dropout_hidden)"
        " + (1|encoder_dropout)")
WORKLOADS = {
    "table-3.11": ("ter", META),
    "insteval": ("y", "y ~ service + (1|s) + (1|d) + (1|dept:service)"),
    "crossed": ("rating", "rating ~ system + (1|user) + (1|prompt)"),
}


def crossed_design(n_users: int = 25_000, n_prompts: int = 5_000, per_user: int = 10, seed: int = 0) -> pd.DataFrame:
    """Users x prompts crossed, each user rating ``per_user`` distinct random prompts (known components)."""
    rng = np.random.default_rng(seed)
    user = np.repeat(np.arange(n_users), per_user)
    prompt = np.concatenate([rng.choice(n_prompts, per_user, replace=False) for _ in range(n_users)])
    system = rng.integers(0, 4, user.size)
    y = (rng.normal(0, 0.8, n_users)[user] + rng.normal(0, 0.5, n_prompts)[prompt] + 0.1 * system
         + rng.normal(0, 1.0, user.size))
    return pd.DataFrame({"user": "u" + user.astype(str), "prompt": "p" + prompt.astype(str),
                         "system": np.array(list("ABCD"))[system], "rating": y})


def load(name: str, bookdata: Path) -> pd.DataFrame:
    if name == "table-3.11":
        df = pd.read_csv(bookdata / "mt_grid_full.csv.gz")
        return df[df.delta_scheme == "(-0.5:0.5)"].reset_index(drop=True)
    if name == "insteval":
        import mixedlm

        return mixedlm.load_insteval()
    return crossed_design()


def _columns(formula: str) -> list[str]:
    import re

    return sorted(set(re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", formula)))


def run_mixeval(df: pd.DataFrame, formula: str, repeat: int) -> dict:
    from mixeval import lmer

    best, cpu, fit = np.inf, np.inf, None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            fit = lmer(formula, df)
            best = min(best, time.perf_counter() - t0)
            cpu = min(cpu, time.process_time() - c0)
    return {"seconds": best, "cpu": cpu, "evals": fit.n_evaluations, "criterion": fit.criterion,
            "vc": {str(k): float(v) for k, v in fit.variances.items()}}


def run_mixedlm(df: pd.DataFrame, formula: str, response: str) -> dict:
    import mixedlm

    cols = [c for c in _columns(formula) if c in df.columns and c != response]
    df = df.astype({c: str for c in cols})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0, c0 = time.perf_counter(), time.process_time()
        fit = mixedlm.lmer(formula, df)
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    out = {"seconds": seconds, "cpu": cpu, "vc": {}}
    try:
        vc = fit.VarCorr()
        out["vc"] = {str(k): float(np.asarray(v.cov if hasattr(v, "cov") else v).ravel()[0]) for k, v in vc.groups.items()}
        out["vc"]["Residual"] = float(fit.sigma ** 2)
    except Exception:  # a different result API: time only
        pass
    return out


def run_lme4(df: pd.DataFrame, formula: str, response: str, name: str) -> dict:
    WORK.mkdir(exist_ok=True)
    path = WORK / f"engine_{name}.csv"
    cols = [c for c in _columns(formula) if c in df.columns]
    df[cols].to_csv(path, index=False)
    out = subprocess.run(["Rscript", str(HERE / "lme4_fit.R"), str(path), response, formula],
                         capture_output=True, text=True, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    return {"seconds": res["seconds"], "evals": res["feval"], "criterion": res["reml_criterion"],
            "vc": res["variance_components"]}


def max_rel_diff(a: dict, b: dict) -> float:
    keys = [k for k in a if k in b and max(a[k], b[k]) > 1e-6 * sum(a.values())]
    return max((abs(a[k] - b[k]) / abs(b[k]) for k in keys), default=float("nan"))


def startup(code: list[str], repeat: int = 5) -> float:
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, *code], cwd=HERE.parent, capture_output=True, check=True)
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.environ.get("MIXEVAL_DATA", str(HERE.parent.parent / "shared" / "bookdata")))
    ap.add_argument("--workloads", nargs="*", default=list(WORKLOADS))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-r", action="store_true")
    ap.add_argument("--skip-mixedlm", action="store_true")
    ap.add_argument("--r-crossed", action="store_true", help="also run lme4 on the crossed design (~27 min)")
    args = ap.parse_args()
    import mixeval

    print(f"mixeval from {Path(mixeval.__file__).parent}", file=sys.stderr)
    rows = []
    for name in args.workloads:
        response, formula = WORKLOADS[name]
        df = load(name, Path(args.data))
        me = run_mixeval(df, formula, 1 if name == "crossed" else args.repeat)
        print(f"{name}: mixeval {me['seconds']:.3f} s, {me['evals']} evaluations", file=sys.stderr, flush=True)
        ml = {} if args.skip_mixedlm else run_mixedlm(df, formula, response)
        if ml:
            print(f"{name}: mixedlm {ml['seconds']:.3f} s", file=sys.stderr, flush=True)
        r = {}
        if not args.skip_r and (name != "crossed" or args.r_crossed):
            r = run_lme4(df, formula, response, name)
            print(f"{name}: lme4 {r['seconds']:.2f} s", file=sys.stderr, flush=True)
        rows.append({
            "workload": name, "rows": len(df), "mixeval s": me["seconds"], "mixeval cpu s": me["cpu"],
            "mixeval evals": me["evals"], "mixedlm s": ml.get("seconds", np.nan), "mixedlm cpu s": ml.get("cpu", np.nan), "lme4 s": r.get("seconds", np.nan), "lme4 evals": r.get("evals", np.nan),
            "mixedlm / mixeval": ml.get("seconds", np.nan) / me["seconds"],
            "lme4 / mixeval": r.get("seconds", np.nan) / me["seconds"],
            "REML crit. mixeval - lme4": me["criterion"] - r["criterion"] if r else np.nan,
            "max rel. diff. components vs lme4": max_rel_diff(me["vc"], r["vc"]) if r else np.nan,
            "vs mixedlm": max_rel_diff(me["vc"], ml["vc"]) if ml.get("vc") else np.nan,
        })
        WORK.mkdir(exist_ok=True)
        (WORK / "bench_engine.json").write_text(json.dumps(rows, indent=1, default=float))
    print(pd.DataFrame(rows).to_markdown(index=False, floatfmt=".3g"))
    help_s = startup(["-m", "mixeval", "--help"])
    import_s = startup(["-c", "import mixeval"])
    print(f"\n`mixeval --help`: {help_s:.3f} s; `import mixeval`: {import_s:.3f} s (best of 5, fresh interpreter)")


if __name__ == "__main__":
    main()
