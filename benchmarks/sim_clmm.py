"""Coverage of clmm's Wald, Wald-t (Satterthwaite), profile and bootstrap intervals and the type I error of its likelihood-ratio tests on rating designs.

Usage:
    nice -n 10 python3 benchmarks/sim_clmm.py --reps 400 --link logit  [--items 30 --raters 5]
    nice -n 10 python3 benchmarks/sim_clmm.py --reps 400 --link probit
    nice -n 10 python3 benchmarks/sim_clmm.py --reps 40 --link logit --profile-reps 40 --tag profile
    nice -n 10 python3 benchmarks/sim_clmm.py --reps 200 --link logit --seed 2 --tag s2   # more replicates, pooled
    nice -n 19 python3 benchmarks/sim_clmm.py --reps 200 --methods wald,profile --no-tests --seed 11 --tag prof
    nice -n 19 python3 benchmarks/sim_clmm.py --reps 300 --methods wald,waldt --no-tests --seed 12 --tag waldt
    nice -n 19 python3 benchmarks/sim_clmm.py --reps 60 --methods wald,boot --n-resamples 199 --no-tests --seed 13 \
        --tag boot
    nice -n 10 python3 benchmarks/sim_clmm.py --summarise    # pooled summaries (the numbers of docs/method_notes.md)

Design: items x systems x raters, fully crossed (every rater rates every item-system pair) on a 5-point scale, true
thresholds (-2, -0.7, 0.6, 2) on the logit scale (divided by 1.7 for probit), system effects (A 0, B 0.5, C 0.5;
/1.7 for probit), item SD 1.0 and rater SD 0.55 (/1.7 for probit), and no rater x system interaction (its variance
is 0). Per replicate:

- ``rating ~ system + (1|item) + (1|rater)``: 95% intervals of the thresholds, the system effects and the item and
  rater SDs by each of ``--methods``: ``wald`` (SDs on the log scale), ``profile`` (ordinal's signed root deviance,
  every other parameter re-optimised; also on the first ``--profile-reps`` replicates), ``boot`` (parametric
  bootstrap percentile, ``--n-resamples``) and ``waldt`` (thresholds and effects only: the Wald half-width with the
  t quantile on the Satterthwaite df of ``mixeval.mixed._clmm_ddf``, the df recorded as ``df:<name>``);
- unless ``--no-tests``: GLRT of a system effect at 0: B = C (``rating ~ bc + ...`` nested, df 1);
- unless ``--no-tests``: GLRT of a variance at 0: ``+ (1|rater:system)`` against the model without it, p-value of the 50:50 mixture of
  chi2(0) and chi2(1) (Self & Liang), and the naive chi2(1) p-value.

Each run appends one JSON line per replicate to benchmarks/results/sim_clmm_<link>_<items>x3x<raters>.jsonl and
writes the summary (rates with binomial Monte Carlo SEs; each method's paired coverage difference from Wald on the
same replicates) to the .json beside it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mixeval.mixed import clmm, compare  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
CUTS = np.array([-2.0, -0.7, 0.6, 2.0])
EFFECTS = {"A": 0.0, "B": 0.5, "C": 0.5}
SD = {"item": 1.0, "rater": 0.55}
PROBIT_SCALE = 1.7  # logistic -> normal latent scale (the logistic's SD is 1.81; 1.7 matches the central slopes)


def truth(link: str) -> dict[str, float]:
    s = 1.0 if link == "logit" else PROBIT_SCALE
    out = {f"{a}|{a + 1}": c / s for a, c in zip(range(1, 5), CUTS)}
    out.update({"systemB": EFFECTS["B"] / s, "systemC": EFFECTS["C"] / s,
                "sd_(Intercept)|item": SD["item"] / s, "sd_(Intercept)|rater": SD["rater"] / s})
    return out


def simulate(rng: np.random.Generator, link: str, n_items: int, n_raters: int) -> pd.DataFrame:
    s = 1.0 if link == "logit" else PROBIT_SCALE
    grid = pd.MultiIndex.from_product([range(n_items), list(EFFECTS), range(n_raters)],
                                      names=["item", "system", "rater"]).to_frame(index=False)
    eta = (grid.system.map(EFFECTS).to_numpy() + rng.normal(0, SD["item"], n_items)[grid.item]
           + rng.normal(0, SD["rater"], n_raters)[grid.rater]) / s
    noise = rng.logistic(size=len(grid)) if link == "logit" else rng.standard_normal(len(grid))
    grid["rating"] = np.searchsorted(CUTS / s, eta + noise) + 1
    grid["item"] = "i" + grid.item.astype(str)
    grid["rater"] = "r" + grid.rater.astype(str)
    grid["bc"] = np.where(grid.system == "A", "A", "BC")
    return grid


def waldt_table(fit, level: float = 0.95) -> pd.DataFrame:
    """Wald t intervals of the thresholds and location effects on the Satterthwaite df of ``_clmm_ddf``."""
    from scipy import stats

    from mixeval.mixed._clmm_ddf import clmm_satterthwaite_df

    wald = fit.confint(method="wald", progress=False).table
    df = clmm_satterthwaite_df(fit)
    est = wald.loc[df.index, "estimate"]
    half = (wald.loc[df.index, "upper"] - wald.loc[df.index, "lower"]) / 2 / stats.norm.ppf(0.5 + level / 2)
    q = stats.t.ppf(0.5 + level / 2, df.to_numpy())
    return pd.DataFrame({"estimate": est, "lower": est - q * half, "upper": est + q * half, "df": df})


def interval_table(fit, method: str, n_resamples: int, seed: int) -> pd.DataFrame:
    if method == "waldt":
        return waldt_table(fit)
    if method == "boot":
        return fit.confint(method="boot", n_resamples=n_resamples, random_state=seed, progress=False).table
    return fit.confint(method=method, progress=False).table


def replicate(rng: np.random.Generator, link: str, n_items: int, n_raters: int, methods: list[str], *,
              tests: bool = True, n_resamples: int = 199) -> dict:
    df = simulate(rng, link, n_items, n_raters)
    true = truth(link)
    out: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.process_time()
        full = clmm("rating ~ system + (1|item) + (1|rater)", df, link=link)
        out["cpu_fit"] = time.process_time() - t0
        out["converged"] = bool(full.converged)
        out["n_categories"] = int(np.unique(df.rating).size)
        for method in methods:
            t0 = time.process_time()
            table = interval_table(full, method, n_resamples, int(rng.integers(2**31)))
            out[f"cpu_{method}"] = time.process_time() - t0
            for name, value in true.items():
                if name in table.index:
                    lo, hi = float(table.loc[name, "lower"]), float(table.loc[name, "upper"])
                    out[f"{method}:{name}"] = bool(lo <= value <= hi) if np.isfinite(lo + hi) else None
                    if "df" in table:
                        out[f"df:{name}"] = float(table.loc[name, "df"]) if name in table.index else None
        if not tests:
            return out
        null = clmm("rating ~ bc + (1|item) + (1|rater)", df, link=link)
        extra = clmm("rating ~ system + (1|item) + (1|rater) + (1|rater:system)", df, link=link)
        out["converged"] = bool(full.converged and null.converged and extra.converged)
        out["p_system_bc"] = compare(full, null).pvalue
        res = compare(extra, full)
        out["p_var0_naive"] = res.pvalue
        out["p_var0_mixture"] = res.details["pvalue_boundary"]
        out["var0_singular"] = bool(extra.variances["rater:system"] < 1e-8)
    return out


def summarise(rows: pd.DataFrame) -> dict:
    def rate(x: pd.Series) -> dict:
        x = x.dropna().astype(float)
        p = float(x.mean()) if len(x) else float("nan")
        return {"rate": p, "mc_se": float(np.sqrt(p * (1 - p) / max(len(x), 1))), "n": int(len(x))}

    out = {"reps": int(len(rows)), "converged": float(rows.converged.mean()),
           "cpu_seconds_full_fits_and_intervals": float(rows.filter(like="cpu_").sum().sum())}
    out["coverage"] = {c: rate(rows[c]) for c in rows.columns if ":" in c and not c.startswith("df:")}
    paired = {}  # the same replicates: coverage of a method minus Wald's, with the SE of the paired difference
    for c in out["coverage"]:
        method, name = c.split(":", 1)
        if method != "wald" and f"wald:{name}" in rows:
            both = rows[[c, f"wald:{name}"]].dropna().astype(float)
            d = both[c] - both[f"wald:{name}"]
            paired[c] = {"minus_wald": float(d.mean()), "mc_se": float(d.std(ddof=1) / np.sqrt(max(len(d), 1))),
                         "n": int(len(d))}
    if paired:
        out["coverage_minus_wald_paired"] = paired
    out["typeI_0.05"] = {c[2:]: rate(rows[c] < 0.05) for c in rows.columns if c.startswith("p_")}
    if "var0_singular" in rows:
        out["var0_estimated_at_0"] = rate(rows["var0_singular"])
    dfs = rows.filter(like="df:")
    if len(dfs.columns):
        out["satterthwaite_df_quantiles_10_50_90"] = {
            c[3:]: [float(v) for v in dfs[c].quantile([0.1, 0.5, 0.9])] for c in dfs.columns}
    return out


def _path(link: str, items: int, raters: int, tag: str = "") -> Path:
    return RESULTS / f"sim_clmm_{link}_{items}x3x{raters}{'_' + tag if tag else ''}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--link", choices=["logit", "probit"], default="logit")
    ap.add_argument("--items", type=int, default=30)
    ap.add_argument("--raters", type=int, default=5)
    ap.add_argument("--profile-reps", type=int, default=0)
    ap.add_argument("--methods", default="wald",
                    help="comma-separated intervals on every replicate: wald, profile, boot (parametric bootstrap "
                         "percentile), waldt (Wald t on the Satterthwaite df of mixeval.mixed._clmm_ddf)")
    ap.add_argument("--n-resamples", type=int, default=199, help="bootstrap resamples per replicate")
    ap.add_argument("--no-tests", action="store_true", help="intervals only: skip the two GLRT fits")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tag", default="", help="suffix of the output files (e.g. 'profile' for a profile run)")
    ap.add_argument("--summarise", action="store_true", help="summarise the existing .jsonl files only")
    args = ap.parse_args()
    if args.summarise:  # runs of one link and design with other seeds (tags s2, s3, ...) are pooled
        groups: dict[str, list[Path]] = {}
        for f in sorted(RESULTS.glob("sim_clmm_*x3x*.jsonl")):
            stem = re.sub(r"_s\d+$", "", f.stem)
            groups.setdefault(stem, []).append(f)
        for stem, files in groups.items():
            s = summarise(pd.concat([pd.read_json(f, lines=True) for f in files], ignore_index=True))
            s["files"] = [f.name for f in files]
            (RESULTS / f"{stem}.json").write_text(json.dumps(s, indent=2))
            print(stem, json.dumps(s, indent=1))
        return
    bad = set(args.methods.split(",")) - {"wald", "profile", "boot", "waldt"}
    if bad:
        ap.error(f"--methods: unknown {sorted(bad)}; use wald, profile, boot, waldt")
    rng = np.random.default_rng([args.seed, args.items, args.raters, ["logit", "probit"].index(args.link),
                                 len(args.tag)])
    path = _path(args.link, args.items, args.raters, args.tag)
    t0 = time.time()
    with path.with_suffix(".jsonl").open("w") as fh:
        for r in range(args.reps):
            methods = args.methods.split(",") + (["profile"] if r < args.profile_reps else [])
            row = replicate(rng, args.link, args.items, args.raters, methods, tests=not args.no_tests,
                            n_resamples=args.n_resamples)
            fh.write(json.dumps(row) + "\n")
            fh.flush()
            if (r + 1) % 50 == 0:
                print(r + 1, f"{time.time() - t0:.0f}s", flush=True)
    s = summarise(pd.read_json(path.with_suffix(".jsonl"), lines=True))
    s["wall_seconds"] = time.time() - t0
    path.with_suffix(".json").write_text(json.dumps(s, indent=2))
    print(json.dumps(s, indent=1))


if __name__ == "__main__":
    main()
