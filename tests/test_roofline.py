"""Roofline (PMPP 5.1): classification, speed of light on the book's H100 numbers, the
ceilings cache; on the GPU, measured ceilings against separately timed copy and GEMM."""

from __future__ import annotations

import json
import statistics

import pytest

from pmppbench.device import DeviceInfo
from pmppbench.row import Result
from pmppbench.derive import speed_of_light
from pmppbench.roofline import (COMPUTE_BOUND, MEMORY_BOUND, Ceilings, cache_path, ceilings_for, ceilings_from_meta,
                                ceilings_meta, classify, load_cached, save_cached,
                                theoretical_ceilings)

# PMPP 5.1's H100: 66.9 TFLOP/s FP32 and 3.35 TB/s, ridge 20.0 FLOP/B.
H100 = Ceilings("theoretical", bandwidth_gbs=3350.0, fp32_gflops=66900.0, device="H100", driver="13.0")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache folder of this test's own."""
    monkeypatch.setenv("PMPPBENCH_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_book_ridge_point_is_20_flop_per_byte():
    assert H100.ridge_flop_per_byte == pytest.approx(20.0, abs=0.05)
    assert H100.roof_gflops(0.25) == pytest.approx(837.5)  # naive GEMM: 0.25 x 3350
    assert H100.roof_gflops(100.0) == 66900.0  # past the ridge: the flat compute roof


def test_classify_against_the_ridge():
    assert classify(1 / 12, 20.0) == MEMORY_BOUND  # vector add, 0.083 FLOP/B
    assert classify(8.0, 20.0) == MEMORY_BOUND  # tiled GEMM with 32x32 tiles, still below
    assert classify(20.0, 20.0) == COMPUTE_BOUND  # at the ridge both roofs meet: no longer memory-limited
    assert classify(64.0, 20.0) == COMPUTE_BOUND
    with pytest.raises(ValueError):
        classify(-1.0, 20.0)
    with pytest.raises(ValueError):
        classify(1.0, 0.0)


def _row(median_ms, nbytes, flops, **kw):
    return Result("w", "v", "s", check="PASS", median_ms=median_ms, bytes=nbytes, flops=flops, **kw)


def test_book_vector_add_runs_at_about_90_percent_of_the_memory_roof():
    # 10^9 elements: 12 GB moved, 10^9 FLOP, in 4 ms -> 3 TB/s of 3.35 TB/s.
    sol = speed_of_light(_row(4.0, 12 * 10**9, 10**9), H100)
    assert sol["intensity_flop_per_byte"] == pytest.approx(1 / 12)
    assert sol["ridge_flop_per_byte"] == pytest.approx(19.97, abs=0.01)
    assert sol["bound"] == MEMORY_BOUND
    assert sol["sol_pct_theoretical"] == pytest.approx(100 * 3000 / 3350)
    # The same number read as FLOP rates: attained GFLOP/s over the slanted roof at AI = 1/12.
    attained_gflops = 10**9 / 4e-3 / 1e9
    assert sol["sol_pct_theoretical"] == pytest.approx(100 * attained_gflops / H100.roof_gflops(1 / 12))


def test_compute_bound_rows_are_measured_against_peak_flops():
    # AI = 100 FLOP/B (well past the ridge), 33.45 TFLOP/s attained.
    flops = 33_450 * 10**9
    sol = speed_of_light(_row(1000.0, flops // 100, flops), H100)
    assert sol["bound"] == COMPUTE_BOUND
    assert sol["sol_pct_theoretical"] == pytest.approx(50.0)


def test_every_ceiling_gets_its_own_percentage():
    measured = Ceilings("measured", bandwidth_gbs=3000.0, fp32_gflops=50000.0)
    sol = speed_of_light(_row(4.0, 12 * 10**9, 10**9), [H100, measured])
    assert sol["sol_pct_measured"] == pytest.approx(100.0)
    assert sol["sol_pct_theoretical"] == pytest.approx(89.55, abs=0.01)
    assert sol["bound"] == MEMORY_BOUND  # judged on the first (theoretical) ridge


def test_a_variant_without_flops_is_judged_by_its_bandwidth():
    # A transpose: 8 x 4096^2 bytes, no FLOPs, 0.1 ms.
    nbytes = 8 * 4096 * 4096
    sol = speed_of_light(_row(0.1, nbytes, 0), H100)
    assert sol["intensity_flop_per_byte"] == 0 and sol["bound"] == MEMORY_BOUND
    assert sol["sol_pct_theoretical"] == pytest.approx(100 * nbytes / 1e-4 / 1e9 / 3350)


def test_rows_with_no_place_on_the_roofline_get_none():
    assert speed_of_light(_row(None, 100, 10), H100) is None  # not timed
    assert speed_of_light(_row(1.0, None, 10), H100) is None  # no byte model
    assert speed_of_light(_row(1.0, 100, 10, timer="host"), H100) is None  # includes PCIe transfers
    with pytest.raises(ValueError):
        speed_of_light(_row(1.0, 100, 10), [])


def test_unknown_fp32_peak_leaves_only_the_memory_roof():
    bw_only = Ceilings("theoretical", bandwidth_gbs=1000.0, fp32_gflops=None)
    assert bw_only.ridge_flop_per_byte is None and bw_only.roof_gflops(50.0) == 50000.0
    sol = speed_of_light(_row(1.0, 10**9, 10**9), bw_only)
    assert sol["ridge_flop_per_byte"] is None and sol["sol_pct_theoretical"] == pytest.approx(100.0)


def _device(name="Test GPU", driver="13.0") -> DeviceInfo:
    return DeviceInfo(name=name, compute_capability="9.0", arch="sm_90", sm_count=132, sm_clock_mhz=1980.0,
                      mem_clock_mhz=2619.0, bus_width_bits=5120, memory_bytes=80 << 30, l2_bytes=50 << 20,
                      smem_per_sm=233472, smem_per_block=49152, smem_per_block_optin=232448, regs_per_sm=65536,
                      max_threads_per_sm=2048, max_blocks_per_sm=32, max_threads_per_block=1024, warp_size=32,
                      driver=driver, cuda_runtime="13.0", cupy="14.0.0")


def test_theoretical_ceilings_come_from_the_device():
    d = _device()
    c = theoretical_ceilings(d)
    assert c.source == "theoretical" and c.device == "Test GPU"
    assert c.bandwidth_gbs == pytest.approx(d.peak_bandwidth_gbs)  # 2 x 2619 MHz x 640 B = 3352 GB/s
    assert c.fp32_gflops == pytest.approx(132 * 128 * 2 * 1.98)
    assert c.ridge_flop_per_byte == pytest.approx(d.ridge_flop_per_byte)


def test_measured_ceilings_are_cached_per_device_and_driver(cache):
    assert load_cached("Test GPU", "13.0") is None  # nothing measured yet
    a = Ceilings("measured", 3000.0, 50000.0, device="Test GPU", driver="13.0", detail={"gemm_n": 8192})
    b = Ceilings("measured", 900.0, 20000.0, device="Other GPU", driver="13.0")
    save_cached(a)
    path = save_cached(b)
    assert path == cache_path() and path.parent == cache
    assert load_cached("Test GPU", "13.0") == a  # the other device's entry did not replace it
    assert load_cached("Other GPU", "13.0") == b
    assert load_cached("Test GPU", "12.8") is None  # a new driver is measured again
    assert ceilings_for(_device()) == [theoretical_ceilings(_device()), a]
    assert ceilings_for(_device(driver="12.8")) == [theoretical_ceilings(_device(driver="12.8"))]


def test_a_damaged_cache_is_ignored_and_rewritten(cache):
    cache.mkdir(parents=True)
    cache_path().write_text("{not json")
    assert load_cached("Test GPU", "13.0") is None
    save_cached(Ceilings("measured", 3000.0, 50000.0, device="Test GPU", driver="13.0"))
    assert json.loads(cache_path().read_text())  # valid again
    assert load_cached("Test GPU", "13.0").bandwidth_gbs == 3000.0


def test_ceilings_travel_in_result_metadata():
    measured = Ceilings("measured", 3000.0, 50000.0, device="H100")
    meta = {"ceilings": ceilings_meta([measured, H100])}
    back = ceilings_from_meta(json.loads(json.dumps(meta)))
    assert [c.source for c in back] == ["theoretical", "measured"]  # theoretical first: it sets the ridge
    assert back[0] == H100 and back[1] == measured


def test_older_result_files_fall_back_to_the_recorded_peaks():
    back = ceilings_from_meta({"name": "H100", "driver": "13.0", "peak_bandwidth_gbs": 3350.0,
                               "peak_fp32_gflops": 66900.0})
    assert back == [Ceilings("theoretical", 3350.0, 66900.0, device="H100", driver="13.0")]
    assert ceilings_from_meta({}) == []


# ---- on the GPU ----------------------------------------------------------------------

@pytest.mark.gpu
def test_measured_ceilings_agree_with_a_plain_memcpy_and_matmul_timed_separately(cache):
    """`info --measure` within 10% of a device-to-device memcpy and cupy.matmul
    timed with CuPy's own profiler (another timing path than pmppbench's protocol)."""
    import cupy as cp
    from cupyx.profiler import benchmark

    from pmppbench import device
    from pmppbench.roofline import measure_and_cache

    c = measure_and_cache()
    assert load_cached(c.device, c.driver) == c

    nbytes = c.detail["copy_bytes"]
    src = cp.ones(nbytes // 4, dtype=cp.float32)
    dst = cp.empty_like(src)
    copy = benchmark(lambda: dst.data.copy_from_device_async(src.data, nbytes), n_repeat=50, n_warmup=5)
    copy_gbs = 2 * nbytes / statistics.median(copy.gpu_times[0]) / 1e9
    del src, dst

    n = c.detail["gemm_n"]
    a = cp.random.random((n, n), dtype=cp.float32)
    b = cp.random.random((n, n), dtype=cp.float32)
    gemm = benchmark(cp.matmul, (a, b), n_repeat=10, n_warmup=3)
    gemm_gflops = 2 * n**3 / statistics.median(gemm.gpu_times[0]) / 1e9

    assert c.bandwidth_gbs == pytest.approx(copy_gbs, rel=0.10)
    assert c.fp32_gflops == pytest.approx(gemm_gflops, rel=0.10)
    theory = theoretical_ceilings(device.current())
    assert c.bandwidth_gbs < 1.05 * theory.bandwidth_gbs, "a copy cannot beat the memory bus: check device.py's peak"


def test_peak_per_precision_on_hopper():
    dev = _device()
    # 132 SMs x 1980 MHz: FP32 128 lanes x 2, BF16/FP16 4096 and TF32 2048 dense FLOP/clk/SM
    assert dev.peak_gflops("fp32") == pytest.approx(132 * 128 * 2 * 1.98)
    assert dev.peak_gflops("bf16") == pytest.approx(132 * 4096 * 1.98)
    assert dev.peak_gflops("fp16") == dev.peak_gflops("bf16")
    assert dev.peak_gflops("tf32") == pytest.approx(dev.peak_gflops("bf16") / 2)
    with pytest.raises(ValueError, match="precision must be one of"):
        dev.peak_gflops("fp8")


def test_peak_unknown_precision_path_is_none():
    from dataclasses import replace
    turing = replace(_device(), compute_capability="7.5", arch="sm_75")
    assert turing.peak_gflops("fp16") is not None
    assert turing.peak_gflops("bf16") is None and turing.peak_gflops("tf32") is None
