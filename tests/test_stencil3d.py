"""3D seven-point stencil workload. On the CPU: the float64 reference against the
definition, the sampled reference, the tolerance against FP32 models of the sum, the
coefficients against the kernel file's, the traffic model, validation, NVRTC compile, the
CLI's bad input, and the kernels under a small emulation of CUDA threads (warp shuffles
included), shipped and mutated (each mutation must FAIL). On the GPU: every variant on the
check and edge shapes, the rungs bit for bit equal to each other, the mutations (a missing
barrier too), and a learner's copy of a rung."""

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
from pmppbench.workloads import stencil3d
from pmppbench.workloads.stencil3d import (
    BEST_Y, BEST_ZCHUNK, COEFFICIENTS, WORKLOAD, error_bound, sampled_reference, stencil3d_reference,
)
from pmppbench.workloads.helpers import SAMPLE, UNIT_ROUNDOFF

W = WORKLOAD
KERNELS = ["naive", "shared", "coarsened", "register", "best"]


def grid(n, seed=0):
    return np.random.default_rng(seed).random(n ** 3, dtype=np.float32) * np.float32(2) - np.float32(1)


def definition(x, n):
    """out[i][j][k] cell by cell in float64, boundary cells copied (§8.1)."""
    g = x.reshape(n, n, n).astype(np.float64)
    out = g.copy()
    c = COEFFICIENTS
    for i in range(1, n - 1):
        for j in range(1, n - 1):
            for k in range(1, n - 1):
                out[i, j, k] = (c[0] * g[i, j, k] + c[1] * g[i, j, k - 1] + c[2] * g[i, j, k + 1]
                                + c[3] * g[i, j - 1, k]
                                + c[4] * g[i, j + 1, k] + c[5] * g[i - 1, j, k] + c[6] * g[i + 1, j, k])
    return out.reshape(-1)


def book_order_fp32(x, n, fused):
    """The kernels' FP32 sum in the book's order of terms: products rounded then added left to
    right (fused False: the CPU emulation), or the first product rounded and each next one
    fused into its add (an FFMA)."""
    g = x.reshape(n, n, n)
    out = g.copy()
    if n < 3:
        return out.reshape(-1)
    s = slice(1, -1)
    terms = [g[s, s, s], g[s, s, :-2], g[s, s, 2:], g[s, :-2, s], g[s, 2:, s], g[:-2, s, s], g[2:, s, s]]
    c = [np.float32(v) for v in COEFFICIENTS]
    acc = c[0] * terms[0]
    for ck, t in zip(c[1:], terms[1:]):
        acc = (acc.astype(np.float64) + float(ck) * t.astype(np.float64)).astype(np.float32) if fused else acc + ck * t
    out[s, s, s] = acc
    return out.reshape(-1)


# ---- declaration ----------------------------------------------------------------------

def test_variants_and_table_attributes():
    assert W.variant_names() == [*KERNELS, "memcpy"]
    assert [v.kernel for v in W.variants] == ["naive<int>", "shared<int>", "coarsened<int>", "register_tiled<int>",
                                              "best<4, 32, true>", None]
    assert W.kernel_names()[-1] == "best<4, 32, false>" and "register_tiled<long long>" in W.kernel_names()
    assert (W.baseline, W.roof, W.rate, W.dims) == ("naive", "memcpy", "GB/s", ("n",))
    assert W.default_shape() == {"n": 512}
    assert W.check_shapes()[-1] == {"n": 1291} and 1291 ** 3 > 2 ** 31
    assert W.device_bytes({"n": 10}) == 8000


def test_coefficients_are_the_kernel_files():
    text = (kernels_dir() / "stencil3d.cu").read_text()
    line = re.search(r"constexpr float (c0 = .*);", text).group(1)
    found = dict(re.findall(r"(c\d) = ([0-9.]+)f", line))
    assert [float(found[f"c{i}"]) for i in range(7)] == list(COEFFICIENTS)
    assert sum(COEFFICIENTS) == pytest.approx(1) and len(set(COEFFICIENTS)) == 7


def test_geometry():
    assert W.geometry(W.variant("naive"), {"n": 512}) == ((16, 64, 256), (32, 8, 2))
    assert W.geometry(W.variant("shared"), {"n": 512}) == ((86, 86, 86), (8, 8, 8))
    assert W.geometry(W.variant("register"), {"n": 512}) == ((18, 18, 18), (32, 32))
    assert W.geometry(W.variant("best"), {"n": 512}) == ((4, 512 // BEST_Y, 512 // BEST_ZCHUNK), (32, BEST_Y))


# ---- reference ------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 3, 4, 7])
def test_reference_equals_the_definition(n):
    x = grid(n, n)
    np.testing.assert_allclose(stencil3d_reference(x.reshape(n, n, n)).reshape(-1), definition(x, n), rtol=0,
                               atol=1e-15)


def test_reference_of_a_constant_grid_is_the_constant():
    # the coefficients sum to 1: every interior cell of a constant grid keeps its value
    out = stencil3d_reference(np.full((5, 5, 5), 0.5, np.float32))
    np.testing.assert_allclose(out, 0.5, rtol=0, atol=1e-15)


def test_sampled_reference_is_the_reference_at_the_samples():
    n = 9
    x = grid(n, 1)
    cells = np.array([0, 1, 80, 81 + 9 + 1, 364, 400, n ** 3 - 1])
    np.testing.assert_allclose(sampled_reference(x, n, cells), definition(x, n)[cells], rtol=0, atol=1e-15)


def test_large_grids_are_checked_on_samples(monkeypatch):
    monkeypatch.setattr(stencil3d, "SAMPLE_ABOVE", 1000)
    monkeypatch.setattr(stencil3d, "SAMPLES", 64)
    s = {"n": 12}
    inputs = W.make_inputs(s, np.random.default_rng(1))
    (cells,) = inputs[SAMPLE]
    assert cells[0] == 0 and cells[-1] == 12 ** 3 - 1
    np.testing.assert_allclose(W.reference(s, inputs, W.variant("best")), definition(inputs["x"], 12)[cells],
                               atol=1e-15)


# ---- tolerance ------------------------------------------------------------------------

@pytest.mark.parametrize("fused", [True, False])
def test_the_sum_stays_within_the_bound(fused):
    n = 20
    top = np.float32(1 - 2 ** -24)
    tol = W.tolerance_for({"n": n})
    for what, x in {"uniform": grid(n), "largest": np.full(n ** 3, top), "smallest": np.full(n ** 3, -top),
                    "random signs": np.where(grid(n, 3) < 0, -top, top)}.items():
        result = compare(book_order_fp32(x, n, fused), stencil3d_reference(x.reshape(n, n, n)).reshape(-1), tol)
        assert result.passed, f"{what}: {result.detail}"


def test_the_bound_catches_a_neighbour_from_the_wrong_side():
    n = 16
    x = grid(n, 2)
    g = x.reshape(n, n, n).astype(np.float64)
    wrong = stencil3d_reference(g)
    s = slice(1, -1)
    wrong[s, s, s] += COEFFICIENTS[1] * (g[s, s, 2:] - g[s, s, :-2])  # c1 meets k+1 instead of k-1
    assert not compare(wrong.reshape(-1).astype(np.float32), stencil3d_reference(g).reshape(-1), W.tolerance).passed
    assert error_bound() == pytest.approx(7 * UNIT_ROUNDOFF)


# ---- model and validation -------------------------------------------------------------

def test_traffic_model():
    t = {v.name: W.traffic({"n": 512}, v) for v in W.variants}
    assert all(x.bytes == 8 * 512 ** 3 for x in t.values())
    assert t["memcpy"].flops == 0 and t["naive"].flops == 13 * 510 ** 3
    assert W.traffic({"n": 2}, W.variant("best")).flops == 0  # all boundary
    assert t["naive"].extra["reads_per_output"] == 7
    assert t["shared"].extra["reads_per_output"] == (8 / 6) ** 3
    assert t["register"].extra["reads_per_output"] == (32 / 30) ** 3


@pytest.mark.parametrize("bad,words", [({"n": 0}, "N must be a positive integer"),
                                       ({"n": 131071}, "N must be at most 131070")])
def test_validate_rejects(bad, words):
    with pytest.raises(UsageError, match=words):
        W.validate(bad)


@pytest.mark.parametrize("args,words", [(["stencil3d", "0"], "N must be a positive integer"),
                                        (["stencil3d", "64", "0"], "REPS must be a positive integer"),
                                        (["stencil3d", "--variants", "tiled"], "unknown variant 'tiled'")])
def test_cli_bad_input_is_one_line_exit_2(run_cli, args, words):
    code, _out, err = run_cli(*args)
    assert code == 2, err
    assert words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_every_kernel_compiles_without_spills():
    unit = compile_unit("stencil3d", W.kernel_names(), "sm_90")
    assert set(unit.ptxas) == set(W.kernel_names())
    for name, report in unit.ptxas.items():
        assert (report.spill_stores, report.spill_loads, report.stack_bytes) == (0, 0, 0), name
    smem = {v.name: unit.ptxas[v.kernel].static_smem for v in W.variants if v.kernel}
    assert smem == {"naive": 0, "shared": 4 * 8 ** 3, "coarsened": 3 * 4 * 32 ** 2, "register": 4 * 32 ** 2, "best": 0}


# ---- the kernels on the CPU -----------------------------------------------------------
# One std::thread per CUDA thread, blocks one after another, __syncthreads() a std::barrier
# of the block, a warp shuffle two barriers of the warp around a slot per thread.

EMULATOR = r"""
#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>
using std::min;
struct float4 { float x, y, z, w; };
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
struct Index { unsigned x, y, z; };
thread_local Index threadIdx, blockIdx;
thread_local int linear;
static std::barrier<>* block_barrier;
static std::vector<std::unique_ptr<std::barrier<>>> warp_barriers;
static float slots[1024];
inline void __syncthreads() { block_barrier->arrive_and_wait(); }
inline float exchange(float v, int from) {
    std::barrier<>& warp = *warp_barriers[linear / 32];
    slots[linear] = v;
    warp.arrive_and_wait();
    float r = (from / 32 == linear / 32) ? slots[from] : v;
    warp.arrive_and_wait();
    return r;
}
inline float __shfl_up_sync(unsigned, float v, int d) {
    return exchange(v, linear % 32 >= d ? linear - d : linear);
}
inline float __shfl_down_sync(unsigned, float v, int d) {
    return exchange(v, linear % 32 + d < 32 ? linear + d : linear);
}
template <class T> T __ldg(const T* p) { return *p; }
template <class T> void __stcs(T* p, T v) { *p = v; }
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#include KERNELS

template <class K> void launch(K body, Index g, Index b) {
    int threads = b.x * b.y * b.z;
    std::barrier<> bar(threads);
    block_barrier = &bar;
    warp_barriers.clear();
    for (int w = 0; w < (threads + 31) / 32; ++w) warp_barriers.emplace_back(new std::barrier<>(32));
    std::vector<std::thread> team;
    for (int t = 0; t < threads; ++t)
        team.emplace_back([&, t] {
            linear = t;
            threadIdx = {unsigned(t) % b.x, unsigned(t) / b.x % b.y, unsigned(t) / (b.x * b.y)};
            for (unsigned z = 0; z < g.z; ++z)
                for (unsigned y = 0; y < g.y; ++y)
                    for (unsigned x = 0; x < g.x; ++x) {
                        blockIdx = {x, y, z};
                        body();
                        bar.arrive_and_wait();
                    }
        });
    for (auto& member : team) member.join();
}

unsigned up(long long n, int d) { return unsigned((n + d - 1) / d); }

int main(int argc, char** argv) {  // emulator VARIANT N < in (N^3 floats) > out (N^3 floats)
    int variant = std::atoi(argv[1]);
    int n = std::atoi(argv[2]);
    long long cells = (long long)n * n * n;
    const long long guard = 4096;
    std::vector<float> xs(cells + 2 * guard, NAN), ys(cells + 2 * guard, NAN);
    float *in = xs.data() + guard, *out = ys.data() + guard;
    if (std::fread(in, sizeof(float), cells, stdin) != size_t(cells)) return 1;
    unsigned t6 = up(n, 6), t30 = up(n, 30);
    if (variant == 0) launch([&] { naive<int>(in, out, n); }, {up(n, 32), up(n, 8), up(n, 2)}, {32, 8, 2});
    if (variant == 1) launch([&] { shared<int>(in, out, n); }, {t6, t6, t6}, {8, 8, 8});
    if (variant == 2) launch([&] { coarsened<int>(in, out, n); }, {t30, t30, t30}, {32, 32, 1});
    if (variant == 3) launch([&] { register_tiled<int>(in, out, n); }, {t30, t30, t30}, {32, 32, 1});
    Index bg = {up(n, 128), up(n, BEST_Y), up(n, BEST_ZCHUNK)};
    if (variant == 4) {
        if (n % 4 == 0) launch([&] { best<BEST_Y, BEST_ZCHUNK, true>(in, out, n); }, bg, {32, BEST_Y, 1});
        else launch([&] { best<BEST_Y, BEST_ZCHUNK, false>(in, out, n); }, bg, {32, BEST_Y, 1});
    }
    if (variant == 5) launch([&] { register_tiled<long long>(in, out, n); }, {t30, t30, t30}, {32, 32, 1});
    for (long long i = 0; i < guard; ++i)
        if (!std::isnan(out[-1 - i]) || !std::isnan(out[cells + i])) return 3;
    std::fwrite(out, sizeof(float), cells, stdout);
}
"""
EMULATED = [*KERNELS, "register"]  # the emulator's variant numbers: then register's 64-bit path


@pytest.fixture(scope="module")
def emulator(tmp_path_factory):
    """source text or None -> path of the emulator built with it."""
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ to build the CPU emulation of the kernels")
    folder = tmp_path_factory.mktemp("stencil3d-emulator")
    source = folder / "emulator.cpp"
    source.write_text(EMULATOR)
    built = {}

    def build(text=None):
        if text not in built:
            kernels = kernels_dir() / "stencil3d.cu"
            if text is not None:
                kernels = folder / f"mutant{len(built)}.cu"
                kernels.write_text(text)
            binary = folder / f"emulator{len(built)}"
            subprocess.run([cxx, "-std=c++20", "-O1", "-pthread", "-Wall", "-Wno-unknown-pragmas", "-ffp-contract=off",
                            f"-DBEST_Y={BEST_Y}", f"-DBEST_ZCHUNK={BEST_ZCHUNK}", f'-DKERNELS="{kernels}"', str(source),
                            "-o", str(binary)],
                           check=True, capture_output=True, text=True)
            built[text] = binary
        return built[text]

    return build


def emulate(binary, variant: int, x: np.ndarray, n: int) -> np.ndarray:
    run = subprocess.run([str(binary), str(variant), str(n)], input=x.tobytes(), capture_output=True, check=True)
    return np.frombuffer(run.stdout, dtype=np.float32)


# Around every tile edge: 6 (shared), 30 (coarsened, register), 128 columns and 4 rows and 32
# planes (best), N not a multiple of 4 (best's scalar path), N < 3 (all boundary).
EMULATED_NS = (1, 2, 3, 4, 5, 7, 8, 31, 32, 33, 36)


def test_kernels_on_the_cpu_emulation(emulator):
    binary = emulator()
    for n in EMULATED_NS:
        x = grid(n, n)
        model = book_order_fp32(x, n, fused=False)
        for index, variant in enumerate(EMULATED):
            out = emulate(binary, index, x, n)
            result = compare(out, stencil3d_reference(x.reshape(n, n, n)).reshape(-1), W.tolerance)
            assert result.passed, f"{variant} n={n}: {result.detail}"
            np.testing.assert_array_equal(out, model, err_msg=f"{variant} n={n}")


# Mutations of a copy of stencil3d.cu: name -> (variant, old text, new text). Each must FAIL.
MUTATIONS = {
    # register's z-plane rotation off by one: the plane after next becomes next too early
    "register_rotation_off_by_one": ("register", "        inPrev = inCurr;\n        inCurr = inNext;\n",
                                     "        inPrev = inNext;\n        inCurr = inNext;\n"),
    # coarsened rotates its shared planes the wrong way round
    "coarsened_rotation_off_by_one": ("coarsened", "        inPrev_s[ty][tx] = inCurr_s[ty][tx];\n",
                                      "        inPrev_s[ty][tx] = inNext_s[ty][tx];\n"),
    # shared's tile misses its halo on one side: the first x of every tile is never loaded
    "shared_halo_missed_on_one_side": ("shared", "if (inside) in_s[tz][ty][tx] =",
                                       "if (inside && tx > 0) in_s[tz][ty][tx] ="),
    # best takes its left neighbour across float4s from the wrong lane
    "best_left_neighbour_off_by_one": ("best", "__shfl_up_sync(0xffffffffu, curr.w, 1)",
                                       "__shfl_up_sync(0xffffffffu, curr.z, 1)"),
    # best's z-plane rotation off by one: prev takes the plane after the current one
    "best_rotation_off_by_one": ("best", "        prev = curr;\n        curr = next;\n",
                                 "        prev = next;\n        curr = next;\n"),
}


def mutated(old: str, new: str) -> str:
    text = (kernels_dir() / "stencil3d.cu").read_text()
    assert text.count(old) == 1, old
    return text.replace(old, new)


@pytest.mark.parametrize("name", MUTATIONS)
def test_mutants_fail_on_the_cpu_emulation(emulator, name):
    variant, old, new = MUTATIONS[name]
    binary = emulator(mutated(old, new))
    n = 36
    x = grid(n, 4)
    out = emulate(binary, EMULATED.index(variant), x, n)
    assert not compare(out, stencil3d_reference(x.reshape(n, n, n)).reshape(-1), W.tolerance).passed


# a missing barrier between storing the current plane and reading it (on the GPU only)
BARRIER_MUTATION = ("register", "        __syncthreads();  // the current plane is in inCurr_s\n",
                    "        // no barrier: the current plane is in inCurr_s\n")
MUTANT_SHAPE = ("40",)


# ---- GPU ------------------------------------------------------------------------------

@pytest.mark.gpu
def test_every_variant_passes_on_the_check_shapes():
    from gpu_helpers import assert_all_pass, check_rows  # noqa: PLC0415

    shapes = W.check_shapes()[:-1]
    rows = check_rows("stencil3d", shapes)
    assert_all_pass(rows)
    assert len(rows) == len(W.variants) * len(shapes)


@pytest.mark.gpu
def test_past_2_31_cells():
    from gpu_helpers import assert_all_pass, check_rows  # noqa: PLC0415

    assert_all_pass(check_rows("stencil3d", [W.check_shapes()[-1]]))


@pytest.mark.gpu
@pytest.mark.parametrize("n", [30, 31, 62, 100, 129, 130])
def test_rungs_agree_bit_for_bit(n):
    """Every rung computes the same expression in the same order: the same bits as naive."""
    from pmppbench.hardware.compile import load_kernels  # noqa: PLC0415
    from pmppbench.hardware.gpu import cupy  # noqa: PLC0415
    from pmppbench.measure.check import to_host  # noqa: PLC0415

    s = {"n": n}
    inputs = W.make_inputs(s, np.random.default_rng(5))
    ctx = W.setup(s, inputs, load_kernels("stencil3d", W.kernel_names(), W.defines(s)))
    outs = {}
    for variant in KERNELS:
        job = W.job(W.variant(variant), s, ctx)
        job.poison()
        job.run()
        cupy().cuda.Device().synchronize()
        outs[variant] = to_host(job.output()).copy()
    for variant in KERNELS[1:]:
        np.testing.assert_array_equal(outs[variant], outs["naive"], err_msg=variant)


@pytest.mark.gpu
@pytest.mark.parametrize("name", [*MUTATIONS, "register_missing_barrier"])
def test_mutants_fail_on_the_gpu(name, tmp_path):
    if name == "register_missing_barrier":  # threads read their neighbours' plane before it is stored
        variant, old, new = BARRIER_MUTATION
    else:
        variant, old, new = MUTATIONS[name]
    rows = mutant_check("stencil3d", [Edit("stencil3d.cu", old, new)], {"n": 200}, variant, tmp_path)
    assert [r.check for r in rows] == ["FAIL"], rows[0].check_detail or rows[0].error


@pytest.mark.gpu
@pytest.mark.parametrize("rung", ["shared", "register", "best"])
def test_a_learners_copy_of_a_rung_passes_like_it(run_cli, tmp_path, rung):
    src = tmp_path / "mine.cu"
    src.write_text((kernels_dir() / "stencil3d.cu").read_text())
    code, out, err = run_cli("stencil3d", "128", "3", "--kernel", f"{src}:{W.variant(rung).kernel}", "--like", rung)
    assert code == 0, err
    assert out.count("PASS") >= 2


@pytest.mark.gpu
def test_timed_run(run_cli, tmp_path):
    import json  # noqa: PLC0415

    out = tmp_path / "stencil3d.json"
    code, stdout, _ = run_cli("stencil3d", "128", "5", "--out", str(out))
    assert code == 0 and "PASS" in stdout
    rows = json.loads(out.read_text())["results"]
    assert {r["variant"] for r in rows} == set(W.variant_names())
    assert all(r["check"] == "PASS" and r["median_ms"] > 0 for r in rows)


@pytest.mark.gpu
@pytest.mark.parametrize("tool,clean", [("memcheck", "ERROR SUMMARY: 0 errors"),
                                        ("racecheck", "RACECHECK SUMMARY: 0 hazards displayed")])
def test_the_sanitizers_find_nothing_on_the_sanitize_shapes(tool, clean):
    out = sanitized(tool, "all", "--config", "sanitize", "--only", "stencil3d", "--check-only")
    assert clean in out and "FAIL" not in out, out[-3000:]


@pytest.mark.gpu
def test_racecheck_reports_the_missing_barrier(tmp_path):
    variant, old, new = BARRIER_MUTATION
    src = tmp_path / "mutant.cu"
    src.write_text(mutated(old, new))
    out = sanitized("racecheck", "stencil3d", *MUTANT_SHAPE, "1", "--check-only", "--kernel",
                    f"{src}:{W.variant(variant).kernel}", "--like", variant, "--variants", variant)
    assert "RACECHECK SUMMARY" in out and "RACECHECK SUMMARY: 0 hazards" not in out, out[-3000:]
