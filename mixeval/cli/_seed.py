"""The seed of the commands that draw random numbers: its help text and the seed a run uses."""

from __future__ import annotations

from ..errors import InputError

__all__ = ["SEED_HELP", "resolve_seed"]

SEED_HELP = ("random seed (same seed, same result); without it a fresh seed is drawn from the operating "
             "system and printed, so that the run can be repeated with --seed")


def resolve_seed(seed: int | None) -> int:
    """The seed a command uses: ``seed`` itself, or fresh entropy from the operating system
    (``numpy.random.SeedSequence().entropy``, a 128-bit integer) when none was given."""
    if seed is None:
        import numpy as np

        return int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]  # stubs: a fresh entropy is an int
    if seed < 0:
        raise InputError(f"--seed must be a non-negative integer; got {seed}.")
    return seed
