// GEMM on Hopper's warpgroup MMA (sm_90a): C[M,N] (FP32) = A[M,K] * B[K,N], row-major, inputs
// TF32, BF16 or FP16, FP32 accumulation. Included by gemm_tc.cuh; the rungs of
// `pmppbench gemm --precision tf32,bf16,fp16` that need sm_90a:
//
//   wgmma_tc<P, TMA>     wgmma.mma_async.m64n256k16 from shared-memory matrix descriptors (128-byte
//                        swizzle), 128 x 256 x 64 block tiles, 2 warpgroups of 64 x 256, a 4-stage
//                        pipeline of TMA copies (cp.async.bulk.tensor) completing on mbarriers
//   wgmma_ws_tc<P, TMA>  the same with a producer warpgroup and two consumers (warp
//                        specialization, setmaxnreg): full and empty mbarriers, no block barrier
//   wgmma_ws_tc<P, TMA, true>  (wgmma_persist) the same in persistent blocks, one per SM
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
// TF32 (P = 0) keeps the stages' bytes and the pipeline, with 32 FP32 words a 128-byte row
// (BK = 32) and the block's tile turned to 256 x 128: wgmma reads TF32 from shared memory only K-major, and B is N-major (row-major
// K x N), so the TF32 block computes C^T = B^T A^T: B^T is wgmma's A operand, from registers
// (each thread loads its fragment from B's swizzled tile: any layout may feed registers), and A
// is wgmma's B operand, K-major from shared memory as it is (wg_tile_tf32 says how).
// Every path is inline PTX (no CUDA header): it builds only for sm_90a, and its template is
// instantiated only by name, so the other targets never see it.

#include "mbarrier.cuh"  // smem_addr, the mbarriers

constexpr int WG_THREADS = 256, WG_STAGES = 4;
constexpr int WG_ROW = 128;                            // bytes a row of a swizzled tile (the swizzle's span)
constexpr int WG_STAGE_BYTES = 48 * 1024;              // A's and B's k-tiles, in every precision

// Per precision: the element word, the k-tile (one 128-byte row of elements), the block's tile
// of C (BM x BN) and B's boxes, each BOX_N columns (one 128-byte row) by BK k-rows.
// BF16, FP16: 128 x BN tiles, k-tiles of 64; A 16 KB, B (BN = 256) 32 KB in 4 boxes of 64 x 64.
// BN = 192 and 128 (3 and 2 boxes, 96 and 64 accumulators a thread) are the narrower tiles `best`
// takes where they fill the last wave better (tensor_best.py); their stages keep 256's places.
// TF32: 256 x 128 tiles, k-tiles of 32; A 32 KB, B 16 KB in 4 boxes of 32 x 32 (why the tile is
// turned: wg_tile_tf32). TX: the bytes TMA writes into a stage; ACC: accumulators a thread.
template <int P, int BN_ = 256> struct WgElem {
    static_assert(BN_ == 256 || BN_ == 192 || BN_ == 128, "WgElem: BN is 256, 192 or 128");
    using T = unsigned short;
    static constexpr int BYTES = 2, BK = WG_ROW / BYTES, BOX_N = BK, BOX_BYTES = BK * WG_ROW, BM = 128, BN = BN_;
    static constexpr int A_BYTES = BM * WG_ROW, GROUP_M = 16;  // GROUP_M: the tile order's (wg_tile_at)
    static constexpr int TX = A_BYTES + BK * BN * BYTES, ACC = BN / 2;
};
template <> struct WgElem<0, 256> {
    using T = unsigned int;
    static constexpr int BYTES = 4, BK = WG_ROW / BYTES, BOX_N = BK, BOX_BYTES = BK * WG_ROW, BM = 256, BN = 128;
    static constexpr int A_BYTES = BM * WG_ROW, GROUP_M = 8;
    static constexpr int TX = A_BYTES + BK * BN * BYTES, ACC = 128;
};
static_assert(WgElem<0>::TX == WG_STAGE_BYTES && WgElem<1>::TX == WG_STAGE_BYTES, "one stage size");
// dynamic shared memory: the stages, 1024 bytes of slack to align them (the swizzle's unit), the barriers
constexpr int WG_SMEM_BYTES = WG_STAGES * WG_STAGE_BYTES + 1024 + WG_STAGES * 8;

// The tile order. Blocks start in the order of their linear index, and a wave (one block an SM)
// in C's row-major tile order covers a few tile rows across all of N: at 8192^3 BF16, 132 tiles
// of 128 x 256 are about 4 of the 64 tile rows, so every wave reads all of B (128 MB) for 4 rows
// of A, far more than the 50 MB L2 keeps. The grouped order (Triton's matmul tutorial, CUTLASS's
// swizzle) walks C in groups of G tile rows, column by column inside a group: a wave is a patch
// of G rows by 132 / G columns, which reads G * BM + (132 / G) * BN rows of A and B per k, least
// at G = sqrt(132 * BN / BM): 16 for the 128 x 256 tiles, 8 for TF32's 256 x 128 (WgElem::GROUP_M).
// Measured at 8192^3 BF16: 2-4% faster than row-major, equal at 4096^3 (docs/tensor_cores.md;
// studies/gemm_tile_order.py builds copies of this file with other G beside it).
// Tile t of the order -> (tile row, tile column); a last group shorter than G is walked the same
// way over its rows, so the order is a permutation of the tiles at every shape.
template <int P> __host__ __device__ constexpr int wg_group_m() { return WgElem<P>::GROUP_M; }

// Only a grid of more than one wave is walked in groups: where every tile starts at once (2048^3,
// 128 tiles) the grouped order saves no bytes and measured 1% slower than row-major. %nsmid is at
// least the number of SMs (their ids need not be contiguous), so a grid of about one wave may keep
// the row-major order, where it costs nothing.
__device__ __forceinline__ int wg_sm_ids() {
    unsigned n;
    asm("mov.u32 %0, %%nsmid;" : "=r"(n));
    return static_cast<int>(n);
}

template <int G>
__device__ __forceinline__ void wg_tile_at(int t, int tiles_m, int tiles_n, int& tm, int& tn) {
    if (G <= 1) {
        tm = t / tiles_n;
        tn = t % tiles_n;
        return;
    }
    const int span = G * tiles_n, g = t / span, first = g * G, r = t - g * span;
    const int rows = min(tiles_m - first, G);
    tm = first + r % rows;
    tn = r / rows;
}

struct __align__(64) TmaMap { unsigned long long words[16]; };  // CUtensorMap: 128 opaque bytes

// The copy engine: the box of `map` at (c0 along the contiguous dimension, c1 along rows) into
// shared memory at dst, its bytes counted on bar.
__device__ __forceinline__ void tma_load(void* dst, const TmaMap& map, unsigned long long* bar, int c0, int c1) {
    tensor_load_2d(dst, &map, bar, c0, c1);
}

// A shared-memory matrix descriptor: start address, leading and stride byte offsets (all in
// 16-byte units, 14 bits each), layout 1 = the 128-byte swizzle (bits 62-63).
__device__ __forceinline__ unsigned long long wg_desc(const void* p, unsigned lbo, unsigned sbo) {
    return (static_cast<unsigned long long>(smem_addr(p) & 0x3FFFF) >> 4) |
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

#define WG_D192 "{" \
    "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15" "," \
    "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31" "," \
    "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47" "," \
    "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63" "," \
    "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79" "," \
    "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95" "}"
#define WG_C192 \
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
    "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
#define WG_D128 "{" \
    "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15" "," \
    "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31" "," \
    "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47" "," \
    "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63" "}"
#define WG_C128 \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
    "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
    "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
    "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])

// One m64nNk16 (N = 256, 192 or 128: the block tile's BN): d (N / 2 accumulators a thread) +=
// A (64 x 16, K-major: no transpose) * B (16 x N, N-major: transposed); scale-d = 1. IA, IB, IP:
// the operand numbers of the descriptors and the predicate, after the N / 2 accumulators.
#define WG_MMA_K16(SHAPE, TYPE, DL, CL, IA, IB, IP)                                                       \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " IP ", 0;\n"                                        \
                 "wgmma.mma_async.sync.aligned." SHAPE ".f32." TYPE "." TYPE " " DL ", " IA ", " IB ", p, 1, 1, 0, 1;\n}\n" \
                 : CL : "l"(da), "l"(db), "r"(1) : "memory")

template <int P, int N>
__device__ __forceinline__ void wgmma_m64nNk16(float (&d)[N / 2], unsigned long long da, unsigned long long db) {
    static_assert(N == 256 || N == 192 || N == 128, "wgmma: the block tiles' BN are 256, 192 and 128");
    if constexpr (N == 256 && P == 1) WG_MMA_K16("m64n256k16", "bf16", WG_D256, WG_C256, "%128", "%129", "%130");
    else if constexpr (N == 256) WG_MMA_K16("m64n256k16", "f16", WG_D256, WG_C256, "%128", "%129", "%130");
    else if constexpr (N == 192 && P == 1) WG_MMA_K16("m64n192k16", "bf16", WG_D192, WG_C192, "%96", "%97", "%98");
    else if constexpr (N == 192) WG_MMA_K16("m64n192k16", "f16", WG_D192, WG_C192, "%96", "%97", "%98");
    else if constexpr (P == 1) WG_MMA_K16("m64n128k16", "bf16", WG_D128, WG_C128, "%64", "%65", "%66");
    else WG_MMA_K16("m64n128k16", "f16", WG_D128, WG_C128, "%64", "%65", "%66");
}

// One k-tile (64) for warpgroup `wg`: four m64nBNk16 MMAs, committed as one group.
// A: the warpgroup's 64 rows start 64 x 128 bytes in; a k16 step is 32 bytes along the
// 128-byte rows; 8-row groups are 1024 bytes apart (the stride byte offset; the leading one is
// unused for a swizzled K-major operand). B: a k16 step is 16 rows of 128 bytes; 8-row (k)
// groups 1024 bytes apart (stride), the four 64-column boxes 8 KB apart (leading).
// TF32: d (the warpgroup's 64 rows) += A (64 x 8, four registers a thread) * B (8 x 256,
// K-major). No transpose is allowed for TF32 (hence the swapped product).
__device__ __forceinline__ void wgmma_m64n256k8_tf32(float (&d)[128], const unsigned (&a)[4], unsigned long long db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 " WG_D256 ", {%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
                 : WG_C256 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1) : "memory");
}

// Byte offset of the element at byte column cb of row r in a tile of 128-byte rows, swizzled as
// TMA's SWIZZLE_128B writes it: the 16-byte chunk cb / 16 of row r lands at chunk (cb / 16) ^ (r % 8).
__device__ __forceinline__ int wg_swizzle(int r, int cb) { return r * WG_ROW + (((cb >> 4) ^ (r & 7)) << 4) + (cb & 15); }

// TF32's k-tile (32) for warpgroup `wg`, which owns 64 columns n of C (the rows of wgmma's
// A = B^T) and all 256 rows m of the block (wgmma's N = 256, read from A's tile K-major).
// Why 256 x 128 and not BF16's 128 x 256: every wgmma reads its shared operand (here A's k8
// slab) for its 64 register rows, so the shared bytes a tile reads are (n / 64) x A's tile plus
// B^T's fragments once; with 64 n a warpgroup and m = 256 they are 64 + 16 KB a k-tile, the
// 128 KB of shared traffic (TMA's 48 KB written included) that BF16's tile moves in the same
// time. The 128 x 256 tile (two slices of 64 n a warpgroup, m64n128k8) moves 144 KB: slower
// (docs/tensor_cores.md has both tiles' times).
// A thread's fragment (CUTLASS's ALayout_64x8): register v holds row g + 8 (v & 1) of its
// warp's 16, k = t + 4 (v >> 1) of the k8 step, g = lane / 4, t = lane % 4. The rows are n in
// an order of our choosing (the accumulators' rows follow it to C): row g + 8h of warp w is
// n = 32 (q / 4) + 4 (q % 4) + g % 4 + 16 (g / 4), q = 2w + h, so that the 32 lanes of one load
// read 8 k-rows' distinct 16-byte chunks of the swizzled box: no bank conflict (with
// consecutive n, k-rows t and t ^ 1 would meet in the same two chunks).
__device__ __forceinline__ int wg_tf32_n(int w, int g, int h) {
    const int q = 2 * w + h;
    return 32 * (q / 4) + 4 * (q % 4) + g % 4 + 16 * (g / 4);
}

__device__ __forceinline__ void wg_tile_tf32(float (&d)[128], const unsigned char* As, const unsigned char* Bs, int wg) {
    const int t128 = threadIdx.x % 128, lane = t128 % 32, w = t128 / 32, g = lane / 4, t = lane % 4;
    using E = WgElem<0>;
    unsigned f[E::BK / 8][4];  // [k8 step][register]
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int n = wg * 64 + wg_tf32_n(w, g, h);  // the column of B in the block's 128
        const unsigned char* box = Bs + (n / E::BOX_N) * E::BOX_BYTES;
        const int cb = (n % E::BOX_N) * E::BYTES;
#pragma unroll
        for (int kk = 0; kk < E::BK / 8; ++kk)
#pragma unroll
            for (int kh = 0; kh < 2; ++kh)
                f[kk][h + 2 * kh] = *reinterpret_cast<const unsigned*>(box + wg_swizzle(kk * 8 + t + 4 * kh, cb));
    }
    wg_fence();  // the fragments' registers are written before the MMAs read them
#pragma unroll
    for (int kk = 0; kk < E::BK / 8; ++kk)  // A's 256 rows m, k8 = 32 bytes in
        wgmma_m64n256k8_tf32(d, f[kk], wg_desc(As + kk * 32, 16, 1024));
    wg_commit();
}

// The k-tiles' MMA groups a warpgroup leaves in flight when it moves on: one (BF16, FP16: the MMAs
// of tile kt run while the warps wait for kt - 1's and hand its stage back); none for TF32, whose
// next tile's fragment loads would write wgmma input registers while MMAs run: ptxas then
// serializes every wgmma (its warning C7513, also with two alternating register sets). The
// second warpgroup's MMAs cover one's fragment loads instead.
template <int P> constexpr int WG_IN_FLIGHT = P == 0 ? 0 : 1;

template <int P, int BN = 256>
__device__ __forceinline__ void wg_tile(float (&d)[WgElem<P, BN>::ACC], const unsigned char* As,
                                        const unsigned char* Bs, int wg) {
    if constexpr (P == 0) {
        wg_tile_tf32(d, As, Bs, wg);
    } else {
        wg_fence();
#pragma unroll
        for (int kk = 0; kk < WgElem<P>::BK / 16; ++kk)
            wgmma_m64nNk16<P, BN>(d, wg_desc(As + wg * 64 * 128 + kk * 32, 16, 1024),
                                  wg_desc(Bs + kk * 16 * 128, WgElem<P>::BOX_BYTES, 1024));
        wg_commit();
    }
}

// One stage by the copy engine (one thread): A's box of BM rows (m) by BK (k), B's boxes of
// BK rows (k) by BOX_N columns (n) side by side.
template <int P, int BN = 256>
__device__ __forceinline__ void wg_tma_stage(unsigned char* As, unsigned char* Bs, unsigned long long* bar,
                                             const TmaMap& a_map, const TmaMap& b_map, int m0, int n0, int k0) {
    using E = WgElem<P, BN>;
    mbar_expect_tx(bar, E::TX);  // boxes partly past the matrix still count whole (zero-filled)
    tma_load(As, a_map, bar, k0, m0);
#pragma unroll
    for (int j = 0; j < E::BN / E::BOX_N; ++j)
        tma_load(Bs + j * E::BOX_BYTES, b_map, bar, n0 + E::BOX_N * j, k0);
}

// The path without TMA (K or N not a multiple of 8): every thread stores its elements of one
// stage, zero outside the matrix, in the layout above.
template <int P, int BN = 256>
__device__ __forceinline__ void wg_store_stage(unsigned char* As, unsigned char* Bs, const typename WgElem<P>::T* A,
                                               const typename WgElem<P>::T* B, int M, int N, int K, int m0, int n0,
                                               int k0, int tid) {  // tid: 0 .. WG_THREADS - 1, the storing threads
    using E = WgElem<P, BN>;
    using T = typename E::T;
    for (int i = tid; i < E::BM * E::BK; i += WG_THREADS) {
        const int r = i / E::BK, c = i % E::BK;
        *reinterpret_cast<T*>(As + wg_swizzle(r, c * E::BYTES)) =
            (m0 + r < M && k0 + c < K) ? A[size_t(m0 + r) * K + k0 + c] : T(0);
    }
    for (int i = tid; i < E::BK * E::BN; i += WG_THREADS) {
        const int r = i / E::BN, c = i % E::BN;  // k row, n column
        *reinterpret_cast<T*>(Bs + (c / E::BOX_N) * E::BOX_BYTES + wg_swizzle(r, (c % E::BOX_N) * E::BYTES)) =
            (k0 + r < K && n0 + c < N) ? B[size_t(k0 + r) * N + n0 + c] : T(0);
    }
}

// The accumulators (the m64nN layout) to C: warp w of the warpgroup holds rows 16w..16w+15
// of its 64; d[4j + 2h + e] is row g + 8h, column 8j + 2t + e, with g = lane / 4, t = lane % 4.
// `t128`: the thread's index in its warpgroup; row0: the warpgroup's first row of C.
// TF32 (C^T's accumulators, wg_tile_tf32): the rows are the warpgroup's 64 n from n1, the
// columns 256 m from m1: d[4j + 2h + e] is C[m1 + 8j + 2t + e][n1 + wg_tf32_n(w, g, h)].
__device__ __forceinline__ void wg_store_ct(const float (&d)[128], float* __restrict__ C, int M, int N, int m1,
                                            int n1, int t128) {
    const int lane = t128 % 32, warp = t128 / 32, g = lane / 4, t = lane % 4;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int col = n1 + wg_tf32_n(warp, g, h);
        if (col >= N)
            continue;
#pragma unroll
        for (int j = 0; j < 256 / 8; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const int row = m1 + 8 * j + 2 * t + e;
                if (row < M)
                    C[size_t(row) * N + col] = d[4 * j + 2 * h + e];
            }
    }
}

template <int BN = 256>
__device__ __forceinline__ void wg_store_c(const float (&d)[BN / 2], float* __restrict__ C, int M, int N, int row0,
                                           int n0, int t128) {
    const int lane = t128 % 32, warp = t128 / 32, g = lane / 4, t = lane % 4;
    const bool pairs = N % 2 == 0;  // 8-byte aligned column pairs
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
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
         const typename WgElem<P>::T* __restrict__ A, const typename WgElem<P>::T* __restrict__ B,
         float* __restrict__ C, int M, int N, int K) {
    static_assert(P == 0 || P == 1 || P == 2, "wgmma_tc: TF32, BF16 or FP16 inputs");
    constexpr int WG_BK = WgElem<P>::BK;
    extern __shared__ __align__(128) unsigned char wg_raw[];  // 128: a 1024 here pads every kernel of the module
    unsigned char* smem = wg_raw + ((1024 - (smem_addr(wg_raw) & 1023)) & 1023);  // stages 1024-aligned
    unsigned long long* full = reinterpret_cast<unsigned long long*>(smem + WG_STAGES * WG_STAGE_BYTES);
    const int tid = threadIdx.x, wg = tid / 128;
    int tm = blockIdx.y, tn = blockIdx.x;  // this block's tile: its grid position, or in the grouped order
    if (wg_group_m<P>() > 1 && static_cast<int>(gridDim.x * gridDim.y) > wg_sm_ids())
        wg_tile_at<wg_group_m<P>()>(blockIdx.y * gridDim.x + blockIdx.x, gridDim.y, gridDim.x, tm, tn);
    const int m0 = tm * WgElem<P>::BM, n0 = tn * WgElem<P>::BN;
    const int KT = (K + WG_BK - 1) / WG_BK;
    auto stage_a = [&](int s) { return smem + s * WG_STAGE_BYTES; };
    auto stage_b = [&](int s) { return smem + s * WG_STAGE_BYTES + WgElem<P>::A_BYTES; };
    float d[128];
#pragma unroll
    for (int i = 0; i < 128; ++i)
        d[i] = 0.f;

    if (TMA) {
        if (tid == 0) {
            for (int s = 0; s < WG_STAGES; ++s)
                mbar_init(&full[s], 1);  // one arrival (the expect_tx) plus the stage's bytes
            mbar_init_fence();
            for (int s = 0; s < WG_STAGES && s < KT; ++s)  // the prologue: every stage in flight
                wg_tma_stage<P>(stage_a(s), stage_b(s), &full[s], a_map, b_map, m0, n0, s * WG_BK);
        }
        __syncthreads();  // the barriers are initialised before anyone waits on them
        for (int kt = 0; kt < KT; ++kt) {
            const int s = kt % WG_STAGES;
            mbar_wait(&full[s], (kt / WG_STAGES) & 1);  // tile kt has landed (the stage's use number, mod 2)
            wg_tile<P>(d, stage_a(s), stage_b(s), wg);
            wg_wait<WG_IN_FLIGHT<P>>();  // this warpgroup's MMAs of tile kt - 1 are done (kt's still run)
            __syncthreads();  // ... and the other's: tile kt - 1's stage is free
            const int refill = kt - 1 + WG_STAGES;
            if (tid == 0 && kt >= 1 && refill < KT) {
                const int r = (kt - 1) % WG_STAGES;
                wg_tma_stage<P>(stage_a(r), stage_b(r), &full[r], a_map, b_map, m0, n0, refill * WG_BK);
            }
        }
        wg_wait<0>();
    } else {
        for (int kt = 0; kt < KT; ++kt) {
            wg_store_stage<P>(stage_a(0), stage_b(0), A, B, M, N, K, m0, n0, kt * WG_BK, tid);
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // ordinary stores, read by wgmma
            __syncthreads();
            wg_tile<P>(d, stage_a(0), stage_b(0), wg);
            wg_wait<0>();
            __syncthreads();  // both warpgroups are done before the stage is overwritten
        }
    }

    if constexpr (P == 0)
        wg_store_ct(d, C, M, N, m0, n0 + wg * 64, tid % 128);
    else
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
// PERSIST (the rung wgmma_persist): one block an SM (the host launches min(tiles, SMs)), each
// taking tiles blockIdx.x, + gridDim.x, ... of the tile order (wg_tile_at). The stages' use count
// runs on across tiles, so the producer loads the next tile's first stages while the consumers
// still store this one's C (the epilogue no longer leaves the tensor cores idle), and no block
// is launched, or its barriers initialised, per tile. Without it a block is one tile, as before.
constexpr int WS_THREADS = 384;
constexpr int WS_SMEM_BYTES = WG_STAGES * WG_STAGE_BYTES + 1024 + 2 * WG_STAGES * 8;  // full and empty barriers


__device__ __forceinline__ void consumers_sync() { asm volatile("bar.sync 1, 256;\n" ::: "memory"); }

template <int P, bool TMA, bool PERSIST = false, int BN_ = 256>
__global__ void __launch_bounds__(WS_THREADS, 1)
wgmma_ws_tc(const __grid_constant__ TmaMap a_map, const __grid_constant__ TmaMap b_map,
            const typename WgElem<P>::T* __restrict__ A, const typename WgElem<P>::T* __restrict__ B,
            float* __restrict__ C, int M, int N, int K) {
    static_assert(P == 0 || P == 1 || P == 2, "wgmma_ws_tc: TF32, BF16 or FP16 inputs");
    static_assert(P != 0 || BN_ == 256, "wgmma_ws_tc: TF32 has one tile (256 x 128)");
    using E = WgElem<P, BN_>;
    constexpr int WG_BK = E::BK;
    extern __shared__ __align__(128) unsigned char ws_raw[];
    unsigned char* smem = ws_raw + ((1024 - (smem_addr(ws_raw) & 1023)) & 1023);  // stages 1024-aligned
    unsigned long long* full = reinterpret_cast<unsigned long long*>(smem + WG_STAGES * WG_STAGE_BYTES);
    unsigned long long* empty = full + WG_STAGES;
    const int tid = threadIdx.x, wg = tid / 128;
    const int KT = (K + WG_BK - 1) / WG_BK;
    constexpr int BM = E::BM, BN = E::BN;
    const int tiles_n = (N + BN - 1) / BN, tiles_m = (M + BM - 1) / BM, tiles = tiles_n * tiles_m;
    const int first = PERSIST ? blockIdx.x : blockIdx.y * tiles_n + blockIdx.x;  // the 2-D grid: one tile
    const int stride = PERSIST ? gridDim.x : tiles;
    const bool grouped = wg_group_m<P>() > 1 && tiles > wg_sm_ids();  // more than one wave (wg_sm_ids)
    auto tile_at = [&](int tile, int& tm, int& tn) {
        if (grouped)
            wg_tile_at<wg_group_m<P>()>(tile, tiles_m, tiles_n, tm, tn);
        else
            wg_tile_at<1>(tile, tiles_m, tiles_n, tm, tn);
    };
    auto stage_a = [&](int s) { return smem + s * WG_STAGE_BYTES; };
    auto stage_b = [&](int s) { return smem + s * WG_STAGE_BYTES + WgElem<P>::A_BYTES; };
    if (tid == 0) {
        for (int s = 0; s < WG_STAGES; ++s) {
            mbar_init(&full[s], 1);   // the producer's expect_tx, then the stage's bytes
            mbar_init(&empty[s], 2);  // one arrival per consumer warpgroup
        }
        mbar_init_fence();
    }
    __syncthreads();  // the last block-wide barrier: from here each role runs on its own
    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (TMA && tid == 0) {
            int use = 0;  // the stages' use count, over this block's tiles
            for (int tile = first; tile < tiles; tile += stride) {
                int tm, tn;
                tile_at(tile, tm, tn);
                const int m0 = tm * BM, n0 = tn * BN;
                for (int kt = 0; kt < KT; ++kt, ++use) {
                    const int s = use % WG_STAGES;
                    if (use >= WG_STAGES)  // both consumers are done with the tile this stage held before
                        mbar_wait(&empty[s], (use / WG_STAGES - 1) & 1);
                    wg_tma_stage<P, BN_>(stage_a(s), stage_b(s), &full[s], a_map, b_map, m0, n0, kt * WG_BK);
                }
            }
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
        const int cw = wg - 1, t128 = tid % 128;  // the consumer's 64 rows
        int use = 0;
        for (int tile = first; tile < tiles; tile += stride) {
            int tm, tn;
            tile_at(tile, tm, tn);
            const int m0 = tm * BM, n0 = tn * BN;
            float d[E::ACC];
#pragma unroll
            for (int i = 0; i < E::ACC; ++i)
                d[i] = 0.f;
            if (TMA) {
                for (int kt = 0; kt < KT; ++kt, ++use) {
                    const int s = use % WG_STAGES;
                    mbar_wait(&full[s], (use / WG_STAGES) & 1);
                    wg_tile<P, BN_>(d, stage_a(s), stage_b(s), cw);
                    wg_wait<WG_IN_FLIGHT<P>>();  // this warpgroup's MMAs of tile kt - 1 are done: release its stage
                    if (kt >= 1 && t128 == 0)
                        mbar_arrive(&empty[(use - 1) % WG_STAGES]);
                }
                wg_wait<0>();
                if (PERSIST && t128 == 0)  // the tile's last stage, for the next tile's loads
                    mbar_arrive(&empty[(use - 1) % WG_STAGES]);
            } else {
                for (int kt = 0; kt < KT; ++kt) {
                    wg_store_stage<P, BN_>(stage_a(0), stage_b(0), A, B, M, N, K, m0, n0, kt * WG_BK, tid - 128);
                    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
                    consumers_sync();
                    wg_tile<P, BN_>(d, stage_a(0), stage_b(0), cw);
                    wg_wait<0>();
                    consumers_sync();
                }
            }
            if constexpr (P == 0)
                wg_store_ct(d, C, M, N, m0, n0 + cw * 64, t128);
            else
                wg_store_c<BN_>(d, C, M, N, m0 + cw * 64, n0, t128);
        }
    }
}
