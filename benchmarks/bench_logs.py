"""Speed of reading and comparing evaluation logs: 50 models x 14,000 questions x 5 repeats (3.5M rows).

Three timings in one run:

1. ``compare_logs`` on the 3.5M-row long format read from Parquet (``read_logs``), clustered by passage,
   without the per-pair mixed models (``mixed=False``, CLI ``--no-mixed``): all 1,225 pairs, leaderboard with
   rank sets (10,000 max-|t| draws).
2. ``read_lm_eval`` on 50 lm-evaluation-harness sample files of 14,000 records each (the harness has no
   repeats: 700,000 records), then ``compare_logs``.
3. The competitor: what a user writes without mixeval, one statsmodels OLS with ``cov_type="cluster"`` per pair
   on the item means (CR1 only), timed on 30 pairs and scaled to 1,225.

    nice -n 10 python benchmarks/bench_logs.py [--models 50 --items 14000 --repeats 5]
"""

from __future__ import annotations

import argparse
import json
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


def write_lm_eval(root: Path, data: pd.DataFrame) -> None:
    once = data[data["repeat"] == 0]
    for model, part in once.groupby("model"):
        d = root / model
        d.mkdir(parents=True)
        lines = [json.dumps({"doc_id": int(i), "doc": {"passage": int(p)}, "target": "A", "filter": "none",
                             "metrics": ["acc"], "doc_hash": str(i), "prompt_hash": "p", "target_hash": "t", "acc": a})
                 for i, p, a in zip(part["item"], part["passage"], part["acc"])]
        (d / "samples_bench_2024-01-01T00-00-00.000000.jsonl").write_text("\n".join(lines) + "\n")


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
    parser.add_argument("--out", default="benchmarks/results/bench_logs.json")
    args = parser.parse_args()
    data = make_long(args.models, args.items, args.repeats)
    n_pairs = args.models * (args.models - 1) // 2
    out = {"models": args.models, "items": args.items, "repeats": args.repeats, "rows": len(data), "pairs": n_pairs}
    with tempfile.TemporaryDirectory() as tmp:
        parquet = Path(tmp) / "long.parquet"
        data.to_parquet(parquet)
        t0 = time.perf_counter()
        frame = read_logs(parquet)
        t1 = time.perf_counter()
        res = compare_logs(frame, metric="acc", cluster="passage", mixed=False, random_state=0)
        t2 = time.perf_counter()
        out.update(read_parquet_s=t1 - t0, compare_s=t2 - t1, total_s=t2 - t0, pairs_computed=len(res.pairs))
        lm_root = Path(tmp) / "lm_eval"
        write_lm_eval(lm_root, data)
        t0 = time.perf_counter()
        lm = read_lm_eval(lm_root)
        t1 = time.perf_counter()
        compare_logs(lm, metric="acc", cluster="passage", mixed=False, random_state=0)
        t2 = time.perf_counter()
        out.update(lm_eval_records=len(lm), lm_eval_read_s=t1 - t0, lm_eval_compare_s=t2 - t1)
    sample = min(30, n_pairs)
    sm_time = statsmodels_pairs(data, sample)
    out.update(statsmodels_pairs_timed=sample, statsmodels_s=sm_time, statsmodels_all_pairs_s=sm_time * n_pairs / sample,
               ratio_statsmodels_over_mixeval_compare=sm_time * n_pairs / sample / out["compare_s"])
    Path(args.out).write_text(json.dumps(out, indent=2))
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
