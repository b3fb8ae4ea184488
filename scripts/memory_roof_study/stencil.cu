// Study form of the coarsened stencil, kept as the source of the numbers in
// results/h200/memory-roof/sweep2.txt: scripts/memory_roof_sweep.py compiles it with NVRTC per
// radius and times its instantiations next to a device-to-device memcpy. The kernel the
// workload runs is kernels_cu/stencil.cu's coarsened<128, 9>: PATH 3 with streaming stores for
// R <= 4, PATH 2 with streaming stores for larger R.
//
// coarsened<THREADS, C, PATH, CS>: PATH 1 shared tile with a direct first window, PATH 2 the
// same with the first window from chunk sums, PATH 3 register window (4 outputs per thread,
// no shared memory); CS: streaming (st.global.cs) interior stores.

#ifndef RADIUS
#define RADIUS 32  // the course's default build
#endif

constexpr int R = RADIUS;
constexpr int WINDOW = 2 * R + 1;
constexpr float INV_WINDOW = 1.0f / WINDOW;  // one multiply per output instead of a division
constexpr int HALO = (R + 3) / 4 * 4;

// x[g .. g+3] as one float4, zero outside [0, n) -- the same zero-fill as `shared`. g is a
// multiple of 4, so the four are all inside (one 16-byte load), all left of x[0] (g < 0), or
// the last partial group, where x[g + 3] is already past the end. Only the first and last
// tiles ever take the slow path.
__device__ __forceinline__ float4 load4(const float* __restrict__ x, long long g, long long n) {
    if (g >= 0 && g + 4 <= n) return __ldg(reinterpret_cast<const float4*>(x + g));
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (g >= 0) {
        if (g + 0 < n) v.x = x[g + 0];
        if (g + 1 < n) v.y = x[g + 1];
        if (g + 2 < n) v.z = x[g + 2];
    }
    return v;
}

// y[g .. g+3] = v, dropping the elements at or past n; g >= 0 is a multiple of 4, so as in
// load4 the slow path never has y[g + 3] to write.
__device__ __forceinline__ void store4(float* __restrict__ y, long long g, long long n, float4 v) {
    if (g + 4 <= n) {
        *reinterpret_cast<float4*>(y + g) = v;
        return;
    }
    if (g + 0 < n) y[g + 0] = v.x;
    if (g + 1 < n) y[g + 1] = v.y;
    if (g + 2 < n) y[g + 2] = v.z;
}

template <bool CS>
__device__ __forceinline__ void put4(float* __restrict__ y, float4 v) {
    if (CS) __stcs(reinterpret_cast<float4*>(y), v);
    else *reinterpret_cast<float4*>(y) = v;
}

// PATH 1: shared tile, direct first window; PATH 2: shared tile, first window from chunk sums;
// PATH 3: register window (no shared memory), 4 outputs per thread. CS: streaming stores.
template <int THREADS, int C, int PATH, bool CS>
__global__ void __launch_bounds__(THREADS)
coarsened(const float* __restrict__ x, float* __restrict__ y, long long n) {
    if constexpr (PATH == 3) {
        constexpr int K4 = 2 * HALO / 4 + 1;  // float4s per group's window
        const long long g = (long long)blockIdx.x * THREADS + threadIdx.x;  // output group
        if (4 * g >= n) return;  // no barrier in this path
        float4 w[K4];
        const long long first = 4 * g - HALO;
        if (first >= 0 && first + 4 * K4 <= n) {
#pragma unroll
            for (int j = 0; j < K4; ++j) w[j] = __ldg(reinterpret_cast<const float4*>(x + first) + j);
        } else {
#pragma unroll
            for (int j = 0; j < K4; ++j) w[j] = load4(x, first + 4 * j, n);
        }
        const float* f = reinterpret_cast<const float*>(w);
        float o[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            float sum = 0.0f;
#pragma unroll
            for (int d = 0; d < WINDOW; ++d) sum += f[HALO - R + e + d];
            o[e] = sum * INV_WINDOW;
        }
        float4 out = make_float4(o[0], o[1], o[2], o[3]);
        if (4 * g + 4 <= n) put4<CS>(y + 4 * g, out);
        else store4(y, 4 * g, n, out);
    } else {
    constexpr int OUT = THREADS * C;     // outputs per block
    constexpr int IN = OUT + 2 * HALO;   // inputs per block, halo included
    constexpr int LOADS = (IN / 4 + THREADS - 1) / THREADS;   // float4 loads per thread
    constexpr int STORES = (OUT / 4 + THREADS - 1) / THREADS; // float4 stores per thread
    constexpr int Q = PATH == 2 ? WINDOW / C : 0;  // whole chunks of C in one window
    constexpr bool CHUNKED = Q >= 2;
    constexpr int GHOSTS = CHUNKED ? Q - 1 : 1;    // chunk sums past the block's last thread
    static_assert(C % 2 == 1, "C must be odd for conflict-free strided shared accesses");
    static_assert(OUT % 4 == 0, "THREADS * C must be a multiple of 4 for float4 alignment");
    static_assert((IN + OUT) * sizeof(float) <= 48 * 1024, "coarsened: tile + stage exceed 48 KB");

    __shared__ __align__(16) float tile[IN];    // tile[k] = x[base - HALO + k]
    __shared__ __align__(16) float stage[OUT];  // stage[o] = y[base + o]
    __shared__ float chunk[CHUNKED ? THREADS + GHOSTS : 1];
    const int t = threadIdx.x;
    const long long base = (long long)blockIdx.x * OUT;

    // 1. load: all loads into registers first, then all shared stores.
    float4 v[LOADS];
    if (base - HALO >= 0 && base + OUT + HALO <= n) {  // interior: no bounds to test
        const float4* src = reinterpret_cast<const float4*>(x + (base - HALO));
#pragma unroll
        for (int k = 0; k < LOADS; ++k) {
            int q = t + k * THREADS;
            if (q < IN / 4) v[k] = __ldg(src + q);
        }
    } else {
#pragma unroll
        for (int k = 0; k < LOADS; ++k) {
            int q = t + k * THREADS;
            if (q < IN / 4) v[k] = load4(x, base - HALO + 4LL * q, n);
        }
    }
#pragma unroll
    for (int k = 0; k < LOADS; ++k) {
        int q = t + k * THREADS;
        if (q < IN / 4) reinterpret_cast<float4*>(tile)[q] = v[k];
    }
    __syncthreads();  // the tile is complete

    const int s = t * C + (HALO - R);
    float leaving[C - 1];
#pragma unroll
    for (int d = 0; d < C - 1; ++d) leaving[d] = tile[s + d];
    float sum = 0.0f;
    if constexpr (CHUNKED) {
        float own = 0.0f;
#pragma unroll
        for (int d = 0; d < C - 1; ++d) own += leaving[d];
        own += tile[s + C - 1];
        chunk[t] = own;
        if (t < GHOSTS) {
            const int sg = (THREADS + t) * C + (HALO - R);
            float ghost = 0.0f;
#pragma unroll
            for (int d = 0; d < C; ++d) ghost += tile[sg + d];
            chunk[THREADS + t] = ghost;
        }
        __syncthreads();  // every chunk sum is in `chunk`
        sum = own;
#pragma unroll
        for (int j = 1; j < Q; ++j) sum += chunk[t + j];
#pragma unroll
        for (int d = Q * C; d < WINDOW; ++d) sum += tile[s + d];
    } else {
#pragma unroll
        for (int d = 0; d < WINDOW && d < C - 1; ++d) sum += leaving[d];
        for (int d = C - 1; d < WINDOW; ++d) sum += tile[s + d];
    }
    stage[t * C] = sum * INV_WINDOW;
#pragma unroll
    for (int c = 1; c < C; ++c) {
        sum += tile[s + c + 2 * R] - leaving[c - 1];  // x[base+o+R] enters, x[base+o-R-1] leaves
        stage[t * C + c] = sum * INV_WINDOW;
    }
    __syncthreads();  // every output of the block is staged

    // 3. store: coalesced float4 stores; outputs at or past n are not written.
    if (base + OUT <= n) {
#pragma unroll
        for (int k = 0; k < STORES; ++k) {
            int q = t + k * THREADS;
            if (q < OUT / 4) put4<CS>(y + base + 4 * q, reinterpret_cast<const float4*>(stage)[q]);
        }
    } else {
#pragma unroll
        for (int k = 0; k < STORES; ++k) {
            int q = t + k * THREADS;
            if (q < OUT / 4) store4(y, base + 4LL * q, n, reinterpret_cast<const float4*>(stage)[q]);
        }
    }
    }
}
