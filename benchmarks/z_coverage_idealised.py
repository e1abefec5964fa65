"""Coverage of 95% z intervals in the idealised model behind the few-levels warning of the default df.

A mean's estimated variance is ``V (rho X / k + 1 - rho)`` with ``X ~ chi2_k``: one component estimated from
``k + 1`` levels carries a share ``rho`` of ``V``, the rest is known. The z interval covers
``E_X[2 Phi(1.96 sqrt(rho X / k + 1 - rho)) - 1]``, computed here by quadrature (exact to 1e-8, no
simulation). The table (benchmarks/results/z_coverage_idealised.md) is the basis of the thresholds of
``mixeval.significance._dominance`` (fewer than 10 levels, share above 50%).

Run: python3 benchmarks/z_coverage_idealised.py
"""

from pathlib import Path

import numpy as np
from scipy import integrate, stats

LEVELS = (2, 3, 4, 5, 6, 8, 10, 15, 20, 30)
SHARES = (0.3, 0.5, 0.7, 0.9, 1.0)
Z = stats.norm.ppf(0.975)


def coverage(k: int, rho: float) -> float:
    def f(x: float) -> float:
        return (2 * stats.norm.cdf(Z * np.sqrt(rho * x / k + 1 - rho)) - 1) * stats.chi2.pdf(x, k)

    lo, hi = stats.chi2.ppf([1e-12, 1 - 1e-12], k)
    return float(integrate.quad(f, lo, hi, points=[max(k - 2.0, lo)], epsabs=1e-11, limit=200)[0])


def main() -> None:
    lines = ["| levels | " + " | ".join(f"share {r:.1f}" for r in SHARES) + " |",
             "|--:|" + "--:|" * len(SHARES)]
    for n in LEVELS:
        lines.append(f"| {n} | " + " | ".join(f"{100 * coverage(n - 1, r):.1f}" for r in SHARES) + " |")
    text = "\n".join(lines) + ("\n\nCoverage (%) of nominal 95% z intervals when one variance component estimated "
                               "from `levels` levels carries `share` of the mean's variance (quadrature, exact).\n")
    out = Path(__file__).parent / "results" / "z_coverage_idealised.md"
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
