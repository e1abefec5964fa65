"""Check the built documentation site: internal links, offline assets, API completeness, and in headless
Chromium that images render and that search returns results.

    python3 docs/check_site.py docs/_build/html [--query lmer] [--no-browser]

1. Every ``href`` / ``src`` of every page that points inside the site resolves to a file, and every
   ``#fragment`` to an ``id`` on the target page. No page loads a script, style sheet or image from the
   network (the site works offline).
2. Every public name of the package (``docs/_ext/apigen.py``: each module's ``__all__``) is in the site's
   object inventory (``objects.inv``), i.e. has a reference entry, and the API index (``api/index.html`` with
   its page of building blocks) links each documented name exactly once.
3. Getting Started, each guide and "Coming from R" show outputs: every code cell on them has an output
   (set-up cells tagged ``setup`` excepted), and "Coming from R" shows R's output for its examples.
   No page shows a build path (``/work/``, ``/root/``) or a warning as Python prints it by default
   (``file.py:123: SomeWarning: ...``), every Markdown table rendered, and the API index's summaries are
   whole first sentences (none cut at "Eq." or "Def."; no constant described by its type).
4. The site is served on localhost and a check page, opened in headless Chromium, loads each page that has
   images in a frame and records every image's decoded size, then loads ``search.html?q=<query>`` and
   counts the results Sphinx's search script writes. ``--dump-dom`` returns the check page's DOM with the
   JSON written into it.

Exit status 0 if everything passes; the problems are printed otherwise.
"""

from __future__ import annotations

import argparse
import functools
import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

DOCS = Path(__file__).resolve().parent


# ------------------------------------------------------------------------------------------ static checks
class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[tuple[str, str]] = []  # (tag.attr, url)
        self.images = 0
        self.math = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for key in ("id", "name") if tag == "a" else ("id",):
            if a.get(key):
                self.ids.add(a[key])
        for attr in ("href", "src"):
            if a.get(attr) is not None:
                self.links.append((f"{tag}.{attr}", a[attr]))
        self.images += tag == "img"
        self.math += "math" in (a.get("class") or "").split()


@functools.lru_cache(maxsize=None)
def parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8", errors="replace"))
    return page


def static_problems(site: Path) -> tuple[list[str], list[Path], list[Path]]:
    """Broken internal links and fragments, and network assets; also the pages with images and with math."""
    problems: list[str] = []
    with_images, with_math = [], []
    for page_path in sorted(site.rglob("*.html")):
        if "_static" in page_path.relative_to(site).parts:
            continue  # theme assets (template fragments), not pages
        page = parse(page_path)
        if page.images:
            with_images.append(page_path)
        if page.math:
            with_math.append(page_path)
        rel = page_path.relative_to(site)
        for where, url in page.links:
            parts = urlsplit(url)
            if parts.scheme in ("http", "https") or url.startswith("//"):
                if where in ("script.src", "link.href", "img.src"):
                    problems.append(f"{rel}: {where} loads {url} from the network")
                continue
            if parts.scheme or url.startswith("#") and not parts.fragment:
                continue  # mailto:, data:, javascript:, bare "#"
            target = page_path if not parts.path else (page_path.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                problems.append(f"{rel}: {where} {url} -> missing {target}")
                continue
            if parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in parse(target).ids:
                problems.append(f"{rel}: {where} {url} -> no id {parts.fragment!r} in {target.relative_to(site)}")
    return problems, with_images, with_math


def inventory_problems(site: Path) -> list[str]:
    """Public names without an entry in ``objects.inv``."""
    from sphinx.util.inventory import InventoryFile

    sys.path[:0] = [str(DOCS.parent), str(DOCS / "_ext")]  # the package of this checkout
    import apigen

    with open(site / "objects.inv", "rb") as f:
        inventory = InventoryFile.load(f, "", lambda base, uri: uri)
    documented = {name for kind, entries in inventory.items() if kind.startswith("py:") for name in entries}
    entries = apigen.reference_entries()
    missing = sorted(f"{public} (documented as {target})" for public, target in entries.items()
                     if target not in documented)
    return [f"no reference entry for {m}" for m in missing]


def api_index_problems(site: Path) -> list[str]:
    """The API index by task and the building-blocks page must link every documented name exactly once."""
    sys.path[:0] = [str(DOCS.parent), str(DOCS / "_ext")]
    import apigen

    listed: list[str] = []
    for page in ("index.html", "internals.html"):
        text = (site / "api" / page).read_text(encoding="utf-8")
        # the first cell of each autosummary row links the entry's page: generated/<qualified name>.html
        listed += re.findall(r'<tr class="row-(?:odd|even)"><td><p><a class="reference internal" '
                             r'href="generated/([^"#]+)\.html', text)
    problems = [f"api index: {name} listed {listed.count(name)} times" for name in sorted(set(listed))
                if listed.count(name) > 1]
    problems += [f"api index: {name} not listed" for name in apigen.documented_names() if name not in listed]
    problems += [f"api grouping: {p}" for p in apigen.grouping_problems()]
    return problems


#: pages whose examples must show their output (the guides are added from docs/guides/)
OUTPUT_PAGES = ("index", "getting_started", "coming_from_r")
_CELL = re.compile(r'<div class="cell(?P<classes>(?: [^"]*)?)"')  # a code cell, not its cell_input/cell_output


def pages_with_outputs() -> list[str]:
    guides = sorted(f"guides/{p.stem}" for p in (DOCS / "guides").glob("*.md") if p.stem != "index")
    return [*OUTPUT_PAGES, *guides]


def output_problems(site: Path, pages: list[str] | None = None) -> list[str]:
    """Pages whose examples show no output: no executed code cell, or a cell without output."""
    problems = []
    for page in pages if pages is not None else pages_with_outputs():
        path = site / f"{page}.html"
        if not path.exists():
            problems.append(f"{page}.html: missing")
            continue
        text = path.read_text(encoding="utf-8")
        starts = list(_CELL.finditer(text))
        if not starts:
            problems.append(f"{page}.html: no executed example (no code cell with output)")
        for i, match in enumerate(starts):
            end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
            if "cell_output" not in text[match.start():end] and "tag_setup" not in match.group("classes"):
                problems.append(f"{page}.html: code cell {i + 1} shows no output")
        if page == "coming_from_r" and text.count('class="highlight-text') < 10:
            problems.append(f"{page}.html: R's output is not shown beside the examples")
    return problems


#: text no page may show: a file path of the machine that built the site, a warning as Python prints it by default
BUILD_PATHS = ("/work/", "/root/")
RAW_WARNING = re.compile(r"\.py:\d+: \w*(?:Warning|Error)\b")
#: summaries of the API index that are a constant's type, not the constant ("Built-in immutable sequence.")
TYPE_SUMMARIES = ("Built-in immutable sequence", "dict() -> new empty dictionary", "str(object=",
                  "Built-in mutable sequence", "int([x]) -> integer", "Initialize self.")
CUT_SUMMARY = re.compile(r"\b(?:Eq|Def|Alg|Sec|Fig|Tab|cf)\.$")


def _visible_text(markup: str) -> str:
    markup = re.sub(r"<(script|style)\b.*?</\1>", " ", markup, flags=re.S | re.I)
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def text_problems(site: Path) -> list[str]:
    """What a reader must not see: build paths, raw warnings (``file.py:123: SomeWarning``), Markdown tables
    broken by a ``|`` in a code span (a paragraph of pipes, a code span cut open), and in the API index
    summaries cut at an abbreviation ("book Eq.") or a constant described by its type."""
    problems = []
    for page_path in sorted(site.rglob("*.html")):
        rel = page_path.relative_to(site)
        if rel.parts[0] in ("_static", "_sources", "_modules"):
            continue
        markup = page_path.read_text(encoding="utf-8", errors="replace")
        text = _visible_text(markup)
        for path in BUILD_PATHS:
            if path in text:
                at = text.index(path)
                problems.append(f"{rel}: shows the build path {text[max(0, at - 30):at + 50]!r}")
        for match in RAW_WARNING.finditer(text):
            problems.append(f"{rel}: shows a raw warning {text[max(0, match.start() - 40):match.end() + 40]!r}")
        if rel.parts[0] != "api":
            if re.search(r"<p>\s*\|[^<]*\|", markup):
                problems.append(f"{rel}: a Markdown table did not render (a paragraph of '|' cells)")
            for code in re.findall(r"<code[^>]*>(.*?)</code>", markup, flags=re.S):
                code = _visible_text(code)
                if code.count("(") != code.count(")") and re.match(r"^\(?\d|^\(", code.strip()):
                    problems.append(f"{rel}: a code span is cut open ({code.strip()!r}; a '|' in a table row?)")
    index = site / "api" / "index.html"
    if index.exists():
        for row in re.findall(r'<tr class="row-(?:odd|even)">(.*?)</tr>', index.read_text(encoding="utf-8"),
                              flags=re.S):
            cells = re.findall(r"<td>(.*?)</td>", row, flags=re.S)
            summary = " ".join(_visible_text(cells[-1]).split()) if len(cells) > 1 else ""
            if CUT_SUMMARY.search(summary):
                problems.append(f"api/index.html: a summary is cut at an abbreviation: {summary[-60:]!r}")
            if summary.startswith(TYPE_SUMMARIES):
                problems.append(f"api/index.html: a constant is described by its type: {summary[:60]!r}")
    return problems


# ------------------------------------------------------------------------------------------ browser check
CHECK_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>site check</title></head><body>
<pre id="check">pending</pre><iframe id="frame" style="width:1200px;height:900px"></iframe>
<script>
var PAGES = %(pages)s, QUERY = %(query)s, out = {pages: {}, search: null};
var frame = document.getElementById("frame");
function load(url, then) { frame.onload = function () { then(frame.contentDocument); }; frame.src = url; }
function waitImages(doc, then, tries) {
  var imgs = Array.prototype.slice.call(doc.images);
  if (tries > 0 && imgs.some(function (im) { return !im.complete; })) {
    return setTimeout(function () { waitImages(doc, then, tries - 1); }, 100);
  }
  then(imgs.map(function (im) { return [im.getAttribute("src"), im.naturalWidth, im.naturalHeight]; }));
}
function waitMath(doc, then, tries) {
  var wanted = doc.querySelectorAll(".math").length, done = doc.querySelectorAll("mjx-container").length;
  if (tries > 0 && done < wanted) { return setTimeout(function () { waitMath(doc, then, tries - 1); }, 100); }
  then([wanted, done]);
}
function nextPage(i) {
  if (i >= PAGES.length) { return search(); }
  load(PAGES[i], function (doc) {
    waitImages(doc, function (imgs) {
      waitMath(doc, function (math) { out.pages[PAGES[i]] = {images: imgs, math: math}; nextPage(i + 1); }, 100);
    }, 100);
  });
}
function search() {
  load("search.html?q=" + encodeURIComponent(QUERY), function (doc) {
    var tries = 0;
    (function poll() {
      var items = doc.querySelectorAll("#search-results li, ul.search li");
      var status = (doc.querySelector(".search-summary") || doc.querySelector("#search-results") || {}).textContent || "";
      var done = /found|did not match/i.test(status);
      if (!done && tries++ < 300) { return setTimeout(poll, 100); }
      out.search = {query: QUERY, results: items.length,
                    first: Array.prototype.slice.call(items, 0, 5).map(function (li) { return li.textContent.trim().slice(0, 80); }),
                    status: status.trim().slice(0, 200)};
      document.getElementById("check").textContent = JSON.stringify(out);
    })();
  });
}
nextPage(0);
</script></body></html>"""


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def browser_check(site: Path, pages: list[str], query: str, browser: str) -> dict:
    """Serve ``site`` on localhost; open the check page in headless Chromium; return its JSON."""
    check_html = CHECK_PAGE % {"pages": json.dumps(pages), "query": json.dumps(query)}

    class Handler(SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(site), **kwargs)

        def do_GET(self):  # noqa: N802 - http.server's name
            if self.path.startswith("/__check__.html"):
                body = check_html.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            super().do_GET()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/__check__.html"
        with tempfile.TemporaryDirectory() as profile:
            command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                       "--disable-background-networking", "--disable-component-update", "--disable-sync",
                       f"--user-data-dir={profile}", "--virtual-time-budget=60000", "--dump-dom", url]
            result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    finally:
        server.shutdown()
    match = re.search(r'<pre id="check">(.*?)</pre>', result.stdout, flags=re.S)
    if not match or match.group(1) == "pending":
        raise RuntimeError(f"the check page did not finish (exit {result.returncode}): {result.stderr[-1500:]}")
    return json.loads(html.unescape(match.group(1)))


def browser_problems(report: dict, query: str, with_images: set[str]) -> list[str]:
    problems = []
    for page, found in report["pages"].items():
        images, (wanted, typeset) = found["images"], found["math"]
        if page in with_images and not images:
            problems.append(f"{page}: no image found in the browser")
        if typeset < wanted:
            problems.append(f"{page}: MathJax typeset {typeset} of {wanted} formulas")
        for src, width, height in images:
            if not (width > 0 and height > 0):
                problems.append(f"{page}: image {src} did not render ({width}x{height})")
    search = report["search"] or {}
    if not search.get("results"):
        problems.append(f"search for {query!r} returned no results: {search.get('status')!r}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, nargs="?", default=DOCS / "_build" / "html")
    parser.add_argument("--query", default="lmer", help="search query that must find pages (default: lmer)")
    parser.add_argument("--no-browser", action="store_true", help="only the static and inventory checks")
    args = parser.parse_args(argv)
    site = args.site.resolve()
    problems, with_images, with_math = static_problems(site)
    problems += inventory_problems(site)
    problems += api_index_problems(site)
    problems += output_problems(site)
    problems += text_problems(site)
    image_pages = {str(p.relative_to(site)) for p in with_images}
    pages = sorted(image_pages | {str(p.relative_to(site)) for p in with_math[:3]})  # math: a sample
    print(f"{len(list(site.rglob('*.html')))} pages, {len(with_images)} with images; static checks: "
          f"{len(problems)} problem(s)")
    if not args.no_browser:
        browser = chromium()
        if browser is None:
            problems.append("no chromium found (Debian package `chromium`); use --no-browser to skip")
        else:
            report = browser_check(site, pages, args.query, browser)
            n_images = sum(len(v["images"]) for v in report["pages"].values())
            n_math = sum(v["math"][1] for v in report["pages"].values())
            print(f"browser: {len(report['pages'])} pages, {n_images} images decoded, {n_math} formulas typeset; "
                  f"search {args.query!r}: "
                  f"{report['search']['results']} results ({report['search']['first'][:3]})")
            problems += browser_problems(report, args.query, image_pages)
    for p in problems:
        print("PROBLEM", p)
    print("site check:", "OK" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
