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

from fuzzing import VERBS, judge, mutate, preload, run_isolated, seed_texts

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
