// The look-backs' device code without their kernels (scan_lookback.cuh has them): the asks of L2
// around a tile's ticket, the walk back over the status words, the look-back by one warp, and the
// staged tile's scan in place and launch bound. Included by kernels_cu/scan.cu and
// scan_lookback.cuh, and by the study's forms of the look-backs (studies/forms/scan_lookback.cu),
// which bring no shipped kernel along with it. A template parameter here serves a study's knob: its
// default is the shipped choice, and the shipped kernels instantiate only the defaults.
#ifndef SCAN_LOOKBACK_PARTS_CUH
#define SCAN_LOOKBACK_PARTS_CUH

#include "scan_tile.cuh"

// An L2 cache policy (createpolicy, sm_80 and newer) for the copy engine's hinted forms: every line
// it names evict_last (LAST) or evict_first.
template <bool LAST>
__device__ __forceinline__ unsigned long long l2_policy() {
    unsigned long long p = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (LAST)
        asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
    else
        asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
#endif
    return p;
}

// `bytes` at p asked of L2; KEEP: marked evict_last, so that they stay until read (lookback_staged's
// prefetch; its copy then reads them evict_first, so they are the first to go after).
template <bool KEEP = false>
__device__ __forceinline__ void prefetch_l2(const void* p, unsigned bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (KEEP)
        asm volatile("cp.async.bulk.prefetch.L2.global.L2::cache_hint [%0], %1, %2;" ::"l"(p), "r"(bytes),
                     "l"(l2_policy<true>()) : "memory");
    else
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
#endif
}

// Tile `tile` of the input asked of L2 (its bytes up to n, a multiple of 16: tiles start at
// multiples of 4 elements, so every tile is 16-byte aligned; a last tile's odd elements are read
// from DRAM by the load itself); KEEP as prefetch_l2's.
template <bool KEEP = false>
__device__ __forceinline__ void prefetch_tile(const T* in, unsigned long long tile, unsigned long long n,
                                              unsigned long long size) {
    const unsigned long long at = tile * size;
    const unsigned bytes = at < n ? unsigned(min(n - at, size) * sizeof(T)) & ~15u : 0u;
    if (bytes) prefetch_l2<KEEP>(in + at, bytes);
}

// Thread 0's ticket (the block's tile and the call's epoch to s_tile, s_epoch; the ticket returned),
// with two asks of L2 around it (sm_90's bulk prefetch; older targets skip them): the tile its block index guesses before the atomic
// (only the first `ahead` blocks, whose tiles nobody fetched ahead, or all when `ahead` is 0), the
// tile `ahead` places on after it. PREFETCH false: the ticket alone (a study form).
template <bool PREFETCH = true>
__device__ __forceinline__ unsigned long long ticket_prefetched(const T* in, unsigned long long* ticket,
                                                                unsigned long long tiles, unsigned long long n,
                                                                unsigned long long size, unsigned long long ahead,
                                                                unsigned long long* s_tile, unsigned* s_epoch) {
    if (PREFETCH && (blockIdx.x < ahead || ahead == 0)) prefetch_tile(in, blockIdx.x, n, size);  // the guess: its index
    const unsigned long long k = atomicAdd(ticket, 1ull);
    *s_epoch = unsigned(k / tiles);
    *s_tile = k % tiles;
    if (PREFETCH && ahead) prefetch_tile(in, k % tiles + ahead, n, size);
    return k;
}

// What a walk back does besides reading: the shipped walk reads a window again at once and counts
// nothing. A study's walk (studies/forms/scan_lookback.cu) is another such type, whose calls may
// sleep before a window is read again or count the windows read.
struct PlainWalk {
    static __device__ __forceinline__ void window(unsigned) {}  // a window of 32 words is read
    static __device__ __forceinline__ void reread() {}         // a window had an unwritten word
};

// The walk of a decoupled look-back by one warp (every lane `lane`): the sum of every tile before
// tile `id` (> 0). Reads the 32 nearest predecessors' words at once, waits until none is unwritten,
// adds the aggregates back to the nearest PREFIX (one warp reduction) and, if no PREFIX was among
// them, moves 32 tiles further back. tests/test_scan.py mutates a copy of the `done` line to stop at the
// nearest word of either flag (an aggregate taken for a prefix), which must fail.
template <class Walk = PlainWalk>
__device__ __forceinline__ T walk_back(const unsigned long long* status, unsigned long long id, unsigned epoch,
                                       unsigned lane) {
    T prefix = T(0);
    long long nearest = (long long)id - 1;  // the window's first predecessor
    while (true) {
        Walk::window(lane);
        const long long j = nearest - lane;
        unsigned long long word;
        unsigned flag;
        while (true) {  // tiles before 0 read as a PREFIX of 0
            word = j >= 0 ? peek(status, j) : 0ull;
            flag = j >= 0 ? flag_of(word, epoch) : PREFIX;
            if (!__any_sync(FULL, flag == 0u)) break;
            Walk::reread();
        }
        const unsigned done = __ballot_sync(FULL, flag == PREFIX);
        const unsigned upto = done ? __ffs(done) - 1 : 31;  // lanes 0 .. upto count
        prefix += warp_sum(lane <= upto && j >= 0 ? value_of(word) : T(0));
        if (done) break;
        nearest -= 32;
    }
    return prefix;
}

// The decoupled look-back of tile `id` by warp 0, whose total is `total`: publishes the tile's
// AGGREGATE (tile 0: its PREFIX), walks back (walk_back), then publishes the tile's PREFIX and
// returns the sum of every tile before it (in every lane).
template <class Walk = PlainWalk>
__device__ __forceinline__ T look_back(unsigned long long* status, unsigned long long id, unsigned epoch, T total) {
    const unsigned lane = threadIdx.x;
    if (id == 0) {
        if (lane == 0) publish(status, 0, epoch, PREFIX, total);
        return T(0);
    }
    if (lane == 0) publish(status, id, epoch, AGGREGATE, total);
    const T prefix = walk_back<Walk>(status, id, epoch, lane);
    if (lane == 0) publish(status, id, epoch, PREFIX, prefix + total);
    return prefix;
}

// ---- the staged tile (lookback_staged's) --------------------------------------------------------

// The launch bound's blocks per SM where shared memory holds fewer of lookback_staged's tiles than
// `blocks`: 100 KB an SM on sm_86, sm_89 and sm_120 (3 tiles of up to 32 KB), 164 KB on sm_80 (4),
// 64 KB on sm_75 (1); 228 KB on sm_90 holds all `blocks`. A bound the SM cannot reach would only
// cost registers (spills).
__host__ __device__ constexpr int staged_bound(int blocks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    return 1;
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 800
    return blocks < 4 ? blocks : 4;
#elif defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 900 || __CUDA_ARCH__ >= 1200)
    return blocks < 3 ? blocks : 3;
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000  // sm_100: its code spills in 6 blocks' 32 registers
    return blocks < 5 ? blocks : 5;
#else
    return blocks;
#endif
}

// One warp's part of a staged tile of ROWS rows (its lane's first vector at `part`, rows 32 vectors
// apart) scanned in place: each output within the part, as Tile::scan_row leaves it in registers.
template <int ROWS, int THREADS>
__device__ __forceinline__ void scan_part(V* part) {
    T carry = T(0);
#pragma unroll 1  // a row at a time (the registers: 7 blocks of 256 threads leave 32 a thread)
    for (int r = 0; r < ROWS; ++r) {
        V v = part[32 * r];
        Tile<ROWS, THREADS>::scan_row(v, carry);
        part[32 * r] = v;
    }
}

#endif  // SCAN_LOOKBACK_PARTS_CUH
