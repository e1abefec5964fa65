"""The fixed-effect tables every mixed-model result shares (``lmer`` and ``glmer`` fits)."""

from __future__ import annotations

import pandas as pd

__all__ = ["FixedEffectTables"]


class FixedEffectTables:
    """``fixef`` and ``vcov`` of a result with ``coef``, ``cov_coef`` and ``fixed_names`` (link scale for a GLMM)."""

    @property
    def fixef(self) -> pd.Series:
        """Fixed-effect estimates indexed by coefficient name (on the link scale for a GLMM)."""
        return pd.Series(self.coef, index=list(self.fixed_names), name="estimate")

    @property
    def vcov(self) -> pd.DataFrame:
        """Covariance matrix of the fixed effects."""
        names = list(self.fixed_names)
        return pd.DataFrame(self.cov_coef, index=names, columns=names)
