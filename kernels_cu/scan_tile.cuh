// The scan's shared device code (kernels_cu/scan.cu includes it, and so can a study's kernels):
// the element type and kind, the 16-byte vector, the warp scans, the register tile scan of the
// kernels beyond the book (hierarchical, domino, the look-backs) and the tiles' status words of the
// single-pass scans.
#ifndef SCAN_TILE_CUH
#define SCAN_TILE_CUH

#ifndef ELEM
#define ELEM float
#endif
#ifndef EXCLUSIVE
#define EXCLUSIVE 0
#endif
typedef ELEM T;

#define KS_SECTION 1024  // kogge_stone: one element per thread, 1024 threads (PMPP 11.2)
#define BK_THREADS 1024  // brent_kung: two elements per thread (PMPP 11.3)
#define BK_SECTION (2 * BK_THREADS)
#define CO_THREADS 512  // coarsened: COARSE elements per thread (PMPP 11.4)
#define CO_FACTOR 8
#define CO_SECTION (CO_THREADS * CO_FACTOR)
#define SUMS_THREADS 1024  // scan_sums: the second kernel of the three, one block
#define SUMS_PER_THREAD 4
#define ADD_THREADS 256  // add_carries: the third kernel, 16-byte loads
#define FAST_THREADS 256  // tile_scan, domino, lookback: 8 warps, each thread ROWS 16-byte vectors
#define FAST_WARPS (FAST_THREADS / 32)
#define FULL 0xffffffffu

template <class V> struct Vec;
template <> struct Vec<float> { using type = float4; };
template <> struct Vec<int> { using type = int4; };
typedef typename Vec<T>::type V;

// The element one to the left of position t of an inclusive scan in XY: the exclusive output.
// tests/test_scan.py mutates a copy to read the element itself (the inclusive scan again).
__device__ __forceinline__ T shifted(const T* XY, unsigned t) {
    return t ? XY[t - 1] : T(0);
}

// ---- warp and block scans in registers (the kernels beyond the book) ----------------------

__device__ __forceinline__ T warp_inclusive(T x) {
    const unsigned lane = threadIdx.x % 32;
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
        const T y = __shfl_up_sync(FULL, x, d);
        if (lane >= d) x += y;
    }
    return x;
}

__device__ __forceinline__ T warp_sum(T x) {
#pragma unroll
    for (int d = 16; d > 0; d /= 2) x += __shfl_xor_sync(FULL, x, d);
    return x;
}

// ---- the tile scan in registers ---------------------------------------------------------------
// A tile is FAST_THREADS threads x ROWS 16-byte vectors. Warp w owns ROWS * 128 contiguous
// elements, row r of them at 128 r: lane l holds elements 4 l .. 4 l + 3 of the row, so each
// load and store of a warp is 512 contiguous bytes. A row is scanned as four sequential
// additions in the thread, a shuffle scan over the 32 lane totals and the running total of
// the warp's earlier rows; the warps' totals then meet once in shared memory.

template <int ROWS, int THREADS = FAST_THREADS> struct Tile {
    static constexpr unsigned WARPS = THREADS / 32;
    static constexpr unsigned SIZE = THREADS * ROWS * 4;
    V v[ROWS];  // loaded vectors, then each element's output within its warp's part of the tile

    __device__ __forceinline__ unsigned long long first(unsigned long long base) const {
        return base + 1ull * (threadIdx.x / 32) * ROWS * 128 + (threadIdx.x % 32) * 4;
    }

    __device__ __forceinline__ void load(const T* __restrict__ in, unsigned long long base, unsigned long long n) {
        const unsigned long long g = first(base);
        if (base + SIZE <= n) {
#pragma unroll
            for (int r = 0; r < ROWS; ++r) v[r] = __ldg(reinterpret_cast<const V*>(in + g + 128 * r));
        } else {  // the last tile: element by element, zero past n
            const int have = remaining(g, n);
#pragma unroll
            for (int r = 0; r < ROWS; ++r) v[r] = load_part(in + g + 128 * r, have - 128 * r);
        }
    }

    // The vector at e with only its first `left` elements read (the rest zero): the last tile's.
    static __device__ __forceinline__ V load_part(const T* e, int left) {
        V v;
        v.x = 0 < left ? e[0] : T(0);
        v.y = 1 < left ? e[1] : T(0);
        v.z = 2 < left ? e[2] : T(0);
        v.w = 3 < left ? e[3] : T(0);
        return v;
    }

    // y's first `left` elements stored at e: the last tile's.
    static __device__ __forceinline__ void store_part(T* e, const V& y, int left) {
        if (0 < left) e[0] = y.x;
        if (1 < left) e[1] = y.y;
        if (2 < left) e[2] = y.z;
        if (3 < left) e[3] = y.w;
    }

    // Elements from g to n, clamped to [0, SIZE] (32-bit compares in the last tile's paths).
    static __device__ __forceinline__ int remaining(unsigned long long g, unsigned long long n) {
        return g >= n ? 0 : int(min(n - g, 1ull * SIZE));
    }

    // The scan within the tile; `warps` is WARPS shared words, each warp's total when it returns
    // (one barrier). The warps' prefixes and the tile's total are read from there when needed,
    // not held in registers across a look-back.
    __device__ __forceinline__ void scan(T* warps) {
        T carry = T(0);
#pragma unroll
        for (int r = 0; r < ROWS; ++r) scan_row(v[r], carry);
        if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = carry;
        __syncthreads();
    }

    // The sum of a thread's ROWS vectors (the first at `at`, rows 32 vectors apart): (x + y) +
    // (z + w) per vector, the rows added in order, 2 + ROWS additions deep.
    static __device__ __forceinline__ T rows_sum(const V* at) {
        T s = T(0);
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            const V v = at[32 * r];
            s += (v.x + v.y) + (v.z + v.w);
        }
        return s;
    }

    // One row of a warp's part: the vector v replaced by its outputs within the warp's part (no
    // second array of prefixes: the registers go to more rows), `carry` (the warp's earlier rows)
    // by the running total. Exclusive: each element's left neighbour's inclusive.
    static __device__ __forceinline__ void scan_row(V& v, T& carry) {
        const unsigned lane = threadIdx.x % 32;
        v.y += v.x;
        v.z += v.y;
        v.w += v.z;
        const T inclusive = warp_inclusive(v.w);
        const T left = __shfl_up_sync(FULL, inclusive, 1);
        const T pre = lane ? carry + left : carry;  // the vector's exclusive prefix within the warp's part
        carry += __shfl_sync(FULL, inclusive, 31);
#if EXCLUSIVE
        v.w = pre + v.z; v.z = pre + v.y; v.y = pre + v.x; v.x = pre;
#else
        v.x += pre; v.y += pre; v.z += pre; v.w += pre;
#endif
    }

    // The sum of the warps' totals before warp `upto` (WARPS: the whole tile's), in warp order.
    static __device__ __forceinline__ T warps_before(const T* warps, unsigned upto) {
        T sum = T(0);
#pragma unroll
        for (unsigned w = 0; w < WARPS; ++w)
            if (w < upto) sum += warps[w];
        return sum;
    }

    // The outputs with `offset` (the tiles to the left) and the warps to the left added.
    __device__ __forceinline__ void store(T* __restrict__ out, unsigned long long base, unsigned long long n,
                                          T offset, const T* warps) const {
        const unsigned long long g = first(base);
        const T left = offset + warps_before(warps, threadIdx.x / 32);
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            V y;
            y.x = left + v[r].x; y.y = left + v[r].y; y.z = left + v[r].z; y.w = left + v[r].w;
            T* e = out + g + 128 * r;
            if (base + SIZE <= n) {
                __stcs(reinterpret_cast<V*>(e), y);  // streamed: no later reuse from cache
            } else {
                store_part(e, y, remaining(g, n) - 128 * r);
            }
        }
    }
};

// ---- single pass: the status words of the tiles -------------------------------------------------
// One 64-bit word per tile, written with one store and read with one load, so a flag and its
// value are always seen together: the value's 32 bits low, above them the flag (AGGREGATE:
// the tile's own total; PREFIX: the sum of every element up to the tile's end) and the call's
// epoch. Tiles are numbered in the order their blocks start (PMPP 11.6's dynamic block index:
// a block waits only on blocks that started before it, so it cannot wait on one that is not
// resident) from a 64-bit ticket that is never reset: call c's tickets are c * tiles ..
// c * tiles + tiles - 1, its epoch c, and a word left by an earlier call carries an older
// epoch and reads as not yet written. So a call is one launch, no memset before it.

#define AGGREGATE 1u
#define PREFIX 2u
#define EPOCH_MASK 0x3fffffffu

__device__ __forceinline__ unsigned to_bits(float x) { return __float_as_uint(x); }
__device__ __forceinline__ unsigned to_bits(int x) { return unsigned(x); }
__device__ __forceinline__ void from_bits(unsigned b, float& x) { x = __uint_as_float(b); }
__device__ __forceinline__ void from_bits(unsigned b, int& x) { x = int(b); }

__device__ __forceinline__ T value_of(unsigned long long word) {
    T x;
    from_bits(unsigned(word), x);
    return x;
}

__device__ __forceinline__ void publish(unsigned long long* status, unsigned long long tile, unsigned epoch,
                                        unsigned flag, T value) {
    const unsigned long long word = (1ull * ((epoch & EPOCH_MASK) << 2 | flag) << 32) | to_bits(value);
    *reinterpret_cast<volatile unsigned long long*>(status + tile) = word;
}

// The word's flag if it was written in this call, else 0 (not yet).
__device__ __forceinline__ unsigned flag_of(unsigned long long word, unsigned epoch) {
    const unsigned high = unsigned(word >> 32);
    return (high >> 2) == (epoch & EPOCH_MASK) ? (high & 3u) : 0u;
}

__device__ __forceinline__ unsigned long long peek(const unsigned long long* status, unsigned long long tile) {
    return *reinterpret_cast<const volatile unsigned long long*>(status + tile);
}

// The block's tile and the call's epoch, from one ticket.
__device__ __forceinline__ void take_ticket(unsigned long long* ticket, unsigned long long tiles,
                                            unsigned long long* s_tile, unsigned* s_epoch) {
    if (threadIdx.x == 0) {
        const unsigned long long k = atomicAdd(ticket, 1ull);
        *s_epoch = unsigned(k / tiles);
        *s_tile = k % tiles;
    }
    __syncthreads();
}

#endif  // SCAN_TILE_CUH
