"""One way to turn ``random_state`` into a numpy Generator, for every function that draws."""

from __future__ import annotations

import numpy as np

from .errors import InputError, InputTypeError

__all__ = ["as_generator", "RandomState"]

RandomState = "int | numpy.random.SeedSequence | numpy.random.Generator | None"
"""What every ``random_state=`` argument of mixeval accepts (for documentation)."""


def as_generator(random_state: object, argument: str = "random_state") -> np.random.Generator:
    """A numpy Generator from ``random_state``.

    ``None`` draws fresh entropy from the operating system (a different result each call); a
    non-negative int or a :class:`numpy.random.SeedSequence` seeds ``numpy.random.default_rng``
    (same seed, same result); a :class:`numpy.random.Generator` is used as is (and advanced).
    Anything else, ``True``/``False`` included (numpy would take them for the seeds 1 and 0), is an
    error naming the argument.

    Examples
    --------
    >>> bool(as_generator(7).integers(0, 100) == np.random.default_rng(7).integers(0, 100))
    True
    >>> gen = np.random.default_rng(1)
    >>> as_generator(gen) is gen
    True
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, (bool, np.bool_)):
        raise InputTypeError(
            f"`{argument}` must be None, an int seed, a numpy SeedSequence or a numpy Generator; got {random_state!r} "
            "(a bool is not a seed)."
        )
    if isinstance(random_state, (int, np.integer)):
        if random_state < 0:
            raise InputError(f"`{argument}` must be a non-negative int seed; got {random_state}.")
        return np.random.default_rng(int(random_state))
    if random_state is None or isinstance(random_state, np.random.SeedSequence):
        return np.random.default_rng(random_state)
    raise InputTypeError(
        f"`{argument}` must be None, an int seed, a numpy SeedSequence or a numpy Generator; "
        f"got {type(random_state).__name__}."
    )
