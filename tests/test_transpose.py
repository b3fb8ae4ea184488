"""Transpose workload: references, traffic model, validation, NVRTC compile and the coarsened
kernel under a small emulation of CUDA threads on the CPU; every variant bit-exact on edge
shapes on the GPU."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from gpu_helpers import assert_all_pass, check_rows

from pmppbench.measure.check import compare
from pmppbench.workloads.base import Context
from pmppbench.hardware.compile import compile_unit, kernels_dir
from pmppbench.errors import UsageError
from pmppbench.workloads import transpose
from pmppbench.measure.check import to_host
from pmppbench.workloads.helpers import INT_MAX, MAX_GRID_Y, SAMPLE
from pmppbench.workloads.transpose import COARSENED_TILE, LARGE_CHECK, TILE_DIM, WORKLOAD

W = WORKLOAD
ROOT = Path(__file__).resolve().parent.parent
TRANSPOSES = ["naive", "shared32", "padded33", "coarsened"]
# The forms beyond coarsened: those `best` picks (shipped, run when named) and the study's
# (studies/forms/transpose_forms.py, the workload transpose_forms), run through their own workload.
PICKED = ["coarsened_tma", "coarsened_tma_store_wide", "coarsened_tma_skew", "coarsened_sector_vec",
          "coarsened_sector_tma", "coarsened_sector_tma_any", "coarsened_sector_tma_any_el"]
TMA_FORMS = ["coarsened_tma", "coarsened_tma_store", "coarsened_tma_store_ef", "coarsened_tma_store_wide",
             "coarsened_tma_store_wide_ef", "coarsened_tma_skew"]  # sm_90
SECTOR_FORMS = ["coarsened_sector", "coarsened_sector_vec", "coarsened_sector_tall",
                "coarsened_sector_tall_vec", "coarsened_sector_tma", "coarsened_sector_tma_any",
                "coarsened_sector_tma_any_el", "coarsened_sector_tma_any_p128", "coarsened_sector_tma_any_p0",
                "coarsened_sector_bulk", "coarsened_sector_bulk_sec",
                "coarsened_sector_tma_lines"]  # the last eight sm_90
FORMS_DIR = ROOT / "studies" / "forms"


def _forms_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("transpose_forms", FORMS_DIR / "transpose_forms.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FORMS = _forms_module()
F = FORMS.WORKLOAD


def owner(name: str):
    """The workload that declares the form `name`: transpose, or the study's transpose_forms."""
    return W if name in W.variant_names() else F


def variant(name: str):
    return owner(name).variant(name)


def check_forms(shapes, names, monkeypatch):
    """check_rows of the shipped forms on transpose, then of the study's on transpose_forms (registered
    through PMPPBENCH_WORKLOADS, its kernels found through PMPPBENCH_KERNEL_PATH)."""
    shipped = [n for n in names if owner(n) is W]
    rows = check_rows("transpose", shapes, variants=shipped) if shipped else []
    study = [n for n in names if owner(n) is F]
    if study:
        monkeypatch.syspath_prepend(str(FORMS_DIR))
        monkeypatch.setenv("PMPPBENCH_WORKLOADS", "transpose_forms=transpose_forms")
        monkeypatch.setenv("PMPPBENCH_KERNEL_PATH", str(FORMS_DIR))
        rows += check_rows("transpose_forms", shapes, variants=study)
    return rows
MAX_M = MAX_GRID_Y * TILE_DIM  # 2,097,120 rows: the last M whose row tiles fit in gridDim.y


def shape(m, n):
    return {"m": m, "n": n}


# ---- declaration ------------------------------------------------------------------

def test_variants_are_the_course_four_plus_coarsened_and_the_memcpy_roof():
    assert W.variant_names() == ["copy", *TRANSPOSES, "best", "memcpy", *PICKED]
    # the forms best picks run when named (or picked by best): the default table is the seven
    assert [v.name for v in W.variants_for(shape(4096, 4096))] == ["copy", *TRANSPOSES, "best", "memcpy"]
    # every other form is the study's, with every name of both lists declared once
    assert F.variant_names() == ["coarsened", "memcpy", *(f for f in TMA_FORMS + SECTOR_FORMS if f not in PICKED)]
    assert W.variant("coarsened_tma").needs == "sm_90" and W.variant("coarsened_tma").kernel == "coarsened_tma<64>"
    kernels = {v.name: v.kernel for v in W.variants}
    # shared32 and padded33 are one template; the shared row stride is the only difference.
    assert kernels["shared32"] == "tiled<32, int>" and kernels["padded33"] == "tiled<33, int>"
    assert kernels["copy"] == "copy<int>" and kernels["naive"] == "naive<int>"
    assert kernels["coarsened"] == f"coarsened<{COARSENED_TILE}>"
    assert kernels["memcpy"] is None and None not in W.kernel_names()  # a library call
    assert (W.baseline, W.roof, W.rate) == ("naive", "memcpy", "GB/s")
    assert W.tolerance.rule == "exact"


def test_check_shapes_cover_edges():
    shapes = {(s["m"], s["n"]) for s in W.check_shapes()}
    assert {(4096, 4096), (1000, 3000), (33, 31), (31, 33), (1, 1), (1, 4097), (4097, 1)} <= shapes
    # one shape past 2^31 elements, with partial tiles on both edges: the 64-bit path
    m, n = LARGE_CHECK["m"], LARGE_CHECK["n"]
    assert (m, n) in shapes and m * n > 2**31 and m % 32 and n % 32 and W.index_type(LARGE_CHECK) == "long long"
    assert W.default_shape() == shape(4096, 4096)
    assert W.label(shape(1000, 3000)) == "1000x3000"


# ---- references -------------------------------------------------------------------

def test_reference_on_the_seeds_2x3_example():
    a = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32)
    b = W.reference(shape(2, 3), {"a": a}, W.variant("naive"))
    assert b.shape == (3, 2) and b.flags.c_contiguous
    # Row-major memory: A is 1 2 3 4 5 6, B = A^T is 1 4 2 5 3 6.
    assert b.reshape(-1).tolist() == [1, 4, 2, 5, 3, 6]
    assert W.reference(shape(2, 3), {"a": a}, W.variant("copy")).reshape(-1).tolist() == [1, 2, 3, 4, 5, 6]


def test_transposes_share_one_reference_and_copy_has_its_own():
    keys = {v.name: W.reference_key(v) for v in W.variants}
    assert len({keys[n] for n in TRANSPOSES}) == 1
    assert keys["copy"] != keys["naive"]
    assert keys["memcpy"] == keys["copy"]  # memcpy writes A unchanged too


@pytest.mark.parametrize("m,n", [(64, 64), (33, 31), (1, 4097)])
def test_a_copy_never_passes_as_a_transpose_nor_the_reverse(m, n):
    inputs = W.make_inputs(shape(m, n), np.random.default_rng(0))
    copy_ref = W.reference(shape(m, n), inputs, W.variant("copy"))
    transpose_ref = W.reference(shape(m, n), inputs, W.variant("naive"))
    assert compare(transpose_ref.copy(), transpose_ref, W.tolerance).passed
    assert compare(copy_ref.copy(), copy_ref, W.tolerance).passed
    wrong = compare(transpose_ref.copy(), copy_ref, W.tolerance)
    assert not wrong.passed and wrong.status == "FAIL"
    assert not compare(copy_ref.copy(), transpose_ref, W.tolerance).passed


def test_inputs_are_random_fp32_without_zeros():
    a = W.make_inputs(shape(33, 31), np.random.default_rng(3))["a"]
    assert a.shape == (33, 31) and a.dtype == np.float32
    assert np.count_nonzero(a) == a.size and len(np.unique(a)) == a.size


# ---- model ------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["copy", *TRANSPOSES, "memcpy"])
def test_traffic_is_eight_bytes_per_element(name):
    t = W.traffic(shape(1000, 3000), W.variant(name))
    assert (t.bytes, t.flops) == (24_000_000, 0)
    assert W.traffic(shape(8192, 8192), W.variant(name)).bytes == 8 * 8192 * 8192


def test_device_bytes_are_a_and_b():
    assert W.device_bytes(shape(4096, 4096)) == 2 * 4 * 4096 * 4096
    assert W.device_bytes(shape(1, 4097)) == 8 * 4097


# ---- validation -------------------------------------------------------------------

@pytest.mark.parametrize("bad", [shape(0, 4), shape(4, -1), shape(4, None), shape(2.5, 4), shape(True, 4)])
def test_validate_rejects_non_positive_sizes(bad):
    with pytest.raises(UsageError, match="must be a positive integer"):
        W.validate(bad)


def test_validate_guards_the_grid_y_limit():
    W.validate(shape(MAX_M, 1))
    with pytest.raises(UsageError, match=rf"65535.*at most {MAX_M}"):
        W.validate(shape(MAX_M + 1, 1))


@pytest.mark.parametrize("m,n", [(1, 1), (33, 31), (1000, 3000), (1, 4097), (4097, 1), (8192, 8192), (MAX_M, 3)])
@pytest.mark.parametrize("name", ["copy", *TRANSPOSES])
def test_launch_geometry_covers_the_matrix_with_no_empty_tile(name, m, n):
    (gx, gy), (bx, by) = W.geometry(W.variant(name), {"m": m, "n": n})
    tile = COARSENED_TILE if name == "coarsened" else TILE_DIM
    assert bx == 32 and (bx, by) == ((32, 8) if name == "coarsened" else (32, 32))
    assert gx * tile >= n > (gx - 1) * tile  # x runs over A's columns
    assert gy * tile >= m > (gy - 1) * tile  # y over A's rows
    assert gy <= MAX_GRID_Y


# ---- compile (no GPU needed) -------------------------------------------------------

def test_every_kernel_compiles_for_sm90_without_spills():
    # coarsened<32> is the classic 32x32-tile design, kept compiling as the alternative.
    names = [*W.kernel_names(), "coarsened<32>"]
    unit = compile_unit("transpose", names, "sm_90")
    assert set(unit.ptxas) == set(names)
    for name, report in unit.ptxas.items():
        assert report.registers > 0, name
        assert (report.spill_stores, report.spill_loads, report.stack_bytes) == (0, 0, 0), name
    smem = {name: r.static_smem for name, r in unit.ptxas.items()}
    for index in ("int", "long long"):  # both index paths of the course's four
        assert smem[f"copy<{index}>"] == smem[f"naive<{index}>"] == 0
        assert smem[f"tiled<32, {index}>"] == 32 * 32 * 4
        assert smem[f"tiled<33, {index}>"] == 32 * 33 * 4  # the pad: 128 bytes more per block
    assert smem[f"coarsened<{COARSENED_TILE}>"] == COARSENED_TILE * (COARSENED_TILE + 1) * 4
    assert smem["coarsened<32>"] == 32 * 33 * 4
    # two 32-column boxes of 64 rows, 1024-byte aligned for the swizzle, and the mbarrier
    assert smem[f"coarsened_tma<{COARSENED_TILE}>"] == 2 * 32 * COARSENED_TILE * 4 + 8
    # the store forms (the shipped wide one, the study's others): A's tile (64 columns x ROWS rows), its
    # memory reused for B's, and the mbarrier
    study = [v.kernel for v in FORMS.FORMS]
    forms = compile_unit("transpose_forms", study, "sm_90", source=FORMS_DIR / "transpose_forms.cu")
    assert set(forms.ptxas) == set(study)
    assert all((r.spill_stores, r.stack_bytes) == (0, 0) for r in forms.ptxas.values())
    smem.update({name: r.static_smem for name, r in forms.ptxas.items()})
    for rows in (COARSENED_TILE, 2 * COARSENED_TILE):
        for ef in ("false", "true"):
            assert smem[f"coarsened_tma_store<{rows}, {ef}>"] == COARSENED_TILE * rows * 4 + 8
    # the skewed form: two boxes of 32 columns x 68 rows, each at a 1024-byte boundary, and the mbarrier
    assert smem[f"coarsened_tma_skew<{COARSENED_TILE}>"] == 2 * 9216 + 8


def test_the_tma_form_says_why_it_cannot_run_before_any_gpu_work():
    """coarsened_tma's shape limits are Unavailable (a SKIP row with the reason), raised before
    the job touches the device: rows not on a float4 either way, or a side past int32."""
    from pmppbench.workloads.base import Unavailable

    ctx = Context({}, None, a=None, b=None)
    for m, n, words in ((33, 31, "multiples of 4"), (4096, 4097, "multiples of 4"), (4097, 4096, "multiples of 4"),
                        (4, 1 << 31, r"below 2\^31")):
        for form in TMA_FORMS:
            with pytest.raises(Unavailable, match=words):
                owner(form).job(variant(form), shape(m, n), ctx)


# ---- index paths --------------------------------------------------------

def test_int_while_every_offset_fits():
    assert W.index_type(shape(4096, 4096)) == W.index_type(shape(46340, 46340)) == "int"
    assert W.index_type(shape(46341, 46341)) == "long long"  # 2,147,488,281 elements
    assert W.index_type(shape(1, INT_MAX - TILE_DIM)) == "int"
    assert W.index_type(shape(1, INT_MAX - TILE_DIM + 1)) == "long long"  # x runs to the rounded-up edge
    assert W.index_type(shape(INT_MAX - TILE_DIM + 1, 1)) == "long long"
    names = W.kernel_names()
    for v in W.variants:
        if v.name not in ("coarsened", "best", "memcpy") and not v.name.startswith(("coarsened_tma", "coarsened_sector")):
            assert v.kernel.endswith(", int>") or v.kernel.endswith("<int>")
            assert v.kernel.replace("int>", "long long>") in names


@pytest.mark.parametrize("name", ["copy", "naive", "padded33"])
def test_large_shapes_are_checked_on_sampled_rows_and_columns(monkeypatch, name):
    """Above SAMPLE_ABOVE elements the reference holds sampled whole rows and then columns of
    the output, the last ones among them; this small shape stands in for one past 2^31."""
    monkeypatch.setattr(transpose, "SAMPLE_ABOVE", 1000)
    monkeypatch.setattr(transpose, "SAMPLES", 8)
    s = shape(300, 450)
    inputs = W.make_inputs(s, np.random.default_rng(3))
    rows_m, rows_n = inputs[SAMPLE]
    assert rows_m[-1] == 299 and rows_n[-1] == 449 and len(rows_m) < 300 and len(rows_n) < 450
    a = inputs["a"]
    out = a if name == "copy" else np.ascontiguousarray(a.T)
    rows, cols = (rows_m, rows_n) if name == "copy" else (rows_n, rows_m)
    expected = np.concatenate([out[rows, :].ravel(), out[:, cols].T.ravel()])
    np.testing.assert_array_equal(W.reference(s, inputs, W.variant(name)), expected)
    # copy's sample is not a transpose's: the two references still tell them apart
    if name != "copy":
        assert not np.array_equal(W.reference(s, inputs, W.variant("copy"))[: expected.size], expected)


# ---- the coarsened kernel on the CPU ------------------------------------------------
# As in test_stencil.py: one std::thread per CUDA thread, blocks one after another,
# __syncthreads() a std::barrier, the __shared__ tile static; the float4 and streaming-access
# names stand in for CUDA's. Both paths (float4 for full aligned tiles, element by element
# otherwise) and every edge are checked against A^T, bit for bit, with no GPU.

EMULATOR = r"""
#include <barrier>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>
struct float4 { float x, y, z, w; };
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
struct Index { unsigned x, y; };
thread_local Index threadIdx, blockIdx;
static Index gridDim;
static std::barrier<>* block_barrier;
inline void __syncthreads() { block_barrier->arrive_and_wait(); }
template <class T> T __ldcs(const T* p) { return *p; }
template <class T> void __stcs(T* p, T v) { *p = v; }
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#include KERNELS

int main(int argc, char** argv) {  // emulator M N [A_OFFSET B_OFFSET] < A (M*N floats) > B (N*M floats)
    size_t m = std::atoll(argv[1]), n = std::atoll(argv[2]);
    // A and B that many floats past a 16-byte boundary (the sector forms' shifts follow the address)
    const size_t a_off = argc > 3 ? std::atoll(argv[3]) : 0, b_off = argc > 4 ? std::atoll(argv[4]) : 0;
    // A and B sit between NaN guards: a read outside A makes a NaN output, a write outside B
    // is caught below (exit 3).
    const size_t guard = 4096;
    std::vector<float> as(m * n + 2 * guard + 8, NAN), bs(m * n + 2 * guard + 8, NAN);
    float *a = as.data() + guard + a_off, *b = bs.data() + guard + b_off;
    if (std::fread(a, sizeof(float), m * n, stdin) != m * n) return 1;
    unsigned gx = (n + EMU_TILE - 1) / EMU_TILE, gy = (m + EMU_EXTRA + EMU_ROWS - 1) / EMU_ROWS;
    gridDim = {gx, gy};
    std::barrier<> bar(256);
    block_barrier = &bar;
    std::vector<std::thread> team;
    for (int t = 0; t < 256; ++t)
        team.emplace_back([&, t] {
            threadIdx.x = t % 32;
            threadIdx.y = t / 32;
            for (unsigned by = 0; by < gy; ++by)
                for (unsigned bx = 0; bx < gx; ++bx) {
                    blockIdx.x = bx;
                    blockIdx.y = by;
                    EMU_KERNEL(a, b, m, n);
                    bar.arrive_and_wait();  // the block is done before the next reuses __shared__
                }
        });
    for (auto& member : team) member.join();
    for (size_t i = 0; i < guard; ++i)
        if (!std::isnan(b[-1 - (long long)i]) || !std::isnan(b[m * n + i])) return 3;
    std::fwrite(b, sizeof(float), m * n, stdout);
}
"""


def _emulator(tmp_path, kernel: str, tile: int, rows: int, extra: int) -> Path:
    """The CPU emulation of `kernel` (tiles of `tile` columns x `rows` rows, a grid of tile rows up to
    M + extra), built with g++; a skip where there is no C++20 g++."""
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ to build the CPU emulation of the kernel")
    probe = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", "-x", "c++", "-"], input="#include <barrier>\n",
                           capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("g++ lacks C++20 <barrier>")
    source, binary = tmp_path / "emulator.cpp", tmp_path / "emulator"
    source.write_text(EMULATOR)
    subprocess.run([cxx, "-std=c++20", "-O1", "-pthread", "-Wall", "-Werror", "-Wno-unknown-pragmas",
                    f"-DEMU_TILE={tile}", f"-DEMU_ROWS={rows}", f"-DEMU_EXTRA={extra}", f"-DEMU_KERNEL={kernel}",
                    f'-DKERNELS="{kernels_dir() / "transpose.cu"}"', str(source), "-o", str(binary)],
                   check=True, capture_output=True, text=True)
    return binary


@pytest.mark.parametrize("tile", [COARSENED_TILE, 32])
def test_coarsened_on_the_cpu_emulation(tmp_path, tile):
    binary = _emulator(tmp_path, f"coarsened<{tile}>", tile, tile, 0)
    # Full float4 tiles (64x64, 128x192, 256x256), partial tiles with N and M multiples of 4
    # (68x132, 100x64), rows not on a float4 (33x31, 96x100 has N % 4 == 0 but M = 96 too, so
    # it is full where it can be), thin matrices and a single element.
    for m, n in ((64, 64), (128, 192), (256, 256), (68, 132), (100, 64), (96, 100), (33, 31), (31, 33), (2, 3),
                 (1, 1), (1, 70), (70, 1), (130, 66)):
        a = np.random.default_rng(m * n).standard_normal((m, n), dtype=np.float32)
        run = subprocess.run([str(binary), str(m), str(n)], input=a.tobytes(), capture_output=True, check=True)
        np.testing.assert_array_equal(np.frombuffer(run.stdout, dtype=np.float32).reshape(n, m), a.T,
                                      err_msg=f"coarsened<{tile}> {m}x{n}")


# ---- CLI bad input (exit 2 before any GPU work) ------------------------------------

@pytest.mark.parametrize("args,words", [
    (["transpose", "0", "4096"], "M must be a positive integer"),
    (["transpose", "4096", "0"], "N must be a positive integer"),
    (["transpose", "64", "64", "0"], "REPS must be a positive integer"),
    (["transpose", str(MAX_M + 1), "1", "--check-only"], "gridDim.y"),
    (["transpose", "--check-only", "--variants", "padded32"], "unknown variant 'padded32'"),
])
def test_cli_bad_input_is_one_line_exit_2(run_cli, args, words):
    code, _out, err = run_cli(*args)
    assert code == 2
    assert words in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


# ---- the course's listing (studies/baselines.py times it beside the rungs) ------------

def test_course_listing_compiles_through_the_same_path(monkeypatch):
    listings = Path(__file__).resolve().parent.parent / "studies" / "course_listings"
    monkeypatch.setenv("PMPPBENCH_KERNELS", str(listings))
    unit = compile_unit("course", ["copy", "naive", "shared32", "padded33"], "sm_90", use_cache=False)
    for name, report in unit.ptxas.items():
        assert report.registers > 0 and (report.spill_stores, report.stack_bytes) == (0, 0), name


# ---- GPU ---------------------------------------------------------------------------

@pytest.mark.gpu
def test_every_variant_passes_bit_exact_on_every_check_shape():
    rows = check_rows("transpose", W.check_shapes())
    assert_all_pass(rows)
    assert len(rows) == len(W.variants_for(W.default_shape())) * len(W.check_shapes())
    for r in rows:
        assert r.tolerance == "bit-exact"
        if r.variant == "memcpy":  # a library call: no kernel of ours, no resources
            assert r.threads_per_block is None
            continue
        assert r.registers and r.threads_per_block in (1024, 256) and r.spill_bytes == 0


@pytest.mark.gpu
def test_the_tma_form_is_bit_exact_where_it_runs_and_skips_elsewhere(monkeypatch):
    """coarsened_tma on full tiles, partial tiles of both edges (the engine's zero fill and the
    kernel's bounds), one float4-wide matrix and the issue's pitches; a shape whose rows do not
    start on a float4 is a SKIP row that says why, never a wrong answer."""
    from pmppbench.hardware import device
    from pmppbench.workloads.base import arch_meets

    if not arch_meets(device.current().compute_capability, "sm_90"):
        pytest.skip("coarsened_tma needs sm_90")
    shapes = [shape(m, n) for m, n in ((4096, 4096), (1000, 3000), (68, 132), (4, 4), (64, 4), (100, 64),
                                       (4100, 4100), (8192, 8196), (200, 10000))]
    forms = [*(f for f in TMA_FORMS if f != "coarsened_tma_skew"), "best"]  # the engine's stores clip B too
    rows = check_forms(shapes, forms, monkeypatch)
    assert_all_pass(rows)
    assert len(rows) == len(forms) * len(shapes) and all(r.tolerance == "bit-exact" for r in rows)
    skewed = [shape(m, n) for m, n in ((68, 132), (4, 4), (100, 64), (4100, 4100), (8196, 8192), (12, 3000))]
    rows = check_rows("transpose", skewed, variants=["coarsened_tma_skew"])  # M = 4 mod 8, its shapes
    assert_all_pass(rows)
    assert len(rows) == len(skewed) and all(r.tolerance == "bit-exact" for r in rows)
    skipped = check_forms([shape(33, 31), shape(4097, 4097)], TMA_FORMS, monkeypatch)
    assert [r.check for r in skipped] == ["SKIP"] * 2 * len(TMA_FORMS)
    assert check_rows("transpose", [shape(4096, 4096)], variants=["coarsened_tma_skew"])[0].check == "SKIP"
    assert all("multiples of 4" in r.check_detail for r in skipped)


@pytest.mark.gpu
def test_the_sector_forms_are_bit_exact_at_every_pitch(monkeypatch):
    """coarsened_sector's forms and best (on Hopper the sector forms wherever M or N is not a
    multiple of 4) on rows at every residue mod 8, partial tiles of both edges and thin matrices; the TMA
    form where N is a multiple of 4 (A's last M % 4 rows past its map of rows of four), and a SKIP
    that says why elsewhere."""
    from pmppbench.hardware import device
    from pmppbench.workloads.base import arch_meets

    forms = [f for f in SECTOR_FORMS if "_tma" not in f]  # the TMA forms below, on sm_90
    shapes = [shape(m, n) for m, n in ((7, 129), (33, 4097), (4097, 33), (4097, 4095), (4097, 4097), (4100, 4097),
                                       (4097, 4100), (67, 133), (130, 70), (1001, 3003), (4096, 4096), (4098, 4102),
                                       (1, 1), (3, 4097), (1, 70), (4, 3), (132, 67), (4096, 4098))]
    rows = check_forms(shapes, [*forms, "best"], monkeypatch)
    assert_all_pass(rows)
    assert len(rows) == (len(forms) + 1) * len(shapes) and all(r.tolerance == "bit-exact" for r in rows)
    if not arch_meets(device.current().compute_capability, "sm_90"):
        return
    aligned = [shape(m, n) for m, n in ((67, 132), (130, 68), (4097, 4100), (4, 4), (5, 8), (4098, 4096))]
    rows = check_rows("transpose", aligned, variants=["coarsened_sector_tma"])
    assert_all_pass(rows)
    skipped = check_rows("transpose", [shape(67, 133), shape(3, 4)], variants=["coarsened_sector_tma"])
    assert [r.check for r in skipped] == ["SKIP", "SKIP"]
    assert "multiple of 4" in skipped[0].check_detail and "M >= 4" in skipped[1].check_detail
    anyn = [shape(m, n) for m, n in ((67, 133), (130, 67), (4097, 4097), (4099, 4101), (4, 5), (5, 7), (4098, 4097),
                                     (4096, 4097), (1001, 3003), (4097, 4100), (8193, 8195))]
    any_forms = ["coarsened_sector_tma_any", "coarsened_sector_tma_any_el", "coarsened_sector_tma_any_p128",
                 "coarsened_sector_tma_any_p0"]
    rows = check_forms(anyn, any_forms, monkeypatch)
    assert_all_pass(rows)
    assert len(rows) == len(any_forms) * len(anyn) and all(r.tolerance == "bit-exact" for r in rows)
    bulk = [*anyn, shape(1, 1), shape(3, 4097), shape(4097, 3), shape(7, 129), shape(130, 70), shape(4096, 4096),
            shape(5, 1), shape(1, 5), shape(9, 66)]  # any M and N, the end of A in a partial 16 bytes
    rows = check_forms(bulk, ["coarsened_sector_bulk", "coarsened_sector_bulk_sec"], monkeypatch)
    assert_all_pass(rows)
    assert len(rows) == 2 * len(bulk) and all(r.tolerance == "bit-exact" for r in rows)
    # M mod 32 from 0 to 31: the block's own rows (past the maps) from none to 31
    lines = [*(s for s in anyn if s["m"] >= 32), shape(32, 1), shape(32, 4097), shape(39, 129), shape(130, 70),
             shape(4096, 4096), shape(95, 66), shape(4127, 4098), shape(67, 198)]
    rows = check_forms(lines, ["coarsened_sector_tma_lines"], monkeypatch)
    assert_all_pass(rows)
    assert len(rows) == len(lines) and all(r.tolerance == "bit-exact" for r in rows)
    skipped = check_forms([shape(31, 4097)], ["coarsened_sector_tma_lines"], monkeypatch)
    assert skipped[0].check == "SKIP" and "M >= 32" in skipped[0].check_detail


@pytest.mark.gpu
@pytest.mark.parametrize("m,n", [(MAX_M, 1), (MAX_M - 5, 3)])
def test_tallest_matrix_the_grid_allows(m, n):
    assert_all_pass(check_rows("transpose", [shape(m, n)]))


@pytest.mark.gpu
@pytest.mark.parametrize("m,n", [(64, 64), (33, 31)])
def test_copy_is_checked_as_a_copy_on_the_device(m, n):
    """Run copy, memcpy and naive for real: copy's and memcpy's output is A, and neither a copy
    nor a transpose passes the other's reference."""
    from pmppbench.hardware.compile import load_kernels
    from pmppbench.hardware.gpu import cupy

    s = shape(m, n)
    inputs = W.make_inputs(s, np.random.default_rng(7))
    ctx = W.setup(s, inputs, load_kernels("transpose", W.kernel_names()))
    outputs = {}
    for name in ("copy", "naive", "memcpy"):
        job = W.job(W.variant(name), s, ctx)
        job.poison()
        job.run()
        cupy().cuda.Device().synchronize()
        outputs[name] = to_host(job.output())
    copy_ref = W.reference(s, inputs, W.variant("copy"))
    transpose_ref = W.reference(s, inputs, W.variant("naive"))
    assert outputs["copy"].shape == (m, n) and outputs["naive"].shape == (n, m)
    assert compare(outputs["copy"], copy_ref, W.tolerance).passed
    assert outputs["memcpy"].shape == (m, n) and compare(outputs["memcpy"], copy_ref, W.tolerance).passed
    assert compare(outputs["naive"], transpose_ref, W.tolerance).passed
    assert not compare(outputs["naive"], copy_ref, W.tolerance).passed
    assert not compare(outputs["copy"], transpose_ref, W.tolerance).passed


@pytest.mark.gpu
def test_the_64_bit_path_passes_on_edge_shapes_too():
    """The long long instantiations, forced where the host would pick int, are right too."""
    from pmppbench.hardware.compile import load_kernels
    from pmppbench.hardware.gpu import cupy

    for s in (shape(33, 31), shape(1000, 3000), shape(1, 4097)):
        inputs = W.make_inputs(s, np.random.default_rng(11))
        ctx = W.setup(s, inputs, load_kernels("transpose", W.kernel_names()))
        for v in W.variants_for(s):
            launched = W.variant(transpose.picked(s, ctx.device)) if v.name == "best" else v
            if launched.kernel not in transpose.INDEXED:  # coarsened, the TMA forms, memcpy: no index path
                continue
            job = W.job(v, s, ctx, index="long long")
            assert job.launch.kernel.name.endswith("long long>")
            job.poison()
            job.run()
            cupy().cuda.Device().synchronize()
            result = compare(job.output(), W.reference(s, inputs, v), W.tolerance)
            assert result.passed, f"{v.name} {s}: {result.detail}"


def _study(name: str):
    """studies/memory_roof/<name>.py as a module (the studies are scripts, not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "studies" / "memory_roof" / f"{name}.py")
    study = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(study)
    return study


def test_every_shape_study_candidates_compile_and_now_is_the_shipped_kernel():
    """studies/memory_roof/every_shape.py's candidates (edged<GROUP, VEC_EDGES, CS>) compile with
    the shipped move_tile, and edged<1 << 20, true>, the form the study calls the shipped one,
    has coarsened<64>'s registers and shared tile."""
    study = _study("every_shape")
    from pmppbench.hardware.compile import kernels_from

    names = sorted({study.name(*c) for cands in study.CANDIDATES.values() for c in cands} | {"edged<1048576, true>"})
    with kernels_from(ROOT / "studies" / "memory_roof"):
        unit = compile_unit("transpose", names, "sm_90", use_cache=False)
    assert set(unit.ptxas) == set(names)
    shipped = compile_unit("transpose", ["coarsened<64>"], "sm_90").ptxas["coarsened<64>"]
    same = unit.ptxas["edged<1048576, true>"]
    assert (same.registers, same.static_smem) == (shipped.registers, shipped.static_smem) == (32, 64 * 65 * 4)


def test_the_load_study_builds_every_layout_for_sm90():
    """studies/memory_roof/tma_loads.cu's kernels (the copy engine's loads alone, one per layout), each
    one the study names, compile for sm_90 through pmppbench's NVRTC build within the 36,928 bytes of
    shared memory (and a barrier) they all share, so that a device call spends its time on timing, not
    on a build error."""
    study = _study("tma_loads")
    unit = compile_unit("tma_loads", list(study.FORMS), "sm_90", source=study.SOURCE, use_cache=False)
    assert set(unit.lowered) == set(unit.ptxas) == set(study.FORMS)
    assert all(r.static_smem <= 36928 + 8 for r in unit.ptxas.values()), unit.ptxas


def test_coarsened_tma_describes_a_to_the_copy_engine_as_the_kernel_reads_it(monkeypatch):
    """The tensor map of A (hardware/tma.py's, FP32): N contiguous elements by M rows, a row stride
    of 4N bytes, boxes of 32 columns (one 128-byte swizzle row) by the 64-row tile, no element
    strides, the 128-byte swizzle and zeros past the edges."""
    from pmppbench.workloads import transpose as tr
    from pmppbench.hardware import tma

    calls = []

    def encode(words, dtype, rank, pointer, sizes, strides, box, elem, interleave, swizzle, l2, oob):
        calls.append((dtype, rank, pointer, list(sizes), list(strides), list(box), list(elem), interleave, swizzle,
                      l2, oob, words % 64))
        return 0

    monkeypatch.setattr(tma, "_encode", lambda: encode)

    class A:
        class data:
            ptr = 0x7F0000000000

    m, n = 8200, 8196
    tr.tile_map(A, m, n)
    assert calls == [(7, 2, A.data.ptr, [n, m], [4 * n], [32, tr.COARSENED_TILE], [1, 1], tma.INTERLEAVE_NONE,
                      tma.SWIZZLE_128B, tma.L2_PROMOTION[256], tma.OOB_FILL_ZERO, 0)]


def test_the_any_n_forms_maps_differ_only_in_their_l2_promotion(monkeypatch):
    """coarsened_sector_tma_any's study forms share its kernel and its map (4N elements by floor(M / 4)
    rows, 68 x 18 boxes, no swizzle) but for the L2 promotion: 256 bytes (the shipped maps', and _el's),
    128 (_p128) and none (_p0), passed to the driver as CU_TENSOR_MAP_L2_PROMOTION_256B, _128B, _NONE."""
    from pmppbench.workloads import transpose as tr
    from pmppbench.hardware import tma

    calls = []
    monkeypatch.setattr(tma, "_encode", lambda: lambda words, dtype, rank, pointer, sizes, strides, box, elem,
                        interleave, swizzle, l2, oob: calls.append((list(sizes), list(box), swizzle, l2)) or 0)

    class A:
        class data:
            ptr = 0x7F0000000000

    m, n = 8193, 8195
    assert FORMS.PROMOTION == {"coarsened_sector_tma_any_p128": 128, "coarsened_sector_tma_any_p0": 0}
    assert tma.PROMOTION == 256  # the shipped maps' (coarsened_sector_tma_any's and _el's)
    assert {variant(name).kernel for name in FORMS.PROMOTION} == {W.variant("coarsened_sector_tma_any").kernel}
    for promotion in (256, 128, 0):
        tr.rows_of_four_map(A, m, n, any_n=True, promotion=promotion)
    assert calls == [([4 * n, m // 4], [68, 18], tma.SWIZZLE_NONE, code) for code in (3, 2, 0)]


def test_the_store_forms_describe_b_and_the_wide_tiles_to_the_copy_engine(monkeypatch):
    """coarsened_tma_store's map of B (N x M): M contiguous elements by N rows, a row stride of
    4M bytes, boxes of 32 columns x 64 rows of B (one tile's 64 columns of A); the wide forms'
    map of A has boxes of 32 columns x 128 rows, and their grid covers A in tiles of 64 x 128."""
    from pmppbench.workloads import transpose as tr
    from pmppbench.hardware import tma

    calls = []
    monkeypatch.setattr(tma, "_encode", lambda: lambda words, dtype, rank, pointer, sizes, strides, box, *rest:
                        calls.append((pointer, list(sizes), list(strides), list(box))) or 0)

    class B:
        class data:
            ptr = 0x7F0000100000

    m, n = 8200, 8196
    tr.tile_map(B, n, m)
    tr.tile_map(B, m, n, tr.WIDE_ROWS)
    assert calls == [(B.data.ptr, [m, n], [4 * m], [32, COARSENED_TILE]),
                     (B.data.ptr, [n, m], [4 * n], [32, 2 * COARSENED_TILE])]
    for name in ("coarsened_tma_store_wide", "coarsened_tma_store_wide_ef"):
        (gx, gy), block = W.geometry(variant(name), shape(m, n))
        assert block == (32, 8) and gx * 64 >= n > (gx - 1) * 64 and gy * 128 >= m > (gy - 1) * 128
    (gx, gy), _ = W.geometry(variant("coarsened_tma_store"), shape(m, n))
    assert gx * 64 >= n > (gx - 1) * 64 and gy * 64 >= m > (gy - 1) * 64


class _Device:
    def __init__(self, cc, l2_bytes=0):
        self.compute_capability = cc
        self.l2_bytes = l2_bytes


@pytest.mark.parametrize("cc, m, n, form", [
    ("9.0", 4096, 4096, "coarsened_tma"), ("9.0", 8192, 9984, "coarsened_tma"),  # pitches of 256-byte multiples
    ("9.0", 10000, 10000, "coarsened_tma_store_wide"), ("9.0", 8200, 8200, "coarsened_tma_store_wide"),
    ("9.0", 8192, 8196, "coarsened_tma_store_wide"), ("9.0", 64, 4, "coarsened_tma_store_wide"),
    ("9.0", 4100, 4100, "coarsened_tma_skew"), ("9.0", 8196, 8192, "coarsened_tma_skew"),  # M = 4 mod 8
    ("9.0", 10004, 10000, "coarsened_tma_skew"), ("9.0", 4, 4, "coarsened_tma_skew"),
    ("9.0", 4097, 4097, "coarsened_sector_tma_any"), ("9.0", 33, 31, "coarsened_sector_tma_any"),  # neither on a float4
    ("9.0", 6146, 6146, "coarsened_sector_tma_any"), ("9.0", 10001, 10001, "coarsened_sector_tma_any"),
    ("9.0", 4097, 4100, "coarsened_sector_tma"), ("9.0", 10001, 10000, "coarsened_sector_tma"),  # A's on a float4
    ("9.0", 3, 4100, "coarsened_sector_vec"), ("9.0", 5, 4, "coarsened_sector_tma"),  # the map needs M >= 4
    ("9.0", 32771, 65537, "coarsened_sector_tma_any"),  # the 64-bit shape
    ("9.0", 5, 1 << 29, "coarsened_sector_vec"),  # 4N past int32
    ("9.0", 3, 4097, "coarsened_sector_vec"), ("9.0", (1 << 31) + 1, 4, "coarsened_sector_vec"),  # no TMA needed
    ("9.0", 4096, 4098, "coarsened_sector_tma_any"), ("9.0", 4100, 4097, "coarsened_sector_tma_any"),  # only A's
    ("9.0", 8192, 8193, "coarsened_sector_tma_any"), ("9.0", 4, 3, "coarsened_sector_tma_any"),  # rows off a float4
    ("9.0", 4, 1 << 29 | 1, "coarsened"),  # 4N past int32, M on a float4: no map, no sector form needed
    ("9.0", 4, 1 << 31, "coarsened"),  # past the tensor map's int32 coordinates
    ("8.0", 4097, 4097, "coarsened"),  # not measured there
    ("8.0", 4096, 4096, "coarsened"), ("8.9", 10000, 10000, "coarsened"),  # no TMA
    ("10.0", 10000, 10000, "coarsened"), (None, 4096, 4096, "coarsened"),  # not measured there; not known
])
def test_best_picks_the_tma_forms_on_hopper_only_where_they_can_run(cc, m, n, form):
    from pmppbench.workloads.transpose import pick

    assert pick(shape(m, n), cc) == form
    assert pick(shape(m, n), None if cc is None else "sm_" + cc.replace(".", "")) == form  # either spelling
    # best's grid is the picked form's (the wide form's tiles are 64 x 128)
    device = None if cc is None else _Device(cc)
    assert W.geometry(W.variant("best"), shape(m, n), device) == W.geometry(W.variant(form), shape(m, n))


H100_L2 = 50 * 1024 * 1024  # cudaDevAttrL2CacheSize on an H100 80GB HBM3


@pytest.mark.parametrize("m, n, l2, form", [
    (8193, 8193, H100_L2, "coarsened_sector_tma_any_el"),  # both pitches odd: measured +1.1-1.2 (A 5.1 L2s)
    (10001, 10001, H100_L2, "coarsened_sector_tma_any_el"), (16385, 16383, H100_L2, "coarsened_sector_tma_any_el"),
    (4097, 4097, H100_L2, "coarsened_sector_tma_any_el"),  # A 1.3 L2s: +1.7-1.8 with the settle's reset
    (8192, 8193, H100_L2, "coarsened_sector_tma_any_el"),  # only A's rows odd: +0.7-1.4 from 4096 x 4097 up
    (16384, 16385, H100_L2, "coarsened_sector_tma_any_el"),  # ... and nothing lost at 16384 x 16385
    (3621, 3621, H100_L2, "coarsened_sector_tma_any_el"),  # A just at the L2's size (4MN >= 50 MiB) ...
    (3619, 3619, H100_L2, "coarsened_sector_tma_any"),  # ... and just under: not timed where A fits in the L2
    (16385, 16384, H100_L2, "coarsened_sector_tma"),  # N on a float4: not the any-N form (_el lost 0.5-0.6 there)
    (10001, 10001, 0, "coarsened_sector_tma_any"), (10001, 10001, None, "coarsened_sector_tma_any"),  # L2 unknown
])
def test_best_reads_a_evict_last_where_n_is_off_a_float4_and_a_is_past_the_l2(m, n, l2, form):
    from pmppbench.workloads.transpose import pick

    assert pick(shape(m, n), "9.0", l2) == form
    assert pick(shape(m, n), "8.0", l2) == "coarsened"  # not measured off Hopper
    device = _Device("9.0", l2)
    assert W.geometry(W.variant("best"), shape(m, n), device) == W.geometry(W.variant(form), shape(m, n))


@pytest.mark.parametrize("m, n, form", [
    (4100, 4100, "coarsened_sector_tma_any_el"), (6148, 6148, "coarsened_sector_tma_any_el"),  # N = 4 mod 8:
    (8196, 8196, "coarsened_sector_tma_any_el"), (8192, 8196, "coarsened_sector_tma_any_el"),  # +0.1-1.8
    (8196, 8192, "coarsened_tma_skew"), (10004, 10000, "coarsened_tma_skew"),  # N = 0 mod 8: _el lost 0-1.0
    (10000, 10000, "coarsened_tma_store_wide"), (8200, 8200, "coarsened_tma_store_wide"),
    (2052, 2052, "coarsened_tma_skew"),  # A (16.8 MB) inside the L2: not timed
    (4101, 4100, "coarsened_sector_tma"),  # M off a float4: B's pieces on sectors first
    (8192, 8192, "coarsened_tma"),
])
def test_best_reads_a_evict_last_where_a_rows_are_16_bytes_off_a_sector(m, n, form):
    from pmppbench.workloads.transpose import pick

    assert pick(shape(m, n), "9.0", H100_L2) == form
    assert W.geometry(W.variant("best"), shape(m, n), _Device("9.0", H100_L2)) == \
        W.geometry(W.variant(form), shape(m, n))


def _skew_emulation(a: np.ndarray) -> np.ndarray:
    """coarsened_tma_skew's index map, lane by lane (kernels_cu/transpose.cu): the engine's box of
    A's rows y0 - 4 .. y0 + 63 (zeros outside A), each lane's two chunk reads, the 4 x 4 shuffle
    (lane k ends with element k of each lane of its group) and the bounded float4 stores."""
    m, n = a.shape
    b = np.full((n, m), np.nan, dtype=a.dtype)
    (gx, gy), _ = W.geometry(W.variant("coarsened_tma_skew"), shape(m, n))
    skew, tile_edge = 4, COARSENED_TILE
    for t in range(gx * gy):
        x0, y0 = t // gy * tile_edge, t % gy * tile_edge
        box = np.zeros((tile_edge + skew, tile_edge), dtype=a.dtype)  # rows y0 - 4 .. y0 + 63, cols x0 .. x0 + 63
        for i in range(tile_edge + skew):
            y = y0 - skew + i
            if 0 <= y < m:
                piece = a[y, x0:x0 + tile_edge]
                box[i, :len(piece)] = piece
        cols = min(n - x0, tile_edge)
        for q in range(32):  # 8 warps x 4 jobs
            chunk, half = q % 16, q // 16
            for group in range(8):  # lanes 4 * group .. + 3
                pre = []
                for k in range(4):
                    r = half * 32 + group * 4 + k
                    xe, xo = box[r + skew, 4 * chunk:4 * chunk + 4], box[r, 4 * chunk:4 * chunk + 4]
                    pre.append([xe[0], xo[1], xe[2], xo[3]])
                for k in range(4):
                    out = [pre[c][k] for c in range(4)]
                    r = half * 32 + group * 4 + k
                    brow, col = 4 * chunk + k, y0 + r - k - (skew if k & 1 else 0)
                    if brow < cols and 0 <= col < m:
                        assert np.isnan(b[x0 + brow, col:col + 4]).all(), "a float4 of B written twice"
                        b[x0 + brow, col:col + 4] = out
    return b


@pytest.mark.parametrize("m, n", [(68, 132), (4, 4), (100, 64), (132, 68), (12, 200), (260, 4)])
def test_the_skew_forms_index_map_writes_every_element_of_b_once(m, n):
    """The skewed tiles cover B exactly once, and what lands there is A^T (M = 4 mod 8, the only
    shapes the host runs it on; 4 x 4, one tile, partial tiles, the extra tile row the skew needs)."""
    a = np.arange(m * n, dtype=np.float64).reshape(m, n) + 1
    b = _skew_emulation(a)
    assert not np.isnan(b).any() and np.array_equal(b, a.T)


@pytest.mark.parametrize("form", [variant(f) for f in SECTOR_FORMS if variant(f).needs is None], ids=lambda v: v.name)
def test_the_sector_forms_on_the_cpu_emulation(tmp_path, form):
    """coarsened_sector's kernels under the CPU emulation: B written exactly once (NaN guards
    around B, none left inside), bit for bit A^T, at pitches of every residue mod 8, partial tiles
    of both edges, a single element, and with A and B at 1-7 floats past a 16-byte boundary
    (the pieces' shifts and the covering float4s follow the addresses, not the shape)."""
    rows, extra = transpose.tile_rows(form.kernel)
    binary = _emulator(tmp_path, form.kernel.replace(" ", ""), COARSENED_TILE, rows, extra)
    cases = [(m, n, 0, 0) for m, n in ((1, 1), (7, 129), (33, 31), (64, 64), (129, 65), (132, 68), (200, 3),
                                       (3, 200), (135, 71), (66, 130), (4, 4), (70, 1), (1, 70))]
    cases += [(67, 133, 1, 3), (131, 70, 3, 5), (64, 64, 2, 7), (9, 300, 5, 1)]
    for m, n, a_off, b_off in cases:
        a = np.random.default_rng(m * n + a_off).standard_normal((m, n), dtype=np.float32)
        run = subprocess.run([str(binary), str(m), str(n), str(a_off), str(b_off)], input=a.tobytes(),
                             capture_output=True, check=True)
        np.testing.assert_array_equal(np.frombuffer(run.stdout, dtype=np.float32).reshape(n, m), a.T,
                                      err_msg=f"{form.name} {m}x{n} offsets {a_off}, {b_off}")


def _sector_tma_emulation(a: np.ndarray, b_offset: int = 0) -> np.ndarray:
    """coarsened_sector_tma's index map, block by block (kernels_cu/transpose.cu): the 8 boxes of
    the map of A's rows four at a time (4N elements by floor(M / 4) rows, zeros past it), A's last
    M % 4 rows loaded by the block, and each row's piece of B from its sector (B `b_offset` floats
    past one), clipped to B; asserts that no element of B is written twice."""
    m, n = a.shape
    flat = a.ravel()
    b = np.full(n * m, np.nan, dtype=a.dtype)
    (gx, gy), _ = W.geometry(W.variant("coarsened_sector_tma"), shape(m, n))
    cols_box, groups = transpose.SECTOR_BOX
    rows4 = m // 4

    def map_at(outer, inner):  # the map's element (outer, inner), zero past it
        return flat[outer * 4 * n + inner] if 0 <= outer < rows4 and 0 <= inner < 4 * n else 0.0

    for t in range(gx * gy):
        x0, y0 = t // gy * COARSENED_TILE, t % gy * COARSENED_TILE
        top = y0 - 8
        tile = np.zeros((4 * groups, COARSENED_TILE), dtype=a.dtype)
        for box in range(8):
            p, h = box // 2, box % 2
            for i in range(groups):
                for cc in range(cols_box):
                    tile[4 * i + p, 32 * h + cc] = map_at(top // 4 + i, p * n + x0 + 32 * h + cc)
        for y in range(rows4 * 4, m):  # past the map: the block loads them
            if top <= y < top + 4 * groups:
                for c in range(min(COARSENED_TILE, n - x0)):
                    tile[y - top, c] = a[y, x0 + c]
        for xl in range(COARSENED_TILE):
            if x0 + xl >= n:
                continue
            s = (b_offset + (x0 + xl) * m) % 8
            for j in range(16):
                for k in range(4):
                    col = y0 - s + 4 * j + k
                    if 0 <= col < m:
                        at = (x0 + xl) * m + col
                        assert np.isnan(b[at]), "an element of B written twice"
                        b[at] = tile[8 - s + 4 * j + k, xl]
    return b.reshape(n, m)


@pytest.mark.parametrize("m, n", [(4, 4), (7, 128), (67, 132), (130, 68), (69, 4), (9, 64), (135, 72)])
@pytest.mark.parametrize("b_offset", [0, 3])
def test_the_sector_tma_forms_index_map_writes_every_element_of_b_once(m, n, b_offset):
    """The rows-of-four boxes bring every row of A the pieces need, the block's own loads the last
    M % 4, and the pieces cover B exactly once with A^T (partial tiles, every residue of M mod 4;
    N a multiple of 4, where the host runs it)."""
    a = np.arange(m * n, dtype=np.float64).reshape(m, n) + 1
    b = _sector_tma_emulation(a, b_offset)
    assert not np.isnan(b).any() and np.array_equal(b, a.T)


def _emulate_sector_write_rows(b, smem, word, m, n, x0, y0, b_offset, turn, banks):
    """sector_write_rows for tile (x0, y0) on the CPU: lane q of half-warp h of each warp writes float4 q of
    B's rows x0 + xl, xl = 2 (warp + 8i) + h, reading tile rows r .. r + 3 (r = 8 - s + 4q) at word(r, xl),
    its k-th read of row r + (k + turn(q, h)) % 4. Into b (flat, N x M), asserting no element written
    twice; each warp read's 32 banks appended to `banks` where both half-warps write."""
    for warp in range(8):
        for i in range(4):
            reads = {}  # k -> the 32 lanes' words
            for lane in range(32):
                xl, q, h = 2 * (warp + 8 * i) + lane // 16, lane % 16, lane // 16
                s = (b_offset + (x0 + xl) * m) % 8
                r = 8 - s + 4 * q
                for k in range(4):
                    reads.setdefault(k, []).append(word(r + (k + turn(q, h)) % 4, xl))
                if x0 + xl >= n:
                    continue
                for k in range(4):
                    col = y0 - s + 4 * q + k
                    if 0 <= col < m:
                        at = (x0 + xl) * m + col
                        assert np.isnan(b[at]), "an element of B written twice"
                        b[at] = smem[word(r + k, xl)]
            if banks is not None and x0 + 2 * (warp + 8 * i) + 1 < n:  # both half-warps write
                banks.extend([w % 32 for w in words] for words in reads.values())


def _sector_tma_any_emulation(a: np.ndarray, b_offset: int = 0, banks: list | None = None) -> np.ndarray:
    """coarsened_sector_tma_any's index map, word by word of its shared memory (kernels_cu/transpose.cu):
    box p (of 68 x 18) from the map of rows of four at inner coordinate pN + x0 - d_p (d_p = pN mod 4,
    on 16 bytes), 1248 words apart; A's last M % 4 rows by the block; each half-warp's reads of its row
    of B, the second half-warp's turned by rot. `banks`, when given, collects each warp read's banks
    (32 lanes) to hold the conflict claim against; asserts that no element of B is written twice."""
    m, n = a.shape
    flat = a.ravel()
    b = np.full(n * m, np.nan, dtype=a.dtype)
    (gx, gy), _ = W.geometry(W.variant("coarsened_sector_tma_any"), shape(m, n))
    cols, groups = transpose.SECTOR_ANY_BOX
    box_words = -(-cols * groups // 32) * 32
    rows4, n4 = m // 4, n % 4

    def map_at(outer, inner):
        return flat[outer * 4 * n + inner] if 0 <= outer < rows4 and 0 <= inner < 4 * n else 0.0

    def word(r, c):  # the kernel's at(r, c)
        p = r % 4
        return p * box_words + (r // 4) * cols + c + (p * n4) % 4

    for t in range(gx * gy):
        x0, y0 = t // gy * COARSENED_TILE, t % gy * COARSENED_TILE
        top = y0 - 8
        smem = np.full(4 * box_words, np.nan, dtype=a.dtype)
        for p in range(4):
            inner0 = p * n + x0 - (p * n4) % 4
            assert inner0 % 4 == 0  # every box on 16 bytes
            for i in range(groups):
                for cc in range(cols):
                    smem[p * box_words + i * cols + cc] = map_at(top // 4 + i, inner0 + cc)
        for y in range(rows4 * 4, m):
            if top <= y < top + 4 * groups:
                for c in range(min(COARSENED_TILE, n - x0)):
                    smem[word(y - top, c)] = a[y, x0 + c]
        rot = ((1 + m * n) * n) % 4 if n % 2 else 0
        _emulate_sector_write_rows(b, smem, word, m, n, x0, y0, b_offset, lambda q, h: rot if h else 0, banks)
    return b.reshape(n, m)


@pytest.mark.parametrize("m, n", [(4, 4), (7, 129), (67, 133), (130, 67), (69, 5), (9, 65), (135, 75), (133, 70),
                                  (65, 129), (77, 131)])
@pytest.mark.parametrize("b_offset", [0, 3])
def test_the_any_n_sector_tma_forms_index_map_writes_every_element_of_b_once(m, n, b_offset):
    """Boxes started up to 3 columns early (every N mod 4), the block's own loads of the last M % 4
    rows, the pieces covering B exactly once with A^T; and every warp read at most 2 lanes a bank
    (the turned half-warp off the other's banks), whatever M and N mod 4."""
    a = np.arange(m * n, dtype=np.float64).reshape(m, n) + 1
    banks: list = []
    b = _sector_tma_any_emulation(a, b_offset, banks)
    assert not np.isnan(b).any() and np.array_equal(b, a.T)
    worst = max(np.bincount(lanes, minlength=32).max() for lanes in banks) if banks else 0
    assert worst <= 2, f"{worst} lanes on one bank"


BULK_PITCH, BULK_ROWS = 96, 71  # coarsened_sector_bulk's shared row and tile rows (floats)


def _line_offset_turn(m: int, n: int):
    """The kernels' line_offset_turn (the bulk and lines forms) as turn(q, h): at odd N the second
    half-warp's rot = (1 + MN) N mod 4, else q // 4 rows for lane q."""
    rot = ((1 + m * n) * n) % 4
    return (lambda q, h: rot if h else 0) if n % 2 else (lambda q, h: q // 4)


def _assert_line_offset_banks(n: int, banks: list) -> None:
    """The bulk and lines forms' reads: at most 2 lanes a bank at odd N, 1 at N = 2 mod 4."""
    if n % 4 and banks:
        worst = max(np.bincount(lanes, minlength=32).max() for lanes in banks)
        assert worst <= (2 if n % 2 else 1), f"{worst} lanes on one bank"


def _sector_bulk_emulation(a: np.ndarray, b_offset: int = 0, a_base: int = 0, banks: list | None = None,
                           sectors: bool = False) -> np.ndarray:
    """coarsened_sector_bulk's index map (kernels_cu/transpose.cu), word by word of its shared memory: one
    copy a row of A (y0 - 7 .. y0 + 63), 68 floats from the 16 bytes at or before A[y][x0] (clipped at A's
    last whole 16 bytes), into a 96-float row at the float where its address falls in its 128-byte line
    (A starting a_base floats into a line; `sectors`: _sec's copies, 72 floats from the sector at or before
    A[y][x0]); A's last MN mod 4 floats by the block; each half-warp's reads, the second turned by rot.
    Asserts every copy on 16 bytes (32 for _sec but at A's start), inside its row, with its shared and
    global lines' boundaries together, and no element of B written twice; `banks` collects each warp
    read's banks."""
    m, n = a.shape
    flat = a.ravel()
    total = m * n
    whole = total & ~3
    b = np.full(n * m, np.nan, dtype=a.dtype)
    (gx, gy), _ = W.geometry(variant("coarsened_sector_bulk"), shape(m, n))

    def word(r, c):
        assert 1 <= r <= BULK_ROWS
        return (r - 1) * BULK_PITCH + (a_base + (top + r) * n + x0) % 32 + c

    for t in range(gx * gy):
        x0, y0 = t // gy * COARSENED_TILE, t % gy * COARSENED_TILE
        top = y0 - 8
        smem = np.full(BULK_ROWS * BULK_PITCH, np.nan, dtype=a.dtype)
        y_lo, y_hi = max(top + 1, 0), min(top + 1 + BULK_ROWS, m)
        for y in range(y_lo, y_hi):  # thread y - y_lo: its row's copy, or (past A's last whole 16 bytes) none
            e0 = y * n + x0
            start = max(e0 - (a_base + e0) % 8, 0) if sectors else e0 & ~3
            at = (a_base + start) % 32
            end = min(start + min(72 if sectors else 68, BULK_PITCH - at), whole)
            if end <= start:
                continue
            assert at % 4 == 0 and at + (end - start) <= BULK_PITCH  # on 16 bytes, inside its row
            assert not sectors or at % 8 == 0 or start == 0  # _sec: on a sector
            assert start <= e0 and e0 + min(64, n - x0, whole - e0) <= end  # the row's floats in the copy
            dst = (y - top - 1) * BULK_PITCH + at  # rows 96 floats apart: dst = global address mod 32 floats
            assert np.isnan(smem[dst:dst + end - start]).all()
            smem[dst:dst + end - start] = flat[start:end]
        for g in range(whole, total):
            y, x = divmod(g, n)
            if y_lo <= y < y_hi and x0 <= x < x0 + COARSENED_TILE:
                smem[word(y - top, x - x0)] = flat[g]
        _emulate_sector_write_rows(b, smem, word, m, n, x0, y0, b_offset, _line_offset_turn(m, n), banks)
    return b.reshape(n, m)


@pytest.mark.parametrize("m, n", [(1, 1), (4, 5), (7, 129), (67, 133), (130, 67), (69, 5), (9, 65), (135, 75),
                                  (133, 70), (65, 129), (77, 131), (5, 1), (1, 70), (9, 66), (131, 130), (67, 198)])
@pytest.mark.parametrize("b_offset, a_base", [(0, 0), (3, 4), (5, 28)])
@pytest.mark.parametrize("sectors", [False, True], ids=["bulk", "bulk_sec"])
def test_the_bulk_sector_forms_index_map_writes_every_element_of_b_once(m, n, b_offset, a_base, sectors):
    """Every copy on 16 bytes and inside its shared row, the block's loads of A's last MN mod 4 floats,
    the pieces covering B exactly once with A^T; every warp read at most 2 lanes a bank at odd N, 1 at
    N = 2 mod 4."""
    a = np.arange(m * n, dtype=np.float64).reshape(m, n) + 1
    banks: list = []
    b = _sector_bulk_emulation(a, b_offset, a_base, banks, sectors)
    assert not np.isnan(b).any() and np.array_equal(b, a.T)
    _assert_line_offset_banks(n, banks)


LINES_LOW, LINES_PITCH = 24, 96  # coarsened_sector_tma_lines: phases with 2 tile rows; a box row (floats)
LINES_ROWS = COARSENED_TILE + 8  # its tile rows: A's rows y0 - 8 .. y0 + 63


def _sector_tma_lines_emulation(a: np.ndarray, b_offset: int = 0, a_base: int = 0,
                                banks: list | None = None) -> np.ndarray:
    """coarsened_sector_tma_lines' index map (kernels_cu/transpose.cu), word by word of its shared memory:
    box p (phase p = y mod 32) from the maps of A's rows 32 at a time at inner coordinate pN + x0 - o_p
    (o_p: where A[32k + p][x0] falls in its 128-byte line, A starting a_base floats into one), 96 columns
    x 2 rows (p < 24: rows y0 + p, y0 + 32 + p) or x 3 (rows y0 - 32 + p ..), the boxes packed in phase
    order; A's last M % 32 rows by the block; each half-warp's reads turned as coarsened_sector_bulk's.
    Asserts every box row on a line in A and in shared memory, every row of the tile brought by exactly
    one box row, and no element of B written twice; `banks` collects each warp read's banks."""
    m, n = a.shape
    flat = a.ravel()
    b = np.full(n * m, np.nan, dtype=a.dtype)
    (gx, gy), _ = W.geometry(variant("coarsened_sector_tma_lines"), shape(m, n))
    groups = m // 32

    def map_at(outer, inner):
        return flat[outer * 32 * n + inner] if 0 <= outer < groups and 0 <= inner < 32 * n else 0.0

    def box_at(p):
        return 2 * LINES_PITCH * p if p < LINES_LOW else 2 * LINES_PITCH * LINES_LOW + 3 * LINES_PITCH * (p - LINES_LOW)

    def offset(p):
        return (a_base + p * n) % 32

    def word(r, c):  # the kernel's word(r, c)
        assert 0 <= r < LINES_ROWS
        p, g = (r + LINES_LOW) % 32, (r + LINES_LOW) // 32
        return box_at(p) + (g - (p < LINES_LOW)) * LINES_PITCH + offset(p) + c

    for t in range(gx * gy):
        x0, y0 = t // gy * COARSENED_TILE, t % gy * COARSENED_TILE
        top = y0 - 8
        smem = np.full(box_at(32), np.nan, dtype=a.dtype)  # past the last box
        brought = {}
        for p in range(32):
            height = 2 if p < LINES_LOW else 3
            outer0 = y0 // 32 - (0 if p < LINES_LOW else 1)
            inner0 = p * n + x0 - offset(p)
            assert (a_base + inner0) % 32 == 0 and box_at(p) % 32 == 0  # on a line in A and in shared memory
            for i in range(height):
                y = 32 * (outer0 + i) + p
                if 0 <= y - top < LINES_ROWS:
                    brought[y] = brought.get(y, 0) + 1
                for cc in range(LINES_PITCH):
                    smem[box_at(p) + i * LINES_PITCH + cc] = map_at(outer0 + i, inner0 + cc)
        assert sorted(brought) == list(range(top, top + LINES_ROWS)) and set(brought.values()) == {1}
        for y in range(max(groups * 32, top), min(m, top + LINES_ROWS)):
            for c in range(min(COARSENED_TILE, n - x0)):
                smem[word(y - top, c)] = a[y, x0 + c]
        _emulate_sector_write_rows(b, smem, word, m, n, x0, y0, b_offset, _line_offset_turn(m, n), banks)
    return b.reshape(n, m)


@pytest.mark.parametrize("m, n", [(32, 1), (32, 5), (39, 129), (67, 133), (130, 67), (69, 5), (95, 65), (135, 75),
                                  (133, 70), (65, 129), (77, 131), (64, 70), (96, 66), (131, 130), (67, 198), (200, 3)])
@pytest.mark.parametrize("b_offset, a_base", [(0, 0), (3, 4), (5, 28)])
def test_the_lines_sector_tma_forms_index_map_writes_every_element_of_b_once(m, n, b_offset, a_base):
    """Every box row on a line on both sides, each of the tile's 72 rows from one box, the block's loads
    of A's last M % 32 rows, the pieces covering B exactly once with A^T; every warp read at most 2 lanes
    a bank at odd N, 1 at N = 2 mod 4 (the bulk form's banks and turns)."""
    a = np.arange(m * n, dtype=np.float64).reshape(m, n) + 1
    banks: list = []
    b = _sector_tma_lines_emulation(a, b_offset, a_base, banks)
    assert not np.isnan(b).any() and np.array_equal(b, a.T)
    _assert_line_offset_banks(n, banks)


@pytest.mark.parametrize("form, fits, too_small, too_wide, words", [
    ("coarsened_sector_tma_any", (4097, 4097), (3, 4097), (5, 1 << 29), "M >= 4 and 4N below 2"),
    ("coarsened_sector_tma_any_el", (4097, 4097), (3, 4097), (5, 1 << 29), "M >= 4 and 4N below 2"),
    ("coarsened_sector_tma_lines", (32, 4097), (31, 4097), (64, 1 << 26), "M >= 32 and 32N below 2")])
def test_the_any_n_sector_tma_forms_need_only_their_maps_limits(form, fits, too_small, too_wide, words):
    """A map of A's rows g at a time (4 for _any, 32 for _lines) needs g rows and int32 inner coordinates
    (gN < 2^31); both said before any GPU work."""
    from pmppbench.workloads.base import Unavailable

    unavailable = {"coarsened_sector_tma_any": transpose.sector_tma_any_unavailable,
                   "coarsened_sector_tma_any_el": transpose.sector_tma_any_unavailable,
                   "coarsened_sector_tma_lines": FORMS.sector_tma_lines_unavailable}[form]
    assert unavailable(*fits) is None
    ctx = Context({}, None, a=None, b=None)
    for m, n in (too_small, too_wide):
        with pytest.raises(Unavailable, match=words):
            owner(form).job(variant(form), shape(m, n), ctx)


def test_the_sector_tma_form_says_why_it_cannot_run_before_any_gpu_work():
    """coarsened_sector_tma needs N a multiple of 4 (each box's first element on 16 bytes), a row
    of four (M >= 4) and int32 inner coordinates (4N < 2^31)."""
    from pmppbench.workloads.base import Unavailable

    ctx = Context({}, None, a=None, b=None)
    for m, n, words in ((4097, 4097, "N a multiple of 4"), (8, 4098, "N a multiple of 4"),
                        (3, 4096, "M >= 4 and 4N below 2"), (5, 1 << 29, "M >= 4 and 4N below 2")):
        with pytest.raises(Unavailable, match=words):
            W.job(W.variant("coarsened_sector_tma"), shape(m, n), ctx)


def test_the_sector_tma_forms_step_from_a_lanes_first_row_of_b_to_its_next_three():
    """sector_write_rows reads column xl0 + 16i of a tile row from its word at column xl0: 16i words
    on in coarsened_sector_tma_any's rows of words, and in coarsened_sector_tma's swizzled boxes the
    chunk's bit 2 flipped (word ^ 16) for odd i and i / 2 boxes on (kernels_cu/transpose.cu). Held
    here against the swizzled layout's own index (sector_tma_at: box (r % 4, c / 32), box row r / 4,
    chunk (c % 32) / 4 at chunk ^ (box row % 8)) for every tile row and every lane's xl0."""
    box = -(-32 * (COARSENED_TILE + 8) // 4 // 256) * 256  # SECTOR_BOX: 768 floats, 1024-byte aligned

    def at(r, c):
        g = r // 4
        return ((r % 4) * 2 + c // 32) * box + g * 32 + (((c % 32) // 4) ^ (g % 8)) * 4 + c % 4

    for r in range(COARSENED_TILE + 8):
        for xl0 in range(16):
            w = at(r, xl0)
            assert [at(r, xl0 + 16 * i) for i in range(4)] == [(w ^ (16 * (i & 1))) + (i // 2) * box for i in range(4)]
