"""The reliability campaign: N seeded mutants of the example and golden scenarios, each run by a verb.

    .venv/bin/python benchmarks/fuzz_campaign.py --mutants 10000 --seed 12 --jobs 2

Mutant i is made from its own generator (seed, i), so the result does not depend on --jobs. Each mutant
(tests/fuzzing.py) is written to a file and given to one verb, chosen by that generator, in a forked
child bounded to 20 s and 3 GiB of address space; the contract (exit 0/1, or exit 2 with one `error:`
line naming the file; no hang, no run over 2 GiB, no dropped key or ignored field) is judged for each.
Breaches are printed as they happen, then a count per class; exit 1 if any breach.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fuzzing import VERBS, judge, mutate, preload, run_isolated, seed_texts  # noqa: E402


def run_slice(seed: int, indices: range) -> tuple[Counter, list[str], float]:
    """Mutants `indices` of the campaign: (breaches by class, one line per breach, slowest run in seconds)."""
    preload()
    seeds = seed_texts(golden_cases=24, rng=random.Random(seed))
    breaches: Counter = Counter()
    lines: list[str] = []
    slowest = 0.0
    with tempfile.TemporaryDirectory(prefix="kubefit-fuzz-") as tmp:
        for i in indices:
            rng = random.Random(f"{seed}-{i}")
            name, text = rng.choice(seeds)
            mutant = mutate(name, text, rng)
            path = Path(tmp) / f"mutant-{i}{mutant.suffix}"
            path.write_text(mutant.text, encoding="utf-8", errors="surrogateescape")
            argv = [a.replace("{f}", str(path)) for a in rng.choice(VERBS)]
            outcome = run_isolated(argv)
            slowest = max(slowest, outcome.seconds)
            verdict = judge(mutant, str(path), outcome)
            path.unlink()
            if verdict.problem:
                breaches[verdict.problem] += 1
                line = f"#{i} {verdict.problem}: {mutant.mutation} of {name} · {' '.join(argv[:2])}: {verdict.detail}"
                lines.append(line)
                print(line, file=sys.stderr, flush=True)
    return breaches, lines, slowest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mutants", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    started = time.monotonic()
    slices = [range(j, args.mutants, args.jobs) for j in range(args.jobs)]
    with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
        results = pool.starmap(run_slice, [(args.seed, s) for s in slices])
    breaches = sum((r[0] for r in results), Counter())
    slowest = max(r[2] for r in results)
    print(f"{args.mutants} mutants (seed {args.seed}) over {len(VERBS)} verb forms in "
          f"{time.monotonic() - started:.0f} s, slowest run {slowest:.1f} s: {sum(breaches.values())} breaches")
    for problem, count in breaches.most_common():
        print(f"  {problem}: {count}")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
