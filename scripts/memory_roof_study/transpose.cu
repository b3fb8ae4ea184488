// Study form of the coarsened transpose, kept as the source of the numbers in
// results/h200/memory-roof/sweep2.txt: scripts/memory_roof_sweep.py compiles it with NVRTC and
// times its instantiations next to a device-to-device memcpy. The kernel the workload runs is
// kernels_cu/transpose.cu's coarsened<64>, which is this template at TILE = 64, ROWS = 8,
// VEC = 4, PREFETCH = false, CS = 2 (streaming loads and stores), MINB = 8, launched on a 2-D
// grid of one tile per block.
//
// TILE x TILE tile, 32 x ROWS threads, VEC-wide loads and stores; the block takes tiles
// blockIdx.x, + gridDim.x, ... (a 1-D grid of tiles, row-major over A); PREFETCH issues the
// next tile's loads before this tile's write-out; CS 1: st.global.cs stores, 2: also
// ld.global.cs loads; MINB is __launch_bounds__'s minimum of blocks per SM.

constexpr unsigned TILE_DIM = 32;

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
