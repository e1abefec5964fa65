"""Coverage of the paired-difference intervals of ``mixeval.logs.compare_logs`` (simulation, known truth).

Scenario ``clusters``: 2 models on questions drawn in passages (40 passages x 5 questions); the models'
difference varies by passage (a passage x model effect), so questions of a passage are correlated. The
naive paired SE treats the 200 questions as independent and undercovers; the cluster-robust (CR1, CR2)
and mixed-model intervals should cover near 95%.

Scenario ``repeats``: 2 models on 150 questions, 5 repeats (epochs/seeds) each; the difference varies by
question (a question x model effect). Averaging the repeats within question before the paired analysis
is what the mixed model of the repeat-level rows ``y ~ a + (1|i) + (1|i:m)`` (``mixeval.lmer``) does: its
estimate and SE coincide on this balanced design with those of the item means (``compare_logs``); treating every repeat as a separate question (the naive SE on the repeat-level rows) undercovers.

    nice -n 10 python benchmarks/sim_logs_clustered.py [--reps 200] [--out benchmarks/results/sim_logs_clustered.json]
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from mixeval import lmer
from mixeval.logs import compare_logs

DELTA = 0.3  # true difference model a - model b


def clusters_data(rng: np.random.Generator, n_passages: int = 40, per: int = 5) -> pd.DataFrame:
    passage = np.repeat(np.arange(n_passages), per)
    n = len(passage)
    item = rng.normal(0, 1.0, n) + rng.normal(0, 1.0, n_passages)[passage]
    frames = []
    for m, mu in (("a", DELTA), ("b", 0.0)):
        y = mu + item + rng.normal(0, 0.6, n_passages)[passage] + rng.normal(0, 0.5, n)
        frames.append(pd.DataFrame({"model": m, "item": np.arange(n), "passage": passage, "y": y}))
    return pd.concat(frames, ignore_index=True)


def repeats_data(rng: np.random.Generator, n_items: int = 150, repeats: int = 5) -> pd.DataFrame:
    item = rng.normal(0, 1.0, n_items)
    frames = []
    for m, mu in (("a", DELTA), ("b", 0.0)):
        own = rng.normal(0, 0.5, n_items)
        for r in range(repeats):
            y = mu + item + own + rng.normal(0, 1.0, n_items)
            frames.append(pd.DataFrame({"model": m, "item": np.arange(n_items), "repeat": r, "y": y}))
    return pd.concat(frames, ignore_index=True)


def covers(lower: float, upper: float) -> bool:
    return bool(lower <= DELTA <= upper)


def one_clusters(rng: np.random.Generator, mixed: bool) -> dict[str, float]:
    data = clusters_data(rng)
    row = compare_logs(data, metric="y", cluster="passage", mixed=mixed, adjust="none").pairs.iloc[0]
    out = {"naive": covers(row.lower_naive, row.upper_naive), "cr1": covers(row.lower_cluster, row.upper_cluster),
           "cr2": covers(row.lower, row.upper)}
    if mixed:
        out["mixed"] = covers(row.lower_mixed, row.upper_mixed)
    return out


def one_repeats(rng: np.random.Generator, mixed: bool) -> dict[str, float]:
    data = repeats_data(rng)
    row = compare_logs(data, metric="y", mixed=mixed, adjust="none").pairs.iloc[0]
    # the mistake: every repeat a separate paired observation (repeat r of a against repeat r of b)
    wide = data.pivot_table(index=["item", "repeat"], columns="model", values="y")
    d = (wide["a"] - wide["b"]).to_numpy()
    se_rows = d.std(ddof=1) / np.sqrt(len(d))
    q = stats.norm.ppf(0.975)
    out = {"item_means": covers(row.lower, row.upper),
           "repeats_as_items": covers(d.mean() - q * se_rows, d.mean() + q * se_rows)}
    if mixed:
        # compare_logs' mixed model works on the item means; the long-data model it stands for:
        frame = pd.DataFrame({"y": data["y"], "a": (data["model"] == "a").astype(float), "i": data["item"].astype(str),
                              "m": data["model"]})
        long = lmer("y ~ a + (1|i) + (1|i:m)", frame)
        out["mixed"] = covers(row.lower_mixed, row.upper_mixed)
        out["mixed_minus_paired_estimate"] = abs(float(long.fixef["a"]) - row.estimate)
        out["mixed_over_paired_se"] = float(np.sqrt(long.vcov.loc["a", "a"])) / row.se_mixed
    return out


def run(reps: int, seed: int = 1, mixed: bool = True) -> dict:
    rng = np.random.default_rng(seed)
    result = {"reps": reps, "seed": seed, "delta": DELTA, "level": 0.95}
    for name, one in (("clusters", one_clusters), ("repeats", one_repeats)):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rows = pd.DataFrame([one(rng, mixed) for _ in range(reps)])
        summary = {c: float(rows[c].mean()) for c in rows.columns if not c.startswith("mixed_")}
        for c in [c for c in rows.columns if c.startswith("mixed_")]:
            summary[c + "_max" if "minus" in c else c + "_median"] = float(
                rows[c].max() if "minus" in c else rows[c].median())
        summary["seconds"] = time.perf_counter() - start
        result[name] = summary
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default="benchmarks/results/sim_logs_clustered.json")
    args = parser.parse_args()
    result = run(args.reps, args.seed)
    Path(args.out).write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
