// GEMM C[M,N] = A[M,K] * B[K,N], FP32, row-major (PMPP 5.3-5.6 and 6.1-6.3).
// The GEMM module: the book's rungs live here; the rungs beyond the book are in the headers
// included at the end, one family each (gemm_warptile.cuh: the register- and warp-tiled
// SGEMM and its pipelines; gemm_streamk.cuh: split-K / stream-K; gemm_tc.cuh and
// gemm_wgmma.cuh: the tensor cores). In the order of the table:
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
// The rungs beyond the book, one family a header (host C++ compiles them too: the emulation of
// tests/gemm_emulate.py, which inlines them).
#include "gemm_warptile.cuh"
#include "gemm_streamk.cuh"

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#include "gemm_tc.cuh"
#endif
