"""Shared test helpers: where the golden cases are, and reading them in place (never copied)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = ROOT.parent / "shared"
GOLDEN_DIR = SHARED_DIR / "golden"
SHARED_ABSENT = (f"golden data absent: {SHARED_DIR} (../shared next to the project) does not exist; "
                 f"CI always has it (.ci/run sets KUBEFIT_REQUIRE_GOLDEN=1, which makes this an error)")


@cache
def _read(relative: str) -> tuple[dict, ...]:
    with open(GOLDEN_DIR / relative, encoding="utf-8") as fh:
        return tuple(json.loads(line) for line in fh if line.strip())


def golden_cases(relative: str) -> list[dict]:
    """The cases of one golden file (e.g. "kube-scheduler/cases.jsonl"), in file order."""
    return list(_read(relative))


def run_json(capsys, *args: str) -> tuple[int, dict, str]:
    """Run `kubefit ARGS -o json` in-process: exit code, the parsed output ({} when none), stderr."""
    from kubefit.cli import main

    rc = main([*args, "-o", "json"])
    out = capsys.readouterr()
    return rc, (json.loads(out.out) if out.out.strip() else {}), out.err


def score_items(tmp_path, capsys, items: list[dict], *args: str, suffix: str = "json") -> dict:
    """`kubefit score --no-admission --detail ARGS -o json` of `items` written as one JSON List (the fast pod
    decoder) or as YAML documents (suffix "yaml": load.py's decoder); the run must succeed."""
    path = tmp_path / f"cluster.{suffix}"
    if suffix == "json":
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    else:
        import yaml

        path.write_text(yaml.safe_dump_all(items))
    rc, out, err = run_json(capsys, "score", "-f", str(path), "--no-admission", "--detail", *args)
    assert rc == 0, err
    return out


def many_nodes_result(nodes: int, pods: int | None = None):
    """A simulation of `nodes` 4-cpu/16Gi nodes and `pods` (default 2 per node) pending 1-cpu/2Gi pods, with
    names made of the index (`node-0007`), under kube-scheduler's default configuration."""
    from kubefit.api.core import Container, Node, Pod
    from kubefit.k8s.quantity import parse_quantity
    from kubefit.scheduler.config import default_configuration
    from kubefit.scheduler.simulate import simulate
    from kubefit.scheduler.state import compile_state

    alloc = {"cpu": parse_quantity("4"), "memory": parse_quantity("16Gi"), "pods": parse_quantity("110")}
    request = (Container("app", {"cpu": parse_quantity("1"), "memory": parse_quantity("2Gi")}),)
    node_list = [Node(f"node-{i:04d}", dict(alloc)) for i in range(nodes)]
    pod_list = [Pod(f"pod-{i:05d}", containers=request) for i in range(2 * nodes if pods is None else pods)]
    return simulate(compile_state(node_list, pod_list), default_configuration(), pod_list, tie_break="first")


def at_pointer(data, at: str):
    """The value at JSON Pointer `at` (RFC 6901) of a `-o json` dict."""
    for part in at.split("/")[1:]:
        key = part.replace("~1", "/").replace("~0", "~")
        data = data[int(key)] if isinstance(data, list) else data[key]
    return data


def shown(text: str):
    """A number as the HTML report prints it (`1,234`, `64.25 %`, `yes`) back as a JSON value."""
    t = text.replace(",", "").replace("%", "").strip()
    return t == "yes" if t in ("yes", "no") else json.loads(t)


def tagged_values(page: str) -> list[tuple[str, str]]:
    """(JSON Pointer, text shown) of every value an HTML report tags with `data-json` (read as text, no browser)."""
    import html
    import re

    return [(html.unescape(at), html.unescape(text))
            for at, text in re.findall(r'<span class="value" data-json="([^"]*)">([^<]*)</span>', page)]
