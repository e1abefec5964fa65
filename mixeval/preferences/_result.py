"""The frozen result of a Bradley-Terry fit: abilities on the log-odds and Elo scales and the questions
asked of them (intervals, contrasts, rank sets, tests, variance shares, votes needed)."""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from .._format import format_number, terminal_width, text_table
from .._random import as_generator
from .._results import Result, TestResult, to_plain
from .._validation import require_level, require_positive_int
from ..errors import InputError
from ..mixed import GlmerResult
from ._bootstrap import abilities_of, iid_bootstrap, parametric_bootstrap
from ._inference import (
    ELO_SCALE,
    LOGISTIC_VARIANCE,
    NULL_TOL,
    ability_se,
    contrast_table,
    rank_sets,
    to_elo,
    votes_needed,
)
from ._log import VoteLog
from ._model import ModelFit, refit_quietly, without
from ._profile import profile_interval
from ._scales import converted, outcome_probabilities

__all__ = ["PreferenceResult", "INTERVAL_METHODS", "make_result"]

INTERVAL_METHODS = ("wald", "profile", "bootstrap", "iid-bootstrap")
#: how much each random term adds to the latent variance of one vote's log-odds (a difference of two
#: effects for the system-by-group terms)
_PER_VOTE = {"prompt": 1.0, "system:prompt": 2.0, "system:judge": 2.0, "judge": 1.0}


@dataclass(frozen=True, eq=False)
class PreferenceResult(Result):
    """A fitted Bradley-Terry model (abilities unrounded, on the scale :attr:`scale` names).

    The abilities are the model's: log-odds of winning a decisive vote (``ties="drop"``, ``"davidson"``) or the
    ordinal tie model's latent cumulative log-odds, for a typical judge and prompt when the model has random
    effects (conditional). :meth:`marginal_abilities` averages over new judges and prompts, :meth:`arena_abilities`
    converts to arena leaderboards' scale; :meth:`contrasts` tests differences, also against a margin
    (equivalence, non-inferiority). Under separation (:attr:`separated`) the abilities and contrasts the votes do
    not identify have infinite standard errors.

    Attributes
    ----------
    systems : tuple of str
    estimates : ndarray
        Ability of every system (log-odds; reference system 0 or sum 0).
    cov : ndarray
        Their ``K x K`` covariance (singular: one constraint).
    reference : str or None
        The system whose ability is 0 (``None``: abilities sum to 0).
    ties : {"drop", "davidson", "ordinal"}
    position : {"none", "fixed", "random"}
    random : tuple of str
        Random-effects terms besides the judge position bias.
    position_bias : float or None
        Mean log-odds bonus of the system shown first (``model_a``), with ``position_se``.
    covariates : pandas.DataFrame
        Coefficients of the covariate differences (style control): estimate, se, z, pvalue.
    thresholds : tuple of float or None
        Ordinal ties: R ``clm``'s thresholds ``(theta_1, theta_2)`` for ``P(b) = F(theta_1 - d)``,
        ``P(b or tie) = F(theta_2 - d)``, ``d = s_a - s_b + covariates`` (the position bias is
        ``-(theta_1 + theta_2) / 2``, the half-width ``tau = (theta_2 - theta_1) / 2``).
    tie_parameter : float or None
        Davidson's ``nu`` (ties) or the ordinal ``tau``.
    loglik : float
    n_votes, n_ties : int
        Votes used and ties among them (ties dropped are not used).
    separated : tuple of str
        Systems whose maximum-likelihood ability is infinite relative to the largest group of systems whose
        differences are identified (never won or never lost, or separated through the position bias or a
        covariate); every system when no two share a group.
    model : GlmerResult or None
        The engine's mixed-model fit of a binomial random-effects model (``ties="drop"``): variance components,
        ranef, vcov, ... (abilities there in reference coding, the first system 0, when they sum to 0 here).
        ``None`` for fixed-effects fits and for the ordinal tie model with random effects (its variance
        components are :attr:`varcorr`).

    Examples
    --------
    >>> from mixeval.preferences import bradley_terry, simulate_arena
    >>> log = simulate_arena(2000, {"a": 0.5, "b": 0.0, "c": -0.5}, n_judges=5, judge_sd=0.5, random_state=1)
    >>> fit = bradley_terry(log, judge="judge", position="random")
    >>> fit.abilities.round(3).to_dict()
    {'a': 0.481, 'b': 0.003, 'c': -0.484}
    >>> fit.varcorr[["group", "name"]].values.tolist()
    [['judge', 'position']]
    >>> fit.ranks()[["rank", "rank_lower", "rank_upper"]].values.tolist()
    [[1, 1, 1], [2, 2, 2], [3, 3, 3]]
    """

    systems: tuple[str, ...]
    estimates: np.ndarray = field(repr=False)
    cov: np.ndarray = field(repr=False)
    reference: str | None
    ties: str
    position: str
    random: tuple[str, ...]
    position_bias: float | None
    position_se: float | None
    covariates: pd.DataFrame = field(repr=False)
    thresholds: tuple[float, float] | None
    tie_parameter: float | None
    loglik: float
    n_params: int
    n_votes: int
    n_ties: int
    converged: bool
    separated: tuple[str, ...]
    model: GlmerResult | None = field(default=None, repr=False, compare=False)
    _fit: ModelFit | None = field(default=None, repr=False, compare=False)
    _log: VoteLog | None = field(default=None, repr=False, compare=False)
    _null: np.ndarray | None = field(default=None, repr=False, compare=False)
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    # ------------------------------------------------------------------ numbers
    @property
    def abilities(self) -> pd.Series:
        """Abilities on the log-odds scale."""
        return pd.Series(self.estimates, index=pd.Index(self.systems, name="system"), name="ability")

    @property
    def se(self) -> pd.Series:
        """Standard errors of the abilities (infinite where separation leaves an ability unidentified)."""
        return pd.Series(ability_se(self.cov, self._null), index=pd.Index(self.systems, name="system"), name="se")

    @property
    def elo(self) -> pd.Series:
        """Abilities on the arena (Elo) scale ``400 / ln(10) * s + 1000``."""
        return pd.Series(to_elo(self.estimates), index=pd.Index(self.systems, name="system"), name="elo")

    @property
    def mixed(self) -> bool:
        """A random-effects model (a random position bias per judge or further random terms)."""
        return self.position == "random" or bool(self.random)

    @property
    def varcorr(self) -> pd.DataFrame:
        """Variance components of the random effects (latent log-odds scale); empty for a fixed-effects fit."""
        columns = ["group", "name", "variance", "std"]
        if self._fit is None or self._fit.varcorr is None:
            return pd.DataFrame(columns=columns)
        return self._fit.varcorr[columns].reset_index(drop=True)

    # ------------------------------------------------------------------ intervals, contrasts, ranks
    def intervals(self, level: float = 0.95, *, method: str = "wald", n_resamples: int = 200,
                  random_state=None) -> pd.DataFrame:
        """Confidence intervals of the abilities (log-odds and Elo).

        Parameters
        ----------
        level : float
        method : {"wald", "profile", "bootstrap", "iid-bootstrap"}
            ``wald``: estimate +- z se. ``profile``: profile likelihood (fixed-effects models).
            ``bootstrap``: parametric bootstrap of the fitted model, random effects drawn anew (percentile).
            ``iid-bootstrap``: votes resampled as if independent and the fixed-effects model refitted, as
            arena leaderboards do (too narrow when judges or prompts make votes dependent; shown for comparison).
            Under separation the abilities with infinite standard errors get infinite bootstrap bounds (every
            resample stops where the fit did); ``profile`` bounds them on the side the likelihood does.
        n_resamples, random_state
            For the bootstrap methods.
        """
        level = require_level(level)
        if method not in INTERVAL_METHODS:
            raise InputError(f"method={method!r}: choose one of {', '.join(INTERVAL_METHODS)}.")
        est = self.estimates
        if method == "wald":
            z = sps.norm.ppf(0.5 + level / 2)
            se = self.se.to_numpy()
            lower, upper = est - z * se, est + z * se
        elif method == "profile":
            lower, upper = self._profile(level)
        else:
            draws = self.bootstrap_abilities(n_resamples=n_resamples, random_state=random_state,
                                             iid=method == "iid-bootstrap")
            lower, upper = np.quantile(draws, [0.5 - level / 2, 0.5 + level / 2], axis=0)
            unidentified = np.isinf(self.se.to_numpy())  # separation: resamples repeat where the fit stopped
            lower, upper = np.where(unidentified, -np.inf, lower), np.where(unidentified, np.inf, upper)
        return pd.DataFrame({"ability": est, "lower": lower, "upper": upper, "elo": to_elo(est),
                             "elo_lower": to_elo(lower), "elo_upper": to_elo(upper), "level": level,
                             "method": method}, index=pd.Index(self.systems, name="system"))

    def _profile(self, level: float) -> tuple[np.ndarray, np.ndarray]:
        fit = self._require_fit()
        if fit.fixed is None:
            raise InputError("profile intervals are computed for fixed-effects models; for random-effects models "
                             "use method='wald' or method='bootstrap' (parametric).")
        p = fit.design.p
        lower, upper = np.zeros(len(self.systems)), np.zeros(len(self.systems))
        log = self._collapsed_log()
        for k in range(len(self.systems)):
            c = np.zeros(p)
            c[:fit.design.n_abilities] = fit.design.C[k]
            if not np.any(c):
                continue  # the reference system: 0 by definition
            lower[k], upper[k] = profile_interval(fit, log, c, level)
        return lower, upper

    def bootstrap_abilities(self, *, n_resamples: int = 200, random_state=None, iid: bool = False) -> np.ndarray:
        """Resampled abilities (rows: resamples): parametric bootstrap, or the naive iid vote bootstrap."""
        n_resamples = require_positive_int(n_resamples, "n_resamples", minimum=2)
        fit = self._require_fit()
        rng = as_generator(random_state)
        if iid:
            return iid_bootstrap(self._log, fit.spec, n_resamples=n_resamples, random_state=rng)
        return parametric_bootstrap(fit, self._log, n_resamples=n_resamples, random_state=rng)

    def contrasts(self, *, adjust: str = "holm", level: float = 0.95, random_state=0, versus: str | None = None,
                  marginal: bool = False, scale: str = "log-odds", delta: float | None = None,
                  side: str = "equivalence") -> pd.DataFrame:
        """Ability differences with tests, intervals and the outcome probabilities the model implies.

        Parameters
        ----------
        adjust : str
            ``"holm"`` (default), any method of :func:`mixeval._adjust.adjust_pvalues`, ``"tukey"`` or ``"max-t"``
            (simultaneous intervals; two-sided tests only).
        level : float
            Confidence level of the intervals.
        random_state
            Seeds the max-t critical value and p-values.
        versus : str, optional
            Compare every other system with this one (``system - versus``) instead of all pairs.
        marginal : bool
            Differences of the population-averaged abilities (:meth:`marginal_abilities`) and outcome probabilities
            averaged over the random deviations of a new judge and prompt; default the model's (conditional)
            scale. The same for a fixed-effects fit.
        scale : {"log-odds", "elo"}
            Units of ``estimate``, ``se``, the interval and ``delta`` (Elo points: ``400 / ln 10`` per log-odd).
        delta : float, optional
            A margin: the test becomes emmeans' ``test(..., delta = delta, side = side)`` (normal reference).
        side : {"equivalence", ">", "<"}
            With ``delta``: ``"equivalence"`` (two one-sided tests, TOST: ``H0: |difference| >= delta``, p the
            larger one-sided p-value), ``">"`` (non-inferiority of ``system``: ``H0: difference <= -delta``) or
            ``"<"`` (``H0: difference >= delta``).

        Returns
        -------
        pandas.DataFrame
            ``system``, ``versus``, ``estimate``, ``se``, ``z`` (the test's statistic), ``pvalue``,
            ``pvalue_adjusted``, ``lower``, ``upper``, ``level``, ``win_probability`` (``P(system wins)`` in a vote
            in which neither is shown first and covariates are equal: for ``ties="drop"`` the probability of
            winning a decisive vote, for the tie models of winning outright) and, for the tie models,
            ``tie_probability``. ``attrs``: the null hypothesis, the adjustment and the scale. Differences that
            separation leaves unidentified have an infinite ``se`` and NaN ``z`` and p-values.

        Notes
        -----
        ``z = d / se``, or with a margin ``(|d| - delta) / se`` (equivalence), ``(d + delta) / se`` (``">"``),
        ``(d - delta) / se`` (``"<"``): :func:`mixeval._margin.margin_test`.

        Examples
        --------
        >>> from mixeval.preferences import bradley_terry, simulate_arena
        >>> fit = bradley_terry(simulate_arena(4000, {"a": 0.05, "b": 0.0, "c": -0.6}, random_state=1))
        >>> tost = fit.contrasts(delta=30, scale="elo", versus="b")  # within 30 Elo points of b?
        >>> tost[["system", "versus"]].values.tolist(), tost.attrs["null"]
        ([['a', 'b'], ['c', 'b']], '|difference| >= 30 elo')
        >>> bool(tost.pvalue.iloc[0] < 0.05 < tost.pvalue.iloc[1])
        True
        """
        level = require_level(level)
        units = {"log-odds": 1.0, "elo": ELO_SCALE}
        if scale not in units:
            raise InputError(f"scale={scale!r}: choose 'log-odds' or 'elo'.")
        est, cov = self._on_scale("model", marginal)
        pairs = None
        if versus is not None:
            if str(versus) not in self.systems:
                raise InputError(f"versus={versus!r} is not one of the systems ({', '.join(self.systems[:10])}).")
            v = self.systems.index(str(versus))
            others = np.array([k for k in range(len(self.systems)) if k != v])
            pairs = (others, np.full(others.size, v))
        table = contrast_table(self.systems, est, cov, adjust=adjust, level=level, random_state=random_state,
                               null=self._null, pairs=pairs, delta=delta, side=side, unit=units[scale],
                               unit_name=scale)
        i = np.array([self.systems.index(x) for x in table.system])
        j = np.array([self.systems.index(x) for x in table.versus])
        probs = self._neutral_probabilities(i, j, marginal)
        table["win_probability"] = probs[2]
        if self.ties != "drop":
            table["tie_probability"] = probs[1]
        table.attrs["probabilities"] = "population-averaged" if marginal and self.mixed else (
            "conditional on a typical judge and prompt" if self.mixed else "model-implied")
        return table

    def win_probabilities(self, *, marginal: bool = False) -> pd.DataFrame:
        """``P(row wins against column)`` the model implies for a vote in which neither is shown first and
        covariates are equal: winning a decisive vote for ``ties="drop"``, winning outright (not tying) for the
        tie models; for a typical judge and prompt, or averaged over new ones (``marginal=True``)."""
        k = len(self.systems)
        i, j = np.meshgrid(np.arange(k), np.arange(k), indexing="ij")
        win = self._neutral_probabilities(i.ravel(), j.ravel(), marginal)[2].reshape(k, k)
        np.fill_diagonal(win, np.nan)
        return pd.DataFrame(win, index=pd.Index(self.systems, name="system"),
                            columns=pd.Index(self.systems, name="versus"))

    def _neutral_probabilities(self, i: np.ndarray, j: np.ndarray, marginal: bool) -> np.ndarray:
        """``(P(j wins), P(tie), P(i wins))`` at the conditional difference ``s_i - s_j``, the random deviations at
        0 or averaged over (``marginal``)."""
        phi = self._fit.phi if self._fit is not None else float("nan")
        variance = self.vote_variance if marginal else 0.0
        return outcome_probabilities(self.ties, self.estimates[i] - self.estimates[j], phi, variance)

    @property
    def scale(self) -> str:
        """What the abilities (and ``elo``) measure."""
        base = {"drop": "log-odds of winning a decisive vote (Bradley-Terry; ties left out)",
                "davidson": "log-odds of winning a decisive vote (Davidson: P(a wins) / P(b wins) = exp(s_a - s_b))",
                "ordinal": "latent cumulative log-odds (ordinal ties: P(a wins) = F(s_a - s_b - tau), "
                           "P(b wins) = F(s_b - s_a - tau))"}[self.ties]
        if self.mixed:
            base += ("; conditional: for a typical judge and prompt (random deviations 0); marginal_abilities() "
                     "gives the population-averaged ones")
        return base

    @property
    def vote_variance(self) -> float:
        """Latent variance of one vote's random deviations (judge position, prompt, system-by-judge and
        system-by-prompt terms; :meth:`variance_shares`), 0 for a fixed-effects fit."""
        if not self.mixed:
            return 0.0
        shares = self.variance_shares()
        return float(shares.loc[shares.term != "residual", "per_vote"].sum())

    def _on_scale(self, target: str, marginal: bool) -> tuple[np.ndarray, np.ndarray]:
        """Abilities and their covariance on the model's scale (conditional or population-averaged) or arena's."""
        if target == "model" and not (marginal and self.mixed):
            return self.estimates, self.cov
        key = (target, bool(marginal))
        if key not in self._cache:
            fit = self._require_fit()
            self._cache[key] = converted(fit, self._fit_log(), target=target,
                                         variance=self.vote_variance if marginal else 0.0)
        return self._cache[key]

    def marginal_abilities(self, level: float = 0.95) -> pd.DataFrame:
        """Population-averaged abilities with Wald intervals (log-odds and Elo).

        The abilities of this model without its random effects that reproduce the outcome probabilities averaged
        over a new judge's and prompt's random deviations on this log's votes: what a fixed-effects fit of votes
        from ever new judges and prompts estimates (:mod:`mixeval.preferences._scales`). About the conditional
        abilities times ``1 / sqrt(1 + 0.346 sigma^2)``, ``sigma^2`` = :attr:`vote_variance`. For a fixed-effects
        fit they are the abilities. Standard errors by the delta method, the variance components as estimated.

        Examples
        --------
        >>> from mixeval.preferences import bradley_terry, simulate_arena
        >>> log = simulate_arena(3000, {"a": 0.8, "b": 0.0, "c": -0.8}, n_judges=10, judge_sd=1.5, random_state=4)
        >>> fit = bradley_terry(log, judge="judge", position="random")
        >>> m = fit.marginal_abilities()
        >>> bool((m.ability.abs() < fit.abilities.abs()).all())  # attenuated towards 0
        True
        """
        est, cov = self._on_scale("model", True)
        return self._interval_table(est, cov, level, "population-averaged" if self.mixed else "model")

    def arena_abilities(self, level: float = 0.95, *, ties: str = "half") -> pd.DataFrame:
        """Abilities on arena leaderboards' scale: the Bradley-Terry abilities (no position or covariate term)
        that arena's fit converges to on this log's votes when this model holds, population-averaged.

        ``ties="half"``: a tie counts as half a win for each system (FastChat's ``compute_mle_elo``, Chiang et al.
        2024); ``"drop"``: ties left out. Standard errors by the delta method. For the ordinal tie model the
        arena (half-win) abilities are narrower than the model's by about ``4 F(tau) (1 - F(tau))`` near 0,
        the decisive-vote (dropped-ties) ones wider by about ``2 F(tau)``; for ``ties="drop"`` and Davidson's
        model without random effects the dropped-ties scale is the model's own.
        """
        if ties not in ("half", "drop"):
            raise InputError(f"ties={ties!r}: choose 'half' (a tie half a win each, as arena) or 'drop'.")
        if ties == "half" and self.ties == "drop" and self._require_log().n_ties:
            raise InputError("arena's fit counts a tie as half a win for each system, and this model (ties='drop') "
                             "says nothing about ties: refit with ties='ordinal' or 'davidson' to convert to arena's "
                             "scale, or ask for ties='drop' (arena's fit with ties left out).")
        est, cov = self._on_scale("arena" if ties == "half" else "arena-drop", True)
        return self._interval_table(est, cov, level, f"arena (ties {'as half wins' if ties == 'half' else 'dropped'})")

    def _interval_table(self, est: np.ndarray, cov: np.ndarray, level: float, scale: str) -> pd.DataFrame:
        level = require_level(level)
        se = ability_se(cov, self._null)
        z = sps.norm.ppf(0.5 + level / 2)
        out = pd.DataFrame({"ability": est, "se": se, "lower": est - z * se, "upper": est + z * se,
                            "elo": to_elo(est), "elo_lower": to_elo(est - z * se), "elo_upper": to_elo(est + z * se),
                            "level": level}, index=pd.Index(self.systems, name="system"))
        out.attrs["scale"] = scale
        return out

    def ranks(self, level: float = 0.95, *, random_state=0) -> pd.DataFrame:
        """Rank of every system (1 = best) with a simultaneous ``level`` confidence set of ranks (max-t over all
        pairs; see :func:`mixeval.preferences._inference.rank_sets`)."""
        level = require_level(level)
        rank, lower, upper, crit = rank_sets(self.estimates, self.cov, level, random_state=random_state,
                                             null=self._null)
        out = pd.DataFrame({"ability": self.estimates, "elo": to_elo(self.estimates), "rank": rank,
                            "rank_lower": lower, "rank_upper": upper, "level": level},
                           index=pd.Index(self.systems, name="system"))
        out.attrs["critical_value"] = crit
        return out.sort_values(["rank"])

    # ------------------------------------------------------------------ tests and shares
    def test_systems(self) -> TestResult:
        """Likelihood-ratio test of "all systems are equally able" (abilities dropped; everything else kept)."""
        fit = self._require_fit()
        null = refit_quietly(self._fit_log(), without(fit.spec, abilities=False))
        stat = max(2 * (fit.loglik - null.loglik), 0.0)
        df = float(len(self.systems) - 1)
        return TestResult(statistic=stat, pvalue=float(sps.chi2.sf(stat, df)), df=df,
                          method="likelihood-ratio test of equal abilities",
                          details={"loglik": fit.loglik, "loglik_null": null.loglik})

    def test_random(self, term: str) -> TestResult:
        """Likelihood-ratio test that a random-effects term has variance 0 (``"judge"`` for the random position
        bias, or one of ``random``); the p-value is the boundary mixture ``0.5 chi2_0 + 0.5 chi2_1``
        (Self & Liang 1987)."""
        fit = self._require_fit()
        present = (["judge"] if self.position == "random" else []) + list(self.random)
        if term not in present:
            raise InputError(f"term={term!r} is not a random term of this model ({', '.join(present) or 'none'}).")
        reduced = refit_quietly(self._fit_log(), without(fit.spec, term=term))
        stat = max(2 * (fit.loglik - reduced.loglik), 0.0)
        return TestResult(statistic=stat, pvalue=float(0.5 * sps.chi2.sf(stat, 1)) if stat > 0 else 1.0, df=1.0,
                          method=f"likelihood-ratio test of the {term} variance (boundary: 0.5 chi2_0 + 0.5 chi2_1)",
                          details={"loglik": fit.loglik, "loglik_reduced": reduced.loglik})

    def variance_shares(self) -> pd.DataFrame:
        """How much of the latent variance of one vote's log-odds each random term contributes, beside the
        logistic residual ``pi^2 / 3`` (a system-by-prompt or system-by-judge effect enters a vote twice:
        ``u_a - u_b``)."""
        rows = []
        terms = (["judge"] if self.position == "random" else []) + list(self.random)
        vc = self.varcorr
        for term, (_, r) in zip(terms, vc.iterrows()):
            rows.append({"term": term, "group": r["group"], "variance": float(r["variance"]),
                         "per_vote": _PER_VOTE[term] * float(r["variance"])})
        rows.append({"term": "residual", "group": "logistic", "variance": LOGISTIC_VARIANCE,
                     "per_vote": LOGISTIC_VARIANCE})
        out = pd.DataFrame(rows)
        out["share"] = out["per_vote"] / out["per_vote"].sum()
        return out

    def votes_needed(self, system: str, versus: str, *, power: float = 0.8, alpha: float = 0.05,
                     delta: float | None = None) -> float:
        """Head-to-head votes needed to separate two systems (two-sided Wald test at ``alpha`` with ``power``),
        for their estimated difference or a given ``delta`` (log-odds); see
        :func:`mixeval.preferences._inference.votes_needed` (random deviations attenuate the difference;
        system-by-judge variance over a fixed pool of judges sets a floor that more votes cannot cross)."""
        idx = {s: i for i, s in enumerate(self.systems)}
        for s in (system, versus):
            if s not in idx:
                raise InputError(f"{s!r} is not one of the systems.")
        d = self.estimates[idx[system]] - self.estimates[idx[versus]] if delta is None else float(delta)
        shares = self.variance_shares()
        vote_var = float(shares.loc[shares.term != "residual", "per_vote"].sum())
        fixed_var = 0.0
        if "system:judge" in self.random:
            v = float(shares.loc[shares.term == "system:judge", "variance"].iloc[0])
            fixed_var = 2 * v / len(self._require_log().judges)
        return votes_needed(d, power=power, alpha=alpha, vote_variance=vote_var, fixed_variance=fixed_var)

    def compare_iid(self, level: float = 0.95, *, n_resamples: int = 200, random_state=None) -> pd.DataFrame:
        """This model's Wald intervals of the population-averaged abilities (:meth:`marginal_abilities`; the
        abilities themselves for a fixed-effects fit) beside the naive iid vote bootstrap's (percentile) and the
        width ratio.

        Both estimate the abilities averaged over judges and prompts, so the ratio measures only the dependence
        between votes of the same judge or prompt that the iid bootstrap ignores (the conditional abilities of a
        mixed model are on a wider scale as well).
        """
        model = self.marginal_abilities(level)
        iid = self.intervals(level, method="iid-bootstrap", n_resamples=n_resamples, random_state=random_state)
        out = pd.DataFrame({"ability": model.ability, "lower": model.lower, "upper": model.upper,
                            "iid_lower": iid.lower, "iid_upper": iid.upper,
                            "width_ratio": (model.upper - model.lower) / (iid.upper - iid.lower)}, index=model.index)
        out.attrs["scale"] = model.attrs["scale"]
        return out

    def to_report(self, *, level: float = 0.95, n_resamples: int = 200, random_state=None, adjust: str = "holm",
                  power: float = 0.8, title: str | None = None, meta: Mapping[str, str] | None = None):
        """The leaderboard report (:func:`mixeval.preferences._report.preference_report`): a
        :class:`~mixeval.report.Report` with ``.save(path)`` (one HTML page) and ``.to_text()``; ``meta`` adds facts
        under the title (data file, rows, command)."""
        from ._report import preference_report

        return preference_report(self, level=level, n_resamples=n_resamples, random_state=random_state,
                                 adjust=adjust, power=power, title=title, meta=meta)

    @property
    def infinite_terms(self) -> tuple[str, ...]:
        """The position bias and covariates whose estimates separation leaves infinite (infinite standard errors)."""
        terms = ["position bias"] if self.position_se is not None and np.isinf(self.position_se) else []
        return tuple(terms + [f"covariate {c!r}" for c in self.covariates.index[np.isinf(self.covariates.se)]])

    # ------------------------------------------------------------------ helpers
    def _require_fit(self) -> ModelFit:
        if self._fit is None or self._log is None:
            raise InputError("this result holds no fit to refit (it was not made by bradley_terry).")
        return self._fit

    def _require_log(self) -> VoteLog:
        self._require_fit()
        return self._log

    def _fit_log(self) -> VoteLog:
        log = self._log
        return log.subset(log.outcome != 1) if self.ties == "drop" else log

    def _collapsed_log(self) -> VoteLog:
        return self._fit_log().collapse(judge=False, prompt=False)

    # ------------------------------------------------------------------ printing
    def summary(self) -> str:
        table = pd.DataFrame({"ability": self.estimates, "se": self.se.to_numpy(), "elo": to_elo(self.estimates)},
                             index=pd.Index(self.systems, name="system")).sort_values("ability", ascending=False)
        mixed = self.mixed
        kind = ("mixed (engine: Laplace, " + ("cumulative link" if self.ties == "ordinal" else "binomial GLMM") + ")"
                if mixed else "fixed effects")
        out = [f"Bradley-Terry model ({kind}); ties: {self.ties}; position: {self.position}"
               + (f"; random: {', '.join(self.random)}" if self.random else ""),
               f"{self.n_votes:,} votes ({self.n_ties:,} ties used), {len(self.systems)} systems; "
               f"logLik {format_number(self.loglik, 6)}",
               "constraint: " + (f"ability of {self.reference!r} = 0" if self.reference else "abilities sum to 0")
               + f"; Elo = {format_number(ELO_SCALE, 6)} * ability + 1000", f"abilities: {self.scale}", "",
               text_table(table, width=terminal_width())]
        if self.position_bias is not None:
            out.append(f"position bias (first shown): {format_number(self.position_bias)} "
                       f"(se {format_number(self.position_se)})")
        if self.thresholds is not None:
            out.append(f"thresholds (clm): {format_number(self.thresholds[0])}, {format_number(self.thresholds[1])}")
        if self.ties == "davidson":
            out.append(f"Davidson tie parameter nu: {format_number(self.tie_parameter)}")
        if len(self.covariates):
            out += ["", "covariates (difference first - second):", text_table(self.covariates, width=terminal_width())]
        if mixed:
            out += ["", "random effects (latent log-odds scale):", text_table(self.varcorr, width=terminal_width())]
        if self.separated:
            out.append(f"warning: infinite abilities (separation): {', '.join(self.separated)}")
        if self.infinite_terms:
            out.append(f"warning: infinite estimates (separation): {', '.join(self.infinite_terms)}")
        if not self.converged:
            out.append("warning: the fit did not converge")
        return "\n".join(out)

    def _repr_html_(self) -> str:
        return "<pre>" + html.escape(self.summary()) + "</pre>"

    def to_dict(self) -> dict[str, Any]:
        """What ``mixeval preferences LOG --json`` prints (numbers unrounded)."""
        return to_plain({
            "systems": list(self.systems),
            "scale": self.scale,
            "abilities": dict(zip(self.systems, self.estimates.tolist())),
            "se": dict(zip(self.systems, self.se.tolist())),
            "elo": dict(zip(self.systems, to_elo(self.estimates).tolist())),
            "reference": self.reference,
            "ties": self.ties,
            "position": {"mode": self.position, "estimate": self.position_bias, "se": self.position_se},
            "random": list(self.random),
            "thresholds": list(self.thresholds) if self.thresholds is not None else None,
            "tie_parameter": self.tie_parameter,
            "covariates": {r: {"estimate": float(v.estimate), "se": float(v.se)} for r, v in self.covariates.iterrows()},
            "loglik": self.loglik,
            "n_params": self.n_params,
            "varcorr": {f"{g}.{n}": float(v) for g, n, v in zip(self.varcorr.group, self.varcorr.name,
                                                                self.varcorr.variance)},
            "n_votes": self.n_votes,
            "n_ties": self.n_ties,
            "converged": self.converged,
            "separated": list(self.separated),
        })


def make_result(fit: ModelFit, log: VoteLog, used: VoteLog, systems: tuple[str, ...], reference: str | None,
                separated: list[str]) -> PreferenceResult:
    """Assemble the result from one fit (``log``: every vote; ``used``: the votes the tie model uses)."""
    d = fit.design
    est = abilities_of(fit)
    va = fit.cov[:d.n_abilities, :d.n_abilities]
    cov = d.C @ va @ d.C.T
    null = fit.null_basis
    se = np.sqrt(np.maximum(np.diag(fit.cov), 0.0))
    se[np.linalg.norm(null, axis=1) > NULL_TOL] = np.inf  # coefficients the separated votes do not identify
    names = list(d.names)
    pos = names.index("position") if "position" in names else None
    bias = float(fit.beta[pos]) if pos is not None else None
    bias_se = float(se[pos]) if pos is not None else None
    cov_idx = [names.index(c) for c in used.covariate_names]
    covs = pd.DataFrame({"estimate": fit.beta[cov_idx], "se": se[cov_idx]}, index=pd.Index(used.covariate_names,
                                                                                           name="covariate"))
    with np.errstate(divide="ignore", invalid="ignore"):
        covs["z"] = np.where(np.isfinite(covs.se), covs.estimate / covs.se, np.nan)  # separated: no test
    covs["pvalue"] = 2 * sps.norm.sf(np.abs(covs.z))
    thresholds = tie = None
    if fit.spec.ties == "ordinal":
        g = bias if bias is not None else 0.0
        thresholds = (-fit.phi - g, fit.phi - g)
        tie = fit.phi
    elif fit.spec.ties == "davidson":
        tie = float(np.exp(fit.phi))
    return PreferenceResult(
        systems=systems, estimates=est, cov=0.5 * (cov + cov.T), reference=reference, ties=fit.spec.ties,
        position=fit.spec.position, random=fit.spec.random, position_bias=bias, position_se=bias_se, covariates=covs,
        thresholds=thresholds, tie_parameter=tie, loglik=fit.loglik, n_params=fit.n_params, n_votes=used.n_votes,
        n_ties=used.n_ties, converged=fit.converged, separated=tuple(separated), model=fit.glmm, _fit=fit, _log=log,
        _null=d.C @ null[:d.n_abilities] if null.shape[1] else None)

