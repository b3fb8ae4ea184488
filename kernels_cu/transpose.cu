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
// 2^32 elements. The 64-bit instantiation needs 20 registers where int needs 12, and on the
// H200 ran shared32 / padded33 2.6-10% slower than the course's int listing at the course's
// sizes (docs/baselines.md); with int every one of the four is within 1% of it. Their
// pointers are plain, as the course's: __restrict__ (LDG.E.CONSTANT loads) measured no faster.
//
// The variants, in the order of the table:
//   copy       the same 32x32 block and one element per thread, but B = A: the bandwidth
//              reference for this access shape (never a transpose; it is checked against A)
//   naive      coalesced reads, writes strided by M floats
//   shared32   tiled<32>: through a 32x32 shared tile, both sides coalesced, 32-way bank
//              conflicts on the transposed shared read
//   padded33   tiled<33>: the same kernel with a row stride of 33 -- no bank conflicts
//   coarsened  coarsened<64>: 32x8 threads move a 64x64 padded tile, 16 elements each

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

// coarsened<TILE>: thread coarsening (PMPP 6.3) on top of padded33. A block of 32 x 8
// threads moves a TILE x TILE tile, each thread TILE/32 columns x TILE/8 rows of it
// (coarsened<32>: 4 elements, the classic design; coarsened<64>: 16 elements).
//
// Why it should beat padded33, although both move the same bytes without bank conflicts:
//  - Bytes in flight (PMPP 6.2, hiding memory latency). A memory-bound kernel runs at
//    (bytes in flight) / latency, Little's law. padded33 keeps one 4-byte load per thread outstanding; here every thread first
//    issues all of its loads into registers and only then stores them to shared memory, so
//    TILE/32 * TILE/8 loads (64 bytes for TILE = 64) are outstanding at once.
//  - Overhead per element. Index arithmetic, bounds set-up and the barrier are paid once
//    per thread for many elements instead of once per element.
//  - Longer runs. With TILE = 64 every row of A read and every row of B written is 256
//    contiguous bytes instead of 128.
// The tile rows are TILE + 1 floats: TILE + 1 = 1 (mod 32), so the transposed read
// tile[c][r] of one warp (c = tx + 32 i, tx = 0..31, r fixed) still hits 32 different banks.
//
// Edges: rows and cols count the part of this tile that lies inside A (block-uniform, at
// most TILE), so the bounds tests are 32-bit compares of in-tile offsets. Out-of-range
// slots of the tile hold 0 and are never written out, and again every thread reaches the
// barrier.
template <int TILE>
__global__ void coarsened(const float* __restrict__ a, float* __restrict__ b, size_t m, size_t n) {
    constexpr int ROWS = 8;  // blockDim.y: a thread handles the rows ty, ty + 8, ...
    constexpr int PER_COL = TILE / TILE_DIM, PER_ROW = TILE / ROWS;
    static_assert(TILE % TILE_DIM == 0, "TILE must be a multiple of the warp width");
    __shared__ float tile[TILE][TILE + 1];

    int tx = threadIdx.x, ty = threadIdx.y;
    size_t x0 = size_t(blockIdx.x) * TILE;  // first column of A in this tile
    size_t y0 = size_t(blockIdx.y) * TILE;  // first row of A in this tile
    int rows = m - y0 < TILE ? int(m - y0) : TILE;  // rows of A inside the tile
    int cols = n - x0 < TILE ? int(n - x0) : TILE;  // columns of A inside the tile

    // Phase 1: all loads first (coalesced along A's rows), then the shared stores.
    const float* src = a + (y0 + ty) * n + x0 + tx;
    float v[PER_ROW][PER_COL];
#pragma unroll
    for (int j = 0; j < PER_ROW; ++j)
#pragma unroll
        for (int i = 0; i < PER_COL; ++i) {
            int r = ty + j * ROWS, c = tx + i * TILE_DIM;
            v[j][i] = (r < rows && c < cols) ? src[size_t(j * ROWS) * n + i * TILE_DIM] : 0.0f;
        }
#pragma unroll
    for (int j = 0; j < PER_ROW; ++j)
#pragma unroll
        for (int i = 0; i < PER_COL; ++i) tile[ty + j * ROWS][tx + i * TILE_DIM] = v[j][i];
    __syncthreads();

    // Phase 2: a row of B is a column of A; write it coalesced, reading the tile transposed.
    // B's tile has `cols` rows (A's columns) and `rows` columns (A's rows).
    float* dst = b + (x0 + ty) * m + y0 + tx;
#pragma unroll
    for (int j = 0; j < PER_ROW; ++j)
#pragma unroll
        for (int i = 0; i < PER_COL; ++i) {
            int r = ty + j * ROWS, c = tx + i * TILE_DIM;  // row and column in B's tile
            if (r < cols && c < rows) dst[size_t(j * ROWS) * m + i * TILE_DIM] = tile[c][r];
        }
}
