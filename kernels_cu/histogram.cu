// Histogram (PMPP chapter 9): the book's letter histogram (a-z in bins of four: BINS = 7) or
// a byte histogram (BINS = 256), one compile per BINS. Counters are unsigned int: 2^31 + 5
// bytes of one letter still fit. Every kernel adds into `histo`, which the host zeroes before
// every call (the variant's declared reset, inside the timed call, as CUB's call zeroes its own).
//
// The book's kernels index with `unsigned int`; here the index type I is a template argument,
// `int` (the course's) while every index fits in 31 bits and `long long` beyond, chosen per N
// on the host (pmppbench/workloads/histogram.py).

#ifndef BINS
#define BINS 7
#endif
#define BLOCK 256
#define CFACTOR 32  // PMPP 9.6: inputs per thread in the coarsened kernels
#define NONE 0xffffffffu  // a byte that is counted in no bin (not a lowercase letter)

__device__ __forceinline__ unsigned bin_of(unsigned char c) {
#if BINS == 256
    return c;
#else
    const unsigned pos = unsigned(c) - 'a';
    return pos < 26 ? pos / 4 : NONE;  // PMPP 9.1: a-d, e-h, ..., y-z
#endif
}

// PMPP Fig. 9.6: one thread per input, one atomicAdd on the global histogram per letter. Every
// thread of the grid that sees the same letter contends for one address in L2: the atomics
// serialize there (throughput = 1 / latency per address).
template <class I>
__global__ void global_atomic(const unsigned char* data, I length, unsigned* histo) {
    const I i = I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x);
    if (i < length) {
        const unsigned b = bin_of(data[i]);
        if (b != NONE) atomicAdd(&histo[b], 1u);
    }
}

// PMPP Fig. 9.9: privatization in global memory. Block b adds into its own copy
// (copies + b * BINS, contended only by its own threads), then adds its copy into the
// histogram. The book's copies are cleared before the launch; here each block clears its own
// copy after merging it, so the copies are zero again for the next call (zeroed once at setup).
template <class I>
__global__ void privatized(const unsigned char* data, I length, unsigned* histo, unsigned* copies) {
    const I i = I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x);
    unsigned* mine = copies + (unsigned long long)blockIdx.x * BINS;
    if (i < length) {
        const unsigned b = bin_of(data[i]);
        if (b != NONE) atomicAdd(&mine[b], 1u);
    }
    __syncthreads();
    for (unsigned bin = threadIdx.x; bin < BINS; bin += blockDim.x) {
        const unsigned v = mine[bin];
        if (v > 0) {
            atomicAdd(&histo[bin], v);
            mine[bin] = 0;
        }
    }
}

// PMPP Fig. 9.10: the private copy in shared memory: the contended atomics are shared-memory
// atomics (a few cycles), and each block sends at most BINS atomics to global memory.
template <class I>
__global__ void shared_private(const unsigned char* data, I length, unsigned* histo) {
    __shared__ unsigned s[BINS];
    for (unsigned bin = threadIdx.x; bin < BINS; bin += blockDim.x) s[bin] = 0u;
    __syncthreads();
    const I i = I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x);
    if (i < length) {
        const unsigned b = bin_of(data[i]);
        if (b != NONE) atomicAdd(&s[b], 1u);
    }
    __syncthreads();
    for (unsigned bin = threadIdx.x; bin < BINS; bin += blockDim.x) {
        const unsigned v = s[bin];
        if (v > 0) atomicAdd(&histo[bin], v);
    }
}

template <class I> __device__ __forceinline__ void merge(const unsigned* s, unsigned* histo) {
    __syncthreads();
    for (unsigned bin = threadIdx.x; bin < BINS; bin += blockDim.x) {
        const unsigned v = s[bin];
        if (v > 0) atomicAdd(&histo[bin], v);
    }
}

// PMPP Fig. 9.12: coarsening with contiguous partitions: thread t takes CFACTOR consecutive
// inputs. Fewer blocks, fewer merges; but at each step a warp's 32 loads are CFACTOR bytes
// apart: memory divergence (uncoalesced).
template <class I>
__global__ void coarsened_contiguous(const unsigned char* data, I length, unsigned* histo) {
    __shared__ unsigned s[BINS];
    for (unsigned bin = threadIdx.x; bin < BINS; bin += blockDim.x) s[bin] = 0u;
    __syncthreads();
    const I tid = I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x);
    const I end = min(length, (tid + 1) * I(CFACTOR));
    for (I i = tid * I(CFACTOR); i < end; ++i) {
        const unsigned b = bin_of(data[i]);
        if (b != NONE) atomicAdd(&s[b], 1u);
    }
    merge<I>(s, histo);
}

// PMPP Fig. 9.14: interleaved partitions: at each step the grid reads consecutive bytes
// (coalesced), striding by the whole grid.
template <class I>
__global__ void coarsened_interleaved(const unsigned char* data, I length, unsigned* histo) {
    __shared__ unsigned s[BINS];
    for (unsigned bin = threadIdx.x; bin < BINS; bin += blockDim.x) s[bin] = 0u;
    __syncthreads();
    const I stride = I(blockDim.x) * I(gridDim.x);
    for (I i = I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x); i < length; i += stride) {
        const unsigned b = bin_of(data[i]);
        if (b != NONE) atomicAdd(&s[b], 1u);
    }
    merge<I>(s, histo);
}

// PMPP Fig. 9.15: aggregation. A thread counts a run of equal bins in a register and sends one
// atomic per run: on text of one letter, one atomic per thread instead of one per input.
template <class I>
__global__ void aggregated(const unsigned char* data, I length, unsigned* histo) {
    __shared__ unsigned s[BINS];
    for (unsigned bin = threadIdx.x; bin < BINS; bin += blockDim.x) s[bin] = 0u;
    __syncthreads();
    unsigned accumulator = 0, prev = NONE;
    const I stride = I(blockDim.x) * I(gridDim.x);
    for (I i = I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x); i < length; i += stride) {
        const unsigned b = bin_of(data[i]);
        if (b == prev) {
            ++accumulator;
        } else {
            if (accumulator > 0) atomicAdd(&s[prev], accumulator);
            accumulator = b != NONE ? 1 : 0;
            prev = b;
        }
    }
    if (accumulator > 0) atomicAdd(&s[prev], accumulator);
    merge<I>(s, histo);
}

// ---- beyond the book -----------------------------------------------------------------------
// warp_vec: a fixed grid strides over the text in 16-byte loads. For 256 bins each thread
// aggregates the runs inside its 16 bytes, and each warp has its own sub-histogram in shared
// memory, so an atomic meets at most the 32 lanes of its own warp; the block then adds its
// warps' sub-histograms and sends one global atomic per non-zero bin. For 7 bins, counters in
// the byte lanes of a register (below) replace the atomics.
#define WARPS (BLOCK / 32)

__device__ __forceinline__ void add_run(unsigned* mine, unsigned& prev, unsigned& run, unsigned b) {
    if (b == prev) {
        ++run;
    } else {
        if (run > 0) atomicAdd(&mine[prev], run);
        run = b != NONE ? 1 : 0;
        prev = b;
    }
}

__device__ __forceinline__ void add_word(unsigned* mine, unsigned& prev, unsigned& run, unsigned w) {
#pragma unroll
    for (int k = 0; k < 4; ++k) add_run(mine, prev, run, bin_of((unsigned char)(w >> (8 * k))));
}

// merge_private (warp_vec's and thread_private's), and thread_private's loads and counters.
#include "histogram_private_parts.cuh"

#if BINS == 7
// warp_vec for the letter histogram: no atomic per byte at all. Byte k of a 64-bit register
// counts bin k (byte 7 counts the bytes that are no letter, and is dropped): each input byte
// adds 1 << (8 * bin). At most 192 bytes go into the register before it is flushed into 7
// 32-bit counters, so no byte lane passes 255. Four 16-byte loads are in flight per thread. The
// block adds its threads' counters in shared memory and sends 7 global atomics.
__device__ __forceinline__ unsigned long long count_word(unsigned w) {
    unsigned long long lanes = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        const unsigned pos = ((w >> (8 * k)) & 0xffu) - 'a';
        const unsigned b = pos < 26 ? pos / 4 : 7;
        lanes += 1ull << (8 * b);
    }
    return lanes;
}

__device__ __forceinline__ unsigned long long count_vec(uint4 v) {
    return count_word(v.x) + count_word(v.y) + count_word(v.z) + count_word(v.w);
}

__device__ __forceinline__ void flush(unsigned (&cnt)[7], unsigned long long lanes) {
#pragma unroll
    for (int b = 0; b < 7; ++b) cnt[b] += unsigned(lanes >> (8 * b)) & 0xffu;
}

extern "C" __global__ void __launch_bounds__(BLOCK) warp_vec(const unsigned char* __restrict__ data,
                                                             unsigned long long length, unsigned* __restrict__ histo) {
    __shared__ unsigned s[BINS];
    if (threadIdx.x < BINS) s[threadIdx.x] = 0u;
    __syncthreads();
    unsigned cnt[7] = {0, 0, 0, 0, 0, 0, 0};
    const uint4* vec = reinterpret_cast<const uint4*>(data);  // cudaMalloc'd: 256-byte aligned
    const unsigned long long nv = length / 16, stride = 1ull * gridDim.x * BLOCK;
    unsigned long long j = 1ull * blockIdx.x * BLOCK + threadIdx.x;
    while (j + 3 * stride < nv) {
        unsigned long long lanes = 0;
        for (int group = 0; group < 3 && j + 3 * stride < nv; ++group, j += 4 * stride) {  // <= 192 bytes
            const uint4 a = vec[j], b = vec[j + stride], c = vec[j + 2 * stride], d = vec[j + 3 * stride];
            lanes += count_vec(a) + count_vec(b) + count_vec(c) + count_vec(d);
        }
        flush(cnt, lanes);
    }
    for (; j < nv; j += stride) flush(cnt, count_vec(vec[j]));
    const unsigned long long tail = 16 * nv + 1ull * blockIdx.x * BLOCK + threadIdx.x;
    if (tail < length) flush(cnt, count_word(data[tail]));  // the length % 16 last bytes
    merge_private(cnt, s, histo);
}
#else
extern "C" __global__ void __launch_bounds__(BLOCK) warp_vec(const unsigned char* __restrict__ data,
                                                             unsigned long long length, unsigned* __restrict__ histo) {
    __shared__ unsigned s[WARPS * BINS];
    for (unsigned k = threadIdx.x; k < WARPS * BINS; k += BLOCK) s[k] = 0u;
    __syncthreads();
    unsigned* mine = s + (threadIdx.x / 32) * BINS;
    unsigned prev = NONE, run = 0;
    const uint4* vec = reinterpret_cast<const uint4*>(data);  // cudaMalloc'd: 256-byte aligned
    const unsigned long long nv = length / 16, stride = 1ull * gridDim.x * BLOCK;
    for (unsigned long long j = 1ull * blockIdx.x * BLOCK + threadIdx.x; j < nv; j += stride) {
        const uint4 v = vec[j];
        add_word(mine, prev, run, v.x);
        add_word(mine, prev, run, v.y);
        add_word(mine, prev, run, v.z);
        add_word(mine, prev, run, v.w);
    }
    const unsigned long long tail = 16 * nv + 1ull * blockIdx.x * BLOCK + threadIdx.x;
    if (tail < length) add_run(mine, prev, run, bin_of(data[tail]));  // the length % 16 last bytes
    if (run > 0) atomicAdd(&mine[prev], run);
    __syncthreads();
    for (unsigned bin = threadIdx.x; bin < BINS; bin += BLOCK) {
        unsigned v = 0;
        for (unsigned w = 0; w < WARPS; ++w) v += s[w * BINS + bin];
        if (v > 0) atomicAdd(&histo[bin], v);
    }
}
#endif

// thread_private, for both bin counts.
#include "histogram_private.cuh"


// read: the roof row. The same bytes read once in 16-byte loads on warp_vec's grid (8 blocks of
// BLOCK per SM), READ_VECS loads in flight per thread and the last, partial step's loads at once
// (load_if: zeros leave the XOR as it is), as thread_private reads; the XOR of all words, one
// atomicXor per warp, is what it leaves (checked bit for bit). With one load per step the roof
// itself would wait a DRAM latency per step, and be no roof (docs/histogram.md has the times).
#define READ_VECS 4  // 32 registers of loads: 8 blocks of 256 threads still fit (the launch bound)
extern "C" __global__ void __launch_bounds__(BLOCK, 2048 / BLOCK) read_xor(const unsigned char* __restrict__ data,
                                                                           unsigned long long length,
                                                                           unsigned* __restrict__ out) {
    const uint4* vec = reinterpret_cast<const uint4*>(data);
    const unsigned long long nv = length / 16, stride = 1ull * gridDim.x * BLOCK;
    constexpr int V = READ_VECS;
    unsigned acc = 0;
    unsigned long long j = 1ull * blockIdx.x * BLOCK + threadIdx.x;
    for (; j + (V - 1) * stride < nv; j += V * stride) {
        uint4 v[V];
#pragma unroll
        for (int k = 0; k < V; ++k) v[k] = load_now(vec + j + k * stride);
#pragma unroll
        for (int k = 0; k < V; ++k) acc ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
    }
    if (j < nv) {
        uint4 v[V];
#pragma unroll
        for (int k = 0; k < V; ++k) v[k] = load_if(vec + j + k * stride, j + k * stride < nv);
#pragma unroll
        for (int k = 0; k < V; ++k) acc ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
    }
    const unsigned long long tail = 16 * nv + 1ull * blockIdx.x * BLOCK + threadIdx.x;
    if (tail < length) acc ^= unsigned(data[tail]) << (8 * (tail % 4));  // a byte in its word's place
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) acc ^= __shfl_down_sync(0xffffffffu, acc, offset);
    if (threadIdx.x % 32 == 0) atomicXor(out, acc);
}

