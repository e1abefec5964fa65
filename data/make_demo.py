#!/usr/bin/env python3
"""Generate mixeval's demo data: a simulated human evaluation of machine translation.

Run from the repository root (deterministic; rewrites the two files below)::

    python3 data/make_demo.py

Writes ``mixeval/data/demo_mt.csv`` (the data, long format) and
``mixeval/data/demo_mt_truth.json`` (the true parameter values). The model is
documented in ``data/README.md``; in lme4 syntax it is exactly::

    score ~ system * length_class + (1|item) + (1|system:seed) + (1|rater) + (1|item:rater)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

SEED = 20261122
N_ITEMS = 200
SYSTEMS = ("baseline", "system_a", "system_b")
N_SEEDS = 3  # training seeds per system (nested in system)
N_RATERS = 4
CLASSES = ("short", "typical", "very long")  # the book's cut points: length > 15, length > 55
FORMULA = "score ~ system * length_class + (1|item) + (1|system:seed) + (1|rater) + (1|item:rater)"

INTERCEPT = 60.0  # mean score of the baseline on a typical-length sentence
SYSTEM_EFFECT = {"baseline": 0.0, "system_a": 5.0, "system_b": 8.0}  # on typical sentences
CLASS_EFFECT = {"short": 6.0, "typical": 0.0, "very long": -10.0}  # for the baseline
INTERACTION = {  # extra effect of system x length class (reference: baseline, typical)
    ("system_a", "short"): -3.0,
    ("system_a", "very long"): 0.0,
    ("system_b", "short"): 0.0,
    ("system_b", "very long"): -9.0,
}
SD = {"item": 8.0, "system:seed": 1.5, "rater": 3.0, "item:rater": 4.0, "Residual": 6.0}  # lme4 group names
DECIMALS = 2  # scores are written with 2 decimals (rounding variance 0.01^2/12, negligible)


def length_class(src_length: np.ndarray) -> np.ndarray:
    """The book's length classes (Table 4.3): short <= 15 < typical <= 55 < very long."""
    codes = (src_length > 15).astype(int) + (src_length > 55).astype(int)
    return np.asarray(CLASSES, dtype=object)[codes]


def cell_mean(system: str, cls: str) -> float:
    """True mean score of ``system`` on sentences of length class ``cls``."""
    return INTERCEPT + SYSTEM_EFFECT[system] + CLASS_EFFECT[cls] + INTERACTION.get((system, cls), 0.0)


def simulate(seed: int = SEED) -> pd.DataFrame:
    """The demo data set (every draw comes from one seeded generator, in a fixed order)."""
    rng = np.random.default_rng(seed)
    src_length = np.clip(np.rint(rng.lognormal(np.log(28.0), 0.6, N_ITEMS)), 3, 120).astype(int)
    u_item = rng.normal(0.0, SD["item"], N_ITEMS)
    u_seed = rng.normal(0.0, SD["system:seed"], (len(SYSTEMS), N_SEEDS))
    u_rater = rng.normal(0.0, SD["rater"], N_RATERS)
    u_item_rater = rng.normal(0.0, SD["item:rater"], (N_ITEMS, N_RATERS))

    i, s, k, r = np.meshgrid(
        np.arange(N_ITEMS), np.arange(len(SYSTEMS)), np.arange(N_SEEDS), np.arange(N_RATERS), indexing="ij"
    )
    i, s, k, r = (a.ravel() for a in (i, s, k, r))
    classes = length_class(src_length)
    fixed = np.array([cell_mean(SYSTEMS[si], classes[ii]) for si, ii in zip(s, i)])
    noise = rng.normal(0.0, SD["Residual"], i.size)
    score = fixed + u_item[i] + u_seed[s, k] + u_rater[r] + u_item_rater[i, r] + noise
    return pd.DataFrame(
        {
            "item": [f"s{j + 1:03d}" for j in i],
            "system": np.asarray(SYSTEMS, dtype=object)[s],
            "seed": k + 1,
            "rater": [f"r{j + 1}" for j in r],
            "src_length": src_length[i],
            "length_class": classes[i],
            "score": np.round(score, DECIMALS),
        }
    )


def truth(data: pd.DataFrame) -> dict:
    """The true parameters, machine-readable (written as ``demo_mt_truth.json``)."""
    items = data.drop_duplicates("item")
    counts = items["length_class"].value_counts()
    class_share = {c: int(counts.get(c, 0)) / N_ITEMS for c in CLASSES}
    means = {f"{s}|{c}": cell_mean(s, c) for s in SYSTEMS for c in CLASSES}
    marginal = {s: sum(class_share[c] * cell_mean(s, c) for c in CLASSES) for s in SYSTEMS}
    contrasts_by_class = {
        c: {f"{a} - {b}": cell_mean(a, c) - cell_mean(b, c) for ai, a in enumerate(SYSTEMS) for b in SYSTEMS[ai + 1:]}
        for c in CLASSES
    }
    fixed = {"(Intercept)": INTERCEPT}
    fixed.update({f"system{s}": SYSTEM_EFFECT[s] for s in SYSTEMS[1:]})
    fixed.update({f"length_class{c}": CLASS_EFFECT[c] for c in CLASSES if c != "typical"})
    fixed.update({f"system{s}:length_class{c}": v for (s, c), v in INTERACTION.items()})
    return {
        "description": "simulated human evaluation (direct-assessment score, higher is better) of 3 MT systems",
        "generator": "data/make_demo.py",
        "random_seed": SEED,
        "formula": FORMULA,
        "reference_levels": {"system": "baseline", "length_class": "typical"},
        "design": {
            "n_items": N_ITEMS,
            "systems": list(SYSTEMS),
            "seeds_per_system": N_SEEDS,
            "seed_nested_in_system": True,
            "n_raters": N_RATERS,
            "rows": int(len(data)),
            "length_class_rule": "short: src_length <= 15; typical: 15 < src_length <= 55; very long: > 55",
            "items_per_length_class": {c: int(counts.get(c, 0)) for c in CLASSES},
        },
        "fixed_effects": fixed,
        "cell_means": means,
        "marginal_means_over_sample_items": marginal,
        "pairwise_differences_by_length_class": contrasts_by_class,
        "variance_components": {k: v**2 for k, v in SD.items()},
        "standard_deviations": dict(SD),
        "score_decimals": DECIMALS,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = Path(__file__).resolve().parents[1]
    parser.add_argument("--out-dir", type=Path, default=root / "mixeval" / "data")
    args = parser.parse_args(argv)
    data = simulate()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    data.to_csv(args.out_dir / "demo_mt.csv", index=False, float_format=f"%.{DECIMALS}f", lineterminator="\n")
    with open(args.out_dir / "demo_mt_truth.json", "w", encoding="utf-8") as handle:
        json.dump(truth(data), handle, indent=2)
        handle.write("\n")
    print(f"wrote {len(data)} rows to {args.out_dir / 'demo_mt.csv'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
