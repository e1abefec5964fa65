"""Reproductions of the book's tables (Riezler & Hagmann, Chapters 3 and 4) from its companion data."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd

from .. import datasets
from ..reliability import dstudy
from ..study import Study
from . import register

ANNOTATION = "score ~ (1|sentence) + (1|rater) + (1|occasion) + (1|rater:sentence) + (1|occasion:rater) + (1|occasion:sentence)"
META = "ter ~ (1|sentence_id) + (1|learning_rate) + (1|seed) + (1|decoder_dropout) + (1|decoder_dropout_hidden) + (1|encoder_dropout)"
LIVER = ("accuracy ~ (1|hidden_size_max) + (1|hidden_number) + (1|learning_rate) + (1|batch_size) + "
         "(1|random_seed) + (1|epochs) + (1|dropout)")
BASE_GRID = '(-0.5:0.5)'


def _load(name: str, data_dir: Path | None) -> pd.DataFrame:
    return datasets.load(name, data_dir=data_dir)


def _study(data: pd.DataFrame, formula: str, item: str) -> Study:
    return Study(data, formula, item=item)


def _variances(data: pd.DataFrame, formula: str, item: str) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # singular fits are expected in these tables (reported as 0)
        return _study(data, formula, item).variance_components()


@register("table-3.1", "variance components, translation marking (REML)")
def table_3_1(data_dir: Path | None) -> pd.DataFrame:
    """Variance components, translation marking (REML) (``mixeval reproduce table-3.1``).

    Examples
    --------
    With the book data (``MIXEVAL_DATA`` or ``data_dir``); skipped here, as the data may be absent:

    >>> table_3_1(None)  # doctest: +SKIP
               component  variance    percent
    0     rater:sentence  0.004073  16.137389
    1              rater  0.003585  14.200878
    2           sentence  0.003041  12.048857
    3     occasion:rater  0.000000   0.000000
    4  occasion:sentence  0.000000   0.000000
    5           occasion  0.000000   0.000000
    6           Residual  0.014542  57.612876

    Registered for the command line:

    >>> from mixeval.reproductions import get
    >>> get("table-3.1") is table_3_1
    True
    """
    d = _load("mt_annotation", data_dir)
    return _variances(d[d["mode"] == "Marking"], ANNOTATION, "sentence")


@register("table-3.2", "variance components, translation post-editing (REML)")
def table_3_2(data_dir: Path | None) -> pd.DataFrame:
    """Variance components, translation post-editing (REML) (``mixeval reproduce table-3.2``).

    Examples
    --------
    With the book data (``MIXEVAL_DATA`` or ``data_dir``); skipped here, as the data may be absent:

    >>> table_3_2(None)  # doctest: +SKIP
               component  variance    percent
    0           sentence  0.047872  60.433556
    1     rater:sentence  0.018749  23.668613
    2              rater  0.001377   1.738813
    3     occasion:rater  0.000622   0.785178
    4  occasion:sentence  0.000000   0.000000
    5           occasion  0.000000   0.000000
    6           Residual  0.010594  13.373840

    Registered for the command line:

    >>> from mixeval.reproductions import get
    >>> get("table-3.2") is table_3_2
    True
    """
    d = _load("mt_annotation", data_dir)
    return _variances(d[d["mode"] == "Post Edit"], ANNOTATION, "sentence")


@register("table-3.4", "variance components of the liver SOFA meta-parameter grid (REML)")
def table_3_4(data_dir: Path | None) -> pd.DataFrame:
    """Variance components of the liver SOFA meta-parameter grid (REML) (``mixeval reproduce table-3.4``).

    Examples
    --------
    With the book data (``MIXEVAL_DATA`` or ``data_dir``); skipped here, as the data may be absent:

    >>> table_3_4(None)  # doctest: +SKIP
             component      variance    percent
    0    hidden_number  1.592415e-05  30.989178
    1    learning_rate  3.186029e-06   6.200170
    2       batch_size  5.171385e-07   1.006377
    3  hidden_size_max  2.596196e-07   0.505233
    4          dropout  5.994718e-08   0.116660
    5      random_seed  4.050887e-09   0.007883
    6           epochs  0.000000e+00   0.000000
    7         Residual  3.143523e-05  61.174499

    Registered for the command line:

    >>> from mixeval.reproductions import get
    >>> get("table-3.4") is table_3_4
    True
    """
    d = _load("liver_gridsearch", data_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _study(d, LIVER, "hidden_size_max").variance_components()


def _grid(name: str, data_dir: Path | None) -> pd.DataFrame:
    d = _load(name, data_dir)
    return d[d["delta_scheme"] == BASE_GRID].reset_index(drop=True)


@register("table-3.8", "substantial variance check, partial grid (model 3.15)")
def table_3_8(data_dir: Path | None) -> pd.DataFrame:
    """Substantial variance check, partial grid (model 3.15) (``mixeval reproduce table-3.8``).

    Examples
    --------
    With the book data (``MIXEVAL_DATA`` or ``data_dir``); skipped here, as the data may be absent:

    >>> table_3_8(None)  # doctest: +SKIP
         component  variance    percent
    0  sentence_id  0.090467  82.130345
    1     Residual  0.019684  17.869655

    Registered for the command line:

    >>> from mixeval.reproductions import get
    >>> get("table-3.8") is table_3_8
    True
    """
    return _variances(_grid("mt_grid_partial", data_dir), "ter ~ (1|sentence_id)", "sentence_id")


@register("table-3.9", "variance components, partial meta-parameter grid (model 3.16)")
def table_3_9(data_dir: Path | None) -> pd.DataFrame:
    """Variance components, partial meta-parameter grid (model 3.16) (``mixeval reproduce table-3.9``).

    Examples
    --------
    With the book data (``MIXEVAL_DATA`` or ``data_dir``); skipped here, as the data may be absent:

    >>> table_3_9(None)  # doctest: +SKIP
                    component  variance    percent
    0             sentence_id  0.090495  81.890805
    1           learning_rate  0.000801   0.724548
    2  decoder_dropout_hidden  0.000126   0.114413
    3         encoder_dropout  0.000126   0.114412
    4                    seed  0.000013   0.012021
    5         decoder_dropout  0.000000   0.000000
    6                Residual  0.018945  17.143801

    Registered for the command line:

    >>> from mixeval.reproductions import get
    >>> get("table-3.9") is table_3_9
    True
    """
    return _variances(_grid("mt_grid_partial", data_dir), META, "sentence_id")


@register("table-3.10", "substantial variance check, full grid (model 3.15)")
def table_3_10(data_dir: Path | None) -> pd.DataFrame:
    """Substantial variance check, full grid (model 3.15) (``mixeval reproduce table-3.10``).

    Examples
    --------
    With the book data (``MIXEVAL_DATA`` or ``data_dir``); skipped here, as the data may be absent:

    >>> table_3_10(None)  # doctest: +SKIP
         component  variance    percent
    0  sentence_id  0.108728  86.026155
    1     Residual  0.017661  13.973845

    Registered for the command line:

    >>> from mixeval.reproductions import get
    >>> get("table-3.10") is table_3_10
    True
    """
    return _variances(_grid("mt_grid_full", data_dir), "ter ~ (1|sentence_id)", "sentence_id")


@register("table-3.11", "variance components, full meta-parameter grid (model 3.16)")
def table_3_11(data_dir: Path | None) -> pd.DataFrame:
    """Variance components, full meta-parameter grid (model 3.16) (``mixeval reproduce table-3.11``).

    Examples
    --------
    With the book data (``MIXEVAL_DATA`` or ``data_dir``); skipped here, as the data may be absent:

    >>> table_3_11(None)  # doctest: +SKIP
                    component  variance    percent
    0             sentence_id  0.108730  85.906108
    1           learning_rate  0.000413   0.326468
    2         encoder_dropout  0.000098   0.077326
    3  decoder_dropout_hidden  0.000015   0.011653
    4         decoder_dropout  0.000007   0.005304
    5                    seed  0.000002   0.001314
    6                Residual  0.017304  13.671827

    Registered for the command line:

    >>> from mixeval.reproductions import get
    >>> get("table-3.11") is table_3_11
    True
    """
    return _variances(_grid("mt_grid_full", data_dir), META, "sentence_id")


@register("figure-3.3", "D-study: phi over raters x instantiations, Marking and Post Edit")
def figure_3_3(data_dir: Path | None) -> pd.DataFrame:
    """D-study: phi over raters x instantiations, Marking and Post Edit (``mixeval reproduce figure-3.3``).

    Examples
    --------
    With the book data (``MIXEVAL_DATA`` or ``data_dir``); skipped here, as the data may be absent:

    >>> figure_3_3(None).head()  # doctest: +SKIP
          mode  rater  instantiation       phi  phi_relative
    0  Marking      1              1  0.120489      0.140431
    1  Marking      1              2  0.169241      0.211411
    2  Marking      1              3  0.195626      0.254246
    3  Marking      1              4  0.212164      0.282907
    4  Marking      1              5  0.223501      0.303430

    Registered for the command line:

    >>> from mixeval.reproductions import get
    >>> get("figure-3.3") is figure_3_3
    True
    """
    d = _load("mt_annotation", data_dir)
    out = []
    for mode in ("Marking", "Post Edit"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = _study(d[d["mode"] == mode], ANNOTATION, "sentence").fit
        grid = dstudy(fit, "sentence", {"rater": range(1, 13), "occasion": range(1, 6)})
        out.append(grid.assign(mode=mode))
    table = pd.concat(out, ignore_index=True)
    return table[["mode", "rater", "occasion", "phi", "phi_relative"]].rename(columns={"occasion": "instantiation"})


def _ter_study(data_dir: Path | None) -> Study:
    return Study(_load("mt_ter", data_dir), "ter ~ system + (1|sentence_id)")


@register("table-4.1", "GLRTs of the system effect: seed-averaged linear model and LMEM (ML)")
def table_4_1(data_dir: Path | None) -> pd.DataFrame:
    """GLRTs of the system effect: seed-averaged linear model and LMEM (ML) (``mixeval reproduce table-4.1``).

    Examples
    --------
    With the book data (``MIXEVAL_DATA`` or ``data_dir``); skipped here, as the data may be absent:

    >>> table_4_1(None)  # doctest: +SKIP
                                                                   model  statistic   df        pvalue
    0                   lm on seed-averaged TER: ter ~ system vs ter ~ 1   1.320551  2.0  5.167090e-01
    1  LMEM: ter ~ system + (1|sentence_id) vs ter ~ 1 + (1|sentence_id)  34.089510  2.0  3.958739e-08

    Registered for the command line:

    >>> from mixeval.reproductions import get
    >>> get("table-4.1") is table_4_1
    True
    """
    study = _ter_study(data_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        averaged = study.glrt_averaged("replication")
        lmm = study.glrt()
    rows = [("lm on seed-averaged TER: ter ~ system vs ter ~ 1", averaged),
            ("LMEM: ter ~ system + (1|sentence_id) vs ter ~ 1 + (1|sentence_id)", lmm)]
    return pd.DataFrame([{"model": m, "statistic": r.statistic, "df": r.df, "pvalue": r.pvalue} for m, r in rows])


def _contrast_rows(table: pd.DataFrame, by: str | None) -> pd.DataFrame:
    cols = ["contrast", "estimate", "se", "z", "pvalue"]
    out = table.rename(columns=str.lower)
    if by:
        out = out.rename(columns={by: "by"})
        cols = ["by", *cols]
    return out[cols].reset_index(drop=True)


@register("table-4.2", "pairwise system contrasts, emmeans with Tukey adjustment (asymptotic)")
def table_4_2(data_dir: Path | None) -> pd.DataFrame:
    """Pairwise system contrasts, emmeans with Tukey adjustment (asymptotic) (``mixeval reproduce table-4.2``).

    Examples
    --------
    With the book data (``MIXEVAL_DATA`` or ``data_dir``); skipped here, as the data may be absent:

    >>> table_4_2(None)  # doctest: +SKIP
                  contrast  estimate        se         z        pvalue
    0   Baseline - Marking  0.012342  0.002113  5.839876  1.566325e-08
    1  Baseline - PostEdit  0.009620  0.002113  4.551897  1.584827e-05
    2   Marking - PostEdit -0.002722  0.001494 -1.821477  1.625287e-01

    Registered for the command line:

    >>> from mixeval.reproductions import get
    >>> get("table-4.2") is table_4_2
    True
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = _ter_study(data_dir).pairwise(adjust="tukey")
    return _contrast_rows(res.table, None)


@register("table-4.3", "system contrasts conditional on source length (> 15, > 55), Tukey within class")
def table_4_3(data_dir: Path | None) -> pd.DataFrame:
    """System contrasts conditional on source length (> 15, > 55), Tukey within class (``mixeval reproduce table-4.3``).

    Examples
    --------
    With the book data (``MIXEVAL_DATA`` or ``data_dir``); skipped here, as the data may be absent:

    >>> table_4_3(None)  # doctest: +SKIP
              by             contrast  estimate        se         z        pvalue
    0      short   Baseline - Marking  0.016125  0.003155  5.110815  9.600593e-07
    1      short  Baseline - PostEdit  0.012670  0.003155  4.015872  1.750122e-04
    2      short   Marking - PostEdit -0.003455  0.002231 -1.548484  2.683453e-01
    3    typical   Baseline - Marking  0.007821  0.002867  2.727633  1.753484e-02
    4    typical  Baseline - PostEdit  0.004840  0.002867  1.687861  2.098104e-01
    5    typical   Marking - PostEdit -0.002981  0.002028 -1.470460  3.051923e-01
    6  very long   Baseline - Marking  0.072856  0.018870  3.861006  3.323440e-04
    7  very long  Baseline - PostEdit  0.107563  0.018870  5.700340  3.584418e-08
    8  very long   Marking - PostEdit  0.034707  0.013343  2.601210  2.517878e-02

    Registered for the command line:

    >>> from mixeval.reproductions import get
    >>> get("table-4.3") is table_4_3
    True
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, pairs, _ = _ter_study(data_dir).conditional("src_length", (15, 55), ("short", "typical", "very long"))
    return _contrast_rows(pairs.table, "src_length_class")


@register("figure-3.5", "delta_scheme x source-length class: meta-parameter contrasts within each class (Tukey)")
def figure_3_5(data_dir: Path | None) -> pd.DataFrame:
    """Delta_scheme x source-length class: meta-parameter contrasts within each class (Tukey) (``mixeval reproduce figure-3.5``).

    Examples
    --------
    With the book data (``MIXEVAL_DATA`` or ``data_dir``); skipped here, as the data may be absent:

    >>> figure_3_5(None)  # doctest: +SKIP
              by              contrast  estimate        se         z        pvalue
    0      short  ((-0.5:0.5)) - (0:1)  0.001661  0.001901  0.873767  3.822452e-01
    1    typical  ((-0.5:0.5)) - (0:1) -0.000988  0.001491 -0.662711  5.075156e-01
    2  very long  ((-0.5:0.5)) - (0:1) -0.053998  0.007478 -7.221078  5.157702e-13

    Registered for the command line:

    >>> from mixeval.reproductions import get
    >>> get("figure-3.5") is figure_3_5
    True
    """
    d = _load("mt_grid_partial", data_dir)
    study = Study(d, "ter ~ delta_scheme + (1|sentence_id)", system="delta_scheme")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, pairs, _ = study.conditional("src_length_class")
    return _contrast_rows(pairs.table, "src_length_class")


__all__ = ["table_3_1", "table_3_2", "table_3_4", "table_3_8", "table_3_9", "table_3_10", "table_3_11",
           "figure_3_3", "figure_3_5", "table_4_1", "table_4_2", "table_4_3"]
