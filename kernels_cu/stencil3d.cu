// 3D seven-point stencil (PMPP ch. 8), FP32, on an N x N x N grid stored plane by plane
// (in[i][j][k] = in[i*N*N + j*N + k]: i is z, j is y, k is x):
//   out[i][j][k] = c0*in[i][j][k] + c1*in[i][j][k-1] + c2*in[i][j][k+1] + c3*in[i][j-1][k]
//                + c4*in[i][j+1][k] + c5*in[i-1][j][k] + c6*in[i+1][j][k]
// for the interior cells; the boundary cells (any index 0 or N-1) are copied, out = in (the
// book's kernels leave them alone; copying them makes every output cell written, so an
// output left unwritten fails the check). in and out do not overlap.
//
// The ladder (docs/stencil3d.md has the measurements):
//   naive      Fig. 8.6 (§8.2): one thread per cell, seven global loads
//   shared     Fig. 8.8 (§8.3): IN_TILE_DIM^3 = 8^3 threads load a tile with its halo into
//              shared memory, the inner 6^3 compute: (8/6)^3 = 2.37 loads per output
//   coarsened  Fig. 8.10 (§8.4): 32 x 32 threads per block march in z through 30 planes,
//              three planes (prev, curr, next) in shared memory: 32^2 / 30^2 = 1.14 loads
//   register   Fig. 8.12 (§8.5): coarsened with prev and next in registers, only the current
//              plane in shared memory: a third of the shared memory, the same loads
//   best       beyond the book: float4 columns marching in z, neighbours from registers,
//              warp shuffles and the L1 cache, no shared memory and no barriers (below)
//
// Index type: the book's rungs are templates on their signed index type I, `int` while
// every offset they form fits in 31 bits, `long long` beyond (pmppbench/workloads/stencil3d.py,
// index_type); `best` forms its offsets in 64 bits.

// The book's coefficients c0..c6 are the problem's constants: distinct, so a neighbour read
// from the wrong side changes the result, and summing to 1 (a weighted mean), so outputs stay
// in the inputs' range. pmppbench/workloads/stencil3d.py holds the same numbers (a CPU test
// compares them with this text).
constexpr float c0 = 0.40f, c1 = 0.11f, c2 = 0.09f, c3 = 0.12f, c4 = 0.08f, c5 = 0.13f, c6 = 0.07f;

// ---- naive (Fig. 8.6, §8.2) ----------------------------------------------------------------
// The block of each rung as a macro, the book's form: a learner's kernel --like the rung is built
// with the same -D values, so a copy of this file compiles as it is.
#define NAIVE_X 32  // block: x fastest, so loads coalesce
#define NAIVE_Y 8
#define NAIVE_Z 2

template <class I>
__global__ void naive(const float* in, float* out, I N) {
    const I i = I(blockIdx.z) * NAIVE_Z + I(threadIdx.z);
    const I j = I(blockIdx.y) * NAIVE_Y + I(threadIdx.y);
    const I k = I(blockIdx.x) * NAIVE_X + I(threadIdx.x);
    if (i >= N || j >= N || k >= N) return;
    const I at = i * N * N + j * N + k;
    if (i >= 1 && i < N - 1 && j >= 1 && j < N - 1 && k >= 1 && k < N - 1) {
        out[at] = c0 * in[at] + c1 * in[at - 1] + c2 * in[at + 1] + c3 * in[at - N] + c4 * in[at + N]
                + c5 * in[at - N * N] + c6 * in[at + N * N];
    } else {
        out[at] = in[at];  // a boundary cell: copied
    }
}

// ---- shared (Fig. 8.8, §8.3) ---------------------------------------------------------------
// Block IN_TILE_DIM^3: every thread loads one cell of the input tile (its 1-cell halo
// included); after the barrier the inner OUT_TILE_DIM^3 threads compute. With 8^3 = 512
// threads per block the tile is small: (8/6)^3 = 2.37 loads per output.
#define IN_TILE_DIM 8
constexpr int OUT_TILE_DIM = IN_TILE_DIM - 2;

template <class I>
__global__ void shared(const float* in, float* out, I N) {
    const int tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;
    const I i = I(blockIdx.z) * OUT_TILE_DIM + tz - 1;
    const I j = I(blockIdx.y) * OUT_TILE_DIM + ty - 1;
    const I k = I(blockIdx.x) * OUT_TILE_DIM + tx - 1;
    __shared__ float in_s[IN_TILE_DIM][IN_TILE_DIM][IN_TILE_DIM];
    const bool inside = i >= 0 && i < N && j >= 0 && j < N && k >= 0 && k < N;
    if (inside) in_s[tz][ty][tx] = in[i * N * N + j * N + k];
    __syncthreads();  // the tile is loaded before any thread reads its neighbours' cells
    const bool owner = tz >= 1 && tz < IN_TILE_DIM - 1 && ty >= 1 && ty < IN_TILE_DIM - 1 && tx >= 1 &&
                       tx < IN_TILE_DIM - 1;
    if (inside && owner) {
        if (i >= 1 && i < N - 1 && j >= 1 && j < N - 1 && k >= 1 && k < N - 1) {
            out[i * N * N + j * N + k] = c0 * in_s[tz][ty][tx] + c1 * in_s[tz][ty][tx - 1] + c2 * in_s[tz][ty][tx + 1]
                                       + c3 * in_s[tz][ty - 1][tx] + c4 * in_s[tz][ty + 1][tx]
                                       + c5 * in_s[tz - 1][ty][tx] + c6 * in_s[tz + 1][ty][tx];
        } else {
            out[i * N * N + j * N + k] = in_s[tz][ty][tx];
        }
    }
}

// ---- coarsened (Fig. 8.10, §8.4) -----------------------------------------------------------
// A 2D block of IN_TILE_DIM_C^2 = 32^2 threads owns an x-y tile of OUT_TILE_DIM_C^2 = 30^2
// outputs and marches through OUT_TILE_DIM_C planes in z. The three planes a cell needs sit in
// shared memory; after each plane the roles rotate (prev <- curr <- next), so every input
// plane is loaded once per block instead of three times. Halo: 32^2 / 30^2 = 1.14 loads per
// output in x-y, plus 2 planes per 30 in z.
#define IN_TILE_DIM_C 32
constexpr int OUT_TILE_DIM_C = IN_TILE_DIM_C - 2;

template <class I>
__global__ void coarsened(const float* in, float* out, I N) {
    const int tx = threadIdx.x, ty = threadIdx.y;
    const I iStart = I(blockIdx.z) * OUT_TILE_DIM_C;
    const I j = I(blockIdx.y) * OUT_TILE_DIM_C + ty - 1;
    const I k = I(blockIdx.x) * OUT_TILE_DIM_C + tx - 1;
    __shared__ float inPrev_s[IN_TILE_DIM_C][IN_TILE_DIM_C];
    __shared__ float inCurr_s[IN_TILE_DIM_C][IN_TILE_DIM_C];
    __shared__ float inNext_s[IN_TILE_DIM_C][IN_TILE_DIM_C];
    const bool inPlane = j >= 0 && j < N && k >= 0 && k < N;
    if (iStart - 1 >= 0 && iStart - 1 < N && inPlane) inPrev_s[ty][tx] = in[(iStart - 1) * N * N + j * N + k];
    if (iStart < N && inPlane) inCurr_s[ty][tx] = in[iStart * N * N + j * N + k];
    const bool owner = ty >= 1 && ty < IN_TILE_DIM_C - 1 && tx >= 1 && tx < IN_TILE_DIM_C - 1;
    for (I i = iStart; i < iStart + OUT_TILE_DIM_C && i < N; ++i) {
        if (i + 1 < N && inPlane) inNext_s[ty][tx] = in[(i + 1) * N * N + j * N + k];
        __syncthreads();  // plane i + 1 is loaded (and planes i - 1, i from before)
        if (inPlane && owner) {
            if (i >= 1 && i < N - 1 && j >= 1 && j < N - 1 && k >= 1 && k < N - 1) {
                out[i * N * N + j * N + k] = c0 * inCurr_s[ty][tx] + c1 * inCurr_s[ty][tx - 1]
                                           + c2 * inCurr_s[ty][tx + 1] + c3 * inCurr_s[ty - 1][tx]
                                           + c4 * inCurr_s[ty + 1][tx] + c5 * inPrev_s[ty][tx]
                                           + c6 * inNext_s[ty][tx];
            } else {
                out[i * N * N + j * N + k] = inCurr_s[ty][tx];
            }
        }
        __syncthreads();  // every thread is done reading before the planes rotate
        inPrev_s[ty][tx] = inCurr_s[ty][tx];
        inCurr_s[ty][tx] = inNext_s[ty][tx];
    }
}

// ---- register (Fig. 8.12, §8.5) ------------------------------------------------------------
// coarsened, with the observation that a thread reads the prev and next planes only at its
// own (j, k): they can live in the thread's registers. Only the current plane, which the
// x and y neighbours read, stays in shared memory.
template <class I>
__global__ void register_tiled(const float* in, float* out, I N) {
    const int tx = threadIdx.x, ty = threadIdx.y;
    const I iStart = I(blockIdx.z) * OUT_TILE_DIM_C;
    const I j = I(blockIdx.y) * OUT_TILE_DIM_C + ty - 1;
    const I k = I(blockIdx.x) * OUT_TILE_DIM_C + tx - 1;
    __shared__ float inCurr_s[IN_TILE_DIM_C][IN_TILE_DIM_C];
    const bool inPlane = j >= 0 && j < N && k >= 0 && k < N;
    float inPrev = 0.0f, inCurr = 0.0f, inNext = 0.0f;
    if (iStart - 1 >= 0 && iStart - 1 < N && inPlane) inPrev = in[(iStart - 1) * N * N + j * N + k];
    if (iStart < N && inPlane) {
        inCurr = in[iStart * N * N + j * N + k];
        inCurr_s[ty][tx] = inCurr;
    }
    const bool owner = ty >= 1 && ty < IN_TILE_DIM_C - 1 && tx >= 1 && tx < IN_TILE_DIM_C - 1;
    for (I i = iStart; i < iStart + OUT_TILE_DIM_C && i < N; ++i) {
        if (i + 1 < N && inPlane) inNext = in[(i + 1) * N * N + j * N + k];
        __syncthreads();  // the current plane is in inCurr_s
        if (inPlane && owner) {
            if (i >= 1 && i < N - 1 && j >= 1 && j < N - 1 && k >= 1 && k < N - 1) {
                out[i * N * N + j * N + k] = c0 * inCurr + c1 * inCurr_s[ty][tx - 1] + c2 * inCurr_s[ty][tx + 1]
                                           + c3 * inCurr_s[ty - 1][tx] + c4 * inCurr_s[ty + 1][tx]
                                           + c5 * inPrev + c6 * inNext;
            } else {
                out[i * N * N + j * N + k] = inCurr;
            }
        }
        __syncthreads();  // every thread is done reading inCurr_s before it is overwritten
        inPrev = inCurr;
        inCurr = inNext;
        inCurr_s[ty][tx] = inNext;
    }
}

// ---- best: float4 columns marching in z ----------------------------------------------------
//
// The roof is a memcpy of the grid: 8 bytes per cell. The book's rungs stay below it for two
// reasons: halo loads (every tile loads a frame its neighbours load too) and the barriers of
// the march (two per plane, with only one plane's worth of loads in flight per block).
//
// best keeps the march in z (register tiling: prev, curr, next of a thread's own cells in
// registers, §8.5) and drops the shared plane. A thread owns 4 adjacent cells in x (one
// float4) of one row j, for ZCHUNK planes; a warp owns 128 cells of the row:
//   - x neighbours: inside the float4 from the thread's own registers; across float4s from
//     the lanes beside it (__shfl_up/down of the neighbouring float4's .w and .x); at the
//     warp's two ends, one scalar load each (a cache hit: another warp loaded that float4).
//   - y neighbours: float4 loads of rows j - 1 and j + 1 in plane i, which the warps of those
//     rows loaded as their own plane one step earlier: L1 hits for all but a block's two edge
//     rows.
//   - z neighbours: registers; plane i + 2 is loaded while plane i is computed, so two planes
//     of loads are in flight per warp.
// The only DRAM traffic is each plane once (plus 2 planes per ZCHUNK in z and the block's
// edge rows, mostly L2 hits), and there is no barrier: each warp streams on its own.
// Needs N % 4 == 0 (16-byte aligned rows); otherwise the same march loads scalars (VEC false).
// best<BY, ZCHUNK, VEC>: BY warps (rows j) per block, ZCHUNK planes per thread; the host
// launches (N/128, N/BY, N/ZCHUNK) blocks of (32, BY) threads (pmppbench/workloads/stencil3d.py).

template <bool VEC>
__device__ __forceinline__ float4 load_cells(const float* __restrict__ in, long long row, long long k, long long N) {
    // in[row + k .. row + k + 3], zero at k >= N (k is a multiple of 4)
    if (VEC && k + 4 <= N) return __ldg(reinterpret_cast<const float4*>(in + row + k));
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (k + 0 < N) v.x = __ldg(in + row + k + 0);
    if (k + 1 < N) v.y = __ldg(in + row + k + 1);
    if (k + 2 < N) v.z = __ldg(in + row + k + 2);
    if (k + 3 < N) v.w = __ldg(in + row + k + 3);
    return v;
}

__device__ __forceinline__ float seven_point(float centre, float left, float right, float down, float up, float prev,
                                             float next) {
    // the book's order of terms: c0 centre, c1 k-1, c2 k+1, c3 j-1, c4 j+1, c5 i-1, c6 i+1
    return c0 * centre + c1 * left + c2 * right + c3 * down + c4 * up + c5 * prev + c6 * next;
}

template <int BY, int ZCHUNK, bool VEC>
__global__ void __launch_bounds__(32 * BY)
best(const float* __restrict__ in, float* __restrict__ out, int N) {
    const int lane = threadIdx.x;
    const long long j = (long long)blockIdx.y * BY + threadIdx.y;
    if (j >= N) return;  // the whole warp: a row of its own
    const long long k = ((long long)blockIdx.x * 32 + lane) * 4;  // the thread's first cell in x
    const long long plane = (long long)N * N;
    const long long i0 = (long long)blockIdx.z * ZCHUNK;
    const long long i1 = min(i0 + ZCHUNK, (long long)N);
    const bool rowEdge = j == 0 || j == N - 1;
    const long long jm = j > 0 ? j - 1 : j, jp = j < N - 1 ? j + 1 : j;  // clamped: their cells are copied anyway

    float4 prev = i0 >= 1 ? load_cells<VEC>(in, (i0 - 1) * plane + j * N, k, N) : make_float4(0, 0, 0, 0);
    float4 curr = load_cells<VEC>(in, i0 * plane + j * N, k, N);
    float4 next = i0 + 1 < N ? load_cells<VEC>(in, (i0 + 1) * plane + j * N, k, N) : make_float4(0, 0, 0, 0);
    for (long long i = i0; i < i1; ++i) {
        // plane i + 2, in flight while plane i is computed
        const float4 after = i + 2 < i1 + 1 && i + 2 < N ? load_cells<VEC>(in, (i + 2) * plane + j * N, k, N)
                                                         : make_float4(0, 0, 0, 0);
        const long long row = i * plane + j * N;
        const float4 down = load_cells<VEC>(in, i * plane + jm * N, k, N);
        const float4 up = load_cells<VEC>(in, i * plane + jp * N, k, N);
        // x neighbours across float4s: the lane beside this one holds them
        float left = __shfl_up_sync(0xffffffffu, curr.w, 1);
        float right = __shfl_down_sync(0xffffffffu, curr.x, 1);
        if (lane == 0) left = k >= 1 ? __ldg(in + row + k - 1) : 0.0f;
        if (lane == 31) right = k + 4 < N ? __ldg(in + row + k + 4) : 0.0f;
        const bool planeEdge = i == 0 || i == N - 1 || rowEdge;
        float4 o;
        o.x = seven_point(curr.x, left, curr.y, down.x, up.x, prev.x, next.x);
        o.y = seven_point(curr.y, curr.x, curr.z, down.y, up.y, prev.y, next.y);
        o.z = seven_point(curr.z, curr.y, curr.w, down.z, up.z, prev.z, next.z);
        o.w = seven_point(curr.w, curr.z, right, down.w, up.w, prev.w, next.w);
        if (planeEdge) o = curr;  // boundary planes and rows are copied
        if (k == 0) o.x = curr.x;          // the boundary columns k = 0 and k = N - 1
        if (k <= N - 1 && N - 1 < k + 4) {
            const int e = int(N - 1 - k);
            if (e == 0) o.x = curr.x;
            if (e == 1) o.y = curr.y;
            if (e == 2) o.z = curr.z;
            if (e == 3) o.w = curr.w;
        }
        if (k < N) {
            float* dst = out + row + k;
            if (VEC && k + 4 <= N) {
                __stcs(reinterpret_cast<float4*>(dst), o);
            } else {
                dst[0] = o.x;
                if (k + 1 < N) dst[1] = o.y;
                if (k + 2 < N) dst[2] = o.z;
                if (k + 3 < N) dst[3] = o.w;
            }
        }
        prev = curr;
        curr = next;
        next = after;
    }
}
