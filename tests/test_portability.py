"""Every fact pmppbench reasons with, on the GPUs a course uses (tests/portability_profiles.py):
the ceilings, the implausible-rate limit, the L2 flush, the occupancy, GEMM's tile choice and
dynamic shared memory, the grids sized by SMs, the memory a shape needs and the SKIP rows of
one that does not fit, the first-run line; and both sides of every platform branch."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import replace

import pytest

from pmppbench.workloads.gemm.workload import config as gemm_config
from pmppbench.engine.worker import counters, pipeline
from pmppbench.hardware import device, inventory, occupancy
from pmppbench.measure import protocol, roofline
from pmppbench import workloads
from pmppbench.hardware.compile import nvrtc_identity
from pmppbench.results.derive import speed_of_light
from pmppbench.measure.noise import diagnose
from pmppbench.row import Result
from pmppbench.workloads.gemm.best import BEST, CHOICES, choose
from pmppbench.workloads.gemm.ladder import DYNAMIC_TILE
from pmppbench.workloads.gemm.launch import dynamic_tile_depth
from portability_profiles import B200, H200, PROFILES, RTX4060_LAPTOP, SPEC_SHEET, T4

GPUS = list(PROFILES.values())
IDS = [d.name for d in GPUS]


# ---- the ceilings and the limits that follow from them --------------------------------------

@pytest.mark.parametrize("gpu", GPUS, ids=IDS)
def test_peaks_match_the_spec_sheet(gpu):
    bandwidth, tflops = SPEC_SHEET[gpu]
    assert gpu.peak_bandwidth_gbs == pytest.approx(bandwidth, rel=0.03)
    assert gpu.peak_fp32_gflops / 1000 == pytest.approx(tflops, rel=0.01)
    c = roofline.theoretical_ceilings(gpu)
    assert (c.bandwidth_gbs, c.fp32_gflops, c.device) == (gpu.peak_bandwidth_gbs, gpu.peak_fp32_gflops, gpu.name)
    assert f"{gpu.sm_count} SMs x {gpu.fp32_lanes_per_sm} FP32 lanes" in c.how
    assert 5 < c.ridge_flop_per_byte < 120  # between the H200's 13.9 and the L4's 101 FLOP/B


@pytest.mark.parametrize("gpu", GPUS, ids=IDS)
def test_tensor_rates_stay_above_fp32_where_the_arch_has_them(gpu):
    fp32 = gpu.peak_gflops("fp32")
    rates = {p: gpu.peak_gflops(p) for p in ("tf32", "bf16", "fp16")}
    assert rates["fp16"] > fp32  # every listed arch since Volta has FP16 tensor cores
    if gpu is T4:  # Turing: FP16 only
        assert rates["tf32"] is None and rates["bf16"] is None
    else:
        assert rates["bf16"] == rates["fp16"] == 2 * rates["tf32"]


@pytest.mark.parametrize("gpu", GPUS, ids=IDS)
def test_a_rate_past_the_theoretical_roof_is_called_implausible(gpu):
    n = 1 << 26
    bytes_ = 12 * n  # vecadd's model
    ceilings = roofline.theoretical_ceilings(gpu)

    def row(fraction):
        ms = bytes_ / (fraction * gpu.peak_bandwidth_gbs * 1e9) * 1e3
        r = Result("vecadd", "scalar", str(n), check="PASS", median_ms=ms, bytes=bytes_, flops=n, timer="events")
        for k, v in speed_of_light(r, ceilings).items():
            setattr(r, k, v)
        return r

    assert row(0.93).sol_pct_theoretical == pytest.approx(93.0)
    assert not any("implausible" in w for w in diagnose(row(0.93)))
    assert any("112% of the device's theoretical peak is implausible" in w for w in diagnose(row(1.12)))


@pytest.mark.parametrize("gpu", GPUS, ids=IDS)
def test_the_l2_flush_writes_twice_the_gpus_l2(gpu, monkeypatch):
    asked = []

    class FakeCupy:
        @staticmethod
        def empty(n, dtype):
            asked.append((n, dtype))

    monkeypatch.setattr(protocol, "cupy", lambda: FakeCupy)
    monkeypatch.setattr(protocol, "EventTimer", lambda: None)
    protocol.ColdTimer(gpu.l2_bytes)
    assert asked == [(2 * gpu.l2_bytes // 4, "float32")]


# ---- occupancy and the launches sized from the facts ---------------------------------------

@pytest.mark.parametrize("gpu", GPUS, ids=IDS)
def test_occupancy_by_hand_on_each_gpu(gpu):
    lim = occupancy.SmLimits.from_device(gpu)
    light = occupancy.occupancy(lim, 256, 32, 0)  # vecadd-like: nothing but threads limits it
    assert light.active_blocks == gpu.max_threads_per_sm // 256 and light.occupancy_pct == 100.0
    # the heaviest thing any GPU is asked to hold: every configuration `best` may choose, at
    # the register cap, with its dynamic shared memory: at least one block per SM everywhere
    for cfg in CHOICES.values():
        o = occupancy.occupancy(lim, cfg.tiles.threads, 255, cfg.dynamic_smem)
        assert o.active_blocks >= 1, (gpu.name, cfg.name, o.steps)
    assert lim.reserved_smem_per_block == (0 if gpu is T4 else 1024)  # the driver's 1 KB per block from sm_80


@pytest.mark.parametrize("gpu", GPUS, ids=IDS)
@pytest.mark.parametrize("k", [18, 1024, 4096])
def test_dynamic_smem_depth_fits_each_gpu(gpu, k):
    tk, smem = dynamic_tile_depth(k, DYNAMIC_TILE, gpu.max_threads_per_sm, gpu.smem_per_sm, gpu.smem_per_block_optin)
    assert tk % DYNAMIC_TILE == 0 and tk >= DYNAMIC_TILE
    assert smem <= gpu.smem_per_block_optin
    blocks = gpu.max_threads_per_sm // (DYNAMIC_TILE * DYNAMIC_TILE)
    lim = occupancy.SmLimits.from_device(gpu)
    # the budget is what lets as many of its blocks stay resident as the SM has threads for
    assert occupancy.occupancy(lim, DYNAMIC_TILE * DYNAMIC_TILE, 46, smem).blocks_by["shared memory"] >= max(1, blocks)


@pytest.mark.parametrize("gpu", GPUS, ids=IDS)
def test_gemm_best_chooses_by_the_gpus_sms(gpu):
    w = workloads.get("gemm")
    for m, n, k in ((1024, 1024, 1024), (4096, 4096, 4096), (513, 257, 18), (1, 1, 1)):
        shape = {"m": m, "n": n, "k": k}
        cfg = gemm_config(BEST, shape, gpu)
        assert cfg == choose(m, n, k, gpu.sm_count) and cfg in CHOICES.values()
        assert cfg.dynamic_smem <= gpu.smem_per_block_optin and cfg.tiles.threads <= gpu.max_threads_per_block
        model = w.traffic(shape, BEST, gpu)
        assert model.flops == 2 * m * n * k and model.bytes >= 4 * (m * k + k * n + m * n)
    # 4096^2 has 512 tiles of 128 x 256: a full grid on every one of these GPUs
    assert gemm_config(BEST, {"m": 4096, "n": 4096, "k": 4096}, gpu).tiles.bm == 128


def test_best_differs_where_the_sm_counts_do():
    # 1024^2 is 32 tiles of 128 x 256: a full grid for a 24-SM laptop (whole tiles; 128 x 128,
    # whose 3 waves of half the work end before 256's 2), not for an H200's 132 SMs (stream-K)
    small = choose(1024, 1024, 1024, RTX4060_LAPTOP.sm_count)
    big = choose(1024, 1024, 1024, H200.sm_count)
    assert (small.kernel, small.schedule) == ("pipelined", "dp") and big.kernel == "streamk"


@pytest.mark.parametrize("gpu", GPUS, ids=IDS)
def test_grids_sized_by_sms(gpu):
    for name, variant in (("vecadd", "grid_stride"), ("reduce", "warp_vec"), ("histogram", "warp_vec")):
        w = workloads.get(name)
        shape = w.default_shape() if name != "histogram" else w.check_shapes()[0]
        grid, block = w.geometry(w.variant(variant), shape, gpu)
        assert 1 <= grid[0] <= 64 * gpu.sm_count and block[0] <= gpu.max_threads_per_block


# ---- memory that fits -----------------------------------------------------------------------

# The check shapes above 8 GB (what the ones past 2^31 elements need): label -> GiB
BIG = {("vecadd", "2147483655"): 24.0, ("transpose", "32771x65537"): 16.0, ("stencil", "2147487749 radius=64"): 16.0,
       ("reduce", "2147483653 dtype=f32"): 16.0, ("reduce", "2147483653 dtype=i32"): 16.0,
       ("histogram", "2147483653 bins=256 input=uniform"): 10.0,
       ("scan", "2147483653 dtype=f32 kind=inclusive"): 16.0, ("scan", "2147483653 dtype=i32 kind=exclusive"): 16.0,
       ("conv2d", "46341x46341 mask=5"): 16.0, ("stencil3d", "1291"): 16.0}
DOES_NOT_FIT = {  # on each GPU with all of its memory free: which of them are SKIP rows
    RTX4060_LAPTOP.name: set(BIG), T4.name: set(BIG) - {("histogram", "2147483653 bins=256 input=uniform")},
    "NVIDIA GeForce RTX 3090": {("vecadd", "2147483655")}, "NVIDIA GeForce RTX 4090": {("vecadd", "2147483655")},
    "NVIDIA GeForce RTX 5090 Laptop GPU": {("vecadd", "2147483655")}, "NVIDIA L4": {("vecadd", "2147483655")},
    "NVIDIA A100-PCIE-40GB": set(), "NVIDIA H100 PCIe": set(), "NVIDIA H200": set(),
}


def test_the_big_check_shapes_are_what_the_estimates_say():
    found = {}
    for name in workloads.names():
        w = workloads.get(name)
        for s in w.check_shapes():
            if w.device_bytes(s) > 8 << 30:
                found[(name, w.label(s))] = round(w.device_bytes(s) / 2**30, 1)
    assert found == BIG


@pytest.mark.parametrize("gpu", GPUS, ids=IDS)
def test_what_does_not_fit_each_gpu(gpu):
    short = set()
    for name in workloads.names():
        w = workloads.get(name)
        for s in w.check_shapes() + [w.default_shape()]:
            why = pipeline.memory_shortfall(w, s, gpu.memory_bytes)
            if why:
                short.add((name, w.label(s)))
                gib = w.device_bytes(s) / 2**30
                assert why == f"needs {gib:.2f} GiB of device memory, {gpu.memory_bytes / 2**30:.2f} GiB free on this GPU"
    assert short == DOES_NOT_FIT[gpu.name]


def test_all_of_the_default_config_fits_an_8gb_laptop():
    from pmppbench.cli import planning

    kw = dict(only=None, config=None, seed=None, flush_l2=False, counters=False, check_only=False)
    plan, _, _ = planning.config_plan(kw)
    free = RTX4060_LAPTOP.memory_bytes - (1 << 30)  # the display and the CUDA context take some
    assert [s for s in plan.steps if pipeline.memory_shortfall(s.workload, s.shape, free)] == []


def test_a_shape_that_does_not_fit_is_skip_rows_with_the_reason(monkeypatch):
    from fake_workload import Copy2D

    w = Copy2D()
    shape = w.default_shape()
    monkeypatch.setattr(pipeline, "require_device", lambda: 1)
    monkeypatch.setattr(pipeline, "cupy", lambda: None)
    monkeypatch.setattr(device, "current", lambda: RTX4060_LAPTOP)
    monkeypatch.setattr(pipeline, "free_for_shape", lambda: w.device_bytes(shape) - 1)
    rows = pipeline.run_shape(w, shape, protocol=w.protocol, seed=3, run_id="r1")
    need = w.device_bytes(shape) / 2**30
    assert [(r.variant, r.check, r.check_detail, r.device, r.seed, r.run_id) for r in rows] == [
        (v.name, "SKIP", f"needs {need:.2f} GiB of device memory, {(w.device_bytes(shape) - 1) / 2**30:.2f} GiB "
                         "free on this GPU", RTX4060_LAPTOP.name, 3, "r1") for v in w.variants_for(shape)]
    assert all(r.ok for r in rows) and w.calls == {}  # nothing ran, and SKIP is not a failure


def test_resources_still_refuse_a_shape_that_does_not_fit(monkeypatch):
    from fake_workload import Copy2D
    from pmppbench.errors import UsageError

    w = Copy2D()
    shape = w.default_shape()
    monkeypatch.setattr(pipeline, "free_for_shape", lambda: 0)
    with pytest.raises(UsageError, match=r"copy2d .* needs .* GiB of device memory, 0\.00 GiB free on this GPU; "
                                         "choose a smaller size"):
        pipeline.ensure_memory(w, shape)


# ---- the first run on a GPU -----------------------------------------------------------------

def _default_plan():
    from pmppbench.cli import planning

    kw = dict(only=None, config=None, seed=None, flush_l2=False, counters=False, check_only=False)
    return planning.config_plan(kw)[0]


WGMMA_SKIPS = ["gemm wgmma (needs sm_90a)", "gemm wgmma_ws (needs sm_90a)", "gemm wgmma_persist (needs sm_90a)"]  # Hopper's alone: sm_90 runs them


@pytest.mark.parametrize("arch, skips", [
    ("sm_75", ["gemm wmma (needs sm_80)", "gemm mma_sync (needs sm_80)", "gemm mma_wide (needs sm_80)", *WGMMA_SKIPS,
               "gemm best (needs sm_80)", "stencil coarsened (needs sm_80)"]), ("sm_80", WGMMA_SKIPS), ("sm_89", WGMMA_SKIPS), ("sm_90", []),
    ("sm_120", WGMMA_SKIPS), ("", []),
])
def test_what_a_gpu_skips_of_the_default_plan(arch, skips):
    from pmppbench.engine.driver.session import arch_skips

    assert arch_skips(_default_plan(), arch) == skips


def test_the_first_run_line_once_per_gpu(tmp_path):
    seen = tmp_path / "cache" / "gpus-seen.json"
    t4 = inventory.DeviceId(0, "Tesla T4", "GPU-1", "0000:01:00.0", arch="sm_75")
    line = inventory.first_run_line(t4, ["stencil coarsened (needs sm_80)"], seen)
    assert line == "first run on Tesla T4 (sm_75): skips stencil coarsened (needs sm_80)"
    assert inventory.first_run_line(t4, ["stencil coarsened (needs sm_80)"], seen) is None  # met before
    h200 = inventory.DeviceId(0, "NVIDIA H200", "GPU-2", "0000:06:00.0", arch="sm_90")
    assert inventory.first_run_line(h200, [], seen) == "first run on NVIDIA H200 (sm_90): runs every variant of this plan"
    assert json.loads(seen.read_text()) == ["Tesla T4 sm_75", "NVIDIA H200 sm_90"]
    seen.write_text("{broken")  # a damaged record: the line again, and a good record after it
    assert inventory.first_run_line(h200, [], seen).startswith("first run on NVIDIA H200")
    assert json.loads(seen.read_text()) == ["NVIDIA H200 sm_90"]


# ---- device facts: CUDA's, NVML's where CUDA has none -----------------------------------------

def test_facts_come_from_cuda_and_from_nvml_only_where_cuda_says_0():
    asked = []

    def nvml():
        asked.append(1)
        return {"sm_clock_mhz": 1755.0, "mem_clock_mhz": 1593.0, "bus_width_bits": 5120.0}

    cuda = {"sm_clock_mhz": 1980.0, "mem_clock_mhz": 3201.0, "bus_width_bits": 6016}
    assert device.fill_from_nvml(cuda, nvml) == cuda and asked == []
    assert device.fill_from_nvml({**cuda, "sm_clock_mhz": 0.0}, nvml) == {**cuda, "sm_clock_mhz": 1755.0}
    assert device.fill_from_nvml({**cuda, "bus_width_bits": 0}, nvml) == {**cuda, "bus_width_bits": 5120.0}
    assert device.fill_from_nvml({**cuda, "mem_clock_mhz": 0.0}, lambda: None) == {**cuda, "mem_clock_mhz": 0.0}
    assert device.fill_from_nvml({**cuda, "mem_clock_mhz": 0.0}, lambda: {"sm_clock_mhz": 1.0}) == \
        {**cuda, "mem_clock_mhz": 0.0}  # an NVML without that fact: it stays 0


def test_an_arch_of_no_table_has_no_peak_but_its_bandwidth():
    future = replace(B200, compute_capability="13.0", arch="sm_130")
    assert future.peak_fp32_gflops is None and future.peak_gflops("bf16") is None
    assert future.ridge_flop_per_byte is None and future.peak_bandwidth_gbs == B200.peak_bandwidth_gbs
    assert "FP32 lanes per SM unknown" in roofline.theoretical_ceilings(future).how


# ---- both sides of every platform branch ---------------------------------------------------------

@pytest.mark.parametrize("os_name", ["posix", "nt"])
def test_ncu_runs_in_its_own_group_and_is_stopped_with_it(os_name, monkeypatch):
    calls = []
    monkeypatch.setattr(counters.os, "name", os_name)
    monkeypatch.setattr(counters.os, "killpg", lambda pid, sig: calls.append(("killpg", pid, sig)), raising=False)
    monkeypatch.setattr(counters.subprocess, "run", lambda cmd, **kw: calls.append(("run", cmd, kw["check"])))
    options = counters.own_group()
    counters.kill_group(4242)
    if os_name == "nt":
        assert options == {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0x200)}
        assert calls == [("run", ["taskkill", "/F", "/T", "/PID", "4242"], False)]
    else:
        assert options == {"start_new_session": True}
        assert calls == [("killpg", 4242, counters.signal.SIGKILL)]


def test_a_stopped_ncu_takes_its_rerun_along(tmp_path):
    # the real POSIX branch: a child that starts a grandchild; stopping the group ends both
    if os.name == "nt":
        pytest.skip("POSIX process groups")
    proc = subprocess.Popen(["sh", "-c", "sleep 60 & echo $!; wait"], stdout=subprocess.PIPE, text=True,
                            **counters.own_group())
    grandchild = int(proc.stdout.readline())
    counters.kill_group(proc.pid)
    proc.wait(timeout=10)
    for _ in range(100):
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        import time

        time.sleep(0.05)
    else:
        pytest.fail("the grandchild outlived its group")


def test_nvrtc_identity_without_proc(monkeypatch):
    # Windows and macOS have no /proc/self/maps: the cache key then holds NVRTC's version alone
    import builtins

    real_open = builtins.open

    def no_proc(path, *a, **kw):
        if str(path).startswith("/proc/"):
            raise FileNotFoundError(path)
        return real_open(path, *a, **kw)

    nvrtc_identity.cache_clear()
    monkeypatch.setattr(builtins, "open", no_proc)
    try:
        assert nvrtc_identity() == ""
    finally:
        nvrtc_identity.cache_clear()


def test_prefetch_compiles_what_the_runner_will_on_that_gpu(monkeypatch):
    # on an sm_75 GPU the stencil units come without coarsened, as pipeline.prepared builds them
    from pmppbench.engine.driver import session
    from pmppbench.engine.plan import Plan, Step

    made = []
    monkeypatch.setattr(session.Prefetch, "for_gpu", lambda units, arch: made.append((units, arch)))
    w = workloads.get("stencil")
    shape = w.default_shape()
    plan = Plan((Step(w, shape, w.protocol, 0, ()),), False, "r")
    session._prefetch(plan, {"sm_75"})
    session._prefetch(plan, {"sm_90"})
    (old, _), (new, _) = made
    assert [u for u in old if u[0] == "stencil"] == [("stencil", ("naive<int>", "shared<int>"), (("RADIUS", 32),))]
    assert [u for u in new if u[0] == "stencil"] == [
        ("stencil", ("naive<int>", "shared<int>", w.variant("coarsened").kernel), (("RADIUS", 32),))]


@pytest.mark.parametrize("gpu", GPUS, ids=IDS)
def test_the_reductions_bound_on_each_gpu_stays_within_the_any_gpu_bound(gpu):
    # warp_vec's order of additions follows the grid the GPU's SMs give it: fewer SMs, longer
    # chains; the bound without a device (one SM) is the loosest, and every GPU's is finite
    w = workloads.get("reduce")
    shape = {**w.default_shape(), "dtype": "f32"}
    v = w.variant("warp_vec")
    on_gpu, anywhere = w.tolerance_of(shape, v, gpu).atol, w.tolerance_of(shape, v).atol
    assert 0 < on_gpu <= anywhere


def test_a_windows_path_to_a_learners_kernel_keeps_its_drive(tmp_path):
    # --kernel FILE.cu:NAME splits at the last colon, so C:\...\k.cu:NAME names the file whole
    from pmppbench.cli import planning
    from pmppbench.errors import UsageError

    with pytest.raises(UsageError, match=r"no such file C:\\Users\\me\\k\.cu$"):
        planning.learner_variant(workloads.get("vecadd"), r"C:\Users\me\k.cu:my_kernel", "scalar")
    source = tmp_path / "k.cu"
    source.write_text('extern "C" __global__ void my_kernel() {}\n')
    v = planning.learner_variant(workloads.get("vecadd"), f"{source}:my_kernel", "scalar")
    assert (v.kernel, v.source, v.like) == ("my_kernel", str(source), "scalar")


def _elf_with_note(path, build_id: bytes | None):
    """A minimal 64-bit little-endian ELF: a header, one program header (PT_NOTE, or PT_LOAD
    without a build ID) and a note holding an ABI tag, then the build ID."""
    notes = (4).to_bytes(4, "little") + (16).to_bytes(4, "little") + (1).to_bytes(4, "little") + b"GNU\0" + bytes(16)
    if build_id is not None:
        desc = build_id + bytes(-len(build_id) % 4)
        notes += (4).to_bytes(4, "little") + len(build_id).to_bytes(4, "little") + (3).to_bytes(4, "little") + b"GNU\0" + desc
    head = bytearray(64)
    head[:6] = b"\x7fELF\x02\x01"
    head[0x20:0x28] = (64).to_bytes(8, "little")
    head[0x36:0x38] = (56).to_bytes(2, "little")
    head[0x38:0x3A] = (1).to_bytes(2, "little")
    ph = bytearray(56)
    ph[0:4] = (4).to_bytes(4, "little")
    ph[8:16] = (64 + 56).to_bytes(8, "little")
    ph[32:40] = len(notes).to_bytes(8, "little")
    path.write_bytes(bytes(head) + bytes(ph) + notes)


def test_the_build_id_names_nvrtc_wherever_it_is_installed(tmp_path, monkeypatch):
    """The kernel cache's key holds NVRTC's build (its GNU build ID) rather than its path: two
    venvs with the same NVRTC wheel share cubins, two builds never do."""
    from pmppbench.hardware import compile as comp

    ids = {}
    for name, build in (("a", b"\x12\x34" * 10), ("b", b"\x12\x34" * 10), ("c", b"\x99" * 20), ("none", None)):
        lib = tmp_path / name / "libnvrtc.so.13"
        lib.parent.mkdir()
        _elf_with_note(lib, build)
        assert comp.elf_build_id(str(lib)) == (build.hex() if build else None)
        maps = tmp_path / f"maps-{name}"
        maps.write_text(f"7f00-7f01 r-xp 00000000 08:01 42 {lib}\n")
        real_open = open
        monkeypatch.setattr("builtins.open", lambda p, *a, _m=maps, _o=real_open, **k: _o(_m if p == "/proc/self/maps" else p, *a, **k))
        comp.nvrtc_identity.cache_clear()
        ids[name] = comp.nvrtc_identity()
        monkeypatch.undo()
    comp.nvrtc_identity.cache_clear()
    assert ids["a"] == ids["b"] == f"build-id {'1234' * 10}:{(tmp_path / 'a' / 'libnvrtc.so.13').stat().st_size}"
    assert ids["c"] != ids["a"]
    assert ids["none"].startswith(str(tmp_path / "none" / "libnvrtc.so.13") + ":")  # its file, as before
    assert comp.elf_build_id(__file__) is None  # not an ELF file
