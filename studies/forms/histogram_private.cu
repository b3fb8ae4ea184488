// thread_private's study forms (studies/forms/histogram_forms.py, the workload `histogram_private`):
// kernels_cu/histogram_private.cuh's thread_private with every knob the measurements of
// docs/histogram.md turned, and bulk_private (sm_90: the text brought by the copy engine), which no table
// runs. Each knob's default is the shipped kernel's choice, so a build without defines is the
// shipped code. BINS 7: PRIVATE_VECS (16-byte loads in flight per thread), PRIVATE_MIN_BLOCKS (the
// launch bound), PRIVATE_SLICED (0: the nibble counters), PRIVATE_AHEAD (steps asked of L2 ahead),
// PRIVATE_RING (a ring of loads; PRIVATE_RING_ORDER), PRIVATE_ADD_PTX, PRIVATE_SERIAL_TAIL;
// bulk_private: BULK_WARPS, BULK_STAGES, BULK_VECS, BULK_MIN_BLOCKS. BINS 256: PRIVATE_WARPS,
// PRIVATE_RUNS, PRIVATE_ATOMIC (0: load, add and store), PRIVATE_VECS, PRIVATE_SERIAL_TAIL.
// The letter bins and the block's merge are kernels_cu/histogram.cu's (copied: a header would
// bring the shipped kernels' names along).

#include "mbarrier.cuh"  // bulk_private's ring (sm_90)

#ifndef BINS
#define BINS 7
#endif
#ifndef BLOCK
#define BLOCK 256
#endif
// 7 bins: the threads' private histograms (warp_vec's, thread_private's) into the block's (s,
// zeroed before), then one global atomic per bin: the warp adds its 32 copies by shuffles, lane 0
// adds the warp's into s. (One launch with no zeroing by the host, the last block moving an
// accumulator into the histogram, measured no faster: docs/histogram.md.)
__device__ __forceinline__ void merge_private(const unsigned (&cnt)[7], unsigned* s, unsigned* histo) {
#pragma unroll
    for (int b = 0; b < 7; ++b) {
        unsigned v = cnt[b];
        for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
        if (threadIdx.x % 32 == 0 && v > 0) atomicAdd(&s[b], v);
    }
    __syncthreads();
    if (threadIdx.x < BINS && s[threadIdx.x] > 0) atomicAdd(&histo[threadIdx.x], s[threadIdx.x]);
}


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

// A 16-byte load as inline PTX: the loads of a loop step stay together at the top of the step as
// far as the registers allow (the sm_90 SASS has 5 of 7 bins' 8 and all 8 of 256 bins' ahead of
// the first count); a plain load the compiler moves down to its first use.
__device__ __forceinline__ uint4 load_now(const uint4* p) {
#ifdef __CUDA_ARCH__
    uint4 v;
    asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
#else
    return *p;
#endif
}

// The same load under a predicate, zeros where `ok` is false, so that a thread's last, partial step
// can issue all its loads at once too, where a plain `for (; j < nv; j += stride)` tail waits for
// its leftover vectors one after the other. PRIVATE_SERIAL_TAIL picks the tail per bin count: the
// batched one for 256 bins, one vector at a time for 7 bins, whose tail the other resident warps'
// work already covers and whose main loop a second copy of the counting code slows (the times:
// docs/histogram.md).
__device__ __forceinline__ uint4 load_if(const uint4* p, bool ok) {
#ifdef __CUDA_ARCH__
    uint4 v;
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %5, 0;\n\t"
                 "mov.b32 %0, 0;\n\tmov.b32 %1, 0;\n\tmov.b32 %2, 0;\n\tmov.b32 %3, 0;\n\t"
                 "@p ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];\n\t}"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "r"(unsigned(ok)));
    return v;
#else
    return ok ? *p : make_uint4(0u, 0u, 0u, 0u);
#endif
}

// x >> (8 * k) as the high word of a multiply, an IMAD.HI on the FMA pipe instead of a shift on
// the integer pipe that the logic and adds share. It gained nothing measurable at either bin count
// (docs/histogram.md), so the integer pipe alone is not what holds the 7-bin kernel below the
// read roof; the form stays because the final run measured it.
__device__ __forceinline__ unsigned byte_down(unsigned x, int k) { return k == 0 ? x : __umulhi(x, 1u << (32 - 8 * k)); }

__device__ __forceinline__ unsigned nibble(unsigned amount) { return __funnelshift_l(0u, 1u, amount); }  // 1 << (amount % 32)

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
#define PRIVATE_ADD_PTX 1
#endif
#ifndef PRIVATE_SLICED
#define PRIVATE_SLICED 1  // the main loop's vectors by count_sliced (PRIVATE_VECS a multiple of 4); 0: count_letters
#endif

__device__ __forceinline__ void prefetch_line(const void* p) {
#ifdef __CUDA_ARCH__
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#endif
}

// The SWAR letter test of a word's four bytes: `shift` = h + 0x23 per byte (h: the byte's 7 low
// bits, so no add carries into a neighbour) puts (h - 0x5d) / 4 in bits 2-4 and sets bit 7 from
// h >= 0x5d on; the result has bit 7 set in the bytes that are lowercase letters (or 0x5d-0x60,
// whose bits 2-4 are 0). For those four bytes below 'a' bits 2-4 are 0 (no bin), so no test
// against 'a' is needed; above 'z', '{' and '|' (0x7b, 0x7c) would land in bin 6 and are cut by
// the test against '{' (0x7d-0x7f land in 0 anyway). Bytes >= 128 are cut by bit 7 of w.
__device__ __forceinline__ unsigned letter_bits(unsigned w, unsigned& shift) {
    const unsigned h = w & 0x7f7f7f7fu;
    shift = h + 0x23232323u;  // bit 7: h >= 0x5d; bits 2-4: bin + 1 for a letter
    // bit 7: h >= '{' (0x7b). As PTX (PRIVATE_ADD_PTX), so that the compiler cannot fold the ~ below
    // into the add (IADD3 -h - 0x05050506, on the integer pipe, where this add is a VIADD off it);
    // docs/histogram.md has what the plain add cost.
#if defined(__CUDA_ARCH__) && PRIVATE_ADD_PTX
    unsigned ge_brace;
    asm("add.u32 %0, %1, 0x05050505;" : "=r"(ge_brace) : "r"(h));
#else
    const unsigned ge_brace = h + 0x05050505u;
#endif
    return shift & ~w & ~ge_brace & 0x80808080u;
}

// Byte k of the result: 4 * (bin + 1) if byte k of w is a lowercase letter, else 0.
__device__ __forceinline__ unsigned letter_shifts(unsigned w) {
    unsigned shift;
    const unsigned letter = letter_bits(w, shift);
    return shift & __umulhi(letter, 0x1cu << 25);  // 0x1c in a letter's byte: 0x80 * 0x1c / 2^7, one IMAD.HI
}

// Two words (8 bytes) into nibble counters: a nibble reaches at most 8, below its 15.
__device__ __forceinline__ unsigned nibbles(unsigned w0, unsigned w1) {
    const unsigned s0 = letter_shifts(w0), s1 = letter_shifts(w1);
    const unsigned p0 = nibble(s0) + nibble(byte_down(s0, 1));
    const unsigned p1 = nibble(byte_down(s0, 2)) + nibble(byte_down(s0, 3));
    const unsigned p2 = nibble(s1) + nibble(byte_down(s1, 1));
    const unsigned p3 = nibble(byte_down(s1, 2)) + nibble(byte_down(s1, 3));
    return (p0 + p1) + (p2 + p3);  // a tree: 3 adds deep
}

// 16 bytes into byte-lane counters: byte k of odd counts nibble 2k + 1 (bins 0, 2, 4, 6), byte k
// of even nibble 2k (no letter, bins 1, 3, 5); a byte lane gains at most 16 per vector.
__device__ __forceinline__ void count_letters(uint4 v, unsigned& even, unsigned& odd) {
    const unsigned a = nibbles(v.x, v.y), b = nibbles(v.z, v.w);
    even += (a & 0x0f0f0f0fu) + (b & 0x0f0f0f0fu);
    odd += (__umulhi(a, 1u << 28) & 0x0f0f0f0fu) + (__umulhi(b, 1u << 28) & 0x0f0f0f0fu);  // (x >> 4): see byte_down
}

__device__ __forceinline__ void add_lanes(unsigned (&cnt)[7], unsigned even, unsigned odd) {
#pragma unroll
    for (int b = 0; b < 7; ++b) cnt[b] += (b % 2 ? even >> (8 * ((b + 1) / 2)) : odd >> (8 * (b / 2))) & 0xffu;
}

// Bit-sliced counting (thread_private's main loop, PRIVATE_SLICED; bulk_private's):
// a word's four bytes become one-hot bytes (bit b of byte k set if byte k is a letter of bin b)
// by two byte permutes, the second a table lookup of the four bins at once; 16 such words are
// added bit by bit in a Harley-Seal tree of carry-save adders (two logic instructions per adder)
// into four words of bit-sliced counters (ones, twos, fours, eights per bit position), and only
// the tree's one carry of weight 16 per 16 words is counted by popcounts. About 16 instructions
// per word in the loop's sm_90 SASS, against the nibble counters' 19.

// prmt as PTX: __byte_perm reads 3 bits of each selector nibble, and the compiler masks the
// selector first to say so (a LOP3 a word); these selectors' nibbles are 0-7 already.
__device__ __forceinline__ unsigned permute(unsigned lo, unsigned hi, unsigned sel) {
#ifdef __CUDA_ARCH__
    unsigned r;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(lo), "r"(hi), "r"(sel));
    return r;
#else
    return __byte_perm(lo, hi, sel);
#endif
}

__device__ __forceinline__ unsigned letter_onehot(unsigned w) {
    unsigned shift;
    const unsigned letter = letter_bits(w, shift);
    // bin + 1 in bits 0-2 of a letter's byte, 0 in any other byte: (shift >> 2) & 7 per letter
    const unsigned idx = __umulhi(shift, 1u << 30) & __umulhi(letter, 0x07u << 25);
    const unsigned pairs = __umulhi(idx, 1u << 28) + idx;  // byte 0: i0 | i1 << 4, byte 2: i2 | i3 << 4
    // table: index 0 (no letter) -> 0, index i -> 1 << (i - 1)
    return permute(0x04020100u, 0x40201008u, permute(pairs, 0u, 0x4420u));
}

// sum + a + b = 2 * carry + sum, bit by bit: a carry-save adder
__device__ __forceinline__ unsigned csa(unsigned& sum, unsigned a, unsigned b) {
    const unsigned carry = (sum & a) | (sum & b) | (a & b);  // the majority: one LOP3
    sum ^= a ^ b;                                             // one LOP3
    return carry;
}

struct Sliced {
    unsigned ones = 0, twos = 0, fours = 0, eights = 0;
};

// weight times the number of bytes of x with bit b set, into bin b
__device__ __forceinline__ void add_sliced(unsigned (&cnt)[7], unsigned x, unsigned weight) {
#pragma unroll
    for (int b = 0; b < 7; ++b) cnt[b] += weight * __popc(x & (0x01010101u << b));
}

// Four vectors (16 words) into the bit-sliced counters; their carry of weight 16 into cnt.
__device__ __forceinline__ void count_sliced(const uint4* v, Sliced& st, unsigned (&cnt)[7]) {
    unsigned o[16], t[8], f[4], e[2];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        o[4 * k] = letter_onehot(v[k].x);
        o[4 * k + 1] = letter_onehot(v[k].y);
        o[4 * k + 2] = letter_onehot(v[k].z);
        o[4 * k + 3] = letter_onehot(v[k].w);
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) t[i] = csa(st.ones, o[2 * i], o[2 * i + 1]);
#pragma unroll
    for (int i = 0; i < 4; ++i) f[i] = csa(st.twos, t[2 * i], t[2 * i + 1]);
#pragma unroll
    for (int i = 0; i < 2; ++i) e[i] = csa(st.fours, f[2 * i], f[2 * i + 1]);
    add_sliced(cnt, csa(st.eights, e[0], e[1]), 16);
}

__device__ __forceinline__ void finish_sliced(const Sliced& st, unsigned (&cnt)[7]) {
    add_sliced(cnt, st.ones, 1);
    add_sliced(cnt, st.twos, 2);
    add_sliced(cnt, st.fours, 4);
    add_sliced(cnt, st.eights, 8);
}

// The length % 16 bytes past the last whole vector: thread t of the grid counts byte 16 * nv + t
// (alone in a word: the zeros are no letter).
__device__ __forceinline__ void count_last_bytes(const unsigned char* data, unsigned long long length,
                                                 unsigned long long t, unsigned (&cnt)[7]) {
    const unsigned long long tail = 16 * (length / 16) + t;
    if (tail < length) {
        unsigned even = 0, odd = 0;
        count_letters(make_uint4(data[tail], 0u, 0u, 0u), even, odd);
        add_lanes(cnt, even, odd);
    }
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
            count_letters(x, even, odd);
            v[k] = load_unless_last(p + k * stride + (k < V - 1 ? even >> 31 : 0u), more);
#else
            v[k] = load_unless_last(p + k * stride, more);
            count_letters(x, even, odd);
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
            for (int k = 0; k < V; k += 4) count_sliced(v + k, sliced, cnt);
#else
#pragma unroll
            for (int k = 0; k < V; ++k) count_letters(v[k], even, odd);
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
        for (int k = 0; k < V; ++k) count_letters(v[k], even, odd);
        add_lanes(cnt, even, odd);
    }
#else  // one vector at a time (load_if)
    for (; j < nv; j += stride) {
        unsigned even = 0, odd = 0;
        count_letters(vec[j], even, odd);
        add_lanes(cnt, even, odd);
    }
#endif
#endif
    count_last_bytes(data, length, 1ull * blockIdx.x * PRIVATE_THREADS + threadIdx.x, cnt);
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
        for (int k = 0; k < BULK_VECS; k += 4) count_sliced(v + k, sliced, cnt);
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
        count_letters(load_now(vec + j), e, o);
        add_lanes(cnt, e, o);
    }
    count_last_bytes(data, length, t, cnt);
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
#define PRIVATE_ATOMIC 1
#endif

// Counter (bin, lane) is half bin / 128 of word (bin % 128) * 32 + lane: `row` is bin % 128 and
// `high` 1 for the high half. With PRIVATE_ATOMIC, an atomicAdd of n or n << 16 on a word no other
// thread touches: not against a race but because nothing waits on it, whereas a load, add and
// store of the next byte would wait for this one's store (the compiler cannot tell two counters
// apart): a chain of shared-memory latencies per byte.
__device__ __forceinline__ void count_at(unsigned char* col, unsigned row, unsigned high, unsigned n) {
#if PRIVATE_ATOMIC
    atomicAdd(reinterpret_cast<unsigned*>(col + row * 128), n << (16 * high));
#else
    unsigned short* c = reinterpret_cast<unsigned short*>(col + row * 128 + high * 2);
    *c = (unsigned short)(*c + n);
#endif
}

__device__ __forceinline__ void count_byte(unsigned char* col, unsigned b, unsigned n = 1) {
    count_at(col, b & 127u, b >> 7, n);
}

// Four bytes: the rows from one mask of the word and a byte permute each; with PRIVATE_ATOMIC the
// increments 1 << (16 * high) from one shift of the word and a funnel shift each (it reads only
// the low 5 bits of its amount, so no byte is masked out).
__device__ __forceinline__ void count_word(unsigned char* col, unsigned w) {
    const unsigned rows = w & 0x7f7f7f7fu;
#if PRIVATE_ATOMIC
    const unsigned amounts = (w >> 3) & 0x10101010u;  // 16 where the byte is >= 128
#pragma unroll
    for (int k = 0; k < 4; ++k)
        atomicAdd(reinterpret_cast<unsigned*>(col + __byte_perm(rows, 0u, 0x4440u + k) * 128),
                  nibble(byte_down(amounts, k)));
#else
#pragma unroll
    for (int k = 0; k < 4; ++k) count_at(col, __byte_perm(rows, 0u, 0x4440u + k), (w >> (8 * k + 7)) & 1u, 1u);
#endif
}

__device__ __forceinline__ void count_vec(unsigned char* col, uint4 v) {
#if PRIVATE_RUNS
    const unsigned rep = __byte_perm(v.x, 0u, 0x0000u);  // byte 0 in all four bytes
    if (((v.x ^ rep) | (v.y ^ rep) | (v.z ^ rep) | (v.w ^ rep)) == 0u) {  // 16 equal bytes: one run
        count_byte(col, v.x & 0xffu, 16);
        return;
    }
#endif
    count_word(col, v.x);
    count_word(col, v.y);
    count_word(col, v.z);
    count_word(col, v.w);
}

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
#if !PRIVATE_SERIAL_TAIL
        if (j < end) {  // fewer than V vectors left: one step, its loads at once (load_if), the 256-bin default
            uint4 v[V];
#pragma unroll
            for (int k = 0; k < V; ++k) v[k] = load_if(vec + j + k * stride, j + k * stride < end);
#pragma unroll
            for (int k = 0; k < V; ++k)
                if (j + k * stride < end) count_vec(col, v[k]);
        }
#else
        for (; j < end; j += stride) count_vec(col, vec[j]);
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
