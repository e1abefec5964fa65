"""The Report: a frozen collection of sections that renders to HTML (page or notebook) and text."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import MappingProxyType

from ..errors import InputError, InputTypeError
from ._blocks import Note, Section
from ._html import fragment_html, page_html
from ._text import report_text

__all__ = ["Report", "provenance"]


def provenance() -> dict[str, str]:
    """The facts every report states about how it was made: the mixeval version and the date (now).

    Examples
    --------
    >>> sorted(provenance())
    ['date', 'mixeval']
    """
    from .. import __version__

    return {"mixeval": __version__, "date": datetime.now().astimezone().strftime("%Y-%m-%d %H:%M UTC%z")}


@dataclass(frozen=True, eq=False)
class Report:
    """An evaluation report: a title, optional metadata and an ordered tuple of sections.

    Parameters
    ----------
    title : str
        Page title and heading.
    sections : tuple of Section
        The parts of the report, in order.
    meta : mapping of str to str, optional
        Short facts shown under the title (data file, rows, formula, the command or call that made it, ...).
        The report's provenance is added unless given: ``mixeval`` (the version that made it) and ``date``
        (when it was made, local time with its UTC offset).

    Notes
    -----
    :meth:`to_html` gives one self-contained page (inline CSS, figures as base64 PNG data
    URIs, no scripts and no external requests), :meth:`to_text` a concise summary for the
    terminal, ``_repr_html_`` the same content for Jupyter.

    Examples
    --------
    >>> import pandas as pd
    >>> from mixeval.report import Report, Section, Table, Note
    >>> vc = pd.DataFrame({"component": ["item", "residual"], "variance": [0.0905, 0.0197]})
    >>> rep = Report("Demo", (Section("Variance components", (Table(vc, "Table 1"),
    ...                                                    Note("one note")),
    ...                               summary=("items explain 82% of the variance",)),))
    >>> print(rep.to_text().splitlines()[4])
    Variance components
    >>> sorted(rep.meta)
    ['date', 'mixeval']
    >>> rep.to_html().startswith("<!DOCTYPE html>")
    True
    """

    title: str
    sections: tuple[Section, ...] = ()
    meta: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.title, str) or not self.title.strip():
            raise InputError("Report `title` must be a non-empty string.")
        sections = (self.sections,) if isinstance(self.sections, Section) else tuple(self.sections)
        for section in sections:
            if not isinstance(section, Section):
                raise InputTypeError(f"Report `sections` must hold Section objects; got {type(section).__name__}.")
        if not isinstance(self.meta, Mapping):
            raise InputTypeError(f"Report `meta` must be a mapping of str to str; got {type(self.meta).__name__}.")
        object.__setattr__(self, "sections", sections)
        meta = {str(k): str(v) for k, v in self.meta.items()}
        meta.update({k: v for k, v in provenance().items() if k not in meta})
        object.__setattr__(self, "meta", MappingProxyType(meta))

    def extended(self, *sections: Section) -> Report:
        """A new Report with ``sections`` appended (the report itself is frozen)."""
        return Report(self.title, self.sections + tuple(sections), dict(self.meta))

    def with_facts(self, facts: Mapping[str, str]) -> Report:
        """A new Report whose metadata also states ``facts`` (a given key replaces the report's own), e.g. the
        command and the data file a command line adds to a report made by a library function.

        Examples
        --------
        >>> Report("Demo").with_facts({"data": "votes.csv", "rows": "3,000"}).meta["rows"]
        '3,000'
        """
        meta = dict(self.meta)
        meta.update({str(k): str(v) for k, v in facts.items()})
        return Report(self.title, self.sections, meta)

    def with_warnings(self, texts: Iterable[str]) -> Report:
        """A new Report that opens with a "Warnings" section holding each of ``texts`` that no note of the report
        states yet (the warnings raised while its data were fitted, e.g. collected by
        :func:`mixeval.errors.recorded_warnings`); the report itself when there is none.

        Examples
        --------
        >>> rep = Report("Demo").with_warnings(["boundary (singular) fit: a variance is estimated as 0."])
        >>> rep.sections[0].title, rep.sections[0].blocks[0].kind
        ('Warnings', 'warning')
        """
        stated = {block.text for section in self.sections for block in section.blocks if isinstance(block, Note)}
        new = [text for text in dict.fromkeys(texts) if text not in stated]
        if not new:
            return self
        notes = Section("Warnings", tuple(Note(text, "warning") for text in new))
        return Report(self.title, (notes,) + self.sections, dict(self.meta))

    def section(self, title: str) -> Section:
        """The section called ``title`` (the error lists the titles)."""
        for section in self.sections:
            if section.title == title:
                return section
        titles = ", ".join(repr(s.title) for s in self.sections) or "none"
        raise KeyError(f"no section {title!r} in the report; sections: {titles}.")

    def to_html(self) -> str:
        """The report as one self-contained HTML5 page."""
        return page_html(self.title, self.sections, self.meta)

    def to_text(self, width: int = 88) -> str:
        """A concise plain-text summary (section summaries, notes and small tables)."""
        return report_text(self.title, self.sections, self.meta, width=width)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the report to ``path``: HTML, or the text summary if the name ends in ``.txt``.

        The parent directory must exist; the file is overwritten. Returns the path written.
        """
        if not isinstance(path, (str, os.PathLike)):
            raise InputTypeError(f"`path` must be a file path; got {type(path).__name__}.")
        target = Path(path)
        if not target.parent.is_dir():
            raise FileNotFoundError(f"cannot write {str(target)!r}: the folder {str(target.parent)!r} does not exist.")
        content = self.to_text() if target.suffix.lower() == ".txt" else self.to_html()
        target.write_text(content, encoding="utf-8")
        return target

    def _repr_html_(self) -> str:
        return fragment_html(self.title, self.sections, self.meta)

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        n_tables = sum(len(s.tables) for s in self.sections)
        n_figures = sum(len(s.figures) for s in self.sections)
        return (f"Report({self.title!r}: {len(self.sections)} section(s), {n_tables} table(s), "
                f"{n_figures} figure(s))")
