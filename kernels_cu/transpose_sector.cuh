// coarsened_sector, the transpose that puts every row piece of B on its own 32-byte sectors (any
// pitch), and the helpers its TMA forms share: included by kernels_cu/transpose.cu and by the
// study forms (studies/forms/transpose_forms.cu).
#ifndef TRANSPOSE_SECTOR_CUH
#define TRANSPOSE_SECTOR_CUH

#include "transpose_tile.cuh"

// coarsened_sector<ROWS, VEC_LOADS> (every arch; run only when named, and `best` runs the _vec form
// on Hopper where M is not a multiple of 4; docs/transpose.md): coarsened's
// tile order with B's row pieces moved onto 32-byte sectors, for any pitch. Where B's row x starts
// s_x floats into a sector (s_x = its address / 4 mod 8), the block of tile row y0 writes that
// row's columns y0 - s_x .. y0 - s_x + ROWS - 1 (clipped to 0 .. M - 1): every piece starts and
// ends on a sector, so no sector of B is written by two blocks (with rows at any 4-byte offset,
// e.g. M = 4097, each 128-byte run of coarsened's element path shares its first and last sector
// with the neighbouring tile's block). The pieces of one tile row of B form a parallelogram, and
// together they cover B exactly once; the grid has tile rows up to M + 7.
// The block loads A's rows y0 - 8 .. y0 + ROWS - 1 (tile row 0 is never read: s_x <= 7) and
// columns x0 .. x0 + 63 into shared memory: element by element (lane = column, as move_tile's
// element path: one 128-byte run per warp instruction; zeros outside A), or with VEC_LOADS as the
// 17 aligned float4s that cover each row's 64 floats from wherever the row starts (rows of A at
// any 4-byte offset too), each element stored to its column (slots outside A stay unwritten;
// nothing read from them reaches B). Then half-warps write B: lanes
// 0-15 16 float4s (256 bytes) of row x, lanes 16-31 the same of row x + 32, each lane reading its
// 4 consecutive A rows of one column. The shared rows are 73 floats (1 mod 8: 4 rows apart is 4
// banks on) and the second 32 columns start 2 words later, so the two half-warps, whose s_x are
// equal (32 * M = 0 mod 8), read disjoint banks: 2 lanes per bank, as coarsened's float4 path.
constexpr int SECTOR_COLS = 64, SECTOR_SHIFT = 8, SECTOR_PITCH = SECTOR_COLS + 9;

__device__ __forceinline__ int sector_col(int c) { return c + 2 * (c / 32); }  // column c's word in a shared row

template <int TROWS>
__device__ __forceinline__ void sector_load_elements(const float* __restrict__ a, float (*tile)[SECTOR_PITCH],
                                                     size_t m, size_t n, size_t x0, long long top, int tid) {
    constexpr int STEP = 256 / SECTOR_COLS, LOADS = TROWS / STEP;  // 4 rows at a time
    static_assert(TROWS % STEP == 0, "whole steps of rows");
    const int sr = tid / SECTOR_COLS, sc = tid % SECTOR_COLS;
    const bool in_col = x0 + sc < n;
    float v[LOADS];
#pragma unroll
    for (int j = 0; j < LOADS; ++j) {  // all loads first, as move_tile
        const long long y = top + sr + j * STEP;
        v[j] = in_col && sr + j * STEP > 0 && y >= 0 && y < (long long)m ? __ldcs(a + size_t(y) * n + x0 + sc) : 0.0f;
    }
#pragma unroll
    for (int j = 0; j < LOADS; ++j) tile[sr + j * STEP][sector_col(sc)] = v[j];
}

template <int TROWS>
__device__ __forceinline__ void sector_load_float4s(const float* __restrict__ a, float (*tile)[SECTOR_PITCH],
                                                    size_t m, size_t n, size_t x0, long long top, int tid) {
    constexpr int SPAN = SECTOR_COLS / 4 + 1;  // aligned float4s covering 64 floats that start anywhere
    constexpr int SLOTS = TROWS * SPAN, LOADS = (SLOTS + 255) / 256;
    const int cols = n - x0 < SECTOR_COLS ? int(n - x0) : SECTOR_COLS;  // columns of A inside the tile
    const long long total = (long long)(m * n);
    // row r of the tile starts (top + r) * n + x0 + (a's floats past a float4) mod 4 floats past a float4
    const unsigned n4 = unsigned(n % 4), x4 = unsigned((x0 + reinterpret_cast<size_t>(a) / sizeof(float)) % 4);
    // slot k: tile row r, float4 f of the row's covering span, whose first element is tile column c0
    auto slot = [&](int k, int& r, int& c0) {
        const int i = tid + 256 * k;
        r = i / SPAN;
        c0 = 4 * (i % SPAN) - int((unsigned(top + r) * n4 + x4) % 4);
        const long long y = top + r;
        return i < SLOTS && r > 0 && y >= 0 && y < (long long)m && c0 < cols;  // tile row 0 is never read
    };
    float4 v[LOADS];
#pragma unroll
    for (int k = 0; k < LOADS; ++k) {  // all loads first
        int r, c0;
        v[k] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (!slot(k, r, c0)) continue;
        const long long e0 = (top + r) * (long long)n + (long long)x0 + c0;  // A's element in v[k].x
        if (e0 >= 0 && e0 + 4 <= total) {
            v[k] = __ldcs(reinterpret_cast<const float4*>(a + e0));
        } else {  // A's first or last float4, partly outside the allocation
            float e[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
            for (int i = 0; i < 4; ++i)
                if (e0 + i >= 0 && e0 + i < total) e[i] = a[e0 + i];
            v[k] = make_float4(e[0], e[1], e[2], e[3]);
        }
    }
#pragma unroll
    for (int k = 0; k < LOADS; ++k) {
        int r, c0;
        if (!slot(k, r, c0)) continue;
        const float e[4] = {v[k].x, v[k].y, v[k].z, v[k].w};
#pragma unroll
        for (int i = 0; i < 4; ++i)
            if (c0 + i >= 0 && c0 + i < cols) tile[r][sector_col(c0 + i)] = e[i];
    }
}

// Lane q of a half-warp writes its float4s of row x0 + xl of B (the row's piece: columns y0 - s ..
// y0 - s + ROWS - 1, s its floats before a sector; clipped to 0 .. M - 1), float4 q + 16h reading
// A's rows at tile rows SECTOR_SHIFT - s + 4(q + 16h) .. +3 through at(r), column xl.
template <int ROWS, class At>
__device__ __forceinline__ void sector_write(float* __restrict__ b, size_t m, size_t n, size_t x0, size_t y0, int xl,
                                             int q, At at) {
    if (x0 + xl >= n) return;
    float* row = b + (x0 + xl) * m;
    const int s = int(reinterpret_cast<size_t>(row) / sizeof(float) % 8);  // floats of the row before a sector
#pragma unroll
    for (int h = 0; h < ROWS / 64; ++h) {
        const int j = q + 16 * h;                       // float4 j of the row's piece
        const int r = SECTOR_SHIFT - s + 4 * j;         // tile row of its first element
        const long long c = (long long)y0 - s + 4 * j;  // B's column of its first element
        float e[4] = {at(r), at(r + 1), at(r + 2), at(r + 3)};
        if (c >= 0 && c + 4 <= (long long)m) {
            __stcs(reinterpret_cast<float4*>(row + c), make_float4(e[0], e[1], e[2], e[3]));
        } else {  // the row's first or last piece: clipped
#pragma unroll
            for (int k = 0; k < 4; ++k)
                if (c + k >= 0 && c + k < (long long)m) row[c + k] = e[k];
        }
    }
}

// e[j] = v[(j - rot) % 4], rot = by1 + 2 by2: two rounds of selects (by 1, then by 2), not a branch.
__device__ __forceinline__ void rotate4(const float (&v)[4], float (&e)[4], bool by1, bool by2) {
    float u[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) u[j] = by1 ? v[(j + 3) & 3] : v[j];
#pragma unroll
    for (int j = 0; j < 4; ++j) e[j] = by2 ? u[(j + 2) & 3] : u[j];
}

// sector_write for ROWS = 64 with each lane's reads worked out once: lane q of a half-warp writes
// float4 q of B's rows x0 + xl0 + 16i, i = 0 .. 3. 16M is a multiple of 8, so each of those rows
// starts the same s floats before a sector as the first: the lane reads the same four tile rows
// for all of them, and its float4 has the same place in each. first(r) is the word of tile row r,
// column xl0, next(word, i) that of column xl0 + 16i (a fixed step for coarsened_sector_tma_any's
// rows of words, a flip of the swizzled chunk and a box on for coarsened_sector_tma's), so a row of
// B costs four shared loads, the turn's selects and one store (sector_write works all of it out
// again for every row).
template <int ROWS, class First, class Next>
__device__ __forceinline__ void sector_write_rows(float* __restrict__ b, size_t m, size_t n, size_t x0, size_t y0,
                                                  int xl0, int q, First first, Next next, int rot) {
    static_assert(ROWS == 64, "one float4 a lane and row of B");
    float* row = b + (x0 + xl0) * m;
    const int s = int(reinterpret_cast<size_t>(row) / sizeof(float) % 8);  // floats of the row before a sector
    const int r = SECTOR_SHIFT - s + 4 * q;                                 // tile row of its first element
    const float* at[4];  // the k-th read: row r + (k + rot) % 4 (sector_write's turn)
#pragma unroll
    for (int k = 0; k < 4; ++k) at[k] = first(r + ((k + rot) & 3));
    const long long c = (long long)y0 - s + 4 * q;  // B's column of its first element
    const bool whole = c >= 0 && c + 4 <= (long long)m, by1 = rot & 1, by2 = rot & 2;
#pragma unroll
    for (int i = 0; i < SECTOR_COLS / 16; ++i, row += 16 * m) {
        if (x0 + xl0 + 16 * i >= n) return;
        float v[4], e[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) v[k] = *next(at[k], i);
        rotate4(v, e, by1, by2);  // back in row order
        if (whole) {
            __stcs(reinterpret_cast<float4*>(row + c), make_float4(e[0], e[1], e[2], e[3]));
        } else {  // the row's first or last piece: clipped
#pragma unroll
            for (int k = 0; k < 4; ++k)
                if (c + k >= 0 && c + k < (long long)m) row[c + k] = e[k];
        }
    }
}

// Blocks per SM: as many as the registers of the loads in flight allow without a spill on any
// arch (ptxas, sm_75 to sm_120): at most 40, 64, 64 and 80 registers.
template <int ROWS, bool VEC_LOADS>
__global__ void __launch_bounds__(256, ROWS == 64 ? (VEC_LOADS ? 4 : 6) : (VEC_LOADS ? 3 : 4))
coarsened_sector(const float* __restrict__ a, float* __restrict__ b, size_t m, size_t n) {
    static_assert(ROWS % 64 == 0, "16 float4s per half-warp and step");
    constexpr int TROWS = ROWS + SECTOR_SHIFT;  // A's rows y0 - 8 .. y0 + ROWS - 1
    __shared__ float tile[TROWS][SECTOR_PITCH];
    const int tid = threadIdx.y * TILE_DIM + threadIdx.x;
    const size_t t = size_t(blockIdx.y) * gridDim.x + blockIdx.x;  // coarsened's tile order
    const size_t x0 = t / gridDim.y * SECTOR_COLS, y0 = t % gridDim.y * ROWS;
    const long long top = (long long)y0 - SECTOR_SHIFT;  // A's row in tile row 0
    if (VEC_LOADS)
        sector_load_float4s<TROWS>(a, tile, m, n, x0, top, tid);
    else
        sector_load_elements<TROWS>(a, tile, m, n, x0, top, tid);
    __syncthreads();

    const int lane = tid % 32, warp = tid / 32;
#pragma unroll
    for (int i = 0; i < SECTOR_COLS / 16; ++i) {
        const int xl = warp + 8 * i + 32 * (lane / 16);  // this half-warp's row of B's tile
        const int col = sector_col(xl);
        sector_write<ROWS>(b, m, n, x0, y0, xl, lane % 16, [&](int r) { return tile[r][col]; });
    }
}

#endif  // TRANSPOSE_SECTOR_CUH
