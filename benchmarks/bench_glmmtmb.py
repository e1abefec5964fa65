"""mixeval's negative binomial, beta, ordered beta and beta-binomial fits against glmmTMB (Rscript), in one run.

Usage: nice -n 10 python3 benchmarks/bench_glmmtmb.py [--repeats K] [--bookdata DIR] [--out FILE]

Data (generated here, written to a temporary folder that both tools read):

* ``nb``: error counts, 25 items x 5 systems x 5 seeds (625 rows), ``errors ~ system + (1|item) + (1|system:seed)``,
  theta = 2 (glmmTMB's ``nbinom2``);
* ``beta``: per-item scores strictly inside (0, 1), 400 items x 4 systems x 3 seeds (4,800 rows),
  ``score ~ system + (1|item) + (1|system:seed)``, phi = 8 (``beta_family``);
* ``ordbeta``: the same design with exact 0s and 1s (cutpoints -2.2, 2.0; phi = 6) (``ordbeta``);
* ``betabinomial``: pass@k, k correct of n = 10 samples on 205 tasks x 4 models (820 cells),
  ``cbind(k, n - k) ~ model + (1|task)`` (mixeval: ``k / n`` with ``weights = n``), phi = 3 (``betabinomial``);
* with ``--bookdata``: the book's liver grid accuracies (12,150 rows, seven crossed meta-parameter intercepts) as a
  beta model, and its annotation scores (300 rows with exact 0s and 1s) as an ordered beta model.

Each tool fits every case ``K`` times after one warm-up fit (glmmTMB's loads its compiled template; mixeval's
imports its formula machinery); the table gives each tool's least wall-clock and CPU seconds, their ratio, and
the log-likelihoods both reached (mixeval's minus glmmTMB's). Raw output is regenerated, not committed.
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

import mixeval  # noqa: E402
from mixeval.mixed.families import get_family  # noqa: E402


def crossed(n_item: int, systems: list[str], n_seed: int, rng: np.random.Generator, effects: list[float],
            sd_item: float, sd_run: float) -> tuple[pd.DataFrame, np.ndarray]:
    """Items x systems x seeds with the linear predictor of item and system:seed random intercepts."""
    d = pd.MultiIndex.from_product([range(n_item), range(len(systems)), range(n_seed)],
                                   names=["item", "system", "seed"]).to_frame(index=False)
    item, system = d.item.to_numpy(), d.system.to_numpy()
    run = (system * n_seed + d.seed).to_numpy()
    eta = (np.asarray(effects)[system] + rng.normal(0, sd_item, n_item)[item]
           + rng.normal(0, sd_run, len(systems) * n_seed)[run])
    d["item"] = [f"i{k:03d}" for k in item]
    d["system"] = np.asarray(systems)[system]
    d["seed"] = [f"s{k}" for k in d.seed]
    return d, eta


def cases(folder: Path, bookdata: Path | None) -> list[dict]:
    rng = np.random.default_rng(20261201)
    out = []
    d, eta = crossed(25, list("ABCDE"), 5, rng, [0.8, 1.0, 0.6, 1.2, 0.9], 0.6, 0.15)
    d["errors"] = get_family("negative_binomial").simulate(eta, 1.0, rng, np.log([2.0]))
    out.append(dict(name="nb", data=d, family="negative_binomial", tmb="nbinom2",
                    formula="errors ~ system + (1|item) + (1|system:seed)"))
    d, eta = crossed(400, list("ABCD"), 3, rng, [-0.2, 0.1, 0.3, 0.0], 0.8, 0.1)
    d["score"] = np.clip(get_family("beta").simulate(eta, 1.0, rng, np.log([8.0])), 1e-4, 1 - 1e-4).round(6)
    out.append(dict(name="beta", data=d, family="beta", tmb="beta_family",
                    formula="score ~ system + (1|item) + (1|system:seed)"))
    d, eta = crossed(400, list("ABCD"), 3, rng, [-0.1, 0.2, 0.4, 0.0], 0.9, 0.12)
    f1 = get_family("ordered_beta").simulate(eta, 1.0, rng, np.array([np.log(6.0), -2.2, 2.0]))
    d["f1"] = np.where((f1 > 0) & (f1 < 1), np.clip(f1, 1e-4, 1 - 1e-4).round(6), f1)
    out.append(dict(name="ordbeta", data=d, family="ordered_beta", tmb="ordbeta",
                    formula="f1 ~ system + (1|item) + (1|system:seed)"))
    tasks = pd.MultiIndex.from_product([range(205), range(4)], names=["task", "model"]).to_frame(index=False)
    eta = np.array([-0.3, 0.2, 0.5, 0.0])[tasks.model.to_numpy()] + rng.normal(0, 1.0, 205)[tasks.task.to_numpy()]
    tasks["n"] = 10.0
    tasks["p"] = get_family("beta_binomial").simulate(eta, 10.0, rng, np.log([3.0]))
    tasks["k"] = np.round(tasks.p * tasks.n).astype(int)
    tasks["task"] = [f"t{k:03d}" for k in tasks.task]
    tasks["model"] = [f"m{k}" for k in tasks.model]
    out.append(dict(name="betabinomial", data=tasks, family="beta_binomial", tmb="betabinomial",
                    formula="p ~ model + (1|task)", r_formula="cbind(k, n - k) ~ model + (1|task)", weights="n"))
    if bookdata is not None:
        liver = pd.read_csv(bookdata / "liver_gridsearch.csv.gz", dtype=str).astype({"accuracy": float})
        out.append(dict(name="liver_beta", data=liver, family="beta", tmb="beta_family",
                        formula="accuracy ~ (1|hidden_number) + (1|learning_rate) + (1|batch_size) + "
                                "(1|hidden_size_max) + (1|dropout) + (1|random_seed) + (1|epochs)"))
        notes = pd.read_csv(bookdata / "mt_annotation.csv.gz", dtype=str).astype({"score": float})
        out.append(dict(name="annotation_ordbeta", data=notes, family="ordered_beta", tmb="ordbeta",
                        formula="score ~ mode + (1|sentence) + (1|rater) + (1|rater:sentence)"))
    for case in out:
        case["file"] = str(folder / f"{case['name']}.csv")
        case["data"].to_csv(case["file"], index=False)
        case.setdefault("r_formula", case["formula"])
    return out


def time_mixeval(case: dict, repeats: int) -> dict:
    runs, cpu = [], []
    for _ in range(repeats):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0, c0 = time.perf_counter(), time.process_time()
            fit = mixeval.fit(case["formula"], case["data"], family=case["family"], weights=case.get("weights"))
            runs.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    return {"seconds": runs, "cpu_seconds": cpu, "loglik": fit.loglik, "fixef": dict(fit.fixef),
            "dispersion": fit.dispersion, "converged": fit.converged, "n_evaluations": fit.n_evaluations}


def time_glmmtmb(specs: list[dict], repeats: int, folder: Path) -> dict:
    spec_file = folder / "spec.json"
    spec_file.write_text(json.dumps([{"name": c["name"], "file": c["file"], "r_formula": c["r_formula"],
                                      "family": c["tmb"]} for c in specs]))
    out = subprocess.run(["Rscript", str(ROOT / "benchmarks" / "glmmtmb_timings.R"), str(spec_file), str(repeats)],
                         capture_output=True, text=True, check=True)
    return {r["name"]: r for r in json.loads(out.stdout)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--bookdata", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        specs = cases(folder, args.bookdata)
        warm = specs[0]
        time_mixeval(warm, 1)  # imports and first-call costs, as glmmTMB's warm-up fit
        ours = {c["name"]: time_mixeval(c, args.repeats) for c in specs}
        theirs = time_glmmtmb(specs, args.repeats, folder)
    rows = []
    for c in specs:
        a, b = ours[c["name"]], theirs[c["name"]]
        tmb_s = np.atleast_1d(b["seconds"])
        tmb_cpu = np.atleast_1d(b["cpu_seconds"])
        rows.append({"case": c["name"], "rows": len(c["data"]), "glmmTMB_s": float(tmb_s.min()),
                     "mixeval_s": min(a["seconds"]), "ratio": float(tmb_s.min()) / min(a["seconds"]),
                     "glmmTMB_cpu_s": float(tmb_cpu.min()), "mixeval_cpu_s": min(a["cpu_seconds"]),
                     "cpu_ratio": float(tmb_cpu.min()) / min(a["cpu_seconds"]),
                     "loglik_difference": a["loglik"] - b["loglik"],
                     "dispersion_glmmTMB": b["sigma"], "dispersion_mixeval": a["dispersion"],
                     "converged": a["converged"]})
    table = pd.DataFrame(rows)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    if args.out is not None:
        args.out.write_text(json.dumps({"cases": rows, "mixeval": ours, "glmmTMB": theirs}, indent=1, default=float))


if __name__ == "__main__":
    main()
