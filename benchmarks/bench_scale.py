"""Benchmark: variance components and the system GLRT on a 100-million-row evaluation log, from aggregates.

Generates (once) a synthetic log ``items x systems x seeds x judges`` as Parquet under
``benchmarks/_work/`` directly in DuckDB (``range()`` and hash-based Gaussian noise; nothing is held
in pandas), then, each in a fresh subprocess so that peak memory is measured per task:

* ``duckdb``: ``score ~ system + (1|item) + (1|seed) + (1|judge)`` and the null model without
  ``system``, both by ML from aggregates (DuckDB on the Parquet file), the likelihood-ratio test, and the
  REML variance components (refit from the same statistics);
* ``spark``: the same query plan with Spark SQL in local mode on a smaller log (default 10M rows);
* ``memory``: the competitor, mixeval's in-memory path (``pd.read_parquet`` + ``mixeval.lmer``), on the
  smaller log.

Prints a markdown table (wall time, peak RSS of the process, estimates). Usage::

    python3 benchmarks/bench_scale.py                          # 100M rows DuckDB, 10M Spark and in-memory
    python3 benchmarks/bench_scale.py --rows 10000000 --skip-spark
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's mixeval, also in the children
WORK = Path(__file__).resolve().parent / "_work"
FULL = "score ~ system + (1|item) + (1|seed) + (1|judge)"
NULL = "score ~ 1 + (1|item) + (1|seed) + (1|judge)"
TRUE = {"item": 0.3**2, "seed": 0.05**2, "judge": 0.1**2, "Residual": 0.4**2}
N_SYSTEMS, N_SEEDS, N_JUDGES = 4, 5, 50
BOOT_RESAMPLES = 1000


def _normal(expr: str, salt: int) -> str:
    """Standard normal noise from a hash of ``expr`` (Box-Muller on two hashed uniforms)."""
    u1 = f"((hash({expr}, {salt}) % 1000000007) + 0.5) / 1000000007.0"
    u2 = f"((hash({expr}, {salt + 1}) % 1000000007) + 0.5) / 1000000007.0"
    return f"(sqrt(-2.0 * ln({u1})) * cos(2.0 * pi() * {u2}))"


def generate(rows: int, path: Path, threads: int) -> None:
    """Write the log with DuckDB: one pass over ``range(rows)``, streamed to Parquet."""
    import duckdb

    per_item = N_SYSTEMS * N_SEEDS * N_JUDGES
    if rows % per_item:
        raise SystemExit(f"--rows must be a multiple of {per_item}")
    con = duckdb.connect()
    con.execute(f"SET threads = {threads}; SET memory_limit = '1500MB'; SET preserve_insertion_order = false")
    tmp = path.with_suffix(".tmp.parquet")
    con.execute(
        f"""
        COPY (
          SELECT item, 'sys' || chr(65 + sys) AS system, seed, 'j' || lpad(CAST(judge AS VARCHAR), 2, '0') AS judge,
                 0.5 + [0.0, 0.02, 0.05, -0.01][sys + 1]
                 + 0.3 * {_normal('item', 11)} + 0.05 * {_normal('seed', 21)} + 0.1 * {_normal('judge', 31)}
                 + 0.4 * {_normal('r', 41)} AS score
          FROM (
            SELECT range AS r, range // {per_item} AS item, CAST((range // {N_SEEDS * N_JUDGES}) % {N_SYSTEMS} AS INTEGER) AS sys,
                   CAST((range // {N_JUDGES}) % {N_SEEDS} AS INTEGER) AS seed, CAST(range % {N_JUDGES} AS INTEGER) AS judge
            FROM range({rows})
          )
        ) TO '{tmp}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 1000000)
        """
    )
    tmp.rename(path)


def _time_queries(engine) -> list[float]:
    """Accumulate the wall time spent inside the engine's queries (returned list is updated in place)."""
    total = [0.0]
    original = engine.query

    def timed(sql: str):
        t = time.perf_counter()
        try:
            return original(sql)
        finally:
            total[0] += time.perf_counter() - t

    engine.query = timed
    return total


def _children_peak_rss_mb() -> float:
    """Peak RSS (VmHWM) of the live child processes, e.g. Spark's JVM (Linux /proc)."""
    total = 0.0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
        except OSError:
            continue
        if int(fields.get("PPid", "0").strip() or 0) == os.getpid() and "VmHWM" in fields:
            total += float(fields["VmHWM"].split()[0]) / 1024.0
    return total


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def task_duckdb(path: Path, threads: int) -> dict:
    import warnings

    import duckdb

    from mixeval.mixed import compare
    from mixeval.scale import as_engine, lmer_aggregate

    t0 = time.perf_counter()
    con = duckdb.connect()
    con.execute(f"SET threads = {threads}; SET memory_limit = '1200MB'")
    engine = as_engine(con.read_parquet(str(path)))  # one engine: the null model re-uses the full model's tables
    query_seconds = _time_queries(engine)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = lmer_aggregate(FULL, engine, REML=False)
        t_full = time.perf_counter() - t0
        null = lmer_aggregate(NULL, engine, REML=False)
        lrt = compare(full, null)
        reml = full.refit(REML=True)
    return _summary("duckdb", full, reml, lrt, time.perf_counter() - t0, {"t_full": t_full, "t_queries": query_seconds[0]})


def task_spark(path: Path, threads: int) -> dict:
    import warnings

    warnings.simplefilter("ignore")
    from pyspark.sql import SparkSession

    from mixeval.mixed import compare
    from mixeval.scale import as_engine, lmer_aggregate

    t_start = time.perf_counter()
    spark = (
        SparkSession.builder.master(f"local[{threads}]").appName("mixeval-bench").config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "1500m").config("spark.sql.shuffle.partitions", str(4 * threads)).getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    t_session = time.perf_counter() - t_start
    t0 = time.perf_counter()
    engine = as_engine(spark.read.parquet(str(path)))
    query_seconds = _time_queries(engine)
    full = lmer_aggregate(FULL, engine, REML=False)
    null = lmer_aggregate(NULL, engine, REML=False)
    lrt = compare(full, null)
    reml = full.refit(REML=True)
    out = _summary("spark", full, reml, lrt, time.perf_counter() - t0, {"t_session": t_session, "t_queries": query_seconds[0],
                                                                          "jvm_peak_rss_mb": _children_peak_rss_mb()})
    spark.stop()
    return out


def task_memory(path: Path, threads: int) -> dict:
    import warnings

    import pandas as pd

    from mixeval.mixed import compare, lmer

    t0 = time.perf_counter()
    df = pd.read_parquet(path)
    t_read = time.perf_counter() - t0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = lmer(FULL, df, REML=False)
        null = lmer(NULL, df, REML=False)
        lrt = compare(full, null)
        reml = full.refit(REML=True)
    return _summary("memory", full, reml, lrt, time.perf_counter() - t0, {"t_read": t_read})


def task_bootstrap(path: Path, threads: int) -> dict:
    """Paired Poisson bootstrap of sysB - sysA (items paired; seeds and judges averaged) in DuckDB."""
    import duckdb

    from mixeval.scale import as_engine, poisson_bootstrap_paired

    t0 = time.perf_counter()
    con = duckdb.connect()
    con.execute(f"SET threads = {threads}; SET memory_limit = '1200MB'")
    res = poisson_bootstrap_paired(as_engine(con.read_parquet(str(path))), score="score", system="system", item="item",
                                   a="sysB", b="sysA", n_resamples=BOOT_RESAMPLES, random_state=2026)
    return {"task": "bootstrap-duckdb", "seconds": time.perf_counter() - t0, "peak_rss_mb": _peak_rss_mb(),
            "n_items": res.details["n_items"], "estimate": res.estimate, "ci": list(res.confidence_interval),
            "pvalue": res.pvalue, "null": res.null_distribution.tolist(), "bootstrap_mean": res.details["bootstrap_mean"]}


def task_bootstrap_memory(path: Path, threads: int) -> dict:
    """The same resamples in memory: pandas per-item differences, numpy hash weights (chunked)."""
    import numpy as np
    import pandas as pd

    from mixeval.scale import poisson_weights

    t0 = time.perf_counter()
    df = pd.read_parquet(path, columns=["item", "system", "score"])
    means = df[df["system"].isin(["sysA", "sysB"])].groupby(["item", "system"])["score"].mean().unstack("system")
    del df
    d = (means["sysB"] - means["sysA"]).sort_index().to_numpy(float)
    i = np.arange(d.size)
    dist = np.empty(BOOT_RESAMPLES)
    for start in range(0, BOOT_RESAMPLES, 50):
        b = np.arange(start, min(start + 50, BOOT_RESAMPLES))
        w = poisson_weights(i[None, :], b[:, None], random_state=2026)
        dist[b] = (w @ d) / w.sum(axis=1)
    return {"task": "bootstrap-memory", "seconds": time.perf_counter() - t0, "peak_rss_mb": _peak_rss_mb(),
            "n_items": int(d.size), "estimate": float(d.mean()), "dist": dist.tolist()}


def _summary(name: str, full, reml, lrt, seconds: float, extra: dict) -> dict:
    return {
        "task": name,
        "nobs": full.nobs,
        "seconds": seconds,
        "peak_rss_mb": _peak_rss_mb(),
        "lrt": lrt.statistic,
        "pvalue": lrt.pvalue,
        "variances_reml": reml.variances,
        "fixef": {k: float(v) for k, v in full.fixef.items()},
        "evals": f"{full.n_evaluations}/{reml.n_evaluations}",
        **extra,
    }


def _run(task: str, path: Path, threads: int) -> dict:
    cmd = [sys.executable, __file__, "--task", task, "--path", str(path), "--threads", str(threads)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000_000)
    ap.add_argument("--small-rows", type=int, default=10_000_000, help="rows of the Spark / in-memory log")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--skip-spark", action="store_true")
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--skip-bootstrap", action="store_true")
    ap.add_argument("--task", help=argparse.SUPPRESS)
    ap.add_argument("--path", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.task:
        tasks = {"duckdb": task_duckdb, "spark": task_spark, "memory": task_memory, "bootstrap": task_bootstrap,
                 "bootstrap-memory": task_bootstrap_memory}
        result = tasks[args.task](Path(args.path), args.threads)
        print(json.dumps(result))
        return
    WORK.mkdir(exist_ok=True)
    paths = {}
    for rows in {args.rows, args.small_rows}:
        path = WORK / f"evallog_{rows}.parquet"
        if not path.exists():
            t0 = time.perf_counter()
            generate(rows, path, args.threads)
            print(f"generated {rows:,} rows in {time.perf_counter() - t0:.1f} s: {path} "
                  f"({path.stat().st_size / 2**20:.0f} MiB)", file=sys.stderr)
        paths[rows] = path
    results = [_run("duckdb", paths[args.rows], args.threads)]
    if not args.skip_spark:
        results.append(_run("spark", paths[args.small_rows], args.threads))
    if not args.skip_memory:
        results.append(_run("memory", paths[args.small_rows], args.threads))
        results.append(_run("duckdb", paths[args.small_rows], args.threads))
    boots = []
    if not args.skip_bootstrap:
        boots.append(_run("bootstrap", paths[args.rows], args.threads))
        if not args.skip_memory:
            boots.append(_run("bootstrap", paths[args.small_rows], args.threads))
            boots.append(_run("bootstrap-memory", paths[args.small_rows], args.threads))
    print(f"Machine: {os.cpu_count()} cores, threads={args.threads}. Models (ML): `{FULL}` vs `{NULL}`; "
          "REML variance components refitted from the same aggregates.\n")
    print("| engine | rows | wall time (s) | in queries (s) | s per 10M rows | peak RSS (MB) | evals (ML/REML) | LRT chi2 (df 3) | var item | var seed | var judge | var resid |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in results:
        v = r["variances_reml"]
        tq = f"{r['t_queries']:.1f}" if "t_queries" in r else "-"
        print(f"| {r['task']} | {r['nobs']:,} | {r['seconds']:.1f} | {tq} | {r['seconds'] / (r['nobs'] / 1e7):.2f} | "
              f"{r['peak_rss_mb']:.0f} | {r.get('evals', '-')} | {r['lrt']:.1f} | {v['item']:.5f} | {v['seed']:.5f} | {v['judge']:.5f} | "
              f"{v['Residual']:.5f} |")
    print(f"| true | | | | | | | | {TRUE['item']:.5f} | {TRUE['seed']:.5f} | {TRUE['judge']:.5f} | {TRUE['Residual']:.5f} |")
    small = {r["task"]: r for r in results if r["nobs"] == args.small_rows}
    if "memory" in small and "duckdb" in small:
        print(f"\nIn-memory / DuckDB-aggregate time ratio at {args.small_rows:,} rows: "
              f"{small['memory']['seconds'] / small['duckdb']['seconds']:.2f}x "
              f"(in-memory includes {small['memory']['t_read']:.1f} s pd.read_parquet); "
              f"peak RSS {small['memory']['peak_rss_mb']:.0f} MB vs {small['duckdb']['peak_rss_mb']:.0f} MB.")
    if boots:
        print(f"\nPaired Poisson bootstrap, sysB - sysA over items ({BOOT_RESAMPLES} resamples, seed 2026):\n")
        print("| engine | rows | items | wall time (s) | peak RSS (MB) | estimate | 95% CI |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
        for r, rows in zip(boots, [args.rows, args.small_rows, args.small_rows]):
            ci = r.get("ci")
            ci_text = f"[{ci[0]:.5f}, {ci[1]:.5f}]" if ci else "same resamples"
            print(f"| {r['task']} | {rows:,} | {r['n_items']:,} | {r['seconds']:.1f} | {r['peak_rss_mb']:.0f} | "
                  f"{r['estimate']:.5f} | {ci_text} |")
        if len(boots) == 3:
            import numpy as np

            duck = np.asarray(boots[1]["null"]) + boots[1]["bootstrap_mean"]
            diff = float(np.max(np.abs(duck - np.asarray(boots[2]["dist"]))))
            print(f"\nMax |DuckDB - in-memory| over the {BOOT_RESAMPLES} resampled statistics (same hash weights): {diff:.1e}")
    if "spark" in small:
        print(f"Spark local[{args.threads}]: session start {small['spark']['t_session']:.1f} s (not counted); peak RSS of "
              f"the Spark JVM (not in the table's Python RSS): {small['spark']['jvm_peak_rss_mb']:.0f} MB.")


if __name__ == "__main__":
    main()
