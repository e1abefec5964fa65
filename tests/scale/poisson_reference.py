"""Test helper: the Poisson bootstrap's resampled statistics computed in memory (the reference the
engines' SQL is checked against)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from mixeval.scale import poisson_weights


def in_memory_reference(df: pd.DataFrame, *, score: str, system: str, item: str, a: object, b: object,
                        n_resamples: int, random_state: object) -> np.ndarray:
    """The resampled statistics computed in memory with :func:`poisson_weights` (for checks)."""
    sub = df[df[system].isin([a, b])]
    means = sub.groupby([item, system])[score].mean().unstack(system)
    means = means.sort_index()
    d = (means[a] - means[b]).to_numpy(float)
    i = np.arange(d.size)
    w = poisson_weights(i[None, :], np.arange(n_resamples)[:, None], random_state)
    return (w @ d) / w.sum(axis=1)
