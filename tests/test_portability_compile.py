"""Every kernel of every workload, built by NVRTC for every target a course's GPUs need
(sm_75 to sm_120, and Hopper's arch-specific sm_90a), held to that target's limits: registers
per thread, registers and shared memory of a block (static plus dynamic, with the opt-in),
threads per block. A variant that declares it needs a newer target (Variant.needs) is the
only thing left out, and `compile --arch` says so."""

from __future__ import annotations

import math
import os

import pytest

from pmppbench.workloads.gemm.workload import config as gemm_config
from pmppbench.hardware import compile as comp
from pmppbench.cli import tools
from pmppbench import workloads
from pmppbench.workloads import stream
from pmppbench.workloads.gemm.best import CHOICES, PADDED
from pmppbench.workloads.gemm.ladder import COVERS, DYNAMIC_TILE
from pmppbench.workloads.gemm.launch import dynamic_tile_depth
from portability_profiles import TARGETS

MAX_REGS_PER_THREAD = 255  # every target since sm_35 (ptxas never assigns more)
REG_GRANULE = 8  # registers are allocated per thread in multiples of 8 (per warp: 256)


def _shape(w, defines):
    """The workload's default shape with a compile set's defines (RADIUS, BINS) as its keys."""
    shape = dict(w.default_shape())
    for k, v in defines.items():
        if k.lower() in shape:
            shape[k.lower()] = v
    return shape


def _demands(w, shape, device):
    """kernel expression -> [(threads per block, dynamic shared memory)] of its launches."""
    out: dict[str, list[tuple[int, int]]] = {}
    for v in w.variants:
        if v.kernel is None:
            continue
        if w.name == "gemm" and v.name not in COVERS:  # launched by a configuration
            cfg = gemm_config(v, shape, device)
            out.setdefault(cfg.expression, []).append((cfg.tiles.threads, cfg.dynamic_smem))
            continue
        if w.name == "stream":  # its launches are made in its job, each of stream.BLOCK threads
            out.setdefault(v.kernel, []).append((stream.BLOCK, 0))
            continue
        _grid, block = w.geometry(v, shape, device)
        smem = 0
        if w.name == "gemm" and v.name == "dynamic_smem":
            smem = dynamic_tile_depth(shape["k"], DYNAMIC_TILE, device.max_threads_per_sm, device.smem_per_sm,
                                      device.smem_per_block_optin)[1]
        out.setdefault(v.kernel, []).append((math.prod(block), smem))
    if w.name == "gemm":  # every configuration `best` may choose on any shape, and the padded study knob
        for cfg in (*CHOICES.values(), PADDED):
            out.setdefault(cfg.expression, []).append((cfg.tiles.threads, cfg.dynamic_smem))
    return out


def _units(w, arch):
    """(defines, kernel names) of each unit `arch` builds of `w`: every compile set, without
    the kernels that only a variant needing a newer target launches."""
    _skipped, not_built = tools.skipped_on(w, arch)
    names = [k for k in w.kernel_names() if k not in not_built]
    return [(defines, names) for defines in w.compile_sets()]


def _job(w, defines, names, arch):
    return (w.name, tuple(names), tuple(sorted(defines.items()))), arch  # compile.Unit, arch


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@pytest.fixture(scope="module")
def built_ahead(request):
    """Every unit the selected tests below build, compiled ahead by compile.Prefetch in one
    process per core into the session's kernel cache; each test waits for its own units and
    reads them back from the cache (the same cubin, lowered names and ptxas log a compile in
    the test would give), so every unit is still compiled, once. NVRTC holds the GIL, so in
    the test's own process the eight targets took one core for the whole module. The units
    with the most kernels go first (GEMM's cost several times any other's), so no core waits
    long on a large unit started last. Measurements: docs/development.md, "CI"."""
    test = test_every_variant_builds_for_every_target_within_its_limits.__name__
    jobs = [_job(w, defines, names, p["arch"])
            for p in (item.callspec.params for item in request.session.items if item.originalname == test)
            for w in [workloads.get(p["name"])] for defines, names in _units(w, p["arch"])]
    jobs.sort(key=lambda job: -len(job[0][1]))
    pre = comp.Prefetch(jobs, workers=max(1, min(len(jobs), _cores())))
    yield pre
    pre.close()


@pytest.mark.parametrize("arch", list(TARGETS))
@pytest.mark.parametrize("name", workloads.names())
def test_every_variant_builds_for_every_target_within_its_limits(name, arch, built_ahead):
    w, device = workloads.get(name), TARGETS[arch]
    for defines, names in _units(w, arch):
        built_ahead.wait(*_job(w, defines, names, arch))
        unit = comp.compile_unit(w.name, names, arch, defines)
        assert set(unit.ptxas) == set(names), f"{name} {defines} {arch}: no ptxas report for some kernels"
        demands = _demands(w, _shape(w, defines), device)
        for kernel, rep in unit.ptxas.items():
            where = f"{name} {kernel} {defines} on {arch} ({device.name})"
            assert rep.registers <= MAX_REGS_PER_THREAD, where
            assert rep.static_smem <= device.smem_per_block, f"{where}: {rep.static_smem} B static shared memory"
            assert rep.spill_stores == rep.spill_loads == 0 or name == "gemm", f"{where}: spills"
            for threads, dynamic in demands.get(kernel, []):
                regs = -(-rep.registers // REG_GRANULE) * REG_GRANULE * threads
                assert threads <= device.max_threads_per_block, f"{where}: {threads} threads"
                assert regs <= device.regs_per_sm, f"{where}: {regs} registers for a block of {threads}"
                assert rep.static_smem + dynamic <= device.smem_per_block_optin, \
                    f"{where}: {rep.static_smem} + {dynamic} B of shared memory, over the {device.smem_per_block_optin} B opt-in"


# What each target cannot build, by its declaration: exactly these and nothing else.
# wgmma, TMA, setmaxnreg: sm_90a alone (not forward compatible)
WGMMA = {("gemm", "wgmma"), ("gemm", "wgmma_ws"), ("gemm", "wgmma_persist")}
TMA = {("transpose", v) for v in ("coarsened_tma", "coarsened_tma_store_wide", "coarsened_tma_skew",
                                   "coarsened_sector_tma", "coarsened_sector_tma_any",
                                   "coarsened_sector_tma_any_el")}  # cp.async.bulk(.tensor): sm_90 and later
EXPECTED_SKIPS = {
    "sm_75": {("stencil", "coarsened"),  # cp.async: sm_80
              ("gemm", "wmma"), ("gemm", "mma_sync"), ("gemm", "mma_wide")} | WGMMA | TMA,  # mma.sync, bf16: sm_80
    "sm_80": WGMMA | TMA, "sm_86": WGMMA | TMA, "sm_89": WGMMA | TMA,
    "sm_90a": set(),
}


@pytest.mark.parametrize("arch", list(TARGETS))
def test_only_the_declared_variants_are_left_out(arch):
    skipped = {(n, v.name) for n in workloads.names() for v in tools.skipped_on(workloads.get(n), arch)[0]}
    assert skipped == EXPECTED_SKIPS.get(arch, WGMMA)


def test_a_declaration_is_right_the_full_unit_does_not_build_below_it():
    # stencil's coarsened at R = 32 uses cp.async: NVRTC refuses it for sm_75, naming sm_80,
    # which is what the variant declares
    w = workloads.get("stencil")
    with pytest.raises(comp.NeedsNewerArch) as caught:
        comp.compile_unit("stencil", w.kernel_names(), "sm_75", {"RADIUS": 32})
    assert caught.value.arch == w.variant("coarsened").needs == "sm_80"


@pytest.mark.parametrize("arch, needs, ok", [
    ("sm_75", None, True), ("sm_75", "sm_80", False), ("sm_80", "sm_80", True), ("sm_120", "sm_80", True),
    ("sm_90", "sm_90a", False), ("sm_90a", "sm_90a", True), ("sm_90a", "sm_80", True), ("sm_100", "sm_90a", False),
    ("sm_86", "sm_89", False), ("sm_100a", "sm_100a", True),
])
def test_target_meets(arch, needs, ok):
    assert comp.target_meets(arch, needs) is ok


def test_compile_for_sm75_builds_the_rest_and_names_the_skip(run_cli):
    code, out, err = run_cli("compile", "--arch", "sm_75", "stencil")
    assert code == 0, err
    lines = out.splitlines()
    assert "\x00" not in out
    assert lines[-1] == "SKIP stencil coarsened: needs sm_80, not built for sm_75"
    built = [line for line in lines if line.startswith("OK")]
    assert len(built) == 16 and not any("coarsened" in line for line in built)  # naive, shared, 64-bit paths x 4 radii


def test_compile_for_an_arch_specific_target(run_cli):
    code, out, err = run_cli("compile", "--arch", "sm_90a", "vecadd")
    assert code == 0, err
    assert out.splitlines()[0].endswith("sm_90a") and sum(line.startswith("OK") for line in out.splitlines()) == 4


def test_a_gpu_arch_this_nvrtc_cannot_build_is_exit_3(run_cli):
    from pmppbench.hardware.gpu import nvrtc

    supported = nvrtc().getSupportedArchs()
    old = next(a for a in (70, 61, 60, 52) if a not in supported)  # NVRTC 13 dropped Volta and older
    code, _, err = run_cli("compile", "--arch", f"sm_{old}")
    assert code == 3 and len(err.strip().splitlines()) == 1
    assert f"--arch sm_{old}: this NVRTC (" in err and f"cannot build it (it builds sm_{supported[0]} to sm_{supported[-1]})" in err


def test_a_gpu_this_nvrtc_cannot_build_for_is_exit_3(run_cli, monkeypatch):
    from dataclasses import replace

    from pmppbench.hardware import device
    from portability_profiles import T4

    volta = replace(T4, name="Tesla V100-SXM2-16GB", compute_capability="7.0", arch="sm_70")
    monkeypatch.setattr(device, "current", lambda: volta)
    code, _, err = run_cli("compile", "vecadd")
    assert code == 3 and len(err.strip().splitlines()) == 1
    assert err.startswith("pmppbench: this GPU (sm_70): this NVRTC (") and "install an NVRTC that supports sm_70" in err
