"""A tiny, self-made translation-style text set for worked examples of local accuracy.

Built deterministically in code (no files, no external data): reference sentences
are drawn from a small vocabulary, and three made-up "systems" corrupt them in
different ways, so that the word-dropping perturbation of Deviyani & Diaz is
sometimes *not* degrading (dropping an inserted word improves the output) and the
metrics' local accuracies differ between systems and sentence lengths.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._random import as_generator

__all__ = ["example_translations"]

_VOCABULARY = (
    "the a this that dish soup bread tea river city road house garden window table "
    "child teacher doctor farmer friend tastes looks seems is was very really quite "
    "good bad warm cold old new small large quiet busy near far today yesterday "
    "slowly quickly always never often and but with without under over"
).split()

_FILLERS = ("really", "very", "just", "indeed", "somewhat", "actually")


def _system_output(system: str, ref: list[str], rng: np.random.Generator) -> list[str]:
    words = list(ref)
    if system == "faithful":
        # one substitution in a sentence of any length
        i = int(rng.integers(len(words)))
        words[i] = str(rng.choice(_VOCABULARY))
    elif system == "verbose":
        # inserts filler words (about one per four words) and makes one substitution
        n_insert = max(1, len(words) // 4)
        for _ in range(n_insert):
            words.insert(int(rng.integers(len(words) + 1)), str(rng.choice(_FILLERS)))
        i = int(rng.integers(len(words)))
        words[i] = str(rng.choice(_VOCABULARY))
    elif system == "terse":
        # drops about one word in five and swaps two neighbours
        keep = rng.random(len(words)) > 0.2
        keep[0] = True
        words = [w for w, k in zip(words, keep) if k]
        if len(words) >= 2:
            i = int(rng.integers(len(words) - 1))
            words[i], words[i + 1] = words[i + 1], words[i]
    else:  # pragma: no cover - internal
        raise ValueError(system)
    return words


def example_translations(n_contexts: int = 40, *, seed: int = 20240501) -> pd.DataFrame:
    """A small made-up MT-style evaluation set: references and three systems' outputs.

    Parameters
    ----------
    n_contexts : int, default 40
        Number of reference sentences (evaluation contexts).
    seed : int
        Seed of the generator; the default reproduces the documented examples.

    Returns
    -------
    pandas.DataFrame
        One row per (context, system): ``context`` (int id), ``reference``, ``system``
        (``faithful``, ``verbose``, ``terse``), ``hypothesis`` and ``length``
        (``short`` for references of at most 8 words, else ``long``).

    Examples
    --------
    >>> data = example_translations()
    >>> data.shape, sorted(data["system"].unique())
    ((120, 5), ['faithful', 'terse', 'verbose'])
    """
    rng = as_generator(seed, "seed")
    rows = []
    for x in range(int(n_contexts)):
        length = int(rng.integers(4, 17))
        ref = [str(w) for w in rng.choice(_VOCABULARY, size=length)]
        for system in ("faithful", "verbose", "terse"):
            hyp = _system_output(system, ref, rng)
            rows.append(
                {
                    "context": x,
                    "reference": " ".join(ref),
                    "system": system,
                    "hypothesis": " ".join(hyp),
                    "length": "short" if length <= 8 else "long",
                }
            )
    return pd.DataFrame(rows)
