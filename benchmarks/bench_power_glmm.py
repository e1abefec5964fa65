"""Power of a binary benchmark by simulation: mixeval's ``power_from_components`` vs the glmer simulate-and-refit
loop in R (``power_glmer.R``, simr's method), on the same design in the same run.

Design: items x seeds x 2 systems (one 0/1 score per cell), logit P(correct) = 0.5 + 0.5 [system B] + item +
system:seed, variances 1.0 and 0.05; both sides run the GLRT (ML fits with and without the system effect) and the
Wald z test per simulation. Reported: seconds per simulation on each side, their ratio, and both power estimates
with their Monte Carlo standard errors (they estimate the same number).

    nice -n 10 python3 benchmarks/bench_power_glmm.py --items 40 --seeds 6 --nsim 200
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mixeval.uncertainty import power_from_components  # noqa: E402

R_SCRIPT = Path(__file__).with_name("power_glmer.R")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=40)
    ap.add_argument("--seeds", type=int, default=6)
    ap.add_argument("--nsim", type=int, default=200, help="simulations on each side")
    args = ap.parse_args()
    out = subprocess.run(["Rscript", str(R_SCRIPT), str(args.items), str(args.seeds), str(args.nsim)],
                         capture_output=True, text=True, check=True).stdout.split()
    r_sec, r_lr, r_z = (float(v) for v in out[:3])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        res = power_from_components({"item": 1.0, "system:seed": 0.05}, family="binomial", intercept=0.5, delta=0.5,
                                    n={"item": args.items, "seed": args.seeds}, test=["glrt", "pairwise"],
                                    n_resamples=args.nsim, random_state=1, progress=False)
        py_sec = time.perf_counter() - t0
    se = lambda p: np.sqrt(p * (1 - p) / args.nsim)  # noqa: E731
    py = dict(zip(res.table["test"], res.table["power"]))
    print(f"design: {args.items} items x {args.seeds} seeds x 2 systems ({2 * args.items * args.seeds} rows), "
          f"{args.nsim} simulations each side")
    print(f"R glmer loop : {r_sec / args.nsim * 1e3:8.1f} ms/simulation   power glrt {r_lr:.3f} ({se(r_lr):.3f}), "
          f"wald {r_z:.3f} ({se(r_z):.3f})")
    print(f"mixeval      : {py_sec / args.nsim * 1e3:8.1f} ms/simulation   power glrt {py['glrt']:.3f} "
          f"({se(py['glrt']):.3f}), wald {py['pairwise']:.3f} ({se(py['pairwise']):.3f})")
    print(f"ratio (R / mixeval): {r_sec / py_sec:.1f}x (mixeval's time includes its pilot fits)")


if __name__ == "__main__":
    main()
