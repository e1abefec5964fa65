"""The pieces a report is made of: tables, figures, paragraphs, notes, sections (frozen dataclasses)."""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Literal

import pandas as pd

from ..errors import InputError, InputTypeError

__all__ = ["Table", "Figure", "Paragraph", "Note", "Section", "Block", "figure_to_png"]

_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def figure_to_png(fig: object, *, dpi: int = 110) -> bytes:
    """Render a matplotlib Figure to PNG bytes (tight bounding box, white background).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots(figsize=(2, 2))
    >>> figure_to_png(fig, dpi=50)[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
    True
    >>> plt.close(fig)
    """
    savefig = getattr(fig, "savefig", None)
    if savefig is None:
        raise InputTypeError(f"`fig` must be a matplotlib Figure; got {type(fig).__name__}.")
    buffer = io.BytesIO()
    savefig(buffer, format="png", dpi=dpi, bbox_inches="tight", facecolor="white")
    return buffer.getvalue()


@dataclass(frozen=True, eq=False)
class Table:
    """A DataFrame shown with a caption.

    ``data`` is copied on construction (the report never shares it with the caller);
    ``digits`` is the number of significant digits used for display only;
    ``index=None`` shows the index when it is not a plain 0..n-1 range.

    Examples
    --------
    >>> import pandas as pd
    >>> t = Table(pd.DataFrame({"component": ["item", "Residual"], "variance": [3.0, 1.0]}), "Table 1", digits=3)
    >>> t.caption, t.data.shape
    ('Table 1', (2, 2))
    """

    data: pd.DataFrame
    caption: str
    digits: int = 4
    index: bool | None = None
    max_text_rows: int = 12

    def __post_init__(self) -> None:
        if not isinstance(self.data, pd.DataFrame):
            raise InputTypeError(f"Table `data` must be a pandas DataFrame; got {type(self.data).__name__}.")
        if not isinstance(self.caption, str):
            raise InputTypeError("Table `caption` must be a string.")
        if isinstance(self.digits, bool) or not isinstance(self.digits, int) or not 1 <= self.digits <= 15:
            raise InputError(f"Table `digits` must be an integer in 1..15; got {self.digits!r}.")
        object.__setattr__(self, "data", self.data.copy())


@dataclass(frozen=True, eq=False)
class Figure:
    """A PNG image with a caption (embedded in the HTML as a base64 data URI).

    Build one from a matplotlib figure with :meth:`from_matplotlib`.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots(figsize=(2, 2))
    >>> f = Figure.from_matplotlib(fig, "Figure 1: nothing yet", dpi=50)   # closes fig
    >>> f.caption, f.alt, f.png[:4]
    ('Figure 1: nothing yet', 'Figure 1: nothing yet', b'\\x89PNG')
    """

    png: bytes
    caption: str
    alt: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.png, (bytes, bytearray)) or not bytes(self.png).startswith(_PNG_MAGIC):
            raise InputError("Figure `png` must be the bytes of a PNG image (use Figure.from_matplotlib(fig)).")
        object.__setattr__(self, "png", bytes(self.png))
        if not isinstance(self.caption, str):
            raise InputTypeError("Figure `caption` must be a string.")

    @classmethod
    def from_matplotlib(cls, fig: object, caption: str, *, alt: str = "", dpi: int = 110,
                        close: bool = True) -> Figure:
        """Render ``fig`` to PNG; ``close=True`` closes it afterwards (frees memory in loops)."""
        png = figure_to_png(fig, dpi=dpi)
        if close:
            import matplotlib.pyplot as plt

            plt.close(fig)  # type: ignore[arg-type]
        return cls(png=png, caption=caption, alt=alt or caption)


@dataclass(frozen=True)
class Paragraph:
    """A paragraph of plain text (escaped in HTML).

    Examples
    --------
    >>> Paragraph("Scores are TER: lower is better.").text
    'Scores are TER: lower is better.'
    """

    text: str


@dataclass(frozen=True)
class Note:
    """A highlighted box: ``kind`` is ``"note"`` (information) or ``"warning"`` (e.g. a singular fit).

    Examples
    --------
    >>> Note("The occasion variance is estimated as 0 (singular fit).", "warning").kind
    'warning'
    """

    text: str
    kind: Literal["note", "warning"] = "note"

    def __post_init__(self) -> None:
        if self.kind not in ("note", "warning"):
            raise InputError(f"Note `kind` must be 'note' or 'warning'; got {self.kind!r}.")


Block = Table | Figure | Paragraph | Note


@dataclass(frozen=True, eq=False)
class Section:
    """A titled part of a report.

    ``summary`` holds the few lines that the text summary prints for this section
    (the key numbers in words); ``blocks`` the tables, figures, paragraphs and notes
    shown in HTML (and, tables and notes, in the text summary when ``summary`` is empty
    or ``text_tables=True``).

    Examples
    --------
    >>> import pandas as pd
    >>> s = Section("Variance components", (Table(pd.DataFrame({"variance": [3.0, 1.0]}), "Table 1"),
    ...                                     Note("one note")), summary="item: 75 % of the variance")
    >>> len(s.tables), s.summary
    (1, ('item: 75 % of the variance',))
    """

    title: str
    blocks: tuple[Block, ...] = ()
    summary: tuple[str, ...] = ()
    text_tables: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.title, str) or not self.title.strip():
            raise InputError("Section `title` must be a non-empty string.")
        blocks = tuple(self.blocks)
        for block in blocks:
            if not isinstance(block, (Table, Figure, Paragraph, Note)):
                raise InputTypeError(
                    f"Section {self.title!r}: blocks must be Table, Figure, Paragraph or Note; "
                    f"got {type(block).__name__}."
                )
        summary = (self.summary,) if isinstance(self.summary, str) else tuple(self.summary)
        object.__setattr__(self, "blocks", blocks)
        object.__setattr__(self, "summary", summary)

    @property
    def tables(self) -> tuple[Table, ...]:
        return tuple(b for b in self.blocks if isinstance(b, Table))

    @property
    def figures(self) -> tuple[Figure, ...]:
        return tuple(b for b in self.blocks if isinstance(b, Figure))

