"""Stencil workload. On the CPU: the reference on the seed's example, the tolerance against
FP32 models of each kernel's summation order, the traffic model, validation, NVRTC compile
per radius, the CLI's bad input, and the kernels themselves under a small emulation of CUDA
threads on the host. On the GPU: every variant on the check and edge shapes, and each
kernel bit for bit equal to the FP32 model of its summation order."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from gpu_helpers import assert_all_pass, check_rows

from pmppbench.measure.check import compare
from pmppbench.hardware.compile import compile_unit, kernels_dir
from pmppbench.errors import CompileError, UsageError
from pmppbench.workloads import stencil
from pmppbench.measure.check import to_host
from pmppbench.workloads.helpers import INT_MAX, SAMPLE
from pmppbench.workloads.stencil import (
    BLOCK, CHECK_NS, COARSE_C, COARSE_OUT, COARSE_THREADS, MAX_RADIUS, RADII, REGISTER_MAX_R, REGISTER_OUT,
    REGISTER_THREADS, STATIC_SMEM, U, WORKLOAD, chunks, coarsened_smem_bytes, coarsened_threads, error_bound, halo,
    sampled_reference, shared_smem_bytes, smem_max_radius, stencil_index, stencil_reference,
)

W = WORKLOAD
VARIANTS = ["naive", "shared", "coarsened"]  # the kernels; memcpy is the roof row


def shape(n, radius):
    return {"n": n, "radius": radius}


# ---- FP32 models of the kernels' summation orders --------------------------------------
# numpy's float32 operations round like the GPU's FADD/FMUL, so these give the kernels'
# exact bits: the tolerance tests run them, and the GPU tests compare against them.

def window_sum_fp32(x: np.ndarray, radius: int) -> np.ndarray:
    """sum += x[i-R+d] for d = 0..2R, zeros at the edges, in FP32: naive's, shared's and the
    register window's order."""
    n, m = len(x), 2 * radius + 1
    padded = np.concatenate([np.zeros(radius, np.float32), x, np.zeros(radius, np.float32)])
    total = np.zeros(n, np.float32)
    for d in range(m):
        total = total + padded[d:d + n]
    return total


def direct_sum_fp32(x: np.ndarray, radius: int) -> np.ndarray:
    """naive and shared: the window sum divided by 2R+1 (correctly rounded, as the course's
    `sum / float(2*R + 1)`)."""
    return window_sum_fp32(x, radius) / np.float32(2 * radius + 1)


def window_fp32(x: np.ndarray, radius: int) -> np.ndarray:
    """coarsened for R <= 4 (the register window): the same sum, times the rounded 1/(2R+1)."""
    return window_sum_fp32(x, radius) * (np.float32(1) / np.float32(2 * radius + 1))


def running_sum_fp32(x: np.ndarray, radius: int) -> np.ndarray:
    """coarsened for R > 4: outputs in groups of C from index 0; each group's first window is
    its own chunk sum (C terms) plus the next Q-1 groups' chunk sums plus the last m - QC terms
    when Q = m // C >= 2, else a direct sum; then sum = sum + (entering - leaving) for the
    next C-1 outputs."""
    n, m, c_out = len(x), 2 * radius + 1, COARSE_C
    groups = -(-n // c_out)
    q = m // c_out if m // c_out >= 2 else 0
    padded = np.zeros((groups + q + 1) * c_out + 2 * radius, np.float32)
    padded[radius:radius + n] = x
    start = np.arange(groups) * c_out
    if q:
        count = groups + q - 1  # chunk sums past the last group: the kernel's ghosts
        chunk = np.zeros(count, np.float32)
        for d in range(c_out):
            chunk = chunk + padded[np.arange(count) * c_out + d]
        total = chunk[:groups].copy()
        for j in range(1, q):
            total = total + chunk[j:j + groups]
        for d in range(q * c_out, m):
            total = total + padded[start + d]
    else:
        total = np.zeros(groups, np.float32)
        for d in range(m):
            total = total + padded[start + d]
    inv = np.float32(1) / np.float32(m)
    y = np.empty((groups, c_out), np.float32)
    y[:, 0] = total * inv
    for c in range(1, c_out):
        total = total + (padded[start + c + 2 * radius] - padded[start + c - 1])
        y[:, c] = total * inv
    return y.reshape(-1)[:n]


def model_of(variant: str, radius: int):
    """The summation order of a variant: naive and shared sum directly and divide; coarsened's
    register window (R <= 4) sums directly and multiplies by 1/(2R+1); its running sum beyond."""
    if variant != "coarsened":
        return direct_sum_fp32
    return running_sum_fp32 if radius > REGISTER_MAX_R else window_fp32


# ---- declaration ----------------------------------------------------------------------

def test_variants_and_table_attributes():
    assert W.variant_names() == [*VARIANTS, "memcpy"]
    coarsened = f"coarsened<{COARSE_THREADS}, {COARSE_C}, {REGISTER_THREADS}>"
    assert [v.kernel for v in W.variants] == ["naive<int>", "shared<int>", coarsened, None]
    assert W.kernel_names() == ["naive<int>", "shared<int>", coarsened, "naive<long long>", "shared<long long>"]
    # one block size per path: the register window's for R <= 4, the shared tile's beyond
    assert [coarsened_threads(r) for r in (0, REGISTER_MAX_R, REGISTER_MAX_R + 1, 32)] == [
        REGISTER_THREADS, REGISTER_THREADS, COARSE_THREADS, COARSE_THREADS]
    assert (REGISTER_OUT, COARSE_OUT) == (4 * REGISTER_THREADS, COARSE_C * COARSE_THREADS)
    assert (W.baseline, W.roof, W.rate, W.dims) == ("naive", "memcpy", "GB/s", ("n",))
    assert W.tolerance_for(W.default_shape()).rule == "elementwise"


def test_shapes_labels_and_defines():
    assert W.default_shape() == shape(16777216, 32)
    assert W.check_shapes() == [shape(n, r) for r in (1, 2, 32, 64) for n in (1, 2, 255, 257, 4194304, 16777219)] + [
        shape(2**31 + 4101, 64)]  # past 2^31: naive's and shared's 64-bit path
    assert W.label(shape(16777216, 32)) == "16777216 radius=32"
    assert W.defines(shape(100, 2)) == {"RADIUS": 2}
    assert W.compile_sets() == [{"RADIUS": r} for r in (1, 2, 32, 64)]
    assert W.device_bytes(shape(1000, 64)) == 8000


# ---- reference ------------------------------------------------------------------------

def test_reference_on_the_seed_example():
    # The course's example: x = [1..7], R = 2, y[0] = (0 + 0 + 1 + 2 + 3) / 5 = 1.2; the divisor stays 5.
    x = np.arange(1, 8, dtype=np.float32)
    y = W.reference(shape(7, 2), {"x": x}, W.variant("naive"))
    np.testing.assert_allclose(y, [1.2, 2.0, 3.0, 4.0, 5.0, 4.4, 3.6], rtol=1e-15)


@pytest.mark.parametrize("n,radius", [(1, 0), (1, 3), (5, 2), (7, 10), (100, 1), (257, 32), (300, 64)])
def test_reference_equals_the_definition(n, radius):
    x = np.random.default_rng(n + radius).random(n, dtype=np.float32) * 2 - 1
    direct = [sum(float(x[j]) for j in range(i - radius, i + radius + 1) if 0 <= j < n) / (2 * radius + 1)
              for i in range(n)]
    np.testing.assert_allclose(stencil_reference(x, radius), direct, rtol=0, atol=1e-15)


# ---- index paths and the check past 2^31 ----------------------------------

def test_int_while_every_index_fits():
    # shared's halo load forms g = base + j - R up to n + B + R; naive's j = i + d up to n + R.
    assert stencil_index(shape(16777216, 32)) == "int"
    assert stencil_index(shape(INT_MAX - BLOCK - 64, 32)) == "int"
    assert stencil_index(shape(INT_MAX - BLOCK - 63, 32)) == "long long"
    assert stencil_index(shape(INT_MAX - BLOCK, 0)) == "int"
    assert stencil_index(W.check_shapes()[-1]) == "long long"
    assert {"naive<long long>", "shared<long long>"} <= set(W.kernel_names())


@pytest.mark.parametrize("radius", [0, 2, 64])
def test_sampled_reference_is_the_reference_at_the_samples(radius):
    x = np.random.default_rng(radius).random(5000, dtype=np.float32) * 2 - 1
    idx = np.array([0, 1, radius, 2499, 4999 - radius, 4998, 4999])
    np.testing.assert_allclose(sampled_reference(x, radius, idx), stencil_reference(x, radius)[idx], rtol=0,
                               atol=1e-15)


def test_large_shapes_are_checked_on_samples(monkeypatch):
    """Past SAMPLE_ABOVE outputs: a repeated random block as input, the reference at the
    sampled outputs only (the first and last among them); 5000 stands in for 2^31."""
    monkeypatch.setattr(stencil, "SAMPLE_ABOVE", 1000)
    monkeypatch.setattr(stencil, "SAMPLES", 64)
    s = shape(5000, 32)
    inputs = W.make_inputs(s, np.random.default_rng(1))
    x, (idx,) = inputs["x"], inputs[SAMPLE]
    assert x.dtype == np.float32 and -1 <= x.min() and x.max() < 1 and np.count_nonzero(x) == x.size
    assert idx[0] == 0 and idx[-1] == 4999 and len(idx) < 5000
    np.testing.assert_allclose(W.reference(s, inputs, W.variant("naive")), stencil_reference(x, 32)[idx], rtol=0,
                               atol=1e-15)


def test_inputs_are_fp32_in_minus_one_to_one():
    x = W.make_inputs(shape(10000, 2), np.random.default_rng(0))["x"]
    assert x.dtype == np.float32 and x.shape == (10000,)
    assert -1 <= x.min() < -0.99 and 0.99 < x.max() < 1
    assert np.count_nonzero(x) == x.size


# ---- tolerance ------------------------------------------------------------------------

def test_fp32_models_reproduce_the_seed_example():
    x = np.arange(1, 8, dtype=np.float32)
    for model in (direct_sum_fp32, running_sum_fp32):
        np.testing.assert_allclose(model(x, 2), [1.2, 2.0, 3.0, 4.0, 5.0, 4.4, 3.6], rtol=1e-6)


@pytest.mark.parametrize("radius", [0, *RADII, MAX_RADIUS])
@pytest.mark.parametrize("variant", VARIANTS)
def test_each_summation_order_stays_within_the_bound(variant, radius):
    tol = W.tolerance_for(shape(1, radius))
    n = 4 * COARSE_OUT + 5
    rng = np.random.default_rng(radius)
    inputs = {
        "uniform": rng.random(n, dtype=np.float32) * 2 - 1,
        "largest": np.full(n, 1 - 2.0**-24, dtype=np.float32),  # partial sums as large as they get
        "near one": 1 - rng.random(n, dtype=np.float32) * np.float32(1e-3),
    }
    for what, x in inputs.items():
        result = compare(model_of(variant, radius)(x, radius), stencil_reference(x, radius), tol)
        assert result.passed, f"{what}: {result.detail}"


@pytest.mark.parametrize("radius", [*RADII, MAX_RADIUS])
def test_the_bound_still_catches_a_window_off_by_one(radius):
    n = 3 * max(COARSE_OUT, 2 * radius + 1)  # longer than a window, so a shift shows
    x = np.random.default_rng(1).random(n, dtype=np.float32) * 2 - 1
    ref = stencil_reference(x, radius)
    shifted = np.concatenate([[ref[0]], ref[:-1]]).astype(np.float32)  # y[i] from the window of i-1
    assert not compare(shifted, ref, W.tolerance_for(shape(n, radius))).passed


def test_error_bound_values():
    assert error_bound(2) == pytest.approx(5.5 * U)  # every variant sums directly
    assert error_bound(32) == pytest.approx(35.5 * U)  # the direct sum's m/2 is the larger term
    assert chunks(32) == 7 and (5 + 6 + 2) + 8 * 69 / 65 < 32.5  # coarsened: chunked first window + running
    assert error_bound(5) == pytest.approx((5.5 + 8 * 15 / 11 + 3) * U)  # Q = 1: direct first window
    assert error_bound(64) == pytest.approx(67.5 * U)
    assert W.tolerance_for(shape(1, MAX_RADIUS)).atol == error_bound(MAX_RADIUS)  # the loosest allowed


# ---- model ----------------------------------------------------------------------------

def test_traffic_model():
    s = shape(1 << 24, 32)
    traffic = {v: W.traffic(s, W.variant(v)) for v in VARIANTS}
    for t in traffic.values():
        assert t.bytes == 8 << 24 and t.flops == 65 << 24
    assert traffic["naive"].extra == {"reads_per_output": 65, "smem_reads_per_output": 0}
    assert traffic["shared"].extra == {"reads_per_output": 320 / 256, "smem_reads_per_output": 65}
    # C = 9, Q = 7: 8 leaving + 1 + 6 chunk sums + 2 remaining + 8 entering per thread, 6 ghosts.
    assert traffic["coarsened"].extra == {"reads_per_output": (1152 + 64) / 1152,
                                          "smem_reads_per_output": 25 / 9 + 6 * 9 / 1152 + 1}
    # R = 2: the register window, 3 float4s per 4 outputs and no shared memory.
    assert W.traffic(shape(100, 2), W.variant("coarsened")).extra == {"reads_per_output": 3,
                                                                        "smem_reads_per_output": 0.0}
    # R = 5: Q = 1, the first window is summed directly.
    assert W.traffic(shape(100, 5), W.variant("coarsened")).extra["smem_reads_per_output"] == 19 / 9 + 1
    memcpy = W.traffic(s, W.variant("memcpy"))
    assert (memcpy.bytes, memcpy.flops) == (8 << 24, 0)


# ---- validation -----------------------------------------------------------------------

@pytest.mark.parametrize("bad,words", [
    (shape(0, 2), "N must be a positive integer"),
    (shape(-4, 2), "N must be a positive integer"),
    (shape(10, -1), "radius R must be an integer >= 0, got -1"),
    (shape(10, 2.5), "radius R must be an integer >= 0"),
    (shape(10, True), "radius R must be an integer >= 0"),
    ({"n": 10}, "radius R must be an integer >= 0, got None"),
    (shape(10, MAX_RADIUS + 1), f"use --radius {MAX_RADIUS} or less"),
    (shape(10, 100000), "over the 49152 B static limit"),
    (shape(10, 4437), "over the 49152 B static limit"),
])
def test_validate_rejects(bad, words):
    with pytest.raises(UsageError, match=words.replace("(", r"\(")):
        W.validate(bad)


def test_largest_radius_is_where_the_tiles_meet_48_kb_or_the_check_goes_blind():
    W.validate(shape(1, 0))
    W.validate(shape(1, MAX_RADIUS))
    top = smem_max_radius()
    assert top == 4436
    assert coarsened_smem_bytes(top) == STATIC_SMEM < coarsened_smem_bytes(top + 1)
    assert shared_smem_bytes(top) < STATIC_SMEM
    # Below the shared-memory limit the check's power decides: the bound stays within half the
    # largest shift a window off by one causes, 2/m.
    assert MAX_RADIUS == 2894
    assert error_bound(MAX_RADIUS) <= 1 / (2 * MAX_RADIUS + 1)
    assert error_bound(MAX_RADIUS + 1) > 1 / (2 * MAX_RADIUS + 3)
    with pytest.raises(UsageError, match="window off by one could pass"):
        W.validate(shape(10, MAX_RADIUS + 1))
    assert [halo(r) for r in (0, 1, 2, 4, 5, 32)] == [0, 4, 4, 4, 8, 32]
    assert [coarsened_smem_bytes(r) for r in (0, REGISTER_MAX_R)] == [0, 0]  # the register window
    assert coarsened_smem_bytes(5) == 4 * (2 * COARSE_OUT + 16)  # Q = 1: no chunk sums
    assert coarsened_smem_bytes(32) == 4 * (2 * COARSE_OUT + 64 + COARSE_THREADS + 6)


# ---- compile (no GPU needed) ----------------------------------------------------------

@pytest.mark.parametrize("radius", [0, *RADII, MAX_RADIUS])
def test_every_kernel_compiles_per_radius_without_spills(radius):
    unit = compile_unit("stencil", W.kernel_names(), "sm_90", W.defines(shape(1, radius)))
    assert set(unit.ptxas) == set(W.kernel_names())
    for name, report in unit.ptxas.items():
        assert report.registers > 0, name
        assert (report.spill_stores, report.spill_loads, report.stack_bytes) == (0, 0, 0), name
    smem = {v.name: unit.ptxas[v.kernel].static_smem for v in W.variants if v.kernel}
    # The kernel's tiles are exactly what validate() budgets for.
    assert smem == {"naive": 0, "shared": shared_smem_bytes(radius), "coarsened": coarsened_smem_bytes(radius)}


def test_radius_past_the_limit_fails_in_the_kernel_source_too():
    with pytest.raises(CompileError, match="exceed 48 KB"):
        compile_unit("stencil", W.kernel_names(), "sm_90", {"RADIUS": smem_max_radius() + 1}, use_cache=False)


def test_compile_command_builds_every_radius(run_cli):
    code, out, _ = run_cli("compile", "--arch", "sm_90", "stencil")
    assert code == 0
    lines = [line for line in out.splitlines() if line.startswith("OK")]
    assert len(lines) == len(RADII) * (len(VARIANTS) + 2)  # + naive's and shared's 64-bit paths; memcpy compiles nothing
    assert all("0 B spills" in line for line in lines)


# ---- CLI bad input (exit 2 before any GPU work) ----------------------------------------

@pytest.mark.parametrize("args,words", [
    (["stencil", "--radius", "-1"], "--radius must be an integer >= 0, got -1"),
    (["stencil", "0"], "N must be a positive integer"),
    (["stencil", "1024", "0"], "REPS must be a positive integer"),
    (["stencil", "--radius", "two"], "--radius must be an integer >= 0, got 'two'"),
    (["stencil", "--radius", "2,"], "--radius takes comma-separated integers such as 2,32, got '2,'"),
    (["stencil", "--check-only", "--radius", "2,5000"], "radius 5000 is too large"),
    (["stencil", "--variants", "tiled"], "unknown variant 'tiled'"),
])
def test_cli_bad_input_is_one_line_exit_2(run_cli, args, words):
    code, _out, err = run_cli(*args)
    assert code == 2, err
    assert words in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


# ---- the kernels on the CPU -----------------------------------------------------------
# A few lines of C++ stand in for the CUDA names the kernels use: one std::thread per CUDA
# thread, blocks one after another, __syncthreads() a std::barrier, __shared__ arrays static
# (one copy, reused block after block like real shared memory), cp.async a 16-byte copy that
# is done when it returns. Indexing, edges and barriers are then checked in CI, with no GPU.

EMULATOR = r"""
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
struct float4 { float x, y, z, w; };
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
struct Index { unsigned x; };
thread_local Index threadIdx, blockIdx;
static std::barrier<>* block_barrier;
inline void __syncthreads() { block_barrier->arrive_and_wait(); }
template <class T> T __ldg(const T* p) { return *p; }
template <class T> void __stcs(T* p, T v) { *p = v; }
inline void copy16_async(float* smem, const float* gmem) { std::memcpy(smem, gmem, 16); }  // cp.async
inline void wait_async_copies() {}  // the copy above is already done
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#include KERNELS

template <class K> void launch(K kernel, long long blocks, int threads, const float* x, float* y, long long n) {
    std::barrier<> bar(threads);
    block_barrier = &bar;
    std::vector<std::thread> team;
    for (int t = 0; t < threads; ++t)
        team.emplace_back([&, t] {
            threadIdx.x = t;
            for (long long b = 0; b < blocks; ++b) {
                blockIdx.x = unsigned(b);
                kernel(x, y, n);
                bar.arrive_and_wait();  // the block is done before the next reuses __shared__
            }
        });
    for (auto& member : team) member.join();
}

int main(int argc, char** argv) {  // emulator VARIANT N < x (N floats) > y (N floats)
    // VARIANT: 0 naive<int>, 1 shared<int>, 2 coarsened, 3 naive<long long>, 4 shared<long long>
    int variant = std::atoi(argv[1]);
    long long n = std::atoll(argv[2]);
    // x and y sit between NaN guards: a read outside x makes a NaN output, a write outside y
    // is caught below (exit 3).
    const long long guard = 8192;
    std::vector<float> xs(n + 2 * guard, NAN), ys(n + 2 * guard, NAN);
    float *x = xs.data() + guard, *y = ys.data() + guard;
    if (std::fread(x, sizeof(float), n, stdin) != size_t(n)) return 1;
    constexpr int THREADS = R <= REGISTER_MAX_R ? EMU_RTHREADS : EMU_THREADS;  // coarsened's block, per path
    constexpr int OUT = R <= REGISTER_MAX_R ? 4 * EMU_RTHREADS : EMU_THREADS * EMU_C;  // and its outputs
    if (variant == 0) launch(naive<int>, (n + B - 1) / B, B, x, y, n);
    if (variant == 1) launch(shared<int>, (n + B - 1) / B, B, x, y, n);
    if (variant == 3) launch(naive<long long>, (n + B - 1) / B, B, x, y, n);
    if (variant == 4) launch(shared<long long>, (n + B - 1) / B, B, x, y, n);
    if (variant == 2) launch(coarsened<EMU_THREADS, EMU_C, EMU_RTHREADS>, (n + OUT - 1) / OUT, THREADS, x, y, n);
    for (long long i = 0; i < guard; ++i)
        if (!std::isnan(y[-1 - i]) || !std::isnan(y[n + i])) return 3;
    std::fwrite(y, sizeof(float), n, stdout);
}
"""


@pytest.fixture(scope="module")
def emulator(tmp_path_factory):
    """radius -> path of the emulator binary built with that RADIUS."""
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ to build the CPU emulation of the kernels")
    folder = tmp_path_factory.mktemp("stencil-emulator")
    source = folder / "emulator.cpp"
    source.write_text(EMULATOR)
    probe = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", "-x", "c++", "-"], input="#include <barrier>\n",
                           capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("g++ lacks C++20 <barrier>")
    built = {}

    def build(radius):
        if radius not in built:
            binary = folder / f"emulator_r{radius}"
            subprocess.run([cxx, "-std=c++20", "-O1", "-pthread", "-Wall", "-Werror", "-Wno-unknown-pragmas",
                            f"-DRADIUS={radius}", f"-DEMU_THREADS={COARSE_THREADS}", f"-DEMU_C={COARSE_C}",
                            f"-DEMU_RTHREADS={REGISTER_THREADS}",
                            f'-DKERNELS="{kernels_dir() / "stencil.cu"}"', str(source), "-o", str(binary)],
                           check=True, capture_output=True, text=True)
            built[radius] = binary
        return built[radius]

    return build


# Sizes around every block edge: 256 for naive/shared, 1152 for coarsened's shared tile, 1024 for
# its register window, float4 tails.
EMULATED_NS = (1, 2, 3, 5, 255, 257, REGISTER_OUT - 1, REGISTER_OUT, REGISTER_OUT + 1, COARSE_OUT - 1, COARSE_OUT,
               COARSE_OUT + 1, 2 * COARSE_OUT + 6, 5 * COARSE_OUT + 3)
# The emulator's variant numbers: the table's three, then naive's and shared's 64-bit paths.
EMULATED = [*VARIANTS, "naive", "shared"]


@pytest.mark.parametrize("radius", [0, *RADII])
def test_kernels_on_the_cpu_emulation(emulator, radius):
    binary = emulator(radius)
    for n in EMULATED_NS:
        x = np.random.default_rng(n).random(n, dtype=np.float32) * 2 - 1
        ref = stencil_reference(x, radius)
        for index, variant in enumerate(EMULATED):
            run = subprocess.run([str(binary), str(index), str(n)], input=x.tobytes(), capture_output=True,
                                 check=True)
            y = np.frombuffer(run.stdout, dtype=np.float32)
            result = compare(y, ref, W.tolerance_for(shape(n, radius)))
            assert result.passed, f"{variant} n={n} R={radius}: {result.detail}"
            np.testing.assert_array_equal(y, model_of(variant, radius)(x, radius), err_msg=f"{variant} n={n}")


def test_emulated_kernels_at_the_largest_radius(emulator):
    binary = emulator(MAX_RADIUS)
    for n in (5, 2 * MAX_RADIUS + 1, COARSE_OUT + 2 * MAX_RADIUS + 3):
        x = np.random.default_rng(n).random(n, dtype=np.float32) * 2 - 1
        for index, variant in enumerate(EMULATED):
            run = subprocess.run([str(binary), str(index), str(n)], input=x.tobytes(), capture_output=True,
                                 check=True)
            np.testing.assert_array_equal(np.frombuffer(run.stdout, dtype=np.float32),
                                          model_of(variant, MAX_RADIUS)(x, MAX_RADIUS), err_msg=f"{variant} n={n}")


# ---- the course's listing (studies/baselines.py times it beside the rungs) ------------

def test_course_listing_compiles_through_the_same_path(monkeypatch):
    listings = Path(__file__).resolve().parent.parent / "studies" / "course_listings"
    monkeypatch.setenv("PMPPBENCH_KERNELS", str(listings))
    unit = compile_unit("course", ["stencil_naive", "stencil_shared"], "sm_90", {"RADIUS": 32}, use_cache=False)
    for name, report in unit.ptxas.items():
        assert report.registers > 0 and (report.spill_stores, report.stack_bytes) == (0, 0), name


# ---- GPU ------------------------------------------------------------------------------

@pytest.mark.gpu
def test_every_variant_passes_on_the_check_shapes():
    rows = check_rows("stencil", W.check_shapes())
    assert_all_pass(rows)
    assert len(rows) == len(W.variants) * (len(RADII) * len(CHECK_NS) + 1)  # + the shape past 2^31
    for r in rows:
        if r.variant == "memcpy":  # a library call: no kernel of ours, no resources
            assert r.threads_per_block is None
            continue
        threads = coarsened_threads(r.dims["radius"]) if r.variant == "coarsened" else BLOCK
        assert r.spill_bytes == 0 and r.threads_per_block == threads


@pytest.mark.gpu
@pytest.mark.parametrize("radius", [0, 3, *RADII])
def test_every_variant_passes_on_edge_sizes(radius):
    ns = (3, 4, 5, 2 * radius + 1, REGISTER_OUT - 1, REGISTER_OUT + 1, COARSE_OUT - 1, COARSE_OUT, COARSE_OUT + 1,
          4 * COARSE_OUT + 7, 1000003)
    assert_all_pass(check_rows("stencil", [shape(n, radius) for n in sorted(set(ns))]))


@pytest.mark.gpu
def test_largest_radius_passes():
    assert_all_pass(check_rows("stencil", [shape(n, MAX_RADIUS) for n in (5, 4353, 3 * COARSE_OUT + 1, 1 << 20)]))


@pytest.mark.gpu
@pytest.mark.parametrize("index", ["int", "long long"])
@pytest.mark.parametrize("n,radius", [(COARSE_OUT * 5 + 3, 2), (COARSE_OUT * 5 + 3, 5), (COARSE_OUT * 5 + 3, 32),
                                      (1 << 20, 64)])
def test_kernels_are_bit_exact_with_their_summation_order(n, radius, index):
    """naive and shared add in the same order (so agree bit for bit), and so does coarsened's
    register window (R <= 4); its running sum (R > 4) matches its FP32 model exactly; memcpy
    returns x. A real difference here is an indexing change, not rounding. naive and shared
    run in both instantiations (the long long one forced on a small n)."""
    from pmppbench.hardware.compile import load_kernels
    from pmppbench.hardware.gpu import cupy

    s = shape(n, radius)
    inputs = W.make_inputs(s, np.random.default_rng(5))
    ctx = W.setup(s, inputs, load_kernels("stencil", W.kernel_names(), W.defines(s)))
    for variant in VARIANTS:
        job = W.job(W.variant(variant), s, ctx, index=index)
        if variant != "coarsened":
            assert job.launch.kernel.name == f"{variant}<{index}>"
        job.poison()
        job.run()
        cupy().cuda.Device().synchronize()
        np.testing.assert_array_equal(to_host(job.output()), model_of(variant, radius)(inputs["x"], radius), err_msg=variant)
    job = W.job(W.variant("memcpy"), s, ctx)
    job.poison()
    job.run()
    cupy().cuda.Device().synchronize()
    np.testing.assert_array_equal(to_host(job.output()), inputs["x"], err_msg="memcpy")


@pytest.mark.gpu
def test_timed_run_at_two_radii(run_cli, tmp_path):
    import json

    out = tmp_path / "stencil.json"
    code, stdout, _ = run_cli("stencil", "1048576", "10", "--radius", "2,32", "--out", str(out))
    assert code == 0 and "PASS" in stdout
    rows = json.loads(out.read_text())["results"]
    assert {(r["variant"], r["shape"]) for r in rows} == {
        (v, f"1048576 radius={r}") for v in [*VARIANTS, "memcpy"] for r in (2, 32)}
    for r in rows:
        assert r["check"] == "PASS" and r["median_ms"] > 0 and r["reps"] == 10 and r["warmup"] == 20
        assert r["model"]["reads_per_output"] > 0
