// The coarsened transpose with A's tile (and B's) moved by Hopper's copy engine (TMA, sm_90):
// coarsened_tma, coarsened_tma_store, coarsened_tma_skew, coarsened_sector_tma and
// coarsened_sector_tma_any, the forms `best` picks on Hopper (pmppbench/workloads/transpose.py), and
// their helpers; included by kernels_cu/transpose.cu and by the study forms
// (studies/forms/transpose_forms.cu).
#ifndef TRANSPOSE_TMA_CUH
#define TRANSPOSE_TMA_CUH

#include "mbarrier.cuh"           // the copies and their barrier (sm_90)
#include "transpose_sector.cuh"  // the sector forms' layout and writes

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
#endif  // __CUDACC__

#endif  // TRANSPOSE_TMA_CUH
