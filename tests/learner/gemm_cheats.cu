// Learner GEMM kernels that game a harness, for tests/test_gaming.py (run --like naive: the
// signature, block (16,16) and grid of naive). Each is right on the first call, which the
// first check sees; none may PASS.

// Which launch this block belongs to: every block of a launch counts itself in, launches on
// one stream do not overlap, so launch = blocks counted before this one / blocks per launch.
__device__ unsigned long long blocks_seen;

__device__ unsigned long long launch_index() {
    __shared__ unsigned long long launch;
    if (threadIdx.x == 0 && threadIdx.y == 0)
        launch = atomicAdd(&blocks_seen, 1ull) / (unsigned long long)(gridDim.x * gridDim.y);
    __syncthreads();
    return launch;
}

__device__ float dot(const float* A, const float* B, int N, int K, int row, int col) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc = fmaf(A[size_t(row) * K + k], B[size_t(k) * N + col], acc);
    return acc;
}

// Computes C on its first launch and keeps a copy; every later launch copies the copy out
// (the issue's 389 TFLOP/s at 1024^3). Up to 1024 x 1024 elements of C.
#define KEPT_MAX (1024 * 1024)
__device__ float kept[KEPT_MAX];

extern "C" __global__ void caches_c(const float* A, const float* B, float* C, int M, int N, int K) {
    const unsigned long long launch = launch_index();
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N || size_t(row) * N + col >= KEPT_MAX) return;
    const size_t i = size_t(row) * N + col;
    if (launch == 0) kept[i] = dot(A, B, N, K, row, col);
    C[i] = kept[i];
}

// Does the work on its first launch only; later launches return at once.
extern "C" __global__ void skips_after_first(const float* A, const float* B, float* C, int M, int N, int K) {
    if (launch_index() != 0) return;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) C[size_t(row) * N + col] = dot(A, B, N, K, row, col);
}

// Works only where its output holds the harness's poison (NaN): the check's calls compute,
// the timed calls find last call's answer and leave it.
extern "C" __global__ void only_when_poisoned(const float* A, const float* B, float* C, int M, int N, int K) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N) return;
    const size_t i = size_t(row) * N + col;
    if (isnan(C[i])) C[i] = dot(A, B, N, K, row, col);
}

// sampled_only, a kernel that writes only the rows and columns of C the sampled check of
// seed 0 reads, is written by tests/test_gaming.py with those picks (SAMPLED_ONLY there).

// Skips its work when C already holds the answer for the current inputs: each block
// recomputes the first element of its tile and, if C has it, returns. After the check, the
// timed calls on the same inputs all find their answer in C; timed again alternating between
// two input sets that share C, it finds the other set's answer and works every call.
extern "C" __global__ void skips_if_done(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ int done;
    const int row0 = blockIdx.y * blockDim.y, col0 = blockIdx.x * blockDim.x;
    if (threadIdx.x == 0 && threadIdx.y == 0)
        done = row0 < M && col0 < N && C[size_t(row0) * N + col0] == dot(A, B, N, K, row0, col0);
    __syncthreads();
    if (done) return;
    const int row = row0 + threadIdx.y, col = col0 + threadIdx.x;
    if (row < M && col < N) C[size_t(row) * N + col] = dot(A, B, N, K, row, col);
}

// naive's work with nothing skipped: what the timing on changing inputs must leave alone.
extern "C" __global__ void honest_naive(const float* A, const float* B, float* C, int M, int N, int K) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) C[size_t(row) * N + col] = dot(A, B, N, K, row, col);
}

// The same work as naive with the products in FP16 (a lower precision than the workload's
// FP32): the check's bound (16 u sqrt(K) of FP32) must catch it.
#include <cuda_fp16.h>

extern "C" __global__ void fp16_products(const float* A, const float* B, float* C, int M, int N, int K) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc += __half2float(__hmul(__float2half(A[size_t(row) * K + k]), __float2half(B[size_t(k) * N + col])));
    C[size_t(row) * N + col] = acc;
}
