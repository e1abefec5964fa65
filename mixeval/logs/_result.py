"""The result of :func:`~mixeval.logs.compare_logs` and its text: one block per question, each table as wide as
the terminal (columns beyond it continue in a second table with the same key columns)."""

from __future__ import annotations

import shutil
import textwrap
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .._results import Result

__all__ = ["LogComparison", "fit_tables", "result_blocks"]

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


def _terminal_width() -> int:
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


@dataclass(frozen=True, eq=False)
class LogComparison(Result):
    """Paired comparisons of the models in evaluation logs (:func:`~mixeval.logs.compare_logs`).

    Attributes
    ----------
    metric, cluster, by : str or None
        The compared score column, the cluster column, the class column of conditional comparisons.
    level, adjust : float, str
        The confidence level and the multiplicity adjustment.
    models : tuple of str
    pairs : pandas.DataFrame
        One row per pair (``model_a - model_b``); columns in :func:`~mixeval.logs.compare_logs`.
    leaderboard : pandas.DataFrame
        Model means on the items all models share, intervals and simultaneous rank sets.
    by_pairs, heterogeneity : pandas.DataFrame or None
        With ``by``: the pairs within each class; per pair the CR2 HTZ test that the difference is the same in
        every class.
    critical_value : float
        The simultaneous critical value of the pairwise t statistics behind the rank sets.
    rank_method, critical_text : str
        ``"bonferroni"`` or ``"max-t"``, and a sentence saying how the critical value was computed (df; for
        max-t the seed, points and standard error of the integration).
    n_common_items : int
        Items every model has (the leaderboard's items).
    interval : str
        How the leaderboard's intervals are made.
    power, alpha, effect : float
        The design numbers' power, level and the difference ``n_needed`` is for; ``effect_source`` says where the
        effect came from (stated, or the documented default).
    equivalence, noninferiority : float or None
        The margins of the equivalence and non-inferiority tests.
    higher_is_better : bool
    mcnemar_test : str
        Which McNemar test the ``mcnemar_*`` columns hold.
    mixed_model : str or None
        The model behind ``se_mixed`` (None without ``mixed``).
    notes : tuple of str
        What was not computed and why, fitting messages.
    warnings : tuple of str
        The warnings raised while reading and comparing (also re-issued as Python warnings).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.logs import compare_logs
    >>> rng = np.random.default_rng(0)
    >>> d = pd.DataFrame({"model": np.repeat(["A", "B", "C"], 50), "item": np.tile(np.arange(50), 3),
    ...                   "s": rng.normal(size=150) + np.repeat([0.5, 0.0, 0.0], 50)})
    >>> res = compare_logs(d, metric="s", mixed=False, effect=0.2)
    >>> res.models, list(res.leaderboard["model"])[0], res.to_report().title
    (('A', 'B', 'C'), 'A', 'Comparison of 3 models on s')
    """

    metric: str
    cluster: str | None
    by: str | None
    level: float
    adjust: str
    models: tuple[str, ...]
    pairs: pd.DataFrame
    leaderboard: pd.DataFrame
    by_pairs: pd.DataFrame | None = None
    heterogeneity: pd.DataFrame | None = None
    critical_value: float = float("nan")
    rank_method: str = "bonferroni"
    critical_text: str = ""
    n_common_items: int = 0
    interval: str = ""
    power: float = 0.8
    alpha: float = 0.05
    effect: float = 0.02
    effect_source: str = ""
    equivalence: float | None = None
    noninferiority: float | None = None
    higher_is_better: bool = True
    mcnemar_test: str = ""
    mixed_model: str | None = None
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    def summary(self, width: int | None = None) -> str:
        """The comparison as text, one block per question, tables no wider than ``width`` (the terminal's)."""
        width = width or _terminal_width()

        def wrap(text: str, width: int) -> str:
            return textwrap.fill(text, width=width, break_long_words=False, break_on_hyphens=False)

        head = (f"Paired comparisons of {len(self.models)} models on metric {self.metric!r}"
                + (f", clustered by {self.cluster!r}" if self.cluster else ""))
        lines = [head, "=" * min(len(head), width)]
        for title, text, frame, keys, columns in result_blocks(self):
            lines += ["", title, "-" * len(title), wrap(text, width)]
            for table in fit_tables(frame, keys, columns, width):
                lines += ["", table]
        if self.notes:
            lines += ["", "Notes", "-----"]
            lines += [textwrap.fill("- " + note, width=width, subsequent_indent="  ", break_long_words=False,
                                    break_on_hyphens=False) for note in self.notes[:20]]
            if len(self.notes) > 20:
                lines.append(f"... {len(self.notes) - 20} more")
        if self.warnings:       # one line each, as the command line prints warnings
            lines += ["", "Warnings", "--------", *(f"warning: {w}" for w in self.warnings)]
        return "\n".join(lines)

    def to_report(self, title: str | None = None):
        """An HTML/text :class:`~mixeval.report.Report` of the comparison."""
        from ._html import comparison_report

        return comparison_report(self, title=title)

    def _repr_html_(self) -> str:
        return self.to_report()._repr_html_()
