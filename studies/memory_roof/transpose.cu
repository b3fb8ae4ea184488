// Study forms of the coarsened transpose (docs/transpose.md says what they showed): studies/memory_roof_sweep.py compiles them with NVRTC and times
// their instantiations next to a device-to-device memcpy. ordered<...> runs the shipped
// kernel's move_tile (kernels_cu/transpose_tile.cuh) in other tile orders and cache modes.
// The kernel the workload runs is kernels_cu/transpose.cu's coarsened<64>: the sweep's coarsened<64, 8, 4, false, 2, 8> (TILE =
// 64, ROWS = 8, VEC = 4, no prefetch, streaming loads and stores, MINB = 8) on a 2-D grid of
// one tile per block, in the column-major tile order the second sweep chose, ordered<GROUP, 2> with GROUP at
// least the number of tile rows (ordered<128, 2> at 8192^2).
//
// TILE x TILE tile, 32 x ROWS threads, VEC-wide loads and stores; the block takes tiles
// blockIdx.x, + gridDim.x, ... (a 1-D grid of tiles, row-major over A); PREFETCH issues the
// next tile's loads before this tile's write-out; CS 1: st.global.cs stores, 2: also
// ld.global.cs loads; MINB is __launch_bounds__'s minimum of blocks per SM.

constexpr unsigned TILE_DIM = 32;

#include "transpose_tile.cuh"  // move_tile, the shipped coarsened<64>'s two phases

template <int VEC> struct VecOf;
template <> struct VecOf<1> { using T = float; };
template <> struct VecOf<2> { using T = float2; };
template <> struct VecOf<4> { using T = float4; };

template <int VEC>
__device__ __forceinline__ void store_vec(float* p, typename VecOf<VEC>::T v, bool cs) {
    if (cs) __stcs(reinterpret_cast<typename VecOf<VEC>::T*>(p), v);
    else *reinterpret_cast<typename VecOf<VEC>::T*>(p) = v;
}

template <int TILE, int ROWS, int VEC, bool PREFETCH, int CS, int MINB>
__global__ void __launch_bounds__(TILE_DIM * ROWS, MINB)
coarsened(const float* __restrict__ a, float* __restrict__ b, size_t m, size_t n, size_t tiles_x) {
    using V = typename VecOf<VEC>::T;
    constexpr int THREADS = TILE_DIM * ROWS;
    constexpr int VPR = TILE / VEC;           // vectors per tile row
    constexpr int STEP = THREADS / VPR;       // tile rows the block covers with one vector each
    constexpr int NV = TILE / STEP;           // vectors per thread and tile
    static_assert(TILE % VEC == 0 && THREADS % VPR == 0 && TILE % STEP == 0, "tile must split evenly");
    __shared__ float tile[TILE][TILE + 1];

    const int tid = threadIdx.y * TILE_DIM + threadIdx.x;
    const int r0 = tid / VPR, c = tid % VPR * VEC;  // this thread: rows r0 + k*STEP, columns c .. c+VEC-1
    const size_t tiles = tiles_x * ((m + TILE - 1) / TILE);
    const size_t grid = gridDim.x;
    const bool aligned = n % VEC == 0 && m % VEC == 0;  // every row of A and B starts on a V

    V v[NV];
    auto load = [&](size_t t) {
        size_t y0 = t / tiles_x * TILE, x0 = t % tiles_x * TILE;
        int rows = m - y0 < TILE ? int(m - y0) : TILE;
        int cols = n - x0 < TILE ? int(n - x0) : TILE;
        const float* src = a + (y0 + r0) * n + x0 + c;
        if (aligned && rows == TILE && cols == TILE) {
#pragma unroll
            for (int k = 0; k < NV; ++k) {
                const V* p = reinterpret_cast<const V*>(src + size_t(k * STEP) * n);
                v[k] = CS >= 2 ? __ldcs(p) : __ldg(p);
            }
        } else {
#pragma unroll
            for (int k = 0; k < NV; ++k) {
                float* f = reinterpret_cast<float*>(&v[k]);
#pragma unroll
                for (int e = 0; e < VEC; ++e)
                    f[e] = (r0 + k * STEP < rows && c + e < cols) ? src[size_t(k * STEP) * n + e] : 0.0f;
            }
        }
    };

    size_t t = blockIdx.x;
    if (t < tiles) load(t);
    for (; t < tiles; t += grid) {
        size_t y0 = t / tiles_x * TILE, x0 = t % tiles_x * TILE;
        int rows = m - y0 < TILE ? int(m - y0) : TILE;
        int cols = n - x0 < TILE ? int(n - x0) : TILE;
#pragma unroll
        for (int k = 0; k < NV; ++k) {
            const float* f = reinterpret_cast<const float*>(&v[k]);
#pragma unroll
            for (int e = 0; e < VEC; ++e) tile[r0 + k * STEP][c + e] = f[e];
        }
        __syncthreads();
        const bool more = t + grid < tiles;
        if (PREFETCH && more) load(t + grid);

        // B's tile: row r = A's column, column c = A's row; tile[c][r] read down a column.
        float* dst = b + (x0 + r0) * m + y0 + c;
        if (aligned && rows == TILE && cols == TILE) {
#pragma unroll
            for (int k = 0; k < NV; ++k) {
                V w;
                float* f = reinterpret_cast<float*>(&w);
#pragma unroll
                for (int e = 0; e < VEC; ++e) f[e] = tile[c + e][r0 + k * STEP];
                store_vec<VEC>(dst + size_t(k * STEP) * m, w, CS >= 1);
            }
        } else {
#pragma unroll
            for (int k = 0; k < NV; ++k)
#pragma unroll
                for (int e = 0; e < VEC; ++e)
                    if (r0 + k * STEP < cols && c + e < rows) dst[size_t(k * STEP) * m + e] = tile[c + e][r0 + k * STEP];
        }
        __syncthreads();
        if (!PREFETCH && more) load(t + grid);
    }
}

// ---- study 3: tile orders -------------------------------------------------------------
// ordered<GROUP, CS>: kernels_cu/transpose.cu's coarsened<64> -- the same move_tile
// (kernels_cu/transpose_tile.cuh: 32 x 8 threads, 64 x 64 padded tile, 4 float4s per thread,
// loads issued first) on the same 2-D grid of one tile per block,
// but the linear block id t = blockIdx.y * gridDim.x + blockIdx.x is mapped to a tile in
// another order, so that the tiles in flight at one moment (about 1056 on 132 SMs) are close
// together in both A and B:
//   GROUP = 0   row-major over A's tiles (the grid's own order: coarsened<64>)
//   GROUP = G>0 bands of G tile rows of A; inside a band column by column (t runs down the G
//               tiles of one tile column, then to the next column): A is read in G*64-row
//               bands, B written in G*64-column bands
//   GROUP = -G  bands of G tile columns; inside a band row by row
// CS: 0 plain loads and stores, 1 streaming stores, 2 streaming loads and stores, 3 as 2 with
// the loads' L2::256B prefetch-size hint.
template <int CS>
struct StudyIO {  // CS's loads and stores (the shipped kernel is CS 2: StreamingLoadsStores)
    static __device__ __forceinline__ float4 load(const float4* p) {
        if constexpr (CS == 3) {  // streaming, and L2 fetches the whole 256-byte row piece at once
            float4 v;
            asm volatile("ld.global.cs.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];"
                         : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
            return v;
        } else {
            return CS >= 2 ? __ldcs(p) : __ldg(p);
        }
    }
    static __device__ __forceinline__ void store(float4* p, float4 w) {
        if (CS >= 1) __stcs(p, w);
        else *p = w;
    }
};

template <int GROUP, int CS>
__global__ void __launch_bounds__(256, 8)
ordered(const float* __restrict__ a, float* __restrict__ b, size_t m, size_t n) {
    constexpr int TILE = 64;
    move_tile<TILE, StudyIO<CS>>(a, b, m, n, [](size_t& x0, size_t& y0) {
        const size_t tiles_x = gridDim.x, tiles_y = gridDim.y;
        const size_t t = size_t(blockIdx.y) * tiles_x + blockIdx.x;
        size_t tx, ty;
        if constexpr (GROUP > 0) {
            const size_t per = size_t(GROUP) * tiles_x, g = t / per, r = t % per;
            const size_t rows_here = tiles_y - g * GROUP < size_t(GROUP) ? tiles_y - g * GROUP : size_t(GROUP);
            ty = g * GROUP + r % rows_here;
            tx = r / rows_here;
        } else if constexpr (GROUP < 0) {
            constexpr size_t G = -GROUP;
            const size_t per = G * tiles_y, g = t / per, r = t % per;
            const size_t cols_here = tiles_x - g * G < G ? tiles_x - g * G : G;
            tx = g * G + r % cols_here;
            ty = r / cols_here;
        } else {
            tx = blockIdx.x;
            ty = blockIdx.y;
        }
        x0 = tx * TILE;
        y0 = ty * TILE;
    });
}

// ---- study 4: every shape: edges and tile orders at shapes that are not multiples of 64 ----
// edged<GROUP, VEC_EDGES, CS>: ordered<GROUP, CS>'s tile orders and cache modes, with VEC_EDGES
// the partial tiles of a matrix whose N and M are multiples of 4 moved as float4s with one bounds
// test per float4 (move_tile's VEC_EDGES) instead of element by element. edged<1 << 20, true, 2>
// is the shipped coarsened<64> since VEC_EDGES; edged<1 << 20, false, 2> the one before it.
template <int GROUP, bool VEC_EDGES, int CS = 2>
__global__ void __launch_bounds__(256, 8)
edged(const float* __restrict__ a, float* __restrict__ b, size_t m, size_t n) {
    constexpr int TILE = 64;
    move_tile<TILE, StudyIO<CS>, VEC_EDGES>(a, b, m, n, [](size_t& x0, size_t& y0) {
        const size_t tiles_x = gridDim.x, tiles_y = gridDim.y;
        const size_t t = size_t(blockIdx.y) * tiles_x + blockIdx.x;
        size_t tx, ty;
        if constexpr (GROUP > 0) {  // column by column over A (GROUP >= tile rows: the shipped order)
            const size_t per = size_t(GROUP) * tiles_x, g = t / per, r = t % per;
            const size_t rows_here = tiles_y - g * GROUP < size_t(GROUP) ? tiles_y - g * GROUP : size_t(GROUP);
            ty = g * GROUP + r % rows_here;
            tx = r / rows_here;
        } else if constexpr (GROUP < 0) {
            constexpr size_t G = -GROUP;
            const size_t per = G * tiles_y, g = t / per, r = t % per;
            const size_t cols_here = tiles_x - g * G < G ? tiles_x - g * G : G;
            tx = g * G + r % cols_here;
            ty = r / cols_here;
        } else {
            tx = blockIdx.x;
            ty = blockIdx.y;
        }
        x0 = tx * TILE;
        y0 = ty * TILE;
    });
}
