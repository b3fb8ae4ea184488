// Study forms of the coarsened stencil (docs/stencil.md says what they showed; studies/README.md says which
// results they produced): studies/memory_roof_sweep.py compiles them with NVRTC per radius
// and times their instantiations next to a device-to-device memcpy. They use the shipped
// kernel's device helpers (kernels_cu/vector_io.cuh), so a candidate differs from the
// shipped kernel only where the template arguments say. The kernel the workload runs is
// kernels_cu/stencil.cu's coarsened<128, 9, 256>: for R <= 4 coarsened<256, 1, 3, true> (the
// register window, 256 threads, streaming stores), for larger R pipe<128, 9, 1, true, false>
// (PATH 2 with its tile filled by cp.async).
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

#include "vector_io.cuh"  // the shipped kernel's load4, store4 (streaming) and copy16_async

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

// ---- study 3: latency at 2^22 ---------------------------------------------------------
// pipe<THREADS, C, TPB, ASYNC, WARP>: the PATH 2 kernel above (shared tile, chunked first
// window, running sum, streaming stores) with the same tiles and the same summation order, so
// its output is bit for bit PATH 2's; what changes is how the tiles' loads and the barriers
// are laid out in time:
//   TPB    tiles per block (tile blockIdx.x * TPB + k), the loads of all TPB tiles issued
//          before the first is summed, so later tiles' loads are in flight during earlier
//          tiles' work (fewer, longer-lived blocks instead of a second partial wave)
//   ASYNC  the loads go global -> shared with cp.async (16 bytes, .cg), one buffer per tile,
//          one commit group per tile; else into registers (TPB x LOADS float4s), one buffer
//   WARP   no block barrier after the tile: the chunk sums of the next Q-1 threads come by
//          warp shuffles (the last Q-1 lanes' from ghost chunks the warp's first lanes sum),
//          and each warp stages and stores its own 32*C outputs behind a __syncwarp

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void cp_async_wait(int pending) {  // pending: a constant after unrolling
    switch (pending) {
        case 0: asm volatile("cp.async.wait_group 0;\n" ::: "memory"); break;
        case 1: asm volatile("cp.async.wait_group 1;\n" ::: "memory"); break;
        case 2: asm volatile("cp.async.wait_group 2;\n" ::: "memory"); break;
        default: asm volatile("cp.async.wait_group 3;\n" ::: "memory"); break;
    }
}

template <int THREADS, int C, int TPB, bool ASYNC, bool WARP>
__global__ void __launch_bounds__(THREADS)
pipe(const float* __restrict__ x, float* __restrict__ y, long long n) {
    constexpr int OUT = THREADS * C, IN = OUT + 2 * HALO;
    constexpr int LOADS = (IN / 4 + THREADS - 1) / THREADS;
    constexpr int STORES = (OUT / 4 + THREADS - 1) / THREADS;
    constexpr int WOUT = 32 * C;                               // outputs per warp
    constexpr int WSTORES = (WOUT / 4 + 31) / 32;              // float4 stores per lane, WARP
    constexpr int Q = WINDOW / C;
    constexpr bool CHUNKED = Q >= 2;
    constexpr int GHOSTS = CHUNKED ? Q - 1 : 0;
    constexpr int NBUF = ASYNC ? TPB : 1;
    static_assert(C % 2 == 1 && OUT % 4 == 0 && TPB >= 1 && TPB <= 4, "tile shape");
    static_assert(!WARP || GHOSTS <= 31, "WARP: the next Q-1 chunk sums must come from one warp");
    static_assert((NBUF * IN + OUT + THREADS + GHOSTS) * sizeof(float) <= 48 * 1024, "48 KB");

    __shared__ __align__(16) float tile[NBUF][IN];
    __shared__ __align__(16) float stage[OUT];
    __shared__ float chunk[WARP || !CHUNKED ? 1 : THREADS + GHOSTS];
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    const long long first_tile = (long long)blockIdx.x * TPB;

    float4 v[ASYNC ? 1 : TPB][LOADS];
#pragma unroll
    for (int k = 0; k < TPB; ++k) {
        const long long base = (first_tile + k) * OUT;
        const bool inside = base - HALO >= 0 && base + OUT + HALO <= n;
        if (ASYNC) {
            if (base < n) {
                if (inside) {
#pragma unroll
                    for (int j = 0; j < LOADS; ++j) {
                        int q = t + j * THREADS;
                        if (q < IN / 4) copy16_async(&tile[k][4 * q], x + base - HALO + 4 * q);
                    }
                } else {
#pragma unroll
                    for (int j = 0; j < LOADS; ++j) {
                        int q = t + j * THREADS;
                        if (q < IN / 4) reinterpret_cast<float4*>(tile[k])[q] = load4(x, base - HALO + 4LL * q, n);
                    }
                }
            }
            cp_async_commit();  // one group per tile, empty ones too, so wait_group counts right
        } else if (base < n) {
#pragma unroll
            for (int j = 0; j < LOADS; ++j) {
                int q = t + j * THREADS;
                if (q < IN / 4)
                    v[ASYNC ? 0 : k][j] = inside ? __ldg(reinterpret_cast<const float4*>(x + base - HALO) + q)
                                                 : load4(x, base - HALO + 4LL * q, n);
            }
        }
    }

#pragma unroll
    for (int k = 0; k < TPB; ++k) {
        const long long base = (first_tile + k) * OUT;
        if (base >= n) break;  // block-uniform
        const float* tl = tile[ASYNC ? k : 0];
        if (ASYNC) {
            cp_async_wait(TPB - 1 - k);
        } else {
            if (k > 0) __syncthreads();  // every thread is done with the previous tile
#pragma unroll
            for (int j = 0; j < LOADS; ++j) {
                int q = t + j * THREADS;
                if (q < IN / 4) reinterpret_cast<float4*>(tile[0])[q] = v[ASYNC ? 0 : k][j];
            }
        }
        __syncthreads();  // the tile is complete (and, with WARP, stage free: each warp its own)

        const int s = t * C + (HALO - R);
        float leaving[C - 1];
#pragma unroll
        for (int d = 0; d < C - 1; ++d) leaving[d] = tl[s + d];
        float sum = 0.0f;
        if constexpr (CHUNKED) {
            float own = 0.0f;
#pragma unroll
            for (int d = 0; d < C - 1; ++d) own += leaving[d];
            own += tl[s + C - 1];
            if constexpr (WARP) {
                float ghost = 0.0f;  // chunk of virtual lane 32 + lane: the next warp's lane `lane`
                if (lane < GHOSTS) {
                    const int sg = (warp * 32 + 32 + lane) * C + (HALO - R);
#pragma unroll
                    for (int d = 0; d < C; ++d) ghost += tl[sg + d];
                }
                sum = own;
#pragma unroll
                for (int j = 1; j < Q; ++j)  // lane l gets chunk l+j: lane l+j's own, or ghost l+j-32
                    sum += __shfl_sync(0xffffffffu, lane < j ? ghost : own, (lane + j) & 31);
            } else {
                chunk[t] = own;
                for (int j = t; j < GHOSTS; j += THREADS) {
                    const int sg = (THREADS + j) * C + (HALO - R);
                    float ghost = 0.0f;
#pragma unroll
                    for (int d = 0; d < C; ++d) ghost += tl[sg + d];
                    chunk[THREADS + j] = ghost;
                }
                __syncthreads();
                sum = own;
                for (int j = 1; j < Q; ++j) sum += chunk[t + j];
            }
#pragma unroll
            for (int d = Q * C; d < WINDOW; ++d) sum += tl[s + d];
        } else {
#pragma unroll
            for (int d = 0; d < WINDOW && d < C - 1; ++d) sum += leaving[d];
            for (int d = C - 1; d < WINDOW; ++d) sum += tl[s + d];
        }
        stage[t * C] = sum * INV_WINDOW;
#pragma unroll
        for (int c = 1; c < C; ++c) {
            sum += tl[s + c + 2 * R] - leaving[c - 1];
            stage[t * C + c] = sum * INV_WINDOW;
        }
        if constexpr (WARP) {
            __syncwarp();
            const long long wbase = base + warp * WOUT;
            const float4* staged = reinterpret_cast<const float4*>(stage + warp * WOUT);
            if (wbase + WOUT <= n) {
#pragma unroll
                for (int j = 0; j < WSTORES; ++j) {
                    int q = lane + 32 * j;
                    if (q < WOUT / 4) __stcs(reinterpret_cast<float4*>(y + wbase) + q, staged[q]);
                }
            } else if (wbase < n) {
#pragma unroll
                for (int j = 0; j < WSTORES; ++j) {
                    int q = lane + 32 * j;
                    if (q < WOUT / 4) store4(y, wbase + 4LL * q, n, staged[q]);
                }
            }
            __syncwarp();  // the warp's stage is read before its next tile overwrites it
        } else {
            __syncthreads();
            const float4* staged = reinterpret_cast<const float4*>(stage);
            if (base + OUT <= n) {
#pragma unroll
                for (int j = 0; j < STORES; ++j) {
                    int q = t + j * THREADS;
                    if (q < OUT / 4) __stcs(reinterpret_cast<float4*>(y + base) + q, staged[q]);
                }
            } else {
#pragma unroll
                for (int j = 0; j < STORES; ++j) {
                    int q = t + j * THREADS;
                    if (q < OUT / 4) store4(y, base + 4LL * q, n, staged[q]);
                }
            }
        }
    }
}
