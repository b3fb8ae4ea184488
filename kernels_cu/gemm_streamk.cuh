// GEMM beyond the book, FP32 (included by gemm.cu after gemm_warptile.cuh, whose Tiles, loads
// and stores it uses): streamk, the work-sharing kernel of `best`.

// ---------------------------------------------------------------------------------------
// streamk: the kernel behind the `best` rung. The double_buffer loop, plus what the host
// picks per shape (`choose` in pmppbench/workloads/gemm/best.py, docs/gemm.md):
//
// - Which part of which tile a block computes. The first `dp_tiles` blocks of the grid each
//   compute one whole tile of C over all of K, as double_buffer does ("data-parallel"). The
//   K steps of the remaining tiles are laid end to end (tile 0's kt steps, then tile 1's...)
//   and cut into runs of `per` steps, one run per further block. per = kt / S is split-K
//   (S blocks per tile); per = (all those steps / the blocks the GPU holds at once) is
//   stream-K (Osama, Merrill, Cecka, Garland and Owens, PPoPP 2023): every SM gets the same
//   share of the work, so no wave is left partly idle, whatever the tile count.
// - How a tile's parts meet. A block that computed only part of a tile's K writes its
//   partial sums to `partials` (its own slot: no other block writes there), then counts
//   itself in on the tile's `arrivals` counter. The block that arrives last adds every
//   part of the tile in the order of the blocks (the same sum, bit for bit, every run),
//   writes C and puts the counter back to 0 for the next launch. No block waits for
//   another, so any grid is safe, however many blocks are resident.
// - The order of the tiles (a threadblock swizzle): tiles are numbered in groups of
//   `group_m` tile rows, down the columns inside a group, so blocks that run together share
//   rows of A and columns of B in L2. group_m = 1 is the plain row-by-row order.
// - ASYNC_B: B's tile reaches shared memory by cp.async (16 bytes, without registers);
//   A still goes through registers, to be stored transposed.
//
// Why (PMPP's occupancy and tiling arguments, per shape): a grid of T whole tiles on S SMs
// (one block each) runs in ceil(T / S) waves, and the last wave idles the SMs it does not
// fill; large tiles reuse each loaded value most (a 128 x 256 tile: 42 FLOP per byte from
// L2) but make T small, so small products idle most of the GPU. Stream-K keeps the large
// tile and gives every SM the same number of its K steps; the price is the partial tiles
// (written once and read once, through L2) and a pipeline fill per piece of a run. The
// sweeps that set when it pays are in docs/gemm.md ("best").
//
// Two stages of shared memory: static when they fit in 48 KB (then the compiler addresses
// them as double_buffer's), else dynamic, so a 128 x 256 tile with BK = 16 (49.7 KB) fits.

// The tile row tm and column tn of C's tile number `tile` (tiles_m x tiles_n tiles),
// numbered in groups of group_m tile rows (the last group may be shorter), column-major
// inside a group.
__device__ __forceinline__ void swizzled_tile(int tile, int tiles_m, int tiles_n, int group_m, int& tm, int& tn) {
    const int per_group = group_m * tiles_n;
    const int group = tile / per_group;
    const int first = group * group_m;
    const int rows = min(tiles_m - first, group_m);
    const int inside = tile - group * per_group;
    tm = first + inside % rows;
    tn = inside / rows;
}

// The double_buffer loop over K steps [kt_begin, kt_end) of the tile at (m0, n0), into acc.
// Shared memory holds A's two stages (transposed tiles), then B's two, as double_buffer's
// As[2] and Bs[2] do. (Stage by stage -- A0 B0 A1 B1 -- ptxas took 255 registers for the
// 128 x 256 tile instead of 220.)
template <class P, bool ASYNC_B>
__device__ __forceinline__ void k_steps(const float* __restrict__ A, const float* __restrict__ B, int M, int N,
                                        int K, int m0, int n0, int kt_begin, int kt_end, float* smem,
                                        const Place<P>& at, float (&acc)[P::WMITER * P::TM][P::WNITER * P::TN]) {
    constexpr int A_FLOATS = P::BK * P::AS_LD, B_FLOATS = P::BK * P::BN;
    float* As = smem;
    float* Bs = smem + 2 * A_FLOATS;
    zero_acc<P>(acc);
    float4 ra[P::A_VECS], rb[P::B_VECS];
    if constexpr (ASYNC_B) {
        copy_b_tile_async<P>(B, N, K, n0, kt_begin * P::BK, Bs);
        cp_async_commit();
        load_a_tile<P>(A, M, K, m0, kt_begin * P::BK, ra);
        store_a_tile<P>(As, ra);
        cp_async_wait<0>();
    } else {
        load_tile<P>(A, B, M, N, K, m0, n0, kt_begin * P::BK, ra, rb);
        store_tile<P>(As, Bs, ra, rb);
    }
    __syncthreads();
    for (int t = kt_begin; t < kt_end; ++t) {
        const int cur = (t - kt_begin) & 1;
        const bool more = t + 1 < kt_end;  // the same for every thread: the barrier below is uniform
        if (more) {
            if constexpr (ASYNC_B) {  // stage cur ^ 1 was last read before the barrier that ended t - 1
                copy_b_tile_async<P>(B, N, K, n0, (t + 1) * P::BK, Bs + (cur ^ 1) * B_FLOATS);
                cp_async_commit();
                load_a_tile<P>(A, M, K, m0, (t + 1) * P::BK, ra);
            } else {
                load_tile<P>(A, B, M, N, K, m0, n0, (t + 1) * P::BK, ra, rb);
            }
        }
        mma_tile<P>(As + cur * A_FLOATS, Bs + cur * B_FLOATS, at, acc);
        if (more) {
            if constexpr (ASYNC_B) store_a_tile<P>(As + (cur ^ 1) * A_FLOATS, ra);
            else store_tile<P>(As + (cur ^ 1) * A_FLOATS, Bs + (cur ^ 1) * B_FLOATS, ra, rb);
        }
        if constexpr (ASYNC_B) cp_async_wait<0>();
        __syncthreads();
    }
}

// A partial tile in a workspace slot, in the threads' own register order (float4 q of
// thread t at q * THREADS + t): the block that adds it up has the same threads, so every
// access is a coalesced 16-byte one. Through L2 only (.cg): the slot was written by
// another SM.
template <class P>
__device__ __forceinline__ void write_partial(float* slot, const float (&acc)[P::WMITER * P::TM][P::WNITER * P::TN]) {
    constexpr int ROW_VECS = P::WNITER * P::TN / 4;
    float4* dst = reinterpret_cast<float4*>(slot);
#pragma unroll
    for (int i = 0; i < P::WMITER * P::TM; ++i)
#pragma unroll
        for (int j = 0; j < ROW_VECS; ++j)
            __stcg(&dst[(i * ROW_VECS + j) * P::THREADS + threadIdx.x],
                   make_float4(acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2], acc[i][4 * j + 3]));
}

// The last block to arrive at a shared tile writes C = the sum of the tile's partials, in the
// order of the blocks (the same result every run). Each thread sums the float4s it wrote
// itself (its own index in every slot). The accumulators are dead here (their own partial
// is in the workspace too), so the registers go to memory-level parallelism instead: CHUNK
// float4 of one partial are loaded at once, so a thread has CHUNK L2 reads in flight rather
// than one -- this sum is on the kernel's critical path (the last block of a tile is
// usually the last of the grid to finish).
template <class P>
__device__ __forceinline__ void sum_partials(float* __restrict__ C, int M, int N, int m0, int n0, const Place<P>& at,
                                             const float* partials, int first, int last, int u, int per, int kt) {
    constexpr int ROW_VECS = P::WNITER * P::TN / 4;
    constexpr int VECS = P::WMITER * P::TM * ROW_VECS;
    constexpr int CHUNK = VECS < 8 ? VECS : 8;
    static_assert(VECS % CHUNK == 0, "whole chunks");
#pragma unroll 1
    for (int q0 = 0; q0 < VECS; q0 += CHUNK) {
        float4 sum[CHUNK];
#pragma unroll
        for (int c = 0; c < CHUNK; ++c) sum[c] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        for (int h = first; h <= last; ++h) {
            const size_t slot = 2 * size_t(h) + (u == h * per / kt ? 0 : 1);
            const float4* src = reinterpret_cast<const float4*>(partials + slot * (P::BM * P::BN)) + threadIdx.x;
            float4 v[CHUNK];
#pragma unroll
            for (int c = 0; c < CHUNK; ++c) v[c] = __ldcg(src + (q0 + c) * P::THREADS);
#pragma unroll
            for (int c = 0; c < CHUNK; ++c) {
                sum[c].x += v[c].x;
                sum[c].y += v[c].y;
                sum[c].z += v[c].z;
                sum[c].w += v[c].w;
            }
        }
#pragma unroll
        for (int c = 0; c < CHUNK; ++c) {  // float4 q is acc[i][j .. j+3]: store_c's place for it
            const int q = q0 + c, i = q / ROW_VECS, j = (q % ROW_VECS) * 4;
            store4(C, m0 + at.a_off + (i / P::TM) * P::WSUBM + i % P::TM,
                   n0 + at.b_off + (j / P::TN) * P::WSUBN + j % P::TN, M, N, sum[c]);
        }
    }
}

// One piece of a block's work: K steps [kb, ke) of tile (tm, tn); u is the tile's number
// among the shared ones (0 for a data-parallel block).
struct Segment {
    int u, kb, ke, tm, tn;
};

__device__ __forceinline__ Segment segment_at(int it, int end, int kt, int dp_tiles, int tiles_m, int tiles_n,
                                              int group_m) {
    Segment s;
    s.u = it / kt;
    s.kb = it - s.u * kt;
    s.ke = min(kt, s.kb + (end - it));
    swizzled_tile(dp_tiles + s.u, tiles_m, tiles_n, group_m, s.tm, s.tn);
    return s;
}

template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, bool ASYNC_B>
__global__ void __launch_bounds__(Tiles<BM, BN, BK, WM, WN, WNITER, TM, TN>::THREADS,
                                  Tiles<BM, BN, BK, WM, WN, WNITER, TM, TN>::MIN_BLOCKS)
streamk(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K,
        int dp_tiles, int per, int group_m, float* __restrict__ partials, int* __restrict__ arrivals) {
    using P = Tiles<BM, BN, BK, WM, WN, WNITER, TM, TN>;
    extern __shared__ __align__(16) float streamk_stages[];
    constexpr bool STATIC = 2 * P::SMEM_FLOATS * 4 <= 48 * 1024;  // gemm/configs.py's Config.dynamic_smem mirrors it
    __shared__ __align__(16) float static_stages[STATIC ? 2 * P::SMEM_FLOATS : 4];
    float* const stages = STATIC ? static_stages : streamk_stages;
    __shared__ int arrived_last;
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const int kt = (K + BK - 1) / BK;
    const Place<P> at;
    float acc[P::WMITER * TM][P::WNITER * TN];
    // A data-parallel block: one whole tile, all of K, and nothing else. Its own path (not a
    // run of kt steps through the loop below): the K loop is then scheduled without the
    // run's bookkeeping beside the accumulators, and runs as fast as the tuned rung's
    // (docs/gemm.md, "The rule").
    if (int(blockIdx.x) < dp_tiles) {
        int tm, tn;
        swizzled_tile(blockIdx.x, tiles_m, tiles_n, group_m, tm, tn);
        k_steps<P, ASYNC_B>(A, B, M, N, K, tm * BM, tn * BN, 0, kt, stages, at, acc);
        store_c<P>(C, M, N, tm * BM, tn * BN, at, acc);
        return;
    }
    // Else: run g of the shared K steps. The host keeps (tiles - dp_tiles) * kt below 2^31
    // (gemm/configs.py, `schedule_for`).
    const int g = int(blockIdx.x) - dp_tiles;
    int it = g * per;
    const int end = min((tiles_m * tiles_n - dp_tiles) * kt, it + per);
    while (it < end) {
        const Segment s = segment_at(it, end, kt, dp_tiles, tiles_m, tiles_n, group_m);
        k_steps<P, ASYNC_B>(A, B, M, N, K, s.tm * BM, s.tn * BN, s.kb, s.ke, stages, at, acc);
        // The blocks whose runs cover part of tile u: first .. last.
        const int first = s.u * kt / per, last = ((s.u + 1) * kt - 1) / per;
        if (first == last) {
            store_c<P>(C, M, N, s.tm * BM, s.tn * BN, at, acc);  // all of K was here
        } else {
            // Slot 0 holds a block's first tile, slot 1 its last: a run of K steps covers at
            // most two tiles partly (the ones in between, it covers whole).
            const size_t mine = 2 * size_t(g) + (s.u == g * per / kt ? 0 : 1);
            write_partial<P>(partials + mine * (BM * BN), acc);
            __threadfence();  // this thread's partial is visible GPU-wide before the count
            __syncthreads();
            if (threadIdx.x == 0) arrived_last = atomicAdd(&arrivals[s.u], 1) == last - first;
            __syncthreads();
            if (arrived_last) {
                __threadfence();
                sum_partials<P>(C, M, N, s.tm * BM, s.tn * BN, at, partials, first, last, s.u, per, kt);
                if (threadIdx.x == 0) arrivals[s.u] = 0;  // ready for the next launch
            }
        }
        it += s.ke - s.kb;
    }
}

// The tensor-core rungs (--precision tf32, bf16, fp16): kernels_cu/gemm_tc.cuh. Device code only
// (inline PTX): the host emulation of streamk (tests/gemm_emulate.py) compiles without it.
