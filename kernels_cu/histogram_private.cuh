// thread_private for both bin counts (beyond the book): included by kernels_cu/histogram.cu after
// BINS, BLOCK and merge_private, which it uses.
#ifndef HISTOGRAM_PRIVATE_CUH
#define HISTOGRAM_PRIVATE_CUH

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
// its leftover vectors one after the other. The tail per bin count: the
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
// 7 bins: a thread's private histogram lives in bit-sliced counters (count_sliced:
// each byte becomes a one-hot byte, 16 words at a time go through a tree of carry-save adders and
// only its top carry is popcounted), about 64 instructions per 16 bytes in the sm_90 SASS of the
// loop; the nibble counters before it (count_letters: eight 4-bit counters in one register, a
// funnel shift per byte, 78 per 16 bytes) still count the tail's vectors. Most of either is on the
// integer (ALU) pipe, half a warp instruction per clock, which is what the count per byte is
// weighed against (docs/histogram.md has the times).
#define PRIVATE_THREADS BLOCK
#define PRIVATE_MIN_BLOCKS 5  // blocks per SM: the grid (pmppbench/workloads/histogram.py) and the register cap
// The other ways to keep DRAM busy while the threads count, measured beside this loop (docs/histogram.md
// has the times that chose it): each warp asking L2 for its lines steps ahead, and a
// ring of loads refilled as each vector is taken for counting, are studies/forms/histogram_private.cu's.

// The SWAR letter test of a word's four bytes: `shift` = h + 0x23 per byte (h: the byte's 7 low
// bits, so no add carries into a neighbour) puts (h - 0x5d) / 4 in bits 2-4 and sets bit 7 from
// h >= 0x5d on; the result has bit 7 set in the bytes that are lowercase letters (or 0x5d-0x60,
// whose bits 2-4 are 0). For those four bytes below 'a' bits 2-4 are 0 (no bin), so no test
// against 'a' is needed; above 'z', '{' and '|' (0x7b, 0x7c) would land in bin 6 and are cut by
// the test against '{' (0x7d-0x7f land in 0 anyway). Bytes >= 128 are cut by bit 7 of w.
__device__ __forceinline__ unsigned letter_bits(unsigned w, unsigned& shift) {
    const unsigned h = w & 0x7f7f7f7fu;
    shift = h + 0x23232323u;  // bit 7: h >= 0x5d; bits 2-4: bin + 1 for a letter
    // bit 7: h >= '{' (0x7b). As PTX, so that the compiler cannot fold the ~ below
    // into the add (IADD3 -h - 0x05050506, on the integer pipe, where this add is a VIADD off it);
    // docs/histogram.md has what the plain add cost.
#ifdef __CUDA_ARCH__
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

// Bit-sliced counting (thread_private's main loop; the study's bulk_private's too):
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
// merges.
#define PRIVATE_WARPS 3  // 48 KB of shared memory: 4 blocks (12 warps) per SM
#define PRIVATE_THREADS (PRIVATE_WARPS * 32)
#define CHUNK 4095ull  // vectors per thread between merges: 16 * 4095 < 65536


// Counter (bin, lane) is half bin / 128 of word (bin % 128) * 32 + lane: `row` is bin % 128 and
// `high` 1 for the high half. An atomicAdd of n or n << 16 on a word no other
// thread touches: not against a race but because nothing waits on it, whereas a load, add and
// store of the next byte would wait for this one's store (the compiler cannot tell two counters
// apart): a chain of shared-memory latencies per byte.
__device__ __forceinline__ void count_at(unsigned char* col, unsigned row, unsigned high, unsigned n) {
    atomicAdd(reinterpret_cast<unsigned*>(col + row * 128), n << (16 * high));
}

__device__ __forceinline__ void count_byte(unsigned char* col, unsigned b, unsigned n = 1) {
    count_at(col, b & 127u, b >> 7, n);
}

// Four bytes: the rows from one mask of the word and a byte permute each; the
// increments 1 << (16 * high) from one shift of the word and a funnel shift each (it reads only
// the low 5 bits of its amount, so no byte is masked out).
__device__ __forceinline__ void count_word(unsigned char* col, unsigned w) {
    const unsigned rows = w & 0x7f7f7f7fu;
    const unsigned amounts = (w >> 3) & 0x10101010u;  // 16 where the byte is >= 128
#pragma unroll
    for (int k = 0; k < 4; ++k)
        atomicAdd(reinterpret_cast<unsigned*>(col + __byte_perm(rows, 0u, 0x4440u + k) * 128),
                  nibble(byte_down(amounts, k)));
}

__device__ __forceinline__ void count_vec(unsigned char* col, uint4 v) {
    const unsigned rep = __byte_perm(v.x, 0u, 0x0000u);  // byte 0 in all four bytes
    if (((v.x ^ rep) | (v.y ^ rep) | (v.z ^ rep) | (v.w ^ rep)) == 0u) {  // 16 equal bytes: one run
        count_byte(col, v.x & 0xffu, 16);
        return;
    }
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
