"""Run kernels_cu/gemm.cu's tiled kernels on the CPU: a GPU-free check of `best`'s schedules.

The kernel source is compiled unchanged by the host C++ compiler, with a small prelude that
stands in for CUDA: one std::thread per CUDA thread, __syncthreads() a std::barrier of the
block, __shared__ a static (blocks run one at a time), atomicAdd / __threadfence the C++
atomics, the cp.async helpers their plain-copy fallbacks (gemm.cu's own non-sm_80 path).
Blocks run in a random order: no block of streamk ever waits for another, so every order is
one a GPU could produce, and the stream-K fixup (the last block to arrive at a tile sums its
partials) is exercised with a different last block per seed.

What it proves: the index arithmetic, the edge guards, the schedules (split-K, stream-K,
hybrid, swizzle) and the fixup give the right C for the grids `schedule_for` computes, with
the arrival counters back at zero after each launch; for the whole-tile kernels
(double_buffer, pipelined: a 2-D grid, blocks in random order too) the interior and edge
paths side by side; pipelined_padded on the copies pad_rows makes (pad_rows emulated too,
on a grid of at most 5 blocks down so that its row loop strides). What it cannot: timing,
the GPU's memory model, anything inside `#if __CUDA_ARCH__`.

    python3 tests/gemm_emulate.py            # the configurations of best and the sweep
    python3 tests/gemm_emulate.py --quick    # a few (tests/test_gemm.py runs this way)
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pmppbench.measure.check import compare  # noqa: E402
from pmppbench.workloads import get  # noqa: E402
from pmppbench.workloads.gemm.best import CHOICES, PADDED  # noqa: E402
from pmppbench.workloads.gemm.configs import Config, Schedule, padding_for, schedule_for  # noqa: E402
from pmppbench.workloads.gemm.launch import PAD_THREADS, pad_grid  # noqa: E402

PRELUDE = r"""
#include <math.h>
#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstddef>
#include <thread>
#include <vector>
using std::min;
using std::max;
struct uint3 { unsigned x, y, z; };
thread_local uint3 threadIdx, blockIdx, blockDim, gridDim;  // blockDim, gridDim: set for pad_rows only
static std::barrier<>* emu_block_barrier;
alignas(16) static float emu_dynamic_smem[64 * 1024];  // 256 KB: more than any block may ask for
inline void __syncthreads() { emu_block_barrier->arrive_and_wait(); }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline int atomicAdd(int* p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
struct alignas(16) float4 { float x, y, z, w; };
inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
inline void __stcg(float4* p, float4 v) { *p = v; }
inline float4 __ldcg(const float4* p) { return *p; }
inline float4 __ldg(const float4* p) { return *p; }
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __restrict__ __restrict
#define __shared__ static
"""

LAUNCHER = r"""
extern "C" int emu_{idx}(const float* A, const float* B, float* C, int M, int N, int K, int dp, int per,
                          int group_m, float* partials, int* arrivals, const int* order, int grid) {{
    for (int o = 0; o < grid; ++o) {{
        const unsigned b = unsigned(order[o]);
        std::barrier<> bar({threads});
        emu_block_barrier = &bar;
        std::vector<std::thread> ts;
        ts.reserve({threads});
        for (unsigned t = 0; t < {threads}; ++t)
            ts.emplace_back([=] {{
                threadIdx = uint3{{t, 0, 0}};
                blockIdx = {block_index};
                {call};
            }});
        for (auto& t : ts) t.join();
    }}
    return 0;
}}
"""


PAD_LAUNCHER = r"""
extern "C" void emu_pad(const float* src, float* dst, int rows, int cols, int rows_out, int ld, int gx, int gy) {{
    blockDim = uint3{{{threads}, 1, 1}};
    gridDim = uint3{{unsigned(gx), unsigned(gy), 1}};
    for (int y = 0; y < gy; ++y)  // no barrier in pad_rows: its threads may run one after another
        for (int x = 0; x < gx; ++x)
            for (unsigned t = 0; t < {threads}; ++t) {{
                threadIdx = uint3{{t, 0, 0}};
                blockIdx = uint3{{unsigned(x), unsigned(y), 0}};
                pad_rows(src, dst, rows, cols, rows_out, ld);
            }}
}}
"""
PAD_GRID_Y = 5  # the emulated pad_rows' blocks down: fewer than the rows, so its loop strides


def padded_copy(lib, src: np.ndarray, rows_out: int, ld: int) -> np.ndarray:
    """pad_rows of `src` into a rows_out x ld array that starts as NaN (a pad it leaves
    unwritten then fails the check)."""
    dst = np.full((rows_out, ld), np.nan, dtype=np.float32)
    gx, gy = pad_grid(rows_out, ld)
    lib.emu_pad(ptr(src, ctypes.c_float), ptr(dst, ctypes.c_float), *src.shape, rows_out, ld, gx, min(gy, PAD_GRID_Y))
    return dst


def emulated_source(configs: list[Config]) -> str:
    src = (ROOT / "kernels_cu" / "gemm.cu").read_text()
    for header in ("gemm_warptile.cuh", "gemm_streamk.cuh"):  # inlined: the source is built in a temp folder
        src = src.replace(f'#include "{header}"', (ROOT / "kernels_cu" / header).read_text())
    # dynamic shared memory: one host array stands in for the block's
    src = re.sub(r"extern __shared__ (?:__align__\(\d+\) )?float (\w+)\[\];",
                 r"float* const \1 = emu_dynamic_smem;", src)
    out = [PRELUDE, src, PAD_LAUNCHER.format(threads=PAD_THREADS)]
    for i, cfg in enumerate(configs):
        if cfg.kernel == "streamk":
            call = f"{cfg.expression}(A, B, C, M, N, K, dp, per, group_m, partials, arrivals)"
            index = "uint3{b, 0, 0}"
        else:  # a whole tile per block on a 2-D grid (tiles_n x tiles_m), block b = (b % tiles_n, b / tiles_n)
            call = f"{cfg.expression}(A, B, C, M, N, K)"
            if cfg.padded:  # pipelined_padded: the padded K and row length of B, as config_launches passes them
                call = f"{cfg.expression}(A, B, C, M, N, (K + {cfg.tiles.bk - 1}) / {cfg.tiles.bk} * {cfg.tiles.bk}, (N + 3) / 4 * 4)"
            tn = f"((N + {cfg.tiles.bn - 1}) / {cfg.tiles.bn})"
            index = f"uint3{{b % {tn}, b / {tn}, 0}}"
        out.append(LAUNCHER.format(idx=i, threads=cfg.tiles.threads, call=call, block_index=index))
    return "\n".join(out)


def build(configs: list[Config]) -> ctypes.CDLL:
    cxx = shutil.which(os.environ.get("CXX", "g++")) or shutil.which("c++")
    if not cxx:
        raise SystemExit("no host C++ compiler (g++ or c++) found")
    src = emulated_source(configs)
    key = hashlib.sha256(src.encode()).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / "pmppbench-gemm-emu"
    folder.mkdir(exist_ok=True)
    lib = folder / f"emu-{key}.so"
    if not lib.is_file():
        cpp = folder / f"emu-{key}.cpp"
        cpp.write_text(src)
        tmp = folder / f"emu-{key}.{os.getpid()}.so"
        subprocess.run([cxx, "-std=c++20", "-O1", "-pthread", "-shared", "-fPIC", "-w", "-o", str(tmp), str(cpp)],
                       check=True)
        tmp.replace(lib)
    return ctypes.CDLL(str(lib))


def ptr(a: np.ndarray, ctype):
    return a.ctypes.data_as(ctypes.POINTER(ctype))


def run_one(lib, idx: int, cfg: Config, m: int, n: int, k: int, slots: int, launches: int, seed: int,
            schedule: Schedule | None = None) -> list[str]:
    """Launch `cfg` `launches` times on a random M x N x K product (blocks in a new random
    order each time) with the schedule `schedule_for` gives for `slots` (or `schedule`: a
    test's broken one); the problems found, as sentences."""
    w = get("gemm")
    rng = np.random.default_rng(seed)
    shape = dict(m=m, n=n, k=k)
    inputs = w.make_inputs(shape, rng)
    ref = w.reference(shape, inputs, None)
    a, b = np.ascontiguousarray(inputs["a"]), np.ascontiguousarray(inputs["b"])
    if cfg.padded:  # pipelined_padded reads the copies a call makes (or the inputs, already so)
        pad = padding_for(cfg.tiles, m, n, k)
        a = padded_copy(lib, a, m, pad.kp) if pad.a else a
        b = padded_copy(lib, b, pad.kp, pad.np) if pad.b else b
    s = schedule or schedule_for(cfg, m, n, k, slots)
    t = cfg.tiles
    partials = np.full(max(1, 2 * s.shared_blocks * t.bm * t.bn), np.nan, dtype=np.float32)
    arrivals = np.zeros(max(1, s.tiles - s.dp_tiles), dtype=np.int32)
    problems = []
    fn = getattr(lib, f"emu_{idx}")
    for launch in range(launches):
        c = np.full((m, n), np.nan, dtype=np.float32)
        order = rng.permutation(s.grid).astype(np.int32)
        fn(ptr(a, ctypes.c_float), ptr(b, ctypes.c_float), ptr(c, ctypes.c_float), m, n, k, s.dp_tiles, s.per,
           cfg.group_m, ptr(partials, ctypes.c_float), ptr(arrivals, ctypes.c_int), ptr(order, ctypes.c_int), s.grid)
        r = compare(c, ref, w.tolerance_for(shape))
        if not r.passed:
            problems.append(f"{cfg.name} {m}x{n}x{k} slots {slots} launch {launch}: {r.detail}")
        if arrivals.any():
            problems.append(f"{cfg.name} {m}x{n}x{k} slots {slots} launch {launch}: arrival counters not back at 0")
    return problems


def sk(tiles, schedule="dp", split=1, group_m=1, async_b=False) -> Config:
    return Config("streamk", tiles, schedule, split, group_m, async_b)


def plan(quick: bool) -> list[tuple[Config, tuple[int, int, int], int]]:
    """(configuration, shape, slots): every schedule on shapes with partial tiles on every
    edge, K % 4 != 0 (the scalar load paths), K shorter than one step, more and fewer
    blocks than slots."""
    sys.path.insert(0, str(ROOT / "studies"))  # the sweep's configurations (studies/gemm_best_sweep.py)
    from gemm_best_sweep import EDGE_CONFIGS  # noqa: PLC0415

    best = [*CHOICES.values(), PADDED]
    configs = list(dict.fromkeys([*best, *EDGE_CONFIGS]))
    if quick:
        configs = best
    # (300, 520, 64): K % 16 == 0, so pipelined's 128 x 256 interior tiles take the unchecked path
    # (and pipelined_padded runs on A and B themselves); (131, 259, 48): only B is padded, and
    # the second tile column's loads of B are clamped
    shapes = [(129, 127, 20), (257, 260, 36), (70, 33, 17), (1, 1, 1), (300, 520, 100), (300, 520, 64),
              (131, 259, 48)]
    if quick:
        shapes = [(129, 127, 20), (70, 33, 17), (300, 520, 100), (300, 520, 64), (131, 259, 48)]
    out = []
    for cfg in configs:
        for s in shapes:
            for slots in (3, 7) if not quick else (5,):
                out.append((cfg, s, slots))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="best's own configurations on three shapes")
    ap.add_argument("--launches", type=int, default=2)
    args = ap.parse_args()
    runs = plan(args.quick)
    configs = list(dict.fromkeys(c for c, _, _ in runs))
    lib = build(configs)
    problems = []
    for i, (cfg, (m, n, k), slots) in enumerate(runs):
        problems += run_one(lib, configs.index(cfg), cfg, m, n, k, slots, args.launches, seed=i)
    for p in problems:
        print("FAIL", p)
    print(f"{len(runs)} emulated runs of {len(configs)} configurations x {args.launches} launches: "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
