// GEMM beyond the book, FP32 (included by gemm.cu): 2D block tiling and warp tiling (Simon
// Boehm's public SGEMM worklog, kernels 6 and 10), double buffering, the cp.async pipeline,
// and the large tile's loop that `best` runs (pipelined, pipelined_padded and their copies,
// pad_rows). gemm.cu's rules hold here (arbitrary M, N, K; zeros outside A and B; checked C).

// ---------------------------------------------------------------------------------------
// blocktile8x8, warptile, double_buffer (after siboehm's SGEMM worklog: kernel 6,
// kernel 10, then double buffering). One block of THREADS = 32 * (BM/WM) * (BN/WN) threads
// computes a BM x BN tile of C, marching along K in steps of BK:
//
//   block tile BM x BN   split into warp tiles WM x WN (one per warp)
//   warp tile  WM x WN   split into WMITER x WNITER sub-tiles of WSUBM x WSUBN; the warp's 32
//                        lanes cover one sub-tile with TM x TN each, then step to the next
//   thread               holds (WMITER*TM) x (WNITER*TN) accumulators in registers
//
// A's tile is stored transposed in shared memory (As[k][m]) so that the TM values of A a
// thread needs at step k are contiguous, like B's TN values: both come in as float4 (LDS.128).
// blocktile8x8 is this kernel with one "warp tile" of 16 x 128 and TM = TN = 8 contiguous
// (plain 2D block tiling, kernel 6 of Simon Boehm's public SGEMM worklog); warptile uses 4 x 4 pieces in a 32 x 64 warp
// tile, so that a warp's shared loads hit few distinct addresses without bank conflicts.
// The tile parameters of each variant come from one table in pmppbench/workloads/gemm/ladder.py.

template <int BM_, int BN_, int BK_, int WM_, int WN_, int WNITER_, int TM_, int TN_>
struct Tiles {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, WNITER = WNITER_, TM = TM_, TN = TN_;
    static constexpr int THREADS = 32 * (BM / WM) * (BN / WN);
    static constexpr int WMITER = (WM * WN) / (32 * TM * TN * WNITER);
    static constexpr int WSUBM = WM / WMITER, WSUBN = WN / WNITER;
    static constexpr int LANE_COLS = WSUBN / TN;  // lanes side by side along N in a sub-tile
    static constexpr int AS_LD = BM + 4;  // row length of the transposed A tile, see store_tile
    static constexpr int A_VECS = BM * BK / 4 / THREADS;  // float4 of A each thread loads per tile
    static constexpr int B_VECS = BK * BN / 4 / THREADS;
    static constexpr int SMEM_FLOATS = BK * AS_LD + BK * BN;  // one stage
    // Registers that hold data through the math: accumulators, one step's fragments, the
    // staged float4s of the next tile. Up to 88 of them leave ~40 for addresses and loop
    // state within 128 registers, and then 16 warps (512 threads) share an SM, 4 per
    // scheduler to hide latency: ask ptxas for exactly that. Bigger thread tiles get the
    // registers they want (fewer warps, more work each).
    static constexpr int LIVE = WMITER * TM * WNITER * TN + WMITER * TM + WNITER * TN + 4 * (A_VECS + B_VECS);
    static constexpr int MIN_BLOCKS = LIVE <= 88 && THREADS < 512 ? 512 / THREADS : 1;

    static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must divide the block tile");
    static_assert(THREADS <= 1024, "at most 32 warp tiles per block");
    static_assert(WMITER >= 1 && WMITER * 32 * TM * TN * WNITER == WM * WN, "warp tile != 32 lanes x TM x TN x iterations");
    static_assert(WN % WNITER == 0 && WSUBN % TN == 0 && 32 % LANE_COLS == 0, "lanes must tile a sub-tile");
    static_assert((32 / LANE_COLS) * TM == WSUBM && WM % WMITER == 0, "lanes must tile a sub-tile");
    static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "float4 fragments");
    static_assert((BM * BK / 4) % THREADS == 0 && (BK * BN / 4) % THREADS == 0, "every thread loads whole float4s");
};

// X[row][col .. col+3] of a rows x cols row-major matrix, 0.0f where outside. One 16-byte
// load when cols % 4 == 0: then every row starts 16-byte aligned (CuPy's allocations are
// 256-byte aligned, col is a multiple of 4) and col < cols implies col + 3 < cols. Otherwise
// (K or N not a multiple of 4) four guarded scalar loads: slower, still correct.
__device__ __forceinline__ float4 load4(const float* __restrict__ X, int row, int col, int rows, int cols) {
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (row >= rows || col >= cols) return v;
    const float* p = X + (size_t(row) * cols + col);
    if ((cols & 3) == 0) return *reinterpret_cast<const float4*>(p);
    v.x = p[0];
    if (col + 1 < cols) v.y = p[1];
    if (col + 2 < cols) v.z = p[2];
    if (col + 3 < cols) v.w = p[3];
    return v;
}

// The store counterpart: C[row][col .. col+3] = v where inside C.
__device__ __forceinline__ void store4(float* __restrict__ X, int row, int col, int rows, int cols, float4 v) {
    if (row >= rows || col >= cols) return;
    float* p = X + (size_t(row) * cols + col);
    if ((cols & 3) == 0) {
        *reinterpret_cast<float4*>(p) = v;
        return;
    }
    p[0] = v.x;
    if (col + 1 < cols) p[1] = v.y;
    if (col + 2 < cols) p[2] = v.z;
    if (col + 3 < cols) p[3] = v.w;
}

// Which float4 of a tile the thread's i-th load covers: consecutive threads take consecutive
// float4s of a row. A tiles are BM x BK (row m, columns k..k+3), B tiles BK x BN.
struct Slot {
    int row, col;
};
template <class P>
__device__ __forceinline__ Slot a_slot(int i) {
    const int f = threadIdx.x + i * P::THREADS;
    return {f / (P::BK / 4), (f % (P::BK / 4)) * 4};
}
template <class P>
__device__ __forceinline__ Slot b_slot(int i) {
    const int f = threadIdx.x + i * P::THREADS;
    return {f / (P::BN / 4), (f % (P::BN / 4)) * 4};
}

// Global -> registers: this thread's share of the A tile (rows m0.., cols k0..) and the B
// tile (rows k0.., cols n0..), as float4 along the contiguous dimension. Consecutive threads
// take consecutive float4s of a row, so a warp's loads coalesce.
template <class P>
__device__ __forceinline__ void load_a_tile(const float* __restrict__ A, int M, int K, int m0, int k0,
                                            float4 (&ra)[P::A_VECS]) {
#pragma unroll
    for (int i = 0; i < P::A_VECS; ++i) {
        const Slot s = a_slot<P>(i);
        ra[i] = load4(A, m0 + s.row, k0 + s.col, M, K);
    }
}
template <class P>
__device__ __forceinline__ void load_tile(const float* __restrict__ A, const float* __restrict__ B, int M, int N,
                                          int K, int m0, int n0, int k0, float4 (&ra)[P::A_VECS],
                                          float4 (&rb)[P::B_VECS]) {
    load_a_tile<P>(A, M, K, m0, k0, ra);
#pragma unroll
    for (int i = 0; i < P::B_VECS; ++i) {
        const Slot s = b_slot<P>(i);
        rb[i] = load4(B, k0 + s.row, n0 + s.col, K, N);
    }
}

// Registers -> shared: B as it is (one 16-byte store), A transposed into As[k][m], four
// 4-byte stores. The rows of As are BM + 4 floats long: with BK = 8 the two threads that
// share a row of A write k = 0..3 and k = 4..7, rows 4 * (BM + 4) words apart, which the pad
// moves 16 banks away from each other instead of onto the same bank (a 2-way conflict).
// The pad keeps every row 16-byte aligned for the float4 reads.
template <class P>
__device__ __forceinline__ void store_a_tile(float* __restrict__ As, const float4 (&ra)[P::A_VECS]) {
#pragma unroll
    for (int i = 0; i < P::A_VECS; ++i) {
        const Slot s = a_slot<P>(i);
        const int m = s.row, k = s.col;
        As[(k + 0) * P::AS_LD + m] = ra[i].x;
        As[(k + 1) * P::AS_LD + m] = ra[i].y;
        As[(k + 2) * P::AS_LD + m] = ra[i].z;
        As[(k + 3) * P::AS_LD + m] = ra[i].w;
    }
}
template <class P>
__device__ __forceinline__ void store_tile(float* __restrict__ As, float* __restrict__ Bs, const float4 (&ra)[P::A_VECS],
                                           const float4 (&rb)[P::B_VECS]) {
    store_a_tile<P>(As, ra);
#pragma unroll
    for (int i = 0; i < P::B_VECS; ++i) {
        const Slot s = b_slot<P>(i);
        *reinterpret_cast<float4*>(&Bs[s.row * P::BN + s.col]) = rb[i];
    }
}

// Where this thread's fragments sit in the block tile: a_off / b_off are the first row / col
// of its TM x TN piece in the first sub-tile; sub-tile (wm, wn) adds wm * WSUBM / wn * WSUBN.
template <class P>
struct Place {
    int a_off, b_off;
    __device__ __forceinline__ Place() {
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        a_off = (warp / (P::BN / P::WN)) * P::WM + (lane / P::LANE_COLS) * P::TM;
        b_off = (warp % (P::BN / P::WN)) * P::WN + (lane % P::LANE_COLS) * P::TN;
    }
};

// ITER pieces of T consecutive floats, STRIDE apart in shared memory, into consecutive
// registers: frag[w * T + v] = src[w * STRIDE + v], read as float4 (T is a multiple of 4).
template <int ITER, int T, int STRIDE>
__device__ __forceinline__ void load_fragment(const float* __restrict__ src, float (&frag)[ITER * T]) {
#pragma unroll
    for (int w = 0; w < ITER; ++w)
#pragma unroll
        for (int v = 0; v < T; v += 4) {
            const float4 x = *reinterpret_cast<const float4*>(&src[w * STRIDE + v]);
            frag[w * T + v + 0] = x.x;
            frag[w * T + v + 1] = x.y;
            frag[w * T + v + 2] = x.z;
            frag[w * T + v + 3] = x.w;
        }
}

// The thread's fragments of step k of a stage: WMITER pieces of TM values of A (As[k][...])
// and WNITER pieces of TN values of B.
template <class P>
__device__ __forceinline__ void load_fragments(const float* __restrict__ As, const float* __restrict__ Bs, int k,
                                               const Place<P>& at, float (&a)[P::WMITER * P::TM],
                                               float (&b)[P::WNITER * P::TN]) {
    load_fragment<P::WMITER, P::TM, P::WSUBM>(&As[k * P::AS_LD + at.a_off], a);
    load_fragment<P::WNITER, P::TN, P::WSUBN>(&Bs[k * P::BN + at.b_off], b);
}

template <class P>
__device__ __forceinline__ void outer_product(const float (&a)[P::WMITER * P::TM], const float (&b)[P::WNITER * P::TN],
                                              float (&acc)[P::WMITER * P::TM][P::WNITER * P::TN]) {
#pragma unroll
    for (int i = 0; i < P::WMITER * P::TM; ++i)
#pragma unroll
        for (int j = 0; j < P::WNITER * P::TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
}

// The math of one tile: for each of the BK steps, read the thread's WMITER*TM values of A and
// WNITER*TN values of B from shared memory into registers (float4 reads), then do their outer
// product: (WMITER*TM) * (WNITER*TN) fmaf for (WMITER*TM + WNITER*TN) shared loads.
template <class P>
__device__ __forceinline__ void mma_tile(const float* __restrict__ As, const float* __restrict__ Bs, const Place<P>& at,
                                         float (&acc)[P::WMITER * P::TM][P::WNITER * P::TN]) {
#pragma unroll
    for (int k = 0; k < P::BK; ++k) {
        float a[P::WMITER * P::TM], b[P::WNITER * P::TN];
        load_fragments<P>(As, Bs, k, at, a, b);
        outer_product<P>(a, b, acc);
    }
}

// The thread's accumulators, all zero before the first tile.
template <class P>
__device__ __forceinline__ void zero_acc(float (&acc)[P::WMITER * P::TM][P::WNITER * P::TN]) {
#pragma unroll
    for (int i = 0; i < P::WMITER * P::TM; ++i)
#pragma unroll
        for (int j = 0; j < P::WNITER * P::TN; ++j) acc[i][j] = 0.0f;
}

// Registers -> C, four consecutive columns at a time. INTERIOR: the whole tile lies inside C
// and N % 4 == 0, so every store is an unchecked 16-byte one (pipelined's interior tiles).
template <class P, bool INTERIOR = false>
__device__ __forceinline__ void store_c(float* __restrict__ C, int M, int N, int m0, int n0, const Place<P>& at,
                                        const float (&acc)[P::WMITER * P::TM][P::WNITER * P::TN]) {
#pragma unroll
    for (int wm = 0; wm < P::WMITER; ++wm)
#pragma unroll
        for (int i = 0; i < P::TM; ++i)
#pragma unroll
            for (int wn = 0; wn < P::WNITER; ++wn)
#pragma unroll
                for (int v = 0; v < P::TN; v += 4) {
                    const float* c = &acc[wm * P::TM + i][wn * P::TN + v];
                    const int row = m0 + at.a_off + wm * P::WSUBM + i, col = n0 + at.b_off + wn * P::WSUBN + v;
                    const float4 value = make_float4(c[0], c[1], c[2], c[3]);
                    if constexpr (INTERIOR)
                        *reinterpret_cast<float4*>(&C[size_t(row) * N + col]) = value;
                    else
                        store4(C, row, col, M, N, value);
                }
}

// blocktile8x8 / warptile: load -> barrier -> math -> barrier, one shared stage.
template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN>
__global__ void __launch_bounds__(Tiles<BM, BN, BK, WM, WN, WNITER, TM, TN>::THREADS,
                                  Tiles<BM, BN, BK, WM, WN, WNITER, TM, TN>::MIN_BLOCKS)
warptile(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    using P = Tiles<BM, BN, BK, WM, WN, WNITER, TM, TN>;
    static_assert(P::SMEM_FLOATS * 4 <= 48 * 1024, "static shared memory is limited to 48 KB");
    __shared__ __align__(16) float As[BK * P::AS_LD];
    __shared__ __align__(16) float Bs[BK * BN];
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const Place<P> at;
    float acc[P::WMITER * TM][P::WNITER * TN];
    zero_acc<P>(acc);
    float4 ra[P::A_VECS], rb[P::B_VECS];

    for (int k0 = 0; k0 < K; k0 += BK) {
        load_tile<P>(A, B, M, N, K, m0, n0, k0, ra, rb);
        store_tile<P>(As, Bs, ra, rb);
        __syncthreads();  // tile complete
        mma_tile<P>(As, Bs, at, acc);
        __syncthreads();  // tile consumed
    }
    store_c<P>(C, M, N, m0, n0, at, acc);
}

// double_buffer: two shared stages and one barrier per tile. While the math runs on stage
// `cur`, the next tile's global loads are already in flight into registers; after the math
// they go to the other stage. That stage was last read in the previous iteration, which
// ended with a barrier, so the write is safe; the barrier at the end of this iteration makes
// it visible before the next one reads it. The cost: twice the shared memory and
// A_VECS + B_VECS float4 registers that live across the math.
template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN>
__global__ void __launch_bounds__(Tiles<BM, BN, BK, WM, WN, WNITER, TM, TN>::THREADS,
                                  Tiles<BM, BN, BK, WM, WN, WNITER, TM, TN>::MIN_BLOCKS)
double_buffer(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    using P = Tiles<BM, BN, BK, WM, WN, WNITER, TM, TN>;
    static_assert(2 * P::SMEM_FLOATS * 4 <= 48 * 1024, "static shared memory is limited to 48 KB");
    __shared__ __align__(16) float As[2][BK * P::AS_LD];
    __shared__ __align__(16) float Bs[2][BK * BN];
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const Place<P> at;
    float acc[P::WMITER * TM][P::WNITER * TN];
    zero_acc<P>(acc);
    float4 ra[P::A_VECS], rb[P::B_VECS];

    load_tile<P>(A, B, M, N, K, m0, n0, 0, ra, rb);
    store_tile<P>(As[0], Bs[0], ra, rb);
    __syncthreads();
    const int tiles = (K + BK - 1) / BK;
    for (int t = 0; t < tiles; ++t) {
        const int cur = t & 1;
        const bool more = t + 1 < tiles;  // the same for every thread: the barrier below is uniform
        if (more) load_tile<P>(A, B, M, N, K, m0, n0, (t + 1) * BK, ra, rb);
        mma_tile<P>(As[cur], Bs[cur], at, acc);
        if (more) store_tile<P>(As[cur ^ 1], Bs[cur ^ 1], ra, rb);
        __syncthreads();
    }
    store_c<P>(C, M, N, m0, n0, at, acc);
}

// ---------------------------------------------------------------------------------------
// pipelined: the large-tile loop behind `best` (not a rung of the ladder). One
// whole tile per block, double_buffer's two shared stages, for an SM whose four schedulers
// must each issue an FFMA every cycle: one 128 x 256 block of 8 warps per SM leaves each
// scheduler 2 warps, so latency must hide behind the warp's own instructions. Three changes,
// each behind a switch so that each can be measured alone (docs/gemm.md, "The large-tile loop"):
//
// 1. (FRAGS) Fragments double-buffered in registers: step k's FFMAs run on the fragments
//    loaded during step k - 1, while step k + 1's load.
// 2. (FRAGS) The barrier before the last K step's math: the next tile is stored into the
//    other stage, the barrier, its first fragments loaded, then the last step's FFMAs (on
//    fragments already in registers) overlap the barrier's wait and those loads.
// 3. (FAST_INTERIOR) Interior tiles (the whole BM x BN tile inside C, K a multiple of BK,
//    rows 16-byte aligned) take a path without bounds checks: one pointer per loaded
//    float4, advanced by a constant per tile, unconditional 16-byte loads and stores. Edge
//    tiles take the checked loads of the other rungs (load_tile / store_c).
//
// `best` launches 3 alone at BK = 16 (FRAGS = false). With 1 and 2 the 24 fragment registers
// put the kernel at ~250 registers, and ptxas then sinks the next tile's global loads to
// just before their shared stores, exposing their latency. BK = 16 needs dynamic shared
// memory (2 stages of 24.8 KB).
//
// Safety of one barrier: stage s is rewritten at the last step of tile t (with tile t + 1);
// its previous contents (tile t - 1) were last read while loading fragments of tile t - 1's
// steps 1 .. BK - 1, all before the barrier at tile t - 1's last step.

// The global loads of one tile on an interior tile: pa[i] / pb[i] point at this thread's
// float4s of the current tile; next() moves them one tile along K. CLAMP (pipelined_padded,
// where the tile may reach past C): a row of A past M - 1 reads row M - 1 and a float4 of B
// past column N - 4 reads the last one. Both are real memory, and what they feed lands only
// in rows and columns of the tile that store_c leaves out, so no load needs a check.
template <class P, bool CLAMP = false>
struct InteriorLoads {
    const float* pa[P::A_VECS];
    const float* pb[P::B_VECS];
    int b_step;
    __device__ __forceinline__ InteriorLoads(const float* __restrict__ A, const float* __restrict__ B, int N, int K,
                                             int m0, int n0, int M = 0) {
#pragma unroll
        for (int i = 0; i < P::A_VECS; ++i) {
            const Slot s = a_slot<P>(i);
            pa[i] = A + (size_t(CLAMP ? min(m0 + s.row, M - 1) : m0 + s.row) * K + s.col);
        }
#pragma unroll
        for (int i = 0; i < P::B_VECS; ++i) {
            const Slot s = b_slot<P>(i);
            if constexpr (CLAMP)
                pb[i] = B + (size_t(s.row) * N + min(n0 + s.col, N - 4));
            else
                pb[i] = B + (size_t(s.row) * N + n0 + s.col);
        }
        b_step = P::BK * N;
    }
    __device__ __forceinline__ void load(float4 (&ra)[P::A_VECS], float4 (&rb)[P::B_VECS]) const {
#pragma unroll
        for (int i = 0; i < P::A_VECS; ++i) ra[i] = __ldg(reinterpret_cast<const float4*>(pa[i]));
#pragma unroll
        for (int i = 0; i < P::B_VECS; ++i) rb[i] = __ldg(reinterpret_cast<const float4*>(pb[i]));
    }
    __device__ __forceinline__ void next() {
#pragma unroll
        for (int i = 0; i < P::A_VECS; ++i) pa[i] += P::BK;
#pragma unroll
        for (int i = 0; i < P::B_VECS; ++i) pb[i] += b_step;
    }
};

// The K loop of one tile (m0, n0) over all of K into acc. INTERIOR: without bounds checks.
// FRAGS: changes 1 and 2 (fragments double-buffered, the barrier before the last step's
// math); without them the loop is double_buffer's (load the next tile, the math, store it,
// the barrier), so the interior path can be measured on its own. CLAMP: the interior
// loads clamped to A's last row and B's last float4 (pipelined_padded).
template <class P, bool INTERIOR, bool FRAGS, bool CLAMP = false>
__device__ __forceinline__ void pipelined_loop(const float* __restrict__ A, const float* __restrict__ B, int M, int N,
                                               int K, int m0, int n0, float (*As)[P::BK * P::AS_LD],
                                               float (*Bs)[P::BK * P::BN], const Place<P>& at,
                                               float (&acc)[P::WMITER * P::TM][P::WNITER * P::TN]) {
    static_assert(P::BK % 2 == 0, "the fragment buffers alternate within a tile");
    float4 ra[P::A_VECS], rb[P::B_VECS];
    InteriorLoads<P, CLAMP> g(A, B, N, K, m0, n0, M);
    if constexpr (INTERIOR) {
        g.load(ra, rb);
        g.next();
    } else {
        load_tile<P>(A, B, M, N, K, m0, n0, 0, ra, rb);
    }
    store_tile<P>(As[0], Bs[0], ra, rb);
    __syncthreads();
    float fa[FRAGS ? 2 : 1][P::WMITER * P::TM], fb[FRAGS ? 2 : 1][P::WNITER * P::TN];
    if constexpr (FRAGS) load_fragments<P>(As[0], Bs[0], 0, at, fa[0], fb[0]);
    const int tiles = (K + P::BK - 1) / P::BK;
    for (int t = 0; t < tiles; ++t) {
        const int cur = t & 1;
        const bool more = t + 1 < tiles;  // the same for every thread: the barrier below is uniform
        if (more) {
            if constexpr (INTERIOR) {
                g.load(ra, rb);
                g.next();
            } else {
                load_tile<P>(A, B, M, N, K, m0, n0, (t + 1) * P::BK, ra, rb);
            }
        }
        if constexpr (FRAGS) {
#pragma unroll
            for (int k = 0; k < P::BK; ++k) {
                if (k + 1 < P::BK) {
                    load_fragments<P>(As[cur], Bs[cur], k + 1, at, fa[(k + 1) & 1], fb[(k + 1) & 1]);
                } else {
                    if (more) store_tile<P>(As[cur ^ 1], Bs[cur ^ 1], ra, rb);
                    __syncthreads();
                    if (more) load_fragments<P>(As[cur ^ 1], Bs[cur ^ 1], 0, at, fa[0], fb[0]);
                }
                outer_product<P>(fa[k & 1], fb[k & 1], acc);
            }
        } else {
#pragma unroll
            for (int k = 0; k < P::BK; ++k) {
                load_fragments<P>(As[cur], Bs[cur], k, at, fa[0], fb[0]);
                outer_product<P>(fa[0], fb[0], acc);
            }
            if (more) store_tile<P>(As[cur ^ 1], Bs[cur ^ 1], ra, rb);
            __syncthreads();
        }
    }
}

// Two stages: static shared memory when they fit in 48 KB, else dynamic (BK = 16 with the
// 128 x 256 tile: 49.7 KB; gemm/configs.py's Config.dynamic_smem mirrors it).
template <class P>
__device__ __forceinline__ float* pipelined_stage_memory() {
    constexpr bool STATIC = 2 * P::SMEM_FLOATS * 4 <= 48 * 1024;
    __shared__ __align__(16) float static_stages[STATIC ? 2 * P::SMEM_FLOATS : 4];
    extern __shared__ __align__(16) float pipelined_stages[];
    return STATIC ? static_stages : pipelined_stages;
}

// FAST_INTERIOR = false: every tile through the checked path (without change 3);
// FRAGS = false: without changes 1 and 2 (double_buffer's loop).
template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, bool FAST_INTERIOR, bool FRAGS>
__global__ void __launch_bounds__(Tiles<BM, BN, BK, WM, WN, WNITER, TM, TN>::THREADS,
                                  Tiles<BM, BN, BK, WM, WN, WNITER, TM, TN>::MIN_BLOCKS)
pipelined(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    using P = Tiles<BM, BN, BK, WM, WN, WNITER, TM, TN>;
    float* const stages = pipelined_stage_memory<P>();
    auto As = reinterpret_cast<float(*)[BK * P::AS_LD]>(stages);
    auto Bs = reinterpret_cast<float(*)[BK * BN]>(stages + 2 * BK * P::AS_LD);
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const Place<P> at;
    float acc[P::WMITER * TM][P::WNITER * TN];
    zero_acc<P>(acc);
    const bool interior =
        FAST_INTERIOR && m0 + BM <= M && n0 + BN <= N && K % BK == 0 && N % 4 == 0;  // K % BK == 0: K % 4 == 0
    if (interior) {
        pipelined_loop<P, true, FRAGS>(A, B, M, N, K, m0, n0, As, Bs, at, acc);
        store_c<P, true>(C, M, N, m0, n0, at, acc);
    } else {
        pipelined_loop<P, false, FRAGS>(A, B, M, N, K, m0, n0, As, Bs, at, acc);
        store_c<P>(C, M, N, m0, n0, at, acc);
    }
}

// pipelined_padded: pipelined's unchecked loop (FRAGS = false) on every tile, edge tiles too,
// for the shapes where pipelined can take it on none (K % BK != 0 or N % 4 != 0: rows of A or
// B that do not start on 16 bytes) or only on some. A is M x kp and B is kp x np, row-major
// (kp: K rounded up to BK, np: N rounded up to 4), zero in the columns K.. of A and the rows
// K.. of B (what zero adds nothing to): the caller passes copies made by pad_rows where K or
// N is off, the inputs themselves where not. The loads are clamped (InteriorLoads), C is
// M x N and stored through the checked store_c (4-byte stores where N % 4 != 0): once per
// tile, against K / BK checked load steps in pipelined's edge path.
// kp and np come from the host: computed here from K and N, they make ptxas sink the next
// tile's global loads to just before their shared stores, exposing their latency; passed in,
// the loop's SASS is pipelined's interior loop (docs/gemm.md, "Odd shapes").
template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN>
__global__ void __launch_bounds__(Tiles<BM, BN, BK, WM, WN, WNITER, TM, TN>::THREADS,
                                  Tiles<BM, BN, BK, WM, WN, WNITER, TM, TN>::MIN_BLOCKS)
pipelined_padded(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N,
                 int kp, int np) {
    using P = Tiles<BM, BN, BK, WM, WN, WNITER, TM, TN>;
    float* const stages = pipelined_stage_memory<P>();
    auto As = reinterpret_cast<float(*)[BK * P::AS_LD]>(stages);
    auto Bs = reinterpret_cast<float(*)[BK * BN]>(stages + 2 * BK * P::AS_LD);
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const Place<P> at;
    float acc[P::WMITER * TM][P::WNITER * TN];
    zero_acc<P>(acc);
    pipelined_loop<P, true, false, true>(A, B, M, np, kp, m0, n0, As, Bs, at, acc);
    store_c<P>(C, M, N, m0, n0, at, acc);
}

// pad_rows: dst (rows_out x ld, ld % 4 == 0) = src (rows x cols, row-major) with zeros to the
// right of each row and below the last: pipelined_padded's operands where K % BK != 0 or
// N % 4 != 0. Each thread writes one float4 of dst per row it visits (a 16-byte store, the
// source through load4's guarded loads); the rows are strided over gridDim.y (at most 65535).
extern "C" __global__ void __launch_bounds__(256)
pad_rows(const float* __restrict__ src, float* __restrict__ dst, int rows, int cols, int rows_out, int ld) {
    const int col = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (col >= ld) return;
    for (int row = blockIdx.y; row < rows_out; row += gridDim.y)
        *reinterpret_cast<float4*>(&dst[size_t(row) * ld + col]) = load4(src, row, col, rows, cols);
}

// ---------------------------------------------------------------------------------------
// cp_async: warptile fed by a 3-stage cp.async pipeline (sm_80+). cp.async copies global
// memory straight into shared memory without passing through registers, and the copies run
// while the thread goes on: the tiles of the next two K steps are in flight while the math
// runs on the current one. A is still stored transposed: its elements are copied 4 bytes at
// a time to their transposed places (the same sectors serve the four copies of a thread
// from L1: .ca); B comes in 16 bytes at a time when N % 4 == 0. Out-of-range elements use
// the zero-fill form (source size 0), so the edge rules stay those of the other kernels.
// Built for an older GPU (or compiled for the host), the helpers are ordinary copies with
// the same result.

__device__ __forceinline__ void cp_async4(float* smem, const float* gmem, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(gmem), "r"(valid ? 4 : 0)
                 : "memory");
#else
    *smem = valid ? *gmem : 0.0f;
#endif
}

__device__ __forceinline__ void cp_async16(float* smem, const float* gmem, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(valid ? 16 : 0)
                 : "memory");
#else
    *reinterpret_cast<float4*>(smem) = valid ? *reinterpret_cast<const float4*>(gmem) : make_float4(0.f, 0.f, 0.f, 0.f);
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Wait until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

// Start copying B's tile (rows k0.., cols n0..) into one stage: 16 bytes at a time when
// N % 4 == 0, else 4. An invalid element reads nothing and writes 0; its source pointer is
// the matrix itself, a valid address.
template <class P>
__device__ __forceinline__ void copy_b_tile_async(const float* __restrict__ B, int N, int K, int n0, int k0, float* Bs) {
#pragma unroll
    for (int i = 0; i < P::B_VECS; ++i) {
        const Slot s = b_slot<P>(i);
        const int r = s.row, c = s.col;
        float* dst = &Bs[r * P::BN + c];
        if ((N & 3) == 0) {  // rows 16-byte aligned: one 16-byte copy (c < N implies c + 3 < N)
            const bool valid = k0 + r < K && n0 + c < N;
            cp_async16(dst, valid ? B + (size_t(k0 + r) * N + n0 + c) : B, valid);
        } else {
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const bool valid = k0 + r < K && n0 + c + j < N;
                cp_async4(dst + j, valid ? B + (size_t(k0 + r) * N + n0 + c + j) : B, valid);
            }
        }
    }
}

// Start copying tile (m0, n0, k0) into one stage, A transposed 4 bytes at a time.
template <class P>
__device__ __forceinline__ void copy_tile_async(const float* __restrict__ A, const float* __restrict__ B, int M, int N,
                                                int K, int m0, int n0, int k0, float* As, float* Bs) {
#pragma unroll
    for (int i = 0; i < P::A_VECS; ++i) {
        const Slot s = a_slot<P>(i);
        const int m = s.row, k = s.col;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const bool valid = m0 + m < M && k0 + k + j < K;
            cp_async4(&As[(k + j) * P::AS_LD + m], valid ? A + (size_t(m0 + m) * K + k0 + k + j) : A, valid);
        }
    }
    copy_b_tile_async<P>(B, N, K, n0, k0, Bs);
}

// The pipeline. Before tile t's math: wait for its copies (each thread's own), then one
// barrier makes everyone's visible -- and guarantees everyone has finished tile t-1's math,
// so tile t-1's stage can be refilled with tile t+2. Every thread commits exactly one group
// per step (empty at the end), which keeps the wait count uniform.
template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN>
__global__ void __launch_bounds__(Tiles<BM, BN, BK, WM, WN, WNITER, TM, TN>::THREADS,
                                  Tiles<BM, BN, BK, WM, WN, WNITER, TM, TN>::MIN_BLOCKS)
cp_async(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    using P = Tiles<BM, BN, BK, WM, WN, WNITER, TM, TN>;
    constexpr int STAGES = 3;
    static_assert(STAGES * P::SMEM_FLOATS * 4 <= 48 * 1024, "static shared memory is limited to 48 KB");
    __shared__ __align__(16) float As[STAGES][BK * P::AS_LD];
    __shared__ __align__(16) float Bs[STAGES][BK * BN];
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const Place<P> at;
    float acc[P::WMITER * TM][P::WNITER * TN];
    zero_acc<P>(acc);

    const int tiles = (K + BK - 1) / BK;
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < tiles) copy_tile_async<P>(A, B, M, N, K, m0, n0, s * BK, As[s], Bs[s]);
        cp_async_commit();
    }
    for (int t = 0; t < tiles; ++t) {
        cp_async_wait<STAGES - 2>();  // tile t has landed (this thread's part)
        __syncthreads();              // everyone's part; tile t-1's stage is free
        const int next = t + STAGES - 1;
        if (next < tiles) copy_tile_async<P>(A, B, M, N, K, m0, n0, next * BK, As[next % STAGES], Bs[next % STAGES]);
        cp_async_commit();
        mma_tile<P>(As[t % STAGES], Bs[t % STAGES], at, acc);
    }
    store_c<P>(C, M, N, m0, n0, at, acc);
}
