"""The HTML report opens in a real browser: headless Chromium decodes every image and finds the tables.

A small inline script, added to the page by this test only (reports carry no scripts), writes
each image's ``naturalWidth``/``naturalHeight`` and the number of tables and captions into
``<div id="check">`` once the page has loaded; ``--dump-dom`` gives the DOM after scripts ran.
A screenshot must be a real, non-blank PNG.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.image  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from mixeval import plots  # noqa: E402
from mixeval.report import Figure, Note, Report, Section, Table  # noqa: E402

CHECK_SCRIPT = """<div id="check">pending</div><script>
window.addEventListener("load", function () {
  var imgs = Array.prototype.slice.call(document.images);
  document.getElementById("check").textContent = JSON.stringify({
    images: imgs.map(function (im) { return [im.naturalWidth, im.naturalHeight, im.complete]; }),
    tables: document.querySelectorAll("table").length,
    captions: Array.prototype.map.call(document.querySelectorAll("table caption"),
                                       function (c) { return c.textContent; }),
    cells: document.querySelectorAll("td").length,
    title: document.title
  });
});
</script>"""


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("CI"):
        pytest.fail("chromium is not installed; .ci/run installs it (apt-get install chromium)")
    pytest.skip("chromium not installed (Debian package `chromium`); the browser test runs in CI")


def _run(browser: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [
        browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={profile}", "--virtual-time-budget=3000", *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=90, check=False)


def _png_pixels(path: Path) -> tuple[int, int, np.ndarray]:
    """Width, height and 0-255 RGB pixels of a PNG (decoded by matplotlib, i.e. Pillow)."""
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = matplotlib.image.imread(path)
    pixels = np.rint(image[:, :, :3] * 255).astype(np.int32)
    return image.shape[1], image.shape[0], pixels


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> tuple[Path, Report]:
    rng = np.random.default_rng(7)
    data = pd.DataFrame({"system": np.repeat(["Baseline", "Marking", "PostEdit"], 40),
                         "ter": rng.normal(0.4, 0.1, 120)})
    means = data.groupby("system", as_index=False)["ter"].agg(mean="mean", sd="std")
    vc = pd.DataFrame({"component": ["sentence_id", "Residual"], "variance": [0.09046723, 0.01968357]})
    report = Report(
        "Browser check",
        (
            Section("Scores", (Table(means, "Table 1: mean TER per system"),
                               Figure.from_matplotlib(plots.plot_system_boxplots(data, "ter", "system"),
                                                      "Figure 1: TER per system"))),
            Section("Variance", (Table(vc, "Table 2: variance components"),
                                 Figure.from_matplotlib(plots.plot_variance_components(vc), "Figure 2: percent"),
                                 Note("a warning box", "warning"))),
        ),
    )
    html = report.to_html()
    assert "<script" not in html
    path = tmp_path_factory.mktemp("browser") / "report.html"
    path.write_text(html.replace("</body>", CHECK_SCRIPT + "</body>"), encoding="utf-8")
    return path, report


def _check(browser: str, profile: Path, path: Path) -> tuple[dict, list[str]]:
    """The check script's JSON and the page's console messages (errors, exceptions)."""
    result = _run(browser, profile, "--enable-logging=stderr", "--v=0", "--dump-dom", path.as_uri())
    assert result.returncode == 0, result.stderr[-2000:]
    match = re.search(r'<div id="check">(.*?)</div>', result.stdout, flags=re.S)
    assert match, result.stdout[-2000:]
    raw = match.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    assert raw != "pending", "the load handler never ran"
    console = [line for line in result.stderr.splitlines() if ":CONSOLE" in line]
    return json.loads(raw), console


def test_check_harness_detects_a_broken_image(tmp_path):
    """Negative control: a corrupt PNG gives naturalWidth 0 and a script error shows on the console."""
    browser = _chromium()
    path = tmp_path / "broken.html"
    path.write_text('<!DOCTYPE html><html><head><title>b</title></head><body>'
                    '<img src="data:image/png;base64,iVBORw0KGgoAAAAA"><table><tr><td>1</td></tr></table>'
                    '<script>undefined_function();</script>' + CHECK_SCRIPT + "</body></html>", encoding="utf-8")
    check, console = _check(browser, tmp_path / "profile", path)
    assert check["images"] == [[0, 0, True]] and check["tables"] == 1
    assert any("undefined_function" in line for line in console), console


def test_images_decode_and_tables_render_in_chromium(page, tmp_path):
    browser = _chromium()
    path, report = page
    check, console = _check(browser, tmp_path / "profile", path)
    assert console == []  # no errors, warnings or messages from the page
    expected_sizes = []
    for section in report.sections:
        for figure in section.figures:
            expected_sizes.append(list(struct.unpack(">II", figure.png[16:24])))
    assert len(check["images"]) == 2
    for (width, height, complete), size in zip(check["images"], expected_sizes):
        assert complete and width > 0 and height > 0
        assert [width, height] == size  # the browser decoded exactly the embedded PNG
    assert check["tables"] == 2
    assert check["captions"] == ["Table 1: mean TER per system", "Table 2: variance components"]
    assert check["cells"] == 3 * 3 + 2 * 2
    assert check["title"] == "Browser check"


def test_screenshot_is_not_blank(page, tmp_path):
    browser = _chromium()
    path, _ = page
    shot = tmp_path / "shot.png"
    result = _run(browser, tmp_path / "profile", "--window-size=1000,1400", f"--screenshot={shot}", path.as_uri())
    assert result.returncode == 0 and shot.is_file(), result.stderr[-2000:]
    png = shot.read_bytes()
    assert len(png) > 20_000
    width, height, pixels = _png_pixels(shot)
    assert (width, height) == (1000, 1400)
    # a rendered report: mostly white page, dark text, and coloured figure/box pixels
    white = (pixels > 245).all(axis=2).mean()
    dark = (pixels < 80).all(axis=2).mean()
    spread = pixels.max(axis=2) - pixels.min(axis=2)
    coloured = (spread > 40).mean()
    assert 0.4 < white < 0.995, white
    assert dark > 0.002, dark
    assert coloured > 0.005, coloured
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 50
