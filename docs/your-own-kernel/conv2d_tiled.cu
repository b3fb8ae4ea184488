// pmppbench conv2d --kernel conv2d_tiled.cu:my_tiled --like tiled
// From `pmppbench template conv2d tiled`: PMPP Fig. 7.12. Each thread loads one cell of the block's
// IN_TILE_DIM x IN_TILE_DIM input tile (zeros outside the image) into shared memory; the inner
// OUT_TILE_DIM x OUT_TILE_DIM threads then compute one output each from the tile.

__constant__ float F_c[2 * FILTER_RADIUS + 1][2 * FILTER_RADIUS + 1];  // the filter: the harness writes it
#define OUT_TILE_DIM (IN_TILE_DIM - 2 * FILTER_RADIUS)

extern "C" __global__ void my_tiled(const float* N, float* P, int width, int height) {
    __shared__ float N_s[IN_TILE_DIM][IN_TILE_DIM];
    int col = blockIdx.x * OUT_TILE_DIM + threadIdx.x - FILTER_RADIUS;
    int row = blockIdx.y * OUT_TILE_DIM + threadIdx.y - FILTER_RADIUS;
    bool inside = row >= 0 && row < height && col >= 0 && col < width;
    N_s[threadIdx.y][threadIdx.x] = inside ? N[(size_t)row * width + col] : 0.0f;
    __syncthreads();
    int tc = threadIdx.x - FILTER_RADIUS, tr = threadIdx.y - FILTER_RADIUS;
    if (inside && tc >= 0 && tc < OUT_TILE_DIM && tr >= 0 && tr < OUT_TILE_DIM) {
        float sum = 0.0f;
        for (int fr = 0; fr < 2 * FILTER_RADIUS + 1; ++fr)
            for (int fc = 0; fc < 2 * FILTER_RADIUS + 1; ++fc)
                sum = fmaf(F_c[fr][fc], N_s[tr + fr][tc + fc], sum);
        P[(size_t)row * width + col] = sum;
    }
}
