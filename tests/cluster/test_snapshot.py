"""`kubefit snapshot` against a local API server answering with recorded list responses (real client)."""

from __future__ import annotations

import json
import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml

from kubefit.cli import main
from kubefit.k8s.requests import pod_demand
from kubefit.manifests.documents import read_documents
from kubefit.manifests.scenario import load_scenario
from kubefit.manifests.snapshot import TERMINAL_PHASES, kubeconfig_paths, snapshot
from kubefit.scheduler.state import compile_state

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RECORDED = {"/api/v1/nodes": json.loads((FIXTURES / "apiserver" / "nodes.json").read_text()),
            "/api/v1/pods": json.loads((FIXTURES / "apiserver" / "pods.json").read_text()),
            **json.loads((FIXTURES / "apiserver" / "storage.json").read_text()),  # PVCs, PVs, ..., PDBs: 8 objects
            # namespaces, services, ReplicaSets, StatefulSets, ReplicationControllers: 13 objects
            **json.loads((FIXTURES / "apiserver" / "cluster.json").read_text()),
            # a LimitRange, a ResourceQuota, a RuntimeClass and 3 PriorityClasses over 2 pages (admission reads
            # them for pods created): 6 objects
            **json.loads((FIXTURES / "apiserver" / "policy.json").read_text()),
            # a DeviceClass, a pool of 2 ResourceSlices, an allocated and a pending ResourceClaim, a template
            **json.loads((FIXTURES / "apiserver" / "dra.json").read_text())}
TOKEN = "kubefit-test-token"


class _APIServer(BaseHTTPRequestHandler):
    """Answers list calls page by page from the recordings; `forbid` makes every call a 403."""

    requests: list[tuple[str, dict[str, list[str]], str]] = []
    forbid = False
    version: dict[str, str] | None = {"major": "1", "minor": "36", "gitVersion": "v1.36.3", "platform": "linux/amd64"}

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        scheme, _, credentials = self.headers.get("Authorization", "").partition(" ")
        auth = f"Bearer {credentials}" if scheme.lower() == "bearer" else ""  # schemes are case-insensitive
        type(self).requests.append((url.path, query, auth))
        if auth == "Bearer expired":
            return self._reply(401, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                     "message": "Unauthorized", "reason": "Unauthorized", "code": 401})
        if type(self).forbid or auth != f"Bearer {TOKEN}":
            resource = url.path.rsplit("/", 1)[-1]
            return self._reply(403, {
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": f'{resource} is forbidden: User "system:serviceaccount:default:viewer" cannot list '
                           f'resource "{resource}" in API group "" at the cluster scope',
                "reason": "Forbidden", "details": {"kind": resource}, "code": 403})
        if url.path.rstrip("/") == "/version" and type(self).version is not None:  # the API server's version (not a list)
            return self._reply(200, type(self).version)
        recording = RECORDED.get(url.path)
        if recording is None:
            return self._reply(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                     "message": "the server could not find the requested resource",
                                     "reason": "NotFound", "code": 404})
        if query.get("limit") != [str(recording["limit"])]:
            return self._reply(400, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                     "message": f"recorded with limit={recording['limit']}", "code": 400})
        pages = recording["pages"]
        token = query.get("continue", [""])[0]
        index = 0 if not token else 1 + [p["metadata"].get("continue") for p in pages].index(token)
        page = json.loads(json.dumps(pages[index]))
        if url.path == "/api/v1/pods" and query.get("fieldSelector"):
            excluded = {s.split("!=", 1)[1] for s in query["fieldSelector"][0].split(",")
                        if s.startswith("status.phase!=")}
            page["items"] = [p for p in page["items"] if p["status"].get("phase") not in excluded]
        return self._reply(200, page)

    def _reply(self, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _APIServer)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The same API server over HTTPS with a self-signed certificate for 127.0.0.1: (port, ca.crt)."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    where = tmp_path_factory.mktemp("tls")
    cert, key = where / "ca.crt", where / "tls.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _APIServer)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield str(httpd.server_address[1]), cert
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def _fresh_server_state(monkeypatch: pytest.MonkeyPatch) -> None:
    _APIServer.requests = []
    _APIServer.forbid = False
    monkeypatch.setattr("kubefit.manifests.snapshot.PAGE_SIZE", 2)  # the limit the recordings were made with
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_PORT", raising=False)



def write_kubeconfig(path: Path, server: str, *, context: str = "kind-kind", token: str = TOKEN) -> Path:
    config = {
        "apiVersion": "v1", "kind": "Config", "preferences": {}, "current-context": context,
        "clusters": [{"name": "kind-kind", "cluster": {"server": server}},
                     {"name": "nowhere", "cluster": {"server": "http://127.0.0.1:1"}}],
        "users": [{"name": "viewer", "user": {"token": token}}],
        "contexts": [{"name": "kind-kind", "context": {"cluster": "kind-kind", "user": "viewer"}},
                     {"name": "other", "context": {"cluster": "kind-kind", "user": "viewer", "namespace": "x"}}],
    }
    path.write_text(yaml.safe_dump(config))
    return path


def _all_recorded(resource: str) -> list[dict[str, Any]]:
    return [item for page in RECORDED[f"/api/v1/{resource}"]["pages"] for item in page["items"]]


# --------------------------------------------------------------------------- reading a cluster

def test_snapshot_reads_every_page(server: str, tmp_path: Path) -> None:
    documents = snapshot(str(write_kubeconfig(tmp_path / "config", server)))
    nodes = [d for d in documents if d["kind"] == "Node"]
    pods = [d for d in documents if d["kind"] == "Pod"]
    assert [n["metadata"]["name"] for n in nodes] == [n["metadata"]["name"] for n in _all_recorded("nodes")]
    live = [p for p in _all_recorded("pods") if p["status"]["phase"] not in TERMINAL_PHASES]
    assert len(live) < len(_all_recorded("pods"))  # the recording has finished pods to leave out
    assert sorted(p["metadata"]["name"] for p in pods) == sorted(p["metadata"]["name"] for p in live)
    # pods in creation order: the scheduling queue's order for pending pods of one priority
    stamps = [p["metadata"]["creationTimestamp"] for p in pods]
    assert stamps == sorted(stamps)
    # paging: every page was asked for with limit and the previous page's continue token
    calls = [(path, q.get("limit"), q.get("continue")) for path, q, _ in _APIServer.requests
             if path.rstrip("/") != "/version"]
    assert [path for path, _, _ in _APIServer.requests].count("/version/") == 1  # the cluster's version, once
    tokens = {path: [None] + [p["metadata"]["continue"] for p in rec["pages"][:-1]]
              for path, rec in RECORDED.items()}
    assert calls == [(path, [str(RECORDED[path]["limit"])], None if t is None else [t])
                     for path in RECORDED for t in tokens[path]]  # nodes, pods, storage objects and PDBs
    pod_queries = [q for path, q, _ in _APIServer.requests if path == "/api/v1/pods"]
    assert all(q["fieldSelector"] == ["status.phase!=Succeeded,status.phase!=Failed"] for q in pod_queries)
    assert all(auth == f"Bearer {TOKEN}" for _, _, auth in _APIServer.requests)


def test_snapshot_keeps_what_scheduling_reads(server: str, tmp_path: Path) -> None:
    documents = snapshot(str(write_kubeconfig(tmp_path / "config", server)))
    by_name = {d["metadata"]["name"]: d for d in documents}
    raw = {d["metadata"]["name"]: d for d in _all_recorded("nodes") + _all_recorded("pods")}
    for name, doc in by_name.items():
        if doc["kind"] not in ("Node", "Pod"):
            continue
        if doc["kind"] == "Node":  # its only annotation: the cluster's version, which the scenario answers for
            assert doc["metadata"].pop("annotations") == {"kubefit.io/kubernetes-version": "v1.36.3"}
        text = json.dumps(doc)
        for noise in ("managedFields", "conditions", "nodeInfo", "resourceVersion",
                      "volumeMounts", "imageID", "state", "annotations"):
            assert f'"{noise}"' not in text, (name, noise)
        assert doc["metadata"]["labels"] == raw[name]["metadata"]["labels"]
        if doc["kind"] == "Node":  # ImageLocality reads the images a node holds: names and size
            assert doc["status"]["images"] == [{"names": i["names"], "sizeBytes": i["sizeBytes"]}
                                               for i in raw[name]["status"]["images"]], name
        if doc["kind"] == "Pod":  # ... and the images a pod's containers run
            assert [c["image"] for c in doc["spec"]["containers"]] == \
                [c["image"] for c in raw[name]["spec"]["containers"]], name
        if doc["kind"] == "Pod":  # what the volume plugins, spread defaults and preemption read
            for part, key in (("metadata", "uid"), ("metadata", "ownerReferences"), ("spec", "volumes"),
                              ("status", "startTime")):
                assert doc.get(part, {}).get(key) == raw[name][part].get(key), (name, key)
        if doc["kind"] == "Pod":  # a bound pod keeps what an in-place resize is accounted from
            statuses = doc.get("status", {}).get("containerStatuses")
            assert (statuses is not None) == bool(doc["spec"].get("nodeName")), name
    cordoned = by_name["kind-worker2"]
    assert cordoned["spec"] == {"unschedulable": True, "taints": raw["kind-worker2"]["spec"]["taints"]}
    assert cordoned["status"] == {k: raw["kind-worker2"]["status"][k] for k in ("capacity", "allocatable", "images")}
    web = by_name["web-5f8d7c9b4-abcde"]
    raw_web = raw["web-5f8d7c9b4-abcde"]["spec"]
    assert web["spec"]["nodeName"] == "kind-worker"
    assert web["spec"]["topologySpreadConstraints"] == raw_web["topologySpreadConstraints"]
    assert web["spec"]["containers"] == [{"name": "nginx", "image": "nginx:1.27",
                                          "resources": raw_web["containers"][0]["resources"],
                                          "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}]}]
    assert [c.get("restartPolicy") for c in web["spec"]["initContainers"]] == [None, "Always"]
    assert web["status"] == {"phase": "Running", "startTime": "2025-10-02T08:00:00Z", "containerStatuses": [
        {"name": "nginx", "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}},
         "allocatedResources": {"cpu": "500m", "memory": "256Mi"}}]}
    trainer = by_name["trainer-0"]
    raw_trainer = raw["trainer-0"]["spec"]
    assert "nodeName" not in trainer["spec"] and trainer["status"] == {"phase": "Pending"}
    for key in ("nodeSelector", "tolerations", "priority", "schedulerName", "preemptionPolicy"):
        assert trainer["spec"][key] == raw_trainer[key], key
    coredns = by_name["coredns-66bc5c9577-4xk2p"]["spec"]
    assert coredns["affinity"] == raw["coredns-66bc5c9577-4xk2p"]["spec"]["affinity"]
    assert coredns["priorityClassName"] == "system-cluster-critical" and coredns["priority"] == 2000000000
    assert by_name["web-5f8d7c9b4-fghij"]["spec"]["schedulingGates"] == [{"name": "example.com/quota"}]


def test_cli_writes_a_scenario_with_pending_pods_pending(server: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    config = write_kubeconfig(tmp_path / "config", server)
    out = tmp_path / "cluster.yaml"
    assert main(["snapshot", "--kubeconfig", str(config), "-o", str(out)]) == 0
    assert ("wrote 3 nodes, 8 storage objects and disruption budgets, 13 namespaces, services and controllers, "
            "6 LimitRanges, ResourceQuotas, RuntimeClasses and PriorityClasses, 6 device classes, resource slices, "
            "claims and claim templates and 5 pods (2 pending)") in capsys.readouterr().err
    assert len(read_documents(out)) == 41
    scenario = load_scenario([out])
    assert [n.name for n in scenario.nodes] == ["kind-control-plane", "kind-worker", "kind-worker2"]
    assert [p.name for p in scenario.pending_pods] == ["web-5f8d7c9b4-fghij", "trainer-0"]  # by creation
    assert sorted(p.name for p in scenario.bound_pods) == ["coredns-66bc5c9577-4xk2p", "kindnet-7wq9d",
                                                           "web-5f8d7c9b4-abcde"]
    assert scenario.nodes[2].unschedulable
    trainer = next(p for p in scenario.pods if p.name == "trainer-0")
    assert trainer.node_selector == {"disktype": "ssd"} and trainer.phase == "Pending"
    assert trainer.containers[0].requests["nvidia.com/gpu"] == 1_000_000_000
    as_json = tmp_path / "cluster.json"
    assert main(["snapshot", "--kubeconfig", str(config), "-o", str(as_json)]) == 0
    assert [d.body for d in read_documents(as_json)] == [d.body for d in read_documents(out)]


def _mid_resize_pods() -> dict[str, Any]:
    """The pod recording with web-…-abcde in the middle of an infeasible in-place resize.

    Its spec now asks nginx for 4 cpus, which kind-worker cannot give (PodResizePending/Infeasible): the
    kubelet still runs 500m. Its sidecar log-shipper was resized earlier to 300m (spec 50m).
    """
    recording = json.loads(json.dumps(RECORDED["/api/v1/pods"]))
    web = next(p for page in recording["pages"] for p in page["items"] if p["metadata"]["name"] == "web-5f8d7c9b4-abcde")
    web["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "4"
    web["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "4"
    web["status"]["conditions"].append({"type": "PodResizePending", "status": "True", "reason": "Infeasible",
                                        "message": "Node didn't have enough capacity: cpu, requested: 4000, "
                                                   "capacity: 8000", "lastProbeTime": None,
                                        "lastTransitionTime": "2025-10-02T09:00:00Z"})
    web["status"]["initContainerStatuses"] = [
        {"name": "wait-db", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}, "ready": True,
         "restartCount": 0, "image": "busybox:1.36", "imageID": "busybox@sha256:1b2c", "started": False,
         "allocatedResources": {"cpu": "200m", "memory": "64Mi"},
         "resources": {"requests": {"cpu": "200m", "memory": "64Mi"}}},
        {"name": "log-shipper", "state": {"running": {"startedAt": "2025-10-02T08:00:00Z"}}, "ready": True,
         "restartCount": 0, "image": "fluent/fluent-bit:3.1", "imageID": "fluent-bit@sha256:7d8e", "started": True,
         "allocatedResources": {"cpu": "300m", "memory": "32Mi"},
         "resources": {"requests": {"cpu": "300m", "memory": "32Mi"}}}]
    return recording


def test_snapshot_of_a_pod_mid_resize_is_accounted_as_the_scheduler_does(
        server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(RECORDED, "/api/v1/pods", _mid_resize_pods())
    out = tmp_path / "cluster.yaml"
    assert main(["snapshot", "--kubeconfig", str(write_kubeconfig(tmp_path / "config", server)), "-o", str(out)]) == 0
    web = next(d.body for d in read_documents(out) if d.name == "web-5f8d7c9b4-abcde")
    assert web["status"]["conditions"] == [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]
    assert [s["name"] for s in web["status"]["initContainerStatuses"]] == ["wait-db", "log-shipper"]
    assert web["status"]["initContainerStatuses"][1] == {
        "name": "log-shipper", "resources": {"requests": {"cpu": "300m", "memory": "32Mi"}},
        "allocatedResources": {"cpu": "300m", "memory": "32Mi"}}
    scenario = load_scenario([out])
    state = compile_state(scenario.nodes, scenario.pods)
    worker, cpu = state.node_index["kind-worker"], state.column("cpu")
    # web: nginx 500m (infeasible: the spec's 4 is ignored) + sidecar 300m (status) = 800m, the init peaks
    # (wait-db 200m, log-shipper 300m) are below it; kindnet 100m runs there too
    assert state.requested[worker, cpu] == 800 + 100
    pod = next(p for p in scenario.pods if p.name == "web-5f8d7c9b4-abcde")
    assert pod_demand(pod).requests["cpu"] == 4000 + 50  # its spec alone, as a pod to schedule


def test_kubeconfig_from_environment_and_context(server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """$KUBECONFIG (a path list, merged) is read when --kubeconfig is absent; --context picks a context."""
    empty = tmp_path / "empty"
    empty.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Config"}))
    config = write_kubeconfig(tmp_path / "config", server, context="nowhere-ctx")
    monkeypatch.setenv("KUBECONFIG", f"{empty}:{config}")
    assert kubeconfig_paths(None) == f"{empty}:{config}"
    assert kubeconfig_paths("/explicit") == "/explicit"
    assert main(["snapshot", "--context", "other"]) == 0
    docs = list(yaml.safe_load_all(capsys.readouterr().out))
    assert sum(d["kind"] == "Node" for d in docs) == 3


def test_in_cluster_when_no_kubeconfig(tls_server: tuple[str, Path], tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """No kubeconfig anywhere: the pod's service account (token, CA, KUBERNETES_SERVICE_*) is used."""
    port, cert = tls_server
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.kube/config
    assert kubeconfig_paths(None) is None
    (tmp_path / "token").write_text(TOKEN)
    monkeypatch.setattr("kubernetes.config.incluster_config.SERVICE_TOKEN_FILENAME", str(tmp_path / "token"))
    monkeypatch.setattr("kubernetes.config.incluster_config.SERVICE_CERT_FILENAME", str(cert))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", port)
    documents = snapshot()
    assert sum(d["kind"] == "Node" for d in documents) == 3
    assert all(auth == f"Bearer {TOKEN}" for _, _, auth in _APIServer.requests)


def test_tls_with_an_unknown_ca(tls_server: tuple[str, Path], tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    """A server whose certificate the kubeconfig does not trust: one line, exit 2."""
    config = write_kubeconfig(tmp_path / "config", f"https://127.0.0.1:{tls_server[0]}")
    assert main(["snapshot", "--kubeconfig", str(config)]) == 2
    assert "certificate verify failed" in _one_error_line(capsys)


# --------------------------------------------------------------------------- failures: one line, exit 2

def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err
    assert "Traceback" not in captured.err and captured.out == ""
    return lines[0]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_kubeconfig_pointing_nowhere(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_kubeconfig(tmp_path / "config", f"http://127.0.0.1:{_free_port()}")
    assert main(["snapshot", "--kubeconfig", str(config)]) == 2
    line = _one_error_line(capsys)
    assert "cannot reach the cluster" in line and "refused" in line.lower()


def test_missing_context(server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_kubeconfig(tmp_path / "config", server)
    assert main(["snapshot", "--kubeconfig", str(config), "--context", "expired"]) == 2
    line = _one_error_line(capsys)
    assert str(config) in line and "expired" in line


def test_forbidden(server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _APIServer.forbid = True
    config = write_kubeconfig(tmp_path / "config", server)
    assert main(["snapshot", "--kubeconfig", str(config)]) == 2
    line = _one_error_line(capsys)
    assert line == (f'error: {server}: listing nodes: 403 Forbidden: nodes is forbidden: User '
                    f'"system:serviceaccount:default:viewer" cannot list resource "nodes" in API group "" '
                    f'at the cluster scope')


def test_wrong_token_is_forbidden_on_pods_too(server: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    config = write_kubeconfig(tmp_path / "config", server, token="stale")
    assert main(["snapshot", "--kubeconfig", str(config)]) == 2
    assert "403 Forbidden" in _one_error_line(capsys)


def test_expired_credentials(server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_kubeconfig(tmp_path / "config", server, token="expired")
    assert main(["snapshot", "--kubeconfig", str(config)]) == 2
    assert _one_error_line(capsys) == f"error: {server}: listing nodes: 401 Unauthorized: Unauthorized"


def test_malformed_kubeconfig(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad").write_text("clusters: [oops")
    assert main(["snapshot", "--kubeconfig", str(tmp_path / "bad")]) == 2
    assert "kubeconfig is not valid YAML" in _one_error_line(capsys)
    (tmp_path / "empty").write_text("apiVersion: v1\nkind: Config\n")
    assert main(["snapshot", "--kubeconfig", str(tmp_path / "empty")]) == 2
    assert "current-context" in _one_error_line(capsys)


def test_missing_kubeconfig_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["snapshot", "--kubeconfig", str(tmp_path / "absent")]) == 2
    assert str(tmp_path / "absent") in _one_error_line(capsys)


def test_no_kubeconfig_and_not_in_a_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert main(["snapshot"]) == 2
    assert "not in a cluster" in _one_error_line(capsys)


# --------------------------------------------------------------------------- kubectl output as input

@pytest.mark.parametrize("name", ["kubectl-get-nodes-pods.yaml", "kubectl-get-nodes-pods.json"])
def test_kubectl_get_output_loads(name: str) -> None:
    """`kubectl get nodes,pods -A -o yaml|json`: a List of full objects, loaded as they are."""
    scenario = load_scenario([FIXTURES / name])
    assert [n.name for n in scenario.nodes] == ["kind-control-plane", "kind-worker", "kind-worker2"]
    assert scenario.nodes[0].taints[0].key == "node-role.kubernetes.io/control-plane"
    assert scenario.nodes[1].allocatable["cpu"] == 7_900_000_000
    assert scenario.nodes[1].allocatable["memory"] == 32226628 * 1024 * 10**9
    assert len(scenario.pods) == 7
    assert sorted(p.name for p in scenario.pending_pods) == ["trainer-0", "web-5f8d7c9b4-fghij"]
    web = next(p for p in scenario.pods if p.name == "web-5f8d7c9b4-abcde")
    assert web.node_name == "kind-worker" and web.containers[0].requests["cpu"] == 500_000_000
    assert [c.restart_policy for c in web.init_containers] == [None, "Always"]
    coredns = next(p for p in scenario.pods if p.name.startswith("coredns"))
    assert coredns.priority == 2000000000 and coredns.node_selector == {"kubernetes.io/os": "linux"}


def test_snapshot_keeps_storage_objects_and_budgets_as_the_plugins_read_them(server: str, tmp_path: Path) -> None:
    """PVCs (every page), PVs, StorageClasses, CSINodes, CSIDrivers and PDBs are listed, trimmed, and load."""
    documents = snapshot(str(write_kubeconfig(tmp_path / "config", server)))
    kinds = [d["kind"] for d in documents]
    assert kinds.count("PersistentVolumeClaim") == 3 and kinds.index("PersistentVolumeClaim") < kinds.index("Pod")
    by_name = {(d["kind"], d["metadata"]["name"]): d for d in documents}
    bound = by_name[("PersistentVolumeClaim", "data-db-0")]
    assert bound["metadata"] == {"name": "data-db-0", "namespace": "shop", "uid": "pvc-1",
                                 "annotations": {"pv.kubernetes.io/bind-completed": "yes"}}
    assert bound["spec"]["volumeName"] == "pv-db-0" and bound["status"] == {"phase": "Bound"}
    assert by_name[("StorageClass", "gp3")] == {
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "gp3", "uid": "sc-1", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": "ebs.csi.aws.com", "reclaimPolicy": "Delete", "volumeBindingMode": "WaitForFirstConsumer"}
    assert by_name[("PodDisruptionBudget", "web")]["status"] == {"disruptionsAllowed": 1}
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump_all(documents))
    objects = load_scenario([path]).objects
    assert [len(objects.of(k)) for k in ("PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode",
                                         "CSIDriver", "PodDisruptionBudget")] == [3, 1, 1, 1, 1, 1]
    assert objects.of("CSINode")[0].limits() == {"ebs.csi.aws.com": 25}


def test_snapshot_keeps_namespaces_services_and_controllers_as_the_plugins_read_them(
        server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Namespaces (every page), Services, ReplicaSets, StatefulSets and ReplicationControllers are listed,
    trimmed to what PodTopologySpread, InterPodAffinity and the workload loader read, and load strictly."""
    documents = snapshot(str(write_kubeconfig(tmp_path / "config", server)))
    kinds = [d["kind"] for d in documents]
    assert kinds.count("Namespace") == 5 and kinds.index("ReplicaSet") < kinds.index("Pod")
    by_name = {(d["kind"], d["metadata"]["name"]): d for d in documents}
    assert by_name[("Namespace", "ml")] == {"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": "ml", "uid": "ns-4", "labels": {"kubernetes.io/metadata.name": "ml", "team": "research",
                                                "tier": "gpu"}}}
    assert by_name[("Service", "web")]["spec"] == {"selector": {"app": "web"}}
    assert "spec" not in by_name[("Service", "kubernetes")]  # no selector: selects no pod
    web = by_name[("ReplicaSet", "web-5f8d7c9b4")]
    labels = {"app": "web", "pod-template-hash": "5f8d7c9b4"}
    assert web["metadata"]["uid"] == "5b1c0e7a-2f4d-4a9b-9c3e-1d2f3a4b5c03"
    assert web["spec"] == {"replicas": 2, "selector": {"matchLabels": labels}, "template": {
        "metadata": {"labels": labels},
        "spec": {"schedulerName": "default-scheduler", "containers": [{
            "name": "nginx", "image": "nginx:1.27",
            "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}, "limits": {"cpu": "1", "memory": "512Mi"}},
            "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}]}]}}}
    assert by_name[("ReplicaSet", "crash-7c9d8f6b5")]["spec"]["replicas"] == 0  # scaled to 0: not the default 1
    assert by_name[("ReplicationController", "legacy")]["spec"]["selector"] == {"app": "legacy"}
    for doc in documents:
        assert "status" not in doc or doc["kind"] in ("Node", "Pod", "PersistentVolumeClaim", "PersistentVolume",
                                                      "PodDisruptionBudget", "ResourceClaim", "ResourceQuota"), doc["metadata"]["name"]
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump_all(documents))
    assert main(["score", "-f", str(path), "-o", "json"]) == 0, capsys.readouterr().err
    scenario = load_scenario([path])
    objects = scenario.objects
    assert [len(objects.of(k)) for k in ("Namespace", "Service", "ReplicaSet", "StatefulSet",
                                         "ReplicationController")] == [5, 3, 3, 1, 1]
    assert next(n for n in objects.of("Namespace") if n.meta.name == "ml").meta.labels["team"] == "research"
    assert {s.meta.key: s.selector for s in objects.of("Service")} == {
        "default/kubernetes": None, "default/web": {"app": "web"}, "kube-system/kube-dns": {"k8s-app": "kube-dns"}}
    assert objects.of("StatefulSet")[0].selector == {"matchLabels": {"app": "trainer"}}
    assert objects.of("ReplicationController")[0].selector == {"matchLabels": {"app": "legacy"}}
    # every controller has the pods it wants: loading owes none
    assert [p.name for p in scenario.pending_pods] == ["web-5f8d7c9b4-fghij", "trainer-0"]


def _snapshot_with_web_scaled_to(replicas: int, server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 priority_class: str | None = None) -> Path:
    """`kubefit snapshot` of the recordings with the ReplicaSet web-5f8d7c9b4 (2 pods) scaled to `replicas` (its
    template naming `priority_class`, if given)."""
    recording = json.loads(json.dumps(RECORDED["/apis/apps/v1/replicasets"]))
    web = next(r for page in recording["pages"] for r in page["items"] if r["metadata"]["name"] == "web-5f8d7c9b4")
    web["spec"]["replicas"] = replicas
    if priority_class is not None:
        web["spec"]["template"]["spec"]["priorityClassName"] = priority_class
    monkeypatch.setitem(RECORDED, "/apis/apps/v1/replicasets", recording)
    out = tmp_path / "cluster.yaml"
    assert main(["snapshot", "--kubeconfig", str(write_kubeconfig(tmp_path / "config", server)), "-o", str(out)]) == 0
    return out


def test_snapshot_of_a_controller_short_of_pods_loads_the_pod_it_owes(
        server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ReplicaSet scaled to 3 with 2 pods: the scenario gets the third from the trimmed template (not yet
    created, it has no creationTimestamp: the loader queues it first)."""
    out = _snapshot_with_web_scaled_to(3, server, tmp_path, monkeypatch)
    pending = load_scenario([out]).pending_pods
    assert [p.name for p in pending][1:] == ["web-5f8d7c9b4-fghij", "trainer-0"]
    owed = pending[0]
    assert owed.name.startswith("web-5f8d7c9b4-") and owed.namespace == "default"
    assert owed.labels == {"app": "web", "pod-template-hash": "5f8d7c9b4"}
    assert owed.containers[0].image == "nginx:1.27" and owed.containers[0].requests["cpu"] == 500_000_000


def test_snapshot_reads_dynamic_resource_allocation(server: str, tmp_path: Path) -> None:
    """DRA objects come trimmed and load: the pool of two slices, the claim allocated to a running pod (its
    GPU in use, the pod its owner) and the pending one; the managed fields are gone."""
    out = tmp_path / "cluster.yaml"
    assert main(["snapshot", "--kubeconfig", str(write_kubeconfig(tmp_path / "config", server)), "-o", str(out)]) == 0
    documents = [d.body for d in read_documents(out)]
    kinds = [d["kind"] for d in documents]
    assert [kinds.count(k) for k in ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")] == \
        [1, 2, 2, 1]
    held = next(d for d in documents if d["metadata"]["name"] == "trainer-0-gpu-x7k2p")
    assert held["metadata"]["ownerReferences"][0]["uid"] == "pod-trainer"
    assert held["status"]["reservedFor"] == [{"resource": "pods", "name": "trainer-0", "uid": "pod-trainer"}]
    assert "managedFields" not in json.dumps(documents)
    scenario = load_scenario([out])
    state = compile_state(scenario.nodes, scenario.pods, scenario.objects)
    state.dra.sync()  # the claims are held once the pools are gathered
    assert set(state.dra.in_use) == {("gpu.example.com", "kind-worker", "gpu-0")}
    pool = state.dra.catalog.node_pools[state.node_index["kind-worker"]][0]
    assert [d.device_id[2] for d in pool.devices] == ["gpu-0", "gpu-1", "gpu-2", "gpu-3"] and not pool.incomplete


def test_snapshot_of_a_cluster_without_dra(server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cluster that does not serve resource.k8s.io/v1 (404) gives a scenario without DRA objects."""
    for path in [p for p in RECORDED if p.startswith("/apis/resource.k8s.io/")]:
        monkeypatch.delitem(RECORDED, path)
    documents = snapshot(str(write_kubeconfig(tmp_path / "config", server)))
    assert not [d for d in documents if d["apiVersion"].startswith("resource.k8s.io/")]
    assert any(d["kind"] == "Node" for d in documents)


def test_snapshot_keeps_what_admission_reads_for_pods_created_later(server: str, tmp_path: Path) -> None:
    """The namespace shop's LimitRange and the RuntimeClass are listed and load. The snapshot's pods were admitted
    when they were created (they carry metadata.uid): none is changed again. A pod created later in shop — one more
    replica of its ReplicationController, as `capacity --pod rc/legacy` makes it — is admitted: its template asks
    cpu 250m only, so LimitRanger gives it the LimitRange's defaultRequest memory 128Mi and default limits."""
    from kubefit.verbs import find_pod

    out = tmp_path / "cluster.yaml"
    assert main(["snapshot", "--kubeconfig", str(write_kubeconfig(tmp_path / "config", server)), "-o", str(out)]) == 0
    documents = read_documents(out)
    assert [d.name for d in documents if d.kind in ("LimitRange", "RuntimeClass")] == ["defaults", "gvisor"]
    scenario = load_scenario([out])
    assert [lr.meta.key for lr in scenario.objects.of("LimitRange")] == ["shop/defaults"]
    assert scenario.objects.of("RuntimeClass")[0].overhead["cpu"].nanos == 250_000_000
    given = {d.name: d.body for d in documents if d.kind == "Pod"}
    for pod in scenario.pods:  # as listed: requests and tolerations untouched
        spec = given[pod.name]["spec"]
        assert [set(c.requests) for c in pod.containers] == [set((c.get("resources") or {}).get("requests") or {})
                                                            for c in spec["containers"]]
        assert len(pod.tolerations) == len(spec.get("tolerations") or [])
    replica = find_pod(scenario, "rc/legacy")
    assert replica.namespace == "shop" and replica.created_by == "ReplicationController/legacy"
    assert replica.containers[0].requests == {"cpu": 250_000_000, "memory": 128 * 1024 * 1024 * 10**9}


def test_the_snapshot_answers_for_the_clusters_version(server: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """`/version` says v1.36.3: every node records it, and a verb answers for 1.36 unless told otherwise
    (`--kube-version`, $KUBEFIT_KUBE_VERSION); the answer says which. A cluster of a version kubefit does not
    reproduce is answered for the default version, with a warning; a server without /version records none."""
    config = write_kubeconfig(tmp_path / "config", server)
    out = tmp_path / "cluster.yaml"
    assert main(["snapshot", "--kubeconfig", str(config), "-o", str(out)]) == 0
    assert load_scenario([out]).kube_version == "v1.36.3"
    monkeypatch.delenv("KUBEFIT_KUBE_VERSION")
    capsys.readouterr()
    assert main(["score", "-f", str(out), "-o", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["inputs"]["kubeSchedulerVersion"] == "v1.36.3"
    assert any("Kubernetes v1.36.3 cluster: answered as kube-scheduler v1.36.3" in w for w in got["warnings"])
    assert main(["score", "-f", str(out), "-o", "json", "--kube-version", "1.34"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["inputs"]["kubeSchedulerVersion"] == "v1.34.1"
    assert any("answered as kube-scheduler v1.34.1, as asked" in w for w in got["warnings"])
    monkeypatch.setattr(_APIServer, "version", {"major": "1", "minor": "33", "gitVersion": "v1.33.4-gke.100"})
    assert main(["snapshot", "--kubeconfig", str(config), "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["score", "-f", str(out), "-o", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["inputs"]["kubeSchedulerVersion"] == "v1.37.0"
    assert any("v1.33.4-gke.100 cluster, a version kubefit does not reproduce" in w for w in got["warnings"])
    monkeypatch.setattr(_APIServer, "version", None)
    assert main(["snapshot", "--kubeconfig", str(config), "-o", str(out)]) == 0
    assert load_scenario([out]).kube_version is None


def test_snapshot_takes_the_quota_from_its_status(server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Issue #38: the namespace default's ResourceQuota `compute` is listed with the quota controller's status
    (`hard`, `used`; the rest of its metadata trimmed). `used: pods=2` counts the running and the gated pending
    web pod, which carry metadata.uid (stored: admitted when created, not charged again). The ReplicaSet
    web-5f8d7c9b4 scaled to 4 owes two pods, two creates: CheckRequest (staging/src/k8s.io/apiserver/pkg/admission/
    plugin/resourcequota/controller.go) admits the first (pods 2 + 1 ≤ 3, requests.cpu 1 + 500m ≤ 2,
    limits.memory 1Gi + 512Mi ≤ 2Gi) and refuses the second (pods 3 + 1 > 3): not created, `pods "web-5f8d7c9b4-"
    is forbidden: exceeded quota: compute, requested: pods=1, used: pods=3, limited: pods=3`."""
    out = _snapshot_with_web_scaled_to(4, server, tmp_path, monkeypatch)
    [quota] = [d.body for d in read_documents(out) if d.kind == "ResourceQuota"]
    assert quota == {"apiVersion": "v1", "kind": "ResourceQuota",
                     "metadata": {"name": "compute", "namespace": "default", "uid": "rq-1"},
                     "spec": {"hard": {"pods": "3", "requests.cpu": "2", "limits.memory": "2Gi"}},
                     "status": {"hard": {"pods": "3", "requests.cpu": "2", "limits.memory": "2Gi"},
                                "used": {"pods": "2", "requests.cpu": "1", "limits.memory": "1Gi"}}}
    scenario = load_scenario([out])
    assert [q.meta.key for q in scenario.objects.of("ResourceQuota")] == ["default/compute"]
    [(refused, message)] = scenario.refused
    assert refused.name.startswith("web-5f8d7c9b4-") and message == (
        'pods "web-5f8d7c9b4-" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=3, '
        'limited: pods=3')
    assert sum(1 for p in scenario.pending_pods if p.name.startswith("web-5f8d7c9b4-") and not p.uid) == 1


def test_snapshot_lists_the_priority_classes_templates_name(server: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The PriorityClasses are listed (two pages; value, globalDefault, preemptionPolicy kept). The ReplicaSet
    web-5f8d7c9b4, its template naming `batch-low` (value 100, preemptionPolicy Never) and scaled to 3, owes a pod:
    the Priority admission (plugin/pkg/admission/priority/admission.go `admitPod`) gives it the class's value
    and policy — without the class listed it would refuse it (`no PriorityClass with name batch-low was found`)
    and the ReplicaSet would create nothing."""
    out = _snapshot_with_web_scaled_to(3, server, tmp_path, monkeypatch, priority_class="batch-low")
    classes = {d.name: d.body for d in read_documents(out) if d.kind == "PriorityClass"}
    assert classes["batch-low"] == {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                    "metadata": {"name": "batch-low", "uid": "pc-1"}, "value": 100,
                                    "preemptionPolicy": "Never"}
    assert sorted(classes) == ["batch-low", "system-cluster-critical", "system-node-critical"]
    scenario = load_scenario([out])
    [owed] = [p for p in scenario.pending_pods if p.name.startswith("web-5f8d7c9b4-") and not p.uid]
    assert (owed.priority, owed.preemption_policy) == (100, "Never")
