"""On a GPU: the first run's line names this GPU, and a shape larger than its free memory is
SKIP rows with the reason, before anything is allocated (tests/test_portability.py holds the
same on the course GPUs' facts, without one)."""

from __future__ import annotations

import pytest

from pmppbench.hardware import device, inventory
from pmppbench.engine.worker import pipeline
from pmppbench import workloads


@pytest.mark.gpu
def test_the_first_run_on_this_gpu_prints_one_line_naming_it(run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("PMPPBENCH_CACHE_DIR", str(tmp_path / "cache"))  # a machine that never met this GPU
    gpu = inventory.visible()[0]
    code, out, err = run_cli("vecadd", "1048576", "5", "--batches", "2")
    assert code == 0, err
    lines = [line for line in out.splitlines() if line.startswith("first run on")]
    assert lines == [f"first run on {gpu.name} ({gpu.arch}): runs every variant of this plan"]
    code, out, err = run_cli("vecadd", "1048576", "5", "--batches", "2")
    assert code == 0 and "first run on" not in out, err


@pytest.mark.gpu
def test_a_shape_larger_than_the_free_memory_is_skip_rows():
    w = workloads.get("vecadd")
    # Past the whole memory (x, y and z of FP32: 12 bytes per element), so that no other
    # process freeing memory meanwhile can make it fit: beside other GPU tests, a shape of the
    # free memory plus one element came to fit and its inputs ran the host out of memory.
    _free, total = device.free_memory_bytes()
    shape = {"n": total // 12 + 1}
    rows = pipeline.run_shape(w, shape, protocol=w.protocol, check_only=True)
    need = w.device_bytes(shape) / 2**30
    assert [r.check for r in rows] == ["SKIP"] * len(w.variants_for(shape))
    for r in rows:
        assert r.check_detail.startswith(f"needs {need:.2f} GiB of device memory, ") and r.check_detail.endswith(
            " GiB free on this GPU"), r.check_detail
        assert r.device == device.current().name and r.ok
    fits = pipeline.run_shape(w, {"n": 1 << 20}, protocol=w.protocol, check_only=True)
    assert [r.check for r in fits] == ["PASS"] * len(fits)  # the next shape runs as before
