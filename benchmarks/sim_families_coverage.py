"""Coverage of the Wald intervals of the fixed effects and of the dispersion for the glmmTMB families (run once).

Design (every family): ``--items`` items x 3 systems x ``--seeds`` seeds, crossed item and system:seed random
intercepts (SDs 0.8 and 0.2 on the link scale), system effects (0, 0.3, -0.2) around an intercept; responses drawn
from the family at its true parameters (:meth:`mixeval.mixed.families.Family.simulate`):

* ``negative_binomial``: intercept 1.0 (log scale), theta = 2;
* ``beta``: intercept 0.0 (logit), phi = 8;
* ``ordered_beta``: intercept 0.0, phi = 6, cutpoints -2.2 and 2.0;
* ``beta_binomial``: intercept 0.0, phi = 3, n = 10 trials per row.

Each replicate fits ``y ~ system + (1|item) + (1|system:seed)`` by :func:`mixeval.fit` and records whether the 95%
Wald interval of each fixed effect and of the dispersion (on its log scale, as glmmTMB's ``confint``) covers the
truth. The summary gives each coverage with its Monte Carlo standard error ``sqrt(p (1 - p) / R)`` and the mean
estimate of the dispersion with its Monte Carlo SE. With few seeds per system (3) the system effects' standard
errors rest on a system:seed variance estimated from 9 levels, and z intervals undercover (the df problem of every
GLMM; Study's df options address it); the default, 8 seeds, is the large-sample check of the implementation.

Usage: nice -n 10 python3 benchmarks/sim_families_coverage.py [n_rep] [--items N] [--seeds S] [--families a,b] > out.json
(200 replicates per family by default; ``coverage(family, n_rep, ...)`` is imported by the tests' small version).
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import mixeval  # noqa: E402
from mixeval.mixed.families import get_family  # noqa: E402

SYSTEM_EFFECTS = np.array([0.0, 0.3, -0.2])
SD_ITEM, SD_RUN = 0.8, 0.2
TRUTH = {
    "negative_binomial": {"intercept": 1.0, "params": [np.log(2.0)]},
    "beta": {"intercept": 0.0, "params": [np.log(8.0)]},
    "ordered_beta": {"intercept": 0.0, "params": [np.log(6.0), -2.2, 2.0]},
    "beta_binomial": {"intercept": 0.0, "params": [np.log(3.0)], "trials": 10},
}
FORMULA = "y ~ system + (1|item) + (1|system:seed)"


def simulate(family: str, n_item: int, rng: np.random.Generator, n_seed: int = 8) -> pd.DataFrame:
    """One data set of the design with the family's responses (``n`` the trials of a beta-binomial row)."""
    truth = TRUTH[family]
    d = pd.MultiIndex.from_product([range(n_item), range(3), range(n_seed)], names=["item", "system", "seed"]
                                   ).to_frame(index=False)
    system, item, run = d.system.to_numpy(), d.item.to_numpy(), (d.system * n_seed + d.seed).to_numpy()
    eta = (truth["intercept"] + SYSTEM_EFFECTS[system] + rng.normal(0, SD_ITEM, n_item)[item]
           + rng.normal(0, SD_RUN, 3 * n_seed)[run])
    trials = np.full(len(d), float(truth.get("trials", 1)))
    d["y"] = get_family(family).simulate(eta, trials, rng, np.array(truth["params"]))
    d["n"] = trials
    d["item"] = "i" + d.item.astype(str)
    d["system"] = np.array(["A", "B", "C"])[d.system]
    d["seed"] = "s" + d.seed.astype(str)
    return d


def one(family: str, n_item: int, rng: np.random.Generator, n_seed: int) -> dict:
    d = simulate(family, n_item, rng, n_seed)
    truth = TRUTH[family]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = mixeval.fit(FORMULA, d, family=family, weights="n" if "trials" in truth else None)
        table = fit.confint(method="wald").table
    targets = {"(Intercept)": truth["intercept"], "systemB": SYSTEM_EFFECTS[1], "systemC": SYSTEM_EFFECTS[2],
               "dispersion": float(np.exp(truth["params"][0]))}
    covered = {k: bool(table.loc[k, "lower"] <= v <= table.loc[k, "upper"]) for k, v in targets.items()}
    return {"covered": covered, "dispersion": fit.dispersion, "converged": fit.converged}


def coverage(family: str, n_rep: int, *, n_item: int = 40, n_seed: int = 8, seed: int = 20261201) -> dict:
    """``n_rep`` replicates of one family: coverage of every interval (with its Monte Carlo SE) and the mean
    dispersion estimate."""
    rng = np.random.default_rng(seed)
    rows = [one(family, n_item, rng, n_seed) for _ in range(n_rep)]
    out = {"family": family, "n_rep": n_rep, "n_item": n_item, "n_seed": n_seed, "rows": n_item * 3 * n_seed}
    for name in rows[0]["covered"]:
        p = float(np.mean([r["covered"][name] for r in rows]))
        out[f"coverage_{name}"] = p
        out[f"mc_se_{name}"] = float(np.sqrt(p * (1 - p) / n_rep))
    disp = np.array([r["dispersion"] for r in rows])
    out["dispersion_true"] = float(np.exp(TRUTH[family]["params"][0]))
    out["dispersion_mean"] = float(disp.mean())
    out["dispersion_mc_se"] = float(disp.std(ddof=1) / np.sqrt(n_rep))
    out["converged"] = float(np.mean([r["converged"] for r in rows]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n_rep", nargs="?", type=int, default=200)
    parser.add_argument("--items", type=int, default=40)
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--families", default=",".join(TRUTH))
    args = parser.parse_args()
    results = []
    for family in args.families.split(","):
        t0 = time.perf_counter()
        res = coverage(family, args.n_rep, n_item=args.items, n_seed=args.seeds)
        res["seconds"] = time.perf_counter() - t0
        results.append(res)
        print(json.dumps(res), file=sys.stderr)
    json.dump({"design": {"formula": FORMULA, "items": args.items, "systems": 3, "seeds": args.seeds},
               "results": results}, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
