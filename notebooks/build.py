"""Build the notebooks from their sources: ``<name>.py`` (jupytext percent format) -> executed ``<name>.ipynb``.

The ``.py`` files are the source of truth (reviewable, lintable); the ``.ipynb`` files are generated from
them and committed *with* their outputs so that a reader sees the tables and figures. Run from the
repository root::

    python3 notebooks/build.py                    # regenerate and execute every notebook
    python3 notebooks/build.py ch3_reliability    # only the named ones
    python3 notebooks/build.py --check            # committed .ipynb == its .py source? (no execution)

A notebook needs nothing but mixeval (``pip install mixeval``): it reads the book's data with
``mixeval.datasets.load``, which looks in ``$MIXEVAL_DATA`` (here: ``--data``, default ``../shared/bookdata``
beside the repository) and the cache. The tests (``tests/test_notebook_*.py`` and the per-package notebook
tests) use the functions below: they execute each source, read the numbers they check from the notebook's own
variables (:func:`execute_probed`: code run in the same kernel after the last cell), check that the committed
outputs show what a fresh run shows (:func:`output_differences`), and that each committed notebook matches its
source.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
KERNEL = {"name": "python3", "display_name": "Python 3", "language": "python"}
LINE = re.compile(r"^(\S.*?) = (\S.*)$")


def sources() -> list[Path]:
    """The notebook sources: ``*.py`` files in this folder with a jupytext header."""
    return sorted(p for p in HERE.glob("*.py") if "jupytext:" in p.read_text(encoding="utf-8")[:400])


def source_path(name: str) -> Path:
    path = HERE / f"{Path(name).stem}.py"
    if path not in sources():
        known = ", ".join(p.stem for p in sources())
        raise SystemExit(f"no notebook source {path.name}; known: {known}")
    return path


def from_source(path: Path):
    """The notebook of a percent-format source, without outputs, with stable cell ids."""
    import jupytext

    nb = jupytext.read(path, fmt="py:percent")
    for i, cell in enumerate(nb.cells):  # stable ids: regenerating gives the same file
        cell["id"] = f"{path.stem}-{i:02d}"
        cell.metadata.pop("lines_to_next_cell", None)
    nb.metadata = {"jupytext": {"formats": "ipynb,py:percent"}, "kernelspec": dict(KERNEL),
                   "language_info": {"name": "python"}}
    return nb


@contextmanager
def _environment(data: Path | None):
    saved = {k: os.environ.get(k) for k in ("MIXEVAL_DATA", "MPLBACKEND", "PYTHONPATH")}
    if data is not None:
        os.environ["MIXEVAL_DATA"] = str(data)  # the kernel inherits the environment
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"  # figures shown as a reader's Jupyter does
    # the kernel imports the package of this checkout (not another one an editable install points to)
    os.environ["PYTHONPATH"] = os.pathsep.join([str(HERE.parent), *filter(None, [saved["PYTHONPATH"]])])
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def execute(nb, *, data: Path | None = None, timeout: int = 1200):
    """Run every cell in a fresh ``python3`` kernel with this folder as working directory (in place)."""
    import nbclient

    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=timeout, record_timing=False,
                                     resources={"metadata": {"path": str(HERE)}})
    with _environment(data):
        client.execute()
    nb.metadata["kernelspec"] = dict(KERNEL)
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def execute_probed(nb, probe: str, *, data: Path | None = None, timeout: int = 1200):
    """Execute ``nb`` and then ``probe`` in the same kernel (the notebook's variables in scope); returns the
    executed notebook, without the probe, and the text the probe printed."""
    import nbformat

    nb.cells.append(nbformat.v4.new_code_cell(probe))
    execute(nb, data=data, timeout=timeout)
    probe_cell = nb.cells.pop()
    return nb, text_output(nbformat.v4.new_notebook(cells=[probe_cell]))


_NUMBER = re.compile(r"-?\d+\.\d+(?:[eE][+-]?\d+)?|-?\d+[eE][+-]?\d+")


def _shown_text(cell) -> str:
    """What a code cell shows as text (stdout and text/plain; not stderr), its numbers to 3 significant digits,
    whitespace collapsed and report dates left out: the part of the output that a rerun must reproduce."""
    texts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream" and out.get("name") == "stdout":
            texts.append(out["text"])
        elif "data" in out and "image/png" not in out["data"]:
            plain = out["data"].get("text/plain", "")
            if plain.startswith("<pandas.io.formats.style.Styler") and "text/html" in out["data"]:
                plain = re.sub(r"<style.*?</style>|<[^>]+>", " ", out["data"]["text/html"], flags=re.S)  # its table
            texts.append(plain)
    text = "\n".join(line for line in "".join(texts).splitlines() if "date:" not in line)
    text = re.sub(r" at 0x[0-9a-f]+", "", text)  # an object's address (a Styler's text form)
    return " ".join(_NUMBER.sub(lambda m: f"{float(m.group(0)):.3g}", text).split())


def output_differences(committed_nb, fresh_nb) -> list[str]:
    """Code cells whose shown text or number of figures differ between two runs of one notebook."""
    out = []
    pairs = zip([c for c in committed_nb.cells if c.cell_type == "code"],
                [c for c in fresh_nb.cells if c.cell_type == "code"])
    for i, (a, b) in enumerate(pairs, start=1):
        images = [sum("image/png" in o.get("data", {}) for o in c.get("outputs", [])) for c in (a, b)]
        if images[0] != images[1]:
            out.append(f"code cell {i}: {images[0]} figure(s), a fresh run shows {images[1]}")
        x, y = _shown_text(a), _shown_text(b)
        if x != y:
            at = next((k for k, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
            out.append(f"code cell {i}: shows {x[max(0, at - 40):at + 40]!r}, a fresh run {y[max(0, at - 40):at + 40]!r}")
    return out


def committed(name: str):
    """The committed ``<name>.ipynb``."""
    import nbformat

    return nbformat.read(HERE / f"{Path(name).stem}.ipynb", as_version=4)


def differences(built, source) -> list[str]:
    """Cells where a committed notebook differs from its source (type or text); empty if none."""
    out = []
    a = [(c.cell_type, c.source) for c in built.cells]
    b = [(c.cell_type, c.source) for c in source.cells]
    if len(a) != len(b):
        out.append(f"{len(a)} cells, the source has {len(b)}")
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            out.append(f"cell {i} ({y[0]}) differs: {y[1][:60]!r}...")
    return out


def text_output(nb) -> str:
    """Everything a notebook printed or displayed as text (streams and text/plain), in order."""
    texts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                texts.append(out["text"])
            elif "data" in out:
                texts.append(out["data"].get("text/plain", ""))
    return "\n".join(texts)


def image_count(nb) -> int:
    return sum("image/png" in out.get("data", {}) for cell in nb.cells for out in cell.get("outputs", []))


def errors(nb) -> list[str]:
    return [f"{o.get('ename')}: {o.get('evalue')}" for c in nb.cells for o in c.get("outputs", [])
            if o.get("output_type") == "error"]


def printed_values(text: str) -> dict[str, str]:
    """The ``label = value`` lines (first occurrence of each label)."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        m = LINE.match(line)
        if m and m.group(1) not in values:
            values[m.group(1)] = m.group(2)
    return values


def build(name: str, *, data: Path | None = None) -> Path:
    """Regenerate ``<name>.ipynb`` from ``<name>.py`` and execute it; returns the written path."""
    import nbformat

    path = source_path(name)
    nb = execute(from_source(path), data=data)
    out = path.with_suffix(".ipynb")
    nbformat.validate(nb)
    nbformat.write(nb, out)
    return out


def check(names: list[str]) -> list[str]:
    """Problems of the committed notebooks: missing, differing from the source, or not executed."""
    problems = []
    for path in [source_path(n) for n in names] or sources():
        if not path.with_suffix(".ipynb").exists():
            problems.append(f"{path.stem}.ipynb is missing")
            continue
        nb = committed(path.stem)
        problems += [f"{path.stem}: {d}" for d in differences(nb, from_source(path))]
        if any(c.cell_type == "code" and c.get("execution_count") is None for c in nb.cells):
            problems.append(f"{path.stem}.ipynb has unexecuted cells")
        problems += [f"{path.stem}.ipynb: error output {e}" for e in errors(nb)]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="notebook names (default: all)")
    parser.add_argument("--check", action="store_true", help="only check the committed notebooks against the sources")
    parser.add_argument("--data", type=Path, help="book data directory (default: $MIXEVAL_DATA or ../shared/bookdata)")
    args = parser.parse_args(argv)
    if args.check:
        problems = check(args.names)
        print("\n".join(problems) or "notebooks match their sources")
        return 1 if problems else 0
    data = args.data or Path(os.environ.get("MIXEVAL_DATA") or HERE.parent.parent / "shared" / "bookdata")
    for path in [source_path(n) for n in args.names] or sources():
        print(f"building {path.stem}.ipynb ...", flush=True)
        build(path.stem, data=data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
