"""The GAM circularity test (book Definition 2.5) and its distillation mode."""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._progress import progress
from .._validation import require_columns, require_dataframe, require_positive_int
from ..errors import BasisLimitWarning, ConvergenceWarning, InputError
from ._gam import GAMResult, check_basis, make_design

__all__ = [
    "CircularityResult",
    "circularity_test",
    "distillation_test",
    "nullification_ratios",
    "rank_features",
]


@dataclass(frozen=True)
class CircularityResult:
    """Outcome of the circularity test.

    Attributes
    ----------
    circular : tuple of str
        The circular feature set ``c*`` if the verdict is positive, else empty.
    is_circular : bool
        The verdict: ``D^2(c*) >= d2_threshold`` and every other candidate nullified.
    best : tuple of str
        The selected set ``c*``: maximal D^2 (within ``d2_tolerance``) with the fewest edf.
    d2, edf : float
        Deviance explained and effective degrees of freedom of the model on ``best``.
    candidates : tuple of str
        The candidates searched, ordered by absolute correlation with the target.
    ranking : pandas.DataFrame
        Every considered feature with its correlation with the target (``feature``, ``r``, ``abs_r``).
    models : pandas.DataFrame
        One row per fitted GAM: ``features`` (tuple), ``n_features``, ``d2``, ``edf``; sorted by
        decreasing D^2, then increasing edf.
    nullification : dict
        For every candidate not in ``best``: sd of its term contribution in the model with all
        candidates divided by its sd in the model without ``best`` (near 0: nullified).
        Contributions are on the response scale (Gaussian: the term ``f_j(x_j)`` itself; binomial:
        the change in predicted probability when the term is removed).
    sd_with, sd_without : dict
        The two standard deviations behind each nullification ratio.
    share : dict
        ``sd_with`` relative to the sd of the full model's fitted values.
    nullified : dict
        Per other candidate: ratio at most ``nullification_threshold``, or ``share`` at most
        ``negligible`` (a feature that contributes nothing with or without ``best``, e.g. pure noise,
        has an ill-defined ratio but is not evidence against circularity). For a binomial target
        that ``best`` separates perfectly (D^2 = 1), every other candidate counts as nullified.
    d2_tolerance, d2_threshold, nullification_threshold : float
        The thresholds used.
    search : str
        ``"powerset"`` or ``"greedy"``.
    reason : str
        A sentence explaining the verdict.
    """

    circular: tuple[str, ...]
    is_circular: bool
    best: tuple[str, ...]
    d2: float
    edf: float
    candidates: tuple[str, ...]
    ranking: pd.DataFrame = field(repr=False)
    models: pd.DataFrame = field(repr=False)
    nullification: dict[str, float] = field(default_factory=dict)
    sd_with: dict[str, float] = field(default_factory=dict, repr=False)
    sd_without: dict[str, float] = field(default_factory=dict, repr=False)
    share: dict[str, float] = field(default_factory=dict, repr=False)
    nullified: dict[str, bool] = field(default_factory=dict, repr=False)
    d2_tolerance: float = 0.01
    d2_threshold: float = 0.9
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

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly summary (the ``mixeval circularity --json`` output)."""
        return {
            "circular": list(self.circular),
            "is_circular": self.is_circular,
            "best": list(self.best),
            "d2": self.d2,
            "edf": self.edf,
            "candidates": list(self.candidates),
            "models": [
                {"features": list(r.features), "d2": r.d2, "edf": r.edf}
                for r in self.models.itertuples(index=False)
            ],
            "nullification": dict(self.nullification),
            "thresholds": {
                "d2_tolerance": self.d2_tolerance,
                "d2_threshold": self.d2_threshold,
                "nullification_threshold": self.nullification_threshold,
                "negligible": self.negligible,
            },
            "nullified": dict(self.nullified),
            "family": self.family,
            "search": self.search,
            "reason": self.reason,
        }

    def summary(self) -> str:
        """Human-readable report: verdict, top models and nullification ratios."""
        lines = [
            f"Circularity test for {self.target!r} ({self.family}, {self.search} search over "
            f"{len(self.candidates)} candidates: {', '.join(self.candidates)})",
            f"verdict: {'CIRCULAR ' + '{' + ', '.join(self.circular) + '}' if self.is_circular else 'no circular set'}",
            f"  {self.reason}",
            f"selected set {{{', '.join(self.best)}}}: D^2 = {self.d2:.4f}, edf = {self.edf:.2f}",
            "top models (D^2, edf):",
        ]
        for r in self.models.head(8).itertuples(index=False):
            lines.append(f"  {{{', '.join(r.features)}}}: {r.d2:.4f}, {r.edf:.2f}")
        if self.nullification:
            lines.append("nullification (sd of term with / without the selected set):")
            for f, v in self.nullification.items():
                tag = "nullified" if self.nullified.get(f) else "NOT nullified"
                lines.append(f"  {f}: {v:.4f} ({self.sd_with[f]:.4g} / {self.sd_without[f]:.4g}; "
                             f"share {self.share[f]:.4f}) {tag}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"CircularityResult(circular={list(self.circular)}, best={list(self.best)}, d2={self.d2:.6g}, "
            f"edf={self.edf:.6g}, nullification={ {k: round(v, 4) for k, v in self.nullification.items()} })"
        )

    def _repr_html_(self) -> str:
        return "<pre>" + self.summary() + "</pre>"


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


def circularity_test(
    data: pd.DataFrame,
    target: str,
    features: list[str] | None = None,
    *,
    top: int | None = 5,
    family: str = "gaussian",
    k: int = 10,
    categorical: list[str] | None = None,
    method: str = "GCV",
    d2_tolerance: float = 0.01,
    d2_threshold: float = 0.9,
    nullification_threshold: float = 0.2,
    negligible: float = 0.025,
    max_exhaustive: int = 10,
    exclude: list[str] | None = None,
    show_progress: bool | None = None,
) -> CircularityResult:
    """Test whether a target is a reconstruction of a rule over a few features (book Def. 2.5).

    Candidates are ranked by absolute correlation with the target; a GAM is fitted to every
    subset of the candidates (powerset up to ``max_exhaustive`` candidates, greedy forward
    search beyond). The selected set ``c*`` has the maximal deviance explained D^2 (every model
    within ``d2_tolerance`` of the maximum counts as maximal) and, among those, the fewest
    effective degrees of freedom. Nullification is measured, for every other candidate ``j``, as

    ``sd_n f_j(x_j^n)`` in the GAM on all candidates / ``sd_n f_j(x_j^n)`` in the GAM without ``c*``.

    The verdict is circular when ``D^2(c*) >= d2_threshold`` and every ratio is at most
    ``nullification_threshold``.

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
        Basis dimension per smooth (mgcv's ``k``). Step-like rules need larger ``k``; a
        :class:`~mixeval.errors.BasisLimitWarning` says when a smooth hits its basis limit.
    categorical : list of str, optional
        Numeric columns to treat as nominal.
    method : {"GCV", "REML"}
        Smoothing parameter selection (see :func:`fit_gam`; ``"GCV"`` is mgcv's default).
    d2_tolerance : float
        Models whose D^2 is within this of the maximum count as maximal.
    d2_threshold : float
        D^2 the selected set must reach to be called circular ("close to 1").
    nullification_threshold : float
        Largest nullification ratio that still counts as nullified. On the book's liver data the
        ratios are 0.02-0.08 for circular labels and 0.7-0.9 for a non-circular teacher.
    negligible : float
        A candidate whose contribution in the full model has at most this fraction of the sd of the
        full model's fitted values (i.e. at most 0.06% of their variance by default) also counts as
        nullified: pure noise features have ill-defined ratios (tiny / tiny).
    max_exhaustive : int
        Largest number of candidates for the full powerset search.
    exclude : list of str, optional
        Columns never used as candidates (e.g. other label columns).
    show_progress : bool, optional
        Progress bar (default: shown when the search takes more than 2 s).

    Returns
    -------
    CircularityResult

    Notes
    -----
    With :math:`\\mathcal{M}_C = \\{\\mu_c\\}` the GAMs over candidate sets ``c``,
    :math:`c^* = \\arg\\max_c D^2(\\mu_c)` with ties (within the tolerance) broken by the
    smallest edf, and :math:`D^2 = 1 - D(\\mu)/D(\\mu_0)`. The nullification ratio
    :math:`\\rho_j = \\mathrm{sd}(\\hat f_j \\mid C) / \\mathrm{sd}(\\hat f_j \\mid C \\setminus c^*)`
    tends to 0 for features that do not enter a deterministic labelling rule (Proposition 2.1).
    Significance of a term is not used: with many rows every term is "significant".

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.validity import circularity_test
    >>> rng = np.random.default_rng(1)
    >>> df = pd.DataFrame(rng.normal(size=(3000, 3)), columns=["a", "b", "c"])
    >>> df["b"] += df["a"]  # correlated, but not part of the rule
    >>> df["label"] = np.digitize(df["a"], [-1, 0, 1]).astype(float)
    >>> res = circularity_test(df, "label", k=30)
    >>> res.circular
    ('a',)
    """
    data = require_dataframe(data)
    require_columns(data, [target])
    exclude = list(exclude or [])
    if features is None:
        features = _default_features(data, target, exclude)
        if not features:
            raise InputError("no numeric, non-constant feature columns besides the target; pass `features`.")
    else:
        if isinstance(features, str):
            raise TypeError(f"`features` must be a list of column names; write features=[{features!r}].")
        features = [f for f in features if f not in exclude]
        if not features:
            raise InputError("`features` is empty; name at least one candidate feature.")
        require_columns(data, features)
    for name, v in (("d2_tolerance", d2_tolerance), ("d2_threshold", d2_threshold),
                    ("nullification_threshold", nullification_threshold), ("negligible", negligible)):
        if not (isinstance(v, (int, float)) and np.isfinite(v) and v >= 0):
            raise InputError(f"`{name}` must be a non-negative number; got {v!r}.")
    max_exhaustive = require_positive_int(max_exhaustive, "max_exhaustive")
    # validate target and features before ranking (clear messages for missing values etc.)
    from ._gam import validate_inputs, prepare_response

    validate_inputs(data, target, features)
    prepare_response(data, target, family)
    ranking = rank_features(data, target, features)
    if top is not None:
        top = require_positive_int(top, "top")
        candidates = ranking["feature"].head(top).tolist()
    else:
        candidates = ranking["feature"].tolist()
    design = make_design(data, target, candidates, family, k, [c for c in (categorical or []) if c in candidates],
                         method)
    m = len(candidates)
    fits: dict[tuple[str, ...], GAMResult] = {}

    separated: list[tuple[str, ...]] = []
    failed: list[tuple[str, ...]] = []

    def fit(idx: tuple[int, ...]) -> GAMResult:
        key = tuple(candidates[i] for i in sorted(idx))
        if key not in fits:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                fits[key] = design.fit(sorted(idx))
            if fits[key].separated:
                separated.append(key)
            elif not fits[key].converged:
                failed.append(key)
        return fits[key]

    if m <= max_exhaustive:
        search = "powerset"
        subsets = [s for r in range(1, m + 1) for s in itertools.combinations(range(m), r)]
        for s in progress(subsets, total=len(subsets), desc="circularity: GAM fits", enabled=show_progress):
            fit(s)
    else:
        search = "greedy"
        chosen: list[int] = []
        best_d2 = -np.inf
        steps = progress(range(m), total=m, desc="circularity: greedy search", enabled=show_progress)
        for _ in steps:
            rest = [i for i in range(m) if i not in chosen]
            if not rest:
                break
            trial = {i: fit(tuple(chosen + [i])) for i in rest}
            i_best = max(trial, key=lambda i: (trial[i].d2, -trial[i].edf))
            gain = trial[i_best].d2 - best_d2
            chosen.append(i_best)
            best_d2 = max(best_d2, trial[i_best].d2)
            if gain < d2_tolerance / 10 and len(chosen) > 1:
                break
        fit(tuple(range(m)))

    models = pd.DataFrame(
        {"features": list(fits), "n_features": [len(f) for f in fits],
         "d2": [r.d2 for r in fits.values()], "edf": [r.edf for r in fits.values()]}
    )
    models = models.sort_values(["d2", "edf"], ascending=[False, True], kind="stable").reset_index(drop=True)
    d2_max = float(models["d2"].max())
    eligible = models[models["d2"] >= d2_max - d2_tolerance]
    best_row = eligible.sort_values(["edf", "d2"], ascending=[True, False], kind="stable").iloc[0]
    best = tuple(best_row["features"])
    best_fit = fits[best]
    others = [c for c in candidates if c not in best]
    nullification: dict[str, float] = {}
    sd_with: dict[str, float] = {}
    sd_without: dict[str, float] = {}
    share: dict[str, float] = {}
    nullified: dict[str, bool] = {}
    if others:
        full = fit(tuple(range(m)))
        reduced = fit(tuple(candidates.index(c) for c in others))
        sw = full.term_sd("response")
        so = reduced.term_sd("response")
        for c in others:
            sd_with[c] = sw[c]
            sd_without[c] = so[c]
            nullification[c] = sw[c] / so[c] if so[c] > 0 else (0.0 if sw[c] == 0 else np.inf)
        eta_sd = float(np.std(full.fitted))  # response scale (for Gaussian: the linear predictor)
        for c in others:
            share[c] = sw[c] / eta_sd if eta_sd > 0 else 0.0
            nullified[c] = bool(nullification[c] <= nullification_threshold or share[c] <= negligible)
            if best_fit.separated:
                # the selected set alone separates the labels: the logit GAM with more features has no
                # finite maximum, its term shapes are arbitrary, and nothing can add explained deviance
                nullified[c] = True
    if separated:
        warnings.warn(
            f"{len(separated)} of {len(fits)} models separate the 0/1 target perfectly (D^2 = 1 reported, "
            f"e.g. {{{', '.join(separated[0])}}}): the labels are a deterministic function of those features.",
            ConvergenceWarning, stacklevel=2,
        )
    if failed:
        warnings.warn(
            f"penalized IRLS did not converge for {len(failed)} model(s) (e.g. {{{', '.join(failed[0])}}}); "
            "their D^2 may be inaccurate (quasi-separation?).", ConvergenceWarning, stacklevel=2,
        )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_basis(best_fit)
    for w in caught:
        if issubclass(w.category, BasisLimitWarning):
            warnings.warn(str(w.message), BasisLimitWarning, stacklevel=2)

    d2_ok = best_fit.d2 >= d2_threshold
    not_nullified = [c for c, v in nullified.items() if not v]
    if not d2_ok:
        reason = (f"the best set {{{', '.join(best)}}} explains D^2 = {best_fit.d2:.4f} < {d2_threshold}: "
                  "no subset of the candidates reconstructs the target.")
    elif not others:
        reason = (f"{{{', '.join(best)}}} reaches D^2 = {best_fit.d2:.4f} but there are no other candidates, "
                  "so nullification could not be checked; add candidates (larger `top`).")
    elif not_nullified:
        reason = (f"{{{', '.join(best)}}} reaches D^2 = {best_fit.d2:.4f}, but {', '.join(not_nullified)} "
                  f"keep(s) a contribution (ratio > {nullification_threshold}): partial circularity at most.")
    elif best_fit.separated:
        reason = (f"{{{', '.join(best)}}} alone separates the 0/1 labels perfectly (D^2 = 1) with the fewest edf: "
                  "the labels are a deterministic function of it and no other candidate can add anything "
                  "(their shapes in separated logit fits are arbitrary, so their sd ratios are not used).")
    else:
        reason = (f"{{{', '.join(best)}}} reaches D^2 = {best_fit.d2:.4f} with the fewest edf and nullifies "
                  f"every other candidate (sd ratio <= {nullification_threshold} or share of the fitted "
                  f"values <= {negligible}).")
    is_circular = bool(d2_ok and others and not not_nullified)
    return CircularityResult(
        circular=best if is_circular else (),
        is_circular=is_circular,
        best=best,
        d2=float(best_fit.d2),
        edf=float(best_fit.edf),
        candidates=tuple(candidates),
        ranking=ranking,
        models=models,
        nullification=nullification,
        sd_with=sd_with,
        sd_without=sd_without,
        share=share,
        nullified=nullified,
        d2_tolerance=float(d2_tolerance),
        d2_threshold=float(d2_threshold),
        nullification_threshold=float(nullification_threshold),
        negligible=float(negligible),
        search=search,
        family=family,
        target=target,
        reason=reason,
        fits=fits,
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
