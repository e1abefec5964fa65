"""Transformation invariance test (book Definition 2.3): refit after permissible scale transformations."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._random import as_generator
from .._results import Result
from .._validation import require_columns, require_dataframe, require_no_missing, require_positive_int
from ..errors import InputError

__all__ = ["InvarianceResult", "permissible_transform", "transformation_invariance_test"]

SCALES = ("nominal", "ordinal", "interval", "ratio")


def permissible_transform(values: object, scale: str, *, random_state: int | np.random.Generator | None = None
                          ) -> Callable[[np.ndarray], np.ndarray]:
    """Draw a random permissible transformation ``T`` for a feature of the given scale type.

    Parameters
    ----------
    values : array-like
        The feature's values (all domains the map must cover; the map is built on them).
    scale : {"nominal", "ordinal", "interval", "ratio"}
        Stevens' scale type of the feature.
    random_state : int or numpy.random.Generator, keyword-only

    Returns
    -------
    callable
        ``T(x)`` applicable to any array of values seen in ``values`` (nominal/ordinal) or any
        numbers (interval/ratio).

    Notes
    -----
    nominal: a random one-to-one substitution (permutation of the distinct codes);
    ordinal: a random strictly increasing map of the distinct values (cumulative sums of positive
    random increments, so not affine); interval: :math:`T(x) = ax + b`, :math:`a > 0`;
    ratio: :math:`T(x) = ax`, :math:`a > 0` (book Def. 2.3).

    Examples
    --------
    >>> T = permissible_transform([1, 2, 3], "ordinal", random_state=0)
    >>> bool(np.all(np.diff(T(np.array([1, 2, 3]))) > 0))
    True
    """
    if scale not in SCALES:
        raise InputError(f"`scale` must be one of {', '.join(SCALES)}; got {scale!r}.")
    rng = as_generator(random_state)
    v = np.asarray(values)
    if scale in ("nominal", "ordinal"):
        uniq = np.unique(v)
        if scale == "nominal":
            if uniq.size > 1:
                perm = rng.permutation(uniq.size)
                while uniq.size > 1 and np.all(perm == np.arange(uniq.size)):
                    perm = rng.permutation(uniq.size)
            else:
                perm = np.arange(uniq.size)
            image = uniq[perm]
        else:
            if not np.issubdtype(uniq.dtype, np.number):
                raise InputError("an ordinal transformation needs numeric codes; map the ordered levels to numbers first.")
            image = np.cumsum(rng.exponential(1.0, uniq.size) ** 2 + 1e-3) * (np.ptp(uniq) or 1.0)
        lookup = dict(zip(uniq.tolist(), image.tolist()))

        def T(x: np.ndarray) -> np.ndarray:
            x = np.asarray(x)
            try:
                return np.array([lookup[val] for val in x.tolist()], dtype=image.dtype)
            except KeyError as exc:
                raise InputError(f"value {exc.args[0]!r} was not among the values the transformation was built on.") from None

        T.description = f"{scale}: random {'permutation of' if scale == 'nominal' else 'monotone map of'} {uniq.size} values"
        return T
    x = v.astype(float)
    a = float(np.exp(rng.uniform(np.log(0.2), np.log(5.0))))
    b = float(rng.normal(0.0, np.std(x) or 1.0)) if scale == "interval" else 0.0

    def L(x: np.ndarray) -> np.ndarray:
        return a * np.asarray(x, dtype=float) + b

    L.description = f"{scale}: x -> {a:.4g} x + {b:.4g}" if scale == "interval" else f"ratio: x -> {a:.4g} x"
    return L


@dataclass(frozen=True, eq=False)
class InvarianceResult(Result):
    """Outcome of the transformation invariance test.

    Attributes
    ----------
    invariant : bool
        True when no transformation changed any prediction by more than ``tolerance`` (or, if
        ``metric_tolerance`` is set, the metric by more than that).
    feature, scale : str
    metric_original : float
        The metric of the model fitted on the untransformed data.
    table : pandas.DataFrame
        One row per transformation: ``transform``, ``max_abs_change``, ``mean_abs_change``,
        ``share_changed`` (predictions changed by more than ``tolerance``), ``metric``,
        ``metric_change``.
    tolerance, metric_tolerance : float
    metric_name : str

    Examples
    --------
    A linear regression is invariant to interval-scale transformations of its feature (``x -> a x + b``,
    ``a > 0``) but not to arbitrary monotone (ordinal) ones:

    >>> import numpy as np, pandas as pd
    >>> class OLS:
    ...     def fit(self, X, y):
    ...         A = np.column_stack([np.ones(len(X)), X.to_numpy(float)])
    ...         self.b = np.linalg.lstsq(A, y, rcond=None)[0]; return self
    ...     def predict(self, X):
    ...         return np.column_stack([np.ones(len(X)), X.to_numpy(float)]) @ self.b
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x": rng.normal(size=100)}); df["y"] = 2 * df["x"] + rng.normal(size=100)
    >>> res = transformation_invariance_test(OLS(), df, "y", "x", "interval", random_state=1)
    >>> res.invariant, res.feature, res.scale, len(res.table)
    (True, 'x', 'interval', 5)
    >>> transformation_invariance_test(OLS(), df, "y", "x", "ordinal", random_state=1).invariant
    False
    """

    invariant: bool
    feature: str
    scale: str
    metric_original: float
    table: pd.DataFrame = field(repr=False)
    tolerance: float = 1e-8
    metric_tolerance: float | None = None
    metric_name: str = ""

    def summary(self) -> str:
        verdict = "invariant" if self.invariant else "NOT invariant (validity violated)"
        return (f"Transformation invariance of {self.feature!r} ({self.scale} scale): {verdict}\n"
                f"{self.metric_name} on original data: {self.metric_original:.6g}\n"
                + self.table.to_string(index=False, float_format=lambda v: f"{v:.6g}"))

    def __repr__(self) -> str:
        worst = float(self.table["metric_change"].abs().max()) if len(self.table) else 0.0
        return (f"InvarianceResult(feature={self.feature!r}, scale={self.scale!r}, invariant={self.invariant}, "
                f"max_metric_change={worst:.6g})")


def _new_model(model: Any) -> Any:
    if isinstance(model, type):  # a class is a factory
        return _new_model(model())
    if hasattr(model, "fit") and hasattr(model, "predict"):
        return copy.deepcopy(model)
    if callable(model):
        m = model()
        if not (hasattr(m, "fit") and hasattr(m, "predict")):
            raise InputError("`model` factory must return an object with fit(X, y) and predict(X) methods.")
        return m
    raise InputError("`model` must be an estimator with fit(X, y) and predict(X) (e.g. scikit-learn style) "
                    "or a function returning a fresh one.")


def _default_metric(y: np.ndarray, pred: np.ndarray) -> tuple[str, Callable[[np.ndarray, np.ndarray], float]]:
    discrete = np.all(np.equal(np.mod(pred, 1), 0)) and np.all(np.equal(np.mod(y, 1), 0))
    if discrete:
        return "accuracy", lambda t, p: float(np.mean(t == p))
    return "mean squared error", lambda t, p: float(np.mean((t - p) ** 2))


def transformation_invariance_test(
    model: Any,
    data: pd.DataFrame,
    target: str,
    feature: str,
    scale: str,
    *,
    features: list[str] | None = None,
    test_data: pd.DataFrame | None = None,
    transform: Callable[[np.ndarray], np.ndarray] | None = None,
    metric: Callable[[np.ndarray, np.ndarray], float] | None = None,
    n_transforms: int = 5,
    tolerance: float = 1e-8,
    metric_tolerance: float | None = None,
    random_state: int | np.random.Generator | None = None,
) -> InvarianceResult:
    """Transformation invariance test (book Def. 2.3): do permissible scale transformations change predictions?

    The model is fitted on ``data`` and evaluated on ``test_data`` (default: ``data``); then the
    feature is transformed in both by a permissible transformation of its scale type, the model
    is refitted and the predictions and metric are compared.

    Parameters
    ----------
    model : estimator or callable
        An object with ``fit(X, y)`` and ``predict(X)`` (copied before every fit; scikit-learn is
        not required) or a function returning a fresh such object. ``X`` is a DataFrame.
    data : pandas.DataFrame
        Training data (not modified).
    target : str
        Label column.
    feature : str
        The feature to transform.
    scale : {"nominal", "ordinal", "interval", "ratio"}
        The feature's scale type, which fixes the permissible transformations.
    features : list of str, optional
        Model inputs (default: every column but the target).
    test_data : pandas.DataFrame, optional
        Evaluation data (default: ``data``).
    transform : callable, optional
        Use this transformation instead of random permissible ones.
    metric : callable, optional
        ``metric(y_true, y_pred) -> float`` (default: accuracy for integer labels and
        predictions, else mean squared error).
    n_transforms : int
        Number of random transformations tried.
    tolerance : float
        Largest prediction change regarded as no change (the verdict's criterion by default).
    metric_tolerance : float, optional
        If given, the verdict uses the metric instead: invariant when every metric change is at
        most this (for learners whose predictions vary slightly anyway, e.g. random restarts).
    random_state : int or numpy.random.Generator, keyword-only
        Seed of the random transformations.

    Returns
    -------
    InvarianceResult

    Notes
    -----
    Validity requires :math:`\\hat y(T(x_k)) = \\hat y(x_k)` for every permissible :math:`T`;
    the table reports :math:`\\max_n |\\hat y_n^T - \\hat y_n|` and the metric change. An ID
    column that predicts labels (information leakage, book Figure 2.6) fails the nominal test.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> class OLS:
    ...     def fit(self, X, y):
    ...         A = np.column_stack([np.ones(len(X)), X.to_numpy(float)])
    ...         self.b = np.linalg.lstsq(A, y, rcond=None)[0]; return self
    ...     def predict(self, X):
    ...         return np.column_stack([np.ones(len(X)), X.to_numpy(float)]) @ self.b
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x": rng.normal(size=100)}); df["y"] = 2 * df["x"] + rng.normal(size=100)
    >>> transformation_invariance_test(OLS(), df, "y", "x", "interval", random_state=1).invariant
    True
    """
    data = require_dataframe(data)
    test_data = data if test_data is None else require_dataframe(test_data, "test_data")
    if scale not in SCALES:
        raise InputError(f"`scale` must be one of {', '.join(SCALES)}; got {scale!r}.")
    if features is None:
        features = [c for c in data.columns if c != target]
    features = list(features)
    if feature not in features:
        raise InputError(f"the transformed feature {feature!r} must be one of the model's `features`.")
    require_columns(data, [target, *features])
    require_columns(test_data, [target, *features], "test_data")
    require_no_missing(data, [target, *features])
    require_no_missing(test_data, [target, *features])
    n_transforms = require_positive_int(n_transforms, "n_transforms")
    rng = as_generator(random_state)

    y_train = data[target].to_numpy()
    y_test = test_data[target].to_numpy()
    m0 = _new_model(model)
    m0.fit(data[features], y_train)
    p0 = np.asarray(m0.predict(test_data[features]), dtype=float)
    metric_name = getattr(metric, "__name__", "metric") if metric is not None else None
    if metric is None:
        metric_name, metric = _default_metric(np.asarray(y_test, dtype=float), p0)
    metric0 = float(metric(np.asarray(y_test, dtype=float), p0))

    all_values = np.concatenate([data[feature].to_numpy(), test_data[feature].to_numpy()])
    rows = []
    for i in range(1 if transform is not None else n_transforms):
        T = transform if transform is not None else permissible_transform(all_values, scale, random_state=rng)
        train_t = data[features].copy()
        test_t = test_data[features].copy()
        train_t[feature] = T(data[feature].to_numpy())
        test_t[feature] = T(test_data[feature].to_numpy())
        m = _new_model(model)
        m.fit(train_t, y_train)
        p = np.asarray(m.predict(test_t), dtype=float)
        change = np.abs(p - p0)
        met = float(metric(np.asarray(y_test, dtype=float), p))
        rows.append({
            "transform": getattr(T, "description", getattr(T, "__name__", f"transform {i + 1}")),
            "max_abs_change": float(change.max()),
            "mean_abs_change": float(change.mean()),
            "share_changed": float(np.mean(change > tolerance)),
            "metric": met,
            "metric_change": met - metric0,
        })
    table = pd.DataFrame(rows)
    if metric_tolerance is None:
        invariant = bool((table["max_abs_change"] <= tolerance).all())
    else:
        invariant = bool((table["metric_change"].abs() <= metric_tolerance).all())
    return InvarianceResult(
        invariant=invariant, feature=feature, scale=scale, metric_original=metric0, table=table,
        tolerance=float(tolerance), metric_tolerance=None if metric_tolerance is None else float(metric_tolerance),
        metric_name=str(metric_name),
    )
