"""Coverage of the accuracy intervals of REML GLMM fits (``glmer(..., REML=True)``, the Study default).

The same generated designs and random streams as ``sim_glmer_df.py`` (the same data sets, replicate by
replicate), fitted by the restricted Laplace criterion instead of lme4's maximum likelihood; intervals of the
accuracy per system and of the pairwise accuracy differences with z (``df="asymptotic"``), Satterthwaite df and
Satterthwaite df at the components' upper bounds (``"satterthwaite-upper"``, experimental), and of the
pairwise odds ratios; mean REML estimates of the latent variances.

    python benchmarks/sim_glmer_reml.py run NAME [n_rep]     # -> benchmarks/results/sim_glmer_reml/NAME.jsonl
    python benchmarks/sim_glmer_reml.py summarise            # -> benchmarks/results/sim_glmer_reml.{json,md}

Results (1,000 replicates per design, committed as gzipped logs): ``benchmarks/results/sim_glmer_reml.md``.
"""

from __future__ import annotations

import gzip
import json
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sim_glmer_df import DESIGNS, METHODS, interval_coverage, simulate, true_odds_ratios, truth  # noqa: E402
from sim_glmer_df import run as run_design  # noqa: E402

from mixeval import glmer  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "results", "sim_glmer_reml")
REML_METHODS = (*METHODS, "satterthwaite-upper")


def one(design, rng) -> dict:
    d = simulate(design, rng)
    acc, diffs = truth(design)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = glmer("correct ~ system + (1|item) + (1|seed)", d, REML=True)
        row = interval_coverage(fit, acc, diffs, true_odds_ratios(design), REML_METHODS)
    v = fit.variances
    row.update(var_item=v["item"], var_seed=v["seed"], singular=bool(fit.singular))
    return row


def _percent(r: dict, key: str) -> str:
    return f"{100 * r[key]:.1f} ({100 * r[key + '_se']:.1f})" if key in r else "-"


def summarise() -> list[dict]:
    out = []
    for design in DESIGNS:
        path = os.path.join(OUT, f"{design.name}.jsonl")
        if os.path.exists(path + ".gz"):  # committed logs are gzipped
            with gzip.open(path + ".gz", "rt") as fh:
                rows = [json.loads(line) for line in fh]
        elif os.path.exists(path):
            rows = [json.loads(line) for line in open(path)]
        else:
            continue
        n = len(rows)
        res = {"design": design.name, "reps": n}
        for kind in ("mean", "diff", "ratio"):
            for m in REML_METHODS:
                if f"cover_{kind}_{m}" not in rows[0]:
                    continue
                per_rep = np.array([np.mean(r[f"cover_{kind}_{m}"]) for r in rows])
                res[f"cover_{kind}_{m}"] = float(per_rep.mean())
                res[f"cover_{kind}_{m}_se"] = float(per_rep.std(ddof=1) / np.sqrt(n))
        res["median_df"] = float(np.median([np.median(r["df_mean_satterthwaite"]) for r in rows]))
        if "df_mean_satterthwaite-upper" in rows[0]:
            res["median_df_upper"] = float(np.median([np.median(r["df_mean_satterthwaite-upper"]) for r in rows]))
        for comp, true in (("item", design.sd_item ** 2), ("seed", design.sd_seed ** 2)):
            v = np.array([r[f"var_{comp}"] for r in rows])
            res[f"var_{comp}"], res[f"var_{comp}_true"] = float(v.mean()), true
            res[f"var_{comp}_se"] = float(v.std(ddof=1) / np.sqrt(n))
        res["singular"] = float(np.mean([r["singular"] for r in rows]))
        out.append(res)
    with open(os.path.join(HERE, "results", "sim_glmer_reml.json"), "w") as fh:
        json.dump(out, fh, indent=1)
    lines = ["| design | reps | accuracy cov. z % | Satterthwaite % | Satterthwaite-upper % | median df "
             "(Satterthwaite / upper) | difference cov. Satterthwaite % | Satterthwaite-upper % | odds-ratio cov. "
             "Satterthwaite % | var item (true) | var seed (true) | singular % |",
             "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for r in out:
        lines.append(
            f"| {r['design']} | {r['reps']} | {_percent(r, 'cover_mean_asymptotic')} | "
            f"{_percent(r, 'cover_mean_satterthwaite')} | {_percent(r, 'cover_mean_satterthwaite-upper')} | "
            f"{r['median_df']:.1f} / {r.get('median_df_upper', float('nan')):.1f} | "
            f"{_percent(r, 'cover_diff_satterthwaite')} | {_percent(r, 'cover_diff_satterthwaite-upper')} | "
            f"{_percent(r, 'cover_ratio_satterthwaite')} | "
            f"{r['var_item']:.3f} ({r['var_item_true']:.2f}) | {r['var_seed']:.3f} ({r['var_seed_true']:.2f}) | "
            f"{100 * r['singular']:.0f} |")
    text = "\n".join(lines) + "\n\nMonte Carlo SEs in parentheses (percentage points).\n"
    with open(os.path.join(HERE, "results", "sim_glmer_reml.md"), "w") as fh:
        fh.write(text)
    print(text)
    return out


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run_design(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 1000, one, OUT)
    else:
        summarise()
