"""Coverage of Bradley-Terry ability intervals when judges have tastes, each interval scored against the target
its model estimates.

    nice -n 10 python3 benchmarks/sim_preferences_coverage.py [--reps 80] [--votes 2000] [--out FILE]

Truth: 6 systems with abilities -1, -0.6, -0.2, 0.2, 0.6, 1 (log-odds), 8 judges drawn anew each replicate, a
position bias 0.3, and a judge's taste for each system ``u[system, judge] ~ N(0, 0.5^2)``: a vote's log-odds is
``s_a - s_b + 0.3 + u[a, j] - u[b, j]``. Abilities are centred (sum 0). Three targets:

* ``conditional``: ``s`` itself, the abilities of a typical judge (``u = 0``), which the mixed model's abilities
  estimate;
* ``population``: the population-averaged abilities, reproducing the win probabilities averaged over new judges
  (attenuated by the judge variance), which the mixed model's ``marginal_abilities()`` estimate and the
  fixed-effects fit estimates when the judges are a sample of a population;
* ``these_judges``: the abilities that reproduce the win probabilities of the 8 judges drawn (their tastes as
  simulated), which the fixed-effects fit estimates when the judges at hand are all one cares about
  (:func:`mixeval.preferences._simulate.simulation_targets` computes the three).

Per replicate: the mixed model (``random="system:judge"``) with 95% Wald intervals on the conditional and the
population-averaged scale; the fixed model's Wald intervals and the naive iid vote bootstrap (what arena
leaderboards do; percentile) against both of their targets. Reports coverage (share of intervals containing the
target, Monte-Carlo SE from the per-replicate shares), mean widths and width ratios (population-averaged mixed /
iid: the dependence alone; conditional mixed / iid: dependence and scale), and the simultaneous rank sets.
The summary is written to ``--out``; the raw per-replicate rows to ``benchmarks/_work/`` (not committed).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as sps

from mixeval.preferences import bradley_terry, simulate_arena
from mixeval.preferences._simulate import simulation_targets

TRUTH = np.array([-1.0, -0.6, -0.2, 0.2, 0.6, 1.0])
TRUE_RANK = 1 + np.argsort(np.argsort(-TRUTH))
JUDGES, SD, POSITION = 8, 0.5, 0.3


def one(rep: int, votes: int, *, n_boot: int) -> dict:
    log, effects = simulate_arena(votes, TRUTH, n_judges=JUDGES, position=POSITION, system_judge_sd=SD,
                                  random_state=1000 + rep, return_effects=True)
    z = sps.norm.ppf(0.975)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mixed = bradley_terry(log, judge="judge", random="system:judge")
        fixed = bradley_terry(log)
        boot = fixed.bootstrap_abilities(n_resamples=n_boot, random_state=rep, iid=True)
    targets = simulation_targets(log, effects["eta"], TRUTH, position=POSITION, variance=2 * SD**2)
    marg = mixed.marginal_abilities()
    lo, hi = np.quantile(boot, [0.025, 0.975], axis=0)
    intervals = {
        "mixed_conditional": (mixed.estimates - z * mixed.se.to_numpy(), mixed.estimates + z * mixed.se.to_numpy()),
        "mixed_population": (marg.lower.to_numpy(), marg.upper.to_numpy()),
        "fixed_wald": (fixed.estimates - z * fixed.se.to_numpy(), fixed.estimates + z * fixed.se.to_numpy()),
        "iid_bootstrap": (lo, hi),
    }
    out = {"rep": rep, "sd_estimate": float(mixed.varcorr.variance.iloc[0] ** 0.5)}
    for name, (lower, upper) in intervals.items():
        out[f"{name}_width"] = float(np.mean(upper - lower))
        for target, value in targets.items():
            out[f"{name}_vs_{target}"] = float(np.mean((lower <= value) & (value <= upper)))
    for name, fit in (("mixed", mixed), ("fixed", fixed)):
        r = fit.ranks(0.95, random_state=rep).reindex(list(fit.systems))
        out[f"{name}_rankset"] = float(np.all((r.rank_lower <= TRUE_RANK) & (TRUE_RANK <= r.rank_upper)))
    return out


def summarise(rows: list[dict]) -> dict:
    frame = pd.DataFrame(rows)
    out: dict = {"reps": len(frame)}
    for col in frame.columns:
        if col == "rep":
            continue
        out[col] = {"mean": float(frame[col].mean()), "mc_se": float(frame[col].std(ddof=1) / np.sqrt(len(frame)))}
    out["width_ratio_population_vs_iid"] = out["mixed_population_width"]["mean"] / out["iid_bootstrap_width"]["mean"]
    out["width_ratio_conditional_vs_iid"] = (out["mixed_conditional_width"]["mean"]
                                             / out["iid_bootstrap_width"]["mean"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=80)
    ap.add_argument("--votes", type=int, default=2000)
    ap.add_argument("--boot", type=int, default=200, help="iid bootstrap resamples per replicate")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "sim_preferences_coverage.json"))
    args = ap.parse_args()
    t0 = time.time()
    rows = [one(rep, args.votes, n_boot=args.boot) for rep in range(args.reps)]
    summary = summarise(rows)
    summary.update({"votes": args.votes, "seconds": time.time() - t0, "truth": TRUTH.tolist(), "judges": JUDGES,
                    "system_judge_sd": SD, "position": POSITION, "iid_resamples": args.boot})
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=1) + "\n")
    work = Path(__file__).parent / "_work"
    work.mkdir(exist_ok=True)
    (work / (out.stem + "_rows.json")).write_text(json.dumps(rows, indent=1) + "\n")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
