// GEMM on the tensor cores: C[M,N] (FP32) = A[M,K] * B[K,N], row-major, inputs in TF32,
// BF16 or FP16, products accumulated in FP32. Included by gemm.cu (after its cp.async
// helpers); the rungs of `pmppbench gemm --precision tf32,bf16,fp16`:
//
//   wmma_tc<P>             the warp-matrix API's operations (wmma.load / wmma.mma / wmma.store,
//                          written as PTX: NVRTC through CuPy has no mma.h), one shared stage
//   mma_tc<P, ALIGNED>     ldmatrix + mma.sync.m16n8k16, a 3-stage cp.async pipeline, padded
//                          shared rows (conflict-free ldmatrix), 128x128x32 block tiles
//   mma_tf32_tc<ALIGNED>   mma_sync's TF32 kernel: ldmatrix (A) + LDS.128 (B) + mma.sync.m16n8k8,
//                          the same block, warps, pipeline and bytes a stage, 128x128x16 words
//
// P names the input precision: 0 TF32 (stored as FP32 words already rounded to TF32 on the
// host), 1 BF16 and 2 FP16 (stored as 16-bit words). Every path here is inline PTX: no CUDA
// header is needed, and every rung needs sm_80 (BF16 / TF32 MMA, ldmatrix, cp.async).
//
// Edges follow gemm.cu's rules: a load outside A or B is a zero (zero bits in every precision),
// C's write is checked, every thread reaches every barrier.

template <int P> struct TcElem { using T = unsigned short; };  // BF16, FP16: 16-bit words
template <> struct TcElem<0> { using T = unsigned int; };      // TF32: the FP32 word, low 13 bits zero

// ---------------------------------------------------------------------------------------
// wmma_tc: 4 warps, a 64 x 64 tile of C per block, each warp a 32 x 32 quarter as 2 x 2
// fragments of 16 x 16. Each K step stages a 64 x BK slice of A and a BK x 64 slice of B in
// shared memory with plain (synchronous) loads, then each warp loads its fragments with
// wmma.load and multiplies. The fragments' layout is the hardware's, hidden by the API: what
// the rung shows is what the API alone buys (no pipeline, no control of shared-memory reads).
// C leaves through shared memory (wmma.store), then a checked copy to global memory.
constexpr int WM_BM = 64, WM_BN = 64, WM_THREADS = 128;

template <int P> struct WmmaShape;
template <> struct WmmaShape<0> { static constexpr int BK = 16, FK = 8; };   // m16n16k8 .tf32
template <> struct WmmaShape<1> { static constexpr int BK = 32, FK = 16; };  // m16n16k16 .bf16
template <> struct WmmaShape<2> { static constexpr int BK = 32, FK = 16; };  // m16n16k16 .f16

// One 16 x 16 x FK multiply-add: acc += A(16 x FK, row-major at a, ld lda) * B(FK x 16,
// row-major at b, ld ldb), all in shared memory (generic addresses of shared words).
template <int P> __device__ __forceinline__ void wmma_step(float (&acc)[8], const void* a, int lda, const void* b, int ldb);

template <> __device__ __forceinline__ void wmma_step<0>(float (&d)[8], const void* a, int lda, const void* b, int ldb) {
    unsigned ra[4], rb[4];
    const unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(a));
    const unsigned sb = static_cast<unsigned>(__cvta_generic_to_shared(b));
    asm volatile("wmma.load.a.sync.aligned.row.m16n16k8.shared.tf32 {%0,%1,%2,%3}, [%4], %5;\n"
                 : "=r"(ra[0]), "=r"(ra[1]), "=r"(ra[2]), "=r"(ra[3]) : "r"(sa), "r"(lda));
    asm volatile("wmma.load.b.sync.aligned.row.m16n16k8.shared.tf32 {%0,%1,%2,%3}, [%4], %5;\n"
                 : "=r"(rb[0]), "=r"(rb[1]), "=r"(rb[2]), "=r"(rb[3]) : "r"(sb), "r"(ldb));
    asm volatile("wmma.mma.sync.aligned.row.row.m16n16k8.f32.tf32.tf32.f32 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3,%4,%5,%6,%7};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
                 : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]), "r"(rb[2]), "r"(rb[3]));
}

template <> __device__ __forceinline__ void wmma_step<1>(float (&d)[8], const void* a, int lda, const void* b, int ldb) {
    unsigned ra[4], rb[4];
    const unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(a));
    const unsigned sb = static_cast<unsigned>(__cvta_generic_to_shared(b));
    asm volatile("wmma.load.a.sync.aligned.row.m16n16k16.shared.bf16 {%0,%1,%2,%3}, [%4], %5;\n"
                 : "=r"(ra[0]), "=r"(ra[1]), "=r"(ra[2]), "=r"(ra[3]) : "r"(sa), "r"(lda));
    asm volatile("wmma.load.b.sync.aligned.row.m16n16k16.shared.bf16 {%0,%1,%2,%3}, [%4], %5;\n"
                 : "=r"(rb[0]), "=r"(rb[1]), "=r"(rb[2]), "=r"(rb[3]) : "r"(sb), "r"(ldb));
    asm volatile("wmma.mma.sync.aligned.row.row.m16n16k16.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3,%4,%5,%6,%7};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
                 : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]), "r"(rb[2]), "r"(rb[3]));
}

template <> __device__ __forceinline__ void wmma_step<2>(float (&d)[8], const void* a, int lda, const void* b, int ldb) {
    unsigned ra[8], rb[8];  // FP16 fragments: 8 registers of two halves each
    const unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(a));
    const unsigned sb = static_cast<unsigned>(__cvta_generic_to_shared(b));
    asm volatile("wmma.load.a.sync.aligned.row.m16n16k16.shared.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, [%8], %9;\n"
                 : "=r"(ra[0]), "=r"(ra[1]), "=r"(ra[2]), "=r"(ra[3]), "=r"(ra[4]), "=r"(ra[5]), "=r"(ra[6]),
                   "=r"(ra[7]) : "r"(sa), "r"(lda));
    asm volatile("wmma.load.b.sync.aligned.row.m16n16k16.shared.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, [%8], %9;\n"
                 : "=r"(rb[0]), "=r"(rb[1]), "=r"(rb[2]), "=r"(rb[3]), "=r"(rb[4]), "=r"(rb[5]), "=r"(rb[6]),
                   "=r"(rb[7]) : "r"(sb), "r"(ldb));
    asm volatile("wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11,%12,%13,%14,%15}, "
                 "{%16,%17,%18,%19,%20,%21,%22,%23}, {%0,%1,%2,%3,%4,%5,%6,%7};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
                 : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(ra[4]), "r"(ra[5]), "r"(ra[6]), "r"(ra[7]),
                   "r"(rb[0]), "r"(rb[1]), "r"(rb[2]), "r"(rb[3]), "r"(rb[4]), "r"(rb[5]), "r"(rb[6]), "r"(rb[7]));
}

__device__ __forceinline__ void wmma_store(float* s, int ld, const float (&d)[8]) {
    const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(s));
    asm volatile("wmma.store.d.sync.aligned.row.m16n16k16.shared.f32 [%0], {%1,%2,%3,%4,%5,%6,%7,%8}, %9;\n"
                 ::"r"(addr), "f"(d[0]), "f"(d[1]), "f"(d[2]), "f"(d[3]), "f"(d[4]), "f"(d[5]), "f"(d[6]), "f"(d[7]),
                   "r"(ld) : "memory");
}

template <int P>
__global__ void __launch_bounds__(WM_THREADS)
wmma_tc(const typename TcElem<P>::T* __restrict__ A, const typename TcElem<P>::T* __restrict__ B,
        float* __restrict__ C, int M, int N, int K) {
    using T = typename TcElem<P>::T;
    constexpr int BK = WmmaShape<P>::BK, FK = WmmaShape<P>::FK;
    // Rows padded by 16 bytes: wmma.load needs 16-byte-aligned rows; the pad spreads the rows
    // of a fragment over the banks.
    constexpr int PAD = 16 / sizeof(T), LDA = BK + PAD, LDB = WM_BN + PAD, LDC = WM_BN + 4;
    constexpr int AB_BYTES = (WM_BM * LDA + BK * LDB) * sizeof(T), C_BYTES = WM_BM * LDC * 4;
    __shared__ __align__(128) unsigned char smem[AB_BYTES > C_BYTES ? AB_BYTES : C_BYTES];
    T* As = reinterpret_cast<T*>(smem);
    T* Bs = As + WM_BM * LDA;
    const int tid = threadIdx.x, warp = tid / 32;
    const int wr = (warp / 2) * 32, wc = (warp % 2) * 32;  // the warp's 32 x 32 quarter
    const int m0 = blockIdx.y * WM_BM, n0 = blockIdx.x * WM_BN;
    float acc[2][2][8] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int i = tid; i < WM_BM * BK; i += WM_THREADS) {
            const int r = i / BK, c = i % BK;
            As[r * LDA + c] = (m0 + r < M && k0 + c < K) ? A[size_t(m0 + r) * K + k0 + c] : T(0);
        }
        for (int i = tid; i < BK * WM_BN; i += WM_THREADS) {
            const int r = i / WM_BN, c = i % WM_BN;
            Bs[r * LDB + c] = (k0 + r < K && n0 + c < N) ? B[size_t(k0 + r) * N + n0 + c] : T(0);
        }
        __syncthreads();
        for (int kk = 0; kk < BK; kk += FK)
            for (int i = 0; i < 2; ++i)
                for (int j = 0; j < 2; ++j)
                    wmma_step<P>(acc[i][j], As + (wr + 16 * i) * LDA + kk, LDA, Bs + kk * LDB + wc + 16 * j, LDB);
        __syncthreads();
    }
    float* Cs = reinterpret_cast<float*>(smem);  // A and B are no longer read (the barrier above)
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
            wmma_store(Cs + (wr + 16 * i) * LDC + wc + 16 * j, LDC, acc[i][j]);
    __syncthreads();
    for (int i = tid; i < WM_BM * WM_BN; i += WM_THREADS) {
        const int r = i / WM_BN, c = i % WM_BN;
        if (m0 + r < M && n0 + c < N)
            C[size_t(m0 + r) * N + n0 + c] = Cs[r * LDC + c];
    }
}

// ---------------------------------------------------------------------------------------
// mma_tc: the fragments by hand. 8 warps (2 along M x 4 along N), a 128 x BN tile of C per
// block, each warp 64 x BN/4 = 4 x BN/32 mma.sync.m16n8k16 tiles (BN/2 FP32 accumulators a
// thread). Per K step of 16 a warp loads 4 ldmatrix.x4 of A and BN/64 ldmatrix.x4.trans of B
// and issues 4 x BN/32 MMAs from registers: `mma_sync` (BN = 128, 3 stages) 16 MMAs per 6
// loads, `mma_wide` (BN = 256, 4 stages) 32 per 8.
// - ldmatrix: a warp reads a 16 x 16 tile in one instruction, each lane getting exactly the
//   elements its fragment holds; .trans turns B's row-major k rows into the column fragment.
// - Padded rows: A's rows are 32 + 8 halves (80 B), B's BN + 8 (272 or 528 B): the 8 row
//   addresses of each 8 x 8 matrix of an ldmatrix fall in 8 different 16-byte bank groups.
// - A STAGES-deep cp.async pipeline: tiles kt + 1 .. kt + STAGES - 1 are in flight while kt is
//   multiplied (PMPP's double buffering, deeper, the copies never in registers).
// ALIGNED (K and N multiples of 8: every 16-byte chunk of a row is inside or outside the matrix
// whole) loads by 16-byte cp.async with zero fill past the edges; otherwise element by element.
constexpr int MT_BM = 128, MT_BK = 32, MT_THREADS = 256, MT_LDA = MT_BK + 8;  // LDA in halves

template <int BN, int STAGES>
struct MmaTiles {
    static constexpr int LDB = BN + 8;  // in halves
    static constexpr int STAGE_HALVES = MT_BM * MT_LDA + MT_BK * LDB;
    static constexpr int SMEM_BYTES = STAGES * STAGE_HALVES * 2;  // dynamic shared memory
    static constexpr int WN = BN / 4, NI = WN / 8;  // the warp's columns, its n8 tiles
    static_assert(BN % 64 == 0, "BN: whole ldmatrix.x4.trans (16 columns) per warp");
};

__device__ __forceinline__ void cp_async16_zfill(void* smem, const void* gmem, bool valid) {
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(valid ? 16 : 0)
                 : "memory");
}

template <bool ALIGNED, int BN>
__device__ __forceinline__ void mma_load_stage(unsigned short* As, unsigned short* Bs, const unsigned short* A,
                                               const unsigned short* B, int M, int N, int K, int m0, int n0, int k0) {
    const int tid = threadIdx.x;
    constexpr int LDB = BN + 8;
    if (ALIGNED) {
        for (int i = tid; i < MT_BM * MT_BK / 8; i += MT_THREADS) {  // 4 chunks of 8 halves per A row
            const int r = i / (MT_BK / 8), c = (i % (MT_BK / 8)) * 8;
            const bool ok = m0 + r < M && k0 + c < K;
            cp_async16_zfill(As + r * MT_LDA + c, ok ? A + size_t(m0 + r) * K + k0 + c : A, ok);
        }
        for (int i = tid; i < MT_BK * BN / 8; i += MT_THREADS) {  // 16 chunks per B row
            const int r = i / (BN / 8), c = (i % (BN / 8)) * 8;
            const bool ok = k0 + r < K && n0 + c < N;
            cp_async16_zfill(Bs + r * LDB + c, ok ? B + size_t(k0 + r) * N + n0 + c : B, ok);
        }
    } else {
        for (int i = tid; i < MT_BM * MT_BK; i += MT_THREADS) {
            const int r = i / MT_BK, c = i % MT_BK;
            As[r * MT_LDA + c] = (m0 + r < M && k0 + c < K) ? A[size_t(m0 + r) * K + k0 + c] : 0;
        }
        for (int i = tid; i < MT_BK * BN; i += MT_THREADS) {
            const int r = i / BN, c = i % BN;
            Bs[r * LDB + c] = (k0 + r < K && n0 + c < N) ? B[size_t(k0 + r) * N + n0 + c] : 0;
        }
    }
}

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void* p) {
    const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}

__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const void* p) {
    const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}

template <int P>
__device__ __forceinline__ void mma16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    if (P == 1)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <int P, bool ALIGNED, int BN, int STAGES>
__global__ void __launch_bounds__(MT_THREADS)
mma_tc(const unsigned short* __restrict__ A, const unsigned short* __restrict__ B, float* __restrict__ C,
       int M, int N, int K) {
    static_assert(P == 1 || P == 2, "mma_tc: BF16 or FP16 inputs (m16n8k16)");
    extern __shared__ __align__(128) unsigned short mt_smem[];
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    using T = MmaTiles<BN, STAGES>;
    constexpr int MT_STAGES = STAGES, MT_STAGE_HALVES = T::STAGE_HALVES, NI = T::NI;
    const int wm = (warp / 4) * 64, wn = (warp % 4) * T::WN;  // the warp's 64 x BN/4 piece
    const int m0 = blockIdx.y * MT_BM, n0 = blockIdx.x * BN;
    const int KT = (K + MT_BK - 1) / MT_BK;
    auto stage_a = [&](int s) { return mt_smem + s * MT_STAGE_HALVES; };
    auto stage_b = [&](int s) { return mt_smem + s * MT_STAGE_HALVES + MT_BM * MT_LDA; };
    float acc[4][NI][4] = {};

    for (int s = 0; s < MT_STAGES - 1; ++s) {  // the prologue: the first STAGES - 1 tiles in flight
        if (s < KT)
            mma_load_stage<ALIGNED, BN>(stage_a(s), stage_b(s), A, B, M, N, K, m0, n0, s * MT_BK);
        cp_async_commit();
    }
    // ldmatrix lane addresses: A's lanes 0-15 rows 0-15 at k 0, lanes 16-31 the same rows at k 8
    // (matrices a0..a3 = the fragment's order); B's lanes 0-7 k rows 0-7, 8-15 k rows 8-15 (n 0),
    // 16-31 the same at n 8: registers 0, 1 are one n8 tile's fragment, 2, 3 the next one's.
    const int a_row = lane % 16, a_col = (lane / 16) * 8;
    const int b_row = lane % 16, b_col = (lane / 16) * 8;
    for (int kt = 0; kt < KT; ++kt) {
        cp_async_wait<MT_STAGES - 2>();  // this thread's copies of tile kt have landed
        __syncthreads();                 // ... and every thread's; the stage kt - 1 used is free
        const int next = kt + MT_STAGES - 1;
        if (next < KT)
            mma_load_stage<ALIGNED, BN>(stage_a(next % MT_STAGES), stage_b(next % MT_STAGES), A, B, M, N, K, m0, n0,
                                    next * MT_BK);
        cp_async_commit();  // one group per iteration, empty or not: wait_group counts stay exact
        const unsigned short* As = stage_a(kt % MT_STAGES);
        const unsigned short* Bs = stage_b(kt % MT_STAGES);
#pragma unroll
        for (int kk = 0; kk < MT_BK; kk += 16) {
            unsigned a[4][4], b[NI / 2][4];
#pragma unroll
            for (int i = 0; i < 4; ++i)
                ldmatrix_x4(a[i], As + (wm + 16 * i + a_row) * MT_LDA + kk + a_col);
#pragma unroll
            for (int j = 0; j < NI / 2; ++j)
                ldmatrix_x4_trans(b[j], Bs + (kk + b_row) * T::LDB + wn + 16 * j + b_col);
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < NI; ++j)
                    mma16816<P>(acc[i][j], a[i], b[j / 2][(j % 2) * 2], b[j / 2][(j % 2) * 2 + 1]);
        }
    }
    cp_async_wait<0>();
    // The accumulators: c0, c1 at row g, columns 2t, 2t + 1 of the 16 x 8 tile; c2, c3 at row g + 8.
    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = m0 + wm + 16 * i + g + 8 * h, col = n0 + wn + 8 * j + 2 * t;
                if (row < M) {
                    if (col < N) C[size_t(row) * N + col] = acc[i][j][2 * h];
                    if (col + 1 < N) C[size_t(row) * N + col + 1] = acc[i][j][2 * h + 1];
                }
            }
}

// ---------------------------------------------------------------------------------------
// mma_tf32_tc: mma_sync for TF32 (mma.sync.m16n8k8 .tf32: sm_80). mma_tc's block: 8 warps
// (2 along M x 4 along N), a 128 x 128 tile of C, warp tiles of 64 x 32 (4 x 4 MMAs of 16 x 8,
// 64 accumulators a thread), a 3-stage cp.async pipeline. A k-tile is 16 words, so a shared
// row is 64 bytes, as BF16's 32 halves: a stage has BF16's 18,944 bytes (tensor.mma_smem), a
// k8 MMA does half of a k16 one's FLOPs at half the rate, and a k-tile is 32 MMAs a warp in
// both. The operands are 32-bit words, which decides how each reaches its registers:
// - A (row-major, k contiguous) is the MMA's row operand: ldmatrix.b16 without .trans serves
//   it. An 8 x 8 b16 matrix is 8 rows of 4 words and lane l gets word l % 4 of row l / 4,
//   which is element (g, t) of a TF32 fragment: a0 = rows 0-7 at k 0-3, a1 rows 8-15, a2 k 4-7.
// - B (row-major, n contiguous) is the column operand, b0 = (k t, n g), b1 = (k t + 4, n g):
//   ldmatrix without .trans would give (k g, n t), and .trans swaps 16-bit halves, splitting
//   the words. So B comes by plain LDS. The warp's 32 columns are dealt to its four n8 tiles
//   as column 4 nu + j of tile j (nu: the MMA's n index; the sum over k is untouched), so a
//   thread's b0 of the four tiles are 4 adjacent words: one LDS.128, and one for b1, instead of
//   8 LDS.32. The accumulators come out in that order too: tile j's c0, c1 (nu = 2t, 2t + 1)
//   are columns 8t + j and 8t + 4 + j, 8 adjacent columns of a row: two 16-byte stores.
// - Padded rows, as mma_tc (an XOR swizzle would save the pad's 11% of a stage and cost
//   address arithmetic in the loop): A's rows are 16 + 4 words (80 B: 5 chunks of 16 B, odd,
//   so ldmatrix's 8 row addresses fall in 8 different 16-byte bank groups), B's 128 + 8
//   (544 B: LDB / 4 = 34 = 2 mod 8, so a quarter warp's LDS.128, k rows t = 0..3 for two g,
//   reads 8 different bank groups).
// The inputs are FP32 words already rounded to TF32 on the host (precision.stored), as for
// wmma_tc<0> and the wgmma rungs: the MMA reads them as they are, no cvt.rna in the loop.
constexpr int MF_BN = 128, MF_BK = 16, MF_STAGES = 3;  // BK in words
constexpr int MF_LDA = MF_BK + 4, MF_LDB = MF_BN + 8;  // padded rows, in words
constexpr int MF_STAGE_WORDS = MT_BM * MF_LDA + MF_BK * MF_LDB;
static_assert(MF_STAGE_WORDS * 4 == MmaTiles<128, 3>::STAGE_HALVES * 2, "mma_sync's stage in both precisions");

template <bool ALIGNED>
__device__ __forceinline__ void mma_tf32_load_stage(unsigned* As, unsigned* Bs, const unsigned* A, const unsigned* B,
                                                    int M, int N, int K, int m0, int n0, int k0) {
    const int tid = threadIdx.x;
    if (ALIGNED) {  // 16-byte chunks of 4 words: 4 a row of A, 32 a row of B, 2 of each a thread
        for (int i = tid; i < MT_BM * MF_BK / 4; i += MT_THREADS) {
            const int r = i / (MF_BK / 4), c = (i % (MF_BK / 4)) * 4;
            const bool in = m0 + r < M && k0 + c < K;
            cp_async16_zfill(As + r * MF_LDA + c, in ? A + size_t(m0 + r) * K + k0 + c : A, in);
        }
        for (int i = tid; i < MF_BK * MF_BN / 4; i += MT_THREADS) {
            const int r = i / (MF_BN / 4), c = (i % (MF_BN / 4)) * 4;
            const bool in = k0 + r < K && n0 + c < N;
            cp_async16_zfill(Bs + r * MF_LDB + c, in ? B + size_t(k0 + r) * N + n0 + c : B, in);
        }
    } else {
        for (int i = tid; i < MT_BM * MF_BK; i += MT_THREADS) {
            const int r = i / MF_BK, c = i % MF_BK;
            As[r * MF_LDA + c] = (m0 + r < M && k0 + c < K) ? A[size_t(m0 + r) * K + k0 + c] : 0u;
        }
        for (int i = tid; i < MF_BK * MF_BN; i += MT_THREADS) {
            const int r = i / MF_BN, c = i % MF_BN;
            Bs[r * MF_LDB + c] = (k0 + r < K && n0 + c < N) ? B[size_t(k0 + r) * N + n0 + c] : 0u;
        }
    }
}

__device__ __forceinline__ void mma1688_tf32(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <bool ALIGNED>
__global__ void __launch_bounds__(MT_THREADS)
mma_tf32_tc(const unsigned* __restrict__ A, const unsigned* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    extern __shared__ __align__(128) unsigned mf_smem[];
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int g = lane / 4, t = lane % 4;
    const int wm = (warp / 4) * 64, wn = (warp % 4) * 32;  // the warp's 64 x 32 piece
    const int m0 = blockIdx.y * MT_BM, n0 = blockIdx.x * MF_BN;
    const int tiles = (K + MF_BK - 1) / MF_BK;
    auto a_stage = [&](int s) { return mf_smem + s * MF_STAGE_WORDS; };
    auto b_stage = [&](int s) { return mf_smem + s * MF_STAGE_WORDS + MT_BM * MF_LDA; };
    float acc[4][4][4] = {};

    for (int s = 0; s < MF_STAGES - 1; ++s) {  // the prologue: tiles 0 and 1 in flight
        if (s < tiles)
            mma_tf32_load_stage<ALIGNED>(a_stage(s), b_stage(s), A, B, M, N, K, m0, n0, s * MF_BK);
        cp_async_commit();
    }
    // ldmatrix.x4's lane addresses: lanes 0-15 rows 0-15 at k 0, lanes 16-31 the same rows at
    // k 4 (matrices 0..3 = a0..a3: rows 0-7 k 0-3, rows 8-15 k 0-3, rows 0-7 k 4-7, rows 8-15 k 4-7)
    const int lm_row = lane % 16, lm_k = (lane / 16) * 4;
    for (int kt = 0; kt < tiles; ++kt) {
        cp_async_wait<MF_STAGES - 2>();  // this thread's copies of tile kt have landed
        __syncthreads();                 // ... and every thread's; the stage kt - 1 used is free
        const int ahead = kt + MF_STAGES - 1;
        if (ahead < tiles)
            mma_tf32_load_stage<ALIGNED>(a_stage(ahead % MF_STAGES), b_stage(ahead % MF_STAGES), A, B, M, N, K, m0,
                                         n0, ahead * MF_BK);
        cp_async_commit();  // one group per iteration, empty or not: wait_group counts stay exact
        const unsigned* As = a_stage(kt % MF_STAGES);
        const unsigned* Bs = b_stage(kt % MF_STAGES);
#pragma unroll
        for (int kk = 0; kk < MF_BK; kk += 8) {
            unsigned a[4][4];
#pragma unroll
            for (int i = 0; i < 4; ++i)
                ldmatrix_x4(a[i], As + (wm + 16 * i + lm_row) * MF_LDA + kk + lm_k);
            // b0 and b1 of the four n8 tiles: columns wn + 4g + j, k rows t and t + 4
            const uint4 lo = *reinterpret_cast<const uint4*>(Bs + (kk + t) * MF_LDB + wn + 4 * g);
            const uint4 hi = *reinterpret_cast<const uint4*>(Bs + (kk + t + 4) * MF_LDB + wn + 4 * g);
            const unsigned b0[4] = {lo.x, lo.y, lo.z, lo.w}, b1[4] = {hi.x, hi.y, hi.z, hi.w};
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    mma1688_tf32(acc[i][j], a[i], b0[j], b1[j]);
        }
    }
    cp_async_wait<0>();
    // Row g (c0, c1) and g + 8 (c2, c3) of each m16 tile; columns 8t + j hold tile j's c0 / c2,
    // 8t + 4 + j its c1 / c3 (the column order above).
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = m0 + wm + 16 * i + g + 8 * h, col = n0 + wn + 8 * t;
            if (row >= M)
                continue;
            float* c = C + size_t(row) * N + col;
            if (ALIGNED) {  // N % 8 == 0: the 8 columns are inside C or outside it whole
                if (col < N) {
                    *reinterpret_cast<float4*>(c) =
                        make_float4(acc[i][0][2 * h], acc[i][1][2 * h], acc[i][2][2 * h], acc[i][3][2 * h]);
                    *reinterpret_cast<float4*>(c + 4) =
                        make_float4(acc[i][0][2 * h + 1], acc[i][1][2 * h + 1], acc[i][2][2 * h + 1], acc[i][3][2 * h + 1]);
                }
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    if (col + j < N) c[j] = acc[i][j][2 * h];
                    if (col + 4 + j < N) c[4 + j] = acc[i][j][2 * h + 1];
                }
            }
        }
}

// pad_copy<T>: dst (rows x ld, ld a multiple of 16 bytes) = src (rows x cols, row-major), the
// elements cols .. ld - 1 of each row zero. TMA reads rows whose stride is a multiple of 16 bytes:
// where K or N is not (K % 8 != 0 in BF16), `best` copies the operand into such rows first and
// gives TMA the copy, its sizes still M x K (or K x N), so the copy engine never reads the pad.
// A thread writes 16 bytes of one row (16 / sizeof(T) elements, read one by one: the source's
// rows start anywhere); rows are strided over gridDim.y (at most 65535).
template <class T>
__global__ void __launch_bounds__(256)
pad_copy(const T* __restrict__ src, T* __restrict__ dst, int rows, int cols, int ld) {
    constexpr int V = 16 / sizeof(T);
    const int col = (blockIdx.x * blockDim.x + threadIdx.x) * V;
    if (col >= ld) return;
    for (int row = blockIdx.y; row < rows; row += gridDim.y) {
        union { uint4 v; T e[V]; } piece;
        const T* s = src + size_t(row) * cols;
#pragma unroll
        for (int j = 0; j < V; ++j)
            piece.e[j] = col + j < cols ? s[col + j] : T(0);
        *reinterpret_cast<uint4*>(dst + size_t(row) * ld + col) = piece.v;
    }
}

#include "gemm_wgmma.cuh"  // the sm_90a rung (wgmma, TMA)
