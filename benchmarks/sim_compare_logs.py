"""Coverage and type I error of ``compare_logs``' defaults with 6, 12 and 30 clusters (simulation, known truth).

Questions come in passages of unequal size (5 to 35 questions); each model's log-odds of a correct answer is
``mu_k + u_i + c_g + w_gk`` with a question effect ``u_i ~ N(0, 1)``, a passage effect ``c_g ~ N(0, 0.5^2)`` and a
passage x model effect ``w_gk ~ N(0, 0.5^2)`` (the clustering that makes paired differences of one passage
correlated). The estimand of ``estimate`` is the difference of the models' expected accuracies over the
populations of questions and passages, ``p_k = E expit(mu_k + N(0, 1.5))`` (Gauss-Hermite, exact to 1e-12).

* ``null``: 5 models with the same ``mu``: the share of pairs whose CR2 t test rejects at 5% (type I), the share of
  logs in which the rank sets separate some pair (Bonferroni, the default; max-t on the first ``--max-t-reps``
  logs), the clustered McNemar test (exact, mid-p, Durkalski's chi-square) and McNemar ignoring the passages, the
  CR2 HTZ test that the difference is the same in two classes crossing the passages (``by``), the mixed model's t
  test.
* ``alternative``: 5 models with ``mu = 0, 0.1, 0.2, 0.4, 0.8``: coverage of the 95% CR2 t intervals of the 10
  differences, of the mixed model's t intervals, of the naive intervals, of the leaderboard's Wilson intervals
  of the 5 accuracies, and the share of logs whose rank sets all hold the true ranks.
* ``equivalence``: Gaussian scores (the same structure plus N(0, 1) noise) with a true difference of exactly the
  margin 1.0 (3 to 7 standard errors): the share of TOST rejections at 5% (type I at the boundary of the
  equivalence null).

Each scenario draws from its own seeded stream, so a scenario's numbers do not depend on the others.

Monte Carlo standard errors: sqrt(p (1 - p) / reps) for each share (0.7 points at 5% or 95% with 1,000 logs;
pairs of one log are not independent, so for the per-pair shares the logs are the unit).

    nice -n 10 python3 benchmarks/sim_compare_logs.py --reps 1000 --max-t-reps 200    # about 15 CPU minutes
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings

import numpy as np
import pandas as pd

from mixeval.logs import compare_logs
from mixeval.logs._items import item_table
from mixeval.logs._leaderboard import cr2_covariance
from mixeval.logs._ranks import max_t_critical, rank_sets

MODELS = 5
SD_ITEM, SD_PASSAGE, SD_INTERACTION = 1.0, 0.5, 0.5
MARGIN = 1.0    # equivalence margin: 3 (6 clusters) to 7 (30 clusters) standard errors of the difference


def expected_accuracy(mu: np.ndarray) -> np.ndarray:
    """``E expit(mu + N(0, sd^2))`` with the total sd of the random effects (Gauss-Hermite, 80 nodes)."""
    x, w = np.polynomial.hermite_e.hermegauss(80)
    sd = np.sqrt(SD_ITEM ** 2 + SD_PASSAGE ** 2 + SD_INTERACTION ** 2)
    return (w[None, :] / (1 + np.exp(-(mu[:, None] + sd * x[None, :])))).sum(axis=1) / w.sum()


def logs(rng: np.random.Generator, mu: np.ndarray, n_clusters: int, gaussian: bool = False) -> pd.DataFrame:
    sizes = rng.integers(5, 36, n_clusters)
    passage = np.repeat(np.arange(n_clusters), sizes)
    n = len(passage)
    eta = (mu[None, :] + rng.normal(0, SD_ITEM, n)[:, None] + rng.normal(0, SD_PASSAGE, n_clusters)[passage][:, None]
           + rng.normal(0, SD_INTERACTION, (n_clusters, len(mu)))[passage])
    if gaussian:
        y = eta + rng.normal(0, 1, eta.shape)
    else:
        y = (rng.random(eta.shape) < 1 / (1 + np.exp(-eta))).astype(float)
    level = rng.integers(0, 2, n)                                    # a class crossing the passages
    return pd.DataFrame({"model": np.repeat([f"m{k}" for k in range(len(mu))], n),
                         "item": np.tile(np.arange(n), len(mu)), "passage": np.tile(passage, len(mu)),
                         "level": np.tile(level, len(mu)), "y": y.T.ravel()})


def max_t_separates(data: pd.DataFrame) -> bool:
    table = item_table(data, "y", cluster="passage")
    cov, mean = cr2_covariance(table.means, table.clusters)
    from mixeval.logs._stats import clustered_means

    df = float(clustered_means(table.means, np.ones_like(table.means, dtype=bool), table.clusters).df_cr2[0])
    crit = max_t_critical(cov, 0.95, df, tolerance=3e-3).value
    diag = np.diag(cov)
    se = np.sqrt(np.maximum(diag[:, None] + diag[None, :] - 2 * cov, 0.0))
    _, lower, upper = rank_sets(mean, se, crit)
    return bool((lower > 1).any() or (upper < len(mean)).any())


def null_log(rng: np.random.Generator, n_clusters: int, max_t: bool) -> dict[str, float]:
    data = logs(rng, np.zeros(MODELS), n_clusters)
    res = compare_logs(data, metric="y", cluster="passage", by="level")
    pairs, board = res.pairs, res.leaderboard
    plain = compare_logs(data, metric="y", mixed=False).pairs            # McNemar ignoring the passages
    out = {
        "pair_cr2_type1": float((pairs["pvalue"] < 0.05).mean()),
        "pair_naive_type1": float(((pairs["lower_naive"] > 0) | (pairs["upper_naive"] < 0)).mean()),
        "pair_mixed_type1": float(((pairs["lower_mixed"] > 0) | (pairs["upper_mixed"] < 0)).mean()),
        "ranks_bonferroni_any_separated": float(((board["rank_lower"] > 1) | (board["rank_upper"] < MODELS)).any()),
        "mcnemar_clustered_exact_type1": float((pairs["mcnemar_pvalue"] < 0.05).mean()),
        "mcnemar_clustered_midp_type1": float((pairs["mcnemar_midp"] < 0.05).mean()),
        "mcnemar_durkalski_type1": float((pairs["mcnemar_pvalue_asymptotic"] < 0.05).mean()),
        "mcnemar_ignoring_clusters_type1": float((plain["mcnemar_pvalue"] < 0.05).mean()),
        "heterogeneity_htz_type1": float((res.heterogeneity["pvalue"] < 0.05).mean()),
    }
    if max_t:
        out["ranks_max_t_any_separated"] = float(max_t_separates(data))
    return out


def alternative_log(rng: np.random.Generator, n_clusters: int) -> dict[str, float]:
    mu = np.array([0.0, 0.1, 0.2, 0.4, 0.8])
    truth = expected_accuracy(mu)
    res = compare_logs(logs(rng, mu, n_clusters), metric="y", cluster="passage")
    pairs = res.pairs
    a = pairs["model_a"].str[1:].astype(int).to_numpy()
    b = pairs["model_b"].str[1:].astype(int).to_numpy()
    diff = truth[a] - truth[b]
    board = res.leaderboard
    k = board["model"].str[1:].astype(int).to_numpy()
    true_rank = 1 + (truth[None, :] > truth[k][:, None]).sum(axis=1)
    ranks_hold = bool(((board["rank_lower"] <= true_rank) & (true_rank <= board["rank_upper"])).all())

    def cover(lo: str, hi: str, target: np.ndarray, frame: pd.DataFrame = pairs) -> float:
        return float(((frame[lo] <= target) & (target <= frame[hi])).mean())

    return {"pair_cr2_coverage": cover("lower", "upper", diff),
            "pair_mixed_coverage": cover("lower_mixed", "upper_mixed", diff),
            "pair_naive_coverage": cover("lower_naive", "upper_naive", diff),
            "leaderboard_wilson_coverage": cover("lower", "upper", truth[k], board),
            "rank_sets_hold_all_true_ranks": float(ranks_hold)}


def equivalence_log(rng: np.random.Generator, n_clusters: int) -> dict[str, float]:
    data = logs(rng, np.array([MARGIN, 0.0]), n_clusters, gaussian=True)
    row = compare_logs(data, metric="y", cluster="passage", mixed=False, equivalence=MARGIN).pairs.iloc[0]
    return {"tost_type1_at_margin": float(row["equivalence_pvalue"] < 0.05)}


def run(n_clusters: int, reps: int, max_t_reps: int, seed: int) -> dict[str, tuple[float, float]]:
    streams = [np.random.default_rng([seed, n_clusters, k]) for k in range(3)]
    rows: list[dict[str, float]] = []
    for r in range(reps):
        if r % 100 == 0:
            print(f"{n_clusters} clusters: log {r} of {reps}", file=sys.stderr, flush=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")        # singular mixed-model fits at few clusters are expected
            rows.append({**null_log(streams[0], n_clusters, r < max_t_reps), **alternative_log(streams[1], n_clusters),
                         **equivalence_log(streams[2], n_clusters)})
    frame = pd.DataFrame(rows)
    out = {}
    for col in frame.columns:
        values = frame[col].dropna()
        share = float(values.mean())
        out[col] = (share, float(np.sqrt(share * (1 - share) / len(values))), int(len(values)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--max-t-reps", type=int, default=200)
    parser.add_argument("--clusters", type=int, nargs="+", default=[6, 12, 30])
    parser.add_argument("--seed", type=int, default=20261127)
    parser.add_argument("--json", default=None, help="also write the numbers to this file")
    args = parser.parse_args()
    start = time.time()
    results = {g: run(g, args.reps, args.max_t_reps, args.seed) for g in args.clusters}
    names = list(results[args.clusters[0]])
    print("| quantity (nominal) | " + " | ".join(f"{g} clusters" for g in args.clusters) + " |")
    print("|:--|" + "--:|" * len(args.clusters))
    for name in names:
        cells = [f"{100 * results[g][name][0]:.1f} ({100 * results[g][name][1]:.1f})" for g in args.clusters]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print(f"\n{args.reps} logs per column (max-t: {args.max_t_reps}); % (Monte Carlo SE); {time.time() - start:.0f} s")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({str(g): r for g, r in results.items()}, fh, indent=1)


if __name__ == "__main__":
    main()
