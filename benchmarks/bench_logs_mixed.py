"""The mixed model of every pair at once against one ``mixeval.lmer`` fit per pair, in one run.

On the data of ``bench_logs.py`` (50 models x 14,000 questions in 2,000 passages x 5 repeats; 1,225 pairs):
``compare_logs(..., cluster="passage")`` with and without ``mixed`` (the difference is the time of the mixed
model of all pairs, ``d ~ 1 + (1 | passage)`` by REML on the item-level differences), and the same model
fitted by ``mixeval.lmer`` for ``--pairs`` pairs, scaled to all pairs; the estimates and SEs are compared.

    PYTHONPATH=. nice -n 10 python3 benchmarks/bench_logs_mixed.py    # -> results/bench_logs_mixed.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_logs import make_long  # noqa: E402

from mixeval import lmer  # noqa: E402
from mixeval.logs import compare_logs  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--out", default="benchmarks/results/bench_logs_mixed.json")
    args = parser.parse_args()
    data = make_long(50, 14000, 5)
    out = {"rows": len(data), "load_average_at_start": list(os.getloadavg())}
    t0 = time.perf_counter()
    plain = compare_logs(data, metric="acc", cluster="passage", mixed=False)
    t1 = time.perf_counter()
    mixed = compare_logs(data, metric="acc", cluster="passage")
    t2 = time.perf_counter()
    out.update(compare_no_mixed_s=t1 - t0, compare_mixed_s=t2 - t1, mixed_all_pairs_s=(t2 - t1) - (t1 - t0),
               pairs=len(mixed.pairs))
    means = data.groupby(["model", "item"])["acc"].mean().unstack("model")
    passage = data.drop_duplicates("item").set_index("item")["passage"].reindex(means.index).astype(str).to_numpy()
    start = time.perf_counter()
    diffs = []
    for row in mixed.pairs.head(args.pairs).itertuples():
        frame = pd.DataFrame({"d": (means[row.model_a] - means[row.model_b]).to_numpy(), "c": passage})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = lmer("d ~ 1 + (1 | c)", frame)
        diffs.append((abs(float(fit.fixef.iloc[0]) - row.mixed_estimate),
                      abs(float(np.sqrt(fit.vcov.iloc[0, 0])) / row.se_mixed - 1)))
    per_pair = (time.perf_counter() - start) / args.pairs
    out.update(lmer_pairs_timed=args.pairs, lmer_per_pair_s=per_pair, lmer_all_pairs_s=per_pair * len(mixed.pairs),
               ratio_lmer_per_pair_over_all_at_once=per_pair * len(mixed.pairs) / max(out["mixed_all_pairs_s"], 1e-9),
               max_abs_estimate_difference=max(d[0] for d in diffs), max_rel_se_difference=max(d[1] for d in diffs),
               load_average_at_end=list(os.getloadavg()))
    Path(args.out).write_text(json.dumps(out, indent=2))
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
