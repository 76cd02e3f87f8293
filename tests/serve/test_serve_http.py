"""`kubefit serve` over HTTP, against the real server: every endpoint answers what the verbs answer, bad
input is kubefit's one-line message and leaves the state as it was, and the token, CSRF, origin, Host,
body-limit and CSP rules hold."""

from __future__ import annotations

import json
import textwrap

import pytest
import yaml
from serve_support import ROOT, SCALED, WORKLOAD, batched

import kubefit
from kubefit.serve.security import CSP, REPORT_CSP, Guard

QUIET = {"warn": lambda _: None}
POD = textwrap.dedent("""\
    apiVersion: v1
    kind: Pod
    metadata: {name: extra, namespace: default}
    spec:
      containers: [{name: c, image: nginx, resources: {requests: {cpu: 500m, memory: 256Mi}}}]
    """)


def placements(data: dict) -> dict[str, str | None]:
    """ns/name → node of a `simulate -o json` dict (the last step of a pod: where it ended)."""
    return {f"{s.get('namespace', 'default')}/{s['pod']}": s["node"] for s in data["steps"]}


def page_placements(served) -> dict[str, str | None]:
    rows = served.get("/api/pods?size=500")["rows"]
    return {r["key"]: r["node"] for r in rows}


@pytest.fixture
def scaled(serve_files, tmp_path):
    path = tmp_path / "scaled.yaml"
    path.write_text(SCALED)
    return serve_files([str(path)])


def test_summary_nodes_and_queue_are_the_simulation(served):
    expected = kubefit.simulate([WORKLOAD], **QUIET).to_dict()
    summary = served.get("/api/summary")
    assert (summary["scheduled"], summary["unschedulable"]) == (expected["scheduled"], expected["unschedulable"])
    assert summary["metrics"] == expected["metrics"]
    assert page_placements(served) == placements(expected)
    nodes = served.get("/api/nodes?size=3&sort=cpu&order=desc")
    assert nodes["total"] == 7 and len(nodes["rows"]) == 3 and nodes["pages"] == 3
    fractions = [r["resources"]["cpu"][0] / r["resources"]["cpu"][1] for r in nodes["rows"]]
    assert fractions == sorted(fractions, reverse=True)
    first = nodes["rows"][0]
    assert first["resources"]["cpu"] == [expected["final"][first["name"]]["requested"]["cpu"],
                                        expected["allocatable"][first["name"]]["cpu"]]
    assert served.get("/api/names") == list(expected["final"])
    highmem = served.get("/api/nodes?selector=pool%3Dhighmem")
    assert {r["name"] for r in highmem["rows"]} == {"highmem-1", "highmem-2"}
    pending = served.get("/api/pods?status=pending")
    assert [r["key"] for r in pending["rows"]] == [k for k, n in placements(expected).items() if n is None]
    node = served.get("/api/node?name=highmem-1")
    assert {p["key"] for p in node["pods"] if p["placed"]} == {k for k, n in placements(expected).items()
                                                               if n == "highmem-1"}


@pytest.mark.parametrize("pod", ["shop/cache-0", "shop/web-3"])
def test_decision_is_kubefit_score_at_its_turn(served, pod):
    """The decision is `kubefit score --at-turn`; for the first pod in the queue that is plain `kubefit score`,
    and the pod's node in the simulation is among the best there."""
    expected = kubefit.score([WORKLOAD], pod, detail=True, explain=True, at_turn=True, **QUIET)
    if pod == "shop/cache-0":
        plain = kubefit.score([WORKLOAD], pod, detail=True, explain=True, **QUIET)
        assert {k: v for k, v in plain.items() if k != "inputs"} == {k: v for k, v in expected.items() if k != "inputs"}
    got = served.get(f"/api/decision?pod={pod}&size=500")
    assert got["step"]["node"] in got["best"]
    assert got["nodes"]["total"] == len(expected["filter"])
    for row in got["nodes"]["rows"]:
        name = row["node"]
        assert (row["code"], row["reasons"]) == (expected["filter"][name]["code"], expected["filter"][name]["reasons"])
        assert row["total"] == expected["total"].get(name)
        for plugin, values in expected["score"].items():
            if name in values:
                cell = row["scores"][plugin]
                assert (cell["score"], cell["raw"], cell["weight"]) == (
                    values[name], expected["scoreRaw"][plugin][name], expected["weights"][plugin])
        assert row["explain"] == expected["explain"].get(name)
    assert got["best"] == expected["best"]


def test_config_validation_and_apply(served):
    bad = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: ''\n"
    verdict = served.post("/api/config/validate", bad).json()
    assert verdict["valid"] is False and "profiles[0].schedulerName: Required value" in verdict["message"]
    broken = served.post("/api/config/validate", "kind: [unclosed").json()
    assert broken["valid"] is False and "Traceback" not in broken["message"]
    before = served.get("/api/summary")
    refused = served.post("/api/config", bad)
    assert refused.status == 400 and "schedulerName" in refused.json()["error"]
    assert served.get("/api/summary") == before  # the last good state stays
    preset = served.get("/api/preset?name=MostAllocated")["text"]
    assert served.post("/api/config/validate", preset).json() == {"valid": True, "message": "valid", "notes": []}
    applied = served.post("/api/config", preset)
    assert applied.status == 200 and applied.json()["configSource"] == "edited"
    expected = kubefit.compare([WORKLOAD], ["MostAllocated"], **QUIET)[1]
    assert page_placements(served) == {s.pod.key: None if s.node is None else expected.state.node_names[s.node]
                                       for s in expected.steps}


def test_cordon_moves_pods_and_undo_restores(served):
    start = served.get("/api/summary")
    before = page_placements(served)
    reply = served.post("/api/action", {"action": "cordon", "node": "highmem-2"})
    assert reply.status == 200
    change = reply.json()["change"]
    expected = placements(kubefit.simulate([WORKLOAD], cordon=["highmem-2"], **QUIET).to_dict())
    assert page_placements(served) == expected
    assert {m["pod"] for m in change["moved"]} == {k for k, n in expected.items() if before[k] and n and before[k] != n}
    assert any(m["from"] == "highmem-2" for m in change["moved"])  # and the random tie-breaks after it differ
    assert served.get("/api/nodes?selector=pool%3Dhighmem")["rows"][1]["action"] == "cordon"
    undone = served.post("/api/undo").json()
    assert page_placements(served) == before
    assert {k: v for k, v in undone.items() if k != "change"} == {k: v for k, v in start.items() if k != "change"}
    assert served.post("/api/undo").status == 400  # nothing left to undo


def test_drain_remove_and_uncordon(served):
    drained = served.post("/api/action", {"action": "drain", "node": "general-1"}).json()
    assert drained["actions"]["drain"] == ["general-1"] and drained["nodeActions"]
    removed = served.post("/api/action", {"action": "remove", "node": "general-2"}).json()
    assert removed["nodes"] == 6
    assert "general-2" not in {r["name"] for r in served.get("/api/nodes?size=50")["rows"]}
    expected = kubefit.simulate([WORKLOAD], drain=["general-1"], remove=["general-2"], **QUIET).to_dict()
    assert removed["scheduled"] == expected["scheduled"]
    back = served.post("/api/action", {"action": "unremove", "node": "general-2"}).json()
    assert back["actions"]["remove"] == [] and back["nodes"] == 7


def test_scale_add_pod_and_add_nodes(scaled):
    summary = scaled.get("/api/summary")
    assert summary["workloads"] == [{"position": 2, "kind": "Deployment", "name": "default/web", "replicas": 2}]
    grown = scaled.post("/api/scale", {"position": 2, "replicas": 9}).json()
    assert grown["pods"] == 9 and grown["unschedulable"] == 1  # 8 cpus for 9 pods of 1 cpu
    added = scaled.post("/api/add", POD).json()
    assert added["pods"] == 10 and "default/extra" in page_placements(scaled)
    more = scaled.post("/api/nodes/add", {"template": "n1", "count": 2}).json()
    assert more["nodes"] == 4 and more["unschedulable"] == 0
    names = {r["name"]: r["labels"] for r in scaled.get("/api/nodes")["rows"]}
    assert names["n1-1"] == {"kubernetes.io/hostname": "n1-1", "pool": "a"}
    assert len(more["history"]) == 4
    exported = scaled.request("/api/export/scenario.yaml")
    assert exported.status == 200 and "attachment" in exported.headers["content-disposition"]
    docs = [d for d in yaml.safe_load_all(exported.body) if d]
    assert [d["kind"] for d in docs].count("Node") == 4 and docs[2]["spec"]["replicas"] == 9


def test_export_round_trips(served, tmp_path):
    served.post("/api/config", served.get("/api/preset?name=MostAllocated")["text"])
    served.post("/api/action", {"action": "cordon", "node": "highmem-2"})
    text = served.request("/api/export/scenario.yaml").body.decode()
    assert "--cordon highmem-2" in text
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    again = kubefit.simulate([str(path)], cordon=["highmem-2"], **QUIET).to_dict()
    assert placements(again) == page_placements(served)
    report = served.request("/api/export/report.html")
    assert report.status == 200 and report.headers["content-security-policy"] == REPORT_CSP
    assert b"<html" in report.body.lower()


def test_compare_configurations_and_versions(served):
    got = served.post("/api/compare", {"configurations": ["MostAllocated"]}).json()
    runs = kubefit.compare([WORKLOAD], ["MostAllocated"], **QUIET)
    where = [{s.pod.key: None if s.node is None else r.state.node_names[s.node] for s in r.steps} for r in runs]
    differ = [k for k in where[0] if where[0][k] != where[1].get(k)]
    assert [d["pod"] for d in got["differences"]] == differ and got["differenceCount"] == len(differ)
    assert [c["name"] for c in got["configurations"]] == ["scenario", "MostAllocated"]
    assert served.request(got["report"]).status == 200
    versions = served.post("/api/compare", {"versions": ["1.34", "1.37"]}).json()
    assert [c["name"] for c in versions["configurations"]][0].startswith("1.34")
    bad = served.post("/api/compare", {"versions": ["1.34"]})
    assert bad.status == 400 and "at least two different versions" in bad.json()["error"]
    pasted = served.post("/api/compare", {"configurations": ["kind: KubeSchedulerConfiguration\nprofiles: 3\n"]})
    assert pasted.status == 400 and "error" in pasted.json()
    two = served.post("/api/compare", {"configurations": ["MostAllocated", served.get(
        "/api/preset?name=RequestedToCapacityRatio")["text"]]}).json()
    runs = kubefit.compare([WORKLOAD], ["MostAllocated", str(ROOT / "src/kubefit/serve/assets/presets/"
                                                              "RequestedToCapacityRatio.yaml")], **QUIET)
    assert [c["name"] for c in two["configurations"]] == ["scenario", "MostAllocated", "pasted YAML 2"]
    assert [c["scheduled"] for c in two["configurations"]] == [r.scheduled for r in runs]


def test_planning_pages(served):
    capacity = served.post("/api/planning", {"verb": "capacity", "pod": "report-0"}).json()
    expected = kubefit.capacity([WORKLOAD], "report-0", **QUIET).to_dict()
    assert capacity["headline"]["count"] == expected["count"]
    report = served.request(capacity["report"])
    assert report.status == 200 and report.headers["content-security-policy"] == REPORT_CSP
    plan = served.post("/api/planning", {"verb": "plan", "template": "highmem-1"})
    assert plan.status == 200, plan.body
    consolidate = served.post("/api/planning", {"verb": "consolidate"})
    assert consolidate.status == 200, consolidate.body
    assert served.post("/api/planning", {"verb": "tune"}).status == 400
    refused = served.post("/api/planning", {"verb": "rightsize", "requestsFrom": "vpa"})  # the workload has no VPA
    assert refused.status == 400 and "needs VerticalPodAutoscaler objects" in refused.json()["error"]
    assert served.post("/api/planning", {"verb": "plan", "template": "nope"}).status == 400


BAD_REQUESTS = [  # (method, path, body) → 400 with a one-line message
    ("GET", "/api/decision?pod=shop/nope", None),
    ("GET", "/api/decision", None),
    ("GET", "/api/node?name=nope", None),
    ("GET", "/api/nodes?selector=a%3D%3D%3Db%2C%21", None),
    ("GET", "/api/nodes?page=x", None),
    ("GET", "/api/pods?size=y", None),
    ("GET", "/api/preset?name=Fastest", None),
    ("POST", "/api/config", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"),
    ("POST", "/api/config", "{{{"),
    ("POST", "/api/action", {"action": "cordon", "node": "nope"}),
    ("POST", "/api/action", {"action": "explode", "node": "gpu-1"}),
    ("POST", "/api/action", b"not json"),
    ("POST", "/api/action", b"[1, 2]"),
    ("POST", "/api/nodes/add", {"template": "nope", "count": 1}),
    ("POST", "/api/nodes/add", {"template": "gpu-1", "count": 0}),
    ("POST", "/api/nodes/add", {"template": "gpu-1", "count": "two"}),
    ("POST", "/api/scale", {"position": 0, "replicas": 3}),
    ("POST", "/api/scale", {"position": "a", "replicas": 3}),
    ("POST", "/api/add", "kind: Pod\nmetadata: {name: [oops\n"),
    ("POST", "/api/add", "# nothing\n"),
    ("POST", "/api/add", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"),
    ("POST", "/api/add", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: 5}\n"),
    ("POST", "/api/add", b"\xff\xfe"),
    ("POST", "/api/undo", {}),
    ("POST", "/api/refresh", {}),
    ("POST", "/api/compare", {"versions": "1.34"}),
    ("POST", "/api/compare", {"configurations": []}),
    ("POST", "/api/compare", {"configurations": ["A", "B", "C"]}),
    ("POST", "/api/compare", {"configurations": "MostAllocated"}),
    ("POST", "/api/planning", {}),
]


@pytest.mark.parametrize(("method", "path", "body"), BAD_REQUESTS, ids=[f"{m} {p} {i}" for i, (m, p, _) in
                                                                         enumerate(BAD_REQUESTS)])
def test_bad_input_is_one_line_and_changes_nothing(served, method, path, body):
    before = served.get("/api/summary")
    reply = served.request(path, method=method, body=body)
    assert reply.status == 400, reply.body
    message = reply.json()["error"]
    assert message and "\n" not in message and "Traceback" not in message
    assert served.get("/api/summary") == before


def test_every_response_carries_the_csp(served):
    for path in ("/", "/assets/app.js", "/assets/app.css", "/api/summary", "/api/nodes", "/nope"):
        reply = served.request(path)
        assert reply.headers["content-security-policy"] == CSP, path
        assert reply.headers["x-content-type-options"] == "nosniff"
    page = served.request("/").body.decode()
    assert "<script>" not in page and 'src="/assets/app.js"' in page and served.guard.csrf in page


def test_state_changes_need_csrf_and_same_origin(served):
    assert served.post("/api/undo", csrf=False).status == 403
    assert served.post("/api/undo", headers={"X-CSRF-Token": "guess"}).status == 403
    host = served.url.removeprefix("http://")
    evil = served.post("/api/action", {"action": "cordon", "node": "gpu-1"}, headers={"Origin": "http://evil.example"})
    assert evil.status == 403 and "cross-origin" in evil.json()["error"]
    same = served.post("/api/action", {"action": "cordon", "node": "gpu-1"}, headers={"Origin": f"http://{host}"})
    assert same.status == 200
    rebinding = served.request("/api/summary", headers={"Host": f"evil.example:{host.split(':')[1]}"})
    assert rebinding.status == 421
    assert served.request("/api/summary", method="PUT").status == 405


def test_token_rules(serve_files):
    served = serve_files(token="s3cret-token")
    assert served.request("/api/summary", token=False).status == 401
    assert served.request("/", token=False).status == 401
    assert served.request("/api/summary", token=False, headers={"X-Kubefit-Token": "wrong"}).status == 401
    assert served.request("/api/summary").status == 200
    first = served.request("/?token=s3cret-token", token=False)  # urllib follows the redirect, with no cookie jar
    assert first.status == 401  # ... so the page without the cookie is refused, and the redirect set it:
    import http.client

    conn = http.client.HTTPConnection(served.url.removeprefix("http://"))
    conn.request("GET", "/?token=s3cret-token")
    redirect = conn.getresponse()
    assert redirect.status == 303 and redirect.getheader("location") == "/"
    cookie = redirect.getheader("set-cookie")
    redirect.read()
    assert "kubefit_token=s3cret-token" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie
    conn.request("GET", "/api/summary", headers={"Cookie": cookie.split(";")[0]})
    assert conn.getresponse().status == 200
    assert served.post("/api/undo", csrf=False).status == 403  # the token does not replace the CSRF check


def test_other_hosts_require_a_token():
    assert Guard.for_bind("127.0.0.1", 8765, None).token is None
    assert Guard.for_bind("::1", 8765, None).token is None
    generated = Guard.for_bind("0.0.0.0", 8765, None)
    assert generated.token and len(generated.token) >= 24 and f"?token={generated.token}" in generated.url()
    assert Guard.for_bind("0.0.0.0", 8765, "given").token == "given"
    assert Guard.for_bind("0.0.0.0", 8765, None).hosts() is None


def test_bodies_are_bounded(serve_files):
    served = serve_files(max_body=1000)
    big = served.post("/api/add", "x" * 5000)
    assert big.status == 413 and "request body too large: 5,000 bytes, at most 1,000" in big.json()["error"]
    assert served.post("/api/config/validate", "#" * 1001).status == 413
    assert served.post("/api/add", POD).status == 200


def test_bad_files_refuse_to_start(tmp_path):
    from serve_support import start

    from kubefit.errors import KubefitError

    path = tmp_path / "bad.yaml"
    path.write_text("kind: Node\nmetadata: {name: [\n")
    with pytest.raises(KubefitError):
        start([str(path)])


def test_refresh_from_the_cluster_takes_a_new_snapshot(serve_files, monkeypatch, tmp_path):
    """With --kubeconfig, "refresh from cluster" reads the cluster again (`kubefit snapshot`'s reader, here
    answering a scenario that grew a node) and keeps the configuration being edited; undo goes back."""
    import kubefit.manifests.snapshot as snapshot

    docs = [d for d in yaml.safe_load_all(SCALED) if d]
    grown = [*docs, {**docs[0], "metadata": {"name": "n3", "labels": {"kubernetes.io/hostname": "n3"}}}]
    calls = []
    monkeypatch.setattr(snapshot, "snapshot", lambda kubeconfig, context: calls.append((kubeconfig, context)) or grown)
    path = tmp_path / "snapshot.yaml"
    path.write_text(SCALED)
    served = serve_files([str(path)], kubeconfig="/nowhere/kubeconfig", context="prod")
    assert served.get("/api/summary")["live"] is True
    served.post("/api/config", served.get("/api/preset?name=MostAllocated")["text"])
    refreshed = served.post("/api/refresh").json()
    assert calls == [("/nowhere/kubeconfig", "prod")]
    assert refreshed["nodes"] == 3 and refreshed["configSource"] == "edited"
    assert refreshed["history"][-1] == "refreshed from the cluster"
    undone = served.post("/api/undo").json()  # back to the files' objects, with MostAllocated
    assert undone["nodes"] == 2 and undone["configSource"] == "edited"


def test_the_command(tmp_path, capsys):
    """`kubefit serve` is listed; bad files and a taken port are one line and exit 2, before anything listens;
    another host than loopback prints a URL with a generated token."""
    import os
    import socket
    import subprocess
    import sys
    import urllib.request

    from kubefit.cli import main

    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: Node\nmetadata: {name: [\n")
    assert main(["serve", "-f", str(bad), "--port", "0"]) == 2
    huge = tmp_path / "snapshot.json"  # sparse: no disk used
    with open(huge, "wb") as fh:
        fh.truncate((256 << 20) + 1)
    assert main(["serve", "-f", str(huge), "--port", "0"]) == 2
    assert "kubefit serve keeps the scenario's objects in memory and reads at most 256 MiB" in capsys.readouterr().err
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        assert main(["serve", "--port", str(taken.getsockname()[1])]) == 2
    finally:
        taken.close()
    work = tmp_path / "tmp"
    work.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "kubefit.cli", "serve", "--host", "0.0.0.0", "--port", "0"],
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(work)})
    try:
        line = proc.stderr.readline()
        assert "?token=" in line and "http://127.0.0.1:" in line
        assert len(list(work.iterdir())) == 1  # the files written for the verbs
        base, token = line.split("open ", 1)[1].split()[0].split("?token=")
        asked = urllib.request.Request(base + "api/summary", headers={"X-Kubefit-Token": token})
        with urllib.request.urlopen(asked, timeout=60) as reply:  # serving (a stop before that exits 143)
            assert reply.status == 200
    finally:
        proc.terminate()
        assert proc.wait(10) == 0
    assert list(work.iterdir()) == []  # removed on SIGTERM
    listed = subprocess.run([sys.executable, "-m", "kubefit.cli", "--help"], capture_output=True, text=True)
    assert " serve " in listed.stdout


def test_the_tie_break_options_reach_every_verb(serve_files):
    served = serve_files(tie_break="first", seed=3)
    expected = kubefit.simulate([WORKLOAD], tie_break="first", **QUIET).to_dict()
    assert page_placements(served) == placements(expected)
    decision = served.get("/api/decision?pod=shop/web-3")
    assert decision["step"]["node"] == placements(expected)["shop/web-3"] and decision["step"]["node"] in decision["best"]


def test_the_version_options_reach_every_verb(serve_files):
    served = serve_files(kube_version="1.37")
    assert served.get("/api/summary")["kubeVersion"] == "v1.37.0"
    expected = kubefit.simulate([WORKLOAD], kube_version="1.37", **QUIET).to_dict()
    assert page_placements(served) == placements(expected)
    assert served.get("/api/decision?pod=shop/web-3")["pod"] == "shop/web-3"


DRA = str(ROOT / "examples" / "dra" / "cluster.yaml")


def test_dra_devices_per_node_are_simulates(serve_files):
    """examples/dra: each node's bar per driver is simulate's `devices` (allocated / devices in its
    ResourceSlices); a node without slices has none; the bars sort by their fraction; a node lists its
    allocated devices."""
    served = serve_files([DRA])
    expected = kubefit.simulate([DRA], **QUIET).to_dict()["devices"]
    summary = served.get("/api/summary")
    assert summary["drivers"] == ["gpu.example.com"]
    rows = {r["name"]: r for r in served.get("/api/nodes")["rows"]}
    assert set(rows) == {"node-a", "node-b", "node-c"} and rows["node-c"]["devices"] == {}
    for node, use in expected.items():
        driver = use["drivers"]["gpu.example.com"]
        assert rows[node]["devices"] == {"gpu.example.com": [driver["allocated"], driver["devices"]]}
        assert rows[node]["allocatedDevices"] == use["allocated"]
        assert served.get(f"/api/node?name={node}")["devices"] == use["allocated"]
    ordered = served.get("/api/nodes?sort=devices:gpu.example.com&order=asc")["rows"]
    assert ordered[0]["name"] == "node-c"  # no devices sorts before any fraction
    served.post("/api/action", {"action": "cordon", "node": "node-a"})
    after = kubefit.simulate([DRA], cordon=["node-a"], **QUIET).to_dict()["devices"]
    rows = {r["name"]: r for r in served.get("/api/nodes")["rows"]}
    assert rows["node-a"]["allocatedDevices"] == after["node-a"]["allocated"]
    assert rows["node-b"]["devices"]["gpu.example.com"][0] == after["node-b"]["drivers"]["gpu.example.com"]["allocated"]


def test_a_gpu_node_copied_brings_its_devices(serve_files):
    """Adding a node like node-a (examples/dra) adds its ResourceSlice too (named and pooled for the copy, as
    `plan` copies a template's): train-2, pending for want of two GPUs on one NUMA node, now runs, and the copy's
    bar counts its four A100s (without them it would have no devices at all, and train-2 still no place)."""
    served = serve_files([DRA])
    assert dict(page_placements(served))["default/train-2"] is None
    served.post("/api/nodes/add", {"template": "node-a", "count": 1})
    assert page_placements(served)["default/train-2"] is not None
    rows = {r["name"]: r for r in served.get("/api/nodes")["rows"]}
    assert rows["node-a-1"]["devices"]["gpu.example.com"][1] == 4
    assert all(d.startswith("gpu.example.com/node-a-1/") for d in rows["node-a-1"]["allocatedDevices"])
    exported = [d for d in yaml.safe_load_all(served.request("/api/export/scenario.yaml").body) if d]
    [copied] = [d for d in exported if d["kind"] == "ResourceSlice" and d["spec"]["nodeName"] == "node-a-1"]
    assert copied["metadata"]["name"] == "node-a-1-gpus" and copied["spec"]["pool"]["name"] == "node-a-1"


def test_batch_hints_are_simulates(serve_files, tmp_path):
    """With --kube-version 1.36 (opportunistic batching on) the queue carries simulate's `batchHint` for the
    pods bound to the batch's hint, and their decision says so beside the full cycle `score --at-turn` runs."""
    path = tmp_path / "batched.json"
    path.write_text(batched())
    served = serve_files([str(path)], kube_version="1.36")
    steps = kubefit.simulate([str(path)], kube_version="1.36", **QUIET).to_dict()["steps"]
    rows = served.get("/api/pods")["rows"]
    assert [(r["key"], r["node"], bool(r.get("batchHint"))) for r in rows] == [
        (f"default/{s['pod']}", s["node"], bool(s.get("batchHint"))) for s in steps]
    assert [r["key"] for r in rows if r.get("batchHint")] == ["default/p2", "default/p3"]
    hinted = served.get("/api/decision?pod=default/p2")
    assert hinted["step"]["batchHint"] is True and hinted["step"]["node"] == "n2"
    scored = kubefit.score([str(path)], "default/p2", at_turn=True, kube_version="1.36", **QUIET)
    assert hinted["best"] == scored["best"] and hinted["feasible"] == len(scored["feasible"])
    assert "batchHint" not in served.get("/api/decision?pod=default/p1")["step"]
    older = serve_files([str(path)], kube_version="1.34")  # no batching before v1.35
    assert not any(r.get("batchHint") for r in older.get("/api/pods")["rows"])


def finished(served, timeout: float = 120) -> dict:
    """Poll GET /api/tune, as the page does, until the run is no longer running."""
    import time

    end = time.monotonic() + timeout
    while (job := served.get("/api/tune"))["state"] == "running":
        assert time.monotonic() < end, job
        time.sleep(0.1)
    return job


def test_tune_runs_in_the_background_and_answers_as_the_verb(serve_files):
    """POST /api/tune/start answers at once; the polled status counts the trials; the result is
    `kubefit.tune`'s on the same files and options (headline, configuration file, report)."""
    from kubefit.report.tune import config_yaml

    served = serve_files(tie_break="first")
    idle = served.get("/api/tune")
    assert idle["state"] == "idle" and idle["objectives"][0] == "pending" and idle["defaults"]["trials"] == 16
    started = served.post("/api/tune/start", {"trials": 6, "batch": 3, "workers": 1})
    assert started.status == 200 and started.json()["state"] == "running"
    job = finished(served)
    assert job["state"] == "done", job
    expected = kubefit.tune([WORKLOAD], "pending", trials=6, batch=3, tie_break="first", workers=1, **QUIET).to_dict()
    assert (job["done"], job["total"]) == (len(expected["trials"]), len(expected["trials"]))
    head = job["headline"]
    assert (head["best"], head["bestTrial"], head["bestBaseline"]) == (
        expected["best"]["value"], expected["best"]["trial"], expected["bestBaseline"])
    assert {k[len("baseline "):]: v for k, v in head.items() if k.startswith("baseline ")} == expected["baselines"]
    assert job["config"] == config_yaml(expected)
    report = served.request(job["report"])
    assert report.status == 200 and report.headers["content-security-policy"] == REPORT_CSP
    assert b"Trial history" in report.body


def test_tune_takes_the_pages_node_actions(serve_files):
    """The page's cordon and remove reach the run: its result is `kubefit.tune` with the same cordon= and
    remove=, not the one on the untouched scenario (cordoning general-1 and general-2 leaves a pod pending
    that MostAllocated schedules otherwise)."""
    from kubefit.report.tune import config_yaml

    served = serve_files(tie_break="first")
    for action, node in (("cordon", "general-1"), ("cordon", "general-2"), ("remove", "gpu-1")):
        assert served.post("/api/action", {"action": action, "node": node}).status == 200
    assert served.post("/api/tune/start", {"trials": 6, "batch": 3, "workers": 1}).status == 200
    job = finished(served)
    assert job["state"] == "done" and "note" not in job, job
    options = dict(trials=6, batch=3, tie_break="first", workers=1, **QUIET)
    expected = kubefit.tune([WORKLOAD], "pending", cordon=["general-1", "general-2"], remove=["gpu-1"],
                            **options).to_dict()
    untouched = kubefit.tune([WORKLOAD], "pending", **options).to_dict()
    assert expected["baselines"] != untouched["baselines"]
    head = job["headline"]
    assert (head["best"], head["bestTrial"]) == (expected["best"]["value"], expected["best"]["trial"])
    assert {k[len("baseline "):]: v for k, v in head.items() if k.startswith("baseline ")} == expected["baselines"]
    assert job["config"] == config_yaml(expected)


def test_tune_refuses_bad_settings_a_second_run_and_stops(serve_files):
    served = serve_files(tie_break="first")
    for body, field in (({"trials": 0}, "--trials"), ({"objective": "fastest"}, "--objective"),
                        ({"workers": "two"}, "workers")):
        reply = served.post("/api/tune/start", body)
        assert reply.status == 400 and reply.json()["error"].startswith(field), reply.body
    assert served.post("/api/tune/start", {}, csrf=False).status == 403
    assert served.get("/api/tune")["state"] == "idle"
    served.post("/api/action", {"action": "cordon", "node": "general-1"})
    assert served.post("/api/tune/start", {"trials": 400, "batch": 2}).status == 200
    assert "note" not in served.get("/api/tune")  # tune takes the cordon: nothing is left out
    again = served.post("/api/tune/start", {})
    assert again.status == 400 and "already running" in again.json()["error"]
    assert served.post("/api/tune/stop").json()["state"] == "running"  # until the batch under way ends
    job = finished(served)
    assert job["state"] == "stopped" and job["done"] < 400 and "report" not in job
    assert served.post("/api/tune/start", {"trials": 2, "batch": 2}).status == 200  # a new one may start
    assert finished(served)["state"] == "done"


def test_folders_recursively_and_stdin(serve_files, tmp_path, monkeypatch):
    """-f DIR reads the folder's manifests (-R its sub-folders too) as simulate reads them; -f - reads stdin
    once, at start: the session keeps its objects, so every edit re-runs them; a second '-' finds it empty
    and is refused as simulate refuses it."""
    import io

    from kubefit.errors import KubefitError

    folder = tmp_path / "scenario"
    (folder / "more").mkdir(parents=True)
    docs = [d for d in yaml.safe_load_all(SCALED) if d]
    (folder / "nodes.yaml").write_text(yaml.safe_dump_all(docs[:2]))
    (folder / "more" / "web.yaml").write_text(yaml.safe_dump(docs[2]))
    flat = serve_files([str(folder)])
    assert flat.get("/api/summary")["pods"] == 0
    deep = serve_files([str(folder)], recursive=True)
    expected = kubefit.simulate([str(folder)], recursive=True, **QUIET).to_dict()
    nodes = sorted(placements(expected).values())  # the pods' generated names hang on the file they came from
    assert deep.get("/api/summary")["pods"] == 2 and sorted(page_placements(deep).values()) == nodes == ["n1", "n2"]

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(SCALED.encode())))
    piped = serve_files(["-"])
    assert sorted(page_placements(piped).values()) == nodes
    assert piped.post("/api/scale", {"position": 2, "replicas": 3}).json()["pods"] == 3  # stdin is not read again
    assert piped.post("/api/undo").json()["pods"] == 2
    with pytest.raises(KubefitError, match="-: holds no objects"):
        serve_files(["-"])  # stdin was read


def test_the_command_reads_stdin_and_folders(tmp_path):
    """`kubefit serve -f -` serves what was piped in; `-R` reads sub-folders, as simulate's options do."""
    import subprocess
    import sys
    import urllib.request

    folder = tmp_path / "scenario" / "deeper"
    folder.mkdir(parents=True)
    (folder / "cluster.yaml").write_text(SCALED)
    runs = [(["-f", "-"], SCALED), (["-f", str(tmp_path / "scenario"), "-R"], None)]
    for args, piped in runs:
        proc = subprocess.Popen([sys.executable, "-m", "kubefit.cli", "serve", *args, "--port", "0"],
                                stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            proc.stdin.write(piped or "")
            proc.stdin.close()
            line = proc.stderr.readline()
            assert "2 nodes, 2 pods queued" in line, line
            with urllib.request.urlopen(line.split("open ", 1)[1].split()[0] + "api/summary", timeout=60) as reply:
                assert json.loads(reply.read())["scheduled"] == 2
        finally:
            proc.terminate()
            assert proc.wait(10) == 0


DRAIN = ROOT / "examples" / "drain"


def test_the_editor_shows_the_versions_default_configuration_when_the_files_carry_none(serve_files):
    """The files carry no KubeSchedulerConfiguration: the editor holds kube-scheduler's effective configuration of
    the version answered for (its defaults: one profile `default-scheduler`, NodeResourcesFit LeastAllocated on cpu
    and memory, weight 1 each — SetDefaults_NodeResourcesFitArgs; v1.37's VolumeBinding with the default shape
    (0, 10), (100, 0) — SetDefaults_VolumeBindingArgs under StorageCapacityScoring, beta and on in v1.37, absent
    in v1.34), ready to edit; applied unchanged, it places every pod as the defaults did."""
    for version, shaped in (("1.37", True), ("1.34", False)):
        served = serve_files([str(DRAIN / "cluster.yaml")], kube_version=version)
        summary = served.get("/api/summary")
        assert summary["configSource"] == "defaults"
        config = yaml.safe_load(summary["config"])
        assert (config["apiVersion"], config["kind"]) == ("kubescheduler.config.k8s.io/v1", "KubeSchedulerConfiguration")
        [profile] = config["profiles"]
        args = {c["name"]: c["args"] for c in profile["pluginConfig"]}
        assert profile["schedulerName"] == "default-scheduler"
        assert args["NodeResourcesFit"]["scoringStrategy"] == {
            "type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}
        shape = args["VolumeBinding"].get("shape")
        assert shape == ([{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}] if shaped else None)
        before = page_placements(served)
        applied = served.post("/api/config", summary["config"])
        assert applied.status == 200 and applied.json()["configSource"] == "edited"
        assert page_placements(served) == before


def test_a_refused_drain_is_said_to_leave_its_node_cordoned(serve_files):
    """examples/drain: node-a runs `default/debug`, a pod of no controller: kubectl drain (without --force) refuses
    the drain, after cordoning the node; the page says so next to what moved (nothing), and the node is cordoned."""
    served = serve_files([str(DRAIN / "cluster.yaml"), str(DRAIN / "debug.yaml")])
    reply = served.post("/api/action", {"action": "drain", "node": "node-a"}).json()
    assert reply["nodeActions"]["cordoned"] == ["node-a"]
    assert reply["refusedDrains"] == [
        "drain of node-a refused (cannot delete Pods that declare no controller (use --force to override): "
        "default/debug): node-a stays cordoned and keeps its pods"]
    assert reply["change"]["movedCount"] == 0
    assert served.get("/api/node?name=node-a")["unschedulable"] is True


def test_gangs_as_workloads_reach_every_verb(serve_files, tmp_path):
    """`serve --gangs-as-workloads` (tests/scheduler/test_scheduler_gangs.py's Volcano gang of 4 one-GPU pods, 3 one-GPU
    nodes, v1.37 with GenericWorkload): the page shows simulate's run with the gang translated (none of the 4 bound,
    where pod by pod 3 are), its decision is `score`'s of that run, and the planning page's plan adds the one node
    the gang needs (4 bound), as `kubefit plan --gangs-as-workloads` does."""
    from scheduler.test_scheduler_gangs import VOLCANO, scenario

    path = tmp_path / "gang.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": scenario(VOLCANO)}))
    versions = {"kube_version": "1.37", "feature_gates": "GenericWorkload=true"}
    pod_by_pod = serve_files([str(path)], **versions)
    assert sum(node is not None for node in page_placements(pod_by_pod).values()) == 3
    served = serve_files([str(path)], **versions, gangs_as_workloads=True)
    expected = kubefit.simulate([str(path)], gangs_as_workloads=True, **versions, **QUIET).to_dict()
    assert page_placements(served) == placements(expected) == {f"ml/w-{i}": None for i in range(4)}
    decision = served.get("/api/decision?pod=ml/w-0")
    scored = kubefit.score([str(path)], "ml/w-0", at_turn=True, gangs_as_workloads=True, **versions, **QUIET)
    assert decision["best"] == scored["best"]
    plan = served.post("/api/planning", {"verb": "plan", "template": "n0"})
    assert plan.status == 200, plan.body
    template = tmp_path / "n0.yaml"
    template.write_text(json.dumps(next(d for d in scenario(VOLCANO) if d["metadata"]["name"] == "n0")))
    by_command = kubefit.plan([str(path)], [str(template)], gangs_as_workloads=True, **versions, **QUIET).to_dict()
    assert by_command["scheduled"] == 4 and len(by_command["nodesAdded"]) == 1
    assert plan.json()["headline"]["scheduled"] == by_command["scheduled"]
    assert any("--gangs-as-workloads" in w for w in plan.json()["warnings"])
