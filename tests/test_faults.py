"""On the GPU: one `all` run with a variant that writes out of bounds, one that hangs and one
that is wrong, between two real workloads. Exactly the guilty variants lose their numbers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent


@pytest.mark.gpu
def test_faults_cost_only_their_own_rows(tmp_path, monkeypatch):
    from pmppbench.results.resultfile import load

    cfg = tmp_path / "faults.toml"
    cfg.write_text('[vecadd]\nshapes = [[1000003]]\n[faults]\nshapes = [[1048576]]\n'
                   '[transpose]\nshapes = [[1000, 3000]]\n')
    out = tmp_path / "faults.csv"
    env = {**os.environ, "PMPPBENCH_WORKLOADS": "faults=fault_workload", "PMPPBENCH_KERNEL_PATH": str(TESTS),
           "PYTHONPATH": os.pathsep.join([str(TESTS), str(TESTS.parent), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "pmppbench", "all", "--config", str(cfg), "--out", str(out),
                           "--timeout", "10", "--quiet"], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr, proc.stderr
    # the file names the test's own workload, which this process must know to read it back
    monkeypatch.setenv("PMPPBENCH_WORKLOADS", "faults=fault_workload")
    monkeypatch.syspath_prepend(str(TESTS))
    rows, _ = load(out)
    got = {(r.workload, r.variant): r for r in rows}
    assert [(r.workload, r.variant) for r in rows] == (
        [("vecadd", v) for v in ("scalar", "float4", "grid_stride")]
        + [("faults", v) for v in ("good", "out_of_bounds", "wrong", "hang", "good_again")]
        + [("transpose", v) for v in ("copy", "naive", "shared32", "padded33", "coarsened", "best", "memcpy")])
    checks = {k: r.check for k, r in got.items()}
    assert checks[("faults", "out_of_bounds")] == "ERROR" and checks[("faults", "hang")] == "ERROR"
    assert checks[("faults", "wrong")] == "FAIL"
    assert "cudaErrorIllegalAddress" in got[("faults", "out_of_bounds")].error
    assert "compute-sanitizer --tool memcheck pmppbench faults 1048576 --variants out_of_bounds --check-only" \
        in got[("faults", "out_of_bounds")].error
    assert got[("faults", "hang")].error.startswith("timed out after 10 s (hang: check)")
    good = [k for k in checks if k[1] not in ("out_of_bounds", "wrong", "hang")]
    assert all(checks[k] == "PASS" and got[k].median_ms for k in good), {k: got[k].error for k in good}
    assert got[("faults", "wrong")].median_ms is None
