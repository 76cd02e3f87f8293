"""Test-suite wide setup: the tests/ directory is importable (golden_scenario, tests_support); tests that
read the golden cases in place (`../shared`) are skipped, with one reason, in a clone without them.

With `KUBEFIT_REQUIRE_GOLDEN=1` (CI, `.ci/run`) a missing `../shared` is an error instead of a skip.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
GOLDEN = TESTS.parents[1] / "shared" / "golden"  # read in place, never copied

if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from tests_support import SHARED_ABSENT, SHARED_DIR  # noqa: E402

SHARED_PRESENT = SHARED_DIR.is_dir()

# The suite was written for kube-scheduler v1.34.1 and keeps answering for it: a test that checks another
# version names it (`--kube-version`, `for_minor`), and one that checks the default removes this variable.
os.environ["KUBEFIT_KUBE_VERSION"] = "1.34"


def pytest_configure(config: pytest.Config) -> None:
    if not SHARED_PRESENT and os.environ.get("KUBEFIT_REQUIRE_GOLDEN") == "1":
        raise pytest.UsageError(f"KUBEFIT_REQUIRE_GOLDEN=1 but the {SHARED_ABSENT}")


def _reads_shared(exc: BaseException | None) -> bool:
    """A FileNotFoundError for a file under ../shared (or an exit-2 assertion of a test reading one)."""
    return isinstance(exc, FileNotFoundError) and str(SHARED_DIR) in str(exc.filename or "")


class _GoldenAwareModule(pytest.Module):
    """A test module whose import reads ../shared: skipped with the one reason when ../shared is absent."""

    def _getobj(self):  # noqa: ANN202 - pytest's signature
        try:
            return super()._getobj()
        except FileNotFoundError as exc:
            if _reads_shared(exc):
                pytest.skip(SHARED_ABSENT, allow_module_level=True)
            raise


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    if SHARED_PRESENT:
        return None
    return _GoldenAwareModule.from_parent(parent, path=module_path)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):  # noqa: ANN201
    report = yield
    if not SHARED_PRESENT and call.excinfo is not None and _reads_shared(call.excinfo.value):
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: {SHARED_ABSENT}")
    return report
