"""emmeans' reference grid of a fitted model and the linear functions of its marginal means.

The reference grid crosses every level of every factor of the fixed part with every numeric
covariate held at its mean over the data (``emmeans::ref_grid``). Its model matrix is obtained by
evaluating the fit's own formulaic ``ModelSpec`` on the grid, so any fixed-effects formula
(interactions, ``C()``, other contrast codings, transforms such as ``np.log(x)``) is handled
exactly as in the fit.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._results import Result
from ..errors import FormulaError, InputError
from ..mixed import MixedResult

__all__ = ["ReferenceGrid", "reference_grid", "cached_reference_grid", "marginal_linfct", "normalise_names", "level_label",
           "note_nonestimable", "combine_rows"]


@dataclass(frozen=True, eq=False)
class ReferenceGrid(Result):
    """The reference grid of a fit.

    Attributes
    ----------
    factors : dict
        Factor variable -> its levels, in the model's order (formulaic's categories).
    covariates : dict
        Numeric variable -> the value it is held at (its mean over the fitted rows).
    grid : DataFrame
        One row per combination of factor levels (first factor varying fastest, as
        ``expand.grid``), covariates at their means.
    X : ndarray
        The fixed-effects model matrix of ``grid`` (columns as ``fit.fixed_names``).
    X_full : ndarray or None
        For a fit that dropped aliased columns (``fit.dropped_columns``), the model matrix of ``grid`` with every
        column; :func:`marginal_linfct` gives NaN for the means it cannot estimate (emmeans' ``nonEst``).

    Examples
    --------
    One row per level of ``system``; ``X @ fixef`` gives the estimated marginal means.

    >>> from mixeval.mixed import lmer
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=30)
    >>> fit = lmer("score ~ system + (1|item)", df)
    >>> rg = reference_grid(fit)
    >>> rg.factors, rg.covariates, rg.grid.system.tolist()
    ({'system': ['A', 'B', 'C']}, {}, ['A', 'B', 'C'])
    >>> rg.X
    array([[1., 0., 0.],
           [1., 1., 0.],
           [1., 0., 1.]])
    >>> (rg.X @ fit.fixef.to_numpy()).round(4)
    array([-0.3035,  0.1612,  0.8242])
    """

    factors: dict[str, list]
    covariates: dict[str, float]
    grid: pd.DataFrame = field(repr=False)
    X: np.ndarray = field(repr=False)
    X_full: np.ndarray | None = field(default=None, repr=False)
    spec: Any = field(default=None, repr=False, compare=False)

    def summary(self) -> str:
        """The factors, the covariates' values and the grid."""
        factors = "; ".join(f"{k}: {', '.join(map(str, v))}" for k, v in self.factors.items()) or "none"
        covariates = "; ".join(f"{k} = {v:.6g}" for k, v in self.covariates.items()) or "none"
        return (f"Reference grid ({len(self.grid)} rows)\nfactors: {factors}\ncovariates held at: {covariates}\n"
                + self.grid.to_string(index=False))

    def _repr_html_(self) -> str:
        return self.grid.to_html(index=False)


def _expand_grid(levels: dict[str, list]) -> pd.DataFrame:
    """All combinations, the first variable varying fastest (R's ``expand.grid``)."""
    names = list(levels)
    if not names:
        return pd.DataFrame(index=[0])
    combos = list(itertools.product(*(levels[n] for n in reversed(names))))
    frame = pd.DataFrame(combos, columns=list(reversed(names)))[names]
    # factors stay factors: categorical columns with the model's levels (logical levels would otherwise
    # be read as numbers by formulaic)
    return frame.assign(**{n: pd.Categorical(frame[n], categories=list(levels[n])) for n in names})


def _data_of(fit: MixedResult, data: pd.DataFrame | None) -> pd.DataFrame:
    if data is not None:
        if not isinstance(data, pd.DataFrame):
            raise InputError(f"`data` must be a pandas DataFrame; got {type(data).__name__}.")
        return data
    stored = fit.data
    if not isinstance(stored, pd.DataFrame):
        raise InputError("the fit does not hold its data, which are needed for the covariate means; "
                         "pass the fitted rows as data=.")
    return stored


def reference_grid(fit: MixedResult, data: pd.DataFrame | None = None) -> ReferenceGrid:
    """emmeans' reference grid of ``fit`` (a :class:`mixeval.mixed.LmerResult`).

    Parameters
    ----------
    fit : LmerResult
        A fitted model (needs ``fit.design.fixed_spec`` and ``fit.coef``).
    data : DataFrame, optional
        The rows the model was fitted to (default: ``fit.data``); used for covariate means.

    Returns
    -------
    ReferenceGrid

    Raises
    ------
    InputError
        If the fit has no formulaic model spec or a categorical term mixes several variables.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import lmer
    >>> rng = np.random.default_rng(1)
    >>> df = pd.DataFrame({"g": np.repeat(np.arange(10), 4), "s": np.tile(["A", "B"], 20),
    ...                    "x": rng.normal(size=40)})
    >>> df["y"] = rng.normal(size=10)[df.g] + rng.normal(size=40)
    >>> rg = reference_grid(lmer("y ~ s + x + (1|g)", df))
    >>> rg.factors, bool(abs(rg.covariates["x"] - df.x.mean()) < 1e-12), rg.grid.shape
    ({'s': ['A', 'B']}, True, (2, 2))
    """
    rg = cached_reference_grid(fit, data)
    return ReferenceGrid(factors={k: list(v) for k, v in rg.factors.items()}, covariates=dict(rg.covariates),
                         grid=rg.grid.copy(), X=rg.X.copy(), X_full=None if rg.X_full is None else rg.X_full.copy(),
                         spec=rg.spec)


def cached_reference_grid(fit: MixedResult, data: pd.DataFrame | None = None) -> ReferenceGrid:
    """:func:`reference_grid`, shared between calls on the same model spec (do not modify the result)."""
    if not isinstance(fit, MixedResult):
        raise InputError(f"`fit` must be a fitted mixed model (mixeval.lmer, mixeval.glmer); got {type(fit).__name__}.")
    spec = fit.design.fixed_spec
    data_vars = set(spec.variables_by_source.get("data", set()))
    factors: dict[str, list] = {}
    numeric: list[str] = []
    for factor, (kind, state) in spec.encoder_state.items():
        used = [v for v in _factor_variables(spec, factor) if v in data_vars]
        if getattr(kind, "value", str(kind)) == "categorical":
            if len(used) != 1:
                raise InputError(
                    f"the categorical term {factor!r} uses {len(used)} data variables ({', '.join(sorted(used))}); "
                    "emmeans needs one variable per factor. Make a single factor column in the data first."
                )
            var = used[0]
            if var not in factors:
                factors[var] = list(state.get("categories", []))
        else:
            numeric.extend(v for v in used if v not in numeric)
    covariates: dict[str, float] = {}
    numeric = [v for v in numeric if v not in factors]
    rows = _data_of(fit, data) if numeric else pd.DataFrame()
    for var in numeric:
        if var not in rows.columns:
            raise InputError(f"covariate {var!r} of the model is not a column of the data.")
        values = pd.to_numeric(rows[var], errors="coerce").to_numpy(dtype=float)
        if values.size == 0 or not np.isfinite(values).all():
            raise InputError(f"covariate {var!r} has missing or non-numeric values; its mean defines the reference grid.")
        covariates[var] = float(np.mean(values))
    key = (id(spec), tuple(covariates.items()), len(fit.coef))
    cached = _GRID_CACHE.get(key)
    if cached is not None and cached[0] is spec:  # same spec object (ids can be reused after deletion)
        return cached[1]
    grid = _expand_grid(factors)
    for var, value in covariates.items():
        grid[var] = value
    try:
        mm = spec.get_model_matrix(grid, na_action="ignore")
    except Exception as exc:  # formulaic raises several types
        raise FormulaError(f"cannot evaluate the fixed-effects formula on the reference grid: {exc}") from exc
    X = np.array(mm, dtype=float)
    X.setflags(write=False)
    if X.shape != (len(grid), len(fit.coef)):
        raise InputError(
            f"the reference grid's model matrix has {X.shape[1]} columns but the fit has {len(fit.coef)} "
            "coefficients; the model spec does not match the fit."
        )
    X_full = None
    if getattr(spec, "dropped_names", ()):  # a rank-deficient fit: estimability needs every column
        X_full = np.array(spec.full_model_matrix(grid, na_action="ignore"), dtype=float)
        X_full.setflags(write=False)
    rg = ReferenceGrid(factors=factors, covariates=covariates, grid=grid, X=X, X_full=X_full, spec=spec)
    if len(_GRID_CACHE) >= _GRID_CACHE_SIZE:
        _GRID_CACHE.pop(next(iter(_GRID_CACHE)))
    _GRID_CACHE[key] = (spec, rg)
    return rg


# Reference grids of recently used model specs: refits of one design (simulations, bootstraps) share
# the spec object, and evaluating formulaic on the grid dominates the cost of a small emmeans call.
_GRID_CACHE: dict[tuple, tuple[object, ReferenceGrid]] = {}
_GRID_CACHE_SIZE = 16


def _factor_variables(spec: object, factor_name: str) -> list[str]:
    mapping = getattr(spec, "factor_variables", {})
    for factor, variables in mapping.items():
        if str(factor) == factor_name:
            return sorted(str(v) for v in variables)
    return []


def normalise_names(value: str | Sequence[str] | None, argument: str) -> list[str]:
    """``"a"`` -> ``["a"]``, ``None`` -> ``[]``; rejects non-strings."""
    if value is None:
        return []
    if isinstance(value, str):
        names = [value]
    else:
        try:
            names = list(value)
        except TypeError:
            raise InputError(f"`{argument}` must be a factor name or a list of factor names; got {value!r}.") from None
    for name in names:
        if not isinstance(name, str):
            raise InputError(f"`{argument}` must hold factor names (strings); got {name!r}.")
    if len(set(names)) != len(names):
        raise InputError(f"`{argument}` names a factor twice: {names}.")
    return names


def _check_factor_names(rg: ReferenceGrid, names: list[str], argument: str) -> None:
    available = ", ".join(repr(f) for f in rg.factors) or "none"
    for name in names:
        if name in rg.covariates:
            raise InputError(
                f"`{argument}` names {name!r}, a numeric covariate of the model; marginal means are "
                f"defined for factors (the model's factors: {available}). Bin it into classes first, "
                "e.g. mixeval.significance.bin_property(data, column, cuts)."
            )
        if name not in rg.factors:
            raise InputError(f"`{argument}` names {name!r}, which is not a factor of the model; the model's factors: {available}.")


def level_label(values: Sequence[object]) -> str:
    """emmeans' label of a combination of levels (joined by a space)."""
    return " ".join(str(v) for v in values)


def marginal_linfct(rg: ReferenceGrid, specs: list[str], by: list[str]) -> tuple[pd.DataFrame, np.ndarray]:
    """Rows of the marginal means of ``specs`` within ``by`` and their linear functions ``L``.

    Each row of ``L`` is the equally weighted average of the reference-grid rows with that
    combination of ``specs`` and ``by`` levels, so ``L @ coef`` are the marginal means.
    Rows are ordered by the ``by`` groups (first ``by`` factor fastest), then the ``specs``
    combinations (first factor fastest), as emmeans prints them. A mean that a rank-deficient fit cannot
    estimate (its linear function of every column leaves the row space of the fitted rows; emmeans' ``nonEst``)
    has a row of NaN, so every number computed from it is NaN.
    """
    _check_factor_names(rg, specs, "specs")
    _check_factor_names(rg, by, "by")
    overlap = set(specs) & set(by)
    if overlap:
        raise InputError(f"factor(s) {sorted(overlap)} appear in both `specs` and `by`; use each in one place only.")
    if not specs:
        raise InputError("`specs` must name at least one factor of the model.")
    cells = _expand_grid({name: rg.factors[name] for name in [*specs, *by]})
    keys = [*specs, *by]
    grid = rg.grid
    L = np.empty((len(cells), rg.X.shape[1]))
    # integer codes of each grid row for the key factors, then average per cell
    codes = np.zeros(len(grid), dtype=np.int64)
    cell_codes = np.zeros(len(cells), dtype=np.int64)
    mult = 1
    for name in keys:
        levels = rg.factors[name]
        lookup = {lev: i for i, lev in enumerate(levels)}
        codes += mult * grid[name].map(lookup).to_numpy(dtype=np.int64)
        cell_codes += mult * cells[name].map(lookup).to_numpy(dtype=np.int64)
        mult *= len(levels)
    for i, code in enumerate(cell_codes):
        L[i] = rg.X[codes == code].mean(axis=0)
    if rg.X_full is not None:
        full = np.array([rg.X_full[codes == code].mean(axis=0) for code in cell_codes])
        L[rg.spec.nonestimable(full)] = np.nan
    return cells, L


#: the note of a table with means a rank-deficient fit cannot estimate (:func:`marginal_linfct`)
NONESTIMABLE_NOTE = ("NaN rows: not estimable (emmeans' nonEst): the fit dropped aliased fixed-effect columns "
                     "(fit.dropped_columns) and these means need them")


def note_nonestimable(table: pd.DataFrame, estimate: np.ndarray) -> pd.DataFrame:
    """``table`` with :data:`NONESTIMABLE_NOTE` added to its ``attrs["note"]`` when an ``estimate`` is NaN; in place."""
    if np.isnan(np.asarray(estimate, dtype=float)).any():
        note = table.attrs.get("note", "")
        table.attrs["note"] = (note + "\n" if note else "") + NONESTIMABLE_NOTE
    return table


def combine_rows(W: np.ndarray, L: np.ndarray) -> np.ndarray:
    """``W @ L``, with NaN for the rows of ``W`` that give weight to a NaN row of ``L`` (a mean a rank-deficient fit
    cannot estimate) and no NaN elsewhere (``0 * NaN`` would spread it to every row).

    Examples
    --------
    >>> combine_rows(np.array([[-1.0, 1, 0], [0, -1, 1]]), np.array([[1.0, 0], [1, 1], [np.nan, np.nan]]))
    array([[ 0.,  1.],
           [nan, nan]])
    """
    W = np.atleast_2d(np.asarray(W, dtype=float))
    bad = np.isnan(L).any(axis=1)
    out = W @ np.where(bad[:, None], 0.0, L)
    out[(W[:, bad] != 0).any(axis=1)] = np.nan
    return out
