"""Simulation study of mixeval.glmer on generated binary evaluation designs (run once, results committed).

Design: items x seeds x systems, every item answered by every system under every seed, 0/1 correctness with
logit P(correct) = b0 + system effect + item effect + seed effect, item SD 1.0, seed SD 0.4 (latent scale).

* Type I error of the system GLRT (3 systems, no system effect) at the 5% level;
* coverage of the 95% intervals of the accuracy per system (emmeans' response scale: the accuracy of a typical
  item and seed, ``plogis(b0 + effect)``), pooled over systems;
* recovery of the latent variance components (item, seed): mean estimate and its Monte Carlo SE.

Usage: python benchmarks/sim_glmer.py [n_rep] [replicates.jsonl] > benchmarks/results/sim_glmer.json
(environment SIM_ITEMS, SIM_SEEDS change the design: 60 items and 5 seeds by default).
(with a .jsonl path every replicate is appended as it finishes; ``summarise(path)`` summarises a partial run).
"""

from __future__ import annotations

import json
import sys
import time
import warnings

import numpy as np
import pandas as pd

from mixeval import compare, glmer
from mixeval.significance import emmeans_response

import os

N_ITEM = int(os.environ.get("SIM_ITEMS", 60))
N_SEED = int(os.environ.get("SIM_SEEDS", 5))
SYSTEMS = ("A", "B", "C")
SD_ITEM, SD_SEED, B0 = 1.0, 0.4, 0.4


def simulate(rng: np.random.Generator, effects) -> pd.DataFrame:
    d = pd.MultiIndex.from_product([range(N_ITEM), range(N_SEED), range(len(SYSTEMS))],
                                   names=["item", "seed", "system"]).to_frame(index=False)
    eta = B0 + np.asarray(effects)[d.system] + rng.normal(0, SD_ITEM, N_ITEM)[d.item] + rng.normal(0, SD_SEED, N_SEED)[d.seed]
    d["correct"] = (rng.random(len(d)) < 1 / (1 + np.exp(-eta))).astype(int)
    d["item"] = "i" + d.item.astype(str)
    d["seed"] = "s" + d.seed.astype(str)
    d["system"] = np.asarray(SYSTEMS)[d.system]
    return d


def one(rng: np.random.Generator) -> dict:
    effects = (0.0, 0.0, 0.0)
    d = simulate(rng, effects)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = glmer("correct ~ system + (1|item) + (1|seed)", d)
        null = glmer("correct ~ 1 + (1|item) + (1|seed)", d)
    test = compare(full, null)
    acc = emmeans_response(full, "system")
    truth = 1 / (1 + np.exp(-(B0 + np.asarray(effects))))
    covered = ((acc.lower.to_numpy() <= truth) & (truth <= acc.upper.to_numpy())).tolist()
    v = full.variances
    return {"pvalue": test.pvalue, "covered": covered, "var_item": v["item"], "var_seed": v["seed"],
            "singular": full.singular}


def main(n_rep: int = 500, seed: int = 20261123, log: str | None = None) -> dict:
    rng = np.random.default_rng(seed)
    t0 = time.time()
    rows = []
    for _ in range(n_rep):
        rows.append(one(rng))
        if log:
            with open(log, "a") as fh:
                fh.write(json.dumps(rows[-1]) + "\n")
    out = summarise_rows(rows, seed)
    out["seconds"] = time.time() - t0
    return out


def summarise(path: str, seed: int = 20261123) -> dict:
    """Summary of the replicates logged in ``path`` (a partial run included)."""
    with open(path) as fh:
        return summarise_rows([json.loads(line) for line in fh if line.strip()], seed)


def summarise_rows(rows: list[dict], seed: int) -> dict:
    n_rep = len(rows)
    p = np.array([r["pvalue"] for r in rows])
    cov = np.array([c for r in rows for c in r["covered"]])
    vi = np.array([r["var_item"] for r in rows])
    vs = np.array([r["var_seed"] for r in rows])
    rej = float(np.mean(p < 0.05))
    return {
        "design": {"items": N_ITEM, "seeds": N_SEED, "systems": len(SYSTEMS), "rows": N_ITEM * N_SEED * len(SYSTEMS),
                   "sd_item": SD_ITEM, "sd_seed": SD_SEED, "b0": B0},
        "n_rep": n_rep, "seed": seed,
        "type1_error_5pct": rej, "type1_mc_se": float(np.sqrt(rej * (1 - rej) / n_rep)),
        "coverage_95": float(cov.mean()), "coverage_mc_se": float(np.sqrt(cov.mean() * (1 - cov.mean()) / cov.size)),
        "var_item_true": SD_ITEM**2, "var_item_mean": float(vi.mean()), "var_item_mc_se": float(vi.std(ddof=1) / np.sqrt(n_rep)),
        "var_seed_true": SD_SEED**2, "var_seed_mean": float(vs.mean()), "var_seed_mc_se": float(vs.std(ddof=1) / np.sqrt(n_rep)),
        "var_seed_median": float(np.median(vs)),
        "singular_fraction": float(np.mean([r["singular"] for r in rows])),
    }


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]) if len(sys.argv) > 1 else 500, log=sys.argv[2] if len(sys.argv) > 2 else None),
                     indent=2))
