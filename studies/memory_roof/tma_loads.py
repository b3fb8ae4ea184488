"""What the copy engine's loads of a transpose tile cost by themselves (session 21; docs/memory_roof.md).

ncu (session 21, call 1) has coarsened_sector_tma_any's engine loads at 2.6 times the L2 read requests of
coarsened_sector_tma's at 8192^2 (454 against 173 a tile, 1.8 sectors a request against 4), the same
shape and the same write phase, 5 points of memcpy apart. This study times the loads alone: every
block takes one tile in coarsened's order, loads A's 72 rows of it (y0 - 8 .. y0 + 63, as the sector
forms do) into shared memory in one of these layouts, waits for them, and exits:

  swz32      8 boxes of 32 columns x 18 rows of four, the 128-byte swizzle (coarsened_sector_tma's; N % 4 == 0)
  flat32     the same boxes without the swizzle (rows of 128 bytes on 128 bytes in shared memory)
  flat64     4 boxes of 64 columns x 18, no swizzle (rows of 256 bytes; N % 4 == 0)
  flat68     4 boxes of 68 columns, started d_p floats early, no swizzle (coarsened_sector_tma_any's; any N)
  flat96     4 boxes of 96 columns, started d_p floats early, no swizzle (rows of 384 bytes; any N)
  bulk       one 1-D bulk copy a row (272 bytes from the 16 bytes before the row's first float), rows 68
             floats apart in shared memory: the dense layout of flat68 without a map (any N)
  bulk_line  the same copies, each row put at its global address's offset within 128 bytes, rows 128
             floats apart: shared memory's 128-byte lines and the global lines fall together (any N)
  bulk_sec   bulk_line's placement, each copy 288 bytes from the 32-byte sector at or before the row's first
             float (whole sectors at both ends; added after call 2, not yet run)
  bulk_lines3 one copy a row of the three whole 128-byte lines from the one at or before the row's first
             float (384 bytes, 1.4 times the bytes), rows 128 floats apart (any N)
  read4      no engine: the threads read the tile's floats (streaming loads, 72 rows of 64): a read roof

Every form has the same static shared memory a block (36,928 bytes and an 8-byte barrier: 6 blocks
an SM), so that what differs is the layout. Printed: ms a call (the benchmark's protocol: the L2
settled, 3 warmup calls, median of 5 batches of 20) and GB/s of A's 4MN bytes. Under ncu (`--once`:
one call of each) the L2 read requests and sectors say how the engine split each layout.

    python3 studies/memory_roof/tma_loads.py [M N ...] [--once]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import cupy as cp
import numpy as np

from pmppbench.compile import compile_unit
from pmppbench.protocol import Protocol, measure
from pmppbench.workloads.gemm import tma

SOURCE = r"""
struct __align__(64) Map { unsigned long long w[16]; };
__device__ __forceinline__ unsigned smem(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }
constexpr int SMEM_FLOATS = 72 * 128 + 16;  // the largest layout (bulk_line), for every form

__device__ __forceinline__ void wait_all(unsigned bar) {
    unsigned done = 0;
    while (!done)
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(bar) : "memory");
}

// BOXES boxes a tile: box b = phase b / PARTS, part b % PARTS of COLS columns; STRIDE floats apart.
template <int BOXES, int PARTS, int COLS, int STRIDE, bool ANY>
__device__ void boxes(const Map& map, float* tile, unsigned long long* bar, int n, long long x0, long long top) {
    const int tid = threadIdx.x;
    const unsigned b = smem(bar);
    if (tid == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(b) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(b),
                     "r"(unsigned(BOXES * COLS * 18 * 4)) : "memory");
        for (int i = 0; i < BOXES; ++i) {
            const int p = i / PARTS, q = i % PARTS;
            const int inner = p * n + int(x0) - (ANY ? ((p * n) & 3) : 0) + q * COLS;
            const int outer = int(top / 4);
            asm volatile(
                "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n"
                ::"r"(smem(tile + i * STRIDE)), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(b), "r"(inner),
                "r"(outer) : "memory");
        }
    }
    __syncthreads();
    wait_all(b);
}

#define TILE_ORDER                                                                  \
    const long long t = (long long)blockIdx.y * gridDim.x + blockIdx.x;             \
    const long long x0 = t / gridDim.y * 64, top = t % gridDim.y * 64 - 8;

#define BOX_FORM(NAME, BOXES, PARTS, COLS, STRIDE, ANY)                                          \
extern "C" __global__ void __launch_bounds__(256) NAME(const __grid_constant__ Map map, float* sink, \
                                                          int m, int n) {                          \
    __shared__ __align__(1024) float tile[SMEM_FLOATS];                                          \
    __shared__ __align__(8) unsigned long long bar;                                              \
    TILE_ORDER                                                                                   \
    boxes<BOXES, PARTS, COLS, STRIDE, ANY>(map, tile, &bar, n, x0, top);                         \
    if (tile[threadIdx.x] == 1234.5f) sink[0] = 1.f;                                             \
}
BOX_FORM(swz32, 8, 2, 32, 768, false)   // boxes 1024-byte aligned (the swizzle's unit)
BOX_FORM(flat32, 8, 2, 32, 768, false)
BOX_FORM(flat64, 4, 1, 64, 1152, false)
BOX_FORM(flat68, 4, 1, 68, 1248, true)
BOX_FORM(flat96, 4, 1, 96, 1728, true)

// One bulk copy a row of A (72 rows a tile, y in [0, m)): 272 bytes from the 16 bytes at or before A[y][x0]
// (LINES: 384 bytes from the 128 at or before it, three whole lines; SECTORS: 288 from the 32).
template <bool LINE, bool LINES = false, bool SECTORS = false>
__device__ void bulk_rows(const float* a, float* tile, unsigned long long* bar, int m, int n, long long x0, long long top) {
    constexpr unsigned BYTES = LINES ? 384 : SECTORS ? 288 : 272;
    const int tid = threadIdx.x;
    const unsigned b = smem(bar);
    const long long y_lo = top < 0 ? 0 : top, y_hi = top + 72 < m ? top + 72 : m;
    if (tid == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(b) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    if (tid == 0)
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(b),
                     "r"(unsigned((y_hi - y_lo) * BYTES)) : "memory");
    __syncthreads();
    const long long y = top + tid;
    if (tid < 72 && y >= y_lo && y < y_hi) {
        const long long first = y * n + x0, start = first & (LINES ? ~31LL : SECTORS ? ~7LL : ~3LL);  // on 16, 32, 128 B
        float* dst = tile + tid * (LINE ? 128 : 68) + (LINE && !LINES ? int(start & 31) : 0);
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %3, [%2];\n"
                     ::"r"(smem(dst)), "l"(a + start), "r"(b), "r"(BYTES) : "memory");
    }
    wait_all(b);
}

#define BULK_FORM(NAME, LINE, LINES, SECTORS)                                                                   \
extern "C" __global__ void __launch_bounds__(256) NAME(const float* __restrict__ a, float* sink, int m, int n) { \
    __shared__ __align__(1024) float tile[SMEM_FLOATS];                                          \
    __shared__ __align__(8) unsigned long long bar;                                              \
    TILE_ORDER                                                                                   \
    bulk_rows<LINE, LINES, SECTORS>(a, tile, &bar, m, n, x0, top);                                           \
    if (tile[threadIdx.x] == 1234.5f) sink[0] = 1.f;                                             \
}
BULK_FORM(bulk, false, false, false)
BULK_FORM(bulk_line, true, false, false)
BULK_FORM(bulk_sec, true, false, true)
BULK_FORM(bulk_lines3, true, true, false)

// The read roof: 72 rows x 64 columns a tile by the threads, float4 where the row allows, else floats.
extern "C" __global__ void __launch_bounds__(256) read4(const float* __restrict__ a, float* sink, int m, int n) {
    __shared__ __align__(1024) float tile[SMEM_FLOATS];
    TILE_ORDER
    float s = 0.f;
    for (int i = threadIdx.x; i < 72 * 64; i += 256) {
        const long long y = top + i / 64, x = x0 + i % 64;
        if (y >= 0 && y < m && x < n) s += __ldcs(a + y * n + x);
    }
    tile[threadIdx.x] = s;
    __syncthreads();
    if (tile[(threadIdx.x + 1) % 256] == 1234.5f) sink[0] = 1.f;
}
"""

FORMS = ("swz32", "flat32", "flat64", "flat68", "flat96", "bulk", "bulk_line", "bulk_sec", "bulk_lines3", "read4")
NEEDS_N4 = {"swz32", "flat32", "flat64"}  # boxes at pN + x0: on 16 bytes only where N % 4 == 0
BOX = {"swz32": (32, True), "flat32": (32, False), "flat64": (64, False), "flat68": (68, False), "flat96": (96, False)}


PROTOCOL = Protocol(warmup=3, batches=5, reps=20)  # the benchmark's (the L2 settled before each layout)


def time_ms(launch) -> float:
    """Median ms a call under the harness's own protocol and event timer (pmppbench.protocol.measure;
    call 2 of session 21 timed with plain CUDA events around 20 calls, 5 batches, no settling)."""
    return measure({"x": launch}, PROTOCOL)["x"].median_ms


def main(argv: list[str]) -> None:
    once = "--once" in argv
    dims = [int(x) for x in argv if not x.startswith("--")] or [8192, 8192, 8193, 8193]
    with tempfile.TemporaryDirectory() as tmp:  # pmppbench's NVRTC build (its options), loaded as a cubin
        src = Path(tmp) / "tma_loads.cu"
        src.write_text(SOURCE)
        cubin = Path(tmp) / "tma_loads.cubin"
        cubin.write_bytes(compile_unit("tma_loads", [], "sm_90", source=src, use_cache=False).cubin)
        module = cp.RawModule(path=str(cubin))
        kernels = {name: module.get_function(name) for name in FORMS}  # loaded while the file is there
    for m, n in zip(dims[::2], dims[1::2]):
        a = cp.random.random(m * n + 256, dtype=cp.float32)  # 1 KB past the end: the copies' last rows
        sink = cp.zeros(1, dtype=cp.float32)
        grid = ((n + 63) // 64, (m + 8 + 63) // 64)
        for name in FORMS:
            if name in NEEDS_N4 and n % 4:
                print(f"{m}x{n} {name:10s} skip (N % 4)")
                continue
            kernel = kernels[name]
            args: tuple
            if name in BOX:
                cols, swizzle = BOX[name]
                amap = tma.TensorMap("fp32", a.data.ptr, (4 * n, m // 4), (16 * n,), (cols, 18), swizzle=swizzle)
                args = (amap.arg, sink, np.int32(m), np.int32(n))
            else:
                args = (a, sink, np.int32(m), np.int32(n))

            def launch(kernel=kernel, args=args):
                kernel(grid, (256,), args)

            if once:
                launch()
                cp.cuda.Device().synchronize()
                continue
            ms = time_ms(launch)
            print(f"{m}x{n} {name:10s} {ms:8.4f} ms {4 * m * n / ms / 1e6:8.1f} GB/s", flush=True)
        if not once:  # the copy of the same 4MN bytes (read and written: twice the bytes moved)
            b = cp.empty_like(a)
            ms = time_ms(lambda: b.data.copy_from_device_async(a.data, 4 * m * n))
            print(f"{m}x{n} {'memcpy':10s} {ms:8.4f} ms {8 * m * n / ms / 1e6:8.1f} GB/s (read + written)", flush=True)
            del b


if __name__ == "__main__":
    main(sys.argv[1:])
