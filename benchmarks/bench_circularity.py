"""Benchmark: the circularity powerset search (31 GAMs over the top-5 candidates) on the liver data.

Side by side in one run: mixeval (this package), mgcv via Rscript (``benchmarks/mgcv_circularity.R``,
same cubic regression spline basis and mgcv's default thin plate basis) and pygam. Prints a markdown
table with times and ratios, the largest D^2 difference to mgcv, and mixeval's cost at several row
counts (linear in rows).

Usage::

    python3 benchmarks/bench_circularity.py [--data DIR] [--target target] [--quick]

``--quick`` times pygam on 6 of the 31 models (the 5 single-feature fits and the full model) and
extrapolates to 31 by the mean time per fit; without it pygam fits all 31 (several minutes).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import subprocess
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from mixeval.validity import circularity_test

LABELS = ["target", "sofa_circ", "sofa_nocirc"]
HERE = Path(__file__).resolve().parent


def time_mixeval(data: pd.DataFrame, target: str, repeats: int = 3, k_check: bool = False) -> tuple[float, object]:
    """Best of ``repeats``: the whole test (search, verdict), at k = 10 or with the k-check (k up to 40)."""
    best = np.inf
    res = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = circularity_test(data, target, exclude=[l for l in LABELS if l != target], top=5, k=10,
                                   k_check=k_check, show_progress=False)
        best = min(best, time.perf_counter() - t0)
    return best, res


def time_mgcv(path: Path, target: str, feats: list[str], basis: str, rows: int = 0) -> dict | None:
    if shutil.which("Rscript") is None:
        return None
    t0 = time.perf_counter()
    out = subprocess.run(
        ["Rscript", str(HERE / "mgcv_circularity.R"), str(path), target, basis, str(rows), ",".join(feats)],
        capture_output=True, text=True, check=True,
    )
    wall = time.perf_counter() - t0
    info = json.loads(out.stdout.strip().splitlines()[-1])
    info["wall"] = wall
    return info


def time_pygam(data: pd.DataFrame, target: str, feats: list[str], quick: bool) -> tuple[float, int] | None:
    try:
        from pygam import LinearGAM, s
    except ImportError:
        return None
    subsets = [c for r in range(1, len(feats) + 1) for c in itertools.combinations(range(len(feats)), r)]
    if quick:
        subsets = [c for c in subsets if len(c) in (1, len(feats))]
    X = data[feats].to_numpy()
    y = data[target].to_numpy(dtype=float)
    t0 = time.perf_counter()
    for c in subsets:
        terms = s(c[0], n_splines=10)
        for j in c[1:]:
            terms = terms + s(j, n_splines=10)
        LinearGAM(terms).fit(X, y)
    el = time.perf_counter() - t0
    return el, len(subsets)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.environ.get("MIXEVAL_DATA", str(HERE.parent.parent / "shared" / "bookdata")))
    ap.add_argument("--target", default="target")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    path = Path(args.data) / "liver_sofa_test.csv.gz"
    data = pd.read_csv(path)
    n = len(data)

    t_me, res = time_mixeval(data, args.target)
    t_kc, res_kc = time_mixeval(data, args.target, k_check=True)
    feats = list(res.candidates)
    mg_cr = time_mgcv(path, args.target, feats, "cr")
    mg_tp = time_mgcv(path, args.target, feats, "tp")
    pg = time_pygam(data, args.target, feats, args.quick)

    rows = [("mixeval (cr, k=10, GCV)", t_me, 31),
            (f"mixeval with the k-check (k of {', '.join(f for f, v in res_kc.k.items() if v > 10) or 'none'} "
             f"raised to {max(res_kc.k.values())}; two searches)", t_kc, 62)]
    if mg_cr:
        rows.append(("mgcv gam(bs='cr', k=10), GCV", mg_cr["seconds"], mg_cr["n_models"]))
    if mg_tp:
        rows.append(("mgcv gam(s(x)) default tp, GCV", mg_tp["seconds"], mg_tp["n_models"]))
    if pg:
        el, m = pg
        label = "pygam LinearGAM(n_splines=10), fixed lam" + (f" ({m} fits, x31/{m})" if m < 31 else "")
        rows.append((label, el * 31 / m, 31))

    print(f"### Circularity search on liver_sofa_test ({n:,} rows, target `{args.target}`, top 5: {', '.join(feats)})\n")
    print("| implementation | seconds for 31 GAMs | ratio to mixeval |")
    print("| --- | ---: | ---: |")
    for name, sec, _ in rows:
        print(f"| {name} | {sec:.2f} | {sec / t_me:.1f}x |")
    if mg_cr:
        ref = {tuple(m["features"]) if isinstance(m["features"], list) else (m["features"],): m["d2"] for m in mg_cr["models"]}
        ours = dict(zip(res.models["features"], res.models["d2"]))
        diffs = [abs(ours[tuple(sorted(k, key=feats.index))] - v) for k, v in ref.items()]
        print(f"\nmax |D^2(mixeval) - D^2(mgcv cr)| over the 31 models: {max(diffs):.2e}")

    print("\n### mixeval cost by number of rows (rows replicated)\n")
    print("| rows | seconds | seconds per 100k rows |")
    print("| ---: | ---: | ---: |")
    for factor in (0.25, 0.5, 1, 2, 4):
        m = int(n * factor)
        d = data.sample(n=m, replace=factor > 1, random_state=0).reset_index(drop=True)
        t, _ = time_mixeval(d, args.target, repeats=2)
        print(f"| {m:,} | {t:.2f} | {t / m * 1e5:.2f} |")


if __name__ == "__main__":
    main()
