"""Text and HTML rendering of a fit (kept apart from the numbers)."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

import numpy as np

from .._format import format_column, terminal_width, text_table

if TYPE_CHECKING:  # for annotations only: _result imports this module to print itself
    from ._result import LmerResult

__all__ = ["format_summary", "format_varcorr", "format_html"]


def format_varcorr(fit: LmerResult) -> str:
    """Variance components as lme4's ``print(VarCorr(fit), comp = c("Variance", "Std.Dev."))`` (+ percent);
    with random slopes, one row per coefficient and the correlations beside it (lme4's ``Corr`` block)."""
    if fit.has_slopes:
        return _format_varcorr_slopes(fit)
    vc = fit.varcorr
    width = max(6, *(len(g) for g in vc.group))
    variance, std = format_column(vc["variance"]), format_column(vc["std"])
    shares = vc["percent"].to_numpy(dtype=float)
    percent = [f"{p:.2f}%" for p in shares] if np.isfinite(shares).all() else None  # else undefined: left out
    vw, sw = max(8, *map(len, variance)), max(8, *map(len, std))
    lines = [f" {'Groups':<{width}} Name        {'Variance':>{vw}}  {'Std.Dev.':>{sw}}" + ("  Percent" if percent else "")]
    for i, row in enumerate(vc.itertuples(index=False)):
        name = "" if row.group == "Residual" else "(Intercept)"
        lines.append(f" {row.group:<{width}} {name:<11} {variance[i]:>{vw}}  {std[i]:>{sw}}"
                     + (f"  {percent[i]:>7}" if percent else ""))
    return "\n".join(lines)


def _format_varcorr_slopes(fit: LmerResult) -> str:
    """lme4's VarCorr print for terms with several coefficients: Groups, Name, Variance, Std.Dev., Corr."""
    rows = []  # (group, name, variance, std, [correlations with the term's earlier coefficients])
    for label, (g, names) in zip(fit.term_labels, zip(fit.group_names, fit.term_coef_names)):
        cov = fit.covariances[label].to_numpy()
        corr = fit.correlations[label].to_numpy()
        for i, nm in enumerate(names):
            rows.append((g if i == 0 else "", nm, cov[i, i], float(np.sqrt(cov[i, i])), list(corr[i, :i])))
    rows.append(("Residual", "", fit.sigma2, fit.sigma, []))
    gw = max(8, *(len(r[0]) for r in rows))
    nw = max(11, *(len(r[1]) for r in rows))
    lines = [f" {'Groups':<{gw}} {'Name':<{nw}} {'Variance':>12} {'Std.Dev.':>11} Corr"]
    for g, nm, var, sd, corr in rows:
        cells = " ".join("  NaN" if not np.isfinite(c) else f"{c:5.2f}" for c in corr)
        lines.append(f" {g:<{gw}} {nm:<{nw}} {var:>12.6g} {sd:>11.6g} {cells}".rstrip())
    return "\n".join(lines)


def format_summary(fit: LmerResult) -> str:
    """lme4-style ``summary()`` text."""
    kind = "REML" if fit.reml else "maximum likelihood"
    out = [f"Linear mixed model fit by {kind}" if fit.group_names else f"Linear model fit by {kind}"]
    out.append(f"Formula: {fit.formula}")
    crit = "REML criterion at convergence" if fit.reml else "deviance"
    out.append(f"{crit}: {fit.criterion:.1f}   logLik: {fit.loglik:.1f}   AIC: {fit.aic:.1f}   BIC: {fit.bic:.1f}")
    out.append("")
    out.append("Random effects:")
    out.append(format_varcorr(fit))
    groups = ";  ".join(f"{g}, {n}" for g, n in zip(fit.group_names, fit.n_levels))
    out.append(f"Number of obs: {fit.nobs}" + (f", groups:  {groups}" if groups else ""))
    out.append("")
    out.append("Fixed effects:")
    coefs = fit.coefficients
    if len(coefs):
        out.append(text_table(coefs.rename(columns={"estimate": "Estimate", "se": "Std. Error", "t": "t value"}),
                              width=terminal_width()))
    else:
        out.append(" (none)")
    out += fit._rank_note()
    if fit.singular:
        out.append("")
        out.append("boundary (singular) fit: a variance component is estimated as zero")
    if not fit.converged:
        out.append("warning: the optimiser did not converge")
    return "\n".join(out)


def format_html(fit: LmerResult) -> str:
    """Notebook display: header, variance components and fixed effects as HTML tables."""
    kind = "REML" if fit.reml else "ML"
    head = (
        f"<p><b>Linear mixed model ({kind})</b>: <code>{html.escape(fit.formula)}</code><br>"
        f"{fit.nobs} observations; logLik {fit.loglik:.4f}"
        + ("; <b>singular fit</b>" if fit.singular else "")
        + ("; <b>not converged</b>" if not fit.converged else "")
        + (f"; dropped (rank deficient): {html.escape(', '.join(fit.dropped_columns))}" if fit.dropped_columns else "")
        + "</p>"
    )
    vc = fit.varcorr.to_html(index=False, float_format=lambda v: f"{v:.6g}")
    fx = fit.coefficients.to_html(float_format=lambda v: f"{v:.6g}") if len(fit.fixed_names) else ""
    return head + "<p>Random effects</p>" + vc + "<p>Fixed effects</p>" + fx


