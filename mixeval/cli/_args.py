"""Parsing flag values, each error naming the flag and showing the expected form."""

from __future__ import annotations

import math

from ..errors import InputError

__all__ = ["facet_pairs", "facet_sizes", "facet_ranges", "number_list"]


def facet_pairs(items: list[str] | None, flag: str, example: str) -> dict[str, str]:
    """``["rater=2", "occasion=3"] -> {"rater": "2", "occasion": "3"}``."""
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            raise InputError(f"{flag} must look like FACET=VALUE (e.g. {example}); got {item!r}.")
        out[key] = value
    return out


def facet_sizes(items: list[str] | None, flag: str = "--n") -> dict[str, float]:
    """``--n rater=2 occasion=3``: positive facet sample sizes."""
    out = {}
    for key, value in facet_pairs(items, flag, "rater=2").items():
        try:
            size = float(value)
        except ValueError:
            raise InputError(f"{flag} {key}={value}: the size must be a number (e.g. {key}=2).") from None
        if not size > 0:
            raise InputError(f"{flag} {key}={value}: the size must be positive.")
        out[key] = size
    return out


def facet_ranges(items: list[str] | None, flag: str = "--grid") -> dict[str, range]:
    """``--grid rater=1:12 occasion=5``: ``LO:HI`` (inclusive) or ``HI`` (meaning ``1:HI``) per facet."""
    out = {}
    for key, value in facet_pairs(items, flag, "rater=1:12").items():
        lo, sep, hi = value.partition(":")
        try:
            bounds = (int(lo), int(hi)) if sep else (1, int(lo))
        except ValueError:
            raise InputError(f"{flag} {key}={value}: give whole numbers LO:HI (e.g. {key}=1:12) or HI.") from None
        if not 1 <= bounds[0] <= bounds[1]:
            raise InputError(f"{flag} {key}={value}: need 1 <= LO <= HI (e.g. {key}=1:12).")
        out[key] = range(bounds[0], bounds[1] + 1)
    return out


def number_list(text: str, flag: str) -> list[float]:
    """``"15,55" -> [15.0, 55.0]``."""
    try:
        values = [float(c) for c in text.split(",")]
    except ValueError:
        raise InputError(f"{flag} must be comma-separated numbers (e.g. {flag} 15,55); got {text!r}.") from None
    if not all(math.isfinite(v) for v in values):
        raise InputError(f"{flag} must be finite numbers (e.g. {flag} 15,55); got {text!r}.")
    return values
