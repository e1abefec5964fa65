"""Where the documentation build's execution time goes: every executed page's cells, timed one by one.

    python3 benchmarks/docs_execution_times.py [--out benchmarks/results/docs_execution_times.csv]

The pages the build executes are the MyST notebooks of ``docs/`` (front matter ``file_format: mystnb``;
"Coming from R" with its rows rendered as ``conf.py`` renders them). Each is run here as the build runs it:
in a fresh ``python3`` kernel started in a temporary directory, with this checkout first on ``PYTHONPATH``. The
time of a page is its kernel start plus its cells; the CSV has one row per cell (page, cell index, seconds,
first line of the cell) and one row per page with ``cell = -1`` for the kernel start. The chapter notebooks
(``notebooks/*.ipynb``) are not executed by the build (``nb_execution_excludepatterns``), so they are not
timed here.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts and "_generated" not in p.parts
                  and "file_format: mystnb" in p.read_text(encoding="utf-8")[:400])


def _page_text(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    if path.name == "coming_from_r.md":
        sys.path.insert(0, str(DOCS))
        import coming_from_r

        marker = next(line for line in text.splitlines() if line.startswith("<!-- coming-from-r-rows"))
        text = text.replace(marker, coming_from_r.render())
    return text


def time_page(path: Path) -> list[dict]:
    import jupytext
    import nbclient

    nb = jupytext.reads(_page_text(path), fmt="md:myst")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=600, resources={"metadata": {"path": tmp}})
        start = time.perf_counter()
        with client.setup_kernel():
            rows.append({"page": path.relative_to(DOCS).as_posix(), "cell": -1,
                         "seconds": round(time.perf_counter() - start, 3), "first_line": "(kernel start)"})
            for i, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                t0 = time.perf_counter()
                client.execute_cell(cell, i)
                rows.append({"page": path.relative_to(DOCS).as_posix(), "cell": i,
                             "seconds": round(time.perf_counter() - t0, 3),
                             "first_line": cell.source.strip().splitlines()[0][:90] if cell.source.strip() else ""})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "docs_execution_times.csv")
    parser.add_argument("pages", nargs="*", help="page paths relative to docs/ (default: every executed page)")
    args = parser.parse_args(argv)
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    os.environ.setdefault("MPLBACKEND", "Agg")
    selected = [DOCS / p for p in args.pages] or pages()
    rows = []
    for path in selected:
        page_rows = time_page(path)
        rows += page_rows
        print(f"{sum(r['seconds'] for r in page_rows):7.1f} s  {path.relative_to(DOCS)}", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["page", "cell", "seconds", "first_line"])
        writer.writeheader()
        writer.writerows(rows)
    print(f"total {sum(r['seconds'] for r in rows):.1f} s over {len(selected)} pages "
          f"({datetime.now().isoformat(timespec='minutes')}); slowest cells:")
    for r in sorted(rows, key=lambda r: -r["seconds"])[:12]:
        print(f"{r['seconds']:7.1f} s  {r['page']} [{r['cell']}] {r['first_line']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
