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
//
// The element-by-element path (every tile of a matrix whose rows do not start on a float4,
// e.g. 4097^2) maps threads differently from the float4 one: the block's 256 threads cover
// THREADS / TILE rows of the tile at a time, one element each, so the 32 lanes of a warp read
// 32 consecutive floats of a row of A and write 32 consecutive floats of a row of B -- one
// 128-byte run per warp instruction, as padded33 does (PMPP 6.1). With the float4 mapping's
// columns c .. c+3 per thread instead, one scalar instruction of a warp touched every fourth
// float of 512 bytes: 16 sectors for 128 useful bytes on the write side, 50% of memcpy at
// 4097^2 (docs/transpose.md, "Every shape"). The loads are still all issued first, the same
// 16 (TILE = 64) per thread in flight. The shared stores tile[r][lane] are consecutive words,
// the transposed reads tile[lane][r] 65 words apart per lane, 1 mod 32: no bank conflicts.
template <int TILE, class IO, bool VEC_EDGES = false, class Where>
__device__ __forceinline__ void move_tile(const float* __restrict__ a, float* __restrict__ b, size_t m, size_t n,
                                          Where where) {
    constexpr int THREADS = 256, VEC = 4;     // 32 x 8 threads, float4 accesses
    constexpr int VPR = TILE / VEC;           // float4s per tile row
    constexpr int STEP = THREADS / VPR;       // tile rows the block covers with one float4 each
    constexpr int NV = TILE / STEP;           // float4s per thread
    constexpr int SSTEP = THREADS / TILE;     // element path: tile rows covered at a time
    constexpr int SNV = TILE / SSTEP;         // element path: elements per thread (= 4 * NV)
    static_assert(TILE % TILE_DIM == 0 && THREADS % VPR == 0, "TILE must be a multiple of the warp width");
    static_assert(THREADS % TILE == 0 && SNV == 4 * NV, "the element path holds the same values as the float4 one");
    __shared__ float tile[TILE][TILE + 1];

    const int tid = threadIdx.y * TILE_DIM + threadIdx.x;
    const int r0 = tid / VPR, c = tid % VPR * VEC;  // this thread: rows r0 + k*STEP, columns c .. c+3
    const int sr = tid / TILE, sc = tid % TILE;     // element path: rows sr + j*SSTEP, column sc
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
        // element by element: lane = column (see above), rows sr, sr + SSTEP, ...
        float* f = reinterpret_cast<float*>(v);
        const float* row = a + (y0 + sr) * n + x0 + sc;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
        // the same loads through one advancing pointer: ptxas for sm_100 spilled the indexed form
        // below at the 32 registers of __launch_bounds__(256, 8); sm_90 keeps the form it was
        // measured in (docs/transpose.md)
        const bool in_col = sc < cols;
        const size_t step = SSTEP * n;
#pragma unroll
        for (int j = 0; j < SNV; ++j, row += step) f[j] = (in_col && sr + j * SSTEP < rows) ? *row : 0.0f;
#else
#pragma unroll
        for (int j = 0; j < SNV; ++j)
            f[j] = (sr + j * SSTEP < rows && sc < cols) ? row[size_t(j * SSTEP) * n] : 0.0f;
#endif
#pragma unroll
        for (int j = 0; j < SNV; ++j) tile[sr + j * SSTEP][sc] = f[j];
    }
    if (vector || (VEC_EDGES && aligned)) {
#pragma unroll
        for (int k = 0; k < NV; ++k) {
            const float* f = reinterpret_cast<const float*>(&v[k]);
#pragma unroll
            for (int e = 0; e < VEC; ++e) tile[r0 + k * STEP][c + e] = f[e];
        }
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
        // element by element: B's tile row sr + j*SSTEP (a column of A), column sc (a row of A)
        float* out = b + (x0 + sr) * m + y0 + sc;
#pragma unroll
        for (int j = 0; j < SNV; ++j)
            if (sr + j * SSTEP < cols && sc < rows) out[size_t(j * SSTEP) * m] = tile[sc][sr + j * SSTEP];
    }
}
