"""`ValidateCluster` checks other than the resource models: name, syncMode, secret refs, endpoint,
proxy URL, provider/region/zone(s) labels, taints — the field errors Karmada's API refuses a Cluster with.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlparse

_RFC1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_RFC1123_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
                "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
                "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
_LABEL_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
              "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
              "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
MAX_NAME_LENGTH = 48


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _label_value(value: Any, path: str) -> list[str]:
    value = str(value or "")
    errs = []
    if len(value) > 63:
        errs.append(f"{path}: Invalid value: {_q(value)}: must be no more than 63 characters")
    if not _LABEL_VALUE.match(value):
        errs.append(f"{path}: Invalid value: {_q(value)}: {_LABEL_MSG}")
    return errs


def _name_errors(meta: dict[str, Any]) -> list[str]:
    name = str(meta.get("name") or "")
    if not name:
        return ["metadata.name: Required value: name or generateName is required"]
    errs = []
    if len(name) > 63:
        errs.append(f"metadata.name: Invalid value: {_q(name)}: must be no more than 63 characters")
    if not _RFC1123_LABEL.match(name):
        errs.append(f"metadata.name: Invalid value: {_q(name)}: {_RFC1123_MSG}")
    if len(name) > MAX_NAME_LENGTH:
        errs.append(f"metadata.name: Invalid value: {_q(name)}: must be no more than {MAX_NAME_LENGTH} characters")
    return errs


def _secret_ref(ref: Any, path: str) -> list[str]:
    if not isinstance(ref, dict):
        return []
    return [f"{path}.{key}: Required value" for key in ("namespace", "name") if not ref.get(key)]


def _go_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).replace("<", "\\u003c").replace(
        ">", "\\u003e").replace("&", "\\u0026")


def _secret_ref_go(ref: Any) -> Any:
    if not isinstance(ref, dict):
        return None
    return {"Namespace": str(ref.get("namespace") or ""), "Name": str(ref.get("name") or "")}


def render_spec_go(spec: dict[str, Any], models_go: str) -> str:
    """The internal ClusterSpec as `field.Invalid` prints it: JSON with Go field names (zones keeps its tag)."""
    taints = spec.get("taints")
    parts = [
        ("SyncMode", _go_json(str(spec.get("syncMode") or ""))),
        ("APIEndpoint", _go_json(str(spec.get("apiEndpoint") or ""))),
        ("SecretRef", _go_json(_secret_ref_go(spec.get("secretRef")))),
        ("ImpersonatorSecretRef", _go_json(_secret_ref_go(spec.get("impersonatorSecretRef")))),
        ("InsecureSkipTLSVerification", _go_json(bool(spec.get("insecureSkipTLSVerification")))),
        ("ProxyURL", _go_json(str(spec.get("proxyURL") or ""))),
        ("ProxyHeader", _go_json(spec.get("proxyHeader"))),
        ("Provider", _go_json(str(spec.get("provider") or ""))),
        ("Region", _go_json(str(spec.get("region") or ""))),
        ("Zone", _go_json(str(spec.get("zone") or ""))),
        ("zones", _go_json(spec.get("zones"))),
        ("Taints", _go_json(taints)),
        ("ResourceModels", models_go),
    ]
    return "{" + ",".join(f'"{k}":{v}' for k, v in parts) + "}"


def validate_cluster_fields(body: dict[str, Any], models_go: str = "null") -> list[str]:
    """Field errors of a Cluster outside `spec.resourceModels`, in Karmada's order and wording.

    `models_go` is the (prepared) model list as Go renders it, part of the zone/zones message."""
    meta = body.get("metadata") or {}
    spec = body.get("spec") or {}
    errs = _name_errors(meta)
    sync_mode = str(spec.get("syncMode") or "")
    if not sync_mode:
        errs.append("spec.syncMode: Required value")
    if sync_mode not in ("Pull", "Push"):
        errs.append(f'spec.syncMode: Unsupported value: {_q(sync_mode)}: supported values: "Pull", "Push"')
    endpoint = str(spec.get("apiEndpoint") or "")
    if endpoint and not urlparse(endpoint).hostname and not re.match(r"^[A-Za-z0-9.-]+(:\d+)?$", endpoint):
        errs.append('spec.apiEndpoint: Invalid value: "": host must be provided; desired format: hostname, '
                    "hostname:port, IP or IP:port")
    errs += _secret_ref(spec.get("secretRef"), "spec.secretRef")
    errs += _secret_ref(spec.get("impersonatorSecretRef"), "spec.impersonatorSecretRef")
    proxy = str(spec.get("proxyURL") or "")
    if proxy:
        scheme = urlparse(proxy).scheme
        if scheme not in ("http", "https", "socks5"):
            errs.append(f"spec.proxyURL: Invalid value: {_q(proxy)}: unsupported scheme {_q(scheme)}, "
                        f"must be http, https, or socks5")
    errs += _label_value(spec.get("provider"), "spec.provider")
    errs += _label_value(spec.get("region"), "spec.region")
    errs += _label_value(spec.get("zone"), "spec.Zone")
    for zone in spec.get("zones") or []:
        errs += _label_value(zone, "spec.Zones")
    if spec.get("zone") and spec.get("zones"):
        errs.append(f"spec.spec: Invalid value: {render_spec_go(spec, models_go)}: Zone and Zones cannot co-exist")
    for i, taint in enumerate(spec.get("taints") or []):
        effect = str((taint or {}).get("effect") or "")
        if effect not in ("NoSchedule", "NoExecute"):
            errs.append(f'spec.taints[{i}].effect: Unsupported value: {_q(effect)}: supported values: '
                        f'"NoSchedule", "NoExecute"')
    return errs
