// The transpose's study forms that no table runs (studies/forms/transpose_forms.py, the workload
// `transpose_forms`): coarsened_sector_bulk and coarsened_sector_tma_lines, sm_90, made for N not a
// multiple of 4 and measured slower than the forms `best` picks there (docs/transpose.md). The other
// study forms are instantiations of the shipped templates, which this file brings in.

constexpr unsigned TILE_DIM = 32;  // the block's row of threads, as kernels_cu/transpose.cu's

#include "transpose_tma.cuh"  // the shipped TMA forms, the sector layout, the copy engine's helpers

#if defined(__CUDACC__)
// coarsened_sector_bulk (sm_90, run only when named; any N, made for odd N; docs/transpose.md):
// the sector forms' pieces of B with A's tile rows y0 - 7 .. y0 + 63 brought in by one
// bulk copy each (cp.async.bulk, no tensor map), all counted on one mbarrier. The copy engine cuts
// every copy at each 128-byte boundary of its global addresses and of its shared ones (measured:
// studies/memory_roof/tma_loads.py), so coarsened_sector_tma_any's unswizzled 272-byte box rows, at
// 272-byte steps in shared memory, cost 6 L2 requests a row where a line-aligned 128-byte box row
// costs 1. Here row r's copy, 272 bytes from the 16 at or before A[y][x0], lands in a 96-float row of
// shared memory (three 128-byte lines, 128-byte aligned) at the float where its address falls in
// its line: the two kinds of boundary then fall together, three requests a row. So A[y][x0 + c] is
// word (r - 1) * 96 + o_y + c, o_y = (address of A[y][x0] / 4) mod 32, and the copy, at most 28 + 68
// floats from the row's start, stays inside its 96.
// Banks: a half-warp's 16 lanes read one column of rows 4 apart, o_y steps by 4N mod 32; for N odd
// that runs through all 8 multiples of 4, 2 lanes a bank. The other half-warp (column + 1, rows moved
// by -M mod 4) is 1 - MN + rot N classes mod 4 away, 2 with rot = (1 + MN) N mod 4 (N^2 = 1 mod 4), as
// coarsened_sector_tma_any's. At N = 2 mod 4 the steps (8 or 24 mod 32) take only 4 banks, so there
// every lane turns its reads by q / 4 rows instead (q its lane in the half-warp): N = 2u, u odd, puts
// lane q's k-th read at 2u (4 (q % 4) + (q / 4 + k) % 4) + const mod 32, 16 different even banks, and
// the other half-warp (column + 1) on the odd ones: one lane a bank. (At N a multiple of 4, where best
// runs coarsened_sector_tma, the same turn leaves 2 to 8 lanes a bank.) A's last floats past its last
// whole 16 bytes (MN mod 4 of them) are loaded by the block. A must start on 16 bytes (the host checks).
// SECTORS (coarsened_sector_bulk_sec, a study form beside it): each copy 288 bytes from the 32-byte
// sector at or before A[y][x0] instead, whole sectors at both ends (at most 24 + 72 floats into the row).
constexpr int BULK_PITCH = 96;  // floats a shared row: 3 lines

// The turn of a lane's four reads where each tile row sits at its 128-byte line's offset (the bulk and
// lines forms): at odd N the second half-warp's rot = (1 + MN) N mod 4, at N = 2 mod 4 q / 4 rows for
// lane q of its half-warp (the banks: above).
__device__ __forceinline__ int line_offset_turn(size_t m, size_t n, int lane) {
    return n % 2 ? (lane / 16 ? int(((1 + m * n) * n) % 4) : 0) : lane % 16 / 4;
}

template <int ROWS, bool SECTORS>  // a template, as the other TMA forms: instantiated (for sm_90 only) when named
__global__ void __launch_bounds__(256, 8)
coarsened_sector_bulk(const float* __restrict__ a, float* __restrict__ b, size_t m, size_t n) {
    constexpr int COPY = SECTOR_COLS + (SECTORS ? 8 : 4);  // floats a copy: 64 from up to 7 (3) before A[y][x0]
    static_assert(ROWS == 64, "one float4 a lane and row of B (sector_write_rows)");
    constexpr int TROWS = ROWS + SECTOR_SHIFT - 1;  // tile rows 1 .. 71 (row 0 is never read: s <= 7)
    __shared__ __align__(128) float tile[TROWS * BULK_PITCH];
    __shared__ __align__(8) unsigned long long bar;
    const int tid = threadIdx.y * TILE_DIM + threadIdx.x;
    const size_t t = size_t(blockIdx.y) * gridDim.x + blockIdx.x;  // coarsened's tile order
    const long long nn = (long long)n, mm = (long long)m;
    const long long x0 = (long long)(t / gridDim.y * SECTOR_COLS), y0 = (long long)(t % gridDim.y * ROWS);
    const long long top = y0 - SECTOR_SHIFT;                         // A's row in tile row 0
    const long long total = mm * nn, whole = total & ~3LL;           // A's floats; those in whole 16 bytes
    const int base = int(reinterpret_cast<size_t>(a) / sizeof(float) % 32);  // A's start in its line
    const long long y_lo = top + 1 > 0 ? top + 1 : 0, y_hi = top + 1 + TROWS < mm ? top + 1 + TROWS : mm;
    const int rows = int(y_hi - y_lo);  // A's rows in the tile: block-uniform
    const auto word = [&](int r, int c) -> float* {  // tile row r (>= 1), column c
        return tile + (r - 1) * BULK_PITCH + int((base + (top + r) * nn + x0) & 31) + c;
    };
    if (rows > 0) {
        if (tid == 0) {
            mbar_init(&bar, unsigned(rows));  // thread i arrives once for row y_lo + i, with its copy's bytes
            mbar_init_fence();
        }
        __syncthreads();
        if (tid < rows) {
            const long long y = y_lo + tid, e0 = y * nn + x0;  // A[y][x0]
            long long start = SECTORS ? e0 - ((base + e0) & 7) : e0 & ~3LL;  // on 32 (16) bytes
            if (start < 0) start = 0;  // A's first sector, A 16 bytes into it: from A's start, on 16 bytes
            const int at = int((base + start) & 31);  // its float in its line, and in its shared row
            const long long span = COPY < BULK_PITCH - at ? COPY : BULK_PITCH - at;  // (short only where clamped)
            const long long end = start + span < whole ? start + span : whole;
            if (end > start)
                bulk_load(tile + (y - top - 1) * BULK_PITCH + at, a + start, unsigned(4 * (end - start)), &bar);
            else  // the row lies in A's last partial 16 bytes (loaded below)
                mbar_arrive(&bar);
        }
        mbar_wait(&bar, 0);
    }
    const long long last = (y_hi - 1) * nn + (x0 + SECTOR_COLS < nn ? x0 + SECTOR_COLS : nn);  // past the tile's last
    if (whole < total && last > whole) {  // block-uniform: A's last MN mod 4 floats, where this tile holds them
        if (tid < total - whole) {
            const long long g = whole + tid, y = g / nn, x = g % nn;
            if (y >= y_lo && y < y_hi && x >= x0 && x < x0 + SECTOR_COLS) *word(int(y - top), int(x - x0)) = a[g];
        }
        __syncthreads();
    }
    const int lane = tid % 32, warp = tid / 32, xl0 = 2 * warp + lane / 16, q = lane % 16;  // B's rows xl0 + 16i
    const int turn = line_offset_turn(m, n, lane);  // see above
    sector_write_rows<ROWS>(b, m, n, size_t(x0), size_t(y0), xl0, q, [&](int r) -> const float* { return word(r, xl0); },
                            [](const float* w, int i) { return w + 16 * i; }, turn);
}

// coarsened_sector_tma_lines (sm_90, run only when named; any N, made for N not a multiple of 4):
// coarsened_sector_bulk's shared layout (each row of A's tile in a 96-float row at the float where its
// address falls in its 128-byte line, so that the engine's global and shared line boundaries fall
// together) with the rows brought in by 32 tensor boxes instead of 71 bulk copies. The map takes A's
// rows 32 at a time (32N contiguous floats a row of the map, a pitch of 128N bytes: a whole number of
// lines at any N), so all the rows of one phase p = y mod 32 start at the same place in their lines,
// o_p = (A's float in its line + pN) mod 32 (x0 is a multiple of 64), and one box of 96 columns
// started o_p floats early, on a line, brings them all: 3 rows for the phases of the rows above y0
// (p >= 32 - SECTOR_SHIFT: rows y0 - 32 + p, y0 + p, y0 + 32 + p), 2 for the others (y0 + p, y0 + 32
// + p): two maps, one box height each, 72 rows of 96 floats (27,648 bytes: 8 blocks an SM, as the bulk
// form). A's last M mod 32 rows are past the map (zeros) and loaded by the block. Every row base is a
// multiple of 32 floats, so tile row r, column c sits on bank (o_p + c) mod 32 as in the bulk form,
// whose turns (its bank argument) serve unchanged. A must start on 16 bytes (the host checks).
constexpr int LINES_LOW = 32 - SECTOR_SHIFT;  // phases below: 2 tile rows; from it: 3 (a row above y0)
constexpr int LINES_PITCH = 96;               // floats a box row: three lines
constexpr int LINES_HIGH_AT = 2 * LINES_PITCH * LINES_LOW;                            // the 3-row boxes' start
constexpr int LINES_TILE = LINES_HIGH_AT + 3 * LINES_PITCH * (32 - LINES_LOW);       // 6912 floats
__host__ __device__ constexpr int lines_box(int p) {  // phase p's box: its first float in the tile
    return p < LINES_LOW ? 2 * LINES_PITCH * p : LINES_HIGH_AT + 3 * LINES_PITCH * (p - LINES_LOW);
}

template <int ROWS>  // a template, as the other TMA forms: instantiated (for sm_90 only) when named
__global__ void __launch_bounds__(256, 8)
coarsened_sector_tma_lines(const __grid_constant__ TransposeMap a2_map, const __grid_constant__ TransposeMap a3_map,
                           const float* __restrict__ a, float* __restrict__ b, size_t m, size_t n) {
    static_assert(ROWS == 64, "one float4 a lane and row of B (sector_write_rows); y0 a multiple of 32");
    __shared__ __align__(128) float tile[LINES_TILE];
    __shared__ __align__(8) unsigned long long bar;
    const int tid = threadIdx.y * TILE_DIM + threadIdx.x;
    const size_t t = size_t(blockIdx.y) * gridDim.x + blockIdx.x;  // coarsened's tile order
    const size_t x0 = t / gridDim.y * SECTOR_COLS, y0 = t % gridDim.y * ROWS;
    const int a_line = int(reinterpret_cast<size_t>(a) / sizeof(float) % 32), n32 = int(n % 32);
    const auto offset = [&](int p) { return (a_line + p * n32) & 31; };  // o_p (x0 = 0 mod 32)
    const auto word = [&](int r, int c) -> float* {  // tile row r: A's row y0 - SECTOR_SHIFT + r, column c
        const int p = (r + LINES_LOW) & 31, g = (r + LINES_LOW) >> 5;  // its phase; box row g (g - 1 below LOW)
        // lines_box(p) + (g or g - 1) rows, written out: through lines_box, sm_100's build spilled 56 bytes
        const int at = p < LINES_LOW ? 2 * LINES_PITCH * p + (g - 1) * LINES_PITCH
                                     : LINES_HIGH_AT + 3 * LINES_PITCH * (p - LINES_LOW) + g * LINES_PITCH;
        return tile + at + offset(p) + c;
    };
    // Thread 0 hands the engine the 32 boxes (tma_load_boxes serves one map and one box shape; here two).
    if (tid == 0) {
        mbar_init(&bar, 1);
        mbar_init_fence();
        mbar_expect_tx(&bar, unsigned(LINES_TILE * sizeof(float)));
        const int q0 = int(y0 / 32);
#pragma unroll  // p a constant in each copy: the box's place, map and outer row fold away
        for (int p = 0; p < 32; ++p) {
            const bool low = p < LINES_LOW;
            const int inner = p * int(n) + int(x0) - offset(p), outer = low ? q0 : q0 - 1;  // on a line
            tensor_load_2d(tile + lines_box(p), low ? &a2_map : &a3_map, &bar, inner, outer);
        }
    }
    __syncthreads();  // the barrier is initialised before anyone waits on it
    mbar_wait(&bar, 0);
    const long long top = (long long)y0 - SECTOR_SHIFT, tail = (long long)(m / 32 * 32);  // A's first row past the map
    if (top + ROWS + SECTOR_SHIFT > tail) {  // block-uniform: A's last M mod 32 rows, after the engine's zeros landed
        const long long y_lo = top > tail ? top : tail, y_hi = top + ROWS + SECTOR_SHIFT < (long long)m
                                                              ? top + ROWS + SECTOR_SHIFT : (long long)m;
        const int cols = int(n - x0 < SECTOR_COLS ? n - x0 : SECTOR_COLS);
        for (int e = tid; e < int(y_hi - y_lo) * SECTOR_COLS; e += 256) {
            const long long y = y_lo + e / SECTOR_COLS;
            const int c = e % SECTOR_COLS;
            if (c < cols) *word(int(y - top), c) = a[y * (long long)n + (long long)x0 + c];
        }
        __syncthreads();
    }
    const int lane = tid % 32, warp = tid / 32, xl0 = 2 * warp + lane / 16, q = lane % 16;  // B's rows xl0 + 16i
    const int turn = line_offset_turn(m, n, lane);  // coarsened_sector_bulk's banks, so its turns
    sector_write_rows<ROWS>(b, m, n, x0, y0, xl0, q, [&](int r) -> const float* { return word(r, xl0); },
                            [](const float* w, int i) { return w + 16 * i; }, turn);
}
#endif
