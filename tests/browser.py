"""A real headless browser for the report tests: Debian's Chromium, driven by Playwright (never a downloaded build).

`open_page(browser, path)` loads a report from disk with every network request recorded and refused
(only the file itself may load), the console's errors and the page's uncaught exceptions collected.
Where Chromium or Playwright is missing the tests are skipped with the one reason `BROWSER_ABSENT`;
`.ci/run` installs both and fails when that reason appears.
"""

from __future__ import annotations

import io
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

BROWSER_ABSENT = ("browser absent: the report tests need Debian's chromium (apt-get install chromium) and the "
                  "playwright package (pip install -e '.[test]'); .ci/run installs both and fails if these are skipped")
# As the machine's notes say to start it; Playwright adds --headless and a fresh --user-data-dir of its own.
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium per test module (about 0.8 s to start)."""
    path = chromium_path()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        path = None
    if path is None:
        pytest.skip(BROWSER_ABSENT)
    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=path, args=CHROMIUM_FLAGS, headless=True)
        yield instance
        instance.close()


@dataclass
class Opened:
    """A report open in the browser, and what happened while it loaded."""

    page: Any
    url: str
    errors: list[str] = field(default_factory=list)  # console errors and uncaught exceptions
    requests: list[str] = field(default_factory=list)  # every URL the page asked for, the file itself included
    dialogs: list[str] = field(default_factory=list)  # alert/confirm/prompt the page opened

    def close(self) -> None:
        self.page.context.close()


def open_page(browser, path: Path, *, width: int = 1280) -> Opened:
    """Load `path` as a person would open it from disk; only the file itself may be fetched."""
    context = browser.new_context(viewport={"width": width, "height": 900}, service_workers="block")
    page = context.new_page()
    opened = Opened(page, path.resolve().as_uri())
    page.on("console", lambda m: opened.errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: opened.errors.append(f"uncaught: {e}"))
    page.on("dialog", lambda d: (opened.dialogs.append(d.message), d.dismiss()))

    def route(r) -> None:
        opened.requests.append(r.request.url)
        r.continue_() if r.request.url == opened.url else r.abort()
    context.route("**/*", route)
    page.goto(opened.url, wait_until="load")
    return opened


def screenshot_pixels(element_or_page) -> np.ndarray:
    """A screenshot as an (H, W, 3) array of 0..255 (decoded by matplotlib, a dependency already)."""
    from matplotlib.image import imread

    rgba = imread(io.BytesIO(element_or_page.screenshot(type="png")), format="png")
    return np.round(rgba[..., :3] * 255).astype(np.int16)


def has_colour(pixels: np.ndarray, hex_colour: str, *, tolerance: int = 12, at_least: int = 20) -> bool:
    """Whether at least `at_least` pixels are within `tolerance` of `hex_colour` on every channel."""
    rgb = np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(pixels - rgb) <= tolerance).all(axis=-1).sum()) >= at_least
