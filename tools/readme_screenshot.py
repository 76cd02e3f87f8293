"""Regenerate the README's picture of a report: `examples/workload/report.png`.

Writes the `--compare` report of `examples/workload/` with the `kubefit` command, opens it in Debian's
chromium through Playwright (as the browser tests do) and saves the top of the page:

    .venv/bin/python tools/readme_screenshot.py
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "examples" / "workload" / "report.png"
COMMAND = ["simulate", "-f", "examples/workload/cluster.yaml", "--compare", "MostAllocated",
           "RequestedToCapacityRatio"]
WIDTH, HEIGHT = 1100, 1250  # the headline, the metrics side by side and the first per-node bars


def main() -> int:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    if chromium is None:
        print("error: needs Debian's chromium (apt-get install chromium)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        page_path = Path(tmp) / "report.html"
        kubefit = Path(sys.executable).with_name("kubefit")
        subprocess.run([str(kubefit), *COMMAND, "--report", str(page_path)], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            page.goto(page_path.as_uri())
            page.screenshot(path=str(OUT), clip={"x": 0, "y": 0, "width": WIDTH, "height": HEIGHT})
            browser.close()
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
