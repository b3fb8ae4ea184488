// 1D stencil, y[i] = (x[i-R] + ... + x[i+R]) / (2R+1): the course lab's neighbourhood mean
// (the course notes, "Stencil"). Neighbours outside [0, n) count as 0 and the divisor stays 2R+1.
// x and y do not overlap.
//
// The radius R is a compile-time constant (the course's `-DRADIUS=2`): every radius
// is its own NVRTC module, so loops over the window have constant trip counts and the
// shared tiles have constant sizes.
//
// naive and shared are the course's kernels down to the instruction: each compiles to the
// SASS of the course's own listing (docs/measurement.md, "The cause, rung by rung", has the
// SASS and the timings). Three choices keep it so:
//  - Index type. Both are templates on their signed index type I, and the host picks the
//    instantiation per shape (pmppbench/workloads/stencil.py, index_type): `int`, the
//    course's, whenever every index the kernel forms fits -- n + B + 2R < 2^31 -- and
//    `long long` beyond, the 64-bit path. Signed, because the halo of the first block lies
//    left of x[0], at negative indices. In naive every one of the 2R+1 terms computes
//    j = i + d and tests 0 <= j < n: in 64 bits an add with carry and a two-instruction
//    compare per term, where 32 bits need one of each.
//  - The division. The course divides, `sum / float(2R+1)` (correctly rounded); with a
//    multiply by the rounded 1/(2R+1) instead, ptxas schedules naive's window loop
//    differently from the listing's, and slower.
//  - No __launch_bounds__(256) on shared: with it ptxas schedules the tile load and sum
//    differently from the listing's, and slower.
// coarsened keeps its own choices (one multiply per output, launch bounds).
//
// The three variants differ in where the 2R+1 reads of each output come from:
//   naive      2R+1 global reads per output (the L1/L2 caches absorb the overlap, if they can)
//   shared     the course's kernel: (B+2R)/B global reads, 2R+1 shared reads per output
//   coarsened  the memory-roof kernel: for R <= 4 a register window (4 outputs per thread,
//              256 threads, no shared memory); otherwise C consecutive outputs per thread
//              (128 threads) with a running sum over a shared tile filled by cp.async,
//              (2R+C)/C shared reads per output; float4 global loads, float4 streaming stores

#ifndef RADIUS
#define RADIUS 32  // the course's default build
#endif

constexpr int R = RADIUS;
constexpr int WINDOW = 2 * R + 1;
constexpr float INV_WINDOW = 1.0f / WINDOW;  // coarsened: one multiply per output instead of a division
constexpr int B = 256;  // naive and shared: threads per block = outputs per block

static_assert(R >= 0, "RADIUS must be >= 0");
// The course's tile is static shared memory, which CUDA caps at 48 KB per block.
static_assert((B + 2 * R) * sizeof(float) <= 48 * 1024, "shared: tile of B + 2R floats exceeds 48 KB");

// naive: one thread per output; every neighbour is a bounds-checked global read. Adjacent
// threads read overlapping windows, so most of the 2R+1 reads hit L1, but each is still a
// load instruction and a trip through the L1 pipeline.
template <class I>
__global__ void __launch_bounds__(B)
naive(const float* x, float* y, I n) {
    const I i = I(blockIdx.x) * B + I(threadIdx.x);
    if (i >= n) return;  // no barrier in this kernel, so leaving early is safe
    float sum = 0.0f;
    for (int d = -R; d <= R; ++d) {
        const I j = i + d;
        if (j >= 0 && j < n) sum += x[j];  // a missing neighbour adds nothing: it counts as 0
    }
    y[i] = sum / float(WINDOW);
}

// shared: the course's kernel. Block b owns outputs [b*B, b*B + B) and needs inputs
// [b*B - R, b*B + B + R): B + 2R of them, R of halo on each side. The block loads them once
// into shared memory with the strided `j += B` loop (256 threads, 256 + 2R slots), zero-filling
// what lies outside the array, so the sums below need no bounds checks. One barrier, reached
// by every thread (also those of the last block with no output of their own: they load too),
// separates loading from reading. The tile is never overwritten, so no second barrier.
// Launched with B threads, like naive, but declared without __launch_bounds__ (see above).
template <class I>
__global__ void shared(const float* x, float* y, I n) {
    __shared__ float tile[B + 2 * R];  // tile[j] = x[base - R + j]
    const int t = threadIdx.x;
    const I base = I(blockIdx.x) * B;
    for (int j = t; j < B + 2 * R; j += B) {
        const I g = base + j - R;  // shared slot -> global input
        tile[j] = (g >= 0 && g < n) ? x[g] : 0.0f;
    }
    __syncthreads();  // every input of the block is in the tile
    const I i = base + t;
    if (i < n) {
        float sum = 0.0f;
        for (int d = 0; d < WINDOW; ++d) sum += tile[t + d];  // tile[t + d] = x[i - R + d]
        y[i] = sum / float(WINDOW);
    }
}

// ---- coarsened ---------------------------------------------------------------------------
//
// The goal is the memory roof: a device-to-device memcpy of the same 8 bytes per output,
// timed in the same run (the `memcpy` row). Each choice below was measured against the
// alternatives in studies/memory_roof/stencil.cu (docs/stencil.md, "What closed the gap"):
//
//  1. Small tiles, many of them in flight. C = 9 outputs per thread and 128 threads make a
//     block of 1152 outputs, 10 KB of shared memory and 32 registers: 16 blocks (2048
//     threads) fit on an SM, and the last partial wave is a small part of the run.
//  2. Few instructions per output. When the data sits in L2, instructions and their latency
//     limit the kernel, not DRAM. A block that lies wholly inside x and y (all but the first
//     and last) loads and stores without the per-float4 64-bit bounds tests, and for R > 4
//     each thread's first window is built from C-element chunk sums of its neighbours
//     (below) instead of a serial 2R+1-term sum.
//  3. Streaming stores (st.global.cs, `__stcs`): y is written once and never read back by
//     this kernel, so its lines are marked evict-first in L2 instead of displacing x.
//  4. For R <= 4 no shared memory at all. Each thread makes 4 outputs (one float4) from the
//     float4s x[4g - HALO .. 4g + 3 + HALO]: 3 16-byte loads, two of which the neighbouring
//     threads load too, so they come from L1. No barrier, no stage, no second shared round
//     trip. For larger R the L1 traffic grows as 2*HALO/4 + 1 loads per 4 outputs (17 at
//     R = 32), more than L1 serves at DRAM speed, so the shared tile stays. This path runs
//     256 threads per block (REGISTER_THREADS).
//  5. cp.async for the shared tile. An interior block's threads copy their float4s
//     global -> shared with cp.async.cg: no register round trip (a load, its wait, a shared
//     store), the line cached in L2 only. Same tile, same sums, the same bits. Two block
//     barriers stay: they are not the cost (warp shuffles and __syncwarp in their place
//     measured the same), and a second tile per block in flight during the first one's sums
//     loses to one tile per block.
//
// Why a running sum over a shared tile: `shared` stays far from the memory roof at R = 32
// because every output still performs 65 shared-memory reads, and shared memory delivers 32
// floats per clock per SM -- at 2^24 outputs on an H200 about 4x the time the 8 bytes per
// output need at DRAM speed (PMPP 5.1's arithmetic with the device's peaks). The fix is register reuse: thread t computes C consecutive
// outputs, the first with the full window sum, each next one from the previous by adding the
// element that enters the window and subtracting the one that leaves. Shared reads per output
// fall from 2R+1 to about (2R+C)/C, plus the staged output.
//
// Shared-tile path (R > 4). A block (THREADS threads, OUT = THREADS*C outputs) runs:
//   1. load   x[base - HALO, base + OUT + HALO) into `tile`, 16 bytes at a time: by cp.async
//             inside x (every copy of a thread in flight before it waits), through registers
//             with zero-fill in the first and last blocks
//   2. sum    thread t's outputs are tile-consecutive, base + t*C + c; they go to `stage`
//   3. store  `stage` -> y with float4 streaming stores, coalesced again
// HALO is R rounded up to a multiple of 4, so `base - HALO` is float4-aligned (OUT is a
// multiple of 4 too); the extra HALO - R slots on each side are loaded but never summed.
//
// The first window from chunks: thread t's chunk is the sum of tile[s .. s+C-1] (s = t*C +
// HALO - R), the elements that later leave its window. With Q = (2R+1)/C whole chunks in a
// window (Q >= 2), thread t's first window is its own chunk plus the chunks of threads t+1
// .. t+Q-1, plus the last (2R+1) - QC elements. The last Q-1 threads of the block need chunks
// past the block's own; GHOSTS extra chunk sums over the right halo provide them. One more
// barrier separates writing the chunk sums from reading them.
//
// Bank conflicts: lane t of a warp reads tile[t*C + k] and writes stage[t*C + c]. With C odd,
// t*C mod 32 is distinct for the 32 lanes, so every access is conflict-free (so are the
// ghost chunks, and chunk[t + j] is consecutive).
//
// Rounding: the running sum adds and subtracts in a different order from a direct sum, and
// its error grows with c; pmppbench/workloads/stencil.py derives the bound the check uses.

constexpr int HALO = (R + 3) / 4 * 4;
constexpr int REGISTER_MAX_R = 4;  // up to here the register window (HALO = 4: 3 float4s)

#include "vector_io.cuh"  // load4, store4, copy16_async, wait_async_copies

// coarsened<THREADS, C, REGISTER_THREADS>: THREADS threads of C outputs each on the shared-tile
// path (R > 4), REGISTER_THREADS threads of 4 outputs each on the register path (R <= 4); the
// host launches the block size of the path its radius compiles (pmppbench/workloads/stencil.py).

template <int THREADS, int C, int REGISTER_THREADS>
__global__ void __launch_bounds__(R <= REGISTER_MAX_R ? REGISTER_THREADS : THREADS)
coarsened(const float* __restrict__ x, float* __restrict__ y, long long n) {
    if constexpr (R <= REGISTER_MAX_R) {
        // Register window: thread g makes y[4g .. 4g+3], each a direct sum in naive's order.
        constexpr int K4 = 2 * HALO / 4 + 1;  // float4s covering x[4g - HALO .. 4g + 3 + HALO]
        const long long g = (long long)blockIdx.x * REGISTER_THREADS + threadIdx.x;
        if (4 * g >= n) return;  // no barrier in this path, so leaving early is safe
        const long long first = 4 * g - HALO;
        float4 w[K4];
        if (first >= 0 && first + 4 * K4 <= n) {  // interior: no bounds to test
#pragma unroll
            for (int j = 0; j < K4; ++j) w[j] = __ldg(reinterpret_cast<const float4*>(x + first) + j);
        } else {
#pragma unroll
            for (int j = 0; j < K4; ++j) w[j] = load4(x, first + 4 * j, n);
        }
        const float* f = reinterpret_cast<const float*>(w);  // f[k] = x[first + k]
        float out[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            float sum = 0.0f;
#pragma unroll
            for (int d = 0; d < WINDOW; ++d) sum += f[HALO - R + e + d];  // x[4g + e - R + d]
            out[e] = sum * INV_WINDOW;
        }
        store4(y, 4 * g, n, make_float4(out[0], out[1], out[2], out[3]));
    } else {
        constexpr int OUT = THREADS * C;     // outputs per block
        constexpr int IN = OUT + 2 * HALO;   // inputs per block, halo included
        constexpr int LOADS = (IN / 4 + THREADS - 1) / THREADS;   // float4 loads per thread
        constexpr int STORES = (OUT / 4 + THREADS - 1) / THREADS; // float4 stores per thread
        constexpr int Q = WINDOW / C;        // whole chunks of C in one window
        constexpr bool CHUNKED = Q >= 2;     // else the first window is summed directly
        constexpr int GHOSTS = CHUNKED ? Q - 1 : 0;
        static_assert(C % 2 == 1, "C must be odd for conflict-free strided shared accesses");
        static_assert(OUT % 4 == 0, "THREADS * C must be a multiple of 4 for float4 alignment");
        static_assert((IN + OUT + (CHUNKED ? THREADS + GHOSTS : 0)) * sizeof(float) <= 48 * 1024,
                      "coarsened: tile + stage + chunk sums exceed 48 KB");

        __shared__ __align__(16) float tile[IN];    // tile[k] = x[base - HALO + k]
        __shared__ __align__(16) float stage[OUT];  // stage[o] = y[base + o]
        __shared__ float chunk[CHUNKED ? THREADS + GHOSTS : 1];  // chunk[j]: sum of tile[jC + HALO - R], C of them
        const int t = threadIdx.x;
        const long long base = (long long)blockIdx.x * OUT;

        // 1. load: an interior block copies its float4s global -> shared with cp.async, all of
        //    them in flight before the thread waits; the first and last blocks load through
        //    registers with the zero-fill of load4, all loads before the first shared store.
        if (base - HALO >= 0 && base + OUT + HALO <= n) {  // interior: no bounds to test
            const float* src = x + (base - HALO);
#pragma unroll
            for (int k = 0; k < LOADS; ++k) {
                int q = t + k * THREADS;  // float4 slot in the tile
                if (q < IN / 4) copy16_async(tile + 4 * q, src + 4 * q);
            }
            wait_async_copies();  // this thread's copies have landed
        } else {
            float4 v[LOADS];
#pragma unroll
            for (int k = 0; k < LOADS; ++k) {
                int q = t + k * THREADS;
                if (q < IN / 4) v[k] = load4(x, base - HALO + 4LL * q, n);
            }
#pragma unroll
            for (int k = 0; k < LOADS; ++k) {
                int q = t + k * THREADS;
                if (q < IN / 4) reinterpret_cast<float4*>(tile)[q] = v[k];
            }
        }
        __syncthreads();  // the tile is complete: every thread's copies and stores are visible

        // 2. sum: output o = t*C + c needs x[base + o - R + d] = tile[s + c + d], d = 0..2R.
        //    The elements that later leave the window, tile[s .. s+C-2], stay in registers.
        const int s = t * C + (HALO - R);
        float leaving[C - 1];
#pragma unroll
        for (int d = 0; d < C - 1; ++d) leaving[d] = tile[s + d];
        float sum = 0.0f;
        if constexpr (CHUNKED) {
            float own = 0.0f;
#pragma unroll
            for (int d = 0; d < C - 1; ++d) own += leaving[d];
            own += tile[s + C - 1];
            chunk[t] = own;
            for (int j = t; j < GHOSTS; j += THREADS) {  // chunks THREADS .. THREADS+GHOSTS-1
                const int sg = (THREADS + j) * C + (HALO - R);
                float ghost = 0.0f;
#pragma unroll
                for (int d = 0; d < C; ++d) ghost += tile[sg + d];
                chunk[THREADS + j] = ghost;
            }
            __syncthreads();  // every chunk sum is written
            sum = own;
            for (int j = 1; j < Q; ++j) sum += chunk[t + j];
#pragma unroll
            for (int d = Q * C; d < WINDOW; ++d) sum += tile[s + d];
        } else {
#pragma unroll
            for (int d = 0; d < WINDOW && d < C - 1; ++d) sum += leaving[d];
            for (int d = C - 1; d < WINDOW; ++d) sum += tile[s + d];
        }
        stage[t * C] = sum * INV_WINDOW;
#pragma unroll
        for (int c = 1; c < C; ++c) {
            sum += tile[s + c + 2 * R] - leaving[c - 1];  // x[base+o+R] enters, x[base+o-R-1] leaves
            stage[t * C + c] = sum * INV_WINDOW;
        }
        __syncthreads();  // every output of the block is staged

        // 3. store: coalesced float4 streaming stores; outputs at or past n are not written.
        const float4* staged = reinterpret_cast<const float4*>(stage);
        if (base + OUT <= n) {
#pragma unroll
            for (int k = 0; k < STORES; ++k) {
                int q = t + k * THREADS;
                if (q < OUT / 4) __stcs(reinterpret_cast<float4*>(y + base) + q, staged[q]);
            }
        } else {
#pragma unroll
            for (int k = 0; k < STORES; ++k) {
                int q = t + k * THREADS;
                if (q < OUT / 4) store4(y, base + 4LL * q, n, staged[q]);
            }
        }
    }
}
