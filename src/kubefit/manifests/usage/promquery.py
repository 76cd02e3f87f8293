"""`--prometheus URL`: the usage asked of a Prometheus directly (read-only GETs of its HTTP API).

Two range queries (`/api/v1/query_range`, prometheus/web/api/v1 `queryRange`), per container of every pod:

- cpu: `sum by (namespace, pod, container) (rate(container_cpu_usage_seconds_total{container!="",
  container!="POD"}[W]))`, W the step but at least 5 minutes (a rate needs two scrapes; KRR's `CPULoader` rates
  over its step likewise);
- memory: `max by (namespace, pod, container) (container_memory_working_set_bytes{container!="",
  container!="POD"})`.

Bounded before anything is asked: `--since` at most 90 days, `--step` at least 1 s, and no more than 11,000
points per series (Prometheus' own limit, `exceeded maximum resolution of 11,000 points per timeseries`, said
before asking). An answer larger than `--max-samples` samples (counted from its bytes as they arrive: a sample
takes at least 16) is refused with the limit, never cut; a Prometheus that cannot be reached, answers an HTTP
error or no answer within the timeout is one line naming the URL.
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request

from kubefit.errors import InputError
from kubefit.manifests.usage.model import CPU, MEMORY, UsageData
from kubefit.manifests.usage.prometheus import decode_response

MAX_SINCE = 90 * 86400.0
MAX_POINTS = 11_000  # Prometheus refuses more points per series (web/api/v1/api.go)
MIN_SAMPLE_BYTES = 16  # `[1700000000,"0"]` and a comma
FILTER = '{container!="",container!="POD"}'
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "y": 365 * 86400}
_DURATION = re.compile(r"(\d+)(ms|s|m|h|d|w|y)")


def parse_duration(text: str, option: str) -> float:
    """A Prometheus duration (`5m`, `1h30m`, `7d`) in seconds; anything else refused naming the option."""
    text = text.strip()
    parts = _DURATION.findall(text)
    if not text or "".join(n + u for n, u in parts) != text:
        raise InputError(f"must be a duration such as 5m, 1h30m or 7d, got {text!r}", field=option)
    return float(sum(int(n) * _UNITS[u] for n, u in parts))


def queries(step: float) -> dict[str, str]:
    """The PromQL asked for each resource."""
    window = f"{max(int(step), 300)}s"
    return {CPU: f"sum by (namespace, pod, container) (rate(container_cpu_usage_seconds_total{FILTER}[{window}]))",
            MEMORY: f"max by (namespace, pod, container) (container_memory_working_set_bytes{FILTER})"}


def check(q) -> tuple[float, float]:  # noqa: ANN001 - requestsfrom.PrometheusQuery (imports this module)
    """The query's bounds, refused before anything is read or asked: (since, step) in seconds."""
    since = parse_duration(q.since, "--since")
    step = parse_duration(q.step, "--step")
    if since <= 0 or since > MAX_SINCE:
        raise InputError(f"must be more than 0 and at most 90d, got {q.since!r}", field="--since")
    if step < 1:
        raise InputError(f"must be at least 1s, got {q.step!r}", field="--step")
    points = int(since // step) + 1
    if points > MAX_POINTS:
        raise InputError(f"{q.since} every {q.step} is {points} points per series; Prometheus answers at most "
                         f"{MAX_POINTS} (exceeded maximum resolution of 11,000 points per timeseries): a larger "
                         f"--step", field="--step")
    if not q.url.startswith(("http://", "https://")):
        raise InputError(f"must be an http:// or https:// URL, got {q.url!r}", field="--prometheus")
    return since, step


def query_prometheus(q) -> UsageData:  # noqa: ANN001 - requestsfrom.PrometheusQuery (imports this module)
    """Both range queries (see the module's docstring), decoded and merged."""
    since, step = check(q)
    base = q.url.rstrip("/")
    end = q.end if q.end is not None else time.time()
    out = UsageData()
    for resource, promql in queries(step).items():
        params = {"query": promql, "start": f"{end - since:.3f}", "end": f"{end:.3f}", "step": f"{step:g}"}
        url = f"{base}/api/v1/query_range?{urllib.parse.urlencode(params)}"
        body = _get(url, base, q.max_samples, q.timeout)
        data = decode_response(body, f"{base} ({resource})", measures=resource)
        if data.samples > q.max_samples:
            raise _too_many(base, q.max_samples)
        out.add(data)
    out.formats = ["prometheus"]
    out.sources = [base]
    return out


def _get(url: str, base: str, max_samples: int, timeout: float) -> bytes:
    """The answer's bytes, at most what `max_samples` samples can take (refused beyond)."""
    limit = max_samples * MIN_SAMPLE_BYTES + (1 << 20)
    request = urllib.request.Request(url, headers={"Accept": "application/json", "User-Agent": "kubefit"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - the user's URL
            body = response.read(limit + 1)
    except urllib.error.HTTPError as exc:
        raise InputError(f"Prometheus answered HTTP {exc.code} {exc.reason}{_error_detail(exc)}",
                         field="--prometheus") from None
    except urllib.error.URLError as exc:
        raise InputError(f"cannot reach Prometheus at {base}: {exc.reason}", field="--prometheus") from None
    except TimeoutError:
        raise InputError(f"Prometheus at {base} gave no answer within {timeout:g} s", field="--prometheus") from None
    except OSError as exc:
        raise InputError(f"cannot reach Prometheus at {base}: {exc}", field="--prometheus") from None
    if len(body) > limit:
        raise _too_many(base, max_samples)
    return body


def _too_many(base: str, max_samples: int) -> InputError:
    return InputError(f"Prometheus at {base} answers more than --max-samples {max_samples} samples: a shorter "
                      f"--since, a larger --step or a higher --max-samples", field="--prometheus")


def _error_detail(exc: urllib.error.HTTPError) -> str:
    """`: errorType: error` from an error answer's JSON body, if it has one."""
    try:
        body = json.loads(exc.read(65536) or b"{}")
    except (ValueError, OSError):
        return ""
    if isinstance(body, dict) and body.get("error"):
        return f": {body.get('errorType') or 'error'}: {body['error']}"
    return ""
