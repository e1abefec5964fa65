"""Uncertainty of estimates and designs: confidence intervals of mixed-model fits (profile likelihood,
parametric bootstrap as lme4's ``bootMer``, Wald), intervals for reliability coefficients and D-studies,
and power by simulation (R's simr) for every family and random-effects structure: :meth:`mixeval.Study.power` from a
fitted study, :func:`power_from_components` for planning without data.

Everything here works through the protocol :class:`FitModel` that every fit offers as ``fit.model`` (its ML
deviance as a function of the variance parameters, simulate-from-fit, refit-with-new-response), chosen by
the engine when the model is fitted (:mod:`mixeval.mixed`): :class:`LmmFitModel` for random-intercept
:func:`mixeval.lmer` fits, the slope model for random slopes, :class:`GlmmFitModel` for :func:`mixeval.glmer`
fits, :class:`ClmmFitModel` for :func:`mixeval.clmm` fits (ordinal ratings). The profile, bootstrap and Wald
intervals live with the engine (``fit.confint()``, ``fit.bootstrap()``) and are the ones exported here.
"""

from ..mixed import profile_interval
from ..mixed.engine import (
                            BootstrapResult,
                            ClmmFitModel,
                            ConfintResult,
                            FitModel,
                            GlmmFitModel,
                            LmmFitModel,
                            RefitSummary,
                            as_fit_model,
                            bootstrap_fit,
                            confint,
                            parametric_refits,
                            profile_intervals,
                            profile_zeta,
                            wald_intervals,
)
from ._components import power_from_components
from ._power import PowerResult, closed_form_paired_power
from ._power_design import crossed_design
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
    "ClmmFitModel",
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
