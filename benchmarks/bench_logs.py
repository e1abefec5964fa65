"""Speed of reading and comparing evaluation logs: 50 models x 14,000 questions x 5 repeats (3.5M rows).

Timings in one run (wall and CPU seconds of this process):

1. ``compare_logs`` on the 3.5M-row long format read from Parquet (``read_logs``), clustered by passage:
   all 1,225 pairs, leaderboard with rank sets (10,000 max-|t| draws), with the mixed model of every pair
   (``mixed=True``, the default) and without it (``mixed=False``).
2. With ``--lm-eval-dir``: the same scale read from the harness's own format, lm-evaluation-harness 0.4
   ``--log_samples`` output written by ``make_lm_eval_logs.py`` (MMLU layout: 57 subject tasks, 5 runs of
   each per model: 14,250 files of full records), ``read_lm_eval`` then ``compare_logs`` clustered by
   subject with the mixed model.
3. The competitor: what a user writes without mixeval, one statsmodels OLS with ``cov_type="cluster"`` per pair
   on the item means (CR1 only), timed on 30 pairs and scaled to 1,225.

    python3 benchmarks/make_lm_eval_logs.py /tmp/lm_eval_big
    nice -n 10 python3 benchmarks/bench_logs.py --lm-eval-dir /tmp/lm_eval_big
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from mixeval.logs import compare_logs, read_lm_eval, read_logs


def make_long(models: int, items: int, repeats: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    passage = np.arange(items) // 7
    difficulty = rng.normal(0, 1.5, items)
    skill = np.linspace(-0.5, 0.5, models)
    m = np.repeat(np.arange(models), items * repeats)
    i = np.tile(np.repeat(np.arange(items), repeats), models)
    r = np.tile(np.arange(repeats), models * items)
    p = 1 / (1 + np.exp(-(skill[m] - difficulty[i])))
    acc = (rng.random(len(m)) < p).astype(np.float64)
    return pd.DataFrame({"model": pd.Categorical.from_codes(m, [f"model-{k:02d}" for k in range(models)]).astype(str),
                         "task": "bench", "item": i, "repeat": r, "passage": passage[i], "acc": acc})


class Timer:
    def __enter__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu


def statsmodels_pairs(data: pd.DataFrame, n_pairs: int) -> float:
    import statsmodels.api as sm

    means = data.groupby(["model", "item"])["acc"].mean().unstack("model")
    passage = data.drop_duplicates("item").set_index("item")["passage"].reindex(means.index).to_numpy()
    cols = list(means.columns)
    pairs = [(a, b) for k, a in enumerate(cols) for b in cols[k + 1:]][:n_pairs]
    start = time.perf_counter()
    for a, b in pairs:
        d = (means[a] - means[b]).to_numpy()
        sm.OLS(d, np.ones_like(d)).fit(cov_type="cluster", cov_kwds={"groups": passage})
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=50)
    parser.add_argument("--items", type=int, default=14000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--lm-eval-dir", default=None, help="output of make_lm_eval_logs.py")
    parser.add_argument("--out", default="benchmarks/results/bench_logs.json")
    args = parser.parse_args()
    data = make_long(args.models, args.items, args.repeats)
    n_pairs = args.models * (args.models - 1) // 2
    out = {"models": args.models, "items": args.items, "repeats": args.repeats, "rows": len(data), "pairs": n_pairs,
           "load_average_at_start": list(os.getloadavg())}
    with tempfile.TemporaryDirectory() as tmp:
        parquet = Path(tmp) / "long.parquet"
        data.to_parquet(parquet)
        with Timer() as read:
            frame = read_logs(parquet)
        with Timer() as fast:
            res = compare_logs(frame, metric="acc", cluster="passage", mixed=False)
        with Timer() as mixed:
            res_mixed = compare_logs(frame, metric="acc", cluster="passage")
        out.update(read_parquet_s=read.wall, compare_s=fast.wall, compare_mixed_s=mixed.wall,
                   compare_mixed_cpu_s=mixed.cpu, total_mixed_s=read.wall + mixed.wall, pairs_computed=len(res.pairs),
                   ratio_mixed_over_no_mixed=mixed.wall / fast.wall, mixed_model=res_mixed.mixed_model)
    del frame
    if args.lm_eval_dir:
        root = Path(args.lm_eval_dir)
        files = sorted(root.rglob("samples_*.jsonl"))
        with Timer() as read:
            lm = read_lm_eval(root)
        with Timer() as compare:
            res_lm = compare_logs(lm, metric="acc", cluster="subject")
        out.update(lm_eval_files=len(files), lm_eval_bytes=sum(f.stat().st_size for f in files),
                   lm_eval_records=len(lm), lm_eval_models=int(lm["model"].nunique()),
                   lm_eval_repeats=int(lm["repeat"].nunique()), lm_eval_read_s=read.wall, lm_eval_read_cpu_s=read.cpu,
                   lm_eval_compare_mixed_s=compare.wall, lm_eval_compare_mixed_cpu_s=compare.cpu,
                   lm_eval_total_s=read.wall + compare.wall, lm_eval_total_cpu_s=read.cpu + compare.cpu,
                   lm_eval_pairs=len(res_lm.pairs), lm_eval_mixed_model=res_lm.mixed_model)
        del lm
    sample = min(30, n_pairs)
    sm_time = statsmodels_pairs(data, sample)
    out.update(statsmodels_pairs_timed=sample, statsmodels_s=sm_time, statsmodels_all_pairs_s=sm_time * n_pairs / sample,
               ratio_statsmodels_over_mixeval_compare=sm_time * n_pairs / sample / out["compare_mixed_s"],
               load_average_at_end=list(os.getloadavg()))
    Path(args.out).write_text(json.dumps(out, indent=2))
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
