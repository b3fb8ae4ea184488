"""The studies' kernels build on the shipped device helpers: they include kernels_cu's
headers through NVRTC (no fork of load4, store4, copy16_async or move_tile), and every
candidate the memory-roof sweep times still compiles with them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from pmppbench.hardware.compile import compile_unit, kernels_from, shared_headers

ROOT = Path(__file__).resolve().parent.parent
STUDY = ROOT / "studies" / "memory_roof"


@pytest.fixture(scope="module")
def sweep(request):
    spec = importlib.util.spec_from_file_location("memory_roof_sweep", ROOT / "studies" / "memory_roof_sweep.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["memory_roof_sweep"] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules["memory_roof_sweep"]


def test_the_shipped_helpers_are_headers_and_no_study_forks_them():
    headers = shared_headers()
    assert {"vector_io.cuh", "transpose_tile.cuh"} <= set(headers)
    for name, definition in (("stencil", "float4 load4("), ("stencil", "void store4("),
                             ("stencil", "void copy16_async("), ("transpose", "void move_tile(")):
        assert definition in "".join(headers.values())
        study = (STUDY / f"{name}.cu").read_text()
        assert definition not in study, f"studies/memory_roof/{name}.cu defines {definition} again"
        shipped = (ROOT / "kernels_cu" / f"{name}.cu").read_text()
        assert definition not in shipped and '#include "' in shipped and '#include "' in study


def test_the_sweeps_candidates_compile_with_the_shipped_helpers(sweep):
    orders = [f"ordered<{g}, {cs}>" for g, cs in sweep.T3_CANDIDATES]
    pipes = [sweep.pipe_name(*p) for p in sweep.S3_PIPES]
    with kernels_from(STUDY):
        unit = compile_unit("transpose", orders, "sm_90", use_cache=False)
        assert set(unit.ptxas) == set(orders)
        unit = compile_unit("stencil", pipes, "sm_90", {"RADIUS": 32}, use_cache=False)
        assert set(unit.ptxas) == set(pipes)
    # ordered<128, 2>, the shipped tile order and cache mode, has the shipped kernel's shared tile
    shipped = compile_unit("transpose", ["coarsened<64>"], "sm_90").ptxas["coarsened<64>"]
    with kernels_from(STUDY):
        same = compile_unit("transpose", ["ordered<128, 2>"], "sm_90").ptxas["ordered<128, 2>"]
    assert same.static_smem == shipped.static_smem == 64 * 65 * 4


@pytest.mark.parametrize("workload", ["reduce", "histogram", "scan"])
def test_course_listing_compiles_through_the_same_path(workload, monkeypatch):
    """studies/baselines.py's listing kernels for the pattern workloads build with NVRTC as
    the shipped kernels do (studies/course_listings/course.cu, one unit for every workload)."""
    listings = ROOT / "studies" / "course_listings"
    monkeypatch.setenv("PMPPBENCH_KERNELS", str(listings))
    spec = importlib.util.spec_from_file_location("baselines", ROOT / "studies" / "baselines.py")
    baselines = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "baselines", baselines)  # its dataclasses look their module up
    spec.loader.exec_module(baselines)
    names = [p.listing for p in baselines.PAIRS[workload]]
    unit = compile_unit("course", names, "sm_90", use_cache=False)
    assert sorted(unit.ptxas) == sorted(names)
