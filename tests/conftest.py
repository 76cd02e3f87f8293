"""Test-suite wide setup: the tests/ directory is importable (golden_scenario, tests_support)."""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
GOLDEN = TESTS.parents[1] / "shared" / "golden"  # read in place, never copied

if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))
