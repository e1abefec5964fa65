"""Coverage of the marginal (population-averaged) accuracy intervals of ``emmeans_response(marginal=True)``.

Binary scores from a logit GLMM with known truth: 60 items (variance 1) x 5 seeds (variance 0.25) x 2 systems
(intercept 1.5, B +0.5). The true marginal accuracy of each system is ``E[expit(eta + b)]``,
``b ~ N(0, 1.25)`` (computed by adaptive quadrature). Each replicate fits the Laplace (ML) glmer and records
whether the 95% delta-method interval of each system's marginal accuracy covers the truth, and whether the
conditional (random effects at 0) interval does -- it estimates another quantity and should miss the truth.

Run: PYTHONPATH=. nice -n 10 python3 benchmarks/sim_marginal_accuracy.py [replicates] [seeds]; appends to
benchmarks/results/sim_marginal_accuracy.md and writes sim_marginal_accuracy_<seeds>seeds.json.
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import integrate, special, stats

from mixeval.mixed import glmer
from mixeval.significance import emmeans_response

ITEMS, SEEDS = 60, 5
VAR_ITEM, VAR_SEED = 1.0, 0.25
ETA = {"A": 1.5, "B": 2.0}


def truth() -> dict[str, float]:
    sd = np.sqrt(VAR_ITEM + VAR_SEED)
    return {s: integrate.quad(lambda b: special.expit(e + b) * stats.norm.pdf(b, 0, sd), -np.inf, np.inf)[0]
            for s, e in ETA.items()}


def replicate(rng: np.random.Generator) -> pd.DataFrame:
    """One data set of the design (module-level ITEMS, SEEDS)."""
    d = pd.DataFrame([(i, s, m) for i in range(ITEMS) for s in range(SEEDS) for m in ETA],
                     columns=["item", "seed", "system"])
    eta = (d.system.map(ETA) + rng.normal(0, np.sqrt(VAR_ITEM), ITEMS)[d.item]
           + rng.normal(0, np.sqrt(VAR_SEED), SEEDS)[d.seed])
    d["correct"] = (rng.random(len(d)) < special.expit(eta)).astype(int)
    return d


def main(reps: int = 200) -> None:
    rng = np.random.default_rng(20261125)
    true = truth()
    rows, start = [], time.time()
    for r in range(reps):
        d = replicate(rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = glmer("correct ~ system + (1|item) + (1|seed)", d, family="binomial")
            marg = emmeans_response(fit, "system", marginal=True)
            cond = emmeans_response(fit, "system")
        for k, s in enumerate(ETA):
            rows.append({"rep": r, "system": s, "truth": true[s], "est": marg.prob[k],
                         "cover": bool(marg.ci_low[k] <= true[s] <= marg.ci_high[k]),
                         "below": bool(true[s] < marg.ci_low[k]), "above": bool(true[s] > marg.ci_high[k]),
                         "width": marg.ci_high[k] - marg.ci_low[k],
                         "cond_cover": bool(cond.ci_low[k] <= true[s] <= cond.ci_high[k]),
                         "singular": bool(fit.singular)})
    t = pd.DataFrame(rows)
    per_rep = t.groupby("rep")[["cover", "below", "above", "cond_cover"]].mean()
    summary = {
        "design": f"{ITEMS} items x {SEEDS} seeds x 2 systems, var item {VAR_ITEM}, var seed {VAR_SEED}",
        "replicates": reps, "truth": true, "seconds": time.time() - start,
        "coverage": float(t.cover.mean()), "coverage_mc_se": float(per_rep.cover.std(ddof=1) / np.sqrt(reps)),
        "miss_below": float(t.below.mean()), "miss_above": float(t.above.mean()),
        "mean_width": float(t.width.mean()), "bias": {s: float(g.est.mean() - true[s]) for s, g in t.groupby("system")},
        "conditional_interval_coverage_of_marginal_truth": float(t.cond_cover.mean()),
        "singular_fits": float(t.groupby("rep").singular.first().mean()),
    }
    out = Path(__file__).parent / "results"
    (out / f"sim_marginal_accuracy_{SEEDS}seeds.json").write_text(json.dumps(summary, indent=2))
    table = out / "sim_marginal_accuracy.md"
    header = ("| design | reps | coverage % (MC se) | truth below / above % | mean width | bias A / B | "
              "conditional interval covers marginal truth % |\n|---|--:|--:|--:|--:|--:|--:|\n")
    md = ("" if table.exists() else header) + (
          f"| {summary['design']} | {reps} | {100 * summary['coverage']:.1f} ({100 * summary['coverage_mc_se']:.1f}) | "
          f"{100 * summary['miss_below']:.1f} / {100 * summary['miss_above']:.1f} | {summary['mean_width']:.3f} | "
          f"{summary['bias']['A']:+.4f} / {summary['bias']['B']:+.4f} | "
          f"{100 * summary['conditional_interval_coverage_of_marginal_truth']:.1f} |\n")
    with table.open("a") as handle:
        handle.write(md)
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    if len(sys.argv) > 2:
        SEEDS = int(sys.argv[2])
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
