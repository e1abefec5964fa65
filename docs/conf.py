"""Sphinx configuration of the mixeval documentation.

Build (from the repository root; offline, warnings are errors)::

    python3 -m pip install -e ".[docs]"
    python3 -m sphinx -W --keep-going -b html docs docs/_build/html

At build time this file (1) writes the API reference from the package's ``__all__`` lists
(``_ext/apigen.py`` -> ``api/``), (2) renders the "Coming from R" table from its records
(``coming_from_r.py`` -> ``_generated/``), and (3) copies the committed, executed notebooks into
``_generated/notebooks`` so that myst-nb renders them with their outputs (nothing is executed).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(DOCS))

import matplotlib  # noqa: E402

matplotlib.use("Agg")

import mixeval  # noqa: E402

import apigen  # noqa: E402
import coming_from_r  # noqa: E402

project = "mixeval"
author = "the mixeval authors"
copyright = "2026, the mixeval authors"
release = mixeval.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",      # MathJax 3 copied into _static: the site loads nothing from the network
    "numpydoc",
    "myst_nb",
]

# ----------------------------------------------------------------------------- generated sources
GENERATED = DOCS / "_generated"
GENERATED.mkdir(exist_ok=True)
apigen.write_api(DOCS / "api")
coming_from_r.write_page(GENERATED / "coming_from_r_table.md")
(GENERATED / "notebooks").mkdir(exist_ok=True)
for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
    target = GENERATED / "notebooks" / nb.name
    if not target.exists() or target.read_bytes() != nb.read_bytes():
        shutil.copyfile(nb, target)

# ----------------------------------------------------------------------------- sources
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "_ext", "**.ipynb_checkpoints", "_generated/*.md"]
master_doc = "index"
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = "off"          # the notebooks are committed executed; the docs never run them
nb_merge_streams = True
suppress_warnings = ["mystnb.unknown_mime_type"]

# ----------------------------------------------------------------------------- API
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True, "inherited-members": False, "show-inheritance": True}
autodoc_typehints = "none"          # numpydoc's Parameters sections carry the types
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

# ----------------------------------------------------------------------------- HTML
html_theme = "pydata_sphinx_theme"
html_title = f"mixeval {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "navbar_align": "left",
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {"**": ["sidebar-nav-bs"],  # pages without sub-pages: no empty "Section Navigation"
                 **{page: [] for page in ("index", "getting_started", "coming_from_r", "which_test",
                                          "changelog", "contributing")}}
html_show_sourcelink = False

# ----------------------------------------------------------------------------- method notes
# Pages other contributors drop into docs/ (e.g. a note on a default and its simulation) are listed on the
# "Method notes" page automatically, so that no page is left outside the table of contents.
SITE_PAGES = {"index", "getting_started", "coming_from_r", "which_test", "notebooks", "changelog", "contributing",
              "method_notes", "spark"}


def method_note_pages() -> list[str]:
    return sorted(p.stem for p in DOCS.glob("*.md") if p.stem not in SITE_PAGES)


def _add_method_notes(app, docname: str, source: list[str]) -> None:
    if docname == "method_notes":
        entries = "\n".join(["spark", *method_note_pages()])
        source[0] += f"\n\n```{{toctree}}\n:maxdepth: 1\n:hidden:\n\n{entries}\n```\n"
        source[0] += "".join(f"\n- [{name.replace('_', ' ')}]({name}.md)" for name in method_note_pages()) + "\n"


def setup(app):
    app.connect("source-read", _add_method_notes)
