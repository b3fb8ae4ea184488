// thread_private's study forms (studies/forms/histogram_forms.py, the workload `histogram_private`):
// kernels_cu/histogram_private.cuh's thread_private with every knob the measurements of
// docs/histogram.md turned, and bulk_private (sm_90: the text brought by the copy engine), which no table
// runs. Each knob's default is the shipped kernel's choice, so a build without defines is the
// shipped code. BINS 7: PRIVATE_VECS (16-byte loads in flight per thread), PRIVATE_MIN_BLOCKS (the
// launch bound), PRIVATE_SLICED (0: the nibble counters), PRIVATE_AHEAD (steps asked of L2 ahead),
// PRIVATE_RING (a ring of loads; PRIVATE_RING_ORDER), PRIVATE_ADD_PTX, PRIVATE_SERIAL_TAIL;
// bulk_private: BULK_WARPS, BULK_STAGES, BULK_VECS, BULK_MIN_BLOCKS. BINS 256: PRIVATE_WARPS,
// PRIVATE_RUNS, PRIVATE_ATOMIC (0: load, add and store), PRIVATE_VECS, PRIVATE_SERIAL_TAIL.
// The loads, the counters and the block's merge are the shipped ones, from
// kernels_cu/histogram_private_parts.cuh (which brings no shipped kernel along): PRIVATE_ADD_PTX,
// PRIVATE_ATOMIC and PRIVATE_RUNS are its template parameters.

#include "mbarrier.cuh"  // bulk_private's ring (sm_90)

#ifndef BINS
#define BINS 7
#endif
#ifndef BLOCK
#define BLOCK 256
#endif
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
#ifndef PRIVATE_SERIAL_TAIL  // 1: the last, partial step one vector at a time; 0: its loads at once (load_if)
#if BINS == 7
#define PRIVATE_SERIAL_TAIL 1
#else
#define PRIVATE_SERIAL_TAIL 0
#endif
#endif
#ifndef PRIVATE_VECS  // 16-byte loads in flight per thread and loop step (studies/histogram_private.py)
#if BINS == 7
#define PRIVATE_VECS 8  // 16-byte loads per step and thread (the ring's slots with PRIVATE_RING)
#else
#define PRIVATE_VECS 8  // only 12 warps per SM (48 KB of shared memory per 3): 48 KB in flight per SM
#endif
#endif

#if BINS == 7
// 7 bins: a thread's private histogram lives in bit-sliced counters (PRIVATE_SLICED, count_sliced:
// each byte becomes a one-hot byte, 16 words at a time go through a tree of carry-save adders and
// only its top carry is popcounted), about 64 instructions per 16 bytes in the sm_90 SASS of the
// loop; the nibble counters before it (count_letters: eight 4-bit counters in one register, a
// funnel shift per byte, 78 per 16 bytes) still count the tail's vectors. Most of either is on the
// integer (ALU) pipe, half a warp instruction per clock, which is what the count per byte is
// weighed against (docs/histogram.md has the times).
#define PRIVATE_THREADS BLOCK
#ifndef PRIVATE_MIN_BLOCKS
#define PRIVATE_MIN_BLOCKS 5  // blocks per SM: the grid (pmppbench/workloads/histogram.py) and the register cap
#endif
// Two ways to keep DRAM busy while the threads count (studies/histogram_private.py times both;
// docs/histogram.md has the times that chose the defaults):
// - PRIVATE_AHEAD (the first loop, PRIVATE_RING 0: a step's loads, then its counts, the
//   tail per PRIVATE_SERIAL_TAIL): each warp asks L2 for its lines PRIVATE_AHEAD steps on
//   (prefetch.global.L2, one line per lane per step), so DRAM is fed by requests no warp waits
//   on and a step's loads (and the tail's, one after the other) find their lines in L2. 0: none.
// - PRIVATE_RING 1: a ring of PRIVATE_VECS loads, a slot refilled for the next step as soon as its
//   vector is taken for counting (software pipelining), each thread's partial step first, as
//   zeros in the ring's empty slots, so no tail of loads one after the other and one copy of the
//   counting code. PRIVATE_RING_ORDER makes each refill's address depend on the count so far;
//   without it ptxas hoists a step's refills above its counts and spills 2 V vectors.
#ifndef PRIVATE_RING
#define PRIVATE_RING 0
#endif
#ifndef PRIVATE_RING_ORDER
#define PRIVATE_RING_ORDER 1
#endif
#ifndef PRIVATE_AHEAD
#define PRIVATE_AHEAD 0
#endif
#ifndef PRIVATE_ADD_PTX
#define PRIVATE_ADD_PTX 1  // letter_bits' add as PTX; 0: the plain add
#endif
#ifndef PRIVATE_SLICED
#define PRIVATE_SLICED 1  // the main loop's vectors by count_sliced (PRIVATE_VECS a multiple of 4); 0: count_letters
#endif

__device__ __forceinline__ void prefetch_line(const void* p) {
#ifdef __CUDA_ARCH__
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#endif
}

// A ring slot's load for the next step, under a predicate that is false only on the thread's last
// step, whose loads nothing reads: no zeros to write (load_if's), so no extra instruction but the
// predicate. On the CPU (tests/test_histogram.py) a slot that was not loaded holds 'a's, so a count
// of one would show.
__device__ __forceinline__ uint4 load_unless_last(const uint4* p, bool ok) {
#ifdef __CUDA_ARCH__
    uint4 v;
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %5, 0;\n\t"
                 "@p ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];\n\t}"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "r"(unsigned(ok)));
    return v;
#else
    return ok ? *p : make_uint4(0x61616161u, 0x61616161u, 0x61616161u, 0x61616161u);
#endif
}

// One thread's vectors me, me + stride, ... (below nv) into cnt, through the ring (PRIVATE_RING):
// `first` = mine % V of them in the first step (its other slots zeros, no letter), then `steps`
// steps of V. Step s counts the ring and refills it with step s + 1's vectors.
__device__ __forceinline__ void count_thread(const uint4* __restrict__ vec, unsigned long long nv,
                                             unsigned long long me, unsigned long long stride, unsigned (&cnt)[7]) {
    constexpr int V = PRIVATE_VECS;
    static_assert(V >= 1 && V <= 15, "PRIVATE_VECS: 1 to 15 vectors between two flushes of the byte lanes");
    const unsigned long long mine = me < nv ? (nv - 1 - me) / stride + 1 : 0;
    const unsigned first = unsigned(mine % V);
    unsigned long long steps = mine / V;
    const uint4* p = vec + me;
    uint4 v[V];
#pragma unroll
    for (int k = 0; k < V; ++k) v[k] = load_if(p + k * stride, unsigned(k) < first);
    p += first * stride;
    if (first == 0) {  // no partial step: the first full one fills the ring
        if (steps == 0) return;
#pragma unroll
        for (int k = 0; k < V; ++k) v[k] = load_now(p + k * stride);
        p += V * stride;
        --steps;
    }
    for (;;) {
        const bool more = steps > 0;
        unsigned even = 0, odd = 0;
#pragma unroll
        for (int k = 0; k < V; ++k) {
            const uint4 x = v[k];
#if PRIVATE_RING_ORDER
            // The refill's address depends on the count so far (its bit 31 is 0: a byte lane holds at most
            // 16 * 7 here), so the compiler cannot hoist all of a step's loads above its counts, which
            // would hold 2 V vectors in registers at once.
            count_letters<PRIVATE_ADD_PTX>(x, even, odd);
            v[k] = load_unless_last(p + k * stride + (k < V - 1 ? even >> 31 : 0u), more);
#else
            v[k] = load_unless_last(p + k * stride, more);
            count_letters<PRIVATE_ADD_PTX>(x, even, odd);
#endif
        }
        add_lanes(cnt, even, odd);
        if (!more) break;
        --steps;
        p += V * stride;
    }
}

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
#if PRIVATE_RING
    count_thread(vec, nv, j, stride, cnt);
#else
    constexpr int V = PRIVATE_VECS, STEPS = 15 / V;  // a byte lane takes 16 per vector: at most 15 vectors
    static_assert(V >= 1 && V <= 15, "PRIVATE_VECS: 1 to 15 vectors between two flushes of the byte lanes");
    static_assert(!PRIVATE_SLICED || V % 4 == 0, "PRIVATE_SLICED counts 4 vectors at a time");
#if PRIVATE_SLICED
    Sliced sliced;
#endif
    while (j + (V - 1) * stride < nv) {
        unsigned even = 0, odd = 0;
        for (int step = 0; step < STEPS && j + (V - 1) * stride < nv; ++step, j += V * stride) {
#if PRIVATE_AHEAD
            // The warp asks L2 for its step PRIVATE_AHEAD steps on: V slabs of 512 bytes (a vector per lane),
            // four 128-byte lines each, one line per lane, past nv none.
#pragma unroll
            for (unsigned r = 0; r < (4 * V + 31) / 32; ++r) {
                const unsigned q = threadIdx.x % 32 + 32 * r;  // slab q / 4, line q % 4
                const unsigned long long at = j - threadIdx.x % 32 + PRIVATE_AHEAD * V * stride + (q / 4) * stride + (q % 4) * 8;
                if (q < 4 * V && at < nv) prefetch_line(vec + at);
            }
#endif
            uint4 v[V];
#pragma unroll
            for (int k = 0; k < V; ++k) v[k] = load_now(vec + j + k * stride);  // all loads first
#if PRIVATE_SLICED  // straight into cnt: the byte lanes (even, odd) stay 0, the nibble count's alone
#pragma unroll
            for (int k = 0; k < V; k += 4) count_sliced<PRIVATE_ADD_PTX>(v + k, sliced, cnt);
#else
#pragma unroll
            for (int k = 0; k < V; ++k) count_letters<PRIVATE_ADD_PTX>(v[k], even, odd);
#endif
        }
        add_lanes(cnt, even, odd);
    }
#if PRIVATE_SLICED
    finish_sliced(sliced, cnt);
#endif
#if !PRIVATE_SERIAL_TAIL
    if (j < nv) {  // fewer than V vectors left for this thread: one step, its loads at once (zeros are no letter)
        unsigned even = 0, odd = 0;
        uint4 v[V];
#pragma unroll
        for (int k = 0; k < V; ++k) v[k] = load_if(vec + j + k * stride, j + k * stride < nv);
#pragma unroll
        for (int k = 0; k < V; ++k) count_letters<PRIVATE_ADD_PTX>(v[k], even, odd);
        add_lanes(cnt, even, odd);
    }
#else  // one vector at a time (load_if)
    for (; j < nv; j += stride) {
        unsigned even = 0, odd = 0;
        count_letters<PRIVATE_ADD_PTX>(vec[j], even, odd);
        add_lanes(cnt, even, odd);
    }
#endif
#endif
    count_last_bytes<PRIVATE_ADD_PTX>(data, length, 1ull * blockIdx.x * PRIVATE_THREADS + threadIdx.x, cnt);
    merge_private(cnt, s, histo);
}

// ---- bulk_private (sm_90): thread_private's counting, the text brought by the copy engine ----
// thread_private keeps DRAM busy only with the loads its threads hold in registers: a warp issues
// its step's loads, then counts, and while it counts its next step is not asked for. Here each
// warp streams its own pieces of the text (BULK_VECS vectors a lane, 32 lanes) through a ring of
// BULK_STAGES stages in shared memory: lane 0 hands the copy engine a whole piece with one
// instruction (cp.async.bulk, counted on the stage's mbarrier), the lanes wait for the stage's
// phase, take their vectors into registers, and lane 0 refills the stage with the piece
// BULK_STAGES on before the warp counts. So BULK_STAGES - 1 pieces per warp are in flight while it
// counts, held by shared memory instead of registers, and no barrier couples one warp to another.
// Pieces are dealt to the grid's warps in turn; the vectors past the last whole piece and the
// last length % 16 bytes are counted from global memory by the whole grid. A study kernel: its
// best ring (these defaults) was 1.5% faster than thread_private at 2^28 bytes and 3% slower at
// 2^26 (docs/histogram.md), so the workload keeps thread_private, which runs on every GPU.
#ifndef BULK_WARPS
#define BULK_WARPS 8  // warps per block
#endif
#ifndef BULK_STAGES
#define BULK_STAGES 2  // pieces a warp has in its ring
#endif
#ifndef BULK_VECS
#define BULK_VECS 4  // 16-byte vectors a lane per piece (a multiple of 4, count_sliced's): a piece is 2 KB
#endif
#ifndef BULK_MIN_BLOCKS
#define BULK_MIN_BLOCKS 3  // blocks per SM, the launch bound's register cap (the study sizes the grid)
#endif
#define BULK_THREADS (BULK_WARPS * 32)
constexpr unsigned BULK_PIECE = 32 * 16 * BULK_VECS;  // bytes
static_assert(BULK_VECS >= 4 && BULK_VECS % 4 == 0, "BULK_VECS: count_sliced counts 4 vectors at a time");
static_assert(BULK_WARPS * BULK_STAGES * BULK_PIECE <= 46 * 1024, "the rings must fit in static shared memory");

extern "C" __global__ void __launch_bounds__(BULK_THREADS, BULK_MIN_BLOCKS)
bulk_private(const unsigned char* __restrict__ data, unsigned long long length, unsigned* __restrict__ histo) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __shared__ __align__(128) uint4 ring[BULK_WARPS][BULK_STAGES][32 * BULK_VECS];
    __shared__ unsigned long long full[BULK_WARPS][BULK_STAGES];
    __shared__ unsigned s[BINS];
    const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (threadIdx.x < BINS) s[threadIdx.x] = 0u;
    const unsigned long long pieces = length / BULK_PIECE, warps = 1ull * gridDim.x * BULK_WARPS;
    const unsigned long long first = 1ull * blockIdx.x * BULK_WARPS + warp;  // this warp's pieces: first + i * warps
    const unsigned long long mine = first < pieces ? (pieces - 1 - first) / warps + 1 : 0;
    uint4(*stage)[32 * BULK_VECS] = ring[warp];
    unsigned long long* bar = full[warp];
    if (lane == 0) {
        for (int st = 0; st < BULK_STAGES; ++st) mbar_init(&bar[st], 1);
        mbar_init_fence();
        for (unsigned long long i = 0; i < BULK_STAGES && i < mine; ++i)
            bulk_load(stage[i], data + (first + i * warps) * BULK_PIECE, BULK_PIECE, &bar[i]);
    }
    __syncthreads();  // s zeroed, the barriers initialised
    unsigned cnt[7] = {0, 0, 0, 0, 0, 0, 0};
    unsigned st = 0, parity = 0;
    Sliced sliced;
    for (unsigned long long i = 0; i < mine; ++i) {
        mbar_wait(&bar[st], parity);
        uint4 v[BULK_VECS];
#pragma unroll
        for (int k = 0; k < BULK_VECS; ++k) v[k] = stage[st][lane + 32 * k];
        __syncwarp();  // every lane has its vectors: the stage is free
        if (lane == 0 && i + BULK_STAGES < mine) {
            async_proxy_fence();
            bulk_load(stage[st], data + (first + (i + BULK_STAGES) * warps) * BULK_PIECE, BULK_PIECE, &bar[st]);
        }
#pragma unroll
        for (int k = 0; k < BULK_VECS; k += 4) count_sliced<PRIVATE_ADD_PTX>(v + k, sliced, cnt);
        if (++st == BULK_STAGES) {
            st = 0;
            parity ^= 1u;
        }
    }
    finish_sliced(sliced, cnt);
    const uint4* vec = reinterpret_cast<const uint4*>(data);
    const unsigned long long t = 1ull * blockIdx.x * BULK_THREADS + threadIdx.x, threads = 1ull * gridDim.x * BULK_THREADS;
    for (unsigned long long j = pieces * (BULK_PIECE / 16) + t; j < length / 16; j += threads) {
        unsigned e = 0, o = 0;
        count_letters<PRIVATE_ADD_PTX>(load_now(vec + j), e, o);
        add_lanes(cnt, e, o);
    }
    count_last_bytes<PRIVATE_ADD_PTX>(data, length, t, cnt);
    merge_private(cnt, s, histo);
#endif
}
#else
// 256 bins: a thread's private histogram is 256 16-bit counters in shared memory, laid out so
// that the 32 lanes of a warp always touch 32 different banks, whatever bytes they read: each
// lane owns one word of every 32 in its warp's 16 KB (its column). PRIVATE_WARPS warps
// per block, 16 KB each. A vector of 16 equal bytes (a run, PMPP 9.5's aggregation) adds 16 at
// once. A counter holds 65535, so a thread counts at most CHUNK vectors (65520 bytes) between
// merges.
#ifndef PRIVATE_WARPS
#define PRIVATE_WARPS 3  // 48 KB of shared memory: 4 blocks (12 warps) per SM
#endif
#define PRIVATE_THREADS (PRIVATE_WARPS * 32)
#ifndef PRIVATE_RUNS
#define PRIVATE_RUNS 1  // a vector of 16 equal bytes counted at once
#endif
#define CHUNK 4095ull  // vectors per thread between merges: 16 * 4095 < 65536

#ifndef PRIVATE_ATOMIC
#define PRIVATE_ATOMIC 1  // 0: each count a load, add and store
#endif

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
            if (tail < length) count_byte<PRIVATE_ATOMIC>(col, data[tail]);  // one of the length % 16 last bytes
        }
        const unsigned long long end = min(nv, base + CHUNK * stride);
        unsigned long long j = base + me;
        for (; j + (V - 1) * stride < end; j += V * stride) {
            uint4 v[V];
#pragma unroll
            for (int k = 0; k < V; ++k) v[k] = load_now(vec + j + k * stride);  // all loads first
#pragma unroll
            for (int k = 0; k < V; ++k) count_vec<PRIVATE_ATOMIC, PRIVATE_RUNS>(col, v[k]);
        }
#if !PRIVATE_SERIAL_TAIL
        if (j < end) {  // fewer than V vectors left: one step, its loads at once (load_if), the 256-bin default
            uint4 v[V];
#pragma unroll
            for (int k = 0; k < V; ++k) v[k] = load_if(vec + j + k * stride, j + k * stride < end);
#pragma unroll
            for (int k = 0; k < V; ++k)
                if (j + k * stride < end) count_vec<PRIVATE_ATOMIC, PRIVATE_RUNS>(col, v[k]);
        }
#else
        for (; j < end; j += stride) count_vec<PRIVATE_ATOMIC, PRIVATE_RUNS>(col, vec[j]);
#endif
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
