"""Hostile requests against the real `kubefit serve` (hypothesis draws them): every endpoint, bodies of JSON values
of every type (and bodies that are no JSON object), query strings of the same. Whatever comes, the answer is
never a server error or a traceback, an error is one line of JSON (`{"error": ...}`), and the session's last
good state survives: the summary is still served afterwards and the pods it counts are the files' own or
those of an edit that was accepted."""

from __future__ import annotations

import json
import urllib.parse

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

WRITES = ["/api/config/validate", "/api/config", "/api/action", "/api/nodes/add", "/api/scale", "/api/add",
          "/api/undo", "/api/compare", "/api/planning", "/api/tune/stop"]
READS = ["/api/summary", "/api/nodes", "/api/node", "/api/names", "/api/pods", "/api/decision", "/api/preset",
         "/api/tune", "/api/report/none"]
KEYS = ["action", "node", "text", "yaml", "config", "template", "count", "position", "replicas", "verb", "preset",
        "configurations", "versions", "kubeVersions", "trials", "objective", "pod", "page", "size", "sort", "labels"]
VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=False), st.text(max_size=40),
    st.sampled_from(["general-1", "gpu-1", "shop/web-3", "cordon", "drain", "remove", "MostAllocated", "1.36",
                     "kind: Node\nmetadata: {name: [", "a" * 5000, "../../etc/passwd",
                     "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: x}]}"]),
    st.lists(st.sampled_from(["general-1", "MostAllocated", 1, None]), max_size=3),
    st.dictionaries(st.sampled_from(KEYS), st.integers(), max_size=2))
BODIES = st.one_of(st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=4).map(lambda d: json.dumps(d).encode()),
                   st.sampled_from([b"", b"{", b"[]", b"null", b"1", b"\xff\xfe", b'{"node": "general-1"}{}']))


def _one_line_error(reply) -> None:
    assert reply.status < 500 and b"Traceback" not in reply.body, (reply.status, reply.body[:300])
    if reply.status >= 400:
        error = reply.json()["error"]
        assert isinstance(error, str) and error and "\n" not in error


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(st.lists(st.one_of(st.tuples(st.just("POST"), st.sampled_from(WRITES), BODIES),
                          st.tuples(st.just("GET"), st.sampled_from(READS),
                                    st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=3))),
                min_size=1, max_size=4))
def test_hostile_requests_get_one_line_errors_and_keep_the_session(served, requests):
    for method, path, payload in requests:
        if method == "POST":
            reply = served.request(path, method="POST", body=payload, headers={"Content-Type": "application/json"})
        else:
            query = urllib.parse.urlencode({k: json.dumps(v) if not isinstance(v, str) else v
                                            for k, v in payload.items()})
            reply = served.request(path + (f"?{query}" if query else ""))
        _one_line_error(reply)
    summary = served.get("/api/summary")
    assert summary["nodes"] >= 1
