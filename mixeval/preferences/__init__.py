"""Pairwise preferences: Bradley-Terry models of A/B judgment logs (arena leaderboards, reward-model and
LLM-as-judge studies).

:func:`bradley_terry` fits abilities (log-odds; Elo scale as arena leaderboards print them) with a
position (first-shown) bias, ties (Davidson, ordinal), covariates ("style control") and random effects
for judges and prompts (a binomial GLMM on the difference design, fitted by mixeval's engine); the
:class:`PreferenceResult` answers the questions asked of them: intervals (Wald, profile, parametric
bootstrap, and the naive iid bootstrap for comparison), pairwise contrasts with multiplicity control,
simultaneous rank sets, likelihood-ratio tests, variance shares and votes needed.
"""

from ._fit import bradley_terry
from ._inference import to_elo, votes_needed
from ._result import PreferenceResult
from ._simulate import simulate_arena, simulation_targets

__all__ = ["bradley_terry", "PreferenceResult", "simulate_arena", "simulation_targets", "to_elo", "votes_needed"]
