"""Each variance component's part of the variance of a mean or contrast, and the few-levels warning.

A component estimated from few levels (3 seeds, 4 prompt templates) that carries most of a mean's variance
makes z intervals -- the default of :class:`mixeval.Study`, emmeans' for glmer fits -- cover less than their
nominal level. In the idealised model (the component's estimate a scaled chi-square with ``k = levels - 1``
df carrying a share ``rho`` of the variance ``V``, the rest known) the 95% z interval covers

    c(k, rho) = E_X[2 Phi(1.96 sqrt(rho X / k + 1 - rho)) - 1],   X ~ chi2_k,

(computed by quadrature). :func:`few_levels_warning` warns when ``c(k, rho)`` of
some component falls below :data:`COVERAGE_FLOOR` (1.5 points short of 95%): roughly a component with fewer
than 10 levels carrying more than half of the variance, or fewer than 20 carrying nearly all of it.

The parts come from Euler's theorem: ``V = l' Phi l`` is homogeneous of degree one in the variance
parameters (the residual or working variance included), so component ``j``'s part is
``v_j dV/dv_j = (1/2) d V(t theta_j) / dt`` at ``t = 1``, by a central difference; the parts and the residual
remainder add up to ``V``.
"""

from __future__ import annotations

import warnings
from functools import lru_cache

import numpy as np
from scipy import integrate, stats

from ..errors import FewLevelsWarning, caller_stacklevel
from ._glmm_ddf import is_glmm, phi_at

__all__ = ["COVERAGE_FLOOR", "component_shares", "idealised_z_coverage", "few_levels_warning", "warn_few_levels"]

#: z intervals whose coverage in the idealised model falls below this get a :class:`FewLevelsWarning`.
COVERAGE_FLOOR = 0.935

#: Relative step of the central difference in each component's scale.
STEP = 1e-4


@lru_cache(maxsize=4096)
def _coverage(k: int, rho: float) -> float:
    z = stats.norm.ppf(0.975)

    def f(x: float) -> float:
        return (2 * stats.norm.cdf(z * np.sqrt(rho * x / k + 1 - rho)) - 1) * stats.chi2.pdf(x, k)

    lo, hi = stats.chi2.ppf([1e-12, 1 - 1e-12], k)
    return float(integrate.quad(f, lo, hi, points=[max(k - 2.0, lo)], epsabs=1e-11, limit=200)[0])


def idealised_z_coverage(levels: int, share: float) -> float:
    """Coverage of the 95% z interval when a component from ``levels`` levels carries ``share`` of ``V``.

    Examples
    --------
    >>> round(idealised_z_coverage(3, 1.0), 3), round(idealised_z_coverage(30, 0.5), 3)
    (0.811, 0.948)
    """
    share = float(np.clip(share, 0.0, 1.0))
    if levels < 2 or share <= 0:
        return 0.95
    return _coverage(int(levels) - 1, round(share, 3))


def _term_slices(fit: object) -> list[slice]:
    sizes = [t.n_theta for t in fit.problem.re.terms] if is_glmm(fit) else _lmer_sizes(fit)
    ends = np.cumsum(sizes)
    return [slice(int(e - s), int(e)) for s, e in zip(sizes, ends)]


def _lmer_sizes(fit: object) -> list[int]:
    return [len(names) * (len(names) + 1) // 2 for names in fit.term_coef_names]


def _variance_at(fit: object, theta: np.ndarray, L: np.ndarray) -> np.ndarray:
    if is_glmm(fit):
        phi = phi_at(fit, theta)
    else:
        v = np.concatenate([float(fit.sigma2) * theta**2, [float(fit.sigma2)]])
        phi = fit._cov_coef_at(v)
    return np.einsum("ij,jk,ik->i", L, phi, L)


def component_shares(fit: object, L: np.ndarray) -> np.ndarray | None:
    """Share of each random term in the variance of each row of ``L``, shape (rows, terms); None when it is
    not computed (an lmer fit with random slopes).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import lmer
    >>> rng = np.random.default_rng(0)
    >>> d = pd.DataFrame([(i, s) for i in range(30) for s in range(3)], columns=["item", "seed"])
    >>> d["score"] = rng.normal(size=30)[d.item] + rng.normal(0, 2, 3)[d.seed] + rng.normal(size=90)
    >>> shares = component_shares(lmer("score ~ 1 + (1|item) + (1|seed)", d), np.array([[1.0]]))
    >>> bool(shares[0, 1] > 0.8)  # the 3 seeds carry most of the grand mean's variance
    True
    """
    L = np.atleast_2d(np.asarray(L, dtype=float))
    if not is_glmm(fit) and getattr(fit, "has_slopes", False):
        return None
    theta = np.asarray(fit.theta, dtype=float)
    base = _variance_at(fit, theta, L)
    out = np.zeros((len(L), len(fit.group_names)))
    for j, part in enumerate(_term_slices(fit)):
        if not np.any(theta[part]):
            continue
        up, down = theta.copy(), theta.copy()
        up[part] *= 1 + STEP
        down[part] *= 1 - STEP
        dV = (_variance_at(fit, up, L) - _variance_at(fit, down, L)) / (2 * STEP)
        with np.errstate(divide="ignore", invalid="ignore"):
            out[:, j] = np.where(base > 0, 0.5 * dV / base, 0.0)
    return np.clip(out, 0.0, 1.0)


def few_levels_warning(fit: object, L: np.ndarray, labels: list[str], *, what: str = "mean") -> None:
    """Warn (:class:`~mixeval.errors.FewLevelsWarning`) when a component from few levels makes a row's z
    interval undercover in the idealised model (coverage below :data:`COVERAGE_FLOOR`); one warning naming
    the worst row."""
    shares = component_shares(fit, L)
    if shares is None:
        return
    worst = None
    for i in range(shares.shape[0]):
        for j, n in enumerate(fit.n_levels):
            cover = idealised_z_coverage(n, shares[i, j])
            if cover < COVERAGE_FLOOR and (worst is None or cover < worst[0]):
                worst = (cover, i, j)
    if worst is None:
        return
    cover, i, j = worst
    from ._upper_range import upper_range_problems

    remedy = ("df='satterthwaite-upper' (experimental) widens the intervals for this case" if not upper_range_problems(fit)
              else "df='satterthwaite' narrows the gap")
    warnings.warn(
        f"the variance component {fit.group_names[j]!r} has {fit.n_levels[j]} levels and carries "
        f"{100 * shares[i, j]:.0f}% of the variance of the {what} {labels[i]!r}: its 95% z interval covers about "
        f"{100 * cover:.1f}% (idealised model; Satterthwaite's df help only partly). More levels of "
        f"{fit.group_names[j]!r} fix it; {remedy}.",
        FewLevelsWarning, stacklevel=caller_stacklevel())


def warn_few_levels(fit: object, specs: str, by: str | None, *, contrasts: bool) -> None:
    """:func:`few_levels_warning` for the link-scale marginal means of ``specs`` (within ``by``), or for their
    pairwise contrasts within each ``by`` group."""
    from ._emmeans import marginal_means

    cells, L, specs_list, by_list = marginal_means(fit, specs, by)
    labels = [" ".join(str(v) for v in row) for row in cells[specs_list].itertuples(index=False)]
    if contrasts:
        group = [tuple(row) for row in cells[by_list].itertuples(index=False)] if by_list else [()] * len(L)
        pairs = [(a, b) for a in range(len(L)) for b in range(a + 1, len(L)) if group[a] == group[b]]
        if not pairs:
            return
        L = np.array([L[a] - L[b] for a, b in pairs])
        labels = [f"{labels[a]} - {labels[b]}" for a, b in pairs]
    few_levels_warning(fit, L, labels, what="contrast" if contrasts else "mean")
