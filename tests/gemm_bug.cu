// TEST ONLY (tests/test_gemm.py): gemm's naive kernel with the tail bug the course warns
// about for K = 18 -- the loop runs over K / 16 * 16 terms, so the last partial tile of K is
// silently dropped. Run as a learner's kernel like `naive` (same signature, grid and block),
// it must FAIL the check whenever K % 16 != 0 and PASS when K % 16 == 0: proof that the
// check, not luck, is what catches it.
extern "C" __global__ void __launch_bounds__(256)
skips_last_k_tile(const float* A, const float* B, float* C, int M, int N, int K) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K / 16 * 16; ++k)
            acc = fmaf(A[size_t(row) * K + k], B[size_t(k) * N + col], acc);
        C[size_t(row) * N + col] = acc;
    }
}
