"""The result of :func:`~mixeval.logs.compare_logs` and its text (the blocks of :mod:`._blocks`)."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import pandas as pd

from .._results import Result
from ._blocks import fit_tables, result_blocks, terminal_width

__all__ = ["LogComparison"]


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
        width = width or terminal_width()

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
