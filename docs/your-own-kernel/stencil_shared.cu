// pmppbench stencil --kernel stencil_shared.cu:my_shared --like shared
// From `pmppbench template stencil shared`: the 2R + 1 global reads per output replaced by one
// load of the block's BLOCK_DIM + 2 RADIUS inputs (its halo included, zeros outside the array)
// into shared memory; the sum then reads the tile, in the same order as before.

extern "C" __global__ void my_shared(const float* x, float* y, int n) {
    __shared__ float tile[BLOCK_DIM + 2 * RADIUS];
    long long first = (long long)blockIdx.x * BLOCK_DIM - RADIUS;  // the tile's first input
    for (int j = threadIdx.x; j < BLOCK_DIM + 2 * RADIUS; j += BLOCK_DIM) {
        long long g = first + j;
        tile[j] = (g >= 0 && g < n) ? x[g] : 0.0f;
    }
    __syncthreads();
    int i = blockIdx.x * BLOCK_DIM + threadIdx.x;
    if (i < n) {
        float sum = 0.0f;
        for (int d = 0; d <= 2 * RADIUS; ++d) sum += tile[threadIdx.x + d];
        y[i] = sum / float(2 * RADIUS + 1);
    }
}
