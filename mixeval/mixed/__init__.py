"""The mixed-model engine (lme4 semantics, pure numpy/scipy): one core for every family.

Every fit is a family (:class:`Family` of :mod:`.families`: Gaussian, binomial, Poisson, glmmTMB's negative
binomial, beta, ordered beta and beta-binomial, ordinal; one module per family and a registry) plus a random-effects
structure
(:mod:`._reterms`) plus a data source, fitted through the same stages and returned as a
:class:`MixedResult` (:class:`LmerResult`, :class:`GlmerResult`) whose evaluator ``fit.model``
(:class:`FitModel`) serves profiles, the parametric bootstrap, simulation and df computations.

Stages, each callable on its own: :func:`build_design` (lme4's ``lFormula``),
:func:`compute_stats` (one pass over the rows), :func:`profiled_deviance`
(``mkLmerDevfun``), :func:`optimize_theta` (``optimizeLmer`` + ``checkConv``),
:func:`make_result` (``mkMerMod``); :func:`lmer` chains them (through :func:`fit_design`, which
fits a centred and scaled copy and maps back; models with random slopes go to the general evaluator
of :mod:`._general`) and
:func:`compare` performs the likelihood-ratio test of nested fits.
:func:`glmer` fits generalised linear mixed models (every family with ``engine = "glmer"``) on the same
random-effects structure
(:mod:`._reterms`): PIRLS and the Laplace / adaptive Gauss-Hermite deviance (:mod:`._pirls`), lme4's two
optimisation stages (:mod:`._glmm`), the frozen :class:`GlmerResult`.
"""

from ._base import MixedResult
from ._clmm_ddf import clmm_covariance_at
from ._clmm_fit import clmm, nominal_test, threshold_spread_test
from ._clmm_result import ClmmResult
from ._design import Design, GroupingFactor, build_design
from ._deviance import deviance_parts, profiled_deviance
from ._family import Family, get_family
from ._fit import fit_design, fit_from_stats, lmer
from ._glmer import glmer
from ._glmm_result import GlmerResult
from ._lrt import compare
from ._optimize import optimize_theta
from ._profile import profile_interval
from ._result import LmerResult, make_result
from ._stats import SufficientStats, compute_stats

__all__ = [
    "lmer",
    "glmer",
    "MixedResult",
    "Family",
    "get_family",
    "clmm",
    "nominal_test",
    "threshold_spread_test",
    "clmm_covariance_at",
    "ClmmResult",
    "GlmerResult",
    "compare",
    "LmerResult",
    "Design",
    "GroupingFactor",
    "SufficientStats",
    "build_design",
    "compute_stats",
    "deviance_parts",
    "profiled_deviance",
    "optimize_theta",
    "profile_interval",
    "fit_from_stats",
    "fit_design",
    "make_result",
]

from . import engine as engine  # noqa: E402  the building blocks for the other packages (``mixeval.mixed.engine``)
