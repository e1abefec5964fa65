"""Coverage of 95% z intervals in the idealised model behind the few-levels warning of the default df.

A mean's estimated variance is ``V (rho X / k + 1 - rho)`` with ``X ~ chi2_k``: one component estimated from
``k + 1`` levels carries a share ``rho`` of ``V``, the rest is known. The z interval covers
``E_X[2 Phi(1.96 sqrt(rho X / k + 1 - rho)) - 1]``, computed here by quadrature (exact to 1e-8, no
simulation). The table (benchmarks/results/z_coverage_idealised.md) is the basis of the thresholds of
``mixeval.significance._dominance`` (warns below 93.5%: roughly a component with fewer than 10 levels
carrying more than half of the variance).

Run: PYTHONPATH=. python3 benchmarks/z_coverage_idealised.py (the quadrature is the package's,
``mixeval.significance._dominance.idealised_z_coverage``)
"""

from pathlib import Path

from mixeval.significance._dominance import idealised_z_coverage

LEVELS = (2, 3, 4, 5, 6, 8, 10, 15, 20, 30)
SHARES = (0.3, 0.5, 0.7, 0.9, 1.0)


def main() -> None:
    lines = ["| levels | " + " | ".join(f"share {r:.1f}" for r in SHARES) + " |",
             "|--:|" + "--:|" * len(SHARES)]
    for n in LEVELS:
        lines.append(f"| {n} | " + " | ".join(f"{100 * idealised_z_coverage(n, r):.1f}" for r in SHARES) + " |")
    text = "\n".join(lines) + ("\n\nCoverage (%) of nominal 95% z intervals when one variance component estimated "
                               "from `levels` levels carries `share` of the mean's variance (quadrature, exact).\n")
    out = Path(__file__).parent / "results" / "z_coverage_idealised.md"
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
