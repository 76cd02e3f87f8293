"""Regenerate the README's picture of `kubefit serve`: `examples/workload/serve.png`.

Starts the server on `examples/workload/` (in this process, on a free port), opens the page in Debian's
chromium through Playwright (as the browser tests do), opens one pod's decision and saves the window:

    .venv/bin/python tools/serve_screenshot.py

`tests/serve/test_serve_browser.py` runs `screenshot` too, so the tool keeps working.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "examples" / "workload" / "serve.png"
SCENARIO = ROOT / "examples" / "workload" / "cluster.yaml"
POD = "shop/web-3"  # its decision: two node groups filtered out, the general nodes scored
WIDTH, HEIGHT = 1280, 760


def screenshot(out: Path = OUT, *, browser: Any = None) -> Path:
    """Serve the workload example, open `POD`'s decision and write the window to `out` (a PNG)."""
    from kubefit.serve.server import Server, bind, prepare
    from kubefit.serve.state import Options

    sock = bind("127.0.0.1", 0)
    app, _, session = prepare(Options([str(SCENARIO)]), "127.0.0.1", sock.getsockname()[1])
    server = Server(app, sock).start()
    try:
        if browser is not None:
            _shoot(browser, server.port, out)
        else:
            from playwright.sync_api import sync_playwright

            chromium = shutil.which("chromium") or shutil.which("chromium-browser")
            if chromium is None:
                raise SystemExit("error: needs Debian's chromium (apt-get install chromium)")
            with sync_playwright() as p:
                launched = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
                _shoot(launched, server.port, out)
                launched.close()
    finally:
        server.stop()
        session.close()
    return out


def _shoot(browser: Any, port: int, out: Path) -> None:
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    page = context.new_page()
    page.goto(f"http://127.0.0.1:{port}/")
    page.wait_for_selector("body[data-ready=true]")
    page.click("#tabs button[data-tab=queue]")
    page.click(f"#pods tr[data-pod='{POD}'] a")
    page.wait_for_selector("#decision-nodes")
    page.screenshot(path=str(out))
    context.close()


if __name__ == "__main__":
    written = screenshot()
    print(f"wrote {written.relative_to(ROOT)}", file=sys.stderr)
