"""emmeans' names of the multiplicity adjustments and the check of ``adjust=`` (one home for every table of the
significance package)."""

from __future__ import annotations

from ..errors import InputError

__all__ = ["ADJUSTMENTS", "canonical_adjust"]

ADJUSTMENTS: dict[str, str] = {"tukey": "tukey", "holm": "holm", "bonferroni": "bonferroni", "bh": "BH",
                               "fdr": "BH", "hochberg": "hochberg", "by": "BY", "none": "none"}


def canonical_adjust(adjust: object) -> str:
    """The name of the multiplicity adjustment ``adjust`` in emmeans' spelling (:data:`ADJUSTMENTS`, any case);
    an :class:`~mixeval.errors.InputError` listing the choices for any other value.

    Examples
    --------
    >>> canonical_adjust("Tukey"), canonical_adjust("fdr")
    ('tukey', 'BH')
    >>> canonical_adjust("scheffe")
    Traceback (most recent call last):
    ...
    mixeval.errors.InputError: unknown adjustment adjust='scheffe'; choose one of 'tukey', 'holm', 'bonferroni',
    'BH', 'none' (also 'hochberg', 'BY').
    """
    if not isinstance(adjust, str):
        raise InputError(f"`adjust` must be a string such as 'tukey'; got {adjust!r}.")
    try:
        return ADJUSTMENTS[adjust.strip().lower()]
    except KeyError:
        raise InputError(
            f"unknown adjustment adjust={adjust!r}; choose one of 'tukey', 'holm', 'bonferroni', 'BH', 'none' "
            "(also 'hochberg', 'BY')."
        ) from None
