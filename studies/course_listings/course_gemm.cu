// The course's GEMM kernels, C[M,N] = A[M,K] B[K,N] row-major FP32, as the course writes them.
// Reference only: pmppbench's own kernels are in kernels_cu/gemm.cu; studies/baselines.py
// times the two side by side.
//
//   gemm_naive      the course lab's naive body (block (16,16), fmaf, size_t offsets)
//   gemm_tiled16    the course lab's gemm_tiled with T = TK = 16
//   gemm_tiled32    the same listing with T = TK = 32 (block (32,32), the course's
//                   matrix_mul_tiled tile)
//   gemm_coarsened  the course's thread-coarsening kernel (TILE_WIDTH 32, COARSE_FACTOR 4):
//                   square width x width, width a multiple of 128, int offsets, no bounds tests

extern "C" __global__ void gemm_naive(const float* A, const float* B, float* C, int M, int N, int K) {
    constexpr int T = 16;
    int row = blockIdx.y * T + threadIdx.y;
    int col = blockIdx.x * T + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0;
        for (int k = 0; k < K; ++k)
            acc = fmaf(A[size_t(row) * K + k], B[size_t(k) * N + col], acc);
        C[size_t(row) * N + col] = acc;
    }
}

#define GEMM_TILED(NAME, T_)                                                                  \
    extern "C" __global__ void NAME(const float* A, const float* B, float* C, int M, int N, int K) { \
        constexpr int T = T_, TK = T_;                                                        \
        __shared__ float As[T][TK], Bs[TK][T];                                                \
        int tx = threadIdx.x, ty = threadIdx.y;                                               \
        int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;                             \
        float acc = 0.0f;                                                                     \
        for (int base = 0; base < K; base += TK) {                                            \
            As[ty][tx] = (row < M && base + tx < K) ? A[size_t(row) * K + base + tx] : 0.0f;  \
            Bs[ty][tx] = (base + ty < K && col < N) ? B[size_t(base + ty) * N + col] : 0.0f;  \
            __syncthreads();                                                                  \
            for (int k = 0; k < TK; ++k) acc = fmaf(As[ty][k], Bs[k][tx], acc);               \
            __syncthreads();                                                                  \
        }                                                                                     \
        if (row < M && col < N) C[size_t(row) * N + col] = acc;                               \
    }

GEMM_TILED(gemm_tiled16, 16)
GEMM_TILED(gemm_tiled32, 32)

#define TILE_WIDTH 32
#define COARSE_FACTOR 4
extern "C" __global__ void gemm_coarsened(float* M, float* N, float* P, int width) {
    __shared__ float Mds[TILE_WIDTH][TILE_WIDTH];
    __shared__ float Nds[TILE_WIDTH][TILE_WIDTH];

    int bx = blockIdx.x;  int by = blockIdx.y;
    int tx = threadIdx.x; int ty = threadIdx.y;

    int row = by * TILE_WIDTH + ty;
    int colStart = bx * TILE_WIDTH * COARSE_FACTOR + tx;

    float Pvalue[COARSE_FACTOR];
    for (int c = 0; c < COARSE_FACTOR; ++c) Pvalue[c] = 0.0f;

    for (int ph = 0; ph < width / TILE_WIDTH; ++ph) {
        Mds[ty][tx] = M[row * width + ph * TILE_WIDTH + tx];
        for (int c = 0; c < COARSE_FACTOR; ++c) {
            int col = colStart + c * TILE_WIDTH;
            Nds[ty][tx] = N[(ph * TILE_WIDTH + ty) * width + col];
            __syncthreads();
            for (int k = 0; k < TILE_WIDTH; ++k) Pvalue[c] += Mds[ty][k] * Nds[k][tx];
            __syncthreads();
        }
    }
    for (int c = 0; c < COARSE_FACTOR; ++c) {
        int col = colStart + c * TILE_WIDTH;
        P[row * width + col] = Pvalue[c];
    }
}
