// 2D convolution (PMPP ch. 7), FP32, the book's convention:
//   P[i][j] = sum over fr, fc in [0, 2r] of F[fr][fc] * N[i - r + fr][j - r + fc]
// with N read as zero outside the image (its "ghost cells", §7.2). N and P are height x width,
// row-major, and do not overlap. The filter radius r is the compile-time FILTER_RADIUS (the
// book's #define, §7.3): every radius is its own NVRTC module, so the filter loops have
// constant trip counts, the constant-memory filter F_c has a constant size and the tiles of
// §7.4 have constant edges.
//
// The ladder, each rung in the book's words (docs/conv2d.md has the measurements):
//   naive          Fig. 7.7: one thread per output, the filter F and the input N both read
//                  from global memory, every ghost cell tested
//   constant_mask  Fig. 7.9 (§7.3): the filter in constant memory, F_c. Every thread of a warp
//                  reads the same F_c element at the same time, so the constant cache
//                  broadcasts it: the filter costs no global bandwidth at all
//   tiled          Fig. 7.12 (§7.4): blocks of IN_TILE_DIM^2 threads load an input tile, halo
//                  included, into shared memory; the inner OUT_TILE_DIM^2 threads compute
//   cached_halo    Fig. 7.15 (§7.5): the tile is the output tile; the halo cells are read
//                  from global memory, where the L1/L2 caches already hold them (a neighbouring
//                  block loaded them as its own tile)
//   best           beyond the book: register tiling in y with thread coarsening in x, the
//                  filter as constant-bank operands of FFMA (below)
//
// Index type. The book's rungs are templates on their signed index type I: `int`, the book's,
// while every offset row * width + col they form fits in 31 bits, `long long` beyond; the host
// picks per shape (pmppbench/workloads/conv2d.py, index_type). `best` forms its row offsets in
// 64 bits once per row, which costs nothing against its 4 * (2r+1)^2 FFMAs per row.
//
// The book's Fig. 7.15 tests `threadIdx.x - FILTER_RADIUS + fCol >= 0` on the unsigned
// threadIdx.x, which is always true in unsigned arithmetic; here the thread index is an int
// first, so the test means what the book says.

#ifndef FILTER_RADIUS
#define FILTER_RADIUS 1  // the book's examples use radius 1 and 2
#endif

constexpr int R = FILTER_RADIUS;
constexpr int MASK_WIDTH = 2 * R + 1;
static_assert(R >= 0 && R <= 5, "FILTER_RADIUS must be 0..5 (a mask of width 1..11)");

// §7.3: the filter in constant memory. The host writes it once per loaded module, before the
// first launch (pmppbench/workloads/conv2d.py, FilterLaunch), as cudaMemcpyToSymbol would.
__constant__ float F_c[MASK_WIDTH][MASK_WIDTH];

// The blocks as macros, the book's form: a learner's kernel --like a rung is built with the same -D
// values, so a copy of this file compiles as it is.
#define BLOCK_DIM 32  // naive and constant_mask: 32 x 32 threads, one output each

// ---- naive (Fig. 7.7) ----------------------------------------------------------------------
// Each of the (2r+1)^2 terms reads F from global memory and tests its input cell against the
// image's edges. 2 FLOPs per 8 bytes loaded: the kernel the book uses to show that the
// arithmetic intensity (0.25 OP/B) makes convolution memory bound unless the reads are reused.
template <class I>
__global__ void naive(const float* N, const float* F, float* P, I width, I height) {
    const I outCol = I(blockIdx.x) * BLOCK_DIM + I(threadIdx.x);
    const I outRow = I(blockIdx.y) * BLOCK_DIM + I(threadIdx.y);
    if (outRow >= height || outCol >= width) return;  // no barrier here, leaving is safe
    float Pvalue = 0.0f;
    for (int fRow = 0; fRow < MASK_WIDTH; fRow++) {
        for (int fCol = 0; fCol < MASK_WIDTH; fCol++) {
            const I inRow = outRow - R + fRow;
            const I inCol = outCol - R + fCol;
            if (inRow >= 0 && inRow < height && inCol >= 0 && inCol < width) {  // ghost cells add 0
                Pvalue += F[fRow * MASK_WIDTH + fCol] * N[inRow * width + inCol];
            }
        }
    }
    P[outRow * width + outCol] = Pvalue;
}

// ---- constant_mask (Fig. 7.9, §7.3) --------------------------------------------------------
// naive with F_c in place of F: the same loops, the same order of additions (so the same bits),
// half the global loads. F_c[fRow][fCol] is warp-uniform, the constant cache's best case.
template <class I>
__global__ void constant_mask(const float* N, float* P, I width, I height) {
    const I outCol = I(blockIdx.x) * BLOCK_DIM + I(threadIdx.x);
    const I outRow = I(blockIdx.y) * BLOCK_DIM + I(threadIdx.y);
    if (outRow >= height || outCol >= width) return;
    float Pvalue = 0.0f;
    for (int fRow = 0; fRow < MASK_WIDTH; fRow++) {
        for (int fCol = 0; fCol < MASK_WIDTH; fCol++) {
            const I inRow = outRow - R + fRow;
            const I inCol = outCol - R + fCol;
            if (inRow >= 0 && inRow < height && inCol >= 0 && inCol < width) {
                Pvalue += F_c[fRow][fCol] * N[inRow * width + inCol];
            }
        }
    }
    P[outRow * width + outCol] = Pvalue;
}

// ---- tiled (Fig. 7.12, §7.4) ---------------------------------------------------------------
// Block (IN_TILE_DIM, IN_TILE_DIM): every thread loads one input cell of the tile (ghost cells
// as 0), then the inner OUT_TILE_DIM^2 threads compute one output each from shared memory. The
// halo is loaded by both blocks that need it: IN_TILE_DIM^2 / OUT_TILE_DIM^2 loads per output
// (1.14 at r = 1, 1.78 at r = 4), and the 2r-wide frame of threads idles during the sums.
#define IN_TILE_DIM 32
constexpr int OUT_TILE_DIM = IN_TILE_DIM - 2 * R;
static_assert(OUT_TILE_DIM > 0, "tiled: the output tile 32 - 2r must not be empty");

template <class I>
__global__ void tiled(const float* N, float* P, I width, I height) {
    const int tx = threadIdx.x, ty = threadIdx.y;
    const I col = I(blockIdx.x) * OUT_TILE_DIM + tx - R;
    const I row = I(blockIdx.y) * OUT_TILE_DIM + ty - R;
    __shared__ float N_s[IN_TILE_DIM][IN_TILE_DIM];
    if (row >= 0 && row < height && col >= 0 && col < width) {
        N_s[ty][tx] = N[row * width + col];
    } else {
        N_s[ty][tx] = 0.0f;  // a ghost cell: 0, so the sums below need no test
    }
    __syncthreads();  // the whole tile is in N_s before any thread reads its neighbours
    const int tileCol = tx - R;
    const int tileRow = ty - R;
    if (col >= 0 && col < width && row >= 0 && row < height) {
        if (tileCol >= 0 && tileCol < OUT_TILE_DIM && tileRow >= 0 && tileRow < OUT_TILE_DIM) {
            float Pvalue = 0.0f;
            for (int fRow = 0; fRow < MASK_WIDTH; fRow++) {
                for (int fCol = 0; fCol < MASK_WIDTH; fCol++) {
                    Pvalue += F_c[fRow][fCol] * N_s[tileRow + fRow][tileCol + fCol];
                }
            }
            P[row * width + col] = Pvalue;
        }
    }
}

// ---- cached_halo (Fig. 7.15, §7.5) ---------------------------------------------------------
// Block (TILE_DIM, TILE_DIM) and one output per thread: the tile holds the block's own input
// cells only; a term whose cell lies in the halo is read from N in global memory, where the
// caches hold it (the neighbouring block's own tile). No idle threads, no halo loads into
// shared memory, but a branch in every term.
#define TILE_DIM 32

template <class I>
__global__ void cached_halo(const float* N, float* P, I width, I height) {
    const int tx = threadIdx.x, ty = threadIdx.y;
    const I col = I(blockIdx.x) * TILE_DIM + tx;
    const I row = I(blockIdx.y) * TILE_DIM + ty;
    __shared__ float N_s[TILE_DIM][TILE_DIM];
    if (row < height && col < width) {
        N_s[ty][tx] = N[row * width + col];
    } else {
        N_s[ty][tx] = 0.0f;
    }
    __syncthreads();  // the tile is complete (every thread reaches this barrier)
    if (col < width && row < height) {
        float Pvalue = 0.0f;
        for (int fRow = 0; fRow < MASK_WIDTH; fRow++) {
            for (int fCol = 0; fCol < MASK_WIDTH; fCol++) {
                const int sx = tx - R + fCol, sy = ty - R + fRow;  // the cell in tile coordinates
                if (sx >= 0 && sx < TILE_DIM && sy >= 0 && sy < TILE_DIM) {
                    Pvalue += F_c[fRow][fCol] * N_s[sy][sx];
                } else {  // a halo cell: from global memory (a cache hit), or a ghost cell (0)
                    const I inRow = row - R + fRow, inCol = col - R + fCol;
                    if (inRow >= 0 && inRow < height && inCol >= 0 && inCol < width) {
                        Pvalue += F_c[fRow][fCol] * N[inRow * width + inCol];
                    }
                }
            }
        }
        P[row * width + col] = Pvalue;
    }
}

// ---- best: register tiling in y, coarsening in x ------------------------------------------
//
// The roof for this problem is a memcpy of the image (8 bytes per output), and at r = 4 the
// 81 FFMAs per output are as much time at the FP32 peak as those 8 bytes are at DRAM speed.
// So the kernel must do two things at once: move each input byte from DRAM about once, and
// issue almost nothing but FFMAs.
//
// Each thread owns TX adjacent columns (TX = 4: one float4) of a strip of ROWS output rows,
// and walks down the strip's input rows, y0 - r .. y0 + ROWS + r - 1, once:
//   1. load   input row i, columns x0 - HALO .. x0 + TX + HALO - 1, as float4s (HALO is r
//             rounded up to a float4); the neighbouring threads load the same halo float4s,
//             which the L1 cache serves. Row i + 1 is loaded before row i's sums start.
//   2. sum    row i meets the 2r + 1 output rows i - r .. i + r, each with its own filter row:
//             acc[k][c] += N[i][x0 + c - r + fc] * F_c[2r - k][fc] for every k, c, fc.
//             F_c's index is a compile-time constant, so each FFMA takes its filter weight
//             straight from the constant bank (FFMA R, R, c[3][...], R): the filter lives in
//             no register and costs no instruction (the "mask in registers", for free).
//   3. store  output row i - r is complete (it has met its last filter row): one float4
//             streaming store; then the accumulators shift down one row. The loop is unrolled
//             by 2r + 1 rows, after which the shift is a renaming of
//             registers, not moves.
// Per row a thread issues 3 (r <= 4) or 5 float4 loads and 4 (2r + 1)^2 FFMAs: the loads are
// under 1% of the instructions at r = 4. The first and last 2r input rows of a strip also meet
// output rows of the strips above and below; those sums are skipped (a warp-uniform test per
// filter row), so a strip does exactly its own outputs' FFMAs and the strips can be short:
// ROWS = 32 makes 4096 blocks at 8192^2, several waves, so the last wave's idle SMs cost
// little. No shared memory, no barriers: every thread runs independently, and the halo (2r
// rows per strip, HALO columns per side) comes from L2/L1.
//
// The order of additions of each output is the book's: filter rows in order, columns in order
// within a row (the input rows arrive in order), so best and constant_mask agree bit for bit.
//
// A row of float4s needs width % 4 == 0 (16-byte aligned rows); otherwise the same walk loads
// scalars (the `vec` template argument, chosen by the host).
constexpr int HALO = (R + 3) / 4 * 4;
#define BEST_THREADS 128  // threads per block, all along x

template <int TX, bool VEC>
__device__ __forceinline__ void load_row(float (&v)[TX + 2 * HALO], const float* __restrict__ row, long long x,
                                         long long width, bool interior) {
    // v[k] = N[i][x - HALO + k], zero outside [0, width)
    if (VEC && interior) {
#pragma unroll
        for (int q = 0; q < (TX + 2 * HALO) / 4; ++q) {
            const float4 f = __ldg(reinterpret_cast<const float4*>(row + x - HALO) + q);
            v[4 * q] = f.x; v[4 * q + 1] = f.y; v[4 * q + 2] = f.z; v[4 * q + 3] = f.w;
        }
    } else {
#pragma unroll
        for (int k = 0; k < TX + 2 * HALO; ++k) {
            const long long c = x - HALO + k;
            v[k] = (c >= 0 && c < width) ? __ldg(row + c) : 0.0f;
        }
    }
}

template <int TX, int ROWS, bool VEC>
__global__ void __launch_bounds__(BEST_THREADS)
best(const float* __restrict__ N, float* __restrict__ P, int width, int height) {
    static_assert(TX % 4 == 0, "TX must be whole float4s");
    constexpr int K = TX + 2 * HALO;  // inputs of one row
    const long long x0 = ((long long)blockIdx.x * BEST_THREADS + threadIdx.x) * TX;
    if (x0 >= width) return;  // no barrier and no shuffle: leaving is safe
    const bool interior = x0 - HALO >= 0 && x0 + TX + HALO <= width;
    const int y0 = blockIdx.y * ROWS;
    const int last = min(y0 + ROWS, height) + R;  // one past the last input row of the strip

    float acc[MASK_WIDTH][TX];
#pragma unroll
    for (int k = 0; k < MASK_WIDTH; ++k)
#pragma unroll
        for (int c = 0; c < TX; ++c) acc[k][c] = 0.0f;

    float next[K];
    if (y0 - R >= 0) load_row<TX, VEC>(next, N + (long long)(y0 - R) * width, x0, width, interior);
    // Rows in groups of 2r + 1, the group unrolled: after a group the accumulators have
    // shifted all the way round, so the shifts below are register renamings, not moves.
    for (int base = y0 - R; base < last; base += MASK_WIDTH) {
#pragma unroll
        for (int s = 0; s < MASK_WIDTH; ++s) {
            const int i = base + s;
            if (i >= last) break;
            float v[K];
#pragma unroll
            for (int k = 0; k < K; ++k) v[k] = next[k];
            if (i + 1 < last && i + 1 >= 0 && i + 1 < height)  // prefetch row i + 1 before row i's sums
                load_row<TX, VEC>(next, N + (long long)(i + 1) * width, x0, width, interior);
            if (i >= 0 && i < height) {  // a row of ghost cells adds nothing
#pragma unroll
                for (int k = 0; k < MASK_WIDTH; ++k) {  // acc[k]: output row i - r + k, filter row 2r - k
                    const int o = i - R + k;
                    if (o < y0 || o >= last - R) continue;  // another strip's output: not this thread's work
#pragma unroll
                    for (int fc = 0; fc < MASK_WIDTH; ++fc)
#pragma unroll
                        for (int c = 0; c < TX; ++c)
                            acc[k][c] = fmaf(F_c[MASK_WIDTH - 1 - k][fc], v[c + fc + HALO - R], acc[k][c]);
                }
            }
            const int o = i - R;  // acc[0] is complete
            if (o >= y0) {
                float* out = P + (long long)o * width + x0;
                if (VEC && x0 + TX <= width) {
#pragma unroll
                    for (int q = 0; q < TX / 4; ++q)
                        __stcs(reinterpret_cast<float4*>(out) + q,
                               make_float4(acc[0][4 * q], acc[0][4 * q + 1], acc[0][4 * q + 2], acc[0][4 * q + 3]));
                } else {
#pragma unroll
                    for (int c = 0; c < TX; ++c)
                        if (x0 + c < width) out[c] = acc[0][c];
                }
            }
#pragma unroll
            for (int k = 0; k + 1 < MASK_WIDTH; ++k)
#pragma unroll
                for (int c = 0; c < TX; ++c) acc[k][c] = acc[k + 1][c];
#pragma unroll
            for (int c = 0; c < TX; ++c) acc[MASK_WIDTH - 1][c] = 0.0f;
        }
    }
}
