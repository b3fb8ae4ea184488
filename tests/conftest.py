"""Shared test fixtures. GPU tests are marked `gpu` and skip with the reason when no
usable CUDA device is present (CI has none); on a GPU machine they run every variant on
edge shapes."""

from __future__ import annotations

import os

import pytest


def _gpu_skip_reason() -> str | None:
    try:
        from pmppbench.errors import EnvironmentProblem
        from pmppbench.hardware.gpu import require_device

        require_device()
    except EnvironmentProblem as exc:
        return f"no usable CUDA device: {exc}"
    except Exception as exc:  # pragma: no cover
        return f"no usable CUDA device: {type(exc).__name__}: {exc}"
    return None


def pytest_collection_modifyitems(config, items):
    reason = None
    checked = False
    for item in items:
        if "gpu" in item.keywords:
            if not checked:
                reason, checked = _gpu_skip_reason(), True
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory):
    """Every test session compiles into a cache folder of its own, never the user's: the
    session's temporary folder, or $PMPPBENCH_TEST_CACHE_DIR, the one folder CI gives all its
    sessions at once, so that a unit two suites build compiles once (writes are whole-file
    replaces, safe beside each other). A test that needs a cold cache sets its own
    (tests/test_compile.py). Set for the whole session, before any module's fixture: the
    compile processes tests/test_portability_compile.py starts inherit it."""
    cache = os.environ.get("PMPPBENCH_TEST_CACHE_DIR") or str(tmp_path_factory.getbasetemp() / "kernel-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PMPPBENCH_CACHE_DIR", cache)
        yield


@pytest.fixture
def run_cli(capsys):
    """Run the CLI in-process: returns (exit_code, stdout, stderr)."""
    from pmppbench.cli.app import main

    def run(*args: str):
        code = main(list(args))
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run
