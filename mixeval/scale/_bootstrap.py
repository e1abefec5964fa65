"""A paired Poisson bootstrap computed inside the query engine, with seeded hash-based weights.

Each resample ``b`` gives item ``i`` the weight ``w_ib ~ Poisson(1)`` (the Poisson
approximation of multinomial resampling, Hanley & MacGibbon 2006; Chamandy et al. 2012),
drawn by inverting the Poisson(1) CDF at a uniform number obtained from an
integer hash of ``(seed, i, b)``. The hash uses only BIGINT ``*``, ``+``, ``%`` and
comparisons with all intermediate values below ``2^63``, so DuckDB, Spark SQL
(also in ANSI mode) and numpy (:func:`poisson_weights`) compute the same weights;
no random numbers are stored or moved.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._random import as_generator
from .._results import TestResult
from .._validation import require_level, require_positive_int
from ..errors import ColumnError, InputError
from ..resampling import percentile_interval
from ..resampling.engine import check_alternative, count_extreme
from ._sources import Engine, as_engine

__all__ = ["poisson_bootstrap_paired", "poisson_weights", "hash_uniform_int", "POISSON_THRESHOLDS", "MODULUS"]

#: The prime modulus of the hash (2^31 - 1; 3 mod 4, so the QPR step below is a permutation).
MODULUS = 2_147_483_647
_A1, _A2, _A3 = 1_597_334_677, 812_311_283, 48_271
_C1, _C2, _C3 = 1_013_904_223, 1_664_525, 362_436_069


def _poisson_thresholds() -> tuple[int, ...]:
    """Integer CDF thresholds ``floor(F(k) P)`` of Poisson(1) for k = 0, 1, ... while below ``P``."""
    out: list[int] = []
    cdf, k = 0.0, 0
    while True:
        cdf += math.exp(-1.0) / math.factorial(k)
        t = int(math.floor(cdf * MODULUS))
        if t >= MODULUS or (out and t == out[-1]):  # no probability mass left at the hash's resolution
            break
        out.append(t)
        k += 1
    return tuple(out)


#: ``w = k`` for ``T_{k-1} <= h < T_k`` (``T_{-1} = 0``); ``h >= T_last`` gives ``len(T)``.
POISSON_THRESHOLDS = _poisson_thresholds()


def _seed_offset(random_state: object) -> int:
    """The hash offset of a seed: an int seed maps to it directly (the same offset in SQL and numpy);
    None, a SeedSequence or a Generator draw it (:func:`mixeval._random.as_generator`)."""
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, (bool, np.bool_)) and random_state >= 0:
        return int((int(random_state) % MODULUS) * _A3 % MODULUS + _C3) % MODULUS
    return int(as_generator(random_state).integers(0, MODULUS))


# --------------------------------------------------------------------------- numpy
def _qpr_np(x: np.ndarray) -> np.ndarray:
    r = (x * x) % MODULUS
    return np.where(x <= MODULUS // 2, r, MODULUS - r)


def hash_uniform_int(i: np.ndarray, b: np.ndarray, seed_offset: int) -> np.ndarray:
    """The hash ``h(i, b) in [0, P)`` (numpy; identical to the SQL of :func:`_hash_sql`)."""
    i = np.asarray(i, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    x = ((i % MODULUS) * _A1 % MODULUS + (b % MODULUS) * _A2 % MODULUS + seed_offset) % MODULUS
    x = _qpr_np(x)
    x = _qpr_np((x + _C1) % MODULUS)
    x = _qpr_np((x * _A3 + _C2) % MODULUS)
    return x


def poisson_weights(i: np.ndarray, b: np.ndarray, random_state: object) -> np.ndarray:
    """Poisson(1) bootstrap weights of items ``i`` in resamples ``b`` (broadcast), as the engine draws them.

    Parameters
    ----------
    i, b : array_like of int
        Item indices (0-based rank of the item in sorted order) and resample indices.
    random_state : int or numpy.random.Generator
        The same seed as given to :func:`poisson_bootstrap_paired`.

    Examples
    --------
    >>> w = poisson_weights(np.arange(100_000), 0, random_state=1)
    >>> round(float(w.mean()), 2), round(float(w.var()), 2)
    (1.0, 1.0)
    """
    h = hash_uniform_int(i, b, _seed_offset(random_state))
    return np.searchsorted(np.asarray(POISSON_THRESHOLDS), h, side="right").astype(np.int64)


# --------------------------------------------------------------------------- SQL
def _qpr_sql(x: str) -> str:
    p = MODULUS
    return f"CASE WHEN {x} <= {p // 2} THEN ({x} * {x}) % {p} ELSE {p} - ({x} * {x}) % {p} END"


def _weight_sql(h: str) -> str:
    whens = " ".join(f"WHEN {h} < {t} THEN {k}" for k, t in enumerate(POISSON_THRESHOLDS))
    return f"CASE {whens} ELSE {len(POISSON_THRESHOLDS)} END"


def _literal(value: object) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, np.integer, float, np.floating)):
        return repr(value.item() if hasattr(value, "item") else value)
    return "'" + str(value).replace("'", "''") + "'"


def bootstrap_sql(engine: Engine, *, score: str, system: str, item: str, a: object, b: object, n_resamples: int,
                  seed_offset: int) -> tuple[str, str]:
    """The per-item query (observed differences) and the resampling query (sums per resample)."""
    q = engine.quote
    p = MODULUS
    la, lb = _literal(a), _literal(b)
    s = f"CAST({q(score)} AS DOUBLE)"
    per_item = (
        f"SELECT {q(item)} AS k, AVG(CASE WHEN {q(system)} = {la} THEN {s} END) "
        f"- AVG(CASE WHEN {q(system)} = {lb} THEN {s} END) AS d, "
        f"SUM(CASE WHEN {q(system)} = {la} THEN 1 ELSE 0 END) AS na, "
        f"SUM(CASE WHEN {q(system)} = {lb} THEN 1 ELSE 0 END) AS nb "
        f"FROM {{src}} WHERE {q(system)} IN ({la}, {lb}) GROUP BY {q(item)}"
    )
    summary = (
        f"SELECT COUNT(*) AS n_items, SUM(CASE WHEN na = 0 OR nb = 0 THEN 1 ELSE 0 END) AS n_unpaired, "
        f"SUM(CASE WHEN na > 0 THEN 1 ELSE 0 END) AS items_a, SUM(CASE WHEN nb > 0 THEN 1 ELSE 0 END) AS items_b, "
        f"SUM(CASE WHEN k IS NULL THEN 1 ELSE 0 END) AS n_null_items, "
        f"SUM(CASE WHEN na > 0 AND nb > 0 AND d IS NULL THEN 1 ELSE 0 END) AS n_null_scores, "
        f"AVG(d) AS observed, SUM(d) AS sum_d FROM ({per_item}) t"
    )
    x0 = f"((CAST(i AS BIGINT) % {p}) * {_A1} % {p} + (CAST(rb AS BIGINT) % {p}) * {_A2} % {p} + {seed_offset}) % {p}"
    resample = (
        f"WITH items AS (SELECT d, ROW_NUMBER() OVER (ORDER BY k) - 1 AS i FROM ({per_item}) t), "
        f"s0 AS (SELECT rb, d, {x0} AS x FROM items CROSS JOIN {engine.range_table(n_resamples, 'rb')} r), "
        f"s1 AS (SELECT rb, d, {_qpr_sql('x')} AS x FROM s0), "
        f"s2 AS (SELECT rb, d, {_qpr_sql(f'((x + {_C1}) % {p})')} AS x FROM s1), "
        f"s3 AS (SELECT rb, d, {_qpr_sql(f'((x * {_A3} + {_C2}) % {p})')} AS x FROM s2), "
        f"w AS (SELECT rb, d, {_weight_sql('x')} AS w FROM s3) "
        f"SELECT rb, SUM(w * d) AS swd, SUM(w) AS sw FROM w GROUP BY rb ORDER BY rb"
    )
    return summary, resample


def poisson_bootstrap_paired(
    source: Any,
    *,
    score: str,
    system: str,
    item: str,
    a: object,
    b: object,
    alternative: str = "two-sided",
    level: float = 0.95,
    n_resamples: int = 1000,
    random_state: object = None,
) -> TestResult:
    """Paired Poisson bootstrap test of the mean score difference of two systems, run in the query engine.

    Parameters
    ----------
    source : Parquet path/glob, pyarrow.Table, duckdb relation, Spark DataFrame or pandas DataFrame
        Long-format evaluation log; only per-resample sums come back.
    score, system, item : str
        Columns: the score, the system label and the item (pairing) identifier.
    a, b : scalar
        The two systems compared (values of ``system``); the statistic is ``mean_i (A_i - B_i)``
        where ``A_i`` is the mean score of system ``a`` on item ``i`` (replicates averaged).
    alternative : {"two-sided", "greater", "less"}
        ``"greater"``: H1 says ``a`` scores higher.
    level : float
        Level of the percentile confidence interval.
    n_resamples : int, keyword-only
        Number of bootstrap resamples ``B``.
    random_state : None, int or numpy.random.Generator, keyword-only
        Seed of the hash; identical seeds give identical weights (and results up to the engine's
        floating-point summation order, ~1e-15 relative).

    Returns
    -------
    TestResult
        ``statistic``/``estimate``: observed mean difference; ``null_distribution``: the resampled
        differences shifted to mean 0; ``pvalue``: ``(c + 1)/(B + 1)``; ``confidence_interval``:
        percentile interval of the (unshifted) resampled differences; ``details``: items, seed
        offset, bootstrap mean and standard error.

    Raises
    ------
    ColumnError, InputError
        Missing columns, NULL items or scores, items that lack one of the two systems (counted), or
        fewer than 2 items.

    Notes
    -----
    With per-item differences ``d_i`` and weights ``w_ib ~ Poisson(1)`` the resampled statistic is
    ``t*_b = sum_i w_ib d_i / sum_i w_ib``; with the shifted distribution ``t*_b - mean(t*)`` the
    p-value counts ``|t*_b - mean(t*)| >= |t|`` (two-sided). The weights are a deterministic function
    of ``(seed, rank of the item, b)`` (see :func:`poisson_weights`), so the resamples can be replayed
    in memory or in any engine.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> items = np.repeat(np.arange(300), 2)
    >>> df = pd.DataFrame({"item": items, "system": np.tile(["A", "B"], 300)})
    >>> df["score"] = rng.normal(size=300)[items] + 0.2 * (df.system == "A") + rng.normal(0, 0.3, 600)
    >>> res = poisson_bootstrap_paired(df, score="score", system="system", item="item", a="A", b="B",
    ...                                n_resamples=500, random_state=1)
    >>> res.pvalue < 0.01, res.confidence_interval.lower > 0
    (True, True)
    """
    alternative = check_alternative(alternative)
    n_resamples = require_positive_int(n_resamples, "n_resamples", minimum=2)
    level = require_level(level)
    engine = as_engine(source)
    missing = [c for c in (score, system, item) if c not in engine.columns()]
    if missing:
        raise ColumnError(
            f"column(s) {', '.join(repr(m) for m in missing)} not found in the {engine.description}; "
            f"available columns: {', '.join(engine.columns())}."
        )
    if engine.column_kind(score) != "numeric":
        raise InputError(f"the score column {score!r} is not numeric in the {engine.description}.")
    seed_offset = _seed_offset(random_state)
    summary_sql, resample_sql = bootstrap_sql(engine, score=score, system=system, item=item, a=a, b=b,
                                              n_resamples=n_resamples, seed_offset=seed_offset)
    summary = engine.query(summary_sql).iloc[0]
    n_items = int(summary["n_items"] or 0)
    for key, value in (("items_a", a), ("items_b", b)):
        if not int(summary[key] or 0):
            raise InputError(
                f"system {value!r} does not occur in column {system!r} of the {engine.description}; the values "
                "must match exactly (type and spelling)."
            )
    for key, what in (("n_null_items", f"NULL values in the item column {item!r}"),
                      ("n_null_scores", f"NULL scores in {score!r}"),
                      ("n_unpaired", f"only one of the systems {a!r} and {b!r}")):
        count = int(summary[key] or 0)
        if count:
            raise InputError(
                f"{count} of {n_items} items have {what}; a paired bootstrap needs both systems scored on every "
                "item. Filter the log in the query engine first (e.g. keep items scored by both systems, "
                "WHERE ... IS NOT NULL); rows are never dropped silently."
            )
    if n_items < 2:
        raise InputError(
            f"found {n_items} item(s) with scores of systems {a!r} and {b!r}; check the `system` values "
            "(they must match the column's values exactly) and that there are at least 2 items."
        )
    observed = float(summary["observed"])
    res = engine.query(resample_sql)
    sums = res.sort_values("rb")
    dist = sums["swd"].to_numpy(float) / sums["sw"].to_numpy(float)
    if len(dist) != n_resamples or not np.all(np.isfinite(dist)):
        raise InputError("a resample had total weight 0 (too few items for a Poisson bootstrap); use more items.")
    center = float(dist.mean())
    null = dist - center
    c = count_extreme(null, observed, alternative)
    return TestResult(
        statistic=observed,
        pvalue=(c + 1) / (n_resamples + 1),
        null_distribution=null,
        alternative=alternative,
        method=f"paired Poisson bootstrap test, shift method (mean difference, {engine.dialect})",
        estimate=observed,
        confidence_interval=percentile_interval(dist, level),
        details={"count": c, "n_resamples": n_resamples, "n_items": n_items, "seed_offset": seed_offset,
                 "bootstrap_mean": center, "bootstrap_se": float(dist.std(ddof=1)), "engine": engine.dialect,
                 "a": a, "b": b},
    )
