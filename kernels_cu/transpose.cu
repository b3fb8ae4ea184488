// Matrix transpose B = A^T (PMPP 5.4 tiling, 6.1 coalescing, 6.3 thread coarsening; the
// course lab, "矩阵转置").
// A is M x N, B is N x M, both FP32 row-major: B[x][y] = A[y][x]. Each element is read once
// and written once, so the logical traffic is 8*M*N bytes and there is no arithmetic at all:
// every variant is a pure question of how well it uses the memory system.
//
// x is always a column of A and y a row of A.
//
// Index type. copy, naive and tiled are templates on the type I of m, n, x, y and
// the offsets y * n + x, and the host picks the instantiation per shape
// (pmppbench/workloads/transpose.py, index_type): `int`, the course's, while M*N and the
// padded edges fit in 31 bits, and `long long` beyond -- a 65536 x 65536 matrix already has
// 2^32 elements. The 64-bit instantiation needs 20 registers where int needs 12, and is
// slower than the course's int listing at the course's sizes; with int the four run as the
// listing does (docs/measurement.md). Their pointers are plain, as the course's: __restrict__
// (LDG.E.CONSTANT loads) gains nothing here.
//
// The variants, in the order of the table:
//   copy       the same 32x32 block and one element per thread, but B = A: the bandwidth
//              reference for this access shape (never a transpose; it is checked against A)
//   naive      coalesced reads, writes strided by M floats
//   shared32   tiled<32>: through a 32x32 shared tile, both sides coalesced, 32-way bank
//              conflicts on the transposed shared read
//   padded33   tiled<33>: the same kernel with a row stride of 33 -- no bank conflicts
//   coarsened  coarsened<64>: 32x8 threads move a 64x64 padded tile, 16 elements each, as
//              float4 loads and streaming float4 stores (partial tiles too where N and M are
//              multiples of 4), tiles taken column by column
//   coarsened_tma  (sm_90, not in the default table) coarsened's tiles and order with A's tile
//              loaded by the copy engine (TMA): at the end of this file
//   coarsened_tma_store, _ef, _wide, _wide_ef  (sm_90, not in the default table) the same with
//              B's tile stored by the copy engine too (_ef: with an L2 evict-first policy; _wide:
//              tiles of 64 columns x 128 rows of A, 512-byte row pieces of B)
//   coarsened_tma_skew  (sm_90, not in the default table, M = 4 mod 8) coarsened_tma with the
//              odd rows of B's tiles started 4 columns early, so that every run starts on a sector
//   coarsened_sector, _vec, _tall, _tall_vec  (every arch, not in the default table) coarsened's
//              order with each row piece of B shifted onto 32-byte sectors at any pitch: before
//              the TMA forms; coarsened_sector_tma (sm_90, N a multiple of 4) the same with A's
//              tile loaded by the copy engine through a map of A's rows four at a time: at the end
//   coarsened_sector_bulk  (sm_90, not in the default table) the same pieces of B with A's tile rows
//              brought in by one bulk copy each (no map), each row at its lines' offset: at the end
//   coarsened_sector_tma_lines  (sm_90, not in the default table) the bulk form's layout filled by 32
//              tensor boxes through a map of A's rows 32 at a time: at the end

constexpr unsigned TILE_DIM = 32;  // the course's tile: one 32 x 32 block of threads

// copy: what a transpose would cost if it did not have to transpose. Same grid, same block
// (32, 32), same one element per thread and the same bounds test as naive; both the read and
// the write are coalesced. It is the course's reference and deliberately stays that simple:
// a copy that moves several elements per thread (like coarsened) would be a different
// access pattern, so coarsened may well exceed 100% of this copy.
template <class I>
__global__ void copy(const float* a, float* b, I m, I n) {
    const I x = I(blockIdx.x) * TILE_DIM + I(threadIdx.x);  // column of A
    const I y = I(blockIdx.y) * TILE_DIM + I(threadIdx.y);  // row of A
    if (x < n && y < m) b[y * n + x] = a[y * n + x];
}

// naive: one thread per element, block (32, 32). Within a warp x runs over 32 adjacent
// columns: the read of A is one 128-byte row segment, but the write B[x][y] puts adjacent
// threads M floats apart, 32 separate sectors for one store instruction.
template <class I>
__global__ void naive(const float* a, float* b, I m, I n) {
    const I x = I(blockIdx.x) * TILE_DIM + I(threadIdx.x);  // column of A
    const I y = I(blockIdx.y) * TILE_DIM + I(threadIdx.y);  // row of A
    if (x < n && y < m) b[x * m + y] = a[y * n + x];
}

// tiled<TILE_STRIDE, I>: the course's shared-memory transpose (PMPP 5.4 tiling applied to data
// movement). The block loads a 32x32 tile of A row by row (coalesced), waits, then writes the
// tile to B row by row (coalesced) with two swaps: block indices (the tile lands at the
// mirrored place in B) and tile indices (tile[tx][ty], so a row of the tile becomes a column).
//
// TILE_STRIDE is the length of one shared row and the only difference between the variants:
//   tiled<32> (shared32): in the write phase a warp reads down a column, tile[tx][ty] for
//     tx = 0..31, addresses 32 floats apart -- all in one bank, a 32-way conflict.
//   tiled<33> (padded33): one unused float per row shifts each row by one bank, so the same
//     column touches banks 0..31 once each. 128 more bytes of shared memory per block.
//
// The predicates wrap only the global accesses, never the barrier: every thread of the block
// reaches __syncthreads(), including those outside A on an edge tile. That single barrier
// sits between the shared writes and reads of *other* threads' elements; nothing is written
// to the tile after it, so no second barrier is needed.
template <int TILE_STRIDE, class I>
__global__ void tiled(const float* a, float* b, I m, I n) {
    __shared__ float tile[TILE_DIM][TILE_STRIDE];
    const unsigned tx = threadIdx.x, ty = threadIdx.y;
    const I x = I(blockIdx.x) * TILE_DIM + I(tx);  // column of A
    const I y = I(blockIdx.y) * TILE_DIM + I(ty);  // row of A
    if (x < n && y < m) tile[ty][tx] = a[y * n + x];
    __syncthreads();
    const I out_x = I(blockIdx.y) * TILE_DIM + I(tx);  // column of B: from A's row block
    const I out_y = I(blockIdx.x) * TILE_DIM + I(ty);  // row of B: from A's column block
    if (out_x < m && out_y < n) b[out_y * m + out_x] = tile[tx][ty];
}

#include "transpose_tile.cuh"  // move_tile: coarsened's two phases, shared with the study
#include "mbarrier.cuh"        // coarsened_sector_bulk's copies and their barrier (sm_90)

// coarsened<TILE>: thread coarsening (PMPP 6.3) on top of padded33. A block of 32 x 8
// threads moves a TILE x TILE tile, TILE*TILE/256 elements per thread (coarsened<64>: 16, as
// 4 float4s; coarsened<32>: 4, one float4).
//
// Why it beats padded33, although both move the same bytes without bank conflicts:
//  - Bytes in flight (PMPP 6.2, hiding memory latency). A memory-bound kernel runs at
//    (bytes in flight) / latency, Little's law. padded33 keeps one 4-byte load per thread
//    outstanding; here every thread first issues all of its loads into registers and only
//    then stores them to shared memory: 64 bytes per thread for TILE = 64.
//  - Overhead per element. Index arithmetic, bounds set-up and the barrier are paid once
//    per thread for many elements instead of once per element.
//  - Longer runs. With TILE = 64 every row of A read and every row of B written is 256
//    contiguous bytes instead of 128.
//
// The memory roof: the ceiling is a device-to-device memcpy of the same bytes, the
// `memcpy` row of the table. Each choice below was measured against the alternatives in
// studies/memory_roof/transpose.cu (docs/transpose.md, "What closed the gap"):
//  - The tile order. Blocks start roughly in the order of their linear id, so the tiles in
//    flight at one moment are consecutive ones. Taken row by row over A, as the grid's own
//    order, they read a contiguous band of A's rows but write a few KB into every row of B;
//    taken column by column over A (t -> tile column t / gridDim.y, tile row t % gridDim.y),
//    they write a contiguous band of B's rows and read a few KB from every row of A. The
//    write side is the one that wants contiguity.
//  - Vector width together with the cache hints. float4 loads and stores let a warp move
//    512 bytes per instruction (2 rows of 256) instead of 128, a quarter of the memory
//    instructions. Both sides are touched exactly once: streaming loads (ld.global.cs,
//    `__ldcs`) and streaming stores (st.global.cs, `__stcs`) mark A's and B's lines
//    evict-first in L2. The hints pay only together with float4.
//  - One tile per block. Persistent blocks looping over tiles drift apart and spread the
//    tiles in flight over A and B; 32x32 tiles (4 elements per thread) keep too few bytes in
//    flight per thread.
// The tile rows are TILE + 1 floats: TILE + 1 = 1 (mod 32). The scalar path's transposed read
// tile[c][r] of one warp (c = 32 consecutive values) hits 32 different banks; the float4 path
// reads tile[c + e][r] with c = 4 * (lane % 16), a 2-way conflict, which is harmless here
// (shared memory runs far below its bandwidth in a transpose).
//
// The tile's two phases and its edges are move_tile's (kernels_cu/transpose_tile.cuh). The
// partial tiles of a matrix whose N and M are multiples of 4 move as float4s too, with a bounds
// test per float4 (move_tile's VEC_EDGES): element by element they cost a few points of memcpy at
// shapes that are not multiples of the tile (docs/transpose.md, "Every shape").
template <int TILE>
__global__ void __launch_bounds__(256, 8)
coarsened(const float* __restrict__ a, float* __restrict__ b, size_t m, size_t n) {
    // Tile order: the grid has one block per tile (gridDim.x tile columns, gridDim.y tile rows
    // of A), but the blocks, dispatched in the order of t, take A's tiles column by column,
    // i.e. B's tiles row by row: the tiles in flight at one moment write one contiguous band
    // of B (see above).
    move_tile<TILE, StreamingLoadsStores, true>(a, b, m, n, [](size_t& x0, size_t& y0) {
        const size_t t = size_t(blockIdx.y) * gridDim.x + blockIdx.x;
        x0 = t / gridDim.y * TILE;  // first column of A in this tile
        y0 = t % gridDim.y * TILE;  // first row of A in this tile
    });
}

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

// coarsened_tma<TILE> (sm_90, not in the default table: `--variants coarsened_tma`): the same
// 64 x 64 tiles in the same order as coarsened, with A's tile brought into shared memory by
// Hopper's copy engine instead of the threads' loads (docs/transpose.md, "Every shape": the
// idea for the pitches that are not a multiple of 256 bytes). One thread hands the engine two
// boxes of 32 columns x TILE rows of A (cp.async.bulk.tensor, a tensor map the host encodes once
// per shape: pmppbench/workloads/transpose.py), the engine counts their bytes on an mbarrier
// and zero-fills what lies past A; the block waits on the barrier, then writes B as float4s.
//
// The box rows are 128 bytes, stored with the engine's 128-byte swizzle: 16-byte chunk q of
// tile row r lands at chunk q ^ (r % 8) of that row (the boxes are 1024-byte aligned). A warp reads one chunk (4 columns of A)
// of 32 consecutive rows, 8 lanes per phase on 8 consecutive rows: 8 different chunks, no bank
// conflict (unswizzled, the 8 rows would hit the same 4 banks). Each lane then holds 4 columns
// of one row, and groups of 4 lanes transpose their 4 x 4 blocks by two rounds of shuffles, so
// that each lane holds 4 consecutive elements of a row of B: one 16-byte streaming store, the
// warp writing 4 rows of B x 128 bytes. N and M must be multiples of 4 (the map's row stride is
// a multiple of 16 bytes; B's rows start on a float4): the host runs it only there.
#if defined(__CUDACC__)
struct __align__(64) TransposeMap { unsigned long long words[16]; };  // CUtensorMap: 128 opaque bytes

__device__ __forceinline__ unsigned smem_address(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16-byte chunk q of a 128-byte box row `line` under the 128-byte swizzle: address bits 4-6
// XORed with bits 7-9, i.e. chunk q ^ (r % 8) of row r of a 1024-byte aligned box.
__device__ __forceinline__ float* swizzled(float* line, int q) {
    return line + (q ^ ((smem_address(line) >> 7) & 7)) * 4;
}
__device__ __forceinline__ const float* swizzled(const float* line, int q) {
    return swizzled(const_cast<float*>(line), q);
}

// Round B of the 4 x 4 transpose among 4 lanes (B = 1, then 2): lanes whose bit B is set swap
// their elements c (bit B clear) for the partner's elements c | B. After both rounds, lane k
// holds element k of every lane: a[c] = (lane c's a[k]) -- see the comment above the kernel.
template <int B>
__device__ __forceinline__ void transpose_round(float (&a)[4], bool high) {
#pragma unroll
    for (int c = 0; c < 4; ++c) {
        if (c & B) continue;
        const float sent = high ? a[c] : a[c | B];
        const float got = __shfl_xor_sync(0xffffffffu, sent, B);
        if (high)
            a[c] = got;
        else
            a[c | B] = got;
    }
}

// BOXES boxes of BOX_COLS columns x ROWS rows into `tile` by the copy engine, box i at i * BOX_STRIDE
// floats and at the map's coordinates where(i, inner, outer): thread 0 hands them over on one
// mbarrier; every thread returns once the engine has counted all their bytes. EVICT_LAST reads them
// with an L2 evict-last policy (coarsened_sector_tma_any_el, a study form: see there).
template <int BOXES, int ROWS, int BOX_STRIDE, int BOX_COLS = 32, bool EVICT_LAST = false, class Where>
__device__ __forceinline__ void tma_load_boxes(const TransposeMap& map, float* tile, unsigned long long* bar, int tid,
                                               Where where) {
    constexpr int BOX_FLOATS = BOX_COLS * ROWS;  // the engine's bytes per box; BOX_STRIDE: the boxes' spacing
    const unsigned b_addr = smem_address(bar);
    if (tid == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(b_addr) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(b_addr),
                     "r"(unsigned(BOXES * BOX_FLOATS * sizeof(float)))
                     : "memory");
        unsigned long long policy = 0;
        if (EVICT_LAST) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(policy));
#pragma unroll
        for (int box = 0; box < BOXES; ++box) {
            int inner, outer;
            where(box, inner, outer);
            if (EVICT_LAST)
                tensor_load_2d_hinted(tile + box * BOX_STRIDE, &map, bar, inner, outer, policy);
            else
                tensor_load_2d(tile + box * BOX_STRIDE, &map, bar, inner, outer);
        }
    }
    __syncthreads();  // the barrier is initialised before anyone waits on it
    unsigned done = 0;
    while (!done)
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(b_addr) : "memory");
}

// A's tile (x0, y0) into `tile` by the copy engine: two boxes of 32 columns x ROWS rows, side by side.
template <int ROWS, int BOX_STRIDE = 32 * ROWS>
__device__ __forceinline__ void tma_load_tile(const TransposeMap& a_map, float* tile, unsigned long long* bar,
                                              size_t x0, long long y0, int tid) {
    tma_load_boxes<2, ROWS, BOX_STRIDE>(a_map, tile, bar, tid, [&](int box, int& inner, int& outer) {
        inner = int(x0) + box * 32;
        outer = int(y0);
    });
}

// Job q (0 .. ROWS / 2 - 1) of a lane: one swizzled 16-byte chunk read of the loaded tile (A's
// columns 4 * (q % 16) .. +3, rows 32 * (q / 16) .. +31 over the warp), the 4 x 4 shuffle
// transpose, and where its float4 goes in B's tile (see the comment above coarsened_tma).
template <int ROWS>
__device__ __forceinline__ float4 tma_row_float4(const float* tile, int q, int lane, int& brow, int& bcol) {
    constexpr int BOX_COLS = 32, BOX_FLOATS = BOX_COLS * ROWS;
    const int k = lane % 4;
    const int chunk = q % 16, half = q / 16;
    const int r = half * 32 + (lane / 4) * 4 + k;    // the row of A this lane reads
    const int box = chunk / 8, q8 = chunk % 8;
    const float* line = tile + box * BOX_FLOATS + r * BOX_COLS;  // row r of the box: 128 bytes
    const float4 x = *reinterpret_cast<const float4*>(swizzled(line, q8));
    float a[4] = {x.x, x.y, x.z, x.w};
    transpose_round<1>(a, k & 1);
    transpose_round<2>(a, k & 2);
    // now a[c] = A[r - k + c][4 * chunk + k]: row 4 * chunk + k of B's tile, columns r - k .. r - k + 3
    brow = 4 * chunk + k;
    bcol = r - k;
    return make_float4(a[0], a[1], a[2], a[3]);
}

template <int TILE>
__global__ void __launch_bounds__(256, 8)
coarsened_tma(const __grid_constant__ TransposeMap a_map, float* __restrict__ b, size_t m, size_t n) {
    static_assert(TILE == 64, "two 32-column boxes per tile, 8 warps x 4 chunk columns");
    constexpr int BOX_FLOATS = 32 * TILE;                      // one box: TILE rows of 128 bytes
    __shared__ __align__(1024) float tile[2 * BOX_FLOATS];     // the 128-byte swizzle's unit is 1024 bytes
    __shared__ __align__(8) unsigned long long bar;
    const int tid = threadIdx.y * TILE_DIM + threadIdx.x;
    const size_t t = size_t(blockIdx.y) * gridDim.x + blockIdx.x;  // coarsened's tile order
    const size_t x0 = t / gridDim.y * TILE, y0 = t % gridDim.y * TILE;
    tma_load_tile<TILE>(a_map, tile, &bar, x0, y0, tid);
    const int rows = m - y0 < TILE ? int(m - y0) : TILE;  // rows of A inside the tile
    const int cols = n - x0 < TILE ? int(n - x0) : TILE;  // columns of A inside the tile
    const int warp = tid / 32, lane = tid % 32;
#pragma unroll
    for (int job = 0; job < 4; ++job) {
        int brow, bcol;
        const float4 v = tma_row_float4<TILE>(tile, warp * 4 + job, lane, brow, bcol);
        if (brow < cols && bcol < rows) __stcs(reinterpret_cast<float4*>(b + (x0 + brow) * m + y0 + bcol), v);
    }
}

// coarsened_tma_store<ROWS, EVICT_FIRST> (sm_90, run only when named): coarsened_tma with B's
// tile written by the copy engine too, and with ROWS = 128 a tile of 64 columns x 128 rows of A,
// so that each row piece of B is 512 bytes instead of 256 (docs/transpose.md).
// The question they answer: at row pitches that are not a multiple of 256 bytes every row
// piece of B straddles one more 128-byte line than it fills, shared with the neighbouring tile's
// block; the engine writes a box in its own requests, the threads in 16-byte pieces, and a longer
// piece has half the straddled ends per byte.
// The lanes hold their ROWS / 16 float4s in registers, the block waits until every warp has read
// the loaded tile, and the lanes write the float4s back into the same shared memory as B's tile:
// ROWS / 32 swizzled boxes of 32 columns x 64 rows (chunk q of row r at q ^ (r % 8), as the loads).
// Every writer fences its shared stores for the async proxy, and thread 0 hands the engine the
// boxes (B's tensor map: M contiguous by N rows; the engine clips what lies past B, so partial
// tiles need no test), then waits until the engine has read them before the block's shared
// memory goes away. EVICT_FIRST adds an L2 evict-first policy to the engine's writes, as __stcs
// marks the threads' stores. m and n are the others' arguments; the maps carry the shape here.
template <int ROWS, bool EVICT_FIRST>
__global__ void __launch_bounds__(256, ROWS == 64 ? 8 : 4)
coarsened_tma_store(const __grid_constant__ TransposeMap a_map, const __grid_constant__ TransposeMap b_map,
                    size_t m, size_t n) {
    static_assert(ROWS == 64 || ROWS == 128, "two 32-column boxes of A, 8 warps");
    constexpr int COLS = 64, BOX_COLS = 32, JOBS = ROWS / 16;  // float4s per thread
    __shared__ __align__(1024) float tile[COLS * ROWS];        // A's tile as loaded, then B's as stored
    __shared__ __align__(8) unsigned long long bar;
    const int tid = threadIdx.y * TILE_DIM + threadIdx.x;
    const size_t t = size_t(blockIdx.y) * gridDim.x + blockIdx.x;  // coarsened's tile order
    const size_t x0 = t / gridDim.y * COLS, y0 = t % gridDim.y * ROWS;
    tma_load_tile<ROWS>(a_map, tile, &bar, x0, y0, tid);
    const int warp = tid / 32, lane = tid % 32;
    float4 v[JOBS];
    int brow[JOBS], bcol[JOBS];
#pragma unroll
    for (int job = 0; job < JOBS; ++job) v[job] = tma_row_float4<ROWS>(tile, warp * JOBS + job, lane, brow[job], bcol[job]);
    __syncthreads();  // every warp has read A's tile: its shared memory becomes B's
#pragma unroll
    for (int job = 0; job < JOBS; ++job) {
        // B's tile row brow, columns bcol .. +3: box bcol / 32 (64 rows of 128 bytes), chunk (bcol % 32) / 4
        float* line = tile + (bcol[job] / BOX_COLS) * (BOX_COLS * COLS) + brow[job] * BOX_COLS;
        *reinterpret_cast<float4*>(swizzled(line, (bcol[job] % BOX_COLS) / 4)) = v[job];
    }
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // the shared stores, seen by the engine
    __syncthreads();
    if (tid == 0) {
        unsigned long long policy = 0;
        if (EVICT_FIRST) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
#pragma unroll
        for (int box = 0; box < ROWS / BOX_COLS; ++box) {
            const unsigned src = smem_address(tile + box * BOX_COLS * COLS);
            if (EVICT_FIRST)
                asm volatile(
                    "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group.L2::cache_hint [%0, {%2, %3}], [%1], %4;\n"
                    ::"l"(reinterpret_cast<unsigned long long>(&b_map)), "r"(src), "r"(int(y0) + box * BOX_COLS),
                    "r"(int(x0)), "l"(policy)
                    : "memory");
            else
                asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n"
                             ::"l"(reinterpret_cast<unsigned long long>(&b_map)), "r"(src),
                             "r"(int(y0) + box * BOX_COLS), "r"(int(x0))
                             : "memory");
        }
        asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
        asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");  // shared memory stays until read
    }
}

// coarsened_tma_skew<TILE> (sm_90, run only when named, and only where M = 4 mod 8): coarsened_tma
// with the row pieces of B moved onto 32-byte sectors (docs/transpose.md). Where
// B's pitch 4M is 16 mod 32 bytes, every odd row of B starts 16 bytes into a sector, so each
// 128-byte run a warp writes there begins and ends in a sector that the neighbouring tile's block
// writes too. Here the tiles of the odd rows of B (odd columns of A) start SKEW = 4 columns of B
// earlier: tile row j of B covers columns 64j .. 64j + 63 of its even rows and 64j - 4 .. 64j + 59
// of its odd ones, so every run starts on a sector, and the grid has tile rows up to M + 4.
// The engine loads TILE + 4 rows of A from y0 - 4 (zeros before row 0 and past the last); a lane
// reads its chunk of two rows, r (for the odd columns) and r + 4 (the even ones), keeps the even
// columns of the one and the odd of the other, and the 4 x 4 shuffle transposes as before: lane k
// then holds row 4 * chunk + k of B's tile, columns r - k .. r - k + 3, 4 less where k is odd.
template <int TILE>
__global__ void __launch_bounds__(256, 8)
coarsened_tma_skew(const __grid_constant__ TransposeMap a_map, float* __restrict__ b, size_t m, size_t n) {
    static_assert(TILE == 64, "two 32-column boxes per tile, 8 warps x 4 chunk columns");
    constexpr int SKEW = 4, BOX_COLS = 32, BOX_ROWS = TILE + SKEW;
    constexpr int BOX_STRIDE = (BOX_COLS * BOX_ROWS + 255) / 256 * 256;  // boxes 1024-byte aligned for the swizzle
    __shared__ __align__(1024) float tile[2 * BOX_STRIDE];
    __shared__ __align__(8) unsigned long long bar;
    const int tid = threadIdx.y * TILE_DIM + threadIdx.x;
    const size_t t = size_t(blockIdx.y) * gridDim.x + blockIdx.x;  // coarsened's tile order
    const size_t x0 = t / gridDim.y * TILE, y0 = t % gridDim.y * TILE;
    tma_load_tile<BOX_ROWS, BOX_STRIDE>(a_map, tile, &bar, x0, (long long)y0 - SKEW, tid);
    const int cols = n - x0 < TILE ? int(n - x0) : TILE;  // columns of A inside the tile
    const int warp = tid / 32, lane = tid % 32, k = lane % 4;
#pragma unroll
    for (int job = 0; job < 4; ++job) {
        const int q = warp * 4 + job, chunk = q % 16, half = q / 16;
        const int r = half * 32 + (lane / 4) * 4 + k;  // this lane's row of the tile (A's row y0 + r)
        const float* base = tile + (chunk / 8) * BOX_STRIDE;
        const int q8 = chunk % 8;
        const float* even_line = base + (r + SKEW) * BOX_COLS;  // A's row y0 + r
        const float* odd_line = base + r * BOX_COLS;            // A's row y0 + r - 4
        const float4 xe = *reinterpret_cast<const float4*>(swizzled(even_line, q8));
        const float4 xo = *reinterpret_cast<const float4*>(swizzled(odd_line, q8));
        float a[4] = {xe.x, xo.y, xe.z, xo.w};  // columns 4 * chunk + 0, 2 from row r; 1, 3 from row r - 4
        transpose_round<1>(a, k & 1);
        transpose_round<2>(a, k & 2);
        const int brow = 4 * chunk + k;
        const long long col = (long long)y0 + r - k - ((k & 1) ? SKEW : 0);  // B's first column of this float4
        if (brow < cols && col >= 0 && col < (long long)m)
            __stcs(reinterpret_cast<float4*>(b + (x0 + brow) * m + col), make_float4(a[0], a[1], a[2], a[3]));
    }
}
// coarsened_sector_tma (sm_90, run only when named, N a multiple of 4; docs/transpose.md):
// coarsened_sector<64>'s pieces of B, A's tile brought in by the copy engine. It was
// written for N odd: a tensor map's row stride must be a multiple of 16 bytes, which 4N bytes is
// not there, 16N bytes always is. So the host describes A as rows of four: 4N contiguous floats
// (A's rows 4k .. 4k + 3 end to end) by floor(M / 4) such rows, and the tile's rows y0 - 8 + 4i + p
// (i = 0 .. 17, phase p = 0 .. 3; y0 - 8 is a multiple of 4) are the box of 32 columns x 18 rows at
// inner coordinate pN + x0 (+ 32 for the second half), outer (y0 - 8) / 4: 8 boxes, 128-byte
// swizzled as coarsened_tma's, zeros past the map. On the H200 the engine faults (an illegal
// instruction at the copy) where pN + x0 is not a multiple of 4, i.e. a box whose first element is
// not on 16 bytes: with N odd it cannot run, and the host runs it only where N is a multiple of 4
// (where it serves rows of B not on a float4, M not a multiple of 4). A's last M % 4 rows lie past
// the map (a row of four would run past A's end); the block that needs them loads them itself.
// Tile row r, column c is then box (r % 4, c / 32), box row r / 4, swizzled chunk (c % 32) / 4.
// The half-warps write B rows xl and xl + 1 (not xl + 32): a half-warp's 16 lanes read 16
// consecutive box rows of one box column, 8 swizzled chunks twice, and the other half's column
// is the next word of a chunk, so the two touch disjoint banks (2 lanes per bank), whatever the
// two rows' shifts.
constexpr int SECTOR_GROUPS = (64 + SECTOR_SHIFT) / 4;                     // 18 rows of four per tile
constexpr int SECTOR_BOX = (32 * SECTOR_GROUPS + 255) / 256 * 256;         // floats, boxes 1024-byte aligned

__device__ __forceinline__ float* sector_tma_at(float* tile, int r, int c) {
    float* line = tile + ((r % 4) * 2 + c / 32) * SECTOR_BOX + (r / 4) * 32;  // box row r / 4: 128 bytes
    return swizzled(line, (c % 32) / 4) + c % 4;
}

// The TMA sector forms' one tile: A's rows y0 - 8 .. y0 + 63 by the engine (BOXES boxes of BOX_COLS
// columns x 18 rows of four, box i BOX_STRIDE floats into `tile`, at inner coordinate inner(i, x0)),
// A's last M % 4 rows by the block, then the half-warps' pieces of B by sector_write_rows, tile row
// r, column c at word(r, c) and column c + 16i at next(word(r, c), i); the second half-warp's reads
// turned by rot.
template <int ROWS, int BOXES, int BOX_STRIDE, int BOX_COLS, bool EVICT_LAST = false, class Inner, class Word, class Next>
__device__ __forceinline__ void sector_tma_tile(const TransposeMap& a4_map, const float* __restrict__ a,
                                                float* __restrict__ b, size_t m, size_t n, float* tile,
                                                unsigned long long* bar, Inner inner, Word word, Next next,
                                                int rot = 0) {
    static_assert(ROWS == 64, "18 rows of four per box: A's rows y0 - 8 .. y0 + 63");
    constexpr int TROWS = ROWS + SECTOR_SHIFT;
    const int tid = threadIdx.y * TILE_DIM + threadIdx.x;
    const size_t t = size_t(blockIdx.y) * gridDim.x + blockIdx.x;  // coarsened's tile order
    const size_t x0 = t / gridDim.y * SECTOR_COLS, y0 = t % gridDim.y * ROWS;
    const long long top = (long long)y0 - SECTOR_SHIFT;  // A's row in tile row 0, a multiple of 4
    tma_load_boxes<BOXES, SECTOR_GROUPS, BOX_STRIDE, BOX_COLS, EVICT_LAST>(a4_map, tile, bar, tid,
                                                              [&](int box, int& in, int& outer) {
        in = inner(box, x0);
        outer = int(top / 4);
    });
    const long long tail = (long long)(m / 4 * 4);  // A's first row past the map
    if (top + TROWS > tail) {  // block-uniform: A's last M % 4 rows, after the engine's zeros landed
        const long long y = tail + tid / SECTOR_COLS;
        const int c = tid % SECTOR_COLS;
        if (y < (long long)m && y >= top && y < top + TROWS && x0 + c < n)
            *word(int(y - top), c) = a[y * n + x0 + c];
        __syncthreads();
    }
    const int lane = tid % 32, warp = tid / 32, xl0 = 2 * warp + lane / 16;  // B's rows xl0 + 16i
    sector_write_rows<ROWS>(b, m, n, x0, y0, xl0, lane % 16, [&](int r) -> const float* { return word(r, xl0); },
                            next, lane / 16 ? rot : 0);
}

// B's rows are written by sector_write_rows: a lane's columns xl0 + 16i (xl0 < 16) lie in box i / 2
// of their phase, chunk xl0 / 4 + 4 (i % 2): bit 2 of the chunk flips for odd i, and with it bit 4
// of the swizzled word (chunk ^ (box row % 8), times 4; the boxes are 768 words apart), so column
// xl0 + 16i is word w ^ 16 (i % 2), i / 2 boxes on.
template <int ROWS>  // a template, as the other TMA forms: instantiated (for sm_90 only) when named
__global__ void __launch_bounds__(256, 8)
coarsened_sector_tma(const __grid_constant__ TransposeMap a4_map, const float* __restrict__ a, float* __restrict__ b,
                     size_t m, size_t n) {
    __shared__ __align__(1024) float tile[8 * SECTOR_BOX];
    __shared__ __align__(8) unsigned long long bar;
    sector_tma_tile<ROWS, 8, SECTOR_BOX, 32>(
        a4_map, a, b, m, n, tile, &bar, [&](int box, size_t x0) { return (box / 2) * int(n) + int(x0) + (box % 2) * 32; },
        [&](int r, int c) { return sector_tma_at(tile, r, c); },
        [&](const float* w, int i) -> const float* {  // on the word's index, so the load stays a shared one
            return tile + ((int(w - tile) ^ (16 * (i & 1))) + (i / 2) * SECTOR_BOX);
        });
}

// coarsened_sector_tma_any (sm_90, run only when named; any N): coarsened_sector_tma with every box
// started on 16 bytes, so that the copy engine serves odd N too. Phase p's rows of A (the tile rows
// r = p mod 4) start at inner coordinate pN + x0 of the rows-of-four map, d_p = pN mod 4 floats past
// 16 bytes (x0 is a multiple of 64): the box of phase p starts d_p floats early and is 68 columns
// wide (64 + the largest d_p; 272 bytes, allowed without a swizzle, whose boxes stop at 128), 18
// rows of four: one box a phase, four a tile. Tile row r, column c is box r % 4, box row r / 4,
// word c + d_{r % 4}; the words before d_p belong to the previous row of A and those past 64 + d_p
// to the next (or lie past the map: zeros), read by no lane that writes B.
// Banks: box rows are 68 words (4 mod 32) and the boxes 1248 words apart (0 mod 32: the engine
// writes to 128-byte aligned addresses), so a word's bank is 4 (r / 4) + c + d_p mod 32. The 16
// lanes of a half-warp read rows 4 apart, all of one phase, 16 consecutive box rows: 8 banks, 2
// lanes each, all of one class c + d_p mod 4. The other half-warp (B's row xl + 1: column c + 1,
// its rows shifted by M mod 8) is in class c + 1 + d_p' with p' - p = rot - M mod 4; with N odd
// d_p = pN mod 4 runs through every class, and rot = (1 + MN) N mod 4 puts it 2 classes away
// (with N even every rot works: the classes then differ by an odd number). 2 lanes a bank per
// warp read, as coarsened_sector_tma's swizzled boxes.
// EVICT_LAST (coarsened_sector_tma_any_el, a study form; docs/transpose.md): the
// boxes read A with an L2 evict-last policy. A box's 4 extra columns fetch sectors that the next tile
// column reads again one column of tiles later (M / 64 blocks on); measured (ncu) the form
// reads 3-5% of A twice from DRAM where the swizzled forms read it once. Evict-last keeps A's lines in
// L2 ahead of B's (whose stores are evict-first) for that second read.
constexpr int ANY_COLS = SECTOR_COLS + 4;                                 // 68: up to 3 floats early
constexpr int ANY_BOX = (ANY_COLS * SECTOR_GROUPS + 31) / 32 * 32;       // 1224 -> 1248 floats apart

template <int ROWS, bool EVICT_LAST>  // a template, as the other TMA forms: instantiated (for sm_90 only) when named
__global__ void __launch_bounds__(256, 8)
coarsened_sector_tma_any(const __grid_constant__ TransposeMap a4_map, const float* __restrict__ a,
                         float* __restrict__ b, size_t m, size_t n) {
    __shared__ __align__(128) float tile[4 * ANY_BOX];
    __shared__ __align__(8) unsigned long long bar;
    const int n4 = int(n % 4);  // d_p = p * n4 mod 4
    const int rot = n4 % 2 ? int(((1 + m * n) * n) % 4) : 0;  // the second half-warp's turn
    const auto word = [&](int r, int c) -> float* {  // tile row r (>= 0), column c
        const int p = r & 3;
        return tile + p * ANY_BOX + (r >> 2) * ANY_COLS + ((p * n4) & 3) + c;
    };
    sector_tma_tile<ROWS, 4, ANY_BOX, ANY_COLS, EVICT_LAST>(
        a4_map, a, b, m, n, tile, &bar, [&](int p, size_t x0) { return p * int(n) + int(x0) - ((p * n4) & 3); },  // on 16 B
        word, [](const float* w, int i) { return w + 16 * i; },  // rows of words: column c + 16i is 16 words on
        rot);
}

// coarsened_sector_bulk (sm_90, run only when named; any N, made for odd N; docs/transpose.md):
// the sector forms' pieces of B with A's tile rows y0 - 7 .. y0 + 63 brought in by one
// bulk copy each (cp.async.bulk, no tensor map), all counted on one mbarrier. The copy engine cuts
// every copy at each 128-byte boundary of its global addresses and of its shared ones (measured:
// studies/memory_roof/tma_loads.py), so coarsened_sector_tma_any's unswizzled 272-byte box rows, at
// 272-byte steps in shared memory, cost 6 L2 requests a row where a line-aligned 128-byte box row
// costs 1. Here row r's copy, 272 bytes from the 16 at or before A[y][x0], lands in a 96-float row of
// shared memory (three 128-byte lines, 128-byte aligned) at the float where its address falls in
// its line: the two kinds of boundary then fall together, three requests a row. So A[y][x0 + c] is
// word (r - 1) * 96 + o_y + c, o_y = (address of A[y][x0] / 4) mod 32, and the copy, at most 28 + 68
// floats from the row's start, stays inside its 96.
// Banks: a half-warp's 16 lanes read one column of rows 4 apart, o_y steps by 4N mod 32; for N odd
// that runs through all 8 multiples of 4, 2 lanes a bank. The other half-warp (column + 1, rows moved
// by -M mod 4) is 1 - MN + rot N classes mod 4 away, 2 with rot = (1 + MN) N mod 4 (N^2 = 1 mod 4), as
// coarsened_sector_tma_any's. At N = 2 mod 4 the steps (8 or 24 mod 32) take only 4 banks, so there
// every lane turns its reads by q / 4 rows instead (q its lane in the half-warp): N = 2u, u odd, puts
// lane q's k-th read at 2u (4 (q % 4) + (q / 4 + k) % 4) + const mod 32, 16 different even banks, and
// the other half-warp (column + 1) on the odd ones: one lane a bank. (At N a multiple of 4, where best
// runs coarsened_sector_tma, the same turn leaves 2 to 8 lanes a bank.) A's last floats past its last
// whole 16 bytes (MN mod 4 of them) are loaded by the block. A must start on 16 bytes (the host checks).
// SECTORS (coarsened_sector_bulk_sec, a study form beside it): each copy 288 bytes from the 32-byte
// sector at or before A[y][x0] instead, whole sectors at both ends (at most 24 + 72 floats into the row).
constexpr int BULK_PITCH = 96;  // floats a shared row: 3 lines

// The turn of a lane's four reads where each tile row sits at its 128-byte line's offset (the bulk and
// lines forms): at odd N the second half-warp's rot = (1 + MN) N mod 4, at N = 2 mod 4 q / 4 rows for
// lane q of its half-warp (the banks: above).
__device__ __forceinline__ int line_offset_turn(size_t m, size_t n, int lane) {
    return n % 2 ? (lane / 16 ? int(((1 + m * n) * n) % 4) : 0) : lane % 16 / 4;
}

template <int ROWS, bool SECTORS>  // a template, as the other TMA forms: instantiated (for sm_90 only) when named
__global__ void __launch_bounds__(256, 8)
coarsened_sector_bulk(const float* __restrict__ a, float* __restrict__ b, size_t m, size_t n) {
    constexpr int COPY = SECTOR_COLS + (SECTORS ? 8 : 4);  // floats a copy: 64 from up to 7 (3) before A[y][x0]
    static_assert(ROWS == 64, "one float4 a lane and row of B (sector_write_rows)");
    constexpr int TROWS = ROWS + SECTOR_SHIFT - 1;  // tile rows 1 .. 71 (row 0 is never read: s <= 7)
    __shared__ __align__(128) float tile[TROWS * BULK_PITCH];
    __shared__ __align__(8) unsigned long long bar;
    const int tid = threadIdx.y * TILE_DIM + threadIdx.x;
    const size_t t = size_t(blockIdx.y) * gridDim.x + blockIdx.x;  // coarsened's tile order
    const long long nn = (long long)n, mm = (long long)m;
    const long long x0 = (long long)(t / gridDim.y * SECTOR_COLS), y0 = (long long)(t % gridDim.y * ROWS);
    const long long top = y0 - SECTOR_SHIFT;                         // A's row in tile row 0
    const long long total = mm * nn, whole = total & ~3LL;           // A's floats; those in whole 16 bytes
    const int base = int(reinterpret_cast<size_t>(a) / sizeof(float) % 32);  // A's start in its line
    const long long y_lo = top + 1 > 0 ? top + 1 : 0, y_hi = top + 1 + TROWS < mm ? top + 1 + TROWS : mm;
    const int rows = int(y_hi - y_lo);  // A's rows in the tile: block-uniform
    const auto word = [&](int r, int c) -> float* {  // tile row r (>= 1), column c
        return tile + (r - 1) * BULK_PITCH + int((base + (top + r) * nn + x0) & 31) + c;
    };
    if (rows > 0) {
        if (tid == 0) {
            mbar_init(&bar, unsigned(rows));  // thread i arrives once for row y_lo + i, with its copy's bytes
            mbar_init_fence();
        }
        __syncthreads();
        if (tid < rows) {
            const long long y = y_lo + tid, e0 = y * nn + x0;  // A[y][x0]
            long long start = SECTORS ? e0 - ((base + e0) & 7) : e0 & ~3LL;  // on 32 (16) bytes
            if (start < 0) start = 0;  // A's first sector, A 16 bytes into it: from A's start, on 16 bytes
            const int at = int((base + start) & 31);  // its float in its line, and in its shared row
            const long long span = COPY < BULK_PITCH - at ? COPY : BULK_PITCH - at;  // (short only where clamped)
            const long long end = start + span < whole ? start + span : whole;
            if (end > start)
                bulk_load(tile + (y - top - 1) * BULK_PITCH + at, a + start, unsigned(4 * (end - start)), &bar);
            else  // the row lies in A's last partial 16 bytes (loaded below)
                mbar_arrive(&bar);
        }
        mbar_wait(&bar, 0);
    }
    const long long last = (y_hi - 1) * nn + (x0 + SECTOR_COLS < nn ? x0 + SECTOR_COLS : nn);  // past the tile's last
    if (whole < total && last > whole) {  // block-uniform: A's last MN mod 4 floats, where this tile holds them
        if (tid < total - whole) {
            const long long g = whole + tid, y = g / nn, x = g % nn;
            if (y >= y_lo && y < y_hi && x >= x0 && x < x0 + SECTOR_COLS) *word(int(y - top), int(x - x0)) = a[g];
        }
        __syncthreads();
    }
    const int lane = tid % 32, warp = tid / 32, xl0 = 2 * warp + lane / 16, q = lane % 16;  // B's rows xl0 + 16i
    const int turn = line_offset_turn(m, n, lane);  // see above
    sector_write_rows<ROWS>(b, m, n, size_t(x0), size_t(y0), xl0, q, [&](int r) -> const float* { return word(r, xl0); },
                            [](const float* w, int i) { return w + 16 * i; }, turn);
}

// coarsened_sector_tma_lines (sm_90, run only when named; any N, made for N not a multiple of 4):
// coarsened_sector_bulk's shared layout (each row of A's tile in a 96-float row at the float where its
// address falls in its 128-byte line, so that the engine's global and shared line boundaries fall
// together) with the rows brought in by 32 tensor boxes instead of 71 bulk copies. The map takes A's
// rows 32 at a time (32N contiguous floats a row of the map, a pitch of 128N bytes: a whole number of
// lines at any N), so all the rows of one phase p = y mod 32 start at the same place in their lines,
// o_p = (A's float in its line + pN) mod 32 (x0 is a multiple of 64), and one box of 96 columns
// started o_p floats early, on a line, brings them all: 3 rows for the phases of the rows above y0
// (p >= 32 - SECTOR_SHIFT: rows y0 - 32 + p, y0 + p, y0 + 32 + p), 2 for the others (y0 + p, y0 + 32
// + p): two maps, one box height each, 72 rows of 96 floats (27,648 bytes: 8 blocks an SM, as the bulk
// form). A's last M mod 32 rows are past the map (zeros) and loaded by the block. Every row base is a
// multiple of 32 floats, so tile row r, column c sits on bank (o_p + c) mod 32 as in the bulk form,
// whose turns (its bank argument) serve unchanged. A must start on 16 bytes (the host checks).
constexpr int LINES_LOW = 32 - SECTOR_SHIFT;  // phases below: 2 tile rows; from it: 3 (a row above y0)
constexpr int LINES_PITCH = 96;               // floats a box row: three lines
constexpr int LINES_HIGH_AT = 2 * LINES_PITCH * LINES_LOW;                            // the 3-row boxes' start
constexpr int LINES_TILE = LINES_HIGH_AT + 3 * LINES_PITCH * (32 - LINES_LOW);       // 6912 floats
__host__ __device__ constexpr int lines_box(int p) {  // phase p's box: its first float in the tile
    return p < LINES_LOW ? 2 * LINES_PITCH * p : LINES_HIGH_AT + 3 * LINES_PITCH * (p - LINES_LOW);
}

template <int ROWS>  // a template, as the other TMA forms: instantiated (for sm_90 only) when named
__global__ void __launch_bounds__(256, 8)
coarsened_sector_tma_lines(const __grid_constant__ TransposeMap a2_map, const __grid_constant__ TransposeMap a3_map,
                           const float* __restrict__ a, float* __restrict__ b, size_t m, size_t n) {
    static_assert(ROWS == 64, "one float4 a lane and row of B (sector_write_rows); y0 a multiple of 32");
    __shared__ __align__(128) float tile[LINES_TILE];
    __shared__ __align__(8) unsigned long long bar;
    const int tid = threadIdx.y * TILE_DIM + threadIdx.x;
    const size_t t = size_t(blockIdx.y) * gridDim.x + blockIdx.x;  // coarsened's tile order
    const size_t x0 = t / gridDim.y * SECTOR_COLS, y0 = t % gridDim.y * ROWS;
    const int a_line = int(reinterpret_cast<size_t>(a) / sizeof(float) % 32), n32 = int(n % 32);
    const auto offset = [&](int p) { return (a_line + p * n32) & 31; };  // o_p (x0 = 0 mod 32)
    const auto word = [&](int r, int c) -> float* {  // tile row r: A's row y0 - SECTOR_SHIFT + r, column c
        const int p = (r + LINES_LOW) & 31, g = (r + LINES_LOW) >> 5;  // its phase; box row g (g - 1 below LOW)
        // lines_box(p) + (g or g - 1) rows, written out: through lines_box, sm_100's build spilled 56 bytes
        const int at = p < LINES_LOW ? 2 * LINES_PITCH * p + (g - 1) * LINES_PITCH
                                     : LINES_HIGH_AT + 3 * LINES_PITCH * (p - LINES_LOW) + g * LINES_PITCH;
        return tile + at + offset(p) + c;
    };
    // Thread 0 hands the engine the 32 boxes (tma_load_boxes serves one map and one box shape; here two).
    if (tid == 0) {
        mbar_init(&bar, 1);
        mbar_init_fence();
        mbar_expect_tx(&bar, unsigned(LINES_TILE * sizeof(float)));
        const int q0 = int(y0 / 32);
#pragma unroll  // p a constant in each copy: the box's place, map and outer row fold away
        for (int p = 0; p < 32; ++p) {
            const bool low = p < LINES_LOW;
            const int inner = p * int(n) + int(x0) - offset(p), outer = low ? q0 : q0 - 1;  // on a line
            tensor_load_2d(tile + lines_box(p), low ? &a2_map : &a3_map, &bar, inner, outer);
        }
    }
    __syncthreads();  // the barrier is initialised before anyone waits on it
    mbar_wait(&bar, 0);
    const long long top = (long long)y0 - SECTOR_SHIFT, tail = (long long)(m / 32 * 32);  // A's first row past the map
    if (top + ROWS + SECTOR_SHIFT > tail) {  // block-uniform: A's last M mod 32 rows, after the engine's zeros landed
        const long long y_lo = top > tail ? top : tail, y_hi = top + ROWS + SECTOR_SHIFT < (long long)m
                                                              ? top + ROWS + SECTOR_SHIFT : (long long)m;
        const int cols = int(n - x0 < SECTOR_COLS ? n - x0 : SECTOR_COLS);
        for (int e = tid; e < int(y_hi - y_lo) * SECTOR_COLS; e += 256) {
            const long long y = y_lo + e / SECTOR_COLS;
            const int c = e % SECTOR_COLS;
            if (c < cols) *word(int(y - top), c) = a[y * (long long)n + (long long)x0 + c];
        }
        __syncthreads();
    }
    const int lane = tid % 32, warp = tid / 32, xl0 = 2 * warp + lane / 16, q = lane % 16;  // B's rows xl0 + 16i
    const int turn = line_offset_turn(m, n, lane);  // coarsened_sector_bulk's banks, so its turns
    sector_write_rows<ROWS>(b, m, n, x0, y0, xl0, q, [&](int r) -> const float* { return word(r, xl0); },
                            [](const float* w, int i) { return w + 16 * i; }, turn);
}
#endif
