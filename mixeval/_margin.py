"""Tests against a margin (emmeans' ``test(..., null, delta, side)``): equivalence by two one-sided tests,
non-inferiority and non-superiority, shared by the marginal means and contrasts of a mixed model
(:mod:`mixeval.significance`), the comparisons of evaluation logs (:mod:`mixeval.logs`) and the Bradley-Terry
contrasts (:mod:`mixeval.preferences`).

Only the statistic, the one-sided p-value and the words for the hypothesis are here; the multiplicity adjustment
is :mod:`mixeval._adjust`'s (or the model-based one of the caller).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from .errors import InputError

__all__ = ["SIDES", "canonical_side", "check_margin", "margin_statistic", "margin_pvalue", "margin_test", "tail",
           "hypothesis", "side_name"]

#: The hypotheses of a test with a margin ``delta``: equivalence (TOST), ``">"`` (H0: theta <= null - delta,
#: non-inferiority when larger is better) and ``"<"`` (H0: theta >= null + delta).
SIDES = ("equivalence", ">", "<")

# emmeans' ``side.opts`` and what each means (summary.emmGrid): 0 two-sided (equivalence with a margin), 1 right, -1 left
_SIDE_ALIASES = {
    "equivalence": "equivalence", "=": "equivalence", "!=": "equivalence", "two-sided": "equivalence",
    "both": "equivalence", "0": "equivalence", "2": "equivalence",
    ">": ">", "noninferiority": ">", "superiority": ">", "right": ">", "1": ">", "+1": ">",
    "<": "<", "nonsuperiority": "<", "inferiority": "<", "left": "<", "-1": "<",
}


def canonical_side(side: object) -> str:
    """``"equivalence"``, ``">"`` or ``"<"`` for any of emmeans' spellings of ``side`` (also 0, 1, -1).

    Examples
    --------
    >>> canonical_side("noninferiority"), canonical_side(-1), canonical_side("equivalence")
    ('>', '<', 'equivalence')
    """
    if isinstance(side, (int, np.integer)) and not isinstance(side, bool):
        side = str(int(side))
    key = side.strip().lower() if isinstance(side, str) else None
    if key not in _SIDE_ALIASES:
        raise InputError(f"side={side!r}: choose 'equivalence' (two one-sided tests: H0 |theta - null| >= delta), "
                         "'>' (non-inferiority when larger is better: H0 theta <= null - delta) or '<' (when smaller "
                         "is better: H0 theta >= null + delta); emmeans' other spellings ('noninferiority', "
                         "'nonsuperiority', 'left', 'right', 1, -1) are accepted.")
    return _SIDE_ALIASES[key]


def check_margin(delta: object, side: object) -> tuple[float, str]:
    """``delta`` and ``side`` of a margin test, validated: ``(delta, side)`` with ``side`` canonical.

    ``delta=None`` with ``side`` ``">"``/``"<"`` is the one-sided test of ``H0: theta <= null`` (or ``>=``), margin 0;
    ``side=None`` with ``delta`` is equivalence (emmeans' default ``side``). Equivalence needs ``delta > 0``.

    Examples
    --------
    >>> check_margin(0.5, None), check_margin(None, ">")
    ((0.5, 'equivalence'), (0.0, '>'))
    """
    side = "equivalence" if side is None else canonical_side(side)
    if delta is None:
        if side == "equivalence":
            raise InputError("side='equivalence' needs a margin: give delta= (the largest difference that counts as "
                             "none, on the estimates' scale), e.g. delta=0.02.")
        return 0.0, side
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.integer, np.floating)) \
            or not np.isfinite(delta) or delta < 0:
        raise InputError(f"delta={delta!r} must be a non-negative number: the margin on the estimates' scale "
                         "(e.g. 0.02 for two points of accuracy).")
    if side == "equivalence" and delta == 0:
        raise InputError("delta=0 leaves no interval to be equivalent within; give a positive margin, or side='>' / "
                         "'<' for a one-sided test.")
    return float(delta), side


def tail(side: str) -> int:
    """The tail of the p-value: -1 (left: equivalence and ``"<"``) or +1 (right: ``">"``)."""
    return 1 if side == ">" else -1


def margin_statistic(estimate: np.ndarray, se: np.ndarray, delta: float, side: str,
                     null: float | np.ndarray = 0.0) -> np.ndarray:
    """The statistic of emmeans' ``test(..., null, delta, side)``; NaN where ``se`` is 0 or missing.

    Notes
    -----
    * equivalence: :math:`t = (|\\hat\\theta - \\theta_0| - \\delta) / \\mathrm{SE}`;
    * ``">"``: :math:`t = (\\hat\\theta - \\theta_0 + \\delta) / \\mathrm{SE}`;
    * ``"<"``: :math:`t = (\\hat\\theta - \\theta_0 - \\delta) / \\mathrm{SE}`.
    """
    estimate = np.asarray(estimate, dtype=float) - np.asarray(null, dtype=float)
    se = np.asarray(se, dtype=float)
    ok = np.isfinite(se) & (se > 0)
    shifted = {"equivalence": np.abs(estimate) - delta, ">": estimate + delta, "<": estimate - delta}[side]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ok, shifted / np.where(ok, se, 1.0), np.nan)


def margin_pvalue(statistic: np.ndarray, df: np.ndarray | float, side: str) -> np.ndarray:
    """One-sided p-values of :func:`margin_statistic` on ``t_df`` (normal for ``df = inf``): left-tailed for
    equivalence and ``"<"``, right-tailed for ``">"`` (emmeans' ``pt(t, df, lower.tail = tail < 0)``)."""
    df = np.where(np.isnan(np.asarray(df, dtype=float)), np.inf, df)  # emmeans: DF[is.na(DF)] = Inf
    return np.asarray(stats.t.sf(statistic, df) if side == ">" else stats.t.cdf(statistic, df), dtype=float)


def margin_test(estimate: np.ndarray, se: np.ndarray, df: np.ndarray | float, delta: float, side: str,
                null: float | np.ndarray = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Statistic and unadjusted p-value of emmeans' ``test(..., null, delta, side)``.

    Notes
    -----
    Equivalence is Schuirmann's (1987) two one-sided tests: the p-value :math:`P(T_\\nu \\le t)` with
    :math:`t = (|\\hat\\theta - \\theta_0| - \\delta) / \\mathrm{SE}` is the larger of the p-values of
    :math:`H_0: \\theta - \\theta_0 \\le -\\delta` and :math:`H_0: \\theta - \\theta_0 \\ge \\delta`; a small one says
    :math:`\\theta` lies within :math:`\\theta_0 \\pm \\delta`. ``">"`` tests :math:`H_0: \\theta \\le \\theta_0 -
    \\delta` (:math:`p = P(T_\\nu \\ge t)`), ``"<"`` :math:`H_0: \\theta \\ge \\theta_0 + \\delta`
    (:math:`p = P(T_\\nu \\le t)`). ``df = inf`` gives the normal reference.

    Examples
    --------
    >>> t, p = margin_test(np.array([0.004]), np.array([0.01]), np.array([30.0]), 0.02, "equivalence")
    >>> round(float(t[0]), 4), round(float(p[0]), 4)
    (-1.6, 0.06)
    >>> z, p = margin_test(np.array([-0.01]), np.array([0.01]), np.inf, 0.03, ">")
    >>> round(float(z[0]), 4), round(float(p[0]), 4)
    (2.0, 0.0228)
    """
    statistic = margin_statistic(estimate, se, delta, side, null)
    return statistic, margin_pvalue(statistic, df, side)


def side_name(side: str, delta: float) -> str:
    """emmeans' name of the test: ``"equivalence"``, ``"noninferiority"``, ``"nonsuperiority"`` (or, with no margin,
    ``"superiority"``/``"inferiority"``, one-sided tests of the null itself)."""
    if side == "equivalence":
        return "equivalence"
    if delta == 0:
        return "superiority" if side == ">" else "inferiority"
    return "noninferiority" if side == ">" else "nonsuperiority"


def hypothesis(delta: float, side: str, null: float = 0.0, what: str = "theta") -> str:
    """The null hypothesis of a margin test in words, e.g. ``"H0: |theta| >= 0.02 (equivalence: two one-sided
    tests, p the larger)"``.

    Examples
    --------
    >>> hypothesis(1.0, ">", what="difference")
    'H0: difference <= -1 (noninferiority; p right-tailed: small when difference > -1)'
    >>> hypothesis(0.05, "equivalence", null=0.9, what="prob")
    'H0: |prob - 0.9| >= 0.05 (equivalence: two one-sided tests, p the larger; small when 0.85 < prob < 0.95)'
    """
    centre = f"{what} - {null:g}" if null != 0 else what
    if side == "equivalence":
        return (f"H0: |{centre}| >= {delta:g} (equivalence: two one-sided tests, p the larger; small when "
                f"{null - delta:g} < {what} < {null + delta:g})")
    bound = null - delta if side == ">" else null + delta
    relation, alt, direction = ("<=", ">", "right") if side == ">" else (">=", "<", "left")
    return (f"H0: {what} {relation} {bound:g} ({side_name(side, delta)}; p {direction}-tailed: small when "
            f"{what} {alt} {bound:g})")
