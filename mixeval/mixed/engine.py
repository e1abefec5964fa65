"""The engine's building blocks for the packages built on it (lme4's exported stages: ``mkReTrms``,
``mkLmerDevfun``, ``optimizeLmer``, ...).

:mod:`mixeval.mixed` exports what a user fits with (``lmer``, ``glmer``, ``clmm``, the results and the main stages);
this module exports the pieces that the other packages of mixeval (and those who extend it) assemble fits and
inferences from, so that no package reaches into the engine's private modules: the random-effects structure
(:class:`ReStructure`, :class:`ReTerm`), the GLMM fit of a hand-built structure (:func:`fit_glmm`), the cumulative
link model's problem, deviance and optimiser (:class:`ClmmProblem`, :class:`ClmmDeviance`, :func:`threshold_design`,
:func:`start_theta`, :func:`optimize_clmm`), the evaluators behind profiles and the parametric bootstrap
(:class:`FitModel` and its implementations, documented with :mod:`mixeval.uncertainty`), df helpers, row checks
and :func:`single_threaded_blas`.

Examples
--------
>>> from mixeval.mixed import engine
>>> engine.ReStructure.__name__, callable(engine.optimize_clmm)
('ReStructure', True)
"""

from ._blas import single_threaded_blas
from ._bootstrap import BootstrapResult, bootstrap_fit, parametric_refits
from ._clmm import ClmmDeviance, ClmmProblem, optimize_clmm, start_theta, threshold_design
from ._clmm_ddf import clmm_satterthwaite_df
from ._clmm_model import ClmmFitModel
from ._clmm_result import category_probabilities
from ._confint import ConfintResult, confint, wald_intervals
from ._design import check_group_levels, complete_rows, weights_array
from ._family import warn_discrete_response
from ._glmm_model import GlmmFitModel
from ._glmm_result import fit_glmm
from ._lmm_model import LmmFitModel
from ._lrt import boundary_mixture_pvalue
from ._ordinal import get_ordinal
from ._profile import profile_intervals, profile_zeta
from ._protocol import FitModel, RefitSummary, as_fit_model
from ._reterms import ReStructure, ReTerm
from ._satterthwaite import satterthwaite_df

__all__ = [
    "ReStructure",
    "ReTerm",
    "fit_glmm",
    "ClmmProblem",
    "ClmmDeviance",
    "threshold_design",
    "start_theta",
    "optimize_clmm",
    "get_ordinal",
    "category_probabilities",
    "clmm_satterthwaite_df",
    "satterthwaite_df",
    "boundary_mixture_pvalue",
    "check_group_levels",
    "complete_rows",
    "weights_array",
    "warn_discrete_response",
    "single_threaded_blas",
    "FitModel",
    "RefitSummary",
    "as_fit_model",
    "LmmFitModel",
    "GlmmFitModel",
    "ClmmFitModel",
    "parametric_refits",
    "bootstrap_fit",
    "BootstrapResult",
    "confint",
    "ConfintResult",
    "wald_intervals",
    "profile_intervals",
    "profile_zeta",
]
