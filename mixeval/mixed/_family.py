"""The family layer as the engine's modules import it: :mod:`mixeval.mixed.families` (one :class:`Family` protocol,
one module per family, the registry) re-exported, and the warnings of a Gaussian model fitted to 0/1 scores or
small counts.
"""

from __future__ import annotations

import numpy as np

from ..errors import caller_stacklevel
from .families import DISTRIBUTION_VARIANCE, FAMILIES, Family, get_family

__all__ = ["DISTRIBUTION_VARIANCE", "FAMILIES", "GAUSSIAN", "Family", "discrete_response_kind", "get_family",
           "warn_discrete_response"]


def discrete_response_kind(y: np.ndarray) -> str | None:
    """``"binary"`` for a response taking only the values 0 and 1, ``"counts"`` for small counts, else None.

    Small counts: whole numbers >= 0 with a mean of at most 3 and at least 20% zeros (the shape where a
    Gaussian model's variance, constant in the mean, is most wrong; ratings on a 1..5 scale have no zeros).

    Examples
    --------
    >>> discrete_response_kind(np.array([0, 1, 1, 0.0])), discrete_response_kind(np.array([0, 0, 2, 1, 5.0]))
    ('binary', 'counts')
    >>> discrete_response_kind(np.array([1, 2, 3, 4, 5.0])) is None
    True
    """
    y = np.asarray(y, dtype=float)
    if y.size == 0 or not np.all(np.isfinite(y)):
        return None
    if np.all((y == 0) | (y == 1)):
        return "binary" if np.any(y == 0) and np.any(y == 1) else None
    if np.all(y >= 0) and np.all(y == np.round(y)) and y.mean() <= 3 and np.mean(y == 0) >= 0.2:
        return "counts"
    return None


def warn_discrete_response(y: np.ndarray, name: str) -> None:
    """Warn (:class:`~mixeval.errors.FamilyWarning`) when a Gaussian model is fitted to 0/1 scores or small counts.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_discrete_response(np.array([0.0, 1.0, 1.0, 0.0]), "correct")
    >>> caught[0].category.__name__
    'FamilyWarning'
    """
    import warnings

    from ..errors import FamilyWarning

    kind = discrete_response_kind(y)
    if kind == "binary":
        warnings.warn(
            f"the response {name!r} only takes the values 0 and 1; a linear mixed model ignores that a probability "
            "is bounded (its variance components and tests are on the wrong scale). Fit a binomial GLMM: "
            "mixeval.glmer(formula, data, family=\"binomial\"), Study(..., family=\"binomial\") or --family binomial.",
            FamilyWarning, stacklevel=caller_stacklevel())
    elif kind == "counts":
        warnings.warn(
            f"the response {name!r} looks like small counts (whole numbers >= 0, many zeros); a linear mixed model "
            "assumes a variance that does not grow with the mean. Consider a Poisson GLMM: "
            "mixeval.glmer(formula, data, family=\"poisson\") or --family poisson.",
            FamilyWarning, stacklevel=caller_stacklevel())


#: The Gaussian family of every linear mixed model (``lmer``).
GAUSSIAN: Family = get_family("gaussian")
