"""NVRTC compilation (no GPU needed), the disk cache, and compiler error reports."""

from __future__ import annotations

import pytest

from pmppbench.hardware import compile as comp
from pmppbench import workloads
from pmppbench.errors import CompileError, UsageError


@pytest.mark.parametrize("name", workloads.names())
def test_every_kernel_of_every_workload_compiles_for_sm90(name):
    w = workloads.get(name)
    assert comp.device_target("sm_90") == "sm_90a"  # what an H100 / H200 builds: wgmma's target too
    for defines in w.compile_sets():
        unit = comp.compile_unit(w.name, w.kernel_names(), "sm_90a", defines)
        assert unit.cubin[:4] == b"\x7fELF"
        for kernel in w.kernel_names():
            report = unit.ptxas[kernel]
            assert report.registers > 0
            assert report.spill_stores == 0 and report.spill_loads == 0, f"{kernel} spills"


@pytest.mark.parametrize("arch", ["sm_75", "sm_90"])  # sm_75: the oldest CUDA 13 targets
def test_the_protocols_hold_kernel_compiles(arch):
    unit = comp.compile_unit("timing", ["hold"], arch, use_cache=False)
    assert unit.ptxas["hold"].registers > 0 and unit.ptxas["hold"].spill_stores == 0


@pytest.mark.parametrize("arch", ["sm_75", "sm_90"])
def test_the_checks_kernel_compiles(arch):
    from pmppbench.measure.check import CHECK_KERNELS

    unit = comp.compile_unit("check", list(CHECK_KERNELS), arch, use_cache=False)
    for name in CHECK_KERNELS:
        assert unit.ptxas[name].registers > 0 and unit.ptxas[name].spill_stores == 0, name


def test_second_compile_comes_from_disk_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PMPPBENCH_CACHE_DIR", str(tmp_path))
    before = comp.STATS["nvrtc_runs"]
    first = comp.compile_unit("vecadd", ["scalar<int>"], "sm_90")
    second = comp.compile_unit("vecadd", ["scalar<int>"], "sm_90")
    assert not first.from_cache and second.from_cache
    assert comp.STATS["nvrtc_runs"] == before + 1
    assert second.cubin == first.cubin and second.ptxas == first.ptxas


def test_prefetch_fills_the_cache_for_the_worker(tmp_path, monkeypatch):
    """A run's units compile ahead in other processes; the step then finds them on disk."""
    monkeypatch.setenv("PMPPBENCH_CACHE_DIR", str(tmp_path))  # the pool's processes inherit it
    units = [("vecadd", ("scalar<int>",), ()), ("stencil", ("naive<int>",), (("RADIUS", 3),)),
             ("vecadd", ("scalar<int>",), ())]  # the same unit twice compiles once
    pre = comp.Prefetch.for_gpu(units, "sm_90", workers=2)
    assert len(pre.futures) == 2
    pre.close()
    before = comp.STATS["nvrtc_runs"]
    target = comp.device_target("sm_90")  # what the worker builds on that GPU: sm_90a
    assert comp.compile_unit("vecadd", ["scalar<int>"], target).from_cache
    assert comp.compile_unit("stencil", ["naive<int>"], target, {"RADIUS": 3}).from_cache
    assert comp.STATS["nvrtc_runs"] == before
    assert not list(tmp_path.rglob("*.tmp"))  # every cache file written whole
    again = comp.Prefetch.for_gpu(units, "sm_90", workers=2)  # a warm run: nothing to build, no pool
    assert again.futures == [] and again._pool is None
    assert comp.is_cached(units[0], target) and not comp.is_cached(units[0], "sm_80")


def test_prefetch_for_several_targets_compiles_each_once_and_a_step_can_wait_for_its_unit(tmp_path, monkeypatch):
    monkeypatch.setenv("PMPPBENCH_CACHE_DIR", str(tmp_path))
    unit = ("vecadd", ("scalar<int>",), ())
    pre = comp.Prefetch([(unit, "sm_75"), (unit, "sm_90"), (unit, "sm_75")], workers=2)
    assert len(pre.futures) == 2  # the same unit for the same target twice compiles once
    pre.wait(unit, "sm_90")  # then it is in the cache, while sm_75's may still be compiling
    before = comp.STATS["nvrtc_runs"]
    assert comp.compile_unit("vecadd", ["scalar<int>"], "sm_90").from_cache
    pre.wait(unit, "sm_80")  # a unit the pool was not given: nothing to wait for
    pre.wait(unit, "sm_75")
    assert comp.compile_unit("vecadd", ["scalar<int>"], "sm_75").from_cache
    assert comp.STATS["nvrtc_runs"] == before
    pre.close()


def test_a_unit_that_fails_in_prefetch_fails_in_its_step(tmp_path, monkeypatch):
    monkeypatch.setenv("PMPPBENCH_CACHE_DIR", str(tmp_path))
    pre = comp.Prefetch.for_gpu([("vecadd", ("no_such_kernel<int>",), ()), ("vecadd", ("scalar<int>",), ())], "sm_90")
    pre.close()
    with pytest.raises(CompileError, match="no_such_kernel"):
        comp.compile_unit("vecadd", ["no_such_kernel<int>"], "sm_90")


def test_defines_change_the_cache_key(tmp_path, monkeypatch):
    monkeypatch.setenv("PMPPBENCH_CACHE_DIR", str(tmp_path))
    comp.compile_unit("vecadd", ["scalar<int>"], "sm_90", {"UNUSED": 1})
    assert not comp.compile_unit("vecadd", ["scalar<int>"], "sm_90", {"UNUSED": 2}).from_cache


def test_compile_error_reports_file_and_line(tmp_path, monkeypatch):
    (tmp_path / "broken.cu").write_text('extern "C" __global__ void k(float* x) {\n  x[0] = ;\n}\n')
    monkeypatch.setenv("PMPPBENCH_KERNELS", str(tmp_path))
    with pytest.raises(CompileError) as info:
        comp.compile_unit("broken", ["k"], "sm_90", use_cache=False)
    assert f"{tmp_path.name}/broken.cu(2)" in str(info.value)
    assert "error" in str(info.value)


def test_unknown_name_expression_is_a_compile_error():
    with pytest.raises(CompileError, match="no_such_kernel"):
        comp.compile_unit("vecadd", ["no_such_kernel"], "sm_90", use_cache=False)


def test_bad_arch_is_a_usage_error():
    with pytest.raises(UsageError, match="sm_90"):
        comp.compile_unit("vecadd", ["scalar<int>"], "ninety")


def test_ptxas_log_parser():
    log = """ptxas info    : Compiling entry function '_Z5tiledILi33EEvPKfPfii' for 'sm_90'
ptxas info    : Function properties for _Z5tiledILi33EEvPKfPfii
ptxas         .     8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 18 registers, used 1 barriers, 4224 bytes smem, 384 bytes cmem[0]
"""
    rep = comp.parse_ptxas_log(log)["_Z5tiledILi33EEvPKfPfii"]
    assert (rep.registers, rep.static_smem, rep.stack_bytes, rep.spill_stores, rep.spill_loads) == (18, 4224, 8, 4, 4)


def test_cubin_is_a_whole_elf_image():
    """cuobjdump/nvdisasm need the full image; CuPy's getCUBIN returns one byte short."""
    cubin = comp.compile_unit("vecadd", ["scalar<int>"], "sm_90", use_cache=False).cubin
    shoff = int.from_bytes(cubin[0x28:0x30], "little")
    shentsize, shnum = int.from_bytes(cubin[0x3A:0x3C], "little"), int.from_bytes(cubin[0x3C:0x3E], "little")
    assert len(cubin) >= shoff + shentsize * shnum


def test_the_cache_key_names_an_include_folder_by_its_headers_not_its_place(tmp_path):
    """Two venvs with the same header wheels share their cubins (CI's two venvs do); another
    version of a header is another key."""
    from pmppbench.hardware.compile import _cache_key, header_identity

    one, two = tmp_path / "venv1" / "include", tmp_path / "venv2" / "include"
    for folder in (one, two):
        (folder / "cuda" / "std").mkdir(parents=True)
        (folder / "cuda_runtime_api.h").write_text("#define CUDART_VERSION 13050\n")
        (folder / "cuda" / "std" / "version").write_text("#define CCCL_VERSION 3003005\n")
    key = _cache_key("k", ["k"], ["-arch=sm_90", f"-I{one}"], (13, 5))
    assert _cache_key("k", ["k"], ["-arch=sm_90", f"-I{two}"], (13, 5)) == key
    (two / "cuda" / "std" / "version").write_text("#define CCCL_VERSION 3004000\n")
    header_identity.cache_clear()
    assert _cache_key("k", ["k"], ["-arch=sm_90", f"-I{two}"], (13, 5)) != key
