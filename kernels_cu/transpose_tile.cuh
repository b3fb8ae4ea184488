// The two phases of the coarsened transpose, shared by kernels_cu/transpose.cu's coarsened<TILE>
// and the study's tile orders (studies/memory_roof/transpose.cu): compile.py hands every
// kernels_cu/*.cuh to NVRTC as a header, so a kernel file includes this one by name.
#pragma once

// How the tile's float4s come from A and go to B. The shipped kernel streams both ways:
// ld.global.cs / st.global.cs mark A's and B's lines evict-first in L2, since a transpose
// touches each exactly once.
struct StreamingLoadsStores {
    static __device__ __forceinline__ float4 load(const float4* p) { return __ldcs(p); }
    static __device__ __forceinline__ void store(float4* p, float4 v) { __stcs(p, v); }
};

// One TILE x TILE tile of A to its mirrored place in B, by a block of 32 x 8 threads,
// TILE*TILE/256 elements per thread as float4s, through a padded shared tile. The tile is
// the one `where(x0, y0)` names: its first column x0 and first row y0 of A (the caller's tile
// order). Every thread reaches the barrier.
//
// Edges: rows and cols count the part of this tile that lies inside A (block-uniform, at
// most TILE). A full tile of a matrix whose rows start on a float4 (N and M multiples of 4)
// takes the float4 path; with VEC_EDGES so does a partial tile of such a matrix (its rows and
// cols are then multiples of 4 too, so every float4 lies wholly inside A or wholly outside, and
// a bounds test per float4 suffices); every other tile moves element by element with bounds
// tests. Out-of-range slots of the tile hold 0 and are never written out.
template <int TILE, class IO, bool VEC_EDGES = false, class Where>
__device__ __forceinline__ void move_tile(const float* __restrict__ a, float* __restrict__ b, size_t m, size_t n,
                                          Where where) {
    constexpr int THREADS = 256, VEC = 4;     // 32 x 8 threads, float4 accesses
    constexpr int VPR = TILE / VEC;           // float4s per tile row
    constexpr int STEP = THREADS / VPR;       // tile rows the block covers with one float4 each
    constexpr int NV = TILE / STEP;           // float4s per thread
    static_assert(TILE % TILE_DIM == 0 && THREADS % VPR == 0, "TILE must be a multiple of the warp width");
    __shared__ float tile[TILE][TILE + 1];

    const int tid = threadIdx.y * TILE_DIM + threadIdx.x;
    const int r0 = tid / VPR, c = tid % VPR * VEC;  // this thread: rows r0 + k*STEP, columns c .. c+3
    size_t x0, y0;
    where(x0, y0);
    const int rows = m - y0 < TILE ? int(m - y0) : TILE;  // rows of A inside the tile
    const int cols = n - x0 < TILE ? int(n - x0) : TILE;  // columns of A inside the tile
    const bool aligned = n % VEC == 0 && m % VEC == 0;  // every row of A and B starts on a float4
    const bool vector = aligned && rows == TILE && cols == TILE;

    // Phase 1: all loads first (coalesced along A's rows), then the shared stores.
    const float* src = a + (y0 + r0) * n + x0 + c;
    float4 v[NV];
    if (vector) {
#pragma unroll
        for (int k = 0; k < NV; ++k) v[k] = IO::load(reinterpret_cast<const float4*>(src + size_t(k * STEP) * n));
    } else if (VEC_EDGES && aligned) {
#pragma unroll
        for (int k = 0; k < NV; ++k)
            v[k] = r0 + k * STEP < rows && c < cols ? IO::load(reinterpret_cast<const float4*>(src + size_t(k * STEP) * n))
                                                   : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    } else {
#pragma unroll
        for (int k = 0; k < NV; ++k) {
            float* f = reinterpret_cast<float*>(&v[k]);
#pragma unroll
            for (int e = 0; e < VEC; ++e)
                f[e] = (r0 + k * STEP < rows && c + e < cols) ? src[size_t(k * STEP) * n + e] : 0.0f;
        }
    }
#pragma unroll
    for (int k = 0; k < NV; ++k) {
        const float* f = reinterpret_cast<const float*>(&v[k]);
#pragma unroll
        for (int e = 0; e < VEC; ++e) tile[r0 + k * STEP][c + e] = f[e];
    }
    __syncthreads();

    // Phase 2: a row of B is a column of A; write it coalesced, reading the tile transposed.
    // B's tile has `cols` rows (A's columns) and `rows` columns (A's rows).
    float* dst = b + (x0 + r0) * m + y0 + c;
    if (vector) {
#pragma unroll
        for (int k = 0; k < NV; ++k) {
            const int r = r0 + k * STEP;  // row of B's tile
            IO::store(reinterpret_cast<float4*>(dst + size_t(k * STEP) * m),
                      make_float4(tile[c][r], tile[c + 1][r], tile[c + 2][r], tile[c + 3][r]));
        }
    } else if (VEC_EDGES && aligned) {
#pragma unroll
        for (int k = 0; k < NV; ++k) {
            const int r = r0 + k * STEP;
            if (r < cols && c < rows)
                IO::store(reinterpret_cast<float4*>(dst + size_t(k * STEP) * m),
                          make_float4(tile[c][r], tile[c + 1][r], tile[c + 2][r], tile[c + 3][r]));
        }
    } else {
#pragma unroll
        for (int k = 0; k < NV; ++k)
#pragma unroll
            for (int e = 0; e < VEC; ++e)
                if (r0 + k * STEP < cols && c + e < rows) dst[size_t(k * STEP) * m + e] = tile[c + e][r0 + k * STEP];
    }
}
