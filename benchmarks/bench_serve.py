"""Benchmark `kubefit serve` as a person uses it: the real server (`kubefit serve` in its own process) and the
real page in Debian's chromium (Playwright), on bench_cli.py's 5,000 nodes × 5,000 pending pods (its
seeded generator and MostAllocated + BalancedAllocation configuration, the JSON `kind: List`).

Measured, each from the browser's side (the click or the navigation until the page has drawn the answer):
- start: `kubefit serve` launched until it listens (the files read and simulated once);
- first page: navigation until the cluster, queue and summary are drawn (`body[data-ready]`);
- decision: a pod opened until its decision table (every node's verdict and scores, paged) is drawn, and
  the last pod's decision from the server (its cycle comes after the 4,999 pods before it are bound);
- edits: cordon a node, apply the LeastAllocated preset, undo: the click until the re-simulated state is
  drawn (summary, what moved, the first pages of nodes and pods);
- page turn: the next page of nodes.

    .venv/bin/python benchmarks/bench_serve.py [--nodes 5000 --pods 5000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cli import ROOT, _child_env, scenario_files  # noqa: E402 - the generator of bench_cli.py

TARGET = 2.0  # seconds: the bound for the first page and for an edit


def start_server(files: list[str]) -> tuple[subprocess.Popen, str, float]:
    """`kubefit serve -f FILES --port 0` in its own process; its URL and the seconds until it listened."""
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "kubefit.cli", "serve", "--port", "0",
                             *(a for f in files for a in ("-f", f))], cwd=ROOT, env=_child_env(),
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    found = re.search(r"open (http://\S+)", line)
    if not found:
        proc.kill()
        raise SystemExit(f"kubefit serve did not start: {line}{proc.stderr.read()}")
    return proc, found.group(1), time.perf_counter() - t


def timed(action, done) -> float:
    """Seconds from `action()` until `done()` returns."""
    t = time.perf_counter()
    action()
    done()
    return time.perf_counter() - t


def edit(page, click: str) -> float:
    """Click `click` (a POST) and wait until its answer is drawn (the page is no longer busy)."""
    def act() -> None:
        with page.expect_response(lambda r: r.request.method == "POST"):
            page.click(click)
    return timed(act, lambda: page.wait_for_selector("body:not(.busy)", state="attached"))


def measure(url: str) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("error: needs Debian's chromium (apt-get install chromium)")
    out: dict[str, float] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
        out["first page"] = timed(lambda: page.goto(url), lambda: page.wait_for_selector("body[data-ready=true]"))
        out["next page of nodes"] = timed(lambda: page.click(".pager[data-for=nodes] button >> nth=1"),
                                          lambda: page.wait_for_selector("text=page 2 of"))
        page.click("#tabs button[data-tab=queue]")
        out["open a pod's decision"] = timed(lambda: page.click("#pods tbody tr >> nth=3 >> a"),
                                             lambda: page.wait_for_selector("#decision-nodes"))
        page.click("#detail-close")
        page.click("#tabs button[data-tab=whatif]")
        out["cordon a node"] = edit(page, "[data-action=cordon]")
        page.click("#tabs button[data-tab=config]")
        page.click("[data-preset=LeastAllocated]")
        page.wait_for_selector("#config-message.valid")
        out["apply a configuration"] = edit(page, "#config-apply")
        out["undo"] = edit(page, "#undo")
        browser.close()
    out["decision of the last pod (server only)"] = last_decision(url)
    return out


def last_decision(url: str) -> float:
    """The decision of the queue's last pod (4,999 pods bound before its cycle), fetched as the page does."""
    import json
    import urllib.request

    def get(path: str) -> dict:
        with urllib.request.urlopen(url.rstrip("/") + path, timeout=300) as reply:
            return json.loads(reply.read())
    total = get("/api/pods?size=1")["total"]
    key = get(f"/api/pods?size=1&page={total - 1}")["rows"][0]["key"]
    t = time.perf_counter()
    get(f"/api/decision?pod={key}&size=50")
    return time.perf_counter() - t


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    files = scenario_files(args.nodes, args.pods, "json")
    print(f"kubefit serve on {args.nodes:,} nodes x {args.pods:,} pending pods ({os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f})")
    best: dict[str, float] = {}
    for _ in range(args.repeat):
        proc, url, started = start_server(files)
        try:
            figures = {"start (read, simulate, listen)": started, **measure(url)}
        finally:
            proc.terminate()
            proc.wait(10)
        for name, seconds in figures.items():
            best[name] = min(best.get(name, seconds), seconds)
    for name, seconds in best.items():
        bound = "" if name.startswith(("start", "next")) else (" ok" if seconds < TARGET else " NOT MET")
        print(f"{name:<32} {seconds:6.2f} s{bound}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
