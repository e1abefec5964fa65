"""Stage 3 (random effects): a preference model as a binomial GLMM on the difference design, fitted by the
engine (:func:`mixeval.mixed._glmm.fit_glmm`: PIRLS, Laplace deviance, lme4's two optimisation stages).

Random-effects terms of a vote with systems ``a`` (first) and ``b``, judge ``j`` and prompt ``q``:

* ``judge`` (``position="random"``): ``+ v_j``, a judge's deviation from the mean position bias (a random
  intercept, since the position column is all ones);
* ``prompt``: ``+ w_q``, a prompt's deviation (a prompt-specific first-position bias);
* ``system:prompt``: ``+ u_{a,q} - u_{b,q}``, how much each system's ability differs on this prompt
  (multiple membership: the vote loads ``+1`` on level ``(a, q)`` and ``-1`` on ``(b, q)``);
* ``system:judge``: ``+ u_{a,j} - u_{b,j}``, a judge's taste for each system.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..formula import parse_formula
from ..mixed import Design, GlmerResult, get_family
from ..mixed.engine import ReStructure, ReTerm, fit_glmm
from ._design import DifferenceDesign
from ._log import VoteLog

__all__ = ["RANDOM_TERMS", "HESSIAN_MAX_PARAMS", "MAX_MEMBERSHIP_LEVELS", "random_terms", "fit_mixed", "check_random"]

RANDOM_TERMS = ("prompt", "system:prompt", "system:judge")
#: up to this many parameters (fixed effects and variance parameters) the covariance of the abilities is lme4's
#: (the inverse Hessian of the Laplace deviance, 2 (k + p) PIRLS runs); beyond, lme4's ``calc.derivs = FALSE``
#: one, ``(R_X' R_X)^{-1}`` from the penalised system at the optimum (relative differences of order 1 / votes)
HESSIAN_MAX_PARAMS = 20
#: multiple-membership terms go to the engine's dense Schur complement: its size is bounded
MAX_MEMBERSHIP_LEVELS = 3000


def check_random(random, log: VoteLog, position: str) -> tuple[str, ...]:
    """Validate the requested random-effects terms against the log's columns; a judge or prompt column that no
    term uses is refused (it would change nothing)."""
    if isinstance(random, str):
        random = (random,)
    random = tuple(random or ())
    for term in random:
        if term not in RANDOM_TERMS:
            raise InputError(f"unknown random-effects term {term!r}; choose among {', '.join(RANDOM_TERMS)} "
                             "(a random position bias per judge is position='random').")
        if term.endswith("prompt") and log.prompt is None:
            raise InputError(f"random term {term!r} needs prompt= (the log's prompt column).")
        if term.endswith("judge") and log.judge is None:
            raise InputError(f"random term {term!r} needs judge= (the log's judge column).")
    if len(set(random)) != len(random):
        raise InputError(f"random={random!r} names a term twice.")
    if position == "random" and log.judge is None:
        raise InputError("position='random' (a random position bias per judge) needs judge= (the log's judge column).")
    if log.judge is not None and not (position == "random" or "system:judge" in random):
        raise InputError(f"judge={log.judge_name!r} is given but no term of the model uses it: a random position bias "
                         "per judge is position='random', a judge's taste for each system random='system:judge'. Add "
                         "one, or leave judge= out for a model without judge effects.")
    if log.prompt is not None and not any(t in random for t in ("prompt", "system:prompt")):
        raise InputError(f"prompt={log.prompt_name!r} is given but no term of the model uses it: random='prompt' (a "
                         "prompt-specific first-position bias) or random='system:prompt' (each system's ability varies "
                         "by prompt). Add one, or leave prompt= out for a model without prompt effects.")
    return random


def _crossed_term(group: str, systems: tuple[str, ...], a: np.ndarray, b: np.ndarray, g: np.ndarray,
                  labels: tuple[str, ...]) -> ReTerm:
    """The multiple-membership term ``u_{a,g} - u_{b,g}`` over the (system, group) pairs that occur."""
    n_g = len(labels)
    both, inverse = np.unique(np.concatenate([a * n_g + g, b * n_g + g]), return_inverse=True)
    n = a.size
    names = tuple(f"{systems[c // n_g]}:{labels[c % n_g]}" for c in both)
    ones = np.ones((n, 1))
    return ReTerm(group=group, coef_names=("(Intercept)",), codes=inverse[:n].astype(np.int64), levels=names,
                  X=ones, codes2=inverse[n:].astype(np.int64), X2=-ones)


def random_terms(log: VoteLog, random: tuple[str, ...], position: str) -> ReStructure:
    """The engine's random-effects structure of the requested terms."""
    n = log.n_rows
    terms = []
    if position == "random":
        terms.append(ReTerm(group=log.judge_name or "judge", coef_names=("position",), codes=log.judge,
                            levels=log.judges, X=np.ones((n, 1))))
    for term in random:
        if term == "prompt":
            terms.append(ReTerm(group=log.prompt_name or "prompt", coef_names=("(Intercept)",), codes=log.prompt,
                                levels=log.prompts, X=np.ones((n, 1))))
        elif term == "system:prompt":
            terms.append(_crossed_term(f"system:{log.prompt_name or 'prompt'}", log.systems, log.a, log.b, log.prompt,
                                       log.prompts))
        else:
            terms.append(_crossed_term(f"system:{log.judge_name or 'judge'}", log.systems, log.a, log.b, log.judge,
                                       log.judges))
    for t in terms:
        if t.n_levels < 2:
            raise InputError(f"the random-effects term {t.group!r} has fewer than 2 levels; drop it.")
        if t.is_multiple_membership and t.n_levels > MAX_MEMBERSHIP_LEVELS:
            raise InputError(
                f"the term {t.group!r} has {t.n_levels} (system, group) levels; system-by-group deviations are "
                f"eliminated densely and are fitted up to {MAX_MEMBERSHIP_LEVELS} levels. Use a coarser grouping "
                "(e.g. prompt categories instead of prompts) or the random intercept 'prompt'.")
    return ReStructure(terms=tuple(terms), nobs=n)


def fit_mixed(log: VoteLog, design: DifferenceDesign, re: ReStructure, *, warn: bool = True) -> GlmerResult:
    """Fit the binomial GLMM (ties dropped beforehand) with the engine; the response is ``a`` won, each row
    weighted by its number of votes (identical votes counted once: binomial with trials)."""
    y = (log.outcome == 2).astype(float)
    parts = ["0", "ability"] + (["position"] if "position" in design.names else []) + (
        ["covariates"] if log.covariate_names else [])
    random_part = " + ".join(f"(1 | {t.group})" for t in re.terms)
    try:
        parsed = parse_formula(f"a_wins ~ {' + '.join(parts)} + {random_part}")
    except InputError:  # group names that are not formula names: a generic label for printing
        parsed = parse_formula(f"a_wins ~ {' + '.join(parts)} + (1 | random)")
    d = Design(parsed=parsed, y=y, X=design.X, fixed_names=design.names, groups=(), row_key=0)
    covariance = "hessian" if design.p + re.n_theta <= HESSIAN_MAX_PARAMS else "rx"
    return fit_glmm(d, get_family("binomial"), np.asarray(log.count, dtype=float), n_agq=1, re=re, warn=warn,
                    covariance=covariance)
