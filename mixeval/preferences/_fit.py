"""``bradley_terry``: a log of pairwise judgments -> abilities (the stages chained)."""

from __future__ import annotations

import pandas as pd

from .._validation import require_dataframe
from ..errors import InputError
from ._design import POSITION, POSITIONS, aliased_columns, difference_design, reference_index
from ._fixed import TIES
from ._log import VoteLog, check_connected, read_log
from ._mixed import check_random
from ._model import Spec, fit_model, prepare_votes
from ._result import PreferenceResult, make_result
from ._separation import ability_groups, separated_systems, warn_separation
from ._source import COUNT_COLUMN, count_votes, is_source

__all__ = ["bradley_terry"]


def _choice(value: str, name: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise InputError(f"{name}={value!r}: choose one of {', '.join(repr(c) for c in choices)}.")
    return value


def bradley_terry(data: pd.DataFrame, *, model_a: str = "model_a", model_b: str = "model_b", winner: str = "winner",
                  judge: str | None = None, prompt: str | None = None, covariates: dict | None = None,
                  count: str | None = None, ties: str = "drop", position: str = "fixed",
                  random: tuple[str, ...] | str = (), reference: str | None = None) -> PreferenceResult:
    """Fit a Bradley-Terry model to a log of pairwise judgments.

    Parameters
    ----------
    data : pandas.DataFrame, Parquet path, pyarrow.Table, duckdb relation or pyspark.sql.DataFrame
        One row per vote: the two systems (``model_a`` shown first), the verdict and optionally judge,
        prompt and covariates. Never modified. A source beyond memory is counted where it lives (one
        ``GROUP BY`` in DuckDB or Spark SQL over the columns used) and fitted from the counts: the same fit.
    model_a, model_b, winner : str
        Column names. ``winner`` holds ``"model_a"``, ``"model_b"`` (or ``"a"``, ``"b"``: positions), ``"tie"``
        (or ``"tie (bothbad)"``), the winning system's name (exactly or up to case), or a numeric margin whose
        sign says who won (> 0: ``model_a``). A value that names a system means that system; one that could
        also be a position and reads differently either way is refused as ambiguous.
    judge, prompt : str, optional
        Columns of the judge and the prompt (needed by the random-effects terms that name them).
    covariates : dict, optional
        ``{name: (column for model_a, column for model_b)}``: the difference enters the model ("style
        control", e.g. answer lengths).
    count : str, optional
        Number of identical votes each row stands for.
    ties : {"drop", "davidson", "ordinal"}
        ``drop``: ties are left out (the binomial Bradley-Terry model); ``davidson``: Davidson's (1970)
        model; ``ordinal``: cumulative logit with thresholds ``-tau < tau`` (R's ``ordinal::clm``).
    position : {"none", "fixed", "random"}
        A log-odds bonus for the system shown first: none, one fixed value, or a fixed mean plus a random
        deviation per judge (``(1|judge)`` on the position column; needs ``judge``).
    random : tuple of str
        Further random-effects terms: ``"prompt"`` (a random intercept per prompt), ``"system:prompt"``
        (each system's ability deviates per prompt: ``u_{a,q} - u_{b,q}``), ``"system:judge"`` (per judge).
        With random effects the model is a binomial GLMM (``ties="drop"``) or a cumulative link mixed model
        (``ties="ordinal"``, as ``ordinal::clmm``) fitted by the engine (Laplace approximation); Davidson's
        tie model takes none. A ``judge`` or ``prompt`` column that no term uses is refused.
    reference : str, optional
        The system whose ability is 0; by default the abilities sum to 0.

    Returns
    -------
    PreferenceResult

    Raises
    ------
    InputError
        Bad columns or verdicts, self-pairs, a disconnected comparison graph (naming its components); a coefficient
        the votes cannot identify (a covariate whose difference is 0 in every vote, one that is a property of the
        systems, constant or a combination of others; a position bias the abilities absorb); a
        tie parameter that is infinite (every decisive vote separated, the ties between them); a random-effects
        model whose votes separate through the position bias or a covariate.

    Warns
    -----
    SeparationWarning
        Some votes are won without exception by the side a combination of the coefficients favours (quasi-complete
        separation, found by a linear program on the difference design: :mod:`mixeval.preferences._separation`):
        the abilities, contrasts, position bias and covariate coefficients those votes alone inform are infinite,
        reported where the fit stopped with infinite standard errors; the rest is the fit of the other votes (R's
        ``glm`` on them). A separation among the systems alone is named by the groups of the win graph that never
        both beat and lost to one another (a system never lost, or never won).

    Notes
    -----
    ``logit P(a beats b) = s_a - s_b + gamma + delta'(z_a - z_b) [+ random deviations]`` (Bradley & Terry
    1952): a logistic regression without intercept on the ``+1/-1`` difference design (R's ``glm``), the
    position bias ``gamma`` the coefficient of a column of ones. Davidson: ``P(a) : P(tie) : P(b) =
    e^{eta/2} : nu : e^{-eta/2}``. Ordinal: ``P(b) = F(-tau - eta)``, ``P(b or tie) = F(tau - eta)``.
    Random effects enter ``eta`` as in :mod:`mixeval.preferences._mixed`; the system-by-group terms are
    multiple-membership terms of the engine, and the abilities are then those of a typical judge and prompt
    (``PreferenceResult.scale``; ``marginal_abilities()`` averages over new ones, ``arena_abilities()`` converts
    to arena's scale: :mod:`mixeval.preferences._scales`). Identical votes are counted once (binomial with trials; the
    ordinal mixed model expands them, its engine taking one row per vote). Beyond 20 parameters the binomial
    GLMM's covariance is lme4's RX-based one (``calc.derivs = FALSE``) instead of its inverse Hessian.

    Examples
    --------
    >>> from mixeval.preferences import simulate_arena
    >>> log = simulate_arena(3000, {"big": 1.0, "mid": 0.0, "small": -1.0}, random_state=0)
    >>> fit = bradley_terry(log, reference="mid")
    >>> fit.abilities.round(2).to_dict()
    {'big': 1.0, 'mid': 0.0, 'small': -1.05}
    >>> fit.ranks()["rank"].to_dict()
    {'big': 1, 'mid': 2, 'small': 3}
    """
    counted = is_source(data)
    if counted:
        data = count_votes(data, model_a=model_a, model_b=model_b, winner=winner, judge=judge, prompt=prompt,
                           covariates=covariates, count=count)
        count = COUNT_COLUMN
    data = require_dataframe(data)
    ties = _choice(ties, "ties", TIES)
    position = _choice(position, "position", POSITIONS)
    log = read_log(data, model_a=model_a, model_b=model_b, winner=winner, judge=judge, prompt=prompt,
                   covariates=covariates, count=count, counted=counted)
    random = check_random(random, log, position)
    used = prepare_votes(log, ties)
    if used.n_rows == 0:
        raise InputError("no votes left: every vote is a tie and ties='drop'; use ties='davidson' or 'ordinal'.")
    if ties != "drop" and used.n_ties == 0:
        raise InputError(f"ties={ties!r} models ties, but the log has none (its tie parameter would be estimated at "
                         "the boundary 0); use ties='drop'.")
    if ties != "drop" and used.n_ties == used.n_votes:
        raise InputError(f"every vote is a tie: with ties={ties!r} the tie parameter is infinite and the abilities are "
                         "not identified (a tie says the two are close, not which is better). The log needs votes "
                         "that someone won.")
    check_connected(used)
    spec = Spec(ties=ties, position=position, random=random, reference=reference_index(log.systems, reference))
    _check_identified(used, spec, covariates or {}, dropped=used.n_votes < log.n_votes)
    fit = fit_model(used, spec)
    if fit.tie_infinite:
        raise InputError(
            f"with ties={ties!r} the tie parameter is infinite: every vote that someone won is won by the side an "
            "order of the systems (with the position bias and covariates) favours, and the ties lie between them, so "
            "the likelihood rises without bound as the tie parameter and those differences grow (no maximum-"
            "likelihood estimate exists). The log needs decisive votes that go against that order; ties='drop' fits "
            "the decisive votes alone (reporting the separation with infinite standard errors).")
    null = fit.null_basis
    warn_separation(used, null, reference=spec.reference, position=position != "none")
    separated = separated_systems(ability_groups(null, fit.design), log.systems)
    return make_result(fit, log, used, log.systems, None if reference is None else str(reference), separated)


def _check_identified(used: VoteLog, spec: Spec, covariates: dict, *, dropped: bool) -> None:
    """Refuse a difference design whose coefficients the votes cannot all identify, naming each aliased column and
    what it is a combination of: a covariate whose difference is 0 in every vote, one that is a property of the
    systems, constant (the position bias) or a combination of other covariates, a position bias confounded with
    the systems shown first."""
    flat = used.collapse(judge=False, prompt=False)
    design = difference_design(flat, reference=spec.reference, position=spec.position != "none")
    aliased = aliased_columns(design.X, design.names)
    if not aliased:
        return
    where = " used (ties are left out with ties='drop')" if dropped else ""
    abilities = set(design.names[:design.n_abilities])
    problems = []
    for name, involved in aliased:
        others = [c for c in involved if c != name]
        if name == POSITION:
            problems.append(
                f"the position bias cannot be told apart from the abilities: in every vote{where}, being shown first "
                "equals a difference of per-system scores (as when each pair meets in one order only and the pairs "
                "form no cycle); fit position='none', or collect votes that show pairs in both orders")
        elif not others:
            a, b = covariates.get(name, ("its column for model_a", "its column for model_b"))
            problems.append(f"covariate {name!r}: its difference ({a} - {b}) is 0 in every vote{where}, so the votes "
                            "say nothing about its effect; leave it out")
        else:
            what = (["the systems' abilities (its value is a property of each system)"]
                    if abilities.intersection(others) else [])
            what += ["the position bias (its difference is the same in every vote)"] if POSITION in others else []
            rest = [c for c in others if c not in abilities and c != POSITION]
            what += [f"covariate{'s' if len(rest) > 1 else ''} {', '.join(repr(c) for c in rest)}"] if rest else []
            problems.append(f"covariate {name!r} is a linear combination of {' and '.join(what)} in the votes{where}, "
                            "so its effect cannot be told apart from theirs; leave it out")
    raise InputError("the votes do not identify every coefficient of the model: " + "; ".join(problems) + ".")
