"""The GAM circularity test (book Definition 2.5) and its distillation mode."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._progress import progress
from .._random import as_generator
from .._results import Result, to_plain
from .._validation import require_columns, require_dataframe, require_positive_int
from ..errors import BasisLimitWarning, ConvergenceWarning, InputError, caller_stacklevel
from ._determinism import determinism
from ._gam import GAMResult, check_basis, make_design, prepare_response, validate_inputs
from ._gam_design import warn_binary_target

__all__ = [
    "CircularityResult",
    "Nullification",
    "adapt_basis",
    "n_coefficients",
    "require_rows_for_basis",
    "check_thresholds",
    "measure_nullification",
    "models_table",
    "resolve_features",
    "search_models",
    "select_best",
    "select_candidates",
    "verdict",
    "circularity_test",
    "distillation_test",
    "nullification_ratios",
    "rank_features",
]


@dataclass(frozen=True, eq=False)
class CircularityResult(Result):
    """Outcome of the circularity test.

    Attributes
    ----------
    circular : tuple of str
        The circular feature set ``c*`` if the verdict is positive, else empty.
    is_circular : bool
        The verdict (see :func:`circularity_test`, Notes): the label is reconstructed by ``c*``
        (``d2 >= d2_threshold`` and ``determinism >= determinism_threshold``) and ``c*`` nullifies
        the other candidates (``added <= max(gain_threshold * explained_alone, negligible_gain)``).
    best : tuple of str
        The selected set ``c*``: maximal D^2 (within ``d2_tolerance``) with the fewest edf.
    d2, edf : float
        Deviance explained and effective degrees of freedom of the additive GAM on ``best``.
    determinism : float
        Share of the label's variance that is a function of ``best`` (nearest-neighbour estimate of
        the label noise given ``best``, :func:`mixeval.validity._determinism.noise_share`); unlike
        ``d2`` it does not assume the rule to be additive.
    added, explained_alone : float
        Deviance explained that the other candidates add once ``best`` is in
        (``D^2(all) - D^2(best)``), and that they explain without ``best`` (``D^2(others)``).
    added_ratio : float
        ``added / explained_alone`` (near 0: nullified; near 1: the others carry their own
        information).
    candidates : tuple of str
        The candidates searched, ordered by absolute correlation with the target.
    ranking : pandas.DataFrame
        Every considered feature with its correlation with the target (``feature``, ``r``, ``abs_r``).
    models : pandas.DataFrame
        One row per fitted GAM: ``features`` (tuple), ``n_features``, ``d2``, ``edf``; sorted by
        decreasing D^2, then increasing edf.
    basis : pandas.DataFrame
        The basis check (mgcv's ``k.check``) of the smooths of the set selected at the initial
        ``k`` (the model the verdict rests on): ``feature``,
        ``k_initial``, ``k`` (after adaptation), ``k_prime``, ``edf``, ``k_index``, ``p_value``.
    k : dict
        Basis dimension used per candidate.
    gain, gain_ratio : dict
        Per other candidate ``j``: ``D^2(best + j) - D^2(best)`` and that gain relative to
        ``explained_alone``.
    nullification : dict
        Per other candidate: sd of its term contribution in the model with all candidates divided
        by its sd in the model without ``best`` (the shape view of nullification; reported).
        Contributions are on the response scale (Gaussian: the term ``f_j(x_j)``; binomial: the
        change in predicted probability when the term is removed).
    sd_with, sd_without, share : dict
        The two standard deviations behind each ratio; ``sd_with`` relative to the sd of the full
        model's fitted values.
    nullified : dict
        Per other candidate: ``gain <= max(gain_threshold * explained_alone, negligible_gain)``.
        For a binomial target that ``best`` separates perfectly (D^2 = 1) every other candidate is
        nullified.
    d2_tolerance, d2_threshold, determinism_threshold, gain_threshold, negligible_gain : float
        The thresholds of the verdict.
    nullification_threshold, negligible : float
        Thresholds of the sd view, used in the report only.
    search : str
        ``"powerset"`` or ``"greedy"``.
    reason : str
        A sentence explaining the verdict.

    Examples
    --------
    A label that is a step function of ``a`` alone (the search warns that the smooth of ``a`` uses nearly all
    its basis: a step is what it reconstructs):

    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(1)
    >>> df = pd.DataFrame(rng.normal(size=(500, 3)), columns=["a", "b", "c"])
    >>> df["label"] = np.digitize(df["a"], [-1, 0, 1]).astype(float)
    >>> res = circularity_test(df, "label", show_progress=False)
    >>> res.is_circular, res.circular, res.best, round(res.d2, 4)
    (True, ('a',), ('a',), 0.9907)
    >>> res.models[["features", "d2"]].head(3).round(4)  # every feature set, best first
        features      d2
    0  (a, b, c)  0.9907
    1     (a, b)  0.9907
    2     (a, c)  0.9907
    """

    circular: tuple[str, ...]
    is_circular: bool
    best: tuple[str, ...]
    d2: float
    edf: float
    candidates: tuple[str, ...]
    ranking: pd.DataFrame = field(repr=False)
    models: pd.DataFrame = field(repr=False)
    determinism: float = np.nan
    added: float = np.nan
    explained_alone: float = np.nan
    added_ratio: float = np.nan
    basis: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    k: dict[str, int] = field(default_factory=dict, repr=False)
    gain: dict[str, float] = field(default_factory=dict, repr=False)
    gain_ratio: dict[str, float] = field(default_factory=dict, repr=False)
    nullification: dict[str, float] = field(default_factory=dict)
    sd_with: dict[str, float] = field(default_factory=dict, repr=False)
    sd_without: dict[str, float] = field(default_factory=dict, repr=False)
    share: dict[str, float] = field(default_factory=dict, repr=False)
    nullified: dict[str, bool] = field(default_factory=dict, repr=False)
    d2_tolerance: float = 0.01
    d2_threshold: float = 0.8
    determinism_threshold: float = 0.95
    gain_threshold: float = 0.1
    negligible_gain: float = 0.001
    nullification_threshold: float = 0.2
    negligible: float = 0.025
    search: str = "powerset"
    family: str = "gaussian"
    target: str = ""
    reason: str = ""
    fits: dict[tuple[str, ...], GAMResult] = field(default_factory=dict, repr=False, compare=False)

    @property
    def full_model(self) -> GAMResult:
        """The GAM on all candidates (right column of the book's figures)."""
        return self.fits[tuple(self.candidates)]

    @property
    def reduced_model(self) -> GAMResult | None:
        """The GAM on the candidates outside ``best`` (left column), or None if there are none."""
        rest = tuple(c for c in self.candidates if c not in self.best)
        return self.fits.get(rest)

    @property
    def best_model(self) -> GAMResult:
        """The GAM on ``best``."""
        return self.fits[tuple(self.best)]

    def nullification_table(self) -> pd.DataFrame:
        """Per other candidate: deviance view (``gain``, ``gain_ratio``) and shape view (sd ratio)."""
        rows = [{"feature": f, "gain": self.gain.get(f, np.nan), "gain_ratio": self.gain_ratio.get(f, np.nan),
                 "sd_with": self.sd_with[f], "sd_without": self.sd_without[f], "sd_ratio": self.nullification[f],
                 "share": self.share[f], "nullified": self.nullified[f]} for f in self.nullification]
        return pd.DataFrame(rows, columns=["feature", "gain", "gain_ratio", "sd_with", "sd_without", "sd_ratio",
                                           "share", "nullified"])

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe summary, numbers unrounded (the ``mixeval circularity --json`` output)."""
        return to_plain({
            "circular": list(self.circular),
            "is_circular": self.is_circular,
            "best": list(self.best),
            "d2": self.d2,
            "edf": self.edf,
            "determinism": self.determinism,
            "added": self.added,
            "explained_alone": self.explained_alone,
            "added_ratio": self.added_ratio,
            "candidates": list(self.candidates),
            "k": dict(self.k),
            "basis": self.basis.to_dict(orient="records"),
            "models": [
                {"features": list(r["features"]), "d2": r["d2"], "edf": r["edf"]}
                for r in self.models.to_dict("records")
            ],
            "gain": dict(self.gain),
            "gain_ratio": dict(self.gain_ratio),
            "nullification": dict(self.nullification),
            "thresholds": {
                "d2_tolerance": self.d2_tolerance,
                "d2_threshold": self.d2_threshold,
                "determinism_threshold": self.determinism_threshold,
                "gain_threshold": self.gain_threshold,
                "negligible_gain": self.negligible_gain,
                "nullification_threshold": self.nullification_threshold,
                "negligible": self.negligible,
            },
            "nullified": dict(self.nullified),
            "family": self.family,
            "search": self.search,
            "reason": self.reason,
        })

    def summary(self) -> str:
        """Human-readable report: verdict, the decisive numbers, top models, basis check and nullification."""
        verdict = "CIRCULAR {" + ", ".join(self.circular) + "}" if self.is_circular else "no circular set"
        lines = [
            f"Circularity test for {self.target!r} ({self.family}, {self.search} search over "
            f"{len(self.candidates)} candidates: {', '.join(self.candidates)})",
            f"verdict: {verdict}",
            f"  {self.reason}",
            f"selected set {{{', '.join(self.best)}}}: D^2 = {self.d2:.4f} ({_against(self.d2, self.d2_threshold)}), "
            f"determinism = {self.determinism:.4f} ({_against(self.determinism, self.determinism_threshold)}), "
            f"edf = {self.edf:.2f}",
        ]
        if self.nullification:
            lines.append(
                f"other candidates add D^2 {self.added:.4f} with the set, explain {self.explained_alone:.4f} without it: "
                f"ratio {self.added_ratio:.4f} (nullified if <= {self.gain_threshold} or added <= {self.negligible_gain})")
        lines.append("top models (D^2, edf):")
        for r in self.models.head(8).itertuples(index=False):
            lines.append(f"  {{{', '.join(r.features)}}}: {r.d2:.4f}, {r.edf:.2f}")
        if len(self.basis):
            lines.append("basis check of the selected set (k initial -> used, edf, k-index, p):")
            for r in self.basis.itertuples(index=False):
                lines.append(f"  {r.feature}: k {r.k_initial} -> {r.k}, edf {r.edf:.2f} of {r.k_prime}, "
                             f"k-index {r.k_index:.3f}, p {r.p_value:.3f}")
        if self.nullification:
            lines.append("nullification per other candidate (D^2 gain with the set, ratio; sd with / without):")
            for f, v in self.nullification.items():
                tag = "nullified" if self.nullified.get(f) else "NOT nullified"
                lines.append(f"  {f}: gain {self.gain[f]:.4f} (ratio {self.gain_ratio[f]:.4f}); sd ratio {v:.4f} "
                             f"({self.sd_with[f]:.4g} / {self.sd_without[f]:.4g}; share {self.share[f]:.4f}) {tag}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"CircularityResult(circular={list(self.circular)}, best={list(self.best)}, d2={self.d2:.6g}, "
            f"determinism={self.determinism:.6g}, added_ratio={self.added_ratio:.6g}, edf={self.edf:.6g})"
        )


def _against(value: float, threshold: float) -> str:
    """How a number compares with the threshold it must reach, for the summary (``>= 0.8`` or ``below 0.8``).

    Examples
    --------
    >>> _against(0.91, 0.8), _against(0.28, 0.8)
    ('>= 0.8', 'below the threshold 0.8')
    """
    return f">= {threshold:g}" if value >= threshold else f"below the threshold {threshold:g}"


def rank_features(data: pd.DataFrame, target: str, features: list[str] | None = None) -> pd.DataFrame:
    """Rank features by absolute Pearson correlation with the target (book: candidate ordering).

    Non-numeric features are ranked by the correlation ratio (eta) instead. Constant features get
    ``r = 0`` and are listed last.

    Parameters
    ----------
    data : pandas.DataFrame
    target : str
        Numeric target column.
    features : list of str, optional
        Features to rank (default: every other column).

    Returns
    -------
    pandas.DataFrame
        Columns ``feature``, ``r`` and ``abs_r``, sorted by decreasing ``abs_r``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"y": [1, 2, 3, 4], "a": [1, 2, 3, 5], "b": [4, 1, 3, 2]})
    >>> rank_features(df, "y")["feature"].tolist()
    ['a', 'b']
    """
    data = require_dataframe(data)
    require_columns(data, [target])
    if features is None:
        features = [c for c in data.columns if c != target]
    require_columns(data, features)
    y = data[target]
    if not (pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y)):
        raise InputError(f"the target column {target!r} must be numeric to rank features by correlation.")
    yv = y.to_numpy(dtype=float)
    rows = []
    for f in features:
        s = data[f]
        if pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
            x = s.to_numpy(dtype=float)
            ok = np.isfinite(x) & np.isfinite(yv)
            if ok.sum() < 3 or np.std(x[ok]) == 0 or np.std(yv[ok]) == 0:
                r = 0.0
            else:
                r = float(np.corrcoef(x[ok], yv[ok])[0, 1])
        else:
            groups = pd.Series(yv).groupby(s.astype(str).to_numpy())
            ss_between = float((groups.count() * (groups.mean() - yv.mean()) ** 2).sum())
            ss_total = float(((yv - yv.mean()) ** 2).sum())
            r = float(np.sqrt(ss_between / ss_total)) if ss_total > 0 else 0.0
        rows.append((f, r, abs(r)))
    out = pd.DataFrame(rows, columns=["feature", "r", "abs_r"])
    return out.sort_values("abs_r", ascending=False, kind="stable").reset_index(drop=True)


def _default_features(data: pd.DataFrame, target: str, exclude: list[str]) -> list[str]:
    return [
        c for c in data.columns
        if c != target and c not in exclude
        and (pd.api.types.is_numeric_dtype(data[c]) or pd.api.types.is_bool_dtype(data[c]))
        and data[c].nunique() > 1
    ]


# ----------------------------------------------------------------------------- stages


def resolve_features(data: pd.DataFrame, target: str, features: list[str] | None,
                     exclude: list[str] | None) -> list[str]:
    """The candidate features as given, or every non-constant numeric column but the target and ``exclude``."""
    exclude = list(exclude or [])
    if features is None:
        features = _default_features(data, target, exclude)
        if not features:
            raise InputError("no numeric, non-constant feature columns besides the target; pass `features`.")
        return features
    if isinstance(features, str):
        raise InputError(f"`features` must be a list of column names; write features=[{features!r}].")
    features = [f for f in features if f not in exclude]
    if not features:
        raise InputError("`features` is empty; name at least one candidate feature.")
    require_columns(data, features)
    return features


#: thresholds that are not shares of a deviance or a variance (so not bounded by 1)
_UNBOUNDED = ("nullification_threshold",)


def check_thresholds(**values: float) -> None:
    """Every threshold must be a finite non-negative number, and those that are shares (of the deviance, of a
    variance) at most 1: a D^2 threshold of 1.5 can never be met.

    Examples
    --------
    >>> check_thresholds(d2_threshold=1.5)
    Traceback (most recent call last):
    ...
    mixeval.errors.InputError: `d2_threshold` is a share (of the deviance or a variance) and must lie in [0, 1]; got 1.5.
    """
    for name, v in values.items():
        if not (isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v) and v >= 0):
            raise InputError(f"`{name}` must be a non-negative number; got {v!r}.")
        if v > 1 and name not in _UNBOUNDED:
            raise InputError(f"`{name}` is a share (of the deviance or a variance) and must lie in [0, 1]; got {v!r}.")


def check_basis_bounds(k: int, k_max: int | None, k_check: bool) -> int:
    """The largest basis dimension of the k-check: ``k_max`` (at least ``k``), by default ``max(40, k)``; a given
    ``k_max`` is refused below ``k`` and without the k-check (where it would not be used).

    Examples
    --------
    >>> check_basis_bounds(10, None, True), check_basis_bounds(50, None, True), check_basis_bounds(10, 20, True)
    (40, 50, 20)
    """
    if k_max is None:
        return max(40, k)
    k_max = require_positive_int(k_max, "k_max", minimum=3)
    if not k_check:
        raise InputError("`k_max` bounds the k-check's larger bases; with `k_check`=False it is not used: drop "
                         "`k_max` or keep the k-check.")
    if k_max < k:
        raise InputError(f"`k_max` ({k_max}) is below the initial basis dimension `k` ({k}); give `k_max` >= {k}.")
    return k_max


def select_candidates(ranking: pd.DataFrame, top: int | None) -> list[str]:
    """The ``top`` features of the ranking (all when None)."""
    if top is None:
        return ranking["feature"].tolist()
    return ranking["feature"].head(require_positive_int(top, "top")).tolist()


def adapt_basis(
    data: pd.DataFrame, target: str, candidates: list[str], *, family: str, k: int, k_max: int,
    categorical: list[str], method: str, n_resamples: int = 200, alpha: float = 0.05, edf_share: float = 0.8,
    random_state: int | np.random.Generator | None = 0,
) -> tuple[dict[str, int], pd.DataFrame, Any]:
    """Raise the basis dimension of the smooths that need it (mgcv's ``k.check``), bounded by ``k_max``.

    The GAM on ``candidates`` (the circularity test passes the selected set) is fitted and checked; a smooth whose
    residuals still follow its covariate (k-index below 1 with permutation p-value below ``alpha``) while its edf uses at least
    ``edf_share`` of ``k - 1`` gets ``k`` doubled (at most ``k_max``, at most the number of distinct
    values), and the check is repeated until no smooth needs more.

    Returns
    -------
    k : dict
        Basis dimension per candidate.
    table : pandas.DataFrame
        The last check: ``feature``, ``k_initial``, ``k``, ``k_prime``, ``edf``, ``k_index``,
        ``p_value`` (smooth terms only).
    design
        The design built with the final ``k`` (reused by the search).
    """
    rng = as_generator(random_state)
    kmap = {c: k for c in candidates}
    while True:
        design = make_design(data, target, candidates, family, kmap, categorical, method)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            full = design.fit(range(len(candidates)))
        check = full.basis_check(n_resamples=n_resamples, random_state=rng)
        raised = False
        for r in check.to_dict("records"):
            feature = r["feature"]
            term = design.terms[candidates.index(feature)]
            needs = r["p_value"] < alpha and r["k_index"] < 1 and r["edf"] >= edf_share * r["k_prime"]
            if needs and not term.saturated and kmap[feature] < k_max:
                kmap[feature] = min(2 * kmap[feature], k_max)
                raised = True
        if not raised:
            break
    table = check.assign(k_initial=k, k=[kmap[f] for f in check["feature"]])
    return kmap, table[["feature", "k_initial", "k", "k_prime", "edf", "k_index", "p_value"]], design


def search_models(design: Any, candidates: list[str], *, max_exhaustive: int, d2_tolerance: float,
                  show_progress: bool | None) -> tuple[dict[tuple[str, ...], GAMResult], str, Callable[[Sequence[str]], GAMResult]]:
    """Fit the GAMs of the search: every subset (powerset) or a greedy forward path, plus the full model.

    Returns the fits keyed by feature tuple (in candidate order), the search name and a function
    ``fit(features)`` that fits (and caches) further subsets.
    """
    m = len(candidates)
    fits: dict[tuple[str, ...], GAMResult] = {}

    def fit(features) -> GAMResult:
        key = tuple(c for c in candidates if c in set(features))
        if key not in fits:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                fits[key] = design.fit([candidates.index(c) for c in key])
        return fits[key]

    if m <= max_exhaustive:
        subsets = [s for r in range(1, m + 1) for s in itertools.combinations(candidates, r)]
        for s in progress(subsets, total=len(subsets), desc="circularity: GAM fits", enabled=show_progress):
            fit(s)
        return fits, "powerset", fit
    chosen: list[str] = []
    best_d2 = -np.inf
    for _ in progress(range(m), total=m, desc="circularity: greedy search", enabled=show_progress):
        rest = [c for c in candidates if c not in chosen]
        if not rest:
            break
        trial = {c: fit(chosen + [c]) for c in rest}
        c_best = max(trial, key=lambda c: (trial[c].d2, -trial[c].edf))
        gain = trial[c_best].d2 - best_d2
        chosen.append(c_best)
        best_d2 = max(best_d2, trial[c_best].d2)
        if gain < d2_tolerance / 10 and len(chosen) > 1:
            break
    fit(candidates)
    return fits, "greedy", fit


def models_table(fits: dict[tuple[str, ...], GAMResult]) -> pd.DataFrame:
    """One row per fitted GAM, by decreasing D^2 then increasing edf."""
    models = pd.DataFrame({"features": list(fits), "n_features": [len(f) for f in fits],
                           "d2": [r.d2 for r in fits.values()], "edf": [r.edf for r in fits.values()]})
    return models.sort_values(["d2", "edf"], ascending=[False, True], kind="stable").reset_index(drop=True)


def select_best(models: pd.DataFrame, d2_tolerance: float) -> tuple[str, ...]:
    """The set with maximal D^2 (within ``d2_tolerance``) and, among those, the fewest edf (book Def. 2.5)."""
    eligible = models[models["d2"] >= float(models["d2"].max()) - d2_tolerance]
    return tuple(eligible.sort_values(["edf", "d2"], ascending=[True, False], kind="stable").iloc[0]["features"])


@dataclass(frozen=True)
class Nullification:
    """The nullification measures of the candidates outside the selected set (see CircularityResult)."""

    added: float = np.nan
    explained_alone: float = np.nan
    added_ratio: float = np.nan
    gain: dict[str, float] = field(default_factory=dict)
    gain_ratio: dict[str, float] = field(default_factory=dict)
    sd_ratio: dict[str, float] = field(default_factory=dict)
    sd_with: dict[str, float] = field(default_factory=dict)
    sd_without: dict[str, float] = field(default_factory=dict)
    share: dict[str, float] = field(default_factory=dict)
    nullified: dict[str, bool] = field(default_factory=dict)
    all_nullified: bool = False


def measure_nullification(fit: Callable[[Sequence[str]], GAMResult], candidates: list[str], best: tuple[str, ...], *,
                          gain_threshold: float, negligible_gain: float) -> Nullification:
    """Deviance view (gains in D^2 with the selected set) and shape view (sd ratios) of nullification.

    Notes
    -----
    With ``c*`` the selected set, ``O`` the other candidates and ``C = c* + O``:
    ``added = D^2(C) - D^2(c*)``, ``explained_alone = D^2(O)``; per ``j`` in ``O``,
    ``gain_j = D^2(c* + j) - D^2(c*)``. ``O`` is nullified when
    ``added <= max(gain_threshold * explained_alone, negligible_gain)`` (and ``j`` when ``gain_j``
    is). The sd ratio ``sd f_j | C / sd f_j | O`` is the shape view of the same (Proposition 2.1).
    """
    others = [c for c in candidates if c not in best]
    if not others:
        return Nullification()
    best_fit, full, reduced = fit(best), fit(candidates), fit(others)
    bound = max(gain_threshold * max(reduced.d2, 0.0), negligible_gain)
    added = full.d2 - best_fit.d2
    gain = {c: fit(list(best) + [c]).d2 - best_fit.d2 for c in others}
    alone = max(reduced.d2, 1e-12)
    sw, so = full.term_sd("response"), reduced.term_sd("response")
    sd_ratio = {c: sw[c] / so[c] if so[c] > 0 else (0.0 if sw[c] == 0 else np.inf) for c in others}
    eta_sd = float(np.std(full.fitted))
    share = {c: sw[c] / eta_sd if eta_sd > 0 else 0.0 for c in others}
    separated = bool(best_fit.separated)
    # a set that separates 0/1 labels leaves nothing to add: other terms' shapes in separated logit
    # fits are arbitrary, so only the deviance view is meaningful (and it is 0)
    nullified = {c: bool(separated or gain[c] <= bound) for c in others}
    return Nullification(
        added=float(added), explained_alone=float(reduced.d2), added_ratio=float(added / alone),
        gain={c: float(v) for c, v in gain.items()}, gain_ratio={c: float(v / alone) for c, v in gain.items()},
        sd_ratio=sd_ratio, sd_with={c: sw[c] for c in others}, sd_without={c: so[c] for c in others}, share=share,
        nullified=nullified, all_nullified=bool(separated or added <= bound),
    )


def verdict(best: tuple[str, ...], best_fit: GAMResult, determinism_value: float, null: Nullification, *,
            has_others: bool, d2_threshold: float, determinism_threshold: float, gain_threshold: float,
            negligible_gain: float) -> tuple[bool, str]:
    """The verdict and a sentence saying which criterion decided it."""
    s = "{" + ", ".join(best) + "}"
    if best_fit.d2 < d2_threshold:
        return False, (f"the best set {s} explains D^2 = {best_fit.d2:.4f} < {d2_threshold}: no subset of the "
                       "candidates reconstructs the target.")
    if determinism_value < determinism_threshold:
        return False, (f"{s} explains D^2 = {best_fit.d2:.4f}, but only {determinism_value:.4f} of the label's "
                       f"variance is a function of it (< {determinism_threshold}): the rest is noise or depends on "
                       "features outside the set, so the label is not a deterministic rule over it.")
    if not has_others:
        return False, (f"{s} reaches D^2 = {best_fit.d2:.4f} but there are no other candidates, so nullification "
                       "could not be checked; add candidates (larger `top`).")
    if not null.all_nullified:
        kept = [c for c, v in null.nullified.items() if not v] or list(null.gain)
        return False, (f"{s} reaches D^2 = {best_fit.d2:.4f}, but the other candidates still add D^2 "
                       f"{null.added:.4f} = {null.added_ratio:.3f} of what they explain alone (> {gain_threshold}; "
                       f"most: {', '.join(kept)}): partial circularity at most.")
    if best_fit.separated:
        return True, (f"{s} alone separates the 0/1 labels perfectly (D^2 = 1) with the fewest edf: the labels are a "
                      "deterministic function of it and no other candidate can add anything.")
    return True, (f"{s} reaches D^2 = {best_fit.d2:.4f} (determinism {determinism_value:.4f}) with the fewest edf, "
                  f"and the other candidates add only D^2 {null.added:.4f} = {null.added_ratio:.3f} of what they "
                  f"explain alone ({null.explained_alone:.4f}; nullified if <= {gain_threshold} or <= {negligible_gain}).")


def _warn_fit_problems(fits: dict[tuple[str, ...], GAMResult]) -> None:
    separated = [k for k, r in fits.items() if r.separated]
    failed = [k for k, r in fits.items() if not r.separated and not r.converged]
    if separated:
        warnings.warn(
            f"{len(separated)} of {len(fits)} models separate the 0/1 target perfectly (D^2 = 1 reported, "
            f"e.g. {{{', '.join(separated[0])}}}): the labels are a deterministic function of those features.",
            ConvergenceWarning, stacklevel=caller_stacklevel(),
        )
    if failed:
        warnings.warn(
            f"penalized IRLS did not converge for {len(failed)} model(s) (e.g. {{{', '.join(failed[0])}}}); "
            "their D^2 may be inaccurate (quasi-separation?).", ConvergenceWarning, stacklevel=caller_stacklevel(),
        )


def _warn_basis(best_fit: GAMResult) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_basis(best_fit)
    for w in caught:
        if issubclass(w.category, BasisLimitWarning):
            warnings.warn(str(w.message), BasisLimitWarning, stacklevel=caller_stacklevel())


# ----------------------------------------------------------------------------- the test


def n_coefficients(design: Any) -> int:
    """Coefficients of the GAM of every candidate of ``design``: the intercept and each term's columns."""
    return 1 + sum(t.ncol for t in design.terms)


def require_rows_for_basis(design: Any, *, k: int) -> None:
    """Refuse a search whose largest GAM has more coefficients than the data have rows.

    As mgcv's ``gam`` ("Model has more coefficients than data"): such a GAM interpolates any labels, pure noise
    included (D^2 = 1, determinism 1), so a verdict from it would be meaningless. The message says which ``k``
    (or how many candidates, ``top``) the rows support.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame(rng.normal(size=(12, 4)), columns=["a", "b", "c", "y"])
    >>> require_rows_for_basis(make_design(df, "y", ["a", "b", "c"], "gaussian", 10, None), k=10)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    mixeval.errors.InputError: the GAM of the 3 candidate features (a, b, c) has 28 coefficients (k = 10 per smooth) but
    the data have only 12 rows: it would interpolate any labels, noise included (mgcv's gam refuses it: 'Model has more
    coefficients than data'). Use k=4 (or fewer candidates, top=1), or more rows.
    """
    p, n = n_coefficients(design), len(design.y)
    if p <= n:
        return
    smooths = sum(t.kind == "smooth" for t in design.terms)
    fixed = 1 + sum(t.ncol for t in design.terms if t.kind != "smooth")
    fits_k = (n - fixed) // smooths + 1 if smooths else 0
    advice = f"Use k={fits_k} (or fewer candidates, " if fits_k >= 3 else "Use fewer candidates ("
    top = max(1, (n - 1) // max(k - 1, 1))
    names = ", ".join(t.name for t in design.terms)
    raise InputError(f"the GAM of the {len(design.terms)} candidate features ({names}) has {p} coefficients "
                     f"(k = {k} per smooth) but the data have only {n} rows: it would interpolate any labels, noise "
                     "included (mgcv's gam refuses it: 'Model has more coefficients than data'). "
                     f"{advice}top={top}), or more rows.")


def circularity_test(
    data: pd.DataFrame,
    target: str,
    features: list[str] | None = None,
    *,
    top: int | None = 5,
    family: str = "gaussian",
    k: int = 10,
    k_check: bool = True,
    k_max: int | None = None,
    categorical: list[str] | None = None,
    method: str = "GCV",
    d2_tolerance: float = 0.01,
    d2_threshold: float = 0.8,
    determinism_threshold: float = 0.95,
    gain_threshold: float = 0.1,
    negligible_gain: float = 0.001,
    nullification_threshold: float = 0.2,
    negligible: float = 0.025,
    max_exhaustive: int = 10,
    exclude: list[str] | None = None,
    random_state: int | np.random.Generator | None = 0,
    show_progress: bool | None = None,
) -> CircularityResult:
    """Test whether a target is a reconstruction of a rule over a few features (book Def. 2.5).

    Stages (each a function of this module): candidates ranked by absolute correlation with the
    target (:func:`rank_features`, :func:`select_candidates`); the basis dimension adapted by a
    k-check (:func:`adapt_basis`); a GAM fitted to every subset of the candidates
    (:func:`search_models`: powerset up to ``max_exhaustive`` candidates, greedy forward search
    beyond); the set ``c*`` with maximal D^2 (within ``d2_tolerance``) and the fewest effective
    degrees of freedom (:func:`select_best`); its determinism
    (:func:`~mixeval.validity._determinism.determinism`) and the nullification of the other
    candidates (:func:`measure_nullification`); the verdict (:func:`verdict`).

    Parameters
    ----------
    data : pandas.DataFrame
        One row per observation (not modified; missing values are an error).
    target : str
        The labels (gold or a model's predictions).
    features : list of str, optional
        Candidate features. Default: every non-constant numeric column except the target and
        ``exclude``.
    top : int or None
        Keep the ``top`` candidates with the largest absolute correlation (None: all given).
    family : {"gaussian", "binomial"}
        Gaussian (identity link) for scores, binomial (logit link) for 0/1 labels.
    k : int
        Initial basis dimension per smooth (mgcv's ``k``).
    k_check : bool
        Adapt ``k`` by mgcv's k-check (:func:`adapt_basis`) for the smooths of the set selected at
        the initial ``k``; if any needs more, the search is run again with the larger bases. The
        check is reported in ``result.basis``.
    k_max : int, optional
        Largest basis dimension the adaptation may reach (default ``max(40, k)``: the doubling is 10, 20, 40);
        refused below ``k`` and with ``k_check=False``, where it is not used.
    categorical : list of str, optional
        Numeric columns to treat as nominal.
    method : {"GCV", "REML"}
        Smoothing parameter selection (see :func:`fit_gam`; ``"GCV"`` is mgcv's default).
    d2_tolerance : float
        Models whose D^2 is within this of the maximum count as maximal.
    d2_threshold : float
        D^2 the additive GAM on ``c*`` must reach.
    determinism_threshold : float
        Share of the label's variance that must be a function of ``c*`` (at most 5% noise by
        default); measured without assuming additivity.
    gain_threshold : float
        Largest share of what the other candidates explain alone that they may still add once
        ``c*`` is in.
    negligible_gain : float
        An added D^2 at most this large counts as nothing, whatever the others explain alone.
    nullification_threshold, negligible : float
        Thresholds of the sd view of nullification, used in the report (``summary``) only.
    max_exhaustive : int
        Largest number of candidates for the full powerset search.
    exclude : list of str, optional
        Columns never used as candidates (e.g. other label columns).
    random_state : int or numpy.random.Generator, optional
        Seed of the k-check's permutations and subsample.
    show_progress : bool, optional
        Progress bar (default: shown when the search takes more than 2 s).

    Returns
    -------
    CircularityResult

    Notes
    -----
    With :math:`\\mathcal{M}_C = \\{\\mu_c\\}` the GAMs over candidate sets ``c``,
    :math:`c^* = \\arg\\max_c D^2(\\mu_c)` with ties (within the tolerance) broken by the
    smallest edf, and :math:`D^2 = 1 - D(\\mu)/D(\\mu_0)`. The verdict is circular when

    1. the label is reconstructed by :math:`c^*`: :math:`D^2(c^*) \\ge` ``d2_threshold`` and
       :math:`1 - \\hat\\sigma^2_{nn} / \\widehat{\\mathrm{Var}}(y) \\ge` ``determinism_threshold``,
       where :math:`\\hat\\sigma^2_{nn}` is the nearest-neighbour (in :math:`x_{c^*}`) estimate of
       the variance of the GAM residuals' noise. An additive GAM plateaus below :math:`D^2 = 1` on
       non-additive rules (the maximum of two step scores, book Table 2.7); the determinism does not.
    2. :math:`c^*` nullifies the other candidates :math:`O`:
       :math:`D^2(C) - D^2(c^*) \\le \\max(\\tau\\, D^2(O), \\delta)` (``gain_threshold``,
       ``negligible_gain``): what the others explain alone has (almost) all gone once
       :math:`c^*` is in (Proposition 2.1).

    The defaults come from the simulation study in ``docs/circularity_calibration.md`` (false
    positive rate and power on circular and non-circular generated datasets). Significance of a
    term is not used: with many rows every term is "significant". Rows that repeat one unit's
    measurements (e.g. carried-forward lab values of one patient) make neighbours alike for reasons
    outside ``c*`` and raise the determinism; the D^2 condition guards against that.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.validity import circularity_test
    >>> rng = np.random.default_rng(1)
    >>> df = pd.DataFrame(rng.normal(size=(3000, 3)), columns=["a", "b", "c"])
    >>> df["b"] += df["a"]  # correlated, but not part of the rule
    >>> df["label"] = np.digitize(df["a"], [-1, 0, 1]).astype(float)
    >>> res = circularity_test(df, "label")
    >>> res.circular, res.k["a"] > 10
    (('a',), True)
    """
    data = require_dataframe(data)
    require_columns(data, [target])
    features = resolve_features(data, target, features, exclude)
    check_thresholds(d2_tolerance=d2_tolerance, d2_threshold=d2_threshold, determinism_threshold=determinism_threshold,
                     gain_threshold=gain_threshold, negligible_gain=negligible_gain,
                     nullification_threshold=nullification_threshold, negligible=negligible)
    max_exhaustive = require_positive_int(max_exhaustive, "max_exhaustive")
    k = require_positive_int(k, "k", minimum=3)
    k_max = check_basis_bounds(k, k_max, k_check)
    validate_inputs(data, target, features)
    warn_binary_target(prepare_response(data, target, family), target, family)
    ranking = rank_features(data, target, features)
    candidates = select_candidates(ranking, top)
    cat = [c for c in (categorical or []) if c in candidates]
    kmap = {c: k for c in candidates}
    design = make_design(data, target, candidates, family, kmap, cat, method)
    require_rows_for_basis(design, k=k)
    fits, search, fit = search_models(design, candidates, max_exhaustive=max_exhaustive, d2_tolerance=d2_tolerance,
                                      show_progress=show_progress)
    basis = pd.DataFrame()
    first = select_best(models_table(fits), d2_tolerance)
    if k_check and not fits[first].separated:
        # check the selected set's smooths; if some need a larger basis, search again with it (a set
        # that separates 0/1 labels already reaches D^2 = 1: there is nothing a larger basis could add)
        raised, basis, _ = adapt_basis(data, target, list(first), family=family, k=k, k_max=k_max,
                                       categorical=[c for c in cat if c in first], method=method,
                                       random_state=random_state)
        larger = make_design(data, target, candidates, family, {**kmap, **raised}, cat, method) \
            if any(v != k for v in raised.values()) else None
        if larger is not None and n_coefficients(larger) > len(larger.y):
            warnings.warn(f"the k-check asks for larger bases ({raised}), but with them the GAM of every candidate "
                          f"would have {n_coefficients(larger)} coefficients for {len(larger.y)} rows; k = {k} is kept.",
                          BasisLimitWarning, stacklevel=caller_stacklevel())
        elif larger is not None:
            kmap.update(raised)
            design = larger
            fits, search, fit = search_models(design, candidates, max_exhaustive=max_exhaustive,
                                              d2_tolerance=d2_tolerance, show_progress=show_progress)
    best = select_best(models_table(fits), d2_tolerance)
    best_fit = fits[best]
    null = measure_nullification(fit, candidates, best, gain_threshold=gain_threshold, negligible_gain=negligible_gain)
    models = models_table(fits)  # again: the nullification may have fitted further subsets (greedy search)
    y = design.y
    det = 1.0 if best_fit.separated else determinism(y, best_fit.fitted, data, list(best), cat)
    _warn_fit_problems(fits)
    _warn_basis(best_fit)
    has_others = len(best) < len(candidates)
    is_circular, reason = verdict(best, best_fit, det, null, has_others=has_others, d2_threshold=d2_threshold,
                                  determinism_threshold=determinism_threshold, gain_threshold=gain_threshold,
                                  negligible_gain=negligible_gain)
    return CircularityResult(
        circular=best if is_circular else (), is_circular=is_circular, best=best, d2=float(best_fit.d2),
        edf=float(best_fit.edf), candidates=tuple(candidates), ranking=ranking, models=models,
        determinism=float(det), added=null.added, explained_alone=null.explained_alone, added_ratio=null.added_ratio,
        basis=basis, k=kmap, gain=null.gain, gain_ratio=null.gain_ratio, nullification=null.sd_ratio,
        sd_with=null.sd_with, sd_without=null.sd_without, share=null.share, nullified=null.nullified,
        d2_tolerance=float(d2_tolerance), d2_threshold=float(d2_threshold),
        determinism_threshold=float(determinism_threshold), gain_threshold=float(gain_threshold),
        negligible_gain=float(negligible_gain), nullification_threshold=float(nullification_threshold),
        negligible=float(negligible), search=search, family=family, target=target, reason=reason, fits=fits,
    )


def nullification_ratios(
    data: pd.DataFrame,
    target: str,
    circular: list[str],
    others: list[str],
    *,
    family: str = "gaussian",
    k: int = 10,
    categorical: list[str] | None = None,
    method: str = "GCV",
) -> pd.DataFrame:
    """Nullification of ``others`` by a given feature set ``circular``, as numbers.

    Fits the GAM on ``circular + others`` and on ``others`` alone and reports, per feature in
    ``others``, the standard deviation of its term contribution over the data in both models and
    their ratio (near 0: nullified; near 1: unaffected).

    Parameters
    ----------
    data, target, family, k, categorical, method
        As in :func:`circularity_test`.
    circular : list of str
        The suspected circular set.
    others : list of str
        The features whose nullification is measured.

    Returns
    -------
    pandas.DataFrame
        Columns ``feature``, ``sd_with``, ``sd_without``, ``ratio``; attributes ``d2_with`` and
        ``d2_without`` in ``.attrs``.

    Notes
    -----
    :math:`\\rho_j = \\mathrm{sd}_n \\hat f_j(x^n_j \\mid c \\cup o) / \\mathrm{sd}_n \\hat f_j(x^n_j \\mid o)`.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(2)
    >>> df = pd.DataFrame(rng.normal(size=(2000, 2)), columns=["a", "b"])
    >>> df["b"] += df["a"]
    >>> df["y"] = (df["a"] > 0).astype(float)
    >>> tab = nullification_ratios(df, "y", ["a"], ["b"], k=20)
    >>> bool(tab["ratio"].iloc[0] < 0.1)
    True
    """
    circular = list(circular)
    others = list(others)
    if not circular or not others:
        raise InputError("`circular` and `others` must both name at least one feature.")
    overlap = set(circular) & set(others)
    if overlap:
        raise InputError(f"features {sorted(overlap)} are in both `circular` and `others`.")
    design = make_design(data, target, circular + others, family, k, categorical, method)
    n_c = len(circular)
    full = design.fit(range(n_c + len(others)))
    reduced = design.fit(range(n_c, n_c + len(others)))
    sw, so = full.term_sd("response"), reduced.term_sd("response")
    out = pd.DataFrame(
        {"feature": others, "sd_with": [sw[f] for f in others], "sd_without": [so[f] for f in others]}
    )
    out["ratio"] = out["sd_with"] / out["sd_without"]
    out.attrs["d2_with"] = full.d2
    out.attrs["d2_without"] = reduced.d2
    return out


def distillation_test(
    predictions: Any,
    data: pd.DataFrame,
    features: list[str] | None = None,
    *,
    threshold: float | None = None,
    family: str | None = None,
    **kwargs: Any,
) -> CircularityResult:
    """Circularity test of a black-box model's predictions (knowledge distillation into GAMs).

    Parameters
    ----------
    predictions : array-like, callable, or object with ``predict``
        The model's predictions on ``data`` (one per row), a function ``f(X) -> predictions``,
        or an estimator with a ``predict(X)`` method, called on ``data[features]``.
    data : pandas.DataFrame
        The test inputs (only features; a target column is not needed).
    features : list of str, optional
        Candidate features (default: every non-constant numeric column).
    threshold : float, optional
        If given, predictions are thresholded into classes ``prediction >= threshold`` (0/1) and
        the student GAM is binomial with logit link (as the book does for classifiers).
    family : {"gaussian", "binomial"}, optional
        Overrides the family (default: Gaussian for scores, binomial when thresholded).
    **kwargs
        Passed on to :func:`circularity_test` (``top``, ``k``, thresholds, ...).

    Returns
    -------
    CircularityResult
        With ``target == "prediction"``.

    Notes
    -----
    The student GAM is fitted to :math:`\\hat y = p_\\theta(x)` instead of gold labels; the
    test is otherwise that of :func:`circularity_test` (book Section 2.4.3, "Circularity in
    Machine Learning Prediction").

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(3)
    >>> X = pd.DataFrame(rng.normal(size=(3000, 3)), columns=["a", "b", "c"])
    >>> X["b"] += X["a"]
    >>> teacher = lambda df: np.digitize(df["a"], [-1, 0, 1]).astype(float)
    >>> distillation_test(teacher, X, k=30).circular
    ('a',)
    """
    data = require_dataframe(data)
    if features is None:
        features = _default_features(data, "", [])
    require_columns(data, features)
    if hasattr(predictions, "predict"):
        pred = predictions.predict(data[features])
    elif callable(predictions):
        pred = predictions(data[features])
    else:
        pred = predictions
    pred = np.asarray(pred, dtype=float).reshape(-1)
    if pred.size != len(data):
        raise InputError(f"got {pred.size} predictions for {len(data)} rows of `data`; they must match one to one.")
    if not np.all(np.isfinite(pred)):
        raise InputError(f"the predictions contain {int((~np.isfinite(pred)).sum())} NaN/infinite value(s).")
    name = "prediction"
    while name in data.columns:
        name = "_" + name
    if threshold is not None:
        pred = (pred >= float(threshold)).astype(float)
        family = family or "binomial"
    frame = data[features].copy()
    frame[name] = pred
    return circularity_test(frame, name, features, family=family or "gaussian", **kwargs)
