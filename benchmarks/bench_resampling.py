"""Speed of mixeval's resampling tests against sacreBLEU's paired tests and deepsig, in one run.

Run:  python3 benchmarks/bench_resampling.py            (prints a markdown table)
      python3 benchmarks/bench_resampling.py --quick    (smaller sizes, for a smoke test)

Competitors are optional (pip install sacrebleu deepsig); missing ones are reported as such.
Each row times both tools on the same data in this process; "ratio" = competitor / mixeval.
Times are the best of 3 runs (time.perf_counter) except for the slow competitors (1 run); the
headline rows are the best of 5, with the median in the notes, and are run with both of
mixeval's backends (compiled kernels and MIXEVAL_KERNELS=numpy) in the same run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import time
import tracemalloc

import numpy as np

from mixeval.resampling import _engine, paired_bootstrap_test, permutation_test


def _time(fn, repeat: int = 1):
    """Best wall time of ``repeat`` runs, and the last result."""
    best, _, out = _time_stats(fn, repeat)
    return best, out


def _time_stats(fn, repeat: int):
    """Best and median wall time of ``repeat`` runs, and the last result."""
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), float(np.median(times)), out


@contextlib.contextmanager
def _backend(name: str):
    """Run the block with MIXEVAL_KERNELS=name (the backend is read at each call)."""
    old = os.environ.get(_engine.BACKEND_VARIABLE)
    os.environ[_engine.BACKEND_VARIABLE] = name
    try:
        yield
    finally:
        if old is None:
            del os.environ[_engine.BACKEND_VARIABLE]
        else:
            os.environ[_engine.BACKEND_VARIABLE] = old


def _peak_mb(fn) -> float:
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def _sentences(n: int, rng: random.Random, vocab: list[str]) -> tuple[list[str], list[str], list[str]]:
    refs, hyp_a, hyp_b = [], [], []
    for _ in range(n):
        ref = [rng.choice(vocab) for _ in range(rng.randint(8, 30))]
        a = [w if rng.random() < 0.7 else rng.choice(vocab) for w in ref]
        b = [w if rng.random() < 0.68 else rng.choice(vocab) for w in ref]
        refs.append(" ".join(ref))
        hyp_a.append(" ".join(a))
        hyp_b.append(" ".join(b))
    return refs, hyp_a, hyp_b


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rows = []
    rng = np.random.default_rng(0)

    # 1. the headline: 10,000 resamples of a mean-difference test over 100,000 paired items, with the
    #    compiled kernels (the default where they were built) and with the numpy backend in the same run
    #    (MIXEVAL_KERNELS=numpy): same resamples, so the p-values must agree; the ratio is the speed-up
    n_big, r_big = (20_000, 2_000) if args.quick else (100_000, 10_000)
    a = rng.normal(0.4, 0.2, size=n_big)
    b = a - 0.001 + rng.normal(0, 0.1, size=n_big)
    print(f"backend: {_engine.backend()}; threads: {_engine._workers()}", flush=True)
    for name, test in (("permutation", permutation_test), ("bootstrap (shift)", paired_bootstrap_test)):
        def run():
            return test(a, b, n_resamples=r_big, random_state=1)

        t_fast, med_fast, res_fast = _time_stats(run, repeat=5)
        mem = _peak_mb(run)
        with _backend("numpy"):
            t_np, med_np, res_np = _time_stats(run, repeat=3)
        if res_fast.pvalue != res_np.pvalue:
            raise RuntimeError(f"{name}: backends disagree ({res_fast.pvalue} vs {res_np.pvalue})")
        rows.append((f"{name}, mean diff, n={n_big:,}, R={r_big:,}", t_fast, "mixeval, numpy backend", t_np,
                     f"p={res_fast.pvalue:.4g} both; median of 5 {med_fast:.3f} s (numpy backend {med_np:.3f} s); "
                     f"peak {mem:.0f} MB"))
        if test is paired_bootstrap_test:
            # the same bootstrap on one thread (identical output; only the speed changes)
            workers, _engine.MAX_WORKERS = _engine.MAX_WORKERS, 1
            try:
                t_one, _, res_one = _time_stats(run, repeat=3)
            finally:
                _engine.MAX_WORKERS = workers
            if not np.array_equal(res_one.null_distribution, res_fast.null_distribution):
                raise RuntimeError("thread count changed the bootstrap output")
            rows.append((f"{name}, same, 1 thread", t_one, "-", None, "identical output"))

    # 2. deepsig (per-item Python loop) on a smaller problem
    n_small, r_small = (300, 200) if args.quick else (1_000, 1_000)
    x = rng.normal(0.4, 0.2, size=n_small)
    y = x - 0.01 + rng.normal(0, 0.1, size=n_small)
    t_me_p, me_p = _time(lambda: permutation_test(x, y, alternative="greater", n_resamples=r_small,
                                                  random_state=1), repeat=3)
    t_me_b, me_b = _time(lambda: paired_bootstrap_test(x, y, alternative="greater", n_resamples=r_small,
                                                       random_state=1), repeat=3)
    try:
        import deepsig

        t_ds_p, ds_p = _time(lambda: deepsig.permutation_test(x, y, num_samples=r_small, seed=1))
        t_ds_b, ds_b = _time(lambda: deepsig.bootstrap_test(x, y, num_samples=r_small, seed=1))
        rows.append((f"permutation, mean diff, n={n_small:,}, R={r_small:,}", t_me_p, "deepsig", t_ds_p,
                     f"p mixeval {me_p.pvalue:.3g} / deepsig {ds_p:.3g} (one-sided)"))
        rows.append((f"bootstrap, mean diff, n={n_small:,}, R={r_small:,}", t_me_b, "deepsig", t_ds_b,
                     f"p mixeval {me_b.pvalue:.3g} / deepsig {ds_b:.3g} (one-sided)"))
    except ImportError:
        rows.append(("deepsig", t_me_p, "deepsig not installed", None, ""))

    # 3. sacreBLEU's paired AR and bootstrap tests on corpus BLEU from per-sentence statistics
    n_mt = 500 if args.quick else 2_000
    try:
        from sacrebleu.metrics import BLEU
        from sacrebleu.significance import PairedTest

        vocab = [f"w{i}" for i in range(300)]
        refs, hyp_a, hyp_b = _sentences(n_mt, random.Random(0), vocab)
        bleu = BLEU()
        sa = np.array(bleu._extract_corpus_statistics(hyp_a, [refs]), dtype=float)
        sb = np.array(bleu._extract_corpus_statistics(hyp_b, [refs]), dtype=float)
        for test_type, R, ours in (("ar", 1_000 if args.quick else 10_000, permutation_test),
                                   ("bs", 1_000, paired_bootstrap_test)):
            def run_sacre():
                pt = PairedTest([("baseline", hyp_b), ("system", hyp_a)], {"BLEU": BLEU()}, [refs],
                                test_type=test_type, n_samples=R)
                pt.seed = 12345
                return pt()[1]["BLEU"][1].p_value

            t_sb, p_sb = _time(run_sacre)
            t_me, res = _time(lambda: ours(sa, sb, metric="bleu", n_resamples=R, random_state=1), repeat=3)
            name = "approximate randomization" if test_type == "ar" else "paired bootstrap"
            rows.append((f"{name}, corpus BLEU, n={n_mt:,}, R={R:,}", t_me, "sacrebleu " + test_type, t_sb,
                         f"p mixeval {res.pvalue:.3g} / sacrebleu {p_sb:.3g}; BLEU diff {res.statistic:.3f}"))
    except ImportError:
        rows.append(("sacrebleu", float("nan"), "sacrebleu not installed", None, ""))

    print("| task | mixeval (s) | competitor | competitor (s) | ratio | notes |")
    print("| --- | ---: | --- | ---: | ---: | --- |")
    for task, t_me, comp, t_comp, note in rows:
        ratio = f"{t_comp / t_me:.1f}x" if t_comp else "-"
        tc = f"{t_comp:.3f}" if t_comp else "-"
        print(f"| {task} | {t_me:.3f} | {comp} | {tc} | {ratio} | {note} |")


if __name__ == "__main__":
    main()
