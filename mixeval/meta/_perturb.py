"""Degrading perturbations of system outputs (Deviyani & Diaz): pluggable, seeded.

A perturbation is any callable ``perturbation(output, rng) -> perturbed_output``
where ``rng`` is a :class:`numpy.random.Generator`; it should, with high
probability, make the output worse.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._random import as_generator
from ..errors import InputError, InputTypeError

__all__ = [
    "Perturbation",
    "DropWords",
    "RandomTranspositions",
    "n_transpositions",
    "perturb",
    "as_generator",
]

Perturbation = Callable[[Any, np.random.Generator], Any]


def _round_half_up(x: float) -> int:
    return int(math.floor(x + 0.5 + 1e-9))


@dataclass(frozen=True)
class DropWords:
    """Drop ``fraction`` of the words of a text output, rounded to the nearest integer.

    Parameters
    ----------
    fraction : float, default 0.2
        Share of the (whitespace-separated) words removed; the seed uses 20%.

    Notes
    -----
    A text of ``n`` words loses ``k = floor(fraction * n + 1/2)`` words at positions drawn
    uniformly without replacement; the remaining words keep their order and are joined by
    single spaces. With ``fraction = 0.2``, texts of one or two words are unchanged
    (``k = 0``), so their pair is a tie (which counts as a failure unless ``ties="half"``).

    Examples
    --------
    >>> import numpy as np
    >>> drop = DropWords(0.2)
    >>> drop.n_dropped(10), drop.n_dropped(8), drop.n_dropped(2)
    (2, 2, 0)
    >>> out = drop("the cat sat on the warm mat today", np.random.default_rng(0))
    >>> len(out.split())
    6
    """

    fraction: float = 0.2

    def __post_init__(self) -> None:
        f = self.fraction
        if not isinstance(f, (int, float)) or isinstance(f, bool) or not (0.0 <= f <= 1.0):
            raise InputError(f"`fraction` of words to drop must lie in [0, 1]; got {f!r}.")

    def n_dropped(self, n_words: int) -> int:
        """Number of words removed from a text of ``n_words`` words."""
        return min(n_words, _round_half_up(self.fraction * n_words))

    def __call__(self, output: str, rng: np.random.Generator) -> str:
        if not isinstance(output, str):
            raise InputTypeError(f"DropWords perturbs text; got {type(output).__name__} ({output!r}).")
        words = output.split()
        k = self.n_dropped(len(words))
        if k == 0:
            return " ".join(words)
        drop = set(rng.choice(len(words), size=k, replace=False).tolist())
        return " ".join(w for i, w in enumerate(words) if i not in drop)


def n_transpositions(n: int) -> int:
    """Number of random transpositions for a ranking of ``n`` items: ``round(n log10(n) / 2)``.

    Examples
    --------
    >>> n_transpositions(100), n_transpositions(10), n_transpositions(1)
    (100, 5, 0)
    """
    if n < 1:
        raise InputError(f"a ranking needs at least one item; got n = {n}.")
    return _round_half_up(n * math.log10(n) / 2.0)


@dataclass(frozen=True)
class RandomTranspositions:
    """Swap ``k`` random pairs of positions of a ranked list (default ``k = round(n log10(n) / 2)``).

    Parameters
    ----------
    k : int, optional
        Number of transpositions; by default ``n_transpositions(len(ranking))`` (100 for n = 100).

    Notes
    -----
    Each transposition swaps the items at two distinct positions ``i != j`` drawn uniformly.
    The seed takes ``k = n log(n) / 2`` from Diaconis & Shahshahani (1981), where this many
    random transpositions bring a permutation close to uniformly random; with the base-10
    logarithm that gives ``k = 100`` for ``n = 100`` as in the seed. The output has the type
    of the input (list, tuple or numpy array).

    Examples
    --------
    >>> import numpy as np
    >>> out = RandomTranspositions()(list(range(100)), np.random.default_rng(1))
    >>> sorted(out) == list(range(100)), out != list(range(100))
    (True, True)
    """

    k: int | None = None

    def __post_init__(self) -> None:
        if self.k is not None and (isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer)) or self.k < 0):
            raise InputError(f"`k` (number of transpositions) must be a non-negative integer; got {self.k!r}.")

    def __call__(self, ranking: Sequence[Any], rng: np.random.Generator) -> Any:
        if isinstance(ranking, (str, bytes)) or not hasattr(ranking, "__len__"):
            raise InputTypeError(f"RandomTranspositions perturbs a ranked list; got {type(ranking).__name__}.")
        items = list(ranking)
        n = len(items)
        k = n_transpositions(n) if self.k is None else int(self.k)
        if n >= 2:
            for _ in range(k):
                i, j = rng.choice(n, size=2, replace=False)
                items[i], items[j] = items[j], items[i]
        if isinstance(ranking, np.ndarray):
            return np.asarray(items, dtype=ranking.dtype)
        if isinstance(ranking, tuple):
            return tuple(items)
        return items


def perturb(
    outputs: Iterable[Any],
    perturbation: Perturbation | None = None,
    *,
    random_state: int | np.random.Generator | None = None,
) -> list[Any]:
    """Perturb every output once, in order, with one seeded random stream.

    Parameters
    ----------
    outputs : iterable
        System outputs (texts for :class:`DropWords`, ranked lists for :class:`RandomTranspositions`).
    perturbation : callable ``(output, rng) -> output``, default ``DropWords(0.2)``
    random_state : int, numpy Generator or None

    Returns
    -------
    list
        Perturbed outputs; identical seeds give identical lists.

    Examples
    --------
    >>> perturb(["a b c d e", "one two three"], random_state=0) == perturb(["a b c d e", "one two three"], random_state=0)
    True
    """
    pert = DropWords() if perturbation is None else perturbation
    if not callable(pert):
        raise InputTypeError(f"`perturbation` must be a callable (output, rng) -> output; got {pert!r}.")
    rng = as_generator(random_state)
    return [pert(o, rng) for o in outputs]
