"""Bradley-Terry fits: mixeval.preferences against R (glm, lme4::glmer, ordinal::clm), evalica and choix.

    nice -n 10 python3 benchmarks/bench_preferences.py [--votes 40000] [--systems 16] [--judges 12]
                                                         [--scale-votes 1000000] [--out benchmarks/results/bench_preferences.json]

Then ``--membership-votes`` votes among 20 systems by 10 judges with a random position bias per judge and
system-by-judge deviations (a multiple-membership term). (``--scale-votes 0 --membership-votes 0``: the comparison
alone; ``--votes 0``: the two scale cases alone.)

One simulated arena log (abilities evenly spaced in [-1.5, 1.5], a position bias 0.3 with a judge SD 0.5,
ties by the cumulative logit with tau 0.4), fitted by every tool in the same run:

* fixed effects, ties dropped, no position term: mixeval, R ``glm`` on the difference design, evalica's
  ``bradley_terry`` and choix's ``ilsr_pairwise`` (tolerances 1e-12; abilities compared after centring);
* a mean position bias with a random deviation per judge: mixeval (engine, Laplace) and ``glmer``;
* ordinal ties with a position bias: mixeval and ``clm``;
* ordinal ties with a mean position bias and a random deviation per judge: mixeval (the clmm engine) and ``clmm``.

Then the scale case: ``--scale-votes`` votes among 100 systems with 200 judges (random position bias) and
2,000 prompts (random intercept: a prompt-specific first-position bias), ties dropped. Times are wall-clock seconds of the fit alone (the log read and
validated is included for mixeval: it is part of every call; R's times exclude reading the CSV), and CPU
seconds (this process, all threads; R: user + system), the measure to compare on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from mixeval.preferences import bradley_terry, simulate_arena

ROOT = Path(__file__).resolve().parents[1]

R_SCRIPT = r"""
suppressPackageStartupMessages({library(jsonlite); library(lme4); library(ordinal)})
args <- commandArgs(trailingOnly = TRUE)
log <- read.csv(args[1], stringsAsFactors = FALSE)
systems <- sort(unique(c(log$model_a, log$model_b)))
D <- sapply(systems[-1], function(s) (log$model_a == s) - (log$model_b == s))
colnames(D) <- paste0("d_", seq_len(ncol(D)))
dat <- data.frame(D, first = 1, judge = log$judge)
dat$y3 <- factor(ifelse(log$winner == "model_b", "b", ifelse(log$winner == "tie", "tie", "a")),
                 levels = c("b", "tie", "a"), ordered = TRUE)
nt <- dat[log$winner != "tie", ]
nt$y <- as.integer(log$winner[log$winner != "tie"] == "model_a")
rhs <- paste(colnames(D), collapse = " + ")
cpu <- function(t) t[["user.self"]] + t[["sys.self"]]
t_glm <- system.time(g <- glm(as.formula(paste("y ~ 0 +", rhs)), family = binomial, data = nt,
                              control = glm.control(epsilon = 1e-12)))
t_glmer <- system.time(gm <- glmer(as.formula(paste("y ~ 0 +", rhs, "+ first + (0 + first | judge)")),
                                   family = binomial, data = nt))
t_clm <- system.time(cm <- clm(as.formula(paste("y3 ~", rhs)), data = dat))
t_clmm <- system.time(cmm <- clmm(as.formula(paste("y3 ~", rhs, "+ (1 | judge)")), data = dat))
cat(toJSON(list(glm = list(seconds = t_glm[["elapsed"]], cpu = cpu(t_glm), coef = unname(coef(g)),
                           loglik = as.numeric(logLik(g))),
                glmer = list(seconds = t_glmer[["elapsed"]], cpu = cpu(t_glmer), coef = unname(fixef(gm)),
                             loglik = as.numeric(logLik(gm))),
                clm = list(seconds = t_clm[["elapsed"]], cpu = cpu(t_clm), coef = unname(coef(cm)),
                           loglik = as.numeric(logLik(cm))),
                clmm = list(seconds = t_clmm[["elapsed"]], cpu = cpu(t_clmm), coef = unname(coef(cmm)),
                            loglik = as.numeric(logLik(cmm)))),
           digits = NA, auto_unbox = TRUE))
"""


def _timed(fn):
    """The result, wall-clock seconds and CPU seconds of this process (all threads) of ``fn()``."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def _centred(x: np.ndarray) -> np.ndarray:
    return x - x.mean()


def compare(votes: int, n_systems: int, n_judges: int) -> dict:
    abilities = np.linspace(-1.5, 1.5, n_systems)
    log = simulate_arena(votes, abilities, n_judges=n_judges, position=0.3, judge_sd=0.5, tie_tau=0.4,
                         random_state=7)
    systems = sorted(set(log.model_a) | set(log.model_b))
    out: dict = {"votes": votes, "systems": n_systems, "judges": n_judges}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log.csv"
        log.to_csv(path, index=False)
        rpath = Path(tmp) / "bench.R"
        rpath.write_text(R_SCRIPT)
        r = json.loads(subprocess.run(["Rscript", str(rpath), str(path)], capture_output=True, text=True,
                                      check=True).stdout)
    fixed, t, c = _timed(lambda: bradley_terry(log, ties="drop", position="none", reference=systems[0]))
    out["mixeval_fixed"] = {"seconds": t, "cpu": c, "loglik": fixed.loglik}
    r_abil = np.concatenate([[0.0], r["glm"]["coef"]])
    out["r_glm"] = {"seconds": r["glm"]["seconds"], "cpu": r["glm"]["cpu"], "loglik": r["glm"]["loglik"],
                    "max_abs_diff_vs_mixeval": float(np.max(np.abs(r_abil - fixed.estimates)))}
    no_ties = log[log.winner != "tie"]
    import choix
    import evalica

    res, t, c = _timed(lambda: evalica.bradley_terry(no_ties.model_a, no_ties.model_b,
                                                  no_ties.winner.map({"model_a": evalica.Winner.X,
                                                                      "model_b": evalica.Winner.Y}),
                                                  tolerance=1e-12, limit=100000))
    ev = np.log(res.scores.reindex(systems).to_numpy())
    out["evalica"] = {"seconds": t, "cpu": c, "max_abs_diff_vs_mixeval": float(np.max(np.abs(_centred(ev) - _centred(fixed.estimates))))}
    idx = {s: i for i, s in enumerate(systems)}
    pairs = [(idx[w], idx[l]) for w, l in zip(np.where(no_ties.winner == "model_a", no_ties.model_a, no_ties.model_b),
                                              np.where(no_ties.winner == "model_a", no_ties.model_b, no_ties.model_a))]
    ch, t, c = _timed(lambda: choix.ilsr_pairwise(len(systems), pairs, alpha=0.0, tol=1e-12, max_iter=10000))
    out["choix"] = {"seconds": t, "cpu": c, "max_abs_diff_vs_mixeval": float(np.max(np.abs(_centred(ch) - _centred(fixed.estimates))))}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mixed, t, c = _timed(lambda: bradley_terry(log, ties="drop", position="random", judge="judge",
                                                   reference=systems[0]))
    out["mixeval_judge"] = {"seconds": t, "cpu": c, "loglik": mixed.loglik}
    r_mixed = np.concatenate([[0.0], r["glmer"]["coef"][:-1]])
    out["r_glmer"] = {"seconds": r["glmer"]["seconds"], "cpu": r["glmer"]["cpu"], "loglik": r["glmer"]["loglik"],
                      "max_abs_diff_vs_mixeval": float(np.max(np.abs(r_mixed - mixed.estimates)))}
    ordinal, t, c = _timed(lambda: bradley_terry(log, ties="ordinal", position="fixed", reference=systems[0]))
    out["mixeval_ordinal"] = {"seconds": t, "cpu": c, "loglik": ordinal.loglik}
    r_ord = np.concatenate([[0.0], r["clm"]["coef"][2:]])
    out["r_clm"] = {"seconds": r["clm"]["seconds"], "cpu": r["clm"]["cpu"], "loglik": r["clm"]["loglik"],
                    "max_abs_diff_vs_mixeval": float(np.max(np.abs(r_ord - ordinal.estimates)))}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ord_judge, t, c = _timed(lambda: bradley_terry(log, ties="ordinal", position="random", judge="judge",
                                                       reference=systems[0]))
    out["mixeval_ordinal_judge"] = {"seconds": t, "cpu": c, "loglik": ord_judge.loglik}
    r_ordm = np.concatenate([[0.0], r["clmm"]["coef"][2:]])
    out["r_clmm"] = {"seconds": r["clmm"]["seconds"], "cpu": r["clmm"]["cpu"], "loglik": r["clmm"]["loglik"],
                     "max_abs_diff_vs_mixeval": float(np.max(np.abs(r_ordm - ord_judge.estimates)))}
    out["cpu_ratios"] = {
        "clmm_over_mixeval_ordinal_judge": out["r_clmm"]["cpu"] / out["mixeval_ordinal_judge"]["cpu"],
        "glmer_over_mixeval_judge": out["r_glmer"]["cpu"] / out["mixeval_judge"]["cpu"],
        "clm_over_mixeval_ordinal": out["r_clm"]["cpu"] / out["mixeval_ordinal"]["cpu"],
        "glm_over_mixeval_fixed": out["r_glm"]["cpu"] / out["mixeval_fixed"]["cpu"],
        "evalica_over_mixeval_fixed": out["evalica"]["cpu"] / out["mixeval_fixed"]["cpu"],
        "choix_over_mixeval_fixed": out["choix"]["cpu"] / out["mixeval_fixed"]["cpu"]}
    return out


def scale(votes: int) -> dict:
    log = simulate_arena(votes, np.linspace(-2, 2, 100), n_judges=200, n_prompts=2000, position=0.3, judge_sd=0.5,
                         random_state=8)
    rng = np.random.default_rng(9)
    # a prompt intercept of SD 0.3 (prompt-specific first-position bias): redraw the outcomes with it
    sys_ab = dict(zip([f"sys{j:02d}" for j in range(100)], np.linspace(-2, 2, 100)))
    judge_dev = dict(zip(sorted(log.judge.unique()), rng.normal(0, 0.5, log.judge.nunique())))
    prompt_dev = rng.normal(0, 0.3, 2000)
    eta = (log.model_a.map(sys_ab) - log.model_b.map(sys_ab) + 0.3 + log.judge.map(judge_dev)
           + prompt_dev[log.prompt.to_numpy()]).to_numpy()
    log["winner"] = np.where(rng.random(votes) < 1 / (1 + np.exp(-eta)), "model_a", "model_b")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit, t, c = _timed(lambda: bradley_terry(log, position="random", judge="judge", prompt="prompt",
                                                 random="prompt"))
    return {"votes": votes, "systems": 100, "judges": 200, "prompts": 2000, "seconds": t, "cpu": c,
            "varcorr": fit.to_dict()["varcorr"], "position_bias": fit.position_bias,
            "max_abs_error_abilities": float(np.max(np.abs(fit.estimates - _centred(np.linspace(-2, 2, 100)))))}


def membership(votes: int, n_systems: int = 20, n_judges: int = 10) -> dict:
    """System-by-judge deviations (a multiple-membership term) with a random position bias per judge."""
    log = simulate_arena(votes, np.linspace(-1.5, 1.5, n_systems), n_judges=n_judges, position=0.3, judge_sd=0.5,
                         system_judge_sd=0.3, random_state=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit, t, c = _timed(lambda: bradley_terry(log, judge="judge", position="random", random="system:judge"))
    return {"votes": votes, "systems": n_systems, "judges": n_judges, "seconds": t, "cpu": c,
            "varcorr": fit.to_dict()["varcorr"], "loglik": fit.loglik}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--votes", type=int, default=40000)
    ap.add_argument("--systems", type=int, default=16)
    ap.add_argument("--judges", type=int, default=12)
    ap.add_argument("--scale-votes", type=int, default=1_000_000)
    ap.add_argument("--membership-votes", type=int, default=100_000)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "bench_preferences.json"))
    args = ap.parse_args()
    result = {}
    if args.votes:  # --votes 0: the scale case alone
        result["compare"] = compare(args.votes, args.systems, args.judges)
        print(json.dumps(result["compare"], indent=1), flush=True)
    if args.membership_votes:
        result["membership"] = membership(args.membership_votes)
        print(json.dumps(result["membership"], indent=1), flush=True)
    if args.scale_votes:
        result["scale"] = scale(args.scale_votes)
        print(json.dumps(result["scale"], indent=1))
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
