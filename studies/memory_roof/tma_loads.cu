// The copy engine's loads of a transpose tile alone, one kernel a layout: studies/memory_roof/tma_loads.py
// (which says what each layout is and how it is timed; docs/transpose.md). sm_90.
struct __align__(64) Map { unsigned long long w[16]; };
__device__ __forceinline__ unsigned smem(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }
constexpr int SMEM_FLOATS = 72 * 128 + 16;  // the largest layout (bulk_line), for every form

__device__ __forceinline__ void wait_all(unsigned bar) {
    unsigned done = 0;
    while (!done)
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(bar) : "memory");
}

// BOXES boxes a tile: box b = phase b / PARTS, part b % PARTS of COLS columns; STRIDE floats apart.
template <int BOXES, int PARTS, int COLS, int STRIDE, bool ANY>
__device__ void boxes(const Map& map, float* tile, unsigned long long* bar, int n, long long x0, long long top) {
    const int tid = threadIdx.x;
    const unsigned b = smem(bar);
    if (tid == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(b) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(b),
                     "r"(unsigned(BOXES * COLS * 18 * 4)) : "memory");
        for (int i = 0; i < BOXES; ++i) {
            const int p = i / PARTS, q = i % PARTS;
            const int inner = p * n + int(x0) - (ANY ? ((p * n) & 3) : 0) + q * COLS;
            const int outer = int(top / 4);
            asm volatile(
                "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n"
                ::"r"(smem(tile + i * STRIDE)), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(b), "r"(inner),
                "r"(outer) : "memory");
        }
    }
    __syncthreads();
    wait_all(b);
}

#define TILE_ORDER                                                                  \
    const long long t = (long long)blockIdx.y * gridDim.x + blockIdx.x;             \
    const long long x0 = t / gridDim.y * 64, top = t % gridDim.y * 64 - 8;

#define BOX_FORM(NAME, BOXES, PARTS, COLS, STRIDE, ANY)                                          \
extern "C" __global__ void __launch_bounds__(256) NAME(const __grid_constant__ Map map, float* sink, \
                                                          int m, int n) {                          \
    __shared__ __align__(1024) float tile[SMEM_FLOATS];                                          \
    __shared__ __align__(8) unsigned long long bar;                                              \
    TILE_ORDER                                                                                   \
    boxes<BOXES, PARTS, COLS, STRIDE, ANY>(map, tile, &bar, n, x0, top);                         \
    if (tile[threadIdx.x] == 1234.5f) sink[0] = 1.f;                                             \
}
BOX_FORM(swz32, 8, 2, 32, 768, false)   // boxes 1024-byte aligned (the swizzle's unit)
BOX_FORM(flat32, 8, 2, 32, 768, false)
BOX_FORM(flat64, 4, 1, 64, 1152, false)
BOX_FORM(flat68, 4, 1, 68, 1248, true)
BOX_FORM(flat96, 4, 1, 96, 1728, true)

// One bulk copy a row of A (72 rows a tile, y in [0, m)): 272 bytes from the 16 bytes at or before A[y][x0]
// (LINES: 384 bytes from the 128 at or before it, three whole lines; SECTORS: 288 from the 32).
template <bool LINE, bool LINES = false, bool SECTORS = false>
__device__ void bulk_rows(const float* a, float* tile, unsigned long long* bar, int m, int n, long long x0, long long top) {
    constexpr unsigned BYTES = LINES ? 384 : SECTORS ? 288 : 272;
    const int tid = threadIdx.x;
    const unsigned b = smem(bar);
    const long long y_lo = top < 0 ? 0 : top, y_hi = top + 72 < m ? top + 72 : m;
    if (tid == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(b) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    if (tid == 0)
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(b),
                     "r"(unsigned((y_hi - y_lo) * BYTES)) : "memory");
    __syncthreads();
    const long long y = top + tid;
    if (tid < 72 && y >= y_lo && y < y_hi) {
        const long long first = y * n + x0, start = first & (LINES ? ~31LL : SECTORS ? ~7LL : ~3LL);  // on 16, 32, 128 B
        float* dst = tile + tid * (LINE ? 128 : 68) + (LINE && !LINES ? int(start & 31) : 0);
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %3, [%2];\n"
                     ::"r"(smem(dst)), "l"(a + start), "r"(b), "r"(BYTES) : "memory");
    }
    wait_all(b);
}

#define BULK_FORM(NAME, LINE, LINES, SECTORS)                                                                   \
extern "C" __global__ void __launch_bounds__(256) NAME(const float* __restrict__ a, float* sink, int m, int n) { \
    __shared__ __align__(1024) float tile[SMEM_FLOATS];                                          \
    __shared__ __align__(8) unsigned long long bar;                                              \
    TILE_ORDER                                                                                   \
    bulk_rows<LINE, LINES, SECTORS>(a, tile, &bar, m, n, x0, top);                                           \
    if (tile[threadIdx.x] == 1234.5f) sink[0] = 1.f;                                             \
}
BULK_FORM(bulk, false, false, false)
BULK_FORM(bulk_line, true, false, false)
BULK_FORM(bulk_sec, true, false, true)
BULK_FORM(bulk_lines3, true, true, false)

// The read roof: 72 rows x 64 columns a tile by the threads, float4 where the row allows, else floats.
extern "C" __global__ void __launch_bounds__(256) read4(const float* __restrict__ a, float* sink, int m, int n) {
    __shared__ __align__(1024) float tile[SMEM_FLOATS];
    TILE_ORDER
    float s = 0.f;
    for (int i = threadIdx.x; i < 72 * 64; i += 256) {
        const long long y = top + i / 64, x = x0 + i % 64;
        if (y >= 0 && y < m && x < n) s += __ldcs(a + y * n + x);
    }
    tile[threadIdx.x] = s;
    __syncthreads();
    if (tile[(threadIdx.x + 1) % 256] == 1234.5f) sink[0] = 1.f;
}
