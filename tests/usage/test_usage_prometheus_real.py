"""`--prometheus` against a real Prometheus (Debian's `prometheus` package): the test writes usage as OpenMetrics,
turns it into TSDB blocks with `promtool tsdb create-blocks-from openmetrics`, starts `prometheus` on 127.0.0.1
with a free port on those blocks, and kubefit asks it.

Skipped with "prometheus absent" when the binaries are not installed; `.ci/run` installs them and fails when the
suite still skipped for that reason (as for the browser tests).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

import kubefit
from kubefit.errors import InputError
from kubefit.manifests.usage.requestsfrom import PrometheusQuery, RequestsFrom

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rightsize" / "cluster.yaml"
WEB = ("web-6d8f5c7b9-x2k9p", "web-6d8f5c7b9-7fq4m", "web-6d8f5c7b9-c8n2v", "web-6d8f5c7b9-m4t7w")
OLD_WEB = "web-5f4d8c6b7-k2x9p"  # a pod of an earlier rollout: gone from the scenario, still in Prometheus
GHOST = "ghost-7c9d8f6b5-zzzzz"  # a pod of no workload of the scenario
MI = 1 << 20
STEP = 60  # seconds between samples
SPAN = 150 * 60  # 2.5 hours of samples, ending 10 minutes ago

pytestmark = pytest.mark.skipif(not (shutil.which("prometheus") and shutil.which("promtool")),
                                reason="prometheus absent: Debian's prometheus package (prometheus, promtool) is "
                                       "not installed")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _openmetrics(now: float) -> str:
    """Every web pod's container `web`: cpu counter rising at 0.25 cores (so every rate is 0.25), memory 300Mi
    but 400Mi for one sample of web-...-c8n2v (the max); the old pod 200Mi; the ghost pod 1Gi."""
    start = int(now) - 600 - SPAN
    lines = []
    pods = (*WEB, OLD_WEB, GHOST)
    for pod in pods:
        ns = "elsewhere" if pod == GHOST else "default"
        labels = f'namespace="{ns}",pod="{pod}",container="web"'
        for i in range(SPAN // STEP + 1):
            t = start + i * STEP
            lines.append(f"container_cpu_usage_seconds_total{{{labels}}} {0.25 * i * STEP} {t}")
    for pod in pods:
        ns = "elsewhere" if pod == GHOST else "default"
        labels = f'namespace="{ns}",pod="{pod}",container="web"'
        for i in range(SPAN // STEP + 1):
            t = start + i * STEP
            mem = 300 * MI
            if pod == WEB[2] and i == 40:
                mem = 400 * MI
            if pod == OLD_WEB:
                mem = 200 * MI
            if pod == GHOST:
                mem = 1024 * MI
            lines.append(f"container_memory_working_set_bytes{{{labels}}} {mem} {t}")
    return "\n".join(lines) + "\n# EOF\n"


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory):
    """A Prometheus serving the blocks the test wrote, on 127.0.0.1 (stopped at the end)."""
    root = tmp_path_factory.mktemp("prometheus")
    now = time.time()
    (root / "usage.om").write_text(_openmetrics(now))
    data = root / "data"
    subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", str(root / "usage.om"), str(data)],
                   check=True, capture_output=True, timeout=120)
    (root / "prometheus.yml").write_text("global:\n  scrape_interval: 1h\n")
    port = _free_port()
    proc = subprocess.Popen(["prometheus", f"--config.file={root / 'prometheus.yml'}", f"--storage.tsdb.path={data}",
                             f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=30d"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                with urllib.request.urlopen(f"{url}/-/ready", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("prometheus did not become ready in 20 s")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _usage(url: str, **more) -> RequestsFrom:
    return RequestsFrom("usage", prometheus=PrometheusQuery(url, since="3h", step="1m", **more))


def test_rightsize_from_a_real_prometheus(prometheus):
    """Hand-derived: every rate is 0.25 cores, so p95 = 0.25 → 250m; the memory max is 400Mi = 419430400 B, + 15%
    = 482344960 → up to the megabyte: 483000000 B. The old pod's usage counts for web (attributed by its name);
    the ghost pod's is named in a warning and ignored."""
    told: list[str] = []
    result = kubefit.rightsize([str(EXAMPLE)], _usage(prometheus), warn=told.append, consolidate=False)
    [web] = [c for c in result.changes if c["name"] == "web"]
    [container] = web["containers"]
    assert container["requests"]["after"] == {"cpu": "250m", "memory": "483000000"}
    assert result.to_dict()["usage"]["formats"] == ["prometheus"]
    assert any("elsewhere/ghost-7c9d8f6b5-zzzzz" in t and "ignored" in t for t in told)
    assert any("attributed to their workload by the pod's name" in t for t in told)
    [risk] = [r for r in result.risk if r["container"] == "web"]
    assert risk["memory"]["usage"]["max"] == 400 * MI
    assert risk["cpu"]["overRequestAfter"] == 0.0  # no rate above 250m


def test_cli_prometheus_answers_json(prometheus):
    run = subprocess.run([sys.executable, "-m", "kubefit.cli", "rightsize", "-f", str(EXAMPLE), "--requests-from",
                          "usage", "--prometheus", prometheus, "--since", "3h", "--step", "1m", "--no-consolidate",
                          "-o", "json"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    import json

    data = json.loads(run.stdout)
    assert data["inputs"]["options"]["prometheus"] == {"url": prometheus, "since": "3h", "step": "1m"}


def test_huge_answer_refused_with_the_limit(prometheus):
    with pytest.raises(InputError, match="answers more than --max-samples 10 samples"):
        kubefit.rightsize([str(EXAMPLE)], _usage(prometheus, max_samples=10), warn=lambda _: None)


def test_error_answer_of_a_real_prometheus(prometheus):
    """A path that is no API: Prometheus answers 404."""
    with pytest.raises(InputError, match="Prometheus answered HTTP 404"):
        kubefit.rightsize([str(EXAMPLE)], _usage(f"{prometheus}/nothing/here"), warn=lambda _: None)


def test_unreachable_said():
    port = _free_port()  # nothing listens there
    with pytest.raises(InputError, match=f"cannot reach Prometheus at http://127.0.0.1:{port}"):
        kubefit.rightsize([str(EXAMPLE)], _usage(f"http://127.0.0.1:{port}"), warn=lambda _: None)


def test_bounds_said_before_asking():
    with pytest.raises(InputError, match="11,000 points per timeseries") as exc:
        kubefit.rightsize([str(EXAMPLE)], RequestsFrom("usage", prometheus=PrometheusQuery(
            "http://127.0.0.1:1", since="30d", step="1m")), warn=lambda _: None)
    assert exc.value.field == "--step"
