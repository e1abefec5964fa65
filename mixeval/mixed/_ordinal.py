"""The ordinal family: cumulative link probabilities, threshold structures and the ordered response.

``P(Y <= j) = F(theta_j - eta)`` with ``F`` the standard logistic (logit link) or normal (probit link)
distribution function (``ordinal::clm``'s parametrisation). A row with category ``j`` has the
probability ``F(a) - F(b)``, ``a = theta_j - eta`` (``+inf`` for the top category) and
``b = theta_{j-1} - eta`` (``-inf`` for the bottom one); :func:`row_derivatives` gives its logarithm and
the derivatives in ``a`` and ``b`` up to the third order, which the Laplace approximation and its
exact gradient need. Thresholds are ``theta = J alpha`` with ``J`` the threshold Jacobian of
:func:`threshold_jacobian` (flexible, equidistant, symmetric; ``ordinal:::makeThresholds``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from ..errors import EmptyCategoryWarning, InputError, caller_stacklevel
from .families.ordinal import THRESHOLDS, Ordinal

__all__ = ["Ordinal", "RowTerms", "OrderedResponse", "THRESHOLDS", "get_ordinal", "ordered_response",
           "row_derivatives", "row_log_probability", "threshold_jacobian", "OPEN_END", "EmptyCategoryWarning"]

_LINKS = ("logit", "probit")
_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)


def get_ordinal(link: str = "logit", threshold: str = "flexible") -> Ordinal:
    """The :class:`Ordinal` family with validated ``link`` and ``threshold``.

    Examples
    --------
    >>> get_ordinal("probit", "equidistant")
    Ordinal(link='probit', threshold='equidistant')
    """
    link = str(link).lower()
    if link not in _LINKS:
        raise InputError(f"link={link!r} is not available for ordinal ratings; use one of {list(_LINKS)}.")
    threshold = str(threshold).lower()
    if threshold not in THRESHOLDS:
        raise InputError(f"threshold={threshold!r} is not a threshold structure; use one of {list(THRESHOLDS)}.")
    return Ordinal(link, threshold)


def threshold_jacobian(n_thresholds: int, kind: str = "flexible") -> tuple[np.ndarray, tuple[str, ...]]:
    """The matrix ``J`` with ``thresholds = J alpha`` and the names of ``alpha`` (``ordinal:::makeThresholds``).

    Examples
    --------
    >>> J, names = threshold_jacobian(4, "equidistant")
    >>> J.tolist(), names
    ([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0], [1.0, 3.0]], ('threshold.1', 'spacing'))
    >>> threshold_jacobian(4, "symmetric")[0].tolist()
    [[1.0, 0.0, -1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 1.0, 1.0]]
    """
    m = int(n_thresholds)
    if kind == "flexible":
        return np.eye(m), tuple(f"alpha.{j + 1}" for j in range(m))
    if m < 2:
        raise InputError(f"{kind} thresholds need a response with 3 or more categories; it has {m + 1}.")
    if kind == "equidistant":
        return np.column_stack([np.ones(m), np.arange(m, dtype=float)]), ("threshold.1", "spacing")
    if m % 2:  # odd number of thresholds: a central one and spacings either side
        k = (m + 1) // 2
        jac = np.zeros((m, k))
        jac[:, 0] = 1.0
        for s in range(1, k):
            jac[k - 1 - s, s] = -1.0
            jac[k - 1 + s, s] = 1.0
        return jac, ("central", *(f"spacing.{s}" for s in range(1, k)))
    half = m // 2
    k = half + 1
    jac = np.zeros((m, k))
    jac[:half, 0] = 1.0
    jac[half:, 1] = 1.0
    for s in range(1, half):
        jac[half - 1 - s, s + 1] = -1.0
        jac[half + s, s + 1] = 1.0
    return jac, ("central.1", "central.2", *(f"spacing.{s}" for s in range(1, half)))


@dataclass(frozen=True)
class OrderedResponse:
    """Category codes (0 .. J-1) of an ordinal response with its categories in order.

    ``observed`` flags the categories that occur; ``kept`` maps each observed category to its position
    among the observed ones (the categories a flexible-threshold model estimates thresholds between).
    """

    codes: np.ndarray
    levels: tuple
    name: str

    @property
    def observed(self) -> np.ndarray:
        return np.bincount(self.codes, minlength=len(self.levels)) > 0

    @property
    def threshold_names(self) -> tuple[str, ...]:
        """``"1|2", "2|3", ...`` as clmm names them."""
        lv = [str(v) for v in self.levels]
        return tuple(f"{a}|{b}" for a, b in zip(lv[:-1], lv[1:]))


def _integer_like(values: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(values)) and np.all(values == np.round(values)))


def ordered_response(column: pd.Series, levels=None, *, name: str | None = None) -> OrderedResponse:
    """Validate an ordinal response and code its categories in order.

    Parameters
    ----------
    column : pandas.Series
        An ordered pandas Categorical (its categories give the order, unused ones included), or whole
        numbers (the distinct values in increasing order), or any values when ``levels`` is given.
    levels : sequence, optional
        The categories in increasing order, e.g. ``[1, 2, 3, 4, 5]``: categories with no observations
        are kept (with an :class:`EmptyCategoryWarning`).

    Raises
    ------
    InputError
        Non-integer numbers, an unordered string or categorical column without ``levels``, values outside
        ``levels``, a single observed category, missing values.

    Examples
    --------
    >>> r = ordered_response(pd.Series([3, 1, 2, 3]))
    >>> r.codes.tolist(), r.levels, r.threshold_names
    ([2, 0, 1, 2], (1, 2, 3), ('1|2', '2|3'))
    """
    name = str(column.name) if name is None else name
    if column.isna().any():
        raise InputError(f"the response {name!r} has {int(column.isna().sum())} missing value(s); drop those rows "
                         "(or pass drop_missing=True).")
    if levels is not None:
        levels = list(levels)
        if len(set(levels)) != len(levels):
            raise InputError(f"levels={levels!r} repeats a category.")
        lookup = {v: i for i, v in enumerate(levels)}
        raw = column.astype(object).to_numpy() if not isinstance(column.dtype, pd.CategoricalDtype) else \
            column.astype(object).to_numpy()
        codes = np.empty(len(raw), dtype=np.int64)
        bad = []
        for i, v in enumerate(raw):
            key = v
            if key not in lookup and isinstance(v, (float, np.floating)) and float(v).is_integer() and int(v) in lookup:
                key = int(v)
            if key not in lookup:
                bad.append(v)
                codes[i] = -1
            else:
                codes[i] = lookup[key]
        if bad:
            raise InputError(f"the response {name!r} has value(s) not in levels={levels!r}: "
                             f"{sorted(set(map(str, bad)))[:5]}; list every category of the scale in order.")
        out = OrderedResponse(codes, tuple(levels), name)
    elif isinstance(column.dtype, pd.CategoricalDtype):
        if not column.cat.ordered:
            raise InputError(f"the response {name!r} is an unordered categorical; its categories have no order to "
                             "rate on. Make it ordered (pd.Categorical(..., ordered=True)) or pass levels=[...] in "
                             "increasing order.")
        out = OrderedResponse(column.cat.codes.to_numpy().astype(np.int64), tuple(column.cat.categories), name)
    elif pd.api.types.is_bool_dtype(column):
        raise InputError(f"the response {name!r} is logical (two categories); fit it with mixeval.glmer(..., "
                         "family='binomial'), or pass levels=[False, True] to treat it as a 2-point scale.")
    elif pd.api.types.is_numeric_dtype(column):
        values = column.to_numpy(dtype=float)
        if not _integer_like(values):
            frac = values[values != np.round(values)][:3].tolist()
            raise InputError(f"the response {name!r} has non-integer values (e.g. {frac}); an ordinal model needs "
                             "ratings on a scale of categories. Round them only if that is what they are, or fit a "
                             "linear mixed model (mixeval.lmer) to averaged scores.")
        uniq = np.unique(values)
        ints = [int(v) for v in uniq]
        out = OrderedResponse(np.searchsorted(uniq, values).astype(np.int64), tuple(ints), name)
    else:
        raise InputError(f"the response {name!r} holds strings (e.g. {column.iloc[0]!r}), whose order is not known; "
                         "pass levels=[...] with the categories in increasing order, or make the column an ordered "
                         "pandas Categorical.")
    n_obs = int(out.observed.sum())
    if n_obs < 2:
        raise InputError(f"the response {name!r} has a single observed category ({out.levels[int(out.codes[0])]!r}); "
                         "an ordinal model needs at least two.")
    if len(out.levels) > 100:
        raise InputError(f"the response {name!r} has {len(out.levels)} categories; an ordinal model is for rating "
                         "scales (a continuous score needs mixeval.lmer).")
    return out


def warn_empty_categories(resp: OrderedResponse, threshold: str) -> None:
    """Warn that categories without observations have coinciding (or infinite) thresholds."""
    empty = [resp.levels[j] for j in np.flatnonzero(~resp.observed)]
    if not empty:
        return
    if threshold == "flexible":
        msg = ("their probability's maximum-likelihood estimate is 0, so the thresholds either side of an interior "
               "empty category coincide and those beyond an empty end category are infinite (reported as such, with "
               "no standard error). ordinal::clmm cannot estimate a threshold between empty categories either. "
               "Collect ratings in those categories, or use threshold='equidistant' or 'symmetric', which "
               "estimate every threshold from the others")
    else:
        msg = f"with {threshold} thresholds their probabilities are estimated from the neighbouring categories"
    warnings.warn(f"the rating scale of {resp.name!r} has categor{'y' if len(empty) == 1 else 'ies'} "
                  f"{', '.join(map(repr, empty))} with no observations: {msg}.", EmptyCategoryWarning,
                  stacklevel=caller_stacklevel())


@dataclass
class RowTerms:
    """Per-row log-probability and its derivatives in ``a`` (upper) and ``b`` (lower) argument.

    ``l`` (log P), ``la, lb`` (first), ``laa, lab, lbb`` (second); with ``third``, the derivatives of the
    curvature ``w = -(laa + 2 lab + lbb)`` in ``a`` and ``b`` (``wa, wb``).
    """

    l: np.ndarray  # noqa: E741 (l, la, lb: the log-probability and its derivatives)
    la: np.ndarray
    lb: np.ndarray
    laa: np.ndarray
    lab: np.ndarray
    lbb: np.ndarray
    wa: np.ndarray | None = None
    wb: np.ndarray | None = None

    @property
    def r(self) -> np.ndarray:
        """``d log P / d eta`` (``eta`` enters both arguments with sign -1)."""
        return -(self.la + self.lb)

    @property
    def w(self) -> np.ndarray:
        """``-d^2 log P / d eta^2`` (>= 0: the logistic and normal are log-concave)."""
        return -(self.laa + 2.0 * self.lab + self.lbb)


#: stands for an infinite threshold (top and bottom categories): F is exactly 1 or 0 there and the density 0
OPEN_END = 1e4


def _tails(link: str, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``F(x)``, ``1 - F(x)`` and the smaller of the two, ``m = F(-|x|)``, from one evaluation of ``F``.

    The other tail is ``1 - m >= 1/2``, which has no cancellation, so both are accurate in relative terms.
    """
    m = special.expit(-np.abs(x)) if link == "logit" else special.ndtr(-np.abs(x))
    big = 1.0 - m
    pos = x >= 0
    return np.where(pos, big, m), np.where(pos, m, big), m


def _density_ratios(link: str, x: np.ndarray, F: np.ndarray, Q: np.ndarray, third: bool):
    """``f(x)``, ``f'(x) / f(x)`` and (with ``third``) ``f''(x) / f(x)``."""
    if link == "logit":
        f = F * Q
        return f, Q - F, (1.0 - 6.0 * f) if third else None
    f = np.exp(-0.5 * x * x) * _INV_SQRT_2PI
    return f, -x, (x * x - 1.0) if third else None


def row_log_probability(link: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``log(F(a) - F(b))`` alone (the line searches' criterion), from the upper tails where ``b > 0``."""
    a = np.clip(a, -OPEN_END, OPEN_END)
    b = np.clip(b, -OPEN_END, OPEN_END)
    Fa, Qa, _ = _tails(link, a)
    Fb, Qb, _ = _tails(link, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(np.where(b > 0, Qb - Qa, Fa - Fb))


def row_derivatives(link: str, a: np.ndarray, b: np.ndarray, *, third: bool = False) -> RowTerms:
    """``log(F(a) - F(b))`` and its derivatives (``a = +inf`` for the top category, ``b = -inf`` for the bottom
    one; infinite arguments are taken as ``+-OPEN_END``).

    Notes
    -----
    With ``P = F(a) - F(b)``: ``la = f(a) / P``, ``lb = -f(b) / P``, ``laa = f'(a) / P - la^2``,
    ``lbb = -f'(b) / P - lb^2``, ``lab = -la lb``; third order ``laaa = f''(a) / P - 3 la laa - la^3``,
    ``laab = lb (la^2 - laa)``, ``labb = la (lb^2 - lbb)``, ``lbbb = -f''(b) / P - 3 lb lbb - lb^3``. ``P`` is
    formed from the upper tails when ``b > 0`` (no cancellation near 1). Each argument takes one evaluation of ``F``
(its smaller tail) and the density ratios ``f'/f`` (logit ``1 - 2F``, probit ``-x``) and ``f''/f``.

    Examples
    --------
    >>> t = row_derivatives("logit", np.array([0.0]), np.array([-np.inf]))
    >>> round(float(np.exp(t.l[0])), 6), round(float(t.la[0]), 6)
    (0.5, 0.5)
    """
    a = np.clip(a, -OPEN_END, OPEN_END)
    b = np.clip(b, -OPEN_END, OPEN_END)
    Fa, Qa, _ = _tails(link, a)
    Fb, Qb, _ = _tails(link, b)
    fa, ga, ka = _density_ratios(link, a, Fa, Qa, third)
    fb, gb, kb = _density_ratios(link, b, Fb, Qb, third)
    P = np.where(b > 0, Qb - Qa, Fa - Fb)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / P
        l = np.log(P)  # noqa: E741 (the field RowTerms.l)
    la = fa * inv
    lb = -fb * inv
    laa = la * (ga - la)
    lbb = lb * (gb - lb)
    lab = -la * lb
    out = RowTerms(l, la, lb, laa, lab, lbb)
    if third:
        laaa = la * (ka - 3.0 * laa - la * la)
        laab = lb * (la * la - laa)
        labb = la * (lb * lb - lbb)
        lbbb = lb * (kb - 3.0 * lbb - lb * lb)
        out.wa = -(laaa + 2.0 * laab + labb)
        out.wb = -(laab + 2.0 * labb + lbbb)
    return out
