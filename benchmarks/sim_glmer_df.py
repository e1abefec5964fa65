"""Simulation study of GLMM inference on generated binary evaluation designs (run once, results committed).

Every design is items x seeds x systems, every item answered by every system under every seed, with 0/1
correctness and ``logit P(correct) = b0 + effect_system + a_item + c_seed``, ``a ~ N(0, sd_item^2)``,
``c ~ N(0, sd_seed^2)``, ``b0 = logit(baseline accuracy)``. Per replicate the model
``correct ~ system + (1|item) + (1|seed)`` is fitted by Laplace (``mixeval.glmer``) and measured:

* type I error of the system GLRT (``mixeval.compare`` against ``correct ~ 1 + ...``) at 5%, on the designs
  without system effects;
* coverage of the 95% intervals of the accuracy per system (emmeans' response scale: the accuracy of a typical
  item and seed, ``plogis(b0 + effect)``) and of the unadjusted 95% intervals of the pairwise accuracy
  differences (``plogis(b0 + e_a) - plogis(b0 + e_b)``), with ``df="asymptotic"`` (z, emmeans for glmer) and
  ``df="satterthwaite"`` (the linearised model's Satterthwaite t);
* recovery of the latent variance components (item, seed): mean estimate (bias) and its Monte Carlo SE.

Usage::

    python benchmarks/sim_glmer_df.py run NAME [n_rep]      # appends replicates to benchmarks/results/sim_glmer_df/NAME.jsonl
    python benchmarks/sim_glmer_df.py summarise             # -> benchmarks/results/sim_glmer_df.{json,csv,md}

The replicate logs are committed gzipped (``sim_glmer_df/NAME.jsonl.gz``; ``summarise`` reads either form).

The replicates are seeded per design (``20261123 + index``), and a run resumes where its log ends.
"""

from __future__ import annotations

import gzip
import json
import os
import sys
import time
import warnings
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from scipy import stats

from mixeval import compare, glmer
from mixeval.significance import emmeans, emmeans_response, pairwise_differences, pairwise_ratios

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "results", "sim_glmer_df")
METHODS = ("asymptotic", "satterthwaite")


@dataclass(frozen=True)
class SimDesign:
    name: str
    items: int
    seeds: int
    systems: int
    accuracy: float          # baseline accuracy of a typical item and seed (system A)
    sd_item: float
    sd_seed: float
    effects: tuple[float, ...] = ()   # logit effects of the systems (empty: none, the GLRT's null)
    glrt: bool = True

    @property
    def b0(self) -> float:
        return float(np.log(self.accuracy / (1 - self.accuracy)))

    @property
    def effect_vector(self) -> np.ndarray:
        return np.asarray(self.effects if self.effects else (0.0,) * self.systems, dtype=float)


DESIGNS = [
    # headline designs (1,000 replicates)
    SimDesign("base_60x5x3_p60", 60, 5, 3, 0.6, 1.0, 0.4),
    SimDesign("small_40x3x2_p80", 40, 3, 2, 0.8, 1.0, 0.4),
    SimDesign("high_60x5x3_p90", 60, 5, 3, 0.9, 1.0, 0.4),
    SimDesign("noseed_60x5x3_p60", 60, 5, 3, 0.6, 1.0, 0.0),
    # secondary designs (fewer replicates; MC SEs reported)
    SimDesign("large_200x10x4_p80", 200, 10, 4, 0.8, 1.0, 0.4),
    SimDesign("seeds10_40x10x2_p50", 40, 10, 2, 0.5, 1.5, 0.3),
    SimDesign("seeds3_60x3x4_p80", 60, 3, 4, 0.8, 0.5, 0.6),
    SimDesign("effects_60x5x3_p80", 60, 5, 3, 0.8, 1.0, 0.4, effects=(0.0, 0.3, 0.6), glrt=False),
]
BY_NAME = {d.name: d for d in DESIGNS}


def simulate(design: SimDesign, rng: np.random.Generator) -> pd.DataFrame:
    d = pd.MultiIndex.from_product([range(design.items), range(design.seeds), range(design.systems)],
                                   names=["item", "seed", "system"]).to_frame(index=False)
    eta = (design.b0 + design.effect_vector[d.system] + rng.normal(0, design.sd_item, design.items)[d.item]
           + rng.normal(0, design.sd_seed, design.seeds)[d.seed])
    d["correct"] = (rng.random(len(d)) < 1 / (1 + np.exp(-eta))).astype(int)
    d["item"] = "i" + d.item.astype(str)
    d["seed"] = "s" + d.seed.astype(str)
    d["system"] = np.array([chr(65 + k) for k in range(design.systems)])[d.system]
    return d


def truth(design: SimDesign) -> tuple[np.ndarray, dict[str, float]]:
    acc = 1 / (1 + np.exp(-(design.b0 + design.effect_vector)))
    names = [chr(65 + k) for k in range(design.systems)]
    diffs = {f"{names[i]} - {names[j]}": float(acc[i] - acc[j])
             for i in range(design.systems) for j in range(i + 1, design.systems)}
    return acc, diffs


def true_odds_ratios(design: SimDesign) -> dict[str, float]:
    """The pairwise odds ratios of the systems at a typical item and seed, keyed as ``pairwise_ratios``."""
    eff = design.effect_vector
    names = [chr(65 + k) for k in range(design.systems)]
    return {f"{names[i]} / {names[j]}": float(np.exp(eff[i] - eff[j]))
            for i in range(design.systems) for j in range(i + 1, design.systems)}


def interval_coverage(fit, acc: np.ndarray, diffs: dict[str, float], ratios: dict[str, float] | None = None,
                      methods: tuple[str, ...] = METHODS) -> dict:
    """Whether each accuracy interval and each pairwise-difference interval (and, given ``ratios``, each
    odds-ratio interval) covers the truth, per df method."""
    row: dict = {}
    for m in methods:
        emm = emmeans_response(fit, "system", df=m)
        row[f"cover_mean_{m}"] = ((emm.lower <= acc) & (acc <= emm.upper)).astype(int).tolist()
        row[f"df_mean_{m}"] = emm.df.tolist()
        pd_ = pairwise_differences(fit, "system", adjust="none", df=m).table
        true = pd_.contrast.map(diffs).to_numpy()
        row[f"cover_diff_{m}"] = ((pd_.lower <= true) & (true <= pd_.upper)).astype(int).tolist()
        if ratios is not None:
            pr = pairwise_ratios(fit, "system", adjust="none", df=m).table
            true = pr.contrast.map(ratios).to_numpy()
            row[f"cover_ratio_{m}"] = ((pr.lower <= true) & (true <= pr.upper)).astype(int).tolist()
    return row


def one(design: SimDesign, rng: np.random.Generator) -> dict:
    d = simulate(design, rng)
    acc, diffs = truth(design)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = glmer("correct ~ system + (1|item) + (1|seed)", d)
        row: dict = {}
        if design.glrt:
            null = glmer("correct ~ 1 + (1|item) + (1|seed)", d)
            row["pvalue"] = float(compare(full, null).pvalue)
        row.update(interval_coverage(full, acc, diffs))
        link = emmeans(full, "system")  # link-scale estimate and se: coverage for any other df, after the fact
        row["z_mean"] = ((link.emmean - np.log(acc / (1 - acc))) / link.se).tolist()
    v = full.variances
    row.update(var_item=v["item"], var_seed=v["seed"], singular=bool(full.singular))
    return row


def run(name: str, n_rep: int, replicate=None, out: str = OUT) -> None:
    """Append replicates of design ``name`` to ``out/name.jsonl`` until it holds ``n_rep`` (resumable: the
    random stream of the replicates already logged is replayed). ``replicate(design, rng) -> row``, by
    default :func:`one`; every design's stream is seeded alike, so the same data sets are fitted by any of them."""
    design = BY_NAME[name]
    replicate = one if replicate is None else replicate
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, f"{name}.jsonl")
    done = sum(1 for _ in open(path)) if os.path.exists(path) else 0
    rng = np.random.default_rng(20261123 + DESIGNS.index(design))
    for _ in range(done):  # replay the random stream of the replicates already logged
        simulate(design, rng)
    for _ in range(done, n_rep):
        t0 = time.time()
        row = replicate(design, rng)
        row["seconds"] = time.time() - t0
        with open(path, "a") as fh:
            fh.write(json.dumps(row) + "\n")


def _rate(x: np.ndarray) -> tuple[float, float]:
    r = float(np.mean(x))
    return r, float(np.sqrt(r * (1 - r) / x.size))


def summarise_design(design: SimDesign, rows: list[dict]) -> dict:
    n = len(rows)
    out = {**{k: v for k, v in asdict(design).items() if k != "effects"},
           "effects": list(design.effects) or None, "rows": design.items * design.seeds * design.systems, "n_rep": n}
    if design.glrt:
        out["type1"], out["type1_mcse"] = _rate(np.array([r["pvalue"] < 0.05 for r in rows]))
    for m in METHODS:
        for what in ("mean", "diff"):
            cov = np.array([c for r in rows for c in r[f"cover_{what}_{m}"]])
            # replicates are independent, contrasts within one are not: the MC SE uses replicate means
            per_rep = np.array([np.mean(r[f"cover_{what}_{m}"]) for r in rows])
            out[f"cover_{what}_{m}"] = float(cov.mean())
            out[f"cover_{what}_{m}_mcse"] = float(per_rep.std(ddof=1) / np.sqrt(n))
    regular = [r for r in rows if not r["singular"]]
    if len(regular) > 1:  # coverage of the mean intervals among the fits with no variance on the boundary
        for m in METHODS:
            per_rep = np.array([np.mean(r[f"cover_mean_{m}"]) for r in regular])
            out[f"cover_mean_{m}_regular"] = float(per_rep.mean())
            out[f"cover_mean_{m}_regular_mcse"] = float(per_rep.std(ddof=1) / np.sqrt(len(regular)))
    with_z = [r for r in rows if "z_mean" in r]
    if len(with_z) > 1:  # t intervals with seeds - 1 df: the conservative bound (the seed variance's own df)
        crit = float(stats.t.ppf(0.975, max(design.seeds - 1, 1)))
        per_rep = np.array([np.mean(np.abs(r["z_mean"]) <= crit) for r in with_z])
        out["cover_mean_seeds_minus_1"] = float(per_rep.mean())
        out["cover_mean_seeds_minus_1_mcse"] = float(per_rep.std(ddof=1) / np.sqrt(len(with_z)))
        out["n_rep_seeds_minus_1"] = len(with_z)
    out["median_df_mean"] = float(np.median([x for r in rows for x in r["df_mean_satterthwaite"]]))
    for comp, sd in (("item", design.sd_item), ("seed", design.sd_seed)):
        v = np.array([r[f"var_{comp}"] for r in rows])
        out[f"var_{comp}_true"] = sd * sd
        out[f"var_{comp}_mean"] = float(v.mean())
        out[f"var_{comp}_mcse"] = float(v.std(ddof=1) / np.sqrt(n))
        out[f"var_{comp}_bias_pct"] = float(100 * (v.mean() - sd * sd) / (sd * sd)) if sd > 0 else None
    out["singular_fraction"] = float(np.mean([r["singular"] for r in rows]))
    out["seconds_per_rep"] = float(np.mean([r["seconds"] for r in rows]))
    return out


def summarise() -> list[dict]:
    results = []
    for design in DESIGNS:
        path = os.path.join(OUT, f"{design.name}.jsonl")
        if os.path.exists(path):
            with open(path) as fh:
                rows = [json.loads(line) for line in fh if line.strip()]
        elif os.path.exists(path + ".gz"):  # the committed logs are gzipped
            with gzip.open(path + ".gz", "rt") as fh:
                rows = [json.loads(line) for line in fh if line.strip()]
        else:
            continue
        if len(rows) > 1:
            results.append(summarise_design(design, rows))
    with open(os.path.join(HERE, "results", "sim_glmer_df.json"), "w") as fh:
        json.dump(results, fh, indent=2)
    pd.DataFrame(results).to_csv(os.path.join(HERE, "results", "sim_glmer_df.csv"), index=False)
    with open(os.path.join(HERE, "results", "sim_glmer_df.md"), "w") as fh:
        fh.write(markdown(results))
    return results


def _pct(r: dict, key: str) -> str:
    return f"{100 * r[key]:.1f} ({100 * r[key + '_mcse']:.1f})" if key in r else "-"


def markdown(results: list[dict]) -> str:
    head = ("| design | items x seeds x systems | accuracy | var item / seed | reps | GLRT type I % | "
            "mean cov z % | mean cov Satt % | median Satt df | diff cov z % | diff cov Satt % | "
            "var item mean (bias %) | var seed mean (bias %) | singular % | mean cov Satt, non-singular % |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    lines = []
    for r in results:
        seed_bias = f"{r['var_seed_bias_pct']:+.0f}%" if r["var_seed_bias_pct"] is not None else "true 0"
        lines.append(
            f"| {r['name']} | {r['items']} x {r['seeds']} x {r['systems']} | {r['accuracy']:.2f}"
            + (" (effects " + ", ".join(f"{e:g}" for e in r["effects"]) + ")" if r["effects"] else "")
            + f" | {r['var_item_true']:.2f} / {r['var_seed_true']:.2f} | {r['n_rep']} | {_pct(r, 'type1')} | "
            f"{_pct(r, 'cover_mean_asymptotic')} | {_pct(r, 'cover_mean_satterthwaite')} | {r['median_df_mean']:.1f} | "
            f"{_pct(r, 'cover_diff_asymptotic')} | {_pct(r, 'cover_diff_satterthwaite')} | "
            f"{r['var_item_mean']:.3f} ({r['var_item_bias_pct']:+.0f}%) | "
            f"{r['var_seed_mean']:.3f} ({seed_bias}) | {100 * r['singular_fraction']:.0f} | "
            f"{_pct(r, 'cover_mean_satterthwaite_regular')} |")
    return head + "\n".join(lines) + ("\n\nMonte Carlo SEs in parentheses (percentage points; coverage SEs from the "
                                      "per-replicate means, as the intervals of one data set are correlated).\n")


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 1000)
    else:
        print(json.dumps(summarise(), indent=2))
