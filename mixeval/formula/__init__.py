"""R's formula language for mixed models: what an lme4 formula pasted from R means, computed as R computes it.

A formula ``response ~ fixed + (lhs | group)`` is read with R's grammar (``?formula``, Chambers & Hastie 1992)
by every entry point (:func:`mixeval.lmer`, :func:`mixeval.glmer`, :func:`mixeval.clmm`, :class:`mixeval.Study`,
the command line, the report, power analysis and ``predict(newdata)``):

* the operators: ``a + b``, ``a:b``, ``a*b`` (``a + b + a:b``), ``(a + b + c)^2`` (all terms up to order 2),
  ``a/b`` (``a + a:b``), ``b %in% a``, ``- term``, ``0 +`` / ``- 1`` (no intercept); terms are ordered by
  their degree as R orders them;
* the expressions, evaluated as R evaluates them: ``I()`` with R's arithmetic (``^`` is a power, ``%%`` and
  ``%/%`` R's floored modulus and division), ``log(x, base)``, ``exp``, ``sqrt``, ``abs``, ``pmin``/``pmax``,
  ``ifelse`` and comparisons (a logical term becomes a factor, ``I(x > 3)TRUE``);
* factors: ``factor(x)``, ``as.factor(x)``, ``factor(x, levels = c(...))``, ``relevel(x, ref = "b")`` with R's
  level order (numbers sorted as numbers, text as R collates it: ``"apple" < "Banana"``, :func:`collation_key`) and
  treatment contrasts; ``ordered(x)`` and ordered
  categorical columns with R's polynomial contrasts (``.L``, ``.Q``); ``C(f, sum)`` (also ``helmert``, ``poly``,
  ``SAS``); a factor with a single level is an error, as in lme4;
* stateful bases that keep the fitted data's parameters for new data (R's ``makepredictcall``): ``scale(x)``,
  ``poly(x, k)`` (R's orthogonal basis; ``raw = TRUE`` the powers), ``ns(x, df)`` and ``bs(x, df, degree)``
  (the ``splines`` bases, knots at quantiles);
* ``offset(expr)``: a term with coefficient 1, summed when repeated, in every family and in ``predict``;
* the response: a column, an expression (``log(rt)``), or glmer's ``cbind(successes, failures)``.

What R accepts that mixeval does not build (``.``, ``lsp()``, ``s()``, ``cut()``, glmmTMB's ``ar1()``, ...) is
refused by name with the alternative; nothing is read by Python's rules (``^`` is never exclusive or).
:func:`model_matrix` gives R's ``model.matrix`` of a right-hand side, with R's column names.
"""

from __future__ import annotations

import pandas as pd

from ._collate import collated, collation_key
from ._formula import FormulaVariable, ParsedFormula, RandomTerm, parse_formula, response_values
from ._model import ModelFrameSpec, is_text, model_frame_spec, prepare_plain_columns
from ._rank import RANK_TOL, kept_columns, kept_columns_of_gram, rank_message, warn_dropped
from ._syntax import quote_name

__all__ = ["RandomTerm", "ParsedFormula", "FormulaVariable", "parse_formula", "model_matrix", "ModelFrameSpec",
           "model_frame_spec", "response_values", "prepare_plain_columns", "quote_name", "kept_columns",
           "kept_columns_of_gram", "rank_message", "warn_dropped", "RANK_TOL", "collated", "collation_key",
           "is_text"]


def model_matrix(rhs: str, data: pd.DataFrame) -> pd.DataFrame:
    """R's ``model.matrix(~ rhs, data)``: the fixed-effects columns of a right-hand side, named as R names them.

    Parameters
    ----------
    rhs : str
        A right-hand side in R's formula language, e.g. ``"system * I(len^2) + ns(x, 3)"``.
    data : pandas.DataFrame
        The rows.

    Returns
    -------
    pandas.DataFrame
        One column per coefficient, R's names, ``data``'s index.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"len": [1, 2, 3, 4], "level": [2, 1, 2, 3]})
    >>> model_matrix("I(len^2) + factor(level)", df)
       (Intercept)  I(len^2)  factor(level)2  factor(level)3
    0          1.0       1.0             1.0             0.0
    1          1.0       4.0             0.0             0.0
    2          1.0       9.0             1.0             0.0
    3          1.0      16.0             0.0             1.0
    """
    X, spec = model_frame_spec(rhs, data)
    return pd.DataFrame(X, columns=list(spec.column_names), index=data.index)
