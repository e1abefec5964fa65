"""The designs on which ``df="satterthwaite-upper"`` (experimental) was calibrated, and its refusal elsewhere.

The upper-bound df (:mod:`mixeval.significance._satterthwaite`) were calibrated in an idealised model with
components from 3-20 levels and checked by simulation on crossed, balanced random-intercept designs. They
take each component's estimate as a scaled chi-square with ``levels - 1`` df, which is wrong or untested:

* for a component with 2 levels (``k = 1``: not in the calibration);
* for a grouping factor nested in a fixed-effect cell (seeds nested in systems, ``(1|system:seed)``): the
  containment df are ``S (n - 1)``, not ``S n - 1``;
* for random slopes (several covariance parameters per term);
* for unbalanced cells (a grouping factor's levels not seen equally often in every fixed-effect cell).

:func:`upper_range_problems` lists what takes a fit outside that range; ``df_inference`` refuses it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..mixed import MixedResult

__all__ = ["upper_range_problems"]


def _cells(X: np.ndarray) -> np.ndarray:
    """Fixed-effect cell of every row: the index of its distinct row of ``X``."""
    return np.unique(np.round(np.asarray(X, dtype=float), 12), axis=0, return_inverse=True)[1].ravel()


def _layout_problem(name: str, codes: np.ndarray, cells: np.ndarray) -> str | None:
    counts = np.zeros((int(codes.max()) + 1, int(cells.max()) + 1), dtype=int)
    np.add.at(counts, (codes, cells), 1)
    seen = (counts > 0).sum(axis=1)
    if np.all(counts == counts.flat[0]):
        return None
    if np.all(seen == seen[0]) and seen[0] < counts.shape[1] and len(np.unique(counts[counts > 0])) == 1:
        return (f"{name!r} is nested in the fixed effects (each level is seen in {seen[0]} of "
                f"{counts.shape[1]} fixed-effect cells): its df are not levels - 1")
    return f"{name!r} is unbalanced across the fixed-effect cells (its levels are not seen equally often in each)"


def upper_range_problems(fit: MixedResult) -> list[str]:
    """Why ``fit`` lies outside the calibrated range of ``df="satterthwaite-upper"`` (empty: inside).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import lmer
    >>> rng = np.random.default_rng(0)
    >>> d = pd.DataFrame([(i, s, m) for i in range(20) for s in range(2) for m in "AB"],
    ...                  columns=["item", "seed", "system"])
    >>> d["score"] = rng.normal(size=len(d))
    >>> upper_range_problems(lmer("score ~ system + (1|item) + (1|seed)", d))
    ["'seed' has 2 levels (k = 1 df; calibrated from 3 levels)"]
    """
    design = getattr(fit, "design", None)
    groups = getattr(design, "groups", ())
    problems = [f"{g.name!r} has random slopes ({', '.join(g.coef_names)})"
                for g in groups if not g.is_intercept]
    problems += [f"{g.name!r} has 2 levels (k = 1 df; calibrated from 3 levels)"
                 for g in groups if g.n_levels == 2]
    X = getattr(design, "X", None)
    if X is None:
        return problems
    cells = _cells(X)
    for g in groups:
        problem = _layout_problem(g.name, np.asarray(g.codes), cells)
        if problem is not None:
            problems.append(problem)
    return problems
