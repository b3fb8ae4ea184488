// GEMM C[M,N] = A[M,K] * B[K,N], FP32, row-major (PMPP 5.3-5.6 and 6.1-6.3).
// Every variant of pmppbench's GEMM table lives here, from the book's naive kernel
// to a warp-tiled, double-buffered SGEMM, in the order of the table:
//
//   naive           one thread per C element, fmaf over the full K
//   tiled<T>        tiled16 / tiled32: T x T tiles of A and B in shared memory (PMPP 5.4-5.5)
//   coarsened<T,CF> one block computes CF horizontally adjacent tiles (PMPP 6.3)
//   regtile<R>      regtile2x2 / regtile4x4: each thread an R x R block of C
//   corner_turning  B stored column-major, loaded coalesced by swapping thread roles (PMPP 6.1)
//   dynamic_smem    extern __shared__ tiles sized at run time from the device (PMPP 5.6)
//   warptile<...>   blocktile8x8 and warptile: 2D block tiling, A transposed in shared memory,
//                   16-byte loads, then warp tiling
//   double_buffer   warptile with two shared-memory stages: next tile's loads overlap the math
//   cp_async        warptile with a 3-stage cp.async pipeline (sm_80+): copies bypass registers
//   pipelined       the large tile's loop made fast: fragments double-buffered in registers,
//                   unchecked interior tiles (one of the kernels `best` chooses from)
//   pipelined_padded pipelined's unchecked loop on every tile, over A and B zero-padded to
//                   K % BK == 0 and N % 4 == 0 (pad_rows, or no copy where they already are)
//   streamk         double_buffer with split-K / stream-K work sharing and a tile swizzle: the
//                   kernel the `best` rung configures per shape
//
// Rules every kernel follows (the course's K = 18 tail and PMPP 5.5's boundary checks):
// - M, N and K are arbitrary. A load outside A or B reads 0.0f instead (a zero product adds
//   nothing), with separate conditions for A (row < M, k < K) and B (k < K, col < N); the C
//   write has its own (row < M, col < N).
// - Threads whose output is outside C still load their share of the tiles and reach every
//   __syncthreads(): the load, compute and barrier conditions are decided separately.
// - Global offsets are size_t (row * K overflows int from 2^31 elements on).

// ---------------------------------------------------------------------------------------
// naive: block (16,16), thread (ty, tx) computes C[row][col] with K fmaf's. Every product
// reads A and B from global memory: 2 loads per 2 FLOP, 0.25 FLOP/B. The body sums the
// terms k < kend; naive passes K.
__device__ __forceinline__ void naive_dot(const float* A, const float* B, float* C, int M, int N, int K, int kend) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < kend; ++k)
            acc = fmaf(A[size_t(row) * K + k], B[size_t(k) * N + col], acc);
        C[size_t(row) * N + col] = acc;
    }
}

extern "C" __global__ void __launch_bounds__(256)
naive(const float* A, const float* B, float* C, int M, int N, int K) {
    naive_dot(A, B, C, M, N, K, K);
}

// ---------------------------------------------------------------------------------------
// tiled16 / tiled32 (PMPP 5.4 "gemm_tiled"): block (T,T) computes a T x T tile of
// C. Per phase the block loads a T x T tile of A and of B (TK = T), one element each per
// thread, then every value in shared memory is used by T threads: global loads drop T-fold.
// Two barriers per phase: the first so nobody reads a tile before it is complete, the second
// so nobody overwrites it (next phase) while a slower thread is still reading it.
//
// No __launch_bounds__ here, on purpose (docs/measurement.md): with
// __launch_bounds__(T * T) ptxas 13.0 schedules this loop differently from the course's
// listing -- for T = 16 it even re-reads threadIdx.x (S2R) and recomputes col inside the K
// loop -- and tiled16 / tiled32 ran slower than the listing. Without it the SASS is the
// listing's, instruction for instruction.
template <int T>
__global__ void tiled(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float As[T][T];
    __shared__ float Bs[T][T];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
    float acc = 0.0f;
    for (int base = 0; base < K; base += T) {
        As[ty][tx] = (row < M && base + tx < K) ? A[size_t(row) * K + base + tx] : 0.0f;
        Bs[ty][tx] = (base + ty < K && col < N) ? B[size_t(base + ty) * N + col] : 0.0f;
        __syncthreads();  // the tiles are complete
#pragma unroll
        for (int k = 0; k < T; ++k)
            acc = fmaf(As[ty][k], Bs[k][tx], acc);
        __syncthreads();  // everyone is done with them: the next phase may overwrite
    }
    if (row < M && col < N) C[size_t(row) * N + col] = acc;
}

// ---------------------------------------------------------------------------------------
// coarsened (PMPP 6.3 with COARSE_FACTOR = 4): block (T,T) computes CF tiles of C
// side by side. The A tile of a phase is loaded once and reused for all CF tiles of B, so A
// is read N / (T*CF) times instead of N / T. The book assumes width % T == 0; here the usual
// zero-fill and the guarded write make it work for any M, N, K. Its __restrict__ pointers
// make the loads LDG.E.CONSTANT (the read-only path), faster than the same kernel with plain
// loads and than the course's listing (docs/measurement.md).
template <int T, int CF>
__global__ void __launch_bounds__(T * T)
coarsened(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[T][T];
    __shared__ float Bs[T][T];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * T + ty;
    const int col0 = blockIdx.x * (T * CF) + tx;
    float acc[CF];
#pragma unroll
    for (int c = 0; c < CF; ++c) acc[c] = 0.0f;

    for (int base = 0; base < K; base += T) {
        As[ty][tx] = (row < M && base + tx < K) ? A[size_t(row) * K + base + tx] : 0.0f;
#pragma unroll
        for (int c = 0; c < CF; ++c) {
            const int col = col0 + c * T;
            Bs[ty][tx] = (base + ty < K && col < N) ? B[size_t(base + ty) * N + col] : 0.0f;
            __syncthreads();  // Bs (and, for c = 0, As) complete
#pragma unroll
            for (int k = 0; k < T; ++k)
                acc[c] = fmaf(As[ty][k], Bs[k][tx], acc[c]);
            __syncthreads();  // Bs free for the next c, As free for the next phase
        }
    }
#pragma unroll
    for (int c = 0; c < CF; ++c) {
        const int col = col0 + c * T;
        if (row < M && col < N) C[size_t(row) * N + col] = acc[c];
    }
}

// ---------------------------------------------------------------------------------------
// regtile2x2 / regtile4x4 (the course notes register tiling): block (16,16) computes a 16R x 16R tile
// of C; thread (ty, tx) keeps the R x R outputs at rows ty + 16i, cols tx + 16j in registers.
// Per k it reads R values of A and R of B from shared memory and does R*R fmaf: shared loads
// per FMA drop from 2 to 2/R, and the larger block tile cuts global loads another R-fold.
// The outputs are strided by 16 rather than contiguous (the seed's local_row + i): then the
// 16 threads of a half-warp read 16 consecutive Bs words (no bank conflict), As reads are
// broadcasts, and the C writes of a warp stay coalesced.
template <int R>
__global__ void __launch_bounds__(256)
regtile(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    constexpr int S = 16;      // threads per block side
    constexpr int BT = S * R;  // C tile side
    constexpr int TK = S;      // K per phase: thread (ty, tx) loads column tx of A's rows, row ty of B
    __shared__ float As[BT][TK];
    __shared__ float Bs[TK][BT];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row0 = blockIdx.y * BT, col0 = blockIdx.x * BT;
    float acc[R][R];
#pragma unroll
    for (int i = 0; i < R; ++i)
#pragma unroll
        for (int j = 0; j < R; ++j) acc[i][j] = 0.0f;

    for (int base = 0; base < K; base += TK) {
#pragma unroll
        for (int i = 0; i < R; ++i) {
            const int row = row0 + ty + S * i;
            As[ty + S * i][tx] = (row < M && base + tx < K) ? A[size_t(row) * K + base + tx] : 0.0f;
        }
#pragma unroll
        for (int j = 0; j < R; ++j) {
            const int col = col0 + tx + S * j;
            Bs[ty][tx + S * j] = (base + ty < K && col < N) ? B[size_t(base + ty) * N + col] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TK; ++k) {
            float a[R], b[R];
#pragma unroll
            for (int i = 0; i < R; ++i) a[i] = As[ty + S * i][k];
#pragma unroll
            for (int j = 0; j < R; ++j) b[j] = Bs[k][tx + S * j];
#pragma unroll
            for (int i = 0; i < R; ++i)
#pragma unroll
                for (int j = 0; j < R; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < R; ++i)
#pragma unroll
        for (int j = 0; j < R; ++j) {
            const int row = row0 + ty + S * i, col = col0 + tx + S * j;
            if (row < M && col < N) C[size_t(row) * N + col] = acc[i][j];
        }
}

// ---------------------------------------------------------------------------------------
// corner_turning (PMPP 6.1): B arrives column-major, Bcm[n * K + k] = B(k, n).
// Loading B's tile as tiled<T> does (thread (ty,tx) takes B(base+ty, col)) would make
// consecutive tx jump K floats apart in memory: uncoalesced. Swapping the roles, thread
// (ty, tx) loads B(base + tx, bx*T + ty), so consecutive tx read consecutive addresses of one
// column. The tile lands in shared memory n-major (Bs[n][k]) and the dot product reads it
// "the wrong way", Bs[tx][k]: a warp's 32 addresses are T + 1 words apart. Without the pad
// they would be 32 apart, all in one bank (the 32-way conflict the course notes warn about for
// TILE_WIDTH 32); with it they fall in 32 different banks.
template <int T>
__global__ void __launch_bounds__(T * T)
corner_turning(const float* __restrict__ A, const float* __restrict__ Bcm, float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[T][T];
    __shared__ float Bs[T][T + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
    const int bn = blockIdx.x * T + ty;  // the column of B this thread loads (roles swapped)
    float acc = 0.0f;
    for (int base = 0; base < K; base += T) {
        As[ty][tx] = (row < M && base + tx < K) ? A[size_t(row) * K + base + tx] : 0.0f;
        Bs[ty][tx] = (base + tx < K && bn < N) ? Bcm[size_t(bn) * K + base + tx] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < T; ++k)
            acc = fmaf(As[ty][k], Bs[tx][k], acc);
        __syncthreads();
    }
    if (row < M && col < N) C[size_t(row) * N + col] = acc;
}

// ---------------------------------------------------------------------------------------
// dynamic_smem (PMPP 5.6): the shared tiles are one `extern __shared__` array whose size the
// host picks at run time from the device's shared memory (pmppbench/workloads/gemm/launch.py), so the
// same binary uses what each GPU offers instead of a compile-time TILE_WIDTH. Block (T,T)
// still computes a T x T tile of C, but each phase covers tk >= T values of K (tk a multiple
// of T): As is T x tk, Bs is tk x T, each thread loads tk/T elements of each, and a K of 1024
// needs a handful of barrier pairs instead of K/T. Like the book, the one array is split by
// hand and indexed linearly.
template <int T>
__global__ void __launch_bounds__(T * T)
dynamic_smem(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K,
             int tk) {
    extern __shared__ float tiles[];
    float* As = tiles;           // As[r * tk + k], r < T, k < tk
    float* Bs = tiles + T * tk;  // Bs[k * T + c]
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
    float acc = 0.0f;
    for (int base = 0; base < K; base += tk) {
        for (int k = tx; k < tk; k += T)
            As[ty * tk + k] = (row < M && base + k < K) ? A[size_t(row) * K + base + k] : 0.0f;
        for (int k = ty; k < tk; k += T)
            Bs[k * T + tx] = (base + k < K && col < N) ? B[size_t(base + k) * N + col] : 0.0f;
        __syncthreads();
#pragma unroll 8
        for (int k = 0; k < tk; ++k)
            acc = fmaf(As[ty * tk + k], Bs[k * T + tx], acc);
        __syncthreads();
    }
    if (row < M && col < N) C[size_t(row) * N + col] = acc;
}

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
#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#include "gemm_tc.cuh"
#endif
