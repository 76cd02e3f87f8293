"""What the `kubefit` command pays before and around its verb: the modules it imports and the cyclic collector.

`import kubefit` imports none of the verbs (each public name is imported when first read), so `kubefit.cli.run`
sets the collector's threshold before a verb's modules are imported, and a verb imports only its own modules:
`kubefit simulate -o json` never imports plotting, the HTML report, Optuna, Dask or the kubernetes client.
Each check runs in a fresh interpreter (this process has imported everything already).
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import kubefit
from kubefit import collector, verbs

ROOT = Path(__file__).resolve().parents[1]
WORKLOAD = "examples/workload/cluster.yaml"
# modules no `simulate -o json` needs (their verbs, options and outputs import them when used)
HEAVY = ("rich", "matplotlib", "plotly", "optuna", "dask", "distributed", "kubernetes", "scipy", "pandas",
         "jinja2", "urllib3", "kubefit.report.html", "kubefit.report.plots", "kubefit.planning",
         "kubefit.multicluster", "kubefit.manifests.usage")  # (usage: right-sizing, with --requests-from only)


def fresh(code: str, *args: str) -> str:
    """stdout of `code` run by a new interpreter in the project's root."""
    out = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout


def test_importing_the_command_imports_no_verb():
    """`import kubefit.cli` (what `python -m kubefit.cli` and the `kubefit` script do before `run`) loads
    kubefit's package, the command's module, the errors and the dataclasses' bytecode cache (installed by the
    package, `kubefit.dataclasscode`), and neither numpy nor any scheduler module."""
    loaded = json.loads(fresh("import json, sys, kubefit.cli; print(json.dumps(sorted(sys.modules)))"))
    assert sorted(m for m in loaded if m.split(".")[0] == "kubefit") == \
        ["kubefit", "kubefit.cli", "kubefit.dataclasscode", "kubefit.errors"]
    assert "numpy" not in loaded


def test_simulate_imports_none_of_the_heavy_modules():
    """The benchmark's path, `kubefit simulate -o json`, imports what scheduling needs and nothing in HEAVY
    (an import at module level on that path, e.g. of the HTML report or of rich, makes this fail)."""
    code = ("import io, json, sys, contextlib\nfrom kubefit.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out:\n    rc = main(sys.argv[1:])\n"
            "print(json.dumps([rc, json.loads(out.getvalue())['scheduled'], sorted(sys.modules)]))")
    rc, scheduled, loaded = json.loads(fresh(code, "simulate", "-f", WORKLOAD, "-o", "json"))
    assert (rc, scheduled) == (0, 20)  # the workload example's answer (its doctest in verbs.simulate)
    assert [m for m in loaded if m in HEAVY or m.startswith(tuple(f"{h}." for h in HEAVY))] == []


@pytest.mark.parametrize("name", ["kubectl-get-nodes-pods.json", "workload.yaml"])
def test_a_streamed_file_imports_neither_pyyaml_nor_the_fleets_modules(tmp_path, name):
    """A file the streaming reader reads (every file under KUBEFIT_STREAM=always; the large ones otherwise), YAML
    or JSON, and written as JSON: PyYAML (the reference reading's and -o yaml's), the reference reading and
    Karmada's modules stay unimported."""
    path = ROOT / "tests" / "fixtures" / name if name.endswith(".json") else ROOT / WORKLOAD
    code = ("import io, json, sys, contextlib\nfrom kubefit.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out:\n    rc = main(sys.argv[1:])\n"
            "print(json.dumps([rc, sorted(sys.modules)]))")
    out = subprocess.run([sys.executable, "-c", code, "simulate", "-f", str(path), "-o", "json"], cwd=ROOT,
                         capture_output=True, text=True, check=True, env={**os.environ, "KUBEFIT_STREAM": "always"})
    rc, loaded = json.loads(out.stdout)
    assert rc == 0
    assert [m for m in loaded if m.split(".")[0] == "yaml" or m in (
        "kubefit.manifests.parse", "kubefit.manifests.k8syaml", "kubefit.manifests.karmada", "kubefit.api.karmada")] == []


def test_a_public_name_is_imported_when_first_read():
    assert kubefit.simulate is verbs.simulate
    assert "simulate" in dir(kubefit) and "load_scenario" in dir(kubefit)
    with pytest.raises(AttributeError, match="no attribute 'simulat'"):
        kubefit.simulat  # noqa: B018 - the read is the test


GC_CHECK = """
import gc, json, sys
from kubefit.scheduler.simulate import simulate
from kubefit.verbs import node_actions, prepare_files
files, drain = sys.argv[1:-1], sys.argv[-1]

def run():
    actions = node_actions(drain=[drain] if drain else [])
    scenario, prepared, _ = prepare_files(files, "simulate", lambda _: None, actions=actions)
    gc.collect()
    gc.disable()
    result = simulate(prepared.state, prepared.config, scenario.pending_pods, tie_break="first")
    gc.set_debug(gc.DEBUG_SAVEALL)
    found = gc.collect()
    gc.set_debug(0)
    gc.enable()
    return result.scheduled, found

run()  # first run: the classes some modules make on first use
print(json.dumps(run()))
"""


@pytest.mark.parametrize(("files", "drain", "scheduled"), [
    ([WORKLOAD], "", 20),
    (["examples/preemption/cluster.yaml"], "", None),
    (["examples/dra/cluster.yaml"], "", None),
    (["examples/drain/cluster.yaml"], "node-a", None),
    (["tests/fixtures/kubectl-get-nodes-pods.yaml"], "", None),
])
def test_a_simulation_leaves_no_cyclic_garbage(files, drain, scheduled):
    """`verbs.simulate` pauses the cyclic collector around the scheduling run (`collector.kept`), which is safe
    only while that run's garbage all goes by reference counting: after a run (preemption, DRA, a drain, spread
    and affinity) a collection finds nothing unreachable."""
    done, unreachable = json.loads(fresh(GC_CHECK, *files, drain))
    assert unreachable == 0
    assert scheduled is None or done == scheduled


def test_the_simulation_leaves_the_collector_as_it_was(monkeypatch):
    """On after the run when it was on, off when it was off; frozen after only in the command."""
    before = gc.get_freeze_count()
    kubefit.simulate([WORKLOAD], tie_break="first")
    assert gc.isenabled() and gc.get_freeze_count() == before
    gc.disable()
    try:
        kubefit.simulate([WORKLOAD], tie_break="first")
        assert not gc.isenabled()
    finally:
        gc.enable()
    monkeypatch.setattr(collector, "_freezing", [True])
    try:
        kubefit.simulate([WORKLOAD], tie_break="first")
        assert gc.get_freeze_count() > before
    finally:
        gc.unfreeze()


@pytest.mark.parametrize(("given", "seen"), [(None, "1"), ("3", "3")])
def test_the_command_runs_openblas_on_one_thread_unless_told(given, seen):
    """`run` sets OPENBLAS_NUM_THREADS=1 before any verb imports numpy (kubefit calls no BLAS routine; the thread
    pool numpy's OpenBLAS starts per core only spins): the verb and numpy, imported then, see it; a value the user
    set is kept."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    code = ("import os, sys\nfrom kubefit import cli\n"
            "def verb(argv=None):\n    before = 'numpy' in sys.modules\n    import numpy\n"
            "    print(before, os.environ.get('OPENBLAS_NUM_THREADS'))\n    return 0\n"
            "cli.main = verb\ncli.run()")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", seen]
