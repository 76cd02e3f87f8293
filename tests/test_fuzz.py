"""The reliability contract as a property: seeded mutants of the examples and golden scenarios, every verb.

For each verb, `MUTANTS_PER_VERB` mutants (tests/fuzzing.py: values at the edges of int64 and beyond,
duplicated keys, unknown fields, alias bombs, deep nesting, byte noise, …) each run in a forked child
bounded to 20 s and 3 GiB; the run must exit 0/1, or exit 2 with one `error:` line naming the file,
accept no duplicated key and no unknown field without a word, and print no control character of the
input. `benchmarks/fuzz_campaign.py` runs the same contract on 10,000 mutants (README, "Reliability").
"""

from __future__ import annotations

import random

import pytest

from fuzzing import VERBS, Mutant, Outcome, judge, mutate, preload, run_isolated, seed_texts

MUTANTS_PER_VERB = 6


@pytest.fixture(scope="module")
def seeds() -> list[tuple[str, str]]:
    preload()
    return seed_texts(golden_cases=6, rng=random.Random(12))


@pytest.mark.parametrize("verb", VERBS, ids=lambda v: "-".join(a for a in v if a != "{f}"))
def test_every_verb_keeps_the_contract_on_mutants(tmp_path, seeds, verb):
    rng = random.Random(f"kubefit-fuzz-{' '.join(verb)}")
    breaches = []
    for i in range(MUTANTS_PER_VERB):
        name, text = rng.choice(seeds)
        mutant = mutate(name, text, rng)
        path = tmp_path / f"mutant-{i}{mutant.suffix}"
        path.write_text(mutant.text, encoding="utf-8", errors="surrogateescape")
        outcome = run_isolated([a.replace("{f}", str(path)) for a in verb])
        verdict = judge(mutant, str(path), outcome)
        if verdict.problem:
            breaches.append(f"{mutant.mutation} of {name}: {verdict.problem}: {verdict.detail}")
    assert not breaches, breaches


# A pod asking 2^63 cpu where no NodeResourcesFit filters it: BalancedAllocation's int64 sum wraps, as in Go,
# and the framework fails the cycle on the score, (1 - |(1000 + 2^63-1 wrapped) / 4000| / 2) * 100 truncated
# (found by the seed-24 campaign, mutant 4689, on a golden scenario).
WRAPPING_SCENARIO = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: PrioritySort}, {name: NodeResourcesBalancedAllocation, weight: 1}, {name: DefaultBinder}]
      disabled: [{name: "*"}]
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: running}
spec: {nodeName: n1, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: huge}
spec: {containers: [{name: c, resources: {requests: {cpu: "9223372036854775808"}}}]}
"""


@pytest.mark.parametrize("verb", [("score", "-f", "{f}"), ("score", "-f", "{f}", "--explain")])
def test_a_cycle_the_framework_fails_is_an_answer_not_a_breach(tmp_path, verb):
    path = tmp_path / "wrap.yaml"
    path.write_text(WRAPPING_SCENARIO)
    outcome = run_isolated([a.replace("{f}", str(path)) for a in verb])
    wrapped = 1000 + 2**63 - 1 - 2**64
    score = int((1 - abs(wrapped / 4000 - 0) / 2) * 100)
    assert (outcome.code, outcome.stderr.strip()) == (1, (
        f'error: applying score defaultWeights on Score plugins: plugin "NodeResourcesBalancedAllocation" returns '
        f"an invalid score {score}, it should in the range of [0, 100] after normalizing"))
    mutant = Mutant(WRAPPING_SCENARIO, "hand-written", "big-number")
    assert not judge(mutant, str(path), outcome).problem
    succeeded = Outcome(0, outcome.stdout, outcome.stderr, outcome.seconds, outcome.max_rss_bytes)
    assert judge(mutant, str(path), succeeded).problem == "error-with-success"
