"""``bradley_terry``: a log of pairwise judgments -> abilities (the stages chained)."""

from __future__ import annotations

import pandas as pd

from .._validation import require_dataframe
from ..errors import InputError
from ._design import POSITIONS, reference_index
from ._fixed import TIES
from ._log import check_connected, never_beaten_or_never_winning, read_log, warn_separation, win_components
from ._mixed import check_random
from ._model import Spec, fit_model, prepare_votes
from ._result import PreferenceResult, make_result
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
        Bad columns or verdicts, self-pairs, a disconnected comparison graph (naming its components).

    Warns
    -----
    SeparationWarning
        The win graph falls into groups that never both beat and lost to one another (a system never lost, or
        never won): differences between groups are infinite, reported with infinite standard errors; the rest is
        the fit of the votes within groups.

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
    labels = win_components(used)
    warn_separation(used, labels)
    separated = never_beaten_or_never_winning(used)
    spec = Spec(ties=ties, position=position, random=random, reference=reference_index(log.systems, reference))
    fit = fit_model(used, spec)
    return make_result(fit, log, used, log.systems, None if reference is None else str(reference), separated)
