"""Small helpers shared by the notebooks in this folder (imported, never pasted into a notebook).

The notebooks run with this folder as their working directory, so ``from _nbhelpers import ...`` finds
this module. Nothing here is statistics: where the data are, how a figure is shown, how a key number is
shown (a table of a section's key numbers, whose plain-text form the tests read), and how warnings are made
visible.
"""

from __future__ import annotations

import io
import os
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # figures are shown as PNG images by show_figure, on any backend-less kernel

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

__all__ = ["DATA", "DPI", "Caught", "KeyNumbers", "data_dir", "in_words", "show", "show_figure"]

ROOT = Path(__file__).resolve().parents[1]
DPI = 200          # print resolution of every figure (savefig); shown on screen at SCREEN_DPI
SCREEN_DPI = 80

pd.set_option("display.width", 140)
pd.set_option("display.max_columns", 30)


def data_dir() -> Path:
    """The book's data: ``$MIXEVAL_DATA`` if set, else ``../shared/bookdata`` beside the repository."""
    env = os.environ.get("MIXEVAL_DATA")
    return Path(env) if env else ROOT.parent / "shared" / "bookdata"


DATA = data_dir()
os.environ.setdefault("MIXEVAL_DATA", str(DATA))  # mixeval.datasets.load finds the book's data here


def in_words(fig, words: dict[str, str]):
    """Put words on a figure drawn with column names: every axis label, tick label and title that *is* a key
    of ``words`` (``"bili"``) gets its words (``"bilirubin (mg/dL)"``), a GAM shape's ``f(key)`` becomes "effect on
    the fit", and keys inside a set ``{...}`` are named in words too. Returns the figure."""
    import re

    def say(text: str) -> str:
        if text in words:
            return words[text]
        m = re.fullmatch(r"f\((.+)\)", text)
        if m and m.group(1) in words:
            return "effect on the fit"  # the x axis names the measurement
        return re.sub(r"\{([^}]*)\}", lambda g: "{" + ", ".join(words.get(x.strip(), x.strip()).split(" (")[0]
                                                          for x in g.group(1).split(",")) + "}", text)

    for ax in fig.axes:
        for text in ax.texts:
            head, sep, tail = text.get_text().partition(":")
            text.set_text(say(head).split(" (")[0] + sep + tail if sep else say(text.get_text()))
        ax.set_xlabel(say(ax.get_xlabel()))
        ax.set_ylabel(say(ax.get_ylabel()))
        ax.set_title(say(ax.get_title()), fontsize=9)
        ticks = [t.get_text() for t in ax.get_yticklabels()]
        if any(say(t) != t for t in ticks):  # categorical axes only (numbers are left alone)
            limits = ax.get_ylim()
            ax.set_yticks(ax.get_yticks(), [say(t) for t in ticks])
            ax.set_ylim(limits)
    if fig._suptitle is not None:
        fig._suptitle.set_text(say(fig._suptitle.get_text()))
    return fig


def show_figure(fig, dpi: int = DPI) -> None:
    """Display a matplotlib Figure as a PNG at print resolution (``DPI``), at its on-screen size, and close it.

    Every notebook shows its figures through this function, so that all are saved at the same resolution."""
    from IPython.display import Image, display

    from PIL import Image as PILImage

    width = int(fig.get_size_inches()[0] * SCREEN_DPI)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    small = io.BytesIO()  # a 64-colour palette keeps a line plot sharp at a fraction of the bytes (committed notebooks)
    PILImage.open(io.BytesIO(buf.getvalue())).convert("RGB").quantize(colors=64).save(small, "PNG", optimize=True)
    display(Image(small.getvalue(), width=width))


class KeyNumbers:
    """A section's key numbers as a table (``quantity``, ``value``, optionally ``reference``).

    A notebook shows the table (or ``table``, an analysis table holding the same numbers); its plain-text
    form is one ``label = value`` line per number at full precision, which the notebook tests read
    (``tests/conftest.py``), so every number shown is checked there.
    """

    def __init__(self, numbers: dict[str, float], reference: dict[str, str] | None = None,
                 *, digits: int = 4, table: pd.DataFrame | None = None) -> None:
        self.numbers = dict(numbers)
        self.reference = dict(reference or {})
        self.digits = digits
        self.table = table

    def frame(self) -> pd.DataFrame:
        out = pd.DataFrame({"quantity": list(self.numbers),
                            "value": [f"{v:.{self.digits}g}" if isinstance(v, float) else v
                                      for v in self.numbers.values()]})
        if self.reference:
            out["reference"] = [self.reference.get(k, "") for k in self.numbers]
        return out

    def _repr_html_(self) -> str:
        if self.table is not None:
            return self.table._repr_html_()
        return self.frame().to_html(index=False)

    def __repr__(self) -> str:
        return "\n".join(f"{label} = {value:.10g}" if isinstance(value, float) else f"{label} = {value}"
                         for label, value in self.numbers.items())


def show(label: str, value: float, digits: int = 6) -> None:
    """Print one key number on its own line, ``<label> = <value>`` (the notebook tests parse these lines)."""
    print(f"{label} = {value:.{digits}g}")


class Caught:
    """Record warnings inside a ``with`` block and print their kinds afterwards (nothing is hidden)."""

    def __enter__(self):
        self._cm = warnings.catch_warnings(record=True)
        self.list = self._cm.__enter__()
        warnings.simplefilter("always")
        return self

    def __exit__(self, *exc):
        self._cm.__exit__(*exc)
        for w in self.list:
            print(f"  [{w.category.__name__}] {str(w.message)[:160]}")
        return False

    def kinds(self) -> list[str]:
        return sorted({w.category.__name__ for w in self.list})
