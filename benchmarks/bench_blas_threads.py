"""Benchmark: where BLAS threads start to pay for the engine's dense factorisations (``THREADED_ROWS``).

    python3 benchmarks/bench_blas_threads.py [--sizes 256 512 768 1024 1156 1536 2048 3000] [--repeat 7]

For each size ``n`` a random symmetric positive-definite matrix is factorised (LAPACK ``dpotrf``) and
inverted from its factor (``dpotri``), which is what one deviance evaluation with its gradient costs on a
Schur complement of ``n`` rows (InstEval: 1,156). Times are the best of ``--repeat`` on one thread and on
the BLAS's configured thread count (threadpoolctl), so the ratio shows the size above which
:data:`mixeval.mixed._blas.THREADED_ROWS` should let the BLAS use its threads. Run on an idle machine:
under load, threads oversubscribe the cores and every size loses.
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from scipy.linalg import lapack
from threadpoolctl import threadpool_info, threadpool_limits

from _timing import best_time



def factor_and_invert(s: np.ndarray) -> None:
    chol, info = lapack.dpotrf(s, lower=0)
    inv, info = lapack.dpotri(chol, lower=0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[256, 512, 768, 1024, 1156, 1536, 2048, 3000])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    threads = max(int(lib["num_threads"]) for lib in threadpool_info() if lib["user_api"] == "blas")
    print(f"BLAS threads configured: {threads}; CPUs: {os.cpu_count()}; load average: {os.getloadavg()[0]:.2f}")
    print("| rows | 1 thread ms | configured threads ms | speed-up |\n|--:|--:|--:|--:|")
    rng = np.random.default_rng(0)
    for n in args.sizes:
        a = rng.standard_normal((n, n))
        s = np.asfortranarray(a @ a.T + n * np.eye(n))
        with threadpool_limits(1, user_api="blas"):
            one = best_time(lambda: factor_and_invert(s), args.repeat)[0]
        with threadpool_limits(threads, user_api="blas"):
            many = best_time(lambda: factor_and_invert(s), args.repeat)[0]
        print(f"| {n:,} | {1e3 * one:.2f} | {1e3 * many:.2f} | {one / many:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
