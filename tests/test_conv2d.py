"""2D convolution workload. On the CPU: the float64 reference against the definition, the
sampled reference, the tolerance against FP32 models of the rungs' sums, the traffic model,
validation, NVRTC compile per mask, the CLI's bad input, and the kernels themselves under a
small emulation of CUDA threads on the host, shipped and mutated (each mutation must FAIL).
On the GPU: every variant on the check and edge shapes, best bit for bit equal to the book's
constant_mask, the mutations (a missing barrier too), and a learner's copy of a rung."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from gpu_helpers import mutant_check, sanitized
from mutants import Edit
from pmppbench.errors import UsageError
from pmppbench.hardware.compile import compile_unit, kernels_dir
from pmppbench.measure.check import compare
from pmppbench.workloads import conv2d
from pmppbench.workloads.conv2d import (
    BEST_ROWS, BEST_TX, MASKS, MAX_MASK, WORKLOAD, conv2d_reference, error_bound, filter_mask, halo, out_tile_dim,
    sampled_reference, terms,
)
from pmppbench.workloads.helpers import SAMPLE, UNIT_ROUNDOFF, take

W = WORKLOAD
KERNELS = ["naive", "constant_mask", "tiled", "cached_halo", "best"]
U = UNIT_ROUNDOFF


def shape(h, w, mask):
    return {"height": h, "width": w, "mask": mask}


def image(h, w, seed=0):
    return np.random.default_rng(seed).random((h, w), dtype=np.float32) * np.float32(2) - np.float32(1)


def definition(n, f):
    """P[i][j] = sum F[fr][fc] N[i-r+fr][j-r+fc], term by term, in float64 (§7.1)."""
    h, w = n.shape
    r = (f.shape[0] - 1) // 2
    out = np.zeros((h, w))
    for i in range(h):
        for j in range(w):
            for fr in range(f.shape[0]):
                for fc in range(f.shape[1]):
                    y, x = i - r + fr, j - r + fc
                    if 0 <= y < h and 0 <= x < w:
                        out[i, j] += float(f[fr, fc]) * float(n[y, x])
    return out


def book_order_fp32(n, f, fused=True):
    """The rungs' FP32 sum: filter rows in order, columns within a row, ghost cells skipped;
    each term fused into its add (an FFMA, computed exactly and rounded once) or rounded as a
    product first (the CPU emulation without FMA)."""
    h, w = n.shape
    m = f.shape[0]
    r = (m - 1) // 2
    src = np.pad(n.astype(np.float64), r)
    inside = np.pad(np.ones((h, w), bool), r)
    acc = np.zeros((h, w), np.float32)
    for fr in range(m):
        for fc in range(m):
            x = src[fr:fr + h, fc:fc + w]
            ok = inside[fr:fr + h, fc:fc + w]
            if fused:
                new = (acc.astype(np.float64) + float(f[fr, fc]) * x).astype(np.float32)  # exact product, one rounding
            else:
                new = acc + (np.float32(f[fr, fc]) * x.astype(np.float32))
            acc = np.where(ok, new, acc)
    return acc


# ---- declaration ----------------------------------------------------------------------

def test_variants_and_table_attributes():
    assert W.variant_names() == [*KERNELS, "cupyx", "memcpy"]
    assert [v.kernel for v in W.variants] == ["naive<int>", "constant_mask<int>", "tiled<int>", "cached_halo<int>",
                                              "best<4, 32, true>", None, None]
    assert W.kernel_names()[-1] == "best<4, 32, false>"
    assert {"naive<long long>", "tiled<long long>"} <= set(W.kernel_names())
    assert (W.baseline, W.roof, W.rate, W.dims) == ("naive", "memcpy", "GB/s", ("height", "width"))
    assert W.axes[0].default == (3, 5, 7, 9)


def test_shapes_labels_and_defines():
    assert W.default_shape() == shape(8192, 8192, 5)
    checks = W.check_shapes()
    assert shape(1, 1, 3) in checks and shape(33, 31, 9) in checks and shape(5, 3, MAX_MASK) in checks
    assert checks[-1] == shape(46341, 46341, 5) and 46341 ** 2 > 2 ** 31
    assert W.label(shape(8192, 8192, 9)) == "8192x8192 mask=9"
    assert W.defines(shape(1, 1, 9)) == {"FILTER_RADIUS": 4}
    assert W.compile_sets() == [{"FILTER_RADIUS": r} for r in (1, 2, 3, 4)]
    assert W.device_bytes(shape(100, 30, 3)) == 24000


def test_geometry():
    assert W.geometry(W.variant("naive"), shape(100, 65, 3)) == ((3, 4), (32, 32))
    assert W.geometry(W.variant("tiled"), shape(100, 65, 9)) == ((3, 5), (32, 32))  # 24 outputs per tile edge
    assert W.geometry(W.variant("best"), shape(8192, 8192, 9)) == ((16, 256), (128,))
    assert [out_tile_dim(m) for m in (1, 3, 9, 15)] == [32, 30, 24, 18]
    assert [halo(m) for m in (1, 3, 9, 11, 15)] == [0, 4, 4, 8, 8]


# ---- reference ------------------------------------------------------------------------

def test_reference_on_a_worked_example():
    # a 3x3 image of 1..9 and a filter of ones but a 2 at its centre: P[1][1] = 45 + 5
    n = np.arange(1, 10, dtype=np.float32).reshape(3, 3)
    f = np.ones((3, 3), np.float32)
    f[1, 1] = 2
    p = conv2d_reference(n, f)
    assert p[1, 1] == 50 and p[0, 0] == 2 * 1 + 2 + 4 + 5  # ghost cells add nothing
    f[0, 2] = 7  # not symmetric: the top-right cell meets N[i-1][j+1] (correlation, not flipped)
    assert conv2d_reference(n, f)[1, 1] == 50 + 6 * 3


@pytest.mark.parametrize("h,w,mask", [(1, 1, 3), (1, 1, 11), (5, 3, 9), (7, 11, 5), (12, 9, 1), (16, 4, 7)])
def test_reference_equals_the_definition(h, w, mask):
    n, f = image(h, w, h * w), filter_mask(mask)
    np.testing.assert_allclose(conv2d_reference(n, f), definition(n, f), rtol=0, atol=1e-15)


@pytest.mark.parametrize("mask", [1, 3, 9])
def test_sampled_reference_is_the_reference_at_the_samples(mask):
    n, f = image(40, 57, mask), filter_mask(mask)
    rows, cols = np.array([0, 1, 3, 20, 38, 39]), np.array([0, 2, 4, 30, 55, 56])
    full = conv2d_reference(n, f)
    np.testing.assert_allclose(sampled_reference(n, f, rows, cols), take(full, (rows, cols), np), rtol=0, atol=1e-15)


def test_large_images_are_checked_on_sampled_rows_and_columns(monkeypatch):
    monkeypatch.setattr(conv2d, "SAMPLE_ABOVE", 1000)
    monkeypatch.setattr(conv2d, "SAMPLES", 8)
    s = shape(50, 70, 5)
    inputs = W.make_inputs(s, np.random.default_rng(1))
    rows, cols = inputs[SAMPLE]
    assert rows[0] == 0 and rows[-1] == 49 and cols[-1] == 69
    ref = W.reference(s, inputs, W.variant("best"))
    np.testing.assert_allclose(ref, take(conv2d_reference(inputs["n"], filter_mask(5)), (rows, cols), np), atol=1e-15)
    assert np.array_equal(W.reference(s, inputs, W.variant("memcpy")), take(inputs["n"], (rows, cols), np))


def test_inputs_and_the_filter():
    n = W.make_inputs(shape(300, 200, 3), np.random.default_rng(0))["n"]
    assert n.dtype == np.float32 and n.shape == (300, 200) and -1 <= n.min() < -0.99 and 0.99 < n.max() < 1
    for mask in (1, 3, 9, 11):
        f = filter_mask(mask)
        assert f.dtype == np.float32 and f.shape == (mask, mask)
        assert np.abs(f).sum() < 1 and np.array_equal(f, filter_mask(mask))  # the problem's: fixed per width
    assert not np.array_equal(filter_mask(3), filter_mask(3).T)  # a transposed index shows


# ---- tolerance ------------------------------------------------------------------------

@pytest.mark.parametrize("mask", [1, *MASKS, MAX_MASK])
@pytest.mark.parametrize("fused", [True, False])
def test_the_rungs_sums_stay_within_the_bound(mask, fused):
    f = filter_mask(mask)
    tol = W.tolerance_for(shape(1, 1, mask))
    rng = np.random.default_rng(mask)
    top = np.float32(1 - 2 ** -24)  # the largest |N| the inputs take
    cases = {"uniform": image(40, 40, mask), "largest": np.full((40, 40), top), "smallest": np.full((40, 40), -top),
             "random signs": np.where(rng.random((40, 40)) < 0.5, -top, top)}
    for what, n in cases.items():
        result = compare(book_order_fp32(n, f, fused), conv2d_reference(n, f), tol)
        assert result.passed, f"{what}: {result.detail}"


@pytest.mark.parametrize("mask", [1, *MASKS, MAX_MASK])
def test_the_bound_still_catches_a_missing_filter_cell(mask):
    n, f = image(64, 64, 3), filter_mask(mask)
    ref = conv2d_reference(n, f)
    dropped = f.copy()
    dropped[0, mask - 1] = 0  # one cell of the filter never meets its input
    assert not compare(conv2d_reference(n, dropped).astype(np.float32), ref, W.tolerance_for(shape(1, 1, mask))).passed


def test_error_bound_values():
    assert error_bound(3) == pytest.approx(10 * U)
    assert error_bound(9) == pytest.approx(82 * U / (1 - 82 * U))


# ---- model ----------------------------------------------------------------------------

def test_traffic_model():
    s = shape(8192, 8192, 9)
    t = {v.name: W.traffic(s, v) for v in W.variants}
    assert all(x.bytes == 8 * 8192 * 8192 for x in t.values())
    assert t["memcpy"].flops == 0
    assert t["best"].flops == 2 * terms(8192, 4) ** 2 < 2 * 81 * 8192 ** 2
    assert terms(8192, 4) == 9 * 8192 - 2 * (4 + 3 + 2 + 1)  # the edges lose 4 + 3 + 2 + 1 cells each side
    assert terms(1, 4) == 1 and terms(3, 1) == 7
    assert t["naive"].extra["reads_per_output"] == 162 and t["constant_mask"].extra["reads_per_output"] == 81
    assert t["tiled"].extra["reads_per_output"] == 1024 / 576
    assert t["cached_halo"].extra["reads_per_output"] == 1 + ((32 * 9) ** 2 - (32 * 9 - 20) ** 2) / 1024
    assert t["best"].extra["reads_per_output"] == (4 + 8) / 4 * (BEST_ROWS + 8) / BEST_ROWS


# ---- validation -----------------------------------------------------------------------

@pytest.mark.parametrize("bad,words", [
    (shape(0, 5, 3), "HEIGHT must be a positive integer"),
    (shape(5, -1, 3), "WIDTH must be a positive integer"),
    (shape(5, 5, 4), "mask must be an odd width 1..11 (2r+1), got 4"),
    (shape(5, 5, 13), "got 13"),
    (shape(5, 5, 0), "got 0"),
    (shape(5, 2 ** 31, 3), "must be below 2^31"),
    (shape(65535 * 30 + 1, 5, 3), "M = 1966051 rows needs 65536 blocks of 30 rows"),
])
def test_validate_rejects(bad, words):
    with pytest.raises(UsageError, match=re.escape(words)):
        W.validate(bad)


@pytest.mark.parametrize("args,words", [
    (["conv2d", "--mask", "4"], "mask must be an odd width"),
    (["conv2d", "0"], "HEIGHT must be a positive integer"),
    (["conv2d", "64", "64", "0"], "REPS must be a positive integer"),
    (["conv2d", "--variants", "shared"], "unknown variant 'shared'"),
])
def test_cli_bad_input_is_one_line_exit_2(run_cli, args, words):
    code, _out, err = run_cli(*args)
    assert code == 2, err
    assert words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


# ---- compile (no GPU needed) ----------------------------------------------------------

@pytest.mark.parametrize("mask", [1, *MASKS])
def test_every_kernel_compiles_per_mask_without_spills(mask):
    unit = compile_unit("conv2d", W.kernel_names(), "sm_90", W.defines(shape(1, 1, mask)))
    assert set(unit.ptxas) == set(W.kernel_names())
    for name, report in unit.ptxas.items():
        assert (report.spill_stores, report.spill_loads, report.stack_bytes) == (0, 0, 0), name
    assert unit.ptxas["tiled<int>"].static_smem == unit.ptxas["cached_halo<int>"].static_smem == 4096
    assert unit.ptxas["best<4, 32, true>"].static_smem == 0


def test_a_mask_past_the_limit_fails_in_the_kernel_source_too():
    from pmppbench.errors import CompileError  # noqa: PLC0415

    with pytest.raises(CompileError, match="FILTER_RADIUS must be 0..5"):
        compile_unit("conv2d", ["naive<int>"], "sm_90", {"FILTER_RADIUS": 6}, use_cache=False)


# ---- the kernels on the CPU -----------------------------------------------------------
# One std::thread per CUDA thread, blocks one after another, __syncthreads() a std::barrier,
# __shared__ and __constant__ arrays static. Indexing, ghost cells and edges are checked in CI.

EMULATOR = r"""
#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>
using std::min;
struct float4 { float x, y, z, w; };
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
struct Index { unsigned x, y, z; };
thread_local Index threadIdx, blockIdx;
static std::barrier<>* block_barrier;
inline void __syncthreads() { block_barrier->arrive_and_wait(); }
template <class T> T __ldg(const T* p) { return *p; }
template <class T> void __stcs(T* p, T v) { *p = v; }
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __constant__
#include KERNELS

template <class K> void launch(K body, unsigned gx, unsigned gy, unsigned bx, unsigned by) {
    int threads = bx * by;
    std::barrier<> bar(threads);
    block_barrier = &bar;
    std::vector<std::thread> team;
    for (int t = 0; t < threads; ++t)
        team.emplace_back([&, t] {
            threadIdx = {unsigned(t) % bx, unsigned(t) / bx, 0};
            for (unsigned y = 0; y < gy; ++y)
                for (unsigned x = 0; x < gx; ++x) {
                    blockIdx = {x, y, 0};
                    body();
                    bar.arrive_and_wait();  // the block is done before the next reuses __shared__
                }
        });
    for (auto& member : team) member.join();
}

int main(int argc, char** argv) {  // emulator VARIANT H W < N (H*W floats) > P (H*W floats)
    int variant = std::atoi(argv[1]);
    int h = std::atoi(argv[2]), w = std::atoi(argv[3]);
    long long n = (long long)h * w;
    const long long guard = 4096;  // NaN guards: a read outside N gives NaN, a write outside P exits 3
    std::vector<float> ns(n + 2 * guard, NAN), ps(n + 2 * guard, NAN);
    float *N = ns.data() + guard, *P = ps.data() + guard;
    if (std::fread(N, sizeof(float), n, stdin) != size_t(n)) return 1;
    for (int a = 0; a < MASK_WIDTH; ++a)
        for (int b = 0; b < MASK_WIDTH; ++b) F_c[a][b] = std::strtof(argv[4 + a * MASK_WIDTH + b], nullptr);
    const float* F = &F_c[0][0];
    unsigned gx = (w + 31) / 32, gy = (h + 31) / 32;
    unsigned tx = (w + OUT_TILE_DIM - 1) / OUT_TILE_DIM, ty = (h + OUT_TILE_DIM - 1) / OUT_TILE_DIM;
    unsigned bx = (w + 128 * EMU_TX - 1) / (128 * EMU_TX), by = (h + EMU_ROWS - 1) / EMU_ROWS;
    if (variant == 0) launch([&] { naive<int>(N, F, P, w, h); }, gx, gy, 32, 32);
    if (variant == 1) launch([&] { constant_mask<int>(N, P, w, h); }, gx, gy, 32, 32);
    if (variant == 2) launch([&] { tiled<int>(N, P, w, h); }, tx, ty, 32, 32);
    if (variant == 3) launch([&] { cached_halo<int>(N, P, w, h); }, gx, gy, 32, 32);
    if (variant == 4) {
        if (w % 4 == 0) launch([&] { best<EMU_TX, EMU_ROWS, true>(N, P, w, h); }, bx, by, 128, 1);
        else launch([&] { best<EMU_TX, EMU_ROWS, false>(N, P, w, h); }, bx, by, 128, 1);
    }
    if (variant == 5) launch([&] { naive<long long>(N, F, P, w, h); }, gx, gy, 32, 32);
    if (variant == 6) launch([&] { tiled<long long>(N, P, w, h); }, tx, ty, 32, 32);
    for (long long i = 0; i < guard; ++i)
        if (!std::isnan(P[-1 - i]) || !std::isnan(P[n + i])) return 3;
    std::fwrite(P, sizeof(float), n, stdout);
}
"""
EMULATED = [*KERNELS, "naive", "tiled"]  # the emulator's variant numbers: then two 64-bit paths


@pytest.fixture(scope="module")
def emulator(tmp_path_factory):
    """(mask, source text or None) -> path of the emulator built with that FILTER_RADIUS."""
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ to build the CPU emulation of the kernels")
    folder = tmp_path_factory.mktemp("conv2d-emulator")
    source = folder / "emulator.cpp"
    source.write_text(EMULATOR)
    built = {}

    def build(mask, text=None):
        key = (mask, text)
        if key not in built:
            kernels = kernels_dir() / "conv2d.cu"
            if text is not None:
                kernels = folder / f"mutant{len(built)}.cu"
                kernels.write_text(text)
            binary = folder / f"emulator{len(built)}"
            subprocess.run([cxx, "-std=c++20", "-O1", "-pthread", "-Wall", "-Wno-unknown-pragmas",
                            "-ffp-contract=off", f"-DFILTER_RADIUS={(mask - 1) // 2}", f"-DEMU_TX={BEST_TX}",
                            f"-DEMU_ROWS={BEST_ROWS}", f'-DKERNELS="{kernels}"', str(source), "-o", str(binary)],
                           check=True, capture_output=True, text=True)
            built[key] = binary
        return built[key]

    return build


def emulate(binary, variant: int, n: np.ndarray, f: np.ndarray) -> np.ndarray:
    h, w = n.shape
    args = [str(binary), str(variant), str(h), str(w), *(repr(float(v)) for v in f.ravel())]
    run = subprocess.run(args, input=n.tobytes(), capture_output=True, check=True)
    return np.frombuffer(run.stdout, dtype=np.float32).reshape(h, w)


# Around every tile edge: 32 (naive, cached_halo), 32 - 2r (tiled), 512 columns and 32 rows
# (best), odd widths (best's scalar path), a mask wider than the image.
EMULATED_SIZES = ((1, 1), (2, 3), (4, 4), (31, 33), (33, 32), (65, 516), (70, 513), (129, 8))


@pytest.mark.parametrize("mask", [1, 3, 9])
def test_kernels_on_the_cpu_emulation(emulator, mask):
    binary = emulator(mask)
    f = filter_mask(mask)
    for h, w in EMULATED_SIZES:
        n = image(h, w, h + w)
        ref = conv2d_reference(n, f)
        for index, variant in enumerate(EMULATED):
            p = emulate(binary, index, n, f)
            result = compare(p, ref, W.tolerance_for(shape(h, w, mask)))
            assert result.passed, f"{variant} {h}x{w} mask {mask}: {result.detail}"
            # without contraction (-ffp-contract=off) the book's rungs round each product, then
            # add; best's fmaf is fused on the host too. All add in the book's order.
            model = book_order_fp32(n, f, fused=variant == "best")
            np.testing.assert_array_equal(p, model, err_msg=f"{variant} {h}x{w}")


def test_emulated_kernels_at_the_largest_mask(emulator):
    binary = emulator(MAX_MASK)
    f = filter_mask(MAX_MASK)
    for h, w in ((3, 5), (40, 36), (19, 70)):
        n = image(h, w, 7)
        for index, variant in enumerate(EMULATED[:5]):
            np.testing.assert_array_equal(emulate(binary, index, n, f),
                                          book_order_fp32(n, f, fused=variant == "best"), err_msg=f"{variant} {h}x{w}")


# Mutations of a copy of conv2d.cu: name -> (variant, old text, new text). Each must FAIL.
MUTATIONS = {
    # tiled takes the image's first column for a ghost cell (0): the left halo at the edge missed
    "tiled_left_halo_missed": ("tiled", "if (row >= 0 && row < height && col >= 0 && col < width) {\n        N_s",
                               "if (row >= 0 && row < height && col >= 1 && col < width) {\n        N_s"),
    # cached_halo skips halo cells on the right: the terms past the tile's last column add nothing
    "cached_halo_right_halo_missed": ("cached_halo",
                                      "if (inRow >= 0 && inRow < height && inCol >= 0 && inCol < width) {\n"
                                      "                        Pvalue",
                                      "if (inRow >= 0 && inRow < height && inCol >= 0 && inCol < col) {\n"
                                      "                        Pvalue"),
    # constant_mask reads the filter transposed
    "constant_mask_transposed_index": ("constant_mask", "F_c[fRow][fCol] * N[inRow * width + inCol];\n            }",
                                       "F_c[fCol][fRow] * N[inRow * width + inCol];\n            }"),
    # best pairs each accumulator row with the next filter row (its rotation off by one)
    "best_filter_row_off_by_one": ("best", "F_c[MASK_WIDTH - 1 - k][fc]", "F_c[(MASK_WIDTH - k) % MASK_WIDTH][fc]"),
    # best's halo on the left read one float4 late
    "best_left_halo_missed": ("best", "v[c + fc + HALO - R]", "v[c + fc + HALO - R + (fc < R)]"),
}


def mutated(old: str, new: str) -> str:
    text = (kernels_dir() / "conv2d.cu").read_text()
    assert text.count(old) == 1, old
    return text.replace(old, new)


@pytest.mark.parametrize("name", MUTATIONS)
def test_mutants_fail_on_the_cpu_emulation(emulator, name):
    variant, old, new = MUTATIONS[name]
    binary = emulator(3, mutated(old, new))
    f = filter_mask(3)
    n = image(70, 516, 1)
    p = emulate(binary, EMULATED.index(variant), n, f)
    assert not compare(p, conv2d_reference(n, f), W.tolerance_for(shape(70, 516, 3))).passed


# a missing barrier between the tile's load and its use (on the GPU only: the emulation's
# threads may happen to load in time)
BARRIER_MUTATION = ("tiled", "    __syncthreads();  // the whole tile", "    // no barrier: the whole tile")
MUTANT_SHAPE = ("64", "64")


# ---- GPU ------------------------------------------------------------------------------

@pytest.mark.gpu
def test_every_variant_passes_on_the_check_shapes():
    from gpu_helpers import assert_all_pass, check_rows  # noqa: PLC0415

    shapes = [s for s in W.check_shapes() if s["height"] * s["width"] < 2 ** 31]
    rows = check_rows("conv2d", shapes)
    assert_all_pass(rows)
    assert len(rows) == len(W.variants) * len(shapes)


@pytest.mark.gpu
def test_past_2_31_outputs():
    from gpu_helpers import assert_all_pass, check_rows  # noqa: PLC0415

    rows = check_rows("conv2d", [W.check_shapes()[-1]], variants=["naive", "tiled", "cached_halo", "best", "memcpy"])
    assert_all_pass(rows)


@pytest.mark.gpu
@pytest.mark.parametrize("mask", [1, 3, 9, MAX_MASK])
def test_edge_shapes(mask):
    from gpu_helpers import assert_all_pass, check_rows  # noqa: PLC0415

    t = out_tile_dim(mask)
    sizes = [(1, 1), (1, 5), (mask - 1 or 1, mask + 1), (t, t), (t + 1, t + 1), (32, 32), (33, 33), (64, 512),
             (65, 513), (130, 1028), (3, 2049)]
    assert_all_pass(check_rows("conv2d", [shape(h, w, mask) for h, w in sizes]))


@pytest.mark.gpu
@pytest.mark.parametrize("mask", [3, 9])
@pytest.mark.parametrize("h,w", [(300, 1024), (257, 1001)])
def test_rungs_agree_bit_for_bit_with_the_books_order(h, w, mask):
    """Every kernel rung fuses each term into its add in the book's order: the same bits as
    the FP32 model of that order, and memcpy returns N."""
    from pmppbench.hardware.compile import load_kernels  # noqa: PLC0415
    from pmppbench.hardware.gpu import cupy  # noqa: PLC0415
    from pmppbench.measure.check import to_host  # noqa: PLC0415

    s = shape(h, w, mask)
    inputs = W.make_inputs(s, np.random.default_rng(5))
    ctx = W.setup(s, inputs, load_kernels("conv2d", W.kernel_names(), W.defines(s)))
    model = book_order_fp32(inputs["n"], filter_mask(mask), fused=True)
    for variant in KERNELS:
        job = W.job(W.variant(variant), s, ctx)
        job.poison()
        job.run()
        cupy().cuda.Device().synchronize()
        np.testing.assert_array_equal(to_host(job.output()), model, err_msg=variant)


@pytest.mark.gpu
@pytest.mark.parametrize("name", [*MUTATIONS, "tiled_missing_barrier"])
def test_mutants_fail_on_the_gpu(name, tmp_path):
    if name == "tiled_missing_barrier":  # warps read their neighbours' rows before those are loaded
        variant, old, new = BARRIER_MUTATION
    else:
        variant, old, new = MUTATIONS[name]
    rows = mutant_check("conv2d", [Edit("conv2d.cu", old, new)], shape(1024, 1024, 3), variant, tmp_path)
    assert [r.check for r in rows] == ["FAIL"], rows[0].check_detail or rows[0].error


@pytest.mark.gpu
@pytest.mark.parametrize("rung", ["naive", "tiled", "best"])
def test_a_learners_copy_of_a_rung_passes_like_it(run_cli, tmp_path, rung):
    src = tmp_path / "mine.cu"
    src.write_text((kernels_dir() / "conv2d.cu").read_text())
    kernel = W.variant(rung).kernel
    code, out, err = run_cli("conv2d", "512", "512", "3", "--mask", "5", "--kernel", f"{src}:{kernel}", "--like", rung)
    assert code == 0, err
    assert out.count("PASS") >= 2


@pytest.mark.gpu
def test_timed_run(run_cli, tmp_path):
    import json  # noqa: PLC0415

    out = tmp_path / "conv2d.json"
    code, stdout, _ = run_cli("conv2d", "1024", "1024", "5", "--mask", "3,9", "--out", str(out))
    assert code == 0 and "PASS" in stdout
    rows = json.loads(out.read_text())["results"]
    assert {(r["variant"], r["shape"]) for r in rows} == {
        (v, f"1024x1024 mask={m}") for v in W.variant_names() for m in (3, 9)}
    assert all(r["check"] == "PASS" and r["median_ms"] > 0 for r in rows)


@pytest.mark.gpu
@pytest.mark.parametrize("tool,clean", [("memcheck", "ERROR SUMMARY: 0 errors"),
                                        ("racecheck", "RACECHECK SUMMARY: 0 hazards displayed")])
def test_the_sanitizers_find_nothing_on_the_sanitize_shapes(tool, clean):
    out = sanitized(tool, "all", "--config", "sanitize", "--only", "conv2d", "--check-only")
    assert clean in out and "FAIL" not in out, out[-3000:]


@pytest.mark.gpu
def test_racecheck_reports_the_missing_barrier(tmp_path):
    variant, old, new = BARRIER_MUTATION
    src = tmp_path / "mutant.cu"
    src.write_text(mutated(old, new))
    out = sanitized("racecheck", "conv2d", *MUTANT_SHAPE, "1", "--mask", "3", "--check-only", "--kernel",
                    f"{src}:{W.variant(variant).kernel}", "--like", variant, "--variants", variant)
    assert "RACECHECK SUMMARY" in out and "RACECHECK SUMMARY: 0 hazards" not in out, out[-3000:]
