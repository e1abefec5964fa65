"""Benchmark: mixeval.lmer against lme4 (Rscript), the PyPI package mixedlm and statsmodels, in one run.

    python benchmarks/bench_lmer.py [--data ../shared/bookdata] [--models table-3.9 table-3.11 ...]
                                    [--skip-r] [--repeat 5] [--memory]

Times are wall-clock seconds for one complete fit from an in-memory DataFrame (formula -> result),
best of ``--repeat`` runs for the Python packages and one run for lme4 (data loading excluded for all).
``--memory`` also measures peak resident memory and time of a fit on synthetic logs of 250k, 500k, 1M
rows (each in a fresh process). Prints markdown tables (figures: docs/performance.md).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from _timing import best_time


HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's mixeval (also in the child processes), not an installed one
META = "ter ~ (1|sentence_id) + (1|learning_rate) + (1|seed) + (1|decoder_dropout) + (1|decoder_dropout_hidden) + (1|encoder_dropout)"
MODELS = {
    "table-3.4": ("liver_gridsearch.csv.gz", False,
                  "accuracy ~ (1|hidden_size_max) + (1|hidden_number) + (1|learning_rate) + (1|batch_size) + (1|random_seed) + (1|epochs) + (1|dropout)"),
    "table-3.8": ("mt_grid_partial.csv.gz", True, "ter ~ (1|sentence_id)"),
    "table-3.9": ("mt_grid_partial.csv.gz", True, META),
    "table-3.10": ("mt_grid_full.csv.gz", True, "ter ~ (1|sentence_id)"),
    "table-3.11": ("mt_grid_full.csv.gz", True, META),
}


def load(bookdata: Path, model: str) -> pd.DataFrame:
    file, subset, _ = MODELS[model]
    df = pd.read_csv(bookdata / file)
    if subset:
        df = df[df.delta_scheme == "(-0.5:0.5)"].reset_index(drop=True)
    return df


def run_mixeval(df, formula, repeat):
    from mixeval import lmer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, fit = best_time(lambda: lmer(formula, df), repeat)
    return t, fit.variances


def run_mixedlm(df, formula, repeat):
    import mixedlm

    # mixedlm treats numeric grouping columns as numbers; give it factors as lme4 does
    groups = [g.split("|")[1].strip(" )") for g in formula.split("+") if "|" in g]
    df = df.astype({g: str for g in groups})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, fit = best_time(lambda: mixedlm.lmer(formula, df), max(1, repeat // 2))
    try:
        vc = fit.VarCorr()
        out = {str(k): float(np.asarray(v.cov if hasattr(v, "cov") else v).ravel()[0]) for k, v in vc.groups.items()}
        out["Residual"] = float(fit.sigma ** 2)
    except Exception:  # different result API: report time only
        out = {}
    return t, out


def run_statsmodels(bookdata: Path, model: str, timeout: float) -> tuple[float, str]:
    """statsmodels MixedLM in a child process (it can run for very long or exhaust memory on crossed designs)."""
    try:
        out = subprocess.run([sys.executable, __file__, "--data", str(bookdata), "--statsmodels-child", model],
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return float("nan"), f"no result after {timeout:.0f} s"
    lines = out.stdout.strip().splitlines()
    if out.returncode != 0 or not lines:
        return float("nan"), "failed: " + (out.stderr.strip().splitlines() or ["?"])[-1][:80]
    res = json.loads(lines[-1])
    return res["seconds"], res["note"]


def statsmodels_child(bookdata: Path, model: str) -> None:
    import statsmodels.formula.api as smf

    df = load(bookdata, model)
    response, rhs = MODELS[model][2].split("~")
    groups = [g.split("|")[1].strip(" )") for g in rhs.split("+") if "|" in g]
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    if len(groups) == 1:
        fit = smf.mixedlm(f"{response.strip()} ~ 1", df, groups=df[groups[0]]).fit(reml=True)
    else:  # crossed factors: one all-encompassing group with variance components (statsmodels' idiom)
        vc = {g: f"0 + C({g})" for g in groups}
        fit = smf.mixedlm(f"{response.strip()} ~ 1", df.assign(_all=1), groups="_all", vc_formula=vc).fit(reml=True)
    note = "ok" if fit.converged else "not converged"
    print(json.dumps({"seconds": time.perf_counter() - t0, "note": note}))


def run_lme4(bookdata: Path, models: list[str]) -> dict:
    out = subprocess.run(["Rscript", str(HERE / "lme4_timings.R"), str(bookdata), *models],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def max_rel_diff(a: dict, b: dict) -> float:
    keys = [k for k in a if k in b and max(a[k], b[k]) > 1e-6 * sum(a.values())]
    return max((abs(a[k] - b[k]) / max(abs(b[k]), 1e-300) for k in keys), default=float("nan"))


def synthetic_log(n_rows: int, seed: int = 0) -> pd.DataFrame:
    """items x systems x seeds x raters with known components (for the memory scaling run)."""
    rng = np.random.default_rng(seed)
    n_items = n_rows // (4 * 5 * 10)
    item = np.repeat(np.arange(n_items), 200)
    system = np.tile(np.repeat(np.arange(4), 50), n_items)
    seed_ = np.tile(np.repeat(np.arange(5), 10), n_items * 4)
    rater = np.tile(np.arange(10), n_items * 20)
    y = (rng.normal(0, 1, n_items)[item] + 0.1 * system + rng.normal(0, 0.3, 20)[system * 5 + seed_]
         + rng.normal(0, 0.2, 10)[rater] + rng.normal(0, 0.5, item.size))
    return pd.DataFrame({"item": item, "system": np.array(list("ABCD"))[system], "seed": seed_, "rater": rater, "score": y})


def memory_child(n_rows: int) -> None:
    """Fit one synthetic log; report time, the fit's own peak allocation (tracemalloc) and the process peak."""
    import gc
    import tracemalloc

    from mixeval import lmer

    df = synthetic_log(n_rows)
    gc.collect()
    data_mb = df.memory_usage(deep=True).sum() / 2**20
    tracemalloc.start()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lmer("score ~ system + (1|item) + (1|seed:system) + (1|rater)", df)
    elapsed = time.perf_counter() - t0
    fit_peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"rows": n_rows, "seconds": elapsed, "data_mb": data_mb, "fit_peak_alloc_mb": fit_peak,
                      "process_peak_rss_mb": peak}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(HERE.parent.parent / "shared" / "bookdata"))
    ap.add_argument("--models", nargs="*", default=["table-3.4", "table-3.9", "table-3.10", "table-3.11"])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--skip-r", action="store_true")
    ap.add_argument("--memory", action="store_true")
    ap.add_argument("--memory-only", action="store_true", help="only the memory scaling run")
    ap.add_argument("--statsmodels-timeout", type=float, default=120.0)
    ap.add_argument("--memory-child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--statsmodels-child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.memory_child:
        memory_child(args.memory_child)
        return
    if args.statsmodels_child:
        statsmodels_child(Path(args.data), args.statsmodels_child)
        return
    bookdata = Path(args.data)
    if args.memory_only:
        args.models, args.memory = [], True
    r = {} if (args.skip_r or not args.models) else run_lme4(bookdata, args.models)
    rows = []
    for model in args.models:
        df = load(bookdata, model)
        formula = MODELS[model][2]
        t_me, vc_me = run_mixeval(df, formula, args.repeat)
        t_ml, vc_ml = run_mixedlm(df, formula, args.repeat)
        t_sm, sm_note = run_statsmodels(bookdata, model, args.statsmodels_timeout)
        t_r = r.get("timings", {}).get(model, float("nan"))
        vc_r = r.get("variance_components", {}).get(model, {})
        rows.append({
            "model": model, "rows": len(df), "mixeval_s": t_me, "lme4_s": t_r, "mixedlm_s": t_ml, "statsmodels_s": t_sm,
            "lme4/mixeval": t_r / t_me, "mixedlm/mixeval": t_ml / t_me,
            "max rel diff vs lme4": max_rel_diff(vc_me, vc_r) if vc_r else float("nan"),
            "statsmodels": sm_note,
        })
        print(f"{model}: mixeval {t_me:.3f} s, lme4 {t_r:.2f} s, mixedlm {t_ml:.2f} s", file=sys.stderr)
    if rows:
        print(pd.DataFrame(rows).to_markdown(index=False, floatfmt=".3g"))
    if args.memory:
        mem = []
        for n in (250_000, 500_000, 1_000_000, 2_000_000):
            out = subprocess.run([sys.executable, __file__, "--memory-child", str(n)], capture_output=True, text=True, check=True,
                                 env={**os.environ})
            mem.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print()
        print(pd.DataFrame(mem).to_markdown(index=False, floatfmt=".3g"))


if __name__ == "__main__":
    main()
