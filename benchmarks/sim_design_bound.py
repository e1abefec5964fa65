"""Coverage of the lower confidence bound of phi that ``cheapest_design(confidence=)`` chooses on (issue 36 item 14).

For each design of ``phi_coverage.py`` (known components): a data set is simulated and fitted (REML), ``--boot``
parametric-bootstrap draws are made (``component_draws``), and the one-sided lower bounds of phi at the design's
``n`` are computed from the same draws by the basic bootstrap on the logit scale (the previous bound) and by the
bootstrap-t on the logit scale (``studentized_bound``, each draw's components with their expected-information
covariance), at confidence 0.9 and 0.975. A bound misses when the true phi lies below it; the nominal miss rates
are 10% and 2.5%.

    nice -n 10 python3 benchmarks/sim_design_bound.py [reps] [boot] [designs]
    # default 300 replicates, 200 draws, every design; designs: comma-separated indices into DESIGNS

Monte Carlo standard error of a miss rate p over m replicates: sqrt(p (1 - p) / m) (1.7 points at 10%, 0.9 at
2.5% with 300 replicates).
"""

from __future__ import annotations

import os
import sys
import time
import warnings

import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from phi_coverage import DESIGNS, simulate  # noqa: E402

from mixeval import lmer  # noqa: E402
from mixeval.reliability import (_lower_bounds, _student_inputs, dstudy, phi)  # noqa: E402
from mixeval.uncertainty import component_draws  # noqa: E402

CONFIDENCES = (0.9, 0.975)


def one(design: tuple, rng: np.random.Generator, boot: int) -> dict:
    name, sizes, formula, comps, n = design
    truth = phi(comps, "item", n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = lmer(formula, simulate(sizes, comps, rng))
        draws = component_draws(fit, n_resamples=boot, random_state=rng, progress=False)
    table = dstudy(fit, "item", {f: [v] for f, v in n.items()})
    student = _student_inputs(fit, draws)
    out = {"truth": truth}
    for c in CONFIDENCES:
        basic, _ = _lower_bounds(draws, "item", table, list(n), "absolute", c, 0.5)
        studentized, _ = _lower_bounds(draws, "item", table, list(n), "absolute", c, 0.5, None, student)
        out[f"basic {c:g}"] = bool(truth < basic[0])
        out[f"studentized {c:g}"] = bool(truth < studentized[0])
        out[f"basic {c:g} bound"], out[f"studentized {c:g} bound"] = float(basic[0]), float(studentized[0])
    return out


def main(reps: int = 300, boot: int = 200, designs: str | None = None) -> None:
    rows = []
    chosen = range(len(DESIGNS)) if designs is None else [int(i) for i in designs.split(",")]
    for k in chosen:
        design = DESIGNS[k]
        rng = np.random.default_rng([20261127, k])
        start = time.time()
        res = pd.DataFrame([one(design, rng, boot) for _ in range(reps)])
        row = {"design": design[0], "n": ", ".join(f"{f} = {v}" for f, v in design[4].items()),
               "true phi": round(res["truth"].iloc[0], 3), "reps": reps}
        for c in CONFIDENCES:
            for method in ("basic", "studentized"):
                p = res[f"{method} {c:g}"].mean()
                row[f"{method} misses at {c:g} (nominal {100 * (1 - c):g}%)"] = (
                    f"{100 * p:.1f} ({100 * np.sqrt(p * (1 - p) / reps):.1f})")
            row[f"mean bound {c:g} basic / studentized"] = (f"{res[f'basic {c:g} bound'].mean():.3f} / "
                                                            f"{res[f'studentized {c:g} bound'].mean():.3f}")
        row["seconds"] = round(time.time() - start)
        rows.append(row)
        print(pd.DataFrame(rows).to_markdown(index=False), flush=True)
    print("\nMisses in percent (Monte Carlo standard error).")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]), *sys.argv[3:4])
