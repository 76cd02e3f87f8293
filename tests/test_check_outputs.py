"""What `kubefit check` writes for CI, and the packaging CI runs it through:

- JUnit XML that parses (ElementTree, junitparser) and validates (tests/fixtures/junit.xsd) whatever the input
  holds (control characters, bytes that are no UTF-8, very long names), a test case per assertion and version
  with distinct classname and name, a timestamp;
- SARIF 2.1.0 valid against the OASIS schema (tests/fixtures/sarif-schema-2.1.0.json), a rule per assertion kind;
- TAP 14; the GitHub annotations (at the manifest line, relative to the workspace, at most 10 errors, kubefit's
  warnings as `::warning`) and the step outputs;
- the action's steps run by a local stand-in of the GitHub runner (each `run:` step's shell under the
  environment the runner sets: GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_WORKSPACE, GITHUB_ACTION_PATH,
  RUNNER_TEMP, ...; `${{ }}` expressions evaluated; `uses:` steps stood in for), and the README's workflow run
  as written with it (a pull request checked out with fetch-depth: 0, its baseline from origin/main);
- the pre-commit hook on a repository that nests its manifests, through `pre-commit try-repo`; the Dockerfile.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import jsonschema
import junitparser
import pytest
import yaml

from kubefit.cli import main
from test_check_ci import deployment, expectations, git, node, write
from xsdcheck import Schema

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
FIXTURES = ROOT / "tests" / "fixtures"
EXAMPLE = ROOT / "examples" / "check"
PRE_COMMIT = Path(sys.executable).with_name("pre-commit")


@pytest.fixture(autouse=True)
def no_github(monkeypatch):
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "GITHUB_WORKSPACE", "RUNNER_TEMP"):
        monkeypatch.delenv(name, raising=False)


def run(args: list[str], capsys) -> tuple[int, str, str]:
    rc = main(args)
    out, err = capsys.readouterr()
    return rc, out, err


def example_args() -> list[str]:
    return ["check", "-f", str(EXAMPLE / "candidate.yaml"), "--baseline", str(EXAMPLE / "baseline.yaml"),
            "--expect", str(EXAMPLE / "expectations.yaml")]


@pytest.fixture
def hostile(tmp_path) -> list[str]:
    """A scenario in a file whose name holds a control character and a byte that is no UTF-8, checked with an
    expectation file whose name holds a bell, an escape and 2,000 characters: two pending pods (two 3-cpu
    pods on one 4-cpu node), so the findings carry the file's name."""
    name = os.fsdecode(b"clu\x01ster-\xff.yaml")
    path = write(tmp_path / name, node("n1"), deployment("web", 2, 3))
    expect = expectations(tmp_path / "e.yaml", {"maxPending": 0, "fullyPlaced": ["deployment/web"]},
                          metadata={"name": "shop\x07\x1b[31m" + "x" * 2000})
    return ["check", "-f", path, "--expect", expect]


# --------------------------------------------------------------------------- JUnit

def test_junit_of_hostile_input_parses_and_validates(hostile, tmp_path, capsys):
    """Before, the control character was written raw: ElementTree and junitparser refused the file."""
    out = tmp_path / "check.xml"
    rc, _, _ = run([*hostile, "--junit", str(out)], capsys)
    assert rc == 1
    root = ET.parse(out).getroot()
    assert Schema(FIXTURES / "junit.xsd").validate(root) == []
    text = out.read_text(encoding="utf-8")
    assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f]", text) and "\\x07\\x1b" in text and "\\xff" in text
    suite = next(iter(junitparser.JUnitXml.fromfile(str(out))))
    cases = list(suite)
    assert [c.name for c in cases] == ["pending pods ≤ 0", "deployment/web fully placed"]
    assert len(suite.name) <= 500 and all(not c.is_passed for c in cases)


def test_junit_cases_of_two_versions_differ_and_carry_a_timestamp(tmp_path, capsys):
    """Two versions: a suite each, every (classname, name) distinct (reporters key a test by both); each suite's
    timestamp an ISO date and time."""
    out = tmp_path / "check.xml"
    rc, _, _ = run([*example_args(), "--kube-version", "1.34,1.37", "--junit", str(out)], capsys)
    assert rc == 1
    xml = junitparser.JUnitXml.fromfile(str(out))
    keys = [(c.classname, c.name) for suite in xml for c in suite]
    assert len(keys) == 12 and len(set(keys)) == 12
    assert keys[0] == ("kubefit.check.v1_34.simulate", "pending pods ≤ the baseline (Kubernetes 1.34)")
    for suite in xml:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", suite.timestamp)


def test_junit_on_stdout(capsys):
    rc, out, _ = run([*example_args(), "-o", "junit"], capsys)
    root = ET.fromstring(out.split("\n", 1)[1])
    assert rc == 1 and root.get("failures") == "2" and Schema(FIXTURES / "junit.xsd").validate(root) == []


def test_a_warning_that_only_reports_is_no_junit_failure(tmp_path, capsys):
    """`maxPending: {max: 0, severity: warning}` does not hold: the case passes, its verdict in system-err."""
    path = write(tmp_path / "c.yaml", node("n1"), deployment("web", 2, 3))
    expect = expectations(tmp_path / "e.yaml", {"maxPending": {"max": 0, "severity": "warning"}})
    rc, out, _ = run(["check", "-f", path, "--expect", expect, "-o", "junit"], capsys)
    case = ET.fromstring(out.split("\n", 1)[1]).find("testsuite/testcase")
    assert rc == 0 and case.find("failure") is None and "severity warning" in case.find("system-err").text


# --------------------------------------------------------------------------- SARIF

def sarif_schema() -> dict:
    return json.loads((FIXTURES / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))


def test_sarif_validates_and_names_a_rule_per_assertion_kind(tmp_path, capsys, monkeypatch):
    """The example's two failures (maxPending, fullyPlaced of batch) are results of their rules at the batch
    Deployment's line (23 of candidate.yaml), relative to the workspace; the schema accepts the log."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(ROOT))
    rc, out, _ = run([*example_args(), "-o", "sarif"], capsys)
    log = json.loads(out)
    jsonschema.validate(log, sarif_schema())
    run_ = log["runs"][0]
    assert rc == 1 and [r["id"] for r in run_["tool"]["driver"]["rules"]] == ["maxPending", "fullyPlaced"]
    results = run_["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [("maxPending", "error"), ("fullyPlaced", "error")]
    location = results[0]["locations"][0]["physicalLocation"]
    assert location == {"artifactLocation": {"uri": "examples/check/candidate.yaml", "uriBaseId": "%SRCROOT%"},
                        "region": {"startLine": 23}}


def test_sarif_of_hostile_input_validates(hostile, tmp_path, capsys):
    path = tmp_path / "check.sarif"
    rc, _, _ = run([*hostile, "--sarif", str(path), "--strict"], capsys)
    log = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(log, sarif_schema())
    assert rc == 1 and all("\x01" not in r["message"]["text"] for r in log["runs"][0]["results"])


def test_the_schema_check_is_not_vacuous():
    """A level SARIF does not know and a missing version are refused by the vendored schema."""
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "kubefit"}},
                                         "results": [{"message": {"text": "x"}, "level": "fatal"}]}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, sarif_schema())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"runs": []}, sarif_schema())


# --------------------------------------------------------------------------- TAP

def test_tap(tmp_path, capsys):
    """TAP 14: the plan, a point per assertion, the failures' YAML blocks; a `#` in a title is escaped."""
    rc, out, _ = run([*example_args(), "-o", "tap"], capsys)
    lines = out.splitlines()
    assert rc == 1 and lines[:3] == ["TAP version 14", "1..6", "not ok 1 - pending pods ≤ the baseline"]
    points = [line for line in lines if re.match(r"(not )?ok \d+ - ", line)]
    assert [p.startswith("ok") for p in points] == [False, True, False, True, True, True]
    block = out.split("  ---\n", 1)[1].split("  ...\n", 1)[0]
    diagnostics = yaml.safe_load("\n".join(line[2:] for line in block.splitlines()))
    assert diagnostics["status"] == "failed" and diagnostics["actual"] == 1
    assert diagnostics["at"][0].startswith(f"{EXAMPLE / 'candidate.yaml'}:23 (default/deployment/batch)")
    path = write(tmp_path / "c.yaml", node("n1"), deployment("web", 1, 1))
    expect = expectations(tmp_path / "e.yaml", {"maxPending": 0}, metadata={"name": "x"})
    rc, out, _ = run(["check", "-f", path, "--expect", expect, "--min-allocation", "cpu=10", "-o", "tap"], capsys)
    assert rc == 0 and "ok 2 - cpu allocation ≥ 10 %" in out


# --------------------------------------------------------------------------- GitHub: annotations and outputs

def sixteen(tmp_path: Path) -> str:
    """One 1-cpu node; sixteen Deployments of one 2-cpu pod each: none fits, sixteen workloads with a pending pod,
    so sixteen findings of `maxPending: 0`."""
    return write(tmp_path / "c.yaml", node("n1", 1), *(deployment(f"w{i:02d}", 1, 2) for i in range(16)))


def test_annotations_are_capped_at_ten_errors(tmp_path, capsys, monkeypatch):
    """GitHub shows 10 error annotations per step: 9 findings, and a 10th saying 7 more (before: 16 lines)."""
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    rc, out, _ = run(["check", "-f", sixteen(tmp_path), "--max-pending", "0"], capsys)
    errors = [line for line in out.splitlines() if line.startswith("::error")]
    assert rc == 1 and len(errors) == 10
    assert "line=" in errors[0] and "default/deployment/w00: 1 pod(s) pending" in errors[0]
    assert errors[-1].startswith("::error title=kubefit check%3A 7 more errors::7 more errors: the job summary")


def test_annotations_point_at_the_workspace_relative_line_and_warnings_too(tmp_path, capsys, monkeypatch):
    """In a workspace, a finding's file is relative to it (what GitHub matches to the diff); kubefit's warning that
    web's controller cannot create its pods is a `::warning`."""
    write(tmp_path / "cluster" / "nodes.yaml", node("n1", 8))
    write(tmp_path / "cluster" / "web.yaml", deployment("web", 2, 1, "shop", priorityClassName="nope"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    rc, out, _ = run(["check", "-f", str(tmp_path / "cluster"), "--max-pending", "0"], capsys)
    lines = out.splitlines()
    errors = [line for line in lines if line.startswith("::error")]
    warnings = [line for line in lines if line.startswith("::warning")]
    assert rc == 1 and errors[0].startswith("::error file=cluster/web.yaml,line=1,title=kubefit check%3A pending pods")
    assert len(warnings) == 1 and "its controller cannot create 2 pod(s)" in warnings[0]
    assert warnings[0].startswith("::warning file=cluster/web.yaml,line=1,title=kubefit%3A warning::Deployment/web")


def test_github_output_and_step_outputs(tmp_path, capsys, monkeypatch):
    """$GITHUB_OUTPUT gets passed, failed, errors, warnings and the summary's path (a copy in $RUNNER_TEMP)."""
    outputs, summary = tmp_path / "output", tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_OUTPUT", str(outputs))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("RUNNER_TEMP", str(tmp_path))
    rc, _, _ = run(example_args(), capsys)
    values = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    assert rc == 1 and values == {"passed": "false", "failed": "2", "errors": "0", "warnings": "0",
                                  "summary": str(tmp_path / "kubefit-check-summary.md")}
    assert Path(values["summary"]).read_text() == summary.read_text()
    assert "**Before → after**: 1 workload(s) change" in summary.read_text()


def test_output_github_prints_the_workflow_commands(capsys):
    rc, out, _ = run([*example_args(), "-o", "github"], capsys)
    assert rc == 1 and [line[:8] for line in out.splitlines()] == ["::error ", "::error "]


def test_annotations_of_hostile_input_are_single_lines(hostile, capsys):
    rc, out, _ = run([*hostile, "-o", "github"], capsys)
    lines = out.splitlines()
    assert rc == 1 and len(lines) == 2 and all(line.startswith("::error file=") for line in lines)
    assert "\\x01" in lines[0] and "\x01" not in out and "\x07" not in out


# --------------------------------------------------------------------------- the action, on a runner stand-in

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def evaluate(expr: str, context: dict):
    """The few GitHub expressions the action and the README's workflow use: a context path (`inputs.files`,
    `steps.check.outputs.passed`), `always()`, and `X == 'literal'`."""
    if expr == "always()":
        return True
    if "==" in expr:
        left, right = (part.strip() for part in expr.split("=="))
        return str(evaluate(left, context)) == right.strip("'")
    value = context
    for part in expr.split("."):
        value = value.get(part, "") if isinstance(value, dict) else ""
    return value


def substitute(text: str, context: dict) -> str:
    return EXPRESSION.sub(lambda m: str(evaluate(m.group(1), context)), str(text))


def python_stand_in(bin_dir: Path, pip_log: Path) -> None:
    """`python` for the steps: `python -m pip install X` is recorded (nothing is downloaded), anything else runs
    this Python; `kubefit` runs this checkout."""
    bin_dir.mkdir(exist_ok=True)
    py = bin_dir / "python"
    py.write_text(f'#!/bin/sh\nif [ "$1" = "-m" ] && [ "$2" = "pip" ]; then echo "$@" >> {pip_log}; exit 0; fi\n'
                  f'exec {sys.executable} "$@"\n')
    kubefit = bin_dir / "kubefit"
    kubefit.write_text(f'#!/bin/sh\nPYTHONPATH={SRC} exec {sys.executable} -m kubefit.cli "$@"\n')
    for f in (py, kubefit):
        f.chmod(0o755)


def run_action(action_dir: Path, given: dict, workspace: Path, temp: Path, github: dict | None = None) -> dict:
    """The composite action at `action_dir` as the runner runs it: inputs resolved (the given, else defaults;
    an input the action does not declare is refused), each step's `if` evaluated, `uses:` steps recorded, each
    `run:` step's script run by `bash --noprofile --norc -eo pipefail` in the workspace under the runner's
    environment, its $GITHUB_OUTPUT read into `steps.<id>.outputs`; the action's outputs evaluated."""
    action = yaml.safe_load((action_dir / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    unknown = set(given) - set(action["inputs"])
    assert not unknown, f"inputs the action does not declare: {unknown}"
    inputs = {name: str(given.get(name, spec.get("default", ""))) for name, spec in action["inputs"].items()}
    for name, spec in action["inputs"].items():
        assert spec.get("description"), f"input {name} is documented"
        assert not spec.get("required") or inputs[name], f"input {name} is required"
    bin_dir, pip_log, summary = temp / "bin", temp / "pip.log", temp / "summary.md"
    python_stand_in(bin_dir, pip_log)
    context = {"inputs": inputs, "runner": {"os": "Linux", "temp": str(temp)}, "steps": {},
               "github": {"action_path": str(action_dir), "action_ref": "v1", "workspace": str(workspace),
                          **(github or {})}}
    used, code = [], 0
    for i, step in enumerate(action["runs"]["steps"]):
        if "if" in step and not evaluate(step["if"], context):
            continue
        if "uses" in step:
            used.append((step["uses"], {k: substitute(v, context) for k, v in (step.get("with") or {}).items()}))
            continue
        output = temp / f"output-{i}"
        output.touch()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_", "KUBEFIT_"))}
        env.update({"PATH": f"{bin_dir}{os.pathsep}{env['PATH']}", "GITHUB_ACTIONS": "true", "CI": "true",
                    "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary),
                    "GITHUB_WORKSPACE": str(workspace), "GITHUB_ACTION_PATH": str(action_dir),
                    "RUNNER_TEMP": str(temp), "RUNNER_OS": "Linux"})
        env.update({k: substitute(v, context) for k, v in (step.get("env") or {}).items()})
        script = temp / f"step-{i}.sh"
        script.write_text(substitute(step["run"], context))
        assert step["shell"] == "bash"
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=workspace,
                              env=env, capture_output=True, text=True, timeout=300)
        values = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
        context["steps"][step.get("id", str(i))] = {"outputs": values, "stdout": done.stdout, "stderr": done.stderr}
        code = done.returncode
        if code:
            break
    outputs = {name: substitute(spec["value"], context) for name, spec in action.get("outputs", {}).items()}
    return {"code": code, "outputs": outputs, "used": used, "steps": context["steps"],
            "pip": pip_log.read_text().split() if pip_log.exists() else [],
            "summary": summary.read_text() if summary.exists() else ""}


def test_the_action_installs_itself_pinned_and_exposes_outputs(tmp_path):
    """Its defaults: kubefit installed from the action's own checkout (GITHUB_ACTION_PATH, the ref pinned), pip's
    cache restored, the example failing (exit 1) with its annotations at the manifest line, and the action's
    outputs. Before, the default installed `kubefit` from the index (not published) and there were no outputs."""
    work = tmp_path / "ws"
    shutil.copytree(EXAMPLE, work / "cluster")
    temp = tmp_path / "temp"
    temp.mkdir()
    done = run_action(ROOT, {"files": "cluster/candidate.yaml", "baseline": "cluster/baseline.yaml",
                             "expect": "cluster/expectations.yaml", "junit": "check.xml", "sarif": "check.sarif"},
                      work, temp)
    assert done["pip"][-1] == str(ROOT)  # pip install <the action's own checkout>
    assert [u for u, _ in done["used"]] == ["actions/setup-python@v5", "actions/cache@v4"]
    cache = done["used"][1][1]
    assert cache["path"] == "~/.cache/pip" and cache["key"] == "kubefit-pip-Linux-py3.12-v1-"
    assert done["code"] == 1
    assert done["outputs"] == {"passed": "false", "failed": "2", "errors": "0", "warnings": "0",
                               "summary": str(temp / "kubefit-check-summary.md")}
    stdout = done["steps"]["check"]["stdout"]
    assert "::error file=cluster/candidate.yaml,line=23," in stdout
    assert (work / "check.xml").is_file() and json.loads((work / "check.sarif").read_text())["version"] == "2.1.0"
    assert done["summary"].startswith("### ❌ kubefit check: shop")


def test_the_action_installs_a_given_version_and_refuses_a_bad_one(tmp_path):
    work, temp = tmp_path / "ws", tmp_path / "temp"
    shutil.copytree(EXAMPLE, work)
    temp.mkdir()
    args = {"files": "candidate.yaml", "args": "--max-pending 1", "version": "1.2.3", "cache": "false"}
    done = run_action(ROOT, args, work, temp)
    assert done["pip"][-1] == "kubefit==1.2.3" and done["code"] == 0 and done["outputs"]["passed"] == "true"
    assert [u for u, _ in done["used"]] == ["actions/setup-python@v5"]  # no cache asked
    done = run_action(ROOT, {**args, "version": "1.0; rm -rf /"}, work, tmp_path / "temp")
    assert done["code"] == 2 and "version: not a version" in done["steps"]["2"]["stdout"]


def readme_workflow() -> dict:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("# .github/workflows/scheduling.yaml\n", 1)[1].split("```", 1)[0]
    return yaml.safe_load(block)


def test_the_readme_workflow_runs_as_written(tmp_path):
    """The README's workflow on a pull request whose base is main: checkout with its `fetch-depth: 0` (a full
    clone), then the action with the workflow's own `with:` (baseline origin/${{ github.base_ref }}). The
    repository holds examples/check as cluster/ (the change: batch added) and kubefit-check.yaml at its root;
    the check fails (exit 1) as the example does, with the baseline read from main. Before, the baseline was a
    file and the shallow checkout had no origin/main."""
    workflow = readme_workflow()
    assert workflow["permissions"] == {"contents": "read", "security-events": "write"}
    steps = workflow["jobs"]["kubefit"]["steps"]
    origin, seed = tmp_path / "origin.git", tmp_path / "seed"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    git(tmp_path, "clone", "-q", str(origin), str(seed))
    git(seed, "checkout", "-q", "-b", "main")
    (seed / "cluster").mkdir()
    shutil.copy(EXAMPLE / "baseline.yaml", seed / "cluster" / "workloads.yaml")
    shutil.copy(EXAMPLE / "node-template.yaml", seed / "node-template.yaml")
    body = yaml.safe_load((EXAMPLE / "expectations.yaml").read_text())
    (seed / "kubefit-check.yaml").write_text(yaml.safe_dump(body))
    git(seed, "add", "-A")
    git(seed, "commit", "-qm", "main")
    git(seed, "push", "-q", "origin", "main")
    git(seed, "checkout", "-q", "-b", "change")
    shutil.copy(EXAMPLE / "candidate.yaml", seed / "cluster" / "workloads.yaml")
    git(seed, "commit", "-qam", "add batch")
    git(seed, "push", "-q", "origin", "change")
    workspace, temp = tmp_path / "workspace", tmp_path / "temp"
    temp.mkdir()
    github = {"base_ref": "main", "head_ref": "change"}
    results = {}
    for step in steps:
        uses = step["uses"]
        if uses.startswith("actions/checkout@"):
            depth = (step.get("with") or {}).get("fetch-depth", 1)
            clone = ["clone", "-q", "--branch", "change"] + ([] if depth == 0 else [f"--depth={depth}"])
            git(tmp_path, *clone, f"file://{origin}", str(workspace))
        elif uses.startswith("kubefit/kubefit@"):
            given = {k: substitute(v, {"github": github}) for k, v in step["with"].items()}
            results[step["id"]] = run_action(ROOT, given, workspace, temp, github)
        else:  # github/codeql-action/upload-sarif: the file it uploads is there
            assert uses.startswith("github/codeql-action/upload-sarif@") and step["if"] == "always()"
            assert (workspace / step["with"]["sarif_file"]).is_file()
    done = results["check"]
    assert done["code"] == 1, done["steps"]
    assert done["outputs"]["passed"] == "false" and done["outputs"]["failed"] == "2"
    assert "::error file=cluster/workloads.yaml,line=23," in done["steps"]["check"]["stdout"]
    assert "**Before → after**" in done["summary"]


# --------------------------------------------------------------------------- pre-commit and Docker

def test_hooks_manifest():
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert {h["id"] for h in hooks} == {"kubefit-check", "kubefit-check-system"}
    for hook in hooks:
        assert hook["entry"] == "kubefit check" and hook["pass_filenames"] is False
        assert hook["args"] == ["--expect", "kubefit-check.yaml", "-R"]


@pytest.fixture
def kubefit_on_path(tmp_path):
    """A `kubefit` command on PATH running this checkout (as `pip install` would put one)."""
    bin_dir = tmp_path / "bin"
    python_stand_in(bin_dir, tmp_path / "pip.log")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PRE_COMMIT"))}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    env.pop("KUBEFIT_KUBE_VERSION", None)
    return env


@pytest.mark.skipif(not PRE_COMMIT.exists() and not shutil.which("pre-commit"), reason="pre-commit is not installed")
@pytest.mark.parametrize(("pending", "code"), [(0, 0), (1, 1)])
def test_pre_commit_on_nested_folders(pending, code, tmp_path, kubefit_on_path):
    """`pre-commit try-repo <this repository> kubefit-check-system` in a git repository whose manifests are nested
    (cluster/nodes/n1.yaml, cluster/apps/shop/web.yaml) and whose kubefit-check.yaml names `cluster/`: the hook's
    default -R reads them all. One 4-cpu node, web's pods of 3 and 2 cpu: one pending; maxPending 1 passes, 0
    fails."""
    repo = tmp_path / "repo"
    write(repo / "cluster" / "nodes" / "n1.yaml", node("n1"))
    write(repo / "cluster" / "apps" / "shop" / "a.yaml", deployment("a", 1, 3))
    write(repo / "cluster" / "apps" / "shop" / "b.yaml", deployment("b", 1, 2))
    expectations(repo / "kubefit-check.yaml", {"maxPending": 1 - pending}, files=["cluster/"])
    env = {**kubefit_on_path, "PRE_COMMIT_HOME": str(tmp_path / "cache")}
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    exe = str(PRE_COMMIT) if PRE_COMMIT.exists() else "pre-commit"
    done = subprocess.run([exe, "try-repo", str(ROOT), "kubefit-check-system", "--all-files", "--verbose"],
                          cwd=repo, env={**env, "GIT_CONFIG_GLOBAL": "/dev/null"}, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == code, done.stdout + done.stderr
    assert ("1 of 1 assertion hold" if code == 0 else "0 of 1 assertion hold, 1 failed") in done.stdout


def test_dockerfile_builds_this_checkout_and_runs_kubefit():
    """The image installs the wheel of this checkout (its compiled parts checked) and runs `kubefit`; what Docker
    leaves out (.dockerignore) is no part of the wheel."""
    text = (ROOT / "Dockerfile").read_text()
    assert "COPY . ." in text and "pip wheel" in text and "libyaml-dev" in text and "libyaml-0-2" in text
    assert 'ENTRYPOINT ["kubefit"]' in text and "kubefit.manifests._reader" in text and " git" in text
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert ".git" in ignored and ".venv" in ignored and "src" not in ignored
