"""Scan random-slope designs near the boundary: the REML/ML criterion and evaluation count of ``lmer``.

    python benchmarks/scan_boundary.py FIRST LAST > out.txt

Designs ``FIRST .. LAST - 1`` of ``tests/mixed/fixtures/boundary/make_boundary_data.py`` (each from its own
seed). Run it on two checkouts and join the outputs to see where one optimiser stops short of the other
(``benchmarks/results/boundary_scan_*.txt``: before and after the factor reparametrisation of the boundary
checks). Prints ``seed criterion evaluations singular`` per design.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's mixeval, not an installed one
sys.path.insert(0, str(HERE.parent / "tests" / "mixed" / "fixtures" / "boundary"))

from make_boundary_data import make, plan  # noqa: E402

from mixeval.mixed import lmer  # noqa: E402


def main(first: int, last: int) -> None:
    for seed in range(first, last):
        kind, scenario, low, high = plan(seed)
        df, formula = make(seed, kind, scenario, low, high)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = lmer(formula, df, REML=seed % 5 != 4)
        print(seed, f"{fit.criterion:.10f}", fit.n_evaluations, int(fit.singular), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
