"""The assumed model of a power simulation laid out on a design (simr's ``extend`` and ``fixef<-``/``VarCorr<-``).

Stages: :func:`crossed_design` lays out a balanced design (facets x systems x replicates); :class:`PowerSpec` holds
what is assumed (formula, family, parameters by name); :func:`design_models` fits the model once to a response drawn
on the design (a pilot fit, whose evaluator and Hessian serve every refit) and sets its evaluator to the assumed
parameters with :meth:`~mixeval.uncertainty.FitModel.at`: the full model (which simulates), the null model without
the system effect (for the likelihood-ratio test) and the model of the Wald-type tests (REML for a Gaussian
Study, as its comparisons are), with the contrast of the compared pair and its df method.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._lmer import fit as fit_family
from ..errors import InputError
from ..mixed import Family
from ..significance import default_df, df_inference
from ._power_tests import TestPlan

__all__ = ["PowerSpec", "DesignModels", "crossed_design", "design_grid", "design_models"]

#: The column of the trials of a binomial or beta-binomial response in a simulated design.
TRIALS = "_trials"


def crossed_design(sizes: Mapping[str, int], systems: Sequence[str], *, system: str = "system",
                   replicates: int = 1) -> pd.DataFrame:
    """A fully crossed layout: every level of every facet with every system, ``replicates`` rows per cell.

    Examples
    --------
    >>> crossed_design({"item": 2, "rater": 2}, ["A", "B"]).shape
    (8, 3)
    """
    names = list(sizes)
    for f, k in sizes.items():
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise InputError(f"the number of levels of {f!r} must be a positive integer; got {k!r}.")
    if isinstance(replicates, bool) or not isinstance(replicates, (int, np.integer)) or replicates < 1:
        raise InputError(f"replicates must be an integer >= 1; got {replicates!r}.")
    levels = [[f"{f}{i + 1}" for i in range(int(sizes[f]))] for f in names]
    rows = list(itertools.product(*levels, list(systems), range(int(replicates))))
    frame = pd.DataFrame(rows, columns=[*names, system, "_replicate"])
    return frame.drop(columns="_replicate")


def design_grid(n: Mapping[str, Sequence[int] | int], facets: Sequence[str]) -> list[dict[str, int]]:
    """Every combination of the sizes in ``n`` (a facet's levels, or ``"replicates"``: rows per cell).

    Examples
    --------
    >>> design_grid({"item": [10, 20], "seed": 3}, ["item", "seed"])
    [{'item': 10, 'seed': 3}, {'item': 20, 'seed': 3}]
    """
    if not isinstance(n, Mapping) or not n:
        raise InputError("n must map facets to sizes, e.g. {'item': [100, 200, 400]}.")
    unknown = [f for f in n if f not in facets and f != "replicates"]
    if unknown:
        raise InputError(f"n names {unknown}, which are not facets of the model; facets: {list(facets)} (and "
                         "'replicates', rows per cell).")
    lists = []
    for f, sizes in n.items():
        values = list(np.atleast_1d(np.asarray(sizes, dtype=object)))
        if not values or any(isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) for v in values):
            raise InputError(f"n[{f!r}] must be a size or a list of sizes (integers); got {sizes!r}.")
        smallest = 1 if f == "replicates" else 2
        if min(values) < smallest:
            what = "rows per cell" if f == "replicates" else "levels of a random factor (one level has no variance)"
            raise InputError(f"n gives {f} = {min(values)}: too few {what}; give sizes >= {smallest}.")
        lists.append([int(v) for v in values])
    return [dict(zip(n, combo)) for combo in itertools.product(*lists)]


@dataclass(frozen=True)
class PowerSpec:
    """The assumed model of a power simulation.

    Attributes
    ----------
    formula : str
        ``response ~ system + random terms``: the model simulated and refitted.
    null_formula : str
        The same without the system effect (the likelihood-ratio test's null model).
    family : Family
    system : str
        The compared factor's column.
    systems : tuple of str
        Its levels (sorted: the first is the reference level of the treatment contrasts).
    pair : (str, str)
        The compared systems ``(a, b)``: the Wald-type tests' contrast is ``b - a``.
    truth : dict
        Every parameter of the model by its :attr:`~mixeval.uncertainty.FitModel.param_names` name (lme4's
        ``sd_(Intercept)|item``, ``sigma``, the family's parameters, thresholds ``"1|2"``, fixed effects).
    facets : dict
        The size of every main random factor (the design's levels when ``n`` does not change them).
    replicates : int
        Rows per cell of the design.
    levels : tuple or None
        The categories of ordinal ratings, in order.
    trials : int
        Trials per row of a binomial or beta-binomial response.
    reml : bool
        The Wald-type tests refit a Gaussian model by REML (as a Gaussian Study's comparisons).
    """

    formula: str
    null_formula: str
    family: Family
    system: str
    systems: tuple[str, ...]
    pair: tuple[str, str]
    truth: dict = field(repr=False)
    facets: dict = field(default_factory=dict)
    replicates: int = 1
    levels: tuple | None = None
    trials: int = 1
    reml: bool = True

    @property
    def response(self) -> str:
        from ..formula import parse_formula

        return parse_formula(self.formula).response

    @property
    def contrast_label(self) -> str:
        a, b = self.pair
        return f"{b} - {a}"

    def vector(self, names: Sequence[str]) -> np.ndarray:
        """The assumed parameters in the order ``names`` (a model's ``param_names``)."""
        missing = [n for n in names if n not in self.truth]
        if missing:
            raise InputError(f"the assumed model gives no value for {missing}; it has {sorted(self.truth)}.")
        return np.array([float(self.truth[n]) for n in names])


@dataclass
class DesignModels:
    """The evaluators of one design at the assumed parameters.

    Attributes
    ----------
    nobs : int
    full : FitModel
        The maximum-likelihood model at the assumed parameters (simulates; the GLRT's alternative).
    null : FitModel or None
        The model without the system effect (started at its pilot fit), with the GLRT.
    wald : FitModel or None
        The model of the Wald-type tests (``full``, or a Gaussian model's REML fit), with such tests.
    contrast : ndarray
        The pair's contrast over the location effects.
    df_method : str or None
        The df method of the Wald-type tests (``"asymptotic"``: z).
    df_rule : str or None
        Why that method (when it is the default rule's).
    n_tested : int
        Fixed effects the GLRT drops.
    """

    nobs: int
    full: Any
    null: Any = None
    wald: Any = None
    contrast: np.ndarray = field(default_factory=lambda: np.zeros(0))
    df_method: str | None = None
    df_rule: str | None = None
    n_tested: int = 0
    wald_reml: bool | None = None


def _placeholder(spec: PowerSpec, n: int, rng: np.random.Generator) -> np.ndarray:
    """A valid response of the family on ``n`` rows (only the first pilot fit sees it): ordinal ratings cycling
    through every category, else the family's draws at a linear predictor ``N(0, 1)``."""
    fam = spec.family
    if fam.engine == "clmm":
        return rng.permutation(np.arange(n) % len(spec.levels))
    params = fam.internal_parameters(np.array([float(spec.truth[p]) for p in fam.parameter_names]))
    return np.asarray(fam.simulate(rng.normal(0.0, 1.0, n), np.full(n, float(spec.trials)), rng, params), dtype=float)


def _with_response(spec: PowerSpec, frame: pd.DataFrame, y: np.ndarray) -> pd.DataFrame:
    """``frame`` with the response ``y`` (ordinal: category indices, written as the categories)."""
    values = np.asarray(spec.levels, dtype=object)[np.asarray(y, dtype=np.int64)] if spec.family.engine == "clmm" else y
    return frame.assign(**{spec.response: values})


def _fit(spec: PowerSpec, formula: str, frame: pd.DataFrame, reml: bool):
    """``formula`` fitted with the spec's family (warnings of the pilot fits are not the user's)."""
    options: dict[str, Any] = {}
    if spec.family.engine == "clmm":
        options["levels"] = list(spec.levels)
    elif TRIALS in frame.columns:
        options["weights"] = TRIALS
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return fit_family(formula, frame, family=spec.family, REML=reml if spec.family.engine == "lmer" else None,
                              **options)


def _pilot(spec: PowerSpec, frame: pd.DataFrame, rng: np.random.Generator):
    """The ML fit whose evaluator is set to the assumed parameters, and the frame with its response: fitted to a
    response drawn from the assumed model (a typical fit, whose Hessian starts the refits), or, where that draw
    leaves out a category or cannot be fitted, to a placeholder."""
    first_frame = _with_response(spec, frame, _placeholder(spec, len(frame), rng))
    first = _fit(spec, spec.formula, first_frame, reml=False)
    names = first.model.param_names
    y = first.model.at(spec.vector(names)).simulate(1, rng)[:, 0]
    drawn = _with_response(spec, frame, y)
    try:
        pilot = _fit(spec, spec.formula, drawn, reml=False)
    except (InputError, np.linalg.LinAlgError):
        return first, first_frame
    if tuple(pilot.model.param_names) != tuple(names):
        return first, first_frame
    return pilot, drawn


def _contrast(spec: PowerSpec, names: Sequence[str]) -> np.ndarray:
    """``b - a`` of the pair over the location effects ``names`` (treatment contrasts: the reference level has none)."""
    a, b = spec.pair
    out = np.zeros(len(names))
    for level, sign in ((b, 1.0), (a, -1.0)):
        key = f"{spec.system}{level}"
        if key in names:
            out[list(names).index(key)] += sign
    return out


def design_models(spec: PowerSpec, plan: TestPlan, df: str | None, frame: pd.DataFrame,
                  rng: np.random.Generator) -> DesignModels:
    """The evaluators of the design ``frame`` at the assumed parameters (see the module docstring)."""
    frame = frame.copy()
    if spec.trials != 1 and spec.family.support.weights == "trials":
        frame[TRIALS] = float(spec.trials)
    pilot, drawn = _pilot(spec, frame, rng)
    full = pilot.model.at(spec.vector(pilot.model.param_names))
    out = DesignModels(nobs=len(frame), full=full)
    if plan.glrt:
        null = _fit(spec, spec.null_formula, drawn, reml=False)
        out.null = null.model
        out.n_tested = len(pilot.fixed_names) - len(null.fixed_names)
    if plan.wald:
        gaussian = spec.family.engine == "lmer"
        wald_fit = _fit(spec, spec.formula, drawn, reml=True) if gaussian and spec.reml else pilot
        out.wald = wald_fit.model.at(spec.vector(wald_fit.model.param_names)) if wald_fit is not pilot else full
        out.wald_reml = bool(spec.reml) if gaussian else None
        if df is None:
            out.df_method, out.df_rule = default_df(wald_fit)
        else:
            out.df_method = df_inference(wald_fit, df).method  # refuses a method this kind of fit has not
        out.contrast = _contrast(spec, wald_fit.fixed_names)
    return out
