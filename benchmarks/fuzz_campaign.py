"""The reliability campaign: N seeded mutants of the example and golden scenarios, each run by a verb.

    .venv/bin/python benchmarks/fuzz_campaign.py --mutants 10000 --seed 12

Each mutant (tests/fuzzing.py) is written to a file and given to one verb, chosen by the seed, in a
forked child bounded to 20 s and 3 GiB of address space; the contract (exit 0/1, or exit 2 with one
`error:` line naming the file; no hang, no run over 2 GiB, no dropped key or ignored field) is judged
for each.  Prints a count per breach class and the first examples of each; exit 1 if any breach.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fuzzing import VERBS, judge, mutate, preload, run_isolated, seed_texts  # noqa: E402


def campaign(mutants: int, seed: int, workdir: Path, examples: int = 3) -> tuple[Counter, dict, float]:
    """Run the campaign; (breaches by class, first examples by class, slowest run in seconds)."""
    preload()
    rng = random.Random(seed)
    seeds = seed_texts(golden_cases=24, rng=random.Random(seed))
    breaches: Counter = Counter()
    shown: dict[str, list[str]] = defaultdict(list)
    slowest = 0.0
    for i in range(mutants):
        name, text = rng.choice(seeds)
        mutant = mutate(name, text, rng)
        path = workdir / f"mutant-{i}{mutant.suffix}"
        path.write_text(mutant.text, encoding="utf-8", errors="surrogateescape")
        argv = [a.replace("{f}", str(path)) for a in rng.choice(VERBS)]
        outcome = run_isolated(argv)
        slowest = max(slowest, outcome.seconds)
        verdict = judge(mutant, str(path), outcome)
        path.unlink()
        if verdict.problem:
            breaches[verdict.problem] += 1
            if len(shown[verdict.problem]) < examples:
                shown[verdict.problem].append(f"#{i} {mutant.mutation} of {name} · {' '.join(argv[:2])}: "
                                              f"{verdict.detail}")
        if (i + 1) % 500 == 0:
            print(f"{i + 1} mutants, {sum(breaches.values())} breaches", file=sys.stderr, flush=True)
    return breaches, shown, slowest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mutants", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--examples", type=int, default=3, help="examples printed per breach class")
    args = parser.parse_args()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kubefit-fuzz-") as tmp:
        breaches, shown, slowest = campaign(args.mutants, args.seed, Path(tmp), args.examples)
    print(f"{args.mutants} mutants (seed {args.seed}) in {time.monotonic() - started:.0f} s, "
          f"slowest run {slowest:.1f} s: {sum(breaches.values())} breaches")
    for problem, count in breaches.most_common():
        print(f"  {problem}: {count}")
        for line in shown[problem]:
            print(f"    {line}")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
