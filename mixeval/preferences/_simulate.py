"""Simulated arena logs with known abilities, judge position biases and prompt effects (for tests,
benchmarks, the notebook and coverage studies)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit

from .._random import as_generator

__all__ = ["simulate_arena"]


def simulate_arena(n_votes: int, abilities, *, n_judges: int = 0, n_prompts: int = 0, position: float = 0.0,
                   judge_sd: float = 0.0, prompt_sd: float = 0.0, system_judge_sd: float = 0.0,
                   tie_tau: float = 0.0, random_state=None) -> pd.DataFrame:
    """A simulated log of pairwise votes.

    Parameters
    ----------
    n_votes : int
    abilities : sequence of float or dict
        True abilities (log-odds scale); a dict maps system names to them.
    n_judges, n_prompts : int
        Numbers of judges and prompts (0: no such column).
    position : float
        Mean first-position bias (log-odds).
    judge_sd : float
        SD of a judge's deviation from the mean position bias.
    prompt_sd : float
        SD of a system's ability deviation on a prompt (system-by-prompt effects).
    system_judge_sd : float
        SD of a judge's taste for a system (system-by-judge effects).
    tie_tau : float
        Ties by the cumulative logit with thresholds ``-tau, tau`` (0: no ties).
    random_state : int, Generator or None

    Returns
    -------
    pandas.DataFrame
        Columns ``model_a``, ``model_b``, ``winner`` and ``judge`` / ``prompt`` when asked; the pair of
        systems of each vote is drawn uniformly among all pairs, its order at random.

    Examples
    --------
    >>> log = simulate_arena(5, {"x": 0.5, "y": 0.0, "z": -0.5}, n_judges=2, random_state=1)
    >>> list(log.columns)
    ['model_a', 'model_b', 'winner', 'judge']
    """
    rng = as_generator(random_state)
    if isinstance(abilities, dict):
        names, s = list(abilities), np.asarray(list(abilities.values()), dtype=float)
    else:
        s = np.asarray(abilities, dtype=float)
        names = [f"sys{j:02d}" for j in range(s.size)]
    k = s.size
    a = rng.integers(0, k, n_votes)
    b = (a + rng.integers(1, k, n_votes)) % k
    eta = s[a] - s[b] + position
    out = {"model_a": np.asarray(names, dtype=object)[a], "model_b": np.asarray(names, dtype=object)[b]}
    if n_judges:
        j = rng.integers(0, n_judges, n_votes)
        eta = eta + rng.normal(0, judge_sd, n_judges)[j]
        if system_judge_sd:
            sj = rng.normal(0, system_judge_sd, (k, n_judges))
            eta = eta + sj[a, j] - sj[b, j]
        out["judge"] = np.array([f"judge{v:02d}" for v in range(n_judges)], dtype=object)[j]
    if n_prompts:
        q = rng.integers(0, n_prompts, n_votes)
        if prompt_sd:
            sp = rng.normal(0, prompt_sd, (k, n_prompts))
            eta = eta + sp[a, q] - sp[b, q]
        out["prompt"] = q.astype(np.int64)
    u = rng.random(n_votes)
    if tie_tau > 0:
        lo, hi = expit(-tie_tau - eta), expit(tie_tau - eta)
        winner = np.where(u < lo, "model_b", np.where(u < hi, "tie", "model_a"))
    else:
        winner = np.where(u < expit(eta), "model_a", "model_b")
    out["winner"] = winner
    cols = ["model_a", "model_b", "winner"] + [c for c in ("judge", "prompt") if c in out]
    return pd.DataFrame(out)[cols]
