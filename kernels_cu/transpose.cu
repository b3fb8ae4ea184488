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
//   best       the form pmppbench/workloads/transpose.py's pick names for the GPU and shape, each
//              also run when named: coarsened's tiles and order with A's tile (and B's) moved by
//              the copy engine on sm_90 (coarsened_tma, coarsened_tma_store_wide, coarsened_tma_skew:
//              transpose_tma.cuh), or each row piece of B moved onto 32-byte sectors at any pitch
//              (coarsened_sector_vec: transpose_sector.cuh; coarsened_sector_tma, _tma_any, _tma_any_el
//              with A by the copy engine: transpose_tma.cuh)
// The forms measured beside them and not picked are studies/forms/transpose_forms.cu's.

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

// The forms beyond the book that `best` picks on Hopper (docs/transpose.md): B's row pieces moved
// onto 32-byte sectors (any pitch), and A's tile brought in by the copy engine (sm_90).
#include "transpose_sector.cuh"
#include "transpose_tma.cuh"
