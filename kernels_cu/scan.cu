// Prefix sum (PMPP chapter 11), float and int: the element type T is the define ELEM (float
// or int) and the kind the define EXCLUSIVE (0: y[i] = x[0] + ... + x[i]; 1: y[i] = x[0] + ...
// + x[i-1], y[0] = 0), one compile unit per pair. The book's section kernels are templates on
// the index type I: the course's `int` while every index fits in 31 bits, `long long` (the
// 64-bit path) beyond; the host picks per N (pmppbench/workloads/scan.py). The kernels beyond
// the book index with 64 bits throughout (a tile's base is a 64-bit product anyway).
//
// Every kind is computed as the inclusive scan of a section in shared memory or registers; the
// exclusive output is the same scan read one element to the left (the book's exclusive
// Kogge-Stone shifts the load instead; reading shifted keeps one scan for both kinds and the
// section's total where the three-kernel scan needs it).
//
// int sums wrap in two's complement; the CPU's int64 prefix sums wrapped to 32 bits are the
// reference for any order of additions.

#include "scan_tile.cuh"  // T, V, the warp scans, Tile, the status words

// ---- the book's section scans (the first kernel of the three) ----------------------------
// Each block scans one section of the input into the output and writes the section's total
// to S[blockIdx.x]; scan_sums then scans S and add_carries adds S's exclusive prefix to every
// section: PMPP 11.5's hierarchical scan, four passes over N elements (read and write here,
// read and write in add_carries).

// PMPP Fig. 11.3: Kogge-Stone. At stride s every thread t >= s adds XY[t - s]: log2(1024) = 10
// steps and N log2(SECTION) - (SECTION - 1) additions per section, against the N - 1 of a
// sequential scan; every step reads before any thread writes (the temp and the barrier
// between), so no thread reads a value already updated in the same step.
template <class I>
__global__ void __launch_bounds__(KS_SECTION) kogge_stone(const T* X, T* Y, T* S, I n) {
    __shared__ T XY[KS_SECTION];
    const unsigned t = threadIdx.x;
    const I i = I(blockIdx.x) * I(KS_SECTION) + I(t);
    XY[t] = i < n ? X[i] : T(0);
    for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
        __syncthreads();
        T temp;
        if (t >= stride) temp = XY[t] + XY[t - stride];
        __syncthreads();
        if (t >= stride) XY[t] = temp;
    }
#if EXCLUSIVE
    __syncthreads();  // the left neighbour's last step
    if (i < n) Y[i] = shifted(XY, t);
#else
    if (i < n) Y[i] = XY[t];
#endif
    if (t == blockDim.x - 1) S[blockIdx.x] = XY[t];
}

// PMPP Fig. 11.4: Brent-Kung. An up-sweep (a reduction tree: element 2^k s - 1 gathers its
// left subtree) and a down-sweep (each partial sum pushed to the position halfway to the
// next): 2 (SECTION - 1) - log2(SECTION) additions per section, work-efficient, in
// 2 log2(SECTION) - 1 steps with fewer active threads each.
//
// The barrier that starts each down-sweep step is what tests/test_scan.py removes from a copy
// of this file (that copy must fail). The first one, between the up-sweep and the down-sweep, is
// redundant here: with SECTION = 2 * blockDim only thread 0 works in the last up-sweep step
// and the first down-sweep step. From stride 16 on a down-sweep step spans two warps and the
// second warp, idle until then, reads its left partner before the first warp wrote it.
template <class I>
__global__ void __launch_bounds__(BK_THREADS) brent_kung(const T* X, T* Y, T* S, I n) {
    __shared__ T XY[BK_SECTION];
    const unsigned t = threadIdx.x;
    const I i = I(blockIdx.x) * I(BK_SECTION) + I(t);
    XY[t] = i < n ? X[i] : T(0);
    XY[t + BK_THREADS] = i + I(BK_THREADS) < n ? X[i + I(BK_THREADS)] : T(0);
    for (unsigned stride = 1; stride <= blockDim.x; stride *= 2) {
        __syncthreads();
        const unsigned index = (t + 1) * 2 * stride - 1;
        if (index < BK_SECTION) XY[index] += XY[index - stride];
    }
    for (unsigned stride = BK_SECTION / 4; stride > 0; stride /= 2) {
        __syncthreads();
        const unsigned index = (t + 1) * stride * 2 - 1;
        if (index + stride < BK_SECTION) XY[index + stride] += XY[index];
    }
    __syncthreads();
#if EXCLUSIVE
    if (i < n) Y[i] = shifted(XY, t);
    if (i + I(BK_THREADS) < n) Y[i + I(BK_THREADS)] = shifted(XY, t + BK_THREADS);
#else
    if (i < n) Y[i] = XY[t];
    if (i + I(BK_THREADS) < n) Y[i + I(BK_THREADS)] = XY[t + BK_THREADS];
#endif
    if (t == 0) S[blockIdx.x] = XY[BK_SECTION - 1];
}

// PMPP 11.4: the three-phase coarsened scan. The section (CO_FACTOR elements per thread) is
// loaded coalesced into shared memory; phase 1: each thread scans its own CO_FACTOR
// contiguous elements sequentially (no barrier, N - 1 additions' worth of work); phase 2: a
// Kogge-Stone scan over the 512 subsection ends only; phase 3: each thread adds its left
// neighbour's end to its other elements. Phase 1's accesses are CO_FACTOR words apart, an
// 8-way bank conflict the book accepts for the sake of the sequential scan.
template <class I>
__global__ void __launch_bounds__(CO_THREADS) coarsened(const T* X, T* Y, T* S, I n) {
    __shared__ T XY[CO_SECTION];
    const unsigned t = threadIdx.x;
    const I base = I(blockIdx.x) * I(CO_SECTION);
    for (unsigned j = t; j < CO_SECTION; j += blockDim.x) XY[j] = base + I(j) < n ? X[base + I(j)] : T(0);
    __syncthreads();
    const unsigned first = t * CO_FACTOR, last = first + CO_FACTOR - 1;
    for (unsigned j = first + 1; j < first + CO_FACTOR; ++j) XY[j] += XY[j - 1];  // a constant trip count: unrolled
    for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
        __syncthreads();
        T temp;
        if (t >= stride) temp = XY[last] + XY[last - stride * CO_FACTOR];
        __syncthreads();
        if (t >= stride) XY[last] = temp;
    }
    __syncthreads();
    if (t > 0) {
        const T carry = XY[first - 1];
        for (unsigned j = first; j < last; ++j) XY[j] += carry;
    }
    __syncthreads();
    for (unsigned j = t; j < CO_SECTION; j += blockDim.x) {
#if EXCLUSIVE
        if (base + I(j) < n) Y[base + I(j)] = shifted(XY, j);
#else
        if (base + I(j) < n) Y[base + I(j)] = XY[j];
#endif
    }
    if (t == blockDim.x - 1) S[blockIdx.x] = XY[CO_SECTION - 1];
}

// ---- the second and third kernels of the three ---------------------------------------------

// scan_sums: the section totals S[0 .. count) replaced by their exclusive prefix sums, by one
// block (PMPP 11.5's second kernel, for any count: chunks of SUMS_THREADS * SUMS_PER_THREAD
// totals in turn, each chunk's total carried into the next).
extern "C" __global__ void __launch_bounds__(SUMS_THREADS) scan_sums(T* S, unsigned long long count) {
    __shared__ T warps[SUMS_THREADS / 32];
    const unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;
    T carry = T(0);
    for (unsigned long long base = 0; base < count; base += SUMS_THREADS * SUMS_PER_THREAD) {
        const unsigned long long at = base + 1ull * t * SUMS_PER_THREAD;
        T v[SUMS_PER_THREAD];
        T run = T(0);
#pragma unroll
        for (int k = 0; k < SUMS_PER_THREAD; ++k) {
            v[k] = at + k < count ? S[at + k] : T(0);
            run += v[k];
        }
        const T inclusive = warp_inclusive(run);
        if (lane == 31) warps[warp] = inclusive;
        __syncthreads();
        T before = T(0), chunk = T(0);  // the warps to the left, and the whole chunk
        for (unsigned w = 0; w < SUMS_THREADS / 32; ++w) {
            const T s = warps[w];
            if (w < warp) before += s;
            chunk += s;
        }
        const T left = __shfl_up_sync(FULL, inclusive, 1);  // by every lane: a shuffle names all 32
        T prefix = lane ? carry + before + left : carry + before;
#pragma unroll
        for (int k = 0; k < SUMS_PER_THREAD; ++k) {
            if (at + k < count) S[at + k] = prefix;
            prefix += v[k];
        }
        carry += chunk;
        __syncthreads();  // warps[] is rewritten by the next chunk
    }
}

// add_carries: the third kernel. Section b + 1 gets carry[b + 1] (scan_sums' exclusive prefix)
// added to each element, in 16-byte vectors; section 0 has nothing to add and gets no block.
extern "C" __global__ void __launch_bounds__(ADD_THREADS) add_carries(T* Y, const T* carry, unsigned long long n,
                                                                     unsigned section) {
    const unsigned long long b = blockIdx.x + 1ull;
    const unsigned long long base = b * section;
    const T c = carry[b];
    for (unsigned j = threadIdx.x * 4; j < section; j += ADD_THREADS * 4) {
        const unsigned long long g = base + j;
        if (g + 4 <= n) {
            V v = *reinterpret_cast<const V*>(Y + g);
            v.x += c; v.y += c; v.z += c; v.w += c;
            *reinterpret_cast<V*>(Y + g) = v;
        } else {
            for (unsigned long long k = g; k < n && k < g + 4; ++k) Y[k] += c;
        }
    }
}

// ---- the register tile scan as a first kernel, and the book's single pass -------------------
#define HIER_ROWS 4  // hierarchical: 4096-element tiles
#define PASS_ROWS 8  // domino: 8192-element tiles

// hierarchical: the three-kernel scan with this tile scan as its first kernel (the section
// totals to S), then scan_sums and add_carries: the book's structure at its best, still four
// passes over the elements.
extern "C" __global__ void __launch_bounds__(FAST_THREADS) tile_scan(const T* __restrict__ in, T* __restrict__ out,
                                                                    T* __restrict__ S, unsigned long long n) {
    __shared__ T warps[FAST_WARPS];
    Tile<HIER_ROWS> tile;
    const unsigned long long base = 1ull * blockIdx.x * Tile<HIER_ROWS>::SIZE;
    tile.load(in, base, n);
    tile.scan(warps);
    tile.store(out, base, n, T(0), warps);
    if (threadIdx.x == 0) S[blockIdx.x] = Tile<HIER_ROWS>::warps_before(warps, FAST_WARPS);
}

// domino: PMPP 11.6's single-pass scan with adjacent synchronization. Each tile scans itself,
// then thread 0 waits for its predecessor's inclusive prefix, adds its own total and publishes
// its own: the prefix passes from tile to tile one at a time, a serial chain of one L2 round
// trip per tile on the critical path.
extern "C" __global__ void __launch_bounds__(FAST_THREADS) domino(const T* __restrict__ in, T* __restrict__ out,
                                                                 unsigned long long* __restrict__ status,
                                                                 unsigned long long* __restrict__ ticket,
                                                                 unsigned long long n, unsigned long long tiles) {
    __shared__ T warps[FAST_WARPS];
    __shared__ unsigned long long s_tile;
    __shared__ unsigned s_epoch;
    __shared__ T s_prefix;
    take_ticket(ticket, tiles, &s_tile, &s_epoch);
    const unsigned long long id = s_tile;
    const unsigned epoch = s_epoch;
    Tile<PASS_ROWS> tile;
    const unsigned long long base = id * Tile<PASS_ROWS>::SIZE;
    tile.load(in, base, n);
    tile.scan(warps);
    if (threadIdx.x == 0) {
        T prefix = T(0);
        if (id > 0) {
            unsigned long long word;
            do {
                word = peek(status, id - 1);
            } while (flag_of(word, epoch) != PREFIX);
            prefix = value_of(word);
        }
        publish(status, id, epoch, PREFIX, prefix + Tile<PASS_ROWS>::warps_before(warps, FAST_WARPS));
        s_prefix = prefix;
    }
    __syncthreads();
    tile.store(out, base, n, s_prefix, warps);
}

// The look-backs beyond the book (lookback, lookback_staged), and their device code.
#include "scan_lookback_parts.cuh"
#include "scan_lookback.cuh"
