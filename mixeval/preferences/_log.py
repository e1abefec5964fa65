"""Stage 1: a long log of pairwise judgments -> validated, integer-coded votes, identical votes counted.

One row of the log is one vote: two systems (``model_a`` shown first, ``model_b`` second) answered one
prompt and a judge preferred one of them or called a tie. The outcome is coded ``2`` (``model_a`` won),
``1`` (tie) or ``0`` (``model_b`` won). Rows that agree in every coded column are counted once with their
multiplicity (:attr:`VoteLog.count`), so millions of arena votes among a hundred systems become at most
``K (K - 1) x 3`` rows for a model without prompts or judges.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._validation import require_columns, require_dataframe
from ..errors import InputError

__all__ = ["VoteLog", "read_log", "components", "check_connected", "count_identical", "POSITION_LABELS",
           "TIE_LABELS"]

#: verdicts that name a position and their outcome codes (2: the system shown first won, 0: the second)
POSITION_LABELS = {"model_a": 2, "a": 2, "model_b": 0, "b": 0}
#: verdicts of a tie (LMSYS arena logs also write "tie (bothbad)")
TIE_LABELS = ("tie", "tie (bothbad)")


@dataclass(frozen=True)
class VoteLog:
    """Integer-coded votes, identical ones counted.

    Attributes
    ----------
    systems : tuple of str
        System names (sorted).
    a, b : ndarray of int
        Codes of the system shown first and second.
    outcome : ndarray of int
        2: ``a`` won, 1: tie, 0: ``b`` won.
    count : ndarray of float
        Number of votes of each row.
    judge, prompt : ndarray of int or None
        Codes of the judge and prompt of each row (``None`` when not given).
    judges, prompts : tuple of str
        Their labels.
    covariates : ndarray, shape (n, c)
        Per covariate, the difference ``value for a - value for b``.
    covariate_names : tuple of str
    judge_name, prompt_name : str or None
        The log's column names.
    """

    systems: tuple[str, ...]
    a: np.ndarray = field(repr=False)
    b: np.ndarray = field(repr=False)
    outcome: np.ndarray = field(repr=False)
    count: np.ndarray = field(repr=False)
    judge: np.ndarray | None = field(default=None, repr=False)
    prompt: np.ndarray | None = field(default=None, repr=False)
    judges: tuple[str, ...] = field(default=(), repr=False)
    prompts: tuple[str, ...] = field(default=(), repr=False)
    covariates: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)), repr=False)
    covariate_names: tuple[str, ...] = ()
    judge_name: str | None = None
    prompt_name: str | None = None

    @property
    def n_rows(self) -> int:
        return int(self.a.shape[0])

    @property
    def n_votes(self) -> int:
        return int(round(float(self.count.sum())))

    @property
    def n_systems(self) -> int:
        return len(self.systems)

    @property
    def n_ties(self) -> int:
        return int(round(float(self.count[self.outcome == 1].sum())))

    def subset(self, keep: np.ndarray) -> VoteLog:
        """The rows flagged in ``keep`` (system, judge and prompt labels unchanged)."""
        def pick(v: np.ndarray | None) -> np.ndarray | None:
            return None if v is None else v[keep]

        return VoteLog(self.systems, self.a[keep], self.b[keep], self.outcome[keep], self.count[keep],
                       pick(self.judge), pick(self.prompt), self.judges, self.prompts, self.covariates[keep],
                       self.covariate_names, self.judge_name, self.prompt_name)

    def collapse(self, *, judge: bool, prompt: bool) -> VoteLog:
        """Counts of identical votes over the columns a model uses (judge and prompt only when asked)."""
        drop_j, drop_p = self.judge is not None and not judge, self.prompt is not None and not prompt
        if not (drop_j or drop_p):
            return self
        cols = [self.a, self.b, self.outcome] + [v for v, use in ((self.judge, judge), (self.prompt, prompt))
                                                 if v is not None and use]
        uniq, total = count_identical(cols, self.covariates, self.count)
        col = 3
        out = {}
        for role, v, use in (("judge", self.judge, judge), ("prompt", self.prompt, prompt)):
            if v is not None and use:
                out[role] = uniq[:, col].astype(np.int64)
                col += 1
        return VoteLog(self.systems, uniq[:, 0].astype(np.int64), uniq[:, 1].astype(np.int64),
                       uniq[:, 2].astype(np.int64), total, out.get("judge"), out.get("prompt"),
                       self.judges if judge else (), self.prompts if prompt else (), uniq[:, col:].astype(float),
                       self.covariate_names, self.judge_name if judge else None, self.prompt_name if prompt else None)

    def with_counts(self, count: np.ndarray) -> VoteLog:
        """The same rows with other multiplicities (bootstrap resamples)."""
        return VoteLog(self.systems, self.a, self.b, self.outcome, np.asarray(count, dtype=float), self.judge,
                       self.prompt, self.judges, self.prompts, self.covariates, self.covariate_names,
                       self.judge_name, self.prompt_name)

    def with_outcomes(self, outcome: np.ndarray) -> VoteLog:
        """One vote per row with the given outcomes (simulated responses)."""
        return VoteLog(self.systems, self.a, self.b, np.asarray(outcome, dtype=np.int64), self.count, self.judge,
                       self.prompt, self.judges, self.prompts, self.covariates, self.covariate_names,
                       self.judge_name, self.prompt_name)

    def expand(self) -> VoteLog:
        """One row per vote (counts of 1), for models that simulate vote by vote."""
        idx = np.repeat(np.arange(self.n_rows), np.round(self.count).astype(np.int64))
        def take(v: np.ndarray | None) -> np.ndarray | None:
            return None if v is None else v[idx]

        return VoteLog(self.systems, self.a[idx], self.b[idx], self.outcome[idx], np.ones(idx.size), take(self.judge),
                       take(self.prompt), self.judges, self.prompts, self.covariates[idx], self.covariate_names,
                       self.judge_name, self.prompt_name)


class _Rows:
    """Points error messages at rows of the user's log: positions in the frame, or, for a log counted where it
    lives (one row per distinct vote, :mod:`._source`), numbers of votes and example values (the counted frame's
    row numbers mean nothing to the user)."""

    def __init__(self, data: pd.DataFrame, votes: np.ndarray | None, columns: list[str]):
        self.data, self.votes, self.columns = data, votes, columns

    def describe(self, mask: np.ndarray) -> str:
        """``"3 row(s) (e.g. rows [4, 9, 17])"`` or ``"12 vote(s) (e.g. model_a='x', model_b='x')"``."""
        idx = np.flatnonzero(mask)
        if self.votes is None:
            return f"{idx.size} row(s) (e.g. rows {idx[:5].tolist()})"
        first = self.data.iloc[int(idx[0])]
        example = ", ".join(f"{c}={first[c]!r}" for c in self.columns)
        return f"{int(round(float(self.votes[idx].sum())))} vote(s) (e.g. {example})"


def _named_system(text: str, systems: set[str], by_case: dict[str, list[str]], column: str) -> str | None:
    """The system a verdict names: its exact name, else the one system equal to it up to case."""
    if text in systems:
        return text
    matches = by_case.get(text.lower(), [])
    if len(matches) > 1:
        raise InputError(f"column {column!r}: the value {text!r} names several systems up to case ({sorted(matches)}); "
                         "write the winning system's exact name.")
    return matches[0] if matches else None


def _outcomes(values: pd.Series, column: str, first: np.ndarray, second: np.ndarray, rows: _Rows) -> np.ndarray:
    """Outcome codes (2: the first-shown system won, 1: tie, 0: the second won) from the verdict column.

    A verdict is a position (``model_a``/``model_b``, or ``a``/``b``, any case), a tie (``tie``, ``tie
    (bothbad)``), the name of the winning system (exactly, or up to case), or a numeric margin whose sign says who
    won. A value that both names a system and reads as a position means the system, unless the two readings
    disagree on a vote whose pair does not include that system or the column also writes positions
    (``model_a``/``model_b``): then it is refused as ambiguous.
    """
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        margin = values.to_numpy(dtype=float)
        if not np.all(np.isfinite(margin)):
            raise InputError(f"column {column!r} (a numeric margin) has non-finite values in "
                             f"{rows.describe(~np.isfinite(margin))}.")
        return np.where(margin > 0, 2, np.where(margin < 0, 0, 1)).astype(np.int64)
    index, uniques = pd.factorize(values, use_na_sentinel=False)
    systems = set(first) | set(second)
    by_case: dict[str, list[str]] = {}
    for name in sorted(systems):
        by_case.setdefault(name.lower(), []).append(name)
    texts = [str(u).strip() for u in uniques]
    named = [None if t.lower() in TIE_LABELS else _named_system(t, systems, by_case, column) for t in texts]
    positions = [POSITION_LABELS.get(t.lower()) for t in texts]
    writes_positions = any(p is not None and n is None for p, n in zip(positions, named))
    codes = np.full(index.size, -1, dtype=np.int64)
    for k, (text, name, pos) in enumerate(zip(texts, named, positions)):
        here = index == k
        if text.lower() in TIE_LABELS:
            codes[here] = 1
        elif name is None:
            if pos is not None:
                codes[here] = pos
        else:
            as_system = np.where(first == name, 2, np.where(second == name, 0, -1))
            absent = here & (as_system < 0)
            if pos is not None and np.any(here & (as_system != pos)) and (absent.any() or writes_positions):
                where = rows.describe(here & (as_system != pos))
                raise InputError(
                    f"column {column!r}: the value {text!r} could name the system {name!r} or the position "
                    f"{'model_a' if pos == 2 else 'model_b'} (the system shown {'first' if pos == 2 else 'second'}), "
                    f"and the two readings disagree on {where}"
                    + (f", some of whose votes are not between {name!r} and another system" if absent.any() else
                       "; the column also writes positions (model_a/model_b)")
                    + ". Write the verdicts one way: 'model_a'/'model_b' for positions, or each winner's full name.")
            if absent.any():
                raise InputError(f"column {column!r} names the system {name!r} as the winner of "
                                 f"{rows.describe(absent)} that it did not take part in.")
            codes[here] = as_system[here]
    bad = codes < 0
    if bad.any():
        examples = sorted(set(values[bad].astype(str)))[:5]
        raise InputError(
            f"column {column!r} must say who won: 'model_a', 'model_b' or 'tie' (also 'tie (bothbad)'), the winning "
            f"system's name, or a numeric margin (> 0: model_a better, 0: tie, < 0: model_b better); "
            f"{rows.describe(bad)} have other values, e.g. {examples}."
        )
    return codes


def _require_complete(data: pd.DataFrame, columns: list[str], rows: _Rows) -> None:
    missing = {c: rows.describe(data[c].isna().to_numpy()) for c in columns if data[c].isna().any()}
    if missing:
        raise InputError(f"the log has missing values: {'; '.join(f'{c!r} in {w}' for c, w in missing.items())}; "
                         "drop or fill those rows first (mixeval drops nothing silently).")


def _covariate_differences(data: pd.DataFrame, covariates: dict) -> tuple[np.ndarray, tuple[str, ...]]:
    """``value_a - value_b`` per covariate ``name: (column for model_a, column for model_b)``."""
    if not isinstance(covariates, dict):
        raise InputError("covariates must be a dict {name: (column for model_a, column for model_b)}, e.g. "
                         "{'length': ('len_a', 'len_b')} (style control: the difference of the two answers' values).")
    cols, names = [], []
    for name, pair in covariates.items():
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise InputError(f"covariate {name!r} must be a pair of columns (for model_a, for model_b); got {pair!r}.")
        require_columns(data, list(pair))
        va, vb = (pd.to_numeric(data[c], errors="coerce").to_numpy(dtype=float) for c in pair)
        if not (np.all(np.isfinite(va)) and np.all(np.isfinite(vb))):
            raise InputError(f"covariate {name!r}: columns {pair[0]!r} and {pair[1]!r} must be numeric and complete.")
        cols.append(va - vb)
        names.append(str(name))
    return (np.column_stack(cols) if cols else np.zeros((len(data), 0))), tuple(names)


def read_log(data: pd.DataFrame, *, model_a: str = "model_a", model_b: str = "model_b", winner: str = "winner",
             judge: str | None = None, prompt: str | None = None, covariates: dict | None = None,
             count: str | None = None, counted: bool = False) -> VoteLog:
    """Validate and code a log of pairwise judgments; identical votes are counted once.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per vote (never modified).
    model_a, model_b, winner : str
        Columns of the first-shown system, the second and the verdict (``model_a``/``model_b``/``tie``, the
        winning system's name, or a numeric margin whose sign says who won).
    judge, prompt : str, optional
        Columns of the judge (person or LLM) and of the prompt.
    covariates : dict, optional
        ``{name: (column for model_a, column for model_b)}``: the model uses the difference.
    count : str, optional
        A column with the number of identical votes each row stands for (a log already aggregated).
    counted : bool
        ``data`` holds the distinct votes of a log counted where it lives (:mod:`._source`); error messages then
        give numbers of votes and example values instead of row numbers.

    Raises
    ------
    InputError
        Missing columns or values, unknown or ambiguous verdicts, self-pairs (a system against itself), fewer
        than two systems, no votes.

    Examples
    --------
    >>> import pandas as pd
    >>> log = read_log(pd.DataFrame({"model_a": ["x", "y", "x", "x"], "model_b": ["y", "x", "y", "y"],
    ...                              "winner": ["model_a", "tie", "model_a", "model_b"]}))
    >>> log.systems, log.n_votes, log.n_rows, log.count.tolist()
    (('x', 'y'), 4, 3, [1.0, 2.0, 1.0])
    """
    data = require_dataframe(data)
    used = [model_a, model_b, winner] + [c for c in (judge, prompt, count) if c is not None]
    require_columns(data, used)
    if counted and count is None:
        raise InputError("counted=True needs count= (the column of votes per distinct row).")
    weight = (np.ones(len(data)) if count is None
              else pd.to_numeric(data[count], errors="coerce").to_numpy(dtype=float))
    rows = _Rows(data, weight if counted else None, [model_a, model_b, winner])
    _require_complete(data, used, rows)
    if count is not None and (not np.all(np.isfinite(weight)) or np.any(weight < 0)
                              or np.any(weight != np.round(weight))):
        raise InputError(f"count={count!r} must hold whole numbers of votes >= 0.")
    if len(data) == 0:
        raise InputError("the log has no rows.")
    if not weight.sum() > 0:
        raise InputError(f"count={count!r} is 0 in every row: the log holds no votes.")
    names_a, names_b = data[model_a].astype(str).to_numpy(), data[model_b].astype(str).to_numpy()
    same = names_a == names_b
    if same.any():
        raise InputError(
            f"{rows.describe(same)} compare a system with itself ({model_a!r} == {model_b!r}: "
            f"{sorted(set(names_a[same]))[:3]}); a self-pair says nothing about abilities. Remove those rows.")
    codes, systems = pd.factorize(np.concatenate([names_a, names_b]), sort=True)
    if len(systems) < 2:
        raise InputError("the log names fewer than two systems.")
    n = len(data)
    a, b = codes[:n].astype(np.int64), codes[n:].astype(np.int64)
    outcome = _outcomes(data[winner], winner, names_a, names_b, rows)
    cov, cov_names = _covariate_differences(data, covariates or {})
    groups = {}
    for role, col in (("judge", judge), ("prompt", prompt)):
        if col is not None:
            gcodes, labels = pd.factorize(data[col].astype(str).to_numpy(), sort=True)
            groups[role] = (gcodes.astype(np.int64), tuple(str(v) for v in labels))
    columns = [a, b, outcome] + [groups[r][0] for r in ("judge", "prompt") if r in groups]
    uniq, total = count_identical(columns, cov, weight)
    col = 3
    out = {}
    for role in ("judge", "prompt"):
        if role in groups:
            out[role] = uniq[:, col].astype(np.int64)
            col += 1
    return VoteLog(
        systems=tuple(str(s) for s in systems), a=uniq[:, 0].astype(np.int64), b=uniq[:, 1].astype(np.int64),
        outcome=uniq[:, 2].astype(np.int64), count=total, judge=out.get("judge"), prompt=out.get("prompt"),
        judges=groups.get("judge", (None, ()))[1], prompts=groups.get("prompt", (None, ()))[1],
        covariates=uniq[:, col:].astype(float), covariate_names=cov_names, judge_name=judge, prompt_name=prompt)


def count_identical(columns: list[np.ndarray], extra: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of the integer ``columns`` and the float ``extra`` columns with their summed ``weight``
    (rows of zero weight left out): one sort of a mixed-radix integer key when there are no float columns.

    Examples
    --------
    >>> rows, n = count_identical([np.array([0, 1, 0]), np.array([2, 2, 2])], np.zeros((3, 0)), np.ones(3))
    >>> rows.tolist(), n.tolist()
    ([[0.0, 2.0], [1.0, 2.0]], [2.0, 1.0])
    """
    ints = np.column_stack(columns).astype(np.int64)
    sizes = ints.max(axis=0) + 1
    if extra.shape[1] == 0 and float(np.prod(sizes.astype(float))) < 2.0**62:
        key = np.zeros(ints.shape[0], dtype=np.int64)
        for j, size in enumerate(sizes):
            key = key * int(size) + ints[:, j]
        first_codes, inverse = np.unique(key, return_inverse=True)
        digits = np.empty((first_codes.size, len(sizes)), dtype=np.int64)
        rest = first_codes.copy()
        for j in range(len(sizes) - 1, -1, -1):
            digits[:, j] = rest % sizes[j]
            rest //= sizes[j]
        uniq = digits.astype(float)
    else:
        uniq, inverse = np.unique(np.column_stack([ints.astype(float), extra]), axis=0, return_inverse=True)
    total = np.bincount(inverse.ravel(), weights=weight, minlength=len(uniq))
    keep = total > 0
    return uniq[keep], total[keep]


def components(n: int, a: np.ndarray, b: np.ndarray) -> list[np.ndarray]:
    """Connected components of the comparison graph (systems joined when they met), largest first."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    graph = coo_matrix((np.ones(a.size), (a, b)), shape=(n, n))
    k, labels = connected_components(graph, directed=False)
    comps = [np.flatnonzero(labels == j) for j in range(k)]
    return sorted(comps, key=lambda c: (-c.size, c[0]))


def check_connected(log: VoteLog) -> None:
    """Refuse a log whose systems do not all meet, directly or through others (abilities not comparable).

    Raises
    ------
    InputError
        Naming the components of the comparison graph.
    """
    used = log.count > 0
    comps = components(log.n_systems, log.a[used], log.b[used])
    if len(comps) > 1:
        shown = "; ".join("{" + ", ".join(log.systems[i] for i in c[:8]) + (", ..." if c.size > 8 else "") + "}"
                          for c in comps[:6])
        raise InputError(
            f"the comparison graph is disconnected: the systems fall into {len(comps)} groups that never meet "
            f"(directly or through other systems): {shown}. Abilities in different groups cannot be compared; "
            "fit each group on its own or collect votes between them.")
