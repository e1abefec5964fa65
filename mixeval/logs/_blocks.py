"""The blocks of a :func:`~mixeval.logs.compare_logs` result, shared by its text summary and its HTML report: one
block per question, each table as wide as the terminal (columns beyond it continue in a second table with the same
key columns)."""

from __future__ import annotations

import shutil
from typing import Any

import pandas as pd

__all__ = ["fit_tables", "result_blocks", "terminal_width"]

PAIR_KEYS = ["model_a", "model_b"]
MAIN = ["n_items", "estimate", "se_cr2", "df", "lower", "upper", "pvalue", "pvalue_adjusted"]
SES = ["n_clusters", "se_unpaired", "se_naive", "se_cluster", "se_cr2"]
MIXED = ["mixed_estimate", "se_mixed", "df_mixed", "lower_mixed", "upper_mixed", "sd_cluster_mixed", "sigma_mixed"]
MCNEMAR = ["mcnemar_b", "mcnemar_c", "mcnemar_statistic", "mcnemar_pvalue_asymptotic", "mcnemar_pvalue",
           "mcnemar_midp"]
GLMM = ["glmer_log_odds_ratio", "glmer_se", "glmer_pvalue"]
EQUIVALENCE = ["estimate", "se_cr2", "df", "equivalence_statistic", "equivalence_pvalue", "equivalence_pvalue_adjusted"]
NONINFERIORITY = ["estimate", "noninferiority_statistic_a", "noninferiority_pvalue_a", "noninferiority_statistic_b",
                  "noninferiority_pvalue_b"]
DESIGN = ["estimate", "se_cr2", "df", "mdd", "n_needed", "var_between", "var_within"]
BOARD = ["model", "estimate", "se_cr2", "lower", "upper", "rank", "rank_lower", "rank_upper", "equivalent_to_best",
         "equivalence_pvalue_adjusted"]
HETEROGENEITY = ["n_classes", "statistic", "df_num", "df_den", "pvalue", "pvalue_adjusted"]


def terminal_width() -> int:
    return max(60, min(shutil.get_terminal_size(fallback=(100, 24)).columns, 200))


def fit_tables(frame: pd.DataFrame, keys: list[str], columns: list[str], width: int, *, max_rows: int = 20,
               digits: int = 4) -> list[str]:
    """``frame``'s ``keys`` and ``columns`` as text tables no wider than ``width``: the columns that do not fit
    continue in further tables, each with the key columns again."""
    from ..report import text_table

    wanted = [c for c in columns if c in frame.columns and c not in keys]
    keys = [k for k in keys if k in frame.columns]
    groups: list[list[str]] = []
    current: list[str] = []
    for col in wanted:
        trial = current + [col]
        text = text_table(frame[keys + trial], digits=digits, max_rows=max_rows)
        if current and max(len(line) for line in text.splitlines()) > width:
            groups.append(current)
            current = [col]
        else:
            current = trial
    if current or not groups:
        groups.append(current)
    return [text_table(frame[keys + g], digits=digits, max_rows=max_rows) for g in groups]


def result_blocks(res: Any) -> list[tuple[str, str, pd.DataFrame, list[str], list[str]]]:
    """The blocks of a comparison: (title, explanation, frame, key columns, columns), in reading order; the
    text summary and the HTML report show the same blocks."""
    pairs = res.pairs
    level = f"{100 * res.level:g}%"
    clusters = f"clusters {res.cluster!r}" if res.cluster else "each item its own cluster"
    blocks = [(
        "Paired differences",
        f"model_a - model_b on the items both have ({clusters}; repeats averaged within item first). se_cr2: the "
        f"cluster-robust CR2 standard error (clubSandwich), df: its Bell-McCaffrey (Satterthwaite) df; lower/upper: "
        f"the {level} t interval; pvalue: the t test; pvalue_adjusted: {res.adjust} across the pairs.",
        pairs, PAIR_KEYS, MAIN),
        ("Standard errors side by side",
         "se_unpaired: as if the models had answered different questions (lm-evaluation-harness's comparison); "
         "se_naive: paired, items independent; se_cluster: CR1 (sandwich::vcovCL, normal intervals lower_cluster/"
         "upper_cluster); se_cr2: CR2 (the tests and intervals above).", pairs, PAIR_KEYS, SES)]
    if res.mixed_model:
        blocks.append(("Mixed model of the differences",
                       f"{res.mixed_model}: mixed_estimate (the GLS mean, clusters weighted by their precision) with "
                       f"its own se_mixed and df_mixed, and the {level} t interval lower_mixed/upper_mixed.",
                       pairs, PAIR_KEYS, MIXED))
    if "mcnemar_pvalue" in pairs and pairs["mcnemar_pvalue"].notna().any():
        blocks.append(("McNemar's test", res.mcnemar_test + ".", pairs, PAIR_KEYS, MCNEMAR))
    if "glmer_log_odds_ratio" in pairs:
        blocks.append(("Logistic mixed model (GLMM, glmer)",
                       "With glmm=True (CLI --glmm), glmer_log_odds_ratio: the log odds ratio of a correct answer, "
                       "model_a against model_b, for "
                       "a typical item (conditional on the item's random effect; not the difference in accuracy), "
                       "with its Wald se and p-value (Laplace fit per pair).", pairs, PAIR_KEYS, GLMM))
    if res.equivalence is not None:
        blocks.append(("Equivalence (TOST)",
                       f"H0: |model_a - model_b| >= {res.equivalence:g}; equivalence_statistic (|estimate| - delta) / "
                       "se_cr2 with the CR2 df, equivalence_pvalue the larger of the two one-sided p-values (emmeans' "
                       f"side = 'equivalence'), adjusted by {res.adjust}; small: equivalent within "
                       f"+-{res.equivalence:g}.", pairs, PAIR_KEYS, EQUIVALENCE))
    if res.noninferiority is not None:
        direction = "higher" if res.higher_is_better else "lower"
        blocks.append(("Non-inferiority",
                       f"noninferiority_pvalue_a: H0 that model_a is worse than model_b by {res.noninferiority:g} or "
                       f"more ({direction} is better; one-sided CR2 t test, emmeans' side = '>'); _b the same for "
                       "model_b against model_a. Small: not worse by that margin.", pairs, PAIR_KEYS, NONINFERIORITY))
    blocks.append(("Design: detectable differences and items needed",
                   f"mdd: the smallest true difference the CR2 t test (its df) detects with power {res.power:g} at "
                   f"two-sided alpha {res.alpha:g}; n_needed: items (in clusters like these) to detect a difference of "
                   f"{res.effect:g} ({res.effect_source}) with that power; var_between/var_within: the difference's "
                   "variance between items and between repeats.", pairs, PAIR_KEYS, DESIGN))
    if len(res.leaderboard):
        blocks.append(("Leaderboard",
                       f"Means on the {res.n_common_items} items every model has; lower/upper: {res.interval}. Rank "
                       f"sets: every rank a model can take given simultaneous tests of all pairs ({res.rank_method}: "
                       f"{res.critical_text})" + (f"; equivalent_to_best: TOST against the best within "
                                                  f"+-{res.equivalence:g} at adjusted p < {1 - res.level:.3g}"
                                                  if res.equivalence is not None else "") + ".",
                       res.leaderboard, ["model"], BOARD[1:]))
    if res.by_pairs is not None:
        blocks.append((f"Pairs within each {res.by}",
                       f"As the paired differences, on each class's items; pvalue_adjusted: {res.adjust} across all "
                       "classes and pairs.", res.by_pairs, [res.by_pairs.columns[0]] + PAIR_KEYS, MAIN))
        blocks.append((f"Does the difference vary with {res.by}?",
                       "Per pair, the Wald test that the class means of the differences are equal, CR2 covariance "
                       "with Pustejovsky & Tipton's HTZ F reference (clubSandwich::Wald_test(test = 'HTZ')); "
                       f"pvalue_adjusted: {res.adjust} across pairs.", res.heterogeneity, PAIR_KEYS, HETEROGENEITY))
    return blocks
