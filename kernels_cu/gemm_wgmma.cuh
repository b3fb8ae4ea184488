// GEMM on Hopper's warpgroup MMA (sm_90a): C[M,N] (FP32) = A[M,K] * B[K,N], row-major, inputs
// BF16 or FP16, FP32 accumulation. Included by gemm_tc.cuh; the rungs of
// `pmppbench gemm --precision bf16,fp16` that need sm_90a:
//
//   wgmma_tc<P, TMA>     wgmma.mma_async.m64n256k16 from shared-memory matrix descriptors (128-byte
//                        swizzle), 128 x 256 x 64 block tiles, 2 warpgroups of 64 x 256, a 4-stage
//                        pipeline of TMA copies (cp.async.bulk.tensor) completing on mbarriers
//   wgmma_ws_tc<P, TMA>  the same with a producer warpgroup and two consumers (warp
//                        specialization, setmaxnreg): full and empty mbarriers, no block barrier
//
// What Hopper changes against mma_tc (PMPP's tiling, one level down):
// - wgmma: the 4 warps of a warpgroup issue one 64 x N x 16 MMA together, reading A and B
//   straight from shared memory through 64-bit descriptors (no ldmatrix, no fragments in
//   registers: the registers hold only the FP32 accumulators, 128 a thread here). The MMA runs
//   asynchronously: wgmma.fence before it touches the accumulators, commit_group after a
//   batch, wait_group before the registers or the shared tiles are reused.
// - The descriptors read a fixed layout: rows of 128 bytes (64 halves) in groups of 8 rows
//   (1024 bytes), the 16-byte chunks of row r XOR-ed with r % 8 (the 128-byte swizzle, which
//   keeps the tensor cores' reads free of bank conflicts). A is K-major (a row of the tile is
//   64 k's of one m), B is N-major (a row is 64 n's of one k; the MMA is told to transpose).
// - TMA: one thread hands the copy engine a box of a tensor (described once on the host by
//   cuTensorMapEncodeTiled: sizes, strides, box, swizzle), and the engine writes it swizzled
//   and counts its bytes on an mbarrier (expect_tx / complete_tx). Boxes past the matrix are
//   zero-filled: the edges need no code. The consumers wait on the barrier's phase parity.
// TMA (K and N multiples of 8: TMA's row strides are multiples of 16 bytes) takes that path;
// otherwise every thread stores its elements into the same swizzled layout (zero outside),
// fences them to the async proxy and the block multiplies one stage at a time (slow, exact).
// Every path is inline PTX (no CUDA header): it builds only for sm_90a, and its template is
// instantiated only by name, so the other targets never see it.

constexpr int WG_BM = 128, WG_BN = 256, WG_BK = 64, WG_THREADS = 256, WG_STAGES = 4;
constexpr int WG_A_BYTES = WG_BM * WG_BK * 2;          // 16 KB: one 128 x 64 box
constexpr int WG_B_BYTES = WG_BK * WG_BN * 2;          // 32 KB: four 64 (n) x 64 (k) boxes
constexpr int WG_STAGE_BYTES = WG_A_BYTES + WG_B_BYTES;
constexpr int WG_BOX_BYTES = WG_BK * 64 * 2;           // one 64 x 64 box of B: 8 KB
// dynamic shared memory: the stages, 1024 bytes of slack to align them (the swizzle's unit), the barriers
constexpr int WG_SMEM_BYTES = WG_STAGES * WG_STAGE_BYTES + 1024 + WG_STAGES * 8;

struct __align__(64) TmaMap { unsigned long long words[16]; };  // CUtensorMap: 128 opaque bytes

__device__ __forceinline__ unsigned wg_smem(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void mbar_init(unsigned long long* bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(wg_smem(bar)), "r"(count) : "memory");
}

// Arrive once and add `bytes` to the transaction count the phase waits for.
__device__ __forceinline__ void mbar_expect_tx(unsigned long long* bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(wg_smem(bar)), "r"(bytes)
                 : "memory");
}

// Spin until the phase of parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(unsigned long long* bar, unsigned parity) {
    unsigned done = 0;
    while (!done)
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(wg_smem(bar)), "r"(parity) : "memory");
}

// The copy engine: the box of `map` at (c0 along the contiguous dimension, c1 along rows) into
// shared memory at dst, its bytes counted on bar.
__device__ __forceinline__ void tma_load(void* dst, const TmaMap& map, unsigned long long* bar, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n"
                 ::"r"(wg_smem(dst)), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(wg_smem(bar)), "r"(c0), "r"(c1)
                 : "memory");
}

// A shared-memory matrix descriptor: start address, leading and stride byte offsets (all in
// 16-byte units, 14 bits each), layout 1 = the 128-byte swizzle (bits 62-63).
__device__ __forceinline__ unsigned long long wg_desc(const void* p, unsigned lbo, unsigned sbo) {
    return (static_cast<unsigned long long>(wg_smem(p) & 0x3FFFF) >> 4) |
           (static_cast<unsigned long long>((lbo & 0x3FFFF) >> 4) << 16) |
           (static_cast<unsigned long long>((sbo & 0x3FFFF) >> 4) << 32) | (1ull << 62);
}

__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wg_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }

// The accumulators' registers and operands of one m64n256k16 (generated lists: 128 FP32 a thread).
#define WG_D256 "{" \
    "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15" "," \
    "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31" "," \
    "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47" "," \
    "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63" "," \
    "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79" "," \
    "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95" "," \
    "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111" "," \
    "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127" "}"
#define WG_C256 \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
    "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
    "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
    "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), \
    "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
    "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
    "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
    "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
    "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
    "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
    "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
    "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

template <int P>
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], unsigned long long da, unsigned long long db) {
    // d += A (64 x 16, K-major: no transpose) * B (16 x 256, N-major: transposed); scale-d = 1
    if constexpr (P == 1)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 " WG_D256 ", %128, %129, p, 1, 1, 0, 1;\n}\n"
                     : WG_C256 : "l"(da), "l"(db), "r"(1) : "memory");
    else
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 " WG_D256 ", %128, %129, p, 1, 1, 0, 1;\n}\n"
                     : WG_C256 : "l"(da), "l"(db), "r"(1) : "memory");
}

// One k-tile (64) for warpgroup `wg`: four m64n256k16 MMAs, committed as one group.
// A: the warpgroup's 64 rows start 64 x 128 bytes in; a k16 step is 32 bytes along the
// 128-byte rows; 8-row groups are 1024 bytes apart (the stride byte offset; the leading one is
// unused for a swizzled K-major operand). B: a k16 step is 16 rows of 128 bytes; 8-row (k)
// groups 1024 bytes apart (stride), the four 64-column boxes 8 KB apart (leading).
template <int P>
__device__ __forceinline__ void wg_tile(float (&d)[128], const unsigned char* As, const unsigned char* Bs, int wg) {
    wg_fence();
#pragma unroll
    for (int kk = 0; kk < WG_BK / 16; ++kk)
        wgmma_m64n256k16<P>(d, wg_desc(As + wg * 64 * 128 + kk * 32, 16, 1024),
                            wg_desc(Bs + kk * 16 * 128, WG_BOX_BYTES, 1024));
    wg_commit();
}

// One stage by the copy engine (one thread): A's 128 x 64 box, B's four 64 x 64 boxes.
__device__ __forceinline__ void wg_tma_stage(unsigned char* As, unsigned char* Bs, unsigned long long* bar,
                                             const TmaMap& a_map, const TmaMap& b_map, int m0, int n0, int k0) {
    mbar_expect_tx(bar, WG_STAGE_BYTES);  // boxes partly past the matrix still count whole (zero-filled)
    tma_load(As, a_map, bar, k0, m0);
#pragma unroll
    for (int j = 0; j < WG_BN / 64; ++j)
        tma_load(Bs + j * WG_BOX_BYTES, b_map, bar, n0 + 64 * j, k0);
}

// Byte offset of element (r, c) in a tile of 128-byte rows (64 halves), swizzled as TMA's
// SWIZZLE_128B writes it: the 16-byte chunk c / 8 of row r lands at chunk (c / 8) ^ (r % 8).
__device__ __forceinline__ int wg_swizzle(int r, int c) { return r * 128 + (((c >> 3) ^ (r & 7)) << 4) + (c & 7) * 2; }

// The path without TMA (K or N not a multiple of 8): every thread stores its elements of one
// stage, zero outside the matrix, in the layout above.
__device__ __forceinline__ void wg_store_stage(unsigned char* As, unsigned char* Bs, const unsigned short* A,
                                               const unsigned short* B, int M, int N, int K, int m0, int n0, int k0,
                                               int tid) {  // tid: 0 .. WG_THREADS - 1, the storing threads
    for (int i = tid; i < WG_BM * WG_BK; i += WG_THREADS) {
        const int r = i / WG_BK, c = i % WG_BK;
        *reinterpret_cast<unsigned short*>(As + wg_swizzle(r, c)) =
            (m0 + r < M && k0 + c < K) ? A[size_t(m0 + r) * K + k0 + c] : 0;
    }
    for (int i = tid; i < WG_BK * WG_BN; i += WG_THREADS) {
        const int r = i / WG_BN, c = i % WG_BN;  // k row, n column
        *reinterpret_cast<unsigned short*>(Bs + (c / 64) * WG_BOX_BYTES + wg_swizzle(r, c % 64)) =
            (k0 + r < K && n0 + c < N) ? B[size_t(k0 + r) * N + n0 + c] : 0;
    }
}

// The accumulators (the m64nNk16 layout) to C: warp w of the warpgroup holds rows 16w..16w+15
// of its 64; d[4j + 2h + e] is row g + 8h, column 8j + 2t + e, with g = lane / 4, t = lane % 4.
// `t128`: the thread's index in its warpgroup; row0: the warpgroup's first row of C.
__device__ __forceinline__ void wg_store_c(const float (&d)[128], float* __restrict__ C, int M, int N, int row0,
                                           int n0, int t128) {
    const int lane = t128 % 32, warp = t128 / 32, g = lane / 4, t = lane % 4;
    const bool pairs = N % 2 == 0;  // 8-byte aligned column pairs
#pragma unroll
    for (int j = 0; j < WG_BN / 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = row0 + warp * 16 + g + 8 * h, col = n0 + 8 * j + 2 * t;
            if (row >= M)
                continue;
            float* c = C + size_t(row) * N + col;
            const float x = d[4 * j + 2 * h], y = d[4 * j + 2 * h + 1];
            if (pairs && col + 1 < N) {
                *reinterpret_cast<float2*>(c) = float2{x, y};
            } else {
                if (col < N) c[0] = x;
                if (col + 1 < N) c[1] = y;
            }
        }
}

// a_map, b_map: A (K x M elements, contiguous K) and B (N x K, contiguous N) as the host's
// tensor maps describe them (tma.py); unused (zero) on the path without TMA.
template <int P, bool TMA>
__global__ void __launch_bounds__(WG_THREADS, 1)
wgmma_tc(const __grid_constant__ TmaMap a_map, const __grid_constant__ TmaMap b_map,
         const unsigned short* __restrict__ A, const unsigned short* __restrict__ B, float* __restrict__ C,
         int M, int N, int K) {
    static_assert(P == 1 || P == 2, "wgmma_tc: BF16 or FP16 inputs");
    extern __shared__ __align__(128) unsigned char wg_raw[];  // 128: a 1024 here pads every kernel of the module
    unsigned char* smem = wg_raw + ((1024 - (wg_smem(wg_raw) & 1023)) & 1023);  // stages 1024-aligned
    unsigned long long* full = reinterpret_cast<unsigned long long*>(smem + WG_STAGES * WG_STAGE_BYTES);
    const int tid = threadIdx.x, wg = tid / 128;
    const int m0 = blockIdx.y * WG_BM, n0 = blockIdx.x * WG_BN;
    const int KT = (K + WG_BK - 1) / WG_BK;
    auto stage_a = [&](int s) { return smem + s * WG_STAGE_BYTES; };
    auto stage_b = [&](int s) { return smem + s * WG_STAGE_BYTES + WG_A_BYTES; };
    float d[128];
#pragma unroll
    for (int i = 0; i < 128; ++i)
        d[i] = 0.f;

    if (TMA) {
        if (tid == 0) {
            for (int s = 0; s < WG_STAGES; ++s)
                mbar_init(&full[s], 1);  // one arrival (the expect_tx) plus the stage's bytes
            asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
            for (int s = 0; s < WG_STAGES && s < KT; ++s)  // the prologue: every stage in flight
                wg_tma_stage(stage_a(s), stage_b(s), &full[s], a_map, b_map, m0, n0, s * WG_BK);
        }
        __syncthreads();  // the barriers are initialised before anyone waits on them
        for (int kt = 0; kt < KT; ++kt) {
            const int s = kt % WG_STAGES;
            mbar_wait(&full[s], (kt / WG_STAGES) & 1);  // tile kt has landed (the stage's use number, mod 2)
            wg_tile<P>(d, stage_a(s), stage_b(s), wg);
            wg_wait<1>();     // this warpgroup's MMAs of tile kt - 1 are done (kt's still run)
            __syncthreads();  // ... and the other's: tile kt - 1's stage is free
            const int refill = kt - 1 + WG_STAGES;
            if (tid == 0 && kt >= 1 && refill < KT) {
                const int r = (kt - 1) % WG_STAGES;
                wg_tma_stage(stage_a(r), stage_b(r), &full[r], a_map, b_map, m0, n0, refill * WG_BK);
            }
        }
        wg_wait<0>();
    } else {
        for (int kt = 0; kt < KT; ++kt) {
            wg_store_stage(stage_a(0), stage_b(0), A, B, M, N, K, m0, n0, kt * WG_BK, tid);
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // ordinary stores, read by wgmma
            __syncthreads();
            wg_tile<P>(d, stage_a(0), stage_b(0), wg);
            wg_wait<0>();
            __syncthreads();  // both warpgroups are done before the stage is overwritten
        }
    }

    wg_store_c(d, C, M, N, m0 + wg * 64, n0, tid % 128);
}

// ---------------------------------------------------------------------------------------
// wgmma_ws_tc<P, TMA>: the same tiles and MMAs, the roles split (warp specialization). 384
// threads: warpgroup 0 is the producer, one of its threads issuing each stage's TMA copies as
// soon as the consumers have released the stage (an `empty` mbarrier per stage, one arrival per
// consumer warpgroup); warpgroups 1 and 2 only wait for `full`, multiply and release. No block-
// wide barrier in the loop: a consumer that finishes its MMAs early runs on into the next tile.
// setmaxnreg moves registers from the producer (which needs few) to the consumers (128
// accumulators each); it takes effect because the kernel has a register cap at entry
// (__launch_bounds__ with 1 block a multiprocessor) and each role is one branch.
// Without TMA the consumers store the stages themselves, synchronised by a named barrier of
// their 256 threads (barrier 1), and the producer has nothing to do.
constexpr int WS_THREADS = 384;
constexpr int WS_SMEM_BYTES = WG_STAGES * WG_STAGE_BYTES + 1024 + 2 * WG_STAGES * 8;  // full and empty barriers

__device__ __forceinline__ void mbar_arrive(unsigned long long* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(wg_smem(bar)) : "memory");
}

__device__ __forceinline__ void consumers_sync() { asm volatile("bar.sync 1, 256;\n" ::: "memory"); }

template <int P, bool TMA>
__global__ void __launch_bounds__(WS_THREADS, 1)
wgmma_ws_tc(const __grid_constant__ TmaMap a_map, const __grid_constant__ TmaMap b_map,
            const unsigned short* __restrict__ A, const unsigned short* __restrict__ B, float* __restrict__ C,
            int M, int N, int K) {
    static_assert(P == 1 || P == 2, "wgmma_ws_tc: BF16 or FP16 inputs");
    extern __shared__ __align__(128) unsigned char ws_raw[];
    unsigned char* smem = ws_raw + ((1024 - (wg_smem(ws_raw) & 1023)) & 1023);  // stages 1024-aligned
    unsigned long long* full = reinterpret_cast<unsigned long long*>(smem + WG_STAGES * WG_STAGE_BYTES);
    unsigned long long* empty = full + WG_STAGES;
    const int tid = threadIdx.x, wg = tid / 128;
    const int m0 = blockIdx.y * WG_BM, n0 = blockIdx.x * WG_BN;
    const int KT = (K + WG_BK - 1) / WG_BK;
    auto stage_a = [&](int s) { return smem + s * WG_STAGE_BYTES; };
    auto stage_b = [&](int s) { return smem + s * WG_STAGE_BYTES + WG_A_BYTES; };
    if (tid == 0) {
        for (int s = 0; s < WG_STAGES; ++s) {
            mbar_init(&full[s], 1);   // the producer's expect_tx, then the stage's bytes
            mbar_init(&empty[s], 2);  // one arrival per consumer warpgroup
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();  // the last block-wide barrier: from here each role runs on its own
    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (TMA && tid == 0)
            for (int kt = 0; kt < KT; ++kt) {
                const int s = kt % WG_STAGES;
                if (kt >= WG_STAGES)  // both consumers are done with the tile this stage held before
                    mbar_wait(&empty[s], (kt / WG_STAGES - 1) & 1);
                wg_tma_stage(stage_a(s), stage_b(s), &full[s], a_map, b_map, m0, n0, kt * WG_BK);
            }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
        const int cw = wg - 1, t128 = tid % 128;  // the consumer's 64 rows
        float d[128];
#pragma unroll
        for (int i = 0; i < 128; ++i)
            d[i] = 0.f;
        if (TMA) {
            for (int kt = 0; kt < KT; ++kt) {
                const int s = kt % WG_STAGES;
                mbar_wait(&full[s], (kt / WG_STAGES) & 1);
                wg_tile<P>(d, stage_a(s), stage_b(s), cw);
                wg_wait<1>();  // this warpgroup's MMAs of tile kt - 1 are done: release its stage
                if (kt >= 1 && t128 == 0)
                    mbar_arrive(&empty[(kt - 1) % WG_STAGES]);
            }
            wg_wait<0>();
        } else {
            for (int kt = 0; kt < KT; ++kt) {
                wg_store_stage(stage_a(0), stage_b(0), A, B, M, N, K, m0, n0, kt * WG_BK, tid - 128);
                asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
                consumers_sync();
                wg_tile<P>(d, stage_a(0), stage_b(0), cw);
                wg_wait<0>();
                consumers_sync();
            }
        }
        wg_store_c(d, C, M, N, m0 + cw * 64, n0, t128);
    }
}
