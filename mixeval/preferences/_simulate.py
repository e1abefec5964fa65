"""Simulated arena logs with known abilities, judge position biases and prompt effects (for tests,
benchmarks, the notebook and coverage studies)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit

from .._random import as_generator

__all__ = ["simulate_arena", "simulation_targets"]


def simulate_arena(n_votes: int, abilities, *, n_judges: int = 0, n_prompts: int = 0, position: float = 0.0,
                   judge_sd: float = 0.0, prompt_sd: float = 0.0, system_judge_sd: float = 0.0,
                   tie_tau: float = 0.0, random_state=None, return_effects: bool = False):
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
    return_effects : bool
        Also return the drawn random effects and each vote's linear predictor (the truth of coverage studies
        that condition on the judges and prompts at hand).

    Returns
    -------
    pandas.DataFrame
        Columns ``model_a``, ``model_b``, ``winner`` and ``judge`` / ``prompt`` when asked; the pair of
        systems of each vote is drawn uniformly among all pairs, its order at random.
    dict
        With ``return_effects=True``: ``eta`` (each vote's log-odds, ``model_a`` against ``model_b``),
        ``judge`` (position deviations), ``system_judge`` and ``system_prompt`` (systems x levels), zeros where
        not drawn.

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
    effects = {"judge": np.zeros(n_judges), "system_judge": np.zeros((k, n_judges)),
               "system_prompt": np.zeros((k, n_prompts))}
    if n_judges:
        j = rng.integers(0, n_judges, n_votes)
        effects["judge"] = rng.normal(0, judge_sd, n_judges)
        eta = eta + effects["judge"][j]
        if system_judge_sd:
            sj = effects["system_judge"] = rng.normal(0, system_judge_sd, (k, n_judges))
            eta = eta + sj[a, j] - sj[b, j]
        out["judge"] = np.array([f"judge{v:02d}" for v in range(n_judges)], dtype=object)[j]
    if n_prompts:
        q = rng.integers(0, n_prompts, n_votes)
        if prompt_sd:
            sp = effects["system_prompt"] = rng.normal(0, prompt_sd, (k, n_prompts))
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
    frame = pd.DataFrame(out)[cols]
    if return_effects:
        effects["eta"] = eta
        return frame, effects
    return frame


def simulation_targets(log: pd.DataFrame, eta: np.ndarray, abilities, *, position: float,
                       variance: float) -> dict[str, np.ndarray]:
    """What each fit of a simulated log estimates (abilities summing to 0, systems sorted by name), for coverage
    studies that score every interval against its own target.

    Parameters
    ----------
    log : pandas.DataFrame
        A log of :func:`simulate_arena` (no ties).
    eta : ndarray
        Each vote's true log-odds (``return_effects=True``).
    abilities : sequence of float or dict
        The true abilities, as given to :func:`simulate_arena`.
    position : float
        The true mean position bias.
    variance : float
        Latent variance of one vote's random deviations (``judge_sd^2 + 2 system_judge_sd^2 + 2 prompt_sd^2``).

    Returns
    -------
    dict
        ``"conditional"``: the abilities themselves (a typical judge and prompt), the target of a mixed model's
        abilities; ``"population"``: the population-averaged abilities (new judges and prompts,
        :func:`~mixeval.preferences._scales.implied_abilities`), the target of its ``marginal_abilities()`` and of
        a fixed-effects fit when judges are a sample; ``"these_judges"``: the abilities a fixed-effects fit with a
        position term converges to given the judges and prompts drawn (each vote's true probability).

    Examples
    --------
    >>> log, fx = simulate_arena(500, {"a": 0.5, "b": 0.0, "c": -0.5}, n_judges=4, system_judge_sd=0.5,
    ...                          random_state=0, return_effects=True)
    >>> t = simulation_targets(log, fx["eta"], {"a": 0.5, "b": 0.0, "c": -0.5}, position=0.0, variance=0.5)
    >>> t["conditional"].tolist(), bool(abs(t["population"][0]) < 0.5)
    ([0.5, 0.0, -0.5], True)
    """
    from ._log import VoteLog, read_log
    from ._scales import distinct_pairs, implied_abilities, project

    named = dict(abilities) if isinstance(abilities, dict) else {
        f"sys{j:02d}": float(v) for j, v in enumerate(abilities)}
    systems = tuple(sorted(named))
    s = np.array([named[k] for k in systems], dtype=float)
    rows = distinct_pairs(read_log(log.assign(winner="model_a")))
    population = implied_abilities(rows, s, position_bias=position, variance=variance)[0]
    p = pd.Series(expit(eta)).groupby([log.model_a.to_numpy(), log.model_b.to_numpy()]).agg(["mean", "size"])
    a = np.array([systems.index(x) for x, _ in p.index])
    b = np.array([systems.index(y) for _, y in p.index])
    pairs = VoteLog(systems, a, b, np.full(a.size, 2), p["size"].to_numpy(dtype=float),
                    covariates=np.zeros((a.size, 0)))
    probs = np.vstack([1 - p["mean"].to_numpy(), np.zeros(a.size), p["mean"].to_numpy()])
    these = project(pairs, probs, ties="drop", target="model", reference=None, position=True)[0]
    return {"conditional": s - s.mean(), "population": population, "these_judges": these}
