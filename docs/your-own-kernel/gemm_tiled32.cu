// pmppbench gemm --kernel gemm_tiled32.cu:my_tiled32 --like tiled32
// From `pmppbench template gemm tiled32`: the dot product from global memory replaced by PMPP 5.4's
// tiled loop: each phase loads a TILE_WIDTH x TILE_WIDTH tile of A and of B into shared memory once,
// and every loaded value serves TILE_WIDTH FMAs. Zeros past the edges add nothing.

extern "C" __global__ void my_tiled32(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float As[TILE_WIDTH][TILE_WIDTH], Bs[TILE_WIDTH][TILE_WIDTH];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE_WIDTH + ty, col = blockIdx.x * TILE_WIDTH + tx;
    float acc = 0.0f;
    for (int t = 0; t < K; t += TILE_WIDTH) {
        As[ty][tx] = (row < M && t + tx < K) ? A[(size_t)row * K + t + tx] : 0.0f;
        Bs[ty][tx] = (t + ty < K && col < N) ? B[(size_t)(t + ty) * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE_WIDTH; ++k) acc = fmaf(As[ty][k], Bs[k][tx], acc);
        __syncthreads();  // the tile is read by all before the next phase overwrites it
    }
    if (row < M && col < N) C[(size_t)row * N + col] = acc;
}
