"""Small helpers shared by the notebooks in this folder (imported, never pasted into a notebook).

The notebooks run with this folder as their working directory, so ``from _nbhelpers import ...`` finds
this module. Nothing here is statistics: where the data are, how a figure is shown, how a key number is
printed (the tests parse those lines), and how warnings are made visible.
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

__all__ = ["DATA", "DPI", "Caught", "data_dir", "show", "show_figure"]

ROOT = Path(__file__).resolve().parents[1]
DPI = 80

pd.set_option("display.width", 140)
pd.set_option("display.max_columns", 30)


def data_dir() -> Path:
    """The book's data: ``$MIXEVAL_DATA`` if set, else ``../shared/bookdata`` beside the repository."""
    env = os.environ.get("MIXEVAL_DATA")
    return Path(env) if env else ROOT.parent / "shared" / "bookdata"


DATA = data_dir()


def show_figure(fig, dpi: int = DPI) -> None:
    """Display a matplotlib Figure as a PNG and close it (the Agg backend registers no notebook display)."""
    from IPython.display import Image, display

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    display(Image(buf.getvalue()))


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
