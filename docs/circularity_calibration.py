"""Calibration study of the circularity verdict: false-positive rate and power on generated data.

Generates datasets with a known answer (``mixeval.validity._simulate``): circular families whose
label is a deterministic rule (``step`` of one feature, ``max`` of two step scores as the kidney
SOFA of book Table 2.7, ``and`` of two thresholds, a 0/1 label fitted with the binomial family),
each with correlated distractors, and non-circular families whose label is a noisy function of
many features (``additive``: four smooth effects and 10% noise; ``latent``: many mostly
unmeasured features; ``logistic``: a noisy 0/1 label). Each replicate runs
``circularity_test`` once (defaults, top 5 candidates) and stores the decisive numbers; verdicts
under other thresholds are then recomputed from those numbers without refitting, so the table of
alternative thresholds costs nothing extra.

Power counts a circular verdict on exactly the defining set; the false-positive rate counts any
circular verdict on a non-circular family. Monte-Carlo error: the standard error
``sqrt(p (1 - p) / R)`` and the exact (Clopper-Pearson) 95% interval.

Usage::

    python3 docs/circularity_calibration.py [--scale 1.0] [--out docs]

writes ``docs/circularity_calibration_runs.csv`` (one row per replicate) and
``docs/circularity_calibration.md`` (the tables). ``--scale`` multiplies the replicate counts.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import beta

from mixeval.validity import circularity_test
from mixeval.validity._simulate import CIRCULAR_SETS, simulate

# (family, rows, replicates): the Gaussian families are cheap, the binomial ones (PIRLS per fit) are not
DESIGN = [
    *[(f, 2000, 8) for f in ("step", "max", "additive", "latent")],
    *[(f, 5000, 8) for f in ("step", "max", "additive", "latent")],
    *[(f, 20000, 20) for f in ("step", "max", "additive", "latent")],
    *[(f, 20000, 4) for f in ("and", "logistic")],
]


def run_one(family: str, n: int, seed: int) -> dict:
    d = simulate(family, n, seed=seed)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = circularity_test(d, "y", family=d.attrs["family"], show_progress=False)
    others = [c for c in r.candidates if c not in r.best]
    old_null = all(r.nullification[c] <= 0.2 or r.share[c] <= 0.025 for c in others) or r.best_model.separated
    return {
        "family": family, "n": n, "seed": seed, "truth": ",".join(CIRCULAR_SETS[family]),
        "best": ",".join(sorted(r.best)), "correct_set": set(r.best) == set(CIRCULAR_SETS[family]),
        "has_others": bool(others), "d2": r.d2, "determinism": r.determinism, "added": r.added,
        "explained_alone": r.explained_alone, "added_ratio": r.added_ratio,
        "max_sd_ratio": max(r.nullification.values()) if others else np.nan,
        "old_rule": bool(r.d2 >= 0.9 and others and old_null), "is_circular": r.is_circular,
        "k_raised": ",".join(f for f, v in r.k.items() if v > 10), "seconds": time.perf_counter() - t0,
    }


def verdicts(runs: pd.DataFrame, d2: float, det: float, gain: float, negligible: float = 0.001) -> pd.Series:
    """The verdict of every replicate under the given thresholds, from the stored numbers."""
    nullified = runs["added"] <= np.maximum(gain * runs["explained_alone"].clip(lower=0), negligible)
    return (runs["d2"] >= d2) & (runs["determinism"] >= det) & runs["has_others"] & nullified


def rate_table(runs: pd.DataFrame, positive: pd.Series) -> pd.DataFrame:
    rows = []
    for (family, n), g in runs.groupby(["family", "n"], sort=False):
        circular = bool(CIRCULAR_SETS[family])
        hits = positive[g.index] & (g["correct_set"] if circular else True)
        k, r = int(hits.sum()), len(g)
        p = k / r
        lo = beta.ppf(0.025, k, r - k + 1) if k > 0 else 0.0
        hi = beta.ppf(0.975, k + 1, r - k) if k < r else 1.0
        rows.append({"family": family, "kind": "circular" if circular else "non-circular", "rows": n, "R": r,
                     "measure": "power" if circular else "false-positive rate", "rate": p,
                     "mc_se": np.sqrt(p * (1 - p) / r), "lower": lo, "upper": hi})
    return pd.DataFrame(rows)


def misses(runs: pd.DataFrame) -> str:
    circ = runs[runs["truth"].fillna("") != ""]
    bad = circ[~(circ["is_circular"] & circ["correct_set"])]
    if bad.empty:
        return "none."
    parts = [f"{r.family} at {r.n:,} rows: {'circular on {' + r.best + '}' if r.is_circular else 'not circular'}"
             for r in bad.itertuples(index=False)]
    return ("; ".join(parts) + ". A verdict on a superset of the rule's features happens when a distractor "
            "correlated with both measurements improves the additive fit of max() by more than `d2_tolerance` "
            "(0.01) in small samples.")


def method_text(runs: pd.DataFrame) -> list[str]:
    """What was simulated and why the defaults are what they are, with the numbers of this run."""

    def rng(family: str, col: str) -> str:
        v = runs.loc[runs["family"] == family, col].dropna()
        return f"{v.min():.3f}-{v.max():.3f}" if len(v) else "n/a"

    sd_add = runs.loc[runs["family"] == "additive", "determinism"]
    margin = (0.95 - sd_add.max()) / sd_add.std() if len(sd_add) > 1 else float("nan")
    return [
        "## What was simulated", "",
        "Features: two skewed measurements `u`, `v` (lognormal, like lab values) and four distractors: `d1` "
        "correlated with `u` (r about 0.7), `d2` with `v` (0.6), `d3` with both (0.4 each), `d4` independent. "
        "Circular families: `step` (a 0-4 step score of `u`), `max` (the larger of a step score of `u` and a "
        "score of low `v`, the kidney SOFA rule of book Table 2.7), `and` (`u` and `v` above thresholds, 0/1, "
        "binomial family). Non-circular families: `additive` (smooth effects of `u`, `v`, `d1`, `d2`, noise 10% "
        "of the variance), `latent` (effects of `u`, `v`, `d1` and six unmeasured features), `logistic` (a "
        "noisy 0/1 label from four features, binomial family). Power counts a circular verdict on exactly "
        "the defining set; the false-positive rate any circular verdict.", "",
        "## Why these defaults", "",
        f"* An additive GAM cannot represent a maximum: the `max` family's D^2 stays at {rng('max', 'd2')} even "
        "with the k-check's 40 knots, below the noisy `additive` family's "
        f"{rng('additive', 'd2')}. No D^2 threshold separates them (at 0.9 the power on `max` is 0 and the "
        "former rule still passes noisy `additive` datasets). D^2 >= 0.8 only asks that the additive "
        "reconstruction explains most of the label.",
        f"* The determinism (share of the label's variance that is a function of the selected set, nearest-"
        f"neighbour estimate) separates them: circular families {rng('step', 'determinism')} (step), "
        f"{rng('max', 'determinism')} (max), {rng('and', 'determinism')} (and); the 10%-noise `additive` family "
        f"{rng('additive', 'determinism')}, {margin:.0f} replicate standard deviations below 0.95. The threshold "
        "0.95 is a definition (at most 5% of the label's variance may be noise for a 'deterministic rule'); "
        "the study shows it has power on rules that additivity cannot represent and no false positives at "
        "10% noise. A label that is a function of a few features up to less than 5% noise is, by that "
        "definition, circular.",
        f"* Nullification: what the other candidates add once the set is in, relative to what they explain "
        f"alone, was {rng('max', 'added_ratio')} on `max` (the largest among the circular families: the "
        "distractor `d3` follows part of the additive misfit) while its sd ratio stayed at "
        f"{rng('max', 'max_sd_ratio')}: the former rule (D^2 >= 0.9, every sd ratio <= 0.2) refuses every `max` dataset. The "
        "threshold 0.1 leaves a margin of 5 over the largest circular value; thresholds 0.05-0.2 give the "
        "same rates here (the table below).",
        f"* Misses on circular families: {misses(runs)}",
        "* Monte-Carlo error: with R replicates and no failures the exact 95% interval of a rate of 1 (or 0) "
        "reaches down (up) to 1 - 0.025^(1/R) (0.17 for R = 20): the counts show the verdicts, the margins "
        "above say how far the decisive numbers are from the thresholds.", "",
    ]


def markdown(runs: pd.DataFrame) -> str:
    out = ["# Calibration of the circularity verdict", "",
           "Generated by `python3 docs/circularity_calibration.py` (one run; raw numbers in "
           "`docs/circularity_calibration_runs.csv`). Each replicate is one `circularity_test` with the "
           "defaults (top 5 candidates, k = 10 with the k-check up to 40) on a dataset of "
           "`mixeval.validity._simulate`. The run took about 30 minutes of wall time (two passes, the second resuming) on a 2-core machine shared with "
           "other jobs (load 6-8; the binomial `and` replicates about 2 minutes each), more than the 10 minutes "
           "planned: hence the small R of the binomial families.", ""]
    out += method_text(runs)
    default = rate_table(runs, runs["is_circular"])
    out += ["## Defaults (d2_threshold 0.8, determinism_threshold 0.95, gain_threshold 0.1)", "",
            "| family | kind | rows | R | measure | rate | MC s.e. | 95% CI |", "| --- | --- | ---: | ---: | --- | ---: | ---: | --- |"]
    for r in default.itertuples(index=False):
        out.append(f"| {r.family} | {r.kind} | {r.rows:,} | {r.R} | {r.measure} | {r.rate:.2f} | {r.mc_se:.3f} | "
                   f"[{r.lower:.2f}, {r.upper:.2f}] |")
    out += ["", "## The decisive numbers per family and size (median [min, max] over replicates)", "",
            "| family | rows | D^2 | determinism | added / alone | max sd ratio | seconds |", "| --- | ---: | --- | --- | --- | --- | ---: |"]

    def span(s: pd.Series) -> str:
        s = s.dropna()
        return "n/a" if s.empty else f"{s.median():.3f} [{s.min():.3f}, {s.max():.3f}]"

    for (family, n), g in runs.groupby(["family", "n"], sort=False):
        out.append(f"| {family} | {n:,} | {span(g['d2'])} | {span(g['determinism'])} | {span(g['added_ratio'])} | "
                   f"{span(g['max_sd_ratio'])} | {g['seconds'].median():.1f} |")
    out += ["", "## Alternative thresholds (recomputed from the stored numbers)", "",
            "Worst power over the circular families and worst false-positive rate over the non-circular "
            "families, at 20,000 rows and over all sizes.", "",
            "| d2_threshold | determinism_threshold | gain_threshold | min power (20k) | max FPR (20k) | min power (all) | max FPR (all) |",
            "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for d2 in (0.7, 0.8, 0.9):
        for det in (0.9, 0.95, 0.98):
            for gain in (0.05, 0.1, 0.2):
                t = rate_table(runs, verdicts(runs, d2, det, gain))
                big = t[t["rows"] == 20000]
                pw = lambda x: x[x["kind"] == "circular"]["rate"].min()  # noqa: E731
                fp = lambda x: x[x["kind"] == "non-circular"]["rate"].max()  # noqa: E731
                out.append(f"| {d2} | {det} | {gain} | {pw(big):.2f} | {fp(big):.2f} | {pw(t):.2f} | {fp(t):.2f} |")
    old = rate_table(runs, runs["old_rule"])
    out += ["", "## The former rule (D^2 >= 0.9 and every sd ratio <= 0.2, or share <= 0.025)", "",
            "Evaluated on the same fits (after the k-check, so its D^2 are the larger-basis ones).", "",
            "| family | rows | measure | rate |", "| --- | ---: | --- | ---: |"]
    for r in old.itertuples(index=False):
        out.append(f"| {r.family} | {r.rows:,} | {r.measure} | {r.rate:.2f} |")
    out.append("")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent))
    ap.add_argument("--resume", action="store_true", help="keep the replicates already in the runs file")
    ap.add_argument("--report-only", action="store_true", help="rewrite the markdown from the runs file")
    args = ap.parse_args()
    out = Path(args.out)
    runs_path = out / "circularity_calibration_runs.csv"
    rows = pd.read_csv(runs_path).to_dict("records") if (args.resume or args.report_only) and runs_path.exists() else []
    done = {(r["family"], r["n"], r["seed"]) for r in rows}
    t0 = time.perf_counter()
    for family, n, reps in [] if args.report_only else DESIGN:
        for seed in range(max(1, int(round(reps * args.scale)))):
            if (family, n, 1000 * n + seed) in done:
                continue
            rows.append(run_one(family, n, 1000 * n + seed))
            pd.DataFrame(rows).to_csv(runs_path, index=False)  # partial results survive an interruption
        print(f"{family} {n}: done ({time.perf_counter() - t0:.0f} s)", flush=True)
    runs = pd.DataFrame(rows)
    (out / "circularity_calibration.md").write_text(markdown(runs))
    print(markdown(runs))


if __name__ == "__main__":
    main()
