"""Uncertainty of estimates and designs: confidence intervals of mixed-model fits (profile likelihood,
parametric bootstrap as lme4's ``bootMer``, Wald), intervals for reliability coefficients and D-studies,
and power by simulation.

Everything here works through the small interface :class:`FitModel` that a fit offers (its ML deviance
as a function of the variance parameters, simulate-from-fit, refit-with-new-response);
:class:`LmmFitModel` implements it for :func:`mixeval.lmer` fits, :class:`GlmmFitModel` for
:func:`mixeval.glmer` fits (binomial, Poisson).
"""

from ._bootstrap import BootstrapResult, bootstrap_fit, parametric_refits
from ._confint import ConfintResult, confint, wald_intervals
from ._glmm_model import GlmmFitModel
from ._interface import FitModel, LmmFitModel, RefitSummary
from ._models import as_fit_model
from ._power import PowerResult, closed_form_paired_power, crossed_design, power_from_components
from ._profile import profile_interval, profile_intervals, profile_zeta
from ._reliability import coefficient_interval, component_draws, dstudy_intervals, phi_draws, phi_interval
from ._study import study_power, variance_table_ci

__all__ = [
    "confint",
    "ConfintResult",
    "wald_intervals",
    "bootstrap_fit",
    "BootstrapResult",
    "parametric_refits",
    "FitModel",
    "LmmFitModel",
    "GlmmFitModel",
    "RefitSummary",
    "as_fit_model",
    "profile_interval",
    "profile_intervals",
    "profile_zeta",
    "phi_interval",
    "phi_draws",
    "dstudy_intervals",
    "component_draws",
    "coefficient_interval",
    "variance_table_ci",
    "study_power",
    "power_from_components",
    "PowerResult",
    "crossed_design",
    "closed_form_paired_power",
]
