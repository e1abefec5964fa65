"""Parametric bootstrap of a mixed-model fit (lme4's ``bootMer(type = "parametric", use.u = FALSE)``).

Stages: :func:`simulate_blocks` draws responses from the fitted model in blocks (one seeded stream,
so the draws do not depend on the number of worker processes), :func:`refit_blocks` re-estimates the
model on each (same design, new response: only the response's cross-products are recomputed), and
:func:`bootstrap_fit` chains them and collects a statistic of every refit.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._progress import progress
from .._random import as_generator
from .._validation import require_level, require_positive_int
from ..errors import InputError
from ._protocol import FitModel, RefitSummary, as_fit_model

__all__ = ["BootstrapResult", "bootstrap_fit", "parametric_refits", "simulate_blocks"]

#: simulated responses per block (bounds the memory of a block to ``nobs * BLOCK`` doubles)
BLOCK = 32


def simulate_blocks(model: FitModel, n_resamples: int, rng: np.random.Generator, *,
                    block: int | None = None) -> Iterator[np.ndarray]:
    """Responses simulated from the fit, ``(nobs, <= block)`` at a time, from one generator."""
    size = block or max(1, min(BLOCK, (1 << 22) // max(model.nobs, 1)))
    done = 0
    while done < n_resamples:
        k = min(size, n_resamples - done)
        yield model.simulate(k, rng)
        done += k


_WORKER: dict[str, Any] = {}


def _init_worker(model: FitModel, reml: bool | None, statistic: Callable | None) -> None:
    from ._blas import limit_threads_per_process

    limit_threads_per_process(1)  # n_jobs processes already use the cores: no BLAS threads on top
    _WORKER.update(model=model, reml=reml, statistic=statistic)


def _refit_block(Y: np.ndarray) -> list:
    model, reml, statistic = _WORKER["model"], _WORKER["reml"], _WORKER["statistic"]
    return _refit_local(model, Y, reml, statistic)


def _refit_local(model: FitModel, Y: np.ndarray, reml: bool | None, statistic: Callable | None) -> list:
    if statistic is None:
        return model.refit(Y, reml)
    return [np.atleast_1d(np.asarray(statistic(model.refit_result(Y[:, b], reml)), dtype=float))
            for b in range(Y.shape[1])]


def refit_blocks(model: FitModel, blocks: Iterator[np.ndarray], *, reml: bool | None = None,
                 statistic: Callable | None = None, n_jobs: int = 1, total: int | None = None,
                 show_progress: bool | None = None, desc: str = "bootstrap") -> list:
    """Refit every simulated response; in ``n_jobs`` processes when ``n_jobs > 1`` (Unix: fork)."""
    out: list = []
    bar = progress(range(total or 0), total=total, desc=desc, enabled=show_progress)
    it = iter(bar)

    def advance(k: int) -> None:
        for _ in range(k):
            next(it, None)

    if n_jobs == 1:
        for Y in blocks:
            out.extend(_refit_local(model, Y, reml, statistic))
            advance(Y.shape[1])
    else:
        ctx = multiprocessing.get_context("fork")
        with cf.ProcessPoolExecutor(max_workers=n_jobs, mp_context=ctx, initializer=_init_worker,
                                    initargs=(model, reml, statistic)) as pool:
            futures = [pool.submit(_refit_block, Y) for Y in blocks]
            for fut in futures:
                res = fut.result()
                out.extend(res)
                advance(len(res))
    if hasattr(bar, "close"):
        bar.close()
    return out


def parametric_refits(fit, *, n_resamples: int = 1000, random_state: Any = None, reml: bool | None = None,
                      n_jobs: int = 1, progress: bool | None = None) -> list[RefitSummary]:
    """``n_resamples`` refits of the model to responses simulated from it (parameters, variances, ...).

    Examples
    --------
    >>> from mixeval import lmer
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=15, systems=("A",), n_raters=4)
    >>> fit = lmer("score ~ 1 + (1|item)", df)
    >>> len(parametric_refits(fit, n_resamples=5, random_state=0))
    5
    """
    model = as_fit_model(fit)
    n = require_positive_int(n_resamples, "n_resamples")
    rng = as_generator(random_state)
    return refit_blocks(model, simulate_blocks(model, n, rng), reml=reml, n_jobs=_n_jobs(n_jobs), total=n,
                        show_progress=progress)


def _n_jobs(n_jobs: int | None) -> int:
    import os

    if n_jobs is None or n_jobs == -1:
        return os.cpu_count() or 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1:
        raise InputError(f"n_jobs must be a positive integer or -1 (all cores); got {n_jobs!r}.")
    return int(n_jobs)


@dataclass(frozen=True)
class BootstrapResult:
    """Draws of a statistic over parametric-bootstrap refits (lme4's ``bootMer`` result).

    Attributes
    ----------
    estimate : pandas.Series
        The statistic on the original fit (``t0``).
    draws : pandas.DataFrame
        One row per refit (``t``), one column per component of the statistic.
    n_resamples : int
    n_singular : int
        Refits with a variance component at 0 (counted when the default statistic is used).

    Examples
    --------
    >>> from mixeval import lmer
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=15, systems=("A",), n_raters=4)
    >>> fit = lmer("score ~ 1 + (1|item)", df)
    >>> b = bootstrap_fit(fit, n_resamples=20, random_state=1, progress=False)
    >>> b.draws.shape, list(b.interval().columns)
    ((20, 3), ['lower', 'upper'])
    """

    estimate: pd.Series
    draws: pd.DataFrame = field(repr=False)
    n_resamples: int
    n_singular: int | None = None

    def interval(self, level: float = 0.95) -> pd.DataFrame:
        """Percentile intervals (lme4's ``confint(method = "boot")``, ``boot.type = "perc"``)."""
        level = require_level(level)
        a = (1.0 - level) / 2.0
        q = self.draws.quantile([a, 1.0 - a]).T
        q.columns = ["lower", "upper"]
        return q

    @property
    def se(self) -> pd.Series:
        """Bootstrap standard errors (standard deviation of the draws)."""
        return self.draws.std(ddof=1)

    def summary(self) -> str:
        table = pd.DataFrame({"estimate": self.estimate, "se": self.se}).join(self.interval())
        head = f"parametric bootstrap, {self.n_resamples} refits"
        if self.n_singular is not None:
            head += f" ({self.n_singular} singular)"
        return head + "\n" + table.to_string(float_format=lambda v: f"{v:.6g}")

    def _repr_html_(self) -> str:
        return pd.DataFrame({"estimate": self.estimate, "se": self.se}).join(self.interval()).to_html()

    def to_dict(self) -> dict:
        iv = self.interval()
        return {"n_resamples": self.n_resamples, "n_singular": self.n_singular,
                "estimate": self.estimate.to_dict(), "se": self.se.to_dict(),
                "intervals": {k: [float(iv.loc[k, "lower"]), float(iv.loc[k, "upper"])] for k in iv.index}}


def bootstrap_fit(fit, statistic: Callable | None = None, *, n_resamples: int = 1000, random_state: Any = None,
                  reml: bool | None = None, n_jobs: int = 1, progress: bool | None = None) -> BootstrapResult:
    """Parametric bootstrap of a mixed-model fit: simulate from the fit, refit, collect a statistic.

    Parameters
    ----------
    fit : LmerResult, GlmerResult or FitModel
        The fitted model (:func:`mixeval.lmer`, :func:`mixeval.glmer`).
    statistic : callable, optional
        ``statistic(refit) -> float or array`` of each refit (an :class:`~mixeval.mixed.LmerResult` or
        :class:`~mixeval.mixed.GlmerResult`).
        Default: the standard deviations, ``sigma`` and the fixed effects, named as lme4's
        ``confint(oldNames = FALSE)`` (the fast path: no full result is built per refit).
    n_resamples : int, default 1000
        Number of simulated data sets (lme4's ``nsim``).
    random_state : None, int or numpy.random.Generator
        Seed: same seed, same draws (also for any ``n_jobs``).
    reml : bool, optional
        Refit by REML or ML; default as the original fit.
    n_jobs : int, default 1
        Worker processes for the refits (-1: all cores). The draws are made in the main process.
    progress : bool, optional
        Show a progress bar (default: when the work takes more than 2 seconds).

    Returns
    -------
    BootstrapResult

    Notes
    -----
    Each simulated response is ``y* = X beta_hat + sum_k Z_k b_k* + e*`` with
    ``b_k* ~ N(0, sigma_hat^2 theta_k^2 I)`` and ``e* ~ N(0, sigma_hat^2 I)`` (new random effects:
    ``use.u = FALSE``); with random slopes each level's ``b_k*`` is ``N(0, sigma_hat^2 Lambda_k Lambda_k')``
    and the statistic's sd's and correlations are lme4's ``sd_x|g`` and ``cor_x.(Intercept)|g``. Only ``Z'y*``,
    ``X'y*`` and ``y*'y*`` are recomputed per draw, for a block of draws by one sparse product; ``Z'Z``,
    ``Z'X``, ``X'X`` are the original fit's. A GLMM (:class:`~mixeval.uncertainty.GlmmFitModel`) draws
    ``u* ~ N(0, I)``, ``mu* = g^{-1}(X beta_hat + Z Lambda u*)`` and binomial successes out of each row's
    trials (``weights``) or Poisson counts, and refits from the fit's estimates (as lme4's ``refit``);
    ``reml`` does not apply.

    Examples
    --------
    >>> from mixeval import lmer
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=15, systems=("A",), n_raters=4)
    >>> b = bootstrap_fit(lmer("score ~ 1 + (1|item)", df), n_resamples=50, random_state=1, progress=False)
    >>> list(b.draws.columns)
    ['sd_(Intercept)|item', 'sigma', '(Intercept)']
    """
    model = as_fit_model(fit)
    n = require_positive_int(n_resamples, "n_resamples")
    rng = as_generator(random_state)
    jobs = _n_jobs(n_jobs)
    blocks = simulate_blocks(model, n, rng)
    if statistic is None:
        refits = refit_blocks(model, blocks, reml=reml, n_jobs=jobs, total=n, show_progress=progress)
        names = list(model.param_names)
        draws = pd.DataFrame(np.array([r.params for r in refits]), columns=names)
        estimate = pd.Series(model.estimates(), index=names)
        return BootstrapResult(estimate=estimate, draws=draws, n_resamples=n,
                               n_singular=int(sum(r.singular for r in refits)))
    if not callable(statistic):
        raise InputError("statistic must be a function of a fitted model, e.g. lambda m: m.sigma.")
    t0 = np.atleast_1d(np.asarray(statistic(model.fit), dtype=float))
    values = refit_blocks(model, blocks, reml=reml, statistic=statistic, n_jobs=jobs, total=n, show_progress=progress)
    names = [f"t{i + 1}" for i in range(t0.size)]
    return BootstrapResult(estimate=pd.Series(t0, index=names), draws=pd.DataFrame(np.array(values), columns=names),
                           n_resamples=n)
