// thread_private for both bin counts (beyond the book): included by kernels_cu/histogram.cu after
// BINS and BLOCK; its loads, counters and merge are histogram_private_parts.cuh's.
#ifndef HISTOGRAM_PRIVATE_CUH
#define HISTOGRAM_PRIVATE_CUH

#include "histogram_private_parts.cuh"

// ---- thread_private: privatization down to the thread (PMPP 9.3, one level further) ----------
// Each thread keeps its own histogram, so the inner loop has no atomics and no contention on any
// input (one letter or spread out alike); the warp, then the block, adds the private copies and
// the block sends one global atomic per bin. A fixed grid strides over the text in 16-byte loads,
// PRIVATE_VECS of them in flight per thread (Little's law: the bytes in flight per SM must cover
// DRAM's latency at its bandwidth). The instructions per byte are the cost: at the read roof the
// H200 issues about 9 warp instructions' worth per byte over the whole chip (4 per clock per SM),
// and only about 4.5 of them on the integer pipe (half a warp per clock), so the per-byte work
// stays well under that: about 5 instructions per byte for 7 bins and 5.5 for 256 (the SASS).
#define PRIVATE_VECS 8  // 16-byte loads in flight per thread and loop step, both bin counts

#if BINS == 7
// 7 bins: a thread's private histogram lives in bit-sliced counters (count_sliced: each byte
// becomes a one-hot byte, 16 words at a time go through a tree of carry-save adders and only its
// top carry is popcounted), about 64 instructions per 16 bytes in the sm_90 SASS of the loop; the
// nibble counters before it (count_letters: eight 4-bit counters in one register, a funnel shift
// per byte, 78 per 16 bytes) still count the tail's vectors. Most of either is on the integer
// (ALU) pipe, half a warp instruction per clock, which is what the count per byte is weighed
// against (docs/histogram.md has the times). Both counters: histogram_private_parts.cuh.
#define PRIVATE_THREADS BLOCK
#define PRIVATE_MIN_BLOCKS 5  // blocks per SM: the grid (pmppbench/workloads/histogram.py) and the register cap
// The other ways to keep DRAM busy while the threads count, measured beside this loop (docs/histogram.md
// has the times that chose it): each warp asking L2 for its lines steps ahead, and a
// ring of loads refilled as each vector is taken for counting, are studies/forms/histogram_private.cu's.

// The grid is PRIVATE_MIN_BLOCKS blocks per SM, and the launch bound caps the registers so that
// they all fit at once (no second, partial wave).
extern "C" __global__ void __launch_bounds__(PRIVATE_THREADS, PRIVATE_MIN_BLOCKS)
thread_private(const unsigned char* __restrict__ data, unsigned long long length, unsigned* __restrict__ histo) {
    __shared__ unsigned s[BINS];
    if (threadIdx.x < BINS) s[threadIdx.x] = 0u;
    __syncthreads();
    unsigned cnt[7] = {0, 0, 0, 0, 0, 0, 0};
    const uint4* vec = reinterpret_cast<const uint4*>(data);  // cudaMalloc'd: 256-byte aligned
    const unsigned long long nv = length / 16, stride = 1ull * gridDim.x * PRIVATE_THREADS;
    unsigned long long j = 1ull * blockIdx.x * PRIVATE_THREADS + threadIdx.x;
    constexpr int V = PRIVATE_VECS, STEPS = 15 / V;  // a byte lane takes 16 per vector: at most 15 vectors
    static_assert(V >= 1 && V <= 15, "PRIVATE_VECS: 1 to 15 vectors between two flushes of the byte lanes");
    static_assert(V % 4 == 0, "count_sliced counts 4 vectors at a time");
    Sliced sliced;
    while (j + (V - 1) * stride < nv) {
        unsigned even = 0, odd = 0;
        for (int step = 0; step < STEPS && j + (V - 1) * stride < nv; ++step, j += V * stride) {
            uint4 v[V];
#pragma unroll
            for (int k = 0; k < V; ++k) v[k] = load_now(vec + j + k * stride);  // all loads first
#pragma unroll
            for (int k = 0; k < V; k += 4) count_sliced(v + k, sliced, cnt);
        }
        add_lanes(cnt, even, odd);
    }
    finish_sliced(sliced, cnt);
    for (; j < nv; j += stride) {
        unsigned even = 0, odd = 0;
        count_letters(vec[j], even, odd);
        add_lanes(cnt, even, odd);
    }
    count_last_bytes(data, length, 1ull * blockIdx.x * PRIVATE_THREADS + threadIdx.x, cnt);
    merge_private(cnt, s, histo);
}
#else
// 256 bins: a thread's private histogram is 256 16-bit counters in shared memory, laid out so
// that the 32 lanes of a warp always touch 32 different banks, whatever bytes they read: each
// lane owns one word of every 32 in its warp's 16 KB (its column). PRIVATE_WARPS warps
// per block, 16 KB each. A vector of 16 equal bytes (a run, PMPP 9.5's aggregation) adds 16 at
// once. A counter holds 65535, so a thread counts at most CHUNK vectors (65520 bytes) between
// merges. The counters (count_vec and below): histogram_private_parts.cuh.
#define PRIVATE_WARPS 3  // 48 KB of shared memory: 4 blocks (12 warps) per SM
#define PRIVATE_THREADS (PRIVATE_WARPS * 32)
#define CHUNK 4095ull  // vectors per thread between merges: 16 * 4095 < 65536

extern "C" __global__ void __launch_bounds__(PRIVATE_THREADS)
thread_private(const unsigned char* __restrict__ data, unsigned long long length, unsigned* __restrict__ histo) {
    __shared__ __align__(16) unsigned s[PRIVATE_WARPS * 128 * 32];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    unsigned* region = s + warp * 4096;  // this warp's 16 KB
    unsigned char* col = reinterpret_cast<unsigned char*>(region + lane);  // word (bin / 2) * 32 + lane
    const uint4* vec = reinterpret_cast<const uint4*>(data);  // cudaMalloc'd: 256-byte aligned
    const unsigned long long nv = length / 16, stride = 1ull * gridDim.x * PRIVATE_THREADS;
    const unsigned long long me = 1ull * blockIdx.x * PRIVATE_THREADS + threadIdx.x;
    constexpr int V = PRIVATE_VECS;
    static_assert(V >= 1 && V <= 32, "PRIVATE_VECS: 16-byte loads in flight per thread");
    // Every thread of the block runs the same chunks (the bounds are block-uniform): the merge's
    // barriers are reached by all.
    for (unsigned long long base = 0; base == 0 || base < nv; base += CHUNK * stride) {
        for (int p = 0; p < 128; ++p) region[p * 32 + lane] = 0u;
        __syncwarp();
        if (base == 0) {
            const unsigned long long tail = 16 * nv + me;
            if (tail < length) count_byte(col, data[tail]);  // one of the length % 16 last bytes
        }
        const unsigned long long end = min(nv, base + CHUNK * stride);
        unsigned long long j = base + me;
        for (; j + (V - 1) * stride < end; j += V * stride) {
            uint4 v[V];
#pragma unroll
            for (int k = 0; k < V; ++k) v[k] = load_now(vec + j + k * stride);  // all loads first
#pragma unroll
            for (int k = 0; k < V; ++k) count_vec(col, v[k]);
        }
        if (j < end) {  // fewer than V vectors left: one step, its loads at once (load_if), the 256-bin default
            uint4 v[V];
#pragma unroll
            for (int k = 0; k < V; ++k) v[k] = load_if(vec + j + k * stride, j + k * stride < end);
#pragma unroll
            for (int k = 0; k < V; ++k)
                if (j + k * stride < end) count_vec(col, v[k]);
        }
        __syncwarp();
        // The warp adds its 32 columns: lane l takes words p = l, l + 32, l + 64, l + 96 (bins p
        // and p + 128), reading column (l + i) % 32 at step i, so the 32 lanes read 32 banks.
        unsigned lo[4], hi[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            lo[q] = hi[q] = 0u;
            const unsigned* row = region + (lane + 32 * q) * 32;
            for (int i = 0; i < 32; ++i) {
                const unsigned v = row[(lane + i) % 32];
                lo[q] += v & 0xffffu;
                hi[q] += v >> 16;
            }
        }
        __syncwarp();
#pragma unroll
        for (int q = 0; q < 4; ++q) {  // the warp's totals over its own region's first 256 words
            region[lane + 32 * q] = lo[q];
            region[lane + 32 * q + 128] = hi[q];
        }
        __syncthreads();
        for (unsigned bin = threadIdx.x; bin < BINS; bin += PRIVATE_THREADS) {
            unsigned v = 0;
            for (unsigned w = 0; w < PRIVATE_WARPS; ++w) v += s[w * 4096 + bin];
            if (v > 0) atomicAdd(&histo[bin], v);
        }
        __syncthreads();
    }
}
#endif

#endif  // HISTOGRAM_PRIVATE_CUH
