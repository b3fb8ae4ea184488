// thread_private's device code without its kernels (histogram_private.cuh has them): the 16-byte
// loads, the letter test and the counters of 7 bins, the counter columns of 256 bins, and
// merge_private, the block's merge of the threads' private histograms (warp_vec's too). Included by
// kernels_cu/histogram.cu after BINS, by histogram_private.cuh, and by the study's forms of
// thread_private (studies/forms/histogram_private.cu), which bring no shipped kernel along with it.
// A template parameter here serves a study's knob: its default is the shipped choice, and the
// shipped kernels instantiate only the defaults.
#ifndef HISTOGRAM_PRIVATE_PARTS_CUH
#define HISTOGRAM_PRIVATE_PARTS_CUH

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
// ---- 7 bins: the counters of a thread's private histogram in registers ------------------------
// (which of them thread_private counts with, and why: histogram_private.cuh). ADD_PTX: letter_bits'
// add as PTX, the shipped choice; false, the plain add (a study form).

// The SWAR letter test of a word's four bytes: `shift` = h + 0x23 per byte (h: the byte's 7 low
// bits, so no add carries into a neighbour) puts (h - 0x5d) / 4 in bits 2-4 and sets bit 7 from
// h >= 0x5d on; the result has bit 7 set in the bytes that are lowercase letters (or 0x5d-0x60,
// whose bits 2-4 are 0). For those four bytes below 'a' bits 2-4 are 0 (no bin), so no test
// against 'a' is needed; above 'z', '{' and '|' (0x7b, 0x7c) would land in bin 6 and are cut by
// the test against '{' (0x7d-0x7f land in 0 anyway). Bytes >= 128 are cut by bit 7 of w.
template <bool ADD_PTX = true>
__device__ __forceinline__ unsigned letter_bits(unsigned w, unsigned& shift) {
    const unsigned h = w & 0x7f7f7f7fu;
    shift = h + 0x23232323u;  // bit 7: h >= 0x5d; bits 2-4: bin + 1 for a letter
    // bit 7: h >= '{' (0x7b). As PTX (ADD_PTX), so that the compiler cannot fold the ~ below
    // into the add (IADD3 -h - 0x05050506, on the integer pipe, where this add is a VIADD off it);
    // docs/histogram.md has what the plain add cost.
#ifdef __CUDA_ARCH__
    unsigned ge_brace;
    if constexpr (ADD_PTX)
        asm("add.u32 %0, %1, 0x05050505;" : "=r"(ge_brace) : "r"(h));
    else
        ge_brace = h + 0x05050505u;
#else
    const unsigned ge_brace = h + 0x05050505u;
#endif
    return shift & ~w & ~ge_brace & 0x80808080u;
}

// Byte k of the result: 4 * (bin + 1) if byte k of w is a lowercase letter, else 0.
template <bool ADD_PTX = true>
__device__ __forceinline__ unsigned letter_shifts(unsigned w) {
    unsigned shift;
    const unsigned letter = letter_bits<ADD_PTX>(w, shift);
    return shift & __umulhi(letter, 0x1cu << 25);  // 0x1c in a letter's byte: 0x80 * 0x1c / 2^7, one IMAD.HI
}

// Two words (8 bytes) into nibble counters: a nibble reaches at most 8, below its 15.
template <bool ADD_PTX = true>
__device__ __forceinline__ unsigned nibbles(unsigned w0, unsigned w1) {
    const unsigned s0 = letter_shifts<ADD_PTX>(w0), s1 = letter_shifts<ADD_PTX>(w1);
    const unsigned p0 = nibble(s0) + nibble(byte_down(s0, 1));
    const unsigned p1 = nibble(byte_down(s0, 2)) + nibble(byte_down(s0, 3));
    const unsigned p2 = nibble(s1) + nibble(byte_down(s1, 1));
    const unsigned p3 = nibble(byte_down(s1, 2)) + nibble(byte_down(s1, 3));
    return (p0 + p1) + (p2 + p3);  // a tree: 3 adds deep
}

// 16 bytes into byte-lane counters: byte k of odd counts nibble 2k + 1 (bins 0, 2, 4, 6), byte k
// of even nibble 2k (no letter, bins 1, 3, 5); a byte lane gains at most 16 per vector.
template <bool ADD_PTX = true>
__device__ __forceinline__ void count_letters(uint4 v, unsigned& even, unsigned& odd) {
    const unsigned a = nibbles<ADD_PTX>(v.x, v.y), b = nibbles<ADD_PTX>(v.z, v.w);
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

template <bool ADD_PTX = true>
__device__ __forceinline__ unsigned letter_onehot(unsigned w) {
    unsigned shift;
    const unsigned letter = letter_bits<ADD_PTX>(w, shift);
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
template <bool ADD_PTX = true>
__device__ __forceinline__ void count_sliced(const uint4* v, Sliced& st, unsigned (&cnt)[7]) {
    unsigned o[16], t[8], f[4], e[2];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        o[4 * k] = letter_onehot<ADD_PTX>(v[k].x);
        o[4 * k + 1] = letter_onehot<ADD_PTX>(v[k].y);
        o[4 * k + 2] = letter_onehot<ADD_PTX>(v[k].z);
        o[4 * k + 3] = letter_onehot<ADD_PTX>(v[k].w);
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
template <bool ADD_PTX = true>
__device__ __forceinline__ void count_last_bytes(const unsigned char* data, unsigned long long length,
                                                 unsigned long long t, unsigned (&cnt)[7]) {
    const unsigned long long tail = 16 * (length / 16) + t;
    if (tail < length) {
        unsigned even = 0, odd = 0;
        count_letters<ADD_PTX>(make_uint4(data[tail], 0u, 0u, 0u), even, odd);
        add_lanes(cnt, even, odd);
    }
}
#else
// ---- 256 bins: the counters of a thread's private histogram in shared memory -----------------
// (the layout: histogram_private.cuh). ATOMIC: each count a shared atomicAdd, the shipped choice;
// false, a load, add and store (a study form). RUNS: a vector of 16 equal bytes counted at once,
// the shipped choice.

// Counter (bin, lane) is half bin / 128 of word (bin % 128) * 32 + lane: `row` is bin % 128 and
// `high` 1 for the high half. With ATOMIC, an atomicAdd of n or n << 16 on a word no other
// thread touches: not against a race but because nothing waits on it, whereas a load, add and
// store of the next byte would wait for this one's store (the compiler cannot tell two counters
// apart): a chain of shared-memory latencies per byte.
template <bool ATOMIC = true>
__device__ __forceinline__ void count_at(unsigned char* col, unsigned row, unsigned high, unsigned n) {
    if constexpr (ATOMIC) {
        atomicAdd(reinterpret_cast<unsigned*>(col + row * 128), n << (16 * high));
    } else {
        unsigned short* c = reinterpret_cast<unsigned short*>(col + row * 128 + high * 2);
        *c = (unsigned short)(*c + n);
    }
}

template <bool ATOMIC = true>
__device__ __forceinline__ void count_byte(unsigned char* col, unsigned b, unsigned n = 1) {
    count_at<ATOMIC>(col, b & 127u, b >> 7, n);
}

// Four bytes: the rows from one mask of the word and a byte permute each; with ATOMIC the
// increments 1 << (16 * high) from one shift of the word and a funnel shift each (it reads only
// the low 5 bits of its amount, so no byte is masked out).
template <bool ATOMIC = true>
__device__ __forceinline__ void count_word(unsigned char* col, unsigned w) {
    const unsigned rows = w & 0x7f7f7f7fu;
    if constexpr (ATOMIC) {
        const unsigned amounts = (w >> 3) & 0x10101010u;  // 16 where the byte is >= 128
#pragma unroll
        for (int k = 0; k < 4; ++k)
            atomicAdd(reinterpret_cast<unsigned*>(col + __byte_perm(rows, 0u, 0x4440u + k) * 128),
                      nibble(byte_down(amounts, k)));
    } else {
#pragma unroll
        for (int k = 0; k < 4; ++k) count_at<false>(col, __byte_perm(rows, 0u, 0x4440u + k), (w >> (8 * k + 7)) & 1u, 1u);
    }
}

template <bool ATOMIC = true, bool RUNS = true>
__device__ __forceinline__ void count_vec(unsigned char* col, uint4 v) {
    if constexpr (RUNS) {
        const unsigned rep = __byte_perm(v.x, 0u, 0x0000u);  // byte 0 in all four bytes
        if (((v.x ^ rep) | (v.y ^ rep) | (v.z ^ rep) | (v.w ^ rep)) == 0u) {  // 16 equal bytes: one run
            count_byte<ATOMIC>(col, v.x & 0xffu, 16);
            return;
        }
    }
    count_word<ATOMIC>(col, v.x);
    count_word<ATOMIC>(col, v.y);
    count_word<ATOMIC>(col, v.z);
    count_word<ATOMIC>(col, v.w);
}
#endif

#endif  // HISTOGRAM_PRIVATE_PARTS_CUH
