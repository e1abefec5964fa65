"""Goyal, Hu & Gupta (2023), "Faithful Model Evaluation for Model-Based Metrics": Tables 1 and 2."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import register

__all__ = ["table_1", "table_2", "PAPER_TABLE_1", "PAPER_TABLE_2"]

#: Precision and false omission rate of RoBERTa-ToxiGen on the ToxiGen test set (Section 3.1).
PRECISION = 0.8897
FALSE_OMISSION_RATE = 0.22769

#: Table 1 as published (inputs: N per system, Section 3.1; means from the table).
PAPER_TABLE_1 = {
    "BOLD": {
        "n": 23679, "mean_gpt2": 0.00456, "mean_gptneo": 0.00236, "ate": -0.00219,
        "var_d_gpt2": 1.92e-7, "var_d_gptneo": 9.97e-8, "ci_d": (-0.00325, -0.00114),
        "var_m_gpt2": 7.50e-6, "var_m_gptneo": 7.46e-6, "ci_m": (-0.00978, 0.00538),
    },
    "RealToxicityPrompts": {
        "n": 99442, "mean_gpt2": 0.09124, "mean_gptneo": 0.09157, "ate": 0.00033,
        "var_d_gpt2": 8.34e-7, "var_d_gptneo": 8.37e-7, "ci_d": (-0.00220, 0.00286),
        "var_m_gpt2": 2.06247e-6, "var_m_gptneo": 2.063405e-6, "ci_m": (-0.00365, 0.00431),
    },
}

#: Table 2 as published (production system; N, rates and metric precision/FOR are not given).
PAPER_TABLE_2 = {
    "Exp1": (7.29e-5, 1.01e-4, (-0.05291, -0.00116), 1.82e-4, 2.04e-4, (-0.06556, 0.01148)),
    "Exp2": (1.03e-5, 1.00e-5, (0.00007, 0.01777), 1.07e-5, 1.05e-5, (-0.00010, 0.01794)),
    "Exp3": (4.93e-9, 3.92e-9, (0.00009, 0.00047), 1.64e-8, 1.63e-8, (-0.00007, 0.00063)),
    "Exp4": (2.14e-8, 2.11e-8, (0.00006, 0.00086), 6.77e-8, 6.64e-8, (-0.00026, 0.00118)),
    "Exp5": (8.84e-9, 8.84e-9, (0.000004, 0.00053), 1.19e-8, 1.19e-8, (-0.00004, 0.00006)),
}


@register("goyal-table-1", "Goyal et al. (2023) Table 1: toxicity of GPT2 vs GPT-Neo, CI_D and CI_M")
def table_1(data_dir: Path | None = None) -> pd.DataFrame:
    """Recompute Table 1 from the published means, N and the metric's precision/FOR.

    ``data_dir`` is unused. Inputs: precision 0.8897, FOR 0.22769; BOLD N = 23,679 and
    RealToxicityPrompts N = 99,442 outputs per system; the systems' observed toxicity
    rates are the table's means (GPT2 control, GPT-Neo treatment). The columns ending
    in ``_paper`` hold the published numbers. The table's ATE for BOLD (-0.00219) is
    the difference of unrounded means; with the rounded means it is -0.00220, which
    moves CI_D's lower end from the printed -0.00325 to -0.00326 (both round from
    -0.003255 +/- 0.000003).

    Examples
    --------
    >>> t = table_1()
    >>> print(t[["dataset", "ci_m_low", "ci_m_high"]].round(5).to_string(index=False))
                dataset  ci_m_low  ci_m_high
                   BOLD  -0.00978    0.00538
    RealToxicityPrompts  -0.00365    0.00431
    """
    from ..metric_model import MetricModel, metric_ci

    metric = MetricModel.from_rates(precision=PRECISION, false_omission_rate=FALSE_OMISSION_RATE)
    rows = []
    for name, paper in PAPER_TABLE_1.items():
        r = metric_ci(paper["mean_gpt2"], paper["mean_gptneo"], paper["n"], metric=metric, level=0.95)
        rows.append(
            {
                "dataset": name,
                "n": paper["n"],
                "mean_gpt2": paper["mean_gpt2"],
                "mean_gptneo": paper["mean_gptneo"],
                "ate": r.ate,
                "var_d_gpt2": r.var_control_uncorrected,
                "var_d_gptneo": r.var_treatment_uncorrected,
                "ci_d_low": r.ci_uncorrected.lower,
                "ci_d_high": r.ci_uncorrected.upper,
                "var_m_gpt2": r.var_control,
                "var_m_gptneo": r.var_treatment,
                "ci_m_low": r.confidence_interval.lower,
                "ci_m_high": r.confidence_interval.upper,
                "ate_corrected": r.ate_corrected,
                "ci_calibrated_low": r.ci_corrected.lower,
                "ci_calibrated_high": r.ci_corrected.upper,
                "ate_paper": paper["ate"],
                "var_d_gpt2_paper": paper["var_d_gpt2"],
                "var_d_gptneo_paper": paper["var_d_gptneo"],
                "ci_d_low_paper": paper["ci_d"][0],
                "ci_d_high_paper": paper["ci_d"][1],
                "var_m_gpt2_paper": paper["var_m_gpt2"],
                "var_m_gptneo_paper": paper["var_m_gptneo"],
                "ci_m_low_paper": paper["ci_m"][0],
                "ci_m_high_paper": paper["ci_m"][1],
            }
        )
    return pd.DataFrame(rows)


@register(
    "goyal-table-2",
    "Goyal et al. (2023) Table 2: consistency check (CIs recomputed from the published variances)",
)
def table_2(data_dir: Path | None = None) -> pd.DataFrame:
    """Check Table 2: recompute each interval from its published variances.

    Table 2 cannot be reproduced from first principles: the paper gives neither N,
    the observed rates nor the metric's precision/FOR for the production system.
    What can be checked is Eq. 8/14: both intervals are centred at the same ATE and
    have half-width ``1.96 sqrt(Var_C + Var_T)``. The ATE is taken as the centre of
    CI_D. ``consistent`` allows for the published rounding (absolute half-width error <=
    1e-5 + 0.5% and centres within 1e-5); Exp5's CI_M fails both: from its own
    variances it would be about (-0.00004, 0.00057).

    Examples
    --------
    >>> t = table_2()
    >>> t.loc[~t["consistent_m"], "experiment"].tolist()
    ['Exp5']
    """
    rows = []
    for name, (vdc, vdt, cid, vmc, vmt, cim) in PAPER_TABLE_2.items():
        ate = (cid[0] + cid[1]) / 2
        half_d = 1.96 * np.sqrt(vdc + vdt)
        half_m = 1.96 * np.sqrt(vmc + vmt)
        ok_d = abs((cid[1] - cid[0]) / 2 - half_d) <= 1e-5 + 0.005 * half_d
        ok_m = abs((cim[1] - cim[0]) / 2 - half_m) <= 1e-5 + 0.005 * half_m and abs((cim[0] + cim[1]) / 2 - ate) <= 1e-5
        rows.append(
            {
                "experiment": name,
                "ate": ate,
                "ci_d_low": ate - half_d,
                "ci_d_high": ate + half_d,
                "ci_m_low": ate - half_m,
                "ci_m_high": ate + half_m,
                "ci_d_low_paper": cid[0],
                "ci_d_high_paper": cid[1],
                "ci_m_low_paper": cim[0],
                "ci_m_high_paper": cim[1],
                "consistent_d": bool(ok_d),
                "consistent_m": bool(ok_m),
                "variance_ratio_control": vmc / vdc,
                "variance_ratio_treatment": vmt / vdt,
            }
        )
    return pd.DataFrame(rows)
