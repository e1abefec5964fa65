"""The :class:`~mixeval.uncertainty.FitModel` of a fitted model: the one place that knows every implementation.

:mod:`._interface` defines the protocol and the random-intercept model; the slope and GLMM models build on it
in their own modules; this module, above all three, picks one for a fit (kept apart so that no module of the
package imports one that imports it back).
"""

from __future__ import annotations

from ..errors import InputError
from ..mixed import GlmerResult, LmerResult
from ._glmm_model import GlmmFitModel
from ._interface import FitModel, LmmFitModel
from ._slopes_model import SlopeFitModel

__all__ = ["as_fit_model"]


def as_fit_model(fit) -> FitModel:
    """The :class:`FitModel` of a fit: an :class:`LmerResult`, a :class:`~mixeval.mixed.GlmerResult`
    (:class:`~mixeval.uncertainty.GlmmFitModel`), a result with an ``uncertainty_model()`` method
    returning its :class:`FitModel`, or anything implementing the interface.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval import lmer
    >>> rng = np.random.default_rng(0)
    >>> g = np.repeat(np.arange(15), 4)
    >>> df = pd.DataFrame({"g": g, "y": rng.normal(size=15)[g] + rng.normal(size=60)})
    >>> fit = lmer("y ~ 1 + (1|g)", df)
    >>> as_fit_model(fit).nobs
    60
    """
    hook = getattr(fit, "uncertainty_model", None)
    if callable(hook):  # a result type that brings its own FitModel
        return hook()
    if isinstance(fit, LmerResult):
        if fit.has_slopes:  # random slopes: the general evaluator's FitModel
            return SlopeFitModel(fit)
        return LmmFitModel(fit)
    if isinstance(fit, GlmerResult):
        return GlmmFitModel(fit)
    if isinstance(fit, FitModel):
        return fit
    raise InputError(f"expected a fitted mixed model (mixeval.lmer or mixeval.glmer); got {type(fit).__name__}.")
