"""Make ``docs/_static/demo_report.png``, the screenshot of the demo's HTML report shown in the docs.

    python3 docs/_ext/report_screenshot.py            # needs Debian's chromium (headless) and Pillow

Runs ``mixeval demo`` in a temporary folder (the report says so in its provenance line), renders the top of
the page in headless Chromium at 1100 x 1500 pixels and stores it at 70% size with a 128-colour palette
(about 60 KB). Not part of the build: rerun it when the report's look changes, and commit the PNG.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1]
TARGET = DOCS / "_static" / "demo_report.png"


def main() -> int:
    from PIL import Image

    browser = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)),
                   None)
    if browser is None:
        print("no chromium found (Debian package `chromium`)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        subprocess.run([sys.executable, "-m", "mixeval", "demo"], cwd=folder, check=True, capture_output=True,
                       env={"PYTHONPATH": str(DOCS.parent), "PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg"})
        shot = folder / "shot.png"
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--user-data-dir={folder / 'profile'}", "--window-size=1100,1500",
                        f"--screenshot={shot}", (folder / "mixeval_demo_report.html").as_uri()],
                       check=True, capture_output=True, timeout=120)
        image = Image.open(shot).convert("RGB")
        image = image.resize((image.width * 7 // 10, image.height * 7 // 10), Image.LANCZOS)
        image.quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(TARGET, optimize=True)
    print(f"{TARGET} ({TARGET.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
