"""The HTML/text report of a :class:`~mixeval.preferences.PreferenceResult`, built from mixeval.report's blocks:
the leaderboard with intervals and simultaneous rank sets, "do systems differ", pairwise contrasts, the random
effects and their share of a vote's variance, votes needed, and the naive iid bootstrap beside the model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._random import as_generator
from .._validation import require_level, require_positive_int
from ..errors import recorded_warnings
from ..report import Figure, Note, Paragraph, Report, Section, Table

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ._result import PreferenceResult

__all__ = ["preference_report", "plot_abilities", "fit_call"]


def plot_abilities(result: PreferenceResult, intervals: pd.DataFrame, ranks: pd.DataFrame):
    """Abilities (log-odds, Elo on the top axis) with their intervals, labelled with the simultaneous rank sets.

    Examples
    --------
    >>> from mixeval.preferences import bradley_terry, simulate_arena
    >>> fit = bradley_terry(simulate_arena(600, {"a": 0.4, "b": 0.0, "c": -0.4}, random_state=2))
    >>> fig = plot_abilities(fit, fit.intervals(), fit.ranks())
    >>> fig.axes[0].get_xlabel()
    'ability (log-odds)'
    """
    import matplotlib.pyplot as plt

    order = ranks.index
    iv = intervals.loc[order]
    fig, ax = plt.subplots(figsize=(6.5, 0.38 * len(order) + 1.4))
    y = np.arange(len(order))[::-1]
    ax.hlines(y, iv["lower"], iv["upper"], color="tab:blue", lw=2)
    ax.plot(iv["ability"], y, "o", color="tab:blue")
    ax.set_yticks(y)
    ax.set_yticklabels([f"{s}  (ranks {lo}-{hi})" if lo != hi else f"{s}  (rank {lo})"
                        for s, lo, hi in zip(order, ranks["rank_lower"], ranks["rank_upper"])])
    ax.set_xlabel("ability (log-odds)")

    def to_elo(s: ArrayLike) -> np.ndarray:
        return 400 / np.log(10) * np.asarray(s, dtype=float) + 1000

    def from_elo(e: ArrayLike) -> np.ndarray:
        return (np.asarray(e, dtype=float) - 1000) * np.log(10) / 400

    top = ax.secondary_xaxis("top", functions=(to_elo, from_elo))
    top.set_xlabel("Elo")
    fig.tight_layout()
    return fig


def _systems_test(result: PreferenceResult) -> tuple[pd.DataFrame, str]:
    test = result.test_systems()
    table = pd.DataFrame([{"test": "all systems equally able", "statistic": test.statistic, "df": test.df,
                           "pvalue": test.pvalue}])
    return table, f"do systems differ: chi2 = {test.statistic:.4g} on {test.df:g} df, p = {test.pvalue:.3g}"


def _random_tests(result: PreferenceResult) -> pd.DataFrame:
    terms = (["judge"] if result.position == "random" else []) + list(result.random)
    rows = []
    for term in terms:
        t = result.test_random(term)
        rows.append({"term": term, "statistic": t.statistic, "pvalue": t.pvalue})
    return pd.DataFrame(rows)


def _adjacent_votes(result: PreferenceResult, ranks: pd.DataFrame, power: float, alpha: float) -> pd.DataFrame:
    order = list(ranks.index)
    rows = []
    for a, b in zip(order[:-1], order[1:]):
        needed = result.votes_needed(a, b, power=power, alpha=alpha)
        rows.append({"system": a, "versus": b, "difference": float(result.abilities[a] - result.abilities[b]),
                     "votes_needed": int(np.ceil(needed)) if np.isfinite(needed) else "never (judge variance)"})
    return pd.DataFrame(rows)


def _other_scales(result: PreferenceResult) -> list[str]:
    """What each column group of the other-scales table holds (population-averaged, arena's)."""
    scales = []
    if result.mixed:
        scales.append("population-averaged (averaged over new judges and prompts: what a fixed-effects fit of votes "
                      "from ever new judges estimates, narrower than the conditional scale of the leaderboard)")
    if result.ties != "drop":
        scales.append("arena's (the Bradley-Terry fit without position term that arena leaderboards run, a tie "
                      "counted as half a win for each system, converging to these values when this model holds)")
    return scales


def _scales_table(result: PreferenceResult, level: float) -> pd.DataFrame | None:
    """Elo on the model's scale beside the population-averaged (mixed models) and arena (tie models) ones."""
    columns = {"model": result.intervals(level)}
    if result.mixed:
        columns["population-averaged"] = result.marginal_abilities(level)
    if result.ties != "drop":
        columns["arena"] = result.arena_abilities(level)
    if len(columns) == 1:
        return None
    out = pd.DataFrame(index=columns["model"].index)
    for name, table in columns.items():
        out[f"{name} elo"] = table["elo"]
        out[f"{name} lower"] = table["elo_lower"]
        out[f"{name} upper"] = table["elo_upper"]
    return out.sort_values("model elo", ascending=False).reset_index()


def preference_report(result: PreferenceResult, *, level: float = 0.95, n_resamples: int = 200, random_state: Any = None,
                      adjust: str = "holm", power: float = 0.8, title: str | None = None,
                      meta: Mapping[str, str] | None = None) -> Report:
    """The report of a Bradley-Terry fit (see :meth:`PreferenceResult.to_report`).

    Parameters
    ----------
    result : PreferenceResult
    level : float
        Confidence level of the intervals, rank sets and contrasts.
    n_resamples : int
        Resamples of the naive iid vote bootstrap shown beside the model's intervals; 0 leaves that section out.
    random_state : None, int or numpy Generator
        Seeds the iid bootstrap and the max-t critical values.
    adjust : str
        Multiplicity adjustment of the pairwise contrasts (as :meth:`PreferenceResult.contrasts`).
    power : float
        Power of the votes-needed table (two-sided test at ``1 - level``).
    title : str, optional
    meta : mapping of str to str, optional
        Facts shown under the title after the fit's own (systems, votes, ties, position, level): the data file
        and its rows, the ``command`` that made the report (the command line gives both). Without a ``command``,
        the Python ``call`` that made the fit is stated; the mixeval version and the date are added by
        :class:`~mixeval.report.Report`.

    Returns
    -------
    Report
        ``.to_html()`` / ``.save(path)`` for one self-contained page, ``.to_text()`` for the terminal.

    Examples
    --------
    >>> from mixeval.preferences import bradley_terry, simulate_arena
    >>> fit = bradley_terry(simulate_arena(600, {"a": 0.4, "b": 0.0, "c": -0.4}, random_state=2))
    >>> [s.title for s in fit.to_report(n_resamples=0, random_state=0).sections][:2]
    ['Leaderboard', 'Do the systems differ?']
    """
    level = require_level(level)
    power = require_level(power, "power")
    if n_resamples != 0:
        n_resamples = require_positive_int(n_resamples, "n_resamples", minimum=2)
    seed = as_generator(random_state)
    with recorded_warnings() as warned:
        sections = _sections(result, level, n_resamples, seed, adjust, power)
    facts = {"systems": str(len(result.systems)), "votes": f"{result.n_votes:,}", "ties": result.ties,
             "position": result.position, "level": f"{level:g}"}
    facts.update(meta or {})
    if "command" not in facts:
        facts["call"] = fit_call(result)
    return Report(title or f"Bradley-Terry leaderboard of {len(result.systems)} systems", tuple(sections),
                  facts).with_warnings(warned)


def fit_call(result: PreferenceResult) -> str:
    """The call of :func:`~mixeval.preferences.bradley_terry` that made ``result`` (its options; ``log`` stands for
    the data), for a report's provenance.

    Examples
    --------
    >>> from mixeval.preferences import bradley_terry, simulate_arena
    >>> fit_call(bradley_terry(simulate_arena(300, {"a": 0.4, "b": 0.0, "c": 0.1}, random_state=2), position="none"))
    "bradley_terry(log, ties='drop', position='none')"
    """
    options = {"ties": result.ties, "position": result.position, "random": tuple(result.random) or None,
               "reference": result.reference}
    return "bradley_terry(log" + "".join(f", {k}={v!r}" for k, v in options.items() if v is not None) + ")"


def _sections(result: PreferenceResult, level: float, n_resamples: int, seed: Any, adjust: str, power: float) -> list[Section]:
    """The report's sections (see :func:`preference_report`)."""
    ranks = result.ranks(level, random_state=seed)
    intervals = result.intervals(level)
    board = intervals.loc[ranks.index, ["ability", "lower", "upper", "elo", "elo_lower", "elo_upper"]].copy()
    board.insert(0, "rank", ranks["rank"])
    board["rank_lower"], board["rank_upper"] = ranks["rank_lower"], ranks["rank_upper"]
    board = board.reset_index()
    constraint = f"the ability of {result.reference!r} is 0" if result.reference else "the abilities sum to 0"
    kind = "a mixed model (Laplace)" if result.mixed else "fixed effects"
    sections = [Section("Leaderboard", (
        Paragraph(f"Bradley-Terry abilities ({constraint}) fitted as {kind} to {result.n_votes} votes, on the Elo "
                  f"scale too (400/ln 10 points per unit, 1000 at 0). Scale: {result.scale}. Intervals are Wald at "
                  f"{100 * level:g}%; the rank set of a system holds every rank it can take given simultaneous "
                  f"intervals of all pairwise differences (max-|z| critical value "
                  f"{ranks.attrs['critical_value']:.4g})."),
        Table(board, f"Table 1: leaderboard ({100 * level:g}% intervals, simultaneous rank sets)"),
        Figure.from_matplotlib(plot_abilities(result, intervals, ranks),
                               "Figure 1: abilities with intervals and rank sets")),
        summary=tuple(f"{int(r['rank'])}. {r.system}: {r.ability:.3f} [{r.lower:.3f}, {r.upper:.3f}], ranks "
                      f"{int(r.rank_lower)}-{int(r.rank_upper)}" for _, r in board.head(10).iterrows()))]
    table, line = _systems_test(result)
    sections.append(Section("Do the systems differ?", (
        Paragraph("Likelihood-ratio test of the model with every ability 0 against the fitted model (everything "
                  "else kept)."), Table(table, "Table 2: test of equal abilities")), summary=(line,)))
    contrasts = result.contrasts(adjust=adjust, level=level, random_state=seed)
    outcome = ("wins a decisive vote" if result.ties == "drop" else "wins outright (tie_probability: they tie)")
    who = ", for a typical judge and prompt" if result.mixed else ""
    sections.append(Section("Pairwise comparisons", (
        Paragraph(f"Every pair's ability difference with its p-value adjusted by {adjust}, and the probability the "
                  f"model implies that the first {outcome} in a vote in which neither is shown first{who}."),
        Table(contrasts, f"Table 3: pairwise contrasts ({adjust})"))))
    scales = _scales_table(result, level)
    if scales is not None:
        sections.append(Section("Other scales", (
            Paragraph("The same abilities on other scales, as Elo points with their Wald intervals: "
                      + "; ".join(_other_scales(result)) + "."),
            Table(scales, "Table 3b: abilities on other scales (Elo)"))))
    effects: list[Any] = []
    if result.position_bias is not None:
        effects.append(Paragraph(f"Position bias (log-odds bonus of the system shown first): "
                                 f"{result.position_bias:.4f} (se {result.position_se:.4f})."))
    if result.thresholds is not None:
        effects.append(Paragraph(f"Ordinal ties: thresholds {result.thresholds[0]:.4f}, {result.thresholds[1]:.4f}."))
    if result.ties == "davidson":
        effects.append(Paragraph(f"Davidson tie parameter nu = {result.tie_parameter:.4f}."))
    if len(result.covariates):
        effects.append(Table(result.covariates.reset_index(), "Covariates (difference first - second)"))
    if result.mixed:
        effects += [Table(result.variance_shares(), "Random effects: variance and share of one vote's latent "
                          "variance (logistic residual pi^2/3)"),
                    Table(_random_tests(result), "Likelihood-ratio tests of each random term (boundary mixture)")]
    if effects:
        sections.append(Section("Position, ties, covariates and random effects", tuple(effects)))
    if len(ranks) > 1:
        sections.append(Section("Votes needed", (
            Paragraph(f"Head-to-head votes needed to separate neighbours in the ranking with {100 * power:g}% power "
                      f"(two-sided test at {1 - level:g}), for their estimated difference."),
            Table(_adjacent_votes(result, ranks, power, 1 - level), "Table 4: votes needed for adjacent systems"))))
    if n_resamples:
        iid = result.compare_iid(level, n_resamples=n_resamples, random_state=seed).reset_index()
        narrow = int(np.sum(iid["width_ratio"] > 1.2))
        same = ("the model's population-averaged abilities, which estimate what the iid bootstrap's refits do, "
                "so that the ratio measures the dependence alone" if result.mixed else "the model's abilities")
        sections.append(Section("The naive iid bootstrap beside the model", (
            Paragraph("Arena leaderboards resample votes as if independent and refit the fixed-effects model. With "
                      "judges or prompts making votes dependent, those intervals are too narrow for the population "
                      f"of judges and prompts: the width ratio (model / iid) says how much. The model's intervals "
                      f"here are those of {same}."),
            Table(iid, f"Table 5: model intervals and iid bootstrap ({n_resamples} resamples)")),
            summary=(f"{narrow} of {len(iid)} systems have model intervals more than 1.2x the iid bootstrap's",)))
    notes = []
    if result.separated:
        notes.append(Note(f"infinite abilities (separation): {', '.join(result.separated)}", "warning"))
    if result.infinite_terms:
        notes.append(Note(f"infinite estimates (separation): {', '.join(result.infinite_terms)}", "warning"))
    if not result.converged:
        notes.append(Note("the fit did not converge", "warning"))
    if notes:
        sections.append(Section("Notes", tuple(notes)))
    return sections
