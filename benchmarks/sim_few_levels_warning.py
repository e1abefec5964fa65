"""Does the FewLevelsWarning fire where the default intervals undercover? (issue 36 item 8)

For each design, data sets are simulated with known truth and fitted as a Study; the default 95% interval of
system A's mean (link scale; the latent mode of an ordinal Study) is checked against the truth, and two rules are
recorded: the current warning (raised by ``Study.emmeans()``: the idealised coverage of the default method up to an
upper confidence bound of the few-level component's share, :mod:`mixeval.significance._dominance`), the same rule
with the bound at other one-sided levels (``LEVELS``: how ``UPPER_LEVEL`` was chosen), and the previous rule (the
idealised z coverage at the *estimated* share, computed here from ``component_shares``). Printed per design: the
coverage over all data sets and among those where each rule fires and stays silent.

    nice -n 10 python3 benchmarks/sim_few_levels_warning.py [n_rep]      # default 300 data sets per design

Monte Carlo standard error of a coverage p over m data sets: sqrt(p (1 - p) / m).
"""

from __future__ import annotations

import os
import sys
import time
import warnings

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from mixeval import Study  # noqa: E402
from mixeval.errors import FewLevelsWarning  # noqa: E402
from mixeval.significance._dominance import (COVERAGE_FLOOR, UPPER_LEVEL, component_shares,  # noqa: E402
                                             idealised_coverage, share_upper_bounds, worst_coverage)
from mixeval.significance._emmeans import marginal_means  # noqa: E402
from mixeval.significance._ordinal import latent_linfct  # noqa: E402

CUTS = np.array([-1.5, 0.0, 1.5])


def design(name: str, rng: np.random.Generator) -> tuple[Study, float]:
    """A simulated Study and the true value of system A's mean on the interval's scale."""
    kind, items, levels, facet_var = DESIGNS[name]
    systems = "AB"
    d = pd.DataFrame([(i, s, m) for i in range(items) for s in range(levels) for m in systems],
                     columns=["item", "seed", "system"])
    eta = rng.normal(0, 1, items)[d.item] + rng.normal(0, np.sqrt(facet_var), levels)[d.seed] + 0.3 * (d.system == "B")
    if kind == "gaussian":
        d["score"] = eta + rng.normal(size=len(d))
        return Study(d, "score ~ system + (1|item) + (1|seed)"), 0.0
    if kind == "binomial":
        d["correct"] = (rng.random(len(d)) < 1 / (1 + np.exp(-(0.5 + eta)))).astype(int)
        return Study(d, "correct ~ system + (1|item) + (1|seed)", family="binomial"), 0.5
    d["rating"] = np.digitize(eta + rng.logistic(size=len(d)), CUTS) + 1
    return Study(d, "rating ~ system + (1|item) + (1|seed)", family="ordinal"), -float(np.mean(CUTS))


#: name -> (family, items, levels of the few-level facet, its variance); item variance 1 everywhere
DESIGNS = {
    "gaussian 40 items x 3 seeds, seed var 0.5": ("gaussian", 40, 3, 0.5),
    "gaussian 40 items x 3 seeds, seed var 0.05": ("gaussian", 40, 3, 0.05),
    "binomial 60 items x 3 seeds, seed var 0.25": ("binomial", 60, 3, 0.25),
    "binomial 60 items x 10 seeds, seed var 0.25": ("binomial", 60, 10, 0.25),
    "ordinal 40 items x 4 raters, rater var 0.5": ("ordinal", 40, 4, 0.5),
}


#: one-sided confidence levels of the share's upper bound compared (the warning uses UPPER_LEVEL)
LEVELS = (0.5, 0.8, 0.9, 0.95)


def _mean_a(study: Study) -> np.ndarray:
    fit = study.fit
    _, L, _, _ = (latent_linfct if study.family == "ordinal" else marginal_means)(fit, "system", None)
    return L[:1]


def previous_rule(study: Study) -> bool:
    """The rule before issue 36: the idealised z coverage at the estimated share below the floor."""
    fit = study.fit
    shares = component_shares(fit, _mean_a(study))
    return any(idealised_coverage(n, shares[0, j]) < COVERAGE_FLOOR for j, n in enumerate(fit.n_levels))


def rule_at(study: Study, level: float, method: str) -> bool:
    """The current rule with the share's upper bound at another one-sided confidence ``level``."""
    fit = study.fit
    candidates = [j for j, n in enumerate(fit.n_levels) if worst_coverage(n, 1.0, method) < COVERAGE_FLOOR]
    if not candidates:
        return False
    _, upper = share_upper_bounds(fit, _mean_a(study), components=candidates, level=level)
    return any(worst_coverage(fit.n_levels[j], upper[0, j], method) < COVERAGE_FLOOR for j in candidates)


def one(name: str, rng: np.random.Generator) -> dict:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        study, truth = design(name, rng)
        means = study.emmeans() if study.family != "ordinal" else study.emmeans(type="latent")
    row = means.iloc[0]
    if study.family == "binomial":
        means = study.emmeans(type="link", df=means.attrs["df_method"])
        row = means.iloc[0]
    out = {"covered": bool(row.lower <= truth <= row.upper), "method": means.attrs["df_method"],
           "warned": any(issubclass(w.category, FewLevelsWarning) for w in caught),
           "previous": previous_rule(study)}
    for level in LEVELS:
        out[f"at {level:g}"] = out["warned"] if level == UPPER_LEVEL else rule_at(study, level, out["method"])
    return out


def _share(res: pd.DataFrame, mask: pd.Series) -> str:
    m = int(mask.sum())
    if m == 0:
        return "- (0)"
    p = res.loc[mask, "covered"].mean()
    return f"{100 * p:.1f} ({m})"


def main(n_rep: int = 300) -> None:
    """``n_rep`` data sets per design (two thirds of it for the slower ordinal fits)."""
    rows = []
    for k, name in enumerate(DESIGNS):
        rng = np.random.default_rng(20261127 + k)
        start = time.time()
        reps = n_rep if DESIGNS[name][0] != "ordinal" else (2 * n_rep) // 3
        res = pd.DataFrame([one(name, rng) for _ in range(reps)])
        rows.append({"design": name, "default df": res["method"].iloc[0],
                     "coverage (all)": _share(res, res["covered"] == res["covered"]),
                     "warns: share of data sets": f"{100 * res['warned'].mean():.0f}%",
                     "coverage when it warns": _share(res, res["warned"]),
                     "coverage when silent": _share(res, ~res["warned"]),
                     "previous rule: coverage when it warned": _share(res, res["previous"]),
                     "previous rule: coverage when silent": _share(res, ~res["previous"]),
                     **{f"bound at {lv:g}: warns / coverage when silent":
                        f"{100 * res[f'at {lv:g}'].mean():.0f}% / {_share(res, ~res[f'at {lv:g}'])}" for lv in LEVELS},
                     "seconds": round(time.time() - start)})
        print(pd.DataFrame(rows).to_markdown(index=False), flush=True)
    print("\nCoverage in percent (data sets in brackets).")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
